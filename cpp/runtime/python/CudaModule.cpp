//===- CudaModule.cpp - adjit._runtime.cuda: the CUDA driver layer --------===//
//
// Binds CudaDriver.h as the submodule adjit._runtime.cuda. Streams, events,
// device allocations and modules are C++ objects that free what they own
// when Python collects them (not once the interpreter is finalizing: the
// process is ending, and the driver frees everything with it). Calls that
// may wait for the device (copies, synchronizes, allocations, module loads,
// launches, the driver's first load) run without the GIL. adjit/device.py
// and adjit/runtime/cuda.py are the Python API over this.
//
//===----------------------------------------------------------------------===//

#include "CudaModule.h"
#include "CudaDriver.h"
#include "WithoutGil.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
namespace cu = adjit::runtime::cuda;

namespace {

/// Host memory a copy reads or writes: any C-contiguous CPU array.
using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

cu::StreamHandle streamOf(uintptr_t handle) {
  return reinterpret_cast<cu::StreamHandle>(handle);
}

template <typename Fn> auto unlocked(Fn &&fn) {
  return adjit::withoutGil(std::forward<Fn>(fn));
}

/// What a destructor frees: without the GIL, never throwing, and nothing
/// once the interpreter is finalizing (see above).
template <typename Fn> void freeQuietly(Fn &&fn) noexcept {
  if (adjit::interpreterFinalizing())
    return;
  try {
    adjit::withoutGil(std::forward<Fn>(fn));
  } catch (...) {
    // After a kernel fault every call fails; nothing is left to free.
  }
}

class Stream {
public:
  Stream(int ordinal, cu::StreamHandle handle, bool owner)
      : ordinal_(ordinal), handle_(handle), owner_(owner) {}
  ~Stream() {
    if (owner_)
      freeQuietly([&] { cu::destroyStream(ordinal_, handle_); });
  }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  int ordinal() const { return ordinal_; }
  cu::StreamHandle handle() const { return handle_; }
  bool owner() const { return owner_; }

private:
  int ordinal_;
  cu::StreamHandle handle_;
  bool owner_;
};

class Event {
public:
  Event(int ordinal, bool timing, bool blockingSync)
      : ordinal_(ordinal), timing_(timing) {
    handle_ = unlocked(
        [&] { return cu::createEvent(ordinal, timing, blockingSync); });
  }
  ~Event() {
    freeQuietly([&] { cu::destroyEvent(ordinal_, handle_); });
  }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  int ordinal() const { return ordinal_; }
  bool timing() const { return timing_; }
  cu::EventHandle handle() const { return handle_; }

private:
  int ordinal_;
  bool timing_;
  cu::EventHandle handle_;
};

/// Device memory owned by a Python object.
class DeviceAllocation {
public:
  DeviceAllocation(int ordinal, size_t bytes, uintptr_t stream,
                   bool streamOrdered)
      : ordinal_(ordinal), bytes_(bytes), stream_(streamOf(stream)),
        streamOrdered_(streamOrdered) {
    // (not stream-ordered after all while a capture is open: see allocate)
    ptr_ = unlocked(
        [&] { return cu::allocate(ordinal, bytes, stream_, streamOrdered_); });
  }
  /// Memory adjit did not allocate, at `ptr` (never freed by this object).
  static DeviceAllocation *borrow(int ordinal, cu::DevicePtr ptr,
                                  size_t bytes) {
    return new DeviceAllocation(ordinal, ptr, bytes);
  }
  ~DeviceAllocation() {
    if (!borrowed_)
      freeQuietly(
          [&] { cu::release(ordinal_, ptr_, stream_, streamOrdered_); });
  }
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;

  /// Frees now (later calls and the destructor do nothing).
  void free() {
    cu::DevicePtr ptr = ptr_;
    ptr_ = 0;
    bytes_ = 0;
    if (!borrowed_)
      unlocked([&] { cu::release(ordinal_, ptr, stream_, streamOrdered_); });
  }

  int ordinal() const { return ordinal_; }
  cu::DevicePtr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool streamOrdered() const { return streamOrdered_; }

  /// The range [offset, offset + bytes) of this allocation, checked.
  cu::DevicePtr at(size_t offset, size_t bytes, const char *what) const {
    if (ptr_ == 0 && bytes_ == 0 && bytes != 0)
      throw nb::value_error("the device allocation was freed");
    if (offset > bytes_ || bytes > bytes_ - offset)
      throw nb::value_error(
          (std::string(what) + ": " + std::to_string(bytes) +
           " bytes at offset " + std::to_string(offset) + " do not fit in " +
           std::to_string(bytes_) + " bytes of device memory")
              .c_str());
    return ptr_ + offset;
  }

private:
  DeviceAllocation(int ordinal, cu::DevicePtr ptr, size_t bytes)
      : ordinal_(ordinal), bytes_(bytes), stream_(nullptr),
        streamOrdered_(false), borrowed_(true), ptr_(ptr) {}

  int ordinal_;
  size_t bytes_;
  cu::StreamHandle stream_;
  bool streamOrdered_;
  bool borrowed_ = false;
  cu::DevicePtr ptr_ = 0;
};

class Module {
public:
  Module(int ordinal, nb::bytes image, std::string label)
      : ordinal_(ordinal), label_(std::move(label)) {
    const char *data = image.c_str();
    size_t size = image.size();
    handle_ = unlocked(
        [&] { return cu::loadModule(ordinal, data, size, label_); });
  }
  ~Module() {
    freeQuietly([&] { cu::unloadModule(ordinal_, handle_); });
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  int ordinal() const { return ordinal_; }
  const std::string &label() const { return label_; }
  cu::ModuleHandle handle() const { return handle_; }

private:
  int ordinal_;
  std::string label_;
  cu::ModuleHandle handle_;
};

/// A kernel of a loaded module (which it keeps alive).
class Function {
public:
  Function(const Module &module, std::string name)
      : ordinal_(module.ordinal()), name_(std::move(name)) {
    unlocked([&] {
      handle_ = cu::getFunction(ordinal_, module.handle(), name_);
      layout_ = cu::parameterLayout(ordinal_, handle_, layoutKnown_);
    });
  }

  const std::string &name() const { return name_; }
  int ordinal() const { return ordinal_; }

  std::optional<std::vector<std::pair<size_t, size_t>>> layout() const {
    if (!layoutKnown_)
      return std::nullopt;
    std::vector<std::pair<size_t, size_t>> out;
    for (const cu::ParamInfo &p : layout_)
      out.emplace_back(p.offset, p.size);
    return out;
  }

  nb::dict attributes() const {
    cu::FunctionAttributes a =
        unlocked([&] { return cu::functionAttributes(ordinal_, handle_); });
    nb::dict d;
    d["max_threads_per_block"] = a.maxThreadsPerBlock;
    d["shared_bytes"] = a.sharedBytes;
    d["const_bytes"] = a.constBytes;
    d["local_bytes"] = a.localBytes;
    d["registers"] = a.registers;
    d["ptx_version"] = a.ptxVersion;
    d["binary_version"] = a.binaryVersion;
    return d;
  }

  /// See the binding's docstring.
  void launch(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
              nb::bytes params, std::optional<std::vector<size_t>> offsets,
              uintptr_t stream, unsigned sharedBytes,
              const std::string &label) const {
    cu::LaunchConfig config;
    for (int i = 0; i < 3; ++i) {
      if (grid[i] == 0 || block[i] == 0)
        throw nb::value_error("grid and block dimensions must be positive");
      config.grid[i] = grid[i];
      config.block[i] = block[i];
    }
    config.sharedBytes = sharedBytes;
    config.stream = streamOf(stream);
    const char *data = params.c_str();
    size_t size = params.size();
    std::string what = label.empty() ? "kernel '" + name_ + "'" : label;
    if (!offsets) {
      if (layoutKnown_) {
        size_t end = layout_.empty()
                         ? 0
                         : layout_.back().offset + layout_.back().size;
        if (size != end)
          throw nb::value_error(
              (what + ": " + std::to_string(size) +
               " bytes of packed parameters for a kernel whose parameters "
               "take " + std::to_string(end))
                  .c_str());
      }
      unlocked([&] {
        cu::launchKernelPacked(ordinal_, handle_, config, data, size, what);
      });
      return;
    }
    if (layoutKnown_ && offsets->size() != layout_.size())
      throw nb::value_error((what + ": " + std::to_string(offsets->size()) +
                             " parameters for a kernel that takes " +
                             std::to_string(layout_.size()))
                                .c_str());
    std::vector<void *> pointers(offsets->size());
    for (size_t i = 0; i < offsets->size(); ++i) {
      size_t offset = (*offsets)[i];
      size_t need = layoutKnown_ ? layout_[i].size : 1;
      if (offset > size || need > size - offset)
        throw nb::value_error(
            (what + ": parameter " + std::to_string(i) + " (" +
             std::to_string(need) + " bytes at offset " +
             std::to_string(offset) + ") is past the " +
             std::to_string(size) + " bytes of parameters")
                .c_str());
      pointers[i] = const_cast<char *>(data + offset);
    }
    unlocked([&] {
      cu::launchKernel(ordinal_, handle_, config, pointers.data(), what);
    });
  }

private:
  int ordinal_;
  std::string name_;
  cu::FunctionHandle handle_ = nullptr;
  std::vector<cu::ParamInfo> layout_;
  bool layoutKnown_ = false;
};

/// A captured CUDA graph and its instantiation (made here, once), both
/// destroyed with this object.
class Graph {
public:
  Graph(int ordinal, cu::GraphHandle graph) : ordinal_(ordinal), graph_(graph) {
    try {
      unlocked([&] {
        nodes_ = cu::graphNodeCount(ordinal_, graph_);
        exec_ = cu::instantiateGraph(ordinal_, graph_);
      });
    } catch (...) {
      cu::destroyGraph(ordinal_, graph_);
      throw;
    }
  }
  ~Graph() { free(); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  /// Destroys the graph now (later calls and the destructor do nothing).
  void free() {
    cu::GraphExecHandle exec = exec_;
    cu::GraphHandle graph = graph_;
    exec_ = nullptr;
    graph_ = nullptr;
    freeQuietly([&] {
      cu::destroyGraphExec(ordinal_, exec);
      cu::destroyGraph(ordinal_, graph);
    });
  }

  void launch(uintptr_t stream, const std::string &label) const {
    if (!exec_)
      throw nb::value_error("the CUDA graph was freed");
    unlocked(
        [&] { cu::launchGraph(ordinal_, exec_, streamOf(stream), label); });
  }

  int ordinal() const { return ordinal_; }
  size_t nodes() const { return nodes_; }
  bool alive() const { return exec_ != nullptr; }

private:
  int ordinal_;
  cu::GraphHandle graph_;
  cu::GraphExecHandle exec_ = nullptr;
  size_t nodes_ = 0;
};

nb::dict deviceProperties(int ordinal) {
  cu::DeviceProperties p =
      unlocked([&] { return cu::deviceProperties(ordinal); });
  nb::dict d;
  d["ordinal"] = p.ordinal;
  d["name"] = p.name;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["total_memory"] = p.totalMemory;
  d["sm_count"] = p.multiprocessors;
  d["max_threads_per_block"] = p.maxThreadsPerBlock;
  d["warp_size"] = p.warpSize;
  d["max_shared_memory_per_block"] = p.maxSharedMemoryPerBlockOptin;
  d["is_uva"] = p.unifiedAddressing;
  d["is_mempool_supported"] = p.memoryPools;
  d["pci_bus_id"] = p.pciBusId;
  return d;
}

} // namespace

namespace adjit {

void defCuda(nb::module_ &parent) {
  nb::module_ m = parent.def_submodule(
      "cuda", "The CUDA driver layer (libcuda.so.1, loaded at first use)");
  nb::exception<cu::CudaError>(m, "CudaError", PyExc_RuntimeError);
  nb::exception<cu::CudaUnavailable>(m, "CudaUnavailableError",
                                     PyExc_RuntimeError);

  m.def(
      "unavailable_reason",
      [] { return unlocked([] { return cu::unavailableReason(); }); },
      "'' where CUDA is usable, else why not. Loads the driver the first "
      "time.");
  m.def(
      "device_count", [] { return unlocked([] { return cu::deviceCount(); }); },
      "Number of CUDA devices (0 where CUDA is unavailable).");
  m.def("driver_version", &cu::driverVersion,
        "cuDriverGetVersion (13000 for CUDA 13.0); 0 without a driver.");
  m.def("driver_library", &cu::driverLibraryName,
        "The library the driver is loaded from ($ADJIT_CUDA_DRIVER, else "
        "libcuda.so.1).");
  m.def("device_properties", &deviceProperties, nb::arg("ordinal"),
        "A dict: name, major, minor, total_memory, sm_count, ...");
  m.def(
      "memory_info",
      [](int ordinal) {
        return unlocked([&] { return cu::memoryInfo(ordinal); });
      },
      nb::arg("ordinal"), "(free, total) bytes of device memory.");
  m.def(
      "make_current",
      [](int ordinal) { unlocked([&] { cu::makeCurrent(ordinal); }); },
      nb::arg("ordinal"),
      "Makes the device's primary context current on this thread.");
  m.def("has_context", &cu::hasContext, nb::arg("ordinal"),
        "Whether the device's primary context was retained.");
  m.def(
      "synchronize_device",
      [](int ordinal) { unlocked([&] { cu::synchronizeDevice(ordinal); }); },
      nb::arg("ordinal"), "Waits for all work on the device.");
  m.def(
      "synchronize", [] { unlocked([] { cu::synchronizeAll(); }); },
      "Waits for all work on every device in use.");
  m.def(
      "set_limit",
      [](int ordinal, int limit, size_t value) {
        unlocked([&] { cu::setLimit(ordinal, limit, value); });
      },
      nb::arg("ordinal"), nb::arg("limit"), nb::arg("value"),
      "cuCtxSetLimit (LIMIT_STACK_SIZE: bytes of stack per thread).");
  m.def(
      "get_limit",
      [](int ordinal, int limit) {
        return unlocked([&] { return cu::getLimit(ordinal, limit); });
      },
      nb::arg("ordinal"), nb::arg("limit"), "cuCtxGetLimit.");
  m.attr("LIMIT_STACK_SIZE") = 0;
  m.attr("LIMIT_PRINTF_FIFO_SIZE") = 1;
  m.attr("LIMIT_MALLOC_HEAP_SIZE") = 2;
  m.def(
      "dlpack_view",
      [](uintptr_t ptr, const std::vector<size_t> &shape,
         const std::vector<int64_t> &strides, uint8_t code, uint8_t bits,
         int ordinal, nb::handle owner) {
        if (strides.size() != shape.size())
          throw nb::value_error("dlpack_view: one stride per dimension");
        nb::dlpack::dtype dtype{code, bits, 1};
        return nb::ndarray<>(reinterpret_cast<void *>(ptr), shape.size(),
                             shape.data(), owner, strides.data(), dtype,
                             nb::device::cuda::value, ordinal);
      },
      nb::arg("ptr"), nb::arg("shape"), nb::arg("strides"), nb::arg("code"),
      nb::arg("bits"), nb::arg("ordinal"), nb::arg("owner"),
      "A DLPack capsule of device memory at `ptr` (strides in elements; "
      "dtype as DLPack's code and bits), keeping `owner` alive.");
  m.def("last_launch", &cu::lastLaunch, nb::arg("ordinal"),
        "The label of the last kernel launched on the device ('' if none).");

  // Copies between raw addresses (device arrays at an offset); the
  // DeviceAllocation methods check their bounds, these do not.
  m.def(
      "memcpy_htod",
      [](int ordinal, uint64_t dst, HostArray src, uintptr_t stream,
         bool async) {
        const void *data = src.data();
        size_t bytes = src.nbytes();
        unlocked([&] {
          cu::copyToDevice(ordinal, dst, data, bytes, streamOf(stream), async);
        });
      },
      nb::arg("ordinal"), nb::arg("dst"), nb::arg("src"), nb::arg("stream") = 0,
      nb::arg("async_") = false, "Copies a host array to device address dst.");
  m.def(
      "memcpy_dtoh",
      [](int ordinal, HostArray dst, uint64_t src, uintptr_t stream,
         bool async) {
        void *data = dst.data();
        size_t bytes = dst.nbytes();
        unlocked([&] {
          cu::copyToHost(ordinal, data, src, bytes, streamOf(stream), async);
        });
      },
      nb::arg("ordinal"), nb::arg("dst"), nb::arg("src"), nb::arg("stream") = 0,
      nb::arg("async_") = false,
      "Copies dst.nbytes from device address src into the host array dst.");
  m.def(
      "memcpy_dtod",
      [](int ordinal, uint64_t dst, uint64_t src, size_t bytes,
         uintptr_t stream, bool async) {
        unlocked([&] {
          cu::copyOnDevice(ordinal, dst, src, bytes, streamOf(stream), async);
        });
      },
      nb::arg("ordinal"), nb::arg("dst"), nb::arg("src"), nb::arg("nbytes"),
      nb::arg("stream") = 0, nb::arg("async_") = false,
      "Copies nbytes between device addresses.");
  m.def(
      "memset",
      [](int ordinal, uint64_t dst, unsigned char value, size_t bytes,
         uintptr_t stream, bool async) {
        unlocked([&] {
          cu::memsetBytes(ordinal, dst, value, bytes, streamOf(stream), async);
        });
      },
      nb::arg("ordinal"), nb::arg("dst"), nb::arg("value"), nb::arg("nbytes"),
      nb::arg("stream") = 0, nb::arg("async_") = false,
      "Sets nbytes at device address dst to the byte value.");

  nb::class_<Stream>(m, "Stream", "A CUDA stream")
      .def(
          "__init__",
          [](Stream *self, int ordinal, int priority) {
            cu::StreamHandle handle = unlocked(
                [&] { return cu::createStream(ordinal, priority); });
            new (self) Stream(ordinal, handle, true);
          },
          nb::arg("ordinal"), nb::arg("priority") = 0,
          "A new stream on the device (priority -1: high, 0: default).")
      .def_static(
          "wrap",
          [](int ordinal, uintptr_t handle) {
            return new Stream(ordinal, streamOf(handle), false);
          },
          nb::arg("ordinal"), nb::arg("handle"), nb::rv_policy::take_ownership,
          "A stream created elsewhere (not destroyed by this object).")
      .def_static(
          "default",
          [](int ordinal) {
            cu::StreamHandle handle =
                unlocked([&] { return cu::defaultStream(ordinal); });
            return new Stream(ordinal, handle, false);
          },
          nb::arg("ordinal"), nb::rv_policy::take_ownership,
          "The device's default stream (created with its context).")
      .def_prop_ro("ordinal", &Stream::ordinal)
      .def_prop_ro("owner", &Stream::owner)
      .def_prop_ro("handle",
                   [](const Stream &s) {
                     return reinterpret_cast<uintptr_t>(s.handle());
                   })
      .def("synchronize",
           [](const Stream &s) {
             unlocked([&] { cu::synchronizeStream(s.ordinal(), s.handle()); });
           })
      .def_prop_ro("is_complete",
                   [](const Stream &s) {
                     return unlocked([&] {
                       return cu::streamIsComplete(s.ordinal(), s.handle());
                     });
                   })
      .def_prop_ro("priority",
                   [](const Stream &s) {
                     return cu::streamPriority(s.ordinal(), s.handle());
                   })
      .def(
          "wait_event",
          [](const Stream &s, const Event &e) {
            unlocked([&] {
              cu::streamWaitEvent(s.ordinal(), s.handle(), e.handle());
            });
          },
          nb::arg("event"),
          "Work queued on this stream from now on waits for the event.")
      .def(
          "record_event",
          [](const Stream &s, const Event &e) {
            unlocked(
                [&] { cu::recordEvent(s.ordinal(), e.handle(), s.handle()); });
          },
          nb::arg("event"), "Records the event on this stream.");

  nb::class_<Event>(m, "Event", "A CUDA event")
      .def(nb::init<int, bool, bool>(), nb::arg("ordinal"),
           nb::arg("timing") = false, nb::arg("blocking_sync") = false)
      .def_prop_ro("ordinal", &Event::ordinal)
      .def_prop_ro("timing", &Event::timing)
      .def_prop_ro("handle",
                   [](const Event &e) {
                     return reinterpret_cast<uintptr_t>(e.handle());
                   })
      .def("synchronize",
           [](const Event &e) {
             unlocked([&] { cu::synchronizeEvent(e.ordinal(), e.handle()); });
           })
      .def_prop_ro("is_complete",
                   [](const Event &e) {
                     return unlocked([&] {
                       return cu::eventIsComplete(e.ordinal(), e.handle());
                     });
                   })
      .def(
          "elapsed_ms",
          [](const Event &start, const Event &end) {
            return unlocked([&] {
              return cu::elapsedMs(start.ordinal(), start.handle(),
                                   end.handle());
            });
          },
          nb::arg("end"),
          "Milliseconds from this event to `end` (both recorded, with "
          "timing).");

  nb::class_<DeviceAllocation>(m, "DeviceAllocation",
                               "Device memory, freed with this object")
      .def(nb::init<int, size_t, uintptr_t, bool>(), nb::arg("ordinal"),
           nb::arg("nbytes"), nb::arg("stream") = 0,
           nb::arg("stream_ordered") = false)
      .def_static("borrow", &DeviceAllocation::borrow, nb::arg("ordinal"),
                  nb::arg("ptr"), nb::arg("nbytes"),
                  nb::rv_policy::take_ownership,
                  "Device memory adjit did not allocate (never freed by "
                  "the object).")
      .def_prop_ro("ordinal", &DeviceAllocation::ordinal)
      .def_prop_ro("ptr", &DeviceAllocation::ptr)
      .def_prop_ro("nbytes", &DeviceAllocation::bytes)
      .def_prop_ro("stream_ordered", &DeviceAllocation::streamOrdered)
      .def("free", &DeviceAllocation::free, "Frees the memory now.")
      .def(
          "copy_from_host",
          [](const DeviceAllocation &a, HostArray src, size_t offset,
             uintptr_t stream, bool async) {
            cu::DevicePtr dst = a.at(offset, src.nbytes(), "copy_from_host");
            const void *data = src.data();
            size_t bytes = src.nbytes();
            unlocked([&] {
              cu::copyToDevice(a.ordinal(), dst, data, bytes, streamOf(stream),
                               async);
            });
          },
          nb::arg("src"), nb::arg("offset") = 0, nb::arg("stream") = 0,
          nb::arg("async_") = false,
          "Copies a C-contiguous host array in at byte `offset`.")
      .def(
          "copy_to_host",
          [](const DeviceAllocation &a, HostArray dst, size_t offset,
             uintptr_t stream, bool async) {
            cu::DevicePtr src = a.at(offset, dst.nbytes(), "copy_to_host");
            void *data = dst.data();
            size_t bytes = dst.nbytes();
            unlocked([&] {
              cu::copyToHost(a.ordinal(), data, src, bytes, streamOf(stream),
                             async);
            });
          },
          nb::arg("dst"), nb::arg("offset") = 0, nb::arg("stream") = 0,
          nb::arg("async_") = false,
          "Copies dst.nbytes from byte `offset` into a C-contiguous host "
          "array.")
      .def(
          "copy_from",
          [](const DeviceAllocation &a, const DeviceAllocation &src,
             size_t nbytes, size_t dstOffset, size_t srcOffset,
             uintptr_t stream, bool async) {
            cu::DevicePtr to = a.at(dstOffset, nbytes, "copy_from");
            cu::DevicePtr from = src.at(srcOffset, nbytes, "copy_from");
            unlocked([&] {
              cu::copyOnDevice(a.ordinal(), to, from, nbytes, streamOf(stream),
                               async);
            });
          },
          nb::arg("src"), nb::arg("nbytes"), nb::arg("dst_offset") = 0,
          nb::arg("src_offset") = 0, nb::arg("stream") = 0,
          nb::arg("async_") = false,
          "Copies nbytes from another device allocation.")
      .def(
          "fill",
          [](const DeviceAllocation &a, unsigned char value, uintptr_t stream,
             bool async, size_t offset, std::optional<size_t> nbytes) {
            size_t bytes = nbytes ? *nbytes : a.bytes() - offset;
            cu::DevicePtr dst = a.at(offset, bytes, "fill");
            unlocked([&] {
              cu::memsetBytes(a.ordinal(), dst, value, bytes,
                              streamOf(stream), async);
            });
          },
          nb::arg("value"), nb::arg("stream") = 0, nb::arg("async_") = false,
          nb::arg("offset") = 0, nb::arg("nbytes") = nb::none(),
          "Sets `nbytes` bytes from byte `offset` (all of them by default) "
          "to `value`.");

  m.def(
      "graphs_supported",
      [] { return unlocked([] { return cu::graphsSupported(); }); },
      "Whether the driver has the stream capture and graph entry points.");
  m.def(
      "begin_capture",
      [](int ordinal, uintptr_t stream, int mode) {
        unlocked([&] { cu::beginCapture(ordinal, streamOf(stream), mode); });
      },
      nb::arg("ordinal"), nb::arg("stream"), nb::arg("mode") = 1,
      "cuStreamBeginCapture_v2: work queued on `stream` from now on is "
      "recorded, not run (mode 0 global, 1 thread-local, 2 relaxed).");
  m.def(
      "end_capture",
      [](int ordinal, uintptr_t stream) {
        cu::GraphHandle graph =
            unlocked([&] { return cu::endCapture(ordinal, streamOf(stream)); });
        return new Graph(ordinal, graph);
      },
      nb::arg("ordinal"), nb::arg("stream"), nb::rv_policy::take_ownership,
      "cuStreamEndCapture, then cuGraphInstantiateWithFlags: the Graph.");
  m.def(
      "capture_status",
      [](int ordinal, uintptr_t stream) {
        return unlocked(
            [&] { return cu::captureStatus(ordinal, streamOf(stream)); });
      },
      nb::arg("ordinal"), nb::arg("stream"),
      "cuStreamIsCapturing: 0 not capturing, 1 capturing, 2 invalidated.");
  m.def("capture_open", &cu::captureOpen, nb::arg("ordinal"),
        "Whether a capture begun by begin_capture is open on the device.");
  m.def(
      "stage_to_device",
      [](int ordinal, uint64_t dst, HostArray src) {
        const void *data = src.data();
        size_t bytes = src.nbytes();
        unlocked([&] { cu::stageToDevice(ordinal, dst, data, bytes); });
      },
      nb::arg("ordinal"), nb::arg("dst"), nb::arg("src"),
      "Copies a host array to device address dst now, on a private stream "
      "(allowed while another stream of the device is being captured).");

  nb::class_<Graph>(m, "Graph", "An instantiated CUDA graph, freed with "
                                "this object")
      .def_prop_ro("ordinal", &Graph::ordinal)
      .def_prop_ro("node_count", &Graph::nodes)
      .def_prop_ro("alive", &Graph::alive)
      .def("launch", &Graph::launch, nb::arg("stream"), nb::arg("label") = "",
           "cuGraphLaunch on `stream`; `label` names the graph in errors.")
      .def("free", &Graph::free, "Destroys the graph now.");

  nb::class_<Module>(m, "Module", "A loaded CUDA module (PTX or cubin)")
      .def(nb::init<int, nb::bytes, std::string>(), nb::arg("ordinal"),
           nb::arg("image"), nb::arg("label") = "",
           "Loads PTX text or a cubin image; CudaError with the JIT's log if "
           "it does not load.")
      .def_prop_ro("ordinal", &Module::ordinal)
      .def_prop_ro("label", &Module::label)
      .def(
          "function",
          [](const Module &mod, const std::string &name) {
            return new Function(mod, name);
          },
          nb::arg("name"), nb::rv_policy::take_ownership,
          nb::keep_alive<0, 1>(),
          "The kernel `name` (ValueError if the module has none).");

  nb::class_<Function>(m, "Function", "A kernel of a loaded module")
      .def_prop_ro("name", &Function::name)
      .def_prop_ro("ordinal", &Function::ordinal)
      .def_prop_ro("attributes", &Function::attributes)
      .def_prop_ro("parameter_layout", &Function::layout,
                   "[(offset, size)] of each parameter, or None where the "
                   "driver cannot say (before CUDA 12.4).")
      .def("launch", &Function::launch, nb::arg("grid"), nb::arg("block"),
           nb::arg("params"), nb::arg("offsets").none() = nb::none(),
           nb::arg("stream") = 0, nb::arg("shared_bytes") = 0,
           nb::arg("label") = "",
           "Launches on `stream` (a handle; 0: the legacy default stream). "
           "`params`: the packed parameter bytes; with `offsets`, parameter "
           "i is at byte offsets[i] (cuLaunchKernel's kernelParams), else "
           "`params` is laid out as the kernel's parameters are "
           "(CU_LAUNCH_PARAM_BUFFER_POINTER). Checked against the driver's "
           "parameter layout where it has one. `label` names the kernel in "
           "errors, now and in a later asynchronous fault's.");
}

} // namespace adjit
