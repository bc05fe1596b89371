"""Slices in kernels (issue 12), as Warp 1.19's: ``v[a:b:c]`` of vectors,
quaternions, transforms and spatial vectors gives a vector, ``m[a:b]`` /
``m[a:b, c:d]`` a matrix and ``m[i, a:b]`` / ``m[a:b, j]`` a vector, with
constant bounds under Python's rules (negative, clamped, reversed). Reads
against numpy; slice assignment and ``+=`` / ``-=`` / ``*=`` on locals and
array elements (atomic adds there); starred slices in calls; reverse (Tape)
and forward (jvp) gradients against float64 central differences; and the
located errors: selections no kernel takes (0 or 1 components, one-row
matrices), runtime bounds, zero steps, mismatched values, array slices.
"""
import inspect

import numpy as np
import pytest

import adjit
from adjit.errors import KernelSyntaxError, KernelTypeError, KernelValueError, WarpCodegenValueError

rng = np.random.default_rng(1219)

V8 = adjit.types.vector(8, adjit.float64)
M24 = adjit.types.matrix((2, 4), adjit.float64)
M42 = adjit.types.matrix((4, 2), adjit.float64)
M32 = adjit.types.matrix((3, 2), adjit.float64)
M23 = adjit.types.matrix((2, 3), adjit.float64)
K = 3  # a module constant as a slice bound


# --- reads against numpy ---------------------------------------------------------------------------------

@adjit.kernel
def vector_reads(a: adjit.array(dtype=V8), o2: adjit.array(dtype=adjit.vec2d, ndim=2),
                 o3: adjit.array(dtype=adjit.vec3d, ndim=2), o8: adjit.array(dtype=V8, ndim=2)):
    i = adjit.tid()
    v = a[i]
    o3[i, 0] = v[2:5]
    o3[i, 1] = v[-3:]
    o3[i, 2] = v[:3]
    o3[i, 3] = v[::3]
    o3[i, 4] = v[::-3]
    o3[i, 5] = v[1:7][::2]
    o3[i, 6] = a[i][K:K + 3]  # an array element sliced
    o2[i, 0] = v[5:1:-2]
    o2[i, 1] = v[-123:2]
    o2[i, 2] = v[1::-1]
    o2[i, 3] = v[6:123]
    o2[i, 4] = v[adjit.static(K + 1):adjit.static(K + 3)]
    o8[i, 0] = v[:]
    o8[i, 1] = v[::-1]


def test_vector_reads_match_numpy():
    n = 3
    x = rng.standard_normal((n, 8))
    o2 = adjit.zeros((n, 5), dtype=adjit.vec2d)
    o3 = adjit.zeros((n, 7), dtype=adjit.vec3d)
    o8 = adjit.zeros((n, 2), dtype=V8)
    adjit.launch(vector_reads, n, inputs=[adjit.array(x, dtype=V8)], outputs=[o2, o3, o8])
    want3 = [x[:, 2:5], x[:, -3:], x[:, :3], x[:, ::3], x[:, ::-3], x[:, 1:7][:, ::2], x[:, K:K + 3]]
    want2 = [x[:, 5:1:-2], x[:, -123:2], x[:, 1::-1], x[:, 6:123], x[:, K + 1:K + 3]]
    np.testing.assert_array_equal(o3.numpy(), np.stack(want3, axis=1))
    np.testing.assert_array_equal(o2.numpy(), np.stack(want2, axis=1))
    np.testing.assert_array_equal(o8.numpy(), np.stack([x, x[:, ::-1]], axis=1))


@adjit.kernel
def quat_transform_reads(q: adjit.array(dtype=adjit.quat), t: adjit.array(dtype=adjit.transform),
                         s: adjit.array(dtype=adjit.spatial_vector), o3: adjit.array(dtype=adjit.vec3, ndim=2),
                         o4: adjit.array(dtype=adjit.vec4, ndim=2), ok: adjit.array(dtype=int)):
    i = adjit.tid()
    o3[i, 0] = q[i][1:]
    o3[i, 1] = t[i][:3]
    o3[i, 2] = s[i][3:]
    o3[i, 3] = t[i][::-3]  # components 6, 3, 0
    o4[i, 0] = q[i][::-1]
    o4[i, 1] = t[i][3:]
    o4[i, 2] = t[i][1:-2]
    # A quaternion's slice is a plain vector (compares with a vec4, not a quat).
    ok[i] = int(q[i][:] == adjit.vec4(q[i][0], q[i][1], q[i][2], q[i][3]))


def test_quat_transform_spatial_reads_are_vectors():
    n = 2
    q, t, s = (rng.standard_normal((n, k)).astype(np.float32) for k in (4, 7, 6))
    o3 = adjit.zeros((n, 4), dtype=adjit.vec3)
    o4 = adjit.zeros((n, 3), dtype=adjit.vec4)
    ok = adjit.zeros(n, dtype=int)
    inputs = [adjit.array(q, dtype=adjit.quat), adjit.array(t, dtype=adjit.transform),
              adjit.array(s, dtype=adjit.spatial_vector)]
    adjit.launch(quat_transform_reads, n, inputs=inputs, outputs=[o3, o4, ok])
    np.testing.assert_array_equal(o3.numpy(), np.stack([q[:, 1:], t[:, :3], s[:, 3:], t[:, ::-3]], axis=1))
    np.testing.assert_array_equal(o4.numpy(), np.stack([q[:, ::-1], t[:, 3:], t[:, 1:-2]], axis=1))
    np.testing.assert_array_equal(ok.numpy(), 1)


@adjit.kernel
def matrix_reads(a: adjit.array(dtype=adjit.mat44d), rows: adjit.array(dtype=M24),
                 cols: adjit.array(dtype=M42), block: adjit.array(dtype=M32),
                 whole: adjit.array(dtype=adjit.mat44d), v3: adjit.array(dtype=adjit.vec3d, ndim=2),
                 v2: adjit.array(dtype=adjit.vec2d), k: adjit.array(dtype=int)):
    i = adjit.tid()
    m = a[i]
    rows[i] = m[1:3]
    cols[i] = m[:, 1:3]
    block[i] = m[1:, ::-2]
    whole[i] = m[::-1, ::-1]
    v3[i, 0] = m[2, 1:]
    v3[i, 1] = m[1:, 0]
    v3[i, 2] = m[::-1, 3][:3]
    v2[i] = m[k[i], 1:3]  # a runtime row index beside a slice


def test_matrix_reads_match_numpy():
    n = 4
    x = rng.standard_normal((n, 4, 4))
    k = np.array([0, 3, 2, 1], dtype=np.int32)
    outs = [adjit.zeros(n, dtype=t) for t in (M24, M42, M32, adjit.mat44d)]
    v3 = adjit.zeros((n, 3), dtype=adjit.vec3d)
    v2 = adjit.zeros(n, dtype=adjit.vec2d)
    adjit.launch(matrix_reads, n, inputs=[adjit.array(x, dtype=adjit.mat44d)], outputs=[*outs, v3, v2, adjit.array(k)])
    for o, want in zip(outs, [x[:, 1:3], x[:, :, 1:3], x[:, 1:, ::-2], x[:, ::-1, ::-1]]):
        np.testing.assert_array_equal(o.numpy(), want)
    np.testing.assert_array_equal(v3.numpy(), np.stack([x[:, 2, 1:], x[:, 1:, 0], x[:, ::-1, 3][:, :3]], axis=1))
    np.testing.assert_array_equal(v2.numpy(), x[np.arange(n), k, 1:3])


@adjit.kernel
def starred_slices(v: adjit.array(dtype=V8), m: adjit.array(dtype=adjit.mat33d), arr: adjit.array(dtype=float),
                   o3: adjit.array(dtype=adjit.vec3d, ndim=2), o2: adjit.array(dtype=adjit.vec2d),
                   om: adjit.array(dtype=M23), of: adjit.array(dtype=float), mt: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    o3[i, 0] = adjit.vec3d(*v[i][5:])
    o3[i, 1] = adjit.vec3d(*v[i][0:1], *v[i][3:5])  # one component unpacks too
    o2[i] = adjit.vec2d(*m[i][1, 1:])
    om[i] = adjit.matrix_from_rows(*m[i][::2])  # a matrix slice unpacks its rows
    mt[i] = adjit.matrix_from_cols(*m[i])  # *m unpacks every row
    of[i] = adjit.max(*arr[1:5:2])


def test_starred_slices_unpack():
    n = 2
    v = rng.standard_normal((n, 8))
    m = rng.standard_normal((n, 3, 3))
    arr = rng.standard_normal(8).astype(np.float32)
    o3 = adjit.zeros((n, 2), dtype=adjit.vec3d)
    o2 = adjit.zeros(n, dtype=adjit.vec2d)
    om = adjit.zeros(n, dtype=M23)
    of = adjit.zeros(n, dtype=float)
    mt = adjit.zeros(n, dtype=adjit.mat33d)
    adjit.launch(starred_slices, n, inputs=[adjit.array(v, dtype=V8), adjit.array(m, dtype=adjit.mat33d),
                                            adjit.array(arr)], outputs=[o3, o2, om, of, mt])
    np.testing.assert_array_equal(o3.numpy(), np.stack([v[:, 5:], v[:, [0, 3, 4]]], axis=1))
    np.testing.assert_array_equal(o2.numpy(), m[:, 1, 1:])
    np.testing.assert_array_equal(om.numpy(), m[:, ::2])
    np.testing.assert_array_equal(of.numpy(), np.full(n, arr[1:5:2].max()))
    np.testing.assert_array_equal(mt.numpy(), m.transpose(0, 2, 1))


# --- assignment, augmented assignment, and their gradients ------------------------------------------------

@adjit.kernel
def vector_writes(x: adjit.array(dtype=V8), y: adjit.array(dtype=adjit.vec3d), z: adjit.array(dtype=adjit.vec4d),
                  out: adjit.array(dtype=V8), e: adjit.array(dtype=adjit.vec4d)):
    i = adjit.tid()
    w = x[i]
    w[1:4] = y[i]
    w[::-2] += z[i]  # components 7, 5, 3, 1
    w[:2] *= 3.0
    w[6:7] *= w[0]  # one component scaled: component by component
    w[-3:] -= y[i][::-1]
    w[::-1] = w  # the value is read whole before the writes
    w[1:6][::2] += y[i]  # a slice of a slice: components 1, 3, 5
    out[i] = w
    # Array elements: component stores, and += / -= as atomic adds.
    e[i][1:3] = y[i][:2] * y[i][2]
    e[i][::3] += z[i][2:]
    e[i][:2] -= z[i][:2]


def vector_writes_reference(x, y, z, e0):
    w = x.copy()
    w[:, 1:4] = y
    w[:, ::-2] += z
    w[:, :2] *= 3.0
    w[:, 6:7] *= w[:, 0:1]
    w[:, -3:] -= y[:, ::-1]
    w = w[:, ::-1].copy()
    w[:, 1:6:2] += y
    e = e0.copy()
    e[:, 1:3] = y[:, :2] * y[:, 2:3]
    e[:, ::3] += z[:, 2:]
    e[:, :2] -= z[:, :2]
    return w, e


def _vector_write_inputs(n):
    return rng.standard_normal((n, 8)), rng.standard_normal((n, 3)), rng.standard_normal((n, 4)), \
        rng.standard_normal((n, 4))


def _run_vector_writes(x, y, z, e0, requires_grad=False):
    arrays = [adjit.array(x, dtype=V8, requires_grad=requires_grad),
              adjit.array(y, dtype=adjit.vec3d, requires_grad=requires_grad),
              adjit.array(z, dtype=adjit.vec4d, requires_grad=requires_grad)]
    out = adjit.zeros(len(x), dtype=V8, requires_grad=requires_grad)
    e = adjit.array(e0, dtype=adjit.vec4d, requires_grad=requires_grad)
    return arrays, out, e


def test_vector_slice_writes_match_numpy():
    x, y, z, e0 = _vector_write_inputs(3)
    arrays, out, e = _run_vector_writes(x, y, z, e0)
    adjit.launch(vector_writes, 3, inputs=arrays, outputs=[out, e])
    want_w, want_e = vector_writes_reference(x, y, z, e0)
    np.testing.assert_allclose(out.numpy(), want_w, rtol=1e-14)
    np.testing.assert_allclose(e.numpy(), want_e, rtol=1e-14)


def _loss_weights(n):
    return rng.standard_normal((n, 8)), rng.standard_normal((n, 4))


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_vector_slice_writes_reverse_gradients():
    n = 2
    x, y, z, e0 = _vector_write_inputs(n)
    gw, ge = _loss_weights(n)
    arrays, out, e = _run_vector_writes(x, y, z, e0, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(vector_writes, n, inputs=arrays, outputs=[out, e])
    tape.backward(grads={out: adjit.array(gw, dtype=V8), e: adjit.array(ge, dtype=adjit.vec4d)})

    def loss(x_, y_, z_):
        w, ee = vector_writes_reference(x_, y_, z_, e0)
        return np.sum(w * gw) + np.sum(ee * ge)

    for k, (a, v) in enumerate(zip(arrays, (x, y, z))):
        def f(t, k=k):
            args = [x, y, z]
            args[k] = t
            return loss(*args)
        np.testing.assert_allclose(a.grad.numpy(), _numeric_grad(f, v), rtol=1e-6, atol=1e-8)


def test_vector_slice_writes_forward_gradients():
    n = 2
    x, y, z, e0 = _vector_write_inputs(n)
    dx, dy, dz = rng.standard_normal(x.shape), rng.standard_normal(y.shape), rng.standard_normal(z.shape)
    arrays, out, e = _run_vector_writes(x, y, z, e0)
    t_out, t_e = adjit.jvp(vector_writes, n, arrays, [dx, dy, dz], [out, e])
    eps = 1e-6
    plus = vector_writes_reference(x + eps * dx, y + eps * dy, z + eps * dz, e0)
    minus = vector_writes_reference(x - eps * dx, y - eps * dy, z - eps * dz, e0)
    np.testing.assert_allclose(t_out.numpy(), (plus[0] - minus[0]) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t_e.numpy(), (plus[1] - minus[1]) / (2 * eps), rtol=1e-6, atol=1e-8)


@adjit.kernel
def matrix_writes(a: adjit.array(dtype=adjit.mat44d), b: adjit.array(dtype=M24), y: adjit.array(dtype=adjit.vec3d),
                  k: adjit.array(dtype=int), out: adjit.array(dtype=adjit.mat44d),
                  e: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    m = a[i]
    m[1:3] = b[i]
    m[0, 1:] += y[i]
    m[1:, 3] -= y[i]
    m[:2, :2] *= 2.0
    m[2:, 2:] = m[:2, :2] * m[2:, :2]  # a matrix product; the right side is read before the write
    m[3, ::-2] = y[i][1:]
    m[k[i], :3:2] += y[i][:2]  # a runtime row beside a slice
    m[3:, 0] *= y[i][2]  # a one-component selection scaled
    out[i] = m
    e[i][1, :] = y[i]
    e[i][::2, 1:] += m[:2, :2]


def matrix_writes_reference(a, b, y, k, e0):
    m = a.copy()
    m[:, 1:3] = b
    m[:, 0, 1:] += y
    m[:, 1:, 3] -= y
    m[:, :2, :2] *= 2.0
    m[:, 2:, 2:] = m[:, :2, :2] @ m[:, 2:, :2]
    m[:, 3, ::-2] = y[:, 1:]
    m[np.arange(len(m)), k, :3:2] += y[:, :2]
    m[:, 3:, 0] *= y[:, 2:3]
    e = e0.copy()
    e[:, 1, :] = y
    e[:, ::2, 1:] += m[:, :2, :2]
    return m, e


def _matrix_write_inputs(n):
    return (rng.standard_normal((n, 4, 4)), rng.standard_normal((n, 2, 4)), rng.standard_normal((n, 3)),
            rng.integers(0, 4, n).astype(np.int32), rng.standard_normal((n, 3, 3)))


def _run_matrix_writes(a, b, y, k, e0, requires_grad=False):
    arrays = [adjit.array(a, dtype=adjit.mat44d, requires_grad=requires_grad),
              adjit.array(b, dtype=M24, requires_grad=requires_grad),
              adjit.array(y, dtype=adjit.vec3d, requires_grad=requires_grad), adjit.array(k)]
    out = adjit.zeros(len(a), dtype=adjit.mat44d, requires_grad=requires_grad)
    e = adjit.array(e0, dtype=adjit.mat33d, requires_grad=requires_grad)
    return arrays, out, e


def test_matrix_slice_writes_match_numpy():
    a, b, y, k, e0 = _matrix_write_inputs(4)
    arrays, out, e = _run_matrix_writes(a, b, y, k, e0)
    adjit.launch(matrix_writes, 4, inputs=arrays, outputs=[out, e])
    want_m, want_e = matrix_writes_reference(a, b, y, k, e0)
    np.testing.assert_allclose(out.numpy(), want_m, rtol=1e-14)
    np.testing.assert_allclose(e.numpy(), want_e, rtol=1e-14)


def test_matrix_slice_writes_reverse_and_forward_gradients():
    n = 3
    a, b, y, k, e0 = _matrix_write_inputs(n)
    gm, ge = rng.standard_normal((n, 4, 4)), rng.standard_normal((n, 3, 3))
    arrays, out, e = _run_matrix_writes(a, b, y, k, e0, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(matrix_writes, n, inputs=arrays, outputs=[out, e])
    tape.backward(grads={out: adjit.array(gm, dtype=adjit.mat44d), e: adjit.array(ge, dtype=adjit.mat33d)})

    def loss(*args):
        m, ee = matrix_writes_reference(*args, k, e0)
        return np.sum(m * gm) + np.sum(ee * ge)

    for j, (arr, v) in enumerate(zip(arrays, (a, b, y))):
        def f(t, j=j):
            args = [a, b, y]
            args[j] = t
            return loss(*args)
        np.testing.assert_allclose(arr.grad.numpy(), _numeric_grad(f, v), rtol=1e-6, atol=1e-8)

    da, db, dy = rng.standard_normal(a.shape), rng.standard_normal(b.shape), rng.standard_normal(y.shape)
    arrays, out, e = _run_matrix_writes(a, b, y, k, e0)
    t_out, t_e = adjit.jvp(matrix_writes, n, arrays, [da, db, dy], [out, e])
    eps = 1e-6
    plus = matrix_writes_reference(a + eps * da, b + eps * db, y + eps * dy, k, e0)
    minus = matrix_writes_reference(a - eps * da, b - eps * db, y - eps * dy, k, e0)
    np.testing.assert_allclose(t_out.numpy(), (plus[0] - minus[0]) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t_e.numpy(), (plus[1] - minus[1]) / (2 * eps), rtol=1e-6, atol=1e-8)


@adjit.kernel
def quat_transform_writes(x: adjit.array(dtype=adjit.vec2), q: adjit.array(dtype=adjit.quat),
                          t: adjit.array(dtype=adjit.transform)):
    # Warp's test_quat / test_spatial slicing kernels, on locals then stored.
    i = adjit.tid()
    a = q[i]
    a[:2] = x[i]
    a[1:-1] += x[i][:2]
    a[3:1:-1] -= x[i][0:]
    q[i] = a
    b = t[i]
    b[:2] = x[i]
    b[1:-4] += x[i][:2]
    b[3:1:-1] -= x[i][0:]
    b.p[1:] *= 2.0  # a slice of a transform's part
    t[i] = b


def test_quat_transform_slice_writes_and_gradients():
    x = adjit.ones(1, dtype=adjit.vec2, requires_grad=True)
    q = adjit.zeros(1, dtype=adjit.quat, requires_grad=True)
    t = adjit.zeros(1, dtype=adjit.transform, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(quat_transform_writes, 1, inputs=[x], outputs=[q, t])
    np.testing.assert_array_equal(q.numpy(), [[1.0, 2.0, 0.0, -1.0]])
    np.testing.assert_array_equal(t.numpy(), [[1.0, 4.0, 0.0, -1.0, 0.0, 0.0, 0.0]])
    tape.backward(grads={q: adjit.ones(1, dtype=adjit.quat), t: adjit.ones(1, dtype=adjit.transform)})
    # d(sum q)/dx = (1, 1) as in Warp's test; d(sum t)/dx: t0 = x0, t1 = 2 (x1 + x0), t3 = -x0.
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0 + 2.0, 1.0 + 2.0]])


# --- located errors ---------------------------------------------------------------------------------------

def _line_of(kernel, text):
    lines, first = inspect.getsourcelines(kernel.pyfunc)
    return first + next(k for k, line in enumerate(lines) if text in line)


@adjit.kernel
def empty_slice(a: adjit.array(dtype=adjit.vec4)):
    v = a[0]
    a[1] = adjit.vec4(v[3:1].x)


@adjit.kernel
def one_component_slice(a: adjit.array(dtype=adjit.vec4)):
    w = a[0][2:3]
    a[1] = adjit.vec4(w[0])


@adjit.kernel
def one_row_matrix_slice(m: adjit.array(dtype=adjit.mat33)):
    r = m[0][:1]
    m[1] = m[0]


@adjit.kernel
def runtime_bound(a: adjit.array(dtype=adjit.vec4), n: int):
    w = a[0][:n]
    a[1] = adjit.vec4(w[0])


@adjit.kernel
def float_bound(a: adjit.array(dtype=adjit.vec4)):
    w = a[0][1.0:3]
    a[1] = adjit.vec4(w[0])


@adjit.kernel
def zero_step(a: adjit.array(dtype=adjit.vec4)):
    w = a[0][::0]
    a[1] = adjit.vec4(w[0])


@adjit.kernel
def scalar_into_slice(a: adjit.array(dtype=adjit.vec4)):
    v = a[0]
    v[1:] = 5.0
    a[1] = v


@adjit.kernel
def short_vector_into_slice(a: adjit.array(dtype=adjit.vec4)):
    v = a[0]
    v[1:] = adjit.vec2(5.0, 6.0)
    a[1] = v


@adjit.kernel
def other_precision_into_slice(a: adjit.array(dtype=adjit.vec4)):
    v = a[0]
    v[1:] = adjit.vec3d(5.0, 6.0, 7.0)
    a[1] = v


@adjit.kernel
def one_component_add(a: adjit.array(dtype=adjit.vec4)):
    v = a[0]
    v[2:3] += 1.0
    a[1] = v


@adjit.kernel
def too_many_indices(a: adjit.array(dtype=adjit.vec4)):
    w = a[0][1:3, 0]
    a[1] = adjit.vec4(w[0])


@adjit.kernel
def array_slice(a: adjit.array(dtype=float)):
    b = a[1:3]
    a[0] = b[0]


@adjit.kernel
def starred_array_no_stop(a: adjit.array(dtype=float)):
    v = adjit.vec3(*a[0:])
    a[0] = v[0]


@adjit.kernel
def starred_array_negative(a: adjit.array(dtype=float)):
    v = adjit.vec3(*a[:-3])
    a[0] = v[0]


VEC4_ERRORS = [
    (empty_slice, "v[3:1]", KernelTypeError, r"'v\[3:1\]' selects 0 components of vec4"),
    (one_component_slice, "a[0][2:3]", KernelTypeError, r"selects 1 component of vec4: adjit's kernels take vectors"),
    (runtime_bound, "a[0][:n]", KernelValueError, "Slice component must be a compile-time constant integer"),
    (float_bound, "a[0][1.0:3]", KernelValueError, "Slice component must be a compile-time constant integer"),
    (zero_step, "a[0][::0]", KernelValueError, "slice step cannot be zero"),
    (scalar_into_slice, "v[1:] = 5.0", KernelTypeError, r"takes a vec3 .*got a float32 value"),
    (short_vector_into_slice, "v[1:] = adjit.vec2", KernelTypeError, r"takes a vec3 .*got a vec2 value"),
    (other_precision_into_slice, "v[1:] = adjit.vec3d", KernelTypeError, r"takes a vec3 .*got a vec3d value"),
    (one_component_add, "v[2:3] += 1.0", KernelTypeError, "selects 1 component"),
    (too_many_indices, "a[0][1:3, 0]", KernelTypeError, "takes at most 1 component indices"),
]


@pytest.mark.parametrize("kernel, text, cls, pattern", VEC4_ERRORS, ids=[c[0].pyfunc.__name__ for c in VEC4_ERRORS])
def test_vector_slice_errors_are_located(kernel, text, cls, pattern):
    args = [adjit.zeros(2, dtype=adjit.vec4)] + ([2] if kernel is runtime_bound else [])
    with pytest.raises(cls, match=pattern) as e:
        adjit.launch(kernel, 1, inputs=args)
    assert e.value.filename == __file__
    assert e.value.lineno == _line_of(kernel, text)
    assert f"{__file__}:{e.value.lineno}:" in str(e.value)
    # Bad bounds and steps are Warp's WarpCodegenValueError too, and still adjit's KernelTypeError.
    assert isinstance(e.value, KernelTypeError)
    assert isinstance(e.value, WarpCodegenValueError) == (cls is KernelValueError)


@pytest.mark.parametrize("kernel, text, cls, pattern, args", [
    (one_row_matrix_slice, "m[0][:1]", KernelTypeError, r"selects a 1x3 block of mat33",
     lambda: [adjit.zeros(2, dtype=adjit.mat33)]),
    (array_slice, "a[1:3]", KernelSyntaxError, "arrays and local arrays are not sliced", lambda: [adjit.zeros(4)]),
    (starred_array_no_stop, "a[0:]", KernelValueError, "requires explicit upper bound", lambda: [adjit.zeros(4)]),
    (starred_array_negative, "a[:-3]", KernelValueError, "cannot be negative for arrays", lambda: [adjit.zeros(4)]),
], ids=["one_row_matrix", "array_slice", "starred_array_no_stop", "starred_array_negative"])
def test_other_slice_errors_are_located(kernel, text, cls, pattern, args):
    with pytest.raises(cls, match=pattern) as e:
        adjit.launch(kernel, 1, inputs=args())
    assert e.value.filename == __file__
    assert e.value.lineno == _line_of(kernel, text)


# --- negative constant indices (Warp counts them from the end) ---------------------------------------------

@adjit.kernel
def negative_indices(a: adjit.array(dtype=adjit.mat33d), v: adjit.array(dtype=adjit.vec4d),
                     out: adjit.array(dtype=adjit.vec4d)):
    i = adjit.tid()
    m = a[i]
    m[-1, -2] = 7.0
    w = v[i]
    w[-1] *= 2.0
    out[i] = adjit.vec4d(m[-1][-2], m[-3, -1], w[-1], a[i][-2, 0])
    v[i][-4] = m[2, 1]  # an array element's component, stored
    v[i][-2] += 1.0  # and atomically added to


def test_negative_constant_indices_count_from_the_end():
    n = 2
    a = rng.standard_normal((n, 3, 3))
    v = rng.standard_normal((n, 4))
    va = adjit.array(v, dtype=adjit.vec4d)
    out = adjit.zeros(n, dtype=adjit.vec4d)
    adjit.launch(negative_indices, n, inputs=[adjit.array(a, dtype=adjit.mat33d), va], outputs=[out])
    want = np.stack([np.full(n, 7.0), a[:, 0, 2], 2.0 * v[:, 3], a[:, 1, 0]], axis=1)
    np.testing.assert_array_equal(out.numpy(), want)
    v[:, 0] = 7.0
    v[:, 2] += 1.0
    np.testing.assert_array_equal(va.numpy(), v)


@adjit.kernel
def negative_index_out_of_range(a: adjit.array(dtype=adjit.vec4)):
    a[0] = adjit.vec4(a[1][-5])


def test_negative_constant_index_out_of_range_is_located():
    with pytest.raises(KernelTypeError, match=r"index -5 is out of range for vec4") as e:
        adjit.launch(negative_index_out_of_range, 1, inputs=[adjit.zeros(2, dtype=adjit.vec4)])
    assert e.value.lineno == _line_of(negative_index_out_of_range, "a[1][-5]")
