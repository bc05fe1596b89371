//===- CpuLaunch.cpp - packed CPU entry points for kernels ----------------===//
//
// Algorithm: for each kernel, outline its body as a private function of its
// thread coordinates (see LaunchUtils.h) and add a public entry
//
//   func.func @k_cpu_entry(%args: !llvm.ptr, %shape: !llvm.ptr,
//                          %begin: i64, %end: i64, %record: !llvm.ptr)
//
// that unpacks the arguments (args[i] points at a scalar, at the packed
// components of a vector/matrix, or at a memref descriptor, which is
// reinterpreted through an unrealized cast that convert-to-llvm cancels),
// then loops over the linear thread indices [begin, end) calling the body.
// The body has one call site, so LLVM inlines it and can vectorize the loop.
// A body with an `adjit.launch_condition` (proved bounds checks) is compiled
// for the condition true; the entry evaluates it once per chunk and, if it
// does not hold, runs nothing and reports kLaunchUnproven, so the runtime
// relaunches the `all-checked` variant. %record is the launch's error record
// (adjit.access_error). The kernel's `adjit.atomic_order` moves to its entry.
//
//===----------------------------------------------------------------------===//

#include "LaunchUtils.h"

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"
#include "runtime/ErrorRecord.h"


namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITCPULAUNCH
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

// The entry stores AdjitLaunchUnproven through the record pointer itself.
static_assert(AdjitRecordSite == 0, "the site is the record's first word");

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

/// Adds the entry `name` calling `body`, whose leading arguments are
/// `kernelArgTypes`. With a launch `condition` (splitLaunchCondition), the
/// entry first evaluates it; if it does not hold, it runs nothing and writes
/// kLaunchUnproven into the error record.
LogicalResult buildEntry(OpBuilder &b, StringRef name, func::FuncOp body,
                         func::FuncOp condition, TypeRange kernelArgTypes) {
  MLIRContext *ctx = b.getContext();
  Location loc = body.getLoc();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  auto entry = func::FuncOp::create(
      b, loc, name, b.getFunctionType({ptrTy, ptrTy, i64, i64, ptrTy}, {}));
  Block *block = entry.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  Value argsPtr = block->getArgument(0), shapePtr = block->getArgument(1);
  Value record = block->getArgument(4);

  SmallVector<Value> callArgs;
  for (auto [i, type] : llvm::enumerate(kernelArgTypes)) {
    Value slot = LLVM::GEPOp::create(
        b, loc, ptrTy, ptrTy, argsPtr,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value storage = LLVM::LoadOp::create(b, loc, ptrTy, slot);
    FailureOr<Value> arg = unpackArgument(b, loc, type, storage);
    if (failed(arg)) {
      entry.erase();
      return body.emitOpError() << "kernel argument " << i << " of type "
                                << type << " cannot be passed to a CPU launch";
    }
    callArgs.push_back(*arg);
  }
  // extents[0]: the total thread count; [1..3]: the launch's extents.
  SmallVector<Value> extents{Value()};
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (unsigned d = 0; d < kMaxLaunchDims; ++d) {
    Value p = LLVM::GEPOp::create(b, loc, ptrTy, i64, shapePtr,
                                  ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(d)});
    Value extent = arith::IndexCastOp::create(
        b, loc, b.getIndexType(), LLVM::LoadOp::create(b, loc, i64, p));
    total = arith::MulIOp::create(b, loc, total, extent);
    if (d > 0)
      extents.push_back(extent);
  }
  extents[0] = total;
  Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           block->getArgument(2));
  Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         block->getArgument(3));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto bodyArgs = [&](Value linear) {
    SmallVector<Value> args = callArgs;
    args.push_back(linear);
    args.append(extents);
    args.push_back(record);
    return args;
  };
  auto threadLoop = [&](func::FuncOp fn) {
    auto loop = scf::ForOp::create(b, loc, begin, end, one);
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    func::CallOp::create(b, loc, fn, bodyArgs(loop.getInductionVar()));
  };
  if (!condition) {
    threadLoop(body);
  } else {
    // Decided once per chunk: the condition is the same for every thread.
    Value proven =
        func::CallOp::create(b, loc, condition, bodyArgs(begin)).getResult(0);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, proven,
                                  /*withElseRegion=*/true);
    b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
    threadLoop(body);
    b.setInsertionPoint(ifOp.getElseRegion().front().getTerminator());
    Value unproven =
        LLVM::ConstantOp::create(b, loc, i64, int64_t(AdjitLaunchUnproven));
    LLVM::StoreOp::create(b, loc, unproven, record);
    b.setInsertionPointAfter(ifOp);
  }
  func::ReturnOp::create(b, loc);
  return success();
}

/// print() in kernels: calls of the C library's printf (resolved from the
/// process when the object loads), its arguments promoted as C promotes a
/// variadic call's (float to double, i1 to i32, index to i64).
void lowerPrints(ModuleOp module) {
  SmallVector<PrintOp> prints;
  module.walk([&](PrintOp op) { prints.push_back(op); });
  if (prints.empty())
    return;
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto printf = module.lookupSymbol<LLVM::LLVMFuncOp>("printf");
  if (!printf)
    printf = LLVM::LLVMFuncOp::create(
        mb, module.getLoc(), "printf",
        LLVM::LLVMFunctionType::get(i32, {ptrTy}, /*isVarArg=*/true));
  DenseMap<StringAttr, LLVM::GlobalOp> formats;
  for (PrintOp print : prints) {
    LLVM::GlobalOp &global = formats[print.getFormatAttr()];
    if (!global) {
      std::string text = print.getFormat().str();
      text.push_back('\0');
      auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
      global = LLVM::GlobalOp::create(
          mb, print.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::Internal,
          "adjit_print_format_" + std::to_string(formats.size()),
          mb.getStringAttr(text));
    }
    OpBuilder b(print);
    Location loc = print.getLoc();
    SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, global)};
    for (Value arg : print.getArgs()) {
      Type type = arg.getType();
      if (type.isF32())
        arg = LLVM::FPExtOp::create(b, loc, b.getF64Type(), arg);
      else if (isa<IndexType>(type))
        arg = arith::IndexCastOp::create(b, loc, b.getI64Type(), arg);
      else if (type.isInteger(1))
        arg = arith::ExtUIOp::create(b, loc, i32, arg);
      args.push_back(arg);
    }
    LLVM::CallOp::create(b, loc, printf, args);
    print.erase();
  }
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
      Attribute atomicOrder =
          kernel->getAttr(AdjitDialect::getAtomicOrderAttrName());
      FailureOr<func::FuncOp> body = outlineKernelBody(kernel);
      if (failed(body))
        return signalPassFailure();
      (*body)->setAttr(AdjitDialect::getKernelBodyAttrName(),
                       UnitAttr::get(module.getContext()));
      if (noalias)
        markNoAliasArrays(*body, body->getArgumentTypes());
      func::FuncOp condition;
      if (allChecked)
        fixLaunchCondition(*body, false);
      else
        condition = splitLaunchCondition(b, *body);
      b.setInsertionPointAfter(condition ? condition : *body);
      std::string entryName = symbols::cpuEntry(name);
      if (failed(buildEntry(b, entryName, *body, condition, argTypes)))
        return signalPassFailure();
      // What the runtime reads to launch the entry (adjit-atomic-order).
      if (atomicOrder)
        module.lookupSymbol(entryName)->setAttr(
            AdjitDialect::getAtomicOrderAttrName(), atomicOrder);
    }
    lowerPrints(module);
  }
};


} // namespace
