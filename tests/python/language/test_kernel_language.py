"""Warp's kernel language as ``import adjit as wp`` sees it: array1d-4d
annotations, wp.constant globals, scalar types as casts, keyword arguments
of builtins, and the quaternion type (float64 numpy references)."""
import importlib.util
import math
import textwrap

import numpy as np
import pytest

import adjit
import adjit as wp

F32 = dict(rtol=1e-5, atol=1e-6)
F64 = dict(rtol=1e-13, atol=1e-14)


# --- array1d .. array4d ------------------------------------------------------------------------

def test_array_nd_annotations_are_arrays_of_that_ndim():
    assert wp.array1d(dtype=float) == wp.array(dtype=float, ndim=1) == wp.array1d()
    assert wp.array2d(dtype=wp.vec3) == wp.array(dtype=wp.vec3, ndim=2)
    assert wp.array3d(dtype=wp.float64) == wp.array(dtype=wp.float64, ndim=3)
    assert wp.array4d(dtype=wp.quat) == wp.array(dtype=wp.quat, ndim=4)
    assert wp.array2d(dtype=float) != wp.array3d(dtype=float)


def test_array_nd_constructors_check_the_ndim():
    a = wp.array2d(np.ones((2, 3), np.float32))
    assert a.shape == (2, 3) and a.dtype == wp.float32
    b = wp.array3d(shape=(2, 3, 4), dtype=wp.vec3)
    assert b.shape == (2, 3, 4) and b.numpy().shape == (2, 3, 4, 3)
    c = wp.array1d(np.zeros((5, 3)), dtype=wp.vec3)
    assert c.shape == (5,)
    with pytest.raises(ValueError, match="array2d"):
        wp.array2d(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="array4d"):
        wp.array4d(shape=(2, 2))


@wp.kernel
def nd_sums(a: wp.array2d(dtype=float), b: wp.array3d(dtype=wp.float64), c: wp.array4d(dtype=wp.vec2),
            v: wp.array1d(dtype=wp.vec3), out: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    s = wp.float64(0.0)
    for k in range(b.shape[2]):
        s += b[i, j, k]
    t = float(0.0)
    for k in range(c.shape[2]):
        for m in range(c.shape[3]):
            t += c[i, j, k, m].x - c[i, j, k, m].y
    out[i, j] = wp.float64(a[i, j]) + s + wp.float64(t) + wp.float64(v[j].z)


def test_kernels_take_array_nd_parameters():
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, (3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (3, 4, 5))
    c = rng.integers(-8, 8, (3, 4, 2, 3, 2)).astype(np.float32)
    v = rng.integers(-8, 8, (4, 3)).astype(np.float32)
    out = wp.zeros((3, 4), dtype=wp.float64)
    wp.launch(nd_sums, dim=(3, 4), inputs=[wp.array2d(a), wp.array3d(b), wp.array4d(c, dtype=wp.vec2),
                                           wp.array1d(v, dtype=wp.vec3), out])
    ref = a + b.sum(2) + (c[..., 0] - c[..., 1]).sum((2, 3)) + v[None, :, 2]
    np.testing.assert_allclose(out.numpy(), ref, **F64)


# --- wp.constant and module-level values ----------------------------------------------------------

C_INT = wp.constant(3)
C_FLOAT = wp.constant(1.5)
C_F32 = wp.constant(wp.float32(0.1))
C_F64 = wp.constant(wp.float64(0.1))
C_I64 = wp.constant(wp.int64(1 << 40))
C_VEC = wp.constant(wp.vec3(1.0, 2.0, 3.0))
C_VECD = wp.constant(wp.vec3d(0.1, 0.2, 0.3))
C_MAT = wp.constant(wp.mat22(1.0, 2.0, 3.0, 4.0))
C_QUAT = wp.constant(wp.quat(0.0, 0.0, math.sin(0.25), math.cos(0.25)))


def test_constant_returns_its_argument():
    x = object()
    assert wp.constant(x) is x
    assert wp.constant(2.5) == 2.5


@wp.kernel
def use_constants(x: wp.array(dtype=float), xd: wp.array(dtype=wp.float64), big: wp.array(dtype=wp.int64),
                     v: wp.array(dtype=wp.vec3), vd: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22),
                     q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    x[i] = float(i * C_INT) * C_FLOAT + C_F32
    xd[i] = wp.float64(i) + C_F64  # np.float64 is a Python float: a literal, here of float64
    big[i] = C_I64 + wp.int64(i)
    v[i] = C_VEC * float(i)
    vd[i] = C_VECD
    m[i] = C_MAT * float(i)
    q[i] = C_QUAT * C_QUAT  # a quat constant multiplies as a quaternion


def test_kernels_read_constants():
    n = 4
    x, xd, big = wp.zeros(n), wp.zeros(n, dtype=wp.float64), wp.zeros(n, dtype=wp.int64)
    v, vd, m, q = (wp.zeros(n, dtype=t) for t in (wp.vec3, wp.vec3d, wp.mat22, wp.quat))
    wp.launch(use_constants, dim=n, inputs=[x, xd, big, v, vd, m, q])
    i = np.arange(n)
    np.testing.assert_allclose(x.numpy(), i * 3 * 1.5 + 0.1, **F32)
    np.testing.assert_array_equal(xd.numpy(), i + 0.1)  # float64 0.1, not float32 0.1
    np.testing.assert_array_equal(big.numpy(), (1 << 40) + i)
    np.testing.assert_array_equal(v.numpy(), i[:, None] * [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(vd.numpy(), np.broadcast_to([0.1, 0.2, 0.3], (n, 3)))
    np.testing.assert_array_equal(m.numpy(), i[:, None, None] * np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(q.numpy(), np.broadcast_to([0, 0, math.sin(0.5), math.cos(0.5)], (n, 4)), **F32)


@wp.kernel
def mixed_constants(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * C_F64 + wp.float32(1.0)  # the float64 literal adopts float32


@wp.kernel
def typed_constant_mismatch(xd: wp.array(dtype=wp.float64)):
    i = wp.tid()
    xd[i] = xd[i] + C_F32  # a float32 constant is typed: no silent widening


def test_numpy_scalar_constants_are_typed_except_float64():
    x = wp.full(2, 10.0)
    wp.launch(mixed_constants, dim=2, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), np.float32(10.0) * np.float32(0.1) + np.float32(1.0))
    with pytest.raises(adjit.KernelTypeError, match="float64 and float32"):
        adjit.compile(typed_constant_mismatch)


def _load_module(path, name, text):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_compile_cache_sees_constant_values(tmp_path):
    # Same kernel source, different vector constants: two different programs.
    kernel = textwrap.dedent("""\
        import adjit as wp

        OFFSET = wp.constant(wp.vec3({}))

        @wp.kernel
        def shift(v: wp.array(dtype=wp.vec3)):
            i = wp.tid()
            v[i] = v[i] + OFFSET
        """)
    results = []
    for k, offset in enumerate(["1.0, 2.0, 3.0", "-1.0, 0.5, 0.0"]):
        module = _load_module(tmp_path / f"const_kernel_{k}.py", f"const_kernel_{k}", kernel.format(offset))
        v = wp.zeros(2, dtype=wp.vec3)
        wp.launch(module.shift, dim=2, inputs=[v])
        results.append(v.numpy()[0].tolist())
    assert results == [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]


# --- scalar types as casts ----------------------------------------------------------------------

@wp.kernel
def casts(x: wp.array(dtype=float), xd: wp.array(dtype=wp.float64), i32: wp.array(dtype=int),
          o32: wp.array(dtype=wp.float32, ndim=2), o64: wp.array(dtype=wp.float64, ndim=2),
          oi: wp.array(dtype=wp.int32, ndim=2), ol: wp.array(dtype=wp.int64, ndim=2)):
    i = wp.tid()
    o32[0, i] = wp.float32(i)
    o32[1, i] = wp.float32(xd[i])
    o32[2, i] = wp.float32(2)
    o64[0, i] = wp.float64(x[i])
    o64[1, i] = wp.float64(i32[i])
    o64[2, i] = wp.float64(0.1)
    oi[0, i] = wp.int32(x[i])
    oi[1, i] = wp.int32(wp.int64(i32[i]) * wp.int64(3))
    oi[2, i] = int(xd[i])
    oi[3, i] = wp.int32(wp.bool_(i32[i]))
    ol[0, i] = wp.int64(i32[i]) * wp.int64(1048576) * wp.int64(1048576)
    ol[1, i] = wp.int64(xd[i] * 1e12)


def test_scalar_types_convert_in_kernels():
    x = np.array([0.5, -0.5, 2.75, -2.75, 1e6, -7.0], np.float32)
    xd = np.array([0.1, -1.9, 1e-30, 3.5, -1e6, 123456.789], np.float64)
    i32 = np.array([0, 1, -1, 7, -123456, 2**31 - 1], np.int32)
    n = len(x)
    o32, o64 = wp.zeros((3, n)), wp.zeros((3, n), dtype=wp.float64)
    oi, ol = wp.zeros((4, n), dtype=int), wp.zeros((2, n), dtype=wp.int64)
    wp.launch(casts, dim=n, inputs=[wp.array(x), wp.array(xd), wp.array(i32), o32, o64, oi, ol])
    np.testing.assert_array_equal(o32.numpy()[0], np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(o32.numpy()[1], xd.astype(np.float32))  # round to nearest
    np.testing.assert_array_equal(o32.numpy()[2], 2.0)
    np.testing.assert_array_equal(o64.numpy()[0], x.astype(np.float64))
    np.testing.assert_array_equal(o64.numpy()[1], i32.astype(np.float64))
    np.testing.assert_array_equal(o64.numpy()[2], 0.1)
    np.testing.assert_array_equal(oi.numpy()[0], np.trunc(x).astype(np.int32))  # toward zero
    np.testing.assert_array_equal(oi.numpy()[1], (i32.astype(np.int64) * 3).astype(np.int32))  # wraps
    np.testing.assert_array_equal(oi.numpy()[2], np.trunc(xd).astype(np.int32))
    np.testing.assert_array_equal(oi.numpy()[3], (i32 != 0).astype(np.int32))
    np.testing.assert_array_equal(ol.numpy()[0], i32.astype(np.int64) << 40)
    np.testing.assert_array_equal(ol.numpy()[1], np.trunc(xd * 1e12).astype(np.int64))


def test_scalar_types_convert_outside_kernels():
    assert wp.float32(1.5) == np.float32(1.5) and type(wp.float32(1.5)) is np.float32
    assert type(wp.int64(3)) is np.int64 and wp.int64(3) == 3


# --- quaternion values -------------------------------------------------------------------------------

def test_quat_is_a_distinct_type_from_vec4():
    assert wp.quat != wp.vec4 and wp.quatd != wp.vec4d and wp.quat != wp.quatd
    assert wp.quat.length == 4 and wp.quat.dtype == wp.float32 and wp.quatd.dtype == wp.float64
    assert repr(wp.quat) == "quat" and repr(wp.quatd) == "quatd" and wp.quatf is wp.quat
    assert wp.array(dtype=wp.quat) != wp.array(dtype=wp.vec4)
    q = wp.quat(1, 2, 3, 4)
    assert q.dtype == np.float32 and q.tolist() == [1, 2, 3, 4]
    assert wp.quat([0.5, 0, 0], 1.0).tolist() == [0.5, 0, 0, 1.0]  # (xyz, w)
    assert wp.quat().tolist() == [0, 0, 0, 0]
    assert wp.quatd(0, 0, 0, 1).dtype == np.float64
    with pytest.raises(TypeError):
        wp.quat(1.0, 2.0)
    with pytest.raises(TypeError):
        adjit.types.quaternion(wp.int32)


@wp.kernel
def quat_values(q: wp.quat, qs: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3),
                out: wp.array(dtype=wp.quat, ndim=2), outd: wp.array(dtype=wp.quatd),
                comps: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    p = qs[i]
    out[0, i] = wp.quat(p.x, p.y, p.z, p.w)
    out[1, i] = wp.quat(v[i], 2.0)
    out[2, i] = wp.quat()
    out[3, i] = p + q
    out[4, i] = p - q
    out[5, i] = -p
    out[6, i] = p / 2.0
    r = p
    r.w = 7.0
    r[0] = float(i)
    out[7, i] = r
    s = p
    s *= q
    out[8, i] = s
    out[9, i] = wp.quat(wp.quatd(p))
    out[10, i] = wp.quat(1, 2, 3, i)
    outd[i] = wp.quatd(p)
    comps[0, i] = p.w
    comps[1, i] = p[3]
    comps[2, i] = qs[i].z
    comps[3, i] = qs[i][1]


def _hamilton(a, b):
    av, aw, bv, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - (av * bv).sum(-1, keepdims=True)], -1)


def test_quaternion_values_in_kernels():
    rng = np.random.default_rng(1)
    n = 6
    qs = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    v = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    q = wp.quat(0.25, -0.5, 0.75, 1.0)
    out, outd, comps = wp.zeros((11, n), dtype=wp.quat), wp.zeros(n, dtype=wp.quatd), wp.zeros((4, n))
    wp.launch(quat_values, dim=n, inputs=[q, wp.array(qs, dtype=wp.quat), wp.array(v, dtype=wp.vec3), out, outd,
                                          comps])
    o = out.numpy()
    np.testing.assert_array_equal(o[0], qs)
    np.testing.assert_array_equal(o[1], np.concatenate([v, np.full((n, 1), 2.0, np.float32)], 1))
    np.testing.assert_array_equal(o[2], 0.0)
    np.testing.assert_array_equal(o[3], qs + q)
    np.testing.assert_array_equal(o[4], qs - q)
    np.testing.assert_array_equal(o[5], -qs)
    np.testing.assert_array_equal(o[6], qs / np.float32(2.0))
    np.testing.assert_array_equal(o[7], np.concatenate([np.arange(n)[:, None], qs[:, 1:3], np.full((n, 1), 7.0)], 1))
    np.testing.assert_allclose(o[8], _hamilton(qs.astype(np.float64), np.asarray(q, np.float64)), **F32)
    np.testing.assert_array_equal(o[9], qs)
    np.testing.assert_array_equal(o[10], np.stack([np.full(n, 1), np.full(n, 2), np.full(n, 3), np.arange(n)], 1))
    np.testing.assert_array_equal(outd.numpy(), qs.astype(np.float64))
    np.testing.assert_array_equal(comps.numpy(), [qs[:, 3], qs[:, 3], qs[:, 2], qs[:, 1]])


def test_quat_arrays_and_vec4_arrays_do_not_mix():
    qs = wp.zeros(2, dtype=wp.vec4)  # a vec4 array where the kernel wants quats
    with pytest.raises(adjit.LaunchError, match="quat"):
        wp.launch(quat_values, dim=2, inputs=[wp.quat(), qs, wp.zeros(2, dtype=wp.vec3),
                                              wp.zeros((11, 2), dtype=wp.quat), wp.zeros(2, dtype=wp.quatd),
                                              wp.zeros((4, 2))])


# --- a Warp-style module end to end ----------------------------------------------------------------

GRAVITY = wp.constant(wp.vec3(0.0, -9.8, 0.0))
DT = wp.constant(0.01)


@wp.func
def rigid_step(q: wp.quat, w: wp.vec3, dt: float):
    # First-order integration of the orientation: q' = q + dt/2 (w, 0) q, renormalized.
    dq = wp.quat(w, 0.0) * q * (0.5 * dt)
    r = q + dq
    return r / wp.length(r)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat),
              w: wp.array(dtype=wp.vec3), body_to_cell: wp.array(dtype=int),
              counts: wp.array2d(dtype=int), com: wp.array(dtype=wp.vec3),
              frame: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    vi = v[i] + GRAVITY * DT
    x[i] = x[i] + vi * DT
    v[i] = vi
    q[i] = rigid_step(q[i], w[i], DT)
    c = body_to_cell[i]
    wp.atomic_add(counts, c, 0, 1)
    wp.atomic_add(com, c, x[i])
    m = wp.identity(n=3, dtype=float)
    m[0] = wp.quat_rotate(q[i], m[0])
    m[1] = wp.quat_rotate(q[i], m[1])
    m[2] = wp.quat_rotate(q[i], m[2])
    frame[i] = m


def _rigid_step_ref(q, w, dt):
    dq = _hamilton(np.concatenate([w, np.zeros((len(w), 1))], 1), q) * (0.5 * dt)
    r = q + dq
    return r / np.linalg.norm(r, axis=1, keepdims=True)


def _rotate(q, v):
    inv = np.concatenate([-q[:, :3], q[:, 3:]], 1) / (q * q).sum(1, keepdims=True)
    return _hamilton(_hamilton(q, np.concatenate([v, np.zeros((len(v), 1))], 1)), inv)[:, :3]


def test_a_warp_style_module_runs():
    rng = np.random.default_rng(2)
    n = 100
    x0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    v0 = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    q0 = rng.normal(size=(n, 4))
    q0 = (q0 / np.linalg.norm(q0, axis=1, keepdims=True)).astype(np.float32)
    w = rng.uniform(-3, 3, (n, 3)).astype(np.float32)
    cells = rng.integers(0, 5, n).astype(np.int32)
    x, v = wp.array(x0, dtype=wp.vec3), wp.array(v0, dtype=wp.vec3)
    q = wp.array(q0, dtype=wp.quat)
    counts, com, frame = wp.zeros((5, 1), dtype=int), wp.zeros(5, dtype=wp.vec3), wp.zeros(n, dtype=wp.mat33)
    wp.launch(integrate, dim=n, inputs=[x, v, q, wp.array(w, dtype=wp.vec3), wp.array(cells), counts, com, frame])
    X0, V0, Q0, W = (a.astype(np.float64) for a in (x0, v0, q0, w))
    V1 = V0 + np.array([0.0, -9.8, 0.0]) * 0.01
    X1 = X0 + V1 * 0.01
    Q1 = _rigid_step_ref(Q0, W, 0.01)
    np.testing.assert_allclose(v.numpy(), V1, **F32)
    np.testing.assert_allclose(x.numpy(), X1, **F32)
    np.testing.assert_allclose(q.numpy(), Q1, rtol=1e-5, atol=2e-6)
    np.testing.assert_array_equal(counts.numpy()[:, 0], np.bincount(cells, minlength=5))
    ref_com = np.zeros((5, 3))
    np.add.at(ref_com, cells, X1)
    np.testing.assert_allclose(com.numpy(), ref_com, rtol=1e-5, atol=1e-5)
    # Row k of the frame is e_k rotated by q.
    for k in range(3):
        e = np.zeros((n, 3))
        e[:, k] = 1.0
        np.testing.assert_allclose(frame.numpy()[:, k], _rotate(Q1, e), rtol=1e-5, atol=2e-6)


# --- the same kernel under Warp itself (when it is installed) --------------------------------------

def _warp_cross_check_source():
    return textwrap.dedent("""\
        import {mod} as wp

        @wp.kernel
        def k(q: wp.array(dtype=wp.quatd), p: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d),
              axis: wp.array(dtype=wp.vec3d), angle: wp.array(dtype=wp.float64), m: wp.array(dtype=wp.mat33d),
              oq: wp.array2d(dtype=wp.quatd), ov: wp.array2d(dtype=wp.vec3d), om: wp.array2d(dtype=wp.mat33d),
              lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64), acc: wp.array(dtype=wp.vec3d),
              old: wp.array(dtype=wp.vec3d)):
            i = wp.tid()
            oq[0, i] = q[i] * p[i]
            oq[1, i] = wp.mul(q[i], p[i])
            oq[2, i] = wp.quat_inverse(q[i])
            oq[3, i] = wp.quat_from_axis_angle(axis[i], angle[i])
            oq[4, i] = wp.quat_identity(dtype=wp.float64) * q[i] * wp.float64(2.0)
            oq[5, i] = wp.quatd(v[i], angle[i])
            ov[0, i] = wp.quat_rotate(q[i], v[i])
            ov[1, i] = wp.mul(m[i], v[i])
            ov[2, i] = wp.mul(v[i], m[i])
            om[0, i] = wp.identity(n=3, dtype=wp.float64)
            om[1, i] = wp.mul(m[i], m[i]) - m[i] * wp.identity(n=3, dtype=wp.float64)
            wp.atomic_min(lo, i % 3, angle[i])
            wp.atomic_max(hi, i % 3, angle[i])
            old[i] = wp.atomic_sub(acc, 0, v[i])
        """)


def _run_cross_check(wp_mod, kernel, arrays, n):
    def arr(data, dtype):
        return wp_mod.array(data, dtype=dtype, device="cpu")

    def zeros(shape, dtype):
        return wp_mod.zeros(shape, dtype=dtype, device="cpu")

    q, p, v, axis, angle, m = arrays
    ins = [arr(q, wp_mod.quatd), arr(p, wp_mod.quatd), arr(v, wp_mod.vec3d), arr(axis, wp_mod.vec3d),
           arr(angle, wp_mod.float64), arr(m, wp_mod.mat33d)]
    outs = [zeros((6, n), wp_mod.quatd), zeros((3, n), wp_mod.vec3d), zeros((2, n), wp_mod.mat33d),
            arr(np.full(3, 10.0), wp_mod.float64), arr(np.full(3, -10.0), wp_mod.float64),
            zeros(1, wp_mod.vec3d), zeros(n, wp_mod.vec3d)]
    wp_mod.launch(kernel, dim=n, inputs=ins + outs, device="cpu")
    return [o.numpy() for o in outs]


def test_matches_warp_on_the_cpu(tmp_path):
    warp = pytest.importorskip("warp")
    warp.config.quiet = True
    warp.config.kernel_cache_dir = str(tmp_path / "warp-cache")  # never the user's cache
    warp.init()
    rng = np.random.default_rng(3)
    n = 64
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = rng.normal(size=(n, 4))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    arrays = (q, p, rng.uniform(-2, 2, (n, 3)), axis, rng.uniform(-6, 6, n), rng.uniform(-1, 1, (n, 3, 3)))
    results = {}
    for name, mod in (("warp", warp), ("adjit", adjit)):
        module = _load_module(tmp_path / f"cross_{name}.py", f"cross_{name}",
                              _warp_cross_check_source().format(mod=name))
        results[name] = _run_cross_check(mod, module.k, arrays, n)
    for j, (w, a) in enumerate(zip(results["warp"], results["adjit"])):
        if j == 6:  # atomic_sub's old values depend on the order of the threads
            continue
        np.testing.assert_allclose(a, w, rtol=1e-13, atol=1e-14, err_msg=f"output {j}")


# --- bitwise operators ------------------------------------------------------------------------

@wp.kernel
def bit_ops(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array2d(dtype=int)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x & y
    out[i, 1] = x | y
    out[i, 2] = x ^ y
    out[i, 3] = x << y
    out[i, 4] = x >> y
    out[i, 5] = ~x
    out[i, 6] = (x & 0xFF) | (1 << 4)
    z = x
    z ^= y
    out[i, 7] = z


def test_bitwise_operators_on_integers_match_python_wrapped_to_int32():
    a = np.array([5, -7, 123456, -1, 3, 1, -2**31], np.int32)
    b = np.array([1, 2, 31, 32, -1, 40, 31], np.int32)
    out = wp.zeros((7, 8), dtype=int)
    wp.launch(bit_ops, dim=7, inputs=[wp.array(a), wp.array(b), out])

    def wrap(v):
        return (v + 2**31) % 2**32 - 2**31

    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        # Python's unbounded shifts, wrapped to 32 bits; a negative count
        # shifts everything out (documented: Python raises there).
        left = wrap(x << y) if y >= 0 else 0
        right = x >> y if y >= 0 else (-1 if x < 0 else 0)
        assert out.numpy()[i].tolist() == [x & y, x | y, x ^ y, left, right, ~x, (x & 0xFF) | 16, x ^ y], i


@pytest.mark.parametrize("body, words", [
    ("y[0] = x[0] & 1.0", "needs integer operands"),
    ("y[0] = float(~True)", "~ needs an integer operand"),
    ("y[0] = float(1 << 70)", "shift count 70 is out of range"),
    ("y[0] = float(2.0 ^ 1)", "needs integer operands"),
])
def test_bitwise_operators_refuse_what_they_cannot_do(tmp_path, body, words):
    path = tmp_path / "bitwise_errors.py"
    path.write_text(f"import adjit as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
                    f"    {body}\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(namespace["k"], dim=1, inputs=[wp.zeros(1), wp.zeros(1)])
    assert words in str(info.value) and f"{path}:5" in str(info.value)


@wp.kernel
def lengths(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), a2: wp.array2d(dtype=float),
            out: wp.array(dtype=int)):
    i = wp.tid()
    total = float(0.0)
    for k in range(len(v)):  # the array's extent: this loop's reads need no bounds check
        total = total + v[k].x
    out[0] = len(v[i])
    out[1] = len(m[i])
    out[2] = len(v)
    out[3] = len(a2)
    out[4] = int(total)


def test_len_of_vectors_matrices_and_arrays():
    v = wp.array(np.ones((5, 3), np.float32), dtype=wp.vec3)
    out = wp.zeros(5, dtype=int)
    wp.launch(lengths, dim=1, inputs=[v, wp.zeros(5, dtype=wp.mat22), wp.zeros((7, 2)), out])
    assert out.numpy().tolist() == [3, 2, 5, 7, 5]


# --- runtime component indices ----------------------------------------------------------------

@wp.kernel
def runtime_components(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), idx: wp.array(dtype=int),
                       y: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    j = idx[i]
    v = x[i]
    v[j] = v[j] * v[(j + 1) % 3]
    y[i] = v[j] + m[i][j, (j + 2) % 3] + x[i][j] + m[i][j][1]
    z[i] = v
    z[i][j] = wp.float64(7.0) * x[i][j]


def test_runtime_component_indices_read_write_and_differentiate():
    from adjit.testing import check_gradients
    rng = np.random.default_rng(0)
    x = wp.array(rng.standard_normal((4, 3)), dtype=wp.vec3d, requires_grad=True)
    m = wp.array(rng.standard_normal((4, 3, 3)), dtype=wp.mat33d, requires_grad=True)
    js = [0, 1, 2, 1]
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    z = wp.zeros(4, dtype=wp.vec3d, requires_grad=True)
    wp.launch(runtime_components, dim=4, inputs=[x, m, wp.array(np.array(js, np.int32)), y, z])
    xn, mn = x.numpy(), m.numpy()
    for i, j in enumerate(js):
        v = xn[i].copy()
        v[j] = v[j] * v[(j + 1) % 3]
        assert y.numpy()[i] == pytest.approx(v[j] + mn[i][j, (j + 2) % 3] + xn[i][j] + mn[i][j][1], rel=1e-14)
        v[j] = 7.0 * xn[i][j]
        np.testing.assert_array_equal(z.numpy()[i], v)
    check_gradients(runtime_components, 4, [x, m, wp.array(np.array(js, np.int32))], [y, z])


def test_a_runtime_component_index_out_of_range_is_reported():
    x = wp.zeros(4, dtype=wp.vec3d)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(runtime_components, dim=4, inputs=[x, wp.zeros(4, dtype=wp.mat33d),
                                                     wp.array(np.array([0, 1, -1, 1], np.int32)),
                                                     wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.vec3d)])
    e = info.value
    assert (e.access, e.index, e.thread) == ("component index", (-1,), (2,))
    assert "component index -1 is out of range for v (vec3d) (0 to 2" in str(e)


# --- @func overloads --------------------------------------------------------------------------

OVERLOADS = '''
import adjit as wp

@wp.func
def scale(x: float):
    return x * 2.0

@wp.func
def scale(v: wp.vec3):
    return v * 3.0

@wp.func
def scale(i: int):
    return i * 4

@wp.func
def scale(x: float):  # the same parameter types: replaces the first
    return x * 5.0

@wp.kernel
def k(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), n: wp.array(dtype=int)):
    i = wp.tid()
    x[i] = scale(x[i]) + scale(1.5)
    v[i] = scale(v[i])
    n[i] = scale(n[i]) + scale(2)

@wp.kernel
def no_match(q: wp.array(dtype=wp.mat22)):
    q[0] = scale(q[0])
'''


def _module(tmp_path, name, text):
    import sys
    (tmp_path / f"{name}.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        __import__(name)
        return sys.modules.pop(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_funcs_of_one_name_with_other_parameter_types_are_overloads(tmp_path):
    m = _module(tmp_path, "overloads_module", OVERLOADS)
    assert len(m.scale.overloads) == 3
    x, v, n = wp.array(np.ones(2, np.float32)), wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3), \
        wp.array(np.ones(2, np.int32))
    wp.launch(m.k, dim=2, inputs=[x, v, n])
    assert x.numpy().tolist() == [12.5, 12.5]  # 5 * 1 + 5 * 1.5
    assert v.numpy().tolist() == [[3.0] * 3] * 2 and n.numpy().tolist() == [12, 12]
    with pytest.raises(wp.KernelTypeError, match=r"no overload of scale\(\) takes \(a mat22 value\)"):
        wp.launch(m.no_match, dim=1, inputs=[wp.zeros(1, dtype=wp.mat22)])


# --- static(expr) ---------------------------------------------------------------------------

STATIC_MODULE = '''
import adjit as wp

N = 3
SCALES = [1.0, 10.0, 100.0]

@wp.func
def double(x: wp.float64):
    return wp.float64(2.0) * x

@wp.func
def triple(x: wp.float64):
    return wp.float64(3.0) * x

OPS = [double, triple]

@wp.kernel
def k(v: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = wp.float64(0.0)
    for j in range(wp.static(N)):  # unrolled: j is a constant in each copy
        s = s + v[i][j] * v[i][j] * wp.static(SCALES[j])
    out[i] = wp.static(OPS[1])(s) + wp.static(len(SCALES) * 2)

@wp.kernel
def reads_a_variable(out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.static(i * 2)

@wp.kernel
def raises(out: wp.array(dtype=float)):
    out[0] = wp.static(SCALES[7])
'''


def test_static_evaluates_at_compile_time_and_unrolls_loops(tmp_path):
    from adjit import cache
    from adjit.testing import check_gradients
    m = _module(tmp_path, "static_module", STATIC_MODULE)
    rng = np.random.default_rng(2)
    v = wp.array(rng.standard_normal((3, 3)), dtype=wp.vec3d, requires_grad=True)
    out = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    wp.launch(m.k, dim=3, inputs=[v, out])
    vn = v.numpy()
    np.testing.assert_allclose(out.numpy(), 3.0 * (vn ** 2 @ np.array([1.0, 10.0, 100.0])) + 6.0, rtol=1e-14)
    check_gradients(m.k, 3, [v], [out])
    # What a static expression reads is part of the cache key, whatever its type.
    before = cache.kernel_digest(m.k.pyfunc, m.k.arg_types)
    m.SCALES[2] = 1000.0
    assert cache.kernel_digest(m.k.pyfunc, m.k.arg_types) != before
    m.OPS.reverse()
    with pytest.raises(wp.KernelSyntaxError, match="cannot read the kernel variable 'i'"):
        wp.launch(m.reads_a_variable, dim=1, inputs=[wp.zeros(1)])
    with pytest.raises(wp.KernelError, match=r"static\(SCALES\[7\]\) raised IndexError"):
        wp.launch(m.raises, dim=1, inputs=[wp.zeros(1)])


ANY_MODULE = '''
from typing import Any
import adjit as wp

@wp.func
def twice(x: Any):
    return x + x

@wp.kernel
def k(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), n: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = twice(a[i])
    v[i] = twice(v[i])
    n[i] = twice(n[i])

@wp.kernel
def generic_kernel(a: Any):
    pass
'''


def test_typing_any_parameters_make_funcs_generic(tmp_path):
    m = _module(tmp_path, "any_module", ANY_MODULE)
    a, v, n = wp.array(np.ones(2, np.float32)), wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3), \
        wp.array(np.array([3, 4], np.int32))
    wp.launch(m.k, dim=2, inputs=[a, v, n])
    assert a.numpy().tolist() == [2.0, 2.0] and v.numpy()[1].tolist() == [2.0] * 3 and n.numpy().tolist() == [6, 8]
    # a kernel with an Any parameter is generic: its launch makes the instance (test_generics.py)
    wp.launch(m.generic_kernel, dim=1, inputs=[1.0])
    assert m.generic_kernel.is_generic


KEYWORDS_MODULE = '''
import adjit as wp

@wp.func
def axpy(x: float, y: float, a: float = 2.0):
    return a * x + y

@wp.func
def pick(v: wp.vec3, k: int = 1):
    return v[k]

@wp.kernel
def k(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x[i] = axpy(x[i], 1.0) + axpy(y=10.0, x=x[i], a=3.0) + pick(v[i]) + pick(v[i], k=2)

@wp.kernel
def unknown_keyword(x: wp.array(dtype=float)):
    x[0] = axpy(1.0, 2.0, b=3.0)

@wp.kernel
def missing(x: wp.array(dtype=float)):
    x[0] = axpy(y=2.0)
'''


def test_func_calls_take_keyword_arguments_and_defaults(tmp_path):
    m = _module(tmp_path, "keywords_module", KEYWORDS_MODULE)
    x = wp.array(np.ones(2, np.float32))
    v = wp.array(np.array([[1, 2, 3], [4, 5, 6]], np.float32), dtype=wp.vec3)
    wp.launch(m.k, dim=2, inputs=[x, v])
    assert x.numpy().tolist() == [21.0, 27.0]  # 3 + 13 + v[1] + v[2]
    with pytest.raises(wp.KernelTypeError, match=r"axpy\(\) has no parameter 'b'"):
        wp.launch(m.unknown_keyword, dim=1, inputs=[wp.zeros(1)])
    with pytest.raises(wp.KernelTypeError, match=r"axpy\(\) is missing argument 'x'"):
        wp.launch(m.missing, dim=1, inputs=[wp.zeros(1)])
