//===- TangentPass.cpp - the forward-mode tangent of each kernel ----------===//
//
// Algorithm, per kernel @k (see Passes.td for the contract):
//  1. Create @k_tangent(args..., tangents...): one tangent per float
//     argument (a tangent array per float array), bound as the tangents of
//     k's arguments.
//  2. Copy k's body into it in program order. After each op is copied, its
//     TangentOpInterface rule computes the tangents of its results from the
//     tangents of its operands (keyed by primal value; a missing tangent is
//     zero and costs nothing). Memory ops mirror their access on the tangent
//     arrays, so the primal writes stay and the tangent writes follow them.
//  3. Regions are rebuilt with their tangents beside the values: an scf.if
//     gets one more result per float result, an scf.for / scf.while one more
//     loop-carried value per float carried value (and per float array), and
//     their blocks are copied by step 2 recursively. Nothing is replayed or
//     stored: time and memory are those of the primal plus the tangents.
//
//===----------------------------------------------------------------------===//

#include "AutodiffUtils.h"
#include "TangentInternal.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"
#include "adjit/Tangent.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITTANGENT
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::autodiff;

namespace {

/// Marks a tangent kernel with the kernel it differentiates, while the pass
/// runs (so it is not differentiated again).
constexpr llvm::StringLiteral kTangentOfAttr("adjit.tangent_of");

LogicalResult tangentAllocaScope(memref::AllocaScopeOp scope, OpBuilder &b,
                                 TangentState &s);

/// The positions of `values` whose types carry tangents.
SmallVector<unsigned> activePositions(TypeRange types) {
  SmallVector<unsigned> active;
  for (auto [i, type] : llvm::enumerate(types))
    if (TangentState::isActive(type))
      active.push_back(i);
  return active;
}

/// The tangent of `v` to pass along a region boundary at `at`: a zero for
/// float values without one; an array must have its tangent array.
FailureOr<Value> boundaryTangent(Operation *at, Value v, OpBuilder &b,
                                 TangentState &s) {
  if (!TangentState::isMemory(v.getType()))
    return s.tangentOrZero(b, at->getLoc(), v);
  if (Value t = s.tangent(v))
    return t;
  return at->emitOpError("passes on a float array whose tangent array is "
                         "unknown (not a kernel argument)");
}

/// The copied `values`, followed by the tangents of those at `active`, lane
/// after lane.
FailureOr<SmallVector<Value>> withTangents(Operation *at, ValueRange values,
                                           ArrayRef<unsigned> active,
                                           OpBuilder &b, TangentState &s) {
  SmallVector<Value> out;
  for (Value v : values)
    out.push_back(s.primal(v));
  for (unsigned lane = 0; lane < s.getLanes(); ++lane) {
    s.setLane(lane);
    for (unsigned i : active) {
      FailureOr<Value> t = boundaryTangent(at, values[i], b, s);
      if (failed(t))
        return failure();
      out.push_back(*t);
    }
  }
  return out;
}

/// Binds `primal` to the first values of `copied` and the tangents of the
/// primal values at `active` to the values after them, lane after lane.
void bindWithTangents(ValueRange primal, ValueRange copied,
                      ArrayRef<unsigned> active, TangentState &s) {
  for (auto [p, c] : llvm::zip(primal, copied.take_front(primal.size())))
    s.getPrimalMap().map(p, c);
  unsigned next = primal.size();
  for (unsigned lane = 0; lane < s.getLanes(); ++lane) {
    s.setLane(lane);
    for (unsigned i : active)
      s.setTangent(primal[i], copied[next++]);
  }
}

/// The types of `types` followed by those at `active` again, once per lane
/// (the tangents').
SmallVector<Type> typesWithTangents(TypeRange types, ArrayRef<unsigned> active,
                                    unsigned lanes) {
  SmallVector<Type> out(types);
  for (unsigned lane = 0; lane < lanes; ++lane)
    for (unsigned i : active)
      out.push_back(types[i]);
  return out;
}

/// Copies `block` (without its terminator) at `b`, then yields what its
/// scf.yield yields with the tangents of the values at `active`.
LogicalResult tangentYieldingBlock(Block &block, ArrayRef<unsigned> active,
                                   OpBuilder &b, TangentState &s) {
  if (failed(tangentBlock(block, b, s)))
    return failure();
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  FailureOr<SmallVector<Value>> outs =
      withTangents(yield, yield.getOperands(), active, b, s);
  if (failed(outs))
    return failure();
  scf::YieldOp::create(b, yield.getLoc(), *outs);
  return success();
}

LogicalResult tangentIf(scf::IfOp ifOp, OpBuilder &b, TangentState &s) {
  SmallVector<unsigned> active = activePositions(ifOp.getResultTypes());
  auto newIf = scf::IfOp::create(
      b, ifOp.getLoc(), typesWithTangents(ifOp.getResultTypes(), active, s.getLanes()),
      s.primal(ifOp.getCondition()), /*addThenBlock=*/true,
      /*addElseBlock=*/true);
  for (auto [primalRegion, newRegion] :
       llvm::zip(ifOp->getRegions(), newIf->getRegions())) {
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, &newRegion.front());
    if (primalRegion.empty()) {
      // Only an scf.if without results has no else branch.
      scf::YieldOp::create(b, ifOp.getLoc());
      continue;
    }
    if (failed(tangentYieldingBlock(primalRegion.front(), active, b, s)))
      return failure();
  }
  bindWithTangents(ifOp.getResults(), newIf.getResults(), active, s);
  return success();
}

LogicalResult tangentFor(scf::ForOp loop, OpBuilder &b, TangentState &s) {
  SmallVector<unsigned> active = activePositions(loop.getInitArgs().getTypes());
  FailureOr<SmallVector<Value>> inits =
      withTangents(loop, loop.getInitArgs(), active, b, s);
  if (failed(inits))
    return failure();
  auto newLoop = scf::ForOp::create(b, loop.getLoc(), s.primal(loop.getLowerBound()),
                                    s.primal(loop.getUpperBound()),
                                    s.primal(loop.getStep()), *inits);
  newLoop->setAttrs(loop->getAttrs());
  s.getPrimalMap().map(loop.getInductionVar(), newLoop.getInductionVar());
  bindWithTangents(loop.getRegionIterArgs(), newLoop.getRegionIterArgs(),
                   active, s);
  {
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, newLoop.getBody());
    if (failed(tangentYieldingBlock(*loop.getBody(), active, b, s)))
      return failure();
  }
  bindWithTangents(loop.getResults(), newLoop.getResults(), active, s);
  return success();
}

LogicalResult tangentWhile(scf::WhileOp loop, OpBuilder &b, TangentState &s) {
  // The before region takes the inits' types; the condition forwards the
  // results' types to the after region.
  SmallVector<unsigned> activeInits = activePositions(loop.getInits().getTypes());
  SmallVector<unsigned> activeResults = activePositions(loop.getResultTypes());
  FailureOr<SmallVector<Value>> inits =
      withTangents(loop, loop.getInits(), activeInits, b, s);
  if (failed(inits))
    return failure();
  auto newLoop = scf::WhileOp::create(
      b, loop.getLoc(), typesWithTangents(loop.getResultTypes(), activeResults, s.getLanes()),
      *inits, nullptr, nullptr);
  newLoop->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  {
    OpBuilder::InsertionGuard guard(b);
    Block &before = newLoop.getBefore().front();
    bindWithTangents(loop.getBeforeArguments(), before.getArguments(),
                     activeInits, s);
    b.setInsertionPointToEnd(&before);
    if (failed(tangentBlock(loop.getBefore().front(), b, s)))
      return failure();
    scf::ConditionOp condition = loop.getConditionOp();
    FailureOr<SmallVector<Value>> forwarded =
        withTangents(condition, condition.getArgs(), activeResults, b, s);
    if (failed(forwarded))
      return failure();
    scf::ConditionOp::create(b, condition.getLoc(),
                             s.primal(condition.getCondition()), *forwarded);

    Block &after = newLoop.getAfter().front();
    bindWithTangents(loop.getAfterArguments(), after.getArguments(),
                     activeResults, s);
    b.setInsertionPointToEnd(&after);
    if (failed(tangentYieldingBlock(loop.getAfter().front(), activeInits, b, s)))
      return failure();
  }
  bindWithTangents(loop.getResults(), newLoop.getResults(), activeResults, s);
  return success();
}

/// A stack scope (the adjoint's loop reversal allocates its buffers in one):
/// its body is copied with the tangents, which it returns after its results.
LogicalResult tangentAllocaScope(memref::AllocaScopeOp scope, OpBuilder &b,
                                 TangentState &s) {
  SmallVector<unsigned> active = activePositions(scope.getResultTypes());
  auto newScope = memref::AllocaScopeOp::create(
      b, scope.getLoc(),
      typesWithTangents(scope.getResultTypes(), active, s.getLanes()));
  {
    OpBuilder::InsertionGuard guard(b);
    Block &body = scope.getBodyRegion().front();
    b.setInsertionPointToStart(&newScope.getBodyRegion().emplaceBlock());
    if (failed(tangentBlock(body, b, s)))
      return failure();
    Operation *ret = body.getTerminator();
    FailureOr<SmallVector<Value>> outs =
        withTangents(ret, ret->getOperands(), active, b, s);
    if (failed(outs))
      return failure();
    memref::AllocaScopeReturnOp::create(b, ret->getLoc(), *outs);
  }
  bindWithTangents(scope.getResults(), newScope.getResults(), active, s);
  return success();
}

/// Whether `root` or anything nested in it uses or defines a value that
/// carries a tangent.
bool touchesActiveValues(Operation *root) {
  WalkResult found = root->walk([](Operation *op) {
    auto active = [](Value v) { return TangentState::isActive(v.getType()); };
    bool touches = llvm::any_of(op->getOperands(), active) ||
                   llvm::any_of(op->getResults(), active);
    return touches ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Whether `op` (copied, without a rule) needs one: it computes a float value
/// from operands with tangents, or may write to a float array.
bool needsRule(Operation &op, TangentState &s) {
  bool tangentIn = llvm::any_of(op.getOperands(),
                                [&](Value v) { return s.hasTangent(v); });
  bool activeOut = llvm::any_of(op.getResultTypes(), TangentState::isActive);
  if (tangentIn && activeOut)
    return true;
  bool takesFloatArray = llvm::any_of(op.getOperandTypes(), [](Type t) {
    return TangentState::isMemory(t) && TangentState::isActive(t);
  });
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  bool mayWrite = !effects || effects.hasEffect<MemoryEffects::Write>();
  return takesFloatArray && mayWrite;
}

} // namespace

LogicalResult autodiff::tangentBlock(Block &block, OpBuilder &b,
                                     TangentState &s) {
  for (Operation &op : block.without_terminator()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      if (failed(tangentIf(ifOp, b, s)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (failed(tangentFor(loop, b, s)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      if (failed(tangentWhile(loop, b, s)))
        return failure();
      continue;
    }
    if (op.getNumRegions() != 0 && !isa<memref::AllocaScopeOp>(op) &&
        touchesActiveValues(&op))
      return op.emitOpError("has regions the tangent pass cannot "
                            "differentiate (only scf.if, scf.for, scf.while "
                            "and memref.alloca_scope are)");
    if (auto scope = dyn_cast<memref::AllocaScopeOp>(op)) {
      if (failed(tangentAllocaScope(scope, b, s)))
        return failure();
      continue;
    }
    b.clone(op, s.getPrimalMap());
    if (auto rule = dyn_cast<TangentOpInterface>(op)) {
      for (unsigned lane = 0; lane < s.getLanes(); ++lane) {
        s.setLane(lane);
        if (failed(rule.emitTangent(b, s)))
          return failure();
      }
      continue;
    }
    if (needsRule(op, s))
      return op.emitOpError("has no tangent rule, so the kernel cannot be "
                            "differentiated in forward mode");
  }
  return success();
}

namespace {

LogicalResult differentiate(func::FuncOp kernel, unsigned lanes) {
  // @k_tangent(args..., tangents...): one tangent per float argument and
  // lane, lane after lane.
  SmallVector<unsigned> activeArgs = activePositions(kernel.getArgumentTypes());
  SmallVector<Type> inputs =
      typesWithTangents(kernel.getArgumentTypes(), activeArgs, lanes);
  func::FuncOp tangent = createDerivedKernel(
      kernel, symbols::tangent(kernel.getSymName()), inputs, kTangentOfAttr,
      {{"tan", lanes, activeArgs}});
  Block *entry = tangent.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);

  IRMapping map;
  TangentState state(map, kernel->getParentOp(), lanes);
  bindWithTangents(kernel.getArguments(), entry->getArguments(), activeArgs,
                   state);
  if (failed(tangentBlock(kernel.getBody().front(), b, state))) {
    tangent.erase();
    return failure();
  }
  func::ReturnOp::create(b, kernel.getLoc());
  return success();
}

struct AdjitTangentPass : adjit::impl::AdjitTangentBase<AdjitTangentPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> kernels = differentiateKernels(
        getOperation(), kTangentOfAttr, symbols::tangent,
        [&](func::FuncOp kernel) { return differentiate(kernel, lanes); });
    if (failed(kernels))
      return signalPassFailure();
    getOperation().walk([](func::FuncOp fn) { fn->removeAttr(kTangentOfAttr); });
    if (!keepPrimal)
      for (func::FuncOp kernel : *kernels)
        kernel.erase();
  }
};

} // namespace
