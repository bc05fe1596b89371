"""Mesh and its queries (adjit/geometry, docs/geometry.md): results against
brute-force float64 references over every face, gradients against
hand-derived values and float64 central differences, and the errors."""
import gc

import numpy as np
import pytest

import adjit as wp
from adjit.errors import AdjitError, OutOfBoundsError


def uv_sphere(rings=10, segments=20, radius=1.0):
    """A closed sphere, faces outward (counter-clockwise seen from outside)."""
    pts = [[0.0, 0.0, radius]]
    for r in range(1, rings):
        t = np.pi * r / rings
        for s in range(segments):
            p = 2 * np.pi * s / segments
            pts.append([radius * np.sin(t) * np.cos(p), radius * np.sin(t) * np.sin(p), radius * np.cos(t)])
    pts.append([0.0, 0.0, -radius])
    pts = np.array(pts, np.float32)
    ring = lambda r, s: 1 + (r - 1) * segments + (s % segments)  # noqa: E731
    tris = [[0, ring(1, s), ring(1, s + 1)] for s in range(segments)]
    for r in range(1, rings - 1):
        for s in range(segments):
            a, b, c, d = ring(r, s), ring(r + 1, s), ring(r + 1, s + 1), ring(r, s + 1)
            tris += [[a, b, c], [a, c, d]]
    tris += [[len(pts) - 1, ring(rings - 1, s + 1), ring(rings - 1, s)] for s in range(segments)]
    tris = np.array(tris, np.int32)
    a, b, c = (pts[tris[:, k]] for k in range(3))
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), a + b + c) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return pts, tris


def triangle_soup(n, seed):
    """n random, intersecting triangles in the unit cube."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-1, 1, (n, 1, 3))
    pts = (centres + rng.normal(0, 0.15, (n, 3, 3))).reshape(-1, 3).astype(np.float32)
    return pts, np.arange(3 * n, dtype=np.int32).reshape(n, 3)


def make_mesh(pts, tris, **kwargs):
    return wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.flatten(), dtype=wp.int32), **kwargs)


def closest_on_triangles(p, a, b, c):
    """float64: the weights (of a, b) and squared distances of the points of
    triangles abc (arrays of corners) closest to p, by minimizing over the
    interior (when the projection falls inside) and the three edges."""
    ab, ac, ap = b - a, c - a, p - a
    m = np.stack([np.einsum("ij,ij->i", ab, ab), np.einsum("ij,ij->i", ab, ac),
                  np.einsum("ij,ij->i", ab, ac), np.einsum("ij,ij->i", ac, ac)], -1).reshape(-1, 2, 2)
    rhs = np.stack([np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)], -1)
    st = np.linalg.solve(m, rhs[..., None])[..., 0]  # p's projection: a + s ab + t ac
    cands = []
    inside = (st[:, 0] >= 0) & (st[:, 1] >= 0) & (st.sum(1) <= 1)
    w = np.stack([1 - st[:, 0] - st[:, 1], st[:, 0]], -1)
    cands.append((np.where(inside[:, None], w, np.nan)))
    for (s_, e_, ws, we) in ((a, b, (1, 0), (0, 1)), (b, c, (0, 1), (0, 0)), (c, a, (0, 0), (1, 0))):
        d = e_ - s_
        t = np.clip(np.einsum("ij,ij->i", p - s_, d) / np.einsum("ij,ij->i", d, d), 0, 1)[:, None]
        cands.append((1 - t) * np.array(ws, float) + t * np.array(we, float))
    best_w, best_d = None, None
    for w in cands:
        q = a * w[:, :1] + b * w[:, 1:] + c * (1 - w[:, :1] - w[:, 1:])
        dist = np.where(np.isnan(w[:, 0]), np.inf, np.sum((p - q) ** 2, axis=1))
        if best_d is None:
            best_w, best_d = w, dist
        else:
            take = dist < best_d
            best_w, best_d = np.where(take[:, None], w, best_w), np.where(take, dist, best_d)
    return best_w, best_d


def corners(pts, tris):
    p = pts.astype(np.float64)
    return p[tris[:, 0]], p[tris[:, 1]], p[tris[:, 2]]


def ray_hits(start, d, a, b, c):
    """float64 Moller-Trumbore over all triangles: t (inf where missed), weights of a, b."""
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = 1.0 / det
        s = start - a
        wb = f * np.einsum("ij,ij->i", s, h)
        q = np.cross(s, e1)
        wc = f * np.einsum("j,ij->i", d, q)
        t = f * np.einsum("ij,ij->i", e2, q)
    hit = (det != 0) & (t >= 0) & (wb >= 0) & (wc >= 0) & (wb + wc <= 1)
    return np.where(hit, t, np.inf), 1 - wb - wc, wb


@wp.kernel
def closest_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), max_dist: float, kind: int,
                   found: wp.array(dtype=int), face: wp.array(dtype=int), uv: wp.array(dtype=wp.vec2),
                   sign: wp.array(dtype=float), at: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.MeshQueryPoint()
    if kind == 0:
        q = wp.mesh_query_point_no_sign(mesh, qs[i], max_dist)
    elif kind == 1:
        q = wp.mesh_query_point_sign_normal(mesh, qs[i], max_dist)
    else:
        q = wp.mesh_query_point(mesh, qs[i], max_dist)
    found[i] = int(q.result)
    face[i] = q.face
    uv[i] = wp.vec2(q.u, q.v)
    sign[i] = q.sign
    if q.result:
        at[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)


def query_points(mesh, qs, max_dist=10.0, kind=0):
    n = len(qs)
    outs = [wp.zeros(n, dtype=int), wp.zeros(n, dtype=int), wp.zeros(n, dtype=wp.vec2), wp.zeros(n, dtype=float),
            wp.zeros(n, dtype=wp.vec3)]
    wp.launch(closest_kernel, dim=n, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), max_dist, kind, *outs])
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("shape", ["sphere", "soup"])
def test_closest_point_matches_brute_force(shape):
    pts, tris = uv_sphere() if shape == "sphere" else triangle_soup(300, seed=1)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(2)
    qs = rng.uniform(-1.5, 1.5, (400, 3)).astype(np.float32)
    found, face, uv, _, at = query_points(mesh, qs)
    assert found.all()
    a, b, c = corners(pts, tris)
    for i, p in enumerate(qs.astype(np.float64)):
        _, dist = closest_on_triangles(p, a, b, c)
        best = np.sqrt(dist.min())
        got = np.linalg.norm(p - at[i])
        assert abs(got - best) <= 2e-6 * (1 + best), (i, got, best)
        # the face found is a nearest one, and its weights give the point
        assert np.sqrt(dist[face[i]]) <= best + 2e-6 * (1 + best)
        w = uv[i]
        np.testing.assert_allclose(a[face[i]] * w[0] + b[face[i]] * w[1] + c[face[i]] * (1 - w.sum()), at[i],
                                   atol=1e-5)


def test_max_dist_limits_the_search():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    qs = np.array([[0, 0, 1.6], [0, 0, 1.2], [0, 0, 0.5], [3, 0, 0]], np.float32)
    found, face, *_ = query_points(mesh, qs, max_dist=0.45)
    assert found.tolist() == [0, 1, 0, 0]
    assert face[0] == -1 and face[3] == -1


@pytest.mark.parametrize("kind", [1, 2])
def test_signs_inside_and_outside_a_closed_mesh(kind):
    pts, tris = uv_sphere(rings=16, segments=32)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(3)
    d = rng.normal(size=(300, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = np.concatenate([rng.uniform(0.05, 0.9, 150), rng.uniform(1.05, 2.0, 150)])
    qs = (d * r[:, None]).astype(np.float32)
    found, _, _, sign, _ = query_points(mesh, qs, kind=kind)
    assert found.all()
    np.testing.assert_array_equal(sign, np.where(r < 1, -1.0, 1.0))


def test_no_sign_query_reports_sign_one():
    pts, tris = uv_sphere()
    _, _, _, sign, _ = query_points(make_mesh(pts, tris), np.zeros((3, 3), np.float32) + 0.1)
    assert (sign == 1.0).all()


@wp.kernel
def ray_kernel(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), max_t: float,
               found: wp.array(dtype=int), face: wp.array(dtype=int), t: wp.array(dtype=float),
               uv: wp.array(dtype=wp.vec2), sign: wp.array(dtype=float), normal: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[i], dirs[i], max_t)
    found[i] = int(q.result)
    face[i] = q.face
    t[i] = q.t
    uv[i] = wp.vec2(q.u, q.v)
    sign[i] = q.sign
    normal[i] = q.normal


def query_rays(mesh, starts, dirs, max_t=1e6):
    n = len(starts)
    outs = [wp.zeros(n, dtype=int), wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=wp.vec2),
            wp.zeros(n, dtype=float), wp.zeros(n, dtype=wp.vec3)]
    wp.launch(ray_kernel, dim=n, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3),
                                         max_t, *outs])
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("shape", ["sphere", "soup"])
def test_rays_match_brute_force(shape):
    pts, tris = uv_sphere() if shape == "sphere" else triangle_soup(300, seed=4)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(5)
    starts = rng.uniform(-2, 2, (300, 3)).astype(np.float32)
    targets = rng.uniform(-0.5, 0.5, (300, 3))
    dirs = (targets - starts).astype(np.float32)
    dirs[:40] *= -1  # some point away from everything
    found, face, t, uv, sign, normal = query_rays(mesh, starts, dirs)
    a, b, c = corners(pts, tris)
    for i in range(len(starts)):
        ts, wa, wb = ray_hits(starts[i].astype(np.float64), dirs[i].astype(np.float64), a, b, c)
        if not np.isfinite(ts.min()):
            assert not found[i] and face[i] == -1
            continue
        assert found[i], i
        k = face[i]
        assert ts[k] <= ts.min() * (1 + 1e-5) + 1e-6, (i, ts[k], ts.min())
        np.testing.assert_allclose(t[i], ts[k], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(uv[i], [wa[k], wb[k]], atol=1e-5)
        n = np.cross(b[k] - a[k], c[k] - a[k])
        np.testing.assert_allclose(normal[i], n / np.linalg.norm(n), atol=1e-5)
        assert sign[i] == (1.0 if np.dot(dirs[i], n) < 0 else -1.0)


def test_ray_max_t_limits_hits():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    starts = np.array([[0, 0, 3], [0, 0, 3]], np.float32)
    dirs = np.array([[0, 0, -1], [0, 0, -1]], np.float32)
    found, _, t, *_ = query_rays(mesh, starts, dirs, max_t=1.9)
    assert not found.any()
    found, _, t, *_ = query_rays(mesh, starts, dirs, max_t=2.1)
    assert found.all() and np.allclose(t, 2.0, atol=1e-5)


@wp.kernel
def aabb_kernel(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int),
                count: wp.array(dtype=int)):
    q = wp.mesh_query_aabb(mesh, lower, upper)
    f = int(0)
    n = int(0)
    while wp.mesh_query_aabb_next(q, f):
        hits[n] = f
        n += 1
    count[0] = n


@pytest.mark.parametrize("box", [((-0.3, -0.3, -0.3), (0.3, 0.3, 0.3)), ((0.5, -1, -1), (2, 1, 1)),
                                 ((5, 5, 5), (6, 6, 6)), ((-2, -2, -2), (2, 2, 2))])
def test_aabb_walk_visits_each_overlapping_face_once(box):
    pts, tris = triangle_soup(200, seed=6)
    mesh = make_mesh(pts, tris)
    hits, count = wp.zeros(len(tris), dtype=int), wp.zeros(1, dtype=int)
    wp.launch(aabb_kernel, dim=1, inputs=[mesh.id, wp.vec3(*box[0]), wp.vec3(*box[1]), hits, count])
    got = sorted(hits.numpy()[:count.numpy()[0]].tolist())
    corners_ = pts[tris]
    lo, hi = corners_.min(1), corners_.max(1)
    want = np.nonzero(np.all(lo <= np.array(box[1]), 1) & np.all(hi >= np.array(box[0]), 1))[0].tolist()
    assert got == want


@wp.kernel
def getters(mesh: wp.uint64, point: wp.array(dtype=wp.vec3), velocity: wp.array(dtype=wp.vec3),
            index: wp.array(dtype=int), normal: wp.array(dtype=wp.vec3), eval_v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    point[i] = wp.mesh_get_point(mesh, i)
    velocity[i] = wp.mesh_get_velocity(mesh, i)
    index[i] = wp.mesh_get_index(mesh, i)
    normal[i] = wp.mesh_eval_face_normal(mesh, i)
    eval_v[i] = wp.mesh_eval_velocity(mesh, i, 0.25, 0.5)


def test_getters_and_velocities():
    pts, tris = triangle_soup(10, seed=7)
    vel = np.random.default_rng(8).normal(size=pts.shape).astype(np.float32)
    mesh = make_mesh(pts, tris, velocities=wp.array(vel, dtype=wp.vec3))
    n = len(tris)
    outs = [wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=int),
            wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)]
    wp.launch(getters, dim=n, inputs=[mesh.id, *outs])
    point, velocity, index, normal, eval_v = (o.numpy() for o in outs)
    np.testing.assert_array_equal(point, pts[:n])
    np.testing.assert_array_equal(velocity, vel[:n])
    np.testing.assert_array_equal(index, tris.flatten()[:n])
    a, b, c = corners(pts, tris)
    nrm = np.cross(b - a, c - a)
    np.testing.assert_allclose(normal, nrm / np.linalg.norm(nrm, axis=1, keepdims=True), atol=1e-5)
    v = vel.astype(np.float64)[tris]
    np.testing.assert_allclose(eval_v, 0.25 * v[:, 0] + 0.5 * v[:, 1] + 0.25 * v[:, 2], atol=1e-5)


def test_velocities_of_a_mesh_without_them_are_out_of_range():
    pts, tris = triangle_soup(4, seed=9)
    mesh = make_mesh(pts, tris)
    outs = [wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=int),
            wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=wp.vec3)]
    with pytest.raises(OutOfBoundsError, match="mesh velocities"):
        wp.launch(getters, dim=4, inputs=[mesh.id, *outs])


def test_refit_follows_moved_points():
    pts, tris = uv_sphere()
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.flatten(), dtype=wp.int32))
    points.numpy()[:] += np.array([3.0, 0.0, 0.0], np.float32)  # move the sphere in place
    mesh.refit()
    qs = np.array([[3.0, 0.0, 1.5], [4.5, 0.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    found, face, uv, sign, at = query_points(mesh, qs, kind=1)
    dist = np.linalg.norm(qs - at, axis=1)
    a, b, c = corners(points.numpy(), tris)
    for i, p in enumerate(qs.astype(np.float64)):
        assert abs(dist[i] - np.sqrt(closest_on_triangles(p, a, b, c)[1].min())) < 1e-5
    # a new points array of the same length, then refit
    mesh.points = wp.array(pts * 2, dtype=wp.vec3)
    mesh.refit()
    found, face, uv, sign, at = query_points(mesh, np.array([[0.0, 0.0, 3.0]], np.float32))
    assert abs(np.linalg.norm(at[0] - [0, 0, 3]) - 1.0) < 1e-5


@wp.kernel
def distance_loss(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float),
                  closest: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, qs[i], 10.0)
    c = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    closest[i] = c
    wp.atomic_add(loss, 0, wp.length_sq(qs[i] - c))


def test_gradient_of_squared_distance_is_twice_the_offset():
    # d/dp |p - c(p)|^2 = 2 (p - c): c moves within the face, edge or corner,
    # perpendicular to p - c (hand-derived, every Voronoi region of a face).
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(10)
    qs = wp.array(rng.uniform(-1.5, 1.5, (200, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss, closest = wp.zeros(1, dtype=float, requires_grad=True), wp.zeros(200, dtype=wp.vec3)
    tape = wp.Tape()
    with tape:
        wp.launch(distance_loss, dim=200, inputs=[mesh.id, qs, loss, closest])
    tape.backward(loss)
    np.testing.assert_allclose(qs.grad.numpy(), 2 * (qs.numpy() - closest.numpy()), rtol=1e-4, atol=1e-5)


@wp.kernel
def closest_point_of(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
                     faces: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_normal(mesh, qs[i], 10.0)
    out[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    faces[i] = q.face


def test_jacobian_of_closest_point_matches_central_differences():
    pts, tris = triangle_soup(60, seed=11)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(12)
    qs_np = rng.uniform(-1, 1, (40, 3)).astype(np.float32)
    qs = wp.array(qs_np, dtype=wp.vec3, requires_grad=True)
    out, faces = wp.zeros(40, dtype=wp.vec3, requires_grad=True), wp.zeros(40, dtype=int)
    tape = wp.Tape()
    with tape:
        wp.launch(closest_point_of, dim=40, inputs=[mesh.id, qs, out, faces])
    a, b, c = corners(pts, tris)
    face = faces.numpy()
    checked = 0
    for k in range(3):
        tape.zero()
        seed = np.zeros((40, 3), np.float32)
        seed[:, k] = 1
        out.grad = wp.array(seed, dtype=wp.vec3)
        tape.backward()
        row = qs.grad.numpy()  # row i: d out[i][k] / d qs[i]
        for i in range(40):
            f = face[i]
            fa, fb, fc = a[f:f + 1], b[f:f + 1], c[f:f + 1]

            def point(p):
                w, _ = closest_on_triangles(p, fa, fb, fc)
                return (fa * w[:, :1] + fb * w[:, 1:] + fc * (1 - w.sum(1, keepdims=True)))[0]

            def region(p):  # which corners weigh nothing: the face's interior, an edge or a corner
                w, _ = closest_on_triangles(p, fa, fb, fc)
                return tuple(np.abs([w[0, 0], w[0, 1], 1 - w[0].sum()]) < 1e-12)
            p0, h = qs_np[i].astype(np.float64), 1e-6
            # where p0 and its neighbourhood share a region, the closest point is affine in p
            if any(region(p0 + s * 1e-3 * e) != region(p0) for e in np.eye(3) for s in (-1, 1)):
                continue
            fd = np.array([(point(p0 + h * e)[k] - point(p0 - h * e)[k]) / (2 * h) for e in np.eye(3)])
            np.testing.assert_allclose(row[i], fd, atol=2e-4, err_msg=f"point {i}, component {k}")
            checked += 1
    assert checked >= 100


@wp.kernel
def ray_distance(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                 t: wp.array(dtype=float), faces: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[i], dirs[i], 100.0)
    t[i] = q.t
    faces[i] = q.face


def test_gradient_of_ray_distance_matches_central_differences():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(13)
    starts_np = rng.uniform(-3, 3, (30, 3)).astype(np.float32)
    dirs_np = (rng.uniform(-0.3, 0.3, (30, 3)) - starts_np).astype(np.float32)
    starts = wp.array(starts_np, dtype=wp.vec3, requires_grad=True)
    dirs = wp.array(dirs_np, dtype=wp.vec3, requires_grad=True)
    t, faces = wp.zeros(30, dtype=float, requires_grad=True), wp.zeros(30, dtype=int)
    tape = wp.Tape()
    with tape:
        wp.launch(ray_distance, dim=30, inputs=[mesh.id, starts, dirs, t, faces])
    tape.backward(grads={t: wp.ones(30, dtype=float)})
    a, b, c = corners(pts, tris)
    h = 1e-6
    for i in range(30):
        f = faces.numpy()[i]
        assert f >= 0
        fa, fb, fc = a[f:f + 1], b[f:f + 1], c[f:f + 1]

        def dist(s, d):
            return ray_hits(s, d, fa, fb, fc)[0][0]
        s0, d0 = starts_np[i].astype(np.float64), dirs_np[i].astype(np.float64)
        fd_s = [(dist(s0 + h * e, d0) - dist(s0 - h * e, d0)) / (2 * h) for e in np.eye(3)]
        fd_d = [(dist(s0, d0 + h * e) - dist(s0, d0 - h * e)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(starts.grad.numpy()[i], fd_s, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(dirs.grad.numpy()[i], fd_d, rtol=1e-3, atol=1e-4)


def test_query_on_a_collected_mesh_is_a_clear_error():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    stale = mesh.id
    del mesh
    gc.collect()
    outs = [wp.zeros(1, dtype=int), wp.zeros(1, dtype=int), wp.zeros(1, dtype=wp.vec2), wp.zeros(1, dtype=float),
            wp.zeros(1, dtype=wp.vec3)]
    with pytest.raises(OutOfBoundsError, match=r"index 16 is out of range for array mesh descriptor \(an id that "
                       r"is not a live Mesh's\)"):
        wp.launch(closest_kernel, dim=1, inputs=[stale, wp.zeros(1, dtype=wp.vec3), 1.0, 0, *outs])


def test_bad_meshes_are_refused():
    pts, tris = uv_sphere()
    points, indices = wp.array(pts, dtype=wp.vec3), wp.array(tris.flatten(), dtype=wp.int32)
    with pytest.raises(TypeError, match="points must be a contiguous 1-d adjit array of vec3"):
        wp.Mesh(wp.array(pts.flatten(), dtype=float), indices)
    with pytest.raises(TypeError, match="points must be a contiguous 1-d adjit array of vec3"):
        wp.Mesh(wp.array(np.repeat(pts, 2, axis=0), dtype=wp.vec3)[::2], indices)  # a strided view
    with pytest.raises(TypeError, match="indices must be a contiguous adjit array of int32"):
        wp.Mesh(points, tris.flatten())
    with pytest.raises(TypeError, match="indices must be a contiguous adjit array of int32"):
        wp.Mesh(points, wp.array(np.repeat(tris.flatten(), 2), dtype=wp.int32)[::2])
    with pytest.raises(ValueError, match="3 vertex indices per triangle"):
        wp.Mesh(points, wp.array(tris.flatten()[:-1], dtype=wp.int32))
    with pytest.raises(ValueError, match=r"indices must lie in \[0, "):
        wp.Mesh(points, wp.array(tris.flatten() + 1, dtype=wp.int32))
    with pytest.raises(AdjitError, match="require gradients"):
        wp.Mesh(wp.array(pts, dtype=wp.vec3, requires_grad=True), indices)
    mesh = wp.Mesh(points, indices)
    with pytest.raises(ValueError, match="as many points"):
        mesh.points = wp.array(pts[:-1], dtype=wp.vec3)


def test_user_kernels_cannot_make_arrays_from_addresses():
    from adjit.errors import KernelTypeError

    @wp.kernel
    def from_ptr(addr: wp.uint64, out: wp.array(dtype=float)):
        a = wp.array(ptr=addr, shape=(4,), dtype=float)
        out[0] = a[0]
    with pytest.raises(KernelTypeError, match="not supported in adjit"):
        wp.launch(from_ptr, dim=1, inputs=[0, wp.zeros(1, dtype=float)])


@wp.kernel
def closest_point_only(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, qs[i], 10.0)
    out[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)


def test_forward_mode_matches_reverse_mode():
    # jvp along each axis gives the Jacobian's columns; the tape's backward its rows
    pts, tris = triangle_soup(60, seed=14)
    mesh = make_mesh(pts, tris)
    qs_np = np.random.default_rng(15).uniform(-1, 1, (32, 3)).astype(np.float32)
    columns = []
    for e in np.eye(3, dtype=np.float32):
        (t,) = wp.jvp(closest_point_only, 32, [mesh.id, wp.array(qs_np, dtype=wp.vec3)],
                      [None, np.tile(e, (32, 1))], [wp.zeros(32, dtype=wp.vec3)])
        columns.append(t.numpy())
    forward = np.stack(columns, axis=-1)  # [i, component, axis]
    qs = wp.array(qs_np, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(32, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(closest_point_only, 32, [mesh.id, qs, out])
    for k in range(3):
        tape.zero()
        seed = np.zeros((32, 3), np.float32)
        seed[:, k] = 1
        tape.backward(grads={out: wp.array(seed, dtype=wp.vec3)})
        np.testing.assert_allclose(qs.grad.numpy(), forward[:, k, :], rtol=1e-5, atol=1e-6)
    assert np.abs(forward).max() > 0.5  # some points project onto a face or an edge
