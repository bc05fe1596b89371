"""Struct locals: a struct is bound in the environment as its fields, under
``prefix.field``; copying one copies its fields."""
from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith

from ... import types as T
from ...dialects import adjit as adjit_d
from ...errors import KernelTypeError
from .. import views as V
from ..values import StructRef, Val, constant


def null_array(block, t: T.ArrayType, name: str) -> Val:
    """Warp's null array of type ``t``, what the array fields of a struct
    made in a kernel hold (as in Warp): no elements, so false in ``if a:``
    and ``a is None``-style checks, its shape all zeros, and every access
    out of range (reported as such where bounds are checked). Made at the
    start of the function's entry ``block``, so a struct made in a branch
    may be used after it (control flow does not carry arrays)."""
    def make():
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        return adjit_d.ArrayAtAddressOp(t.mlir(), constant(T.uint64, 0), [zero] * t.ndim, name).result
    if block is None:  # (a builder without an entry block of its own: here)
        return Val(t, make())
    with ir.InsertionPoint.at_block_begin(block):
        return Val(t, make())


class Structs:
    """FunctionBuilder's struct locals."""

    def declare_struct(self, ref: StructRef) -> None:
        """Binds ``ref`` (and its nested structs) by name; their value fields
        are bound in the environment already, under ``prefix.field``."""
        self.env[ref.prefix] = ref
        for field, ft in ref.type.fields.items():
            if isinstance(ft, T.StructType):
                self.declare_struct(StructRef(ft, ref.field_name(field)))

    def lookup_local(self, node):
        """The local ``node`` names (a name, or a field of a struct local:
        ``s.arr``, ``s.inner.x``), without emitting anything; else None."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Attribute):
            ref = self.lookup_local(node.value)
            if isinstance(ref, StructRef) and node.attr in ref.type.fields:
                return self.env.get(ref.field_name(node.attr))
        return None

    def struct_field(self, ref: StructRef, field: str, node):
        if field not in ref.type.fields:
            raise self.error(f"struct {ref.type.name} has no field '{field}' (fields: "
                             f"{', '.join(ref.type.fields)})", node)
        value = self.env.get(ref.field_name(field))
        if value is None:
            raise self.error(f"field '{field}' of this {ref.type.name} has no array (a struct made in a kernel "
                             "has no arrays)", node)
        return value

    def assign_struct_field(self, ref: StructRef, target: ast.Attribute, value) -> None:
        field = target.attr
        if field not in ref.type.fields:
            raise self.error(f"struct {ref.type.name} has no field '{field}' (fields: "
                             f"{', '.join(ref.type.fields)})", target)
        ft = ref.type.fields[field]
        if isinstance(ft, T.StructType):
            if not (isinstance(value, StructRef) and value.type is ft):
                raise self.error(f"field '{field}' of {ref.type.name} takes a {ft.name}, got "
                                 f"{self.describe(value)}", target, KernelTypeError)
            self.copy_struct(value, ref.field_name(field))
            return
        if isinstance(ft, T.ArrayType):
            raise self.error(f"the array field '{field}' of {ref.type.name} cannot be rebound in a kernel "
                             "(write its elements)", target)
        self.env[ref.field_name(field)] = self.concrete(self.coerce(value, ft, target))

    def copy_struct(self, ref: StructRef, prefix: str) -> StructRef:
        """Binds a copy of ``ref``'s fields under ``prefix`` (a struct is a value)."""
        for path, _ in ref.type.leaves(ref.prefix):
            destination = prefix + path[len(ref.prefix):]
            if path in self.env:
                self.env[destination] = self.env[path]
            else:
                self.env.pop(destination, None)
        copy = StructRef(ref.type, prefix)
        self.declare_struct(copy)
        return copy

    def new_struct(self, t: T.StructType, node) -> StructRef:
        """``S()`` in a kernel: fields zero, array fields Warp's null array
        (arrays of structs and indexed arrays unset), under a hidden prefix
        until assigned to a name."""
        self.structs_made = getattr(self, "structs_made", 0) + 1
        prefix = f"%{t.name}{self.structs_made}"
        for path, ft in t.leaves(prefix):
            if type(ft) is T.ArrayType:
                # one per field and function, in its entry block: the same array on every path, so it
                # outlives branches (where a builder has no entry block, one here, for each struct)
                key = (t.name, path[len(prefix) + 1:], ft)
                block = getattr(self, "entry_block", None)
                made = self.__dict__.setdefault("null_arrays", {}) if block is not None else {}
                if key not in made:
                    made[key] = null_array(block, ft, f"{key[0]}.{key[1]} (a null array)")
                self.env[path] = made[key]
            elif not isinstance(ft, T.ArrayType):
                self.env[path] = Val(ft, constant(ft, 0))
        ref = StructRef(t, prefix)
        self.declare_struct(ref)
        return ref

    def carried_names(self, names) -> list[str]:
        """The bound locals among ``names`` that control flow carries: a
        struct as its value fields (arrays stay bound)."""
        out = []
        for name in names:
            value = self.env.get(name)
            if isinstance(value, StructRef):
                out += [p for p, t in value.type.leaves(name) if not isinstance(t, T.ArrayType) and p in self.env]
            elif V.is_view(value):
                out += V.leaves(value)  # its leading indices (the array stays bound)
            elif isinstance(value, Val) and isinstance(value.type, T.ArrayType):
                continue  # an array is never rebound (a call's argument: its name rides along)
            elif value is not None:
                out.append(name)
        return out
