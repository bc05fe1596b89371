"""Generic kernels (typing.Any parameters, array(dtype=Any)) and
adjit.overload, as Warp's: an instance per argument types."""
import typing
from typing import Any

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


# --- Warp's generic annotations: vector(length=Any, ...), matrix(shape=(Any, Any), ...), Int/Float/Scalar ----

@wp.func
def squared_norm(v: wp.types.vector(length=Any, dtype=Any)):
    return wp.dot(v, v)


@wp.func
def trace_of(m: wp.types.matrix(shape=(Any, Any), dtype=Any)):
    return wp.trace(m)


@wp.func
def kind(x: wp.Int):
    return 1


@wp.func
def kind(x: wp.Float):
    return 2


@wp.func
def kind(x: wp.float64):  # an exact overload beats the generic one
    return 3


@wp.kernel
def generic_annotations(v3: wp.array(dtype=wp.vec3), v5: wp.array(dtype=wp.types.vector(5, wp.float64)),
                        m: wp.array(dtype=wp.mat33), out: wp.array(dtype=float), kinds: wp.array(dtype=int)):
    out[0] = squared_norm(v3[0])
    out[1] = float(squared_norm(v5[0]))
    out[2] = trace_of(m[0])
    kinds[0] = kind(wp.int32(1))
    kinds[1] = kind(wp.float32(1.0))
    kinds[2] = kind(wp.float64(1.0))
    kinds[3] = kind(wp.uint8(1))


def test_generic_vector_matrix_and_scalar_annotations():
    v3 = wp.array(np.array([[1.0, 2.0, 2.0]], np.float32), dtype=wp.vec3)
    v5 = wp.array(np.arange(5.0)[None], dtype=wp.types.vector(5, wp.float64))
    m = wp.array(np.diag([1.0, 2.0, 4.0]).astype(np.float32)[None], dtype=wp.mat33)
    out, kinds = wp.zeros(3), wp.zeros(4, dtype=int)
    wp.launch(generic_annotations, 1, inputs=[v3, v5, m], outputs=[out, kinds])
    np.testing.assert_allclose(out.numpy(), [9.0, 30.0, 7.0])
    np.testing.assert_array_equal(kinds.numpy(), [1, 2, 3, 1])


@wp.kernel
def scale_vectors(a: wp.array(dtype=wp.types.vector(length=Any, dtype=wp.Float)), s: wp.Float):
    i = wp.tid()
    a[i] = a[i] * s


def test_generic_kernel_parameters_match_their_pattern():
    a = wp.array(np.ones((2, 4)), dtype=wp.types.vector(4, wp.float64))
    wp.launch(scale_vectors, 2, inputs=[a, wp.float64(3.0)])
    np.testing.assert_array_equal(a.numpy(), np.full((2, 4), 3.0))
    with pytest.raises(TypeError, match="parameter .s. is Float, not int32"):
        wp.launch(scale_vectors, 2, inputs=[a, wp.int32(3)])


def test_a_func_argument_outside_its_pattern_is_a_located_error():
    @wp.kernel
    def wrong(out: wp.array(dtype=float)):
        out[0] = float(squared_norm(wp.mat22(1.0, 0.0, 0.0, 1.0)))

    with pytest.raises(wp.KernelTypeError, match=r"test_generics.py:\d+.*must be vector\(length=Any, dtype=Any\), "
                                                 r"got mat22"):
        wp.launch(wrong, 1, inputs=[wp.zeros(1)])
