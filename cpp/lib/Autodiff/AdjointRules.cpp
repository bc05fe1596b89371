//===- AdjointRules.cpp - reverse-mode derivative rules, one per op -------===//
//
// Each rule propagates the adjoints of an op's results to its operands; it
// is attached to the op as an AdjointOpInterface model. Rules are written
// once per op for every type the op accepts (scalars and vectors alike: the
// arithmetic below is elementwise on both).
//
//===----------------------------------------------------------------------===//

#include "adjit/Adjoint.h"
#include "adjit/AdjitDialect.h"

#include "Derivatives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::derivatives;

#include "AdjointInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// AdjointState
//===----------------------------------------------------------------------===//

bool AdjointState::isActive(Type type) {
  if (auto vecTy = dyn_cast<VectorType>(type))
    type = vecTy.getElementType();
  return isa<FloatType>(type);
}

Value AdjointState::adjointOrZero(OpBuilder &b, Location loc, Value v) {
  if (Value adj = adjoint(v))
    return adj;
  return splatConstant(b, loc, v.getType(), 0.0);
}

void AdjointState::accumulate(OpBuilder &b, Location loc, Value v,
                              Value contribution) {
  if (!isActive(v.getType()) || !contribution)
    return;
  Value &slot = getAdjoints()[v];
  slot = slot ? arith::AddFOp::create(b, loc, slot, contribution).getResult()
              : contribution;
}

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// adjoint(v)[pos] += contribution: only that component of v's adjoint changes.
void accumulateComponent(AdjointState &s, OpBuilder &b, Location loc, Value v,
                         ArrayRef<int64_t> position, Value contribution) {
  if (!AdjointState::isActive(v.getType()))
    return;
  Value &slot = s.getAdjoints()[v];
  if (!slot) {
    Value zero = splatConstant(b, loc, v.getType(), 0.0);
    slot = vector::InsertOp::create(b, loc, contribution, zero, position);
    return;
  }
  Value old = vector::ExtractOp::create(b, loc, slot, position);
  slot = vector::InsertOp::create(b, loc, add(b, loc, old, contribution), slot,
                                  position);
}

SmallVector<Value> mapped(AdjointState &s, ValueRange values) {
  SmallVector<Value> out;
  for (Value v : values)
    out.push_back(s.primal(v));
  return out;
}

/// Attaches `Rule` to `OpT` as its AdjointOpInterface model.
template <typename OpT, LogicalResult (*Rule)(OpT, OpBuilder &, AdjointState &)>
struct RuleModel
    : AdjointOpInterface::ExternalModel<RuleModel<OpT, Rule>, OpT> {
  LogicalResult emitAdjoint(Operation *op, OpBuilder &b,
                            AdjointState &s) const {
    return Rule(cast<OpT>(op), b, s);
  }
};

template <typename OpT, LogicalResult (*Rule)(OpT, OpBuilder &, AdjointState &)>
void attach(MLIRContext *ctx) {
  OpT::template attachInterface<RuleModel<OpT, Rule>>(*ctx);
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

LogicalResult addfRule(arith::AddFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    s.accumulate(b, op.getLoc(), op.getLhs(), adj);
    s.accumulate(b, op.getLoc(), op.getRhs(), adj);
  }
  return success();
}

LogicalResult subfRule(arith::SubFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    s.accumulate(b, op.getLoc(), op.getLhs(), adj);
    s.accumulate(b, op.getLoc(), op.getRhs(), neg(b, op.getLoc(), adj));
  }
  return success();
}

LogicalResult mulfRule(arith::MulFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    s.accumulate(b, loc, op.getLhs(), mul(b, loc, adj, s.primal(op.getRhs())));
    s.accumulate(b, loc, op.getRhs(), mul(b, loc, adj, s.primal(op.getLhs())));
  }
  return success();
}

LogicalResult divfRule(arith::DivFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value rhs = s.primal(op.getRhs());
    Value quotient = s.primal(op.getResult());
    Value adjLhs = div(b, loc, adj, rhs);
    s.accumulate(b, loc, op.getLhs(), adjLhs);
    // d(a/b)/db = -(a/b)/b
    s.accumulate(b, loc, op.getRhs(), neg(b, loc, mul(b, loc, adjLhs, quotient)));
  }
  return success();
}

LogicalResult remfRule(arith::RemFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    s.accumulate(b, loc, op.getLhs(), adj);
    Value dy = dRemDy(b, loc, s.primal(op.getLhs()), s.primal(op.getRhs()));
    s.accumulate(b, loc, op.getRhs(), mul(b, loc, adj, dy));
  }
  return success();
}

LogicalResult negfRule(arith::NegFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult()))
    s.accumulate(b, op.getLoc(), op.getOperand(), neg(b, op.getLoc(), adj));
  return success();
}

/// max/min: the adjoint flows to the operand that was selected (lhs on ties).
template <typename OpT, arith::CmpFPredicate Pred>
LogicalResult minMaxRule(OpT op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value pickLhs =
        picksLhs(b, loc, Pred, s.primal(op.getLhs()), s.primal(op.getRhs()));
    Value zero = cst(b, loc, adj, 0.0);
    s.accumulate(b, loc, op.getLhs(),
                 arith::SelectOp::create(b, loc, pickLhs, adj, zero));
    s.accumulate(b, loc, op.getRhs(),
                 arith::SelectOp::create(b, loc, pickLhs, zero, adj));
  }
  return success();
}

LogicalResult selectRule(arith::SelectOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value cond = s.primal(op.getCondition());
    Value zero = cst(b, loc, adj, 0.0);
    s.accumulate(b, loc, op.getTrueValue(),
                 arith::SelectOp::create(b, loc, cond, adj, zero));
    s.accumulate(b, loc, op.getFalseValue(),
                 arith::SelectOp::create(b, loc, cond, zero, adj));
  }
  return success();
}

LogicalResult extfRule(arith::ExtFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult()))
    s.accumulate(b, op.getLoc(), op.getIn(),
                 arith::TruncFOp::create(b, op.getLoc(), op.getIn().getType(), adj));
  return success();
}

LogicalResult truncfRule(arith::TruncFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult()))
    s.accumulate(b, op.getLoc(), op.getIn(),
                 arith::ExtFOp::create(b, op.getLoc(), op.getIn().getType(), adj));
  return success();
}

//===----------------------------------------------------------------------===//
// math: d/dx f(x) in terms of x (the operand) and r (the result)
//===----------------------------------------------------------------------===//

template <typename OpT, Value (*Derivative)(OpBuilder &, Location, Value x,
                                            Value r)>
LogicalResult unaryRule(OpT op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value d = Derivative(b, loc, s.primal(op.getOperand()),
                         s.primal(op.getResult()));
    s.accumulate(b, loc, op.getOperand(), mul(b, loc, adj, d));
  }
  return success();
}

/// Piecewise-constant ops (floor, ceil, round): zero derivative.
template <typename OpT>
LogicalResult zeroRule(OpT, OpBuilder &, AdjointState &) {
  return success();
}

LogicalResult powfRule(math::PowFOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value x = s.primal(op.getLhs()), y = s.primal(op.getRhs());
    Value r = s.primal(op.getResult());
    // d/dx = y * x^(y-1); d/dy = r * log(x)
    s.accumulate(b, loc, op.getLhs(), mul(b, loc, adj, dPowDx(b, loc, x, y)));
    s.accumulate(b, loc, op.getRhs(), mul(b, loc, adj, dPowDy(b, loc, x, r)));
  }
  return success();
}

LogicalResult atan2Rule(math::Atan2Op op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value y = s.primal(op.getLhs()), x = s.primal(op.getRhs());
    Value scale = div(b, loc, adj, atan2Norm(b, loc, y, x));
    s.accumulate(b, loc, op.getLhs(), mul(b, loc, scale, x));
    s.accumulate(b, loc, op.getRhs(), neg(b, loc, mul(b, loc, scale, y)));
  }
  return success();
}

LogicalResult copysignRule(math::CopySignOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult())) {
    Location loc = op.getLoc();
    Value d = dCopySignDx(b, loc, s.primal(op.getLhs()), s.primal(op.getRhs()));
    s.accumulate(b, loc, op.getLhs(), mul(b, loc, adj, d));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// vector
//===----------------------------------------------------------------------===//

LogicalResult fromElementsRule(vector::FromElementsOp op, OpBuilder &b,
                               AdjointState &s) {
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  ArrayRef<int64_t> shape = op.getType().getShape();
  SmallVector<int64_t> pos(shape.size(), 0);
  for (auto [linear, element] : llvm::enumerate(op.getElements())) {
    int64_t rest = linear;
    for (int d = shape.size() - 1; d >= 0; --d) {
      pos[d] = rest % shape[d];
      rest /= shape[d];
    }
    s.accumulate(b, op.getLoc(), element,
                 vector::ExtractOp::create(b, op.getLoc(), adj, pos));
  }
  return success();
}

LogicalResult toElementsRule(vector::ToElementsOp op, OpBuilder &b,
                             AdjointState &s) {
  if (llvm::none_of(op.getResults(), [&](Value r) { return s.adjoint(r); }))
    return success();
  Location loc = op.getLoc();
  SmallVector<Value> elements;
  for (Value r : op.getResults())
    elements.push_back(s.adjointOrZero(b, loc, r));
  s.accumulate(b, loc, op.getSource(),
               vector::FromElementsOp::create(b, loc, op.getSource().getType(),
                                              elements));
  return success();
}

LogicalResult vectorExtractRule(vector::ExtractOp op, OpBuilder &b,
                                AdjointState &s) {
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  if (!op.getDynamicPosition().empty())
    return op.emitOpError("has no derivative rule for dynamic positions");
  accumulateComponent(s, b, op.getLoc(), op.getSource(),
                      op.getStaticPosition(), adj);
  return success();
}

/// The rule of a functional component write: the value's adjoint takes the
/// component of the result's adjoint; the destination's adjoint is the
/// result's with that component zeroed (the written component was replaced).
LogicalResult insertAdjoint(Operation *op, Value value, Value dest,
                            Value result, ArrayRef<int64_t> position,
                            OpBuilder &b, AdjointState &s) {
  Value adj = s.adjoint(result);
  if (!adj)
    return success();
  Location loc = op->getLoc();
  s.accumulate(b, loc, value, vector::ExtractOp::create(b, loc, adj, position));
  Value zero = splatConstant(b, loc, value.getType(), 0.0);
  s.accumulate(b, loc, dest, vector::InsertOp::create(b, loc, zero, adj, position));
  return success();
}

LogicalResult vectorInsertRule(vector::InsertOp op, OpBuilder &b,
                               AdjointState &s) {
  if (!s.adjoint(op.getResult()))
    return success();
  if (!op.getDynamicPosition().empty())
    return op.emitOpError("has no derivative rule for dynamic positions");
  return insertAdjoint(op, op.getValueToStore(), op.getDest(), op.getResult(),
                       op.getStaticPosition(), b, s);
}

LogicalResult broadcastRule(vector::BroadcastOp op, OpBuilder &b,
                            AdjointState &s) {
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  if (isa<VectorType>(op.getSource().getType()))
    return op.emitOpError("has no derivative rule for a vector source");
  Location loc = op.getLoc();
  auto vecTy = cast<VectorType>(adj.getType());
  auto flatTy = VectorType::get({vecTy.getNumElements()}, vecTy.getElementType());
  Value flat = vector::ShapeCastOp::create(b, loc, flatTy, adj);
  s.accumulate(b, loc, op.getSource(),
               vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, flat));
  return success();
}

LogicalResult reductionRule(vector::ReductionOp op, OpBuilder &b,
                            AdjointState &s) {
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  if (op.getKind() != vector::CombiningKind::ADD)
    return op.emitOpError("has a derivative rule only for the add kind");
  Location loc = op.getLoc();
  s.accumulate(b, loc, op.getVector(),
               vector::BroadcastOp::create(b, loc, op.getVector().getType(), adj));
  if (Value acc = op.getAcc())
    s.accumulate(b, loc, acc, adj);
  return success();
}

LogicalResult transposeRule(vector::TransposeOp op, OpBuilder &b,
                            AdjointState &s) {
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  ArrayRef<int64_t> perm = op.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  s.accumulate(b, op.getLoc(), op.getVector(),
               vector::TransposeOp::create(b, op.getLoc(), adj, inverse));
  return success();
}

// C = A B + acc: dA = dC B^T, dB = A^T dC, dacc = dC (and likewise with
// A or B transposed: the products in an adjoint kernel).
LogicalResult contractRule(vector::ContractionOp op, OpBuilder &b,
                           AdjointState &s) {
  std::optional<MatmulForm> form = matmulForm(op);
  if (!form)
    return op.emitOpError("has no derivative rule: only matrix products "
                          "(tile_matmul's form) are differentiated");
  Value adj = s.adjoint(op.getResult());
  if (!adj)
    return success();
  Location loc = op.getLoc();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Value a = s.primal(lhs), bb = s.primal(rhs);
  bool tA = form->transposeLhs, tB = form->transposeRhs;
  Value zeroA = splatConstant(b, loc, lhs.getType(), 0.0);
  Value zeroB = splatConstant(b, loc, rhs.getType(), 0.0);
  s.accumulate(b, loc, lhs,
               tA ? matmul(b, loc, bb, adj, zeroA, tB, true)
                  : matmul(b, loc, adj, bb, zeroA, false, !tB));
  s.accumulate(b, loc, rhs,
               tB ? matmul(b, loc, adj, a, zeroB, true, tA)
                  : matmul(b, loc, a, adj, zeroB, !tA, false));
  s.accumulate(b, loc, op.getAcc(), adj);
  return success();
}

LogicalResult shapeCastRule(vector::ShapeCastOp op, OpBuilder &b,
                            AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult()))
    s.accumulate(b, op.getLoc(), op.getSource(),
                 vector::ShapeCastOp::create(b, op.getLoc(),
                                             op.getSource().getType(), adj));
  return success();
}

//===----------------------------------------------------------------------===//
// adjit
//===----------------------------------------------------------------------===//

LogicalResult extractRule(ExtractOp op, OpBuilder &b, AdjointState &s) {
  if (Value adj = s.adjoint(op.getResult()))
    accumulateComponent(s, b, op.getLoc(), op.getSource(), op.getPosition(), adj);
  return success();
}

LogicalResult insertRule(InsertOp op, OpBuilder &b, AdjointState &s) {
  return insertAdjoint(op, op.getValue(), op.getDest(), op.getResult(),
                       op.getPosition(), b, s);
}

Value gradOf(Operation *op, Value array, AdjointState &s) {
  Value grad = s.gradArray(array);
  if (!grad && isAddressedArray(array))
    op->emitOpError("writes into an array at an address (a geometry "
                    "object's memory), which is constant for "
                    "differentiation: it has no gradient array");
  else if (!grad)
    op->emitOpError("accesses an array that is not a kernel argument");
  return grad;
}

/// Reads the element of `array` at `indices`, or its component at `position`
/// when that is not empty.
Value loadElement(OpBuilder &b, Location loc, Type type, Value array,
                  ValueRange indices, ArrayRef<int64_t> position) {
  if (position.empty())
    return LoadOp::create(b, loc, type, array, indices);
  return LoadComponentOp::create(b, loc, type, array, indices, position);
}

/// Writes `value` to the element of `array` at `indices`, or to its
/// component at `position` when that is not empty.
void storeElement(OpBuilder &b, Location loc, Value value, Value array,
                  ValueRange indices, ArrayRef<int64_t> position) {
  if (position.empty())
    StoreOp::create(b, loc, value, array, indices);
  else
    StoreComponentOp::create(b, loc, value, array, indices, position);
}

/// A read of x[i] (or a component of it): its adjoint is added into
/// grad_x[i]: atomically, since other threads may read the same element,
/// unless every access to x is to the thread's own element.
template <typename OpT>
LogicalResult loadRule(OpT op, OpBuilder &b, AdjointState &s,
                       ArrayRef<int64_t> position) {
  Value adj = s.adjoint(op.getResult());
  // Memory at an address is constant: its reads get no gradient.
  if (!adj || isAddressedArray(op.getArray()))
    return success();
  Value grad = gradOf(op, op.getArray(), s);
  if (!grad)
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> indices = mapped(s, op.getIndices());
  if (!s.isOwnElementOnly(op.getArray())) {
    AtomicAddOp::create(b, loc, adj, grad, indices, position);
    return success();
  }
  Value old = loadElement(b, loc, adj.getType(), grad, indices, position);
  storeElement(b, loc, add(b, loc, old, adj), grad, indices, position);
  return success();
}

LogicalResult arrayLoadRule(LoadOp op, OpBuilder &b, AdjointState &s) {
  return loadRule(op, b, s, {});
}
LogicalResult componentLoadRule(LoadComponentOp op, OpBuilder &b,
                                AdjointState &s) {
  return loadRule(op, b, s, op.getPosition());
}

/// The one store rule: read the gradient slot the store wrote, add it into
/// the stored value's adjoint, and zero the slot (the store overwrote
/// whatever was there before, which therefore gets no gradient).
template <typename OpT>
LogicalResult storeRule(OpT op, OpBuilder &b, AdjointState &s,
                        ArrayRef<int64_t> position, bool zeroSlot) {
  Value value = op.getValue();
  if (!AdjointState::isActive(value.getType()))
    return success();
  Value grad = gradOf(op, op.getArray(), s);
  if (!grad)
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> indices = mapped(s, op.getIndices());
  Type type = value.getType();
  s.accumulate(b, loc, value,
               loadElement(b, loc, type, grad, indices, position));
  if (zeroSlot)
    storeElement(b, loc, splatConstant(b, loc, type, 0.0), grad, indices,
                 position);
  return success();
}

LogicalResult arrayStoreRule(StoreOp op, OpBuilder &b, AdjointState &s) {
  return storeRule(op, b, s, {}, /*zeroSlot=*/true);
}
LogicalResult componentStoreRule(StoreComponentOp op, OpBuilder &b,
                                 AdjointState &s) {
  return storeRule(op, b, s, op.getPosition(), /*zeroSlot=*/true);
}
/// An accumulation keeps what was there: the slot's gradient also stays.
LogicalResult atomicAddRule(AtomicAddOp op, OpBuilder &b, AdjointState &s) {
  if (s.adjoint(op.getResult()))
    return op.emitOpError("returns an old value that is used in a "
                          "differentiated computation; that has no derivative "
                          "rule yet");
  return storeRule(op, b, s, op.getPosition(), /*zeroSlot=*/false);
}

/// A float atomic min/max (integer ones carry no gradient): the element ends
/// as the smallest (largest) of its old value and the values the threads
/// gave, so each value's adjoint is the element's if it equals the element's
/// final value (`final`, the array as the launch left it: an argument of the
/// adjoint kernel), else zero. The old value's share (the element's
/// gradient kept where no thread changed it, zeroed where one did) is for
/// the launcher to apply after the adjoint kernel: a thread zeroing it here
/// would race with the threads still reading it. Ties (where min/max has no
/// derivative) give each tied value the element's adjoint.
template <typename OpT>
LogicalResult atomicMinMaxRule(OpT op, OpBuilder &b, AdjointState &s) {
  if (!AdjointState::isActive(op.getValue().getType()))
    return success();
  if (s.adjoint(op.getResult()))
    return op.emitOpError("returns an old value that is used in a "
                          "differentiated computation; that has no derivative "
                          "rule yet");
  Value final = s.finalArray(op.getArray());
  Value grad = s.gradArray(op.getArray());
  if (!final || !grad)
    return op.emitOpError("writes an array that is not a kernel argument; "
                          "its final values are unknown to the adjoint");
  Location loc = op.getLoc();
  Type type = op.getValue().getType();
  SmallVector<Value> indices = mapped(s, op.getIndices());
  auto read = [&](Value array) -> Value {
    if (op.getPosition().empty())
      return LoadOp::create(b, loc, type, array, indices);
    return LoadComponentOp::create(b, loc, type, array, indices, op.getPosition());
  };
  Value won = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                    s.primal(op.getValue()), read(final));
  Value contribution = arith::SelectOp::create(
      b, loc, won, read(grad), splatConstant(b, loc, type, 0.0));
  s.accumulate(b, loc, op.getValue(), contribution);
  return success();
}

/// A call to a device function with a hand-written adjoint (`func_grad`):
/// `@f` carries `adjit.custom_adjoint = @f_grad`, which takes f's arguments
/// followed by the adjoints of f's results and returns the adjoints of f's
/// float arguments, in order.
LogicalResult callRule(CallOp op, OpBuilder &b, AdjointState &s) {
  if (llvm::none_of(op.getResults(), [&](Value r) { return s.adjoint(r); }))
    return success();
  auto callee = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(s.getModule(), op.getCalleeAttr()));
  auto grad = callee ? callee->getAttrOfType<FlatSymbolRefAttr>(
                        AdjitDialect::getCustomAdjointAttrName())
                     : FlatSymbolRefAttr();
  if (!grad)
    return op.emitOpError("calls a device function without a custom adjoint; "
                          "calls must be inlined before adjit-adjoint");
  auto gradFn = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(s.getModule(), grad));
  if (!gradFn)
    return op.emitOpError() << "custom adjoint " << grad << " not found";
  Location loc = op.getLoc();
  SmallVector<Value> args = mapped(s, op.getOperands());
  for (Value r : op.getResults())
    args.push_back(AdjointState::isActive(r.getType()) ? s.adjointOrZero(b, loc, r)
                                                       : s.primal(r));
  auto call = CallOp::create(b, loc, gradFn, args);
  unsigned next = 0;
  for (Value operand : op.getOperands()) {
    if (!AdjointState::isActive(operand.getType()))
      continue;
    if (next >= call.getNumResults())
      return op.emitOpError() << "custom adjoint " << grad
                              << " returns fewer adjoints than the call has "
                                 "float arguments";
    s.accumulate(b, loc, operand, call.getResult(next++));
  }
  return success();
}

/// Attaches this file's rules to the ops of `DialectT` that the rule table
/// (DerivativeRules.def) gives an adjoint rule.
template <typename DialectT> void attachRulesOf(MLIRContext *ctx, DialectT *) {
#define ADJIT_RULE(DIALECT, OP, ...)                                           \
  if constexpr (std::is_same_v<DialectT, DIALECT>)                             \
    attach<OP, __VA_ARGS__>(ctx);
#define ADJIT_ADJOINT_ONLY(DIALECT, OP, WHY, ...) ADJIT_RULE(DIALECT, OP, __VA_ARGS__)
#include "DerivativeRules.def"
}

} // namespace

void mlir::adjit::registerAdjointRules(DialectRegistry &registry) {
#define ADJIT_RULE_DIALECT(DIALECT) registry.addExtension(&attachRulesOf<DIALECT>);
#include "DerivativeRules.def"
}
