"""``MarchingCubes``: the triangle mesh of a level set of a scalar field
sampled on a grid (Warp's ``MarchingCubes``, ``warp.geometry.IsoSurfaceMarchingCubes``).

Written as Warp's is organised, in adjit's kernel language: a kernel marks
the grid edges the level set crosses and classifies each cell (its case,
from which corners are at or above the threshold, and its triangle count);
the host takes exclusive scans (numpy) to give each crossed edge a vertex
index and each cell its first triangle; a kernel writes the vertices
(interpolated along their edges) and one writes the triangles (the case's
triangles from the standard table, each corner the vertex of an edge).
Vertices come in the order of their edges (node (i, j, k) in C order, then
the x, y, z edge from it), triangles in the order of their cells (C order),
so the arrays are Warp 1.19's, index for index.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import types as T
from ..language import kernel
from ..launch import launch
from ..runtime.array import Array, array as make_array, empty, zeros
from .kernel_lang import wp

#: The cube's corners, as offsets from the cell's lowest node; corner c is bit
#: c of a cell's case (set when the field there is >= the threshold).
CORNERS = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1))
#: The cube's edges as pairs of corners: 0-3 around z = 0, 4-7 around z = 1,
#: 8-11 from corner c to c + 4 (the standard numbering of the table below).
EDGES = ((0, 1), (1, 2), (3, 2), (0, 3), (4, 5), (5, 6), (7, 6), (4, 7), (0, 4), (1, 5), (2, 6), (3, 7))

#: The standard marching-cubes triangle table (Lorensen and Cline's cases as
#: tabulated by Paul Bourke, "Polygonising a scalar field", 1994): one line
#: per case, its triangles as edge triples ("-": none). Indexed by the case
#: with bits set at or above the threshold, the triangles wind
#: counter-clockwise seen from the side below it (a signed distance's
#: outward normals for negative-inside fields), as Warp's.
_TRIANGLES = """\
-
0 8 3
0 1 9
1 8 3, 9 8 1
1 2 10
0 8 3, 1 2 10
9 2 10, 0 2 9
2 8 3, 2 10 8, 10 9 8
3 11 2
0 11 2, 8 11 0
1 9 0, 2 3 11
1 11 2, 1 9 11, 9 8 11
3 10 1, 11 10 3
0 10 1, 0 8 10, 8 11 10
3 9 0, 3 11 9, 11 10 9
9 8 10, 10 8 11
4 7 8
4 3 0, 7 3 4
0 1 9, 8 4 7
4 1 9, 4 7 1, 7 3 1
1 2 10, 8 4 7
3 4 7, 3 0 4, 1 2 10
9 2 10, 9 0 2, 8 4 7
2 10 9, 2 9 7, 2 7 3, 7 9 4
8 4 7, 3 11 2
11 4 7, 11 2 4, 2 0 4
9 0 1, 8 4 7, 2 3 11
4 7 11, 9 4 11, 9 11 2, 9 2 1
3 10 1, 3 11 10, 7 8 4
1 11 10, 1 4 11, 1 0 4, 7 11 4
4 7 8, 9 0 11, 9 11 10, 11 0 3
4 7 11, 4 11 9, 9 11 10
9 5 4
9 5 4, 0 8 3
0 5 4, 1 5 0
8 5 4, 8 3 5, 3 1 5
1 2 10, 9 5 4
3 0 8, 1 2 10, 4 9 5
5 2 10, 5 4 2, 4 0 2
2 10 5, 3 2 5, 3 5 4, 3 4 8
9 5 4, 2 3 11
0 11 2, 0 8 11, 4 9 5
0 5 4, 0 1 5, 2 3 11
2 1 5, 2 5 8, 2 8 11, 4 8 5
10 3 11, 10 1 3, 9 5 4
4 9 5, 0 8 1, 8 10 1, 8 11 10
5 4 0, 5 0 11, 5 11 10, 11 0 3
5 4 8, 5 8 10, 10 8 11
9 7 8, 5 7 9
9 3 0, 9 5 3, 5 7 3
0 7 8, 0 1 7, 1 5 7
1 5 3, 3 5 7
9 7 8, 9 5 7, 10 1 2
10 1 2, 9 5 0, 5 3 0, 5 7 3
8 0 2, 8 2 5, 8 5 7, 10 5 2
2 10 5, 2 5 3, 3 5 7
7 9 5, 7 8 9, 3 11 2
9 5 7, 9 7 2, 9 2 0, 2 7 11
2 3 11, 0 1 8, 1 7 8, 1 5 7
11 2 1, 11 1 7, 7 1 5
9 5 8, 8 5 7, 10 1 3, 10 3 11
5 7 0, 5 0 9, 7 11 0, 1 0 10, 11 10 0
11 10 0, 11 0 3, 10 5 0, 8 0 7, 5 7 0
11 10 5, 7 11 5
10 6 5
0 8 3, 5 10 6
9 0 1, 5 10 6
1 8 3, 1 9 8, 5 10 6
1 6 5, 2 6 1
1 6 5, 1 2 6, 3 0 8
9 6 5, 9 0 6, 0 2 6
5 9 8, 5 8 2, 5 2 6, 3 2 8
2 3 11, 10 6 5
11 0 8, 11 2 0, 10 6 5
0 1 9, 2 3 11, 5 10 6
5 10 6, 1 9 2, 9 11 2, 9 8 11
6 3 11, 6 5 3, 5 1 3
0 8 11, 0 11 5, 0 5 1, 5 11 6
3 11 6, 0 3 6, 0 6 5, 0 5 9
6 5 9, 6 9 11, 11 9 8
5 10 6, 4 7 8
4 3 0, 4 7 3, 6 5 10
1 9 0, 5 10 6, 8 4 7
10 6 5, 1 9 7, 1 7 3, 7 9 4
6 1 2, 6 5 1, 4 7 8
1 2 5, 5 2 6, 3 0 4, 3 4 7
8 4 7, 9 0 5, 0 6 5, 0 2 6
7 3 9, 7 9 4, 3 2 9, 5 9 6, 2 6 9
3 11 2, 7 8 4, 10 6 5
5 10 6, 4 7 2, 4 2 0, 2 7 11
0 1 9, 4 7 8, 2 3 11, 5 10 6
9 2 1, 9 11 2, 9 4 11, 7 11 4, 5 10 6
8 4 7, 3 11 5, 3 5 1, 5 11 6
5 1 11, 5 11 6, 1 0 11, 7 11 4, 0 4 11
0 5 9, 0 6 5, 0 3 6, 11 6 3, 8 4 7
6 5 9, 6 9 11, 4 7 9, 7 11 9
10 4 9, 6 4 10
4 10 6, 4 9 10, 0 8 3
10 0 1, 10 6 0, 6 4 0
8 3 1, 8 1 6, 8 6 4, 6 1 10
1 4 9, 1 2 4, 2 6 4
3 0 8, 1 2 9, 2 4 9, 2 6 4
0 2 4, 4 2 6
8 3 2, 8 2 4, 4 2 6
10 4 9, 10 6 4, 11 2 3
0 8 2, 2 8 11, 4 9 10, 4 10 6
3 11 2, 0 1 6, 0 6 4, 6 1 10
6 4 1, 6 1 10, 4 8 1, 2 1 11, 8 11 1
9 6 4, 9 3 6, 9 1 3, 11 6 3
8 11 1, 8 1 0, 11 6 1, 9 1 4, 6 4 1
3 11 6, 3 6 0, 0 6 4
6 4 8, 11 6 8
7 10 6, 7 8 10, 8 9 10
0 7 3, 0 10 7, 0 9 10, 6 7 10
10 6 7, 1 10 7, 1 7 8, 1 8 0
10 6 7, 10 7 1, 1 7 3
1 2 6, 1 6 8, 1 8 9, 8 6 7
2 6 9, 2 9 1, 6 7 9, 0 9 3, 7 3 9
7 8 0, 7 0 6, 6 0 2
7 3 2, 6 7 2
2 3 11, 10 6 8, 10 8 9, 8 6 7
2 0 7, 2 7 11, 0 9 7, 6 7 10, 9 10 7
1 8 0, 1 7 8, 1 10 7, 6 7 10, 2 3 11
11 2 1, 11 1 7, 10 6 1, 6 7 1
8 9 6, 8 6 7, 9 1 6, 11 6 3, 1 3 6
0 9 1, 11 6 7
7 8 0, 7 0 6, 3 11 0, 11 6 0
7 11 6
7 6 11
3 0 8, 11 7 6
0 1 9, 11 7 6
8 1 9, 8 3 1, 11 7 6
10 1 2, 6 11 7
1 2 10, 3 0 8, 6 11 7
2 9 0, 2 10 9, 6 11 7
6 11 7, 2 10 3, 10 8 3, 10 9 8
7 2 3, 6 2 7
7 0 8, 7 6 0, 6 2 0
2 7 6, 2 3 7, 0 1 9
1 6 2, 1 8 6, 1 9 8, 8 7 6
10 7 6, 10 1 7, 1 3 7
10 7 6, 1 7 10, 1 8 7, 1 0 8
0 3 7, 0 7 10, 0 10 9, 6 10 7
7 6 10, 7 10 8, 8 10 9
6 8 4, 11 8 6
3 6 11, 3 0 6, 0 4 6
8 6 11, 8 4 6, 9 0 1
9 4 6, 9 6 3, 9 3 1, 11 3 6
6 8 4, 6 11 8, 2 10 1
1 2 10, 3 0 11, 0 6 11, 0 4 6
4 11 8, 4 6 11, 0 2 9, 2 10 9
10 9 3, 10 3 2, 9 4 3, 11 3 6, 4 6 3
8 2 3, 8 4 2, 4 6 2
0 4 2, 4 6 2
1 9 0, 2 3 4, 2 4 6, 4 3 8
1 9 4, 1 4 2, 2 4 6
8 1 3, 8 6 1, 8 4 6, 6 10 1
10 1 0, 10 0 6, 6 0 4
4 6 3, 4 3 8, 6 10 3, 0 3 9, 10 9 3
10 9 4, 6 10 4
4 9 5, 7 6 11
0 8 3, 4 9 5, 11 7 6
5 0 1, 5 4 0, 7 6 11
11 7 6, 8 3 4, 3 5 4, 3 1 5
9 5 4, 10 1 2, 7 6 11
6 11 7, 1 2 10, 0 8 3, 4 9 5
7 6 11, 5 4 10, 4 2 10, 4 0 2
3 4 8, 3 5 4, 3 2 5, 10 5 2, 11 7 6
7 2 3, 7 6 2, 5 4 9
9 5 4, 0 8 6, 0 6 2, 6 8 7
3 6 2, 3 7 6, 1 5 0, 5 4 0
6 2 8, 6 8 7, 2 1 8, 4 8 5, 1 5 8
9 5 4, 10 1 6, 1 7 6, 1 3 7
1 6 10, 1 7 6, 1 0 7, 8 7 0, 9 5 4
4 0 10, 4 10 5, 0 3 10, 6 10 7, 3 7 10
7 6 10, 7 10 8, 5 4 10, 4 8 10
6 9 5, 6 11 9, 11 8 9
3 6 11, 0 6 3, 0 5 6, 0 9 5
0 11 8, 0 5 11, 0 1 5, 5 6 11
6 11 3, 6 3 5, 5 3 1
1 2 10, 9 5 11, 9 11 8, 11 5 6
0 11 3, 0 6 11, 0 9 6, 5 6 9, 1 2 10
11 8 5, 11 5 6, 8 0 5, 10 5 2, 0 2 5
6 11 3, 6 3 5, 2 10 3, 10 5 3
5 8 9, 5 2 8, 5 6 2, 3 8 2
9 5 6, 9 6 0, 0 6 2
1 5 8, 1 8 0, 5 6 8, 3 8 2, 6 2 8
1 5 6, 2 1 6
1 3 6, 1 6 10, 3 8 6, 5 6 9, 8 9 6
10 1 0, 10 0 6, 9 5 0, 5 6 0
0 3 8, 5 6 10
10 5 6
11 5 10, 7 5 11
11 5 10, 11 7 5, 8 3 0
5 11 7, 5 10 11, 1 9 0
10 7 5, 10 11 7, 9 8 1, 8 3 1
11 1 2, 11 7 1, 7 5 1
0 8 3, 1 2 7, 1 7 5, 7 2 11
9 7 5, 9 2 7, 9 0 2, 2 11 7
7 5 2, 7 2 11, 5 9 2, 3 2 8, 9 8 2
2 5 10, 2 3 5, 3 7 5
8 2 0, 8 5 2, 8 7 5, 10 2 5
9 0 1, 5 10 3, 5 3 7, 3 10 2
9 8 2, 9 2 1, 8 7 2, 10 2 5, 7 5 2
1 3 5, 3 7 5
0 8 7, 0 7 1, 1 7 5
9 0 3, 9 3 5, 5 3 7
9 8 7, 5 9 7
5 8 4, 5 10 8, 10 11 8
5 0 4, 5 11 0, 5 10 11, 11 3 0
0 1 9, 8 4 10, 8 10 11, 10 4 5
10 11 4, 10 4 5, 11 3 4, 9 4 1, 3 1 4
2 5 1, 2 8 5, 2 11 8, 4 5 8
0 4 11, 0 11 3, 4 5 11, 2 11 1, 5 1 11
0 2 5, 0 5 9, 2 11 5, 4 5 8, 11 8 5
9 4 5, 2 11 3
2 5 10, 3 5 2, 3 4 5, 3 8 4
5 10 2, 5 2 4, 4 2 0
3 10 2, 3 5 10, 3 8 5, 4 5 8, 0 1 9
5 10 2, 5 2 4, 1 9 2, 9 4 2
8 4 5, 8 5 3, 3 5 1
0 4 5, 1 0 5
8 4 5, 8 5 3, 9 0 5, 0 3 5
9 4 5
4 11 7, 4 9 11, 9 10 11
0 8 3, 4 9 7, 9 11 7, 9 10 11
1 10 11, 1 11 4, 1 4 0, 7 4 11
3 1 4, 3 4 8, 1 10 4, 7 4 11, 10 11 4
4 11 7, 9 11 4, 9 2 11, 9 1 2
9 7 4, 9 11 7, 9 1 11, 2 11 1, 0 8 3
11 7 4, 11 4 2, 2 4 0
11 7 4, 11 4 2, 8 3 4, 3 2 4
2 9 10, 2 7 9, 2 3 7, 7 4 9
9 10 7, 9 7 4, 10 2 7, 8 7 0, 2 0 7
3 7 10, 3 10 2, 7 4 10, 1 10 0, 4 0 10
1 10 2, 8 7 4
4 9 1, 4 1 7, 7 1 3
4 9 1, 4 1 7, 0 8 1, 8 7 1
4 0 3, 7 4 3
4 8 7
9 10 8, 10 11 8
3 0 9, 3 9 11, 11 9 10
0 1 10, 0 10 8, 8 10 11
3 1 10, 11 3 10
1 2 11, 1 11 9, 9 11 8
3 0 9, 3 9 11, 1 2 9, 2 11 9
0 2 11, 8 0 11
3 2 11
2 3 8, 2 8 10, 10 8 9
9 10 2, 0 9 2
2 3 8, 2 8 10, 0 1 8, 1 10 8
1 10 2
1 3 8, 9 1 8
0 9 1
0 3 8
-"""


def _tables():
    rows = [[int(x) for x in line.replace(",", " ").split()] if line != "-" else []
            for line in _TRIANGLES.splitlines()]
    assert len(rows) == 256 and all(len(r) % 3 == 0 for r in rows)
    starts = np.zeros(257, np.int32)
    starts[1:] = np.cumsum([len(r) for r in rows])
    edges = np.asarray([e for r in rows for e in r], np.int32)
    # each cube edge as the grid edge holding it: the lower corner's offset, the axis
    offsets = []
    for a, b in EDGES:
        pa, pb = CORNERS[a], CORNERS[b]
        axis = next(d for d in range(3) if pa[d] != pb[d])
        offsets.append((*map(min, pa, pb), axis))
    return starts, edges, np.asarray(offsets, np.int32)


TRI_STARTS, TRI_EDGES, EDGE_OFFSETS = _tables()


@kernel
def _classify(field: wp.array(dtype=wp.float32, ndim=3), threshold: wp.float32,
              tri_starts: wp.array(dtype=wp.int32),
              edge_crossed: wp.array(dtype=wp.int32, ndim=4), cell_tris: wp.array(dtype=wp.int32, ndim=3)):
    """Per node: which of its three positive edges the level set crosses;
    per cell (its lowest node): how many triangles its case has."""
    i, j, k = wp.tid()
    nx = field.shape[0]
    ny = field.shape[1]
    nz = field.shape[2]
    here = field[i, j, k] >= threshold
    if i + 1 < nx:
        if (field[i + 1, j, k] >= threshold) != here:
            edge_crossed[i, j, k, 0] = 1
    if j + 1 < ny:
        if (field[i, j + 1, k] >= threshold) != here:
            edge_crossed[i, j, k, 1] = 1
    if k + 1 < nz:
        if (field[i, j, k + 1] >= threshold) != here:
            edge_crossed[i, j, k, 2] = 1
    if i + 1 < nx and j + 1 < ny and k + 1 < nz:
        case = int(0)
        if here:
            case = case | 1
        if field[i + 1, j, k] >= threshold:
            case = case | 2
        if field[i + 1, j + 1, k] >= threshold:
            case = case | 4
        if field[i, j + 1, k] >= threshold:
            case = case | 8
        if field[i, j, k + 1] >= threshold:
            case = case | 16
        if field[i + 1, j, k + 1] >= threshold:
            case = case | 32
        if field[i + 1, j + 1, k + 1] >= threshold:
            case = case | 64
        if field[i, j + 1, k + 1] >= threshold:
            case = case | 128
        cell_tris[i, j, k] = (tri_starts[case + 1] - tri_starts[case]) // 3


@kernel
def _emit_vertices(field: wp.array(dtype=wp.float32, ndim=3), threshold: wp.float32, lower: wp.vec3,
                   delta: wp.vec3, edge_crossed: wp.array(dtype=wp.int32, ndim=4),
                   edge_vertex: wp.array(dtype=wp.int32, ndim=4), verts: wp.array(dtype=wp.vec3)):
    """The vertex of each crossed edge: where the field's linear
    interpolation along the edge meets the threshold (t clamped to [0, 1]),
    at lower + node index * delta."""
    i, j, k, axis = wp.tid()
    if edge_crossed[i, j, k, axis] != 0:
        di = int(0)
        dj = int(0)
        dk = int(0)
        if axis == 0:
            di = 1
        elif axis == 1:
            dj = 1
        else:
            dk = 1
        a = field[i, j, k]
        b = field[i + di, j + dj, k + dk]
        t = wp.clamp((threshold - a) / (b - a), 0.0, 1.0)
        pa = lower + wp.vec3(float(i) * delta[0], float(j) * delta[1], float(k) * delta[2])
        pb = lower + wp.vec3(float(i + di) * delta[0], float(j + dj) * delta[1], float(k + dk) * delta[2])
        verts[edge_vertex[i, j, k, axis]] = pa * (1.0 - t) + pb * t


@kernel
def _emit_triangles(field: wp.array(dtype=wp.float32, ndim=3), threshold: wp.float32,
                    tri_starts: wp.array(dtype=wp.int32), tri_edges: wp.array(dtype=wp.int32),
                    edge_offsets: wp.array(dtype=wp.int32, ndim=2), edge_vertex: wp.array(dtype=wp.int32, ndim=4),
                    cell_first: wp.array(dtype=wp.int32, ndim=3), indices: wp.array(dtype=wp.int32)):
    """Each cell's triangles, in the table's order, from its first index on."""
    i, j, k = wp.tid()
    case = int(0)
    if field[i, j, k] >= threshold:
        case = case | 1
    if field[i + 1, j, k] >= threshold:
        case = case | 2
    if field[i + 1, j + 1, k] >= threshold:
        case = case | 4
    if field[i, j + 1, k] >= threshold:
        case = case | 8
    if field[i, j, k + 1] >= threshold:
        case = case | 16
    if field[i + 1, j, k + 1] >= threshold:
        case = case | 32
    if field[i + 1, j + 1, k + 1] >= threshold:
        case = case | 64
    if field[i, j + 1, k + 1] >= threshold:
        case = case | 128
    out = 3 * cell_first[i, j, k]
    for s in range(tri_starts[case], tri_starts[case + 1]):
        e = tri_edges[s]
        indices[out] = edge_vertex[i + edge_offsets[e, 0], j + edge_offsets[e, 1], k + edge_offsets[e, 2],
                                   edge_offsets[e, 3]]
        out += 1


_UNSET = object()


def _vec3(value, name: str):
    """A bound as a vec3 (None stays None); a scalar is refused (Warp 1.19's
    fourth positional argument is ``lower``, older Warps' was ``max_verts``)."""
    if value is None:
        return None
    try:
        xyz = [float(x) for x in value]
    except TypeError:
        raise TypeError(f"MarchingCubes {name} must be 3 coordinates (a vec3 or a tuple), got "
                        f"{type(value).__name__} {value!r} (Warp 1.19's fourth and fifth positional arguments are "
                        "lower and upper; max_verts and max_tris are gone)") from None
    if len(xyz) != 3:
        raise ValueError(f"MarchingCubes {name} must have 3 coordinates, got {len(xyz)}")
    return T.vec3(*xyz)


def _deprecated(what: str, instead: str) -> None:
    warnings.warn(f"MarchingCubes {what} is deprecated (Warp 1.9 ignored it, Warp 1.19 removed it). {instead}",
                  DeprecationWarning, stacklevel=3)


def _validate(field) -> None:
    if not isinstance(field, Array):
        raise TypeError(f"MarchingCubes field must be an adjit array, got {type(field).__name__}")
    if field.ndim != 3:
        raise ValueError(f"Expected a 3D array for 'field', but got an array with shape {field.shape}.")
    if any(n < 2 for n in field.shape):
        raise ValueError("Expected 'field' to have at least 2 nodes on each axis, but got an array with shape "
                         f"{field.shape}.")
    if field.dtype != T.float32:
        raise TypeError(f"Expected a dtype of float32 for 'field', but got {field.dtype}.")


class MarchingCubes:
    """Triangle meshes of level sets of scalar fields on a grid of
    ``nx * ny * nz`` nodes (Warp's ``MarchingCubes``, 1.19's
    ``warp.geometry.IsoSurfaceMarchingCubes``).

    ``surface(field, threshold)`` fills ``verts`` (vec3) and ``indices``
    (int32, 3 per triangle) with the surface ``field == threshold`` of a
    float32 field of shape ``(nx, ny, nz)``. Node ``(i, j, k)`` is at
    ``lower + (i, j, k) * (upper - lower) / (n - 1)``; by default ``lower``
    is the origin and ``upper`` is ``(nx - 1, ny - 1, nz - 1)``, so positions
    are in grid index units. Cells at or above the threshold are "outside":
    for a signed distance field (negative inside) triangles wind
    counter-clockwise seen from outside. The output arrays are sized to fit
    (there is no maximum). ``verts`` requires gradients when ``field`` does:
    on a tape, the vertex positions are differentiable in the field values
    (through the interpolation along each edge); the triangles are discrete.

    ``max_verts``, ``max_tris`` and ``device`` (Warp 1.8's arguments, ignored
    since Warp 1.9, removed in 1.19) are accepted as keywords and ignored
    with a DeprecationWarning; ``domain_bounds_lower_corner`` and
    ``domain_bounds_upper_corner`` are the deprecated names of ``lower`` and
    ``upper``.
    """

    CUBE_CORNER_OFFSETS = CORNERS
    EDGE_TO_CORNERS = EDGES

    def __init__(self, nx: int, ny: int, nz: int, lower=None, upper=None, *, max_verts=_UNSET, max_tris=_UNSET,
                 device=_UNSET, domain_bounds_lower_corner=_UNSET, domain_bounds_upper_corner=_UNSET):
        for name, value in (("max_verts", max_verts), ("max_tris", max_tris), ("device", device)):
            if value is not _UNSET:
                _deprecated(f"argument `{name}`", "Output arrays are sized to fit; the field's device is used.")
        if domain_bounds_lower_corner is not _UNSET:
            if lower is not None and domain_bounds_lower_corner is not None:
                raise TypeError("Cannot specify both `lower` and `domain_bounds_lower_corner`.")
            _deprecated("argument `domain_bounds_lower_corner`", "Use `lower` instead.")
            lower = domain_bounds_lower_corner if domain_bounds_lower_corner is not None else lower
        if domain_bounds_upper_corner is not _UNSET:
            if upper is not None and domain_bounds_upper_corner is not None:
                raise TypeError("Cannot specify both `upper` and `domain_bounds_upper_corner`.")
            _deprecated("argument `domain_bounds_upper_corner`", "Use `upper` instead.")
            upper = domain_bounds_upper_corner if domain_bounds_upper_corner is not None else upper
        self.resize(nx, ny, nz)
        self.lower = _vec3(lower, "lower")
        self.upper = _vec3(upper, "upper")
        self.verts: Array | None = None
        self.indices: Array | None = None

    def resize(self, nx: int, ny: int, nz: int) -> None:
        """Sets the grid's node counts for the next ``surface`` call."""
        self.nx, self.ny, self.nz = (operator.index(n) for n in (nx, ny, nz))

    def surface(self, field: Array, threshold: float) -> None:
        """Extracts the surface ``field == threshold`` into ``verts`` and
        ``indices``; ``field`` must have shape ``(nx, ny, nz)``."""
        _validate(field)
        if tuple(field.shape) != (self.nx, self.ny, self.nz):
            raise ValueError(f"Field shape {tuple(field.shape)} does not match context grid dimensions "
                             f"{(self.nx, self.ny, self.nz)}.")
        self.verts, self.indices = self.extract(field, threshold, lower=self.lower, upper=self.upper)

    @classmethod
    def extract(cls, field: Array, threshold: float = 0.0, *, lower=None, upper=None) -> tuple[Array, Array]:
        """The surface ``field == threshold`` of a float32 3-d field:
        ``(verts, indices)`` (stateless)."""
        _validate(field)
        nx, ny, nz = field.shape
        lower = _vec3(lower, "lower") if lower is not None else T.vec3(0.0, 0.0, 0.0)
        upper = _vec3(upper, "upper") if upper is not None else T.vec3(float(nx - 1), float(ny - 1), float(nz - 1))
        delta = T.vec3(*(np.float32(u - lo) / np.float32(n - 1) for u, lo, n in zip(upper, lower, (nx, ny, nz))))
        threshold = float(np.float32(threshold))
        device = field.device
        crossed = zeros((nx, ny, nz, 3), dtype=T.int32, device=device)
        cell_tris = zeros((nx - 1, ny - 1, nz - 1), dtype=T.int32, device=device)
        starts = make_array(TRI_STARTS, dtype=T.int32, device=device)
        launch(_classify, dim=(nx, ny, nz), inputs=[field, threshold, starts], outputs=[crossed, cell_tris],
               device=device)
        # exclusive scans on the host: each crossed edge's vertex, each cell's first triangle
        flags = crossed.numpy().reshape(-1)
        counts = cell_tris.numpy().reshape(-1)
        vertex_of = (np.cumsum(flags, dtype=np.int64) - flags).astype(np.int32)
        first_tri = (np.cumsum(counts, dtype=np.int64) - counts).astype(np.int32)
        n_verts, n_tris = int(flags.sum()), int(counts.sum())
        edge_vertex = make_array(vertex_of.reshape(nx, ny, nz, 3), dtype=T.int32, device=device)
        verts = empty(n_verts, dtype=T.vec3, device=device, requires_grad=field.requires_grad)
        indices = empty(3 * n_tris, dtype=T.int32, device=device)
        if n_verts:
            launch(_emit_vertices, dim=(nx, ny, nz, 3), inputs=[field, threshold, lower, delta, crossed, edge_vertex],
                   outputs=[verts], device=device)
        if n_tris:
            cell_first = make_array(first_tri.reshape(nx - 1, ny - 1, nz - 1), dtype=T.int32, device=device)
            launch(_emit_triangles, dim=(nx - 1, ny - 1, nz - 1),
                   inputs=[field, threshold, starts, make_array(TRI_EDGES, dtype=T.int32, device=device),
                           make_array(EDGE_OFFSETS, dtype=T.int32, device=device), edge_vertex, cell_first],
                   outputs=[indices], device=device)
        return verts, indices

    @staticmethod
    def extract_surface_marching_cubes(field: Array, threshold: float = 0.0, domain_bounds_lower_corner=None,
                                       domain_bounds_upper_corner=None) -> tuple[Array, Array]:
        """Deprecated name of ``extract`` (Warp 1.18)."""
        _deprecated("extract_surface_marching_cubes()", "Use MarchingCubes.extract() instead.")
        return MarchingCubes.extract(field, threshold, lower=domain_bounds_lower_corner,
                                     upper=domain_bounds_upper_corner)
