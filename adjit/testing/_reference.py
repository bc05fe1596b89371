"""What the fuzzer knows about the builtins: which argument types they take
(found by asking each builtin's ``infer``), their numpy semantics (the
independent reference of the forward values), and where they are not smooth.

A builtin added to the registry with ``differentiable=True`` is fuzzed without
any change here: its signatures over the fuzzed types come from ``infer``, its
smooth region from its ``domain``. Its forward reference is then the compiled
builtin itself (a one-call kernel, see ``_compiled_reference``), so only its
gradients are checked independently until a numpy reference is added to
``NUMPY_REFERENCES``; ``missing_numpy_references()`` lists such builtins.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

import adjit

from .. import types as T
from ._loader import load_module

# --- the fuzzed types ------------------------------------------------------------

F, V, M, Q, S, X, BOOL = "float64", "vec3d", "mat33d", "quatd", "spatial_vectord", "transformd", "bool"
#: The value types generated kernels compute with (float64 only: the gradient
#: oracle needs double-precision finite differences).
VALUE_TYPES = (F, V, M, Q, S, X)
ADJIT_TYPE = {F: T.float64, V: T.vec3d, M: T.mat33d, Q: T.quatd, S: T.spatial_vectord, X: T.transformd,
              BOOL: T.bool_}
SOURCE_TYPE = {F: "wp.float64", V: "wp.vec3d", M: "wp.mat33d", Q: "wp.quatd", S: "wp.spatial_vectord",
               X: "wp.transformd"}
SHAPE = {F: (), V: (3,), M: (3, 3), Q: (4,), S: (6,), X: (7,)}


def code_of(t) -> str | None:
    """The fuzzer's code of an adjit type, or None if it is not fuzzed."""
    for code, at in ADJIT_TYPE.items():
        if at == t and type(at) is type(t):
            return code
    return None


# --- numpy semantics -----------------------------------------------------------------

def _huber(v, delta):
    n = np.sqrt(np.dot(v, v))
    return 0.5 * n * n if n <= delta else delta * (n - 0.5 * delta)


def _pseudo_huber(v, delta):
    return delta * np.sqrt(1.0 + np.dot(v, v) / (delta * delta))


def _quat_from_matrix(m):
    """Shepperd's method as quat_from_matrix documents it (an independent
    spelling: branch on the trace, then on the largest diagonal entry)."""
    tr = np.trace(m)
    if tr > 0:
        w = 0.5 * np.sqrt(1.0 + tr)
        q = np.array([(m[2, 1] - m[1, 2]) / (4 * w), (m[0, 2] - m[2, 0]) / (4 * w), (m[1, 0] - m[0, 1]) / (4 * w), w])
    else:
        k = int(np.argmax(np.diag(m)))
        i, j = (k + 1) % 3, (k + 2) % 3
        r = 0.5 * np.sqrt(max(1.0 + m[k, k] - m[i, i] - m[j, j], 1e-6))
        q = np.zeros(4)
        q[k] = r
        q[i] = (m[i, k] + m[k, i]) / (4 * r)
        q[j] = (m[j, k] + m[k, j]) / (4 * r)
        q[3] = (m[j, i] - m[i, j]) / (4 * r)
    return q / np.linalg.norm(q)


def _f(x):
    return np.float64(x) if np.ndim(x) == 0 else np.asarray(x, dtype=np.float64)


def _det3(m):
    # Laplace expansion along the first row, as the compiler emits it.
    def det2(a, b, c, d):
        return a * d - b * c
    return (m[0, 0] * det2(m[1, 1], m[1, 2], m[2, 1], m[2, 2])
            - m[0, 1] * det2(m[1, 0], m[1, 2], m[2, 0], m[2, 2])
            + m[0, 2] * det2(m[1, 0], m[1, 1], m[2, 0], m[2, 1]))


def _inverse3(m):
    inv_det = 1.0 / _det3(m)
    out = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            minor = np.delete(np.delete(m, c, axis=0), r, axis=1)
            cof = minor[0, 0] * minor[1, 1] - minor[0, 1] * minor[1, 0]
            out[r, c] = (-cof if (r + c) % 2 else cof) * inv_det
    return out


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + bw * ax + ay * bz - az * by,
                     aw * by + bw * ay + az * bx - ax * bz,
                     aw * bz + bw * az + ax * by - ay * bx,
                     aw * bw - ax * bx - ay * by - az * bz])


def _quat_rotate(q, v):
    u, w = q[:3], q[3]
    return (2 * w * w - 1) * v + 2 * np.dot(u, v) * u + 2 * w * np.cross(u, v)


def _quat_from_axis_angle(axis, angle):
    half = angle * 0.5
    return np.array([*(axis * np.sin(half)), np.cos(half)])


def _rotation(q):
    """The matrix of the rotation q v q* (any q: unit quaternions give rotations)."""
    return np.stack([_quat_rotate(q, e) for e in np.eye(3)], axis=1)


def transform_mul(a, b):
    """(R_a p_b + p_a, q_a q_b) of transforms (p, q)."""
    return np.concatenate([_rotation(a[3:]) @ b[:3] + a[:3], quat_mul(a[3:], b[3:])])


def _transform_inverse(t):
    qi = t[3:] * np.array([-1.0, -1.0, -1.0, 1.0])
    return np.concatenate([-(_rotation(qi) @ t[:3]), qi])


def _transform_twist(t, x, wrench):
    rot, p = _rotation(t[3:]), t[:3]
    top, bottom = rot @ x[:3], rot @ x[3:]
    if wrench:
        return np.concatenate([top + np.cross(p, bottom), bottom])
    return np.concatenate([top, bottom + np.cross(p, top)])


def _erfinv(x: float) -> float:
    """erfinv through the normal quantile (Wichura's AS241 in the standard library)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf((x + 1.0) / 2.0) / math.sqrt(2.0)


def _slerp_relative(a, b):
    """a* b with w >= 0: the rotation from a to b that Warp's slerp powers."""
    relative = quat_mul(np.asarray(a) * np.array([-1.0, -1.0, -1.0, 1.0]), b)
    return -relative if relative[3] < 0 else relative


def _slerp(a, b, t):
    """As Warp 1.19 defines it: a (a* b)^t, the power through the axis and
    angle of a* b (also off the unit sphere)."""
    relative = _slerp_relative(a, b)
    s = np.linalg.norm(relative[:3])
    axis = relative[:3] / s if s > 0 else np.zeros(3)
    return quat_mul(a, _quat_from_axis_angle(axis, t * 2 * np.arctan2(s, relative[3])))


def _rpy(roll, pitch, yaw):
    axis = lambda k, angle: _quat_from_axis_angle(np.eye(3)[k], angle)  # noqa: E731
    return quat_mul(axis(2, yaw), quat_mul(axis(1, pitch), axis(0, roll)))


def _to_rpy(q):
    x, y, z, w = q
    return np.array([np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)),
                     np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0)),
                     np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))])


def _quat_twist(axis, q):
    t = np.concatenate([np.dot(q[:3], axis) * axis, [q[3]]])
    return t / np.linalg.norm(t)


def _quat_between(a, b):
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    q = np.concatenate([np.cross(a, b), [1.0 + a @ b]])
    return q / np.linalg.norm(q)


def mul(a, b, ta, tb):
    """``a * b`` on fuzzed types (scalar scaling, matrix products, Hamilton
    product, transform composition)."""
    if ta == F or tb == F:
        return _f(a * b)
    if ta == Q and tb == Q:
        return quat_mul(a, b)
    if ta == X and tb == X:
        return transform_mul(a, b)
    return _f(np.asarray(a) @ np.asarray(b))


#: name -> f(args, argtypes) in float64 numpy.
NUMPY_REFERENCES = {
    "sqrt": lambda a, t: _f(np.sqrt(a[0])),
    "exp": lambda a, t: _f(np.exp(a[0])),
    "log": lambda a, t: _f(np.log(a[0])),
    "sin": lambda a, t: _f(np.sin(a[0])),
    "cos": lambda a, t: _f(np.cos(a[0])),
    "tanh": lambda a, t: _f(np.tanh(a[0])),
    "tan": lambda a, t: _f(np.tan(a[0])),
    "asin": lambda a, t: _f(np.arcsin(a[0])),
    "acos": lambda a, t: _f(np.arccos(a[0])),
    "atan": lambda a, t: _f(np.arctan(a[0])),
    "sinh": lambda a, t: _f(np.sinh(a[0])),
    "cosh": lambda a, t: _f(np.cosh(a[0])),
    "log2": lambda a, t: _f(np.log2(a[0])),
    "log10": lambda a, t: _f(np.log10(a[0])),
    "cbrt": lambda a, t: _f(np.cbrt(a[0])),
    "erf": lambda a, t: _f(np.vectorize(math.erf)(a[0])),
    "erfc": lambda a, t: _f(np.vectorize(math.erfc)(a[0])),
    "abs": lambda a, t: _f(np.abs(a[0])),
    "min": lambda a, t: _f(np.min(a[0]) if len(a) == 1 else np.minimum(a[0], a[1])),  # one vector: its smallest
    "max": lambda a, t: _f(np.max(a[0]) if len(a) == 1 else np.maximum(a[0], a[1])),
    "dot": lambda a, t: _f(np.dot(a[0], a[1])),
    "length": lambda a, t: _f(np.sqrt(np.dot(a[0], a[0]))),
    "length_sq": lambda a, t: _f(np.dot(a[0], a[0])),
    "normalize": lambda a, t: _f(a[0] / np.sqrt(np.dot(a[0], a[0]))),
    "cross": lambda a, t: _f(np.cross(a[0], a[1])),
    "pow": lambda a, t: _f(np.power(a[0], a[1])),
    "atan2": lambda a, t: _f(np.arctan2(a[0], a[1])),
    "sign": lambda a, t: _f(np.where(np.asarray(a[0]) < 0, -1.0, 1.0)),
    "clamp": lambda a, t: _f(np.minimum(np.maximum(a[0], a[1]), a[2])),
    "where": lambda a, t: a[1] if a[0] else a[2],
    "select": lambda a, t: a[2] if a[0] else a[1],
    "transpose": lambda a, t: _f(np.transpose(a[0])),
    "trace": lambda a, t: _f(np.trace(a[0])),
    "determinant": lambda a, t: _f(_det3(a[0])),
    "inverse": lambda a, t: _inverse3(a[0]),
    "outer": lambda a, t: _f(np.outer(a[0], a[1])),
    "diag": lambda a, t: _f(np.diag(a[0])),
    "mul": lambda a, t: mul(a[0], a[1], t[0], t[1]),
    "quat_inverse": lambda a, t: _f(np.array([-a[0][0], -a[0][1], -a[0][2], a[0][3]])),
    "quat_rotate": lambda a, t: _f(_quat_rotate(a[0], a[1])),
    "quat_rotate_inv": lambda a, t: _f(_quat_rotate(np.array([-a[0][0], -a[0][1], -a[0][2], a[0][3]]), a[1])),
    "quat_to_matrix": lambda a, t: _f(np.stack([_quat_rotate(a[0], e) for e in np.eye(3)], axis=1)),
    "quat_from_matrix": lambda a, t: _f(_quat_from_matrix(np.asarray(a[0]))),
    "norm_l1": lambda a, t: _f(np.abs(a[0]).sum()),
    "norm_l2": lambda a, t: _f(np.sqrt(np.dot(a[0], a[0]))),
    "norm_huber": lambda a, t: _f(_huber(a[0], a[1] if len(a) > 1 else 1.0)),
    "norm_pseudo_huber": lambda a, t: _f(_pseudo_huber(a[0], a[1] if len(a) > 1 else 1.0)),
    "smooth_normalize": lambda a, t: _f(a[0] / _pseudo_huber(a[0], a[1] if len(a) > 1 else 1.0)),
    "skew": lambda a, t: _f(np.array([[0.0, -a[0][2], a[0][1]], [a[0][2], 0.0, -a[0][0]],
                                      [-a[0][1], a[0][0], 0.0]])),
    "get_diag": lambda a, t: _f(np.diag(np.asarray(a[0]))),
    "matrix_from_rows": lambda a, t: _f(np.stack(a, axis=0)),
    "matrix_from_cols": lambda a, t: _f(np.stack(a, axis=1)),
    "quat_from_axis_angle": lambda a, t: _f(_quat_from_axis_angle(a[0], a[1])),
    "cw_mul": lambda a, t: _f(a[0] * a[1]),
    "cw_div": lambda a, t: _f(a[0] / a[1]),
    "frac": lambda a, t: _f(a[0] - np.trunc(a[0])),
    "degrees": lambda a, t: _f(np.degrees(a[0])),
    "radians": lambda a, t: _f(np.radians(a[0])),
    "lerp": lambda a, t: _f(a[0] + (a[1] - a[0]) * a[2]),
    "smoothstep": lambda a, t: _f(_smoothstep(a[0], a[1], a[2])),
    "ddot": lambda a, t: _f(np.sum(np.asarray(a[0]) * np.asarray(a[1]))),
    "erfinv": lambda a, t: _f(_erfinv(float(a[0]))),
    "erfcinv": lambda a, t: _f(_erfinv(1.0 - float(a[0]))),
    "quat_slerp": lambda a, t: _f(_slerp(np.asarray(a[0]), np.asarray(a[1]), a[2])),
    "quat_rpy": lambda a, t: _f(_rpy(a[0], a[1], a[2])),
    "quat_to_rpy": lambda a, t: _f(_to_rpy(np.asarray(a[0]))),
    "quat_twist": lambda a, t: _f(_quat_twist(np.asarray(a[0]), np.asarray(a[1]))),
    # (for a unit axis, 2 acos of the twist's w; as Warp, |dot| unscaled by |axis| otherwise)
    "quat_twist_angle": lambda a, t: _f(2 * np.arctan2(abs(np.dot(a[1][:3], a[0])), a[1][3])),
    "quat_twist_angle_signed": lambda a, t: _f(2 * np.arctan2(np.dot(a[1][:3], a[0]), a[1][3])),
    "add": lambda a, t: _f(a[0] + a[1]),
    "sub": lambda a, t: _f(a[0] - a[1]),
    "div": lambda a, t: _f(a[0] / a[1]),
    "div_approx": lambda a, t: _f(np.asarray(a[0]) / np.asarray(a[1])),
    "inverse_approx": lambda a, t: _inverse3(a[0]),
    "quat_between_vectors": lambda a, t: _f(_quat_between(np.asarray(a[0]), np.asarray(a[1]))),
    "mod": lambda a, t: _f(np.fmod(a[0], a[1])),
    "copysign": lambda a, t: _f(np.copysign(a[0], a[1])),
    "neg": lambda a, t: _f(-a[0]),
    "pos": lambda a, t: _f(a[0]),
    "spatial_top": lambda a, t: _f(np.asarray(a[0])[:3]),
    "spatial_bottom": lambda a, t: _f(np.asarray(a[0])[3:]),
    "spatial_dot": lambda a, t: _f(np.dot(a[0], a[1])),
    "spatial_cross": lambda a, t: _f(np.concatenate([np.cross(a[0][:3], a[1][:3]),
                                                     np.cross(a[0][:3], a[1][3:]) + np.cross(a[0][3:], a[1][:3])])),
    "spatial_cross_dual": lambda a, t: _f(np.concatenate([np.cross(a[0][:3], a[1][:3]) + np.cross(a[0][3:], a[1][3:]),
                                                          np.cross(a[0][:3], a[1][3:])])),
    "transform_get_translation": lambda a, t: _f(np.asarray(a[0])[:3]),
    "transform_get_rotation": lambda a, t: _f(np.asarray(a[0])[3:]),
    "transform_multiply": lambda a, t: _f(transform_mul(a[0], a[1])),
    "transform_point": lambda a, t: _f(_rotation(a[0][3:]) @ a[1] + a[0][:3]),
    "transform_vector": lambda a, t: _f(_rotation(a[0][3:]) @ a[1]),
    "transform_inverse": lambda a, t: _f(_transform_inverse(np.asarray(a[0]))),
    "transform_twist": lambda a, t: _f(_transform_twist(np.asarray(a[0]), np.asarray(a[1]), False)),
    "transform_wrench": lambda a, t: _f(_transform_twist(np.asarray(a[0]), np.asarray(a[1]), True)),
    "velocity_at_point": lambda a, t: _f(np.cross(a[0][:3], a[1]) + a[0][3:]),
}


def _smoothstep(e0, e1, x):
    s = min(max((x - e0) / (e1 - e0), 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


def _min_abs(x) -> float:
    return float(np.min(np.abs(x)))


def _closest_pair(v) -> float:
    """The smallest gap between two components of v (a reduction's kink)."""
    v = np.asarray(v, dtype=float).reshape(-1)
    return float(min(abs(v[i] - v[j]) for i in range(len(v)) for j in range(i + 1, len(v))))


#: name -> f(args) giving the distance of the arguments to the builtin's
#: nearest kink (where its derivative jumps). Examples closer than the
#: fuzzer's margin are discarded: finite differences are meaningless there.
KINKS = {
    "abs": lambda a: _min_abs(a[0]),
    "sign": lambda a: _min_abs(a[0]),
    "min": lambda a: _closest_pair(a[0]) if len(a) == 1 else _min_abs(np.asarray(a[0]) - a[1]),
    "max": lambda a: _closest_pair(a[0]) if len(a) == 1 else _min_abs(np.asarray(a[0]) - a[1]),
    "clamp": lambda a: min(_min_abs(np.asarray(a[0]) - a[1]),
                           _min_abs(np.maximum(a[0], a[1]) - a[2])),
    # the relative rotation's sign flips at w = 0, its axis is undefined at xyz = 0
    "quat_slerp": lambda a: min(abs(_slerp_relative(a[0], a[1])[3]),
                                float(np.linalg.norm(_slerp_relative(a[0], a[1])[:3]))),
    # pitch's argument clamped at +-1 (gimbal lock), and the branch cuts of
    # roll's and yaw's atan2 (the angle jumps by 2 pi where y = 0, x < 0)
    "quat_to_rpy": lambda a: min(1.0 - abs(2 * (a[0][3] * a[0][1] - a[0][2] * a[0][0])), _rpy_cuts(a[0])),
    # the twist (dot(q.xyz, axis), w) at 0 (atan2 and the normalization are
    # singular there) and, unsigned, |dot(q.xyz, axis)|
    "quat_twist": lambda a: _twist_size(a),
    "quat_twist_angle": lambda a: min(abs(float(np.dot(a[1][:3], a[0]))), _twist_size(a)),
    # and, signed, the branch cut of atan2(dot, w) where dot = 0 and w < 0 (the angle jumps by 4 pi; which side a
    # zero dot takes depends on its sign bit, which the summation order decides)
    "quat_twist_angle_signed": lambda a: min(_twist_size(a), abs(float(np.dot(a[1][:3], a[0])))
                                             if a[1][3] < 0 else float("inf")),
    # normalize's select at a zero vector, and (a x b, 1 + a.b) vanishing for opposite a and b
    "quat_between_vectors": lambda a: min(float(np.linalg.norm(a[0])), float(np.linalg.norm(a[1])),
                                          float(np.linalg.norm(np.asarray(a[0]) / np.linalg.norm(a[0])
                                                               + np.asarray(a[1]) / np.linalg.norm(a[1])))),
    # fmod jumps by b where a / b is an integer: the distance of a to there
    "mod": lambda a: _min_abs((np.asarray(a[0]) / a[1] - np.round(np.asarray(a[0]) / a[1])) * a[1]),
    # |x| kinks at x = 0, the sign of y flips at y = 0
    "copysign": lambda a: min(_min_abs(a[0]), _min_abs(a[1])),
}


def _rpy_cuts(q) -> float:
    """The distance of quat_to_rpy's roll and yaw (atan2(y, x), as
    ``_to_rpy``) to their branch cuts: |y| where x < 0."""
    x, y, z, w = q
    cuts = [(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)), (2 * (w * z + x * y), 1 - 2 * (y * y + z * z))]
    return min((abs(sy) for sy, sx in cuts if sx < 0), default=float("inf"))


def _twist_size(a) -> float:
    return float(np.hypot(np.dot(a[1][:3], a[0]), a[1][3]))


#: Builtins whose argument the generator shapes into a well-conditioned
#: region by construction (their singular set is not an interval per
#: argument, so ``domain`` cannot say it): name -> shaping kind.
SHAPED_ARGUMENTS = {"inverse": "diagonally_dominant", "inverse_approx": "diagonally_dominant"}


# --- signatures ------------------------------------------------------------------------

@dataclass(frozen=True)
class Signature:
    name: str
    args: tuple[str, ...]
    result: str
    #: per argument: the open interval where the builtin is smooth, or None.
    domain: tuple
    #: the numpy reference is independent of adjit (else the compiled builtin).
    independent: bool


def _infer_result(builtin, types):
    try:
        return builtin.infer(list(types))
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


_SIGNATURES: dict = {}


def signatures(names=None) -> list[Signature]:
    """Every (builtin, argument types) the fuzzer can call: the differentiable
    builtins of the registry, tried by their ``infer`` on all combinations of
    1 to 3 arguments of the fuzzed types (bool arguments are comparisons)."""
    key = (tuple(names) if names is not None else None,
           tuple((name, id(entry)) for name, entry in adjit.builtin_registry().items()))
    if key not in _SIGNATURES:
        _SIGNATURES[key] = _signatures(names)
    return list(_SIGNATURES[key])


def _signatures(names) -> list[Signature]:
    out = []
    candidates = VALUE_TYPES + (BOOL,)
    for name, builtin in adjit.builtin_registry().items():
        if names is not None and name not in names:
            continue
        if not builtin.differentiable or builtin.static_params or builtin.array_args:
            continue
        for arity in (1, 2, 3):
            for combo in itertools.product(candidates, repeat=arity):
                if name in KINKS and (S in combo or X in combo):
                    # component-wise kinks on 6 or 7 components: most draws land near one and
                    # are discarded; these builtins are fuzzed on the smaller types
                    continue
                result = _infer_result(builtin, [ADJIT_TYPE[c] for c in combo])
                code = code_of(result) if result is not None else None
                if code is None or code == BOOL:
                    continue
                domain = tuple(builtin.domain[k] if builtin.domain and k < len(builtin.domain) else None
                               for k in range(arity))
                out.append(Signature(name, combo, code, domain, name in NUMPY_REFERENCES))
    return out


def missing_numpy_references() -> list[str]:
    """Differentiable builtins the fuzzer calls whose forward values are only
    checked against the compiled builtin itself (add them to NUMPY_REFERENCES)."""
    return sorted({s.name for s in signatures() if not s.independent})


def uncovered_builtins() -> list[str]:
    """Differentiable builtins the fuzzer never calls (no signature over the fuzzed types)."""
    called = {s.name for s in signatures()}
    return sorted(name for name, b in adjit.builtin_registry().items()
                  if b.differentiable and name not in called)


def evaluate(sig: Signature, args):
    """The builtin's value on numpy arguments (the reference of the forward check)."""
    ref = NUMPY_REFERENCES.get(sig.name)
    if ref is not None:
        return ref(args, sig.args)
    return _compiled_reference(sig, args)


# --- the fallback reference: the compiled builtin --------------------------------------

_COMPILED: dict = {}


def _compiled_reference(sig: Signature, args):
    kernel = _COMPILED.get(sig)
    if kernel is None:
        kernel = _COMPILED[sig] = _compile_one_call(sig)
    ins = []
    for code, a in zip(sig.args, args):
        if code == BOOL:
            ins.append(adjit.array(np.array([1 if a else 0], np.int32), dtype=T.int32))
        else:
            ins.append(adjit.array(np.asarray(a, np.float64).reshape((1,) + SHAPE[code]), dtype=ADJIT_TYPE[code]))
    out = adjit.zeros(1, dtype=ADJIT_TYPE[sig.result])
    adjit.launch(kernel, 1, inputs=ins, outputs=[out])
    value = out.numpy()[0].copy()
    return _f(value)


def _compile_one_call(sig: Signature):
    params, call_args = [], []
    for k, code in enumerate(sig.args):
        if code == BOOL:
            params.append(f"a{k}: wp.array(dtype=wp.int32)")
            call_args.append(f"a{k}[0] != 0")
        else:
            params.append(f"a{k}: wp.array(dtype={SOURCE_TYPE[code]})")
            call_args.append(f"a{k}[0]")
    source = ("import adjit as wp\n\n\n@wp.kernel\n"
              f"def reference_{sig.name}({', '.join(params)}, out: wp.array(dtype={SOURCE_TYPE[sig.result]})):\n"
              f"    out[0] = wp.{sig.name}({', '.join(call_args)})\n")
    module = load_module(source, f"adjit_reference_{sig.name}_{'_'.join(sig.args)}")
    return getattr(module, f"reference_{sig.name}")
