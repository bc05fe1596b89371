"""Calls of @adjit.func device functions (overloads, keywords, defaults,
arguments by reference, struct and row arguments) and ``grad(f)(args)``."""
from __future__ import annotations

import ast

from mlir import ir

from ... import language
from ... import types as T
from ... import builtins as B
from ...dialects import adjit as adjit_d
from ...errors import KernelSyntaxError, KernelTypeError
from ...source import SourceInfo, parameter_types
from .. import by_reference as BR
from .. import local_arrays as LA
from .. import struct_arrays as SA
from .. import views as V
from ..values import StructRef, Val, literal
from .helpers import flat_types, has_tangent


def generic_array_takes(want, t) -> bool:
    """Whether ``want``, a generic array parameter of a @func
    (``array(dtype=Any)``, ``array(dtype=Float)``), takes an argument of type
    ``t``: an array of the same kind and ndim whose dtype its pattern (if
    any) matches. The call is then specialized to ``t``, as Warp does."""
    if not (isinstance(want, T.ArrayType) and want.dtype is None and type(t) is type(want)):
        return False
    return t.ndim == want.ndim and (want.dtype_pattern is None or want.dtype_pattern.matches(t.dtype))


class FuncCalls:
    """FunctionBuilder's calls of device functions and of grad(f)."""

    def bind_arguments(self, fn, args, kwargs, node, report: bool):
        """The arguments of a call of ``fn`` in parameter order (keywords
        placed, defaults filled in as literals); None if they do not fit
        (``report``: raise saying why)."""
        code = fn.pyfunc.__code__
        names = list(code.co_varnames[:code.co_argcount])
        defaults = fn.pyfunc.__defaults__ or ()

        def fail(why):
            if report:
                raise self.error(f"{fn.__name__}() {why}", node, KernelTypeError)
            return None
        if len(args) > len(names):
            return fail(f"takes {len(names)} arguments, got {len(args)}")
        bound = list(args) + [None] * (len(names) - len(args))
        for key, value in kwargs.items():
            if key not in names:
                return fail(f"has no parameter '{key}'")
            k = names.index(key)
            if bound[k] is not None:
                return fail(f"got parameter '{key}' twice")
            bound[k] = value
        first_default = len(names) - len(defaults)
        for k, value in enumerate(bound):
            if value is not None:
                continue
            if k < first_default:
                return fail(f"is missing argument '{names[k]}'")
            default = defaults[k - first_default]
            if default is None:
                return fail(f"is called without its argument '{names[k]}', whose default is None: a device "
                            "function's parameter cannot default to None (Warp 1.19 cannot build such a call "
                            "either); pass the argument, e.g. an array parameter of the kernel, which a launch "
                            "may give None (Warp's null array: false in 'if a:')")
            if not isinstance(default, (bool, int, float)):
                return fail(f"parameter '{names[k]}' has a default that is not a number or a bool ({default!r})")
            bound[k] = literal(default)
        return bound

    def choose_overload(self, fn, args, kwargs, node):
        """The overload of ``fn`` whose parameter types the arguments have (an
        exact match of every non-literal argument, literals by kind: an int
        literal prefers an int parameter; a generic parameter takes any type
        or those its pattern matches, and an overload with fewer generic
        parameters is preferred), and the arguments bound to it."""
        best, best_score, tied = None, (-1, -1), []
        bindings = {}
        for candidate in fn.overloads:
            bound = bindings[id(candidate)] = self.bind_arguments(candidate, args, kwargs, node, report=False)
            source = SourceInfo.of(candidate.pyfunc)
            patterns = {}
            declared = parameter_types(candidate.pyfunc, source, "device function", patterns)
            if bound is None or not all(isinstance(a, Val) for a in bound):
                continue
            score, generic = 0, 0
            for param, want, a in zip(source.tree.args.args, declared, bound):
                if want is None:  # generic: any type (typing.Any), or one its pattern matches
                    pattern = patterns.get(param.arg)
                    if pattern is not None and not pattern.matches(a.type):
                        break
                    generic += 1
                    continue
                if isinstance(want, T.Reference):  # by reference: the type exactly
                    if a.type != want.value_type:
                        break
                    continue
                if LA.is_local_array(a) or isinstance(want, T.LocalArrayType):
                    if not BR.accepts_local_array(want, a):
                        break
                    continue
                if a.is_literal:
                    if not isinstance(want, T.ScalarType):
                        break
                    score += (want.is_float == isinstance(a.literal, float))
                elif generic_array_takes(want, a.type):
                    generic += 1
                elif a.type != want:
                    break
            else:
                key = (-generic, score)
                if key > best_score:
                    best, best_score, tied = candidate, key, [candidate]
                elif key == best_score:
                    tied.append(candidate)
        if best is None:
            given = ", ".join([self.describe(a) for a in args] + [f"{k}={self.describe(v)}" for k, v in kwargs.items()])
            options = "; ".join("(" + ", ".join(str(t) for t in parameter_types(
                o.pyfunc, SourceInfo.of(o.pyfunc), "device function")) + ")" for o in fn.overloads)
            raise self.error(f"no overload of {fn.__name__}() takes ({given}); its overloads take {options}",
                             node, KernelTypeError)
        if len(tied) > 1:
            raise self.error(f"the call of {fn.__name__}() matches {len(tied)} overloads equally; give the "
                             "literal arguments a type (e.g. float(1))", node, KernelTypeError)
        return best, bindings[id(best)]

    def bind_call(self, fn, args, kwargs, node, patterns=None):
        """(the overload of ``fn`` the call takes, its arguments in parameter
        order, its declared parameter types); ``patterns`` gets the generic
        parameters' patterns by name."""
        if len(fn.overloads) > 1:
            fn, args = self.choose_overload(fn, args, kwargs, node)
        else:
            args = self.bind_arguments(fn, args, kwargs, node, report=True)
        declared = parameter_types(fn.pyfunc, SourceInfo.of(fn.pyfunc), "device function", patterns)
        if len(declared) != len(args):
            raise self.error(f"{fn.pyfunc.__name__}() takes {len(declared)} arguments, got {len(args)}", node)
        return fn, args, declared

    def call_function(self, fn, args, node, kwargs=None):
        kwargs = kwargs or {}
        patterns = {}
        fn, args, declared = self.bind_call(fn, args, kwargs, node, patterns)
        patterns = [patterns.get(p.arg) for p in SourceInfo.of(fn.pyfunc).tree.args.args]
        arg_types = []
        vals = []
        nodes = BR.argument_nodes(fn, node) if isinstance(node, ast.Call) else [None] * len(args)
        refs = []  # (argument expression or None, type): assigned the callee's final value
        for i, (want, a) in enumerate(zip(declared, args)):
            if BR.is_by_reference(want, a, fn, i):
                if patterns[i] is not None and not patterns[i].matches(a.type):
                    raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}() must be {patterns[i]}, got "
                                     f"{a.type}", node, KernelTypeError)
                param_t, param_vals = BR.pass_argument(self, fn, i, want, a, nodes[i], node)
                arg_types.append(param_t)
                vals += param_vals
                assignable = nodes[i] is not None and BR._not_assignable(self, nodes[i]) is None
                refs.append((nodes[i] if assignable else None, param_t))
                continue
            if isinstance(want, T.Reference):
                raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}() is passed by reference", node)
            if V.is_view(a):  # a row: the callee is specialized to it (its array and leading indices)
                param_t, param_vals = V.parameter(self, fn, a, want, i, node)
                arg_types.append(param_t)
                vals += param_vals
                continue
            if isinstance(a, SA.StructArrayRef) and (want is None or want == a.type):
                arg_types.append(a.type)  # an array of structs travels as its field arrays
                vals += [leaf.value for _, leaf in SA.leaves(self, a)]
                continue
            if isinstance(a, StructRef) and (want is None or want is a.type):
                # a struct travels as its fields (as a kernel's struct parameter)
                arg_types.append(a.type)
                for path, _ in a.type.leaves(a.prefix):
                    if path not in self.env:
                        raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}(): its field "
                                         f"'{path[len(a.prefix) + 1:]}' has no array", node)
                    leaf = self.env[path]
                    vals.append(self.materialize(leaf, leaf.type))
                continue
            if not isinstance(a, Val):
                raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}() is not a value"
                                 + (f" of type {want}" if want is not None else ""), node)
            if want is None:
                if patterns[i] is not None and not patterns[i].matches(a.type):
                    raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}() must be {patterns[i]}, got "
                                     f"{a.type}", node, KernelTypeError)
                want = a.type
            elif generic_array_takes(want, a.type):  # array(dtype=Any): specialized to the argument's array
                want = a.type
            if a.is_literal or a.type == want:
                arg_types.append(want)
            else:
                raise self.error(f"argument {i + 1} of {fn.pyfunc.__name__}() must be {want}, got {a.type}",
                                 node)
            vals.append(self.materialize(self.coerce(a, want, node), want))
        if refs:
            BR.check_aliasing(self, fn, declared, args, nodes, node)
        # The callee is emitted at module level, outside the current insertion point.
        name, results = self.mb.device_function(fn, arg_types, node, self)
        ref_types = BR.out_types([(None, t) for _, t in refs])
        call = adjit_d.CallOp([t.mlir() for t in flat_types(results) + ref_types], ir.FlatSymbolRefAttr.get(name),
                              vals)
        values = list(call.results)
        if not getattr(fn, "differentiable", True):
            values = [adjit_d.StopGradientOp(v.type, v).result for v in values]
        outs = []
        for t in results:  # a returned struct: a new struct local holding its fields
            if isinstance(t, T.StructType):
                ref = self.new_struct(t, node)
                for path, _ in t.leaves(ref.prefix):
                    self.env[path] = Val(self.env[path].type, values.pop(0))
                outs.append(ref)
            else:
                outs.append(Val(t, values.pop(0)))
        BR.write_back(self, refs, values, node)  # the by-reference arguments take their new values
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def grad_of(self, node: ast.Call) -> language.GradWrapper:
        """``grad(f)``: f must name an @func or a builtin outside the kernel."""
        if len(node.args) != 1 or node.keywords or not self.is_static(node.args[0]):
            raise self.error("grad() takes one @adjit.func or builtin, by name", node, KernelSyntaxError)
        target = self.resolve_static(node.args[0])
        try:
            return language.grad(target)
        except TypeError as e:
            raise self.error(str(e), node) from None

    def emit_grad(self, target, node: ast.Call):
        """``grad(f)(args)``: the derivative of f's float scalar result with
        respect to each (float) argument. A func with a func_grad gets it
        called with a unit adjoint; otherwise adjit.grad_call, which
        adjit-expand-grad-calls replaces by f's forward-mode derivative."""
        label = f"grad({getattr(target, '__name__', None) or target.name})"
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error(f"{label}() takes its arguments written out (no * or ** unpacking)", node,
                             KernelSyntaxError)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if isinstance(target, B.Builtin):
            if kwargs:
                raise self.error(f"{label}() takes positional arguments only", node, KernelSyntaxError)
            if target.array_args or target.rebinds or target.static_params or target.operator is not None:
                raise self.error(f"{label}: grad() differentiates builtins of values only; "
                                 f"{target.name}() is not one", node)
            declared = [None] * len(args)
        else:
            fn, args, declared = self.bind_call(target, args, kwargs, node)
            if any(BR.is_by_reference(want, a) for want, a in zip(declared, args)):
                raise self.error(f"{label}: {fn.pyfunc.__name__}() takes an argument by reference (ref[T] or a "
                                 "local array); grad() differentiates functions of values only", node)
        anchor = next((a.type for a in args if isinstance(a, Val) and not a.is_literal
                       and has_tangent(a.type)), T.float32)
        vals, types = [], []
        for k, (want, a) in enumerate(zip(declared, args)):
            if not isinstance(a, Val):
                raise self.error(f"{label}: argument {k + 1} is not a value", node)
            t = want or (T.scalar_of(anchor) if a.is_literal and isinstance(a.type, T.ScalarType) else a.type)
            if not (isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)) and has_tangent(t)):
                raise self.error(f"{label}: argument {k + 1} is {t}; grad() differentiates with respect to "
                                 "float scalars, vectors and matrices only", node)
            if not a.is_literal and a.type != t:
                raise self.error(f"{label}: argument {k + 1} must be {t}, got {a.type}", node)
            types.append(t)
            vals.append(self.materialize(self.coerce(a, t, node), t))
        if isinstance(target, B.Builtin):
            name, results = self.mb.builtin_function(target, types, node, self)
        else:
            name, results = self.mb.device_function(fn, types, node, self)
        if len(results) != 1 or not isinstance(results[0], T.ScalarType) or not results[0].is_float:
            got = ", ".join(map(str, results)) or "nothing"
            raise self.error(f"{label}: grad() needs a function of one float scalar result, this one returns "
                             f"{got}", node)
        if not isinstance(target, B.Builtin) and fn.custom_grad is not None:
            one = self.materialize(literal(1.0), results[0])
            call = adjit_d.CallOp([t.mlir() for t in types], ir.FlatSymbolRefAttr.get(f"{name}_custom_adjoint"),
                                  vals + [one])
        else:
            call = adjit_d.GradCallOp([t.mlir() for t in types], ir.FlatSymbolRefAttr.get(name), vals)
        outs = tuple(Val(t, r) for t, r in zip(types, call.results))
        return outs[0] if len(outs) == 1 else outs
