"""Every builtin of adjit.builtin_registry() against numpy (float64 references).

Kernels compute many builtins at once (one compile per signature family);
each builtin is then checked by its own parametrized test.
"""
import numpy as np
import pytest

import adjit

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
}
UNARY_NAMES = list(UNARY)


def _unary_inputs(dtype, comps=()):
    rng = np.random.default_rng(0)
    rows = []
    for name in UNARY_NAMES:
        lo, hi = UNARY[name][1]
        x = rng.uniform(lo, hi, (N, *comps))
        if name in ("floor", "ceil"):
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


# --- registry coverage ----------------------------------------------------------------------------------

TESTED = set(UNARY) | {"pow", "atan2", "min", "max", "abs", "sign", "clamp", "where", "select",
                       "dot", "length", "length_sq", "normalize", "cross",
                       "trace", "determinant", "transpose", "inverse", "diag", "outer"}


def test_every_registered_builtin_has_a_numpy_test():
    missing = sorted(set(adjit.builtin_registry()) - TESTED)
    assert not missing, f"builtins without a test in test_builtins.py: {missing}"


def test_registry_entries_are_documented_and_exported():
    for name, entry in adjit.builtin_registry().items():
        assert entry.name == name and entry.doc
        assert getattr(adjit, name) is entry  # adjit.<name> is the builtin
        with pytest.raises(adjit.AdjitError):
            entry(1.0)  # builtins only run inside kernels
