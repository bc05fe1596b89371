"""Tiles in kernels: Warp's tile builtins on the CPU.

A tile is a block-wide array that a block of threads loads, computes with and
stores together. On the CPU a block is one thread (``block_dim()`` is 1, as
in Warp's CPU launches), so a tile is a value of that thread: one SSA
``vector<shape x scalar>`` (T.TileType). Each tile builtin is emitted here as
vector and arith ops on that value (unrolled over its rows or elements), and
its array accesses as the scalar ``adjit.load`` / ``adjit.store`` /
``adjit.atomic_add`` of each element. So tiles need no op, rule or pass of
their own: the adjoint and tangent passes differentiate them through the
vector ops' rules, and the access checks, the alias analysis and the
deterministic atomics see every element access as they see any other.

Out-of-range elements (``bounds_check=True``, the default, as Warp's) read as
zero and are not written: a load reads a clamped index and selects zero, a
store or atomic add is guarded per element. With ``bounds_check=False`` the
accesses go unguarded to adjit's own bounds checks, which report an access
outside the array with its index (Warp would read or write out of bounds).
"""
from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf, vector as vector_d

from .. import language
from .. import types as T
from ..builtins.registry import Builtin
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError, KernelValueError
from . import slices as S
from . import views as V
from .values import StructRef, Val, constant, constant_array, to_index


#: The builtins whose result is, in Warp, a view aliasing their tile argument
#: (named by its parameter): writes through it change that tile.
_VIEWS = {"tile_view": "t", "tile_transpose": "a", "tile_broadcast": "a", "tile_reshape": "t", "tile_squeeze": "t"}


def call(fb, builtin: Builtin, node):
    """Emits a call of the tile builtin ``builtin`` (its ``call`` hook)."""
    bound = _bind(fb, builtin, node)
    result = _HANDLERS[builtin.name](fb, bound, node)
    if builtin.name in _VIEWS:
        result = as_view(result, bound[_VIEWS[builtin.name]], node)
    return result


class _Bound(dict):
    """A call's arguments by parameter name: an ast node, or the default
    (a Python value) where the call does not give one."""


def _bind(fb, builtin: Builtin, node) -> _Bound:
    """Binds a call's arguments to ``builtin.params``; a ``*name`` there
    takes the remaining positional arguments (a list), and the parameters
    after it are keyword-only."""
    names = builtin.params
    defaults = builtin.defaults or {}
    star = next((k for k, n in enumerate(names) if n.startswith("*")), None)
    positional = names if star is None else names[:star]
    named = positional + (() if star is None else names[star + 1:])
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise fb.error(f"{builtin.name}() does not take *args or **kwargs", node)
    if star is None and len(node.args) > len(positional):
        raise fb.error(f"{builtin.name}() takes at most {len(positional)} arguments ({', '.join(positional)}), "
                       f"got {len(node.args)}", node)
    bound = _Bound(zip(positional, node.args))
    if star is not None:
        bound[names[star][1:]] = list(node.args[len(positional):])
    for kw in node.keywords:
        if kw.arg not in named:
            raise fb.error(f"{builtin.name}() got an unexpected keyword argument '{kw.arg}' (it takes "
                           f"{', '.join(names)})", kw)
        if kw.arg in bound:
            raise fb.error(f"{builtin.name}() got multiple values for argument '{kw.arg}'", kw)
        bound[kw.arg] = kw.value
    for name in named:
        if name not in bound:
            if name not in defaults:
                raise fb.error(f"{builtin.name}() needs the argument '{name}'", node)
            bound[name] = defaults[name]
    return bound


# --- reading the arguments --------------------------------------------------------------

def _given(x) -> bool:
    return isinstance(x, ast.AST)


def _tile(fb, x, what: str, node, composite: bool = False) -> Val:
    """A tile argument; ``composite``: whether the builtin takes tiles of
    vectors and matrices too (the others refuse them)."""
    v = fb.expr(x) if _given(x) else None
    if not (isinstance(v, Val) and isinstance(v.type, T.TileType)):
        raise fb.error(f"{what} must be a tile, got {fb.describe(v)}", x if _given(x) else node)
    refuse_stack(fb, v, what, x if _given(x) else node)
    if v.type.composite and not composite:
        refuse_composite(fb, v.type, what, x if _given(x) else node)
    return v


def refuse_stack(fb, v, what: str, node):
    """A tile stack is not a tile: only the tile_stack builtins read and write it."""
    if isinstance(v, Val) and isinstance(v.type, T.TileStackType):
        raise fb.error(f"{what} is a {v.type.name}, not a tile (the tile_stack_* builtins take it)", node,
                       KernelTypeError)


def refuse_composite(fb, t: T.TileType, what: str, node):
    raise fb.error(f"{what} is a tile of {t.dtype}: adjit's tiles of vectors and matrices do not support this yet "
                   "(see docs/tiles.md)", node, KernelTypeError)


class _Target:
    """The array a tile is loaded from or stored to: an array, a row of one
    (``a[i]``, a view) or a slice of one (``a[::2, 1:]``, constant bounds):
    its ``base`` array and, for each of the base's dimensions, either a
    fixed index (an index value) or the range (start, step, extent: index
    values but the step, a constant) the tile's dimension walks;
    ``type`` is the (view's) array type."""

    def __init__(self, base: Val, dims: list, type_: T.ArrayType):
        self.base, self.dims, self.type = base, dims, type_

    @property
    def value(self) -> ir.Value:
        return self.base.value

    @staticmethod
    def whole(base: Val, lead: list) -> "_Target":
        dims = list(lead) + [(_index(0), 1, _dim(base, k)) for k in range(len(lead), base.type.ndim)]
        return _Target(base, dims, T.ArrayType(base.type.dtype, base.type.ndim - len(lead)))


def _dim(array: Val, k: int) -> ir.Value:
    return adjit_d.DimOp(ir.IndexType.get(), array.value, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result


def _slice_range(bounds, n: ir.Value):
    """(start, extent) index values of Python's ``slice(*bounds).indices(n)``
    for a runtime extent ``n`` (constant bounds)."""
    start, stop, step = bounds
    step = 1 if step is None else step

    def norm(x, low, high):  # a bound: from the end if negative, then clamped into [low, high]
        v = _index(x)
        if x < 0:
            v = arith.AddIOp(v, n).result
        return arith.MaxSIOp(arith.MinSIOp(v, high).result, low).result

    if step > 0:
        lo = norm(start, _index(0), n) if start is not None else _index(0)
        hi = norm(stop, _index(0), n) if stop is not None else n
        span = arith.SubIOp(hi, lo).result
    else:
        last = arith.SubIOp(n, _index(1)).result
        lo = norm(start, _index(-1), last) if start is not None else last
        hi = norm(stop, _index(-1), last) if stop is not None else _index(-1)
        span = arith.SubIOp(lo, hi).result
    count = arith.DivSIOp(arith.AddIOp(span, _index(abs(step) - 1)).result, _index(abs(step))).result
    return lo, step, arith.MaxSIOp(count, _index(0)).result


def _array(fb, x, what: str, node) -> _Target:
    if S.has_slice(x):  # a[::2], a[i, 1:5]: a slice of an array (constant bounds), as Warp's
        base = fb.expr(x.value)
        if isinstance(base, Val) and type(base.type) is T.ArrayType:
            items = list(x.slice.elts) if isinstance(x.slice, ast.Tuple) else [x.slice]
            if len(items) > base.type.ndim:
                raise fb.error(f"{ast.unparse(x)}: {len(items)} indices for a {base.type.ndim}-d array", x)
            dims = []
            for k in range(base.type.ndim):
                item = items[k] if k < len(items) else ast.Slice(None, None, None)
                if isinstance(item, ast.Slice):
                    dims.append(_slice_range(S._bounds(fb, item), _dim(base, k)))
                    continue
                i = fb.expr(item)
                if not (isinstance(i, Val) and isinstance(i.type, T.ScalarType) and i.type.is_int
                        and not i.type.is_bool):
                    raise fb.error(f"array indices must be integers or slices, got {fb.describe(i)}", item)
                dims.append(to_index(fb.materialize(i, i.type), i.type))
            ndim = sum(isinstance(d, tuple) for d in dims)
            return _Target(base, dims, T.ArrayType(base.type.dtype, ndim))
    v = fb.expr(x)
    if V.is_view(v) and type(v.base.type) is T.ArrayType:
        lead = [to_index(fb.materialize(i, i.type), i.type) for i in V.indices(fb, v)]
        return _Target.whole(v.base, lead)
    if not (isinstance(v, Val) and type(v.type) is T.ArrayType):
        raise fb.error(f"{what} must be an array, a row or a slice of one, got {fb.describe(v)}", x)
    return _Target.whole(v, [])


def _const_int(fb, x, what: str, v=None) -> int:
    """``v``: x's value when already evaluated."""
    v = fb.expr(x) if v is None else v
    if isinstance(v, Val) and v.is_literal and type(v.literal) is int:
        return v.literal
    raise fb.error(f"{what} must be a constant integer, got {fb.describe(v)}", x)


def _shape(fb, x, what: str, node) -> tuple[int, ...]:
    """A static shape: an int or a tuple of ints (constants), written out or
    a tuple's name (``t.shape``, a constant tuple)."""
    if not _given(x):
        raise fb.error(f"{what} is needed", node)
    if isinstance(x, ast.Tuple):
        shape = tuple(_const_int(fb, item, f"the extents of {what}") for item in x.elts)
    else:
        v = fb.expr(x)
        shape = tuple(_const_int(fb, x, f"the extents of {what}", e) for e in (v if isinstance(v, tuple) else (v,)))
    if not shape or any(n < 1 for n in shape):
        raise fb.error(f"{what} must be positive extents, got {shape}", x)
    return shape


_ELEMENT_TYPES = (T.ScalarType, T.VectorType, T.MatrixType)


def _dtype(fb, x, node, composite: bool = True):
    """A tile's dtype: a scalar, vector or matrix type (``composite``: or a scalar type only)."""
    if not _given(x):
        return x if x is not None else T.float32
    kinds = _ELEMENT_TYPES if composite else T.ScalarType
    if isinstance(x, ast.Attribute) and x.attr == "dtype" and not fb.is_static(x.value):
        v = fb.expr(x.value)  # a.dtype of an array or tile in the kernel, as Warp's
        if isinstance(v, Val) and isinstance(v.type, (T.ArrayType, T.TileType)) and isinstance(v.type.dtype, kinds):
            return v.type.dtype
        if V.is_view(v) and isinstance(v.type.dtype, kinds):
            return v.type.dtype
    if fb.is_static(x):
        resolved = fb.resolve_static(x)
        if composite and isinstance(resolved, (T.VectorType, T.MatrixType)) and not resolved.dtype.is_bool:
            return resolved
        try:
            return T.scalar_type_of(resolved)
        except TypeError:
            pass
    raise fb.error(f"a tile's dtype must be a scalar{', vector or matrix' if composite else ''} type (float, int, "
                   f"adjit.float64{', adjit.vec3, ...' if composite else ''}), got '{ast.unparse(x)}'", x)


def _static(fb, x, kind, what: str):
    """A constant str or bool argument (storage=, bounds_check=, ...)."""
    if not _given(x):
        return x
    if isinstance(x, ast.Constant) and isinstance(x.value, kind):
        return x.value
    v = fb.expr(x)
    if isinstance(v, Val) and v.is_literal and isinstance(v.literal, kind):
        return v.literal
    raise fb.error(f"{what} must be a constant {kind.__name__}, got '{ast.unparse(x)}'", x)


def _storage(fb, x) -> str:
    storage = _static(fb, x, str, "storage")
    if storage not in T.TILE_STORAGES:
        raise fb.error(f"storage must be 'register' or 'shared', got {storage!r}", x)
    return storage


def _tile_type(fb, shape, dtype, storage, node) -> T.TileType:
    try:
        return T.TileType(shape, dtype, storage)
    except TypeError as e:
        raise fb.error(str(e), node) from None


def _offsets(fb, x, ndim: int, what: str, node) -> list[ir.Value]:
    """Runtime integer offsets (one per dimension) as ``index`` values; zeros when not given."""
    if not _given(x):
        return [_index(0)] * ndim
    items = x.elts if isinstance(x, ast.Tuple) else [x]
    if len(items) != ndim:
        raise fb.error(f"{what} needs {ndim} offset{'s' if ndim > 1 else ''}, got {len(items)}", x)
    out = []
    for item in items:
        v = fb.expr(item)
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool):
            raise fb.error(f"the offsets of {what} must be integers, got {fb.describe(v)}", item)
        out.append(to_index(fb.materialize(v, v.type), v.type))
    return out


def _scalar(fb, x, dtype: T.ScalarType, what: str) -> ir.Value:
    return _scalar_value(fb, fb.expr(x), dtype, what, x)


def _scalar_value(fb, v, dtype: T.ScalarType, what: str, x) -> ir.Value:
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType)):
        raise fb.error(f"{what} must be a scalar, got {fb.describe(v)}", x)
    return fb.materialize(fb.coerce(v, dtype, x), dtype)


# --- IR helpers ---------------------------------------------------------------------------

def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


def elements(v: ir.Value, t: T.TileType) -> list[ir.Value]:
    """The tile's elements, row-major: scalars, or vector values (a tile of
    vec3: each a ``vector<3>``, of mat33: a ``vector<3x3>``)."""
    if t.composite:
        return [vector_d.ExtractOp(v, [], list(pos)).result for pos in _row_major(t.shape)]
    return list(vector_d.ToElementsOp(v).results) if t.size > 1 else [vector_d.ExtractOp(
        v, [], [0] * t.ndim).result]


def from_elements(t: T.TileType, values) -> ir.Value:
    """The tile of its elements (row-major; vector values for a tile of vectors or matrices)."""
    values = list(values)
    if t.composite:  # their components, in order: one from_elements of all the tile's scalars
        values = [x for v in values for x in vector_d.ToElementsOp(v).results]
    return vector_d.FromElementsOp(t.mlir(), values).result


def vector_type(t: T.TileType, shape) -> ir.VectorType:
    """The MLIR type of a tile of ``t``'s elements shaped ``shape``."""
    return ir.VectorType.get(list(shape) + list(t.elem_shape), t.scalar.mlir())


def _flat(v: ir.Value, t: T.TileType) -> ir.Value:
    if t.ndim == 1:
        return v
    return vector_d.ShapeCastOp(vector_type(t, [t.size]), v).result


def _reshaped(v: ir.Value, t: T.TileType, shape) -> ir.Value:
    if tuple(shape) == t.shape:
        return v
    return vector_d.ShapeCastOp(vector_type(t, shape), v).result


def _splat(t: T.TileType, scalar: ir.Value) -> ir.Value:
    """A tile of one value: a scalar (in every component of a composite tile's elements) or an element."""
    return _broadcast(t.mlir(), scalar)


def _broadcast(result: ir.Type, x: ir.Value) -> ir.Value:
    """``vector.broadcast`` of a scalar; a vector value (an element of a tile
    of vectors or matrices) is repeated by a from_elements of its
    components instead (the derivative rules take broadcasts of scalars)."""
    if not isinstance(x.type, ir.VectorType):
        return vector_d.BroadcastOp(result, x).result
    parts = list(vector_d.ToElementsOp(x).results)
    copies = math.prod(ir.VectorType(result).shape) // len(parts)
    return vector_d.FromElementsOp(result, parts * copies).result


def _float_op(t: T.TileType, f_op, i_op):
    return f_op if t.scalar.is_float else i_op


def _add(t, x, y):
    return _float_op(t, arith.AddFOp, arith.AddIOp)(x, y).result


def _mul(t, x, y):
    return _float_op(t, arith.MulFOp, arith.MulIOp)(x, y).result


def _row_major(shape):
    return [tuple(int(i) for i in idx) for idx in np.ndindex(*shape)]


def _flat_index(fb, t: T.TileType, idx_vals, node) -> ir.Value:
    """The row-major flat index of runtime indices (an index value), -1 when
    any is out of range (matches no element)."""
    flat = _index(0)
    ok = None
    for k, v in enumerate(idx_vals):
        i = to_index(fb.materialize(v, v.type), v.type)
        if not v.is_literal:  # reported where bounds checks are on, as a local array's index
            adjit_d.CheckIndexOp(i, _index(t.shape[k]), f"index {k} into a tile of shape {t.shape}")
        flat = arith.AddIOp(arith.MulIOp(flat, _index(t.shape[k])).result, i).result
        inside = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, i, _index(0)).result,
                              arith.CmpIOp(arith.CmpIPredicate.slt, i, _index(t.shape[k])).result).result
        ok = inside if ok is None else arith.AndIOp(ok, inside).result
    return arith.SelectOp(ok, flat, _index(-1)).result


def _element_mask(t: T.TileType, flat: ir.Value) -> ir.Value:
    """vector<size x i1> (x the element's shape for a composite tile): true at the element ``flat``."""
    i64 = ir.IntegerType.get_signless(64)
    iota_t = ir.VectorType.get([t.size] + list(t.elem_shape), i64)
    positions = np.broadcast_to(np.arange(t.size, dtype=np.int64).reshape((t.size,) + (1,) * len(t.elem_shape)),
                                (t.size,) + t.elem_shape)
    iota = arith.ConstantOp(iota_t, ir.DenseElementsAttr.get(np.ascontiguousarray(positions), type=iota_t)).result
    wanted = vector_d.BroadcastOp(iota_t, arith.IndexCastOp(i64, flat).result).result
    return arith.CmpIOp(arith.CmpIPredicate.eq, iota, wanted).result


#: The most elements a sub-tile at runtime offsets may select among
#: (candidate offsets times its elements): each candidate is a select.
MAX_GATHER_CANDIDATES = 1 << 16


@dataclass
class SubTile(Val):
    """A tile that is, in Warp, a view of another (``t[i]``, ``t[1:3, :]``,
    tile_view, tile_transpose, tile_broadcast, tile_reshape, tile_squeeze):
    writes to it change the tile it views. adjit's is a copy, so a write to
    one (``tile_assign(row, ...)``, ``row[j] = x``, ``row += u``, a @func
    writing it) is refused while the viewed tile's local (``of``) exists
    under another name, never silently lost. (``t = tile_reshape(t, ...)``
    then ``t += u`` is fine: nothing else sees the old tile.)"""

    source: str = ""
    of: str | None = None


def as_view(v: Val, source_node, node) -> Val:
    """``v`` marked as a view of the tile ``source_node`` evaluates to."""
    of = source_node.id if isinstance(source_node, ast.Name) else None
    if isinstance(v, SubTile) and of is None:
        of = v.of  # (a view of a view: the first tile)
    return SubTile(v.type, v.value, source=ast.unparse(node), of=of)


def check_writable(fb, name: str, what: str, node) -> None:
    """Refuses a write to local ``name`` when it holds a view of another local tile."""
    v = fb.env.get(name)
    if isinstance(v, SubTile) and v.of is not None and v.of != name and v.of in fb.env:
        raise fb.error(f"{what} writes '{name}', a view of the tile '{v.of}' ({v.source}); in Warp that writes "
                       f"'{v.of}' too, which adjit's views (copies) do not do yet: write '{v.of}' itself "
                       "(tile_assign(t, u, offset=...) or t[i, j] = x)", node, KernelTypeError)


def _gather(fb, tile: Val, starts, steps, counts, out_shape, node) -> Val:
    """The sub-tile of ``tile`` taking, along each dimension k, ``counts[k]``
    positions from ``starts[k]`` by ``steps[k]``, shaped ``out_shape`` (its
    elements row-major). A start may be a runtime int Val: the sub-tile is
    then chosen among those at each valid start by selects (zeros when the
    start leaves the tile, as a runtime index of one element reads zero)."""
    t = tile.type
    out = _tile_type(fb, out_shape, t.dtype, t.storage, node)
    src = elements(tile.value, t)
    strides = [int(np.prod(t.shape[k + 1:])) for k in range(t.ndim)]
    positions = _row_major(counts)

    def picks(first):
        return from_elements(out, [src[sum((f + p * st) * sd for f, p, st, sd in zip(first, pos, steps, strides))]
                                   for pos in positions])

    dynamic = [k for k, x in enumerate(starts) if isinstance(x, Val)]
    if not dynamic:
        return Val(out, picks(starts))
    ranges = []
    for k in dynamic:  # the starts that keep every position inside the tile
        span = (counts[k] - 1) * steps[k]
        ranges.append([f for f in range(t.shape[k]) if 0 <= f + span < t.shape[k]])
    if int(np.prod([len(r) for r in ranges])) * out.size > MAX_GATHER_CANDIDATES:
        raise fb.error(f"a sub-tile of shape {out.shape} at a runtime offset of a tile of shape {t.shape}: too "
                       "many candidates for adjit's unrolled tiles (use constant offsets or smaller tiles)", node)
    result = _select_among(fb, out, constant(out, 0), [starts[k] for k in dynamic], ranges,
                           lambda choice: picks([dict(zip(dynamic, choice)).get(k, x) for k, x in enumerate(starts)]))
    return Val(out, result)


def _selection(fb, t: T.TileType, node, gather: list | None = None, given: list | None = None):
    """(starts, steps, counts, shape) of ``t[...]`` (``node``) with slices or fewer
    indices than dimensions: per dimension the first position (an int, or a
    runtime int Val for a plain index), the step and the count; the shape of
    the selection (the sliced dimensions)."""
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) > t.ndim:
        raise fb.error(f"a tile of shape {t.shape} takes at most {t.ndim} indices, got {len(items)}", node,
                       KernelTypeError)
    items += [ast.Slice(None, None, None)] * (t.ndim - len(items))
    starts, steps, counts, shape = [], [], [], []
    for k, (item, extent) in enumerate(zip(items, t.shape)):
        if isinstance(item, ast.Slice):
            picked = range(*slice(*S._bounds(fb, item)).indices(extent))
            if not picked:
                raise fb.error(f"'{ast.unparse(node)}' selects a zero-length axis of a tile of shape {t.shape} (an "
                               "empty tile)", node, KernelValueError)
            starts.append(picked.start)
            steps.append(picked.step)
            counts.append(len(picked))
            shape.append(len(picked))
            continue
        v = given[k] if given is not None else fb.expr(item)  # (``given``: the items' values, evaluated once)
        if gather is not None and isinstance(v, Val) and isinstance(v.type, T.TileType):
            if not (v.type.ndim == 1 and v.type.dtype.is_int and not v.type.dtype.is_bool):
                raise fb.error(f"a tile index must be a 1-d integer index tile, got {fb.describe(v)}", item,
                               KernelValueError)
            if gather:
                raise fb.error("adjit's tiles take one index tile per subscript", item, KernelTypeError)
            others = [i for i in items if i is not item]
            if any(not (isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None)
                   for i in others):
                raise fb.error(f"'{ast.unparse(node)}': indexing by an index tile requires ':' on all other axes "
                               "(as Warp's)", node, KernelValueError)
            gather.append((len(starts), len(shape), v))  # (its dimension, its place in the result, the tile)
            starts.append(0)
            steps.append(1)
            counts.append(1)
            shape.append(v.type.shape[0])
            continue
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool):
            raise fb.error(f"tile indices must be integers or slices, got {fb.describe(v)}", item, KernelTypeError)
        if v.is_literal:
            if not -extent <= v.literal < extent:
                raise fb.error(f"index {v.literal} is out of bounds for a tile of shape {t.shape}", node,
                               KernelValueError)
            v = v.literal % extent
        else:  # a negative runtime index counts from the end, as numpy's and Warp's
            v = fb.concrete(v)
            negative = arith.CmpIOp(arith.CmpIPredicate.slt, v.value, constant(v.type, 0)).result
            v = Val(v.type, arith.SelectOp(negative, arith.AddIOp(v.value, constant(v.type, extent)).result,
                                           v.value).result)
        starts.append(v)
        steps.append(1)
        counts.append(1)
    return starts, steps, counts, tuple(shape)


def _is_element(t: T.TileType, node) -> bool:
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return len(items) == t.ndim and not any(isinstance(i, ast.Slice) for i in items)


def subscript(fb, tile: Val, node) -> Val:
    """``t[i, j]`` (one element), and as Warp's: ``t[i]`` with fewer indices
    (the sub-tile of the remaining dimensions) and numpy-style slices with
    constant bounds (``t[4:12, :]``, ``t[::2, ::-1]``, ``t[5, :]``); the
    plain indices of a sub-tile may be runtime ints."""
    refuse_stack(fb, tile, f"'{ast.unparse(node)}' indexes a tile_stack: '{ast.unparse(node.value)}'", node)
    t = tile.type
    given = None
    if _is_element(t, node):
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        given = [fb.expr(i) for i in items]
        if not any(isinstance(v, Val) and isinstance(v.type, T.TileType) for v in given):
            for v, item in zip(given, items):
                if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int
                        and not v.type.is_bool):
                    raise fb.error(f"tile indices must be integers or slices, got {fb.describe(v)}", item,
                                   KernelTypeError)
            return extract(fb, tile, given, node)
    gather = []
    starts, steps, counts, shape = _selection(fb, t, node, gather, given)
    if not gather:
        return as_view(_gather(fb, tile, starts, steps, counts, shape, node), node.value, node)
    # t[idx, :] with an index tile (Warp's advanced indexing): one sub-tile per index (negative ones from the
    # end, as Warp's), stacked at the index tile's place in the result (a copy, not a view).
    dim, place, idx = gather[0]
    out = _tile_type(fb, shape, t.dtype, t.storage, node)
    pieces = []
    for k, i in enumerate(elements(idx.value, idx.type)):
        i = Val(idx.type.dtype, i)
        wrapped = fb.binop(ast.Add(), i, Val(idx.type.dtype, constant(idx.type.dtype, t.shape[dim])), node)
        negative = arith.CmpIOp(arith.CmpIPredicate.slt, i.value, constant(idx.type.dtype, 0)).result
        i = Val(idx.type.dtype, arith.SelectOp(negative, wrapped.value, i.value).result)
        sub_shape = shape[:place] + shape[place + 1:] or (1,)
        piece = _gather(fb, tile, starts[:dim] + [i] + starts[dim + 1:], steps, counts, sub_shape, node)
        pieces.append(elements(piece.value, piece.type))
    inner = math.prod(shape[place + 1:])
    outer = math.prod(shape[:place])
    flat = [pieces[k][o * inner + j] for o in range(outer) for k in range(len(pieces)) for j in range(inner)]
    return Val(out, from_elements(out, flat))


def assign(fb, target: ast.Subscript, value) -> None:
    """``t[...] = value`` for the local tile ``t``: one element, or (as Warp's)
    a sub-tile (``t[i] = row``, ``t[1:3, :] = u``, ``t[1:] = t[:-1]``: the
    right side is read first, as numpy's) given a tile of its shape or a
    scalar for every element; a runtime plain index picks by selects (none
    outside the tile)."""
    name = target.value.id
    check_writable(fb, name, f"'{ast.unparse(target)} = ...'", target)
    tile = fb.env[name]
    refuse_stack(fb, tile, f"'{ast.unparse(target)} = ...' writes into '{name}', which", target)
    t = tile.type
    if _is_element(t, target):
        fb.env[name] = insert(fb, tile, index_values(fb, tile, target), value, target)
        return
    starts, steps, counts, shape = _selection(fb, t, target)
    size = math.prod(counts)
    if isinstance(value, Val) and isinstance(value.type, T.TileType):
        if value.type.shape != shape:
            raise fb.error(f"'{ast.unparse(target)} = ...': shape mismatch: a tile of shape {value.type.shape} does "
                           f"not fit the selection of shape {shape}", target, KernelValueError)
        if value.type.dtype != t.dtype:
            raise fb.error(f"'{ast.unparse(target)} = ...': a {value.type.dtype} tile into a {t.dtype} tile", target,
                           KernelTypeError)
        src = elements(value.value, value.type)
    else:  # (Warp refuses a scalar broadcast into a selection too)
        raise fb.error(f"'{ast.unparse(target)} = ...' requires a tile of matching shape {shape}, got "
                       f"{fb.describe(value)}", target, KernelValueError)
    dst = elements(tile.value, t)
    strides = [math.prod(t.shape[k + 1:]) for k in range(t.ndim)]

    def written(first):
        out = list(dst)
        for x, pos in zip(src, _row_major(counts)):
            out[sum((f + p * st) * sd for f, p, st, sd in zip(first, pos, steps, strides))] = x
        return from_elements(t, out)

    dynamic = [k for k, x in enumerate(starts) if isinstance(x, Val)]
    if not dynamic:
        fb.env[name] = Val(t, written(starts))
        return
    ranges = [range(t.shape[k]) for k in dynamic]
    if math.prod(len(r) for r in ranges) * t.size > MAX_GATHER_CANDIDATES:
        raise fb.error(f"'{ast.unparse(target)} = ...' at a runtime index of a tile of shape {t.shape}: too many "
                       "candidates for adjit's unrolled tiles", target)
    fb.env[name] = Val(t, _select_among(fb, t, tile.value, [starts[k] for k in dynamic], ranges,
                                        lambda choice: written([dict(zip(dynamic, choice)).get(k, x)
                                                                for k, x in enumerate(starts)])))


# --- indexing: t[i, j], t[i, j] = x ---------------------------------------------------------

def index_values(fb, tile: Val, node) -> list[Val]:
    """The indices of ``tile[...]`` (one per dimension)."""
    idx = node.slice
    items = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    if len(items) != tile.type.ndim:
        raise fb.error(f"a tile of shape {tile.type.shape} is indexed with {tile.type.ndim} "
                       f"ind{'ices' if tile.type.ndim > 1 else 'ex'} (one element), got {len(items)}", node,
                       KernelTypeError)
    vals = []
    for item in items:
        v = fb.expr(item)
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool):
            raise fb.error(f"tile indices must be integers, got {fb.describe(v)}", item, KernelTypeError)
        vals.append(v)
    return vals


def extract(fb, tile: Val, idx: list[Val], node) -> Val:
    """One element of a tile: a constant position reads it; a runtime one
    sums the element selected by a mask (exact: the others are zero)."""
    t = tile.type
    if all(v.is_literal for v in idx):
        pos = [v.literal for v in idx]
        if any(not 0 <= p < n for p, n in zip(pos, t.shape)):
            raise fb.error(f"index {tuple(pos)} is out of bounds for a tile of shape {t.shape}", node,
                           KernelValueError)
        return Val(t.dtype, vector_d.ExtractOp(tile.value, [], pos).result)
    mask = _element_mask(t, _flat_index(fb, t, idx, node))
    flat = _flat(tile.value, t)
    flat_t = T.TileType((t.size,), t.dtype)
    picked = arith.SelectOp(mask, flat, constant(flat_t, 0)).result
    if t.composite:  # the rows' sum: the picked element (the others are zeros)
        return Val(t.dtype, _halving(picked, t.size, flat_t, lambda x, y: _add(t, x, y)))
    return Val(t.dtype, vector_d.ReductionOp(t.dtype.mlir(), vector_d.CombiningKind.ADD, picked).result)


def insert(fb, tile: Val, idx: list[Val], value: Val, node) -> Val:
    """The tile with one element replaced (a runtime position outside the tile replaces none)."""
    t = tile.type
    x = fb.materialize(fb.coerce(value, t.dtype, node), t.dtype)
    if all(v.is_literal for v in idx):
        pos = [v.literal for v in idx]
        if any(not 0 <= p < n for p, n in zip(pos, t.shape)):
            raise fb.error(f"index {tuple(pos)} is out of bounds for a tile of shape {t.shape}", node,
                           KernelValueError)
        return Val(t, vector_d.InsertOp(x, tile.value, [], pos).result)
    mask = _element_mask(t, _flat_index(fb, t, idx, node))
    flat_t = vector_type(t, [t.size])
    written = arith.SelectOp(mask, _broadcast(flat_t, x), _flat(tile.value, t)).result
    return Val(t, _reshaped(written, T.TileType((t.size,), t.dtype), t.shape))


# --- operators ------------------------------------------------------------------------------

_ARITH = {ast.Add: (arith.AddFOp, arith.AddIOp), ast.Sub: (arith.SubFOp, arith.SubIOp),
          ast.Mult: (arith.MulFOp, arith.MulIOp), ast.Div: (arith.DivFOp, None)}


def binop(fb, op, a: Val, b: Val, node) -> Val:
    """``a op b`` with a tile operand: element-wise between tiles of one
    shape and dtype, or with a scalar broadcast over the tile. Tiles of
    vectors or matrices, and a vector or matrix with a tile (Warp's
    ``tile * vec3``, a tile of vec3), take each element's operator as on
    the values themselves (an error where those do not combine)."""
    name = fb.op_name(op)
    tile = a if isinstance(a.type, T.TileType) else b
    t = tile.type
    for v in (a, b):
        refuse_stack(fb, v, f"an operand of {name}", node)
    for v in (a, b):
        if isinstance(v.type, T.TileType):
            if v.type.shape != t.shape or (v.type.dtype != t.dtype and not (t.composite or v.type.composite)):
                raise fb.error(f"{name} between tiles of different shapes or dtypes: {a.type} and {b.type}", node,
                               KernelTypeError)
        elif not isinstance(v.type, _ELEMENT_TYPES):
            raise fb.error(f"unsupported operand types for {name}: {a.type} and {b.type}", node, KernelTypeError)
    if type(op) not in _ARITH:
        raise fb.error(f"{name} is not defined on tiles (they take + - * / element-wise)", node, KernelTypeError)
    other = b if tile is a else a
    if isinstance(op, (ast.Mult, ast.Div)) and any(
            isinstance(v.type, (T.VectorType, T.MatrixType)) or isinstance(v.type, T.TileType) and v.type.composite
            for v in (a, b)):
        _check_scaling(fb, op, a, b, node)
    if t.composite or not isinstance(other.type, (T.ScalarType, T.TileType)) or \
            isinstance(other.type, T.TileType) and other.type.composite:
        same = isinstance(other.type, T.TileType) and other.type == t and isinstance(op, (ast.Add, ast.Sub))
        scaled = isinstance(other.type, T.ScalarType) and (isinstance(op, ast.Mult) or
                                                           isinstance(op, ast.Div) and tile is a)
        if not (same or scaled) or not t.scalar.is_float:
            return _per_element(fb, op, a, b, node)
    f_op, i_op = _ARITH[type(op)]
    if not t.scalar.is_float and i_op is None:
        raise fb.error(f"{name} on integer tiles is not supported", node, KernelTypeError)
    x, y = (_as_tile(fb, v, t, node) for v in (a, b))
    return Val(t, (f_op if t.scalar.is_float else i_op)(x, y).result)


def _tile_name(t) -> str:
    return f"tile<{t.dtype}>" if isinstance(t, T.TileType) else str(t)


def _check_scaling(fb, op, a: Val, b: Val, node):
    """As Warp's: a product or quotient with a tile of vectors or matrices
    scales by scalars (tile<vec3> * float, float * tile<vec3>,
    tile<float> * vec3); between two tiles the elements must be scalars."""
    verb = "multiply" if isinstance(op, ast.Mult) else "divide"
    if isinstance(a.type, T.TileType) and isinstance(b.type, T.TileType) and a.type.composite and b.type.composite:
        raise fb.error(f"Cannot {verb} {_tile_name(a.type)} by {_tile_name(b.type)} element-wise: the element type "
                       "must be scalar", node, KernelTypeError)
    elements = [v.type.dtype if isinstance(v.type, T.TileType) else v.type for v in (a, b)]
    if not any(isinstance(e, T.ScalarType) for e in elements):
        raise fb.error(f"Cannot {verb} {_tile_name(a.type)} by {_tile_name(b.type)}: at least one operand must be a "
                       "scalar type", node, KernelTypeError)


def _per_element(fb, op, a: Val, b: Val, node) -> Val:
    """``a op b`` element by element (one of them a tile), each with the
    operator's rules for the elements' types (vec3 * float, mat33 * vec3)."""
    shape = (a if isinstance(a.type, T.TileType) else b).type.shape
    columns = [elements(v.value, v.type) if isinstance(v.type, T.TileType) else None for v in (a, b)]
    results, dtype = [], None
    for k in range(math.prod(shape)):
        x, y = (Val(v.type.dtype, c[k]) if c is not None else v for v, c in zip((a, b), columns))
        r = fb.binop(op, x, y, node)
        if not (isinstance(r, Val) and isinstance(r.type, _ELEMENT_TYPES)) or T.scalar_of(r.type).is_bool:
            raise fb.error(f"{fb.op_name(op)} of tiles' elements gives {fb.describe(r)}", node, KernelTypeError)
        dtype = r.type
        results.append(fb.materialize(fb.concrete(r), r.type))
    out = _tile_type(fb, shape, dtype, "register", node)
    return Val(out, from_elements(out, results))


def _as_tile(fb, v: Val, t: T.TileType, node) -> ir.Value:
    if isinstance(v.type, T.TileType):
        return v.value
    return _splat(t, fb.materialize(fb.coerce(v, t.scalar, node), t.scalar))


def negate(fb, v: Val) -> Val:
    t = v.type
    if t.scalar.is_float:
        return Val(t, arith.NegFOp(v.value).result)
    return Val(t, arith.SubIOp(constant(t, 0), v.value).result)


# --- creation -----------------------------------------------------------------------------------

_HANDLERS = {}


def _handler(name):
    def register(fn):
        _HANDLERS[name] = fn
        return fn
    return register


def _filled(value):
    def emit(fb, a, node):
        t = _tile_type(fb, _shape(fb, a["shape"], "shape", node), _dtype(fb, a["dtype"], node),
                       _storage(fb, a["storage"]), node)
        return Val(t, constant(t, value))
    return emit


_HANDLERS["tile_zeros"] = _filled(0)
_HANDLERS["tile_ones"] = _filled(1)
_HANDLERS["tile_empty"] = _filled(0)  # (Warp's is uninitialized; zeros here: never a stale value)


@_handler("tile_full")
def _tile_full(fb, a, node):
    """Without a dtype, the tile's is the value's, as in Warp (a float literal: float32, an int one: int32)."""
    v = fb.expr(a["value"])  # (once: it may have effects)
    if not (isinstance(v, Val) and isinstance(v.type, _ELEMENT_TYPES)):
        raise fb.error(f"tile_full()'s value must be a scalar, vector or matrix, got {fb.describe(v)}", a["value"])
    if _given(a["dtype"]) and not (isinstance(a["dtype"], ast.Constant) and a["dtype"].value is None):
        dtype = _dtype(fb, a["dtype"], node)
    else:
        dtype = v.type
        if v.is_literal and isinstance(v.type, T.ScalarType):
            dtype = T.int32 if type(v.literal) is int else T.float32 if type(v.literal) is float else v.type
    t = _tile_type(fb, _shape(fb, a["shape"], "shape", node), dtype, _storage(fb, a["storage"]), node)
    if t.composite and isinstance(v.type, T.ScalarType):  # every component (as the element type's constructor)
        return Val(t, _splat(t, _scalar_value(fb, v, t.scalar, "tile_full()'s value", a["value"])))
    if not isinstance(t.dtype, T.ScalarType) and v.type != t.dtype:
        raise fb.error(f"tile_full()'s value is a {v.type}, the tile's dtype {t.dtype}", a["value"], KernelTypeError)
    if t.composite:
        return Val(t, _splat(t, fb.materialize(fb.concrete(v), v.type)))
    return Val(t, _splat(t, _scalar_value(fb, v, t.dtype, "tile_full()'s value", a["value"])))


@_handler("tile_arange")
def _tile_arange(fb, a, node):
    args = a["args"]
    if not 1 <= len(args) <= 3:
        raise fb.error(f"tile_arange() takes 1 to 3 arguments (stop; start, stop; start, stop, step), got "
                       f"{len(args)}", node)
    nums = []
    for x in args:
        v = fb.expr(x)
        if not (isinstance(v, Val) and v.is_literal and isinstance(v.literal, (int, float))
                and not isinstance(v.literal, bool)):
            raise fb.error(f"tile_arange()'s arguments must be constant numbers (a tile's shape is static), "
                           f"got {fb.describe(v)}", x)
        nums.append(v.literal)
    start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], 1) if len(nums) == 2 else nums
    if step == 0:
        raise fb.error("tile_arange()'s step must not be zero", node)
    default = T.float32 if any(isinstance(n, float) for n in nums) else T.int32
    dtype = _dtype(fb, a["dtype"], node, composite=False) if _given(a["dtype"]) else default
    values = np.arange(start, stop, step)
    if values.size == 0:
        raise fb.error(f"tile_arange({', '.join(map(str, nums))}) is empty (a tile has at least one element)", node)
    t = _tile_type(fb, (values.size,), dtype, _storage(fb, a["storage"]), node)
    return Val(t, constant_array(t, values))


# --- memory -------------------------------------------------------------------------------------

def _array_tile_check(fb, array: Val, tile_t: T.TileType, what: str, node):
    if array.type.dtype != tile_t.dtype:
        raise fb.error(f"{what}: the array holds {array.type.dtype} and the tile {tile_t.dtype}", node,
                       KernelTypeError)
    if array.type.ndim != tile_t.ndim:
        raise fb.error(f"{what}: a {tile_t.ndim}-d tile and a {array.type.ndim}-d array (they need the same "
                       "number of dimensions)", node, KernelTypeError)


def _element_indices(array: _Target, offsets, shape, bounds_check: bool, along=None):
    """For each element of a tile at ``offsets`` (row-major): its indices in
    the base array, clamped into the array (the row, the slice) when
    ``bounds_check``, and whether it is inside (None without bounds checks).
    ``along``: (axis, index values): along that axis the element at position
    i is at the offset plus the i-th index value (tile_*_indexed), not plus i."""
    ranges = [d for d in array.dims if isinstance(d, tuple)]
    per_dim = []
    for k, ((start, step, extent), off, n) in enumerate(zip(ranges, offsets, shape)):
        last = arith.SubIOp(extent, _index(1)).result
        column = []
        for i in range(n):
            if along is not None and along[0] == k:
                idx = arith.AddIOp(off, along[1][i]).result
            else:
                idx = arith.AddIOp(off, _index(i)).result if i else off
            inside = None
            if bounds_check:
                inside = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, idx, _index(0)).result,
                                      arith.CmpIOp(arith.CmpIPredicate.slt, idx, extent).result).result
                idx = arith.MaxSIOp(arith.MinSIOp(idx, last).result, _index(0)).result
            if step != 1:
                idx = arith.MulIOp(idx, _index(step)).result
            column.append((arith.AddIOp(start, idx).result, inside))
        per_dim.append(column)
    for pos in _row_major(shape):
        parts = iter([per_dim[k][p] for k, p in enumerate(pos)])
        indices, ok = [], None
        for d in array.dims:
            if not isinstance(d, tuple):
                indices.append(d)
                continue
            idx, inside = next(parts)
            indices.append(idx)
            if inside is not None:
                ok = inside if ok is None else arith.AndIOp(ok, inside).result
        yield indices, ok


@_handler("tile_load")
def _tile_load(fb, a, node):
    array = _array(fb, a["a"], "tile_load()'s array", node)
    shape = _shape(fb, a["shape"], "tile_load()'s shape", node)
    if len(shape) != array.type.ndim:
        raise fb.error(f"tile_load(): a {len(shape)}-d shape for a {array.type.ndim}-d array (they need the same "
                       "number of dimensions)", node, KernelTypeError)
    t = _tile_type(fb, shape, array.type.dtype, _storage(fb, a["storage"]), node)
    offsets = _offsets(fb, a["offset"], t.ndim, "tile_load()", node)
    bounds_check = _static(fb, a["bounds_check"], bool, "bounds_check")
    _static(fb, a["aligned"], bool, "aligned")
    zero = constant(t.dtype, 0)
    scalars = []
    for indices, inside in _element_indices(array, offsets, shape, bounds_check):
        x = fb.load_element(array.base, indices).value
        scalars.append(x if inside is None else arith.SelectOp(inside, x, zero).result)
    return Val(t, from_elements(t, scalars))


def _guarded(inside, emit):
    """Runs ``emit()`` where ``inside`` holds (always when it is None)."""
    if inside is None:
        return emit()
    branch = scf.IfOp(inside)
    with ir.InsertionPoint(branch.then_block):
        emit()
        scf.YieldOp([])


@_handler("tile_store")
def _tile_store(fb, a, node):
    array = _array(fb, a["a"], "tile_store()'s array", node)
    tile = _tile(fb, a["t"], "tile_store()'s tile", node, composite=True)
    _array_tile_check(fb, array, tile.type, "tile_store()", node)
    offsets = _offsets(fb, a["offset"], tile.type.ndim, "tile_store()", node)
    bounds_check = _static(fb, a["bounds_check"], bool, "bounds_check")
    _static(fb, a["aligned"], bool, "aligned")
    scalars = elements(tile.value, tile.type)
    for x, (indices, inside) in zip(scalars, _element_indices(array, offsets, tile.type.shape, bounds_check)):
        _guarded(inside, lambda x=x, indices=indices: adjit_d.StoreOp(x, array.value, indices))
    return None


@_handler("tile_atomic_add")
def _tile_atomic_add(fb, a, node):
    array = _array(fb, a["a"], "tile_atomic_add()'s array", node)
    tile = _tile(fb, a["t"], "tile_atomic_add()'s tile", node, composite=True)
    t = tile.type
    _array_tile_check(fb, array, t, "tile_atomic_add()", node)
    offsets = _offsets(fb, a["offset"], t.ndim, "tile_atomic_add()", node)
    bounds_check = _static(fb, a["bounds_check"], bool, "bounds_check")
    return atomic_adds(array, tile, _element_indices(array, offsets, t.shape, bounds_check))


def atomic_adds(array, tile: Val, places) -> Val:
    """Atomically adds each element of ``tile`` into ``array`` at its place
    (``places``: (indices, inside or None) per element, row-major), where
    inside; the tile of the old values (0 where not inside)."""
    t = tile.type
    no_position = ir.DenseI64ArrayAttr.get([])

    def add(x, indices):
        return adjit_d.AtomicAddOp(t.dtype.mlir(), x, array.value, indices, position=no_position).result

    old = []
    for x, (indices, inside) in zip(elements(tile.value, t), places):
        if inside is None:
            old.append(add(x, indices))
            continue
        branch = scf.IfOp(inside, [t.dtype.mlir()], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([add(x, indices)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([constant(t.dtype, 0)])
        old.append(branch.results[0])
    return Val(t, from_elements(t, old))


# --- threads and tiles (a block is one thread on the CPU) ----------------------------------------

@_handler("tile")
def _tile_from_value(fb, a, node):
    v = fb.expr(a["x"])
    if not isinstance(v, Val) or not isinstance(v.type, (T.ScalarType, T.VectorType, T.MatrixType)) or \
            T.scalar_of(v.type).is_bool:
        raise fb.error(f"tile() takes a scalar, vector or matrix of each thread, got {fb.describe(v)}", node)
    if _static(fb, a["preserve_type"], bool, "preserve_type"):  # a tile of the block's values: (1,) on the CPU
        t = _tile_type(fb, (1,), v.type, "register", node)
        return Val(t, _broadcast(t.mlir(), fb.materialize(fb.concrete(v), v.type)))
    # The last extent is the block's threads: one on the CPU.
    shape = (*getattr(v.type, "shape", ()), 1)
    t = _tile_type(fb, shape, T.scalar_of(v.type), "register", node)
    x = fb.materialize(fb.concrete(v), v.type)
    if isinstance(v.type, T.ScalarType):
        return Val(t, vector_d.BroadcastOp(t.mlir(), x).result)
    return Val(t, vector_d.ShapeCastOp(t.mlir(), x).result)


@_handler("untile")
def _untile(fb, a, node):
    tile = _tile(fb, a["a"], "untile()'s argument", node, composite=True)
    t = tile.type
    if t.composite:  # a tile of vectors or matrices (tile(x, preserve_type=True)): each thread's element
        if t.shape != (1,):
            raise fb.error(f"untile() of a tile of {t.dtype} takes a tile of shape (1,) (the block's one thread "
                           f"on the CPU), got shape {t.shape}", node)
        return Val(t.dtype, vector_d.ExtractOp(tile.value, [], [0]).result)
    if t.shape[-1] != 1 or t.ndim > 3:
        raise fb.error(f"untile() takes a tile whose last extent is the block's threads (1 on the CPU), of shape "
                       f"(1,), (M, 1) or (R, C, 1); got shape {t.shape}", node)
    if t.ndim == 1:
        return Val(t.dtype, vector_d.ExtractOp(tile.value, [], [0]).result)
    if any(n > T.MAX_COMPONENTS for n in t.shape):
        raise fb.error(f"untile() of a tile of shape {t.shape} would make a vector or matrix of more than "
                       f"{T.MAX_COMPONENTS} components per side", node)
    result = T.vector(t.shape[0], t.dtype) if t.ndim == 2 else T.matrix(t.shape[:2], t.dtype)
    return Val(result, vector_d.ShapeCastOp(result.mlir(), tile.value).result)


@_handler("tile_extract")
def _tile_extract(fb, a, node):
    tile = _tile(fb, a["a"], "tile_extract()'s tile", node, composite=True)
    fake = ast.Subscript(value=a["a"], slice=ast.Tuple(elts=a["indices"]))
    ast.copy_location(fake, node)
    return extract(fb, tile, index_values(fb, tile, fake), node)


# --- shape ----------------------------------------------------------------------------------------

@_handler("tile_transpose")
def _tile_transpose(fb, a, node):
    tile = _tile(fb, a["a"], "tile_transpose()'s tile", node, composite=True)
    t = tile.type
    if t.ndim != 2:
        raise fb.error(f"tile_transpose() takes a 2-d tile, got shape {t.shape}", node)
    out = T.TileType(t.shape[::-1], t.dtype, t.storage)
    order = [1, 0] + [2 + k for k in range(len(t.elem_shape))]  # (the elements themselves stay as they are)
    return Val(out, vector_d.TransposeOp(out.mlir(), tile.value, order).result)


@_handler("tile_broadcast")
def _tile_broadcast(fb, a, node):
    tile = _tile(fb, a["a"], "tile_broadcast()'s tile", node, composite=True)
    t = tile.type
    shape = _shape(fb, a["shape"], "tile_broadcast()'s shape", node)
    if len(shape) > 4:  # Warp's message
        raise fb.error(f"tile_broadcast() output must have between one and four dimensions, got {len(shape)}",
                       a["shape"], KernelValueError)
    if len(shape) < t.ndim or any(s not in (1, n) for s, n in zip(t.shape[::-1], shape[::-1])):
        raise fb.error(f"tile_broadcast(): a tile of shape {t.shape} does not broadcast to {shape} (numpy's "
                       "rules: extents of 1 stretch, missing leading ones are added)", node)
    out = _tile_type(fb, shape, t.dtype, t.storage, node)
    src = elements(tile.value, t)
    lead = len(shape) - t.ndim
    strides = [int(np.prod(t.shape[k + 1:])) for k in range(t.ndim)]
    picks = []
    for pos in _row_major(shape):
        own = pos[lead:]
        picks.append(src[sum((p if n > 1 else 0) * s for p, n, s in zip(own, t.shape, strides))])
    return Val(out, from_elements(out, picks))


@_handler("tile_reshape")
def _tile_reshape(fb, a, node):
    tile = _tile(fb, a["t"], "tile_reshape()'s tile", node, composite=True)
    t = tile.type
    items = a["shape"].elts if isinstance(a["shape"], ast.Tuple) else [a["shape"]]
    dims = [_const_int(fb, item, "tile_reshape()'s extents") for item in items]
    if dims.count(-1) == 1 and t.size % max(1, -int(np.prod(dims))) == 0:
        dims[dims.index(-1)] = t.size // -int(np.prod(dims))
    if int(np.prod(dims)) != t.size or any(d < 1 for d in dims):
        raise fb.error(f"tile_reshape(): a tile of shape {t.shape} ({t.size} elements) cannot take shape "
                       f"{tuple(dims)}", node)
    out = _tile_type(fb, dims, t.dtype, t.storage, node)
    return Val(out, _reshaped(tile.value, t, out.shape))


@_handler("tile_squeeze")
def _tile_squeeze(fb, a, node):
    tile = _tile(fb, a["t"], "tile_squeeze()'s tile", node, composite=True)
    t = tile.type
    if _given(a["axis"]):
        items = a["axis"].elts if isinstance(a["axis"], ast.Tuple) else [a["axis"]]
        axes = set()
        for item in items:
            axis = _const_int(fb, item, "tile_squeeze()'s axis")
            if not -t.ndim <= axis < t.ndim:  # Warp's message
                raise fb.error(f"tile_squeeze() axis {axis} is out of bounds for tile with {t.ndim} dimensions",
                               item, KernelValueError)
            axes.add(axis % t.ndim)
        if any(t.shape[k] != 1 for k in axes):
            raise fb.error(f"tile_squeeze(): axis {sorted(axes)} of shape {t.shape} is not of extent 1", node)
    else:
        axes = {k for k, n in enumerate(t.shape) if n == 1}
    shape = tuple(n for k, n in enumerate(t.shape) if k not in axes) or (1,)
    out = _tile_type(fb, shape, t.dtype, t.storage, node)
    return Val(out, _reshaped(tile.value, t, shape))


@_handler("tile_astype")
def _tile_astype(fb, a, node):
    tile = _tile(fb, a["t"], "tile_astype()'s tile", node)
    t = tile.type
    dtype = _dtype(fb, a["dtype"], node, composite=False)
    out = _tile_type(fb, t.shape, dtype, t.storage, node)
    return Val(out, _convert(tile.value, t.dtype, dtype, out.mlir()))


def _convert(x, s: T.ScalarType, d: T.ScalarType, result: ir.Type) -> ir.Value:
    if s == d:
        return x
    if s.is_float and d.is_float:
        if s.bits == d.bits:
            x = arith.ExtFOp(ir.VectorType.get(ir.VectorType(result).shape, T.float32.mlir()), x).result
            s = T.float32
        return (arith.ExtFOp if d.bits > s.bits else arith.TruncFOp)(result, x).result
    if d.is_float:
        return (arith.UIToFPOp if s.is_unsigned else arith.SIToFPOp)(result, x).result
    if s.is_float:
        return (arith.FPToUIOp if d.is_unsigned else arith.FPToSIOp)(result, x).result
    if d.bits == s.bits:
        return x
    if d.bits > s.bits:
        return (arith.ExtUIOp if s.is_unsigned else arith.ExtSIOp)(result, x).result
    return arith.TruncIOp(result, x).result


@_handler("tile_view")
def _tile_view(fb, a, node):
    """A sub-tile: the leading dimensions past ``shape``'s fixed at their
    offsets, the trailing ones ``shape`` long from theirs (without
    ``shape``: the dimensions after the offsets', whole). Offsets may be
    runtime ints (the view is then chosen by selects, see _gather)."""
    tile = _tile(fb, a["t"], "tile_view()'s tile", node, composite=True)
    t = tile.type
    items = a["offset"].elts if isinstance(a["offset"], ast.Tuple) else [a["offset"]]
    if len(items) > t.ndim:
        raise fb.error(f"tile_view(): {len(items)} offsets for a {t.ndim}-d tile", node)
    offset = []
    for item in items:
        v = fb.expr(item)
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool):
            raise fb.error(f"tile_view()'s offsets must be integers, got {fb.describe(v)}", item, KernelTypeError)
        offset.append(v.literal if v.is_literal else v)
    shape = _shape(fb, a["shape"], "tile_view()'s shape", node) if _given(a["shape"]) else t.shape[len(offset):]
    if not shape or len(shape) > t.ndim:
        raise fb.error(f"tile_view(): a view of shape {shape} of a {t.ndim}-d tile", node)
    offset = offset + [0] * (t.ndim - len(offset))
    fixed = t.ndim - len(shape)
    extents = (1,) * fixed + tuple(shape)
    if any(not isinstance(o, Val) and (o < 0 or o + n > m) for o, n, m in zip(offset, extents, t.shape)) or \
            any(n > m for n, m in zip(extents, t.shape)):
        shown = tuple("?" if isinstance(o, Val) else o for o in offset)
        raise fb.error(f"tile_view(): a view of shape {tuple(shape)} at {shown} is out of bounds for the tile of "
                       f"shape {t.shape}", node, KernelValueError)
    return _gather(fb, tile, offset, [1] * t.ndim, extents, tuple(shape), node)


@_handler("tile_assign")
def _tile_assign(fb, a, node):
    """dst with src written at offset; a runtime offset is resolved by one
    select per valid offset (none matching: dst unchanged, as a runtime
    element write outside the tile writes nothing)."""
    dst = _tile(fb, a["dst"], "tile_assign()'s destination", node, composite=True)
    src = _tile(fb, a["src"], "tile_assign()'s source", node, composite=True)
    t, s = dst.type, src.type
    if s.dtype != t.dtype or s.ndim != t.ndim:
        raise fb.error(f"tile_assign(): a {s} into a {t}", node, KernelTypeError)
    if not _given(a["offset"]):
        offset = [0] * t.ndim
    else:
        items = a["offset"].elts if isinstance(a["offset"], ast.Tuple) else [a["offset"]]
        if len(items) != t.ndim:
            raise fb.error(f"tile_assign() needs {t.ndim} offsets, got {len(items)}", a["offset"])
        offset = []
        for item in items:
            v = fb.expr(item)
            if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int
                    and not v.type.is_bool):
                raise fb.error(f"tile_assign()'s offsets must be integers, got {fb.describe(v)}", item,
                               KernelTypeError)
            offset.append(v.literal if v.is_literal else v)
    if any(n > m for n, m in zip(s.shape, t.shape)) or \
            any(not isinstance(o, Val) and (o < 0 or o + n > m) for o, n, m in zip(offset, s.shape, t.shape)):
        shown = tuple("?" if isinstance(o, Val) else o for o in offset)
        raise fb.error(f"tile_assign(): a tile of shape {s.shape} at {shown} leaves the tile of shape {t.shape}",
                       node)
    dst_elems = elements(dst.value, t)
    src_elems = elements(src.value, s)
    strides = [int(np.prod(t.shape[k + 1:])) for k in range(t.ndim)]

    def written(first):
        out = list(dst_elems)
        for x, pos in zip(src_elems, _row_major(s.shape)):
            out[sum((p + o) * st for p, o, st in zip(pos, first, strides))] = x
        return from_elements(t, out)

    dynamic = [k for k, o in enumerate(offset) if isinstance(o, Val)]
    if not dynamic:
        result = written(offset)
    else:
        ranges = [range(t.shape[k] - s.shape[k] + 1) for k in dynamic]
        if int(np.prod([len(r) for r in ranges])) * t.size > MAX_GATHER_CANDIDATES:
            raise fb.error(f"tile_assign() of a tile of shape {s.shape} at a runtime offset into a tile of shape "
                           f"{t.shape}: too many candidates for adjit's unrolled tiles (use constant offsets or "
                           "smaller tiles)", node)
        result = _select_among(fb, t, dst.value, [offset[k] for k in dynamic], ranges,
                               lambda choice: written([dict(zip(dynamic, choice)).get(k, o)
                                                       for k, o in enumerate(offset)]))
    _rebind(fb, a["dst"], Val(t, result), "tile_assign()", node)
    return None


def _select_among(fb, t: T.TileType, default: ir.Value, wanted: list, ranges, make) -> ir.Value:
    """``make(choice)`` for the choice of values in ``ranges`` equal to the runtime
    ints ``wanted`` (``default`` when none is): one select per choice."""
    i32 = ir.IntegerType.get_signless(32)
    wanted = [arith.IndexCastOp(i32, to_index(fb.materialize(w, w.type), w.type)).result for w in wanted]
    mask_t = ir.VectorType.get(list(t.shape) + list(t.elem_shape), ir.IntegerType.get_signless(1))
    result = default
    for choice in itertools.product(*ranges):
        cond = None
        for f, w in zip(choice, wanted):
            eq = arith.CmpIOp(arith.CmpIPredicate.eq, w, arith.ConstantOp(i32, f).result).result
            cond = eq if cond is None else arith.AndIOp(cond, eq).result
        result = arith.SelectOp(vector_d.BroadcastOp(mask_t, cond).result, make(choice), result).result
    return result


def _rebind(fb, target, value: Val, what: str, node):
    if not (isinstance(target, ast.Name) and isinstance(fb.env.get(target.id), Val)):
        raise fb.error(f"{what} writes this tile: pass a local tile variable", node)
    check_writable(fb, target.id, what, node)
    fb.env[target.id] = value


# --- reductions -----------------------------------------------------------------------------------

def _one(t: T.TileType, scalar: ir.Value, dtype=None) -> Val:
    out = T.TileType((1,), dtype or t.dtype, t.storage)
    return Val(out, _broadcast(out.mlir(), scalar))


def _sum_scalar(v: ir.Value, t: T.TileType) -> ir.Value:
    """The sum of a tile's elements, pairwise (halving the tile while its
    size is even: one vector add per step, and more accurate than a running
    sum); a fixed order, so the result is the same on every run. A tile of
    vectors or matrices sums them (a vector or matrix value)."""
    return _halving(_flat(v, t), t.size, t if t.composite else t.dtype, lambda x, y: _add(t, x, y))


def _axis(fb, x, t: T.TileType, what: str) -> int:
    axis = _const_int(fb, x, f"{what}'s axis")
    if not -t.ndim <= axis < t.ndim:
        raise fb.error(f"{what}: axis {axis} of a {t.ndim}-d tile", x)
    return axis % t.ndim


def _along_axis(fb, tile: Val, axis: int, reduce_row, node) -> Val:
    """Reduces the tile's ``axis``: each line along it (a vector) to one
    scalar by ``reduce_row(vector, length)``."""
    t = tile.type
    order = [k for k in range(t.ndim) if k != axis] + [axis]
    moved_shape = [t.shape[k] for k in order]
    v = tile.value
    if order != list(range(t.ndim)):
        v = vector_d.TransposeOp(ir.VectorType.get(moved_shape, t.dtype.mlir()), v, order).result
    rest = int(np.prod(moved_shape[:-1]))
    rows_t = ir.VectorType.get([rest, t.shape[axis]], t.dtype.mlir())
    rows = vector_d.ShapeCastOp(rows_t, v).result
    out_shape = tuple(moved_shape[:-1]) or (1,)
    out = T.TileType(out_shape, t.dtype, t.storage)
    scalars = [reduce_row(vector_d.ExtractOp(rows, [], [r]).result, t.shape[axis]) for r in range(rest)]
    return Val(out, from_elements(out, scalars))


@_handler("tile_sum")
def _tile_sum(fb, a, node):
    tile = _tile(fb, a["a"], "tile_sum()'s tile", node, composite=True)
    t = tile.type
    if _given(a["axis"]) and t.composite:
        refuse_composite(fb, t, "tile_sum(axis=)'s tile", node)
    if _given(a["axis"]):
        axis = _axis(fb, a["axis"], t, "tile_sum()")
        row_t = T.TileType((t.shape[axis],), t.dtype)
        return _along_axis(fb, tile, axis, lambda row, n: _sum_scalar(row, row_t), node)
    return _one(t, _sum_scalar(tile.value, t))


@_handler("tile_dot")
def _tile_dot(fb, a, node):
    x = _tile(fb, a["a"], "tile_dot()'s first tile", node, composite=True)
    y = _tile(fb, a["b"], "tile_dot()'s second tile", node, composite=True)
    if x.type != y.type:
        raise fb.error(f"tile_dot() of tiles of different shapes or dtypes: {x.type} and {y.type}", node)
    t = x.type
    if t.composite:  # the full contraction, as Warp's: the sum of all the components' products
        n = t.size * math.prod(t.elem_shape)
        scalars = T.TileType((n,), t.scalar, t.storage)
        product = vector_d.ShapeCastOp(scalars.mlir(), _mul(t, x.value, y.value)).result
        return _one(scalars, _sum_scalar(product, scalars))
    return _one(t, _sum_scalar(_mul(t, x.value, y.value), t))


def _extreme(t: T.TileType, largest: bool):
    s = t.dtype
    if s.is_float:
        return arith.MaximumFOp if largest else arith.MinimumFOp
    if s.is_unsigned:
        return arith.MaxUIOp if largest else arith.MinUIOp
    return arith.MaxSIOp if largest else arith.MinSIOp


def _halving(v: ir.Value, n: int, dtype, combine) -> ir.Value:
    """Combines the ``n`` elements of the 1-d vector ``v`` pairwise: halves
    while ``n`` is even (one op on half-vectors each step), then the rest one
    by one. ``combine`` takes and returns values of one type. ``dtype``: the
    scalar type, or a tile type whose elements ``v`` holds (vectors,
    matrices: ``v`` is then ``vector<n x element shape>``)."""
    while n % 2 == 0 and n > 1:
        shape = [2, n // 2]
        halves_t = vector_type(dtype, shape) if isinstance(dtype, T.TileType) else ir.VectorType.get(shape, dtype.mlir())
        halves = vector_d.ShapeCastOp(halves_t, v).result
        v = combine(vector_d.ExtractOp(halves, [], [0]).result, vector_d.ExtractOp(halves, [], [1]).result)
        n //= 2
    scalars = [vector_d.ExtractOp(v, [], [k]).result for k in range(n)]
    acc = scalars[0]
    for x in scalars[1:]:
        acc = combine(acc, x)
    return acc


def _minmax(largest: bool):
    def emit(fb, a, node):
        what = "tile_max()" if largest else "tile_min()"
        tile = _tile(fb, a["a"], f"{what}'s tile", node)
        t = tile.type
        op = _extreme(t, largest)
        return _one(t, _halving(_flat(tile.value, t), t.size, t.dtype, lambda x, y: op(x, y).result))
    return emit


_HANDLERS["tile_max"] = _minmax(True)
_HANDLERS["tile_min"] = _minmax(False)


def _arg_extreme(largest: bool):
    def emit(fb, a, node):
        what = "tile_argmax()" if largest else "tile_argmin()"
        tile = _tile(fb, a["a"], f"{what}'s tile", node)
        t = tile.type
        values = _flat(tile.value, t)
        i32 = T.int32
        idx_t = ir.VectorType.get([t.size], i32.mlir())
        idx = arith.ConstantOp(idx_t, ir.DenseElementsAttr.get(np.arange(t.size, dtype=np.int32), type=idx_t)).result
        n = t.size
        # (value, index) pairs: the larger (smaller) value wins, the lower index on ties.
        pred_f = arith.CmpFPredicate.OGT if largest else arith.CmpFPredicate.OLT
        pred_i = (arith.CmpIPredicate.ugt if largest else arith.CmpIPredicate.ult) if t.dtype.is_unsigned else \
            (arith.CmpIPredicate.sgt if largest else arith.CmpIPredicate.slt)

        # A NaN wins over any number (numpy's argmax/argmin return the first NaN).
        def better(x, y):
            if not t.dtype.is_float:
                return arith.CmpIOp(pred_i, x, y).result
            nan_x = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
            ordered_y = arith.CmpFOp(arith.CmpFPredicate.ORD, y, y).result
            return arith.OrIOp(arith.CmpFOp(pred_f, x, y).result, arith.AndIOp(nan_x, ordered_y).result).result

        def same(x, y):
            if not t.dtype.is_float:
                return arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result
            both_nan = arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result,
                                    arith.CmpFOp(arith.CmpFPredicate.UNO, y, y).result).result
            return arith.OrIOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, x, y).result, both_nan).result

        def pick(xv, xi, yv, yi):
            take_y = arith.OrIOp(better(yv, xv), arith.AndIOp(
                same(yv, xv), arith.CmpIOp(arith.CmpIPredicate.slt, yi, xi).result).result).result
            return arith.SelectOp(take_y, yv, xv).result, arith.SelectOp(take_y, yi, xi).result

        while n % 2 == 0 and n > 1:
            vh = vector_d.ShapeCastOp(ir.VectorType.get([2, n // 2], t.dtype.mlir()), values).result
            ih = vector_d.ShapeCastOp(ir.VectorType.get([2, n // 2], i32.mlir()), idx).result
            values, idx = pick(vector_d.ExtractOp(vh, [], [0]).result, vector_d.ExtractOp(ih, [], [0]).result,
                               vector_d.ExtractOp(vh, [], [1]).result, vector_d.ExtractOp(ih, [], [1]).result)
            n //= 2
        best_v, best_i = vector_d.ExtractOp(values, [], [0]).result, vector_d.ExtractOp(idx, [], [0]).result
        for k in range(1, n):
            best_v, best_i = pick(best_v, best_i, vector_d.ExtractOp(values, [], [k]).result,
                                  vector_d.ExtractOp(idx, [], [k]).result)
        return _one(t, best_i, T.int32)
    return emit


_HANDLERS["tile_argmax"] = _arg_extreme(True)
_HANDLERS["tile_argmin"] = _arg_extreme(False)


def _callable(fb, x, what: str, node):
    if not (_given(x) and fb.is_static(x)):
        raise fb.error(f"{what} must be a builtin or an @adjit.func, got '{ast.unparse(x) if _given(x) else x}'",
                       node)
    op = fb.resolve_static(x)
    if not isinstance(op, (Builtin, language.Function)):
        raise fb.error(f"{what} must be a builtin or an @adjit.func, got '{ast.unparse(x)}'", x)
    return op


def _apply(fb, op, args: list[Val], node) -> Val:
    if isinstance(op, Builtin):
        result = fb.call_builtin(op, args, node)
    else:
        result = fb.call_function(op, args, node)
    if not isinstance(result, Val) or not isinstance(result.type, _ELEMENT_TYPES) or T.scalar_of(result.type).is_bool:
        raise fb.error(f"the function given to a tile builtin must return a number, vector or matrix here, got "
                       f"{fb.describe(result)}", node)
    return fb.concrete(result)


@_handler("tile_reduce")
def _tile_reduce(fb, a, node):
    op = _callable(fb, a["op"], "tile_reduce()'s op", node)
    tile = _tile(fb, a["a"], "tile_reduce()'s tile", node, composite=True)
    t = tile.type
    if t.composite and _given(a["axis"]):
        refuse_composite(fb, t, "tile_reduce(axis=)'s tile", node)

    def fold(scalars):
        acc = Val(t.dtype, scalars[0])
        for x in scalars[1:]:
            acc = _apply(fb, op, [acc, Val(t.dtype, x)], node)
            if acc.type != t.dtype:
                raise fb.error(f"tile_reduce()'s op must return the tile's dtype {t.dtype}, got {acc.type}", node)
        return acc.value

    if _given(a["axis"]):
        axis = _axis(fb, a["axis"], t, "tile_reduce()")
        return _along_axis(fb, tile, axis, lambda row, n: fold([vector_d.ExtractOp(row, [], [k]).result
                                                                for k in range(n)]), node)
    return _one(t, fold(elements(tile.value, t)))


def _scan(kind: str, inclusive: bool):
    def emit(fb, a, node):
        tile = _tile(fb, a["a"], f"tile_scan_{kind}()'s tile", node)
        t = tile.type
        scalars = elements(tile.value, t)
        combine = (lambda x, y: _add(t, x, y)) if kind == "sum" else \
            (lambda x, y: _extreme(t, kind == "max")(x, y).result)
        out, acc = [], None
        for x in scalars:
            if not inclusive:
                out.append(acc if acc is not None else constant(t.dtype, 0))
            acc = x if acc is None else combine(acc, x)
            if inclusive:
                out.append(acc)
        return Val(t, from_elements(t, out))
    return emit


_HANDLERS["tile_scan_inclusive"] = _scan("sum", True)
_HANDLERS["tile_scan_exclusive"] = _scan("sum", False)
_HANDLERS["tile_scan_max_inclusive"] = _scan("max", True)
_HANDLERS["tile_scan_min_inclusive"] = _scan("min", True)


# --- element-wise functions -----------------------------------------------------------------------

@_handler("tile_map")
def _tile_map(fb, a, node):
    """Further arguments: tiles of a's shape, or values (scalars, vectors, matrices, structs) given to every
    call unchanged, as in Warp (their adjoint sums over the elements)."""
    op = _callable(fb, a["op"], "tile_map()'s op", node)
    first = _tile(fb, a["a"], "tile_map()'s first tile", node, composite=True)
    t = first.type
    args = [first]
    for x in a["args"]:
        v = fb.expr(x)
        if isinstance(v, Val) and isinstance(v.type, T.TileType):
            if v.type.shape != t.shape:
                raise fb.error(f"tile_map() of tiles of different shapes: {t.shape} and {v.type.shape}", x)
        elif not isinstance(v, (Val, StructRef)):
            raise fb.error(f"tile_map()'s arguments must be tiles or values, got {fb.describe(v)}", x)
        args.append(v)
    columns = [elements(v.value, v.type) if isinstance(v, Val) and isinstance(v.type, T.TileType) else None
               for v in args]
    results = [_apply(fb, op, [Val(v.type.dtype, c[k]) if c is not None else v for v, c in zip(args, columns)],
                      node)
               for k in range(t.size)]
    out = _tile_type(fb, t.shape, results[0].type, t.storage, node)
    return Val(out, from_elements(out, [r.value for r in results]))


# --- linear algebra -------------------------------------------------------------------------------

_MATMUL_MAPS = "[affine_map<(i, j, r) -> (i, r)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>]"
_MATMUL_ITERATORS = "[#vector.iterator_type<parallel>, #vector.iterator_type<parallel>, #vector.iterator_type<reduction>]"


def _matmul(t_out: T.TileType, a: Val, b: Val, acc: ir.Value | None) -> ir.Value:
    """``acc + a @ b`` (``a @ b`` when acc is None): one ``vector.contract``,
    whose derivative rules are matrix products too and which the CPU
    lowering turns into outer products (an FMA of a broadcast element of a
    and a row of b per step)."""
    acc = acc if acc is not None else constant(t_out, 0)
    return vector_d.ContractionOp(t_out.mlir(), a.value, b.value, acc, ir.Attribute.parse(_MATMUL_MAPS),
                                  ir.Attribute.parse(_MATMUL_ITERATORS)).result


@_handler("tile_matmul")
def _tile_matmul(fb, a, node):
    x = _tile(fb, a["a"], "tile_matmul()'s a", node)
    y = _tile(fb, a["b"], "tile_matmul()'s b", node)
    if x.type.ndim != 2 or y.type.ndim != 2 or x.type.shape[1] != y.type.shape[0]:
        raise fb.error(f"tile_matmul() multiplies an (M, K) and a (K, N) tile, got shapes {x.type.shape} and "
                       f"{y.type.shape}", node)
    if not (x.type.dtype.is_float and y.type.dtype.is_float):
        raise fb.error(f"tile_matmul() takes float tiles, got {x.type.dtype} and {y.type.dtype}", node)
    third = fb.expr(a["out"]) if _given(a["out"]) else None  # evaluated once: it may have effects
    alpha_value = None
    if isinstance(third, Val) and not isinstance(third.type, T.TileType) and not _given(a["alpha"]):
        alpha_value, third, a["out"] = third, None, None  # tile_matmul(a, b, alpha): Warp's other form
    elif third is not None and not (isinstance(third, Val) and isinstance(third.type, T.TileType)):
        raise fb.error(f"tile_matmul()'s out must be a tile, got {fb.describe(third)}", a["out"])
    # As Warp's CPU: the elements of a and b are converted to out's dtype (without out: a's), which the
    # products and sums are computed in.
    dtype = third.type.dtype if third is not None else x.type.dtype
    if not dtype.is_float:
        raise fb.error(f"tile_matmul()'s out must be a float tile, got {dtype}", node)
    x, y = (v if v.type.dtype == dtype else
            Val(T.TileType(v.type.shape, dtype, v.type.storage),
                _convert(v.value, v.type.dtype, dtype, T.TileType(v.type.shape, dtype).mlir())) for v in (x, y))
    out_t = T.TileType((x.type.shape[0], y.type.shape[1]), dtype, x.type.storage)
    if alpha_value is not None:
        alpha = _scalar_value(fb, alpha_value, dtype, "tile_matmul()'s alpha", node)
    else:
        alpha = _scalar(fb, a["alpha"], dtype, "tile_matmul()'s alpha") if _given(a["alpha"]) else None
    if not _given(a["out"]):
        if _given(a["beta"]):
            raise fb.error("tile_matmul()'s beta scales the out tile: pass out", node)
        product = _matmul(out_t, x, y, None)
        if alpha is not None:
            product = arith.MulFOp(_splat(out_t, alpha), product).result
        return Val(out_t, product)
    out = third
    if out.type != out_t:
        raise fb.error(f"tile_matmul()'s out must be a {out_t}, got a {out.type}", node)
    beta = _scalar(fb, a["beta"], dtype, "tile_matmul()'s beta") if _given(a["beta"]) else None
    if alpha is None and beta is None:  # the common accumulation: out += a @ b
        result = _matmul(out_t, x, y, out.value)
    else:
        product = _matmul(out_t, x, y, None)
        if alpha is not None:
            product = arith.MulFOp(_splat(out_t, alpha), product).result
        scaled = out.value
        if beta is not None:  # as BLAS and Warp: out is not read when beta is 0 (a NaN or inf there stays out)
            scaled = arith.MulFOp(_splat(out_t, beta), out.value).result
            zero = arith.CmpFOp(arith.CmpFPredicate.OEQ, beta, constant(dtype, 0)).result
            mask = vector_d.BroadcastOp(ir.VectorType.get(list(out_t.shape), ir.IntegerType.get_signless(1)),
                                        zero).result
            scaled = arith.SelectOp(mask, constant(out_t, 0), scaled).result
        result = arith.AddFOp(scaled, product).result
    _rebind(fb, a["out"], Val(out_t, result), "tile_matmul(a, b, out)", node)
    return None


@_handler("tile_diag_add")
def _tile_diag_add(fb, a, node):
    m = _tile(fb, a["a"], "tile_diag_add()'s matrix", node)
    d = _tile(fb, a["d"], "tile_diag_add()'s diagonal", node)
    t = m.type
    if t.ndim != 2 or t.shape[0] != t.shape[1] or d.type.shape != (t.shape[0],) or d.type.dtype != t.dtype:
        raise fb.error(f"tile_diag_add() takes a square (N, N) tile and an (N,) tile of one dtype, got {t} and "
                       f"{d.type}", node)
    out = elements(m.value, t)
    n = t.shape[0]
    for i, x in enumerate(elements(d.value, d.type)):
        out[i * n + i] = _add(t, out[i * n + i], x)
    return Val(t, from_elements(t, out))


@_handler("tile_axpy")
def _tile_axpy(fb, a, node):
    src = _tile(fb, a["src"], "tile_axpy()'s src", node, composite=True)
    dest = _tile(fb, a["dest"], "tile_axpy()'s dest", node, composite=True)
    if src.type != dest.type:
        raise fb.error(f"tile_axpy() of tiles of different shapes or dtypes: {src.type} and {dest.type}", node)
    t = dest.type
    alpha = _scalar(fb, a["alpha"], t.scalar, "tile_axpy()'s alpha")
    result = _add(t, dest.value, _mul(t, _splat(t, alpha), src.value))
    _rebind(fb, a["dest"], Val(t, result), "tile_axpy()", node)
    return None
