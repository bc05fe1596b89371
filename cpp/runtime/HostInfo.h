//===- HostInfo.h - which CPU this process runs on -------------*- C++ -*-===//
//
// CPU kernels are compiled for the host CPU (its model and every feature it
// has), so compiled code is reused only on a CPU that reports the same
// identity. The runtime computes it without LLVM, so a machine that has only
// the runtime finds the kernels precompiled for its CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_HOSTINFO_H
#define ADJIT_RUNTIME_HOSTINFO_H

#include <string>

namespace adjit {
namespace runtime {

/// "<arch>-<vendor and model>-<feature words>": equal on CPUs that run the
/// same compiled code (x86-64: cpuid vendor, signature and feature leaves,
/// and the register state the OS enables; elsewhere: the hwcaps).
std::string hostId();

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_HOSTINFO_H
