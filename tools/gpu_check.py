"""Runs adjit's PTX on a real GPU, before adjit has a CUDA runtime (issue 10).

Two halves, so that the GPU machine needs no compiler (the MLIR wheels do not
travel to it):

    python tools/gpu_check.py prepare build/gpu_bundle     # here: compile, expected values
    python tools/gpu_runner.py build/gpu_bundle OUT_DIR    # there: numpy + the CUDA driver

``prepare`` compiles each case's kernel and adjoint to PTX for ``--arch``,
checks them with ptxas when it is on PATH, runs the same launches on adjit's
CPU runtime (forward, then ``Tape.backward`` with seeded output gradients),
and writes the PTX, the inputs, the CPU results and each launch's parameter
layout into the bundle. ``tools/gpu_runner.py`` loads the PTX with the CUDA
driver, launches it with the same arguments, compares with the CPU results
and runs the GPU benchmarks. Its report goes to docs/gpu.md by hand.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tools")]

import adjit as wp  # noqa: E402
from adjit import types as T  # noqa: E402
from adjit.compiler import driver  # noqa: E402
from adjit.compiler import stages as S  # noqa: E402
from adjit.launch import is_differentiable, launch_tangent  # noqa: E402
from adjit.variant import VariantSpec  # noqa: E402

import kernels as K  # noqa: E402  (benchmarks/kernels.py: the benchmark kernels)
from bench import springs_inputs  # noqa: E402
from gpu_runner import entry_param_sizes  # noqa: E402  (the runner's own reading of a PTX entry)


@wp.kernel
def settle(x: wp.array(dtype=float), steps: wp.array(dtype=int), y: wp.array(dtype=float)):
    # a runtime-bounded loop with break and continue, differentiated through
    i = wp.tid()
    v = x[i]
    for k in range(steps[i]):
        if v > 4.0:
            break
        if k % 3 == 2:
            continue
        v = v * 1.1 + wp.sin(v) * 0.25
    y[i] = v * v


@wp.kernel
def rotate(q: wp.array(dtype=wp.quat), p: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33),
           out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    r = wp.quat_rotate(wp.normalize(q[i]), p[i])
    out[i] = wp.transpose(m[i]) * r + wp.vec3(wp.exp(-wp.length_sq(r)), 0.0, wp.tanh(r[0]))


@wp.kernel
def length_cross64(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = wp.length(wp.cross(a[i], b[i])) * a[i]


@wp.kernel
def blur2d(img: wp.array2d(dtype=float), w: float, out: wp.array2d(dtype=float)):
    # a 2-D launch: neighbours clamped at the edges
    i, j = wp.tid()
    n = img.shape[0] - 1
    m = img.shape[1] - 1
    s = img[wp.max(i - 1, 0), j] + img[wp.min(i + 1, n), j] + img[i, wp.max(j - 1, 0)] + img[i, wp.min(j + 1, m)]
    out[i, j] = wp.exp(-w * img[i, j]) * s


@wp.kernel
def bad_index(x: wp.array(dtype=float), at: wp.array(dtype=float), y: wp.array(dtype=float)):
    # an index computed from a float: checked per access
    i = wp.tid()
    y[i] = x[int(at[i])]


#: name -> (kernel, launch dim, {argument: value}, seeded output arrays)
def _cases(n: int):
    rng = np.random.default_rng(3)
    f32 = np.float32

    def unit(shape):
        return rng.uniform(-1.0, 1.0, shape).astype(f32)

    x, v, rot = springs_inputs(n, seed=1)
    edges = rng.integers(0, n, 2 * n).astype(np.int32)
    at = rng.uniform(0, n, n).astype(f32)
    at[BAD_THREAD] = BAD_INDEX
    side = int(np.sqrt(n))
    cases = {
        "saxpy_out": (K.saxpy_out, dict(a=f32(1.5), x=unit(n), y=unit(n), z=np.zeros(n, f32)), ["z"]),
        "length_cross": (K.length_cross, dict(a=unit((n, 3)), b=unit((n, 3)), y=np.zeros((n, 3), f32)), ["y"]),
        "springs": (K.springs, dict(x=x, v=v, rot=rot, x_out=np.zeros((n, 3), f32), v_out=np.zeros((n, 3), f32),
                                    dt=f32(0.01), stiffness=f32(4.0), n_iter=np.int32(16)), ["x_out", "v_out"]),
        "sum_squares": (K.sum_squares, dict(x=unit(n), loss=np.zeros(1, f32)), ["loss"]),
        "gather": (K.gather, dict(x=unit(n), idx=rng.integers(0, n, n).astype(np.int32), y=np.zeros(n, f32)),
                   ["y"]),
        "scatter_add": (K.scatter_add, dict(x=unit(n), idx=rng.integers(0, 64, n).astype(np.int32),
                                            y=np.zeros(n, f32)), ["y"]),
        "edge_forces": (K.edge_forces, dict(x=unit((n, 3)), edges=edges, force=np.zeros((n, 3), f32)), ["force"]),
        "settle": (settle, dict(x=unit(n), steps=rng.integers(0, 12, n).astype(np.int32), y=np.zeros(n, f32)),
                   ["y"]),
        "rotate": (rotate, dict(q=unit((n, 4)), p=unit((n, 3)), m=unit((n, 3, 3)), out=np.zeros((n, 3), f32)),
                   ["out"]),
        "length_cross64": (length_cross64, dict(a=unit((n, 3)).astype(np.float64), b=unit((n, 3)).astype(np.float64),
                                                y=np.zeros((n, 3))), ["y"]),
        "blur2d": (blur2d, dict(img=unit((side, side + 3)), w=f32(0.7), out=np.zeros((side, side + 3), f32)), ["out"]),
    }
    dims = {"blur2d": (side, side + 3)}
    return {name: (k, dims.get(name, n), values, seeds) for name, (k, values, seeds) in cases.items()}, \
        (bad_index, n, dict(x=unit(n), at=at, y=np.zeros(n, f32)))


BAD_THREAD, BAD_INDEX = 77, 1_000_000


def _ptx(k, arch: str, adjoint: bool, tangent: int = 0, noalias: bool = False) -> tuple[str, list[int]]:
    """The PTX of k's kernel (or adjoint) and the argument positions of the
    index arrays whose (min, max) its launch condition reads from the error
    record (adjit.index_range; the CPU runtime fills them in the same way)."""
    spec = VariantSpec("cuda", adjoint=adjoint, tangent=tangent, noalias=noalias)
    module = driver.build_variant_module(k, spec, driver.new_context())
    ranged = []

    def after(stage: str, m) -> None:
        if stage == "checked":
            ranged.extend(S.ranged_args(m, driver.kernel_symbol(k, spec)))

    S.run_stages(module, S.cuda_stages(spec, arch), k.mlir_name, after_stage=after)
    ptx = driver.ptx_of(module)
    if shutil.which("ptxas"):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "kernel.ptx"
            src.write_text(ptx)
            subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(Path(tmp) / "kernel.cubin")], check=True)
    return ptx, ranged


def _layout(k, values: dict, which: str, scalar_tangents: dict) -> list[dict]:
    """The parameters of a launch, in the kernel's order, then for the
    adjoint one gradient per array argument, for the tangent kernel one
    tangent per float argument: an array is its name (the runner expands it
    into MLIR's memref descriptor: two pointers, offset, sizes, strides), a
    value is its packed bytes."""
    params = []
    for name, t in zip(k.arg_names, k.arg_types):
        if isinstance(t, T.ArrayType):
            params.append({"array": name})
        elif isinstance(t, T.ScalarType):
            params.append({"value": np.asarray(values[name]).tobytes().hex()})
        else:
            raise SystemExit(f"{k.__name__}: vector and matrix value arguments are not packed by this check yet")
    if which == "adjoint":
        params += [{"grad": n} for n, t in zip(k.arg_names, k.arg_types) if isinstance(t, T.ArrayType)]
    if which == "tangent":
        params += [{"tangent": n} if isinstance(t, T.ArrayType) else {"value": scalar_tangents[n].tobytes().hex()}
                   for n, t in zip(k.arg_names, k.arg_types) if is_differentiable(t)]
    return params


def _expected_param_count(layout: list[dict], values: dict) -> int:
    count = 0
    for p in layout:
        name = p.get("array") or p.get("grad") or p.get("tangent")
        count += 3 + 2 * np.ndim(values[name]) if name else 1
    return count + 4 + 1  # total, extents 1-3, error record


def _run_on_cpu(k, dim, values: dict, seeds: list[str]):
    """The launch on adjit's CPU runtime: its outputs, the seeds and the
    gradients Tape.backward gives, then the tangent kernel's outputs for
    random input tangents (with their seeds)."""
    rng = np.random.default_rng(11)

    def arrays_and_args():
        arrays, args = {}, []
        for name, t in zip(k.arg_names, k.arg_types):
            if isinstance(t, T.ArrayType):
                arrays[name] = wp.array(values[name], dtype=t.dtype, requires_grad=True)
                args.append(arrays[name])
            else:
                args.append(values[name].item())
        return arrays, args

    arrays, args = arrays_and_args()
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=dim, inputs=args)
    seed_values = {s: rng.uniform(-1, 1, values[s].shape).astype(values[s].dtype) for s in seeds}
    tape.backward(grads={arrays[s]: seed_values[s] for s in seeds})
    result = {f"out.{n}": a.numpy() for n, a in arrays.items()}
    result.update({f"seed.{n}": v for n, v in seed_values.items()})
    result.update({f"grad.{n}": a.grad.numpy() for n, a in arrays.items() if n not in seeds})

    arrays, args = arrays_and_args()
    floats = [(n, t) for n, t in zip(k.arg_names, k.arg_types) if is_differentiable(t)]
    tangent_in, scalar_tangents, tangents = {}, {}, []
    for n, t in floats:
        v = values[n]
        if isinstance(t, T.ArrayType):
            tangent_in[n] = np.zeros_like(v) if n in seeds else rng.uniform(-1, 1, v.shape).astype(v.dtype)
            tangents.append(wp.array(tangent_in[n], dtype=t.dtype))
        else:
            scalar_tangents[n] = np.asarray(rng.uniform(-1, 1), dtype=v.dtype)
            tangents.append(scalar_tangents[n].item())
    launch_tangent(k, dim, args, tangents, record=False)
    result.update({f"tangent_in.{n}": v for n, v in tangent_in.items()})
    result.update({f"tangent_out.{n}": a.numpy() for (n, t), a in zip(floats, tangents) if isinstance(t, T.ArrayType)})
    return result, scalar_tangents


def _launch_entry(out: Path, name: str, k, values: dict, arch: str, which: str, scalar_tangents: dict) -> dict:
    ptx, ranged = _ptx(k, arch, which == "adjoint", 1 if which == "tangent" else 0)
    layout = _layout(k, values, which, scalar_tangents)
    sizes = entry_param_sizes(ptx)
    if len(sizes) != _expected_param_count(layout, values):
        raise SystemExit(f"{name} {which}: the PTX entry has {len(sizes)} parameters, the layout "
                         f"{_expected_param_count(layout, values)}")
    (out / f"{name}.{which}.ptx").write_text(ptx)
    entry = re.search(r"\.entry\s+(\w+)", ptx).group(1)
    return {"entry": entry, "params": layout, "sizes": sizes, "ranged": ranged}


def prepare(out: Path, arch: str, n: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"arch": arch, "cases": {}}
    cases, (bad_kernel, bad_dim, bad_values) = _cases(n)
    for name, (k, dim, values, seeds) in cases.items():
        expected, scalar_tangents = _run_on_cpu(k, dim, values, seeds)
        case = {"dim": dim, "seeds": seeds, "launches": {}}
        for which in ("forward", "adjoint", "tangent"):
            case["launches"][which] = _launch_entry(out, name, k, values, arch, which, scalar_tangents)
        arrays = {f"in.{a}": v for a, v in values.items() if np.ndim(v) > 0}
        np.savez(out / f"{name}.npz", **arrays, **expected)
        manifest["cases"][name] = case
        print(f"{name}: forward, adjoint and tangent PTX for {arch}, CPU results for dim={dim}")
    # an index out of range: the CPU raises, the GPU record must name the thread and the index
    try:
        wp.launch(bad_kernel, bad_dim, [wp.array(v) for v in bad_values.values()])
        raise SystemExit("bad_index: the CPU launch did not report its out-of-range index")
    except wp.OutOfBoundsError as e:
        print(f"bad_index: the CPU reports {str(e).splitlines()[0]}")
    manifest["out_of_range"] = {"dim": bad_dim, "thread": BAD_THREAD, "index": BAD_INDEX,
                                "forward": _launch_entry(out, "bad_index", bad_kernel, bad_values, arch, "forward", {})}
    np.savez(out / "bad_index.npz", **{f"in.{a}": v for a, v in bad_values.items()})
    bench = {"saxpy": K.saxpy, "length_cross": K.length_cross, "springs": K.springs, "trivial": K.trivial}
    manifest["bench"] = {}
    for name, k in bench.items():
        for which, adjoint, tangent in (("forward", False, 0), ("adjoint", True, 0), ("tangent", False, 1)):
            for variant, noalias in (("", False), (".noalias", True)):  # (the runner's arrays never overlap)
                ptx, _ = _ptx(k, arch, adjoint, tangent, noalias=noalias)
                (out / f"bench.{name}.{which}{variant}.ptx").write_text(ptx)
                manifest["bench"][f"{name}.{which}{variant}"] = re.search(r"\.entry\s+(\w+)", ptx).group(1)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="compile the cases and compute their CPU results")
    prep.add_argument("bundle", type=Path)
    prep.add_argument("--arch", default="sm_90")
    prep.add_argument("--n", type=int, default=20000)
    args = p.parse_args()
    prepare(args.bundle, args.arch, args.n)


if __name__ == "__main__":
    main()
