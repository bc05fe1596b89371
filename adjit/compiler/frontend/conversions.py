"""Kernel values and their types: literals unified, coerced and materialized,
scalar casts, and conditions."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ... import types as T
from ...dialects import adjit as adjit_d
from ..values import StructRef, Val, constant
from .helpers import CMPF_PRED, CMPI_PRED


class Conversions:
    """FunctionBuilder's typing of values."""

    def describe(self, v) -> str:
        if isinstance(v, Val):
            return f"a {v.type} value"
        if isinstance(v, StructRef):
            return f"a {v.type.name} struct"
        if isinstance(v, tuple):
            return f"a tuple of {len(v)} values"
        return repr(v)

    def unify(self, a: Val, b: Val, node):
        """Gives two operands one type: a literal adopts the other's type."""
        if not isinstance(a, Val) or not isinstance(b, Val):
            raise self.error(f"unsupported operands {self.describe(a)} and {self.describe(b)}", node)
        if a.is_literal and not b.is_literal:
            return self.coerce(a, b.type, node), b
        if b.is_literal and not a.is_literal:
            return a, self.coerce(b, a.type, node)
        if a.is_literal and b.is_literal:
            if a.type.is_bool != b.type.is_bool:
                raise self.error(f"operands have different types: {a.type} and {b.type} "
                                 "(convert one explicitly, e.g. int(flag) or bool(n))", node)
            if a.type.is_float or b.type.is_float:
                return self.coerce(a, T.float32, node), self.coerce(b, T.float32, node)
            return a, b
        if a.type != b.type:
            raise self.error(f"operands have different types: {a.type} and {b.type} "
                             "(convert one explicitly, e.g. float(i))", node)
        return a, b

    def coerce(self, v, t, node) -> Val:
        """``v`` as type ``t``: literals convert (int -> float too), values must match."""
        if not isinstance(v, Val):
            raise self.error(f"expected a {t} value, got {self.describe(v)}", node)
        if v.type == t and not v.is_literal:
            return v
        if v.is_literal and isinstance(t, T.ScalarType):
            if isinstance(v.literal, float) and not t.is_float:
                raise self.error(f"cannot use the float literal {v.literal} as {t}", node)
            return Val(t, None, v.literal)
        if v.is_literal and isinstance(t, (T.VectorType, T.MatrixType)):
            raise self.error(f"expected a {t} value, got the literal {v.literal}", node)
        if v.type != t:
            raise self.error(f"expected a {t} value, got {v.type}", node)
        return v

    def materialize(self, v: Val, t) -> ir.Value:
        """The SSA value of ``v`` (literals become constants of type ``t``)."""
        if v.is_literal:
            return self.literal_constant(t, v.literal)
        return v.value

    def concrete(self, v) -> Val:
        if not isinstance(v, Val):
            raise self.error(f"{self.describe(v)} cannot be stored in a local", self.node)
        if v.is_literal:
            return Val(v.type, self.literal_constant(v.type, v.literal))
        return v

    def literal_constant(self, t, value) -> ir.Value:
        """A literal as a constant of type ``t``; integers must fit in ``t``."""
        scalar = T.scalar_of(t)
        if isinstance(scalar, T.ScalarType) and scalar.is_int and not isinstance(value, bool):
            lo, hi = scalar.range
            if not lo <= int(value) <= hi:
                raise self.error(f"the integer literal {value} does not fit in {scalar} "
                                 f"({lo} to {hi})", self.node)
        return constant(t, value)

    def cast(self, v, t: T.ScalarType, node) -> ir.Value:
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType):
            raise self.error(f"cannot convert {self.describe(v)} to {t}", node)
        if v.is_literal:
            value = bool(v.literal) if t.is_bool else int(v.literal) if t.is_int else float(v.literal)
            return self.literal_constant(t, value)
        s = v.type
        x = v.value
        if s == t:
            return x
        if s.is_float and t.is_float:
            if s.bits == t.bits:  # float16 <-> bfloat16: through float32 (exact), rounded once
                x = arith.ExtFOp(T.float32.mlir(), x).result
            return (arith.ExtFOp if t.bits > s.bits else arith.TruncFOp)(t.mlir(), x).result
        if not s.is_float and t.is_float:
            if s.is_bool or s.is_unsigned:
                return arith.UIToFPOp(t.mlir(), x).result
            return arith.SIToFPOp(t.mlir(), x).result
        if s.is_float and not t.is_float:
            if t.is_bool:
                return arith.CmpFOp(CMPF_PRED["une"], x, constant(s, 0)).result
            return (arith.FPToUIOp if t.is_unsigned else arith.FPToSIOp)(t.mlir(), x).result
        if t.is_bool:
            return arith.CmpIOp(CMPI_PRED["ne"], x, constant(s, 0)).result
        if s.is_bool:
            return arith.ExtUIOp(t.mlir(), x).result
        if t.bits == s.bits:
            return x  # int32 <-> uint32: the same bits
        if t.bits > s.bits:  # the source's sign decides the extension
            return (arith.ExtUIOp if s.is_unsigned else arith.ExtSIOp)(t.mlir(), x).result
        return arith.TruncIOp(t.mlir(), x).result

    def condition(self, test) -> ir.Value:
        return self.to_bool(self.expr(test), test)

    def to_bool(self, v, node) -> ir.Value:
        if isinstance(v, Val) and isinstance(v.type, T.ArrayType):
            return self.array_is_set(v)
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType):
            raise self.error(f"a condition must be a scalar or an array, got {self.describe(v)}", node)
        return self.cast(v, T.bool_, node)

    def array_is_set(self, a: Val) -> ir.Value:
        """An array as a condition (``if arr:``, ``not arr``): true unless it
        is Warp's null array, which a launch passes for None (adjit passes an
        empty array), i.e. unless an extent is 0. (A Warp array with no
        elements has a null pointer too, so it is false in Warp as well.)"""
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        result = None
        for k in range(a.type.ndim):
            dim = adjit_d.DimOp(ir.IndexType.get(), a.value, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k))
            c = arith.CmpIOp(arith.CmpIPredicate.ne, dim.result, zero).result
            result = c if result is None else arith.AndIOp(result, c).result
        return result
