//===- CudaDriver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// adjit's way to a GPU: the CUDA driver API (libcuda.so.1), opened with
// dlopen the first time something asks for it, so that building and
// importing adjit need no CUDA and a machine without a GPU runs as before.
// No CUDA header is used: CudaDriver.cpp declares the handful of types,
// constants and entry points it calls.
//
// What it gives: the devices and their properties; one primary context per
// device, retained on first use and made current on the calling thread for
// each call (the thread's previous context is restored after); memory,
// copies and memset; streams (a default one per device) and events; modules
// loaded from PTX (with the JIT's error log on failure) or a cubin; kernel
// launches with packed parameters; stream capture into CUDA graphs, and
// their launch.
//
// Every driver call is checked. A failure throws CudaError naming the call,
// the driver's error name and message, and what it was doing; a launch's
// names the kernel (the caller's label: name and file:line). Faults in
// kernels are reported by the driver at a later call (a synchronize, a copy):
// those errors ("sticky": the context cannot be used again) also name the
// last kernel launched on the device.
//
// Thread-safe. Nothing touches the driver before the first call, and no
// call crashes where there is no driver: the functions that need one throw
// CudaUnavailable with the reason (dlopen's message, a missing entry point,
// cuInit's error, no device).
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_CUDADRIVER_H
#define ADJIT_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace adjit {
namespace runtime {
namespace cuda {

// The driver's opaque handles (CUmodule, CUfunction, CUstream, CUevent).
struct OpaqueModule;
struct OpaqueFunction;
struct OpaqueStream;
struct OpaqueEvent;
struct OpaqueGraph;
struct OpaqueGraphExec;
using ModuleHandle = OpaqueModule *;
using FunctionHandle = OpaqueFunction *;
using StreamHandle = OpaqueStream *; ///< nullptr: the legacy default stream
using EventHandle = OpaqueEvent *;
using GraphHandle = OpaqueGraph *;         ///< CUgraph
using GraphExecHandle = OpaqueGraphExec *; ///< CUgraphExec
using DevicePtr = uint64_t; ///< CUdeviceptr

/// A driver call that failed: what() says which call, the driver's error
/// name and message, and what was being done.
class CudaError : public std::runtime_error {
public:
  CudaError(std::string call, int code, const std::string &message)
      : std::runtime_error(message), call_(std::move(call)), code_(code) {}
  const std::string &call() const { return call_; }
  int code() const { return code_; }

private:
  std::string call_;
  int code_;
};

/// CUDA is not usable in this process; what() says why.
class CudaUnavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The driver library opened: $ADJIT_CUDA_DRIVER, else "libcuda.so.1".
std::string driverLibraryName();
/// "" where the driver is usable (at least one device); else why not:
/// dlopen's message, a missing entry point, cuInit's error, no device, or
/// a process forked after CUDA was initialized. Loads the driver the first
/// time (thread-safe); never throws.
std::string unavailableReason();
/// How many CUDA devices (0 where unavailable).
int deviceCount();
/// cuDriverGetVersion (e.g. 13000 for CUDA 13.0); 0 where unavailable.
int driverVersion();

struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0; ///< compute capability
  size_t totalMemory = 0;
  int multiprocessors = 0;
  int maxThreadsPerBlock = 0;
  int warpSize = 0;
  int maxSharedMemoryPerBlockOptin = 0;
  bool unifiedAddressing = false;
  bool memoryPools = false; ///< cuMemAllocAsync works on this device
  std::string pciBusId;     ///< "0000:41:00" (domain:bus:device, hex)
};
DeviceProperties deviceProperties(int ordinal);

/// The device's free and total memory in bytes (retains its context).
std::pair<size_t, size_t> memoryInfo(int ordinal);

/// Makes `ordinal`'s primary context current on this thread (retaining it
/// on first use), and the previous context current again at the end.
class ScopedContext {
public:
  explicit ScopedContext(int ordinal);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  void *saved_;
  bool restore_;
};

/// Makes `ordinal`'s primary context current on this thread (set_device).
void makeCurrent(int ordinal);
/// Whether `ordinal`'s primary context was retained by this process.
bool hasContext(int ordinal);
/// Waits for all work on the device (cuCtxSynchronize).
void synchronizeDevice(int ordinal);
/// Waits for all work on every device whose context was retained.
void synchronizeAll();

/// cuCtxSetLimit / cuCtxGetLimit: 0 stack size per thread, 1 printf FIFO
/// size, 2 malloc heap size (CUlimit's values).
void setLimit(int ordinal, int limit, size_t value);
size_t getLimit(int ordinal, int limit);

//===-- memory --------------------------------------------------------===//

/// `bytes` of device memory (0 bytes: 0, no allocation). With a stream and
/// a device that has memory pools, stream-ordered (cuMemAllocAsync), except
/// while a capture is open on the device (see captureOpen): then
/// `streamOrdered` is set to false and the memory is cuMemAlloc's (a
/// stream-ordered allocation in a capture would be a node of the graph).
DevicePtr allocate(int ordinal, size_t bytes, StreamHandle stream,
                   bool &streamOrdered);
DevicePtr allocate(int ordinal, size_t bytes);
/// Frees what allocate returned (0: nothing), on `stream` where it was
/// stream-ordered. While a capture is open on the device the free waits
/// until the last one ends (freeing would end the capture: cuMemFree
/// synchronizes, and a stream-ordered free would be a node of the graph).
void release(int ordinal, DevicePtr ptr, StreamHandle stream = nullptr,
             bool streamOrdered = false);

/// Copies host memory into device memory now, on a private non-blocking
/// stream, so that it may be called while another stream of the device is
/// being captured (the copy is not part of the capture): how values known
/// on the host at capture time reach the device memory a graph reads.
void stageToDevice(int ordinal, DevicePtr dst, const void *src, size_t bytes);

/// Copies. `async`: queued on `stream` (from pageable host memory the
/// driver stages the bytes before it returns; to pageable host memory it
/// returns when the copy is done); else done when the call returns.
void copyToDevice(int ordinal, DevicePtr dst, const void *src, size_t bytes,
                  StreamHandle stream = nullptr, bool async = false);
void copyToHost(int ordinal, void *dst, DevicePtr src, size_t bytes,
                StreamHandle stream = nullptr, bool async = false);
void copyOnDevice(int ordinal, DevicePtr dst, DevicePtr src, size_t bytes,
                  StreamHandle stream = nullptr, bool async = false);
void memsetBytes(int ordinal, DevicePtr dst, unsigned char value, size_t bytes,
                 StreamHandle stream = nullptr, bool async = false);

//===-- streams and events --------------------------------------------===//

/// The device's default stream: created with its context, never destroyed.
StreamHandle defaultStream(int ordinal);
/// A new stream; priority -1 (high) or 0 (the default).
StreamHandle createStream(int ordinal, int priority = 0);
void destroyStream(int ordinal, StreamHandle stream) noexcept;
void synchronizeStream(int ordinal, StreamHandle stream);
/// Whether all work queued on the stream is done (cuStreamQuery).
bool streamIsComplete(int ordinal, StreamHandle stream);
int streamPriority(int ordinal, StreamHandle stream);
/// Work queued on `stream` after this waits for `event` (no host wait).
void streamWaitEvent(int ordinal, StreamHandle stream, EventHandle event);

EventHandle createEvent(int ordinal, bool timing = false,
                        bool blockingSync = false);
void destroyEvent(int ordinal, EventHandle event) noexcept;
void recordEvent(int ordinal, EventHandle event, StreamHandle stream);
void synchronizeEvent(int ordinal, EventHandle event);
bool eventIsComplete(int ordinal, EventHandle event);
/// Milliseconds between two recorded events created with timing.
float elapsedMs(int ordinal, EventHandle start, EventHandle end);

//===-- stream capture and graphs -------------------------------------===//
//
// Capture (cuStreamBeginCapture_v2 ... cuStreamEndCapture) records the
// launches, copies and memsets queued on a stream into a graph instead of
// running them; the graph is instantiated once and launched as one call.
// The entry points are looked up where the driver has them (CUDA 11.4 and
// later); without them these functions throw CudaUnavailable.

/// Whether the driver has the capture and graph entry points.
bool graphsSupported();
/// CUstreamCaptureMode: 0 global, 1 thread-local, 2 relaxed.
void beginCapture(int ordinal, StreamHandle stream, int mode);
/// Ends the capture on `stream`; its graph (CudaError where the capture
/// was invalidated, e.g. by a synchronizing call on the capturing thread).
GraphHandle endCapture(int ordinal, StreamHandle stream);
/// CUstreamCaptureStatus: 0 not capturing, 1 capturing, 2 invalidated.
int captureStatus(int ordinal, StreamHandle stream);
/// Whether a capture begun by beginCapture is open on the device.
bool captureOpen(int ordinal);
/// How many nodes the graph has.
size_t graphNodeCount(int ordinal, GraphHandle graph);
GraphExecHandle instantiateGraph(int ordinal, GraphHandle graph);
/// Launches the instantiated graph on `stream`; `label` names it in errors,
/// now and in a later fault's (as a kernel launch's label does).
void launchGraph(int ordinal, GraphExecHandle exec, StreamHandle stream,
                 const std::string &label);
void destroyGraphExec(int ordinal, GraphExecHandle exec) noexcept;
void destroyGraph(int ordinal, GraphHandle graph) noexcept;

//===-- modules and launches ------------------------------------------===//

/// Loads a module from a PTX text (NUL-terminated here) or a cubin image.
/// A failure's message has the JIT's error log. `label` names the module
/// in errors.
ModuleHandle loadModule(int ordinal, const void *image, size_t bytes,
                        const std::string &label);
void unloadModule(int ordinal, ModuleHandle module) noexcept;
FunctionHandle getFunction(int ordinal, ModuleHandle module,
                           const std::string &name);

struct FunctionAttributes {
  int maxThreadsPerBlock = 0;
  int sharedBytes = 0; ///< static shared memory
  int constBytes = 0;
  int localBytes = 0; ///< per thread: the stack
  int registers = 0;
  int ptxVersion = 0, binaryVersion = 0;
};
FunctionAttributes functionAttributes(int ordinal, FunctionHandle function);

struct ParamInfo {
  size_t offset, size;
};
/// Each kernel parameter's offset and size in the device's layout, where
/// the driver says (cuFuncGetParamInfo, CUDA 12.4 and later); `known` is
/// false elsewhere.
std::vector<ParamInfo> parameterLayout(int ordinal, FunctionHandle function,
                                       bool &known);

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  StreamHandle stream = nullptr;
};

/// Launches with one pointer per parameter (cuLaunchKernel's kernelParams):
/// the driver reads each parameter's size from the kernel. `label` names the
/// kernel (and its file:line) in errors, now and in a later asynchronous
/// fault's.
void launchKernel(int ordinal, FunctionHandle function,
                  const LaunchConfig &config, void **params,
                  const std::string &label);
/// Launches with all parameters packed in one buffer laid out as the kernel
/// expects (CU_LAUNCH_PARAM_BUFFER_POINTER).
void launchKernelPacked(int ordinal, FunctionHandle function,
                        const LaunchConfig &config, const void *buffer,
                        size_t bytes, const std::string &label);
/// The label of the last kernel launched on the device ("" if none).
std::string lastLaunch(int ordinal);

} // namespace cuda
} // namespace runtime
} // namespace adjit

#endif // ADJIT_RUNTIME_CUDADRIVER_H
