"""Loaded kernels follow the definitions they depend on (as in a notebook):
a redefined @func is compiled in on the next launch, and a recorded launch
whose code changed before backward() is a GradientError, never an adjoint of
other code than the forward that ran."""
import numpy as np
import pytest

import adjit as wp
from adjit.errors import GradientError

SCALE = 2.0


@wp.func
def shape_fn(x: float):
    return x * x


@wp.kernel
def apply_shape(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = shape_fn(a[i])


@wp.kernel
def scaled_square(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = SCALE * a[i] * a[i]


def _define_square():
    global shape_fn

    @wp.func
    def shape_fn(x: float):
        return x * x


def _define_cube():
    global shape_fn

    @wp.func
    def shape_fn(x: float):
        return x * x * x


@pytest.fixture(autouse=True)
def _restore():
    global SCALE
    _define_square()
    SCALE = 2.0
    yield
    _define_square()
    SCALE = 2.0


def _arrays(x):
    a = wp.array(np.asarray(x, np.float32), requires_grad=True)
    return a, wp.zeros(len(x), dtype=float, requires_grad=True)


def _launch_and_backward(kernel, a, b):
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, len(a), inputs=[a, b])
    tape.backward(grads={b: wp.array(np.ones(len(a), np.float32))})
    return b.numpy().copy(), a.grad.numpy().copy()


def test_a_redefined_func_is_compiled_in_on_the_next_launch():
    x = [1.0, 2.0, 3.0]
    a, b = _arrays(x)
    value, grad = _launch_and_backward(apply_shape, a, b)
    np.testing.assert_allclose(value, np.square(x))
    np.testing.assert_allclose(grad, 2 * np.asarray(x))
    _define_cube()
    a, b = _arrays(x)
    value, grad = _launch_and_backward(apply_shape, a, b)
    np.testing.assert_allclose(value, np.power(x, 3))
    np.testing.assert_allclose(grad, 3 * np.square(x))


def test_a_func_redefined_between_launch_and_backward_is_a_gradient_error():
    a, b = _arrays([1.0, 2.0])
    tape = wp.Tape()
    with tape:
        wp.launch(apply_shape, 2, inputs=[a, b])
    _define_cube()
    with pytest.raises(GradientError, match=r"kernel 'apply_shape' \(.*test_redefinition.py:\d+\) changed "
                                            r"after its recorded launch ran: the source of "
                                            r"'shape_fn' changed"):
        tape.backward(grads={b: wp.array(np.ones(2, np.float32))})


def test_a_global_changed_between_launch_and_backward_is_a_gradient_error():
    global SCALE
    x = np.array([1.0, 2.0], np.float32)
    a, b = _arrays(x)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_square, 2, inputs=[a, b])
    np.testing.assert_allclose(b.numpy(), 2.0 * x * x)
    SCALE = 3.0
    with pytest.raises(GradientError, match="the global 'SCALE' read by 'scaled_square' changed"):
        tape.backward(grads={b: wp.array(np.ones(2, np.float32))})
    # A new recording compiles both directions from the new value.
    a, b = _arrays(x)
    value, grad = _launch_and_backward(scaled_square, a, b)
    np.testing.assert_allclose(value, 3.0 * x * x)
    np.testing.assert_allclose(grad, 6.0 * x)


@wp.kernel
def shadowing(x: wp.array(dtype=float), gain: float, y: wp.array(dtype=float)):
    i = wp.tid()
    square = x[i] * gain
    y[i] = square * square + LATE * 0.0


def late_local(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    if x[i] > 0.0:
        late = 1.0
    y[i] = x[i] * late  # (not provably local: the global `late` stays keyed)


gain = 0.5
square = 0
LATE = 1.0
late = 3.0


def test_globals_named_like_parameters_or_locals_are_not_read():
    # A module-level `gain` or `square` is not what the kernel reads: changing one between the launch and
    # backward() neither recompiles nor is a GradientError (it was: the key counted every name).
    global gain, square
    x = np.array([1.0, -2.0], np.float32)
    a, b = _arrays(x)
    with wp.Tape() as tape:
        wp.launch(shadowing, 2, inputs=[a, 2.0, b])
    gain, square = 7.0, "changed"
    tape.backward(grads={b: wp.array(np.ones(2, np.float32))})
    np.testing.assert_allclose(a.grad.numpy(), 8.0 * x)
    from adjit import cache
    digest = cache.kernel_digest(shadowing.pyfunc, [])
    _, constants = next(iter(digest.parts.values()))  # (the kernel's own, first)
    assert "LATE" in constants and not {"gain", "square"} & set(constants)
    digest_late = cache.kernel_digest(late_local, [])
    assert "late" in next(iter(digest_late.parts.values()))[1]


def test_local_names_are_only_names_bound_before_any_read():
    import ast
    import inspect
    import textwrap
    from adjit.source import local_names
    tree = ast.parse(textwrap.dedent(inspect.getsource(late_local))).body[0]
    # x, y: parameters; i: assigned at the top level before any read; late: assigned only in a branch first
    assert local_names(tree) == {"x", "y", "i"}
    tree = ast.parse("def f(a, *b, c, **d):\n    e = e + 1\n    g, (h, k) = 1, (2, 3)\n    m: int = a\n").body[0]
    assert local_names(tree) == {"a", "b", "c", "d", "g", "h", "k", "m"}  # (e reads the global first)


def test_unrelated_definitions_between_launch_and_backward_change_nothing():
    x = np.array([0.5, -1.5], np.float32)
    a, b = _arrays(x)
    tape = wp.Tape()
    with tape:
        wp.launch(apply_shape, 2, inputs=[a, b])

    @wp.func
    def unrelated(x: float):
        return x + 1.0

    @wp.kernel
    def other(a: wp.array(dtype=float)):
        a[wp.tid()] = unrelated(a[wp.tid()])

    tape.backward(grads={b: wp.array(np.ones(2, np.float32))})
    np.testing.assert_allclose(a.grad.numpy(), 2 * x)


def test_a_func_grad_attached_after_loading_is_compiled_in():
    x = np.array([1.0, 4.0], np.float32)
    _define_square()
    _, grad = _launch_and_backward(apply_shape, *_arrays(x))
    np.testing.assert_allclose(grad, 2 * x)

    @wp.func_grad(shape_fn)
    def adj_shape_fn(x: float, adj_ret: float):  # deliberately not x^2's derivative: 10 x
        wp.adjoint[x] += 10.0 * x * adj_ret

    _, grad = _launch_and_backward(apply_shape, *_arrays(x))
    np.testing.assert_allclose(grad, 10 * x)
