//===- KernelArgs.h - how kernel arguments are laid out for a launch -*- C++ -*-===//
//
// A CPU entry (CpuLaunch.h) receives one pointer per kernel argument. A
// scalar, vector or matrix argument points at its packed value; an array
// argument points at a ranked memref descriptor, MLIR's standard layout for
// a memref in the LLVM dialect (what adjit-cpu-launch reads back). This
// header is the one place the runtime spells that layout.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_KERNELARGS_H
#define ADJIT_RUNTIME_KERNELARGS_H

#include <cstdint>

namespace adjit {
namespace runtime {

/// Array ranks a descriptor holds: 4 array dimensions plus a matrix
/// element's 2 component dimensions.
constexpr unsigned kMaxArrayRank = 6;

/// A ranked memref descriptor of rank <= kMaxArrayRank: sizes then strides
/// (in elements) fill the first 2 * rank slots of `sizesAndStrides`.
struct MemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[2 * kMaxArrayRank];
};

/// Storage for one argument: a packed value of at most 16 doubles (a 4x4
/// float64 matrix), or a MemRefDescriptor.
struct alignas(16) ArgSlot {
  unsigned char bytes[128];
};
static_assert(sizeof(MemRefDescriptor) <= sizeof(ArgSlot),
              "an argument slot holds a descriptor");

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_KERNELARGS_H
