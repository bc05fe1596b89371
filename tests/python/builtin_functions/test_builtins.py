"""Every builtin of adjit.builtin_registry() against numpy (float64 references).

Kernels compute many builtins at once (one compile per signature family);
each builtin is then checked by its own parametrized test.
"""
import math

import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

F32 = dict(rtol=1e-5, atol=1e-6)     # float32 results vs float64 numpy
F64 = dict(rtol=1e-13, atol=1e-14)   # float64 results vs float64 numpy
N = 257                              # elements per builtin (odd: no lucky chunking)

# name -> (numpy reference, input interval)
UNARY = {
    "sqrt": (np.sqrt, (0.0, 100.0)),
    "exp": (np.exp, (-10.0, 10.0)),
    "log": (np.log, (1e-3, 1e3)),
    "sin": (np.sin, (-10.0, 10.0)),
    "cos": (np.cos, (-10.0, 10.0)),
    "tan": (np.tan, (-1.4, 1.4)),
    "tanh": (np.tanh, (-6.0, 6.0)),
    "asin": (np.arcsin, (-1.0, 1.0)),
    "acos": (np.arccos, (-1.0, 1.0)),
    "atan": (np.arctan, (-20.0, 20.0)),
    "sinh": (np.sinh, (-5.0, 5.0)),
    "cosh": (np.cosh, (-5.0, 5.0)),
    "log2": (np.log2, (1e-3, 1e3)),
    "log10": (np.log10, (1e-3, 1e3)),
    "floor": (np.floor, (-5.0, 5.0)),
    "ceil": (np.ceil, (-5.0, 5.0)),
    "cbrt": (np.cbrt, (-30.0, 30.0)),
    "erf": (np.vectorize(math.erf), (-3.0, 3.0)),
    "erfc": (np.vectorize(math.erfc), (-3.0, 3.0)),
    "rint": (np.rint, (-5.0, 5.0)),
}
UNARY_NAMES = list(UNARY)


def _unary_inputs(dtype, comps=()):
    rng = np.random.default_rng(0)
    rows = []
    for name in UNARY_NAMES:
        lo, hi = UNARY[name][1]
        x = rng.uniform(lo, hi, (N, *comps))
        if name in ("floor", "ceil", "rint"):
            x.flat[:6] = [-2.0, -0.5, 0.0, 0.5, 2.0, -3.0]  # exact integers and halves
        rows.append(x)
    return np.stack(rows).astype(dtype)


@adjit.kernel
def unary_f32(x: adjit.array(dtype=float, ndim=2), out: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.sqrt(x[0, i])
    out[1, i] = adjit.exp(x[1, i])
    out[2, i] = adjit.log(x[2, i])
    out[3, i] = adjit.sin(x[3, i])
    out[4, i] = adjit.cos(x[4, i])
    out[5, i] = adjit.tan(x[5, i])
    out[6, i] = adjit.tanh(x[6, i])
    out[7, i] = adjit.asin(x[7, i])
    out[8, i] = adjit.acos(x[8, i])
    out[9, i] = adjit.atan(x[9, i])
    out[10, i] = adjit.sinh(x[10, i])
    out[11, i] = adjit.cosh(x[11, i])
    out[12, i] = adjit.log2(x[12, i])
    out[13, i] = adjit.log10(x[13, i])
    out[14, i] = adjit.floor(x[14, i])
    out[15, i] = adjit.ceil(x[15, i])
    out[16, i] = adjit.cbrt(x[16, i])
    out[17, i] = adjit.erf(x[17, i])
    out[18, i] = adjit.erfc(x[18, i])
    out[19, i] = adjit.rint(x[19, i])


@adjit.kernel
def unary_f64(x: adjit.array(dtype=adjit.float64, ndim=2), out: adjit.array(dtype=adjit.float64, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.sqrt(x[0, i])
    out[1, i] = adjit.exp(x[1, i])
    out[2, i] = adjit.log(x[2, i])
    out[3, i] = adjit.sin(x[3, i])
    out[4, i] = adjit.cos(x[4, i])
    out[5, i] = adjit.tan(x[5, i])
    out[6, i] = adjit.tanh(x[6, i])
    out[7, i] = adjit.asin(x[7, i])
    out[8, i] = adjit.acos(x[8, i])
    out[9, i] = adjit.atan(x[9, i])
    out[10, i] = adjit.sinh(x[10, i])
    out[11, i] = adjit.cosh(x[11, i])
    out[12, i] = adjit.log2(x[12, i])
    out[13, i] = adjit.log10(x[13, i])
    out[14, i] = adjit.floor(x[14, i])
    out[15, i] = adjit.ceil(x[15, i])
    out[16, i] = adjit.cbrt(x[16, i])
    out[17, i] = adjit.erf(x[17, i])
    out[18, i] = adjit.erfc(x[18, i])
    out[19, i] = adjit.rint(x[19, i])


@adjit.kernel
def unary_vec3(x: adjit.array(dtype=adjit.vec3, ndim=2), out: adjit.array(dtype=adjit.vec3, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.sqrt(x[0, i])
    out[1, i] = adjit.exp(x[1, i])
    out[2, i] = adjit.log(x[2, i])
    out[3, i] = adjit.sin(x[3, i])
    out[4, i] = adjit.cos(x[4, i])
    out[5, i] = adjit.tan(x[5, i])
    out[6, i] = adjit.tanh(x[6, i])
    out[7, i] = adjit.asin(x[7, i])
    out[8, i] = adjit.acos(x[8, i])
    out[9, i] = adjit.atan(x[9, i])
    out[10, i] = adjit.sinh(x[10, i])
    out[11, i] = adjit.cosh(x[11, i])
    out[12, i] = adjit.log2(x[12, i])
    out[13, i] = adjit.log10(x[13, i])
    out[14, i] = adjit.floor(x[14, i])
    out[15, i] = adjit.ceil(x[15, i])
    out[16, i] = adjit.cbrt(x[16, i])
    out[17, i] = adjit.erf(x[17, i])
    out[18, i] = adjit.erfc(x[18, i])
    out[19, i] = adjit.rint(x[19, i])


def _launch_unary(kernel, xs, out_dtype):
    x = adjit.array(xs, dtype=out_dtype)
    out = adjit.zeros((len(UNARY_NAMES), N), dtype=out_dtype)
    adjit.launch(kernel, dim=N, inputs=[x, out])
    return out.numpy()


@pytest.fixture(scope="module")
def unary_results():
    x32 = _unary_inputs(np.float32)
    x64 = _unary_inputs(np.float64)
    xv = _unary_inputs(np.float32, (3,))
    return {"f32": (x32, _launch_unary(unary_f32, x32, adjit.float32)),
            "f64": (x64, _launch_unary(unary_f64, x64, adjit.float64)),
            "vec3": (xv, _launch_unary(unary_vec3, xv, adjit.vec3))}


@pytest.mark.parametrize("name", UNARY_NAMES)
@pytest.mark.parametrize("flavor", ["f32", "f64", "vec3"])
def test_unary_math(unary_results, name, flavor):
    xs, out = unary_results[flavor]
    k = UNARY_NAMES.index(name)
    ref = UNARY[name][0](xs[k].astype(np.float64))
    assert out[k].dtype == (np.float64 if flavor == "f64" else np.float32)
    np.testing.assert_allclose(out[k], ref, **(F64 if flavor == "f64" else F32))


# --- two-argument and numeric builtins ------------------------------------------------------------

@adjit.kernel
def binary_f32(a: adjit.array(dtype=float), b: adjit.array(dtype=float), c: adjit.array(dtype=float),
               out: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.pow(abs(a[i]) + 0.1, b[i])
    out[1, i] = (abs(a[i]) + 0.1) ** b[i]
    out[2, i] = adjit.atan2(a[i], b[i])
    out[3, i] = adjit.min(a[i], b[i])
    out[4, i] = adjit.max(a[i], b[i])
    out[5, i] = min(a[i], 0.25)
    out[6, i] = max(a[i], 0.25)
    out[7, i] = adjit.abs(a[i])
    out[8, i] = abs(b[i])
    out[9, i] = adjit.sign(a[i])
    out[10, i] = adjit.clamp(a[i], -0.5, c[i])
    out[11, i] = adjit.where(a[i] > b[i], a[i], c[i])
    out[12, i] = adjit.select(a[i] > b[i], a[i], c[i])
    out[13, i] = adjit.where(a[i] > 0.0, 1.0, -1.0)


def _binary_ref(a, b, c):
    p = (np.abs(a) + np.float32(0.1)).astype(np.float64)  # the base, computed in float32 as in the kernel
    a, b, c = (v.astype(np.float64) for v in (a, b, c))
    return [np.power(p, b), np.power(p, b), np.arctan2(a, b), np.minimum(a, b), np.maximum(a, b),
            np.minimum(a, 0.25), np.maximum(a, 0.25), np.abs(a), np.abs(b), np.where(a < 0, -1.0, 1.0),
            np.minimum(np.maximum(a, -0.5), c), np.where(a > b, a, c), np.where(a > b, c, a),
            np.where(a > 0, 1.0, -1.0)]


BINARY_COLUMNS = ["pow", "pow_operator", "atan2", "min", "max", "min_literal", "max_literal", "abs",
                  "abs_python", "sign", "clamp", "where", "select", "where_literals"]


@pytest.fixture(scope="module")
def binary_results():
    rng = np.random.default_rng(1)
    a = rng.uniform(-3, 3, N).astype(np.float32)
    b = rng.uniform(-3, 3, N).astype(np.float32)
    c = rng.uniform(0, 2, N).astype(np.float32)
    a[:4] = [0.0, -1.0, 2.0, -0.0]
    b[:4] = [0.0, -1.0, 1.0, 2.5]
    out = adjit.zeros((len(BINARY_COLUMNS), N))
    adjit.launch(binary_f32, dim=N, inputs=[adjit.array(a), adjit.array(b), adjit.array(c), out])
    return out.numpy(), _binary_ref(a, b, c)


@pytest.mark.parametrize("column", BINARY_COLUMNS)
def test_float_builtins(binary_results, column):
    out, ref = binary_results
    k = BINARY_COLUMNS.index(column)
    np.testing.assert_allclose(out[k], ref[k], **F32)


@adjit.kernel
def binary_f64(a: adjit.array(dtype=adjit.float64), b: adjit.array(dtype=adjit.float64),
               out: adjit.array(dtype=adjit.float64, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.pow(abs(a[i]) + 0.1, b[i])
    out[1, i] = adjit.atan2(a[i], b[i])
    out[2, i] = adjit.min(a[i], b[i])
    out[3, i] = adjit.max(a[i], b[i])
    out[4, i] = adjit.abs(a[i])
    out[5, i] = adjit.sign(a[i])
    out[6, i] = adjit.clamp(a[i], -0.5, 0.5)
    out[7, i] = adjit.where(a[i] > b[i], a[i], b[i])
    out[8, i] = adjit.select(a[i] > b[i], a[i], b[i])


def test_float64_binary_builtins():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-3, 3, N), rng.uniform(-3, 3, N)
    out = adjit.zeros((9, N), dtype=adjit.float64)
    adjit.launch(binary_f64, dim=N, inputs=[adjit.array(a), adjit.array(b), out])
    p = np.abs(a) + 0.1
    ref = [p ** b, np.arctan2(a, b), np.minimum(a, b), np.maximum(a, b), np.abs(a), np.where(a < 0, -1.0, 1.0),
           np.clip(a, -0.5, 0.5), np.where(a > b, a, b), np.where(a > b, b, a)]
    for k, r in enumerate(ref):
        np.testing.assert_allclose(out.numpy()[k], r, **F64, err_msg=f"column {k}")


@adjit.kernel
def int_builtins(a: adjit.array(dtype=int), b: adjit.array(dtype=int), out: adjit.array(dtype=int, ndim=2)):
    i = adjit.tid()
    out[0, i] = abs(a[i])
    out[1, i] = adjit.min(a[i], b[i])
    out[2, i] = adjit.max(a[i], b[i])
    out[3, i] = min(a[i], 3)
    out[4, i] = adjit.sign(a[i])
    out[5, i] = adjit.clamp(a[i], -2, 4)
    out[6, i] = adjit.where(a[i] < b[i], a[i], 100)
    out[7, i] = adjit.select(a[i] < b[i], a[i], 100)


def test_int_builtins():
    a = np.array([-7, -1, 0, 1, 3, 5, 100, -100], np.int32)
    b = np.array([0, -2, 0, 2, 3, -5, 50, 99], np.int32)
    out = adjit.zeros((8, 8), dtype=int)
    adjit.launch(int_builtins, dim=8, inputs=[adjit.array(a), adjit.array(b), out])
    ref = [np.abs(a), np.minimum(a, b), np.maximum(a, b), np.minimum(a, 3), np.where(a < 0, -1, 1),
           np.clip(a, -2, 4), np.where(a < b, a, 100), np.where(a < b, 100, a)]
    np.testing.assert_array_equal(out.numpy(), ref)


@adjit.kernel
def vec_numeric(a: adjit.array(dtype=adjit.vec3), b: adjit.array(dtype=adjit.vec3),
                out: adjit.array(dtype=adjit.vec3, ndim=2)):
    i = adjit.tid()
    out[0, i] = adjit.abs(a[i])
    out[1, i] = adjit.min(a[i], b[i])
    out[2, i] = adjit.max(a[i], b[i])
    out[3, i] = adjit.sign(a[i])
    out[4, i] = adjit.clamp(a[i], -b[i], b[i])
    out[5, i] = adjit.pow(abs(a[i]), b[i])
    out[6, i] = adjit.atan2(a[i], b[i])
    out[7, i] = adjit.where(i % 2 == 0, a[i], b[i])


def test_vector_numeric_builtins_are_componentwise():
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (N, 3)).astype(np.float32)
    b = rng.uniform(0.1, 2, (N, 3)).astype(np.float32)
    out = adjit.zeros((8, N), dtype=adjit.vec3)
    adjit.launch(vec_numeric, dim=N, inputs=[adjit.array(a, dtype=adjit.vec3), adjit.array(b, dtype=adjit.vec3), out])
    A, B = a.astype(np.float64), b.astype(np.float64)
    even = (np.arange(N) % 2 == 0)[:, None]
    ref = [np.abs(A), np.minimum(A, B), np.maximum(A, B), np.where(A < 0, -1.0, 1.0), np.clip(A, -B, B),
           np.abs(A) ** B, np.arctan2(A, B), np.where(even, A, B)]
    for k, r in enumerate(ref):
        np.testing.assert_allclose(out.numpy()[k], r, **F32, err_msg=f"column {k}")


# --- vector geometry ---------------------------------------------------------------------------------

@adjit.kernel
def geometry(a: adjit.array(dtype=adjit.vec3), b: adjit.array(dtype=adjit.vec3),
             c: adjit.array(dtype=adjit.vec2), d: adjit.array(dtype=adjit.vec4),
             s: adjit.array(dtype=float, ndim=2), v: adjit.array(dtype=adjit.vec3, ndim=2),
             v2: adjit.array(dtype=adjit.vec2), v4: adjit.array(dtype=adjit.vec4)):
    i = adjit.tid()
    s[0, i] = adjit.dot(a[i], b[i])
    s[1, i] = adjit.length(a[i])
    s[2, i] = adjit.length_sq(a[i])
    s[3, i] = adjit.dot(c[i], c[i])
    s[4, i] = adjit.length(d[i])
    s[5, i] = adjit.length_sq(d[i])
    v[0, i] = adjit.normalize(a[i])
    v[1, i] = adjit.cross(a[i], b[i])
    v2[i] = adjit.normalize(c[i])
    v4[i] = adjit.normalize(d[i])


def test_vector_geometry_builtins():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-2, 2, (N, 3)), rng.uniform(-2, 2, (N, 3))
    c, d = rng.uniform(-2, 2, (N, 2)), rng.uniform(-2, 2, (N, 4))
    a[0], b[0] = [1, 0, 0], [0, 1, 0]
    a32, b32, c32, d32 = (x.astype(np.float32) for x in (a, b, c, d))
    s, v = adjit.zeros((6, N)), adjit.zeros((2, N), dtype=adjit.vec3)
    v2, v4 = adjit.zeros(N, dtype=adjit.vec2), adjit.zeros(N, dtype=adjit.vec4)
    adjit.launch(geometry, dim=N, inputs=[adjit.array(a32, dtype=adjit.vec3), adjit.array(b32, dtype=adjit.vec3),
                                          adjit.array(c32, dtype=adjit.vec2), adjit.array(d32, dtype=adjit.vec4),
                                          s, v, v2, v4])
    A, B, C, D = (x.astype(np.float64) for x in (a32, b32, c32, d32))
    np.testing.assert_allclose(s.numpy()[0], (A * B).sum(1), **F32)
    np.testing.assert_allclose(s.numpy()[1], np.linalg.norm(A, axis=1), **F32)
    np.testing.assert_allclose(s.numpy()[2], (A * A).sum(1), **F32)
    np.testing.assert_allclose(s.numpy()[3], (C * C).sum(1), **F32)
    np.testing.assert_allclose(s.numpy()[4], np.linalg.norm(D, axis=1), **F32)
    np.testing.assert_allclose(s.numpy()[5], (D * D).sum(1), **F32)
    np.testing.assert_allclose(v.numpy()[0], A / np.linalg.norm(A, axis=1, keepdims=True), **F32)
    np.testing.assert_allclose(v.numpy()[1], np.cross(A, B), **F32)
    np.testing.assert_array_equal(v.numpy()[1, 0], [0, 0, 1])  # x cross y = z, exactly
    np.testing.assert_allclose(v2.numpy(), C / np.linalg.norm(C, axis=1, keepdims=True), **F32)
    np.testing.assert_allclose(v4.numpy(), D / np.linalg.norm(D, axis=1, keepdims=True), **F32)


@adjit.kernel
def geometry_f64(a: adjit.array(dtype=adjit.vec3d), b: adjit.array(dtype=adjit.vec3d),
                 s: adjit.array(dtype=adjit.float64, ndim=2), v: adjit.array(dtype=adjit.vec3d, ndim=2)):
    i = adjit.tid()
    s[0, i] = adjit.dot(a[i], b[i])
    s[1, i] = adjit.length(a[i])
    s[2, i] = adjit.length_sq(b[i])
    v[0, i] = adjit.normalize(a[i])
    v[1, i] = adjit.cross(a[i], b[i])


def test_float64_vector_geometry_builtins():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-2, 2, (N, 3)), rng.uniform(-2, 2, (N, 3))
    s, v = adjit.zeros((3, N), dtype=adjit.float64), adjit.zeros((2, N), dtype=adjit.vec3d)
    adjit.launch(geometry_f64, dim=N, inputs=[adjit.array(a, dtype=adjit.vec3d), adjit.array(b, dtype=adjit.vec3d),
                                              s, v])
    np.testing.assert_allclose(s.numpy()[0], (a * b).sum(1), **F64)
    np.testing.assert_allclose(s.numpy()[1], np.linalg.norm(a, axis=1), **F64)
    np.testing.assert_allclose(s.numpy()[2], (b * b).sum(1), **F64)
    np.testing.assert_allclose(v.numpy()[0], a / np.linalg.norm(a, axis=1, keepdims=True), **F64)
    np.testing.assert_allclose(v.numpy()[1], np.cross(a, b), **F64)


# --- matrices ----------------------------------------------------------------------------------------

M23 = adjit.matrix((2, 3), adjit.float32)
M32 = adjit.matrix((3, 2), adjit.float32)


@adjit.kernel
def matrix_builtins(m2: adjit.array(dtype=adjit.mat22), m3: adjit.array(dtype=adjit.mat33),
                    m4: adjit.array(dtype=adjit.mat44), r: adjit.array(dtype=M23),
                    u: adjit.array(dtype=adjit.vec2), w: adjit.array(dtype=adjit.vec3),
                    s: adjit.array(dtype=float, ndim=2),
                    o2: adjit.array(dtype=adjit.mat22, ndim=2), o3: adjit.array(dtype=adjit.mat33, ndim=2),
                    o4: adjit.array(dtype=adjit.mat44, ndim=2), ot: adjit.array(dtype=M32),
                    oo: adjit.array(dtype=M23)):
    i = adjit.tid()
    s[0, i] = adjit.trace(m2[i])
    s[1, i] = adjit.trace(m3[i])
    s[2, i] = adjit.trace(m4[i])
    s[3, i] = adjit.determinant(m2[i])
    s[4, i] = adjit.determinant(m3[i])
    s[5, i] = adjit.determinant(m4[i])
    o2[0, i] = adjit.transpose(m2[i])
    o2[1, i] = adjit.inverse(m2[i])
    o2[2, i] = adjit.diag(u[i])
    o3[0, i] = adjit.transpose(m3[i])
    o3[1, i] = adjit.inverse(m3[i])
    o3[2, i] = adjit.diag(w[i])
    o3[3, i] = adjit.outer(w[i], w[i])
    o4[0, i] = adjit.transpose(m4[i])
    o4[1, i] = adjit.inverse(m4[i])
    ot[i] = adjit.transpose(r[i])
    oo[i] = adjit.outer(u[i], w[i])


def _well_conditioned(rng, n, k):
    # Diagonally dominant: determinants away from zero, inverses accurate in float32.
    return (rng.uniform(-1, 1, (k, n, n)) + 3.0 * np.eye(n)).astype(np.float32)


def test_matrix_builtins():
    rng = np.random.default_rng(6)
    k = 64
    m2, m3, m4 = (_well_conditioned(rng, n, k) for n in (2, 3, 4))
    r = rng.uniform(-1, 1, (k, 2, 3)).astype(np.float32)
    u, w = rng.uniform(-1, 1, (k, 2)).astype(np.float32), rng.uniform(-1, 1, (k, 3)).astype(np.float32)
    s = adjit.zeros((6, k))
    o2, o3 = adjit.zeros((3, k), dtype=adjit.mat22), adjit.zeros((4, k), dtype=adjit.mat33)
    o4, ot, oo = adjit.zeros((2, k), dtype=adjit.mat44), adjit.zeros(k, dtype=M32), adjit.zeros(k, dtype=M23)
    adjit.launch(matrix_builtins, dim=k, inputs=[
        adjit.array(m2, dtype=adjit.mat22), adjit.array(m3, dtype=adjit.mat33), adjit.array(m4, dtype=adjit.mat44),
        adjit.array(r, dtype=M23), adjit.array(u, dtype=adjit.vec2), adjit.array(w, dtype=adjit.vec3),
        s, o2, o3, o4, ot, oo])
    M2, M3, M4 = (m.astype(np.float64) for m in (m2, m3, m4))
    U, W = u.astype(np.float64), w.astype(np.float64)
    for j, m in enumerate((M2, M3, M4)):
        np.testing.assert_allclose(s.numpy()[j], np.trace(m, axis1=1, axis2=2), **F32)
        np.testing.assert_allclose(s.numpy()[3 + j], np.linalg.det(m), **F32)
    for out, m in ((o2, m2), (o3, m3), (o4, m4)):
        np.testing.assert_array_equal(out.numpy()[0], m.transpose(0, 2, 1))
        np.testing.assert_allclose(out.numpy()[1], np.linalg.inv(m.astype(np.float64)), **F32)
    np.testing.assert_array_equal(o2.numpy()[2], np.einsum("ki,ij->kij", u, np.eye(2, dtype=np.float32)))
    np.testing.assert_array_equal(o3.numpy()[2], np.einsum("ki,ij->kij", w, np.eye(3, dtype=np.float32)))
    np.testing.assert_allclose(o3.numpy()[3], np.einsum("ki,kj->kij", W, W), **F32)
    np.testing.assert_array_equal(ot.numpy(), r.transpose(0, 2, 1))
    np.testing.assert_allclose(oo.numpy(), np.einsum("ki,kj->kij", U, W), **F32)


@adjit.kernel
def matrix_builtins_f64(m: adjit.array(dtype=adjit.mat33d), s: adjit.array(dtype=adjit.float64, ndim=2),
                        o: adjit.array(dtype=adjit.mat33d, ndim=2)):
    i = adjit.tid()
    s[0, i] = adjit.determinant(m[i])
    s[1, i] = adjit.trace(m[i])
    o[0, i] = adjit.inverse(m[i])
    o[1, i] = m[i] * adjit.inverse(m[i])


def test_float64_matrix_builtins():
    rng = np.random.default_rng(7)
    m = rng.uniform(-1, 1, (32, 3, 3)) + 3.0 * np.eye(3)
    s, o = adjit.zeros((2, 32), dtype=adjit.float64), adjit.zeros((2, 32), dtype=adjit.mat33d)
    adjit.launch(matrix_builtins_f64, dim=32, inputs=[adjit.array(m, dtype=adjit.mat33d), s, o])
    np.testing.assert_allclose(s.numpy()[0], np.linalg.det(m), rtol=1e-12)
    np.testing.assert_allclose(s.numpy()[1], np.trace(m, axis1=1, axis2=2), **F64)
    np.testing.assert_allclose(o.numpy()[0], np.linalg.inv(m), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(o.numpy()[1], np.broadcast_to(np.eye(3), (32, 3, 3)), atol=1e-13)


# --- products: mul(a, b) is a * b -------------------------------------------------------------------

@adjit.kernel
def products(s: adjit.array(dtype=float), v: adjit.array(dtype=adjit.vec3), m: adjit.array(dtype=adjit.mat33),
             r: adjit.array(dtype=M23), q: adjit.array(dtype=adjit.quat), p: adjit.array(dtype=adjit.quat),
             os: adjit.array(dtype=float, ndim=2), ov: adjit.array(dtype=adjit.vec3, ndim=2),
             ov2: adjit.array(dtype=adjit.vec2), om: adjit.array(dtype=adjit.mat33, ndim=2),
             om23: adjit.array(dtype=M23), oq: adjit.array(dtype=adjit.quat, ndim=2)):
    i = adjit.tid()
    os[0, i] = adjit.mul(s[i], s[i])
    os[1, i] = s[i] * s[i]
    os[2, i] = adjit.mul(s[i], 3.0)
    os[3, i] = adjit.mul(2, 3) * s[i]
    ov[0, i] = adjit.mul(s[i], v[i])
    ov[1, i] = adjit.mul(v[i], s[i])
    ov[2, i] = adjit.mul(2.0, v[i])
    ov[3, i] = adjit.mul(m[i], v[i])
    ov[4, i] = m[i] * v[i]
    ov[5, i] = adjit.mul(v[i], m[i])
    ov[6, i] = v[i] * m[i]
    ov2[i] = adjit.mul(r[i], v[i])
    om[0, i] = adjit.mul(m[i], m[i])
    om[1, i] = m[i] * m[i]
    om[2, i] = adjit.mul(s[i], m[i])
    om23[i] = adjit.mul(r[i], m[i])
    oq[0, i] = adjit.mul(q[i], p[i])
    oq[1, i] = q[i] * p[i]
    oq[2, i] = adjit.mul(q[i], s[i])
    oq[3, i] = 2.0 * q[i]


def _hamilton(a, b):
    """Quaternion product from the textbook definition, (x, y, z, w) storage, w real."""
    av, aw, bv, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv),
                           aw * bw - (av * bv).sum(-1, keepdims=True)], axis=-1)


def _unit_quats(rng, k):
    q = rng.normal(size=(k, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_mul_is_the_product_operator():
    rng = np.random.default_rng(8)
    k = 64
    s = rng.uniform(-2, 2, k).astype(np.float32)
    v = rng.uniform(-2, 2, (k, 3)).astype(np.float32)
    m = rng.uniform(-2, 2, (k, 3, 3)).astype(np.float32)
    r = rng.uniform(-2, 2, (k, 2, 3)).astype(np.float32)
    q, p = _unit_quats(rng, k).astype(np.float32), _unit_quats(rng, k).astype(np.float32)
    os, ov, ov2 = adjit.zeros((4, k)), adjit.zeros((7, k), dtype=adjit.vec3), adjit.zeros(k, dtype=adjit.vec2)
    om, om23 = adjit.zeros((3, k), dtype=adjit.mat33), adjit.zeros(k, dtype=M23)
    oq = adjit.zeros((4, k), dtype=adjit.quat)
    adjit.launch(products, dim=k, inputs=[
        adjit.array(s), adjit.array(v, dtype=adjit.vec3), adjit.array(m, dtype=adjit.mat33), adjit.array(r, dtype=M23),
        adjit.array(q, dtype=adjit.quat), adjit.array(p, dtype=adjit.quat), os, ov, ov2, om, om23, oq])
    S, V, M, R, Q, P = (x.astype(np.float64) for x in (s, v, m, r, q, p))
    os, ov, om, oq = os.numpy(), ov.numpy(), om.numpy(), oq.numpy()
    # mul(a, b) and a * b are the same operation, bit for bit.
    for out, (x, y) in ((os, (0, 1)), (ov, (3, 4)), (ov, (5, 6)), (om, (0, 1)), (oq, (0, 1))):
        np.testing.assert_array_equal(out[x], out[y])
    np.testing.assert_allclose(os[0], S * S, **F32)
    np.testing.assert_allclose(os[2], S * 3.0, **F32)
    np.testing.assert_allclose(os[3], 6.0 * S, **F32)
    np.testing.assert_allclose(ov[0], S[:, None] * V, **F32)
    np.testing.assert_allclose(ov[1], S[:, None] * V, **F32)
    np.testing.assert_allclose(ov[2], 2.0 * V, **F32)
    np.testing.assert_allclose(ov[3], np.einsum("kij,kj->ki", M, V), rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(ov[5], np.einsum("ki,kij->kj", V, M), rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(ov2.numpy(), np.einsum("kij,kj->ki", R, V), rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(om[0], M @ M, rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(om[2], S[:, None, None] * M, **F32)
    np.testing.assert_allclose(om23.numpy(), R @ M, rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(oq[0], _hamilton(Q, P), **F32)
    np.testing.assert_allclose(oq[2], S[:, None] * Q, **F32)
    np.testing.assert_allclose(oq[3], 2.0 * Q, **F32)


@adjit.kernel
def products_f64_int(s: adjit.array(dtype=adjit.float64), q: adjit.array(dtype=adjit.quatd),
                     p: adjit.array(dtype=adjit.quatd), m: adjit.array(dtype=adjit.mat44d),
                     a: adjit.array(dtype=int), b: adjit.array(dtype=adjit.vec3i),
                     oq: adjit.array(dtype=adjit.quatd, ndim=2), om: adjit.array(dtype=adjit.mat44d),
                     oi: adjit.array(dtype=int), ob: adjit.array(dtype=adjit.vec3i)):
    i = adjit.tid()
    oq[0, i] = adjit.mul(q[i], p[i])
    oq[1, i] = adjit.mul(s[i], q[i]) * 0.5
    om[i] = adjit.mul(m[i], m[i]) * s[i]
    oi[i] = adjit.mul(a[i], a[i] + 1)
    ob[i] = adjit.mul(b[i], a[i]) * 2


def test_mul_float64_and_int():
    rng = np.random.default_rng(9)
    k = 64
    s, m = rng.uniform(-2, 2, k), rng.uniform(-1, 1, (k, 4, 4))
    q, p = _unit_quats(rng, k), _unit_quats(rng, k)
    a = rng.integers(-1000, 1000, k).astype(np.int32)
    b = rng.integers(-1000, 1000, (k, 3)).astype(np.int32)
    oq, om = adjit.zeros((2, k), dtype=adjit.quatd), adjit.zeros(k, dtype=adjit.mat44d)
    oi, ob = adjit.zeros(k, dtype=int), adjit.zeros(k, dtype=adjit.vec3i)
    adjit.launch(products_f64_int, dim=k, inputs=[
        adjit.array(s), adjit.array(q, dtype=adjit.quatd), adjit.array(p, dtype=adjit.quatd),
        adjit.array(m, dtype=adjit.mat44d), adjit.array(a), adjit.array(b, dtype=adjit.vec3i), oq, om, oi, ob])
    np.testing.assert_allclose(oq.numpy()[0], _hamilton(q, p), **F64)
    np.testing.assert_allclose(oq.numpy()[1], 0.5 * s[:, None] * q, **F64)
    np.testing.assert_allclose(om.numpy(), (m @ m) * s[:, None, None], rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(oi.numpy(), a * (a + 1))
    np.testing.assert_array_equal(ob.numpy(), b * a[:, None] * 2)


@adjit.kernel
def componentwise(a: adjit.array(dtype=adjit.vec3), b: adjit.array(dtype=adjit.vec3),
                  m: adjit.array(dtype=adjit.mat22d), n: adjit.array(dtype=adjit.mat22d),
                  u: adjit.array(dtype=adjit.vec2i), w: adjit.array(dtype=adjit.vec2i),
                  ov: adjit.array(dtype=adjit.vec3, ndim=2), om: adjit.array(dtype=adjit.mat22d, ndim=2),
                  oi: adjit.array(dtype=adjit.vec2i, ndim=2)):
    i = adjit.tid()
    ov[0, i] = adjit.cw_mul(a[i], b[i])
    ov[1, i] = adjit.cw_div(a[i], b[i])
    om[0, i] = adjit.cw_mul(m[i], n[i])
    om[1, i] = adjit.cw_div(m[i], n[i])
    oi[0, i] = adjit.cw_mul(u[i], w[i])
    oi[1, i] = adjit.cw_div(u[i], w[i])


def test_componentwise_products():
    rng = np.random.default_rng(15)
    k = 64
    a, b = rng.uniform(-2, 2, (k, 3)).astype(np.float32), rng.uniform(0.5, 2, (k, 3)).astype(np.float32)
    m, n = rng.uniform(-2, 2, (k, 2, 2)), rng.uniform(0.5, 2, (k, 2, 2))
    u, w = rng.integers(-100, 100, (k, 2)).astype(np.int32), rng.integers(1, 9, (k, 2)).astype(np.int32)
    w[::2] *= -1
    ov, om = adjit.zeros((2, k), dtype=adjit.vec3), adjit.zeros((2, k), dtype=adjit.mat22d)
    oi = adjit.zeros((2, k), dtype=adjit.vec2i)
    adjit.launch(componentwise, dim=k, inputs=[
        adjit.array(a, dtype=adjit.vec3), adjit.array(b, dtype=adjit.vec3), adjit.array(m, dtype=adjit.mat22d),
        adjit.array(n, dtype=adjit.mat22d), adjit.array(u, dtype=adjit.vec2i), adjit.array(w, dtype=adjit.vec2i),
        ov, om, oi])
    A, B = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(ov.numpy()[0], A * B, **F32)
    np.testing.assert_allclose(ov.numpy()[1], A / B, **F32)
    np.testing.assert_allclose(om.numpy()[0], m * n, **F64)
    np.testing.assert_allclose(om.numpy()[1], m / n, **F64)
    np.testing.assert_array_equal(oi.numpy()[0], u * w)
    np.testing.assert_array_equal(oi.numpy()[1], np.trunc(u / w).astype(np.int32))  # toward zero


# --- identity matrices (keyword arguments) ---------------------------------------------------------

@adjit.kernel
def identities(o2: adjit.array(dtype=adjit.mat22), o3: adjit.array(dtype=adjit.mat33, ndim=2),
               o4: adjit.array(dtype=adjit.mat44), o3d: adjit.array(dtype=adjit.mat33d, ndim=2),
               m: adjit.array(dtype=adjit.mat33)):
    i = adjit.tid()
    o2[i] = adjit.identity(n=2, dtype=float)
    o3[0, i] = adjit.identity(n=3, dtype=float)
    o3[1, i] = adjit.identity(dtype=adjit.float32, n=3)
    o3[2, i] = adjit.identity(3, float)
    o3[3, i] = adjit.identity(n=3)
    o3[4, i] = m[i] * adjit.identity(n=3, dtype=float) - m[i]
    o4[i] = adjit.identity(n=4, dtype=float) * float(i)
    o3d[0, i] = adjit.identity(n=3, dtype=adjit.float64)
    o3d[1, i] = adjit.identity(3, dtype=adjit.float64) * 2.0


def test_identity():
    k = 5
    m = np.random.default_rng(10).uniform(-1, 1, (k, 3, 3)).astype(np.float32)
    o2, o3 = adjit.zeros(k, dtype=adjit.mat22), adjit.zeros((5, k), dtype=adjit.mat33)
    o4 = adjit.zeros(k, dtype=adjit.mat44)
    o3d = adjit.zeros((2, k), dtype=adjit.mat33d)
    adjit.launch(identities, dim=k, inputs=[o2, o3, o4, o3d, adjit.array(m, dtype=adjit.mat33)])
    np.testing.assert_array_equal(o2.numpy(), np.broadcast_to(np.eye(2), (k, 2, 2)))
    for j in range(4):
        np.testing.assert_array_equal(o3.numpy()[j], np.broadcast_to(np.eye(3), (k, 3, 3)))
    np.testing.assert_array_equal(o3.numpy()[4], np.zeros((k, 3, 3)))  # M I = M exactly
    np.testing.assert_array_equal(o4.numpy(), np.arange(k)[:, None, None] * np.eye(4))
    np.testing.assert_array_equal(o3d.numpy()[0], np.broadcast_to(np.eye(3), (k, 3, 3)))
    np.testing.assert_array_equal(o3d.numpy()[1], np.broadcast_to(2 * np.eye(3), (k, 3, 3)))


# --- quaternions ---------------------------------------------------------------------------------------

@adjit.kernel
def quat_ops(q: adjit.array(dtype=adjit.quat), p: adjit.array(dtype=adjit.quat), v: adjit.array(dtype=adjit.vec3),
             axis: adjit.array(dtype=adjit.vec3), angle: adjit.array(dtype=float),
             oq: adjit.array(dtype=adjit.quat, ndim=2), ov: adjit.array(dtype=adjit.vec3, ndim=2),
             os: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    oq[0, i] = adjit.quat_inverse(q[i])
    oq[1, i] = adjit.quat_from_axis_angle(axis[i], angle[i])
    oq[2, i] = adjit.quat_identity()
    oq[3, i] = q[i] * adjit.quat_inverse(q[i])
    oq[4, i] = adjit.quat_identity(dtype=float) * q[i]
    ov[0, i] = adjit.quat_rotate(q[i], v[i])
    ov[1, i] = adjit.quat_rotate(adjit.quat_inverse(q[i]), adjit.quat_rotate(q[i], v[i]))
    ov[2, i] = adjit.quat_rotate(q[i] * p[i], v[i])
    ov[3, i] = adjit.quat_rotate(q[i], adjit.quat_rotate(p[i], v[i]))
    ov[4, i] = adjit.quat_rotate(adjit.quat_from_axis_angle(axis[i], angle[i]), v[i])
    os[0, i] = adjit.length(adjit.quat_from_axis_angle(axis[i], angle[i]))
    os[1, i] = adjit.dot(q[i], p[i])


def _rotate(q, v):
    """v rotated by q: the vector part of q (v, 0) q^-1, with the true inverse (float64)."""
    inv = np.concatenate([-q[..., :3], q[..., 3:]], axis=-1) / (q * q).sum(-1, keepdims=True)
    return _hamilton(_hamilton(q, np.concatenate([v, np.zeros_like(v[..., :1])], axis=-1)), inv)[..., :3]


def test_quaternion_builtins():
    rng = np.random.default_rng(11)
    k = N
    q, p = _unit_quats(rng, k).astype(np.float32), _unit_quats(rng, k).astype(np.float32)
    v = rng.uniform(-2, 2, (k, 3)).astype(np.float32)
    axis = rng.normal(size=(k, 3))
    axis = (axis / np.linalg.norm(axis, axis=1, keepdims=True)).astype(np.float32)
    angle = rng.uniform(-6, 6, k).astype(np.float32)
    oq, ov, os = adjit.zeros((5, k), dtype=adjit.quat), adjit.zeros((5, k), dtype=adjit.vec3), adjit.zeros((2, k))
    adjit.launch(quat_ops, dim=k, inputs=[
        adjit.array(q, dtype=adjit.quat), adjit.array(p, dtype=adjit.quat), adjit.array(v, dtype=adjit.vec3),
        adjit.array(axis, dtype=adjit.vec3), adjit.array(angle), oq, ov, os])
    Q, P, V, A, T = (x.astype(np.float64) for x in (q, p, v, axis, angle))
    oq, ov, os = oq.numpy(), ov.numpy(), os.numpy()
    np.testing.assert_array_equal(oq[0], np.concatenate([-q[:, :3], q[:, 3:]], axis=1))  # the conjugate
    from_axis_angle = np.concatenate([A * np.sin(T / 2)[:, None], np.cos(T / 2)[:, None]], axis=1)
    np.testing.assert_allclose(oq[1], from_axis_angle, **F32)
    np.testing.assert_array_equal(oq[2], np.broadcast_to([0, 0, 0, 1], (k, 4)))
    np.testing.assert_allclose(oq[3], np.broadcast_to([0, 0, 0, 1], (k, 4)), **F32)
    np.testing.assert_array_equal(oq[4], q)
    # Rotations of unit quaternions (|v| < 3.5): float32 rounding of a few terms.
    rot = dict(rtol=1e-5, atol=4e-6)
    np.testing.assert_allclose(ov[0], _rotate(Q, V), **rot)
    np.testing.assert_allclose(ov[1], V, **rot)
    np.testing.assert_allclose(ov[2], _rotate(_hamilton(Q, P), V), **rot)
    np.testing.assert_allclose(ov[3], _rotate(Q, _rotate(P, V)), **rot)
    np.testing.assert_allclose(ov[4], _rotate(from_axis_angle, V), **rot)
    np.testing.assert_allclose(os[0], np.ones(k), **F32)
    np.testing.assert_allclose(os[1], (Q * P).sum(1), **F32)


@adjit.kernel
def quat_conventions(out: adjit.array(dtype=adjit.vec3d), oq: adjit.array(dtype=adjit.quatd)):
    # A quarter turn about +z maps +x onto +y (right-hand rule, as in Warp).
    r = adjit.quat_from_axis_angle(adjit.vec3d(0.0, 0.0, 1.0), adjit.float64(1.5707963267948966))
    out[0] = adjit.quat_rotate(r, adjit.vec3d(1.0, 0.0, 0.0))
    out[1] = adjit.quat_rotate(adjit.quat_identity(adjit.float64), adjit.vec3d(1.0, 2.0, 3.0))
    # i j = k, j i = -k, i i = -1.
    i = adjit.quatd(1.0, 0.0, 0.0, 0.0)
    j = adjit.quatd(0.0, 1.0, 0.0, 0.0)
    oq[0] = i * j
    oq[1] = j * i
    oq[2] = i * i
    oq[3] = r
    oq[4] = adjit.quat_inverse(r) * r


def test_quaternion_conventions_float64():
    out, oq = adjit.zeros(2, dtype=adjit.vec3d), adjit.zeros(5, dtype=adjit.quatd)
    adjit.launch(quat_conventions, dim=1, inputs=[out, oq])
    np.testing.assert_allclose(out.numpy()[0], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_array_equal(out.numpy()[1], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(oq.numpy()[:3], [[0, 0, 1, 0], [0, 0, -1, 0], [0, 0, 0, -1]])
    h = np.sqrt(0.5)
    np.testing.assert_allclose(oq.numpy()[3], [0.0, 0.0, h, h], **F64)
    np.testing.assert_allclose(oq.numpy()[4], [0.0, 0.0, 0.0, 1.0], **F64)


@adjit.kernel
def quat_f64(q: adjit.array(dtype=adjit.quatd), v: adjit.array(dtype=adjit.vec3d),
             axis: adjit.array(dtype=adjit.vec3d), angle: adjit.array(dtype=adjit.float64),
             oq: adjit.array(dtype=adjit.quatd, ndim=2), ov: adjit.array(dtype=adjit.vec3d)):
    i = adjit.tid()
    oq[0, i] = adjit.quat_inverse(q[i])
    oq[1, i] = adjit.quat_from_axis_angle(axis[i], angle[i])
    oq[2, i] = adjit.quat_identity(dtype=adjit.float64)
    ov[i] = adjit.quat_rotate(q[i], v[i])


def test_float64_quaternion_builtins():
    rng = np.random.default_rng(12)
    k = N
    q, v = _unit_quats(rng, k), rng.uniform(-2, 2, (k, 3))
    axis = rng.normal(size=(k, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    angle = rng.uniform(-6, 6, k)
    oq, ov = adjit.zeros((3, k), dtype=adjit.quatd), adjit.zeros(k, dtype=adjit.vec3d)
    adjit.launch(quat_f64, dim=k, inputs=[adjit.array(q, dtype=adjit.quatd), adjit.array(v, dtype=adjit.vec3d),
                                          adjit.array(axis, dtype=adjit.vec3d), adjit.array(angle), oq, ov])
    np.testing.assert_array_equal(oq.numpy()[0], np.concatenate([-q[:, :3], q[:, 3:]], axis=1))
    np.testing.assert_allclose(oq.numpy()[1], np.concatenate([axis * np.sin(angle / 2)[:, None],
                                                              np.cos(angle / 2)[:, None]], axis=1), **F64)
    np.testing.assert_array_equal(oq.numpy()[2], np.broadcast_to([0, 0, 0, 1], (k, 4)))
    np.testing.assert_allclose(ov.numpy(), _rotate(q, v), rtol=1e-13, atol=1e-14)


# --- atomics --------------------------------------------------------------------------------------------

@adjit.kernel
def atomic_counters(count: adjit.array(dtype=int), old_add: adjit.array(dtype=int),
                    down: adjit.array(dtype=int), old_sub: adjit.array(dtype=int)):
    i = adjit.tid()
    old_add[i] = adjit.atomic_add(count, 0, 1)
    old_sub[i] = adjit.atomic_sub(down, 0, 1)


def test_atomic_add_and_sub_return_the_old_value():
    # Every thread bumps one counter: the old values are exactly 0 .. n-1 (some order).
    n = 4099
    count, old_add = adjit.zeros(1, dtype=int), adjit.zeros(n, dtype=int)
    down, old_sub = adjit.full(1, n, dtype=int), adjit.zeros(n, dtype=int)
    adjit.launch(atomic_counters, dim=n, inputs=[count, old_add, down, old_sub])
    assert count.numpy()[0] == n and down.numpy()[0] == 0
    np.testing.assert_array_equal(np.sort(old_add.numpy()), np.arange(n))
    np.testing.assert_array_equal(np.sort(old_sub.numpy()), np.arange(1, n + 1))


@adjit.kernel
def atomic_bins(x: adjit.array(dtype=float), bins: adjit.array(dtype=int),
                total: adjit.array(dtype=float), rest: adjit.array(dtype=float),
                lo: adjit.array(dtype=float), hi: adjit.array(dtype=float),
                ilo: adjit.array(dtype=int), ihi: adjit.array(dtype=int),
                old: adjit.array(dtype=float, ndim=2), iold: adjit.array(dtype=int, ndim=2)):
    i = adjit.tid()
    b = bins[i]
    old[0, i] = adjit.atomic_add(total, b, x[i])
    old[1, i] = adjit.atomic_sub(rest, b, x[i])
    old[2, i] = adjit.atomic_min(lo, b, x[i])
    old[3, i] = adjit.atomic_max(hi, b, x[i])
    iold[0, i] = adjit.atomic_min(ilo, b, int(x[i] * 4.0))
    iold[1, i] = adjit.atomic_max(ihi, b, int(x[i] * 4.0))


def test_atomic_builtins_on_contended_bins():
    rng = np.random.default_rng(13)
    n, nb = 20000, 7
    # Positive quarters: sums are exact in float32 and partial sums strictly increase.
    x = (rng.integers(1, 400, n) / 4.0).astype(np.float32)
    bins = rng.integers(0, nb, n).astype(np.int32)
    total, rest = adjit.zeros(nb), adjit.full(nb, 1000.0)
    lo, hi = adjit.full(nb, 1e30), adjit.full(nb, -1e30)
    ilo, ihi = adjit.full(nb, 1 << 30, dtype=int), adjit.full(nb, -(1 << 30), dtype=int)
    old, iold = adjit.zeros((4, n)), adjit.zeros((2, n), dtype=int)
    adjit.launch(atomic_bins, dim=n, inputs=[adjit.array(x), adjit.array(bins), total, rest, lo, hi, ilo, ihi,
                                             old, iold])
    X = x.astype(np.float64)
    ref_sum = np.bincount(bins, X, nb)
    ref_min = np.array([X[bins == b].min() for b in range(nb)])
    ref_max = np.array([X[bins == b].max() for b in range(nb)])
    np.testing.assert_array_equal(total.numpy(), ref_sum)
    np.testing.assert_array_equal(rest.numpy(), 1000.0 - ref_sum)
    np.testing.assert_array_equal(lo.numpy(), ref_min)
    np.testing.assert_array_equal(hi.numpy(), ref_max)
    np.testing.assert_array_equal(ilo.numpy(), (4 * ref_min).astype(np.int32))
    np.testing.assert_array_equal(ihi.numpy(), (4 * ref_max).astype(np.int32))
    old, iold = old.numpy(), iold.numpy()
    for b in range(nb):
        sel = bins == b
        # Per bin, the old values of atomic_add are the partial sums in some order of the adds:
        # sorted by old value, consecutive differences are the added values.
        order = np.argsort(old[0, sel])
        np.testing.assert_array_equal(old[0, sel][order], np.concatenate([[0.0], np.cumsum(X[sel][order])[:-1]]))
        order = np.argsort(-old[1, sel])
        np.testing.assert_array_equal(old[1, sel][order],
                                      1000.0 - np.concatenate([[0.0], np.cumsum(X[sel][order])[:-1]]))
        # Each old min/max is the running extreme before that thread: never beyond the final one,
        # and the initial value was seen by exactly one thread.
        assert (old[2, sel] >= ref_min[b]).all() and (old[3, sel] <= ref_max[b]).all()
        assert (old[2, sel] == np.float32(1e30)).sum() == 1 and (old[3, sel] == np.float32(-1e30)).sum() == 1
        assert (iold[0, sel] == 1 << 30).sum() == 1 and (iold[1, sel] == -(1 << 30)).sum() == 1


@adjit.kernel
def atomic_nd(v: adjit.array(dtype=adjit.vec3), w: adjit.array(dtype=adjit.vec3), d: adjit.array(dtype=adjit.float64),
              grid: adjit.array2d(dtype=float), cube: adjit.array3d(dtype=adjit.vec3),
              hyper: adjit.array4d(dtype=adjit.float64), grid_max: adjit.array2d(dtype=adjit.float64),
              vacc: adjit.array(dtype=adjit.vec3), dacc: adjit.array(dtype=adjit.float64),
              vold: adjit.array(dtype=adjit.vec3), vmin: adjit.array(dtype=adjit.vec3)):
    i, j = adjit.tid()
    adjit.atomic_add(grid, i % 3, j, 0.5)
    adjit.atomic_sub(cube, i % 2, j % 2, 1, v[j])
    adjit.atomic_add(hyper, 0, i % 2, j, 1, d[i])
    adjit.atomic_max(grid_max, j % 2, 0, d[i] * adjit.float64(j))
    vold[i * 4 + j] = adjit.atomic_add(vacc, j, w[i])
    adjit.atomic_add(dacc, 0, 1)
    adjit.atomic_min(vmin, 0, v[i] - v[j])


def test_atomics_on_n_d_arrays_vectors_and_float64():
    rng = np.random.default_rng(14)
    ni, nj = 10, 4
    v = (rng.integers(-40, 40, (nj * 3, 3)) / 8.0).astype(np.float32)[:max(ni, nj)]
    w = (rng.integers(1, 40, (ni, 3)) / 8.0).astype(np.float32)  # positive: partial sums increase
    d = rng.uniform(-1, 1, ni)
    grid, cube = adjit.zeros((3, nj)), adjit.zeros((2, 2, 2), dtype=adjit.vec3)
    hyper, grid_max = adjit.zeros((1, 2, nj, 2), dtype=adjit.float64), adjit.full((2, 1), -5.0, dtype=adjit.float64)
    vacc, dacc = adjit.zeros(nj, dtype=adjit.vec3), adjit.zeros(1, dtype=adjit.float64)
    vold, vmin = adjit.zeros(ni * nj, dtype=adjit.vec3), adjit.full(1, 100.0, dtype=adjit.vec3)
    adjit.launch(atomic_nd, dim=(ni, nj), inputs=[adjit.array(v, dtype=adjit.vec3), adjit.array(w, dtype=adjit.vec3),
                                                  adjit.array(d), grid, cube,
                                                  hyper, grid_max, vacc, dacc, vold, vmin])
    I, J = np.meshgrid(np.arange(ni), np.arange(nj), indexing="ij")
    ref_grid = np.zeros((3, nj))
    np.add.at(ref_grid, (I % 3, J), 0.5)
    np.testing.assert_array_equal(grid.numpy(), ref_grid)
    ref_cube = np.zeros((2, 2, 2, 3))
    np.add.at(ref_cube, (I % 2, J % 2, 1), -v[J].astype(np.float64))
    np.testing.assert_array_equal(cube.numpy(), ref_cube)
    ref_hyper = np.zeros((1, 2, nj, 2))
    np.add.at(ref_hyper, (0, I % 2, J, 1), d[I])
    np.testing.assert_allclose(hyper.numpy(), ref_hyper, **F64)
    ref_max = np.full((2, 1), -5.0)
    np.maximum.at(ref_max, (J % 2, 0), d[I] * J)
    np.testing.assert_array_equal(grid_max.numpy(), ref_max)
    W = w.astype(np.float64)
    np.testing.assert_array_equal(vacc.numpy(), np.broadcast_to(W.sum(0), (nj, 3)))
    assert dacc.numpy()[0] == ni * nj  # a literal value adopts the array's float64
    # The old vec3 values: per column j, the partial sums of the w[i] in some order.
    vo = vold.numpy().reshape(ni, nj, 3)
    for jj in range(nj):
        order = np.argsort(vo[:, jj, 0])
        np.testing.assert_array_equal(vo[order, jj], np.concatenate([np.zeros((1, 3)), np.cumsum(W[order], 0)[:-1]]))
    np.testing.assert_array_equal(vmin.numpy()[0], np.minimum((v[I] - v[J]).reshape(-1, 3).min(0), 100.0))


# --- Warp's operator functions ------------------------------------------------------------------------

@adjit.kernel
def operator_functions(x: adjit.array(dtype=float), v: adjit.array(dtype=adjit.vec3), n: adjit.array(dtype=int),
                       y: adjit.array(dtype=float), w: adjit.array(dtype=adjit.vec3), m: adjit.array(dtype=int)):
    y[0] = adjit.add(x[0], 2.0)
    y[1] = adjit.sub(x[0], x[1])
    y[2] = adjit.div(x[0], 4.0)
    y[3] = adjit.neg(x[1])
    y[4] = adjit.pos(x[1])
    y[5] = adjit.mod(x[0], 0.75)
    y[6] = adjit.floordiv(x[0], 0.75)
    w[0] = adjit.add(v[0], v[1])
    w[1] = adjit.div(v[0], 2.0)
    w[2] = adjit.neg(v[1]) + adjit.sub(v[1], v[0])
    m[0] = adjit.bit_and(n[0], n[1])
    m[1] = adjit.bit_or(n[0], n[1])
    m[2] = adjit.bit_xor(n[0], n[1])
    m[3] = adjit.lshift(n[0], 2)
    m[4] = adjit.rshift(n[2], 1)
    m[5] = adjit.invert(n[0])
    m[6] = int(adjit.unot(n[1])) + 2 * int(adjit.unot(0))
    m[7] = adjit.div(n[0], -n[3])
    m[8] = adjit.mod(n[2], 4)


def test_operator_functions_are_the_operators():
    x = np.array([2.5, -1.5], np.float32)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    n = np.array([13, 6, -13, 2], np.int32)
    y, w, m = adjit.zeros(7), adjit.zeros(3, dtype=adjit.vec3), adjit.zeros(9, dtype=int)
    adjit.launch(operator_functions, dim=1, inputs=[adjit.array(x), adjit.array(v, dtype=adjit.vec3),
                                                    adjit.array(n, dtype=int)], outputs=[y, w, m])
    np.testing.assert_array_equal(y.numpy(), np.array([x[0] + 2, x[0] - x[1], x[0] / 4, -x[1], x[1],
                                                       np.fmod(x[0], np.float32(0.75)),
                                                       np.floor(x[0] / np.float32(0.75))], np.float32))
    np.testing.assert_array_equal(w.numpy(), [v[0] + v[1], v[0] / 2, -v[1] + (v[1] - v[0])])
    # integer division truncates and % takes the dividend's sign, as in Warp (C)
    np.testing.assert_array_equal(m.numpy(), [13 & 6, 13 | 6, 13 ^ 6, 13 << 2, -13 >> 1, ~13, 0 + 2,
                                              -6, -1])


@adjit.kernel
def operator_function_gradient(x: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    a = x[i]
    y[i] = adjit.div(adjit.add(a * a, adjit.neg(a)), adjit.sub(adjit.pos(a), adjit.float64(3.0)))


def test_operator_functions_differentiate_as_the_operators():
    x = np.array([0.5, 1.25, -2.0])
    check_gradients(operator_function_gradient, 3, [adjit.array(x, dtype=adjit.float64, requires_grad=True)],
                    [adjit.zeros(3, dtype=adjit.float64, requires_grad=True)])



@adjit.kernel
def float_mod_gradient(x: adjit.array(dtype=adjit.float64), d: adjit.array(dtype=adjit.float64),
                       y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    y[i] = adjit.mod(x[i] * x[i], d[i]) + x[i] % (d[i] + adjit.float64(0.25))


def test_float_mod_gradients_match_finite_differences():
    # d(a % b)/da = 1, d/db = -trunc(a / b): quotients of both signs and
    # several magnitudes, every one away from an integer (where fmod jumps)
    x = np.array([2.3, -2.3, 1.9, -0.7, 3.1, 0.4])
    d = np.array([0.7, 0.7, -0.55, 1.3, -1.1, 2.0])
    q = np.stack([x * x / d, x / (d + 0.25)])
    assert np.all(np.abs(q - np.round(q)) > 0.05) and np.any(np.abs(np.trunc(q)) >= 2)
    ins = [adjit.array(x, dtype=adjit.float64, requires_grad=True),
           adjit.array(d, dtype=adjit.float64, requires_grad=True)]
    y = adjit.zeros(6, dtype=adjit.float64, requires_grad=True)
    check_gradients(float_mod_gradient, 6, ins, [y])
    np.testing.assert_array_equal(y.numpy(), np.fmod(x * x, d) + np.fmod(x, d + 0.25))
    tape = adjit.Tape()
    with tape:
        adjit.launch(float_mod_gradient, 6, inputs=ins, outputs=[y])
    tape.backward(grads={y: adjit.array(np.ones(6), dtype=adjit.float64)})
    np.testing.assert_array_equal(ins[1].grad.numpy(), -np.trunc(x * x / d) - np.trunc(x / (d + 0.25)))


@adjit.kernel
def copysigns(x: adjit.array(dtype=float), y: adjit.array(dtype=float), d: adjit.array(dtype=adjit.float64),
              out: adjit.array(dtype=float), out_d: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    out[i] = adjit.copysign(x[i], y[i])
    out_d[i] = adjit.copysign(d[i], -d[i])


def test_copysign_against_numpy():
    # every sign pairing, signed zeros on both sides, infinities and a NaN magnitude
    x = np.array([1.5, -1.5, 1.5, -1.5, 0.0, -0.0, 2.0, -2.0, np.inf, np.nan, 3.0], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0, -1.0, 1.0, 0.0, -0.0, -1.0, -1.0, -np.inf], np.float32)
    d = np.array([0.25, -0.25, 0.0, -0.0, 7.0, -7.0, 1e300, -1e-300, np.inf, 5.0, -5.0])
    out, out_d = adjit.zeros(len(x)), adjit.zeros(len(x), dtype=adjit.float64)
    adjit.launch(copysigns, len(x), inputs=[adjit.array(x), adjit.array(y), adjit.array(d, dtype=adjit.float64)],
                 outputs=[out, out_d])
    # (bitwise: the sign of every zero and NaN must match too)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), np.copysign(x, y).view(np.uint32))
    np.testing.assert_array_equal(out_d.numpy().view(np.uint64), np.copysign(d, -d).view(np.uint64))
    with pytest.raises(adjit.AdjitError, match=r"copysign\(\) takes two float scalars"):
        adjit.launch(copysign_of_ints, 1, inputs=[adjit.zeros(1, dtype=int)])


@adjit.kernel
def copysign_of_ints(n: adjit.array(dtype=int)):
    n[0] = adjit.copysign(n[0], 1)


@adjit.kernel
def copysign_gradient(x: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64),
                      out: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    a = x[i] * x[i] - adjit.float64(1.0)
    out[i] = adjit.copysign(a, y[i]) * y[i] + adjit.copysign(y[i], a)


def test_copysign_gradients_match_finite_differences():
    # d/dx copysign(x, y) = sign(x) sign(y), d/dy = 0, with every sign pairing
    x = np.array([0.5, 1.5, -0.5, -1.5, 0.7, 1.2])
    y = np.array([0.8, -0.8, 1.3, -0.4, -1.1, 0.6])
    ins = [adjit.array(x, dtype=adjit.float64, requires_grad=True),
           adjit.array(y, dtype=adjit.float64, requires_grad=True)]
    out = adjit.zeros(6, dtype=adjit.float64, requires_grad=True)
    check_gradients(copysign_gradient, 6, ins, [out])
    a = x * x - 1.0
    tape = adjit.Tape()
    with tape:
        adjit.launch(copysign_gradient, 6, inputs=ins, outputs=[out])
    tape.backward(grads={out: adjit.array(np.ones(6), dtype=adjit.float64)})
    # (the sign operand a of copysign(y, a) passes nothing back to x)
    np.testing.assert_array_equal(ins[0].grad.numpy(), np.sign(a) * np.sign(y) * y * 2 * x)
    np.testing.assert_array_equal(ins[1].grad.numpy(), np.abs(a) * np.sign(y) + np.sign(a) * np.sign(y))

# --- slerp, roll/pitch/yaw, swing-twist --------------------------------------------------------------

@adjit.kernel
def quaternion_motions(a: adjit.array(dtype=adjit.quatd), b: adjit.array(dtype=adjit.quatd),
                       t: adjit.array(dtype=adjit.float64), axis: adjit.array(dtype=adjit.vec3d),
                       rpy: adjit.array(dtype=adjit.vec3d), q_out: adjit.array(dtype=adjit.quatd),
                       v_out: adjit.array(dtype=adjit.vec3d), s_out: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    q_out[3 * i] = adjit.quat_slerp(a[i], b[i], t[i])
    q_out[3 * i + 1] = adjit.quat_rpy(rpy[i][0], rpy[i][1], rpy[i][2])
    q_out[3 * i + 2] = adjit.quat_twist(axis[i], a[i])
    v_out[i] = adjit.quat_to_rpy(a[i])
    s_out[2 * i] = adjit.quat_twist_angle(axis[i], a[i])
    s_out[2 * i + 1] = adjit.quat_twist_angle_signed(axis[i], a[i])


def _quat_product(a, b):
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def _axis_quat(axis, angle):
    return np.concatenate([np.asarray(axis) * np.sin(angle / 2), [np.cos(angle / 2)]])


def _rotated_by(q, v):
    return _quat_product(_quat_product(q, np.concatenate([v, [0.0]])), q * [-1, -1, -1, 1])[:3]


def test_slerp_rpy_and_twist_against_numpy():
    rng = np.random.default_rng(11)
    n = 32
    a = rng.normal(size=(n, 4))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b = rng.normal(size=(n, 4))
    b[0] = -2.0 * a[0]  # the same rotation: the chord formula, t passed through
    t = rng.uniform(0.0, 1.0, n)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    rpy = np.stack([rng.uniform(-3, 3, n), rng.uniform(-1.5, 1.5, n), rng.uniform(-3, 3, n)], axis=1)
    q_out, v_out = adjit.zeros(3 * n, dtype=adjit.quatd), adjit.zeros(n, dtype=adjit.vec3d)
    s_out = adjit.zeros(2 * n, dtype=adjit.float64)
    adjit.launch(quaternion_motions, dim=n, inputs=[adjit.array(a, dtype=adjit.quatd), adjit.array(b, dtype=adjit.quatd),
                                                    adjit.array(t, dtype=adjit.float64),
                                                    adjit.array(axis, dtype=adjit.vec3d),
                                                    adjit.array(rpy, dtype=adjit.vec3d)],
                 outputs=[q_out, v_out, s_out])
    q, v, s = q_out.numpy().reshape(n, 3, 4), v_out.numpy(), s_out.numpy().reshape(n, 2)
    for i in range(n):
        bn = b[i] / np.linalg.norm(b[i])
        bn = bn if a[i] @ bn >= 0 else -bn
        # slerp: unit, on the great circle through a and bn, at the fraction t of the angle between them
        theta = np.arccos(np.clip(a[i] @ bn, -1, 1))
        assert abs(np.linalg.norm(q[i, 0]) - 1) < 1e-12
        np.testing.assert_allclose(np.arccos(np.clip(q[i, 0] @ a[i], -1, 1)), t[i] * theta, atol=1e-7)
        np.testing.assert_allclose(np.arccos(np.clip(q[i, 0] @ bn, -1, 1)), (1 - t[i]) * theta, atol=1e-7)
        # rpy: roll about x, then pitch about y, then yaw about z (fixed axes)
        v0 = rng.normal(size=3)
        rotated = v0
        for k in range(3):
            rotated = _rotated_by(_axis_quat(np.eye(3)[k], rpy[i, k]), rotated)
        np.testing.assert_allclose(_rotated_by(q[i, 1], v0), rotated, atol=1e-12)
        # quat_to_rpy inverts quat_rpy: a rebuilt from its angles (up to sign), pitch in [-pi/2, pi/2]
        assert abs(v[i][1]) <= np.pi / 2
        back = _quat_product(_axis_quat([0, 0, 1], v[i][2]), _quat_product(_axis_quat([0, 1, 0], v[i][1]),
                                                          _axis_quat([1, 0, 0], v[i][0])))
        assert min(np.abs(back - a[i]).max(), np.abs(back + a[i]).max()) < 1e-9
        # twist: a rotation about the axis, and a = swing * twist with the swing's axis perpendicular
        tw = q[i, 2]
        np.testing.assert_allclose(np.cross(tw[:3], axis[i]), 0, atol=1e-12)
        swing = _quat_product(a[i], tw * [-1, -1, -1, 1])
        assert abs(swing[:3] @ axis[i]) < 1e-12
        angle = 2 * np.arctan2(abs(a[i, :3] @ axis[i]), a[i, 3])
        np.testing.assert_allclose(s[i, 0], angle, atol=1e-12)
        np.testing.assert_allclose(s[i, 1], np.sign(a[i, :3] @ axis[i]) * angle, atol=1e-12)
    # for the same rotation, the chord: a, whatever t
    np.testing.assert_allclose(q[0, 0], a[0], atol=1e-12)


@adjit.kernel
def quaternion_motion_loss(a: adjit.array(dtype=adjit.quatd), b: adjit.array(dtype=adjit.quatd),
                           t: adjit.array(dtype=adjit.float64), axis: adjit.array(dtype=adjit.vec3d),
                           y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    s = adjit.quat_slerp(a[i], b[i], t[i])
    r = adjit.quat_to_rpy(s)
    q = adjit.quat_rpy(r[0], r[1] * adjit.float64(0.5), r[2]) * adjit.quat_twist(axis[i], s)
    y[i] = adjit.dot(q, b[i]) + adjit.quat_twist_angle(axis[i], a[i]) \
        + adjit.quat_twist_angle_signed(axis[i], b[i]) * adjit.float64(0.5)


def test_slerp_rpy_and_twist_gradients_match_finite_differences():
    rng = np.random.default_rng(5)
    n = 4
    a = rng.normal(size=(n, 4))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b = a + 0.6 * rng.normal(size=(n, 4))  # dot(a, b) > 0, away from the flip
    axis = rng.normal(size=(n, 3))
    ins = [adjit.array(a, dtype=adjit.quatd, requires_grad=True), adjit.array(b, dtype=adjit.quatd, requires_grad=True),
           adjit.array(rng.uniform(0.2, 0.8, n), dtype=adjit.float64, requires_grad=True),
           adjit.array(axis / np.linalg.norm(axis, axis=1, keepdims=True), dtype=adjit.vec3d, requires_grad=True)]
    assert all(a[i] @ b[i] > 0.2 for i in range(n))
    check_gradients(quaternion_motion_loss, n, ins, [adjit.zeros(n, dtype=adjit.float64, requires_grad=True)])


@adjit.kernel
def bits_and_nonzero(n: adjit.array(dtype=adjit.uint32), m: adjit.array(dtype=adjit.int8),
                     x: adjit.array(dtype=float), out: adjit.array2d(dtype=int), z: adjit.array(dtype=float)):
    i = adjit.tid()
    out[i, 0] = adjit.bit_count(n[i])
    out[i, 1] = adjit.bit_count(m[i])
    out[i, 2] = int(adjit.nonzero(m[i]))
    z[i] = adjit.nonzero(x[i])


def test_bit_count_and_nonzero():
    n = np.array([0, 0xFFFFFFFF, 0xF0F1, 1 << 31], np.uint32)
    m = np.array([0, -1, 5, -128], np.int8)
    x = np.array([0.0, -0.0, 2.5, np.nan], np.float32)
    out, z = adjit.zeros((4, 3), dtype=int), adjit.zeros(4)
    adjit.launch(bits_and_nonzero, dim=4, inputs=[adjit.array(n, dtype=adjit.uint32), adjit.array(m, dtype=adjit.int8),
                                                  adjit.array(x)], outputs=[out, z])
    np.testing.assert_array_equal(out.numpy()[:, 0], [bin(v).count("1") for v in n.tolist()])
    np.testing.assert_array_equal(out.numpy()[:, 1], [bin(v & 0xFF).count("1") for v in m.tolist()])
    np.testing.assert_array_equal(out.numpy()[:, 2], (m != 0).astype(int))
    np.testing.assert_array_equal(z.numpy(), [0.0, 0.0, 1.0, 1.0])  # NaN is not zero


@adjit.kernel
def inverse_erf(x: adjit.array(dtype=adjit.float64), x32: adjit.array(dtype=float),
                y: adjit.array2d(dtype=adjit.float64), y32: adjit.array2d(dtype=float)):
    i = adjit.tid()
    y[i, 0] = adjit.erfinv(x[i])
    y[i, 1] = adjit.erfcinv(x[i] + adjit.float64(1.0))
    y32[i, 0] = adjit.erfinv(x32[i])
    y32[i, 1] = adjit.erfcinv(x32[i] + 1.0)


def test_inverse_error_functions():
    from statistics import NormalDist
    x = np.array([0.0, 0.3, -0.75, 0.999, -0.999999, 1.0, -1.0, 1.5])
    y, y32 = adjit.zeros((8, 2), dtype=adjit.float64), adjit.zeros((8, 2))
    adjit.launch(inverse_erf, dim=8, inputs=[adjit.array(x, dtype=adjit.float64), adjit.array(x.astype(np.float32))],
                 outputs=[y, y32])
    y, y32 = y.numpy(), y32.numpy()
    for k in range(5):
        exact = NormalDist().inv_cdf((x[k] + 1) / 2) / math.sqrt(2)
        assert abs(math.erf(y[k, 0]) - x[k]) <= 2e-16 and abs(y[k, 0] - exact) <= 1e-10 * max(1, abs(exact))
        np.testing.assert_allclose(y[k, 1], -y[k, 0], atol=1e-14)  # erfcinv(1 + x) = -erfinv(x)
        exact32 = NormalDist().inv_cdf((float(np.float32(x[k])) + 1) / 2) / math.sqrt(2)
        assert abs(y32[k, 0] - exact32) <= 2e-6 * max(1, abs(exact32))
    assert y[5, 0] == np.inf and y[6, 0] == -np.inf and np.isnan(y[7, 0])
    assert y[5, 1] == -np.inf and np.isnan(y[7, 1])  # erfcinv(2) = -inf; outside (0, 2): NaN


@adjit.kernel
def inverse_erf_loss(x: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    y[i] = adjit.erfinv(x[i]) * adjit.float64(2.0) + adjit.erfcinv(x[i] * adjit.float64(0.5) + adjit.float64(0.6))


def test_inverse_error_function_gradients_are_one_over_the_slope():
    x = np.array([-0.8, -0.2, 0.1, 0.7, 0.95])
    xs = adjit.array(x, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros(5, dtype=adjit.float64, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(inverse_erf_loss, dim=5, inputs=[xs], outputs=[y])
    tape.backward(grads={y: np.ones(5)})
    slope = lambda v: 2 / math.sqrt(math.pi) * math.exp(-v * v)  # noqa: E731
    expected = [2 / slope(adjit.erfinv(np.float64(v))) - 0.5 / slope(adjit.erfcinv(np.float64(0.5 * v + 0.6)))
                for v in x]
    np.testing.assert_allclose(xs.grad.numpy(), expected, rtol=1e-10)
    check_gradients(inverse_erf_loss, 5, [adjit.array(x, dtype=adjit.float64, requires_grad=True)],
                    [adjit.zeros(5, dtype=adjit.float64, requires_grad=True)])


@adjit.kernel
def euler(q: adjit.array(dtype=adjit.quatd), e: adjit.array(dtype=adjit.vec3d), seq: adjit.array(dtype=adjit.vec3i),
          e_out: adjit.array(dtype=adjit.vec3d), q_out: adjit.array(dtype=adjit.quatd)):
    t = adjit.tid()
    s = seq[t]
    e_out[t] = adjit.quat_to_euler(q[t], s[0], s[1], s[2])
    q_out[t] = adjit.quat_from_euler(e[t], s[0], s[1], s[2])


def test_euler_angles_for_every_sequence():
    import itertools
    rng = np.random.default_rng(4)
    seqs = [s for s in itertools.product(range(3), repeat=3) if s[0] != s[1] and s[1] != s[2]]
    n = 6 * len(seqs)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[:len(seqs)] = [0.0, 0.0, 0.0, 1.0]  # no rotation: gimbal lock for the proper sequences
    e = rng.uniform(-3, 3, size=(n, 3))
    seq = np.array([seqs[t % len(seqs)] for t in range(n)], np.int32)
    e_out, q_out = adjit.zeros(n, dtype=adjit.vec3d), adjit.zeros(n, dtype=adjit.quatd)
    adjit.launch(euler, dim=n, inputs=[adjit.array(q, dtype=adjit.quatd), adjit.array(e, dtype=adjit.vec3d),
                                       adjit.array(seq, dtype=adjit.vec3i)], outputs=[e_out, q_out])
    for t in range(n):
        i, j, k = seq[t]
        # quat_from_euler: qk qj qi, each the rotation by e[axis] about that axis (e[i] twice if i == k)
        expected = np.array([0.0, 0.0, 0.0, 1.0])
        for axis in (i, j, k):
            expected = _quat_product(_axis_quat(np.eye(3)[axis], e[t, axis]), expected)
        np.testing.assert_allclose(q_out.numpy()[t], expected, atol=1e-12)
        angles = e_out.numpy()[t]
        if i != k:  # Tait-Bryan: quat_from_euler inverts it, also at gimbal lock
            back = np.array([0.0, 0.0, 0.0, 1.0])
            for axis in (i, j, k):
                back = _quat_product(_axis_quat(np.eye(3)[axis], angles[axis]), back)
            assert min(np.abs(back - q[t]).max(), np.abs(back + q[t]).max()) < 1e-9
            assert abs(angles[j]) <= np.pi / 2 + 1e-12
        else:  # proper: first about i, second about j, third about i again (stored at 3 - i - j)
            third = 3 - i - j
            back = np.array([0.0, 0.0, 0.0, 1.0])
            for axis, slot in ((i, i), (j, j), (i, third)):
                back = _quat_product(_axis_quat(np.eye(3)[axis], angles[slot]), back)
            assert min(np.abs(back - q[t]).max(), np.abs(back + q[t]).max()) < 1e-9
            assert -1e-12 <= angles[j] <= np.pi + 1e-12


@adjit.kernel
def euler_loss(q: adjit.array(dtype=adjit.quatd), y: adjit.array(dtype=adjit.float64)):
    t = adjit.tid()
    e = adjit.quat_to_euler(q[t], 2, 0, 1)
    r = adjit.quat_from_euler(e * adjit.float64(0.5), 1, 2, 0)
    y[t] = adjit.dot(e, adjit.vec3d(adjit.float64(1.0), adjit.float64(-2.0), adjit.float64(0.5))) + r[3]


def test_euler_gradients_match_finite_differences():
    rng = np.random.default_rng(8)
    q = rng.normal(size=(4, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    check_gradients(euler_loss, 4, [adjit.array(q, dtype=adjit.quatd, requires_grad=True)],
                    [adjit.zeros(4, dtype=adjit.float64, requires_grad=True)])


@adjit.kernel
def searched(a: adjit.array(dtype=float), keys: adjit.array(dtype=adjit.uint32), v: adjit.array(dtype=float),
             k: adjit.array(dtype=adjit.uint32), m: adjit.array(dtype=adjit.mat33d), out: adjit.array(dtype=int),
             y: adjit.array(dtype=float), d: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    j = adjit.lower_bound(a, v[i])
    out[3 * i] = j
    out[3 * i + 1] = adjit.lower_bound(a, 1, 4, v[i])
    out[3 * i + 2] = adjit.lower_bound(keys, k[i])
    y[i] = a[adjit.min(j, 4)] * v[i]      # the found element, differentiated
    d[i] = adjit.ddot(m[0], m[1])


def test_lower_bound_and_ddot():
    a = np.array([0.5, 1.0, 1.0, 2.0, 3.5], np.float32)
    keys = np.array([1, 5, 3_000_000_000, 4_000_000_000], np.uint32)  # unsigned order
    v = np.array([-1.0, 0.5, 1.0, 1.5, 3.5, 9.0], np.float32)
    k = np.array([0, 5, 6, 3_500_000_000, 4_000_000_001, 2], np.uint32)
    m = np.random.default_rng(2).normal(size=(2, 3, 3))
    xa = adjit.array(a, requires_grad=True)
    out, y, d = adjit.zeros(18, dtype=int), adjit.zeros(6, requires_grad=True), adjit.zeros(6, dtype=adjit.float64)
    with adjit.Tape() as tape:
        adjit.launch(searched, dim=6, inputs=[xa, adjit.array(keys, dtype=adjit.uint32), adjit.array(v),
                                              adjit.array(k, dtype=adjit.uint32), adjit.array(m, dtype=adjit.mat33d)],
                     outputs=[out, y, d])
    o = out.numpy().reshape(6, 3)
    np.testing.assert_array_equal(o[:, 0], np.searchsorted(a, v, side="left"))
    np.testing.assert_array_equal(o[:, 1], 1 + np.searchsorted(a[1:4], v, side="left"))
    np.testing.assert_array_equal(o[:, 2], np.searchsorted(keys, k, side="left"))
    np.testing.assert_allclose(d.numpy(), (m[0] * m[1]).sum(), rtol=1e-14)
    tape.backward(grads={y: np.ones(6, np.float32)})
    expected = np.zeros(5, np.float32)
    np.add.at(expected, np.minimum(o[:, 0], 4), v)
    np.testing.assert_array_equal(xa.grad.numpy(), expected)


@adjit.kernel
def search_past_the_end(a: adjit.array(dtype=float), out: adjit.array(dtype=int)):
    out[0] = adjit.lower_bound(a, 0, 9, 5.0)


def test_lower_bound_reads_are_range_checked():
    with pytest.raises(adjit.OutOfBoundsError, match="search_past_the_end"):
        adjit.launch(search_past_the_end, dim=1, inputs=[adjit.array(np.arange(4, dtype=np.float32))],
                     outputs=[adjit.zeros(1, dtype=int)])


@adjit.kernel
def ddot_loss(a: adjit.array(dtype=adjit.mat33d), b: adjit.array(dtype=adjit.mat33d), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    y[i] = adjit.ddot(a[i], b[i] * a[i])


def test_ddot_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    check_gradients(ddot_loss, 2, [adjit.array(rng.normal(size=(2, 3, 3)), dtype=adjit.mat33d, requires_grad=True),
                                   adjit.array(rng.normal(size=(2, 3, 3)), dtype=adjit.mat33d, requires_grad=True)],
                    [adjit.zeros(2, dtype=adjit.float64, requires_grad=True)])


# --- registry coverage ----------------------------------------------------------------------------------

TESTED = set(UNARY) | {"pow", "atan2", "min", "max", "abs", "sign", "clamp", "where", "select",
                       "dot", "length", "length_sq", "normalize", "cross",
                       "trace", "determinant", "transpose", "inverse", "diag", "outer",
                       "mul", "identity", "quat_identity", "quat_inverse", "quat_rotate", "quat_from_axis_angle",
                       "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "cw_mul", "cw_div",
                       "stop_gradient", "round", "trunc", "frac", "degrees", "radians", "lerp", "smoothstep",
                       "step", "isnan", "isinf", "isfinite",
                       # test_norms_and_assembly_against_numpy:
                       "norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize", "skew",
                       "get_diag", "matrix_from_rows", "matrix_from_cols", "argmin", "argmax",
                       # test_quaternion_matrices_against_numpy:
                       "quat_rotate_inv", "quat_to_matrix", "quat_from_matrix",
                       # test_wide_types.py:
                       "spatial_top", "spatial_bottom", "spatial_dot", "spatial_cross", "spatial_cross_dual",
                       # test_transforms.py:
                       "transform_identity", "transform_get_translation", "transform_get_rotation",
                       "transform_multiply", "transform_point", "transform_vector", "transform_inverse",
                       "transform_to_matrix", "transform_from_matrix", "transform_compose", "transform_twist",
                       "transform_wrench", "velocity_at_point",
                       # test_operator_functions_are_the_operators:
                       "add", "sub", "div", "floordiv", "mod", "bit_and", "bit_or", "bit_xor", "lshift",
                       "rshift", "neg", "pos", "invert", "unot",
                       # test_copysign_against_numpy:
                       "copysign",
                       # test_slerp_rpy_and_twist_against_numpy:
                       "quat_slerp", "quat_rpy", "quat_to_rpy", "quat_twist", "quat_twist_angle",
                       "quat_twist_angle_signed",
                       # test_random.py:
                       "rand_init", "randi", "randu", "randf", "randn", "poisson", "sample_triangle",
                       "sample_unit_ring", "sample_unit_disk", "sample_unit_square", "sample_unit_cube",
                       "sample_unit_sphere_surface", "sample_unit_sphere", "sample_unit_hemisphere_surface",
                       "sample_unit_hemisphere", "sample_cdf",
                       # test_transforms.py: test_setters_axis_angle_and_decompose
                       "transform_set_translation", "transform_set_rotation", "quat_to_axis_angle",
                       "transform_decompose",
                       # test_bit_count_and_nonzero:
                       "bit_count", "nonzero",
                       # test_inverse_error_functions:
                       "erfinv", "erfcinv",
                       # test_euler_angles_for_every_sequence:
                       "quat_from_euler", "quat_to_euler",
                       # test_lower_bound_and_ddot:
                       "lower_bound", "ddot",
                       # test_decompositions.py:
                       "svd3", "svd2", "eig3", "qr3",
                       # test_atomics_more.py:
                       "atomic_cas", "atomic_exch", "atomic_and", "atomic_or", "atomic_xor"}  # (the last: test_rounding_interpolation_...)
TESTED |= {"noise", "pnoise", "curlnoise", "block_dim"}  # test_noise.py
TESTED |= {"div_approx", "inverse_approx", "transformation", "quaternion", "spatial_adjoint",  # test_warp_builtins_more.py
           "quat_between_vectors", "cast"}
TESTED |= {name for name, entry in adjit.builtin_registry().items() if entry.tile}  # tiles: test_tiles.py


@adjit.kernel
def _stop_gradient_forward(x: adjit.array(dtype=adjit.vec3), y: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    y[i] = adjit.stop_gradient(x[i] * 2.0)


def test_stop_gradient_is_the_identity_forward():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = adjit.zeros(2, dtype=adjit.vec3)
    adjit.launch(_stop_gradient_forward, dim=2, inputs=[adjit.array(xs, dtype=adjit.vec3)], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), 2 * xs)


def test_every_registered_builtin_has_a_numpy_test():
    missing = sorted(set(adjit.builtin_registry()) - TESTED)
    assert not missing, f"builtins without a test in test_builtins.py: {missing}"


def test_registry_entries_are_documented_and_exported():
    for name, entry in adjit.builtin_registry().items():
        assert entry.name == name and entry.doc
        assert getattr(adjit, name) is entry  # adjit.<name> is the builtin
        with pytest.raises((TypeError, adjit.AdjitError), match=name):
            entry([1.0], object())  # host calls check their arguments (test_host_calls.py)


# --- rounding, interpolation and float tests -----------------------------------------------------

@adjit.kernel
def rounding_and_interpolation(x: adjit.array(dtype=float), v: adjit.array(dtype=adjit.vec3),
                               out: adjit.array2d(dtype=float), flags: adjit.array2d(dtype=int)):
    i = adjit.tid()
    a = x[i]
    out[i, 0] = adjit.round(a)
    out[i, 1] = adjit.trunc(a)
    out[i, 2] = adjit.frac(a)
    out[i, 3] = adjit.degrees(a)
    out[i, 4] = adjit.radians(a)
    out[i, 5] = adjit.lerp(a, 2.0 * a + 1.0, 0.25)
    out[i, 6] = adjit.smoothstep(-1.0, 2.0, a)
    out[i, 7] = adjit.step(a)
    out[i, 8] = adjit.lerp(v[i], adjit.vec3(1.0, 2.0, 3.0), 0.5).y
    flags[i, 0] = int(adjit.isnan(a))
    flags[i, 1] = int(adjit.isinf(a))
    flags[i, 2] = int(adjit.isfinite(a))
    flags[i, 3] = int(adjit.isnan(v[i] * a))
    flags[i, 4] = int(adjit.isfinite(v[i] * a))


def test_rounding_interpolation_and_float_tests_against_numpy():
    xs = np.r_[np.random.default_rng(5).uniform(-5, 5, 64), -2.5, -0.5, 0.5, 2.5, 0.0, np.nan, np.inf, -np.inf]
    xs = xs.astype(np.float32)
    v = np.random.default_rng(6).uniform(-1, 1, (len(xs), 3)).astype(np.float32)
    out, flags = adjit.zeros((len(xs), 9)), adjit.zeros((len(xs), 5), dtype=int)
    adjit.launch(rounding_and_interpolation, dim=len(xs),
                 inputs=[adjit.array(xs), adjit.array(v, dtype=adjit.vec3), out, flags])
    x = xs.astype(np.float64)
    with np.errstate(invalid="ignore"):
        s = np.clip((x + 1.0) / 3.0, 0.0, 1.0)
        expected = np.stack([
            np.where(x < 0, -np.floor(-x + 0.5), np.floor(x + 0.5)),  # halves away from zero
            np.trunc(x), x - np.trunc(x), np.degrees(x), np.radians(x), x + ((2.0 * x + 1.0) - x) * 0.25,
            s * s * (3.0 - 2.0 * s), np.where(x < 0, 1.0, 0.0), (v[:, 1] + 2.0) / 2.0], axis=1)
        np.testing.assert_allclose(out.numpy(), expected, **F32)
        va = v * x[:, None]
        np.testing.assert_array_equal(flags.numpy(), np.stack([
            np.isnan(x), np.isinf(x), np.isfinite(x), np.isnan(va).any(1), np.isfinite(va).all(1)],
            axis=1).astype(np.int32))


@adjit.kernel
def smooth_new_builtins(x: adjit.array(dtype=adjit.float64), v: adjit.array(dtype=adjit.vec3d),
                        y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    a = x[i]
    w = adjit.lerp(v[i], adjit.vec3d(adjit.float64(1.0), adjit.float64(2.0), adjit.float64(3.0)), a)
    y[i] = (adjit.frac(a + adjit.float64(3.0)) + adjit.degrees(a) * adjit.radians(a)
            + adjit.lerp(a, a * a, adjit.float64(0.3)) + adjit.smoothstep(adjit.float64(-1.0),
                                                                          adjit.float64(2.0), a)
            + adjit.dot(w, w))


@adjit.kernel
def special_functions(x: adjit.array(dtype=adjit.float64), v: adjit.array(dtype=adjit.vec3d),
                      y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    a = x[i]
    w = adjit.erf(v[i]) + adjit.cbrt(v[i] + adjit.vec3d(2.0, 2.0, 2.0))
    y[i] = adjit.cbrt(a) + adjit.erf(a) * adjit.erfc(a - adjit.float64(0.5)) + adjit.dot(w, w) + adjit.rint(a)


def test_gradients_of_cbrt_erf_erfc_match_finite_differences():
    """d cbrt = 1 / (3 cbrt(x)^2), d erf = 2 / sqrt(pi) exp(-x^2) = -d erfc,
    rint contributes nothing; against float64 central differences."""
    from adjit.testing import check_gradients
    rng = np.random.default_rng(9)
    x = adjit.array(rng.uniform(0.2, 1.8, 16), dtype=adjit.float64, requires_grad=True)
    v = adjit.array(rng.uniform(-1, 1, (16, 3)), dtype=adjit.vec3d, requires_grad=True)
    y = adjit.zeros(16, dtype=adjit.float64, requires_grad=True)
    check_gradients(special_functions, 16, [x, v], [y])


def test_gradients_of_the_new_smooth_builtins_match_finite_differences():
    from adjit.testing import check_gradients
    rng = np.random.default_rng(8)
    x = adjit.array(rng.uniform(0.1, 0.9, 16), dtype=adjit.float64, requires_grad=True)
    v = adjit.array(rng.uniform(-1, 1, (16, 3)), dtype=adjit.vec3d, requires_grad=True)
    y = adjit.zeros(16, dtype=adjit.float64, requires_grad=True)
    check_gradients(smooth_new_builtins, 16, [x, v], [y])


# --- norms, skew, diagonal, matrices from vectors, argmin/argmax ---------------------------------

@adjit.kernel
def norms_and_assembly(v: adjit.array(dtype=adjit.vec3d), m: adjit.array(dtype=adjit.mat33d),
                       d: adjit.array(dtype=adjit.float64), out: adjit.array2d(dtype=adjit.float64),
                       vecs: adjit.array2d(dtype=adjit.vec3d), mats: adjit.array2d(dtype=adjit.mat33d),
                       idx: adjit.array2d(dtype=int)):
    i = adjit.tid()
    a = v[i]
    out[i, 0] = adjit.norm_l1(a)
    out[i, 1] = adjit.norm_l2(a)
    out[i, 2] = adjit.norm_huber(a)
    out[i, 3] = adjit.norm_huber(a, d[i])
    out[i, 4] = adjit.norm_pseudo_huber(a)
    out[i, 5] = adjit.norm_pseudo_huber(a, d[i])
    vecs[i, 0] = adjit.smooth_normalize(a)
    vecs[i, 1] = adjit.smooth_normalize(a, d[i])
    vecs[i, 2] = adjit.get_diag(m[i])
    vecs[i, 3] = adjit.skew(a) * vecs[i, 2]
    mats[i, 0] = adjit.skew(a)
    mats[i, 1] = adjit.matrix_from_rows(a, 2.0 * a, vecs[i, 2])
    mats[i, 2] = adjit.matrix_from_cols(a, 2.0 * a, vecs[i, 2])
    idx[i, 0] = adjit.argmin(a)
    idx[i, 1] = adjit.argmax(a)
    idx[i, 2] = adjit.argmax(adjit.vec3i(3, 7, 7))


def _huber(v, delta):
    n = np.linalg.norm(v, axis=-1)
    return np.where(n <= delta, 0.5 * n * n, delta * (n - 0.5 * delta))


def _pseudo_huber(v, delta):
    return delta * np.sqrt(1.0 + np.sum(v * v, axis=-1) / (delta * delta))


def test_norms_and_assembly_against_numpy():
    rng = np.random.default_rng(5)
    n = 64
    v = rng.uniform(-2, 2, (n, 3))
    v[0] = 0.0                       # the zero vector
    v[1] = [0.5, -0.2, 0.1]          # inside the Huber threshold
    m = rng.uniform(-1, 1, (n, 3, 3))
    d = rng.uniform(0.5, 2.0, n)
    out = adjit.zeros((n, 6), dtype=adjit.float64)
    vecs = adjit.zeros((n, 4), dtype=adjit.vec3d)
    mats = adjit.zeros((n, 3), dtype=adjit.mat33d)
    idx = adjit.zeros((n, 3), dtype=int)
    adjit.launch(norms_and_assembly, dim=n, inputs=[adjit.array(v, dtype=adjit.vec3d),
                                                    adjit.array(m, dtype=adjit.mat33d),
                                                    adjit.array(d, dtype=adjit.float64)],
                 outputs=[out, vecs, mats, idx])
    o = out.numpy()
    np.testing.assert_allclose(o[:, 0], np.abs(v).sum(-1), **F64)
    np.testing.assert_allclose(o[:, 1], np.linalg.norm(v, axis=-1), **F64)
    np.testing.assert_allclose(o[:, 2], _huber(v, 1.0), **F64)
    np.testing.assert_allclose(o[:, 3], _huber(v, d), **F64)
    np.testing.assert_allclose(o[:, 4], _pseudo_huber(v, 1.0), **F64)
    np.testing.assert_allclose(o[:, 5], _pseudo_huber(v, d), **F64)
    vs = vecs.numpy()
    np.testing.assert_allclose(vs[:, 0], v / _pseudo_huber(v, 1.0)[:, None], **F64)
    np.testing.assert_allclose(vs[:, 1], v / _pseudo_huber(v, d)[:, None], **F64)
    diag = np.diagonal(m, axis1=1, axis2=2)
    np.testing.assert_allclose(vs[:, 2], diag, **F64)
    np.testing.assert_allclose(vs[:, 3], np.cross(v, diag), **F64)  # skew(a) * b == cross(a, b)
    ms = mats.numpy()
    np.testing.assert_allclose(ms[:, 1], np.stack([v, 2 * v, diag], axis=1), **F64)
    np.testing.assert_allclose(ms[:, 2], np.stack([v, 2 * v, diag], axis=2), **F64)
    np.testing.assert_allclose(ms[:, 0] + np.swapaxes(ms[:, 0], 1, 2), 0.0)  # skew-symmetric
    ix = idx.numpy()
    np.testing.assert_array_equal(ix[1:, 0], np.argmin(v[1:], axis=-1))
    np.testing.assert_array_equal(ix[1:, 1], np.argmax(v[1:], axis=-1))
    np.testing.assert_array_equal(ix[0, :2], [0, 0])  # ties: the first
    np.testing.assert_array_equal(ix[:, 2], 1)


@adjit.kernel
def norms_loss(v: adjit.array(dtype=adjit.vec3d), m: adjit.array(dtype=adjit.mat33d),
               d: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    a = v[i]
    w = adjit.smooth_normalize(a, d[i]) + adjit.get_diag(m[i]) + adjit.skew(a) * adjit.get_diag(m[i])
    r = adjit.matrix_from_rows(a, w, a * d[i]) * adjit.matrix_from_cols(w, a, w)
    y[i] = (adjit.norm_l1(a) + adjit.norm_l2(w) + adjit.norm_huber(a, d[i]) + adjit.norm_huber(w)
            + adjit.norm_pseudo_huber(a, d[i]) + adjit.trace(r))


def test_gradients_of_norms_and_assembly_match_finite_differences():
    """Components kept away from 0 (norm_l1's kink) and |a| from delta
    (norm_huber's second-derivative jump)."""
    from adjit.testing import check_gradients
    rng = np.random.default_rng(6)
    n = 16
    v = rng.uniform(0.2, 1.0, (n, 3)) * rng.choice([-1.0, 1.0], (n, 3))
    d = np.linalg.norm(v, axis=-1) * rng.choice([0.6, 1.5], n)
    va = adjit.array(v, dtype=adjit.vec3d, requires_grad=True)
    ma = adjit.array(rng.uniform(-1, 1, (n, 3, 3)), dtype=adjit.mat33d, requires_grad=True)
    da = adjit.array(d, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros(n, dtype=adjit.float64, requires_grad=True)
    check_gradients(norms_loss, n, [va, ma, da], [y])


# --- quaternions and rotation matrices -----------------------------------------------------------

@adjit.kernel
def quat_matrices(q: adjit.array(dtype=adjit.quatd), v: adjit.array(dtype=adjit.vec3d),
                  m: adjit.array(dtype=adjit.mat33d), mats: adjit.array(dtype=adjit.mat33d),
                  quats: adjit.array(dtype=adjit.quatd), vecs: adjit.array2d(dtype=adjit.vec3d)):
    i = adjit.tid()
    mats[i] = adjit.quat_to_matrix(q[i])
    quats[i] = adjit.quat_from_matrix(m[i])
    vecs[i, 0] = adjit.quat_rotate_inv(q[i], v[i])
    vecs[i, 1] = adjit.quat_rotate(q[i], adjit.quat_rotate_inv(q[i], v[i]))
    vecs[i, 2] = adjit.quat_to_matrix(q[i]) * v[i]


def _rotation(q):
    """The rotation matrix of unit quaternions q = (x, y, z, w), float64."""
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def test_quaternion_matrices_against_numpy():
    rng = np.random.default_rng(12)
    n = 64
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    # Rotations of every Shepperd branch: trace > 0, and each diagonal entry largest.
    q[:4] = [[0.1, 0.2, 0.1, 0.97], [0.97, 0.1, 0.2, 0.1], [0.1, 0.97, 0.2, 0.1], [0.2, 0.1, 0.97, 0.1]]
    q[:4] /= np.linalg.norm(q[:4], axis=1, keepdims=True)
    v = rng.standard_normal((n, 3))
    rot = _rotation(q)
    mats = adjit.zeros(n, dtype=adjit.mat33d)
    quats = adjit.zeros(n, dtype=adjit.quatd)
    vecs = adjit.zeros((n, 3), dtype=adjit.vec3d)
    adjit.launch(quat_matrices, dim=n, inputs=[adjit.array(q, dtype=adjit.quatd), adjit.array(v, dtype=adjit.vec3d),
                                               adjit.array(rot, dtype=adjit.mat33d)],
                 outputs=[mats, quats, vecs])
    np.testing.assert_allclose(mats.numpy(), rot, rtol=1e-12, atol=1e-12)
    got = quats.numpy()
    # q and -q are one rotation: w > 0 where the trace is positive, else the
    # component of the largest diagonal entry is positive.
    diag = np.diagonal(rot, axis1=1, axis2=2)
    positive = np.where(diag.sum(1) > 0, 3, np.argmax(diag, axis=1))
    sign = np.sign(q[np.arange(n), positive])
    np.testing.assert_allclose(got, q * sign[:, None], rtol=1e-12, atol=1e-12)
    vs = vecs.numpy()
    np.testing.assert_allclose(vs[:, 0], np.einsum("nji,nj->ni", rot, v), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vs[:, 1], v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vs[:, 2], np.einsum("nij,nj->ni", rot, v), rtol=1e-12, atol=1e-12)


@adjit.kernel
def quat_matrices_loss(q: adjit.array(dtype=adjit.quatd), v: adjit.array(dtype=adjit.vec3d),
                       m: adjit.array(dtype=adjit.mat33d), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    r = adjit.quat_to_matrix(q[i])
    p = adjit.quat_from_matrix(m[i])
    w = adjit.quat_rotate_inv(q[i], v[i]) + r * v[i]
    y[i] = adjit.dot(w, w) + adjit.dot(p, adjit.quatd(0.3, -0.2, 0.5, 0.7)) + adjit.trace(r)


def test_gradients_of_quaternion_matrices_match_finite_differences():
    """Through every Shepperd branch (matrices near the four kinds of rotation)."""
    from adjit.testing import check_gradients
    rng = np.random.default_rng(13)
    q = np.array([[0.1, 0.2, 0.1, 0.97], [0.97, 0.1, 0.2, 0.1], [0.1, 0.97, 0.2, 0.1], [0.2, 0.1, 0.97, 0.1]] * 2)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    m = _rotation(q) + rng.uniform(-0.01, 0.01, (8, 3, 3))
    qa = adjit.array(q, dtype=adjit.quatd, requires_grad=True)
    va = adjit.array(rng.standard_normal((8, 3)), dtype=adjit.vec3d, requires_grad=True)
    ma = adjit.array(m, dtype=adjit.mat33d, requires_grad=True)
    y = adjit.zeros(8, dtype=adjit.float64, requires_grad=True)
    check_gradients(quat_matrices_loss, 8, [qa, va, ma], [y])
