"""``Mesh``: a triangle mesh kernels query through its ``id`` (Warp's API)."""
from __future__ import annotations

import weakref

import numpy as np

from .. import types as T
from ..errors import AdjitError
from ..runtime.array import Array, array as make_array
from . import handles as H
from .bvh import build_tree, refit_tree, triangle_bounds
from .winding import winding_data


def _clear(row: np.ndarray) -> None:
    row[:] = 0  # the kind word too: queries on the stale id fail their check


class Mesh:
    """A triangle mesh with a bounding volume hierarchy, for the mesh queries
    (``mesh_query_point``, ``mesh_query_ray``, ...) of kernels that receive
    its ``id`` (a ``uint64``).

    ``points``: array of vec3 (float32); ``indices``: int32 array of 3 vertex
    indices per triangle (flat, as Warp's, or (n, 3)); ``velocities``: an
    optional vec3 array like ``points`` (``mesh_eval_velocity``). The hierarchy
    is built on the host when the mesh is made; after changing the points
    (in place, or by assigning ``mesh.points`` an array of the same length),
    call ``refit()``. ``support_winding_number``: also keep the per-node data
    ``mesh_query_point_sign_winding_number`` needs (winding.py; without it
    that query takes ``mesh_query_point``'s sign, as Warp's). The mesh keeps its arrays alive; its id is valid while
    the mesh is (a query on the id of a collected mesh fails its check).

    Queries are exact functions of the query point or ray for the face they
    find, so their gradients with respect to the query are exact away from
    ties. The mesh's points are constant for differentiation: a mesh whose
    points require gradients is refused (gradients with respect to the
    points are not computed yet).
    """

    def __init__(self, points: Array, indices: Array, velocities: Array | None = None,
                 support_winding_number: bool = False, bvh_constructor: str | None = None,
                 bvh_leaf_size: int | None = None):
        self._row = None
        self.device = getattr(points, "device", "cpu")
        self._check_points(points, "points")
        if velocities is not None:
            self._check_points(velocities, "velocities")
            if velocities.shape[0] != points.shape[0]:
                raise ValueError(f"Mesh velocities must have one per point ({points.shape[0]}), "
                                 f"got {velocities.shape[0]}")
        if not isinstance(indices, Array) or indices.dtype != T.int32 or not indices.is_contiguous:
            raise TypeError(f"Mesh indices must be a contiguous adjit array of int32, got {_describe(indices)}")
        if indices.size % 3 or indices.size == 0:
            raise ValueError(f"Mesh indices must hold 3 vertex indices per triangle (at least one), got "
                             f"{indices.size} values")
        triangles = indices.numpy().reshape(-1, 3)
        if triangles.min() < 0 or triangles.max() >= points.shape[0]:
            raise ValueError(f"Mesh indices must lie in [0, {points.shape[0]}), got values in "
                             f"[{triangles.min()}, {triangles.max()}]")
        if bvh_constructor not in (None, "sah", "median", "lbvh"):
            raise ValueError(f"Mesh bvh_constructor must be 'sah', 'median' or 'lbvh', got {bvh_constructor!r}")
        self.support_winding_number = bool(support_winding_number)
        self._points, self.indices, self.velocities = points, indices, velocities
        self._triangles = triangles
        self._tree = build_tree(*triangle_bounds(points.numpy(), triangles),
                                **({"leaf_size": int(bvh_leaf_size)} if bvh_leaf_size else {}))
        row = self._row = H.new_descriptor()
        row[H.POINT_COUNT] = points.shape[0]
        row[H.POINTS] = points.ptr
        row[H.FACE_COUNT] = len(triangles)
        row[H.INDICES] = indices.ptr
        row[H.VELOCITIES] = velocities.ptr if velocities is not None else 0
        row[H.VELOCITY_COUNT] = points.shape[0] if velocities is not None else 0
        row[H.NODE_COUNT] = self._tree.nodes
        row[H.NODE_LOWER] = self._tree.lower.ctypes.data
        row[H.NODE_UPPER] = self._tree.upper.ctypes.data
        row[H.LEAVES] = self._tree.leaves
        row[H.LEAF_SIZE] = self._tree.leaf_size
        row[H.ORDER] = self._tree.order.ctypes.data
        self._winding = None
        if self.support_winding_number:
            self._winding = winding_data(self._tree, points.numpy(), triangles)
            row[H.WINDING] = self._winding.ctypes.data
        row[H.KIND] = H.MESH_KIND
        weakref.finalize(self, _clear, row)

    @staticmethod
    def _check_points(points, what: str) -> None:
        if not isinstance(points, Array) or points.dtype != T.vec3 or points.ndim != 1 or not points.is_contiguous:
            raise TypeError(f"Mesh {what} must be a contiguous 1-d adjit array of vec3 (float32), got "
                            f"{_describe(points)}")
        if points.device != "cpu":
            raise AdjitError(f"Mesh {what} are on {points.device}: meshes are on the CPU only so far (their "
                             "queries compile to PTX, but the GPU mesh is not built yet)")
        if points.requires_grad:
            raise AdjitError(f"Mesh {what} require gradients, which adjit's mesh queries do not compute yet "
                             "(the mesh is constant for differentiation; gradients with respect to the query "
                             "point or ray are exact); make the mesh from an array without requires_grad")

    @property
    def id(self) -> int:
        """The handle kernels take (a ``uint64``): the address of the mesh's descriptor."""
        return int(self._row.ctypes.data)

    @property
    def points(self) -> Array:
        return self._points

    @points.setter
    def points(self, points: Array) -> None:
        """A new points array of the same length (call ``refit()`` after, as in Warp)."""
        self._check_points(points, "points")
        if points.shape[0] != self._points.shape[0]:
            raise ValueError(f"Mesh points can only be replaced by as many points ({self._points.shape[0]}), "
                             f"got {points.shape[0]}")
        self._points = points
        self._row[H.POINTS] = points.ptr

    def refit(self) -> None:
        """Recomputes the hierarchy's bounds (and the winding number data, with
        ``support_winding_number``) from the current points."""
        points = self._points.numpy()
        refit_tree(self._tree, *triangle_bounds(points, self._triangles))
        if self._winding is not None:
            self._winding[...] = winding_data(self._tree, points, self._triangles)


def _describe(x) -> str:
    if isinstance(x, Array):
        return f"an array of {x.dtype} with shape {x.shape}"
    return type(x).__name__
