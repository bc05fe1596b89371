"""Writes of one element into a tile and gathers along an axis: Warp's
tile_scatter_add, tile_scatter_masked and tile_slice_indexed (``t[indices,
:]``) on the CPU.

Their emitters are registered into ``tiles._HANDLERS`` when this module is
imported (by frontend/calls.py, as tile_linalg.py). (``t[indices, :]`` in
a kernel is tiles.subscript's, which stacks the indexed sub-tiles.)

- tile_scatter_add / tile_scatter_masked: in Warp each thread of the block
  passes its own ``i, ..., value, has_value`` and the threads whose
  has_value holds add (write) their value at their index, then the block
  synchronizes. On the CPU the block is one thread, so a call is one
  thread's write: where ``has_value`` holds, the tile's element at (i, ...)
  gains (is replaced by) ``value``; the tile (a local) is rebound to the
  result. ``atomic`` must be a constant bool, as Warp's; with one thread the
  atomic and plain adds are the same. An index outside the tile where
  has_value holds is reported after the launch as an out-of-range access
  (``adjit.check_index``; Warp asserts in debug builds), and writes nothing.
  Gradients: the value's is the result's at (i, ...) (Warp's adjoint); for
  the masked write the overwritten element's gradient is zero (as Warp's,
  which clears it).
- tile_slice_indexed: out[..., k, ...] = t[..., indices[k], ...] along the
  one axis the index tile is at (the others full ``:``). Negative indices
  wrap once against the axis's extent (numpy's, as Warp's); an index still
  outside is reported as an out-of-range access and reads zero. Duplicate
  indices sum their gradients. Each element is a chain of selects over the
  source positions along the axis.
"""
from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, vector as vector_d

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from .tiles import (_element_mask, _flat, _flat_index, _given, _handler, _index, _rebind, _reshaped, _row_major,
                    _static, _tile, elements, extract, from_elements)
from .values import Val, constant, to_index

_INDEX_NAMES = ("i", "j", "k", "l")


# --- scatter --------------------------------------------------------------------------------------

def _scatter_args(fb, a, tile_t: T.TileType, what: str, tail: tuple, node) -> dict:
    """The call's arguments by name: after the tile, one index per dimension
    (i, j, k, l), then ``tail`` (value, has_value[, atomic]), positionally
    or by keyword."""
    order = _INDEX_NAMES[:tile_t.ndim] + tail
    positional = a["args"]
    if len(positional) > len(order):
        raise fb.error(f"{what} takes at most {1 + len(order)} arguments for a {tile_t.ndim}-d tile (a, "
                       f"{', '.join(order)}), got {1 + len(positional)}", node)
    out = dict(zip(order, positional))
    for name in _INDEX_NAMES + tail:
        if not _given(a[name]):
            continue
        if name not in order:
            raise fb.error(f"{what}: incorrect number of indices for a tile of shape {tile_t.shape} (it takes "
                           f"{', '.join(order[:tile_t.ndim])})", a[name], KernelTypeError)
        if name in out:
            raise fb.error(f"{what} got multiple values for argument '{name}'", a[name])
        out[name] = a[name]
    for name in order:
        if name not in out:
            if name == "atomic":
                out[name] = a[name]  # the default, True
                continue
            raise fb.error(f"{what} needs the argument '{name}' (a {tile_t.ndim}-d tile takes "
                           f"{', '.join(order)})", node)
    return out


def _int_scalar(fb, x, what: str) -> Val:
    v = fb.expr(x)
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool):
        raise fb.error(f"{what} must be an integer, got {fb.describe(v)}", x, KernelTypeError)
    return v


def _bool_scalar(fb, x, what: str) -> ir.Value:
    v = fb.expr(x)
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_bool):
        raise fb.error(f"{what} must be a bool, got {fb.describe(v)}", x, KernelTypeError)
    return fb.materialize(v, v.type)


def _scatter(fb, a, node, name: str, add: bool):
    what = f"{name}()"
    tile = _tile(fb, a["a"], f"{what}'s tile a", node)
    t = tile.type
    if t.ndim > 4:
        raise fb.error(f"{what} takes tiles of 1 to 4 dimensions, got a {t}", node, KernelTypeError)
    args = _scatter_args(fb, a, t, what, ("value", "has_value", "atomic") if add else ("value", "has_value"), node)
    if add:
        _static(fb, args["atomic"], bool, f"{what}'s atomic")
    idx = [_int_scalar(fb, args[n], f"{what}'s index {n}") for n in _INDEX_NAMES[:t.ndim]]
    v = fb.expr(args["value"])
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType)):
        raise fb.error(f"{what}'s value must be a scalar of the tile's dtype {t.dtype}, got {fb.describe(v)}",
                       args["value"], KernelTypeError)
    if not v.is_literal and v.type != t.dtype:
        raise fb.error(f"{what}'s value must match the tile's dtype: {v.type} into a tile of {t.dtype}",
                       args["value"], KernelTypeError)
    x = fb.materialize(fb.coerce(v, t.dtype, args["value"]), t.dtype)
    has = _bool_scalar(fb, args["has_value"], f"{what}'s has_value")
    # The index is checked where the thread writes (has_value), as Warp's assert.
    for n, (k, iv) in zip(_INDEX_NAMES, enumerate(idx)):
        i = to_index(fb.materialize(iv, iv.type), iv.type)
        adjit_d.CheckIndexOp(arith.SelectOp(has, i, _index(0)).result, _index(t.shape[k]),
                             f"{what}'s index {n} into a tile of shape {t.shape}")
    mask = _element_mask(t, _flat_index(fb, t, idx, node))
    mask = arith.AndIOp(mask, vector_d.BroadcastOp(mask.type, has).result).result
    flat_t = ir.VectorType.get([t.size], t.dtype.mlir())
    old = _flat(tile.value, t)
    spread = vector_d.BroadcastOp(flat_t, x).result
    if add:
        added = arith.SelectOp(mask, spread, constant(T.TileType((t.size,), t.dtype), 0)).result
        new = (arith.AddFOp if t.dtype.is_float else arith.AddIOp)(old, added).result
    else:
        new = arith.SelectOp(mask, spread, old).result
    _rebind(fb, a["a"], Val(t, _reshaped(new, T.TileType((t.size,), t.dtype), t.shape)), what, node)
    return None


@_handler("tile_scatter_add")
def _tile_scatter_add(fb, a, node):
    return _scatter(fb, a, node, "tile_scatter_add", add=True)


@_handler("tile_scatter_masked")
def _tile_scatter_masked(fb, a, node):
    return _scatter(fb, a, node, "tile_scatter_masked", add=False)


# --- gather along an axis -------------------------------------------------------------------------

def _full_slice(item: ast.AST, extent: int) -> bool:
    """Whether a subscript item is ``:`` (or ``0:extent``, ``::1``) over the whole axis."""
    if not isinstance(item, ast.Slice):
        return False

    def const(x, default):
        if x is None:
            return default
        return x.value if isinstance(x, ast.Constant) and type(x.value) is int else None
    return const(item.lower, 0) == 0 and const(item.upper, extent) == extent and const(item.step, 1) == 1


def gather(fb, tile: Val, indices: Val, axis: int, node) -> Val:
    """out[..., k, ...] = tile[..., indices[k], ...] along ``axis``."""
    t, it = tile.type, indices.type
    if it.ndim != 1 or not it.dtype.is_int or it.dtype.is_bool:
        raise fb.error(f"tile_slice_indexed()'s indices must be a 1-d tile of integers, got a {it}", node,
                       KernelTypeError)
    n = t.shape[axis]
    out_shape = tuple(it.size if d == axis else e for d, e in enumerate(t.shape))
    out_t = T.TileType(out_shape, t.dtype, "register")
    ityp = it.dtype.mlir()
    zero_i, n_i = arith.ConstantOp(ityp, 0).result, arith.ConstantOp(ityp, n).result
    eq = []
    for k, raw in enumerate(elements(indices.value, it)):
        if it.dtype.is_unsigned:
            idx = raw
        else:  # negative indices wrap once, as numpy's and Warp's
            negative = arith.CmpIOp(arith.CmpIPredicate.slt, raw, zero_i).result
            idx = arith.SelectOp(negative, arith.AddIOp(raw, n_i).result, raw).result
        adjit_d.CheckIndexOp(to_index(idx, it.dtype), _index(n),
                             f"tile_slice_indexed()'s index {k} into axis {axis} of a tile of shape {t.shape}")
        eq.append([arith.CmpIOp(arith.CmpIPredicate.eq, idx, arith.ConstantOp(ityp, r).result).result
                   for r in range(n)])
    src = elements(tile.value, t)
    strides = [1] * t.ndim
    for d in range(t.ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * t.shape[d + 1]
    zero = constant(t.dtype, 0)
    out = []
    for pos in _row_major(out_shape):
        k = pos[axis]
        base = sum(p * s for d, (p, s) in enumerate(zip(pos, strides)) if d != axis)
        x = zero
        for r in range(n - 1, -1, -1):
            x = arith.SelectOp(eq[k][r], src[base + r * strides[axis]], x).result
        out.append(x)
    return Val(out_t, from_elements(out_t, out))


def _indexed_items(fb, tile: Val, items, node):
    """(axis, index tile Val) from subscript items (ast nodes or Vals): one
    1-d index tile, every other item a full slice; missing trailing axes are
    full."""
    t = tile.type
    if len(items) > t.ndim:
        raise fb.error(f"tile indexing with {len(items)} indices into a {t.ndim}-d tile", node, KernelTypeError)
    axis, index = None, None
    for d, item in enumerate(items):
        if isinstance(item, ast.Slice):
            if not _full_slice(item, t.shape[d]):
                raise fb.error("tile indexing with an index tile takes ':' on every other axis (as t[indices, :])",
                               item, KernelTypeError)
            continue
        v = item if isinstance(item, Val) else fb.expr(item)
        if not (isinstance(v, Val) and isinstance(v.type, T.TileType)):
            raise fb.error(f"tile indexing with an index tile takes ':' on every other axis (as t[indices, :]), "
                           f"got {fb.describe(v)}", item if isinstance(item, ast.AST) else node, KernelTypeError)
        if axis is not None:
            raise fb.error("tile indexing takes exactly one 1-d index tile", node, KernelTypeError)
        axis, index = d, v
    if axis is None:
        raise fb.error("tile_slice_indexed() needs a 1-d integer index tile", node, KernelTypeError)
    return axis, index


@_handler("tile_slice_indexed")
def _tile_slice_indexed(fb, a, node):
    tile = _tile(fb, a["t"], "tile_slice_indexed()'s t", node)
    x = a["indices"]
    if not _given(x):
        raise fb.error("tile_slice_indexed() needs the argument 'indices'", node)
    items = x.elts if isinstance(x, ast.Tuple) else [x]
    axis, index = _indexed_items(fb, tile, items, node)
    return gather(fb, tile, index, axis, node)
