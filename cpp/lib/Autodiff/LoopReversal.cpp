//===- LoopReversal.cpp - the adjoint of scf.for and scf.while loops ------===//
//
// Step 3 of adjit-adjoint (AdjointPass.cpp) for a loop of `trips`
// iterations, iteration k running the body on state_k (state_0 = the inits,
// state_{k+1} = what the body yields): the adjoint runs the iterations'
// adjoints last to first, each on the state it ran on, and carries the
// adjoints of the carried values and of the outer values the loop uses.
//
// Algorithm: two-level checkpointing.
//  1. Checkpoint planning (planCheckpoints): segments of L iterations, L =
//     ceil(sqrt(trips)) or longer where the checkpoint budget allows (up to
//     trips: one segment).
//  2. A forward sweep (storeCheckpoints) replays all segments but the last
//     and keeps state_{jL} for every segment j (at most ceil(trips / L)
//     copies).
//  3. The reversal takes the segments last to first (reverseSegment): it
//     replays segment j from its checkpoint keeping each of its (at most L)
//     states, and reverses its iterations last to first, each replaying its
//     one iteration from the kept state and applying the rules to it
//     backwards. With a budget (CPU), the segment's replay also keeps the
//     values `worthKeeping` picks and the reversed iteration reads them
//     instead of recomputing them (the ones it turns out not to read are
//     dropped afterwards, with their stores), and the budget counts them
//     with the state.
// Every iteration is replayed at most three times (once when one segment
// fits the budget and values are kept): time O(trips) per thread, and at
// most max(2 ceil(sqrt(trips)) copies of the state, budget +
// ceil(sqrt(trips)) copies) on the thread's stack (in an alloca scope,
// released when the reversal ends). The replays are the primal ops on the
// same inputs, so the result is bitwise the one of recomputing each state
// from the start. (A state that cannot be stored, an array handle carried
// through the loop, falls back to that recomputation, reverseRecomputing:
// O(trips^2) time, O(1) memory.)
//
// An scf.while (in the canonical form of step 1) is first replayed with a
// counter to find its trip count, then reversed the same way.
//
//===----------------------------------------------------------------------===//

#include "AdjointInternal.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::adjit;
using namespace mlir::adjit::autodiff;

namespace {

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

/// The reversal of one loop whose iteration k runs `body` with `carriedArgs`
/// bound to state_k and other block arguments bound by
/// `bindIteration(builder, map, k)`: see the file comment. It carries, per
/// lane, the adjoints of the active carried values, then those of the
/// captured outer values.
class LoopReversal {
public:
  using BindIteration = function_ref<void(OpBuilder &, IRMapping &, Value)>;

  LoopReversal(Operation *loop, ValueRange primalInits, Block &body,
               ValueRange carriedArgs, BindIteration bindIteration,
               OpBuilder &b, AdjointState &s);

  /// Emits the reversal of `trips` iterations at `b` and passes the adjoints
  /// it computes on to the loop's inits and captured values.
  LogicalResult reverse(Value trips);

private:
  /// The segments of a checkpointed reversal and the buffers it keeps.
  struct CheckpointPlan {
    /// Iterations per segment the budget holds: a constant set once the
    /// reversal knows which kept values it reads (null without a budget).
    arith::ConstantIndexOp budgetIterations;
    /// Bytes one copy of the state takes.
    int64_t stateBytes;
    /// The iterations, the segment length L and the segment count.
    Value trips, segment, segments;
    /// state_{jL} for every segment j.
    StateBuffer checkpoints;
    /// The states of the segment being reversed.
    StateBuffer states;
    /// The kept values of each iteration of the segment being reversed.
    StateBuffer kept;
    /// The body's ops whose results are kept, in body order, and the slot in
    /// `kept` of each one's first result.
    SmallVector<Operation *> keptOps;
    DenseMap<Operation *, unsigned> firstSlot;
  };

  /// The adjoints the reversal starts from: those of the loop's results and
  /// of the captured values, lane after lane.
  SmallVector<Value> initialAdjoints();

  /// Replays iteration k of the body on state_k at `b`; the ops
  /// `substitute` binds are not cloned.
  FailureOr<IRMapping> replayIteration(ValueRange state, Value k,
                                       ReplaySubstitute substitute = nullptr);

  /// A loop over [lb, ub) carrying the state, each iteration replaying one
  /// primal iteration; `before(state, iv)` runs first in each and
  /// `after(iteration's mapping, iv)` last. Returns the final state.
  FailureOr<SmallVector<Value>>
  replayRange(Value lb, Value ub, ValueRange state,
              function_ref<void(ValueRange, Value)> before,
              function_ref<void(IRMapping &, Value)> after = nullptr);

  /// A loop reversing `len` iterations, last to first, from `adjInits`:
  /// iteration k = start + len - 1 - r on the state `stateOf(t)`
  /// (t = k - start), its ops replayed but those `kept(op, map, t)` binds,
  /// then the rules applied to them backwards.
  FailureOr<scf::ForOp> reverseRange(
      Value start, Value len, ValueRange adjInits,
      function_ref<FailureOr<SmallVector<Value>>(Value)> stateOf,
      function_ref<bool(Operation &, IRMapping &, Value)> kept = nullptr);

  /// The reversal without stored states: each reversed iteration recomputes
  /// its state from the inits.
  FailureOr<SmallVector<Value>> reverseRecomputing(Value trips,
                                                   ValueRange adjInits);

  /// The two-level checkpointed reversal, in an alloca scope.
  FailureOr<SmallVector<Value>> reverseCheckpointed(Value trips,
                                                    ValueRange adjInits);

  /// Checkpoint planning: the segment length (from the budget, if any), the
  /// buffers, and the values worth keeping.
  CheckpointPlan planCheckpoints(Value trips);

  /// The start and length of segment `j`.
  std::pair<Value, Value> segmentBounds(const CheckpointPlan &plan, Value j);

  /// The forward sweep: replays all segments but the last and stores the
  /// state each segment starts from.
  LogicalResult storeCheckpoints(CheckpointPlan &plan);

  /// The reversal of segment `j`, from the adjoints `adjArgs`: replays it
  /// from its checkpoint storing its states (and kept values), then reverses
  /// its iterations reading them. Returns the adjoints after it.
  FailureOr<SmallVector<Value>> reverseSegment(CheckpointPlan &plan, Value j,
                                               ValueRange adjArgs);

  /// Passes the adjoints the reversal ends with on to the captured values
  /// and the loop's inits.
  void accumulateResults(ArrayRef<Value> results);

  Operation *loop;
  ValueRange primalInits;
  Block &body;
  ValueRange carriedArgs;
  BindIteration bindIteration;
  OpBuilder &b;
  AdjointState &s;
  Location loc;
  llvm::SetVector<Value> captured;
  /// The positions of the active carried values.
  SmallVector<unsigned> active;
  /// The adjoints carried per lane: active.size() + captured.size().
  unsigned lanes, perLane;
  SmallVector<Value> replayedInits;
  scf::YieldOp yield;
  Value zero, one;
};

LoopReversal::LoopReversal(Operation *loop, ValueRange primalInits,
                           Block &body, ValueRange carriedArgs,
                           BindIteration bindIteration, OpBuilder &b,
                           AdjointState &s)
    : loop(loop), primalInits(primalInits), body(body),
      carriedArgs(carriedArgs), bindIteration(bindIteration), b(b), s(s),
      loc(loop->getLoc()), captured(capturedActiveValues(loop)),
      lanes(s.getLanes()), yield(cast<scf::YieldOp>(body.getTerminator())) {
  for (auto [i, arg] : llvm::enumerate(carriedArgs))
    if (AdjointState::isActive(arg.getType()))
      active.push_back(i);
  perLane = active.size() + captured.size();
  for (Value init : primalInits)
    replayedInits.push_back(s.primal(init));
  zero = arith::ConstantIndexOp::create(b, loc, 0);
  one = arith::ConstantIndexOp::create(b, loc, 1);
}

LogicalResult LoopReversal::reverse(Value trips) {
  SmallVector<Value> adjInits = initialAdjoints();
  FailureOr<SmallVector<Value>> results =
      StateBuffer::canStore(carriedArgs.getTypes())
          ? reverseCheckpointed(trips, adjInits)
          : reverseRecomputing(trips, adjInits);
  if (failed(results))
    return failure();
  accumulateResults(*results);
  return success();
}

SmallVector<Value> LoopReversal::initialAdjoints() {
  SmallVector<Value> adjInits;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    s.setLane(lane);
    for (unsigned i : active)
      adjInits.push_back(s.adjointOrZero(b, loc, loop->getResult(i)));
    for (Value v : captured)
      adjInits.push_back(s.adjointOrZero(b, loc, v));
  }
  return adjInits;
}

FailureOr<IRMapping>
LoopReversal::replayIteration(ValueRange state, Value k,
                              ReplaySubstitute substitute) {
  return replayBound(
      body, carriedArgs, state, b, s,
      [&](IRMapping &map) { bindIteration(b, map, k); }, substitute);
}

FailureOr<SmallVector<Value>>
LoopReversal::replayRange(Value lb, Value ub, ValueRange state,
                          function_ref<void(ValueRange, Value)> before,
                          function_ref<void(IRMapping &, Value)> after) {
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
}

FailureOr<scf::ForOp> LoopReversal::reverseRange(
    Value start, Value len, ValueRange adjInits,
    function_ref<FailureOr<SmallVector<Value>>(Value)> stateOf,
    function_ref<bool(Operation &, IRMapping &, Value)> kept) {
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
}

FailureOr<SmallVector<Value>>
LoopReversal::reverseRecomputing(Value trips, ValueRange adjInits) {
  FailureOr<scf::ForOp> reversed =
      reverseRange(zero, trips, adjInits, [&](Value t) {
        return replayRange(zero, t, replayedInits, nullptr);
      });
  if (failed(reversed))
    return failure();
  return SmallVector<Value>(reversed->getResults());
}

FailureOr<SmallVector<Value>>
LoopReversal::reverseCheckpointed(Value trips, ValueRange adjInits) {
  SmallVector<Type> adjTypes;
  for (Value v : adjInits)
    adjTypes.push_back(v.getType());
  auto scope = memref::AllocaScopeOp::create(b, loc, adjTypes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
  CheckpointPlan plan = planCheckpoints(trips);
  if (failed(storeCheckpoints(plan)))
    return failure();

  // The segments last to first.
  auto bySegment =
      scf::ForOp::create(b, loc, zero, plan.segments, one, adjInits);
  {
    OpBuilder::InsertionGuard inner(b);
    setInsertionToEndReplacingTerminator(b, bySegment.getBody());
    Value j = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, plan.segments, one),
        bySegment.getInductionVar());
    FailureOr<SmallVector<Value>> adjOuts =
        reverseSegment(plan, j, bySegment.getRegionIterArgs());
    if (failed(adjOuts))
      return failure();
    scf::YieldOp::create(b, loc, *adjOuts);
  }
  int64_t keptBytes = plan.kept.eraseUnread();
  if (plan.budgetIterations)
    plan.budgetIterations->setAttr(
        "value", b.getIndexAttr(s.getCheckpointBytes() /
                                (plan.stateBytes + keptBytes)));
  memref::AllocaScopeReturnOp::create(b, loc, bySegment.getResults());
  return SmallVector<Value>(scope.getResults());
}

LoopReversal::CheckpointPlan LoopReversal::planCheckpoints(Value trips) {
  TypeRange stateTypes = carriedArgs.getTypes();
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
  return CheckpointPlan{budgetIterations,
                        StateBuffer::bytesPerState(stateTypes),
                        trips,
                        segment,
                        segments,
                        std::move(checkpoints),
                        std::move(states),
                        std::move(kept),
                        std::move(keptOps),
                        std::move(firstSlot)};
}

std::pair<Value, Value> LoopReversal::segmentBounds(const CheckpointPlan &plan,
                                                    Value j) {
  Value start = arith::MulIOp::create(b, loc, j, plan.segment);
  Value len = arith::MinSIOp::create(
      b, loc, plan.segment, arith::SubIOp::create(b, loc, plan.trips, start));
  return {start, len};
}

LogicalResult LoopReversal::storeCheckpoints(CheckpointPlan &plan) {
  // checkpoints[j] = state_{j * segment}; the last segment needs its
  // checkpoint only.
  Value lastSegment = arith::SubIOp::create(b, loc, plan.segments, one);
  auto checkpointing =
      scf::ForOp::create(b, loc, zero, lastSegment, one, replayedInits);
  {
    OpBuilder::InsertionGuard inner(b);
    setInsertionToEndReplacingTerminator(b, checkpointing.getBody());
    Value j = checkpointing.getInductionVar();
    ValueRange state = checkpointing.getRegionIterArgs();
    plan.checkpoints.store(b, loc, state, j);
    auto [start, len] = segmentBounds(plan, j);
    FailureOr<SmallVector<Value>> next = replayRange(
        start, arith::AddIOp::create(b, loc, start, len), state, nullptr);
    if (failed(next))
      return failure();
    scf::YieldOp::create(b, loc, *next);
  }
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                    plan.segments, zero);
  auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(ifAny.thenBlock());
  plan.checkpoints.store(b, loc, checkpointing.getResults(), lastSegment);
  return success();
}

FailureOr<SmallVector<Value>>
LoopReversal::reverseSegment(CheckpointPlan &plan, Value j,
                             ValueRange adjArgs) {
  auto [start, len] = segmentBounds(plan, j);
  // states[t] = state_{start + t}, and kept[t] its kept values.
  Value end = arith::AddIOp::create(b, loc, start, len);
  Value t;
  if (failed(replayRange(
          start, end, plan.checkpoints.load(b, loc, j),
          [&](ValueRange state, Value k) {
            t = arith::SubIOp::create(b, loc, k, start);
            plan.states.store(b, loc, state, t);
          },
          [&](IRMapping &map, Value) {
            for (Operation *op : plan.keptOps)
              for (auto [n, result] : llvm::enumerate(op->getResults()))
                plan.kept.storeSlot(b, loc, plan.firstSlot[op] + n,
                                    map.lookup(result), t);
          })))
    return failure();
  FailureOr<scf::ForOp> reversed = reverseRange(
      start, len, adjArgs,
      [&](Value t) -> FailureOr<SmallVector<Value>> {
        return plan.states.load(b, loc, t);
      },
      [&](Operation &op, IRMapping &map, Value t) {
        auto slot = plan.firstSlot.find(&op);
        if (slot == plan.firstSlot.end())
          return false;
        for (auto [n, result] : llvm::enumerate(op.getResults()))
          map.map(result, plan.kept.loadSlot(b, loc, slot->second + n, t));
        return true;
      });
  if (failed(reversed))
    return failure();
  // Keep only what the reversal reads.
  eraseDeadOps(reversed->getRegion());
  return SmallVector<Value>(reversed->getResults());
}

void LoopReversal::accumulateResults(ArrayRef<Value> results) {
  // Captured adjoints first: they replace the adjoints that entered the loop,
  // while an init may itself be a captured value (z = a; loop uses a and z).
  for (unsigned lane = 0; lane < lanes; ++lane) {
    s.setLane(lane);
    ArrayRef<Value> laneResults = results.slice(lane * perLane, perLane);
    for (auto [j, v] : llvm::enumerate(captured))
      s.getAdjoints()[v] = laneResults[active.size() + j];
    for (auto [n, i] : llvm::enumerate(active))
      s.accumulate(b, loc, primalInits[i], laneResults[n]);
  }
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

} // namespace

LogicalResult autodiff::reverseFor(scf::ForOp loop, OpBuilder &b,
                                  AdjointState &s) {
  Location loc = loop.getLoc();
  Value lb = s.primal(loop.getLowerBound()), ub = s.primal(loop.getUpperBound());
  Value step = s.primal(loop.getStep());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, ub, lb), zero);
  Value trips = arith::CeilDivSIOp::create(b, loc, span, step);
  Value iv = loop.getInductionVar();
  auto bindIteration = [&](OpBuilder &builder, IRMapping &map, Value k) {
    map.map(iv, arith::AddIOp::create(
                    builder, loc, lb,
                    arith::MulIOp::create(builder, loc, k, step)));
  };
  return LoopReversal(loop, loop.getInitArgs(), *loop.getBody(),
                      loop.getRegionIterArgs(), bindIteration, b, s)
      .reverse(trips);
}

LogicalResult autodiff::reverseWhile(scf::WhileOp loop, OpBuilder &b,
                                    AdjointState &s) {
  FailureOr<Value> trips = whileTripCount(loop, b, s);
  if (failed(trips))
    return failure();
  // Canonical form: the before region only tests, and forwards the carried
  // values unchanged, so iteration k is the after region on state_k.
  auto bindIteration = [](OpBuilder &, IRMapping &, Value) {};
  return LoopReversal(loop, loop.getInits(), loop.getAfter().front(),
                      loop.getAfterArguments(), bindIteration, b, s)
      .reverse(*trips);
}
