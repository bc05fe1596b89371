//===- VectorizeThreads.cpp - kernel bodies as SIMD programs over threads -===//
//
// Algorithm: after adjit-cpu-launch, each kernel body `@k_body(args...,
// %linear, %total, %e1, %e2, %e3, %record)` runs one thread. This pass
// makes `@k_body_simd` with the same signature, which runs the W threads
// %linear .. %linear + W - 1 at once, and has the CPU entry call it for
// whole groups of W threads (the rest of a chunk calls the scalar body).
//
// Values are uniform (the same for every thread: constants, arguments,
// loop counters of uniform loops) or varying (derived from %linear). A
// varying value of type T becomes a vector with one more, innermost,
// dimension of W lanes: f32 -> vector<Wxf32>, vector<3xf32> ->
// vector<3xWxf32>. Element-wise ops apply to the widened operands
// (uniform ones broadcast); vector.extract/insert/from_elements/broadcast
// keep their positions, which address the leading (component) dimensions.
// `scf.for` with uniform bounds stays a loop carrying widened values (with
// bounds that differ between lanes, a loop to the largest trip count, each
// lane masked after its own); an
// `scf.if` on a uniform condition stays a branch; on a varying condition
// both sides run, each under its mask of lanes, and the results are
// selected per lane. An `scf.while` runs while any lane runs, each lane
// keeping the results of the iteration it stopped at. Loads and stores at varying indices become gathers and
// scatters under the current mask (consecutive ones on 1-D arrays: vector
// loads and stores); integer divisions divide masked-off lanes by 1. A
// failed bounds check's report runs lane by lane, for the lanes that fail.
//
// Every lane computes the same operations on the same values as the scalar
// body, so results are bitwise the same, provided memory is not shared
// between threads in a way whose outcome depends on their order: every
// access to an array the body writes must index one dimension with the
// same (uniform base + lane), so each thread touches its own elements.
// Atomics on such elements are then the lanes' read, op and write (no other
// thread can come between). A local array (memref.alloca: the loop
// reversal's checkpoint stacks) of a size all lanes share becomes one
// array of widened elements, lane l's copy of element k at [k][..., l]:
// pushing a state of 8 lanes is one vector store. Its loads and stores must
// use indices all lanes share (under a mask: a read, a select, a write).
// Kernels outside what is handled (atomics at shared elements, calls, f16
// and bf16, strided or overlapping arrays, local arrays at indices that
// differ between lanes, ...) keep the scalar body; the body records why in
// `adjit.simd` (visible in the stage dump).
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITVECTORIZETHREADS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;

namespace {

/// Arguments after the kernel's own in an outlined body (LaunchUtils.h):
/// %linear, %total, 3 extents, %record.
constexpr unsigned kTrailingBodyArgs = 6;

/// Integer divisions and remainders: they trap on a zero divisor.
bool isIntegerDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
             arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
}

/// Whether `block` only reports a failed check (adjit-access-checks): its
/// side effects are LLVM dialect ops on the error record, and it yields
/// values defined outside it or constants.
bool isCheckReport(Block &block) {
  bool writesRecord = false;
  WalkResult walk = block.walk([&](Operation *op) {
    if (isa<LLVM::LLVMDialect>(op->getDialect())) {
      writesRecord |= isa<LLVM::AtomicCmpXchgOp>(op);
      return WalkResult::advance();
    }
    if (isa<scf::IfOp, scf::YieldOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted() || !writesRecord)
    return false;
  for (Value v : block.getTerminator()->getOperands())
    if (v.getParentBlock() == &block && !matchPattern(v, m_Constant()))
      return false;
  return true;
}

/// Builds the SIMD version of one kernel body; fails with a reason.
class ThreadVectorizer {
public:
  ThreadVectorizer(func::FuncOp body, unsigned width)
      : body(body), width(width), b(body.getContext()) {}

  /// The SIMD body, created after the scalar one; or failure, with `reason`.
  FailureOr<func::FuncOp> run();

  std::string reason;

private:
  LogicalResult fail(Operation *op, const Twine &why) {
    reason = (why + (op ? " (" + op->getName().getStringRef() + ")" : Twine(""))).str();
    return failure();
  }

  /// vector<W x T> for a scalar T; vector<s... x W x T> for vector<s... x T>.
  Type wideType(Type type) const {
    if (isa<IntegerType, FloatType, IndexType>(type))
      return VectorType::get({int64_t(width)}, type);
    if (auto vec = dyn_cast<VectorType>(type)) {
      if (vec.isScalable())
        return {};
      SmallVector<int64_t> shape(vec.getShape());
      shape.push_back(width);
      return VectorType::get(shape, vec.getElementType());
    }
    return {};
  }

  bool isVarying(Value v) const { return wide.count(v); }
  Value uniform(Value v) const { return mapping.lookupOrDefault(v); }

  /// The widened value of `v` (a uniform one broadcast to every lane).
  Value widened(Value v, Location loc) {
    if (Value w = wide.lookup(v))
      return w;
    Value u = uniform(v);
    Type type = wideType(u.getType());
    if (isa<VectorType>(u.getType())) {
      // Lanes are the innermost dimension: broadcast in front, then move it.
      auto vec = cast<VectorType>(u.getType());
      SmallVector<int64_t> shape{int64_t(width)};
      shape.append(vec.getShape().begin(), vec.getShape().end());
      Value front = vector::BroadcastOp::create(
          b, loc, VectorType::get(shape, vec.getElementType()), u);
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d <= vec.getRank(); ++d)
        perm.push_back(d);
      perm.push_back(0);
      return vector::TransposeOp::create(b, loc, front, perm);
    }
    return vector::BroadcastOp::create(b, loc, type, u);
  }

  Value laneIota(Location loc, Type elementType) {
    SmallVector<Attribute> lanes;
    for (unsigned l = 0; l < width; ++l)
      lanes.push_back(IntegerAttr::get(elementType, l));
    auto type = VectorType::get({int64_t(width)}, elementType);
    return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, lanes));
  }

  Value zeros(Location loc, Type type) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return arith::ConstantOp::create(b, loc, type,
                                       DenseElementsAttr::get(shaped, b.getZeroAttr(shaped.getElementType())));
    return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(b.getZeroAttr(type)));
  }

  Value allTrue(Location loc) {
    auto type = VectorType::get({int64_t(width)}, b.getI1Type());
    return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, true));
  }

  /// `mask` (vector<W x i1>) broadcast to the shape of the widened `type`.
  Value maskLike(Value mask, Type type, Location loc) {
    auto vec = cast<VectorType>(type);
    if (vec.getRank() == 1)
      return mask;
    return vector::BroadcastOp::create(
        b, loc, VectorType::get(vec.getShape(), b.getI1Type()), mask);
  }

  LogicalResult checkMemory();
  LogicalResult visitBlock(Block &block, Value mask);
  LogicalResult visitOp(Operation *op, Value mask);
  LogicalResult visitUniform(Operation *op, Value mask);
  LogicalResult visitElementwise(Operation *op, Value mask);
  LogicalResult visitLoad(memref::LoadOp op, Value mask);
  LogicalResult visitStore(memref::StoreOp op, Value mask);
  LogicalResult visitAtomic(memref::AtomicRMWOp op, Value mask);
  LogicalResult visitAlloca(memref::AllocaOp op);
  LogicalResult visitLocalLoad(memref::LoadOp op, Value mask);
  LogicalResult visitLocalStore(memref::StoreOp op, Value mask);
  /// The lanes' elements of an argument array at varying `indices`
  /// (`memref` and `indices` the scalar body's), under `mask`.
  Value loadLanes(Value memref, ValueRange indices, Type element, Value mask, Location loc);
  /// Stores the lanes of `value` (widened) at varying `indices`, under `mask`.
  void storeLanes(Value memref, ValueRange indices, Value value, Value mask, Location loc);
  /// `then` (which yields values of `types`, or nothing) if any lane of
  /// `mask` is on; zeros otherwise.
  ValueRange ifAnyLane(Value mask, TypeRange types, Location loc,
                       function_ref<SmallVector<Value>()> then);
  LogicalResult visitFor(scf::ForOp op, Value mask);
  LogicalResult visitVaryingFor(scf::ForOp op, Value mask);
  LogicalResult visitIf(scf::IfOp op, Value mask);
  LogicalResult visitWhile(scf::WhileOp op, Value mask);
  /// One branch of an scf.if (which yields `yields`, widened), under `mask`.
  LogicalResult visitBranch(Block &block, Value mask, SmallVector<Value> &yields);
  LogicalResult serializeReport(Block &block, Value mask, SmallVector<Value> &yields);
  LogicalResult visitReduction(vector::ReductionOp op);
  /// The element offsets (vector<W x index>) of a varying access to `memref`
  /// at `indices`, from its first element (identity layouts only: see
  /// checkMemory).
  Value elementOffsets(Value memref, ValueRange indices, Location loc);

  func::FuncOp body;
  unsigned width;
  OpBuilder b;
  IRMapping mapping;            // uniform values: scalar body -> SIMD body
  DenseMap<Value, Value> wide;  // varying values: scalar body -> widened
  /// Varying index values equal to (uniform base + lane): their base.
  DenseMap<Value, Value> consecutive;
  /// Arrays the body writes (then accessed at one index list).
  DenseSet<Value> writtenArrays;
  /// The scalar body's local arrays (memref.alloca): in the SIMD body, one
  /// array of the same shape whose elements are widened (the lanes
  /// innermost), so each lane has its own copy.
  DenseSet<Value> localArrays;

  /// Per written array: the varying indices (position, value) of its
  /// accesses, which must all be the same and differ between lanes.
  DenseMap<Value, SmallVector<std::pair<unsigned, Value>>> ownElements;
  /// (x, extent) -> the scalar body's x % extent and x / extent: thread
  /// coordinates are such pairs (LaunchUtils.h).
  DenseMap<std::pair<Value, Value>, std::pair<Value, Value>> splits;
  /// The scalar body's thread index.
  Value linearIndex;

  /// Whether the values in `indices` determine `x` (so they differ between
  /// lanes, as x does): x is among them, or x % e is and x / e is determined.
  bool determines(ArrayRef<Value> indices, Value x) const {
    if (llvm::is_contained(indices, x))
      return true;
    for (const auto &[key, parts] : splits)
      if (key.first == x && parts.first && parts.second &&
          llvm::is_contained(indices, parts.first) && determines(indices, parts.second))
        return true;
    return false;
  }

  /// Each lane must touch only its own elements of a written array: every
  /// access indexes it with the same varying indices, which differ between
  /// lanes (a consecutive index, or thread coordinates that determine the
  /// thread index).
  LogicalResult checkOwnElement(Operation *op, Value memref, ValueRange indices,
                                const char *why = "an array written at elements other threads may access") {
    if (!writtenArrays.count(memref))
      return success();
    SmallVector<std::pair<unsigned, Value>> key;
    SmallVector<Value> varying;
    for (auto [d, index] : llvm::enumerate(indices))
      if (isVarying(index)) {
        key.push_back({unsigned(d), index});
        varying.push_back(index);
      }
    bool perLane = llvm::any_of(varying, [&](Value v) { return consecutive.count(v); }) ||
                   determines(varying, linearIndex);
    auto known = ownElements.find(memref);
    if (perLane && known == ownElements.end()) {
      ownElements[memref] = key;
      return success();
    }
    if (perLane && known->second == key)
      return success();
    return fail(op, why);
  }
};

LogicalResult ThreadVectorizer::checkMemory() {
  // Per array: its loads and stores.
  DenseMap<Value, SmallVector<Operation *>> accesses;
  DenseSet<Value> &written = writtenArrays;
  WalkResult walk = body.walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses[load.getMemRef()].push_back(op);
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses[store.getMemRef()].push_back(op);
      written.insert(store.getMemRef());
    } else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      // At elements of its own (checkOwnElement), a lane's atomic is a
      // read-modify-write no other thread's access can interleave with.
      switch (atomic.getKind()) {
      case arith::AtomicRMWKind::addf:
      case arith::AtomicRMWKind::addi:
      case arith::AtomicRMWKind::assign:
      case arith::AtomicRMWKind::andi:
      case arith::AtomicRMWKind::ori:
      case arith::AtomicRMWKind::maxs:
      case arith::AtomicRMWKind::mins:
      case arith::AtomicRMWKind::maxu:
      case arith::AtomicRMWKind::minu:
        break;
      default:
        (void)fail(op, "atomics of this kind");
        return WalkResult::interrupt();
      }
      accesses[atomic.getMemref()].push_back(op);
      written.insert(atomic.getMemref());
    } else if (isa<memref::GenericAtomicRMWOp>(op)) {
      (void)fail(op, "atomics");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // A float add whose result is unused may be logged and applied after the
  // launch, in thread order (adjit-defer-float-atomics, ordered launches),
  // where the SIMD body's add is immediate. adjit-atomic-order only orders
  // kernels whose arrays take nothing but such adds, but rather than rely on
  // it, such arrays must take only such adds here too (which then sum in
  // each thread's program order either way).
  auto deferrable = [](Operation *op) {
    auto atomic = dyn_cast<memref::AtomicRMWOp>(op);
    return atomic && atomic.getKind() == arith::AtomicRMWKind::addf && atomic.getResult().use_empty();
  };
  for (auto &[memref, ops] : accesses)
    if (llvm::any_of(ops, deferrable))
      for (Operation *op : ops)
        if (!deferrable(op))
          return fail(op, "an array added to atomically and also read or written");
  for (auto &[memref, ops] : accesses) {
    if (memref.getDefiningOp<memref::AllocaOp>()) {
      // A local array (the loop reversal's checkpoints): every lane gets its
      // own (visitAlloca); only loads and stores may use it.
      written.erase(memref);
      localArrays.insert(memref);
      for (Operation *user : memref.getUsers()) {
        if (isa<memref::AtomicRMWOp>(user))
          return fail(user, "atomics on a local array");
        if (!isa<memref::LoadOp, memref::StoreOp, memref::DimOp>(user) ||
            (isa<memref::StoreOp>(user) && cast<memref::StoreOp>(user).getValue() == memref))
          return fail(user, "a local array used other than by loads and stores");
      }
      continue;
    }
    if (!isa<BlockArgument>(memref) ||
        cast<BlockArgument>(memref).getOwner() != &body.front())
      return fail(ops.front(), "an array that is not an argument");
    auto type = cast<MemRefType>(memref.getType());
    if (!type.getLayout().isIdentity())
      return fail(ops.front(), "strided arrays");
    Type element = type.getElementType();
    if (!isa<IntegerType, FloatType, IndexType>(element) || element.isInteger(1) ||
        element.isF16() || element.isBF16())
      return fail(ops.front(), "array elements of this type");
  }
  return success();
}

/// A math op that becomes a function call (libm's, or adjit's polynomials)
/// rather than an instruction LLVM widens itself.
bool isMathCall(Operation *op) {
  return isa<math::MathDialect>(op->getDialect()) &&
         !isa<math::SqrtOp, math::AbsFOp, math::AbsIOp, math::FmaOp,
              math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
              math::TruncOp, math::CopySignOp, math::CountLeadingZerosOp,
              math::CountTrailingZerosOp, math::CtPopOp>(op);
}

FailureOr<func::FuncOp> ThreadVectorizer::run() {
  if (!body.getBody().hasOneBlock())
    return fail(nullptr, "a body of several blocks"), failure();
  if (body.getNumArguments() < kTrailingBodyArgs)
    return fail(nullptr, "not a kernel body"), failure();
  // Straight-line bodies are left to LLVM's loop vectorizer, which widens
  // the thread loop itself and turns strided vec3 accesses into loads and
  // shuffles (where this pass would gather and scatter); unless they call
  // math functions (sin, exp, ...): LLVM does not widen a loop with calls,
  // and here they become vector code (adjit-approximate-math).
  bool branches = body.walk([](Operation *op) {
                        return isa<scf::ForOp, scf::WhileOp, scf::IfOp>(op) ||
                                       isMathCall(op)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      }).wasInterrupted();
  if (!branches)
    return fail(nullptr, "straight-line code (LLVM's loop vectorizer widens the thread loop)"), failure();
  if (failed(checkMemory()))
    return failure();
  unsigned linearPos = body.getNumArguments() - kTrailingBodyArgs;
  Location loc = body.getLoc();
  b.setInsertionPointAfter(body);
  auto simd = func::FuncOp::create(b, loc, (body.getSymName() + "_simd").str(),
                                   body.getFunctionType());
  simd.setPrivate();
  for (NamedAttribute attr : body->getAttrs())
    if (attr.getName() != SymbolTable::getSymbolAttrName() &&
        attr.getName() != body.getFunctionTypeAttrName())
      simd->setAttr(attr.getName(), attr.getValue());
  Block *entry = simd.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Block &scalarEntry = body.front();
  for (auto [from, to] : llvm::zip(scalarEntry.getArguments(), entry->getArguments()))
    mapping.map(from, to);
  // Lane l runs thread %linear + l.
  Value linear = scalarEntry.getArgument(linearPos);
  Value base = entry->getArgument(linearPos);
  Value lanes = arith::AddIOp::create(b, loc, widened(linear, loc),
                                      laneIota(loc, b.getIndexType()));
  wide[linear] = lanes;
  consecutive[linear] = base;
  linearIndex = linear;
  if (failed(visitBlock(scalarEntry, Value()))) {
    simd.erase();
    return failure();
  }
  func::ReturnOp::create(b, loc);
  return simd;
}

LogicalResult ThreadVectorizer::visitBlock(Block &block, Value mask) {
  for (Operation &op : block.without_terminator())
    if (failed(visitOp(&op, mask)))
      return failure();
  return success();
}

LogicalResult ThreadVectorizer::visitOp(Operation *op, Value mask) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return visitLoad(load, mask);
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return visitStore(store, mask);
  if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
    return visitAtomic(atomic, mask);
  if (auto alloca = dyn_cast<memref::AllocaOp>(op))
    return visitAlloca(alloca);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return visitFor(loop, mask);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return visitIf(branch, mask);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return visitWhile(loop, mask);
  bool anyVarying = llvm::any_of(op->getOperands(), [&](Value v) { return isVarying(v); });
  if (!anyVarying && !(mask && isIntegerDivision(op)))
    return visitUniform(op, mask);
  if (auto reduction = dyn_cast<vector::ReductionOp>(op))
    return visitReduction(reduction);
  return visitElementwise(op, mask);
}

LogicalResult ThreadVectorizer::visitUniform(Operation *op, Value mask) {
  if (op->getNumRegions() != 0)
    return fail(op, "an op with regions");
  // (the stack save and restore around the loop reversal's local arrays
  // run once for the group, as the allocas do)
  if (!isMemoryEffectFree(op) && !isa<memref::DimOp, LLVM::StackSaveOp, LLVM::StackRestoreOp>(op))
    return fail(op, "an op with side effects");
  for (Type t : op->getResultTypes())
    if (isa<FloatType>(getElementTypeOrSelf(t)) &&
        (getElementTypeOrSelf(t).isF16() || getElementTypeOrSelf(t).isBF16()))
      return fail(op, "f16 or bf16 arithmetic");
  b.clone(*op, mapping);
  return success();
}

LogicalResult ThreadVectorizer::visitElementwise(Operation *op, Value mask) {
  Location loc = op->getLoc();
  // (checked before any operand is widened: a print's format string, say,
  // has no vector type)
  if (!isMemoryEffectFree(op))
    return fail(op, "an op with side effects on varying values");
  for (Value v : op->getOperands())
    if (!wideType(v.getType()))
      return fail(op, "an operand of an unsupported type");
  SmallVector<Type> resultTypes;
  for (Type t : op->getResultTypes()) {
    Type elementType = getElementTypeOrSelf(t);
    if (elementType.isF16() || elementType.isBF16())
      return fail(op, "f16 or bf16 arithmetic");
    Type w = wideType(t);
    if (!w)
      return fail(op, "a value of an unsupported type");
    resultTypes.push_back(w);
  }
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(widened(v, loc));
  Operation *made = nullptr;
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    Value cond = operands[0];
    if (cast<VectorType>(cond.getType()).getRank() != cast<VectorType>(resultTypes[0]).getRank())
      cond = maskLike(cond, resultTypes[0], loc);
    made = arith::SelectOp::create(b, loc, cond, operands[1], operands[2]);
  } else if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
    if (!extract.getDynamicPosition().empty())
      return fail(op, "a component at a varying position");
    made = vector::ExtractOp::create(b, loc, operands[0], extract.getStaticPosition());
  } else if (auto insert = dyn_cast<vector::InsertOp>(op)) {
    if (!insert.getDynamicPosition().empty())
      return fail(op, "a component at a varying position");
    made = vector::InsertOp::create(b, loc, operands[0], operands[1], insert.getStaticPosition());
  } else if (auto elements = dyn_cast<vector::FromElementsOp>(op)) {
    auto type = cast<VectorType>(elements.getType());
    Value result = zeros(loc, resultTypes[0]);
    SmallVector<int64_t> position(type.getRank(), 0);
    for (Value element : operands) {
      result = vector::InsertOp::create(b, loc, element, result, position);
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        if (++position[d] < type.getDimSize(d))
          break;
        position[d] = 0;
      }
    }
    made = result.getDefiningOp();
  } else if (auto elements = dyn_cast<vector::ToElementsOp>(op)) {
    // Element k (row-major) of each lane: the lanes at that position.
    auto type = cast<VectorType>(elements.getSource().getType());
    SmallVector<int64_t> position(type.getRank(), 0);
    for (Value result : elements.getResults()) {
      wide[result] = vector::ExtractOp::create(b, loc, operands[0], position);
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        if (++position[d] < type.getDimSize(d))
          break;
        position[d] = 0;
      }
    }
    return success();
  } else if (isa<vector::BroadcastOp>(op)) {
    made = vector::BroadcastOp::create(b, loc, resultTypes[0], operands[0]);
  } else if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0 &&
             isMemoryEffectFree(op) &&
             (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))) {
    // Integer division traps on zero: masked-off lanes divide by one.
    if (mask && isIntegerDivision(op)) {
      Type divisorType = operands[1].getType();
      Value one = arith::ConstantOp::create(
          b, loc, divisorType,
          DenseElementsAttr::get(cast<ShapedType>(divisorType),
                                 IntegerAttr::get(getElementTypeOrSelf(divisorType), 1)));
      operands[1] = arith::SelectOp::create(b, loc, maskLike(mask, divisorType, loc),
                                            operands[1], one);
    }
    OperationState state(loc, op->getName().getStringRef(), operands, resultTypes,
                         op->getAttrs());
    made = b.create(state);
  } else {
    return fail(op, "an operation on varying values that is not vectorized");
  }
  for (auto [from, to] : llvm::zip(op->getResults(), made->getResults())) {
    if (to.getType() != wideType(from.getType()))
      return fail(op, "a result of an unexpected shape");
    wide[from] = to;
  }
  if (isa<arith::RemUIOp, arith::DivUIOp>(op) && isVarying(op->getOperand(0)) &&
      !isVarying(op->getOperand(1))) {
    auto &parts = splits[{op->getOperand(0), op->getOperand(1)}];
    (isa<arith::RemUIOp>(op) ? parts.first : parts.second) = op->getResult(0);
  }
  // (consecutive + uniform) and casts of consecutive values stay consecutive
  // (thread indices are < 2**31: no cast or add wraps).
  if (auto add = dyn_cast<arith::AddIOp>(op)) {
    for (unsigned k = 0; k < 2; ++k) {
      Value c = add.getOperand(k), other = add.getOperand(1 - k);
      if (consecutive.count(c) && !isVarying(other))
        consecutive[add.getResult()] =
            arith::AddIOp::create(b, loc, consecutive[c], uniform(other));
    }
  } else if (auto cast = dyn_cast<arith::IndexCastOp>(op)) {
    if (consecutive.count(cast.getIn()))
      consecutive[cast.getResult()] =
          arith::IndexCastOp::create(b, loc, cast.getType(), consecutive[cast.getIn()]);
  }
  return success();
}

LogicalResult ThreadVectorizer::visitReduction(vector::ReductionOp op) {
  if (op.getAcc())
    return fail(op, "a reduction with an accumulator");
  auto type = cast<VectorType>(op.getVector().getType());
  if (type.getRank() != 1)
    return fail(op, "a reduction of a matrix");
  Location loc = op.getLoc();
  Value source = widened(op.getVector(), loc);
  // In order, as the scalar reduction: ((v0 op v1) op v2) ...
  Value result = vector::ExtractOp::create(b, loc, source, ArrayRef<int64_t>{0});
  for (int64_t k = 1; k < type.getDimSize(0); ++k) {
    Value next = vector::ExtractOp::create(b, loc, source, ArrayRef<int64_t>{k});
    Value combined = vector::makeArithReduction(b, loc, op.getKind(), result, next,
                                                op.getFastmathAttr());
    if (!combined)
      return fail(op, "a reduction of this kind");
    result = combined;
  }
  wide[op.getResult()] = result;
  return success();
}

Value ThreadVectorizer::elementOffsets(Value memref, ValueRange indices, Location loc) {
  auto type = cast<MemRefType>(memref.getType());
  Value offsets;
  Value stride; // elements between consecutive indices of dimension d
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value index = widened(indices[d], loc);
    Value term = index;
    if (stride)
      term = arith::MulIOp::create(
          b, loc, index, vector::BroadcastOp::create(b, loc, index.getType(), stride));
    offsets = offsets ? Value(arith::AddIOp::create(b, loc, offsets, term)) : term;
    Value extent = type.isDynamicDim(d)
                       ? Value(memref::DimOp::create(b, loc, uniform(memref), d))
                       : Value(arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)));
    stride = stride ? Value(arith::MulIOp::create(b, loc, stride, extent)) : extent;
  }
  return offsets;
}

LogicalResult ThreadVectorizer::visitLoad(memref::LoadOp op, Value mask) {
  Location loc = op.getLoc();
  if (localArrays.count(op.getMemRef()))
    return visitLocalLoad(op, mask);
  if (failed(checkOwnElement(op, op.getMemRef(), op.getIndices())))
    return failure();
  Type element = op.getType();
  bool varying = llvm::any_of(op.getIndices(), [&](Value v) { return isVarying(v); });
  if (!varying) {
    if (!mask) {
      b.clone(*op, mapping);
      return success();
    }
    // Read once, if any lane reads it (it may be out of range otherwise).
    Value any = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, mask);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{element}, any, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value loaded = b.clone(*op, mapping)->getResult(0);
      scf::YieldOp::create(b, loc, loaded);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{zeros(loc, element)});
    }
    mapping.map(op.getResult(), ifOp.getResult(0));
    return success();
  }
  wide[op.getResult()] = loadLanes(op.getMemRef(), op.getIndices(), element, mask, loc);
  return success();
}

Value ThreadVectorizer::loadLanes(Value scalarMemref, ValueRange indices, Type element, Value mask,
                                  Location loc) {
  auto vecType = VectorType::get({int64_t(width)}, element);
  Value memref = uniform(scalarMemref);
  Value passThru = zeros(loc, vecType);
  if (indices.size() == 1 && consecutive.count(indices[0])) {
    Value start = consecutive[indices[0]];
    return mask ? Value(vector::MaskedLoadOp::create(b, loc, vecType, memref, ValueRange{start}, mask,
                                                     passThru))
                : Value(vector::LoadOp::create(b, loc, vecType, memref, ValueRange{start}));
  }
  Value offsets = elementOffsets(scalarMemref, indices, loc);
  SmallVector<Value> zeros(indices.size(), arith::ConstantIndexOp::create(b, loc, 0));
  return vector::GatherOp::create(b, loc, vecType, memref, zeros, offsets,
                                  mask ? mask : allTrue(loc), passThru);
}

void ThreadVectorizer::storeLanes(Value scalarMemref, ValueRange indices, Value value, Value mask,
                                  Location loc) {
  Value memref = uniform(scalarMemref);
  if (indices.size() == 1 && consecutive.count(indices[0])) {
    Value start = consecutive[indices[0]];
    if (mask)
      vector::MaskedStoreOp::create(b, loc, memref, ValueRange{start}, mask, value);
    else
      vector::StoreOp::create(b, loc, value, memref, ValueRange{start});
    return;
  }
  // (lanes storing to one place: the last lane's value stays, as the last
  // thread's would; a scatter stores its lanes in order)
  Value offsets = elementOffsets(scalarMemref, indices, loc);
  SmallVector<Value> zeros(indices.size(), arith::ConstantIndexOp::create(b, loc, 0));
  vector::ScatterOp::create(b, loc, Type(), memref, zeros, offsets, mask ? mask : allTrue(loc), value);
}

LogicalResult ThreadVectorizer::visitAtomic(memref::AtomicRMWOp op, Value mask) {
  // Each lane's element is its own (no other thread accesses it), so the
  // atomic is the lanes' read, their op, their write: the scalar body's
  // `old op value` (old + value for addf, as the CPU's ordered adds too).
  Location loc = op.getLoc();
  if (failed(checkOwnElement(op, op.getMemref(), op.getIndices(),
                             "atomics at elements other threads may access")))
    return failure();
  if (!llvm::any_of(op.getIndices(), [&](Value v) { return isVarying(v); }))
    return fail(op, "atomics at elements other threads may access");
  Value old = loadLanes(op.getMemref(), op.getIndices(), op.getType(), mask, loc);
  Value value = widened(op.getValue(), loc);
  Value result;
  switch (op.getKind()) {
  case arith::AtomicRMWKind::addf:
    result = arith::AddFOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::addi:
    result = arith::AddIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::assign:
    result = value;
    break;
  case arith::AtomicRMWKind::andi:
    result = arith::AndIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::ori:
    result = arith::OrIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::maxs:
    result = arith::MaxSIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::mins:
    result = arith::MinSIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::maxu:
    result = arith::MaxUIOp::create(b, loc, old, value);
    break;
  case arith::AtomicRMWKind::minu:
    result = arith::MinUIOp::create(b, loc, old, value);
    break;
  default:
    return fail(op, "atomics of this kind");
  }
  storeLanes(op.getMemref(), op.getIndices(), result, mask, loc);
  wide[op.getResult()] = old;
  return success();
}

LogicalResult ThreadVectorizer::visitAlloca(memref::AllocaOp op) {
  // One array for the group, each element widened: element k of lane l is
  // at [k][..., l], so the 8 lanes' copy of a value are one vector.
  for (Value size : op->getOperands())
    if (isVarying(size))
      return fail(op, "a local array whose size differs between threads");
  MemRefType type = op.getType();
  Type element = type.getElementType();
  Type scalar = getElementTypeOrSelf(element);
  if (!type.getLayout().isIdentity() || !isa<IntegerType, FloatType, IndexType>(scalar) ||
      scalar.isInteger(1) || scalar.isF16() || scalar.isBF16())
    return fail(op, "a local array of this type");
  Type wideElement = wideType(element);
  if (!wideElement)
    return fail(op, "a local array of this type");
  auto wideArray = MemRefType::get(type.getShape(), wideElement, type.getLayout(),
                                   type.getMemorySpace());
  SmallVector<Value> sizes, symbols;
  for (Value v : op.getDynamicSizes())
    sizes.push_back(uniform(v));
  for (Value v : op.getSymbolOperands())
    symbols.push_back(uniform(v));
  // (no alignment: the widened element's own)
  auto made = memref::AllocaOp::create(b, op.getLoc(), wideArray, sizes, symbols, IntegerAttr());
  mapping.map(op.getResult(), made.getResult());
  localArrays.insert(op.getResult());
  return success();
}

ValueRange ThreadVectorizer::ifAnyLane(Value mask, TypeRange types, Location loc,
                                       function_ref<SmallVector<Value>()> then) {
  Value any = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, mask);
  auto ifOp = scf::IfOp::create(b, loc, types, any, /*withElse=*/!types.empty());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> values = then();
  if (types.empty())
    return ifOp.getResults();
  scf::YieldOp::create(b, loc, values);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  SmallVector<Value> none;
  for (Type t : types)
    none.push_back(zeros(loc, t));
  scf::YieldOp::create(b, loc, none);
  return ifOp.getResults();
}

LogicalResult ThreadVectorizer::visitLocalLoad(memref::LoadOp op, Value mask) {
  // Lanes read their own copy at an index all of them use; under a mask,
  // only if some lane reads (the index may be out of range otherwise).
  Location loc = op.getLoc();
  if (llvm::any_of(op.getIndices(), [&](Value v) { return isVarying(v); }))
    return fail(op, "a local array at an index that differs between threads");
  Type wideElement = wideType(op.getType());
  SmallVector<Value> indices;
  for (Value v : op.getIndices())
    indices.push_back(uniform(v));
  Value array = uniform(op.getMemRef());
  auto load = [&]() -> SmallVector<Value> {
    return {memref::LoadOp::create(b, loc, array, indices).getResult()};
  };
  wide[op.getResult()] = mask ? ifAnyLane(mask, wideElement, loc, load)[0] : load()[0];
  return success();
}

LogicalResult ThreadVectorizer::visitLocalStore(memref::StoreOp op, Value mask) {
  // Under a mask: the lanes that store replace their element, the others
  // keep theirs (a read, a select, a write).
  Location loc = op.getLoc();
  if (llvm::any_of(op.getIndices(), [&](Value v) { return isVarying(v); }))
    return fail(op, "a local array at an index that differs between threads");
  Value value = widened(op.getValue(), loc);
  SmallVector<Value> indices;
  for (Value v : op.getIndices())
    indices.push_back(uniform(v));
  Value array = uniform(op.getMemRef());
  if (!mask) {
    memref::StoreOp::create(b, loc, value, array, indices);
    return success();
  }
  ifAnyLane(mask, {}, loc, [&]() -> SmallVector<Value> {
    Value old = memref::LoadOp::create(b, loc, array, indices);
    Value merged = arith::SelectOp::create(b, loc, maskLike(mask, value.getType(), loc), value, old);
    memref::StoreOp::create(b, loc, merged, array, indices);
    return {};
  });
  return success();
}

LogicalResult ThreadVectorizer::visitStore(memref::StoreOp op, Value mask) {
  Location loc = op.getLoc();
  if (localArrays.count(op.getMemRef()))
    return visitLocalStore(op, mask);
  if (failed(checkOwnElement(op, op.getMemRef(), op.getIndices())))
    return failure();
  bool varying = isVarying(op.getValue()) ||
                 llvm::any_of(op.getIndices(), [&](Value v) { return isVarying(v); });
  if (!varying && !mask) {
    b.clone(*op, mapping); // every lane stores the same value at the same place
    return success();
  }
  storeLanes(op.getMemRef(), op.getIndices(), widened(op.getValue(), loc), mask, loc);
  return success();
}

LogicalResult ThreadVectorizer::visitFor(scf::ForOp op, Value mask) {
  Location loc = op.getLoc();
  if (isVarying(op.getStep()))
    return fail(op, "a loop whose step differs between threads");
  if (isVarying(op.getLowerBound()) || isVarying(op.getUpperBound()))
    return visitVaryingFor(op, mask);
  SmallVector<Value> inits;
  for (Value init : op.getInitArgs()) {
    if (!wideType(init.getType()))
      return fail(op, "a loop value of an unsupported type");
    inits.push_back(widened(init, loc));
  }
  auto loop = scf::ForOp::create(b, loc, uniform(op.getLowerBound()), uniform(op.getUpperBound()),
                                 uniform(op.getStep()), inits);
  OpBuilder::InsertionGuard guard(b);
  Block *newBody = loop.getBody();
  if (!newBody->empty())
    newBody->back().erase(); // (the builder's yield, if it made one)
  b.setInsertionPointToEnd(newBody);
  mapping.map(op.getInductionVar(), loop.getInductionVar());
  for (auto [from, to] : llvm::zip(op.getRegionIterArgs(), loop.getRegionIterArgs()))
    wide[from] = to;
  if (failed(visitBlock(*op.getBody(), mask)))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  SmallVector<Value> yielded;
  for (Value v : yield.getOperands())
    yielded.push_back(widened(v, loc));
  scf::YieldOp::create(b, loc, yielded);
  for (auto [from, to] : llvm::zip(op.getResults(), loop.getResults()))
    wide[from] = to;
  return success();
}

LogicalResult ThreadVectorizer::visitVaryingFor(scf::ForOp op, Value mask) {
  // Bounds that differ between lanes (for j in range(start[i], end[i])):
  // iterations t = 0 .. the largest trip count; lane l runs while t < its own
  // trip count, with j = its lower bound + t * step.
  Location loc = op.getLoc();
  Type ivType = op.getInductionVar().getType();
  Type ivWide = wideType(ivType);
  if (!ivWide)
    return fail(op, "a loop counter of an unsupported type");
  SmallVector<Value> inits;
  for (Value init : op.getInitArgs()) {
    if (!wideType(init.getType()))
      return fail(op, "a loop value of an unsupported type");
    inits.push_back(widened(init, loc));
  }
  Value lower = widened(op.getLowerBound(), loc), upper = widened(op.getUpperBound(), loc);
  Value step = widened(op.getStep(), loc);
  Value zero = zeros(loc, ivWide);
  Value one = arith::ConstantOp::create(
      b, loc, ivWide, DenseElementsAttr::get(cast<ShapedType>(ivWide), b.getIntegerAttr(ivType, 1)));
  // (the step is positive, as scf.for's)
  Value span = arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, upper, lower), zero);
  Value trips = arith::DivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, span, arith::SubIOp::create(b, loc, step, one)), step);
  if (mask)
    trips = arith::SelectOp::create(b, loc, mask, trips, zero);
  Value most = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXSI, trips);
  auto loop = scf::ForOp::create(b, loc, arith::ConstantOp::create(b, loc, b.getZeroAttr(ivType)), most,
                                 arith::ConstantOp::create(b, loc, b.getIntegerAttr(ivType, 1)), inits);
  OpBuilder::InsertionGuard guard(b);
  Block *newBody = loop.getBody();
  if (!newBody->empty())
    newBody->back().erase();
  b.setInsertionPointToEnd(newBody);
  Value t = vector::BroadcastOp::create(b, loc, ivWide, loop.getInductionVar());
  Value running = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, trips);
  wide[op.getInductionVar()] =
      arith::AddIOp::create(b, loc, lower, arith::MulIOp::create(b, loc, t, step));
  for (auto [from, to] : llvm::zip(op.getRegionIterArgs(), loop.getRegionIterArgs()))
    wide[from] = to;
  if (failed(visitBlock(*op.getBody(), running)))
    return failure();
  SmallVector<Value> yielded;
  for (auto [k, v] : llvm::enumerate(op.getBody()->getTerminator()->getOperands())) {
    Value next = widened(v, loc);
    Value kept = loop.getRegionIterArgs()[k];
    yielded.push_back(arith::SelectOp::create(b, loc, maskLike(running, next.getType(), loc), next, kept));
  }
  scf::YieldOp::create(b, loc, yielded);
  for (auto [from, to] : llvm::zip(op.getResults(), loop.getResults()))
    wide[from] = to;
  return success();
}

LogicalResult ThreadVectorizer::visitIf(scf::IfOp op, Value mask) {
  Location loc = op.getLoc();
  SmallVector<Type> resultTypes;
  for (Type t : op.getResultTypes()) {
    Type w = wideType(t);
    if (!w)
      return fail(op, "a branch value of an unsupported type");
    resultTypes.push_back(w);
  }
  if (!isVarying(op.getCondition())) {
    auto ifOp = scf::IfOp::create(b, loc, resultTypes, uniform(op.getCondition()),
                                  /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    for (auto [from, to] : llvm::zip(op->getRegions(), ifOp->getRegions())) {
      Block &toBlock = to.front();
      if (!toBlock.empty())
        toBlock.back().erase();
      b.setInsertionPointToEnd(&toBlock);
      if (!from.empty()) {
        SmallVector<Value> yields;
        if (failed(visitBranch(from.front(), mask, yields)))
          return failure();
        scf::YieldOp::create(b, loc, yields);
      } else {
        scf::YieldOp::create(b, loc);
      }
    }
    for (auto [from, to] : llvm::zip(op.getResults(), ifOp.getResults()))
      wide[from] = to;
    return success();
  }
  // Both sides, each under its lanes' mask; results selected per lane.
  Value cond = wide[op.getCondition()];
  Value ones = allTrue(loc);
  Value notCond = arith::XOrIOp::create(b, loc, cond, ones);
  Value thenMask = mask ? Value(arith::AndIOp::create(b, loc, mask, cond)) : cond;
  Value elseMask = mask ? Value(arith::AndIOp::create(b, loc, mask, notCond)) : notCond;
  SmallVector<Value> thenValues, elseValues;
  if (failed(visitBranch(op.getThenRegion().front(), thenMask, thenValues)))
    return failure();
  if (!op.getElseRegion().empty() &&
      failed(visitBranch(op.getElseRegion().front(), elseMask, elseValues)))
    return failure();
  for (auto [k, result] : llvm::enumerate(op.getResults()))
    wide[result] = arith::SelectOp::create(b, loc, maskLike(cond, resultTypes[k], loc),
                                           thenValues[k], elseValues[k]);
  return success();
}

LogicalResult ThreadVectorizer::visitBranch(Block &block, Value mask, SmallVector<Value> &yields) {
  if (isCheckReport(block))
    return serializeReport(block, mask, yields);
  if (failed(visitBlock(block, mask)))
    return failure();
  for (Value v : block.getTerminator()->getOperands())
    yields.push_back(widened(v, block.getParentOp()->getLoc()));
  return success();
}

LogicalResult ThreadVectorizer::serializeReport(Block &block, Value mask,
                                                SmallVector<Value> &yields) {
  // A failed check is rare: if any lane fails, the lanes that fail report
  // one after another, in lane (thread) order, as the scalar body would.
  Location loc = block.getParentOp()->getLoc();
  Value lanesOn = mask ? mask : allTrue(loc);
  Value any = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, lanesOn);
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifAny = scf::IfOp::create(b, loc, TypeRange{}, any, /*withElse=*/false);
    b.setInsertionPoint(ifAny.thenBlock()->getTerminator());
    auto lanes = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                                    arith::ConstantIndexOp::create(b, loc, width),
                                    arith::ConstantIndexOp::create(b, loc, 1));
    b.setInsertionPoint(lanes.getBody()->getTerminator());
    Value lane = lanes.getInductionVar();
    Value on = vector::ExtractOp::create(b, loc, lanesOn, ArrayRef<OpFoldResult>{lane});
    auto ifOn = scf::IfOp::create(b, loc, TypeRange{}, on, /*withElse=*/false);
    b.setInsertionPoint(ifOn.thenBlock()->getTerminator());
    // (varying values by their lane's value; the thread index among them,
    // which `mapping` holds as the group's first thread)
    IRMapping laneValues = mapping;
    DenseSet<Value> extracted;
    bool scalarsOnly = true;
    block.walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        if (!isVarying(v) || !extracted.insert(v).second)
          continue;
        if (cast<VectorType>(wide[v].getType()).getRank() != 1) {
          scalarsOnly = false;
          continue;
        }
        laneValues.map(v, vector::ExtractOp::create(b, loc, wide[v], ArrayRef<OpFoldResult>{lane}));
      }
    });
    if (!scalarsOnly)
      return fail(block.getParentOp(), "a check report of a vector value");
    for (Operation &op : block.without_terminator())
      b.clone(op, laneValues);
  }
  for (Value v : block.getTerminator()->getOperands()) {
    if (v.getParentBlock() == &block)
      mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0)); // a constant
    yields.push_back(widened(v, loc));
  }
  return success();
}

LogicalResult ThreadVectorizer::visitWhile(scf::WhileOp op, Value mask) {
  // Runs while any lane runs, carrying (the loop values, each lane's results
  // from the iteration it stopped, the lanes still running).
  Location loc = op.getLoc();
  SmallVector<Type> loopTypes, resultTypes;
  for (Type t : op->getOperandTypes())
    loopTypes.push_back(wideType(t));
  for (Type t : op->getResultTypes())
    resultTypes.push_back(wideType(t));
  if (llvm::is_contained(loopTypes, Type()) || llvm::is_contained(resultTypes, Type()))
    return fail(op, "a loop value of an unsupported type");
  Type maskType = VectorType::get({int64_t(width)}, b.getI1Type());
  unsigned nLoop = loopTypes.size(), nResults = resultTypes.size();
  SmallVector<Value> inits;
  for (Value init : op.getInits())
    inits.push_back(widened(init, loc));
  for (Type t : resultTypes)
    inits.push_back(zeros(loc, t));
  inits.push_back(mask ? mask : allTrue(loc));
  SmallVector<Type> carried(loopTypes);
  carried.append(resultTypes);
  carried.push_back(maskType);
  SmallVector<Type> forwarded(resultTypes);
  forwarded.append(resultTypes);
  forwarded.push_back(maskType);
  auto loop = scf::WhileOp::create(b, loc, forwarded, inits);
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Location> carriedLocs(carried.size(), loc), forwardedLocs(forwarded.size(), loc);
  Block *before = b.createBlock(&loop.getBefore(), {}, carried, carriedLocs);
  Block *after = b.createBlock(&loop.getAfter(), {}, forwarded, forwardedLocs);

  // Before: the condition, under the running lanes' mask.
  b.setInsertionPointToEnd(before);
  Value running = before->getArgument(carried.size() - 1);
  for (auto [from, to] : llvm::zip(op.getBeforeArguments(), before->getArguments()))
    wide[from] = to;
  if (failed(visitBlock(op.getBefore().front(), running)))
    return failure();
  auto condition = cast<scf::ConditionOp>(op.getBefore().front().getTerminator());
  Value cond = widened(condition.getCondition(), loc);
  Value goOn = arith::AndIOp::create(b, loc, running, cond);
  Value stop = arith::AndIOp::create(b, loc, running, arith::XOrIOp::create(b, loc, cond, allTrue(loc)));
  SmallVector<Value> next, results;
  for (Value v : condition.getArgs())
    next.push_back(widened(v, loc));
  for (unsigned k = 0; k < nResults; ++k)
    results.push_back(arith::SelectOp::create(b, loc, maskLike(stop, resultTypes[k], loc), next[k],
                                              before->getArgument(nLoop + k)));
  Value any = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, goOn);
  SmallVector<Value> forward(next);
  forward.append(results);
  forward.push_back(goOn);
  scf::ConditionOp::create(b, loc, any, forward);

  // After: the body, under the lanes that go on.
  b.setInsertionPointToEnd(after);
  Value goingOn = after->getArgument(forwarded.size() - 1);
  for (auto [k, from] : llvm::enumerate(op.getAfterArguments()))
    wide[from] = after->getArgument(k);
  if (failed(visitBlock(op.getAfter().front(), goingOn)))
    return failure();
  SmallVector<Value> yielded;
  for (Value v : op.getAfter().front().getTerminator()->getOperands())
    yielded.push_back(widened(v, loc));
  for (unsigned k = 0; k < nResults; ++k)
    yielded.push_back(after->getArgument(nResults + k));
  yielded.push_back(goingOn);
  scf::YieldOp::create(b, loc, yielded);
  for (auto [k, result] : llvm::enumerate(op.getResults()))
    wide[result] = loop.getResult(nResults + k);
  return success();
}

/// Has the entry loops that call `body` per thread call `simd` for whole
/// groups of `width` threads first.
void callSimdBody(ModuleOp module, func::FuncOp body, func::FuncOp simd, unsigned width) {
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    if (call.getCallee() == body.getSymName() && isa<scf::ForOp>(call->getParentOp()))
      calls.push_back(call);
  });
  unsigned linearPos = body.getNumArguments() - kTrailingBodyArgs;
  for (func::CallOp call : calls) {
    auto loop = cast<scf::ForOp>(call->getParentOp());
    if (call.getOperand(linearPos) != loop.getInductionVar() ||
        !matchPattern(loop.getStep(), m_One()))
      continue;
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value begin = loop.getLowerBound(), end = loop.getUpperBound();
    Value w = arith::ConstantIndexOp::create(b, loc, width);
    Value span = arith::SubIOp::create(b, loc, end, begin);
    Value rest = arith::RemUIOp::create(b, loc, span, w);
    Value simdEnd = arith::SubIOp::create(b, loc, end, rest);
    auto groups = scf::ForOp::create(b, loc, begin, simdEnd, w);
    b.setInsertionPointToStart(groups.getBody());
    SmallVector<Value> args(call.getOperands());
    args[linearPos] = groups.getInductionVar();
    func::CallOp::create(b, loc, simd, args);
    loop.getLowerBoundMutable().assign(simdEnd);
  }
}

struct AdjitVectorizeThreadsPass
    : adjit::impl::AdjitVectorizeThreadsBase<AdjitVectorizeThreadsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (width < 2)
      return;
    SmallVector<func::FuncOp> bodies;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(adjit::AdjitDialect::getKernelBodyAttrName()))
        bodies.push_back(fn);
    MLIRContext *ctx = module.getContext();
    for (func::FuncOp body : bodies) {
      ThreadVectorizer vectorizer(body, width);
      FailureOr<func::FuncOp> simd = vectorizer.run();
      if (failed(simd)) {
        body->setAttr("adjit.simd", StringAttr::get(ctx, "scalar: " + vectorizer.reason));
        continue;
      }
      body->setAttr("adjit.simd", StringAttr::get(ctx, "vectorized: " + std::to_string(width) +
                                                           " threads in @" +
                                                           simd->getSymName().str()));
      (*simd)->removeAttr(adjit::AdjitDialect::getKernelBodyAttrName());
      (*simd)->removeAttr("adjit.simd");
      // Kept out of the entry, whose scalar code LLVM scalarizes and widens
      // by itself; the host object pipeline leaves "adjit-simd" bodies wide
      // (cpp/lib/Target/CpuObject.cpp).
      // (adjit-apply-noalias turns the marker into LLVM function attributes)
      (*simd)->setAttr("adjit.simd_body", UnitAttr::get(ctx));
      callSimdBody(module, body, *simd, width);
    }
  }
};

} // namespace
