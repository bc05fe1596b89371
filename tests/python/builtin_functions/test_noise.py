"""Perlin noise in kernels (noise, pnoise, curlnoise) and block_dim().

Values are checked bitwise against constants Warp 1.19 produced and against
a float64 numpy model of the documented algorithm (below); gradients, in
reverse and forward mode, against float64 central differences of the model.
"""
import itertools
import os

import numpy as np
import pytest

import adjit as wp

THIS_FILE = os.path.realpath(__file__)

# --- a float64 model: Warp's lattice hash and gradients, Perlin's blend -----------------------

PRIMES = np.array([73856093, 19349663, 53471161, 10000019], np.uint32)
CURL_OFFSETS = (10019689, 13112221)


def pcg(x):
    """The PCG hash on uint32 arrays (wrapping)."""
    with np.errstate(over="ignore"):
        s = np.asarray(x, np.uint32) * np.uint32(747796405) + np.uint32(2891336453)
        w = ((s >> ((s >> np.uint32(28)) + np.uint32(4))) ^ s) * np.uint32(277803737)
        return (w >> np.uint32(22)) ^ w


def rand_init(seed):
    return pcg(np.asarray(seed, np.int64).astype(np.uint32))


def lattice_gradient(state, corner):
    """The gradient at integer points ``corner`` (one int64 array per axis)."""
    n = len(corner)
    c = [np.asarray(ck, np.int64).astype(np.uint32) for ck in corner]
    h = c[-1] * PRIMES[n - 1] + state
    for k in range(n - 1):
        h = (c[k] * PRIMES[k]) ^ h
    us = []
    for _ in range(n):
        h = pcg(h)
        us.append((h >> np.uint32(8)).astype(np.float64) * 2.0 ** -24)
    if n == 1:
        return [2.0 * us[0] - 1.0]
    comps = [u - 0.5 for u in us]
    length = np.sqrt(sum(u * u for u in comps))
    return [np.where(length > 0, u / np.where(length > 0, length, 1.0), 0.0) for u in comps]


def fade(t):
    return t ** 3 * (t * (6 * t - 15) + 10)


def fade_slope(t):
    return 30 * t ** 2 * (t * (t - 2) + 1)


def noise64(state, x, periods=None):
    """(value, gradient list) of the noise at points x (shape (N, n))."""
    x = np.asarray(x, np.float64)
    n = x.shape[1]
    fl = np.floor(x)
    f = x - fl
    i0 = fl.astype(np.int64)
    i1 = i0 + 1
    if periods is not None:
        i0 = np.mod(i0, periods)
        i1 = np.mod(i0 + 1, periods)
    level = {}
    for bits in itertools.product((0, 1), repeat=n):
        g = lattice_gradient(state, [(i1 if b else i0)[:, k] for k, b in enumerate(bits)])
        level[bits] = (sum((f[:, k] - b) * g[k] for k, b in enumerate(bits)), g)
    for k in range(n):
        s, ds = fade(f[:, k]), fade_slope(f[:, k])
        blended = {}
        for rest in itertools.product((0, 1), repeat=n - 1 - k):
            (a, ga), (b, gb) = level[(0,) + rest], level[(1,) + rest]
            grad = [ga[j] + (gb[j] - ga[j]) * s + ((b - a) * ds if j == k else 0.0) for j in range(n)]
            blended[rest] = (a + (b - a) * s, grad)
        level = blended
    return level[()]


def curl64(state, x, octaves=1, lacunarity=2.0, gain=0.5, float32_points=False):
    """curlnoise at points x (shape (N, n)): (N, 2) for n = 2, else (N, 3).
    ``float32_points``: each octave's point freq * x rounded as the kernel
    rounds it (in float32: the largest error, for values; not for
    differences)."""
    x = np.asarray(x, np.float64)
    n = x.shape[1]
    potentials = 1 if n == 2 else 3
    sums = np.zeros((potentials, n, len(x)))
    freq = weight = 1.0
    for _ in range(octaves):
        point = freq * x
        if float32_points:
            point = (np.float32(freq) * x.astype(np.float32)).astype(np.float64)
        for p in range(potentials):
            if p:
                with np.errstate(over="ignore"):
                    state = pcg(state + pcg(CURL_OFFSETS[p - 1]))  # rand_init(state, offset)
            sums[p] += weight * np.array(noise64(state, point)[1])
        freq = np.float32(freq) * np.float32(lacunarity) if float32_points else freq * lacunarity
        weight *= gain
    if n == 2:
        return np.stack([-sums[0][1], sums[0][0]], axis=1)
    d1, d2, d3 = sums
    return np.stack([d3[1] - d2[2], d1[2] - d3[0], d2[0] - d1[1]], axis=1)


# --- every field at once --------------------------------------------------------------------

@wp.kernel
def every_field(seeds: wp.array(dtype=int), pts: wp.array(dtype=wp.vec4), periods: wp.array2d(dtype=int),
                out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seeds[i])
    p = pts[i]
    x2 = wp.vec2(p[0], p[1])
    x3 = wp.vec3(p[0], p[1], p[2])
    out[i, 0] = wp.noise(s, p[0])
    out[i, 1] = wp.noise(s, x2)
    out[i, 2] = wp.noise(s, x3)
    out[i, 3] = wp.noise(s, p)
    a = wp.vec4(wp.abs(p[0]), wp.abs(p[1]), wp.abs(p[2]), wp.abs(p[3]))
    out[i, 4] = wp.pnoise(s, a[0], periods[i, 0])
    out[i, 5] = wp.pnoise(s, wp.vec2(a[0], a[1]), periods[i, 0], periods[i, 1])
    out[i, 6] = wp.pnoise(s, wp.vec3(a[0], a[1], a[2]), periods[i, 0], periods[i, 1], periods[i, 2])
    out[i, 7] = wp.pnoise(s, a, periods[i, 0], periods[i, 1], periods[i, 2], periods[i, 3])
    c2 = wp.curlnoise(s, x2)
    c3 = wp.curlnoise(s, x3)
    c4 = wp.curlnoise(s, p)
    m2 = wp.curlnoise(s, x2, wp.uint32(4), 1.7, 0.6)
    m3 = wp.curlnoise(s, x3, wp.uint32(3), 2.0, 0.5)
    m4 = wp.curlnoise(s, p, wp.uint32(3), 2.3, 0.45)
    for k in range(2):
        out[i, 8 + k] = c2[k]
    for k in range(3):
        out[i, 10 + k] = c3[k]
        out[i, 13 + k] = c4[k]
        out[i, 18 + k] = m3[k]
        out[i, 21 + k] = m4[k]
    out[i, 16] = m2[0]
    out[i, 17] = m2[1]


def run_every_field(seeds, pts, periods):
    out = wp.zeros((len(seeds), 24), dtype=float)
    wp.launch(every_field, dim=len(seeds), inputs=[wp.array(np.asarray(seeds, np.int32), dtype=int),
                                                    wp.array(np.asarray(pts, np.float32), dtype=wp.vec4),
                                                    wp.array(np.asarray(periods, np.int32), dtype=int)],
              outputs=[out])
    return out.numpy()


def model_every_field(seeds, pts, periods):
    """The columns of every_field from the float64 model."""
    state = rand_init(seeds)
    p = np.asarray(pts, np.float32).astype(np.float64)
    a = np.abs(p)
    f32 = lambda v: float(np.float32(v))  # the kernel's float32 lacunarity and gain
    cols = [noise64(state, p[:, :n])[0] for n in (1, 2, 3, 4)]
    cols += [noise64(state, a[:, :n], np.asarray(periods)[:, :n])[0] for n in (1, 2, 3, 4)]
    vecs = [curl64(state, p[:, :2]), curl64(state, p[:, :3]), curl64(state, p),
            curl64(state, p[:, :2], 4, f32(1.7), f32(0.6), True), curl64(state, p[:, :3], 3, 2.0, 0.5, True),
            curl64(state, p, 3, f32(2.3), f32(0.45), True)]
    return np.column_stack(cols + vecs)


SEEDS = [42, -7, 123456789, 2024]
POINTS = [[0.3, 1.7, -2.25, 5.5], [-3.6, 0.45, 7.125, -0.8], [12.9, -40.2, 3.3, 0.05], [0.5, 0.5, 0.5, 0.5]]
PERIODS = [[4, 3, 5, 2], [2, 7, 3, 4], [5, 6, 1, 3], [1, 2, 3, 4]]
#: every_field's outputs for SEEDS, POINTS, PERIODS from Warp 1.19.0 on the
#: CPU (the same kernel launched by hand with ``import warp as wp``), as
#: float32 bit patterns.
WARP_1_19 = np.array([
    [0x3e1b144c, 0x3e60d646, 0x3cf2a2b0, 0x3d15f0ee, 0x3e1b144c, 0x3e60d646, 0xbdf8a472, 0xbc49d9b0, 0xbe81a20c,
     0x3f961c06, 0x3eb99478, 0xbf1d12dc, 0xbdbc25d0, 0x3efcbe0e, 0xbf0b1058, 0x3dd948f4, 0xbe42a9b8, 0x3f44040c,
     0x3efeb9de, 0x3eab6742, 0xbf2c2eee, 0x3f23cb12, 0xbf100b71, 0x3f181172],
    [0xbde52c23, 0x3e9b2be0, 0x3e8ba73a, 0xbe46367f, 0xbd436200, 0xbcb6d320, 0xbe57ee4d, 0x3e9a0bf8, 0x3f6f9912,
     0x3f080ab0, 0x3e52b2ff, 0x3e5d6695, 0xbf0dfd4e, 0xbf9318aa, 0xbf314e14, 0xbf9e3b30, 0x3fe62742, 0x3ed84766,
     0xbe4d8432, 0x3ecd8115, 0xbf861946, 0xbf9d14cc, 0xbf8d9a7f, 0xbf3876ee],
    [0x3bd4d480, 0xbe21ab20, 0xbd01b329, 0x3d8189b4, 0xbc3151c0, 0xbe2b9b77, 0x3e283526, 0x3e279a24, 0xbe573c24,
     0x3d8ef610, 0xbe115b48, 0xbf0122b8, 0x3bcf7580, 0xbe7d79b8, 0xbf92e1e4, 0xbe6cec84, 0xbec0572a, 0xbec1c69b,
     0x3ccf4850, 0xbfad178b, 0x3e194a60, 0xbf504613, 0xbf9eb1f7, 0xbf73622f],
    [0x3e40c72c, 0xbc096088, 0xbe75b126, 0xbe83f5e4, 0x00000000, 0xbedffa08, 0xbe791b50, 0xbeb7f557, 0x3e659938,
     0x3f9e78bc, 0xbf51b858, 0x3e89145b, 0x3f9f0421, 0x3e6231f7, 0x3f75d3e4, 0x3f6f6fcc, 0x3ed0622c, 0x3fe23cd1,
     0xbf881e5a, 0x3dad8b90, 0x3f489b3d, 0xbe8086b2, 0x3f16cdde, 0x3f327022],
], dtype=np.uint32).view(np.float32)


def test_fields_are_warps_bit_for_bit():
    got = run_every_field(SEEDS, POINTS, PERIODS)
    np.testing.assert_array_equal(got.view(np.uint32), WARP_1_19.view(np.uint32))


def test_fields_match_the_float64_model():
    rng = np.random.default_rng(3)
    n = 500
    seeds = rng.integers(-2 ** 31, 2 ** 31 - 1, n)
    pts = rng.uniform(-60.0, 60.0, (n, 4))
    periods = rng.integers(1, 9, (n, 4))
    got = run_every_field(seeds, pts, periods)
    want = model_every_field(seeds, pts, periods)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    assert np.abs(want).max(axis=0).min() > 0.1  # no column is trivially zero


# --- values ----------------------------------------------------------------------------------

@wp.kernel
def noise_at(seed: int, pts: wp.array(dtype=wp.vec4), out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = pts[i]
    out[i, 0] = wp.noise(s, p[0])
    out[i, 1] = wp.noise(s, wp.vec2(p[0], p[1]))
    out[i, 2] = wp.noise(s, wp.vec3(p[0], p[1], p[2]))
    out[i, 3] = wp.noise(s, p)
    # the state is not advanced: a draw after the noise is the draw from s
    out[i, 4] = wp.randf(s) - wp.randf(wp.rand_init(seed))


def noise_columns(seed, pts):
    out = wp.zeros((len(pts), 5), dtype=float)
    wp.launch(noise_at, dim=len(pts), inputs=[seed, wp.array(np.asarray(pts, np.float32), dtype=wp.vec4), out])
    return out.numpy()


def test_noise_is_zero_on_the_lattice_bounded_and_centered():
    rng = np.random.default_rng(4)
    lattice = rng.integers(-1000, 1000, (64, 4)).astype(np.float32)
    np.testing.assert_array_equal(noise_columns(9, lattice)[:, :4], 0.0)
    values = noise_columns(9, rng.uniform(-100, 100, (20000, 4)))
    for n in range(1, 5):
        v = values[:, n - 1]
        assert np.abs(v).max() <= np.sqrt(n) / 2  # unit gradients (1-D: in [-1, 1])
        assert abs(v.mean()) < 0.02 and v.std() > 0.05
    np.testing.assert_array_equal(values[:, 4], 0.0)


def test_coordinates_beyond_int32_are_defined():
    """Warp leaves a floor outside int32 undefined; adjit takes cell 0 there:
    NaN for inf and NaN, and for huge finite x (no fraction left) 0."""
    pts = np.array([[np.inf, 0.5, 0.5, 0.5], [np.nan, 0.5, 0.5, 0.5], [-np.inf, 0.5, 0.5, 0.5],
                    [3e9, 0.5, 0.5, 0.5], [-1e20, 0.5, 0.5, 0.5]], np.float32)
    out = noise_columns(9, pts)
    assert np.isnan(out[:3, :4]).all()
    np.testing.assert_array_equal(out[3:, 0], 0.0)
    assert np.isfinite(out[3:, :4]).all()


def test_the_state_selects_the_field_and_launches_repeat_it():
    pts = np.random.default_rng(5).uniform(-10, 10, (256, 4))
    a, again, b = noise_columns(1, pts), noise_columns(1, pts), noise_columns(2, pts)
    np.testing.assert_array_equal(a, again)
    for n in range(4):
        assert np.mean(a[:, n] != b[:, n]) > 0.95


def test_noise_from_python_is_the_kernels():
    s = np.uint32(rand_init(11))
    pts = np.array([[0.3, -1.6, 2.2, 7.9]], np.float32)
    got = noise_columns(11, pts)[0]
    assert wp.noise(s, 0.3) == got[0]
    assert wp.noise(s, wp.vec3(0.3, -1.6, 2.2)) == got[2]


@wp.kernel
def periodic(seed: int, pts: wp.array(dtype=wp.vec4), shift: wp.array(dtype=wp.vec4), px: int, py: int, pz: int,
             pt: int, out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = pts[i] + shift[i]
    out[i, 0] = wp.pnoise(s, p[0], px)
    out[i, 1] = wp.pnoise(s, wp.vec2(p[0], p[1]), px, py)
    out[i, 2] = wp.pnoise(s, wp.vec3(p[0], p[1], p[2]), px, py, pz)
    out[i, 3] = wp.pnoise(s, p, px, py, pz, pt)
    out[i, 4] = wp.noise(s, p)


def run_periodic(pts, shift, periods):
    out = wp.zeros((len(pts), 5), dtype=float)
    wp.launch(periodic, dim=len(pts), inputs=[3, wp.array(pts, dtype=wp.vec4), wp.array(shift, dtype=wp.vec4),
                                              *periods, out])
    return out.numpy()


def test_pnoise_repeats_with_its_periods_negative_coordinates_too():
    rng = np.random.default_rng(6)
    periods = (3, 5, 2, 7)
    # multiples of 1/64: a point plus whole periods is exact in float32
    pts = (rng.integers(0, 64 * 8, (300, 4)) / 64).astype(np.float32)
    base = run_periodic(pts, np.zeros_like(pts), periods)
    for k in (1, 2, -1, -3):
        shift = (rng.integers(-2, 3, pts.shape) * np.array(periods) * abs(k)).astype(np.float32)
        np.testing.assert_array_equal(run_periodic(pts, shift, periods)[:, :4], base[:, :4])
    # a period larger than the points' range is plain noise there
    np.testing.assert_array_equal(run_periodic(pts, np.zeros_like(pts), (100, 100, 100, 100))[:, 3], base[:, 4])


def test_a_period_below_one_leaves_its_axis_unwrapped():
    pts = np.random.default_rng(7).uniform(-20, 20, (200, 4)).astype(np.float32)
    out = run_periodic(pts, np.zeros_like(pts), (0, -3, 0, 0))
    np.testing.assert_array_equal(out[:, 3], out[:, 4])


# --- gradients ---------------------------------------------------------------------------------

@wp.kernel
def noise_fields(seed: int, x: wp.array(dtype=wp.vec4), out: wp.array2d(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = x[i]
    out[i, 0] = wp.noise(s, p[0])
    out[i, 1] = wp.noise(s, wp.vec2(p[0], p[1]))
    out[i, 2] = wp.noise(s, wp.vec3(p[0], p[1], p[2]))
    out[i, 3] = wp.noise(s, p)
    out[i, 4] = wp.pnoise(s, p, 3, 2, 5, 4)


def noise_fields64(seed, x):
    state = rand_init(seed)
    cols = [noise64(state, x[:, :n])[0] for n in (1, 2, 3, 4)]
    return np.column_stack(cols + [noise64(state, x, np.array([3, 2, 5, 4]))[0]])


@wp.kernel
def curl_fields(seed: int, x: wp.array(dtype=wp.vec4), c2: wp.array(dtype=wp.vec2), c3: wp.array(dtype=wp.vec3),
                c4: wp.array(dtype=wp.vec3), m3: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    s = wp.rand_init(seed)
    p = x[i]
    c2[i] = wp.curlnoise(s, wp.vec2(p[0], p[1]))
    c3[i] = wp.curlnoise(s, wp.vec3(p[0], p[1], p[2]))
    c4[i] = wp.curlnoise(s, p)
    m3[i] = wp.curlnoise(s, wp.vec3(p[0], p[1], p[2]), wp.uint32(3), 1.5, 0.5)


def curl_fields64(seed, x):
    state = rand_init(seed)
    return np.column_stack([curl64(state, x[:, :2]), curl64(state, x[:, :3]), curl64(state, x),
                            curl64(state, x[:, :3], 3, 1.5, 0.5)])


def _off_lattice_points(seed, n=64):
    """Points whose fractional parts stay away from 0 and 1."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-20, 20, (n, 4)) + rng.uniform(0.1, 0.9, (n, 4))).astype(np.float32)


def _central_differences(f, x, direction, h=1e-5):
    return (f(x + h * direction) - f(x - h * direction)) / (2 * h)


def _scale(a):
    return np.abs(a).max()


def _check(got, want):
    """float32 derivatives against float64 ones: to float32 rounding of the
    terms (errors relative to the largest derivative)."""
    err = np.abs(got - want).max() / _scale(want)
    assert err < 2e-5, err
    return err


def _run_fields(kernel, x, outs):
    xs = wp.array(x, dtype=wp.vec4, requires_grad=True)
    outputs = [wp.zeros(shape, dtype=dtype, requires_grad=True) for shape, dtype in outs]
    return xs, outputs


NOISE_OUT = [((64, 5), float)]
CURL_OUT = [(64, wp.vec2), (64, wp.vec3), (64, wp.vec3), (64, wp.vec3)]


@pytest.mark.parametrize("kernel, outs, model", [(noise_fields, NOISE_OUT, noise_fields64),
                                                 (curl_fields, CURL_OUT, curl_fields64)],
                         ids=["noise_pnoise", "curlnoise"])
def test_reverse_gradients_match_float64_differences(kernel, outs, model):
    x = _off_lattice_points(8)
    x64 = x.astype(np.float64)
    rng = np.random.default_rng(9)
    xs, outputs = _run_fields(kernel, x, outs)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=len(x), inputs=[5, xs], outputs=outputs)
    seeds = [rng.normal(size=o.numpy().shape) for o in outputs]
    for o, u in zip(outputs, seeds):
        o.grad = wp.array(u.astype(np.float32), dtype=o.dtype)
    tape.backward()
    u = np.column_stack([s.reshape(len(x), -1) for s in seeds])
    # d/dx_k of sum(u * f(x)), by central differences of the model along each axis
    want = np.column_stack([np.sum(u * _central_differences(lambda p: model(5, p), x64, np.eye(4)[k]), axis=1)
                            for k in range(4)])
    _check(xs.grad.numpy(), want)


@pytest.mark.parametrize("kernel, outs, model", [(noise_fields, NOISE_OUT, noise_fields64),
                                                 (curl_fields, CURL_OUT, curl_fields64)],
                         ids=["noise_pnoise", "curlnoise"])
def test_forward_tangents_match_float64_differences(kernel, outs, model):
    x = _off_lattice_points(10)
    v = np.random.default_rng(11).normal(size=x.shape)
    xs, outputs = _run_fields(kernel, x, outs)
    tangents = wp.jvp(kernel, len(x), [5, xs], [None, v.astype(np.float32)], outputs)
    got = np.column_stack([t.numpy().reshape(len(x), -1) for t in tangents])
    _check(got, _central_differences(lambda p: model(5, p), x.astype(np.float64), v))


def test_curlnoise_is_divergence_free():
    """The divergence of the field by central differences of adjit's float32
    field (h = 2^-7, so x +- h is exact), against the size of its partial
    derivatives; the model's in float64 is zero to rounding."""
    x = _off_lattice_points(12, 256)
    h = 2.0 ** -7
    fields = {}
    for k in range(4):
        for sign in (1, -1):
            xs = wp.array(x + sign * h * np.eye(4, dtype=np.float32)[k], dtype=wp.vec4)
            outs = [wp.zeros(shape, dtype=dtype) for shape, dtype in [(256, wp.vec2)] + [(256, wp.vec3)] * 3]
            wp.launch(curl_fields, dim=len(x), inputs=[5, xs], outputs=outs)
            fields[k, sign] = [o.numpy().astype(np.float64) for o in outs]
    for field, dims in zip(range(4), (2, 3, 3, 3)):
        partials = np.stack([(fields[k, 1][field][:, k] - fields[k, -1][field][:, k]) / (2 * h)
                             for k in range(dims)])
        divergence = partials.sum(axis=0)
        assert np.abs(divergence).max() < 2e-3 * np.abs(partials).max(), field
    x64 = x.astype(np.float64)
    for dims in (2, 3):
        div = sum(_central_differences(lambda p: curl64(rand_init(5), p), x64[:, :dims], np.eye(dims)[k])[:, k]
                  for k in range(dims))
        assert np.abs(div).max() < 1e-6


@wp.kernel
def curl_octaves(seed: int, x: wp.array(dtype=wp.vec3), octaves: int, out: wp.array(dtype=wp.vec3),
                 out2: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    s = wp.rand_init(seed)
    out[i] = wp.curlnoise(s, x[i], octaves)
    out2[i] = wp.curlnoise(s, wp.vec2(x[i][0], x[i][1]), wp.uint32(0), 2.0, 0.5)


def test_curlnoise_octaves():
    x = _off_lattice_points(13, 16)[:, :3].copy()
    results = {}
    for octaves in (0, -2, 2):
        out, out2 = wp.zeros(16, dtype=wp.vec3), wp.zeros(16, dtype=wp.vec2)
        wp.launch(curl_octaves, dim=16, inputs=[4, wp.array(x, dtype=wp.vec3), octaves, out, out2])
        results[octaves] = out.numpy()
        np.testing.assert_array_equal(out2.numpy(), 0.0)
    np.testing.assert_array_equal(results[0], 0.0)
    np.testing.assert_array_equal(results[-2], 0.0)  # an int count below zero is none
    np.testing.assert_allclose(results[2], curl64(rand_init(4), x.astype(np.float64), 2), rtol=2e-5, atol=2e-6)


# --- bad calls -------------------------------------------------------------------------------------

@wp.kernel
def int_state(out: wp.array(dtype=float)):
    out[0] = wp.noise(7, 0.5)  # E: int_state


@wp.kernel
def double_point(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.noise(s, wp.vec3d(0.5, 0.5, 0.5))  # E: double_point


@wp.kernel
def periods_missing(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.pnoise(s, wp.vec3(0.5, 0.5, 0.5), 2, 2)  # E: periods_missing


@wp.kernel
def float_period(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.pnoise(s, 0.5, 2.5)  # E: float_period


@wp.kernel
def scalar_curl(out: wp.array(dtype=float)):
    s = wp.rand_init(1)
    out[0] = wp.curlnoise(s, 0.5)[0]  # E: scalar_curl


@wp.kernel
def curl_keyword(out: wp.array(dtype=wp.vec3)):
    s = wp.rand_init(1)
    out[0] = wp.curlnoise(s, wp.vec3(0.5, 0.5, 0.5), octaves=2)  # E: curl_keyword


@wp.kernel
def block_dim_argument(out: wp.array(dtype=int)):
    out[0] = wp.block_dim(1)  # E: block_dim_argument


def _line(marker):
    with open(THIS_FILE) as f:
        return next(n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# E: {marker}"))


@pytest.mark.parametrize("kernel, out, words", [
    (int_state, float, ["noise()", "state: uint32", "rand_init"]),
    (double_point, float, ["noise()", "vec3d"]),
    (periods_missing, float, ["pnoise()", "one int period per coordinate"]),
    (float_period, float, ["float literal 2.5", "int32"]),
    (scalar_curl, float, ["curlnoise()", "xy: vec2 | vec3 | vec4"]),
    (curl_keyword, wp.vec3, ["curlnoise()", "keyword"]),
    (block_dim_argument, int, ["block_dim() takes no arguments"]),
])
def test_bad_calls_name_the_kernels_file_and_line(kernel, out, words):
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=out)])
    err = info.value
    assert os.path.realpath(err.filename) == THIS_FILE
    assert err.lineno == _line(kernel.__name__)
    for w in words:
        assert w in str(err), str(err)


# --- block_dim ----------------------------------------------------------------------------------

@wp.func
def threads_per_block():
    return wp.block_dim()


@wp.kernel
def block_dims(out: wp.array2d(dtype=int)):
    i = wp.tid()
    out[i, 0] = wp.block_dim()
    out[i, 1] = threads_per_block()


def test_block_dim_is_one_on_the_cpu_as_in_warp():
    """Warp 1.19's CPU launches return 1 (checked by hand, with and without
    launch(block_dim=64)): a CPU thread is a block of its own."""
    out = wp.zeros((300, 2), dtype=int)
    wp.launch(block_dims, dim=300, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), 1)
