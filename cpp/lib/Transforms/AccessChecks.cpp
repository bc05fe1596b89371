//===- AccessChecks.cpp - range checks on every array access ---------------===//
//
// Algorithm: one walk per function over its access ops. Each index of an
// access is classified:
//   - proved statically (the induction variable of a loop over the array's
//     own extent): no check;
//   - proved per launch (a thread coordinate plus a constant, or a constant,
//     or an index clamped into the extent as a tile's elements are, into a
//     kernel argument): a condition on launch-uniform values joins the
//     kernel's one `adjit.launch_condition`, and the access is guarded by
//     `proven || in_range`;
//   - otherwise: guarded by `in_range`.
// A guarded access moves into the `then` branch of an scf.if; the `else`
// branch records the failure and yields zeros. The CPU launch pass compiles
// the kernel for the launch condition true (launches where it fails run the
// all-checked variant), so the proved checks fold away and the thread loop
// vectorizes as before. With `finite`, stores and atomics of floats also
// report a NaN or infinity they write.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/Passes.h"
#include "runtime/ErrorRecord.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITACCESSCHECKS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// The largest constant offset a launch proof accepts (larger ones are
/// checked per access): keeps `bound + offset` far from overflowing.
constexpr int64_t kMaxProvedOffset = int64_t(1) << 30;

/// An index of the form `tid[coordinate] + offset` (coordinate -1: the
/// constant `offset`), as the launch proof understands it.
struct AffineIndex {
  TidOp tid;
  int coordinate = -1;
  int64_t offset = 0;
  /// The sum was computed in i32: it must also stay below 2^31.
  bool viaI32 = false;
};

std::optional<int64_t> constantInt(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return attr.getValue().getSExtValue();
  return std::nullopt;
}

/// Matches `v` against tid + c / c, looking through index_cast, extsi and
/// addi of a non-negative constant.
std::optional<AffineIndex> matchAffine(Value v) {
  AffineIndex result;
  while (true) {
    if (auto width = dyn_cast<IntegerType>(v.getType()))
      if (width.getWidth() < 64)
        result.viaI32 = true;
    if (auto c = constantInt(v)) {
      if (*c < 0 || *c > kMaxProvedOffset ||
          result.offset + *c > kMaxProvedOffset)
        return std::nullopt;
      result.offset += *c;
      return result;
    }
    if (auto res = dyn_cast<OpResult>(v))
      if (auto tid = dyn_cast<TidOp>(res.getOwner())) {
        result.tid = tid;
        result.coordinate = res.getResultNumber();
        return result;
      }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(def)) {
      // Only widening or index <-> i32/i64 casts of values proved
      // non-negative below 2^31 (the viaI32 condition) keep their value.
      auto from = dyn_cast<IntegerType>(def->getOperand(0).getType());
      if (from && from.getWidth() < 32)
        return std::nullopt;
      v = def->getOperand(0);
      continue;
    }
    if (auto add = dyn_cast<arith::AddIOp>(def)) {
      std::optional<int64_t> c = constantInt(add.getRhs());
      Value rest = add.getLhs();
      if (!c) {
        c = constantInt(add.getLhs());
        rest = add.getRhs();
      }
      if (!c || *c < 0 || *c > kMaxProvedOffset ||
          result.offset + *c > kMaxProvedOffset)
        return std::nullopt;
      result.offset += *c;
      v = rest;
      continue;
    }
    return std::nullopt;
  }
}

/// The integer array argument of kernel `fn` whose element `index` is (a
/// gather `x[idx[i]]`, through index_cast/extsi), if the kernel never writes
/// it: its values cannot change during the launch.
BlockArgument gatheredFrom(Value index, func::FuncOp fn,
                           const ArrayAccessAnalysis &analysis) {
  while (Operation *def = index.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::ExtSIOp>(def))
      break;
    index = def->getOperand(0);
  }
  auto load = index.getDefiningOp<LoadOp>();
  if (!load)
    return {};
  auto arg = dyn_cast<BlockArgument>(load.getArray());
  if (!arg || arg.getOwner() != &fn.getBody().front())
    return {};
  auto elem = dyn_cast<IntegerType>(cast<ArrayType>(arg.getType()).getElementType());
  if (!elem || elem.getWidth() < 32)
    return {};
  const auto *access = analysis.lookup(arg);
  if (!access || access->isWritten())
    return {};
  return arg;
}

/// Whether `index` (position `dim` of an access to `array`) is the induction
/// variable of an enclosing scf.for running from a constant >= 0 to the
/// array's extent along `dim`, with a positive step.
bool provedByLoop(Value index, Value array, int64_t dim) {
  while (auto cast = index.getDefiningOp<arith::IndexCastOp>())
    index = cast.getIn();
  auto iv = dyn_cast<BlockArgument>(index);
  if (!iv)
    return false;
  auto loop = dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp());
  if (!loop || loop.getInductionVar() != iv || loop.getUnsignedCmp())
    return false;
  std::optional<int64_t> lb = constantInt(loop.getLowerBound());
  std::optional<int64_t> step = constantInt(loop.getStep());
  if (!lb || *lb < 0 || !step || *step <= 0)
    return false;
  // An i32 loop bound is the extent truncated: still at most the extent
  // whenever the loop runs (a truncation that wraps negative runs nothing).
  Value ub = loop.getUpperBound();
  while (auto cast = ub.getDefiningOp<arith::IndexCastOp>())
    ub = cast.getIn();
  auto extent = ub.getDefiningOp<DimOp>();
  return extent && extent.getArray() == array && extent.getDim() == dim;
}

/// The `adjit.dim` of which `v` is the last index (`dim - 1`, as subi or
/// addi of -1), or null.
DimOp lastIndexOf(Value v) {
  Value base;
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    if (constantInt(sub.getRhs()) == 1)
      base = sub.getLhs();
  } else if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    if (constantInt(add.getRhs()) == -1)
      base = add.getLhs();
    else if (constantInt(add.getLhs()) == -1)
      base = add.getRhs();
  }
  return base ? base.getDefiningOp<DimOp>() : DimOp();
}

/// For an index clamped into an extent, `max(min(x, n - 1), 0)` or
/// `min(max(x, 0), n - 1)` with `n = adjit.dim` of an array (a tile's
/// elements; in an adjoint kernel, also the gradient array's accesses at
/// the primal's indices), that dim op: the index is in [0, n) when n >= 1.
DimOp clampedExtent(Value index) {
  // The operand of binary `op` other than the one `bound` accepts.
  auto other = [](Operation *op, auto bound) -> Value {
    if (bound(op->getOperand(1)))
      return op->getOperand(0);
    if (bound(op->getOperand(0)))
      return op->getOperand(1);
    return {};
  };
  auto isZero = [](Value v) { return constantInt(v) == 0; };
  DimOp extent;
  auto isLast = [&](Value v) {
    DimOp dim = lastIndexOf(v);
    if (!dim || (extent && dim != extent))
      return false;
    extent = dim;
    return true;
  };
  Operation *outer = index.getDefiningOp();
  if (!outer || !isa<arith::MaxSIOp, arith::MinSIOp>(outer))
    return {};
  bool maxOutside = isa<arith::MaxSIOp>(outer);
  Value inner = maxOutside ? other(outer, isZero) : other(outer, isLast);
  Operation *def = inner ? inner.getDefiningOp() : nullptr;
  if (!def)
    return {};
  if (maxOutside)
    return isa<arith::MinSIOp>(def) && other(def, isLast) ? extent : DimOp();
  return isa<arith::MaxSIOp>(def) && other(def, isZero) ? extent : DimOp();
}

/// The source (file, line) of a location: where inlined code was written.
std::optional<std::pair<StringRef, unsigned>> sourcePosition(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return std::make_pair(file.getFilename().getValue(), file.getLine());
  if (auto name = dyn_cast<NameLoc>(loc))
    return sourcePosition(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    if (auto callee = sourcePosition(call.getCallee()))
      return callee;
    return sourcePosition(call.getCaller());
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (auto position = sourcePosition(part))
        return position;
  return std::nullopt;
}

StringRef accessKind(ArrayElementAccessOpInterface access) {
  if (!access.writesElement())
    return "read";
  if (!access.readsElement())
    return "write";
  return access->getName().stripDialect(); // atomic_add, atomic_cas, ...
}

/// Whether every component of float (or float vector) `value` is finite:
/// |x| <= the largest finite value is false for NaN and the infinities.
Value allFinite(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  auto floatTy = cast<FloatType>(getElementTypeOrSelf(type));
  APFloat largest = APFloat::getLargest(floatTy.getFloatSemantics());
  auto vecTy = dyn_cast<VectorType>(type);
  TypedAttr limitAttr =
      vecTy ? TypedAttr(DenseElementsAttr::get(vecTy, ArrayRef<APFloat>(largest)))
            : TypedAttr(FloatAttr::get(floatTy, largest));
  Value limit = arith::ConstantOp::create(b, loc, limitAttr);
  Value magnitude = math::AbsFOp::create(b, loc, value);
  Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                       magnitude, limit);
  if (!vecTy)
    return finite;
  if (vecTy.getRank() > 1)
    finite = vector::ShapeCastOp::create(
        b, loc, VectorType::get({vecTy.getNumElements()}, b.getI1Type()),
        finite);
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::AND,
                                     finite);
}

/// A name for the array an access addresses: the parameter's name (or
/// the name an array at an address was given).
std::string arrayName(Value array) {
  if (auto addressed = array.getDefiningOp<ArrayAtAddressOp>())
    return addressed.getName().str();
  auto arg = dyn_cast<BlockArgument>(array);
  if (!arg)
    return "an array";
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getBody().front())
    return "an array";
  if (auto names =
          fn->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName()))
    if (arg.getArgNumber() < names.size())
      if (auto name = dyn_cast<StringAttr>(names[arg.getArgNumber()]))
        return name.str();
  return ("argument " + Twine(arg.getArgNumber()) + " of " + fn.getSymName())
      .str();
}

/// How an index of an access is known to be in range.
enum class Proof { None, Launch, Static };

/// Where a function's accesses report to: the error record and the linear
/// thread index.
struct ReportContext {
  Value record;
  Value thread;
};

struct AdjitAccessChecksPass
    : adjit::impl::AdjitAccessChecksBase<AdjitAccessChecksPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  ReportContext contextOf(func::FuncOp fn);
  void checkFunction(func::FuncOp fn);
  void guard(Operation *access, ReportContext context, int64_t site,
             Value proven, ArrayRef<Proof> proofs);
  void checkFinite(Operation *access, ReportContext context);
  void checkComponentIndex(CheckIndexOp check, ReportContext context);
  /// Describes a check in the site table; returns its number.
  int64_t addSite(Location loc, StringRef what, StringRef kind, int64_t rank);
  int64_t addSite(Operation *access, StringRef kind);
  /// The launch condition of kernel `fn`, created on first use.
  Value launchCondition(func::FuncOp fn);
  Value tidBounds(func::FuncOp kernel, TidOp tid, int coordinate);
  /// The (min, max) of index array `arg`'s values (adjit.index_range), or
  /// nothing when all slots are taken.
  std::optional<std::pair<Value, Value>> indexRange(func::FuncOp kernel,
                                                    BlockArgument arg);

  ModuleOp module;
  DenseMap<Operation *, ReportContext> contexts;
  DenseMap<Operation *, LaunchConditionOp> conditions;
  DenseMap<std::pair<Operation *, unsigned>, TidBoundsOp> tidBoundsOps;
  /// Per kernel: the index arrays given a range slot, in slot order.
  DenseMap<Operation *, SmallVector<BlockArgument>> rangedArgs;
  DenseMap<std::pair<Operation *, unsigned>, IndexRangeOp> rangeOps;
  SmallVector<Attribute> sites;
};

ReportContext AdjitAccessChecksPass::contextOf(func::FuncOp fn) {
  auto it = contexts.find(fn);
  if (it != contexts.end())
    return it->second;
  MLIRContext *ctx = fn.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Location loc = fn.getLoc();
  ReportContext context;
  if (isKernel(fn)) {
    Block &entry = fn.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    context.record = ErrorRecordOp::create(b, loc, ptrTy);
    // The linear thread index: the kernel's own `tid : index` if it has one
    // (moved up to dominate every access), else a new one.
    for (TidOp tid : entry.getOps<TidOp>())
      if (tid.getNumResults() == 1) {
        tid->moveBefore(&entry, entry.begin());
        context.thread = tid.getResult(0);
        break;
      }
    if (!context.thread)
      context.thread =
          TidOp::create(b, loc, TypeRange{b.getIndexType()}).getResult(0);
    return contexts[fn] = context;
  }
  // A device function: two trailing arguments, passed by every caller.
  unsigned n = fn.getNumArguments();
  IndexType indexTy = IndexType::get(ctx);
  (void)fn.insertArgument(n, ptrTy, {}, loc);
  (void)fn.insertArgument(n + 1, indexTy, {}, loc);
  context = {fn.getArgument(n), fn.getArgument(n + 1)};
  contexts[fn] = context;
  if (auto uses = SymbolTable::getSymbolUses(fn, module))
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<CallOp>(use.getUser());
      if (!call)
        continue;
      auto caller = call->getParentOfType<func::FuncOp>();
      ReportContext outer = contextOf(caller);
      call.getOperandsMutable().append({outer.record, outer.thread});
    }
  return context;
}

Value AdjitAccessChecksPass::launchCondition(func::FuncOp fn) {
  LaunchConditionOp &cond = conditions[fn];
  if (!cond) {
    OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
    Value yes = arith::ConstantIntOp::create(b, fn.getLoc(), 1, 1);
    cond = LaunchConditionOp::create(b, fn.getLoc(), yes.getType(), yes);
  }
  return cond.getResult();
}

Value AdjitAccessChecksPass::tidBounds(func::FuncOp kernel, TidOp tid,
                                      int coordinate) {
  // Computed before the launch condition, from the kernel's arguments only;
  // one per kernel and tid rank.
  TidBoundsOp &op = tidBoundsOps[{kernel, tid.getNumResults()}];
  if (!op) {
    OpBuilder b(conditions[kernel]);
    SmallVector<Type> types(tid.getNumResults(), b.getIndexType());
    op = TidBoundsOp::create(b, tid.getLoc(), types);
  }
  return op.getResult(coordinate);
}

/// Moves `access` under `scf.if in_range` (`proven || in_range` for the
/// indices the launch condition `proven` covers); the else branch records
/// the failure at `site` and yields zeros.
void AdjitAccessChecksPass::guard(Operation *access, ReportContext context,
                                 int64_t site, Value proven,
                                 ArrayRef<Proof> proofs) {
  auto element = cast<ArrayElementAccessOpInterface>(access);
  Value array = element.getAccessedArray();
  SmallVector<Value> indices(element.getAccessedIndices());
  Location loc = access->getLoc();
  OpBuilder b(access);
  SmallVector<Value> sizes;
  Value ok;
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value size = DimOp::create(b, loc, b.getIndexType(), array, d);
    sizes.push_back(size);
    if (proofs[d] == Proof::Static)
      continue;
    Value check = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        index, size);
    if (proofs[d] == Proof::Launch)
      check = arith::OrIOp::create(b, loc, proven, check);
    ok = ok ? arith::AndIOp::create(b, loc, ok, check).getResult() : check;
  }
  if (!ok)
    return;
  auto ifOp = scf::IfOp::create(b, loc, access->getResultTypes(), ok,
                                /*withElseRegion=*/true);
  access->replaceAllUsesWith(ifOp.getResults());
  Block *then = &ifOp.getThenRegion().front();
  if (then->empty() || !then->back().hasTrait<OpTrait::IsTerminator>()) {
    OpBuilder tb = OpBuilder::atBlockEnd(then);
    scf::YieldOp::create(tb, loc, access->getResults());
  } else {
    then->getTerminator()->setOperands(access->getResults());
  }
  access->moveBefore(then->getTerminator());
  Block *otherwise = &ifOp.getElseRegion().front();
  OpBuilder eb = OpBuilder::atBlockBegin(otherwise);
  AccessErrorOp::create(eb, loc, context.record, context.thread, site, indices,
                       sizes);
  SmallVector<Value> zeros;
  for (Type type : access->getResultTypes())
    zeros.push_back(arith::ConstantOp::create(
        eb, loc, cast<TypedAttr>(eb.getZeroAttr(type))));
  if (otherwise->empty() ||
      !otherwise->back().hasTrait<OpTrait::IsTerminator>())
    scf::YieldOp::create(eb, loc, zeros);
  else
    otherwise->getTerminator()->setOperands(zeros);
}

int64_t AdjitAccessChecksPass::addSite(Location loc, StringRef what,
                                       StringRef kind, int64_t rank) {
  MLIRContext *ctx = loc.getContext();
  auto position = sourcePosition(loc);
  auto i64 = IntegerType::get(ctx, 64);
  NamedAttribute fields[] = {
      NamedAttribute(StringAttr::get(ctx, "file"),
                     StringAttr::get(ctx, position ? position->first : "")),
      NamedAttribute(StringAttr::get(ctx, "line"),
                     IntegerAttr::get(i64, position ? position->second : 0)),
      NamedAttribute(StringAttr::get(ctx, "array"), StringAttr::get(ctx, what)),
      NamedAttribute(StringAttr::get(ctx, "access"), StringAttr::get(ctx, kind)),
      NamedAttribute(StringAttr::get(ctx, "rank"), IntegerAttr::get(i64, rank))};
  sites.push_back(DictionaryAttr::get(ctx, fields));
  return sites.size() - 1;
}

int64_t AdjitAccessChecksPass::addSite(Operation *access, StringRef kind) {
  auto element = cast<ArrayElementAccessOpInterface>(access);
  return addSite(access->getLoc(), arrayName(element.getAccessedArray()), kind,
                 element.getAccessedIndices().size());
}

/// Reports a NaN or infinity that `access` stores (for atomic_add, also
/// the element it leaves), without changing what it does.
void AdjitAccessChecksPass::checkFinite(Operation *access,
                                        ReportContext context) {
  auto element = cast<ArrayElementAccessOpInterface>(access);
  Value value = element.getWrittenValue();
  if (!value || !isa<FloatType>(getElementTypeOrSelf(value.getType())))
    return;
  Value array = element.getAccessedArray();
  SmallVector<Value> indices(element.getAccessedIndices());
  Location loc = access->getLoc();
  auto report = [&](OpBuilder &b, Value stored, StringRef kind) {
    Value bad = arith::XOrIOp::create(
        b, loc, allFinite(b, loc, stored),
        arith::ConstantIntOp::create(b, loc, 1, 1));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, bad,
                                  /*withElseRegion=*/false);
    OpBuilder tb(ifOp.getThenRegion().front().getTerminator());
    SmallVector<Value> sizes;
    for (size_t d = 0; d < indices.size(); ++d)
      sizes.push_back(DimOp::create(tb, loc, tb.getIndexType(), array, d));
    AccessErrorOp::create(tb, loc, context.record, context.thread,
                          addSite(access, kind), indices, sizes);
  };
  OpBuilder before(access);
  report(before, value, (accessKind(element) + " of NaN or infinity").str());
  if (isa<AtomicAddOp>(access)) {
    OpBuilder after(access->getContext());
    after.setInsertionPointAfter(access);
    Value sum = arith::AddFOp::create(after, loc, access->getResult(0), value);
    report(after, sum, "atomic_add result NaN or infinity");
  }
}

/// Replaces a runtime component index marker by its check.
void AdjitAccessChecksPass::checkComponentIndex(CheckIndexOp check,
                                                ReportContext context) {
  Location loc = check.getLoc();
  OpBuilder b(check);
  Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                    check.getIndex(), check.getSize());
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, bad,
                                /*withElseRegion=*/false);
  OpBuilder tb(ifOp.getThenRegion().front().getTerminator());
  int64_t site = addSite(loc, check.getWhat(), "component index", 1);
  AccessErrorOp::create(tb, loc, context.record, context.thread, site,
                        ValueRange{check.getIndex()},
                        ValueRange{check.getSize()});
  check.erase();
}

std::optional<std::pair<Value, Value>>
AdjitAccessChecksPass::indexRange(func::FuncOp kernel, BlockArgument arg) {
  SmallVector<BlockArgument> &args = rangedArgs[kernel];
  auto it = llvm::find(args, arg);
  unsigned slot = it - args.begin();
  if (it == args.end()) {
    if (args.size() >= AdjitRecordMaxRanged) // the record's ranges are full
      return std::nullopt;
    args.push_back(arg);
  }
  IndexRangeOp &op = rangeOps[{kernel, slot}];
  if (!op) {
    OpBuilder b(conditions[kernel]);
    op = IndexRangeOp::create(b, arg.getLoc(), b.getIndexType(),
                              b.getIndexType(), slot);
  }
  return std::make_pair(op.getLo(), op.getHi());
}

void AdjitAccessChecksPass::checkFunction(func::FuncOp fn) {
  SmallVector<Operation *> accesses;
  SmallVector<CheckIndexOp> componentIndices;
  fn.walk([&](Operation *op) {
    if (isa<ArrayElementAccessOpInterface>(op))
      accesses.push_back(op);
    else if (auto check = dyn_cast<CheckIndexOp>(op))
      componentIndices.push_back(check);
  });
  if (!bounds)
    for (CheckIndexOp check : componentIndices)
      check.erase();
  else if (!componentIndices.empty()) {
    ReportContext context = contextOf(fn);
    for (CheckIndexOp check : componentIndices)
      checkComponentIndex(check, context);
  }
  if (accesses.empty())
    return;
  ReportContext context = contextOf(fn);
  bool kernel = isKernel(fn);
  Block &entry = fn.getBody().front();
  SmallVector<Value> launchFacts;
  DenseSet<std::tuple<Value, int64_t, unsigned, int, int64_t, unsigned>>
      launchFactKeys;
  DenseSet<std::tuple<Value, int64_t, Value>> gatherFactKeys;
  DenseSet<std::tuple<Value, int64_t, Value, int64_t>> clampFactKeys;
  std::optional<ArrayAccessAnalysis> analysis;
  if (kernel)
    analysis.emplace(fn);

  // Classify every access before guarding any: a guard moves a load into an
  // scf.if, hiding which array a gathered index was read from.
  struct Checked {
    Operation *access;
    int64_t site;
    SmallVector<Proof> proofs;
  };
  SmallVector<Checked> checked;
  for (Operation *access : accesses) {
    if (finite)
      checkFinite(access, context);
    if (!bounds)
      continue;
    auto element = cast<ArrayElementAccessOpInterface>(access);
    Value array = element.getAccessedArray();
    OperandRange indices = element.getAccessedIndices();
    SmallVector<Proof> proofs(indices.size(), Proof::None);
    bool argument = isa<BlockArgument>(array) &&
                    cast<BlockArgument>(array).getOwner() == &entry;
    for (auto [d, index] : llvm::enumerate(indices)) {
      if (provedByLoop(index, array, d)) {
        proofs[d] = Proof::Static;
        continue;
      }
      if (!kernel || !argument)
        continue;
      std::optional<AffineIndex> affine = matchAffine(index);
      DimOp clamp = affine ? DimOp() : clampedExtent(index);
      auto clampArg = clamp ? dyn_cast<BlockArgument>(clamp.getArray())
                            : BlockArgument();
      if (clampArg && clampArg.getOwner() == &entry) {
        // In range when 1 <= n <= the extent (n: the clamp's extent, of a
        // kernel argument; the same extent, or in an adjoint kernel the
        // primal's for its gradient array). An empty array runs the
        // all-checked variant.
        launchCondition(fn);
        proofs[d] = Proof::Launch;
        if (!clampFactKeys
                 .insert({array, int64_t(d), clampArg,
                          int64_t(clamp.getDim())})
                 .second)
          continue;
        OpBuilder b(conditions[fn]);
        Location loc = access->getLoc();
        Value size = DimOp::create(b, loc, b.getIndexType(), array, d);
        Value n = clamp.getArray() == array && int64_t(clamp.getDim()) == int64_t(d)
                      ? size
                      : DimOp::create(b, loc, b.getIndexType(), clampArg,
                                      clamp.getDim())
                            .getResult();
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value fact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           zero, n);
        if (n != size)
          fact = arith::AndIOp::create(
              b, loc, fact,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, n,
                                    size));
        launchFacts.push_back(fact);
        continue;
      }
      if (!affine) {
        // A gather x[idx[...]]: in range when idx's values are, measured
        // by the runtime once per launch (adjit.index_range).
        BlockArgument from = gatheredFrom(index, fn, *analysis);
        if (!from)
          continue;
        launchCondition(fn);
        std::optional<std::pair<Value, Value>> range = indexRange(fn, from);
        if (!range)
          continue; // (no slot left: checked per access)
        if (!gatherFactKeys.insert({array, int64_t(d), from}).second) {
          proofs[d] = Proof::Launch;
          continue;
        }
        OpBuilder b(conditions[fn]);
        Location loc = access->getLoc();
        Value size = DimOp::create(b, loc, b.getIndexType(), array, d);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        launchFacts.push_back(arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                  range->first, zero),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                  range->second, size)));
        proofs[d] = Proof::Launch;
        continue;
      }
      launchCondition(fn);
      // One fact per (array, dimension, tid shape, coordinate, offset, i32).
      unsigned tidRank = affine->tid ? affine->tid.getNumResults() : 0;
      if (!launchFactKeys
               .insert({array, int64_t(d), tidRank, affine->coordinate,
                        affine->offset, affine->viaI32})
               .second) {
        proofs[d] = Proof::Launch;
        continue;
      }
      OpBuilder b(conditions[fn]);
      Location loc = access->getLoc();
      Value size = DimOp::create(b, loc, b.getIndexType(), array, d);
      auto offset = [&](int64_t c) {
        return arith::ConstantIndexOp::create(b, loc, c).getResult();
      };
      Value fact;
      if (affine->coordinate < 0) {
        fact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     offset(affine->offset), size);
      } else {
        Value bound = tidBounds(fn, affine->tid, affine->coordinate);
        b.setInsertionPoint(conditions[fn]);
        Value last = affine->offset == 0
                         ? bound
                         : arith::AddIOp::create(b, loc, bound,
                                                 offset(affine->offset))
                               .getResult();
        fact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, last,
                                     size);
        if (affine->viaI32)
          fact = arith::AndIOp::create(
              b, loc, fact,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, last,
                                    offset(int64_t(1) << 31)));
      }
      launchFacts.push_back(fact);
      proofs[d] = Proof::Launch;
    }
    int64_t site = addSite(access, accessKind(element));
    checked.push_back({access, site, std::move(proofs)});
  }
  LaunchConditionOp cond = conditions.lookup(fn);
  for (Checked &c : checked)
    guard(c.access, context, c.site, cond ? cond.getResult() : Value(),
          c.proofs);

  if (!launchFacts.empty()) {
    LaunchConditionOp cond = conditions[fn];
    OpBuilder b(cond);
    Value all = launchFacts.front();
    for (Value fact : ArrayRef<Value>(launchFacts).drop_front())
      all = arith::AndIOp::create(b, cond.getLoc(), all, fact);
    cond.getConditionMutable().assign(all);
  }
}

void AdjitAccessChecksPass::runOnOperation() {
  module = getOperation();
  SmallVector<func::FuncOp> functions;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      functions.push_back(fn);
  for (func::FuncOp fn : functions)
    checkFunction(fn);
  // Every kernel carries the module's site table (a module holds one
  // kernel, or a kernel and the device functions it calls).
  ArrayAttr table = ArrayAttr::get(module.getContext(), sites);
  for (func::FuncOp fn : functions) {
    if (!isKernel(fn))
      continue;
    fn->setAttr(AdjitDialect::getCheckSitesAttrName(), table);
    SmallVector<int64_t> ranged;
    for (BlockArgument arg : rangedArgs.lookup(fn))
      ranged.push_back(arg.getArgNumber());
    fn->setAttr(AdjitDialect::getRangedArgsAttrName(),
                DenseI64ArrayAttr::get(fn.getContext(), ranged));
  }
}

} // namespace
