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

/// How a kernel touches one array argument (bit flags; the compiler's array
/// access analysis). Python's adjit.runtime.access.Access mirrors them.
enum AdjitArgumentAccess {
  AdjitAccessRead = 1,      ///< a load, or an atomic whose old value is used
  AdjitAccessWrite = 2,     ///< a store, a component store, an atomic
  AdjitAccessOwnElement = 4, ///< every access is to the thread's own element
  AdjitAccessFloatMinMax = 8 ///< a float atomic min/max: its adjoint reads
                             ///< the array as the launch left it
};

/// Runs the array access analysis on the kernel (the func.func marked
/// `adjit.kernel`) of `module`: one AdjitArgumentAccess mask per argument
/// (0 for non-arrays) into `flags`, at most `capacity` of them, and the
/// argument count into `count`. Returns non-zero if the module holds no
/// kernel.
int adjitKernelArgumentAccess(MlirOperation module, uint32_t *flags,
                              size_t capacity, size_t *count);

/// The attributes the Python frontend puts on the functions it builds, or
/// reads from them.
enum AdjitAttribute {
  AdjitAttributeKernel,        ///< marks a kernel
  AdjitAttributeArgNames,      ///< a kernel's parameter names
  AdjitAttributeCustomAdjoint, ///< a device function's hand-written adjoint
  AdjitAttributeCustomTangent, ///< a device function's hand-written tangent
  AdjitAttributeCheckSites,    ///< a kernel's checked accesses
  AdjitAttributeRangedArgs,    ///< a kernel's index arrays with value ranges
  AdjitAttributeAtomicOrder    ///< how a CPU launch orders float atomics
};

/// The name of `attribute` (a static string; the dialect owns these names).
const char *adjitAttributeName(enum AdjitAttribute attribute);

/// The symbols adjit derives from a kernel's name.
enum AdjitSymbolKind {
  AdjitSymbolAdjoint,   ///< the adjoint kernel
  AdjitSymbolCpuEntry,  ///< the CPU entry (cpp/runtime/CpuLaunch.h)
  AdjitSymbolGpuModule, ///< the gpu.module holding the kernel
  AdjitSymbolTangent    ///< the tangent (forward-mode) kernel
};

/// The name of `kind` for kernel `kernel` (malloc'ed).
char *adjitSymbolName(const char *kernel, enum AdjitSymbolKind kind);

/// Compiles a module in the LLVM dialect to a relocatable object for the host
/// CPU at `optLevel` (0-3). On success returns 0 and a malloc'ed buffer in
/// `object`; on failure returns non-zero and a malloc'ed message in `error`.
int adjitCompileToObject(MlirOperation module, int optLevel, char **object,
                         size_t *objectSize, char **error);

/// Links an object into the process-wide JIT (in a fresh namespace) and
/// resolves `names` into `addresses`. Returns 0 on success; on failure a
/// malloc'ed message in `error`. The code stays loaded for the process.
/// `symbolNames`/`symbolAddresses`: functions the object may call that the
/// process does not export (the runtime's). (The runtime's own loader is
/// used on x86-64; this is the fallback.)
int adjitLoadObject(const char *object, size_t size, const char **names,
                    size_t numNames, uint64_t *addresses,
                    const char **symbolNames, const uint64_t *symbolAddresses,
                    size_t numSymbols, char **error);

/// The derivative rules `context` attaches (every available dialect is
/// loaded first), malloc'ed, one line per op: "rule <op> <modes>" for each op
/// with a rule, <modes> being "adjoint tangent", "adjoint" or "tangent"; then
/// "declared <op> <mode>: <why>" for each op the rule table
/// (DerivativeRules.def) gives one mode only.
char *adjitDerivativeRules(MlirContext context);

/// "triple/cpu/features" of this machine (malloc'ed): objects compiled here
/// run on machines with the same description.
char *adjitHostTargetDescription(void);

#ifdef __cplusplus
}
#endif

#endif /* ADJIT_C_ADJIT_H */
