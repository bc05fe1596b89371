"""Emitter helpers the rooms of ``adjit.builtins`` share: components of
vectors and matrices, matrices from rows, dot products, scalar arithmetic.

Matrices are vectors of rows in the IR; several emitters work on them as
lists of rows of scalar SSA values (``elements``, ``matrix_from``).
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")


def is_composite(t) -> bool:
    return isinstance(t, (T.VectorType, T.MatrixType))


def components(v: ir.Value, n: int) -> list[ir.Value]:
    return [vector_d.ExtractOp(v, [], [i]).result for i in range(n)]


def elements(m: ir.Value, rows: int, cols: int):
    return [[vector_d.ExtractOp(m, [], [r, c]).result for c in range(cols)] for r in range(rows)]


def matrix_from(rows_of_scalars, t: T.MatrixType) -> ir.Value:
    m = values.constant(t, 0)
    row_t = t.row_type().mlir()
    for r, row in enumerate(rows_of_scalars):
        m = vector_d.InsertOp(vector_d.FromElementsOp(row_t, row).result, m, [], [r]).result
    return m


def emit_dot(a: ir.Value, b: ir.Value, scalar: T.ScalarType) -> ir.Value:
    """Sum of the component products of two vectors (integer ones wrap, as
    their other arithmetic)."""
    prod = (arith.MulFOp if scalar.is_float else arith.MulIOp)(a, b).result
    return vector_d.ReductionOp(scalar.mlir(), vector_d.CombiningKind.ADD, prod).result


def scalar_ops(dtype):
    """Small helpers building scalar float arithmetic of ``dtype``."""
    f = lambda v: values.constant(dtype, v)  # noqa: E731
    add = lambda a, b: arith.AddFOp(a, b).result  # noqa: E731
    sub = lambda a, b: arith.SubFOp(a, b).result  # noqa: E731
    mul = lambda a, b: arith.MulFOp(a, b).result  # noqa: E731
    return f, add, sub, mul


def literal_float_type(types) -> T.ScalarType:
    """The float type a literal component takes among ``types``: the first
    float scalar type other than float32 (literals are float32 until a use
    says otherwise, so such a type comes from a typed value), else float32."""
    for t in types:
        s = T.scalar_of(t) if isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)) else None
        if s is not None and s.is_float and s != T.float32:
            return s
    return T.float32


def with_scalar(t: T.Type, dtype: T.ScalarType) -> T.Type:
    """The type of ``t``'s kind and shape with scalar ``dtype``."""
    if isinstance(t, T.ScalarType):
        return dtype
    if isinstance(t, T.TransformType):
        return T.transformation(dtype)
    if isinstance(t, T.QuatType):
        return T.quaternion(dtype)
    if isinstance(t, T.VectorType):
        return T.vector(t.length, dtype)
    return T.matrix(t.shape, dtype)


def convert_float(x: ir.Value, source: T.Type, dtype: T.ScalarType) -> ir.Value:
    """A float scalar, vector, matrix or quaternion ``x`` of type ``source``
    with its components converted to the float type ``dtype``."""
    s = T.scalar_of(source)
    if s == dtype:
        return x
    if s.bits == dtype.bits:  # float16 <-> bfloat16: through float32 (exact), rounded once
        x, s = arith.ExtFOp(with_scalar(source, T.float32).mlir(), x).result, T.float32
    op = arith.ExtFOp if dtype.bits > s.bits else arith.TruncFOp
    return op(with_scalar(source, dtype).mlir(), x).result
