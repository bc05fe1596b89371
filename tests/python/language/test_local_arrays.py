"""Fixed-size local arrays (issue 12): ``a = zeros(shape, dtype)`` in a
kernel, Warp's ``zeros`` builtin. Forward values against numpy (runtime and
constant indices, 1-D and 2-D, float/int/bool/vec3/mat22 elements, +=,
loops and branches), reverse (Tape) and forward (jvp) gradients against
float64 central differences, bounds, and bad inputs naming the kernel line.
"""
import inspect

import numpy as np
import pytest

import adjit

rng = np.random.default_rng(12)

N = 8


@adjit.kernel
def fill_and_gather(x: adjit.array(dtype=float, ndim=2), idx: adjit.array(dtype=int, ndim=2),
                    y: adjit.array(dtype=float, ndim=2)):
    t = adjit.tid()
    a = adjit.zeros(shape=(N,), dtype=float)
    for i in range(N):
        a[idx[t, i]] = x[t, i]  # a permutation: scatter
    for i in range(N):
        a[i] += 0.5 * float(i)
    for i in range(N):
        y[t, i] = a[idx[t, (i + 3) % N]]


def test_runtime_index_scatter_and_gather_match_numpy():
    n = 5
    x = rng.normal(size=(n, N)).astype(np.float32)
    idx = np.stack([rng.permutation(N) for _ in range(n)]).astype(np.int32)
    y = adjit.zeros((n, N), dtype=float)
    adjit.launch(fill_and_gather, n, [adjit.array(x), adjit.array(idx), y])
    a = np.zeros((n, N), np.float32)
    for t in range(n):
        a[t, idx[t]] = x[t]
        a[t] += 0.5 * np.arange(N, dtype=np.float32)
    want = np.stack([a[t, idx[t, (np.arange(N) + 3) % N]] for t in range(n)])
    np.testing.assert_array_equal(y.numpy(), want)


@adjit.kernel
def two_d_and_dtypes(k: adjit.array(dtype=int), yi: adjit.array(dtype=int), yv: adjit.array(dtype=adjit.vec3),
                     ym: adjit.array(dtype=adjit.mat22), yb: adjit.array(dtype=int)):
    t = adjit.tid()
    c = adjit.zeros((3, 4), dtype=int)
    for i in range(3):
        for j in range(4):
            c[i, j] = 10 * i + j + t
    c[k[t] % 3, k[t] % 4] += 100
    s = 0
    for i in range(3):
        for j in range(4):
            if c[i, j] > 100:
                s += c[i, j]
    yi[t] = s + len(c) * 1000 + c.shape[1] * 10000
    v = adjit.zeros(4, dtype=adjit.vec3)
    for i in range(4):
        v[i] = adjit.vec3(float(i), float(t), 1.0)
    v[k[t] % 4].z = 7.0  # a component of a runtime element
    v[k[t] % 4][0] += 0.25
    w = v  # a copy: v is a value
    w[0] = adjit.vec3(-1.0)
    yv[t] = v[k[t] % 4] + v[0] * 10.0
    m = adjit.zeros((2,), dtype=adjit.mat22)
    m[1] = adjit.mat22(1.0, 2.0, 3.0, 4.0)
    m[k[t] % 2][0, 1] = 9.0
    ym[t] = m[1] + m[0]
    b = adjit.zeros(5, dtype=bool)
    b[k[t] % 5] = True
    yb[t] = int(b[k[t] % 5]) * 2 + int(b[(k[t] + 1) % 5])


def test_two_d_and_element_dtypes_match_numpy():
    n = 6
    k = np.array([0, 1, 5, 7, 10, 11], np.int32)
    yi, yv = adjit.zeros(n, dtype=int), adjit.zeros(n, dtype=adjit.vec3)
    ym, yb = adjit.zeros(n, dtype=adjit.mat22), adjit.zeros(n, dtype=int)
    adjit.launch(two_d_and_dtypes, n, [adjit.array(k), yi, yv, ym, yb])
    for t in range(n):
        c = 10 * np.arange(3)[:, None] + np.arange(4)[None, :] + t
        c[k[t] % 3, k[t] % 4] += 100
        assert yi.numpy()[t] == c[c > 100].sum() + 3 * 1000 + 4 * 10000
        v = np.stack([[i, t, 1.0] for i in range(4)]).astype(np.float32)
        v[k[t] % 4, 2] = 7.0
        v[k[t] % 4, 0] += 0.25
        np.testing.assert_array_equal(yv.numpy()[t], v[k[t] % 4] + v[0] * 10.0)
        m = np.zeros((2, 2, 2), np.float32)
        m[1] = [[1, 2], [3, 4]]
        m[k[t] % 2][0, 1] = 9.0
        np.testing.assert_array_equal(ym.numpy()[t], m[1] + m[0])
        assert yb.numpy()[t] == 2


@adjit.kernel
def carried_in_branches(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    t = adjit.tid()
    a = adjit.zeros(shape=4, dtype=float)
    if x[t] > 0.0:
        a[0] = x[t]
    else:
        a[1] = x[t]
        a = adjit.zeros(4, dtype=float)  # rebinding to a fresh array
        a[2] = 2.0 * x[t]
    i = 0
    while i < 3:
        a[3] += a[i]
        i += 1
    y[t] = a[3]


def test_branches_and_while_loops_carry_the_array():
    x = np.array([1.5, -2.0], np.float32)
    y = adjit.zeros(2, dtype=float)
    adjit.launch(carried_in_branches, 2, [adjit.array(x), y])
    np.testing.assert_array_equal(y.numpy(), [1.5, -4.0])


# --- gradients ------------------------------------------------------------------------------------

@adjit.kernel
def smooth_scatter(x: adjit.array(dtype=adjit.float64, ndim=2), idx: adjit.array(dtype=int, ndim=2),
                   y: adjit.array(dtype=adjit.float64)):
    t = adjit.tid()
    a = adjit.zeros(shape=(N,), dtype=adjit.float64)
    p = adjit.zeros((2, 3), dtype=adjit.vec3d)
    for i in range(N):
        a[i] = adjit.sin(x[t, i]) * x[t, (i + 1) % N]
    for i in range(N):
        a[idx[t, i]] += a[i] * x[t, i]  # reads and writes at data-dependent indices
    for i in range(6):
        p[i // 3, i % 3] = adjit.vec3d(a[idx[t, i]], x[t, i] * x[t, i], 1.0)
    s = adjit.float64(0.0)
    for i in range(N):
        s += a[idx[t, (i * 3) % N]] * a[i]
    y[t] = s + adjit.dot(p[idx[t, 0] % 2, 1], p[1, idx[t, 1] % 3])


def _loss(x, idx):
    y = adjit.zeros(len(x), dtype=adjit.float64)
    adjit.launch(smooth_scatter, len(x), [adjit.array(x, dtype=adjit.float64), adjit.array(idx), y])
    return y.numpy().copy()


def _gradient_case():
    n = 3
    x = rng.normal(size=(n, N))
    idx = rng.integers(0, N, size=(n, N)).astype(np.int32)  # repeats: accumulation into one slot
    return x, idx


def test_reverse_gradient_matches_central_differences():
    x, idx = _gradient_case()
    xa = adjit.array(x, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros(len(x), dtype=adjit.float64, requires_grad=True)
    w = rng.normal(size=len(x))
    tape = adjit.Tape()
    with tape:
        adjit.launch(smooth_scatter, len(x), [xa, adjit.array(idx), y])
    tape.backward(grads={y: adjit.array(w, dtype=adjit.float64)})
    h = 1e-6
    fd = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        fd[k] = w @ (_loss(x + e, idx) - _loss(x - e, idx)) / (2 * h)
    np.testing.assert_allclose(xa.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_forward_gradient_matches_central_differences():
    x, idx = _gradient_case()
    dx = rng.normal(size=x.shape)
    (dy,) = adjit.jvp(smooth_scatter, len(x), [adjit.array(x, dtype=adjit.float64), adjit.array(idx)],
                      [dx, None], [adjit.zeros(len(x), dtype=adjit.float64)])
    h = 1e-6
    fd = (_loss(x + h * dx, idx) - _loss(x - h * dx, idx)) / (2 * h)
    np.testing.assert_allclose(dy.numpy(), fd, rtol=1e-6, atol=1e-8)


# --- bounds ---------------------------------------------------------------------------------------

def _gather(x: adjit.array(dtype=float), k: adjit.array(dtype=int), y: adjit.array(dtype=float)):
    t = adjit.tid()
    a = adjit.zeros(4, dtype=float)
    for i in range(4):
        a[i] = x[i] + 1.0
    a[k[t]] = 100.0
    y[t] = a[k[t]] + a[0]


def test_an_out_of_range_runtime_index_is_reported():
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(adjit.kernel(_gather), 3, [adjit.zeros(4), adjit.array(np.array([0, 4, 1], np.int32)),
                                                adjit.zeros(3)])
    assert "out of range for a (zeros((4,), float32))" in str(info.value)


def test_without_bounds_checks_an_out_of_range_index_reads_zero_and_writes_nothing():
    k = adjit.kernel(bounds_check=False)(_gather)
    y = adjit.zeros(4)
    adjit.launch(k, 4, [adjit.array(np.arange(4, dtype=np.float32)), adjit.array(np.array([-1, 4, 99, 2], np.int32)),
                        y])
    np.testing.assert_array_equal(y.numpy(), [1.0, 1.0, 1.0, 101.0])


# --- bad inputs -----------------------------------------------------------------------------------

def _bad_shape(x: adjit.array(dtype=float)):
    n = len(x)
    a = adjit.zeros(n, dtype=float)  # bad
    x[0] = a[0]


def _bad_dtype(x: adjit.array(dtype=float)):
    a = adjit.zeros(4, dtype=adjit.array)  # bad
    x[0] = a[0]


def _too_big(x: adjit.array(dtype=float)):
    a = adjit.zeros((16, 16), dtype=adjit.vec3)  # bad
    x[0] = a[0, 0][0]


def _wrong_rank(x: adjit.array(dtype=float)):
    a = adjit.zeros((2, 3), dtype=float)
    x[0] = a[1]  # bad


def _constant_out_of_range(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    a[3] = 1.0  # bad
    x[0] = a[0]


def _float_index(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    x[0] = a[x[0]]  # bad


def _wrong_element(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    a[0] = adjit.vec3(1.0)  # bad
    x[0] = a[0]


def _arithmetic(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    b = a + a  # bad
    x[0] = b[0]


@adjit.func
def _first_int(a: adjit.array(dtype=int)):
    return float(a[0])


def _passed_to_func(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    x[0] = _first_int(a)  # bad


def _keyword(x: adjit.array(dtype=float)):
    a = adjit.zeros(3, type=float)  # bad
    x[0] = a[0]


@pytest.mark.parametrize("fn, words", [
    (_bad_shape, ["shape of zeros() in a kernel must be constant integers", "got n"]),
    (_bad_dtype, ["dtype of zeros() in a kernel must be a scalar, vector or matrix type"]),
    (_too_big, ["holds 768 scalars", "at most 256"]),
    (_wrong_rank, ["a 2-d local array (zeros((2, 3), float32)) needs 2 indices, got 1"]),
    (_constant_out_of_range, ["index 3 is out of range for zeros((3,), float32)"]),
    (_float_index, ["local array indices must be integers"]),
    (_wrong_element, ["float32", "vec3"]),
    (_arithmetic, ["unsupported operand types for +"]),
    (_passed_to_func, ["argument 1 ('a') of _first_int() must be array(dtype=int32, ndim=1)",
                       "got the local array zeros((3,), float32)"]),
    (_keyword, ["unexpected or repeated keyword argument 'type'"]),
])
def test_bad_inputs_name_the_kernel_line(fn, words):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(1)])
    message = str(e.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_local_arrays.py:{line}:" in message, message
    for word in words:
        assert word in message, message
