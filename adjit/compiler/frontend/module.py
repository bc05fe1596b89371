"""ModuleBuilder: one MLIR module, a kernel and the device functions it calls."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from ... import types as T
from ...errors import KernelError, KernelSyntaxError, KernelTypeError
from ...source import SourceInfo
from .. import by_reference as BR
from ..values import Val
from .helpers import ATTRIBUTE, has_tangent
from .function import FunctionBuilder


class ModuleBuilder:
    """Builds one MLIR module: a kernel and the device functions it calls."""

    def __init__(self, context: ir.Context, tangent_rules: bool = False, second_order: bool = False,
                 asserts: bool = False):
        """``tangent_rules``: for a tangent kernel (forward mode only): device
        functions with a ``func_jvp`` stay calls, for adjit-tangent to call
        their rule (otherwise they are inlined like any function).
        ``second_order``: for the tangent kernel of an adjoint (Hessian-vector
        products): builtins in ``FIRST_ORDER_ONLY`` are a GradientError.
        ``asserts``: ``assert`` statements are checked (debug mode; else they
        are skipped, condition and all, as Warp skips them outside debug mode)."""
        self.context = context
        self.tangent_rules = tangent_rules
        self.second_order = second_order
        self.asserts = asserts
        self.module = ir.Module.create(loc=ir.Location.unknown(context))
        self.functions: dict[tuple, tuple[str, list[T.Type]]] = {}
        self.used_functions: list = []
        self._building: set = set()  # device functions being emitted (to reject recursion)

    def add_kernel(self, pyfunc, arg_types: list[T.Type], name: str, no_grad=()) -> None:
        source = SourceInfo.of(pyfunc)
        builder = FunctionBuilder(self, pyfunc, source, arg_types, name, is_kernel=True)
        params = [a.arg for a in source.tree.args.args]
        for p in no_grad:
            if p not in params:
                raise KernelError(f"no_grad names '{p}', which is not a parameter of kernel "
                                  f"'{pyfunc.__name__}' ({', '.join(params)})")
        builder.no_grad = frozenset(no_grad)
        builder.build()

    def _add_custom_adjoint(self, fn, name, arg_types, result_types, node, caller) -> None:
        """Emits ``fn``'s hand-written adjoint (``@adjit.func_grad``) and links
        the callee to it; the callee is kept a call until differentiation."""
        grad = fn.custom_grad
        source = SourceInfo.of(grad)
        grad_name = f"{name}_custom_adjoint"
        builder = FunctionBuilder(self, grad, source, list(arg_types) + list(result_types), grad_name,
                                  is_kernel=False)
        builder.primal_params = [a.arg for a in SourceInfo.of(fn.pyfunc).tree.args.args]
        builder.build()
        self._link_rule(name, "custom_adjoint", grad_name)

    def _add_custom_tangent(self, fn, name, arg_types, result_types) -> None:
        """Emits ``fn``'s hand-written tangent rule (``@adjit.func_jvp``) and
        links the callee to it; the callee is kept a call."""
        rule = fn.custom_jvp
        rule_name = f"{name}_custom_tangent"
        floats = [t for t in arg_types if has_tangent(t)]
        builder = FunctionBuilder(self, rule, SourceInfo.of(rule), list(arg_types) + floats, rule_name,
                                  is_kernel=False)
        returned = builder.build()
        expected = [t for t in result_types if has_tangent(t)]
        if list(returned) != expected:
            raise builder.error(
                f"a func_jvp of '{fn.pyfunc.__name__}' returns the tangents of its float results "
                f"({', '.join(map(str, expected)) or 'none'}), got {', '.join(map(str, returned)) or 'none'}",
                builder.src.tree, KernelTypeError)
        self._link_rule(name, "custom_tangent", rule_name)

    def _link_rule(self, name: str, attribute: str, rule_name: str) -> None:
        """Keeps the function ``name`` a call and names its rule ``rule_name``
        in its attribute ``attribute`` (custom_adjoint or custom_tangent)."""
        callee = next(op for op in self.module.body.operations
                      if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name)
        callee.attributes["no_inline"] = ir.UnitAttr.get()
        callee.attributes[ATTRIBUTE[attribute]] = ir.FlatSymbolRefAttr.get(rule_name)

    def builtin_function(self, builtin, arg_types: list[T.Type], node, caller) -> tuple[str, list[T.Type]]:
        """A private func.func that applies ``builtin`` to its arguments (for
        ``grad(builtin)``), emitted once per argument types."""
        key = ("builtin", builtin.name, tuple(arg_types))
        if key not in self.functions:
            name = f"{builtin.name}_{len(self.functions) + len(self._building)}"
            with ir.InsertionPoint(self.module.body):
                fn = func.FuncOp(name, ir.FunctionType.get([t.mlir() for t in arg_types], []))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                value = caller.call_builtin(builtin, [Val(t, a) for t, a in zip(arg_types, block.arguments)], node)
                results = [] if value is None else list(value) if isinstance(value, tuple) else [value]
                func.ReturnOp([caller.materialize(v, v.type) for v in results])
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [t.mlir() for t in arg_types], [v.type.mlir() for v in results]))
            self.functions[key] = (name, [v.type for v in results])
        return self.functions[key]

    def device_function(self, fn, arg_types: list[T.Type], node, caller) -> tuple[str, list[T.Type]]:
        """Emits (once per argument types) the func.func for device function ``fn``."""
        key = (fn.pyfunc, tuple(arg_types))
        if key in self._building:
            raise caller.error(f"@adjit.func '{fn.pyfunc.__name__}' calls itself; recursion is not "
                               "supported", node, KernelSyntaxError)
        if key not in self.functions:
            source = SourceInfo.of(fn.pyfunc)
            # Unique even while other functions are still being emitted (nested calls).
            name = f"{fn.pyfunc.__name__}_{len(self.functions) + len(self._building)}"
            self.used_functions.append(fn)
            builder = FunctionBuilder(self, fn.pyfunc, source, arg_types, name, is_kernel=False)
            builder.ref_params = BR.reference_params(fn, arg_types)
            if builder.ref_params and (getattr(fn, "custom_grad", None) is not None or
                                       getattr(fn, "custom_jvp", None) is not None):
                raise caller.error(f"@adjit.func '{fn.pyfunc.__name__}' takes arguments by reference (ref[T] or a "
                                   "local array) and has a func_grad or func_jvp: a hand-written rule for it is "
                                   "not supported (its writes to the caller are differentiated through "
                                   "its body without one)", node, KernelTypeError)
            self._building.add(key)
            try:
                self.functions[key] = (name, builder.build())
            finally:
                self._building.discard(key)
            if getattr(fn, "custom_grad", None) is not None:
                self._add_custom_adjoint(fn, name, arg_types, self.functions[key][1], node, caller)
            # A func kept a call for its func_grad also carries its func_jvp
            # (grad(f) differentiates f's body in forward mode).
            if getattr(fn, "custom_jvp", None) is not None and (self.tangent_rules or fn.custom_grad is not None):
                self._add_custom_tangent(fn, name, arg_types, self.functions[key][1])
        return self.functions[key]
