//===- AdjitDialect.h - the adjit dialect -----------------------*- C++ -*-===//

#ifndef ADJIT_ADJITDIALECT_H
#define ADJIT_ADJITDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "AdjitDialect.h.inc"

#include "ArrayAccessInterface.h.inc"

#define GET_TYPEDEF_CLASSES
#include "AdjitTypes.h.inc"

#define GET_OP_CLASSES
#include "AdjitOps.h.inc"

namespace mlir::adjit {
/// The type of the component (or matrix row) of `aggregate` at `position`, or
/// failure if the position does not address one. `aggregate` is a vector or
/// matrix type; an empty position addresses the whole value.
FailureOr<Type> getComponentType(Type aggregate, ArrayRef<int64_t> position);

/// Whether `op` is a `func.func` marked as a kernel.
bool isKernel(Operation *op);

/// Whether `op` is an atomic read-modify-write of an array element
/// (atomic_add/min/max/exch/and/or/xor/cas).
inline bool isAtomicOp(Operation *op) {
  auto access = dyn_cast<ArrayElementAccessOpInterface>(op);
  return access && access.isAtomic();
}

/// Whether `array` is memory at an address (adjit.array_at_address), which
/// differentiation treats as constant.
inline bool isAddressedArray(Value array) {
  return array.getDefiningOp<ArrayAtAddressOp>() != nullptr;
}
} // namespace mlir::adjit

#endif // ADJIT_ADJITDIALECT_H
