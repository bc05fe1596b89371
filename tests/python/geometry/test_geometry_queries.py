"""Warp 1.19's mesh_query_point_sign_parity, mesh_query_sphere +
mesh_query_next, bvh_query_sphere and bvh_query_capsule (adjit/geometry,
docs/geometry.md) against float64 brute force over every face or box, and
the closest point's gradient against float64 central differences. Warp's
ray directions are embedded (never imported here)."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import adjit as wp
from test_geometry import closest_on_triangles, corners, make_mesh, ray_hits, triangle_soup, uv_sphere
from test_geometry_more import open_sphere

# Warp 1.19's first five sign_parity ray directions for perturbation_scale 0.1:
# (1, 1, 1) + three randf(rand_init(42), -0.1, 0.1) draws each (float32, from
# warp's CPU kernel, printed with float.hex).
WARP_DIRECTIONS = np.array([[float.fromhex(x) for x in row] for row in [
    ["0x1.079a7cp+0", "0x1.16230cp+0", "0x1.08e1c4p+0"],
    ["0x1.1223dep+0", "0x1.00fe32p+0", "0x1.d1d63p-1"],
    ["0x1.f9616ap-1", "0x1.eb7312p-1", "0x1.cf53a2p-1"],
    ["0x1.eb394p-1", "0x1.ffc0fcp-1", "0x1.deae34p-1"],
    ["0x1.ed2deep-1", "0x1.08694p+0", "0x1.08b768p+0"]]], np.float32)


# --- mesh_query_point_sign_parity -----------------------------------------------------------

@wp.kernel
def parity_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), max_dist: float, n_sample: int, scale: float,
                  found: wp.array(dtype=int), sign: wp.array(dtype=float), face: wp.array(dtype=int),
                  at: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_parity(mesh, qs[i], max_dist, n_sample, scale)
    found[i] = int(q.result)
    sign[i] = q.sign
    face[i] = q.face
    if q.result:
        at[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)


@wp.kernel
def parity_default_kernel(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), sign: wp.array(dtype=float)):
    i = wp.tid()
    sign[i] = wp.mesh_query_point_sign_parity(mesh, qs[i], 10.0).sign


def parity(mesh, qs, n_sample=1, scale=0.1, max_dist=10.0):
    n = len(qs)
    outs = [wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=int), wp.zeros(n, dtype=wp.vec3)]
    wp.launch(parity_kernel, dim=n, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), max_dist, n_sample, scale, *outs])
    return [o.numpy() for o in outs]


@wp.kernel
def directions_kernel(n: int, scale: float, out: wp.array(dtype=wp.vec3)):
    state = wp.rand_init(42)
    for i in range(n):
        x = wp.randf(state, -scale, scale)
        y = wp.randf(state, -scale, scale)
        z = wp.randf(state, -scale, scale)
        out[i] = wp.vec3(1.0 + x, 1.0 + y, 1.0 + z)


def test_parity_ray_directions_are_warps():
    out = wp.zeros(5, dtype=wp.vec3)
    wp.launch(directions_kernel, dim=1, inputs=[5, 0.1, out])
    np.testing.assert_array_equal(out.numpy(), WARP_DIRECTIONS)


def reference_parity(pts, tris, qs, dirs, margin=1e-4):
    """float64: the parity vote of the rays from each point along ``dirs``
    (-1 when at least half cross an odd number of faces), and whether every
    ray stays ``margin`` (in barycentric weight) away from every face's edges."""
    a, b, c = corners(pts, tris)
    signs, clear = [], []
    for p in qs.astype(np.float64):
        vote, ok = 0, True
        for d in dirs.astype(np.float64):
            t, wa, wb = ray_hits(p, d, a, b, c)
            vote += int(np.isfinite(t).sum() % 2)
            w = np.stack([wa, wb, 1 - wa - wb], -1)
            near = np.all(w > -margin, axis=1) & (np.abs(w).min(axis=1) < margin) & ~np.isnan(w).any(axis=1)
            ok &= not near.any()
        signs.append(-1.0 if 2 * vote >= len(dirs) else 1.0)
        clear.append(ok)
    return np.array(signs), np.array(clear)


@pytest.mark.parametrize("n_sample", [1, 3, 4, 5])
def test_parity_sign_matches_brute_force_on_an_open_mesh(n_sample):
    # with holes the crossing parity depends on the ray: the votes of Warp's
    # directions (embedded), counted in float64 over every face
    pts, tris = open_sphere()
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(21)
    qs = rng.uniform(-1.3, 1.3, (300, 3)).astype(np.float32)
    found, sign, _, _ = parity(mesh, qs, n_sample=n_sample)
    assert found.all()
    expected, clear = reference_parity(pts, tris, qs, WARP_DIRECTIONS[:n_sample])
    assert clear.sum() >= 280
    np.testing.assert_array_equal(sign[clear], expected[clear])
    assert 20 < (sign < 0).sum() < 280


def test_parity_sign_inside_and_outside_a_closed_mesh():
    pts, tris = uv_sphere(rings=16, segments=32)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(22)
    d = rng.normal(size=(200, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = np.concatenate([rng.uniform(0.05, 0.9, 100), rng.uniform(1.05, 2.0, 100)])
    qs = (d * r[:, None]).astype(np.float32)
    for n_sample, scale in [(1, 0.1), (3, 0.1), (5, 0.5)]:
        found, sign, _, _ = parity(mesh, qs, n_sample, scale)
        assert found.all()
        np.testing.assert_array_equal(sign, np.where(r < 1, -1.0, 1.0))
    # the defaults are (1, 0.1)
    sign = wp.zeros(200, dtype=float)
    wp.launch(parity_default_kernel, dim=200, inputs=[mesh.id, wp.array(qs, dtype=wp.vec3), sign])
    np.testing.assert_array_equal(sign.numpy(), parity(mesh, qs, 1, 0.1)[1])


def test_parity_without_rays_is_inside_and_max_dist_limits_only_the_point():
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    qs = np.array([[0, 0, 1.6], [0, 0, 1.2], [0, 0, 0.5], [3, 0, 0]], np.float32)
    found, sign, face, _ = parity(mesh, qs, n_sample=0)
    assert found.all() and (sign == -1).all()  # as Warp: no rays, no votes, 0 >= 0
    found, sign, face, _ = parity(mesh, qs, max_dist=0.45)
    assert found.tolist() == [0, 1, 0, 0] and face[0] == -1 and face[3] == -1
    assert sign[1] == 1.0


def test_parity_closest_point_matches_brute_force():
    pts, tris = triangle_soup(200, seed=23)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(24)
    qs = rng.uniform(-1.5, 1.5, (300, 3)).astype(np.float32)
    found, _, face, at = parity(mesh, qs, n_sample=3)
    assert found.all()
    a, b, c = corners(pts, tris)
    for i, p in enumerate(qs.astype(np.float64)):
        _, dist = closest_on_triangles(p, a, b, c)
        best = np.sqrt(dist.min())
        assert abs(np.linalg.norm(p - at[i]) - best) <= 2e-6 * (1 + best), i
        assert np.sqrt(dist[face[i]]) <= best + 2e-6 * (1 + best)


@wp.kernel
def parity_closest_point(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
                         faces: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_parity(mesh, qs[i], 10.0, 3)
    out[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    faces[i] = q.face


def closest_point_jacobians(kernel, pts, tris, qs_np):
    """Rows d out[i][k] / d qs[i] from the tape, and float64 central
    differences of the closest point on each found face, at the points whose
    neighbourhood stays in one region (interior, edge or corner) of the face."""
    n = len(qs_np)
    mesh = make_mesh(pts, tris)
    qs = wp.array(qs_np, dtype=wp.vec3, requires_grad=True)
    out, faces = wp.zeros(n, dtype=wp.vec3, requires_grad=True), wp.zeros(n, dtype=int)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=n, inputs=[mesh.id, qs, out, faces])
    a, b, c = corners(pts, tris)
    got, want = [], []
    for k in range(3):
        tape.zero()
        seed = np.zeros((n, 3), np.float32)
        seed[:, k] = 1
        out.grad = wp.array(seed, dtype=wp.vec3)
        tape.backward()
        rows = qs.grad.numpy().copy()
        for i in range(n):
            f = faces.numpy()[i]
            fa, fb, fc = a[f:f + 1], b[f:f + 1], c[f:f + 1]

            def point(p):
                w, _ = closest_on_triangles(p, fa, fb, fc)
                return (fa * w[:, :1] + fb * w[:, 1:] + fc * (1 - w.sum(1, keepdims=True)))[0]

            def region(p):
                w, _ = closest_on_triangles(p, fa, fb, fc)
                return tuple(np.abs([w[0, 0], w[0, 1], 1 - w[0].sum()]) < 1e-12)
            p0, h = qs_np[i].astype(np.float64), 1e-6
            if any(region(p0 + s * 1e-3 * e) != region(p0) for e in np.eye(3) for s in (-1, 1)):
                continue
            got.append(rows[i])
            want.append([(point(p0 + h * e)[k] - point(p0 - h * e)[k]) / (2 * h) for e in np.eye(3)])
    return np.array(got), np.array(want)


def test_parity_closest_point_jacobian_matches_central_differences():
    pts, tris = triangle_soup(60, seed=25)
    qs = np.random.default_rng(26).uniform(-1, 1, (40, 3)).astype(np.float32)
    got, want = closest_point_jacobians(parity_closest_point, pts, tris, qs)
    assert len(got) >= 100
    np.testing.assert_allclose(got, want, atol=2e-4)


# --- mesh_query_sphere, mesh_query_next ------------------------------------------------------

def segment_distance_sq(p, s, e):
    """float64: squared distances from p to the segments s-e (arrays)."""
    d = e - s
    ll = np.einsum("ij,ij->i", d, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(ll > 0, np.clip(np.einsum("ij,ij->i", p - s, d) / ll, 0, 1), 0)
    x = s + t[:, None] * d - p
    return np.einsum("ij,ij->i", x, x)


def triangle_distance_sq(p, a, b, c):
    """float64: squared distances from p to triangles abc, degenerate ones
    (zero area: their longest edge) included."""
    best = np.minimum(np.minimum(segment_distance_sq(p, a, b), segment_distance_sq(p, b, c)),
                      segment_distance_sq(p, c, a))
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    ok = nn > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.einsum("ij,ij->i", p - a, n) / nn  # p = proj + h n
        proj = p - h[:, None] * n
        # the projection is inside when it is on the inner side of all three edges
        inside = ok.copy()
        for s, e in ((a, b), (b, c), (c, a)):
            inside &= np.einsum("ij,ij->i", np.cross(e - s, proj - s), n) >= 0
    return np.where(inside, h * h * nn, best)


def soup_with_degenerate_faces(n, seed):
    pts, tris = triangle_soup(n, seed)
    pts[3 * 5 + 2] = 0.3 * pts[3 * 5] + 0.7 * pts[3 * 5 + 1]  # collinear corners
    pts[3 * 7 + 1] = pts[3 * 7 + 2] = pts[3 * 7]  # one point
    return pts, tris


@wp.kernel
def mesh_sphere_kernel(mesh: wp.uint64, centres: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
                       old_name: int, hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.mesh_query_sphere(mesh, centres[i], radii[i])
    face = int(-1)
    if old_name == 1:
        while wp.mesh_query_aabb_next(query, face):
            hits[i, face] += 1
    else:
        while wp.mesh_query_next(query, face):
            hits[i, face] += 1


def mesh_sphere_hits(mesh, faces, centres, radii, old_name=0):
    hits = wp.zeros((len(centres), faces), dtype=int)
    wp.launch(mesh_sphere_kernel, dim=len(centres),
              inputs=[mesh.id, wp.array(centres, dtype=wp.vec3), wp.array(radii, dtype=float), old_name, hits])
    return hits.numpy()


def test_mesh_sphere_finds_each_face_within_the_radius_once():
    pts, tris = soup_with_degenerate_faces(300, seed=31)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(32)
    centres = rng.uniform(-1.2, 1.2, (200, 3)).astype(np.float32)
    radii = rng.uniform(0.0, 0.5, 200).astype(np.float32)
    radii[:5] = [0.0, -0.3, 0.5, 0.5, 0.5]
    centres[2] = pts[3 * 7]  # at the degenerate point face
    centres[3] = pts[3 * 5 + 2] + np.float32([0, 0, 0.4])  # above the collinear face
    hits = mesh_sphere_hits(mesh, len(tris), centres, radii)
    assert hits.max() == 1  # no face twice
    a, b, c = corners(pts, tris)
    checked = 0
    for i, (p, r) in enumerate(zip(centres.astype(np.float64), radii.astype(np.float64))):
        d = np.sqrt(triangle_distance_sq(p, a, b, c))
        r = max(r, 0.0)
        clear = np.abs(d - r) > 1e-5
        np.testing.assert_array_equal(hits[i][clear], (d <= r)[clear], err_msg=f"sphere {i}")
        checked += clear.sum()
    assert checked > 0.99 * hits.size and hits.sum() > 500
    assert hits[2, 7] == 1 and hits[1].sum() == 0 and hits[3, 5] == 1
    # mesh_query_aabb_next advances a sphere query as mesh_query_next does (as Warp's)
    np.testing.assert_array_equal(mesh_sphere_hits(mesh, len(tris), centres, radii, old_name=1), hits)


@wp.kernel
def mesh_box_next_kernel(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    query = wp.mesh_query_aabb(mesh, lower, upper)
    face = int(-1)
    while wp.mesh_query_next(query, face):
        hits[face] += 1


def test_mesh_query_next_advances_box_queries():
    pts, tris = soup_with_degenerate_faces(200, seed=33)
    mesh = make_mesh(pts, tris)
    lower, upper = np.float32([-0.4, -0.2, -0.5]), np.float32([0.3, 0.6, 0.2])
    hits = wp.zeros(len(tris), dtype=int)
    wp.launch(mesh_box_next_kernel, dim=1, inputs=[mesh.id, wp.vec3(*lower), wp.vec3(*upper), hits])
    flo, fhi = pts[tris].min(axis=1), pts[tris].max(axis=1)
    expected = np.all(flo <= upper, axis=1) & np.all(fhi >= lower, axis=1)
    np.testing.assert_array_equal(hits.numpy(), expected.astype(int))
    assert 5 < expected.sum() < len(tris)


# --- bvh_query_sphere, bvh_query_capsule ----------------------------------------------------

@wp.kernel
def bvh_sphere_kernel(bvh: wp.uint64, centres: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
                      hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_sphere(bvh, centres[i], radii[i])
    item = int(-1)
    while wp.bvh_query_next(query, item):
        hits[i, item] += 1


@wp.kernel
def bvh_capsule_kernel(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                       radii: wp.array(dtype=float), max_dist: float, hits: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_capsule(bvh, starts[i], dirs[i], radii[i])
    item = int(-1)
    while wp.bvh_query_next(query, item, max_dist):
        hits[i, item] += 1


def random_boxes(n, seed):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    return lo, (lo + rng.uniform(0, 0.2, (n, 3))).astype(np.float32)


def box_distance(p, lo, hi):
    d = np.maximum(np.maximum(lo - p, p - hi), 0)
    return np.sqrt(np.einsum("ij,ij->i", d, d))


@pytest.mark.parametrize("leaf_size", [1, 3])
def test_bvh_sphere_finds_each_box_within_the_radius_once(leaf_size):
    lo, hi = random_boxes(300, seed=41)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), leaf_size=leaf_size)
    rng = np.random.default_rng(42)
    centres = rng.uniform(-1.2, 1.2, (200, 3)).astype(np.float32)
    radii = rng.uniform(0.0, 0.4, 200).astype(np.float32)
    radii[:2] = [-0.5, 0.0]
    centres[1] = hi[17]  # a corner touches: counted
    hits = wp.zeros((200, 300), dtype=int)
    wp.launch(bvh_sphere_kernel, dim=200, inputs=[bvh.id, wp.array(centres, dtype=wp.vec3),
                                                   wp.array(radii, dtype=float), hits])
    hits = hits.numpy()
    assert hits.max() == 1 and hits.sum() > 300
    lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
    for i in range(200):
        d, r = box_distance(centres[i].astype(np.float64), lo64, hi64), max(float(radii[i]), 0.0)
        clear = np.abs(d - r) > 1e-6
        np.testing.assert_array_equal(hits[i][clear], (d <= r)[clear], err_msg=f"sphere {i}")
    assert hits[1, 17] == 1 and hits[0].sum() == (box_distance(centres[0], lo64, hi64) == 0).sum()


def reference_capsule(start, d, r, lo, hi, max_dist):
    """float64: whether the ray start + t d meets each box grown by r at some
    t in [0, max_dist] (Warp's slab test, closed at max_dist), and whether the
    answer is clear of ties by 1e-5."""
    lo, hi = lo - r, hi + r
    enter, leave = np.full(len(lo), -np.inf), np.full(len(lo), np.inf)
    inside, margin = np.ones(len(lo), bool), np.full(len(lo), np.inf)
    for k in range(3):
        if d[k] == 0:
            inside &= (start[k] >= lo[:, k]) & (start[k] <= hi[:, k])
            margin = np.minimum(margin, np.minimum(np.abs(start[k] - lo[:, k]), np.abs(start[k] - hi[:, k])))
        else:
            t0, t1 = (lo[:, k] - start[k]) / d[k], (hi[:, k] - start[k]) / d[k]
            enter, leave = np.maximum(np.minimum(t0, t1), enter), np.minimum(np.maximum(t0, t1), leave)
    hit = inside & (leave >= 0) & (leave >= enter) & (enter <= max_dist)
    for gap in (leave, leave - enter, enter - max_dist):
        margin = np.minimum(margin, np.abs(np.where(np.isfinite(gap), gap, np.inf)))
    return hit, margin > 1e-5


@pytest.mark.parametrize("max_dist", [1.0, 0.5, np.inf])
def test_bvh_capsule_matches_the_grown_boxes_slab_test(max_dist):
    lo, hi = random_boxes(300, seed=43)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    rng = np.random.default_rng(44)
    starts = rng.uniform(-1.2, 1.2, (200, 3)).astype(np.float32)
    dirs = rng.normal(0, 0.6, (200, 3)).astype(np.float32)
    dirs[:20, 0] = 0  # parallel to the x slabs
    dirs[20:30, 1:] = 0  # along x
    radii = rng.uniform(-0.05, 0.3, 200).astype(np.float32)
    hits = wp.zeros((200, 300), dtype=int)
    wp.launch(bvh_capsule_kernel, dim=200, inputs=[bvh.id, wp.array(starts, dtype=wp.vec3),
                                                    wp.array(dirs, dtype=wp.vec3), wp.array(radii, dtype=float),
                                                    float(max_dist), hits])
    hits = hits.numpy()
    assert hits.max() == 1 and hits.sum() > 500
    for i in range(200):
        hit, clear = reference_capsule(starts[i].astype(np.float64), dirs[i].astype(np.float64),
                                       max(float(radii[i]), 0.0), lo.astype(np.float64), hi.astype(np.float64),
                                       max_dist)
        assert clear.mean() > 0.95
        np.testing.assert_array_equal(hits[i][clear], hit[clear], err_msg=f"capsule {i}")


def test_bvh_sphere_and_capsule_warp_doc_examples():
    # Warp 1.19's docstring examples and their printed outputs
    lowers = wp.array([[0, 0, 0], [2, 0, 0]], dtype=wp.vec3)
    uppers = wp.array([[1, 1, 1], [3, 1, 1]], dtype=wp.vec3)
    bvh = wp.Bvh(lowers, uppers)
    hits = wp.zeros((1, 2), dtype=int)
    wp.launch(bvh_sphere_kernel, dim=1, inputs=[bvh.id, wp.array([[0.5, 0.5, 0.5]], dtype=wp.vec3),
                                                 wp.array([0.6], dtype=float), hits])
    assert hits.numpy().tolist() == [[1, 0]]
    bvh = wp.Bvh(wp.array([[0.75, -1, -1]], dtype=wp.vec3), wp.array([[2.0, 1, 1]], dtype=wp.vec3))
    for p1, count in (((0.5, 0, 0), 1), ((0.4, 0, 0), 0)):  # the sweep reaches 0.75 - 0.3 = 0.45
        hits = wp.zeros((1, 1), dtype=int)
        wp.launch(bvh_capsule_kernel, dim=1, inputs=[bvh.id, wp.array([[0, 0, 0]], dtype=wp.vec3),
                                                      wp.array([p1], dtype=wp.vec3), wp.array([0.3], dtype=float),
                                                      1.0, hits])
        assert hits.numpy()[0, 0] == count


@pytest.mark.parametrize("kernel", [parity_kernel, mesh_sphere_kernel, bvh_sphere_kernel, bvh_capsule_kernel],
                         ids=lambda k: k.__name__)
def test_kernels_compile_to_ptx_that_ptxas_accepts(kernel, tmp_path):
    # device functions like any other: they lower to PTX (the objects are host-only so far)
    ptx = wp.compile(kernel, target="cuda", arch="sm_80")
    assert re.search(r"\.visible\s+\.entry\s+\w+", ptx)
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not on PATH")
    (tmp_path / "k.ptx").write_text(ptx)
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@wp.kernel
def mesh_next_on_a_bvh_query(bvh: wp.uint64, hits: wp.array(dtype=int)):
    query = wp.bvh_query_sphere(bvh, wp.vec3(0.0), 1.0)
    face = int(0)
    while wp.mesh_query_next(query, face):
        hits[face] = 1


def test_wrong_query_or_id_is_a_located_error():
    with pytest.raises(wp.KernelTypeError, match=r"test_geometry_queries.py:\d+: argument 1 \('query'\) of "
                                                 r"mesh_query_next\(\) must be a MeshQueryAABB"):
        wp.launch(mesh_next_on_a_bvh_query, dim=1, inputs=[wp.uint64(0), wp.zeros(3, dtype=int)])
    pts, tris = uv_sphere()
    mesh = make_mesh(pts, tris)
    hits = wp.zeros((1, 3), dtype=int)
    with pytest.raises(wp.OutOfBoundsError, match="not the id of a live adjit.Bvh"):
        wp.launch(bvh_sphere_kernel, dim=1, inputs=[mesh.id, wp.array([[0, 0, 0]], dtype=wp.vec3),
                                                     wp.array([2.0], dtype=float), hits])
    assert hits.numpy().sum() == 0


@wp.kernel
def near_face_energy(mesh: wp.uint64, bvh: wp.uint64, centres: wp.array(dtype=wp.vec3),
                     centroids: wp.array(dtype=wp.vec3), radius: float, energy: wp.array(dtype=float)):
    i = wp.tid()
    c = centres[i]
    query = wp.mesh_query_sphere(mesh, c, radius)
    face = int(0)
    while wp.mesh_query_next(query, face):
        wp.atomic_add(energy, 0, wp.length_sq(c - centroids[face]))
    boxes = wp.bvh_query_capsule(bvh, c, wp.vec3(0.5, 0.0, 0.0), radius)
    item = int(0)
    while wp.bvh_query_next(boxes, item, 1.0):
        wp.atomic_add(energy, 1, wp.length_sq(c - centroids[item]))


def test_sums_over_query_results_differentiate_in_the_kernels_own_arrays():
    # the walks are discrete; what the kernel computes at the indices they give is
    # differentiated: d/dc sum |c - g_f|^2 = 2 sum (c - g_f) (hand-derived)
    pts, tris = triangle_soup(200, seed=51)
    mesh = make_mesh(pts, tris)
    g = pts[tris].mean(axis=1).astype(np.float32)
    bvh = wp.Bvh(wp.array(pts[tris].min(axis=1), dtype=wp.vec3), wp.array(pts[tris].max(axis=1), dtype=wp.vec3))
    centres_np = np.random.default_rng(52).uniform(-1, 1, (50, 3)).astype(np.float32)
    radius = 0.3
    for slot in (0, 1):
        centres = wp.array(centres_np, dtype=wp.vec3, requires_grad=True)
        centroids = wp.array(g, dtype=wp.vec3, requires_grad=True)
        energy = wp.zeros(2, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(near_face_energy, dim=50, inputs=[mesh.id, bvh.id, centres, centroids, radius, energy])
        seed = np.zeros(2, np.float32)
        seed[slot] = 1
        tape.backward(grads={energy: wp.array(seed, dtype=float)})
        if slot == 0:
            hits = mesh_sphere_hits(mesh, len(tris), centres_np, np.full(50, radius, np.float32))
        else:
            hits = wp.zeros((50, len(tris)), dtype=int)
            wp.launch(bvh_capsule_kernel, dim=50, inputs=[bvh.id, wp.array(centres_np, dtype=wp.vec3),
                                                          wp.array(np.tile([[0.5, 0, 0]], (50, 1)), dtype=wp.vec3),
                                                          wp.array(np.full(50, radius), dtype=float), 1.0, hits])
            hits = hits.numpy()
        assert hits.sum() > 20
        expected = 2 * (hits.sum(1)[:, None] * centres_np - hits @ g)
        np.testing.assert_allclose(centres.grad.numpy(), expected, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(centroids.grad.numpy(), -2 * (hits.T @ centres_np - hits.sum(0)[:, None] * g),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(energy.numpy()[slot],
                                   (hits * ((centres_np[:, None] - g[None]) ** 2).sum(-1)).sum(), rtol=1e-4)
