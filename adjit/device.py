"""Devices, as Warp's host API names them: ``get_device``, ``ScopedDevice``, ...

Two kinds of device: ``"cpu"``, where adjit's arrays live and its kernels run,
and the CUDA devices ``"cuda:0"``, ``"cuda:1"``, ... that the CUDA driver
reports (libcuda.so.1 is opened the first time a CUDA name is asked about:
importing adjit does not). A CUDA device has its name, compute capability
(``arch``: 90 for sm_90), memory, a default stream, and the driver layer's
streams, events, device memory and module launches (``adjit.runtime.cuda``).
adjit's arrays live on either kind of device (``device="cuda:0"``) and
``launch`` runs kernels where their arrays are (``adjit.backends``).

Where CUDA cannot be used, the CUDA names say why: ``is_cuda_available()``
is False, ``cuda_unavailable_reason()`` gives the reason (the driver's
dlopen message, cuInit's error, no device), and asking for a CUDA device
raises a ValueError with it.
"""
from __future__ import annotations

import os
import platform
import threading

from . import _runtime

_cuda = _runtime.cuda


class Device:
    """A device kernels run on and arrays live on (Warp's ``wp.Device``)."""

    def __init__(self, alias: str, ordinal: int = -1, properties: dict | None = None):
        self.alias = alias
        self.ordinal = ordinal
        self.is_cpu = ordinal < 0
        self.is_cuda = ordinal >= 0
        #: This CUDA device's current stream (``stream``, ``set_stream``).
        self._stream = None
        if self.is_cpu:
            self.name = platform.processor() or platform.machine() or "CPU"
            self.arch = 0
            self.sm_count = 0
            self.max_shared_memory_per_block = 0
            self.is_uva = False
            self.is_mempool_supported = False
            self.pci_bus_id = None
            return
        p = properties or _cuda.device_properties(ordinal)
        self.name = p["name"]
        #: Compute capability as 10 * major + minor (90 for sm_90), as Warp's.
        self.arch = 10 * p["major"] + p["minor"]
        self.sm_count = p["sm_count"]
        self.max_shared_memory_per_block = p["max_shared_memory_per_block"]
        self.max_threads_per_block = p["max_threads_per_block"]
        self.warp_size = p["warp_size"]
        self.is_uva = p["is_uva"]
        self.is_mempool_supported = p["is_mempool_supported"]
        self.pci_bus_id = p["pci_bus_id"]
        self._total_memory = p["total_memory"]

    @property
    def is_primary(self) -> bool:
        """Whether this device's CUDA context is its primary context (always,
        for adjit's CUDA devices)."""
        return self.is_cuda

    @property
    def total_memory(self) -> int:
        """Bytes of memory: the GPU's, or the host's for the CPU."""
        if self.is_cuda:
            return self._total_memory
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 0

    @property
    def free_memory(self) -> int:
        """Bytes of memory free now (a CUDA device's context is retained to ask)."""
        if self.is_cuda:
            return _cuda.memory_info(self.ordinal)[0]
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 0

    @property
    def has_context(self) -> bool:
        """Whether this CUDA device's primary context was retained (on first use)."""
        return self.is_cuda and _cuda.has_context(self.ordinal)

    def make_current(self) -> None:
        """Makes this CUDA device's primary context current on this thread
        (adjit's own calls do so themselves; this is for code beside it)."""
        if self.is_cuda:
            _cuda.make_current(self.ordinal)

    @property
    def stream(self):
        """This CUDA device's current stream (``adjit.Stream``): its default
        stream until ``set_stream``. RuntimeError on the CPU."""
        if not self.is_cuda:
            raise RuntimeError(f"Device {self} is not a CUDA device: it has no stream")
        if self._stream is None:
            self._stream = _stream_type._default(self)
        return self._stream

    @stream.setter
    def stream(self, stream) -> None:
        self.set_stream(stream)

    @property
    def has_stream(self) -> bool:
        return self._stream is not None

    def set_stream(self, stream, sync: bool = True) -> None:
        """Makes ``stream`` this CUDA device's current stream; with ``sync``,
        work queued on it from now on waits for the previous stream's."""
        if not self.is_cuda:
            raise RuntimeError(f"Device {self} is not a CUDA device: it has no stream")
        if stream.device != self:
            raise RuntimeError(f"Stream from device {stream.device} cannot be used on device {self}")
        previous = self._stream
        if sync and previous is not None and previous is not stream:
            stream.wait_stream(previous)
        self._stream = stream

    def __str__(self) -> str:
        return self.alias

    def __repr__(self) -> str:
        return f"<adjit device '{self.alias}'>"

    def __eq__(self, other) -> bool:
        if isinstance(other, Device):
            return other.alias == self.alias
        if isinstance(other, str):
            if other == "cuda" and self.is_cuda:
                return _current_cuda_device() is self
            return other == self.alias
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.alias)


CPU = Device("cpu")


class DeviceName(str):
    """An array's device as adjit keeps it, its alias (``"cpu"``,
    ``"cuda:0"``), which also answers what Warp code asks of
    ``array.device`` (a Device in Warp): ``a.device.is_cpu``,
    ``a.device.is_cuda``, ``a.device.ordinal``, ... are those of
    ``get_device(alias)``. As a string it is the alias: equal to it,
    hashed, printed and pickled as it."""

    __slots__ = ()

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(get_device(str(self)), name)

    def __reduce__(self):
        return (DeviceName, (str(self),))

#: The default device of each thread (``set_device``, ``ScopedDevice``), and
#: the CUDA device "cuda" names there.
_state = threading.local()

#: The CUDA devices, found the first time they are asked about.
_cuda_devices: list[Device] | None = None
_cuda_lock = threading.Lock()

#: The class of ``Device.stream``'s default streams: adjit.runtime.cuda's
#: Stream, which registers itself (it imports this module, not the reverse).
_stream_type = None


def _register_stream_type(stream_type) -> None:
    global _stream_type
    _stream_type = stream_type


def cuda_unavailable_reason() -> str:
    """Why CUDA cannot be used here ("" where it can): the CUDA driver could
    not be loaded (dlopen's message), cuInit failed, no device, ..."""
    return _cuda.unavailable_reason()


def get_cuda_devices() -> list[Device]:
    """The CUDA devices, cuda:0 first (none where CUDA is unavailable)."""
    global _cuda_devices
    if _cuda_devices is None:
        with _cuda_lock:
            if _cuda_devices is None:
                _cuda_devices = [Device(f"cuda:{i}", i) for i in range(_cuda.device_count())]
    return list(_cuda_devices)


def get_cuda_device_count() -> int:
    """How many CUDA devices this process can use (0 without a driver)."""
    return len(get_cuda_devices())


def get_cuda_device(ordinal: int | None = None) -> Device:
    """The CUDA device ``ordinal``, or the current one ("cuda") with none."""
    return get_device("cuda" if ordinal is None else f"cuda:{ordinal}")


def is_cpu_available() -> bool:
    return True


def is_cuda_available() -> bool:
    """Whether a CUDA device can be used (``cuda_unavailable_reason()`` says
    why not). Loads the CUDA driver the first time."""
    return get_cuda_device_count() > 0


def _no_cuda(ident) -> ValueError:
    reason = cuda_unavailable_reason()
    if not reason:
        count = get_cuda_device_count()
        reason = f"this machine has {count} CUDA device{'s' if count != 1 else ''} (cuda:0" + \
                 (f" to cuda:{count - 1})" if count > 1 else ")")
        return ValueError(f"device {str(ident)!r} is not available: {reason}")
    return ValueError(f"device {str(ident)!r} is not available: adjit runs kernels on the CPU only here, because "
                      f"{reason[0].lower() + reason[1:]}; use 'cpu'")


def _current_cuda_device() -> Device:
    """The device "cuda" names on this thread: the last CUDA device made the
    default here (set_device, ScopedDevice), else cuda:0."""
    device = getattr(_state, "cuda_device", None)
    if device is None:
        devices = get_cuda_devices()
        if not devices:
            raise _no_cuda("cuda")
        device = devices[0]
    return device


#: What a ``device=`` argument accepts (Warp's ``wp.DeviceLike`` annotation):
#: a Device, a name such as ``"cpu"`` or ``"cuda:0"``, or None (the current device).
DeviceLike = Device | str | None


def get_device(ident=None) -> Device:
    """The device ``ident`` names ("cpu", "cuda", "cuda:N", a Device), or the
    current default device with no argument. ValueError for a device that
    is not there, saying why."""
    if ident is None:
        return getattr(_state, "device", CPU)
    if isinstance(ident, Device):
        return ident
    if ident == "cpu":
        return CPU
    if ident == "cuda":
        return _current_cuda_device()
    if isinstance(ident, str) and ident.startswith("cuda:"):
        number = ident[5:]
        if not number.isdigit():
            raise ValueError(f"unknown device {ident!r} (CUDA devices are named 'cuda:N', N a number)")
        devices = get_cuda_devices()
        if int(number) >= len(devices):
            raise _no_cuda(ident)
        return devices[int(number)]
    raise ValueError(f"unknown device {ident!r} (devices are named 'cpu' or 'cuda:N')")


def device_alias(ident) -> str:
    """The alias of the device ``ident`` names (None: the default device),
    for an array or a launch: "cpu" or "cuda:N" (ValueError for a device
    that does not exist here, with the reason where CUDA is unavailable)."""
    return get_device(ident).alias


def cpu_only(ident, what: str) -> str:
    """``device_alias`` for what runs on the CPU only so far: ValueError
    naming ``what`` for a CUDA device."""
    alias = device_alias(ident)
    if alias != "cpu":
        raise ValueError(f"{what} runs on the CPU only so far (adjit's GPU runtime does not cover it yet); "
                         f"got device {alias!r}")
    return alias


def set_device(ident) -> None:
    """Makes ``ident`` the default device of this thread (a CUDA device's
    context is also made current here, as Warp's)."""
    device = get_device(ident)
    _state.device = device
    if device.is_cuda:
        _state.cuda_device = device
        device.make_current()


def get_devices() -> list[Device]:
    """Every device available: the CPU, then the CUDA devices."""
    return [CPU, *get_cuda_devices()]


def get_preferred_device() -> Device:
    """The CPU: Warp prefers cuda:0 where there is one, but adjit's arrays
    and launches run on the CPU only so far (see device_alias)."""
    return CPU


def is_device_available(device) -> bool:
    try:
        return get_device(device) in get_devices()
    except ValueError:
        return False


#: Called after a synchronize with the device's ordinal (None: every
#: device): runtime/cuda.py sets it to raise the failed checks of the
#: launches it waited for (none before it is imported: no launch ran).
synchronized = None
#: Called before a synchronize with its name: runtime/cuda.py sets it to
#: raise CaptureError while this thread captures a CUDA graph (a synchronize
#: would end the capture).
synchronizing = None


def synchronize_device(device=None) -> None:
    """Waits for ``device``'s outstanding work (a CUDA device's, all
    streams; CPU launches are synchronous). A kernel that faulted is
    reported here (a CudaError naming the last kernel launched), and so is
    a failed check of a kernel launched there (``OutOfBoundsError``,
    ``NonFiniteError``)."""
    device = get_device(device)
    if device.is_cuda:
        if synchronizing is not None:
            synchronizing("synchronize_device()")
        _cuda.synchronize_device(device.ordinal)
        if synchronized is not None:
            synchronized(device.ordinal)


def synchronize() -> None:
    """Waits for the outstanding work of every CUDA device in use (CPU
    launches are synchronous). A kernel that faulted is reported here, and
    so is a failed check of a kernel launched on one."""
    if _cuda_devices:
        if synchronizing is not None:
            synchronizing("synchronize()")
        _cuda.synchronize()
        if synchronized is not None:
            synchronized(None)


class ScopedDevice:
    """``with ScopedDevice("cuda:0"):``: the default device inside the block
    (a CUDA device's context is made current, as by ``set_device``)."""

    def __init__(self, device):
        self.device = get_device(device)

    def __enter__(self) -> Device:
        self._saved = get_device()
        self._saved_cuda = getattr(_state, "cuda_device", None)
        set_device(self.device)
        return self.device

    def __exit__(self, *exc) -> None:
        _state.device = self._saved
        _state.cuda_device = self._saved_cuda


def is_cubql_available() -> bool:
    """Whether the cuBQL BVH builder is available (Warp's): False, adjit's
    runtime being built without it (it builds no BVHs on the GPU)."""
    return False
