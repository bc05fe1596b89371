//===- fake_cuda_driver.cpp - a stand-in libcuda for tests without a GPU --===//
//
// Exports the CUDA driver entry points the runtime's CUDA layer looks up
// (CudaDriver.cpp), with "device memory" in host memory, so that the layer,
// its bindings and adjit's Python API over them run through dlopen on a
// machine without a GPU (tests/python/gpu/test_cuda_driver.py builds this file
// and points ADJIT_CUDA_DRIVER at it). It checks what the real driver
// checks where a mistake of the layer would show: a call that needs a
// context fails without a current one, freed handles are unknown.
//
// Kernels are recognized by name (from ".entry NAME(" in the "PTX"):
//   fill_u32(u64 ptr, u32 value, u64 n): ptr[i] = value for i < n
//   fault(...): a fault, reported by the next call that waits (sticky)
//   adjit_add_f32/f64, adjit_fill_pattern, adjit_index_range_i32: as the
//   runtime's helper kernels (adjit/runtime/cuda_helpers.py) compute them
// anything else does nothing. A module whose text has FAKE_BAD_PTX fails to
// load with a JIT log. FAKE_CUDA_DEVICES sets the device count (0: cuInit
// fails with CUDA_ERROR_NO_DEVICE). fake_cuda_stats() reports what is live,
// fake_cuda_graph_stats() the graphs.
//
// Stream capture: launches, device-to-device copies and memsets queued on a
// capturing stream are recorded into its graph instead of run, and
// cuGraphLaunch runs them (in order). What the real driver refuses during a
// capture is refused here and invalidates the capture (cuStreamEndCapture
// then fails): a synchronizing call (cuCtxSynchronize, cuStreamSynchronize
// of the capturing stream, cuMemAlloc, cuMemFree) on the capturing thread
// unless its mode was exchanged for relaxed; any use of the legacy default
// stream while a blocking stream is capturing; and, stricter than the real
// driver, copies between the host and a capturing stream (adjit never
// captures those: pageable host memory) and stream-ordered allocations on
// one (adjit allocates outside captures).
//
// Build: c++ -std=c++17 -shared -fPIC fake_cuda_driver.cpp -o libfakecuda.so
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kOk = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kNotInitialized = 3, kNoDevice = 100, kInvalidDevice = 101,
                   kInvalidContext = 201, kInvalidPtx = 218,
                   kInvalidHandle = 400, kIllegalState = 401,
                   kNotFound = 500, kIllegalAddress = 700,
                   kCaptureUnsupported = 900, kCaptureInvalidated = 901,
                   kCaptureImplicit = 906;

struct Context {
  int device;
  CUresult sticky = kOk;
  size_t limits[3] = {1024, 1 << 20, 8 << 20};
};

struct Function {
  std::string name;
  std::vector<size_t> sizes; ///< parameter sizes; offsets aligned to them
};

struct Module {
  Context *context;
  std::map<std::string, Function> functions;
};

using Ops = std::vector<std::function<void()>>;

struct Graph {
  Context *context;
  std::shared_ptr<Ops> ops = std::make_shared<Ops>();
};

struct GraphExec {
  Context *context;
  std::shared_ptr<const Ops> ops;
};

struct Stream {
  Context *context;
  int priority;
  unsigned flags = 0;
  Graph *capture = nullptr; ///< the graph being captured, if any
  int mode = 0;             ///< its CUstreamCaptureMode
  bool invalidated = false;
  const void *owner = nullptr; ///< the capturing thread (its threadTag)
};

struct Event {
  Context *context;
  unsigned flags;
  bool recorded = false;
};

std::mutex mutex;
bool initialized = false;
int deviceCount = 1;
Context contexts[8];
std::map<uint64_t, size_t> allocations;
std::set<Stream *> streams;
std::set<Event *> events;
std::set<Module *> modules;
std::set<Function *> functions;
std::set<Graph *> graphs;
std::set<GraphExec *> execs;
long launches = 0, retains = 0, graphLaunches = 0;
thread_local Context *current = nullptr;
thread_local int threadMode = 0; ///< cuThreadExchangeStreamCaptureMode's
thread_local char threadTag;     ///< (its address names the thread)

/// A call the real driver refuses on a thread capturing in global or
/// thread-local mode (it may synchronize): refused, and the thread's
/// captures invalidated, unless the thread's mode is relaxed.
CUresult unsafeCall() {
  if (threadMode == 2)
    return kOk;
  CUresult r = kOk;
  std::lock_guard<std::mutex> lock(mutex);
  for (Stream *s : streams)
    if (s->capture && s->owner == &threadTag && s->mode != 2) {
      s->invalidated = true;
      r = kCaptureUnsupported;
    }
  return r;
}

/// The legacy default stream used while a blocking stream of the context is
/// capturing: refused, and those captures invalidated.
CUresult legacyStreamUse(Context *context) {
  CUresult r = kOk;
  std::lock_guard<std::mutex> lock(mutex);
  for (Stream *s : streams)
    if (s->capture && s->context == context && !(s->flags & 1)) {
      s->invalidated = true;
      r = kCaptureImplicit;
    }
  return r;
}

bool isLegacy(Stream *stream) {
  return !stream || stream == reinterpret_cast<Stream *>(uintptr_t(1));
}

/// The graph `stream` is capturing into (nullptr: none).
Graph *capturing(Stream *stream) {
  if (isLegacy(stream) || stream == reinterpret_cast<Stream *>(uintptr_t(2)))
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams.count(stream))
    return nullptr;
  return stream->capture;
}

CUresult needContext() {
  if (!initialized)
    return kNotInitialized;
  if (!current)
    return kInvalidContext;
  return current->sticky;
}

size_t sizeOf(const std::string &type) {
  if (type.find("64") != std::string::npos)
    return 8;
  if (type.find("32") != std::string::npos)
    return 4;
  if (type.find("16") != std::string::npos)
    return 2;
  return 1;
}

/// ".entry NAME(\n .param .u64 a,\n .param .align 4 .b8 v[12] ...)".
void parse(const std::string &ptx, Module &module) {
  size_t at = 0;
  while ((at = ptx.find(".entry", at)) != std::string::npos) {
    at += 6;
    size_t open = ptx.find('(', at);
    size_t close = ptx.find(')', open);
    if (open == std::string::npos || close == std::string::npos)
      return;
    std::string name = ptx.substr(at, open - at);
    name.erase(0, name.find_first_not_of(" \t\n"));
    name.erase(name.find_last_not_of(" \t\n") + 1);
    Function f{name, {}};
    std::string params = ptx.substr(open + 1, close - open - 1);
    size_t p = 0;
    while ((p = params.find(".param", p)) != std::string::npos) {
      p += 6;
      size_t end = params.find(',', p);
      std::string param = params.substr(
          p, end == std::string::npos ? std::string::npos : end - p);
      size_t bracket = param.find('[');
      if (bracket != std::string::npos)
        f.sizes.push_back(
            std::strtoul(param.c_str() + bracket + 1, nullptr, 10));
      else
        f.sizes.push_back(sizeOf(param));
      if (end == std::string::npos)
        break;
    }
    module.functions[name] = f;
    at = close;
  }
}

std::vector<size_t> offsetsOf(const Function &f) {
  std::vector<size_t> offsets;
  size_t offset = 0;
  for (size_t size : f.sizes) {
    size_t align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
    offset = (offset + align - 1) / align * align;
    offsets.push_back(offset);
    offset += size;
  }
  return offsets;
}

template <typename T> T read(const void *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

void runKernel(const Function &function, const std::vector<const void *> &args,
               Context *context) {
  const Function *f = &function;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++launches;
  }
  if (f->name == "fill_u32" && args.size() == 3) {
    auto *ptr =
        reinterpret_cast<uint32_t *>(uintptr_t(read<uint64_t>(args[0])));
    uint32_t value = read<uint32_t>(args[1]);
    uint64_t n = read<uint64_t>(args[2]);
    for (uint64_t i = 0; i < n; ++i)
      ptr[i] = value;
  } else if (f->name == "fault") {
    context->sticky = kIllegalAddress;
  } else if (f->name == "adjit_add_f32" || f->name == "adjit_add_f64") {
    uint64_t dst = read<uint64_t>(args[0]), src = read<uint64_t>(args[1]);
    uint64_t n = read<uint64_t>(args[2]);
    for (uint64_t i = 0; i < n; ++i) {
      if (f->name == "adjit_add_f32")
        reinterpret_cast<float *>(uintptr_t(dst))[i] +=
            reinterpret_cast<const float *>(uintptr_t(src))[i];
      else
        reinterpret_cast<double *>(uintptr_t(dst))[i] +=
            reinterpret_cast<const double *>(uintptr_t(src))[i];
    }
  } else if (f->name == "adjit_fill_pattern") {
    auto *dst = reinterpret_cast<unsigned char *>(
        uintptr_t(read<uint64_t>(args[0])));
    auto *pattern = reinterpret_cast<const unsigned char *>(
        uintptr_t(read<uint64_t>(args[1])));
    uint64_t k = read<uint64_t>(args[2]), n = read<uint64_t>(args[3]);
    for (uint64_t i = 0; i < n; ++i)
      dst[i] = pattern[i % k];
  } else if (f->name == "adjit_index_range_i32") {
    auto *idx =
        reinterpret_cast<const int32_t *>(uintptr_t(read<uint64_t>(args[0])));
    uint64_t n = read<uint64_t>(args[1]);
    auto *out = reinterpret_cast<int64_t *>(uintptr_t(read<uint64_t>(args[2])));
    for (uint64_t i = 0; i < n; ++i) {
      out[0] = std::min<int64_t>(out[0], idx[i]);
      out[1] = std::max<int64_t>(out[1], idx[i]);
    }
  }
}


} // namespace

extern "C" {

CUresult cuInit(unsigned flags) {
  std::lock_guard<std::mutex> lock(mutex);
  if (flags != 0)
    return kInvalidValue;
  const char *count = std::getenv("FAKE_CUDA_DEVICES");
  deviceCount = count ? std::atoi(count) : 1;
  if (deviceCount <= 0)
    return kNoDevice;
  if (deviceCount > 8)
    deviceCount = 8;
  for (int i = 0; i < deviceCount; ++i)
    contexts[i].device = i;
  initialized = true;
  return kOk;
}

CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return kOk;
}

CUresult cuGetErrorName(CUresult r, const char **name) {
  switch (r) {
  case kOk: *name = "CUDA_SUCCESS"; return kOk;
  case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kOk;
  case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kOk;
  case kNotInitialized: *name = "CUDA_ERROR_NOT_INITIALIZED"; return kOk;
  case kNoDevice: *name = "CUDA_ERROR_NO_DEVICE"; return kOk;
  case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kOk;
  case kInvalidContext: *name = "CUDA_ERROR_INVALID_CONTEXT"; return kOk;
  case kInvalidPtx: *name = "CUDA_ERROR_INVALID_PTX"; return kOk;
  case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; return kOk;
  case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kOk;
  case 600: *name = "CUDA_ERROR_NOT_READY"; return kOk;
  case kIllegalState: *name = "CUDA_ERROR_ILLEGAL_STATE"; return kOk;
  case kCaptureUnsupported:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return kOk;
  case kCaptureInvalidated:
    *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    return kOk;
  case kCaptureImplicit:
    *name = "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    return kOk;
  case kIllegalAddress: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kOk;
  default: *name = nullptr; return kInvalidValue;
  }
}

CUresult cuGetErrorString(CUresult r, const char **text) {
  switch (r) {
  case kNoDevice: *text = "no CUDA-capable device is detected"; return kOk;
  case kInvalidContext: *text = "invalid device context"; return kOk;
  case kOutOfMemory: *text = "out of memory"; return kOk;
  case kInvalidPtx: *text = "a PTX JIT compilation failed"; return kOk;
  case kIllegalAddress:
    *text = "an illegal memory access was encountered";
    return kOk;
  case kInvalidValue: *text = "invalid argument"; return kOk;
  case kInvalidHandle: *text = "invalid resource handle"; return kOk;
  case kCaptureUnsupported:
    *text = "operation not permitted when stream is capturing";
    return kOk;
  case kCaptureInvalidated:
    *text = "operation failed due to a previous error during capture";
    return kOk;
  case kCaptureImplicit:
    *text = "operation would make the legacy stream depend on a capturing "
            "blocking stream";
    return kOk;
  default: *text = "a fake driver error"; return kOk;
  }
}

CUresult cuDeviceGetCount(int *count) {
  if (!initialized)
    return kNotInitialized;
  *count = deviceCount;
  return kOk;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  if (!initialized)
    return kNotInitialized;
  if (ordinal < 0 || ordinal >= deviceCount)
    return kInvalidDevice;
  *device = ordinal;
  return kOk;
}

CUresult cuDeviceGetName(char *name, int len, int device) {
  if (device < 0 || device >= deviceCount)
    return kInvalidDevice;
  std::snprintf(name, size_t(len), "Fake CUDA Device %d", device);
  return kOk;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (device < 0 || device >= deviceCount)
    return kInvalidDevice;
  switch (attribute) {
  case 1: *value = 1024; break;   // threads per block
  case 10: *value = 32; break;    // warp size
  case 16: *value = 132; break;   // multiprocessors
  case 33: *value = 0x41 + device; break; // PCI bus
  case 34: *value = 0; break;
  case 41: *value = 1; break;     // unified addressing
  case 50: *value = 0; break;
  case 75: *value = 9; break;     // compute capability
  case 76: *value = 0; break;
  case 97: *value = 232448; break;
  case 115: *value = 1; break;    // memory pools
  default: return kInvalidValue;
  }
  return kOk;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int device) {
  if (device < 0 || device >= deviceCount)
    return kInvalidDevice;
  *bytes = size_t(16) << 30;
  return kOk;
}

CUresult cuDevicePrimaryCtxRetain(Context **context, int device) {
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= deviceCount)
    return kInvalidDevice;
  ++retains;
  *context = &contexts[device];
  return kOk;
}

CUresult cuCtxGetCurrent(Context **context) {
  *context = current;
  return initialized ? kOk : kNotInitialized;
}

CUresult cuCtxSetCurrent(Context *context) {
  current = context;
  return initialized ? kOk : kNotInitialized;
}

CUresult cuCtxSynchronize() {
  if (CUresult r = needContext())
    return r;
  return unsafeCall();
}

CUresult cuCtxSetLimit(int limit, size_t value) {
  if (CUresult r = needContext())
    return r;
  if (limit < 0 || limit > 2)
    return kInvalidValue;
  current->limits[limit] = value;
  return kOk;
}

CUresult cuCtxGetLimit(size_t *value, int limit) {
  if (CUresult r = needContext())
    return r;
  if (limit < 0 || limit > 2)
    return kInvalidValue;
  *value = current->limits[limit];
  return kOk;
}

CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  if (CUresult r = needContext())
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  size_t used = 0;
  for (auto &a : allocations)
    used += a.second;
  *total = size_t(16) << 30;
  *free = *total - used;
  return kOk;
}

CUresult cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  if (CUresult r = needContext())
    return r;
  if (CUresult r = unsafeCall())
    return r;
  if (bytes == 0)
    return kInvalidValue;
  if (bytes > (size_t(16) << 30))
    return kOutOfMemory;
  void *p = std::calloc(1, bytes);
  if (!p)
    return kOutOfMemory;
  std::lock_guard<std::mutex> lock(mutex);
  *ptr = reinterpret_cast<uintptr_t>(p);
  allocations[*ptr] = bytes;
  return kOk;
}

CUresult cuMemFree_v2(uint64_t ptr) {
  if (CUresult r = needContext())
    return r;
  if (CUresult r = unsafeCall())
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.find(ptr);
  if (it == allocations.end())
    return kInvalidValue;
  std::free(reinterpret_cast<void *>(uintptr_t(ptr)));
  allocations.erase(it);
  return kOk;
}

namespace {

void *at(uint64_t address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

/// A copy or memset queued on `stream`: recorded where it is capturing
/// (`capturable`: device memory only), else done now (after the checks of
/// the legacy stream's use).
CUresult queue(Stream *stream, bool capturable, std::function<void()> op) {
  if (CUresult r = needContext())
    return r;
  if (Graph *graph = capturing(stream)) {
    if (!capturable) {
      std::lock_guard<std::mutex> lock(mutex);
      stream->invalidated = true;
      return kCaptureUnsupported;
    }
    graph->ops->push_back(std::move(op));
    return kOk;
  }
  if (isLegacy(stream))
    if (CUresult r = legacyStreamUse(current))
      return r;
  op();
  return kOk;
}

/// cuMemAllocAsync, cuMemFreeAsync: `call` without the checks of a
/// synchronizing call.
CUresult streamOrdered(Stream *stream, const std::function<CUresult()> &call) {
  if (capturing(stream))
    return queue(stream, false, nullptr);
  if (isLegacy(stream) && needContext() == kOk)
    if (CUresult r = legacyStreamUse(current))
      return r;
  int saved = threadMode;
  threadMode = 2;
  CUresult r = call();
  threadMode = saved;
  return r;
}

} // namespace

CUresult cuMemAllocAsync(uint64_t *ptr, size_t bytes, Stream *stream) {
  return streamOrdered(stream, [&] { return cuMemAlloc_v2(ptr, bytes); });
}

CUresult cuMemFreeAsync(uint64_t ptr, Stream *stream) {
  return streamOrdered(stream, [&] { return cuMemFree_v2(ptr); });
}

CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes,
                              Stream *stream) {
  return queue(stream, false, [=] { std::memcpy(at(dst), src, bytes); });
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes,
                              Stream *stream) {
  return queue(stream, false, [=] { std::memcpy(dst, at(src), bytes); });
}

CUresult cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes,
                              Stream *stream) {
  return queue(stream, true, [=] { std::memmove(at(dst), at(src), bytes); });
}

CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  return cuMemcpyHtoDAsync_v2(dst, src, bytes, nullptr);
}

CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  return cuMemcpyDtoHAsync_v2(dst, src, bytes, nullptr);
}

CUresult cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t bytes) {
  return cuMemcpyDtoDAsync_v2(dst, src, bytes, nullptr);
}

CUresult cuMemsetD8Async(uint64_t dst, unsigned char value, size_t bytes,
                         Stream *stream) {
  return queue(stream, true, [=] { std::memset(at(dst), value, bytes); });
}

CUresult cuMemsetD8_v2(uint64_t dst, unsigned char value, size_t bytes) {
  return cuMemsetD8Async(dst, value, bytes, nullptr);
}

CUresult cuStreamCreateWithPriority(Stream **stream, unsigned flags,
                                    int priority) {
  if (CUresult r = needContext())
    return r;
  if (flags > 1)
    return kInvalidValue;
  std::lock_guard<std::mutex> lock(mutex);
  int clamped = priority < -5 ? -5 : priority > 0 ? 0 : priority;
  *stream = new Stream{current, clamped};
  (*stream)->flags = flags;
  streams.insert(*stream);
  return kOk;
}

CUresult cuStreamDestroy_v2(Stream *stream) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams.count(stream))
    return kInvalidHandle;
  if (stream->capture)
    return kIllegalState; // (the real driver ends the capture; adjit never)
  streams.erase(stream);
  delete stream;
  return kOk;
}

static CUresult knownStream(Stream *stream) {
  // (0, and CU_STREAM_LEGACY / CU_STREAM_PER_THREAD: the context's own)
  if (!stream || stream == reinterpret_cast<Stream *>(uintptr_t(1)) ||
      stream == reinterpret_cast<Stream *>(uintptr_t(2)))
    return needContext();
  std::lock_guard<std::mutex> lock(mutex);
  if (!streams.count(stream))
    return kInvalidHandle;
  return stream->context->sticky;
}

/// cuStreamSynchronize and cuStreamQuery: refused (and the capture
/// invalidated) on a capturing stream.
static CUresult waitFor(Stream *stream) {
  if (CUresult r = knownStream(stream))
    return r;
  if (capturing(stream)) {
    std::lock_guard<std::mutex> lock(mutex);
    stream->invalidated = true;
    return kCaptureUnsupported;
  }
  if (isLegacy(stream))
    return legacyStreamUse(current);
  return kOk;
}

CUresult cuStreamSynchronize(Stream *stream) { return waitFor(stream); }
CUresult cuStreamQuery(Stream *stream) { return waitFor(stream); }

CUresult cuStreamGetPriority(Stream *stream, int *priority) {
  if (CUresult r = knownStream(stream))
    return r;
  *priority = stream ? stream->priority : 0;
  return kOk;
}

static CUresult knownEvent(Event *event) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!events.count(event))
    return kInvalidHandle;
  return event->context->sticky;
}

CUresult cuStreamWaitEvent(Stream *stream, Event *event, unsigned flags) {
  if (CUresult r = knownStream(stream))
    return r;
  if (flags != 0)
    return kInvalidValue;
  return knownEvent(event);
}

CUresult cuEventCreate(Event **event, unsigned flags) {
  if (CUresult r = needContext())
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  *event = new Event{current, flags};
  events.insert(*event);
  return kOk;
}

CUresult cuEventDestroy_v2(Event *event) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!events.erase(event))
    return kInvalidHandle;
  delete event;
  return kOk;
}

CUresult cuEventRecord(Event *event, Stream *stream) {
  if (CUresult r = knownStream(stream))
    return r;
  if (CUresult r = knownEvent(event))
    return r;
  event->recorded = true;
  return kOk;
}

CUresult cuEventSynchronize(Event *event) { return knownEvent(event); }
CUresult cuEventQuery(Event *event) { return knownEvent(event); }

CUresult cuEventElapsedTime(float *ms, Event *start, Event *end) {
  if (CUresult r = knownEvent(start))
    return r;
  if (CUresult r = knownEvent(end))
    return r;
  if ((start->flags | end->flags) & 2) // CU_EVENT_DISABLE_TIMING
    return kInvalidHandle;
  if (!start->recorded || !end->recorded)
    return kInvalidHandle;
  *ms = 1.5f;
  return kOk;
}

CUresult cuModuleLoadDataEx(Module **module, const void *image,
                            unsigned count, int *options, void **values) {
  if (CUresult r = needContext())
    return r;
  std::string text(static_cast<const char *>(image));
  if (text.find("FAKE_BAD_PTX") != std::string::npos) {
    for (unsigned i = 0; i + 1 < count; ++i)
      if (options[i] == 5 && options[i + 1] == 6) // the error log and its size
        std::snprintf(static_cast<char *>(values[i]),
                      size_t(reinterpret_cast<uintptr_t>(values[i + 1])),
                      "ptxas application ptx input, line 3; error   : fake "
                      "syntax error");
    return kInvalidPtx;
  }
  auto *m = new Module{current, {}};
  parse(text, *m);
  std::lock_guard<std::mutex> lock(mutex);
  modules.insert(m);
  *module = m;
  return kOk;
}

CUresult cuModuleUnload(Module *module) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!modules.erase(module))
    return kInvalidHandle;
  delete module;
  return kOk;
}

CUresult cuModuleGetFunction(Function **function, Module *module,
                             const char *name) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!modules.count(module))
    return kInvalidHandle;
  auto it = module->functions.find(name);
  if (it == module->functions.end())
    return kNotFound;
  *function = &it->second;
  functions.insert(*function);
  return kOk;
}

CUresult cuFuncGetAttribute(int *value, int attribute, Function *function) {
  if (!functions.count(function))
    return kInvalidHandle;
  static const int values[] = {1024, 0, 0, 16, 24, 80, 90};
  if (attribute < 0 || attribute > 6)
    return kInvalidValue;
  *value = values[attribute];
  return kOk;
}

CUresult cuFuncGetParamInfo(Function *function, size_t index, size_t *offset,
                            size_t *size) {
  if (!functions.count(function))
    return kInvalidHandle;
  if (index >= function->sizes.size())
    return kInvalidValue;
  *offset = offsetsOf(*function)[index];
  if (size)
    *size = function->sizes[index];
  return kOk;
}

CUresult cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        Stream *stream, void **params, void **extra) {
  if (CUresult r = needContext())
    return r;
  if (CUresult r = knownStream(stream))
    return r;
  if (!functions.count(f) || gx * gy * gz == 0 || shared > 49152)
    return kInvalidValue;
  if (uint64_t(bx) * by * bz > 1024 || bx * by * bz == 0)
    return kInvalidValue;
  // Where parameter i is: kernelParams[i], or the packed buffer at its offset.
  std::vector<const void *> args(f->sizes.size());
  if (params) {
    for (size_t i = 0; i < args.size(); ++i)
      args[i] = params[i];
  } else if (extra) {
    const char *buffer = nullptr;
    size_t bytes = 0;
    for (size_t i = 0; extra[i] != nullptr; i += 2) {
      if (extra[i] == reinterpret_cast<void *>(uintptr_t(1)))
        buffer = static_cast<const char *>(extra[i + 1]);
      else if (extra[i] == reinterpret_cast<void *>(uintptr_t(2)))
        bytes = *static_cast<size_t *>(extra[i + 1]);
      else
        return kInvalidValue;
    }
    std::vector<size_t> offsets = offsetsOf(*f);
    size_t end = offsets.empty() ? 0 : offsets.back() + f->sizes.back();
    if (!buffer || bytes != end)
      return kInvalidValue;
    for (size_t i = 0; i < args.size(); ++i)
      args[i] = buffer + offsets[i];
  } else if (!args.empty()) {
    return kInvalidValue;
  }
  if (Graph *graph = capturing(stream)) {
    // The parameters are read now (the caller's buffers do not outlive the
    // call), the kernel runs at each launch of the graph.
    std::vector<std::vector<char>> values;
    for (size_t i = 0; i < args.size(); ++i) {
      const char *p = static_cast<const char *>(args[i]);
      values.emplace_back(p, p + f->sizes[i]);
    }
    Function copy = *f;
    Context *context = current;
    graph->ops->push_back([copy, values, context] {
      std::vector<const void *> pointers;
      for (const auto &v : values)
        pointers.push_back(v.data());
      runKernel(copy, pointers, context);
    });
    return kOk;
  }
  if (isLegacy(stream))
    if (CUresult r = legacyStreamUse(current))
      return r;
  runKernel(*f, args, current);
  return kOk;
}

//===-- stream capture and graphs -------------------------------------===//

CUresult cuStreamBeginCapture_v2(Stream *stream, int mode) {
  if (CUresult r = needContext())
    return r;
  if (isLegacy(stream))
    return kCaptureUnsupported;
  if (CUresult r = knownStream(stream))
    return r;
  if (mode < 0 || mode > 2)
    return kInvalidValue;
  std::lock_guard<std::mutex> lock(mutex);
  if (stream->capture)
    return kIllegalState;
  stream->capture = new Graph{stream->context};
  stream->mode = mode;
  stream->invalidated = false;
  stream->owner = &threadTag;
  return kOk;
}

CUresult cuStreamEndCapture(Stream *stream, Graph **graph) {
  if (CUresult r = knownStream(stream))
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  Graph *captured = stream->capture;
  if (!captured)
    return kIllegalState;
  stream->capture = nullptr;
  if (stream->invalidated) {
    delete captured;
    *graph = nullptr;
    return kCaptureInvalidated;
  }
  graphs.insert(captured);
  *graph = captured;
  return kOk;
}

CUresult cuStreamIsCapturing(Stream *stream, int *status) {
  if (isLegacy(stream)) {
    if (CUresult r = needContext())
      return r;
    *status = 0;
    return kOk;
  }
  if (CUresult r = knownStream(stream))
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  *status = !stream->capture ? 0 : stream->invalidated ? 2 : 1;
  return kOk;
}

CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
  if (*mode < 0 || *mode > 2)
    return kInvalidValue;
  std::swap(threadMode, *mode);
  return kOk;
}

CUresult cuGraphGetNodes(Graph *graph, void **nodes, size_t *count) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!graphs.count(graph))
    return kInvalidHandle;
  if (nodes)
    return kInvalidValue; // (adjit only counts them)
  *count = graph->ops->size();
  return kOk;
}

CUresult cuGraphInstantiateWithFlags(GraphExec **exec, Graph *graph,
                                     unsigned long long flags) {
  if (CUresult r = needContext())
    return r;
  std::lock_guard<std::mutex> lock(mutex);
  if (!graphs.count(graph))
    return kInvalidHandle;
  if (flags != 0)
    return kInvalidValue;
  // (a copy: the graph may be destroyed before its instantiation)
  *exec = new GraphExec{graph->context, std::make_shared<Ops>(*graph->ops)};
  execs.insert(*exec);
  return kOk;
}

CUresult cuGraphLaunch(GraphExec *exec, Stream *stream) {
  if (CUresult r = knownStream(stream))
    return r;
  std::shared_ptr<const Ops> ops;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!execs.count(exec))
      return kInvalidHandle;
    ops = exec->ops;
  }
  if (Graph *graph = capturing(stream)) {
    graph->ops->push_back([ops] {
      for (const auto &op : *ops)
        op();
    });
    return kOk;
  }
  if (isLegacy(stream))
    if (CUresult r = legacyStreamUse(current))
      return r;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++graphLaunches;
  }
  for (const auto &op : *ops)
    op();
  return kOk;
}

CUresult cuGraphExecDestroy(GraphExec *exec) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!execs.erase(exec))
    return kInvalidHandle;
  delete exec;
  return kOk;
}

CUresult cuGraphDestroy(Graph *graph) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!graphs.erase(graph))
    return kInvalidHandle;
  delete graph;
  return kOk;
}

/// For the tests: live allocations, streams, events, modules; launches;
/// context retains.
void fake_cuda_stats(long *out) {
  std::lock_guard<std::mutex> lock(mutex);
  out[0] = long(allocations.size());
  out[1] = long(streams.size());
  out[2] = long(events.size());
  out[3] = long(modules.size());
  out[4] = launches;
  out[5] = retains;
}

/// For the tests: live graphs, live instantiated graphs, graph launches.
void fake_cuda_graph_stats(long *out) {
  std::lock_guard<std::mutex> lock(mutex);
  out[0] = long(graphs.size());
  out[1] = long(execs.size());
  out[2] = graphLaunches;
}

/// For the tests: whether this thread has a current context.
int fake_cuda_has_current() { return current != nullptr; }

} // extern "C"
