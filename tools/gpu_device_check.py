"""The device check: adjit's own runtime on a GPU machine that has no compiler.

Two halves (the MLIR wheels do not travel to the GPU machine):

    # here (the compiler): PTX for the GPU's arch of every kernel the device tests and GPU benchmarks launch
    python tools/gpu_device_check.py prepare build/gpu_device --arch sm_90
    # there (Python, numpy, CMake, nanobind, a C++ compiler, the CUDA driver), from the repository root,
    # with build/gpu_device carried along:
    python tools/gpu_device_check.py run build/gpu_device OUT_DIR

``run`` builds the runtime-only extension (cpp/runtime, CMake), puts it in the
adjit package, and runs the device tests (tests/python/gpu/test_gpu_device.py,
test_gpu_autograd.py (Jacobians and gradient checks on the device),
test_gpu_interop.py (adjit.torch.op / adjit.jax.op with PyTorch's and JAX's
GPU arrays, the distributed example with NCCL), test_gpu_graphs.py (CUDA
graphs) and the GPU tests of test_cuda_driver.py, on the GPU only:
ADJIT_DEVICE_TESTS=cuda)
and the GPU benchmarks (benchmarks/gpu_bench.py) with the cache the prepare
step filled; it writes OUT_DIR/device_tests.xml, device_tests.log,
gpu_bench.json and summary.json. docs/gpu.md records what ran.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_MODULES = ["tests/python/gpu/test_gpu_device.py", "tests/python/gpu/test_gpu_autograd.py",
                "tests/python/gpu/test_gpu_interop.py", "tests/python/gpu/test_gpu_graphs.py"]
TEST_ARGS = TEST_MODULES + ["tests/python/gpu/test_cuda_driver.py"]
#: Modules whose kernels also get, beside what ``adjit.export`` writes, the
#: batched adjoints and tangent kernels of this many lanes and the adjoints'
#: tangent kernels (forward over reverse): what their Jacobians with
#: ``batch=`` and Hessian checks launch.
BATCHED_LANES = {"tests/python/gpu/test_gpu_autograd.py": 4}


def _kernels_of(path: Path) -> list:
    """The module-level kernels of a Python file (imported by path)."""
    import importlib.util
    import adjit
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return [v for v in vars(module).values() if isinstance(v, adjit.Kernel) and not v.is_generic]


def prepare(bundle: Path, arch: str) -> None:
    import adjit
    sys.path[:0] = [str(ROOT / "tests" / "python" / "gpu"), str(ROOT / "benchmarks")]
    kernels, batched = [], []
    for module in TEST_MODULES + ["benchmarks/gpu_bench.py"]:
        if (ROOT / module).exists():
            found = _kernels_of(ROOT / module)
            kernels += found
            if module in BATCHED_LANES:
                batched += [(k, BATCHED_LANES[module]) for k in found]
    if bundle.exists():
        shutil.rmtree(bundle)
    start = time.perf_counter()
    adjit.export(kernels, bundle / "cache", targets=[arch])
    for kernel, lanes in batched:
        _export_batched(kernel, bundle / "cache", arch, lanes)
    size = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file())
    checked = _ptxas(bundle / "cache", arch)
    (bundle / "prepared.json").write_text(json.dumps({
        "arch": arch, "kernels": [k.key for k in kernels], "bytes": size, "ptxas_checked": checked,
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip()}, indent=1))
    print(f"exported {len(kernels)} kernels for {arch} into {bundle} ({size / 2**20:.1f} MiB) "
          f"in {time.perf_counter() - start:.0f} s")


def _export_batched(kernel, folder: Path, arch: str, lanes: int) -> None:
    """The CUDA variants ``adjit.export`` leaves out that Jacobians launch:
    the ``lanes``-lane adjoint and tangent kernels and the adjoint's tangent
    kernel, for arrays that overlap or not (a kernel with no forward mode,
    such as one with a custom adjoint, gets only its batched adjoint)."""
    import dataclasses
    from adjit import loader
    from adjit.errors import GradientError
    for spec in loader.exported_specs(kernel, adjoint=False)[0]:
        if spec.all_checked:
            continue  # (the GPU code carries both versions of its checks)
        cuda_spec = dataclasses.replace(spec, target="cuda")
        for kind in (dict(adjoint=lanes), dict(tangent=lanes), dict(adjoint=1, tangent=1)):
            try:
                loader._export_cuda_variant(kernel, folder, dataclasses.replace(cuda_spec, **kind), arch)
            except GradientError:
                if "adjoint" in kind and "tangent" not in kind:
                    raise


def _ptxas(folder: Path, arch: str) -> int:
    """Assembles every PTX entry of the folder with ptxas (where it is on
    PATH): a PTX the driver would refuse fails here. Returns the count."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return 0
    from adjit import cache
    count = 0
    for entry in sorted(folder.glob("*.adjitobj")):
        payload = cache._verified_payload(entry.read_bytes())
        if payload is None:
            raise SystemExit(f"{entry}: not a valid cache entry")
        ptx = folder / "check.ptx"
        ptx.write_bytes(payload[0])
        subprocess.run([ptxas, f"-arch={arch}", str(ptx), "-o", "/dev/null"], check=True)
        count += 1
    (folder / "check.ptx").unlink(missing_ok=True)
    return count


def _build_runtime(out: Path) -> None:
    """Builds cpp/runtime alone and puts _runtime*.so into adjit/."""
    build = Path("/tmp/adjit-runtime-build")
    shutil.rmtree(build, ignore_errors=True)  # (a configure left from another tree fails: a fresh one takes seconds)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(ROOT / "cpp" / "runtime"), "-B", str(build), *generator,
                    f"-DPython_EXECUTABLE={sys.executable}"], check=True)
    subprocess.run(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 4)], check=True)
    for old in glob.glob(str(ROOT / "adjit" / "_runtime*.so")):
        os.remove(old)
    for built in glob.glob(str(build / "_runtime*.so")):
        shutil.copy(built, ROOT / "adjit")


def run(bundle: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    summary = {"prepared": json.loads((bundle / "prepared.json").read_text())}
    start = time.perf_counter()
    _build_runtime(out)
    summary["build_s"] = round(time.perf_counter() - start, 1)
    cache = str(bundle.resolve() / "cache")
    env = {**os.environ, "ADJIT_TEST_CACHE_DIR": cache, "ADJIT_CACHE_DIR": cache, "ADJIT_DEVICE_TESTS": "cuda",
           "PYTHONPATH": str(ROOT)}
    info = subprocess.run([sys.executable, "-c", "import adjit, json; d = adjit.get_device('cuda:0'); "
                           "print(json.dumps({'name': d.name, 'arch': d.arch, 'driver': "
                           "adjit._runtime.cuda.driver_version()}))"], env=env, capture_output=True, text=True)
    summary["device"] = info.stdout.strip() or info.stderr[-2000:]
    start = time.perf_counter()
    with open(out / "device_tests.log", "w") as log:
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                                f"--junitxml={out / 'device_tests.xml'}", *TEST_ARGS], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT, timeout=360)
    summary["tests_rc"] = tests.returncode
    summary["tests_s"] = round(time.perf_counter() - start, 1)
    summary["tests_tail"] = (out / "device_tests.log").read_text()[-3000:]
    bench = ROOT / "benchmarks" / "gpu_bench.py"
    if bench.exists():
        with open(out / "gpu_bench.log", "w") as log:
            b = subprocess.run([sys.executable, str(bench), "--out", str(out / "gpu_bench.json")], cwd=ROOT,
                               env=env, stdout=log, stderr=subprocess.STDOUT, timeout=240)
        summary["bench_rc"] = b.returncode
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "tests_tail"}, indent=1))
    print(summary["tests_tail"])
    return tests.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("bundle", type=Path)
    p.add_argument("--arch", default="sm_90")
    r = sub.add_parser("run")
    r.add_argument("bundle", type=Path)
    r.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.bundle, args.arch)
        return 0
    return run(args.bundle, args.out)


if __name__ == "__main__":
    sys.exit(main())
