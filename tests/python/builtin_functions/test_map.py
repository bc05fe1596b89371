"""``adjit.map`` (Warp's ``wp.map``): a func or builtin applied to every
element of arrays in one generated launch: values against numpy, several
results, scalars and vector values passed to every element, 2-d arrays,
``out=``, gradients through the tape, and errors."""
import numpy as np
import pytest

import adjit as wp


@wp.func
def blend(a: float, b: wp.vec3, s: float):
    return b * (a * s), a + s


def test_map_a_func_with_several_results():
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    vs = np.arange(9, dtype=np.float32).reshape(3, 3)
    r, q = wp.map(blend, wp.array(xs), wp.array(vs, dtype=wp.vec3), 2.0)
    np.testing.assert_allclose(r.numpy(), vs * (xs * 2.0)[:, None], rtol=1e-6)
    np.testing.assert_allclose(q.numpy(), xs + 2.0, rtol=1e-7)


def test_map_a_builtin_over_a_2d_array_and_into_out():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(wp.map(wp.sqrt, wp.array(m)).numpy(), np.sqrt(m), rtol=1e-6)
    out = wp.zeros((2, 3))
    assert wp.map(wp.cos, wp.array(m), out=out) is out
    np.testing.assert_allclose(out.numpy(), np.cos(m), rtol=1e-6, atol=1e-7)
    kernel = wp.map(wp.cos, wp.array(m), return_kernel=True)
    assert isinstance(kernel, wp.Kernel)


def test_map_records_on_the_tape():
    xs = np.array([0.5, 1.0, 2.0])
    x = wp.array(xs, requires_grad=True)
    tape = wp.Tape()
    with tape:
        y = wp.map(wp.sin, x)
    assert y.requires_grad
    tape.backward(grads={y: wp.array(np.array([1.0, 2.0, 3.0]))})
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xs) * [1, 2, 3], rtol=1e-14)


def test_bad_calls_are_clear_errors():
    a, b = wp.zeros(3), wp.zeros(4)
    with pytest.raises(ValueError, match="different shapes"):
        wp.map(wp.atan2, a, b)
    with pytest.raises(TypeError, match="at least one adjit array"):
        wp.map(wp.sin, 1.0)
    with pytest.raises(TypeError, match="must be an @adjit.func or a builtin"):
        wp.map(len, a)
    with pytest.raises(ValueError, match="out must be 1 array"):
        wp.map(wp.sin, a, out=wp.zeros(3, dtype=int))
