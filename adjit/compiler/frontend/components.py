"""Components of vectors, matrices and transforms (``v.x``, ``m[i, j]``, ``t.p``):
constant and runtime indices, extract and insert; and array indices."""
from __future__ import annotations

import ast
import itertools

from mlir import ir
from mlir.dialects import arith, vector as vector_d

from ... import types as T
from ...dialects import adjit as adjit_d
from ..values import Val, constant, to_index
from .helpers import CMPI_PRED


class Components:
    """FunctionBuilder's component and index addressing."""

    def component_position(self, t, node) -> list[int]:
        """The static component position addressed by `v.x`, `v[i]`, `m[i, j]`, `m[i]`."""
        position = self.component_index(t, node)
        if any(isinstance(p, Val) for p in position):
            raise self.error("this index must be a constant integer", node)
        return position

    def component_index(self, t, node) -> list:
        """The component position addressed by `v.x`, `v[i]`, `m[i, j]`,
        `m[i]`: constant ints (a negative constant counts from the end), or
        (runtime indices) int Vals."""
        if isinstance(node, ast.Attribute):
            if not isinstance(t, T.VectorType) or node.attr not in T.VectorType.COMPONENTS[:t.length]:
                raise self.error(f"{t} has no component '{node.attr}'", node)
            return [T.VectorType.COMPONENTS.index(node.attr)]
        sl = node.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        shape = t.shape if isinstance(t, (T.VectorType, T.MatrixType)) else ()
        if len(items) > len(shape):
            raise self.error(f"{t} takes at most {len(shape)} component indices, got {len(items)}", node)
        position = []
        for item, extent in zip(items, shape):
            v = self.expr(item)
            if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int \
                    or v.type.is_bool:
                raise self.error(f"component indices must be integers, got {self.describe(v)}", item)
            if v.is_literal:
                if not -extent <= v.literal < extent:
                    raise self.error(f"index {v.literal} is out of range for {t}", node)
                position.append(v.literal % extent)  # a constant counts from the end when negative, as Warp's
            else:
                position.append(v)
        return position

    def component_type(self, t, position):
        if not position:
            return t
        if isinstance(t, T.VectorType):
            return t.dtype
        return t.dtype if len(position) == 2 else t.row_type()

    def extract(self, v: Val, position) -> Val:
        ct = self.component_type(v.type, position)
        return Val(ct, adjit_d.ExtractOp(ct.mlir(), v.value, ir.DenseI64ArrayAttr.get(position)).result)

    def dynamic_choices(self, t, position, node):
        """For a position with runtime indices: emits their range checks and
        returns [(condition, static position)] covering every value they may
        take (the condition: the indices are that position)."""
        shape = t.shape
        what = f"{ast.unparse(node.value)} ({t})"
        for p, extent in zip(position, shape):
            if isinstance(p, Val):
                adjit_d.CheckIndexOp(to_index(self.materialize(p, p.type), p.type),
                                     arith.ConstantOp(ir.IndexType.get(), extent).result, what)
        ranges = [range(extent) if isinstance(p, Val) else [p] for p, extent in zip(position, shape)]
        choices = []
        for static in itertools.product(*ranges):
            cond = None
            for p, k in zip(position, static):
                if isinstance(p, Val):
                    c = arith.CmpIOp(CMPI_PRED["eq"], self.materialize(p, p.type), constant(p.type, k)).result
                    cond = c if cond is None else arith.AndIOp(cond, c).result
            choices.append((cond, list(static)))
        return choices

    def dynamic_extract(self, v: Val, position, node) -> Val:
        """``v[k]`` with a runtime ``k``: a select over the components (a
        gradient reaches the selected one only)."""
        choices = self.dynamic_choices(v.type, position, node)
        result = self.extract(v, choices[0][1])
        for cond, static in choices[1:]:
            result = Val(result.type, arith.SelectOp(cond, self.extract(v, static).value, result.value).result)
        return result

    def dynamic_insert(self, v: Val, position, value: ir.Value, node) -> Val:
        """``v[k] = x`` with a runtime ``k``: the component at k replaced."""
        choices = self.dynamic_choices(v.type, position, node)
        result = v.value
        for cond, static in choices:
            inserted = adjit_d.InsertOp(v.type.mlir(), value, v.value, ir.DenseI64ArrayAttr.get(static)).result
            result = arith.SelectOp(cond, inserted, result).result
        return Val(v.type, result)

    def transform_part(self, v: Val, part: str) -> Val:
        """``t.p`` (the translation) or ``t.q`` (the rotation) of a transform."""
        t = v.type
        positions = range(3) if part == "p" else range(3, 7)
        part_t = T.vector(3, t.dtype) if part == "p" else T.quaternion(t.dtype)
        comps = [self.extract(v, [k]).value for k in positions]
        return Val(part_t, vector_d.FromElementsOp(part_t.mlir(), comps).result)

    def with_transform_part(self, v: Val, part: str, value, node) -> Val:
        """``v`` with its part ``p`` or ``q`` replaced by ``value``."""
        t = v.type
        part_t = T.vector(3, t.dtype) if part == "p" else T.quaternion(t.dtype)
        new = self.materialize(self.coerce(value, part_t, node), part_t)
        first = 0 if part == "p" else 3
        comps = [self.extract(v, [k]).value for k in range(7)]
        for k in range(part_t.length):
            comps[first + k] = self.extract(Val(part_t, new), [k]).value
        return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)

    def array_indices(self, array: Val, sl, node) -> list[ir.Value]:
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if len(items) != array.type.ndim:
            raise self.error(f"a {array.type.ndim}-d array needs {array.type.ndim} indices, got {len(items)}",
                             node)
        out = []
        for item in items:
            v = self.expr(item)
            if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int:
                raise self.error(f"array indices must be integers, got {self.describe(v)}", item)
            out.append(to_index(self.materialize(v, v.type), v.type))
        return out
