//===- Tangent.h - forward-mode differentiation of adjit kernels -*- C++ -*-===//

#ifndef ADJIT_TANGENT_H
#define ADJIT_TANGENT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
class DialectRegistry;
namespace adjit {

/// What the tangent rules see while the tangent pass copies a kernel
/// forwards: the copied primal values and the tangent of each primal value
/// (for a float array, its tangent array).
class TangentState {
public:
  TangentState(IRMapping &primal, Operation *module)
      : primalMap(primal), module(module) {}

  /// Whether values of `type` carry tangents: float scalars and vectors, and
  /// arrays of them (whose tangent is a tangent array).
  static bool isActive(Type type);

  /// The value `v` of the primal kernel, as copied into the tangent kernel.
  Value primal(Value v) const { return primalMap.lookupOrDefault(v); }

  /// The tangent of `v`, or null if it is zero (or `v` is inactive).
  Value tangent(Value v) const { return tangents.lookup(v); }

  /// The tangent of `v`, materializing a zero when it has none. Not for
  /// arrays: an array's tangent is an argument (see `tangent`).
  Value tangentOrZero(OpBuilder &b, Location loc, Value v);

  /// Records `t` as the tangent of `v` (null: zero).
  void setTangent(Value v, Value t) {
    if (t)
      tangents[v] = t;
    else
      tangents.erase(v);
  }

  /// The module holding the kernel (symbol lookups for calls).
  Operation *getModule() const { return module; }

  IRMapping &getPrimalMap() { return primalMap; }

private:
  IRMapping &primalMap;
  DenseMap<Value, Value> tangents;
  Operation *module;
};

/// Attaches the tangent rules (TangentOpInterface models) to the adjit,
/// arith, math and vector ops.
void registerTangentRules(DialectRegistry &registry);

} // namespace adjit
} // namespace mlir

#include "TangentInterface.h.inc"

#endif // ADJIT_TANGENT_H
