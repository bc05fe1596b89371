"""Fixed-size local arrays: ``a = zeros(shape, dtype)`` in a kernel.

A local array is a value (T.LocalArrayType): one SSA ``vector<N x scalar>``
holding the elements flattened row-major, rebound on every write as a
vector's component writes are. A constant index reads and writes with
``adjit.extract`` / ``adjit.insert``; a runtime index compares a constant
iota with the flat index (one ``arith.cmpi`` on the whole vector) and

* reads:  ``vector.reduction <add>`` (``<or>`` for bools) of
  ``select(mask, a, 0)``: exact, as every other lane is zero;
* writes: ``select(mask, broadcast(x), a)``,

so the gradients come from the existing select / reduction / broadcast
rules (vector.extract and vector.insert have no rule for dynamic
positions), and loops and branches carry the array like any vector. Each
access costs O(N) lanes; N is capped at T.MAX_LOCAL_ARRAY_SCALARS.

A runtime index out of range is reported by ``adjit.check_index`` when
bounds checks are on; without them it matches no element (the flat index is
made -1 when any index is outside its extent): a read gives 0 and a write is
dropped. It never touches memory, nor another element.
"""
from __future__ import annotations

import ast
import math

import numpy as np
from mlir import ir
from mlir.dialects import arith, vector as vector_d

from .. import types as T
from ..dialects import adjit as adjit_d
from .values import Val, to_index

def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def is_local_array(v) -> bool:
    return isinstance(v, Val) and isinstance(v.type, T.LocalArrayType)


def make_zeros(fb, node) -> Val:
    """``zeros(shape, dtype)`` / ``zeros(shape=..., dtype=...)``: the shape an
    int or a tuple of ints (constants), dtype a scalar, vector or matrix type."""
    if any(k.arg is None for k in node.keywords):
        raise fb.error("zeros() does not take **keyword arguments", node)
    bound = dict(zip(("shape", "dtype"), node.args))
    if len(node.args) > 2:
        raise fb.error(f"zeros() takes shape and dtype, got {len(node.args)} positional arguments", node)
    for kw in node.keywords:
        if kw.arg not in ("shape", "dtype") or kw.arg in bound:
            raise fb.error(f"zeros() got an unexpected or repeated keyword argument '{kw.arg}' "
                           "(it takes shape and dtype)", kw)
        bound[kw.arg] = kw.value
    if "shape" not in bound:
        raise fb.error("zeros() in a kernel needs a shape (an int or a tuple of ints)", node)
    shape_node = bound["shape"]
    items = shape_node.elts if isinstance(shape_node, ast.Tuple) else [shape_node]
    shape = []
    for item in items:
        v = fb.expr(item)
        if not (isinstance(v, Val) and v.is_literal and isinstance(v.literal, int)
                and not isinstance(v.literal, bool)):
            raise fb.error("the shape of zeros() in a kernel must be constant integers (a fixed-size "
                           f"local array), got {ast.unparse(item)}", item)
        if v.literal < 1:
            raise fb.error(f"zeros() extents must be positive, got {v.literal}", item)
        shape.append(v.literal)
    if not shape:
        raise fb.error("zeros() needs at least one extent", shape_node)
    dtype = T.float32
    if "dtype" in bound:
        d = bound["dtype"]
        resolved = fb.resolve_static(d) if fb.is_static(d) else None
        try:
            dtype = T.value_type_of(resolved)
        except (TypeError, AttributeError):
            raise fb.error(f"the dtype of zeros() in a kernel must be a scalar, vector or matrix type, got "
                           f"{ast.unparse(d)}", d) from None
    t = T.LocalArrayType(tuple(shape), dtype)
    if t.size > T.MAX_LOCAL_ARRAY_SCALARS:
        raise fb.error(f"{t} holds {t.size} scalars; a local array holds at most "
                       f"{T.MAX_LOCAL_ARRAY_SCALARS} (use an array argument for more)", node)
    zero = _splat_zero(t)
    return Val(t, zero)


def _zero_attr(scalar: T.ScalarType):
    if scalar.is_float:
        return ir.FloatAttr.get(scalar.mlir(), 0.0)
    return ir.IntegerAttr.get(scalar.mlir(), 0)


def _splat_zero(t: T.LocalArrayType) -> ir.Value:
    return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get_splat(t.mlir(), _zero_attr(t.scalar))).result


def element_index(fb, arr: Val, node):
    """The flat element index of ``a[i]`` / ``a[i, j]``: an int when every
    index is constant, else an i64 SSA value (-1 when out of range)."""
    t = arr.type
    sl = node.slice
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    if len(items) != t.ndim:
        raise fb.error(f"a {t.ndim}-d local array ({t}) needs {t.ndim} "
                       f"ind{'ex' if t.ndim == 1 else 'ices'}, got {len(items)}", node)
    indices = []
    for item, extent in zip(items, t.shape):
        v = fb.expr(item)
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int \
                or v.type.is_bool:
            raise fb.error(f"local array indices must be integers, got {fb.describe(v)}", item)
        if v.is_literal:
            if not 0 <= v.literal < extent:
                raise fb.error(f"index {v.literal} is out of range for {t} (extent {extent})", item)
            indices.append(v.literal)
        else:
            indices.append(v)
    strides = [math.prod(t.shape[d + 1:]) for d in range(t.ndim)]
    if all(isinstance(i, int) for i in indices):
        return sum(i * s for i, s in zip(indices, strides))
    what = f"{ast.unparse(node.value)} ({t})"
    i64 = _i64()
    flat = arith.ConstantOp(i64, sum(i * s for i, s in zip(indices, strides) if isinstance(i, int))).result
    valid = None
    for i, s, extent in zip(indices, strides, t.shape):
        if isinstance(i, int):
            continue
        adjit_d.CheckIndexOp(to_index(i.value, i.type), arith.ConstantOp(ir.IndexType.get(), extent).result, what)
        wide = _to_i64(i)
        # Unsigned compare: a negative index is out of range too.
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, wide, arith.ConstantOp(i64, extent).result).result
        valid = inside if valid is None else arith.AndIOp(valid, inside).result
        term = arith.MulIOp(wide, arith.ConstantOp(i64, s).result).result if s != 1 else wide
        flat = arith.AddIOp(flat, term).result
    return arith.SelectOp(valid, flat, arith.ConstantOp(i64, -1).result).result


def _to_i64(v: Val) -> ir.Value:
    bits = v.type.bits
    if bits == 64:
        return v.value
    cast = arith.ExtUIOp if v.type.is_unsigned else arith.ExtSIOp
    return cast(_i64(), v.value).result


def _lane_mask(t: T.LocalArrayType, flat: ir.Value, component: int) -> ir.Value:
    """i1 vector: true at lane ``flat * width + component`` (none for flat = -1)."""
    i64 = _i64()
    lanes = ir.VectorType.get([t.size], i64)
    iota = arith.ConstantOp(lanes, ir.DenseElementsAttr.get(
        np.arange(t.size, dtype=np.int64), type=lanes)).result
    lane = flat
    if t.width != 1:
        lane = arith.MulIOp(flat, arith.ConstantOp(i64, t.width).result).result
    if component:
        lane = arith.AddIOp(lane, arith.ConstantOp(i64, component).result).result
    # flat = -1 gives a negative lane for every component: no lane matches.
    return arith.CmpIOp(arith.CmpIPredicate.eq, iota, vector_d.BroadcastOp(lanes, lane).result).result


def _component_positions(dtype) -> list[list[int]]:
    """The positions of an element's components, in flattening order."""
    if isinstance(dtype, T.MatrixType):
        return [[r, c] for r in range(dtype.rows) for c in range(dtype.cols)]
    if isinstance(dtype, T.VectorType):
        return [[k] for k in range(dtype.length)]
    return [[]]


def read(fb, arr: Val, node) -> Val:
    """``a[i]`` / ``a[i, j]``: the element (a vector or matrix element rebuilt
    from its components)."""
    t = arr.type
    flat = element_index(fb, arr, node)
    scalar = t.scalar
    comps = []
    for c in range(t.width):
        if isinstance(flat, int):
            comps.append(adjit_d.ExtractOp(scalar.mlir(), arr.value,
                                           ir.DenseI64ArrayAttr.get([flat * t.width + c])).result)
            continue
        picked = arith.SelectOp(_lane_mask(t, flat, c), arr.value, _splat_zero(t)).result
        kind = vector_d.CombiningKind.OR if scalar.is_bool else vector_d.CombiningKind.ADD
        comps.append(vector_d.ReductionOp(scalar.mlir(), kind, picked).result)
    if t.width == 1:
        return Val(t.dtype, comps[0])
    return Val(t.dtype, vector_d.FromElementsOp(t.dtype.mlir(), comps).result)


def write(fb, arr: Val, node, value: Val) -> Val:
    """``a[i] = value`` (``value`` already of the element type): the new array."""
    t = arr.type
    flat = element_index(fb, arr, node)
    new = arr.value
    for c, position in enumerate(_component_positions(t.dtype)):
        comp = value.value if not position else adjit_d.ExtractOp(
            t.scalar.mlir(), value.value, ir.DenseI64ArrayAttr.get(position)).result
        if isinstance(flat, int):
            new = adjit_d.InsertOp(t.mlir(), comp, new, ir.DenseI64ArrayAttr.get([flat * t.width + c])).result
        else:
            new = arith.SelectOp(_lane_mask(t, flat, c), vector_d.BroadcastOp(t.mlir(), comp).result, new).result
    return Val(t, new)
