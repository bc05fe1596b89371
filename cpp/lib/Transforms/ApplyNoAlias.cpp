//===- ApplyNoAlias.cpp - noalias on the array pointers of kernel bodies --===//
//
// adjit-cpu-launch{noalias=true} records, on each outlined kernel body, the
// positions its arrays' aligned pointers take once the LLVM conversion
// expands each memref into (allocated, aligned, offset, sizes, strides).
// After that conversion, this pass puts `llvm.noalias` on those arguments:
// the promise that the arrays of one launch never overlap, which the runtime
// checks before choosing this variant. It also gives the SIMD kernel bodies
// of adjit-vectorize-threads (marked `adjit.simd_body`) the LLVM function
// attributes `noinline` and "adjit-simd" (see cpp/lib/Target/CpuObject.cpp).
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITAPPLYNOALIAS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;

namespace {

struct AdjitApplyNoAliasPass
    : adjit::impl::AdjitApplyNoAliasBase<AdjitApplyNoAliasPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp fn) {
      // A SIMD kernel body (adjit-vectorize-threads) or a math function of
      // adjit-approximate-math: not inlined, and left wide by the host
      // pipeline's scalarizer.
      if (fn->hasAttr("adjit.simd_body")) {
        MLIRContext *ctx = fn.getContext();
        fn.setPassthroughAttr(ArrayAttr::get(
            ctx, {StringAttr::get(ctx, "noinline"), StringAttr::get(ctx, "adjit-simd")}));
        fn->removeAttr("adjit.simd_body");
      }
      auto positions = fn->getAttrOfType<DenseI64ArrayAttr>(
          adjit::AdjitDialect::getNoAliasArgsAttrName());
      if (!positions)
        return;
      for (int64_t position : positions.asArrayRef())
        if (position < fn.getNumArguments())
          fn.setArgAttr(position, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(fn.getContext()));
      fn->removeAttr(adjit::AdjitDialect::getNoAliasArgsAttrName());
    });
  }
};

} // namespace
