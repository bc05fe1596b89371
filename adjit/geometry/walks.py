"""Shared pieces of the geometry walks (kernel language): box tests and the
stackless moves through bvh.py's heap-ordered tree.

A walk that enters left children first needs only ``_next`` to leave a
subtree; one that chooses which child to enter first records the choice in
one bit per level (``trail``), and whether the other child was already out
of reach in another (``lone``), and leaves with ``_climb_closest`` or
``_climb_ray``. The mesh queries
(mesh_queries.py) and the Bvh queries (bvh_queries.py) both use them.
"""
from __future__ import annotations

from ..language import address_array
from . import handles as H
from .kernel_lang import wp


@wp.func
def _box_distance_sq(lower: wp.vec3, upper: wp.vec3, p: wp.vec3) -> float:
    d = wp.max(wp.max(lower - p, p - upper), wp.vec3(0.0))
    return wp.dot(d, d)


@wp.func
def _inverse_direction(dir: wp.vec3) -> wp.vec3:
    """1 / dir, with components of magnitude below 1e-20 taken as 1e-20 (with
    their sign), so that box tests see no 0 * inf (a NaN) for axis-aligned rays."""
    r = wp.vec3()
    for k in range(3):
        x = dir[k]
        if wp.abs(x) < 1.0e-20:
            x = wp.where(x < 0.0, -1.0e-20, 1.0e-20)
        r[k] = 1.0 / x
    return r


@wp.func
def _box_entry(lower: wp.vec3, upper: wp.vec3, start: wp.vec3, inv_dir: wp.vec3) -> float:
    """The ray parameter where it enters the box, or +inf if it misses it (or
    the box lies behind the start, or is empty: lower > upper)."""
    t0 = wp.cw_mul(lower - start, inv_dir)
    t1 = wp.cw_mul(upper - start, inv_dir)
    near = wp.min(t0, t1)
    far = wp.max(t0, t1)
    enter = wp.max(wp.max(near[0], near[1]), wp.max(near[2], 0.0))
    leave = wp.min(wp.min(far[0], far[1]), far[2])
    if enter <= leave and lower[0] <= upper[0]:
        return enter
    return wp.inf


@wp.func
def _next(node: int) -> int:
    """The next node after ``node``'s subtree in a walk that enters left children first, or -1."""
    n = node
    while n > 0:
        if n % 2 == 1:  # a left child: its sibling is next
            return n + 1
        n = (n - 1) // 2
    return -1


@wp.func
def _climb_closest(lower: wp.array(dtype=wp.vec3), upper: wp.array(dtype=wp.vec3), p: wp.vec3, best: float,
                   node: int, depth: int, trail: wp.int64, lone: wp.int64) -> wp.vec2i:
    """Where a closest-point walk goes after ``node``'s subtree: up to the
    first ancestor whose other child it has not entered yet (bit d of
    ``trail``: the child entered first at depth d was child 1 + bit; bit d of
    ``lone``: its sibling was too far already) and that child if still nearer
    than ``best``: (node, depth), or (-1, 0) when the walk is over."""
    n = node
    d = depth
    while d > 0:
        parent = (n - 1) // 2
        bit = int((trail >> wp.int64(d - 1)) & wp.int64(1))
        alone = int((lone >> wp.int64(d - 1)) & wp.int64(1))
        if n == 2 * parent + 1 + bit and alone == 0:
            sibling = 2 * parent + 2 - bit
            if _box_distance_sq(lower[sibling], upper[sibling], p) < best:
                return wp.vec2i(sibling, d)
        n = parent
        d = d - 1
    return wp.vec2i(-1, 0)


@wp.func
def _climb_ray(lower: wp.array(dtype=wp.vec3), upper: wp.array(dtype=wp.vec3), start: wp.vec3, inv_dir: wp.vec3,
               best: float, node: int, depth: int, trail: wp.int64, lone: wp.int64) -> wp.vec2i:
    """_climb_closest for a ray walk: a sibling is entered if the ray reaches it before ``best``."""
    n = node
    d = depth
    while d > 0:
        parent = (n - 1) // 2
        bit = int((trail >> wp.int64(d - 1)) & wp.int64(1))
        alone = int((lone >> wp.int64(d - 1)) & wp.int64(1))
        if n == 2 * parent + 1 + bit and alone == 0:
            sibling = 2 * parent + 2 - bit
            if _box_entry(lower[sibling], upper[sibling], start, inv_dir) < best:
                return wp.vec2i(sibling, d)
        n = parent
        d = d - 1
    return wp.vec2i(-1, 0)


@wp.func
def _boxes_overlap(lower: wp.vec3, upper: wp.vec3, query_lower: wp.vec3, query_upper: wp.vec3) -> bool:
    """Whether the closed boxes [lower, upper] and [query_lower, query_upper] overlap."""
    return lower[0] <= query_upper[0] and lower[1] <= query_upper[1] and lower[2] <= query_upper[2] and \
        upper[0] >= query_lower[0] and upper[1] >= query_lower[1] and upper[2] >= query_lower[2]


@wp.func
def _ray_box(lower: wp.vec3, upper: wp.vec3, start: wp.vec3, inv_dir: wp.vec3) -> float:
    """Warp's ray-box slab test (intersect_ray_aabb): where the ray's line
    enters the box (negative when the start is inside it) if the ray
    (t >= 0) meets the box, else +inf."""
    t0 = wp.cw_mul(lower - start, inv_dir)
    t1 = wp.cw_mul(upper - start, inv_dir)
    near = wp.min(t0, t1)
    far = wp.max(t0, t1)
    enter = wp.max(wp.max(near[0], near[1]), near[2])
    leave = wp.min(wp.min(far[0], far[1]), far[2])
    if leave >= 0.0 and leave >= enter and lower[0] <= upper[0]:  # (an empty box: lower > upper)
        return enter
    return wp.inf


@wp.func
def _box_furthest_sq(lower: wp.vec3, upper: wp.vec3, p: wp.vec3) -> float:
    """The squared distance from p to the box's farthest corner; -1 for an
    empty box (lower > upper: the tree's padding), which no walk enters."""
    if lower[0] > upper[0]:
        return -1.0
    d = wp.max(wp.abs(p - lower), wp.abs(upper - p))
    return wp.dot(d, d)


@wp.func
def _climb_furthest(lower: wp.array(dtype=wp.vec3), upper: wp.array(dtype=wp.vec3), p: wp.vec3, best: float,
                    node: int, depth: int, trail: wp.int64, lone: wp.int64) -> wp.vec2i:
    """_climb_closest for a furthest-point walk: a sibling is entered if its
    farthest corner is farther than ``best``."""
    n = node
    d = depth
    while d > 0:
        parent = (n - 1) // 2
        bit = int((trail >> wp.int64(d - 1)) & wp.int64(1))
        alone = int((lone >> wp.int64(d - 1)) & wp.int64(1))
        if n == 2 * parent + 1 + bit and alone == 0:
            sibling = 2 * parent + 2 - bit
            if _box_furthest_sq(lower[sibling], upper[sibling], p) > best:
                return wp.vec2i(sibling, d)
        n = parent
        d = d - 1
    return wp.vec2i(-1, 0)


def descriptor_reader(kind: int, name: str):
    """A device function ``(id, word) -> uint64`` reading word ``word`` of the
    descriptor of the ``name`` object (handles.py) at ``id``: 0 for every word
    of a stale id (its object collected) or of another object's, after
    reporting it: a read out of an empty range fails its bounds check naming
    the cause (and the zero counts then make every later read of the query an
    empty one)."""
    expected_kind = wp.constant(wp.uint64(kind))
    words = wp.constant(H.DESCRIPTOR_WORDS)
    what = f"{name} descriptor"
    wrong_id = f"{name} id: not the id of a live adjit.{name} (deleted, or another object's id)"

    @wp.func
    def _descriptor(id: wp.uint64, word: int) -> wp.uint64:
        d = address_array(id, words, wp.uint64, what)
        value = wp.uint64(0)
        if d[0] == expected_kind:
            value = d[word]
        else:
            wrong = address_array(id, 0, wp.uint64, wrong_id)
            value = wrong[0]  # (skipped: 0)
        return value

    return _descriptor
