"""Array element and component stores, atomic adds, shapes and 1-4-D launches."""
import numpy as np
import pytest

import adjit


# --- component stores into array elements ----------------------------------------------------

@adjit.kernel
def store_components(y: adjit.array(dtype=adjit.vec3), s: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i].x = s[i]
    y[i][2] = s[i] * 2.0


def test_component_store_writes_only_that_component():
    rng = np.random.default_rng(0)
    n = 2000  # chunked across threads: neighbouring elements are written concurrently
    ys = rng.standard_normal((n, 3)).astype(np.float32)
    s = rng.standard_normal(n).astype(np.float32)
    y = adjit.array(ys, dtype=adjit.vec3)
    adjit.launch(store_components, dim=n, inputs=[y, adjit.array(s)])
    out = y.numpy()
    np.testing.assert_array_equal(out[:, 0], s)
    np.testing.assert_array_equal(out[:, 1], ys[:, 1])  # untouched
    np.testing.assert_array_equal(out[:, 2], s * np.float32(2.0))


@adjit.kernel
def store_matrix_components(m: adjit.array(dtype=adjit.mat33), s: float):
    i = adjit.tid()
    m[i][1, 2] = s
    m[i][0] = adjit.vec3(s, 2.0 * s, 3.0 * s)
    m[i][2][0] = -s


def test_matrix_element_component_and_row_stores():
    rng = np.random.default_rng(1)
    ms = rng.standard_normal((50, 3, 3)).astype(np.float32)
    m = adjit.array(ms, dtype=adjit.mat33)
    adjit.launch(store_matrix_components, dim=50, inputs=[m, 1.5])
    ref = ms.copy()
    ref[:, 1, 2] = 1.5
    ref[:, 0] = [1.5, 3.0, 4.5]
    ref[:, 2, 0] = -1.5
    np.testing.assert_array_equal(m.numpy(), ref)


@adjit.kernel
def component_augassign(y: adjit.array(dtype=adjit.vec3), s: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i].x += s[i]
    y[i][2] -= s[i]


def test_component_augmented_assignment():
    rng = np.random.default_rng(2)
    n = 3000
    ys = rng.standard_normal((n, 3)).astype(np.float32)
    s = rng.standard_normal(n).astype(np.float32)
    y = adjit.array(ys, dtype=adjit.vec3)
    adjit.launch(component_augassign, dim=n, inputs=[y, adjit.array(s)])
    out = y.numpy()
    np.testing.assert_array_equal(out[:, 0], ys[:, 0] + s)
    np.testing.assert_array_equal(out[:, 1], ys[:, 1])
    np.testing.assert_array_equal(out[:, 2], ys[:, 2] - s)


# --- atomic adds ---------------------------------------------------------------------------------

@adjit.kernel
def sum_into(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
    i = adjit.tid()
    out[0] += x[i]


def test_atomic_sum_with_exactly_representable_values():
    # Quarter-integers whose partial sums stay below 2**22: every order of
    # additions gives the exact sum, so any lost update is detected.
    n = 200_000
    rng = np.random.default_rng(3)
    xs = (rng.integers(0, 16, n) / 4.0).astype(np.float32)
    out = adjit.zeros(1)
    adjit.launch(sum_into, dim=n, inputs=[adjit.array(xs), out])
    assert out.numpy()[0] == xs.astype(np.float64).sum()


def test_atomic_sum_matches_numpy_within_float32_tolerance():
    n = 100_000
    rng = np.random.default_rng(4)
    xs = rng.random(n, dtype=np.float32)
    out = adjit.zeros(1)
    adjit.launch(sum_into, dim=n, inputs=[adjit.array(xs), out])
    ref = xs.astype(np.float64).sum()
    # Float32 summation of 1e5 positive terms in any order: the rounding
    # errors are ~sqrt(n) * 2**-24 ~ 2e-5 relative (observed ~1e-6); the
    # worst-case bound n * 2**-24 ~ 6e-3 is far looser.
    np.testing.assert_allclose(out.numpy()[0], ref, rtol=1e-4)


@adjit.kernel
def histogram(keys: adjit.array(dtype=int), counts: adjit.array(dtype=int),
              neg: adjit.array(dtype=int), grid: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    k = keys[i]
    counts[k] += 1
    neg[k] -= 2
    grid[k % 2, k % 3] += 0.5


def test_atomic_int_and_2d_adds():
    n = 50_000
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 7, n).astype(np.int32)
    counts, neg, grid = adjit.zeros(7, dtype=int), adjit.zeros(7, dtype=int), adjit.zeros((2, 3))
    adjit.launch(histogram, dim=n, inputs=[adjit.array(keys), counts, neg, grid])
    ref = np.bincount(keys, minlength=7)
    np.testing.assert_array_equal(counts.numpy(), ref)
    np.testing.assert_array_equal(neg.numpy(), -2 * ref)
    ref_grid = np.zeros((2, 3))
    np.add.at(ref_grid, (keys % 2, keys % 3), 0.5)
    np.testing.assert_array_equal(grid.numpy(), ref_grid)  # multiples of 0.5: exact


@adjit.kernel
def vector_atomics(x: adjit.array(dtype=adjit.vec3), acc: adjit.array(dtype=adjit.vec3),
                   dacc: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    acc[0] += x[i]
    acc[1] -= x[i]
    acc[2].y += x[i].x
    dacc[0] += adjit.float64(x[i].z)


def test_atomic_vector_and_component_adds():
    n = 20_000
    rng = np.random.default_rng(6)
    xs = (rng.integers(-8, 8, (n, 3)) / 8.0).astype(np.float32)  # exact partial sums
    acc, dacc = adjit.zeros(3, dtype=adjit.vec3), adjit.zeros(1, dtype=adjit.float64)
    adjit.launch(vector_atomics, dim=n, inputs=[adjit.array(xs, dtype=adjit.vec3), acc, dacc])
    total = xs.astype(np.float64).sum(axis=0)
    np.testing.assert_array_equal(acc.numpy()[0], total)
    np.testing.assert_array_equal(acc.numpy()[1], -total)
    np.testing.assert_array_equal(acc.numpy()[2], [0.0, total[0], 0.0])
    assert dacc.numpy()[0] == total[2]


# --- multi-dimensional arrays and launches -----------------------------------------------------

@adjit.kernel
def scale_2d(x: adjit.array(dtype=float, ndim=2), out: adjit.array(dtype=float, ndim=2), s: float):
    i, j = adjit.tid()
    out[i, j] = x[i, j] * s + float(j)


def test_2d_arrays_and_launch():
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((37, 53)).astype(np.float32)
    out = adjit.zeros((37, 53))
    adjit.launch(scale_2d, dim=(37, 53), inputs=[adjit.array(xs), out, 3.0])
    np.testing.assert_array_equal(out.numpy(), xs * np.float32(3.0) + np.arange(53, dtype=np.float32))


def test_2d_launch_smaller_than_the_array():
    xs = np.ones((10, 10), np.float32)
    out = adjit.full((10, 10), -1.0)
    adjit.launch(scale_2d, dim=(4, 6), inputs=[adjit.array(xs), out, 2.0])
    ref = np.full((10, 10), -1.0, np.float32)
    ref[:4, :6] = 2.0 + np.arange(6)
    np.testing.assert_array_equal(out.numpy(), ref)


@adjit.kernel
def shapes(x: adjit.array(dtype=adjit.vec3, ndim=2), out: adjit.array(dtype=int)):
    i = adjit.tid()
    out[0] = x.shape[0]
    out[1] = x.shape[1]


@adjit.kernel
def reverse(x: adjit.array(dtype=float), out: adjit.array(dtype=float)):
    i = adjit.tid()
    n = x.shape[0]
    out[i] = x[n - 1 - i]


def test_shape_inside_kernels():
    out = adjit.zeros(2, dtype=int)
    adjit.launch(shapes, dim=1, inputs=[adjit.zeros((5, 7), dtype=adjit.vec3), out])
    np.testing.assert_array_equal(out.numpy(), [5, 7])
    xs = np.arange(1500, dtype=np.float32)
    o = adjit.zeros(1500)
    adjit.launch(reverse, dim=1500, inputs=[adjit.array(xs), o])
    np.testing.assert_array_equal(o.numpy(), xs[::-1])


@adjit.kernel
def index_3d(out: adjit.array(dtype=int, ndim=3)):
    i, j, k = adjit.tid()
    out[i, j, k] = i * 10000 + j * 100 + k


@adjit.kernel
def index_4d(out: adjit.array(dtype=int, ndim=4), dims: adjit.array(dtype=int)):
    i, j, k, l = adjit.tid()
    out[i, j, k, l] = i * 1000000 + j * 10000 + k * 100 + l
    if i == 0 and j == 0 and k == 0 and l == 0:
        dims[0] = out.shape[0]
        dims[1] = out.shape[1]
        dims[2] = out.shape[2]
        dims[3] = out.shape[3]


@pytest.mark.parametrize("shape", [(3, 4, 5), (1, 1, 1), (2, 1, 700), (20, 30, 7)])
def test_3d_launch(shape):
    out = adjit.full(shape, -1, dtype=int)
    adjit.launch(index_3d, dim=shape, inputs=[out])
    i, j, k = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), i * 10000 + j * 100 + k)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 1, 2000), (5, 5, 5, 5)])
def test_4d_launch(shape):
    out = adjit.full(shape, -1, dtype=int)
    dims = adjit.zeros(4, dtype=int)
    adjit.launch(index_4d, dim=shape, inputs=[out, dims])
    i, j, k, l = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), i * 1000000 + j * 10000 + k * 100 + l)
    np.testing.assert_array_equal(dims.numpy(), shape)


@adjit.kernel
def flat_index(out: adjit.array(dtype=int)):
    i = adjit.tid()
    out[i] = i


def test_single_tid_in_a_2d_launch_is_the_flat_index():
    out = adjit.full(12, -1, dtype=int)
    adjit.launch(flat_index, dim=(3, 4), inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.arange(12))


def test_empty_launch_dims_run_nothing():
    out = adjit.full((3, 4, 5), -1, dtype=int)
    for dim in [(0, 4, 5), (3, 0, 5), (3, 4, 0)]:
        adjit.launch(index_3d, dim=dim, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), -1)


# --- host-side arrays ----------------------------------------------------------------------------

def test_array_constructors_and_views():
    a = adjit.array(np.arange(6, dtype=np.float64))
    assert a.dtype == adjit.float64 and a.shape == (6,) and len(a) == 6
    src = np.arange(6, dtype=np.float32)
    b = adjit.array(src)
    src[0] = 100.0
    assert b.numpy()[0] == 0.0  # adjit.array copies its data
    b.numpy()[1] = 7.0
    assert b.numpy()[1] == 7.0  # .numpy() is a view
    np.testing.assert_array_equal(adjit.ones((2, 3), dtype=int).numpy(), np.ones((2, 3), np.int32))
    np.testing.assert_array_equal(adjit.full(3, 2.5).numpy(), [2.5, 2.5, 2.5])
    z = adjit.zeros_like(adjit.ones(4, dtype=adjit.vec2))
    assert z.dtype == adjit.vec2 and z.numpy().shape == (4, 2) and not z.numpy().any()
    with pytest.raises(ValueError):
        adjit.array(np.zeros((4, 2), np.float32), dtype=adjit.vec3)


def test_constructors_take_warps_parameter_order():
    wp = adjit
    # zeros(shape, dtype, device, requires_grad): "cpu" third is the device,
    # not a truthy requires_grad.
    a = wp.zeros(3, float, "cpu")
    assert a.grad is None and a.device == "cpu"
    b = wp.zeros(3, float, None, True)
    assert b.grad is not None
    c = wp.full((2, 2), 7.0, wp.float64, "cpu", True)
    assert c.numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]] and c.grad is not None
    assert wp.ones(2, int, "cpu").numpy().tolist() == [1, 1]
    assert wp.empty(4, wp.vec3, "cpu", pinned=True).shape == (4,)
    assert wp.zeros_like(c, "cpu", False).grad is None
    with pytest.raises(TypeError, match="Warp's order"):
        wp.zeros(3, float, True)
    with pytest.raises(ValueError, match="'cuda:0' is not available"):
        wp.zeros(3, float, "cuda:0")
