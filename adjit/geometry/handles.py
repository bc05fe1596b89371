"""Descriptors: the memory a geometry handle (``Mesh.id``) is the address of.

A descriptor is a row of DESCRIPTOR_WORDS uint64 words in a block that is
never freed, so an id stays readable after its object is gone: the object's
finalizer clears the kind word, and a query on a stale id fails its check
instead of reading freed memory. Rows are not reused (an old id never names
a new object); a row costs 128 bytes.
"""
from __future__ import annotations

import threading

import numpy as np

DESCRIPTOR_WORDS = 16
_ROWS_PER_BLOCK = 256

#: Kind words (8 ASCII characters, big-endian): what a row describes (0: freed).
MESH_KIND = 0x41444A544D455348  # "ADJTMESH"
BVH_KIND = 0x41444A5442564820  # "ADJTBVH "
HASH_GRID_KIND = 0x41444A5448475244  # "ADJTHGRD"

# Word indices of a mesh row (WINDING: the address of the per-node winding
# number data of winding.py, 0 without support_winding_number).
KIND, POINT_COUNT, POINTS, FACE_COUNT, INDICES, VELOCITIES, NODE_COUNT, NODE_LOWER, NODE_UPPER, LEAVES, \
    LEAF_SIZE, ORDER, VELOCITY_COUNT, WINDING = range(14)

# Word indices of a Bvh row (word 0 is KIND): the items' bounds (the user's
# arrays) and the tree (bvh.py).
BVH_ITEM_COUNT, BVH_LOWERS, BVH_UPPERS, BVH_NODE_COUNT, BVH_NODE_LOWER, BVH_NODE_UPPER, BVH_LEAVES, \
    BVH_LEAF_SIZE, BVH_ORDER = range(1, 10)

# Word indices of a HashGrid row (word 0 is KIND): the table's dimensions,
# the points sorted by cell (their original indices), each cell's range of
# sorted positions, and the address of one float32, 1 / cell width.
GRID_DIM_X, GRID_DIM_Y, GRID_DIM_Z, GRID_POINT_COUNT, GRID_POINT_IDS, GRID_CELL_STARTS, GRID_CELL_ENDS, \
    GRID_CELL_WIDTH_INV = range(1, 9)

_lock = threading.Lock()
_blocks: list[np.ndarray] = []
_next_row = _ROWS_PER_BLOCK


def new_descriptor() -> np.ndarray:
    """A fresh zeroed row (a view; its address is ``row.ctypes.data``)."""
    global _next_row
    with _lock:
        if _next_row == _ROWS_PER_BLOCK:
            _blocks.append(np.zeros((_ROWS_PER_BLOCK, DESCRIPTOR_WORDS), np.uint64))
            _next_row = 0
        row = _blocks[-1][_next_row]
        _next_row += 1
    return row

