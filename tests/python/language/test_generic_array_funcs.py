"""@func parameters annotated with a generic array (``array(dtype=Any)``,
``array(dtype=Float)``), as Newton's ``_atomic_update_metric_max(metric_argmax:
wp.array[Any], ...)`` and ``binary_search(values: wp.array(dtype=Any), ...)``:
each call is specialized to its argument's array, as in Warp 1.19 (whose
results for these kernels are the expected values below)."""
from typing import Any

import numpy as np
import pytest

import adjit as wp
from adjit.errors import KernelTypeError


@wp.func
def store_first(m: wp.array[Any], v: Any):
    m[0] = v


@wp.func
def copy_up(m: wp.array(dtype=Any)):
    m[1] = m[0]


@wp.kernel
def store_i64(m: wp.array(dtype=wp.int64)):
    copy_up(m)
    store_first(m, wp.int64(3))


@wp.kernel
def store_vec(m: wp.array(dtype=wp.vec3)):
    copy_up(m)
    store_first(m, wp.vec3(1.0, 2.0, 3.0))


def test_each_call_takes_the_arguments_array_type():
    a = wp.array(np.array([7, 0], np.int64), dtype=wp.int64)
    wp.launch(store_i64, dim=1, inputs=[a])
    assert a.numpy().tolist() == [3, 7]  # Warp 1.19: [3, 7]
    v = wp.array(np.array([[4.0, 5.0, 6.0], [0.0, 0.0, 0.0]], np.float32), dtype=wp.vec3)
    wp.launch(store_vec, dim=1, inputs=[v])
    np.testing.assert_array_equal(v.numpy(), np.array([[1, 2, 3], [4, 5, 6]], np.float32))


@wp.func
def squared(x: wp.array(dtype=wp.types.Float), i: int):
    return x[i] * x[i]


@wp.kernel
def squares(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = squared(x, i)


def test_a_pattern_dtype_specializes_and_differentiates():
    x = wp.array(np.array([1.5, -2.0, 0.25]), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(squares, dim=3, inputs=[x], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), np.array([2.25, 4.0, 0.0625]))
    tape.backward(grads={y: wp.array(np.ones(3), dtype=wp.float64)})
    np.testing.assert_array_equal(x.grad.numpy(), np.array([3.0, -4.0, 0.5]))  # d(x^2)/dx = 2x


def test_an_array_the_parameter_does_not_take_is_an_error_naming_the_call():
    @wp.kernel
    def ints(x: wp.array(dtype=wp.int32), y: wp.array(dtype=wp.float64)):
        y[0] = squared(x, 0)  # Float takes no int32

    @wp.kernel
    def two_d(m: wp.array2d(dtype=wp.int64)):
        copy_up(m)  # a 1-d parameter

    for kernel, args in ((ints, [wp.zeros(1, dtype=wp.int32), wp.zeros(1, dtype=wp.float64)]),
                         (two_d, [wp.zeros((2, 2), dtype=wp.int64)])):
        with pytest.raises(KernelTypeError, match=r"test_generic_array_funcs\.py:\d+: argument 1 of \w+\(\) must be"):
            wp.launch(kernel, dim=1, inputs=args)
