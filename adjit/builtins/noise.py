"""Perlin noise in kernels, with Warp's fields: ``noise``, ``pnoise``, ``curlnoise``.

Gradient noise on the integer lattice (Perlin's improved noise, as Warp
documents it): each lattice point carries a pseudo-random gradient drawn
from a hash of its coordinates and the ``state`` (a ``rand_init`` value,
never advanced); the noise at x is the blend of the corners' ramps
``dot(x - corner, gradient)`` over x's cell, along each axis in turn (x
first) with the quintic fade ``S(t) = 6t^5 - 15t^4 + 10t^3``. The hash and
the gradients are Warp 1.19's, so the fields are Warp's:

- a corner's hash is ``(c0 p0) ^ (c1 p1) ^ ... ^ (c_last p_last + state)``
  (uint32, wrapping; p = 73856093, 19349663, 53471161, 10000019);
- in 1-D its gradient is ``randf(hash, -1, 1)``; in n-D it is the draw of
  ``sample_unit_square`` / ``_cube`` / a 4-cube from the hash, normalized
  (zero if it is zero).

``pnoise`` wraps each corner's lattice index modulo its period before the
hash. ``curlnoise`` sums octaves of the analytic noise gradient (value and
gradient carried through each blend: ``d/dt [(b - a) S(t) + a] = (b' - a')
S(t) + (b - a) S'(t) e_k + a'``) at ``freq * x`` (``freq`` times
``lacunarity``, weight times ``gain`` each octave): in 2-D the rotated
gradient ``(-dN/dy, dN/dx)``; in 3-D (and 4-D, whose 4th coordinate is
time) the curl of three noise potentials, the 2nd and 3rd drawn with
``rand_init(state, 10019689)`` and then ``rand_init(.., 13112221)``, which
also carries on to the next octave (as Warp).

Everything is emitted as primitive ops, so autodiff differentiates the
fields in x (the lattice indices and hashes are integer ops and carry no
gradient); ``curlnoise``'s gradient is then the noise Hessian's, through the
analytic gradient. ``state``, periods, octaves, lacunarity and gain receive
no gradient (as in Warp).

Where Warp is undefined adjit is defined: coordinates whose floor is not an
int32 (huge, inf, NaN) use cell 0 (the value is NaN for inf and NaN); a
negative coordinate of ``pnoise`` wraps periodically (the floored modulo;
equal to Warp's for coordinates >= 0, which Warp requires); a period below 1
leaves its axis unwrapped (Warp requires periods > 0).
"""
from __future__ import annotations

import itertools

from .. import types as T
from .._deferred import deferred_import
from .random import pcg, uniform
from .registry import add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
scf = deferred_import("mlir.dialects.scf")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")

U32, F32, I32 = T.uint32, T.float32, T.int32

#: The hash's multiplier of each axis.
PRIMES = (73856093, 19349663, 53471161, 10000019)
#: The offsets of rand_init(state, offset) drawing curlnoise's 2nd and 3rd potentials.
CURL_OFFSETS = (10019689, 13112221)


def _f32(v: float):
    return values.constant(F32, v)


def _i32(v: int):
    return values.constant(I32, v)


def _add(a, b):
    return arith.AddFOp(a, b).result


def _sub(a, b):
    return arith.SubFOp(a, b).result


def _mul(a, b):
    return arith.MulFOp(a, b).result


# --- the lattice ------------------------------------------------------------------------------

def _cell(x):
    """(the int32 index of the cell holding float32 x, x's offset in it)."""
    fl = math.FloorOp(x).result
    offset = _sub(x, fl)
    # fptosi of a float outside int32 (or NaN) is poison: take cell 0 there.
    inside = arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.OGE, fl, _f32(-2.0 ** 31)).result,
                          arith.CmpFOp(arith.CmpFPredicate.OLT, fl, _f32(2.0 ** 31)).result).result
    fl = arith.SelectOp(inside, fl, _f32(0.0)).result
    return arith.FPToSIOp(I32.mlir(), fl).result, offset


def _wrap(i, period):
    """i modulo period, in [0, period) (the floored modulo); i where period < 1."""
    positive = arith.CmpIOp(arith.CmpIPredicate.sgt, period, _i32(0)).result
    safe = arith.SelectOp(positive, period, _i32(1)).result
    r = arith.RemSIOp(i, safe).result
    r = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.slt, r, _i32(0)).result, arith.AddIOp(r, safe).result,
                       r).result
    return arith.SelectOp(positive, r, i).result


def _lattice(coords, periods=None):
    """Per axis: (lower corner index, upper corner index, offset in the cell)."""
    axes = []
    for k, x in enumerate(coords):
        i0, offset = _cell(x)
        if periods is not None:
            i0 = _wrap(i0, periods[k])
        i1 = arith.AddIOp(i0, _i32(1)).result
        if periods is not None:
            i1 = _wrap(i1, periods[k])
        axes.append((i0, i1, offset))
    return axes


def _gradient(state, corner):
    """The pseudo-random gradient at a lattice point (its int32 indices)."""
    n = len(corner)
    h = arith.AddIOp(arith.MulIOp(corner[-1], values.constant(U32, PRIMES[n - 1])).result, state).result
    for k in range(n - 1):
        h = arith.XOrIOp(arith.MulIOp(corner[k], values.constant(U32, PRIMES[k])).result, h).result
    if n == 1:
        _, u = uniform(h)
        return [_add(_mul(_f32(2.0), u), _f32(-1.0))]  # randf(h, -1, 1)
    comps = []
    for _ in range(n):
        h, u = uniform(h)
        comps.append(_sub(u, _f32(0.5)))
    squares = _mul(comps[0], comps[0])
    for c in comps[1:]:
        squares = _add(squares, _mul(c, c))
    length = math.SqrtOp(squares).result
    nonzero = arith.CmpFOp(arith.CmpFPredicate.OGT, length, _f32(0.0)).result
    return [arith.SelectOp(nonzero, arith.DivFOp(c, length).result, _f32(0.0)).result for c in comps]


def _dot(a, b):
    out = _mul(a[0], b[0])
    for x, y in zip(a[1:], b[1:]):
        out = _add(out, _mul(x, y))
    return out


# --- the fade and the blend -------------------------------------------------------------------

def _fade(t):
    """S(t) = t^3 (t (6t - 15) + 10)."""
    inner = _add(_mul(t, _sub(_mul(t, _f32(6.0)), _f32(15.0))), _f32(10.0))
    return _mul(_mul(_mul(t, t), t), inner)


def _fade_slope(t):
    """S'(t) = 30 t^2 (t (t - 2) + 1)."""
    return _mul(_mul(_mul(_f32(30.0), t), t), _add(_mul(t, _sub(t, _f32(2.0))), _f32(1.0)))


def _blend(state, axes, with_gradient: bool):
    """The noise (and, with_gradient, its gradient as a list) at the point
    whose cells and offsets are ``axes`` (from _lattice)."""
    n = len(axes)
    offsets = [a[2] for a in axes]
    # Corners keyed by their bits, axis 0 first; each blend drops the first bit.
    level = {}
    for bits in itertools.product((0, 1), repeat=n):
        corner = [axes[k][b] for k, b in enumerate(bits)]
        g = _gradient(state, corner)
        ramp = [_sub(offsets[k], _f32(1.0)) if b else offsets[k] for k, b in enumerate(bits)]
        level[bits] = (_dot(ramp, g), g)
    for k in range(n):
        s = _fade(offsets[k])
        ds = _fade_slope(offsets[k]) if with_gradient else None
        blended = {}
        for rest in itertools.product((0, 1), repeat=n - 1 - k):
            (a, ga), (b, gb) = level[(0,) + rest], level[(1,) + rest]
            dv = _sub(b, a)
            value = _add(_mul(dv, s), a)
            grad = None
            if with_gradient:
                grad = []
                for j in range(n):
                    term = _mul(_sub(gb[j], ga[j]), s)
                    if j == k:
                        term = _add(term, _mul(dv, ds))
                    grad.append(_add(term, ga[j]))
            blended[rest] = (value, grad)
        level = blended
    return level[()]


# --- type rules --------------------------------------------------------------------------------

_POINTS = {1: F32, 2: T.vec2, 3: T.vec3, 4: T.vec4}


def _dims(t):
    """The number of coordinates of a noise point type, or None."""
    for n, p in _POINTS.items():
        if t == p:
            return n
    return None


def _signature_error(name, wanted, args):
    return TypeError(f"{name}() takes ({wanted}), got ({', '.join(map(str, args))}); the state comes from "
                     f"rand_init()")


def _infer_noise(args):
    if len(args) != 2 or args[0] != U32 or _dims(args[1]) is None:
        raise _signature_error("noise", "state: uint32, x: float32 | vec2 | vec3 | vec4", args)
    return F32


def _infer_pnoise(args):
    n = _dims(args[1]) if len(args) >= 2 else None
    if n is None or len(args) != 2 + n or args[0] != U32 or any(a != I32 for a in args[2:]):
        raise _signature_error("pnoise", "state: uint32, x: float32 | vec2 | vec3 | vec4, then one int period "
                               "per coordinate of x", args)
    return F32


def _infer_curlnoise(args):
    n = _dims(args[1]) if len(args) >= 2 else None
    ok = (n is not None and n >= 2 and 2 <= len(args) <= 5 and args[0] == U32
          and (len(args) < 3 or args[2] in (U32, I32)) and all(a == F32 for a in args[3:]))
    if not ok:
        raise _signature_error("curlnoise", "state: uint32, xy: vec2 | vec3 | vec4, octaves: uint32 = 1, "
                               "lacunarity: float32 = 2.0, gain: float32 = 0.5", args)
    return T.vec2 if n == 2 else T.vec3


# --- emitters -----------------------------------------------------------------------------------

def _components(v, t):
    if isinstance(t, T.ScalarType):
        return [v]
    return [vector_d.ExtractOp(v, [], [k]).result for k in range(t.length)]


def _vector(comps):
    return vector_d.FromElementsOp(T.vector(len(comps), F32).mlir(), comps).result


def _emit_noise(vals, types, result):
    return _blend(vals[0], _lattice(_components(vals[1], types[1])), False)[0]


def _emit_pnoise(vals, types, result):
    return _blend(vals[0], _lattice(_components(vals[1], types[1]), vals[2:]), False)[0]


def _emit_curlnoise(vals, types, result):
    n = _dims(types[1])
    point = _components(vals[1], types[1])
    octaves = vals[2] if len(vals) > 2 else values.constant(U32, 1)
    if len(vals) > 2 and types[2] == I32:  # (an int: a negative count is none)
        octaves = arith.MaxSIOp(octaves, _i32(0)).result
    lacunarity = vals[3] if len(vals) > 3 else _f32(2.0)
    gain = vals[4] if len(vals) > 4 else _f32(0.5)
    potentials = 1 if n == 2 else 3
    offsets = [pcg(values.constant(I32, o)) for o in CURL_OFFSETS]
    zero = _f32(0.0)
    # Carried: state, frequency, weight, the gradient sums of each potential.
    inits = [vals[0], _f32(1.0), _f32(1.0)] + [zero] * (potentials * n)
    index = ir.IndexType.get()
    loop = scf.ForOp(arith.ConstantOp(index, 0).result, arith.IndexCastUIOp(index, octaves).result,
                     arith.ConstantOp(index, 1).result, inits)
    with ir.InsertionPoint(loop.body):
        state, freq, weight, *sums = loop.inner_iter_args
        axes = _lattice([_mul(freq, c) for c in point])
        new_sums = []
        for p in range(potentials):
            if p:
                state = pcg(arith.AddIOp(state, offsets[p - 1]).result)  # rand_init(state, offset)
            _, grad = _blend(state, axes, True)
            new_sums += [_add(s, _mul(weight, g)) for s, g in zip(sums[p * n:(p + 1) * n], grad)]
        scf.YieldOp([state, _mul(freq, lacunarity), _mul(weight, gain)] + new_sums)
    sums = list(loop.results)[3:]
    if n == 2:
        return _vector([arith.NegFOp(sums[1]).result, sums[0]])
    d1, d2, d3 = (sums[p * n:(p + 1) * n] for p in range(3))
    return _vector([_sub(d3[1], d2[2]), _sub(d1[2], d3[0]), _sub(d2[0], d1[1])])


add_builtin("noise", "noise(state, x): Perlin noise (float32, about [-1, 1], zero at the integer lattice) at x: a "
            "float, vec2, vec3 or vec4; one feature per unit. ``state`` (from rand_init) selects the field and is "
            "not advanced. Warp's field; differentiable in x.", _infer_noise, _emit_noise,
            literal_types=lambda ts: [None, F32][:len(ts)] + [None] * max(0, len(ts) - 2))
add_builtin("pnoise", "pnoise(state, x, px[, py[, pz[, pt]]]): Perlin noise that repeats every px cells along x, "
            "py along y, ... (one int period per coordinate of x; a negative coordinate wraps too; a period below "
            "1 leaves its axis unwrapped). ``state`` is not advanced. Warp's field; differentiable in x.",
            _infer_pnoise, _emit_pnoise,
            literal_types=lambda ts: [None, F32][:len(ts)] + [I32] * max(0, len(ts) - 2))
add_builtin("curlnoise", "curlnoise(state, xy, octaves=1, lacunarity=2.0, gain=0.5): a divergence-free field from "
            "Perlin noise (positional arguments only): for a vec2, the rotated noise gradient (-dN/dy, dN/dx) (a "
            "vec2); for a vec3 (or vec4, whose 4th coordinate is time), the curl of three noise potentials (a "
            "vec3). Octave i samples the gradient at lacunarity^i xy with weight gain^i. ``state`` is not "
            "advanced. Warp's field; differentiable in xy.", _infer_curlnoise, _emit_curlnoise,
            literal_types=lambda ts: [None, None, U32, F32, F32][:len(ts)])
