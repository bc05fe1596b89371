"""Types named through values in kernels, and bool defaults of @func
parameters, as Newton uses them and as Warp 1.19 runs them (its results are
the expected values below):

- ``a.dtype(x)``: the array's element type as a constructor
  (kamino's ``rz_old.dtype(0.0)``);
- ``type(x)(y)``: Python's ``type`` of a value, the value's kernel type
  (the actuators' ``type(x)(xs[i])``, generic in x's float type);
- ``angular: bool = False``: a bool default (semi_implicit's joint_force).
"""
from typing import Any

import numpy as np
import pytest

import adjit as wp
from adjit.errors import KernelTypeError


@wp.kernel
def fill_from_dtype(a: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3)):
    a[0] = a.dtype(2.5)
    v[0] = v.dtype(1.0)  # a vec3 from one scalar: every component


def test_array_dtype_constructs_its_element_type():
    a = wp.zeros(1, dtype=wp.float64)
    v = wp.zeros(1, dtype=wp.vec3)
    wp.launch(fill_from_dtype, dim=1, inputs=[a, v])
    assert a.numpy().tolist() == [2.5]  # Warp 1.19: [2.5]
    assert v.numpy().tolist() == [[1.0, 1.0, 1.0]]


@wp.func
def shifted(x: Any):
    return type(x)(1.5) + x * type(x)(2.0)


@wp.kernel
def apply_shifted(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = shifted(x[i])


def test_type_of_a_value_is_its_kernel_type_and_differentiates():
    x = wp.array(np.array([0.0, 1.0 / 3.0]), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(apply_shifted, dim=2, inputs=[x], outputs=[y])
    # float64 all through: 1.5 + 2/3 is the float64 sum (a float32 cast would differ)
    assert y.numpy().tolist() == [1.5, 1.5 + 2.0 / 3.0]  # Warp 1.19: [1.5, ...]
    tape.backward(grads={y: wp.array(np.ones(2), dtype=wp.float64)})
    assert x.grad.numpy().tolist() == [2.0, 2.0]


@wp.func
def signed(x: float, neg: bool = False):
    if neg:
        return -x
    return x


@wp.kernel
def use_default(a: wp.array(dtype=float)):
    a[0] = signed(2.0) + signed(1.0, True)


def test_a_bool_default():
    a = wp.zeros(1, dtype=float)
    wp.launch(use_default, dim=1, inputs=[a])
    assert a.numpy().tolist() == [1.0]  # Warp 1.19: [1.0]


def test_type_of_what_has_no_value_type_is_an_error_naming_the_line():
    @wp.kernel
    def of_array(a: wp.array(dtype=float)):
        a[0] = type(a)(1.0)

    @wp.kernel
    def two_args(a: wp.array(dtype=float)):
        a[0] = type(a[0], a[0])(1.0)

    for kernel in (of_array, two_args):
        with pytest.raises(KernelTypeError, match=r"test_value_type_callees\.py:\d+: type\(\)"):
            wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=float)])
