"""Warp's mesh queries as adjit device functions (kernel language).

Each query reads the mesh's descriptor at its id (handles.py), views the
mesh's arrays with ``address_array`` and walks the tree of bvh.py without a
stack: nodes are in heap order, so a walk moves by index arithmetic, and
the one bit per level saying which child it entered first (``trail``) is all
it needs to come back up. Closest-point walks enter the nearer child first
and skip boxes farther than the best distance so far; ray walks skip boxes
the ray misses or reaches beyond the nearest hit so far.

The walks are searches: they take the query with its gradient stopped and
return a face. The results (closest point weights, hit distance, ...) are
then computed from that face's corners by plain arithmetic, which adjit
differentiates: exact gradients with respect to the query away from ties
between faces, and no loop for the adjoint to replay backwards.
"""
from __future__ import annotations

import math

from ..language import address_array
from . import handles as H
from .kernel_lang import wp
from .walks import (_box_distance_sq, _box_entry, _box_furthest_sq, _climb_closest, _climb_furthest, _climb_ray,
                    _inverse_direction, _next)
from .winding import ROWS as WINDING_ROWS

_KIND = wp.constant(wp.uint64(H.MESH_KIND))
_WORDS = wp.constant(H.DESCRIPTOR_WORDS)
_POINT_COUNT = wp.constant(H.POINT_COUNT)
_POINTS = wp.constant(H.POINTS)
_FACE_COUNT = wp.constant(H.FACE_COUNT)
_INDICES = wp.constant(H.INDICES)
_VELOCITIES = wp.constant(H.VELOCITIES)
_VELOCITY_COUNT = wp.constant(H.VELOCITY_COUNT)
_NODE_COUNT = wp.constant(H.NODE_COUNT)
_NODE_LOWER = wp.constant(H.NODE_LOWER)
_NODE_UPPER = wp.constant(H.NODE_UPPER)
_LEAVES = wp.constant(H.LEAVES)
_LEAF_SIZE = wp.constant(H.LEAF_SIZE)
_ORDER = wp.constant(H.ORDER)
_WINDING = wp.constant(H.WINDING)
_WINDING_ROWS = wp.constant(WINDING_ROWS)
_INV_4PI = wp.constant(0.25 / math.pi)


@wp.struct
class MeshQueryPoint:
    """The result of mesh_query_point* and mesh_query_furthest_point_no_sign:
    ``result`` (a face within max_dist, or beyond min_dist, was found),
    ``sign`` (+1 outside, -1 inside; 1 for the no-sign query, where Warp
    reports 0; 0 for the furthest point, as Warp), ``face`` and the point's
    barycentric weights ``u``, ``v`` of the face's first two corners
    (``mesh_eval_position(id, face, u, v)``)."""
    result: bool
    sign: float
    face: int
    u: float
    v: float


@wp.struct
class MeshQueryRay:
    """The result of mesh_query_ray: ``result`` (a hit), ``sign`` (+1 when the
    ray hits the front of the face, -1 the back), ``face``, ``t`` (the hit is
    start + t * dir), ``u``, ``v`` (barycentric weights of the face's first
    two corners) and the face's unit ``normal``."""
    result: bool
    sign: float
    face: int
    t: float
    u: float
    v: float
    normal: wp.vec3


@wp.struct
class MeshQueryAABB:
    """The state of a mesh_query_aabb or mesh_query_sphere walk (advance it
    with mesh_query_next): the box (``lower``, ``upper``), or the sphere's
    centre (in both) and squared radius, and where the walk is."""
    id: wp.uint64
    lower: wp.vec3
    upper: wp.vec3
    sphere: bool
    radius_sq: float
    node: int
    item: int


# --- the descriptor and the mesh's arrays ---------------------------------------------------

@wp.func
def _descriptor(id: wp.uint64, word: int) -> wp.uint64:
    d = address_array(id, _WORDS, wp.uint64, "mesh descriptor (an id that is not a live Mesh's)")
    k = word
    if d[0] != _KIND:
        k = _WORDS  # reported as an access out of range, naming the descriptor
    return d[k]


@wp.func
def _address(id: wp.uint64, word: int) -> wp.int64:
    return wp.int64(_descriptor(id, word))


@wp.func
def _count(id: wp.uint64, word: int) -> int:
    return int(_descriptor(id, word))


@wp.func
def _vertex(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=wp.int32), face: int, k: int) -> wp.vec3:
    return points[indices[face * 3 + k]]


@wp.func
def _corner(id: wp.uint64, face: int, k: int) -> wp.vec3:
    indices = address_array(_address(id, _INDICES), _count(id, _FACE_COUNT) * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    return _vertex(points, indices, face, k)


# --- geometry of one triangle ---------------------------------------------------------------

@wp.func
def _closest_weights(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec2:
    """The barycentric weights (of a, b) of the point of triangle abc closest to p
    (by the Voronoi regions of its corners and edges)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec2(1.0, 0.0)
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec2(0.0, 1.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        s = d1 / (d1 - d3)
        return wp.vec2(1.0 - s, s)
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec2(0.0, 0.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        s = d2 / (d2 - d6)
        return wp.vec2(1.0 - s, 0.0)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec2(0.0, 1.0 - s)
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return wp.vec2(1.0 - v - w, v)


@wp.func
def _ray_triangle(start: wp.vec3, dir: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec3:
    """(t, weight of a, weight of b) where the ray's line meets triangle abc's
    plane (Moller-Trumbore); t is -1 when the line is parallel to the plane."""
    e1 = b - a
    e2 = c - a
    h = wp.cross(dir, e2)
    det = wp.dot(e1, h)
    if det == 0.0:
        return wp.vec3(-1.0, 0.0, 0.0)
    f = 1.0 / det
    s = start - a
    wb = f * wp.dot(s, h)
    q = wp.cross(s, e1)
    wc = f * wp.dot(dir, q)
    t = f * wp.dot(e2, q)
    return wp.vec3(t, 1.0 - wb - wc, wb)


# --- walking the tree -----------------------------------------------------------------------

@wp.func
def _closest_face(id: wp.uint64, p: wp.vec3, max_dist: float) -> int:
    """The face nearest to p within max_dist (the first of equally near ones
    in the walk's order), or -1."""
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    best = max_dist * max_dist
    best_face = int(-1)
    node = int(-1)
    if _box_distance_sq(lower[0], upper[0], p) < best:
        node = 0
    depth = int(0)
    trail = wp.int64(0)
    lone = wp.int64(0)
    while node >= 0:
        climb = True
        if node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            for k in range(begin, wp.min(begin + leaf_size, faces)):
                f = int(order[k])
                a = _vertex(points, indices, f, 0)
                b = _vertex(points, indices, f, 1)
                c = _vertex(points, indices, f, 2)
                w = _closest_weights(p, a, b, c)
                q = a * w[0] + b * w[1] + c * (1.0 - w[0] - w[1])
                dist = wp.length_sq(p - q)
                if dist < best:
                    best = dist
                    best_face = f
        else:
            left = 2 * node + 1
            near_left = _box_distance_sq(lower[left], upper[left], p)
            near_right = _box_distance_sq(lower[left + 1], upper[left + 1], p)
            if near_left < best or near_right < best:  # enter the nearer child; its sibling later, if still near
                right_first = int(near_right < near_left)
                single = int(near_left >= best or near_right >= best)
                bit = wp.int64(1) << wp.int64(depth)
                trail = (trail & ~bit) | (wp.int64(right_first) << wp.int64(depth))
                lone = (lone & ~bit) | (wp.int64(single) << wp.int64(depth))
                node = left + right_first
                depth = depth + 1
                climb = False
        if climb:
            nd = _climb_closest(lower, upper, p, best, node, depth, trail, lone)
            node = nd[0]
            depth = nd[1]
    return best_face


@wp.func
def _first_hit(id: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float) -> int:
    """The face the ray start + t dir (0 <= t < max_t) hits first, or -1."""
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    inv_dir = _inverse_direction(dir)
    best = max_t
    best_face = int(-1)
    node = int(-1)
    if _box_entry(lower[0], upper[0], start, inv_dir) < best:
        node = 0
    depth = int(0)
    trail = wp.int64(0)
    lone = wp.int64(0)
    while node >= 0:
        climb = True
        if node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            for k in range(begin, wp.min(begin + leaf_size, faces)):
                f = int(order[k])
                hit = _ray_triangle(start, dir, _vertex(points, indices, f, 0), _vertex(points, indices, f, 1),
                                    _vertex(points, indices, f, 2))
                if hit[0] >= 0.0 and hit[0] < best and hit[1] >= 0.0 and hit[2] >= 0.0 and hit[1] + hit[2] <= 1.0:
                    best = hit[0]
                    best_face = f
        else:
            left = 2 * node + 1
            enter_left = _box_entry(lower[left], upper[left], start, inv_dir)
            enter_right = _box_entry(lower[left + 1], upper[left + 1], start, inv_dir)
            if enter_left < best or enter_right < best:  # the child the ray enters first; the other later
                right_first = int(enter_right < enter_left)
                single = int(enter_left >= best or enter_right >= best)
                bit = wp.int64(1) << wp.int64(depth)
                trail = (trail & ~bit) | (wp.int64(right_first) << wp.int64(depth))
                lone = (lone & ~bit) | (wp.int64(single) << wp.int64(depth))
                node = left + right_first
                depth = depth + 1
                climb = False
        if climb:
            nd = _climb_ray(lower, upper, start, inv_dir, best, node, depth, trail, lone)
            node = nd[0]
            depth = nd[1]
    return best_face


# --- the queries ----------------------------------------------------------------------------

@wp.func
def _point_result(id: wp.uint64, point: wp.vec3, face: int, sign: float) -> MeshQueryPoint:
    r = MeshQueryPoint()
    r.result = False
    r.sign = sign
    r.face = face
    r.u = 0.0
    r.v = 0.0
    if face >= 0:
        w = _closest_weights(point, _corner(id, face, 0), _corner(id, face, 1), _corner(id, face, 2))
        r.result = True
        r.u = w[0]
        r.v = w[1]
    return r


@wp.func
def mesh_query_point_no_sign(id: wp.uint64, point: wp.vec3, max_dist: float) -> MeshQueryPoint:
    """The point of the mesh closest to ``point`` within ``max_dist`` (Warp's
    mesh_query_point_no_sign): ``face`` and weights ``u``, ``v``; sign 1."""
    face = _closest_face(id, wp.stop_gradient(point), wp.stop_gradient(max_dist))
    return _point_result(id, point, face, 1.0)


@wp.func
def _normal_sign(id: wp.uint64, point: wp.vec3, face: int) -> float:
    """-1 if ``point`` lies behind ``face`` (inside a closed mesh), else 1."""
    a = _corner(id, face, 0)
    n = wp.cross(_corner(id, face, 1) - a, _corner(id, face, 2) - a)
    if wp.dot(point - a, n) < 0.0:
        return -1.0
    return 1.0


@wp.func
def mesh_query_point_sign_normal(id: wp.uint64, point: wp.vec3, max_dist: float) -> MeshQueryPoint:
    """As mesh_query_point_no_sign, with ``sign`` from the side of the closest
    face's plane ``point`` is on (-1 behind: inside a closed, outward-facing
    mesh)."""
    p = wp.stop_gradient(point)
    face = _closest_face(id, p, wp.stop_gradient(max_dist))
    sign = float(1.0)
    if face >= 0:
        sign = _normal_sign(id, p, face)
    return _point_result(id, point, face, sign)


@wp.func
def _crossings(id: wp.uint64, start: wp.vec3, dir: wp.vec3) -> int:
    """How many faces the ray start + t dir (t >= 0) crosses."""
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    inv_dir = _inverse_direction(dir)
    count = int(0)
    node = int(0)
    while node >= 0:
        enter = _box_entry(lower[node], upper[node], start, inv_dir) < wp.inf
        if enter and node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            for k in range(begin, wp.min(begin + leaf_size, faces)):
                f = int(order[k])
                hit = _ray_triangle(start, dir, _vertex(points, indices, f, 0), _vertex(points, indices, f, 1),
                                    _vertex(points, indices, f, 2))
                if hit[0] >= 0.0 and hit[1] >= 0.0 and hit[2] >= 0.0 and hit[1] + hit[2] <= 1.0:
                    count = count + 1
            enter = False
        if enter:
            node = 2 * node + 1
        else:
            node = _next(node)
    return count


@wp.func
def _parity_sign(id: wp.uint64, p: wp.vec3) -> float:
    """mesh_query_point's sign: -1 when at least two of the three rays along
    the axes cross the mesh an odd number of times."""
    inside = (_crossings(id, p, wp.vec3(1.0, 0.0, 0.0)) % 2) + (_crossings(id, p, wp.vec3(0.0, 1.0, 0.0)) % 2) \
        + (_crossings(id, p, wp.vec3(0.0, 0.0, 1.0)) % 2)
    if inside >= 2:
        return -1.0
    return 1.0


@wp.func
def mesh_query_point(id: wp.uint64, point: wp.vec3, max_dist: float) -> MeshQueryPoint:
    """As mesh_query_point_no_sign, with ``sign`` -1 inside the mesh and +1
    outside, decided by the parity of the crossings of three rays along the
    axes (the majority of the three): robust for closed meshes with small
    holes or overlaps, as Warp's."""
    p = wp.stop_gradient(point)
    face = _closest_face(id, p, wp.stop_gradient(max_dist))
    sign = float(1.0)
    if face >= 0:
        sign = _parity_sign(id, p)
    return _point_result(id, point, face, sign)


@wp.func
def _parity_vote_sign(id: wp.uint64, p: wp.vec3, n_sample: int, perturbation_scale: float) -> float:
    """mesh_query_point_sign_parity's sign: -1 when at least half of ``n_sample``
    rays cross the mesh an odd number of times (so -1 for n_sample <= 0, as
    Warp). Ray i goes along (1, 1, 1) plus three draws of randf(state, -scale,
    scale) from rand_init(42), redrawn while the direction is nearly zero:
    Warp's directions, draw for draw."""
    state = wp.rand_init(42)
    vote = int(0)
    for i in range(n_sample):
        dir = wp.vec3(0.0)
        searching = True
        while searching:
            x = wp.randf(state, -perturbation_scale, perturbation_scale)
            y = wp.randf(state, -perturbation_scale, perturbation_scale)
            z = wp.randf(state, -perturbation_scale, perturbation_scale)
            dir = wp.vec3(1.0 + x, 1.0 + y, 1.0 + z)
            searching = wp.length_sq(dir) < 1.0e-8
        vote = vote + _crossings(id, p, dir) % 2
    if vote * 2 >= n_sample:
        return -1.0
    return 1.0


@wp.func
def mesh_query_point_sign_parity(id: wp.uint64, point: wp.vec3, max_dist: float, n_sample: int = 1,
                                 perturbation_scale: float = 0.1) -> MeshQueryPoint:
    """As mesh_query_point_no_sign, with ``sign`` -1 (inside) when at least half
    of ``n_sample`` rays from ``point`` cross the mesh an odd number of times,
    else +1 (Warp's mesh_query_point_sign_parity). The rays go along (1, 1, 1)
    perturbed per axis by uniform draws in [-perturbation_scale,
    perturbation_scale) from a fixed seed, as Warp's (the same directions).
    The sign does not depend on ``max_dist``; prefer an odd ``n_sample``."""
    p = wp.stop_gradient(point)
    face = _closest_face(id, p, wp.stop_gradient(max_dist))
    sign = float(1.0)
    if face >= 0:
        sign = _parity_vote_sign(id, p, n_sample, wp.stop_gradient(perturbation_scale))
    return _point_result(id, point, face, sign)


@wp.func
def mesh_query_ray(id: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float) -> MeshQueryRay:
    """The first face the ray ``start + t * dir`` (0 <= t < max_t) hits:
    ``t``, weights ``u``, ``v``, ``sign`` (+1 on the face's front) and the
    face's unit ``normal``."""
    face = _first_hit(id, wp.stop_gradient(start), wp.stop_gradient(dir), wp.stop_gradient(max_t))
    r = MeshQueryRay()
    r.result = False
    r.sign = 0.0
    r.face = face
    r.t = 0.0
    r.u = 0.0
    r.v = 0.0
    r.normal = wp.vec3(0.0)
    if face >= 0:
        a = _corner(id, face, 0)
        b = _corner(id, face, 1)
        c = _corner(id, face, 2)
        hit = _ray_triangle(start, dir, a, b, c)
        n = wp.normalize(wp.cross(b - a, c - a))
        r.result = True
        r.t = hit[0]
        r.u = hit[1]
        r.v = hit[2]
        r.normal = n
        r.sign = 1.0
        if wp.dot(dir, n) > 0.0:
            r.sign = -1.0
    return r


@wp.func
def mesh_query_aabb(id: wp.uint64, lower: wp.vec3, upper: wp.vec3) -> MeshQueryAABB:
    """A walk over the faces whose bounds overlap the box [lower, upper]
    (advance it with ``mesh_query_aabb_next``)."""
    q = MeshQueryAABB()
    q.id = id
    q.lower = wp.stop_gradient(lower)
    q.upper = wp.stop_gradient(upper)
    q.sphere = False
    q.radius_sq = 0.0
    q.node = 0
    q.item = 0
    return q


@wp.func
def mesh_query_sphere(id: wp.uint64, center: wp.vec3, radius: float) -> MeshQueryAABB:
    """A walk over the faces that meet the closed ball of ``radius`` about
    ``center`` (their closest point to it at most ``radius`` away; a negative
    radius counts as 0), advanced by ``mesh_query_next`` (Warp's
    mesh_query_sphere: boxes tested exactly against the ball, then each
    face's closest point)."""
    c = wp.stop_gradient(center)
    r = wp.max(wp.stop_gradient(radius), 0.0)
    q = MeshQueryAABB()
    q.id = id
    q.lower = c
    q.upper = c
    q.sphere = True
    q.radius_sq = r * r
    q.node = 0
    q.item = 0
    return q


@wp.func
def _query_meets_box(query: MeshQueryAABB, lo: wp.vec3, hi: wp.vec3) -> bool:
    if query.sphere:
        return _box_distance_sq(lo, hi, query.lower) <= query.radius_sq
    return lo[0] <= query.upper[0] and lo[1] <= query.upper[1] and lo[2] <= query.upper[2] and \
        hi[0] >= query.lower[0] and hi[1] >= query.lower[1] and hi[2] >= query.lower[2]


@wp.func
def _face_meets_ball(center: wp.vec3, radius_sq: float, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> bool:
    """Whether triangle abc's closest point to ``center`` is within the
    radius; a face of zero area is taken as its longest edge (as Warp)."""
    ab = b - a
    ac = c - a
    n = wp.cross(ab, ac)
    cp = wp.vec3(0.0)
    if wp.dot(n, n) == 0.0:
        bc = c - b
        lab = wp.dot(ab, ab)
        lac = wp.dot(ac, ac)
        lbc = wp.dot(bc, bc)
        s = a
        e = ab
        length_sq = lab
        if lab < lac or lab < lbc:
            if lac >= lbc:
                e = ac
                length_sq = lac
            else:
                s = b
                e = bc
                length_sq = lbc
        t = float(0.0)
        if length_sq > 0.0:
            t = wp.clamp(wp.dot(center - s, e) / length_sq, 0.0, 1.0)
        cp = s + t * e
    else:
        w = _closest_weights(center, a, b, c)
        cp = a * w[0] + b * w[1] + c * (1.0 - w[0] - w[1])
    d = cp - center
    return wp.dot(d, d) <= radius_sq


@wp.func
def mesh_query_aabb_next(query: wp.ref[MeshQueryAABB], index: wp.ref[int]) -> bool:
    """The next face of the walk in ``index``; False when there is none (the
    older name of mesh_query_next: it advances sphere queries too, as Warp's)."""
    id = query.id
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    node = query.node
    item = query.item
    found = int(-1)
    while node >= 0 and found < 0:
        lo = lower[node]
        hi = upper[node]
        enter = _query_meets_box(query, lo, hi)
        if enter and node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            count = wp.min(leaf_size, faces - begin)
            while item < count and found < 0:
                f = int(order[begin + item])
                item = item + 1
                a = _vertex(points, indices, f, 0)
                b = _vertex(points, indices, f, 1)
                c = _vertex(points, indices, f, 2)
                flo = wp.min(wp.min(a, b), c)
                fhi = wp.max(wp.max(a, b), c)
                if _query_meets_box(query, flo, fhi):
                    if not query.sphere or _face_meets_ball(query.lower, query.radius_sq, a, b, c):
                        found = f
            if found < 0:
                item = 0
                enter = False
        if found < 0:
            if enter:
                node = 2 * node + 1
            else:
                node = _next(node)
    query.node = node
    query.item = item
    if found >= 0:
        index = found
        return True
    return False


@wp.func
def mesh_query_next(query: wp.ref[MeshQueryAABB], index: wp.ref[int]) -> bool:
    """The next face of a mesh_query_aabb or mesh_query_sphere walk in
    ``index`` and True; False (``index`` unchanged) when there is none."""
    return mesh_query_aabb_next(query, index)


# --- furthest points, any hits, crossings, winding numbers ----------------------------------

@wp.func
def _furthest_corner(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec2:
    """The barycentric weights (of a, b) of the point of triangle abc farthest
    from p: a corner (the squared distance is convex), the first of equally far."""
    da = wp.length_sq(p - a)
    db = wp.length_sq(p - b)
    dc = wp.length_sq(p - c)
    if da >= db and da >= dc:
        return wp.vec2(1.0, 0.0)
    if db >= dc:
        return wp.vec2(0.0, 1.0)
    return wp.vec2(0.0, 0.0)


@wp.func
def _furthest_face(id: wp.uint64, p: wp.vec3, min_dist: float) -> int:
    """The face with the point farthest from p, if farther than min_dist (the
    first of equally far ones in the walk's order), or -1. The walk enters the
    child whose box reaches farther first and skips boxes whose farthest
    corner is no farther than the best so far."""
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    best = min_dist * min_dist
    best_face = int(-1)
    node = int(-1)
    if _box_furthest_sq(lower[0], upper[0], p) > best:
        node = 0
    depth = int(0)
    trail = wp.int64(0)
    lone = wp.int64(0)
    while node >= 0:
        climb = True
        if node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            for k in range(begin, wp.min(begin + leaf_size, faces)):
                f = int(order[k])
                a = _vertex(points, indices, f, 0)
                b = _vertex(points, indices, f, 1)
                c = _vertex(points, indices, f, 2)
                dist = wp.max(wp.max(wp.length_sq(p - a), wp.length_sq(p - b)), wp.length_sq(p - c))
                if dist > best:
                    best = dist
                    best_face = f
        else:
            left = 2 * node + 1
            far_left = _box_furthest_sq(lower[left], upper[left], p)
            far_right = _box_furthest_sq(lower[left + 1], upper[left + 1], p)
            if far_left > best or far_right > best:  # enter the farther child; its sibling later, if still far
                right_first = int(far_right > far_left)
                single = int(far_left <= best or far_right <= best)
                bit = wp.int64(1) << wp.int64(depth)
                trail = (trail & ~bit) | (wp.int64(right_first) << wp.int64(depth))
                lone = (lone & ~bit) | (wp.int64(single) << wp.int64(depth))
                node = left + right_first
                depth = depth + 1
                climb = False
        if climb:
            nd = _climb_furthest(lower, upper, p, best, node, depth, trail, lone)
            node = nd[0]
            depth = nd[1]
    return best_face


@wp.func
def mesh_query_furthest_point_no_sign(id: wp.uint64, point: wp.vec3, min_dist: float) -> MeshQueryPoint:
    """The point of the mesh farthest from ``point``, if farther than
    ``min_dist`` (Warp's mesh_query_furthest_point_no_sign): ``result``,
    ``face`` and the weights ``u``, ``v`` of that face's farthest corner (a
    mesh's farthest point is always a corner); ``sign`` 0, as Warp's. The
    weights are constants: the gradient with respect to ``point`` flows
    through what a kernel computes from the corner (its distance, ...)."""
    p = wp.stop_gradient(point)
    face = _furthest_face(id, p, wp.stop_gradient(min_dist))
    r = MeshQueryPoint()
    r.result = False
    r.sign = 0.0
    r.face = face
    r.u = 0.0
    r.v = 0.0
    if face >= 0:
        w = _furthest_corner(p, _corner(id, face, 0), _corner(id, face, 1), _corner(id, face, 2))
        r.result = True
        r.u = w[0]
        r.v = w[1]
    return r


@wp.func
def mesh_query_ray_anyhit(id: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float) -> bool:
    """Whether the ray ``start + t * dir`` hits any face at 0 <= t < max_t
    (``max_t`` in multiples of ``|dir|``); stops at the first hit found, so it
    costs at most what mesh_query_ray does."""
    s = wp.stop_gradient(start)
    d = wp.stop_gradient(dir)
    t_max = wp.stop_gradient(max_t)
    lower = address_array(_address(id, _NODE_LOWER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), _count(id, _NODE_COUNT), wp.vec3, "mesh bvh upper")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    inv_dir = _inverse_direction(d)
    node = int(0)
    while node >= 0:
        enter = _box_entry(lower[node], upper[node], s, inv_dir) < t_max
        if enter and node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            for k in range(begin, wp.min(begin + leaf_size, faces)):
                f = int(order[k])
                hit = _ray_triangle(s, d, _vertex(points, indices, f, 0), _vertex(points, indices, f, 1),
                                    _vertex(points, indices, f, 2))
                if hit[0] >= 0.0 and hit[0] < t_max and hit[1] >= 0.0 and hit[2] >= 0.0 and hit[1] + hit[2] <= 1.0:
                    return True
            enter = False
        if enter:
            node = 2 * node + 1
        else:
            node = _next(node)
    return False


@wp.func
def mesh_query_ray_count_intersections(id: wp.uint64, start: wp.vec3, dir: wp.vec3) -> int:
    """How many faces the ray ``start + t * dir`` crosses at t >= 0 (all of
    them, not only the first; odd inside a closed mesh without
    self-intersections). Only ``dir``'s direction matters."""
    return _crossings(id, wp.stop_gradient(start), wp.stop_gradient(dir))


@wp.func
def _solid_angle(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> float:
    """The signed solid angle triangle abc subtends at p (positive when p is
    behind it: counter-clockwise corners seen from the front), by the
    Van Oosterom-Strackee formula on the unit directions to the corners; 0
    when p is a corner."""
    qa = a - p
    qb = b - p
    qc = c - p
    la = wp.length(qa)
    lb = wp.length(qb)
    lc = wp.length(qc)
    if la == 0.0 or lb == 0.0 or lc == 0.0:
        return 0.0
    qa = qa / la
    qb = qb / lb
    qc = qc / lc
    return 2.0 * wp.atan2(wp.dot(qa, wp.cross(qb, qc)), 1.0 + wp.dot(qa, qb) + wp.dot(qa, qc) + wp.dot(qb, qc))


@wp.func
def _far_solid_angle(data: wp.array(dtype=wp.vec3), base: int, r: wp.vec3) -> float:
    """The second-order far-field approximation of the solid angle of a
    node's faces seen from the point at ``-r`` from the node's centre (the
    expansion and layout of winding.py; ``base`` is the node's first row)."""
    inv = 1.0 / wp.length(r)
    u = r * inv
    inv2 = inv * inv
    m1u = wp.vec3(wp.dot(data[base + 3], u), wp.dot(data[base + 4], u), wp.dot(data[base + 5], u))
    cubic = float(0.0)
    uu = wp.cw_mul(u, u)
    for i in range(3):
        diag = data[base + 7 + 2 * i]
        off = data[base + 8 + 2 * i]
        cubic += u[i] * (wp.dot(uu, diag) + 2.0 * (u[0] * u[1] * off[0] + u[0] * u[2] * off[1] + u[1] * u[2] * off[2]))
    return wp.dot(data[base + 2], u) * inv2 + (data[base + 1][1] - 3.0 * wp.dot(u, m1u)) * inv2 * inv \
        + (-1.5 * wp.dot(data[base + 6], u) + 7.5 * cubic) * inv2 * inv2


@wp.func
def _winding_number(id: wp.uint64, p: wp.vec3, accuracy: float) -> float:
    """The generalized winding number of the mesh at p: the solid angles of
    the faces in leaves near p, exactly, plus the far-field approximation of
    each node whose centre is farther from p than ``accuracy`` times its
    radius (which then is not entered), over 4 pi. The mesh must have its
    winding data (support_winding_number)."""
    nodes = _count(id, _NODE_COUNT)
    lower = address_array(_address(id, _NODE_LOWER), nodes, wp.vec3, "mesh bvh lower")
    upper = address_array(_address(id, _NODE_UPPER), nodes, wp.vec3, "mesh bvh upper")
    data = address_array(_address(id, _WINDING), nodes * _WINDING_ROWS, wp.vec3, "mesh winding data")
    faces = _count(id, _FACE_COUNT)
    order = address_array(_address(id, _ORDER), faces, wp.int32, "mesh bvh order")
    indices = address_array(_address(id, _INDICES), faces * 3, wp.int32, "mesh indices")
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    reach = accuracy * accuracy
    total = float(0.0)
    node = int(0)
    while node >= 0:
        enter = False
        if lower[node][0] <= upper[node][0]:  # (the padding's empty nodes have no faces)
            if node >= first_leaf:
                begin = (node - first_leaf) * leaf_size
                for k in range(begin, wp.min(begin + leaf_size, faces)):
                    f = int(order[k])
                    total += _solid_angle(p, _vertex(points, indices, f, 0), _vertex(points, indices, f, 1),
                                          _vertex(points, indices, f, 2))
            else:
                base = node * _WINDING_ROWS
                r = data[base] - p
                if wp.dot(r, r) > data[base + 1][0] * reach:
                    total += _far_solid_angle(data, base, r)
                else:
                    enter = True
        if enter:
            node = 2 * node + 1
        else:
            node = _next(node)
    return total * _INV_4PI


@wp.func
def mesh_query_point_sign_winding_number(id: wp.uint64, point: wp.vec3, max_dist: float, accuracy: float = 2.0,
                                         threshold: float = 0.5) -> MeshQueryPoint:
    """As mesh_query_point_no_sign, with ``sign`` -1 where the mesh's
    generalized winding number at ``point`` exceeds ``threshold`` (inside),
    else +1: robust for meshes with holes, overlaps or flipped parts. The
    winding number sums the exact solid angles of the faces near ``point``
    and a second-order far-field approximation for tree nodes farther than
    ``accuracy`` times their radius (winding.py). The mesh must be made
    with ``support_winding_number=True``; otherwise the sign is
    mesh_query_point's, as in Warp. The sign does not depend on ``max_dist``."""
    p = wp.stop_gradient(point)
    face = _closest_face(id, p, wp.stop_gradient(max_dist))
    sign = float(1.0)
    if face >= 0:
        if _descriptor(id, _WINDING) == wp.uint64(0):
            sign = _parity_sign(id, p)
        elif _winding_number(id, p, wp.stop_gradient(accuracy)) > wp.stop_gradient(threshold):
            sign = -1.0
    return _point_result(id, point, face, sign)


# --- reading the mesh -----------------------------------------------------------------------

@wp.func
def mesh_eval_position(id: wp.uint64, face: int, bary_u: float, bary_v: float) -> wp.vec3:
    """The point of ``face`` with barycentric weights (u, v, 1 - u - v)."""
    return _corner(id, face, 0) * bary_u + _corner(id, face, 1) * bary_v + \
        _corner(id, face, 2) * (1.0 - bary_u - bary_v)


@wp.func
def mesh_eval_velocity(id: wp.uint64, face: int, bary_u: float, bary_v: float) -> wp.vec3:
    """The velocity at the point of ``face`` with weights (u, v, 1 - u - v)
    (the mesh must have velocities)."""
    velocities = address_array(_address(id, _VELOCITIES), _count(id, _VELOCITY_COUNT), wp.vec3, "mesh velocities")
    indices = address_array(_address(id, _INDICES), _count(id, _FACE_COUNT) * 3, wp.int32, "mesh indices")
    return velocities[indices[face * 3]] * bary_u + velocities[indices[face * 3 + 1]] * bary_v + \
        velocities[indices[face * 3 + 2]] * (1.0 - bary_u - bary_v)


@wp.func
def mesh_eval_face_normal(id: wp.uint64, face: int) -> wp.vec3:
    """The unit normal of ``face`` (counter-clockwise corners face it)."""
    a = _corner(id, face, 0)
    return wp.normalize(wp.cross(_corner(id, face, 1) - a, _corner(id, face, 2) - a))


@wp.func
def mesh_get_point(id: wp.uint64, index: int) -> wp.vec3:
    """The mesh's point ``index``."""
    points = address_array(_address(id, _POINTS), _count(id, _POINT_COUNT), wp.vec3, "mesh points")
    return points[index]


@wp.func
def mesh_get_velocity(id: wp.uint64, index: int) -> wp.vec3:
    """The velocity of the mesh's point ``index`` (the mesh must have velocities)."""
    velocities = address_array(_address(id, _VELOCITIES), _count(id, _VELOCITY_COUNT), wp.vec3, "mesh velocities")
    return velocities[index]


@wp.func
def mesh_get_index(id: wp.uint64, index: int) -> int:
    """Entry ``index`` of the mesh's flat vertex index array (face * 3 + corner)."""
    indices = address_array(_address(id, _INDICES), _count(id, _FACE_COUNT) * 3, wp.int32, "mesh indices")
    return int(indices[index])
