"""int8/16, uint8/16/32/64, float16 and bool arrays, as Warp defines them:
values against numpy (which wraps, truncates and rounds the same way)."""
import numpy as np
import pytest

import adjit as wp

INTS = [wp.int8, wp.int16, wp.int32, wp.int64, wp.uint8, wp.uint16, wp.uint32, wp.uint64]


def _int_ops(dtype):
    @wp.kernel
    def int_ops(a: wp.array(dtype=dtype), b: wp.array(dtype=dtype), out: wp.array2d(dtype=dtype),
                flags: wp.array2d(dtype=int), f: wp.array(dtype=wp.float64)):
        i = wp.tid()
        x, y = a[i], b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x / y
        out[i, 4] = x % y
        out[i, 5] = x >> dtype(1)
        out[i, 6] = x & y
        out[i, 7] = wp.min(x, y)
        out[i, 8] = wp.max(x, y)
        out[i, 9] = wp.abs(x)
        flags[i, 0] = int(x < y)
        flags[i, 1] = int(x >= y)
        flags[i, 2] = int(x == y)
        f[i] = wp.float64(x)
    return int_ops


def _c_division(x, y):
    """C's truncated division and remainder (what Warp and adjit compute), in Python ints."""
    q = abs(x) // abs(y)
    q = -q if (x < 0) != (y < 0) else q
    return q, x - q * y


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: t.name)
def test_integer_arithmetic_wraps_and_compares_as_numpy(dtype):
    info = np.iinfo(dtype.np_dtype)
    rng = np.random.default_rng(dtype.bits)
    a = rng.integers(info.min, info.max, size=64, dtype=dtype.np_dtype, endpoint=True)
    b = rng.integers(info.min, info.max, size=64, dtype=dtype.np_dtype, endpoint=True)
    a[:4] = [info.max, info.min, info.max, 7]
    b[:4] = [1, 1 if info.min == 0 else -1, info.max, 0]  # overflow, INT_MIN / -1, x / 0
    out, flags = wp.zeros((64, 10), dtype=dtype), wp.zeros((64, 3), dtype=int)
    f = wp.zeros(64, dtype=wp.float64)
    wp.launch(_int_ops(dtype), dim=64, inputs=[wp.array(a, dtype=dtype), wp.array(b, dtype=dtype)],
              outputs=[out, flags, f])
    o = out.numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o[:, 0], a + b)
        np.testing.assert_array_equal(o[:, 1], a - b)
        np.testing.assert_array_equal(o[:, 2], a * b)
    bits = dtype.bits
    for k, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if y == 0:
            q, r = 0, 0  # defined: a zero divisor gives 0
        else:
            q, r = _c_division(x, y)
        wrap = lambda v: np.array(v & ((1 << bits) - 1), dtype=np.uint64).astype(dtype.np_dtype)  # noqa: E731
        assert o[k, 3] == wrap(q) and o[k, 4] == wrap(r), (x, y, o[k, 3], o[k, 4])
    np.testing.assert_array_equal(o[:, 5], a >> 1)  # arithmetic shift for signed, logical for unsigned
    np.testing.assert_array_equal(o[:, 6], a & b)
    np.testing.assert_array_equal(o[:, 7], np.minimum(a, b))
    np.testing.assert_array_equal(o[:, 8], np.maximum(a, b))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o[:, 9], np.abs(a))
    np.testing.assert_array_equal(flags.numpy(), np.stack([a < b, a >= b, a == b], axis=1).astype(np.int32))
    np.testing.assert_array_equal(f.numpy(), a.astype(np.float64))


@wp.kernel
def conversions(x: wp.array(dtype=float), big: wp.array(dtype=wp.uint32), u8: wp.array(dtype=wp.uint8),
                i8: wp.array(dtype=wp.int8), out_f: wp.array(dtype=float), out_u: wp.array(dtype=wp.uint32),
                out_i: wp.array(dtype=wp.int64), out_u8: wp.array(dtype=wp.uint8)):
    i = wp.tid()
    out_u[i] = wp.uint32(x[i])                  # float -> unsigned
    out_f[i] = float(big[i])                    # unsigned -> float (never negative)
    out_i[2 * i] = wp.int64(big[i])             # zero-extended
    out_i[2 * i + 1] = wp.int64(i8[i])          # sign-extended
    out_u8[i] = wp.uint8(big[i])                # truncated
    out_u8[i + 2] = u8[u8[i]]                   # an index of 200 is 200 (not -56)


def test_conversions_extend_by_the_source_sign():
    big = np.array([4_000_000_000, 300], np.uint32)
    u8 = np.zeros(256, np.uint8)
    u8[:2] = [200, 3]
    u8[200], u8[3] = 9, 8
    out_f, out_u = wp.zeros(2), wp.zeros(2, dtype=wp.uint32)
    out_i, out_u8 = wp.zeros(4, dtype=wp.int64), wp.zeros(4, dtype=wp.uint8)
    wp.launch(conversions, dim=2, inputs=[wp.array(np.array([3.9, 4e9], np.float32)), wp.array(big, dtype=wp.uint32),
                                          wp.array(u8, dtype=wp.uint8), wp.array(np.array([-5, 7], np.int8), dtype=wp.int8)],
              outputs=[out_f, out_u, out_i, out_u8])
    np.testing.assert_array_equal(out_u.numpy(), [3, 4_000_000_000])
    np.testing.assert_array_equal(out_f.numpy(), big.astype(np.float32))
    np.testing.assert_array_equal(out_i.numpy(), [4_000_000_000, -5, 300, 7])
    np.testing.assert_array_equal(out_u8.numpy(), [4_000_000_000 % 256, 300 % 256, 9, 8])


@wp.kernel
def unsigned_scalar_argument(s: wp.uint64, t: wp.int16, out: wp.array(dtype=wp.uint64), o16: wp.array(dtype=wp.int16)):
    out[0] = s + wp.uint64(1)
    o16[0] = t * wp.int16(2)


def test_scalar_arguments_of_every_width():
    out, o16 = wp.zeros(1, dtype=wp.uint64), wp.zeros(1, dtype=wp.int16)
    wp.launch(unsigned_scalar_argument, dim=1, inputs=[2**64 - 2, -1234], outputs=[out, o16])
    assert out.numpy()[0] == 2**64 - 1 and o16.numpy()[0] == -2468
    with pytest.raises(wp.LaunchError, match="uint64"):
        wp.launch(unsigned_scalar_argument, dim=1, inputs=[-1, 0], outputs=[out, o16])


@wp.kernel
def literal_out_of_range(out: wp.array(dtype=wp.uint8)):
    out[0] = wp.uint8(256)


@wp.kernel
def negative_unsigned_literal(out: wp.array(dtype=wp.uint16)):
    out[0] = out[0] + wp.uint16(-1)


@pytest.mark.parametrize("kernel, message", [(literal_out_of_range, "256 does not fit in uint8"),
                                             (negative_unsigned_literal, "-1 does not fit in uint16")])
def test_literals_must_fit(kernel, message):
    with pytest.raises(wp.KernelError, match=message):
        wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=kernel.arg_types[0].dtype)])


@wp.kernel
def mixed_widths(a: wp.array(dtype=wp.uint8), b: wp.array(dtype=wp.int32)):
    b[0] = a[0] + b[0]


def test_mixed_integer_types_need_a_conversion():
    with pytest.raises(wp.KernelTypeError, match="uint8"):
        wp.launch(mixed_widths, dim=1, inputs=[wp.zeros(1, dtype=wp.uint8), wp.zeros(1, dtype=int)])


@wp.kernel
def small_vectors(v: wp.array(dtype=wp.vec3ub), w: wp.array(dtype=wp.vec2us), out: wp.array(dtype=wp.vec3ui),
                  k: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.vec3ui(wp.uint32(v[i][0]), wp.uint32(v[i].y), wp.uint32(w[i][1])) * wp.uint32(2)
    k[i] = wp.argmax(v[i])


def test_vectors_of_small_integers():
    v = np.array([[200, 3, 250], [1, 255, 0]], np.uint8)
    w = np.array([[7, 60000], [1, 2]], np.uint16)
    out, k = wp.zeros(2, dtype=wp.vec3ui), wp.zeros(2, dtype=int)
    wp.launch(small_vectors, dim=2, inputs=[wp.array(v, dtype=wp.vec3ub), wp.array(w, dtype=wp.vec2us)],
              outputs=[out, k])
    np.testing.assert_array_equal(out.numpy(), [[400, 6, 120000], [2, 510, 4]])
    np.testing.assert_array_equal(k.numpy(), [2, 1])  # unsigned comparison: 250 > 200, 255 > 1
    assert wp.vec3ui.dtype is wp.uint32 and wp.vec2h.dtype is wp.float16 and wp.mat33h.shape == (3, 3)


# --- float16 ----------------------------------------------------------------------------------

@wp.kernel
def half_math(x: wp.array(dtype=wp.float16), y: wp.array(dtype=wp.float16), out: wp.array2d(dtype=wp.float16)):
    i = wp.tid()
    a, b = x[i], y[i]
    out[i, 0] = a + b
    out[i, 1] = a * b
    out[i, 2] = a / b
    out[i, 3] = wp.sqrt(wp.abs(a))
    out[i, 4] = wp.sin(a)
    out[i, 5] = wp.float16(float(a) * 3.0)


def test_float16_arithmetic_rounds_each_operation_as_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=32).astype(np.float16)
    y = (rng.uniform(0.5, 4.0, size=32) * np.sign(rng.normal(size=32))).astype(np.float16)
    out = wp.zeros((32, 6), dtype=wp.float16)
    wp.launch(half_math, dim=32, inputs=[wp.array(x, dtype=wp.float16), wp.array(y, dtype=wp.float16)],
              outputs=[out])
    o = out.numpy()
    # + - * / and sqrt rounded once to half: numpy's float16 ops, bit for bit
    np.testing.assert_array_equal(o[:, 0], x + y)
    np.testing.assert_array_equal(o[:, 1], x * y)
    np.testing.assert_array_equal(o[:, 2], x / y)
    np.testing.assert_array_equal(o[:, 3], np.sqrt(np.abs(x)))
    np.testing.assert_allclose(o[:, 4].astype(np.float64), np.sin(x.astype(np.float64)), atol=1e-3)
    np.testing.assert_array_equal(o[:, 5], (x.astype(np.float32) * np.float32(3.0)).astype(np.float16))


@wp.kernel
def half_loss(x: wp.array(dtype=wp.float16), y: wp.array(dtype=wp.float16), total: wp.array(dtype=wp.float16)):
    i = wp.tid()
    y[i] = x[i] * x[i] * wp.float16(0.5) + wp.sin(x[i])
    total[0] += x[i]


def test_float16_gradients_and_deterministic_sums():
    x0 = np.array([0.25, -1.0, 2.0, 0.5], np.float16)
    x = wp.array(x0, dtype=wp.float16, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float16, requires_grad=True)
    total = wp.zeros(1, dtype=wp.float16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(half_loss, dim=4, inputs=[x], outputs=[y, total])
    expected_total = np.zeros(1, np.float16)
    np.add.at(expected_total, np.zeros(4, int), x0)  # thread order, rounded to half after each add
    np.testing.assert_array_equal(total.numpy(), expected_total)
    tape.backward(grads={y: np.ones(4, np.float16), total: np.ones(1, np.float16)})
    exact = x0.astype(np.float64) + np.cos(x0.astype(np.float64)) + 1.0
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), exact, rtol=2e-3, atol=2e-3)


# --- bool arrays --------------------------------------------------------------------------------

@wp.kernel
def masked(mask: wp.array(dtype=wp.bool), x: wp.array(dtype=float), y: wp.array(dtype=float),
           positive: wp.array(dtype=wp.bool)):
    i = wp.tid()
    positive[i] = x[i] > 0.0
    if mask[i]:
        y[i] = x[i] * 2.0
    else:
        y[i] = -x[i]


def test_bool_arrays_read_and_written_with_gradients_through_the_branch():
    mask = np.array([True, False, True, False])
    x = wp.array(np.array([1.0, -2.0, 0.5, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    positive = wp.zeros(4, dtype=wp.bool)
    with wp.Tape() as tape:
        wp.launch(masked, dim=4, inputs=[wp.array(mask, dtype=wp.bool), x], outputs=[y, positive])
    np.testing.assert_array_equal(positive.numpy(), [True, False, True, True])
    assert positive.numpy().dtype == np.bool_
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0, 1.0, -3.0])
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -1.0, 2.0, -1.0])


@wp.kernel
def add_to_bool(flags: wp.array(dtype=wp.bool)):
    flags[0] += True


def test_adding_into_a_bool_array_is_an_error():
    with pytest.raises(wp.KernelTypeError, match="bool array"):
        wp.launch(add_to_bool, dim=1, inputs=[wp.zeros(1, dtype=wp.bool)])
