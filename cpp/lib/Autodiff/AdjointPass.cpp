//===- AdjointPass.cpp - the reverse-mode adjoint of each kernel ----------===//
//
// Algorithm, per kernel @k (see Passes.td for the contract):
//  1. Work on a clone (AdjointPrepare.cpp): fully unroll scf.for loops with
//     small constant trip counts, carry array elements a loop reads and
//     writes as loop-carried values, forward stores to later loads, then
//     reject what cannot be differentiated exactly (calls not inlined,
//     while loops that write in their condition and forward other values,
//     arrays read after being written in other ways) with a diagnostic at
//     the op.
//  2. Create @k_adjoint(args..., grads...) and replay the primal body into it
//     without its memory writes (they already happened in the forward
//     launch); loads read the values the forward launch read, because every
//     remaining load of an array the kernel writes precedes its writes and
//     reads the runtime's pre-launch snapshot (step 1).
//  3. Walk the primal body backwards; each op's AdjointOpInterface rule
//     accumulates adjoints into its operands, keyed by primal value, with
//     operands read through the replay mapping. An scf.if becomes an scf.if
//     on the replayed condition whose branches recompute their primal values,
//     apply the rules, and yield the updated adjoints of outer values. An
//     scf.for or scf.while becomes loops that replay its iterations from
//     checkpoints and reverse them last to first (LoopReversal.cpp).
//
//===----------------------------------------------------------------------===//

#include "AdjointInternal.h"
#include "adjit-c/Adjit.h"
#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITADJOINT
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::autodiff;

namespace {

/// Marks an adjoint kernel with the kernel it differentiates, while the pass
/// runs (so it is not differentiated again).
constexpr llvm::StringLiteral kAdjointOfAttr("adjit.adjoint_of");

/// Fails, at `write`, when the kernel uses the old value a memory write
/// returns (an atomic's result): the replay drops the write.
LogicalResult rejectUsedOldValue(Operation *write) {
  if (write->use_empty())
    return success();
  return write->emitOpError("returns an old value that the kernel uses; a "
                            "kernel using atomic results is not "
                            "differentiable yet");
}

/// Clones the ops of `block` (but its terminator) at `b` through `map`,
/// dropping memory writes and prints (they happened in the forward launch);
/// the ops `substitute` binds are not cloned.
LogicalResult replay(Block &block, OpBuilder &b, IRMapping &map,
                     ReplaySubstitute substitute = nullptr) {
  for (Operation &op : block.without_terminator()) {
    if (isa<PrintOp>(op))
      continue; // printed by the forward launch
    if (substitute && substitute(op, map))
      continue;
    if (writesMemory(&op)) {
      if (failed(rejectUsedOldValue(&op)))
        return failure();
      continue;
    }
    // Region cloning keeps block arguments that are already mapped; forget
    // the ones an earlier replay of the same region recorded.
    op.walk([&](Block *nested) {
      for (BlockArgument arg : nested->getArguments())
        map.erase(arg);
    });
    Operation *copy = b.clone(op, map);
    SmallVector<Operation *> writes;
    copy->walk([&](Operation *nested) {
      if (writesMemory(nested) || isa<PrintOp>(nested))
        writes.push_back(nested);
    });
    for (Operation *w : writes) {
      if (failed(rejectUsedOldValue(w)))
        return failure();
      w->erase();
    }
  }
  return success();
}

/// A copy of `map` with its value mappings only. Cloning a region records
/// block mappings too; a stale one would make a second clone of the same
/// region (a branch or loop body replayed again) reuse the first clone's
/// blocks.
IRMapping valuesOnly(const IRMapping &map) {
  IRMapping copy;
  for (auto [from, to] : map.getValueMap())
    copy.map(from, to);
  return copy;
}

} // namespace

FailureOr<IRMapping>
autodiff::replayBound(Block &block, ValueRange from, ValueRange to,
                      OpBuilder &b, AdjointState &s,
                      function_ref<void(IRMapping &)> bind,
                      ReplaySubstitute substitute) {
  IRMapping map = valuesOnly(*s.getPrimalMap());
  for (auto [arg, value] : llvm::zip(from, to))
    map.map(arg, value);
  if (bind)
    bind(map);
  if (failed(replay(block, b, map, substitute)))
    return failure();
  return map;
}

llvm::SetVector<Value> autodiff::capturedActiveValues(Operation *root) {
  llvm::SetVector<Value> captured;
  root->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!AdjointState::isActive(operand.getType()))
        continue;
      Operation *owner = operand.getParentRegion()->getParentOp();
      if (owner != root && !root->isProperAncestor(owner))
        captured.insert(operand);
    }
  });
  return captured;
}

namespace {

/// Reverses an scf.if: see the file comment.
LogicalResult reverseIf(scf::IfOp ifOp, OpBuilder &b, AdjointState &s) {
  Location loc = ifOp.getLoc();
  // Outer active values the branches use: their adjoints may change.
  llvm::SetVector<Value> captured = capturedActiveValues(ifOp);
  unsigned lanes = s.getLanes();
  SmallVector<Type> types;
  for (unsigned lane = 0; lane < lanes; ++lane)
    for (Value v : captured)
      types.push_back(v.getType());

  auto reversed = scf::IfOp::create(b, loc, types, s.primal(ifOp.getCondition()),
                                    /*addThenBlock=*/true, /*addElseBlock=*/true);
  SmallVector<DenseMap<Value, Value>> saved = s.getAllAdjoints();
  IRMapping *outerMap = s.getPrimalMap();
  for (auto [primalRegion, newRegion] :
       llvm::zip(ifOp->getRegions(), reversed->getRegions())) {
    Block &newBlock = newRegion.front();
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, &newBlock);
    IRMapping branchMap = valuesOnly(*outerMap);
    s.setPrimalMap(&branchMap);
    if (!primalRegion.empty()) {
      Block &primalBlock = primalRegion.front();
      if (failed(replay(primalBlock, b, branchMap)))
        return failure();
      // Seed: the if's results are what the branch yields.
      auto yield = cast<scf::YieldOp>(primalBlock.getTerminator());
      for (unsigned lane = 0; lane < lanes; ++lane) {
        s.setLane(lane);
        for (auto [result, yielded] :
             llvm::zip(ifOp.getResults(), yield.getOperands()))
          if (Value adj = saved[lane].lookup(result))
            s.accumulate(b, loc, yielded, adj);
      }
      if (failed(reverseBlock(primalBlock, b, s)))
        return failure();
    }
    SmallVector<Value> outs;
    for (unsigned lane = 0; lane < lanes; ++lane) {
      s.setLane(lane);
      for (Value v : captured)
        outs.push_back(s.adjointOrZero(b, loc, v));
    }
    scf::YieldOp::create(b, loc, outs);
    s.setPrimalMap(outerMap);
    s.getAllAdjoints() = saved;
  }
  unsigned next = 0;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    s.setLane(lane);
    for (Value v : captured)
      s.getAdjoints()[v] = reversed.getResult(next++);
  }
  return success();
}

} // namespace

LogicalResult autodiff::reverseBlock(Block &block, OpBuilder &b,
                                    AdjointState &s) {
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      if (hasActiveWork(ifOp) && failed(reverseIf(ifOp, b, s)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (hasActiveWork(loop) && failed(reverseFor(loop, b, s)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      if (hasActiveWork(loop) && failed(reverseWhile(loop, b, s)))
        return failure();
      continue;
    }
    if (auto rule = dyn_cast<AdjointOpInterface>(op)) {
      for (unsigned lane = 0; lane < s.getLanes(); ++lane) {
        s.setLane(lane);
        if (failed(rule.emitAdjoint(b, s)))
          return failure();
      }
      continue;
    }
    if (op.getNumRegions() != 0 && hasActiveWork(&op))
      return op.emitOpError("has regions the adjoint pass cannot reverse "
                            "(only scf.if, scf.for and scf.while are)");
    // Without a rule, an op is fine only if no gradient has to pass through
    // it: no active operand receives one (constants, casts from integers,
    // comparisons) and it writes no float array.
    bool hasActiveOperand = llvm::any_of(op.getOperands(), [](Value v) {
      return AdjointState::isActive(v.getType()) && !matchPattern(v, m_Constant());
    });
    bool needsRule = (hasActiveOperand &&
                      llvm::any_of(op.getResults(),
                                   [&](Value r) { return s.hasAdjoint(r); })) ||
                     writesActiveValue(&op);
    if (needsRule)
      return op.emitOpError("has no derivative rule, so the kernel cannot be "
                            "differentiated");
  }
  return success();
}

namespace {

LogicalResult differentiate(func::FuncOp kernel, int64_t maxUnroll,
                            int64_t checkpointBytes, unsigned lanes) {
  auto work = cast<func::FuncOp>(kernel->clone());
  llvm::scope_exit cleanup([&] { work->destroy(); });
  if (failed(prepare(work, kernel, maxUnroll)))
    return failure();

  // @k_adjoint(args..., grads...): one gradient array per array argument
  // and lane, lane after lane.
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  SmallVector<unsigned> arrayArgs;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
    if (isa<ArrayType>(type))
      arrayArgs.push_back(i);
  for (unsigned lane = 0; lane < lanes; ++lane)
    for (unsigned i : arrayArgs)
      inputs.push_back(kernel.getArgumentTypes()[i]);
  // Then the arrays a float atomic min/max writes, as the launch left them.
  ArrayAccessAnalysis analysis(work);
  SmallVector<unsigned> finalArgs;
  for (unsigned i : arrayArgs)
    if (const auto *access = analysis.lookup(work.getArgument(i)))
      if (ArrayAccessAnalysis::flags(*access) & AdjitAccessFloatMinMax) {
        finalArgs.push_back(i);
        inputs.push_back(kernel.getArgumentTypes()[i]);
      }
  func::FuncOp adjoint = createDerivedKernel(
      kernel, symbols::adjoint(kernel.getSymName()), inputs, kAdjointOfAttr,
      {{"adj", lanes, arrayArgs}, {"final", 1, finalArgs}});
  Block *entry = adjoint.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);

  IRMapping map;
  SmallVector<DenseMap<Value, Value>> grads(lanes);
  for (auto [i, arg] : llvm::enumerate(work.getArguments()))
    map.map(arg, entry->getArgument(i));
  unsigned next = kernel.getNumArguments();
  for (unsigned lane = 0; lane < lanes; ++lane)
    for (unsigned i : arrayArgs)
      grads[lane][work.getArgument(i)] = entry->getArgument(next++);

  Block &body = work.getBody().front();
  if (failed(replay(body, b, map)))
    return failure();
  AdjointState state(&map, std::move(grads));
  state.setModule(kernel->getParentOp());
  state.setCheckpointBytes(checkpointBytes);
  for (unsigned i : finalArgs)
    state.setFinalArray(work.getArgument(i), entry->getArgument(next++));
  for (unsigned i : arrayArgs)
    if (const auto *access = analysis.lookup(work.getArgument(i)))
      if (access->ownElementOnly)
        state.markOwnElementOnly(work.getArgument(i));
  if (failed(reverseBlock(body, b, state)))
    return failure();
  func::ReturnOp::create(b, kernel.getLoc());
  return success();
}

struct AdjitAdjointPass : adjit::impl::AdjitAdjointBase<AdjitAdjointPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> kernels = differentiateKernels(
        getOperation(), kAdjointOfAttr, symbols::adjoint,
        [&](func::FuncOp kernel) {
          return differentiate(kernel, maxUnroll, checkpointBytes, lanes);
        });
    if (failed(kernels))
      return signalPassFailure();
    if (!keepPrimal) {
      for (func::FuncOp kernel : *kernels)
        kernel.erase();
      getOperation().walk([](func::FuncOp fn) { fn->removeAttr(kAdjointOfAttr); });
    }
  }
};

} // namespace
