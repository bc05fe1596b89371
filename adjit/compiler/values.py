"""Typed SSA values as the frontend sees them, and the IR helpers on them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, vector as vector_d

from .. import types as T


@dataclass
class Val:
    """A kernel-language value: an MLIR SSA value and its kernel type.

    A Python literal (``2.0``) is weakly typed: ``literal`` holds it and
    ``value`` is None until it is materialized at the type its use demands,
    so ``x * 2.0`` works for float32 and float64 ``x`` alike.
    """

    type: T.Type
    value: ir.Value | None = None
    literal: object = None

    @property
    def is_literal(self) -> bool:
        return self.value is None and self.literal is not None


@dataclass(frozen=True)
class StructRef:
    """A struct value in a kernel: its fields live in the frontend's
    environment under ``prefix.field`` (a Val each, a StructRef for a nested
    struct), so control flow carries them as it carries any local."""

    type: T.StructType
    prefix: str

    def field_name(self, field: str) -> str:
        return f"{self.prefix}.{field}"


def literal(py_value) -> Val:
    """A weakly typed literal: bool, int32 or float32 unless a use says otherwise."""
    if isinstance(py_value, bool):
        return Val(T.bool_, None, py_value)
    if isinstance(py_value, int):
        return Val(T.int32, None, py_value)
    return Val(T.float32, None, float(py_value))


def two_complement(scalar: T.ScalarType, value: int) -> int:
    """``value`` wrapped to ``scalar``'s width, as the signed number with its
    bits (MLIR's integer attributes are signless: 255 as an i8 is -1)."""
    if scalar.is_bool:
        return int(value)
    bits = scalar.bits
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def constant(t: T.Type, py_value) -> ir.Value:
    """An arith.constant of kernel type ``t`` (a vector/matrix is splatted)."""
    if isinstance(t, T.ScalarType):
        if t.is_float:
            attr = ir.FloatAttr.get(t.mlir(), float(py_value))
        else:
            attr = ir.IntegerAttr.get(t.mlir(), two_complement(t, int(py_value)))
        return arith.ConstantOp(t.mlir(), attr).result
    scalar = T.scalar_of(t.dtype)  # (a tile's dtype may be a vector or matrix type)
    if scalar.is_float:
        elem = ir.FloatAttr.get(scalar.mlir(), float(py_value))
    else:
        elem = ir.IntegerAttr.get(scalar.mlir(), two_complement(scalar, int(py_value)))
    return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get_splat(t.mlir(), elem)).result


def constant_array(t: T.VectorType | T.MatrixType, value) -> ir.Value:
    """An arith.constant of vector/matrix type ``t`` holding the numpy array ``value``."""
    data = np.ascontiguousarray(t.dtype.host(value)).reshape(t.shape)
    if isinstance(t.dtype, T.BFloat16Type):
        data = data.view(np.uint16)  # the bindings take bfloat16 as its bits
    if t.dtype.is_bool:  # i1 elements: one attribute per component
        elems = [ir.IntegerAttr.get(t.dtype.mlir(), int(bool(b))) for b in data.reshape(-1)]
        return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get(elems, type=t.mlir())).result
    return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get(data, type=t.mlir())).result


def stored_as_bytes(t) -> bool:
    """Whether values of ``t`` are bytes in memory (bools and bool vectors:
    memory holds nothing narrower than a byte)."""
    return T.scalar_of(t) == T.bool_


def storage_type(t) -> ir.Type:
    """The MLIR type of a ``t`` in memory (an array element): bools as i8."""
    if not stored_as_bytes(t):
        return t.mlir()
    i8 = ir.IntegerType.get_signless(8)
    return ir.VectorType.get(list(t.shape), i8) if isinstance(t, (T.VectorType, T.MatrixType)) else i8


def from_storage(t, stored: ir.Value) -> ir.Value:
    """A value of ``t`` from its memory form (a byte is true when nonzero)."""
    if not stored_as_bytes(t):
        return stored
    zero = arith.ConstantOp(stored.type, ir.DenseElementsAttr.get_splat(
        stored.type, ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 0))
        if isinstance(t, (T.VectorType, T.MatrixType)) else ir.IntegerAttr.get(stored.type, 0)).result
    return arith.CmpIOp(arith.CmpIPredicate.ne, stored, zero).result


def to_storage(t, value: ir.Value) -> ir.Value:
    """A value of ``t`` in its memory form (bools as bytes 0 or 1)."""
    return arith.ExtUIOp(storage_type(t), value).result if stored_as_bytes(t) else value


def splat(t: T.VectorType | T.MatrixType, scalar: ir.Value) -> ir.Value:
    """Broadcasts a scalar SSA value to vector/matrix type ``t``."""
    return vector_d.BroadcastOp(t.mlir(), scalar).result


def to_index(v: ir.Value, t: T.ScalarType = T.int32) -> ir.Value:
    """Casts an integer SSA value of kernel type ``t`` to ``index`` (an
    unsigned one zero-extended)."""
    cast = arith.IndexCastUIOp if t.is_unsigned else arith.IndexCastOp
    return cast(ir.IndexType.get(), v).result


def from_index(v: ir.Value, t: T.ScalarType = T.int32) -> ir.Value:
    """Casts an ``index`` SSA value to an integer kernel type."""
    cast = arith.IndexCastUIOp if t.is_unsigned else arith.IndexCastOp
    return cast(t.mlir(), v).result


#: The unsigned op of each signed integer division.
_UNSIGNED_DIVISION = {arith.DivSIOp: arith.DivUIOp, arith.FloorDivSIOp: arith.DivUIOp,
                      arith.RemSIOp: arith.RemUIOp}


def integer_divide(op_class, t: T.Type, x: ir.Value, y: ir.Value) -> ir.Value:
    """``op_class(x, y)`` (arith.divsi, floordivsi or remsi; for unsigned
    types divui or remui) for integers of kernel type ``t`` (a scalar or an
    integer vector), defined everywhere so that no input traps: a zero
    divisor gives 0, and the one overflowing quotient, INT_MIN / -1, gives
    INT_MIN (its remainder 0), as two's complement wraps."""
    scalar = t if isinstance(t, T.ScalarType) else t.dtype
    eq = arith.CmpIPredicate.eq
    by_zero = arith.CmpIOp(eq, y, constant(t, 0)).result
    if scalar.is_unsigned:
        result = _UNSIGNED_DIVISION[op_class](x, arith.SelectOp(by_zero, constant(t, 1), y).result).result
        return arith.SelectOp(by_zero, constant(t, 0), result).result
    int_min = -(1 << (scalar.bits - 1))
    overflow = arith.AndIOp(arith.CmpIOp(eq, x, constant(t, int_min)).result,
                            arith.CmpIOp(eq, y, constant(t, -1)).result).result
    unsafe = arith.OrIOp(by_zero, overflow).result
    divisor = arith.SelectOp(unsafe, constant(t, 1), y).result
    result = op_class(x, divisor).result
    return arith.SelectOp(by_zero, constant(t, 0), result).result
