"""Slices of vectors, quaternions, transforms and matrices in kernels, as Warp's.

``v[a:b:c]`` selects components with Python's slice rules (negative bounds
count from the end, bounds out of range are clamped, negative steps
reverse) on bounds that are constant integers (literals, module constants,
``static(...)``). The result is a plain vector of the selected components,
also for quaternions, transforms and spatial vectors; on a matrix

* ``m[a:b]`` (and ``m[a:b, c:d]``) selects rows (and columns): a matrix;
* ``m[i, a:b]`` / ``m[a:b, j]`` a vector (``i``, ``j`` may be runtime ints).

A selection whose type no kernel takes (0 or 1 components, a matrix with
one row or column) is a located KernelTypeError before any IR is built.

Everything lowers to the per-component ops the autodiff already knows:
a read is ``adjit.extract`` of each selected component inserted into a zero
of the result type; ``x[sl] = y`` writes each component of ``y`` through the
ordinary component assignment (``x[p] = y_k``: an ``adjit.insert`` on a
local, a ``store_component`` on an array element); ``x[sl] += y`` (and
``-=``) adds component by component, so an array element gets Warp's atomic
adds; other operators read the slice, apply the operator and write it back
(``m[:2, :2] *= 2.0``), and on a one-component selection ``*=`` / ``/=`` by a
scalar go component by component. ``*v[a:b]`` in a call unpacks the
selected components (of any count), ``*m[a:b]`` the selected rows and
``*arr[a:b]`` elements of a 1-d array (explicit, non-negative bounds).
"""
from __future__ import annotations

import ast
import itertools

from mlir import ir

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError, KernelValueError
from .values import Val, constant

#: The hidden locals a slice write binds its components (and runtime
#: indices) to while it rewrites itself into component writes.
_HIDDEN = "%slice"
_hidden_ids = itertools.count()


def has_slice(node) -> bool:
    """Whether ``node`` is a subscript with a slice among its indices."""
    if not isinstance(node, ast.Subscript):
        return False
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(i, ast.Slice) for i in items)


def _items(node) -> list:
    return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]


def _bound(fb, node) -> int:
    v = fb.expr(node)
    if isinstance(v, Val) and v.is_literal and isinstance(v.literal, int) and not isinstance(v.literal, bool):
        return v.literal
    raise fb.error(f"Slice component must be a compile-time constant integer, got '{ast.unparse(node)}' "
                   f"({fb.describe(v)}): slice bounds and steps are fixed when the kernel compiles", node,
                   KernelValueError)


def _bounds(fb, item: ast.Slice) -> tuple:
    start, stop, step = (None if b is None else _bound(fb, b) for b in (item.lower, item.upper, item.step))
    if step == 0:
        raise fb.error("slice step cannot be zero", item.step, KernelValueError)
    return start, stop, step


def _index(fb, item, extent: int, t, node):
    """A plain index among slices: a constant int in range (negative from the end), or an int Val."""
    v = fb.expr(item)
    if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int or v.type.is_bool:
        raise fb.error(f"component indices must be integers, got {fb.describe(v)}", item)
    if v.is_literal:
        if not -extent <= v.literal < extent:
            raise fb.error(f"index {v.literal} is out of range for {t}", node)
        return v.literal % extent
    return fb.concrete(v)


def selection(fb, t, node) -> tuple[list[list], tuple[int, ...]]:
    """(the positions of the selected components in result order, the
    result's shape: one extent per sliced axis) of ``node`` on a value of type ``t``."""
    if not isinstance(t, (T.VectorType, T.MatrixType)):
        raise fb.error(f"slices select components of vectors, quaternions, transforms and matrices, not of {t}",
                       node, KernelTypeError)
    items = _items(node)
    if len(items) > len(t.shape):
        raise fb.error(f"{t} takes at most {len(t.shape)} component indices, got {len(items)}", node)
    items += [ast.Slice(None, None, None)] * (len(t.shape) - len(items))  # m[a:b]: whole rows
    axes, shape = [], []
    for item, extent in zip(items, t.shape):
        if isinstance(item, ast.Slice):
            picks = list(range(*slice(*_bounds(fb, item)).indices(extent)))
            axes.append(picks)
            shape.append(len(picks))
        else:
            axes.append([_index(fb, item, extent, t, node)])
    return [list(p) for p in itertools.product(*axes)], tuple(shape)


def _describe_selection(t, shape) -> str:
    if len(shape) == 1:
        return f"{shape[0]} component{'s' if shape[0] != 1 else ''}"
    return f"a {shape[0]}x{shape[1]} block"


def result_type(fb, t, shape, node):
    """The type of a selection of ``shape`` from ``t``, or a located error
    when no kernel takes it (Warp's vector(0), vector(1), 1-row matrices)."""
    scalar = t.dtype
    if len(shape) == 1 and 2 <= shape[0] <= T.MAX_COMPONENTS:
        return T.vector(shape[0], scalar)
    if len(shape) == 2 and min(shape) >= 2 and shape[0] * shape[1] <= T.MAX_COMPONENTS:
        return T.matrix(shape, scalar)
    kind = "vectors of 2 to" if len(shape) == 1 else "matrices of at least 2x2 and at most"
    raise fb.error(f"'{ast.unparse(node)}' selects {_describe_selection(t, shape)} of {t}: adjit's kernels take "
                   f"{kind} {T.MAX_COMPONENTS} scalars (Warp's vector(0), vector(1) and one-row matrices exist on "
                   "the host only)", node, KernelTypeError)


def _component(fb, base: Val, position, node) -> Val:
    if any(isinstance(p, Val) for p in position):
        return fb.dynamic_extract(base, position, node)
    return fb.extract(base, position)


def compose(t, comps: list[Val]) -> Val:
    """A value of type ``t`` from its components in row-major order."""
    value = constant(t, 0)
    for position, c in zip(itertools.product(*map(range, t.shape)), comps):
        value = adjit_d.InsertOp(t.mlir(), c.value, value, ir.DenseI64ArrayAttr.get(list(position))).result
    return Val(t, value)


def read(fb, base: Val, node) -> Val:
    """``base[slice]``: the selected components as a vector or matrix."""
    positions, shape = selection(fb, base.type, node)
    t = result_type(fb, base.type, shape, node)
    return compose(t, [_component(fb, base, p, node) for p in positions])


def unpack(fb, node) -> list[Val]:
    """``*x[slice]`` in a call: the selected components of a vector (or
    matrix row or column), the selected rows of a matrix, or the selected
    elements of a 1-d array, each as an argument."""
    base = fb.expr(node.value)
    if isinstance(base, Val) and isinstance(base.type, T.ArrayType):
        return _unpack_array(fb, base, node)
    if not isinstance(base, Val) or not isinstance(base.type, (T.VectorType, T.MatrixType)):
        raise fb.error(f"*{ast.unparse(node)}: starred slices unpack arrays, vectors, quaternions, transforms "
                       f"and matrices, not {fb.describe(base)}", node, KernelTypeError)
    positions, shape = selection(fb, base.type, node)
    comps = [_component(fb, base, p, node) for p in positions]
    if len(shape) == 1:
        return comps
    row_t = result_type(fb, base.type, (shape[1],), node)
    return [compose(row_t, comps[r * shape[1]:(r + 1) * shape[1]]) for r in range(shape[0])]


def _unpack_array(fb, array: Val, node) -> list[Val]:
    items = _items(node)
    if array.type.ndim != 1 or len(items) != 1:
        raise fb.error("starred slices of arrays take 1-d arrays and one slice", node, KernelTypeError)
    start, stop, step = _bounds(fb, items[0])
    if stop is None:
        raise fb.error("a starred array slice requires explicit upper bound: an array's length is only known at "
                       "launch", node, KernelValueError)
    if (start or 0) < 0 or stop < 0:
        raise fb.error("starred slice bounds cannot be negative for arrays (their length is only known at launch)",
                       node, KernelValueError)
    if (step or 1) < 0:
        raise fb.error("a starred slice step cannot be negative for arrays", node, KernelValueError)
    return [fb.expr(_at(node.value, [k], node)) for k in range(start or 0, stop, step or 1)]


def _at(value_node, position, like) -> ast.Subscript:
    """The AST of ``value_node[position]`` (ints, or names), located at ``like``."""
    items = [ast.Constant(p) if isinstance(p, int) else ast.Name(p, ast.Load()) for p in position]
    index = items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())
    return ast.fix_missing_locations(ast.copy_location(ast.Subscript(value_node, index, ast.Store()), like))


def _target_type(fb, node):
    """The type of the value an assignment target ``node`` holds, without
    loading it when it is (a component of) an array element."""
    element = fb.array_element_target(node)
    if element is not None:
        return element[3]
    value = fb.expr(node)
    if not isinstance(value, Val):
        raise fb.error(f"{fb.describe(value)} cannot be sliced", node, KernelTypeError)
    return value.type


class _Hidden:
    """Binds values to hidden locals for the component statements a slice
    write becomes; unbinds them afterwards."""

    def __init__(self, fb):
        self.fb, self.names = fb, []

    def bind(self, value: Val) -> str:
        name = f"{_HIDDEN}{next(_hidden_ids)}"  # unique: slice writes nest (v[1:4][:2] += w)
        self.fb.env[name] = value
        self.names.append(name)
        return name

    def position(self, position) -> list:
        return [p if isinstance(p, int) else self.bind(p) for p in position]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for name in self.names:
            self.fb.env.pop(name, None)


def _components_of(fb, value, t, target, what: str) -> list[Val]:
    """The components of ``value`` (row-major), which must be a ``t``."""
    kind = T.VectorType if len(t.shape) == 1 else T.MatrixType
    if not isinstance(value, Val) or not isinstance(value.type, kind) or value.type.shape != t.shape or \
            value.type.dtype != t.dtype:
        got = fb.describe(value)
        raise fb.error(f"{what} takes a {t} (the slice '{ast.unparse(target)}' selects "
                       f"{_describe_selection(t, t.shape)} of {t.dtype}), got {got}", target, KernelTypeError)
    return [fb.extract(value, list(p)) for p in itertools.product(*map(range, t.shape))]


def assign(fb, target: ast.Subscript, value) -> None:
    """``x[slice] = value``: one component write per selected component."""
    base_t = _target_type(fb, target.value)
    positions, shape = selection(fb, base_t, target)
    t = result_type(fb, base_t, shape, target)
    comps = _components_of(fb, value, t, target, "this slice assignment")
    with _Hidden(fb) as hidden:
        for p, c in zip(positions, comps):
            fb.assign(_at(target.value, hidden.position(p), target), c)


def aug_assign(fb, stmt: ast.AugAssign) -> None:
    """``x[slice] op= value``."""
    target = stmt.target
    rhs = fb.expr(stmt.value)
    base_t = _target_type(fb, target.value)
    positions, shape = selection(fb, base_t, target)
    try:
        t = result_type(fb, base_t, shape, target)
        invalid = None
    except KernelTypeError as e:
        t, invalid = None, e
    scalar_rhs = isinstance(rhs, Val) and isinstance(rhs.type, T.ScalarType)
    if isinstance(stmt.op, (ast.Add, ast.Sub)):
        if invalid is not None:
            raise invalid
        comps = _components_of(fb, rhs, t, target, f"{fb.op_name(stmt.op)}= on this slice")
    elif t is not None:
        current = read(fb, fb.expr(target.value), target)
        assign(fb, target, fb.binop(stmt.op, current, rhs, stmt))
        return
    elif scalar_rhs and isinstance(stmt.op, (ast.Mult, ast.Div)):
        comps = [rhs] * len(positions)  # a one-component selection scaled: component by component
    else:
        raise invalid
    with _Hidden(fb) as hidden:
        for p, c in zip(positions, comps):
            component = ast.AugAssign(_at(target.value, hidden.position(p), target), stmt.op,
                                      ast.Name(hidden.bind(c), ast.Load()))
            fb.stmt_AugAssign(ast.fix_missing_locations(ast.copy_location(component, stmt)))
