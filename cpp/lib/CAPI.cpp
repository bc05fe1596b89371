//===- CAPI.cpp - C API of the adjit dialect and passes -------------------===//

#include "adjit-c/Adjit.h"
#include "adjit/AdjitDialect.h"
#include "adjit/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Adjit, adjit, mlir::adjit::AdjitDialect)

void adjitRegisterDialects(MlirDialectRegistry registry) {
  mlir::adjit::registerAdjitDialects(*unwrap(registry));
}

void adjitRegisterPassesAndPipelines(void) {
  mlir::adjit::registerAdjitPassesAndPipelines();
}
