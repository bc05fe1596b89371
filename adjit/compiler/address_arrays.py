"""Arrays at addresses: ``address_array(address, extent, dtype, name)`` in
adjit's own kernel-language libraries (adjit.geometry).

The geometry objects' handles (``Mesh.id``) are addresses of descriptors
that adjit writes; its query functions read the descriptor and view the
object's arrays with this call, which emits ``adjit.array_at_address``.
Accesses are bounds-checked against the extent like any array's, and
differentiation treats the memory as constant. It is not a user-facing
builtin: Warp's ``array(ptr=...)`` in kernels stays refused (an address a
user computes carries no extent adjit can trust).
"""
from __future__ import annotations

import ast

from .. import types as T
from ..dialects import adjit as adjit_d
from ..errors import KernelTypeError
from .values import Val, to_index


def make_address_array(fb, node: ast.Call) -> Val:
    """The 1-d array ``address_array(address, extent, dtype, name)`` builds."""
    if len(node.args) != 4 or node.keywords:
        raise fb.error("address_array() takes (address, extent, dtype, name)", node, KernelTypeError)
    address_node, extent_node, dtype_node, name_node = node.args
    address = fb.expr(address_node)
    extent = fb.expr(extent_node)
    for what, v in (("address", address), ("extent", extent)):
        if not (isinstance(v, Val) and isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise fb.error(f"address_array() {what} must be an integer, got {fb.describe(v)}", node,
                           KernelTypeError)
    if not fb.is_static(dtype_node):
        raise fb.error("address_array() dtype must be a type", node, KernelTypeError)
    dtype = T.value_type_of(fb.resolve_static(dtype_node))
    if isinstance(name_node, ast.Constant):
        name = name_node.value
    else:  # a name bound to a string outside the function (a closure or a global)
        name = fb.resolve_static(name_node) if fb.is_static(name_node) else None
    if not isinstance(name, str):
        raise fb.error("address_array() name must be a string constant", node, KernelTypeError)
    address_type = T.uint64 if address.is_literal else address.type
    if address_type.bits != 64:
        raise fb.error(f"address_array() address must be a 64-bit integer, got {address_type}", node,
                       KernelTypeError)
    address = fb.materialize(fb.coerce(address, address_type, node), address_type)
    extent_type = T.int64 if extent.is_literal else extent.type
    extent = to_index(fb.materialize(fb.coerce(extent, extent_type, node), extent_type), extent_type)
    array_type = T.ArrayType(dtype, 1)
    op = adjit_d.ArrayAtAddressOp(array_type.mlir(), address, [extent], name)
    return Val(array_type, op.result)
