/*===- Adjit.h - C API of the adjit dialect and passes ------------*- C -*-===*\
|* The only adjit entry points the nanobind module sees: it is built with RTTI *|
|* and exceptions, the MLIR C++ code without, so they meet at this C API.     *|
\*===----------------------------------------------------------------------===*/

#ifndef ADJIT_C_ADJIT_H
#define ADJIT_C_ADJIT_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Adjit, adjit);

/// Adds the adjit dialect and its dependencies to `registry`.
void adjitRegisterDialects(MlirDialectRegistry registry);

/// Registers the adjit passes and stage pipelines globally. Idempotent.
void adjitRegisterPassesAndPipelines(void);

#ifdef __cplusplus
}
#endif

#endif /* ADJIT_C_ADJIT_H */
