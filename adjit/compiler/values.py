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


def literal(py_value) -> Val:
    """A weakly typed literal: bool, int32 or float32 unless a use says otherwise."""
    if isinstance(py_value, bool):
        return Val(T.bool_, None, py_value)
    if isinstance(py_value, int):
        return Val(T.int32, None, py_value)
    return Val(T.float32, None, float(py_value))


def constant(t: T.Type, py_value) -> ir.Value:
    """An arith.constant of kernel type ``t`` (a vector/matrix is splatted)."""
    if isinstance(t, T.ScalarType):
        if t.is_float:
            attr = ir.FloatAttr.get(t.mlir(), float(py_value))
        else:
            attr = ir.IntegerAttr.get(t.mlir(), int(py_value))
        return arith.ConstantOp(t.mlir(), attr).result
    scalar = t.dtype
    if scalar.is_float:
        elem = ir.FloatAttr.get(scalar.mlir(), float(py_value))
    else:
        elem = ir.IntegerAttr.get(scalar.mlir(), int(py_value))
    return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get_splat(t.mlir(), elem)).result


def constant_array(t: T.VectorType | T.MatrixType, value) -> ir.Value:
    """An arith.constant of vector/matrix type ``t`` holding the numpy array ``value``."""
    data = np.ascontiguousarray(value, dtype=t.dtype.np_dtype).reshape(t.shape)
    return arith.ConstantOp(t.mlir(), ir.DenseElementsAttr.get(data, type=t.mlir())).result


def splat(t: T.VectorType | T.MatrixType, scalar: ir.Value) -> ir.Value:
    """Broadcasts a scalar SSA value to vector/matrix type ``t``."""
    return vector_d.BroadcastOp(t.mlir(), scalar).result


def to_index(v: ir.Value) -> ir.Value:
    """Casts an integer SSA value to ``index``."""
    return arith.IndexCastOp(ir.IndexType.get(), v).result


def from_index(v: ir.Value, t: T.ScalarType = T.int32) -> ir.Value:
    """Casts an ``index`` SSA value to an integer kernel type."""
    return arith.IndexCastOp(t.mlir(), v).result


def integer_divide(op_class, t: T.Type, x: ir.Value, y: ir.Value) -> ir.Value:
    """``op_class(x, y)`` (arith.divsi, floordivsi or remsi) for integers of
    kernel type ``t`` (a scalar or an integer vector), defined everywhere so
    that no input traps: a zero divisor gives 0, and the one overflowing
    quotient, INT_MIN / -1, gives INT_MIN (its remainder 0), as two's
    complement wraps."""
    scalar = t if isinstance(t, T.ScalarType) else t.dtype
    int_min = -(1 << (scalar.bits - 1))
    eq = arith.CmpIPredicate.eq
    by_zero = arith.CmpIOp(eq, y, constant(t, 0)).result
    overflow = arith.AndIOp(arith.CmpIOp(eq, x, constant(t, int_min)).result,
                            arith.CmpIOp(eq, y, constant(t, -1)).result).result
    unsafe = arith.OrIOp(by_zero, overflow).result
    divisor = arith.SelectOp(unsafe, constant(t, 1), y).result
    result = op_class(x, divisor).result
    return arith.SelectOp(by_zero, constant(t, 0), result).result
