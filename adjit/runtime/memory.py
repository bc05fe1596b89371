"""Where arrays get their memory, and who is watching: Warp's allocator and
memory-tracking host API (``ScopedAllocator``, ``set_device_allocator``,
``ScopedMemoryTracker``, ``print_memory_report``, ``MemoryKind``).

Every buffer an adjit array owns (``zeros``, ``empty``, ``full``,
``array(data)``, ``clone``, gradients) comes from ``allocate`` or passes
through ``adopt``. Both take the memory from the CPU's custom allocator when
one is set, and record the allocation while a ``ScopedMemoryTracker`` is
active; the record is dropped (and the allocator's ``deallocate`` called)
when the last numpy view of the memory is collected. Memory adjit does not
own (``from_numpy``, ``ptr=``, views) is neither allocated nor tracked.
"""
from __future__ import annotations

import enum
import operator
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..device import get_device


class MemoryKind(enum.IntEnum):
    """The memory class backing an array, as Warp's ``MemoryKind`` (its
    values). adjit's arrays live in host memory: ``HOST``."""

    UNKNOWN = 0
    HOST = 1
    PINNED = 2
    CUDA_DEVICE = 3
    CUDA_MEMPOOL = 4
    CUDA_MANAGED = 5


# --- allocators ------------------------------------------------------------------------------

@runtime_checkable
class Allocator(Protocol):
    """Warp's allocator protocol: any object with these two methods.

    ``allocate(size_in_bytes)`` returns the address (an int) of at least that
    many writable bytes, aligned for the array's scalar type (4 for float32,
    8 for float64; 16 always works); ``deallocate(ptr, size_in_bytes)`` is
    called once, with the same size, when the last array (or numpy view)
    using the memory is collected. The memory must stay valid until then."""

    def allocate(self, size_in_bytes: int) -> int:
        """Allocate memory and return its address as an ``int``."""
        ...

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        """Free memory returned by ``allocate``."""
        ...


class HostAllocator:
    """adjit's built-in CPU allocator (what ``get_device_allocator("cpu")``
    returns while no custom one is set): numpy memory, 64-byte aligned.
    Arrays use numpy directly while it is in effect; it can also be called."""

    memory_kind = MemoryKind.HOST

    def __init__(self):
        self._blocks: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def allocate(self, size_in_bytes: int) -> int:
        size = _size(size_in_bytes, "allocate")
        block = np.empty(size + 64, np.uint8)
        offset = -block.ctypes.data % 64
        address = block.ctypes.data + offset
        with self._lock:
            self._blocks[address] = block
        return address

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        with self._lock:
            if self._blocks.pop(ptr, None) is None:
                raise ValueError(f"deallocate: {ptr:#x} was not allocated by this allocator (or was freed)")

    def __repr__(self) -> str:
        return "<adjit.HostAllocator>"


_HOST = HostAllocator()
#: The custom allocator of each device alias (only "cpu" so far).
_custom: dict[str, object] = {}
_custom_lock = threading.Lock()


def _size(size, what: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"{what}: size_in_bytes must be an int >= 0, got {size!r}")
    return int(size)


def _check_allocator(allocator, what: str) -> None:
    missing = [m for m in ("allocate", "deallocate") if not callable(getattr(allocator, m, None))]
    if missing:
        raise TypeError(f"{what}: an allocator needs callable allocate(size_in_bytes) -> int and "
                        f"deallocate(ptr, size_in_bytes) methods (Warp's Allocator protocol); {allocator!r} "
                        f"lacks {' and '.join(missing)}")


def set_device_allocator(device, allocator) -> None:
    """Sets the allocator of ``device``'s arrays (None: the built-in one).

    Warp honours custom allocators on CUDA devices only; adjit's one device
    is the CPU, so there arrays allocated while it is set (``zeros``,
    ``empty``, ``array(data)``, ``clone``, gradients) take their memory from
    it (see ``Allocator`` for the contract). A CUDA device raises ValueError
    (not available)."""
    alias = get_device(device).alias
    if allocator is not None:
        _check_allocator(allocator, "set_device_allocator")
    with _custom_lock:
        if allocator is None or allocator is _HOST:
            _custom.pop(alias, None)
        else:
            _custom[alias] = allocator


def get_device_allocator(device):
    """The allocator in effect for ``device``: the custom one set by
    ``set_device_allocator``/``ScopedAllocator``, else the built-in
    ``HostAllocator``."""
    alias = get_device(device).alias
    return _custom.get(alias, _HOST)


class ScopedAllocator:
    """``with ScopedAllocator(device, allocator):`` arrays allocated in the
    block take their memory from ``allocator`` (None: the built-in one); the
    previous allocator is restored on exit."""

    def __init__(self, device, allocator):
        self.device = get_device(device)
        if allocator is not None:
            _check_allocator(allocator, "ScopedAllocator")
        self.allocator = allocator

    def __enter__(self):
        self._saved = _custom.get(self.device.alias)
        set_device_allocator(self.device, self.allocator)
        return self

    def __exit__(self, *exc) -> None:
        set_device_allocator(self.device, self._saved)


class _Block:
    """Memory from a custom allocator, as numpy sees it (``np.asarray`` of it);
    its finalizer gives the memory back once no numpy view of it is left."""

    def __init__(self, address: int, nbytes: int):
        self.__array_interface__ = {"version": 3, "shape": (nbytes,), "typestr": "|u1",
                                    "data": (address, False)}


def _from_allocator(allocator, nbytes: int, np_dtype: np.dtype) -> np.ndarray:
    """``nbytes`` bytes from ``allocator``, as a flat uint8 numpy array."""
    who = f"allocator {allocator!r}"
    address = allocator.allocate(nbytes)
    if isinstance(address, bool) or not isinstance(address, (int, np.integer)):
        raise TypeError(f"{who}: allocate({nbytes}) must return the address as an int, got {address!r}")
    address = operator.index(address)
    if address <= 0:
        raise MemoryError(f"{who}: allocate({nbytes}) returned the address {address} (out of memory?)")
    alignment = np_dtype.alignment
    if address % alignment:
        allocator.deallocate(address, nbytes)
        raise ValueError(f"{who}: allocate({nbytes}) returned {address:#x}, which is not aligned for "
                         f"{np_dtype} elements ({alignment} bytes); the memory was given back")
    block = _Block(address, nbytes)
    weakref.finalize(block, allocator.deallocate, address, nbytes)
    return np.asarray(block)


# --- the one entry for owned memory -------------------------------------------------------------

def allocate(shape: tuple, np_dtype, dtype, device: str = "cpu", zero: bool = False,
             array_shape: tuple | None = None) -> np.ndarray:
    """A new C-contiguous numpy buffer of ``shape`` (the array's shape and its
    elements' component shape) for an array of adjit ``dtype`` elements:
    from the device's custom allocator if one is set, else numpy; zeroed with
    ``zero``. ``array_shape`` (the array's own shape) is what a memory report
    shows."""
    np_dtype = np.dtype(np_dtype)
    if device != "cpu":  # a CUDA device: its memory pool (see cuda_memory)
        from .cuda_memory import CudaMemory
        ordinal = get_device(device).ordinal
        buffer = (CudaMemory.zeros if zero else CudaMemory.empty)(ordinal, shape, np_dtype)
        if _tracking.active:
            _record(buffer, dtype, device, shape if array_shape is None else array_shape)
        return buffer
    allocator = _custom.get(device)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
    if allocator is None or nbytes == 0:
        buffer = np.zeros(shape, np_dtype) if zero else np.empty(shape, np_dtype)
    else:
        buffer = _from_allocator(allocator, nbytes, np_dtype).view(np_dtype).reshape(shape)
        if zero:
            buffer[...] = 0
    if _tracking.active:
        _record(buffer, dtype, device, shape[:len(shape)] if array_shape is None else array_shape)
    return buffer


def adopt(buffer: np.ndarray, dtype, device: str = "cpu", array_shape: tuple | None = None) -> np.ndarray:
    """``buffer`` (memory adjit just made and owns, C-contiguous) as an
    array's memory: moved to the device's custom allocator if one is set,
    recorded if memory is tracked. The same buffer in the common case."""
    allocator = _custom.get(device) if device == "cpu" else None
    if allocator is not None and buffer.nbytes:
        moved = _from_allocator(allocator, buffer.nbytes, buffer.dtype).view(buffer.dtype).reshape(buffer.shape)
        moved[...] = buffer
        buffer = moved
    if _tracking.active:
        _record(buffer, dtype, device, buffer.shape if array_shape is None else array_shape)
    return buffer


# --- memory tracking ---------------------------------------------------------------------------

@dataclass
class _Allocation:
    serial: int
    nbytes: int
    device: str
    what: str
    where: str
    scope: str


class _Tracking:
    """The global allocation records (reports are global; scopes are per thread)."""

    def __init__(self):
        self.lock = threading.RLock()  # (a finalizer may run inside a locked section, by GC)
        self.active = 0  # trackers open now, in any thread
        self.stacks = threading.local()
        self.clear()

    def clear(self) -> None:
        with self.lock:
            self.live: dict[int, _Allocation] = {}
            self.totals: dict[str, list[int]] = {}  # device -> [count, bytes]
            self.current: dict[str, int] = {}  # device -> live bytes
            self.peak: dict[str, int] = {}
            self.scopes: dict[str, dict[str, list[int]]] = {}  # scope -> device -> [count, bytes]
            self.serial = 0

    def stack(self) -> list[str]:
        stack = getattr(self.stacks, "names", None)
        if stack is None:
            stack = self.stacks.names = []
        return stack


_tracking = _Tracking()


def _locks_after_fork() -> None:
    """A fork()ed child has only the forking thread: locks another thread
    held at the fork would never be released there, so they are made anew."""
    global _custom_lock
    _custom_lock = threading.Lock()
    _HOST._lock = threading.Lock()
    _tracking.lock = threading.RLock()


os.register_at_fork(after_in_child=_locks_after_fork)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _call_site() -> str:
    """``file:line : function()`` of the first caller outside adjit."""
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame = frame.f_back
    if frame is None:
        return "(adjit)"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} : {frame.f_code.co_name}()"


def _record(buffer: np.ndarray, dtype, device: str, shape: tuple) -> None:
    t = _tracking
    shape = tuple(int(s) for s in shape)
    what = f"array[{dtype}, {shape[0] if len(shape) == 1 else shape}]"
    scope = "/".join(t.stack()) or "(no scope)"
    with t.lock:
        t.serial += 1
        record = _Allocation(t.serial, int(buffer.nbytes), device, what, _call_site(), scope)
        t.live[record.serial] = record
        total = t.totals.setdefault(device, [0, 0])
        total[0] += 1
        total[1] += record.nbytes
        per_scope = t.scopes.setdefault(scope, {}).setdefault(device, [0, 0])
        per_scope[0] += 1
        per_scope[1] += record.nbytes
        t.current[device] = t.current.get(device, 0) + record.nbytes
        t.peak[device] = max(t.peak.get(device, 0), t.current[device])
    # (device memory is freed with its allocation, which its views share)
    weakref.finalize(getattr(buffer, "allocation", buffer), _freed, t, record.serial)


def _freed(t: _Tracking, serial: int) -> None:
    with t.lock:
        record = t.live.pop(serial, None)
        if record is not None:
            t.current[record.device] -= record.nbytes


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} TB"


def memory_report(sort: str = "size", max_items: int = 10) -> str:
    """The text of ``print_memory_report``: totals, peak and live bytes per
    device, allocations per scope (counted when made, freed or not), and
    the live allocations (largest first, or oldest first with
    ``sort="chronological"``), at most ``max_items`` per device."""
    if sort not in ("size", "chronological"):
        raise ValueError(f"Invalid sort order {sort!r}; expected 'size' or 'chronological'")
    if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 0:
        raise ValueError(f"max_items must be an int >= 0, got {max_items!r}")
    t = _tracking
    with t.lock:
        lines = ["Allocation Tracking Report", "  Total allocations:"]
        lines += [f"    {d:<16} {c} ({_bytes(b)})" for d, (c, b) in t.totals.items()]
        lines += ["  Peak usage:"] + [f"    {d:<16} {_bytes(b)}" for d, b in t.peak.items()]
        lines.append("  Live allocations:")
        for device in t.totals:
            live = [r for r in t.live.values() if r.device == device]
            lines.append(f"    {device:<16} {len(live)} ({_bytes(sum(r.nbytes for r in live))})")
        lines += ["", "  Scope breakdown:"]
        for scope, devices in t.scopes.items():
            lines.append(f"    {scope}:")
            lines += [f"      {d}: {c} allocs, {_bytes(b)}" for d, (c, b) in devices.items()]
        for device in t.totals:
            live = [r for r in t.live.values() if r.device == device]
            if not live:
                continue
            order = "by size (largest first)" if sort == "size" else "chronological"
            live.sort(key=(lambda r: (-r.nbytes, r.serial)) if sort == "size" else (lambda r: r.serial))
            lines += ["", f"  Live {device} allocations {order} (up to {max_items}):"]
            lines += [f"    {_bytes(r.nbytes)} : {r.device} : {r.what} : {r.where}" for r in live[:max_items]]
    return "\n".join(lines) + "\n"


def print_memory_report(file=None, sort: str = "size", max_items: int = 10) -> None:
    """Prints the tracked allocations (see ``memory_report``) to ``file``
    (default ``sys.stdout``). RuntimeError unless a ``ScopedMemoryTracker``
    is active (adjit has no ``config.track_memory``: tracking is scoped)."""
    text = memory_report(sort, max_items)
    if not _tracking.active:
        raise RuntimeError("Allocation tracking is not active: use adjit.ScopedMemoryTracker as a context "
                           "manager (adjit has no config.track_memory)")
    print(text, end="", file=file if file is not None else sys.stdout)


class ScopedMemoryTracker:
    """``with ScopedMemoryTracker("name"):`` records the arrays allocated in
    the block (bytes, shape, dtype, device, the line allocating them) until
    they are freed, and prints a report on exit (``print=False``: not;
    ``report_func``: passes the text to it instead). Nested trackers make a
    scope path (``"outer/inner"``); scope stacks are per thread, the records
    global (as Warp's). ``active=False`` makes it do nothing."""

    def __init__(self, name: str = "root", active: bool = True, print: bool = True,  # noqa: A002 (Warp's name)
                 report_func=None):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"ScopedMemoryTracker: name must be a non-empty string without '/', got {name!r}")
        for flag, value in (("active", active), ("print", print)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"ScopedMemoryTracker: {flag} must be True or False, got {value!r}")
        if report_func is not None and not callable(report_func):
            raise TypeError(f"ScopedMemoryTracker: report_func must be callable (str) -> None, got {report_func!r}")
        self.name, self.active, self.print, self.report_func = name, bool(active), bool(print), report_func
        self._entered = False

    def __enter__(self) -> "ScopedMemoryTracker":
        if self.active:
            with _tracking.lock:
                _tracking.active += 1
            _tracking.stack().append(self.name)
            self._entered = True
            self._started = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if not self._entered:
            return
        self._entered = False
        stack = _tracking.stack()
        if stack and stack[-1] == self.name:
            stack.pop()
        with _tracking.lock:
            _tracking.active -= 1
        if self.print or self.report_func is not None:
            text = memory_report()
            if self.report_func is not None:
                self.report_func(text)
            else:
                sys.stdout.write(text)

    def report(self, file=None, sort: str = "size", max_items: int = 10) -> None:
        """Prints the report now (to ``file``, default stdout)."""
        print(memory_report(sort, max_items), end="", file=file if file is not None else sys.stdout)

    def clear(self) -> None:
        """Forgets every record (totals, peaks, scopes, live allocations)."""
        _tracking.clear()

