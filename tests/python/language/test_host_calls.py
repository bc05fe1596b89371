"""Builtins and @func called from Python scope, as Warp allows: evaluated
by a one-thread kernel, so the host value is the kernel's, bit for bit."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def in_a_kernel(x: wp.array(dtype=float), axis: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                s: wp.array(dtype=float), q_out: wp.array(dtype=wp.quat), v_out: wp.array(dtype=wp.vec3)):
    s[0] = wp.sin(x[0])
    q = wp.quat_from_axis_angle(axis[0], x[0])
    q_out[0] = q
    v_out[0] = wp.quat_rotate(q, v[0])


def test_builtins_on_the_host_equal_the_kernel_bit_for_bit():
    x, axis, v = np.float32(0.7), wp.vec3(0.0, 0.6, 0.8), wp.vec3(1.0, -2.0, 0.5)
    s, q_out, v_out = wp.zeros(1), wp.zeros(1, dtype=wp.quat), wp.zeros(1, dtype=wp.vec3)
    wp.launch(in_a_kernel, dim=1, inputs=[wp.array([x]), wp.array([axis], dtype=wp.vec3),
                                          wp.array([v], dtype=wp.vec3)], outputs=[s, q_out, v_out])
    assert wp.sin(x) == s.numpy()[0] and type(wp.sin(x)) is np.float32
    q = wp.quat_from_axis_angle(axis, x)
    np.testing.assert_array_equal(q, q_out.numpy()[0])
    assert isinstance(q, wp.types.QuatValue)  # a quaternion (a global one is a quat constant in kernels)
    np.testing.assert_array_equal(wp.quat_rotate(q, v), v_out.numpy()[0])


def test_host_arguments_are_typed_as_kernel_literals_and_values():
    assert type(wp.sqrt(2.0)) is np.float32                     # a Python float: float32
    assert type(wp.sqrt(np.float64(2.0))) is np.float64           # numpy scalars keep their type
    assert wp.max(3, 7) == 7 and type(wp.max(3, 7)) is np.int32
    assert wp.length(np.array([3.0, 4.0])) == 5.0                 # a float64 2-vector
    np.testing.assert_array_equal(wp.identity(n=3, dtype=wp.float64), np.eye(3))
    np.testing.assert_array_equal(wp.mul(wp.mat22(1.0, 2.0, 3.0, 4.0), wp.vec2(1.0, 1.0)), [3.0, 7.0])
    p = wp.transform_point(wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity()), wp.vec3(1.0, 0.0, 0.0))
    np.testing.assert_array_equal(p, [2.0, 2.0, 3.0])
    axis, angle = wp.quat_to_axis_angle(wp.quat(0.0, 0.0, np.sin(0.25), np.cos(0.25)))
    np.testing.assert_allclose(axis, [0, 0, 1], atol=1e-7)
    assert abs(angle - 0.5) < 1e-6


def test_a_random_draw_on_the_host_leaves_the_state_alone():
    state = wp.rand_init(42)
    assert wp.randf(state) == wp.randf(state)  # Warp's rule: the state is a value here
    assert 0.0 <= wp.randf(state) < 1.0


@wp.func
def spring_energy(x: float, k: float):
    return 0.5 * k * x * x + wp.sin(x)


def test_a_func_on_the_host():
    assert spring_energy(2.0, 3.0) == np.float32(6.0) + np.sin(np.float32(2.0))


def test_host_calls_are_no_steps_of_a_tape():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    with wp.Tape() as tape:
        wp.sin(0.5)
        spring_energy(1.0, 2.0)
    assert tape._steps == []


def test_what_cannot_run_on_the_host_says_so():
    with pytest.raises(wp.AdjitError, match="inside an @adjit.kernel"):
        wp.atomic_add(wp.zeros(1), 0, 1.0)
    with pytest.raises(wp.AdjitError, match="inside an @adjit.kernel"):
        wp.transform_set_translation(wp.transform(), wp.vec3(0.0, 0.0, 0.0))
    with pytest.raises(TypeError, match="not a value a kernel takes"):
        wp.sin([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    with pytest.raises(TypeError, match="cross"):
        wp.cross(wp.vec3(1.0, 0.0, 0.0), 2.0)
