"""Random tiles, scatters into tiles and index-tile gathers
(adjit/compiler/tile_random.py, adjit/compiler/tile_scatter.py): tile_randi
and tile_randf bit for bit against Warp's own CPU values and adjit's scalar
draws, the scatters and gathers against numpy (float64 references),
gradients against float64 finite differences, and bad calls as errors
naming this file."""
import shutil
import subprocess

import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

F64 = adjit.float64


# --- tile_randi, tile_randf -------------------------------------------------------------------------

@adjit.kernel
def _warp_rand(seed: int, x: adjit.array2d(dtype=int), y: adjit.array2d(dtype=float)):
    i, j = adjit.tid()
    rng = adjit.rand_init(seed, i * 2 + j)
    ti = adjit.tile_randi(shape=(2, 2), rng=rng)
    tf = adjit.tile_randf(shape=(2, 2), rng=rng)
    adjit.tile_store(x, ti, offset=(i * 2, j * 2))
    adjit.tile_store(y, tf, offset=(i * 2, j * 2))


@adjit.kernel
def _warp_rand_range(seed: int, x: adjit.array2d(dtype=int), y: adjit.array2d(dtype=float)):
    i, j = adjit.tid()
    rng = adjit.rand_init(seed, i * 2 + j)
    ti = adjit.tile_randi(shape=(2, 2), rng=rng, min=-5, max=5)
    tf = adjit.tile_randf(shape=(2, 2), rng=rng, min=-5.0, max=5.0)
    adjit.tile_store(x, ti, offset=(i * 2, j * 2))
    adjit.tile_store(y, tf, offset=(i * 2, j * 2))


def test_tile_rand_gives_warps_cpu_values():
    """Warp's test_tile_rand (warp/tests/tile/test_tile.py), its CPU arrays."""
    x, y = adjit.zeros((4, 4), dtype=int), adjit.zeros((4, 4), dtype=float)
    adjit.launch_tiled(_warp_rand, dim=[2, 2], inputs=[42, x, y], block_dim=64)
    np.testing.assert_array_equal(x.numpy(), [[798497746, -1161279442, -955788638, -592663987],
                                              [-169969590, -744808085, -1145120241, -1771839996],
                                              [-257534450, 1235698096, 1145322783, -778367504],
                                              [-1563301394, 647964157, 1659888992, -215603549]])
    np.testing.assert_allclose(y.numpy(), [[0.1859147, 0.72961855, 0.7774631, 0.86200964],
                                           [0.96042585, 0.8265858, 0.7333809, 0.58746135],
                                           [0.9400381, 0.28770834, 0.26666623, 0.81877214],
                                           [0.6360155, 0.15086585, 0.386473, 0.94980085]], rtol=1e-7)
    adjit.launch_tiled(_warp_rand_range, dim=[2, 2], inputs=[42, x, y], block_dim=64)
    np.testing.assert_array_equal(x.numpy(), [[1, -1, 3, 4], [1, -4, 0, -5], [1, 1, -2, -3], [-3, 2, -3, 2]])
    np.testing.assert_allclose(y.numpy(), [[-3.140853, 2.2961855, 2.7746305, 3.6200962],
                                           [4.6042585, 3.2658587, 2.333809, 0.87461376],
                                           [4.400381, -2.1229167, -2.3333378, 3.1877213],
                                           [1.3601546, -3.4913416, -1.1352701, 4.4980087]], rtol=1e-6)


@adjit.kernel
def _rand_tiles(seed: int, lo: float, hi: float, ints: adjit.array2d(dtype=int), floats: adjit.array2d(dtype=float),
                ranged: adjit.array(dtype=int), franged: adjit.array(dtype=float), after: adjit.array(dtype=int)):
    i = adjit.tid()
    rng = adjit.rand_init(seed, i)
    adjit.tile_store(ints, adjit.tile_randi((3, 5), rng, storage="shared"), offset=(3 * i, 0))
    adjit.tile_store(floats, adjit.tile_randf(shape=(3, 5), rng=rng), offset=(3 * i, 0))
    adjit.tile_store(ranged, adjit.tile_randi(7, rng, -3, 1000), offset=7 * i)
    adjit.tile_store(franged, adjit.tile_randf(7, rng, min=lo, max=hi), offset=7 * i)
    after[i] = adjit.randi(rng)  # rng is read, not advanced


@adjit.kernel
def _rand_scalars(seed: int, lo: float, hi: float, ints: adjit.array2d(dtype=int), floats: adjit.array2d(dtype=float),
                  ranged: adjit.array(dtype=int), franged: adjit.array(dtype=float), after: adjit.array(dtype=int)):
    """The reference: the tile's stream pcg(rng) is rng's stream after its first draw."""
    i = adjit.tid()
    rng = adjit.rand_init(seed, i)
    after[i] = adjit.randi(rng)
    s = rng
    t = rng
    u = rng
    for r in range(3):
        for c in range(5):
            ints[3 * i + r, c] = adjit.randi(s)
            floats[3 * i + r, c] = adjit.randf(t)
    v = u
    for k in range(7):
        ranged[7 * i + k] = adjit.randi(u, -3, 1000)
        franged[7 * i + k] = adjit.randf(v, lo, hi)


def test_tile_rand_draws_each_element_row_major_from_the_hashed_state():
    n = 3
    outs = []
    for kernel in (_rand_tiles, _rand_scalars):
        arrays = [adjit.zeros((3 * n, 5), dtype=int), adjit.zeros((3 * n, 5), dtype=float),
                  adjit.zeros(7 * n, dtype=int), adjit.zeros(7 * n, dtype=float), adjit.zeros(n, dtype=int)]
        adjit.launch(kernel, dim=n, inputs=[7, -2.0, 3.0, *arrays])
        outs.append([a.numpy() for a in arrays])
    for tiled, scalar in zip(*outs):
        np.testing.assert_array_equal(tiled, scalar)  # bit for bit
    ranged, franged = outs[0][2], outs[0][3]
    assert ranged.min() >= -3 and ranged.max() < 1000 and len(set(ranged)) > 15
    assert franged.min() >= -2.0 and franged.max() < 3.0


@adjit.kernel
def _rand_bounds(lo: adjit.array(dtype=float), out: adjit.array(dtype=float)):
    rng = adjit.rand_init(3)
    adjit.tile_store(out, adjit.tile_randf(4, rng, lo[0], lo[0] + 1.0) * lo[1], offset=0)


def test_tile_randf_is_not_differentiable_its_bounds_get_no_gradient():
    lo = adjit.array(np.array([2.0, 3.0], dtype=np.float32), requires_grad=True)
    out = adjit.zeros(4, dtype=float, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(_rand_bounds, dim=1, inputs=[lo, out])
    tape.backward(grads={out: np.ones(4, dtype=np.float32)})
    values = out.numpy() / 3.0
    assert np.all((values >= 2.0) & (values < 3.0))
    np.testing.assert_allclose(lo.grad.numpy(), [0.0, values.sum()], rtol=1e-6)
    assert not adjit.builtin_registry()["tile_randf"].differentiable
    assert not adjit.builtin_registry()["tile_randi"].differentiable


# --- tile_scatter_add, tile_scatter_masked ---------------------------------------------------------

@adjit.kernel
def _scatters(data: adjit.array(dtype=F64), w: adjit.array(dtype=F64), counts: adjit.array(dtype=int),
              bins_out: adjit.array(dtype=F64), grid_out: adjit.array2d(dtype=F64), cube_out: adjit.array3d(dtype=F64)):
    bins = adjit.tile_zeros(shape=4, dtype=F64, storage="shared")
    grid = adjit.tile_full(shape=(2, 3), value=-1.0, dtype=F64)
    cube = adjit.tile_zeros(shape=(2, 2, 2), dtype=F64)
    n = adjit.tile_zeros(shape=4, dtype=int)
    for i in range(8):
        b = int(data[i] / 2.0)
        adjit.tile_scatter_add(bins, b, w[i] * data[i], True)
        adjit.tile_scatter_add(n, b, 1, w[i] > 2.0, atomic=False)
        adjit.tile_scatter_masked(grid, i % 2, i % 3, w[i] * w[i], i < 6)
        adjit.tile_scatter_add(cube, i // 4, j=(i // 2) % 2, k=i % 2, value=w[i], has_value=i != 5)
    adjit.tile_scatter_add(bins, 9, w[0], False)  # has_value False: an index outside is not checked
    adjit.tile_scatter_masked(grid, 0, 0, 7.0, data[0] > 100.0)
    if data[0] < 1.0:
        adjit.tile_scatter_masked(grid, 1, 2, data[1] * 5.0, True)
    adjit.tile_store(bins_out, bins, offset=0)
    adjit.tile_store(grid_out, grid)
    adjit.tile_store(cube_out, cube)
    adjit.tile_store(counts, n)


def _scatters_np(data, w):
    bins, grid, cube, counts = np.zeros(4), -np.ones((2, 3)), np.zeros((2, 2, 2)), np.zeros(4, dtype=int)
    for i in range(8):
        b = int(data[i] / 2.0)
        bins[b] += w[i] * data[i]
        counts[b] += w[i] > 2.0
        if i < 6:
            grid[i % 2, i % 3] = w[i] * w[i]
        if i != 5:
            cube[i // 4, (i // 2) % 2, i % 2] += w[i]
    if data[0] < 1.0:
        grid[1, 2] = data[1] * 5.0
    return bins, grid, cube, counts


def test_scatter_add_and_masked_write_one_element_per_call():
    data_np = np.array([0.5, 1.0, 2.5, 7.0, 4.5, 5.0, 6.5, 3.0])
    w_np = np.arange(1.0, 9.0)
    data, w = adjit.array(data_np), adjit.array(w_np)
    counts = adjit.zeros(4, dtype=int)
    outs = [adjit.zeros(4, dtype=F64), adjit.zeros((2, 3), dtype=F64), adjit.zeros((2, 2, 2), dtype=F64)]
    adjit.launch(_scatters, dim=1, inputs=[data, w, counts, *outs])
    for got, want in zip([*outs, counts], _scatters_np(data_np, w_np)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    check_gradients(_scatters, 1, [data, w, counts], outs)
    dw = np.linspace(-1.0, 1.0, 8)  # forward mode agrees (the bins are linear in w)
    d_bins = adjit.jvp(_scatters, 1, [data, w, counts], [None, dw], outputs=[adjit.zeros(4, dtype=F64),
                       adjit.zeros((2, 3), dtype=F64), adjit.zeros((2, 2, 2), dtype=F64)])[0]
    np.testing.assert_allclose(d_bins.numpy(), _scatters_np(data_np, dw)[0], rtol=1e-13, atol=1e-15)


@adjit.kernel
def _scatter_out_of_range(k: int, w: adjit.array(dtype=F64), out: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=3, dtype=F64)
    adjit.tile_scatter_add(t, k, w[0], True)
    adjit.tile_store(out, t)


def test_a_scatter_index_outside_the_tile_is_reported_and_writes_nothing():
    w, out = adjit.array(np.array([2.0])), adjit.zeros(3, dtype=F64)
    adjit.launch(_scatter_out_of_range, dim=1, inputs=[-3 + 5, w, out])
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0, 2.0])
    with pytest.raises(adjit.AdjitError, match=r"test_tile_random_scatter\.py:\d+.*out of range"):
        adjit.launch(_scatter_out_of_range, dim=1, inputs=[3, w, out])


@adjit.kernel
def _big_scatter(cells: adjit.array(dtype=int), w: adjit.array(dtype=F64), out: adjit.array2d(dtype=F64),
                 rows: adjit.array2d(dtype=F64)):
    t = adjit.tile_zeros(shape=(16, 8), dtype=F64, storage="shared")  # more scalars than a kernel vector holds
    for i in range(24):
        adjit.tile_scatter_add(t, cells[i] // 8, cells[i] % 8, w[i], True)
    adjit.tile_store(out, t)
    adjit.tile_store(rows, t[adjit.tile_arange(15, -1, -1, dtype=int), :])


def test_scatter_and_gather_on_a_tile_of_more_than_64_scalars():
    rng = np.random.default_rng(6)
    c, wv = rng.integers(0, 128, 24).astype(np.int32), rng.standard_normal(24)
    cells, w = adjit.array(c), adjit.array(wv)
    out, rows = adjit.zeros((16, 8), dtype=F64), adjit.zeros((16, 8), dtype=F64)
    adjit.launch(_big_scatter, dim=1, inputs=[cells, w, out, rows])
    want = np.zeros(128)
    np.add.at(want, c, wv)
    np.testing.assert_allclose(out.numpy(), want.reshape(16, 8), rtol=1e-14)
    np.testing.assert_allclose(rows.numpy(), want.reshape(16, 8)[::-1], rtol=1e-14)


# --- tile_slice_indexed, t[indices, :] -------------------------------------------------------------

@adjit.kernel
def _gathers(src: adjit.array2d(dtype=F64), idx: adjit.array(dtype=int), rows: adjit.array2d(dtype=F64),
             rows2: adjit.array2d(dtype=F64), cols: adjit.array2d(dtype=F64), flat: adjit.array(dtype=F64)):
    t = adjit.tile_load(src, shape=(4, 3))
    ind = adjit.tile_load(idx, shape=5)
    adjit.tile_store(rows, t[ind, :] * t[ind, :])
    adjit.tile_store(rows2, adjit.tile_slice_indexed(t, ind))
    adjit.tile_store(cols, t[:, adjit.tile_arange(4, dtype=int) - 2])
    v = adjit.tile_reshape(adjit.tile_load(src, shape=(1, 3), offset=(1, 0)), shape=3)
    picked = v[adjit.tile_arange(3, dtype=int) * 2 - 3]  # [-3, -1, 1]: [0, 2, 1]
    adjit.tile_store(flat, adjit.tile_slice_indexed(v, (adjit.tile_arange(5, dtype=int) - 2,)) + picked[1])


def test_slice_indexed_gathers_along_the_index_tiles_axis():
    rng = np.random.default_rng(4)
    s = rng.standard_normal((4, 3))
    i = np.array([3, 0, -1, 0, 2], dtype=np.int32)  # a duplicate and a negative index
    src, idx = adjit.array(s), adjit.array(i)
    outs = [adjit.zeros((5, 3), dtype=F64), adjit.zeros((5, 3), dtype=F64), adjit.zeros((4, 4), dtype=F64),
            adjit.zeros(5, dtype=F64)]
    adjit.launch(_gathers, dim=1, inputs=[src, idx, *outs])
    wants = [s[i] * s[i], s[i], s[:, [-2, -1, 0, 1]], s[1][[-2, -1, 0, 1, 2]] + s[1][2]]
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    check_gradients(_gathers, 1, [src, idx], outs)


@adjit.kernel
def _gather_sum(src: adjit.array2d(dtype=F64), idx: adjit.array(dtype=int), w: adjit.array2d(dtype=F64),
                out: adjit.array(dtype=F64)):
    t = adjit.tile_load(src, shape=(4, 3))
    g = t[adjit.tile_load(idx, shape=6), :]
    adjit.tile_store(out, adjit.tile_sum(g * adjit.tile_load(w, shape=(6, 3))))


def test_slice_indexed_duplicate_indices_sum_their_gradients():
    rng = np.random.default_rng(5)
    s, wv = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    i = np.array([0, 0, 3, 3, 1, 3], dtype=np.int32)
    src, idx, w = adjit.array(s, requires_grad=True), adjit.array(i), adjit.array(wv)
    out = adjit.zeros(1, dtype=F64, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(_gather_sum, dim=1, inputs=[src, idx, w, out])
    np.testing.assert_allclose(out.numpy(), [(s[i] * wv).sum()], rtol=1e-14)
    tape.backward(grads={out: np.ones(1)})
    want = np.zeros_like(s)
    np.add.at(want, i, wv)
    np.testing.assert_allclose(src.grad.numpy(), want, rtol=1e-15)
    d = rng.standard_normal((4, 3))  # forward mode agrees
    (dout,) = adjit.jvp(_gather_sum, 1, [src, idx, w], [d], outputs=[adjit.zeros(1, dtype=F64)])
    np.testing.assert_allclose(dout.numpy(), [(d * want).sum()], rtol=1e-13)


def test_a_gather_index_outside_the_tile_is_reported():
    s = adjit.array(np.ones((4, 3)))
    outs = [adjit.zeros((5, 3), dtype=F64), adjit.zeros((5, 3), dtype=F64), adjit.zeros((4, 4), dtype=F64),
            adjit.zeros(5, dtype=F64)]
    with pytest.raises(adjit.AdjitError, match=r"test_tile_random_scatter\.py:\d+.*out of range"):
        adjit.launch(_gathers, dim=1, inputs=[s, adjit.array(np.array([0, 1, 4, 0, 0], dtype=np.int32)), *outs])


# --- errors -----------------------------------------------------------------------------------------

def _compile_error(kernel, inputs):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.launch(kernel, dim=1, inputs=inputs)
    message = str(info.value)
    assert "test_tile_random_scatter.py" in message
    return message


@adjit.kernel
def _one_bound(a: adjit.array(dtype=float)):
    adjit.tile_store(a, adjit.tile_randf(4, adjit.rand_init(1), min=0.0), offset=0)


@adjit.kernel
def _float_rng(a: adjit.array(dtype=float)):
    adjit.tile_store(a, adjit.tile_randf(4, 1.5), offset=0)


@adjit.kernel
def _float_bounds_randi(a: adjit.array(dtype=int)):
    adjit.tile_store(a, adjit.tile_randi(4, adjit.rand_init(1), 0.0, 2.0), offset=0)


@adjit.kernel
def _bad_storage(a: adjit.array(dtype=int)):
    adjit.tile_store(a, adjit.tile_randi(4, adjit.rand_init(1), storage="global"), offset=0)


@adjit.kernel
def _too_few_indices(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_zeros(shape=(2, 2), dtype=F64)
    adjit.tile_scatter_add(t, 0, 1.0, True)


@adjit.kernel
def _extra_index(a: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=2, dtype=F64)
    adjit.tile_scatter_masked(t, 0, j=1, value=1.0, has_value=True)


@adjit.kernel
def _wrong_value_dtype(a: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=2, dtype=float)
    adjit.tile_scatter_add(t, 0, a[0], True)


@adjit.kernel
def _int_has_value(a: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=2, dtype=F64)
    adjit.tile_scatter_masked(t, 0, 1.0, 1)


@adjit.kernel
def _runtime_atomic(a: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=2, dtype=F64)
    adjit.tile_scatter_add(t, 0, 1.0, True, a[0] > 0.0)


@adjit.kernel
def _scatter_into_expression(a: adjit.array(dtype=F64)):
    t = adjit.tile_zeros(shape=2, dtype=F64)
    adjit.tile_scatter_add(t * 2.0, 0, 1.0, True)


@adjit.kernel
def _float_index_tile(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_zeros(shape=(2, 2), dtype=F64)
    adjit.tile_store(a, t[adjit.tile_arange(2, dtype=F64), :])


@adjit.kernel
def _partial_slice(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_zeros(shape=(2, 2), dtype=F64)
    adjit.tile_store(a, t[adjit.tile_arange(2, dtype=int), 0:1])


@adjit.kernel
def _two_index_tiles(a: adjit.array2d(dtype=F64)):
    t = adjit.tile_zeros(shape=(2, 2), dtype=F64)
    i = adjit.tile_arange(2, dtype=int)
    adjit.tile_store(a, t[i, i])


def test_bad_calls_are_errors_naming_the_line():
    f4, i4, d2, d1 = (adjit.zeros(4, dtype=float), adjit.zeros(4, dtype=int), adjit.zeros((2, 2), dtype=F64),
                      adjit.zeros(2, dtype=F64))
    assert "both 'min' and 'max'" in _compile_error(_one_bound, [f4])
    assert "uint32 random state" in _compile_error(_float_rng, [f4])
    assert "min must be an int scalar" in _compile_error(_float_bounds_randi, [i4])
    assert "'register' or 'shared'" in _compile_error(_bad_storage, [i4])
    assert "needs the argument 'has_value'" in _compile_error(_too_few_indices, [d2])
    assert "incorrect number of indices" in _compile_error(_extra_index, [d1])
    assert "must match the tile's dtype" in _compile_error(_wrong_value_dtype, [d1])
    assert "has_value must be a bool" in _compile_error(_int_has_value, [d1])
    assert "atomic must be a constant bool" in _compile_error(_runtime_atomic, [d1])
    assert "pass a local tile variable" in _compile_error(_scatter_into_expression, [d1])
    assert "1-d integer index tile" in _compile_error(_float_index_tile, [d2])
    assert "requires ':' on all other axes" in _compile_error(_partial_slice, [d2])
    assert "requires ':' on all other axes" in _compile_error(_two_index_tiles, [d2])


def test_registry_entries():
    registry = adjit.builtin_registry()
    for name in ("tile_randi", "tile_randf", "tile_scatter_add", "tile_scatter_masked", "tile_slice_indexed"):
        assert registry[name].tile and registry[name].doc
        with pytest.raises((TypeError, adjit.AdjitError), match=name):  # kernel-only
            getattr(adjit, name)([1.0])
    assert registry["tile_scatter_add"].rebinds == (0,) and registry["tile_scatter_masked"].rebinds == (0,)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize("name, adjoint", [("_warp_rand_range", False), ("_scatters", False), ("_scatters", True),
                                           ("_gathers", False), ("_gathers", True)])
def test_ptx_of_the_kernels_assembles(tmp_path, name, adjoint):
    ptx = adjit.compile(globals()[name], target="cuda", arch="sm_80", adjoint=adjoint)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
