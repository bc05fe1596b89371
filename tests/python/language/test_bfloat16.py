"""bfloat16 (Warp's ``wp.bfloat16``): storage, conversions, arithmetic and
gradients, against a numpy reference of bfloat16 rounding written here.

bfloat16 keeps float32's sign and 8-bit exponent and 7 of its 23 mantissa
bits: a significand of p = 8 bits, unit roundoff u = 2^-8. A conversion
from float32 rounds to nearest, ties to even; each arithmetic operation is
done in float32 and rounded to bfloat16 (float32's 24 bits >= 2p + 2, so
that equals rounding the exact result once for + - * / and sqrt)."""
import numpy as np
import pytest

import adjit as wp
from adjit import types as T

U = 2.0 ** -8  # bfloat16's unit roundoff


def bf16_bits_reference(x) -> np.ndarray:
    """The bfloat16 bits nearest each float32 (ties to the even pattern),
    chosen by comparing the two neighbours' distances in float64."""
    f = np.asarray(x, dtype=np.float32).ravel()
    out = np.empty(f.size, np.uint16)
    for k, v in enumerate(f):
        b = int(v.view(np.uint32))
        if np.isnan(v):
            out[k] = (b >> 16) | 0x40  # stays NaN (quiet), sign kept
            continue
        lo = b >> 16  # toward zero
        hi = lo + 1  # away from zero (0x7F80 = inf past the largest finite)
        vlo = float(np.uint32(lo << 16).view(np.float32))
        vhi = float(np.uint32(hi << 16).view(np.float32))
        if np.isinf(v):
            out[k] = lo
            continue
        dlo, dhi = abs(float(v) - vlo), abs(vhi - float(v)) if np.isfinite(vhi) else None
        if dhi is None:  # lo is the largest finite: rounding to inf at half an ulp past it
            dhi = abs(float(np.ldexp(1.0, 128) * np.sign(v)) - float(v))
        out[k] = lo if dlo < dhi or (dlo == dhi and lo % 2 == 0) else hi
    return out.reshape(np.shape(x))


def bits_to_f32(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def rounded(x) -> np.ndarray:
    """float32 values rounded to bfloat16 (as float32)."""
    return bits_to_f32(bf16_bits_reference(np.asarray(x, np.float32)))


def bits_of(a: wp.Array) -> np.ndarray:
    return a.numpy().view(np.uint16)


#: Bit patterns that stress rounding: zeros, infinities, NaNs whose payload
#: lies in the dropped bits only, ties (to even both ways), the largest
#: finite values (one rounds to inf), and subnormals.
SPECIAL = np.array([
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
    0x7FFFFFFF, 0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000,
    0xFF7FFFFF, 0x00000001, 0x00008000, 0x00018000, 0x00008001, 0x007FFFFF, 0x807F8000, 0x00400000,
], np.uint32).view(np.float32)


def random_float32(n, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(size=n).astype(np.float32),
                           rng.integers(0, 2 ** 32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)])


def test_reference_agrees_with_known_patterns():
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8 to 1 + 2^-6
    assert list(bf16_bits_reference(np.float32([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.0e38, 3.4e38]))) == \
        [0x3F80, 0x3F82, 0x7F62, 0x7F80]


# --- host ---------------------------------------------------------------------------------------

def test_host_conversion_rounds_to_nearest_even():
    x = np.concatenate([SPECIAL, random_float32(2000)])
    a = wp.array(x, dtype=wp.bfloat16)
    np.testing.assert_array_equal(bits_of(a), bf16_bits_reference(x))
    np.testing.assert_array_equal(T.float32_to_bfloat16_bits(x), bf16_bits_reference(x))


def test_host_representation_is_warps():
    a = wp.zeros(3, dtype=wp.bfloat16)
    ml = T._ml_dtypes_bfloat16()
    # ml_dtypes.bfloat16 where installed, else the uint16 bit patterns (Warp's array.numpy())
    assert a.numpy().dtype == (np.dtype(ml) if ml is not None else np.uint16)
    assert a.numpy().itemsize == 2 and wp.bfloat16.bits == 16
    # uint16 data is taken as bit patterns, as in Warp
    bits = np.array([0x3F80, 0xC040, 0x7FC0], np.uint16)
    np.testing.assert_array_equal(bits_of(wp.array(bits, dtype=wp.bfloat16)), bits)
    np.testing.assert_array_equal(bits_of(wp.full(2, 1.00390625, dtype=wp.bfloat16)), [0x3F80, 0x3F80])
    b = wp.ones(2, dtype=wp.bfloat16)
    b.fill_(-2.5)
    np.testing.assert_array_equal(bits_of(b), [0xC020, 0xC020])
    b.assign([3.0, 1.01171875])
    np.testing.assert_array_equal(bits_of(b), [0x4040, 0x3F82])
    assert float(wp.bfloat16(1.01171875)) == 1.015625
    assert wp.dtype_from_numpy(np.float16) is wp.float16 and wp.dtype_from_numpy(np.uint16) is wp.uint16


def test_without_ml_dtypes_bits_are_the_storage(monkeypatch):
    """Without ml_dtypes the host type is uint16 bits; numbers are rounded
    into it, never cast as integers."""
    bf = T.BFloat16Type.__new__(T.BFloat16Type)
    T.ScalarType.__init__(bf, "bfloat16", np.uint16, "float", 16)
    x = np.concatenate([SPECIAL, random_float32(200, seed=5)])
    np.testing.assert_array_equal(bf.host(x), bf16_bits_reference(x))
    np.testing.assert_array_equal(bf.host(np.uint16([7, 0x3F80])), [7, 0x3F80])
    assert bf(1.5) == 1.5 and bf(2.0 ** -9 + 1.0) == 1.0


# --- kernels ------------------------------------------------------------------------------------

@wp.kernel
def convert(x: wp.array(dtype=float), h: wp.array(dtype=wp.bfloat16), back: wp.array(dtype=float),
            d: wp.array(dtype=wp.float64), half: wp.array(dtype=wp.float16)):
    i = wp.tid()
    v = wp.bfloat16(x[i])
    h[i] = v
    back[i] = float(v)
    d[i] = wp.float64(v)
    half[i] = wp.float16(v)


def test_kernel_conversions_round_to_nearest_even_and_widen_exactly():
    x = np.concatenate([SPECIAL, random_float32(2000, seed=1)])
    n = x.size
    h, back = wp.zeros(n, dtype=wp.bfloat16), wp.zeros(n, dtype=float)
    d, half = wp.zeros(n, dtype=wp.float64), wp.zeros(n, dtype=wp.float16)
    wp.launch(convert, dim=n, inputs=[wp.array(x)], outputs=[h, back, d, half])
    ref = bf16_bits_reference(x)
    got = bits_of(h)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], ref[~nan])
    assert np.all(np.isnan(bits_to_f32(got[nan])))  # a NaN stays NaN (its payload is not specified)
    np.testing.assert_array_equal(back.numpy()[~nan], bits_to_f32(ref)[~nan])
    np.testing.assert_array_equal(d.numpy()[~nan], bits_to_f32(ref)[~nan].astype(np.float64))
    # bfloat16 -> float16: exact through float32, rounded once by numpy's float16
    np.testing.assert_array_equal(half.numpy()[~nan], bits_to_f32(ref)[~nan].astype(np.float16))


@wp.kernel
def bf16_math(x: wp.array(dtype=wp.bfloat16), y: wp.array(dtype=wp.bfloat16), out: wp.array2d(dtype=wp.bfloat16),
              flags: wp.array2d(dtype=int)):
    i = wp.tid()
    a, b = x[i], y[i]
    out[i, 0] = a + b
    out[i, 1] = a - b
    out[i, 2] = a * b
    out[i, 3] = a / b
    out[i, 4] = wp.sqrt(wp.abs(a))
    out[i, 5] = wp.min(a, b)
    out[i, 6] = -a
    out[i, 7] = a * wp.bfloat16(3.0) + b
    out[i, 8] = wp.sin(a)
    flags[i, 0] = int(a < b)
    flags[i, 1] = int(wp.isfinite(a * b))


def test_arithmetic_rounds_each_operation_to_bfloat16():
    rng = np.random.default_rng(3)
    n = 256
    x = rounded(rng.normal(size=n) * 4.0)
    y = rounded(rng.uniform(0.5, 4.0, size=n) * np.sign(rng.normal(size=n)))
    y[:4] = rounded([1.0e38, -3.0e38, 2.0 ** -130, 0.0])  # overflow to inf, a subnormal, a division by zero
    out, flags = wp.zeros((n, 9), dtype=wp.bfloat16), wp.zeros((n, 2), dtype=int)
    wp.launch(bf16_math, dim=n, inputs=[wp.array(x, dtype=wp.bfloat16), wp.array(y, dtype=wp.bfloat16)],
              outputs=[out, flags])
    o = bits_to_f32(bits_of(out))

    def check(column, want):
        # Exact everywhere, subnormal results included (y[2] = 2^-130 makes
        # some): the runtime's own f32 -> bf16 helper rounds them to nearest,
        # where older libgcc builds flushed them to zero.
        np.testing.assert_array_equal(o[:, column], want)

    with np.errstate(all="ignore"):
        check(0, rounded(x + y))
        check(1, rounded(x - y))
        check(2, rounded(x * y))
        check(3, rounded(x / y))
        check(4, rounded(np.sqrt(np.abs(x))))
        # min picks an operand (a select, NaN ignored as in Warp)
        np.testing.assert_array_equal(o[:, 5], np.minimum(x, y))
        check(6, -x)
        check(7, rounded(rounded(x * np.float32(3.0)) + y))
        # sin: within an ulp of bfloat16 (2u relative) of the exact value
        s = np.sin(x.astype(np.float64))
        assert np.all(np.abs(o[:, 8] - s) <= 2 * U * np.abs(s) + 2.0 ** -133)
        np.testing.assert_array_equal(flags.numpy()[:, 0], (x < y).astype(int))
        np.testing.assert_array_equal(flags.numpy()[:, 1], np.isfinite(rounded(x * y)).astype(int))


@wp.kernel
def narrow_f64(x: wp.array(dtype=wp.float64), h: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    h[i] = wp.bfloat16(x[i])


#: Every non-negative bfloat16 up to inf, increasing, as float64.
_POSITIVE_BF16 = bits_to_f32(np.arange(0x7F81)).astype(np.float64)


def bf16_bits_of_double(x: float) -> int:
    """The bfloat16 bits nearest the float64 ``x`` (ties to even), exactly:
    the two neighbours come from truncating x's bits (float64's exponent
    range covers bfloat16's subnormals), the choice from exact rationals."""
    from fractions import Fraction
    if np.isnan(x):
        return int((np.float64(x).view(np.uint64) >> np.uint64(48)) | np.uint64(0x40))
    sign = 0x8000 if np.signbit(x) else 0
    a = abs(x)
    lo = int(np.searchsorted(_POSITIVE_BF16, a, side="right")) - 1
    if lo == 0x7F80 or bits_to_f32([lo])[0] == a:
        return sign | lo
    vlo = Fraction(float(bits_to_f32([lo])[0]))
    vhi = Fraction(float(bits_to_f32([lo + 1])[0])) if lo + 1 < 0x7F80 else Fraction(2) ** 128
    d_lo, d_hi = Fraction(a) - vlo, vhi - Fraction(a)
    return sign | (lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else lo + 1)


def test_float64_to_bfloat16_rounds_once():
    """float64 -> bfloat16 rounds the double itself, not its float32
    rounding: just past a bfloat16 tie by less than a float32 ulp (where
    rounding through float32 would make a tie and pick the even side), at
    ties, across subnormals, overflow and NaN."""
    tie = 1.0 + 2.0 ** -8  # halfway between 1 and 1 + 2^-7
    x = np.array([tie, tie + 2.0 ** -30, tie - 2.0 ** -30, -(tie + 2.0 ** -40), 1.0 + 3 * 2.0 ** -8,
                  1.0 + 3 * 2.0 ** -8 - 2.0 ** -35, 2.0 ** -130 * (1 + 2.0 ** -9), 2.0 ** -134,
                  2.0 ** -134 * (1 + 2.0 ** -30), 2.0 ** -300, -2.0 ** -300, 3.3e38, 3.4e38, 1e300,
                  -np.inf, np.nan, 0.0, -0.0])
    rng = np.random.default_rng(11)
    x = np.concatenate([x, rng.normal(size=64) * 10.0 ** rng.integers(-45, 38, size=64)])
    h = wp.zeros(x.size, dtype=wp.bfloat16)
    wp.launch(narrow_f64, dim=x.size, inputs=[wp.array(x, dtype=wp.float64)], outputs=[h])
    np.testing.assert_array_equal(bits_of(h), [bf16_bits_of_double(float(v)) for v in x])


def test_gradient_seeds_are_numbers_without_ml_dtypes(monkeypatch):
    """With uint16 as the host storage (no ml_dtypes), a numeric seed given
    to backward is rounded to bfloat16, never stored as integer bits."""
    monkeypatch.setattr(wp.bfloat16, "np_dtype", np.dtype(np.uint16))
    x0 = rounded([0.25, -1.0, 2.0, 3.0])
    x = wp.array(x0, dtype=wp.bfloat16, requires_grad=True)
    y = wp.zeros(4, dtype=wp.bfloat16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square_bf16, dim=4, inputs=[x], outputs=[y])
    tape.backward(grads={y: np.full(4, 1.5)})
    np.testing.assert_array_equal(bits_to_f32(bits_of(x.grad)), rounded(3.0 * x0))


@wp.kernel
def square_bf16(x: wp.array(dtype=wp.bfloat16), y: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    y[i] = x[i] * x[i]


# --- gradients ----------------------------------------------------------------------------------

@wp.kernel
def bf16_loss(x: wp.array(dtype=wp.bfloat16), w: wp.bfloat16, y: wp.array(dtype=wp.bfloat16),
              total: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    y[i] = x[i] * x[i] * w + wp.sin(x[i])
    total[0] += x[i]


def _f64_loss(x, w):
    return x * x * w + np.sin(x), np.sum(x)


#: The derivative 2 w x + cos(x) + 1 of y_i + total along x_i takes about 4
#: rounded bfloat16 operations (the adjoint's products and sums), each off by
#: at most u relative, so the result is within 4u of the sum of its terms'
#: magnitudes (|2 w x| + |cos x| + 1); the float64 central difference
#: (h = 1e-6 on values of order 1) is exact to ~1e-9 there.
GRAD_TOL = 4 * U


def test_reverse_gradient_against_float64_differences():
    x0 = rounded([0.25, -1.0, 2.0, 0.5, -2.75, 1.5, 3.0, -0.125])
    w = 0.5
    n = x0.size
    x = wp.array(x0, dtype=wp.bfloat16, requires_grad=True)
    y = wp.zeros(n, dtype=wp.bfloat16, requires_grad=True)
    total = wp.zeros(1, dtype=wp.bfloat16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(bf16_loss, dim=n, inputs=[x, w], outputs=[y, total])
    # values: per-op bfloat16 rounding, adds into total in thread order
    xf = x0.astype(np.float32)
    np.testing.assert_array_equal(bits_to_f32(bits_of(y)),
                                  rounded(rounded(rounded(xf * xf) * np.float32(w)) + rounded(np.sin(xf))))
    acc = np.float32(0.0)
    for v in xf:
        acc = rounded(acc + v)[()]
    assert bits_to_f32(bits_of(total))[0] == acc
    tape.backward(grads={y: np.ones(n), total: np.ones(1)})
    grad = bits_to_f32(bits_of(x.grad)).astype(np.float64)
    h = 1e-6
    xd = x0.astype(np.float64)
    fd = np.array([(sum(map(np.sum, _f64_loss(xd + h * e, w))) - sum(map(np.sum, _f64_loss(xd - h * e, w))))
                   / (2 * h) for e in np.eye(n)])
    scale = np.abs(2 * w * xd) + np.abs(np.cos(xd)) + 1.0
    assert np.all(np.abs(grad - fd) <= GRAD_TOL * scale), (grad, fd)


def test_forward_tangent_against_float64_differences():
    x0 = rounded([0.25, -1.0, 2.0, 0.5, -2.75, 1.5])
    w = 0.5
    n = x0.size
    v = rounded([1.0, -0.5, 0.25, 2.0, 1.0, -1.0])
    x = wp.array(x0, dtype=wp.bfloat16)
    y, total = wp.zeros(n, dtype=wp.bfloat16), wp.zeros(1, dtype=wp.bfloat16)
    ty, ttotal = wp.jvp(bf16_loss, n, [x, w], [wp.array(v, dtype=wp.bfloat16)], [y, total])
    xd, vd = x0.astype(np.float64), v.astype(np.float64)
    h = 1e-6
    (yp, tp), (ym, tm) = _f64_loss(xd + h * vd, w), _f64_loss(xd - h * vd, w)
    fd_y, fd_t = (yp - ym) / (2 * h), (tp - tm) / (2 * h)
    got_y = bits_to_f32(bits_of(ty)).astype(np.float64)
    assert np.all(np.abs(got_y - fd_y) <= GRAD_TOL * (np.abs(2 * w * xd) + np.abs(np.cos(xd))) * np.abs(vd))
    # the total's tangent sums n rounded terms: n u relative to the sum of magnitudes
    got_t = float(bits_to_f32(bits_of(ttotal))[0])
    assert abs(got_t - fd_t) <= n * U * np.sum(np.abs(vd))


# --- bad inputs ---------------------------------------------------------------------------------

@wp.kernel
def bf16_and(x: wp.array(dtype=wp.bfloat16)):
    wp.atomic_and(x, 0, wp.bfloat16(1.0))


def test_integer_only_operations_are_located_errors():
    with pytest.raises(wp.KernelTypeError, match="atomic_and") as e:
        wp.launch(bf16_and, dim=1, inputs=[wp.zeros(1, dtype=wp.bfloat16)])
    assert "test_bfloat16.py" in str(e.value)


def test_bfloat16_array_of_wrong_dtype_is_refused():
    with pytest.raises(wp.LaunchError, match="must be an array of bfloat16, got an array of float16"):
        wp.launch(bf16_and, dim=1, inputs=[wp.zeros(1, dtype=wp.float16)])
