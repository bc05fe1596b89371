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
