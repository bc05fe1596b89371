"""Constructors of vectors, matrices, quaternions and transforms in kernels
(``vec3(a, b, c)``, ``vector(..., dtype=)``, ``transform(p=, q=)``) and scalar casts."""
from __future__ import annotations

import ast

import numpy as np
from mlir.dialects import arith, vector as vector_d

from ... import types as T
from ...errors import KernelSyntaxError, KernelTypeError
from ..values import Val, constant, constant_array, splat


class Constructors:
    """FunctionBuilder's value constructors."""

    def construct(self, t, args, node):
        """Casts (``float(x)``) and vector/matrix constructors (``vec3(a, b, c)``)."""
        if isinstance(t, T.ScalarType):
            if len(args) != 1:
                raise self.error(f"{t}() takes 1 argument", node)
            return Val(t, self.cast(args[0], t, node))
        if isinstance(t, T.QuatType):
            return self.construct_quat(t, args, node)
        if isinstance(t, T.TransformType):
            return self.construct_transform(t, args, node)
        n = t.length if isinstance(t, T.VectorType) else t.rows * t.cols
        scalar = t.dtype
        if len(args) == 0:
            return Val(t, constant(t, 0))
        if len(args) == 1 and isinstance(args[0], Val) and isinstance(args[0].type, T.ScalarType):
            if args[0].is_literal:
                return Val(t, self.literal_constant(t, args[0].literal))
            self.check_component_precision(t, args, node)
            return Val(t, splat(t, self.cast(args[0], scalar, node)))
        if len(args) == 1 and isinstance(args[0], Val) and type(args[0].type) is type(t) \
                and args[0].type.shape == t.shape:
            return self.convert_components(args[0], t)  # vec3i(v), mat33d(m): each component converted
        if isinstance(t, T.MatrixType) and len(args) == t.rows and all(
                isinstance(a, Val) and a.type == t.row_type() for a in args):
            m = constant(t, 0)
            for r, a in enumerate(args):
                m = vector_d.InsertOp(a.value, m, [], [r]).result
            return Val(t, m)
        if isinstance(t, T.VectorType) and len(args) > 1 and all(
                isinstance(a, Val) and type(a.type) is T.VectorType and a.type.dtype == scalar for a in args) \
                and sum(a.type.length for a in args) == n:
            # Concatenated vectors: spatial_vector(w, v) of two vec3.
            comps = [vector_d.ExtractOp(a.value, [], [k]).result for a in args for k in range(a.type.length)]
            return _from_components(t, comps)
        if len(args) != n:
            if isinstance(t, T.MatrixType) and _is_trs(args):
                raise self.error(_TRS_REMOVED, node, KernelTypeError)
            raise self.error(f"{t}() takes {n} components, got {len(args)}", node)
        return self.from_scalars(t, args, node)

    def from_scalars(self, t, args, node) -> Val:
        """``t`` (a vector, quaternion, transform or matrix) from all its
        components, each cast to its scalar type (a float of the other
        precision refused)."""
        self.check_component_precision(t, args, node)
        return _from_components(t, [self.cast(a, t.dtype, node) for a in args])

    def construct_generic(self, maker, node):
        """Warp's ``vector(*values, length=, dtype=)`` and ``matrix(*values,
        shape=, dtype=)`` in kernels: the type from the (compile-time)
        keywords, else from the values (their count, and the scalar type of
        the first one that is not a literal; float32 for literals only); no
        values: zero."""
        what = "vector" if maker is T.vector else "matrix"
        allowed = ("length", "dtype") if maker is T.vector else ("shape", "dtype")
        options = {}
        for kw in node.keywords:
            if what == "matrix" and kw.arg in ("pos", "rot", "scale"):
                raise self.error(_TRS_REMOVED, node, KernelTypeError)
            if kw.arg not in allowed:
                raise self.error(f"{what}() takes the keywords {' and '.join(allowed)}, got {kw.arg or '**'}",
                                 kw, KernelSyntaxError)
            options[kw.arg] = self.eval_static(ast.Call(func=node.func, args=[kw.value], keywords=[]))
        args = self.call_arguments(node.args)
        if what == "matrix" and _is_trs(args):
            raise self.error(_TRS_REMOVED, node, KernelTypeError)
        dtype = options.get("dtype")
        if dtype is None:
            first = next((a.type for a in args if isinstance(a, Val) and not a.is_literal), None)
            dtype = T.scalar_of(first) if first is not None else T.float32
        try:
            if maker is T.vector:
                length = options.get("length", len(args))
                t = T.vector(length, T.value_type_of(dtype))
            else:
                if "shape" not in options:
                    raise TypeError("matrix() in a kernel needs shape=(rows, cols)")
                t = T.matrix(tuple(options["shape"]), T.value_type_of(dtype))
        except (TypeError, ValueError) as e:
            raise self.error(f"{what}(): {e}", node, KernelTypeError) from None
        return self.construct(t, args, node)

    def construct_with_keywords(self, t, node, infer_dtype=False):
        """A vector, matrix, quaternion or transform built with keywords, as
        Warp's constructors take them: ``dtype=`` (a compile-time scalar
        type: the same kind of type with that scalar, e.g.
        ``spatial_vector(w, v, dtype=float64)``) and the components by
        Warp's parameter names (``KEYWORD_FORMS``): ``quat(x=, y=, z=, w=)``,
        ``quat(ijk=, real=)``, ``quat(quat=)``, ``transform(p=, q=)`` (a
        missing ``q`` is the identity rotation, a missing ``p`` the origin),
        ``spatial_vector(w=, v=)`` and ``spatial_vector(wx=, ..., vz=)``.
        ``infer_dtype`` (``quaternion(...)``, ``transformation(...)``):
        without ``dtype=``, the scalar type of the first component that is
        not a literal (float32 for literals only)."""
        forms = keyword_forms(t)
        names = tuple(dict.fromkeys(n for form in forms for n in form)) + ("dtype",)
        given = {}
        for kw in node.keywords:
            if kw.arg not in names or kw.arg in given:
                problem = "repeated" if kw.arg in given else "not taken"
                raise self.error(f"{t}(): keyword {kw.arg or '**'!s} is {problem} (it takes {', '.join(names)})", kw,
                                 KernelSyntaxError)
            given[kw.arg] = kw.value
        dtype_node = given.pop("dtype", None)
        args = self.call_arguments(node.args)
        values = {k: self.expr(v) for k, v in given.items()}
        scalar = None
        if dtype_node is not None:
            dtype = self.eval_static(ast.Call(func=node.func, args=[dtype_node], keywords=[]))
            try:
                scalar = T.value_type_of(dtype)
                if not isinstance(scalar, T.ScalarType):
                    raise TypeError(f"dtype must be a scalar type, got {dtype!r}")
            except TypeError as e:
                raise self.error(f"{t}(): {e}", node, KernelTypeError) from None
        elif infer_dtype:
            typed = next((v.type for v in [*args, *values.values()] if isinstance(v, Val) and not v.is_literal), None)
            scalar = T.scalar_of(typed) if typed is not None else T.float32
        if scalar is not None:
            try:
                t = T.transformation(scalar) if isinstance(t, T.TransformType) else \
                    T.quaternion(scalar) if isinstance(t, T.QuatType) else \
                    T.vector(t.length, scalar) if isinstance(t, T.VectorType) else T.matrix(t.shape, scalar)
            except TypeError as e:
                raise self.error(f"{t}(): {e}", node, KernelTypeError) from None
        if not values:
            return self.construct(t, args, node)
        if isinstance(t, T.TransformType):
            # transform(p, q=...), transform(p=..., q=...), transform(q=...)
            if len(args) + len(values) > 2 or (args and "p" in values):
                raise self.error(f"{t}() takes p and q once each (positionally or as keywords)", node,
                                 KernelSyntaxError)
            p = args[0] if args else values["p"] if "p" in values else Val(T.vector(3, t.dtype),
                                                                           constant(T.vector(3, t.dtype), 0))
            q = values["q"] if "q" in values else self.identity_quat(t.dtype)
            return self.construct_transform(t, [p, q], node)
        for form in forms:
            rest = form[len(args):]
            if len(args) <= len(form) and set(values) == set(rest):
                return self.construct(t, args + [values[n] for n in rest], node)
        options = "; ".join(f"({', '.join(form)})" for form in forms)
        raise self.error(f"{t}() takes its components positionally or by name in one of the forms {options}; got "
                         f"{len(args)} positional and {', '.join(values)}", node, KernelSyntaxError)

    def convert_components(self, v: Val, t) -> Val:
        """``v`` (a vector or matrix of ``t``'s shape) with each component
        converted to ``t``'s scalar type as ``t.dtype(x)`` converts it
        (floats to ints truncate toward zero), as Warp's ``vec3i(v)``."""
        if v.type.dtype == t.dtype:
            return Val(t, v.value)
        value = self.materialize(v, v.type)
        positions = [[k] for k in range(t.length)] if isinstance(t, T.VectorType) else \
            [[r, c] for r in range(t.rows) for c in range(t.cols)]
        comps = [self.cast(Val(v.type.dtype, vector_d.ExtractOp(value, [], p).result), t.dtype, self.node)
                 for p in positions]
        return _from_components(t, comps)

    def check_component_precision(self, t, args, node) -> None:
        """A float variable of the other precision given as a component (or
        the fill value) of ``t`` would be rounded silently: refused (Warp
        refuses too)."""
        scalar = t.dtype
        for k, a in enumerate(args):
            if isinstance(a, Val) and not a.is_literal and isinstance(a.type, T.ScalarType) \
                    and a.type.is_float and scalar.is_float and a.type != scalar:
                what = f"{t}(): the fill value" if len(args) == 1 else f"{t}() component {k}"
                raise self.error(f"{what} is {a.type}, not {scalar}; convert it explicitly "
                                 f"({scalar}(x)) so the change of precision is visible", node, KernelTypeError)

    def construct_quat(self, t: T.QuatType, args, node):
        """``quat()`` (zeros), ``quat(x, y, z, w)``, ``quat(xyz, w)`` and ``quat(q)`` (as in Warp)."""
        if len(args) == 0:
            return Val(t, constant(t, 0))
        if len(args) == 1 and isinstance(args[0], Val) and isinstance(args[0].type, T.QuatType):
            return _with_precision(args[0], t)
        if len(args) == 2 and isinstance(args[0], Val) and isinstance(args[0].type, T.VectorType) \
                and not isinstance(args[0].type, T.QuatType) and args[0].type.length == 3:
            xyz = [self.extract(args[0], [k]) for k in range(3)]
            self.check_component_precision(t, xyz + [args[1]], node)
            comps = [self.cast(c, t.dtype, node) for c in xyz] + [self.cast(args[1], t.dtype, node)]
            return _from_components(t, comps)
        if len(args) == 4:
            return self.from_scalars(t, args, node)
        raise self.error(f"{t}() takes the components (x, y, z, w), a 3-vector and w, or a quaternion; got "
                         f"{', '.join(self.describe(a) for a in args)}", node)

    def identity_quat(self, dtype) -> Val:
        qt = T.quaternion(dtype)
        return Val(qt, constant_array(qt, np.array([0, 0, 0, 1])))

    def construct_transform(self, t: T.TransformType, args, node):
        """``transform()`` (zeros in kernels, as Warp's: on the host it is the
        identity, as Warp's too), ``transform(p, q)``, ``transform(t)`` and the
        7 components (px, py, pz, qx, qy, qz, qw), as in Warp."""
        if len(args) == 0:
            return Val(t, constant(t, 0))
        if len(args) == 1 and isinstance(args[0], Val) and isinstance(args[0].type, T.TransformType):
            return _with_precision(args[0], t)
        if len(args) == 2 and all(isinstance(a, Val) for a in args) and args[0].type == T.vector(3, t.dtype) \
                and args[1].type == T.quaternion(t.dtype):
            comps = [self.extract(args[0], [k]).value for k in range(3)] + \
                [self.extract(args[1], [k]).value for k in range(4)]
            return _from_components(t, comps)
        if len(args) == 1 and isinstance(args[0], Val) and args[0].type == T.vector(3, t.dtype):
            return self.construct_transform(t, [args[0], self.identity_quat(t.dtype)], node)  # transform(p)
        if len(args) == 7:
            return self.from_scalars(t, args, node)
        raise self.error(f"{t}() takes a position {T.vector(3, t.dtype)} and a rotation {T.quaternion(t.dtype)}, "
                         f"a transform, or 7 components; got {', '.join(self.describe(a) for a in args)}", node)


#: Warp 1.10 removed matrix(pos, rot, scale); Warp 1.19 says so.
_TRS_REMOVED = ("the 4x4 matrix from a position, rotation and scale, matrix(pos, rot, scale), was removed from "
                "Warp in 1.10 in favor of transform_compose(pos, rot, scale); adjit has transform_compose")


def _is_trs(args) -> bool:
    """Whether ``args`` are (vec3, quat, vec3), Warp's removed matrix(pos, rot, scale)."""
    return len(args) == 3 and all(isinstance(a, Val) for a in args) and isinstance(args[1].type, T.QuatType) \
        and all(type(a.type) is T.VectorType and a.type.length == 3 for a in (args[0], args[2]))


def keyword_forms(t) -> list[tuple[str, ...]]:
    """Warp's parameter names of ``t``'s constructors, one tuple per form
    (a call gives a prefix positionally and the rest by name)."""
    if isinstance(t, T.QuatType):
        return [("x", "y", "z", "w"), ("ijk", "real"), ("quat",)]
    if isinstance(t, T.TransformType):
        return [("p", "q")]
    if type(t) is T.VectorType and t.length == 6 and t.dtype.is_float:  # spatial vectors
        return [("w", "v"), ("wx", "wy", "wz", "vx", "vy", "vz")]
    return []


def _from_components(t, comps: list) -> Val:
    """A vector (quaternion, transform) or matrix ``t`` from its component
    values, row by row."""
    if isinstance(t, T.VectorType):
        return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
    m = constant(t, 0)
    for r in range(t.rows):
        row = vector_d.FromElementsOp(t.row_type().mlir(), comps[r * t.cols:(r + 1) * t.cols]).result
        m = vector_d.InsertOp(row, m, [], [r]).result
    return Val(t, m)


def _with_precision(v: Val, t) -> Val:
    """A quaternion or transform as ``t``: its components widened or rounded."""
    if v.type.dtype == t.dtype:
        return v
    op = arith.ExtFOp if t.dtype.bits > v.type.dtype.bits else arith.TruncFOp
    return Val(t, op(t.mlir(), v.value).result)
