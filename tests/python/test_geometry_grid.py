"""adjit.Bvh and its kernel queries (adjit/geometry/): results against
brute-force numpy references, refit, and the errors."""
import gc

import numpy as np
import pytest

import adjit as wp

# --- kernels --------------------------------------------------------------------------------


@wp.kernel
def bvh_boxes(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
              hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_aabb(bvh, lo[i], hi[i])
    item = int(0)
    while wp.bvh_query_next(query, item):
        hits[i, item] = hits[i, item] + 1


@wp.kernel
def bvh_rays(bvh: wp.uint64, start: wp.array(dtype=wp.vec3), dir: wp.array(dtype=wp.vec3),
             max_dist: float, hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_ray(bvh, start[i], dir[i])
    item = int(0)
    while wp.bvh_query_next(query, item, max_dist):
        hits[i, item] = hits[i, item] + 1


@wp.kernel
def bvh_rays_default(bvh: wp.uint64, start: wp.array(dtype=wp.vec3), dir: wp.array(dtype=wp.vec3),
                     hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_ray(bvh, start[i], dir[i])
    item = int(0)
    while wp.bvh_query_next(query, item):
        hits[i, item] = hits[i, item] + 1


# --- references -----------------------------------------------------------------------------

def _vec3(a, **kw):
    return wp.array(np.ascontiguousarray(a, np.float32), dtype=wp.vec3, **kw)


def _random_boxes(rng, n):
    lo = rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32)
    return lo, lo + rng.uniform(0.0, 0.3, (n, 3)).astype(np.float32)


def _overlaps(lo, hi, qlo, qhi):
    """[query, item]: closed boxes overlap."""
    return np.all(lo[None] <= qhi[:, None], axis=2) & np.all(hi[None] >= qlo[:, None], axis=2)


def _ray_entries(lo, hi, start, dir):
    """[ray, item]: where the ray's line enters the box if the ray (t >= 0)
    meets it, else inf (Warp's slab test, float32 as the kernel)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = (np.float32(1.0) / dir.astype(np.float32))[:, None]
        t0 = (lo[None] - start[:, None]) * inv
        t1 = (hi[None] - start[:, None]) * inv
    enter = np.minimum(t0, t1).max(axis=2)
    leave = np.maximum(t0, t1).min(axis=2)
    return np.where((leave >= 0) & (leave >= enter), enter, np.inf)


def _run_boxes(bvh, qlo, qhi, n):
    hits = wp.zeros((len(qlo), n), dtype=int)
    wp.launch(bvh_boxes, dim=len(qlo), inputs=[bvh.id, _vec3(qlo), _vec3(qhi), hits])
    return hits.numpy()


def _run_rays(bvh, start, dir, n, max_dist=None):
    hits = wp.zeros((len(start), n), dtype=int)
    if max_dist is None:
        wp.launch(bvh_rays_default, dim=len(start), inputs=[bvh.id, _vec3(start), _vec3(dir), hits])
    else:
        wp.launch(bvh_rays, dim=len(start), inputs=[bvh.id, _vec3(start), _vec3(dir), max_dist, hits])
    return hits.numpy()


# --- Bvh ------------------------------------------------------------------------------------

@pytest.mark.parametrize("leaf_size", [1, 4])
def test_bvh_box_queries_match_brute_force(leaf_size):
    rng = np.random.default_rng(0)
    lo, hi = _random_boxes(rng, 150)
    bvh = wp.Bvh(_vec3(lo), _vec3(hi), leaf_size=leaf_size)
    qlo = rng.uniform(-1.3, 1.0, (60, 3)).astype(np.float32)
    qhi = qlo + rng.uniform(0.0, 0.6, (60, 3)).astype(np.float32)
    qlo[0], qhi[0] = -5.0, 5.0  # everything
    qlo[1], qhi[1] = 3.0, 4.0  # nothing
    qlo[2], qhi[2] = hi[7], hi[7] + 1.0  # touching item 7's upper corner (closed boxes)
    qlo[3], qhi[3] = lo[8] - 1.0, lo[8]  # touching item 8's lower corner
    ref = _overlaps(lo, hi, qlo, qhi)
    assert ref[0].all() and not ref[1].any() and ref[2, 7] and ref[3, 8] and 0 < ref[4:].sum() < ref[4:].size
    np.testing.assert_array_equal(_run_boxes(bvh, qlo, qhi, len(lo)), ref.astype(int))


def test_bvh_warp_doc_example():
    # Warp's bvh_query_aabb docstring example and its output
    lowers = wp.array([[0, 0, 0], [2, 0, 0], [4, 0, 0]], dtype=wp.vec3)
    uppers = wp.array([[1, 1, 1], [3, 1, 1], [5, 1, 1]], dtype=wp.vec3)
    bvh = wp.Bvh(lowers=lowers, uppers=uppers)

    @wp.kernel
    def query_region(bvh_id: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                     lo: wp.vec3, hi: wp.vec3, centers: wp.array(dtype=wp.vec3)):
        query = wp.bvh_query_aabb(bvh_id, lo, hi)
        item = int(0)
        while wp.bvh_query_next(query, item):
            centers[item] = 0.5 * (lowers[item] + uppers[item])

    centers = wp.zeros(3, dtype=wp.vec3)
    wp.launch(query_region, dim=1, inputs=[bvh.id, lowers, uppers, wp.vec3(0.5, 0.5, 0.5),
                                           wp.vec3(2.5, 0.5, 0.5), centers])
    assert centers.numpy().tolist() == [[0.5, 0.5, 0.5], [2.5, 0.5, 0.5], [0.0, 0.0, 0.0]]


def test_bvh_ray_queries_match_brute_force():
    rng = np.random.default_rng(1)
    lo, hi = _random_boxes(rng, 200)
    bvh = wp.Bvh(_vec3(lo), _vec3(hi))
    start = rng.uniform(-2.0, 2.0, (80, 3)).astype(np.float32)
    dir = rng.normal(size=(80, 3)).astype(np.float32)
    start[0], dir[0] = 0.5 * (lo[3] + hi[3]), [0.3, -0.2, 0.9]  # from inside item 3
    start[1], dir[1] = [-3.0, 0.05, 0.1], [1.0, 0.0, 0.0]  # axis-aligned (1 / 0 = inf)
    start[2], dir[2] = [0.11, 0.13, -3.0], [0.0, 0.0, 1.0]
    start[3], dir[3] = [3.0, 3.0, 3.0], [1.0, 1.0, 1.0]  # away from every box
    entries = _ray_entries(lo, hi, start, dir)
    ref = np.isfinite(entries)
    assert ref[0, 3] and ref[1].any() and ref[2].any() and not ref[3].any()
    assert 0 < ref.sum() < ref.size
    assert (np.isfinite(_ray_entries(lo, hi, start, -dir)) & ~ref).any()  # boxes behind the starts: not hit
    np.testing.assert_array_equal(_run_rays(bvh, start, dir, len(lo)), ref.astype(int))
    # max_dist (in multiples of |dir|) drops the boxes the ray enters at t >= max_dist
    near = (entries < 1.0).astype(int)
    assert 0 < near.sum() < ref.sum()
    np.testing.assert_array_equal(_run_rays(bvh, start, dir, len(lo), 1.0), near)


def test_bvh_refit_after_moving_bounds():
    rng = np.random.default_rng(2)
    lo, hi = _random_boxes(rng, 120)
    lowers, uppers = _vec3(lo), _vec3(hi)
    bvh = wp.Bvh(lowers, uppers)
    qlo = rng.uniform(-1.3, 3.0, (50, 3)).astype(np.float32)
    qhi = qlo + rng.uniform(0.0, 0.8, (50, 3)).astype(np.float32)
    # move half of the boxes far away, in place
    moved = np.arange(0, 120, 2)
    lo2, hi2 = lo.copy(), hi.copy()
    lo2[moved] += 2.0
    hi2[moved] += 2.0
    lowers.numpy()[:] = lo2
    uppers.numpy()[:] = hi2
    ref = _overlaps(lo2, hi2, qlo, qhi)
    stale = _run_boxes(bvh, qlo, qhi, len(lo))
    assert not np.array_equal(stale, ref.astype(int))  # the tree's nodes still bound the old boxes
    bvh.refit()
    np.testing.assert_array_equal(_run_boxes(bvh, qlo, qhi, len(lo)), ref.astype(int))
    start = rng.uniform(-2.0, 4.0, (40, 3)).astype(np.float32)
    dir = rng.normal(size=(40, 3)).astype(np.float32)
    np.testing.assert_array_equal(_run_rays(bvh, start, dir, len(lo)),
                                  np.isfinite(_ray_entries(lo2, hi2, start, dir)).astype(int))


# --- errors ---------------------------------------------------------------------------------

def test_bvh_refuses_wrong_inputs():
    lo = _vec3(np.zeros((3, 3)))
    with pytest.raises(TypeError, match="Bvh lowers must be a contiguous 1-d adjit array of vec3"):
        wp.Bvh(wp.zeros(3, dtype=float), lo)
    with pytest.raises(TypeError, match="Bvh uppers must be a contiguous 1-d adjit array of vec3"):
        wp.Bvh(lo, wp.zeros(3, dtype=wp.vec3d))
    with pytest.raises(TypeError, match="Bvh lowers"):
        wp.Bvh(np.zeros((3, 3), np.float32), lo)
    with pytest.raises(ValueError, match="as many boxes, got 3 and 2"):
        wp.Bvh(lo, _vec3(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="at least one box"):
        wp.Bvh(_vec3(np.zeros((0, 3))), _vec3(np.zeros((0, 3))))
    with pytest.raises(ValueError, match="constructor"):
        wp.Bvh(lo, lo, constructor="octree")
    with pytest.raises(wp.NotInAdjitError, match="grouped BVHs"):
        wp.Bvh(lo, lo, groups=wp.zeros(3, dtype=wp.int32))


def test_stale_and_foreign_ids_fail_clearly():
    bvh = wp.Bvh(_vec3(np.zeros((2, 3))), _vec3(np.ones((2, 3))))
    mesh = wp.Mesh(_vec3(np.eye(3)), wp.array([0, 1, 2], dtype=wp.int32))
    bvh_id = bvh.id
    q = _vec3(np.zeros((1, 3)))
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.Bvh"):
        wp.launch(bvh_boxes, dim=1, inputs=[mesh.id, q, q, wp.zeros((1, 2), dtype=int)])
    del bvh
    gc.collect()
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.Bvh"):
        wp.launch(bvh_boxes, dim=1, inputs=[bvh_id, q, q, wp.zeros((1, 2), dtype=int)])
