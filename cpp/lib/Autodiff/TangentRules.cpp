//===- TangentRules.cpp - forward-mode derivative rules, one per op -------===//
//
// Each rule computes the tangents of an op's results from the tangents of
// its operands (null tangents are zeros: a rule emits nothing for them, so
// a kernel pays only for the inputs that carry tangents); it is attached to
// the op as a TangentOpInterface model. The partial derivatives are those
// the adjoint rules apply (Derivatives.h). Memory ops mirror their primal
// access on the tangent array: a load reads it, a store writes it, an
// atomic add adds into it.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/Adjoint.h"
#include "adjit/Tangent.h"

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

#include "TangentInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// TangentState
//===----------------------------------------------------------------------===//

bool TangentState::isMemory(Type type) {
  return isa<ArrayType, MemRefType>(type);
}

bool TangentState::isActive(Type type) {
  if (auto array = dyn_cast<ArrayType>(type))
    type = array.getElementType();
  else if (auto buffer = dyn_cast<MemRefType>(type))
    type = buffer.getElementType();
  return AdjointState::isActive(type);
}

Value TangentState::tangentOrZero(OpBuilder &b, Location loc, Value v) {
  if (Value t = tangent(v))
    return t;
  assert(!isMemory(v.getType()) && "memory has no zero tangent");
  return splatConstant(b, loc, v.getType(), 0.0);
}

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Attaches `Rule` to `OpT` as its TangentOpInterface model.
template <typename OpT, LogicalResult (*Rule)(OpT, OpBuilder &, TangentState &)>
struct RuleModel
    : TangentOpInterface::ExternalModel<RuleModel<OpT, Rule>, OpT> {
  LogicalResult emitTangent(Operation *op, OpBuilder &b,
                            TangentState &s) const {
    return Rule(cast<OpT>(op), b, s);
  }
};

template <typename OpT, LogicalResult (*Rule)(OpT, OpBuilder &, TangentState &)>
void attach(MLIRContext *ctx) {
  OpT::template attachInterface<RuleModel<OpT, Rule>>(*ctx);
}

/// a + b over tangents, either of which may be null (zero).
Value addTangents(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return add(b, loc, x, y);
}

/// t * d, or null when the tangent t is zero; `d` is built only if needed.
template <typename Fn>
Value scaled(OpBuilder &b, Location loc, Value t, Fn derivative) {
  if (!t)
    return Value();
  return mul(b, loc, t, derivative());
}

SmallVector<Value> mapped(TangentState &s, ValueRange values) {
  SmallVector<Value> out;
  for (Value v : values)
    out.push_back(s.primal(v));
  return out;
}

SmallVector<OpFoldResult> mapped(TangentState &s,
                                 ArrayRef<OpFoldResult> position) {
  SmallVector<OpFoldResult> out;
  for (OpFoldResult p : position) {
    if (auto v = dyn_cast<Value>(p))
      out.push_back(s.primal(v));
    else
      out.push_back(p);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

LogicalResult addfRule(arith::AddFOp op, OpBuilder &b, TangentState &s) {
  s.setTangent(op.getResult(), addTangents(b, op.getLoc(), s.tangent(op.getLhs()),
                                           s.tangent(op.getRhs())));
  return success();
}

LogicalResult subfRule(arith::SubFOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value tl = s.tangent(op.getLhs()), tr = s.tangent(op.getRhs());
  Value t = !tr ? tl : tl ? sub(b, loc, tl, tr) : neg(b, loc, tr);
  s.setTangent(op.getResult(), t);
  return success();
}

LogicalResult mulfRule(arith::MulFOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value lhs = s.primal(op.getLhs()), rhs = s.primal(op.getRhs());
  Value fromLhs = scaled(b, loc, s.tangent(op.getLhs()), [&] { return rhs; });
  Value fromRhs = scaled(b, loc, s.tangent(op.getRhs()), [&] { return lhs; });
  s.setTangent(op.getResult(), addTangents(b, loc, fromLhs, fromRhs));
  return success();
}

LogicalResult divfRule(arith::DivFOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value rhs = s.primal(op.getRhs()), quotient = s.primal(op.getResult());
  Value tl = s.tangent(op.getLhs()), tr = s.tangent(op.getRhs());
  if (!tl && !tr)
    return success();
  // d(a/b) = (da - (a/b) db) / b
  Value numerator = tl;
  if (tr) {
    Value fromRhs = mul(b, loc, quotient, tr);
    numerator = tl ? sub(b, loc, tl, fromRhs) : neg(b, loc, fromRhs);
  }
  s.setTangent(op.getResult(), div(b, loc, numerator, rhs));
  return success();
}

LogicalResult remfRule(arith::RemFOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  // d(x rem y) = dx - trunc(x / y) dy
  Value fromY = scaled(b, loc, s.tangent(op.getRhs()), [&] {
    return dRemDy(b, loc, s.primal(op.getLhs()), s.primal(op.getRhs()));
  });
  s.setTangent(op.getResult(), addTangents(b, loc, s.tangent(op.getLhs()), fromY));
  return success();
}

LogicalResult negfRule(arith::NegFOp op, OpBuilder &b, TangentState &s) {
  if (Value t = s.tangent(op.getOperand()))
    s.setTangent(op.getResult(), neg(b, op.getLoc(), t));
  return success();
}

/// max/min: the tangent of the operand that was selected (lhs on ties).
template <typename OpT, arith::CmpFPredicate Pred>
LogicalResult minMaxRule(OpT op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  if (!s.tangent(op.getLhs()) && !s.tangent(op.getRhs()))
    return success();
  Value pickLhs =
      picksLhs(b, loc, Pred, s.primal(op.getLhs()), s.primal(op.getRhs()));
  s.setTangent(op.getResult(),
               arith::SelectOp::create(b, loc, pickLhs,
                                       s.tangentOrZero(b, loc, op.getLhs()),
                                       s.tangentOrZero(b, loc, op.getRhs())));
  return success();
}

LogicalResult selectRule(arith::SelectOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value tt = s.tangent(op.getTrueValue()), tf = s.tangent(op.getFalseValue());
  if (!tt && !tf)
    return success();
  if (TangentState::isMemory(op.getType()) && !(tt && tf))
    return op.emitOpError("selects an array without a tangent array");
  s.setTangent(op.getResult(),
               arith::SelectOp::create(b, loc, s.primal(op.getCondition()),
                                       s.tangentOrZero(b, loc, op.getTrueValue()),
                                       s.tangentOrZero(b, loc, op.getFalseValue())));
  return success();
}

LogicalResult extfRule(arith::ExtFOp op, OpBuilder &b, TangentState &s) {
  if (Value t = s.tangent(op.getIn()))
    s.setTangent(op.getResult(),
                 arith::ExtFOp::create(b, op.getLoc(), op.getType(), t));
  return success();
}

LogicalResult truncfRule(arith::TruncFOp op, OpBuilder &b, TangentState &s) {
  if (Value t = s.tangent(op.getIn()))
    s.setTangent(op.getResult(),
                 arith::TruncFOp::create(b, op.getLoc(), op.getType(), t));
  return success();
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

template <typename OpT, UnaryDerivative Derivative>
LogicalResult unaryRule(OpT op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  s.setTangent(op.getResult(),
               scaled(b, loc, s.tangent(op.getOperand()), [&] {
                 return Derivative(b, loc, s.primal(op.getOperand()),
                                   s.primal(op.getResult()));
               }));
  return success();
}

/// Piecewise-constant ops (floor, ceil, round) and stop_gradient: zero.
template <typename OpT>
LogicalResult zeroRule(OpT, OpBuilder &, TangentState &) {
  return success();
}

LogicalResult powfRule(math::PowFOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value x = s.primal(op.getLhs()), y = s.primal(op.getRhs());
  Value r = s.primal(op.getResult());
  // Only the partials with a tangent are emitted: d/dy = r log(x) is NaN for
  // x < 0, which must not reach a constant exponent's tangent.
  Value fromX =
      scaled(b, loc, s.tangent(op.getLhs()), [&] { return dPowDx(b, loc, x, y); });
  Value fromY =
      scaled(b, loc, s.tangent(op.getRhs()), [&] { return dPowDy(b, loc, x, r); });
  s.setTangent(op.getResult(), addTangents(b, loc, fromX, fromY));
  return success();
}

LogicalResult atan2Rule(math::Atan2Op op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  Value ty = s.tangent(op.getLhs()), tx = s.tangent(op.getRhs());
  if (!ty && !tx)
    return success();
  Value y = s.primal(op.getLhs()), x = s.primal(op.getRhs());
  // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
  Value fromY = scaled(b, loc, ty, [&] { return x; });
  Value fromX = scaled(b, loc, tx, [&] { return y; });
  Value numerator = !fromX ? fromY
                    : fromY ? sub(b, loc, fromY, fromX)
                            : neg(b, loc, fromX);
  s.setTangent(op.getResult(), div(b, loc, numerator, atan2Norm(b, loc, y, x)));
  return success();
}

LogicalResult copysignRule(math::CopySignOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  s.setTangent(op.getResult(), scaled(b, loc, s.tangent(op.getLhs()), [&] {
                 return dCopySignDx(b, loc, s.primal(op.getLhs()),
                                    s.primal(op.getRhs()));
               }));
  return success();
}

//===----------------------------------------------------------------------===//
// vector: linear ops, so the tangent is the same op on the tangents
//===----------------------------------------------------------------------===//

LogicalResult fromElementsRule(vector::FromElementsOp op, OpBuilder &b,
                               TangentState &s) {
  if (llvm::none_of(op.getElements(), [&](Value e) { return s.tangent(e); }))
    return success();
  Location loc = op.getLoc();
  SmallVector<Value> elements;
  for (Value e : op.getElements())
    elements.push_back(s.tangentOrZero(b, loc, e));
  s.setTangent(op.getResult(),
               vector::FromElementsOp::create(b, loc, op.getType(), elements));
  return success();
}

LogicalResult toElementsRule(vector::ToElementsOp op, OpBuilder &b,
                             TangentState &s) {
  if (Value t = s.tangent(op.getSource())) {
    auto elements = vector::ToElementsOp::create(b, op.getLoc(), t);
    for (auto [r, e] : llvm::zip(op.getResults(), elements.getResults()))
      s.setTangent(r, e);
  }
  return success();
}

LogicalResult vectorExtractRule(vector::ExtractOp op, OpBuilder &b,
                                TangentState &s) {
  if (Value t = s.tangent(op.getSource()))
    s.setTangent(op.getResult(),
                 vector::ExtractOp::create(b, op.getLoc(), t,
                                           mapped(s, op.getMixedPosition())));
  return success();
}

LogicalResult vectorInsertRule(vector::InsertOp op, OpBuilder &b,
                               TangentState &s) {
  Location loc = op.getLoc();
  if (!s.tangent(op.getValueToStore()) && !s.tangent(op.getDest()))
    return success();
  s.setTangent(op.getResult(),
               vector::InsertOp::create(
                   b, loc, s.tangentOrZero(b, loc, op.getValueToStore()),
                   s.tangentOrZero(b, loc, op.getDest()),
                   mapped(s, op.getMixedPosition())));
  return success();
}

LogicalResult broadcastRule(vector::BroadcastOp op, OpBuilder &b,
                            TangentState &s) {
  if (Value t = s.tangent(op.getSource()))
    s.setTangent(op.getResult(),
                 vector::BroadcastOp::create(b, op.getLoc(), op.getType(), t));
  return success();
}

LogicalResult reductionRule(vector::ReductionOp op, OpBuilder &b,
                            TangentState &s) {
  Value tv = s.tangent(op.getVector());
  Value tacc = op.getAcc() ? s.tangent(op.getAcc()) : Value();
  if (!tv && !tacc)
    return success();
  if (op.getKind() != vector::CombiningKind::ADD)
    return op.emitOpError("has a tangent rule only for the add kind");
  Location loc = op.getLoc();
  Value t = tacc;
  if (tv)
    t = tacc ? vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                           tv, tacc)
             : vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, tv);
  s.setTangent(op.getResult(), t);
  return success();
}

LogicalResult transposeRule(vector::TransposeOp op, OpBuilder &b,
                            TangentState &s) {
  if (Value t = s.tangent(op.getVector()))
    s.setTangent(op.getResult(), vector::TransposeOp::create(
                                     b, op.getLoc(), t, op.getPermutation()));
  return success();
}

// d(A B + acc) = dA B + A dB + dacc (A or B possibly transposed).
LogicalResult contractRule(vector::ContractionOp op, OpBuilder &b,
                           TangentState &s) {
  std::optional<MatmulForm> form = matmulForm(op);
  if (!form)
    return op.emitOpError("has no derivative rule: only matrix products "
                          "(tile_matmul's form) are differentiated");
  Location loc = op.getLoc();
  Value tl = s.tangent(op.getLhs()), tr = s.tangent(op.getRhs()),
        ta = s.tangent(op.getAcc());
  if (!tl && !tr && !ta)
    return success();
  bool tA = form->transposeLhs, tB = form->transposeRhs;
  Value t = ta ? ta : splatConstant(b, loc, op.getAccType(), 0.0);
  if (tl)
    t = matmul(b, loc, tl, s.primal(op.getRhs()), t, tA, tB);
  if (tr)
    t = matmul(b, loc, s.primal(op.getLhs()), tr, t, tA, tB);
  s.setTangent(op.getResult(), t);
  return success();
}

LogicalResult shapeCastRule(vector::ShapeCastOp op, OpBuilder &b,
                            TangentState &s) {
  if (Value t = s.tangent(op.getSource()))
    s.setTangent(op.getResult(), vector::ShapeCastOp::create(
                                     b, op.getLoc(), op.getType(), t));
  return success();
}

//===----------------------------------------------------------------------===//
// adjit
//===----------------------------------------------------------------------===//

LogicalResult extractRule(ExtractOp op, OpBuilder &b, TangentState &s) {
  if (Value t = s.tangent(op.getSource()))
    s.setTangent(op.getResult(), ExtractOp::create(b, op.getLoc(), op.getType(),
                                                   t, op.getPosition()));
  return success();
}

LogicalResult insertRule(InsertOp op, OpBuilder &b, TangentState &s) {
  Location loc = op.getLoc();
  if (!s.tangent(op.getValue()) && !s.tangent(op.getDest()))
    return success();
  s.setTangent(op.getResult(),
               InsertOp::create(b, loc, op.getType(),
                                s.tangentOrZero(b, loc, op.getValue()),
                                s.tangentOrZero(b, loc, op.getDest()),
                                op.getPosition()));
  return success();
}

/// The tangent array of `array`, with a diagnostic at `op` if it has none.
Value tangentArrayOf(Operation *op, Value array, TangentState &s) {
  Value t = s.tangent(array);
  if (!t && isAddressedArray(array))
    op->emitOpError("writes into an array at an address (a geometry "
                    "object's memory), which is constant for "
                    "differentiation: it has no tangent array");
  else if (!t)
    op->emitOpError("accesses a float array whose tangent array is unknown "
                    "(not a kernel argument)");
  return t;
}

/// A read of x[i] (or a component of it): its tangent is t_x[i].
template <typename OpT>
LogicalResult loadRule(OpT op, OpBuilder &b, TangentState &s,
                       ArrayRef<int64_t> position) {
  // Memory at an address is constant: its reads have no tangent.
  if (!TangentState::isActive(op.getType()) || isAddressedArray(op.getArray()))
    return success();
  Value array = tangentArrayOf(op, op.getArray(), s);
  if (!array)
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> indices = mapped(s, op.getIndices());
  Value t = position.empty()
                ? LoadOp::create(b, loc, op.getType(), array, indices).getResult()
                : LoadComponentOp::create(b, loc, op.getType(), array, indices,
                                          position)
                      .getResult();
  s.setTangent(op.getResult(), t);
  return success();
}

LogicalResult arrayLoadRule(LoadOp op, OpBuilder &b, TangentState &s) {
  return loadRule(op, b, s, {});
}
LogicalResult componentLoadRule(LoadComponentOp op, OpBuilder &b,
                                TangentState &s) {
  return loadRule(op, b, s, op.getPosition());
}

/// A write of v to y[i] (or a component of it) writes v's tangent to t_y[i].
template <typename OpT>
LogicalResult storeRule(OpT op, OpBuilder &b, TangentState &s,
                        ArrayRef<int64_t> position) {
  Value value = op.getValue();
  if (!TangentState::isActive(value.getType()))
    return success();
  Value array = tangentArrayOf(op, op.getArray(), s);
  if (!array)
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> indices = mapped(s, op.getIndices());
  Value t = s.tangentOrZero(b, loc, value);
  if (position.empty())
    StoreOp::create(b, loc, t, array, indices);
  else
    StoreComponentOp::create(b, loc, t, array, indices, position);
  return success();
}

LogicalResult arrayStoreRule(StoreOp op, OpBuilder &b, TangentState &s) {
  return storeRule(op, b, s, {});
}
LogicalResult componentStoreRule(StoreComponentOp op, OpBuilder &b,
                                 TangentState &s) {
  return storeRule(op, b, s, op.getPosition());
}

/// y[i] += v adds v's tangent into t_y[i]; the old value's tangent is what
/// that add returns. (A zero tangent adds nothing and is skipped, unless the
/// old value is used.)
LogicalResult atomicAddRule(AtomicAddOp op, OpBuilder &b, TangentState &s) {
  Value value = op.getValue();
  if (!TangentState::isActive(value.getType()))
    return success();
  Value t = s.tangent(value);
  if (!t && op.getResult().use_empty())
    return success();
  Value array = tangentArrayOf(op, op.getArray(), s);
  if (!array)
    return failure();
  Location loc = op.getLoc();
  if (!t)
    t = s.tangentOrZero(b, loc, value);
  auto add = AtomicAddOp::create(b, loc, t, array, mapped(s, op.getIndices()),
                                 op.getPosition());
  s.setTangent(op.getResult(), add.getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// memref (stack buffers: adjit-adjoint's checkpoints and kept values)
//===----------------------------------------------------------------------===//

/// A float buffer gets a tangent buffer of the same shape.
LogicalResult allocaRule(memref::AllocaOp op, OpBuilder &b, TangentState &s) {
  if (!TangentState::isActive(op.getType()))
    return success();
  auto buffer = memref::AllocaOp::create(
      b, op.getLoc(), op.getType(), mapped(s, op.getDynamicSizes()),
      mapped(s, op.getSymbolOperands()), op.getAlignmentAttr());
  s.setTangent(op.getResult(), buffer);
  return success();
}

Value tangentBufferOf(Operation *op, Value buffer, TangentState &s) {
  Value t = s.tangent(buffer);
  if (!t)
    op->emitOpError("accesses a float buffer whose tangent buffer is unknown "
                    "(not allocated in the kernel)");
  return t;
}

LogicalResult memrefLoadRule(memref::LoadOp op, OpBuilder &b, TangentState &s) {
  if (!TangentState::isActive(op.getType()))
    return success();
  Value buffer = tangentBufferOf(op, op.getMemRef(), s);
  if (!buffer)
    return failure();
  s.setTangent(op.getResult(),
               memref::LoadOp::create(b, op.getLoc(), buffer,
                                      mapped(s, op.getIndices())));
  return success();
}

LogicalResult memrefStoreRule(memref::StoreOp op, OpBuilder &b,
                              TangentState &s) {
  Value value = op.getValueToStore();
  if (!TangentState::isActive(value.getType()))
    return success();
  Value buffer = tangentBufferOf(op, op.getMemRef(), s);
  if (!buffer)
    return failure();
  memref::StoreOp::create(b, op.getLoc(),
                          s.tangentOrZero(b, op.getLoc(), value), buffer,
                          mapped(s, op.getIndices()));
  return success();
}

/// Float exch/cas: the value an element ends with depends on the order the
/// threads run in, so it has no derivative. Integer ones carry no tangent.
template <typename OpT>
LogicalResult orderDependentAtomicRule(OpT op, OpBuilder &, TangentState &) {
  if (!TangentState::isActive(op.getValue().getType()))
    return success();
  return op.emitOpError()
         << op->getName().stripDialect()
         << " of float values has no tangent: the value it leaves in the "
            "element (and the old value it returns) depends on the order the "
            "threads run in, not only on the inputs, so no derivative is "
            "defined";
}

/// Float min/max: the element's tangent is the winning value's, known only
/// once every thread has run (the adjoint gets it from the array the launch
/// left); in one forward launch it is not known. Integer ones carry none.
template <typename OpT>
LogicalResult atomicMinMaxRule(OpT op, OpBuilder &, TangentState &) {
  if (!TangentState::isActive(op.getValue().getType()))
    return success();
  return op.emitOpError()
         << op->getName().stripDialect()
         << " of float values has no tangent: the element's tangent is the "
            "tangent of the value that ends up there, which is known only "
            "once every thread has run; differentiate it in reverse mode "
            "(Tape), which compares with the array the launch left";
}

/// A call to a device function that was not inlined: one with a
/// hand-written tangent rule (`func_jvp`: `@f` carries
/// `adjit.custom_tangent = @f_jvp`, which takes f's arguments followed by the
/// tangents of its float arguments and returns the tangents of its float
/// results) calls it; any other is an error.
LogicalResult callRule(CallOp op, OpBuilder &b, TangentState &s) {
  bool active = llvm::any_of(op.getResultTypes(), TangentState::isActive);
  if (!active)
    return success();
  auto callee = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(s.getModule(), op.getCalleeAttr()));
  auto rule = callee ? callee->getAttrOfType<FlatSymbolRefAttr>(
                           AdjitDialect::getCustomTangentAttrName())
                     : FlatSymbolRefAttr();
  if (rule) {
    auto ruleFn = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(s.getModule(), rule));
    if (!ruleFn)
      return op.emitOpError() << "custom tangent " << rule << " not found";
    Location loc = op.getLoc();
    SmallVector<Value> args = mapped(s, op.getOperands());
    for (Value operand : op.getOperands())
      if (TangentState::isActive(operand.getType()))
        args.push_back(s.tangentOrZero(b, loc, operand));
    auto call = CallOp::create(b, loc, ruleFn, args);
    unsigned next = 0;
    for (Value result : op.getResults()) {
      if (!TangentState::isActive(result.getType()))
        continue;
      if (next >= call.getNumResults())
        return op.emitOpError() << "custom tangent " << rule
                                << " returns fewer tangents than the call has "
                                   "float results";
      s.setTangent(result, call.getResult(next++));
    }
    return success();
  }
  auto grad = callee ? callee->getAttrOfType<FlatSymbolRefAttr>(
                           AdjitDialect::getCustomAdjointAttrName())
                     : FlatSymbolRefAttr();
  if (grad)
    return op.emitOpError()
           << "calls " << op.getCalleeAttr()
           << ", which has a custom adjoint (" << grad
           << ") but no forward-mode rule (give it one with @func_jvp); "
              "forward mode cannot differentiate through it";
  return op.emitOpError() << "calls " << op.getCalleeAttr()
                          << ", which must be inlined before adjit-tangent "
                             "(run the 'inline' pass first)";
}

/// Attaches this file's rules to the ops of `DialectT` that the rule table
/// (DerivativeRules.def) gives a tangent rule.
template <typename DialectT> void attachRulesOf(MLIRContext *ctx, DialectT *) {
#define ADJIT_RULE(DIALECT, OP, ...)                                           \
  if constexpr (std::is_same_v<DialectT, DIALECT>)                             \
    attach<OP, __VA_ARGS__>(ctx);
#define ADJIT_TANGENT_ONLY(DIALECT, OP, WHY, ...) ADJIT_RULE(DIALECT, OP, __VA_ARGS__)
#include "DerivativeRules.def"
}

} // namespace

void mlir::adjit::registerTangentRules(DialectRegistry &registry) {
#define ADJIT_RULE_DIALECT(DIALECT) registry.addExtension(&attachRulesOf<DIALECT>);
#include "DerivativeRules.def"
}
