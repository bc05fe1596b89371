//===- CpuEntry.cpp - packed CPU entry points for kernels -----------------===//
//
// Algorithm: for each kernel, outline its body as a private function of its
// thread coordinates (see LaunchUtils.h) and add a public entry
//
//   func.func @k_cpu_entry(%args: !llvm.ptr, %shape: !llvm.ptr,
//                          %begin: i64, %end: i64)
//
// that unpacks the arguments (args[i] points at a scalar, at the packed
// components of a vector/matrix, or at a memref descriptor, which is
// reinterpreted through an unrealized cast that convert-to-llvm cancels),
// then loops over the linear thread indices [begin, end) calling the body.
// The body has one call site, so LLVM inlines it and can vectorize the loop.
//
//===----------------------------------------------------------------------===//

#include "LaunchUtils.h"

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITCPULAUNCH
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// The LLVM struct of a ranked memref descriptor (index lowered to i64).
Type memrefDescriptorType(MemRefType type) {
  MLIRContext *ctx = type.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto dims = LLVM::LLVMArrayType::get(i64, type.getRank());
  return LLVM::LLVMStructType::getLiteral(ctx, {ptrTy, ptrTy, i64, dims, dims});
}

/// Reads one kernel argument of `type` from the storage at `ptr`.
FailureOr<Value> unpackArgument(OpBuilder &b, Location loc, Type type,
                                Value ptr) {
  if (auto memrefTy = dyn_cast<MemRefType>(type)) {
    Value desc =
        LLVM::LoadOp::create(b, loc, memrefDescriptorType(memrefTy), ptr);
    return UnrealizedConversionCastOp::create(b, loc, TypeRange{memrefTy},
                                              ValueRange{desc})
        .getResult(0);
  }
  if (isa<IntegerType, FloatType>(type))
    return LLVM::LoadOp::create(b, loc, type, ptr).getResult();
  if (auto vecTy = dyn_cast<VectorType>(type)) {
    // Packed components, row-major: no padding, unlike LLVM's vector layout.
    Type scalarTy = vecTy.getElementType();
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    ArrayRef<int64_t> shape = vecTy.getShape();
    return assembleFromScalars(b, loc, vecTy, [&](ArrayRef<int64_t> pos) {
      int64_t linear = 0;
      for (auto [p, extent] : llvm::zip(pos, shape))
        linear = linear * extent + p;
      Value elemPtr = LLVM::GEPOp::create(
          b, loc, ptrTy, scalarTy, ptr,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(linear)});
      return LLVM::LoadOp::create(b, loc, scalarTy, elemPtr).getResult();
    });
  }
  return failure();
}

/// Adds `@<kernel>_cpu_entry` calling `body`, whose leading arguments are
/// `kernelArgTypes`.
LogicalResult buildEntry(OpBuilder &b, func::FuncOp body, StringRef kernelName,
                         TypeRange kernelArgTypes) {
  MLIRContext *ctx = b.getContext();
  Location loc = body.getLoc();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  auto entry = func::FuncOp::create(
      b, loc, symbols::cpuEntry(kernelName),
      b.getFunctionType({ptrTy, ptrTy, i64, i64}, {}));
  Block *block = entry.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  Value argsPtr = block->getArgument(0), shapePtr = block->getArgument(1);

  SmallVector<Value> callArgs;
  for (auto [i, type] : llvm::enumerate(kernelArgTypes)) {
    Value slot = LLVM::GEPOp::create(
        b, loc, ptrTy, ptrTy, argsPtr,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value storage = LLVM::LoadOp::create(b, loc, ptrTy, slot);
    FailureOr<Value> arg = unpackArgument(b, loc, type, storage);
    if (failed(arg))
      return body.emitOpError() << "kernel argument " << i << " of type "
                                << type << " cannot be passed to a CPU launch";
    callArgs.push_back(*arg);
  }
  SmallVector<Value> extents;
  for (unsigned d = 1; d < kMaxLaunchDims; ++d) {
    Value p = LLVM::GEPOp::create(b, loc, ptrTy, i64, shapePtr,
                                  ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(d)});
    Value extent = LLVM::LoadOp::create(b, loc, i64, p);
    extents.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), extent));
  }
  Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           block->getArgument(2));
  Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         block->getArgument(3));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> bodyArgs = callArgs;
  bodyArgs.push_back(loop.getInductionVar());
  bodyArgs.append(extents);
  func::CallOp::create(b, loc, body, bodyArgs);
  b.setInsertionPointAfter(loop);
  func::ReturnOp::create(b, loc);
  return success();
}

/// Marks the body's array arguments as non-overlapping: the positions of
/// their aligned pointers once the LLVM conversion expands each memref into
/// (allocated, aligned, offset, sizes..., strides...).
void markNoAlias(func::FuncOp body) {
  SmallVector<int64_t> positions;
  int64_t position = 0;
  for (Type type : body.getArgumentTypes()) {
    if (auto memrefTy = dyn_cast<MemRefType>(type)) {
      positions.push_back(position + 1);
      position += 3 + 2 * memrefTy.getRank();
    } else {
      position += 1;
    }
  }
  body->setAttr(AdjitDialect::getNoAliasArgsAttrName(),
                DenseI64ArrayAttr::get(body.getContext(), positions));
}

struct AdjitCpuLaunchPass : adjit::impl::AdjitCpuLaunchBase<AdjitCpuLaunchPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (isKernel(fn))
        kernels.push_back(fn);
    OpBuilder b(module.getContext());
    for (func::FuncOp kernel : kernels) {
      std::string name = kernel.getSymName().str();
      SmallVector<Type> argTypes(kernel.getArgumentTypes());
      FailureOr<func::FuncOp> body = outlineKernelBody(kernel);
      if (failed(body))
        return signalPassFailure();
      if (noalias)
        markNoAlias(*body);
      b.setInsertionPointAfter(*body);
      if (failed(buildEntry(b, *body, name, argTypes)))
        return signalPassFailure();
    }
  }
};


} // namespace
