"""Python AST -> adjit dialect.

Python locals become SSA values (``b = a`` is a rename) and every component
write on a local vector/matrix is a functional ``adjit.insert``, so aliases
keep their values. Control flow becomes ``scf`` ops whose results carry the
locals assigned inside them. Everything is type-checked here, before any IR
is built, and every op carries the Python file:line:col as its location.
"""
from __future__ import annotations

import ast
import builtins
import itertools
import math
import re

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, scf, vector as vector_d
from mlir.dialects import math as math_d

from .. import _adjit, language
from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import GradientError, KernelError, KernelNameError, KernelSyntaxError, KernelTypeError
from ..source import OPERATOR_FUNCS as _OPERATOR_FUNCS, Scope, SourceInfo, Unresolved, parameter_types
from .. import builtins as B
from . import indexed_arrays as IA
from . import by_reference as BR
from . import local_arrays as LA
from . import slices as S
from . import struct_arrays as SA
from . import views as V
from .desugar import (ZeroValue, always_returns, assigned_names, build_loop_return, build_returning_loop,
                      falls_off, has_jump, loop_result_value, lower_loop_jumps, lower_loop_returns,
                      normalize_returns, unrolled_jumps)
from .values import (StructRef, Val, constant, constant_array, from_index, from_storage, integer_divide, literal,
                     splat, storage_type, stored_as_bytes, to_index, to_storage)


class _ArrayShape:
    """``x.shape`` inside a kernel: only indexable by a constant."""

    def __init__(self, array: Val):
        self.array = array


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
        callee = next(op for op in self.module.body.operations
                      if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name)
        callee.attributes["no_inline"] = ir.UnitAttr.get()
        callee.attributes[_ATTRIBUTE["custom_adjoint"]] = ir.FlatSymbolRefAttr.get(grad_name)

    def _add_custom_tangent(self, fn, name, arg_types, result_types) -> None:
        """Emits ``fn``'s hand-written tangent rule (``@adjit.func_jvp``) and
        links the callee to it; the callee is kept a call."""
        rule = fn.custom_jvp
        rule_name = f"{name}_custom_tangent"
        floats = [t for t in arg_types if _has_tangent(t)]
        builder = FunctionBuilder(self, rule, SourceInfo.of(rule), list(arg_types) + floats, rule_name,
                                  is_kernel=False)
        returned = builder.build()
        expected = [t for t in result_types if _has_tangent(t)]
        if list(returned) != expected:
            raise builder.error(
                f"a func_jvp of '{fn.pyfunc.__name__}' returns the tangents of its float results "
                f"({', '.join(map(str, expected)) or 'none'}), got {', '.join(map(str, returned)) or 'none'}",
                builder.src.tree, KernelTypeError)
        callee = next(op for op in self.module.body.operations
                      if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name)
        callee.attributes["no_inline"] = ir.UnitAttr.get()
        callee.attributes[_ATTRIBUTE["custom_tangent"]] = ir.FlatSymbolRefAttr.get(rule_name)

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


def flat_types(types) -> list:
    """Types as a function signature has them: a struct as its value fields."""
    out = []
    for t in types:
        out += [ft for _, ft in t.leaves("")] if isinstance(t, T.StructType) else [t]
    return out


def _has_tangent(t) -> bool:
    """Float scalars, vectors and matrices carry tangents (as adjit-tangent's
    active types)."""
    scalar = T.scalar_of(t)
    return scalar is not None and scalar.is_float


#: The builtins that take bool vectors and matrices (they move components
#: around; the others compute with them, which bools do not support).
_TAKE_BOOL_COMPOSITES = frozenset(("transpose", "get_diag", "stop_gradient", "where", "select", "matrix_from_rows",
                                   "matrix_from_cols", "diag"))

#: Bitwise operators (integers; & | ^ also bools).
_BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)

#: Integer division ops: defined for every input (values.integer_divide).
_INTEGER_DIVISIONS = {ast.Div: arith.DivSIOp, ast.FloorDiv: arith.FloorDivSIOp, ast.Mod: arith.RemSIOp}

#: The names of the attributes the frontend sets (the dialect owns them).
_ATTRIBUTE = _adjit.ATTRIBUTE_NAMES

_CMP_F = {ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt", ast.GtE: "oge", ast.Eq: "oeq", ast.NotEq: "une"}
_CMP_I = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}
_CMPF_PRED = {n: int(getattr(arith.CmpFPredicate, n.upper())) for n in ("oeq", "ogt", "oge", "olt", "ole", "une")}
_CMPI_PRED = {n: int(getattr(arith.CmpIPredicate, n)) for n in ("eq", "ne", "slt", "sle", "sgt", "sge",
                                                                  "ult", "ule", "ugt", "uge")}
_CMPI_PREDICATE_ULT = int(arith.CmpIPredicate.ult)


class FunctionBuilder:
    """Builds one func.func (a kernel or a device function) from Python."""

    def __init__(self, module: ModuleBuilder, pyfunc, source: SourceInfo, arg_types, name, is_kernel):
        self.mb = module
        self.pyfunc = pyfunc
        self.src = source
        self.arg_types = list(arg_types)
        self.name = name
        self.is_kernel = is_kernel
        self.env: dict[str, Val] = {}
        self.node: ast.AST = source.tree
        self.return_types: list[T.Type] | None = None
        #: The types a return gives, a struct as its StructType (it travels as its fields).
        self.return_layout: list[T.Type] | None = None
        #: For a custom adjoint (func_grad): the primal function's parameter
        #: names; ``adjoint[p] += ...`` accumulates into them.
        self.primal_params: list[str] | None = None
        self.adjoint_acc: dict[str, Val] = {}
        #: Kernel parameters whose reads carry no gradient (``no_grad``).
        self.no_grad: frozenset = frozenset()
        #: How many coordinates ``tid()`` returns where it is being called
        #: (``i, j = tid()`` asks for two).
        self.tid_count = 1
        #: Loops lowered so far (their break/continue flags get unique names).
        self.loops_lowered = 0
        self.scope = Scope(pyfunc)
        #: (name, type) of the parameters passed by reference (ref[T], local
        #: arrays): every return also gives their final values (by_reference).
        self.ref_params: list = []

    # --- diagnostics and locations -----------------------------------------

    def error(self, msg: str, node=None, cls=KernelTypeError):
        node = node or self.node
        return cls(msg, self.src.filename, self.src.line_of(node), self.src.col_of(node),
                   self.src.source_line(node), self.src.qualname)

    def loc(self, node) -> ir.Location:
        return ir.Location.file(self.src.filename, self.src.line_of(node), self.src.col_of(node) + 1)

    # --- entry ---------------------------------------------------------------

    def build(self) -> list[T.Type]:
        tree = self.src.tree
        params = [a.arg for a in tree.args.args]
        if tree.args.vararg or tree.args.kwarg or tree.args.kwonlyargs or (tree.args.defaults and self.is_kernel):
            raise self.error("kernel parameters must be plain positional names, and device function "
                             "parameters positional names with optional number defaults", tree,
                             KernelSyntaxError)
        if len(params) != len(self.arg_types):
            raise self.error(f"expects {len(params)} arguments, got {len(self.arg_types)}", tree)
        with self.mb.context, self.loc(tree):
            for node in ast.walk(tree) if self.is_kernel else ():
                if isinstance(node, ast.Return) and node.value is not None:
                    raise self.error("a kernel cannot return a value", node, KernelSyntaxError)
            body = lower_loop_returns(tree.body)
            zero_type = None if self.is_kernel else self.declared_value_result()
            if zero_type is not None and any(isinstance(n, ast.Return) and n.value is not None
                                             for s in body for n in ast.walk(s)):
                body = falls_off(body, zero_type)
            body = normalize_returns(body)
            if self.is_kernel:
                return self._build_kernel(params, body)
            return self._build_device_function(params, body)

    def declared_value_result(self):
        """The declared result type (``-> float``, ``-> wp.vec3``) of a device
        function when it is a scalar, vector or matrix type, whose zero it
        returns if it falls off its end (as Warp); else None."""
        ann = getattr(self.pyfunc, "__annotations__", {}).get("return")
        if ann is None:
            return None
        if isinstance(ann, str):
            try:
                ann = eval(ann, self.pyfunc.__globals__)
            except Exception:
                return None
        try:
            t = T.value_type_of(ann)
        except TypeError:
            return None
        ok = isinstance(t, T.ScalarType) or type(t) in (T.VectorType, T.MatrixType)
        return t if ok else None

    def expr_ZeroValue(self, node):
        return Val(node.value_type, constant(node.value_type, 0))

    def _build_kernel(self, params, body):
        # A struct parameter is one argument per field ("s.x"), as Kernel.arg_names
        # (an array of structs: one array per field, "a.x").
        leaves = []
        for name, t in zip(params, self.arg_types):
            leaves += t.leaves(name) if isinstance(t, (T.StructType, T.StructArrayType, T.IndexedArrayType)) \
                else [(name, t)]
        fn_type = ir.FunctionType.get([t.mlir() for _, t in leaves], [])
        with ir.InsertionPoint(self.mb.module.body):
            fn = func.FuncOp(self.name, fn_type)
        fn.attributes[_ATTRIBUTE["kernel"]] = ir.UnitAttr.get()
        fn.attributes[_ATTRIBUTE["arg_names"]] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n, _ in leaves])
        block = fn.add_entry_block()
        for (name, t), arg in zip(leaves, block.arguments):
            self.env[name] = Val(t, arg)
        for name, t in zip(params, self.arg_types):
            if isinstance(t, T.StructType):
                self.declare_struct(StructRef(t, name))
        body = SA.bind_parameters(self, params, body)  # a[i].x -> the field array a.x, element i
        body = IA.bind_parameters(self, params, body)  # ia[i] -> ia's data at ia.idx0[i]
        with ir.InsertionPoint(block):
            returned = self.visit_block(body)
            if returned:
                raise self.error("a kernel cannot return a value", self.node, KernelSyntaxError)
            func.ReturnOp([])
        return []

    def _build_device_function(self, params, body):
        if not always_returns(body) and any(isinstance(n, ast.Return) and n.value is not None
                                             for s in body for n in ast.walk(s)):
            raise self.error("a device function that returns a value must return it on every path (or declare "
                             "a scalar, vector or matrix result type, -> float, to return its zero where it falls "
                             "off the end, as Warp)", self.src.tree, KernelSyntaxError)
        # Build into a function of placeholder result type, then fix the type
        # once the returns are known. A struct parameter is one per field.
        leaves = []
        for name, t in zip(params, self.arg_types):
            leaves += t.leaves(name) if isinstance(t, (T.StructType, V.RowViewType, T.StructArrayType)) \
                else [(name, t)]
        fn_type = ir.FunctionType.get([t.mlir() for _, t in leaves], [])
        with ir.InsertionPoint(self.mb.module.body):
            fn = func.FuncOp(self.name, fn_type)
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.add_entry_block()
        for (name, t), arg in zip(leaves, block.arguments):
            self.env[name] = Val(t, arg)
        for name, t in zip(params, self.arg_types):
            if isinstance(t, T.StructType):
                self.declare_struct(StructRef(t, name))
        V.bind_parameters(self, params, self.arg_types)  # rows given to this specialization
        body = SA.bind_parameters(self, params, body)  # a[i].x -> the field array a.x, element i
        with ir.InsertionPoint(block):
            returned = self.visit_block(body)
            if returned is None:
                self.node = self.src.tree
                returned = BR.final_values(self)
            by_reference = BR.out_types(self.ref_params)
            returned, given_back = returned[:len(returned) - len(by_reference)], returned[len(returned) -
                                                                                        len(by_reference):]
            if self.primal_params is not None:
                # A custom adjoint returns the adjoint of each float primal parameter.
                if returned:
                    raise self.error("a func_grad returns nothing; accumulate with "
                                     "adjit.adjoint[arg] += ...", self.src.tree, KernelSyntaxError)
                returned = []
                for p, t in zip(self.primal_params, self.arg_types):
                    scalar = T.scalar_of(t)
                    if isinstance(scalar, T.ScalarType) and scalar.is_float:
                        returned.append(self.adjoint_acc.get(p) or Val(t, constant(t, 0)))
            # A returned struct travels as its value fields (return_layout).
            self.return_types = [v.type for v in returned] if self.return_layout is None or \
                self.primal_params is not None else self.return_layout
            func.ReturnOp([self.materialize(v, v.type) for v in returned + given_back])
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([t.mlir() for _, t in leaves],
                                [t.mlir() for t in flat_types(self.return_types) + by_reference]))
        return self.return_types

    def returned_values(self, items, node) -> list[Val]:
        """The values a ``return`` gives, a struct as its value fields; the
        layout (types, a struct as its StructType) is kept in return_layout,
        the same for every return of the function."""
        layout, flat = [], []
        for v in items:
            if isinstance(v, StructRef):
                leaves = v.type.leaves(v.prefix)
                if any(isinstance(ft, T.ArrayType) for _, ft in leaves):
                    raise self.error(f"returning a {v.type.name} struct, which has array fields, is not supported "
                                     "(return its value fields, or pass the struct in)", node, KernelTypeError)
                layout.append(v.type)
                flat += [self.concrete(self.env[path]) for path, _ in leaves]
            else:
                flat.append(self.concrete(v))
                layout.append(flat[-1].type)
        shape = [t if isinstance(t, T.StructType) else None for t in layout]
        if self.return_layout is not None and shape != [t if isinstance(t, T.StructType) else None
                                                        for t in self.return_layout]:
            raise self.error("the returns of this function give different types: "
                             f"{', '.join(map(str, layout))} here, {', '.join(map(str, self.return_layout))} "
                             "before", node, KernelTypeError)
        if self.return_layout is None:
            self.return_layout = layout
        return flat

    # --- statements ------------------------------------------------------------

    def visit_block(self, stmts) -> list[Val] | None:
        """Emits statements; returns the returned values if the block returns."""
        for stmt in stmts:
            self.node = stmt
            with self.loc(stmt):
                if isinstance(stmt, ast.Return):
                    if stmt.value is None:
                        return BR.final_values(self)
                    value = self.expr(stmt.value)
                    return self.returned_values(value if isinstance(value, tuple) else (value,), stmt) + \
                        BR.final_values(self)
                if isinstance(stmt, ast.If):
                    returned = self.stmt_If(stmt)
                    if returned is not None:
                        return returned
                    continue
                method = getattr(self, "stmt_" + type(stmt).__name__, None)
                if method is None:
                    raise self.error(f"'{type(stmt).__name__}' statements are not supported in kernels",
                                     stmt, KernelSyntaxError)
                try:
                    method(stmt)
                except T.NotInKernelsError as e:  # a host-only vector or matrix type
                    raise self.error(str(e), stmt, KernelTypeError) from None
        return None

    # A return inside a loop, lowered by desugar.lower_loop_returns.
    stmt_ReturningLoop = build_returning_loop
    stmt_LoopReturn = build_loop_return
    expr_LoopResultValue = loop_result_value

    def stmt_Pass(self, stmt):
        pass

    def stmt_Assert(self, stmt):
        """``assert cond[, "message"]``: in debug mode a check that reports a
        false ``cond`` after the launch as a KernelAssertionError naming the
        line and the thread, as a failed bounds check is reported (the
        thread goes on); otherwise nothing (Warp checks asserts in debug mode
        only)."""
        what = f"assert {ast.unparse(stmt.test)}"
        if stmt.msg is not None:
            if not (isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str)):
                raise self.error("an assert's message in a kernel must be a string literal", stmt.msg,
                                 KernelSyntaxError)
            what += f", {stmt.msg.value!r}"
        if not self.mb.asserts:
            return
        holds = self.condition(stmt.test)
        index = ir.IndexType.get()
        zero, one = arith.ConstantOp(index, 0).result, arith.ConstantOp(index, 1).result
        # Index 1 of an extent of 1 while the condition is false: the check reports it.
        adjit_d.CheckIndexOp(arith.SelectOp(holds, zero, one).result, one, what)

    def stmt_Expr(self, stmt):
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring
        self.expr(stmt.value)

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            raise self.error("chained assignment (a = b = c) is not supported", stmt, KernelSyntaxError)
        target = stmt.targets[0]
        for t in target.elts if isinstance(target, ast.Tuple) else [target]:
            if isinstance(t, ast.Name) and any(n == t.id and isinstance(pt, T.LocalArrayType)
                                               for n, pt in self.ref_params):
                raise self.error(f"cannot rebind the local array parameter '{t.id}' (the caller's array, "
                                 "passed by reference): write its elements", t)
        # `i, j = tid()` asks for as many coordinates as there are targets.
        self.tid_count = len(target.elts) if isinstance(target, ast.Tuple) else 1
        try:
            value = self.expr(stmt.value)
        finally:
            self.tid_count = 1
        self.assign(target, value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is None:
            raise self.error("a declaration needs a value", stmt, KernelSyntaxError)
        value = self.expr(stmt.value)
        ann = self.resolve_static(stmt.annotation)
        try:
            want = T.value_type_of(ann)
        except TypeError:
            raise self.error(f"{ann!r} is not a kernel value type", stmt.annotation) from None
        self.assign(stmt.target, self.coerce(value, want, stmt.value))

    def stmt_AugAssign(self, stmt):
        target = stmt.target
        if self.primal_params is not None and isinstance(target, ast.Subscript) and \
                self.is_static(target.value):
            if self.resolve_static(target.value) is language.adjoint:
                return self.accumulate_adjoint(stmt)
        if S.has_slice(target) and not LA.is_local_array(self.lookup_local(target.value)):
            return S.aug_assign(self, stmt)  # v[1:3] += w
        bitwise = {ast.BitAnd: "AtomicAndOp", ast.BitOr: "AtomicOrOp", ast.BitXor: "AtomicXorOp"}
        if type(stmt.op) in bitwise and self.array_element_target(target) is not None:
            # a[i] &= v (|=, ^=) on an array is an atomic and (or, xor), as in Warp.
            array, indices, position, elem_t = self.array_element_target(target)
            scalar = T.scalar_of(elem_t)
            if not (isinstance(scalar, T.ScalarType) and scalar.is_int and not scalar.is_bool and scalar.bits >= 32):
                raise self.error(f"{self.op_name(stmt.op)}= on an array element needs 32- or 64-bit integers, got "
                                 f"{elem_t}", stmt, KernelTypeError)
            v = self.materialize(self.coerce(self.expr(stmt.value), elem_t, stmt.value), elem_t)
            getattr(adjit_d, bitwise[type(stmt.op)])(elem_t.mlir(), v, array.value, indices,
                                                    ir.DenseI64ArrayAttr.get(position))
            return
        if isinstance(stmt.op, (ast.Add, ast.Sub)):
            array_target = self.array_element_target(target)
            if array_target is not None:
                # a[i] += v on an array is an atomic add, as in Warp.
                array, indices, position, elem_t = array_target
                if elem_t == T.bool_:
                    raise self.error("+= and -= are not defined on bool array elements", stmt, KernelTypeError)
                value = self.coerce(self.expr(stmt.value), elem_t, stmt.value)
                v = self.materialize(value, elem_t)
                if isinstance(stmt.op, ast.Sub):
                    v = self.negate(Val(elem_t, v)).value
                adjit_d.AtomicAddOp(elem_t.mlir(), v, array.value, indices,
                                    position=ir.DenseI64ArrayAttr.get(position))
                return
        current = self.expr(target)
        value = self.binop(stmt.op, current, self.expr(stmt.value), stmt)
        self.assign(target, value)

    def accumulate_adjoint(self, stmt):
        """``adjit.adjoint[x] += e`` in a func_grad."""
        target = stmt.target
        if not isinstance(stmt.op, ast.Add) or not isinstance(target.slice, ast.Name) or \
                target.slice.id not in self.primal_params:
            raise self.error("in a func_grad, write adjit.adjoint[<argument>] += <value>", stmt,
                             KernelSyntaxError)
        name = target.slice.id
        t = self.arg_types[self.primal_params.index(name)]
        value = self.concrete(self.coerce(self.expr(stmt.value), t, stmt.value))
        old = self.adjoint_acc.get(name)
        self.adjoint_acc[name] = value if old is None else self.binop(ast.Add(), old, value, stmt)

    def stmt_If(self, stmt):
        cond = self.condition(stmt.test)
        assigned = sorted(assigned_names(stmt.body) | assigned_names(stmt.orelse))
        before = dict(self.env)

        def run(branch_stmts, block):
            self.env = dict(before)
            with ir.InsertionPoint(block):
                returned = self.visit_block(branch_stmts)
            return returned, self.env

        # Emit both branches into a result-less scf.if first; once the merged
        # locals (and their types) are known, move them into the final op.
        probe = scf.IfOp(cond, [], has_else=True)
        then_ret, then_env = run(stmt.body, probe.then_block)
        else_ret, else_env = run(stmt.orelse, probe.else_block)
        if (then_ret is None) != (else_ret is None):
            # normalize_returns leaves an if that returns on one path in tail
            # position, so falling off the other path ends the function: a bare return.
            given_back = len(BR.out_types(self.ref_params))
            if len(then_ret if then_ret is not None else else_ret) > given_back:
                raise self.error("a function that returns a value must return it on every path",
                                 stmt, KernelSyntaxError)
            # Falling off the end gives back the by-reference parameters too.
            if then_ret is None:
                self.env = then_env
                with ir.InsertionPoint(probe.then_block):
                    then_ret = BR.final_values(self)
            if else_ret is None:
                self.env = else_env
                with ir.InsertionPoint(probe.else_block):
                    else_ret = BR.final_values(self)

        if then_ret is not None:
            if len(then_ret) != len(else_ret) or any(
                    a.type != b.type for a, b in zip(then_ret, else_ret)):
                raise self.error("the branches return values of different types: "
                                 f"{[v.type for v in then_ret]} vs {[v.type for v in else_ret]}", stmt)
            then_vals = [v.value for v in then_ret]
            else_vals = [v.value for v in else_ret]
            result_types = [v.type for v in then_ret]
            merged = []
        else:
            merged = []
            structs = []  # struct locals bound on both paths: their fields merge
            views = {}  # row views bound on both paths: their leading indices merge
            expanded = []
            for name in assigned:
                t, e = then_env.get(name), else_env.get(name)
                if isinstance(t, StructRef) and isinstance(e, StructRef):
                    if t.type is not e.type:
                        raise self.error(f"'{name}' is a {t.type.name} in one branch and a {e.type.name} in "
                                         "the other", stmt)
                    structs.append(t)
                    expanded += [p for p, ft in t.type.leaves(name) if not isinstance(ft, T.ArrayType)]
                elif V.is_view(t) or V.is_view(e):
                    expanded += V.merge(self, name, t, e, stmt, views)
                else:
                    expanded.append(name)
            for name in expanded:
                t, e = then_env.get(name), else_env.get(name)
                if t is None or e is None or not isinstance(t, Val) or not isinstance(e, Val):
                    continue  # defined on one path only: not visible after the if
                # A literal takes the type of the value on the other path (`a = 1.0` for a float64 a).
                if t.type != e.type and t.is_literal != e.is_literal:
                    if t.is_literal:
                        t = then_env[name] = self.coerce(t, e.type, stmt)
                    else:
                        e = else_env[name] = self.coerce(e, t.type, stmt)
                if t.type != e.type:
                    raise self.error(f"'{name}' is {t.type} in one branch and {e.type} in the other", stmt)
                if t is e:
                    continue
                merged.append(name)
            then_vals, else_vals = [], []
            result_types = []
            for name in merged:
                tv, ev = then_env[name], else_env[name]
                with ir.InsertionPoint(probe.then_block):
                    then_vals.append(self.materialize(tv, tv.type))
                with ir.InsertionPoint(probe.else_block):
                    else_vals.append(self.materialize(ev, ev.type))
                result_types.append(tv.type)

        final = scf.IfOp(cond, [t.mlir() for t in result_types], has_else=True)
        for src, dst, vals in ((probe.then_block, final.then_block, then_vals),
                               (probe.else_block, final.else_block, else_vals)):
            for op in list(src.operations):
                dst.append(op.operation)
            with ir.InsertionPoint(dst):
                scf.YieldOp(vals)
        probe.operation.erase()

        self.env = dict(before)
        if then_ret is not None:
            return [Val(t, r) for t, r in zip(result_types, final.results)]
        for name, t, r in zip(merged, result_types, final.results):
            self.env[name] = Val(t, r)
        for ref in structs:
            self.declare_struct(ref)
        self.env.update(views)
        return None

    def unrolled_loop(self, stmt):
        """``for i in range(static(n))``: the body once per value, with ``i``
        that constant (as Warp unrolls it)."""
        bounds = []
        for a in stmt.iter.args:
            v = self.eval_static(a) if self.is_static_call(a) else self.expr(a)
            if isinstance(v, Val) and v.is_literal:
                v = v.literal
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise self.error("a loop over range(static(...)) needs constant integer bounds", a,
                                 KernelTypeError)
            bounds.append(int(v))
        values = range(*bounds)
        if len(values) > 1024:
            raise self.error(f"range(static(...)) unrolls to {len(values)} copies of the body; at most 1024",
                             stmt.iter)
        body = stmt.body
        if has_jump(body):  # each copy runs while no break was met
            self.loops_lowered += 1
            before, body = unrolled_jumps(stmt, self.loops_lowered)
            self.visit_block(before)
        for value in values:
            self.env[stmt.target.id] = literal(value)
            if self.visit_block(body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)

    def stmt_For(self, stmt):
        if stmt.orelse:
            raise self.error("for/else is not supported", stmt, KernelSyntaxError)
        if not isinstance(stmt.target, ast.Name):
            raise self.error("the loop variable must be a plain name", stmt.target, KernelSyntaxError)
        it = stmt.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and not it.keywords and 1 <= len(it.args) <= 3):
            raise self.error("only 'for i in range(...)' loops are supported", it, KernelSyntaxError)
        if any(self.is_static_call(a) for a in it.args):
            return self.unrolled_loop(stmt)
        if has_jump(stmt.body):
            return self.loop_with_jumps(stmt)
        bounds = [self.coerce(self.expr(a), T.int32, a) for a in it.args]
        if len(bounds) == 1:
            bounds = [literal(0)] + bounds
        start, stop = bounds[0], bounds[1]
        step = bounds[2] if len(bounds) == 3 else literal(1)
        if step.is_literal and step.literal == 0:
            raise self.error("range() step must not be zero", it)
        i32 = T.int32
        carried = self.carried_names(n for n in sorted(assigned_names(stmt.body)) if n != stmt.target.id)
        inits = [self.concrete(self.env[n]) for n in carried]

        if step.is_literal and step.literal > 0:
            lb = to_index(self.materialize(start, i32))
            ub = to_index(self.materialize(stop, i32))
            st = arith.ConstantOp(ir.IndexType.get(), step.literal).result
            loop = scf.ForOp(lb, ub, st, [v.value for v in inits])
            with ir.InsertionPoint(loop.body):
                induction = from_index(loop.induction_variable)
        else:
            # Any step: iterate k over the trip count, i = start + k*step.
            s, e, d = (self.materialize(v, i32) for v in (start, stop, step))
            zero = constant(i32, 0)
            pos = arith.CmpIOp(arith.CmpIPredicate.sgt, d, zero).result
            span = arith.SelectOp(pos, arith.SubIOp(e, s).result, arith.SubIOp(s, e).result).result
            mag = arith.SelectOp(pos, d, arith.SubIOp(zero, d).result).result
            trips = arith.CeilDivSIOp(span, mag).result
            trips = arith.MaxSIOp(trips, zero).result
            loop = scf.ForOp(arith.ConstantOp(ir.IndexType.get(), 0).result, to_index(trips),
                             arith.ConstantOp(ir.IndexType.get(), 1).result, [v.value for v in inits])
            with ir.InsertionPoint(loop.body):
                k = from_index(loop.induction_variable)
                induction = arith.AddIOp(s, arith.MulIOp(k, d).result).result

        before = dict(self.env)
        for name, arg, v in zip(carried, loop.inner_iter_args, inits):
            self.env[name] = Val(v.type, arg)
        self.env[stmt.target.id] = Val(i32, induction)
        with ir.InsertionPoint(loop.body):
            if self.visit_block(stmt.body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)
            outs = []
            for name, v in zip(carried, inits):
                now = self.env[name]
                if now.type != v.type and now.is_literal:
                    now = self.coerce(now, v.type, stmt)
                if now.type != v.type:
                    raise self.error(f"'{name}' changes type in the loop, from {v.type} to {now.type}", stmt)
                outs.append(self.materialize(now, v.type))
            scf.YieldOp(outs)
        self.env = before
        for name, v, r in zip(carried, inits, loop.results):
            self.env[name] = Val(v.type, r)
        self.bind_loop_variable_after(stmt.target.id, start, stop, step)

    def bind_loop_variable_after(self, name, start: Val, stop: Val, step: Val):
        """After ``for name in range(start, stop, step)``, ``name`` holds its
        last value, as in Python; after a loop that ran no iteration, its value
        from before the loop (the range's start if it had none)."""
        i32 = T.int32
        s, e, d = (self.materialize(v, i32) for v in (start, stop, step))
        zero, one = constant(i32, 0), constant(i32, 1)
        pos = arith.CmpIOp(arith.CmpIPredicate.sgt, d, zero).result
        span = arith.SelectOp(pos, arith.SubIOp(e, s).result, arith.SubIOp(s, e).result).result
        mag = arith.SelectOp(pos, d, arith.SubIOp(zero, d).result).result
        trips = arith.CeilDivSIOp(span, mag).result
        last = arith.AddIOp(s, arith.MulIOp(arith.SubIOp(trips, one).result, d).result).result
        ran = arith.CmpIOp(arith.CmpIPredicate.sgt, trips, zero).result
        previous = self.env.get(name)
        if previous is not None and previous.type == i32:
            otherwise = self.materialize(previous, i32)
        else:
            otherwise = s
        self.env[name] = Val(i32, arith.SelectOp(ran, last, otherwise).result)

    def stmt_While(self, stmt):
        if stmt.orelse:
            raise self.error("while/else is not supported", stmt, KernelSyntaxError)
        if has_jump(stmt.body):
            return self.loop_with_jumps(stmt)
        carried = self.carried_names(sorted(assigned_names(stmt.body)))
        inits = [self.concrete(self.env[n]) for n in carried]
        types = [v.type for v in inits]
        loop = scf.WhileOp([t.mlir() for t in types], [v.value for v in inits])
        before_block = loop.before.blocks.append(*[t.mlir() for t in types])
        after_block = loop.after.blocks.append(*[t.mlir() for t in types])
        outer = dict(self.env)
        for name, t, arg in zip(carried, types, before_block.arguments):
            self.env[name] = Val(t, arg)
        with ir.InsertionPoint(before_block):
            cond = self.condition(stmt.test)
            scf.ConditionOp(cond, list(before_block.arguments))
        self.env = dict(outer)
        for name, t, arg in zip(carried, types, after_block.arguments):
            self.env[name] = Val(t, arg)
        with ir.InsertionPoint(after_block):
            if self.visit_block(stmt.body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)
            outs = []
            for name, t in zip(carried, types):
                now = self.env[name]
                if now.type != t and now.is_literal:
                    now = self.coerce(now, t, stmt)
                if now.type != t:
                    raise self.error(f"'{name}' changes type in the loop, from {t} to {now.type}", stmt)
                outs.append(self.materialize(now, t))
            scf.YieldOp(outs)
        self.env = outer
        for name, t, r in zip(carried, types, loop.results):
            self.env[name] = Val(t, r)

    def loop_with_jumps(self, loop):
        """A loop with break/continue, as flag-guarded while-loop statements."""
        if isinstance(loop, ast.For) and loop.target.id not in self.env:
            # Bound before the loop, the loop variable is carried through it and
            # keeps its last value after it, as in Python (the range's start if
            # the loop ran no iteration).
            args = loop.iter.args
            start = args[0] if len(args) > 1 else ast.Constant(0)
            self.env[loop.target.id] = self.coerce(self.expr(start), T.int32, start)
        self.loops_lowered += 1
        if self.visit_block(lower_loop_jumps(loop, self.loops_lowered)) is not None:
            raise self.error("return inside a loop is not supported", loop, KernelSyntaxError)

    # --- assignment targets --------------------------------------------------

    def assign(self, target, value):
        if isinstance(target, ast.Tuple):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error("cannot unpack: the right-hand side does not have "
                                 f"{len(target.elts)} values", target)
            for t, v in zip(target.elts, value):
                self.assign(t, v)
            return
        if isinstance(value, tuple):
            raise self.error("cannot assign several values to one name", target)
        if S.has_slice(target) and not LA.is_local_array(self.lookup_local(target.value)):
            S.assign(self, target, value)  # v[1:3] = w, m[0, :2] = w: component writes
            return
        if isinstance(target, ast.Name) and V.is_view(value):
            V.bind(self, target.id, value)  # row = a[i]: a view of a's memory
            return
        if isinstance(target, ast.Name) and isinstance(value, StructRef):
            self.copy_struct(value, target.id)  # a struct is a value: b = a copies
            return
        if isinstance(target, ast.Name):
            if not isinstance(value, Val):
                raise self.error(f"cannot assign {value!r} to a local", target)
            value = BR.check_assigned(self, target, value)  # a ref parameter keeps its type
            if target.id in self.env and isinstance(self.env[target.id].type, T.ArrayType):
                raise self.error(f"cannot rebind the array '{target.id}'", target)
            self.env[target.id] = value
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and \
                LA.is_local_array(self.env.get(target.value.id)):
            # A local array element write: the whole array rebound, as a vector component write.
            local = self.env[target.value.id]
            element = self.concrete(self.coerce(value, local.type.dtype, target))
            self.env[target.value.id] = LA.write(self, local, target, element)
            return
        if isinstance(target, ast.Subscript) and isinstance(self.lookup_local(target.value), SA.StructArrayRef):
            SA.store(self, self.lookup_local(target.value), target, value)  # a[i] = s: every field
            return
        array_target = self.array_element_target(target)
        if array_target is not None:
            array, indices, position, elem_t = array_target
            v = to_storage(elem_t, self.materialize(self.coerce(value, elem_t, target), elem_t))  # bools: bytes
            if position:
                adjit_d.StoreComponentOp(v, array.value, indices, ir.DenseI64ArrayAttr.get(position))
            else:
                adjit_d.StoreOp(v, array.value, indices)
            return
        if isinstance(target, ast.Attribute) and isinstance(self.lookup_local(target.value), StructRef):
            self.assign_struct_field(self.lookup_local(target.value), target, value)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            # A component write on a local value: functional insert + rebind.
            base = self.expr(target.value)
            if not isinstance(base, Val) or not isinstance(base.type, (T.VectorType, T.MatrixType)):
                raise self.error("only vector/matrix locals and array elements can be assigned "
                                 "components", target)
            if _is_transform_part(base.type, target):
                self.assign(target.value, self.with_transform_part(base, target.attr, value, target))
                return
            position = self.component_index(base.type, target)
            dynamic = any(isinstance(p, Val) for p in position)
            comp_t = self.component_type(base.type, position)
            v = self.materialize(self.coerce(value, comp_t, target), comp_t)
            if dynamic:
                new = self.dynamic_insert(base, position, v, target).value
            else:
                new = adjit_d.InsertOp(base.type.mlir(), v, base.value, ir.DenseI64ArrayAttr.get(position)).result
            self.assign(target.value, Val(base.type, new))
            return
        raise self.error("unsupported assignment target", target, KernelSyntaxError)

    def array_element_target(self, target):
        """For `a[i]`, `a[i].x`, `a[i][k]`: (array, indices, position, element type), else None."""
        position: list[int] = []
        node = target
        # Peel component accesses off the outside of the target.
        comps = []
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if S.has_slice(node):
                return None  # a[i][1:3]: the element is loaded (or stored) whole
            base = node.value
            local = self.lookup_local(base)  # a name, or a struct's field (s.arr)
            access = V.element_access(self, node)  # row[j], a[i][j]: an element through a row view
            if access is not None or (isinstance(local, Val) and isinstance(local.type, T.ArrayType)
                                      and isinstance(node, ast.Subscript)):
                array, indices = access or (local, self.array_indices(local, node.slice, node))
                elem_t = array.type.dtype
                for comp in reversed(comps):
                    if _is_transform_part(self.component_type(elem_t, position), comp):
                        return None  # t.p / t.q of an element: the element is loaded and stored whole
                    part = self.component_index(elem_t if not position else
                                                self.component_type(array.type.dtype, position), comp)
                    if any(isinstance(p, Val) for p in part):
                        # A runtime component index: the element is loaded
                        # (or stored) whole, and the component selected.
                        return None
                    position += part
                comp_t = self.component_type(array.type.dtype, position)
                return array, indices, position, comp_t
            comps.append(node)
            node = base
        return None

    # --- expressions -----------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"'{type(node).__name__}' expressions are not supported in kernels",
                             node, KernelSyntaxError)
        with self.loc(node):
            return method(node)

    def expr_Slice(self, node):
        raise self.error("slices select components of vectors, quaternions, transforms and matrices (constant "
                         "bounds); arrays and local arrays are not sliced in kernels", node, KernelSyntaxError)

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float)):
            return literal(node.value)
        raise self.error(f"constant {node.value!r} is not a kernel value", node, KernelSyntaxError)

    def expr_Name(self, node):
        if node.id in self.env:
            return self.env[node.id]
        return self.static_value(self.resolve_static(node), node)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_Attribute(self, node):
        if self.is_static(node.value):
            return self.static_value(self.resolve_static(node), node)
        base = self.expr(node.value)
        if V.is_view(base):
            return V.attribute(self, base, node)  # row.shape
        if isinstance(base, Val) and isinstance(base.type, T.ArrayType):
            if node.attr == "shape":
                return _ArrayShape(base)
            raise self.error(f"arrays have no attribute '{node.attr}' in kernels", node)
        if LA.is_local_array(base):
            if node.attr == "shape":
                return tuple(literal(n) for n in base.type.shape)
            raise self.error(f"local arrays have no attribute '{node.attr}' in kernels", node)
        if isinstance(base, StructRef):
            return self.struct_field(base, node.attr, node)
        if isinstance(base, Val) and isinstance(base.type, T.TransformType) and node.attr in ("p", "q"):
            return self.transform_part(base, node.attr)
        if isinstance(base, Val) and isinstance(base.type, T.VectorType):
            position = self.component_position(base.type, node)
            return self.extract(base, position)
        raise self.error(f"'{node.attr}' is not an attribute of {self.describe(base)}", node)

    def expr_Subscript(self, node):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            shape = self.expr(node.value)
            if isinstance(shape, _ArrayShape):
                k = self.static_int(node.slice)
                if not 0 <= k < shape.array.type.ndim:
                    raise self.error(f"shape index {k} is out of range for a {shape.array.type.ndim}-d array",
                                     node)
                dim = adjit_d.DimOp(ir.IndexType.get(), shape.array.value,
                                    ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result
                return Val(T.int32, from_index(dim))
            if isinstance(shape, tuple):  # a local array's shape: constants
                k = self.static_int(node.slice)
                if not 0 <= k < len(shape):
                    raise self.error(f"shape index {k} is out of range for a {len(shape)}-d local array", node)
                return shape[k]
        base = self.expr(node.value)
        if LA.is_local_array(base):
            return LA.read(self, base, node)
        if isinstance(base, SA.StructArrayRef):
            return SA.load(self, base, node)  # s = a[i]: every field
        if V.takes(base, node):  # row[j], and a[i] of an n-d array (a view)
            return V.subscript(self, base, node)
        if isinstance(base, Val) and isinstance(base.type, T.ArrayType):
            indices = self.array_indices(base, node.slice, node)
            dtype = base.type.dtype
            loaded = adjit_d.LoadOp(storage_type(dtype), base.value, indices).result
            if stored_as_bytes(dtype):  # bools: bytes
                return Val(dtype, from_storage(dtype, loaded))
            return Val(dtype, self.no_grad_guard(base, loaded))
        if isinstance(base, Val) and isinstance(base.type, (T.VectorType, T.MatrixType)):
            if S.has_slice(node):
                return S.read(self, base, node)  # v[1:3], m[:, 1:]: constant bounds, as Warp's
            # Array element component read: a[i].x / a[i][k] -> load_component.
            arr = self.array_element_target(node)
            if arr is not None:
                array, indices, position, comp_t = arr
                loaded = adjit_d.LoadComponentOp(storage_type(comp_t), array.value, indices,
                                                 ir.DenseI64ArrayAttr.get(position)).result
                if stored_as_bytes(comp_t):
                    return Val(comp_t, from_storage(comp_t, loaded))
                return Val(comp_t, self.no_grad_guard(array, loaded))
            position = self.component_index(base.type, node)
            if any(isinstance(p, Val) for p in position):
                return self.dynamic_extract(base, position, node)
            return self.extract(base, position)
        raise self.error(f"{self.describe(base)} cannot be indexed", node)

    def no_grad_guard(self, array: Val, loaded: ir.Value) -> ir.Value:
        """Reads of a kernel argument marked no_grad carry no gradient."""
        if any(self.env.get(name) is not None and self.env[name].value == array.value
               for name in self.no_grad):
            return adjit_d.StopGradientOp(loaded.type, loaded).result
        return loaded

    def expr_BinOp(self, node):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        return self.unaryop(node.op, self.expr(node.operand), node)

    def unaryop(self, op, v, node):
        operand = getattr(node, "operand", node)
        if not isinstance(v, Val):
            raise self.error(f"unsupported operand {self.describe(v)}", node)
        if isinstance(op, ast.USub):
            if v.is_literal:
                return Val(v.type, None, -v.literal)
            return self.negate(v)
        if isinstance(op, ast.UAdd):
            return v
        if isinstance(op, ast.Not):
            c = self.to_bool(v, operand)
            return Val(T.bool_, arith.XOrIOp(c, constant(T.bool_, 1)).result)
        if isinstance(op, ast.Invert):
            if type(v.type) is T.VectorType and v.type.dtype.is_int:  # component-wise, as Warp's
                return Val(v.type, arith.XOrIOp(self.materialize(v, v.type), constant(v.type, -1)).result)
            if not isinstance(v.type, T.ScalarType) or not v.type.is_int or v.type.is_bool:
                raise self.error(f"~ needs an integer operand, got {self.describe(v)} (use `not` for bools)",
                                 node, KernelTypeError)
            if v.is_literal:
                return Val(v.type, None, ~v.literal)
            return Val(v.type, arith.XOrIOp(v.value, constant(v.type, -1)).result)
        raise self.error("unsupported unary operator", node, KernelSyntaxError)

    def expr_BoolOp(self, node):
        # Short-circuit, as in Python and Warp: `b` in `a and b` runs only
        # when `a` holds (its side effects, and its gradient).
        is_and = isinstance(node.op, ast.And)
        acc = self.to_bool(self.expr(node.values[0]), node.values[0])
        i1 = ir.IntegerType.get_signless(1)
        for value in node.values[1:]:
            branch = scf.IfOp(acc, [i1], has_else=True)
            evaluate, decided = (branch.then_block, branch.else_block) if is_and else \
                (branch.else_block, branch.then_block)
            with ir.InsertionPoint(evaluate):
                scf.YieldOp([self.to_bool(self.expr(value), value)])
            with ir.InsertionPoint(decided):
                scf.YieldOp([arith.ConstantOp(i1, 0 if is_and else 1).result])
            acc = branch.results[0]
        return Val(T.bool_, acc)

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                c = self.null_check(left, op, right_node, node)
                result = c if result is None else arith.AndIOp(result, c).result
                left = Val(T.bool_, c)
                continue
            right = self.expr(right_node)
            a, b = self.unify(left, right, node)
            if isinstance(a.type, (T.VectorType, T.MatrixType)) and isinstance(op, (ast.Eq, ast.NotEq)) \
                    and a.type == b.type:
                c = self.components_equal(a, b, isinstance(op, ast.NotEq))
                result = c if result is None else arith.AndIOp(result, c).result
                left = right
                continue
            if not isinstance(a.type, T.ScalarType):
                raise self.error(f"cannot compare {a.type} values" + (
                    " (vectors and matrices take == and != only)" if isinstance(a.type, (T.VectorType, T.MatrixType))
                    else ""), node)
            av, bv = self.materialize(a, a.type), self.materialize(b, b.type)
            kind = type(op)
            if kind not in _CMP_F:
                raise self.error("unsupported comparison", node, KernelSyntaxError)
            if a.type.is_float:
                c = arith.CmpFOp(_CMPF_PRED[_CMP_F[kind]], av, bv).result
            else:
                predicate = _CMP_I[kind]
                if a.type.is_unsigned:
                    predicate = predicate.replace("s", "u", 1) if predicate[0] == "s" else predicate
                c = arith.CmpIOp(_CMPI_PRED[predicate], av, bv).result
            result = c if result is None else arith.AndIOp(result, c).result
            left = right
        return Val(T.bool_, result)

    def components_equal(self, a: Val, b: Val, negate: bool) -> ir.Value:
        """a == b for vectors and matrices: every component equal (a NaN
        component is unequal); a != b is its negation."""
        t = a.type
        av, bv = self.materialize(a, t), self.materialize(b, t)
        if t.dtype.is_float:
            same = arith.CmpFOp(arith.CmpFPredicate.OEQ, av, bv).result
        else:
            same = arith.CmpIOp(arith.CmpIPredicate.eq, av, bv).result
        equal = all_components(same, t)
        if negate:
            true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
            return arith.XOrIOp(equal, true).result
        return equal

    def expr_IfExp(self, node):
        # Only the taken side runs, as in Python and Warp: the other side's
        # side effects do not happen and it passes no gradient (so
        # `sqrt(x) if x > 0.0 else 0.0` has gradient 0, not NaN, at x <= 0).
        # Both sides are emitted into a result-less scf.if first; once their
        # common type is known they move into the final op.
        cond = self.condition(node.test)
        probe = scf.IfOp(cond, [], has_else=True)
        with ir.InsertionPoint(probe.then_block):
            a = self.expr(node.body)
        with ir.InsertionPoint(probe.else_block):
            b = self.expr(node.orelse)
        a, b = self.unify(a, b, node)
        with ir.InsertionPoint(probe.then_block):
            then_value = self.materialize(a, a.type)
        with ir.InsertionPoint(probe.else_block):
            else_value = self.materialize(b, b.type)
        final = scf.IfOp(cond, [a.type.mlir()], has_else=True)
        for src, dst, value in ((probe.then_block, final.then_block, then_value),
                                (probe.else_block, final.else_block, else_value)):
            for op in list(src.operations):
                dst.append(op.operation)
            with ir.InsertionPoint(dst):
                scf.YieldOp([value])
        probe.operation.erase()
        return Val(a.type, final.results[0])

    def is_static_call(self, node) -> bool:
        """Whether ``node`` is ``static(expr)`` (adjit.static, wp.static)."""
        return isinstance(node, ast.Call) and self.is_static(node.func) and \
            self.resolve_static(node.func) is language.static

    def eval_static(self, node):
        """The value of ``static(expr)``: ``expr`` evaluated in the kernel's
        Python scope, where the only locals it may read are the constants of
        unrolled ``range(static(...))`` loops."""
        if len(node.args) != 1 or node.keywords:
            raise self.error("static() takes one expression", node, KernelSyntaxError)
        expr = node.args[0]
        unrolled = {}
        for name in {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}:
            if name in self.env:
                v = self.env[name]
                if not (isinstance(v, Val) and v.is_literal):
                    raise self.error(f"static() cannot read the kernel variable '{name}': its value is only "
                                     "known when the kernel runs", expr, KernelSyntaxError)
                unrolled[name] = v.literal
        namespace = dict(self.scope.namespace())
        namespace.update(unrolled)
        try:
            return eval(compile(ast.Expression(expr), self.src.filename, "eval"), namespace)
        except Exception as e:  # noqa: BLE001 (any error of the user's expression)
            raise self.error(f"static({ast.unparse(expr)}) raised {type(e).__name__}: {e}", expr) from None

    def expr_Call(self, node):
        if self.is_static_call(node):
            return self.static_value(self.eval_static(node), node)
        if self.is_static_call(node.func):  # static(table[k])(x): the callee chosen at compile time
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
        if isinstance(callee, B.Builtin):
            value_nodes, static = self.bind_static_params(callee, node)
            return self.call_builtin(callee, self.call_arguments(value_nodes), node, static)
        if callee is builtins.print:
            return self.emit_print(node)
        if callee is language.printf:
            return self.emit_printf(node)
        if callee is _host_zeros():
            return LA.make_zeros(self, node)
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
        raise self.error(f"'{ast.unparse(node.func)}' is not a builtin, type or @adjit.func", node)

    # --- print -------------------------------------------------------------

    def print_parts(self, value: Val, node) -> tuple[str, list]:
        """(printf format, scalar values) of one value: numbers, vectors as
        [x y z], matrices as [[a b] [c d]] (bools print as 1 and 0)."""
        t = value.type
        if isinstance(t, T.ScalarType):
            spec, v = _printf_scalar(t, self.materialize(value, t))
            return spec, [v]
        if isinstance(t, (T.VectorType, T.MatrixType)):
            v = self.materialize(value, t)
            if isinstance(t, T.VectorType):
                comps = [_printf_scalar(t.dtype, vector_d.ExtractOp(v, [], [k]).result) for k in range(t.length)]
                return "[" + " ".join(s for s, _ in comps) + "]", [c for _, c in comps]
            comps = [_printf_scalar(t.dtype, vector_d.ExtractOp(v, [], [r, c]).result)
                     for r in range(t.rows) for c in range(t.cols)]
            rows = ["[" + " ".join(s for s, _ in comps[r * t.cols:(r + 1) * t.cols]) + "]" for r in range(t.rows)]
            return "[" + " ".join(rows) + "]", [c for _, c in comps]
        raise self.error(f"print() takes numbers, vectors and matrices, got {t}", node)

    def emit_print(self, node):
        """Python's print(*args, sep=" ", end="\\n"): string literals and values."""
        options = {"sep": " ", "end": "\n"}
        for kw in node.keywords:
            if kw.arg not in options or not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                raise self.error("print() takes sep= and end= string literals only", kw, KernelSyntaxError)
            options[kw.arg] = kw.value.value
        pieces, values = [], []
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(arg.value.replace("%", "%%"))
                continue
            fmt, vals = self.print_parts(self.expr(arg), arg)
            pieces.append(fmt)
            values.extend(vals)
        fmt = options["sep"].replace("%", "%%").join(pieces) + options["end"].replace("%", "%%")
        adjit_d.PrintOp(fmt, values)
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)

    def emit_printf(self, node):
        """printf(format, *args): the format's conversions checked against the
        arguments (integers take d i u x X o c, floats f F e E g G a A; the
        length modifier is set from the argument's type)."""
        if node.keywords or not node.args or not (isinstance(node.args[0], ast.Constant)
                                                  and isinstance(node.args[0].value, str)):
            raise self.error("printf() takes a format string literal, then the values", node, KernelSyntaxError)
        fmt = node.args[0].value
        values = [self.expr(a) for a in node.args[1:]]
        specs = list(_PRINTF_CONVERSION.finditer(fmt))
        for m in specs:
            if m.group("conv") is None:
                raise self.error(f"printf() conversion '{m.group(0)}' is not supported (integers: d i u x X o c; "
                                 "floats: f F e E g G a A; %% for %)", node, KernelTypeError)
        if fmt.count("%") != sum(2 if m.group("conv") == "%" else 1 for m in specs):
            raise self.error("printf() format ends in a lone '%'", node, KernelTypeError)
        conversions = [m for m in specs if m.group("conv") != "%"]
        if len(conversions) != len(values):
            raise self.error(f"printf() format has {len(conversions)} conversion(s) for {len(values)} value(s)",
                             node, KernelTypeError)
        out, last, scalars = [], 0, []
        it = iter(values)
        for m in specs:
            out.append(fmt[last:m.start()])
            last = m.end()
            if m.group("conv") == "%":
                out.append("%%")
                continue
            value = next(it)
            t = value.type
            conv = m.group("conv")
            if not isinstance(t, T.ScalarType):
                raise self.error(f"printf() conversion %{conv} cannot print a {t} (print scalars; "
                                 "print() also takes vectors and matrices)", node, KernelTypeError)
            if conv in "fFeEgGaA" and not t.is_float or conv in "diuxXoc" and t.is_float:
                raise self.error(f"printf() conversion %{conv} does not match a {t} value", node, KernelTypeError)
            length = "ll" if t.name == "int64" else ""
            out.append("%" + m.group("flags") + length + conv)
            v = self.materialize(value, t)
            scalars.append(arith.ExtUIOp(T.int32.mlir(), v).result if t.is_bool else v)
        out.append(fmt[last:])
        adjit_d.PrintOp("".join(out), scalars)
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)

    def emit_expect(self, name: str, node):
        """expect_eq(a, b) / expect_neq(a, b) / expect_near(a, b, tolerance):
        when the check fails, prints "file:line: expect_eq(a, b) failed: a = ..,
        b = .." (the launch goes on, as in Warp)."""
        params = ("a", "b", "tolerance") if name == "expect_near" else ("a", "b")
        usage = f"{name}() takes {'a, b[, tolerance]' if name == 'expect_near' else 'a, b'}"
        if len(node.args) > len(params) or any(k.arg not in params[len(node.args):] for k in node.keywords):
            raise self.error(usage, node, KernelSyntaxError)
        given = dict(zip(params, node.args)) | {k.arg: k.value for k in node.keywords}  # Warp's names
        if "a" not in given or "b" not in given:
            raise self.error(usage, node, KernelSyntaxError)
        a, b = self.unify(self.expr(given["a"]), self.expr(given["b"]), node)
        t = a.type
        if not isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise self.error(f"{name}() compares numbers, vectors and matrices, got {t}", node)
        if name == "expect_near":
            if not T.scalar_of(t).is_float:
                raise self.error(f"expect_near() compares float values, got {t}", node)
            tol = self.expr(given["tolerance"]) if "tolerance" in given else literal(1.0e-6)
            tol = self.materialize(self.coerce(tol, T.scalar_of(t), node), T.scalar_of(t))
            diff = math_d.AbsFOp(arith.SubFOp(self.materialize(a, t), self.materialize(b, t)).result).result
            limit = splat(t, tol) if t != T.scalar_of(t) else tol
            within = arith.CmpFOp(arith.CmpFPredicate.OLE, diff, limit).result
            if t != T.scalar_of(t):
                within = all_components(within, t)
            failed = arith.XOrIOp(within, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        else:
            if isinstance(t, T.ScalarType):
                equal = self.expr_Compare(ast.copy_location(
                    ast.Compare(given["a"], [ast.Eq()], [given["b"]]), node)).value
            else:
                equal = self.components_equal(a, b, negate=False)
            failed = equal if name == "expect_neq" else arith.XOrIOp(
                equal, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        check = scf.IfOp(failed, [], has_else=False)
        with ir.InsertionPoint(check.then_block):
            fa, va = self.print_parts(a, node)
            fb, vb = self.print_parts(b, node)
            where = f"{self.src.filename}:{self.src.line_of(node)}".replace("%", "%%")
            text = ast.unparse(node).replace("%", "%%")
            adjit_d.PrintOp(f"{where}: {text} failed: {fa} vs {fb}\n", va + vb)
            scf.YieldOp([])
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)

    # --- calls -------------------------------------------------------------

    def bind_static_params(self, builtin: B.Builtin, node):
        """Splits a builtin call into its value argument nodes and its static parameter values."""
        params = {p.name: p for p in builtin.static_params}
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
            if isinstance(default, bool) or not isinstance(default, (int, float)):
                return fail(f"parameter '{names[k]}' has a default that is not a number ({default!r})")
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

    def call_function(self, fn, args, node, kwargs=None):
        kwargs = kwargs or {}
        if len(fn.overloads) > 1:
            fn, args = self.choose_overload(fn, args, kwargs, node)
        else:
            args = self.bind_arguments(fn, args, kwargs, node, report=True)
        patterns = {}
        declared = parameter_types(fn.pyfunc, SourceInfo.of(fn.pyfunc), "device function", patterns)
        if len(declared) != len(args):
            raise self.error(f"{fn.pyfunc.__name__}() takes {len(declared)} arguments, got {len(args)}", node)
        patterns = [patterns.get(p.arg) for p in SourceInfo.of(fn.pyfunc).tree.args.args]
        arg_types = []
        vals = []
        nodes = BR.argument_nodes(fn, node) if isinstance(node, ast.Call) else [None] * len(args)
        refs = []  # (argument expression or None, type): assigned the callee's final value
        for i, (want, a) in enumerate(zip(declared, args)):
            if BR.is_by_reference(want, a):
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
            if kw.arg not in allowed:
                raise self.error(f"{what}() takes the keywords {' and '.join(allowed)}, got {kw.arg or '**'}",
                                 kw, KernelSyntaxError)
            options[kw.arg] = self.eval_static(ast.Call(func=node.func, args=[kw.value], keywords=[]))
        args = self.call_arguments(node.args)
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

    # --- grad(f) -------------------------------------------------------------

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
            fn = target
            if len(fn.overloads) > 1:
                fn, args = self.choose_overload(fn, args, kwargs, node)
            else:
                args = self.bind_arguments(fn, args, kwargs, node, report=True)
            declared = parameter_types(fn.pyfunc, SourceInfo.of(fn.pyfunc), "device function")
            if len(declared) != len(args):
                raise self.error(f"{fn.pyfunc.__name__}() takes {len(declared)} arguments, got {len(args)}", node)
            if any(BR.is_by_reference(want, a) for want, a in zip(declared, args)):
                raise self.error(f"{label}: {fn.pyfunc.__name__}() takes an argument by reference (ref[T] or a "
                                 "local array); grad() differentiates functions of values only", node)
        anchor = next((a.type for a in args if isinstance(a, Val) and not a.is_literal
                       and _has_tangent(a.type)), T.float32)
        vals, types = [], []
        for k, (want, a) in enumerate(zip(declared, args)):
            if not isinstance(a, Val):
                raise self.error(f"{label}: argument {k + 1} is not a value", node)
            t = want or (T.scalar_of(anchor) if a.is_literal and isinstance(a.type, T.ScalarType) else a.type)
            if not (isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)) and _has_tangent(t)):
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
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        if len(args) != n:
            raise self.error(f"{t}() takes {n} components, got {len(args)}", node)
        self.check_component_precision(t, args, node)
        comps = [self.cast(a, scalar, node) for a in args]
        if isinstance(t, T.VectorType):
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        m = constant(t, 0)
        for r in range(t.rows):
            row = vector_d.FromElementsOp(t.row_type().mlir(), comps[r * t.cols:(r + 1) * t.cols]).result
            m = vector_d.InsertOp(row, m, [], [r]).result
        return Val(t, m)

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
        if isinstance(t, T.VectorType):
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        m = constant(t, 0)
        for r in range(t.rows):
            row = vector_d.FromElementsOp(t.row_type().mlir(), comps[r * t.cols:(r + 1) * t.cols]).result
            m = vector_d.InsertOp(row, m, [], [r]).result
        return Val(t, m)

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
            q = args[0]
            if q.type.dtype == t.dtype:
                return q
            op = arith.ExtFOp if t.dtype.bits > q.type.dtype.bits else arith.TruncFOp
            return Val(t, op(t.mlir(), q.value).result)
        if len(args) == 2 and isinstance(args[0], Val) and isinstance(args[0].type, T.VectorType) \
                and not isinstance(args[0].type, T.QuatType) and args[0].type.length == 3:
            xyz = [self.extract(args[0], [k]) for k in range(3)]
            self.check_component_precision(t, xyz + [args[1]], node)
            comps = [self.cast(c, t.dtype, node) for c in xyz] + [self.cast(args[1], t.dtype, node)]
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        if len(args) == 4:
            self.check_component_precision(t, args, node)
            comps = [self.cast(a, t.dtype, node) for a in args]
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        raise self.error(f"{t}() takes the components (x, y, z, w), a 3-vector and w, or a quaternion; got "
                         f"{', '.join(self.describe(a) for a in args)}", node)

    def construct_with_keywords(self, t, node):
        """A vector, matrix, quaternion or transform built with keywords, as
        Warp's constructors take them: ``dtype=`` (a compile-time scalar
        type: the same kind of type with that scalar, e.g.
        ``spatial_vector(w, v, dtype=float64)``) and, for transforms, ``p=``
        and ``q=`` (``transform(p=pos, q=rot)``; a missing ``q`` is the
        identity rotation, a missing ``p`` the origin)."""
        names = ("p", "q", "dtype") if isinstance(t, T.TransformType) else ("dtype",)
        given = {}
        for kw in node.keywords:
            if kw.arg not in names or kw.arg in given:
                what = "repeated" if kw.arg in given else "not taken"
                raise self.error(f"{t}(): keyword {kw.arg or '**'!s} is {what} (it takes {', '.join(names)})", kw,
                                 KernelSyntaxError)
            given[kw.arg] = kw.value
        if "dtype" in given:
            dtype = self.eval_static(ast.Call(func=node.func, args=[given.pop("dtype")], keywords=[]))
            try:
                scalar = T.value_type_of(dtype)
                if not isinstance(scalar, T.ScalarType):
                    raise TypeError(f"dtype must be a scalar type, got {dtype!r}")
                t = T.transformation(scalar) if isinstance(t, T.TransformType) else \
                    T.quaternion(scalar) if isinstance(t, T.QuatType) else \
                    T.vector(t.length, scalar) if isinstance(t, T.VectorType) else T.matrix(t.shape, scalar)
            except TypeError as e:
                raise self.error(f"{t}(): {e}", node, KernelTypeError) from None
        args = self.call_arguments(node.args)
        if not given:
            return self.construct(t, args, node)
        # transform(p, q=...), transform(p=..., q=...), transform(q=...)
        if len(args) + len(given) > 2 or (args and "p" in given):
            raise self.error(f"{t}() takes p and q once each (positionally or as keywords)", node,
                             KernelSyntaxError)
        p = args[0] if args else self.expr(given["p"]) if "p" in given else Val(T.vector(3, t.dtype),
                                                                                   constant(T.vector(3, t.dtype), 0))
        q = self.expr(given["q"]) if "q" in given else self.identity_quat(t.dtype)
        return self.construct_transform(t, [p, q], node)

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
            x = args[0]
            if x.type.dtype == t.dtype:
                return x
            op = arith.ExtFOp if t.dtype.bits > x.type.dtype.bits else arith.TruncFOp
            return Val(t, op(t.mlir(), x.value).result)
        if len(args) == 2 and all(isinstance(a, Val) for a in args) and args[0].type == T.vector(3, t.dtype) \
                and args[1].type == T.quaternion(t.dtype):
            comps = [self.extract(args[0], [k]).value for k in range(3)] + \
                [self.extract(args[1], [k]).value for k in range(4)]
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        if len(args) == 1 and isinstance(args[0], Val) and args[0].type == T.vector(3, t.dtype):
            return self.construct_transform(t, [args[0], self.identity_quat(t.dtype)], node)  # transform(p)
        if len(args) == 7:
            self.check_component_precision(t, args, node)
            comps = [self.cast(a, t.dtype, node) for a in args]
            return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)
        raise self.error(f"{t}() takes a position {T.vector(3, t.dtype)} and a rotation {T.quaternion(t.dtype)}, "
                         f"a transform, or 7 components; got {', '.join(self.describe(a) for a in args)}", node)

    def transform_part(self, v: Val, part: str) -> Val:
        """``t.p`` (the translation) or ``t.q`` (the rotation) of a transform."""
        t = v.type
        positions = range(3) if part == "p" else range(3, 7)
        part_t = T.vector(3, t.dtype) if part == "p" else T.quaternion(t.dtype)
        comps = [self.extract(v, [k]).value for k in positions]
        return Val(part_t, vector_d.FromElementsOp(part_t.mlir(), comps).result)

    def with_transform_part(self, v: Val, part: str, value, node) -> Val:
        """``v`` with its part ``p`` or ``q`` replaced by ``value``."""
        t = v.type
        part_t = T.vector(3, t.dtype) if part == "p" else T.quaternion(t.dtype)
        new = self.materialize(self.coerce(value, part_t, node), part_t)
        first = 0 if part == "p" else 3
        comps = [self.extract(v, [k]).value for k in range(7)]
        for k in range(part_t.length):
            comps[first + k] = self.extract(Val(part_t, new), [k]).value
        return Val(t, vector_d.FromElementsOp(t.mlir(), comps).result)

    def cast(self, v, t: T.ScalarType, node) -> ir.Value:
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType):
            raise self.error(f"cannot convert {self.describe(v)} to {t}", node)
        if v.is_literal:
            value = bool(v.literal) if t.is_bool else int(v.literal) if t.is_int else float(v.literal)
            return self.literal_constant(t, value)
        s = v.type
        x = v.value
        if s == t:
            return x
        if s.is_float and t.is_float:
            if s.bits == t.bits:  # float16 <-> bfloat16: through float32 (exact), rounded once
                x = arith.ExtFOp(T.float32.mlir(), x).result
            return (arith.ExtFOp if t.bits > s.bits else arith.TruncFOp)(t.mlir(), x).result
        if not s.is_float and t.is_float:
            if s.is_bool or s.is_unsigned:
                return arith.UIToFPOp(t.mlir(), x).result
            return arith.SIToFPOp(t.mlir(), x).result
        if s.is_float and not t.is_float:
            if t.is_bool:
                return arith.CmpFOp(_CMPF_PRED["une"], x, constant(s, 0)).result
            return (arith.FPToUIOp if t.is_unsigned else arith.FPToSIOp)(t.mlir(), x).result
        if t.is_bool:
            return arith.CmpIOp(_CMPI_PRED["ne"], x, constant(s, 0)).result
        if s.is_bool:
            return arith.ExtUIOp(t.mlir(), x).result
        if t.bits == s.bits:
            return x  # int32 <-> uint32: the same bits
        if t.bits > s.bits:  # the source's sign decides the extension
            return (arith.ExtUIOp if s.is_unsigned else arith.ExtSIOp)(t.mlir(), x).result
        return arith.TruncIOp(t.mlir(), x).result

    # --- arithmetic ------------------------------------------------------------

    def user_operator(self, op, a, b, node):
        """``a + b`` (- * / // % & | ^ << >>) where no builtin rule takes the
        operands: a user ``@func`` named ``add`` (``sub``, ``mul``, ...) in
        the kernel's scope, as Warp's operator overloads; else None."""
        name = _OPERATOR_FUNCS.get(type(op))
        try:
            fn = self.scope.lookup(name) if name else None
        except KeyError:
            return None
        if not isinstance(fn, language.Function):
            return None
        return self.call_function(fn, [a, b], node)

    def binop(self, op, a, b, node):
        if not isinstance(a, Val) or not isinstance(b, Val):
            user = self.user_operator(op, a, b, node)
            if user is not None:
                return user
            raise self.error(f"unsupported operands {self.describe(a)} and {self.describe(b)}", node)
        if isinstance(a.type, (T.ArrayType, T.LocalArrayType)) or isinstance(b.type, (T.ArrayType, T.LocalArrayType)):
            raise self.error(f"unsupported operand types for {self.op_name(op)}: {a.type} and {b.type} "
                             "(index arrays to get their elements)", node)
        if isinstance(op, ast.MatMult):
            # As Warp's: @ is mul, for matrix products (mat @ mat, mat @ vec, vec @ mat).
            if not (isinstance(a.type, T.MatrixType) or isinstance(b.type, T.MatrixType)):
                raise self.error(f"@ multiplies matrices (mat @ mat, mat @ vec, vec @ mat), got {a.type} and "
                                 f"{b.type}", node, KernelTypeError)
            op = ast.Mult()
        if a.is_literal and b.is_literal:
            return literal(self.fold(op, a.literal, b.literal, node))
        for v in (a, b):
            if isinstance(v.type, (T.VectorType, T.MatrixType)) and v.type.dtype.is_bool:
                kind = "vectors" if isinstance(v.type, T.VectorType) else "matrices"
                raise self.error(f"arithmetic on bool {kind} is not supported ({self.op_name(op)}); compare "
                                 "them with == / !=, or read their components", node, KernelTypeError)
        ta, tb = a.type, b.type
        scalar_a, scalar_b = isinstance(ta, T.ScalarType), isinstance(tb, T.ScalarType)
        if isinstance(op, ast.Pow):
            return self.call_builtin(B.lookup("pow"), [a, b], node)
        if scalar_a and scalar_b:
            a, b = self.unify(a, b, node)
            return self.scalar_binop(op, a, b, node)
        if isinstance(op, ast.Mult):
            # Scaling and vector/matrix/quaternion products: the `mul` builtin.
            # A scalar literal takes the other operand's scalar type.
            if scalar_a and a.is_literal:
                a = self.coerce(a, tb.dtype, node)
            if scalar_b and b.is_literal:
                b = self.coerce(b, ta.dtype, node)
            return self.apply_builtin(B.lookup("mul"), [a, b], node, {})
        if scalar_a != scalar_b:
            # Broadcasting a scalar over a vector/matrix: v/s.
            vec, s = (b, a) if scalar_a else (a, b)
            if not isinstance(op, ast.Div):  # (s / v: s divided by each component, as Warp's div)
                raise self.error(f"unsupported operand types for {self.op_name(op)}: {ta} and {tb}", node)
            s = self.coerce(s, vec.type.dtype, node)
            sv = splat(vec.type, self.materialize(s, vec.type.dtype))
            lhs, rhs = (sv, vec.value) if scalar_a else (vec.value, sv)
            return self.elementwise(op, Val(vec.type, lhs), Val(vec.type, rhs), node)
        if ta != tb or not isinstance(op, (ast.Add, ast.Sub)):
            user = self.user_operator(op, a, b, node)
            if user is not None:
                return user
        if ta != tb:
            raise self.error(f"unsupported operand types for {self.op_name(op)}: {ta} and {tb}", node)
        if type(ta) is T.VectorType and ta.dtype.is_int and type(op) in _BITWISE:
            return self.bitwise(op, a, b, node)  # component-wise on integer vectors, as Warp's
        if type(ta) is T.VectorType and isinstance(op, ast.Mod):
            return self.elementwise(op, a, b, node)  # component-wise, as Warp's mod
        if not isinstance(op, (ast.Add, ast.Sub)):
            raise self.error(f"{self.op_name(op)} is not defined between two {ta} values "
                             "(use cw_mul/cw_div for component-wise products)", node)
        return self.elementwise(op, a, b, node)

    @staticmethod
    def op_name(op) -> str:
        return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
                ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}.get(type(op), type(op).__name__)

    def fold(self, op, x, y, node):
        # Folds with the semantics of the ops emitted for values (arith.divsi /
        # remsi / remf): int / int truncates and % takes the dividend's sign, as in Warp.
        both_int = isinstance(x, int) and isinstance(y, int)

        def div():
            if not both_int:
                return x / y
            q = abs(x) // abs(y)
            return -q if (x < 0) != (y < 0) else q

        def mod():
            if not both_int:
                return math.fmod(x, y)
            r = abs(x) % abs(y)
            return -r if x < 0 else r

        if type(op) in _BITWISE:
            if not both_int or isinstance(x, bool) or isinstance(y, bool):
                raise self.error(f"{self.op_name(op)} needs integer operands", node, KernelTypeError)
            if isinstance(op, (ast.LShift, ast.RShift)) and not 0 <= y < 64:
                raise self.error(f"shift count {y} is out of range (0 to 63 for a constant)", node,
                                 KernelTypeError)
            return {ast.BitAnd: lambda: x & y, ast.BitOr: lambda: x | y, ast.BitXor: lambda: x ^ y,
                    ast.LShift: lambda: x << y, ast.RShift: lambda: x >> y}[type(op)]()
        try:
            return {ast.Add: lambda: x + y, ast.Sub: lambda: x - y, ast.Mult: lambda: x * y,
                    ast.Div: div, ast.FloorDiv: lambda: x // y, ast.Mod: mod,
                    ast.Pow: lambda: x ** y}[type(op)]()
        except KeyError:
            raise self.error(f"unsupported operator {self.op_name(op)}", node, KernelSyntaxError) from None
        except ZeroDivisionError:
            raise self.error("division by zero in a constant expression", node) from None

    def scalar_binop(self, op, a, b, node):
        t = a.type
        if type(op) in _BITWISE:
            return self.bitwise(op, a, b, node)
        if t.is_bool:
            raise self.error(f"arithmetic on bool values is not supported ({self.op_name(op)})", node)
        if t.is_int and type(op) in _INTEGER_DIVISIONS and b.is_literal and b.literal == 0:
            raise self.error(f"integer division by zero ({self.op_name(op)} 0)", node)
        x, y = self.materialize(a, t), self.materialize(b, t)
        return Val(t, self._arith(op, t, x, y, node))

    def bitwise(self, op, a, b, node):
        """``& | ^ << >>`` on integers (``& | ^`` on bools too). A shift count
        outside [0, bits) gives what Python's unbounded integers give once
        wrapped to the width: 0 for ``<<``, the sign for ``>>``; never
        undefined."""
        t = a.type
        scalar = T.scalar_of(t)  # (integer vectors: component-wise)
        shift = isinstance(op, (ast.LShift, ast.RShift))
        if scalar.is_float or (scalar.is_bool and shift):
            raise self.error(f"{self.op_name(op)} needs integer operands, got {t}", node, KernelTypeError)
        x, y = self.materialize(a, t), self.materialize(b, t)
        if not shift:
            cls = {ast.BitAnd: arith.AndIOp, ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp}[type(op)]
            return Val(t, cls(x, y).result)
        bits = ir.IntegerType(scalar.mlir()).width
        width = constant(t, bits)
        in_range = arith.CmpIOp(_CMPI_PREDICATE_ULT, y, width).result
        safe = arith.SelectOp(in_range, y, constant(t, 0)).result
        if isinstance(op, ast.LShift):
            shifted, overflow = arith.ShLIOp(x, safe).result, constant(t, 0)
        elif scalar.is_unsigned:
            shifted, overflow = arith.ShRUIOp(x, safe).result, constant(t, 0)
        else:
            shifted = arith.ShRSIOp(x, safe).result
            overflow = arith.ShRSIOp(x, constant(t, bits - 1)).result
        return Val(t, arith.SelectOp(in_range, shifted, overflow).result)

    def elementwise(self, op, a, b, node):
        t = a.type
        return Val(t, self._arith(op, t, a.value, b.value, node))

    def _arith(self, op, t: T.Type, x, y, node):
        """``x op y`` on values of kernel type ``t`` (a scalar, or a vector or
        matrix elementwise)."""
        f = T.scalar_of(t).is_float
        if not f and type(op) in _INTEGER_DIVISIONS:
            return integer_divide(_INTEGER_DIVISIONS[type(op)], t, x, y)
        table = {
            ast.Add: arith.AddFOp if f else arith.AddIOp,
            ast.Sub: arith.SubFOp if f else arith.SubIOp,
            ast.Mult: arith.MulFOp if f else arith.MulIOp,
            ast.Div: arith.DivFOp,
            ast.Mod: arith.RemFOp,
        }
        if isinstance(op, ast.FloorDiv):
            return math_d.FloorOp(arith.DivFOp(x, y).result).result
        cls = table.get(type(op))
        if cls is None:
            raise self.error(f"unsupported operator {self.op_name(op)}", node, KernelSyntaxError)
        return cls(x, y).result

    def negate(self, v: Val) -> Val:
        t = v.type
        if not isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise self.error(f"cannot negate {self.describe(v)}", self.node)
        scalar = T.scalar_of(t)
        if scalar.is_bool:
            raise self.error("cannot negate a bool", self.node)
        if scalar.is_float:
            return Val(t, arith.NegFOp(v.value).result)
        return Val(t, arith.SubIOp(constant(t, 0), v.value).result)

    # --- components ----------------------------------------------------------

    def component_position(self, t, node) -> list[int]:
        """The static component position addressed by `v.x`, `v[i]`, `m[i, j]`, `m[i]`."""
        position = self.component_index(t, node)
        if any(isinstance(p, Val) for p in position):
            raise self.error("this index must be a constant integer", node)
        return position

    def component_index(self, t, node) -> list:
        """The component position addressed by `v.x`, `v[i]`, `m[i, j]`,
        `m[i]`: constant ints (a negative constant counts from the end), or
        (runtime indices) int Vals."""
        if isinstance(node, ast.Attribute):
            if not isinstance(t, T.VectorType) or node.attr not in T.VectorType.COMPONENTS[:t.length]:
                raise self.error(f"{t} has no component '{node.attr}'", node)
            return [T.VectorType.COMPONENTS.index(node.attr)]
        sl = node.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        shape = t.shape if isinstance(t, (T.VectorType, T.MatrixType)) else ()
        if len(items) > len(shape):
            raise self.error(f"{t} takes at most {len(shape)} component indices, got {len(items)}", node)
        position = []
        for item, extent in zip(items, shape):
            v = self.expr(item)
            if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int \
                    or v.type.is_bool:
                raise self.error(f"component indices must be integers, got {self.describe(v)}", item)
            if v.is_literal:
                if not -extent <= v.literal < extent:
                    raise self.error(f"index {v.literal} is out of range for {t}", node)
                position.append(v.literal % extent)  # a constant counts from the end when negative, as Warp's
            else:
                position.append(v)
        return position

    def dynamic_choices(self, t, position, node):
        """For a position with runtime indices: emits their range checks and
        returns [(condition, static position)] covering every value they may
        take (the condition: the indices are that position)."""
        shape = t.shape
        what = f"{ast.unparse(node.value)} ({t})"
        for p, extent in zip(position, shape):
            if isinstance(p, Val):
                adjit_d.CheckIndexOp(to_index(self.materialize(p, p.type), p.type),
                                     arith.ConstantOp(ir.IndexType.get(), extent).result, what)
        ranges = [range(extent) if isinstance(p, Val) else [p] for p, extent in zip(position, shape)]
        choices = []
        for static in itertools.product(*ranges):
            cond = None
            for p, k in zip(position, static):
                if isinstance(p, Val):
                    c = arith.CmpIOp(_CMPI_PRED["eq"], self.materialize(p, p.type), constant(p.type, k)).result
                    cond = c if cond is None else arith.AndIOp(cond, c).result
            choices.append((cond, list(static)))
        return choices

    def dynamic_extract(self, v: Val, position, node) -> Val:
        """``v[k]`` with a runtime ``k``: a select over the components (a
        gradient reaches the selected one only)."""
        choices = self.dynamic_choices(v.type, position, node)
        result = self.extract(v, choices[0][1])
        for cond, static in choices[1:]:
            result = Val(result.type, arith.SelectOp(cond, self.extract(v, static).value, result.value).result)
        return result

    def dynamic_insert(self, v: Val, position, value: ir.Value, node) -> Val:
        """``v[k] = x`` with a runtime ``k``: the component at k replaced."""
        choices = self.dynamic_choices(v.type, position, node)
        result = v.value
        for cond, static in choices:
            inserted = adjit_d.InsertOp(v.type.mlir(), value, v.value, ir.DenseI64ArrayAttr.get(static)).result
            result = arith.SelectOp(cond, inserted, result).result
        return Val(v.type, result)

    def component_type(self, t, position):
        if not position:
            return t
        if isinstance(t, T.VectorType):
            return t.dtype
        return t.dtype if len(position) == 2 else t.row_type()

    def extract(self, v: Val, position) -> Val:
        ct = self.component_type(v.type, position)
        return Val(ct, adjit_d.ExtractOp(ct.mlir(), v.value, ir.DenseI64ArrayAttr.get(position)).result)

    def array_indices(self, array: Val, sl, node) -> list[ir.Value]:
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if len(items) != array.type.ndim:
            raise self.error(f"a {array.type.ndim}-d array needs {array.type.ndim} indices, got {len(items)}",
                             node)
        out = []
        for item in items:
            v = self.expr(item)
            if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType) or not v.type.is_int:
                raise self.error(f"array indices must be integers, got {self.describe(v)}", item)
            out.append(to_index(self.materialize(v, v.type), v.type))
        return out

    # --- types and values ----------------------------------------------------

    # --- structs ---------------------------------------------------------------

    def declare_struct(self, ref: StructRef) -> None:
        """Binds ``ref`` (and its nested structs) by name; their value fields
        are bound in the environment already, under ``prefix.field``."""
        self.env[ref.prefix] = ref
        for field, ft in ref.type.fields.items():
            if isinstance(ft, T.StructType):
                self.declare_struct(StructRef(ft, ref.field_name(field)))

    def lookup_local(self, node):
        """The local ``node`` names (a name, or a field of a struct local:
        ``s.arr``, ``s.inner.x``), without emitting anything; else None."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Attribute):
            ref = self.lookup_local(node.value)
            if isinstance(ref, StructRef) and node.attr in ref.type.fields:
                return self.env.get(ref.field_name(node.attr))
        return None

    def struct_field(self, ref: StructRef, field: str, node):
        if field not in ref.type.fields:
            raise self.error(f"struct {ref.type.name} has no field '{field}' (fields: "
                             f"{', '.join(ref.type.fields)})", node)
        value = self.env.get(ref.field_name(field))
        if value is None:
            raise self.error(f"field '{field}' of this {ref.type.name} has no array (a struct made in a kernel "
                             "has no arrays)", node)
        return value

    def assign_struct_field(self, ref: StructRef, target: ast.Attribute, value) -> None:
        field = target.attr
        if field not in ref.type.fields:
            raise self.error(f"struct {ref.type.name} has no field '{field}' (fields: "
                             f"{', '.join(ref.type.fields)})", target)
        ft = ref.type.fields[field]
        if isinstance(ft, T.StructType):
            if not (isinstance(value, StructRef) and value.type is ft):
                raise self.error(f"field '{field}' of {ref.type.name} takes a {ft.name}, got "
                                 f"{self.describe(value)}", target, KernelTypeError)
            self.copy_struct(value, ref.field_name(field))
            return
        if isinstance(ft, T.ArrayType):
            raise self.error(f"the array field '{field}' of {ref.type.name} cannot be rebound in a kernel "
                             "(write its elements)", target)
        self.env[ref.field_name(field)] = self.concrete(self.coerce(value, ft, target))

    def copy_struct(self, ref: StructRef, prefix: str) -> StructRef:
        """Binds a copy of ``ref``'s fields under ``prefix`` (a struct is a value)."""
        for path, _ in ref.type.leaves(ref.prefix):
            destination = prefix + path[len(ref.prefix):]
            if path in self.env:
                self.env[destination] = self.env[path]
            else:
                self.env.pop(destination, None)
        copy = StructRef(ref.type, prefix)
        self.declare_struct(copy)
        return copy

    def new_struct(self, t: T.StructType, node) -> StructRef:
        """``S()`` in a kernel: fields zero (array fields unset), under a
        hidden prefix until assigned to a name."""
        self.structs_made = getattr(self, "structs_made", 0) + 1
        prefix = f"%{t.name}{self.structs_made}"
        for path, ft in t.leaves(prefix):
            if not isinstance(ft, T.ArrayType):
                self.env[path] = Val(ft, constant(ft, 0))
        ref = StructRef(t, prefix)
        self.declare_struct(ref)
        return ref

    def carried_names(self, names) -> list[str]:
        """The bound locals among ``names`` that control flow carries: a
        struct as its value fields (arrays stay bound)."""
        out = []
        for name in names:
            value = self.env.get(name)
            if isinstance(value, StructRef):
                out += [p for p, t in value.type.leaves(name) if not isinstance(t, T.ArrayType) and p in self.env]
            elif V.is_view(value):
                out += V.leaves(value)  # its leading indices (the array stays bound)
            elif isinstance(value, Val) and isinstance(value.type, T.ArrayType):
                continue  # an array is never rebound (a call's argument: its name rides along)
            elif value is not None:
                out.append(name)
        return out

    def describe(self, v) -> str:
        if isinstance(v, Val):
            return f"a {v.type} value"
        if isinstance(v, StructRef):
            return f"a {v.type.name} struct"
        if isinstance(v, tuple):
            return f"a tuple of {len(v)} values"
        return repr(v)

    def unify(self, a: Val, b: Val, node):
        """Gives two operands one type: a literal adopts the other's type."""
        if not isinstance(a, Val) or not isinstance(b, Val):
            raise self.error(f"unsupported operands {self.describe(a)} and {self.describe(b)}", node)
        if a.is_literal and not b.is_literal:
            return self.coerce(a, b.type, node), b
        if b.is_literal and not a.is_literal:
            return a, self.coerce(b, a.type, node)
        if a.is_literal and b.is_literal:
            if a.type.is_bool != b.type.is_bool:
                raise self.error(f"operands have different types: {a.type} and {b.type} "
                                 "(convert one explicitly, e.g. int(flag) or bool(n))", node)
            if a.type.is_float or b.type.is_float:
                return self.coerce(a, T.float32, node), self.coerce(b, T.float32, node)
            return a, b
        if a.type != b.type:
            raise self.error(f"operands have different types: {a.type} and {b.type} "
                             "(convert one explicitly, e.g. float(i))", node)
        return a, b

    def coerce(self, v, t, node) -> Val:
        """``v`` as type ``t``: literals convert (int -> float too), values must match."""
        if not isinstance(v, Val):
            raise self.error(f"expected a {t} value, got {self.describe(v)}", node)
        if v.type == t and not v.is_literal:
            return v
        if v.is_literal and isinstance(t, T.ScalarType):
            if isinstance(v.literal, float) and not t.is_float:
                raise self.error(f"cannot use the float literal {v.literal} as {t}", node)
            return Val(t, None, v.literal)
        if v.is_literal and isinstance(t, (T.VectorType, T.MatrixType)):
            raise self.error(f"expected a {t} value, got the literal {v.literal}", node)
        if v.type != t:
            raise self.error(f"expected a {t} value, got {v.type}", node)
        return v

    def materialize(self, v: Val, t) -> ir.Value:
        """The SSA value of ``v`` (literals become constants of type ``t``)."""
        if v.is_literal:
            return self.literal_constant(t, v.literal)
        return v.value

    def concrete(self, v) -> Val:
        if not isinstance(v, Val):
            raise self.error(f"{self.describe(v)} cannot be stored in a local", self.node)
        if v.is_literal:
            return Val(v.type, self.literal_constant(v.type, v.literal))
        return v

    def literal_constant(self, t, value) -> ir.Value:
        """A literal as a constant of type ``t``; integers must fit in ``t``."""
        scalar = T.scalar_of(t)
        if isinstance(scalar, T.ScalarType) and scalar.is_int and not isinstance(value, bool):
            lo, hi = scalar.range
            if not lo <= int(value) <= hi:
                raise self.error(f"the integer literal {value} does not fit in {scalar} "
                                 f"({lo} to {hi})", self.node)
        return constant(t, value)

    def condition(self, test) -> ir.Value:
        return self.to_bool(self.expr(test), test)

    def to_bool(self, v, node) -> ir.Value:
        if isinstance(v, Val) and isinstance(v.type, T.ArrayType):
            return self.array_is_set(v)
        if not isinstance(v, Val) or not isinstance(v.type, T.ScalarType):
            raise self.error(f"a condition must be a scalar or an array, got {self.describe(v)}", node)
        return self.cast(v, T.bool_, node)

    def null_check(self, left, op, right_node, node) -> ir.Value:
        """``arr is None`` / ``arr is not None``: whether a launch passed None
        for the array (see array_is_set: an empty array is taken for None, as
        Warp's null array). The only ``is`` comparison kernels take."""
        if not (isinstance(right_node, ast.Constant) and right_node.value is None and isinstance(left, Val)
                and isinstance(left.type, T.ArrayType)):
            raise self.error("`is` / `is not` compare an array with None in kernels (`arr is None`); use == for "
                             "values", node, KernelSyntaxError)
        is_set = self.array_is_set(left)
        if isinstance(op, ast.IsNot):
            return is_set
        return arith.XOrIOp(is_set, constant(T.bool_, 1)).result

    def array_is_set(self, a: Val) -> ir.Value:
        """An array as a condition (``if arr:``, ``not arr``): true unless it
        is Warp's null array, which a launch passes for None (adjit passes an
        empty array), i.e. unless an extent is 0. (A Warp array with no
        elements has a null pointer too, so it is false in Warp as well.)"""
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        result = None
        for k in range(a.type.ndim):
            dim = adjit_d.DimOp(ir.IndexType.get(), a.value, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k))
            c = arith.CmpIOp(arith.CmpIPredicate.ne, dim.result, zero).result
            result = c if result is None else arith.AndIOp(result, c).result
        return result

    def static_int(self, node) -> int:
        v = self.expr(node)
        if isinstance(v, Val) and v.is_literal and isinstance(v.literal, int) and not isinstance(v.literal, bool):
            return v.literal
        raise self.error("this index must be a constant integer", node)

    # --- names ------------------------------------------------------------------

    def is_static(self, node) -> bool:
        """Whether ``node`` names something outside the kernel (module, builtin, type)."""
        if isinstance(node, ast.Name):
            return node.id not in self.env
        if isinstance(node, ast.Attribute):
            return self.is_static(node.value)
        return False

    def resolve_static(self, node):
        """What a name or attribute chain outside the kernel's locals refers to
        (the same ``Scope`` the compile cache key is made from)."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            raise self.error(f"'{ast.unparse(node)}' must be a name", node, KernelSyntaxError)
        try:
            return self.scope.resolve(node)
        except Unresolved as e:
            missing = e.node
        if isinstance(missing, ast.Name):
            if missing.id == "range":
                raise self.error("range() can only be used in a for loop", missing, KernelSyntaxError)
            if missing.id in ("abs", "min", "max") and missing is node:
                return B.lookup(missing.id)
            if missing.id == "len" and missing is node:
                return len
            if missing.id == "print" and missing is node:
                return builtins.print
            raise self.error(f"name '{missing.id}' is not defined", missing, KernelNameError)
        if missing is node and missing.attr in ("print", "float", "int") and self.is_adjit_module(missing.value):
            # wp.print(x), wp.float(x) in kernels are Python's, as Warp's (the host module has neither)
            return getattr(builtins, missing.attr)
        raise self.error(f"'{ast.unparse(missing)}' is not defined", missing, KernelNameError)

    def is_adjit_module(self, node) -> bool:
        try:
            return getattr(self.scope.resolve(node), "__name__", None) == "adjit"
        except Unresolved:
            return False

    def static_value(self, obj, node):
        """A module-level object used as a value: Python numbers (np.float64 is
        one) become weakly typed literals; other numpy scalars (``adjit.float32(2)``)
        and small numpy arrays (``adjit.vec3(...)`` values) typed constants."""
        if isinstance(obj, (bool, int, float)):
            return literal(float(obj) if isinstance(obj, float) else obj)
        if isinstance(obj, (np.generic, np.ndarray)):
            t = T.constant_type_of(obj)
            if t is not None:
                return Val(t, self.literal_constant(t, obj.item()) if isinstance(t, T.ScalarType)
                           else constant_array(t, obj))
        return obj


#: printf conversions of print()'s values, by scalar type.
_PRINTF_SPEC = {"float32": "%g", "float64": "%g", "int32": "%d", "int64": "%lld", "uint32": "%u", "uint64": "%llu",
                "bool": "%d"}


def _printf_scalar(t: T.ScalarType, v) -> tuple[str, ir.Value]:
    """(printf conversion, value) of one scalar: floats narrower than 32 bits
    widened to float32, integers narrower than 32 bits (and bools, printed as
    1 and 0) extended to int32 by their signedness, as C promotes them."""
    if t.is_float and t.bits < 32:
        return "%g", arith.ExtFOp(T.float32.mlir(), v).result
    if t.bits < 32:
        signed = t.is_int and t.signed
        extend = arith.ExtSIOp if signed else arith.ExtUIOp
        return ("%d" if signed or t.is_bool else "%u"), extend(T.int32.mlir(), v).result
    return _PRINTF_SPEC[t.name], v
#: A printf conversion: flags, width and precision (no *), an ignored length
#: modifier, the conversion (or %%).
_PRINTF_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|j|z|t|L)?(?P<conv>[diuxXocfFeEgGaA%])"
                                r"|%(?P<bad>.)")


def _is_transform_part(t, node) -> bool:
    """Whether ``node`` is ``x.p`` or ``x.q`` of a transform ``x`` of type ``t``."""
    return isinstance(t, T.TransformType) and isinstance(node, ast.Attribute) and node.attr in ("p", "q")


def _host_zeros():
    """adjit.zeros, which in a kernel makes a fixed-size local array (Warp's
    zeros builtin); imported late (the runtime imports the compiler)."""
    from ..runtime.array import zeros
    return zeros


def all_components(mask: ir.Value, t) -> ir.Value:
    """Whether every component of the i1 vector or matrix ``mask`` (of the
    shape of ``t``) is true."""
    i1 = ir.IntegerType.get_signless(1)
    flat = vector_d.ShapeCastOp(ir.VectorType.get([int(np.prod(t.shape))], i1), mask).result
    return vector_d.ReductionOp(i1, vector_d.CombiningKind.AND, flat).result
