"""Rigid transforms (p, q): a translation and a unit quaternion, 7
components, p first (as Warp). Their product (``mul``'s, see operators.py),
identity, parts, points and vectors moved, inverse, conversions to and from
4x4 matrices, and the setters that write a transform in place.
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .helpers import components, elements, literal_float_type, matrix_from, scalar_ops
from .quaternions import (emit_quat_from_matrix, emit_quat_inverse, emit_quat_mul, emit_quat_rotate,
                          emit_quat_to_matrix)
from .registry import StaticParam, add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")


def transform_parts(t: ir.Value, tt: T.TransformType):
    """(p, q) of a transform value."""
    comps = components(t, 7)
    return (vector_d.FromElementsOp(T.vector(3, tt.dtype).mlir(), comps[:3]).result,
            vector_d.FromElementsOp(T.quaternion(tt.dtype).mlir(), comps[3:]).result)


def _transform_of(p: ir.Value, q: ir.Value, result: T.TransformType) -> ir.Value:
    return vector_d.FromElementsOp(result.mlir(), components(p, 3) + components(q, 4)).result


def emit_transform_multiply(a: ir.Value, b: ir.Value, result: T.TransformType) -> ir.Value:
    """a b = (R_a p_b + p_a, q_a q_b): b's frame mapped into a's."""
    (pa, qa), (pb, qb) = transform_parts(a, result), transform_parts(b, result)
    v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
    p = arith.AddFOp(emit_quat_rotate([qa, pb], [qt, v3], v3), pa).result
    return _transform_of(p, emit_quat_mul(qa, qb, qt), result)


def transform_args(name, other=None, other_name=""):
    """An infer for name(t) or name(t, x) with x of type other(t); returns
    the transform's type."""
    def infer(args):
        count = 1 if other is None else 2
        if len(args) != count or not isinstance(args[0], T.TransformType) or (
                other is not None and args[1] != other(args[0])):
            wanted = "a transform" + (f" and {other_name} of its scalar type" if other else "")
            raise TypeError(f"{name}() takes {wanted}; got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _vec3_of(t):
    return T.vector(3, t.dtype)


def _infer_transform_identity(args, dtype):
    if args:
        raise TypeError(f"transform_identity() takes only dtype, got {len(args)} more arguments")
    if not dtype.is_float:
        raise TypeError(f"transform_identity() needs a float dtype, got {dtype}")
    return T.transformation(dtype)


def _emit_transform_identity(vals, types, result, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return vector_d.FromElementsOp(result.mlir(), [zero] * 6 + [one]).result


def _infer_point_or_vector(name):
    """name(t: transform, v: vec3) or name(m: mat44, v: vec3) -> vec3."""
    def infer(args):
        if len(args) == 2 and isinstance(args[0], T.TransformType) and args[1] == _vec3_of(args[0]):
            return args[1]
        if len(args) == 2 and isinstance(args[0], T.MatrixType) and args[0].shape == (4, 4) \
                and args[1] == _vec3_of(args[0]):
            return args[1]
        raise TypeError(f"{name}() takes a transform or a 4x4 matrix, and a 3-vector of its scalar type; "
                        f"got {', '.join(map(str, args))}")
    return infer


def _emit_point_or_vector(point):
    def emit(vals, types, result):
        """t: R v (+ p for a point); M: the upper 3x3 of M times v (+ M's last
        column for a point: M acts on column vectors, as in Warp)."""
        if isinstance(types[0], T.TransformType):
            p, q = transform_parts(vals[0], types[0])
            rotated = emit_quat_rotate([q, vals[1]], [T.quaternion(result.dtype), result], result)
            return arith.AddFOp(rotated, p).result if point else rotated
        e = elements(vals[0], 4, 4)
        v = components(vals[1], 3)
        comps = []
        for r in range(3):
            acc = e[r][3] if point else None
            for c in range(3):
                term = arith.MulFOp(e[r][c], v[c]).result
                acc = term if acc is None else arith.AddFOp(acc, term).result
            comps.append(acc)
        return vector_d.FromElementsOp(result.mlir(), comps).result
    return emit


def _emit_transform_inverse(vals, types, result):
    """(-R^T p, q^-1)."""
    p, q = transform_parts(vals[0], result)
    v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
    qi = emit_quat_inverse([q], [qt], qt)
    return _transform_of(arith.NegFOp(emit_quat_rotate([qi, p], [qt, v3], v3)).result, qi, result)


def _emit_transform_to_matrix(vals, types, result):
    """[[R, p], [0, 0, 0, 1]]."""
    p, q = transform_parts(vals[0], types[0])
    m3 = T.matrix((3, 3), result.dtype)
    r = elements(emit_quat_to_matrix([q], [T.quaternion(result.dtype)], m3), 3, 3)
    pc = components(p, 3)
    zero, one = values.constant(result.dtype, 0.0), values.constant(result.dtype, 1.0)
    return matrix_from([r[k] + [pc[k]] for k in range(3)] + [[zero, zero, zero, one]], result)


def _infer_transform_from_matrix(args):
    if len(args) != 1 or not isinstance(args[0], T.MatrixType) or args[0].shape != (4, 4) \
            or not args[0].dtype.is_float:
        raise TypeError(f"transform_from_matrix() takes a float 4x4 matrix, got {', '.join(map(str, args))}")
    return T.transformation(args[0].dtype)


def _emit_transform_from_matrix(vals, types, result):
    """p: the last column's top three; q: quat_from_matrix of the upper 3x3."""
    e = elements(vals[0], 4, 4)
    m3 = T.matrix((3, 3), result.dtype)
    q = emit_quat_from_matrix([matrix_from([row[:3] for row in e[:3]], m3)], [m3], T.quaternion(result.dtype))
    p = vector_d.FromElementsOp(T.vector(3, result.dtype).mlir(), [e[k][3] for k in range(3)]).result
    return _transform_of(p, q, result)


def _infer_transform_compose(args):
    if len(args) == 3 and isinstance(args[1], T.QuatType) and args[0] == _vec3_of(args[1]) \
            and args[2] == args[0]:
        return T.matrix((4, 4), args[1].dtype)
    raise TypeError("transform_compose() takes a position 3-vector, a rotation quaternion and a scale 3-vector "
                    f"of one scalar type; got {', '.join(map(str, args))}")


def _emit_transform_compose(vals, types, result):
    """[[R diag(s), p], [0, 0, 0, 1]]."""
    p, q, s = vals
    m3 = T.matrix((3, 3), result.dtype)
    r = elements(emit_quat_to_matrix([q], [types[1]], m3), 3, 3)
    sc, pc = components(s, 3), components(p, 3)
    zero, one = values.constant(result.dtype, 0.0), values.constant(result.dtype, 1.0)
    rows = [[arith.MulFOp(r[k][c], sc[c]).result for c in range(3)] + [pc[k]] for k in range(3)]
    return matrix_from(rows + [[zero, zero, zero, one]], result)


add_builtin("transform_identity", "transform_identity(dtype=float): the identity transform (p = 0, q = identity).",
            _infer_transform_identity, _emit_transform_identity, differentiable=False,
            static_params=(StaticParam("dtype", "dtype", T.float32),), static_positional=True)
add_builtin("transform_get_translation", "The translation p of a transform.",
            lambda a: _vec3_of(transform_args("transform_get_translation")(a)),
            lambda v, t, r: transform_parts(v[0], t[0])[0])
add_builtin("transform_get_rotation", "The rotation quaternion q of a transform.",
            lambda a: T.quaternion(transform_args("transform_get_rotation")(a).dtype),
            lambda v, t, r: transform_parts(v[0], t[0])[1])
add_builtin("transform_multiply", "transform_multiply(a, b) = a * b = (R_a p_b + p_a, q_a q_b).",
            transform_args("transform_multiply", lambda t: t, "a transform"),
            lambda v, t, r: emit_transform_multiply(v[0], v[1], r))
add_builtin("transform_point", "transform_point(t, p) = R p + t.p; transform_point(M, p) = M (p, 1) for a 4x4 "
            "matrix M acting on column vectors (as in Warp).",
            _infer_point_or_vector("transform_point"), _emit_point_or_vector(True))
add_builtin("transform_vector", "transform_vector(t, v) = R v (no translation); transform_vector(M, v) = the "
            "upper 3x3 of M times v.", _infer_point_or_vector("transform_vector"), _emit_point_or_vector(False))
add_builtin("transform_inverse", "The inverse transform (-R^T p, q^-1).",
            transform_args("transform_inverse"), _emit_transform_inverse)
add_builtin("transform_to_matrix", "The 4x4 matrix [[R, p], [0, 0, 0, 1]] of a transform.",
            lambda a: T.matrix((4, 4), transform_args("transform_to_matrix")(a).dtype), _emit_transform_to_matrix)
add_builtin("transform_from_matrix", "The transform of a 4x4 rigid matrix [[R, p], [0, 0, 0, 1]] (q by "
            "quat_from_matrix of R).", _infer_transform_from_matrix, _emit_transform_from_matrix)
add_builtin("transform_compose", "transform_compose(p, q, s): the 4x4 matrix [[R diag(s), p], [0, 0, 0, 1]].",
            _infer_transform_compose, _emit_transform_compose)


# --- in place and several results: set_translation, set_rotation, decompose -----------------------

def _emit_transform_set(translation):
    def emit(vals, types, result):
        """t with its p (or q) replaced: the call writes t."""
        p, q = transform_parts(vals[0], types[0])
        return None, [_transform_of(vals[1], q, types[0]) if translation else _transform_of(p, vals[1], types[0])]
    return emit


def _infer_transform_set(name, part):
    def infer(args):
        if len(args) == 2 and isinstance(args[0], T.TransformType) and args[1] == part(args[0].dtype):
            return None
        raise TypeError(f"{name}() takes a transform and its new {part(T.float32).name.replace('float32', 'T')} "
                        f"of the transform's scalar type; got {', '.join(map(str, args))}")
    return infer


def _infer_transform_decompose(args):
    if len(args) == 1 and isinstance(args[0], T.MatrixType) and args[0].shape == (4, 4) and args[0].dtype.is_float:
        d = args[0].dtype
        return (T.vector(3, d), T.quaternion(d), T.vector(3, d))
    raise TypeError(f"transform_decompose() takes a float 4x4 matrix, got {', '.join(map(str, args))}")


def _emit_transform_decompose(vals, types, result):
    """(p, q, s) of M = [[R diag(s), p], [0, 0, 0, 1]]: s the lengths of the
    upper 3x3's columns, R those columns normalized (a zero column left as
    it is), q = quat_from_matrix(R)."""
    v3, qt = result[0], result[1]
    dtype = v3.dtype
    f, add, sub, mul = scalar_ops(dtype)
    e = elements(vals[0], 4, 4)
    scales, columns = [], []
    for c in range(3):
        norm = math.SqrtOp(add(add(mul(e[0][c], e[0][c]), mul(e[1][c], e[1][c])), mul(e[2][c], e[2][c]))).result
        zero = arith.CmpFOp(arith.CmpFPredicate.OEQ, norm, f(0.0)).result
        divisor = arith.SelectOp(zero, f(1.0), norm).result
        scales.append(norm)
        columns.append([arith.DivFOp(e[r][c], divisor).result for r in range(3)])
    m3 = T.matrix((3, 3), dtype)
    rotation = matrix_from([[columns[c][r] for c in range(3)] for r in range(3)], m3)
    q = emit_quat_from_matrix([rotation], [m3], qt)
    p = vector_d.FromElementsOp(v3.mlir(), [e[r][3] for r in range(3)]).result
    s = vector_d.FromElementsOp(v3.mlir(), scales).result
    return (p, q, s)


add_builtin("transform_set_translation", "transform_set_translation(t, p): sets t's translation to p (writes t, "
            "as Warp).", _infer_transform_set("transform_set_translation", lambda d: T.vector(3, d)),
            _emit_transform_set(True), rebinds=(0,))
add_builtin("transform_set_rotation", "transform_set_rotation(t, q): sets t's rotation to q (writes t, as Warp).",
            _infer_transform_set("transform_set_rotation", T.quaternion), _emit_transform_set(False), rebinds=(0,))
add_builtin("transform_decompose", "p, q, s = transform_decompose(M): position, rotation and scale of a 4x4 matrix "
            "[[R diag(s), p], [0, 0, 0, 1]].", _infer_transform_decompose,
            lambda v, t, r: _emit_transform_decompose(v, t, r))


# --- Warp's transformation(...) builtin -------------------------------------------------------------

def _infer_transformation(args, dtype=None):
    """transformation(p, q), transformation(p) (identity rotation), the 7
    components (px, py, pz, qx, qy, qz, qw), transformation(dtype=) (zeros)."""
    given = ", ".join(map(str, args)) or "no components"
    if dtype is not None and not dtype.is_float:
        raise TypeError(f"transformation() needs a float dtype, got {dtype}")
    if not args:
        if dtype is None:
            raise TypeError("transformation() with no components needs dtype= (the zero transform of that type)")
        return T.transformation(dtype)
    scalar = dtype or T.scalar_of(args[0])
    if scalar is None or not scalar.is_float:
        raise TypeError(f"transformation() needs float components, got {given}")
    v3, qt = T.vector(3, scalar), T.quaternion(scalar)
    if (len(args) <= 2 and args[0] == v3 and (len(args) == 1 or args[1] == qt)) \
            or (len(args) == 7 and all(a == scalar for a in args)):
        return T.transformation(scalar)
    raise TypeError(f"transformation() takes a position p and a rotation q (a {v3} and a {qt}), p alone, or 7 "
                    f"{scalar} components; got {given}")


def _emit_transformation(vals, types, result, dtype=None):
    if not vals:
        return values.constant(result, 0)
    if len(vals) == 7:
        return vector_d.FromElementsOp(result.mlir(), list(vals)).result
    f = scalar_ops(result.dtype)[0]
    q = components(vals[1], 4) if len(vals) == 2 else [f(0.0), f(0.0), f(0.0), f(1.0)]
    return vector_d.FromElementsOp(result.mlir(), components(vals[0], 3) + q).result


add_builtin("transformation", "transformation(p, q, dtype=None), transformation(p) (identity rotation), "
            "transformation(px, py, pz, qx, qy, qz, qw), transformation(dtype=) (zeros): Warp's transform "
            "constructor (the same as transform(...)). Components must have the transform's float type.",
            _infer_transformation, _emit_transformation, static_params=(StaticParam("dtype", "dtype", None),),
            literal_types=lambda ts: [literal_float_type(ts) if isinstance(t, T.ScalarType) else None for t in ts])
