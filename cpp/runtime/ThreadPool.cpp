//===- ThreadPool.cpp - Process-wide fork-join CPU pool -------------------===//
//
// Implementation notes. A job is published by bumping the generation in the
// State word (with the "open" bit set). Workers join an open job by
// incrementing the active count with a CAS, then claim chunks from Next until
// the range is exhausted. The submitter runs chunks too, then clears the open
// bit so no new worker can join, and waits for the active count to drain.
// Only after that may the job fields be reused, so no worker can ever observe
// a half-written job. Sleeping workers are woken only when some are actually
// asleep, which keeps back-to-back launches free of syscalls.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <system_error>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using namespace adjit::runtime;

namespace {

constexpr uint64_t kOpenBit = uint64_t(1) << 31;
constexpr uint64_t kActiveMask = kOpenBit - 1;
constexpr int64_t kChunksPerThread = 8;
// How long an idle thread spins before blocking. Long enough to catch
// back-to-back launches, short enough that idle workers do not burn a core.
constexpr std::chrono::microseconds kSpinTime(50);

/// True on pool workers, and on a submitting thread while it runs chunks;
/// parallelFor runs inline in that case, which makes nesting deadlock-free.
thread_local bool InPoolJob = false;

uint32_t generationOf(uint64_t state) { return uint32_t(state >> 32); }

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Spins for at most kSpinTime until `done()` holds; returns whether it did.
template <typename Pred> bool spinUntil(Pred done) {
  auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 1;; ++i) {
    if (done())
      return true;
    cpuRelax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline)
      return false;
  }
}

int defaultNumThreads() {
  if (const char *env = std::getenv("ADJIT_NUM_THREADS")) {
    char *end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1)
      return int(std::min<long>(n, 1024));
  }
#if defined(__linux__)
  // Respect affinity masks (taskset, cgroup cpusets) when available.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? int(hw) : 1;
}

} // namespace

namespace {
/// The process-wide pool, created on first use. Intentionally leaked.
/// Destroying it during static destruction would break static destructors
/// elsewhere that still launch kernels, and joining at exit can deadlock if
/// exit() is reached from inside a job. Idle workers are blocked on a
/// condition variable and are simply discarded at process exit. A child of
/// fork() has none of the workers: it drops the pool (leaked too) and makes
/// its own on first use (afterForkInChild).
std::atomic<ThreadPool *> GlobalPool{nullptr};
std::mutex GlobalPoolMutex;
ThreadPool *LockedForFork = nullptr;
} // namespace

ThreadPool &ThreadPool::global() {
  if (ThreadPool *pool = GlobalPool.load(std::memory_order_acquire))
    return *pool;
  std::lock_guard<std::mutex> lock(GlobalPoolMutex);
  if (!GlobalPool.load(std::memory_order_relaxed))
    GlobalPool.store(new ThreadPool(defaultNumThreads()),
                     std::memory_order_release);
  return *GlobalPool.load(std::memory_order_relaxed);
}

void ThreadPool::beforeFork() {
  // No job runs while the process is copied. (The pool locked here is the
  // one unlocked after: another thread may create one meanwhile.)
  LockedForFork = GlobalPool.load(std::memory_order_acquire);
  if (LockedForFork)
    LockedForFork->SubmitMutex.lock();
}

void ThreadPool::afterForkInParent() {
  if (LockedForFork)
    LockedForFork->SubmitMutex.unlock();
}

void ThreadPool::afterForkInChild() {
  // The old pool's workers do not exist here; it is left as it is.
  GlobalPool.store(nullptr, std::memory_order_release);
  new (&GlobalPoolMutex) std::mutex;
}

ThreadPool::ThreadPool(int numThreads) {
  numThreads = std::max(numThreads, 1);
  Workers.reserve(numThreads - 1);
  for (int i = 1; i < numThreads; ++i) {
    try {
      Workers.emplace_back([this] { workerLoop(); });
    } catch (const std::system_error &) {
      break; // Out of threads: run with what we have.
    }
  }
  NumThreads = int(Workers.size()) + 1;
}

ThreadPool::~ThreadPool() {
  Stopping.store(true);
  { std::lock_guard<std::mutex> lock(WakeMutex); }
  WakeCv.notify_all();
  for (std::thread &worker : Workers)
    worker.join();
}

bool ThreadPool::inJob() { return InPoolJob; }

void ThreadPool::parallelFor(int64_t total, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (total <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  if (NumThreads == 1 || total <= grain || InPoolJob) {
    fn(0, total);
    return;
  }
  int64_t parts = int64_t(NumThreads) * kChunksPerThread;
  int64_t chunk = std::max(grain, (total + parts - 1) / parts);
  run(
      total, chunk,
      [](void *ctx, int64_t begin, int64_t end) {
        (*static_cast<const std::function<void(int64_t, int64_t)> *>(ctx))(
            begin, end);
      },
      const_cast<void *>(static_cast<const void *>(&fn)));
}

void ThreadPool::run(int64_t total, int64_t chunk, ChunkFn fn, void *ctx) {
  std::lock_guard<std::mutex> submitLock(SubmitMutex);

  // No worker is active here, so the job fields are ours to write.
  Fn = fn;
  Ctx = ctx;
  Total = total;
  Chunk = chunk;
  Error = nullptr;
  HasError.store(false, std::memory_order_relaxed);
  Next.store(0, std::memory_order_relaxed);
  uint32_t gen = generationOf(State.load(std::memory_order_relaxed)) + 1;
  // seq_cst store + seq_cst load of Sleepers pairs with the worker's
  // increment-then-check in waitForJob, so a wakeup cannot be lost.
  State.store(uint64_t(gen) << 32 | kOpenBit);
  if (Sleepers.load() > 0) {
    { std::lock_guard<std::mutex> lock(WakeMutex); }
    WakeCv.notify_all();
  }

  bool wasInJob = InPoolJob;
  InPoolJob = true;
  runChunks();
  InPoolJob = wasInJob;

  // Every chunk is claimed; stop new joiners and wait for in-flight chunks.
  uint64_t prev = State.fetch_and(~kOpenBit, std::memory_order_acq_rel);
  if (prev & kActiveMask)
    waitUntilIdle();

  if (HasError.load(std::memory_order_relaxed)) {
    std::exception_ptr error = std::move(Error);
    Error = nullptr;
    std::rethrow_exception(error);
  }
}

void ThreadPool::runChunks() {
  const int64_t total = Total, chunk = Chunk;
  const ChunkFn fn = Fn;
  void *const ctx = Ctx;
  for (;;) {
    int64_t begin = Next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= total)
      return;
    int64_t end = total - begin > chunk ? begin + chunk : total;
    try {
      fn(ctx, begin, end);
    } catch (...) {
      // Keep the first error; later chunks still run. Published to the
      // submitter by the release in the active-count decrement.
      if (!HasError.exchange(true, std::memory_order_relaxed))
        Error = std::current_exception();
    }
  }
}

void ThreadPool::workerLoop() {
  InPoolJob = true;
  uint32_t seen = 0;
  for (;;) {
    uint64_t state = waitForJob(seen);
    if (Stopping.load(std::memory_order_relaxed))
      return;
    seen = generationOf(state);
    // Join whichever job is open; on CAS failure `state` is reloaded.
    while (state & kOpenBit) {
      if (!State.compare_exchange_weak(state, state + 1,
                                       std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      seen = generationOf(state);
      runChunks();
      uint64_t prev = State.fetch_sub(1, std::memory_order_acq_rel);
      // Last one out of a closed job: the submitter may be asleep.
      if ((prev & kActiveMask) == 1 && !(prev & kOpenBit)) {
        std::lock_guard<std::mutex> lock(DoneMutex);
        DoneCv.notify_one();
      }
      break;
    }
  }
}

uint64_t ThreadPool::waitForJob(uint32_t seenGen) {
  uint64_t state = 0;
  auto ready = [&] {
    state = State.load();
    return generationOf(state) != seenGen || Stopping.load();
  };
  if (spinUntil(ready))
    return state;
  std::unique_lock<std::mutex> lock(WakeMutex);
  Sleepers.fetch_add(1);
  while (!ready())
    WakeCv.wait(lock);
  Sleepers.fetch_sub(1, std::memory_order_relaxed);
  return state;
}

void ThreadPool::waitUntilIdle() {
  auto idle = [this] {
    return (State.load(std::memory_order_acquire) & kActiveMask) == 0;
  };
  if (spinUntil(idle))
    return;
  std::unique_lock<std::mutex> lock(DoneMutex);
  DoneCv.wait(lock, idle);
}
