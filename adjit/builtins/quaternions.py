"""Quaternions: the Hamilton product (``mul``'s, see operators.py),
quat_identity, quat_inverse, quat_rotate, conversions to and from matrices,
axis and angle, Euler angles and roll/pitch/yaw; quat_slerp and the
swing-twist decomposition.
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .helpers import components, convert_float, elements, emit_dot, literal_float_type, matrix_from, scalar_ops
from .linalg import emit_cross, emit_normalize, matrix_arg
from .registry import StaticParam, add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")

# Stored (x, y, z, w) with w the real part, as in Warp; the conventions below
# (quat_inverse is the conjugate, quat_rotate assumes a unit quaternion,
# quat_from_axis_angle does not normalize the axis) are Warp's.


# --- the Hamilton product -----------------------------------------------------------------------

def emit_quat_mul(a: ir.Value, b: ir.Value, result: T.QuatType) -> ir.Value:
    """The Hamilton product a b of quaternions stored (x, y, z, w), w real."""
    ax, ay, az, aw = components(a, 4)
    bx, by, bz, bw = components(b, 4)

    def mul(x, y):
        return arith.MulFOp(x, y).result

    def add(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = arith.AddFOp(acc, x).result
        return acc

    def sub(x, y):
        return arith.SubFOp(x, y).result

    # (a_v, a_w)(b_v, b_w) = (a_w b_v + b_w a_v + a_v x b_v, a_w b_w - a_v . b_v)
    x = sub(add(mul(aw, bx), mul(bw, ax), mul(ay, bz)), mul(az, by))
    y = sub(add(mul(aw, by), mul(bw, ay), mul(az, bx)), mul(ax, bz))
    z = sub(add(mul(aw, bz), mul(bw, az), mul(ax, by)), mul(ay, bx))
    w = sub(sub(sub(mul(aw, bw), mul(ax, bx)), mul(ay, by)), mul(az, bz))
    return vector_d.FromElementsOp(result.mlir(), [x, y, z, w]).result


# --- identity, inverse, rotations, matrices ------------------------------------------------------

def _infer_quat_identity(args, dtype):
    if args:
        raise TypeError(f"quat_identity() takes only dtype, got {len(args)} more arguments")
    if not dtype.is_float:
        raise TypeError(f"quat_identity() needs a float dtype, got {dtype}")
    return T.quaternion(dtype)


def _emit_quat_identity(vals, types, result, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return vector_d.FromElementsOp(result.mlir(), [zero, zero, zero, one]).result


def _quat_arg(name, args, count):
    if len(args) != count:
        raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
    if not isinstance(args[0], T.QuatType):
        raise TypeError(f"{name}() needs a quaternion first, got {args[0]}")
    return args[0]


def _infer_quat_inverse(args):
    return _quat_arg("quat_inverse", args, 1)


def emit_quat_inverse(vals, types, result):
    x, y, z, w = components(vals[0], 4)
    neg = [arith.NegFOp(c).result for c in (x, y, z)]
    return vector_d.FromElementsOp(result.mlir(), neg + [w]).result


def _infer_quat_rotate(args):
    q = _quat_arg("quat_rotate", args, 2)
    if args[1] != T.vector(3, q.dtype):
        raise TypeError(f"quat_rotate() rotates a 3-vector of {q.dtype} by a {q}, got {args[1]}")
    return args[1]


def emit_quat_rotate(vals, types, result):
    # For a unit q = (u, w): q v q* = (2w^2 - 1) v + 2 (u . v) u + 2w (u x v).
    dtype = result.dtype
    qx, qy, qz, qw = components(vals[0], 4)
    u = vector_d.FromElementsOp(result.mlir(), [qx, qy, qz]).result
    v = vals[1]
    two = values.constant(dtype, 2.0)
    c = arith.SubFOp(arith.MulFOp(two, arith.MulFOp(qw, qw).result).result, values.constant(dtype, 1.0)).result
    d = arith.MulFOp(two, emit_dot(u, v, dtype)).result
    e = arith.MulFOp(two, qw).result
    uxv = emit_cross([u, v], types, result)

    def scale(vec, s):
        return arith.MulFOp(vec, vector_d.BroadcastOp(result.mlir(), s).result).result

    return arith.AddFOp(arith.AddFOp(scale(v, c), scale(u, d)).result, scale(uxv, e)).result


def _infer_quat_from_axis_angle(args):
    if len(args) != 2 or not isinstance(args[0], T.VectorType) or args[0].length != 3 \
            or isinstance(args[0], T.QuatType) or not args[0].dtype.is_float or args[1] != args[0].dtype:
        raise TypeError("quat_from_axis_angle() needs a float 3-vector axis and an angle of its scalar type, "
                        f"got {', '.join(map(str, args))}")
    return T.quaternion(args[0].dtype)


def _emit_quat_from_axis_angle(vals, types, result):
    dtype = result.dtype
    axis, angle = vals
    half = arith.MulFOp(angle, values.constant(dtype, 0.5)).result
    s = math.SinOp(half).result
    x, y, z = (arith.MulFOp(c, s).result for c in components(axis, 3))
    return vector_d.FromElementsOp(result.mlir(), [x, y, z, math.CosOp(half).result]).result


def _infer_quat_rotate_inv(args):
    q = _quat_arg("quat_rotate_inv", args, 2)
    if args[1] != T.vector(3, q.dtype):
        raise TypeError(f"quat_rotate_inv() rotates a 3-vector of {q.dtype} by a {q}, got {args[1]}")
    return args[1]


def _emit_quat_rotate_inv(vals, types, result):
    # q^-1 v q for a unit q: quat_rotate by the conjugate.
    return emit_quat_rotate([emit_quat_inverse([vals[0]], types, types[0]), vals[1]], types, result)


def _infer_quat_to_matrix(args):
    q = _quat_arg("quat_to_matrix", args, 1)
    return T.matrix((3, 3), q.dtype)


def emit_quat_to_matrix(vals, types, result):
    """Columns: the unit axes rotated by q (quat_rotate)."""
    vec = T.vector(3, result.dtype)
    one, zero = values.constant(result.dtype, 1.0), values.constant(result.dtype, 0.0)
    cols = []
    for k in range(3):
        axis = vector_d.FromElementsOp(vec.mlir(), [one if j == k else zero for j in range(3)]).result
        cols.append(components(emit_quat_rotate([vals[0], axis], [types[0], vec], vec), 3))
    return matrix_from([[cols[c][r] for c in range(3)] for r in range(3)], result)


def _infer_quat_from_matrix(args):
    m = matrix_arg("quat_from_matrix")(args)
    if (m.rows, m.cols) != (3, 3) or not m.dtype.is_float:
        raise TypeError(f"quat_from_matrix() needs a float 3x3 matrix, got {m}")
    return T.quaternion(m.dtype)


def emit_quat_from_matrix(vals, types, result):
    """Shepperd's method: w (where the trace is positive), else the x, y or z
    of the largest diagonal entry, is computed from the diagonal (a square
    root) and made positive, the others from off-diagonal sums over it; the
    quaternion is then normalized.
    All four candidates are computed (their square roots clamped, so the
    unused ones stay finite and pass no NaN into gradients) and selected."""
    dtype = result.dtype
    e = elements(vals[0], 3, 3)
    f = lambda v: values.constant(dtype, v)  # noqa: E731
    add, sub, mul, div = (lambda a, b: arith.AddFOp(a, b).result, lambda a, b: arith.SubFOp(a, b).result,
                          lambda a, b: arith.MulFOp(a, b).result, lambda a, b: arith.DivFOp(a, b).result)
    d0, d1, d2 = e[0][0], e[1][1], e[2][2]

    def root(a):  # 2 sqrt(max(a, 1e-6))
        return mul(f(2.0), math.SqrtOp(arith.MaximumFOp(a, f(1e-6)).result).result)

    candidates = []
    s = root(add(f(1.0), add(add(d0, d1), d2)))             # w largest
    candidates.append([div(sub(e[2][1], e[1][2]), s), div(sub(e[0][2], e[2][0]), s),
                       div(sub(e[1][0], e[0][1]), s), mul(f(0.25), s)])
    s = root(sub(sub(add(f(1.0), d0), d1), d2))             # x largest
    candidates.append([mul(f(0.25), s), div(add(e[0][1], e[1][0]), s),
                       div(add(e[0][2], e[2][0]), s), div(sub(e[2][1], e[1][2]), s)])
    s = root(sub(sub(add(f(1.0), d1), d0), d2))             # y largest
    candidates.append([div(add(e[0][1], e[1][0]), s), mul(f(0.25), s),
                       div(add(e[1][2], e[2][1]), s), div(sub(e[0][2], e[2][0]), s)])
    s = root(sub(sub(add(f(1.0), d2), d0), d1))             # z largest
    candidates.append([div(add(e[0][2], e[2][0]), s), div(add(e[1][2], e[2][1]), s),
                       mul(f(0.25), s), div(sub(e[1][0], e[0][1]), s)])
    trace = add(add(d0, d1), d2)
    gt = lambda a, b: arith.CmpFOp(arith.CmpFPredicate.OGT, a, b).result  # noqa: E731
    use_w = gt(trace, f(0.0))
    use_x = arith.AndIOp(gt(d0, d1), gt(d0, d2)).result
    use_y = gt(d1, d2)
    pick = lambda c, a, b: [arith.SelectOp(c, p, q).result for p, q in zip(a, b)]  # noqa: E731
    q = pick(use_w, candidates[0], pick(use_x, candidates[1], pick(use_y, candidates[2], candidates[3])))
    quat = vector_d.FromElementsOp(result.mlir(), q).result
    norm = math.SqrtOp(emit_dot(quat, quat, dtype)).result
    return arith.DivFOp(quat, vector_d.BroadcastOp(result.mlir(), norm).result).result


add_builtin("quat_identity", "quat_identity(dtype=float): the identity quaternion (0, 0, 0, 1).",
            _infer_quat_identity, _emit_quat_identity, differentiable=False,
            static_params=(StaticParam("dtype", "dtype", T.float32),), static_positional=True)
add_builtin("quat_inverse", "The conjugate (-x, -y, -z, w): the inverse of a unit quaternion (as in Warp).",
            _infer_quat_inverse, emit_quat_inverse)
add_builtin("quat_rotate", "quat_rotate(q, v): the 3-vector v rotated by the unit quaternion q (q v q^-1).",
            _infer_quat_rotate, emit_quat_rotate)
add_builtin("quat_rotate_inv", "quat_rotate_inv(q, v): the 3-vector v rotated by the inverse of the unit "
            "quaternion q (q^-1 v q).", _infer_quat_rotate_inv, _emit_quat_rotate_inv)
add_builtin("quat_to_matrix", "The 3x3 rotation matrix of a unit quaternion (its columns are the axes "
            "rotated by quat_rotate).", _infer_quat_to_matrix, emit_quat_to_matrix)
add_builtin("quat_from_matrix", "The unit quaternion of a 3x3 rotation matrix (Shepperd's method; of q and "
            "-q, the one with w > 0 where the trace is positive, else with the component of the largest "
            "diagonal entry positive).", _infer_quat_from_matrix,
            emit_quat_from_matrix, domain=((0.5, 1.0),))  # (fuzzed where the trace is positive: smooth)
add_builtin("quat_from_axis_angle", "quat_from_axis_angle(axis, angle): the rotation of angle radians about "
            "the unit vector axis, (axis sin(angle/2), cos(angle/2)).",
            _infer_quat_from_axis_angle, _emit_quat_from_axis_angle, domain=((-1.0, 1.0), (-6.0, 6.0)))


# --- axis and angle -----------------------------------------------------------------------------

def _infer_quat_to_axis_angle(args):
    if len(args) == 1 and isinstance(args[0], T.QuatType):
        return (T.vector(3, args[0].dtype), args[0].dtype)
    if len(args) == 3 and isinstance(args[0], T.QuatType) and args[1] == T.vector(3, args[0].dtype) \
            and args[2] == args[0].dtype:
        return None
    raise TypeError("quat_to_axis_angle() takes a quaternion (and returns axis, angle), or a quaternion, an axis "
                    f"3-vector and an angle to write; got {', '.join(map(str, args))}")


def _axis_angle(q, qt):
    """(axis, angle) of the rotation q: angle in [0, pi] (q's sign chosen so
    that w >= 0), the axis of unit length (zero for no rotation, as Warp's)."""
    dtype = qt.dtype
    f, add, sub, mul = scalar_ops(dtype)
    x, y, z, w = components(q, 4)
    flip = arith.CmpFOp(arith.CmpFPredicate.OLT, w, f(0.0)).result
    sign = arith.SelectOp(flip, f(-1.0), f(1.0)).result
    x, y, z, w = (mul(c, sign) for c in (x, y, z, w))
    # |v| is taken at 1 where v = 0, so no infinite derivative of the square
    # root reaches the gradient there (which is zero, as Warp's length and
    # normalize adjoints give at 0).
    s2 = add(add(mul(x, x), mul(y, y)), mul(z, z))
    none = arith.CmpFOp(arith.CmpFPredicate.OLE, s2, f(0.0)).result
    safe = math.SqrtOp(arith.SelectOp(none, f(1.0), s2).result).result
    s = arith.SelectOp(none, f(0.0), safe).result
    angle = mul(f(2.0), math.Atan2Op(s, w).result)
    v3 = T.vector(3, dtype)
    axis = vector_d.FromElementsOp(v3.mlir(), [arith.DivFOp(c, safe).result for c in (x, y, z)]).result
    zero = vector_d.FromElementsOp(v3.mlir(), [f(0.0), f(0.0), f(0.0)]).result
    return arith.SelectOp(none, zero, axis).result, angle


def _emit_quat_to_axis_angle(vals, types, result):
    axis, angle = _axis_angle(vals[0], types[0])
    if len(vals) == 1:
        return (axis, angle), []
    return None, [axis, angle]


add_builtin("quat_to_axis_angle", "axis, angle = quat_to_axis_angle(q): the rotation's unit axis and angle in "
            "[0, pi]; quat_to_axis_angle(q, axis, angle) writes them (as Warp).", _infer_quat_to_axis_angle,
            _emit_quat_to_axis_angle, rebinds=(1, 2))


# --- more quaternions: slerp, roll/pitch/yaw, swing-twist ------------------------------------------

def _infer_quat_slerp(args):
    if len(args) == 3 and isinstance(args[0], T.QuatType) and args[1] == args[0] and args[2] == args[0].dtype:
        return args[0]
    raise TypeError(f"quat_slerp() takes two quaternions and a parameter t of their scalar type; got "
                    f"{', '.join(map(str, args))}")


def _emit_quat_slerp(vals, types, result):
    """As Warp defines it: q0 (q0* q1)^t, the power through the axis and angle
    of the relative rotation q0* q1 (quat_inverse: the conjugate), so the
    shorter arc for unit quaternions, and the same derivatives as Warp's in
    every direction (also off the unit sphere)."""
    a, b, t = vals
    relative = emit_quat_mul(emit_quat_inverse([a], [result], result), b, result)
    axis, angle = _axis_angle(relative, result)
    turn = _emit_quat_from_axis_angle([axis, arith.MulFOp(t, angle).result], [None, None], result)
    return emit_quat_mul(a, turn, result)


def _infer_quat_rpy(args):
    if len(args) == 3 and isinstance(args[0], T.ScalarType) and args[0].is_float and args[1] == args[0] \
            and args[2] == args[0]:
        return T.quaternion(args[0])
    raise TypeError(f"quat_rpy() takes roll, pitch and yaw of one float type; got {', '.join(map(str, args))}")


def _emit_quat_rpy(vals, types, result):
    """qz(yaw) qy(pitch) qx(roll): roll, pitch, yaw about the fixed x, y, z axes."""
    dtype = result.dtype
    f, add, sub, mul = scalar_ops(dtype)
    zero = f(0.0)

    def axis_quat(k, angle):
        half = mul(angle, f(0.5))
        comps = [zero, zero, zero, math.CosOp(half).result]
        comps[k] = math.SinOp(half).result
        return vector_d.FromElementsOp(result.mlir(), comps).result

    roll, pitch, yaw = vals
    return emit_quat_mul(axis_quat(2, yaw), emit_quat_mul(axis_quat(1, pitch), axis_quat(0, roll), result),
                         result)


def _emit_quat_to_rpy(vals, types, result):
    """The inverse of quat_rpy: roll = atan2(2 (w x + y z), 1 - 2 (x^2 + y^2)),
    pitch = asin(2 (w y - z x)) (its argument clamped to [-1, 1]),
    yaw = atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))."""
    dtype = result.dtype
    f, add, sub, mul = scalar_ops(dtype)
    x, y, z, w = components(vals[0], 4)
    two = f(2.0)
    roll = math.Atan2Op(mul(two, add(mul(w, x), mul(y, z))),
                        sub(f(1.0), mul(two, add(mul(x, x), mul(y, y))))).result
    s = mul(two, sub(mul(w, y), mul(z, x)))
    pitch = math.AsinOp(arith.MinimumFOp(arith.MaximumFOp(s, f(-1.0)).result, f(1.0)).result).result
    yaw = math.Atan2Op(mul(two, add(mul(w, z), mul(x, y))),
                       sub(f(1.0), mul(two, add(mul(y, y), mul(z, z))))).result
    return vector_d.FromElementsOp(result.mlir(), [roll, pitch, yaw]).result


def _infer_twist(name, result):
    def infer(args):
        if len(args) == 2 and isinstance(args[1], T.QuatType) and args[0] == T.vector(3, args[1].dtype):
            return result(args[1])
        raise TypeError(f"{name}() takes a unit axis 3-vector and a quaternion of one scalar type; got "
                        f"{', '.join(map(str, args))}")
    return infer


def _twist_parts(axis, q, dtype):
    """(dot(q.xyz, axis), q.w): the twist about ``axis`` is their quaternion
    (dot axis, w), normalized."""
    comps = components(q, 4)
    u = vector_d.FromElementsOp(T.vector(3, dtype).mlir(), comps[:3]).result
    return emit_dot(u, axis, dtype), comps[3]


def _emit_quat_twist(vals, types, result):
    axis, q = vals
    dtype = result.dtype
    along, w = _twist_parts(axis, q, dtype)
    p = arith.MulFOp(axis, vector_d.BroadcastOp(T.vector(3, dtype).mlir(), along).result).result
    twist = vector_d.FromElementsOp(result.mlir(), components(p, 3) + [w]).result
    return emit_normalize([twist], [result], result)


def _emit_quat_twist_angle(signed):
    def emit(vals, types, result):
        """Signed: 2 atan2(dot(q.xyz, axis), w); unsigned: 2 atan2(|dot|, w)
        (2 acos of the normalized twist's w)."""
        along, w = _twist_parts(vals[0], vals[1], result)
        if not signed:
            along = math.AbsFOp(along).result
        return arith.MulFOp(values.constant(result, 2.0), math.Atan2Op(along, w).result).result
    return emit


add_builtin("quat_slerp", "quat_slerp(a, b, t): spherical linear interpolation from the rotation a (t = 0) "
            "to b (t = 1) along the shorter arc.", _infer_quat_slerp, _emit_quat_slerp,
            domain=(None, None, (0.0, 1.0)))
add_builtin("quat_rpy", "quat_rpy(roll, pitch, yaw): the rotation by roll, pitch and yaw about the fixed x, y "
            "and z axes (qz * qy * qx).", _infer_quat_rpy, _emit_quat_rpy)
add_builtin("quat_to_rpy", "The (roll, pitch, yaw) of a unit quaternion (the inverse of quat_rpy; pitch in "
            "[-pi/2, pi/2]).", lambda a: T.vector(3, _quat_arg("quat_to_rpy", a, 1).dtype), _emit_quat_to_rpy)
add_builtin("quat_twist", "quat_twist(axis, q): the twist of q about the unit axis (swing-twist "
            "decomposition), a unit quaternion.", _infer_twist("quat_twist", lambda q: q), _emit_quat_twist)
add_builtin("quat_twist_angle", "quat_twist_angle(axis, q): the twist angle of q about the unit axis, unsigned "
            "(in [0, pi] for q.w >= 0, (pi, 2 pi] otherwise).", _infer_twist("quat_twist_angle", lambda q: q.dtype),
            _emit_quat_twist_angle(False))
add_builtin("quat_twist_angle_signed", "quat_twist_angle_signed(axis, q): the twist angle of q about the unit "
            "axis, positive by the right-hand rule.", _infer_twist("quat_twist_angle_signed", lambda q: q.dtype),
            _emit_quat_twist_angle(True))


# --- Euler angles for any axis sequence -----------------------------------------------------------

def _pick(index, options):
    """``options[index]`` for a runtime int32 index in range(len(options))."""
    out = options[-1]
    for n in range(len(options) - 2, -1, -1):
        is_n = arith.CmpIOp(arith.CmpIPredicate.eq, index, values.constant(T.int32, n)).result
        out = arith.SelectOp(is_n, options[n], out).result
    return out


def _infer_euler(name, first, result):
    def infer(args):
        if len(args) == 4 and isinstance(args[0], first) and args[0].length in (3, 4) and args[0].dtype.is_float \
                and (first is T.QuatType or type(args[0]) is T.VectorType and args[0].length == 3) \
                and all(a == T.int32 for a in args[1:]):
            return result(args[0].dtype)
        raise TypeError(f"{name}() takes a {'quaternion' if first is T.QuatType else 'float 3-vector'} and three "
                        f"int axis indices (i, j, k in 0..2); got {', '.join(map(str, args))}")
    return infer


def _emit_quat_from_euler(vals, types, result):
    """qk qj qi, qa the rotation by e[a] about axis a (fixed axes, i first)."""
    e, i, j, k = vals
    f, add, sub, mul = scalar_ops(result.dtype)
    angles = components(e, 3)
    zero = f(0.0)

    def about(axis):
        half = mul(_pick(axis, angles), f(0.5))
        s, c = math.SinOp(half).result, math.CosOp(half).result
        comps = [arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, axis, values.constant(T.int32, n)).result,
                                s, zero).result for n in range(3)]
        return vector_d.FromElementsOp(result.mlir(), comps + [c]).result

    return emit_quat_mul(about(k), emit_quat_mul(about(j), about(i), result), result)


def _emit_quat_to_euler(vals, types, result):
    """Bernardes and Viollet's direct method ("Quaternion to Euler angles
    conversion", PLOS ONE 2022) for any sequence: angles t1 (about i), t2
    (about j), t3 (about k; for a proper sequence, i == k, stored at the
    remaining index), as Warp's quat_to_euler places them."""
    q, i, j, k = vals
    dtype = result.dtype
    f, add, sub, mul = scalar_ops(dtype)
    i32 = lambda v: values.constant(T.int32, v)  # noqa: E731
    x, y, z, w = components(q, 4)
    proper = arith.CmpIOp(arith.CmpIPredicate.eq, i, k).result
    k = arith.SelectOp(proper, arith.SubIOp(arith.SubIOp(i32(3), i).result, j).result, k).result
    # the Levi-Civita sign of (i, j, k): +1 for a cyclic order, -1 otherwise
    levi = arith.MulIOp(arith.MulIOp(arith.SubIOp(i, j).result, arith.SubIOp(j, k).result).result,
                        arith.SubIOp(k, i).result).result
    sign = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.sgt, levi, i32(0)).result, f(1.0), f(-1.0)).result
    qi, qj, qk = _pick(i, [x, y, z]), _pick(j, [x, y, z]), _pick(k, [x, y, z])
    qk_signed = mul(qk, sign)
    a = arith.SelectOp(proper, w, sub(w, qj)).result
    b = arith.SelectOp(proper, qi, add(qi, qk_signed)).result
    c = arith.SelectOp(proper, qj, add(qj, w)).result
    d = arith.SelectOp(proper, qk_signed, sub(qk_signed, qi)).result
    ab, cd = add(mul(a, a), mul(b, b)), add(mul(c, c), mul(d, d))
    cosine = sub(arith.DivFOp(mul(f(2.0), ab), add(ab, cd)).result, f(1.0))
    t2 = math.AcosOp(arith.MinimumFOp(arith.MaximumFOp(cosine, f(-1.0)).result, f(1.0)).result).result
    plus, minus = math.Atan2Op(b, a).result, math.Atan2Op(d, c).result
    # at gimbal lock (t2 = 0 or pi) t1 is free: 0, and t3 takes the whole turn
    at_zero = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(t2).result, f(1e-6)).result
    at_pi = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(sub(t2, f(3.141592653589793))).result,
                         f(1e-6)).result
    locked = arith.OrIOp(at_zero, at_pi).result
    t1 = arith.SelectOp(locked, f(0.0), sub(plus, minus)).result
    t3 = arith.SelectOp(at_zero, mul(f(2.0), plus),
                        arith.SelectOp(at_pi, mul(f(2.0), minus), add(plus, minus)).result).result
    t2 = arith.SelectOp(proper, t2, sub(t2, f(3.141592653589793 / 2))).result
    t3 = arith.SelectOp(proper, t3, mul(t3, sign)).result
    comps = []
    for n in range(3):
        is_i = arith.CmpIOp(arith.CmpIPredicate.eq, i, i32(n)).result
        is_j = arith.CmpIOp(arith.CmpIPredicate.eq, j, i32(n)).result
        comps.append(arith.SelectOp(is_i, t1, arith.SelectOp(is_j, t2, t3).result).result)
    return vector_d.FromElementsOp(result.mlir(), comps).result


_EULER_LITERALS = lambda types: [None, T.int32, T.int32, T.int32][:len(types)]  # noqa: E731

add_builtin("quat_from_euler", "quat_from_euler(e, i, j, k): the rotation by e[i], e[j], e[k] about the fixed axes "
            "i, j, k in that order (qk qj qi; e indexed by axis).",
            _infer_euler("quat_from_euler", T.VectorType, T.quaternion), _emit_quat_from_euler,
            literal_types=_EULER_LITERALS)
add_builtin("quat_to_euler", "quat_to_euler(q, i, j, k): the angles of q for the axis sequence i, j, k "
            "(the inverse of quat_from_euler for i != k; e indexed by axis).",
            _infer_euler("quat_to_euler", T.QuatType, lambda d: T.vector(3, d)), _emit_quat_to_euler,
            literal_types=_EULER_LITERALS)


# --- Warp's quaternion(...) builtin and quat_between_vectors ------------------------------------

def _is_float_scalar(t):
    return isinstance(t, T.ScalarType) and t.is_float


def _infer_quaternion(args, dtype=None):
    """quaternion(dtype=), quaternion(x, y, z, w), quaternion(xyz, w) and
    quaternion(q, dtype=) (a conversion), as Warp's overloads."""
    given = ", ".join(map(str, args)) or "no components"
    if dtype is not None and not dtype.is_float:
        raise TypeError(f"quaternion() needs a float dtype, got {dtype}")
    if len(args) == 1 and isinstance(args[0], T.QuatType):
        return T.quaternion(dtype or args[0].dtype)
    if not args:
        if dtype is None:
            raise TypeError("quaternion() with no components needs dtype= (the zero quaternion of that type)")
        return T.quaternion(dtype)
    if len(args) == 4 and all(map(_is_float_scalar, args)):
        parts = list(args)
    elif len(args) == 2 and isinstance(args[0], T.VectorType) and not isinstance(args[0], T.QuatType) \
            and args[0].length == 3 and args[0].dtype.is_float and _is_float_scalar(args[1]):
        parts = [args[0].dtype, args[1]]
    else:
        raise TypeError("quaternion() takes the float components (x, y, z, w), a float 3-vector and w, or a "
                        f"quaternion (each with an optional dtype=); got {given}")
    scalar = dtype or parts[0]
    if any(p != scalar for p in parts):
        raise TypeError(f"quaternion() needs components of one float type{f' ({scalar}, its dtype)' if dtype else ''}"
                        f", got {given}; convert them explicitly ({scalar}(x))")
    return T.quaternion(scalar)


def _emit_quaternion(vals, types, result, dtype=None):
    if not vals:
        return values.constant(result, 0)
    if len(vals) == 1:
        return convert_float(vals[0], types[0], result.dtype)
    comps = components(vals[0], 3) + [vals[1]] if len(vals) == 2 else list(vals)
    return vector_d.FromElementsOp(result.mlir(), comps).result


def _infer_quat_between_vectors(args):
    if len(args) != 2 or not all(isinstance(a, T.VectorType) and not isinstance(a, T.QuatType) and a.length == 3
                                 and a.dtype.is_float for a in args) or args[0] != args[1]:
        raise TypeError("quat_between_vectors() takes two float 3-vectors of one type, got "
                        f"{', '.join(map(str, args))}")
    return T.quaternion(args[0].dtype)


def _emit_quat_between_vectors(vals, types, result):
    """normalize((a x b, 1 + a.b)) of the normalized a and b, as Warp's."""
    v3 = types[0]
    a, b = (emit_normalize([v], [v3], v3) for v in vals)
    c = emit_cross([a, b], [v3, v3], v3)
    w = arith.AddFOp(values.constant(result.dtype, 1.0), emit_dot(a, b, result.dtype)).result
    q = vector_d.FromElementsOp(result.mlir(), components(c, 3) + [w]).result
    return emit_normalize([q], [result], result)


add_builtin("quaternion", "quaternion(x, y, z, w, dtype=None), quaternion(xyz, w), quaternion(q, dtype=) (a "
            "conversion), quaternion(dtype=) (zeros): Warp's quaternion constructor. Components must have the "
            "quaternion's float type (literals take it); only quaternion(q, dtype=) converts.",
            _infer_quaternion, _emit_quaternion, static_params=(StaticParam("dtype", "dtype", None),),
            literal_types=lambda ts: [literal_float_type(ts) if isinstance(t, T.ScalarType) else None for t in ts])
add_builtin("quat_between_vectors", "quat_between_vectors(a, b): the unit quaternion rotating the direction of a "
            "onto that of b (Warp's: normalize((a x b, 1 + a.b)) of the normalized a and b; for opposite "
            "vectors that is the zero quaternion, as in Warp, and so is it when a or b is zero).",
            _infer_quat_between_vectors, _emit_quat_between_vectors)
