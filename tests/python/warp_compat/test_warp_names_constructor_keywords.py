"""Warp 1.19 host names, part 4 (issue 26, item 4): from_numpy's shape= and
device=, empty's ndim=, func_native (declared, refused where used)."""
import numpy as np
import pytest

import adjit as wp


def test_from_numpy_takes_warps_shape_and_device():
    data = np.arange(12, dtype=np.float32)
    x = wp.from_numpy(data, shape=(3, 4))
    assert x.shape == (3, 4) and x.dtype == wp.float32
    np.testing.assert_array_equal(x.numpy(), data.reshape(3, 4))
    data[5] = -1.0  # still the caller's memory on the CPU
    assert x.numpy()[1, 1] == -1.0
    v = wp.from_numpy(data, wp.vec3, 4, "cpu", True)  # Warp's positional order
    assert v.shape == (4,) and v.dtype == wp.vec3 and v.requires_grad and v.device == "cpu"
    np.testing.assert_array_equal(v.numpy()[3], [9, 10, 11])
    m = wp.from_numpy(np.arange(8.0), dtype=wp.mat22d, shape=(2,))
    np.testing.assert_array_equal(m.numpy()[1], [[4, 5], [6, 7]])
    with pytest.raises(ValueError, match=r"\(12 scalars\) cannot take the shape \(5,\)"):
        wp.from_numpy(data, shape=5)
    with pytest.raises(ValueError, match="not C-contiguous"):
        wp.from_numpy(np.zeros((4, 4), np.float32)[:, 1:3], shape=8)
    y = wp.from_numpy(np.zeros((4, 4))[:, 1:3], dtype=wp.float64, shape=8, copy=True)
    assert y.shape == (8,)


def test_empty_takes_ndim():
    a = wp.empty(ndim=2, dtype=wp.vec3)
    assert a.shape == (0, 0) and a.ndim == 2 and a.dtype == wp.vec3
    assert wp.empty((2, 3), ndim=2).shape == (2, 3)
    assert wp.empty(ndim=1).shape == (0,)
    with pytest.raises(ValueError, match=r"shape \(2, 3\) has 2 dimensions, not ndim=1"):
        wp.empty((2, 3), ndim=1)
    with pytest.raises(ValueError, match="ndim must be 1 to 4"):
        wp.empty(ndim=5)


@wp.func_native("return a + b;")  # declared: a module declaring one imports
def add_native(a: float, b: float) -> float:
    ...


@wp.kernel
def calls_native(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = add_native(x[i], 1.0)


def test_func_native_is_refused_where_used():
    where = f"test_warp_names_constructor_keywords.py:{add_native_line()}"
    with pytest.raises(wp.NotInAdjitError) as info:
        add_native(1.0, 2.0)
    text = str(info.value)
    assert "@func_native 'add_native'" in text and "is not in adjit" in text and "C++/CUDA snippet" in text
    assert where in text
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(calls_native, 2, inputs=[wp.zeros(2, dtype=float)])
    text = str(info.value)
    assert "@func_native 'add_native'" in text and where in text and "calls_native" in text
    assert "x[i] = add_native(x[i], 1.0)" in text  # located at the call


def add_native_line():
    return add_native.pyfunc.__code__.co_firstlineno


def test_func_takes_warps_name_and_module():
    @wp.func(name="twice_key", module="unique")
    def twice(x: float) -> float:
        return 2.0 * x

    @wp.kernel
    def use(a: wp.array(dtype=float)):
        a[0] = twice(a[0])

    assert twice.key == "twice_key" and twice.module == "unique"
    a = wp.array(np.array([1.5], np.float32), dtype=float)
    wp.launch(use, dim=1, inputs=[a])
    assert a.numpy()[0] == 3.0
    with pytest.raises(ValueError, match="must be an identifier"):
        wp.func(name="not a name")
    with pytest.raises(TypeError, match="module=...\\) must be"):
        wp.func(module=3)
