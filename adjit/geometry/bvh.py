"""The bounding volume hierarchy the geometry queries traverse, built and
refit on the host with numpy.

Layout (the queries in mesh_queries.py depend on it): primitives are put in
tree order by splitting every node at the median of its primitives' centres
along their widest axis (``order``: position -> primitive); consecutive runs
of ``leaf_size`` of them form the leaves, and a complete binary tree over the leaves, padded to a power of
two ``leaves``, is stored in heap order (node k's children are 2k+1 and
2k+2; leaf j is node leaves-1+j). ``lower``/``upper`` hold each node's
bounds; the padding leaves are empty (lower +inf, upper -inf), so no query
enters them. The heap order makes parents, siblings and children arithmetic:
a traversal needs no stack and no links.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Primitives per leaf.
LEAF_SIZE = 4


@dataclass
class TreeArrays:
    lower: np.ndarray   # (nodes, 3) float32
    upper: np.ndarray   # (nodes, 3) float32
    order: np.ndarray   # (primitives,) int32: sorted position -> primitive
    leaves: int         # a power of two; leaf j is node leaves - 1 + j
    leaf_size: int

    @property
    def nodes(self) -> int:
        return 2 * self.leaves - 1


def _median_split_order(lower: np.ndarray, upper: np.ndarray, leaves: int, leaf_size: int) -> np.ndarray:
    """The primitives in tree order: level by level, each node's range is split
    at the median of its primitives' centres along the axis they spread most
    on (numpy's argpartition on all of a level's nodes at once). The padding
    slots (beyond the n primitives) have NaN centres (ignored by the extents)
    and +inf keys, so each node keeps them at its end and they end up after
    all the primitives."""
    n = len(lower)
    slots = leaves * leaf_size
    centre = np.full((3, slots), np.nan, np.float32)  # by axis; the padding's: NaN
    centre[:, :n] = (0.5 * (lower + upper)).T
    items = np.full(slots, slots, np.int64)
    items[:n] = np.arange(n)
    nodes = 1
    while nodes < leaves:
        rows = centre.reshape(3, nodes, -1)
        spread = np.fmax.reduce(rows, axis=2) - np.fmin.reduce(rows, axis=2)  # NaN-ignoring
        axis = np.argmax(np.nan_to_num(spread, nan=-1.0), axis=0)
        key = rows[axis, np.arange(nodes)]  # (nodes, size)
        key = np.where(np.isnan(key), np.inf, key)  # the padding after everything
        part = np.argpartition(key, key.shape[1] // 2 - 1, axis=1)
        centre = np.take_along_axis(rows, part[None], axis=2).reshape(3, slots)
        items = np.take_along_axis(items.reshape(nodes, -1), part, axis=1).reshape(-1)
        nodes *= 2
    assert (items[n:] == slots).all(), "the padding must follow the primitives"
    return items[:n].astype(np.int32)


def build_tree(lower: np.ndarray, upper: np.ndarray, leaf_size: int = LEAF_SIZE) -> TreeArrays:
    """The tree over primitives with bounds ``lower``/``upper`` ((n, 3) each, n >= 1)."""
    n = len(lower)
    if n < 1:
        raise ValueError("a BVH needs at least one primitive")
    leaves = 1 << max(0, int(np.ceil(np.log2(-(-n // leaf_size)))))
    order = _median_split_order(lower, upper, leaves, leaf_size)
    tree = TreeArrays(np.empty((2 * leaves - 1, 3), np.float32), np.empty((2 * leaves - 1, 3), np.float32),
                      order, leaves, leaf_size)
    refit_tree(tree, lower, upper)
    return tree


def refit_tree(tree: TreeArrays, lower: np.ndarray, upper: np.ndarray) -> None:
    """Recomputes every node's bounds from the primitives' (same order and shape), in place."""
    n = len(tree.order)
    slots = tree.leaves * tree.leaf_size
    sorted_lower = np.full((slots, 3), np.inf, np.float32)
    sorted_upper = np.full((slots, 3), -np.inf, np.float32)
    sorted_lower[:n] = lower[tree.order]
    sorted_upper[:n] = upper[tree.order]
    first = tree.leaves - 1
    tree.lower[first:] = sorted_lower.reshape(tree.leaves, tree.leaf_size, 3).min(axis=1)
    tree.upper[first:] = sorted_upper.reshape(tree.leaves, tree.leaf_size, 3).max(axis=1)
    width = tree.leaves
    while width > 1:  # each level from its children's, bottom up
        child, width = width - 1, width // 2
        parent = width - 1
        tree.lower[parent:child] = tree.lower[child:child + 2 * width].reshape(width, 2, 3).min(axis=1)
        tree.upper[parent:child] = tree.upper[child:child + 2 * width].reshape(width, 2, 3).max(axis=1)


def triangle_bounds(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each triangle's (lower, upper) bounds; ``triangles`` is (n, 3) vertex indices."""
    corners = points[triangles]  # (n, 3 vertices, 3)
    return corners.min(axis=1), corners.max(axis=1)
