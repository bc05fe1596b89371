/*===- Adjit.h - C API of the adjit dialect and passes ------------*- C -*-===*\
|* The only adjit entry points the nanobind module sees: it is built with RTTI *|
|* and exceptions, the MLIR C++ code without, so they meet at this C API.     *|
\*===----------------------------------------------------------------------===*/

#ifndef ADJIT_C_ADJIT_H
#define ADJIT_C_ADJIT_H

#include "mlir-c/IR.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Adjit, adjit);

/// Adds the adjit dialect and its dependencies to `registry`.
void adjitRegisterDialects(MlirDialectRegistry registry);

/// Registers the adjit passes and stage pipelines globally. Idempotent.
void adjitRegisterPassesAndPipelines(void);

/// Compiles a module in the LLVM dialect to a relocatable object for the host
/// CPU at `optLevel` (0-3). On success returns 0 and a malloc'ed buffer in
/// `object`; on failure returns non-zero and a malloc'ed message in `error`.
int adjitCompileToObject(MlirOperation module, int optLevel, char **object,
                         size_t *objectSize, char **error);

/// Links an object into the process-wide JIT (in a fresh namespace) and
/// resolves `names` into `addresses`. Returns 0 on success; on failure a
/// malloc'ed message in `error`. The code stays loaded for the process.
int adjitLoadObject(const char *object, size_t size, const char **names,
                    size_t numNames, uint64_t *addresses, char **error);

/// Creates the process JIT on a background thread, so the first launch does
/// not pay for it. adjitWaitJitWarmup joins that thread (call before exit).
void adjitStartJitWarmup(void);
void adjitWaitJitWarmup(void);

/// "triple/cpu/features" of this machine (malloc'ed): objects compiled here
/// run on machines with the same description.
char *adjitHostTargetDescription(void);

#ifdef __cplusplus
}
#endif

#endif /* ADJIT_C_ADJIT_H */
