"""CUDA streams, events and device memory (Warp's names), and what the CUDA
backend calls: modules loaded from PTX, kernels launched with packed
parameters, the error record read back.

All of it is the C++ runtime's CUDA driver layer (``adjit._runtime.cuda``,
cpp/runtime/CudaDriver.h): every driver call is checked, and a failure
raises ``CudaError`` (a RuntimeError) naming the call, the driver's error
and what was being done; a kernel fault, which the driver reports at a later
call (a synchronize, a copy), also names the last kernel launched on the
device. Where CUDA is unavailable, asking for a CUDA device raises a
ValueError with the reason (see adjit.device).

Public (Warp's): ``Stream``, ``Event``, ``ScopedStream``, ``get_stream``,
``set_stream``, ``wait_stream``, ``wait_event``, ``record_event``,
``get_event_elapsed_time``, ``synchronize_stream``, ``synchronize_event``.
Internal, for the CUDA backend: ``DeviceBuffer``, ``load_module``,
``KernelParams``, ``launch_kernel``, ``ErrorRecord``, ``set_stack_size``.
"""
from __future__ import annotations

import math
import re
import struct
import threading

import numpy as np

from .. import _runtime
from .. import device as _device
from ..device import Device, get_device
from . import capture as _capture

_cuda = _runtime.cuda

#: A failed CUDA driver call (a RuntimeError).
CudaError = _cuda.CudaError
#: CUDA cannot be used in this process (a RuntimeError; asking for a CUDA
#: device raises ValueError first).
CudaUnavailableError = _cuda.CudaUnavailableError


def _cuda_device(device, what: str) -> Device:
    """The CUDA device ``device`` names (None: the default device); Warp's
    RuntimeError for a device that is not a CUDA device."""
    d = get_device(device)
    if not d.is_cuda:
        reason = _device.cuda_unavailable_reason()
        why = f" (CUDA is not available here: {reason})" if reason else " (name a CUDA device, e.g. 'cuda:0')"
        raise RuntimeError(f"{what}: device {d} is not a CUDA device{why}")
    return d


class Event:
    """A CUDA event, recorded on a stream (``Stream.record_event``) for
    another stream or the host to wait for, or to time the work between two
    (``enable_timing``)."""

    class Flags:
        DEFAULT = 0x0
        BLOCKING_SYNC = 0x1
        DISABLE_TIMING = 0x2
        INTERPROCESS = 0x4

    def __init__(self, device=None, cuda_event=None, enable_timing: bool = False, interprocess: bool = False):
        self.device = _cuda_device(device, "Event")
        if interprocess and enable_timing:
            raise ValueError("The combination of 'enable_timing=True' and 'interprocess=True' is not allowed.")
        if interprocess or cuda_event is not None:
            raise NotImplementedError("Event: interprocess events and events created elsewhere (cuda_event=) are "
                                      "not supported by adjit yet")
        self.enable_timing = enable_timing
        self._event = _cuda.Event(self.device.ordinal, enable_timing)

    @property
    def cuda_event(self) -> int:
        """The CUevent handle."""
        return self._event.handle

    @property
    def is_complete(self) -> bool:
        """Whether the work recorded before this event is done."""
        return self._event.is_complete

    def ipc_handle(self) -> bytes:
        raise NotImplementedError("Event.ipc_handle: interprocess events are not supported by adjit yet")

    def __repr__(self) -> str:
        return f"<adjit Event on '{self.device}'>"


class Stream:
    """A CUDA stream: work queued on it runs in order, and after what it was
    told to wait for (``wait_event``, ``wait_stream``)."""

    def __init__(self, device=None, priority: int = 0, **kwargs):
        self._cached_event = None
        self.device = _cuda_device(device, "Stream")
        unknown = set(kwargs) - {"cuda_stream"}
        if unknown:
            raise TypeError(f"Stream() got unexpected keyword arguments {sorted(unknown)}")
        if "cuda_stream" in kwargs:  # a stream created elsewhere, not destroyed here
            self._stream = _cuda.Stream.wrap(self.device.ordinal, int(kwargs["cuda_stream"] or 0))
            return
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError("Stream priority must be an integer.")
        self._stream = _cuda.Stream(self.device.ordinal, max(-1, min(priority, 0)))

    @classmethod
    def _default(cls, device: Device) -> "Stream":
        """The device's default stream (the C++ layer's: never destroyed)."""
        stream = cls.__new__(cls)
        stream._cached_event = None
        stream.device = device
        stream._stream = _cuda.Stream.default(device.ordinal)
        return stream

    @property
    def cuda_stream(self) -> int:
        """The CUstream handle (0: the legacy default stream)."""
        return self._stream.handle

    def __cuda_stream__(self):
        return (0, self.cuda_stream)

    @property
    def cached_event(self) -> Event:
        if self._cached_event is None:
            self._cached_event = Event(self.device)
        return self._cached_event

    def record_event(self, event: Event | None = None, external: bool = False) -> Event:
        """Records ``event`` (a new one if None) on this stream and returns it."""
        if event is None:
            event = Event(self.device)
        elif event.device != self.device:
            raise RuntimeError(f"Event from device {event.device} cannot be recorded on stream from device "
                               f"{self.device}")
        self._stream.record_event(event._event)
        return event

    def wait_event(self, event: Event, external: bool = False) -> None:
        """Work queued on this stream from now on waits for ``event`` (the
        host does not wait)."""
        self._stream.wait_event(event._event)

    def wait_stream(self, other_stream: "Stream", event: Event | None = None, external: bool = False) -> None:
        """Work queued on this stream from now on waits for the work queued
        on ``other_stream`` so far (an event recorded there)."""
        if event is None:
            event = other_stream.cached_event
        other_stream.record_event(event)
        self.wait_event(event)

    def synchronize(self) -> None:
        """Waits (on the host) for the work queued on this stream."""
        native = _capture.native_capture(self.device.ordinal)
        if native is not None and native.stream == self:
            _capture.refuse("synchronizing the stream being captured", self.device.ordinal)
        self._stream.synchronize()

    @property
    def is_complete(self) -> bool:
        return self._stream.is_complete

    @property
    def is_capturing(self) -> bool:
        """Whether a CUDA graph capture of this stream is open (cuStreamIsCapturing)."""
        if not _cuda.graphs_supported():
            return False
        return _cuda.capture_status(self.device.ordinal, self.cuda_stream) != 0

    @property
    def is_blocking(self) -> bool:
        """True: adjit's streams synchronize with the legacy default stream."""
        return True

    @property
    def priority(self) -> int:
        return self._stream.priority

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream and other.device == self.device

    def __hash__(self) -> int:
        return hash((self.device.alias, self.cuda_stream))

    def __repr__(self) -> str:
        return f"<adjit Stream on '{self.device}'>"


_device._register_stream_type(Stream)


class ScopedStream:
    """``with ScopedStream(stream):``: ``stream`` is its device's current
    stream (and the device the default) inside the block. ``sync_enter``:
    it first waits for the previous stream's work; ``sync_exit``: the
    previous stream waits for its work after."""

    def __init__(self, stream: Stream | None, sync_enter: bool = True, sync_exit: bool = False):
        self.stream = stream
        self.sync_enter = sync_enter
        self.sync_exit = sync_exit
        if stream is not None:
            self.device = stream.device
            self.device_scope = _device.ScopedDevice(self.device)

    def __enter__(self) -> Stream | None:
        if self.stream is not None:
            self.device_scope.__enter__()
            self.saved_stream = self.device.stream
            self.device.set_stream(self.stream, self.sync_enter)
        return self.stream

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            self.device.set_stream(self.saved_stream, self.sync_exit)
            self.device_scope.__exit__(*exc)


def get_stream(device=None) -> Stream:
    """The current stream of ``device`` (default: the default device);
    RuntimeError for the CPU."""
    return _cuda_device(device, "get_stream").stream


def set_stream(stream: Stream, device=None, sync: bool = False) -> None:
    """Makes ``stream`` the current stream of ``device`` (default: the
    default device)."""
    _cuda_device(device, "set_stream").set_stream(stream, sync=sync)


def record_event(event: Event | None = None, external: bool = False) -> Event:
    """Records ``event`` (a new one if None) on the current stream."""
    return get_stream().record_event(event, external=external)


def wait_event(event: Event, external: bool = False) -> None:
    """The current stream waits for ``event``."""
    get_stream().wait_event(event, external=external)


def wait_stream(other_stream: Stream, event: Event | None = None, external: bool = False) -> None:
    """The current stream waits for the work queued on ``other_stream``."""
    get_stream().wait_stream(other_stream, event=event, external=external)


def synchronize_stream(stream_or_device=None) -> None:
    """Waits (on the host) for a stream's work, or a device's current
    stream's; nothing for the CPU."""
    if isinstance(stream_or_device, Stream):
        stream_or_device.synchronize()
        return
    device = get_device(stream_or_device)
    if device.is_cuda:
        device.stream.synchronize()


def synchronize_event(event: Event) -> None:
    """Waits (on the host) for the work recorded before ``event``."""
    event._event.synchronize()


def get_event_elapsed_time(start_event: Event, end_event: Event, synchronize: bool = True) -> float:
    """Milliseconds between two recorded events (created with
    ``enable_timing=True``); waits for ``end_event`` first with
    ``synchronize``."""
    if synchronize:
        synchronize_event(end_event)
    return start_event._event.elapsed_ms(end_event._event)


#
# Internal: what the CUDA backend calls.
#

def _stream_handle(stream, device: Device) -> int:
    """A stream argument's handle: a Stream, or None for the device's current stream."""
    if stream is None:
        return device.stream.cuda_stream
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be an adjit.Stream or None, got {type(stream).__name__}")
    if stream.device != device:
        raise ValueError(f"the stream is on {stream.device}, not {device}")
    return stream.cuda_stream


class DeviceBuffer:
    """``nbytes`` of memory on a CUDA device, freed when this object is
    collected (or by ``free()``). Copies are queued on ``stream`` (None: the
    device's current stream); ``numpy()`` and ``copy_to`` wait for theirs."""

    def __init__(self, nbytes: int, device=None):
        self.device = _cuda_device(device, "DeviceBuffer")
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"DeviceBuffer: nbytes must be >= 0, got {nbytes}")
        self._allocation = _cuda.DeviceAllocation(self.device.ordinal, nbytes)

    @classmethod
    def from_numpy(cls, array, device=None, stream=None) -> "DeviceBuffer":
        """A buffer holding a copy of ``array``'s bytes."""
        array = np.ascontiguousarray(array)
        buffer = cls(array.nbytes, device)
        buffer.copy_from(array, stream=stream)
        return buffer

    @property
    def ptr(self) -> int:
        """The device address (0 for 0 bytes)."""
        return self._allocation.ptr

    @property
    def nbytes(self) -> int:
        return self._allocation.nbytes

    def copy_from(self, source, offset: int = 0, stream=None) -> None:
        """Copies a host array (C-contiguous: a copy is made otherwise) or
        another DeviceBuffer (all of it) in at byte ``offset``."""
        handle = _stream_handle(stream, self.device)
        if isinstance(source, DeviceBuffer):
            self._allocation.copy_from(source._allocation, source.nbytes, offset, 0, handle, True)
            return
        self._allocation.copy_from_host(np.ascontiguousarray(source), offset, handle, True)

    def copy_to(self, out: np.ndarray, offset: int = 0, stream=None) -> np.ndarray:
        """Copies ``out.nbytes`` from byte ``offset`` into the C-contiguous
        host array ``out`` after the stream's earlier work; returns ``out``
        once the copy is done."""
        if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("DeviceBuffer.copy_to needs a writeable C-contiguous numpy array")
        handle = _stream_handle(stream, self.device)
        self._allocation.copy_to_host(out, offset, handle, True)
        _cuda.Stream.wrap(self.device.ordinal, handle).synchronize()
        return out

    def numpy(self, dtype=np.uint8, shape=None, stream=None) -> np.ndarray:
        """The buffer's bytes as a new host array of ``dtype`` (and ``shape``)."""
        dtype = np.dtype(dtype)
        if shape is None:
            shape = (self.nbytes // dtype.itemsize,)
        out = np.empty(shape, dtype)
        return self.copy_to(out, stream=stream)

    def zero_(self, stream=None) -> None:
        """Sets every byte to 0."""
        self._allocation.fill(0, _stream_handle(stream, self.device), True)

    def free(self) -> None:
        """Frees the memory now."""
        self._allocation.free()

    def __repr__(self) -> str:
        return f"<adjit DeviceBuffer of {self.nbytes} bytes on '{self.device}'>"


#: Modules loaded by the backend: (device alias, key) -> module.
_modules: dict = {}
_modules_lock = threading.Lock()


def load_module(device, key, image, label: str | None = None):
    """The CUDA module of ``image`` (PTX text, or a cubin's bytes) loaded on
    ``device``, once per (device, ``key``); later calls with the key return
    it. Returns ``adjit._runtime.cuda.Module``: ``.function(name)`` gives a
    kernel (``Function``: ``.launch``, ``.attributes``,
    ``.parameter_layout``). A PTX that does not load raises CudaError with
    the JIT's log; ``label`` names the module there."""
    d = _cuda_device(device, "load_module")
    with _modules_lock:
        module = _modules.get((d.alias, key))
        if module is None:
            data = image.encode() if isinstance(image, str) else bytes(image)
            if _HEAP_USE.search(data):
                _size_heap(d.ordinal)
            module = _cuda.Module(d.ordinal, data, label or repr(key))
            _modules[d.alias, key] = module
        return module


#: How a PTX declares the device heap's malloc (adjit-gpu-loop-buffers: long loops' checkpoints).
_HEAP_USE = re.compile(rb"\.extern\s+\.func\s+\(\.param\s+\.b64\s+func_retval0\)\s+malloc\b")
#: The record's site word of a thread that found no device heap (ErrorRecord.h).
HEAP_EXHAUSTED = _runtime.HEAP_EXHAUSTED
#: CUlimit's CU_LIMIT_MALLOC_HEAP_SIZE.
LIMIT_MALLOC_HEAP_SIZE = 2
_heap_sized: set = set()


def _size_heap(ordinal: int) -> None:
    """Sets the device heap of device ``ordinal`` to ``config.cuda_heap_bytes``
    before its first kernel that uses the heap is loaded (the driver fixes
    the heap's size once such a kernel has run)."""
    if ordinal in _heap_sized:
        return
    from .. import config
    if _cuda.get_limit(ordinal, LIMIT_MALLOC_HEAP_SIZE) < config.cuda_heap_bytes:
        _cuda.set_limit(ordinal, LIMIT_MALLOC_HEAP_SIZE, int(config.cuda_heap_bytes))
    _heap_sized.add(ordinal)


def heap_bytes(device) -> int:
    """Bytes of device heap of ``device`` (cuCtxGetLimit): where threads keep
    the checkpoints of runtime loops that do not fit their frame."""
    return _cuda.get_limit(_cuda_device(device, "heap_bytes").ordinal, LIMIT_MALLOC_HEAP_SIZE)


def unload_modules() -> None:
    """Forgets the loaded modules (each is unloaded when no function of it is left)."""
    with _modules_lock:
        _modules.clear()


class KernelParams:
    """Packs a launch's parameters, one value per kernel parameter in the
    kernel's order, each at an offset aligned to its size. ``array`` adds
    an array as the GPU lowering passes it (MLIR's memref descriptor
    expanded: allocated and aligned pointers, offset, sizes, strides); the
    launch's total, extents and error record end adjit's kernels' lists."""

    def __init__(self):
        self._data = bytearray()
        self.offsets: list[int] = []

    def value(self, data: bytes, align: int | None = None) -> "KernelParams":
        """A parameter of ``len(data)`` bytes (a scalar, vector or matrix value)."""
        size = len(data)
        align = align or (8 if size >= 8 else 4 if size >= 4 else 2 if size >= 2 else 1)
        offset = -len(self._data) % align + len(self._data)
        self._data.extend(b"\0" * (offset - len(self._data)))
        self.offsets.append(offset)
        self._data.extend(data)
        return self

    def u64(self, value: int) -> "KernelParams":
        return self.value(struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF))

    def i64(self, value: int) -> "KernelParams":
        return self.value(struct.pack("<q", value))

    def i32(self, value: int) -> "KernelParams":
        return self.value(struct.pack("<i", value))

    def u32(self, value: int) -> "KernelParams":
        return self.value(struct.pack("<I", value))

    def f32(self, value: float) -> "KernelParams":
        return self.value(struct.pack("<f", value))

    def f64(self, value: float) -> "KernelParams":
        return self.value(struct.pack("<d", value))

    def array(self, ptr: int, shape, strides=None, offset: int = 0) -> "KernelParams":
        """An array at device address ``ptr``; ``strides`` in elements
        (default: C-contiguous)."""
        shape = tuple(int(s) for s in shape)
        if strides is None:
            strides, step = [], 1
            for extent in reversed(shape):
                strides.insert(0, step)
                step *= extent
        for word in (ptr, ptr, offset, *shape, *strides):
            self.i64(int(word))
        return self

    @property
    def data(self) -> bytes:
        return bytes(self._data)


def launch_kernel(function, total: int, params: KernelParams, stream=None, block_dim: int = 256,
                  shared_bytes: int = 0, label: str = "") -> None:
    """Launches ``function`` (from ``load_module(...).function(name)``) over
    ``total`` threads in blocks of ``block_dim`` on ``stream`` (None: the
    device's current stream). ``label`` names the kernel (and its
    file:line) in errors, now or when a fault is reported later."""
    device = get_device(f"cuda:{function.ordinal}")
    if block_dim < 1:
        raise ValueError(f"block_dim must be positive, got {block_dim}")
    grid = max(1, math.ceil(total / block_dim))
    if grid > 0x7FFFFFFF:
        raise ValueError(f"{total} threads in blocks of {block_dim}: more blocks than a launch can have")
    function.launch((grid, 1, 1), (block_dim, 1, 1), params.data, params.offsets,
                    _stream_handle(stream, device), shared_bytes, label)


#: The error record's words (cpp/runtime/ErrorRecord.h).
_RECORD = _runtime.ERROR_RECORD


def _record_words(ranges=()) -> np.ndarray:
    if len(ranges) > _RECORD["max_ranged"]:
        raise ValueError(f"at most {_RECORD['max_ranged']} index ranges per launch")
    words = np.zeros(_RECORD["words"], np.int64)
    for slot, (lo, hi) in enumerate(ranges):
        words[_RECORD["ranges"] + 2 * slot:_RECORD["ranges"] + 2 * slot + 2] = (lo, hi)
    return words


def _decode_record(w: np.ndarray):
    """None, or the first failed check as (site, thread, indices, sizes),
    as ``adjit._runtime.launch_cpu`` reports it; site HEAP_EXHAUSTED: a
    thread found no device heap for a loop's checkpoints (indices[0]: the
    bytes it asked for)."""
    if w[0] == 0:
        return None
    if w[0] == _runtime.LAUNCH_UNPROVEN:
        return int(w[0])
    index, size = _RECORD["index"], _RECORD["size"]
    rank = _RECORD["max_rank"]
    site = int(w[_RECORD["site"]])
    return (site if site == HEAP_EXHAUSTED else site - 1, int(w[_RECORD["thread"]]),
            tuple(int(x) for x in w[index:index + rank]),
            tuple(int(x) for x in w[size:size + rank]))


class ErrorRecord:
    """A launch's error record on the device (cpp/runtime/ErrorRecord.h): the
    first failed check's words, filled in by the kernel, after the index
    arrays' (min, max) ``ranges`` that the launch condition reads."""

    def __init__(self, device, ranges=(), stream=None):
        words = _record_words(ranges)
        self.buffer = DeviceBuffer(words.nbytes, device)
        self.buffer.copy_from(words, stream=stream)

    @property
    def ptr(self) -> int:
        return self.buffer.ptr

    def read(self, stream=None) -> np.ndarray:
        """The record's words, after the stream's work (waits for it)."""
        return self.buffer.numpy(np.int64, stream=stream)

    def failure(self, stream=None):
        """None, or the first failed check as (site, thread, indices, sizes),
        as ``adjit._runtime.launch_cpu`` reports it (-1 for site: the
        launch condition did not hold)."""
        return _decode_record(self.read(stream))


class _RecordPool:
    """The error records of a device's launches since the last check: one
    slot each in one device buffer, read back together (one copy) at the
    next synchronize, copy to the host or when the slots run out. A
    launch's failed check is raised then (``report(failure)`` makes the
    exception), as a kernel fault is (see ``check_pending_failures``)."""

    SLOTS = 1024

    def __init__(self, ordinal: int):
        self.ordinal = ordinal
        self.nbytes = _RECORD["words"] * 8
        self.memory = _cuda.DeviceAllocation(ordinal, self.SLOTS * self.nbytes)
        self.memory.fill(0)
        self.pending: list = []  # (slot, report)
        #: Held from taking a slot until the launch is queued, and by checks.
        self.lock = threading.RLock()

    def take(self, ranges, report, stream: int) -> int:
        """A zeroed slot holding ``ranges`` for a launch queued on ``stream``;
        its address. The caller holds ``lock`` until the launch is queued, so
        a check (another thread's synchronize) cannot read the slot before."""
        if len(self.pending) == self.SLOTS:
            self.check()  # (all in use: read them back, then take the first)
        slot = len(self.pending)
        self.pending.append((slot, report))
        if ranges:
            self.memory.copy_from_host(_record_words(ranges), slot * self.nbytes, stream, True)
        return self.memory.ptr + slot * self.nbytes

    def check(self) -> None:
        """Waits for the device, reads the slots in use and frees them;
        raises the first failure."""
        with self.lock:
            pending = self.pending
            if not pending:
                return
            _cuda.synchronize_device(self.ordinal)
            words = np.empty((len(pending), _RECORD["words"]), np.int64)
            self.memory.copy_to_host(words, 0, 0, False)
            self.memory.fill(0, 0, False, 0, len(pending) * self.nbytes)
            self.pending = []
        # (only the slots whose first word is set hold a failure: the others are not decoded one by one)
        for slot in np.flatnonzero(words[:, 0]):
            failure = _decode_record(words[slot])
            if failure is not None:
                raise pending[slot][1](failure)


class GraphRecords:
    """The error records of the launches in a CUDA graph (runtime/capture.py):
    a slot each, in device memory the graph owns, taken at capture time. A
    launch's index ranges (its launch condition) are set before it at each
    replay by a copy the graph holds (from its words, staged at capture
    time). After each replay (``replayed``) the slots are read back at the
    next check, and zeroed, as ``_RecordPool``'s are."""

    SLOTS = 256  # per chunk of device memory

    def __init__(self, ordinal: int):
        self.ordinal = ordinal
        self.nbytes = _RECORD["words"] * 8
        self.chunks: list = []
        self.slots: list = []  # (chunk, slot, report)
        self.templates: list = []  # the staged range words
        self.lock = threading.RLock()

    def take(self, ranges, report, stream: int) -> int:
        """A slot for a launch being captured on ``stream``; its address."""
        chunk, slot = divmod(len(self.slots), self.SLOTS)
        if chunk == len(self.chunks):
            self.chunks.append(stage(self.ordinal, np.zeros(self.SLOTS * _RECORD["words"], np.int64), keep=False))
        memory = self.chunks[chunk]
        self.slots.append((chunk, slot, report))
        if ranges:
            # (only the range words: a failure a replay left stays until it is read)
            words = _record_words(ranges)[_RECORD["ranges"]:_RECORD["ranges"] + 2 * len(ranges)]
            template = stage(self.ordinal, words, keep=False)
            self.templates.append(template)
            memory.copy_from(template, words.nbytes, slot * self.nbytes + 8 * _RECORD["ranges"], 0, stream, True)
        return memory.ptr + slot * self.nbytes

    def check(self) -> None:
        """Reads the slots back (the device was synchronized) and zeroes them;
        raises the first failure."""
        failure = None
        with self.lock:
            for chunk, memory in enumerate(self.chunks):
                words = np.empty((self.SLOTS, _RECORD["words"]), np.int64)
                memory.copy_to_host(words, 0, 0, False)
                memory.fill(0, 0, False)
                for c, slot, report in self.slots:
                    if c == chunk and failure is None:
                        found = _decode_record(words[slot])
                        if found is not None:
                            failure = report(found)
        if failure is not None:
            raise failure


#: The graphs replayed on each device since its last check: {ordinal: {id: GraphRecords}}.
_replayed: dict[int, dict] = {}
_replayed_lock = threading.Lock()


def replayed(records: GraphRecords) -> None:
    """A CUDA graph with these records was launched: they are read at the next check."""
    with _replayed_lock:
        _replayed.setdefault(records.ordinal, {})[id(records)] = records


def stage(ordinal: int, host: np.ndarray, keep: bool = True):
    """Device memory holding a copy of the host array's bytes, made now
    (``_runtime.cuda.stage_to_device``: allowed during a capture). ``keep``:
    the CUDA graph being captured on this thread keeps it alive."""
    host = np.ascontiguousarray(host)
    memory = _cuda.DeviceAllocation(ordinal, max(host.nbytes, 1))
    _cuda.stage_to_device(ordinal, memory.ptr, host)
    if keep:
        native = _capture.native_capture(ordinal)
        if native is not None:
            native.keep.append(memory)
    return memory


_pools: dict[int, _RecordPool] = {}
_pools_lock = threading.Lock()


def record_pool(ordinal: int) -> _RecordPool:
    """The error records of the launches on device ``ordinal``: a launch
    holds ``pool.lock`` while it takes a slot (``pool.take``) and is queued.
    In a CUDA graph capture on this thread, the graph's records."""
    if _capture._open:
        native = _capture.native_capture(ordinal)
        if native is not None:
            return native.records
    pool = _pools.get(ordinal)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(ordinal) or _pools.setdefault(ordinal, _RecordPool(ordinal))
    return pool


def check_pending_failures(ordinal: int | None = None) -> None:
    """Raises the first failed check of the launches on device ``ordinal``
    (None: every device) since the last check, waiting for them (and of the
    CUDA graphs replayed there). Nothing while this thread is capturing a
    CUDA graph (nothing can be waited for then: debug mode's check after
    each launch)."""
    if _capture._open and _capture.native_capture() is not None:
        return
    for o, pool in list(_pools.items()):
        if ordinal is None or o == ordinal:
            pool.check()
    if _replayed:
        for o in list(_replayed):
            if ordinal is None or o == ordinal:
                with _replayed_lock:
                    graphs = list(_replayed.pop(o, {}).values())
                if graphs:
                    _cuda.synchronize_device(o)
                failure = None
                for records in graphs:
                    try:
                        records.check()
                    except Exception as e:  # (every graph's slots are read and zeroed)
                        failure = failure or e
                if failure is not None:
                    raise failure


_device.synchronized = check_pending_failures
_device.synchronizing = _capture.refuse
_capture._cuda_runtime.GraphRecords = GraphRecords
_capture._cuda_runtime.replayed = replayed
_capture._cuda_runtime.check_pending_failures = check_pending_failures


#: A parameter's declaration: ``.param [.align N] .TYPE [.ptr .align M] NAME[[COUNT]]``
#: (the alignment before the type is the parameter's; ``.ptr .align M`` is the pointee's).
_PARAM = re.compile(r"\s*\.param\s+(?:\.align\s+(\d+)\s+)?\.([a-z]+)(\d*)\b[^\[]*(?:\[(\d+)\])?\s*$")


def ptx_parameters(ptx: str) -> list[tuple[int, int]]:
    """(size, alignment) in bytes of each parameter of the PTX's ``.entry``."""
    at = ptx.index(".entry")
    signature = ptx[ptx.index("(", at) + 1:ptx.index(")", at)]
    layout = []
    for declaration in signature.split(","):
        if not declaration.strip():
            continue
        match = _PARAM.match(declaration)
        if match is None:
            raise ValueError(f"a PTX parameter adjit does not read: {declaration.strip()!r}")
        align, kind, bits, count = match.groups()
        element = int(bits) // 8 if bits else 1
        size = element * int(count) if count else element
        layout.append((size, int(align) if align else element))
    return layout


def current_stream_handle(ordinal: int) -> int:
    """The CUstream of CUDA device ``ordinal``'s current stream."""
    return get_device(f"cuda:{ordinal}").stream.cuda_stream


def has_memory_pools(ordinal: int) -> bool:
    """Whether the device allocates stream-ordered from a pool (cuMemAllocAsync)."""
    return get_device(f"cuda:{ordinal}").is_mempool_supported


def set_stack_size(device, nbytes: int) -> None:
    """Bytes of stack per GPU thread (cuCtxSetLimit): runtime-loop adjoints
    keep checkpoints there (docs/gpu.md)."""
    _cuda.set_limit(_cuda_device(device, "set_stack_size").ordinal, _cuda.LIMIT_STACK_SIZE, int(nbytes))


def get_stack_size(device) -> int:
    return _cuda.get_limit(_cuda_device(device, "get_stack_size").ordinal, _cuda.LIMIT_STACK_SIZE)
