"""Tile factorizations, solves, sorting and gathers (adjit/compiler/tile_linalg.py):
each builtin against numpy (float64 references), gradients against float64
finite differences, and bad calls as errors naming this file."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

F64 = adjit.float64
N, K = 4, 2


def _spd(rng, n=N):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


# --- Cholesky ---------------------------------------------------------------------------------------

@adjit.kernel
def _cholesky(a: adjit.array2d(dtype=F64), lower: adjit.array2d(dtype=F64), upper: adjit.array2d(dtype=F64)):
    t = adjit.tile_load(a, shape=(N, N), offset=(0, 0))
    adjit.tile_store(lower, adjit.tile_cholesky(t), offset=(0, 0))
    u = adjit.tile_load(a, shape=(N, N), offset=(0, 0))
    adjit.tile_cholesky_inplace(u, fill_mode="upper")
    adjit.tile_store(upper, u, offset=(0, 0))


def test_cholesky_lower_and_upper_read_their_triangle():
    rng = np.random.default_rng(10)
    x = _spd(rng)
    lower_l, upper_u = np.linalg.cholesky(x), np.linalg.cholesky(x).T
    for junk in (False, True):  # garbage in the triangle not read changes nothing
        y = x.copy()
        if junk:
            y[np.triu_indices(N, 1)] = 1e3
            yu = x.copy()
            yu[np.tril_indices(N, -1)] = -1e3
        a = adjit.array(y)
        lower, upper = adjit.zeros((N, N), dtype=F64), adjit.zeros((N, N), dtype=F64)
        adjit.launch(_cholesky, dim=1, inputs=[a, lower, upper])
        np.testing.assert_allclose(lower.numpy(), lower_l, rtol=1e-12, atol=1e-14)
        if junk:
            adjit.launch(_cholesky, dim=1, inputs=[adjit.array(yu), lower, upper])
        np.testing.assert_allclose(upper.numpy(), upper_u, rtol=1e-12, atol=1e-14)
    a = adjit.array(x)
    check_gradients(_cholesky, 1, [a], [lower, upper])


def test_cholesky_gradient_is_the_triangles_and_forward_mode_agrees():
    rng = np.random.default_rng(11)
    x = _spd(rng)
    a = adjit.array(x)
    lower, upper = adjit.zeros((N, N), dtype=F64), adjit.zeros((N, N), dtype=F64)
    # A symmetric direction: the lower factor's change from the lower triangle, the upper's from the upper.
    d = rng.standard_normal((N, N))
    d = d + d.T
    (dl, du) = adjit.jvp(_cholesky, 1, [a], [d], outputs=[lower, upper])
    eps = 1e-6
    fd = (np.linalg.cholesky(x + eps * d) - np.linalg.cholesky(x - eps * d)) / (2 * eps)
    np.testing.assert_allclose(dl.numpy(), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(du.numpy(), fd.T, rtol=1e-6, atol=1e-8)


# --- solves -------------------------------------------------------------------------------------------

@adjit.kernel
def _solves(a: adjit.array2d(dtype=F64), y: adjit.array(dtype=F64), ys: adjit.array2d(dtype=F64),
            x1: adjit.array2d(dtype=F64), x2: adjit.array3d(dtype=F64)):
    t = adjit.tile_load(a, shape=(N, N), offset=(0, 0))
    v = adjit.tile_load(y, shape=N, offset=0)
    m = adjit.tile_load(ys, shape=(N, K), offset=(0, 0))
    lo = adjit.tile_cholesky(t)
    up = adjit.tile_cholesky(t, fill_mode="upper")
    # 1-d right-hand sides: rows of x1
    adjit.tile_store(x1, adjit.tile_reshape(adjit.tile_cholesky_solve(lo, v), shape=(1, N)), offset=(0, 0))
    adjit.tile_store(x1, adjit.tile_reshape(adjit.tile_lower_solve(t, v), shape=(1, N)), offset=(1, 0))
    adjit.tile_store(x1, adjit.tile_reshape(adjit.tile_upper_solve(t, v), shape=(1, N)), offset=(2, 0))
    w = v * 1.0
    adjit.tile_cholesky_solve_inplace(up, w, fill_mode="upper")
    adjit.tile_store(x1, adjit.tile_reshape(w, shape=(1, N)), offset=(3, 0))
    # 2-d (one right-hand side per column): slices of x2
    adjit.tile_store(x2, adjit.tile_reshape(adjit.tile_cholesky_solve(up, m, "upper"), shape=(1, N, K)),
                     offset=(0, 0, 0))
    p = m * 1.0
    adjit.tile_lower_solve_inplace(lo, p)
    adjit.tile_store(x2, adjit.tile_reshape(p, shape=(1, N, K)), offset=(1, 0, 0))
    q = m * 1.0
    adjit.tile_upper_solve_inplace(up, q)
    adjit.tile_store(x2, adjit.tile_reshape(q, shape=(1, N, K)), offset=(2, 0, 0))
    r = m * 1.0
    adjit.tile_cholesky_solve_inplace(lo, r)
    adjit.tile_store(x2, adjit.tile_reshape(r, shape=(1, N, K)), offset=(3, 0, 0))


def test_solves_with_one_and_several_right_hand_sides():
    rng = np.random.default_rng(12)
    x = _spd(rng)
    # the triangular solves read only their triangle (of the full matrix here)
    yv, ym = rng.standard_normal(N), rng.standard_normal((N, K))
    a, y, ys = adjit.array(x), adjit.array(yv), adjit.array(ym)
    x1, x2 = adjit.zeros((4, N), dtype=F64), adjit.zeros((4, N, K), dtype=F64)
    adjit.launch(_solves, dim=1, inputs=[a, y, ys, x1, x2])
    low = np.linalg.cholesky(x)
    expected1 = [np.linalg.solve(x, yv), np.linalg.solve(np.tril(x), yv), np.linalg.solve(np.triu(x), yv),
                 np.linalg.solve(x, yv)]
    expected2 = [np.linalg.solve(x, ym), np.linalg.solve(low, ym), np.linalg.solve(low.T, ym), np.linalg.solve(x, ym)]
    np.testing.assert_allclose(x1.numpy(), expected1, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(x2.numpy(), expected2, rtol=1e-11, atol=1e-13)
    check_gradients(_solves, 1, [a, y, ys], [x1, x2], max_entries=8)


@adjit.kernel
def _solve32(a: adjit.array2d(dtype=float), y: adjit.array2d(dtype=float), x: adjit.array2d(dtype=float)):
    t = adjit.tile_load(a, shape=(3, 3), offset=(0, 0))
    adjit.tile_store(x, adjit.tile_cholesky_solve(adjit.tile_cholesky(t), adjit.tile_load(y, shape=(3, 2))))


def test_float32_cholesky_solve():
    rng = np.random.default_rng(13)
    m, y = _spd(rng, 3), rng.standard_normal((3, 2))
    x = adjit.zeros((3, 2), dtype=float)
    adjit.launch(_solve32, dim=1, inputs=[adjit.array(m.astype(np.float32)), adjit.array(y.astype(np.float32)), x])
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(m, y), rtol=1e-5, atol=1e-6)


@adjit.kernel
def _zero_diagonal(a: adjit.array2d(dtype=F64), y: adjit.array(dtype=F64), out: adjit.array(dtype=F64)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_store(out, adjit.tile_lower_solve(t, adjit.tile_load(y, shape=2, offset=0)), offset=0)


def test_a_zero_on_the_diagonal_divides_by_one_as_warp():
    a = adjit.array(np.array([[0.0, 0.0], [3.0, 2.0]]), requires_grad=True)
    y = adjit.array(np.array([5.0, 7.0]), requires_grad=True)
    out = adjit.zeros(2, dtype=F64, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(_zero_diagonal, dim=1, inputs=[a, y, out])
    np.testing.assert_allclose(out.numpy(), [5.0, (7.0 - 3.0 * 5.0) / 2.0])
    out.grad = adjit.array(np.ones(2))
    tape.backward()
    assert np.all(np.isfinite(a.grad.numpy())) and np.all(np.isfinite(y.grad.numpy()))


# --- sorting ------------------------------------------------------------------------------------------

def _sort_kernel(n, key_dtype):
    @adjit.kernel
    def sort(keys: adjit.array(dtype=key_dtype), values: adjit.array(dtype=F64),
             out_keys: adjit.array(dtype=key_dtype), out_values: adjit.array(dtype=F64)):
        k = adjit.tile_load(keys, shape=n, offset=0)
        v = adjit.tile_load(values, shape=n, offset=0)
        adjit.tile_sort(k, v)
        adjit.tile_store(out_keys, k, offset=0)
        adjit.tile_store(out_values, v * v, offset=0)
    return sort


_SORTS = {}


def _sort(n, key_dtype):
    if (n, key_dtype) not in _SORTS:
        _SORTS[n, key_dtype] = _sort_kernel(n, key_dtype)
    return _SORTS[n, key_dtype]


@pytest.mark.parametrize("n,key_dtype", [(1, int), (5, int), (8, int), (11, int), (11, adjit.uint32)])
def test_sort_is_stable_and_moves_values_with_their_keys(n, key_dtype):
    """Lengths that are powers of two and not (Warp sorts both); many equal keys."""
    rng = np.random.default_rng(20 + n)
    unsigned = key_dtype is adjit.uint32
    keys = (rng.integers(0, 2**32 - 1, n) if unsigned else rng.integers(-3, 3, n)).astype(
        np.uint32 if unsigned else np.int32)
    if unsigned:
        keys[::3] = keys[0]
    values = rng.standard_normal(n)
    kernel = _sort(n, key_dtype)
    k, v = adjit.array(keys), adjit.array(values)
    ok, ov = adjit.zeros(n, dtype=key_dtype), adjit.zeros(n, dtype=F64)
    adjit.launch(kernel, dim=1, inputs=[k, v, ok, ov])
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(ok.numpy(), keys[order])
    np.testing.assert_array_equal(ov.numpy(), values[order] ** 2)
    check_gradients(kernel, 1, [k, v], [ok, ov])  # d out_values[i] / d values[order[i]] = 2 values[order[i]]


def test_sort_float_keys_with_ties_signed_zeros_and_nans():
    keys = np.array([2.5, np.nan, -1.0, 0.0, 2.5, -0.0, -np.inf, np.nan, 7.0, -1.0, np.inf], np.float64)
    n = keys.size
    values = np.arange(1.0, n + 1)
    kernel = _sort(n, F64)
    ok, ov = adjit.zeros(n, dtype=F64), adjit.zeros(n, dtype=F64)
    adjit.launch(kernel, dim=1, inputs=[adjit.array(keys), adjit.array(values), ok, ov])
    order = np.argsort(keys, kind="stable")  # numpy: NaNs last, -0.0 == 0.0
    np.testing.assert_array_equal(ok.numpy(), keys[order])
    np.testing.assert_array_equal(ov.numpy(), values[order] ** 2)


def test_sort_gradients_flow_to_float_keys():
    rng = np.random.default_rng(30)
    keys, values = rng.standard_normal(6), rng.standard_normal(6)  # distinct keys: no ties to cross
    kernel = _sort(6, F64)
    k, v = adjit.array(keys), adjit.array(values)
    ok, ov = adjit.zeros(6, dtype=F64), adjit.zeros(6, dtype=F64)
    adjit.launch(kernel, dim=1, inputs=[k, v, ok, ov])
    np.testing.assert_array_equal(ok.numpy(), np.sort(keys))
    check_gradients(kernel, 1, [k, v], [ok, ov])


# --- tile_from_thread -----------------------------------------------------------------------------------

@adjit.kernel
def _from_thread(x: adjit.array(dtype=F64), idx: adjit.array(dtype=int), t: int, out: adjit.array2d(dtype=F64)):
    i = adjit.tid()
    a = adjit.tile_from_thread(shape=(1, 3), value=x[i] * 2.0, thread_idx=0)
    adjit.tile_store(out, a, offset=(i, 0))
    b = adjit.tile_from_thread(shape=2, value=i * 10, thread_idx=t, storage="shared")
    adjit.tile_store(idx, b + adjit.tile_arange(2, dtype=int), offset=2 * i)


def test_tile_from_thread_is_thread_zeros_value_on_the_cpu():
    xs = np.array([1.0, -2.5, 4.0])
    x, out, idx = adjit.array(xs), adjit.zeros((3, 3), dtype=F64), adjit.zeros(6, dtype=int)
    adjit.launch_tiled(_from_thread, dim=3, inputs=[x, idx, 0, out], block_dim=8)
    np.testing.assert_array_equal(out.numpy(), np.repeat(2 * xs[:, None], 3, axis=1))
    np.testing.assert_array_equal(idx.numpy(), [0, 1, 10, 11, 20, 21])
    check_gradients(_from_thread, 3, [x, idx, 0], [out])


def test_tile_from_thread_of_another_thread_is_an_error():
    x, out, idx = adjit.array(np.ones(1)), adjit.zeros((1, 3), dtype=F64), adjit.zeros(2, dtype=int)
    with pytest.raises(adjit.AdjitError, match=r"test_tile_linalg\.py:\d+.*out of range|out of range.*test_tile_linalg"):
        adjit.launch(_from_thread, dim=1, inputs=[x, idx, 1, out])


# --- indexed loads, stores and atomic adds -------------------------------------------------------

@adjit.kernel
def _indexed(src: adjit.array2d(dtype=F64), rows: adjit.array(dtype=int), o: int, loaded: adjit.array2d(dtype=F64),
             dst: adjit.array2d(dtype=F64), acc: adjit.array2d(dtype=F64)):
    ind = adjit.tile_load(rows, shape=3, offset=0)
    t = adjit.tile_load_indexed(src, indices=ind, shape=(3, 2), offset=(o, 1), axis=0)
    adjit.tile_store(loaded, t, offset=(0, 0))
    adjit.tile_store_indexed(dst, adjit.tile_arange(2, dtype=int) * 2, t * t, offset=(0, o), axis=1)
    adjit.tile_atomic_add_indexed(acc, indices=ind, t=t)


@adjit.kernel
def _indexed_old(src: adjit.array2d(dtype=F64), rows: adjit.array(dtype=int), acc: adjit.array2d(dtype=F64),
                 prev: adjit.array2d(dtype=F64)):
    ind = adjit.tile_load(rows, shape=3, offset=0)
    t = adjit.tile_load(src, shape=(3, 2), offset=(0, 0))
    adjit.tile_store(prev, adjit.tile_atomic_add_indexed(acc, ind, t, offset=(0, 0), axis=0), offset=(0, 0))


def _indexed_np(x, rows, o, dst, acc):
    """Warp's rule: along the axis offset + indices[p], elsewhere offset + position; outside: 0 / not written."""
    t = np.zeros((3, 2))
    for p, r in enumerate(rows):
        for c in range(2):
            i, j = o + r, 1 + c
            if 0 <= i < x.shape[0] and 0 <= j < x.shape[1]:
                t[p, c] = x[i, j]
    for p in range(3):
        for c, col in enumerate([0, 2]):
            if 0 <= o + col < dst.shape[1]:
                dst[p, o + col] = t[p, c] ** 2
    for p, r in enumerate(rows):
        for c in range(2):
            if 0 <= r < acc.shape[0]:
                acc[r, c] += t[p, c]
    return t


@pytest.mark.parametrize("rows,o", [([2, 0, 1], 1), ([3, -1, 3], 1), ([0, 4, 2], 2), ([1, 2, 0], -1)])
def test_indexed_load_store_and_atomic_add(rows, o):
    """Repeated indices add up; indices and offsets outside the arrays read zero and write nothing."""
    rng = np.random.default_rng(40)
    x = rng.standard_normal((5, 4))
    dst0, acc0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    src, ind = adjit.array(x), adjit.array(np.array(rows, np.int32))
    loaded = adjit.zeros((3, 2), dtype=F64)
    dst, acc = adjit.array(dst0), adjit.array(acc0)
    adjit.launch(_indexed, dim=1, inputs=[src, ind, o, loaded, dst, acc])
    dst_np, acc_np = dst0.copy(), acc0.copy()
    t = _indexed_np(x, rows, o, dst_np, acc_np)
    np.testing.assert_allclose(loaded.numpy(), t, rtol=1e-15)
    np.testing.assert_allclose(dst.numpy(), dst_np, rtol=1e-15)
    np.testing.assert_allclose(acc.numpy(), acc_np, rtol=1e-15)
    check_gradients(_indexed, 1, [src, ind, o], [loaded, dst, acc])


@pytest.mark.parametrize("rows", [[2, 0, 2], [3, -1, 4]])
def test_indexed_atomic_add_returns_the_old_values(rows):
    rng = np.random.default_rng(41)
    x, acc0 = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    acc, prev = adjit.array(acc0), adjit.zeros((3, 2), dtype=F64)
    adjit.launch(_indexed_old, dim=1, inputs=[adjit.array(x), adjit.array(np.array(rows, np.int32)), acc, prev])
    expected_acc, expected_prev = acc0.copy(), np.zeros((3, 2))
    for p, r in enumerate(rows):
        if 0 <= r < 4:
            expected_prev[p] = expected_acc[r]
            expected_acc[r] += x[p]
    np.testing.assert_allclose(acc.numpy(), expected_acc, rtol=1e-15)
    np.testing.assert_allclose(prev.numpy(), expected_prev, rtol=1e-15)


# --- in-place forms in control flow --------------------------------------------------------------------

@adjit.kernel
def _in_place_in_control_flow(a: adjit.array2d(dtype=F64), y: adjit.array(dtype=F64), keys: adjit.array(dtype=F64),
                              flag: int, out: adjit.array(dtype=F64), sorted_values: adjit.array(dtype=F64)):
    t = adjit.tile_load(a, shape=(3, 3), offset=(0, 0))
    v = adjit.tile_load(y, shape=3, offset=0)
    if flag > 0:
        adjit.tile_cholesky_inplace(t)
    for _ in range(2):
        adjit.tile_lower_solve_inplace(t, v)
    adjit.tile_store(out, v, offset=0)
    k = adjit.tile_load(keys, shape=5, offset=0)
    w = k * 2.0
    for _ in range(flag):
        adjit.tile_sort(keys=k, values=w)
        k = -k
    adjit.tile_store(sorted_values, w, offset=0)


@pytest.mark.parametrize("flag", [0, 1, 2])
def test_in_place_forms_rebind_their_tiles_in_loops_and_branches(flag):
    rng = np.random.default_rng(50)
    m, yv, kv = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal(5)
    a, y, keys = adjit.array(m), adjit.array(yv), adjit.array(kv)
    out, sorted_values = adjit.zeros(3, dtype=F64), adjit.zeros(5, dtype=F64)
    adjit.launch(_in_place_in_control_flow, dim=1, inputs=[a, y, keys, flag, out, sorted_values])
    t = np.linalg.cholesky(m) if flag > 0 else np.tril(m)
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(t, np.linalg.solve(t, yv)), rtol=1e-12)
    k, w = kv.copy(), 2 * kv
    for _ in range(flag):
        order = np.argsort(k, kind="stable")
        k, w = -k[order], w[order]
    np.testing.assert_allclose(sorted_values.numpy(), w, rtol=1e-15)
    check_gradients(_in_place_in_control_flow, 1, [a, y, keys, flag], [out, sorted_values])


# --- errors -------------------------------------------------------------------------------------------

def _compile_error(kernel, inputs):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.launch(kernel, dim=1, inputs=inputs)
    message = str(info.value)
    assert "test_tile_linalg.py" in message
    return message


@adjit.kernel
def _bad_cholesky(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_load(a, shape=(2, 3), offset=(0, 0))
    adjit.tile_store(a, adjit.tile_cholesky(t), offset=(0, 0))


@adjit.kernel
def _bad_fill_mode(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_cholesky_inplace(t, fill_mode="diagonal")


@adjit.kernel
def _int_cholesky(a: adjit.array2d(dtype=int)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_store(a, adjit.tile_cholesky(t), offset=(0, 0))


@adjit.kernel
def _bad_rhs(a: adjit.array2d(dtype=F64), y: adjit.array(dtype=F64)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_store(y, adjit.tile_lower_solve(t, adjit.tile_load(y, shape=3, offset=0)), offset=0)


@adjit.kernel
def _mixed_rhs(a: adjit.array2d(dtype=F64), y: adjit.array(dtype=float)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    v = adjit.tile_load(y, shape=2, offset=0)
    adjit.tile_cholesky_solve_inplace(t, v)


@adjit.kernel
def _bad_upper_rhs(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    u = adjit.tile_zeros(shape=(2, 2, 2), dtype=F64)
    adjit.tile_upper_solve_inplace(t, u)


@adjit.kernel
def _bad_sort(a: adjit.array2d(dtype=F64)):
    k = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    v = adjit.tile_load(a, shape=(2, 2), offset=(0, 0))
    adjit.tile_sort(k, v)


@adjit.kernel
def _sort_lengths(a: adjit.array(dtype=F64)):
    k = adjit.tile_load(a, shape=3, offset=0)
    v = adjit.tile_load(a, shape=4, offset=0)
    adjit.tile_sort(k, v)


@adjit.kernel
def _other_thread(a: adjit.array(dtype=F64)):
    adjit.tile_store(a, adjit.tile_from_thread(shape=2, value=1.0, thread_idx=3), offset=0)


@adjit.kernel
def _vector_from_thread(a: adjit.array(dtype=F64)):
    adjit.tile_store(a, adjit.tile_from_thread(shape=2, value=adjit.vec3(), thread_idx=0), offset=0)


@adjit.kernel
def _bad_indices(a: adjit.array2d(dtype=F64)):
    ind = adjit.tile_arange(3, dtype=int)
    adjit.tile_store(a, adjit.tile_load_indexed(a, ind, shape=(2, 2), offset=(0, 0)), offset=(0, 0))


@adjit.kernel
def _float_indices(a: adjit.array2d(dtype=F64)):
    ind = adjit.tile_arange(2, dtype=F64)
    adjit.tile_store_indexed(a, ind, adjit.tile_zeros(shape=(2, 2), dtype=F64), axis=1)


@adjit.kernel
def _bad_axis(a: adjit.array2d(dtype=F64)):
    ind = adjit.tile_arange(2, dtype=int)
    adjit.tile_atomic_add_indexed(a, ind, adjit.tile_zeros(shape=(2, 2), dtype=F64), axis=2)


def test_bad_calls_are_errors_naming_the_line():
    a2, a1 = adjit.zeros((4, 4), dtype=F64), adjit.zeros(4, dtype=F64)
    assert "square (N, N) tile of floats" in _compile_error(_bad_cholesky, [a2])
    assert "'lower' or 'upper'" in _compile_error(_bad_fill_mode, [a2])
    assert "square (N, N) tile of floats" in _compile_error(_int_cholesky, [adjit.zeros((4, 4), dtype=int)])
    assert "(2,) or (2, K) tile" in _compile_error(_bad_rhs, [a2, a1])
    assert "one dtype" in _compile_error(_mixed_rhs, [a2, adjit.zeros(4, dtype=float)])
    assert "(2,) or (2, K) tile" in _compile_error(_bad_upper_rhs, [a2])
    assert "1-d keys tile" in _compile_error(_bad_sort, [a2])
    assert "1-d keys tile" in _compile_error(_sort_lengths, [a1])
    assert "thread 0" in _compile_error(_other_thread, [a1])
    assert "int or float scalar" in _compile_error(_vector_from_thread, [a1])
    assert "3 indices for a tile of extent 2" in _compile_error(_bad_indices, [a2])
    assert "1-d tile of integers" in _compile_error(_float_indices, [a2])
    assert "axis 2 of a 2-d array" in _compile_error(_bad_axis, [a2])


def test_registry_entries():
    names = ["tile_cholesky", "tile_cholesky_inplace", "tile_cholesky_solve", "tile_cholesky_solve_inplace",
             "tile_lower_solve", "tile_lower_solve_inplace", "tile_upper_solve", "tile_upper_solve_inplace",
             "tile_sort", "tile_from_thread", "tile_load_indexed", "tile_store_indexed", "tile_atomic_add_indexed"]
    registry = adjit.builtin_registry()
    for name in names:
        assert registry[name].tile and registry[name].doc
        with pytest.raises((TypeError, adjit.AdjitError), match=name):  # kernel-only
            getattr(adjit, name)([1.0])
