"""Rows of arrays as views: ``row = a[i]`` for a 2-, 3- or 4-d array ``a``.

In Warp, ``a[i]`` on an n-d array is an (n-1)-d array sharing ``a``'s
memory: ``row[j]`` reads ``a[i, j]`` and ``row[j] = v`` writes it. Here a
row is a frontend-level deferred view (RowView): the base array and its
leading indices. ``row[j]`` lowers to the base array's ``a[i, j]`` access,
so bounds checks (naming ``a``), alias analysis and gradients are those of
``a[i, j]``; no IR op is added.

Bound to a local (``row = a[i]``), a view keeps its leading indices in the
environment as locals named ``row[0]``, ``row[1]``, ... (names Python code
cannot spell), so loops and branches carry them as they carry any local (as
a struct's fields are carried); its base array never changes: rebinding
``row`` to a row of another array (or of another rank) is an error.

A ``@func`` parameter given a row is specialized to it (RowViewType): the
function takes the base array and the leading indices, and binds the
parameter to the view, so ``r[j] = v`` inside writes the caller's array.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from .values import Val, from_index, to_index


@dataclass(frozen=True, eq=False)
class RowView:
    """``a[i]`` (``a[i, j]``, ...) of an array with more dimensions: the
    array and ``count`` leading indices, held inline (``inline``) or, once
    bound to the local ``name``, in the environment under ``name[k]``."""

    base: Val
    count: int
    name: str | None = None
    inline: tuple = ()

    @property
    def type(self) -> T.ArrayType:
        """The view's array type: the base's element type, fewer dimensions."""
        return T.ArrayType(self.base.type.dtype, self.base.type.ndim - self.count)

    def __repr__(self):
        return f"a row of an {self.base.type} (a view: {self.type})"


class RowViewType:
    """The type of a ``@func`` parameter given a row: the base array's type
    and the leading indices' types (the function's arguments)."""

    def __init__(self, base: T.ArrayType, index_types: tuple):
        self.base = base
        self.index_types = tuple(index_types)
        self.view = T.ArrayType(base.dtype, base.ndim - len(self.index_types))
        self.name = f"row of {base}"

    def __eq__(self, other):
        return isinstance(other, RowViewType) and (other.base, other.index_types) == (self.base, self.index_types)

    def __hash__(self):
        return hash(("row", self.base, self.index_types))

    def __str__(self):
        return self.name

    def leaves(self, name: str) -> list[tuple[str, T.Type]]:
        return [(f"{name}[array]", self.base)] + [(_leaf(name, k), t) for k, t in enumerate(self.index_types)]


def is_view(v) -> bool:
    return isinstance(v, RowView)


def _leaf(name: str, k: int) -> str:
    return f"{name}[{k}]"


def _items(sl) -> list:
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def indices(fb, view: RowView) -> list[Val]:
    """The view's leading indices (int Vals)."""
    if view.name is None:
        return list(view.inline)
    return [fb.env[_leaf(view.name, k)] for k in range(view.count)]


def leaves(view: RowView) -> list[str]:
    """The locals holding a bound view's leading indices (what control flow carries)."""
    return [_leaf(view.name, k) for k in range(view.count)]


def _index_values(fb, node) -> list[Val]:
    """The (type-checked, concrete) index Vals of subscript ``node``."""
    out = []
    for item in _items(node.slice):
        v = fb.expr(item)
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int \
                or v.type.is_bool:
            raise fb.error(f"array indices must be integers, got {fb.describe(v)}", item, KernelTypeError)
        out.append(fb.concrete(v))
    return out


def _rank(fb, node) -> int | None:
    """Without emitting anything: the number of dimensions of the array or
    row view that ``node`` denotes (an array local, a view local, or ``X[i]``
    with fewer indices than X's rank), else None."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        local = fb.lookup_local(node)
        if is_view(local) or isinstance(local, Val) and isinstance(local.type, T.ArrayType):
            return local.type.ndim
        return None
    if isinstance(node, ast.Subscript):
        inner = _rank(fb, node.value)
        n = len(_items(node.slice))
        if inner is not None and n < inner:
            return inner - n
    return None


def _view_of(fb, node) -> RowView | None:
    """The row view ``node`` denotes (emitting its indices), else None."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        local = fb.lookup_local(node)
        return local if is_view(local) else None
    if isinstance(node, ast.Subscript) and _rank(fb, node) is not None:
        inner = _view_of(fb, node.value) or fb.lookup_local(node.value)
        return narrow(fb, inner, node)
    return None


def narrow(fb, base, node) -> RowView:
    """``a[i]`` of an array (or ``row[i]`` of a view) with fewer indices
    than its dimensions: a view."""
    if is_view(base):
        array, lead = base.base, indices(fb, base)
    else:
        array, lead = base, []
    new = _index_values(fb, node)
    return RowView(array, len(lead) + len(new), inline=tuple(lead + new))


def _check_rank(fb, rank: int, node, what: str) -> None:
    n = len(_items(node.slice))
    if n > rank:
        raise fb.error(f"{what} is a {rank}-d array: it takes {rank} ind{'ex' if rank == 1 else 'ices'}, "
                       f"got {n}", node, KernelTypeError)


def _whole_row(fb, node, ndim: int, rank: int):
    return fb.error(f"cannot assign to {ast.unparse(node)}: it is a row of a {ndim}-d array (a {rank}-d view); "
                    f"assign its elements ({ast.unparse(node)}[j] = ...), or index the array with all "
                    f"{ndim} indices", node, KernelTypeError)


def element(fb, view: RowView, node) -> tuple[Val, list[ir.Value]]:
    """``row[j]`` (all remaining indices): the base array and the index
    values of its element ``a[i, j]``."""
    everything = indices(fb, view) + _index_values(fb, node)
    return view.base, [to_index(fb.materialize(v, v.type), v.type) for v in everything]


def takes(base, node) -> bool:
    """Whether ``base[...]`` (``node``) is a view's business: ``base`` a
    view, or an array given fewer indices than its dimensions."""
    return is_view(base) or (isinstance(base, Val) and isinstance(base.type, T.ArrayType)
                             and len(_items(node.slice)) < base.type.ndim)


def subscript(fb, base, node):
    """``row[j]`` (an element read, or with fewer indices a narrower view)
    and ``a[i]`` of an n-d array (a view)."""
    if not is_view(base):
        return narrow(fb, base, node)
    rank = base.type.ndim
    _check_rank(fb, rank, node, f"{ast.unparse(node.value)} ({base!r})")
    if len(_items(node.slice)) < rank:
        return narrow(fb, base, node)
    array, idx = element(fb, base, node)
    return fb.load_element(array, idx)


def element_access(fb, node):
    """For the subscript ``node`` of an assignment target or a component
    access: (array, index values) when it is an element through a row view
    (``row[j]``, ``a[i][j]``); None when no view is involved. Assigning a
    whole row (``a[i] = ...`` on a 2-d ``a``) is an error."""
    if not isinstance(node, ast.Subscript):
        return None
    rank = _rank(fb, node.value)
    if rank is None:
        return None
    n = len(_items(node.slice))
    local = fb.lookup_local(node.value) if isinstance(node.value, (ast.Name, ast.Attribute)) else None
    base_ndim = local.type.ndim if isinstance(local, Val) else None
    if n < rank:
        view = _view_of(fb, node.value) if base_ndim is None else None
        raise _whole_row(fb, node, base_ndim or view.base.type.ndim, rank - n)
    if base_ndim is not None:
        return None  # a[i, j] on the array itself: the frontend's own path
    view = _view_of(fb, node.value)
    _check_rank(fb, rank, node, f"{ast.unparse(node.value)} ({view!r})")
    return element(fb, view, node)


def attribute(fb, view: RowView, node):
    """``row.shape``: the view's extents (the base's last dimensions)."""
    if node.attr != "shape":
        raise fb.error(f"array rows have no attribute '{node.attr}' in kernels (they have .shape)", node)
    return tuple(_dim(view, d) for d in range(view.count, view.base.type.ndim))


def _dim(view: RowView, d: int) -> Val:
    dim = adjit_d.DimOp(ir.IndexType.get(), view.base.value,
                        ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)).result
    return Val(T.int32, from_index(dim))


def length(view: RowView) -> Val:
    """``len(row)``: its first extent."""
    return _dim(view, view.count)


def bind(fb, name: str, view: RowView) -> None:
    """``name = <view>``: the local ``name`` becomes the view (its leading
    indices copied into ``name[k]``)."""
    old = fb.env.get(name)
    if old is not None:
        same = is_view(old) and old.count == view.count and old.base.value == view.base.value
        if not same and is_view(old):
            raise fb.error(f"'{name}' is a row of one array; rebinding it to a row of another array, or to one "
                           "with another number of indices, is not supported (use another name)", fb.node,
                           KernelTypeError)
        if not same:
            raise fb.error(f"'{name}' holds {fb.describe(old)}; it cannot be rebound to {view!r} (use another "
                           "name)", fb.node, KernelTypeError)
    lead = indices(fb, view)
    for k, v in enumerate(lead):
        fb.env[_leaf(name, k)] = v
    fb.env[name] = RowView(view.base, view.count, name=name)


def merge(fb, name: str, then_v, else_v, node, views: dict) -> list[str]:
    """An ``if`` whose branches bind ``name``, one of them to a row: the
    locals to merge (its leading indices); the view goes into ``views`` to
    be bound after the ``if``."""
    if then_v is None or else_v is None:
        return []  # bound on one path only: not visible after the if
    if not (is_view(then_v) and is_view(else_v) and then_v.count == else_v.count
            and then_v.base.value == else_v.base.value):
        raise fb.error(f"'{name}' is {fb.describe(then_v)} in one branch and {fb.describe(else_v)} in the other; "
                       "a row view must be a row of the same array on both paths", node, KernelTypeError)
    views[name] = then_v
    return leaves(then_v)


def builtin_args(fb, builtin, args, node) -> list:
    """A builtin's arguments with a row given to an atomic
    (``atomic_add(row, j, v)``) replaced by its array and leading indices."""
    if not any(is_view(a) for a in args):
        return args
    if not builtin.name.startswith("atomic_") or not is_view(args[0]) or any(is_view(a) for a in args[1:]):
        raise fb.error(f"{builtin.name}() does not take array rows (views) yet; index the array with all its "
                       "indices instead", node, KernelTypeError)
    view = args[0]
    return [view.base, *indices(fb, view), *args[1:]]


def parameter(fb, fn, view: RowView, want, position: int, node) -> tuple[RowViewType, list[ir.Value]]:
    """A row passed to a ``@func`` parameter: the specialized parameter
    type and the call's arguments for it (the array, the leading indices)."""
    fname = fn.pyfunc.__name__
    if want is not None and want != view.type:
        raise fb.error(f"argument {position + 1} of {fname}() must be {want}, got {view!r}", node, KernelTypeError)
    if getattr(fn, "custom_grad", None) is not None or getattr(fn, "custom_jvp", None) is not None:
        raise fb.error(f"a row of an array cannot be passed to '{fname}', which has a custom adjoint or tangent "
                       "rule, yet; pass the whole array and the row index", node, KernelTypeError)
    lead = indices(fb, view)
    values = [view.base.value] + [fb.materialize(v, v.type) for v in lead]
    return RowViewType(view.base.type, tuple(v.type for v in lead)), values


def bind_parameters(fb, params, arg_types) -> None:
    """In a function specialized to rows: binds each such parameter to its
    view (the array and leading indices are bound already, as its leaves)."""
    for name, t in zip(params, arg_types):
        if isinstance(t, RowViewType):
            fb.env[name] = RowView(fb.env[f"{name}[array]"], len(t.index_types), name=name)
