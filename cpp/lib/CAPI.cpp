//===- CAPI.cpp - C API of the adjit dialect and passes -------------------===//

#include "adjit-c/Adjit.h"
#include "adjit/AdjitDialect.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/InitAll.h"
#include "adjit/SymbolNames.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdlib>
#include <cstring>

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Adjit, adjit, mlir::adjit::AdjitDialect)

void adjitRegisterDialects(MlirDialectRegistry registry) {
  mlir::adjit::registerAdjitDialects(*unwrap(registry));
}

void adjitRegisterPassesAndPipelines(void) {
  mlir::adjit::registerAdjitPassesAndPipelines();
}

int adjitKernelArgumentAccess(MlirOperation module, uint32_t *flags,
                              size_t capacity, size_t *count) {
  auto moduleOp = llvm::dyn_cast<mlir::ModuleOp>(unwrap(module));
  if (!moduleOp)
    return 1;
  for (auto fn : moduleOp.getOps<mlir::func::FuncOp>()) {
    if (!mlir::adjit::isKernel(fn))
      continue;
    mlir::adjit::ArrayAccessAnalysis analysis(fn);
    *count = fn.getNumArguments();
    for (auto arg : fn.getArguments()) {
      if (arg.getArgNumber() >= capacity)
        break;
      const auto *access = analysis.lookup(arg);
      flags[arg.getArgNumber()] =
          access ? mlir::adjit::ArrayAccessAnalysis::flags(*access) : 0;
    }
    return 0;
  }
  return 1;
}

char *adjitSymbolName(const char *kernel, enum AdjitSymbolKind kind) {
  namespace symbols = mlir::adjit::symbols;
  std::string name = kind == AdjitSymbolAdjoint    ? symbols::adjoint(kernel)
                     : kind == AdjitSymbolTangent  ? symbols::tangent(kernel)
                     : kind == AdjitSymbolCpuEntry ? symbols::cpuEntry(kernel)
                                                   : symbols::gpuModule(kernel);
  char *out = static_cast<char *>(std::malloc(name.size() + 1));
  std::memcpy(out, name.c_str(), name.size() + 1);
  return out;
}

const char *adjitAttributeName(enum AdjitAttribute attribute) {
  using mlir::adjit::AdjitDialect;
  switch (attribute) {
  case AdjitAttributeKernel:
    return AdjitDialect::getKernelAttrName().data();
  case AdjitAttributeArgNames:
    return AdjitDialect::getArgNamesAttrName().data();
  case AdjitAttributeCustomAdjoint:
    return AdjitDialect::getCustomAdjointAttrName().data();
  case AdjitAttributeCustomTangent:
    return AdjitDialect::getCustomTangentAttrName().data();
  case AdjitAttributeCheckSites:
    return AdjitDialect::getCheckSitesAttrName().data();
  case AdjitAttributeRangedArgs:
    return AdjitDialect::getRangedArgsAttrName().data();
  case AdjitAttributeAtomicOrder:
    return AdjitDialect::getAtomicOrderAttrName().data();
  }
  return "";
}
