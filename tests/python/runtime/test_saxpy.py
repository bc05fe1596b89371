"""saxpy end to end on the CPU: large and odd sizes, kernel reuse, float64."""
import numpy as np
import pytest

import adjit
from adjit.loader import cpu_variant, loaded_variants


@adjit.kernel
def saxpy(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = a * x[i] + y[i]


@adjit.kernel
def daxpy(a: adjit.float64, x: adjit.array(dtype=adjit.float64), y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    y[i] = a * x[i] + y[i]


@adjit.kernel
def scale_by_index(s: float, out: adjit.array(dtype=float)):
    i = adjit.tid()
    out[i] = s * float(i)


def _saxpy_reference(a, xs, ys):
    # The kernel's arithmetic: a float32 multiply, then a float32 add.
    return np.float32(a) * xs + ys


def test_saxpy_10m_matches_numpy():
    n = 10_000_000
    rng = np.random.default_rng(0)
    xs = rng.random(n, dtype=np.float32)
    ys = rng.random(n, dtype=np.float32)
    x, y = adjit.array(xs), adjit.array(ys)
    adjit.launch(saxpy, dim=n, inputs=[2.5, x, y])
    out = y.numpy()
    assert out.dtype == np.float32 and out.shape == (n,)
    # Products and sums of positive float32 values: the only freedom a
    # compiler has is fusing them into one FMA, at most 1 ulp away.
    np.testing.assert_array_max_ulp(out, _saxpy_reference(2.5, xs, ys), maxulp=1)
    # The inputs were copied into the arrays: x is untouched.
    np.testing.assert_array_equal(x.numpy(), xs)


@pytest.mark.parametrize("n", [0, 1, 2, 1023, 1024, 1025, 2049, 4097, 100_003])
def test_saxpy_sizes_write_exactly_the_launched_range(n):
    # Arrays longer than the launch: the launch (inline below 1024 indices,
    # chunked on the thread pool above) must touch exactly indices [0, n).
    pad = 37
    rng = np.random.default_rng(n)
    xs = rng.standard_normal(n + pad).astype(np.float32)
    ys = rng.standard_normal(n + pad).astype(np.float32)
    y = adjit.array(ys)
    adjit.launch(saxpy, dim=n, inputs=[-1.5, adjit.array(xs), y])
    out = y.numpy()
    np.testing.assert_array_max_ulp(out[:n], _saxpy_reference(-1.5, xs[:n], ys[:n]), maxulp=1)
    np.testing.assert_array_equal(out[n:], ys[n:])


@pytest.mark.parametrize("n", [1, 1000, 1024, 1025, 5000, 65_537])
def test_every_index_runs_exactly_once(n):
    # out[i] = s * i: a missing, repeated or shifted index shows up exactly.
    out = adjit.full(n, -1.0)
    adjit.launch(scale_by_index, dim=n, inputs=[1.0, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.float32))


def test_kernel_reuse_across_launches():
    rng = np.random.default_rng(1)
    compiled = cpu_variant(saxpy)
    for n, a in [(10, 2.0), (3000, -0.5), (1, 7.0), (5000, 0.0), (0, 3.0)]:
        xs = rng.random(n, dtype=np.float32)
        ys = rng.random(n, dtype=np.float32)
        y = adjit.array(ys)
        adjit.launch(saxpy, dim=n, inputs=[a, adjit.array(xs), y])
        np.testing.assert_array_max_ulp(y.numpy(), _saxpy_reference(a, xs, ys), maxulp=1)
    # Compiled once, then reused.
    assert cpu_variant(saxpy) is compiled


def test_repeated_launches_accumulate_in_place():
    n = 4096
    xs = np.full(n, 0.25, dtype=np.float32)
    x, y = adjit.array(xs), adjit.zeros(n)
    for _ in range(8):
        adjit.launch(saxpy, dim=n, inputs=[2.0], outputs=[x, y])
    # 8 * (2 * 0.25) = 4, exact in float32.
    np.testing.assert_array_equal(y.numpy(), np.full(n, 4.0, dtype=np.float32))


def test_scalar_float64_kernel():
    n = 5000
    rng = np.random.default_rng(2)
    xs = rng.standard_normal(n)
    ys = rng.standard_normal(n)
    a = 1.0 / 3.0  # not representable in float32: the scalar must stay float64
    y = adjit.array(ys)
    adjit.launch(daxpy, dim=n, inputs=[a, adjit.array(xs), y])
    assert y.numpy().dtype == np.float64
    ref = a * xs + ys
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-15, atol=1e-15)
    # A float32 computation would be off by ~1e-8 relative.
    assert np.max(np.abs(y.numpy() - ref)) < 1e-14


def test_overlapping_arrays_use_the_variant_without_the_no_overlap_promise():
    # x and y are the same buffer: y = a*y + y must still be computed per
    # element, as if nothing were reordered.
    data = np.linspace(0, 1, 5000).astype(np.float32)
    y = adjit.array(data)
    adjit.launch(saxpy, dim=5000, inputs=[3.0, y, y])
    np.testing.assert_allclose(y.numpy(), 4 * data, rtol=1e-6)
    assert (False, False) in loaded_variants(saxpy)  # the aliasing-safe variant was compiled
