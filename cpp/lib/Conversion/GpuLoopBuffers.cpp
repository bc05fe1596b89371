//===- GpuLoopBuffers.cpp - loop checkpoints in GPU memory that fits ------===//
//
// The loop reversal's dynamic buffers (checkpoints and replayed states of a
// runtime loop, merged per run by adjit-merge-stack-buffers) would be PTX
// dynamic allocas, on a stack whose size the driver cannot know. In each
// launch body (bodyLaunchArgs: it has the error record), each buffer of
// `bytes` bytes whose stack scope (llvm.intr.stacksave ... stackrestore in
// its block) ends it becomes:
//   - a view of one static buffer of `stack-bytes` bytes made for that site
//     at the function's top, when bytes <= stack-bytes (a site's buffer is
//     dead before the site runs again: its scope ends first);
//   - else `memref.alloc` (device `malloc`), freed before the scope's
//     stackrestore; a null block writes AdjitHeapExhausted (thread, bytes)
//     into the record and exits the thread.
//
//===----------------------------------------------------------------------===//

#include "LaunchUtils.h"

#include "adjit/Passes.h"
#include "runtime/ErrorRecord.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITGPULOOPBUFFERS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// A rank-1, dynamically sized, identity-layout alloca in the default memory
/// space: what the loop reversal (and adjit-merge-stack-buffers) creates.
bool isDynamicBuffer(memref::AllocaOp alloca) {
  MemRefType type = alloca.getType();
  return type.getRank() == 1 && type.isDynamicDim(0) &&
         type.getLayout().isIdentity() && !type.getMemorySpace() &&
         alloca.getSymbolOperands().empty();
}

/// The stackrestore that ends `alloca`'s stack scope: the one of the last
/// stacksave before it in its block, later in that block (null if none).
LLVM::StackRestoreOp scopeEnd(memref::AllocaOp alloca) {
  LLVM::StackSaveOp save;
  for (Operation *op = alloca->getPrevNode(); op && !save;
       op = op->getPrevNode())
    save = dyn_cast<LLVM::StackSaveOp>(op);
  if (!save)
    return {};
  for (Operation *user : save->getUsers())
    if (auto restore = dyn_cast<LLVM::StackRestoreOp>(user))
      if (restore->getBlock() == alloca->getBlock() &&
          alloca->isBeforeInBlock(restore))
        return restore;
  return {};
}

void placeBuffer(memref::AllocaOp alloca, LLVM::StackRestoreOp end,
                 BodyLaunchArgs launch, int64_t stackBytes,
                 Block &entry) {
  Location loc = alloca.getLoc();
  MemRefType type = alloca.getType();
  auto bytesType =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(type.getContext(), 8));
  uint64_t align = std::max<uint64_t>(
      16, alloca.getAlignment().value_or(1));
  OpBuilder top = OpBuilder::atBlockBegin(&entry);
  auto fixed = memref::AllocaOp::create(
      top, loc, MemRefType::get({stackBytes}, bytesType.getElementType()),
      ValueRange{}, ValueRange{}, top.getI64IntegerAttr(align));

  OpBuilder b(alloca);
  const DataLayout &layout = DataLayout::closest(alloca);
  Value count = alloca.getDynamicSizes()[0];
  Value elementBytes = arith::ConstantIndexOp::create(
      b, loc, layout.getTypeSize(type.getElementType()).getFixedValue());
  Value bytes = arith::MulIOp::create(b, loc, count, elementBytes);
  Value limit = arith::ConstantIndexOp::create(b, loc, stackBytes);
  Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, bytes,
                                     limit);
  auto choose = scf::IfOp::create(b, loc, TypeRange{bytesType}, fits,
                                  /*withElseRegion=*/true);
  {
    OpBuilder inThen = choose.getThenBodyBuilder();
    Value dynamic = memref::CastOp::create(inThen, loc, bytesType, fixed);
    scf::YieldOp::create(inThen, loc, dynamic);
  }
  {
    OpBuilder inElse = choose.getElseBodyBuilder();
    auto heap = memref::AllocOp::create(inElse, loc, bytesType,
                                        ValueRange{bytes}, ValueRange{},
                                        inElse.getI64IntegerAttr(align));
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(inElse, loc, heap);
    Value zero = arith::ConstantIndexOp::create(inElse, loc, 0);
    Value failed = arith::CmpIOp::create(inElse, loc, arith::CmpIPredicate::eq,
                                         address, zero);
    auto onFailure = scf::IfOp::create(inElse, loc, TypeRange{}, failed,
                                       /*withElseRegion=*/false);
    OpBuilder inFailure(onFailure.getThenRegion().front().getTerminator());
    writeFirstFailure(inFailure, loc, launch.record, AdjitHeapExhausted,
                      launch.linear, ValueRange{bytes}, ValueRange{});
    NVVM::Exit::create(inFailure, loc);
    scf::YieldOp::create(inElse, loc, heap.getResult());
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto view = memref::ViewOp::create(b, loc, type, choose.getResult(0), zero,
                                     ValueRange{count});
  alloca.replaceAllUsesWith(view.getResult());
  alloca.erase();

  OpBuilder atEnd(end);
  auto release = scf::IfOp::create(atEnd, loc, TypeRange{}, fits,
                                   /*withElseRegion=*/true);
  OpBuilder inRelease = release.getElseBodyBuilder();
  memref::DeallocOp::create(inRelease, loc, choose.getResult(0));
}

struct AdjitGpuLoopBuffersPass
    : adjit::impl::AdjitGpuLoopBuffersBase<AdjitGpuLoopBuffersPass> {
  using AdjitGpuLoopBuffersBase::AdjitGpuLoopBuffersBase;

  void runOnOperation() override {
    if (stackBytes < 0) {
      getOperation().emitError("adjit-gpu-loop-buffers: stack-bytes must not be negative");
      return signalPassFailure();
    }
    getOperation().walk([&](gpu::GPUModuleOp gpuModule) {
      for (auto fn : gpuModule.getOps<func::FuncOp>()) {
        std::optional<BodyLaunchArgs> launch = bodyLaunchArgs(fn);
        if (!launch)
          continue;
        SmallVector<std::pair<memref::AllocaOp, LLVM::StackRestoreOp>> sites;
        fn.walk([&](memref::AllocaOp alloca) {
          if (!isDynamicBuffer(alloca))
            return;
          if (LLVM::StackRestoreOp end = scopeEnd(alloca))
            sites.push_back({alloca, end});
        });
        for (auto [alloca, end] : sites)
          placeBuffer(alloca, end, *launch, stackBytes, fn.getBody().front());
      }
    });
  }
};

} // namespace
