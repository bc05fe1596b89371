"""Warp's ``fixedarray`` and ``ref[T]`` (issue 12).

``fixedarray(dtype=..., shape=...)`` types the local arrays ``zeros(shape,
dtype)`` makes in kernels, for @func parameters and results; a local array
passed to a func is passed by reference (the func's writes change the
caller's array). ``ref[T]`` makes a @func parameter pass by reference.
Forward values against numpy, reverse (Tape) and forward (jvp) gradients
through the write-backs against float64 central differences, and bad inputs
naming the kernel line.
"""
import inspect
import typing

import numpy as np
import pytest

import adjit
from adjit import types as T

rng = np.random.default_rng(1912)


# --- the names ------------------------------------------------------------------------------------

def test_fixedarray_is_the_type_of_a_local_array():
    t = adjit.fixedarray(dtype=float, shape=(2, 3))
    assert t == T.LocalArrayType((2, 3), adjit.float32) and hash(t) == hash(T.LocalArrayType((2, 3), adjit.float32))
    assert adjit.fixedarray(dtype=adjit.vec3, shape=4).shape == (4,)
    generic = adjit.fixedarray(dtype=float)
    assert generic.accepts(T.LocalArrayType((5,), adjit.float32))
    assert not generic.accepts(T.LocalArrayType((5,), adjit.int32))
    assert adjit.fixedarray(dtype=typing.Any, shape=3).accepts(T.LocalArrayType((3,), adjit.vec3))
    with pytest.raises(TypeError, match="at most 256"):
        adjit.fixedarray(dtype=adjit.mat44, shape=(4, 5))
    with pytest.raises(TypeError, match="positive"):
        adjit.fixedarray(dtype=float, shape=(0,))


def test_ref_is_an_annotation():
    r = adjit.ref[adjit.float32]
    assert isinstance(r, T.Reference) and r.dtype is adjit.float32 and r == adjit.ref[adjit.float32]
    assert repr(adjit.ref[adjit.vec3]) == "ref[vec3]"


# --- fixedarray: local arrays through funcs --------------------------------------------------------

@adjit.func
def fill_ramp(a: adjit.fixedarray(dtype=float, shape=4), s: float):
    for i in range(a.shape[0]):
        a[i] = s * float(i)


@adjit.func
def add_one_2d(a: adjit.fixedarray(dtype=int, shape=(2, 3))):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] += 1


@adjit.func
def total(a: adjit.fixedarray(dtype=float)) -> float:  # any shape
    s = float(0.0)
    for i in range(len(a)):
        s += a[i]
    return s


@adjit.func
def set_first(a: adjit.array(dtype=float), v: float):  # an array annotation takes a local array too (Warp)
    a[0] = v


@adjit.func
def set_at(a, k: int, v: adjit.vec3):  # unannotated
    a[k] = v


@adjit.func
def made() -> adjit.fixedarray(dtype=float, shape=3):
    a = adjit.zeros(shape=3, dtype=float)
    a[1] = 5.0
    return a


@adjit.func
def nested(a: adjit.fixedarray(dtype=float, shape=4), k: int):
    if k > 0:
        fill_ramp(a, float(k))  # passed on by reference
        return
    a[3] = -1.0


@adjit.kernel
def fixedarray_calls(k: adjit.array(dtype=int), y: adjit.array(dtype=float, ndim=2),
                     yi: adjit.array(dtype=int, ndim=2), yv: adjit.array(dtype=adjit.vec3)):
    t = adjit.tid()
    a = adjit.zeros(shape=4, dtype=float)
    fill_ramp(a, 2.0)
    b = a  # a copy: a is a value
    set_first(b, 9.0)
    y[t, 0] = total(a) + a[0]
    y[t, 1] = total(b)
    c = made()
    y[t, 2] = c[1] + total(c) + float(len(c))
    nested(a, k[t])
    y[t, 3] = a[3] + a[1]
    m = adjit.zeros((2, 3), dtype=int)
    m[k[t] % 2, 2] = 10
    add_one_2d(m)
    add_one_2d(m)
    for j in range(3):
        yi[t, j] = m[0, j] + 100 * m[1, j]
    v = adjit.zeros(3, dtype=adjit.vec3)
    set_at(v, k[t] % 3, adjit.vec3(1.0, 2.0, float(t)))
    yv[t] = v[0] + v[1] * 10.0 + v[2] * 100.0


def test_local_arrays_pass_to_funcs_by_reference():
    n = 4
    k = np.array([0, 1, 2, 3], np.int32)
    y, yi, yv = adjit.zeros((n, 4)), adjit.zeros((n, 3), dtype=int), adjit.zeros(n, dtype=adjit.vec3)
    adjit.launch(fixedarray_calls, n, [adjit.array(k), y, yi, yv])
    want = np.zeros((n, 4), np.float32)
    for t in range(n):
        a = 2.0 * np.arange(4, dtype=np.float32)
        b = a.copy()
        b[0] = 9.0
        want[t, :2] = [a.sum() + a[0], b.sum()]
        want[t, 2] = 5.0 + 5.0 + 3.0
        if k[t] > 0:
            a = k[t] * np.arange(4, dtype=np.float32)
        else:
            a[3] = -1.0
        want[t, 3] = a[3] + a[1]
    np.testing.assert_array_equal(y.numpy(), want)
    m = np.full((n, 2, 3), 2, np.int32)
    m[np.arange(n), k % 2, 2] = 12
    np.testing.assert_array_equal(yi.numpy(), m[:, 0] + 100 * m[:, 1])
    v = np.zeros((n, 3, 3), np.float32)
    v[np.arange(n), k % 3] = np.stack([np.ones(n), 2 * np.ones(n), np.arange(n)], axis=1)
    np.testing.assert_array_equal(yv.numpy(), v[:, 0] + 10 * v[:, 1] + 100 * v[:, 2])


# --- ref[T] ---------------------------------------------------------------------------------------

@adjit.struct
class Box:
    value: float
    v: adjit.vec3


@adjit.func
def increment(x: adjit.ref[int]):
    x += 1


@adjit.func
def set_float(x: adjit.ref[float], v: float):
    x = v


@adjit.func
def forward_ref(x: adjit.ref[float]):
    set_float(x, x + 10.0)  # a ref parameter passed on by reference


@adjit.func
def swap(x: adjit.ref[float], y: adjit.ref[float]):
    x, y = y, x


@adjit.func
def grow_box(c: adjit.ref[Box]):
    c.value += 1.0
    c.v = c.v * 2.0


@adjit.func
def set_vec(x: adjit.ref[adjit.vec3]):
    x = adjit.vec3(1.0, 2.0, 3.0)


@adjit.func
def doubling_until(x: adjit.ref[float], n: int) -> int:
    for i in range(n):
        x = x * 2.0
        if x > 20.0:
            return i  # the write-back happens on every return
    return -1


@adjit.func
def halve_or_bump(x: adjit.ref[float]) -> float:
    if x > 2.0:
        x = x * 0.5
        return x
    x += 1.0
    return x * 2.0


@adjit.kernel
def ref_targets(s: adjit.array(dtype=float), y: adjit.array(dtype=float, ndim=2), boxes: adjit.array(dtype=Box),
                counts: adjit.array(dtype=int)):
    t = adjit.tid()
    n = adjit.int32(t)
    increment(n)
    increment(counts[t])
    x = s[t]
    forward_ref(x)
    y[t, 0] = float(n) + x
    p = float(1.0)
    q = s[t]
    swap(p, q)
    y[t, 1] = p * 10.0 + q
    b = Box()
    b.value = s[t]
    b.v = adjit.vec3(1.0, 2.0, 3.0)
    grow_box(b)
    grow_box(boxes[t])
    y[t, 2] = b.value + b.v[2] * 10.0
    v = adjit.vec3()
    set_float(v.y, s[t])
    set_float(v[2], 8.0)
    set_float(v[0], -1.0)
    y[t, 3] = v[0] + v[1] * 10.0 + v.z * 100.0
    z = s[t]
    it = doubling_until(z, 10)
    y[t, 4] = float(it) * 1000.0 + z
    w = adjit.vec3()
    set_vec(w)
    m = adjit.mat22()
    set_float(m[1, 0], 4.0)
    a = adjit.zeros((2, 3), dtype=float)
    set_float(a[t % 2, 2], 6.0)
    y[t, 5] = w[1] + m[1][0] * 10.0 + a[t % 2, 2] * 100.0
    r = s[t]
    h = halve_or_bump(r)
    y[t, 6] = h * 1000.0 + r
    set_float(y[t, 7], s[t] * 3.0)  # an element of a kernel array
    set_float(x=y[t, 8], v=2.0)  # by keyword


def test_ref_parameters_write_to_the_callers_storage():
    n = 4
    s = np.array([0.5, 1.5, 2.5, 3.5], np.float32)
    y = adjit.zeros((n, 9))
    boxes = adjit.zeros(n, dtype=Box)
    counts = adjit.array(np.array([5, 6, 7, 8], np.int32))
    adjit.launch(ref_targets, n, [adjit.array(s), y, boxes, counts])
    want = np.zeros((n, 9), np.float32)
    for t in range(n):
        want[t, 0] = (t + 1) + s[t] + 10.0
        want[t, 1] = s[t] * 10.0 + 1.0
        want[t, 2] = (s[t] + 1.0) + 6.0 * 10.0
        want[t, 3] = -1.0 + s[t] * 10.0 + 800.0
        z, it = s[t], -1
        for i in range(10):
            z = z * 2.0
            if z > 20.0:
                it = i
                break
        want[t, 4] = it * 1000.0 + z
        want[t, 5] = 2.0 + 40.0 + 600.0
        r = s[t]
        h = r * 0.5 if r > 2.0 else (r + 1.0) * 2.0
        r = r * 0.5 if r > 2.0 else r + 1.0
        want[t, 6] = h * 1000.0 + r
        want[t, 7] = s[t] * 3.0
        want[t, 8] = 2.0
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(counts.numpy(), [6, 7, 8, 9])
    got = boxes.numpy()
    np.testing.assert_array_equal(got["value"], np.ones(n))
    np.testing.assert_array_equal(got["v"], np.zeros((n, 3)))


@adjit.func
def next_index(i: adjit.ref[int]):
    i += 1


@adjit.func
def bump_at(i: adjit.ref[int], x: adjit.ref[float]):
    i += 1
    x += 100.0


@adjit.kernel
def indices_fixed_at_the_call(y: adjit.array(dtype=float), k: adjit.array(dtype=int)):
    i = adjit.int32(0)
    a = adjit.zeros(3, dtype=float)
    set_float(a[k[i]], 7.0)
    next_index(i)
    set_float(a[k[i]], 8.0)
    bump_at(i, a[i])  # a[1]: i is read at the call (as Warp takes the element's address there)
    bump_at(i, a[i])  # a[2]
    for j in range(3):
        y[j] = a[j]
    y[3] = float(i)


@adjit.func
def bump(a: adjit.fixedarray(dtype=float, shape=3), k: int):
    a[k] += 2.0


@adjit.kernel
def carried_through_control_flow(s: adjit.array(dtype=float), y: adjit.array(dtype=float, ndim=2)):
    t = adjit.tid()
    x = float(0.0)
    a = adjit.zeros(3, dtype=float)
    for i in range(5):
        set_float(x, x + 1.0)
        bump(a, i % 3)
    if s[t] > 0.0:
        set_float(x, x * 10.0)
        bump(a, 0)
    n = int(0)
    while n < 3:
        set_float(x, x + 1.0)
        n += 1
    y[t, 0] = x
    for j in range(3):
        y[t, j + 1] = a[j]


def test_loops_and_branches_carry_what_calls_write_back():
    y = adjit.zeros((2, 4))
    adjit.launch(carried_through_control_flow, 2, [adjit.array(np.array([1.0, -1.0], np.float32)), y])
    np.testing.assert_array_equal(y.numpy(), [[53.0, 6.0, 4.0, 2.0], [8.0, 4.0, 4.0, 2.0]])


@adjit.func
def advance(x: adjit.ref[int], limit: int) -> bool:
    x += 1
    return x < limit


@adjit.kernel
def written_by_loop_tests(y: adjit.array(dtype=int)):
    i = int(0)
    n = int(0)
    while advance(i, 5):  # Warp's idiom: while mesh_query_aabb_next(query, face)
        n += 1
    j = int(0)
    m = int(0)
    while advance(j, 100):
        if j == 7:
            break
        m += 1
    y[0] = n
    y[1] = i
    y[2] = m
    y[3] = j


def test_a_loop_test_writes_back_each_time_it_runs():
    y = adjit.zeros(4, dtype=int)
    adjit.launch(written_by_loop_tests, 1, [y])
    assert y.numpy().tolist() == [4, 5, 6, 7]


def test_indices_of_a_reference_are_those_of_the_call():
    y = adjit.zeros(4)
    adjit.launch(indices_fixed_at_the_call, 1, [y, adjit.array(np.array([2, 0], np.int32))])
    np.testing.assert_array_equal(y.numpy(), [8.0, 100.0, 107.0, 3.0])


# --- gradients ------------------------------------------------------------------------------------

@adjit.func
def smooth_update(x: adjit.ref[adjit.float64], c: adjit.ref[adjit.vec3d], w: adjit.float64):
    x = adjit.sin(x) * w + x * x
    c = c * x + adjit.vec3d(w, 0.0, x)


@adjit.func
def accumulate(acc: adjit.ref[adjit.float64], v: adjit.float64):
    acc += v * v


@adjit.func
def smooth_fill(a: adjit.fixedarray(dtype=adjit.float64, shape=5), x: adjit.array(dtype=adjit.float64, ndim=2),
                t: int):
    for i in range(5):
        a[i] = adjit.cos(x[t, i]) * x[t, (i + 2) % 5]


@adjit.func
def scatter_scale(a: adjit.fixedarray(dtype=adjit.float64), k: int, s: adjit.float64):
    a[k] = a[k] * s + a[(k + 1) % len(a)]


@adjit.kernel
def smooth_refs(x: adjit.array(dtype=adjit.float64, ndim=2), k: adjit.array(dtype=int),
                y: adjit.array(dtype=adjit.float64), z: adjit.array(dtype=adjit.float64)):
    t = adjit.tid()
    u = x[t, 0]
    c = adjit.vec3d(x[t, 1], x[t, 2], 1.0)
    smooth_update(u, c, x[t, 3])
    smooth_update(u, c, x[t, 4])
    p = adjit.vec3d(x[t, 2], x[t, 0], x[t, 4])
    accumulate(p[k[t] % 3], x[t, 1])  # a runtime component
    a = adjit.zeros(5, dtype=adjit.float64)
    smooth_fill(a, x, t)
    scatter_scale(a, k[t] % 5, x[t, 3])
    scatter_scale(a, (k[t] + 2) % 5, u)
    accumulate(a[k[t] % 5], c[2])  # an element of a local array
    accumulate(z[t], x[t, 2] * u)  # an element of a kernel array
    for j in range(3):  # loops and branches carry what a call writes back
        accumulate(p[j], x[t, j] * c[0])
    if x[t, 0] > 0.0:
        accumulate(u, x[t, 3])
    y[t] = u * c[0] + c[1] * c[2] + adjit.dot(p, c) + a[0] * a[1] + a[2] * a[3] + a[4]


def _refs_loss(x, k):
    y, z = adjit.zeros(len(x), dtype=adjit.float64), adjit.zeros(len(x), dtype=adjit.float64)
    adjit.launch(smooth_refs, len(x), [adjit.array(x, dtype=adjit.float64), adjit.array(k), y, z])
    return np.concatenate([y.numpy(), z.numpy()])


def _refs_case():
    n = 4
    x = rng.normal(size=(n, 5)) * 0.7
    k = np.array([0, 1, 3, 7], np.int32)
    return x, k


def _central_differences(f, x, h=1e-6):
    fd = np.zeros((f(x).size,) + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        fd[(slice(None),) + i] = (f(x + e) - f(x - e)) / (2 * h)
    return fd


def test_reverse_gradient_through_write_backs_matches_central_differences():
    x, k = _refs_case()
    xa = adjit.array(x, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros(len(x), dtype=adjit.float64, requires_grad=True)
    z = adjit.zeros(len(x), dtype=adjit.float64, requires_grad=True)
    wy, wz = rng.normal(size=len(x)), rng.normal(size=len(x))
    tape = adjit.Tape()
    with tape:
        adjit.launch(smooth_refs, len(x), [xa, adjit.array(k), y, z])
    tape.backward(grads={y: adjit.array(wy, dtype=adjit.float64), z: adjit.array(wz, dtype=adjit.float64)})
    fd = np.tensordot(np.concatenate([wy, wz]), _central_differences(lambda v: _refs_loss(v, k), x), axes=1)
    np.testing.assert_allclose(xa.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_forward_gradient_through_write_backs_matches_central_differences():
    x, k = _refs_case()
    dx = rng.normal(size=x.shape)
    dy, dz = adjit.jvp(smooth_refs, len(x), [adjit.array(x, dtype=adjit.float64), adjit.array(k)], [dx, None],
                       [adjit.zeros(len(x), dtype=adjit.float64), adjit.zeros(len(x), dtype=adjit.float64)])
    h = 1e-6
    fd = (_refs_loss(x + h * dx, k) - _refs_loss(x - h * dx, k)) / (2 * h)
    np.testing.assert_allclose(np.concatenate([dy.numpy(), dz.numpy()]), fd, rtol=1e-6, atol=1e-8)


def test_hand_derived_gradient_of_a_ref_update():
    # y = u after u <- u*u + sin(u)*w, twice: dy/du0 = (2u1 + cos(u1) w)(2u0 + cos(u0) w)
    @adjit.func
    def step(u: adjit.ref[adjit.float64], w: adjit.float64):
        u = u * u + adjit.sin(u) * w

    @adjit.kernel
    def twice(x: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64)):
        u = x[0]
        step(u, 0.5)
        step(u, 0.5)
        y[0] = u

    x = adjit.array(np.array([0.3]), dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros(1, dtype=adjit.float64, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(twice, 1, [x, y])
    tape.backward(grads={y: adjit.array(np.ones(1), dtype=adjit.float64)})
    u0 = 0.3
    u1 = u0 * u0 + np.sin(u0) * 0.5
    u2 = u1 * u1 + np.sin(u1) * 0.5
    assert y.numpy()[0] == pytest.approx(u2, rel=1e-15)
    assert x.grad.numpy()[0] == pytest.approx((2 * u1 + np.cos(u1) * 0.5) * (2 * u0 + np.cos(u0) * 0.5), rel=1e-14)


# --- bad inputs -----------------------------------------------------------------------------------

@adjit.func
def _make() -> float:
    return 1.0


@adjit.func
def _make_box() -> Box:
    b = Box()
    return b


@adjit.func
def _set_pair(x: adjit.ref[float], y: adjit.ref[float]):
    x = 1.0
    y = 2.0


@adjit.func
def _write_row(a: adjit.array(dtype=float), x: adjit.ref[float]):
    x = 1.0
    a[0] = x


@adjit.func
def _rebind(a: adjit.fixedarray(dtype=float, shape=3)):
    a = adjit.zeros(3, dtype=float)  # bad
    a[0] = 1.0


@adjit.func
def _changes_type(x: adjit.ref[float]):
    x = adjit.vec3(1.0)  # bad


def _literal(y: adjit.array(dtype=float)):
    set_float(1.0, 2.0)  # bad


def _expression(y: adjit.array(dtype=float)):
    a = y[0]
    b = y[1]
    set_float(a + b, 2.0)  # bad


def _call_result(y: adjit.array(dtype=float)):
    set_float(_make(), 2.0)  # bad


def _field_of_call_result(y: adjit.array(dtype=float)):
    set_float(_make_box().value, 2.0)  # bad


def _untyped_literal(y: adjit.array(dtype=float)):
    x = 0
    set_float(x, 2.0)  # bad


def _wrong_type(y: adjit.array(dtype=float)):
    n = adjit.int32(3)
    set_float(n, 2.0)  # bad


def _wrong_precision(y: adjit.array(dtype=float)):
    d = adjit.float64(3.0)
    set_float(d, 2.0)  # bad


def _global(y: adjit.array(dtype=float)):
    set_float(SCALE, 2.0)  # bad


SCALE = 3.0


def _same_local_twice(y: adjit.array(dtype=float)):
    x = y[0]
    _set_pair(x, x)  # bad


def _same_array_maybe(y: adjit.array(dtype=float)):
    i = adjit.tid()
    _set_pair(y[i], y[i + 0])  # bad


def _array_and_element(y: adjit.array(dtype=float)):
    _write_row(y, y[0])  # bad


def _rebinds_parameter(y: adjit.array(dtype=float)):
    a = adjit.zeros(3, dtype=float)
    _rebind(a)
    y[0] = a[0]


def _ref_changes_type(y: adjit.array(dtype=float)):
    x = y[0]
    _changes_type(x)


def _constructs_fixedarray(y: adjit.array(dtype=float)):
    a = adjit.fixedarray(dtype=float, shape=3)  # bad
    y[0] = a[0]


def _fixedarray_shape_mismatch(y: adjit.array(dtype=float)):
    a = adjit.zeros(5, dtype=float)
    fill_ramp(a, 1.0)  # bad


def _grad_of_ref(y: adjit.array(dtype=float)):
    x = y[0]
    g = adjit.grad(halve_or_bump)(x)  # bad


@pytest.mark.parametrize("fn, words", [
    (_literal, ["argument 1 ('x') of set_float() is passed by reference", "a literal has no storage"]),
    (_expression, ["must be assignable", "a + b: the value of an expression is a temporary"]),
    (_call_result, ["_make(): the result of a call is a temporary"]),
    (_field_of_call_result, ["_make_box().value: the result of a call is a temporary"]),
    (_untyped_literal, ["holds the literal 0, of no fixed type", "x = float32(0)"]),
    (_wrong_type, ["must be float32 (ref[float32]), got int32"]),
    (_wrong_precision, ["must be float32 (ref[float32]), got float64"]),
    (_global, ["'SCALE' is not a local variable here"]),
    (_same_local_twice, ["arguments 1 and 2 of _set_pair() (x and x) may be the same storage"]),
    (_same_array_maybe, ["may be the same storage"]),
    (_array_and_element, ["arguments 1 and 2 of _write_row() (y and y[0]) may be the same storage"]),
    (_constructs_fixedarray, ["fixedarray(...) is a type", "zeros(shape, dtype)"]),
    (_fixedarray_shape_mismatch, ["must be zeros((4,), float32), got the local array zeros((5,), float32)"]),
    (_grad_of_ref, ["grad(halve_or_bump)", "by reference"]),
])
def test_bad_calls_name_the_kernel_line(fn, words):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(2)])
    message = str(e.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_fixedarray_and_ref.py:{line}:" in message, message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("fn, words, bad", [
    (_rebinds_parameter, ["cannot rebind the local array parameter 'a'"], _rebind),
    (_ref_changes_type, ["'x' is passed by reference as float32: it cannot be assigned a vec3 value"], _changes_type),
])
def test_bad_funcs_name_the_func_line(fn, words, bad):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(2)])
    message = str(e.value)
    lines, first = inspect.getsourcelines(bad.pyfunc)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_fixedarray_and_ref.py:{line}:" in message, message
    for word in words:
        assert word in message, message


def test_ref_and_fixedarray_are_not_kernel_parameters():
    def with_ref(x: adjit.ref[float], y: adjit.array(dtype=float)):
        y[0] = x

    def with_fixed(a: adjit.fixedarray(dtype=float, shape=3), y: adjit.array(dtype=float)):
        y[0] = a[0]

    for fn, what in ((with_ref, "ref[T]"), (with_fixed, "fixedarray")):
        with pytest.raises(adjit.KernelError, match=f"kernel parameter '.*': {what.replace('[', '.').replace(']', '.')} "
                                                    "is not allowed here") as e:
            adjit.launch(adjit.kernel(fn), dim=1, inputs=[1.0, adjit.zeros(1)])
        assert "test_fixedarray_and_ref.py:" in str(e.value)


def test_func_grad_of_a_function_taking_a_reference_is_rejected():
    @adjit.func
    def bump(x: adjit.ref[float]):
        x += 1.0

    @adjit.func_grad(bump)
    def bump_grad(x: adjit.ref[float]):
        pass

    @adjit.kernel
    def uses(y: adjit.array(dtype=float)):
        x = y[0]
        bump(x)
        y[1] = x

    with pytest.raises(adjit.KernelError, match="has a func_grad or func_jvp") as e:
        adjit.launch(uses, dim=1, inputs=[adjit.zeros(2)])
    assert "test_fixedarray_and_ref.py:" in str(e.value)


@adjit.func
def _count_up(x: adjit.ref[int]) -> bool:
    x = x + 1
    return x < 9


def test_while_test_writes_reference_arguments():
    # `while query_next(query, index)` relies on it; with break/continue the
    # test runs neither after a break nor twice
    @adjit.kernel
    def loops(out: adjit.array(dtype=int)):
        c = int(0)
        n = int(0)
        while _count_up(c):
            n = n + 1
        out[0] = n
        out[1] = c
        c = 0
        n = 0
        while _count_up(c):
            if c == 3:
                continue
            if c == 7:
                break
            n = n + 1
        out[2] = n
        out[3] = c

    out = adjit.zeros(4, dtype=int)
    adjit.launch(loops, dim=1, inputs=[out])
    assert out.numpy().tolist() == [8, 9, 5, 7]
