"""Warp 1.19's further mesh queries and geometry helpers (adjit/geometry,
docs/geometry.md): the winding-number sign, the furthest point, any-hit and
crossing-count rays, closest_point_edge_edge and intersect_tri_tri, against
float64 brute-force references over every face, gradients against float64
central differences, and (where warp-lang is importable) against Warp."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import adjit as wp
from adjit.geometry import mesh_queries as MQ
from adjit.geometry.bvh import build_tree, triangle_bounds
from adjit.geometry.winding import far_solid_angle, winding_data
from test_geometry import closest_on_triangles, corners, make_mesh, ray_hits, triangle_soup, uv_sphere


def exact_winding(pts, tris, qs):
    """float64: the winding number at each of ``qs``, summing every face's
    solid angle (Van Oosterom-Strackee)."""
    out = []
    for q in np.asarray(qs, np.float64):
        a, b, c = (x - q for x in corners(pts, tris))
        la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
        num = np.einsum("ij,ij->i", a, np.cross(b, c))
        den = la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", a, c) * lb \
            + np.einsum("ij,ij->i", b, c) * la
        out.append(2 * np.arctan2(num, den).sum() / (4 * np.pi))
    return np.array(out)


def open_sphere():
    """A sphere (faces outward) with two holes: the faces around the +z and
    +x poles removed."""
    pts, tris = uv_sphere(rings=16, segments=32)
    centre = pts[tris].mean(axis=1)
    keep = (centre[:, 2] < 0.8) & (centre[:, 0] < 0.8)
    return pts, tris[keep]


def shell_points(n, seed, inner=(0.05, 0.9), outer=(1.1, 2.0)):
    rng = np.random.default_rng(seed)
    d = rng.normal(size=(2 * n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = np.concatenate([rng.uniform(*inner, n), rng.uniform(*outer, n)])
    return (d * r[:, None]).astype(np.float32), r


# --- the winding number ---------------------------------------------------------------------

@wp.kernel
def winding_sign_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), accuracy: float, threshold: float,
                        found: wp.array(dtype=int), sign: wp.array(dtype=float), face: wp.array(dtype=int),
                        at: wp.array(dtype=wp.vec3), parity: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_winding_number(mesh, qs[i], 10.0, accuracy, threshold)
    found[i] = int(q.result)
    sign[i] = q.sign
    face[i] = q.face
    if q.result:
        at[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    parity[i] = wp.mesh_query_point(mesh, qs[i], 10.0).sign


def winding_signs(mesh, qs, accuracy=2.0, threshold=0.5):
    n = len(qs)
    outs = [wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=int), wp.zeros(n, dtype=wp.vec3),
            wp.zeros(n, dtype=float)]
    wp.launch(winding_sign_kernel, dim=n,
              inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), accuracy, threshold, *outs])
    return [o.numpy() for o in outs]


@wp.kernel
def winding_number_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), accuracy: float,
                          w: wp.array(dtype=float)):
    i = wp.tid()
    w[i] = MQ._winding_number(mesh, qs[i], accuracy)


def winding_numbers(mesh, qs, accuracy):
    w = wp.zeros(len(qs), dtype=float)
    wp.launch(winding_number_kernel, dim=len(qs), inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), accuracy, w])
    return w.numpy()


def test_winding_sign_inside_and_outside_a_closed_mesh():
    pts, tris = uv_sphere(rings=16, segments=32)
    mesh = make_mesh(pts, tris, support_winding_number=True)
    qs, r = shell_points(150, seed=3)
    found, sign, face, at, _ = winding_signs(mesh, qs)
    assert found.all()
    np.testing.assert_array_equal(sign, np.where(r < 1, -1.0, 1.0))
    # the closest point is mesh_query_point_no_sign's: a nearest face
    a, b, c = corners(pts, tris)
    for i in range(0, len(qs), 7):
        _, dist = closest_on_triangles(qs[i].astype(np.float64), a, b, c)
        assert abs(np.linalg.norm(qs[i] - at[i]) - np.sqrt(dist.min())) <= 2e-6 * (1 + np.sqrt(dist.min()))


def test_winding_sign_through_a_hole_follows_the_winding_number():
    # With two caps cut off, two of the three axis rays from some points
    # inside escape through the holes, so the parity vote fails there; the winding number stays near 1 deep
    # inside. The reference: the float64 winding number over every face,
    # where it is clear of the threshold by more than the approximation's error.
    pts, tris = open_sphere()
    mesh = make_mesh(pts, tris, support_winding_number=True)
    qs, _ = shell_points(200, seed=4, inner=(0.0, 0.95), outer=(1.05, 2.0))
    exact = exact_winding(pts, tris, qs)
    _, sign, _, _, parity = winding_signs(mesh, qs)
    clear = np.abs(exact - 0.5) > 0.02
    assert clear.sum() >= 350
    np.testing.assert_array_equal(sign[clear], np.where(exact[clear] > 0.5, -1.0, 1.0))
    assert (parity[clear] != sign[clear]).any()  # the hole fools the parity vote somewhere
    # the threshold moves the boundary: between 0.5 and 0.9 the sign flips
    mid = clear & (exact > 0.55) & (exact < 0.85)
    assert mid.sum() >= 3
    _, sign9, _, _, _ = winding_signs(mesh, qs[mid], threshold=0.9)
    assert (sign9 == 1.0).all()


def test_winding_number_matches_the_exact_sum():
    pts, tris = open_sphere()
    mesh = make_mesh(pts, tris, support_winding_number=True)
    rng = np.random.default_rng(5)
    qs = rng.uniform(-2, 2, (300, 3)).astype(np.float32)
    exact = exact_winding(pts, tris, qs)
    # an accuracy no node meets: every face exactly (float32 rounding only)
    np.testing.assert_allclose(winding_numbers(mesh, qs, 1.0e6), exact, atol=5e-6)
    # Warp's default: far nodes by their second-order expansion
    err2 = np.abs(winding_numbers(mesh, qs, 2.0) - exact)
    err4 = np.abs(winding_numbers(mesh, qs, 4.0) - exact)
    assert err2.max() < 2e-3, err2.max()
    assert err4.max() < 1e-4, err4.max()
    assert err4.mean() < err2.mean() / 4


def test_far_field_expansion_is_second_order():
    # The node data's expansion (float64, winding.py's formula) errs as
    # rho^-5: doubling the distance divides the error by 2^5 = 32 (a wrong
    # second-order term would leave rho^-4, 16; a wrong first-order one, 8).
    pts, tris = triangle_soup(50, seed=6)
    data = winding_data(build_tree(*triangle_bounds(pts, tris)), pts, tris)
    d = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    errors = []
    for dist in (8.0, 16.0, 32.0):
        q = d * dist
        errors.append(abs(far_solid_angle(data, q)[0] / (4 * np.pi) - exact_winding(pts, tris, [q])[0]))
    for near, far in zip(errors, errors[1:]):
        assert 24 < near / far < 40, errors


def test_far_field_in_the_kernel_matches_the_host_formula():
    # accuracy 0: the root is always far, so the query is the root's expansion alone
    pts, tris = triangle_soup(40, seed=7)
    mesh = make_mesh(pts, tris, support_winding_number=True)
    rng = np.random.default_rng(8)
    qs = (rng.normal(size=(50, 3)) * 3).astype(np.float32)
    expected = np.array([far_solid_angle(mesh._winding, q)[0] for q in qs.astype(np.float64)]) / (4 * np.pi)
    np.testing.assert_allclose(winding_numbers(mesh, qs, 0.0), expected, rtol=1e-4, atol=1e-7)


def test_refit_recomputes_the_winding_data():
    pts, tris = uv_sphere(rings=12, segments=24)
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.flatten(), dtype=wp.int32), support_winding_number=True)
    qs = np.array([[1.5, 0.1, 0.2], [0.2, -1.6, 0.3], [0.1, 0.2, 0.3]], np.float32)
    assert winding_signs(mesh, qs)[1].tolist() == [1.0, 1.0, -1.0]
    points.assign(wp.array(pts * 2.0, dtype=wp.vec3))
    mesh.refit()
    assert winding_signs(mesh, qs)[1].tolist() == [-1.0, -1.0, -1.0]
    np.testing.assert_allclose(winding_numbers(mesh, qs, 2.0), exact_winding(pts * 2.0, tris, qs), atol=2e-3)


def test_without_winding_support_the_sign_is_mesh_query_point_s():
    pts, tris = open_sphere()
    mesh = make_mesh(pts, tris)
    qs, _ = shell_points(100, seed=9, inner=(0.0, 0.95), outer=(1.05, 2.0))
    found, sign, _, _, parity = winding_signs(mesh, qs)
    assert found.all()
    np.testing.assert_array_equal(sign, parity)


def test_winding_query_respects_max_dist():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris, support_winding_number=True)

    @wp.kernel
    def limited(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), found: wp.array(dtype=int)):
        i = wp.tid()
        found[i] = int(wp.mesh_query_point_sign_winding_number(mesh, qs[i], 0.45).result)

    qs = np.array([[0, 0, 1.6], [0, 0, 1.2], [0, 0, 0.5], [3, 0, 0]], np.float32)
    found = wp.zeros(4, dtype=int)
    wp.launch(limited, dim=4, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), found])
    assert found.numpy().tolist() == [0, 1, 0, 0]


# --- the furthest point ---------------------------------------------------------------------

@wp.kernel
def furthest_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), min_dist: float, found: wp.array(dtype=int),
                    face: wp.array(dtype=int), sign: wp.array(dtype=float), dist: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_furthest_point_no_sign(mesh, qs[i], min_dist)
    found[i] = int(q.result)
    face[i] = q.face
    sign[i] = q.sign
    if q.result:
        dist[i] = wp.length(qs[i] - wp.mesh_eval_position(mesh, q.face, q.u, q.v))


def query_furthest(mesh, qs, min_dist=0.0, requires_grad=False):
    n = len(qs)
    q = wp.array(qs, dtype=wp.vec3, requires_grad=requires_grad)
    outs = [wp.zeros(n, dtype=int), wp.zeros(n, dtype=int), wp.zeros(n, dtype=float),
            wp.zeros(n, dtype=float, requires_grad=requires_grad)]
    return q, outs


@pytest.mark.parametrize("shape", ["sphere", "soup"])
def test_furthest_point_matches_brute_force(shape):
    pts, tris = uv_sphere() if shape == "sphere" else triangle_soup(300, seed=1)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(12)
    qs = rng.uniform(-2, 2, (300, 3)).astype(np.float32)
    q, outs = query_furthest(mesh, qs)
    wp.launch(furthest_kernel, dim=len(qs), inputs=[mesh.id, q, 0.0, *outs])
    found, face, sign, dist = (o.numpy() for o in outs)
    assert found.all() and (sign == 0.0).all()
    used = pts[np.unique(tris)].astype(np.float64)
    best = np.sqrt(((qs[:, None, :].astype(np.float64) - used[None]) ** 2).sum(-1)).max(axis=1)
    np.testing.assert_allclose(dist, best, rtol=2e-6, atol=2e-6)
    # the face holds a corner that far
    a, b, c = corners(pts, tris)
    corner_dist = np.stack([np.linalg.norm(x[face] - qs, axis=1) for x in (a, b, c)], 1).max(axis=1)
    np.testing.assert_allclose(corner_dist, best, rtol=2e-6, atol=2e-6)


def test_furthest_point_min_dist():
    # a point at the unit sphere's centre: every vertex at distance 1 (to float32 rounding)
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    qs = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0.5], [0, 0, 0.5]], np.float32)
    far = np.linalg.norm(pts.astype(np.float64) - qs[2], axis=1).max()  # 1.5, the south pole
    results = []
    for p, min_dist in zip(qs, (0.99, 1.01, far - 1e-3, far + 1e-3)):
        q, outs = query_furthest(mesh, p[None])
        wp.launch(furthest_kernel, dim=1, inputs=[mesh.id, q, min_dist, *outs])
        results.append([o.numpy()[0] for o in outs])
    found, face, _, dist = zip(*results)
    assert list(found) == [1, 0, 1, 0]
    assert face[1] == -1 and face[3] == -1
    np.testing.assert_allclose(dist[2], far, rtol=1e-6)


def test_furthest_distance_gradient_matches_central_differences():
    # d/dp |p - v| = (p - v) / |p - v| for the farthest vertex v: against
    # float64 central differences of the brute-force furthest distance
    pts, tris = triangle_soup(80, seed=13)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(14)
    qs = rng.uniform(-1.5, 1.5, (60, 3)).astype(np.float32)
    q, outs = query_furthest(mesh, qs, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(furthest_kernel, dim=len(qs), inputs=[mesh.id, q, 0.0, *outs])
    outs[3].grad = wp.ones(len(qs), dtype=float)
    tape.backward()
    grad = q.grad.numpy()
    used = pts[np.unique(tris)].astype(np.float64)

    def furthest(p):
        return np.sqrt(((used - p) ** 2).sum(-1)).max()

    checked = 0
    for i, p0 in enumerate(qs.astype(np.float64)):
        d = np.sqrt(((used - p0) ** 2).sum(-1))
        top = np.sort(d)[-2:]
        if top[1] - top[0] < 1e-3:  # two vertices almost equally far: a kink
            continue
        h = 1e-6
        fd = np.array([(furthest(p0 + h * e) - furthest(p0 - h * e)) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(grad[i], fd, atol=1e-5, err_msg=f"point {i}")
        checked += 1
    assert checked >= 50


# --- rays: any hit, crossings ---------------------------------------------------------------

@wp.kernel
def ray_count_kernel(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                     max_t: wp.array(dtype=float), anyhit: wp.array(dtype=int), count: wp.array(dtype=int),
                     first: wp.array(dtype=int)):
    i = wp.tid()
    anyhit[i] = int(wp.mesh_query_ray_anyhit(mesh, starts[i], dirs[i], max_t[i]))
    count[i] = wp.mesh_query_ray_count_intersections(mesh, starts[i], dirs[i])
    first[i] = int(wp.mesh_query_ray(mesh, starts[i], dirs[i], max_t[i]).result)


def cast(mesh, starts, dirs, max_t):
    n = len(starts)
    outs = [wp.zeros(n, dtype=int) for _ in range(3)]
    wp.launch(ray_count_kernel, dim=n, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3),
                                               wp.array(dirs, dtype=wp.vec3),
                                               wp.array(np.asarray(max_t, np.float32), dtype=float), *outs])
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("shape", ["sphere", "soup"])
def test_anyhit_and_crossings_match_brute_force(shape):
    pts, tris = uv_sphere(rings=12, segments=24) if shape == "sphere" else triangle_soup(300, seed=15)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(16)
    n = 300
    starts = rng.uniform(-2, 2, (n, 3)).astype(np.float32)
    dirs = rng.normal(size=(n, 3)).astype(np.float32)
    max_t = rng.uniform(0.1, 3.0, n).astype(np.float32)
    a, b, c = corners(pts, tris)
    ts = np.array([ray_hits(s.astype(np.float64), d.astype(np.float64), a, b, c)[0] for s, d in zip(starts, dirs)])
    # keep the rays whose every hit (and near miss) is clear of the faces' edges and of max_t
    clear = []
    for s, d, mt in zip(starts.astype(np.float64), dirs.astype(np.float64), max_t):
        e1, e2 = b - a, c - a
        h = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, h)
        sv = s - a
        wb = np.einsum("ij,ij->i", sv, h) / det
        wc = np.einsum("j,ij->i", d, np.cross(sv, e1)) / det
        t = np.einsum("ij,ij->i", e2, np.cross(sv, e1)) / det
        margin = np.min(np.abs(np.stack([wb, wc, 1 - wb - wc, t, t - mt], 1)), axis=1)
        clear.append(margin.min() > 1e-4)
    clear = np.array(clear)
    assert clear.sum() >= 250
    anyhit, count, first = cast(mesh, starts, dirs, max_t)
    np.testing.assert_array_equal(anyhit[clear], (ts < max_t[:, None]).any(axis=1)[clear])
    np.testing.assert_array_equal(count[clear], np.isfinite(ts).sum(axis=1)[clear])
    np.testing.assert_array_equal(anyhit, first)  # a hit within max_t exactly when mesh_query_ray has one
    assert 0 < anyhit[clear].sum() < clear.sum()


def test_ray_edge_cases():
    # one square in the plane z = 0, two faces
    pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
    tris = np.array([[0, 1, 2], [0, 2, 3]], np.int32)
    mesh = make_mesh(pts, tris)
    cases = [  # start, dir, max_t, anyhit, count
        ([0.3, 0.6, 1.0], [0, 0, -1], 2.0, 1, 1),      # straight down
        ([0.3, 0.6, 1.0], [0, 0, -1], 0.99, 0, 1),     # the hit lies beyond max_t (count has no max_t)
        ([0.3, 0.6, 1.0], [0, 0, -2], 0.6, 1, 1),      # max_t in multiples of |dir|: the hit at t = 0.5
        ([0.3, 0.6, 1.0], [0, 0, 1], 5.0, 0, 0),       # pointing away
        ([0.3, 0.6, -1.0], [0, 0, 1], 5.0, 1, 1),      # from behind
        ([2.0, 2.0, 1.0], [0, 0, -1], 5.0, 0, 0),      # beside the square
        ([-1.0, 0.6, 0.5], [1, 0, 0], 5.0, 0, 0),      # parallel to the plane, above it
        ([0.3, 0.6, 1.0], [0, 0, 0], 5.0, 0, 0),       # no direction
        ([1.5, 0.6, 1.0], [-1, 0, -1], 5.0, 1, 1),     # slanted, into the square at (0.5, 0.6)
    ]
    starts = np.array([c[0] for c in cases], np.float32)
    dirs = np.array([c[1] for c in cases], np.float32)
    anyhit, count, first = cast(mesh, starts, dirs, [c[2] for c in cases])
    assert anyhit.tolist() == [c[3] for c in cases]
    assert count.tolist() == [c[4] for c in cases]
    assert first.tolist() == [c[3] for c in cases]


def test_crossing_parity_inside_a_closed_mesh():
    pts, tris = uv_sphere(rings=16, segments=32)
    mesh = make_mesh(pts, tris)
    qs, r = shell_points(100, seed=17, outer=(1.1, 1.4))
    rng = np.random.default_rng(18)
    dirs = rng.normal(size=qs.shape).astype(np.float32)
    _, count, _ = cast(mesh, qs, dirs, np.full(len(qs), 1e6))
    # a ray from inside crosses once; one from outside zero or twice
    np.testing.assert_array_equal(count[r < 1], 1)
    assert set(count[r > 1].tolist()) <= {0, 2}


# --- closest_point_edge_edge ----------------------------------------------------------------

@wp.kernel
def edge_edge_kernel(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
                     q2: wp.array(dtype=wp.vec3), epsilon: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], epsilon)


def edge_edge(ends, epsilon=1e-6, requires_grad=False):
    arrays = [wp.array(np.asarray(e, np.float32).reshape(-1, 3), dtype=wp.vec3, requires_grad=requires_grad)
              for e in ends]
    out = wp.zeros(len(arrays[0]), dtype=wp.vec3, requires_grad=requires_grad)
    return arrays, out


def segment_distance(p1, q1, p2, q2):
    """float64 reference: (s, t, distance) minimizing |p1 + s d1 - p2 - t d2|
    over [0, 1]^2 (a convex quadratic: the interior critical point if inside,
    else the best of the four sides, each a clamped projection)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    cands = []
    m = np.array([[d1 @ d1, -d1 @ d2], [-d1 @ d2, d2 @ d2]])
    if abs(np.linalg.det(m)) > 1e-12 * (d1 @ d1) * (d2 @ d2):
        s, t = np.linalg.solve(m, [-d1 @ r, d2 @ r])
        if 0 <= s <= 1 and 0 <= t <= 1:
            cands.append((s, t))
    for s in (0.0, 1.0):
        cands.append((s, np.clip((d2 @ (r + s * d1)) / (d2 @ d2), 0, 1)))
    for t in (0.0, 1.0):
        cands.append((np.clip((d1 @ (t * d2 - r)) / (d1 @ d1), 0, 1), t))
    best = min(cands, key=lambda st: np.linalg.norm(p1 + st[0] * d1 - p2 - st[1] * d2))
    return best[0], best[1], np.linalg.norm(p1 + best[0] * d1 - p2 - best[1] * d2)


def random_edges(n, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (n, 3)) for _ in range(4)]


def test_closest_point_edge_edge_matches_reference():
    ends = random_edges(500, seed=19)
    arrays, out = edge_edge(ends)
    wp.launch(edge_edge_kernel, dim=500, inputs=[*arrays, 1e-6, out])
    got = out.numpy()
    e32 = [a.numpy().astype(np.float64) for a in arrays]
    for i in range(500):
        p1, q1, p2, q2 = (e[i] for e in e32)
        s, t, d = segment_distance(p1, q1, p2, q2)
        assert abs(got[i, 2] - d) <= 2e-6 * (1 + d), (i, got[i], (s, t, d))
        # the weights give points that far apart (s, t unique away from parallel edges)
        gs, gt = got[i, 0], got[i, 1]
        assert 0 <= gs <= 1 and 0 <= gt <= 1
        assert abs(np.linalg.norm(p1 + gs * (q1 - p1) - p2 - gt * (q2 - p2)) - d) <= 1e-5
        np.testing.assert_allclose([gs, gt], [s, t], atol=2e-4, err_msg=str(i))


def test_closest_point_edge_edge_special_cases():
    # (p1, q1, p2, q2), expected (s, t, d): Warp 1.19's values
    cases = [
        (([0, 0, 0], [1, 0, 0], [0.5, 1, 1], [0.5, 1, -1]), (0.5, 0.5, 1.0)),      # crossing over
        (([0, 0, 0], [1, 0, 0], [2, 1, 0], [3, 1, 0]), (1.0, 0.0, np.sqrt(2))),      # parallel, beyond q1
        (([0, 0, 0], [1, 0, 0], [-2, 1, 0], [-1, 1, 0]), (0.0, 1.0, np.sqrt(2))),    # parallel, before p1
        (([0, 0, 0], [1, 0, 0], [0.3, 1, 0], [0.6, 1, 0]), (0.3, 0.0, 1.0)),         # parallel, overlapping
        (([0, 0, 0], [1, 0, 0], [2, 1, 0], [1.5, 1, 0]), (1.0, 1.0, np.sqrt(1.25))),  # parallel, reversed
        (([0, 0, 0], [0, 0, 0], [0.3, 1, 0], [0.6, 1, 0]), (0.0, 0.0, np.sqrt(1.09))),  # first edge a point
        (([0, 0, 0], [1, 0, 0], [0.3, 1, 0], [0.3, 1, 0]), (0.3, 0.0, 1.0)),         # second edge a point
        (([0, 0, 0], [0, 0, 0], [0.3, 1, 0], [0.3, 1, 0]), (0.0, 0.0, np.sqrt(1.09))),  # two points
        (([0, 0, 0], [1, 0, 0], [0.5, -1, 0], [0.5, 1, 0]), (0.5, 0.5, 0.0)),        # intersecting
    ]
    arrays, out = edge_edge([[c[0][k] for c in cases] for k in range(4)])
    wp.launch(edge_edge_kernel, dim=len(cases), inputs=[*arrays, 1e-6, out])
    np.testing.assert_allclose(out.numpy(), [c[1] for c in cases], atol=1e-6)
    # epsilon makes a short edge a point: its weight 0
    arrays, out = edge_edge([[0, 0, 0], [1e-2, 0, 0], [0.3, 1, 0], [0.6, 1, 0]])
    wp.launch(edge_edge_kernel, dim=1, inputs=[*arrays, 1e-3, out])
    np.testing.assert_allclose(out.numpy()[0], [0.0, 0.0, np.sqrt(1.09)], atol=1e-6)


def test_closest_point_edge_edge_gradients_match_central_differences():
    n = 200
    ends = random_edges(n, seed=20)
    arrays, out = edge_edge(ends, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(edge_edge_kernel, dim=n, inputs=[*arrays, 1e-6, out])
    e64 = [a.numpy().astype(np.float64) for a in arrays]
    grads = []
    for k in range(3):  # d out[i][k] / d each endpoint
        tape.zero()
        seed = np.zeros((n, 3), np.float32)
        seed[:, k] = 1
        out.grad = wp.array(seed, dtype=wp.vec3)
        tape.backward()
        grads.append([a.grad.numpy().copy() for a in arrays])
    checked = 0
    h = 1e-6
    for i in range(n):
        x0 = np.concatenate([e[i] for e in e64])

        def f(x):
            return np.array(segment_distance(x[0:3], x[3:6], x[6:9], x[9:12]))

        # skip kinks: touching or nearly parallel edges, and weights that reach or leave a clamp nearby
        s, t, d = f(x0)
        d1, d2 = x0[3:6] - x0[0:3], x0[9:12] - x0[6:9]
        if d < 1e-2 or np.linalg.norm(np.cross(d1, d2)) ** 2 < 1e-2 * (d1 @ d1) * (d2 @ d2):
            continue
        pattern = lambda st: (st[0] == 0.0, st[0] == 1.0, st[1] == 0.0, st[1] == 1.0)  # noqa: E731
        if any(pattern(f(x0 + sign * 1e-4 * e)) != pattern((s, t)) for e in np.eye(12) for sign in (-1, 1)):
            continue
        fd = np.array([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(12)])  # (12, 3)
        for k in range(3):
            got = np.concatenate([g[i] for g in grads[k]])
            np.testing.assert_allclose(got, fd[:, k], rtol=2e-3, atol=2e-3, err_msg=f"edge pair {i}, output {k}")
        checked += 1
    assert checked >= 100


# --- intersect_tri_tri ----------------------------------------------------------------------

@wp.kernel
def tri_tri_kernel(v: wp.array(dtype=wp.vec3, ndim=2), u: wp.array(dtype=wp.vec3, ndim=2),
                   out: wp.array(dtype=int), out64: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.intersect_tri_tri(v[i, 0], v[i, 1], v[i, 2], u[i, 0], u[i, 1], u[i, 2])
    out64[i] = wp.intersect_tri_tri(wp.vec3d(v[i, 0]), wp.vec3d(v[i, 1]), wp.vec3d(v[i, 2]), wp.vec3d(u[i, 0]),
                                    wp.vec3d(u[i, 1]), wp.vec3d(u[i, 2]))


def tri_tri(v, u):
    n = len(v)
    out, out64 = wp.zeros(n, dtype=int), wp.zeros(n, dtype=int)
    wp.launch(tri_tri_kernel, dim=n, inputs=[wp.array(np.asarray(v, np.float32), dtype=wp.vec3),
                                             wp.array(np.asarray(u, np.float32), dtype=wp.vec3), out, out64])
    return out.numpy(), out64.numpy()


def segment_pierces(p, q, a, b, c):
    """float64: whether segment pq crosses triangle abc, and by what margin
    (the smallest of its barycentric weights and the segment parameter's
    distances to 0 and 1; negative when it misses)."""
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = e1 @ h
    if abs(det) < 1e-12:
        return False, 0.0
    s = p - a
    wb = (s @ h) / det
    qv = np.cross(s, e1)
    wc = (d @ qv) / det
    t = (e2 @ qv) / det
    margin = min(wb, wc, 1 - wb - wc, t, 1 - t)
    return margin > 0, margin


def reference_tri_tri(v, u):
    """float64: two triangles in general position intersect exactly when an
    edge of one crosses the other; None when some crossing is within 1e-4 of
    a border (too close to call in float32)."""
    hit = False
    for x, y in ((v, u), (u, v)):
        for k in range(3):
            crosses, margin = segment_pierces(x[k], x[(k + 1) % 3], *y)
            if abs(margin) < 1e-4:
                return None
            hit |= crosses
    return hit


def test_intersect_tri_tri_matches_reference():
    rng = np.random.default_rng(21)
    n = 2000
    centres = rng.uniform(-0.25, 0.25, (n, 2, 1, 3))
    tris = (centres + rng.normal(0, 0.3, (n, 2, 3, 3))).astype(np.float32)
    v, u = tris[:, 0], tris[:, 1]
    ref = [reference_tri_tri(a.astype(np.float64), b.astype(np.float64)) for a, b in zip(v, u)]
    keep = np.array([r is not None for r in ref])
    expected = np.array([bool(r) for r in ref])
    assert keep.sum() >= 1800 and 200 < expected[keep].sum() < keep.sum() - 200
    got, got64 = tri_tri(v, u)
    np.testing.assert_array_equal(got[keep], expected[keep])
    np.testing.assert_array_equal(got64[keep], expected[keep])
    # symmetric
    swapped, _ = tri_tri(u, v)
    np.testing.assert_array_equal(swapped[keep], expected[keep])


def test_intersect_tri_tri_special_cases():
    t = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    cases = [  # (u, expected) against t, in the plane z = 0 unless said
        ([[1, 1, -1], [1, 1, 1], [1, -1, 0]], 1),             # Warp's example: crossing
        ([[0.5, 0.5, 0], [1, 0.5, 0], [0.5, 1, 0]], 1),       # coplanar, inside t
        ([[-1, -1, 0], [4, -1, 0], [-1, 4, 0]], 1),           # coplanar, t inside it
        ([[1, 1, 0], [3, 1, 0], [1, 3, 0]], 1),               # coplanar, overlapping
        ([[1.5, 1.5, 0], [3, 1.5, 0], [1.5, 3, 0]], 0),       # coplanar, apart (past the hypotenuse)
        ([[2, 0, 0], [3, 0, 0], [2, 1, 0]], 1),               # coplanar, sharing a corner
        ([[0, 0, 1], [2, 0, 1], [0, 2, 1]], 0),               # parallel planes
        ([[0.5, 0.5, 0], [0.5, 0.5, 1], [1, 0.5, 1]], 1),     # touching t with a corner
        ([[0.5, 0.5, 0.01], [0.5, 0.5, 1], [1, 0.5, 1]], 0),  # just above it
        ([[3, 3, -1], [3, 3, 1], [4, 3, 0]], 0),              # crossing the plane beside t
    ]
    got, got64 = tri_tri([t] * len(cases), [c[0] for c in cases])
    assert got.tolist() == [c[1] for c in cases]
    assert got64.tolist() == [c[1] for c in cases]


# --- against Warp ---------------------------------------------------------------------------

def test_against_warp():
    warp = pytest.importorskip("warp")
    if warp is wp:
        pytest.skip("warp is aliased to adjit")
    warp.config.quiet = True
    pts, tris = open_sphere()
    rng = np.random.default_rng(22)
    qs = rng.uniform(-1.6, 1.6, (300, 3)).astype(np.float32)
    dirs = rng.normal(size=(300, 3)).astype(np.float32)
    ends = [x.astype(np.float32) for x in random_edges(300, seed=23)]

    @warp.kernel
    def reference(mesh: warp.uint64, qs: warp.array(dtype=warp.vec3), dirs: warp.array(dtype=warp.vec3),
                  p1: warp.array(dtype=warp.vec3), q1: warp.array(dtype=warp.vec3),
                  p2: warp.array(dtype=warp.vec3), q2: warp.array(dtype=warp.vec3),
                  sign: warp.array(dtype=float), far: warp.array(dtype=float), anyhit: warp.array(dtype=int),
                  count: warp.array(dtype=int), ee: warp.array(dtype=warp.vec3)):
        i = warp.tid()
        sign[i] = warp.mesh_query_point_sign_winding_number(mesh, qs[i], 10.0).sign
        f = warp.mesh_query_furthest_point_no_sign(mesh, qs[i], 0.0)
        far[i] = warp.length(qs[i] - warp.mesh_eval_position(mesh, f.face, f.u, f.v))
        anyhit[i] = int(warp.mesh_query_ray_anyhit(mesh, qs[i], dirs[i], 1.5))
        count[i] = warp.mesh_query_ray_count_intersections(mesh, qs[i], dirs[i])
        ee[i] = warp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], 1.0e-6)

    @wp.kernel
    def ours(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
             q2: wp.array(dtype=wp.vec3), sign: wp.array(dtype=float), far: wp.array(dtype=float),
             anyhit: wp.array(dtype=int), count: wp.array(dtype=int), ee: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        sign[i] = wp.mesh_query_point_sign_winding_number(mesh, qs[i], 10.0).sign
        f = wp.mesh_query_furthest_point_no_sign(mesh, qs[i], 0.0)
        far[i] = wp.length(qs[i] - wp.mesh_eval_position(mesh, f.face, f.u, f.v))
        anyhit[i] = int(wp.mesh_query_ray_anyhit(mesh, qs[i], dirs[i], 1.5))
        count[i] = wp.mesh_query_ray_count_intersections(mesh, qs[i], dirs[i])
        ee[i] = wp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], 1.0e-6)

    results = []
    for lib, kernel in ((warp, reference), (wp, ours)):
        mesh = lib.Mesh(lib.array(pts, dtype=lib.vec3), lib.array(tris.flatten(), dtype=lib.int32),
                        support_winding_number=True)
        outs = [lib.zeros(300, dtype=float), lib.zeros(300, dtype=float), lib.zeros(300, dtype=int),
                lib.zeros(300, dtype=int), lib.zeros(300, dtype=lib.vec3)]
        lib.launch(kernel, dim=300, inputs=[mesh.id, lib.array(qs, dtype=lib.vec3), lib.array(dirs, dtype=lib.vec3),
                                            *[lib.array(e, dtype=lib.vec3) for e in ends], *outs], device="cpu")
        results.append([o.numpy() for o in outs])
    (w_sign, w_far, w_any, w_count, w_ee), (sign, far, anyhit, count, ee) = results
    print("differences from Warp: sign", (sign != w_sign).sum(), "anyhit", (anyhit != w_any).sum(), "count",
          (count != w_count).sum(), "edge-edge", np.abs(ee - w_ee).max())
    exact = exact_winding(pts, tris, qs)
    clear = np.abs(exact - 0.5) > 0.02
    np.testing.assert_array_equal(sign[clear], w_sign[clear])
    np.testing.assert_allclose(far, w_far, rtol=1e-6)
    assert (anyhit != w_any).sum() <= 1  # rays grazing an edge may differ (Warp's watertight test)
    assert (count != w_count).sum() <= 1
    np.testing.assert_allclose(ee, w_ee, atol=1e-5)


def test_intersect_tri_tri_against_warp():
    warp = pytest.importorskip("warp")
    if warp is wp:
        pytest.skip("warp is aliased to adjit")
    rng = np.random.default_rng(24)
    n = 2000
    tris = (rng.uniform(-0.25, 0.25, (n, 2, 1, 3)) + rng.normal(0, 0.3, (n, 2, 3, 3))).astype(np.float32)
    # coplanar pairs too: the second triangle moved within the first one's plane
    flat = tris[:200].copy()
    flat[:, :, :, 2] = 0.0
    tris = np.concatenate([tris, flat])

    @warp.kernel
    def reference(v: warp.array(dtype=warp.vec3, ndim=2), u: warp.array(dtype=warp.vec3, ndim=2),
                  out: warp.array(dtype=int)):
        i = warp.tid()
        out[i] = warp.intersect_tri_tri(v[i, 0], v[i, 1], v[i, 2], u[i, 0], u[i, 1], u[i, 2])

    expected = warp.zeros(len(tris), dtype=int)
    warp.launch(reference, dim=len(tris), inputs=[warp.array(tris[:, 0], dtype=warp.vec3),
                                                  warp.array(tris[:, 1], dtype=warp.vec3), expected], device="cpu")
    got, _ = tri_tri(tris[:, 0], tris[:, 1])
    print("differences from Warp:", (got != expected.numpy()).sum(), "of", len(tris))
    np.testing.assert_array_equal(got, expected.numpy())


# --- PTX ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", [winding_sign_kernel, furthest_kernel, ray_count_kernel, edge_edge_kernel,
                                    tri_tri_kernel], ids=lambda k: k.__name__)
def test_kernels_compile_to_ptx_that_ptxas_accepts(kernel, tmp_path):
    # the queries are ordinary device functions: they lower to PTX like any kernel
    # (meshes are built on the host only so far, so nothing runs on a GPU here)
    ptx = wp.compile(kernel, target="cuda", arch="sm_80")
    assert re.search(r"\.visible\s+\.entry\s+\w+", ptx)
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not on PATH")
    (tmp_path / "k.ptx").write_text(ptx)
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
