"""``Bvh``: a bounding volume hierarchy over user boxes that kernels query
through its ``id`` (Warp's API)."""
from __future__ import annotations

import weakref

from .. import types as T
from ..errors import AdjitError, NotInAdjitError
from ..runtime.array import Array
from . import handles as H
from .bvh import build_tree, refit_tree


def _clear(row) -> None:
    row[:] = 0  # the kind word too: queries on the stale id fail their check


#: Warp's constructor names (all build the same tree here).
CONSTRUCTORS = (None, "sah", "median", "lbvh", "cubql")


class Bvh:
    """A bounding volume hierarchy over items given by their bounds, for the
    queries ``bvh_query_aabb``, ``bvh_query_ray`` and ``bvh_query_next`` of
    kernels that receive its ``id`` (a ``uint64``).

    ``lowers``, ``uppers``: 1-d contiguous CPU arrays of vec3 (float32), one
    box per item. The tree is built on the host when the Bvh is made (items
    split at the median of their centres, level by level; ``leaf_size`` per leaf,
    1 as in Warp); after changing the bounds in place, call ``refit()``. The
    queries test each item against its current bounds in ``lowers`` and
    ``uppers`` (as Warp's), and the tree's nodes against the bounds of the
    last build or refit. The Bvh keeps its arrays alive; its id is valid
    while the Bvh is (a query on the id of a collected Bvh fails its check).

    ``constructor`` accepts Warp's names and builds the same tree for all;
    grouped BVHs (``groups``) are not in adjit yet.
    """

    def __init__(self, lowers: Array, uppers: Array, constructor: str | None = None, groups: Array | None = None,
                 leaf_size: int = 1):
        self._row = None
        for what, a in (("lowers", lowers), ("uppers", uppers)):
            if not isinstance(a, Array) or a.dtype != T.vec3 or a.ndim != 1 or not a.is_contiguous:
                raise TypeError(f"Bvh {what} must be a contiguous 1-d adjit array of vec3 (float32), got "
                                f"{_describe(a)}")
            if a.device != "cpu":
                raise AdjitError(f"Bvh {what} are on {a.device}: a Bvh is on the CPU only so far (its queries "
                                 "compile to PTX, but the GPU tree is not built yet)")
        if lowers.shape[0] != uppers.shape[0]:
            raise ValueError(f"Bvh lowers and uppers must have as many boxes, got {lowers.shape[0]} and "
                             f"{uppers.shape[0]}")
        if lowers.shape[0] == 0:
            raise ValueError("a Bvh needs at least one box")
        if groups is not None:
            raise NotInAdjitError("Bvh(groups=...) is not in adjit: grouped BVHs (bvh_get_group_root) are not "
                                  "implemented yet", name="groups")
        name = getattr(constructor, "name", constructor)
        name = name.lower() if isinstance(name, str) else name
        if name not in CONSTRUCTORS:
            raise ValueError(f"Bvh constructor must be 'sah', 'median', 'lbvh', 'cubql' or None, got {constructor!r}")
        if int(leaf_size) < 1:
            raise ValueError(f"Bvh leaf_size must be at least 1, got {leaf_size}")
        self.device = lowers.device
        self.lowers, self.uppers, self.groups = lowers, uppers, None
        self.leaf_size = int(leaf_size)
        self._tree = build_tree(lowers.numpy(), uppers.numpy(), leaf_size=self.leaf_size)
        row = self._row = H.new_descriptor()
        row[H.BVH_ITEM_COUNT] = lowers.shape[0]
        row[H.BVH_LOWERS] = lowers.ptr
        row[H.BVH_UPPERS] = uppers.ptr
        row[H.BVH_NODE_COUNT] = self._tree.nodes
        row[H.BVH_NODE_LOWER] = self._tree.lower.ctypes.data
        row[H.BVH_NODE_UPPER] = self._tree.upper.ctypes.data
        row[H.BVH_LEAVES] = self._tree.leaves
        row[H.BVH_LEAF_SIZE] = self._tree.leaf_size
        row[H.BVH_ORDER] = self._tree.order.ctypes.data
        row[H.KIND] = H.BVH_KIND
        weakref.finalize(self, _clear, row)

    @property
    def id(self) -> int:
        """The handle kernels take (a ``uint64``): the address of the Bvh's descriptor."""
        return int(self._row.ctypes.data)

    def refit(self) -> None:
        """Recomputes the tree's bounds from the current contents of ``lowers`` and ``uppers``
        (the items keep the order of the build)."""
        refit_tree(self._tree, self.lowers.numpy(), self.uppers.numpy())


def _describe(x) -> str:
    if isinstance(x, Array):
        return f"an array of {x.dtype} with shape {x.shape}"
    return type(x).__name__
