"""Tiles (Warp's tile builtins) on the CPU: each builtin against numpy (float64
references), gradients against float64 finite differences or hand-derived
formulas, forward mode against the adjoint, and bad calls as errors naming
the kernel's file and line."""
import shutil
import subprocess
import typing

import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

TM, TN, TK = 4, 6, 5


@adjit.kernel
def _gemm(a: adjit.array2d(dtype=float), b: adjit.array2d(dtype=float), c: adjit.array2d(dtype=float)):
    i, j = adjit.tid()
    s = adjit.tile_zeros(shape=(TM, TN), dtype=float)
    for k in range((a.shape[1] + TK - 1) // TK):
        x = adjit.tile_load(a, shape=(TM, TK), offset=(i * TM, k * TK))
        y = adjit.tile_load(b, shape=(TK, TN), offset=(k * TK, j * TN))
        adjit.tile_matmul(x, y, s)
    adjit.tile_store(c, s, offset=(i * TM, j * TN))


def _blocks(n, t):
    return (n + t - 1) // t


@pytest.mark.parametrize("m,n,k", [(8, 12, 10), (7, 11, 13)])  # whole tiles, and partial ones at every edge
def test_tiled_gemm_forward_and_gradients(m, n, k):
    rng = np.random.default_rng(m)
    a_np = rng.standard_normal((m, k)).astype(np.float32)
    b_np = rng.standard_normal((k, n)).astype(np.float32)
    a = adjit.array(a_np, requires_grad=True)
    b = adjit.array(b_np, requires_grad=True)
    c = adjit.zeros((m, n), dtype=float, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch_tiled(_gemm, dim=(_blocks(m, TM), _blocks(n, TN)), inputs=[a, b, c], block_dim=64)
    a64, b64 = a_np.astype(np.float64), b_np.astype(np.float64)
    np.testing.assert_allclose(c.numpy(), a64 @ b64, rtol=1e-5, atol=1e-5)
    g = rng.standard_normal((m, n))
    c.grad = adjit.array(g.astype(np.float32))
    tape.backward()
    np.testing.assert_allclose(a.grad.numpy(), g @ b64.T, rtol=1e-5, atol=1e-5)  # dC/dA: G B^T
    np.testing.assert_allclose(b.grad.numpy(), a64.T @ g, rtol=1e-5, atol=1e-5)  # dC/dB: A^T G


@adjit.kernel
def _partial(src: adjit.array2d(dtype=float), dst: adjit.array2d(dtype=float), ox: int, oy: int):
    t = adjit.tile_load(src, shape=(3, 4), offset=(ox, oy))
    adjit.tile_store(dst, t * 2.0 + 1.0, offset=(ox + 1, oy - 1))


def test_elements_outside_the_array_load_as_zero_and_are_not_stored():
    src = np.arange(20, dtype=np.float32).reshape(4, 5)
    for ox, oy in [(0, 0), (2, 3), (-1, -2), (3, 4), (10, 0)]:
        dst = adjit.full((4, 5), -7.0, dtype=float)
        adjit.launch(_partial, dim=1, inputs=[adjit.array(src), dst, ox, oy])
        expected = np.full((4, 5), -7.0)
        for r in range(3):
            for c in range(4):
                x, y = ox + r, oy + c
                value = src[x, y] if 0 <= x < 4 and 0 <= y < 5 else 0.0
                if 0 <= x + 1 < 4 and 0 <= y - 1 < 5:
                    expected[x + 1, y - 1] = 2 * value + 1
        np.testing.assert_array_equal(dst.numpy(), expected)


@adjit.kernel
def _unchecked(src: adjit.array(dtype=float), dst: adjit.array(dtype=float), o: int):
    t = adjit.tile_load(src, shape=4, offset=o, bounds_check=False)
    adjit.tile_store(dst, t, offset=0)


def test_without_bounds_check_an_access_outside_is_an_error_not_a_read():
    src, dst = adjit.array(np.arange(6, dtype=np.float32)), adjit.zeros(4, dtype=float)
    adjit.launch(_unchecked, dim=1, inputs=[src, dst, 2])
    np.testing.assert_array_equal(dst.numpy(), [2, 3, 4, 5])
    with pytest.raises(adjit.AdjitError, match=r"test_tiles\.py:\d+.*out of range|out of range.*test_tiles\.py"):
        adjit.launch(_unchecked, dim=1, inputs=[src, dst, 3])


@adjit.kernel
def _create(out: adjit.array2d(dtype=float), iout: adjit.array(dtype=int), v: float):
    z = adjit.tile_zeros(shape=(2, 3), dtype=float)
    o = adjit.tile_ones(shape=(2, 3), dtype=float)
    f = adjit.tile_full(shape=(2, 3), value=v, dtype=float)
    e = adjit.tile_empty(shape=(2, 3), dtype=float)
    adjit.tile_store(out, z + o * 2.0 - f / 4.0 + e, offset=(0, 0))
    r = adjit.tile_arange(2.0, 5.0, 0.5, dtype=float)
    adjit.tile_store(out, adjit.tile_reshape(r, shape=(2, 3)), offset=(2, 0))
    adjit.tile_store(iout, adjit.tile_arange(5, dtype=int), offset=0)
    adjit.tile_store(iout, -adjit.tile_arange(1, 7, 2), offset=5)


def test_creation():
    out, iout = adjit.zeros((4, 3), dtype=float), adjit.zeros(8, dtype=int)
    adjit.launch(_create, dim=1, inputs=[out, iout, 3.0])
    np.testing.assert_array_equal(out.numpy()[:2], np.full((2, 3), 2 - 0.75))
    np.testing.assert_array_equal(out.numpy()[2:], np.arange(2.0, 5.0, 0.5).reshape(2, 3))
    np.testing.assert_array_equal(iout.numpy(), [0, 1, 2, 3, 4, -1, -3, -5])


@adjit.func
def _softplus(x: adjit.float64, y: adjit.float64):
    return adjit.log(1.0 + adjit.exp(x)) * y


@adjit.kernel
def _elementwise(a: adjit.array2d(dtype=adjit.float64), b: adjit.array2d(dtype=adjit.float64),
                 out: adjit.array2d(dtype=adjit.float64)):
    i = adjit.tid()
    x = adjit.tile_load(a, shape=(2, 3), offset=(2 * i, 0))
    y = adjit.tile_load(b, shape=(2, 3), offset=(2 * i, 0))
    s = adjit.tile_map(adjit.sin, x) * y - x / (y * y + 1.0) + 3.0 * adjit.tile_map(_softplus, x, y)
    adjit.tile_store(out, -s + adjit.tile_map(adjit.mul, x, x), offset=(2 * i, 0))


def _elementwise_np(x, y):
    return -(np.sin(x) * y - x / (y * y + 1) + 3 * np.log1p(np.exp(x)) * y) + x * x


def test_elementwise_operators_and_tile_map():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    a, b, out = adjit.array(x), adjit.array(y), adjit.zeros((4, 3), dtype=adjit.float64)
    adjit.launch(_elementwise, dim=2, inputs=[a, b, out])
    np.testing.assert_allclose(out.numpy(), _elementwise_np(x, y), rtol=1e-12)
    check_gradients(_elementwise, 2, [a, b], [out])


@adjit.kernel
def _reductions(a: adjit.array2d(dtype=adjit.float64), out: adjit.array(dtype=adjit.float64),
                rows: adjit.array(dtype=adjit.float64), cols: adjit.array(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(4, 6), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_sum(t), offset=0)
    adjit.tile_store(out, adjit.tile_max(t), offset=1)
    adjit.tile_store(out, adjit.tile_min(t), offset=2)
    adjit.tile_store(out, adjit.tile_dot(t, t), offset=3)
    adjit.tile_store(out, adjit.tile_reduce(adjit.mul, adjit.tile_view(t, offset=(1, 2), shape=(2, 2))), offset=4)
    adjit.tile_store(out, adjit.tile_reduce(_softplus, adjit.tile_view(t, offset=(3,))), offset=5)
    adjit.tile_store(rows, adjit.tile_sum(t, axis=1), offset=0)
    adjit.tile_store(cols, adjit.tile_reduce(adjit.add, t, axis=0), offset=0)


def _softplus_np(x, y):
    return np.log1p(np.exp(x)) * y


def test_reductions():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    a = adjit.array(x)
    out, rows, cols = (adjit.zeros(n, dtype=adjit.float64) for n in (6, 4, 6))
    adjit.launch(_reductions, dim=1, inputs=[a, out, rows, cols])
    fold = x[3, 0]
    for v in x[3, 1:]:
        fold = _softplus_np(fold, v)
    np.testing.assert_allclose(out.numpy(), [x.sum(), x.max(), x.min(), (x * x).sum(), np.prod(x[1:3, 2:4]), fold],
                               rtol=1e-12)
    np.testing.assert_allclose(rows.numpy(), x.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(cols.numpy(), x.sum(axis=0), rtol=1e-12)
    check_gradients(_reductions, 1, [a], [out, rows, cols])  # (distinct values: max and min are smooth here)


@adjit.kernel
def _arg_extremes(a: adjit.array(dtype=float), out: adjit.array(dtype=int)):
    t = adjit.tile_load(a, shape=12, offset=0)
    adjit.tile_store(out, adjit.tile_argmax(t), offset=0)
    adjit.tile_store(out, adjit.tile_argmin(t), offset=1)
    n = adjit.tile_astype(t, dtype=int)
    adjit.tile_store(out, adjit.tile_argmax(n), offset=2)
    adjit.tile_store(out, adjit.tile_max(n), offset=3)


@pytest.mark.parametrize("values", [
    [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 9],  # ties: the first of equals, as numpy
    [0, -2, 7, 7, -2, 0, 1, 1, 7, -2, 3, 3],
    list(range(12, 0, -1)),
    [1, float("nan"), 3, float("nan"), 9, 0, 2, 2, 2, 2, 2, 2],  # NaN: the first NaN, as numpy
])
def test_argmax_argmin_take_the_first_of_equals(values):
    out = adjit.zeros(4, dtype=int)
    adjit.launch(_arg_extremes, dim=1, inputs=[adjit.array(np.array(values, np.float32)), out])
    if np.isnan(values).any():
        assert out.numpy()[:2].tolist() == [np.argmax(values), np.argmin(values)]
        return
    ints = np.array(values, np.float32).astype(np.int32)  # (tile_astype: as numpy's float -> int cast)
    assert out.numpy().tolist() == [np.argmax(values), np.argmin(values), np.argmax(ints), ints.max()]


@adjit.kernel
def _scans(a: adjit.array(dtype=adjit.float64), out: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=7, offset=0)
    adjit.tile_store(out, adjit.tile_reshape(adjit.tile_scan_inclusive(t), shape=(1, 7)), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_reshape(adjit.tile_scan_exclusive(t), shape=(1, -1)), offset=(1, 0))
    adjit.tile_store(out, adjit.tile_broadcast(adjit.tile_scan_max_inclusive(t), shape=(1, 7)), offset=(2, 0))
    adjit.tile_store(out, adjit.tile_broadcast(adjit.tile_scan_min_inclusive(t), shape=(1, 7)), offset=(3, 0))


def test_scans():
    x = np.array([0.5, -1.25, 2.0, 0.75, -3.0, 4.5, 1.0])
    out = adjit.zeros((4, 7), dtype=adjit.float64)
    a = adjit.array(x)
    adjit.launch(_scans, dim=1, inputs=[a, out])
    np.testing.assert_allclose(out.numpy(), [np.cumsum(x), np.concatenate([[0], np.cumsum(x)[:-1]]),
                                             np.maximum.accumulate(x), np.minimum.accumulate(x)], rtol=1e-12)
    check_gradients(_scans, 1, [a], [out])


@adjit.kernel
def _shapes(a: adjit.array2d(dtype=adjit.float64), d: adjit.array(dtype=adjit.float64),
            out: adjit.array2d(dtype=adjit.float64), big: adjit.array3d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(3, 3), offset=(0, 0))
    v = adjit.tile_load(d, shape=3, offset=0)
    adjit.tile_store(out, adjit.tile_transpose(t), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_diag_add(t, v), offset=(3, 0))
    u = adjit.tile_zeros(shape=(3, 3), dtype=adjit.float64)
    adjit.tile_assign(u, adjit.tile_view(t, offset=(1, 1), shape=(2, 2)), offset=(0, 1))
    adjit.tile_axpy(2.0, t, u)
    adjit.tile_store(out, u, offset=(6, 0))
    c = adjit.tile_reshape(v, shape=(3, 1))
    adjit.tile_store(big, adjit.tile_broadcast(c, shape=(2, 3, 3)), offset=(0, 0, 0))
    adjit.tile_store(out, adjit.tile_squeeze(adjit.tile_broadcast(c, shape=(1, 3, 3))), offset=(9, 0))


def test_shape_builtins():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 3)), rng.standard_normal(3)
    a, d = adjit.array(x), adjit.array(y)
    out, big = adjit.zeros((12, 3), dtype=adjit.float64), adjit.zeros((2, 3, 3), dtype=adjit.float64)
    adjit.launch(_shapes, dim=1, inputs=[a, d, out, big])
    u = np.zeros((3, 3))
    u[0:2, 1:3] = x[1:3, 1:3]
    u += 2 * x
    expected = np.concatenate([x.T, x + np.diag(y), u, np.broadcast_to(y[:, None], (3, 3))])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(big.numpy(), np.broadcast_to(y[:, None], (2, 3, 3)), rtol=1e-12)
    check_gradients(_shapes, 1, [a, d], [out, big])


@adjit.kernel
def _indexing(a: adjit.array(dtype=adjit.float64), k: int, out: adjit.array(dtype=adjit.float64)):
    t = adjit.tile_reshape(adjit.tile_load(a, shape=6, offset=0), shape=(2, 3))
    x = t[1, k] + adjit.tile_extract(t, 0, 2) * t[0, 0]
    t[0, k] = x * 2.0
    t[1, 1] += 1.0
    adjit.tile_store(out, adjit.tile_reshape(t, shape=6), offset=0)


def _indexed_np(x, k):
    t = x.reshape(2, 3).copy()
    v = (t[1, k] if k < 3 else 0.0) + t[0, 2] * t[0, 0]
    if k < 3:
        t[0, k] = 2 * v
    t[1, 1] += 1
    return t.reshape(6)


@pytest.mark.parametrize("k", [0, 2])
def test_indexing_reads_and_writes_elements(k):
    x = np.arange(1.0, 7.0)
    a, out = adjit.array(x), adjit.zeros(6, dtype=adjit.float64)
    adjit.launch(_indexing, dim=1, inputs=[a, k, out])
    np.testing.assert_allclose(out.numpy(), _indexed_np(x, k), rtol=1e-12)
    check_gradients(_indexing, 1, [a, k], [out])


_indexing_unchecked = adjit.kernel(_indexing.pyfunc, bounds_check=False)


def test_an_index_outside_the_tile_is_reported_or_without_checks_reads_zero():
    x = np.arange(1.0, 7.0)
    a, out = adjit.array(x), adjit.zeros(6, dtype=adjit.float64)
    with pytest.raises(adjit.AdjitError, match=r"test_tiles\.py:\d+.*index 1 into a tile of shape \(2, 3\)"):
        adjit.launch(_indexing, dim=1, inputs=[a, 5, out])
    adjit.launch(_indexing_unchecked, dim=1, inputs=[a, 5, out])  # reads 0, writes nothing
    np.testing.assert_allclose(out.numpy(), _indexed_np(x, 5), rtol=1e-12)


@adjit.kernel
def _per_thread(x: adjit.array(dtype=float), out: adjit.array(dtype=float), old: adjit.array(dtype=float)):
    i = adjit.tid()
    t = adjit.tile(x[i] * 2.0)  # one thread per block on the CPU: a tile of shape (1,)
    s = adjit.tile_sum(t)
    out[i] = adjit.untile(s + t)
    o = adjit.tile_atomic_add(old, adjit.tile_full(shape=2, value=x[i], dtype=float), offset=0)
    adjit.tile_atomic_add(old, o * 0.0, offset=1)


def test_tile_and_untile_with_one_thread_per_block():
    x = np.array([1.0, 2.5, -3.0], np.float32)
    out, old = adjit.zeros(3, dtype=float), adjit.zeros(3, dtype=float)
    adjit.launch_tiled(_per_thread, dim=3, inputs=[adjit.array(x), out, old], block_dim=32)
    np.testing.assert_array_equal(out.numpy(), 4 * x)
    np.testing.assert_array_equal(old.numpy(), [x.sum(), x.sum(), 0.0])
    assert adjit.block_dim  # (the builtin: 1 in CPU kernels)


@adjit.kernel
def _matmul_forms(a: adjit.array2d(dtype=adjit.float64), b: adjit.array2d(dtype=adjit.float64),
                  c: adjit.array2d(dtype=adjit.float64), out: adjit.array2d(dtype=adjit.float64)):
    x = adjit.tile_load(a, shape=(2, 3), offset=(0, 0))
    y = adjit.tile_load(b, shape=(3, 4), offset=(0, 0))
    z = adjit.tile_load(c, shape=(2, 4), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_matmul(x, y), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_matmul(x, y, 0.5), offset=(2, 0))  # (a, b, alpha): Warp's other form
    adjit.tile_matmul(x, y, z, alpha=2.0, beta=-1.0)
    adjit.tile_store(out, z, offset=(4, 0))


def test_matmul_forms():
    rng = np.random.default_rng(4)
    x, y, z = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    a, b, c = adjit.array(x), adjit.array(y), adjit.array(z)
    out = adjit.zeros((6, 4), dtype=adjit.float64)
    adjit.launch(_matmul_forms, dim=1, inputs=[a, b, c, out])
    np.testing.assert_allclose(out.numpy(), np.concatenate([x @ y, 0.5 * (x @ y), 2 * (x @ y) - z]), rtol=1e-12)
    check_gradients(_matmul_forms, 1, [a, b, c], [out])


@adjit.kernel
def _mlp(w: adjit.array2d(dtype=adjit.float64), x: adjit.array2d(dtype=adjit.float64),
         y: adjit.array2d(dtype=adjit.float64)):
    i = adjit.tid()
    wt = adjit.tile_load(w, shape=(3, 4), offset=(0, 0))
    xt = adjit.tile_load(x, shape=(4, 2), offset=(0, 2 * i))
    h = adjit.tile_map(adjit.tanh, adjit.tile_matmul(wt, xt))
    adjit.tile_store(y, h, offset=(0, 2 * i))


def test_forward_mode_matches_the_adjoint():
    rng = np.random.default_rng(5)
    w, x = adjit.array(rng.standard_normal((3, 4))), adjit.array(rng.standard_normal((4, 6)))
    y = adjit.zeros((3, 6), dtype=adjit.float64)
    dw = rng.standard_normal((3, 4))
    (dy,) = adjit.jvp(_mlp, 3, [w, x], [dw], outputs=[y])
    pre = w.numpy() @ x.numpy()
    np.testing.assert_allclose(y.numpy(), np.tanh(pre), rtol=1e-12)
    np.testing.assert_allclose(dy.numpy(), (1 - np.tanh(pre) ** 2) * (dw @ x.numpy()), rtol=1e-10)
    check_gradients(_mlp, 3, [w, x], [y])


# --- errors -------------------------------------------------------------------------------------------

def _compile_error(source_kernel, inputs):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.launch(source_kernel, dim=1, inputs=inputs)
    message = str(info.value)
    assert "test_tiles.py" in message
    return message


@adjit.kernel
def _bad_shapes(a: adjit.array2d(dtype=float)):
    x = adjit.tile_load(a, shape=(2, 3), offset=(0, 0))
    y = adjit.tile_load(a, shape=(3, 2), offset=(0, 0))
    adjit.tile_store(a, x + y, offset=(0, 0))


@adjit.kernel
def _bad_matmul(a: adjit.array2d(dtype=float)):
    x = adjit.tile_load(a, shape=(2, 3), offset=(0, 0))
    adjit.tile_store(a, adjit.tile_matmul(x, x), offset=(0, 0))


@adjit.kernel
def _runtime_shape(a: adjit.array(dtype=float), n: int):
    adjit.tile_store(a, adjit.tile_load(a, shape=n, offset=0), offset=0)


@adjit.kernel
def _too_big(a: adjit.array(dtype=float)):
    adjit.tile_store(a, adjit.tile_zeros(shape=100000, dtype=float), offset=0)


@adjit.kernel
def _wrong_dtype(a: adjit.array(dtype=float), b: adjit.array(dtype=int)):
    adjit.tile_store(b, adjit.tile_load(a, shape=2), offset=0)


@adjit.kernel
def _wrong_rank(a: adjit.array2d(dtype=float)):
    adjit.tile_store(a, adjit.tile_load(a, shape=2), offset=0)


def test_bad_calls_are_errors_naming_the_line():
    a2 = adjit.zeros((4, 4), dtype=float)
    assert "different shapes" in _compile_error(_bad_shapes, [a2])
    assert "(M, K) and a (K, N)" in _compile_error(_bad_matmul, [a2])
    assert "constant integer" in _compile_error(_runtime_shape, [adjit.zeros(4, dtype=float), 4])
    assert "at most" in _compile_error(_too_big, [adjit.zeros(4, dtype=float)])
    assert "holds int32 and the tile float32" in _compile_error(
        _wrong_dtype, [adjit.zeros(4, dtype=float), adjit.zeros(4, dtype=int)])
    assert "same number of dimensions" in _compile_error(_wrong_rank, [a2])


def test_tile_builtins_are_kernel_only():
    with pytest.raises(TypeError, match="tile_sum"):
        adjit.tile_sum([1.0])


def test_launch_tiled_needs_block_dim():
    with pytest.raises(adjit.LaunchError, match="block_dim"):
        adjit.launch_tiled(_per_thread, dim=3, inputs=[])


@adjit.kernel
def _alpha_once(a: adjit.array2d(dtype=float), counter: adjit.array(dtype=float), out: adjit.array2d(dtype=float)):
    x = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_matmul(x, x, adjit.atomic_add(counter, 0, 1.0) + 2.0), offset=(0, 0))


def test_matmul_alpha_is_evaluated_once():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    counter, out = adjit.zeros(1, dtype=float), adjit.zeros((2, 2), dtype=float)
    adjit.launch(_alpha_once, dim=1, inputs=[adjit.array(x), counter, out])
    assert counter.numpy()[0] == 1.0
    np.testing.assert_array_equal(out.numpy(), 2.0 * (x @ x))


@adjit.kernel
def _squeeze_bad_axis(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(2, 1), offset=(0, 0))
    adjit.tile_store(a, adjit.tile_reshape(adjit.tile_squeeze(t, axis=3), shape=(2, 1)), offset=(0, 0))


def test_squeeze_of_an_axis_outside_the_tile_is_an_error():
    assert "axis 3 is out of bounds for tile with 2 dimensions" in _compile_error(
        _squeeze_bad_axis, [adjit.zeros((2, 1), dtype=float)])


@adjit.kernel
def _big_tile_runtime_index(a: adjit.array2d(dtype=float), out: adjit.array(dtype=float), r: int):
    t = adjit.tile_load(a, shape=(16, 16), offset=(0, 0))
    out[0] = t[r, 3]
    t[r, 2] = 5.0
    out[1] = adjit.tile_sum(t)[0]


def test_runtime_indices_into_a_tile_larger_than_a_vector():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = adjit.zeros(2, dtype=float)
    adjit.launch(_big_tile_runtime_index, dim=1, inputs=[adjit.array(x), out, 4])
    np.testing.assert_array_equal(out.numpy(), [x[4, 3], x.sum() - x[4, 2] + 5])


@adjit.kernel
def _untile_too_long(out: adjit.array(dtype=float)):
    v = adjit.untile(adjit.tile_ones(shape=(100, 1), dtype=float))
    out[0] = v[0]


def test_untile_into_a_vector_longer_than_a_vector_is_an_error():
    assert "more than 64 components" in _compile_error(_untile_too_long, [adjit.zeros(1, dtype=float)])


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize("adjoint", [False, True], ids=["forward", "adjoint"])
def test_ptx_of_a_tile_kernel_assembles(tmp_path, adjoint):
    # (Each GPU thread holds its tiles, as one CPU thread does: the block-
    # cooperative lowering is not written yet.)
    ptx = adjit.compile(_gemm, target="cuda", arch="sm_80", adjoint=adjoint)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(src), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --- Warp's tile annotations and attributes ---------------------------------------------------------------

@adjit.func
def _scaled(t: adjit.tile[adjit.float64, 3, 4]):
    return t * 2.0


@adjit.func
def _plus_sin(t: adjit.tile[adjit.float64], u: adjit.tile[adjit.float64, (3, 4)]):  # any shape; (M, N) form
    return adjit.tile_map(adjit.sin, t) + u


@adjit.kernel
def _annotated(a: adjit.array2d(dtype=adjit.float64), out: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(3, 4))
    adjit.tile_store(out, _plus_sin(_scaled(t), t))


def test_tile_annotations_of_func_parameters():
    """``tile[dtype, M, N]`` / ``tile[dtype, (M, N)]`` / ``tile[dtype]`` (any shape) annotate @func
    parameters, as Warp's ``wp.tile[...]``; gradients flow through them."""
    assert adjit.tile[float, 3, 4] == adjit.types.TileType((3, 4), adjit.float32)
    assert adjit.tile[int, (2,)] == adjit.types.TileType((2,), adjit.int32)
    x = np.random.default_rng(5).standard_normal((3, 4))
    a, out = adjit.array(x, requires_grad=True), adjit.zeros((3, 4), dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_annotated, dim=1, inputs=[a, out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), np.sin(2 * x) + x, rtol=1e-12)
    check_gradients(_annotated, 1, [a], [out])


@adjit.func
def _wants_3x4(t: adjit.tile[float, 3, 4]):
    return t


@adjit.kernel
def _wrong_tile_arg(a: adjit.array2d(dtype=float)):
    adjit.tile_store(a, _wants_3x4(adjit.tile_load(a, shape=(4, 3))))


def test_tile_annotations_are_checked():
    assert "_wants_3x4" in _compile_error(_wrong_tile_arg, [adjit.zeros((4, 4), dtype=float)])
    assert adjit.tile[adjit.vec3, 4] == adjit.types.TileType((4,), adjit.vec3)  # (tiles of vectors: see
    with pytest.raises(TypeError, match="not supported yet"):                 # test_tile_composite.py)
        adjit.tile[adjit.types.vector(3, adjit.types.bool_), 4]
    with pytest.raises(TypeError, match="not subscriptable"):
        adjit.tile_sum[float]

    def kernel_takes_tile(t: adjit.tile[float, 2]):
        pass
    with pytest.raises(adjit.AdjitError, match="tiles are made in kernels"):
        adjit.launch(adjit.kernel(kernel_takes_tile), dim=1, inputs=[None])


@adjit.kernel
def _tile_shape(a: adjit.array2d(dtype=float), out: adjit.array2d(dtype=float), n: adjit.array(dtype=int)):
    t = adjit.tile_load(a, shape=(2, 3))
    n[0] = t.shape[0]
    n[1] = t.shape[1]
    n[2] = t.size
    adjit.tile_store(out, adjit.tile_ones(shape=t.shape, dtype=float) + t)


def test_tile_shape_and_size_are_constants():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, n = adjit.zeros((2, 3), dtype=float), adjit.zeros(3, dtype=int)
    adjit.launch_tiled(_tile_shape, dim=1, inputs=[adjit.array(x), out, n], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), x + 1)
    np.testing.assert_array_equal(n.numpy(), [2, 3, 6])


@adjit.func
def _bump(t: adjit.tile[adjit.float64, 3, 4], s: adjit.tile[adjit.float64, 3, 4]):
    t += adjit.tile_map(adjit.sin, s)  # written: the caller's tile changes (Warp passes tiles by reference)


@adjit.func
def _set_corner(t: adjit.tile[adjit.float64], v: adjit.float64):
    t[2, 3] = v * v
    return v


@adjit.func
def _read_only(a: adjit.tile[adjit.float64], b: adjit.tile[adjit.float64]):
    return a * b  # only read: passed by value, so _read_only(t, t) is fine


@adjit.kernel
def _tiles_by_reference(a: adjit.array2d(dtype=adjit.float64), v: adjit.array(dtype=adjit.float64),
                        out: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(3, 4))
    u = t * 1.0
    _bump(t, u)
    _set_corner(t, v[0])
    adjit.tile_store(out, _read_only(t, t) + u * 0.0 + _read_only(u, u))


def test_tiles_a_func_writes_are_the_callers():
    """A @func's writes to a tile parameter (``t += ...``, ``t[i, j] = ...``) change the caller's tile, as in
    Warp, where tiles are passed by reference; gradients flow through the write-back."""
    x = np.random.default_rng(9).standard_normal((3, 4))
    a = adjit.array(x, requires_grad=True)
    v = adjit.array(np.array([0.7]), requires_grad=True)
    out = adjit.zeros((3, 4), dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_tiles_by_reference, dim=1, inputs=[a, v, out], block_dim=1)
    t = x + np.sin(x)
    t[2, 3] = 0.49
    np.testing.assert_allclose(out.numpy(), t * t + x * x, rtol=1e-12)
    check_gradients(_tiles_by_reference, 1, [a, v], [out])


@adjit.kernel
def _typed_array_subscript(a: adjit.array[float, 2], b: adjit.array[adjit.float64, typing.Literal[1]]):
    b[0] = adjit.float64(a[1, 1])


def test_array_subscript_with_ndim():
    """Warp's ``array[dtype, ndim]`` and ``array[dtype, Literal[ndim]]`` annotations (Warp's test_tile uses them)."""
    assert adjit.array[float, typing.Literal[2]] == adjit.array2d(dtype=float)
    assert adjit.array[int, 3] == adjit.array3d(dtype=int)
    with pytest.raises(TypeError, match="ndim is 1 to 4"):
        adjit.array[float, 5]
    with pytest.raises(TypeError, match="takes a dtype"):
        adjit.array2d[float, 2]
    b = adjit.zeros(1, dtype=adjit.float64)
    adjit.launch(_typed_array_subscript, dim=1, inputs=[adjit.array(np.arange(4.0, dtype=np.float32).reshape(2, 2)),
                                                        b])
    assert b.numpy()[0] == 3.0


@adjit.func
def _weighted(x: adjit.float64, y: adjit.float64, w: adjit.float64, v: adjit.vec3d):
    return x * w + y * v[1]


@adjit.kernel
def _map_with_values(a: adjit.array(dtype=adjit.float64), b: adjit.array(dtype=adjit.float64),
                     w: adjit.array(dtype=adjit.float64), v: adjit.array(dtype=adjit.vec3d),
                     out: adjit.array(dtype=adjit.float64)):
    x = adjit.tile_load(a, shape=5)
    y = adjit.tile_load(b, shape=5)
    adjit.tile_store(out, adjit.tile_map(_weighted, x, y, w[0], v[0]))


def test_tile_map_takes_values_besides_tiles():
    """tile_map's further arguments may be values (scalars, vectors, ...), given to every call, as in Warp;
    their adjoints sum over the elements."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(5), rng.standard_normal(5)
    a, b = adjit.array(x, requires_grad=True), adjit.array(y, requires_grad=True)
    w = adjit.array(np.array([0.3]), requires_grad=True)
    v = adjit.array(np.array([[1.0, -2.0, 0.5]]), dtype=adjit.vec3d, requires_grad=True)
    out = adjit.zeros(5, dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_map_with_values, dim=1, inputs=[a, b, w, v, out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), x * 0.3 - 2.0 * y, rtol=1e-12)
    check_gradients(_map_with_values, 1, [a, b, w, v], [out])


@adjit.kernel
def _squeeze_below(a: adjit.array(dtype=float)):
    adjit.tile_store(a, adjit.tile_squeeze(adjit.tile_zeros(shape=(1, 2, 1), dtype=float), axis=(-4,)))


@adjit.kernel
def _squeeze_above(a: adjit.array(dtype=float)):
    adjit.tile_store(a, adjit.tile_squeeze(adjit.tile_zeros(shape=(1, 2, 1), dtype=float), axis=3))


@adjit.kernel
def _broadcast_5d(a: adjit.array(dtype=float)):
    t = adjit.tile_broadcast(adjit.tile_load(a, shape=1), shape=(1, 1, 1, 1, 1))


def test_tile_axes_and_ranks_out_of_range_are_value_errors():
    """As Warp's (ValueError, Warp's messages): tile_squeeze's axis outside [-ndim, ndim) is refused (it wrapped
    around before), and tile_broadcast to more than four dimensions."""
    a = adjit.zeros(2, dtype=float)
    for k, axis in ((_squeeze_below, -4), (_squeeze_above, 3)):
        with pytest.raises(ValueError, match=rf"tile_squeeze\(\) axis {axis} is out of bounds for tile with 3 "):
            adjit.launch(k, dim=1, inputs=[a])
    with pytest.raises(ValueError, match=r"tile_broadcast\(\) output must have between one and four dimensions"):
        adjit.launch(_broadcast_5d, dim=1, inputs=[a])


@adjit.kernel
def _rows(a: adjit.array3d(dtype=adjit.float64), b: adjit.array3d(dtype=adjit.float64),
          c: adjit.array3d(dtype=adjit.float64)):
    i = adjit.tid()
    row = a[i]
    t = adjit.tile_load(row, shape=(2, 3), offset=(1, 0))
    adjit.tile_store(b[i], t * t, offset=(0, 2))  # partly outside b[i]: those elements are not stored
    adjit.tile_atomic_add(c[i], adjit.tile_load(a[i], shape=(3, 2), offset=(2, 3)))  # partly outside a[i]


def test_tile_load_store_and_atomic_add_on_rows_of_arrays():
    """tile_load / tile_store / tile_atomic_add take a row of an array (a[i], a view), as in Warp, with the
    row's own bounds; gradients reach the base array."""
    x = np.random.default_rng(4).standard_normal((2, 3, 4))
    a = adjit.array(x, requires_grad=True)
    b = adjit.zeros((2, 3, 4), dtype=adjit.float64, requires_grad=True)
    c = adjit.zeros((2, 3, 4), dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_rows, dim=2, inputs=[a, b, c], block_dim=1)
    eb, ec = np.zeros((2, 3, 4)), np.zeros((2, 3, 4))
    eb[:, 0:2, 2:4] = x[:, 1:3, 0:2] ** 2
    ec[:, 0:1, 0:1] = x[:, 2:3, 3:4]
    np.testing.assert_allclose(b.numpy(), eb, rtol=1e-12)
    np.testing.assert_allclose(c.numpy(), ec, rtol=1e-12)
    check_gradients(_rows, 2, [a], [b, c])


@adjit.kernel
def _sub_tiles(src: adjit.array2d(dtype=adjit.float64), n: int, rows: adjit.array2d(dtype=adjit.float64),
               sliced: adjit.array2d(dtype=adjit.float64), part: adjit.array(dtype=adjit.float64),
               view: adjit.array2d(dtype=adjit.float64), every: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(src, shape=(6, 8))
    for i in range(6):
        adjit.tile_store(rows[i], t[i] * t[i])  # fewer indices: the row (a runtime index)
    adjit.tile_store(sliced, t[1:4, ::-2])
    adjit.tile_store(part, t[n, 2:5])  # a runtime index among slices
    adjit.tile_store(view, adjit.tile_view(t, offset=(n, 1), shape=(2, 3)))  # a runtime offset
    adjit.tile_store(every, t[::2])


def test_sub_tiles_by_index_slice_and_runtime_view():
    """As Warp: t[i] with fewer indices is the sub-tile of the remaining dimensions, slices with constant bounds
    select sub-tiles (numpy's rules), and tile_view's offsets and a sub-tile's indices may be runtime ints (an
    offset that leaves the tile reads zeros, as a runtime index of one element does)."""
    x = np.random.default_rng(2).standard_normal((6, 8))
    for n in (0, 3, 4, 7, -2):  # a negative index of a sub-tile counts from the end (not tile_view's offset)
        a = adjit.array(x, requires_grad=True)
        outs = [adjit.zeros(s, dtype=adjit.float64, requires_grad=True)
                for s in ((6, 8), (3, 4), 3, (2, 3), (3, 8))]
        adjit.launch_tiled(_sub_tiles, dim=1, inputs=[a, n, *outs], block_dim=1)
        rows, sliced, part, view, every = (o.numpy() for o in outs)
        np.testing.assert_array_equal(rows, x * x)
        np.testing.assert_array_equal(sliced, x[1:4, ::-2])
        np.testing.assert_array_equal(part, x[n, 2:5] if n < 6 else 0.0)
        np.testing.assert_array_equal(view, x[n:n + 2, 1:4] if 0 <= n and n + 2 <= 6 else 0.0)
        np.testing.assert_array_equal(every, x[::2])
        check_gradients(_sub_tiles, 1, [a, n], outs)


@adjit.kernel
def _empty_slice(src: adjit.array2d(dtype=float)):
    t = adjit.tile_load(src, shape=(2, 2))
    adjit.tile_store(src, t[1:1, :])


def test_empty_tile_slice_is_a_value_error():
    with pytest.raises(ValueError, match="zero-length axis"):  # Warp's words ("empty tile|zero-length")
        adjit.launch(_empty_slice, dim=1, inputs=[adjit.zeros((2, 2), dtype=float)])


@adjit.kernel
def _assign_through_row(src: adjit.array2d(dtype=float)):
    a = adjit.tile_load(src, shape=(2, 2))
    b = adjit.tile_zeros(shape=(2, 2), dtype=float)
    row = b[1]
    adjit.tile_assign(row, a[0])
    adjit.tile_store(src, b)


@adjit.kernel
def _add_through_view(src: adjit.array2d(dtype=float)):
    a = adjit.tile_load(src, shape=(2, 2))
    v = adjit.tile_view(a, offset=(0, 0), shape=(1, 2))
    v += adjit.tile_ones(shape=(1, 2), dtype=float)
    adjit.tile_store(src, a)


@adjit.kernel
def _func_writes_view(src: adjit.array2d(dtype=float)):
    a = adjit.tile_load(src, shape=(2, 2))
    v = a[1]
    _set_corner_1d(v)
    adjit.tile_store(src, a)


@adjit.func
def _set_corner_1d(t: adjit.tile[float]):
    t[0] = 1.0


@adjit.kernel
def _axpy_into_broadcast(bias_in: adjit.array(dtype=float), src_in: adjit.array2d(dtype=float)):
    bias = adjit.tile_load(bias_in, shape=4)
    dest = adjit.tile_broadcast(bias, shape=(2, 4))
    adjit.tile_axpy(1.0, adjit.tile_load(src_in, shape=(2, 4)), dest)
    adjit.tile_store(src_in, dest)


@adjit.kernel
def _rebound_to_own_view(a: adjit.array2d(dtype=float), out: adjit.array(dtype=float)):
    t = adjit.tile_load(a, shape=(2, 3))
    t = adjit.tile_reshape(t, shape=6)  # the old t has no other name: writing the view is unobservable
    t += adjit.tile_ones(shape=6, dtype=float)
    u = adjit.tile_transpose(adjit.tile_load(a, shape=(2, 3)))  # a view of a temporary
    u += adjit.tile_ones(shape=(3, 2), dtype=float)
    adjit.tile_store(out, t + adjit.tile_reshape(adjit.tile_transpose(u), shape=6))


def test_writes_through_sub_tiles_are_refused():
    """A sub-tile is a view in Warp (writes change the parent tile) and a copy in adjit: writing one is an error
    naming the view, never a silently lost write."""
    a = adjit.zeros((2, 2), dtype=float)
    assert "'row', a view of the tile 'b' (b[1])" in _compile_error(_assign_through_row, [a])
    assert "'v', a view of the tile 'a'" in _compile_error(_add_through_view, [a])
    assert "_set_corner_1d() (it writes its tile parameter)" in _compile_error(_func_writes_view, [a])
    bias, src = adjit.zeros(4, dtype=float), adjit.zeros((2, 4), dtype=float)
    assert "'dest', a view of the tile 'bias'" in _compile_error(_axpy_into_broadcast, [bias, src])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = adjit.zeros(6, dtype=float)
    adjit.launch_tiled(_rebound_to_own_view, dim=1, inputs=[adjit.array(x), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), 2 * (x.reshape(6) + 1))


@adjit.kernel
def _array_slices(a: adjit.array2d(dtype=adjit.float64), n: int, o1: adjit.array2d(dtype=adjit.float64),
                  o2: adjit.array(dtype=adjit.float64), o3: adjit.array2d(dtype=adjit.float64),
                  o4: adjit.array2d(dtype=adjit.float64)):
    adjit.tile_store(o1, adjit.tile_load(a[::2, 1:], shape=(4, 8)))  # partly outside the slice: zeros
    adjit.tile_store(o2, adjit.tile_load(a[n, ::-3], shape=4))  # a runtime index, a negative step
    adjit.tile_store(o3[1:, ::2], adjit.tile_load(a, shape=(5, 5)))  # stored into a slice: clipped to it
    t = adjit.tile_load(a[-3:-1, -10:], shape=(3, 3), offset=(1, 0))  # negative bounds, from the end
    adjit.tile_atomic_add(o4[:, 1:], t * t)


def _placed(shape, block):
    out = np.zeros(shape)
    out[:min(shape[0], block.shape[0]), :min(shape[1], block.shape[1])] = block[:shape[0], :shape[1]]
    return out


def test_tiles_load_from_and_store_to_array_slices():
    """tile_load / tile_store / tile_atomic_add take a slice of an array (constant bounds, numpy's rules, runtime
    plain indices), as Warp does; the slice's extents bound the tile; gradients reach the array."""
    x = np.random.default_rng(8).standard_normal((5, 7))
    a = adjit.array(x, requires_grad=True)
    outs = [adjit.zeros(s, dtype=adjit.float64, requires_grad=True) for s in ((4, 8), 4, (4, 6), (3, 4))]
    adjit.launch_tiled(_array_slices, dim=1, inputs=[a, 2, *outs], block_dim=1)
    o1, o2, o3, o4 = (o.numpy() for o in outs)
    np.testing.assert_array_equal(o1, _placed((4, 8), x[::2, 1:]))
    np.testing.assert_array_equal(o2, _placed((1, 4), x[2:3, ::-3])[0])
    e3 = np.zeros((4, 6))
    e3[1:, ::2] = x[:3, :3]
    np.testing.assert_array_equal(o3, e3)
    e4 = np.zeros((3, 4))
    e4[:, 1:] = _placed((3, 3), x[-3:-1, -10:][1:] ** 2)
    np.testing.assert_allclose(o4, e4, rtol=1e-12)
    check_gradients(_array_slices, 1, [a, 2], outs)


@adjit.kernel
def _full_dtypes(x: adjit.array(dtype=adjit.float64), f: adjit.array(dtype=float), i: adjit.array(dtype=int),
                 c: adjit.array(dtype=float), d: adjit.array(dtype=adjit.float64)):
    adjit.tile_store(f, adjit.tile_full(shape=(3,), value=1.5))
    adjit.tile_store(i, adjit.tile_full(3, value=adjit.int32(7)))
    adjit.tile_store(i, adjit.tile_full(2, value=-4), offset=1)
    adjit.tile_store(d, adjit.tile_full(shape=3, value=x[0] * 2.0, dtype=None))
    adjit.tile_store(c, adjit.tile_full(shape=3, value=7, dtype=float))  # a dtype still converts


def test_tile_full_takes_its_dtype_from_the_value():
    """As Warp's: tile_full without a dtype makes a tile of the value's type (float32 / int32 for literals)."""
    f, i, d, c = (adjit.zeros(3, dtype=t) for t in (float, int, adjit.float64, float))
    x = adjit.array(np.array([0.25]), requires_grad=True)
    d.requires_grad = True
    adjit.launch_tiled(_full_dtypes, dim=1, inputs=[x, f, i, c, d], block_dim=1)
    np.testing.assert_array_equal(f.numpy(), [1.5] * 3)
    np.testing.assert_array_equal(i.numpy(), [7, -4, -4])
    np.testing.assert_array_equal(d.numpy(), [0.5] * 3)
    np.testing.assert_array_equal(c.numpy(), [7.0] * 3)
    check_gradients(_full_dtypes, 1, [x, f, i, c], [d])


@adjit.kernel
def _print_tiles(x: adjit.array(dtype=adjit.int32)):
    t = adjit.tile_load(x, shape=(8,), storage="register")
    adjit.print(t)
    print(adjit.tile_full(shape=(2, 3), value=0.25, storage="shared"))
    print(adjit.tile_reshape(t, shape=(2, 2, 2)))


def test_print_tiles_as_warp(capfd):
    """print(t) prints a tile as Warp's CPU does: its elements (floats as %g), then its shape and storage."""
    adjit.launch_tiled(_print_tiles, dim=1, inputs=[adjit.array(np.arange(1, 9, dtype=np.int32))], block_dim=1)
    adjit.synchronize()
    assert capfd.readouterr().out == (
        "[1 2 3 4 5 6 7 8] = tile(shape=(8), storage=register)\n"
        "[[0.25 0.25 0.25]\n [0.25 0.25 0.25]] = tile(shape=(2,3), storage=shared)\n"
        "[[[1 2]\n  [3 4]]\n\n [[5 6]\n  [7 8]]] = tile(shape=(2,2,2), storage=register)\n")


@adjit.kernel
def _mixed_matmul(a: adjit.array2d(dtype=float), b: adjit.array2d(dtype=adjit.float64),
                  h: adjit.array2d(dtype=adjit.float16), c: adjit.array2d(dtype=adjit.float64),
                  d: adjit.array2d(dtype=adjit.float64)):
    x = adjit.tile_load(a, shape=(3, 4))
    y = adjit.tile_load(b, shape=(4, 2))
    s = adjit.tile_zeros(shape=(3, 2), dtype=adjit.float64)
    adjit.tile_matmul(x, y, s)  # into a float64 out: a's elements converted to float64
    adjit.tile_matmul(x, adjit.tile_load(h, shape=(4, 2)), s)  # float16 b, as Warp's example_tile_matmul
    adjit.tile_store(c, s)
    adjit.tile_store(d, adjit.tile_matmul(y, adjit.tile_transpose(y)))  # no out: a's dtype


def test_tile_matmul_of_mixed_dtypes():
    """As Warp's CPU: tile_matmul converts a's and b's elements to out's dtype (without out: a's) and computes in
    it, so a float32 a and a float16 b accumulate into a float64 tile."""
    rng = np.random.default_rng(3)
    xa, xb = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2))
    xh = rng.standard_normal((4, 2)).astype(np.float16)
    a, b = adjit.array(xa, requires_grad=True), adjit.array(xb, requires_grad=True)
    h = adjit.array(xh)
    c = adjit.zeros((3, 2), dtype=adjit.float64, requires_grad=True)
    d = adjit.zeros((4, 4), dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_mixed_matmul, dim=1, inputs=[a, b, h, c, d], block_dim=1)
    a64 = xa.astype(np.float64)
    np.testing.assert_allclose(c.numpy(), a64 @ xb + a64 @ xh.astype(np.float64), rtol=1e-12)
    np.testing.assert_allclose(d.numpy(), xb @ xb.T, rtol=1e-12)
    check_gradients(_mixed_matmul, 1, [a, b, h], [c, d])


@adjit.kernel
def _big_runtime_extract(a: adjit.array2d(dtype=adjit.float64), ij: adjit.array(dtype=int),
                         out: adjit.array(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(16, 16))
    out[0] = t[ij[0], ij[1]] * adjit.tile_extract(t, ij[1], ij[0])


def test_runtime_element_of_a_tile_of_more_than_64_elements():
    """A runtime t[i, j] of a tile over 64 elements (adjit's kernel-vector cap) compiles (it built its zero as a
    kernel vector of the tile's size); Warp's example_tile_block_cholesky reads a 16x16 tile so."""
    x = np.random.default_rng(6).standard_normal((16, 16))
    a = adjit.array(x, requires_grad=True)
    out = adjit.zeros(1, dtype=adjit.float64, requires_grad=True)
    ij = adjit.array(np.array([3, 11], dtype=np.int32))
    adjit.launch_tiled(_big_runtime_extract, dim=1, inputs=[a, ij, out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), [x[3, 11] * x[11, 3]], rtol=1e-12)
    check_gradients(_big_runtime_extract, 1, [a, ij], [out])


@adjit.kernel
def _tile_random(seed: int, x: adjit.array3d(dtype=int), y: adjit.array3d(dtype=float),
                 xr: adjit.array3d(dtype=int), yr: adjit.array3d(dtype=float), after: adjit.array(dtype=int)):
    i = adjit.tid()
    rng = adjit.rand_init(seed, i)
    adjit.tile_store(x[i], adjit.tile_randi(shape=(2, 3), rng=rng))
    adjit.tile_store(y[i], adjit.tile_randf((2, 3), rng))
    adjit.tile_store(xr[i], adjit.tile_randi(shape=(2, 3), rng=rng, min=-5, max=5))
    adjit.tile_store(yr[i], adjit.tile_randf(shape=(2, 3), rng=rng, min=-5.0, max=5.0))
    after[i] = adjit.randi(rng)  # rng is not advanced by the tile draws


def _pcg(s):
    s = np.uint64(s) & np.uint64(0xFFFFFFFF)
    b = (s * np.uint64(747796405) + np.uint64(2891336453)) & np.uint64(0xFFFFFFFF)
    c = (((b >> ((b >> np.uint64(28)) + np.uint64(4))) ^ b) * np.uint64(277803737)) & np.uint64(0xFFFFFFFF)
    return int((c >> np.uint64(22)) ^ c)


def test_tile_randi_and_randf_draw_as_warps_cpu():
    """tile_randi / tile_randf as Warp's CPU: the state pcg(rng), then one draw per element in row-major order
    (randi: the state as an int32, with bounds state % (max - min) + min unsigned; randf: (state >> 8) / 2^24)."""
    seed, n = 42, 3
    x, xr = adjit.zeros((n, 2, 3), dtype=int), adjit.zeros((n, 2, 3), dtype=int)
    y, yr = adjit.zeros((n, 2, 3), dtype=float), adjit.zeros((n, 2, 3), dtype=float)
    after = adjit.zeros(n, dtype=int)
    adjit.launch_tiled(_tile_random, dim=n, inputs=[seed, x, y, xr, yr, after], block_dim=1)
    for i in range(n):
        rng = _pcg(seed + _pcg(i))
        states, s = [], _pcg(rng)
        for _ in range(6):
            s = _pcg(s)
            states.append(s)
        st = np.array(states, dtype=np.uint32)
        np.testing.assert_array_equal(x.numpy()[i].ravel(), st.view(np.int32))
        np.testing.assert_array_equal(y.numpy()[i].ravel(), (st >> 8).astype(np.float32) * np.float32(2.0 ** -24))
        np.testing.assert_array_equal(xr.numpy()[i].ravel(), (st % np.uint32(10)).astype(np.int32) - 5)
        u = (st >> 8).astype(np.float32) * np.float32(2.0 ** -24)
        np.testing.assert_array_equal(yr.numpy()[i].ravel(), np.float32(10.0) * u + np.float32(-5.0))
        assert after.numpy()[i] == np.uint32(_pcg(rng)).view(np.int32)


@adjit.kernel
def _dtype_of(a: adjit.array2d(dtype=adjit.float64), out: adjit.array2d(dtype=adjit.float64)):
    i = adjit.tid()
    t = adjit.tile_zeros(shape=(2, 3), dtype=a.dtype)
    u = adjit.tile_ones(shape=(2, 3), dtype=t.dtype)
    v = adjit.tile_astype(adjit.tile_load(a, shape=(2, 3)), dtype=a[i].dtype)
    adjit.tile_store(out, t + u + adjit.tile_full(shape=(2, 3), value=0.0, dtype=out.dtype) + v)


def test_tile_dtype_from_an_array_or_tile_in_the_kernel():
    """dtype=a.dtype (an array parameter, a row, a tile) as Warp's kernels write it."""
    x = np.arange(6.0).reshape(2, 3)
    out = adjit.zeros((2, 3), dtype=adjit.float64)
    adjit.launch_tiled(_dtype_of, dim=1, inputs=[adjit.array(x), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), x + 1)


@adjit.kernel
def _assign_at_runtime(a: adjit.array2d(dtype=adjit.float64), b: adjit.array2d(dtype=adjit.float64), n: int,
                       out: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(4, 5))
    for i in range(2):
        adjit.tile_assign(t, adjit.tile_load(b, shape=(2, 2), offset=(i * 2, 0)) * 3.0, offset=(i * 2, n))
    adjit.tile_store(out, t)


def test_tile_assign_at_runtime_offsets():
    """tile_assign's offsets may be runtime ints (a loop's, a parameter), as in Warp; an offset that leaves the
    tile writes nothing (as a runtime element write outside it)."""
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 2))
    for n in (0, 3, 4):
        a, b = adjit.array(x, requires_grad=True), adjit.array(y, requires_grad=True)
        out = adjit.zeros((4, 5), dtype=adjit.float64, requires_grad=True)
        adjit.launch_tiled(_assign_at_runtime, dim=1, inputs=[a, b, n, out], block_dim=1)
        expected = x.copy()
        if n + 2 <= 5:
            expected[:, n:n + 2] = 3 * y
        np.testing.assert_array_equal(out.numpy(), expected)
        check_gradients(_assign_at_runtime, 1, [a, b, n], [out])


@adjit.kernel
def _sub_tile_writes(a: adjit.array2d(dtype=adjit.float64), r: adjit.array(dtype=adjit.float64), n: int,
                     out: adjit.array2d(dtype=adjit.float64)):
    t = adjit.tile_load(a, shape=(4, 5))
    t[1:] = t[:-1]  # the right side is read first (numpy's semantics)
    t[0] = adjit.tile_load(r, shape=5) * 2.0  # a row
    t[:, 4] = adjit.tile_full(shape=4, value=7.0, dtype=adjit.float64)  # a column
    t[n, ::2] = adjit.tile_load(r, shape=3)  # a runtime row (n outside the tile: nothing written)
    adjit.tile_store(out, t)


@adjit.kernel
def _sub_tile_mismatch(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    t[0:2, :] = adjit.tile_ones(shape=(3, 4), dtype=float)


@adjit.kernel
def _constant_index_out_of_bounds(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    adjit.tile_store(a, adjit.tile_reshape(t[100, :], shape=(1, 4)))


@adjit.kernel
def _scalar_into_selection(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    t[0:2, :] = 1.0
    adjit.tile_store(a, t)


@adjit.kernel
def _compound_into_selection(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    t[0] += adjit.tile_ones(shape=4, dtype=float)
    adjit.tile_store(a, t)


@adjit.kernel
def _index_tile_with_slice(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    adjit.tile_store(a, t[adjit.tile_arange(0, 2, dtype=int), 1:3])


@adjit.kernel
def _view_out_of_bounds(a: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(4, 4))
    adjit.tile_store(a, adjit.tile_reshape(adjit.tile_view(t, offset=(4,)), shape=(1, 4)))


def test_writes_to_sub_tiles():
    """As Warp's: t[i] = row, t[a:b, :] = u, t[:, j] = column, t[n, ::2] = u with a runtime n; a shape mismatch,
    a scalar into a selection, a compound assignment to one and a constant index out of bounds are ValueErrors
    in Warp's words, as is an index tile without ':' on the other axes."""
    rng = np.random.default_rng(21)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal(5)
    for n in (2, 4):
        a, r = adjit.array(x, requires_grad=True), adjit.array(y, requires_grad=True)
        out = adjit.zeros((4, 5), dtype=adjit.float64, requires_grad=True)
        adjit.launch_tiled(_sub_tile_writes, dim=1, inputs=[a, r, n, out], block_dim=1)
        e = x.copy()
        e[1:] = e[:-1].copy()
        e[0] = 2 * y
        e[:, 4] = 7.0
        if n < 4:
            e[n, ::2] = y[:3]
        np.testing.assert_array_equal(out.numpy(), e)
        check_gradients(_sub_tile_writes, 1, [a, r, n], [out])
    a = adjit.zeros((4, 4), dtype=float)
    with pytest.raises(ValueError, match="shape mismatch"):
        adjit.launch(_sub_tile_mismatch, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="out of bounds"):
        adjit.launch(_constant_index_out_of_bounds, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="requires a tile of matching shape"):
        adjit.launch(_scalar_into_selection, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="Compound assignment to a tile view"):
        adjit.launch(_compound_into_selection, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="requires ':' on all other axes"):
        adjit.launch(_index_tile_with_slice, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="out of bounds"):
        adjit.launch(_view_out_of_bounds, dim=1, inputs=[a])


@adjit.kernel
def _index_tiles(src: adjit.array2d(dtype=adjit.float64), idx: adjit.array(dtype=int),
                 rows: adjit.array2d(dtype=adjit.float64), row: adjit.array(dtype=adjit.float64),
                 cols: adjit.array2d(dtype=adjit.float64), picks: adjit.array(dtype=adjit.float64)):
    t = adjit.tile_load(src, shape=(6, 8))
    adjit.tile_store(rows, t[adjit.tile_arange(0, 3, dtype=int) * 2, :])
    adjit.tile_store(row, t[adjit.tile_arange(0, 3, dtype=int) * 2][1])
    i = adjit.tile_load(idx, shape=4)
    adjit.tile_store(cols, adjit.tile_transpose(t[:, i]))
    adjit.tile_store(picks, t[i][:, 2])


def test_tile_indexed_by_an_index_tile():
    """As Warp's advanced indexing: t[idx, :] with a 1-d int tile gathers (negative indices from the end,
    repeats allowed), at the index tile's place in the result, with ':' on every other axis (as Warp requires);
    gradients flow to the gathered elements."""
    x = np.random.default_rng(13).standard_normal((6, 8))
    ix = np.array([1, -1, 3, 3], dtype=np.int32)
    src = adjit.array(x, requires_grad=True)
    outs = [adjit.zeros(s, dtype=adjit.float64, requires_grad=True) for s in ((3, 8), 8, (4, 6), 4)]
    adjit.launch_tiled(_index_tiles, dim=1, inputs=[src, adjit.array(ix), *outs], block_dim=1)
    rows, row, cols, picks = (o.numpy() for o in outs)
    np.testing.assert_array_equal(rows, x[[0, 2, 4]])
    np.testing.assert_array_equal(row, x[2])
    np.testing.assert_array_equal(cols, x[:, ix].T)
    np.testing.assert_array_equal(picks, x[ix, 2])
    check_gradients(_index_tiles, 1, [src, adjit.array(ix)], outs)


@adjit.kernel
def _matmul_beta(a: adjit.array2d(dtype=adjit.float64), b: adjit.array2d(dtype=adjit.float64),
                 c: adjit.array2d(dtype=adjit.float64), beta: adjit.float64, out: adjit.array2d(dtype=adjit.float64)):
    s = adjit.tile_load(c, shape=(3, 2))
    adjit.tile_matmul(adjit.tile_load(a, shape=(3, 4)), adjit.tile_load(b, shape=(4, 2)), s, beta=beta)
    adjit.tile_store(out, s)


def test_tile_matmul_with_beta_zero_does_not_read_out():
    """As BLAS and Warp: with beta = 0, tile_matmul's out is not read, so a NaN or inf there does not reach the
    result (0 * NaN would); other betas scale it, with gradients."""
    rng = np.random.default_rng(17)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    junk = np.full((3, 2), np.nan)
    junk[::2] = np.inf
    out = adjit.zeros((3, 2), dtype=adjit.float64)
    adjit.launch_tiled(_matmul_beta, dim=1, inputs=[adjit.array(x), adjit.array(y), adjit.array(junk), 0.0, out],
                       block_dim=1)
    np.testing.assert_allclose(out.numpy(), x @ y, rtol=1e-12)
    z = rng.standard_normal((3, 2))
    a, b, c = (adjit.array(v, requires_grad=True) for v in (x, y, z))
    out = adjit.zeros((3, 2), dtype=adjit.float64, requires_grad=True)
    adjit.launch_tiled(_matmul_beta, dim=1, inputs=[a, b, c, 0.5, out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), x @ y + 0.5 * z, rtol=1e-12)
    check_gradients(_matmul_beta, 1, [a, b, c, 0.5], [out])
