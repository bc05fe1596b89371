"""Tile builtins (Warp's tile programming model): their entries.

A call's arguments include shapes, offsets and functions, not only values,
so the entries are marked ``tile`` and adjit/compiler/tiles.py emits their
calls from the arguments bound to Warp's parameter names (``params``, with
``defaults``). On the CPU a block is one thread, as in
Warp's CPU launches: ``tile(x)`` has one column and ``untile`` reads it.
"""
from __future__ import annotations

from .. import types as T
from .registry import add_builtin


def _kernel_only(name):
    def infer(args, **static):
        raise TypeError(f"{name}() takes and makes tiles, which exist only in kernels: call it in an "
                        "@adjit.kernel or @adjit.func")
    return infer


def _not_emitted(*args, **kwargs):
    raise AssertionError("tile builtins are emitted by adjit/compiler/tiles.py")


def _tile_builtin(name, doc, params, differentiable=True, rebinds=(), subscript=None, **defaults):
    """``rebinds``: the tiles the builtin writes (tile_matmul's out), by index in ``params``."""
    add_builtin(name, doc, _kernel_only(name), _not_emitted, differentiable=differentiable, params=params,
                tile=True, defaults=defaults, rebinds=rebinds, subscript=subscript)


_CREATE = "shape, dtype=float32, storage='register'"
_tile_builtin("tile_zeros", f"tile_zeros({_CREATE}): a tile of zeros.", ("shape", "dtype", "storage"),
              differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_ones", f"tile_ones({_CREATE}): a tile of ones.", ("shape", "dtype", "storage"),
              differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_empty", f"tile_empty({_CREATE}): a tile to be written (zeros in adjit: never a stale value).",
              ("shape", "dtype", "storage"), differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_full", "tile_full(shape, value, dtype=None, storage='register'): a tile filled with value (of "
              "value's type without dtype: float32 for a float literal, int32 for an int one).",
              ("shape", "value", "dtype", "storage"), dtype=None, storage="register")
_tile_builtin("tile_arange", "tile_arange(stop) / (start, stop) / (start, stop, step), dtype=: a 1-d tile of evenly "
              "spaced numbers (constants), as numpy.arange.", ("*args", "dtype", "storage"), differentiable=False,
              dtype=None, storage="register")
_tile_builtin("tile_randi", "tile_randi(shape, rng, min=None, max=None, storage='register'): an int32 tile of random "
              "ints drawn from the state pcg(rng) in row-major order (in [min, max) with bounds), as Warp's CPU; rng "
              "is not advanced.", ("shape", "rng", "min", "max", "storage"), differentiable=False, min=None,
              max=None, storage="register")
_tile_builtin("tile_randf", "tile_randf(shape, rng, min=None, max=None, storage='register'): a float32 tile of random "
              "floats in [0, 1) (in [min, max) with bounds) drawn as tile_randi's.",
              ("shape", "rng", "min", "max", "storage"), differentiable=False, min=None, max=None, storage="register")
_tile_builtin("tile_load", "tile_load(a, shape, offset=(0, ...), storage='register', bounds_check=True, "
              "aligned=False): the tile of a at offset; elements outside a read as zero (with bounds_check).",
              ("a", "shape", "offset", "storage", "bounds_check", "aligned"), offset=None, storage="register",
              bounds_check=True, aligned=False)
_tile_builtin("tile_store", "tile_store(a, t, offset=(0, ...), bounds_check=True, aligned=False): writes tile t "
              "into a at offset; elements outside a are not written (with bounds_check).",
              ("a", "t", "offset", "bounds_check", "aligned"), offset=None, bounds_check=True, aligned=False)
_tile_builtin("tile_atomic_add", "tile_atomic_add(a, t, offset=(0, ...), bounds_check=True): atomically adds tile t "
              "into a at offset; returns the tile of the elements' old values.",
              ("a", "t", "offset", "bounds_check"), offset=None, bounds_check=True)
_tile_builtin("tile", "tile(x, preserve_type=False): a tile of each thread's x (a scalar, vector or matrix), its "
              "last extent the block's threads (1 on the CPU). As a type, tile[dtype, M, N] annotates @func parameters "
              "(tile[dtype]: any shape).", ("x", "preserve_type"), preserve_type=False, subscript=T.tile_annotation)
_tile_builtin("untile", "untile(a): each thread's value of a tile whose last extent is the block's threads.",
              ("a",))
_tile_builtin("tile_extract", "tile_extract(a, i, [j, ...]): the element of tile a at (i, j, ...) (as a[i, j]).",
              ("a", "*indices"))
_tile_builtin("tile_transpose", "tile_transpose(a): the transpose of a 2-d tile.", ("a",))
_tile_builtin("tile_broadcast", "tile_broadcast(a, shape): tile a broadcast to shape (numpy's rules).",
              ("a", "shape"))
_tile_builtin("tile_reshape", "tile_reshape(t, shape): tile t's elements in a new shape (one extent may be -1).",
              ("t", "shape"))
_tile_builtin("tile_squeeze", "tile_squeeze(t, axis=None): tile t without its extents of 1 (those of axis).",
              ("t", "axis"), axis=None)
_tile_builtin("tile_astype", "tile_astype(t, dtype): tile t converted to dtype.", ("t", "dtype"))
_tile_builtin("tile_view", "tile_view(t, offset, shape=None): the sub-tile of t at offset (constants).",
              ("t", "offset", "shape"), shape=None)
_tile_builtin("tile_assign", "tile_assign(dst, src, offset): writes tile src into tile dst at offset (constants).",
              ("dst", "src", "offset"), rebinds=(0,), offset=None)
_tile_builtin("tile_sum", "tile_sum(a, axis=None): the sum of a tile's elements, a tile of shape (1,) (along axis: "
              "the tile without that axis).", ("a", "axis"), axis=None)
_tile_builtin("tile_dot", "tile_dot(a, b): the sum of the products of two tiles' elements, a tile of shape (1,).",
              ("a", "b"))
_tile_builtin("tile_min", "tile_min(a): the smallest element, a tile of shape (1,).", ("a",))
_tile_builtin("tile_max", "tile_max(a): the largest element, a tile of shape (1,).", ("a",))
_tile_builtin("tile_argmin", "tile_argmin(a): the flat index of the smallest element (the first of equals), an int32 "
              "tile of shape (1,).", ("a",), differentiable=False)
_tile_builtin("tile_argmax", "tile_argmax(a): the flat index of the largest element (the first of equals), an int32 "
              "tile of shape (1,).", ("a",), differentiable=False)
_tile_builtin("tile_reduce", "tile_reduce(op, a, axis=None): a tile's elements combined by op (a builtin or @func of "
              "two scalars) in order, a tile of shape (1,) (along axis: the tile without that axis).",
              ("op", "a", "axis"), axis=None)
_tile_builtin("tile_scan_inclusive", "tile_scan_inclusive(a): the running sums of a tile's elements (row-major).",
              ("a",))
_tile_builtin("tile_scan_exclusive", "tile_scan_exclusive(a): the running sums before each element (row-major).",
              ("a",))
_tile_builtin("tile_scan_max_inclusive", "tile_scan_max_inclusive(a): the running maxima of a tile's elements.",
              ("a",))
_tile_builtin("tile_scan_min_inclusive", "tile_scan_min_inclusive(a): the running minima of a tile's elements.",
              ("a",))
_tile_builtin("tile_map", "tile_map(op, a, *args): op (a builtin or @func) applied to each element of tiles of one "
              "shape.", ("op", "a", "*args"))
_tile_builtin("tile_matmul", "tile_matmul(a, b, alpha=None) -> alpha a @ b; tile_matmul(a, b, out, alpha=1, beta=1) "
              "sets out = alpha a @ b + beta out, for (M, K) and (K, N) float tiles.",
              ("a", "b", "out", "alpha", "beta"), rebinds=(2,), out=None, alpha=None, beta=None)
_tile_builtin("tile_diag_add", "tile_diag_add(a, d): square tile a plus the diagonal matrix of the 1-d tile d.",
              ("a", "d"))
_tile_builtin("tile_axpy", "tile_axpy(alpha, src, dest): dest += alpha * src.", ("alpha", "src", "dest"), rebinds=(2,))
