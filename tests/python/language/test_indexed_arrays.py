"""Indexed arrays (Warp's ``wp.indexedarray(data, indices)``): host values
against numpy fancy indexing, kernel reads, writes and atomic adds through
them (1-D, 2-D with one or both dimensions indexed, vector elements),
reverse (Tape) and forward (jvp) gradients into the data against float64
central differences, out-of-range indices reported by the bounds checks,
and bad inputs as errors naming the line."""
import typing

import numpy as np
import pytest

import adjit as wp


def _idx(values) -> wp.Array:
    return wp.array(np.asarray(values, dtype=np.int32), dtype=wp.int32)


# --- host -----------------------------------------------------------------------


def test_host_shape_numpy_and_annotations():
    data = wp.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    rows, cols = np.array([3, 0, 3]), np.array([4, 1])
    ia = wp.indexedarray(data, [_idx(rows), None])
    assert ia.shape == (3, 5) and len(ia) == 3 and ia.ndim == 2 and ia.size == 15 and ia.dtype == wp.float32
    np.testing.assert_array_equal(ia.numpy(), data.numpy()[rows])
    both = wp.indexedarray(data, [_idx(rows), _idx(cols)])
    assert both.shape == (3, 2)
    np.testing.assert_array_equal(both.numpy(), data.numpy()[np.ix_(rows, cols)])
    np.testing.assert_array_equal(wp.indexedarray(data, [None, _idx(cols)]).numpy(), data.numpy()[:, cols])
    np.testing.assert_array_equal(wp.indexedarray(data).numpy(), data.numpy())
    assert both.contiguous().shape == (3, 2) and both.list() == list(data.numpy()[np.ix_(rows, cols)].ravel())
    assert isinstance(both, wp.indexedarray) and isinstance(both, wp.indexedarray2d)
    assert not isinstance(both, wp.indexedarray1d)
    # annotations, Warp's spellings
    assert wp.indexedarray(dtype=float) == wp.indexedarray1d(dtype=wp.float32) == wp.indexedarray[float]
    assert wp.indexedarray(dtype=wp.vec3, ndim=2) == wp.indexedarray2d(dtype=wp.vec3)


def test_host_writes_share_the_data():
    data = wp.zeros(6)
    ia = wp.indexedarray(data, _idx([5, 1]))
    ia.fill_(2.0)
    np.testing.assert_array_equal(data.numpy(), [0, 2, 0, 0, 0, 2])
    ia.assign(np.array([7.0, 8.0], dtype=np.float32))
    np.testing.assert_array_equal(data.numpy(), [0, 8, 0, 0, 0, 7])
    ia.zero_()
    np.testing.assert_array_equal(data.numpy(), 0)
    with pytest.raises(ValueError, match="does not match"):
        ia.assign(np.zeros(3, dtype=np.float32))


def test_host_bad_inputs():
    data = wp.zeros((3, 4))
    with pytest.raises(TypeError, match="int32"):
        wp.indexedarray(data, wp.array(np.array([0, 1], dtype=np.int64), dtype=wp.int64))
    with pytest.raises(ValueError, match="one-dimensional"):
        wp.indexedarray(data, _idx([[0, 1]]))
    with pytest.raises(ValueError, match="3 index arrays for a 2-d"):
        wp.indexedarray(data, [_idx([0]), None, None])
    with pytest.raises(TypeError, match="adjit int32 array or None"):
        wp.indexedarray(data, [np.array([0, 1], dtype=np.int32)])
    with pytest.raises(TypeError, match="data must be an adjit array"):
        wp.indexedarray(np.zeros(3), _idx([0]))
    with pytest.raises(TypeError, match="does not match"):
        wp.indexedarray(data, _idx([0]), dtype=wp.float64)
    with pytest.raises(IndexError, match=r"indices\[0\]\[1\] = 3 is out of range"):
        wp.indexedarray(data, _idx([0, 3])).numpy()


# --- kernels: values ---------------------------------------------------------------


@wp.kernel
def gather_1d(ia: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = ia[i] * 2.0 + float(ia.shape[0]) + float(len(ia))


@wp.kernel
def scatter_1d(x: wp.array(dtype=float), ia: wp.indexedarray(dtype=float)):
    i = wp.tid()
    ia[i] = x[i]


@wp.kernel
def accumulate_1d(x: wp.array(dtype=float), ia: wp.indexedarray(dtype=float)):
    i = wp.tid()
    ia[i] += x[i]
    wp.atomic_add(ia, i, 10.0 * x[i])


def test_kernel_reads_writes_atomics_1d():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(8).astype(np.float32)
    idx = np.array([6, 0, 6, 3, 2], dtype=np.int32)
    data = wp.array(values)
    out = wp.zeros(5)
    wp.launch(gather_1d, 5, [wp.indexedarray(data, _idx(idx))], [out])
    np.testing.assert_allclose(out.numpy(), values[idx] * 2 + 10, rtol=1e-6)

    perm = np.array([4, 1, 7], dtype=np.int32)
    x = rng.standard_normal(3).astype(np.float32)
    target = wp.zeros(8)
    wp.launch(scatter_1d, 3, [wp.array(x)], [wp.indexedarray(target, _idx(perm))])
    expected = np.zeros(8, np.float32)
    expected[perm] = x
    np.testing.assert_array_equal(target.numpy(), expected)

    acc = wp.zeros(8)
    x = rng.standard_normal(5).astype(np.float32)
    wp.launch(accumulate_1d, 5, [wp.array(x)], [wp.indexedarray(acc, _idx(idx))])
    expected = np.zeros(8, np.float64)
    np.add.at(expected, idx, 11.0 * x)  # duplicates accumulate
    np.testing.assert_allclose(acc.numpy(), expected, rtol=1e-5, atol=1e-6)


@wp.kernel
def gather_2d(ia: wp.indexedarray2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = ia[i, j] + ia[i][j] + float(ia.shape[1]) * 100.0


@wp.kernel
def add_2d(x: wp.array2d(dtype=float), ia: wp.indexedarray2d(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(ia, i, j, x[i, j])


@pytest.mark.parametrize("which", ["rows", "cols", "both"])
def test_kernel_2d(which):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((5, 6)).astype(np.float32)
    rows, cols = np.array([4, 0, 4], dtype=np.int32), np.array([5, 2], dtype=np.int32)
    indices = {"rows": [_idx(rows), None], "cols": [None, _idx(cols)], "both": [_idx(rows), _idx(cols)]}[which]
    key = {"rows": (rows, slice(None)), "cols": (slice(None), cols), "both": np.ix_(rows, cols)}[which]
    data = wp.array(values)
    ia = wp.indexedarray(data, indices)
    out = wp.zeros(ia.shape)
    wp.launch(gather_2d, ia.shape, [ia], [out])
    np.testing.assert_allclose(out.numpy(), 2 * values[key] + 100.0 * ia.shape[1], rtol=1e-6)
    x = rng.standard_normal(ia.shape).astype(np.float32)
    wp.launch(add_2d, ia.shape, [wp.array(x)], [ia])
    expected = values.astype(np.float64).copy()
    ii, jj = np.meshgrid(*(np.arange(n) for n in values.shape), indexing="ij")
    flat = np.ravel_multi_index((ii[key], jj[key]), values.shape)
    np.add.at(expected.reshape(-1), flat.ravel(), x.ravel())
    np.testing.assert_allclose(data.numpy(), expected, rtol=1e-5, atol=1e-6)


@wp.kernel
def vec_components(ia: wp.indexedarray(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    v = ia[i]
    out[i] = v[0] + ia[i].y * 10.0 + ia[i][2] * 100.0
    ia[i] = wp.vec3(v[2], v[1], v[0])


def test_vector_elements():
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    data = wp.array(values, dtype=wp.vec3)
    idx = np.array([2, 0], dtype=np.int32)
    out = wp.zeros(2)
    wp.launch(vec_components, 2, [wp.indexedarray(data, _idx(idx))], [out])
    v = values[idx]
    np.testing.assert_allclose(out.numpy(), v[:, 0] + 10 * v[:, 1] + 100 * v[:, 2])
    expected = values.copy()
    expected[idx] = values[idx][:, ::-1]
    np.testing.assert_array_equal(data.numpy(), expected)


@wp.kernel
def generic_copy(ia: typing.Any, out: typing.Any):
    i = wp.tid()
    out[i] = ia[i]


def test_generic_kernel_takes_indexed_arrays():
    data = wp.array(np.arange(5, dtype=np.float64), dtype=wp.float64)
    out = wp.zeros(2, dtype=wp.float64)
    wp.launch(generic_copy, 2, [wp.indexedarray(data, _idx([4, 2]))], [out])
    np.testing.assert_array_equal(out.numpy(), [4, 2])


# --- gradients ------------------------------------------------------------------------


@wp.kernel
def gather_loss(ia: wp.indexedarray(dtype=wp.float64), w: wp.array(dtype=wp.float64),
                loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = ia[i]
    wp.atomic_add(loss, 0, v * v * w[i] + wp.sin(v))


@wp.kernel
def scatter_square(x: wp.array(dtype=wp.float64), ia: wp.indexedarray(dtype=wp.float64)):
    i = wp.tid()
    ia[i] = x[i] * x[i]
    ia[i] += wp.float64(0.5) * x[i]


@wp.kernel
def weighted_sum(y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * wp.float64(i + 1))


IDX = np.array([3, 0, 3, 5, 1], dtype=np.int32)  # 3 twice: the adjoint of the gather accumulates
W = np.array([0.5, -1.0, 2.0, 1.5, 0.25])


def _gather_loss(values: np.ndarray) -> float:
    v = values[IDX]
    return float(np.sum(v * v * W + np.sin(v)))


def _fd(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_reverse_gradient_of_a_gather():
    values = np.random.default_rng(2).standard_normal(7)
    data = wp.array(values, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(gather_loss, len(IDX), [wp.indexedarray(data, _idx(IDX)), wp.array(W, dtype=wp.float64)],
                  [loss])
    assert loss.numpy()[0] == pytest.approx(_gather_loss(values), rel=1e-12)
    tape.backward(loss)
    fd = _fd(_gather_loss, values)
    assert np.abs(data.grad.numpy() - fd).max() < 1e-7
    assert data.grad.numpy()[[2, 4, 6]].tolist() == [0, 0, 0]


def test_reverse_gradient_through_a_scatter():
    perm = np.array([4, 1, 2], dtype=np.int32)

    def f(x):
        y = np.zeros(6)
        y[perm] = x * x + 0.5 * x
        return float(np.sum(y * (np.arange(6) + 1)))

    values = np.array([0.3, -1.2, 2.0])
    x = wp.array(values, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(6, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scatter_square, 3, [x], [wp.indexedarray(y, _idx(perm))])
        wp.launch(weighted_sum, 6, [y], [loss])
    assert loss.numpy()[0] == pytest.approx(f(values), rel=1e-12)
    tape.backward(loss)
    assert np.abs(x.grad.numpy() - _fd(f, values)).max() < 1e-7


def test_forward_gradient_of_a_gather():
    values = np.random.default_rng(3).standard_normal(7)
    direction = np.random.default_rng(4).standard_normal(7)
    data = wp.array(values, dtype=wp.float64)
    loss = wp.zeros(1, dtype=wp.float64)
    (d_loss,) = wp.jvp(gather_loss, len(IDX), [wp.indexedarray(data, _idx(IDX)), wp.array(W, dtype=wp.float64)],
                       [wp.array(direction, dtype=wp.float64)], [loss])
    expected = np.dot(_fd(_gather_loss, values), direction)
    assert abs(d_loss.numpy()[0] - expected) < 1e-7


def test_forward_tangent_of_an_indexed_output():
    perm = np.array([4, 1, 2], dtype=np.int32)
    values, direction = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    y = wp.zeros(6, dtype=wp.float64)
    (d_y,) = wp.jvp(scatter_square, 3, [wp.array(values, dtype=wp.float64)],
                    [wp.array(direction, dtype=wp.float64)], [wp.indexedarray(y, _idx(perm))])
    expected = np.zeros(6)
    expected[perm] = (2 * values + 0.5) * direction
    assert d_y.shape == (6,)  # the tangent of the data array
    np.testing.assert_allclose(d_y.numpy(), expected, rtol=1e-12)


# --- errors ---------------------------------------------------------------------------


def test_out_of_range_index_reported_at_the_line():
    data = wp.zeros(4)
    out = wp.zeros(2)
    with pytest.raises(wp.OutOfBoundsError) as e:
        wp.launch(gather_1d, 2, [wp.indexedarray(data, _idx([1, 4]))], [out])
    assert "test_indexed_arrays.py" in str(e.value) and "ia[i] * 2.0" in str(e.value)


def test_launch_bad_arguments():
    with pytest.raises(wp.LaunchError, match=r"adjit.indexedarray of float32.*wrap it") as e:
        wp.launch(gather_1d, 2, [wp.zeros(4)], [wp.zeros(2)])
    assert "test_indexed_arrays.py" in str(e.value)
    with pytest.raises(wp.LaunchError, match="indexed array of float32, got one of float64"):
        wp.launch(gather_1d, 2, [wp.indexedarray(wp.zeros(4, dtype=wp.float64), _idx([0, 1]))], [wp.zeros(2)])
    with pytest.raises(wp.LaunchError, match="1-d indexed array, got 2-d"):
        wp.launch(gather_1d, 2, [wp.indexedarray(wp.zeros((4, 2)), _idx([0, 1]))], [wp.zeros(2)])


def _bad_kernel(body: str):
    src = ("import adjit as wp\n"
           "@wp.kernel\n"
           "def bad(ia: wp.indexedarray2d(dtype=float), out: wp.array(dtype=float)):\n"
           "    i = wp.tid()\n"
           f"    {body}\n")
    namespace = {}
    import linecache
    filename = f"<indexed_bad_{abs(hash(body))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["bad"]


@pytest.mark.parametrize("body, message", [
    ("out[i] = ia[i]", "index all its dimensions"),
    ("b = ia", "can only be indexed"),
    ("out[i] = ia.shape[2]", "takes a constant index 0 to 1"),
    ("out[i] = float(ia.size)", "no attribute 'size'"),
    ("out[i] = ia[i, 0:2]", "cannot be sliced"),
])
def test_kernel_misuse_is_located(body, message):
    k = _bad_kernel(body)
    data = wp.indexedarray(wp.zeros((3, 3)), _idx([0]))
    with pytest.raises(wp.KernelError, match=message) as e:
        wp.launch(k, 1, [data], [wp.zeros(1)])
    assert "line 5" in str(e.value) or ":5" in str(e.value)


def test_device_functions_take_no_indexed_arrays():
    @wp.func
    def f(ia: wp.indexedarray(dtype=float)):
        return ia[0]

    @wp.kernel
    def passes(ia: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
        out[0] = f(ia)

    @wp.kernel
    def declares(out: wp.array(dtype=float)):
        out[0] = f(out)

    ia = wp.indexedarray(wp.zeros(2), _idx([0]))
    with pytest.raises(wp.KernelError, match="nor passed to a function") as e:
        wp.launch(passes, 1, [ia], [wp.zeros(1)])
    assert "out[0] = f(ia)" in str(e.value)
    with pytest.raises(wp.KernelTypeError, match="indexed arrays are kernel parameters only"):
        wp.launch(declares, 1, [], [wp.zeros(1)])
