//===- AdjointPass.cpp - the reverse-mode adjoint of each kernel ----------===//
//
// Algorithm, per kernel @k (see Passes.td for the contract):
//  1. Work on a clone: fully unroll scf.for loops with small constant trip
//     counts, then reject what cannot be differentiated exactly yet (calls
//     not inlined, loops with runtime bounds carrying active values, arrays
//     both read and written) with a diagnostic at the op.
//  2. Create @k_adjoint(args..., grads...) and replay the primal body into it
//     without its memory writes (they already happened in the forward
//     launch); loads read the values the forward launch read, because no
//     array the kernel reads is written by it (step 1).
//  3. Walk the primal body backwards; each op's AdjointOpInterface rule
//     accumulates adjoints into its operands, keyed by primal value, with
//     operands read through the replay mapping. An scf.if becomes an scf.if
//     on the replayed condition whose branches recompute their primal values,
//     apply the rules, and yield the updated adjoints of outer values.
//
//===----------------------------------------------------------------------===//

#include "adjit/Adjoint.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITADJOINT
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

bool writesMemory(Operation *op) {
  return isa<StoreOp, StoreComponentOp, AtomicAddOp, AtomicMinOp, AtomicMaxOp>(
      op);
}

bool readsArray(Operation *op) { return isa<LoadOp, LoadComponentOp>(op); }

/// The source-level name of kernel argument `index`, for diagnostics.
std::string argName(func::FuncOp kernel, unsigned index) {
  if (auto names = kernel->getAttrOfType<ArrayAttr>("adjit.arg_names"))
    if (index < names.size())
      if (auto name = dyn_cast<StringAttr>(names[index]))
        return "'" + name.str() + "'";
  return "#" + std::to_string(index);
}

/// Whether `op` (or anything nested in it) computes active values or touches
/// float arrays.
bool hasActiveWork(Operation *root) {
  bool active = false;
  root->walk([&](Operation *op) {
    if (op == root)
      return;
    if (llvm::any_of(op->getResultTypes(), AdjointState::isActive) ||
        (writesMemory(op) &&
         AdjointState::isActive(op->getOperand(0).getType())))
      active = true;
  });
  return active;
}

/// Step 1: unroll small constant loops and reject what is not supported.
LogicalResult prepare(func::FuncOp work, func::FuncOp kernel,
                      int64_t maxUnroll) {
  WalkResult calls = work.walk([&](CallOp call) {
    call.emitOpError("device function calls must be inlined before "
                     "adjit-adjoint (run the 'inline' pass first)");
    return WalkResult::interrupt();
  });
  if (calls.wasInterrupted())
    return failure();

  SmallVector<scf::ForOp> loops;
  work.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    auto lb = getConstantIntValue(loop.getLowerBound());
    auto ub = getConstantIntValue(loop.getUpperBound());
    auto step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0)
      continue;
    int64_t trips = *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
    if (trips <= maxUnroll && failed(loopUnrollFull(loop)))
      return loop.emitOpError("could not be unrolled for differentiation");
  }

  WalkResult loopCheck = work.walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::WhileOp>(op) && hasActiveWork(op)) {
      op->emitOpError("is a loop with a runtime trip count (or more than the "
                      "unroll limit) over differentiable values; such loops "
                      "are not differentiable yet");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (loopCheck.wasInterrupted())
    return failure();

  // In-place updates: the adjoint replays loads after the forward launch
  // wrote the array, so it would read overwritten values.
  for (BlockArgument arg : work.getArguments()) {
    if (!isa<ArrayType>(arg.getType()))
      continue;
    Operation *reader = nullptr, *writer = nullptr;
    work.walk([&](Operation *op) {
      if (!llvm::is_contained(op->getOperands(), arg))
        return;
      if (readsArray(op) && !reader)
        reader = op;
      if (writesMemory(op) && !writer)
        writer = op;
    });
    if (reader && writer) {
      InFlightDiagnostic diag = writer->emitOpError()
                                << "writes kernel argument "
                                << argName(kernel, arg.getArgNumber())
                                << ", which the kernel also reads; the "
                                   "gradient of an in-place update needs the "
                                   "overwritten values, which are not saved "
                                   "yet";
      diag.attachNote(reader->getLoc()) << "the array is read here";
      return failure();
    }
  }
  return success();
}

/// Clones the ops of `block` (but its terminator) at `b` through `map`,
/// dropping memory writes (they happened in the forward launch).
LogicalResult replay(Block &block, OpBuilder &b, IRMapping &map) {
  for (Operation &op : block.without_terminator()) {
    if (writesMemory(&op)) {
      if (!op.use_empty())
        return op.emitOpError("returns an old value that the kernel uses; a "
                              "kernel using atomic results is not "
                              "differentiable yet");
      continue;
    }
    Operation *copy = b.clone(op, map);
    SmallVector<Operation *> writes;
    copy->walk([&](Operation *nested) {
      if (writesMemory(nested))
        writes.push_back(nested);
    });
    for (Operation *w : writes) {
      if (!w->use_empty())
        return w->emitOpError("returns an old value that the kernel uses; a "
                              "kernel using atomic results is not "
                              "differentiable yet");
      w->erase();
    }
  }
  return success();
}

LogicalResult reverseBlock(Block &block, OpBuilder &b, AdjointState &s);

/// Reverses an scf.if: see the file comment.
LogicalResult reverseIf(scf::IfOp ifOp, OpBuilder &b, AdjointState &s) {
  Location loc = ifOp.getLoc();
  // Outer active values the branches use: their adjoints may change.
  llvm::SetVector<Value> captured;
  ifOp->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!AdjointState::isActive(operand.getType()))
        continue;
      Region *defRegion = operand.getParentRegion();
      if (!ifOp->isProperAncestor(defRegion->getParentOp()) &&
          defRegion->getParentOp() != ifOp.getOperation())
        captured.insert(operand);
    }
  });
  SmallVector<Type> types;
  for (Value v : captured)
    types.push_back(v.getType());

  auto reversed = scf::IfOp::create(b, loc, types, s.primal(ifOp.getCondition()),
                                    /*addThenBlock=*/true, /*addElseBlock=*/true);
  DenseMap<Value, Value> saved = s.getAdjoints();
  IRMapping *outerMap = s.getPrimalMap();
  for (auto [primalRegion, newRegion] :
       llvm::zip(ifOp->getRegions(), reversed->getRegions())) {
    Block &newBlock = newRegion.front();
    OpBuilder::InsertionGuard guard(b);
    if (!newBlock.empty() && newBlock.mightHaveTerminator())
      b.setInsertionPoint(newBlock.getTerminator());
    else
      b.setInsertionPointToEnd(&newBlock);
    IRMapping branchMap = *outerMap;
    s.setPrimalMap(&branchMap);
    if (!primalRegion.empty()) {
      Block &primalBlock = primalRegion.front();
      if (failed(replay(primalBlock, b, branchMap)))
        return failure();
      // Seed: the if's results are what the branch yields.
      auto yield = cast<scf::YieldOp>(primalBlock.getTerminator());
      for (auto [result, yielded] :
           llvm::zip(ifOp.getResults(), yield.getOperands()))
        if (Value adj = saved.lookup(result))
          s.accumulate(b, loc, yielded, adj);
      if (failed(reverseBlock(primalBlock, b, s)))
        return failure();
    }
    SmallVector<Value> outs;
    for (Value v : captured)
      outs.push_back(s.adjointOrZero(b, loc, v));
    if (!types.empty())
      scf::YieldOp::create(b, loc, outs);
    s.setPrimalMap(outerMap);
    s.getAdjoints() = saved;
  }
  for (auto [v, result] : llvm::zip(captured, reversed.getResults()))
    s.getAdjoints()[v] = result;
  return success();
}

LogicalResult reverseBlock(Block &block, OpBuilder &b, AdjointState &s) {
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      if (hasActiveWork(ifOp) && failed(reverseIf(ifOp, b, s)))
        return failure();
      continue;
    }
    if (isa<scf::ForOp, scf::WhileOp>(op))
      continue; // inactive (checked in prepare)
    if (auto rule = dyn_cast<AdjointOpInterface>(op)) {
      if (failed(rule.emitAdjoint(b, s)))
        return failure();
      continue;
    }
    // Without a rule, an op is fine only if no gradient has to pass through
    // it: no active operand receives one (constants, casts from integers,
    // comparisons) and it writes no float array.
    bool hasActiveOperand = llvm::any_of(op.getOperandTypes(), AdjointState::isActive);
    bool needsRule =
        (hasActiveOperand &&
         llvm::any_of(op.getResults(), [&](Value r) { return s.adjoint(r); })) ||
        (writesMemory(&op) &&
         AdjointState::isActive(op.getOperand(0).getType()));
    if (needsRule)
      return op.emitOpError("has no derivative rule, so the kernel cannot be "
                            "differentiated");
  }
  return success();
}

LogicalResult differentiate(func::FuncOp kernel, int64_t maxUnroll) {
  auto work = cast<func::FuncOp>(kernel->clone());
  auto cleanup = llvm::make_scope_exit([&] { work->destroy(); });
  if (failed(prepare(work, kernel, maxUnroll)))
    return failure();

  // @k_adjoint(args..., grads...): one gradient array per array argument.
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  SmallVector<unsigned> arrayArgs;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
    if (isa<ArrayType>(type)) {
      arrayArgs.push_back(i);
      inputs.push_back(type);
    }
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  auto adjoint = func::FuncOp::create(
      b, kernel.getLoc(), (kernel.getSymName() + "_adjoint").str(),
      b.getFunctionType(inputs, {}));
  adjoint->setAttr(AdjitDialect::getKernelAttrName(), b.getUnitAttr());
  adjoint->setAttr("adjit.adjoint_of", SymbolRefAttr::get(kernel));
  if (auto names = kernel->getAttrOfType<ArrayAttr>("adjit.arg_names")) {
    SmallVector<Attribute> all(names.begin(), names.end());
    for (unsigned i : arrayArgs)
      all.push_back(b.getStringAttr("adj_" + cast<StringAttr>(names[i]).str()));
    adjoint->setAttr("adjit.arg_names", b.getArrayAttr(all));
  }
  Block *entry = adjoint.addEntryBlock();
  b.setInsertionPointToStart(entry);

  IRMapping map;
  DenseMap<Value, Value> grads;
  for (auto [i, arg] : llvm::enumerate(work.getArguments()))
    map.map(arg, entry->getArgument(i));
  for (auto [k, i] : llvm::enumerate(arrayArgs))
    grads[work.getArgument(i)] = entry->getArgument(kernel.getNumArguments() + k);

  Block &body = work.getBody().front();
  if (failed(replay(body, b, map)))
    return failure();
  AdjointState state(&map, std::move(grads));
  if (failed(reverseBlock(body, b, state)))
    return failure();
  func::ReturnOp::create(b, kernel.getLoc());
  return success();
}

struct AdjitAdjointPass : adjit::impl::AdjitAdjointBase<AdjitAdjointPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (isKernel(fn) && !fn->hasAttr("adjit.adjoint_of"))
        kernels.push_back(fn);
    for (func::FuncOp kernel : kernels)
      if (failed(differentiate(kernel, maxUnroll)))
        return signalPassFailure();
    if (!keepPrimal)
      for (func::FuncOp kernel : kernels)
        kernel.erase();
  }
};

} // namespace
