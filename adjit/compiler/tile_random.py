"""Tiles of random numbers: Warp's tile_randi and tile_randf on the CPU.

Their emitters are registered into ``tiles._HANDLERS`` when this module is
imported (by frontend/calls.py, as tile_linalg.py). Warp's native
tile_randi/tile_randf hash the caller's state with the thread's index,
``rand_pcg(thread_idx + rng)``, and each thread then draws its elements in
turn from that one stream (randi / randf, which advance it). On the CPU the
block is one thread, thread 0, which holds every element: the stream is
``pcg(rng)`` and the elements draw from it in row-major order. Each draw is
the scalar randi / randf emitter of adjit/builtins/random.py, so the tile is
bit for bit Warp's CPU tile (Warp's own CPU test values are checked in
tests/python/tiles/test_tile_random_scatter.py). ``rng`` itself is read, not
advanced (Warp takes it by value).

Neither builtin is differentiable (as in Warp): the tile is wrapped in
``adjit.stop_gradient``, so bounds computed from inputs receive no gradient.
Warp needs constant bounds (ints for tile_randi, floats for tile_randf);
adjit also takes runtime ones, and int literals as tile_randf's bounds.
"""
from __future__ import annotations

from .. import types as T
from ..builtins import random as R
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from .tiles import _given, _handler, _shape, _storage, _tile_type, from_elements
from .values import Val


def _rng(fb, x, what: str, node):
    if not _given(x):
        raise fb.error(f"{what} needs the argument 'rng' (a state from rand_init())", node)
    v = fb.expr(x)
    if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int and not v.type.is_bool
            and v.type.bits == 32):
        raise fb.error(f"{what}'s rng must be a uint32 random state (from rand_init()), got {fb.describe(v)}", x,
                       KernelTypeError)
    return fb.materialize(v, v.type)  # int32 and uint32 are both i32


def _bounds(fb, a, dtype: T.ScalarType, what: str, node):
    lo, hi = a["min"], a["max"]
    if _given(lo) != _given(hi):
        raise fb.error(f"{what} takes both 'min' and 'max', or neither", node)
    if not _given(lo):
        return []
    out = []
    for x, name in ((lo, "min"), (hi, "max")):
        v = fb.expr(x)
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and not v.type.is_bool
                and (v.type.is_int or dtype.is_float)):
            raise fb.error(f"{what}'s {name} must be {'a float' if dtype.is_float else 'an int'} scalar, got "
                           f"{fb.describe(v)}", x, KernelTypeError)
        out.append(fb.materialize(fb.coerce(v, dtype, x), dtype))
    return out


def _emitter(name: str, dtype: T.ScalarType, draw):
    def emit(fb, a, node):
        what = f"{name}()"
        shape = _shape(fb, a["shape"], f"{what}'s shape", node)
        t = _tile_type(fb, shape, dtype, _storage(fb, a["storage"]), node)
        state = R.pcg(_rng(fb, a["rng"], what, node))  # rand_pcg(thread_idx + rng), thread 0
        bounds = _bounds(fb, a, dtype, what, node)
        scalars = []
        for _ in range(t.size):
            x, (state,) = draw([state, *bounds], None, None)
            scalars.append(x)
        tile = from_elements(t, scalars)
        return Val(t, adjit_d.StopGradientOp(tile.type, tile).result)
    return emit


_handler("tile_randi")(_emitter("tile_randi", T.int32, R._emit_randi))
_handler("tile_randf")(_emitter("tile_randf", T.float32, R._emit_randf))
