//===- AdjointPass.cpp - the reverse-mode adjoint of each kernel ----------===//
//
// Algorithm, per kernel @k (see Passes.td for the contract):
//  1. Work on a clone: fully unroll scf.for loops with small constant trip
//     counts, carry array elements a loop reads and writes as loop-carried
//     values, forward stores to later loads, then reject what cannot be
//     differentiated exactly (calls not inlined, non-canonical while loops,
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
//     apply the rules, and yield the updated adjoints of outer values.
//
//===----------------------------------------------------------------------===//

#include "adjit/Adjoint.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
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

/// Whether `root` or anything nested in it computes active values or touches
/// float arrays. (A loop or branch that only passes active values through,
/// `scf.if -> f64 { yield %a } else { yield %b }`, has active results.)
bool hasActiveWork(Operation *root) {
  bool active = false;
  root->walk([&](Operation *op) {
    if (llvm::any_of(op->getResultTypes(), AdjointState::isActive) ||
        (writesMemory(op) &&
         AdjointState::isActive(op->getOperand(0).getType())))
      active = true;
  });
  return active;
}

/// Whether every read of an array happens before every write of it, in one
/// thread's program order, with no loop around both (which would read a
/// previous iteration's write). Atomics read and write at once: not before.
bool readsPrecedeWrites(const ArrayAccessAnalysis::ArgumentAccess &access) {
  for (Operation *read : access.reads) {
    for (Operation *write : access.writes) {
      if (read == write)
        return false;
      // Lift both to the innermost block that holds an ancestor of each.
      Operation *writeAncestor = write;
      Operation *readAncestor = nullptr;
      while (writeAncestor) {
        readAncestor = writeAncestor->getBlock()->findAncestorOpInBlock(*read);
        if (readAncestor)
          break;
        writeAncestor = writeAncestor->getParentOp();
      }
      if (!readAncestor || readAncestor == writeAncestor ||
          !readAncestor->isBeforeInBlock(writeAncestor))
        return false;
      // Inside a loop, a later iteration reads what an earlier one wrote.
      for (Operation *parent = readAncestor->getParentOp(); parent;
           parent = parent->getParentOp())
        if (isa<scf::ForOp, scf::WhileOp>(parent))
          return false;
    }
  }
  return true;
}

/// Store-to-load forwarding for arrays each thread accesses only at its own
/// element: in program order within a block, a load after a store of the
/// same array reads what the thread stored, so it is replaced by that value.
/// Nested regions start from the enclosing state; a region that stores to an
/// array makes that array unknown after it. The adjoint then never replays a
/// load of a value the kernel itself overwrote.
void forwardStores(Block &block, const ArrayAccessAnalysis &analysis,
                   DenseMap<Value, Value> known) {
  auto ownElement = [&](Value array) {
    const auto *access = analysis.lookup(array);
    return access && access->ownElementOnly;
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto store = dyn_cast<StoreOp>(op)) {
      if (ownElement(store.getArray()))
        known[store.getArray()] = store.getValue();
      continue;
    }
    if (auto store = dyn_cast<StoreComponentOp>(op)) {
      auto it = known.find(store.getArray());
      if (it != known.end() && ownElement(store.getArray())) {
        OpBuilder b(store);
        it->second = InsertOp::create(b, store.getLoc(), it->second.getType(),
                                      store.getValue(), it->second,
                                      store.getPositionAttr());
      }
      continue;
    }
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (Value value = known.lookup(load.getArray())) {
        load.getResult().replaceAllUsesWith(value);
        load.erase();
      }
      continue;
    }
    if (auto load = dyn_cast<LoadComponentOp>(op)) {
      if (Value value = known.lookup(load.getArray())) {
        OpBuilder b(load);
        Value component = ExtractOp::create(b, load.getLoc(), load.getType(),
                                            value, load.getPositionAttr());
        load.getResult().replaceAllUsesWith(component);
        load.erase();
      }
      continue;
    }
    if (isa<AtomicAddOp, AtomicMinOp, AtomicMaxOp>(op)) {
      known.erase(op.getOperand(1));
      continue;
    }
    if (op.getNumRegions() == 0)
      continue;
    SmallVector<Value> writtenInside;
    op.walk([&](Operation *nested) {
      if (writesMemory(nested))
        writtenInside.push_back(nested->getOperand(1));
    });
    // A loop body may run after its own earlier iterations stored.
    DenseMap<Value, Value> inner = known;
    if (isa<scf::ForOp, scf::WhileOp>(op))
      for (Value array : writtenInside)
        inner.erase(array);
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        forwardStores(nested, analysis, inner);
    for (Value array : writtenInside)
      known.erase(array);
  }
}

/// The indices of an array access (load, store and their component forms).
std::optional<OperandRange> accessIndices(Operation *op, Value array) {
  if (auto load = dyn_cast<LoadOp>(op); load && load.getArray() == array)
    return load.getIndices();
  if (auto load = dyn_cast<LoadComponentOp>(op);
      load && load.getArray() == array)
    return load.getIndices();
  if (auto store = dyn_cast<StoreOp>(op); store && store.getArray() == array)
    return store.getIndices();
  if (auto store = dyn_cast<StoreComponentOp>(op);
      store && store.getArray() == array)
    return store.getIndices();
  if (auto add = dyn_cast<AtomicAddOp>(op); add && add.getArray() == array)
    return add.getIndices();
  return std::nullopt;
}

/// Whether `loop` (an scf.for, an scf.while or the kernel itself) reads and
/// writes `array` only at one index list defined outside it (for the kernel:
/// in its entry block), through loads, stores and atomic adds whose old value is
/// unused, in the loop's own blocks or in scf.if ops nested there (never in a
/// nested loop), and for an scf.while, never writes it in the condition
/// region; and both reads and writes it (with `readAndWrite` false: either).
/// Sets `indices`.
bool promotable(Operation *loop, Value array, SmallVector<Value> &indices,
                bool readAndWrite = true) {
  bool read = false, written = false, ok = true;
  indices.clear();
  for (Operation *user : array.getUsers()) {
    if (!loop->isProperAncestor(user) || isa<DimOp>(user))
      continue;
    std::optional<OperandRange> at = accessIndices(user, array);
    if (!at)
      return false;
    if (!read && !written)
      indices.assign(at->begin(), at->end());
    else if (!llvm::equal(*at, indices))
      return false;
    if (isa<AtomicAddOp>(user) && !user->use_empty())
      return false;
    bool isWrite = isa<StoreOp, StoreComponentOp, AtomicAddOp>(user);
    (isWrite ? written : read) = true;
    for (Operation *parent = user->getParentOp(); parent != loop;
         parent = parent->getParentOp())
      ok &= isa<scf::IfOp>(parent);
    if (auto whileOp = dyn_cast<scf::WhileOp>(loop))
      ok &= !(isWrite && whileOp.getBefore().isAncestor(user->getParentRegion()));
  }
  for (Value index : indices)
    ok &= isa<func::FuncOp>(loop)
              ? index.getParentBlock() == &loop->getRegion(0).front()
              : !loop->isAncestor(index.getParentBlock()->getParentOp());
  return ok && (readAndWrite ? read && written : read || written);
}

/// Rewrites the accesses to `array` in `block` (and the scf.if ops in it),
/// from the op after `after` if given, as operations on `current`, its
/// element's value on entry; returns the value on exit. An scf.if that
/// accesses the array gets one more result.
Value threadElement(Block &block, Value array, Value current,
                    Operation *after = nullptr) {
  auto begin = after ? std::next(after->getIterator()) : block.begin();
  for (Operation &op :
       llvm::make_early_inc_range(llvm::make_range(begin, block.end()))) {
    OpBuilder b(&op);
    Location loc = op.getLoc();
    if (auto load = dyn_cast<LoadOp>(op); load && load.getArray() == array) {
      load.getResult().replaceAllUsesWith(current);
      load.erase();
    } else if (auto load = dyn_cast<LoadComponentOp>(op);
               load && load.getArray() == array) {
      load.getResult().replaceAllUsesWith(ExtractOp::create(
          b, loc, load.getType(), current, load.getPositionAttr()));
      load.erase();
    } else if (auto store = dyn_cast<StoreOp>(op);
               store && store.getArray() == array) {
      current = store.getValue();
      store.erase();
    } else if (auto store = dyn_cast<StoreComponentOp>(op);
               store && store.getArray() == array) {
      current = InsertOp::create(b, loc, current.getType(), store.getValue(),
                                 current, store.getPositionAttr());
      store.erase();
    } else if (auto add = dyn_cast<AtomicAddOp>(op);
               add && add.getArray() == array) {
      // Only this thread touches its element: the add needs no atomicity.
      ArrayRef<int64_t> position = add.getPosition();
      Value old = position.empty()
                      ? current
                      : ExtractOp::create(b, loc, add.getValue().getType(),
                                          current, add.getPositionAttr())
                            .getResult();
      Value sum = isa<FloatType>(getElementTypeOrSelf(old))
                      ? arith::AddFOp::create(b, loc, old, add.getValue())
                            .getResult()
                      : arith::AddIOp::create(b, loc, old, add.getValue())
                            .getResult();
      current = position.empty()
                    ? sum
                    : InsertOp::create(b, loc, current.getType(), sum, current,
                                       add.getPositionAttr())
                          .getResult();
      add.erase();
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      bool accesses = false;
      ifOp.walk([&](Operation *nested) {
        accesses |= accessIndices(nested, array).has_value();
      });
      if (!accesses)
        continue;
      SmallVector<Type> types(ifOp.getResultTypes());
      types.push_back(current.getType());
      auto newIf = scf::IfOp::create(b, loc, types, ifOp.getCondition(),
                                     /*addThenBlock=*/false,
                                     /*addElseBlock=*/false);
      newIf.getThenRegion().takeBody(ifOp.getThenRegion());
      if (ifOp.getElseRegion().empty()) {
        Block *elseBlock = b.createBlock(&newIf.getElseRegion());
        scf::YieldOp::create(b, loc);
        (void)elseBlock;
      } else {
        newIf.getElseRegion().takeBody(ifOp.getElseRegion());
      }
      for (Region *region : {&newIf.getThenRegion(), &newIf.getElseRegion()}) {
        Block &branch = region->front();
        Value out = threadElement(branch, array, current);
        cast<scf::YieldOp>(branch.getTerminator()).getResultsMutable().append(out);
      }
      ifOp.replaceAllUsesWith(newIf.getResults().drop_back());
      ifOp.erase();
      current = newIf.getResults().back();
    }
  }
  return current;
}

/// Makes the element of `array` at `indices` a loop-carried value of `loop`:
/// loaded before it, carried through it (one more iter_arg, appended),
/// stored after it. Returns the loop that replaces `loop`.
Operation *promoteElement(Operation *loop, Value array,
                          ArrayRef<Value> indices) {
  OpBuilder b(loop);
  Location loc = loop->getLoc();
  Type type = cast<ArrayType>(array.getType()).getElementType();
  Value init = LoadOp::create(b, loc, type, array, indices);
  SmallVector<Value> inits(cast<LoopLikeOpInterface>(loop).getInits());
  inits.push_back(init);
  SmallVector<Type> types(loop->getResultTypes());
  types.push_back(type);
  Operation *newLoop;
  if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
    auto newFor = scf::ForOp::create(b, loc, forOp.getLowerBound(),
                                     forOp.getUpperBound(), forOp.getStep(),
                                     inits);
    newFor->setAttrs(forOp->getAttrs());
    newFor.getRegion().takeBody(forOp.getRegion());
    Block &body = *newFor.getBody();
    Value atEnd = threadElement(body, array, body.addArgument(type, loc));
    cast<scf::YieldOp>(body.getTerminator()).getResultsMutable().append(atEnd);
    newLoop = newFor;
  } else {
    auto newWhile =
        scf::WhileOp::create(b, loc, types, inits, nullptr, nullptr);
    auto whileOp = cast<scf::WhileOp>(loop);
    newWhile.getBefore().takeBody(whileOp.getBefore());
    newWhile.getAfter().takeBody(whileOp.getAfter());
    Block &before = newWhile.getBefore().front();
    Value atTest = threadElement(before, array, before.addArgument(type, loc));
    newWhile.getConditionOp().getArgsMutable().append(atTest);
    Block &after = newWhile.getAfter().front();
    Value atEnd = threadElement(after, array, after.addArgument(type, loc));
    cast<scf::YieldOp>(after.getTerminator()).getResultsMutable().append(atEnd);
    newLoop = newWhile;
  }
  loop->replaceAllUsesWith(newLoop->getResults().drop_back());
  loop->erase();
  b.setInsertionPointAfter(newLoop);
  StoreOp::create(b, loc, newLoop->getResults().back(), array, indices);
  return newLoop;
}

/// Loops that read back what they wrote to their thread's own element
/// (`for k in range(n): y[i] = y[i] * x[i]`) carry that element as a value
/// instead, innermost loops first, so the adjoint recomputes each
/// iteration's value rather than reading memory the loop overwrote.
void promoteLoopElements(func::FuncOp work, const ArrayAccessAnalysis &analysis) {
  SmallVector<Operation *> loops;
  work.walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (isa<scf::ForOp, scf::WhileOp>(op))
      loops.push_back(op);
  });
  for (Operation *loop : loops) {
    for (BlockArgument array : work.getArguments()) {
      const auto *access = analysis.lookup(array);
      SmallVector<Value> indices;
      // A loop that only reads or only writes the element is carried too
      // when the kernel both reads and writes it elsewhere, so that the
      // kernel-wide carrying below finds no access inside a loop.
      if (access && access->ownElementOnly && access->isRead() &&
          access->isWritten() &&
          promotable(loop, array, indices, /*readAndWrite=*/false))
        loop = promoteElement(loop, array, indices);
    }
  }
}

/// Carries each array element the kernel reads after writing it, at its own
/// thread's index, as one value through the whole kernel (after loops and
/// store forwarding did what they could): loaded once where its index is
/// known, threaded through branches, stored once before the return. The one
/// load is then of the value from before the launch, which the runtime
/// snapshots.
void promoteKernelElements(func::FuncOp work,
                           const ArrayAccessAnalysis &analysis) {
  Block &entry = work.getBody().front();
  for (BlockArgument array : work.getArguments()) {
    const auto *access = analysis.lookup(array);
    SmallVector<Value> indices;
    if (!access || !access->ownElementOnly || readsPrecedeWrites(*access) ||
        !promotable(work, array, indices))
      continue;
    OpBuilder b(work.getContext());
    b.setInsertionPointToStart(&entry);
    for (Value index : indices)
      if (Operation *def = index.getDefiningOp())
        if (b.getInsertionPoint() == entry.begin() ||
            std::prev(b.getInsertionPoint())->isBeforeInBlock(def))
          b.setInsertionPointAfter(def);
    Location loc = (*array.getUsers().begin())->getLoc();
    Type type = cast<ArrayType>(array.getType()).getElementType();
    auto init = LoadOp::create(b, loc, type, array, indices);
    Value atEnd = threadElement(entry, array, init, init);
    b.setInsertionPoint(entry.getTerminator());
    StoreOp::create(b, loc, atEnd, array, indices);
  }
}

/// Rewrites an scf.while whose condition forwards values other than exactly
/// its before-block arguments (canonicalize makes such loops, e.g. from a
/// loop whose body always breaks) into the canonical form the reversal
/// expects: the condition forwards the arguments, and the body and the code
/// after the loop recompute the forwarded values from them.
LogicalResult makeCanonicalWhile(scf::WhileOp loop) {
  if (llvm::equal(loop.getConditionOp().getArgs(), loop.getBeforeArguments()))
    return success();
  Block &test = loop.getBefore().front();
  bool writes = false;
  test.walk([&](Operation *op) { writes |= writesMemory(op); });
  if (writes)
    return loop.emitOpError("writes memory in its condition region and "
                            "forwards values other than its loop-carried ones "
                            "to its body; such a loop is not differentiable");

  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Type> types(test.getArgumentTypes());
  auto canonical =
      scf::WhileOp::create(b, loc, types, loop.getInits(), nullptr, nullptr);
  canonical.getBefore().takeBody(loop.getBefore());
  Block &newTest = canonical.getBefore().front();
  scf::ConditionOp condition = canonical.getConditionOp();
  SmallVector<Value> forwarded(condition.getArgs());
  condition.getArgsMutable().assign(newTest.getArguments());

  // Recomputes the forwarded values from `arguments` at `b`'s insertion point.
  auto recompute = [&](ValueRange arguments) {
    IRMapping map;
    map.map(newTest.getArguments(), arguments);
    for (Operation &op : newTest.without_terminator())
      b.clone(op, map);
    return llvm::map_to_vector(
        forwarded, [&](Value v) { return map.lookupOrDefault(v); });
  };
  Block *body = &canonical.getAfter().front(); // its arguments: `types`
  b.setInsertionPointToStart(body);
  Block &oldBody = loop.getAfter().front();
  for (auto [arg, value] : llvm::zip(oldBody.getArguments(),
                                     recompute(body->getArguments())))
    arg.replaceAllUsesWith(value);
  body->getOperations().splice(body->end(), oldBody.getOperations());

  b.setInsertionPointAfter(canonical);
  loop.replaceAllUsesWith(recompute(canonical.getResults()));
  loop.erase();
  return success();
}

/// Step 1: unroll small constant loops and reject what is not supported.
LogicalResult prepare(func::FuncOp work, func::FuncOp kernel,
                      int64_t maxUnroll) {
  auto module = kernel->getParentOfType<ModuleOp>();
  WalkResult calls = work.walk([&](CallOp call) {
    auto callee = module ? dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(
                               module, call.getCalleeAttr()))
                         : func::FuncOp();
    if (callee && callee->hasAttr("adjit.custom_adjoint"))
      return WalkResult::advance();
    call.emitOpError("device function calls must be inlined before "
                     "adjit-adjoint (run the 'inline' pass first), unless "
                     "the callee has a custom adjoint");
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

  SmallVector<scf::WhileOp> whiles;
  work.walk<WalkOrder::PostOrder>([&](scf::WhileOp loop) { whiles.push_back(loop); });
  for (scf::WhileOp loop : whiles)
    if (hasActiveWork(loop) && failed(makeCanonicalWhile(loop)))
      return failure();

  {
    ArrayAccessAnalysis before(work);
    promoteLoopElements(work, before);
    forwardStores(work.getBody().front(), before, {});
  }
  promoteKernelElements(work, ArrayAccessAnalysis(work));

  // In-place updates. An array read and written by the kernel is
  // differentiable when each thread only touches its own element and reads
  // it before writing it: the runtime then passes the adjoint a snapshot of
  // the array taken before the forward launch, so replayed loads see the
  // values the forward launch read. Anything else would need values that
  // are not saved.
  ArrayAccessAnalysis analysis(work);
  for (BlockArgument arg : work.getArguments()) {
    const auto *access = analysis.lookup(arg);
    if (!access || !access->isRead() || !access->isWritten())
      continue;
    if (access->ownElementOnly && readsPrecedeWrites(*access))
      continue;
    Operation *reader = access->reads.front(), *writer = access->writes.front();
    InFlightDiagnostic diag = writer->emitOpError()
                              << "writes kernel argument "
                              << argName(kernel, arg.getArgNumber())
                              << ", which the kernel also reads";
    if (!access->ownElementOnly)
      diag << " at elements other threads may write; the values read then "
              "depend on the order the threads run in (a data race in the "
              "forward launch too), so no gradient is defined: write the "
              "results to a separate array";
    else
      diag << " after writing it in a way the compiler cannot forward (e.g. "
              "in a while loop's condition); the gradient needs the "
              "overwritten values, which are not saved for this pattern";
    diag.attachNote(reader->getLoc()) << "the array is read here";
    return failure();
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
    // Region cloning keeps block arguments that are already mapped; forget
    // the ones an earlier replay of the same region recorded.
    op.walk([&](Block *nested) {
      for (BlockArgument arg : nested->getArguments())
        map.erase(arg);
    });
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
void setInsertionToEndReplacingTerminator(OpBuilder &b, Block *block);

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
    setInsertionToEndReplacingTerminator(b, &newBlock);
    IRMapping branchMap = valuesOnly(*outerMap);
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
    scf::YieldOp::create(b, loc, outs);
    s.setPrimalMap(outerMap);
    s.getAdjoints() = saved;
  }
  for (auto [v, result] : llvm::zip(captured, reversed.getResults()))
    s.getAdjoints()[v] = result;
  return success();
}

/// Positions `b` at the end of `block`, before any terminator it already has
/// (which is erased: the caller emits its own).
void setInsertionToEndReplacingTerminator(OpBuilder &b, Block *block) {
  if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
    block->back().erase();
  b.setInsertionPointToEnd(block);
}

/// Active values defined outside `loop` and used inside it.
llvm::SetVector<Value> capturedActiveValues(Operation *loop) {
  llvm::SetVector<Value> captured;
  loop->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!AdjointState::isActive(operand.getType()))
        continue;
      Operation *owner = operand.getParentRegion()->getParentOp();
      if (owner != loop && !loop->isProperAncestor(owner))
        captured.insert(operand);
    }
  });
  return captured;
}

/// Reverses a loop whose iteration k runs `body` with `carriedArgs` bound to
/// state_k (state_0 = the inits, state_{k+1} = what the body yields) and
/// other block arguments bound by `bindIteration(map, k)`, for `trips`
/// iterations. Strategy: recompute, not store. Iteration k of the reversed
/// loop replays the primal iterations 0..k-1 from the inits to rebuild
/// state_k, replays iteration k, and applies the rules to it backwards. Each
/// thread therefore needs O(1) extra memory, for O(trips^2) time.
LogicalResult reverseLoop(
    Operation *loop, ValueRange primalInits, Block &body, ValueRange carriedArgs,
    Value trips,
    function_ref<void(OpBuilder &, IRMapping &, Value)> bindIteration,
    OpBuilder &b, AdjointState &s) {
  Location loc = loop->getLoc();
  llvm::SetVector<Value> captured = capturedActiveValues(loop);
  SmallVector<unsigned> active;
  for (auto [i, arg] : llvm::enumerate(carriedArgs))
    if (AdjointState::isActive(arg.getType()))
      active.push_back(i);
  SmallVector<Value> replayedInits;
  for (Value init : primalInits)
    replayedInits.push_back(s.primal(init));
  auto yield = cast<scf::YieldOp>(body.getTerminator());

  // Rebuilds state_k by replaying iterations 0..k-1.
  auto stateAt = [&](Value k) -> FailureOr<SmallVector<Value>> {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto recompute = scf::ForOp::create(b, loc, zero, k, one, replayedInits);
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, recompute.getBody());
    IRMapping map = valuesOnly(*s.getPrimalMap());
    for (auto [arg, v] : llvm::zip(carriedArgs, recompute.getRegionIterArgs()))
      map.map(arg, v);
    bindIteration(b, map, recompute.getInductionVar());
    if (failed(replay(body, b, map)))
      return failure();
    SmallVector<Value> next;
    for (Value y : yield.getOperands())
      next.push_back(map.lookupOrDefault(y));
    scf::YieldOp::create(b, loc, next);
    return SmallVector<Value>(recompute.getResults());
  };

  SmallVector<Value> adjInits;
  for (unsigned i : active)
    adjInits.push_back(s.adjointOrZero(b, loc, loop->getResult(i)));
  for (Value v : captured)
    adjInits.push_back(s.adjointOrZero(b, loc, v));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto reversed = scf::ForOp::create(b, loc, zero, trips, one, adjInits);
  {
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, reversed.getBody());
    ValueRange adjArgs = reversed.getRegionIterArgs();
    // Iteration k = trips - 1 - r, last to first.
    Value last = arith::SubIOp::create(b, loc, trips, one);
    Value k = arith::SubIOp::create(b, loc, last, reversed.getInductionVar());
    FailureOr<SmallVector<Value>> state = stateAt(k);
    if (failed(state))
      return failure();
    IRMapping *outerMap = s.getPrimalMap();
    IRMapping iteration = valuesOnly(*outerMap);
    for (auto [arg, v] : llvm::zip(carriedArgs, *state))
      iteration.map(arg, v);
    bindIteration(b, iteration, k);
    if (failed(replay(body, b, iteration)))
      return failure();
    DenseMap<Value, Value> saved = s.getAdjoints();
    s.setPrimalMap(&iteration);
    for (auto [j, v] : llvm::enumerate(captured))
      s.getAdjoints()[v] = adjArgs[active.size() + j];
    for (auto [n, i] : llvm::enumerate(active))
      s.accumulate(b, loc, yield.getOperand(i), adjArgs[n]);
    if (failed(reverseBlock(body, b, s)))
      return failure();
    SmallVector<Value> outs;
    for (unsigned i : active)
      outs.push_back(s.adjointOrZero(b, loc, carriedArgs[i]));
    for (Value v : captured)
      outs.push_back(s.adjointOrZero(b, loc, v));
    scf::YieldOp::create(b, loc, outs);
    s.setPrimalMap(outerMap);
    s.getAdjoints() = saved;
  }
  // Captured adjoints first: they replace the adjoints that entered the loop,
  // while an init may itself be a captured value (z = a; loop uses a and z).
  for (auto [j, v] : llvm::enumerate(captured))
    s.getAdjoints()[v] = reversed.getResult(active.size() + j);
  for (auto [n, i] : llvm::enumerate(active))
    s.accumulate(b, loc, primalInits[i], reversed.getResult(n));
  return success();
}

LogicalResult reverseFor(scf::ForOp loop, OpBuilder &b, AdjointState &s) {
  Location loc = loop.getLoc();
  Value lb = s.primal(loop.getLowerBound()), ub = s.primal(loop.getUpperBound());
  Value step = s.primal(loop.getStep());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, ub, lb), zero);
  Value trips = arith::CeilDivSIOp::create(b, loc, span, step);
  Value iv = loop.getInductionVar();
  return reverseLoop(
      loop, loop.getInitArgs(), *loop.getBody(), loop.getRegionIterArgs(), trips,
      [&](OpBuilder &builder, IRMapping &map, Value k) {
        map.map(iv, arith::AddIOp::create(
                        builder, loc, lb,
                        arith::MulIOp::create(builder, loc, k, step)));
      },
      b, s);
}

/// Counts the iterations of a while loop by replaying it with a counter.
FailureOr<Value> whileTripCount(scf::WhileOp loop, OpBuilder &b,
                                AdjointState &s) {
  Location loc = loop.getLoc();
  SmallVector<Value> inits;
  for (Value init : loop.getInits())
    inits.push_back(s.primal(init));
  inits.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  auto counting = scf::WhileOp::create(b, loc, types, inits);
  OpBuilder::InsertionGuard guard(b);
  auto makeBlock = [&](Region &region) {
    region.getBlocks().clear();
    auto *block = new Block();
    region.push_back(block);
    for (Type t : types)
      block->addArgument(t, loc);
    return block;
  };
  Block *before = makeBlock(counting.getBefore());
  Block *after = makeBlock(counting.getAfter());
  {
    b.setInsertionPointToEnd(before);
    IRMapping map = valuesOnly(*s.getPrimalMap());
    for (auto [arg, v] : llvm::zip(loop.getBeforeArguments(), before->getArguments()))
      map.map(arg, v);
    if (failed(replay(loop.getBefore().front(), b, map)))
      return failure();
    scf::ConditionOp::create(
        b, loc, map.lookupOrDefault(loop.getConditionOp().getCondition()),
        before->getArguments());
  }
  {
    b.setInsertionPointToEnd(after);
    IRMapping map = valuesOnly(*s.getPrimalMap());
    for (auto [arg, v] : llvm::zip(loop.getAfterArguments(), after->getArguments()))
      map.map(arg, v);
    if (failed(replay(loop.getAfter().front(), b, map)))
      return failure();
    SmallVector<Value> next;
    for (Value y : loop.getYieldOp().getOperands())
      next.push_back(map.lookupOrDefault(y));
    next.push_back(arith::AddIOp::create(
        b, loc, after->getArguments().back(),
        arith::ConstantIndexOp::create(b, loc, 1)));
    scf::YieldOp::create(b, loc, next);
  }
  return counting.getResults().back();
}

LogicalResult reverseWhile(scf::WhileOp loop, OpBuilder &b, AdjointState &s) {
  FailureOr<Value> trips = whileTripCount(loop, b, s);
  if (failed(trips))
    return failure();
  // Canonical form: the before region only tests, and forwards the carried
  // values unchanged, so iteration k is the after region on state_k.
  return reverseLoop(
      loop, loop.getInits(), loop.getAfter().front(), loop.getAfterArguments(),
      *trips, [](OpBuilder &, IRMapping &, Value) {}, b, s);
}

LogicalResult reverseBlock(Block &block, OpBuilder &b, AdjointState &s) {
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
      if (failed(rule.emitAdjoint(b, s)))
        return failure();
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
  state.setModule(kernel->getParentOp());
  ArrayAccessAnalysis analysis(work);
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
    SmallVector<func::FuncOp> kernels;
    SymbolTable symbols(getOperation());
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (isKernel(fn) && !fn->hasAttr("adjit.adjoint_of") &&
          !symbols.lookup((fn.getSymName() + "_adjoint").str()))
        kernels.push_back(fn);
    for (func::FuncOp kernel : kernels)
      if (failed(differentiate(kernel, maxUnroll)))
        return signalPassFailure();
    if (!keepPrimal) {
      for (func::FuncOp kernel : kernels)
        kernel.erase();
      getOperation().walk([](func::FuncOp fn) { fn->removeAttr("adjit.adjoint_of"); });
    }
  }
};

} // namespace
