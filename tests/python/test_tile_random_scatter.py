"""Random tiles (adjit/compiler/tile_random.py): tile_randi and tile_randf
bit for bit against Warp's own CPU values and adjit's scalar draws, and bad
calls as errors naming this file."""
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


def test_bad_calls_are_errors_naming_the_line():
    f4, i4 = adjit.zeros(4, dtype=float), adjit.zeros(4, dtype=int)
    assert "both 'min' and 'max'" in _compile_error(_one_bound, [f4])
    assert "uint32 random state" in _compile_error(_float_rng, [f4])
    assert "min must be an int scalar" in _compile_error(_float_bounds_randi, [i4])
    assert "'register' or 'shared'" in _compile_error(_bad_storage, [i4])


def test_registry_entries():
    registry = adjit.builtin_registry()
    for name in ("tile_randi", "tile_randf"):
        assert registry[name].tile and registry[name].doc
        with pytest.raises((TypeError, adjit.AdjitError), match=name):  # kernel-only
            getattr(adjit, name)([1.0])
