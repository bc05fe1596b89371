"""The builtin registry: one entry per builtin function of the kernel language.

Each entry says what a builtin accepts and returns (``infer``, which raises
``TypeError`` with a readable reason), how it is emitted (``emit``), whether it
is differentiable, and documents it. The frontend type-checks calls with
``infer`` before emitting any IR; docs and the gradient fuzzer read the same
entries (``adjit.builtin_registry()``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import types as T
from .._deferred import deferred_import
from ..errors import AdjitError

# The registry is part of the language (``adjit.sin`` is an entry) and is
# imported without MLIR; the emitters import it when a kernel is compiled.
ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
scf = deferred_import("mlir.dialects.scf")
vector_d = deferred_import("mlir.dialects.vector")
adjit_d = deferred_import("adjit.dialects.adjit")
values = deferred_import("adjit.compiler.values")

#: The default of a static parameter that must be given.
REQUIRED = object()


@dataclass(frozen=True)
class StaticParam:
    """A compile-time parameter of a builtin, passed by keyword (``identity(n=3, dtype=float)``).

    ``kind`` is ``"int"`` (a constant integer) or ``"dtype"`` (a scalar type:
    ``float``, ``int``, ``adjit.float64``, ...). Its value is passed to the
    builtin's ``infer`` and ``emit`` as a keyword argument.
    """

    name: str
    kind: str
    default: object = REQUIRED


@dataclass
class Builtin:
    """One builtin function of the kernel language.

    ``infer(types, **static)`` returns the result type (or raises ``TypeError``
    with a readable reason) and ``emit(values, types, result, **static)`` builds
    the MLIR; ``static`` holds the values of the builtin's ``static_params``.
    """

    name: str
    doc: str
    infer: Callable[..., T.Type]
    emit: Callable[..., ir.Value]
    differentiable: bool = True
    #: For each argument, the open interval of inputs on which the builtin is
    #: smooth (used to draw test inputs away from kinks and poles).
    domain: tuple[tuple[float, float], ...] | None = None
    #: Whether literal arguments adopt the type of the other arguments.
    unify_literals: bool = True
    #: Compile-time keyword parameters (see StaticParam).
    static_params: tuple[StaticParam, ...] = ()
    #: Whether the static parameters may also be given positionally (for
    #: builtins that take no other arguments: ``identity(3, float)``).
    static_positional: bool = False
    #: Whether the builtin takes arrays among its arguments (the atomics).
    array_args: bool = False
    #: types -> for each argument, the type a literal there adopts (or None);
    #: overrides unify_literals.
    literal_types: Callable[[list[T.Type]], list[T.Type | None]] | None = None
    #: The Python operator the builtin is (``mul`` is ``*``): calls go through
    #: the operator's rules, literal folding and unification included.
    operator: type | None = None
    #: The arguments the call writes (Warp passes them by reference): a
    #: random draw's state (0,), transform_set_translation's transform,
    #: quat_to_axis_angle's outputs. ``emit`` returns (value or None, [the
    #: new value of each]) and the frontend rebinds the argument names.
    rebinds: tuple[int, ...] = ()
    #: A random draw: the argument it writes is a generator state, which may
    #: be a temporary (``randf(rand_init(3))``), and a call from Python
    #: leaves it unchanged (Warp's rule).
    advances_state: bool = False

    def __call__(self, *args, **kwargs):
        """Evaluated on the host, as in a kernel (adjit/host_calls.py sets the hook)."""
        if host_call is None:
            raise AdjitError(f"adjit.{self.name} can only be called inside an @adjit.kernel or @adjit.func here "
                             "(import adjit to evaluate builtins on the host)")
        return host_call(self, args, kwargs)

    def __repr__(self):
        return f"<adjit builtin {self.name}>"


_REGISTRY: dict[str, Builtin] = {}

#: Evaluates a builtin called from Python (set by adjit.host_calls).
host_call = None


def registry() -> dict[str, Builtin]:
    """All builtins by name (a copy)."""
    return dict(_REGISTRY)


def add_builtin(name, doc, infer, emit, **kwargs) -> Builtin:
    entry = Builtin(name, doc, infer, emit, **kwargs)
    _REGISTRY[name] = entry
    return entry


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


def _float_vectors(name, count, result):
    def infer(args):
        if len(args) != count:
            raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
        if not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float or any(a != args[0] for a in args):
            raise TypeError(f"{name}() needs float vectors of one type, got {', '.join(map(str, args))}")
        if name == "cross" and args[0].length != 3:
            raise TypeError(f"cross() needs 3-vectors, got {args[0]}")
        return result(args[0])
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


def emit_dot(a: ir.Value, b: ir.Value, scalar: T.ScalarType) -> ir.Value:
    """Sum of the component products of two vectors (integer ones wrap, as
    their other arithmetic)."""
    prod = (arith.MulFOp if scalar.is_float else arith.MulIOp)(a, b).result
    return vector_d.ReductionOp(scalar.mlir(), vector_d.CombiningKind.ADD, prod).result


def _emit_dot(vals, types, result):
    return emit_dot(vals[0], vals[1], result)


def _safe_length(v, scalar: T.ScalarType):
    """(length of ``v``, length > 0), with a zero gradient at the zero vector
    (as Warp): sqrt only sees the squared length where it is positive, so its
    derivative's 1/sqrt never meets a zero adjoint there (inf * 0 = NaN)."""
    squared = emit_dot(v, v, scalar)
    zero, one = values.constant(scalar, 0.0), values.constant(scalar, 1.0)
    positive = arith.CmpFOp(arith.CmpFPredicate.OGT, squared, zero).result
    root = math.SqrtOp(arith.SelectOp(positive, squared, one).result).result
    return arith.SelectOp(positive, root, zero).result, positive


def _emit_length(vals, types, result):
    return _safe_length(vals[0], result)[0]


def _emit_length_sq(vals, types, result):
    return emit_dot(vals[0], vals[0], result)


def _emit_normalize(vals, types, result):
    """v / length(v); the zero vector (and a zero gradient) at zero, as Warp."""
    scalar = result.dtype
    length, positive = _safe_length(vals[0], scalar)
    one = values.constant(scalar, 1.0)
    inverse = arith.DivFOp(one, arith.SelectOp(positive, length, one).result).result
    inverse = arith.SelectOp(positive, inverse, values.constant(scalar, 0.0)).result
    return arith.MulFOp(vals[0], vector_d.BroadcastOp(result.mlir(), inverse).result).result


def _emit_cross(vals, types, result):
    a, b = vals

    def comp(v, i):
        return vector_d.ExtractOp(v, [], [i]).result

    def term(i, j):  # a[i]*b[j] - a[j]*b[i]
        return arith.SubFOp(arith.MulFOp(comp(a, i), comp(b, j)).result,
                            arith.MulFOp(comp(a, j), comp(b, i)).result).result

    return vector_d.FromElementsOp(result.mlir(), [term(1, 2), term(2, 0), term(0, 1)]).result


# --- entries ----------------------------------------------------------------

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
add_builtin("dot", "Dot product of two float vectors.",
            _float_vectors("dot", 2, lambda v: v.dtype), _emit_dot)
add_builtin("length", "Euclidean length of a float vector (its gradient at the zero vector is zero).",
            _float_vectors("length", 1, lambda v: v.dtype), _emit_length,
            domain=((0.1, 10.0),))
add_builtin("length_sq", "Squared Euclidean length of a float vector.",
            _float_vectors("length_sq", 1, lambda v: v.dtype), _emit_length_sq)
add_builtin("normalize", "The vector divided by its length (the zero vector, with a zero gradient, at zero).",
            _float_vectors("normalize", 1, lambda v: v), _emit_normalize,
            domain=((0.1, 10.0),))
add_builtin("cross", "Cross product of two 3-vectors.",
            _float_vectors("cross", 2, lambda v: v), _emit_cross)


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


def _emit_inverse_erf(complement):
    def emit(vals, types, result):
        dtype = result
        f, add, sub, mul = _scalar_ops(dtype)
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
            if complement:  # erfc(y) - x, slope -erf'(y)
                residual = sub(math.ErfcOp(y).result, x)
                y = add(y, arith.DivFOp(residual, slope).result)
            else:
                residual = sub(math.ErfOp(y).result, x)
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


def _infer_where(name):
    def infer(args):
        if len(args) != 3:
            raise TypeError(f"{name}() takes 3 arguments, got {len(args)}")
        if args[0] != T.bool_:
            raise TypeError(f"{name}() needs a bool condition first, got {args[0]}")
        if args[1] != args[2]:
            raise TypeError(f"{name}() needs two values of one type, got {args[1]} and {args[2]}")
        return args[1]
    return infer


add_builtin("where", "where(cond, a, b): a if cond else b (both are evaluated).",
            _infer_where("where"), lambda v, t, r: arith.SelectOp(v[0], v[1], v[2]).result)
add_builtin("select", "select(cond, a, b): b if cond else a (Warp's argument order).",
            _infer_where("select"), lambda v, t, r: arith.SelectOp(v[0], v[2], v[1]).result)


# --- matrices -------------------------------------------------------------------

def _matrix_arg(name, square=False, ints=False):
    """The infer of a builtin of one matrix: float matrices, or any (integer
    ones too) with ``ints``."""
    def infer(args):
        if len(args) != 1 or not isinstance(args[0], T.MatrixType):
            raise TypeError(f"{name}() needs one matrix, got {', '.join(map(str, args))}")
        m = args[0]
        if not ints and not m.dtype.is_float:
            raise TypeError(f"{name}() needs a float matrix, got {m}")
        if square and m.rows != m.cols:
            raise TypeError(f"{name}() needs a square matrix, got {m}")
        return m
    return infer


def _elements(m: ir.Value, rows: int, cols: int):
    return [[vector_d.ExtractOp(m, [], [r, c]).result for c in range(cols)] for r in range(rows)]


def _matrix_from(rows_of_scalars, t: T.MatrixType) -> ir.Value:
    m = values.constant(t, 0)
    row_t = t.row_type().mlir()
    for r, row in enumerate(rows_of_scalars):
        m = vector_d.InsertOp(vector_d.FromElementsOp(row_t, row).result, m, [], [r]).result
    return m


def _det(e):
    """Determinant of a square list-of-lists of f32/f64 SSA scalars (Laplace expansion)."""
    n = len(e)
    if n == 1:
        return e[0][0]
    if n == 2:
        return arith.SubFOp(arith.MulFOp(e[0][0], e[1][1]).result,
                            arith.MulFOp(e[0][1], e[1][0]).result).result
    acc = None
    for c in range(n):
        minor = [row[:c] + row[c + 1:] for row in e[1:]]
        term = arith.MulFOp(e[0][c], _det(minor)).result
        if acc is None:
            acc = term
        elif c % 2:
            acc = arith.SubFOp(acc, term).result
        else:
            acc = arith.AddFOp(acc, term).result
    return acc


def _emit_transpose(vals, types, result):
    return vector_d.TransposeOp(result.mlir(), vals[0], [1, 0]).result


def _emit_trace(vals, types, result):
    m = types[0]
    add = arith.AddFOp if m.dtype.is_float else arith.AddIOp
    acc = vector_d.ExtractOp(vals[0], [], [0, 0]).result
    for i in range(1, m.rows):
        acc = add(acc, vector_d.ExtractOp(vals[0], [], [i, i]).result).result
    return acc


def _emit_determinant(vals, types, result):
    m = types[0]
    return _det(_elements(vals[0], m.rows, m.cols))


def _emit_inverse(vals, types, result):
    n = result.rows
    e = _elements(vals[0], n, n)
    inv_det = arith.DivFOp(values.constant(result.dtype, 1.0), _det(e)).result
    rows = []
    for r in range(n):
        row = []
        for c in range(n):
            # inverse[r][c] = cofactor(c, r) / det
            minor = [er[:r] + er[r + 1:] for i, er in enumerate(e) if i != c]
            cof = _det(minor)
            if (r + c) % 2:
                cof = arith.NegFOp(cof).result
            row.append(arith.MulFOp(cof, inv_det).result)
        rows.append(row)
    return _matrix_from(rows, result)


def _infer_outer(args):
    if len(args) != 2 or not all(isinstance(a, T.VectorType) and a.dtype.is_float for a in args) \
            or args[0].dtype != args[1].dtype:
        raise TypeError(f"outer() needs two float vectors, got {', '.join(map(str, args))}")
    return T.matrix((args[0].length, args[1].length), args[0].dtype)


def _emit_outer(vals, types, result):
    a, b = vals
    rows = [[arith.MulFOp(vector_d.ExtractOp(a, [], [r]).result, vector_d.ExtractOp(b, [], [c]).result).result
             for c in range(result.cols)] for r in range(result.rows)]
    return _matrix_from(rows, result)


def _infer_diag(args):
    if len(args) != 1 or not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float:
        raise TypeError(f"diag() needs one float vector, got {', '.join(map(str, args))}")
    return T.matrix((args[0].length, args[0].length), args[0].dtype)


def _emit_diag(vals, types, result):
    zero = values.constant(result.dtype, 0.0)
    rows = [[vector_d.ExtractOp(vals[0], [], [r]).result if r == c else zero for c in range(result.cols)]
            for r in range(result.rows)]
    return _matrix_from(rows, result)


add_builtin("transpose", "The transpose of a matrix.",
            lambda a: _transpose_type(_matrix_arg("transpose", ints=True)(a)),
            _emit_transpose)
add_builtin("trace", "Sum of the diagonal of a square matrix.",
            lambda a: _matrix_arg("trace", square=True, ints=True)(a).dtype, _emit_trace)
add_builtin("determinant", "Determinant of a square 2x2, 3x3 or 4x4 matrix.",
            lambda a: _matrix_arg("determinant", square=True)(a).dtype, _emit_determinant)
add_builtin("inverse", "Inverse of a square 2x2, 3x3 or 4x4 matrix (adjugate over determinant).",
            _matrix_arg("inverse", square=True), _emit_inverse)
add_builtin("outer", "Outer product a b^T of two float vectors.", _infer_outer, _emit_outer)
add_builtin("diag", "The square matrix with vector v on its diagonal.", _infer_diag, _emit_diag)


def _transpose_type(m: T.MatrixType) -> T.MatrixType:
    return T.matrix((m.cols, m.rows), m.dtype)


def _infer_stop_gradient(args):
    if len(args) != 1:
        raise TypeError(f"stop_gradient() takes 1 argument, got {len(args)}")
    return args[0]


add_builtin("stop_gradient", "The value itself, through which no gradient flows.",
            _infer_stop_gradient,
            lambda v, t, r: adjit_d.StopGradientOp(v[0].type, v[0]).result,
            differentiable=False)


def lookup(name: str) -> Builtin | None:
    return _REGISTRY.get(name)


# --- products: mul, a * b ---------------------------------------------------------

def _is_composite(t) -> bool:
    return isinstance(t, (T.VectorType, T.MatrixType))


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
    if not (scalar_a or _is_composite(ta)) or not (scalar_b or _is_composite(tb)):
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


def _components(v: ir.Value, n: int) -> list[ir.Value]:
    return [vector_d.ExtractOp(v, [], [i]).result for i in range(n)]


def _transposed(m: ir.Value, t: T.MatrixType) -> ir.Value:
    return vector_d.TransposeOp(_transpose_type(t).mlir(), m, [1, 0]).result


def emit_matmul(a: ir.Value, b: ir.Value, ta, tb, result) -> ir.Value:
    """matrix * vector, vector * matrix (v^T M) and matrix * matrix."""
    scalar = ta.dtype
    if isinstance(ta, T.VectorType):  # v * M = M^T v
        return emit_matmul(_transposed(b, tb), a, _transpose_type(tb), ta, result)
    if isinstance(tb, T.VectorType):
        comps = [emit_dot(vector_d.ExtractOp(a, [], [r]).result, b, scalar) for r in range(ta.rows)]
        return vector_d.FromElementsOp(result.mlir(), comps).result
    bt = _transposed(b, tb)
    m = values.constant(result, 0)
    row_t = result.row_type().mlir()
    for r in range(ta.rows):
        row_a = vector_d.ExtractOp(a, [], [r]).result
        comps = [emit_dot(row_a, vector_d.ExtractOp(bt, [], [c]).result, scalar) for c in range(tb.cols)]
        m = vector_d.InsertOp(vector_d.FromElementsOp(row_t, comps).result, m, [], [r]).result
    return m


def emit_quat_mul(a: ir.Value, b: ir.Value, result: T.QuatType) -> ir.Value:
    """The Hamilton product a b of quaternions stored (x, y, z, w), w real."""
    ax, ay, az, aw = _components(a, 4)
    bx, by, bz, bw = _components(b, 4)

    def mul(x, y):
        return arith.MulFOp(x, y).result

    def add(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = arith.AddFOp(acc, x).result
        return acc

    def sub(x, y):
        return arith.SubFOp(x, y).result

    # (a_v, a_w)(b_v, b_w) = (a_w b_v + b_w a_v + a_v x b_v, a_w b_w - a_v . b_v)
    x = sub(add(mul(aw, bx), mul(bw, ax), mul(ay, bz)), mul(az, by))
    y = sub(add(mul(aw, by), mul(bw, ay), mul(az, bx)), mul(ax, bz))
    z = sub(add(mul(aw, bz), mul(bw, az), mul(ax, by)), mul(ay, bx))
    w = sub(sub(sub(mul(aw, bw), mul(ax, bx)), mul(ay, by)), mul(az, bz))
    return vector_d.FromElementsOp(result.mlir(), [x, y, z, w]).result


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


# --- identity matrices ------------------------------------------------------------------

def _infer_identity(args, n, dtype):
    if args:
        raise TypeError(f"identity() takes only n and dtype, got {len(args)} more arguments")
    if n < 2 or n * n > T.MAX_COMPONENTS:
        raise TypeError(f"identity() needs n of 2 to 8 (at most {T.MAX_COMPONENTS} scalars), got {n}")
    if not dtype.is_float:
        raise TypeError(f"identity() needs a float dtype, got {dtype}")
    return T.matrix((n, n), dtype)


def _emit_identity(vals, types, result, n, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return _matrix_from([[one if r == c else zero for c in range(n)] for r in range(n)], result)


add_builtin("identity", "identity(n=3, dtype=float): the n x n identity matrix (n a constant of 2 to 4).",
            _infer_identity, _emit_identity, differentiable=False,
            static_params=(StaticParam("n", "int"), StaticParam("dtype", "dtype", T.float32)),
            static_positional=True)


# --- quaternions --------------------------------------------------------------------------
# Stored (x, y, z, w) with w the real part, as in Warp; the conventions below
# (quat_inverse is the conjugate, quat_rotate assumes a unit quaternion,
# quat_from_axis_angle does not normalize the axis) are Warp's.

def _infer_quat_identity(args, dtype):
    if args:
        raise TypeError(f"quat_identity() takes only dtype, got {len(args)} more arguments")
    if not dtype.is_float:
        raise TypeError(f"quat_identity() needs a float dtype, got {dtype}")
    return T.quaternion(dtype)


def _emit_quat_identity(vals, types, result, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return vector_d.FromElementsOp(result.mlir(), [zero, zero, zero, one]).result


def _quat_arg(name, args, count):
    if len(args) != count:
        raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
    if not isinstance(args[0], T.QuatType):
        raise TypeError(f"{name}() needs a quaternion first, got {args[0]}")
    return args[0]


def _infer_quat_inverse(args):
    return _quat_arg("quat_inverse", args, 1)


def _emit_quat_inverse(vals, types, result):
    x, y, z, w = _components(vals[0], 4)
    neg = [arith.NegFOp(c).result for c in (x, y, z)]
    return vector_d.FromElementsOp(result.mlir(), neg + [w]).result


def _infer_quat_rotate(args):
    q = _quat_arg("quat_rotate", args, 2)
    if args[1] != T.vector(3, q.dtype):
        raise TypeError(f"quat_rotate() rotates a 3-vector of {q.dtype} by a {q}, got {args[1]}")
    return args[1]


def _emit_quat_rotate(vals, types, result):
    # For a unit q = (u, w): q v q* = (2w^2 - 1) v + 2 (u . v) u + 2w (u x v).
    dtype = result.dtype
    qx, qy, qz, qw = _components(vals[0], 4)
    u = vector_d.FromElementsOp(result.mlir(), [qx, qy, qz]).result
    v = vals[1]
    two = values.constant(dtype, 2.0)
    c = arith.SubFOp(arith.MulFOp(two, arith.MulFOp(qw, qw).result).result, values.constant(dtype, 1.0)).result
    d = arith.MulFOp(two, emit_dot(u, v, dtype)).result
    e = arith.MulFOp(two, qw).result
    uxv = _emit_cross([u, v], types, result)

    def scale(vec, s):
        return arith.MulFOp(vec, vector_d.BroadcastOp(result.mlir(), s).result).result

    return arith.AddFOp(arith.AddFOp(scale(v, c), scale(u, d)).result, scale(uxv, e)).result


def _infer_quat_from_axis_angle(args):
    if len(args) != 2 or not isinstance(args[0], T.VectorType) or args[0].length != 3 \
            or isinstance(args[0], T.QuatType) or not args[0].dtype.is_float or args[1] != args[0].dtype:
        raise TypeError("quat_from_axis_angle() needs a float 3-vector axis and an angle of its scalar type, "
                        f"got {', '.join(map(str, args))}")
    return T.quaternion(args[0].dtype)


def _emit_quat_from_axis_angle(vals, types, result):
    dtype = result.dtype
    axis, angle = vals
    half = arith.MulFOp(angle, values.constant(dtype, 0.5)).result
    s = math.SinOp(half).result
    x, y, z = (arith.MulFOp(c, s).result for c in _components(axis, 3))
    return vector_d.FromElementsOp(result.mlir(), [x, y, z, math.CosOp(half).result]).result


def _infer_quat_rotate_inv(args):
    q = _quat_arg("quat_rotate_inv", args, 2)
    if args[1] != T.vector(3, q.dtype):
        raise TypeError(f"quat_rotate_inv() rotates a 3-vector of {q.dtype} by a {q}, got {args[1]}")
    return args[1]


def _emit_quat_rotate_inv(vals, types, result):
    # q^-1 v q for a unit q: quat_rotate by the conjugate.
    return _emit_quat_rotate([_emit_quat_inverse([vals[0]], types, types[0]), vals[1]], types, result)


def _infer_quat_to_matrix(args):
    q = _quat_arg("quat_to_matrix", args, 1)
    return T.matrix((3, 3), q.dtype)


def _emit_quat_to_matrix(vals, types, result):
    """Columns: the unit axes rotated by q (quat_rotate)."""
    vec = T.vector(3, result.dtype)
    one, zero = values.constant(result.dtype, 1.0), values.constant(result.dtype, 0.0)
    cols = []
    for k in range(3):
        axis = vector_d.FromElementsOp(vec.mlir(), [one if j == k else zero for j in range(3)]).result
        cols.append(_components(_emit_quat_rotate([vals[0], axis], [types[0], vec], vec), 3))
    return _matrix_from([[cols[c][r] for c in range(3)] for r in range(3)], result)


def _infer_quat_from_matrix(args):
    m = _matrix_arg("quat_from_matrix")(args)
    if (m.rows, m.cols) != (3, 3) or not m.dtype.is_float:
        raise TypeError(f"quat_from_matrix() needs a float 3x3 matrix, got {m}")
    return T.quaternion(m.dtype)


def _emit_quat_from_matrix(vals, types, result):
    """Shepperd's method: w (where the trace is positive), else the x, y or z
    of the largest diagonal entry, is computed from the diagonal (a square
    root) and made positive, the others from off-diagonal sums over it; the
    quaternion is then normalized.
    All four candidates are computed (their square roots clamped, so the
    unused ones stay finite and pass no NaN into gradients) and selected."""
    dtype = result.dtype
    e = _elements(vals[0], 3, 3)
    f = lambda v: values.constant(dtype, v)  # noqa: E731
    add, sub, mul, div = (lambda a, b: arith.AddFOp(a, b).result, lambda a, b: arith.SubFOp(a, b).result,
                          lambda a, b: arith.MulFOp(a, b).result, lambda a, b: arith.DivFOp(a, b).result)
    d0, d1, d2 = e[0][0], e[1][1], e[2][2]

    def root(a):  # 2 sqrt(max(a, 1e-6))
        return mul(f(2.0), math.SqrtOp(arith.MaximumFOp(a, f(1e-6)).result).result)

    candidates = []
    s = root(add(f(1.0), add(add(d0, d1), d2)))             # w largest
    candidates.append([div(sub(e[2][1], e[1][2]), s), div(sub(e[0][2], e[2][0]), s),
                       div(sub(e[1][0], e[0][1]), s), mul(f(0.25), s)])
    s = root(sub(sub(add(f(1.0), d0), d1), d2))             # x largest
    candidates.append([mul(f(0.25), s), div(add(e[0][1], e[1][0]), s),
                       div(add(e[0][2], e[2][0]), s), div(sub(e[2][1], e[1][2]), s)])
    s = root(sub(sub(add(f(1.0), d1), d0), d2))             # y largest
    candidates.append([div(add(e[0][1], e[1][0]), s), mul(f(0.25), s),
                       div(add(e[1][2], e[2][1]), s), div(sub(e[0][2], e[2][0]), s)])
    s = root(sub(sub(add(f(1.0), d2), d0), d1))             # z largest
    candidates.append([div(add(e[0][2], e[2][0]), s), div(add(e[1][2], e[2][1]), s),
                       mul(f(0.25), s), div(sub(e[1][0], e[0][1]), s)])
    trace = add(add(d0, d1), d2)
    gt = lambda a, b: arith.CmpFOp(arith.CmpFPredicate.OGT, a, b).result  # noqa: E731
    use_w = gt(trace, f(0.0))
    use_x = arith.AndIOp(gt(d0, d1), gt(d0, d2)).result
    use_y = gt(d1, d2)
    pick = lambda c, a, b: [arith.SelectOp(c, p, q).result for p, q in zip(a, b)]  # noqa: E731
    q = pick(use_w, candidates[0], pick(use_x, candidates[1], pick(use_y, candidates[2], candidates[3])))
    quat = vector_d.FromElementsOp(result.mlir(), q).result
    norm = math.SqrtOp(emit_dot(quat, quat, dtype)).result
    return arith.DivFOp(quat, vector_d.BroadcastOp(result.mlir(), norm).result).result


add_builtin("quat_identity", "quat_identity(dtype=float): the identity quaternion (0, 0, 0, 1).",
            _infer_quat_identity, _emit_quat_identity, differentiable=False,
            static_params=(StaticParam("dtype", "dtype", T.float32),), static_positional=True)
add_builtin("quat_inverse", "The conjugate (-x, -y, -z, w): the inverse of a unit quaternion (as in Warp).",
            _infer_quat_inverse, _emit_quat_inverse)
add_builtin("quat_rotate", "quat_rotate(q, v): the 3-vector v rotated by the unit quaternion q (q v q^-1).",
            _infer_quat_rotate, _emit_quat_rotate)
add_builtin("quat_rotate_inv", "quat_rotate_inv(q, v): the 3-vector v rotated by the inverse of the unit "
            "quaternion q (q^-1 v q).", _infer_quat_rotate_inv, _emit_quat_rotate_inv)
add_builtin("quat_to_matrix", "The 3x3 rotation matrix of a unit quaternion (its columns are the axes "
            "rotated by quat_rotate).", _infer_quat_to_matrix, _emit_quat_to_matrix)
add_builtin("quat_from_matrix", "The unit quaternion of a 3x3 rotation matrix (Shepperd's method; of q and "
            "-q, the one with w > 0 where the trace is positive, else with the component of the largest "
            "diagonal entry positive).", _infer_quat_from_matrix,
            _emit_quat_from_matrix, domain=((0.5, 1.0),))  # (fuzzed where the trace is positive: smooth)
add_builtin("quat_from_axis_angle", "quat_from_axis_angle(axis, angle): the rotation of angle radians about "
            "the unit vector axis, (axis sin(angle/2), cos(angle/2)).",
            _infer_quat_from_axis_angle, _emit_quat_from_axis_angle, domain=((-1.0, 1.0), (-6.0, 6.0)))


# --- atomics ----------------------------------------------------------------------------

def _infer_atomic(name):
    nvalues = 2 if name == "atomic_cas" else 1  # atomic_cas(a, i, ..., compare, value)
    trailing = "compare, value" if nvalues == 2 else "value"

    def infer(args):
        if len(args) < 2 + nvalues or not isinstance(args[0], T.ArrayType):
            raise TypeError(f"{name}() takes an array, one index per dimension and "
                            f"{'a compare and a value' if nvalues == 2 else 'a value'} "
                            f"({name}(a, i, {trailing}), {name}(a, i, j, {trailing}), ...), got "
                            f"({', '.join(map(str, args))})")
        array, indices, given = args[0], args[1:-nvalues], args[-nvalues:]
        if len(indices) != array.ndim:
            raise TypeError(f"{name}() on a {array.ndim}-d array needs {array.ndim} "
                            f"{'index' if array.ndim == 1 else 'indices'}, got {len(indices)}")
        for t in indices:
            if not isinstance(t, T.ScalarType) or not t.is_int:
                raise TypeError(f"{name}() indices must be integers, got {t}")
        for value in given:
            if value != array.dtype:
                raise TypeError(f"{name}() on an array of {array.dtype} needs {trailing} of type {array.dtype}, "
                                f"got {value}")
        scalar = T.scalar_of(array.dtype)
        if name in ("atomic_and", "atomic_or", "atomic_xor") and not scalar.is_int:
            raise TypeError(f"{name}() needs an array of integers (scalars, vectors or matrices), got an array "
                            f"of {array.dtype}")
        if name in ("atomic_exch", "atomic_cas") and not (
                isinstance(array.dtype, T.ScalarType) and (scalar.is_int or scalar.is_float)):
            raise TypeError(f"{name}() needs an array of integer or float scalars, got an array of {array.dtype}")
        if name in ("atomic_min", "atomic_max") and scalar.is_unsigned:
            raise TypeError(f"{name}() on unsigned integers is not supported yet (use a signed type)")
        if scalar.bits < 32 and scalar not in _SMALL_ATOMICS.get(name, ()):
            raise TypeError(f"{name}() on {scalar} is not supported (as in Warp, 8- and 16-bit atomics are "
                            "atomic_add and atomic_sub on float16 and bfloat16, atomic_min and atomic_max "
                            "on bfloat16)")
        return array.dtype
    return infer


#: The 8- and 16-bit element types each atomic takes (Warp 1.19's: the
#: others are refused there too). On the CPU LLVM expands them into
#: compare-and-swap loops on the 16-bit word; a float16/bfloat16 kernel's
#: adds stay in thread order by running the launch serially
#: (adjit-atomic-order: the runtime's ordered adds take f32/f64 only).
_SMALL_ATOMICS = {"atomic_add": (T.float16, T.bfloat16), "atomic_sub": (T.float16, T.bfloat16),
                  "atomic_min": (T.bfloat16,), "atomic_max": (T.bfloat16,)}


def _atomic_literal_types(types, nvalues=1):
    # Literal indices are int32; a literal value takes the array's element type.
    array = types[0] if types else None
    value_t = array.dtype if isinstance(array, T.ArrayType) else None
    if len(types) < 1 + nvalues:
        return [None] * len(types)
    return [None] + [T.int32] * (len(types) - 1 - nvalues) + [value_t] * nvalues


def _emit_atomic(op_name, negate=False):
    def emit(vals, types, result):
        op = getattr(adjit_d, op_name)
        if op_name == "AtomicCasOp":  # (a, i, ..., compare, value)
            array, *indices, compare, value = vals
            return op(result.mlir(), compare, value, array,
                      [values.to_index(i, t) for i, t in zip(indices, types[1:-2])],
                      position=ir.DenseI64ArrayAttr.get([])).result
        array, *indices, value = vals
        if negate:
            scalar = T.scalar_of(result)
            value = (arith.NegFOp(value).result if scalar.is_float
                     else arith.SubIOp(values.constant(result, 0), value).result)
        return op(result.mlir(), value, array, [values.to_index(i, t) for i, t in zip(indices, types[1:-1])],
                  position=ir.DenseI64ArrayAttr.get([])).result
    return emit


_ATOMICS = [
    ("atomic_add", "AtomicAddOp", False, "adds value to"),
    ("atomic_sub", "AtomicAddOp", True, "subtracts value from"),  # adds -value
    ("atomic_min", "AtomicMinOp", False, "stores the minimum of value and"),
    ("atomic_max", "AtomicMaxOp", False, "stores the maximum of value and"),
]
# Not marked differentiable: their gradients flow through arrays (as Warp's
# adjoints do), which the scalar-input gradient checks do not model yet.
for _name, _op, _neg, _what in _ATOMICS:
    add_builtin(_name, f"{_name}(a, i, [j, ...], value) atomically {_what} a[i, j, ...] and returns the old "
                "element (vectors and matrices component by component, each component atomically).",
                _infer_atomic(_name), _emit_atomic(_op, _neg), array_args=True, unify_literals=False,
                literal_types=_atomic_literal_types, differentiable=False)

# Warp's other atomics. No gradients: integer ones carry none, and for floats
# the value atomic_exch/atomic_cas leave depends on the threads' order (a
# GradientError at the call when differentiated). On the CPU a kernel using
# atomic_exch or atomic_cas (or using any atomic's old value) runs its threads
# in order, so its results are those of the serial loop over thread indices.
_ATOMICS_MORE = [
    ("atomic_exch", "AtomicExchOp", "atomic_exch(a, i, [j, ...], value) atomically stores value into "
     "a[i, j, ...] and returns the element it replaced (integer or float scalar elements)."),
    ("atomic_cas", "AtomicCasOp", "atomic_cas(a, i, [j, ...], compare, value) atomically stores value into "
     "a[i, j, ...] if the element equals compare and returns the element it read (integer or float scalar "
     "elements; floats compare as their bits, as Warp's GPU atomics do: -0.0 does not match 0.0)."),
    ("atomic_and", "AtomicAndOp", "atomic_and(a, i, [j, ...], value) atomically stores a[i, j, ...] & value "
     "and returns the old element (integers; vectors and matrices component by component)."),
    ("atomic_or", "AtomicOrOp", "atomic_or(a, i, [j, ...], value) atomically stores a[i, j, ...] | value "
     "and returns the old element (integers; vectors and matrices component by component)."),
    ("atomic_xor", "AtomicXorOp", "atomic_xor(a, i, [j, ...], value) atomically stores a[i, j, ...] ^ value "
     "and returns the old element (integers; vectors and matrices component by component)."),
]
for _name, _op, _doc in _ATOMICS_MORE:
    add_builtin(_name, _doc, _infer_atomic(_name), _emit_atomic(_op), array_args=True, unify_literals=False,
                literal_types=(lambda types: _atomic_literal_types(types, 2)) if _name == "atomic_cas"
                else _atomic_literal_types, differentiable=False)


# --- component-wise products -------------------------------------------------------------

def _infer_cw(name):
    def infer(args):
        if len(args) != 2 or not _is_composite(args[0]) or args[0] != args[1]:
            raise TypeError(f"{name}() needs two vectors or matrices of one type, got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _emit_cw(float_op, int_op):
    def emit(vals, types, result):
        if result.dtype.is_float:
            return getattr(arith, float_op)(vals[0], vals[1]).result
        if int_op == "DivSIOp":  # defined for every input: no trap on a zero divisor (unsigned: divui)
            return values.integer_divide(arith.DivSIOp, result, vals[0], vals[1])
        return getattr(arith, int_op)(vals[0], vals[1]).result
    return emit


add_builtin("cw_mul", "The component-wise product of two vectors or matrices of one type.",
            _infer_cw("cw_mul"), _emit_cw("MulFOp", "MulIOp"))
add_builtin("cw_div", "The component-wise quotient of two vectors or matrices of one type "
            "(integers truncate toward zero, as `/` does; an integer divided by zero gives 0).",
            _infer_cw("cw_div"), _emit_cw("DivFOp", "DivSIOp"), domain=((-5.0, 5.0), (0.5, 5.0)))


# --- norms and vector/matrix assembly (compositions: their gradients come from the ops') ---

def _vector_and_delta(name):
    def infer(args):
        if len(args) not in (1, 2) or not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float:
            raise TypeError(f"{name}(v[, delta]) needs a float vector, got {', '.join(map(str, args))}")
        if len(args) == 2 and args[1] != args[0].dtype:
            raise TypeError(f"{name}(v, delta) needs delta of type {args[0].dtype}, got {args[1]}")
        return args[0].dtype if name != "smooth_normalize" else args[0]
    return infer


def _vector_scalar_literals(types):
    # A literal delta takes the vector's scalar type.
    if types and isinstance(types[0], T.VectorType):
        return [None] + [types[0].dtype] * (len(types) - 1)
    return [None] * len(types)


def _delta(vals, scalar):
    return vals[1] if len(vals) > 1 else values.constant(scalar, 1.0)


def _emit_norm_l1(vals, types, result):
    total = None
    for k in range(types[0].length):
        c = math.AbsFOp(vector_d.ExtractOp(vals[0], [], [k]).result).result
        total = c if total is None else arith.AddFOp(total, c).result
    return total


def _emit_norm_huber(vals, types, result):
    """0.5 |v|^2 where |v| <= delta, else delta (|v| - delta / 2)."""
    delta = _delta(vals, result)
    length, _ = _safe_length(vals[0], result)
    half = values.constant(result, 0.5)
    inner = arith.MulFOp(half, emit_dot(vals[0], vals[0], result)).result
    outer = arith.MulFOp(delta, arith.SubFOp(length, arith.MulFOp(half, delta).result).result).result
    small = arith.CmpFOp(arith.CmpFPredicate.OLE, length, delta).result
    return arith.SelectOp(small, inner, outer).result


def _pseudo_huber(v, delta, scalar):
    """delta sqrt(1 + |v|^2 / delta^2)."""
    one = values.constant(scalar, 1.0)
    ratio = arith.DivFOp(emit_dot(v, v, scalar), arith.MulFOp(delta, delta).result).result
    return arith.MulFOp(delta, math.SqrtOp(arith.AddFOp(one, ratio).result).result).result


def _emit_norm_pseudo_huber(vals, types, result):
    return _pseudo_huber(vals[0], _delta(vals, result), result)


def _emit_smooth_normalize(vals, types, result):
    norm = _pseudo_huber(vals[0], _delta(vals, result.dtype), result.dtype)
    return arith.DivFOp(vals[0], vector_d.BroadcastOp(result.mlir(), norm).result).result


add_builtin("norm_l1", "Sum of the absolute values of a float vector's components.",
            _float_vectors("norm_l1", 1, lambda v: v.dtype), _emit_norm_l1, domain=((0.1, 10.0),))
add_builtin("norm_l2", "Euclidean norm of a float vector (length(); zero gradient at the zero vector).",
            _float_vectors("norm_l2", 1, lambda v: v.dtype), _emit_length, domain=((0.1, 10.0),))
add_builtin("norm_huber", "Huber norm of a float vector: 0.5 |v|^2 where |v| <= delta (default 1), else "
            "delta (|v| - delta / 2).", _vector_and_delta("norm_huber"), _emit_norm_huber,
            literal_types=_vector_scalar_literals, domain=((0.1, 3.0), (0.5, 2.0)))
add_builtin("norm_pseudo_huber", "Pseudo-Huber norm of a float vector: delta sqrt(1 + |v|^2 / delta^2) "
            "(delta defaults to 1).", _vector_and_delta("norm_pseudo_huber"), _emit_norm_pseudo_huber,
            literal_types=_vector_scalar_literals, domain=((-3.0, 3.0), (0.5, 2.0)))
add_builtin("smooth_normalize", "The vector divided by its pseudo-Huber norm (norm_pseudo_huber; delta "
            "defaults to 1): smooth at the zero vector.", _vector_and_delta("smooth_normalize"),
            _emit_smooth_normalize, literal_types=_vector_scalar_literals, domain=((-3.0, 3.0), (0.5, 2.0)))


def _infer_skew(args):
    if len(args) != 1 or not isinstance(args[0], T.VectorType) or args[0].length != 3 \
            or not args[0].dtype.is_float:
        raise TypeError(f"skew() needs a float 3-vector, got {', '.join(map(str, args))}")
    return T.matrix((3, 3), args[0].dtype)


def _emit_skew(vals, types, result):
    """[[0, -z, y], [z, 0, -x], [-y, x, 0]]: skew(a) * b == cross(a, b)."""
    x, y, z = (vector_d.ExtractOp(vals[0], [], [k]).result for k in range(3))
    zero = values.constant(result.dtype, 0.0)
    neg = lambda v: arith.NegFOp(v).result  # noqa: E731
    return _matrix_from([[zero, neg(z), y], [z, zero, neg(x)], [neg(y), x, zero]], result)


def _infer_get_diag(args):
    m = _matrix_arg("get_diag", square=True, ints=True)(args)
    return T.vector(m.rows, m.dtype)


def _emit_get_diag(vals, types, result):
    n = result.length
    e = _elements(vals[0], n, n)
    return vector_d.FromElementsOp(result.mlir(), [e[k][k] for k in range(n)]).result


def _vectors_to_matrix(name):
    def infer(args):
        if not args or not all(isinstance(a, T.VectorType) for a in args) or any(a != args[0] for a in args):
            raise TypeError(f"{name}() needs vectors of one type, got {', '.join(map(str, args))}")
        n = len(args)
        return T.matrix((n, args[0].length) if name == "matrix_from_rows" else (args[0].length, n),
                        args[0].dtype)
    return infer


def _emit_matrix_from_vectors(by_rows):
    def emit(vals, types, result):
        comps = [[vector_d.ExtractOp(v, [], [k]).result for k in range(types[0].length)] for v in vals]
        rows = comps if by_rows else [list(col) for col in zip(*comps)]
        return _matrix_from(rows, result)
    return emit


add_builtin("skew", "The 3x3 skew-symmetric matrix of a 3-vector a, with skew(a) * b == cross(a, b).",
            _infer_skew, _emit_skew)
add_builtin("get_diag", "The diagonal of a square matrix, as a vector.", _infer_get_diag, _emit_get_diag)
add_builtin("matrix_from_rows", "The matrix whose rows are the given vectors (of one type).",
            _vectors_to_matrix("matrix_from_rows"), _emit_matrix_from_vectors(True))
add_builtin("matrix_from_cols", "The matrix whose columns are the given vectors (of one type).",
            _vectors_to_matrix("matrix_from_cols"), _emit_matrix_from_vectors(False))


def _infer_arg_extreme(name):
    def infer(args):
        if len(args) != 1 or not isinstance(args[0], T.VectorType) or args[0].dtype.is_bool:
            raise TypeError(f"{name}() needs a numeric vector, got {', '.join(map(str, args))}")
        return T.int32
    return infer


def _emit_arg_extreme(smaller):
    def emit(vals, types, result):
        """The first index of the smallest (largest) component."""
        vec = types[0]
        best = vector_d.ExtractOp(vals[0], [], [0]).result
        index = values.constant(T.int32, 0)
        for k in range(1, vec.length):
            c = vector_d.ExtractOp(vals[0], [], [k]).result
            if vec.dtype.is_float:
                better = arith.CmpFOp(arith.CmpFPredicate.OLT if smaller else arith.CmpFPredicate.OGT,
                                      c, best).result
            else:
                less, greater = ((arith.CmpIPredicate.ult, arith.CmpIPredicate.ugt) if vec.dtype.is_unsigned
                                 else (arith.CmpIPredicate.slt, arith.CmpIPredicate.sgt))
                better = arith.CmpIOp(less if smaller else greater, c, best).result
            best = arith.SelectOp(better, c, best).result
            index = arith.SelectOp(better, values.constant(T.int32, k), index).result
        return index
    return emit


add_builtin("argmin", "Index of the smallest component of a vector (the first, on ties).",
            _infer_arg_extreme("argmin"), _emit_arg_extreme(True), differentiable=False)
add_builtin("argmax", "Index of the largest component of a vector (the first, on ties).",
            _infer_arg_extreme("argmax"), _emit_arg_extreme(False), differentiable=False)



# --- spatial vectors (6-vectors: angular on top, linear below, as Warp) --------------------------

def _spatial_args(name, count):
    def infer(args):
        if len(args) != count or not all(isinstance(a, T.VectorType) and a.length == 6 and a.dtype.is_float
                                          and a == args[0] for a in args):
            raise TypeError(f"{name}() needs {count} float 6-vector(s) of one type, got "
                            f"{', '.join(map(str, args))}")
        return args[0]
    return infer


def _halves(v, t):
    return (vector_d.FromElementsOp(T.vector(3, t.dtype).mlir(), _components(v, 6)[:3]).result,
            vector_d.FromElementsOp(T.vector(3, t.dtype).mlir(), _components(v, 6)[3:]).result)


def _join(top, bottom, t):
    return vector_d.FromElementsOp(t.mlir(), _components(top, 3) + _components(bottom, 3)).result


def _emit_spatial_half(first):
    def emit(vals, types, result):
        return _halves(vals[0], types[0])[0 if first else 1]
    return emit


def _emit_spatial_cross(dual):
    def emit(vals, types, result):
        """Motion cross (w_a x w_b, w_a x v_b + v_a x w_b); the dual (force)
        cross (w_a x w_b + v_a x v_b, w_a x v_b)."""
        t3 = T.vector(3, result.dtype)
        (wa, va), (wb, vb) = _halves(vals[0], result), _halves(vals[1], result)
        cross = lambda a, b: _emit_cross([a, b], [t3, t3], t3)  # noqa: E731
        if dual:
            return _join(arith.AddFOp(cross(wa, wb), cross(va, vb)).result, cross(wa, vb), result)
        return _join(cross(wa, wb), arith.AddFOp(cross(wa, vb), cross(va, wb)).result, result)
    return emit


add_builtin("spatial_top", "The top (angular) 3-vector of a spatial 6-vector.",
            lambda a: T.vector(3, _spatial_args("spatial_top", 1)(a).dtype), _emit_spatial_half(True))
add_builtin("spatial_bottom", "The bottom (linear) 3-vector of a spatial 6-vector.",
            lambda a: T.vector(3, _spatial_args("spatial_bottom", 1)(a).dtype), _emit_spatial_half(False))
add_builtin("spatial_dot", "The dot product of two spatial 6-vectors.",
            lambda a: _spatial_args("spatial_dot", 2)(a).dtype, _emit_dot)
add_builtin("spatial_cross", "The motion cross product of spatial 6-vectors a = (w_a, v_a), b = (w_b, v_b): "
            "(w_a x w_b, w_a x v_b + v_a x w_b).", _spatial_args("spatial_cross", 2), _emit_spatial_cross(False))
add_builtin("spatial_cross_dual", "The force (dual) cross product of spatial 6-vectors a, b: "
            "(w_a x w_b + v_a x v_b, w_a x v_b).", _spatial_args("spatial_cross_dual", 2),
            _emit_spatial_cross(True))


# --- transforms (p, q): a translation and a unit quaternion, 7 components, p first -----------------

def _transform_parts(t: ir.Value, tt: T.TransformType):
    """(p, q) of a transform value."""
    comps = _components(t, 7)
    return (vector_d.FromElementsOp(T.vector(3, tt.dtype).mlir(), comps[:3]).result,
            vector_d.FromElementsOp(T.quaternion(tt.dtype).mlir(), comps[3:]).result)


def _transform_of(p: ir.Value, q: ir.Value, result: T.TransformType) -> ir.Value:
    return vector_d.FromElementsOp(result.mlir(), _components(p, 3) + _components(q, 4)).result


def emit_transform_multiply(a: ir.Value, b: ir.Value, result: T.TransformType) -> ir.Value:
    """a b = (R_a p_b + p_a, q_a q_b): b's frame mapped into a's."""
    (pa, qa), (pb, qb) = _transform_parts(a, result), _transform_parts(b, result)
    v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
    p = arith.AddFOp(_emit_quat_rotate([qa, pb], [qt, v3], v3), pa).result
    return _transform_of(p, emit_quat_mul(qa, qb, qt), result)


def _transform_args(name, other=None, other_name=""):
    """An infer for name(t) or name(t, x) with x of type other(t); returns
    the transform's type."""
    def infer(args):
        count = 1 if other is None else 2
        if len(args) != count or not isinstance(args[0], T.TransformType) or (
                other is not None and args[1] != other(args[0])):
            wanted = "a transform" + (f" and {other_name} of its scalar type" if other else "")
            raise TypeError(f"{name}() takes {wanted}; got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _vec3_of(t):
    return T.vector(3, t.dtype)


def _spatial_of(t):
    return T.vector(6, t.dtype)


def _infer_transform_identity(args, dtype):
    if args:
        raise TypeError(f"transform_identity() takes only dtype, got {len(args)} more arguments")
    if not dtype.is_float:
        raise TypeError(f"transform_identity() needs a float dtype, got {dtype}")
    return T.transformation(dtype)


def _emit_transform_identity(vals, types, result, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return vector_d.FromElementsOp(result.mlir(), [zero] * 6 + [one]).result


def _infer_point_or_vector(name):
    """name(t: transform, v: vec3) or name(m: mat44, v: vec3) -> vec3."""
    def infer(args):
        if len(args) == 2 and isinstance(args[0], T.TransformType) and args[1] == _vec3_of(args[0]):
            return args[1]
        if len(args) == 2 and isinstance(args[0], T.MatrixType) and args[0].shape == (4, 4) \
                and args[1] == _vec3_of(args[0]):
            return args[1]
        raise TypeError(f"{name}() takes a transform or a 4x4 matrix, and a 3-vector of its scalar type; "
                        f"got {', '.join(map(str, args))}")
    return infer


def _emit_point_or_vector(point):
    def emit(vals, types, result):
        """t: R v (+ p for a point); M: the upper 3x3 of M times v (+ M's last
        column for a point: M acts on column vectors, as in Warp)."""
        if isinstance(types[0], T.TransformType):
            p, q = _transform_parts(vals[0], types[0])
            rotated = _emit_quat_rotate([q, vals[1]], [T.quaternion(result.dtype), result], result)
            return arith.AddFOp(rotated, p).result if point else rotated
        e = _elements(vals[0], 4, 4)
        v = _components(vals[1], 3)
        comps = []
        for r in range(3):
            acc = e[r][3] if point else None
            for c in range(3):
                term = arith.MulFOp(e[r][c], v[c]).result
                acc = term if acc is None else arith.AddFOp(acc, term).result
            comps.append(acc)
        return vector_d.FromElementsOp(result.mlir(), comps).result
    return emit


def _emit_transform_inverse(vals, types, result):
    """(-R^T p, q^-1)."""
    p, q = _transform_parts(vals[0], result)
    v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
    qi = _emit_quat_inverse([q], [qt], qt)
    return _transform_of(arith.NegFOp(_emit_quat_rotate([qi, p], [qt, v3], v3)).result, qi, result)


def _emit_transform_to_matrix(vals, types, result):
    """[[R, p], [0, 0, 0, 1]]."""
    p, q = _transform_parts(vals[0], types[0])
    m3 = T.matrix((3, 3), result.dtype)
    r = _elements(_emit_quat_to_matrix([q], [T.quaternion(result.dtype)], m3), 3, 3)
    pc = _components(p, 3)
    zero, one = values.constant(result.dtype, 0.0), values.constant(result.dtype, 1.0)
    return _matrix_from([r[k] + [pc[k]] for k in range(3)] + [[zero, zero, zero, one]], result)


def _infer_transform_from_matrix(args):
    if len(args) != 1 or not isinstance(args[0], T.MatrixType) or args[0].shape != (4, 4) \
            or not args[0].dtype.is_float:
        raise TypeError(f"transform_from_matrix() takes a float 4x4 matrix, got {', '.join(map(str, args))}")
    return T.transformation(args[0].dtype)


def _emit_transform_from_matrix(vals, types, result):
    """p: the last column's top three; q: quat_from_matrix of the upper 3x3."""
    e = _elements(vals[0], 4, 4)
    m3 = T.matrix((3, 3), result.dtype)
    q = _emit_quat_from_matrix([_matrix_from([row[:3] for row in e[:3]], m3)], [m3], T.quaternion(result.dtype))
    p = vector_d.FromElementsOp(T.vector(3, result.dtype).mlir(), [e[k][3] for k in range(3)]).result
    return _transform_of(p, q, result)


def _infer_transform_compose(args):
    if len(args) == 3 and isinstance(args[1], T.QuatType) and args[0] == _vec3_of(args[1]) \
            and args[2] == args[0]:
        return T.matrix((4, 4), args[1].dtype)
    raise TypeError("transform_compose() takes a position 3-vector, a rotation quaternion and a scale 3-vector "
                    f"of one scalar type; got {', '.join(map(str, args))}")


def _emit_transform_compose(vals, types, result):
    """[[R diag(s), p], [0, 0, 0, 1]]."""
    p, q, s = vals
    m3 = T.matrix((3, 3), result.dtype)
    r = _elements(_emit_quat_to_matrix([q], [types[1]], m3), 3, 3)
    sc, pc = _components(s, 3), _components(p, 3)
    zero, one = values.constant(result.dtype, 0.0), values.constant(result.dtype, 1.0)
    rows = [[arith.MulFOp(r[k][c], sc[c]).result for c in range(3)] + [pc[k]] for k in range(3)]
    return _matrix_from(rows + [[zero, zero, zero, one]], result)


def _emit_transform_twist(wrench):
    def emit(vals, types, result):
        """Twist (w, v) -> (R w, R v + p x R w); wrench (tau, f) -> (R tau + p x R f, R f)."""
        p, q = _transform_parts(vals[0], types[0])
        top, bottom = _halves(vals[1], result)
        v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
        rot = lambda v: _emit_quat_rotate([q, v], [qt, v3], v3)  # noqa: E731
        moved = rot(bottom if wrench else top)
        other = arith.AddFOp(rot(top if wrench else bottom), _emit_cross([p, moved], [v3, v3], v3)).result
        return _join(other, moved, result) if wrench else _join(moved, other, result)
    return emit


def _infer_velocity_at_point(args):
    if len(args) == 2 and isinstance(args[0], T.VectorType) and args[0].length == 6 and args[0].dtype.is_float \
            and args[1] == T.vector(3, args[0].dtype):
        return args[1]
    raise TypeError("velocity_at_point() takes a spatial 6-vector (angular, linear) and a 3-vector of its "
                    f"scalar type; got {', '.join(map(str, args))}")


def _emit_velocity_at_point(vals, types, result):
    """w x r + v for the twist (w, v)."""
    w, v = _halves(vals[0], types[0])
    return arith.AddFOp(_emit_cross([w, vals[1]], [result, result], result), v).result


add_builtin("transform_identity", "transform_identity(dtype=float): the identity transform (p = 0, q = identity).",
            _infer_transform_identity, _emit_transform_identity, differentiable=False,
            static_params=(StaticParam("dtype", "dtype", T.float32),), static_positional=True)
add_builtin("transform_get_translation", "The translation p of a transform.",
            lambda a: _vec3_of(_transform_args("transform_get_translation")(a)),
            lambda v, t, r: _transform_parts(v[0], t[0])[0])
add_builtin("transform_get_rotation", "The rotation quaternion q of a transform.",
            lambda a: T.quaternion(_transform_args("transform_get_rotation")(a).dtype),
            lambda v, t, r: _transform_parts(v[0], t[0])[1])
add_builtin("transform_multiply", "transform_multiply(a, b) = a * b = (R_a p_b + p_a, q_a q_b).",
            _transform_args("transform_multiply", lambda t: t, "a transform"),
            lambda v, t, r: emit_transform_multiply(v[0], v[1], r))
add_builtin("transform_point", "transform_point(t, p) = R p + t.p; transform_point(M, p) = M (p, 1) for a 4x4 "
            "matrix M acting on column vectors (as in Warp).",
            _infer_point_or_vector("transform_point"), _emit_point_or_vector(True))
add_builtin("transform_vector", "transform_vector(t, v) = R v (no translation); transform_vector(M, v) = the "
            "upper 3x3 of M times v.", _infer_point_or_vector("transform_vector"), _emit_point_or_vector(False))
add_builtin("transform_inverse", "The inverse transform (-R^T p, q^-1).",
            _transform_args("transform_inverse"), _emit_transform_inverse)
add_builtin("transform_to_matrix", "The 4x4 matrix [[R, p], [0, 0, 0, 1]] of a transform.",
            lambda a: T.matrix((4, 4), _transform_args("transform_to_matrix")(a).dtype), _emit_transform_to_matrix)
add_builtin("transform_from_matrix", "The transform of a 4x4 rigid matrix [[R, p], [0, 0, 0, 1]] (q by "
            "quat_from_matrix of R).", _infer_transform_from_matrix, _emit_transform_from_matrix)
add_builtin("transform_compose", "transform_compose(p, q, s): the 4x4 matrix [[R diag(s), p], [0, 0, 0, 1]].",
            _infer_transform_compose, _emit_transform_compose)
add_builtin("transform_twist", "transform_twist(t, x): the twist x = (w, v) in t's destination frame: "
            "(R w, R v + p x R w).", lambda a: _spatial_of(_transform_args("transform_twist", _spatial_of, "a spatial 6-vector")(a)),
            _emit_transform_twist(False))
add_builtin("transform_wrench", "transform_wrench(t, x): the wrench x = (tau, f) in t's destination frame: "
            "(R tau + p x R f, R f).", lambda a: _spatial_of(_transform_args("transform_wrench", _spatial_of, "a spatial 6-vector")(a)),
            _emit_transform_twist(True))
add_builtin("velocity_at_point", "velocity_at_point(qd, r): the velocity w x r + v at offset r of a body "
            "moving with twist qd = (w, v).", _infer_velocity_at_point, _emit_velocity_at_point)


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


# --- matrix decompositions: svd3, svd2, eig3, qr3 --------------------------------------------------
#
# Each is a fixed number of plane rotations built from arith/math ops, so its
# derivatives (reverse and forward) are those of the rotations the C++ passes
# differentiate: exact at convergence for distinct singular values /
# eigenvalues. Matrices are lists of rows of scalar SSA values here.

#: Jacobi sweeps (each rotates the pairs (0, 1), (0, 2), (1, 2) of a 3x3
#: matrix once) by bit width. The off-diagonal part falls quadratically: over
#: random, ill-conditioned and nearly repeated spectra, at most 2.4e-6 of the
#: matrix's size is left after 3 sweeps and rounding level after 4; float64
#: takes a fifth as margin (its rounding level is lower), float16 needs 3.
_JACOBI_SWEEPS = {16: 3, 32: 4, 64: 5}
_PAIRS3 = ((0, 1), (0, 2), (1, 2))


class _Scalar:
    """Scalar float arithmetic of one dtype on SSA values."""

    def __init__(self, dtype):
        self.dtype = dtype

    def c(self, v):
        return values.constant(self.dtype, v)

    def add(self, a, b):
        return arith.AddFOp(a, b).result

    def sub(self, a, b):
        return arith.SubFOp(a, b).result

    def mul(self, a, b):
        return arith.MulFOp(a, b).result

    def div(self, a, b):
        return arith.DivFOp(a, b).result

    def neg(self, a):
        return arith.NegFOp(a).result

    def abs(self, a):
        return math.AbsFOp(a).result

    def max(self, a, b):
        return arith.MaximumFOp(a, b).result

    def sqrt(self, a):
        return math.SqrtOp(a).result

    def select(self, cond, a, b):
        return arith.SelectOp(cond, a, b).result

    def less(self, a, b):
        return arith.CmpFOp(arith.CmpFPredicate.OLT, a, b).result

    def dot(self, a, b):
        total = self.mul(a[0], b[0])
        for x, y in zip(a[1:], b[1:]):
            total = self.add(total, self.mul(x, y))
        return total


def _hypot_parts(s: _Scalar, a, b):
    """(a / r, b / r, r) for r = hypot(a, b), scaled by max(|a|, |b|) so that
    no square overflows or underflows; (1, 0, 0) where a = b = 0, with finite
    derivatives there (the divisions see 1 where the guard is taken)."""
    m = s.max(s.abs(a), s.abs(b))
    zero = arith.CmpFOp(arith.CmpFPredicate.OEQ, m, s.c(0.0)).result
    # divided, not multiplied by 1 / m: that reciprocal overflows for a
    # subnormal m (float16 below 6e-5), and 0 * inf is NaN
    safe = s.select(zero, s.c(1.0), m)
    an, bn = s.div(a, safe), s.div(b, safe)
    # in [1, sqrt 2]; sqrt sees 1 where guarded, so its derivative stays finite
    rn = s.sqrt(s.select(zero, s.c(1.0), s.add(s.mul(an, an), s.mul(bn, bn))))
    cos, sin = s.div(an, rn), s.div(bn, rn)
    return s.select(zero, s.c(1.0), cos), s.select(zero, s.c(0.0), sin), s.mul(m, rn)


def _jacobi_rotation(s: _Scalar, app, aqq, apq):
    """(c, s) of the rotation J (J_pp = J_qq = c, J_pq = s, J_qp = -s) with
    (J^T S J)_pq = 0 for the symmetric S = [[app, apq], [apq, aqq]], of angle
    t in [-pi/4, pi/4]: cos 2t = |d| / r, sin 2t = sign(d) h / r for
    d = aqq - app, h = 2 apq, r = hypot(d, h) (no rotation where d = h = 0);
    c = sqrt((1 + cos 2t) / 2) >= sqrt(1/2), s = sin 2t / (2 c)."""
    d, h = s.sub(aqq, app), s.mul(s.c(2.0), apq)
    cos2, sin2, _ = _hypot_parts(s, s.abs(d), h)
    sin2 = s.select(s.less(d, s.c(0.0)), s.neg(sin2), sin2)
    c = s.sqrt(s.mul(s.add(s.c(1.0), cos2), s.c(0.5)))
    return c, s.div(sin2, s.mul(s.c(2.0), c))


def _rotate_columns(s: _Scalar, m, p, q, c, sn):
    """M J for the Jacobi rotation J of the pair (p, q): column p becomes
    c m_p - s m_q, column q becomes s m_p + c m_q."""
    m = [list(row) for row in m]
    for row in m:
        x, y = row[p], row[q]
        row[p] = s.sub(s.mul(c, x), s.mul(sn, y))
        row[q] = s.add(s.mul(sn, x), s.mul(c, y))
    return m


def _transposed_rows(m):
    return [list(col) for col in zip(*m)]


def _identity_rows(s: _Scalar, n):
    return [[s.c(1.0 if r == c else 0.0) for c in range(n)] for r in range(n)]


def _jacobi_loop(s: _Scalar, mats, types, sweep):
    """``sweep`` (lists of rows -> lists of rows) run _JACOBI_SWEEPS times in
    an scf.for carrying the 3x3 matrices ``mats``."""
    mlir_mats = [_matrix_from(m, t) for m, t in zip(mats, types)]
    index = ir.IndexType.get()
    bound = lambda v: arith.ConstantOp(index, v).result  # noqa: E731
    loop = scf.ForOp(bound(0), bound(_JACOBI_SWEEPS[s.dtype.bits]), bound(1), mlir_mats)
    with ir.InsertionPoint(loop.body):
        inner = [_elements(v, t.rows, t.cols) for v, t in zip(loop.inner_iter_args, types)]
        scf.YieldOp([_matrix_from(m, t) for m, t in zip(sweep(*inner), types)])
    return [_elements(v, t.rows, t.cols) for v, t in zip(loop.results, types)]


def _swap_columns_if(s: _Scalar, cond, mats, i, j):
    """Where ``cond``: column i of each matrix becomes column j, and column j
    minus column i (a rotation by pi/2, keeping the determinant's sign)."""
    out = []
    for m in mats:
        m = [list(row) for row in m]
        for row in m:
            x, y = row[i], row[j]
            row[i] = s.select(cond, y, x)
            row[j] = s.select(cond, s.neg(x), y)
        out.append(m)
    return out


def _one_sided_jacobi(s: _Scalar, a, n, mt):
    """(B, V) with B = A V, V a rotation and the columns of B orthogonal
    (Hestenes: each rotation is the Jacobi rotation of the Gram matrix of
    two columns), B's columns sorted by decreasing length."""
    pairs = _PAIRS3 if n == 3 else ((0, 1),)

    def sweep(b, v):
        for p, q in pairs:
            bt = _transposed_rows(b)
            c, sn = _jacobi_rotation(s, s.dot(bt[p], bt[p]), s.dot(bt[q], bt[q]), s.dot(bt[p], bt[q]))
            b, v = _rotate_columns(s, b, p, q, c, sn), _rotate_columns(s, v, p, q, c, sn)
        return b, v

    if n == 3:
        b, v = _jacobi_loop(s, [a, _identity_rows(s, 3)], [mt, mt], sweep)
    else:  # one rotation diagonalizes a 2x2 Gram matrix; the second mops up rounding
        b, v = sweep(*sweep(a, _identity_rows(s, 2)))
    for i, j in (((0, 1), (1, 2), (0, 1)) if n == 3 else ((0, 1),)):
        bt = _transposed_rows(b)
        b, v = _swap_columns_if(s, s.less(s.dot(bt[i], bt[i]), s.dot(bt[j], bt[j])), [b, v], i, j)
    return b, v


def _givens_qr(s: _Scalar, a, n):
    """(Q, R) with A = Q R, Q a rotation (a product of Givens rotations) and
    R upper triangular with R_kk >= 0 for k < n - 1 (R's last diagonal entry
    has the sign of det A)."""
    r, q = [list(row) for row in a], _identity_rows(s, n)
    for k, i in (_PAIRS3 if n == 3 else ((0, 1),)):
        c, sn, _ = _hypot_parts(s, r[k][k], r[i][k])
        rk, ri = r[k], r[i]
        r[k] = [s.add(s.mul(c, x), s.mul(sn, y)) for x, y in zip(rk, ri)]
        r[i] = [s.sub(s.mul(c, y), s.mul(sn, x)) for x, y in zip(rk, ri)]
        for row in q:
            x, y = row[k], row[i]
            row[k] = s.add(s.mul(c, x), s.mul(sn, y))
            row[i] = s.sub(s.mul(c, y), s.mul(sn, x))
    # Below the diagonal: -s r_kk + c r_ik = 0, exactly, and so is its derivative.
    return q, [[s.c(0.0) if col < k else x for col, x in enumerate(row)] for k, row in enumerate(r)]


#: Builtins whose value outputs (eigenvalues, singular values) are computed
#: so that their first derivatives are exact also where those values repeat
#: (Hellmann-Feynman: through the decomposition's vectors held constant);
#: their second derivatives would need the vectors' derivatives, so a
#: forward-over-reverse (Hessian) kernel calling one is a GradientError.
FIRST_ORDER_ONLY = ("eig3", "svd3", "svd2")


def _frozen(rows):
    """The entries of a matrix (rows of SSA scalars) through which no gradient flows."""
    return [[adjit_d.StopGradientOp(x.type, x).result for x in row] for row in rows]


def _svd(vals, n, mt):
    """(U, sigma, V) of an n x n matrix: one-sided Jacobi gives A V = B with
    orthogonal columns sorted by length, and the Givens QR of B gives U and
    sigma = diag(R). Each sigma_k gets the derivative of u_k^T A v_k with U
    and V held constant (its value up to rounding): u_k v_k^T, exact
    also for repeated singular values (through the rotations it is not)."""
    s = _Scalar(mt.dtype)
    b, v = _one_sided_jacobi(s, _elements(vals[0], n, n), n, mt)
    u, r = _givens_qr(s, b, n)
    sigma = [r[k][k] for k in range(n)]
    if n == 2:  # both nonnegative: U takes the sign of det A
        negative = s.less(sigma[1], s.c(0.0))
        sigma[1] = s.select(negative, s.neg(sigma[1]), sigma[1])
        for row in u:
            row[1] = s.select(negative, s.neg(row[1]), row[1])
    a = _elements(vals[0], n, n)
    fu, fv = _frozen(u), _frozen(v)
    sigma = [_with_derivative_of(s, sigma[k], _quadratic_form(s, [row[k] for row in fu], a,
                                                               [row[k] for row in fv], n)) for k in range(n)]
    return (_matrix_from(u, mt), vector_d.FromElementsOp(T.vector(n, mt.dtype).mlir(), sigma).result,
            _matrix_from(v, mt))


def _with_derivative_of(s, value, form):
    """``value`` (bit for bit) with the derivatives of ``form`` (equal to it up
    to rounding): stop(value) + (form - stop(form))."""
    def stop(x):
        return adjit_d.StopGradientOp(x.type, x).result
    return s.add(stop(value), s.sub(form, stop(form)))


def _quadratic_form(s, x, a, y, n):
    """x^T A y of SSA scalars."""
    total = None
    for r in range(n):
        row = None
        for c in range(n):
            term = s.mul(a[r][c], y[c])
            row = term if row is None else s.add(row, term)
        term = s.mul(x[r], row)
        total = term if total is None else s.add(total, term)
    return total


def _emit_eig3(vals, types, result):
    """Cyclic Jacobi on (A + A^T) / 2: S <- J^T S J, Q <- Q J, then the
    eigenvalues diag(S) sorted ascending with Q's columns. Each eigenvalue is
    given the derivative of q_k^T S q_k with Q held constant (its value is
    the same up to rounding): q_k q_k^T, exact also for repeated eigenvalues
    (through the rotations it is not)."""
    mt = types[0]
    s = _Scalar(mt.dtype)
    e = _elements(vals[0], 3, 3)
    sym = [[s.mul(s.c(0.5), s.add(e[r][c], e[c][r])) for c in range(3)] for r in range(3)]

    def sweep(a, q):
        for p, r in _PAIRS3:
            c, sn = _jacobi_rotation(s, a[p][p], a[r][r], a[p][r])
            a = _transposed_rows(_rotate_columns(s, _transposed_rows(_rotate_columns(s, a, p, r, c, sn)),
                                                 p, r, c, sn))
            q = _rotate_columns(s, q, p, r, c, sn)
        return a, q

    a, q = _jacobi_loop(s, [sym, _identity_rows(s, 3)], [mt, mt], sweep)
    d = [a[k][k] for k in range(3)]
    for i, j in ((0, 1), (1, 2), (0, 1)):
        swap = s.less(d[j], d[i])
        d[i], d[j] = s.select(swap, d[j], d[i]), s.select(swap, d[i], d[j])
        (q,) = _swap_columns_if(s, swap, [q], i, j)
    fq = _frozen(q)
    d = [_with_derivative_of(s, d[k], _quadratic_form(s, [row[k] for row in fq], sym, [row[k] for row in fq], 3))
         for k in range(3)]
    out = (_matrix_from(q, mt), vector_d.FromElementsOp(T.vector(3, mt.dtype).mlir(), d).result)
    return (out, []) if len(vals) == 1 else (None, list(out))


def _emit_svd(n):
    def emit(vals, types, result):
        out = _svd(vals, n, types[0])
        return (out, []) if len(vals) == 1 else (None, list(out))
    return emit


def _emit_qr3(vals, types, result):
    mt = types[0]
    q, r = _givens_qr(_Scalar(mt.dtype), _elements(vals[0], 3, 3), 3)
    out = (_matrix_from(q, mt), _matrix_from(r, mt))
    return (out, []) if len(vals) == 1 else (None, list(out))


def _infer_decomposition(name, n, parts, names):
    """``name(A)`` returns the parts (of A's scalar type); ``name(A, *outs)``
    writes them (Warp's two forms)."""
    def infer(args):
        a = args[0] if args else None
        if isinstance(a, T.MatrixType) and a.shape == (n, n) and a.dtype.is_float:
            want = tuple(part(a.dtype) for part in parts)
            if len(args) == 1:
                return want
            if tuple(args[1:]) == want:
                return None
        outs = [f"{out} ({part(T.float32)})" for out, part in zip(names, parts)]
        raise TypeError(f"{name}() takes a float {n}x{n} matrix: {', '.join(names)} = {name}(A), or "
                        f"{name}(A, {', '.join(names)}) writing {', '.join(outs[:-1])} and {outs[-1]} of A's "
                        f"scalar type; got {', '.join(map(str, args)) or 'no arguments'}")
    return infer


_M33, _V3 = (lambda d: T.matrix((3, 3), d)), (lambda d: T.vector(3, d))
_M22, _V2 = (lambda d: T.matrix((2, 2), d)), (lambda d: T.vector(2, d))

add_builtin("svd3", "U, sigma, V = svd3(A): the singular value decomposition A = U diag(sigma) V^T of a 3x3 "
            "matrix; svd3(A, U, sigma, V) writes them (as Warp). U and V are rotations (determinant +1); sigma is "
            "sorted by decreasing magnitude, sigma[0] and sigma[1] are >= 0 and sigma[2] has the sign of "
            "det A (Warp's convention). One-sided Jacobi (4 sweeps in float32, 5 in float64), then a Givens "
            "QR. Column pairs of U and V are determined up to a common sign; derivatives of U and V need "
            "distinct singular values, those of sigma are exact also where they repeat (first derivatives "
            "only: a Hessian through svd3 is a GradientError).",
            _infer_decomposition("svd3", 3, (_M33, _V3, _M33), ("U", "sigma", "V")), _emit_svd(3),
            rebinds=(1, 2, 3))
add_builtin("svd2", "U, sigma, V = svd2(A): the singular value decomposition A = U diag(sigma) V^T of a 2x2 "
            "matrix; svd2(A, U, sigma, V) writes them (as Warp). sigma >= 0, sorted decreasing; V is a rotation "
            "and U has the sign of det A as its determinant (as Warp). Column pairs of U and V are determined "
            "up to a common sign; derivatives of U and V need distinct singular values, those of sigma are "
            "exact also where they repeat (first derivatives only).",
            _infer_decomposition("svd2", 2, (_M22, _V2, _M22), ("U", "sigma", "V")), _emit_svd(2),
            rebinds=(1, 2, 3))
add_builtin("eig3", "Q, d = eig3(A): the eigen-decomposition A = Q diag(d) Q^T of a symmetric 3x3 matrix; "
            "eig3(A, Q, d) writes them (as Warp). Of (A + A^T) / 2 for a nonsymmetric A. d is sorted ascending "
            "(Warp leaves the order unspecified) and Q is a rotation (determinant +1) whose columns are the "
            "eigenvectors, each determined up to sign (with its partner column's). Cyclic Jacobi (4 sweeps in "
            "float32, 5 in float64); derivatives of Q need distinct eigenvalues, those of d are exact also where "
            "eigenvalues repeat (first derivatives only: a Hessian through eig3 is a GradientError).",
            _infer_decomposition("eig3", 3, (_M33, _V3), ("Q", "d")), _emit_eig3, rebinds=(1, 2))
add_builtin("qr3", "Q, R = qr3(A): the QR decomposition A = Q R of a 3x3 matrix; qr3(A, Q, R) writes them (as "
            "Warp). Q is a rotation (determinant +1, Warp's convention), R upper triangular with R[0, 0], "
            "R[1, 1] >= 0 and R[2, 2] of the sign of det A. Givens rotations; derivatives need a full-rank A.",
            _infer_decomposition("qr3", 3, (_M33, _M33), ("Q", "R")), _emit_qr3, rebinds=(1, 2))


# --- more quaternions: slerp, roll/pitch/yaw, swing-twist ------------------------------------------

def _scalar_ops(dtype):
    """Small helpers building scalar float arithmetic of ``dtype``."""
    f = lambda v: values.constant(dtype, v)  # noqa: E731
    add = lambda a, b: arith.AddFOp(a, b).result  # noqa: E731
    sub = lambda a, b: arith.SubFOp(a, b).result  # noqa: E731
    mul = lambda a, b: arith.MulFOp(a, b).result  # noqa: E731
    return f, add, sub, mul


def _infer_quat_slerp(args):
    if len(args) == 3 and isinstance(args[0], T.QuatType) and args[1] == args[0] and args[2] == args[0].dtype:
        return args[0]
    raise TypeError(f"quat_slerp() takes two quaternions and a parameter t of their scalar type; got "
                    f"{', '.join(map(str, args))}")


def _emit_quat_slerp(vals, types, result):
    """As Warp defines it: q0 (q0* q1)^t, the power through the axis and angle
    of the relative rotation q0* q1 (quat_inverse: the conjugate), so the
    shorter arc for unit quaternions, and the same derivatives as Warp's in
    every direction (also off the unit sphere)."""
    a, b, t = vals
    relative = emit_quat_mul(_emit_quat_inverse([a], [result], result), b, result)
    axis, angle = _axis_angle(relative, result)
    turn = _emit_quat_from_axis_angle([axis, arith.MulFOp(t, angle).result], [None, None], result)
    return emit_quat_mul(a, turn, result)


def _infer_quat_rpy(args):
    if len(args) == 3 and isinstance(args[0], T.ScalarType) and args[0].is_float and args[1] == args[0] \
            and args[2] == args[0]:
        return T.quaternion(args[0])
    raise TypeError(f"quat_rpy() takes roll, pitch and yaw of one float type; got {', '.join(map(str, args))}")


def _emit_quat_rpy(vals, types, result):
    """qz(yaw) qy(pitch) qx(roll): roll, pitch, yaw about the fixed x, y, z axes."""
    dtype = result.dtype
    f, add, sub, mul = _scalar_ops(dtype)
    zero = f(0.0)

    def axis_quat(k, angle):
        half = mul(angle, f(0.5))
        comps = [zero, zero, zero, math.CosOp(half).result]
        comps[k] = math.SinOp(half).result
        return vector_d.FromElementsOp(result.mlir(), comps).result

    roll, pitch, yaw = vals
    return emit_quat_mul(axis_quat(2, yaw), emit_quat_mul(axis_quat(1, pitch), axis_quat(0, roll), result),
                         result)


def _emit_quat_to_rpy(vals, types, result):
    """The inverse of quat_rpy: roll = atan2(2 (w x + y z), 1 - 2 (x^2 + y^2)),
    pitch = asin(2 (w y - z x)) (its argument clamped to [-1, 1]),
    yaw = atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))."""
    dtype = result.dtype
    f, add, sub, mul = _scalar_ops(dtype)
    x, y, z, w = _components(vals[0], 4)
    two = f(2.0)
    roll = math.Atan2Op(mul(two, add(mul(w, x), mul(y, z))),
                        sub(f(1.0), mul(two, add(mul(x, x), mul(y, y))))).result
    s = mul(two, sub(mul(w, y), mul(z, x)))
    pitch = math.AsinOp(arith.MinimumFOp(arith.MaximumFOp(s, f(-1.0)).result, f(1.0)).result).result
    yaw = math.Atan2Op(mul(two, add(mul(w, z), mul(x, y))),
                       sub(f(1.0), mul(two, add(mul(y, y), mul(z, z))))).result
    return vector_d.FromElementsOp(result.mlir(), [roll, pitch, yaw]).result


def _infer_twist(name, result):
    def infer(args):
        if len(args) == 2 and isinstance(args[1], T.QuatType) and args[0] == T.vector(3, args[1].dtype):
            return result(args[1])
        raise TypeError(f"{name}() takes a unit axis 3-vector and a quaternion of one scalar type; got "
                        f"{', '.join(map(str, args))}")
    return infer


def _twist_parts(axis, q, dtype):
    """(dot(q.xyz, axis), q.w): the twist about ``axis`` is their quaternion
    (dot axis, w), normalized."""
    comps = _components(q, 4)
    u = vector_d.FromElementsOp(T.vector(3, dtype).mlir(), comps[:3]).result
    return emit_dot(u, axis, dtype), comps[3]


def _emit_quat_twist(vals, types, result):
    axis, q = vals
    dtype = result.dtype
    along, w = _twist_parts(axis, q, dtype)
    p = arith.MulFOp(axis, vector_d.BroadcastOp(T.vector(3, dtype).mlir(), along).result).result
    twist = vector_d.FromElementsOp(result.mlir(), _components(p, 3) + [w]).result
    return _emit_normalize([twist], [result], result)


def _emit_quat_twist_angle(signed):
    def emit(vals, types, result):
        """Signed: 2 atan2(dot(q.xyz, axis), w); unsigned: 2 atan2(|dot|, w)
        (2 acos of the normalized twist's w)."""
        along, w = _twist_parts(vals[0], vals[1], result)
        if not signed:
            along = math.AbsFOp(along).result
        return arith.MulFOp(values.constant(result, 2.0), math.Atan2Op(along, w).result).result
    return emit


add_builtin("quat_slerp", "quat_slerp(a, b, t): spherical linear interpolation from the rotation a (t = 0) "
            "to b (t = 1) along the shorter arc.", _infer_quat_slerp, _emit_quat_slerp,
            domain=(None, None, (0.0, 1.0)))
add_builtin("quat_rpy", "quat_rpy(roll, pitch, yaw): the rotation by roll, pitch and yaw about the fixed x, y "
            "and z axes (qz * qy * qx).", _infer_quat_rpy, _emit_quat_rpy)
add_builtin("quat_to_rpy", "The (roll, pitch, yaw) of a unit quaternion (the inverse of quat_rpy; pitch in "
            "[-pi/2, pi/2]).", lambda a: T.vector(3, _quat_arg("quat_to_rpy", a, 1).dtype), _emit_quat_to_rpy)
add_builtin("quat_twist", "quat_twist(axis, q): the twist of q about the unit axis (swing-twist "
            "decomposition), a unit quaternion.", _infer_twist("quat_twist", lambda q: q), _emit_quat_twist)
add_builtin("quat_twist_angle", "quat_twist_angle(axis, q): the twist angle of q about the unit axis, unsigned "
            "(in [0, pi] for q.w >= 0, (pi, 2 pi] otherwise).", _infer_twist("quat_twist_angle", lambda q: q.dtype),
            _emit_quat_twist_angle(False))
add_builtin("quat_twist_angle_signed", "quat_twist_angle_signed(axis, q): the twist angle of q about the unit "
            "axis, positive by the right-hand rule.", _infer_twist("quat_twist_angle_signed", lambda q: q.dtype),
            _emit_quat_twist_angle(True))


# --- Euler angles for any axis sequence -----------------------------------------------------------

def _pick(index, options):
    """``options[index]`` for a runtime int32 index in range(len(options))."""
    out = options[-1]
    for n in range(len(options) - 2, -1, -1):
        is_n = arith.CmpIOp(arith.CmpIPredicate.eq, index, values.constant(T.int32, n)).result
        out = arith.SelectOp(is_n, options[n], out).result
    return out


def _infer_euler(name, first, result):
    def infer(args):
        if len(args) == 4 and isinstance(args[0], first) and args[0].length in (3, 4) and args[0].dtype.is_float \
                and (first is T.QuatType or type(args[0]) is T.VectorType and args[0].length == 3) \
                and all(a == T.int32 for a in args[1:]):
            return result(args[0].dtype)
        raise TypeError(f"{name}() takes a {'quaternion' if first is T.QuatType else 'float 3-vector'} and three "
                        f"int axis indices (i, j, k in 0..2); got {', '.join(map(str, args))}")
    return infer


def _emit_quat_from_euler(vals, types, result):
    """qk qj qi, qa the rotation by e[a] about axis a (fixed axes, i first)."""
    e, i, j, k = vals
    f, add, sub, mul = _scalar_ops(result.dtype)
    angles = _components(e, 3)
    zero = f(0.0)

    def about(axis):
        half = mul(_pick(axis, angles), f(0.5))
        s, c = math.SinOp(half).result, math.CosOp(half).result
        comps = [arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, axis, values.constant(T.int32, n)).result,
                                s, zero).result for n in range(3)]
        return vector_d.FromElementsOp(result.mlir(), comps + [c]).result

    return emit_quat_mul(about(k), emit_quat_mul(about(j), about(i), result), result)


def _emit_quat_to_euler(vals, types, result):
    """Bernardes and Viollet's direct method ("Quaternion to Euler angles
    conversion", PLOS ONE 2022) for any sequence: angles t1 (about i), t2
    (about j), t3 (about k; for a proper sequence, i == k, stored at the
    remaining index), as Warp's quat_to_euler places them."""
    q, i, j, k = vals
    dtype = result.dtype
    f, add, sub, mul = _scalar_ops(dtype)
    i32 = lambda v: values.constant(T.int32, v)  # noqa: E731
    x, y, z, w = _components(q, 4)
    proper = arith.CmpIOp(arith.CmpIPredicate.eq, i, k).result
    k = arith.SelectOp(proper, arith.SubIOp(arith.SubIOp(i32(3), i).result, j).result, k).result
    # the Levi-Civita sign of (i, j, k): +1 for a cyclic order, -1 otherwise
    levi = arith.MulIOp(arith.MulIOp(arith.SubIOp(i, j).result, arith.SubIOp(j, k).result).result,
                        arith.SubIOp(k, i).result).result
    sign = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.sgt, levi, i32(0)).result, f(1.0), f(-1.0)).result
    qi, qj, qk = _pick(i, [x, y, z]), _pick(j, [x, y, z]), _pick(k, [x, y, z])
    qk_signed = mul(qk, sign)
    a = arith.SelectOp(proper, w, sub(w, qj)).result
    b = arith.SelectOp(proper, qi, add(qi, qk_signed)).result
    c = arith.SelectOp(proper, qj, add(qj, w)).result
    d = arith.SelectOp(proper, qk_signed, sub(qk_signed, qi)).result
    ab, cd = add(mul(a, a), mul(b, b)), add(mul(c, c), mul(d, d))
    cosine = sub(arith.DivFOp(mul(f(2.0), ab), add(ab, cd)).result, f(1.0))
    t2 = math.AcosOp(arith.MinimumFOp(arith.MaximumFOp(cosine, f(-1.0)).result, f(1.0)).result).result
    plus, minus = math.Atan2Op(b, a).result, math.Atan2Op(d, c).result
    # at gimbal lock (t2 = 0 or pi) t1 is free: 0, and t3 takes the whole turn
    at_zero = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(t2).result, f(1e-6)).result
    at_pi = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(sub(t2, f(3.141592653589793))).result,
                         f(1e-6)).result
    locked = arith.OrIOp(at_zero, at_pi).result
    t1 = arith.SelectOp(locked, f(0.0), sub(plus, minus)).result
    t3 = arith.SelectOp(at_zero, mul(f(2.0), plus),
                        arith.SelectOp(at_pi, mul(f(2.0), minus), add(plus, minus)).result).result
    t2 = arith.SelectOp(proper, t2, sub(t2, f(3.141592653589793 / 2))).result
    t3 = arith.SelectOp(proper, t3, mul(t3, sign)).result
    comps = []
    for n in range(3):
        is_i = arith.CmpIOp(arith.CmpIPredicate.eq, i, i32(n)).result
        is_j = arith.CmpIOp(arith.CmpIPredicate.eq, j, i32(n)).result
        comps.append(arith.SelectOp(is_i, t1, arith.SelectOp(is_j, t2, t3).result).result)
    return vector_d.FromElementsOp(result.mlir(), comps).result


_EULER_LITERALS = lambda types: [None, T.int32, T.int32, T.int32][:len(types)]  # noqa: E731

add_builtin("quat_from_euler", "quat_from_euler(e, i, j, k): the rotation by e[i], e[j], e[k] about the fixed axes "
            "i, j, k in that order (qk qj qi; e indexed by axis).",
            _infer_euler("quat_from_euler", T.VectorType, T.quaternion), _emit_quat_from_euler,
            literal_types=_EULER_LITERALS)
add_builtin("quat_to_euler", "quat_to_euler(q, i, j, k): the angles of q for the axis sequence i, j, k "
            "(the inverse of quat_from_euler for i != k; e indexed by axis).",
            _infer_euler("quat_to_euler", T.QuatType, lambda d: T.vector(3, d)), _emit_quat_to_euler,
            literal_types=_EULER_LITERALS)


# --- ddot, lower_bound ----------------------------------------------------------------------------

def _infer_ddot(args):
    if len(args) == 2 and isinstance(args[0], T.MatrixType) and args[0] == args[1] and args[0].dtype.is_float:
        return args[0].dtype
    raise TypeError(f"ddot() takes two float matrices of one shape, got {', '.join(map(str, args))}")


def _emit_ddot(vals, types, result):
    """sum_ij a_ij b_ij: the rows' dot products, summed."""
    total = None
    for r in range(types[0].rows):
        row = emit_dot(vector_d.ExtractOp(vals[0], [], [r]).result, vector_d.ExtractOp(vals[1], [], [r]).result, result)
        total = row if total is None else arith.AddFOp(total, row).result
    return total


def _infer_lower_bound(args):
    if len(args) in (2, 4) and isinstance(args[0], T.ArrayType) and args[0].ndim == 1 \
            and isinstance(args[0].dtype, T.ScalarType) and not args[0].dtype.is_bool \
            and args[-1] == args[0].dtype and all(a == T.int32 for a in args[1:-1]):
        return T.int32
    raise TypeError("lower_bound() takes a sorted 1-d array of scalars and a value of its type, or the array, "
                    f"int begin and end, and the value; got {', '.join(map(str, args))}")


def _emit_lower_bound(vals, types, result):
    array, value = vals[0], vals[-1]
    if len(vals) == 4:
        begin, end = vals[1], vals[2]
    else:
        begin = values.constant(T.int32, 0)
        end = values.from_index(adjit_d.DimOp(ir.IndexType.get(), array,
                                              ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)).result)
    from .random import emit_lower_bound  # (the draws use it too: sample_cdf)
    return emit_lower_bound(array, begin, end, value, types[0].dtype)


add_builtin("ddot", "ddot(a, b): the double dot product sum_ij a_ij b_ij of two matrices.", _infer_ddot, _emit_ddot)
add_builtin("lower_bound", "lower_bound(a, value) / lower_bound(a, begin, end, value): the first index of the "
            "sorted 1-d array a (in [begin, end)) whose element is >= value; the end if none.",
            _infer_lower_bound, _emit_lower_bound, array_args=True, differentiable=False,
            literal_types=lambda ts: [None] + [T.int32] * (len(ts) - 2) + [
                ts[0].dtype if ts and isinstance(ts[0], T.ArrayType) else None] if len(ts) >= 2 else [None] * len(ts))


# --- in-place and several-result builtins ----------------------------------------------------

def _emit_transform_set(translation):
    def emit(vals, types, result):
        """t with its p (or q) replaced: the call writes t."""
        p, q = _transform_parts(vals[0], types[0])
        return None, [_transform_of(vals[1], q, types[0]) if translation else _transform_of(p, vals[1], types[0])]
    return emit


def _infer_transform_set(name, part):
    def infer(args):
        if len(args) == 2 and isinstance(args[0], T.TransformType) and args[1] == part(args[0].dtype):
            return None
        raise TypeError(f"{name}() takes a transform and its new {part(T.float32).name.replace('float32', 'T')} "
                        f"of the transform's scalar type; got {', '.join(map(str, args))}")
    return infer


def _infer_quat_to_axis_angle(args):
    if len(args) == 1 and isinstance(args[0], T.QuatType):
        return (T.vector(3, args[0].dtype), args[0].dtype)
    if len(args) == 3 and isinstance(args[0], T.QuatType) and args[1] == T.vector(3, args[0].dtype) \
            and args[2] == args[0].dtype:
        return None
    raise TypeError("quat_to_axis_angle() takes a quaternion (and returns axis, angle), or a quaternion, an axis "
                    f"3-vector and an angle to write; got {', '.join(map(str, args))}")


def _axis_angle(q, qt):
    """(axis, angle) of the rotation q: angle in [0, pi] (q's sign chosen so
    that w >= 0), the axis of unit length (zero for no rotation, as Warp's)."""
    dtype = qt.dtype
    f, add, sub, mul = _scalar_ops(dtype)
    x, y, z, w = _components(q, 4)
    flip = arith.CmpFOp(arith.CmpFPredicate.OLT, w, f(0.0)).result
    sign = arith.SelectOp(flip, f(-1.0), f(1.0)).result
    x, y, z, w = (mul(c, sign) for c in (x, y, z, w))
    # |v| is taken at 1 where v = 0, so no infinite derivative of the square
    # root reaches the gradient there (which is zero, as Warp's length and
    # normalize adjoints give at 0).
    s2 = add(add(mul(x, x), mul(y, y)), mul(z, z))
    none = arith.CmpFOp(arith.CmpFPredicate.OLE, s2, f(0.0)).result
    safe = math.SqrtOp(arith.SelectOp(none, f(1.0), s2).result).result
    s = arith.SelectOp(none, f(0.0), safe).result
    angle = mul(f(2.0), math.Atan2Op(s, w).result)
    v3 = T.vector(3, dtype)
    axis = vector_d.FromElementsOp(v3.mlir(), [arith.DivFOp(c, safe).result for c in (x, y, z)]).result
    zero = vector_d.FromElementsOp(v3.mlir(), [f(0.0), f(0.0), f(0.0)]).result
    return arith.SelectOp(none, zero, axis).result, angle


def _emit_quat_to_axis_angle(vals, types, result):
    axis, angle = _axis_angle(vals[0], types[0])
    if len(vals) == 1:
        return (axis, angle), []
    return None, [axis, angle]


def _infer_transform_decompose(args):
    if len(args) == 1 and isinstance(args[0], T.MatrixType) and args[0].shape == (4, 4) and args[0].dtype.is_float:
        d = args[0].dtype
        return (T.vector(3, d), T.quaternion(d), T.vector(3, d))
    raise TypeError(f"transform_decompose() takes a float 4x4 matrix, got {', '.join(map(str, args))}")


def _emit_transform_decompose(vals, types, result):
    """(p, q, s) of M = [[R diag(s), p], [0, 0, 0, 1]]: s the lengths of the
    upper 3x3's columns, R those columns normalized (a zero column left as
    it is), q = quat_from_matrix(R)."""
    v3, qt = result[0], result[1]
    dtype = v3.dtype
    f, add, sub, mul = _scalar_ops(dtype)
    e = _elements(vals[0], 4, 4)
    scales, columns = [], []
    for c in range(3):
        norm = math.SqrtOp(add(add(mul(e[0][c], e[0][c]), mul(e[1][c], e[1][c])), mul(e[2][c], e[2][c]))).result
        zero = arith.CmpFOp(arith.CmpFPredicate.OEQ, norm, f(0.0)).result
        divisor = arith.SelectOp(zero, f(1.0), norm).result
        scales.append(norm)
        columns.append([arith.DivFOp(e[r][c], divisor).result for r in range(3)])
    m3 = T.matrix((3, 3), dtype)
    rotation = _matrix_from([[columns[c][r] for c in range(3)] for r in range(3)], m3)
    q = _emit_quat_from_matrix([rotation], [m3], qt)
    p = vector_d.FromElementsOp(v3.mlir(), [e[r][3] for r in range(3)]).result
    s = vector_d.FromElementsOp(v3.mlir(), scales).result
    return (p, q, s)


def _infer_bit_count(args):
    if len(args) == 1 and isinstance(args[0], T.ScalarType) and args[0].is_int and not args[0].is_bool:
        return T.int32
    raise TypeError(f"bit_count() takes an integer, got {', '.join(map(str, args))}")


def _to_int32(v, t):
    if t.bits == 32:
        return v
    cast = arith.ExtUIOp if t.bits < 32 else arith.TruncIOp
    return cast(T.int32.mlir(), v).result


add_builtin("transform_set_translation", "transform_set_translation(t, p): sets t's translation to p (writes t, "
            "as Warp).", _infer_transform_set("transform_set_translation", lambda d: T.vector(3, d)),
            _emit_transform_set(True), rebinds=(0,))
add_builtin("transform_set_rotation", "transform_set_rotation(t, q): sets t's rotation to q (writes t, as Warp).",
            _infer_transform_set("transform_set_rotation", T.quaternion), _emit_transform_set(False), rebinds=(0,))
add_builtin("quat_to_axis_angle", "axis, angle = quat_to_axis_angle(q): the rotation's unit axis and angle in "
            "[0, pi]; quat_to_axis_angle(q, axis, angle) writes them (as Warp).", _infer_quat_to_axis_angle,
            _emit_quat_to_axis_angle, rebinds=(1, 2))
add_builtin("transform_decompose", "p, q, s = transform_decompose(M): position, rotation and scale of a 4x4 matrix "
            "[[R diag(s), p], [0, 0, 0, 1]].", _infer_transform_decompose,
            lambda v, t, r: _emit_transform_decompose(v, t, r))
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


# The random draws (a module of their own).
from .random import ENTRIES as _RANDOM  # noqa: E402

for _name, _doc, _infer, _emit, _options in _RANDOM:
    add_builtin(_name, _doc, _infer, _emit, **_options)

# Perlin noise (a module of its own).
from .noise import ENTRIES as _NOISE  # noqa: E402

for _name, _doc, _infer, _emit, _options in _NOISE:
    add_builtin(_name, _doc, _infer, _emit, **_options)


def _infer_block_dim(args):
    if args:
        raise TypeError(f"block_dim() takes no arguments, got {len(args)}")
    return T.int32


add_builtin("block_dim", "block_dim(): the number of threads in the calling thread's block. adjit runs kernels on "
            "the CPU, where a launch has no thread blocks (each thread runs alone): 1, as Warp's CPU launches "
            "return (whatever block_dim the launch or module names). (The PTX of adjit.compile(target=\"cuda\") "
            "says 1 too: adjit does not launch it.)", _infer_block_dim,
            lambda v, t, r: values.constant(T.int32, 1), differentiable=False)
