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
