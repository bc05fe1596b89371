"""Warp's operator functions: mul(a, b) is a * b, add(a, b) is a + b, neg(a)
is -a, ... Calls go through the frontend's operators (see
``Builtin.operator``); ``mul`` also says what ``*`` means between scalars,
vectors, matrices, quaternions and transforms, and emits it.
"""
from __future__ import annotations

import ast

from .. import types as T
from .._deferred import deferred_import
from .helpers import is_composite
from .linalg import emit_matmul
from .quaternions import emit_quat_mul
from .registry import add_builtin
from .transforms import emit_transform_multiply

arith = deferred_import("mlir.dialects.arith")
vector_d = deferred_import("mlir.dialects.vector")


# --- products: mul, a * b ---------------------------------------------------------

def mul_type(ta, tb):
    """The type of ``a * b`` (Warp's ``mul``); raises TypeError with the reason."""
    scalar_a, scalar_b = isinstance(ta, T.ScalarType), isinstance(tb, T.ScalarType)
    if scalar_a and scalar_b:
        if ta != tb:
            raise TypeError(f"cannot multiply {ta} by {tb}: operands have different types "
                            "(convert one explicitly, e.g. float(i))")
        if ta.is_bool:
            raise TypeError("cannot multiply bool values")
        return ta
    if not (scalar_a or is_composite(ta)) or not (scalar_b or is_composite(tb)):
        raise TypeError(f"cannot multiply {ta} by {tb}")
    if scalar_a or scalar_b:
        s, c = (ta, tb) if scalar_a else (tb, ta)
        if s != c.dtype:
            raise TypeError(f"cannot multiply {ta} by {tb}: the scalar must be {c.dtype}")
        return c
    if ta.dtype != tb.dtype:
        raise TypeError(f"cannot multiply {ta} by {tb}: their scalar types differ")
    if isinstance(ta, T.TransformType) or isinstance(tb, T.TransformType):
        if ta != tb:
            raise TypeError(f"cannot multiply {ta} by {tb}: a transform multiplies a transform "
                            "(transform_multiply) or a scalar")
        return ta
    if isinstance(ta, T.QuatType) or isinstance(tb, T.QuatType):
        if ta != tb:
            raise TypeError(f"cannot multiply {ta} by {tb}: a quaternion multiplies a quaternion "
                            "(the Hamilton product) or a scalar")
        return ta
    if isinstance(ta, T.MatrixType) and isinstance(tb, T.VectorType):
        if ta.cols != tb.length:
            raise TypeError(f"cannot multiply {ta} by {tb}: shapes do not match")
        return T.vector(ta.rows, ta.dtype)
    if isinstance(ta, T.VectorType) and isinstance(tb, T.MatrixType):
        if ta.length != tb.rows:
            raise TypeError(f"cannot multiply {ta} by {tb}: shapes do not match")
        return T.vector(tb.cols, ta.dtype)
    if isinstance(ta, T.MatrixType) and isinstance(tb, T.MatrixType):
        if ta.cols != tb.rows:
            raise TypeError(f"cannot multiply {ta} by {tb}: shapes do not match")
        return T.matrix((ta.rows, tb.cols), ta.dtype)
    raise TypeError(f"* is not defined between two {ta} values (use cw_mul/cw_div for component-wise "
                    "products)")


def _infer_mul(args):
    if len(args) != 2:
        raise TypeError(f"mul() takes 2 arguments, got {len(args)}")
    return mul_type(args[0], args[1])


def _emit_mul(vals, types, result):
    a, b = vals
    ta, tb = types
    scalar = T.scalar_of(result)
    mulop = arith.MulFOp if scalar.is_float else arith.MulIOp
    if isinstance(ta, T.ScalarType) and isinstance(tb, T.ScalarType):
        return mulop(a, b).result
    if isinstance(ta, T.ScalarType):
        return mulop(vector_d.BroadcastOp(result.mlir(), a).result, b).result
    if isinstance(tb, T.ScalarType):
        return mulop(a, vector_d.BroadcastOp(result.mlir(), b).result).result
    if isinstance(result, T.QuatType):
        return emit_quat_mul(a, b, result)
    if isinstance(result, T.TransformType):
        return emit_transform_multiply(a, b, result)
    return emit_matmul(a, b, ta, tb, result)


add_builtin("mul", "a * b: scalar products, scaling of vectors, matrices and quaternions by a scalar, "
            "matrix-vector (M v), vector-matrix (v^T M) and matrix-matrix products, and the Hamilton "
            "product of two quaternions (as in Warp).", _infer_mul, _emit_mul, operator=ast.Mult)


# --- Warp's operator functions: add(a, b) is a + b, neg(a) is -a, ... ------------------------------
# Calls go through the operators (see Builtin.operator); ``infer`` states the
# same type rules for the fuzzer and the registry.

def _numeric(t) -> bool:
    return isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)) and not T.scalar_of(t).is_bool


def _infer_add_sub(name):
    def infer(args):
        if len(args) != 2 or args[0] != args[1] or not _numeric(args[0]):
            raise TypeError(f"{name}() takes two numeric values of one type, got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _infer_div(args):
    if len(args) == 2 and _numeric(args[0]) and (args[1] == args[0] if isinstance(args[0], T.ScalarType)
                                                  else args[1] == args[0].dtype):
        return args[0]
    raise TypeError(f"div() takes two scalars of one type, or a vector or matrix and its scalar type; got "
                    f"{', '.join(map(str, args))}")


def _infer_scalar_pair(name, integer):
    def infer(args):
        if len(args) != 2 or args[0] != args[1] or not isinstance(args[0], T.ScalarType) or args[0].is_bool \
                or (integer and not args[0].is_int):
            kind = "integers" if integer else "numeric scalars"
            raise TypeError(f"{name}() takes two {kind} of one type, got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _infer_unary(name, check, what):
    def infer(args):
        if len(args) != 1 or not check(args[0]):
            raise TypeError(f"{name}() takes {what}, got {', '.join(map(str, args))}")
        return T.bool_ if name == "unot" else args[0]
    return infer


def _via_operator(vals, types, result):
    raise AssertionError("operator builtins are emitted by the frontend's operators")


#: (div's and mod's divisors are drawn away from 0 by the fuzzer)
_OPERATOR_DOMAINS = {"div": (None, (0.5, 2.5)), "mod": (None, (0.5, 2.5))}

for _name, _op, _infer, _doc, _diff in [
        ("add", ast.Add, _infer_add_sub("add"), "add(a, b) = a + b.", True),
        ("sub", ast.Sub, _infer_add_sub("sub"), "sub(a, b) = a - b.", True),
        ("div", ast.Div, _infer_div, "div(a, b) = a / b (integers: truncated, as in Warp).", True),
        ("floordiv", ast.FloorDiv, _infer_scalar_pair("floordiv", False), "floordiv(a, b) = a // b.", False),
        # (float: d/da = 1, d/db = -trunc(a / b))
        ("mod", ast.Mod, _infer_scalar_pair("mod", False),
         "mod(a, b) = a % b (the dividend's sign, as C's fmod and Warp).", True),
        ("bit_and", ast.BitAnd, _infer_scalar_pair("bit_and", True), "bit_and(a, b) = a & b.", False),
        ("bit_or", ast.BitOr, _infer_scalar_pair("bit_or", True), "bit_or(a, b) = a | b.", False),
        ("bit_xor", ast.BitXor, _infer_scalar_pair("bit_xor", True), "bit_xor(a, b) = a ^ b.", False),
        ("lshift", ast.LShift, _infer_scalar_pair("lshift", True), "lshift(a, b) = a << b.", False),
        ("rshift", ast.RShift, _infer_scalar_pair("rshift", True), "rshift(a, b) = a >> b.", False),
        ("neg", ast.USub, _infer_unary("neg", _numeric, "a numeric value"), "neg(a) = -a.", True),
        ("pos", ast.UAdd, _infer_unary("pos", _numeric, "a numeric value"), "pos(a) = +a (a itself).", True),
        ("invert", ast.Invert, _infer_unary("invert", lambda t: isinstance(t, T.ScalarType) and t.is_int
                                            and not t.is_bool, "an integer"), "invert(a) = ~a.", False),
        ("unot", ast.Not, _infer_unary("unot", lambda t: isinstance(t, T.ScalarType), "a scalar"),
         "unot(a) = not a.", False)]:
    add_builtin(_name, _doc, _infer, _via_operator, differentiable=_diff, operator=_op,
                domain=_OPERATOR_DOMAINS.get(_name))


# --- div_approx: a / b with approximate GPU division in Warp; exact here ------------------------------

def _div_approx_composite(t):
    return isinstance(t, (T.VectorType, T.MatrixType)) and not isinstance(t, T.TransformType) and t.dtype.is_float


def _infer_div_approx(args):
    if len(args) == 2:
        a, b = args
        if isinstance(a, T.ScalarType) and a.is_float and a == b:
            return a
        if _div_approx_composite(a) and b == a.dtype:
            return a
        if _div_approx_composite(b) and a == b.dtype:
            return b
    raise TypeError("div_approx() takes two float scalars of one type, or a float vector, matrix or quaternion "
                    f"and its scalar type (either order); got {', '.join(map(str, args))}")


def _div_approx_literals(types):
    # a literal takes the other argument's scalar type
    return [T.scalar_of(types[1 - k]) if len(types) == 2 and T.scalar_of(types[1 - k]) is not None else None
            for k in range(len(types))]


def _emit_div_approx(vals, types, result):
    a, b = [v if t == result else vector_d.BroadcastOp(result.mlir(), v).result for v, t in zip(vals, types)]
    return arith.DivFOp(a, b).result


add_builtin("div_approx", "div_approx(a, b): a / b of float scalars, or component-wise between a vector, matrix "
            "or quaternion and a scalar (either order). Warp divides with approximate GPU intrinsics; adjit "
            "divides exactly (as Warp does on the CPU), a valid value of the approximation.",
            _infer_div_approx, _emit_div_approx, literal_types=_div_approx_literals,
            domain=(None, (0.5, 2.5)))
