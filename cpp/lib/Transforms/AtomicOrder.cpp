//===- AtomicOrder.cpp - how a CPU launch orders a kernel's atomics -------===//
//
// adjit-atomic-order (see Passes.td for the contract) classifies each kernel
// as "parallel", "ordered" or "serial" from its atomics and how it otherwise
// touches their arrays. adjit-defer-float-atomics (DeferFloatAtomics.cpp)
// later routes the float adds of an "ordered" launch through the runtime.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/Passes.h"

#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITATOMICORDER
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// A float atomic_add (its order changes the result's rounding).
bool isFloatAdd(Operation *op) {
  auto add = dyn_cast<AtomicAddOp>(op);
  return add && isa<FloatType>(getElementTypeOrSelf(add.getValue().getType()));
}

/// An f32/f64 atomic_add whose old value is unused: the runtime can defer
/// it (its log takes those two types).
bool isDeferrableAdd(Operation *op) {
  if (!isFloatAdd(op) || !op->getResult(0).use_empty())
    return false;
  Type element = getElementTypeOrSelf(cast<AtomicAddOp>(op).getValue().getType());
  return element.isF32() || element.isF64();
}

/// The array an atomic combines into.
Value atomicArray(Operation *op) {
  return cast<ArrayElementAccessOpInterface>(op).getAccessedArray();
}

/// Whether `fn` or a function it calls contains an atomic (or a print).
bool containsAtomics(func::FuncOp fn, DenseSet<Operation *> &visited) {
  if (!visited.insert(fn).second)
    return false;
  bool found = false;
  fn.walk([&](Operation *op) {
    if (isAtomicOp(op) || isa<PrintOp>(op)) {
      found = true;
      return WalkResult::interrupt();
    }
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
      if (callee && !callee.isExternal() && containsAtomics(callee, visited)) {
        found = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return found;
}

StringRef classify(func::FuncOp kernel) {
  // Arrays float adds are deferred into, and whether anything else touches
  // them (each use of such an array other than a deferrable add).
  DenseSet<Value> deferredInto;
  bool serial = false;
  kernel.walk([&](Operation *op) {
    if (isAtomicOp(op)) {
      if (!op->getResult(0).use_empty() || isa<AtomicExchOp, AtomicCasOp>(op))
        serial = true; // the old (or, exch/cas: the new) value depends on
                       // the threads' order
      else if (isDeferrableAdd(op))
        deferredInto.insert(atomicArray(op));
      else if (isFloatAdd(op))
        serial = true; // (f16) not deferrable: thread order on one thread
      return;
    }
    if (isa<PrintOp>(op))
      serial = true; // lines in thread order
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
      DenseSet<Operation *> visited;
      if (!callee || callee.isExternal() || containsAtomics(callee, visited))
        serial = true;
    }
  });
  if (serial)
    return "serial";
  if (deferredInto.empty())
    return "parallel";
  for (Value array : deferredInto) {
    // Only a kernel argument is known not to overlap the others (the runtime
    // checks each launch's arguments).
    if (!isa<BlockArgument>(array) ||
        cast<BlockArgument>(array).getOwner()->getParentOp() != kernel)
      return "serial";
    for (Operation *user : array.getUsers()) {
      if (isa<DimOp>(user))
        continue; // its extents, not its memory
      if (!isDeferrableAdd(user) || atomicArray(user) != array)
        return "serial";
    }
  }
  return "ordered";
}

struct AdjitAtomicOrderPass
    : adjit::impl::AdjitAtomicOrderBase<AdjitAtomicOrderPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (isKernel(kernel))
        kernel->setAttr(AdjitDialect::getAtomicOrderAttrName(),
                        StringAttr::get(kernel.getContext(), classify(kernel)));
  }
};

} // namespace
