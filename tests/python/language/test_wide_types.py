"""Vectors and matrices beyond 4 components (Warp's vec6 / mat66, the
spatial types' shapes) through wp.types.vector / wp.types.matrix, and == / !=
on vectors and matrices."""
import numpy as np
import pytest

import adjit as wp

vec6 = wp.types.vector(length=6, dtype=wp.float64)
mat66 = wp.types.matrix(shape=(6, 6), dtype=wp.float64)
vec6f = wp.types.vector(length=6, dtype=wp.float32)


@wp.kernel
def spatial_step(m: wp.array(dtype=mat66), v: wp.array(dtype=vec6), s: float,
                 out: wp.array(dtype=vec6), energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    w = m[i] * v[i] + v[i] * wp.float64(s)
    out[i] = w
    energy[i] = wp.dot(w, w) + wp.length(v[i]) + wp.trace(m[i] * wp.transpose(m[i]))


def test_six_vectors_and_six_by_six_matrices_forward():
    rng = np.random.default_rng(2)
    n = 32
    m = rng.standard_normal((n, 6, 6))
    v = rng.standard_normal((n, 6))
    out = wp.zeros(n, dtype=vec6)
    energy = wp.zeros(n, dtype=wp.float64)
    wp.launch(spatial_step, dim=n, inputs=[wp.array(m, dtype=mat66), wp.array(v, dtype=vec6), 0.5],
              outputs=[out, energy])
    w = np.einsum("nij,nj->ni", m, v) + 0.5 * v
    # (float64 sums of terms of magnitude ~10: absolute rounding ~1e-14)
    np.testing.assert_allclose(out.numpy(), w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(energy.numpy(), (w * w).sum(1) + np.linalg.norm(v, axis=1)
                               + np.einsum("nij,nij->n", m, m), rtol=1e-13, atol=1e-13)


def test_six_vectors_and_six_by_six_matrices_gradients():
    from adjit.testing import check_gradients
    rng = np.random.default_rng(3)
    n = 8
    m = wp.array(rng.standard_normal((n, 6, 6)), dtype=mat66, requires_grad=True)
    v = wp.array(rng.standard_normal((n, 6)), dtype=vec6, requires_grad=True)
    out = wp.zeros(n, dtype=vec6, requires_grad=True)
    energy = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    check_gradients(spatial_step, n, [m, v, 0.5], [out, energy])


@wp.kernel
def compare(a: wp.array(dtype=vec6f), b: wp.array(dtype=vec6f), ma: wp.array(dtype=wp.mat33),
            mb: wp.array(dtype=wp.mat33), flags: wp.array2d(dtype=int)):
    i = wp.tid()
    flags[i, 0] = int(a[i] == b[i])
    flags[i, 1] = int(a[i] != b[i])
    flags[i, 2] = int(ma[i] == mb[i])
    flags[i, 3] = int(ma[i] != mb[i])
    flags[i, 4] = int(wp.vec3i(1, 2, 3) == wp.vec3i(1, 2, 3))


def test_vector_and_matrix_equality():
    a = np.zeros((4, 6), np.float32)
    b = a.copy()
    b[1, 5] = 1.0          # one component differs
    a[2, 0] = b[2, 0] = np.nan  # NaN equals nothing
    b[3] = -0.0            # -0 == 0
    ma = np.zeros((4, 3, 3), np.float32)
    mb = ma.copy()
    mb[0, 2, 2] = 1.0
    flags = wp.zeros((4, 5), dtype=int)
    wp.launch(compare, dim=4, inputs=[wp.array(a, dtype=vec6f), wp.array(b, dtype=vec6f),
                                      wp.array(ma, dtype=wp.mat33), wp.array(mb, dtype=wp.mat33)],
              outputs=[flags])
    f = flags.numpy()
    np.testing.assert_array_equal(f[:, 0], [1, 0, 0, 1])
    np.testing.assert_array_equal(f[:, 1], [0, 1, 1, 0])
    np.testing.assert_array_equal(f[:, 2], [0, 1, 1, 1])
    np.testing.assert_array_equal(f[:, 3], [1, 0, 0, 0])
    np.testing.assert_array_equal(f[:, 4], 1)


vec10 = wp.types.vector(length=10, dtype=wp.float64)
mat10x3 = wp.types.matrix(shape=(10, 3), dtype=wp.float64)


@wp.kernel
def long_types(m: wp.array(dtype=mat10x3), v: wp.array(dtype=vec10), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    w = wp.transpose(m[i]) * v[i]  # a 3-vector
    u = v[i] * v[i][3]
    out[i] = wp.dot(w, w) + wp.dot(u, v[i]) + m[i][9, 2]


def test_vectors_and_matrices_up_to_64_scalars_with_gradients():
    rng = np.random.default_rng(5)
    n = 4
    m, v = rng.standard_normal((n, 10, 3)), rng.standard_normal((n, 10))
    ma, va = wp.array(m, dtype=mat10x3, requires_grad=True), wp.array(v, dtype=vec10, requires_grad=True)
    out = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(long_types, dim=n, inputs=[ma, va], outputs=[out])

    def f(m, v):
        w = np.einsum("nij,ni->nj", m, v)
        return (w * w).sum(1) + v[:, 3] * (v * v).sum(1) + m[:, 9, 2]
    np.testing.assert_allclose(out.numpy(), f(m, v), rtol=1e-12)
    tape.backward(grads={out: wp.array(np.ones(n))})
    h = 1e-6
    for arr, grad, other in ((m, ma.grad.numpy(), "m"), (v, va.grad.numpy(), "v")):
        fd = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += h
            minus[idx] -= h
            args_p = (plus, v) if other == "m" else (m, plus)
            args_m = (minus, v) if other == "m" else (m, minus)
            fd[idx] = (f(*args_p) - f(*args_m))[idx[0]] / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_host_only_vector_and_matrix_types():
    # Warp's vector(0) and vector(1) (what slicing can make) and types beyond
    # 64 scalars exist on the host; a kernel using one is a located error.
    vec0, vec1 = wp.types.vector(0, float), wp.types.vector(length=1, dtype=float)
    assert (vec0.length, vec1.length) == (0, 1)
    big = wp.types.matrix(shape=(9, 8), dtype=float)
    with pytest.raises(TypeError, match="vector length must be an int >= 0"):
        wp.types.vector(length=-1, dtype=float)
    with pytest.raises(TypeError, match="matrix shape must be two ints >= 1"):
        wp.types.matrix(shape=(0, 2), dtype=float)

    @wp.kernel
    def uses_vec1(a: wp.array(dtype=float)):
        v = vec1(a[0])
        a[0] = v[0]

    with pytest.raises(wp.KernelTypeError, match=r"test_wide_types.py:\d+.*cannot be used in kernels: adjit's "
                                                 r"kernels take vectors of 2 to 64 scalars"):
        wp.launch(uses_vec1, dim=1, inputs=[wp.zeros(1)])

    @wp.kernel
    def takes_big(a: wp.array(dtype=big)):
        pass

    with pytest.raises(wp.KernelTypeError, match="cannot be used in kernels: adjit's kernels take matrices"):
        wp.launch(takes_big, dim=1, inputs=[wp.zeros(1, dtype=big)])


def test_ordering_comparisons_are_refused():
    @wp.kernel
    def less(a: wp.array(dtype=wp.vec3), flags: wp.array(dtype=int)):
        i = wp.tid()
        flags[i] = int(a[i] < a[i])

    with pytest.raises(wp.KernelTypeError, match="take == and != only"):
        wp.launch(less, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=int)])


@wp.kernel
def spatial(w: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.spatial_vectord),
            out: wp.array2d(dtype=wp.spatial_vectord), parts: wp.array2d(dtype=wp.vec3d),
            dots: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = wp.spatial_vectord(w[i], v[i])
    out[i, 0] = a
    out[i, 1] = wp.spatial_cross(a, b[i])
    out[i, 2] = wp.spatial_cross_dual(a, b[i])
    parts[i, 0] = wp.spatial_top(b[i])
    parts[i, 1] = wp.spatial_bottom(b[i])
    dots[i] = wp.spatial_dot(a, b[i])


def _spatial_reference(w, v, b):
    bw, bv = b[:, :3], b[:, 3:]
    cross = np.concatenate([np.cross(w, bw), np.cross(w, bv) + np.cross(v, bw)], axis=1)
    dual = np.concatenate([np.cross(w, bw) + np.cross(v, bv), np.cross(w, bv)], axis=1)
    return cross, dual


def test_spatial_vectors_against_numpy():
    rng = np.random.default_rng(4)
    n = 16
    w, v, b = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 6))
    out = wp.zeros((n, 3), dtype=wp.spatial_vectord)
    parts = wp.zeros((n, 2), dtype=wp.vec3d)
    dots = wp.zeros(n, dtype=wp.float64)
    wp.launch(spatial, dim=n, inputs=[wp.array(w, dtype=wp.vec3d), wp.array(v, dtype=wp.vec3d),
                                      wp.array(b, dtype=wp.spatial_vectord)], outputs=[out, parts, dots])
    o = out.numpy()
    cross, dual = _spatial_reference(w, v, b)
    np.testing.assert_array_equal(o[:, 0], np.concatenate([w, v], axis=1))
    np.testing.assert_allclose(o[:, 1], cross, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(o[:, 2], dual, rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(parts.numpy()[:, 0], b[:, :3])
    np.testing.assert_array_equal(parts.numpy()[:, 1], b[:, 3:])
    np.testing.assert_allclose(dots.numpy(), (np.concatenate([w, v], axis=1) * b).sum(1), rtol=1e-13)
    assert wp.spatial_vector.length == 6 and wp.spatial_matrix.shape == (6, 6)


def test_spatial_vectors_gradients():
    from adjit.testing import check_gradients
    rng = np.random.default_rng(5)
    n = 8
    ins = [wp.array(rng.standard_normal((n, 3)), dtype=wp.vec3d, requires_grad=True),
           wp.array(rng.standard_normal((n, 3)), dtype=wp.vec3d, requires_grad=True),
           wp.array(rng.standard_normal((n, 6)), dtype=wp.spatial_vectord, requires_grad=True)]
    outs = [wp.zeros((n, 3), dtype=wp.spatial_vectord, requires_grad=True),
            wp.zeros((n, 2), dtype=wp.vec3d, requires_grad=True), wp.zeros(n, dtype=wp.float64, requires_grad=True)]
    check_gradients(spatial, n, ins, outs)
