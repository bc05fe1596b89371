"""The memory of a CUDA array: ``CudaMemory``, a strided view of device
memory with the part of numpy's ndarray interface that adjit's arrays use.

A CPU array's ``_buffer`` is a numpy array; a CUDA array's is a
``CudaMemory``: the same shape (element dimensions, then the dtype's
component dimensions), byte strides and numpy dtype, over memory of one
device. Views (``[...]`` with ints and slices, ``reshape``, ``transpose``,
``view``) share the allocation; ``copy()`` makes a contiguous copy on the
device; ``numpy()`` copies to the host; assigning (``m[...] = values``)
copies from the host or from other device memory. Every copy is queued on
the device's current stream (``adjit.get_stream``), so they are ordered with
the launches queued there; copies to the host wait for it.

Memory comes from the driver's stream-ordered pool where the device has one
(``cuMemAllocAsync``): a training loop's arrays do not call the driver's
allocator each time, and an array's memory returns to the pool when the last
view of it is collected.

Contiguous copies are one driver call, fills and float adds one small kernel
(cuda_helpers.py). A strided view (a slice with a step, a transpose) is
copied through the host, one span of the allocation each way: correct, and
slower than a copy kernel would be (noted in docs/gpu.md).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import _runtime

_cuda = _runtime.cuda


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous: bool):
        self.c_contiguous = c_contiguous
        self.writeable = True


class _Allocation:
    """Device memory a CudaMemory views: an allocation adjit made (freed
    when the last view is collected) or memory given by address (kept alive
    by ``owner``)."""

    __slots__ = ("ordinal", "ptr", "nbytes", "memory", "owner", "__weakref__")

    def __init__(self, ordinal: int, ptr: int, nbytes: int, memory=None, owner=None):
        self.ordinal, self.ptr, self.nbytes = ordinal, ptr, nbytes
        #: The ``_runtime.cuda.DeviceAllocation`` (owned, or borrowed from ``owner``).
        self.memory = memory
        self.owner = owner


def allocate(ordinal: int, nbytes: int) -> _Allocation:
    """``nbytes`` of device memory, from the device's pool where it has one
    (queued on its current stream)."""
    from . import cuda
    stream = cuda.current_stream_handle(ordinal)
    memory = _cuda.DeviceAllocation(ordinal, int(nbytes), stream, cuda.has_memory_pools(ordinal))
    return _Allocation(ordinal, memory.ptr, int(nbytes), memory)


def external(ordinal: int, ptr: int, nbytes: int, owner=None) -> _Allocation:
    """Device memory adjit did not allocate, at ``ptr`` (kept alive by ``owner``)."""
    memory = _cuda.DeviceAllocation.borrow(ordinal, int(ptr), int(nbytes))
    return _Allocation(ordinal, int(ptr), int(nbytes), memory, owner)


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


class CudaMemory:
    """A strided view of device memory (see the module docstring)."""

    __slots__ = ("allocation", "dtype", "shape", "strides", "offset", "_c_contiguous", "__weakref__")

    def __init__(self, allocation: _Allocation, dtype, shape: tuple, strides: tuple | None = None,
                 offset: int = 0):
        self.allocation = allocation
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(s) for s in shape)
        self.strides = _c_strides(self.shape, self.dtype.itemsize) if strides is None else tuple(strides)
        #: Byte offset of element 0 in the allocation.
        self.offset = int(offset)
        self._c_contiguous = None  # (is_c_contiguous, worked out when first asked: launches ask each time)

    # --- made ---------------------------------------------------------------------------------

    @classmethod
    def empty(cls, ordinal: int, shape: tuple, dtype) -> "CudaMemory":
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        return cls(allocate(ordinal, math.prod(shape) * dtype.itemsize), dtype, shape)

    @classmethod
    def zeros(cls, ordinal: int, shape: tuple, dtype) -> "CudaMemory":
        memory = cls.empty(ordinal, shape, dtype)
        memory.fill_bytes(0)
        return memory

    @classmethod
    def from_host(cls, ordinal: int, values: np.ndarray) -> "CudaMemory":
        """A contiguous copy of the host array ``values`` on the device."""
        values = np.ascontiguousarray(values)
        memory = cls.empty(ordinal, values.shape, values.dtype)
        memory._upload(values)
        return memory

    # --- numpy's attributes -------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def is_c_contiguous(self) -> bool:
        if self._c_contiguous is None:
            self._c_contiguous = self.size <= 1 or self.strides == _c_strides(self.shape, self.dtype.itemsize)
        return self._c_contiguous

    @property
    def flags(self) -> _Flags:
        return _Flags(self.is_c_contiguous)

    @property
    def ordinal(self) -> int:
        return self.allocation.ordinal

    @property
    def ptr(self) -> int:
        """The device address of element 0."""
        return self.allocation.ptr + self.offset

    def span(self) -> tuple[int, int]:
        """(first byte, end byte) of the memory the view reaches, as offsets
        into its allocation ((offset, offset) when empty)."""
        if self.size == 0:
            return self.offset, self.offset
        low = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        high = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return low, high + self.itemsize

    def shares_memory(self, other) -> bool:
        """Whether the two views may reach the same bytes (numpy's may_share_memory)."""
        if not isinstance(other, CudaMemory) or other.ordinal != self.ordinal or not self.size or not other.size:
            return False
        a0, a1 = self.span()
        b0, b1 = other.span()
        a0, a1 = a0 + self.allocation.ptr, a1 + self.allocation.ptr
        b0, b1 = b0 + other.allocation.ptr, b1 + other.allocation.ptr
        return a0 < b1 and b0 < a1

    # --- views --------------------------------------------------------------------------------

    def view(self, dtype=None) -> "CudaMemory":
        """The same memory; with ``dtype``, its last axis reinterpreted (numpy's rule)."""
        if dtype is None or np.dtype(dtype) == self.dtype:
            return CudaMemory(self.allocation, self.dtype, self.shape, self.strides, self.offset)
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return CudaMemory(self.allocation, dtype, self.shape, self.strides, self.offset)
        if not self.ndim or self.strides[-1] != self.itemsize or (self.shape[-1] * self.itemsize) % dtype.itemsize:
            raise ValueError(f"cannot view {self.dtype} memory of shape {self.shape} as {dtype}")
        shape = self.shape[:-1] + (self.shape[-1] * self.itemsize // dtype.itemsize,)
        return CudaMemory(self.allocation, dtype, shape, self.strides[:-1] + (dtype.itemsize,), self.offset)

    def __getitem__(self, key) -> "CudaMemory":
        keys = key if isinstance(key, tuple) else (key,)
        if any(k is Ellipsis for k in keys):
            at = next(i for i, k in enumerate(keys) if k is Ellipsis)
            fill = self.ndim - (len(keys) - 1)
            keys = keys[:at] + (slice(None),) * fill + keys[at + 1:]
        if len(keys) > self.ndim:
            raise IndexError(f"too many indices ({len(keys)}) for device memory of {self.ndim} dimensions")
        shape, strides, offset = [], [], self.offset
        for axis, k in enumerate(keys):
            n, s = self.shape[axis], self.strides[axis]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                count = len(range(start, stop, step))
                offset += start * s if count else 0
                shape.append(count)
                strides.append(s * step)
            else:
                i = operator.index(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of range for axis {axis} of size {n}")
                offset += (i + n if i < 0 else i) * s
        shape.extend(self.shape[len(keys):])
        strides.extend(self.strides[len(keys):])
        return CudaMemory(self.allocation, self.dtype, tuple(shape), tuple(strides), offset)

    def reshape(self, shape) -> "CudaMemory":
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // max(known, 1) if s == -1 else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape device memory of shape {self.shape} into {shape}")
        if not self.is_c_contiguous:
            raise ValueError("reshape of a non-contiguous view of device memory (copy it first)")
        return CudaMemory(self.allocation, self.dtype, shape, None, self.offset)

    def transpose(self, axes=None) -> "CudaMemory":
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return CudaMemory(self.allocation, self.dtype, tuple(self.shape[a] for a in axes),
                          tuple(self.strides[a] for a in axes), self.offset)

    def as_strided(self, shape: tuple, strides: tuple) -> "CudaMemory":
        """Another view of the same allocation, from the same first element."""
        view = CudaMemory(self.allocation, self.dtype, shape, strides, self.offset)
        low, high = view.span()
        if view.size and (low < 0 or high > self.allocation.nbytes):
            raise ValueError(f"a view of shape {shape} with strides {strides} reaches past its device memory")
        return view

    # --- data ---------------------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A host copy (waits for the stream's earlier work)."""
        out = np.empty(self.shape, self.dtype)
        if not self.size:
            return out
        if self.is_c_contiguous:
            self._download(out, self.offset)
            return out
        low, high = self.span()
        raw = np.empty(high - low, np.uint8)
        self._download(raw, low)
        out[...] = np.lib.stride_tricks.as_strided(_aligned(raw, self.offset - low, self.dtype), self.shape,
                                                   self.strides)
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def copy(self) -> "CudaMemory":
        """A contiguous copy on the same device."""
        out = CudaMemory.empty(self.ordinal, self.shape, self.dtype)
        out.assign(self)
        return out

    def assign(self, values) -> None:
        """Sets every element: from other device memory of this shape
        (any device), else from host values broadcast to this shape."""
        if isinstance(values, CudaMemory):
            if values.allocation is self.allocation and values.offset == self.offset and \
                    values.shape == self.shape and values.strides == self.strides and values.dtype == self.dtype:
                return  # (itself: ``m[...] += x`` assigns the view it changed)
            if values.shape != self.shape:
                raise ValueError(f"cannot copy device memory of shape {values.shape} into shape {self.shape}")
            if values.dtype != self.dtype:
                values = values.numpy().astype(self.dtype)
            elif self.is_c_contiguous and values.is_c_contiguous and values.ordinal == self.ordinal:
                if self.size:
                    dst, src = self.allocation, values.allocation
                    _copy_on_device(dst, self.offset, src, values.offset, self.nbytes)
                return
            else:
                values = values.numpy()
        values = np.asarray(values, dtype=self.dtype)
        if not self.size:
            return
        if values.ndim < self.ndim and self.is_c_contiguous:
            # one element (or block of trailing dimensions) repeated: filled on the device
            element = np.ascontiguousarray(np.broadcast_to(values, self.shape[self.ndim - values.ndim:])).tobytes()
            if not element.strip(b"\0"):
                self.fill_bytes(0)  # zeros: one memset
                return
            from . import cuda, cuda_helpers
            if cuda_helpers.fill(self, element, cuda.current_stream_handle(self.ordinal)):
                return
        host = np.broadcast_to(values, self.shape)
        if self.is_c_contiguous:
            self._upload(np.ascontiguousarray(host), self.offset)
            return
        # A strided view: read the span it reaches, write its elements, write it back.
        low, high = self.span()
        raw = np.empty(high - low, np.uint8)
        self._download(raw, low)
        np.lib.stride_tricks.as_strided(_aligned(raw, self.offset - low, self.dtype), self.shape,
                                        self.strides, writeable=True)[...] = host
        self._upload(raw, low)

    def __setitem__(self, key, values) -> None:
        self[key].assign(values) if key is not Ellipsis else self.assign(values)

    def fill_bytes(self, value: int) -> None:
        """Sets every byte the view reaches to ``value`` (a contiguous view)."""
        if not self.is_c_contiguous:
            raise ValueError("fill_bytes of a strided view")
        if self.size:
            from . import cuda
            self.allocation.memory.fill(int(value), cuda.current_stream_handle(self.ordinal), True,
                                          self.offset, self.nbytes)

    def __iadd__(self, other) -> "CudaMemory":
        if isinstance(other, CudaMemory):
            from . import cuda, cuda_helpers
            if cuda_helpers.add_into(self, other, cuda.current_stream_handle(self.ordinal)):
                return self
        values = self.numpy()  # (other dtypes, strided views: through the host)
        values += other.numpy() if isinstance(other, CudaMemory) else np.asarray(other, self.dtype)
        self.assign(values)
        return self

    def __add__(self, other) -> np.ndarray:
        # (host values, for the copy adjoint's sum of two ranges)
        return self.numpy() + (other.numpy() if isinstance(other, CudaMemory) else other)

    __radd__ = __add__

    def __repr__(self) -> str:
        return (f"<CudaMemory {self.dtype} shape={self.shape} strides={self.strides} on cuda:{self.ordinal} "
                f"at {self.ptr:#x}>")

    # --- transfers ----------------------------------------------------------------------------

    def _upload(self, host: np.ndarray, offset: int | None = None) -> None:
        from . import capture, cuda
        offset = self.offset if offset is None else offset
        if not host.flags.writeable or not host.flags.c_contiguous:  # (the binding takes writable C arrays)
            host = np.array(host, order="C")
        stream = cuda.current_stream_handle(self.ordinal)
        if capture._open and capture.native_capture(self.ordinal) is not None:
            # In a CUDA graph capture: the values are staged in device memory
            # the graph keeps, and the graph copies them from there.
            staged = cuda.stage(self.ordinal, host)
            self.allocation.memory.copy_from(staged, host.nbytes, offset, 0, stream, True)
            return
        self.allocation.memory.copy_from_host(host, offset, stream, True)

    def _download(self, host: np.ndarray, offset: int) -> None:
        from . import capture, cuda
        if capture._open:
            capture.refuse("Reading device memory on the host (numpy(), printing, a strided view's copy)",
                           self.ordinal)
        stream = cuda.current_stream_handle(self.ordinal)
        self.allocation.memory.copy_to_host(host, offset, stream, True)
        _cuda.Stream.wrap(self.ordinal, stream).synchronize()
        cuda.check_pending_failures(self.ordinal)


def _aligned(raw: np.ndarray, start: int, dtype: np.dtype) -> np.ndarray:
    """``raw[start:]`` as elements of ``dtype`` (the tail that is not a whole element dropped)."""
    tail = raw[start:]
    usable = len(tail) - len(tail) % dtype.itemsize
    return tail[:usable].view(dtype)


def _copy_on_device(dst: _Allocation, dst_offset: int, src: _Allocation, src_offset: int, nbytes: int) -> None:
    from . import cuda
    stream = cuda.current_stream_handle(dst.ordinal)
    dst.memory.copy_from(src.memory, nbytes, dst_offset, src_offset, stream, True)


def from_interface(obj, ordinal: int) -> CudaMemory:
    """The device memory ``obj`` exposes through ``__cuda_array_interface__``
    (v2/v3), zero-copy, keeping ``obj`` alive; the producer's stream (v3
    ``stream``) is waited for first."""
    face = getattr(obj, "__cuda_array_interface__", None)
    if not isinstance(face, dict):
        raise TypeError(f"{type(obj).__name__} has no __cuda_array_interface__")
    if face.get("mask") is not None:
        raise ValueError("masked CUDA arrays are not supported")
    shape = tuple(int(n) for n in face["shape"])
    dtype = np.dtype(face["typestr"])
    strides = None if face.get("strides") is None else tuple(int(b) for b in face["strides"])
    stream = face.get("stream")
    if stream:
        _cuda.Stream.wrap(ordinal, int(stream)).synchronize()
    steps = strides or _c_strides(shape, dtype.itemsize)
    nbytes = (sum((n - 1) * b for n, b in zip(shape, steps)) + dtype.itemsize) if math.prod(shape) else 0
    return CudaMemory(external(ordinal, int(face["data"][0] or 0), nbytes, owner=obj), dtype, shape, strides)


def interface_ordinal(obj, device=None) -> int:
    """The CUDA device of an object with ``__cuda_array_interface__``:
    ``device`` where given, else the object's (``obj.device``: torch's
    index, CuPy's id), else the current CUDA device."""
    from ..device import get_device
    if device is None:
        d = getattr(obj, "device", None)
        index = getattr(d, "index", None) if hasattr(d, "type") else getattr(d, "id", None)
        device = f"cuda:{index}" if isinstance(index, int) else "cuda"
    target = get_device(device)
    if not target.is_cuda:
        raise ValueError(f"CUDA memory on {target}, which is not a CUDA device")
    return target.ordinal


def may_share_memory(a, b) -> bool:
    """numpy's ``may_share_memory`` for host arrays and device memory alike."""
    if isinstance(a, CudaMemory) or isinstance(b, CudaMemory):
        return isinstance(a, CudaMemory) and a.shares_memory(b)
    return np.may_share_memory(a, b)
