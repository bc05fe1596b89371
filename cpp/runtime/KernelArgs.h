//===- KernelArgs.h - how kernel arguments are laid out for a launch -*- C++ -*-===//
//
// A CPU entry (CpuLaunch.h) receives one pointer per kernel argument. A
// scalar, vector or matrix argument points at its packed value; an array
// argument points at a ranked memref descriptor, MLIR's standard layout for
// a memref in the LLVM dialect (what adjit-cpu-launch reads back). The
// entry also gets the launch's ErrorRecord, whose words ErrorRecord.h
// numbers. This header is the one place the runtime spells these layouts.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_KERNELARGS_H
#define ADJIT_RUNTIME_KERNELARGS_H

#include "ErrorRecord.h"

#include <cstddef>
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

/// Storage for one argument: a packed value of at most 64 doubles (an 8x8
/// float64 matrix: adjit.types.MAX_COMPONENTS), or a MemRefDescriptor.
struct alignas(16) ArgSlot {
  unsigned char bytes[512];
};
static_assert(sizeof(MemRefDescriptor) <= sizeof(ArgSlot),
              "an argument slot holds a descriptor");

/// Where a launch's checks report the first failure (adjit.access_error):
/// `site` is 0 while nothing failed, else the failing site's number + 1, or
/// kLaunchUnproven.
/// After the failure words, the record carries inputs of the launch: the
/// (min, max) values of up to kMaxRangedArrays index arrays
/// (adjit.index_range), filled in by the runtime before the launch, then
/// where the float atomic adds of the threads it is given to go (an ordered
/// launch gives each chunk of threads its own record; OrderedAtomics.h).
/// The fields are the words of ErrorRecord.h, checked below.
constexpr unsigned kMaxRangedArrays = AdjitRecordMaxRanged;

class AddLog;

struct ErrorRecord {
  int64_t site;
  int64_t thread;
  int64_t index[AdjitRecordMaxRank];
  int64_t size[AdjitRecordMaxRank];
  int64_t ranges[2 * kMaxRangedArrays];
  AddLog *addLog; ///< nullptr: add atomically; kDirectAdds: add directly
};
#define ADJIT_CHECK_RECORD_WORD(field, word)                                  \
  static_assert(offsetof(ErrorRecord, field) == (word) * sizeof(int64_t),     \
                "ErrorRecord::" #field " is word " #word " (ErrorRecord.h)")
ADJIT_CHECK_RECORD_WORD(site, AdjitRecordSite);
ADJIT_CHECK_RECORD_WORD(thread, AdjitRecordThread);
ADJIT_CHECK_RECORD_WORD(index, AdjitRecordIndex);
ADJIT_CHECK_RECORD_WORD(size, AdjitRecordSize);
ADJIT_CHECK_RECORD_WORD(ranges, AdjitRecordRanges);
ADJIT_CHECK_RECORD_WORD(addLog, AdjitRecordAddLog);
#undef ADJIT_CHECK_RECORD_WORD
static_assert(sizeof(ErrorRecord) == AdjitRecordWords * sizeof(int64_t),
              "the record is AdjitRecordWords words (ErrorRecord.h)");

/// ErrorRecord::addLog of a launch that runs its threads one after another
/// on one thread: compiled kernels add directly, with no atomics and no call
/// (adjit-defer-float-atomics).
inline AddLog *const kDirectAdds =
    reinterpret_cast<AddLog *>(uintptr_t(AdjitDirectAdds));

/// ErrorRecord::site of a launch whose launch condition (its proved bounds
/// checks) does not hold: the entry ran no thread, and the launch must be
/// run again with the kernel's all-checked variant (adjit-cpu-launch).
constexpr int64_t kLaunchUnproven = AdjitLaunchUnproven;

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_KERNELARGS_H
