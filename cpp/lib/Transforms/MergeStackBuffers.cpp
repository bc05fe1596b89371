//===- MergeStackBuffers.cpp - one dynamic stack buffer per run -----------===//
//
// The loop reversal of adjit-adjoint keeps checkpoints and a segment's states
// in dynamically sized stack buffers (`memref.alloca(%n)`), created next to
// each other. On the GPU these become PTX `alloca`s, and two of them in one
// function can come back at the same address (seen on an H100 with driver
// 580 / CUDA 13: a runtime-loop adjoint read its checkpoint back from the
// other buffer; docs/gpu.md). This pass replaces each run of adjacent
// dynamic 1-D allocas by one byte buffer and `memref.view`s into it, each
// view at an offset aligned for the strictest element type of the run.
//
//===----------------------------------------------------------------------===//

#include "adjit/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITMERGESTACKBUFFERS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;

namespace {

/// A rank-1, dynamically sized, identity-layout alloca: what the loop
/// reversal creates.
bool isDynamicBuffer(Operation *op) {
  auto alloca = dyn_cast<memref::AllocaOp>(op);
  if (!alloca)
    return false;
  MemRefType type = alloca.getType();
  return type.getRank() == 1 && type.isDynamicDim(0) &&
         type.getLayout().isIdentity() && !type.getMemorySpace() &&
         alloca.getSymbolOperands().empty();
}

void mergeRun(MutableArrayRef<memref::AllocaOp> run, const DataLayout &layout) {
  OpBuilder b(run.front());
  Location loc = run.front().getLoc();
  uint64_t align = 1;
  for (memref::AllocaOp alloca : run)
    align = std::max<uint64_t>(
        align, layout.getTypeABIAlignment(alloca.getType().getElementType()));
  Value alignValue = arith::ConstantIndexOp::create(b, loc, align);
  Value slack = arith::ConstantIndexOp::create(b, loc, align - 1);
  // offset_i: the sum of the earlier buffers' bytes, each rounded up to align
  SmallVector<Value> offsets;
  Value total = arith::ConstantIndexOp::create(b, loc, 0);
  for (memref::AllocaOp alloca : run) {
    offsets.push_back(total);
    Type element = alloca.getType().getElementType();
    Value elementBytes = arith::ConstantIndexOp::create(
        b, loc, layout.getTypeSize(element).getFixedValue());
    Value bytes = arith::MulIOp::create(b, loc, alloca.getDynamicSizes()[0],
                                        elementBytes);
    Value rounded = arith::MulIOp::create(
        b, loc,
        arith::DivUIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, bytes, slack),
            alignValue),
        alignValue);
    total = arith::AddIOp::create(b, loc, total, rounded);
  }
  auto bytesType =
      MemRefType::get({ShapedType::kDynamic}, b.getIntegerType(8));
  auto buffer = memref::AllocaOp::create(b, loc, bytesType, ValueRange{total},
                                         ValueRange{},
                                         b.getI64IntegerAttr(align));
  for (auto [i, offset] : llvm::enumerate(offsets)) {
    memref::AllocaOp alloca = run[i];
    auto view = memref::ViewOp::create(b, loc, alloca.getType(), buffer,
                                       offset, alloca.getDynamicSizes());
    alloca.replaceAllUsesWith(view.getResult());
  }
  for (memref::AllocaOp alloca : run) // (after: the builder inserts before run[0])
    alloca.erase();
}

struct AdjitMergeStackBuffersPass
    : adjit::impl::AdjitMergeStackBuffersBase<AdjitMergeStackBuffersPass> {
  void runOnOperation() override {
    SmallVector<SmallVector<memref::AllocaOp>> runs;
    getOperation()->walk([&](Block *block) {
      SmallVector<memref::AllocaOp> run;
      auto flush = [&] {
        if (run.size() > 1)
          runs.push_back(run);
        run.clear();
      };
      for (Operation &op : *block) {
        if (isDynamicBuffer(&op))
          run.push_back(cast<memref::AllocaOp>(op));
        else
          flush();
      }
      flush();
    });
    for (auto &run : runs)
      mergeRun(run, DataLayout::closest(run.front()));
  }
};

} // namespace
