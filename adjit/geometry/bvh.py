"""The bounding volume hierarchy the geometry queries traverse, built and
refit on the host with numpy.

Layout (the queries in mesh_queries.py depend on it): primitives are sorted
by the Morton code of their bounds' centres (``order``: sorted position ->
primitive); consecutive runs of ``leaf_size`` sorted primitives form the
leaves, and a complete binary tree over the leaves, padded to a power of
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


def _spread_bits(v: np.ndarray) -> np.ndarray:
    """10-bit integers with two zero bits inserted after each bit."""
    v = v.astype(np.uint32) & 0x3FF
    v = (v | (v << 16)) & 0x030000FF
    v = (v | (v << 8)) & 0x0300F00F
    v = (v | (v << 4)) & 0x030C30C3
    v = (v | (v << 2)) & 0x09249249
    return v


def _morton_order(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    centre = 0.5 * (lower.astype(np.float64) + upper)
    lo, hi = centre.min(axis=0), centre.max(axis=0)
    cells = np.clip((centre - lo) / np.maximum(hi - lo, 1e-30) * 1023.0, 0, 1023).astype(np.uint32)
    code = (_spread_bits(cells[:, 0]) << 2) | (_spread_bits(cells[:, 1]) << 1) | _spread_bits(cells[:, 2])
    return np.argsort(code, kind="stable").astype(np.int32)


def build_tree(lower: np.ndarray, upper: np.ndarray, leaf_size: int = LEAF_SIZE) -> TreeArrays:
    """The tree over primitives with bounds ``lower``/``upper`` ((n, 3) each, n >= 1)."""
    n = len(lower)
    if n < 1:
        raise ValueError("a BVH needs at least one primitive")
    order = _morton_order(lower, upper)
    leaves = 1 << max(0, int(np.ceil(np.log2(-(-n // leaf_size)))))
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
