"""Assignments: to names, tuples, components of locals, array elements, struct
fields, and augmented assignments (``a[i] += v`` on an array is an atomic)."""
from __future__ import annotations

import ast

from mlir import ir

from ... import language
from ... import types as T
from ...dialects import adjit as adjit_d
from ...errors import KernelSyntaxError, KernelTypeError, KernelValueError
from .. import by_reference as BR
from .. import local_arrays as LA
from .. import slices as S
from .. import struct_arrays as SA
from .. import tiles
from .. import views as V
from ..values import StructRef, Val, to_storage
from .helpers import is_transform_part


class Assignment:
    """FunctionBuilder's assignment statements and their targets."""

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            raise self.error("chained assignment (a = b = c) is not supported", stmt, KernelSyntaxError)
        target = stmt.targets[0]
        for t in target.elts if isinstance(target, ast.Tuple) else [target]:
            if isinstance(t, ast.Name) and any(n == t.id and isinstance(pt, T.LocalArrayType)
                                               for n, pt in self.ref_params):
                raise self.error(f"cannot rebind the local array parameter '{t.id}' (the caller's array, "
                                 "passed by reference): write its elements", t)
        # `i, j = tid()` asks for as many coordinates as there are targets.
        self.tid_count = len(target.elts) if isinstance(target, ast.Tuple) else 1
        try:
            value = self.expr(stmt.value)
        finally:
            self.tid_count = 1
        self.assign(target, value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is None:
            raise self.error("a declaration needs a value", stmt, KernelSyntaxError)
        value = self.expr(stmt.value)
        ann = self.resolve_static(stmt.annotation)
        try:
            want = T.value_type_of(ann)
        except TypeError:
            raise self.error(f"{ann!r} is not a kernel value type", stmt.annotation) from None
        self.assign(stmt.target, self.coerce(value, want, stmt.value))

    def stmt_AugAssign(self, stmt):
        target = stmt.target
        if self.primal_params is not None and isinstance(target, ast.Subscript) and \
                self.is_static(target.value):
            if self.resolve_static(target.value) is language.adjoint:
                return self.accumulate_adjoint(stmt)
        if isinstance(target, ast.Name):
            tiles.check_writable(self, target.id, f"'{ast.unparse(stmt)}'", stmt)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                isinstance(self.env.get(target.value.id), Val) and \
                isinstance(self.env[target.value.id].type, T.TileType) and \
                not tiles._is_element(self.env[target.value.id].type, target):
            raise self.error(f"Compound assignment to a tile view ('{ast.unparse(stmt)}') is not supported, as in "
                             f"Warp: write {ast.unparse(target)} = {ast.unparse(target)} "
                             f"{self.op_name(stmt.op)} ...", stmt, KernelValueError)
        if S.has_slice(target) and not LA.is_local_array(self.lookup_local(target.value)):
            return S.aug_assign(self, stmt)  # v[1:3] += w
        bitwise = {ast.BitAnd: "AtomicAndOp", ast.BitOr: "AtomicOrOp", ast.BitXor: "AtomicXorOp"}
        if type(stmt.op) in bitwise and self.array_element_target(target) is not None:
            # a[i] &= v (|=, ^=) on an array is an atomic and (or, xor), as in Warp.
            array, indices, position, elem_t = self.array_element_target(target)
            scalar = T.scalar_of(elem_t)
            if not (isinstance(scalar, T.ScalarType) and scalar.is_int and not scalar.is_bool and scalar.bits >= 32):
                raise self.error(f"{self.op_name(stmt.op)}= on an array element needs 32- or 64-bit integers, got "
                                 f"{elem_t}", stmt, KernelTypeError)
            v = self.materialize(self.coerce(self.expr(stmt.value), elem_t, stmt.value), elem_t)
            getattr(adjit_d, bitwise[type(stmt.op)])(elem_t.mlir(), v, array.value, indices,
                                                    ir.DenseI64ArrayAttr.get(position))
            return
        if isinstance(stmt.op, (ast.Add, ast.Sub)):
            array_target = self.array_element_target(target)
            if array_target is not None:
                # a[i] += v on an array is an atomic add, as in Warp.
                array, indices, position, elem_t = array_target
                if elem_t == T.bool_:
                    raise self.error("+= and -= are not defined on bool array elements", stmt, KernelTypeError)
                value = self.coerce(self.expr(stmt.value), elem_t, stmt.value)
                v = self.materialize(value, elem_t)
                if isinstance(stmt.op, ast.Sub):
                    v = self.negate(Val(elem_t, v)).value
                adjit_d.AtomicAddOp(elem_t.mlir(), v, array.value, indices,
                                    position=ir.DenseI64ArrayAttr.get(position))
                return
        current = self.expr(target)
        value = self.binop(stmt.op, current, self.expr(stmt.value), stmt)
        self.assign(target, value)

    def accumulate_adjoint(self, stmt):
        """``adjit.adjoint[x] += e`` in a func_grad."""
        target = stmt.target
        if not isinstance(stmt.op, ast.Add) or not isinstance(target.slice, ast.Name) or \
                target.slice.id not in self.primal_params:
            raise self.error("in a func_grad, write adjit.adjoint[<argument>] += <value>", stmt,
                             KernelSyntaxError)
        name = target.slice.id
        t = self.arg_types[self.primal_params.index(name)]
        value = self.concrete(self.coerce(self.expr(stmt.value), t, stmt.value))
        old = self.adjoint_acc.get(name)
        self.adjoint_acc[name] = value if old is None else self.binop(ast.Add(), old, value, stmt)

    def assign(self, target, value):
        if isinstance(target, ast.Tuple):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error("cannot unpack: the right-hand side does not have "
                                 f"{len(target.elts)} values", target)
            for t, v in zip(target.elts, value):
                self.assign(t, v)
            return
        if isinstance(value, tuple):
            raise self.error("cannot assign several values to one name", target)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                isinstance(self.env.get(target.value.id), Val) and \
                isinstance(self.env[target.value.id].type, T.TileType):
            tiles.assign(self, target, value)  # t[i, j] = x, t[1:3] = u: the tile rebound, as a local array
            return
        if S.has_slice(target) and not LA.is_local_array(self.lookup_local(target.value)):
            S.assign(self, target, value)  # v[1:3] = w, m[0, :2] = w: component writes
            return
        if isinstance(target, ast.Name) and V.is_view(value):
            V.bind(self, target.id, value)  # row = a[i]: a view of a's memory
            return
        if isinstance(target, ast.Name) and isinstance(value, StructRef):
            self.copy_struct(value, target.id)  # a struct is a value: b = a copies
            return
        if isinstance(target, ast.Name):
            if not isinstance(value, Val):
                raise self.error(f"cannot assign {value!r} to a local", target)
            value = BR.check_assigned(self, target, value)  # a ref parameter keeps its type
            if target.id in self.env and isinstance(self.env[target.id].type, T.ArrayType):
                raise self.error(f"cannot rebind the array '{target.id}'", target)
            self.env[target.id] = value
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                LA.is_local_array(self.env.get(target.value.id)):
            # A local array element write: the whole array rebound, as a vector component write.
            local = self.env[target.value.id]
            element = self.concrete(self.coerce(value, local.type.dtype, target))
            self.env[target.value.id] = LA.write(self, local, target, element)
            return
        if isinstance(target, ast.Subscript) and isinstance(self.lookup_local(target.value), SA.StructArrayRef):
            SA.store(self, self.lookup_local(target.value), target, value)  # a[i] = s: every field
            return
        array_target = self.array_element_target(target)
        if array_target is not None:
            array, indices, position, elem_t = array_target
            v = to_storage(elem_t, self.materialize(self.coerce(value, elem_t, target), elem_t))  # bools: bytes
            if position:
                adjit_d.StoreComponentOp(v, array.value, indices, ir.DenseI64ArrayAttr.get(position))
            else:
                adjit_d.StoreOp(v, array.value, indices)
            return
        if isinstance(target, ast.Attribute) and isinstance(self.lookup_local(target.value), StructRef):
            self.assign_struct_field(self.lookup_local(target.value), target, value)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            # A component write on a local value: functional insert + rebind.
            base = self.expr(target.value)
            if not isinstance(base, Val) or not isinstance(base.type, (T.VectorType, T.MatrixType)):
                raise self.error("only vector/matrix locals and array elements can be assigned "
                                 "components", target)
            if is_transform_part(base.type, target):
                self.assign(target.value, self.with_transform_part(base, target.attr, value, target))
                return
            position = self.component_index(base.type, target)
            dynamic = any(isinstance(p, Val) for p in position)
            comp_t = self.component_type(base.type, position)
            v = self.materialize(self.coerce(value, comp_t, target), comp_t)
            if dynamic:
                new = self.dynamic_insert(base, position, v, target).value
            else:
                new = adjit_d.InsertOp(base.type.mlir(), v, base.value, ir.DenseI64ArrayAttr.get(position)).result
            self.assign(target.value, Val(base.type, new))
            return
        raise self.error("unsupported assignment target", target, KernelSyntaxError)

    def array_element_target(self, target):
        """For `a[i]`, `a[i].x`, `a[i][k]`: (array, indices, position, element type), else None."""
        position: list[int] = []
        node = target
        # Peel component accesses off the outside of the target.
        comps = []
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if S.has_slice(node):
                return None  # a[i][1:3]: the element is loaded (or stored) whole
            base = node.value
            local = self.lookup_local(base)  # a name, or a struct's field (s.arr)
            access = V.element_access(self, node)  # row[j], a[i][j]: an element through a row view
            if access is not None or (isinstance(local, Val) and isinstance(local.type, T.ArrayType)
                                      and isinstance(node, ast.Subscript)):
                array, indices = access or (local, self.array_indices(local, node.slice, node))
                elem_t = array.type.dtype
                for comp in reversed(comps):
                    if is_transform_part(self.component_type(elem_t, position), comp):
                        return None  # t.p / t.q of an element: the element is loaded and stored whole
                    part = self.component_index(elem_t if not position else
                                                self.component_type(array.type.dtype, position), comp)
                    if any(isinstance(p, Val) for p in part):
                        # A runtime component index: the element is loaded
                        # (or stored) whole, and the component selected.
                        return None
                    position += part
                comp_t = self.component_type(array.type.dtype, position)
                return array, indices, position, comp_t
            comps.append(node)
            node = base
        return None
