"""Tiles of vectors and matrices (Warp's tiles of vec3, mat22, ...) on the CPU:
memory, creation, element-wise operators, tile_map, sums, indexing and
tile/untile against numpy (float64 references), gradients against float64
finite differences, forward mode against hand-derived tangents, Warp's
n-body example kernel, and the builtins that do not take them yet as
errors naming the kernel's line. Tiles are small: each is unrolled code."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

V3 = adjit.vec3d
M22 = adjit.mat22d


@adjit.func
def _torque(p: adjit.vec3d, q: adjit.vec3d):
    return adjit.cross(p, q) * adjit.length(q)


@adjit.kernel
def _vec_ops(a: adjit.array(dtype=V3), b: adjit.array(dtype=V3), idx: int, out: adjit.array(dtype=V3),
             tot: adjit.array(dtype=V3)):
    i = adjit.tid()
    t = adjit.tile_load(a, shape=4, offset=i * 4)
    u = adjit.tile_load(b, shape=4, offset=i * 4)
    w = adjit.tile_map(_torque, t, u) - 0.5 * t + u / 3.0 + adjit.tile_ones(shape=4, dtype=adjit.vec3d)
    w[1] = t[idx] * 2.0  # a runtime element read, a constant element write
    w = -w
    adjit.tile_store(out, w, offset=i * 4)
    adjit.tile_atomic_add(tot, adjit.tile_sum(w))


def _vec_ops_np(a, b, idx):
    a, b = a.reshape(2, 4, 3), b.reshape(2, 4, 3)
    w = np.cross(a, b) * np.linalg.norm(b, axis=-1, keepdims=True) - 0.5 * a + b / 3 + 1
    w[:, 1] = a[:, idx] * 2
    return -w


def test_vec3_tiles_forward_and_gradients():
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    a, b = adjit.array(a_np, dtype=V3), adjit.array(b_np, dtype=V3)
    out, tot = adjit.zeros(8, dtype=V3), adjit.zeros(1, dtype=V3)
    adjit.launch_tiled(_vec_ops, dim=2, inputs=[a, b, 2, out, tot], block_dim=4)
    w = _vec_ops_np(a_np, b_np, 2)
    np.testing.assert_allclose(out.numpy(), w.reshape(8, 3), rtol=1e-12)
    np.testing.assert_allclose(tot.numpy()[0], w.sum(axis=(0, 1)), rtol=1e-12)
    # tile_atomic_add returns the old values: one block's is zero, the other's the first block's sum
    check_gradients(_vec_ops, 2, [a, b, 2], [out, tot])


@adjit.kernel
def _atomic_old(a: adjit.array(dtype=adjit.vec3), tot: adjit.array(dtype=adjit.vec3),
                old: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    adjit.tile_store(old, adjit.tile_atomic_add(tot, adjit.tile_load(a, shape=2, offset=2 * i), offset=1), offset=2 * i)


def test_vec3_tile_atomic_add_returns_the_old_values():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    a, tot, old = adjit.array(x, dtype=adjit.vec3), adjit.zeros(3, dtype=adjit.vec3), adjit.zeros(4, dtype=adjit.vec3)
    adjit.launch_tiled(_atomic_old, dim=2, inputs=[a, tot, old], block_dim=2)
    np.testing.assert_array_equal(tot.numpy(), [[0, 0, 0], x[0] + x[2], x[1] + x[3]])
    olds = old.numpy().reshape(2, 2, 3)
    first = 0 if not olds[0].any() else 1  # the block that added first saw zeros, the other its values
    np.testing.assert_array_equal(olds[first], np.zeros((2, 3)))
    np.testing.assert_array_equal(olds[1 - first], x.reshape(2, 2, 3)[first])


@adjit.kernel
def _vec_tangent(a: adjit.array(dtype=V3), out: adjit.array(dtype=V3), s: adjit.array(dtype=V3)):
    t = adjit.tile_load(a, shape=4)
    w = adjit.tile_map(adjit.normalize, t) * 3.0
    adjit.tile_store(out, w)
    adjit.tile_store(s, adjit.tile_sum(w))


def test_forward_mode_on_vec3_tiles():
    rng = np.random.default_rng(1)
    x, dx = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    a, out, s = adjit.array(x, dtype=V3), adjit.zeros(4, dtype=V3), adjit.zeros(1, dtype=V3)
    (dout, ds) = adjit.jvp(_vec_tangent, 1, [a], [adjit.array(dx, dtype=V3)], outputs=[out, s])
    n = np.linalg.norm(x, axis=1, keepdims=True)
    d = 3 * (dx / n - x * np.sum(x * dx, axis=1, keepdims=True) / n ** 3)  # d(x/|x|) = dx/|x| - x (x.dx)/|x|^3
    np.testing.assert_allclose(out.numpy(), 3 * x / n, rtol=1e-12)
    np.testing.assert_allclose(dout.numpy(), d, rtol=1e-10)
    np.testing.assert_allclose(ds.numpy()[0], d.sum(axis=0), rtol=1e-10)


@adjit.kernel
def _mixed(x: adjit.array(dtype=adjit.float64), m: adjit.array(dtype=adjit.mat33d), v: adjit.array(dtype=V3),
           out: adjit.array(dtype=V3), dots: adjit.array(dtype=adjit.float64)):
    t = adjit.tile_load(x, shape=4)
    u = adjit.tile_load(v, shape=4)
    w = t * adjit.vec3d(1.0, 2.0, 3.0) + 2.0 / u + adjit.tile_map(adjit.mul, adjit.tile_load(m, shape=4), u)
    r = adjit.tile_reduce(adjit.add, u)[0]  # a vec3d
    w = w * t[1] + t * r + t * u / t  # tile<float64> * tile<vec3d> (as Warp's: one element type scalar)
    adjit.tile_axpy(0.5, u, w)
    adjit.tile_store(out, w)
    adjit.tile_store(dots, adjit.tile_dot(u, w))  # the full contraction: a float64 tile of shape (1,)


def test_operators_mixing_scalars_vectors_and_matrices():
    rng = np.random.default_rng(3)
    x, m, v = rng.standard_normal(4), rng.standard_normal((4, 3, 3)), rng.uniform(1, 2, (4, 3))
    a, b, c = adjit.array(x), adjit.array(m, dtype=adjit.mat33d), adjit.array(v, dtype=V3)
    out, dots = adjit.zeros(4, dtype=V3), adjit.zeros(1, dtype=adjit.float64)
    adjit.launch(_mixed, dim=1, inputs=[a, b, c, out, dots])
    want = x[:, None] * [1, 2, 3] + 2 / v + np.einsum("nij,nj->ni", m, v)
    want = want * x[1] + x[:, None] * v.sum(axis=0) + x[:, None] * v / x[:, None] + 0.5 * v
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(dots.numpy(), [np.sum(v * want)], rtol=1e-12)
    check_gradients(_mixed, 1, [a, b, c], [out, dots])


@adjit.kernel
def _mat_ops(a: adjit.array2d(dtype=M22), out: adjit.array2d(dtype=M22), rows: adjit.array(dtype=M22)):
    i = adjit.tid()
    t = adjit.tile_load(a, shape=(2, 3), offset=(2 * i, 0))
    z = adjit.tile_full(shape=(2, 3), value=adjit.mat22d(1.0, 2.0, 3.0, 4.0), dtype=adjit.mat22d)
    u = t + z * 0.5 + adjit.tile_full(shape=(2, 3), value=0.25, dtype=adjit.mat22d)
    adjit.tile_store(out, adjit.tile_transpose(adjit.tile_transpose(u)), offset=(2 * i, 0))
    r = adjit.tile_view(u, offset=(1, 0), shape=(1, 3))
    adjit.tile_store(rows, adjit.tile_reshape(r, shape=3), offset=3 * i)


def test_mat22_tiles_forward_and_gradients():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 2, 2))
    a = adjit.array(x, dtype=M22)
    out, rows = adjit.zeros((4, 3), dtype=M22), adjit.zeros(6, dtype=M22)
    adjit.launch_tiled(_mat_ops, dim=2, inputs=[a, out, rows], block_dim=8)
    u = x + 0.5 * np.array([[1, 2], [3, 4]]) + 0.25
    np.testing.assert_allclose(out.numpy(), u, rtol=1e-12)
    np.testing.assert_allclose(rows.numpy(), u[[1, 3]].reshape(6, 2, 2), rtol=1e-12)
    check_gradients(_mat_ops, 2, [a], [out, rows])


@adjit.kernel
def _threads(a: adjit.array(dtype=adjit.vec3), out: adjit.array(dtype=adjit.vec3),
             zeros: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    t = adjit.tile(a[i] * 2.0, preserve_type=True)  # one element per thread: shape (1,) on the CPU
    out[i] = adjit.untile(t + adjit.tile_full(shape=1, value=adjit.vec3(1.0, 2.0, 3.0), dtype=adjit.vec3))
    adjit.tile_store(zeros, adjit.tile_zeros(shape=2, dtype=adjit.vec3), offset=2 * i)


def test_tile_and_untile_of_vectors():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    a, out = adjit.array(x, dtype=adjit.vec3), adjit.zeros(4, dtype=adjit.vec3)
    zeros = adjit.array(np.ones((8, 3), np.float32), dtype=adjit.vec3)
    adjit.launch_tiled(_threads, dim=4, inputs=[a, out, zeros], block_dim=16)
    np.testing.assert_array_equal(out.numpy(), 2 * x + [1, 2, 3])
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((8, 3)))


@adjit.kernel
def _edges(a: adjit.array(dtype=adjit.vec3), out: adjit.array(dtype=adjit.vec3), off: int):
    t = adjit.tile_load(a, shape=4, offset=off)
    adjit.tile_store(out, t + adjit.tile_ones(shape=4, dtype=adjit.vec3), offset=off + 1)


def test_vec3_elements_outside_the_array_read_zero_and_are_not_written():
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    a, out = adjit.array(x, dtype=adjit.vec3), adjit.zeros(5, dtype=adjit.vec3)
    adjit.launch(_edges, dim=1, inputs=[a, out, 3])  # reads rows 3, 4 (5, 6 outside: zero), writes row 4 only
    want = np.zeros((5, 3), np.float32)
    want[4] = x[3] + 1
    np.testing.assert_array_equal(out.numpy(), want)


# --- Warp's tile n-body example (warp/examples/tile/example_tile_nbody.py), with small tiles --------------------

NB_TILE = 8
NB_DT = 0.016
NB_SOFTENING_SQ = 0.01


@adjit.func
def _body_body(p0: adjit.vec3, pi: adjit.vec3):
    r = pi - p0
    inv_dist = 1.0 / adjit.sqrt(adjit.length_sq(r) + NB_SOFTENING_SQ)
    return inv_dist * inv_dist * inv_dist * r


@adjit.kernel
def _nbody(old_position: adjit.array(dtype=adjit.vec3), velocity: adjit.array(dtype=adjit.vec3),
           new_position: adjit.array(dtype=adjit.vec3), num_bodies: int):
    i = adjit.tid()
    p0 = old_position[i]
    accel = adjit.vec3(0.0, 0.0, 0.0)
    for k in range(num_bodies / NB_TILE):
        k_tile = adjit.tile_load(old_position, shape=NB_TILE, offset=k * NB_TILE)
        for idx in range(NB_TILE):
            accel += _body_body(p0, k_tile[idx])
    velocity[i] = velocity[i] + accel * NB_DT
    new_position[i] = old_position[i] + NB_DT * velocity[i]


def test_warps_nbody_example_kernel():
    rng = np.random.default_rng(42)
    n = 32
    pos = rng.standard_normal((n, 3)).astype(np.float32)
    vel = rng.standard_normal((n, 3)).astype(np.float32)
    p, v, q = adjit.array(pos, dtype=adjit.vec3), adjit.array(vel, dtype=adjit.vec3), adjit.zeros(n, dtype=adjit.vec3)
    adjit.launch(_nbody, dim=n, inputs=[p, v, q, n], block_dim=NB_TILE)
    p64 = pos.astype(np.float64)
    r = p64[None, :, :] - p64[:, None, :]
    inv = 1 / np.sqrt((r * r).sum(-1) + NB_SOFTENING_SQ)
    accel = ((inv ** 3)[..., None] * r).sum(1)
    v_new = vel + accel * NB_DT
    np.testing.assert_allclose(v.numpy(), v_new, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q.numpy(), pos + NB_DT * v_new, rtol=1e-5, atol=1e-5)


# --- errors -------------------------------------------------------------------------------------------

@adjit.kernel
def _bad_max(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_max(adjit.tile_load(a, shape=2))


@adjit.kernel
def _bad_product(a: adjit.array(dtype=adjit.vec3)):
    t = adjit.tile_load(a, shape=2)
    adjit.tile_store(a, t * t)


@adjit.kernel
def _bad_vec_product(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_store(a, adjit.tile_load(a, shape=2) * adjit.vec3(1.0, 2.0, 3.0))


@adjit.kernel
def _bad_reduce_axis(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_reduce(adjit.add, adjit.tile_load(a, shape=2), axis=0)


@adjit.kernel
def _bad_axis_sum(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_sum(adjit.tile_load(a, shape=2), axis=0)


@adjit.kernel
def _bad_arange(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_arange(4, dtype=adjit.vec3)


@adjit.kernel
def _bad_full(a: adjit.array(dtype=adjit.vec3)):
    adjit.tile_full(shape=2, value=adjit.vec2(1.0, 2.0), dtype=adjit.vec3)


@pytest.mark.parametrize("kernel,match", [
    (_bad_max, r"tile_max\(\)'s tile is a tile of vec3: adjit's tiles of vectors and matrices do not"),
    (_bad_product, r"Cannot multiply tile<vec3> by tile<vec3> element-wise: the element type must be scalar"),
    (_bad_vec_product, r"Cannot multiply tile<vec3> by vec3: at least one operand must be a scalar type"),
    (_bad_reduce_axis, r"tile_reduce\(axis=\)'s tile is a tile of vec3"),
    (_bad_axis_sum, r"tile_sum\(axis=\)'s tile is a tile of vec3"),
    (_bad_arange, r"a tile's dtype must be a scalar type"),
    (_bad_full, r"value is a vec2, the tile's dtype vec3"),
])
def test_unsupported_uses_are_errors_naming_the_line(kernel, match):
    with pytest.raises(adjit.AdjitError, match=match) as info:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(2, dtype=adjit.vec3)])
    assert "test_tile_composite.py" in str(info.value)
