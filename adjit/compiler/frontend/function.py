"""FunctionBuilder: one func.func (a kernel or a device function) built from its
Python AST, composed of the frontend's rooms (one mixin each), with its entry:
the signature, the parameters' bindings and the returns."""
from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import func

from ... import types as T
from ...errors import KernelSyntaxError, KernelTypeError
from ...source import Scope, SourceInfo
from .. import branch_locals as BL
from .. import indexed_arrays as IA
from .. import by_reference as BR
from .. import struct_arrays as SA
from .. import views as V
from ..desugar import always_returns, falls_off, lower_loop_returns, normalize_returns
from ..values import StructRef, Val, constant
from .helpers import ATTRIBUTE, flat_types
from .assignment import Assignment
from .calls import Calls
from .components import Components
from .constructors import Constructors
from .control_flow import ControlFlow
from .conversions import Conversions
from .expressions import Expressions
from .func_calls import FuncCalls
from .operators import Operators
from .printing import Printing
from .structs import Structs


class FunctionBuilder(ControlFlow, Assignment, Expressions, Operators, Calls, FuncCalls, Constructors,
                      Components, Structs, Conversions, Printing):
    """Builds one func.func (a kernel or a device function) from Python into
    ``module`` (a ModuleBuilder). Its methods live in the rooms it is composed
    of; the state they share (the locals in ``env``, the node being built in
    ``node``, ...) is set up here."""

    def __init__(self, module, pyfunc, source: SourceInfo, arg_types, name, is_kernel):
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
        #: Why a local is not visible where it is read (branch_locals.explain), by name.
        self.out_of_scope: dict[str, str] = {}
        self._reads = None

    @property
    def reads(self) -> BL.Reads:
        """Where the function's source reads and assigns each local (branch_locals)."""
        if self._reads is None:
            self._reads = BL.Reads(self.src.tree)
        return self._reads

    def error(self, msg: str, node=None, cls=KernelTypeError):
        node = node or self.node
        return cls(msg, self.src.filename, self.src.line_of(node), self.src.col_of(node),
                   self.src.source_line(node), self.src.qualname)

    def loc(self, node) -> ir.Location:
        return ir.Location.file(self.src.filename, self.src.line_of(node), self.src.col_of(node) + 1)

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

    def _entry(self, params, by_field: tuple):
        """Emits the func.func (no results yet) and binds its parameters; a
        parameter of a type in ``by_field`` (a struct) is one argument per
        field ("s.x"). Returns it and its (name, type) arguments."""
        leaves = []
        for name, t in zip(params, self.arg_types):
            leaves += t.leaves(name) if isinstance(t, by_field) else [(name, t)]
        fn_type = ir.FunctionType.get([t.mlir() for _, t in leaves], [])
        with ir.InsertionPoint(self.mb.module.body):
            fn = func.FuncOp(self.name, fn_type)
        block = fn.add_entry_block()
        self.entry_block = block  # (values every path may use, e.g. null arrays, are made here)
        for (name, t), arg in zip(leaves, block.arguments):
            self.env[name] = Val(t, arg)
        for name, t in zip(params, self.arg_types):
            if isinstance(t, T.StructType):
                self.declare_struct(StructRef(t, name))
        return fn, leaves

    def _build_kernel(self, params, body):
        # As Kernel.arg_names: an array of structs is one array per field ("a.x").
        fn, leaves = self._entry(params, (T.StructType, T.StructArrayType, T.IndexedArrayType))
        fn.attributes[ATTRIBUTE["kernel"]] = ir.UnitAttr.get()
        fn.attributes[ATTRIBUTE["arg_names"]] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n, _ in leaves])
        block = fn.entry_block
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
        # once the returns are known.
        fn, leaves = self._entry(params, (T.StructType, V.RowViewType, T.StructArrayType))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.entry_block
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
