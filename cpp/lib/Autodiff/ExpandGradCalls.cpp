//===- ExpandGradCalls.cpp - wp.grad of device functions, in forward mode -===//
//
// Algorithm, per `adjit.grad_call @f(args...)` (see Passes.td for the
// contract): copy f's body at the call with f's arguments bound to the
// call's, through adjit-tangent's tangentBlock, with one tangent lane per
// scalar component of the arguments, lane k seeded with the unit tangent of
// component k. Lane k's tangent of f's result is then the derivative along
// component k; each argument's lanes are gathered into its gradient (a
// vector.from_elements for a vector argument), which replaces the call's
// result for that argument.
//
//===----------------------------------------------------------------------===//

#include "TangentInternal.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITEXPANDGRADCALLS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::autodiff;

namespace {

/// The scalar components of a value of `type` (1 for a scalar).
int64_t componentCount(Type type) {
  if (auto v = dyn_cast<VectorType>(type))
    return v.getNumElements();
  return 1;
}

/// A value of `type` that is zero but for a one at flat component `k`.
Value unitSeed(OpBuilder &b, Location loc, Type type, int64_t k) {
  if (auto v = dyn_cast<VectorType>(type)) {
    Type element = v.getElementType();
    SmallVector<Attribute> values(v.getNumElements(),
                                  FloatAttr::get(element, 0.0));
    values[k] = FloatAttr::get(element, 1.0);
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v, values));
  }
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, 1.0));
}

/// Replaces `call` (adjit.grad_call @f) by f's body differentiated in
/// forward mode: one lane per argument component, seeded with a unit
/// tangent; each lane's tangent of the result is one gradient component.
LogicalResult expandGradCall(GradCallOp call, Operation *module) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!fn || fn.isExternal() || !llvm::hasSingleElement(fn.getBody()))
    return call.emitOpError("needs a device function with a body of one "
                            "block (structured control flow) to differentiate");
  Block &body = fn.getBody().front();
  Value result = cast<func::ReturnOp>(body.getTerminator()).getOperand(0);
  Location loc = call.getLoc();
  unsigned lanes = 0;
  for (Type t : call.getOperandTypes())
    lanes += componentCount(t);

  OpBuilder b(call);
  IRMapping map;
  TangentState s(map, module, lanes);
  unsigned lane = 0;
  for (auto [arg, operand] : llvm::zip(body.getArguments(), call.getOperands())) {
    map.map(arg, operand);
    for (int64_t k = 0; k < componentCount(operand.getType()); ++k) {
      s.setLane(lane++);
      s.setTangent(arg, unitSeed(b, loc, operand.getType(), k));
    }
  }
  if (failed(tangentBlock(body, b, s)))
    return failure();
  SmallVector<Value> grads;
  lane = 0;
  for (Type t : call.getOperandTypes()) {
    SmallVector<Value> components;
    for (int64_t k = 0; k < componentCount(t); ++k) {
      s.setLane(lane++);
      components.push_back(s.tangentOrZero(b, loc, result));
    }
    grads.push_back(isa<VectorType>(t)
                        ? vector::FromElementsOp::create(b, loc, t, components)
                              .getResult()
                        : components.front());
  }
  call.replaceAllUsesWith(grads);
  call.erase();
  return success();
}

struct AdjitExpandGradCallsPass
    : adjit::impl::AdjitExpandGradCallsBase<AdjitExpandGradCallsPass> {
  void runOnOperation() override {
    SmallVector<GradCallOp> calls;
    getOperation().walk([&](GradCallOp call) { calls.push_back(call); });
    for (GradCallOp call : calls)
      if (failed(expandGradCall(call, getOperation())))
        return signalPassFailure();
  }
};

} // namespace
