"""Rigid transforms (p, q) and the transform builtins: values against
independent numpy formulas, Warp's spellings (t.p, t.q, t1 * t2,
transform()), and gradients against float64 finite differences."""
import numpy as np
import pytest

import adjit as wp
from adjit.testing import check_gradients

rng = np.random.default_rng(7)


# --- numpy references ---------------------------------------------------------------------

def rotation(q):
    """The rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def hamilton(a, b):
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def unit_quat():
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_transform():
    return np.concatenate([rng.normal(size=3), unit_quat()])


def same_rotation(qa, qb, atol):
    """q and -q are one rotation."""
    return min(np.abs(qa - qb).max(), np.abs(qa + qb).max()) <= atol


# --- values -----------------------------------------------------------------------------------

@wp.kernel
def transform_ops(t: wp.array(dtype=wp.transformd), u: wp.array(dtype=wp.transformd),
                  x: wp.array(dtype=wp.spatial_vectord), r: wp.array(dtype=wp.vec3d),
                  s: wp.array(dtype=wp.vec3d),
                  t_out: wp.array(dtype=wp.transformd), x_out: wp.array(dtype=wp.spatial_vectord),
                  v_out: wp.array(dtype=wp.vec3d), m_out: wp.array(dtype=wp.mat44d)):
    i = wp.tid()
    a = t[i]
    t_out[4 * i + 0] = wp.transform_multiply(a, u[i])
    t_out[4 * i + 1] = wp.transform_inverse(a)
    t_out[4 * i + 2] = wp.transform_from_matrix(wp.transform_to_matrix(a))
    t_out[4 * i + 3] = a * u[i]
    x_out[2 * i + 0] = wp.transform_twist(a, x[i])
    x_out[2 * i + 1] = wp.transform_wrench(a, x[i])
    v_out[6 * i + 0] = wp.velocity_at_point(x[i], r[i])
    v_out[6 * i + 1] = wp.transform_point(a, r[i])
    v_out[6 * i + 2] = wp.transform_vector(a, r[i])
    v_out[6 * i + 3] = wp.transform_point(wp.transform_compose(a.p, a.q, s[i]), r[i])
    v_out[6 * i + 4] = wp.transform_vector(wp.transform_compose(a.p, a.q, s[i]), r[i])
    v_out[6 * i + 5] = wp.transform_get_translation(a) + wp.vec3d(wp.transform_get_rotation(a)[3])
    m_out[2 * i + 0] = wp.transform_to_matrix(a)
    m_out[2 * i + 1] = wp.transform_compose(a.p, a.q, s[i])


def test_transform_builtins_match_numpy():
    n = 5
    T = np.array([random_transform() for _ in range(n)])
    U = np.array([random_transform() for _ in range(n)])
    X, R, S = rng.normal(size=(n, 6)), rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=(n, 3))
    t_out = wp.zeros(4 * n, dtype=wp.transformd)
    x_out = wp.zeros(2 * n, dtype=wp.spatial_vectord)
    v_out = wp.zeros(6 * n, dtype=wp.vec3d)
    m_out = wp.zeros(2 * n, dtype=wp.mat44d)
    wp.launch(transform_ops, dim=n, inputs=[wp.array(T, dtype=wp.transformd), wp.array(U, dtype=wp.transformd),
                                            wp.array(X, dtype=wp.spatial_vectord), wp.array(R, dtype=wp.vec3d),
                                            wp.array(S, dtype=wp.vec3d)],
              outputs=[t_out, x_out, v_out, m_out])
    to, xo, vo, mo = t_out.numpy(), x_out.numpy(), v_out.numpy(), m_out.numpy()
    for i in range(n):
        p, q, rot = T[i, :3], T[i, 3:], rotation(T[i, 3:])
        composed = np.concatenate([rot @ U[i, :3] + p, hamilton(q, U[i, 3:])])
        np.testing.assert_allclose(to[4 * i], composed, atol=1e-12)
        np.testing.assert_allclose(to[4 * i + 3], composed, atol=1e-12)
        q_inv = q * [-1, -1, -1, 1]
        np.testing.assert_allclose(to[4 * i + 1], np.concatenate([-rot.T @ p, q_inv]), atol=1e-12)
        np.testing.assert_allclose(to[4 * i + 2][:3], p, atol=1e-12)
        assert same_rotation(to[4 * i + 2][3:], q, 1e-9)
        w, v = X[i, :3], X[i, 3:]
        np.testing.assert_allclose(xo[2 * i], np.concatenate([rot @ w, rot @ v + np.cross(p, rot @ w)]),
                                   atol=1e-12)
        np.testing.assert_allclose(xo[2 * i + 1], np.concatenate([rot @ w + np.cross(p, rot @ v), rot @ v]),
                                   atol=1e-12)
        np.testing.assert_allclose(vo[6 * i], np.cross(w, R[i]) + v, atol=1e-12)
        np.testing.assert_allclose(vo[6 * i + 1], rot @ R[i] + p, atol=1e-12)
        np.testing.assert_allclose(vo[6 * i + 2], rot @ R[i], atol=1e-12)
        scaled = rot * S[i]  # R diag(s)
        np.testing.assert_allclose(vo[6 * i + 3], scaled @ R[i] + p, atol=1e-12)
        np.testing.assert_allclose(vo[6 * i + 4], scaled @ R[i], atol=1e-12)
        np.testing.assert_allclose(vo[6 * i + 5], p + q[3], atol=1e-15)
        matrix = np.eye(4)
        matrix[:3, :3], matrix[:3, 3] = rot, p
        np.testing.assert_allclose(mo[2 * i], matrix, atol=1e-12)
        matrix[:3, :3] = scaled
        np.testing.assert_allclose(mo[2 * i + 1], matrix, atol=1e-12)


@wp.kernel
def parts(a: wp.array(dtype=wp.transform), out: wp.array(dtype=wp.transform), v: wp.array(dtype=wp.vec3),
          q_out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    t = a[i]
    v[3 * i] = t.p
    q_out[i] = t.q
    t.p = wp.vec3(5.0, 6.0, 7.0)
    t.q.w = t.q.w * 2.0
    out[2 * i] = t
    out[2 * i + 1] = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    v[3 * i + 1] = wp.vec3(t[0], t[6], wp.transform_identity()[6])
    v[3 * i + 2] = wp.transform().p + wp.vec3(wp.transform().q.w)
    a[i].q = wp.quat_identity()
    a[i].p.y = 9.0


def test_parts_read_and_written_as_in_warp():
    t0 = np.array([[1.0, 2.0, 3.0, 0.0, 0.0, np.sin(0.25), np.cos(0.25)]], np.float32)
    a = wp.array(t0, dtype=wp.transform)
    out, v, q = wp.zeros(2, dtype=wp.transform), wp.zeros(3, dtype=wp.vec3), wp.zeros(1, dtype=wp.quat)
    wp.launch(parts, dim=1, inputs=[a], outputs=[out, v, q])
    np.testing.assert_array_equal(v.numpy()[0], t0[0, :3])
    np.testing.assert_array_equal(q.numpy()[0], t0[0, 3:])
    expected = np.concatenate([[5, 6, 7], t0[0, 3:6], [2 * t0[0, 6]]]).astype(np.float32)
    np.testing.assert_array_equal(out.numpy()[0], expected)
    np.testing.assert_array_equal(out.numpy()[1], [1, 2, 3, 0, 0, 0, 1])
    np.testing.assert_array_equal(v.numpy()[1], [5, expected[6], 1])
    np.testing.assert_array_equal(v.numpy()[2], [0, 0, 0])  # transform() in kernels is zeros, as in Warp
    np.testing.assert_array_equal(a.numpy()[0], [1, 9, 3, 0, 0, 0, 1])


def test_host_transform_values():
    t = wp.transform()
    np.testing.assert_array_equal(t, [0, 0, 0, 0, 0, 0, 1])
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.0, 1.0))
    np.testing.assert_array_equal(t.p, [1, 2, 3])
    np.testing.assert_array_equal(t.q, [0, 0, 0, 1])
    assert wp.transformd(1, 2, 3, 0, 0, 0, 1).dtype == np.float64
    a = wp.array([t, wp.transform()], dtype=wp.transform)
    assert a.shape == (2,) and a.numpy().shape == (2, 7)
    with pytest.raises(TypeError, match="7 components"):
        wp.transform(1.0, 2.0)


GLOBAL_OFFSET = wp.transform(wp.vec3(0.5, 0.0, 0.0), wp.quat(0.0, 0.0, 0.0, 1.0))


@wp.kernel
def offset_by_global(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.transform_point(GLOBAL_OFFSET, x[i])


def test_a_global_transform_is_a_transform_constant():
    x = wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3)
    y = wp.zeros(2, dtype=wp.vec3)
    wp.launch(offset_by_global, dim=2, inputs=[x], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), [[1.5, 1, 1], [1.5, 1, 1]])


@wp.kernel
def bad_mul(t: wp.array(dtype=wp.transform), q: wp.array(dtype=wp.quat), y: wp.array(dtype=wp.transform)):
    i = wp.tid()
    y[i] = t[i] * q[i]


@wp.kernel
def bad_point(t: wp.array(dtype=wp.transform), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.transform_point(t[i], wp.vec2(1.0, 2.0))


@wp.kernel
def bad_part(t: wp.array(dtype=wp.transform), y: wp.array(dtype=wp.transform)):
    i = wp.tid()
    s = t[i]
    s.p = wp.quat_identity()
    y[i] = s


@pytest.mark.parametrize("kernel, message", [
    (bad_mul, "a transform multiplies a transform"),
    (bad_point, r"transform_point\(\) takes a transform or a 4x4 matrix"),
    (bad_part, "quat"),
])
def test_type_errors_name_the_kernel_line(kernel, message):
    with pytest.raises(wp.KernelTypeError if kernel is not bad_point else wp.KernelError, match=message) as e:
        wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=wp.transform),
                                         *([wp.zeros(1, dtype=wp.quat)] if kernel is bad_mul else [])],
                  outputs=[wp.zeros(1, dtype=wp.transform if kernel is not bad_point else wp.vec3)])
    assert "test_transforms.py" in str(e.value)


# --- gradients -------------------------------------------------------------------------------

@wp.kernel
def transform_chain(t: wp.array(dtype=wp.transformd), u: wp.array(dtype=wp.transformd),
                    x: wp.array(dtype=wp.spatial_vectord), r: wp.array(dtype=wp.vec3d),
                    s: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.float64)):
    # every differentiable transform builtin on a path to y
    i = wp.tid()
    a = t[i]
    b = a * wp.transform_inverse(u[i])
    c = wp.transform_multiply(b, wp.transform_from_matrix(wp.transform_to_matrix(u[i])))
    tw = wp.transform_twist(c, x[i])
    wr = wp.transform_wrench(a, tw)
    v = wp.velocity_at_point(wr, r[i]) + wp.transform_point(c, r[i]) + wp.transform_vector(b, r[i])
    m = wp.transform_compose(a.p, a.q, s[i])
    v = v + wp.transform_point(m, r[i]) + wp.transform_vector(m, v)
    y[i] = wp.dot(v, v) + wp.spatial_dot(tw, wr) + wp.transform_get_translation(c)[1] \
        + wp.transform_get_rotation(c)[2]


def test_gradients_of_the_transform_builtins_match_finite_differences():
    n = 3
    T = np.array([random_transform() for _ in range(n)])
    U = np.array([random_transform() for _ in range(n)])
    U[:, 6] = np.abs(U[:, 6]) + 0.5  # keep quat_from_matrix on its w branch, away from the switch
    U[:, 3:] /= np.linalg.norm(U[:, 3:], axis=1, keepdims=True)
    ins = [wp.array(T, dtype=wp.transformd, requires_grad=True), wp.array(U, dtype=wp.transformd, requires_grad=True),
           wp.array(rng.normal(size=(n, 6)), dtype=wp.spatial_vectord, requires_grad=True),
           wp.array(rng.normal(size=(n, 3)), dtype=wp.vec3d, requires_grad=True),
           wp.array(rng.uniform(0.5, 2.0, size=(n, 3)), dtype=wp.vec3d, requires_grad=True)]
    check_gradients(transform_chain, n, ins, [wp.zeros(n, dtype=wp.float64, requires_grad=True)])


@wp.kernel
def part_writes(t: wp.array(dtype=wp.transformd), v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.transformd)):
    i = wp.tid()
    a = t[i]
    a.p = wp.cw_mul(a.p, v[i])
    a.q = wp.normalize(a.q + wp.quatd(v[i], wp.float64(0.5)))
    y[i] = a * a


def test_gradients_flow_through_part_writes():
    n = 2
    T = np.array([random_transform() for _ in range(n)])
    check_gradients(part_writes, n, [wp.array(T, dtype=wp.transformd, requires_grad=True),
                                     wp.array(rng.normal(size=(n, 3)), dtype=wp.vec3d, requires_grad=True)],
                    [wp.zeros(n, dtype=wp.transformd, requires_grad=True)])


# --- in-place setters and several-result builtins ---------------------------------------------

@wp.kernel
def setters_and_decompositions(t: wp.array(dtype=wp.transformd), q: wp.array(dtype=wp.quatd),
                               m: wp.array(dtype=wp.mat44d), ot: wp.array(dtype=wp.transformd),
                               ov: wp.array(dtype=wp.vec3d), of: wp.array(dtype=wp.float64),
                               oq: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    x = t[i]
    wp.transform_set_translation(x, ov[4 * i + 3] * wp.float64(2.0))   # writes x, as Warp
    ot[2 * i] = x
    wp.transform_set_rotation(x, q[i])
    ot[2 * i + 1] = x
    axis, angle = wp.quat_to_axis_angle(q[i])
    ov[4 * i] = axis
    of[2 * i] = angle
    a2 = wp.vec3d()
    angle2 = wp.float64(0.0)
    wp.quat_to_axis_angle(q[i] * wp.float64(-1.0), a2, angle2)        # writes a2 and angle2
    of[2 * i + 1] = angle2 - angle + wp.dot(a2 - axis, a2 - axis)     # -q is the same rotation
    p, r, s = wp.transform_decompose(m[i])
    ov[4 * i + 1] = p
    ov[4 * i + 2] = s
    oq[i] = r


def test_setters_axis_angle_and_decompose():
    n = 3
    T = np.array([random_transform() for _ in range(n)])
    q = np.array([unit_quat() for _ in range(n)])
    q[0] = [0.0, 0.0, 0.0, 1.0]  # no rotation: angle 0, axis (0, 0, 0) as in Warp
    scale = rng.uniform(0.5, 3.0, size=(n, 3))
    m = np.tile(np.eye(4), (n, 1, 1))
    for i in range(n):
        m[i, :3, :3] = rotation(q[i]) * scale[i]
        m[i, :3, 3] = T[i, :3]
    ov0 = np.zeros((4 * n, 3))
    ov0[3::4] = rng.normal(size=(n, 3))
    ot, ov = wp.zeros(2 * n, dtype=wp.transformd), wp.array(ov0, dtype=wp.vec3d)
    of, oq = wp.zeros(2 * n, dtype=wp.float64), wp.zeros(n, dtype=wp.quatd)
    wp.launch(setters_and_decompositions, dim=n, inputs=[wp.array(T, dtype=wp.transformd), wp.array(q, dtype=wp.quatd),
                                                         wp.array(m, dtype=wp.mat44d)], outputs=[ot, ov, of, oq])
    ot, ov, of, oq = ot.numpy(), ov.numpy(), of.numpy(), oq.numpy()
    for i in range(n):
        np.testing.assert_array_equal(ot[2 * i], np.concatenate([2 * ov0[4 * i + 3], T[i, 3:]]))
        np.testing.assert_array_equal(ot[2 * i + 1], np.concatenate([2 * ov0[4 * i + 3], q[i]]))
        angle, axis = of[2 * i], ov[4 * i]
        assert 0 <= angle <= np.pi
        if i == 0:
            assert angle == 0 and list(axis) == [0, 0, 0]
        else:
            qq = q[i] if q[i, 3] >= 0 else -q[i]
            np.testing.assert_allclose(np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]]), qq,
                                       atol=1e-12)
        assert abs(of[2 * i + 1]) < 1e-12
        np.testing.assert_allclose(ov[4 * i + 1], T[i, :3], atol=1e-12)
        np.testing.assert_allclose(ov[4 * i + 2], scale[i], atol=1e-12)
        assert same_rotation(oq[i], q[i], 1e-9)


@wp.kernel
def setter_loss(t: wp.array(dtype=wp.transformd), q: wp.array(dtype=wp.quatd), m: wp.array(dtype=wp.mat44d),
                y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x = t[i]
    wp.transform_set_rotation(x, wp.normalize(q[i]))
    axis, angle = wp.quat_to_axis_angle(q[i])
    p, r, s = wp.transform_decompose(m[i])
    wp.transform_set_translation(x, p + axis * angle)
    y[i] = wp.dot(wp.transform_point(x, s), wp.vec3d(wp.float64(1.0), wp.float64(-2.0), wp.float64(0.5))) \
        + wp.dot(r, q[i])


def test_setter_and_decomposition_gradients_match_finite_differences():
    n = 2
    T = np.array([random_transform() for _ in range(n)])
    q = np.array([unit_quat() * 1.3 for _ in range(n)])
    q[:, 3] = np.abs(q[:, 3]) + 0.2  # away from angle pi, where the axis flips
    m = np.tile(np.eye(4), (n, 1, 1))
    for i in range(n):
        m[i, :3, :3] = rotation(q[i] / np.linalg.norm(q[i])) * rng.uniform(0.5, 2.0, 3) + 0.05 * rng.normal(size=(3, 3))
        m[i, :3, 3] = rng.normal(size=3)
        m[i, 3, :3] = rng.normal(size=3) * 0.1
    check_gradients(setter_loss, n, [wp.array(T, dtype=wp.transformd, requires_grad=True),
                                     wp.array(q, dtype=wp.quatd, requires_grad=True),
                                     wp.array(m, dtype=wp.mat44d, requires_grad=True)],
                    [wp.zeros(n, dtype=wp.float64, requires_grad=True)])


@wp.kernel
def set_on_an_element(t: wp.array(dtype=wp.transform)):
    wp.transform_set_translation(t[0], wp.vec3(1.0, 2.0, 3.0))


def test_a_written_argument_must_be_a_local():
    with pytest.raises(wp.KernelError, match="pass a local variable"):
        wp.launch(set_on_an_element, dim=1, inputs=[wp.zeros(1, dtype=wp.transform)])
