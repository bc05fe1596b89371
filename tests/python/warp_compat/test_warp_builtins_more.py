"""Warp builtins real code calls (issue 26, item 4): div_approx,
inverse_approx, transformation, quaternion, spatial_adjoint,
quat_between_vectors, cast. Values against numpy, gradients against float64
central differences (adjit.testing.check_gradients) or hand-derived values.
"""
import numpy as np
import pytest

import adjit as wp
from adjit.testing import check_gradients

f64 = wp.float64
RNG = np.random.default_rng(26)


def _run(kernel, inputs, outputs):
    wp.launch(kernel, dim=1, inputs=inputs, outputs=outputs)
    return [o.numpy() for o in outputs]


# --- div_approx -------------------------------------------------------------------------------


@wp.kernel
def _div_approx_all(s: wp.array(dtype=f64), v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d),
                    q: wp.array(dtype=wp.quatd), out_s: wp.array(dtype=f64), out_v: wp.array(dtype=wp.vec3d),
                    out_m: wp.array(dtype=wp.mat33d), out_q: wp.array(dtype=wp.quatd)):
    out_s[0] = wp.div_approx(s[0], s[1])
    out_s[1] = wp.div_approx(s[0], 4.0)  # a literal takes the other argument's type
    out_v[0] = wp.div_approx(v[0], s[1])
    out_v[1] = wp.div_approx(s[0], v[0])
    out_m[0] = wp.div_approx(m[0], s[1])
    out_m[1] = wp.div_approx(s[0], m[0])
    out_q[0] = wp.div_approx(q[0], s[1])
    out_q[1] = wp.div_approx(s[0], q[0])


def _div_inputs():
    s = wp.array(np.array([1.7, -0.8]), dtype=f64)
    v = wp.array(np.array([[0.6, -1.2, 1.9]]), dtype=wp.vec3d)
    m = wp.array(np.array([[[0.9, 1.3, -0.7], [1.1, -1.6, 0.8], [2.1, 0.6, 1.4]]]), dtype=wp.mat33d)
    q = wp.array(np.array([[0.7, -1.1, 0.9, 1.5]]), dtype=wp.quatd)
    outs = [wp.zeros(2, dtype=t) for t in (f64, wp.vec3d, wp.mat33d, wp.quatd)]
    return [s, v, m, q], outs


def test_div_approx_values_are_the_exact_quotients():
    inputs, outputs = _div_inputs()
    s, v, m, q = (a.numpy() for a in inputs)
    got = _run(_div_approx_all, inputs, outputs)
    np.testing.assert_array_equal(got[0], [s[0] / s[1], s[0] / 4.0])
    np.testing.assert_array_equal(got[1], [v[0] / s[1], s[0] / v[0]])
    np.testing.assert_array_equal(got[2], [m[0] / s[1], s[0] / m[0]])
    np.testing.assert_array_equal(got[3], [q[0] / s[1], s[0] / q[0]])


def test_div_approx_gradients_match_central_differences():
    inputs, outputs = _div_inputs()
    check_gradients(_div_approx_all, 1, inputs, outputs)


@wp.kernel
def _div_approx_f32(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    out[0] = wp.div_approx(v[0], a[0])
    out[1] = wp.vec3(wp.div_approx(a[0], 3.0), wp.div_approx(1.0, a[0]), 0.0)


def test_div_approx_in_float32_divides_exactly():
    a = wp.array(np.array([0.3], np.float32), dtype=float)
    v = wp.array(np.array([[1.0, 2.0, 7.0]], np.float32), dtype=wp.vec3)
    out = wp.zeros(2, dtype=wp.vec3)
    wp.launch(_div_approx_f32, dim=1, inputs=[a, v, out])
    x = np.float32(0.3)
    np.testing.assert_array_equal(out.numpy(), [v.numpy()[0] / x, [x / np.float32(3), np.float32(1) / x, 0]])


# --- inverse_approx -----------------------------------------------------------------------------


@wp.kernel
def _inverse_approx(m2: wp.array(dtype=wp.mat22d), m3: wp.array(dtype=wp.mat33d), m4: wp.array(dtype=wp.mat44d),
                    o2: wp.array(dtype=wp.mat22d), o3: wp.array(dtype=wp.mat33d), o4: wp.array(dtype=wp.mat44d)):
    o2[0] = wp.inverse_approx(m2[0])
    o3[0] = wp.inverse_approx(m3[0])
    o4[0] = wp.inverse_approx(m4[0])


def test_inverse_approx_is_the_inverse_with_its_gradient():
    mats = [np.eye(n) * 2.5 + RNG.uniform(-0.6, 0.6, (n, n)) for n in (2, 3, 4)]
    types = (wp.mat22d, wp.mat33d, wp.mat44d)
    inputs = [wp.array(m[None], dtype=t) for m, t in zip(mats, types)]
    outputs = [wp.zeros(1, dtype=t) for t in types]
    got = _run(_inverse_approx, inputs, outputs)
    for g, m in zip(got, mats):
        np.testing.assert_allclose(g[0], np.linalg.inv(m), rtol=1e-13, atol=1e-14)
    check_gradients(_inverse_approx, 1, inputs, outputs)


# --- transformation and quaternion -----------------------------------------------------------------


@wp.kernel
def _constructors(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), s: wp.array(dtype=f64),
                  t: wp.array(dtype=wp.transformd), r: wp.array(dtype=wp.quatd)):
    t[0] = wp.transformation(p[0], q[0])
    t[1] = wp.transformation(p[0], q[0], dtype=f64)
    t[2] = wp.transformation(p[0])
    t[3] = wp.transformation(s[0], s[1], s[2], s[3], s[4], s[5], 1.0)
    t[4] = wp.transformation(dtype=f64)
    r[0] = wp.quaternion(s[0], s[1], s[2], 2.0)
    r[1] = wp.quaternion(p[0], s[3])
    r[2] = wp.quaternion(q[0])
    r[3] = wp.quaternion(dtype=f64)


def test_transformation_and_quaternion_build_warps_values():
    pv, qv, sv = np.array([0.5, -1.5, 2.0]), np.array([0.1, 0.2, -0.3, 0.9]), np.linspace(-1.0, 1.5, 6)
    inputs = [wp.array(pv[None], dtype=wp.vec3d), wp.array(qv[None], dtype=wp.quatd), wp.array(sv, dtype=f64)]
    outputs = [wp.zeros(5, dtype=wp.transformd), wp.zeros(4, dtype=wp.quatd)]
    t, r = _run(_constructors, inputs, outputs)
    np.testing.assert_array_equal(t[0], np.concatenate([pv, qv]))
    np.testing.assert_array_equal(t[1], np.concatenate([pv, qv]))
    np.testing.assert_array_equal(t[2], np.concatenate([pv, [0, 0, 0, 1]]))
    np.testing.assert_array_equal(t[3], np.concatenate([sv, [1.0]]))
    np.testing.assert_array_equal(t[4], np.zeros(7))
    np.testing.assert_array_equal(r, [np.concatenate([sv[:3], [2.0]]), np.concatenate([pv, [sv[3]]]), qv,
                                      np.zeros(4)])
    check_gradients(_constructors, 1, inputs, outputs)


@wp.kernel
def _quaternion_convert(q: wp.array(dtype=wp.quatd), out: wp.array(dtype=wp.quat)):
    out[0] = wp.quaternion(q[0], dtype=wp.float32)


def test_quaternion_with_a_dtype_converts_a_quaternion():
    qv = np.array([0.1, 1.0 / 3.0, -0.3, 0.9])
    out = wp.zeros(1, dtype=wp.quat)
    wp.launch(_quaternion_convert, dim=1, inputs=[wp.array(qv[None], dtype=wp.quatd), out])
    np.testing.assert_array_equal(out.numpy()[0], qv.astype(np.float32))


def test_transformation_and_quaternion_on_the_host():
    q = wp.quaternion(1.0, 2.0, 3.0, 4.0)
    np.testing.assert_array_equal(q, [1, 2, 3, 4])
    assert wp.types.type_is_quaternion(wp.types.constant_type_of(q))
    t = wp.transformation(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    np.testing.assert_array_equal(t, [1, 2, 3, 0, 0, 0, 1])


# --- spatial_adjoint ------------------------------------------------------------------------------


@wp.kernel
def _spatial_adjoint(r: wp.array(dtype=wp.mat33d), s: wp.array(dtype=wp.mat33d),
                     out: wp.array(dtype=wp.spatial_matrixd)):
    out[0] = wp.spatial_adjoint(r[0], s[0])


def test_spatial_adjoint_has_warps_block_layout_and_gradient():
    rv, sv = RNG.uniform(-1, 1, (3, 3)), RNG.uniform(-1, 1, (3, 3))
    inputs = [wp.array(rv[None], dtype=wp.mat33d), wp.array(sv[None], dtype=wp.mat33d)]
    out = wp.zeros(1, dtype=wp.spatial_matrixd)
    (got,) = _run(_spatial_adjoint, inputs, [out])
    np.testing.assert_array_equal(got[0], np.block([[rv, np.zeros((3, 3))], [sv, rv]]))
    # d out / d R: R sits in both diagonal blocks, so each entry's adjoint is the sum of two
    tape = wp.Tape()
    inputs = [wp.array(rv[None], dtype=wp.mat33d, requires_grad=True),
              wp.array(sv[None], dtype=wp.mat33d, requires_grad=True)]
    out = wp.zeros(1, dtype=wp.spatial_matrixd, requires_grad=True)
    with tape:
        wp.launch(_spatial_adjoint, dim=1, inputs=inputs, outputs=[out])
    seed = RNG.uniform(-1, 1, (6, 6))
    tape.backward(grads={out: wp.array(seed[None], dtype=wp.spatial_matrixd)})
    np.testing.assert_array_equal(inputs[0].grad.numpy()[0], seed[:3, :3] + seed[3:, 3:])
    np.testing.assert_array_equal(inputs[1].grad.numpy()[0], seed[3:, :3])


# --- quat_between_vectors ---------------------------------------------------------------------------


def _between(a, b):
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    q = np.concatenate([np.cross(a, b), [1 + a @ b]])
    return q / np.linalg.norm(q)


def _rotate(q, v):
    u, w = q[:3], q[3]
    return (2 * w * w - 1) * v + 2 * (u @ v) * u + 2 * w * np.cross(u, v)


@wp.kernel
def _quat_between(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    out[i] = wp.quat_between_vectors(a[i], b[i])


def test_quat_between_vectors_rotates_a_onto_b():
    a, b = RNG.uniform(-1.5, 1.5, (4, 3)), RNG.uniform(-1.5, 1.5, (4, 3))
    inputs = [wp.array(a, dtype=wp.vec3d), wp.array(b, dtype=wp.vec3d)]
    out = wp.zeros(4, dtype=wp.quatd)
    wp.launch(_quat_between, dim=4, inputs=inputs, outputs=[out])
    for k in range(4):
        np.testing.assert_allclose(out.numpy()[k], _between(a[k], b[k]), rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(_rotate(out.numpy()[k], a[k] / np.linalg.norm(a[k])),
                                   b[k] / np.linalg.norm(b[k]), atol=1e-14)
    check_gradients(_quat_between, 4, inputs, [out])


def test_quat_between_opposite_or_zero_vectors_is_the_zero_quaternion_as_in_warp():
    # Warp's normalize((a x b, 1 + a.b)): (0, 0, 0, 0) normalized is zero
    a = np.array([[1.0, 2.0, -0.5], [0.0, 0.0, 0.0]])
    inputs = [wp.array(a, dtype=wp.vec3d), wp.array(np.array([[-2.0, -4.0, 1.0], [1.0, 0.0, 0.0]]), dtype=wp.vec3d)]
    out = wp.zeros(2, dtype=wp.quatd)
    wp.launch(_quat_between, dim=2, inputs=inputs, outputs=[out])
    np.testing.assert_array_equal(out.numpy()[0], np.zeros(4))
    np.testing.assert_array_equal(out.numpy()[1], [0, 0, 0, 1])  # zero a: normalize(0) = 0, q = (0, 1)


# --- cast ------------------------------------------------------------------------------------------


@wp.kernel
def _casts(f: wp.array(dtype=float), i: wp.array(dtype=wp.int32), d: wp.array(dtype=f64),
           out_f: wp.array(dtype=float), out_i: wp.array(dtype=wp.int32), out_u: wp.array(dtype=wp.uint64),
           out_d: wp.array(dtype=f64)):
    out_f[0] = wp.cast(i[0], dtype=wp.float32)
    out_i[0] = wp.cast(f[0], dtype=wp.int32)
    u = wp.cast(d[0], dtype=wp.uint64)
    out_u[0] = u
    out_d[0] = wp.cast(u, dtype=f64)
    out_i[1] = wp.cast(wp.vec2h(wp.float16(2.0), wp.float16(1.0)), dtype=wp.int32)
    out_f[1] = wp.cast(wp.vec2h(wp.float16(2.0), wp.float16(1.0)), dtype=wp.float32) * f[0]


def test_cast_reinterprets_the_bits_as_warps():
    fv, iv, dv = np.float32(-1.25), np.int32(0x40000000), -3.0e-200
    inputs = [wp.array(np.array([fv, 0.5], np.float32), dtype=float), wp.array(np.array([iv]), dtype=wp.int32),
              wp.array(np.array([dv]), dtype=f64)]
    outputs = [wp.zeros(2, dtype=float), wp.zeros(2, dtype=wp.int32), wp.zeros(1, dtype=wp.uint64),
               wp.zeros(1, dtype=f64)]
    f, i, u, d = _run(_casts, inputs, outputs)
    assert f[0] == 2.0  # 0x40000000
    assert i[0] == np.array([fv]).view(np.int32)[0]
    assert u[0] == np.array([dv]).view(np.uint64)[0]
    assert d[0] == dv
    halves = np.array([2.0, 1.0], np.float16)
    assert i[1] == halves.view(np.int32)[0] == 0x3C004000
    assert f[1] == halves.view(np.float32)[0] * fv


def test_cast_passes_no_gradient():
    inputs = [wp.array(np.array([-1.25, 0.5], np.float32), dtype=float, requires_grad=True),
              wp.array(np.array([7], np.int32), dtype=wp.int32), wp.array(np.array([1.0]), dtype=f64)]
    outputs = [wp.zeros(2, dtype=float, requires_grad=True), wp.zeros(2, dtype=wp.int32),
               wp.zeros(1, dtype=wp.uint64), wp.zeros(1, dtype=f64)]
    tape = wp.Tape()
    with tape:
        wp.launch(_casts, dim=1, inputs=inputs, outputs=outputs)
    tape.backward(grads={outputs[0]: wp.array(np.array([1.0, 1.0], np.float32), dtype=float)})
    # out_f[1] = c * f[0]: c is a constant, so d/df[0] = c; out_f[0] has no input
    c = np.array([2.0, 1.0], np.float16).view(np.float32)[0]
    np.testing.assert_array_equal(inputs[0].grad.numpy(), [c, 0.0])


# --- bad calls -------------------------------------------------------------------------------------

BAD_CALLS = [
    ("wp.div_approx(1, 2)", "div_approx() takes two float scalars"),
    ("wp.div_approx(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0))", "div_approx() takes"),
    ("wp.inverse_approx(wp.vec3(1.0, 2.0, 3.0))", "inverse_approx() needs one matrix"),
    ("wp.transformation(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0))", "transformation() takes a position"),
    ("wp.transformation()", "needs dtype="),
    ("wp.quaternion(1.0, 2.0, 3.0)", "quaternion() takes the float components"),
    ("wp.quaternion(wp.float64(1.0), 2.0, 3.0, 4.0, dtype=wp.float32)", "one float type"),
    ("wp.spatial_adjoint(wp.mat22(), wp.mat22())", "spatial_adjoint() takes two float 3x3"),
    ("wp.quat_between_vectors(wp.vec3(), wp.vec2())", "quat_between_vectors() takes two float 3-vectors"),
    ("wp.cast(1.0, dtype=wp.float64)", "sizes must match"),
    ("wp.cast(wp.int32(1))", "needs the argument 'dtype'"),
]


@pytest.mark.parametrize("call,message", BAD_CALLS)
def test_bad_calls_name_the_kernels_line(tmp_path, call, message):
    src = tmp_path / "bad_kernel.py"
    src.write_text(f"import adjit as wp\n\n\n@wp.kernel\ndef bad(out: wp.array(dtype=float)):\n    x = {call}\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("bad_kernel", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.KernelError) as info:
        wp.launch(module.bad, dim=1, inputs=[wp.zeros(1, dtype=float)])
    assert "bad_kernel.py:6" in str(info.value) and message in str(info.value)
