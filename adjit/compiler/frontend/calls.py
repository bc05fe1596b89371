"""Calls: what a call's callee is (builtin, type, @func, print, ...), and builtin
calls: their static parameters, literal typing and type checks."""
from __future__ import annotations

import ast
import builtins

from mlir import ir
from mlir.dialects import vector as vector_d

from ... import language
from ... import types as T
from ... import builtins as B
from ...dialects import adjit as adjit_d
from ...errors import GradientError, KernelSyntaxError, KernelTypeError
from .. import by_reference as BR
from .. import local_arrays as LA
from ..address_arrays import make_address_array
from .. import slices as S
from .. import tiles
from .. import tile_linalg  # noqa: F401 (registers its emitters into tiles._HANDLERS)
from .. import tile_random  # noqa: F401 (likewise)
from .. import tile_scatter  # noqa: F401 (likewise)
from .. import tile_fft  # noqa: F401 (likewise)
from .. import tile_stack  # noqa: F401 (likewise)
from .. import views as V
from ..values import Val, from_index, literal


#: The builtins that take bool vectors and matrices (they move components
#: around; the others compute with them, which bools do not support).
_TAKE_BOOL_COMPOSITES = frozenset(("transpose", "get_diag", "stop_gradient", "where", "select", "matrix_from_rows",
                                   "matrix_from_cols", "diag"))


def _defined(scope, name: str) -> bool:
    try:
        scope.lookup(name)
    except KeyError:
        return False
    return True


class Calls:
    """FunctionBuilder's call dispatch and builtin calls."""

    def type_of_value_callee(self, func):
        """The kernel type a callee names through a value, as in Warp: an
        array's element type (``a.dtype(0.0)``) or a value's type
        (``type(x)(0.0)``, where ``type`` is Python's); None for other callees."""
        if isinstance(func, ast.Attribute) and func.attr == "dtype" and not self.is_static(func.value):
            base = self.expr(func.value)
            if isinstance(base, Val) and isinstance(base.type, (T.ArrayType, T.IndexedArrayType)) and \
                    not isinstance(base.type, T.StructArrayType) and base.type.dtype is not None:
                return base.type.dtype
            return None
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type" and \
                self.is_static(func.func) and not _defined(self.scope, "type"):
            if len(func.args) != 1 or func.keywords:
                raise self.error("type() takes one value in kernels", func, KernelTypeError)
            value = self.expr(func.args[0])
            if not (isinstance(value, Val) and isinstance(value.type, (T.ScalarType, T.VectorType, T.MatrixType))):
                raise self.error(f"type() of {self.describe(value)}: kernels take the type of a scalar, vector, "
                                 "matrix, quaternion or transform value", func, KernelTypeError)
            return value.type
        return None

    def expr_Call(self, node):
        if self.is_static_call(node):
            return self.static_value(self.eval_static(node), node)
        callee = self.type_of_value_callee(node.func)
        if callee is not None:  # a.dtype(x), type(v)(x)
            pass
        elif self.is_static_call(node.func):  # static(table[k])(x): the callee chosen at compile time
            callee = self.eval_static(node.func)
        elif isinstance(node.func, ast.Call) and self.is_static(node.func.func) and \
                self.resolve_static(node.func.func) is language.grad:
            callee = self.grad_of(node.func)  # grad(f)(x)
        else:
            callee = self.resolve_static(node.func) if self.is_static(node.func) else None
        if callee is None:
            raise self.error(f"'{ast.unparse(node.func)}' is not callable", node)
        if isinstance(callee, language.GradWrapper):
            return self.emit_grad(callee.func, node)
        if isinstance(callee, B.Builtin) and callee.name in ("quaternion", "transformation") and \
                any(kw.arg != "dtype" for kw in node.keywords):
            # quaternion(x=, y=, z=, w=, dtype=), transformation(p=, q=): Warp's parameter names
            t = T.quaternion(T.float32) if callee.name == "quaternion" else T.transformation(T.float32)
            return self.construct_with_keywords(t, node, infer_dtype=True)
        if isinstance(callee, B.Builtin) and callee.tile:
            return tiles.call(self, callee, node)  # shapes, offsets and functions as arguments
        if isinstance(callee, B.Builtin):
            value_nodes, static = self.bind_static_params(callee, node)
            return self.call_builtin(callee, self.call_arguments(value_nodes), node, static)
        if callee is builtins.print:
            return self.emit_print(node)
        if callee is builtins.breakpoint:
            return self.emit_breakpoint(node)
        if callee is language.printf:
            return self.emit_printf(node)
        if callee is _host_zeros():
            return LA.make_zeros(self, node)
        if callee is language.address_array:
            return make_address_array(self, node)
        if _is_host_array(callee):
            raise self.error(
                f"{ast.unparse(node.func)}(ptr=..., shape=..., dtype=...) inside a kernel (Warp's array over a raw "
                "address) is not supported in adjit: an array made from an address is memory that adjit's bounds "
                "checks and gradients cannot cover, and its kernel language has no operation for it; pass the "
                "array to the kernel as a parameter (or a struct field) instead", node, KernelTypeError)
        if callee is T.fixedarray:
            raise self.error("fixedarray(...) is a type, for annotating @func parameters and results (as in "
                             "Warp); make a local array with zeros(shape, dtype)", node, KernelSyntaxError)
        if callee in (language.expect_eq, language.expect_neq, language.expect_near):
            return self.emit_expect(callee.__name__, node)
        if callee in (T.vector, T.matrix):
            return self.construct_generic(callee, node)
        if node.keywords and isinstance(callee, (T.VectorType, T.MatrixType)):
            return self.construct_with_keywords(callee, node)
        if node.keywords and not isinstance(callee, language.Function):
            raise self.error(f"keyword arguments are not supported in calls to '{ast.unparse(node.func)}'",
                             node, KernelSyntaxError)
        if callee is language.tid:
            if not self.is_kernel:
                raise self.error("tid() can only be called in a kernel; pass the index to the "
                                 "device function as an argument", node, KernelSyntaxError)
            if node.args:
                raise self.error("tid() takes no arguments", node)
            count = self.tid_count
            idx = adjit_d.TidOp([ir.IndexType.get()] * count).results
            vals = tuple(Val(T.int32, from_index(i)) for i in idx)
            return vals[0] if count == 1 else vals
        hoisted = []
        if isinstance(callee, language.Function) and BR.takes_references(callee):
            node, hoisted = BR.hoist_indices(self, node)  # a reference's indices are evaluated once
        args = self.call_arguments(node.args)
        if callee is len:
            return self.length(args, node)
        if isinstance(callee, T.StructType):
            if args or node.keywords:
                raise self.error(f"{callee.name}() in a kernel takes no arguments (set the fields after)", node)
            return self.new_struct(callee, node)
        if isinstance(callee, (T.ScalarType, T.VectorType, T.MatrixType)) or callee in (float, int, bool):
            return self.construct(T.value_type_of(callee), args, node)
        if isinstance(callee, language.Function):
            if any(k.arg is None for k in node.keywords):
                raise self.error("**kwargs unpacking is not supported in kernels", node, KernelSyntaxError)
            kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
            try:
                return self.call_function(callee, args, node, kwargs)
            finally:
                for name in hoisted:
                    self.env.pop(name, None)
        if isinstance(callee, language.Kernel):
            raise self.error("kernels cannot be called from kernels; use a @adjit.func", node)
        if isinstance(callee, language.RefusedFunction):
            raise self.error(callee.refusal, node)
        raise self.error(f"'{ast.unparse(node.func)}' is not a builtin, type or @adjit.func", node)

    def call_arguments(self, nodes) -> list:
        """The values of a call's positional arguments; ``*t`` unpacks a
        tuple (``f(*g())``, ``f(*(a, b))``), a vector's components or a
        matrix's rows."""
        args = []
        for a in nodes:
            if not isinstance(a, ast.Starred):
                args.append(self.expr(a))
                continue
            if S.has_slice(a.value):
                args += S.unpack(self, a.value)  # *v[1:3], *m[:2], *arr[:3]
                continue
            value = self.expr(a.value)
            if isinstance(value, tuple):
                args += list(value)
            elif isinstance(value, Val) and isinstance(value.type, T.VectorType):
                v = self.materialize(value, value.type)
                args += [Val(value.type.dtype, vector_d.ExtractOp(v, [], [k]).result)
                         for k in range(value.type.length)]
            elif isinstance(value, Val) and isinstance(value.type, T.MatrixType):
                args += [self.extract(value, [r]) for r in range(value.type.rows)]  # *m: its rows, as Warp's
            else:
                raise self.error(f"*{ast.unparse(a.value)}: Starred expressions are only supported for tuples, "
                                 f"vectors, matrices and slices (as Warp's), not {self.describe(value)}", a,
                                 KernelTypeError)
        return args

    def length(self, args, node) -> Val:
        """``len(v)``: a vector's length or a matrix's rows (constants);
        ``len(a)``: an array's first extent (as Python and Warp), an int32."""
        if len(args) == 1 and V.is_view(args[0]):
            return V.length(args[0])
        if len(args) != 1 or not isinstance(args[0], Val):
            raise self.error("len() takes one vector, matrix or array", node)
        t = args[0].type
        if isinstance(t, T.VectorType):
            return literal(t.length)
        if isinstance(t, (T.MatrixType, T.LocalArrayType)):
            return literal(t.shape[0])
        if isinstance(t, T.ArrayType):
            dim = adjit_d.DimOp(ir.IndexType.get(), args[0].value,
                                ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)).result
            return Val(T.int32, from_index(dim))
        raise self.error(f"len() takes a vector, matrix or array, got {self.describe(args[0])}", node)

    def bind_static_params(self, builtin: B.Builtin, node):
        """Splits a builtin call into its value argument nodes and its static parameter values."""
        params = {p.name: p for p in builtin.static_params}
        if builtin.params and not any(isinstance(a, ast.Starred) for a in node.args):
            return self.bind_named_params(builtin, params, node)
        value_nodes = list(node.args)
        bound = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(f"{builtin.name}() does not take **keyword arguments", kw, KernelSyntaxError)
            if kw.arg not in params:
                takes = (f"its keyword arguments are {', '.join(params)}" if params
                         else "it takes no keyword arguments")
                raise self.error(f"{builtin.name}() got an unexpected keyword argument '{kw.arg}' ({takes})", kw)
            bound[kw.arg] = kw.value
        if builtin.static_positional and value_nodes:
            if len(value_nodes) > len(params):
                raise self.error(f"{builtin.name}() takes at most {len(params)} arguments "
                                 f"({', '.join(params)}), got {len(value_nodes) + len(bound)}", node)
            for name, arg in zip(params, value_nodes):
                if name in bound:
                    raise self.error(f"{builtin.name}() got multiple values for argument '{name}'", node)
                bound[name] = arg
            value_nodes = []
        static = {}
        for name, p in params.items():
            if name in bound:
                static[name] = self.static_param_value(builtin, p, bound[name])
            elif p.default is B.REQUIRED:
                raise self.error(f"{builtin.name}() needs the argument '{name}'", node)
            else:
                static[name] = p.default
        return value_nodes, static

    def bind_named_params(self, builtin: B.Builtin, static_params: dict, node):
        """As bind_static_params, for a builtin with Warp's parameter names
        (``builtin.params``): each argument positionally or by its name."""
        names = builtin.params
        if len(node.args) > len(names):
            raise self.error(f"{builtin.name}() takes at most {len(names)} arguments ({', '.join(names)}), got "
                             f"{len(node.args)}", node)
        bound = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.error(f"{builtin.name}() got an unexpected keyword argument '{kw.arg or '**'}' (it takes "
                                 f"{', '.join(names)})", kw)
            if kw.arg in bound:
                raise self.error(f"{builtin.name}() got multiple values for argument '{kw.arg}'", kw)
            bound[kw.arg] = kw.value
        static = {}
        for name in names:
            p = static_params.get(name)
            if name not in bound and (p is None or p.default is B.REQUIRED):
                raise self.error(f"{builtin.name}() needs the argument '{name}'", node)
            if p is not None:
                static[name] = self.static_param_value(builtin, p, bound[name]) if name in bound else p.default
        return [bound[n] for n in names if n not in static_params], static

    def static_param_value(self, builtin: B.Builtin, p: B.StaticParam, node):
        """The compile-time value of a static parameter: a constant int or a scalar type."""
        if p.kind == "int":
            v = self.expr(node)
            if isinstance(v, Val) and v.is_literal and type(v.literal) is int:
                return v.literal
            raise self.error(f"{builtin.name}() argument '{p.name}' must be a constant integer, "
                             f"got {self.describe(v)}", node)
        if p.kind == "dtype":
            if self.is_static(node):
                try:
                    return T.scalar_type_of(self.resolve_static(node))
                except TypeError:
                    pass
            raise self.error(f"{builtin.name}() argument '{p.name}' must be a scalar type (float, int, "
                             f"adjit.float64, ...), got '{ast.unparse(node)}'", node)
        raise AssertionError(f"unknown static parameter kind {p.kind!r}")

    def call_builtin(self, builtin: B.Builtin, args, node, static=None):
        if builtin.operator is not None:
            # mul(a, b) is a * b, neg(a) is -a: the operator's literal folding
            # and unification apply.
            unary = issubclass(builtin.operator, ast.unaryop)
            if len(args) != (1 if unary else 2):
                raise self.error(f"{builtin.name}() takes {1 if unary else 2} argument{'' if unary else 's'}, "
                                 f"got {len(args)}", node)
            if unary:
                return self.unaryop(builtin.operator(), args[0], node)
            return self.binop(builtin.operator(), args[0], args[1], node)
        if builtin.name in ("where", "select") and len(args) == 3 and isinstance(args[0], Val) and (
                isinstance(args[0].type, T.ArrayType) or isinstance(args[0].type, T.ScalarType)
                and args[0].type.is_int):
            # As Warp's: an integer condition (nonzero) or an array (not null) too.
            args = [Val(T.bool_, self.to_bool(args[0], node)), *args[1:]]
        return self.apply_builtin(builtin, args, node, static or {})

    def apply_builtin(self, builtin: B.Builtin, args, node, static):
        """Type-checks a builtin call with its ``infer`` and emits it."""
        args = V.builtin_args(self, builtin, args, node)  # atomic_add(row, j, v): the array's a[i, j]
        if builtin.literal_types is not None:
            wanted = builtin.literal_types([a.type if isinstance(a, Val) else None for a in args])
            args = [self.coerce(a, t, node) if t is not None and isinstance(a, Val) and a.is_literal
                    and isinstance(t, T.ScalarType) else a for a, t in zip(args, wanted)]
        elif builtin.unify_literals and args:
            # A bool argument (where/select's condition) never sets the literals' type.
            anchor = next((a for a in args if isinstance(a, Val) and not a.is_literal
                           and a.type != T.bool_), None)
            if anchor is not None:
                args = [self.coerce(a, anchor.type, node) if isinstance(a, Val) and a.is_literal
                        and isinstance(anchor.type, T.ScalarType) else a for a in args]
        for a in args:
            if not isinstance(a, Val):
                raise self.error(f"{builtin.name}() got a non-value argument", node)
            if isinstance(a.type, T.ArrayType) and not builtin.array_args:
                raise self.error(f"{builtin.name}() does not take arrays, got {a.type}", node)
        types = [a.type for a in args]
        if builtin.name not in _TAKE_BOOL_COMPOSITES and any(
                isinstance(t, (T.VectorType, T.MatrixType)) and t.dtype.is_bool for t in types):
            raise self.error(f"{builtin.name}() does not take bool vectors or matrices, got "
                             f"{', '.join(map(str, types))}", node)
        try:
            result = builtin.infer(types, **static)
        except TypeError as e:
            raise self.error(str(e), node) from None
        if self.mb.second_order and builtin.name in B.FIRST_ORDER_ONLY:
            loc = f"{self.src.filename}:{self.src.line_of(node)}"
            raise GradientError(f"{loc}: {builtin.name}() has exact first derivatives only (its eigenvalues or "
                                "singular values are differentiated with the decomposition's vectors held "
                                "constant, which is exact to first order, also where they repeat); a "
                                "Hessian-vector product through it would miss the vectors' derivatives")
        vals = [self.materialize(a, a.type) for a in args]
        if builtin.rebinds:
            value, updates = builtin.emit(vals, types, result, **static)
            for index, new in zip(builtin.rebinds, updates):
                self.rebind_argument(builtin, node, index, Val(types[index], new))
        else:
            value = builtin.emit(vals, types, result, **static)
        if isinstance(result, tuple):  # several results (axis, angle = quat_to_axis_angle(q))
            return tuple(Val(t, v) for t, v in zip(result, value))
        return None if result is None else Val(result, value)

    def rebind_argument(self, builtin, node, index: int, value: Val) -> None:
        """A call writes its argument ``index`` (Warp passes it by reference):
        the local it names takes the new value. A state given as an
        expression (``randf(rand_init(3))``) is a temporary."""
        arg = node.args[index] if isinstance(node, ast.Call) and index < len(node.args) else None
        if isinstance(arg, ast.Name) and isinstance(self.env.get(arg.id), Val):
            self.env[arg.id] = value
        elif not builtin.advances_state:
            raise self.error(f"{builtin.name}() writes its argument {index + 1}: pass a local variable there",
                             node)


def _is_host_array(callee) -> bool:
    """Whether ``callee`` is adjit.array (or array1d .. array4d), the host's constructor."""
    from ...runtime.array import _ArrayName
    return isinstance(callee, _ArrayName)


def _host_zeros():
    """adjit.zeros, which in a kernel makes a fixed-size local array (Warp's
    zeros builtin); imported late (the runtime imports the compiler)."""
    from ...runtime.array import zeros
    return zeros
