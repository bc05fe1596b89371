//===- SymbolNames.h - names of the symbols adjit derives from a kernel's -===//
//
// The passes name what they generate after the kernel; the runtime looks
// these names up in compiled code. They are spelled here only, and reach
// Python through the C API (adjitSymbolName).
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_SYMBOLNAMES_H
#define ADJIT_SYMBOLNAMES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::adjit::symbols {

/// The adjoint kernel of `kernel` (adjit-adjoint).
inline std::string adjoint(llvm::StringRef kernel) {
  return (kernel + "_adjoint").str();
}

/// The tangent (forward-mode) kernel of `kernel` (adjit-tangent).
inline std::string tangent(llvm::StringRef kernel) {
  return (kernel + "_tangent").str();
}

/// The CPU entry that runs `kernel` over a range of thread indices
/// (adjit-cpu-launch; the ABI is cpp/runtime/CpuLaunch.h).
inline std::string cpuEntry(llvm::StringRef kernel) {
  return (kernel + "_cpu_entry").str();
}

/// The gpu.module holding `kernel` (adjit-gpu-launch).
inline std::string gpuModule(llvm::StringRef kernel) {
  return (kernel + "_module").str();
}

} // namespace mlir::adjit::symbols

#endif // ADJIT_SYMBOLNAMES_H
