"""Random numbers in kernels, with Warp's streams.

The generator is the PCG hash of Jarzynski & Olano (2020), as Warp documents
it: a ``uint32`` state, ``rand_init(seed) = pcg(seed)``,
``rand_init(seed, offset) = pcg(seed + pcg(offset))``, and each draw replaces
the state by its hash. A draw's caller names the state, and the frontend
rebinds that name to the advanced state (``rebinds``), so successive
calls on one local differ, as Warp's do. The samplers spend the draws as
Warp 1.19 does (checked against it, bit for bit for the integer draws and
``randf``): uniform directions from (z, phi), balls by a cube-root radius,
Poisson by Knuth's product below a rate of 10 and Hoermann's PTRS
(transformed rejection with squeeze) from 10 on.

No draw is differentiable: the values depend on the state only (a rate or
bounds passed in receive no gradient, as in Warp).
"""
from __future__ import annotations

import math as pymath

from .. import types as T
from .._deferred import deferred_import
from .arrays import emit_lower_bound
from .registry import add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
scf = deferred_import("mlir.dialects.scf")
vector_d = deferred_import("mlir.dialects.vector")
adjit_d = deferred_import("adjit.dialects.adjit")
values = deferred_import("adjit.compiler.values")

U32, F32, I32 = T.uint32, T.float32, T.int32


# --- the generator ---------------------------------------------------------------------------

def _u32(v: int) -> ir.Value:
    return values.constant(U32, v)


def _f32(v: float) -> ir.Value:
    return values.constant(F32, v)


def pcg(x: ir.Value) -> ir.Value:
    """The PCG hash of a uint32 (i32) value; arithmetic wraps mod 2^32."""
    s = arith.AddIOp(arith.MulIOp(x, _u32(747796405)).result, _u32(2891336453)).result
    shift = arith.AddIOp(arith.ShRUIOp(s, _u32(28)).result, _u32(4)).result
    w = arith.MulIOp(arith.XOrIOp(arith.ShRUIOp(s, shift).result, s).result, _u32(277803737)).result
    return arith.XOrIOp(arith.ShRUIOp(w, _u32(22)).result, w).result


def uniform(state: ir.Value):
    """(next state, a float32 in [0, 1) that is a multiple of 2^-24)."""
    state = pcg(state)
    top = arith.UIToFPOp(F32.mlir(), arith.ShRUIOp(state, _u32(8)).result).result
    return state, arith.MulFOp(top, _f32(1.0 / 16777216.0)).result


def _uniforms(state, count):
    out = []
    for _ in range(count):
        state, u = uniform(state)
        out.append(u)
    return state, out


def _mul(a, b):
    return arith.MulFOp(a, b).result


def _add(a, b):
    return arith.AddFOp(a, b).result


def _sub(a, b):
    return arith.SubFOp(a, b).result


# --- type rules ----------------------------------------------------------------------------

def _state_then(name, *rest):
    """An infer for name(state: uint32, *rest) -> result: ``rest`` are the
    other parameters' types, the last item of ``rest`` the result."""
    params, result = rest[:-1], rest[-1]

    def infer(args):
        if len(args) != 1 + len(params) or args[0] != U32 or any(a != p for a, p in zip(args[1:], params)):
            wanted = ", ".join(["state: uint32"] + [str(p) for p in params])
            raise TypeError(f"{name}() takes ({wanted}), got ({', '.join(map(str, args))}); the state comes "
                            f"from rand_init()")
        return result
    return infer


def _literal_types(*params):
    return lambda types: [None, *params][:len(types)] + [None] * max(0, len(types) - 1 - len(params))


def _draw(name, doc, infer, emit, params=()):
    """Registers a draw: it writes its state (the first argument)."""
    add_builtin(name, doc, infer, emit, differentiable=False, rebinds=(0,), advances_state=True,
                literal_types=_literal_types(*params))


# --- rand_init, randi, randu, randf, randn -------------------------------------------------

def _infer_rand_init(args):
    if len(args) in (1, 2) and all(a == I32 for a in args):
        return U32
    raise TypeError(f"rand_init() takes (seed: int) or (seed: int, offset: int), got ({', '.join(map(str, args))})")


def _emit_rand_init(vals, types, result):
    if len(vals) == 1:
        return pcg(vals[0])
    return pcg(arith.AddIOp(vals[0], pcg(vals[1])).result)


add_builtin("rand_init", "rand_init(seed) / rand_init(seed, offset): a random number generator state "
            "(uint32): the PCG hash of the seed (plus the hash of the offset, a distinct stream per offset).",
            _infer_rand_init, _emit_rand_init, differentiable=False, literal_types=lambda ts: [I32] * len(ts))


def _infer_randi(args):
    if len(args) == 1:
        return _state_then("randi", I32)(args)
    return _state_then("randi", I32, I32, I32)(args)


def _emit_randi(vals, types, result):
    """The new state as an int; with (low, high): state mod (high - low) + low,
    the remainder unsigned (as Warp)."""
    state = pcg(vals[0])
    if len(vals) == 1:
        return state, [state]
    span = arith.SubIOp(vals[2], vals[1]).result
    safe = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, span, _u32(0)).result, _u32(1), span).result
    return arith.AddIOp(arith.RemUIOp(state, safe).result, vals[1]).result, [state]


def _infer_randu(args):
    if len(args) == 1:
        return _state_then("randu", U32)(args)
    return _state_then("randu", U32, U32, U32)(args)


def _infer_randf(args):
    if len(args) == 1:
        return _state_then("randf", F32)(args)
    return _state_then("randf", F32, F32, F32)(args)


def _emit_randf(vals, types, result):
    """A multiple of 2^-24 in [0, 1); with (low, high): (high - low) u + low."""
    state, u = uniform(vals[0])
    if len(vals) == 1:
        return u, [state]
    return _add(_mul(_sub(vals[2], vals[1]), u), vals[1]), [state]


def _emit_randn(vals, types, result):
    """Box-Muller: sqrt(-2 log u1) cos(2 pi u2)."""
    state, (u1, u2) = _uniforms(vals[0], 2)
    radius = math.SqrtOp(_mul(_f32(-2.0), math.LogOp(u1).result)).result
    return _mul(radius, math.CosOp(_mul(_f32(2.0 * pymath.pi), u2)).result), [state]


_draw("randi", "randi(state): a uniform random int32 (the whole range); randi(state, low, high): in [low, high). "
      "Advances state.", _infer_randi, _emit_randi, params=(I32, I32))
_draw("randu", "randu(state): a uniform random uint32; randu(state, low, high): in [low, high). Advances state.",
      _infer_randu, _emit_randi, params=(U32, U32))
_draw("randf", "randf(state): a uniform random float in [0, 1), a multiple of 2^-24; randf(state, low, high): "
      "low + (high - low) randf(state). Advances state.", _infer_randf, _emit_randf, params=(F32, F32))
_draw("randn", "randn(state): a standard normal sample (Box-Muller, two uniform draws). Advances state.",
      _state_then("randn", F32), _emit_randn)


# --- samplers ----------------------------------------------------------------------------------

def _vector(comps):
    return vector_d.FromElementsOp(T.vector(len(comps), F32).mlir(), comps).result


def _circle(phi_u):
    phi = _mul(_f32(2.0 * pymath.pi), phi_u)
    return math.CosOp(phi).result, math.SinOp(phi).result


def _direction(z, phi_u):
    """The unit vector at height z and azimuth 2 pi phi_u."""
    r = math.SqrtOp(arith.MaximumFOp(_sub(_f32(1.0), _mul(z, z)), _f32(0.0)).result).result
    c, s = _circle(phi_u)
    return [_mul(r, c), _mul(r, s), z]


def _emit_ring(vals, types, result):
    state, (u,) = _uniforms(vals[0], 1)
    return _vector(list(_circle(u))), [state]


def _emit_disk(vals, types, result):
    state, (a, b) = _uniforms(vals[0], 2)
    r = math.SqrtOp(a).result
    c, s = _circle(b)
    return _vector([_mul(r, c), _mul(r, s)]), [state]


def _emit_box(n):
    def emit(vals, types, result):
        state, us = _uniforms(vals[0], n)
        return _vector([_sub(u, _f32(0.5)) for u in us]), [state]
    return emit


def _emit_sphere(hemisphere, ball):
    def emit(vals, types, result):
        """Surface: z = 1 - 2a (hemisphere: 1 - a), phi = 2 pi b; a ball
        scales it by cbrt(c)."""
        state, us = _uniforms(vals[0], 3 if ball else 2)
        a, b = us[0], us[1]
        z = _sub(_f32(1.0), a if hemisphere else _mul(_f32(2.0), a))
        p = _direction(z, b)
        if ball:
            radius = math.CbrtOp(us[2]).result
            p = [_mul(radius, c) for c in p]
        return _vector(p), [state]
    return emit


def _emit_triangle(vals, types, result):
    """Barycentric (1 - sqrt(a), b sqrt(a))."""
    state, (a, b) = _uniforms(vals[0], 2)
    r = math.SqrtOp(a).result
    return _vector([_sub(_f32(1.0), r), _mul(b, r)]), [state]


for _name, _doc, _emit, _t in [
        ("sample_unit_ring", "A uniform random point on the unit circle (xy-plane).", _emit_ring, 2),
        ("sample_unit_disk", "A uniform random point in the unit disk (xy-plane).", _emit_disk, 2),
        ("sample_unit_square", "A uniform random point in the square [-0.5, 0.5)^2.", _emit_box(2), 2),
        ("sample_unit_cube", "A uniform random point in the cube [-0.5, 0.5)^3.", _emit_box(3), 3),
        ("sample_unit_sphere_surface", "A uniform random point on the unit sphere.", _emit_sphere(False, False), 3),
        ("sample_unit_sphere", "A uniform random point in the unit ball.", _emit_sphere(False, True), 3),
        ("sample_unit_hemisphere_surface", "A uniform random point on the unit hemisphere (z >= 0).",
         _emit_sphere(True, False), 3),
        ("sample_unit_hemisphere", "A uniform random point in the unit half ball (z >= 0).",
         _emit_sphere(True, True), 3),
        ("sample_triangle", "Barycentric coordinates (u, v) of a uniform random point in a triangle "
         "(the third is 1 - u - v).", _emit_triangle, 2)]:
    _draw(_name, _doc + " Advances state.", _state_then(_name, T.vector(_t, F32)), _emit)


# --- sample_cdf ------------------------------------------------------------------------------

def _infer_sample_cdf(args):
    if len(args) == 2 and args[0] == U32 and isinstance(args[1], T.ArrayType) and args[1].ndim == 1 \
            and args[1].dtype == F32:
        return I32
    raise TypeError(f"sample_cdf() takes (state: uint32, cdf: a 1-d float32 array), got ({', '.join(map(str, args))})")


def _emit_sample_cdf(vals, types, result):
    """The first index whose cdf entry is >= a uniform draw (cdf
    non-decreasing, last entry 1: an index of the array)."""
    state, u = uniform(vals[0])
    n = values.from_index(adjit_d.DimOp(ir.IndexType.get(), vals[1],
                                        ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)).result)
    return emit_lower_bound(vals[1], values.constant(I32, 0), n, u, F32), [state]


add_builtin("sample_cdf", "sample_cdf(state, cdf): an index drawn with the probabilities of the bins of the "
            "normalized cumulative distribution cdf (inverse transform sampling). Advances state.",
            _infer_sample_cdf, _emit_sample_cdf, differentiable=False, rebinds=(0,), advances_state=True,
            array_args=True)


# --- poisson ---------------------------------------------------------------------------------

def _while(inits, test, step):
    """An scf.while carrying ``inits``: runs ``step(*carried) -> next`` while
    ``test(*carried)`` holds (the canonical form: the test only reads)."""
    types = [v.type for v in inits]
    loop = scf.WhileOp(types, inits)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        scf.ConditionOp(test(*before.arguments), list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(step(*after.arguments))
    return list(loop.results)


def _log_factorial(k: ir.Value) -> ir.Value:
    """log(k!) for a float32 k >= 0: a table below 10, Stirling's series
    (three terms past the leading ones) from 10 on."""
    x = _add(k, _f32(1.0))  # log(k!) = lgamma(k + 1)
    inv = arith.DivFOp(_f32(1.0), x).result
    inv2 = _mul(inv, inv)
    series = _mul(inv, _sub(_f32(1.0 / 12.0), _mul(inv2, _sub(_f32(1.0 / 360.0), _mul(inv2, _f32(1.0 / 1260.0))))))
    stirling = _add(_add(_mul(_sub(x, _f32(0.5)), math.LogOp(x).result), _sub(_f32(0.5 * pymath.log(2 * pymath.pi)), x)),
                    series)
    result = stirling
    for n in range(9, -1, -1):
        small = arith.CmpFOp(arith.CmpFPredicate.OEQ, k, _f32(float(n))).result
        result = arith.SelectOp(small, _f32(pymath.lgamma(n + 1)), result).result
    return result


def _emit_poisson(vals, types, result):
    state, lam = vals
    i1 = ir.IntegerType.get_signless(1)
    # Knuth (rate below 10): multiply uniforms until the product is at most
    # exp(-rate); the count of factors, less one. (A rate of 0 draws nothing.)
    limit = math.ExpOp(arith.NegFOp(lam).result).result

    def knuth_step(s, k, p):
        s, u = uniform(s)
        return [s, arith.AddIOp(k, _u32(1)).result, _mul(p, u)]

    # PTRS (Hoermann 1993), rate 10 and above.
    slam = math.SqrtOp(lam).result
    loglam = math.LogOp(lam).result
    b = _add(_f32(0.931), _mul(_f32(2.53), slam))
    a = _add(_f32(-0.059), _mul(_f32(0.02483), b))
    log_inv_alpha = math.LogOp(_add(_f32(1.1239), arith.DivFOp(_f32(1.1328), _sub(b, _f32(3.4))).result)).result
    vr = _sub(_f32(0.9277), arith.DivFOp(_f32(3.6224), _sub(b, _f32(2.0))).result)
    big = arith.CmpFOp(arith.CmpFPredicate.OGE, lam, _f32(10.0)).result

    def ptrs_step(s, k, accepted):
        s, u = uniform(s)
        s, v = uniform(s)
        uu = _sub(u, _f32(0.5))
        us = _sub(_f32(0.5), math.AbsFOp(uu).result)
        kf = math.FloorOp(_add(_add(_mul(_add(arith.DivFOp(_mul(_f32(2.0), a), us).result, b), uu), lam),
                               _f32(0.43))).result
        squeeze = arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.OGE, us, _f32(0.07)).result,
                               arith.CmpFOp(arith.CmpFPredicate.OLE, v, vr).result).result
        hopeless = arith.OrIOp(arith.CmpFOp(arith.CmpFPredicate.OLT, kf, _f32(0.0)).result,
                               arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.OLT, us, _f32(0.013)).result,
                                            arith.CmpFOp(arith.CmpFPredicate.OGT, v, us).result).result).result
        kpos = arith.MaximumFOp(kf, _f32(0.0)).result
        lhs = _sub(_add(math.LogOp(v).result, log_inv_alpha),
                   math.LogOp(_add(arith.DivFOp(a, _mul(us, us)).result, b)).result)
        rhs = _sub(_add(arith.NegFOp(lam).result, _mul(kpos, loglam)), _log_factorial(kpos))
        exact = arith.AndIOp(arith.XOrIOp(hopeless, arith.ConstantOp(i1, 1).result).result,
                             arith.CmpFOp(arith.CmpFPredicate.OLE, lhs, rhs).result).result
        accept = arith.OrIOp(squeeze, exact).result
        k_new = arith.FPToUIOp(U32.mlir(), kpos).result
        return [s, k_new, arith.ExtUIOp(U32.mlir(), accept).result]

    # Run only the chosen algorithm: each loop is skipped (zero trips) by its
    # test for the other's rates.
    small = arith.XOrIOp(big, arith.ConstantOp(i1, 1).result).result
    ks, kk, _ = _while([state, _u32(0), _f32(1.0)],
                       lambda s, k, p: arith.AndIOp(small, arith.CmpFOp(arith.CmpFPredicate.OGT, p, limit)
                                                    .result).result, knuth_step)
    knuth = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, kk, _u32(0)).result, _u32(0),
                           arith.SubIOp(kk, _u32(1)).result).result
    ps, pk, _ = _while([ks, _u32(0), _u32(0)],
                       lambda s, k, accepted: arith.AndIOp(big, arith.CmpIOp(arith.CmpIPredicate.eq, accepted,
                                                                             _u32(0)).result).result, ptrs_step)
    return arith.SelectOp(big, pk, knuth).result, [ps]


_draw("poisson", "poisson(state, lam): a Poisson(lam) sample (uint32): Knuth's method below lam = 10, Hoermann's "
      "PTRS from 10 on, as Warp; lam = 0 gives 0 and draws nothing. Advances state.",
      _state_then("poisson", F32, U32), _emit_poisson, params=(F32,))
