"""Warp's ways of making and naming kernels: ``wp.Kernel(func=, key=,
options=)``, as Warp's own tests and factories use it."""
from typing import Any

import numpy as np
import pytest

import adjit as wp


def _add_one_for(dtype):
    def add_one(a: wp.array(dtype=dtype)):
        i = wp.tid()
        a[i] = a[i] + dtype(1)
    return wp.Kernel(func=add_one, key=f"add_one_{dtype.__name__}")


def test_kernel_objects_from_one_definition_per_type():
    k_int, k_float = _add_one_for(wp.int32), _add_one_for(wp.float64)
    assert (k_int.key, k_float.key) == ("add_one_int32", "add_one_float64")
    a = wp.array(np.arange(4, dtype=np.int32))
    wp.launch(k_int, 4, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3, 4])
    b = wp.array(np.linspace(0, 1, 4))
    wp.launch(k_float, 4, inputs=[b])
    np.testing.assert_allclose(b.numpy(), np.linspace(0, 1, 4) + 1)


def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_kernel_options_enable_backward():
    k = wp.Kernel(func=square, key="square_no_backward", options={"enable_backward": False})
    assert k.options == {"enable_backward": False} and not k.enable_backward
    differentiable = wp.Kernel(func=square)
    assert differentiable.key == "square" and differentiable.enable_backward
    x = wp.array(np.array([1.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(differentiable, 2, inputs=[x, y])
    tape.backward(grads={y: wp.array(np.ones(2, np.float32))})
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 6.0])
    x.grad.zero_()
    tape = wp.Tape()
    with tape:
        wp.launch(k, 2, inputs=[x, y])
    with pytest.raises(wp.GradientError, match="enable_backward=False"):
        tape.backward(grads={y: wp.array(np.ones(2, np.float32))})


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(func=3), TypeError, "needs a Python function"),
    (dict(func=square, key=7), TypeError, "key=...\\) must be a str"),
    (dict(func=square, options={"enable_backwards": False}), KeyError, "unknown option"),
    (dict(func=square, options={"enable_backward": 1}), TypeError, "enable_backward must be True or False"),
    (dict(func=square, code_transformers=[object()]), TypeError, "transformers are not supported"),
    (dict(func=square, source="def square(): pass"), TypeError, "a source string is not supported"),
])
def test_kernel_constructor_misuse(kwargs, error, words):
    with pytest.raises(error, match=words):
        wp.Kernel(**kwargs)


@wp.kernel
def fill_generic(a: wp.array(dtype=Any), value: Any):
    a[wp.tid()] = value


@wp.overload
def fill_generic(a: wp.array(dtype=wp.float64), value: wp.float64): ...


@wp.overload
def fill_generic(a: wp.array(dtype=wp.int32), value: wp.int32): ...


def test_overload_decorator_on_a_stub_makes_an_instance():
    assert isinstance(fill_generic, wp.Kernel)  # the name still names the generic kernel
    assert len(fill_generic.overloads) == 2
    a = wp.zeros(3, dtype=wp.float64)
    wp.launch(fill_generic, 3, inputs=[a, wp.float64(2.5)])
    np.testing.assert_array_equal(a.numpy(), [2.5] * 3)
    b = wp.zeros(2, dtype=wp.int32)
    wp.launch(fill_generic, 2, inputs=[b, wp.int32(7)])
    np.testing.assert_array_equal(b.numpy(), [7, 7])


def test_overload_decorator_in_a_function_scope_and_its_errors():
    @wp.kernel
    def local_generic(x: Any):
        return

    @wp.overload
    def local_generic(x: float): ...

    assert len(local_generic.overloads) == 1
    with pytest.raises(TypeError, match="annotate every parameter"):
        @wp.overload
        def local_generic(x): ...
    with pytest.raises(TypeError, match="the parameters must be those of the generic kernel"):
        @wp.overload
        def local_generic(y: float): ...
    with pytest.raises(TypeError, match="no generic @kernel or @func named 'nothing_here'"):
        @wp.overload
        def nothing_here(x: float): ...
    with pytest.raises(TypeError, match="give the parameter types"):
        wp.overload(local_generic)


def test_kernel_decorator_name_module_options_and_cuda_hints():
    @wp.kernel(name="custom_key", launch_bounds=(256, 1), enable_cuda_smem_spilling=True, module="unique",
               module_options={"max_unroll": 4})
    def hinted(a: wp.array(dtype=float)):
        a[wp.tid()] = 2.0

    assert hinted.key == "custom_key"
    assert hinted.cuda_options == {"launch_bounds": (256, 1), "enable_cuda_smem_spilling": True}
    assert hinted.module.options["max_unroll"] == 4
    a = wp.zeros(3)
    wp.launch(hinted, 3, inputs=[a])  # the CUDA hints change nothing on the CPU
    np.testing.assert_array_equal(a.numpy(), [2.0] * 3)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(launch_bounds=0), ValueError, "launch_bounds"),
    (dict(launch_bounds=(1, 2, 3)), ValueError, "launch_bounds"),
    (dict(cuda_max_registers=64, launch_bounds=128), ValueError, "cannot be combined"),
    (dict(cluster_dim=17), ValueError, "cluster_dim"),
    (dict(grid_stride=1), TypeError, "grid_stride"),
    (dict(module_options={"max_unroll": 2}), ValueError, "needs module=\"unique\""),
    (dict(name="not an identifier"), ValueError, "identifier"),
    (dict(entry_point_abi="external_constant_params"), ValueError, "CUDA entry point"),
])
def test_kernel_decorator_checks_warps_options(kwargs, error, words):
    with pytest.raises(error, match=words):
        wp.kernel(**kwargs)(square)
