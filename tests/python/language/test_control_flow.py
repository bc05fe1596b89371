"""if/elif/else, conditional expressions, boolean logic, for and while loops,
early returns, and device functions."""
import math

import numpy as np
import pytest

import adjit


def _run(kernel, n, *args):
    adjit.launch(kernel, dim=n, inputs=list(args))


# --- branches -----------------------------------------------------------------------------------

@adjit.kernel
def branches(x: adjit.array(dtype=float), out: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    v = x[i]
    if v < 0.0:
        y = -v
        z = 1.0
    elif v < 1.0:
        y = v * 2.0
        z = 2.0
    elif v == 1.0:
        y = 0.0
        z = 3.0
    else:
        y = v + 10.0
        z = 4.0
    w = 5.0
    if z > 1.5:
        if y > 1.0:
            w = y + 100.0
        else:
            w = -y
            if v > 0.5:
                w = w - 1000.0
    out[i, 0] = y
    out[i, 1] = z
    out[i, 2] = w


def _branches_ref(v):
    if v < 0:
        y, z = -v, 1.0
    elif v < 1:
        y, z = 2 * v, 2.0
    elif v == 1:
        y, z = 0.0, 3.0
    else:
        y, z = v + 10, 4.0
    w = 5.0
    if z > 1.5:
        if y > 1:
            w = y + 100
        else:
            w = -y
            if v > 0.5:
                w -= 1000
    return y, z, w


def test_if_elif_else_and_nested_ifs():
    xs = np.array([-2.0, -0.25, 0.0, 0.25, 0.4, 0.75, 1.0, 3.5], np.float32)
    out = adjit.zeros((len(xs), 3))
    _run(branches, len(xs), adjit.array(xs), out)
    ref = np.array([_branches_ref(float(v)) for v in xs], np.float32)
    np.testing.assert_array_equal(out.numpy(), ref)


@adjit.kernel
def logic(x: adjit.array(dtype=float), k: adjit.array(dtype=int), out: adjit.array(dtype=int, ndim=2),
          sel: adjit.array(dtype=float)):
    i = adjit.tid()
    v = x[i]
    n = k[i]
    out[i, 0] = 1 if v > 0.0 and n > 2 else 0
    out[i, 1] = 1 if v > 0.0 or n > 2 else 0
    out[i, 2] = 1 if not v > 0.0 else 0
    out[i, 3] = 1 if -1.0 < v < 1.0 else 0
    out[i, 4] = 1 if (n % 2 == 0 and not n == 4) or v >= 2.0 else 0
    out[i, 5] = 1 if n != 3 and n <= 5 and v != 0.0 else 0
    b = v > 0.5
    if b:
        out[i, 6] = n
    else:
        out[i, 6] = -n
    out[i, 7] = 1 if v else 0
    out[i, 8] = 1 if n else 0
    if not v:
        out[i, 9] = 1
    sel[i] = v * 2.0 if n > 3 else v - 1.0


def test_boolean_logic_and_conditional_expression():
    xs = np.array([-3.0, -0.5, 0.0, 0.5, 0.75, 2.0, 5.0, -1.0], np.float32)
    ks = np.array([0, 1, 2, 3, 4, 5, 6, 7], np.int32)
    out, sel = adjit.zeros((8, 10), dtype=int), adjit.zeros(8)
    _run(logic, 8, adjit.array(xs), adjit.array(ks), out, sel)
    ref = []
    for v, n in zip(xs.tolist(), ks.tolist()):
        ref.append([int(v > 0 and n > 2), int(v > 0 or n > 2), int(not v > 0), int(-1 < v < 1),
                    int((n % 2 == 0 and not n == 4) or v >= 2), int(n != 3 and n <= 5 and v != 0),
                    n if v > 0.5 else -n, int(bool(v)), int(bool(n)), int(not v)])
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(sel.numpy(), np.where(ks > 3, xs * np.float32(2), xs - np.float32(1)))


# --- for loops ------------------------------------------------------------------------------------

@adjit.kernel
def constant_loops(out: adjit.array(dtype=int, ndim=2)):
    i = adjit.tid()
    s = 0
    for j in range(5):
        s = s + j * i
    out[i, 0] = s
    t = 0
    for j in range(10, 0, -3):
        t = t * 10 + j
    out[i, 1] = t
    u = 0
    for j in range(2, 11, 4):
        u += j
    out[i, 2] = u
    c = 0
    for j in range(3):
        for k in range(j, 4):
            c += 10 * j + k
    out[i, 3] = c
    e = 0
    for j in range(5, 5):
        e += 1
    for j in range(0, 5, -1):
        e += 1
    out[i, 4] = e


def test_for_range_with_constant_bounds():
    out = adjit.zeros((3, 5), dtype=int)
    _run(constant_loops, 3, out)
    for i in range(3):
        t = 0
        for j in range(10, 0, -3):
            t = t * 10 + j
        c = sum(10 * j + k for j in range(3) for k in range(j, 4))
        np.testing.assert_array_equal(out.numpy()[i], [sum(j * i for j in range(5)), t, 2 + 6 + 10, c, 0])


@adjit.kernel
def runtime_ranges(starts: adjit.array(dtype=int), stops: adjit.array(dtype=int), steps: adjit.array(dtype=int),
                   out: adjit.array(dtype=int, ndim=2)):
    i = adjit.tid()
    count = 0
    total = 0
    last = -999
    for j in range(starts[i], stops[i], steps[i]):
        count += 1
        total += j
        last = j
    out[i, 0] = count
    out[i, 1] = total
    out[i, 2] = last
    # One- and two-argument forms with runtime bounds.
    c1 = 0
    for j in range(stops[i]):
        c1 += 1
    c2 = 0
    for j in range(starts[i], stops[i]):
        c2 += j
    out[i, 3] = c1
    out[i, 4] = c2


RANGES = [(0, 10, 1), (0, 10, 3), (10, 0, -1), (10, 0, -3), (10, -10, -7), (-5, 5, 2), (5, 5, 1),
          (5, 5, -1), (0, 10, -1), (10, 0, 1), (3, 4, 100), (4, 3, -100), (-3, -10, -2), (7, -2, -1)]


def test_for_range_with_runtime_bounds_and_steps():
    starts, stops, steps = (np.array(c, np.int32) for c in zip(*RANGES))
    out = adjit.zeros((len(RANGES), 5), dtype=int)
    _run(runtime_ranges, len(RANGES), adjit.array(starts), adjit.array(stops), adjit.array(steps), out)
    for row, (a, b, d) in zip(out.numpy(), RANGES):
        r = list(range(a, b, d))
        expected = [len(r), sum(r), r[-1] if r else -999, len(range(b)), sum(range(a, b))]
        assert row.tolist() == expected, (a, b, d)


@adjit.kernel
def loop_carried(x: adjit.array(dtype=float), coeffs: adjit.array(dtype=float), n: int,
                 out: adjit.array(dtype=float, ndim=2), fib: adjit.array(dtype=int)):
    i = adjit.tid()
    v = x[i]
    p = 1.0
    for k in range(n):
        p = p * v
    out[i, 0] = p
    # Horner: c0 + c1 v + c2 v^2 + ... with coeffs highest first.
    h = 0.0
    for k in range(coeffs.shape[0]):
        h = h * v + coeffs[k]
    out[i, 1] = h
    # Branch inside a loop updating two carried values.
    pos = 0.0
    neg = 0.0
    for k in range(-3, 4):
        t = v * float(k)
        if t > 0.0:
            pos += t
        else:
            neg += t
    out[i, 2] = pos
    out[i, 3] = neg
    a = 0
    b = 1
    for k in range(i):
        a, b = b, a + b
    fib[i] = a


def test_loop_carried_state():
    xs = np.array([0.5, -1.25, 2.0, 0.0, 1.1], np.float32)
    coeffs = np.array([2.0, -3.0, 0.5, 4.0], np.float32)
    out, fib = adjit.zeros((5, 4)), adjit.zeros(5, dtype=int)
    _run(loop_carried, 5, adjit.array(xs), adjit.array(coeffs), 3, out, fib)
    x = xs.astype(np.float64)
    np.testing.assert_allclose(out.numpy()[:, 0], x ** 3, rtol=1e-6)
    np.testing.assert_allclose(out.numpy()[:, 1], np.polyval(coeffs.astype(np.float64), x), rtol=1e-6, atol=1e-6)
    k = np.arange(-3, 4)
    t = x[:, None] * k[None, :]
    np.testing.assert_allclose(out.numpy()[:, 2], np.where(t > 0, t, 0).sum(1), rtol=1e-6)
    np.testing.assert_allclose(out.numpy()[:, 3], np.where(t > 0, 0, t).sum(1), rtol=1e-6)
    np.testing.assert_array_equal(fib.numpy(), [0, 1, 1, 2, 3])


# --- while loops -----------------------------------------------------------------------------------

@adjit.kernel
def collatz(x: adjit.array(dtype=int), steps: adjit.array(dtype=int), peak: adjit.array(dtype=int)):
    i = adjit.tid()
    n = x[i]
    count = 0
    top = n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        top = max(top, n)
        count += 1
    steps[i] = count
    peak[i] = top


def _collatz(n):
    count, top = 0, n
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        top = max(top, n)
        count += 1
    return count, top


def test_while_loop_with_data_dependent_trip_count():
    xs = np.array([1, 2, 3, 6, 7, 27, 97, 871], np.int32)
    steps, peak = adjit.zeros(8, dtype=int), adjit.zeros(8, dtype=int)
    _run(collatz, 8, adjit.array(xs), steps, peak)
    ref = [_collatz(int(v)) for v in xs]
    np.testing.assert_array_equal(steps.numpy(), [r[0] for r in ref])
    np.testing.assert_array_equal(peak.numpy(), [r[1] for r in ref])


@adjit.kernel
def newton_sqrt(x: adjit.array(dtype=adjit.float64), out: adjit.array(dtype=adjit.float64),
                iters: adjit.array(dtype=int)):
    i = adjit.tid()
    a = x[i]
    g = a
    k = 0
    while abs(g * g - a) > 1e-12 * a and k < 100:
        g = 0.5 * (g + a / g)
        k += 1
    out[i] = g
    iters[i] = k
    never = 0
    while k < 0:
        never += 1
    iters[i] += never


def test_while_loop_converges_like_numpy_sqrt():
    xs = np.array([1.0, 2.0, 0.25, 1e6, 12345.678], np.float64)
    out, iters = adjit.zeros(5, dtype=adjit.float64), adjit.zeros(5, dtype=int)
    _run(newton_sqrt, 5, adjit.array(xs), out, iters)
    np.testing.assert_allclose(out.numpy(), np.sqrt(xs), rtol=1e-12)
    assert iters.numpy()[0] == 0 and (iters.numpy()[1:] > 0).all() and (iters.numpy() < 100).all()


@adjit.kernel
def literals_adopt_the_variable_type(d: adjit.array(dtype=adjit.float64), out: adjit.array(dtype=adjit.float64),
                                     out_i: adjit.array(dtype=adjit.int64)):
    i = adjit.tid()
    a = d[i]
    if a > 1.0:
        a = 0.1  # a float64 0.1, not a float32 one
    b = adjit.int64(i)
    for j in range(2):
        b = 5000000000
    n = adjit.int64(i)
    while n < 3:
        n = 3
    out[i] = a
    out_i[i] = b + n


def test_literal_assigned_in_a_branch_or_loop_takes_the_variable_type():
    out, out_i = adjit.zeros(3, dtype=adjit.float64), adjit.zeros(3, dtype=adjit.int64)
    _run(literals_adopt_the_variable_type, 3, adjit.array(np.array([0.25, 2.0, 3.0])), out, out_i)
    np.testing.assert_array_equal(out.numpy(), [0.25, 0.1, 0.1])
    np.testing.assert_array_equal(out_i.numpy(), [5000000003] * 3)


# --- early returns ---------------------------------------------------------------------------------

@adjit.kernel
def guarded(n: int, out: adjit.array(dtype=float)):
    i = adjit.tid()
    if i >= n:
        return
    out[i] = float(i) + 0.5


def test_early_return_in_kernel():
    out = adjit.full(2000, -1.0)
    _run(guarded, 2000, 1234, out)
    ref = np.full(2000, -1.0, np.float32)
    ref[:1234] = np.arange(1234) + 0.5
    np.testing.assert_array_equal(out.numpy(), ref)


@adjit.kernel
def nested_returns(x: adjit.array(dtype=int), out: adjit.array(dtype=int)):
    i = adjit.tid()
    v = x[i]
    out[i] = 1
    if v > 0:
        out[i] = 2
        if v > 10:
            return
        out[i] = 3
    else:
        if v == 0:
            out[i] = 4
            return
    out[i] = out[i] * 100


def test_nested_early_returns_in_kernel():
    xs = np.array([-5, 0, 5, 50], np.int32)
    out = adjit.zeros(4, dtype=int)
    _run(nested_returns, 4, adjit.array(xs), out)
    np.testing.assert_array_equal(out.numpy(), [100, 4, 300, 2])


# --- device functions ------------------------------------------------------------------------------

@adjit.func
def square(x: float) -> float:
    return x * x


@adjit.func
def divmod_trunc(a: int, b: int):
    return a / b, a % b


@adjit.func
def sign_of(x: float) -> float:
    if x < 0.0:
        return -1.0
    elif x == 0.0:
        return 0.0
    return 1.0


@adjit.func
def clamp_to(x: float, lo: float, hi: float) -> float:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@adjit.func
def vlen(v: adjit.vec3) -> float:
    return adjit.sqrt(adjit.dot(v, v))


@adjit.func
def scaled(v: adjit.vec3, s: float) -> adjit.vec3:
    return v * s


@adjit.func
def twice(x):
    # Unannotated: specialized per argument type.
    return x + x


@adjit.func
def sum_of_squares(a: float, b: float) -> float:
    return square(a) + square(b)


@adjit.func
def write_if_positive(out: adjit.array(dtype=float), i: int, v: float):
    if v <= 0.0:
        return
    out[i] = v


@adjit.func
def classify(v: int) -> int:
    r = 1
    if v > 0:
        r = 2
        if v > 10:
            return -r
        r = 3
    else:
        if v == 0:
            return 4
    return r * 100


@adjit.kernel
def call_functions(x: adjit.array(dtype=float), k: adjit.array(dtype=int), v: adjit.array(dtype=adjit.vec3),
                   d: adjit.array(dtype=adjit.float64),
                   out: adjit.array(dtype=float, ndim=2), out_i: adjit.array(dtype=int, ndim=2),
                   out_v: adjit.array(dtype=adjit.vec3), out_d: adjit.array(dtype=adjit.float64),
                   pos: adjit.array(dtype=float)):
    i = adjit.tid()
    out[i, 0] = square(x[i])
    out[i, 1] = sign_of(x[i])
    out[i, 2] = clamp_to(x[i], -1.0, 1.0)
    out[i, 3] = vlen(v[i])
    out[i, 4] = sum_of_squares(x[i], 2.0)
    out[i, 5] = twice(x[i])
    q, r = divmod_trunc(k[i], 3)
    out_i[i, 0] = q
    out_i[i, 1] = r
    out_i[i, 2] = twice(k[i])
    out_i[i, 3] = classify(k[i])
    out_v[i] = scaled(v[i], 2.0)
    out_d[i] = twice(d[i])
    write_if_positive(pos, i, x[i])


def test_device_functions():
    xs = np.array([-2.5, 0.0, 0.5, 3.0], np.float32)
    ks = np.array([-7, 0, 8, 50], np.int32)
    vs = np.array([[3, 4, 0], [1, 2, 2], [0, 0, 0], [-1, 0, 0]], np.float32)
    ds = np.array([0.1, -1e300, 1.0 / 3.0, 2.0], np.float64)
    out, out_i = adjit.zeros((4, 6)), adjit.zeros((4, 4), dtype=int)
    out_v, out_d, pos = adjit.zeros(4, dtype=adjit.vec3), adjit.zeros(4, dtype=adjit.float64), adjit.full(4, -1.0)
    _run(call_functions, 4, adjit.array(xs), adjit.array(ks), adjit.array(vs, dtype=adjit.vec3), adjit.array(ds),
         out, out_i, out_v, out_d, pos)
    np.testing.assert_array_equal(out.numpy()[:, 0], xs * xs)
    np.testing.assert_array_equal(out.numpy()[:, 1], np.sign(xs))
    np.testing.assert_array_equal(out.numpy()[:, 2], np.clip(xs, -1, 1))
    np.testing.assert_allclose(out.numpy()[:, 3], np.linalg.norm(vs.astype(np.float64), axis=1), rtol=1e-6)
    np.testing.assert_array_equal(out.numpy()[:, 4], xs * xs + np.float32(4.0))
    np.testing.assert_array_equal(out.numpy()[:, 5], xs + xs)
    # int / and % truncate toward zero (C and Warp semantics).
    np.testing.assert_array_equal(out_i.numpy()[:, 0], [math.trunc(a / 3) for a in ks.tolist()])
    np.testing.assert_array_equal(out_i.numpy()[:, 1], [int(math.fmod(a, 3)) for a in ks.tolist()])
    np.testing.assert_array_equal(out_i.numpy()[:, 2], 2 * ks)
    np.testing.assert_array_equal(out_i.numpy()[:, 3], [100, 4, 300, -2])
    np.testing.assert_array_equal(out_v.numpy(), 2 * vs)
    np.testing.assert_array_equal(out_d.numpy(), 2 * ds)
    np.testing.assert_array_equal(pos.numpy(), [-1.0, -1.0, 0.5, 3.0])


@adjit.kernel
def func_in_loop(n: int, out: adjit.array(dtype=float)):
    i = adjit.tid()
    acc = 0.0
    for k in range(n):
        acc = acc + square(float(k)) * sign_of(float(k - i))
    out[i] = acc


def test_device_function_called_in_a_loop():
    out = adjit.zeros(6)
    _run(func_in_loop, 6, 10, out)
    ref = [sum(k * k * np.sign(k - i) for k in range(10)) for i in range(6)]
    np.testing.assert_array_equal(out.numpy(), ref)


# --- not yet supported ------------------------------------------------------------------------------

def _break_kernel():
    @adjit.kernel
    def first_negative(x: adjit.array(dtype=float), out: adjit.array(dtype=int)):
        i = adjit.tid()
        found = -1
        for k in range(x.shape[0]):
            if x[k] < 0.0:
                found = k
                break
        out[i] = found
    return first_negative


def _continue_kernel():
    @adjit.kernel
    def sum_positive(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
        i = adjit.tid()
        s = 0.0
        for k in range(x.shape[0]):
            if x[k] < 0.0:
                continue
            s += x[k]
        out[i] = s
    return sum_positive


def test_break():
    out = adjit.zeros(1, dtype=int)
    _run(_break_kernel(), 1, adjit.array(np.array([1, 2, -3, 4, -5], np.float32)), out)
    assert out.numpy()[0] == 2


def test_continue():
    out = adjit.zeros(1)
    _run(_continue_kernel(), 1, adjit.array(np.array([1, 2, -3, 4, -5], np.float32)), out)
    assert out.numpy()[0] == 7.0


@adjit.kernel
def _argmax_runtime(x: adjit.array(dtype=float, ndim=2), n: int, out_idx: adjit.array(dtype=int),
                    out_val: adjit.array(dtype=float)):
    # Per row: the index of the largest value among the first positive run, skipping
    # zeros (continue) and stopping at the first negative value (break).
    r = adjit.tid()
    best = -1.0
    best_k = -1
    for k in range(n):
        v = x[r, k]
        if v == 0.0:
            continue
        if v < 0.0:
            break
        if v > best:
            best = v
            best_k = k
    out_idx[r] = best_k
    out_val[r] = best


def test_break_continue_argmax_runtime_bound():
    rng = np.random.default_rng(3)
    rows, n = 64, 12
    data = rng.uniform(0.1, 1.0, (rows, n)).astype(np.float32)
    data[rng.random((rows, n)) < 0.2] = 0.0
    data[rng.random((rows, n)) < 0.1] *= -1.0
    out_idx, out_val = adjit.zeros(rows, dtype=int), adjit.zeros(rows)
    adjit.launch(_argmax_runtime, dim=rows, inputs=[adjit.array(data), n, out_idx, out_val])
    for r in range(rows):
        best, best_k = -1.0, -1
        for k in range(n):
            v = data[r, k]
            if v == 0.0:
                continue
            if v < 0.0:
                break
            if v > best:
                best, best_k = v, k
        assert out_idx.numpy()[r] == best_k
        assert out_val.numpy()[r] == np.float32(best)


@adjit.kernel
def _while_break_nested(x: adjit.array(dtype=int), out: adjit.array(dtype=int)):
    # Collatz steps until reaching 1 or 50 steps; the inner loop's break
    # must not end the outer loop.
    i = adjit.tid()
    v = x[i]
    steps = 0
    while True:
        if v == 1:
            break
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
        for j in range(10, 0, -1):
            if j < 5:
                break
        if steps >= 50:
            break
    out[i] = steps


def test_while_true_break_with_nested_loop_break():
    xs = np.array([1, 2, 3, 6, 7, 27], np.int32)
    out = adjit.zeros(len(xs), dtype=int)
    adjit.launch(_while_break_nested, dim=len(xs), inputs=[adjit.array(xs), out])

    def collatz(v):
        steps = 0
        while v != 1 and steps < 50:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            steps += 1
        return steps

    assert list(out.numpy()) == [collatz(int(v)) for v in xs]


@adjit.kernel
def _for_runtime_step_continue(start: int, stop: int, step: int, out: adjit.array(dtype=int)):
    total = 0
    for k in range(start, stop, step):
        if k % 3 == 0:
            continue
        total += k
    out[0] = total


@pytest.mark.parametrize("start,stop,step", [(0, 20, 1), (0, 20, 4), (20, 0, -3), (5, 5, 2), (9, -7, -2)])
def test_for_runtime_step_with_continue(start, stop, step):
    out = adjit.zeros(1, dtype=int)
    adjit.launch(_for_runtime_step_continue, dim=1, inputs=[start, stop, step, out])
    assert out.numpy()[0] == sum(k for k in range(start, stop, step) if k % 3 != 0)


# --- the loop variable after its loop: Python's value ------------------------------------------

@adjit.kernel
def loop_variable_after(n: int, step: int, y: adjit.array(dtype=adjit.int32)):
    i = adjit.tid()
    k = int(-7)
    for k in range(i, n, step):
        pass
    y[i] = k


@adjit.kernel
def loop_variable_after_break(n: int, y: adjit.array(dtype=adjit.int32)):
    i = adjit.tid()
    for j in range(n):
        if j == 3 + i:
            break
    y[i] = j


def _python_loop_variable(i, n, step):
    k = -7
    for k in range(i, n, step):
        pass
    return k


@pytest.mark.parametrize("n,step", [(10, 1), (10, 3), (0, 1), (3, 2), (-5, -2), (10, -1), (2, 5)])
def test_the_loop_variable_keeps_its_last_value_after_the_loop(n, step):
    y = adjit.zeros(4, dtype=adjit.int32)
    adjit.launch(loop_variable_after, dim=4, inputs=[n, step, y])
    assert y.numpy().tolist() == [_python_loop_variable(i, n, step) for i in range(4)]


@pytest.mark.parametrize("n", [1, 2, 4, 10])
def test_the_loop_variable_after_a_break_is_the_breaking_iteration(n):
    def python(i):
        for j in range(n):
            if j == 3 + i:
                break
        return j
    y = adjit.zeros(3, dtype=adjit.int32)
    adjit.launch(loop_variable_after_break, dim=3, inputs=[n, y])
    assert y.numpy().tolist() == [python(i) for i in range(3)]


# --- only the taken side of `a if c else b`, `and`, `or` runs -----------------------------------

@adjit.kernel
def guarded_sqrt(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    v = x[i]
    y[i] = adjit.sqrt(v) if v > 0.0 else 0.0


def test_the_untaken_side_of_a_conditional_expression_passes_no_gradient():
    # Both sides evaluated would give 0 * inf = NaN at x = 0 and NaN at x < 0.
    x = adjit.array(np.array([-1.0, 0.0, 0.25, 4.0], np.float32), requires_grad=True)
    y = adjit.zeros(4, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(guarded_sqrt, dim=4, inputs=[x, y])
    tape.backward(grads={y: adjit.ones(4)})
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0, 0.25])  # 1 / (2 sqrt(x))


@adjit.kernel
def short_circuits(x: adjit.array(dtype=float), hits: adjit.array(dtype=float), out: adjit.array(dtype=int)):
    i = adjit.tid()
    v = x[i]
    a = v > 0.5 and adjit.atomic_add(hits, 0, 1.0) >= 0.0
    b = v > 0.5 or adjit.atomic_add(hits, 1, 1.0) >= 0.0
    c = adjit.atomic_add(hits, 2, 1.0) if v > 3.0 else 7.0
    out[i] = int(a) + 10 * int(b) + 100 * int(c)


def test_and_or_and_conditional_expressions_run_only_the_taken_side():
    x = adjit.array(np.array([-1.0, 0.0, 0.25, 4.0], np.float32))
    hits, out = adjit.zeros(3), adjit.zeros(4, dtype=int)
    adjit.launch(short_circuits, dim=4, inputs=[x, hits, out])
    np.testing.assert_array_equal(hits.numpy(), [1.0, 3.0, 1.0])  # per side effect: the threads that ran it
    np.testing.assert_array_equal(out.numpy(), [710, 710, 710, 11])


# --- return inside loops (a thread leaving early) ----------------------------------------------

@adjit.kernel
def first_negative(x: adjit.array2d(dtype=float), out: adjit.array(dtype=int)):
    i = adjit.tid()
    out[i] = -1
    for j in range(x.shape[1]):
        if x[i, j] < 0.0:
            out[i] = j
            return
    out[i] = 100


@adjit.kernel
def sum_until(x: adjit.array2d(dtype=adjit.float64), out: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    s = adjit.float64(0.0)
    k = int(0)
    while k < 3:
        for j in range(x.shape[1]):
            s = s + x[i, j] * x[i, j]
            if s > adjit.float64(5.0):
                out[i] = s
                return
        k = k + 1
    out[i] = -s


def test_return_inside_loops_leaves_the_thread():
    x = adjit.array(np.array([[1, 2, -3, 4], [1, 1, 1, 1], [-1, 0, 0, 0]], np.float32))
    out = adjit.zeros(3, dtype=int)
    adjit.launch(first_negative, dim=3, inputs=[x, out])
    assert out.numpy().tolist() == [2, 100, 0]


def test_return_inside_nested_loops_is_differentiable():
    from adjit.testing import check_gradients
    data = np.array([[1.1, 1.3, 0.2, 0.4], [0.5, 0.6, 0.7, 0.3], [0.1, 0.2, 0.1, 0.2]])
    x = adjit.array(data, dtype=adjit.float64, requires_grad=True)
    out = adjit.zeros(3, dtype=adjit.float64, requires_grad=True)
    adjit.launch(sum_until, dim=3, inputs=[x, out])

    def reference(row):
        s = 0.0
        for _ in range(3):
            for v in row:
                s += v * v
                if s > 5.0:
                    return s
        return -s
    np.testing.assert_allclose(out.numpy(), [reference(r) for r in data], rtol=1e-14)
    check_gradients(sum_until, 3, [x], [out])
