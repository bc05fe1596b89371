//===- adjit-opt.cpp - mlir-opt with the adjit dialect and passes ---------===//

#include "adjit/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  mlir::adjit::registerAdjitDialects(registry);
  mlir::adjit::registerAdjitPassesAndPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "adjit optimizer driver: mlir-opt plus the adjit dialect\n",
      registry));
}
