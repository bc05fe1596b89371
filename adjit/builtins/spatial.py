"""Spatial vectors (6-vectors: angular on top, linear below, as Warp):
spatial_top, spatial_bottom, spatial_dot, the motion and force cross
products; twists and wrenches moved by a transform; velocity_at_point;
spatial_adjoint (a 6x6 matrix from 3x3 blocks).
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .helpers import components, elements, emit_dot, matrix_from
from .linalg import emit_cross
from .quaternions import emit_quat_rotate
from .registry import add_builtin
from .transforms import transform_args, transform_parts

arith = deferred_import("mlir.dialects.arith")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")


def _spatial_args(name, count):
    def infer(args):
        if len(args) != count or not all(isinstance(a, T.VectorType) and a.length == 6 and a.dtype.is_float
                                          and a == args[0] for a in args):
            raise TypeError(f"{name}() needs {count} float 6-vector(s) of one type, got "
                            f"{', '.join(map(str, args))}")
        return args[0]
    return infer


def _halves(v, t):
    return (vector_d.FromElementsOp(T.vector(3, t.dtype).mlir(), components(v, 6)[:3]).result,
            vector_d.FromElementsOp(T.vector(3, t.dtype).mlir(), components(v, 6)[3:]).result)


def _join(top, bottom, t):
    return vector_d.FromElementsOp(t.mlir(), components(top, 3) + components(bottom, 3)).result


def _emit_spatial_half(first):
    def emit(vals, types, result):
        return _halves(vals[0], types[0])[0 if first else 1]
    return emit


def _emit_spatial_dot(vals, types, result):
    return emit_dot(vals[0], vals[1], result)


def _emit_spatial_cross(dual):
    def emit(vals, types, result):
        """Motion cross (w_a x w_b, w_a x v_b + v_a x w_b); the dual (force)
        cross (w_a x w_b + v_a x v_b, w_a x v_b)."""
        t3 = T.vector(3, result.dtype)
        (wa, va), (wb, vb) = _halves(vals[0], result), _halves(vals[1], result)
        cross = lambda a, b: emit_cross([a, b], [t3, t3], t3)  # noqa: E731
        if dual:
            return _join(arith.AddFOp(cross(wa, wb), cross(va, vb)).result, cross(wa, vb), result)
        return _join(cross(wa, wb), arith.AddFOp(cross(wa, vb), cross(va, wb)).result, result)
    return emit


add_builtin("spatial_top", "The top (angular) 3-vector of a spatial 6-vector.",
            lambda a: T.vector(3, _spatial_args("spatial_top", 1)(a).dtype), _emit_spatial_half(True))
add_builtin("spatial_bottom", "The bottom (linear) 3-vector of a spatial 6-vector.",
            lambda a: T.vector(3, _spatial_args("spatial_bottom", 1)(a).dtype), _emit_spatial_half(False))
add_builtin("spatial_dot", "The dot product of two spatial 6-vectors.",
            lambda a: _spatial_args("spatial_dot", 2)(a).dtype, _emit_spatial_dot)
add_builtin("spatial_cross", "The motion cross product of spatial 6-vectors a = (w_a, v_a), b = (w_b, v_b): "
            "(w_a x w_b, w_a x v_b + v_a x w_b).", _spatial_args("spatial_cross", 2), _emit_spatial_cross(False))
add_builtin("spatial_cross_dual", "The force (dual) cross product of spatial 6-vectors a, b: "
            "(w_a x w_b + v_a x v_b, w_a x v_b).", _spatial_args("spatial_cross_dual", 2),
            _emit_spatial_cross(True))


# --- twists and wrenches in another frame, velocities -------------------------------------------

def _spatial_of(t):
    return T.vector(6, t.dtype)


def _emit_transform_twist(wrench):
    def emit(vals, types, result):
        """Twist (w, v) -> (R w, R v + p x R w); wrench (tau, f) -> (R tau + p x R f, R f)."""
        p, q = transform_parts(vals[0], types[0])
        top, bottom = _halves(vals[1], result)
        v3, qt = T.vector(3, result.dtype), T.quaternion(result.dtype)
        rot = lambda v: emit_quat_rotate([q, v], [qt, v3], v3)  # noqa: E731
        moved = rot(bottom if wrench else top)
        other = arith.AddFOp(rot(top if wrench else bottom), emit_cross([p, moved], [v3, v3], v3)).result
        return _join(other, moved, result) if wrench else _join(moved, other, result)
    return emit


def _infer_velocity_at_point(args):
    if len(args) == 2 and isinstance(args[0], T.VectorType) and args[0].length == 6 and args[0].dtype.is_float \
            and args[1] == T.vector(3, args[0].dtype):
        return args[1]
    raise TypeError("velocity_at_point() takes a spatial 6-vector (angular, linear) and a 3-vector of its "
                    f"scalar type; got {', '.join(map(str, args))}")


def _emit_velocity_at_point(vals, types, result):
    """w x r + v for the twist (w, v)."""
    w, v = _halves(vals[0], types[0])
    return arith.AddFOp(emit_cross([w, vals[1]], [result, result], result), v).result


add_builtin("transform_twist", "transform_twist(t, x): the twist x = (w, v) in t's destination frame: "
            "(R w, R v + p x R w).",
            lambda a: _spatial_of(transform_args("transform_twist", _spatial_of, "a spatial 6-vector")(a)),
            _emit_transform_twist(False))
add_builtin("transform_wrench", "transform_wrench(t, x): the wrench x = (tau, f) in t's destination frame: "
            "(R tau + p x R f, R f).",
            lambda a: _spatial_of(transform_args("transform_wrench", _spatial_of, "a spatial 6-vector")(a)),
            _emit_transform_twist(True))
add_builtin("velocity_at_point", "velocity_at_point(qd, r): the velocity w x r + v at offset r of a body "
            "moving with twist qd = (w, v).", _infer_velocity_at_point, _emit_velocity_at_point)


def _infer_spatial_adjoint(args):
    if len(args) == 2 and all(isinstance(a, T.MatrixType) and a.shape == (3, 3) and a.dtype.is_float
                              for a in args) and args[0] == args[1]:
        return T.matrix((6, 6), args[0].dtype)
    raise TypeError(f"spatial_adjoint() takes two float 3x3 matrices of one type, got {', '.join(map(str, args))}")


def _emit_spatial_adjoint(vals, types, result):
    """[[R, 0], [S, R]] (Warp's block layout)."""
    r, s = (elements(v, 3, 3) for v in vals)
    zero = values.constant(result.dtype, 0.0)
    return matrix_from([r[i] + [zero] * 3 for i in range(3)] + [s[i] + r[i] for i in range(3)], result)


add_builtin("spatial_adjoint", "spatial_adjoint(R, S): the 6x6 matrix [[R, 0], [S, R]] of 3x3 blocks (Warp's "
            "layout: R on the diagonal, S below it), e.g. a transform's motion adjoint with S = skew(p) R.",
            _infer_spatial_adjoint, _emit_spatial_adjoint)
