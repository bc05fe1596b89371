"""warp.utils extras (issue 26, item 4): segmented_sort_pairs,
runlength_encode, array_cast, against numpy."""
import numpy as np
import pytest

import adjit as wp
from adjit import utils

RNG = np.random.default_rng(4)


# --- segmented_sort_pairs -------------------------------------------------------------------------


@pytest.mark.parametrize("key_type", [np.int32, np.float32])
def test_segmented_sort_pairs_sorts_each_segment_stably(key_type):
    count = 12
    keys_np = RNG.integers(-5, 5, 2 * count).astype(key_type)
    if key_type is np.float32:
        keys_np[:count] += RNG.choice([0.0, 0.5], count).astype(np.float32)
    values_np = np.arange(2 * count, dtype=np.int32)
    starts = np.array([0, 3, 3, 8, 12], np.int32)  # segments [0,3) [3,3) [3,8) [8,12)
    keys, values = wp.array(keys_np, dtype=wp.dtype_from_numpy(key_type)), wp.array(values_np, dtype=wp.int32)
    utils.segmented_sort_pairs(keys, values, count, wp.array(starts, dtype=wp.int32))
    want_k, want_v = keys_np.copy(), values_np.copy()
    for a, b in zip(starts[:-1], starts[1:]):
        order = np.argsort(keys_np[a:b], kind="stable")
        want_k[a:b], want_v[a:b] = keys_np[a:b][order], values_np[a:b][order]
    np.testing.assert_array_equal(keys.numpy(), want_k)
    np.testing.assert_array_equal(values.numpy(), want_v)


def test_segmented_sort_pairs_with_end_indices_leaves_gaps_alone():
    keys_np = np.array([5, 4, 3, 2, 1, 0, 9, 8, 0, 0, 0, 0, 0, 0, 0, 0], np.int32)
    keys, values = wp.array(keys_np, dtype=wp.int32), wp.array(np.arange(16, dtype=np.int32), dtype=wp.int32)
    utils.segmented_sort_pairs(keys, values, 8, wp.array(np.array([0, 4], np.int32), dtype=wp.int32),
                               wp.array(np.array([3, 8], np.int32), dtype=wp.int32))
    np.testing.assert_array_equal(keys.numpy()[:8], [3, 4, 5, 2, 0, 1, 8, 9])  # element 3 in no segment
    np.testing.assert_array_equal(values.numpy()[:8], [2, 1, 0, 3, 5, 4, 7, 6])


def test_segmented_sort_pairs_float_keys_order_negative_zero_first():
    keys = wp.array(np.array([0.0, -0.0, -1.0, 2.0, 0, 0, 0, 0], np.float32), dtype=wp.float32)
    values = wp.array(np.arange(8, dtype=np.int32), dtype=wp.int32)
    utils.segmented_sort_pairs(keys, values, 4, wp.array(np.array([0, 4], np.int32), dtype=wp.int32))
    np.testing.assert_array_equal(values.numpy()[:4], [2, 1, 0, 3])


def test_segmented_sort_pairs_bad_inputs_are_clear():
    keys, values = wp.zeros(8, dtype=wp.int32), wp.zeros(8, dtype=wp.int32)
    starts = wp.array(np.array([0, 5], np.int32), dtype=wp.int32)
    with pytest.raises(ValueError, match="2\\*count = 10"):
        utils.segmented_sort_pairs(keys, values, 5, starts)
    with pytest.raises(ValueError, match="segment 0 is not within"):
        utils.segmented_sort_pairs(keys, values, 4, starts)
    with pytest.raises(TypeError, match="keys of float64"):
        utils.segmented_sort_pairs(wp.zeros(8, dtype=wp.float64), values, 4, starts)
    with pytest.raises(TypeError, match="segment_start_indices must be an array of int32"):
        utils.segmented_sort_pairs(keys, values, 4, wp.zeros(2, dtype=wp.int64))


# --- runlength_encode -------------------------------------------------------------------------------


def _runs(a):
    starts = [0] + [k for k in range(1, len(a)) if a[k] != a[k - 1]]
    return [a[s] for s in starts], [e - s for s, e in zip(starts, starts[1:] + [len(a)])]


def test_runlength_encode_matches_numpy():
    data = np.repeat(RNG.integers(-3, 3, 20), RNG.integers(1, 4, 20)).astype(np.int32)
    values = wp.array(data, dtype=wp.int32)
    run_values, run_lengths = wp.zeros(len(data), dtype=wp.int32), wp.zeros(len(data), dtype=wp.int32)
    n = utils.runlength_encode(values, run_values, run_lengths)
    want_values, want_lengths = _runs(list(data))
    assert n == len(want_values)
    np.testing.assert_array_equal(run_values.numpy()[:n], want_values)
    np.testing.assert_array_equal(run_lengths.numpy()[:n], want_lengths)
    count = wp.zeros(1, dtype=wp.int32)
    assert utils.runlength_encode(values, run_values, run_lengths, count, value_count=7) is count
    want_values, want_lengths = _runs(list(data[:7]))
    assert count.numpy()[0] == len(want_values)
    np.testing.assert_array_equal(run_lengths.numpy()[:len(want_lengths)], want_lengths)
    assert utils.runlength_encode(values, run_values, run_lengths, value_count=0) == 0
    utils.runlength_encode(values, run_values, run_lengths, count, value_count=0)
    assert count.numpy()[0] == 0


def test_runlength_encode_bad_inputs_are_clear():
    values = wp.zeros(4, dtype=wp.int32)
    with pytest.raises(ValueError, match="value_count = 4"):
        utils.runlength_encode(values, wp.zeros(3, dtype=wp.int32), wp.zeros(4, dtype=wp.int32))
    with pytest.raises(TypeError, match="values must be an array of int32"):
        utils.runlength_encode(wp.zeros(4), wp.zeros(4), wp.zeros(4, dtype=wp.int32))
    with pytest.raises(ValueError, match="non-negative"):
        utils.runlength_encode(values, values, wp.zeros(4, dtype=wp.int32), value_count=-1)


# --- array_cast --------------------------------------------------------------------------------------


def test_array_cast_converts_as_kernels_do():
    data = np.array([-2.7, -0.5, 0.0, 0.5, 3.9], np.float64)
    out = wp.zeros(5, dtype=wp.int32)
    utils.array_cast(wp.array(data, dtype=wp.float64), out)
    np.testing.assert_array_equal(out.numpy(), [-2, 0, 0, 0, 3])  # truncation, as a C cast
    half = wp.zeros(5, dtype=wp.float16)
    utils.array_cast(wp.array(data, dtype=wp.float64), half, count=3)
    np.testing.assert_array_equal(half.numpy(), np.concatenate([data[:3].astype(np.float16), [0, 0]]))
    flags = wp.zeros(5, dtype=wp.bool)
    utils.array_cast(wp.array(data, dtype=wp.float64), flags)
    np.testing.assert_array_equal(flags.numpy(), data != 0)


def test_array_cast_vectors_and_flattening():
    v = RNG.uniform(-2, 2, (4, 3))
    out = wp.zeros(4, dtype=wp.vec3)
    utils.array_cast(wp.array(v, dtype=wp.vec3d), out)
    np.testing.assert_array_equal(out.numpy(), v.astype(np.float32))
    flat = wp.zeros(12, dtype=wp.float32)  # another component shape: scalars in order
    utils.array_cast(wp.array(v, dtype=wp.vec3d), flat, count=2)
    np.testing.assert_array_equal(flat.numpy(), np.concatenate([v[:2].reshape(-1).astype(np.float32),
                                                                np.zeros(6, np.float32)]))
    grid = wp.zeros((2, 3), dtype=wp.int64)
    utils.array_cast(wp.array(np.arange(6, dtype=np.int32).reshape(2, 3), dtype=wp.int32), grid)
    np.testing.assert_array_equal(grid.numpy(), np.arange(6).reshape(2, 3))


def test_array_cast_bad_inputs_are_clear():
    with pytest.raises(ValueError, match="partial cast"):
        utils.array_cast(wp.zeros((2, 3)), wp.zeros((2, 3), dtype=wp.float64), count=2)
    with pytest.raises(ValueError, match="do not fit"):
        utils.array_cast(wp.zeros(6), wp.zeros(4, dtype=wp.float64))
    with pytest.raises(ValueError, match="do not match"):
        utils.array_cast(wp.zeros((2, 3)), wp.zeros((3, 2), dtype=wp.float64))
