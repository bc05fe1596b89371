"""adjit.Bvh and adjit.HashGrid and their kernel queries (adjit/geometry/):
results against brute-force numpy references, refit, a neighbour sum and
its gradient, and the errors."""
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


@wp.kernel
def grid_candidates(grid: wp.uint64, queries: wp.array(dtype=wp.vec3), max_dist: float,
                    hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.hash_grid_query(grid, queries[i], max_dist)
    j = int(0)
    while wp.hash_grid_query_next(query, j):
        hits[i, j] = hits[i, j] + 1


@wp.kernel
def grid_point_ids(grid: wp.uint64, ids: wp.array(dtype=int)):
    i = wp.tid()
    ids[i] = wp.hash_grid_point_id(grid, i)


@wp.kernel
def density(grid: wp.uint64, x: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), h: float,
            rho: wp.array(dtype=float)):
    """rho_i = w_i * sum_j (h^2 - |x_i - x_j|^2)^3 over |x_i - x_j| < h (SPH-like)."""
    t = wp.tid()
    i = wp.hash_grid_point_id(grid, t)
    p = x[i]
    query = wp.hash_grid_query(grid, p, h)
    j = int(0)
    s = float(0.0)
    while wp.hash_grid_query_next(query, j):
        d = p - x[j]
        r2 = wp.dot(d, d)
        if r2 < h * h:
            c = h * h - r2
            s += c * c * c
    rho[i] = w[i] * s


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


def _cells(p, inv):
    """Integer cell coordinates of float32 points (Warp: floor(p * (1 / width)) in float32)."""
    return np.floor(np.asarray(p, np.float32) * np.float32(inv)).astype(np.int64)


def _entry(c, dims):
    """Warp's hash_grid_index of integer cell coordinates."""
    c = np.maximum(c + (1 << 20), 0) % np.asarray(dims)
    return c[..., 2] * dims[0] * dims[1] + c[..., 1] * dims[0] + c[..., 0]


def _warp_candidates(points, queries, max_dist, radius, dims):
    """[query, point]: 1 where Warp's hash grid query yields the point: it
    lies in a table entry of the cells the box query +- max_dist overlaps (at
    most one pass along each axis)."""
    inv = np.float32(1.0) / np.float32(radius)
    entry = _entry(_cells(points, inv), dims)
    r = np.float32(max_dist)
    out = np.zeros((len(queries), len(points)), int)
    for i, q in enumerate(np.asarray(queries, np.float32)):
        start = _cells(q - r, inv)
        end = np.minimum(_cells(q + r, inv), start + np.asarray(dims) - 1)
        axes = [np.arange(s, e + 1) for s, e in zip(start, end)]
        visited = {int(_entry(np.array([x, y, z]), dims)) for z in axes[2] for y in axes[1] for x in axes[0]}
        out[i] = np.isin(entry, list(visited))
    return out


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


# --- HashGrid -------------------------------------------------------------------------------

def _lattice_points(rng):
    """Points on the cell borders (multiples of 0.5, negative ones too) and random ones."""
    lattice = np.stack(np.meshgrid(*[np.arange(-4, 4) * 0.5] * 3, indexing="ij"), -1).reshape(-1, 3)
    scattered = rng.uniform(-2.7, 2.3, (200, 3))
    return np.concatenate([lattice, scattered]).astype(np.float32)


@pytest.mark.parametrize("dims", [(4, 3, 5), (128, 128, 128)])
def test_hash_grid_candidates_are_warps_and_hold_every_neighbour(dims):
    rng = np.random.default_rng(3)
    points = _lattice_points(rng)
    radius, max_dist = 0.5, 0.6
    grid = wp.HashGrid(*dims)
    grid.build(_vec3(points), radius)
    queries = np.concatenate([points[::3], rng.uniform(-3.0, 3.0, (40, 3)).astype(np.float32)])
    hits = wp.zeros((len(queries), len(points)), dtype=int)
    wp.launch(grid_candidates, dim=len(queries), inputs=[grid.id, _vec3(queries), max_dist, hits])
    got = hits.numpy()
    warp = _warp_candidates(points, queries, max_dist, radius, dims)
    np.testing.assert_array_equal(got, warp)  # each point once, exactly Warp's candidates
    dist = np.linalg.norm(queries[:, None].astype(np.float64) - points[None], axis=2)
    within = dist <= max_dist
    assert within.sum() > len(queries) and (within <= (got == 1)).all()  # every neighbour is a candidate
    if dims == (128, 128, 128):  # no wrap-around in range: the candidates are the visited cells' points
        assert got.sum() < 0.2 * got.size


def test_hash_grid_query_larger_than_the_table_visits_each_entry_once():
    rng = np.random.default_rng(4)
    points = rng.uniform(-3.0, 3.0, (100, 3)).astype(np.float32)
    grid = wp.HashGrid(3, 2, 4)
    grid.build(_vec3(points), 0.25)
    hits = wp.zeros((2, 100), dtype=int)
    wp.launch(grid_candidates, dim=2, inputs=[grid.id, _vec3(points[:2]), 10.0, hits])
    np.testing.assert_array_equal(hits.numpy(), 1)


def test_hash_grid_point_id_is_the_sorted_order():
    rng = np.random.default_rng(5)
    points = _lattice_points(rng)
    dims = (7, 5, 6)
    grid = wp.HashGrid(*dims)
    grid.build(_vec3(points), 0.5)
    ids = wp.zeros(len(points), dtype=int)
    wp.launch(grid_point_ids, dim=len(points), inputs=[grid.id, ids])
    order = ids.numpy()
    entry = _entry(_cells(points, np.float32(2.0)), dims)
    np.testing.assert_array_equal(np.sort(order), np.arange(len(points)))
    np.testing.assert_array_equal(order, np.argsort(entry, kind="stable"))  # by cell, stable (Warp's radix sort)


def test_hash_grid_rebuild_and_reserve():
    rng = np.random.default_rng(6)
    grid = wp.HashGrid(8, 8, 8)
    grid.reserve(10)
    queries = rng.uniform(-1.0, 1.0, (20, 3)).astype(np.float32)
    for n, radius in ((50, 0.3), (400, 0.2), (30, 0.5)):  # grows past the reserve, then shrinks
        points = rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32)
        grid.build(_vec3(points), radius)
        hits = wp.zeros((20, n), dtype=int)
        wp.launch(grid_candidates, dim=20, inputs=[grid.id, _vec3(queries), radius, hits])
        np.testing.assert_array_equal(hits.numpy(), _warp_candidates(points, queries, radius, radius, (8, 8, 8)))


def test_hash_grid_not_built_finds_nothing():
    grid = wp.HashGrid(4, 4, 4)
    hits = wp.zeros((1, 3), dtype=int)
    wp.launch(grid_candidates, dim=1, inputs=[grid.id, _vec3([[0.0, 0.0, 0.0]]), 1.0, hits])
    ids = wp.zeros(2, dtype=int)
    wp.launch(grid_point_ids, dim=2, inputs=[grid.id, ids])
    assert hits.numpy().sum() == 0 and ids.numpy().tolist() == [-1, -1]


def _density_reference(p, w, h):
    p = p.astype(np.float64)
    d = p[:, None] - p[None]
    c = np.where((d ** 2).sum(-1) < h * h, h * h - (d ** 2).sum(-1), 0.0)
    rho = w * (c ** 3).sum(1)
    # d/dx_k of sum_i rho_i: -6 sum_j (w_k + w_j) c_kj^2 (x_k - x_j)
    grad = -6.0 * (((w[:, None] + w[None]) * c ** 2)[..., None] * d).sum(1)
    return rho, grad


def _density_setup(seed=7, n=300, h=0.4):
    rng = np.random.default_rng(seed)
    points = rng.uniform(-2.0, 2.0, (n, 3)).astype(np.float32)
    weights = rng.uniform(0.5, 1.5, n).astype(np.float32)
    grid = wp.HashGrid(16, 16, 16)
    grid.build(_vec3(points), h)
    return points, weights, grid, h


def test_neighbour_sum_matches_numpy():
    points, weights, grid, h = _density_setup()
    rho = wp.zeros(len(points), dtype=float)
    wp.launch(density, dim=len(points), inputs=[grid.id, _vec3(points), wp.array(weights, dtype=float), h, rho])
    ref, _ = _density_reference(points, weights.astype(np.float64), h)
    assert (ref > weights * h ** 6).sum() > 100  # most points have neighbours besides themselves
    np.testing.assert_allclose(rho.numpy(), ref, rtol=2e-6, atol=1e-9)


def test_neighbour_sum_gradient_with_respect_to_positions():
    points, weights, grid, h = _density_setup()
    x = _vec3(points, requires_grad=True)
    w = wp.array(weights, dtype=float)
    rho = wp.zeros(len(points), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(density, dim=len(points), inputs=[grid.id, x, w, h, rho])
    tape.backward(grads={rho: wp.ones(len(points), dtype=float)})
    _, ref = _density_reference(points, weights.astype(np.float64), h)
    got = x.grad.numpy()
    scale = np.abs(ref).max()
    assert scale > 0 and (np.abs(ref) > 0.01 * scale).sum() > 300
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6 * scale)
    # and against float64 central differences of the reference sum at a few coordinates
    for k, axis in ((0, 0), (17, 1), (123, 2)):
        def total(p):
            return _density_reference(p, weights.astype(np.float64), h)[0].sum()
        e = 1e-6
        hi_, lo_ = points.astype(np.float64), points.astype(np.float64)
        hi_[k, axis] += e
        lo_[k, axis] -= e
        fd = (total(hi_) - total(lo_)) / (2 * e)
        assert abs(fd - ref[k, axis]) <= 1e-6 * scale
        assert abs(got[k, axis] - fd) <= 2e-6 * scale


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


def test_hash_grid_refuses_wrong_inputs():
    with pytest.raises(TypeError, match="dimensions must be integers"):
        wp.HashGrid(4.0, 4, 4)
    with pytest.raises(ValueError, match="dimensions must be positive"):
        wp.HashGrid(4, 0, 4)
    with pytest.raises(wp.AdjitError, match="CPU only"):
        wp.HashGrid(4, 4, 4, device="cuda:0")
    with pytest.raises(wp.NotInAdjitError, match="only float32"):
        wp.HashGrid(4, 4, 4, dtype=wp.float64)
    grid = wp.HashGrid(4, 4, 4)
    with pytest.raises(TypeError, match="HashGrid points must be an adjit array of vec3"):
        grid.build(wp.zeros(3, dtype=wp.vec3d), 1.0)
    with pytest.raises(TypeError, match="HashGrid points must be an adjit array of vec3"):
        grid.build(wp.zeros(3, dtype=float), 1.0)
    with pytest.raises(ValueError, match="must be positive, got 0.0"):
        grid.build(_vec3(np.zeros((3, 3))), 0.0)


def test_stale_and_foreign_ids_fail_clearly():
    lo = _vec3(np.zeros((2, 3)))
    bvh = wp.Bvh(lo, _vec3(np.ones((2, 3))))
    grid = wp.HashGrid(4, 4, 4)
    grid.build(_vec3(np.zeros((2, 3))), 1.0)
    bvh_id, grid_id = bvh.id, grid.id
    q = _vec3(np.zeros((1, 3)))
    # each other's ids: refused by the kind check
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.Bvh"):
        wp.launch(bvh_boxes, dim=1, inputs=[grid_id, q, q, wp.zeros((1, 2), dtype=int)])
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.HashGrid"):
        wp.launch(grid_candidates, dim=1, inputs=[bvh_id, q, 1.0, wp.zeros((1, 2), dtype=int)])
    del bvh, grid
    gc.collect()
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.Bvh"):
        wp.launch(bvh_boxes, dim=1, inputs=[bvh_id, q, q, wp.zeros((1, 2), dtype=int)])
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.HashGrid"):
        wp.launch(grid_candidates, dim=1, inputs=[grid_id, q, 1.0, wp.zeros((1, 2), dtype=int)])
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.HashGrid"):
        wp.launch(grid_point_ids, dim=1, inputs=[grid_id, wp.zeros(1, dtype=int)])
