"""Indexed arrays in kernels (``ia: adjit.indexedarray(dtype=float, ndim=2)``).

An indexed array parameter is its data array (the argument named ``ia``)
and one int32 index array per dimension (``ia.idx0``, ...; the host passes
the identity for a dimension it does not index): ``IndexedArrayType.leaves``.
Its uses are rewritten on the AST before the body is built, so no new IR
op is needed:

    ia[i, j]            -> <ia.data>[<ia.idx0>[i], <ia.idx1>[j]]
    ia[i][j]            -> the same (all indices first)
    ia.shape[d]         -> <ia.idx{d}>.shape[0];   ia.shape -> the tuple of them
    len(ia)             -> len(<ia.idx0>)
    atomic_*(ia, i, j, v) -> atomic_*(<ia.data>, <ia.idx0>[i], <ia.idx1>[j], v)

(``<name>``: a name no source can spell; ``<ia.data>`` is the data argument.)
Reads, writes, ``+=`` (an atomic add), component accesses, bounds checks
(an index array's entries are checked against the data's dimension when
the data is indexed), alias analysis and both autodiff modes are then those
of ordinary gathers and scatters: the adjoint of a read scatters into the
data's gradient with atomics. Any other use of ``ia`` (binding it to a
name, passing it to a function, indexing fewer dimensions than it has) is
a located error.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from .. import types as T


@dataclass(frozen=True)
class IndexedArrayRef:
    """An indexed array in a kernel: its data is bound under ``name.data``,
    its index arrays under ``name.idx0`` ..."""

    type: T.IndexedArrayType
    name: str

    def __repr__(self) -> str:
        return f"the indexed array '{self.name}'"


def bind_parameters(fe, params: list[str], body: list[ast.stmt]) -> list[ast.stmt]:
    """Binds the kernel's indexed-array parameters (their data and index
    arrays are bound already, as arguments), moves ``no_grad`` to their data,
    and returns ``body`` with their uses rewritten (a copy; ``body`` itself
    when there are none)."""
    arrays: dict[str, T.IndexedArrayType] = {}
    for name, t in zip(params, fe.arg_types):
        if isinstance(t, T.IndexedArrayType):
            arrays[name] = t
            fe.env[_data(name)] = fe.env[name]
            fe.env[name] = IndexedArrayRef(t, name)
    if not arrays:
        return body
    named = {p for p in fe.no_grad if p in arrays}
    if named:
        fe.no_grad = frozenset(fe.no_grad - named) | {_data(p) for p in named}
    rewriter = _Rewriter(fe, arrays)
    return [rewriter.visit(stmt) for stmt in copy.deepcopy(body)]


def _data(name: str) -> str:
    return f"{name}.data"


def _index_array(name: str, d: int) -> str:
    return f"{name}.idx{d}"


def _name(id_: str, like: ast.AST) -> ast.Name:
    return ast.copy_location(ast.Name(id=id_, ctx=ast.Load()), like)


def _items(sl) -> list:
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


class _Rewriter(ast.NodeTransformer):
    """The rewrites of the module docstring, top-down (so that a rewritten
    node's ``ia`` is never seen as a bare use)."""

    def __init__(self, fe, arrays: dict[str, T.IndexedArrayType]):
        self.fe = fe
        self.arrays = arrays

    def _array_name(self, node) -> str | None:
        return node.id if isinstance(node, ast.Name) and node.id in self.arrays else None

    def _dim(self, name: str, d: int, node) -> ast.Subscript:
        """``<name.idx{d}>.shape[0]``: the indexed extent of dimension ``d``."""
        shape = ast.copy_location(ast.Attribute(value=_name(_index_array(name, d), node), attr="shape",
                                                ctx=ast.Load()), node)
        return ast.copy_location(ast.Subscript(value=shape, slice=ast.copy_location(ast.Constant(0), node),
                                               ctx=ast.Load()), node)

    def _gathered(self, name: str, items: list, node) -> list:
        """The data's indices for ``ia[items]``: ``<name.idx{d}>[item]``."""
        ndim = self.arrays[name].ndim
        if len(items) != ndim:
            raise self.fe.error(f"'{name}' is a {ndim}-d indexed array: index all its dimensions "
                                f"({name}[{', '.join('ijkl'[:ndim])}]); got {len(items)} index(es)", node)
        out = []
        for d, item in enumerate(items):
            if isinstance(item, ast.Slice):
                raise self.fe.error(f"indexed array '{name}' cannot be sliced in kernels", node)
            item = self.visit(item)
            out.append(ast.copy_location(ast.Subscript(value=_name(_index_array(name, d), item), slice=item,
                                                       ctx=ast.Load()), item))
        return out

    def visit_Subscript(self, node):
        value = node.value
        name = self._array_name(value)
        # ia[i][j] -> ia[i, j]
        if name is None and isinstance(value, ast.Subscript) and self._array_name(value.value) \
                and len(_items(value.slice)) < self.arrays[value.value.id].ndim:
            name = value.value.id
            items = _items(value.slice) + _items(node.slice)
            value = value.value
        elif name is not None:
            items = _items(node.slice)
        if name is not None:
            indices = self._gathered(name, items, node)
            sl = indices[0] if len(indices) == 1 else ast.copy_location(ast.Tuple(elts=indices, ctx=ast.Load()),
                                                                         node.slice)
            return ast.copy_location(ast.Subscript(value=_name(_data(name), value), slice=sl, ctx=node.ctx), node)
        # ia.shape[d]
        if isinstance(value, ast.Attribute) and value.attr == "shape" and self._array_name(value.value):
            name = value.value.id
            ndim = self.arrays[name].ndim
            d = node.slice
            if not (isinstance(d, ast.Constant) and type(d.value) is int and -ndim <= d.value < ndim):
                raise self.fe.error(f"'{name}.shape' of a {ndim}-d indexed array takes a constant index 0 to "
                                    f"{ndim - 1}", node)
            return self._dim(name, d.value % ndim, node)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node):
        name = self._array_name(node.value)
        if name is None:
            self.generic_visit(node)
            return node
        if node.attr == "shape":
            dims = [self._dim(name, d, node) for d in range(self.arrays[name].ndim)]
            return ast.copy_location(ast.Tuple(elts=dims, ctx=ast.Load()), node)
        raise self.fe.error(f"indexed array '{name}' has no attribute '{node.attr}' in kernels (it has .shape)",
                            node)

    def visit_Call(self, node):
        func = node.func
        fname = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        args = node.args
        if fname == "len" and len(args) == 1 and self._array_name(args[0]):
            return self._dim(args[0].id, 0, node)
        if fname and fname.startswith("atomic_") and args and self._array_name(args[0]):
            name = args[0].id
            ndim = self.arrays[name].ndim
            if len(args) < ndim + 2:
                raise self.fe.error(f"{fname}() of the {ndim}-d indexed array '{name}' takes {ndim} indices and "
                                    f"the value(s), got {len(args) - 1} argument(s) after the array", node)
            indices = self._gathered(name, list(args[1:1 + ndim]), node)
            node.func = self.visit(func)
            node.args = [_name(_data(name), args[0])] + indices + [self.visit(a) for a in args[1 + ndim:]]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if node.id in self.arrays:
            raise self.fe.error(f"indexed array '{node.id}' can only be indexed ({node.id}[i]), measured "
                                f"({node.id}.shape, len({node.id})) or given to an atomic_*() in kernels; it "
                                "cannot be bound to another name nor passed to a function", node)
        return node
