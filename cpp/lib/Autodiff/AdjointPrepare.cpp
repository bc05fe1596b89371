//===- AdjointPrepare.cpp - step 1 of adjit-adjoint -----------------------===//
//
// Step 1 of the algorithm in AdjointPass.cpp, on a clone of the kernel, so
// that the replay reads only what the forward launch read and the reversal
// meets only what it can reverse exactly:
//  1. Reject float atomic exch/cas (no gradient is defined) and calls not
//     inlined (but to callees with a custom adjoint).
//  2. Fully unroll scf.for loops with small constant trip counts; rewrite
//     scf.while loops into the canonical form the loop reversal expects (the
//     condition forwards exactly its block's arguments).
//  3. Carry array elements as values where a thread reads back what it
//     wrote to its own element: through a loop as one more iter_arg,
//     innermost loops first; by forwarding stores to later loads; through
//     the whole kernel, loaded once and stored once before the return.
//  4. Reject an array the kernel still reads after writing it, with a
//     diagnostic at the write: every remaining load of an array the kernel
//     writes must precede its writes, so that it reads the runtime's
//     pre-launch snapshot.
//
//===----------------------------------------------------------------------===//

#include "AdjointInternal.h"
#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::autodiff;

namespace {

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

} // namespace

bool autodiff::writesMemory(Operation *op) {
  std::optional<ElementAccess> access = elementAccess(op);
  return access && access->writes();
}

bool autodiff::writesActiveValue(Operation *op) {
  std::optional<ElementAccess> access = elementAccess(op);
  return access && access->writes() &&
         AdjointState::isActive(access->value.getType());
}

namespace {

/// The float values of `fn` that depend on its differentiable inputs: its
/// float arguments and what it reads from arrays with gradients (loads,
/// atomics, calls taking such arrays), through any op but adjit.stop_gradient (a forward dataflow fixpoint; control
/// dependence passes no gradient). The rest, such as a search that reads
/// only stopped values and memory at addresses, needs no adjoint.
DenseSet<Value> variedValues(func::FuncOp fn) {
  DenseSet<Value> varied;
  auto isVaried = [&](Value v) { return varied.contains(v); };
  auto mark = [&](Value v, bool from) {
    return from && AdjointState::isActive(v.getType()) && varied.insert(v).second;
  };
  Block &entry = fn.getBody().front();
  for (BlockArgument arg : entry.getArguments())
    mark(arg, true);
  bool changed = true;
  while (changed) {
    changed = false;
    fn.walk([&](Operation *op) {
      if (isa<StopGradientOp>(op))
        return;
      if (auto access = dyn_cast<ArrayElementAccessOpInterface>(op)) {
        bool fromMemory = access.readsElement() &&
                          !isAddressedArray(access.getAccessedArray());
        for (Value r : op->getResults())
          changed |= mark(r, fromMemory || llvm::any_of(op->getOperands(), isVaried));
        return;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
          bool in = isVaried(loop.getInitArgs()[i]) || isVaried(yield.getOperand(i));
          changed |= mark(arg, in);
          changed |= mark(loop.getResult(i), in);
        }
        return;
      }
      if (auto loop = dyn_cast<scf::WhileOp>(op)) {
        auto yield = cast<scf::YieldOp>(loop.getAfterBody()->getTerminator());
        for (auto [i, arg] : llvm::enumerate(loop.getBeforeArguments()))
          changed |= mark(arg, isVaried(loop.getInits()[i]) || isVaried(yield.getOperand(i)));
        scf::ConditionOp condition = loop.getConditionOp();
        for (auto [i, arg] : llvm::enumerate(loop.getAfterArguments())) {
          changed |= mark(arg, isVaried(condition.getArgs()[i]));
          changed |= mark(loop.getResult(i), isVaried(condition.getArgs()[i]));
        }
        return;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        for (auto [i, r] : llvm::enumerate(branch.getResults())) {
          bool in = isVaried(branch.thenYield().getOperand(i)) ||
                    (branch.elseBlock() && isVaried(branch.elseYield().getOperand(i)));
          changed |= mark(r, in);
        }
        return;
      }
      if (op->getNumRegions() != 0) {
        // Other region ops: every float value in and out, conservatively.
        for (Value r : op->getResults())
          changed |= mark(r, true);
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (BlockArgument arg : block.getArguments())
              changed |= mark(arg, true);
        return;
      }
      // An op that takes an array with gradients (a call of a function with
      // a custom adjoint) may read it: its results count as read.
      bool readsActiveArray = llvm::any_of(op->getOperands(), [](Value v) {
        return isa<ArrayType>(v.getType()) && AdjointState::isActive(
                   cast<ArrayType>(v.getType()).getElementType()) &&
               !isAddressedArray(v);
      });
      for (Value r : op->getResults())
        changed |= mark(r, readsActiveArray || llvm::any_of(op->getOperands(), isVaried));
    });
  }
  return varied;
}

} // namespace

bool autodiff::hasActiveWork(Operation *root) {
  auto fn = root->getParentOfType<func::FuncOp>();
  DenseSet<Value> varied;
  if (fn)
    varied = variedValues(fn);
  bool active = false;
  root->walk([&](Operation *op) {
    bool variedResult = llvm::any_of(op->getResults(), [&](Value r) {
      return AdjointState::isActive(r.getType()) && (!fn || varied.contains(r));
    });
    if (variedResult || writesActiveValue(op))
      active = true;
  });
  return active;
}

namespace {

/// The source-level name of kernel argument `index`, for diagnostics.
std::string argName(func::FuncOp kernel, unsigned index) {
  if (auto names = kernel->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName()))
    if (index < names.size())
      if (auto name = dyn_cast<StringAttr>(names[index]))
        return "'" + name.str() + "'";
  return "#" + std::to_string(index);
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

} // namespace

LogicalResult autodiff::prepare(func::FuncOp work, func::FuncOp kernel,
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
    forwardStores(work.getBody().front(), before, DenseMap<Value, Value>());
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
