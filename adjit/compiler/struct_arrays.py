"""Arrays of structs in kernels (``a: adjit.array(dtype=MyStruct)``).

An array of structs is one array per leaf field (``StructArrayType.leaves``):
the kernel's arguments ``a.x``, ``a.inner.y``, ... are ordinary arrays of
one shape, bound in the environment under those names. Field accesses are
rewritten on the AST before the body is built: ``a[i].x`` becomes the
element ``i`` of the array named ``a.x`` (a name no source can spell), so
reads, writes, component writes (``a[i].v[1] = ...``), ``+=`` (an atomic
add), bounds checks, aliasing and gradients are those of any array element.
What remains is the whole element: ``a[i]`` as a value loads every field
into a struct local (``load``), and ``a[i] = s`` stores every field
(``store``).
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from . import values
from .values import StructRef, Val


@dataclass(frozen=True)
class StructArrayRef:
    """An array of structs in a kernel: the arrays of its fields are bound
    under ``prefix.field`` (a nested struct field is a StructArrayRef of its
    own, ``prefix.inner``)."""

    type: T.StructArrayType
    prefix: str

    def __repr__(self) -> str:
        return f"the array of {self.type.dtype.name} structs '{self.prefix}'"


def bind_parameters(fe, params: list[str], body: list[ast.stmt]) -> list[ast.stmt]:
    """Binds the kernel's array-of-struct parameters (their field arrays are
    bound already, as arguments), extends ``no_grad`` to their fields, and
    returns ``body`` with their field accesses rewritten (a copy; ``body``
    itself when there are none)."""
    arrays: dict[str, T.StructArrayType] = {}
    for name, t in zip(params, fe.arg_types):
        if isinstance(t, T.StructArrayType):
            _declare(fe, arrays, name, t)
    if not arrays:
        return body
    named = {p for p in fe.no_grad if p in arrays}
    if named:
        fe.no_grad = frozenset(fe.no_grad - named) | {path for p in named for path, _ in arrays[p].leaves(p)}
    rewriter = _Rewriter(fe, arrays)
    return [rewriter.visit(stmt) for stmt in copy.deepcopy(body)]


def _declare(fe, arrays: dict, prefix: str, t: T.StructArrayType) -> None:
    fe.env[prefix] = StructArrayRef(t, prefix)
    arrays[prefix] = t
    for field, ft in t.dtype.fields.items():
        if isinstance(ft, T.StructType):
            _declare(fe, arrays, f"{prefix}.{field}", T.ArrayType(ft, t.ndim))


class _Rewriter(ast.NodeTransformer):
    """``a[i].x`` -> ``<a.x>[i]`` (nested: ``a[i].s.y`` -> ``<a.s.y>[i]``; ``a[i][j]`` -> ``a[i, j]``),
    ``a.shape`` and ``len(a)`` -> those of the first field's array; other
    uses of a field without an index are errors."""

    def __init__(self, fe, arrays: dict[str, T.StructArrayType]):
        self.fe = fe
        self.arrays = arrays

    def _array_name(self, node) -> str | None:
        return node.id if isinstance(node, ast.Name) and node.id in self.arrays else None

    def _first_field(self, name: str, node) -> ast.Name:
        path = self.arrays[name].leaves(name)[0][0]
        return ast.copy_location(ast.Name(id=path, ctx=ast.Load()), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        value = node.value
        if isinstance(value, ast.Subscript) and self._array_name(value.value):
            name = value.value.id
            struct = self.arrays[name].dtype
            if node.attr not in struct.fields:
                raise self.fe.error(f"struct {struct.name} has no field '{node.attr}' (fields: "
                                    f"{', '.join(struct.fields)})", node)
            field = ast.copy_location(ast.Name(id=f"{name}.{node.attr}", ctx=ast.Load()), value.value)
            return ast.copy_location(ast.Subscript(value=field, slice=value.slice, ctx=node.ctx), node)
        name = self._array_name(value)
        if name:
            if node.attr == "shape":
                return ast.copy_location(ast.Attribute(value=self._first_field(name, value), attr="shape",
                                                       ctx=node.ctx), node)
            raise self.fe.error(f"'{name}' is an array of {self.arrays[name].dtype.name}: index it to reach a "
                                f"field ({name}[i].{node.attr}); arrays of structs have no attribute "
                                f"'{node.attr}'", node)
        return node

    def visit_Subscript(self, node):
        """``a[i][j]`` of an n-d array of structs -> ``a[i, j]``."""
        self.generic_visit(node)
        inner = node.value
        if isinstance(inner, ast.Subscript) and self._array_name(inner.value):
            first = inner.slice.elts if isinstance(inner.slice, ast.Tuple) else [inner.slice]
            rest = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(first) < self.arrays[inner.value.id].ndim:
                indices = ast.copy_location(ast.Tuple(elts=first + rest, ctx=ast.Load()), inner.slice)
                return ast.copy_location(ast.Subscript(value=inner.value, slice=indices, ctx=node.ctx), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        is_len = isinstance(func, ast.Name) and func.id == "len"
        if is_len and len(node.args) == 1 and self._array_name(node.args[0]):
            node.args = [self._first_field(node.args[0].id, node.args[0])]
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        name = self._array_name(node.value)
        if name:
            raise self.fe.error(f"'{name}' is an array of {self.arrays[name].dtype.name}, which cannot be bound "
                                f"to another name; use it by its own name ({name}[i])", node)
        return node


def leaves(fe, ref: StructArrayRef) -> list[tuple[str, Val]]:
    """(path below the array, field array) of each leaf field."""
    return [(path[len(ref.prefix):], fe.env[path]) for path, _ in ref.type.leaves(ref.prefix)]


def load(fe, ref: StructArrayRef, node: ast.Subscript) -> StructRef:
    """``a[i]`` as a value: every field of element ``i`` (the indices
    evaluated once), in a struct local under a hidden name."""
    fields = leaves(fe, ref)
    indices = fe.array_indices(fields[0][1], node.slice, node)
    struct = ref.type.dtype
    fe.structs_made = getattr(fe, "structs_made", 0) + 1
    prefix = f"%{struct.name}{fe.structs_made}"
    for suffix, array in fields:
        dtype = array.type.dtype
        loaded = adjit_d.LoadOp(values.storage_type(dtype), array.value, indices).result
        value = values.from_storage(dtype, loaded) if values.stored_as_bytes(dtype) else \
            fe.no_grad_guard(array, loaded)  # bools: bytes
        fe.env[prefix + suffix] = Val(dtype, value)
    out = StructRef(struct, prefix)
    fe.declare_struct(out)
    return out


def store(fe, ref: StructArrayRef, target: ast.Subscript, value) -> None:
    """``a[i] = s``: every field of ``s`` into element ``i``."""
    struct = ref.type.dtype
    if not (isinstance(value, StructRef) and value.type is struct):
        raise fe.error(f"the elements of '{ref.prefix}' are {struct.name} structs; got {fe.describe(value)}",
                       target, KernelTypeError)
    fields = leaves(fe, ref)
    indices = fe.array_indices(fields[0][1], target.slice, target)
    for suffix, array in fields:
        dtype = array.type.dtype
        v = values.to_storage(dtype, fe.materialize(fe.env[value.prefix + suffix], dtype))  # bools: bytes
        adjit_d.StoreOp(v, array.value, indices)
