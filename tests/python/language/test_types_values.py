"""Vector and matrix values: arguments, arrays, constructors, components, value
semantics, arithmetic, and scalar casts."""
import numpy as np
import pytest

import adjit

RTOL, ATOL = 1e-5, 1e-6  # float32 results vs float64 references


def _rand(rng, *shape):
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


# --- value arguments and arrays ---------------------------------------------------------

@adjit.kernel
def value_args(v: adjit.vec3, m: adjit.mat33, s: float,
               out_v: adjit.array(dtype=adjit.vec3), out_m: adjit.array(dtype=adjit.mat33)):
    i = adjit.tid()
    out_v[i] = v * (s + float(i))
    out_m[i] = m


def test_vec3_and_mat33_kernel_arguments():
    v = np.array([1.0, -2.0, 0.5], np.float32)
    m = np.arange(9, dtype=np.float32).reshape(3, 3) - 4.0
    out_v, out_m = adjit.zeros(4, dtype=adjit.vec3), adjit.zeros(4, dtype=adjit.mat33)
    adjit.launch(value_args, dim=4, inputs=[v, m, 2.0, out_v, out_m])
    np.testing.assert_array_equal(out_v.numpy(), v[None, :] * (2.0 + np.arange(4, dtype=np.float32))[:, None])
    # Row-major: m[r, c] is the argument's [r, c].
    np.testing.assert_array_equal(out_m.numpy(), np.broadcast_to(m, (4, 3, 3)))


def test_value_arguments_accept_python_sequences_and_adjit_constructors():
    out_v, out_m = adjit.zeros(1, dtype=adjit.vec3), adjit.zeros(1, dtype=adjit.mat33)
    m = adjit.mat33(1, 2, 3, 4, 5, 6, 7, 8, 9)
    adjit.launch(value_args, dim=1, inputs=[[1, 2, 3], m, 1.0, out_v, out_m])
    np.testing.assert_array_equal(out_v.numpy()[0], [1, 2, 3])
    np.testing.assert_array_equal(out_m.numpy()[0], [[1, 2, 3], [4, 5, 6], [7, 8, 9]])


@adjit.kernel
def copy_vec3(src: adjit.array(dtype=adjit.vec3), dst: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    dst[i] = src[i]


def test_vec3_array_from_numpy_n_by_3():
    rng = np.random.default_rng(0)
    data = _rand(rng, 1000, 3)
    src = adjit.array(data, dtype=adjit.vec3)
    assert src.shape == (1000,) and src.dtype == adjit.vec3
    dst = adjit.zeros(1000, dtype=adjit.vec3)
    assert dst.numpy().shape == (1000, 3)
    adjit.launch(copy_vec3, dim=1000, inputs=[src, dst])
    np.testing.assert_array_equal(dst.numpy(), data)


# --- constructors and component reads ---------------------------------------------------

@adjit.kernel
def constructors(s: float, out_v: adjit.array(dtype=adjit.vec3, ndim=2),
                 out_m: adjit.array(dtype=adjit.mat33, ndim=2), out_i: adjit.array(dtype=adjit.vec3i)):
    i = adjit.tid()
    f = float(i)
    out_v[i, 0] = adjit.vec3(f, s, 2.0)
    out_v[i, 1] = adjit.vec3(s)
    out_v[i, 2] = adjit.vec3()
    out_m[i, 0] = adjit.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, f)
    out_m[i, 1] = adjit.mat33(adjit.vec3(1.0, 2.0, 3.0), adjit.vec3(s), adjit.vec3(f, 0.0, -f))
    out_m[i, 2] = adjit.mat33()
    out_m[i, 3] = adjit.mat33(s)
    out_i[i] = adjit.vec3i(i, 2 * i, -3)


def test_constructors():
    n, s = 3, 1.5
    out_v, out_m = adjit.zeros((n, 3), dtype=adjit.vec3), adjit.zeros((n, 4), dtype=adjit.mat33)
    out_i = adjit.zeros(n, dtype=adjit.vec3i)
    adjit.launch(constructors, dim=n, inputs=[s, out_v, out_m, out_i])
    for i in range(n):
        f = float(i)
        np.testing.assert_array_equal(out_v.numpy()[i], [[f, s, 2.0], [s, s, s], [0, 0, 0]])
        np.testing.assert_array_equal(out_m.numpy()[i, 0], [[1, 2, 3], [4, 5, 6], [7, 8, f]])
        np.testing.assert_array_equal(out_m.numpy()[i, 1], [[1, 2, 3], [s, s, s], [f, 0, -f]])
        np.testing.assert_array_equal(out_m.numpy()[i, 2], np.zeros((3, 3)))
        np.testing.assert_array_equal(out_m.numpy()[i, 3], np.full((3, 3), s))
    np.testing.assert_array_equal(out_i.numpy(), [[i, 2 * i, -3] for i in range(n)])
    assert out_i.numpy().dtype == np.int32


@adjit.kernel
def component_reads(vs: adjit.array(dtype=adjit.vec3), ms: adjit.array(dtype=adjit.mat33),
                    out: adjit.array(dtype=float, ndim=2), rows: adjit.array(dtype=adjit.vec3, ndim=2)):
    i = adjit.tid()
    v = vs[i]
    m = ms[i]
    out[i, 0] = v.x
    out[i, 1] = v.y
    out[i, 2] = v.z
    out[i, 3] = v[0]
    out[i, 4] = v[2]
    out[i, 5] = m[0, 0]
    out[i, 6] = m[1, 2]
    out[i, 7] = m[2, 1]
    out[i, 8] = m[1][0]
    out[i, 9] = m[2].z
    rows[i, 0] = m[0]
    rows[i, 1] = m[1]
    rows[i, 2] = m[2]


def test_component_reads():
    rng = np.random.default_rng(1)
    vs, ms = _rand(rng, 5, 3), _rand(rng, 5, 3, 3)
    out, rows = adjit.zeros((5, 10)), adjit.zeros((5, 3), dtype=adjit.vec3)
    adjit.launch(component_reads, dim=5, inputs=[adjit.array(vs, dtype=adjit.vec3),
                                                 adjit.array(ms, dtype=adjit.mat33), out, rows])
    ref = np.stack([vs[:, 0], vs[:, 1], vs[:, 2], vs[:, 0], vs[:, 2], ms[:, 0, 0], ms[:, 1, 2],
                    ms[:, 2, 1], ms[:, 1, 0], ms[:, 2, 2]], axis=1)
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(rows.numpy(), ms)  # m[r] is row r


# --- component writes on locals and value semantics ----------------------------------------

@adjit.kernel
def component_writes(s: float, out_v: adjit.array(dtype=adjit.vec3, ndim=2),
                     out_m: adjit.array(dtype=adjit.mat33, ndim=2)):
    i = adjit.tid()
    v = adjit.vec3(1.0, 2.0, 3.0)
    v.x = s
    v.y += s
    v[2] = v[2] * 10.0
    out_v[i, 0] = v
    w = adjit.vec3(1.0, 2.0, 3.0)
    w.z -= s
    w[0] += 1.0
    out_v[i, 1] = w
    m = adjit.mat33()
    m[1, 2] = s
    m[0] = adjit.vec3(7.0, 8.0, 9.0)
    m[2][0] = -s
    m[0, 1] += 0.5
    m[2] += adjit.vec3(1.0, 1.0, 1.0)
    out_m[i, 0] = m


def test_component_writes_on_locals():
    s = 2.5
    out_v, out_m = adjit.zeros((2, 2), dtype=adjit.vec3), adjit.zeros((2, 1), dtype=adjit.mat33)
    adjit.launch(component_writes, dim=2, inputs=[s, out_v, out_m])
    for i in range(2):
        np.testing.assert_array_equal(out_v.numpy()[i, 0], [s, 2.0 + s, 30.0])
        np.testing.assert_array_equal(out_v.numpy()[i, 1], [2.0, 2.0, 3.0 - s])
        np.testing.assert_array_equal(out_m.numpy()[i, 0], [[7.0, 8.5, 9.0], [0.0, 0.0, s], [1.0 - s, 1.0, 1.0]])


@adjit.kernel
def value_semantics(xs: adjit.array(dtype=adjit.vec3), ms: adjit.array(dtype=adjit.mat33),
                    out_v: adjit.array(dtype=adjit.vec3, ndim=2), out_m: adjit.array(dtype=adjit.mat33, ndim=2)):
    i = adjit.tid()
    a = xs[i]
    b = a
    a.x = 100.0
    out_v[i, 0] = a
    out_v[i, 1] = b
    # A copy taken before a branch keeps its value when the branch writes the original.
    c = a
    if i % 2 == 0:
        a.y = -1.0
    out_v[i, 2] = c
    out_v[i, 3] = a
    # Loop-carried writes do not leak into an earlier copy either.
    d = b
    for k in range(3):
        b.z = b.z + 1.0
    out_v[i, 4] = d
    out_v[i, 5] = b
    m = ms[i]
    n = m
    m[1, 1] = 42.0
    m[2] = adjit.vec3(0.0)
    out_m[i, 0] = m
    out_m[i, 1] = n


def test_value_semantics_copies_do_not_alias():
    rng = np.random.default_rng(2)
    xs, ms = _rand(rng, 4, 3), _rand(rng, 4, 3, 3)
    out_v, out_m = adjit.zeros((4, 6), dtype=adjit.vec3), adjit.zeros((4, 2), dtype=adjit.mat33)
    xa = adjit.array(xs, dtype=adjit.vec3)
    adjit.launch(value_semantics, dim=4, inputs=[xa, adjit.array(ms, dtype=adjit.mat33), out_v, out_m])
    o = out_v.numpy()
    for i in range(4):
        a = xs[i].copy()
        a[0] = 100.0
        np.testing.assert_array_equal(o[i, 0], a)
        np.testing.assert_array_equal(o[i, 1], xs[i])
        np.testing.assert_array_equal(o[i, 2], a)
        a2 = a.copy()
        if i % 2 == 0:
            a2[1] = -1.0
        np.testing.assert_array_equal(o[i, 3], a2)
        np.testing.assert_array_equal(o[i, 4], xs[i])
        b = xs[i].copy()
        for _ in range(3):
            b[2] = b[2] + np.float32(1.0)  # three float32 additions, as in the kernel
        np.testing.assert_array_equal(o[i, 5], b)
        m = ms[i].copy()
        m[1, 1] = 42.0
        m[2] = 0.0
        np.testing.assert_array_equal(out_m.numpy()[i, 0], m)
        np.testing.assert_array_equal(out_m.numpy()[i, 1], ms[i])
    # Reading an array element gives a value: the array itself is unchanged.
    np.testing.assert_array_equal(xa.numpy(), xs)


@adjit.func
def clobber(v: adjit.vec3) -> adjit.vec3:
    v.x = 0.0
    return v


@adjit.kernel
def value_semantics_calls(xs: adjit.array(dtype=adjit.vec3), out: adjit.array(dtype=adjit.vec3, ndim=2)):
    i = adjit.tid()
    a = xs[i]
    b = clobber(a)
    out[i, 0] = a
    out[i, 1] = b


def test_device_function_argument_is_a_copy():
    xs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    out = adjit.zeros((2, 2), dtype=adjit.vec3)
    adjit.launch(value_semantics_calls, dim=2, inputs=[adjit.array(xs, dtype=adjit.vec3), out])
    np.testing.assert_array_equal(out.numpy()[:, 0], xs)
    np.testing.assert_array_equal(out.numpy()[:, 1], [[0, 2, 3], [0, 5, 6]])


# --- arithmetic ------------------------------------------------------------------------------

@adjit.kernel
def vector_arith(a: adjit.array(dtype=adjit.vec3), b: adjit.array(dtype=adjit.vec3), s: adjit.array(dtype=float),
                 out: adjit.array(dtype=adjit.vec3, ndim=2)):
    i = adjit.tid()
    out[i, 0] = s[i] * a[i]
    out[i, 1] = a[i] * s[i]
    out[i, 2] = a[i] / s[i]
    out[i, 3] = a[i] + b[i]
    out[i, 4] = a[i] - b[i]
    out[i, 5] = -a[i]
    out[i, 6] = 2.0 * a[i] - b[i] * 0.5
    out[i, 7] = a[i] / 4.0


def test_vector_arithmetic():
    rng = np.random.default_rng(3)
    n = 64
    a, b = _rand(rng, n, 3), _rand(rng, n, 3)
    s = rng.uniform(0.5, 2.0, n).astype(np.float32) * rng.choice([-1, 1], n).astype(np.float32)
    out = adjit.zeros((n, 8), dtype=adjit.vec3)
    adjit.launch(vector_arith, dim=n, inputs=[adjit.array(a, dtype=adjit.vec3), adjit.array(b, dtype=adjit.vec3),
                                              adjit.array(s), out])
    A, B, S = a.astype(np.float64), b.astype(np.float64), s.astype(np.float64)[:, None]
    ref = np.stack([S * A, A * S, A / S, A + B, A - B, -A, 2 * A - 0.5 * B, A / 4], axis=1)
    np.testing.assert_allclose(out.numpy(), ref, rtol=RTOL, atol=ATOL)
    # Negation and products with powers of two are exact.
    np.testing.assert_array_equal(out.numpy()[:, 5], -a)


@adjit.kernel
def matrix_arith(m: adjit.array(dtype=adjit.mat33), n: adjit.array(dtype=adjit.mat33),
                 v: adjit.array(dtype=adjit.vec3), s: float,
                 out_v: adjit.array(dtype=adjit.vec3, ndim=2), out_m: adjit.array(dtype=adjit.mat33, ndim=2)):
    i = adjit.tid()
    out_v[i, 0] = m[i] * v[i]
    out_v[i, 1] = v[i] * m[i]
    out_v[i, 2] = (m[i] * n[i]) * v[i]
    out_m[i, 0] = m[i] * n[i]
    out_m[i, 1] = -m[i]
    out_m[i, 2] = s * m[i]
    out_m[i, 3] = m[i] * s
    out_m[i, 4] = m[i] + n[i]
    out_m[i, 5] = m[i] - n[i]
    out_m[i, 6] = m[i] / s


def test_matrix_arithmetic():
    rng = np.random.default_rng(4)
    k = 32
    m, n, v = _rand(rng, k, 3, 3), _rand(rng, k, 3, 3), _rand(rng, k, 3)
    s = -1.75
    out_v, out_m = adjit.zeros((k, 3), dtype=adjit.vec3), adjit.zeros((k, 7), dtype=adjit.mat33)
    adjit.launch(matrix_arith, dim=k, inputs=[adjit.array(m, dtype=adjit.mat33), adjit.array(n, dtype=adjit.mat33),
                                              adjit.array(v, dtype=adjit.vec3), s, out_v, out_m])
    M, N, V = m.astype(np.float64), n.astype(np.float64), v.astype(np.float64)
    ref_v = np.stack([np.einsum("kij,kj->ki", M, V), np.einsum("ki,kij->kj", V, M),
                      np.einsum("kij,kj->ki", M @ N, V)], axis=1)
    ref_m = np.stack([M @ N, -M, s * M, M * s, M + N, M - N, M / s], axis=1)
    np.testing.assert_allclose(out_v.numpy(), ref_v, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out_m.numpy(), ref_m, rtol=RTOL, atol=ATOL)


@adjit.kernel
def other_shapes(a: adjit.array(dtype=adjit.mat44), b: adjit.array(dtype=adjit.vec4),
                 c: adjit.array(dtype=adjit.mat22d), d: adjit.array(dtype=adjit.vec2d),
                 out4: adjit.array(dtype=adjit.vec4), out2: adjit.array(dtype=adjit.vec2d),
                 outm: adjit.array(dtype=adjit.mat22d)):
    i = adjit.tid()
    out4[i] = a[i] * b[i] - b[i] * a[i]
    out2[i] = c[i] * d[i] + d[i] * 0.5
    outm[i] = c[i] * c[i] - c[i]


def test_mat44_vec4_and_float64_mat22_vec2():
    rng = np.random.default_rng(5)
    k = 16
    a, b = _rand(rng, k, 4, 4), _rand(rng, k, 4)
    c, d = rng.uniform(-1, 1, (k, 2, 2)), rng.uniform(-1, 1, (k, 2))
    out4, out2 = adjit.zeros(k, dtype=adjit.vec4), adjit.zeros(k, dtype=adjit.vec2d)
    outm = adjit.zeros(k, dtype=adjit.mat22d)
    adjit.launch(other_shapes, dim=k, inputs=[
        adjit.array(a, dtype=adjit.mat44), adjit.array(b, dtype=adjit.vec4),
        adjit.array(c, dtype=adjit.mat22d), adjit.array(d, dtype=adjit.vec2d), out4, out2, outm])
    A, B = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(out4.numpy(), np.einsum("kij,kj->ki", A, B) - np.einsum("ki,kij->kj", B, A),
                               rtol=RTOL, atol=ATOL)
    assert out2.numpy().dtype == np.float64
    np.testing.assert_allclose(out2.numpy(), np.einsum("kij,kj->ki", c, d) + 0.5 * d, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(outm.numpy(), c @ c - c, rtol=1e-14, atol=1e-15)


@adjit.kernel
def int_vector_arith(a: adjit.array(dtype=adjit.vec3i), out: adjit.array(dtype=adjit.vec3i, ndim=2)):
    i = adjit.tid()
    v = a[i]
    out[i, 0] = v * 3 + adjit.vec3i(1, 2, 3)
    out[i, 1] = v / 2
    out[i, 2] = -v


def test_int_vector_arithmetic():
    a = np.array([[7, -7, 0], [1, -1, 100]], np.int32)
    out = adjit.zeros((2, 3), dtype=adjit.vec3i)
    adjit.launch(int_vector_arith, dim=2, inputs=[adjit.array(a, dtype=adjit.vec3i), out])
    np.testing.assert_array_equal(out.numpy()[:, 0], a * 3 + [1, 2, 3])
    # Integer division truncates toward zero (C and Warp semantics).
    np.testing.assert_array_equal(out.numpy()[:, 1], np.trunc(a / 2).astype(np.int32))
    np.testing.assert_array_equal(out.numpy()[:, 2], -a)


# --- casts -------------------------------------------------------------------------------------

@adjit.kernel
def casts(x: adjit.array(dtype=float), d: adjit.array(dtype=adjit.float64), k: adjit.array(dtype=int),
          out_i: adjit.array(dtype=int, ndim=2), out_f: adjit.array(dtype=float, ndim=2),
          out_d: adjit.array(dtype=adjit.float64, ndim=2), big: adjit.int64, out_l: adjit.array(dtype=adjit.int64)):
    i = adjit.tid()
    out_i[i, 0] = int(x[i])
    out_i[i, 1] = int(d[i])
    out_i[i, 2] = int(x[i] > 0.0)
    out_i[i, 3] = int(adjit.int64(k[i]) * big / big)
    out_f[i, 0] = float(k[i])
    out_f[i, 1] = float(d[i])
    out_f[i, 2] = float(i) * 0.5
    out_f[i, 3] = float(x[i] < 0.0)
    out_d[i, 0] = adjit.float64(x[i])
    out_d[i, 1] = adjit.float64(k[i])
    out_l[i] = adjit.int64(k[i]) * big


def test_scalar_casts():
    x = np.array([-2.75, -0.5, 0.0, 0.5, 2.75, 1e6], np.float32)
    d = np.array([-3.9, -1e-9, 0.1, 1.0 / 3.0, 7.999999, 2.5e9 / 3], np.float64)
    k = np.array([-5, -1, 0, 1, 7, 123456789], np.int32)
    n = len(x)
    out_i, out_f = adjit.zeros((n, 4), dtype=int), adjit.zeros((n, 4))
    out_d, out_l = adjit.zeros((n, 2), dtype=adjit.float64), adjit.zeros(n, dtype=adjit.int64)
    big = 1 << 33
    adjit.launch(casts, dim=n, inputs=[adjit.array(x), adjit.array(d), adjit.array(k), out_i, out_f,
                                       out_d, big, out_l])
    # float -> int truncates toward zero, like Python's int().
    np.testing.assert_array_equal(out_i.numpy()[:, 0], [int(v) for v in x])
    np.testing.assert_array_equal(out_i.numpy()[:, 1], [int(v) for v in d])
    np.testing.assert_array_equal(out_i.numpy()[:, 2], (x > 0).astype(np.int32))
    np.testing.assert_array_equal(out_i.numpy()[:, 3], k)  # through int64 without overflow
    np.testing.assert_array_equal(out_f.numpy()[:, 0], k.astype(np.float32))
    np.testing.assert_array_equal(out_f.numpy()[:, 1], d.astype(np.float32))  # rounds to nearest
    np.testing.assert_array_equal(out_f.numpy()[:, 2], np.arange(n, dtype=np.float32) * 0.5)
    np.testing.assert_array_equal(out_f.numpy()[:, 3], (x < 0).astype(np.float32))
    np.testing.assert_array_equal(out_d.numpy()[:, 0], x.astype(np.float64))
    np.testing.assert_array_equal(out_d.numpy()[:, 1], k.astype(np.float64))
    np.testing.assert_array_equal(out_l.numpy(), k.astype(np.int64) * big)


@adjit.kernel
def literal_casts(out_i: adjit.array(dtype=int), out_f: adjit.array(dtype=float), out_b: adjit.array(dtype=int)):
    i = adjit.tid()
    out_i[0] = int(2.75)
    out_i[1] = int(-2.75)
    out_f[0] = float(3)
    out_f[1] = float(True)
    out_b[0] = int(bool(2))
    out_b[1] = int(bool(0.5))
    out_b[2] = int(bool(0))


def test_casts_of_literals_match_python():
    out_i, out_f, out_b = adjit.zeros(2, dtype=int), adjit.zeros(2), adjit.zeros(3, dtype=int)
    adjit.launch(literal_casts, dim=1, inputs=[out_i, out_f, out_b])
    np.testing.assert_array_equal(out_i.numpy(), [2, -2])
    np.testing.assert_array_equal(out_f.numpy(), [3.0, 1.0])
    np.testing.assert_array_equal(out_b.numpy(), [1, 1, 0])


def test_host_side_constructors_are_numpy_values():
    v = adjit.vec3(1, 2, 3)
    assert isinstance(v, np.ndarray) and v.dtype == np.float32 and v.shape == (3,)
    np.testing.assert_array_equal(adjit.vec3(2.0), [2, 2, 2])
    m = adjit.mat22d(1, 2, 3, 4)
    assert m.dtype == np.float64 and m.shape == (2, 2)
    np.testing.assert_array_equal(m, [[1, 2], [3, 4]])


@pytest.mark.parametrize("t,shape", [(adjit.vec2, (2,)), (adjit.vec4d, (4,)), (adjit.mat44, (4, 4)),
                                     (adjit.mat22d, (2, 2)), (adjit.vec3i, (3,))])
def test_array_component_shapes(t, shape):
    a = adjit.zeros(5, dtype=t)
    assert a.shape == (5,) and a.numpy().shape == (5, *shape)
    assert a.numpy().dtype == t.dtype.np_dtype


# --- scalar division semantics (Warp's) --------------------------------------------------------

@adjit.kernel
def division_semantics(a: adjit.array(dtype=int), b: adjit.array(dtype=int), x: adjit.array(dtype=float),
                       y: adjit.array(dtype=float), out_i: adjit.array(dtype=int, ndim=2),
                       out_f: adjit.array(dtype=float, ndim=2), folded_i: adjit.array(dtype=int),
                       folded_f: adjit.array(dtype=float)):
    i = adjit.tid()
    out_i[i, 0] = a[i] / b[i]
    out_i[i, 1] = a[i] % b[i]
    out_i[i, 2] = a[i] // b[i]
    out_f[i, 0] = x[i] / y[i]
    out_f[i, 1] = x[i] % y[i]
    out_f[i, 2] = x[i] // y[i]
    # The same operations on literals, folded by the frontend, must agree.
    folded_i[0] = -7 / 2
    folded_i[1] = -7 % 2
    folded_i[2] = -7 // 2
    folded_i[3] = 7 / -2
    folded_i[4] = 7 % -2
    folded_i[5] = 7 // -2
    folded_f[0] = -7.5 / 2.0
    folded_f[1] = -7.5 % 2.0
    folded_f[2] = -7.5 // 2.0
    folded_f[3] = 7.5 % -2.0


def test_division_and_modulo_semantics():
    a = np.array([-7, 7, -7, 7, 6, -6, 0], np.int32)
    b = np.array([2, -2, -2, 2, 3, 4, 5], np.int32)
    x = np.array([-7.5, 7.5, -7.5, 7.5, 6.0, -0.5, 0.0], np.float32)
    y = np.array([2.0, -2.0, -2.0, 2.0, 4.0, 3.0, 5.0], np.float32)
    n = len(a)
    out_i, out_f = adjit.zeros((n, 3), dtype=int), adjit.zeros((n, 3))
    folded_i, folded_f = adjit.zeros(6, dtype=int), adjit.zeros(4)
    adjit.launch(division_semantics, dim=n, inputs=[adjit.array(a), adjit.array(b), adjit.array(x), adjit.array(y),
                                                    out_i, out_f, folded_i, folded_f])
    # As in Warp (and C): int / truncates, % takes the dividend's sign (fmod for floats); // floors.
    np.testing.assert_array_equal(out_i.numpy()[:, 0], np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(out_i.numpy()[:, 1], np.fmod(a, b))
    np.testing.assert_array_equal(out_i.numpy()[:, 2], np.floor_divide(a, b))
    np.testing.assert_array_equal(out_f.numpy()[:, 0], x / y)
    np.testing.assert_array_equal(out_f.numpy()[:, 1], np.fmod(x, y))
    np.testing.assert_array_equal(out_f.numpy()[:, 2], np.floor(x / y))
    np.testing.assert_array_equal(folded_i.numpy(), [-3, -1, -4, -3, 1, -4])
    np.testing.assert_array_equal(folded_f.numpy(), [-3.75, -1.5, -4.0, 1.5])


def _convert_through(t):
    @adjit.kernel
    def convert_through(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
        i = adjit.tid()
        out[i] = float(t(x[i]))
    return convert_through


def test_kernels_specialized_by_a_captured_type():
    # Same source text, different captured type: each must get its own code
    # (the compile cache must not hand the float32 one to the int32 one).
    xs = adjit.array(np.array([2.75, -1.5], np.float32))
    results = {}
    for t in (adjit.float32, adjit.int32, adjit.float64):
        out = adjit.zeros(2)
        adjit.launch(_convert_through(t), dim=2, inputs=[xs, out])
        results[t.name] = out.numpy().tolist()
    assert results == {"float32": [2.75, -1.5], "int32": [2.0, -1.0], "float64": [2.75, -1.5]}


def test_warps_explicit_precision_names_and_bool():
    import adjit
    assert (adjit.vec3f, adjit.mat33f, adjit.quatf, adjit.bool) == (adjit.vec3, adjit.mat33, adjit.quat, adjit.bool_)

    @adjit.kernel
    def k(v: adjit.array(dtype=adjit.vec3f), m: adjit.array(dtype=adjit.mat33f), out: adjit.array(dtype=float)):
        i = adjit.tid()
        first = adjit.bool(i == 0)
        if first:
            out[i] = v[i].x + m[i][0, 0]

    out = adjit.zeros(2)
    adjit.launch(k, dim=2, inputs=[adjit.ones(2, adjit.vec3f), adjit.ones(2, adjit.mat33f), out])
    assert out.numpy().tolist() == [2.0, 0.0]
