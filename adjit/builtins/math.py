"""Scalar math, component-wise on vectors and matrices: sqrt, exp, sin, ...,
rounding, lerp and smoothstep, the float tests (isnan, ...), abs, min, max,
the inverse error functions, pow, atan2, copysign, sign, clamp, and the
integer bit_count and nonzero.
"""
from __future__ import annotations

import numpy as np

from .. import types as T
from .._deferred import deferred_import
from .helpers import scalar_ops
from .registry import add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")


# --- type rules -------------------------------------------------------------

def _float_like(t) -> bool:
    return (isinstance(t, T.ScalarType) and t.is_float) or (
        isinstance(t, (T.VectorType, T.MatrixType)) and t.dtype.is_float)


def _unary_float(name):
    def infer(args):
        if len(args) != 1:
            raise TypeError(f"{name}() takes 1 argument, got {len(args)}")
        if not _float_like(args[0]):
            raise TypeError(f"{name}() needs a float scalar, vector or matrix, got {args[0]}")
        return args[0]
    return infer


def _same_numeric(name, count):
    def infer(args):
        if len(args) != count:
            raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
        if any(a != args[0] for a in args):
            raise TypeError(f"{name}() needs arguments of one type, got {', '.join(map(str, args))}")
        if isinstance(args[0], T.ScalarType) and args[0].is_bool:
            raise TypeError(f"{name}() needs numeric arguments, got bool")
        return args[0]
    return infer


# --- emitters ---------------------------------------------------------------

def _math(op_name):
    return lambda vals, types, result: getattr(math, op_name)(vals[0]).result


def _emit_abs(vals, types, result):
    if _is_float(result):
        return math.AbsFOp(vals[0]).result
    if T.scalar_of(result).is_unsigned:
        return vals[0]
    return math.AbsIOp(vals[0]).result


def _is_float(t):
    return T.scalar_of(t).is_float


def _nan_ignoring_pick(a, b, predicate):
    """min/max of floats as Warp's: a NaN operand is ignored (the other is
    the result; NaN only when both are), a tie picks a. A select, so the
    gradient flows to the operand picked."""
    prefer_a = arith.CmpFOp(predicate, a, b).result
    b_is_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, b, b).result
    return arith.SelectOp(arith.OrIOp(prefer_a, b_is_nan).result, a, b).result


def _emit_min(vals, types, result):
    if _is_float(result):
        return _nan_ignoring_pick(vals[0], vals[1], arith.CmpFPredicate.OLE)
    return (arith.MinUIOp if T.scalar_of(result).is_unsigned else arith.MinSIOp)(vals[0], vals[1]).result


def _emit_max(vals, types, result):
    if _is_float(result):
        return _nan_ignoring_pick(vals[0], vals[1], arith.CmpFPredicate.OGE)
    return (arith.MaxUIOp if T.scalar_of(result).is_unsigned else arith.MaxSIOp)(vals[0], vals[1]).result


# --- component-wise functions, rounding, interpolation, float tests, abs, min, max ----------------

for _name, _op, _dom in [
    ("sqrt", "SqrtOp", ((1e-3, 1e3),)),
    ("exp", "ExpOp", ((-5.0, 5.0),)),
    ("log", "LogOp", ((1e-3, 1e3),)),
    ("sin", "SinOp", ((-10.0, 10.0),)),
    ("cos", "CosOp", ((-10.0, 10.0),)),
    ("tanh", "TanhOp", ((-5.0, 5.0),)),
    ("floor", "FloorOp", None),
    ("ceil", "CeilOp", None),
]:
    add_builtin(_name, f"Component-wise {_name} of a float scalar, vector or matrix.",
                _unary_float(_name), _math(_op), domain=_dom,
                differentiable=_name not in ("floor", "ceil"))

add_builtin("round", "Component-wise rounding to the nearest integer, halves away from zero (as C's "
            "round and Warp's).", _unary_float("round"), _math("RoundOp"), differentiable=False)
add_builtin("rint", "Component-wise rounding to the nearest integer, halves to even (as C's rint in the "
            "default rounding mode, and Warp's).", _unary_float("rint"), _math("RoundEvenOp"),
            differentiable=False)


def _emit_trunc(vals, types, result):
    # Towards zero: ceil below zero, floor above (math.trunc has no adjoint rule;
    # floor's and ceil's give the zero gradient).
    x = vals[0]
    below = arith.CmpFOp(arith.CmpFPredicate.OLT, x, values.constant(result, 0)).result
    return arith.SelectOp(below, math.CeilOp(x).result, math.FloorOp(x).result).result


add_builtin("trunc", "Component-wise rounding towards zero.", _unary_float("trunc"), _emit_trunc,
            differentiable=False)


def _emit_frac(vals, types, result):
    return arith.SubFOp(vals[0], _emit_trunc(vals, types, result)).result


add_builtin("frac", "The fractional part, x - trunc(x) (component-wise; its sign is x's).",
            _unary_float("frac"), _emit_frac, domain=((0.1, 0.9),))


def _scaled(factor):
    def emit(vals, types, result):
        return arith.MulFOp(vals[0], values.constant(result, factor)).result
    return emit


add_builtin("degrees", "Radians to degrees (component-wise).", _unary_float("degrees"),
            _scaled(57.29577951308232))
add_builtin("radians", "Degrees to radians (component-wise).", _unary_float("radians"),
            _scaled(0.017453292519943295))


def _infer_lerp(args):
    if len(args) != 3:
        raise TypeError(f"lerp() takes 3 arguments (a, b, t), got {len(args)}")
    a, b, t = args
    if a != b or not _float_like(a):
        raise TypeError(f"lerp(a, b, t) needs a and b of one float type, got {a} and {b}")
    if t != a and t != T.scalar_of(a):
        raise TypeError(f"lerp(a, b, t) needs t of type {a} or {T.scalar_of(a)}, got {t}")
    return a


def _emit_lerp(vals, types, result):
    a, b, t = vals
    if types[2] != result:  # a scalar t scales every component
        t = vector_d.BroadcastOp(result.mlir(), t).result
    return arith.AddFOp(a, arith.MulFOp(arith.SubFOp(b, a).result, t).result).result


def _lerp_literal_types(types):
    # A literal t takes the scalar type of a (lerp(a, b, 0.5) on vectors).
    if len(types) == 3 and _float_like(types[0]):
        return [None, None, T.scalar_of(types[0])]
    return [None] * len(types)


add_builtin("lerp", "Linear interpolation a + (b - a) * t (t a scalar or of a's type).", _infer_lerp,
            _emit_lerp, literal_types=_lerp_literal_types)


def _emit_smoothstep(vals, types, result):
    e0, e1, x = vals
    zero, one = values.constant(result, 0.0), values.constant(result, 1.0)
    t = arith.DivFOp(arith.SubFOp(x, e0).result, arith.SubFOp(e1, e0).result).result
    t = arith.MinimumFOp(arith.MaximumFOp(t, zero).result, one).result
    three_minus = arith.SubFOp(values.constant(result, 3.0),
                               arith.MulFOp(values.constant(result, 2.0), t).result).result
    return arith.MulFOp(arith.MulFOp(t, t).result, three_minus).result


def _float_scalars(name, count):
    def infer(args):
        if len(args) != count:
            raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
        if not all(isinstance(a, T.ScalarType) and a.is_float for a in args) or len(set(args)) != 1:
            raise TypeError(f"{name}() needs float scalars of one type, got {', '.join(map(str, args))}")
        return args[0]
    return infer


add_builtin("smoothstep", "Hermite smoothstep of x between edge0 and edge1: t*t*(3 - 2t) with "
            "t = clamp((x - edge0) / (edge1 - edge0), 0, 1).", _float_scalars("smoothstep", 3),
            _emit_smoothstep, domain=((-1.0, -0.5), (1.5, 2.0), (-0.4, 0.9)))


def _emit_step(vals, types, result):
    below = arith.CmpFOp(arith.CmpFPredicate.OLT, vals[0], values.constant(result, 0.0)).result
    return arith.SelectOp(below, values.constant(result, 1.0), values.constant(result, 0.0)).result


add_builtin("step", "1.0 where x < 0, else 0.0 (component-wise; as Warp's step).", _unary_float("step"),
            _emit_step, differentiable=False)


def _infer_float_test(name):
    def infer(args):
        if len(args) != 1 or not _float_like(args[0]):
            raise TypeError(f"{name}() takes one float scalar, vector or matrix")
        return T.bool_
    return infer


def _float_max(scalar: T.ScalarType) -> float:
    """The largest finite value of a float type."""
    if isinstance(scalar, T.BFloat16Type):  # float32's exponent range, 8 significant bits
        return float((2 - 2 ** -7) * 2.0 ** 127)
    return float(np.finfo(scalar.np_dtype).max)


def _float_test(predicate):
    def emit(vals, types, result):
        x, t = vals[0], types[0]
        magnitude = math.AbsFOp(x).result
        if predicate == "nan":
            hit = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
        else:
            limit = values.constant(t, _float_max(T.scalar_of(t)))
            hit = arith.CmpFOp(arith.CmpFPredicate.OLE if predicate == "finite" else arith.CmpFPredicate.OGT,
                               magnitude, limit).result
        if isinstance(t, T.ScalarType):
            return hit
        flat = hit
        if isinstance(t, T.MatrixType):
            flat = vector_d.ShapeCastOp(ir.VectorType.get([_count(t)], ir.IntegerType.get_signless(1)),
                                        hit).result
        kind = vector_d.CombiningKind.AND if predicate == "finite" else vector_d.CombiningKind.OR
        return vector_d.ReductionOp(ir.IntegerType.get_signless(1), kind, flat).result
    return emit


def _count(t) -> int:
    n = 1
    for extent in t.shape:
        n *= extent
    return n


add_builtin("isnan", "Whether x (any component of a vector or matrix) is NaN.", _infer_float_test("isnan"),
            _float_test("nan"), differentiable=False)
add_builtin("isinf", "Whether x (any component of a vector or matrix) is infinite.",
            _infer_float_test("isinf"), _float_test("inf"), differentiable=False)
add_builtin("isfinite", "Whether x (every component of a vector or matrix) is finite.",
            _infer_float_test("isfinite"), _float_test("finite"), differentiable=False)

add_builtin("abs", "Absolute value (component-wise).", _same_numeric("abs", 1), _emit_abs)


def _min_max_infer(name):
    """Two values of one type (component-wise), or one vector (its smallest or
    largest component, as Warp's reduction)."""
    pair = _same_numeric(name, 2)

    def infer(args):
        if len(args) == 1 and isinstance(args[0], T.VectorType) and not isinstance(args[0], T.QuatType):
            if args[0].dtype.is_bool:
                raise TypeError(f"{name}() needs a numeric vector, got {args[0]}")
            return args[0].dtype
        return pair(args)
    return infer


def _min_max_emit(pick):
    def emit(vals, types, result):
        if len(vals) == 2:
            return pick(vals, types, result)
        # the reduction: left to right, NaN components skipped, the first of equal ones kept
        comps = [vector_d.ExtractOp(vals[0], [], [k]).result for k in range(types[0].length)]
        acc = comps[0]
        for c in comps[1:]:
            acc = pick([acc, c], [result, result], result)
        return acc
    return emit


add_builtin("min", "The smaller of two values (component-wise; a NaN operand is ignored, as in Warp), or the "
            "smallest component of one vector.", _min_max_infer("min"), _min_max_emit(_emit_min))
add_builtin("max", "The larger of two values (component-wise; a NaN operand is ignored, as in Warp), or the "
            "largest component of one vector.", _min_max_infer("max"), _min_max_emit(_emit_max))


# --- more scalar math ---------------------------------------------------------

for _name, _op, _dom in [
    ("tan", "TanOp", ((-1.2, 1.2),)),
    ("asin", "AsinOp", ((-0.9, 0.9),)),
    ("acos", "AcosOp", ((-0.9, 0.9),)),
    ("atan", "AtanOp", ((-5.0, 5.0),)),
    ("sinh", "SinhOp", ((-3.0, 3.0),)),
    ("cosh", "CoshOp", ((-3.0, 3.0),)),
    ("log2", "Log2Op", ((1e-3, 1e3),)),
    ("log10", "Log10Op", ((1e-3, 1e3),)),
    ("cbrt", "CbrtOp", ((0.2, 8.0),)),
    ("erf", "ErfOp", ((-2.0, 2.0),)),
    ("erfc", "ErfcOp", ((-2.0, 2.0),)),
]:
    add_builtin(_name, f"Component-wise {_name} of a float scalar, vector or matrix.",
                _unary_float(_name), _math(_op), domain=_dom)


# --- inverse error functions -------------------------------------------------------------------
# An initial guess from Giles' single-precision approximation ("Approximating
# the erfinv function", GPU Computing Gems, 2011), then Newton steps on erf (or
# erfc) itself: one for float32, three for float64, so the value is correct to
# rounding and its derivative, through the steps, is 1 / erf'(y) up to the
# last residual.

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _libm_call(op):
    """The result of ``op``, a math op that adjit-approximate-math (fast_math)
    must leave to libm."""
    op.operation.attributes["adjit.libm"] = ir.UnitAttr.get()
    return op.result


def _emit_inverse_erf(complement):
    def emit(vals, types, result):
        dtype = result
        f, add, sub, mul = scalar_ops(dtype)
        x = vals[0]
        # erfinv(t) with t = x (erfinv) or 1 - x (erfcinv); w = -log(1 - t^2), for
        # erfcinv from x (2 - x), exact where x is small.
        t = sub(f(1.0), x) if complement else x
        one_minus_t2 = mul(x, sub(f(2.0), x)) if complement else mul(sub(f(1.0), x), add(f(1.0), x))
        w = arith.NegFOp(math.LogOp(one_minus_t2).result).result
        central = arith.CmpFOp(arith.CmpFPredicate.OLT, w, f(5.0)).result

        def horner(coefficients, z):
            p = f(coefficients[0])
            for c in coefficients[1:]:
                p = add(f(c), mul(p, z))
            return p

        w_central = sub(arith.SelectOp(central, w, f(5.0)).result, f(2.5))
        w_tail = sub(math.SqrtOp(arith.SelectOp(central, f(5.0), w).result).result, f(3.0))
        p = arith.SelectOp(central, horner(_GILES_CENTRAL, w_central), horner(_GILES_TAIL, w_tail)).result
        y = mul(p, t)
        two_over_sqrt_pi = f(2.0 / 3.141592653589793 ** 0.5)
        for _ in range(3 if dtype.bits == 64 else 1):
            slope = mul(two_over_sqrt_pi, math.ExpOp(arith.NegFOp(mul(y, y)).result).result)
            # (the residual needs libm's erf, correctly rounded or nearly: with
            # fast_math's, a few ulp off, the steps would converge to its inverse)
            if complement:  # erfc(y) - x, slope -erf'(y)
                residual = sub(_libm_call(math.ErfcOp(y)), x)
                y = add(y, arith.DivFOp(residual, slope).result)
            else:
                residual = sub(_libm_call(math.ErfOp(y)), x)
                y = sub(y, arith.DivFOp(residual, slope).result)
        # |t| = 1: +-inf (the steps would give NaN); |t| > 1: NaN (from the log)
        edge = arith.CmpFOp(arith.CmpFPredicate.OEQ, math.AbsFOp(t).result, f(1.0)).result
        infinite = math.CopySignOp(f(float("inf")), t).result
        return arith.SelectOp(edge, infinite, y).result
    return emit


def _infer_float_scalar(name):
    def infer(args):
        if len(args) == 1 and isinstance(args[0], T.ScalarType) and args[0].is_float:
            return args[0]
        raise TypeError(f"{name}() takes a float scalar, got {', '.join(map(str, args))}")
    return infer


add_builtin("erfinv", "The inverse error function: erf(erfinv(x)) = x for -1 < x < 1 (+-inf at +-1).",
            _infer_float_scalar("erfinv"), _emit_inverse_erf(False), domain=((-0.95, 0.95),))
add_builtin("erfcinv", "The inverse complementary error function: erfc(erfcinv(x)) = x for 0 < x < 2.",
            _infer_float_scalar("erfcinv"), _emit_inverse_erf(True), domain=((0.05, 1.95),))


def _same_float(name, count):
    def infer(args):
        result = _same_numeric(name, count)(args)
        if not _float_like(result):
            raise TypeError(f"{name}() needs float arguments, got {', '.join(map(str, args))}")
        return result
    return infer


add_builtin("pow", "x raised to the power y (float; component-wise). Also `x ** y`.",
            _same_float("pow", 2), lambda v, t, r: math.PowFOp(v[0], v[1]).result,
            domain=((0.1, 10.0), (-3.0, 3.0)))
add_builtin("atan2", "The angle of the point (x, y): atan2(y, x), in (-pi, pi].",
            _same_float("atan2", 2), lambda v, t, r: math.Atan2Op(v[0], v[1]).result,
            domain=((0.1, 5.0), (0.1, 5.0)))


def _infer_copysign(args):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], T.ScalarType) and args[0].is_float:
        return args[0]
    raise TypeError(f"copysign() takes two float scalars of one type, got {', '.join(map(str, args))}")


add_builtin("copysign", "copysign(x, y): the magnitude of x with the sign of y (float scalars; the sign "
            "of a zero y counts, as in C).", _infer_copysign,
            lambda v, t, r: math.CopySignOp(v[0], v[1]).result)


def _emit_sign(vals, types, result):
    scalar = T.scalar_of(result)
    x = vals[0]
    zero, one, minus_one = values.constant(result, 0), values.constant(result, 1), values.constant(result, -1)
    if scalar.is_unsigned:
        return one  # never negative
    if scalar.is_float:
        neg = arith.CmpFOp(arith.CmpFPredicate.OLT, x, zero).result
    else:
        neg = arith.CmpIOp(arith.CmpIPredicate.slt, x, zero).result
    return arith.SelectOp(neg, minus_one, one).result


add_builtin("sign", "-1 where x < 0, else 1 (component-wise).", _same_numeric("sign", 1), _emit_sign,
            differentiable=True, domain=((0.1, 5.0),))


def _emit_clamp(vals, types, result):
    lo = _emit_max([vals[0], vals[1]], types, result)
    return _emit_min([lo, vals[2]], types, result)


add_builtin("clamp", "x limited to [a, b]: min(max(x, a), b).", _same_numeric("clamp", 3), _emit_clamp)


# --- integers ------------------------------------------------------------------------------------

def _infer_bit_count(args):
    if len(args) == 1 and isinstance(args[0], T.ScalarType) and args[0].is_int and not args[0].is_bool:
        return T.int32
    raise TypeError(f"bit_count() takes an integer, got {', '.join(map(str, args))}")


def _to_int32(v, t):
    if t.bits == 32:
        return v
    cast = arith.ExtUIOp if t.bits < 32 else arith.TruncIOp
    return cast(T.int32.mlir(), v).result


add_builtin("bit_count", "The number of set bits of an integer (an int32).",
            _infer_bit_count, lambda v, t, r: _to_int32(math.CtPopOp(v[0]).result, t[0]), differentiable=False)
add_builtin("nonzero", "1 where x is not zero, else 0 (x's type).", _same_numeric("nonzero", 1),
            lambda v, t, r: _emit_nonzero(v[0], r), differentiable=False)


def _emit_nonzero(x, t):
    zero, one = values.constant(t, 0), values.constant(t, 1)
    if T.scalar_of(t).is_float:
        nonzero = arith.CmpFOp(arith.CmpFPredicate.UNE, x, zero).result
    else:
        nonzero = arith.CmpIOp(arith.CmpIPredicate.ne, x, zero).result
    return arith.SelectOp(nonzero, one, zero).result
