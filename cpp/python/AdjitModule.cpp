//===- AdjitModule.cpp - the adjit._adjit nanobind module -----------------===//
//
// Registration of the dialect and passes with the upstream MLIR Python
// bindings (through the C API only), and the CPU launch entry of the runtime.
//
//===----------------------------------------------------------------------===//

#include "adjit-c/Adjit.h"
#include "runtime/CpuLaunch.h"
#include "runtime/ThreadPool.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <vector>

namespace nb = nanobind;

namespace {

/// Storage for one kernel argument: a scalar or packed vector/matrix value
/// (at most 16 doubles), or a ranked memref descriptor (rank at most 6:
/// 4 array dimensions plus a matrix's 2 component dimensions).
struct alignas(16) ArgSlot {
  unsigned char bytes[128];
};

struct MemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[12];
};
static_assert(sizeof(MemRefDescriptor) <= sizeof(ArgSlot));

/// Launches a compiled CPU entry over `total` thread indices. Each element of
/// `args` is either `bytes` (a scalar, vector or matrix value, packed) or a
/// C-contiguous CPU ndarray (an array argument, components as trailing dims).
void launchCpu(uintptr_t entry, int64_t total, std::array<int64_t, 4> shape,
               nb::list args) {
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
    auto array = nb::cast<nb::ndarray<nb::c_contig, nb::device::cpu>>(arg);
    size_t rank = array.ndim();
    if (rank > 6)
      throw nb::value_error("array argument has more than 6 dimensions");
    auto *desc = reinterpret_cast<MemRefDescriptor *>(slots[i].bytes);
    desc->allocated = desc->aligned = array.data();
    desc->offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      desc->sizesAndStrides[d] = static_cast<int64_t>(array.shape(d));
      desc->sizesAndStrides[rank + d] = static_cast<int64_t>(array.stride(d));
    }
  }
  nb::gil_scoped_release release;
  adjit::runtime::launchCpu(reinterpret_cast<adjit::runtime::CpuEntry>(entry),
                            pointers.data(), shape.data(), total);
}

/// Whether any two of `args` that are arrays share bytes (the runtime's
/// half of the alias analysis: kernels are compiled assuming they don't).
bool arraysOverlap(nb::list args) {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (nb::handle arg : args) {
    if (nb::isinstance<nb::bytes>(arg))
      continue;
    auto array = nb::cast<nb::ndarray<nb::c_contig, nb::device::cpu>>(arg);
    if (array.nbytes() == 0)
      continue;
    auto begin = reinterpret_cast<uintptr_t>(array.data());
    ranges.emplace_back(begin, begin + array.nbytes());
  }
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j)
      if (ranges[i].first < ranges[j].second &&
          ranges[j].first < ranges[i].second)
        return true;
  return false;
}

/// Takes ownership of a malloc'ed C string from the C API.
std::string takeString(char *s) {
  std::string out = s ? s : "";
  std::free(s);
  return out;
}

nb::bytes compileToObject(MlirOperation module, int optLevel) {
  char *object = nullptr, *error = nullptr;
  size_t size = 0;
  if (adjitCompileToObject(module, optLevel, &object, &size, &error))
    throw std::runtime_error("adjit: CPU code generation failed: " +
                             takeString(error));
  nb::bytes result(object, size);
  std::free(object);
  return result;
}

std::vector<uint64_t> loadObject(nb::bytes object,
                                 const std::vector<std::string> &names) {
  std::vector<const char *> cnames;
  for (const std::string &name : names)
    cnames.push_back(name.c_str());
  std::vector<uint64_t> addresses(names.size());
  char *error = nullptr;
  if (adjitLoadObject(object.c_str(), object.size(), cnames.data(),
                      cnames.size(), addresses.data(), &error))
    throw std::runtime_error("adjit: cannot load kernel object: " +
                             takeString(error));
  return addresses;
}

} // namespace

NB_MODULE(_adjit, m) {
  m.doc() = "adjit native module: MLIR registration and the C++ runtime";

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) { adjitRegisterDialects(registry); },
      nb::arg("registry"),
      "Adds the adjit dialect to an mlir.ir.DialectRegistry.");
  m.def(
      "register_dialect",
      [](MlirContext context, bool load) {
        MlirDialectHandle handle = mlirGetDialectHandle__adjit__();
        mlirDialectHandleRegisterDialect(handle, context);
        if (load)
          mlirDialectHandleLoadDialect(handle, context);
      },
      nb::arg("context"), nb::arg("load") = true,
      "Registers (and loads) the adjit dialect in an existing context.");
  m.def("register_passes", &adjitRegisterPassesAndPipelines,
        "Registers the adjit passes and stage pipelines globally.");

  m.def("arrays_overlap", &arraysOverlap, nb::arg("args"),
        "Whether two array arguments (ndarrays in the list) share memory.");
  m.def("compile_to_object", &compileToObject, nb::arg("module"),
        nb::arg("opt_level") = 3,
        "Compiles an LLVM-dialect module to a host object file (bytes).");
  m.def("load_object", &loadObject, nb::arg("object"), nb::arg("names"),
        "Links an object into the process JIT; returns the symbols' addresses.");
  m.def("start_jit_warmup", &adjitStartJitWarmup,
        "Creates the process JIT on a background thread.");
  m.def(
      "wait_jit_warmup",
      [] {
        nb::gil_scoped_release release;
        adjitWaitJitWarmup();
      },
      "Joins the JIT warm-up thread.");
  m.def(
      "host_target", [] { return takeString(adjitHostTargetDescription()); },
      "triple/cpu/features of this machine (part of compile cache keys).");
  m.def("launch_cpu", &launchCpu, nb::arg("entry"), nb::arg("total"),
        nb::arg("shape"), nb::arg("args"),
        "Runs a compiled CPU kernel entry over `total` thread indices on the "
        "process-wide thread pool.");
  m.def(
      "num_threads",
      [] { return adjit::runtime::ThreadPool::global().numThreads(); },
      "Number of threads a CPU launch runs on (the caller included).");
}
