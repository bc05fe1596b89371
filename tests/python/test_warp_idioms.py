"""Idioms of real Warp code (issue 26, item 3), each against Warp's semantics."""
import numpy as np
import pytest

import adjit as wp


# -- subclassed vector and matrix types -------------------------------------------------------------

class vec3s(wp.types.vector(length=3, dtype=wp.int32)):  # noqa: N801 (Warp code's spelling)
    pass


class mat23d(wp.types.matrix(shape=(2, 3), dtype=wp.float64)):  # noqa: N801
    """A 2x3 matrix of doubles."""


class vec1i(wp.types.vector(length=1, dtype=wp.int32)):  # noqa: N801 (Newton's, which imports fine)
    pass


@wp.func
def _twice(v: vec3s) -> vec3s:
    return v * 2


@wp.kernel
def _subclassed(a: wp.array(dtype=vec3s), m: wp.array(dtype=mat23d), out: wp.array(dtype=vec3s),
                mo: wp.array(dtype=mat23d)):
    i = wp.tid()
    out[i] = _twice(a[i]) + vec3s(1, 2, 3)
    one = wp.float64(1.0)
    zero = wp.float64(0.0)
    mo[i] = m[i] * wp.float64(2.0) + mat23d(one, zero, zero, zero, zero, one)


def test_subclassed_types_are_their_base_under_a_new_name():
    assert vec3s.__name__ == "vec3s" and repr(vec3s) == "vec3s" and vec3s.__module__ == __name__
    assert vec3s == wp.vec3i and hash(vec3s) == hash(wp.vec3i)  # as Warp's types_equal
    assert mat23d.__doc__ == "A 2x3 matrix of doubles." and mat23d.shape == (2, 3)
    assert wp.types.type_is_vector(vec3s) and wp.types.type_is_matrix(mat23d)
    np.testing.assert_array_equal(vec3s(1, 2, 3), np.array([1, 2, 3], np.int32))
    assert vec3s(1, 2, 3).dtype == np.int32 and mat23d().dtype == np.float64
    np.testing.assert_array_equal(vec1i(4), [4])


def test_subclassed_types_in_kernels():
    a = wp.array([vec3s(1, 2, 3), vec3s(4, 5, 6)], dtype=vec3s)
    m = wp.array(np.arange(12.0).reshape(2, 2, 3), dtype=mat23d)
    out = wp.zeros(2, dtype=vec3s)
    mo = wp.zeros(2, dtype=mat23d)
    wp.launch(_subclassed, dim=2, inputs=[a, m, out, mo])
    np.testing.assert_array_equal(out.numpy(), [[3, 6, 9], [9, 12, 15]])
    expect = np.arange(12.0).reshape(2, 2, 3) * 2 + np.array([[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(mo.numpy(), expect)
    assert out.dtype is vec3s


def test_subclass_with_members_is_a_clear_error():
    with pytest.raises(TypeError, match=r"class bad\(vec3f\).*no methods.*\['norm'\]"):
        class bad(wp.vec3):  # noqa: N801
            def norm(self):
                return 1.0
    with pytest.raises(TypeError, match="subclassed alone"):
        class two(wp.vec3, wp.mat22):  # noqa: N801
            pass


# -- an array as a condition, None for an array argument --------------------------------------------

@wp.kernel
def _optional_weights(x: wp.array(dtype=float), w: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    if w:
        y[i] = x[i] * x[i] * w[i]
    else:
        y[i] = 3.0 * x[i]


@wp.kernel
def _short_circuit(arr: wp.array(dtype=int), result: wp.array(dtype=int)):
    i = wp.tid()
    if arr and i >= 0 and arr[i] == 0:  # arr[i] must not run for a null array
        result[i] = -1
    elif not arr or arr[i] == 5:
        result[i] = -2
    else:
        result[i] = 1


@wp.kernel
def _null_checks(a: wp.array2d(dtype=wp.vec3), b: wp.array(dtype=float), out: wp.array(dtype=int)):
    out[0] = int(a is None)
    out[1] = int(a is not None)
    out[2] = int(b is None)
    out[3] = 10 if a else 20
    out[4] = int(not not b)


def test_array_as_condition_and_none_argument():
    result = wp.zeros(3, dtype=int)
    wp.launch(_short_circuit, dim=3, inputs=[None, result])
    np.testing.assert_array_equal(result.numpy(), [-2, -2, -2])
    wp.launch(_short_circuit, dim=3, inputs=[wp.array([0, 5, 7], dtype=int), result])
    np.testing.assert_array_equal(result.numpy(), [-1, -2, 1])


def test_is_none_checks():
    out = wp.zeros(5, dtype=int)
    wp.launch(_null_checks, dim=1, inputs=[None, wp.zeros(2, dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [1, 0, 0, 20, 1])
    wp.launch(_null_checks, dim=1, inputs=[wp.zeros((2, 1), dtype=wp.vec3), None, out])
    np.testing.assert_array_equal(out.numpy(), [0, 1, 1, 10, 0])
    # An array with no elements is null too, as in Warp (its data pointer is null there).
    wp.launch(_null_checks, dim=1, inputs=[wp.zeros((2, 0), dtype=wp.vec3), None, out])
    np.testing.assert_array_equal(out.numpy(), [1, 0, 1, 20, 0])


def test_optional_array_gradients():
    x0 = np.array([0.5, -1.25, 2.0], np.float32)
    w0 = np.array([2.0, 3.0, -1.0], np.float32)
    # With weights: y = x^2 w, dy/dx = 2 x w, dy/dw = x^2.
    x = wp.array(x0, dtype=float, requires_grad=True)
    w = wp.array(w0, dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_optional_weights, dim=3, inputs=[x, w, y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    np.testing.assert_allclose(y.numpy(), x0 * x0 * w0, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0 * w0, rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), x0 * x0, rtol=1e-6)
    # Without: y = 3 x, dy/dx = 3.
    x = wp.array(x0, dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_optional_weights, dim=3, inputs=[x, None, y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    np.testing.assert_allclose(y.numpy(), 3 * x0, rtol=1e-6)
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_reading_a_null_array_is_a_located_error():
    @wp.kernel
    def reads(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        out[0] = a[0]

    with pytest.raises(wp.OutOfBoundsError, match=r"test_warp_idioms.py:\d+: kernel 'reads': index 0 is out of "
                                                  r"range for array 'a' of shape \(0,\)"):
        wp.launch(reads, dim=1, inputs=[None, wp.zeros(1, dtype=float)])


def test_is_compares_arrays_with_none_only():
    @wp.kernel
    def bad(a: wp.array(dtype=float), b: wp.array(dtype=float)):
        if a is b:
            b[0] = 1.0

    with pytest.raises(wp.KernelSyntaxError, match=r"test_warp_idioms.py:\d+: `is` / `is not` compare an array "
                                                   "with None"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=float), wp.zeros(1, dtype=float)])


@wp.struct
class _Optional:
    scale: float
    w: wp.array(dtype=float)


@wp.kernel
def _struct_field_condition(s: _Optional, out: wp.array(dtype=float)):
    i = wp.tid()
    if s.w:
        out[i] = s.w[i] * s.scale
    else:
        out[i] = s.scale


def test_struct_array_field_as_condition():
    # A struct's array field left unset (None) is Warp's null array too.
    s = _Optional()
    s.scale = 2.0
    out = wp.zeros(2, dtype=float)
    wp.launch(_struct_field_condition, dim=2, inputs=[s, out])
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])
    s.w = wp.array([3.0, 4.0], dtype=float)
    wp.launch(_struct_field_condition, dim=2, inputs=[s, out])
    np.testing.assert_array_equal(out.numpy(), [6.0, 8.0])
