//===- AutodiffUtils.cpp - what both differentiation modes share ---------===//

#include "AutodiffUtils.h"
#include "adjit/AdjitDialect.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::adjit;

void autodiff::setInsertionToEndReplacingTerminator(OpBuilder &b,
                                                     Block *block) {
  if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
    block->back().erase();
  b.setInsertionPointToEnd(block);
}

func::FuncOp autodiff::createDerivedKernel(func::FuncOp kernel, StringRef name,
                                           TypeRange inputs,
                                           StringRef derivedOfAttr,
                                           ArrayRef<DerivedArgs> added) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  auto derived = func::FuncOp::create(b, kernel.getLoc(), name,
                                      b.getFunctionType(inputs, {}));
  derived->setAttr(AdjitDialect::getKernelAttrName(), b.getUnitAttr());
  derived->setAttr(derivedOfAttr, SymbolRefAttr::get(kernel));
  auto names =
      kernel->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName());
  if (!names)
    return derived;
  SmallVector<Attribute> all(names.begin(), names.end());
  for (const DerivedArgs &args : added)
    for (unsigned lane = 0; lane < args.lanes; ++lane) {
      std::string prefix = args.prefix.str();
      prefix += args.lanes == 1 ? "_" : std::to_string(lane) + "_";
      for (unsigned i : args.positions)
        all.push_back(
            b.getStringAttr(prefix + cast<StringAttr>(names[i]).str()));
    }
  derived->setAttr(AdjitDialect::getArgNamesAttrName(), b.getArrayAttr(all));
  return derived;
}

FailureOr<SmallVector<func::FuncOp>> autodiff::differentiateKernels(
    ModuleOp module, StringRef derivedOfAttr,
    function_ref<std::string(StringRef)> derivedName,
    function_ref<LogicalResult(func::FuncOp)> differentiate) {
  SmallVector<func::FuncOp> kernels;
  SymbolTable symbols(module);
  for (auto fn : module.getOps<func::FuncOp>())
    if (isKernel(fn) && !fn->hasAttr(derivedOfAttr) &&
        !symbols.lookup(derivedName(fn.getSymName())))
      kernels.push_back(fn);
  for (func::FuncOp kernel : kernels) {
    if (kernel.isExternal()) {
      kernel.emitOpError("kernel has no body to differentiate");
      return failure();
    }
    if (failed(differentiate(kernel)))
      return failure();
  }
  return kernels;
}
