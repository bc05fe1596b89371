"""Geometry objects and their queries, written in adjit's own kernel language.

A ``Mesh`` (and likewise a ``Bvh`` over user boxes, and a ``HashGrid`` over
points) builds a bounding volume hierarchy on the host and writes a
descriptor (``handles.py``) whose address is its ``id``; the query functions
(``mesh_queries.py``) are ordinary @func device functions that read the
descriptor, view the mesh's arrays (``address_array``) and traverse the
tree. So they compile through the normal pipeline (bounds-checked, lowered
to CPU code or PTX like every kernel), and adjit's own passes differentiate
them: a query's results are exact functions of the query point or ray for
the face it found (the search itself is discrete). ``MarchingCubes``
(``marching_cubes.py``) extracts level sets of grid fields with kernels
written the same way.

Under ``adjit.alias_warp()`` this package is also ``warp.geometry`` (Warp
1.19's home of ``IsoSurfaceMarchingCubes``, the name ``MarchingCubes`` has
there); a name of Warp's module adjit lacks raises ``NotInAdjitError``.
"""
from .bvh_object import Bvh  # noqa: F401
from .bvh_queries import (BvhQuery, bvh_query_aabb, bvh_query_capsule, bvh_query_next, bvh_query_ray,  # noqa: F401
                          bvh_query_sphere)
from .hash_grid import HashGrid  # noqa: F401
from .hash_grid_queries import (HashGridQuery, hash_grid_point_id, hash_grid_query,  # noqa: F401
                                hash_grid_query_next)
from .marching_cubes import MarchingCubes  # noqa: F401
from .mesh import Mesh  # noqa: F401
from .mesh_queries import (MeshQueryAABB, MeshQueryPoint, MeshQueryRay, mesh_eval_face_normal,  # noqa: F401
                           mesh_eval_position, mesh_eval_velocity, mesh_get_index, mesh_get_point,
                           mesh_get_velocity, mesh_query_aabb, mesh_query_aabb_next, mesh_query_next,
                           mesh_query_furthest_point_no_sign, mesh_query_point, mesh_query_point_no_sign,
                           mesh_query_point_sign_normal, mesh_query_point_sign_parity,
                           mesh_query_point_sign_winding_number, mesh_query_ray,
                           mesh_query_ray_anyhit, mesh_query_ray_count_intersections, mesh_query_sphere)
from .primitives import closest_point_edge_edge, intersect_tri_tri  # noqa: F401

#: Warp 1.19's name of the type mesh_query_aabb and mesh_query_sphere return (one struct in adjit).
MeshQuery = MeshQueryAABB

#: Warp 1.19's name (``warp.geometry.IsoSurfaceMarchingCubes``; ``warp.MarchingCubes`` is its deprecated alias).
IsoSurfaceMarchingCubes = MarchingCubes


def __getattr__(name: str):
    # Only called for names this package lacks (IsoSurfaceNets,
    # sparse_marching_cubes, ...): a NotInAdjitError naming adjit.geometry.<name>.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys as _sys
    from ..errors import missing_name
    raise missing_name("adjit.geometry", name, _sys._getframe(1))
