//===- ArrayAccessAnalysis.h - how a kernel touches its arrays --*- C++ -*-===//
//
// The explicit alias analysis of adjit kernels. Arrays are only ever kernel
// arguments (locals are values), so a kernel's memory behaviour is fully
// described per array argument: which ops read it, which write it, and
// whether every access is to the calling thread's own element (its index is
// exactly the thread's coordinates), in which case no two threads touch the
// same element. Overlap between different arguments is a launch-time
// question (the runtime checks the buffers); this analysis answers what the
// compiler can know.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_ARRAYACCESSANALYSIS_H
#define ADJIT_ARRAYACCESSANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::adjit {

class ArrayAccessAnalysis {
public:
  struct ArgumentAccess {
    SmallVector<Operation *> reads;  // loads, atomics whose old value is used
    SmallVector<Operation *> writes; // store, store_component, atomics
    /// Every access is to the calling thread's own element.
    bool ownElementOnly = true;
    bool isRead() const { return !reads.empty(); }
    bool isWritten() const { return !writes.empty(); }
  };

  explicit ArrayAccessAnalysis(func::FuncOp kernel);

  /// The accesses to array argument `arg` (null for non-array arguments).
  const ArgumentAccess *lookup(Value arg) const;

  /// Whether `indices` are exactly the coordinates of one adjit.tid, in
  /// order (looking through index casts the frontend inserts), so the access
  /// is to the calling thread's own element.
  static bool isOwnElement(ValueRange indices);

  /// "read", "write", "read-write" or "none", with ", own element" when
  /// every access is to the thread's own element.
  static std::string describe(const ArgumentAccess &access);

  /// The same as AdjitArgumentAccess bit flags (adjit-c/Adjit.h).
  static uint32_t flags(const ArgumentAccess &access);

private:
  DenseMap<Value, ArgumentAccess> accesses;
};

} // namespace mlir::adjit

#endif // ADJIT_ARRAYACCESSANALYSIS_H
