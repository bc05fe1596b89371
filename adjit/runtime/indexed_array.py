"""Indexed arrays on the host: ``adjit.indexedarray(data, indices)`` (Warp's
``wp.indexedarray``).

An indexed array views the elements of a data array through one 1-d int32
index array per dimension (None: the dimension is taken whole): element
``ia[i, j]`` is ``data[idx0[i], j]``, and ``ia.shape[d]`` is the length of
``indices[d]`` (the data's ``shape[d]`` for a dimension not indexed). It
shares the data array's memory: kernels write through it, and gradients of
reads and writes accumulate into ``data.grad`` (the tape sees the data array
as the argument).

A kernel parameter ``ia: adjit.indexedarray(dtype=float)`` takes the data
array and one index array per dimension (``IndexedArrayType.leaves``); a
dimension that is not indexed passes the identity (``arange``, made once
here), so one compiled kernel serves every choice of indexed dimensions.
"""
from __future__ import annotations

import numpy as np

from .. import types as T
from . import recording
from .array import Array, _before_write, _host_values, array as make_array
from .recording import active_tapes


@T.register_host_array_class
class IndexedArray:
    """``data`` seen through ``indices`` (see the module docstring). The
    index arrays are read at each launch (changing them changes what the
    next launch sees); out-of-range indices are reported by the kernels'
    bounds checks (and by ``numpy()``)."""

    def __init__(self, data: Array, indices=None):
        if isinstance(data, IndexedArray):
            raise TypeError("indexedarray: the data must be an adjit array, not another indexed array")
        if not isinstance(data, Array):
            raise TypeError(f"indexedarray: the data must be an adjit array, got {type(data).__name__}")
        if isinstance(indices, Array):
            indices = [indices]
        elif indices is None:
            indices = []
        elif not isinstance(indices, (list, tuple)):
            raise TypeError(f"indexedarray: indices must be an adjit int32 array or a list of them (None for a "
                            f"dimension taken whole), got {type(indices).__name__}")
        if len(indices) > data.ndim:
            raise ValueError(f"indexedarray: {len(indices)} index arrays for a {data.ndim}-d data array")
        for d, idx in enumerate(indices):
            if idx is None:
                continue
            if not isinstance(idx, Array):
                raise TypeError(f"indexedarray: indices[{d}] must be an adjit int32 array or None, got "
                                f"{type(idx).__name__}")
            if idx.ndim != 1:
                raise ValueError(f"indexedarray: indices[{d}] must be one-dimensional, got {idx.ndim}-d")
            if idx.dtype != T.int32:
                raise TypeError(f"indexedarray: indices[{d}] must be an array of int32, got {idx.dtype}")
            if idx.device != data.device:
                raise ValueError(f"indexedarray: indices[{d}] is on {idx.device}, the data on {data.device}")
        self.data = data
        self.indices: list[Array | None] = list(indices) + [None] * (data.ndim - len(indices))
        self._identity: list[Array | None] = [None] * data.ndim

    # --- shape ------------------------------------------------------------------

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self) -> str:
        return self.data.device

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(n if idx is None else idx.shape[0] for n, idx in zip(self.data.shape, self.indices))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def is_contiguous(self) -> bool:
        return False

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        raise TypeError("adjit arrays are not iterable (as in Warp); use a.numpy() or a.list()")

    # --- kernel arguments -------------------------------------------------------

    def leaf_arrays(self) -> list[Array]:
        """What a kernel parameter of this type receives: the data array,
        then an index array per dimension (the identity where not indexed)."""
        out = [self.data]
        for d, idx in enumerate(self.indices):
            if idx is None:
                n = self.data.shape[d]
                if self._identity[d] is None or self._identity[d].shape[0] != n:
                    self._identity[d] = make_array(np.arange(n, dtype=np.int32), dtype=T.int32,
                                                   device=self.device)
                idx = self._identity[d]
            out.append(idx)
        return out

    # --- values -----------------------------------------------------------------

    def _gather_key(self) -> tuple:
        """The numpy index of the viewed elements in the data's buffer (an
        open mesh of the index arrays); IndexError for an index out of range."""
        keys = []
        for d, (n, idx) in enumerate(zip(self.data.shape, self.indices)):
            if idx is None:
                keys.append(np.arange(n))
                continue
            values = idx._buffer.astype(np.int64)
            bad = (values < 0) | (values >= n)
            if np.any(bad):
                k = int(np.argmax(bad))
                raise IndexError(f"indexedarray: indices[{d}][{k}] = {int(values[k])} is out of range for the data's "
                                 f"dimension {d} of size {n}")
            keys.append(values)
        return np.ix_(*keys)

    def numpy(self) -> np.ndarray:
        """The viewed elements as a numpy array of ``shape`` (a gathered copy,
        as Warp's ``indexedarray.numpy()``)."""
        return np.array(self.data._buffer[self._gather_key()])

    def list(self) -> list:
        """The viewed elements in flattened order (copies)."""
        return self.contiguous().list()

    def contiguous(self) -> Array:
        """A new contiguous adjit array of the viewed elements (Warp's
        ``contiguous()``; no gradient flows back to the data)."""
        return make_array(self.numpy(), dtype=self.dtype, device=self.device)

    def _write(self, values) -> None:
        """Writes ``values`` (host storage, broadcast to the viewed
        elements) into the data. On an active tape the overwritten
        elements' gradients are consumed: they get none, as with
        ``Array.fill_``; a duplicated index takes the last value, as numpy."""
        key = self._gather_key()
        data = self.data
        with recording.locked(active_tapes()):
            _before_write(data)
            data._buffer[key] = values
            tapes = active_tapes()
            if tapes and data.grad is not None:
                grad = data.grad

                def backward():
                    grad._buffer[key] = 0
                for tape in tapes:
                    tape.record(backward, [data], name="indexedarray write", outputs=[data])

    def assign(self, src) -> "IndexedArray":
        """Copies ``src`` (an array-like, an adjit array or an indexed array of
        this shape, or a value broadcast to it) into the viewed elements.
        Not differentiable (as Warp's copy of an indexed array)."""
        if isinstance(src, IndexedArray):
            src = src.numpy()
        elif isinstance(src, Array):
            src = src.numpy()
        values = np.asarray(_host_values(T.scalar_of(self.dtype), src), dtype=self.data._buffer.dtype)
        target = self.shape + self.data._buffer.shape[self.ndim:]
        try:
            fits = values.ndim <= len(target) and np.broadcast_shapes(values.shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"assign: src of shape {values.shape} does not match the indexed array's shape "
                             f"{self.shape} of {self.dtype}")
        self._write(values)
        return self

    def fill_(self, value) -> "IndexedArray":
        """Sets every viewed element to ``value``."""
        self._write(_host_values(T.scalar_of(self.dtype), value))
        return self

    def zero_(self) -> "IndexedArray":
        """Sets every viewed element to zero."""
        return self.fill_(0)

    def __repr__(self) -> str:
        return f"adjit.indexedarray(shape={self.shape}, dtype={self.dtype})"


class _IndexedArrayName:
    """What ``adjit.indexedarray`` (and ``indexedarray1d`` .. ``4d``) is: the
    constructor ``indexedarray(data, indices)``, and without data Warp's
    annotation spellings, ``indexedarray(dtype=float, ndim=2)``,
    ``indexedarray[float]``, ``indexedarray2d(dtype=float)``."""

    def __init__(self, ndim: int | None = None):
        self._ndim = ndim
        self.__name__ = "indexedarray" if ndim is None else f"indexedarray{ndim}d"
        self.__doc__ = IndexedArray.__doc__

    def __call__(self, data=None, indices=None, dtype=None, ndim: int | None = None):
        if self._ndim is not None:
            if ndim is not None and ndim != self._ndim:
                raise ValueError(f"{self.__name__}: ndim={ndim} given")
            ndim = self._ndim
        if data is None:
            if indices is not None:
                raise ValueError(f"{self.__name__}: indices given without data")
            if dtype is None:
                raise TypeError(f"{self.__name__}() as an annotation needs dtype=")
            return T.IndexedArrayType(dtype, ndim or 1)
        out = IndexedArray(data, indices)
        if dtype is not None and T.value_type_of(dtype) != out.dtype:
            raise TypeError(f"{self.__name__}: dtype={dtype!r} does not match the data's {out.dtype}")
        if ndim is not None and ndim != out.ndim:
            raise ValueError(f"{self.__name__}: ndim={ndim} does not match the data's {out.ndim} dimensions")
        return out

    def __getitem__(self, dtype) -> T.IndexedArrayType:
        return T.IndexedArrayType(dtype, self._ndim or 1)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, IndexedArray) and (self._ndim is None or obj.ndim == self._ndim)

    def __repr__(self) -> str:
        return f"<adjit {self.__name__}>"


indexedarray = _IndexedArrayName()
indexedarray1d = _IndexedArrayName(1)
indexedarray2d = _IndexedArrayName(2)
indexedarray3d = _IndexedArrayName(3)
indexedarray4d = _IndexedArrayName(4)


def check_argument(kernel_name: str, name: str, t: T.IndexedArrayType, value) -> list[Array]:
    """The kernel arguments of indexed-array parameter ``name``: the data
    array and an index array per dimension (a TypeError for a value that is
    not an indexed array of ``t``'s dtype and rank)."""
    if not isinstance(value, IndexedArray):
        what = f"an adjit array of {value.dtype}" if isinstance(value, Array) else type(value).__name__
        raise TypeError(f"kernel '{kernel_name}' argument '{name}' must be an adjit.indexedarray of {t.dtype}, got "
                        f"{what}" + (" (wrap it: adjit.indexedarray(data, indices))" if isinstance(value, Array)
                                     else ""))
    if value.dtype != t.dtype:
        raise TypeError(f"kernel '{kernel_name}' argument '{name}' must be an indexed array of {t.dtype}, got one of "
                        f"{value.dtype}")
    if value.ndim != t.ndim:
        raise TypeError(f"kernel '{kernel_name}' argument '{name}' must be a {t.ndim}-d indexed array, got "
                        f"{value.ndim}-d")
    return value.leaf_arrays()
