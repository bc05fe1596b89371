//===- AtomicOrder.cpp - deterministic float atomics on the CPU -----------===//
//
// Two passes (see Passes.td for the contract):
//
// adjit-atomic-order classifies each kernel as "parallel", "ordered" or
// "serial" from its atomics and how it otherwise touches their arrays.
//
// adjit-defer-float-atomics, on the LLVM dialect, turns each float
// `atomicrmw fadd` whose result is unused into a call of the runtime's
// adjit_rt_atomic_add_f32/f64 (cpp/runtime/OrderedAtomics.h), which logs the
// add in an ordered launch and adds atomically otherwise.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/Passes.h"
#include "runtime/ErrorRecord.h"

#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITATOMICORDER
#define GEN_PASS_DEF_ADJITDEFERFLOATATOMICS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// A float atomic_add (its order changes the result's rounding).
bool isFloatAdd(Operation *op) {
  auto add = dyn_cast<AtomicAddOp>(op);
  return add && isa<FloatType>(getElementTypeOrSelf(add.getValue().getType()));
}

/// An f32/f64 atomic_add whose old value is unused: the runtime can defer
/// it (its log takes those two types).
bool isDeferrableAdd(Operation *op) {
  if (!isFloatAdd(op) || !op->getResult(0).use_empty())
    return false;
  Type element = getElementTypeOrSelf(cast<AtomicAddOp>(op).getValue().getType());
  return element.isF32() || element.isF64();
}

/// The array an atomic combines into.
Value atomicArray(Operation *op) {
  return ArrayAccessAnalysis::accessedElement(op)->first;
}

/// Whether `fn` or a function it calls contains an atomic (or a print).
bool containsAtomics(func::FuncOp fn, DenseSet<Operation *> &visited) {
  if (!visited.insert(fn).second)
    return false;
  bool found = false;
  fn.walk([&](Operation *op) {
    if (isAtomicOp(op) || isa<PrintOp>(op)) {
      found = true;
      return WalkResult::interrupt();
    }
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
      if (callee && !callee.isExternal() && containsAtomics(callee, visited)) {
        found = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return found;
}

StringRef classify(func::FuncOp kernel) {
  // Arrays float adds are deferred into, and whether anything else touches
  // them (each use of such an array other than a deferrable add).
  DenseSet<Value> deferredInto;
  bool serial = false;
  kernel.walk([&](Operation *op) {
    if (isAtomicOp(op)) {
      if (!op->getResult(0).use_empty() || isa<AtomicExchOp, AtomicCasOp>(op))
        serial = true; // the old (or, exch/cas: the new) value depends on
                       // the threads' order
      else if (isDeferrableAdd(op))
        deferredInto.insert(atomicArray(op));
      else if (isFloatAdd(op))
        serial = true; // (f16) not deferrable: thread order on one thread
      return;
    }
    if (isa<PrintOp>(op))
      serial = true; // lines in thread order
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
      DenseSet<Operation *> visited;
      if (!callee || callee.isExternal() || containsAtomics(callee, visited))
        serial = true;
    }
  });
  if (serial)
    return "serial";
  if (deferredInto.empty())
    return "parallel";
  for (Value array : deferredInto) {
    // Only a kernel argument is known not to overlap the others (the runtime
    // checks each launch's arguments).
    if (!isa<BlockArgument>(array) ||
        cast<BlockArgument>(array).getOwner()->getParentOp() != kernel)
      return "serial";
    for (Operation *user : array.getUsers()) {
      if (isa<DimOp>(user))
        continue; // its extents, not its memory
      if (!isDeferrableAdd(user) || atomicArray(user) != array)
        return "serial";
    }
  }
  return "ordered";
}

struct AdjitAtomicOrderPass
    : adjit::impl::AdjitAtomicOrderBase<AdjitAtomicOrderPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (isKernel(kernel))
        kernel->setAttr(AdjitDialect::getAtomicOrderAttrName(),
                        StringAttr::get(kernel.getContext(), classify(kernel)));
  }
};

struct AdjitDeferFloatAtomicsPass
    : adjit::impl::AdjitDeferFloatAtomicsBase<AdjitDeferFloatAtomicsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::AtomicRMWOp> adds;
    module.walk([&](LLVM::AtomicRMWOp op) {
      if (op.getBinOp() == LLVM::AtomicBinOp::fadd && op.getRes().use_empty() &&
          (op.getVal().getType().isF32() || op.getVal().getType().isF64()))
        adds.push_back(op);
    });
    for (LLVM::AtomicRMWOp op : adds) {
      LLVM::LLVMFuncOp callee = declare(module, op.getVal().getType());
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value ptr = op.getPtr(), value = op.getVal();
      Value rec = record(op);
      if (!rec) {
        // Not in a kernel body (a device function that was not inlined):
        // no record, so the runtime adds atomically.
        Value none = LLVM::ZeroOp::create(b, loc, ptrType());
        LLVM::CallOp::create(b, loc, callee, ValueRange{none, ptr, value});
        op.erase();
        continue;
      }
      // if (record->addLog == kDirectAdds) *ptr += value (inline: a launch
      // on one thread needs no atomics) else call the runtime.
      Block *before = op->getBlock();
      Block *after = before->splitBlock(op);
      Region *region = before->getParent();
      Block *direct = b.createBlock(region, Region::iterator(after));
      Block *call = b.createBlock(region, Region::iterator(after));
      b.setInsertionPointToEnd(before);
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrType(), b.getI64Type(), rec,
          ArrayRef<LLVM::GEPArg>{kAddLogWord});
      Value log = LLVM::LoadOp::create(b, loc, b.getI64Type(), slot);
      Value directTag = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                                 kDirectAdds);
      Value isDirect = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                            log, directTag);
      LLVM::CondBrOp::create(b, loc, isDirect, direct, call);
      b.setInsertionPointToEnd(direct);
      Value old = LLVM::LoadOp::create(b, loc, value.getType(), ptr);
      Value sum = LLVM::FAddOp::create(b, loc, old, value);
      LLVM::StoreOp::create(b, loc, sum, ptr);
      LLVM::BrOp::create(b, loc, after);
      b.setInsertionPointToEnd(call);
      LLVM::CallOp::create(b, loc, callee, ValueRange{rec, ptr, value});
      LLVM::BrOp::create(b, loc, after);
      op.erase();
    }
  }

  /// The ErrorRecord word holding the add log, and the log value of a launch
  /// on one thread (cpp/runtime/ErrorRecord.h).
  static constexpr int32_t kAddLogWord = AdjitRecordAddLog;
  static constexpr int64_t kDirectAdds = AdjitDirectAdds;

  Type ptrType() { return LLVM::LLVMPointerType::get(&getContext()); }

  /// The error record of the threads that run `op`: a kernel body's last
  /// argument; null elsewhere.
  static Value record(Operation *op) {
    auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
    if (fn && fn->hasAttr(AdjitDialect::getKernelBodyAttrName()) &&
        fn.getNumArguments() > 0 &&
        isa<LLVM::LLVMPointerType>(fn.getArguments().back().getType()))
      return fn.getArguments().back();
    return Value();
  }

  /// `void adjit_rt_atomic_add_<type>(record, ptr, value)`, declared once.
  static LLVM::LLVMFuncOp declare(ModuleOp module, Type type) {
    std::string name =
        std::string("adjit_rt_atomic_add_") + (type.isF32() ? "f32" : "f64");
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    MLIRContext *ctx = module.getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                              {ptrTy, ptrTy, type});
    auto fn = LLVM::LLVMFuncOp::create(b, module.getLoc(), name, fnType);
    fn.setNoUnwind(true);
    fn.setWillReturn(true);
    // Reads the record, reads and writes the element it is given and the
    // runtime's log, which no kernel can reach.
    using LLVM::ModRefInfo;
    fn.setMemoryEffectsAttr(LLVM::MemoryEffectsAttr::get(
        ctx, /*other=*/ModRefInfo::NoModRef, /*argMem=*/ModRefInfo::ModRef,
        /*inaccessibleMem=*/ModRefInfo::ModRef,
        /*errnoMem=*/ModRefInfo::NoModRef, /*targetMem0=*/ModRefInfo::NoModRef,
        /*targetMem1=*/ModRefInfo::NoModRef));
    return fn;
  }
};

} // namespace
