"""Generic kernels (typing.Any parameters, array(dtype=Any)) and
adjit.overload, as Warp's: an instance per argument types."""
import typing

import numpy as np
import pytest

import adjit as wp


@wp.kernel
def scale(x: wp.array(dtype=typing.Any), s: typing.Any, y: wp.array(dtype=typing.Any)):
    i = wp.tid()
    y[i] = x[i] * s


@pytest.mark.parametrize("dtype, s", [(wp.float32, 2.0), (wp.float64, np.float64(3.0)), (wp.int32, 4),
                                      (wp.vec3, 2.0), (wp.uint8, np.uint8(3))])
def test_a_launch_makes_the_instance_for_its_arguments(dtype, s):
    shape = (3,) + getattr(dtype, "shape", ())
    x = wp.array(np.arange(int(np.prod(shape))).reshape(shape).astype(T_np(dtype)), dtype=dtype)
    y = wp.zeros(3, dtype=dtype)
    wp.launch(scale, dim=3, inputs=[x, s], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), x.numpy() * np.asarray(s, dtype=T_np(dtype)))


def T_np(dtype):
    return wp.types.scalar_of(dtype).np_dtype


def test_instances_are_made_once_and_differentiate():
    inst = wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64, wp.array(dtype=wp.float64)])
    assert wp.overload(scale, {"x": wp.array(dtype=wp.float64), "s": wp.float64,
                               "y": wp.array(dtype=wp.float64)}) is inst
    assert inst.param_types[1] is wp.float64 and scale.is_generic and not inst.is_generic
    x = wp.array(np.array([1.0, -2.0]), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scale, dim=2, inputs=[x, np.float64(5.0)], outputs=[y])  # the same instance
    tape.backward(grads={y: np.array([1.0, 2.0])})
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 10.0])


@wp.kernel
def partly_generic(x: wp.array(dtype=float), s: typing.Any, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * float(s)


def test_overload_checks_the_types():
    with pytest.raises(TypeError, match="is array\\(dtype=float32"):
        wp.overload(partly_generic, [wp.array(dtype=wp.float64), wp.int32, wp.array(dtype=float)])
    with pytest.raises(TypeError, match="typing.Any: give its type"):
        wp.overload(partly_generic, {"x": wp.array(dtype=float)})
    with pytest.raises(TypeError, match="any type, not"):
        wp.overload(scale, [wp.array(dtype=float, ndim=2), wp.float32, wp.array(dtype=float)])
    y = wp.zeros(2)
    wp.launch(partly_generic, dim=2, inputs=[wp.array(np.array([1.0, 2.0], np.float32)), 3], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    with pytest.raises(wp.KernelTypeError, match="generic"):
        partly_generic.param_types
