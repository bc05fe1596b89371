//===- CpuLaunch.cpp - Launching compiled kernels on the CPU --------------===//
//
// Thin adapter from the C kernel ABI to ThreadPool::parallelFor, with an
// inline fast path so tiny launches never touch the pool.
//
//===----------------------------------------------------------------------===//

#include "CpuLaunch.h"

using namespace adjit::runtime;

namespace {
// Minimum indices per chunk; launches of at most this size run inline.
// ~1024 elementwise iterations is around a microsecond, comparable to the
// cost of waking and synchronizing with a worker.
constexpr int64_t kGrain = 1024;
} // namespace

void adjit::runtime::launchCpu(CpuEntry entry, void **args,
                               const int64_t launchShape[4], int64_t total,
                               ErrorRecord *record) {
  if (total <= 0)
    return;
  if (total <= kGrain) {
    entry(args, launchShape, 0, total, record);
    return;
  }
  // Captured by a single reference so std::function stores it inline.
  struct Launch {
    CpuEntry Entry;
    void **Args;
    const int64_t *Shape;
    ErrorRecord *Record;
  } launch{entry, args, launchShape, record};
  ThreadPool::global().parallelFor(
      total, kGrain, [&launch](int64_t begin, int64_t end) {
        launch.Entry(launch.Args, launch.Shape, begin, end, launch.Record);
      });
}

