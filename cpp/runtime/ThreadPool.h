//===- ThreadPool.h - Process-wide fork-join CPU pool -----------*- C++ -*-===//
//
// A small fork-join pool used by the CPU launch runtime. One job runs at a
// time: the submitting thread publishes it, helps execute chunks claimed from
// a shared atomic counter, and returns once every chunk has completed. Idle
// workers spin briefly (bounded) and then sleep on a condition variable.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_THREADPOOL_H
#define ADJIT_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace adjit {
namespace runtime {

class ThreadPool {
public:
  /// The process-wide pool: created on first use and intentionally never
  /// destroyed (see ThreadPool.cpp). Its size is the number of hardware
  /// threads available to the process, or ADJIT_NUM_THREADS if set.
  static ThreadPool &global();

  /// Creates a pool of `numThreads` participants: numThreads - 1 workers plus
  /// the thread that calls parallelFor. Values below 1 are treated as 1.
  explicit ThreadPool(int numThreads);
  /// Stops and joins the workers. Must not race with parallelFor.
  ~ThreadPool();

  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Number of threads executing a job, including the caller.
  int numThreads() const { return NumThreads; }

  /// Calls fn(chunkBegin, chunkEnd) over [0, total) in chunks of at least
  /// `grain` (except possibly the last); blocks until done. Every index is
  /// covered exactly once. If fn throws, the remaining chunks still run and
  /// the first exception is rethrown here afterwards. Concurrent callers are
  /// serialized; calls from inside a running chunk execute inline.
  void parallelFor(int64_t total, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn);

  /// Whether the calling thread is running a chunk of a job (a worker, or a
  /// submitter inside its own job).
  static bool inJob();

  /// fork() handlers (registered by the launch layer, CpuLaunch.cpp): no job
  /// is running while the process is copied, and the child makes a new pool
  /// on first use (the workers are not copied).
  static void beforeFork();
  static void afterForkInParent();
  static void afterForkInChild();

private:
  using ChunkFn = void (*)(void *ctx, int64_t begin, int64_t end);

  void run(int64_t total, int64_t chunk, ChunkFn fn, void *ctx);
  void runChunks();
  void workerLoop();
  uint64_t waitForJob(uint32_t seenGen);
  void waitUntilIdle();

  int NumThreads;
  std::vector<std::thread> Workers;

  // Job state word: [generation:32][open:1][active workers:31]. A worker may
  // only join a job while it is open; the submitter closes it once all chunks
  // are claimed and then waits for the active count to drain to zero.
  alignas(64) std::atomic<uint64_t> State{0};
  // Next unclaimed index of the current job.
  alignas(64) std::atomic<int64_t> Next{0};

  // Current job, written by the submitter before State is published.
  alignas(64) ChunkFn Fn = nullptr;
  void *Ctx = nullptr;
  int64_t Total = 0;
  int64_t Chunk = 1;
  std::atomic<bool> HasError{false};
  std::exception_ptr Error;

  std::mutex SubmitMutex; // Serializes jobs from different threads.

  std::mutex WakeMutex; // Sleeping workers wait here for a new generation.
  std::condition_variable WakeCv;
  std::atomic<int> Sleepers{0};
  std::atomic<bool> Stopping{false};

  std::mutex DoneMutex; // The submitter sleeps here for the last worker.
  std::condition_variable DoneCv;
};

} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_THREADPOOL_H
