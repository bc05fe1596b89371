"""Expression dispatch and the simple expressions: constants, names, tuples,
attributes and subscripts (reads of components and array elements), and what a
name outside the kernel stands for (``static``, module-level constants)."""
from __future__ import annotations

import ast
import builtins

import numpy as np
from mlir import ir

from ... import language
from ... import types as T
from ... import builtins as B
from ...dialects import adjit as adjit_d
from ...errors import KernelNameError, KernelSyntaxError
from ...source import Unresolved
from .. import branch_locals as BL
from .. import local_arrays as LA
from .. import slices as S
from .. import struct_arrays as SA
from .. import tiles
from .. import views as V
from ..values import StructRef, Val, constant_array, from_index, from_storage, literal, storage_type, stored_as_bytes


class _ArrayShape:
    """``x.shape`` inside a kernel: only indexable by a constant."""

    def __init__(self, array: Val):
        self.array = array


class Expressions:
    """FunctionBuilder's expression dispatch, reads and static names."""

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
        if isinstance(base, Val) and isinstance(base.type, T.TileType):
            if node.attr == "shape":  # constants, as Warp's
                return tuple(literal(n) for n in base.type.shape)
            if node.attr == "size":
                return literal(base.type.size)
            raise self.error(f"tiles have no attribute '{node.attr}' in kernels (shape and size are)", node)
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
                    raise self.error(f"shape index {k} is out of range for a shape of {len(shape)} extents", node)
                return shape[k]
        base = self.expr(node.value)
        if LA.is_local_array(base):
            return LA.read(self, base, node)
        if isinstance(base, Val) and isinstance(base.type, T.TileType):
            return tiles.subscript(self, base, node)  # an element, a sub-tile, a slice
        if isinstance(base, SA.StructArrayRef):
            return SA.load(self, base, node)  # s = a[i]: every field
        if V.takes(base, node):  # row[j], and a[i] of an n-d array (a view)
            return V.subscript(self, base, node)
        if isinstance(base, Val) and isinstance(base.type, T.ArrayType):
            return self.load_element(base, self.array_indices(base, node.slice, node))
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

    def load_element(self, array: Val, indices: list[ir.Value]) -> Val:
        """The element ``array[indices]``."""
        dtype = array.type.dtype
        loaded = adjit_d.LoadOp(storage_type(dtype), array.value, indices).result
        if stored_as_bytes(dtype):  # bools: bytes
            return Val(dtype, from_storage(dtype, loaded))
        return Val(dtype, self.no_grad_guard(array, loaded))

    def no_grad_guard(self, array: Val, loaded: ir.Value) -> ir.Value:
        """Reads of a kernel argument marked no_grad carry no gradient."""
        if any(self.env.get(name) is not None and self.env[name].value == array.value
               for name in self.no_grad):
            return adjit_d.StopGradientOp(loaded.type, loaded).result
        return loaded

    def static_int(self, node) -> int:
        v = self.expr(node)
        if isinstance(v, Val) and v.is_literal and isinstance(v.literal, int) and not isinstance(v.literal, bool):
            return v.literal
        raise self.error("this index must be a constant integer", node)

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
            if missing.id == "breakpoint" and missing is node:
                return builtins.breakpoint
            raise self.error(f"name '{missing.id}' is not defined{BL.explain(self, missing)}", missing,
                             KernelNameError)
        if missing is node and missing.attr in ("print", "float", "int", "breakpoint") and \
                self.is_adjit_module(missing.value):
            # wp.print(x), wp.float(x), wp.breakpoint() in kernels are Python's, as Warp's (the host
            # module has none of them)
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
