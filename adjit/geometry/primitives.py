"""Warp's geometry helpers on primitives (no mesh) as adjit device functions
(kernel language): ``closest_point_edge_edge`` and ``intersect_tri_tri``.

``closest_point_edge_edge`` is plain arithmetic with clamps, so adjit
differentiates it like any function (exact gradients away from the clamps'
kinks and parallel edges). ``intersect_tri_tri`` answers yes or no (an int),
so it has no gradient.
"""
from __future__ import annotations

import typing

from .kernel_lang import wp

#: Warp's (Moller's) snap: a corner whose signed distance to the other
#: triangle's plane (scaled by that plane's unnormalized normal) is below
#: this in magnitude is taken to lie on the plane.
_PLANE_EPSILON = wp.constant(1.0e-6)


@wp.func
def closest_point_edge_edge(p1: wp.vec3, q1: wp.vec3, p2: wp.vec3, q2: wp.vec3, epsilon: float) -> wp.vec3:
    """The closest points of the segments [p1, q1] and [p2, q2] (Warp's
    closest_point_edge_edge): ``(s, t, d)`` with the points p1 + s (q1 - p1)
    and p2 + t (q2 - p2), s, t in [0, 1], and d their distance. A segment
    whose squared length is at most ``epsilon`` is taken as a point (its
    weight 0); parallel segments take s = 0 before t is clamped and s
    recomputed, as Warp's."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    s = float(0.0)
    t = float(0.0)
    if a <= epsilon and e <= epsilon:
        s = 0.0
    elif a <= epsilon:
        t = wp.clamp(f / e, 0.0, 1.0)
    elif e <= epsilon:
        s = wp.clamp(-wp.dot(d1, r) / a, 0.0, 1.0)
    else:
        c = wp.dot(d1, r)
        b = wp.dot(d1, d2)
        # a e - b^2 and b f - c e as dot products of cross products (Lagrange's
        # identity): no cancellation for nearly parallel edges
        n = wp.cross(d1, d2)
        denom = wp.dot(n, n)
        s_line = float(0.0)
        if denom > 0.0:
            s_line = wp.clamp(wp.dot(n, wp.cross(d2, r)) / denom, 0.0, 1.0)
        t_line = (b * s_line + f) / e
        if t_line < 0.0:
            s = wp.clamp(-c / a, 0.0, 1.0)
        elif t_line > 1.0:
            s = wp.clamp((b - c) / a, 0.0, 1.0)
            t = 1.0
        else:
            s = s_line
            t = t_line
    return wp.vec3(s, t, wp.length((p2 + d2 * t) - (p1 + d1 * s)))


@wp.func
def _snap(x: typing.Any) -> typing.Any:
    if wp.abs(x) < _PLANE_EPSILON:
        return x * 0.0
    return x


@wp.func
def _line_interval(p0: typing.Any, p1: typing.Any, p2: typing.Any, d0: typing.Any, d1: typing.Any,
                   d2: typing.Any) -> typing.Any:
    """Where a triangle crosses the other triangle's plane, along the two
    planes' line: the triangle's corners' coordinates p0..p2 along it and
    signed distances d0..d2 to the plane (not all zero); the corner alone on
    its side (or on the plane) joined to the other two. Returns (lo, hi)."""
    lone = p0
    x1 = p1
    x2 = p2
    dl = d0
    e1 = d1
    e2 = d2
    if d0 * d1 > 0.0:
        lone, x1, x2, dl, e1, e2 = p2, p0, p1, d2, d0, d1
    elif d0 * d2 > 0.0:
        lone, x1, x2, dl, e1, e2 = p1, p0, p2, d1, d0, d2
    elif d1 * d2 > 0.0 or d0 != 0.0:
        lone, x1, x2, dl, e1, e2 = p0, p1, p2, d0, d1, d2
    elif d1 != 0.0:
        lone, x1, x2, dl, e1, e2 = p1, p0, p2, d1, d0, d2
    else:
        lone, x1, x2, dl, e1, e2 = p2, p0, p1, d2, d0, d1
    a = lone + (x1 - lone) * (dl / (dl - e1))
    b = lone + (x2 - lone) * (dl / (dl - e2))
    return wp.vector(wp.min(a, b), wp.max(a, b))


@wp.func
def _separated_2d(a0: typing.Any, a1: typing.Any, a2: typing.Any, b0: typing.Any, b1: typing.Any,
                  b2: typing.Any) -> bool:
    """Whether an edge of triangle a (2-d) has all of triangle b strictly on
    its outer side (a separating line)."""
    out = False
    turn = (a1[0] - a0[0]) * (a2[1] - a0[1]) - (a1[1] - a0[1]) * (a2[0] - a0[0])
    for k in range(3):
        start = a0
        edge = a1 - a0
        if k == 1:
            start = a1
            edge = a2 - a1
        elif k == 2:
            start = a2
            edge = a0 - a2
        # the edge's outward side: its left (counter-clockwise a) or right
        s0 = edge[0] * (b0[1] - start[1]) - edge[1] * (b0[0] - start[0])
        s1 = edge[0] * (b1[1] - start[1]) - edge[1] * (b1[0] - start[0])
        s2 = edge[0] * (b2[1] - start[1]) - edge[1] * (b2[0] - start[0])
        if turn > 0.0 and s0 < 0.0 and s1 < 0.0 and s2 < 0.0:
            out = True
        if turn < 0.0 and s0 > 0.0 and s1 > 0.0 and s2 > 0.0:
            out = True
    return out


@wp.func
def _tri_tri(v0: typing.Any, v1: typing.Any, v2: typing.Any, u0: typing.Any, u1: typing.Any,
             u2: typing.Any) -> int:
    """intersect_tri_tri for either precision (the planes' test, then the
    intervals along their line; coplanar triangles in 2-d)."""
    n1 = wp.cross(v1 - v0, v2 - v0)
    du0 = _snap(wp.dot(n1, u0 - v0))
    du1 = _snap(wp.dot(n1, u1 - v0))
    du2 = _snap(wp.dot(n1, u2 - v0))
    if du0 * du1 > 0.0 and du0 * du2 > 0.0:
        return 0  # u all on one side of v's plane
    n2 = wp.cross(u1 - u0, u2 - u0)
    dv0 = _snap(wp.dot(n2, v0 - u0))
    dv1 = _snap(wp.dot(n2, v1 - u0))
    dv2 = _snap(wp.dot(n2, v2 - u0))
    if dv0 * dv1 > 0.0 and dv0 * dv2 > 0.0:
        return 0  # v all on one side of u's plane
    if (dv0 == 0.0 and dv1 == 0.0 and dv2 == 0.0) or (du0 == 0.0 and du1 == 0.0 and du2 == 0.0):
        # coplanar: drop the axis n1 is largest along, test for a separating edge in 2-d
        m = wp.abs(n1)
        i = 0
        j = 1
        if m[0] > m[1] and m[0] > m[2]:
            i = 1
            j = 2
        elif m[1] >= m[2] and m[1] >= m[0]:
            i = 0
            j = 2
        a0 = wp.vector(v0[i], v0[j])
        a1 = wp.vector(v1[i], v1[j])
        a2 = wp.vector(v2[i], v2[j])
        b0 = wp.vector(u0[i], u0[j])
        b1 = wp.vector(u1[i], u1[j])
        b2 = wp.vector(u2[i], u2[j])
        if _separated_2d(a0, a1, a2, b0, b1, b2) or _separated_2d(b0, b1, b2, a0, a1, a2):
            return 0
        return 1
    line = wp.cross(n1, n2)
    m = wp.abs(line)
    axis = 0
    if m[1] > m[axis]:
        axis = 1
    if m[2] > m[axis]:
        axis = 2
    iv = _line_interval(v0[axis], v1[axis], v2[axis], dv0, dv1, dv2)
    iu = _line_interval(u0[axis], u1[axis], u2[axis], du0, du1, du2)
    if iv[1] < iu[0] or iu[1] < iv[0]:
        return 0
    return 1


@wp.func
def intersect_tri_tri(v0: wp.vec3, v1: wp.vec3, v2: wp.vec3, u0: wp.vec3, u1: wp.vec3, u2: wp.vec3) -> int:
    """1 if the triangles (v0, v1, v2) and (u0, u1, u2) intersect (touching
    counts), else 0 (Warp's intersect_tri_tri, Moller's method): corners
    within 1e-6 of the other's plane (a distance scaled by that plane's
    unnormalized normal, as Warp's) count as on it; coplanar triangles
    intersect when they overlap in their plane. Not differentiable."""
    return _tri_tri(wp.stop_gradient(v0), wp.stop_gradient(v1), wp.stop_gradient(v2), wp.stop_gradient(u0),
                    wp.stop_gradient(u1), wp.stop_gradient(u2))


@wp.func
def intersect_tri_tri(v0: wp.vec3d, v1: wp.vec3d, v2: wp.vec3d, u0: wp.vec3d, u1: wp.vec3d,  # noqa: F811
                      u2: wp.vec3d) -> int:
    """intersect_tri_tri in double precision (Warp's vec3d overload)."""
    return _tri_tri(wp.stop_gradient(v0), wp.stop_gradient(v1), wp.stop_gradient(v2), wp.stop_gradient(u0),
                    wp.stop_gradient(u1), wp.stop_gradient(u2))
