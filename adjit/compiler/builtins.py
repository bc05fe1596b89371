"""The builtin registry: one entry per builtin function of the kernel language.

Each entry says what a builtin accepts and returns (``infer``, which raises
``TypeError`` with a readable reason), how it is emitted (``emit``), whether it
is differentiable, and documents it. The frontend type-checks calls with
``infer`` before emitting any IR; docs and the gradient fuzzer read the same
entries (``adjit.builtins.registry()``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mlir import ir
from mlir.dialects import arith, math, vector as vector_d

from .. import types as T
from ..errors import AdjitError
from .values import constant


@dataclass
class Builtin:
    """One builtin function of the kernel language."""

    name: str
    doc: str
    infer: Callable[[list[T.Type]], T.Type]
    emit: Callable[[list[ir.Value], list[T.Type], T.Type], ir.Value]
    differentiable: bool = True
    #: For each argument, the open interval of inputs on which the builtin is
    #: smooth (used to draw test inputs away from kinks and poles).
    domain: tuple[tuple[float, float], ...] | None = None
    #: Whether literal arguments adopt the type of the other arguments.
    unify_literals: bool = True

    def __call__(self, *args, **kwargs):
        raise AdjitError(f"adjit.{self.name} can only be called inside an @adjit.kernel or @adjit.func")

    def __repr__(self):
        return f"<adjit builtin {self.name}>"


_REGISTRY: dict[str, Builtin] = {}


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

def _math(op):
    return lambda vals, types, result: op(vals[0]).result


def _emit_abs(vals, types, result):
    if result.dtype.is_float if not isinstance(result, T.ScalarType) else result.is_float:
        return math.AbsFOp(vals[0]).result
    return math.AbsIOp(vals[0]).result


def _is_float(t):
    return (t.is_float if isinstance(t, T.ScalarType) else t.dtype.is_float)


def _emit_min(vals, types, result):
    if _is_float(result):
        return arith.MinimumFOp(vals[0], vals[1]).result
    return arith.MinSIOp(vals[0], vals[1]).result


def _emit_max(vals, types, result):
    if _is_float(result):
        return arith.MaximumFOp(vals[0], vals[1]).result
    return arith.MaxSIOp(vals[0], vals[1]).result


def emit_dot(a: ir.Value, b: ir.Value, scalar: T.ScalarType) -> ir.Value:
    """Sum of the component products of two float vectors."""
    prod = arith.MulFOp(a, b).result
    return vector_d.ReductionOp(scalar.mlir(), vector_d.CombiningKind.ADD, prod).result


def _emit_dot(vals, types, result):
    return emit_dot(vals[0], vals[1], result)


def _emit_length(vals, types, result):
    return math.SqrtOp(emit_dot(vals[0], vals[0], result)).result


def _emit_length_sq(vals, types, result):
    return emit_dot(vals[0], vals[0], result)


def _emit_normalize(vals, types, result):
    length = math.SqrtOp(emit_dot(vals[0], vals[0], result.dtype)).result
    return arith.DivFOp(vals[0], vector_d.BroadcastOp(result.mlir(), length).result).result


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
    ("sqrt", math.SqrtOp, ((1e-3, 1e3),)),
    ("exp", math.ExpOp, ((-5.0, 5.0),)),
    ("log", math.LogOp, ((1e-3, 1e3),)),
    ("sin", math.SinOp, ((-10.0, 10.0),)),
    ("cos", math.CosOp, ((-10.0, 10.0),)),
    ("tanh", math.TanhOp, ((-5.0, 5.0),)),
    ("floor", math.FloorOp, None),
    ("ceil", math.CeilOp, None),
]:
    add_builtin(_name, f"Component-wise {_name} of a float scalar, vector or matrix.",
                _unary_float(_name), _math(_op), domain=_dom,
                differentiable=_name not in ("floor", "ceil"))

add_builtin("abs", "Absolute value (component-wise).", _same_numeric("abs", 1), _emit_abs)
add_builtin("min", "The smaller of two values (component-wise).", _same_numeric("min", 2), _emit_min)
add_builtin("max", "The larger of two values (component-wise).", _same_numeric("max", 2), _emit_max)
add_builtin("dot", "Dot product of two float vectors.",
            _float_vectors("dot", 2, lambda v: v.dtype), _emit_dot)
add_builtin("length", "Euclidean length of a float vector.",
            _float_vectors("length", 1, lambda v: v.dtype), _emit_length,
            domain=((0.1, 10.0),))
add_builtin("length_sq", "Squared Euclidean length of a float vector.",
            _float_vectors("length_sq", 1, lambda v: v.dtype), _emit_length_sq)
add_builtin("normalize", "The vector divided by its length.",
            _float_vectors("normalize", 1, lambda v: v), _emit_normalize,
            domain=((0.1, 10.0),))
add_builtin("cross", "Cross product of two 3-vectors.",
            _float_vectors("cross", 2, lambda v: v), _emit_cross)


def lookup(name: str) -> Builtin | None:
    return _REGISTRY.get(name)
