//===- CAPI.cpp - C API of the adjit dialect and passes -------------------===//

#include "adjit-c/Adjit.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Adjoint.h"
#include "adjit/ArrayAccessAnalysis.h"
#include "adjit/InitAll.h"
#include "adjit/SymbolNames.h"
#include "adjit/Tangent.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

static char *copyString(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

char *adjitDerivativeRules(MlirContext context) {
  using namespace mlir;
  using namespace mlir::adjit;
  MLIRContext *ctx = unwrap(context);
  ctx->loadAllAvailableDialects();
  std::string out;
  for (RegisteredOperationName name : ctx->getRegisteredOperations()) {
    bool adjoint = name.hasInterface<AdjointOpInterface>();
    bool tangent = name.hasInterface<TangentOpInterface>();
    if (!adjoint && !tangent)
      continue;
    out += "rule " + name.getStringRef().str() +
           (adjoint && tangent ? " adjoint tangent\n"
            : adjoint          ? " adjoint\n"
                               : " tangent\n");
  }
#define ADJIT_TANGENT_ONLY(DIALECT, OP, WHY, ...)                              \
  out += "declared " + OP::getOperationName().str() + " tangent: " WHY "\n";
#define ADJIT_ADJOINT_ONLY(DIALECT, OP, WHY, ...)                              \
  out += "declared " + OP::getOperationName().str() + " adjoint: " WHY "\n";
#include "Autodiff/DerivativeRules.def"
  return copyString(out);
}

char *adjitSymbolName(const char *kernel, enum AdjitSymbolKind kind) {
  namespace symbols = mlir::adjit::symbols;
  std::string name = kind == AdjitSymbolAdjoint    ? symbols::adjoint(kernel)
                     : kind == AdjitSymbolTangent  ? symbols::tangent(kernel)
                     : kind == AdjitSymbolCpuEntry ? symbols::cpuEntry(kernel)
                                                   : symbols::gpuModule(kernel);
  return copyString(name);
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
