//===- RuntimeModule.cpp - the adjit._runtime nanobind module -------------===//
//
// What running compiled kernels needs, and nothing of the compiler: loading
// kernel objects, packing arguments, launching on the thread pool, and the
// host identity compiled code is keyed by. Links no MLIR or LLVM library.
//
//===----------------------------------------------------------------------===//

#include "CpuLaunch.h"
#include "CudaModule.h"
#include "ErrorRecord.h"
#include "HostInfo.h"
#include "KernelArgs.h"
#include "LaunchPlan.h"
#include "ObjectLoader.h"
#include "ThreadPool.h"
#include "WithoutGil.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace nb = nanobind;
using namespace adjit::runtime;

namespace {

/// Any host ndarray, strided views included: never converted (a copy would
/// take the kernel's writes); the launch passes each dimension's stride.
using CpuArray = nb::ndarray<nb::device::cpu>;

/// Launches a compiled CPU entry over `total` thread indices. Each element of
/// `args` is either `bytes` (a scalar, vector or matrix value, packed) or a
/// C-contiguous CPU ndarray (an array argument, components as trailing dims).
/// Runs a launch; returns None, LAUNCH_UNPROVEN (nothing ran: relaunch the
/// all-checked variant), or the first failed check as (site, thread,
/// indices, sizes) (see ErrorRecord).
nb::object launchCpuEntry(uintptr_t entry, int64_t total,
                          std::array<int64_t, 4> shape, nb::list args,
                          std::vector<int64_t> ranges, int atomicOrder) {
  if (atomicOrder < 0 || atomicOrder > int(AtomicOrder::Serial))
    throw nb::value_error("atomic_order is one of ATOMIC_ORDERS' values");
  if (ranges.size() > 2 * kMaxRangedArrays)
    throw nb::value_error("at most 4 index ranges per launch");
  std::vector<ArgSlot> slots(nb::len(args));
  std::vector<void *> pointers(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    nb::handle arg = args[i];
    pointers[i] = slots[i].bytes;
    if (nb::isinstance<nb::bytes>(arg)) {
      nb::bytes value = nb::borrow<nb::bytes>(arg);
      if (value.size() > sizeof(ArgSlot))
        throw nb::value_error("scalar kernel argument is too large");
      std::memcpy(slots[i].bytes, value.c_str(), value.size());
      continue;
    }
    auto array = nb::cast<CpuArray>(arg);
    size_t rank = array.ndim();
    if (rank > kMaxArrayRank)
      throw nb::value_error("array argument has more than 6 dimensions");
    auto *desc = reinterpret_cast<MemRefDescriptor *>(slots[i].bytes);
    desc->allocated = desc->aligned = array.data();
    desc->offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      desc->sizesAndStrides[d] = static_cast<int64_t>(array.shape(d));
      desc->sizesAndStrides[rank + d] = static_cast<int64_t>(array.stride(d));
    }
  }
  ErrorRecord record{};
  std::copy(ranges.begin(), ranges.end(), record.ranges);
  adjit::withoutGil([&] {
    launchCpu(reinterpret_cast<CpuEntry>(entry), pointers.data(), shape.data(),
              total, &record, AtomicOrder(atomicOrder));
    // What kernels printed (C's stdio) comes out before Python's next output.
    std::fflush(stdout);
  });
  if (record.site == 0)
    return nb::none();
  if (record.site == kLaunchUnproven)
    return nb::int_(kLaunchUnproven);
  static_assert(AdjitRecordMaxRank == 4, "the tuples below have 4 words");
  auto words = [](const int64_t(&w)[AdjitRecordMaxRank]) {
    return nb::make_tuple(w[0], w[1], w[2], w[3]);
  };
  return nb::make_tuple(record.site - 1, record.thread, words(record.index),
                        words(record.size));
}

/// Whether any two of `args` that are arrays share bytes (the runtime's
/// half of the alias analysis: kernels are compiled assuming they don't).
bool arraysOverlap(nb::list args) {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (nb::handle arg : args) {
    if (nb::isinstance<nb::bytes>(arg))
      continue;
    auto array = nb::cast<CpuArray>(arg);
    if (array.nbytes() == 0)
      continue;
    // The bytes from the first element to the end of the last (a strided
    // view spans more than its size; strides are not negative: the launch
    // checks).
    size_t span = array.itemsize();
    for (size_t d = 0; d < array.ndim(); ++d)
      span += size_t(array.shape(d) - 1) * size_t(array.stride(d)) * array.itemsize();
    auto begin = reinterpret_cast<uintptr_t>(array.data());
    ranges.emplace_back(begin, begin + span);
  }
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j)
      if (ranges[i].first < ranges[j].second &&
          ranges[j].first < ranges[i].second)
        return true;
  return false;
}

std::vector<uint64_t> loadKernelObject(nb::bytes object,
                                       const std::vector<std::string> &names) {
  std::vector<uint64_t> addresses;
  std::string error;
  bool loaded = adjit::withoutGil([&] {
    return loadObject(object.c_str(), object.size(), names, addresses, error);
  });
  if (!loaded)
    throw std::runtime_error("cannot load kernel object: " + error);
  return addresses;
}

/// A kernel object loaded into the process, unmapped when this is freed.
class ObjectImage {
public:
  ObjectImage(nb::bytes object, const std::vector<std::string> &names) {
    std::string error;
    bool loaded = adjit::withoutGil([&] {
      return loadObject(object.c_str(), object.size(), names, addresses_,
                        error, &block_);
    });
    if (!loaded)
      throw std::runtime_error("cannot load kernel object: " + error);
  }
  ~ObjectImage() { unloadObject(block_); }
  ObjectImage(const ObjectImage &) = delete;
  ObjectImage &operator=(const ObjectImage &) = delete;

  const std::vector<uint64_t> &addresses() const { return addresses_; }
  size_t size() const { return block_.size; }

private:
  std::vector<uint64_t> addresses_;
  LoadedBlock block_;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "adjit's C++ runtime: loads compiled kernels and launches them "
            "(no MLIR or LLVM)";
  // Kernels held by module globals keep their loaded code (ObjectImage) and
  // launch plans until Python's last garbage collection, which can come after
  // nanobind's count of live instances at exit: its "leaked" report there
  // would be noise. (Kernel memory is checked by tests/python/runtime/test_lifetime.py.)
  nb::set_leak_warnings(false);
  // The exit handshake of withoutGil (runtime/python/WithoutGil.h), called
  // by adjit/_interrupts.py's atexit handler.
  m.def("_prepare_for_exit", &adjit::prepareForExit);
  m.def("load_object", &loadKernelObject, nb::arg("object"), nb::arg("names"),
        "Loads a relocatable kernel object into the process (for its "
        "lifetime); returns the addresses of `names`. Raises RuntimeError.");
  nb::class_<ObjectImage>(
      m, "ObjectImage", nb::is_weak_referenceable(),
      "A kernel object loaded into the process; its memory is unmapped when "
      "this object is freed (no code of it may run then)")
      .def(nb::init<nb::bytes, const std::vector<std::string> &>(),
           nb::arg("object"), nb::arg("names"),
           "Loads the object; raises RuntimeError.")
      .def_prop_ro("addresses", &ObjectImage::addresses,
                   "The addresses of the names asked for, in order.")
      .def_prop_ro("size", &ObjectImage::size, "Bytes mapped.");
  m.def("launch_cpu", &launchCpuEntry, nb::arg("entry"), nb::arg("total"),
        nb::arg("shape"), nb::arg("args"),
        nb::arg("ranges") = std::vector<int64_t>{}, nb::arg("atomic_order") = 0,
        "Runs a compiled CPU kernel entry over `total` thread indices on the "
        "process-wide thread pool, its float atomic adds ordered as "
        "`atomic_order` (a value of ATOMIC_ORDERS) says. Returns None; LAUNCH_UNPROVEN if the "
        "kernel's launch condition does not hold (nothing ran: launch its "
        "all-checked variant); or the launch's first failed check as (site, "
        "thread, indices, sizes).");
  m.attr("LAUNCH_UNPROVEN") = kLaunchUnproven;
  m.attr("HEAP_EXHAUSTED") = int64_t(AdjitHeapExhausted);
  m.attr("ERROR_RECORD") = std::map<std::string, int>{
      {"site", AdjitRecordSite},
      {"thread", AdjitRecordThread},
      {"index", AdjitRecordIndex},
      {"size", AdjitRecordSize},
      {"ranges", AdjitRecordRanges},
      {"add_log", AdjitRecordAddLog},
      {"words", AdjitRecordWords},
      {"max_rank", AdjitRecordMaxRank},
      {"max_ranged", AdjitRecordMaxRanged}};
  m.attr("ATOMIC_ORDERS") = std::map<std::string, int>{
      {"parallel", int(AtomicOrder::Parallel)},
      {"ordered", int(AtomicOrder::Ordered)},
      {"serial", int(AtomicOrder::Serial)}};
  m.def(
      "runtime_symbols",
      [] {
        std::map<std::string, uintptr_t> symbols;
        for (const char *name : runtimeSymbolNames())
          symbols[name] = reinterpret_cast<uintptr_t>(runtimeSymbol(name));
        return symbols;
      },
      "The runtime functions compiled kernels call: name -> address (for "
      "loaders other than load_object).");
  m.def("arrays_overlap", &arraysOverlap, nb::arg("args"),
        "Whether two array arguments (ndarrays in the list) share memory.");
  m.def(
      "num_threads", [] { return ThreadPool::global().numThreads(); },
      "Number of threads a CPU launch runs on (the caller included).");
  m.def(
      "object_loader_supported",
      [] {
#if defined(__x86_64__)
        return true;
#else
        return false;
#endif
      },
      "Whether load_object supports this host's objects (x86-64).");
  m.def("host_id", &hostId,
        "This CPU's identity: compiled CPU code is reused only where it is "
        "the same.");
  adjit::defLaunchPlan(m);
  adjit::defCuda(m);
}
