"""Operators on kernel values: unary, binary and comparisons, with literal folding,
broadcasting, and user operator @funcs (``add``, ``mul``, ... as in Warp)."""
from __future__ import annotations

import ast
import math

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as math_d

from ... import language
from ... import types as T
from ... import builtins as B
from ...errors import KernelSyntaxError, KernelTypeError
from ...source import OPERATOR_FUNCS as _OPERATOR_FUNCS
from .. import tiles
from ..values import Val, constant, integer_divide, literal, splat
from .helpers import CMPF_PRED, CMPI_PRED, all_components


#: Bitwise operators (integers; & | ^ also bools).
_BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)

#: Integer division ops: defined for every input (values.integer_divide).
_INTEGER_DIVISIONS = {ast.Div: arith.DivSIOp, ast.FloorDiv: arith.FloorDivSIOp, ast.Mod: arith.RemSIOp}

#: Comparison operators -> predicate names (CMPF_PRED, CMPI_PRED).
_CMP_F = {ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt", ast.GtE: "oge", ast.Eq: "oeq", ast.NotEq: "une"}
_CMP_I = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}
_CMPI_PREDICATE_ULT = int(arith.CmpIPredicate.ult)


class Operators:
    """FunctionBuilder's operators."""

    def expr_BinOp(self, node):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        return self.unaryop(node.op, self.expr(node.operand), node)

    def unaryop(self, op, v, node):
        operand = getattr(node, "operand", node)
        if not isinstance(v, Val):
            raise self.error(f"unsupported operand {self.describe(v)}", node)
        if isinstance(op, ast.USub):
            if v.is_literal:
                return Val(v.type, None, -v.literal)
            return self.negate(v)
        if isinstance(op, ast.UAdd):
            return v
        if isinstance(op, ast.Not):
            c = self.to_bool(v, operand)
            return Val(T.bool_, arith.XOrIOp(c, constant(T.bool_, 1)).result)
        if isinstance(op, ast.Invert):
            if type(v.type) in (T.VectorType, T.MatrixType) and v.type.dtype.is_int:  # component-wise, as Warp's
                return Val(v.type, arith.XOrIOp(self.materialize(v, v.type), constant(v.type, -1)).result)
            if not isinstance(v.type, T.ScalarType) or not v.type.is_int or v.type.is_bool:
                raise self.error(f"~ needs an integer operand, got {self.describe(v)} (use `not` for bools)",
                                 node, KernelTypeError)
            if v.is_literal:
                return Val(v.type, None, ~v.literal)
            return Val(v.type, arith.XOrIOp(v.value, constant(v.type, -1)).result)
        raise self.error("unsupported unary operator", node, KernelSyntaxError)

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                c = self.null_check(left, op, right_node, node)
                result = c if result is None else arith.AndIOp(result, c).result
                left = Val(T.bool_, c)
                continue
            right = self.expr(right_node)
            a, b = self.unify(left, right, node)
            if isinstance(a.type, (T.VectorType, T.MatrixType)) and isinstance(op, (ast.Eq, ast.NotEq)) \
                    and a.type == b.type:
                c = self.components_equal(a, b, isinstance(op, ast.NotEq))
                result = c if result is None else arith.AndIOp(result, c).result
                left = right
                continue
            if not isinstance(a.type, T.ScalarType):
                raise self.error(f"cannot compare {a.type} values" + (
                    " (vectors and matrices take == and != only)" if isinstance(a.type, (T.VectorType, T.MatrixType))
                    else ""), node)
            av, bv = self.materialize(a, a.type), self.materialize(b, b.type)
            kind = type(op)
            if kind not in _CMP_F:
                raise self.error("unsupported comparison", node, KernelSyntaxError)
            if a.type.is_float:
                c = arith.CmpFOp(CMPF_PRED[_CMP_F[kind]], av, bv).result
            else:
                predicate = _CMP_I[kind]
                if a.type.is_unsigned:
                    predicate = predicate.replace("s", "u", 1) if predicate[0] == "s" else predicate
                c = arith.CmpIOp(CMPI_PRED[predicate], av, bv).result
            result = c if result is None else arith.AndIOp(result, c).result
            left = right
        return Val(T.bool_, result)

    def components_equal(self, a: Val, b: Val, negate: bool) -> ir.Value:
        """a == b for vectors and matrices: every component equal (a NaN
        component is unequal); a != b is its negation."""
        t = a.type
        av, bv = self.materialize(a, t), self.materialize(b, t)
        if t.dtype.is_float:
            same = arith.CmpFOp(arith.CmpFPredicate.OEQ, av, bv).result
        else:
            same = arith.CmpIOp(arith.CmpIPredicate.eq, av, bv).result
        equal = all_components(same, t)
        if negate:
            true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
            return arith.XOrIOp(equal, true).result
        return equal

    def null_check(self, left, op, right_node, node) -> ir.Value:
        """``arr is None`` / ``arr is not None``: whether a launch passed None
        for the array (see array_is_set: an empty array is taken for None, as
        Warp's null array). The only ``is`` comparison kernels take."""
        if not (isinstance(right_node, ast.Constant) and right_node.value is None and isinstance(left, Val)
                and isinstance(left.type, T.ArrayType)):
            raise self.error("`is` / `is not` compare an array with None in kernels (`arr is None`); use == for "
                             "values", node, KernelSyntaxError)
        is_set = self.array_is_set(left)
        if isinstance(op, ast.IsNot):
            return is_set
        return arith.XOrIOp(is_set, constant(T.bool_, 1)).result

    def user_operator(self, op, a, b, node):
        """``a + b`` (- * / // % & | ^ << >>) where no builtin rule takes the
        operands: a user ``@func`` named ``add`` (``sub``, ``mul``, ...) in
        the kernel's scope, as Warp's operator overloads; else None."""
        name = _OPERATOR_FUNCS.get(type(op))
        try:
            fn = self.scope.lookup(name) if name else None
        except KeyError:
            return None
        if not isinstance(fn, language.Function):
            return None
        return self.call_function(fn, [a, b], node)

    def binop(self, op, a, b, node):
        if not isinstance(a, Val) or not isinstance(b, Val):
            user = self.user_operator(op, a, b, node)
            if user is not None:
                return user
            raise self.error(f"unsupported operands {self.describe(a)} and {self.describe(b)}", node)
        if isinstance(a.type, T.TileType) or isinstance(b.type, T.TileType):
            return tiles.binop(self, op, a, b, node)
        if isinstance(a.type, (T.ArrayType, T.LocalArrayType)) or isinstance(b.type, (T.ArrayType, T.LocalArrayType)):
            raise self.error(f"unsupported operand types for {self.op_name(op)}: {a.type} and {b.type} "
                             "(index arrays to get their elements)", node)
        if isinstance(op, ast.MatMult):
            # As Warp's: @ is mul, for matrix products (mat @ mat, mat @ vec, vec @ mat).
            if not (isinstance(a.type, T.MatrixType) or isinstance(b.type, T.MatrixType)):
                raise self.error(f"@ multiplies matrices (mat @ mat, mat @ vec, vec @ mat), got {a.type} and "
                                 f"{b.type}", node, KernelTypeError)
            op = ast.Mult()
        if a.is_literal and b.is_literal:
            return literal(self.fold(op, a.literal, b.literal, node))
        for v in (a, b):
            if isinstance(v.type, (T.VectorType, T.MatrixType)) and v.type.dtype.is_bool:
                kind = "vectors" if isinstance(v.type, T.VectorType) else "matrices"
                raise self.error(f"arithmetic on bool {kind} is not supported ({self.op_name(op)}); compare "
                                 "them with == / !=, or read their components", node, KernelTypeError)
        ta, tb = a.type, b.type
        scalar_a, scalar_b = isinstance(ta, T.ScalarType), isinstance(tb, T.ScalarType)
        if isinstance(op, ast.Pow):
            return self.call_builtin(B.lookup("pow"), [a, b], node)
        if scalar_a and scalar_b:
            a, b = self.unify(a, b, node)
            return self.scalar_binop(op, a, b, node)
        if isinstance(op, ast.Mult):
            # Scaling and vector/matrix/quaternion products: the `mul` builtin.
            # A scalar literal takes the other operand's scalar type.
            if scalar_a and a.is_literal:
                a = self.coerce(a, tb.dtype, node)
            if scalar_b and b.is_literal:
                b = self.coerce(b, ta.dtype, node)
            return self.apply_builtin(B.lookup("mul"), [a, b], node, {})
        if scalar_a != scalar_b:
            # Broadcasting a scalar over a vector/matrix: v/s.
            vec, s = (b, a) if scalar_a else (a, b)
            if not isinstance(op, ast.Div):  # (s / v: s divided by each component, as Warp's div)
                raise self.error(f"unsupported operand types for {self.op_name(op)}: {ta} and {tb}", node)
            s = self.coerce(s, vec.type.dtype, node)
            sv = splat(vec.type, self.materialize(s, vec.type.dtype))
            lhs, rhs = (sv, vec.value) if scalar_a else (vec.value, sv)
            return self.elementwise(op, Val(vec.type, lhs), Val(vec.type, rhs), node)
        if ta != tb or not isinstance(op, (ast.Add, ast.Sub)):
            user = self.user_operator(op, a, b, node)
            if user is not None:
                return user
        if ta != tb:
            raise self.error(f"unsupported operand types for {self.op_name(op)}: {ta} and {tb}", node)
        if type(ta) in (T.VectorType, T.MatrixType) and type(op) in _BITWISE:
            return self.bitwise(op, a, b, node)  # component-wise on integer vectors and matrices, as Warp's
        if type(ta) is T.VectorType and isinstance(op, ast.Mod):
            return self.elementwise(op, a, b, node)  # component-wise, as Warp's mod
        if not isinstance(op, (ast.Add, ast.Sub)):
            raise self.error(f"{self.op_name(op)} is not defined between two {ta} values "
                             "(use cw_mul/cw_div for component-wise products)", node)
        return self.elementwise(op, a, b, node)

    @staticmethod
    def op_name(op) -> str:
        return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
                ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}.get(type(op), type(op).__name__)

    def fold(self, op, x, y, node):
        # Folds with the semantics of the ops emitted for values (arith.divsi /
        # remsi / remf): int / int truncates and % takes the dividend's sign, as in Warp.
        both_int = isinstance(x, int) and isinstance(y, int)

        def div():
            if not both_int:
                return x / y
            q = abs(x) // abs(y)
            return -q if (x < 0) != (y < 0) else q

        def mod():
            if not both_int:
                return math.fmod(x, y)
            r = abs(x) % abs(y)
            return -r if x < 0 else r

        if type(op) in _BITWISE:
            if not both_int or isinstance(x, bool) or isinstance(y, bool):
                raise self.error(f"{self.op_name(op)} needs integer operands", node, KernelTypeError)
            if isinstance(op, (ast.LShift, ast.RShift)) and not 0 <= y < 64:
                raise self.error(f"shift count {y} is out of range (0 to 63 for a constant)", node,
                                 KernelTypeError)
            return {ast.BitAnd: lambda: x & y, ast.BitOr: lambda: x | y, ast.BitXor: lambda: x ^ y,
                    ast.LShift: lambda: x << y, ast.RShift: lambda: x >> y}[type(op)]()
        try:
            return {ast.Add: lambda: x + y, ast.Sub: lambda: x - y, ast.Mult: lambda: x * y,
                    ast.Div: div, ast.FloorDiv: lambda: x // y, ast.Mod: mod,
                    ast.Pow: lambda: x ** y}[type(op)]()
        except KeyError:
            raise self.error(f"unsupported operator {self.op_name(op)}", node, KernelSyntaxError) from None
        except ZeroDivisionError:
            raise self.error("division by zero in a constant expression", node) from None

    def scalar_binop(self, op, a, b, node):
        t = a.type
        if type(op) in _BITWISE:
            return self.bitwise(op, a, b, node)
        if t.is_bool:
            raise self.error(f"arithmetic on bool values is not supported ({self.op_name(op)})", node)
        if t.is_int and type(op) in _INTEGER_DIVISIONS and b.is_literal and b.literal == 0:
            raise self.error(f"integer division by zero ({self.op_name(op)} 0)", node)
        x, y = self.materialize(a, t), self.materialize(b, t)
        return Val(t, self._arith(op, t, x, y, node))

    def bitwise(self, op, a, b, node):
        """``& | ^ << >>`` on integers (``& | ^`` on bools too). A shift count
        outside [0, bits) gives what Python's unbounded integers give once
        wrapped to the width: 0 for ``<<``, the sign for ``>>``; never
        undefined."""
        t = a.type
        scalar = T.scalar_of(t)  # (integer vectors: component-wise)
        shift = isinstance(op, (ast.LShift, ast.RShift))
        if scalar.is_float or (scalar.is_bool and shift):
            raise self.error(f"{self.op_name(op)} needs integer operands, got {t}", node, KernelTypeError)
        x, y = self.materialize(a, t), self.materialize(b, t)
        if not shift:
            cls = {ast.BitAnd: arith.AndIOp, ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp}[type(op)]
            return Val(t, cls(x, y).result)
        bits = ir.IntegerType(scalar.mlir()).width
        width = constant(t, bits)
        in_range = arith.CmpIOp(_CMPI_PREDICATE_ULT, y, width).result
        safe = arith.SelectOp(in_range, y, constant(t, 0)).result
        if isinstance(op, ast.LShift):
            shifted, overflow = arith.ShLIOp(x, safe).result, constant(t, 0)
        elif scalar.is_unsigned:
            shifted, overflow = arith.ShRUIOp(x, safe).result, constant(t, 0)
        else:
            shifted = arith.ShRSIOp(x, safe).result
            overflow = arith.ShRSIOp(x, constant(t, bits - 1)).result
        return Val(t, arith.SelectOp(in_range, shifted, overflow).result)

    def elementwise(self, op, a, b, node):
        t = a.type
        return Val(t, self._arith(op, t, a.value, b.value, node))

    def _arith(self, op, t: T.Type, x, y, node):
        """``x op y`` on values of kernel type ``t`` (a scalar, or a vector or
        matrix elementwise)."""
        f = T.scalar_of(t).is_float
        if not f and type(op) in _INTEGER_DIVISIONS:
            return integer_divide(_INTEGER_DIVISIONS[type(op)], t, x, y)
        table = {
            ast.Add: arith.AddFOp if f else arith.AddIOp,
            ast.Sub: arith.SubFOp if f else arith.SubIOp,
            ast.Mult: arith.MulFOp if f else arith.MulIOp,
            ast.Div: arith.DivFOp,
            ast.Mod: arith.RemFOp,
        }
        if isinstance(op, ast.FloorDiv):
            return math_d.FloorOp(arith.DivFOp(x, y).result).result
        cls = table.get(type(op))
        if cls is None:
            raise self.error(f"unsupported operator {self.op_name(op)}", node, KernelSyntaxError)
        return cls(x, y).result

    def negate(self, v: Val) -> Val:
        t = v.type
        if isinstance(t, T.TileType):
            return tiles.negate(self, v)
        if not isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise self.error(f"cannot negate {self.describe(v)}", self.node)
        scalar = T.scalar_of(t)
        if scalar.is_bool:
            raise self.error("cannot negate a bool", self.node)
        if scalar.is_float:
            return Val(t, arith.NegFOp(v.value).result)
        return Val(t, arith.SubIOp(constant(t, 0), v.value).result)
