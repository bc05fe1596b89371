"""Tile builtins (Warp's tile programming model): their entries.

A call's arguments include shapes, offsets and functions, not only values,
so the entries are marked ``tile`` and adjit/compiler/tiles.py emits their
calls from the arguments bound to Warp's parameter names (``params``, with
``defaults``). On the CPU a block is one thread, as in
Warp's CPU launches: ``tile(x)`` has one column and ``untile`` reads it.
"""
from __future__ import annotations

from .. import types as T
from .registry import add_builtin


def _kernel_only(name):
    def infer(args, **static):
        raise TypeError(f"{name}() takes and makes tiles, which exist only in kernels: call it in an "
                        "@adjit.kernel or @adjit.func")
    return infer


def _not_emitted(*args, **kwargs):
    raise AssertionError("tile builtins are emitted by adjit/compiler/tiles.py")


def _tile_builtin(name, doc, params, differentiable=True, rebinds=(), subscript=None, host=None, **defaults):
    """``rebinds``: the tiles the builtin writes (tile_matmul's out), by index in ``params``."""
    add_builtin(name, doc, _kernel_only(name), _not_emitted, differentiable=differentiable, params=params,
                tile=True, defaults=defaults, rebinds=rebinds, subscript=subscript, host=host)


_CREATE = "shape, dtype=float32, storage='register'"
_tile_builtin("tile_zeros", f"tile_zeros({_CREATE}): a tile of zeros.", ("shape", "dtype", "storage"),
              differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_ones", f"tile_ones({_CREATE}): a tile of ones.", ("shape", "dtype", "storage"),
              differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_empty", f"tile_empty({_CREATE}): a tile to be written (zeros in adjit: never a stale value).",
              ("shape", "dtype", "storage"), differentiable=False, dtype=T.float32, storage="register")
_tile_builtin("tile_full", "tile_full(shape, value, dtype=None, storage='register'): a tile filled with value (of "
              "value's type without dtype: float32 for a float literal, int32 for an int one).",
              ("shape", "value", "dtype", "storage"), dtype=None, storage="register")
_tile_builtin("tile_arange", "tile_arange(stop) / (start, stop) / (start, stop, step), dtype=: a 1-d tile of evenly "
              "spaced numbers (constants), as numpy.arange.", ("*args", "dtype", "storage"), differentiable=False,
              dtype=None, storage="register")
_tile_builtin("tile_load", "tile_load(a, shape, offset=(0, ...), storage='register', bounds_check=True, "
              "aligned=False): the tile of a at offset; elements outside a read as zero (with bounds_check).",
              ("a", "shape", "offset", "storage", "bounds_check", "aligned"), offset=None, storage="register",
              bounds_check=True, aligned=False)
_tile_builtin("tile_store", "tile_store(a, t, offset=(0, ...), bounds_check=True, aligned=False): writes tile t "
              "into a at offset; elements outside a are not written (with bounds_check).",
              ("a", "t", "offset", "bounds_check", "aligned"), offset=None, bounds_check=True, aligned=False)
_tile_builtin("tile_atomic_add", "tile_atomic_add(a, t, offset=(0, ...), bounds_check=True): atomically adds tile t "
              "into a at offset; returns the tile of the elements' old values.",
              ("a", "t", "offset", "bounds_check"), offset=None, bounds_check=True)
_tile_builtin("tile", "tile(x, preserve_type=False): a tile of each thread's x (a scalar, vector or matrix), its "
              "last extent the block's threads (1 on the CPU). As a type, tile[dtype, M, N] annotates @func parameters "
              "(tile[dtype]: any shape).", ("x", "preserve_type"), preserve_type=False, subscript=T.tile_annotation)
_tile_builtin("untile", "untile(a): each thread's value of a tile whose last extent is the block's threads.",
              ("a",))
_tile_builtin("tile_extract", "tile_extract(a, i, [j, ...]): the element of tile a at (i, j, ...) (as a[i, j]).",
              ("a", "*indices"))
_tile_builtin("tile_transpose", "tile_transpose(a): the transpose of a 2-d tile.", ("a",))
_tile_builtin("tile_broadcast", "tile_broadcast(a, shape): tile a broadcast to shape (numpy's rules).",
              ("a", "shape"))
_tile_builtin("tile_reshape", "tile_reshape(t, shape): tile t's elements in a new shape (one extent may be -1).",
              ("t", "shape"))
_tile_builtin("tile_squeeze", "tile_squeeze(t, axis=None): tile t without its extents of 1 (those of axis).",
              ("t", "axis"), axis=None)
_tile_builtin("tile_astype", "tile_astype(t, dtype): tile t converted to dtype.", ("t", "dtype"))
_tile_builtin("tile_view", "tile_view(t, offset, shape=None): the sub-tile of t at offset (constants).",
              ("t", "offset", "shape"), shape=None)
_tile_builtin("tile_assign", "tile_assign(dst, src, offset): writes tile src into tile dst at offset (constants).",
              ("dst", "src", "offset"), rebinds=(0,), offset=None)
_tile_builtin("tile_sum", "tile_sum(a, axis=None): the sum of a tile's elements, a tile of shape (1,) (along axis: "
              "the tile without that axis).", ("a", "axis"), axis=None)
_tile_builtin("tile_dot", "tile_dot(a, b): the sum of the products of two tiles' elements, a tile of shape (1,).",
              ("a", "b"))
_tile_builtin("tile_min", "tile_min(a): the smallest element, a tile of shape (1,).", ("a",))
_tile_builtin("tile_max", "tile_max(a): the largest element, a tile of shape (1,).", ("a",))
_tile_builtin("tile_argmin", "tile_argmin(a): the flat index of the smallest element (the first of equals), an int32 "
              "tile of shape (1,).", ("a",), differentiable=False)
_tile_builtin("tile_argmax", "tile_argmax(a): the flat index of the largest element (the first of equals), an int32 "
              "tile of shape (1,).", ("a",), differentiable=False)
_tile_builtin("tile_reduce", "tile_reduce(op, a, axis=None): a tile's elements combined by op (a builtin or @func of "
              "two scalars) in order, a tile of shape (1,) (along axis: the tile without that axis).",
              ("op", "a", "axis"), axis=None)
_tile_builtin("tile_scan_inclusive", "tile_scan_inclusive(a): the running sums of a tile's elements (row-major).",
              ("a",))
_tile_builtin("tile_scan_exclusive", "tile_scan_exclusive(a): the running sums before each element (row-major).",
              ("a",))
_tile_builtin("tile_scan_max_inclusive", "tile_scan_max_inclusive(a): the running maxima of a tile's elements.",
              ("a",))
_tile_builtin("tile_scan_min_inclusive", "tile_scan_min_inclusive(a): the running minima of a tile's elements.",
              ("a",))
_tile_builtin("tile_map", "tile_map(op, a, *args): op (a builtin or @func) applied to each element of tiles of one "
              "shape.", ("op", "a", "*args"))
_tile_builtin("tile_matmul", "tile_matmul(a, b, alpha=None) -> alpha a @ b; tile_matmul(a, b, out, alpha=1, beta=1) "
              "sets out = alpha a @ b + beta out, for (M, K) and (K, N) float tiles.",
              ("a", "b", "out", "alpha", "beta"), rebinds=(2,), out=None, alpha=None, beta=None)
_tile_builtin("tile_diag_add", "tile_diag_add(a, d): square tile a plus the diagonal matrix of the 1-d tile d.",
              ("a", "d"))
_tile_builtin("tile_axpy", "tile_axpy(alpha, src, dest): dest += alpha * src.", ("alpha", "src", "dest"), rebinds=(2,))

# --- factorizations, solves, sorting and gathers (emitted by adjit/compiler/tile_linalg.py) -----------------------

_FILL = ("fill_mode 'lower' (default; A = L L^T, from A's lower triangle) or 'upper' (A = U^T U, from its upper "
         "triangle), a constant")
_tile_builtin("tile_cholesky", f"tile_cholesky(A, fill_mode='lower'): the Cholesky factor of the symmetric "
              f"positive-definite (N, N) float tile A, its other triangle zero; {_FILL}.", ("A", "fill_mode"),
              fill_mode="lower")
_tile_builtin("tile_cholesky_inplace", f"tile_cholesky_inplace(A, fill_mode='lower'): replaces tile A by its Cholesky "
              f"factor (as tile_cholesky); {_FILL}.", ("A", "fill_mode"), rebinds=(0,), fill_mode="lower")
_tile_builtin("tile_cholesky_solve", f"tile_cholesky_solve(L, y, fill_mode='lower'): x with A x = y, given A's "
              f"Cholesky factor L (N, N) and y of shape (N,) or (N, K) (a right-hand side per column); {_FILL}.",
              ("L", "y", "fill_mode"), fill_mode="lower")
_tile_builtin("tile_cholesky_solve_inplace", f"tile_cholesky_solve_inplace(L, y, fill_mode='lower'): replaces tile y "
              f"by x with A x = y (as tile_cholesky_solve); {_FILL}.", ("L", "y", "fill_mode"), rebinds=(1,),
              fill_mode="lower")
_tile_builtin("tile_lower_solve", "tile_lower_solve(L, y): z with L z = y by forward substitution, for a lower "
              "triangular (N, N) tile L (its strict upper triangle is not read) and y of shape (N,) or (N, K).",
              ("L", "y"))
_tile_builtin("tile_lower_solve_inplace", "tile_lower_solve_inplace(L, y): replaces tile y by z with L z = y (as "
              "tile_lower_solve).", ("L", "y"), rebinds=(1,))
_tile_builtin("tile_upper_solve", "tile_upper_solve(U, z): x with U x = z by back substitution, for an upper "
              "triangular (N, N) tile U (its strict lower triangle is not read) and z of shape (N,) or (N, K).",
              ("U", "z"))
_tile_builtin("tile_upper_solve_inplace", "tile_upper_solve_inplace(U, z): replaces tile z by x with U x = z (as "
              "tile_upper_solve).", ("U", "z"), rebinds=(1,))
_tile_builtin("tile_sort", "tile_sort(keys, values): sorts the 1-d tile keys ascending and permutes values (a tile of "
              "its shape) with it, in place; stable (equal keys keep their order), NaN keys last.",
              ("keys", "values"), rebinds=(0, 1))
_tile_builtin("tile_from_thread", "tile_from_thread(shape, value, thread_idx, storage='register'): a tile filled "
              "with thread thread_idx's value; on the CPU the block is thread 0 alone (another constant index is an "
              "error, a runtime one is reported as an out-of-range access).",
              ("shape", "value", "thread_idx", "storage"), storage="register")
_tile_builtin("tile_load_indexed", "tile_load_indexed(a, indices, shape, offset=(0, ...), axis=0, storage='register'): "
              "the tile of a at offset, its positions along axis mapped by the 1-d int tile indices (offset[axis] + "
              "indices[i]); elements outside a read as zero.",
              ("a", "indices", "shape", "offset", "axis", "storage"), offset=None, axis=0, storage="register")
_tile_builtin("tile_store_indexed", "tile_store_indexed(a, indices, t, offset=(0, ...), axis=0): writes tile t into a "
              "at offset, its positions along axis mapped by the 1-d int tile indices; elements outside a are not "
              "written.", ("a", "indices", "t", "offset", "axis"), offset=None, axis=0)
_tile_builtin("tile_atomic_add_indexed", "tile_atomic_add_indexed(a, indices, t, offset=(0, ...), axis=0): atomically "
              "adds tile t into a at offset, its positions along axis mapped by the 1-d int tile indices; returns the "
              "old values (zero for elements outside a, which are not written).",
              ("a", "indices", "t", "offset", "axis"), offset=None, axis=0)

# --- random tiles, scatters and gathers (emitted by adjit/compiler/tile_random.py and tile_scatter.py) -----------

_RAND = ("the block's one thread (the CPU's) draws every element, row-major, from the stream pcg(rng) (Warp's "
         "rand_pcg(thread_idx + rng)), as Warp's CPU tiles; rng is not advanced; not differentiable")
_tile_builtin("tile_randi", f"tile_randi(shape, rng, min=, max=, storage='register'): an int32 tile of random "
              f"integers (randi), in [min, max) with both bounds; {_RAND}.", ("shape", "rng", "min", "max", "storage"),
              differentiable=False, min=None, max=None, storage="register")
_tile_builtin("tile_randf", f"tile_randf(shape, rng, min=, max=, storage='register'): a float32 tile of random floats "
              f"(randf) in [0, 1), or in [min, max) with both bounds; {_RAND}.",
              ("shape", "rng", "min", "max", "storage"), differentiable=False, min=None, max=None, storage="register")
_SCATTER = ("one index per dimension of a (i, j, k, l); Warp's threads each pass their own arguments, and on the CPU "
            "the block is one thread: one call is one write, made where has_value (a bool) holds; an index outside "
            "the tile there is reported as an out-of-range access and writes nothing")
_tile_builtin("tile_scatter_add", f"tile_scatter_add(a, i, [j, ...], value, has_value, atomic=True): adds value to "
              f"the element (i, ...) of tile a, in place; {_SCATTER}; atomic (a constant bool) changes nothing with "
              "one thread. The value's gradient is the element's.",
              ("a", "*args", "i", "j", "k", "l", "value", "has_value", "atomic"), rebinds=(0,), i=None, j=None,
              k=None, l=None, value=None, has_value=None, atomic=True)
_tile_builtin("tile_scatter_masked", f"tile_scatter_masked(a, i, [j, ...], value, has_value): writes value into the "
              f"element (i, ...) of tile a, in place; {_SCATTER}. The overwritten element gets no gradient.",
              ("a", "*args", "i", "j", "k", "l", "value", "has_value"), rebinds=(0,), i=None, j=None, k=None, l=None,
              value=None, has_value=None)
_tile_builtin("tile_slice_indexed", "tile_slice_indexed(t, indices): the gather t[indices, :] (also written so, or "
              "t[:, indices]): along the axis of the 1-d int index tile, out[.., k, ..] = t[.., indices[k], ..], the "
              "other axes full; negative indices wrap once (numpy's), one still outside is reported as an "
              "out-of-range access and reads zero; duplicate indices sum their gradients.", ("t", "indices"))

# --- tile stacks (emitted by adjit/compiler/tile_stack.py) -------------------------------------------------------

_STACK = ("on the CPU the block is one thread: one call pushes (pops) at most one element, at the top, so a stack is "
          "last in, first out")
_tile_builtin("tile_stack", "tile_stack(capacity, dtype): an empty block-wide stack of up to capacity (a constant) "
              "elements of dtype (a scalar, vector or matrix type); called from Python, the stack's type (a @func "
              "parameter's annotation). Not differentiable.", ("capacity", "dtype"), differentiable=False,
              host=T.tile_stack_type, capacity=None, dtype=None)
_tile_builtin("tile_stack_push", f"tile_stack_push(s, value, has_value): pushes value (of the stack's dtype) where "
              f"has_value holds and the stack has room; returns its slot, or -1 (nothing pushed; a full stack drops "
              f"the value); {_STACK}.", ("s", "value", "has_value"), differentiable=False, rebinds=(0,))
_tile_builtin("tile_stack_pop", f"tile_stack_pop(s): (value, slot): the top element and its slot, or (zero, -1) for "
              f"an empty stack; {_STACK}.", ("s",), differentiable=False, rebinds=(0,))
_tile_builtin("tile_stack_clear", "tile_stack_clear(s): empties the stack.", ("s",), differentiable=False,
              rebinds=(0,))
_tile_builtin("tile_stack_count", "tile_stack_count(s): the number of elements in the stack (an int).", ("s",),
              differentiable=False)

# --- FFTs (emitted by adjit/compiler/tile_fft.py) ------------------------------------------------------------------

_FFT = ("along the last dimension of a tile of vec2f or vec2d (complex numbers: component 0 real, 1 imaginary) of at "
        "least 2 dimensions, each leading position a batch, in place")
_tile_builtin("tile_fft", f"tile_fft(inout): the forward FFT (numpy's fft) {_FFT}.", ("inout",), rebinds=(0,))
_tile_builtin("tile_ifft", f"tile_ifft(inout): the inverse FFT, unnormalized (numpy's ifft times N), {_FFT}.",
              ("inout",), rebinds=(0,))
