"""Warp's Bvh queries as adjit device functions (kernel language).

``bvh_query_aabb``, ``bvh_query_ray``, ``bvh_query_sphere`` and
``bvh_query_capsule`` make a ``BvhQuery`` (the walk's state); each
``bvh_query_next`` resumes the walk of bvh.py's heap-ordered tree (left
child first, ``_next`` to leave a subtree: no stack) and stops at the next
item whose current bounds overlap the box, that the ray (t >= 0) meets
(Warp's slab test), that lie within the sphere's radius of its centre, or
whose bounds grown by the capsule's radius the segment meets (Warp's robust
slab test), writing its index. The items come in
the tree's order, not by index. A query is discrete: nothing in it is
differentiated.
"""
from __future__ import annotations

from ..language import address_array
from . import handles as H
from .kernel_lang import wp
from .walks import _box_distance_sq, _boxes_overlap, _next, _ray_box, descriptor_reader

_ITEM_COUNT = wp.constant(H.BVH_ITEM_COUNT)
_LOWERS = wp.constant(H.BVH_LOWERS)
_UPPERS = wp.constant(H.BVH_UPPERS)
_NODE_COUNT = wp.constant(H.BVH_NODE_COUNT)
_NODE_LOWER = wp.constant(H.BVH_NODE_LOWER)
_NODE_UPPER = wp.constant(H.BVH_NODE_UPPER)
_LEAVES = wp.constant(H.BVH_LEAVES)
_LEAF_SIZE = wp.constant(H.BVH_LEAF_SIZE)
_ORDER = wp.constant(H.BVH_ORDER)
_BOX, _RAY, _SPHERE, _CAPSULE = (wp.constant(k) for k in range(4))


@wp.struct
class BvhQuery:
    """The state of a bvh_query_aabb, _ray, _sphere or _capsule walk (advance
    it with bvh_query_next): ``kind`` (_BOX, _RAY, _SPHERE, _CAPSULE), the box
    (``lower``, ``upper``), the ray or capsule (``start`` in ``lower``, 1 / dir
    in ``upper``, as Warp) or the sphere's centre (in both), the sphere's or
    capsule's ``radius``, and where the walk is."""
    id: wp.uint64
    lower: wp.vec3
    upper: wp.vec3
    kind: int
    radius: float
    node: int
    item: int


_descriptor = descriptor_reader(H.BVH_KIND, "Bvh")


@wp.func
def _address(id: wp.uint64, word: int) -> wp.int64:
    return wp.int64(_descriptor(id, word))


@wp.func
def _count(id: wp.uint64, word: int) -> int:
    return int(_descriptor(id, word))


@wp.func
def _start(id: wp.uint64, lower: wp.vec3, upper: wp.vec3, kind: int, radius: float) -> BvhQuery:
    _descriptor(id, _ITEM_COUNT)  # the id's check, at the query
    q = BvhQuery()
    q.id = id
    q.lower = lower
    q.upper = upper
    q.kind = kind
    q.radius = radius
    q.node = 0
    q.item = 0
    return q


@wp.func
def bvh_query_aabb(id: wp.uint64, lower: wp.vec3, upper: wp.vec3) -> BvhQuery:
    """A walk over the items whose bounds overlap the box [lower, upper]
    (closed), advanced by ``bvh_query_next``."""
    return _start(id, wp.stop_gradient(lower), wp.stop_gradient(upper), _BOX, 0.0)


@wp.func
def bvh_query_ray(id: wp.uint64, start: wp.vec3, dir: wp.vec3) -> BvhQuery:
    """A walk over the items whose bounds the ray ``start + t * dir`` (t >= 0)
    meets, advanced by ``bvh_query_next`` (``dir`` need not be unit length)."""
    d = wp.stop_gradient(dir)
    return _start(id, wp.stop_gradient(start), wp.vec3(1.0 / d[0], 1.0 / d[1], 1.0 / d[2]), _RAY, 0.0)


@wp.func
def bvh_query_sphere(id: wp.uint64, center: wp.vec3, radius: float) -> BvhQuery:
    """A walk over the items whose bounds come within ``radius`` of
    ``center`` (the closed ball meets the box; a negative radius counts as
    0), advanced by ``bvh_query_next`` (whose ``max_dist`` it ignores)."""
    c = wp.stop_gradient(center)
    return _start(id, c, c, _SPHERE, wp.max(wp.stop_gradient(radius), 0.0))


@wp.func
def bvh_query_capsule(id: wp.uint64, start: wp.vec3, dir: wp.vec3, radius: float) -> BvhQuery:
    """A walk over the items whose bounds, grown by ``radius`` on every side
    (a box, not rounded: a conservative capsule test, as Warp's), the segment
    ``start + t * dir`` meets at t <= max_dist of ``bvh_query_next`` (pass
    ``dir = p1 - p0`` and max_dist 1 to sweep from p0 to p1). A negative
    radius counts as 0; ``dir`` must not be zero."""
    d = wp.stop_gradient(dir)
    return _start(id, wp.stop_gradient(start), wp.vec3(1.0 / d[0], 1.0 / d[1], 1.0 / d[2]), _CAPSULE,
                  wp.max(wp.stop_gradient(radius), 0.0))


@wp.func
def _capsule_box(lower: wp.vec3, upper: wp.vec3, start: wp.vec3, inv_dir: wp.vec3, max_dist: float) -> bool:
    """Warp's robust slab test (intersect_ray_aabb_robust) of the ray against
    the box: an axis the ray is parallel to (dir 0, 1 / dir infinite) is a
    test of the start alone; a hit counts where the ray enters at t <=
    max_dist (closed, as Warp's capsule)."""
    enter = float(-3.402823466e38)
    leave = float(3.402823466e38)
    inside = True
    for k in range(3):
        if 1.0 / inv_dir[k] == 0.0:
            if start[k] < lower[k] or start[k] > upper[k]:
                inside = False
        else:
            t0 = (lower[k] - start[k]) * inv_dir[k]
            t1 = (upper[k] - start[k]) * inv_dir[k]
            enter = wp.max(wp.min(t0, t1), enter)
            leave = wp.min(wp.max(t0, t1), leave)
    return inside and leave >= 0.0 and leave >= enter and not (enter > max_dist)


@wp.func
def _meets(query: BvhQuery, lower: wp.vec3, upper: wp.vec3, max_dist: float) -> bool:
    if query.kind == _RAY:
        return _ray_box(lower, upper, query.lower, query.upper) < max_dist
    if query.kind == _SPHERE:
        return _box_distance_sq(lower, upper, query.lower) <= query.radius * query.radius
    if query.kind == _CAPSULE:
        grow = wp.vec3(query.radius)
        return _capsule_box(lower - grow, upper + grow, query.lower, query.upper, max_dist)
    return _boxes_overlap(lower, upper, query.lower, query.upper)


@wp.func
def bvh_query_next(query: wp.ref[BvhQuery], index: wp.ref[int], max_dist: float = wp.inf) -> bool:
    """The next item of the walk in ``index`` and True; False (``index``
    unchanged) when there is none. For ray queries, ``max_dist`` drops items
    whose bounds the ray enters at t >= max_dist, for capsules at t >
    max_dist (in multiples of dir's length; only lower it during a walk, as
    in Warp); box and sphere queries ignore it."""
    id = query.id
    nodes = _count(id, _NODE_COUNT)
    lower = address_array(_address(id, _NODE_LOWER), nodes, wp.vec3, "Bvh node lower")
    upper = address_array(_address(id, _NODE_UPPER), nodes, wp.vec3, "Bvh node upper")
    items = _count(id, _ITEM_COUNT)
    order = address_array(_address(id, _ORDER), items, wp.int32, "Bvh order")
    item_lower = address_array(_address(id, _LOWERS), items, wp.vec3, "Bvh lowers")
    item_upper = address_array(_address(id, _UPPERS), items, wp.vec3, "Bvh uppers")
    first_leaf = _count(id, _LEAVES) - 1
    leaf_size = _count(id, _LEAF_SIZE)
    q = query
    node = q.node
    item = q.item
    found = int(-1)
    while node >= 0 and found < 0:
        lo = lower[node]
        hi = upper[node]
        enter = lo[0] != wp.inf and _meets(q, lo, hi, max_dist)  # (padding nodes: lower +inf)
        if enter and node >= first_leaf:
            begin = (node - first_leaf) * leaf_size
            count = wp.min(leaf_size, items - begin)
            while item < count and found < 0:
                k = int(order[begin + item])
                item = item + 1
                if _meets(q, item_lower[k], item_upper[k], max_dist):
                    found = k
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
