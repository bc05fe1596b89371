"""The builtin functions of the kernel language: one registry entry each.

Each entry (``registry.Builtin``) says what a builtin accepts and returns,
how it is emitted, whether it is differentiable, and documents it; the
frontend type-checks calls with it before emitting any IR, and docs and the
gradient fuzzer read the same entries (``adjit.builtin_registry()``).

The entries live in rooms by topic, each entry beside its emitter:

- ``registry``: the entry type, ``add_builtin``, ``lookup``, ``registry()``
- ``helpers``: emitter helpers the rooms share
- ``math``: scalar math, component-wise (sqrt, sin, min, clamp, ...)
- ``utility``: where, select, stop_gradient, block_dim
- ``linalg``: vectors and matrices (dot, cross, inverse, norms, ...)
- ``quaternions``, ``transforms``, ``spatial``: rotations, rigid transforms,
  spatial 6-vectors
- ``operators``: Warp's operator functions (mul, add, neg, ...)
- ``arrays``: the atomics and lower_bound
- ``decompositions``: svd3, svd2, eig3, qr3
- ``random``, ``noise``: the random draws and Perlin noise
- ``tiles``: Warp's tile builtins (emitted by adjit/compiler/tiles.py)

A builtin is part of the language (``adjit.sin`` is an entry), so importing
this package imports no MLIR: each room binds the MLIR modules its emitters
use (and ``adjit.compiler.values``) with ``deferred_import``, which imports
them when a kernel is compiled.
"""
from .registry import REQUIRED, Builtin, StaticParam, add_builtin, lookup  # noqa: F401

# Importing a room registers its entries.
from . import math, utility, linalg, quaternions, transforms, spatial  # noqa: F401
from . import operators, arrays, decompositions, random, noise, tiles  # noqa: F401
from .decompositions import FIRST_ORDER_ONLY  # noqa: F401
