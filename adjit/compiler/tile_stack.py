"""Tile stacks (Warp's tile_stack, tile_stack_push/pop/clear/count) on the CPU.

Their emitters are registered into ``tiles._HANDLERS`` when this module is
imported (by the frontend's calls module, as tile_linalg's). In Warp a
stack lives in a block's shared memory and every thread of the block
pushes or pops at most one element per call. On the CPU a block is one
thread (as in Warp's CPU launches), so a call moves at most one element,
at the top: the stack is last in, first out, which Warp's ordering rules
allow ("values from a later push are popped before values from an earlier
push").

A stack is a value of that thread, as a tile is (``T.TileStackType``): one
``vector<capacity + 1 x element x scalar>``, its elements then the count in
the last one (every component, in the scalar type). Push, pop and clear
rebind the stack's local (``Builtin.rebinds``), so loops and branches carry
it, and a @func writing a stack parameter writes the caller's (the tile
by-reference rule). A push writes its slot by a mask (a select of the whole
vector: the slot is a runtime value); a pop reads it by a mask and a sum.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, vector as vector_d

from .. import types as T
from ..errors import KernelTypeError, KernelValueError
from .tiles import (_broadcast, _convert, _ELEMENT_TYPES, _element_mask, _given, _halving, _handler, _index, _rebind,
                    _add, vector_type)
from .values import Val, constant


def _stack(fb, x, what: str, node) -> Val:
    v = fb.expr(x) if _given(x) else None
    if not (isinstance(v, Val) and isinstance(v.type, T.TileStackType)):
        raise fb.error(f"{what} must be a tile_stack, got {fb.describe(v)}", x if _given(x) else node,
                       KernelTypeError)
    return v


def _count(s: Val) -> ir.Value:
    """The stack's count, an i32."""
    t = s.type
    slot = vector_d.ExtractOp(s.value, [], [t.capacity] + [0] * len(t.elem_shape)).result
    i32 = T.int32.mlir()
    return _convert(slot, t.scalar, T.int32, i32)


def _with_count(t: T.TileStackType, v: ir.Value, count: ir.Value) -> ir.Value:
    """The stack ``v`` with its count set to the i32 ``count``."""
    x = _convert(count, T.int32, t.scalar, t.scalar.mlir())
    if t.composite:
        x = _broadcast(ir.VectorType.get(list(t.elem_shape), t.scalar.mlir()), x)
    return vector_d.InsertOp(x, v, [], [t.capacity]).result


def _i32(n: int) -> ir.Value:
    return arith.ConstantOp(T.int32.mlir(), n).result


@_handler("tile_stack")
def _tile_stack(fb, a, node):
    if not _given(a["dtype"]):
        raise fb.error("tile_stack() missing required keyword argument 'dtype'", node, KernelTypeError)
    if not _given(a["capacity"]):
        raise fb.error("tile_stack() missing required keyword argument 'capacity'", node, KernelTypeError)
    c = fb.expr(a["capacity"])
    if not (isinstance(c, Val) and c.is_literal):
        raise fb.error(f"tile_stack() requires capacity to be a compile-time constant, got {fb.describe(c)}",
                       a["capacity"], KernelValueError)
    from .tiles import _dtype
    dtype = _dtype(fb, a["dtype"], node)
    try:
        t = T.TileStackType(c.literal, dtype)
    except (TypeError, ValueError) as e:
        raise fb.error(str(e), node, KernelValueError) from None
    return Val(t, constant(t, 0))


@_handler("tile_stack_push")
def _tile_stack_push(fb, a, node):
    s = _stack(fb, a["s"], "tile_stack_push()'s s", node)
    t = s.type
    if not _given(a["value"]) or not _given(a["has_value"]):
        raise fb.error("tile_stack_push() takes (s, value, has_value)", node, KernelTypeError)
    v = fb.expr(a["value"])
    if isinstance(v, Val) and v.is_literal and isinstance(v.literal, (bool, int, float)):
        v_type = T.bool_ if type(v.literal) is bool else T.int32 if type(v.literal) is int else T.float32
    else:
        v_type = v.type if isinstance(v, Val) else None
    if v_type != t.dtype or not isinstance(v_type, _ELEMENT_TYPES):
        raise fb.error(f"tile_stack_push() value type {v_type if v_type is not None else fb.describe(v)} does not "
                       f"match stack dtype {t.dtype}", a["value"], KernelTypeError)
    x = fb.materialize(fb.concrete(v), t.dtype)
    has = fb.expr(a["has_value"])
    if not (isinstance(has, Val) and has.type == T.bool_):
        raise fb.error(f"tile_stack_push()'s has_value must be a bool, got {fb.describe(has)}", a["has_value"],
                       KernelTypeError)
    has = fb.materialize(fb.concrete(has), T.bool_)
    count = _count(s)
    ok = arith.AndIOp(has, arith.CmpIOp(arith.CmpIPredicate.slt, count, _i32(t.capacity)).result).result
    slot = arith.SelectOp(ok, count, _i32(-1)).result
    mask = _element_mask(t, arith.IndexCastOp(ir.IndexType.get(), slot).result)
    written = arith.SelectOp(mask, _broadcast(t.mlir(), x), s.value).result
    grown = arith.AddIOp(count, arith.ExtUIOp(T.int32.mlir(), ok).result).result
    _rebind(fb, a["s"], Val(t, _with_count(t, written, grown)), "tile_stack_push()", node)
    return Val(T.int32, slot)


@_handler("tile_stack_pop")
def _tile_stack_pop(fb, a, node):
    s = _stack(fb, a["s"], "tile_stack_pop()'s s", node)
    t = s.type
    count = _count(s)
    has = arith.CmpIOp(arith.CmpIPredicate.sgt, count, _i32(0)).result
    top = arith.SubIOp(count, _i32(1)).result
    slot = arith.SelectOp(has, top, _i32(-1)).result
    mask = _element_mask(t, arith.IndexCastOp(ir.IndexType.get(), slot).result)
    picked = arith.SelectOp(mask, s.value, constant(t, 0)).result  # (the count's slot is never picked)
    if t.composite:
        value = _halving(picked, t.size, t, lambda x, y: _add(t, x, y))
    else:
        value = vector_d.ReductionOp(t.scalar.mlir(), vector_d.CombiningKind.ADD, picked).result
    shrunk = arith.SubIOp(count, arith.ExtUIOp(T.int32.mlir(), has).result).result
    _rebind(fb, a["s"], Val(t, _with_count(t, s.value, shrunk)), "tile_stack_pop()", node)
    return Val(t.dtype, value), Val(T.int32, slot)


@_handler("tile_stack_clear")
def _tile_stack_clear(fb, a, node):
    s = _stack(fb, a["s"], "tile_stack_clear()'s s", node)
    _rebind(fb, a["s"], Val(s.type, _with_count(s.type, s.value, _i32(0))), "tile_stack_clear()", node)
    return None


@_handler("tile_stack_count")
def _tile_stack_count(fb, a, node):
    return Val(T.int32, _count(_stack(fb, a["s"], "tile_stack_count()'s s", node)))

