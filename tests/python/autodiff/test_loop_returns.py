"""``return value`` inside loops of device functions (desugar.lower_loop_returns):
values against Python, gradients (reverse and forward mode) against float64
central differences, and the errors for returns that do not agree."""
import numpy as np
import pytest

import adjit
from adjit.errors import KernelSyntaxError, KernelTypeError

f64 = adjit.float64


# --- values ---------------------------------------------------------------------------------------

@adjit.func
def first_above(x: float, n: int):
    for i in range(n):
        v = float(i) * x
        if v > 3.0:
            return v * v
    return -1.0


@adjit.func
def classify(x: float):
    # several returns with different values, a while loop inside a for loop
    for i in range(4):
        j = int(0)
        while j < 3:
            v = x - float(i * 3 + j)
            if v < 0.0:
                if j == 0:
                    return 100.0 + v
                return float(i * 10 + j)
            j = j + 1
    return -x


@adjit.func
def step_loop(x: float):
    # a negative literal step, returns in both arms of an if
    for i in range(10, 0, -2):
        if x > float(i):
            return x - float(i)
        elif x > float(i) - 0.5:
            return 0.5
    return 7.0


@adjit.func
def forever(x: float):
    # while True: only a return leaves it; nothing needed after it
    k = int(0)
    while True:
        x = x * 2.0
        k = k + 1
        if x > 10.0:
            return x + float(k)


@adjit.func
def in_branch(x: float, flag: int):
    # the loop sits in a branch; code before and after it
    y = x * 0.5
    if flag > 0:
        for i in range(5):
            y = y + 1.0
            if y > 3.0:
                return y * 10.0
        y = y - 100.0
    return y


@adjit.func
def min_and_index(a: adjit.array(dtype=float), start: int):
    # tuple returns
    for i in range(start, a.shape[0]):
        if a[i] < 0.0:
            return a[i], i
    return 0.0, -1


@adjit.func
def vec_search(p: adjit.vec3):
    for i in range(8):
        p = p * 0.5
        if adjit.length(p) < 1.0:
            return p
    return adjit.vec3(0.0, 0.0, 0.0)


@adjit.kernel
def values(x: adjit.array(dtype=float), a: adjit.array(dtype=float), out: adjit.array(dtype=float, ndim=2),
           idx: adjit.array(dtype=int), vecs: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    out[i, 0] = first_above(x[i], 10)
    out[i, 1] = classify(x[i])
    out[i, 2] = step_loop(x[i])
    out[i, 3] = forever(x[i])
    out[i, 4] = in_branch(x[i], i % 2)
    m, k = min_and_index(a, i)
    out[i, 5] = m
    idx[i] = k
    vecs[i] = vec_search(adjit.vec3(x[i], 2.0 * x[i], 1.0))


def _first_above(x, n):
    for i in range(n):
        v = float(i) * x
        if v > 3.0:
            return v * v
    return -1.0


def _classify(x):
    for i in range(4):
        j = 0
        while j < 3:
            v = x - float(i * 3 + j)
            if v < 0.0:
                if j == 0:
                    return 100.0 + v
                return float(i * 10 + j)
            j += 1
    return -x


def _step_loop(x):
    for i in range(10, 0, -2):
        if x > i:
            return x - i
        elif x > i - 0.5:
            return 0.5
    return 7.0


def _forever(x):
    k = 0
    while True:
        x = x * 2.0
        k += 1
        if x > 10.0:
            return x + k


def _in_branch(x, flag):
    y = x * 0.5
    if flag > 0:
        for _ in range(5):
            y = y + 1.0
            if y > 3.0:
                return y * 10.0
        y = y - 100.0
    return y


def _min_and_index(a, start):
    for i in range(start, len(a)):
        if a[i] < 0.0:
            return a[i], i
    return 0.0, -1


def _vec_search(p):
    for _ in range(8):
        p = p * 0.5
        if np.linalg.norm(p) < 1.0:
            return p
    return np.zeros(3)


def test_returns_inside_loops_match_python():
    xs = np.array([0.1, 0.7, 1.3, 2.25, 3.6, 5.2, 7.9, 9.7, 11.0, 12.5, 0.25, 3.0], np.float32)
    a = np.array([1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, 8.0, 9.0, 1.0, 1.0, 1.0], np.float32)
    n = len(xs)
    out, idx = adjit.zeros((n, 6)), adjit.zeros(n, dtype=int)
    vecs = adjit.zeros(n, dtype=adjit.vec3)
    adjit.launch(values, dim=n, inputs=[adjit.array(xs), adjit.array(a), out, idx, vecs])
    x64 = xs.astype(np.float64)
    want = np.array([[_first_above(x, 10), _classify(x), _step_loop(x), _forever(x), _in_branch(x, i % 2),
                      _min_and_index(a, i)[0]] for i, x in enumerate(x64)])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    assert idx.numpy().tolist() == [_min_and_index(a, i)[1] for i in range(n)]
    want_vecs = [_vec_search(np.array([x, 2 * x, 1.0])) for x in x64]
    np.testing.assert_allclose(vecs.numpy(), want_vecs, rtol=1e-5, atol=1e-6)


@adjit.func
def two_loops(x: f64, n: int):
    for i in range(n):
        if x < f64(i):
            return 0.0  # a literal: takes the type of the other return
        if x > f64(100.0):
            return x * f64(2.0)
    k = int(0)
    while k < n:
        k = k + 1
        if k > 2:
            return x + f64(k)
    return -x


@adjit.func
def int_root(n: int):
    for i in range(n):
        if i * i > n:
            return i
    return 0


@adjit.func
def any_below(x: float):
    for i in range(3):
        if x > float(i):
            return True
    return False


@adjit.func
def doubling(x: float):
    m = adjit.mat22(1.0, 0.0, 0.0, 1.0)
    for i in range(5):
        m = m * 2.0
        if m[0, 0] > x:
            return m
    return m * 0.0


@adjit.func
def with_break(x: float):
    # the inner loop has a break of its own
    for i in range(4):
        for j in range(4):
            if j > i:
                break
            if float(i * j) > x:
                return float(i * 100 + j)
    return -1.0


@adjit.func
def unrolled(x: float):
    for i in range(adjit.static(4)):
        if x < float(i):
            return float(i) * 10.0
        if x > 100.0:
            continue
        x = x - 0.25
    return x


@adjit.kernel
def more_values(x: adjit.array(dtype=float), o64: adjit.array(dtype=f64), oi: adjit.array(dtype=int, ndim=2),
                of: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    o64[i] = two_loops(f64(x[i]), 5)
    oi[i, 0] = int_root(int(x[i]))
    oi[i, 1] = int(any_below(x[i]))
    of[i, 0] = doubling(x[i])[0, 0]
    of[i, 1] = with_break(x[i])
    of[i, 2] = unrolled(x[i])


@adjit.kernel
def unrolled_bare_return(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
    i = adjit.tid()
    out[i] = -1.0
    for j in range(adjit.static(4)):
        if x[i] < float(j):
            out[i] = float(j)
            return
        if j == 1:
            continue
        out[i] = out[i] - 1.0


def _unrolled(x):
    for i in range(4):
        if x < i:
            return i * 10.0
        if x > 100.0:
            continue
        x -= 0.25
    return x


def _unrolled_bare_return(x):
    out = -1.0
    for j in range(4):
        if x < j:
            return float(j)
        if j == 1:
            continue
        out -= 1.0
    return out


def test_more_returns_inside_loops_match_python():
    xs = np.array([-1.0, 0.5, 2.5, 7.0, 150.0, 20.0, 1.1], np.float32)
    n = len(xs)
    o64, oi, of = adjit.zeros(n, dtype=f64), adjit.zeros((n, 2), dtype=int), adjit.zeros((n, 3))
    adjit.launch(more_values, dim=n, inputs=[adjit.array(xs), o64, oi, of])
    np.testing.assert_allclose(o64.numpy(), [0, 0, 0, 10, 300, 23, 0], rtol=1e-6)
    assert oi.numpy().tolist() == [[0, 0], [0, 1], [0, 1], [3, 1], [13, 1], [5, 1], [0, 1]]
    np.testing.assert_allclose(of.numpy()[:, 0], [2, 2, 4, 8, 0, 32, 2])
    np.testing.assert_allclose(of.numpy()[:, 1], [0, 101, 202, 303, -1, -1, 201])
    np.testing.assert_allclose(of.numpy()[:, 2], [_unrolled(float(x)) for x in xs], rtol=1e-6)
    out = adjit.zeros(n)
    adjit.launch(unrolled_bare_return, dim=n, inputs=[adjit.array(xs), out])
    np.testing.assert_allclose(out.numpy(), [_unrolled_bare_return(float(x)) for x in xs])


# --- gradients --------------------------------------------------------------------------------------

@adjit.func
def newton_sqrt(a: f64):
    # Newton iterations for sqrt(a), returning early on convergence
    x = a
    for _ in range(50):
        nxt = 0.5 * (x + a / x)
        if abs(nxt - x) < f64(1.0e-13) * nxt:
            return nxt
        x = nxt
    return x


@adjit.func
def search(a: adjit.array(dtype=f64), t: f64):
    # a linear search returning a value computed in the loop (its place between two samples)
    s = f64(0.0)
    i = int(0)
    while i < a.shape[0] - 1:
        lo = a[i]
        hi = a[i + 1]
        s = s + lo * t
        if hi > t:
            return s + (t - lo) / (hi - lo) * f64(i + 1), t * lo
        i = i + 1
    return s, t * t


@adjit.kernel
def grad_kernel(a: adjit.array(dtype=f64), t: adjit.array(dtype=f64), out: adjit.array(dtype=f64)):
    i = adjit.tid()
    r, q = search(a, t[i])
    out[i] = newton_sqrt(t[i] * t[i] + a[i]) * r + q


def _newton_sqrt(a):
    x = a
    for _ in range(50):
        nxt = 0.5 * (x + a / x)
        if abs(nxt - x) < 1e-13 * nxt:
            return nxt
        x = nxt
    return x


def _search(a, t):
    s = 0.0
    for i in range(len(a) - 1):
        lo, hi = a[i], a[i + 1]
        s += lo * t
        if hi > t:
            return s + (t - lo) / (hi - lo) * (i + 1), t * lo
    return s, t * t


def _grad_loss(a, t):
    out = []
    for i in range(len(t)):
        r, q = _search(a, t[i])
        out.append(_newton_sqrt(t[i] * t[i] + a[i]) * r + q)
    return np.array(out)


_A = np.array([0.1, 0.4, 0.9, 1.6, 2.5, 3.7])
_T = np.array([0.3, 0.65, 1.2, 2.0, 3.1, 9.0])


def _fd_jacobian(a, t, h=1e-6):
    ja = np.zeros((len(t), len(a)))
    jt = np.zeros((len(t), len(t)))
    for k in range(len(a)):
        e = np.zeros_like(a)
        e[k] = h
        ja[:, k] = (_grad_loss(a + e, t) - _grad_loss(a - e, t)) / (2 * h)
    for k in range(len(t)):
        e = np.zeros_like(t)
        e[k] = h
        jt[:, k] = (_grad_loss(a, t + e) - _grad_loss(a, t - e)) / (2 * h)
    return ja, jt


def test_loop_return_values_and_reverse_gradients_match_fd():
    a = adjit.array(_A, dtype=f64, requires_grad=True)
    t = adjit.array(_T, dtype=f64, requires_grad=True)
    out = adjit.zeros(len(_T), dtype=f64, requires_grad=True)
    w = np.random.default_rng(3).normal(size=len(_T))
    with adjit.Tape() as tape:
        adjit.launch(grad_kernel, dim=len(_T), inputs=[a, t, out])
    np.testing.assert_allclose(out.numpy(), _grad_loss(_A, _T), rtol=1e-13)
    tape.backward(grads={out: w})
    ja, jt = _fd_jacobian(_A, _T)
    np.testing.assert_allclose(a.grad.numpy(), w @ ja, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(t.grad.numpy(), w @ jt, rtol=1e-7, atol=1e-9)
    from adjit.testing import check_gradients
    check_gradients(grad_kernel, len(_T), [a, t], [out])


def test_loop_return_forward_gradients_match_fd():
    rng = np.random.default_rng(5)
    da, dt = rng.normal(size=len(_A)), rng.normal(size=len(_T))
    (dy,) = adjit.jvp(grad_kernel, len(_T), [adjit.array(_A, dtype=f64), adjit.array(_T, dtype=f64)],
                      [da, dt], [adjit.zeros(len(_T), dtype=f64)])
    h = 1e-6
    fd = (_grad_loss(_A + h * da, _T + h * dt) - _grad_loss(_A - h * da, _T - h * dt)) / (2 * h)
    np.testing.assert_allclose(dy.numpy(), fd, rtol=1e-7, atol=1e-9)


# --- bad inputs ---------------------------------------------------------------------------------------

def _compile(fn_body, *arg_types):
    @adjit.kernel
    def k(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
        i = adjit.tid()
        out[i] = fn_body(x[i], 3)

    adjit.launch(k, dim=1, inputs=[adjit.zeros(1), adjit.zeros(1)])


@adjit.func
def mixed_types(x: float, n: int):
    for i in range(n):
        if x > 1.0:
            return x
        if x < -1.0:
            return adjit.vec3(x, x, x)  # line checked below
    return x


@adjit.func
def mixed_arity(x: float, n: int):
    while n > 0:
        if x > 1.0:
            return x, x
        n = n - 1
        if x < 0.0:
            return x
    return x


@adjit.func
def after_loop_differs(x: float, n: int):
    for i in range(n):
        if x > 1.0:
            return x
    return adjit.vec3(x, x, x)


@adjit.func
def falls_off(x: float, n: int):
    for i in range(n):
        if x > 1.0:
            return x


def test_returns_of_different_types_are_located_type_errors():
    with pytest.raises(KernelTypeError) as err:
        _compile(mixed_types)
    assert "test_loop_returns.py" in str(err.value)
    assert "different types" in str(err.value)
    assert "return adjit.vec3(x, x, x)  # line checked below" in str(err.value)
    with pytest.raises(KernelTypeError, match="gives 1 value"):
        _compile(mixed_arity)
    with pytest.raises(KernelTypeError, match="different types"):
        _compile(after_loop_differs)
    with pytest.raises(KernelSyntaxError, match="must return it on every path"):
        _compile(falls_off)


def test_a_kernel_cannot_return_a_value_from_a_loop():
    @adjit.kernel
    def k(x: adjit.array(dtype=float)):
        i = adjit.tid()
        for j in range(3):
            if x[i] > 0.0:
                return 1.0

    with pytest.raises(KernelSyntaxError, match="a kernel cannot return a value") as err:
        adjit.launch(k, dim=1, inputs=[adjit.zeros(1)])
    assert "return 1.0" in str(err.value)
