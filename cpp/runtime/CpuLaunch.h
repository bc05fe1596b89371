//===- CpuLaunch.h - Launching compiled kernels on the CPU ------*- C++ -*-===//
//
// Entry point used to run a compiled CPU kernel over its launch grid. The
// grid is flattened to linear thread indices [0, total), which are split into
// contiguous chunks and executed on the process-wide ThreadPool.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_CPULAUNCH_H
#define ADJIT_RUNTIME_CPULAUNCH_H

#include "KernelArgs.h"
#include "OrderedAtomics.h"
#include "ThreadPool.h"

#include <cstdint>

namespace adjit {
namespace runtime {

/// A compiled CPU kernel entry: runs the kernel body for linear thread indices
/// [begin, end). args: one pointer per kernel argument; launchShape: 4 extents
/// (unused trailing ones are 1); record: where failed checks are reported
/// (shared by all chunks of a launch). Entries must not throw.
using CpuEntry = void (*)(void **args, const int64_t *launchShape,
                          int64_t begin, int64_t end, ErrorRecord *record);

/// Runs entry over [0, total) split into chunks across the process-wide pool;
/// blocks until done. Launches from different threads run one at a time. Launches of at most 1024 indices run inline on the
/// calling thread, as do launches issued from inside a running kernel.
/// `record` must be zeroed; it holds the first failure afterwards.
/// `order` is the kernel's adjit.atomic_order (OrderedAtomics.h): Ordered
/// runs in windows of threads, each split into chunks that log their float
/// atomic adds, which are applied in thread order before the next window;
/// Serial runs every thread in order on the calling thread.
void launchCpu(CpuEntry entry, void **args, const int64_t launchShape[4],
               int64_t total, ErrorRecord *record,
               AtomicOrder order = AtomicOrder::Parallel);

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_CPULAUNCH_H
