//===- CpuLaunch.cpp - Launching compiled kernels on the CPU --------------===//
//
// Thin adapter from the C kernel ABI to ThreadPool::parallelFor, with an
// inline fast path so tiny launches never touch the pool, and the ordered
// launch of kernels whose float atomic adds must come out in thread order.
//
//===----------------------------------------------------------------------===//

#include "CpuLaunch.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>

#include <pthread.h>

using namespace adjit::runtime;

namespace {
// Minimum indices per chunk; launches of at most this size run inline.
// ~1024 elementwise iterations is around a microsecond, comparable to the
// cost of waking and synchronizing with a worker.
constexpr int64_t kGrain = 1024;

// Ordered launches: chunks per thread in a window (as ThreadPool balances
// its own chunks), and the window of threads whose logs are held at once:
// the first is kFirstWindow threads, the next ones are sized for about
// kWindowEntries logged adds (16 bytes each), within [kMinWindow, kMaxWindow].
constexpr int64_t kChunksPerThread = 8;
constexpr int64_t kFirstWindow = int64_t(1) << 16;
constexpr int64_t kMinWindow = int64_t(1) << 14;
constexpr int64_t kMaxWindow = int64_t(1) << 20;
constexpr int64_t kWindowEntries = int64_t(1) << 20;
// A log part that grew beyond this many entries is freed after its launch.
constexpr size_t kKeptEntries = size_t(1) << 16;

/// Logs kept between ordered launches (their memory is reused).
class LogCache {
public:
  std::unique_ptr<std::vector<AddLog>> take() {
    std::lock_guard<std::mutex> lock(mutex);
    if (free.empty())
      return std::make_unique<std::vector<AddLog>>();
    auto logs = std::move(free.back());
    free.pop_back();
    return logs;
  }
  void give(std::unique_ptr<std::vector<AddLog>> logs) {
    for (AddLog &log : *logs)
      log.trim(kKeptEntries);
    std::lock_guard<std::mutex> lock(mutex);
    free.push_back(std::move(logs));
  }

private:
  std::mutex mutex;
  std::vector<std::unique_ptr<std::vector<AddLog>>> free;
};

/// Launches from different host threads run one at a time, each as a whole:
/// ordered and serial launches apply their float adds as plain
/// read-modify-writes (in thread order), which another launch's adds into
/// the same memory would race with and lose. So concurrent launches give the
/// results of some serial order of whole launches. A launch nested in a
/// running one (from a pool job) runs under its lock.
thread_local bool HoldsLaunchLock = false;

std::mutex &launchMutex() {
  static std::mutex *mutex = new std::mutex; // never destroyed, like the pool
  return *mutex;
}

/// fork() waits for a launch in flight to end (the copy would hold its lock
/// and wait for workers that do not exist there) and gives the child a new
/// thread pool. (A fork from inside a launch, which only a kernel could do,
/// takes no lock.)
bool ForkLockedLaunches = false;
void beforeFork() {
  ForkLockedLaunches = !HoldsLaunchLock && !ThreadPool::inJob();
  if (ForkLockedLaunches)
    launchMutex().lock();
  ThreadPool::beforeFork();
}
void afterForkInParent() {
  ThreadPool::afterForkInParent();
  if (ForkLockedLaunches)
    launchMutex().unlock();
}
void afterForkInChild() {
  ThreadPool::afterForkInChild();
  new (&launchMutex()) std::mutex;
  HoldsLaunchLock = false;
}
[[maybe_unused]] const bool kForkHandlersRegistered =
    pthread_atfork(beforeFork, afterForkInParent, afterForkInChild) == 0;
class LaunchLock {
public:
  LaunchLock() {
    if (HoldsLaunchLock || ThreadPool::inJob())
      return;
    lock = std::unique_lock<std::mutex>(launchMutex());
    HoldsLaunchLock = true;
  }
  ~LaunchLock() {
    if (lock.owns_lock())
      HoldsLaunchLock = false;
  }

private:
  std::unique_lock<std::mutex> lock;
};

LogCache &logCache() {
  static LogCache *cache = new LogCache; // never destroyed, like the pool
  return *cache;
}

void launchOrdered(CpuEntry entry, void **args, const int64_t *shape,
                   int64_t total, ErrorRecord *record) {
  ThreadPool &pool = ThreadPool::global();
  int64_t threads = pool.numThreads();
  unsigned parts = 1;
  while (parts < 4 * threads && parts < 256)
    parts *= 2;
  auto logs = logCache().take();
  // Each chunk gets its own record, pointing at its log.
  std::vector<ErrorRecord> records;
  int64_t window = kFirstWindow;
  for (int64_t start = 0; start < total;) {
    int64_t count = std::min(window, total - start);
    int64_t chunks = std::min(threads * kChunksPerThread,
                              (count + kGrain - 1) / kGrain);
    if (int64_t(logs->size()) < chunks)
      logs->resize(chunks);
    records.assign(chunks, *record);
    for (int64_t c = 0; c < chunks; ++c) {
      (*logs)[c].reset(parts);
      records[c].addLog = &(*logs)[c];
    }
    pool.parallelFor(chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c)
        entry(args, shape, start + count * c / chunks,
              start + count * (c + 1) / chunks, &records[c]);
    });
    for (const ErrorRecord &chunk : records) {
      if (chunk.site == kLaunchUnproven) {
        // Nothing ran (the condition is the launch's: no chunk ran); the
        // all-checked variant is launched instead.
        record->site = kLaunchUnproven;
        logCache().give(std::move(logs));
        return;
      }
      // The first failure in thread order.
      if (chunk.site != 0 && record->site == 0) {
        record->site = chunk.site;
        record->thread = chunk.thread;
        std::copy(std::begin(chunk.index), std::end(chunk.index), record->index);
        std::copy(std::begin(chunk.size), std::end(chunk.size), record->size);
      }
    }
    // Each part of memory gets its adds chunk by chunk: in thread order.
    pool.parallelFor(parts, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p)
        for (int64_t c = 0; c < chunks; ++c)
          (*logs)[c].apply(unsigned(p));
    });
    size_t entries = 0;
    for (int64_t c = 0; c < chunks; ++c)
      entries += (*logs)[c].size();
    window = entries == 0 ? kMaxWindow
                          : std::clamp(int64_t(kWindowEntries * count / entries),
                                       kMinWindow, kMaxWindow);
    start += count;
  }
  logCache().give(std::move(logs));
}
} // namespace

void adjit::runtime::launchCpu(CpuEntry entry, void **args,
                               const int64_t launchShape[4], int64_t total,
                               ErrorRecord *record, AtomicOrder order) {
  if (total <= 0)
    return;
  LaunchLock lock;
  if (order == AtomicOrder::Serial ||
      (order == AtomicOrder::Ordered &&
       (total <= kGrain || ThreadPool::global().numThreads() == 1))) {
    // One thread, threads in index order: adds apply at once, in the order
    // an ordered launch applies them, and need no atomics.
    record->addLog = kDirectAdds;
    entry(args, launchShape, 0, total, record);
    record->addLog = nullptr;
    return;
  }
  if (order == AtomicOrder::Ordered)
    return launchOrdered(entry, args, launchShape, total, record);
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
