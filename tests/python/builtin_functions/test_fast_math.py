"""f32 transcendental math as inline polynomials (adjit-approximate-math,
the ``fast_math`` module option, on by default): error bounds in ulp against
float64 references over each function's whole domain, special values,
agreement of SIMD bodies with scalar code, gradients, and ``fast_math=False``
giving libm's bits."""
import ctypes
import ctypes.util
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adjit as wp

wp.set_module_options({"fast_math": True})


@wp.kernel
def apply_exp(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.exp(x[i])


@wp.kernel
def apply_log(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.log(x[i])


@wp.kernel
def apply_log2(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.log2(x[i])


@wp.kernel
def apply_tanh(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.tanh(x[i])


@wp.kernel
def apply_erf(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.erf(x[i])


@wp.kernel
def apply_sin(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i])


@wp.kernel
def apply_cos(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.cos(x[i])


@wp.kernel
def apply_tan(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.tan(x[i])


@wp.kernel
def apply_atan(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.atan(x[i])


@wp.kernel
def apply_asin(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.asin(x[i])


@wp.kernel
def apply_acos(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.acos(x[i])


@wp.kernel
def apply_atan2(y: wp.array(dtype=float), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.atan2(y[i], x[i])


_erf64 = np.vectorize(math.erf, otypes=[np.float64])

#: name: (kernel, float64 reference, domain, documented bound in ulp). The
#: bounds are those of docs/simd.md, above the largest errors measured over
#: every 7th f32 bit pattern of each domain (erf: every 97th) and every f32 of
#: the intervals where they peak: exp 5.28, log 1.03, log2 1.89, tanh 4.90,
#: erf 4.79. The trigonometric functions are computed in float64 and rounded
#: once: within half an ulp and a hair (tan above 2**20 is libm's tanf).
FUNCTIONS = {
    "exp": (apply_exp, np.exp, (-103.9, 88.72), 6.0),
    "log": (apply_log, np.log, (0.0, 3.4e38), 1.5),
    "log2": (apply_log2, np.log2, (0.0, 3.4e38), 2.0),
    "tanh": (apply_tanh, np.tanh, (-3.4e38, 3.4e38), 5.5),
    "erf": (apply_erf, _erf64, (-3.4e38, 3.4e38), 5.5),
    "sin": (apply_sin, np.sin, (-3.4e38, 3.4e38), 1.0),
    "cos": (apply_cos, np.cos, (-3.4e38, 3.4e38), 1.0),
    "tan": (apply_tan, np.tan, (-3.4e38, 3.4e38), 1.0),
    "atan": (apply_atan, np.arctan, (-3.4e38, 3.4e38), 0.501),
    "asin": (apply_asin, np.arcsin, (-1.0, 1.0), 0.501),
    "acos": (apply_acos, np.arccos, (-1.0, 1.0), 0.501),
}


def _samples(lo: float, hi: float, n: int, seed: int) -> np.ndarray:
    """Floats in [lo, hi]: uniform in value, plus uniform in bit pattern
    (every binade alike, subnormals included)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, 8 * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[np.isfinite(bits) & (bits >= lo) & (bits <= hi)]
    near_zero = rng.uniform(-1e-3, 1e-3, n // 4).astype(np.float32)
    near_zero = near_zero[(near_zero >= lo) & (near_zero <= hi)]
    wide = rng.uniform(max(lo, -200.0), min(hi, 200.0), n).astype(np.float32)
    return np.concatenate([wide, bits, near_zero])


def _run(kernel, x: np.ndarray) -> np.ndarray:
    y = wp.zeros(len(x), dtype=float)
    wp.launch(kernel, dim=len(x), inputs=[wp.array(x, dtype=float), y])
    return y.numpy()


def _ulp_errors(y: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|y - reference| in units of the f32 spacing at the reference."""
    spacing = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    spacing = np.maximum(spacing, float(np.spacing(np.float32(0))))  # (subnormal results)
    return np.abs(y.astype(np.float64) - reference) / spacing


@pytest.mark.parametrize("name", FUNCTIONS)
def test_error_bound_over_the_domain(name):
    kernel, reference, (lo, hi), bound = FUNCTIONS[name]
    x = _samples(lo, hi, 200_000 if name != "erf" else 50_000, seed=len(name))
    y = _run(kernel, x)
    r = reference(x.astype(np.float64))
    finite = np.abs(r) < 3.4e38
    errors = _ulp_errors(y[finite], r[finite])
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, (name, x[finite][worst], y[finite][worst], r[finite][worst], errors[worst])
    if bound > 0.501:  # (the bound is not vacuous: the polynomials are not libm's correctly rounded results)
        assert errors.max() > 0.5


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1.1754942e-38, 89.0, -104.0,
                    3.4e38, -3.4e38], dtype=np.float32)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values(name):
    kernel, reference, _, _ = FUNCTIONS[name]
    y = _run(kernel, SPECIAL)
    with np.errstate(all="ignore"):
        r = reference(SPECIAL.astype(np.float64)).astype(np.float32)
        # where the reference is finite and nonzero, a few ulp are allowed (as above)
        close = np.isfinite(r) & (r != 0) & (_ulp_errors(y, r.astype(np.float64)) <= FUNCTIONS[name][3])
    both_nan = np.isnan(y) & np.isnan(r)
    exact = (y == r) | both_nan
    assert (exact | close).all(), list(zip(SPECIAL[~(exact | close)], y[~(exact | close)], r[~(exact | close)]))
    # infinities, NaN, zeros and signs are exact
    for i in np.flatnonzero(~np.isfinite(r) | (r == 0) | np.isin(np.abs(r), [1.0])):
        assert exact[i] and np.signbit(y[i]) == np.signbit(r[i]) or both_nan[i], (SPECIAL[i], y[i], r[i])


def test_atan2_error_bound_and_ieee_special_cases():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 600_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[np.isfinite(bits)]
    half = len(bits) // 2
    y = np.concatenate([bits[:half], rng.normal(size=100_000).astype(np.float32)])
    x = np.concatenate([bits[half:2 * half], rng.normal(size=100_000).astype(np.float32)])
    out = wp.zeros(len(x), dtype=float)
    wp.launch(apply_atan2, len(x), inputs=[wp.array(y), wp.array(x), out])
    errors = _ulp_errors(out.numpy(), np.arctan2(y.astype(np.float64), x.astype(np.float64)))
    assert errors.max() <= 0.501, errors.max()
    # zeros, infinities, NaN and the signs of zero: exactly IEEE's atan2 (numpy's)
    grid_y, grid_x = (g.ravel() for g in np.meshgrid(SPECIAL, SPECIAL))
    out = wp.zeros(len(grid_x), dtype=float)
    wp.launch(apply_atan2, len(grid_x), inputs=[wp.array(grid_y), wp.array(grid_x), out])
    got, expected = out.numpy(), np.arctan2(grid_y, grid_x)
    for yv, xv, g, e in zip(grid_y, grid_x, got, expected):
        if np.isnan(e):
            assert np.isnan(g), (yv, xv, g)
        elif e == 0 or not np.isfinite(yv) or not np.isfinite(xv) or yv == 0 or xv == 0:
            assert g == e and np.signbit(g) == np.signbit(e), (yv, xv, g, e)
        else:
            assert _ulp_errors(np.array([g]), np.array([np.arctan2(np.float64(yv), np.float64(xv))]))[0] <= 0.501


def test_inverse_trigonometry_calls_no_libm(tmp_path, monkeypatch):
    # atan, atan2, asin and acos become arithmetic only (no branch to libm, unlike sin, cos and tan above
    # 2**20); with fast_math off they stay libm's calls
    monkeypatch.setenv("ADJIT_DUMP_DIR", str(tmp_path))

    @wp.kernel
    def inverse(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.atan(v) + wp.atan2(v, 2.0) + wp.asin(v * 0.5) + wp.acos(v * 0.25)

    x = np.linspace(-1.5, 1.5, 37).astype(np.float32)
    y = wp.zeros(37, dtype=float)
    wp.launch(inverse, 37, inputs=[wp.array(x), y])
    f64 = x.astype(np.float64)
    expected = np.arctan(f64) + np.arctan2(f64, 2.0) + np.arcsin(f64 * 0.5) + np.arccos(f64 * 0.25)
    np.testing.assert_allclose(y.numpy(), expected, rtol=3e-7, atol=3e-7)
    llvm = "".join(p.read_text() for p in tmp_path.glob("*inverse*llvm.mlir"))
    assert llvm and not re.search(r"llvm\.intr\.(atan|atan2|asin|acos)\b|@(atan|atan2|asin|acos)f\b", llvm), \
        "a libm call is left"


@wp.kernel
def smooth(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.exp(0.5 * v) * wp.tanh(v) + wp.log(1.0 + v * v) - wp.log2(2.0 + v) * wp.erf(0.7 * v)


def _smooth64(v):
    return np.exp(0.5 * v) * np.tanh(v) + np.log(1.0 + v * v) - np.log2(2.0 + v) * _erf64(0.7 * v)


@wp.kernel
def angles(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.tan(0.6 * v) * wp.atan(v) + wp.atan2(v, 1.5 - 0.3 * v) - wp.asin(0.4 * v) * wp.acos(0.35 * v)


def _angles64(v):
    return np.tan(0.6 * v) * np.arctan(v) + np.arctan2(v, 1.5 - 0.3 * v) - np.arcsin(0.4 * v) * np.arccos(0.35 * v)


@pytest.mark.parametrize("kernel, reference", [(smooth, _smooth64), (angles, _angles64)], ids=["smooth", "angles"])
def test_gradients_match_float64_central_differences(kernel, reference):
    x0 = np.linspace(-1.5, 2.0, 37)
    x = wp.array(x0.astype(np.float32), dtype=float, requires_grad=True)
    y = wp.zeros(len(x0), dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, dim=len(x0), inputs=[x, y])
    tape.backward(grads={y: np.ones(len(x0), np.float32)})
    h = 1e-6
    fd = (reference(x0 + h) - reference(x0 - h)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(y.numpy(), reference(x0), rtol=2e-6, atol=2e-6)
    # forward mode: the tangent kernel uses the same derivative rules
    xt = wp.array(np.ones(len(x0), np.float32), dtype=float)
    yt = wp.zeros(len(x0), dtype=float)
    wp.jvp(kernel, dim=len(x0), inputs=[x, y], tangents=[xt, yt])  # (y's tangent updated in place)
    np.testing.assert_allclose(yt.numpy(), fd, rtol=2e-5, atol=2e-5)


def _libm(name: str):
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fn = getattr(libm, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return np.vectorize(lambda v: fn(float(v)), otypes=[np.float32])


LIBM_PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import adjit as wp
    wp.set_module_options({"fast_math": sys.argv[2] == "on"})

    @wp.kernel
    def straight(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = wp.exp(x[i]) + wp.log(wp.abs(x[i])) * wp.tanh(x[i]) - wp.log2(2.0 + wp.abs(x[i])) * wp.erf(x[i])

    @wp.kernel
    def looped(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
        i = wp.tid()
        for _ in range(n):
            y[i] = wp.exp(x[i]) + wp.log(wp.abs(x[i])) * wp.tanh(x[i]) - wp.log2(2.0 + wp.abs(x[i])) * wp.erf(x[i])

    rng = np.random.default_rng(3)
    x = rng.uniform(-20, 20, 61).astype(np.float32)
    x[53:61] = x[0:8]          # the same inputs in a SIMD group and in the scalar tail (61 = 7 * 8 + 5)
    xa, ys, yl = wp.array(x), wp.zeros(61), wp.zeros(61)
    wp.launch(straight, 61, inputs=[xa, ys])
    wp.launch(looped, 61, inputs=[xa, 1, yl])
    single = [wp.zeros(1) for _ in range(3)]
    for v, out in zip(x[:3], single):
        wp.launch(looped, 1, inputs=[wp.array(np.array([v], np.float32)), 1, out])
    np.savez(sys.argv[1], x=x, straight=ys.numpy(), looped=yl.numpy(),
             single=np.concatenate([s.numpy() for s in single]))
''')


def _run_program(tmp_path: Path, fast: str) -> dict:
    script = tmp_path / "program.py"
    script.write_text(LIBM_PROGRAM)
    out = tmp_path / f"{fast}.npz"
    env = dict(os.environ, ADJIT_SIMD_WIDTH="8", ADJIT_CACHE_DIR=str(tmp_path / f"cache_{fast}"),
               ADJIT_DUMP_DIR=str(tmp_path / f"dump_{fast}"))
    subprocess.run([sys.executable, str(script), str(out), fast], env=env, check=True, timeout=300)
    return dict(np.load(out))


def test_simd_bodies_scalar_code_and_libm(tmp_path):
    fast, libm = _run_program(tmp_path, "on"), _run_program(tmp_path, "off")
    for run in (fast, libm):
        # one function of x, whether a thread ran in a SIMD group, in the scalar tail, alone, or in
        # straight-line code (LLVM's vectorized thread loop): bitwise the same
        assert run["looped"][53:61].tobytes() == run["looped"][0:8].tobytes()
        assert run["single"].tobytes() == run["looped"][:3].tobytes()
        assert run["straight"].tobytes() == run["looped"].tobytes()
    # the looped kernel ran as a SIMD program, and its exp is polynomial code only with fast_math
    outcomes = {}
    for fast_flag in ("on", "off"):
        texts = [p.read_text() for p in (tmp_path / f"dump_{fast_flag}").glob("*looped*cpu.mlir")]
        assert texts and all(re.search(r'adjit\.simd = "vectorized: 8 threads', t) for t in texts)
        llvm = [p.read_text() for p in (tmp_path / f"dump_{fast_flag}").glob("*looped*llvm.mlir")]
        outcomes[fast_flag] = any("llvm.intr.exp" in t for t in llvm)
    assert outcomes == {"on": False, "off": True}
    # fast_math off: libm's own bits
    x = libm["x"]
    expf, logf, tanhf, log2f, erff = (_libm(n) for n in ("expf", "logf", "tanhf", "log2f", "erff"))
    ax = np.abs(x)
    expected = (expf(x) + logf(ax) * tanhf(x)) - log2f(np.float32(2.0) + ax) * erff(x)
    np.testing.assert_allclose(libm["looped"], expected, rtol=0, atol=0)
    # fast_math on: different bits, within the bounds
    assert fast["looped"].tobytes() != libm["looped"].tobytes()
    np.testing.assert_allclose(fast["looped"], libm["looped"], rtol=1e-5)


def test_the_module_option_recompiles_and_is_checked():
    x = np.array([0.3, 1.7, -2.2, 9.9, -40.0, 70.0, 0.001, 5.5, 12.0], dtype=np.float32)
    fast = _run(apply_exp, x)
    try:
        wp.set_module_options({"fast_math": False})
        assert apply_exp.fast_math is False
        slow = _run(apply_exp, x)
        assert slow.tobytes() == _libm("expf")(x).tobytes()
    finally:
        wp.set_module_options({"fast_math": True})
    assert _run(apply_exp, x).tobytes() == fast.tobytes()
    with pytest.raises(TypeError, match="fast_math must be True or False"):
        wp.set_module_options({"fast_math": 1})
    with pytest.raises(TypeError, match=r"Kernel\(options=...\): fast_math must be True or False"):
        wp.Kernel(apply_exp.pyfunc, key="apply_exp_checked", options={"fast_math": "no"})
    assert wp.get_module_options()["fast_math"] is True


def test_float64_math_stays_libm():
    @wp.kernel
    def exp64(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        y[i] = wp.exp(x[i])

    x = np.linspace(-700, 700, 1001)
    y = wp.zeros(len(x), dtype=wp.float64)
    wp.launch(exp64, len(x), inputs=[wp.array(x, dtype=wp.float64), y])
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.exp.restype, libm.exp.argtypes = ctypes.c_double, [ctypes.c_double]
    assert y.numpy().tobytes() == np.array([libm.exp(v) for v in x]).tobytes()


@wp.kernel
def six_sines(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3), z: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.vec3(wp.sin(v), wp.sin(v + 1.0), wp.sin(v + 2.0))
    z[i] = wp.vec3(wp.sin(v + 3.0), wp.sin(v + 4.0), wp.sin(v + 5.0))


def test_many_uses_share_one_function_with_the_same_bits():
    # More than 4 sin calls are calls to one compiled function (a kernel with 80 took 3x as long to compile
    # inline); it computes the same bits as the inline code of a kernel with one.
    x = np.random.default_rng(7).uniform(-50, 50, 203).astype(np.float32)
    y, z = wp.zeros(203, dtype=wp.vec3), wp.zeros(203, dtype=wp.vec3)
    wp.launch(six_sines, 203, inputs=[wp.array(x), y, z])
    got = np.concatenate([y.numpy(), z.numpy()], axis=1)
    for k in range(6):
        shifted = (x + np.float32(k)).astype(np.float32)
        assert got[:, k].tobytes() == _run(apply_sin, shifted).tobytes(), k
