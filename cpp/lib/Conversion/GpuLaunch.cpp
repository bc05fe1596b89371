//===- GpuLaunch.cpp - gpu.module kernels for adjit kernels ---------------===//
//
// Algorithm: for each kernel, outline its body as a private function of its
// thread coordinates (see LaunchUtils.h), move it with every device function
// it calls (transitively) into `gpu.module @<k>_module`, and add
//
//   gpu.func @<k>(<kernel args>, %total: i64, %e1: i64, %e2: i64, %e3: i64,
//                 %record: !llvm.ptr)
//
// which takes the linear index from the 1-D grid, returns past `total`, and
// calls the body. %record is the launch's error record in device memory. With
// `noalias`, the kernel's array arguments are promised not to overlap (the
// launcher checks), marked for adjit-apply-noalias after the NVVM conversion.
// A body with a launch condition (adjit-access-checks) comes in two versions,
// compiled for the condition holding and with every check; each thread
// evaluates the condition (uniform: the branch does not diverge) and calls
// one. Memref arguments keep the standard expanded descriptor calling
// convention of the GPU-to-NVVM lowering.
//
//===----------------------------------------------------------------------===//

#include "LaunchUtils.h"

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "adjit/SymbolNames.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITGPULAUNCH
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// Clones into `gpuModule` every function that `root` calls, transitively.
void cloneCallees(func::FuncOp root, SymbolTable &hostSymbols,
                  gpu::GPUModuleOp gpuModule) {
  SmallVector<func::FuncOp> worklist{root};
  llvm::StringSet<> cloned;
  while (!worklist.empty()) {
    func::FuncOp fn = worklist.pop_back_val();
    fn.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (!cloned.insert(callee).second)
        return;
      auto target = hostSymbols.lookup<func::FuncOp>(callee);
      if (!target)
        return;
      auto copy = cast<func::FuncOp>(target->clone());
      gpuModule.getBody()->push_back(copy);
      worklist.push_back(copy);
    });
  }
}

/// `type` with i1 components widened to i8 (vectors and matrices of bool).
Type boolComponentsAsBytes(Type type) {
  auto vecTy = dyn_cast<VectorType>(type);
  if (!vecTy || !vecTy.getElementType().isInteger(1))
    return type;
  return vecTy.clone(IntegerType::get(type.getContext(), 8));
}

struct AdjitGpuLaunchPass : adjit::impl::AdjitGpuLaunchBase<AdjitGpuLaunchPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SymbolTable hostSymbols(module);
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (isKernel(fn))
        kernels.push_back(fn);
    if (!kernels.empty())
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      UnitAttr::get(ctx));

    OpBuilder b(ctx);
    for (func::FuncOp kernel : kernels) {
      std::string name = kernel.getSymName().str();
      Location loc = kernel.getLoc();
      SmallVector<Type> argTypes(kernel.getArgumentTypes());

      b.setInsertionPointToEnd(module.getBody());
      auto gpuModule = gpu::GPUModuleOp::create(b, loc, symbols::gpuModule(name));
      hostSymbols.remove(kernel);
      kernel->moveBefore(gpuModule.getBody(), gpuModule.getBody()->end());
      FailureOr<func::FuncOp> body = outlineKernelBody(kernel);
      if (failed(body))
        return signalPassFailure();
      cloneCallees(*body, hostSymbols, gpuModule);
      // Two versions of the body: one compiled for the launch condition
      // holding (its proved checks gone, so loads can be hoisted and batched)
      // and one with every check; each thread evaluates the condition, which
      // is uniform, so the branch between them does not diverge.
      func::FuncOp checkedBody;
      b.setInsertionPointAfter(*body);
      if (body->walk([](LaunchConditionOp) { return WalkResult::interrupt(); })
              .wasInterrupted()) {
        checkedBody = cast<func::FuncOp>(b.clone(*body->getOperation()));
        checkedBody.setSymName((body->getSymName() + "_checked").str());
        fixLaunchCondition(checkedBody, false);
      }
      func::FuncOp condition = splitLaunchCondition(b, *body);
      // print() in kernels: the GPU's printf (index values as i64).
      gpuModule.walk([&](PrintOp print) {
        OpBuilder pb(print);
        SmallVector<Value> args;
        for (Value arg : print.getArgs())
          args.push_back(isa<IndexType>(arg.getType())
                             ? arith::IndexCastOp::create(pb, print.getLoc(),
                                                          pb.getI64Type(), arg)
                                   .getResult()
                             : arg);
        gpu::PrintfOp::create(pb, print.getLoc(), print.getFormatAttr(), args);
        print.erase();
      });

      // Bool vectors and matrices travel as one byte per component (as the
      // CPU entry's packed values): NVPTX sizes an i1-vector parameter in
      // bits but loads it a byte per component.
      SmallVector<Type> gpuArgTypes;
      for (Type type : argTypes)
        gpuArgTypes.push_back(boolComponentsAsBytes(type));
      gpuArgTypes.append(kMaxLaunchDims, b.getI64Type());
      gpuArgTypes.push_back(LLVM::LLVMPointerType::get(ctx));
      b.setInsertionPointToEnd(gpuModule.getBody());
      auto gpuFunc = gpu::GPUFuncOp::create(
          b, loc, name, b.getFunctionType(gpuArgTypes, {}));
      gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                       UnitAttr::get(ctx));
      if (noalias)
        markNoAliasArrays(gpuFunc, gpuArgTypes);
      Block &entry = gpuFunc.getBody().front();
      b.setInsertionPointToStart(&entry);
      Value blockId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
      Value blockDim = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
      Value threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      Value linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, blockId, blockDim), threadId);
      auto toIndex = [&](unsigned i) -> Value {
        return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                          entry.getArgument(argTypes.size() + i));
      };
      Value total = toIndex(0);
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            linear, total);
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> bodyArgs;
      for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
        bodyArgs.push_back(arg.getType() == type
                               ? Value(arg)
                               : arith::TruncIOp::create(b, loc, type, arg));
      bodyArgs.push_back(linear);
      bodyArgs.push_back(total);
      for (unsigned d = 1; d < kMaxLaunchDims; ++d)
        bodyArgs.push_back(toIndex(d));
      bodyArgs.push_back(entry.getArgument(argTypes.size() + kMaxLaunchDims));
      if (condition) {
        Value proven =
            func::CallOp::create(b, loc, condition, bodyArgs).getResult(0);
        auto versions = scf::IfOp::create(b, loc, TypeRange{}, proven,
                                          /*withElseRegion=*/true);
        b.setInsertionPoint(versions.getThenRegion().front().getTerminator());
        func::CallOp::create(b, loc, *body, bodyArgs);
        b.setInsertionPoint(versions.getElseRegion().front().getTerminator());
        func::CallOp::create(b, loc, checkedBody, bodyArgs);
      } else {
        func::CallOp::create(b, loc, *body, bodyArgs);
      }
      b.setInsertionPointAfter(ifOp);
      gpu::ReturnOp::create(b, loc);
    }
  }
};

} // namespace
