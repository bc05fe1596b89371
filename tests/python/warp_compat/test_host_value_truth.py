"""Host vector and matrix values are truthy as Warp's are (Warp's are ctypes
arrays: ``bool(v)`` is ``len(v) > 0``), checked against Warp 1.19's answers
(recorded here: CI has no Warp). Newton's builder relies on it:
``if any(x for x in inertia):`` is true for every 3x3 inertia, zero or not."""
import numpy as np
import pytest

import adjit as wp


@pytest.mark.parametrize("value", [wp.vec3(), wp.vec3(1.0, 0.0, 0.0), wp.vec2i(), wp.mat33(), wp.mat22(1.0),
                                   wp.quat(), wp.transform(), wp.types.vector(5, wp.float32)()])
def test_values_are_truthy_whatever_their_components(value):
    # Warp 1.19: bool(wp.vec3()) is True, bool(wp.mat33()) is True, ...
    assert bool(value) is True


def test_any_over_the_rows_of_a_zero_matrix_is_true_as_in_warp():
    # Warp 1.19: any(x for x in wp.mat33()) is True (each row is a vec3, truthy)
    zero = wp.mat33()
    assert any(x for x in zero) is True
    assert [bool(row) for row in zero] == [True, True, True]
    # also for a matrix computed on the host (Newton's transform_inertia: R @ I @ R^T + m * (...))
    r = wp.quat_to_matrix(wp.quat_identity())
    eye = wp.mat33(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    computed = r @ zero @ wp.transpose(r) + 2.0 * (wp.dot(wp.vec3(), wp.vec3()) * eye
                                                    - wp.outer(wp.vec3(), wp.vec3()))
    assert any(x for x in computed) is True
    np.testing.assert_array_equal(np.asarray(computed), np.zeros((3, 3), np.float32))


def test_comparisons_and_reductions_are_plain_numpy_results():
    a, b = wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 0.0, 3.0)
    eq = a == b
    assert type(eq) is np.ndarray and eq.tolist() == [True, False, True]
    with pytest.raises(ValueError, match="ambiguous"):  # never silently true
        bool(a == b)
    assert type(np.isclose(a, b)) is np.ndarray
    total = np.sum(wp.vec3())
    assert not isinstance(total, np.ndarray) and bool(total) is False
    assert float(np.dot(a, b)) == 10.0


def test_arithmetic_keeps_values_values_and_bitwise_unchanged():
    a, m = wp.vec3(1.0, 2.0, 3.0), wp.mat33(2.0)
    for result, expected in ((a + a, np.array([2, 4, 6], np.float32)), (m @ a, np.full(3, 12, np.float32)),
                             (-a, -np.array([1, 2, 3], np.float32)), (m[0], np.full(3, 2, np.float32))):
        assert isinstance(result, wp.types.CompositeValue) and bool(result)
        assert result.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(result), expected)
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    assert bool(t.p) and bool(t.q)
    assert isinstance(wp.cross(a, a), wp.types.CompositeValue)  # a host call of a builtin
