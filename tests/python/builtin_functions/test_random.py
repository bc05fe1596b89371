"""Random numbers in kernels: Warp's PCG streams, checked against a numpy
model of the documented generator, and the samplers' distributions."""
import math

import numpy as np
import pytest

import adjit as wp

MASK = 0xFFFFFFFF
f32 = np.float32


def pcg(x: int) -> int:
    """The PCG hash (Jarzynski & Olano 2020) on Python ints, mod 2^32."""
    s = (x * 747796405 + 2891336453) & MASK
    w = (((s >> ((s >> 28) + 4)) ^ s) * 277803737) & MASK
    return ((w >> 22) ^ w) & MASK


def uniform(s):
    s = pcg(s)
    return s, f32(s >> 8) * f32(2.0 ** -24)


@wp.kernel
def draws(seed: int, u: wp.array2d(dtype=wp.uint32), i: wp.array2d(dtype=int), f: wp.array2d(dtype=float),
          v2: wp.array2d(dtype=wp.vec2), v3: wp.array2d(dtype=wp.vec3)):
    t = wp.tid()
    u[t, 0] = wp.rand_init(seed)
    s = wp.rand_init(seed, t)
    u[t, 1] = s
    u[t, 2] = wp.randu(s)
    u[t, 3] = wp.randu(s, wp.uint32(7), wp.uint32(4000000000))
    i[t, 0] = wp.randi(s)
    i[t, 1] = wp.randi(s, -5, 17)
    f[t, 0] = wp.randf(s)
    f[t, 1] = wp.randf(s, -2.0, 3.0)
    f[t, 2] = wp.randn(s)
    v2[t, 0] = wp.sample_triangle(s)
    v2[t, 1] = wp.sample_unit_ring(s)
    v2[t, 2] = wp.sample_unit_disk(s)
    v2[t, 3] = wp.sample_unit_square(s)
    v3[t, 0] = wp.sample_unit_sphere_surface(s)
    v3[t, 1] = wp.sample_unit_sphere(s)
    v3[t, 2] = wp.sample_unit_hemisphere_surface(s)
    v3[t, 3] = wp.sample_unit_hemisphere(s)
    v3[t, 4] = wp.sample_unit_cube(s)
    u[t, 4] = wp.poisson(s, 3.5)
    u[t, 5] = wp.poisson(s, 40.0)
    u[t, 6] = wp.poisson(s, 0.0)
    u[t, 7] = s


def _poisson(s, lam):
    """Knuth below a rate of 10, Hoermann's PTRS from 10 on (float64 model)."""
    if lam == 0:
        return s, 0
    if lam < 10:
        limit, k, p = math.exp(-lam), 0, 1.0
        while p > limit:
            s, x = uniform(s)
            k, p = k + 1, p * x
        return s, k - 1
    slam, loglam = math.sqrt(lam), math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha, vr = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2)
    while True:
        s, x = uniform(s)
        s, v = uniform(s)
        uu = x - 0.5
        us = 0.5 - abs(uu)
        k = math.floor((2 * a / us + b) * uu + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return s, k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1):
            return s, k


def _direction(z, phi_u):
    r = math.sqrt(max(0.0, 1 - z * z))
    return np.array([r * math.cos(2 * math.pi * phi_u), r * math.sin(2 * math.pi * phi_u), z])


def test_every_draw_follows_the_documented_generator():
    n, seed = 128, 12345
    u, i = wp.zeros((n, 8), dtype=wp.uint32), wp.zeros((n, 2), dtype=int)
    f, v2, v3 = wp.zeros((n, 3)), wp.zeros((n, 4), dtype=wp.vec2), wp.zeros((n, 5), dtype=wp.vec3)
    wp.launch(draws, dim=n, inputs=[seed], outputs=[u, i, f, v2, v3])
    u, i, f, v2, v3 = u.numpy(), i.numpy(), f.numpy(), v2.numpy(), v3.numpy()
    for t in range(n):
        assert u[t, 0] == pcg(seed)
        s = pcg((seed + pcg(t)) & MASK)
        assert u[t, 1] == s
        s = pcg(s)
        assert u[t, 2] == s
        s = pcg(s)
        assert u[t, 3] == s % (4000000000 - 7) + 7
        s = pcg(s)
        assert i[t, 0] == np.uint32(s).astype(np.int32)
        s = pcg(s)
        assert i[t, 1] == s % 22 - 5  # the remainder of the unsigned state
        s, x = uniform(s)
        assert f[t, 0] == x and x * 2 ** 24 == int(x * 2 ** 24)
        s, x = uniform(s)
        assert f[t, 1] == f32(5.0) * x + f32(-2.0)
        s, a = uniform(s)
        s, b = uniform(s)
        assert abs(f[t, 2] - math.sqrt(-2 * math.log(a)) * math.cos(2 * math.pi * b)) < 1e-4
        s, a = uniform(s)
        s, b = uniform(s)
        np.testing.assert_allclose(v2[t, 0], [1 - math.sqrt(a), b * math.sqrt(a)], atol=1e-6)
        s, a = uniform(s)
        np.testing.assert_allclose(v2[t, 1], [math.cos(2 * math.pi * a), math.sin(2 * math.pi * a)], atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        np.testing.assert_allclose(v2[t, 2], math.sqrt(a) * _direction(0.0, b)[:2], atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        np.testing.assert_array_equal(v2[t, 3], [a - f32(0.5), b - f32(0.5)])
        s, a = uniform(s)
        s, b = uniform(s)
        np.testing.assert_allclose(v3[t, 0], _direction(1 - 2 * a, b), atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        s, c = uniform(s)
        np.testing.assert_allclose(v3[t, 1], np.cbrt(c) * _direction(1 - 2 * a, b), atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        np.testing.assert_allclose(v3[t, 2], _direction(1 - a, b), atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        s, c = uniform(s)
        np.testing.assert_allclose(v3[t, 3], np.cbrt(c) * _direction(1 - a, b), atol=1e-6)
        s, a = uniform(s)
        s, b = uniform(s)
        s, c = uniform(s)
        np.testing.assert_array_equal(v3[t, 4], [a - f32(0.5), b - f32(0.5), c - f32(0.5)])
        s, k = _poisson(s, 3.5)
        assert u[t, 4] == k
        s, k = _poisson(s, 40.0)
        assert u[t, 5] == k
        assert u[t, 6] == 0
        assert u[t, 7] == s  # a zero rate draws nothing


@wp.kernel
def sample_many(seed: int, count: int, normal: wp.array(dtype=float), small: wp.array(dtype=wp.uint32),
                large: wp.array(dtype=wp.uint32), ball: wp.array(dtype=wp.vec3), hemi: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    s = wp.rand_init(seed, t)
    for k in range(count):  # the state advances through the loop
        j = t * count + k
        normal[j] = wp.randn(s)
        small[j] = wp.poisson(s, 2.5)
        large[j] = wp.poisson(s, 120.0)
        ball[j] = wp.sample_unit_sphere(s)
        hemi[j] = wp.sample_unit_hemisphere_surface(s)


def test_samplers_have_their_distributions():
    threads, count = 256, 200
    n = threads * count
    normal, small, large = wp.zeros(n), wp.zeros(n, dtype=wp.uint32), wp.zeros(n, dtype=wp.uint32)
    ball, hemi = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    wp.launch(sample_many, dim=threads, inputs=[3, count], outputs=[normal, small, large, ball, hemi])
    x = normal.numpy().astype(np.float64)
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02 and abs((x < 1.0).mean() - 0.8413) < 0.01
    for counts, lam in ((small.numpy(), 2.5), (large.numpy(), 120.0)):
        c = counts.astype(np.float64)
        assert abs(c.mean() - lam) < 0.02 * lam and abs(c.var() - lam) < 0.06 * lam
    p = np.linalg.norm(ball.numpy(), axis=1)
    assert p.max() <= 1 + 1e-6 and abs((p < 0.5).mean() - 0.125) < 0.01  # uniform in volume
    h = hemi.numpy()
    np.testing.assert_allclose(np.linalg.norm(h, axis=1), 1, atol=1e-5)
    assert h[:, 2].min() >= 0 and abs(h[:, 2].mean() - 0.5) < 0.01
    assert len(np.unique(x)) > 0.99 * n  # the loop's draws differ


@wp.kernel
def noisy(x: wp.array(dtype=float), seed: int, y: wp.array(dtype=float)):
    t = wp.tid()
    s = wp.rand_init(seed, t)
    y[t] = x[t] * wp.randf(s, 0.5, 1.5) + wp.randn(s)


def test_draws_in_a_differentiated_kernel_are_replayed_identically():
    x = wp.array(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(noisy, dim=3, inputs=[x, 9], outputs=[y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    scale = np.array([uniform(pcg((9 + pcg(t)) & MASK))[1] for t in range(3)]) * f32(1.0) + f32(0.5)
    np.testing.assert_array_equal(x.grad.numpy(), scale.astype(np.float32))


@wp.kernel
def not_a_state(y: wp.array(dtype=float)):
    y[0] = wp.randf(3)


def test_a_draw_needs_a_state():
    with pytest.raises(wp.KernelTypeError, match="state: uint32"):
        wp.launch(not_a_state, dim=1, inputs=[wp.zeros(1)])


@wp.kernel
def counted(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tid()
    s = wp.rand_init(5, t)
    n = wp.poisson(s, 4.0 + x[t])
    m = wp.poisson(s, 30.0)
    y[t] = x[t] * float(n) + float(m) * x[t] * x[t]


def test_poisson_counts_are_constants_of_the_gradient():
    x0 = np.array([1.0, 2.0, 0.5], np.float32)
    x = wp.array(x0, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(counted, dim=3, inputs=[x], outputs=[y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    for t in range(3):
        s, n = _poisson(pcg((5 + pcg(t)) & MASK), float(f32(4.0) + x0[t]))
        _, m = _poisson(s, 30.0)
        assert y.numpy()[t] == f32(x0[t] * n + m * x0[t] * x0[t])
        assert x.grad.numpy()[t] == f32(n + 2 * m * x0[t])


@wp.kernel
def sample_bins(seed: int, cdf: wp.array(dtype=float), out: wp.array(dtype=int), after: wp.array(dtype=wp.uint32)):
    t = wp.tid()
    s = wp.rand_init(seed, t)
    out[t] = wp.sample_cdf(s, cdf)
    after[t] = s


def test_sample_cdf_inverts_the_distribution():
    weights = np.array([0.1, 0.4, 0.2, 0.3], np.float32)
    cdf = (np.cumsum(weights) / weights.sum()).astype(np.float32)
    n = 20_000
    out, after = wp.zeros(n, dtype=int), wp.zeros(n, dtype=wp.uint32)
    wp.launch(sample_bins, dim=n, inputs=[11, wp.array(cdf)], outputs=[out, after])
    for t in range(50):
        s, u = uniform(pcg((11 + pcg(t)) & MASK))
        assert out.numpy()[t] == np.searchsorted(cdf, u, side="left") and after.numpy()[t] == s
    counts = np.bincount(out.numpy(), minlength=4) / n
    np.testing.assert_allclose(counts, weights, atol=0.01)
