"""Tables and small type and IR helpers that several rooms of the frontend share."""
from __future__ import annotations

import ast

import numpy as np
from mlir import ir
from mlir.dialects import arith, vector as vector_d

from ... import _adjit
from ... import types as T

#: The names of the attributes the frontend sets (the dialect owns them).
ATTRIBUTE = _adjit.ATTRIBUTE_NAMES

#: arith's comparison predicates by name, as the op builders take them.
CMPF_PRED = {n: int(getattr(arith.CmpFPredicate, n.upper())) for n in ("oeq", "ogt", "oge", "olt", "ole", "une")}
CMPI_PRED = {n: int(getattr(arith.CmpIPredicate, n)) for n in ("eq", "ne", "slt", "sle", "sgt", "sge",
                                                                 "ult", "ule", "ugt", "uge")}


def flat_types(types) -> list:
    """Types as a function signature has them: a struct as its value fields."""
    out = []
    for t in types:
        out += [ft for _, ft in t.leaves("")] if isinstance(t, T.StructType) else [t]
    return out


def has_tangent(t) -> bool:
    """Float scalars, vectors and matrices carry tangents (as adjit-tangent's
    active types)."""
    scalar = T.scalar_of(t)
    return scalar is not None and scalar.is_float


def is_transform_part(t, node) -> bool:
    """Whether ``node`` is ``x.p`` or ``x.q`` of a transform ``x`` of type ``t``."""
    return isinstance(t, T.TransformType) and isinstance(node, ast.Attribute) and node.attr in ("p", "q")


def all_components(mask: ir.Value, t) -> ir.Value:
    """Whether every component of the i1 vector or matrix ``mask`` (of the
    shape of ``t``) is true."""
    i1 = ir.IntegerType.get_signless(1)
    flat = vector_d.ShapeCastOp(ir.VectorType.get([int(np.prod(t.shape))], i1), mask).result
    return vector_d.ReductionOp(i1, vector_d.CombiningKind.AND, flat).result
