"""Warp's hash grid queries as adjit device functions (kernel language).

``hash_grid_query`` finds the cells that overlap the box point +- max_dist
(at most one pass of the table along each axis) and ``hash_grid_query_next``
yields the points of each in turn, x fastest, as Warp's: candidates, whose
distance the caller tests. The cell of a point is computed exactly as
``HashGrid.build`` computes it on the host (hash_grid.py). A query is
discrete: nothing in it is differentiated; a kernel differentiates what it
computes from its own arrays at the indices the query gives.
"""
from __future__ import annotations

from ..language import address_array
from . import handles as H
from .hash_grid import COORD_MAX, COORD_MIN, ORIGIN
from .kernel_lang import wp
from .walks import descriptor_reader

_DIM_X = wp.constant(H.GRID_DIM_X)
_DIM_Y = wp.constant(H.GRID_DIM_Y)
_DIM_Z = wp.constant(H.GRID_DIM_Z)
_POINT_COUNT = wp.constant(H.GRID_POINT_COUNT)
_POINT_IDS = wp.constant(H.GRID_POINT_IDS)
_CELL_STARTS = wp.constant(H.GRID_CELL_STARTS)
_CELL_ENDS = wp.constant(H.GRID_CELL_ENDS)
_CELL_WIDTH_INV = wp.constant(H.GRID_CELL_WIDTH_INV)
_ORIGIN = wp.constant(ORIGIN)
_COORD_MIN = wp.constant(float(COORD_MIN))
_COORD_MAX = wp.constant(float(COORD_MAX))


@wp.struct
class HashGridQuery:
    """The state of a hash_grid_query (advance it with hash_grid_query_next):
    the range of cells, the current cell, and the current cell's range of
    sorted positions."""
    id: wp.uint64
    x_start: int
    y_start: int
    z_start: int
    x_end: int
    y_end: int
    z_end: int
    x: int
    y: int
    z: int
    cell_index: int
    cell_end: int


_descriptor = descriptor_reader(H.HASH_GRID_KIND, "HashGrid")


@wp.func
def _count(id: wp.uint64, word: int) -> int:
    return int(_descriptor(id, word))


@wp.func
def _cell_coord(x: float, inv: float) -> int:
    """floor(x / width) as an int (clamped far outside any grid)."""
    return int(wp.clamp(wp.floor(x * inv), _COORD_MIN, _COORD_MAX))


@wp.func
def _cell(id: wp.uint64, x: int, y: int, z: int) -> int:
    """The table entry of cell (x, y, z) (Warp's hash_grid_index)."""
    dx = _count(id, _DIM_X)
    dy = _count(id, _DIM_Y)
    dz = _count(id, _DIM_Z)
    cx = wp.max(x + _ORIGIN, 0) % dx
    cy = wp.max(y + _ORIGIN, 0) % dy
    cz = wp.max(z + _ORIGIN, 0) % dz
    return cz * (dx * dy) + cy * dx + cx


@wp.func
def _enter_cell(query: wp.ref[HashGridQuery]):
    id = query.id
    cells = _count(id, _DIM_X) * _count(id, _DIM_Y) * _count(id, _DIM_Z)
    starts = address_array(wp.int64(_descriptor(id, _CELL_STARTS)), cells, wp.int32, "HashGrid cell starts")
    ends = address_array(wp.int64(_descriptor(id, _CELL_ENDS)), cells, wp.int32, "HashGrid cell ends")
    c = _cell(id, query.x, query.y, query.z)
    query.cell_index = int(starts[c])
    query.cell_end = int(ends[c])


@wp.func
def hash_grid_query(id: wp.uint64, point: wp.vec3, max_dist: float) -> HashGridQuery:
    """A query for the points in the cells that overlap the box
    point +- max_dist (candidates within max_dist, and others: test the
    distance), advanced by ``hash_grid_query_next``."""
    inv = float(0.0)
    inv_address = wp.int64(_descriptor(id, _CELL_WIDTH_INV))
    if inv_address != wp.int64(0):  # (0 for a stale id)
        inv = address_array(inv_address, 1, wp.float32, "HashGrid cell width")[0]
    p = wp.stop_gradient(point)
    r = wp.stop_gradient(max_dist)
    q = HashGridQuery()
    q.id = id
    q.x_start = _cell_coord(p[0] - r, inv)
    q.y_start = _cell_coord(p[1] - r, inv)
    q.z_start = _cell_coord(p[2] - r, inv)
    # each table entry once: at most one pass along each axis
    q.x_end = wp.min(_cell_coord(p[0] + r, inv), q.x_start + _count(id, _DIM_X) - 1)
    q.y_end = wp.min(_cell_coord(p[1] + r, inv), q.y_start + _count(id, _DIM_Y) - 1)
    q.z_end = wp.min(_cell_coord(p[2] + r, inv), q.z_start + _count(id, _DIM_Z) - 1)
    q.x = q.x_start
    q.y = q.y_start
    q.z = q.z_start
    _enter_cell(q)
    return q


@wp.func
def hash_grid_query_next(query: wp.ref[HashGridQuery], index: wp.ref[int]) -> bool:
    """The next candidate's index (into the points the grid was built from)
    in ``index`` and True; False (``index`` unchanged) when there is none."""
    id = query.id
    points = _count(id, _POINT_COUNT)
    if points == 0:  # not built
        return False
    ids = address_array(wp.int64(_descriptor(id, _POINT_IDS)), points, wp.int32, "HashGrid point ids")
    found = int(-1)
    done = False
    while found < 0 and not done:
        if query.cell_index < query.cell_end:
            found = int(ids[query.cell_index])
            query.cell_index = query.cell_index + 1
        else:
            query.x = query.x + 1
            if query.x > query.x_end:
                query.x = query.x_start
                query.y = query.y + 1
            if query.y > query.y_end:
                query.y = query.y_start
                query.z = query.z + 1
            if query.z > query.z_end:
                done = True
            else:
                _enter_cell(query)
    if found >= 0:
        index = found
        return True
    return False


@wp.func
def hash_grid_point_id(id: wp.uint64, index: int) -> int:
    """The index of the point at position ``index`` of the grid's sorted
    order (points sharing a cell are adjacent), or -1 if the grid is not built."""
    points = _count(id, _POINT_COUNT)
    if points == 0:
        return -1
    ids = address_array(wp.int64(_descriptor(id, _POINT_IDS)), points, wp.int32, "HashGrid point ids")
    return int(ids[index])
