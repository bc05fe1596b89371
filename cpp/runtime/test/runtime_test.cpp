//===- runtime_test.cpp - Standalone test for the CPU launch runtime ------===//
//
// Checks exactly-once coverage, concurrent and nested launches, exception
// propagation, ordered float atomics, then prints launch overheads. Returns nonzero on failure.
// Build: g++ -O2 -std=c++17 -pthread cpp/runtime/*.cpp
//            cpp/runtime/test/runtime_test.cpp -o /tmp/rt_test
//
//===----------------------------------------------------------------------===//

#include "../CpuLaunch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace adjit::runtime;

static int Failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
      ++Failures;                                                              \
    }                                                                          \
  } while (0)

namespace {

/// Per-index hit counters plus a flag for malformed chunks.
struct Coverage {
  explicit Coverage(int64_t n) : Total(n), Hits(new std::atomic<int>[n]) {
    for (int64_t i = 0; i < n; ++i)
      Hits[i].store(0, std::memory_order_relaxed);
  }
  void hit(int64_t begin, int64_t end) {
    if (begin < 0 || end > Total || begin >= end)
      BadChunk = true;
    for (int64_t i = std::max<int64_t>(begin, 0); i < std::min(end, Total); ++i)
      Hits[i].fetch_add(1, std::memory_order_relaxed);
  }
  bool exactlyOnce() const {
    for (int64_t i = 0; i < Total; ++i)
      if (Hits[i].load(std::memory_order_relaxed) != 1)
        return false;
    return !BadChunk;
  }
  int64_t Total;
  std::unique_ptr<std::atomic<int>[]> Hits;
  std::atomic<bool> BadChunk{false};
};

// Kernel ABI: args[0] is a Coverage*; the launch shape must be 1-D.
void coverageEntry(void **args, const int64_t *shape, int64_t begin,
                   int64_t end, ErrorRecord *) {
  auto *cov = static_cast<Coverage *>(args[0]);
  if (shape[0] != cov->Total || shape[1] != 1 || shape[2] != 1 || shape[3] != 1)
    cov->BadChunk = true;
  cov->hit(begin, end);
}

bool launchCoverage(int64_t total) {
  Coverage cov(total);
  void *args[] = {&cov};
  int64_t shape[4] = {total, 1, 1, 1};
  ErrorRecord record{};
  launchCpu(coverageEntry, args, shape, total, &record);
  return cov.exactlyOnce();
}

void testCoverage() {
  for (int64_t total : {int64_t(0), int64_t(1), int64_t(7), int64_t(1000),
                        int64_t(1024), int64_t(4097), int64_t(1000003)})
    CHECK(launchCoverage(total));

  // parallelFor on a private, oversubscribed pool, with various grains.
  ThreadPool pool(5);
  CHECK(pool.numThreads() == 5);
  for (int64_t total : {int64_t(0), int64_t(1), int64_t(7), int64_t(1000),
                        int64_t(1000003)})
    for (int64_t grain : {int64_t(0), int64_t(1), int64_t(3), int64_t(1000)}) {
      Coverage cov(total);
      std::atomic<bool> smallChunk{false};
      std::atomic<int64_t> lastChunks{0};
      pool.parallelFor(total, grain, [&](int64_t b, int64_t e) {
        if (e - b < std::max<int64_t>(grain, 1)) {
          if (e != total)
            smallChunk = true;
          ++lastChunks;
        }
        cov.hit(b, e);
      });
      CHECK(cov.exactlyOnce());
      CHECK(!smallChunk && lastChunks <= 1);
    }
}

void testConcurrent() {
  std::atomic<bool> ok{true};
  auto body = [&ok](int64_t total) {
    for (int iter = 0; iter < 200; ++iter)
      if (!launchCoverage(total + iter))
        ok = false;
  };
  std::thread a(body, 100000), b(body, 54321);
  a.join();
  b.join();
  CHECK(ok);

  // Two threads sharing one private pool through parallelFor.
  ThreadPool pool(3);
  auto poolBody = [&](int64_t total) {
    for (int iter = 0; iter < 200; ++iter) {
      Coverage cov(total);
      pool.parallelFor(total, 16, [&](int64_t b, int64_t e) { cov.hit(b, e); });
      if (!cov.exactlyOnce())
        ok = false;
    }
  };
  std::thread c(poolBody, 7777), d(poolBody, 10000);
  c.join();
  d.join();
  CHECK(ok);
}

// args[0]: std::atomic<bool> *ok. Launches an inner kernel per chunk.
void nestedEntry(void **args, const int64_t *, int64_t begin, int64_t end,
                 ErrorRecord *) {
  auto *ok = static_cast<std::atomic<bool> *>(args[0]);
  for (int64_t i = begin; i < end; i += 997)
    if (!launchCoverage(5000))
      *ok = false;
}

void testNested() {
  std::atomic<bool> ok{true};
  void *args[] = {&ok};
  int64_t shape[4] = {100000, 1, 1, 1};
  ErrorRecord record{};
  launchCpu(nestedEntry, args, shape, 100000, &record);
  CHECK(ok);

  // parallelFor inside parallelFor, on both the global and a private pool.
  for (ThreadPool *pool : {&ThreadPool::global(), new ThreadPool(4)}) {
    Coverage cov(300 * 1000);
    pool->parallelFor(300, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        pool->parallelFor(1000, 10, [&](int64_t ib, int64_t ie) {
          cov.hit(i * 1000 + ib, i * 1000 + ie);
        });
    });
    CHECK(cov.exactlyOnce());
    if (pool != &ThreadPool::global())
      delete pool;
  }
}

void testExceptions() {
  for (ThreadPool *pool : {&ThreadPool::global(), new ThreadPool(4)}) {
    for (int64_t total : {int64_t(10), int64_t(1000000)}) {
      Coverage cov(total);
      std::string message;
      try {
        pool->parallelFor(total, 1, [&](int64_t b, int64_t e) {
          cov.hit(b, e);
          if (b <= total / 2 && total / 2 < e)
            throw std::runtime_error("boom");
          if (b <= total / 3 && total / 3 < e)
            throw std::logic_error("second");
        });
      } catch (const std::exception &err) {
        message = err.what();
      }
      CHECK(message == "boom" || message == "second");
      CHECK(cov.exactlyOnce()); // All chunks still ran.
    }
    // The pool remains usable afterwards.
    Coverage cov(100000);
    pool->parallelFor(100000, 1, [&](int64_t b, int64_t e) { cov.hit(b, e); });
    CHECK(cov.exactlyOnce());
    if (pool != &ThreadPool::global())
      delete pool;
  }
}

void testWorkersParticipate() {
  // Chunks that block long enough for sleeping workers to wake and join.
  ThreadPool pool(3);
  std::mutex mutex;
  std::vector<std::thread::id> ids;
  pool.parallelFor(48, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    std::lock_guard<std::mutex> lock(mutex);
    if (std::find(ids.begin(), ids.end(), std::this_thread::get_id()) ==
        ids.end())
      ids.push_back(std::this_thread::get_id());
  });
  CHECK(ids.size() == 3);
}

void noopEntry(void **, const int64_t *, int64_t, int64_t, ErrorRecord *) {}

/// Values of very different magnitudes, so that the order of the adds shows.
float orderedValue(int64_t i) {
  return float((i * 2654435761u) % 1000003) * ((i % 3 == 0) ? 1e-3f : 1e4f);
}

// Kernel ABI: args[0] float[13], args[1] double[5]; thread i adds into both
// through the runtime functions compiled kernels call.
void orderedEntry(void **args, const int64_t *, int64_t begin, int64_t end,
                  ErrorRecord *record) {
  auto *sums = static_cast<float *>(args[0]);
  auto *wide = static_cast<double *>(args[1]);
  for (int64_t i = begin; i < end; ++i) {
    adjit_rt_atomic_add_f32(record, &sums[i % 13], orderedValue(i));
    adjit_rt_atomic_add_f64(record, &wide[(i * 7) % 5],
                            double(orderedValue(i)) / 3);
  }
}

/// An ordered launch leaves exactly the sums of adding in thread order, for
/// launches inline, in one window and in several.
void testOrderedAtomics() {
  for (int64_t total : {int64_t(1), int64_t(1000), int64_t(5000),
                        int64_t(300001), int64_t(3000000)}) {
    float expected[13] = {};
    double expectedWide[5] = {};
    for (int64_t i = 0; i < total; ++i) {
      expected[i % 13] += orderedValue(i);
      expectedWide[(i * 7) % 5] += double(orderedValue(i)) / 3;
    }
    for (AtomicOrder order : {AtomicOrder::Ordered, AtomicOrder::Serial}) {
      float sums[13] = {};
      double wide[5] = {};
      void *args[] = {sums, wide};
      int64_t shape[4] = {total, 1, 1, 1};
      ErrorRecord record{};
      launchCpu(orderedEntry, args, shape, total, &record, order);
      CHECK(std::memcmp(sums, expected, sizeof(sums)) == 0);
      CHECK(std::memcmp(wide, expectedWide, sizeof(wide)) == 0);
    }
  }
}

template <typename Fn> double medianMicros(int runs, int batch, Fn fn) {
  std::vector<double> samples;
  samples.reserve(runs);
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i)
      fn();
    auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(stop - start)
                          .count() /
                      batch);
  }
  std::nth_element(samples.begin(), samples.begin() + runs / 2, samples.end());
  return samples[runs / 2];
}

void reportOverhead() {
  void *args[] = {nullptr};
  ErrorRecord record{};
  // Warm up: creates the pool.
  for (int64_t total : {int64_t(1), int64_t(1000000)}) {
    int64_t shape[4] = {total, 1, 1, 1};
    for (int i = 0; i < 100; ++i)
      launchCpu(noopEntry, args, shape, total, &record);
  }
  int64_t shape1[4] = {1, 1, 1, 1};
  int64_t shapeM[4] = {1000000, 1, 1, 1};
  // total=1 runs inline and is far below clock resolution: batch 100 calls.
  double small = medianMicros(
      1000, 100, [&] { launchCpu(noopEntry, args, shape1, 1, &record); });
  double large = medianMicros(
      1000, 1, [&] { launchCpu(noopEntry, args, shapeM, 1000000, &record); });
  std::printf("threads: %d\n", ThreadPool::global().numThreads());
  std::printf("empty launch overhead, total=1:   %.4f us (median of 1000)\n",
              small);
  std::printf("empty launch overhead, total=1e6: %.3f us (median of 1000)\n",
              large);

  // Same, after the workers have gone to sleep (worst-case wakeup latency).
  std::vector<double> cold;
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cold.push_back(medianMicros(
        1, 1, [&] { launchCpu(noopEntry, args, shapeM, 1000000, &record); }));
  }
  std::nth_element(cold.begin(), cold.begin() + 25, cold.end());
  std::printf("launch overhead with sleeping workers, total=1e6: %.3f us "
              "(median of 50)\n",
              cold[25]);
}

} // namespace

int main() {
  testCoverage();
  testConcurrent();
  testNested();
  testExceptions();
  testWorkersParticipate();
  testOrderedAtomics();
  reportOverhead();
  if (Failures) {
    std::printf("runtime_test: %d FAILURE(S)\n", Failures);
    return 1;
  }
  std::printf("runtime_test: all passed\n");
  return 0;
}
