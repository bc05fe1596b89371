//===- ArrayAccessInterface.td - ops that access array elements -*- tablegen -*-===//
//
// Loads, stores and atomics each touch one element of an adjit array, or one
// component of it. This interface says which and how, so that analyses and
// passes (the access analysis, the adjoint pass, the access checks, the
// atomic ordering) ask the op instead of listing the ops.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_ARRAY_ACCESS_INTERFACE_TD
#define ADJIT_ARRAY_ACCESS_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Adjit_ArrayElementAccessOpInterface : OpInterface<"ArrayElementAccessOpInterface"> {
  let cppNamespace = "::mlir::adjit";
  let description = [{
    An op that reads and/or writes one element of an `!adjit.array` (or one
    component of it): `adjit.load`, `adjit.store`, their `_component` forms
    and the atomics. The defaults describe an atomic read-modify-write of
    `$array[$indices]` at `$position` combining `$value`.
  }];
  let methods = [
    InterfaceMethod<"The array accessed.",
      "::mlir::Value", "getAccessedArray", (ins), [{}],
      [{ return $_op.getArray(); }]>,
    InterfaceMethod<"The element's indices.",
      "::mlir::OperandRange", "getAccessedIndices", (ins), [{}],
      [{ return $_op.getIndices(); }]>,
    InterfaceMethod<"The component accessed; empty for the whole element.",
      "::llvm::ArrayRef<int64_t>", "getAccessedComponent", (ins), [{}],
      [{ return $_op.getPosition(); }]>,
    InterfaceMethod<"The value stored or combined into the element (null for loads).",
      "::mlir::Value", "getWrittenValue", (ins), [{}],
      [{ return $_op.getValue(); }]>,
    InterfaceMethod<"Whether the op reads the element (loads, atomics).",
      "bool", "readsElement", (ins), [{}], [{ return true; }]>,
    InterfaceMethod<"Whether the op writes the element (stores, atomics).",
      "bool", "writesElement", (ins), [{}], [{ return true; }]>,
  ];
  let extraClassDeclaration = [{
    /// An atomic read-modify-write (atomic_add, ..., atomic_cas).
    bool isAtomic() { return readsElement() && writesElement(); }
  }];
}

#endif // ADJIT_ARRAY_ACCESS_INTERFACE_TD
