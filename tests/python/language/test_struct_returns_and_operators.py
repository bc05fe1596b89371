"""Device functions returning structs, and user ``@func``s named ``add``,
``sub``, ``mul``, ... called by operators where no builtin takes the operands
(Warp's operator overloading): values, gradients against hand-derived
derivatives, the compile cache's key, and located errors."""
import os

import numpy as np
import pytest

import adjit as wp
from adjit import cache

f64 = wp.float64
THIS_FILE = os.path.realpath(__file__)


@wp.struct
class Dual:
    value: f64
    slope: f64


@wp.struct
class Body:
    pos: wp.vec3d
    mass: f64
    tag: int


@wp.struct
class Pair:
    a: Dual
    b: Dual


@wp.func
def add(x: Dual, y: Dual):
    r = Dual()
    r.value = x.value + y.value
    r.slope = x.slope + y.slope
    return r


@wp.func
def sub(x: Dual, y: Dual):
    r = Dual()
    r.value = x.value - y.value
    r.slope = x.slope - y.slope
    return r


@wp.func
def mul(x: Dual, y: Dual):
    r = Dual()
    r.value = x.value * y.value
    r.slope = x.slope * y.value + x.value * y.slope
    return r


@wp.func
def variable(v: f64):
    d = Dual()
    d.value = v
    d.slope = f64(1.0)
    return d


@wp.func
def heavier(a: Body, b: Body):
    if a.mass > b.mass:  # returns in both branches
        return a
    return b


@wp.func
def split(d: Dual):
    p = Pair()
    p.a = d
    p.b = mul(d, d)
    return p, d.value


@wp.kernel
def polynomial(x: wp.array(dtype=f64), value: wp.array(dtype=f64), slope: wp.array(dtype=f64)):
    i = wp.tid()
    d = variable(x[i])
    p = d * d * d - d + d  # x^3 with its derivative, by the user operators
    p += d * d
    value[i] = p.value
    slope[i] = p.slope


def test_user_operators_on_structs_compute_dual_numbers():
    xs = np.array([-1.5, 0.5, 2.0])
    value, slope = wp.zeros(3, dtype=f64), wp.zeros(3, dtype=f64)
    wp.launch(polynomial, 3, inputs=[wp.array(xs)], outputs=[value, slope])
    np.testing.assert_allclose(value.numpy(), xs ** 3 + xs ** 2, rtol=1e-15)
    np.testing.assert_allclose(slope.numpy(), 3 * xs ** 2 + 2 * xs, rtol=1e-15)


def test_gradients_pass_through_user_operators_and_struct_returns():
    xs = np.array([-1.5, 0.5, 2.0])
    x = wp.array(xs, requires_grad=True)
    value, slope = wp.zeros(3, dtype=f64, requires_grad=True), wp.zeros(3, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(polynomial, 3, inputs=[x], outputs=[value, slope])
    tape.backward(grads={value: wp.array(np.ones(3)), slope: wp.array(np.full(3, 10.0))})
    np.testing.assert_allclose(x.grad.numpy(), 3 * xs ** 2 + 2 * xs + 10 * (6 * xs + 2), rtol=1e-14)


@wp.kernel
def pick(pos: wp.array(dtype=wp.vec3d), mass: wp.array(dtype=f64), out: wp.array(dtype=wp.vec3d),
         tags: wp.array(dtype=int), squares: wp.array(dtype=f64)):
    i = wp.tid()
    a = Body()
    a.pos = pos[i]
    a.mass = mass[i]
    a.tag = i
    b = Body()
    b.pos = pos[i] * f64(2.0)
    b.mass = f64(1.0)
    b.tag = 100 + i
    h = heavier(a, b)
    out[i] = h.pos * h.mass
    tags[i] = h.tag
    pair, v = split(variable(mass[i]))
    squares[i] = pair.b.value + pair.a.slope + v


def test_structs_returned_from_branches_and_nested_structs():
    pos = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])
    mass = np.array([3.0, 0.25])
    out, tags, squares = wp.zeros(2, dtype=wp.vec3d), wp.zeros(2, dtype=int), wp.zeros(2, dtype=f64)
    wp.launch(pick, 2, inputs=[wp.array(pos, dtype=wp.vec3d), wp.array(mass)], outputs=[out, tags, squares])
    np.testing.assert_allclose(out.numpy(), [pos[0] * 3.0, pos[1] * 2.0], rtol=1e-15)
    assert tags.numpy().tolist() == [0, 101]
    np.testing.assert_allclose(squares.numpy(), mass ** 2 + 1.0 + mass, rtol=1e-15)


def test_the_cache_key_holds_the_operator_functions():
    seen = {}
    cache._dependencies(polynomial.pyfunc if hasattr(polynomial, "pyfunc") else polynomial.func, seen)
    for f in (add, sub, mul):
        assert f.pyfunc in seen, f.__name__


# --- errors ------------------------------------------------------------------------------------

@wp.struct
class WithArray:
    data: wp.array(dtype=float)
    scale: float


@wp.func
def give_back(s: WithArray):
    return s  # E:array_struct


@wp.kernel
def returns_array_struct(s: WithArray, out: wp.array(dtype=float)):
    out[0] = give_back(s).scale


@wp.func
def mixed(x: f64):
    if x > f64(0.0):
        return variable(x)
    return x  # E:mixed


@wp.kernel
def mixed_returns(x: wp.array(dtype=f64)):
    x[0] = mixed(x[0]).value


@wp.struct
class NoOps:
    v: float


@wp.kernel
def no_operator(out: wp.array(dtype=float)):
    a = NoOps()
    b = NoOps()
    c = a / b  # E:no_operator
    out[0] = c.v


@wp.kernel
def chained(out: wp.array(dtype=float)):
    a = 1
    b = True
    if a == b == 1:  # E:chained
        out[0] = 1.0


def _with_array():
    s = WithArray()
    s.data = wp.zeros(2)
    return s


def _line(marker):
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# E:{marker}"):
                return number
    raise AssertionError(marker)


@pytest.mark.parametrize("kernel, marker, args, words", [
    (returns_array_struct, "array_struct", lambda: [_with_array(), wp.zeros(1)], "which has array fields"),
    (mixed_returns, "mixed", lambda: [wp.zeros(1, dtype=f64)], "the returns of this function give different types"),
    (no_operator, "no_operator", lambda: [wp.zeros(1)], "unsupported operands a NoOps struct and a NoOps struct"),
    (chained, "chained", lambda: [wp.zeros(1)], "operands have different types: int32 and bool"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_misuse_is_a_located_type_error(kernel, marker, args, words):
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(kernel, 1, inputs=args())
    err = info.value
    assert os.path.realpath(err.filename) == THIS_FILE and err.lineno == _line(marker), str(err)
    assert words in str(err), str(err)
