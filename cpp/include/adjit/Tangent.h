//===- Tangent.h - forward-mode differentiation of adjit kernels -*- C++ -*-===//

#ifndef ADJIT_TANGENT_H
#define ADJIT_TANGENT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class DialectRegistry;
namespace adjit {

/// What the tangent rules see while the tangent pass copies a kernel
/// forwards: the copied primal values and the tangent of each primal value
/// (for a float array or stack buffer, its tangent array or buffer).
///
/// A kernel with `lanes` > 1 carries that many independent tangents (seed
/// directions) beside one primal: each rule runs once per lane, with
/// `tangent` and `setTangent` reading and writing the current lane's.
class TangentState {
public:
  TangentState(IRMapping &primal, Operation *module, unsigned lanes = 1)
      : primalMap(primal), tangents(lanes), module(module) {}

  /// Whether values of `type` carry tangents: float scalars and vectors, and
  /// arrays and memrefs of them (whose tangent is an array or memref).
  static bool isActive(Type type);

  /// Whether `type` is memory (an array or memref) whose tangent is memory.
  static bool isMemory(Type type);

  /// The value `v` of the primal kernel, as copied into the tangent kernel.
  Value primal(Value v) const { return primalMap.lookupOrDefault(v); }

  /// The tangent of `v` in the current lane, or null if it is zero (or `v`
  /// is inactive).
  Value tangent(Value v) const { return tangents[lane].lookup(v); }

  /// Whether `v` has a tangent in any lane.
  bool hasTangent(Value v) const {
    return llvm::any_of(tangents, [&](auto &map) { return map.count(v); });
  }

  /// The tangent of `v`, materializing a zero when it has none. Not for
  /// memory: an array's tangent is an argument (see `tangent`).
  Value tangentOrZero(OpBuilder &b, Location loc, Value v);

  /// Records `t` as the tangent of `v` in the current lane (null: zero).
  void setTangent(Value v, Value t) {
    if (t)
      tangents[lane][v] = t;
    else
      tangents[lane].erase(v);
  }

  unsigned getLanes() const { return tangents.size(); }
  unsigned getLane() const { return lane; }
  void setLane(unsigned l) { lane = l; }

  /// The module holding the kernel (symbol lookups for calls).
  Operation *getModule() const { return module; }

  IRMapping &getPrimalMap() { return primalMap; }

private:
  IRMapping &primalMap;
  SmallVector<DenseMap<Value, Value>> tangents;
  unsigned lane = 0;
  Operation *module;
};

/// Attaches the tangent rules (TangentOpInterface models) to the adjit,
/// arith, math and vector ops.
void registerTangentRules(DialectRegistry &registry);

} // namespace adjit
} // namespace mlir

#include "TangentInterface.h.inc"

#endif // ADJIT_TANGENT_H
