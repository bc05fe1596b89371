"""Idioms of real Warp code (issue 26, item 3), each against Warp's semantics."""
import typing

import numpy as np
import pytest

import adjit as wp
import adjit.testing  # noqa: F401 (wp.testing.check_gradients)


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


# -- operators: @, scalar / vector, % and bitwise on vectors, conversions, wp.len ---------------------

@wp.kernel
def _matmul(m: wp.array(dtype=wp.mat33d), v: wp.array(dtype=wp.vec3d), mv: wp.array(dtype=wp.vec3d),
            vm: wp.array(dtype=wp.vec3d), mm: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    mv[i] = m[i] @ v[i]
    vm[i] = v[i] @ m[i]
    mm[i] = m[i] @ m[i]


def test_matmul_operator_values_and_gradients():
    rng = np.random.default_rng(1)
    m0, v0 = rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3))
    m = wp.array(m0, dtype=wp.mat33d, requires_grad=True)
    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    outs = [wp.zeros(2, dtype=wp.vec3d, requires_grad=True), wp.zeros(2, dtype=wp.vec3d, requires_grad=True),
            wp.zeros(2, dtype=wp.mat33d, requires_grad=True)]
    wp.launch(_matmul, dim=2, inputs=[m, v, *outs])
    np.testing.assert_allclose(outs[0].numpy(), np.einsum("nij,nj->ni", m0, v0), rtol=1e-12)
    np.testing.assert_allclose(outs[1].numpy(), np.einsum("ni,nij->nj", v0, m0), rtol=1e-12)
    np.testing.assert_allclose(outs[2].numpy(), m0 @ m0, rtol=1e-12)
    wp.testing.check_gradients(_matmul, dim=2, inputs=[m, v], outputs=outs)


def test_matmul_needs_a_matrix():
    @wp.kernel
    def vv(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        out[0] = (a[0] @ a[0])[0]

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms.py:\d+: @ multiplies matrices .*got vec3 and vec3"):
        wp.launch(vv, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=float)])


@wp.kernel
def _scalar_over(s: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d),
                 sv: wp.array(dtype=wp.vec3d), sm: wp.array(dtype=wp.mat22d), dv: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    sv[i] = s[i] / v[i]
    sm[i] = wp.div(s[i], m[i])
    dv[i] = wp.div(wp.float64(2.0), v[i])


def test_scalar_divided_by_vector_and_matrix():
    s0 = np.array([1.5, -2.0])
    v0 = np.array([[0.5, 2.0, -4.0], [1.25, -0.75, 3.0]])
    m0 = np.array([[[1.0, 2.0], [-0.5, 4.0]], [[3.0, -1.5], [0.25, 2.5]]])
    s = wp.array(s0, dtype=wp.float64, requires_grad=True)
    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    m = wp.array(m0, dtype=wp.mat22d, requires_grad=True)
    outs = [wp.zeros(2, dtype=wp.vec3d, requires_grad=True), wp.zeros(2, dtype=wp.mat22d, requires_grad=True),
            wp.zeros(2, dtype=wp.vec3d, requires_grad=True)]
    wp.launch(_scalar_over, dim=2, inputs=[s, v, m, *outs])
    np.testing.assert_array_equal(outs[0].numpy(), s0[:, None] / v0)
    np.testing.assert_array_equal(outs[1].numpy(), s0[:, None, None] / m0)
    np.testing.assert_array_equal(outs[2].numpy(), 2.0 / v0)
    wp.testing.check_gradients(_scalar_over, dim=2, inputs=[s, v, m], outputs=outs)


@wp.kernel
def _integer_vectors(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.vec3i), out: wp.array(dtype=wp.vec3i)):
    x = a[0]
    y = b[0]
    out[0] = x & y
    out[1] = x | y
    out[2] = x ^ y
    out[3] = ~x
    out[4] = x << y
    out[5] = x >> y
    out[6] = x % y
    out[7] = wp.bit_and(x, y)
    z = x
    z ^= y
    out[8] = z


def test_bitwise_and_mod_on_integer_vectors():
    x = np.array([12, -10, 7], np.int32)
    y = np.array([10, 3, 40], np.int32)  # a shift by 40 >= 32 bits: 0 (<<), the sign (>>), never undefined
    out = wp.zeros(9, dtype=wp.vec3i)
    wp.launch(_integer_vectors, dim=1, inputs=[wp.array([x], dtype=wp.vec3i), wp.array([y], dtype=wp.vec3i), out])
    got = out.numpy()
    np.testing.assert_array_equal(got[0], x & y)
    np.testing.assert_array_equal(got[1], x | y)
    np.testing.assert_array_equal(got[2], x ^ y)
    np.testing.assert_array_equal(got[3], ~x)
    np.testing.assert_array_equal(got[4], [12 << 10, -10 << 3, 0])
    np.testing.assert_array_equal(got[5], [12 >> 10, -10 >> 3, 0])
    np.testing.assert_array_equal(got[6], np.fmod(x, y))  # C's %: the dividend's sign, as Warp
    np.testing.assert_array_equal(got[7], x & y)
    np.testing.assert_array_equal(got[8], x ^ y)


def test_bitwise_on_float_vectors_is_an_error():
    @wp.kernel
    def bad(a: wp.array(dtype=wp.vec3)):
        a[0] = a[0] & a[0]

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms.py:\d+: & "):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3)])


@wp.kernel
def _float_mod(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = wp.mod(a[i], b[i])


def test_mod_on_float_vectors():
    a0 = np.array([[5.5, -7.25, 3.0]])
    b0 = np.array([[2.0, 2.5, -1.75]])
    a = wp.array(a0, dtype=wp.vec3d, requires_grad=True)
    b = wp.array(b0, dtype=wp.vec3d, requires_grad=True)
    out = wp.zeros(1, dtype=wp.vec3d, requires_grad=True)
    wp.launch(_float_mod, dim=1, inputs=[a, b, out])
    np.testing.assert_array_equal(out.numpy(), np.fmod(a0, b0))
    wp.testing.check_gradients(_float_mod, dim=1, inputs=[a, b], outputs=[out])


@wp.kernel
def _conversions(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22), vi: wp.array(dtype=wp.vec3i),
                 vf: wp.array(dtype=wp.vec3), md: wp.array(dtype=wp.mat22d), back: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    vi[i] = wp.vec3i(v[i])
    vf[i] = wp.vec3(v[i])
    md[i] = wp.mat22d(m[i])
    back[i] = wp.vec3d(wp.vec3i(v[i])) + wp.vec3d(vf[i])


def test_vector_and_matrix_conversions():
    v0 = np.array([[1.7, -2.5, 3.2]])
    m0 = np.array([[[1.5, -2.0], [0.25, 8.0]]], np.float32)
    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    m = wp.array(m0, dtype=wp.mat22, requires_grad=True)
    vi, vf = wp.zeros(1, dtype=wp.vec3i), wp.zeros(1, dtype=wp.vec3, requires_grad=True)
    md = wp.zeros(1, dtype=wp.mat22d, requires_grad=True)
    back = wp.zeros(1, dtype=wp.vec3d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_conversions, dim=1, inputs=[v, m, vi, vf, md, back])
    np.testing.assert_array_equal(vi.numpy(), [[1, -2, 3]])  # toward zero, as C and Warp
    np.testing.assert_array_equal(vf.numpy(), v0.astype(np.float32))
    np.testing.assert_array_equal(md.numpy(), m0.astype(np.float64))
    # d back / d v = 0 (through the ints) + 1 (through float32); d md / d m = 1.
    tape.backward(grads={back: np.ones((1, 3)), md: np.ones((1, 2, 2))})
    np.testing.assert_array_equal(v.grad.numpy(), np.ones((1, 3)))
    np.testing.assert_array_equal(m.grad.numpy(), np.ones((1, 2, 2), np.float32))


@wp.kernel
def _lengths(a: wp.array(dtype=float), b: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    out[0] = wp.len(a)
    out[1] = wp.len(b)
    out[2] = wp.len(wp.vec3(1.0, 2.0, 3.0))
    out[3] = wp.len(wp.mat22(1.0, 2.0, 3.0, 4.0))


def test_wp_len():
    out = wp.zeros(4, dtype=int)
    wp.launch(_lengths, dim=1, inputs=[wp.zeros(5, dtype=float), wp.zeros((4, 7), dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [5, 4, 3, 2])
    assert wp.len(wp.vec4(1.0, 2.0, 3.0, 4.0)) == 4 and wp.len(wp.zeros(6, dtype=float)) == 6


# -- keyword construction ---------------------------------------------------------------------------

@wp.kernel
def _keyword_transforms(p: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat), out: wp.array(dtype=wp.transform),
                        outd: wp.array(dtype=wp.transformd), sv: wp.array(dtype=wp.spatial_vectord)):
    i = wp.tid()
    out[0] = wp.transform(p=p[i], q=q[i])
    out[1] = wp.transform(p[i], q=q[i])
    out[2] = wp.transform(q=q[i])
    out[3] = wp.transform(p=p[i])
    out[4] = wp.transform(p[i])
    outd[0] = wp.transform(wp.vec3d(p[i]), wp.quatd(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0),
                                                   wp.float64(1.0)), dtype=wp.float64)
    sv[0] = wp.spatial_vector(wp.vec3d(p[i]), wp.vec3d(p[i]) * wp.float64(2.0), dtype=wp.float64)


def test_transform_keywords_in_kernels():
    p0 = np.array([[1.0, 2.0, 3.0]], np.float32)
    q0 = np.array([[0.0, 0.6, 0.0, 0.8]], np.float32)
    out = wp.zeros(5, dtype=wp.transform)
    outd = wp.zeros(1, dtype=wp.transformd)
    sv = wp.zeros(1, dtype=wp.spatial_vectord)
    wp.launch(_keyword_transforms, dim=1, inputs=[wp.array(p0, dtype=wp.vec3), wp.array(q0, dtype=wp.quat), out,
                                                  outd, sv])
    pq = np.concatenate([p0[0], q0[0]])
    identity = np.array([0.0, 0.0, 0.0, 1.0], np.float32)
    np.testing.assert_array_equal(out.numpy(), [pq, pq, np.concatenate([[0, 0, 0], q0[0]]),
                                                np.concatenate([p0[0], identity]), np.concatenate([p0[0], identity])])
    np.testing.assert_array_equal(outd.numpy(), [np.concatenate([p0[0], identity])])
    np.testing.assert_array_equal(sv.numpy(), [np.concatenate([p0[0], 2 * p0[0]])])


def test_transform_keywords_on_the_host():
    t = wp.transform(p=wp.vec3(1.0, 2.0, 3.0), q=wp.quat(0.0, 0.6, 0.0, 0.8))
    np.testing.assert_array_equal(t, np.array([1, 2, 3, 0, 0.6, 0, 0.8], np.float32))
    np.testing.assert_array_equal(wp.transform(q=wp.quat(0.0, 0.6, 0.0, 0.8)),
                                  np.array([0, 0, 0, 0, 0.6, 0, 0.8], np.float32))
    np.testing.assert_array_equal(wp.transform((1.0, 2.0, 3.0), q=wp.quat_identity()), [1, 2, 3, 0, 0, 0, 1])
    np.testing.assert_array_equal(wp.transform(p=(4.0, 5.0, 6.0)), [4, 5, 6, 0, 0, 0, 1])
    with pytest.raises(TypeError, match=r"takes p and q once each"):
        wp.transform((1.0, 2.0, 3.0), p=(1.0, 2.0, 3.0))


def test_bad_constructor_keywords_are_located_errors():
    @wp.kernel
    def bad(out: wp.array(dtype=wp.vec3)):
        out[0] = wp.vec3(1.0, 2.0, 3.0, length=3)

    with pytest.raises(wp.KernelSyntaxError, match=r"test_warp_idioms.py:\d+: vec3\(\): keyword length is not taken "
                                                   r"\(it takes dtype\)"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3)])


# -- assert ------------------------------------------------------------------------------------------

@wp.kernel
def _asserting(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    assert x[i] > 0.0, "x must be positive"
    y[i] = x[i] * x[i]


def test_assert_is_checked_in_debug_mode_only(monkeypatch):
    x = wp.array([1.0, -2.0, 3.0, -4.0], dtype=float)
    y = wp.zeros(4, dtype=float)
    wp.launch(_asserting, dim=4, inputs=[x, y])  # release: skipped, as Warp
    np.testing.assert_array_equal(y.numpy(), [1.0, 4.0, 9.0, 16.0])
    monkeypatch.setattr(wp.config, "mode", "debug")
    y.zero_()
    with pytest.raises(wp.KernelAssertionError) as info:
        wp.launch(_asserting, dim=4, inputs=[x, y])
    err = info.value
    assert isinstance(err, AssertionError) and err.thread == (1,) and err.kernel == "_asserting"
    line = open(__file__).read().splitlines().index('    assert x[i] > 0.0, "x must be positive"') + 1
    assert err.lineno == line
    assert str(err) == (f"{__file__}:{line}: kernel '_asserting': assert x[i] > 0.0, 'x must be positive' failed "
                        "(thread 1)\n    assert x[i] > 0.0, \"x must be positive\"")
    np.testing.assert_array_equal(y.numpy(), [1.0, 4.0, 9.0, 16.0])  # the threads went on


def test_assert_in_debug_mode_keeps_gradients(monkeypatch):
    monkeypatch.setattr(wp.config, "mode", "debug")
    x = wp.array([0.5, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_asserting, dim=3, inputs=[x, y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 4.0, 6.0])  # d(x^2)/dx = 2x


def test_assert_message_must_be_a_literal():
    @wp.kernel
    def bad(x: wp.array(dtype=float)):
        assert x[0] > 0.0, x[0]

    with pytest.raises(wp.KernelSyntaxError, match=r"test_warp_idioms.py:\d+: an assert's message in a kernel must "
                                                   "be a string literal"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=float)])


# -- where's conditions, Optional annotations, empty structs -----------------------------------------

@wp.kernel
def _where_conditions(flags: wp.array(dtype=wp.int64), maybe: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.where(flags[i], 1.0, 2.0) + wp.where(maybe, 10.0, 20.0) + wp.select(flags[i], 100.0, 200.0)


def test_where_takes_integer_and_array_conditions():
    out = wp.zeros(3, dtype=float)
    flags = wp.array([0, 7, -1], dtype=wp.int64)
    wp.launch(_where_conditions, dim=3, inputs=[flags, None, out])
    np.testing.assert_array_equal(out.numpy(), [2 + 20 + 100, 1 + 20 + 200, 1 + 20 + 200])
    wp.launch(_where_conditions, dim=3, inputs=[flags, wp.zeros(1, dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [2 + 10 + 100, 1 + 10 + 200, 1 + 10 + 200])


def test_where_refuses_a_float_condition():
    @wp.kernel
    def bad(x: wp.array(dtype=float)):
        x[0] = wp.where(x[0], 1.0, 2.0)

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms.py:\d+: .*where\(\) needs a bool condition"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=float)])


@wp.struct
class _MaybeState:
    scale: float
    w: wp.array(dtype=float) | None


@wp.func
def _weight(w: typing.Optional[wp.array(dtype=float)], i: int) -> float:
    if w:
        return w[i]
    return 1.0


@wp.kernel
def _optional_annotations(s: _MaybeState, extra: wp.array(dtype=float) | None, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = _weight(s.w, i) * s.scale + _weight(extra, i)


def test_optional_and_union_annotations():
    assert (wp.array(dtype=float) | None) == typing.Optional[wp.array(dtype=float)]
    s = _MaybeState()
    s.scale = 3.0
    out = wp.zeros(2, dtype=float)
    wp.launch(_optional_annotations, dim=2, inputs=[s, None, out])
    np.testing.assert_array_equal(out.numpy(), [4.0, 4.0])
    s.w = wp.array([2.0, 5.0], dtype=float)
    wp.launch(_optional_annotations, dim=2, inputs=[s, wp.array([0.5, 0.25], dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [6.5, 15.25])


@wp.struct
class _Nothing:
    pass


@wp.func
def _doubled(e: _Nothing, x: float) -> float:
    return 2.0 * x


@wp.kernel
def _empty_struct(e: _Nothing, out: wp.array(dtype=float)):
    local = _Nothing()
    out[0] = _doubled(e, 1.5) + _doubled(local, 0.25)


def test_empty_struct():
    out = wp.zeros(1, dtype=float)
    wp.launch(_empty_struct, dim=1, inputs=[_Nothing(), out])
    assert out.numpy()[0] == 3.5
    with pytest.raises(TypeError, match="arrays of _Nothing, a struct with no fields, are not supported"):
        wp.zeros(3, dtype=_Nothing)


# -- a @func that falls off its end ------------------------------------------------------------------

@wp.func
def _square_if_positive(x: float) -> float:
    if x > 0.0:
        return x * x


@wp.func
def _first_positive(a: wp.array(dtype=float), n: int) -> wp.vec2:
    for i in range(n):
        if a[i] > 0.0:
            return wp.vec2(a[i], float(i))


@wp.kernel
def _falling_off(x: wp.array(dtype=float), y: wp.array(dtype=float), first: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    y[i] = _square_if_positive(x[i])
    if i == 0:
        first[0] = _first_positive(x, 2)
        first[1] = _first_positive(x, 4)


def test_func_falling_off_its_end_returns_zero():
    # As Warp: a function with a declared result returns its zero where it falls off the end.
    x = wp.array([-1.0, -2.0, 3.0, 0.5], dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    first = wp.zeros(2, dtype=wp.vec2)
    with wp.Tape() as tape:
        wp.launch(_falling_off, dim=4, inputs=[x, y, first])
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 9.0, 0.25])
    np.testing.assert_array_equal(first.numpy(), [[0.0, 0.0], [3.0, 2.0]])
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 6.0, 1.0])  # 2x where it returned x^2, else 0
