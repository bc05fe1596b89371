//===- CudaDriver.cpp - the CUDA driver, loaded at run time ---------------===//
//
// The driver's types, constants and entry points are declared below, with
// the values the CUDA driver API documents (cuda.h is not included: adjit
// builds without CUDA). Entry points are looked up by the names the driver
// exports for the current ABI (the `_v2` ones where the API was revised).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <pthread.h>

namespace adjit {
namespace runtime {
namespace cuda {
namespace {

//===-- what the driver API declares ----------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct OpaqueContext;
using CUcontext = OpaqueContext *;
using CUmodule = ModuleHandle;
using CUfunction = FunctionHandle;
using CUstream = StreamHandle;
using CUevent = EventHandle;
using CUgraph = GraphHandle;
using CUgraphExec = GraphExecHandle;
struct OpaqueGraphNode;
using CUgraphNode = OpaqueGraphNode *;

constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorInvalidValue = 1;
constexpr CUresult kErrorNotFound = 500;
constexpr CUresult kErrorNotReady = 600;

/// Errors after which the context cannot be used again: a kernel faulted
/// (reported by whichever call comes next) and every later call fails the
/// same way.
bool isSticky(CUresult r) {
  switch (r) {
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 702: // CUDA_ERROR_LAUNCH_TIMEOUT
  case 710: // CUDA_ERROR_ASSERT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
    return true;
  default:
    return false;
  }
}

// CUdevice_attribute
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrPciBusId = 33;
constexpr int kAttrPciDeviceId = 34;
constexpr int kAttrUnifiedAddressing = 41;
constexpr int kAttrPciDomainId = 50;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kAttrMemoryPoolsSupported = 115;

// CUfunction_attribute
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncConstSizeBytes = 2;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;
constexpr int kFuncPtxVersion = 5;
constexpr int kFuncBinaryVersion = 6;

// CUjit_option
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

// cuLaunchKernel's `extra` keys
void *const kLaunchParamEnd = nullptr;
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(uintptr_t(1));
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(uintptr_t(2));

// CUstream_flags
constexpr unsigned kStreamNonBlocking = 0x1;

// CUstreamCaptureMode
constexpr int kCaptureModeRelaxed = 2;

// CUevent_flags
constexpr unsigned kEventBlockingSync = 0x1;
constexpr unsigned kEventDisableTiming = 0x2;

// The entry points: (member, exported symbol, signature). Required ones
// first: without any of them the driver counts as unavailable.
#define ADJIT_CUDA_REQUIRED(X)                                                 \
  X(cuInit, "cuInit", CUresult(unsigned))                                  \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult(int *))             \
  X(cuGetErrorName, "cuGetErrorName", CUresult(CUresult, const char **))   \
  X(cuGetErrorString, "cuGetErrorString",                                      \
    CUresult(CUresult, const char **))                                     \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult(int *))                 \
  X(cuDeviceGet, "cuDeviceGet", CUresult(CUdevice *, int))                 \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult(char *, int, CUdevice))   \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute",                              \
    CUresult(int *, int, CUdevice))                                        \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult(size_t *, CUdevice)) \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                      \
    CUresult(CUcontext *, CUdevice))                                       \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult(CUcontext *))             \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult(CUcontext))               \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult())                      \
  X(cuCtxSetLimit, "cuCtxSetLimit", CUresult(int, size_t))                 \
  X(cuCtxGetLimit, "cuCtxGetLimit", CUresult(size_t *, int))               \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult(size_t *, size_t *))         \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr *, size_t))          \
  X(cuMemFree, "cuMemFree_v2", CUresult(CUdeviceptr))                      \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2",                                           \
    CUresult(CUdeviceptr, const void *, size_t))                           \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2",                                           \
    CUresult(void *, CUdeviceptr, size_t))                                 \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2",                                           \
    CUresult(CUdeviceptr, CUdeviceptr, size_t))                            \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                 \
    CUresult(CUdeviceptr, const void *, size_t, CUstream))                 \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                 \
    CUresult(void *, CUdeviceptr, size_t, CUstream))                       \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                 \
    CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))                  \
  X(cuMemsetD8, "cuMemsetD8_v2",                                               \
    CUresult(CUdeviceptr, unsigned char, size_t))                          \
  X(cuMemsetD8Async, "cuMemsetD8Async",                                        \
    CUresult(CUdeviceptr, unsigned char, size_t, CUstream))                \
  X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority",                  \
    CUresult(CUstream *, unsigned, int))                                   \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult(CUstream))             \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult(CUstream))        \
  X(cuStreamQuery, "cuStreamQuery", CUresult(CUstream))                    \
  X(cuStreamGetPriority, "cuStreamGetPriority", CUresult(CUstream, int *)) \
  X(cuStreamWaitEvent, "cuStreamWaitEvent",                                    \
    CUresult(CUstream, CUevent, unsigned))                                 \
  X(cuEventCreate, "cuEventCreate", CUresult(CUevent *, unsigned))         \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult(CUevent))                \
  X(cuEventRecord, "cuEventRecord", CUresult(CUevent, CUstream))           \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult(CUevent))           \
  X(cuEventQuery, "cuEventQuery", CUresult(CUevent))                       \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                  \
    CUresult(CUmodule *, const void *, unsigned, int *, void **))          \
  X(cuModuleUnload, "cuModuleUnload", CUresult(CUmodule))                  \
  X(cuModuleGetFunction, "cuModuleGetFunction",                                \
    CUresult(CUfunction *, CUmodule, const char *))                        \
  X(cuFuncGetAttribute, "cuFuncGetAttribute",                                  \
    CUresult(int *, int, CUfunction))                                      \
  X(cuLaunchKernel, "cuLaunchKernel",                                          \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned,           \
                 unsigned, unsigned, unsigned, CUstream, void **, void **))

// Optional: used where the driver has them.
#define ADJIT_CUDA_OPTIONAL(X)                                                 \
  X(cuMemAllocAsync, "cuMemAllocAsync",                                        \
    CUresult(CUdeviceptr *, size_t, CUstream))                             \
  X(cuMemFreeAsync, "cuMemFreeAsync", CUresult(CUdeviceptr, CUstream))     \
  X(cuFuncGetParamInfo, "cuFuncGetParamInfo",                                  \
    CUresult(CUfunction, size_t, size_t *, size_t *))                      \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2",                           \
    CUresult(CUstream, int))                                               \
  X(cuStreamEndCapture, "cuStreamEndCapture",                                  \
    CUresult(CUstream, CUgraph *))                                         \
  X(cuStreamIsCapturing, "cuStreamIsCapturing", CUresult(CUstream, int *)) \
  X(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",    \
    CUresult(int *))                                                       \
  X(cuGraphGetNodes, "cuGraphGetNodes",                                        \
    CUresult(CUgraph, CUgraphNode *, size_t *))                            \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                \
    CUresult(CUgraphExec *, CUgraph, unsigned long long))                  \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult(CUgraphExec, CUstream))       \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult(CUgraphExec))       \
  X(cuGraphDestroy, "cuGraphDestroy", CUresult(CUgraph))

template <typename Signature> using Entry = Signature *;

struct Api {
#define ADJIT_CUDA_MEMBER(member, symbol, type) Entry<type> member = nullptr;
  ADJIT_CUDA_REQUIRED(ADJIT_CUDA_MEMBER)
  ADJIT_CUDA_OPTIONAL(ADJIT_CUDA_MEMBER)
#undef ADJIT_CUDA_MEMBER
  /// cuEventElapsedTime_v2 (CUDA 12.8 on) or cuEventElapsedTime: the same
  /// signature.
  Entry<CUresult(float *, CUevent, CUevent)> cuEventElapsedTime = nullptr;
};

//===-- the process's driver state ------------------------------------===//

struct DeviceState {
  std::mutex mutex; ///< guards retaining the context
  std::atomic<CUcontext> context{nullptr};
  CUstream stream = nullptr; ///< the default stream, with the context
  std::mutex launchMutex;    ///< guards lastLaunch
  std::string lastLaunch;
  /// Captures begun by beginCapture and not ended yet.
  std::atomic<int> openCaptures{0};
  std::mutex deferredMutex; ///< guards openCaptures' changes and deferred
  /// Frees asked for while a capture was open: (pointer, stream-ordered).
  std::vector<std::pair<CUdeviceptr, bool>> deferred;
  std::mutex stagingMutex; ///< guards stagingStream
  CUstream stagingStream = nullptr; ///< stageToDevice's, made on first use
};

struct Driver {
  Api api;
  std::string library;
  std::string unavailable; ///< "" where usable
  int count = 0;
  int version = 0;
  std::unique_ptr<DeviceState[]> devices;
};

/// Set in a child of fork(): CUDA does not survive a fork.
std::atomic<bool> forkedChild{false};

void load(Driver &d) {
  const char *override = std::getenv("ADJIT_CUDA_DRIVER");
  d.library = override && *override ? override : "libcuda.so.1";
  void *handle = dlopen(d.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    d.unavailable = "the CUDA driver could not be loaded: " +
                    std::string(why ? why : d.library + ": dlopen failed");
    return;
  }
  // The library stays loaded for the process's lifetime.
  std::string missing;
#define ADJIT_CUDA_LOOKUP(member, symbol, type)                                \
  d.api.member = reinterpret_cast<Entry<type>>(dlsym(handle, symbol));         \
  if (!d.api.member && missing.empty())                                        \
    missing = symbol;
  ADJIT_CUDA_REQUIRED(ADJIT_CUDA_LOOKUP)
#undef ADJIT_CUDA_LOOKUP
#define ADJIT_CUDA_LOOKUP_OPTIONAL(member, symbol, type)                       \
  d.api.member = reinterpret_cast<Entry<type>>(dlsym(handle, symbol));
  ADJIT_CUDA_OPTIONAL(ADJIT_CUDA_LOOKUP_OPTIONAL)
#undef ADJIT_CUDA_LOOKUP_OPTIONAL
  using ElapsedFn = Entry<CUresult(float *, CUevent, CUevent)>;
  d.api.cuEventElapsedTime =
      reinterpret_cast<ElapsedFn>(dlsym(handle, "cuEventElapsedTime_v2"));
  if (!d.api.cuEventElapsedTime)
    d.api.cuEventElapsedTime =
        reinterpret_cast<ElapsedFn>(dlsym(handle, "cuEventElapsedTime"));
  if (!d.api.cuEventElapsedTime && missing.empty())
    missing = "cuEventElapsedTime";
  if (!missing.empty()) {
    d.unavailable = d.library + " has no entry point " + missing +
                    ": not a CUDA driver, or one older than adjit needs";
    return;
  }
  CUresult r = d.api.cuInit(0);
  if (r != kSuccess) {
    const char *name = nullptr, *text = nullptr;
    d.api.cuGetErrorName(r, &name);
    d.api.cuGetErrorString(r, &text);
    d.unavailable = "cuInit failed: " + std::string(name ? name : "?") + " (" +
                    std::to_string(r) + "): " + (text ? text : "?");
    return;
  }
  d.api.cuDriverGetVersion(&d.version);
  if (d.api.cuDeviceGetCount(&d.count) != kSuccess || d.count <= 0) {
    d.count = 0;
    d.unavailable = "the CUDA driver found no device";
    return;
  }
  d.devices.reset(new DeviceState[size_t(d.count)]);
  pthread_atfork(nullptr, nullptr, [] { forkedChild = true; });
}

/// The driver, loaded on first use. Never destroyed: objects freed at exit
/// may still call it.
Driver &driver() {
  static Driver *d = [] {
    auto *fresh = new Driver;
    load(*fresh);
    return fresh;
  }();
  return *d;
}

const Api &api() { return driver().api; }

/// The driver, or CudaUnavailable saying why there is none.
Driver &ready() {
  Driver &d = driver();
  if (forkedChild)
    throw CudaUnavailable(unavailableReason());
  if (!d.unavailable.empty())
    throw CudaUnavailable("CUDA is not available: " + d.unavailable);
  return d;
}

DeviceState &stateOf(int ordinal) {
  Driver &d = ready();
  if (ordinal < 0 || ordinal >= d.count)
    throw std::invalid_argument(
        "no CUDA device " + std::to_string(ordinal) + ": this machine has " +
        std::to_string(d.count) + " (cuda:0" +
        (d.count > 1 ? " to cuda:" + std::to_string(d.count - 1) : "") + ")");
  return d.devices[size_t(ordinal)];
}

std::string errorText(CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (api().cuGetErrorName(r, &name) != kSuccess || !name)
    name = "an unknown CUDA error";
  if (api().cuGetErrorString(r, &text) != kSuccess || !text)
    text = "no message";
  return std::string(name) + " (" + std::to_string(r) + "): " + text;
}

std::string deviceName(int ordinal) {
  return "cuda:" + std::to_string(ordinal);
}

/// Throws CudaError for a failed call; see CudaDriver.h. `doing` says what
/// the call was for ("" if nothing to add); `launching` is the label of a
/// kernel being launched (nullptr for other calls).
/// `after` is appended to the message (the JIT's log).
[[noreturn]] void fail(const char *call, CUresult r, int ordinal,
                       const std::string &doing,
                       const std::string *launching = nullptr,
                       const std::string &after = std::string()) {
  std::string message = std::string(call) + " failed";
  if (ordinal >= 0)
    message += " on " + deviceName(ordinal);
  if (!doing.empty())
    message += " (" + doing + ")";
  message += ": " + errorText(r);
  if (isSticky(r) && ordinal >= 0) {
    std::string last = lastLaunch(ordinal);
    message += ". A kernel faulted: the driver reports such faults at the "
               "next call; the last kernel launched on " +
               deviceName(ordinal) + (launching ? " before this one" : "") +
               " was " +
               (last.empty() ? "none (no launch through adjit)" : last) +
               ". The device's context cannot be used again: restart the "
               "process";
  }
  throw CudaError(call, r, message + after);
}

inline void check(CUresult r, const char *call, int ordinal,
                  const std::string &doing = std::string()) {
  if (r != kSuccess)
    fail(call, r, ordinal, doing);
}

std::string bytesText(size_t bytes) {
  char text[64];
  if (bytes >= (size_t(1) << 30))
    std::snprintf(text, sizeof(text), "%zu bytes, %.2f GiB", bytes,
                  double(bytes) / double(size_t(1) << 30));
  else if (bytes >= (size_t(1) << 20))
    std::snprintf(text, sizeof(text), "%zu bytes, %.2f MiB", bytes,
                  double(bytes) / double(size_t(1) << 20));
  else
    std::snprintf(text, sizeof(text), "%zu bytes", bytes);
  return text;
}

/// Retains the device's primary context (once) and creates its default
/// stream in it.
CUcontext retain(int ordinal) {
  DeviceState &state = stateOf(ordinal);
  CUcontext context = state.context.load(std::memory_order_acquire);
  if (context)
    return context;
  std::lock_guard<std::mutex> lock(state.mutex);
  context = state.context.load(std::memory_order_acquire);
  if (context)
    return context;
  const Api &a = api();
  CUdevice device = 0;
  check(a.cuDeviceGet(&device, ordinal), "cuDeviceGet", ordinal);
  check(a.cuDevicePrimaryCtxRetain(&context, device),
        "cuDevicePrimaryCtxRetain", ordinal);
  CUcontext saved = nullptr;
  check(a.cuCtxGetCurrent(&saved), "cuCtxGetCurrent", ordinal);
  check(a.cuCtxSetCurrent(context), "cuCtxSetCurrent", ordinal);
  CUresult r = a.cuStreamCreateWithPriority(&state.stream, 0, 0);
  a.cuCtxSetCurrent(saved);
  check(r, "cuStreamCreateWithPriority", ordinal,
        "creating the device's default stream");
  state.context.store(context, std::memory_order_release);
  return context;
}

/// While a capture is open on the device, makes the calling thread's
/// capture mode relaxed for its lifetime: cuMemAlloc, module loads, limits
/// and the staging copy are calls the driver may refuse on a capturing
/// thread otherwise ("potentially unsafe": they could wait for the device),
/// and none of them touches the capturing stream.
class RelaxedCaptureMode {
public:
  explicit RelaxedCaptureMode(int ordinal) {
    const Api &a = api();
    if (a.cuThreadExchangeStreamCaptureMode &&
        stateOf(ordinal).openCaptures.load(std::memory_order_acquire) > 0) {
      mode_ = kCaptureModeRelaxed;
      active_ = a.cuThreadExchangeStreamCaptureMode(&mode_) == kSuccess;
    }
  }
  ~RelaxedCaptureMode() {
    if (active_)
      api().cuThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode &) = delete;
  RelaxedCaptureMode &operator=(const RelaxedCaptureMode &) = delete;

private:
  int mode_ = 0;
  bool active_ = false;
};

} // namespace

//===-- the driver and its devices ------------------------------------===//

std::string driverLibraryName() { return driver().library; }

std::string unavailableReason() {
  Driver &d = driver();
  if (forkedChild)
    return "CUDA was initialized in the parent of this process, which was "
           "forked: CUDA cannot be used after fork() (start processes with "
           "multiprocessing's 'spawn' or 'forkserver' method)";
  return d.unavailable;
}

int deviceCount() {
  Driver &d = driver();
  return forkedChild || !d.unavailable.empty() ? 0 : d.count;
}

int driverVersion() { return driver().version; }

DeviceProperties deviceProperties(int ordinal) {
  stateOf(ordinal);
  const Api &a = api();
  DeviceProperties p;
  p.ordinal = ordinal;
  CUdevice device = 0;
  check(a.cuDeviceGet(&device, ordinal), "cuDeviceGet", ordinal);
  char name[256] = {};
  check(a.cuDeviceGetName(name, int(sizeof(name)) - 1, device),
        "cuDeviceGetName", ordinal);
  p.name = name;
  auto attribute = [&](int which, const char *what) {
    int value = 0;
    check(a.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute",
          ordinal, what);
    return value;
  };
  p.major = attribute(kAttrComputeCapabilityMajor, "compute capability major");
  p.minor = attribute(kAttrComputeCapabilityMinor, "compute capability minor");
  p.multiprocessors = attribute(kAttrMultiprocessorCount, "multiprocessors");
  p.maxThreadsPerBlock =
      attribute(kAttrMaxThreadsPerBlock, "threads per block");
  p.warpSize = attribute(kAttrWarpSize, "warp size");
  p.maxSharedMemoryPerBlockOptin =
      attribute(kAttrMaxSharedMemoryPerBlockOptin, "shared memory per block");
  p.unifiedAddressing = attribute(kAttrUnifiedAddressing, "unified addressing");
  p.memoryPools = a.cuMemAllocAsync && a.cuMemFreeAsync &&
                  attribute(kAttrMemoryPoolsSupported, "memory pools");
  char bus[32];
  std::snprintf(bus, sizeof(bus), "%04X:%02X:%02X",
                unsigned(attribute(kAttrPciDomainId, "PCI domain")),
                unsigned(attribute(kAttrPciBusId, "PCI bus")),
                unsigned(attribute(kAttrPciDeviceId, "PCI device")));
  p.pciBusId = bus;
  check(a.cuDeviceTotalMem(&p.totalMemory, device), "cuDeviceTotalMem_v2",
        ordinal);
  return p;
}

std::pair<size_t, size_t> memoryInfo(int ordinal) {
  ScopedContext scope(ordinal);
  size_t free = 0, total = 0;
  check(api().cuMemGetInfo(&free, &total), "cuMemGetInfo_v2", ordinal);
  return {free, total};
}

ScopedContext::ScopedContext(int ordinal) : saved_(nullptr), restore_(false) {
  CUcontext context = retain(ordinal);
  CUcontext current = nullptr;
  check(api().cuCtxGetCurrent(&current), "cuCtxGetCurrent", ordinal);
  if (current != context) {
    check(api().cuCtxSetCurrent(context), "cuCtxSetCurrent", ordinal);
    saved_ = current;
    restore_ = true;
  }
}

ScopedContext::~ScopedContext() {
  if (restore_)
    api().cuCtxSetCurrent(static_cast<CUcontext>(saved_));
}

void makeCurrent(int ordinal) {
  check(api().cuCtxSetCurrent(retain(ordinal)), "cuCtxSetCurrent", ordinal);
}

bool hasContext(int ordinal) {
  return stateOf(ordinal).context.load(std::memory_order_acquire) != nullptr;
}

void synchronizeDevice(int ordinal) {
  ScopedContext scope(ordinal);
  check(api().cuCtxSynchronize(), "cuCtxSynchronize", ordinal);
}

void synchronizeAll() {
  if (deviceCount() == 0)
    return;
  for (int ordinal = 0; ordinal < driver().count; ++ordinal)
    if (hasContext(ordinal))
      synchronizeDevice(ordinal);
}

void setLimit(int ordinal, int limit, size_t value) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal);
  check(api().cuCtxSetLimit(limit, value), "cuCtxSetLimit", ordinal,
        "limit " + std::to_string(limit) + " to " + std::to_string(value));
}

size_t getLimit(int ordinal, int limit) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal);
  size_t value = 0;
  check(api().cuCtxGetLimit(&value, limit), "cuCtxGetLimit", ordinal,
        "limit " + std::to_string(limit));
  return value;
}

//===-- memory --------------------------------------------------------===//

DevicePtr allocate(int ordinal, size_t bytes, StreamHandle stream,
                   bool &streamOrdered) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return 0;
  const Api &a = api();
  if (stateOf(ordinal).openCaptures.load(std::memory_order_acquire) > 0)
    streamOrdered = false;
  CUdeviceptr ptr = 0;
  if (streamOrdered) {
    if (!a.cuMemAllocAsync)
      throw std::invalid_argument("stream-ordered allocation needs "
                                  "cuMemAllocAsync (CUDA 11.2 and later)");
    check(a.cuMemAllocAsync(&ptr, bytes, stream), "cuMemAllocAsync", ordinal,
          "allocating " + bytesText(bytes));
  } else {
    RelaxedCaptureMode relaxed(ordinal);
    check(a.cuMemAlloc(&ptr, bytes), "cuMemAlloc_v2", ordinal,
          "allocating " + bytesText(bytes));
  }
  return ptr;
}

DevicePtr allocate(int ordinal, size_t bytes) {
  bool streamOrdered = false;
  return allocate(ordinal, bytes, nullptr, streamOrdered);
}

namespace {

void freeNow(int ordinal, DevicePtr ptr, StreamHandle stream,
             bool streamOrdered) {
  const Api &a = api();
  if (streamOrdered) {
    if (!a.cuMemFreeAsync)
      throw std::invalid_argument("stream-ordered free needs cuMemFreeAsync");
    check(a.cuMemFreeAsync(ptr, stream), "cuMemFreeAsync", ordinal);
  } else {
    check(a.cuMemFree(ptr), "cuMemFree_v2", ordinal);
  }
}

} // namespace

void release(int ordinal, DevicePtr ptr, StreamHandle stream,
             bool streamOrdered) {
  if (ptr == 0)
    return;
  ScopedContext scope(ordinal);
  DeviceState &state = stateOf(ordinal);
  {
    std::lock_guard<std::mutex> lock(state.deferredMutex);
    if (state.openCaptures.load(std::memory_order_acquire) > 0) {
      state.deferred.emplace_back(ptr, streamOrdered);
      return;
    }
  }
  freeNow(ordinal, ptr, stream, streamOrdered);
}

void stageToDevice(int ordinal, DevicePtr dst, const void *src, size_t bytes) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return;
  DeviceState &state = stateOf(ordinal);
  const Api &a = api();
  RelaxedCaptureMode relaxed(ordinal);
  std::lock_guard<std::mutex> lock(state.stagingMutex);
  if (!state.stagingStream)
    check(a.cuStreamCreateWithPriority(&state.stagingStream,
                                       kStreamNonBlocking, 0),
          "cuStreamCreateWithPriority", ordinal, "creating the staging stream");
  check(a.cuMemcpyHtoDAsync(dst, src, bytes, state.stagingStream),
        "cuMemcpyHtoDAsync_v2", ordinal, "staging " + bytesText(bytes));
  check(a.cuStreamSynchronize(state.stagingStream), "cuStreamSynchronize",
        ordinal, "staging " + bytesText(bytes));
}

void copyToDevice(int ordinal, DevicePtr dst, const void *src, size_t bytes,
                  StreamHandle stream, bool async) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return;
  if (async)
    check(api().cuMemcpyHtoDAsync(dst, src, bytes, stream),
          "cuMemcpyHtoDAsync_v2", ordinal, "copying " + bytesText(bytes));
  else
    check(api().cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD_v2", ordinal,
          "copying " + bytesText(bytes));
}

void copyToHost(int ordinal, void *dst, DevicePtr src, size_t bytes,
                StreamHandle stream, bool async) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return;
  if (async)
    check(api().cuMemcpyDtoHAsync(dst, src, bytes, stream),
          "cuMemcpyDtoHAsync_v2", ordinal, "copying " + bytesText(bytes));
  else
    check(api().cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH_v2", ordinal,
          "copying " + bytesText(bytes));
}

void copyOnDevice(int ordinal, DevicePtr dst, DevicePtr src, size_t bytes,
                  StreamHandle stream, bool async) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return;
  if (async)
    check(api().cuMemcpyDtoDAsync(dst, src, bytes, stream),
          "cuMemcpyDtoDAsync_v2", ordinal, "copying " + bytesText(bytes));
  else
    check(api().cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD_v2", ordinal,
          "copying " + bytesText(bytes));
}

void memsetBytes(int ordinal, DevicePtr dst, unsigned char value, size_t bytes,
                 StreamHandle stream, bool async) {
  ScopedContext scope(ordinal);
  if (bytes == 0)
    return;
  if (async)
    check(api().cuMemsetD8Async(dst, value, bytes, stream), "cuMemsetD8Async",
          ordinal, "setting " + bytesText(bytes));
  else
    check(api().cuMemsetD8(dst, value, bytes), "cuMemsetD8_v2", ordinal,
          "setting " + bytesText(bytes));
}

//===-- streams and events --------------------------------------------===//

StreamHandle defaultStream(int ordinal) {
  retain(ordinal);
  return stateOf(ordinal).stream;
}

StreamHandle createStream(int ordinal, int priority) {
  ScopedContext scope(ordinal);
  CUstream stream = nullptr;
  check(api().cuStreamCreateWithPriority(&stream, 0, priority),
        "cuStreamCreateWithPriority", ordinal);
  return stream;
}

void destroyStream(int ordinal, StreamHandle stream) noexcept {
  if (!stream || forkedChild)
    return;
  try {
    ScopedContext scope(ordinal);
    api().cuStreamDestroy(stream);
  } catch (...) {
    // At exit or after a fault: nothing to free the stream for.
  }
}

void synchronizeStream(int ordinal, StreamHandle stream) {
  ScopedContext scope(ordinal);
  check(api().cuStreamSynchronize(stream), "cuStreamSynchronize", ordinal);
}

bool streamIsComplete(int ordinal, StreamHandle stream) {
  ScopedContext scope(ordinal);
  CUresult r = api().cuStreamQuery(stream);
  if (r == kErrorNotReady)
    return false;
  check(r, "cuStreamQuery", ordinal);
  return true;
}

int streamPriority(int ordinal, StreamHandle stream) {
  ScopedContext scope(ordinal);
  int priority = 0;
  check(api().cuStreamGetPriority(stream, &priority), "cuStreamGetPriority",
        ordinal);
  return priority;
}

void streamWaitEvent(int ordinal, StreamHandle stream, EventHandle event) {
  ScopedContext scope(ordinal);
  check(api().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent",
        ordinal);
}

EventHandle createEvent(int ordinal, bool timing, bool blockingSync) {
  ScopedContext scope(ordinal);
  unsigned flags = (timing ? 0u : kEventDisableTiming) |
                   (blockingSync ? kEventBlockingSync : 0u);
  CUevent event = nullptr;
  check(api().cuEventCreate(&event, flags), "cuEventCreate", ordinal);
  return event;
}

void destroyEvent(int ordinal, EventHandle event) noexcept {
  if (!event || forkedChild)
    return;
  try {
    ScopedContext scope(ordinal);
    api().cuEventDestroy(event);
  } catch (...) {
  }
}

void recordEvent(int ordinal, EventHandle event, StreamHandle stream) {
  ScopedContext scope(ordinal);
  check(api().cuEventRecord(event, stream), "cuEventRecord", ordinal);
}

void synchronizeEvent(int ordinal, EventHandle event) {
  ScopedContext scope(ordinal);
  check(api().cuEventSynchronize(event), "cuEventSynchronize", ordinal);
}

bool eventIsComplete(int ordinal, EventHandle event) {
  ScopedContext scope(ordinal);
  CUresult r = api().cuEventQuery(event);
  if (r == kErrorNotReady)
    return false;
  check(r, "cuEventQuery", ordinal);
  return true;
}

float elapsedMs(int ordinal, EventHandle start, EventHandle end) {
  ScopedContext scope(ordinal);
  float ms = 0;
  check(api().cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime",
        ordinal);
  return ms;
}

//===-- stream capture and graphs -------------------------------------===//

namespace {

/// The capture and graph entry points, or CudaUnavailable naming the one
/// the driver lacks.
const Api &graphApi() {
  ready();
  const Api &a = api();
  const char *missing = !a.cuStreamBeginCapture ? "cuStreamBeginCapture_v2"
                        : !a.cuStreamEndCapture ? "cuStreamEndCapture"
                        : !a.cuStreamIsCapturing ? "cuStreamIsCapturing"
                        : !a.cuGraphInstantiateWithFlags
                            ? "cuGraphInstantiateWithFlags"
                        : !a.cuGraphLaunch      ? "cuGraphLaunch"
                        : !a.cuGraphExecDestroy ? "cuGraphExecDestroy"
                        : !a.cuGraphDestroy     ? "cuGraphDestroy"
                                                : nullptr;
  if (missing)
    throw CudaUnavailable("CUDA graphs need the driver's " +
                          std::string(missing) + " (CUDA 11.4 and later); " +
                          driverLibraryName() + " has none");
  return a;
}

/// One capture on the device ended: the frees deferred while captures
/// were open happen once the last one ends (on the device's default
/// stream where stream-ordered: the stream they were allocated on may be
/// gone). Errors are ignored, as a destructor's are.
void captureEnded(int ordinal) {
  DeviceState &state = stateOf(ordinal);
  std::vector<std::pair<CUdeviceptr, bool>> deferred;
  {
    std::lock_guard<std::mutex> lock(state.deferredMutex);
    if (state.openCaptures.load(std::memory_order_acquire) > 0)
      state.openCaptures.fetch_sub(1, std::memory_order_acq_rel);
    if (state.openCaptures.load(std::memory_order_acquire) == 0)
      deferred.swap(state.deferred);
  }
  for (auto &[ptr, streamOrdered] : deferred) {
    try {
      freeNow(ordinal, ptr, state.stream, streamOrdered);
    } catch (...) {
    }
  }
}

} // namespace

bool graphsSupported() {
  if (!unavailableReason().empty())
    return false;
  try {
    graphApi();
    return true;
  } catch (const CudaUnavailable &) {
    return false;
  }
}

void beginCapture(int ordinal, StreamHandle stream, int mode) {
  const Api &a = graphApi();
  if (mode < 0 || mode > 2)
    throw std::invalid_argument("capture mode must be 0 (global), 1 "
                                "(thread-local) or 2 (relaxed), not " +
                                std::to_string(mode));
  if (!stream)
    throw std::invalid_argument("the legacy default stream (0) cannot be "
                                "captured: capture a stream of its own");
  ScopedContext scope(ordinal);
  DeviceState &state = stateOf(ordinal);
  {
    std::lock_guard<std::mutex> lock(state.deferredMutex);
    state.openCaptures.fetch_add(1, std::memory_order_acq_rel);
  }
  CUresult r = a.cuStreamBeginCapture(stream, mode);
  if (r != kSuccess) {
    captureEnded(ordinal);
    fail("cuStreamBeginCapture_v2", r, ordinal, "beginning a capture");
  }
}

GraphHandle endCapture(int ordinal, StreamHandle stream) {
  const Api &a = graphApi();
  ScopedContext scope(ordinal);
  CUgraph graph = nullptr;
  CUresult r = a.cuStreamEndCapture(stream, &graph);
  captureEnded(ordinal);
  if (r != kSuccess) {
    if (graph)
      a.cuGraphDestroy(graph);
    fail("cuStreamEndCapture", r, ordinal,
         "ending a capture; an operation the driver cannot capture (one "
         "that synchronizes, or uses the legacy default stream, during the "
         "capture) invalidates it");
  }
  return graph;
}

int captureStatus(int ordinal, StreamHandle stream) {
  const Api &a = graphApi();
  ScopedContext scope(ordinal);
  int status = 0;
  check(a.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing",
        ordinal);
  return status;
}

bool captureOpen(int ordinal) {
  return stateOf(ordinal).openCaptures.load(std::memory_order_acquire) > 0;
}

size_t graphNodeCount(int ordinal, GraphHandle graph) {
  const Api &a = graphApi();
  if (!a.cuGraphGetNodes)
    return 0;
  ScopedContext scope(ordinal);
  size_t count = 0;
  check(a.cuGraphGetNodes(graph, nullptr, &count), "cuGraphGetNodes", ordinal);
  return count;
}

GraphExecHandle instantiateGraph(int ordinal, GraphHandle graph) {
  const Api &a = graphApi();
  ScopedContext scope(ordinal);
  CUgraphExec exec = nullptr;
  check(a.cuGraphInstantiateWithFlags(&exec, graph, 0),
        "cuGraphInstantiateWithFlags", ordinal, "instantiating a graph");
  return exec;
}

void launchGraph(int ordinal, GraphExecHandle exec, StreamHandle stream,
                 const std::string &label) {
  const Api &a = graphApi();
  ScopedContext scope(ordinal);
  CUresult r = a.cuGraphLaunch(exec, stream);
  if (r != kSuccess)
    fail("cuGraphLaunch", r, ordinal, "launching " + label, &label);
  DeviceState &state = stateOf(ordinal);
  std::lock_guard<std::mutex> lock(state.launchMutex);
  state.lastLaunch = label;
}

void destroyGraphExec(int ordinal, GraphExecHandle exec) noexcept {
  if (!exec || forkedChild)
    return;
  try {
    ScopedContext scope(ordinal);
    graphApi().cuGraphExecDestroy(exec);
  } catch (...) {
  }
}

void destroyGraph(int ordinal, GraphHandle graph) noexcept {
  if (!graph || forkedChild)
    return;
  try {
    ScopedContext scope(ordinal);
    graphApi().cuGraphDestroy(graph);
  } catch (...) {
  }
}

//===-- modules and launches ------------------------------------------===//

ModuleHandle loadModule(int ordinal, const void *image, size_t bytes,
                        const std::string &label) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal); // (may be called in a capture)
  // A PTX text must end with a NUL; a cubin (ELF) or fatbin is binary.
  const auto *data = static_cast<const unsigned char *>(image);
  bool binary = bytes >= 4 && ((data[0] == 0x7f && data[1] == 'E' &&
                                data[2] == 'L' && data[3] == 'F') ||
                               (data[0] == 0x50 && data[1] == 0xed &&
                                data[2] == 0x55 && data[3] == 0xba));
  std::string text;
  if (!binary && (bytes == 0 || data[bytes - 1] != 0)) {
    text.assign(static_cast<const char *>(image), bytes);
    image = text.c_str();
  }
  constexpr size_t kLogBytes = 16384;
  std::unique_ptr<char[]> errorLog(new char[kLogBytes]());
  std::unique_ptr<char[]> infoLog(new char[kLogBytes]());
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes,
                   kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes};
  void *values[] = {errorLog.get(),
                    reinterpret_cast<void *>(uintptr_t(kLogBytes - 1)),
                    infoLog.get(),
                    reinterpret_cast<void *>(uintptr_t(kLogBytes - 1))};
  CUmodule module = nullptr;
  CUresult r = api().cuModuleLoadDataEx(&module, image, 4, options, values);
  if (r != kSuccess)
    fail("cuModuleLoadDataEx", r, ordinal, "loading module " + label, nullptr,
         errorLog[0] ? "; the JIT's log:\n" + std::string(errorLog.get())
                     : std::string("; the JIT wrote no log"));
  return module;
}

void unloadModule(int ordinal, ModuleHandle module) noexcept {
  if (!module || forkedChild)
    return;
  try {
    ScopedContext scope(ordinal);
    api().cuModuleUnload(module);
  } catch (...) {
  }
}

FunctionHandle getFunction(int ordinal, ModuleHandle module,
                           const std::string &name) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal); // (may be called in a capture)
  CUfunction function = nullptr;
  CUresult r = api().cuModuleGetFunction(&function, module, name.c_str());
  if (r == kErrorNotFound)
    throw std::invalid_argument("the module has no kernel named '" + name +
                                "' (cuModuleGetFunction: not found)");
  check(r, "cuModuleGetFunction", ordinal, "kernel '" + name + "'");
  return function;
}

FunctionAttributes functionAttributes(int ordinal, FunctionHandle function) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal);
  auto get = [&](int which) {
    int value = 0;
    check(api().cuFuncGetAttribute(&value, which, function),
          "cuFuncGetAttribute", ordinal,
          "attribute " + std::to_string(which));
    return value;
  };
  FunctionAttributes f;
  f.maxThreadsPerBlock = get(kFuncMaxThreadsPerBlock);
  f.sharedBytes = get(kFuncSharedSizeBytes);
  f.constBytes = get(kFuncConstSizeBytes);
  f.localBytes = get(kFuncLocalSizeBytes);
  f.registers = get(kFuncNumRegs);
  f.ptxVersion = get(kFuncPtxVersion);
  f.binaryVersion = get(kFuncBinaryVersion);
  return f;
}

std::vector<ParamInfo> parameterLayout(int ordinal, FunctionHandle function,
                                       bool &known) {
  ScopedContext scope(ordinal);
  RelaxedCaptureMode relaxed(ordinal);
  std::vector<ParamInfo> layout;
  known = api().cuFuncGetParamInfo != nullptr;
  if (!known)
    return layout;
  // Asks for parameter 0, 1, ... until the driver says there is no such one.
  for (size_t index = 0; index < 65536; ++index) {
    size_t offset = 0, size = 0;
    CUresult r = api().cuFuncGetParamInfo(function, index, &offset, &size);
    if (r == kErrorInvalidValue)
      break;
    check(r, "cuFuncGetParamInfo", ordinal,
          "parameter " + std::to_string(index));
    layout.push_back({offset, size});
  }
  return layout;
}

namespace {

std::string launchText(const LaunchConfig &c, const std::string &label) {
  char shape[160];
  std::snprintf(shape, sizeof(shape),
                " (grid %u x %u x %u, block %u x %u x %u, %u bytes of dynamic "
                "shared memory)",
                c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                c.block[2], c.sharedBytes);
  return "launching " + label + shape;
}

void launchWith(int ordinal, FunctionHandle function, const LaunchConfig &c,
                void **params, void **extra, const std::string &label) {
  ScopedContext scope(ordinal);
  CUresult r = api().cuLaunchKernel(
      function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
      c.block[2], c.sharedBytes, c.stream, params, extra);
  if (r != kSuccess)
    fail("cuLaunchKernel", r, ordinal, launchText(c, label), &label);
  DeviceState &state = stateOf(ordinal);
  std::lock_guard<std::mutex> lock(state.launchMutex);
  state.lastLaunch = label;
}

} // namespace

void launchKernel(int ordinal, FunctionHandle function,
                  const LaunchConfig &config, void **params,
                  const std::string &label) {
  launchWith(ordinal, function, config, params, nullptr, label);
}

void launchKernelPacked(int ordinal, FunctionHandle function,
                        const LaunchConfig &config, const void *buffer,
                        size_t bytes, const std::string &label) {
  size_t size = bytes;
  void *extra[] = {kLaunchParamBufferPointer, const_cast<void *>(buffer),
                   kLaunchParamBufferSize, &size, kLaunchParamEnd};
  launchWith(ordinal, function, config, nullptr, extra, label);
}

std::string lastLaunch(int ordinal) {
  DeviceState &state = stateOf(ordinal);
  std::lock_guard<std::mutex> lock(state.launchMutex);
  return state.lastLaunch;
}

} // namespace cuda
} // namespace runtime
} // namespace adjit
