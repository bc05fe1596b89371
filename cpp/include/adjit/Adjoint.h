//===- Adjoint.h - reverse-mode differentiation of adjit kernels -*- C++ -*-===//

#ifndef ADJIT_ADJOINT_H
#define ADJIT_ADJOINT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class DialectRegistry;
namespace adjit {

/// What the derivative rules see while the adjoint pass walks a kernel
/// backwards: the replayed primal values, the adjoints accumulated so far and
/// the gradient arrays.
///
/// A kernel with `lanes` > 1 carries that many independent adjoints (seeds)
/// beside one replay of the primal: each rule runs once per lane, and
/// `adjoint`, `accumulate`, `getAdjoints` and `gradArray` are the current
/// lane's.
class AdjointState {
public:
  AdjointState(IRMapping *primal, SmallVector<DenseMap<Value, Value>> gradArrays)
      : primalMap(primal), gradArrays(std::move(gradArrays)),
        adjoints(this->gradArrays.size()) {}

  /// Whether values of `type` carry adjoints (float scalars and vectors).
  static bool isActive(Type type);

  /// The value `v` of the primal kernel, as replayed in the adjoint kernel.
  Value primal(Value v) const { return primalMap->lookupOrDefault(v); }

  /// The adjoint accumulated for `v` so far in the current lane, or null if
  /// none (zero).
  Value adjoint(Value v) const { return adjoints[lane].lookup(v); }

  /// Whether `v` has an adjoint in any lane.
  bool hasAdjoint(Value v) const {
    return llvm::any_of(adjoints, [&](auto &map) { return map.count(v); });
  }

  /// The adjoint of `v`, materializing a zero when none was accumulated.
  Value adjointOrZero(OpBuilder &b, Location loc, Value v);

  /// adjoint(v) += contribution, for active `v`; a no-op for inactive values.
  void accumulate(OpBuilder &b, Location loc, Value v, Value contribution);

  /// The current lane's gradient array of a primal kernel's array argument.
  Value gradArray(Value primalArray) const {
    return gradArrays[lane].lookup(primalArray);
  }

  /// The array `primalArray` as the forward launch left it (an argument of
  /// the adjoint kernel for each array a float atomic min/max writes), or
  /// null.
  Value finalArray(Value primalArray) const {
    return finalArrays.lookup(primalArray);
  }
  void setFinalArray(Value primalArray, Value final) {
    finalArrays[primalArray] = final;
  }

  /// Whether every access of the kernel to `primalArray` is to the calling
  /// thread's own element (ArrayAccessAnalysis), so its gradient elements
  /// are private to threads and need no atomics.
  bool isOwnElementOnly(Value primalArray) const {
    return ownElementArrays.contains(primalArray);
  }
  void markOwnElementOnly(Value primalArray) {
    ownElementArrays.insert(primalArray);
  }

  /// The module holding the kernel (symbol lookups for custom adjoints).
  Operation *getModule() const { return module; }
  void setModule(Operation *m) { module = m; }

  /// Bytes of loop states per thread a loop reversal may keep beyond its
  /// checkpoints, to recompute less (adjit-adjoint{checkpoint-bytes}).
  int64_t getCheckpointBytes() const { return checkpointBytes; }
  void setCheckpointBytes(int64_t bytes) { checkpointBytes = bytes; }

  unsigned getLanes() const { return adjoints.size(); }
  void setLane(unsigned l) { lane = l; }

  // Used by the pass to reverse regions.
  IRMapping *getPrimalMap() { return primalMap; }
  void setPrimalMap(IRMapping *map) { primalMap = map; }
  DenseMap<Value, Value> &getAdjoints() { return adjoints[lane]; }
  /// Every lane's adjoints (saved and restored around a region).
  SmallVector<DenseMap<Value, Value>> &getAllAdjoints() { return adjoints; }

private:
  IRMapping *primalMap;
  SmallVector<DenseMap<Value, Value>> gradArrays;
  SmallVector<DenseMap<Value, Value>> adjoints;
  DenseMap<Value, Value> finalArrays;
  unsigned lane = 0;
  llvm::SmallDenseSet<Value> ownElementArrays;
  Operation *module = nullptr;
  int64_t checkpointBytes = 0;
};

/// Attaches the derivative rules (AdjointOpInterface models) to the adjit,
/// arith, math and vector ops.
void registerAdjointRules(DialectRegistry &registry);

} // namespace adjit
} // namespace mlir

#include "AdjointInterface.h.inc"

#endif // ADJIT_ADJOINT_H
