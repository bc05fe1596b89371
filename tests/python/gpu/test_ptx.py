"""adjit.compile(..., target="cuda") emits PTX that ptxas accepts."""
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import adjit


@adjit.kernel
def saxpy(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = a * x[i] + y[i]


@adjit.kernel
def transform_points(m: adjit.mat33, t: adjit.vec3, pts: adjit.array(dtype=adjit.vec3, ndim=2),
                     total: adjit.array(dtype=float)):
    i, j = adjit.tid()
    p = m * pts[i, j] + t
    if adjit.length(p) > 1.0:
        p = adjit.normalize(p)
    pts[i, j] = p
    total[0] += p.x


@adjit.kernel
def loops_and_casts(n: int, x: adjit.array(dtype=adjit.float64), out: adjit.array(dtype=int)):
    i = adjit.tid()
    if i >= x.shape[0]:
        return
    acc = adjit.float64(0.0)
    for k in range(n, 0, -1):
        acc = acc * x[i] + adjit.float64(k)
    steps = 0
    while acc > 1.0:
        acc = acc * 0.5
        steps += 1
    out[i] = steps


requires_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")


def _ptxas(tmp_path, ptx: str, arch: str):
    src = tmp_path / f"kernel_{arch}.ptx"
    src.write_text(ptx)
    out = tmp_path / f"kernel_{arch}.cubin"
    proc = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"ptxas -arch={arch} failed:\n{proc.stderr}"
    assert out.stat().st_size > 0


def test_saxpy_ptx_has_the_kernel_entry():
    ptx = adjit.compile(saxpy, target="cuda", arch="sm_80")
    assert re.search(r"\.visible\s+\.entry\s+saxpy\s*\(", ptx), ptx[:2000]
    assert re.search(r"^\s*\.target\s+sm_80\b", ptx, re.M)
    # The kernel does a float32 multiply and add and a float32 load/store.
    assert "f32" in ptx


def test_arch_selects_the_ptx_target():
    ptx = adjit.compile(saxpy, target="cuda", arch="sm_90")
    assert re.search(r"^\s*\.target\s+sm_90\b", ptx, re.M)
    assert re.search(r"\.entry\s+saxpy\s*\(", ptx)


def test_unknown_target_is_rejected():
    with pytest.raises(ValueError, match="unknown target"):
        adjit.compile(saxpy, target="tpu")


@requires_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_saxpy_ptx_assembles(tmp_path, arch):
    # PTX for sm_80 runs on sm_80 and later: assemble it for both.
    _ptxas(tmp_path, adjit.compile(saxpy, target="cuda", arch="sm_80"), arch)


@requires_ptxas
def test_sm90_ptx_assembles_for_sm90(tmp_path):
    _ptxas(tmp_path, adjit.compile(saxpy, target="cuda", arch="sm_90"), "sm_90")


@requires_ptxas
@pytest.mark.parametrize("kernel", [transform_points, loops_and_casts], ids=lambda k: k.__name__)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_larger_kernels_assemble(tmp_path, kernel, arch):
    ptx = adjit.compile(kernel, target="cuda", arch=arch)
    assert re.search(rf"\.entry\s+{kernel.__name__}\s*\(", ptx)
    _ptxas(tmp_path, ptx, arch)


def test_atomic_add_is_an_atomic_in_ptx():
    ptx = adjit.compile(transform_points, target="cuda", arch="sm_80")
    assert re.search(r"\b(atom|red)\.[\w.]*add\.f32", ptx), "total[0] += ... must be an atomic add"


def _kernels_of(module_name, area):
    """The kernels of the test module ``area/module_name.py`` (tests/python/)."""
    folder = str(Path(__file__).resolve().parents[1] / area)
    if folder not in sys.path:
        sys.path.append(folder)
    module = importlib.import_module(module_name)
    return [(f"{module_name}.{name}", obj) for name, obj in sorted(vars(module).items())
            if isinstance(obj, adjit.Kernel)]


# Every kernel of the control-flow and array suites (loops with break and
# continue, early returns, atomics, N-D launches) also lowers to valid PTX.
_SUITE_KERNELS = _kernels_of("test_control_flow", "language") + _kernels_of("test_arrays", "runtime")


@requires_ptxas
@pytest.mark.parametrize("name,kernel", _SUITE_KERNELS, ids=[n for n, _ in _SUITE_KERNELS])
def test_suite_kernels_assemble_for_sm80(tmp_path, name, kernel):
    _ptxas(tmp_path, adjit.compile(kernel, target="cuda", arch="sm_80"), "sm_80")


@adjit.kernel
def looped_sine(x: adjit.array(dtype=float), n: int, y: adjit.array(dtype=float)):
    i = adjit.tid()
    acc = float(0.0)
    for k in range(n):
        acc = adjit.sin(acc + x[i]) * 0.9
    y[i] = acc * x[i]


@requires_ptxas
@pytest.mark.parametrize("variant", [dict(tangent=True), dict(tangent=4), dict(adjoint=True), dict(adjoint=8),
                                     dict(adjoint=True, tangent=True)],
                         ids=["tangent", "tangent-4-lanes", "adjoint", "adjoint-8-lanes", "adjoint-tangent"])
def test_differentiated_kernels_assemble(tmp_path, variant):
    # forward mode, batched seeds and forward over reverse also give PTX
    # (what the GPU runtime launches: backends/cuda.py; here, the PTX alone)
    ptx = adjit.compile(looped_sine, target="cuda", arch="sm_80", **variant)
    symbol = "looped_sine" + ("_adjoint" if variant.get("adjoint") else "") + (
        "_tangent" if variant.get("tangent") else "")
    assert re.search(rf"\.entry\s+{symbol}\s*\(", ptx)
    lanes = variant.get("adjoint", variant.get("tangent"))
    if lanes not in (None, True):  # one parameter per lane's array (4 words each: a memref descriptor's pointer...)
        params = re.search(rf"\.entry\s+{symbol}\s*\((.*?)\)", ptx, re.S).group(1)
        assert params.count(".param") > lanes
    _ptxas(tmp_path, ptx, "sm_80")


@adjit.kernel
def integer_bits(x: adjit.array(dtype=adjit.int32), y: adjit.array(dtype=adjit.uint32), out: adjit.array(dtype=int)):
    # math ops without a libdevice function (found by tools/gpu_replay.py: the
    # CUDA pipeline left math.ctpop and math.absi unlowered)
    i = adjit.tid()
    out[i] = abs(x[i]) + int(adjit.bit_count(y[i]))


def test_integer_math_without_libdevice_functions_lowers(tmp_path):
    ptx = adjit.compile(integer_bits, target="cuda", arch="sm_90")
    assert re.search(r"\bpopc\.b32\b", ptx), "bit_count: a population count"
    if shutil.which("ptxas"):
        _ptxas(tmp_path, ptx, "sm_90")
