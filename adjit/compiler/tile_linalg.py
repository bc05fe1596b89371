"""Tile factorizations, solves, sorting and gathers: Warp's tile_cholesky,
tile_*_solve, tile_sort, tile_from_thread and tile_*_indexed on the CPU.

Their emitters are registered into ``tiles._HANDLERS`` when this module is
imported (by frontend/calls.py, which dispatches tile calls; an import from
tiles.py would make an import cycle). As there, a tile is one SSA
``vector<shape x scalar>`` of the block's one thread, and each builtin is
unrolled into scalar arith/math ops on its elements (``elements``) and
rebuilt (``from_elements``): the adjoint and tangent passes differentiate
them through those ops' rules, so every builtin here has gradients, the
in-place forms included (in Warp the in-place forms, tile_cholesky_solve
and tile_upper_solve have none).

- Cholesky: Warp's scalar algorithm (column by column, ``L[j, j] = sqrt(A[j,
  j] - sum L[j, k]^2)``), which reads only the triangle of ``A`` that
  ``fill_mode`` names; the result's other triangle is zero. Its gradient is
  the one of that triangle (as Warp's adjoint: an off-diagonal entry stands
  for both of its symmetric places).
- Solves: forward and back substitution, one right-hand side per column of
  a 2-d ``y``; they read only the triangle they solve with. A zero on the
  diagonal divides by one (the row's residual is its result), as Warp's.
- tile_sort: a Batcher odd-even merge-sort network of compare-exchanges
  (``arith.cmp`` + ``arith.select``; lengths that are not powers of two
  leave the padding comparators out). Each key carries its position, and
  equal keys keep their order: the sort is stable (numpy's
  ``argsort(kind='stable')``); NaN keys go last, as in numpy.
- tile_from_thread: the block is thread 0 alone; another thread_idx is an
  error (at compile time when constant, else an index check).
- tile_*_indexed: along ``axis`` the array index is ``offset[axis] +
  indices[i]``; elements outside the array read zero and are not written
  (Warp's rule; as tile_load's clamped, guarded accesses).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math as math_d

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from .tiles import (_array, _array_tile_check, atomic_adds, _const_int, _element_indices, elements, from_elements,
                    _given, _guarded, _handler, _HANDLERS, _index, _offsets, _rebind, _shape, _splat, _static,
                    _storage, _Target, _tile, _tile_type)
from .values import Val, constant, to_index


# --- arguments ------------------------------------------------------------------------------------

def _fill_mode(fb, x, what: str) -> bool:
    """Whether ``fill_mode`` (a constant "lower" or "upper") is "upper"."""
    mode = _static(fb, x, str, f"{what}'s fill_mode")
    if mode not in ("lower", "upper"):
        raise fb.error(f"{what}'s fill_mode must be 'lower' or 'upper', got {mode!r}", x)
    return mode == "upper"


def _square(fb, x, what: str, node) -> Val:
    m = _tile(fb, x, what, node)
    t = m.type
    if t.ndim != 2 or t.shape[0] != t.shape[1] or not t.dtype.is_float:
        raise fb.error(f"{what} must be a square (N, N) tile of floats, got a {t}", node, KernelTypeError)
    return m


def _rhs(fb, matrix: Val, x, what: str, fn: str, node) -> Val:
    """The right-hand sides of a solve: an (N,) or (N, K) tile of the matrix's dtype."""
    y = _tile(fb, x, what, node)
    n = matrix.type.shape[0]
    if y.type.ndim > 2 or y.type.shape[0] != n:
        raise fb.error(f"{fn}: {what} must be an ({n},) or ({n}, K) tile for an ({n}, {n}) matrix, got shape "
                       f"{y.type.shape}", node, KernelTypeError)
    if y.type.dtype != matrix.type.dtype:
        raise fb.error(f"{fn}: the matrix holds {matrix.type.dtype} and {what} {y.type.dtype} (they need one dtype)",
                       node, KernelTypeError)
    return y


# --- scalar arithmetic ----------------------------------------------------------------------------

def _sub(x, y):
    return arith.SubFOp(x, y).result


def _mul(x, y):
    return arith.MulFOp(x, y).result


def _matrix(m: Val):
    """get(i, j): the scalar at row i, column j of a 2-d tile."""
    n = m.type.shape[1]
    scalars = elements(m.value, m.type)
    return lambda i, j: scalars[i * n + j]


# --- Cholesky -------------------------------------------------------------------------------------

def _cholesky(m: Val, upper: bool) -> Val:
    """Warp's scalar Cholesky: the lower factor L (A = L L^T) from A's lower
    triangle, or the upper one U = L^T (A = U^T U) from its upper triangle."""
    t = m.type
    n = t.shape[0]
    a = _matrix(m)
    below = (lambda i, j: a(j, i)) if upper else a  # A[i, j] for i >= j, from the triangle read
    one = constant(t.dtype, 1)
    low = {}
    for j in range(n):
        s = below(j, j)
        for k in range(j):
            s = _sub(s, _mul(low[j, k], low[j, k]))
        d = math_d.SqrtOp(s).result
        low[j, j] = d
        inv = arith.DivFOp(one, d).result
        for i in range(j + 1, n):
            s = below(i, j)
            for k in range(j):
                s = _sub(s, _mul(low[i, k], low[j, k]))
            low[i, j] = _mul(s, inv)
    zero = constant(t.dtype, 0)
    out = [zero] * (n * n)
    for (i, j), x in low.items():
        out[j * n + i if upper else i * n + j] = x
    return Val(t, from_elements(t, out))


@_handler("tile_cholesky")
def _tile_cholesky(fb, a, node):
    m = _square(fb, a["A"], "tile_cholesky()'s A", node)
    return _cholesky(m, _fill_mode(fb, a["fill_mode"], "tile_cholesky()"))


@_handler("tile_cholesky_inplace")
def _tile_cholesky_inplace(fb, a, node):
    m = _square(fb, a["A"], "tile_cholesky_inplace()'s A", node)
    factor = _cholesky(m, _fill_mode(fb, a["fill_mode"], "tile_cholesky_inplace()"))
    _rebind(fb, a["A"], factor, "tile_cholesky_inplace()", node)
    return None


# --- triangular solves ----------------------------------------------------------------------------

def _divide_by_diagonal(s, d, dtype):
    """s / d, or s where d is zero (Warp's rule; the divisor is then one, so
    no inf or NaN reaches the adjoint)."""
    nonzero = arith.CmpFOp(arith.CmpFPredicate.UNE, d, constant(dtype, 0)).result
    return arith.DivFOp(s, arith.SelectOp(nonzero, d, constant(dtype, 1)).result).result


def _substitute(get, rhs: list, n: int, dtype, forward: bool) -> list:
    """x with ``M x = rhs`` for a triangular M whose entries ``get(i, j)``
    are read on and below (forward) or on and above (back) the diagonal."""
    x = [None] * n
    rows = range(n) if forward else range(n - 1, -1, -1)
    for i in rows:
        s = rhs[i]
        for j in (range(i) if forward else range(i + 1, n)):
            s = _sub(s, _mul(get(i, j), x[j]))
        x[i] = _divide_by_diagonal(s, get(i, i), dtype)
    return x


def _solve(y: Val, passes) -> Val:
    """Solves each column of y (an (N,) or (N, K) tile) by the substitutions
    ``passes``: [(get, forward)], applied in order."""
    t = y.type
    n = t.shape[0]
    cols = 1 if t.ndim == 1 else t.shape[1]
    scalars = elements(y.value, t)
    out = [None] * t.size
    for c in range(cols):
        column = [scalars[i * cols + c] for i in range(n)]
        for get, forward in passes:
            column = _substitute(get, column, n, t.dtype, forward)
        for i in range(n):
            out[i * cols + c] = column[i]
    return Val(t, from_elements(t, out))


def _cholesky_passes(m: Val, upper: bool):
    """L then L^T (lower), or U^T then U (upper)."""
    a = _matrix(m)
    transposed = lambda i, j: a(j, i)  # noqa: E731
    return [(transposed, True), (a, False)] if upper else [(a, True), (transposed, False)]


def _solver(name: str, matrix_param: str, rhs_param: str, inplace: bool, passes):
    def emit(fb, a, node):
        fn = f"{name}()"
        m = _square(fb, a[matrix_param], f"{fn}'s {matrix_param}", node)
        y = _rhs(fb, m, a[rhs_param], rhs_param, fn, node)
        upper = _fill_mode(fb, a["fill_mode"], fn) if "fill_mode" in a else None
        x = _solve(y, passes(m, upper))
        if not inplace:
            return x
        _rebind(fb, a[rhs_param], x, fn, node)
        return None
    return emit


for _inplace in (False, True):
    _suffix = "_inplace" if _inplace else ""
    _HANDLERS[f"tile_cholesky_solve{_suffix}"] = _solver(f"tile_cholesky_solve{_suffix}", "L", "y", _inplace,
                                                         _cholesky_passes)
    _HANDLERS[f"tile_lower_solve{_suffix}"] = _solver(f"tile_lower_solve{_suffix}", "L", "y", _inplace,
                                                      lambda m, _: [(_matrix(m), True)])
    _HANDLERS[f"tile_upper_solve{_suffix}"] = _solver(f"tile_upper_solve{_suffix}", "U", "z", _inplace,
                                                      lambda m, _: [(_matrix(m), False)])


# --- sorting --------------------------------------------------------------------------------------

def merge_sort_network(n: int) -> list[tuple[int, int]]:
    """Batcher's odd-even merge sort for n elements: compare-exchanges (i, j),
    i < j, that put the smaller at i. Built for the next power of two and
    without the comparators that touch the padding (which, largest, would
    never move)."""
    size = 1
    while size < n:
        size *= 2
    pairs = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < n:
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return pairs


def _key_less(dtype: T.ScalarType):
    """less(x, y) on keys: ordered compare; for floats, NaN after every number."""
    if dtype.is_float:
        def less(x, y):
            lt = arith.CmpFOp(arith.CmpFPredicate.OLT, x, y).result
            x_num = arith.CmpFOp(arith.CmpFPredicate.ORD, x, x).result
            y_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, y, y).result
            return arith.OrIOp(lt, arith.AndIOp(x_num, y_nan).result).result
        return less
    pred = arith.CmpIPredicate.ult if dtype.is_unsigned else arith.CmpIPredicate.slt
    return lambda x, y: arith.CmpIOp(pred, x, y).result


@_handler("tile_sort")
def _tile_sort(fb, a, node):
    keys = _tile(fb, a["keys"], "tile_sort()'s keys", node)
    values = _tile(fb, a["values"], "tile_sort()'s values", node)
    kt, vt = keys.type, values.type
    if kt.ndim != 1 or vt.shape != kt.shape:
        raise fb.error(f"tile_sort() sorts a 1-d keys tile and a values tile of its shape, got shapes {kt.shape} and "
                       f"{vt.shape}", node, KernelTypeError)
    n = kt.size
    k = elements(keys.value, kt)
    v = elements(values.value, vt)
    pos = [constant(T.int32, i) for i in range(n)]
    less = _key_less(kt.dtype)
    for i, j in merge_sort_network(n):
        # Swap when (k[j], pos[j]) < (k[i], pos[i]): the smaller key, the earlier position among equals.
        j_less = less(k[j], k[i])
        true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
        tie = arith.AndIOp(arith.XOrIOp(less(k[i], k[j]), true).result, arith.XOrIOp(j_less, true).result).result
        earlier = arith.CmpIOp(arith.CmpIPredicate.slt, pos[j], pos[i]).result
        swap = arith.OrIOp(j_less, arith.AndIOp(tie, earlier).result).result
        for xs in (k, v, pos):
            xs[i], xs[j] = arith.SelectOp(swap, xs[j], xs[i]).result, arith.SelectOp(swap, xs[i], xs[j]).result
    _rebind(fb, a["keys"], Val(kt, from_elements(kt, k)), "tile_sort()", node)
    _rebind(fb, a["values"], Val(vt, from_elements(vt, v)), "tile_sort()", node)
    return None


# --- threads --------------------------------------------------------------------------------------

@_handler("tile_from_thread")
def _tile_from_thread(fb, a, node):
    """A tile filled with thread ``thread_idx``'s value. The CPU's block is
    thread 0 alone: a constant other index is an error here, a runtime one
    is checked as an index into the block's one thread (reported after the
    launch as an out-of-range access; without bounds checks the value is
    thread 0's, as Warp's CPU code, which ignores the index)."""
    v = fb.expr(a["value"])
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and not v.type.is_bool):
        raise fb.error(f"tile_from_thread()'s value must be an int or float scalar (adjit's tiles hold scalars), got "
                       f"{fb.describe(v)}", a["value"] if _given(a["value"]) else node, KernelTypeError)
    v = fb.concrete(v)
    shape = _shape(fb, a["shape"], "tile_from_thread()'s shape", node)
    t = _tile_type(fb, shape, v.type, _storage(fb, a["storage"]), node)
    if not _given(a["thread_idx"]):
        raise fb.error("tile_from_thread() needs the argument 'thread_idx'", node)
    idx = fb.expr(a["thread_idx"])
    if not (isinstance(idx, Val) and isinstance(idx.type, T.ScalarType) and idx.type.is_int
            and not idx.type.is_bool):
        raise fb.error(f"tile_from_thread()'s thread_idx must be an integer, got {fb.describe(idx)}",
                       a["thread_idx"], KernelTypeError)
    if idx.is_literal:
        if idx.literal != 0:
            raise fb.error(f"tile_from_thread(thread_idx={idx.literal}): a block on the CPU is one thread, thread 0 "
                           "(block_dim() is 1)", a["thread_idx"])
    else:
        adjit_d.CheckIndexOp(to_index(fb.materialize(idx, idx.type), idx.type), _index(1),
                             "tile_from_thread()'s thread_idx (the CPU's block is one thread)")
    return Val(t, _splat(t, fb.materialize(v, v.type)))


# --- indexed loads and stores ---------------------------------------------------------------------

def _indices_tile(fb, x, n: int, what: str, node) -> list[ir.Value]:
    """The 1-d int tile of indices as ``index`` values (n of them)."""
    ind = _tile(fb, x, f"{what}'s indices", node)
    it = ind.type
    if it.ndim != 1 or not it.dtype.is_int:
        raise fb.error(f"{what}'s indices must be a 1-d tile of integers, got a {it}", node, KernelTypeError)
    if it.size != n:
        raise fb.error(f"{what}: {it.size} indices for a tile of extent {n} along the axis (they must match)", node,
                       KernelTypeError)
    return [to_index(s, it.dtype) for s in elements(ind.value, it)]


def _indexed_elements(array: Val, offsets, shape, axis: int, indices):
    """For each element of the tile (row-major): its array indices (clamped
    into the array) and whether it is inside. Along ``axis`` the index is the
    offset plus ``indices`` at the element's position, elsewhere the offset
    plus the position (Warp's compute_index)."""
    return _element_indices(_Target.whole(array, []), offsets, shape, True, along=(axis, indices))


def _axis_of(fb, x, ndim: int, what: str, node) -> int:
    axis = _const_int(fb, x, f"{what}'s axis") if _given(x) else x
    if not 0 <= axis < ndim:
        raise fb.error(f"{what}: axis {axis} of a {ndim}-d array", x if _given(x) else node)
    return axis


@_handler("tile_load_indexed")
def _tile_load_indexed(fb, a, node):
    what = "tile_load_indexed()"
    array = _array(fb, a["a"], f"{what}'s array", node)
    shape = _shape(fb, a["shape"], f"{what}'s shape", node)
    if len(shape) != array.type.ndim:
        raise fb.error(f"{what}: a {len(shape)}-d shape for a {array.type.ndim}-d array (they need the same number "
                       "of dimensions)", node, KernelTypeError)
    axis = _axis_of(fb, a["axis"], array.type.ndim, what, node)
    indices = _indices_tile(fb, a["indices"], shape[axis], what, node)
    t = _tile_type(fb, shape, array.type.dtype, _storage(fb, a["storage"]), node)
    offsets = _offsets(fb, a["offset"], t.ndim, what, node)
    zero = constant(t.dtype, 0)
    scalars = []
    for idx, inside in _indexed_elements(array, offsets, shape, axis, indices):
        x = fb.load_element(array, idx).value
        scalars.append(arith.SelectOp(inside, x, zero).result)
    return Val(t, from_elements(t, scalars))


def _indexed_target(fb, a, what: str, node):
    array = _array(fb, a["a"], f"{what}'s array", node)
    tile = _tile(fb, a["t"], f"{what}'s tile", node)
    _array_tile_check(fb, array, tile.type, what, node)
    axis = _axis_of(fb, a["axis"], array.type.ndim, what, node)
    indices = _indices_tile(fb, a["indices"], tile.type.shape[axis], what, node)
    offsets = _offsets(fb, a["offset"], tile.type.ndim, what, node)
    return array, tile, list(_indexed_elements(array, offsets, tile.type.shape, axis, indices))


@_handler("tile_store_indexed")
def _tile_store_indexed(fb, a, node):
    array, tile, places = _indexed_target(fb, a, "tile_store_indexed()", node)
    for x, (idx, inside) in zip(elements(tile.value, tile.type), places):
        _guarded(inside, lambda x=x, idx=idx: adjit_d.StoreOp(x, array.value, idx))
    return None


@_handler("tile_atomic_add_indexed")
def _tile_atomic_add_indexed(fb, a, node):
    array, tile, places = _indexed_target(fb, a, "tile_atomic_add_indexed()", node)
    return atomic_adds(array, tile, places)
