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
#include "adjit-c/Adjit.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITADJOINT
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// Marks an adjoint kernel with the kernel it differentiates, while the pass
/// runs (so it is not differentiated again).
constexpr llvm::StringLiteral kAdjointOfAttr("adjit.adjoint_of");

/// An access to an array element, whatever op makes it: a load, a store or
/// an atomic, of the whole element or of one of its components.
struct ElementAccess {
  /// AtomicOther: exch, and, or, xor, cas (like min/max, never carried).
  enum class Kind { Load, Store, AtomicAdd, AtomicMinOrMax, AtomicOther };
  Kind kind;
  Value array;
  OperandRange indices;
  /// The component accessed; empty for the whole element.
  ArrayRef<int64_t> position;
  /// The value stored or combined into the element (null for a load).
  Value value;

  bool writes() const { return kind != Kind::Load; }
};

/// The access `op` makes, if it is an array access op.
std::optional<ElementAccess> elementAccess(Operation *op) {
  auto access = dyn_cast<ArrayElementAccessOpInterface>(op);
  if (!access)
    return std::nullopt;
  using Kind = ElementAccess::Kind;
  Kind kind = !access.writesElement()             ? Kind::Load
              : !access.readsElement()            ? Kind::Store
              : isa<AtomicAddOp>(op)              ? Kind::AtomicAdd
              : isa<AtomicMinOp, AtomicMaxOp>(op) ? Kind::AtomicMinOrMax
                                                  : Kind::AtomicOther;
  return ElementAccess{kind, access.getAccessedArray(),
                       access.getAccessedIndices(),
                       access.getAccessedComponent(), access.getWrittenValue()};
}

/// The access `op` makes to `array`, if it is one the compiler can carry as
/// a value (a load, a store or an atomic add; no other atomic).
std::optional<ElementAccess> carriableAccess(Operation *op, Value array) {
  std::optional<ElementAccess> access = elementAccess(op);
  if (!access || access->array != array ||
      access->kind == ElementAccess::Kind::AtomicMinOrMax ||
      access->kind == ElementAccess::Kind::AtomicOther)
    return std::nullopt;
  return access;
}

bool writesMemory(Operation *op) {
  std::optional<ElementAccess> access = elementAccess(op);
  return access && access->writes();
}

/// Whether `op` writes a float value (an active one) to an array.
bool writesActiveValue(Operation *op) {
  std::optional<ElementAccess> access = elementAccess(op);
  return access && access->writes() &&
         AdjointState::isActive(access->value.getType());
}

/// The component at `position` of `element` (`element` itself for an empty
/// position), of type `type`.
Value readComponent(OpBuilder &b, Location loc, Type type, Value element,
                    ArrayRef<int64_t> position) {
  if (position.empty())
    return element;
  return ExtractOp::create(b, loc, type, element, position);
}

/// `element` with its component at `position` replaced by `value` (`value`
/// itself for an empty position, when `element` may be null).
Value writeComponent(OpBuilder &b, Location loc, Value element, Value value,
                     ArrayRef<int64_t> position) {
  if (position.empty())
    return value;
  return InsertOp::create(b, loc, element.getType(), value, element, position);
}

/// The source-level name of kernel argument `index`, for diagnostics.
std::string argName(func::FuncOp kernel, unsigned index) {
  if (auto names = kernel->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName()))
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
        writesActiveValue(op))
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
    if (std::optional<ElementAccess> access = elementAccess(&op)) {
      Value array = access->array;
      Value element = known.lookup(array);
      OpBuilder b(&op);
      switch (access->kind) {
      case ElementAccess::Kind::Load:
        if (element) {
          Value result = op.getResult(0);
          result.replaceAllUsesWith(readComponent(
              b, op.getLoc(), result.getType(), element, access->position));
          op.erase();
        }
        break;
      case ElementAccess::Kind::Store:
        // A component store updates a known element; a whole store sets it.
        if (ownElement(array) && (element || access->position.empty()))
          known[array] = writeComponent(b, op.getLoc(), element, access->value,
                                        access->position);
        break;
      case ElementAccess::Kind::AtomicAdd:
      case ElementAccess::Kind::AtomicMinOrMax:
      case ElementAccess::Kind::AtomicOther:
        known.erase(array);
        break;
      }
      continue;
    }
    if (op.getNumRegions() == 0)
      continue;
    SmallVector<Value> writtenInside;
    op.walk([&](Operation *nested) {
      std::optional<ElementAccess> access = elementAccess(nested);
      if (access && access->writes())
        writtenInside.push_back(access->array);
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
    std::optional<ElementAccess> access = carriableAccess(user, array);
    if (!access)
      return false;
    if (!read && !written)
      indices.assign(access->indices.begin(), access->indices.end());
    else if (!llvm::equal(access->indices, indices))
      return false;
    if (access->kind == ElementAccess::Kind::AtomicAdd && !user->use_empty())
      return false;
    bool isWrite = access->writes();
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
    if (std::optional<ElementAccess> access = carriableAccess(&op, array)) {
      switch (access->kind) {
      case ElementAccess::Kind::Load: {
        Value result = op.getResult(0);
        result.replaceAllUsesWith(
            readComponent(b, loc, result.getType(), current, access->position));
        break;
      }
      case ElementAccess::Kind::Store:
        current =
            writeComponent(b, loc, current, access->value, access->position);
        break;
      case ElementAccess::Kind::AtomicAdd: {
        // Only this thread touches its element: the add needs no atomicity.
        Value old = readComponent(b, loc, access->value.getType(), current,
                                  access->position);
        Value sum =
            isa<FloatType>(getElementTypeOrSelf(old))
                ? arith::AddFOp::create(b, loc, old, access->value).getResult()
                : arith::AddIOp::create(b, loc, old, access->value).getResult();
        current = writeComponent(b, loc, current, sum, access->position);
        break;
      }
      case ElementAccess::Kind::AtomicMinOrMax:
      case ElementAccess::Kind::AtomicOther:
        llvm_unreachable("not a carriable access");
      }
      op.erase();
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      bool accesses = false;
      ifOp.walk([&](Operation *nested) {
        accesses |= carriableAccess(nested, array).has_value();
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
  // Float exch/cas: which value an element ends with (and which old value
  // each thread gets) depends on the order the threads ran in, so it is
  // not a function of the inputs with a derivative. Integer ones carry no
  // gradient.
  WalkResult orderDependent = work.walk([&](Operation *op) {
    if (!isa<AtomicExchOp, AtomicCasOp>(op) ||
        !AdjointState::isActive(op->getResult(0).getType()))
      return WalkResult::advance();
    op->emitOpError()
        << op->getName().stripDialect()
        << " of float values has no adjoint: the value it leaves in the "
           "element (and the old value it returns) depends on the order the "
           "threads run in, not only on the inputs, so no gradient is "
           "defined; launch it outside the tape (or exchange integer indices "
           "and differentiate a kernel that reads the values they select)";
    return WalkResult::interrupt();
  });
  if (orderDependent.wasInterrupted())
    return failure();

  auto module = kernel->getParentOfType<ModuleOp>();
  WalkResult calls = work.walk([&](CallOp call) {
    auto callee = module ? dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(
                               module, call.getCalleeAttr()))
                         : func::FuncOp();
    if (callee && callee->hasAttr(AdjitDialect::getCustomAdjointAttrName()))
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

/// Fails, at `write`, when the kernel uses the old value a memory write
/// returns (an atomic's result): the replay drops the write.
LogicalResult rejectUsedOldValue(Operation *write) {
  if (write->use_empty())
    return success();
  return write->emitOpError("returns an old value that the kernel uses; a "
                            "kernel using atomic results is not "
                            "differentiable yet");
}

/// Binds the results of some ops of a replayed block instead of cloning them
/// (true when it did): a loop reversal reading values it kept.
using ReplaySubstitute = function_ref<bool(Operation &, IRMapping &)>;

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

/// Replays `block` at `b` (see `replay`) with `from` bound to `to` and, with
/// `bind`, more values mapped; the values defined outside `block` are read
/// through the current primal map. Returns the replay's mapping.
FailureOr<IRMapping>
replayBound(Block &block, ValueRange from, ValueRange to, OpBuilder &b,
            AdjointState &s, function_ref<void(IRMapping &)> bind = nullptr,
            ReplaySubstitute substitute = nullptr) {
  IRMapping map = valuesOnly(*s.getPrimalMap());
  for (auto [arg, value] : llvm::zip(from, to))
    map.map(arg, value);
  if (bind)
    bind(map);
  if (failed(replay(block, b, map, substitute)))
    return failure();
  return map;
}

/// Active values defined outside `root` (an scf.if or a loop) and used by it
/// or inside it, in the order of a post-order walk: the outer values whose
/// adjoints reversing `root` may change.
llvm::SetVector<Value> capturedActiveValues(Operation *root) {
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

/// Positions `b` at the end of `block`, before any terminator it already has
/// (which is erased: the caller emits its own).
void setInsertionToEndReplacingTerminator(OpBuilder &b, Block *block) {
  if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
    block->back().erase();
  b.setInsertionPointToEnd(block);
}

/// Per-thread storage for copies of a loop's carried state (or of values an
/// iteration computes): one stack buffer (memref<?xT>) per value, `size`
/// copies each. Flags (i1) are kept as bytes: memory holds nothing narrower.
class StateBuffer {
public:
  /// Whether states of these types can be stored (adjit's value types can;
  /// an array handle carried through a loop cannot).
  static bool canStore(TypeRange types) {
    return llvm::all_of(types, [](Type t) {
      auto vector = dyn_cast<VectorType>(t);
      if (vector && vector.getElementTypeBitWidth() < 8)
        return false;
      return MemRefType::isValidElementType(t);
    });
  }

  /// Bytes one copy of a state of these types takes (approximately: the
  /// sum of its values' sizes).
  static int64_t bytesPerState(TypeRange types) {
    int64_t bytes = 0;
    for (Type t : types) {
      Type stored = storageType(t);
      auto vector = dyn_cast<VectorType>(stored);
      int64_t count = vector ? vector.getNumElements() : 1;
      Type element = vector ? vector.getElementType() : stored;
      int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
      bytes += count * std::max<int64_t>(bits / 8, 1);
    }
    return std::max<int64_t>(bytes, 1);
  }

  StateBuffer(OpBuilder &b, Location loc, TypeRange types, Value size) {
    for (Type t : types)
      slots.push_back(Slot{t, memref::AllocaOp::create(
                                  b, loc,
                                  MemRefType::get({ShapedType::kDynamic},
                                                  storageType(t)),
                                  ValueRange{size})});
  }

  void store(OpBuilder &b, Location loc, ValueRange state, Value index) {
    for (auto [i, value] : llvm::enumerate(state))
      storeSlot(b, loc, i, value, index);
  }

  SmallVector<Value> load(OpBuilder &b, Location loc, Value index) {
    SmallVector<Value> state;
    for (unsigned i = 0; i < slots.size(); ++i)
      state.push_back(loadSlot(b, loc, i, index));
    return state;
  }

  /// Copy `index` of value `slot` = `value`.
  void storeSlot(OpBuilder &b, Location loc, unsigned slot, Value value,
                 Value index) {
    Slot &s = slots[slot];
    Type stored = storageType(s.type);
    if (stored != value.getType())
      value = arith::ExtUIOp::create(b, loc, stored, value);
    s.writers.push_back(
        memref::StoreOp::create(b, loc, value, s.buffer, index));
  }

  /// Copy `index` of value `slot`.
  Value loadSlot(OpBuilder &b, Location loc, unsigned slot, Value index) {
    Slot &s = slots[slot];
    Value value = memref::LoadOp::create(b, loc, s.buffer, index);
    if (value.getType() != s.type)
      value = arith::TruncIOp::create(b, loc, s.type, value);
    s.readers.push_back(value);
    return value;
  }

  /// Erases the values none of whose loads is used, with their buffers and
  /// stores. Returns the bytes a copy of the values left takes (0 if none).
  int64_t eraseUnread() {
    int64_t bytes = 0;
    for (Slot &s : slots) {
      if (llvm::any_of(s.readers, [](Value v) { return !v.use_empty(); })) {
        bytes += bytesPerState(s.type);
        continue;
      }
      for (Value read : s.readers) {
        Operation *load = read.getDefiningOp();
        if (auto narrow = dyn_cast<arith::TruncIOp>(load)) {
          load = narrow.getIn().getDefiningOp();
          narrow->erase();
        }
        load->erase();
      }
      for (Operation *store : s.writers) {
        Value stored = cast<memref::StoreOp>(store).getValueToStore();
        store->erase();
        if (auto widen = stored.getDefiningOp<arith::ExtUIOp>();
            widen && widen->use_empty())
          widen->erase();
      }
      s.buffer->erase();
      s.readers.clear();
      s.writers.clear();
    }
    return bytes;
  }

private:
  struct Slot {
    Type type;
    memref::AllocaOp buffer;
    SmallVector<Operation *> writers; // memref.store
    SmallVector<Value> readers;       // what loadSlot returned
  };

  static Type storageType(Type t) {
    auto integer = dyn_cast<IntegerType>(t);
    if (integer && integer.getWidth() < 8)
      return IntegerType::get(t.getContext(), 8);
    return t;
  }

  SmallVector<Slot> slots;
};

/// ceil(sqrt(n)) for n >= 0, at least 1. (The float estimate is corrected
/// to the exact integer.)
Value ceilSqrt(OpBuilder &b, Location loc, Value n) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value n64 = arith::IndexCastOp::create(b, loc, i64, n);
  Value root = math::SqrtOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, f64, n64));
  Value len = arith::FPToSIOp::create(b, loc, i64, math::CeilOp::create(b, loc, root));
  Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
  len = arith::MaxSIOp::create(b, loc, len, one);
  Value tooShort = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt,
      arith::MulIOp::create(b, loc, len, len), n64);
  len = arith::SelectOp::create(
      b, loc, tooShort, arith::AddIOp::create(b, loc, len, one), len);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
}

/// The length of a checkpointed segment of an n-iteration loop: ceil(sqrt n),
/// or longer, up to n, where `budgetIterations` iterations (if given) fit in
/// the thread's budget (longer segments mean fewer checkpoints to replay to).
Value segmentLength(OpBuilder &b, Location loc, Value n,
                    Value budgetIterations) {
  Value len = ceilSqrt(b, loc, n);
  if (!budgetIterations)
    return len;
  return arith::MaxSIOp::create(
      b, loc, len, arith::MinSIOp::create(b, loc, n, budgetIterations));
}

/// Whether a loop reversal keeps the results of `op`, an op of the loop's
/// `body`, from the forward replay of its segment instead of recomputing
/// them: float values the iteration computes from its state. Constants and
/// data movement (extracts, broadcasts, selects) are cheaper to redo than
/// to load; so are comparisons, which the kept values feed.
bool worthKeeping(Operation &op, Block &body) {
  if (op.getNumResults() == 0 || op.hasTrait<OpTrait::ConstantLike>() ||
      writesMemory(&op) || isa<PrintOp>(op) ||
      !StateBuffer::canStore(op.getResultTypes()))
    return false;
  if (llvm::none_of(op.getResultTypes(), [](Type t) {
        return isa<FloatType>(getElementTypeOrSelf(t));
      }))
    return false;
  if (isa<vector::ExtractOp, vector::InsertOp, vector::BroadcastOp,
          vector::FromElementsOp, vector::ToElementsOp, vector::ShapeCastOp,
          arith::SelectOp, arith::NegFOp>(op))
    return false;
  if (op.getNumRegions() > 0)
    return true;
  return llvm::any_of(op.getOperands(), [&](Value v) {
    return v.getParentRegion() == body.getParent();
  });
}

/// Erases the ops of `region` whose results are unused and that have no
/// side effects, users before the values they use; but loads from state
/// buffers (and their narrowing), which StateBuffer::eraseUnread handles.
void eraseDeadOps(Region &region) {
  region.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (!isa<memref::LoadOp, arith::TruncIOp>(op) && isOpTriviallyDead(op))
      op->erase();
  });
}

/// Reverses a loop whose iteration k runs `body` with `carriedArgs` bound to
/// state_k (state_0 = the inits, state_{k+1} = what the body yields) and
/// other block arguments bound by `bindIteration(map, k)`, for `trips`
/// iterations.
///
/// Strategy: two-level checkpointing. With segments of L iterations, L =
/// ceil(sqrt(trips)) or longer where the checkpoint budget allows (up to
/// trips: one segment), a first sweep replays all segments but the last and
/// keeps state_{jL} for every segment j (at most ceil(trips / L) copies).
/// The reversal then takes the segments last to first: it replays segment j
/// from its checkpoint keeping each of its (at most L) states, and reverses
/// its iterations last to first, each replaying its one iteration from the
/// kept state and applying the rules to it backwards. With a budget (CPU),
/// the segment's replay also keeps the values `worthKeeping` picks and the
/// reversed iteration reads them instead of recomputing them (the ones it
/// turns out not to read are dropped afterwards, with their stores), and
/// the budget counts them with the state. Every iteration is replayed at
/// most three times (once when one segment fits the budget and values are
/// kept): time O(trips) per thread, and at most max(2 ceil(sqrt(trips))
/// copies of the state, budget + ceil(sqrt(trips)) copies) on the thread's
/// stack (in an alloca scope, released when the reversal ends). The replays
/// are the primal ops on the same inputs, so the result is bitwise the one of
/// recomputing each state from the start. (A state that cannot be stored, an
/// array handle carried through the loop, falls back to that recomputation:
/// O(trips^2) time, O(1) memory.)
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
  // Adjoints carried per lane: the active values', then the captured ones'.
  unsigned lanes = s.getLanes();
  unsigned perLane = active.size() + captured.size();
  SmallVector<Value> replayedInits;
  for (Value init : primalInits)
    replayedInits.push_back(s.primal(init));
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);

  // Replays iteration k of the body, on state_k, at `b`.
  auto replayIteration = [&](ValueRange state, Value k,
                             ReplaySubstitute substitute = nullptr) {
    return replayBound(
        body, carriedArgs, state, b, s,
        [&](IRMapping &map) { bindIteration(b, map, k); }, substitute);
  };

  // A loop over [lb, ub) carrying the state, each iteration replaying one
  // primal iteration; `before(state, iv)` runs first in each and
  // `after(iteration's mapping, iv)` last. Returns the final state.
  auto replayRange =
      [&](Value lb, Value ub, ValueRange state,
          function_ref<void(ValueRange, Value)> before,
          function_ref<void(IRMapping &, Value)> after = nullptr)
      -> FailureOr<SmallVector<Value>> {
    auto sweep = scf::ForOp::create(b, loc, lb, ub, one, state);
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, sweep.getBody());
    if (before)
      before(sweep.getRegionIterArgs(), sweep.getInductionVar());
    FailureOr<IRMapping> map =
        replayIteration(sweep.getRegionIterArgs(), sweep.getInductionVar());
    if (failed(map))
      return failure();
    if (after)
      after(*map, sweep.getInductionVar());
    SmallVector<Value> next;
    for (Value y : yield.getOperands())
      next.push_back(map->lookupOrDefault(y));
    scf::YieldOp::create(b, loc, next);
    return SmallVector<Value>(sweep.getResults());
  };

  // Reversed iterations count = len, last to first: iteration
  // k = start + len - 1 - r on the state `stateOf(t)` (t = k - start), its
  // ops replayed but those `kept(op, map, t)` binds.
  auto reverseRange =
      [&](Value start, Value len, ValueRange adjInits,
          function_ref<FailureOr<SmallVector<Value>>(Value)> stateOf,
          function_ref<bool(Operation &, IRMapping &, Value)> kept =
              nullptr) -> FailureOr<scf::ForOp> {
    auto reversed = scf::ForOp::create(b, loc, zero, len, one, adjInits);
    OpBuilder::InsertionGuard guard(b);
    setInsertionToEndReplacingTerminator(b, reversed.getBody());
    ValueRange adjArgs = reversed.getRegionIterArgs();
    Value t = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, len, one),
        reversed.getInductionVar());
    Value k = arith::AddIOp::create(b, loc, start, t);
    FailureOr<SmallVector<Value>> state = stateOf(t);
    if (failed(state))
      return failure();
    IRMapping *outerMap = s.getPrimalMap();
    auto readKept = [&](Operation &op, IRMapping &map) {
      return kept && kept(op, map, t);
    };
    FailureOr<IRMapping> iteration = replayIteration(*state, k, readKept);
    if (failed(iteration))
      return failure();
    SmallVector<DenseMap<Value, Value>> saved = s.getAllAdjoints();
    s.setPrimalMap(&*iteration);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      s.setLane(lane);
      ValueRange laneArgs = adjArgs.slice(lane * perLane, perLane);
      for (auto [j, v] : llvm::enumerate(captured))
        s.getAdjoints()[v] = laneArgs[active.size() + j];
      for (auto [n, i] : llvm::enumerate(active))
        s.accumulate(b, loc, yield.getOperand(i), laneArgs[n]);
    }
    if (failed(reverseBlock(body, b, s)))
      return failure();
    SmallVector<Value> outs;
    for (unsigned lane = 0; lane < lanes; ++lane) {
      s.setLane(lane);
      for (unsigned i : active)
        outs.push_back(s.adjointOrZero(b, loc, carriedArgs[i]));
      for (Value v : captured)
        outs.push_back(s.adjointOrZero(b, loc, v));
    }
    scf::YieldOp::create(b, loc, outs);
    s.setPrimalMap(outerMap);
    s.getAllAdjoints() = saved;
    return reversed;
  };

  SmallVector<Value> adjInits;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    s.setLane(lane);
    for (unsigned i : active)
      adjInits.push_back(s.adjointOrZero(b, loc, loop->getResult(i)));
    for (Value v : captured)
      adjInits.push_back(s.adjointOrZero(b, loc, v));
  }

  SmallVector<Value> results;
  if (StateBuffer::canStore(ValueRange(carriedArgs).getTypes())) {
    SmallVector<Type> adjTypes;
    for (Value v : adjInits)
      adjTypes.push_back(v.getType());
    auto scope = memref::AllocaScopeOp::create(b, loc, adjTypes);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
    TypeRange stateTypes = ValueRange(carriedArgs).getTypes();
    int64_t stateBytes = StateBuffer::bytesPerState(stateTypes);
    // Iterations per segment the budget holds (set below, once the kept
    // values are known).
    arith::ConstantIndexOp budgetIterations;
    if (s.getCheckpointBytes() > 0)
      budgetIterations = arith::ConstantIndexOp::create(b, loc, 0);
    Value segment = segmentLength(
        b, loc, trips, budgetIterations ? budgetIterations.getResult() : Value());
    Value segments = arith::CeilDivSIOp::create(b, loc, trips, segment);
    StateBuffer checkpoints(b, loc, stateTypes, segments);
    StateBuffer states(b, loc, stateTypes, segment);
    // With a budget (CPU threads), each iteration of the segment being
    // reversed keeps the values worth keeping: the reversal reads them
    // instead of recomputing them. (GPU threads recompute: their local
    // memory costs more than the arithmetic.)
    SmallVector<Operation *> keptOps;
    SmallVector<Type> keptTypes;
    DenseMap<Operation *, unsigned> firstSlot;
    if (s.getCheckpointBytes() > 0)
      for (Operation &op : body.without_terminator())
        if (worthKeeping(op, body)) {
          firstSlot[&op] = keptTypes.size();
          keptOps.push_back(&op);
          llvm::append_range(keptTypes, op.getResultTypes());
        }
    StateBuffer kept(b, loc, keptTypes, segment);
    // The start and length of segment j.
    auto segmentBounds = [&](Value j) {
      Value start = arith::MulIOp::create(b, loc, j, segment);
      Value len = arith::MinSIOp::create(
          b, loc, segment, arith::SubIOp::create(b, loc, trips, start));
      return std::make_pair(start, len);
    };

    // Sweep 1: checkpoints[j] = state_{j * segment}; the last segment
    // needs its checkpoint only.
    Value lastSegment = arith::SubIOp::create(b, loc, segments, one);
    auto checkpointing = scf::ForOp::create(b, loc, zero, lastSegment, one,
                                            replayedInits);
    {
      OpBuilder::InsertionGuard inner(b);
      setInsertionToEndReplacingTerminator(b, checkpointing.getBody());
      Value j = checkpointing.getInductionVar();
      ValueRange state = checkpointing.getRegionIterArgs();
      checkpoints.store(b, loc, state, j);
      auto [start, len] = segmentBounds(j);
      FailureOr<SmallVector<Value>> next = replayRange(
          start, arith::AddIOp::create(b, loc, start, len), state, nullptr);
      if (failed(next))
        return failure();
      scf::YieldOp::create(b, loc, *next);
    }
    {
      Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        segments, zero);
      auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifAny.thenBlock());
      checkpoints.store(b, loc, checkpointing.getResults(), lastSegment);
    }

    // Sweep 2: the segments last to first.
    auto bySegment = scf::ForOp::create(b, loc, zero, segments, one, adjInits);
    {
      OpBuilder::InsertionGuard inner(b);
      setInsertionToEndReplacingTerminator(b, bySegment.getBody());
      Value j = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, segments, one),
          bySegment.getInductionVar());
      auto [start, len] = segmentBounds(j);
      // states[t] = state_{start + t}, and kept[t] its kept values.
      Value end = arith::AddIOp::create(b, loc, start, len);
      Value t;
      if (failed(replayRange(
              start, end, checkpoints.load(b, loc, j),
              [&](ValueRange state, Value k) {
                t = arith::SubIOp::create(b, loc, k, start);
                states.store(b, loc, state, t);
              },
              [&](IRMapping &map, Value) {
                for (Operation *op : keptOps)
                  for (auto [n, result] : llvm::enumerate(op->getResults()))
                    kept.storeSlot(b, loc, firstSlot[op] + n,
                                   map.lookup(result), t);
              })))
        return failure();
      FailureOr<scf::ForOp> reversed = reverseRange(
          start, len, bySegment.getRegionIterArgs(),
          [&](Value t) -> FailureOr<SmallVector<Value>> {
            return states.load(b, loc, t);
          },
          [&](Operation &op, IRMapping &map, Value t) {
            auto slot = firstSlot.find(&op);
            if (slot == firstSlot.end())
              return false;
            for (auto [n, result] : llvm::enumerate(op.getResults()))
              map.map(result, kept.loadSlot(b, loc, slot->second + n, t));
            return true;
          });
      if (failed(reversed))
        return failure();
      scf::YieldOp::create(b, loc, reversed->getResults());
      // Keep only what the reversal reads.
      eraseDeadOps(reversed->getRegion());
    }
    int64_t keptBytes = kept.eraseUnread();
    if (budgetIterations)
      budgetIterations->setAttr(
          "value", b.getIndexAttr(s.getCheckpointBytes() /
                                  (stateBytes + keptBytes)));
    memref::AllocaScopeReturnOp::create(b, loc, bySegment.getResults());
    results.assign(scope.getResults().begin(), scope.getResults().end());
  } else {
    // Each reversed iteration recomputes its state from the inits.
    FailureOr<scf::ForOp> reversed = reverseRange(
        zero, trips, adjInits, [&](Value t) {
          return replayRange(zero, t, replayedInits, nullptr);
        });
    if (failed(reversed))
      return failure();
    results.assign(reversed->getResults().begin(), reversed->getResults().end());
  }

  // Captured adjoints first: they replace the adjoints that entered the loop,
  // while an init may itself be a captured value (z = a; loop uses a and z).
  for (unsigned lane = 0; lane < lanes; ++lane) {
    s.setLane(lane);
    ArrayRef<Value> laneResults = ArrayRef<Value>(results).slice(lane * perLane, perLane);
    for (auto [j, v] : llvm::enumerate(captured))
      s.getAdjoints()[v] = laneResults[active.size() + j];
    for (auto [n, i] : llvm::enumerate(active))
      s.accumulate(b, loc, primalInits[i], laneResults[n]);
  }
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
  // Fills a region of `counting` with the replay of the same region of
  // `loop` on the carried values (the new block's arguments but the
  // counter); leaves `b` at the end of the new block.
  auto replayRegion = [&](Region &primal,
                          Region &region) -> FailureOr<IRMapping> {
    region.getBlocks().clear();
    auto *block = new Block();
    region.push_back(block);
    for (Type t : types)
      block->addArgument(t, loc);
    b.setInsertionPointToEnd(block);
    return replayBound(primal.front(), primal.getArguments(),
                       block->getArguments(), b, s);
  };
  FailureOr<IRMapping> test =
      replayRegion(loop.getBefore(), counting.getBefore());
  if (failed(test))
    return failure();
  scf::ConditionOp::create(
      b, loc, test->lookupOrDefault(loop.getConditionOp().getCondition()),
      counting.getBeforeArguments());
  FailureOr<IRMapping> body =
      replayRegion(loop.getAfter(), counting.getAfter());
  if (failed(body))
    return failure();
  SmallVector<Value> next;
  for (Value y : loop.getYieldOp().getOperands())
    next.push_back(body->lookupOrDefault(y));
  next.push_back(
      arith::AddIOp::create(b, loc, counting.getAfterArguments().back(),
                            arith::ConstantIndexOp::create(b, loc, 1)));
  scf::YieldOp::create(b, loc, next);
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

LogicalResult differentiate(func::FuncOp kernel, int64_t maxUnroll,
                            int64_t checkpointBytes, unsigned lanes) {
  auto work = cast<func::FuncOp>(kernel->clone());
  auto cleanup = llvm::make_scope_exit([&] { work->destroy(); });
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
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  auto adjoint = func::FuncOp::create(
      b, kernel.getLoc(), symbols::adjoint(kernel.getSymName()),
      b.getFunctionType(inputs, {}));
  adjoint->setAttr(AdjitDialect::getKernelAttrName(), b.getUnitAttr());
  adjoint->setAttr(kAdjointOfAttr, SymbolRefAttr::get(kernel));
  if (auto names = kernel->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName())) {
    SmallVector<Attribute> all(names.begin(), names.end());
    for (unsigned lane = 0; lane < lanes; ++lane) {
      std::string prefix = lanes == 1 ? "adj_" : "adj" + std::to_string(lane) + "_";
      for (unsigned i : arrayArgs)
        all.push_back(b.getStringAttr(prefix + cast<StringAttr>(names[i]).str()));
    }
    for (unsigned i : finalArgs)
      all.push_back(b.getStringAttr("final_" + cast<StringAttr>(names[i]).str()));
    adjoint->setAttr(AdjitDialect::getArgNamesAttrName(), b.getArrayAttr(all));
  }
  Block *entry = adjoint.addEntryBlock();
  b.setInsertionPointToStart(entry);

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
    SmallVector<func::FuncOp> kernels;
    SymbolTable symbols(getOperation());
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (isKernel(fn) && !fn->hasAttr(kAdjointOfAttr) &&
          !symbols.lookup(symbols::adjoint(fn.getSymName())))
        kernels.push_back(fn);
    for (func::FuncOp kernel : kernels) {
      if (kernel.isExternal()) {
        kernel.emitOpError("kernel has no body to differentiate");
        return signalPassFailure();
      }
      if (failed(differentiate(kernel, maxUnroll, checkpointBytes, lanes)))
        return signalPassFailure();
    }
    if (!keepPrimal) {
      for (func::FuncOp kernel : kernels)
        kernel.erase();
      getOperation().walk([](func::FuncOp fn) { fn->removeAttr(kAdjointOfAttr); });
    }
  }
};

} // namespace
