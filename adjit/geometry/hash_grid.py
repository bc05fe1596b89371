"""``HashGrid``: points bucketed in a hashed grid of cells, for the
neighbour queries of kernels that receive its ``id`` (Warp's API)."""
from __future__ import annotations

import operator
import weakref

import numpy as np

from .. import types as T
from ..errors import AdjitError, NotInAdjitError
from ..runtime.array import Array
from . import handles as H

#: Cell coordinates are offset by this before wrapping (as Warp's hash_grid_index).
ORIGIN = 1 << 20
#: Cell coordinates are clamped to this range before conversion to int.
COORD_MIN, COORD_MAX = -(1 << 21), 1 << 30
_MAX_CELLS = (1 << 31) - 1


def _clear(row) -> None:
    row[:] = 0  # the kind word too: queries on the stale id fail their check


def cell_coords(points: np.ndarray, cell_width_inv: np.float32) -> np.ndarray:
    """The integer cell coordinates ((n, 3) int64) of float32 points, as the
    kernel computes them: floor(p * (1 / width)) in float32."""
    c = np.floor(points.astype(np.float32) * np.float32(cell_width_inv))
    return np.clip(c, COORD_MIN, COORD_MAX).astype(np.int64)


def hash_cells(coords: np.ndarray, dims: tuple[int, int, int]) -> np.ndarray:
    """The table entry of each cell ((n, 3) coordinates): Warp's
    hash_grid_index (offset by ORIGIN, clamped at 0, wrapped per axis)."""
    c = np.maximum(coords + ORIGIN, 0) % np.asarray(dims, np.int64)
    return (c[:, 2] * (dims[0] * dims[1]) + c[:, 1] * dims[0] + c[:, 0]).astype(np.int32)


class HashGrid:
    """A hash grid over points for ``hash_grid_query``,
    ``hash_grid_query_next`` and ``hash_grid_point_id`` in kernels that
    receive its ``id`` (a ``uint64``).

    ``dim_x * dim_y * dim_z`` is the size of the table the cells are hashed
    into (cell coordinates wrap around it, as in Warp). ``build(points,
    radius)`` buckets the points (a 1-d vec3 array) into cubic cells of edge
    ``radius``: on the host, points sorted by cell (stable). A query visits
    the cells that overlap the box point +- max_dist and yields every point
    in them (candidates: the caller tests the distance); ``hash_grid_point_id``
    maps a position in the sorted order to the point's index. The grid keeps
    what it built until the next build; the points array is only read when
    building, so kernels index their own points arrays (which may require
    gradients: the grid supplies indices only). CPU only; float32 only.
    """

    def __init__(self, dim_x: int, dim_y: int, dim_z: int, device=None, dtype=None):
        self._row = None
        self.device = str(device) if device is not None else "cpu"
        if self.device != "cpu":
            raise AdjitError(f"HashGrid on {self.device}: a HashGrid is on the CPU only so far (its queries "
                             "compile to PTX, but the GPU grid is not built yet)")
        if dtype is not None and dtype not in (float, T.float32):
            raise NotInAdjitError(f"HashGrid(dtype={getattr(dtype, '__name__', dtype)}) is not in adjit: "
                                  "only float32 grids so far", name="dtype")
        self.dtype = T.float32
        try:
            dims = (operator.index(dim_x), operator.index(dim_y), operator.index(dim_z))
        except TypeError:
            raise TypeError("HashGrid dimensions must be integers") from None
        if min(dims) <= 0:
            raise ValueError(f"HashGrid dimensions must be positive, got {dims}")
        if dims[0] * dims[1] * dims[2] > _MAX_CELLS:
            raise ValueError(f"HashGrid cell count {dims[0]} * {dims[1]} * {dims[2]} exceeds {_MAX_CELLS}")
        self.dims = dims
        cells = dims[0] * dims[1] * dims[2]
        self._cell_starts = np.zeros(cells, np.int32)
        self._cell_ends = np.zeros(cells, np.int32)
        self._cell_width_inv = np.zeros(1, np.float32)
        self._point_ids = np.zeros(0, np.int32)
        self.radius = None
        self.reserved = False
        row = self._row = H.new_descriptor()
        row[H.GRID_DIM_X], row[H.GRID_DIM_Y], row[H.GRID_DIM_Z] = dims
        row[H.GRID_CELL_STARTS] = self._cell_starts.ctypes.data
        row[H.GRID_CELL_ENDS] = self._cell_ends.ctypes.data
        row[H.GRID_CELL_WIDTH_INV] = self._cell_width_inv.ctypes.data
        row[H.GRID_POINT_IDS] = self._point_ids.ctypes.data
        row[H.GRID_POINT_COUNT] = 0  # not built: queries find nothing
        row[H.KIND] = H.HASH_GRID_KIND
        weakref.finalize(self, _clear, row)

    @property
    def id(self) -> int:
        """The handle kernels take (a ``uint64``): the address of the grid's descriptor."""
        return int(self._row.ctypes.data)

    def reserve(self, num_points: int, with_groups: bool = False) -> None:
        """Allocates room for builds of up to ``num_points`` points (builds grow it as needed)."""
        num_points = operator.index(num_points)
        if num_points < 0:
            raise ValueError(f"HashGrid.reserve needs a count >= 0, got {num_points}")
        if num_points > len(self._point_ids):
            ids = np.zeros(num_points, np.int32)
            n = int(self._row[H.GRID_POINT_COUNT])
            ids[:n] = self._point_ids[:n]
            self._point_ids = ids
            self._row[H.GRID_POINT_IDS] = ids.ctypes.data
        self.reserved = True

    def build(self, points: Array, radius: float, groups: Array | None = None) -> None:
        """Buckets ``points`` (vec3, CPU) into cells of edge ``radius``; call
        again whenever the points move."""
        if not isinstance(points, Array) or points.dtype != T.vec3:
            raise TypeError(f"HashGrid points must be an adjit array of vec3 (float32), got {_describe(points)}")
        if points.device != "cpu":
            raise AdjitError(f"HashGrid points are on {points.device}: a HashGrid is on the CPU only so far")
        if groups is not None:
            raise NotInAdjitError("HashGrid.build(groups=...) is not in adjit: grouped hash grids are not "
                                  "implemented yet", name="groups")
        radius = float(radius)
        if not radius > 0.0:
            raise ValueError(f"HashGrid cell width (radius) must be positive, got {radius}")
        p = np.ascontiguousarray(points.numpy()).reshape(-1, 3)
        n = len(p)
        self.reserve(n)
        inv = np.float32(1.0) / np.float32(radius)
        cells = hash_cells(cell_coords(p, inv), self.dims)
        order = np.argsort(cells, kind="stable").astype(np.int32)
        sorted_cells = cells[order]
        self._point_ids[:n] = order
        self._cell_starts[:] = 0
        self._cell_ends[:] = 0
        if n:
            used, first, counts = np.unique(sorted_cells, return_index=True, return_counts=True)
            self._cell_starts[used] = first
            self._cell_ends[used] = first + counts
        self._cell_width_inv[0] = inv
        self.radius = radius
        self._row[H.GRID_POINT_COUNT] = n


def _describe(x) -> str:
    if isinstance(x, Array):
        return f"an array of {x.dtype} with shape {x.shape}"
    return type(x).__name__
