"""Records the launches a pytest run makes on adjit's CPU runtime and compiles
their kernels to PTX, so that ``tools/gpu_runner.py replay`` can run each one
on a GPU and compare with what the CPU computed: every kernel of the test
suite on a real GPU, before adjit has a GPU runtime (issue 10).

    python tools/gpu_replay.py build/gpu_replay [pytest arguments]   # default: tests/python
    python3 tools/gpu_runner.py replay build/gpu_replay OUT_DIR         # on the GPU machine

Forward and adjoint launches (the tape's backward) are recorded through
``adjit.observe_launches`` (the packed arguments before, the arrays after),
at most ``--per-kernel`` of each per kernel and within a byte budget;
adjoints are recorded when the kernel has no atomic min/max (their adjoint
takes extra arrays), batched adjoints and tangent kernels are not; a launch
is left out when its arrays overlap, are views with strides, or are larger
than the per-launch limit. Each recorded kernel is compiled for ``--arch``
with the CUDA pipeline as ``adjit.compile(k, target="cuda")`` does; kernels
that do not compile are listed with the error.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import pytest  # noqa: E402

import adjit  # noqa: E402

from gpu_runner import entry_param_sizes  # noqa: E402


class LaunchRecorder:
    """A pytest plugin: observes adjit's launches while the tests run."""

    def __init__(self, out: Path, arch: str, per_kernel: int, launch_bytes: int, total_bytes: int):
        self.out, self.arch = out, arch
        self.per_kernel, self.launch_bytes, self.total_bytes = per_kernel, launch_bytes, total_bytes
        self.compiled: dict[tuple, str] = {}  # (id(kernel), checks, digest) -> name
        self.kernels: dict[str, dict] = {}  # name -> what compile_kernel says
        self.alive: list = []  # the recorded kernels, kept so that their ids stay unique
        self.counts: dict[int, int] = {}
        self.launches: list[dict] = []
        self.bytes = 0
        self.skipped: dict[str, int] = {}
        self.pending: dict[int, tuple] = {}  # id(launch) -> what _before captured
        self.observer = None

    def pytest_configure(self, config) -> None:
        self.observer = adjit.observe_launches(before=self._before, after=self._after)

    def pytest_unconfigure(self, config) -> None:
        if self.observer is not None:
            self.observer.close()
            self.observer = None

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def _before(self, launch) -> None:
        """Copies the arguments of a forward launch, or of an adjoint one
        whose kernel has no atomic min/max (tangent kernels and batched
        adjoints are not replayed)."""
        from adjit import loader
        spec, k = launch.spec, launch.kernel
        if spec.tangent or spec.adjoint > 1:
            return
        if spec.adjoint and any(a.float_min_max for a in loader.argument_access(k)):
            return
        if launch.total == 0 or self.counts.get((id(k), spec.adjoint), 0) >= self.per_kernel:
            return
        packed = launch.args
        if not all(isinstance(p, (np.ndarray, bytes)) for p in packed):
            return
        if spec.strided:
            return self._skip("strided array views")
        if not spec.noalias:
            return self._skip("overlapping arrays")
        size = sum(p.nbytes for p in packed if isinstance(p, np.ndarray))
        if size > self.launch_bytes:
            return self._skip("arrays over the per-launch limit")
        if self.bytes + 2 * size > self.total_bytes:
            return self._skip("over the bundle's byte budget")
        self.pending[id(launch)] = [p.copy() if isinstance(p, np.ndarray) else bytes(p) for p in packed]
        self.alive.append(k)

    def _after(self, launch) -> None:
        from adjit import _runtime
        from adjit import types as T
        before = self.pending.pop(id(launch), None)
        if before is None:
            return
        k, spec, variant, packed = launch.kernel, launch.spec, launch.variant, launch.args
        adjoint = bool(spec.adjoint)
        key = (id(k), adjoint, spec.checks, variant.digest)
        if key not in self.compiled:
            # compiled now: the kernel's globals and options as this launch saw them
            self.compiled[key] = f"k{len(self.compiled)}"
            self.kernels[self.compiled[key]] = compile_kernel(k, self.arch, spec.checks, adjoint)
            self.kernels[self.compiled[key]]["order_dependent"] = \
                variant.atomic_order == _runtime.ATOMIC_ORDERS["serial"]
        self.counts[(id(k), spec.adjoint)] = self.counts.get((id(k), spec.adjoint), 0) + 1
        index = len(self.launches)
        # an adjoint's parameters: the kernel's, then a gradient per array argument
        arg_types = list(k.arg_types) + ([t for t in k.arg_types if isinstance(t, T.ArrayType)] if adjoint else [])
        arrays = {}
        params = []
        for j, (p, b) in enumerate(zip(packed, before)):
            if isinstance(p, np.ndarray):
                arrays[f"in_{j}"], arrays[f"out_{j}"] = b, p.copy()
                params.append({"array": j})
                if getattr(getattr(arg_types[j], "dtype", None), "name", "") == "bfloat16":
                    params[-1]["bfloat16"] = True  # (stored as uint16)
            else:
                params.append({"value": b.hex()})
        np.savez(self.out / f"launch_{index}.npz", **arrays)
        self.bytes += sum(a.nbytes for a in arrays.values())
        self.launches.append({"kernel": self.compiled[key], "total": launch.total, "shape": list(launch.shape),
                              "params": params, "arg_types": arg_types})


def _pad_value(t, data: bytes, size: int) -> bytes:
    """A vector or matrix value as its PTX parameter holds it: LLVM pads a
    vector to a power of two (vec3 f32: 16 bytes) and a matrix row by row."""
    if len(data) == size:
        return data
    from adjit import types as T
    shape = () if isinstance(t, T.ScalarType) else tuple(t.shape)
    if len(shape) == 1:
        return data.ljust(size, b"\0")
    if len(shape) == 2 and size % shape[0] == 0:
        row, padded = len(data) // shape[0], size // shape[0]
        return b"".join(data[r * row:(r + 1) * row].ljust(padded, b"\0") for r in range(shape[0]))
    raise ValueError(f"a {len(data)}-byte value for a {size}-byte parameter")


def compile_kernel(k, arch: str, checks: tuple[bool, bool], adjoint: bool = False) -> dict:
    """The kernel's (or its adjoint's) PTX for ``arch`` with the run-time
    checks its CPU launches had, or the error that stopped it."""
    import inspect
    from adjit.compiler import driver
    from adjit.compiler import stages as S
    from adjit.variant import Checks, VariantSpec
    spec = VariantSpec("cuda", adjoint=adjoint, noalias=False, checks=Checks(*checks))
    info = {"name": k.__name__ + (" (adjoint)" if adjoint else ""),
            "source": f"{k.source.filename}:{k.source.first_line}"}
    try:
        info["text"] = inspect.getsource(k.pyfunc)
    except (OSError, TypeError):
        pass
    try:
        module = driver.build_variant_module(k, spec, driver.new_context())
        ranged = []
        symbol = driver.kernel_symbol(k, spec)

        def after(stage, m):
            if stage == "checked":
                ranged.extend(S.ranged_args(m, symbol))

        S.run_stages(module, S.cuda_stages(spec, arch), k.mlir_name, dump=False, after_stage=after)
        ptx = driver.ptx_of(module)
    except Exception as e:  # a kernel the CUDA pipeline does not take: reported, not replayed
        info["compile_error"] = f"{type(e).__name__}: {' '.join(str(e).split())}"[:600]
        return info
    entry = ptx[ptx.index(".entry") + 6:].split("(")[0].strip()
    info.update({"ptx_text": ptx, "entry": entry, "sizes": entry_param_sizes(ptx), "ranged": ranged})
    return info


def finish(recorder: LaunchRecorder) -> dict:
    kernels = recorder.kernels
    for name, info in kernels.items():
        if "ptx_text" in info:
            (recorder.out / f"{name}.ptx").write_text(info.pop("ptx_text"))
            info["ptx"] = f"{name}.ptx"
    launches = []
    for i, launch in enumerate(recorder.launches):
        info = kernels[launch["kernel"]]
        arg_types = launch.pop("arg_types")
        launch["file"] = f"launch_{i}.npz"
        if "compile_error" in info:
            continue
        data = np.load(recorder.out / launch["file"])
        expected = _position(launch["params"], data, len(launch["params"])) + 5
        if expected != len(info["sizes"]):
            info["layout_error"] = f"the PTX entry has {len(info['sizes'])} parameters, the arguments {expected}"
            continue
        try:
            for j, p in enumerate(launch["params"]):
                if "value" in p:
                    size = info["sizes"][_position(launch["params"], data, j)]
                    p["value"] = _pad_value(arg_types[j], bytes.fromhex(p["value"]), size).hex()
        except ValueError as e:
            info["layout_error"] = str(e)
            continue
        launches.append(launch)
    manifest = {"arch": recorder.arch, "kernels": kernels, "launches": launches, "skipped": recorder.skipped}
    (recorder.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def _position(params: list[dict], data, j: int) -> int:
    """The PTX parameter index of kernel argument j (arrays expand)."""
    return sum(3 + 2 * data[f"in_{p['array']}"].ndim if "array" in p else 1 for p in params[:j])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bundle", type=Path)
    p.add_argument("pytest_args", nargs="*", default=[str(ROOT / "tests" / "python")])
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--per-kernel", type=int, default=2)
    p.add_argument("--launch-bytes", type=int, default=1 << 20)
    p.add_argument("--total-bytes", type=int, default=48 << 20)
    args = p.parse_args()
    args.bundle.mkdir(parents=True, exist_ok=True)
    for old in args.bundle.glob("*"):
        old.unlink()
    recorder = LaunchRecorder(args.bundle, args.arch, args.per_kernel, args.launch_bytes, args.total_bytes)
    pytest.main(["-q", "-p", "no:cacheprovider", *args.pytest_args], plugins=[recorder])
    manifest = finish(recorder)
    failed = [k for k in manifest["kernels"].values() if "compile_error" in k or "layout_error" in k]
    print(f"recorded {len(recorder.launches)} launches of {len(recorder.kernels)} kernels "
          f"({recorder.bytes / 2**20:.1f} MiB); {len(manifest['launches'])} to replay; "
          f"{len(failed)} kernels not replayed (compile or layout errors); skipped: {recorder.skipped}")


if __name__ == "__main__":
    main()
