"""adjit arrays: typed 1-4-D arrays of scalars, vectors or matrices.

On the CPU an array owns a C-contiguous numpy buffer whose shape is the
array's shape followed by the element's component shape (a vec3 array of
n elements is an (n, 3) float32 buffer, 12 bytes per element, as in Warp).
A view (``a[1:3]``, ``a[:, 1]``, ``a.transpose()``, ``a.view(dtype)``) holds
a numpy view of its base's buffer, strided where its elements are not
contiguous; each element's components stay contiguous.
"""
from __future__ import annotations

import functools
import operator
import types
import typing
import weakref

import numpy as np

from .. import types as T
from ..device import Device, DeviceName, device_alias, get_device
from ..errors import GradientError
from . import capture as _capture
from . import memory as _memory
from .cuda_memory import CudaMemory, may_share_memory
from . import recording
from .recording import active_tapes

#: adjit.runtime.struct_array, which registers itself when imported (it
#: builds on this module, so this one does not import it).
_struct_arrays = None

#: ``(builtin name, *operands, out=None)``: a ``map`` launch of a builtin
#: (Warp's wp.map), registered by adjit.host_calls when it is imported; the
#: arithmetic operators of arrays are such launches.
_map_function = None


def _structs():
    """The arrays-of-structs module (adjit.runtime.struct_array)."""
    if _struct_arrays is None:
        raise RuntimeError("adjit.runtime.struct_array is not loaded (import adjit)")
    return _struct_arrays


#: DLPack's device type of host memory (``DLDeviceType.kDLCPU``).
_DL_CPU = 1
_DL_CUDA = 2


@T.register_host_array_class
class Array:
    """An array of ``dtype`` elements on a device: the CPU (its buffer a
    numpy array) or a CUDA device (a ``CudaMemory``, see cuda_memory.py)."""

    def __init__(self, buffer: np.ndarray, dtype: T.ValueType, requires_grad: bool = False,
                 device: str = "cpu", *, _owned: bool = False):
        """An array over ``buffer``. Unless adjit allocated it (``_owned``),
        the buffer is the caller's memory, which may change without adjit
        seeing it: value ranges are measured at each launch and tapes
        snapshot it (see ``_writable_elsewhere``)."""
        if (device == "cpu") == isinstance(buffer, CudaMemory):
            raise ValueError(f"an array on '{device}' over {type(buffer).__name__} memory (internal)")
        self._buffer = buffer
        self.dtype = dtype
        self.device = DeviceName(device)  # the alias, answering Warp's Device questions (.is_cpu)
        ncomp = len(_component_shape(dtype))
        self.shape = tuple(buffer.shape[:buffer.ndim - ncomp])
        #: The write bookkeeping of the memory, shared with every view of it
        #: (slices, reshape, flatten, view): see _Storage.
        self._storage = _Storage()
        self._storage.shared = not _owned
        #: (version, min, max) of the values, while nothing else can change them.
        self._range_cache: tuple | None = None
        self.grad: Array | None = None
        self.requires_grad = requires_grad

    # The bookkeeping lives in the shared storage, so that a write through
    # any view of the memory is seen by tapes holding any other view.

    @property
    def _version(self) -> int:
        """Bumped by every write adjit makes (launches, copies, fills), so the
        tape can tell whether a recorded value was overwritten later. Shared
        by the views of one memory: a write through one bumps them all."""
        return self._storage.version

    @_version.setter
    def _version(self, value: int) -> None:
        self._storage.version = value

    @property
    def _shared(self) -> bool:
        """The buffer is also memory of another object (from_numpy, from_torch,
        from_dlpack, ``ptr``, or handed out through __array_interface__): it
        may change without adjit seeing it."""
        return self._storage.shared

    @_shared.setter
    def _shared(self, value: bool) -> None:
        self._storage.shared = value

    @property
    def _views(self) -> list | None:
        """Weak references to the tokens of the numpy views handed out (numpy(),
        __dlpack__): alive while any view numpy derived from them is."""
        return self._storage.views

    @_views.setter
    def _views(self, value) -> None:
        self._storage.views = value

    @property
    def _holders(self):
        """Tapes with recorded steps that read the current values in place."""
        return self._storage.holders

    @_holders.setter
    def _holders(self, value) -> None:
        self._storage.holders = value

    def _aliases(self) -> list["Array"]:
        """This array and the live views sharing its memory."""
        arrays = self._storage.arrays
        return [self] if arrays is None else list(arrays)

    @property
    def requires_grad(self) -> bool:
        """Whether the array has a gradient (``.grad``). Settable: ``True``
        gives it a zero gradient (if it has none), ``False`` drops it. A launch
        recorded on a tape uses the gradients the arrays have when
        ``backward()`` runs."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_, int, np.integer)) or value not in (0, 1):
            raise TypeError(f"requires_grad must be True or False, got {value!r}")
        value = bool(value)
        if value and self.grad is None:
            self.grad = Array(_zeros_in_layout(self._buffer, self.dtype, self.device, self.shape), self.dtype,
                              False, self.device, _owned=True)
        elif not value:
            self.grad = None
        self._requires_grad = value

    def __reduce__(self):
        """Pickles a copy of the values, the dtype, ``requires_grad`` and the
        gradient's values; unpickling makes a new array (sharing nothing)."""
        grad = None if self.grad is None else _host_copy(self.grad._buffer)
        return (_unpickle_array, (_host_copy(self._buffer), self.dtype, self.requires_grad, self.device, grad))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def numpy(self) -> np.ndarray:
        """A numpy view of the data (shape + component shape); writes go
        through. Tapes that recorded launches reading this array save its
        values first, so writes through the view cannot change gradients.
        A CUDA array's values are copied to the host (after the work queued
        on the device's current stream; a kernel's failed check is raised
        here), as in Warp, but read-only: writes to the copy would not reach
        the array (``.numpy().copy()`` is a copy to change; ``assign`` writes)."""
        if self.device != "cpu":
            values = self._buffer.numpy()
            values.flags.writeable = False
            return values
        return self._export(self._buffer.view())

    def _export(self, view: np.ndarray) -> np.ndarray:
        """Hands out ``view`` of the buffer: tapes holding the current values
        snapshot them now, and while the view or anything numpy derives from
        it (slices, reshapes, transposes) lives, launches recorded on a tape
        snapshot this array and its value range is measured at each launch
        (they may write it at any time)."""
        self._may_be_written_outside()
        if self._views is None:
            self._views = []
        else:
            self._views[:] = [ref for ref in self._views if ref() is not None]
        tracked, token = _tracked_view(view)
        self._views.append(weakref.ref(token))
        return tracked

    def _may_be_written_outside(self) -> None:
        """Memory outside adjit's control may write the buffer from now on:
        tapes holding its values save them, and its value range is dropped."""
        for alias in self._aliases():
            alias._range_cache = None
        if self._holders:
            for tape in list(self._holders):
                tape.protect(self)
            self._holders.clear()

    def _hold(self, tape) -> None:
        """``tape`` recorded a step that reads the current values in place."""
        if self._holders is None:
            self._holders = weakref.WeakSet()
        self._holders.add(tape)

    def _value_range(self) -> tuple[int, int]:
        """(min, max) of an integer array's values ((0, -1) when empty), kept
        while its version is unchanged and nothing outside adjit can write it
        (launches proving gathers through it read this once per launch)."""
        cached = self._range_cache
        if cached is not None and cached[0] == self._version:
            return cached[1], cached[2]
        buffer = self._buffer if self.device == "cpu" else self._buffer.numpy()
        lo, hi = (int(buffer.min()), int(buffer.max())) if buffer.size else (0, -1)
        self._range_cache = None if self._writable_elsewhere else (self._version, lo, hi)
        return lo, hi

    @property
    def _writable_elsewhere(self) -> bool:
        """Whether memory outside adjit's control may write the buffer: a
        shared buffer, or a view handed out that is still alive."""
        return self._shared or any(ref() is not None for ref in self._views or ())

    def __len__(self) -> int:
        return self.shape[0]

    # --- Warp's host methods and views ------------------------------------------
    # A view shares the buffer and its write bookkeeping (_Storage): a write
    # through a view bumps the version its base reads, and a tape holding the
    # base's values saves them first (Tape.protect covers every alias). The
    # view's gradient is the same view of the base's gradient.

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between consecutive elements along each dimension (as Warp)."""
        return tuple(self._buffer.strides[:self.ndim])

    @property
    def is_contiguous(self) -> bool:
        """Whether the elements lie C-contiguously in memory: False for a
        strided view (``a[:, 1]``, ``a[::2]``, ``a.transpose()``). As numpy's
        ``c_contiguous`` (and kernel launches), the stride of an extent-1
        dimension does not count (Warp compares every stride)."""
        return bool(self._buffer.flags.c_contiguous)

    def contiguous(self) -> "Array":
        """This array if it is contiguous, else a contiguous copy (``clone``,
        recorded on an active tape), as Warp's."""
        return self if self.is_contiguous else clone(self)

    def to(self, device, requires_grad: bool | None = None) -> "Array":
        """This array on ``device`` (Warp's): itself if it is there
        (``requires_grad`` is then ignored, as Warp ignores it), else a copy
        there (``clone(device=)``, recorded on an active tape)."""
        if _device(device) == self.device:
            return self
        return clone(self, device=device, requires_grad=requires_grad)

    @property
    def memory_kind(self) -> "_memory.MemoryKind":
        """The memory class backing the array (Warp's): ``MemoryKind.HOST``
        on the CPU, ``CUDA_MEMPOOL`` or ``CUDA_DEVICE`` on a CUDA device
        (pooled memory where the device has a pool)."""
        if self.device == "cpu":
            return _memory.MemoryKind.HOST
        from ..device import get_device
        return _memory.MemoryKind.CUDA_MEMPOOL if get_device(self.device).is_mempool_supported \
            else _memory.MemoryKind.CUDA_DEVICE

    @property
    def ptr(self) -> int:
        """The address of the first element. Memory handed out this way can
        be written where adjit cannot see it, so the array counts as shared
        from then on (tapes save its values when they record a launch)."""
        self._may_be_written_outside()
        self._shared = True
        if self.device != "cpu":
            return self._buffer.ptr
        return int(self._buffer.ctypes.data)

    def list(self) -> list:
        """The elements in flattened order, as a Python list: numbers for
        scalar arrays, vector/matrix values (numpy arrays) otherwise."""
        comp = _component_shape(self.dtype)
        elements = _host_copy(self._buffer).reshape((self.size,) + comp)
        return elements.tolist() if not comp else [e.copy() for e in elements]

    def __iter__(self):
        raise TypeError("adjit arrays are not iterable (as in Warp); use a.numpy() or a.list()")

    # Arithmetic, as Warp's arrays: ``a + b``, ``a * s``, ``-a``, ``a += s``
    # are element-wise ``map`` launches of the builtin (a tape records them,
    # types combine as in kernels), with arrays, scalars and vector values.
    # A numpy array of values (ndim > 0) keeps numpy's meaning, as before:
    # the adjit array is read as a numpy array and numpy computes.

    def _arith(self, name: str, *operands, out=None):
        if _map_function is None:
            raise RuntimeError("adjit.host_calls is not loaded (import adjit)")
        return _map_function(name, *operands, out=out)

    def _binary(name, reflected=False, inplace=False):  # noqa: N805 (builds the methods below)
        def method(self, other):
            if isinstance(other, np.ndarray) and other.ndim > 0 and not _is_value_array(other):
                return NotImplemented  # numpy's element-wise meaning (through __array_ufunc__)
            operands = (other, self) if reflected else (self, other)
            return self._arith(name, *operands, out=self if inplace else None)
        method.__name__ = f"__{'i' if inplace else 'r' if reflected else ''}{name}__"
        return method

    __add__, __radd__, __iadd__ = _binary("add"), _binary("add", True), _binary("add", inplace=True)
    __sub__, __rsub__, __isub__ = _binary("sub"), _binary("sub", True), _binary("sub", inplace=True)
    __mul__, __rmul__, __imul__ = _binary("mul"), _binary("mul", True), _binary("mul", inplace=True)
    __truediv__, __rtruediv__, __itruediv__ = _binary("div"), _binary("div", True), _binary("div", inplace=True)
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binary("floordiv"), _binary("floordiv", True),
                                                  _binary("floordiv", inplace=True))
    __mod__, __rmod__, __imod__ = _binary("mod"), _binary("mod", True), _binary("mod", inplace=True)
    __pow__, __rpow__, __ipow__ = _binary("pow"), _binary("pow", True), _binary("pow", inplace=True)
    del _binary

    def __neg__(self) -> "Array":
        return self._arith("neg", self)

    def __pos__(self) -> "Array":
        return self._arith("pos", self)

    _UFUNC_BUILTINS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
                       np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow"}

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.float32(2) * a`` (a numpy scalar, adjit's scalar values, on
        the left) is ``map``'s product, as ``a * np.float32(2)``; any other
        ufunc (``np.sin(a)``, ``np.ones(3) + a``) computes on the values as
        numpy arrays, as without this method."""
        name = self._UFUNC_BUILTINS.get(ufunc)
        if name is not None and method == "__call__" and not kwargs and len(inputs) == 2 and \
                all(isinstance(x, Array) or not isinstance(x, np.ndarray) or _is_value_array(x) for x in inputs):
            return self._arith(name, *inputs)
        if any(isinstance(o, Array) for o in kwargs.get("out", ())):
            return NotImplemented
        inputs = tuple(np.asarray(x) if isinstance(x, Array) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def flatten(self) -> "Array":
        """A 1-D view of the elements (no copy). As in Warp, a non-contiguous
        array of 2 or more dimensions cannot be flattened (ValueError: use
        ``a.contiguous().flatten()``, a copy)."""
        if self.ndim > 1:
            self._require_contiguous("flatten")
        return self._make_view(lambda b: b.reshape((self.size,) + _component_shape(self.dtype)))

    def reshape(self, shape) -> "Array":
        """A view of the elements with another shape of the same size (no
        copy); one extent may be -1 (inferred). As in Warp, only a contiguous
        array can be reshaped (ValueError otherwise)."""
        try:
            new_shape = _shape_tuple(shape)
        except (TypeError, ValueError):
            raise TypeError(f"reshape: shape must be an int or a tuple of ints, got {shape!r}") from None
        unknown = [k for k, d in enumerate(new_shape) if d == -1]
        if len(unknown) > 1 or any(d < -1 for d in new_shape):
            raise ValueError(f"reshape: shape {shape!r} has negative extents (only one -1 is allowed)")
        if unknown:
            known = int(np.prod([d for d in new_shape if d != -1]))
            if known == 0 or self.size % known:
                raise ValueError(f"reshape: cannot reshape an array of shape {self.shape} (size {self.size}) "
                                 f"into shape {shape!r}")
            new_shape = new_shape[:unknown[0]] + (self.size // known,) + new_shape[unknown[0] + 1:]
        if int(np.prod(new_shape)) != self.size:
            raise ValueError(f"reshape: cannot reshape an array of shape {self.shape} (size {self.size}) into "
                             f"shape {new_shape} (size {int(np.prod(new_shape))})")
        self._require_contiguous("reshape")
        return self._make_view(lambda b: b.reshape(new_shape + _component_shape(self.dtype)))

    def _require_contiguous(self, what: str) -> None:
        if not self.is_contiguous:
            raise ValueError(f"{what}: the array is a strided view (shape {self.shape}, strides {self.strides}), "
                             f"and as in Warp only contiguous arrays {what} without a copy; use "
                             f"a.contiguous().{what}({'' if what == 'flatten' else 'shape'}) (a copy)")

    def transpose(self, axes=None) -> "Array":
        """A view with the dimensions permuted (as Warp's and numpy's):
        dimension k of the result is dimension ``axes[k]`` of this array
        (None: reversed). The view is strided (not contiguous) unless at most
        one permuted dimension has an extent above 1. A 1-D array is returned
        as is (as in Warp)."""
        if self.ndim == 1 and axes is None:
            return self
        if axes is None:
            axes = tuple(range(self.ndim))[::-1]
        try:
            axes = tuple(axes)
        except TypeError:
            raise TypeError(f"transpose: axes must be a sequence of ints, got {axes!r}") from None
        if not all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) for k in axes):
            raise TypeError(f"transpose: axes must be ints, got {axes!r}")
        axes = tuple(int(k) + self.ndim if k < 0 else int(k) for k in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"transpose: axes {axes!r} are not a permutation of the {self.ndim} dimensions "
                             f"of an array of shape {self.shape}")
        if self.ndim == 1:
            return self
        full = axes + tuple(range(self.ndim, self._buffer.ndim))  # the component dimensions stay last
        return self._make_view(lambda b: b.transpose(full))

    def view(self, dtype) -> "Array":
        """The same memory seen as elements of ``dtype`` (no copy, values
        unchanged), as Warp: a dtype of the same byte size keeps the shape; a
        scalar of a vector/matrix array's scalar size appends the component
        dimensions ((n,) vec3 -> (n, 3)); a vector/matrix type over a scalar
        array whose last dimensions are its shape removes them ((n, 3) -> (n,)
        vec3). Anything else is a TypeError."""
        t = T.value_type_of(dtype)
        old_comp, new_comp = _component_shape(self.dtype), _component_shape(t)
        old_scalar, new_scalar = T.scalar_of(self.dtype).np_dtype, T.scalar_of(t).np_dtype
        old_bytes = old_scalar.itemsize * int(np.prod(old_comp))
        new_bytes = new_scalar.itemsize * int(np.prod(new_comp))
        if new_bytes == old_bytes:
            shape = self.shape
        elif not new_comp and old_comp and new_scalar.itemsize == old_scalar.itemsize:
            shape = self.shape + old_comp
        elif new_comp and not old_comp and new_scalar.itemsize == old_scalar.itemsize:
            if self.shape[len(self.shape) - len(new_comp):] != new_comp:
                raise ValueError(f"view: an array of shape {self.shape} does not end in the shape {new_comp} "
                                 f"of {t}")
            shape = self.shape[:len(self.shape) - len(new_comp)] or (1,)
        else:
            raise TypeError(f"view: cannot view an array of {self.dtype} ({old_bytes} bytes per element) as "
                            f"{t} ({new_bytes} bytes)")
        ndim = self.ndim

        def retype(b: np.ndarray) -> np.ndarray:
            # The leading strides are kept; the element's components are
            # contiguous in both types (checked for a scalar -> vector view).
            inner = _c_strides(shape[ndim:] + new_comp, new_scalar.itemsize)
            if new_bytes == old_bytes or not new_comp:
                strides = b.strides[:ndim] + inner
            else:
                inner = _c_strides(new_comp, new_scalar.itemsize)
                k = len(new_comp)
                if b.strides[ndim - k:ndim] != inner:
                    raise ValueError(f"view: the last {k} dimensions of a strided view (strides {b.strides[:ndim]}) "
                                     f"are not the contiguous components of {t}; view a contiguous copy "
                                     "(a.contiguous())")
                strides = (b.strides[:ndim - k] or (new_bytes,)) + inner
            return _strided(b, new_scalar, shape + new_comp, strides)
        return self._make_view(retype, t)

    def __getitem__(self, key) -> "Array":
        """A view (no copy) by numpy's basic indexing of the array's
        dimensions, as Warp's: ``a[i:j]``, ``a[i]`` (a row of an array of 2
        or more dimensions), ``a[:, 1]``, ``a[1:5:2]``, ``a[::2, 1:3]``, and
        (beyond Warp) ``a[..., 0]``. Steps are positive; bounds out of range
        are an IndexError (as in Warp, which raises; numpy clips). Views with
        steps or inner indices are strided (``is_contiguous`` False).

        Refused with an IndexError: one element (``a[i]`` of a 1-D array,
        ``a[i, j]`` of a 2-D one: read ``a.numpy()``), more indices than the
        array has dimensions (vector/matrix components are not dimensions:
        ``a.view(float)`` makes them ones), ``None``, index arrays and lists
        (Warp's indexedarray is not supported yet), negative steps."""
        items = self._index_items(key)
        if all(not isinstance(k, slice) for k in items):
            if self.ndim == 1:
                raise IndexError("a[i] of a 1-D array is not supported (as in Warp): read a.numpy()[i], or "
                                 "take a[i:i + 1]")
            raise IndexError(f"a[{_key_text(key)}] picks one element, which is not supported (as in Warp): read "
                             f"a.numpy()[{_key_text(key)}]")
        return self._make_view(lambda b: b[items])

    def _index_items(self, key) -> tuple:
        """``key`` as one int or normalized slice per dimension of the array."""
        text = _key_text(key)
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if isinstance(k, Array) or (_structs_loaded() and isinstance(k, _struct_arrays.StructArray)) or \
                    isinstance(k, (list, np.ndarray)):
                raise IndexError(f"a[{text}]: indexing by an array of indices (Warp's indexedarray) is not "
                                 "supported yet; gather with a kernel, or index a.numpy()")
            if k is None:
                raise IndexError(f"a[{text}]: None (numpy's newaxis) is not supported; use a.reshape(...)")
            if not (k is Ellipsis or isinstance(k, slice) or _is_int(k)):
                raise IndexError(f"a[{text}]: indices must be ints, slices or '...', got {k!r}")
        ellipses = [n for n, k in enumerate(keys) if k is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError(f"a[{text}]: at most one '...' is allowed")
        count = len(keys) - len(ellipses)
        if count > self.ndim:
            comp = _component_shape(self.dtype)
            hint = (f"; the components of its {self.dtype} elements are not dimensions: "
                    f"a.view({T.scalar_of(self.dtype)}) is an array of shape {self.shape + comp} whose last "
                    f"{len(comp)} dimension(s) are them" if comp else "")
            raise IndexError(f"a[{text}] has {count} indices, but the array has {self.ndim} dimension(s) "
                             f"(shape {self.shape}){hint}")
        if ellipses:
            n = ellipses[0]
            keys = keys[:n] + (slice(None),) * (self.ndim - count) + keys[n + 1:]
        keys = keys + (slice(None),) * (self.ndim - len(keys))
        items = []
        for dim, (k, n) in enumerate(zip(keys, self.shape)):
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                if not _is_int(step):
                    raise IndexError(f"a[{text}]: slice steps must be integers, got {step!r}")
                if step == 0:
                    raise ValueError(f"a[{text}]: slice step cannot be zero")
                if step < 0:
                    raise IndexError(f"a[{text}]: negative slice steps are not supported (as in Warp); index "
                                     "a.numpy() for a reversed copy")
                start = _slice_bound(k.start, 0, n)
                stop = _slice_bound(k.stop, n, n)
                if not 0 <= start <= stop <= n:
                    raise IndexError(f"a[{text}] is out of range for an extent of {n} (dimension {dim})")
                items.append(slice(start, stop, int(step)))
            else:
                i = int(k) + n if k < 0 else int(k)
                if not 0 <= i < n:
                    raise IndexError(f"a[{text}]: index {k} is out of range for an extent of {n} (dimension {dim})")
                items.append(i)
        return tuple(items)

    def _make_view(self, view_of, dtype=None) -> "Array":
        """An array over ``view_of(self._buffer)`` (a numpy view of it), sharing
        this array's write bookkeeping; its gradient is ``view_of`` of this
        array's gradient (the same view of the same elements)."""
        t = self.dtype if dtype is None else dtype
        buffer = view_of(self._buffer)
        ndim = buffer.ndim - len(_component_shape(t))
        if not 1 <= ndim <= 4:
            raise ValueError(f"arrays have 1 to 4 dimensions; this view would have {ndim}")
        if buffer.size and not may_share_memory(buffer, self._buffer):
            raise AssertionError("internal: an array view does not share its base's memory")
        view = Array(buffer, t, False, self.device, _owned=True)  # shares self's storage below
        storage = self._storage
        if storage.arrays is None:
            storage.arrays = weakref.WeakSet([self])
        storage.arrays.add(view)
        view._storage = storage
        if self.grad is not None:
            view.grad = self.grad._make_view(view_of, t)
            view.requires_grad = True
        return view

    # --- zero-copy exchange (see adjit.interop) -------------------------------
    # Views made through these protocols share the buffer: writes through them
    # are seen by kernels, but adjit does not see them (they bump no version,
    # so a tape cannot tell that a recorded input was overwritten that way).

    @property
    def __array_interface__(self) -> dict:
        """numpy's array interface (v3) of the buffer: the array's shape
        followed by the element's component shape, writable, with the strides
        of a strided view (None when C-contiguous).
        Its users hold the memory without a view adjit can track, so the
        array counts as shared from then on (see ``numpy()``)."""
        if self.device != "cpu":
            raise TypeError(f"an array on '{self.device}' has no host memory for numpy to view: copy it with "
                            "a.numpy()")
        self._may_be_written_outside()
        self._shared = True
        return self._buffer.__array_interface__

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface (v3) of a CUDA array's memory (CuPy,
        PyTorch, Numba and JAX read it without a copy): the array's shape and
        the element's components, byte strides (None when C-contiguous) and
        the device's current stream, which consumers wait for. Its users hold
        the memory where adjit cannot see their writes (as ``ptr``)."""
        if self.device == "cpu":
            raise AttributeError("a CPU array has no __cuda_array_interface__ (it has __array_interface__)")
        from .cuda import current_stream_handle
        buffer = self._buffer
        self._may_be_written_outside()
        self._shared = True
        return {"version": 3, "shape": buffer.shape, "typestr": buffer.dtype.str,
                "data": (buffer.ptr if buffer.size else 0, False),
                "strides": None if buffer.is_c_contiguous else buffer.strides,
                "stream": current_stream_handle(buffer.ordinal) or 1}

    def __dlpack__(self, stream=None, **kwargs):
        """A DLPack capsule of the buffer (CPU: ``stream`` must be None);
        ``max_version``, ``dl_device`` and ``copy`` are passed on to numpy."""
        if self.device != "cpu":
            return self._cuda_dlpack(stream, kwargs)
        if stream is not None:
            raise BufferError("adjit CPU arrays take no stream (stream must be None)")
        view = self._export(self._buffer.view())
        return view.__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def _cuda_dlpack(self, stream, kwargs):
        """The DLPack capsule of a CUDA array's memory: the work queued on the
        device's current stream is waited for first (the consumer's
        ``stream`` then sees it whatever stream it uses)."""
        from .cuda import _cuda, current_stream_handle
        if kwargs.get("copy"):
            raise BufferError("DLPack export with copy=True: adjit hands out its memory (copy=None or False)")
        buffer = self._buffer
        self._may_be_written_outside()
        self._shared = True
        _cuda.Stream.wrap(buffer.ordinal, current_stream_handle(buffer.ordinal)).synchronize()
        kind = buffer.dtype.kind
        code = {"i": 0, "u": 1, "f": 2, "b": 6}.get(kind)
        if code is None:
            raise BufferError(f"DLPack export of {buffer.dtype} arrays is not supported")
        # (a legacy "dltensor" capsule, which consumers asking for max_version take too)
        return _cuda.dlpack_view(buffer.ptr, list(buffer.shape), [s // buffer.itemsize for s in buffer.strides],
                                 code, 8 * buffer.itemsize, buffer.ordinal, self)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU, 0) for a CPU array, (kDLCUDA, ordinal) for a CUDA one."""
        if self.device != "cpu":
            return (_DL_CUDA, self._buffer.ordinal)
        return (_DL_CPU, 0)

    # --- writes recorded on an active tape --------------------------------------

    def assign(self, src) -> "Array":
        """Copies ``src`` (an Array or array-like) into this array, recorded on
        an active tape: the adjoint adds this array's gradient into ``src``'s
        and consumes this array's (its old values were overwritten).

        An Array ``src`` must have this array's shape and dtype. An array-like
        ``src`` must have this array's shape (plus the element's component
        shape), or broadcast to it by numpy's rules (a scalar fills every
        element, a vec3 value every vec3 element); it is never reshaped (a
        ValueError otherwise).
        """
        if isinstance(src, Array):
            if self.shape != src.shape or self.dtype != src.dtype:
                raise ValueError(f"assign: shapes/dtypes differ: {self.shape} {self.dtype} vs {src.shape} "
                                 f"{src.dtype}")
            copy(self, src)
        else:
            try:
                values = np.asarray(numbers_for(self, src), dtype=self._buffer.dtype)
            except (TypeError, ValueError) as e:
                raise ValueError(f"assign: cannot convert {type(src).__name__} to {self._buffer.dtype} "
                                 f"values: {e}") from None
            try:
                np.broadcast_shapes(values.shape, self._buffer.shape)
                if len(values.shape) > len(self._buffer.shape) or \
                        np.broadcast_shapes(values.shape, self._buffer.shape) != self._buffer.shape:
                    raise ValueError
            except ValueError:
                raise ValueError(f"assign: src of shape {values.shape} does not match the array's shape "
                                 f"{self._buffer.shape} (shape {self.shape} of {self.dtype}) and does not "
                                 "broadcast to it; reshape it yourself if that is what you mean") from None
            if _captured(f"assign to {self!r}", lambda: _set(self, values), self.device):
                return self
            with recording.locked(active_tapes()):
                _before_write(self)
                self._buffer[...] = values
                _record_overwrite(self)
        return self

    def zero_(self) -> "Array":
        """Sets every element to zero (recorded: the old values get no gradient)."""
        if _captured(f"zero_ of {self!r}", lambda: _set(self, 0), self.device):
            return self
        with recording.locked(active_tapes()):
            _before_write(self)
            self._buffer[...] = 0
            _record_overwrite(self)
        return self

    def fill_(self, value) -> "Array":
        """Sets every element to ``value`` (recorded: the old values get no gradient)."""
        values = numbers_for(self, value)
        if _captured(f"fill_ of {self!r}", lambda: _set(self, values), self.device):
            return self
        with recording.locked(active_tapes()):
            _before_write(self)
            self._buffer[...] = values
            _record_overwrite(self)
        return self

    def __repr__(self) -> str:
        return f"adjit.array(shape={self.shape}, dtype={self.dtype})"


class _Storage:
    """The write bookkeeping of one memory, shared by the arrays viewing it.
    ``arrays`` (a WeakSet) lists them once a view exists (None before)."""

    __slots__ = ("version", "shared", "views", "holders", "arrays")

    def __init__(self):
        self.version = 0
        self.shared = False
        self.views: list[weakref.ref] | None = None
        self.holders: weakref.WeakSet | None = None
        self.arrays: weakref.WeakSet | None = None


def _component_shape(dtype) -> tuple[int, ...]:
    return () if isinstance(dtype, T.ScalarType) else dtype.shape


def _host_values(scalar: T.ScalarType, values):
    """``values`` ready to store in an array of ``scalar``: bfloat16's host
    storage may be uint16 bit patterns, which numbers are rounded to."""
    return scalar.host(values) if isinstance(scalar, T.BFloat16Type) else values


def _tracked_view(view: np.ndarray) -> tuple[np.ndarray, object]:
    """``view`` again, with a token that lives as long as any numpy array
    derived from it: numpy keeps a derived view's base chain up to the first
    object that is not an array, which here is the token (as_strided's
    holder of the array interface). A view of the buffer itself would not do:
    numpy points slices of it at the buffer, so they outlive it."""
    tracked = np.lib.stride_tricks.as_strided(view)
    token = tracked.base
    assert not isinstance(token, np.ndarray)
    return tracked, token


def numbers_for(a: Array, values):
    """``values`` (numbers) ready to store in ``a``'s buffer."""
    return _host_values(T.scalar_of(a.dtype), values)


def _infer_dtype(data: np.ndarray):
    return T.scalar_type_of(data.dtype)


def array(data=None, dtype=None, shape=None, strides=None, ptr=None, capacity=None, device=None,
          pinned: bool = False, copy: bool = True, deleter=None, ndim=None, grad=None,
          requires_grad: bool = False):
    """Creates an array from data, or (without data or shape) is an array
    annotation; Warp's signature.

    ``adjit.array(np_array)``, ``adjit.array([[1, 2, 3]], dtype=adjit.vec3)``;
    in a kernel signature, ``x: adjit.array(dtype=float, ndim=2)``.
    ``copy=False`` shares the data's memory where it already has the
    element's scalar dtype and a C-contiguous layout (else the data is
    copied, as Warp does). ``ptr``: an array over memory at that address
    (with ``shape``, ``dtype``, optional byte ``strides`` and ``capacity``
    in bytes); the memory must stay valid while the array lives, and
    ``deleter(ptr, capacity)`` is called when it is freed. ``grad``: the
    gradient array (same shape and dtype). ``pinned`` changes nothing for
    CPU memory.
    """
    if ptr is not None:
        a = _array_at(ptr, dtype, shape, strides, capacity, deleter, requires_grad, device)
    elif strides is not None or capacity is not None or deleter is not None:
        raise ValueError("array: strides=, capacity= and deleter= describe memory given by ptr=")
    elif data is None and shape is None:
        if grad is not None or requires_grad:
            raise ValueError("array: an annotation (no data or shape) takes no grad= or requires_grad=")
        return T.ArrayType(dtype if dtype is not None else T.float32, ndim or 1)
    elif data is None:
        a = empty(shape, dtype or T.float32, requires_grad=requires_grad, device=device)
    else:
        share = not copy and not isinstance(dtype, T.StructType) and _can_share(data, dtype, shape)
        a = _array_from_data(data, dtype, shape, ndim, requires_grad, device, share)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"array: ndim={ndim} but this makes a {a.ndim}-d array")
    if grad is not None:
        if not isinstance(grad, Array) or grad.shape != a.shape or grad.dtype != a.dtype:
            raise ValueError(f"array: grad= must be an array of the same shape and dtype ({a.shape}, {a.dtype}), "
                             f"got {grad!r}")
        a.requires_grad = True
        a.grad = grad
    return a


def _can_share(data, dtype, shape) -> bool:
    """Whether ``array(data, copy=False)`` can use the data's memory as it is."""
    if shape is not None or not isinstance(data, np.ndarray) or not data.flags.c_contiguous \
            or not data.flags.writeable:
        return False
    try:
        scalar = T.scalar_of(T.value_type_of(dtype)) if dtype is not None else _infer_dtype(data)
    except (TypeError, ValueError, KeyError):
        return False
    return scalar is not None and data.dtype == scalar.np_dtype


def from_ptr(ptr, length, dtype=None, shape=None, device=None) -> "Array":
    """An array over ``length`` elements at address ``ptr`` (Warp's
    deprecated ``wp.from_ptr``; use ``adjit.array(ptr=..., dtype=...,
    shape=...)``): ``dtype`` defaults to float32 and ``shape`` to
    ``(length,)``; a given ``shape`` must hold ``length`` elements. The
    memory must stay valid while the array lives. Warns DeprecationWarning."""
    import warnings
    warnings.warn("adjit.from_ptr is deprecated (as in Warp): use adjit.array(ptr=address, dtype=..., shape=...)",
                  DeprecationWarning, stacklevel=2)
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
        raise ValueError(f"from_ptr: length must be an int >= 0 (a number of elements), got {length!r}")
    dims = (int(length),) if shape is None else _shape_tuple(shape)
    if int(np.prod(dims, dtype=np.int64)) != length:
        raise ValueError(f"from_ptr: shape {dims} holds {int(np.prod(dims, dtype=np.int64))} elements, "
                         f"not length={length}")
    return _array_at(ptr, T.float32 if dtype is None else dtype, dims, None, None, None, False, device)


def _array_at(ptr, dtype, shape, strides, capacity, deleter, requires_grad, device) -> "Array":
    """An array over ``capacity`` bytes at address ``ptr`` (Warp's ``ptr=``)."""
    import ctypes
    if isinstance(ptr, bool) or not isinstance(ptr, (int, np.integer)) or ptr <= 0:
        raise ValueError(f"array: ptr must be a positive int address, got {ptr!r}")
    if shape is None or dtype is None:
        raise ValueError("array: ptr= needs shape= and dtype=")
    t = T.value_type_of(dtype)
    scalar = T.scalar_of(t)
    comp = _component_shape(t)
    dims = _shape_tuple(shape)
    itemsize = scalar.np_dtype.itemsize * int(np.prod(comp, dtype=np.int64))
    if strides is None:
        strides = _dense_strides(dims, itemsize)
    strides = tuple(int(v) for v in strides)
    if len(strides) != len(dims) or any(v < 0 for v in strides):
        raise ValueError(f"array: strides must be {len(dims)} non-negative byte counts, got {strides!r}")
    needed = (sum((d - 1) * v for d, v in zip(dims, strides)) + itemsize) if all(dims) else 0
    capacity = needed if capacity is None else int(capacity)
    if capacity < needed:
        raise ValueError(f"array: shape {dims} with strides {strides} reaches {needed} bytes, past "
                         f"capacity={capacity}")
    _device(device)
    raw = np.frombuffer((ctypes.c_byte * max(capacity, 1)).from_address(int(ptr)), dtype=np.uint8)
    comp_strides = _dense_strides(comp, scalar.np_dtype.itemsize)
    buffer = np.lib.stride_tricks.as_strided(raw.view(scalar.np_dtype) if capacity % scalar.np_dtype.itemsize == 0
                                             else raw[:capacity - capacity % scalar.np_dtype.itemsize]
                                             .view(scalar.np_dtype),
                                             dims + comp, strides + comp_strides, writeable=True)
    a = Array(buffer, t, requires_grad)  # memory adjit does not own: shared (a tape snapshots it)
    if deleter is not None:
        weakref.finalize(a, deleter, int(ptr), capacity)
    return a


def _dense_strides(shape: tuple, itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _array_from_data(data, dtype, shape, ndim, requires_grad, device, share: bool = False) -> "Array":
    if isinstance(dtype, T.StructType):  # an array of structs: one array per field
        a = _structs().struct_array(data, dtype, shape, requires_grad, _device(device))
        if ndim is not None and a.ndim != ndim:
            raise ValueError(f"array: ndim={ndim} but the data makes a {a.ndim}-d array of {dtype.name}")
        return a
    if isinstance(data, Array):
        if data.device != "cpu" and dtype is None and shape is None:  # a copy on the device (not recorded)
            alias = data.device if device is None else _device(device)
            buffer = data._buffer.copy() if alias == data.device else _on_device(_host_copy(data._buffer), alias)
            return Array(_memory.adopt(buffer, data.dtype, alias, data.shape), data.dtype, requires_grad, alias,
                         _owned=True)
        data = data.numpy()
    elif hasattr(data, "__cuda_array_interface__"):  # CuPy, PyTorch CUDA tensors, Numba: copied on the device
        from .cuda_memory import from_interface, interface_ordinal
        target = None if device is None or _device(device) == "cpu" else device
        memory = from_interface(data, interface_ordinal(data, target))
        if dtype is None and shape is None and memory.is_c_contiguous:
            t = _infer_dtype(np.empty(0, memory.dtype))
            alias = f"cuda:{memory.ordinal}" if device is None else _device(device)
            copied = memory.copy() if alias == f"cuda:{memory.ordinal}" else _on_device(memory.numpy(), alias)
            return Array(_memory.adopt(copied, t, alias), t, requires_grad, alias, _owned=True)
        data = memory.numpy()
    t = T.value_type_of(dtype) if dtype is not None else None
    np_data = np.asarray(data)
    if t is None:
        t = _infer_dtype(np_data)
    scalar = T.scalar_of(t)
    comp = _component_shape(t)
    buffer = np.ascontiguousarray(_host_values(scalar, np_data), dtype=scalar.np_dtype)
    if not share and (buffer is np_data or np.may_share_memory(buffer, np_data)):
        buffer = buffer.copy()  # adjit.array copies its data unless copy=False (from_numpy shares it)
    if shape is not None:
        target = _shape_tuple(shape) + comp
        if any(d < 0 for d in target):
            raise ValueError(f"array: shape must have non-negative extents, got {shape!r}")
        if buffer.shape != target:
            if buffer.size != int(np.prod(target)):
                raise ValueError(f"array: data of shape {np_data.shape} ({buffer.size} values) does not fit "
                                 f"shape={shape!r} of {t} ({int(np.prod(target))} values)")
            buffer = buffer.reshape(target)
    if comp:
        buffer = _as_components(buffer, comp)
        if tuple(buffer.shape[buffer.ndim - len(comp):]) != comp:
            raise ValueError(f"data of shape {np_data.shape} does not end in the component shape {comp} of {t}")
    if buffer.ndim - len(comp) < 1 or buffer.ndim - len(comp) > 4:
        raise ValueError(f"arrays have 1 to 4 dimensions, got data of shape {np_data.shape}")
    if ndim is not None and buffer.ndim - len(comp) != ndim:
        raise ValueError(f"array: ndim={ndim} but the data makes a {buffer.ndim - len(comp)}-d array of {t} "
                         f"(data of shape {np_data.shape})")
    alias = _device(device)
    if alias != "cpu":
        buffer = _memory.adopt(_on_device(buffer, alias), t, alias, buffer.shape[:buffer.ndim - len(comp)])
        return Array(buffer, t, requires_grad, alias, _owned=True)
    if not np.may_share_memory(buffer, np_data):
        buffer = _memory.adopt(buffer, t, alias, buffer.shape[:buffer.ndim - len(comp)])
    # Shared: the caller's numpy array keeps the memory, adjit cannot see its writes.
    a = Array(buffer, t, requires_grad, alias, _owned=not np.may_share_memory(buffer, np_data))
    return a


def _slice_bound(bound, default: int, n: int) -> int:
    if bound is None:
        return default
    if isinstance(bound, (bool, np.bool_)) or not isinstance(bound, (int, np.integer)):
        raise IndexError(f"slice bounds must be integers, got {bound!r}")
    return int(bound) + n if bound < 0 else int(bound)


def _slice_text(key: slice) -> str:
    text = ":".join("" if b is None else str(b) for b in (key.start, key.stop))
    return text if key.step is None else f"{text}:{key.step}"


def _key_text(key) -> str:
    keys = key if isinstance(key, tuple) else (key,)
    return ", ".join("..." if k is Ellipsis else _slice_text(k) if isinstance(k, slice) else repr(k) for k in keys)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _as_components(buffer: np.ndarray, comp: tuple) -> np.ndarray:
    """Data for an array of vectors or matrices (component shape ``comp``),
    read as Warp reads it: data of exactly the component shape is one
    element; a last extent holding a whole element's components (a matrix
    row-major) is one element; flat data is consecutive elements."""
    if tuple(buffer.shape[buffer.ndim - len(comp):]) == comp and buffer.ndim > len(comp):
        return buffer
    if buffer.shape == comp:
        return buffer.reshape((1,) + comp)
    size = int(np.prod(comp))
    if buffer.ndim >= 1 and buffer.shape[-1] == size:
        return buffer.reshape(buffer.shape[:-1] + comp)
    if buffer.ndim == 1 and size and buffer.size % size == 0:
        return buffer.reshape((-1,) + comp)
    return buffer


def _structs_loaded() -> bool:
    return _struct_arrays is not None


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The strides of a C-contiguous block of ``shape``."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


class _Memory:
    """Memory of ``base`` described by a numpy array interface (keeps ``base``
    alive for the array made from it)."""

    def __init__(self, base: np.ndarray, interface: dict):
        self.base = base
        self.__array_interface__ = interface


def _strided(base: np.ndarray, dtype: np.dtype, shape: tuple, strides: tuple) -> np.ndarray:
    """A numpy view of ``base``'s memory from its first element, as ``shape``
    elements of ``dtype`` ``strides`` bytes apart (numpy's ``view`` cannot
    change the item size of a strided array)."""
    if isinstance(base, CudaMemory):
        return CudaMemory(base.allocation, dtype, shape, strides, base.offset)
    address = base.__array_interface__["data"][0]
    interface = {"version": 3, "shape": tuple(shape), "typestr": np.dtype(dtype).str,
                 "data": (address, not base.flags.writeable), "strides": tuple(strides)}
    return np.asarray(_Memory(base, interface))


def _zeros_in_layout(buffer: np.ndarray, dtype, device: str, shape: tuple) -> np.ndarray:
    """Zeros of ``buffer``'s shape and dtype, with its strides (as Warp gives
    a strided view's gradient): C-contiguous unless ``buffer`` is not. The
    memory of an array of ``shape`` and ``dtype`` on ``device`` (from its
    allocator; tracked)."""
    if buffer.flags.c_contiguous or buffer.size == 0:
        return _memory.allocate(buffer.shape, buffer.dtype, dtype, device, zero=True, array_shape=shape)
    span = sum((n - 1) * s for n, s in zip(buffer.shape, buffer.strides)) + buffer.itemsize
    memory = _memory.allocate((-(-span // buffer.itemsize),), buffer.dtype, dtype, device, zero=True,
                              array_shape=shape)
    if isinstance(memory, CudaMemory):
        return memory.as_strided(buffer.shape, buffer.strides)
    return np.lib.stride_tricks.as_strided(memory, buffer.shape, buffer.strides)


def _is_value_array(x: np.ndarray) -> bool:
    """A quaternion or transform value (their own numpy array classes): one
    value, never an array of numbers."""
    return isinstance(x, (T.QuatValue, T.TransformValue))


def _shape_tuple(shape) -> tuple[int, ...]:
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)


def _host_copy(buffer) -> np.ndarray:
    """A C-contiguous host copy of a buffer (numpy or device memory)."""
    if isinstance(buffer, CudaMemory):
        return buffer.numpy()
    return np.ascontiguousarray(buffer).copy()


def _on_device(buffer: np.ndarray, device: str):
    """A host buffer as the memory of an array on ``device`` (uploaded to a CUDA device)."""
    if device == "cpu":
        return buffer
    return CudaMemory.from_host(get_device(device).ordinal, buffer)


def _unpickle_array(buffer, dtype, requires_grad, device, grad):
    if device != "cpu":
        buffer = _memory.adopt(CudaMemory.from_host(get_device(device).ordinal, buffer), dtype, device)
    a = Array(buffer, dtype, requires_grad, device, _owned=True)
    if grad is not None:
        a.grad._buffer[...] = grad
    return a


# The constructors take Warp's parameter order: (shape, [value,] dtype,
# device, requires_grad). ``pinned`` (page-locked host memory, for faster
# GPU copies in Warp) changes no value and is accepted.

def _device(device) -> str:
    """The alias of the device named by ``device`` (None: the default device,
    see adjit.set_device / ScopedDevice)."""
    if device is not None and not isinstance(device, (str, Device)):
        raise TypeError(f"device must be a string such as 'cpu' or an adjit.Device, got {device!r} (note "
                        "Warp's order: zeros(shape, dtype, device, requires_grad))")
    return device_alias(device)


def _shape_or_n(shape, n) -> tuple[int, ...]:
    """The shape of a constructor given ``shape`` and Warp's older ``n=``
    (a 1-d length, which wins when both are given, as in Warp); neither: (0,)."""
    if n is not None:
        return (operator.index(n),)
    return (0,) if shape is None else _shape_tuple(shape)


def full(shape=None, value=0, dtype=float, device=None, requires_grad: bool = False, pinned: bool = False, *,
         n: int | None = None) -> Array:
    """An array of ``shape`` with every element ``value`` (as Warp's full);
    for a struct ``dtype``, ``value`` is a struct value (or 0)."""
    shape = _shape_or_n(shape, n)
    if isinstance(dtype, T.StructType):
        return _structs().struct_full(shape, value, dtype, _device(device), requires_grad)
    t = T.value_type_of(dtype)
    scalar = T.scalar_of(t)
    dims = _shape_tuple(shape)
    buffer = _memory.allocate(dims + _component_shape(t), scalar.np_dtype, t, _device(device), array_shape=dims)
    values = _host_values(scalar, value)
    buffer[...] = values
    out = Array(buffer, t, requires_grad, _device(device), _owned=True)
    # (made in a capture: made again at replays)
    _captured(f"fill of a new {out!r}", lambda: _set(out, values), out.device, ran=True)
    return out


def zeros(shape=None, dtype=float, device=None, requires_grad: bool = False, pinned: bool = False, *,
          n: int | None = None) -> Array:
    """An array of zeros (as Warp's zeros)."""
    return full(_shape_or_n(shape, n), 0, dtype, device, requires_grad)


def ones(shape=None, dtype=float, device=None, requires_grad: bool = False, pinned: bool = False, *,
         n: int | None = None) -> Array:
    """An array of ones (as Warp's ones)."""
    shape = _shape_or_n(shape, n)
    if isinstance(dtype, T.StructType):
        raise TypeError(f"ones: an array of structs ({dtype.name}) has no 'one'; use full(shape, value, "
                        f"{dtype.name}) with a struct value")
    return full(shape, 1, dtype, device, requires_grad)


def empty(shape=None, dtype=float, device=None, requires_grad: bool = False, pinned: bool = False, *,
          n: int | None = None, ndim: int | None = None) -> Array:
    """An array whose values are undefined until written (as Warp's empty).

    ``ndim`` (an array keyword Warp's empty passes on): without a shape, the
    empty array of that many dimensions (shape (0,) * ndim; Warp's ignores
    it there and gives shape (0,)); with one, it must be the shape's length."""
    if ndim is not None:
        if not isinstance(ndim, int) or not 1 <= ndim <= 4:
            raise ValueError(f"empty: ndim must be 1 to 4 (adjit arrays have 1 to 4 dimensions), got {ndim!r}")
        if shape is None and n is None:
            shape = (0,) * ndim
        elif len(_shape_tuple(_shape_or_n(shape, n))) != ndim:
            dims = _shape_tuple(_shape_or_n(shape, n))
            raise ValueError(f"empty: shape {dims} has {len(dims)} dimensions, not ndim={ndim}")
    shape = _shape_or_n(shape, n)
    if isinstance(dtype, T.StructType):
        return _structs().struct_full(shape, None, dtype, _device(device), requires_grad)
    t = T.value_type_of(dtype)
    scalar = T.scalar_of(t)
    dims = _shape_tuple(shape)
    buffer = _memory.allocate(dims + _component_shape(t), scalar.np_dtype, t, _device(device), array_shape=dims)
    return Array(buffer, t, requires_grad, _device(device), _owned=True)


def _like_source(a, who: str) -> Array:
    if isinstance(a, np.ndarray) or not all(hasattr(a, n) for n in ("shape", "dtype", "device", "requires_grad")):
        raise TypeError(f"{who}: the template must be an adjit array, got {type(a).__module__}."
                        f"{type(a).__qualname__} (for a numpy array, use adjit.array(np.{who}(a)) or "
                        f"adjit.{who.replace('_like', '')}(a.shape, dtype=...))")
    return a


def full_like(a: Array, value, device=None, requires_grad: bool | None = None, pinned: bool = False) -> Array:
    """An array of ``a``'s shape and dtype with every element ``value``."""
    a = _like_source(a, "full_like")
    return full(a.shape, value, a.dtype, device or a.device,
                a.requires_grad if requires_grad is None else requires_grad)


def empty_like(a: Array, device=None, requires_grad: bool | None = None, pinned: bool = False) -> Array:
    """An array of ``a``'s shape and dtype whose values are undefined until written."""
    a = _like_source(a, "empty_like")
    return empty(a.shape, a.dtype, device or a.device, a.requires_grad if requires_grad is None else requires_grad)


def zeros_like(a: Array, device=None, requires_grad: bool | None = None, pinned: bool = False) -> Array:
    a = _like_source(a, "zeros_like")
    return zeros(a.shape, a.dtype, device or a.device, a.requires_grad if requires_grad is None else requires_grad)


def ones_like(a: Array, device=None, requires_grad: bool | None = None, pinned: bool = False) -> Array:
    a = _like_source(a, "ones_like")
    return ones(a.shape, a.dtype, device or a.device, a.requires_grad if requires_grad is None else requires_grad)


def _array_nd(ndim: int):
    def array_nd(data=None, dtype=None, shape=None, requires_grad: bool = False, device=None):
        if data is None and shape is None:
            return T.ArrayType(dtype if dtype is not None else T.float32, ndim)
        if shape is not None and data is None and len(_shape_tuple(shape)) != ndim:
            raise ValueError(f"array{ndim}d needs a shape of {ndim} extents, got {shape!r}")
        a = array(data, dtype=dtype, shape=shape, requires_grad=requires_grad, device=device)
        if a.ndim != ndim:
            raise ValueError(f"array{ndim}d needs {ndim}-d data, got data of shape {np.shape(data)} "
                             f"({a.ndim}-d arrays of {a.dtype})")
        return a

    array_nd.__name__ = array_nd.__qualname__ = f"array{ndim}d"
    array_nd.__doc__ = (f"``array(..., ndim={ndim})``: in a kernel signature ``x: adjit.array{ndim}d(dtype=float)``"
                        f" is the annotation of a {ndim}-d array; with data or a shape it creates a {ndim}-d array.")
    return array_nd


class _ArrayName:
    """What ``adjit.array`` (and ``array1d`` .. ``array4d``) is: the function,
    plus Warp's other spellings: ``array[float]`` / ``array[wp.vec3]`` is an
    array annotation (``array2d[float]``: 2-d), and ``isinstance(x, array)``
    tests for an adjit array."""

    def __init__(self, fn, ndim: int | None = None):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._ndim = ndim

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getitem__(self, dtype) -> T.ArrayType:
        if isinstance(dtype, typing.TypeVar):
            # ``array2d[IndexType]`` in a generic host class's annotations: a
            # typing alias (no kernel type: a kernel annotated so says it is not one)
            return types.GenericAlias(self, (dtype,))
        if isinstance(dtype, tuple):  # Warp's array[dtype, ndim] / array[dtype, Literal[ndim]]
            if self._ndim is not None or len(dtype) != 2:
                raise TypeError(f"adjit.{self.__name__}[...] takes a dtype" +
                                ("" if self._ndim is not None else " and optionally an ndim") +
                                f", got {len(dtype)} parameters")
            dtype, ndim = dtype
            if typing.get_origin(ndim) is typing.Literal and len(typing.get_args(ndim)) == 1:
                ndim = typing.get_args(ndim)[0]
            if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= 4:
                raise TypeError(f"an array's ndim is 1 to 4, got {ndim!r}")
            return T.ArrayType(dtype, ndim)
        return T.ArrayType(dtype, self._ndim or 1)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, (Array, _structs().StructArray)) and (self._ndim is None or obj.ndim == self._ndim)

    def __or__(self, other):  # ``wp.array | None``, ``wp.array | np.ndarray`` in host annotations
        return typing.Union[self, other]

    def __ror__(self, other):
        return typing.Union[other, self]

    def __repr__(self) -> str:
        return f"<adjit {self.__name__}>"


array = _ArrayName(array)
array1d = _ArrayName(_array_nd(1), 1)
array2d = _ArrayName(_array_nd(2), 2)
array3d = _ArrayName(_array_nd(3), 3)
array4d = _ArrayName(_array_nd(4), 4)


def _captured(what: str, run, *devices, ran: bool = False) -> bool:
    """In a capture on this thread (runtime/capture.py): records ``run`` for
    the graph's replays and returns True (the caller does not run it now,
    except to make a new array's first values: ``ran``); a tape recording
    now is a CaptureError. ``devices``: those of the arrays it touches (a
    CUDA graph holds one device's work). False otherwise."""
    if _capture._open and _capture.capturing() is not None:
        _capture.record("memory", what, run, active_tapes(), devices, ran)
        return True
    return False


def _set(dest: Array, values) -> None:
    """``dest``'s elements set to ``values`` (an operation replayed by a graph)."""
    dest._version += 1
    dest._buffer[...] = values


def _before_write(dest: Array) -> None:
    """Lets the active tapes save ``dest`` if a recorded step still needs its
    current values, then bumps its version."""
    for tape in active_tapes():
        tape.protect(dest)
    dest._version += 1


def _record_overwrite(dest: Array) -> None:
    tapes = active_tapes()
    if tapes and dest.grad is not None:
        grad = dest.grad

        def backward():
            grad._buffer[...] = 0
        for tape in tapes:
            tape.record(backward, [dest], name="overwrite", outputs=[dest])


def _record_non_differentiable(what: str, outputs, inputs) -> None:
    """Records on the active tapes that ``what`` wrote ``outputs`` from
    ``inputs`` without an adjoint (as Warp's, these host operations are not
    differentiable). On backward, a nonzero gradient reaching an output
    raises GradientError if an input has a gradient (it would be dropped
    silently); otherwise the outputs' gradients are consumed (zeroed)."""
    tapes = active_tapes()
    outputs = [a for a in outputs if a.grad is not None]
    if not tapes or not outputs:
        return
    with_grad = [a for a in inputs if a.grad is not None]

    def backward():
        for out in outputs:
            if with_grad and np.any(out.grad._buffer):
                raise GradientError(
                    f"{what} is not differentiable (as in Warp), but a gradient reached the array it wrote "
                    f"({out!r}) while its inputs have gradients; compute it with a kernel launch instead, or "
                    "call it outside the tape")
            out.grad._buffer[...] = 0
    for tape in tapes:
        tape.record(backward, list(outputs) + list(inputs), name=what, inputs=inputs, outputs=outputs)


def copy(dest: Array, src: Array, dest_offset: int = 0, src_offset: int = 0, count: int = 0,
         stream=None) -> Array:
    """Copies ``count`` elements of ``src`` from ``src_offset`` into ``dest``
    from ``dest_offset`` (as Warp's copy): offsets and count are in elements
    of the flattened arrays, which may differ in shape but not in dtype.
    ``count=0`` copies the rest of ``src`` from ``src_offset`` (Warp raises
    there when ``src_offset`` is not 0). ``stream`` must be None (CPU).

    Recorded on an active tape when ``dest`` has a gradient: the adjoint adds
    the copied range of ``dest.grad`` into the same range of ``src.grad``
    and zeroes that range of ``dest.grad`` (the values there were
    overwritten); the rest of ``dest`` keeps its gradient. Arrays of
    structs are copied field by field."""
    if type(dest) is not Array or type(src) is not Array:
        structs = _structs()
        if isinstance(dest, structs.StructArray) or isinstance(src, structs.StructArray):
            return structs.copy(dest, src, dest_offset, src_offset, count)
    if not isinstance(dest, Array) or not isinstance(src, Array):
        raise TypeError(f"copy(dest, src) takes two adjit arrays, got {type(dest).__name__} and "
                        f"{type(src).__name__}")
    if stream is not None:
        raise ValueError("copy: adjit copies on the CPU and takes no stream (stream must be None)")
    if dest.dtype != src.dtype:
        raise ValueError(f"copy: dtypes differ: dest is an array of {dest.dtype}, src of {src.dtype} "
                         "(copy converts nothing; convert the values first)")
    for name, value in (("dest_offset", dest_offset), ("src_offset", src_offset), ("count", count)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"copy: {name} must be an int, got {value!r}")
        if value < 0:
            raise ValueError(f"copy: {name} must be non-negative, got {value}")
    dest_offset, src_offset, count = int(dest_offset), int(src_offset), int(count)
    if src_offset > src.size:
        raise ValueError(f"copy: src_offset {src_offset} is past the end of src ({src.size} elements)")
    if count == 0:
        count = src.size - src_offset
    if src_offset + count > src.size:
        raise ValueError(f"copy: {count} elements from src_offset {src_offset} run past the end of src "
                         f"({src.size} elements)")
    if dest_offset + count > dest.size:
        raise ValueError(f"copy: {count} elements to dest_offset {dest_offset} run past the end of dest "
                         f"({dest.size} elements)")
    _copy_elements(dest, src, dest_offset, src_offset, count)
    return dest


def _elements(a: Array) -> np.ndarray:
    """The elements as a 1-D sequence: a view if ``a`` is contiguous, else a
    copy (write through ``_write_elements``)."""
    return _read_elements(a, 0, a.size)


def _read_elements(a: Array, offset: int, count: int) -> np.ndarray:
    """Elements ``offset .. offset + count - 1`` of the flattened array, as a
    (count,) + component-shape array (a view if ``a`` is contiguous, else a
    copy: read it before writing ``a``)."""
    comp = _component_shape(a.dtype)
    buffer = a._buffer
    if buffer.flags.c_contiguous:
        return buffer.reshape((a.size,) + comp)[offset:offset + count]
    if isinstance(buffer, CudaMemory):
        buffer = buffer.numpy()  # (a strided view: through the host)
    k = int(np.prod(comp))
    return buffer.flat[offset * k:(offset + count) * k].reshape((count,) + comp)


def _write_elements(a: Array, offset: int, count: int, values: np.ndarray) -> None:
    """Writes ``values`` into elements ``offset .. offset + count - 1`` of the
    flattened array (through the strides of a strided view)."""
    comp = _component_shape(a.dtype)
    buffer = a._buffer
    if isinstance(values, CudaMemory) and not isinstance(buffer, CudaMemory):
        values = values.numpy()
    if buffer.flags.c_contiguous:
        # (numpy copies through a temporary when the ranges overlap; device
        # memory copies within one allocation are queued in order)
        buffer.reshape((a.size,) + comp)[offset:offset + count] = values
    elif isinstance(buffer, CudaMemory):
        host = buffer.numpy()  # (a strided view: through the host)
        k = int(np.prod(comp))
        host.reshape(-1)[offset * k:(offset + count) * k] = np.ravel(np.asarray(values, host.dtype))
        buffer[...] = host
    elif offset == 0 and count == a.size:
        buffer[...] = np.broadcast_to(values, (count,) + comp).reshape(buffer.shape)
    else:
        k = int(np.prod(comp))
        if np.may_share_memory(values, buffer):
            values = values.copy()
        buffer.flat[offset * k:(offset + count) * k] = np.ravel(values)


def _copy_elements(dest: Array, src: Array, dest_offset: int, src_offset: int, count: int) -> None:
    def run():
        dest._version += 1
        _write_elements(dest, dest_offset, count, _read_elements(src, src_offset, count))
    if _captured(f"copy of {count} elements into {dest!r}", run, dest.device, src.device):
        return
    tapes = active_tapes()
    with recording.locked(tapes):
        _before_write(dest)
        _write_elements(dest, dest_offset, count, _read_elements(src, src_offset, count))
        if tapes and dest.grad is not None:
            dest_grad, src_grad = dest.grad, src.grad

            def backward():
                # The copied range's gradient is taken before it is zeroed, so
                # a copy within one array (overlapping ranges) is right too.
                arriving = _read_elements(dest_grad, dest_offset, count).copy()
                _write_elements(dest_grad, dest_offset, count, 0)
                if src_grad is not None:
                    _write_elements(src_grad, src_offset, count,
                                    _read_elements(src_grad, src_offset, count) + arriving)
            for tape in tapes:
                tape.record(backward, [dest, src], name="copy", inputs=[src], outputs=[dest])


def clone(src: Array, device=None, requires_grad: bool | None = None, pinned: bool = False) -> Array:
    """A copy of ``src`` (on ``device``: None is ``src``'s), recorded on an
    active tape: the adjoint adds the clone's gradient into ``src.grad`` (an
    array of structs: field by field)."""
    if type(src) is not Array:
        structs = _structs()
        if isinstance(src, structs.StructArray):
            if device is not None and _device(device) != src.device:
                raise ValueError("clone: an array of structs is cloned on its own device only so far")
            return structs.clone(src, requires_grad)
    if isinstance(device, bool) and requires_grad is None:
        device, requires_grad = None, device  # (adjit's older clone(src, requires_grad))
    if requires_grad is None:
        requires_grad = src.requires_grad
    alias = src.device if device is None else _device(device)
    if alias == src.device:
        buffer = src._buffer.copy()
    elif alias == "cpu":
        buffer = src._buffer.numpy()
    else:
        buffer = _on_device(_host_copy(src._buffer), alias)
    out = Array(_memory.adopt(buffer, src.dtype, alias, src.shape), src.dtype, requires_grad, alias, _owned=True)
    if _captured(f"clone of {src!r}", lambda: _set(out, src._buffer if alias == src.device
                                                  else _host_copy(src._buffer)), alias, src.device, ran=True):
        return out
    tapes = active_tapes()
    if tapes and out.grad is not None:
        out_grad, src_grad = out.grad, src.grad

        def backward():
            if src_grad is not None:
                src_grad._buffer[...] += out_grad._buffer if out_grad.device == src_grad.device \
                    else _host_copy(out_grad._buffer)
            out_grad._buffer[...] = 0
        for tape in tapes:
            tape.record(backward, [out, src], name="clone", inputs=[src], outputs=[out])
    return out


def grad_or_scratch(array: Array) -> Array:
    """The gradient array of ``array``, or a zeroed scratch one if it has none."""
    return array.grad if array.grad is not None else zeros_like(array, requires_grad=False)
