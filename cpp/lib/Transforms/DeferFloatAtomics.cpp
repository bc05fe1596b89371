//===- DeferFloatAtomics.cpp - float atomic adds through the runtime ------===//
//
// adjit-defer-float-atomics (see Passes.td for the contract), on the LLVM
// dialect, turns each float `atomicrmw fadd` whose result is unused into a
// call of the runtime's adjit_rt_atomic_add_f32/f64
// (cpp/runtime/OrderedAtomics.h), which logs the add in an ordered launch
// and adds atomically otherwise. In a kernel body, a launch on one thread
// (the record's add log says so) adds inline, without a call.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "runtime/ErrorRecord.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITDEFERFLOATATOMICS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

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
