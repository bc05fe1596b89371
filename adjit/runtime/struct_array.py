"""Arrays of structs on the host: ``adjit.zeros(n, dtype=MyStruct)``,
``adjit.array([s0, s1], dtype=MyStruct)``.

An array of structs is stored as a structure of arrays: one ordinary adjit
array per leaf field of the struct (nested structs expanded, as
``StructType.leaves`` lists them), all of the array's shape. A kernel
parameter ``a: adjit.array(dtype=MyStruct)`` takes them as one array
argument each (``a.x``, ``a.inner.y``), so launches, bounds checks, alias
analysis, the tape and gradients see ordinary arrays. ``.numpy()`` assembles
a numpy structured array (a copy; Warp's is a view of its memory, which is
an array of structs).
"""
from __future__ import annotations

import sys

import numpy as np

from .. import types as T
from .array import Array, _shape_tuple, array as make_array, clone as clone_array, copy as copy_array, empty, full, zeros


@T.register_host_array_class
class StructArray:
    """An array of ``dtype`` (a struct type) elements: one adjit array per
    leaf field (``field(path)`` gives it; writes through it are writes to
    this array). A float leaf has a gradient when ``requires_grad`` is set;
    ``grad`` is the array of structs of those gradients."""

    def __init__(self, dtype: T.StructType, leaves: list[Array]):
        paths = _paths(dtype)
        if not paths:
            raise TypeError(f"arrays of {dtype.name}, a struct with no fields, are not supported (adjit stores an "
                            "array of structs as one array per field)")
        if len(leaves) != len(paths):
            raise AssertionError(f"internal: {len(leaves)} leaf arrays for the {len(paths)} fields of {dtype.name}")
        shapes = {leaf.shape for leaf in leaves}
        if len(shapes) != 1:
            raise AssertionError(f"internal: the leaf arrays of an array of {dtype.name} differ in shape: {shapes}")
        self.dtype = dtype
        self.device = leaves[0].device
        self._leaves = list(leaves)
        self._paths = paths

    # --- shape ------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._leaves[0].shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        raise TypeError("adjit arrays are not iterable (as in Warp); use a.numpy() or a.list()")

    # --- fields -----------------------------------------------------------------

    def leaf_arrays(self) -> list[Array]:
        """The arrays holding the leaf fields, in ``StructType.leaves`` order
        (what a kernel parameter of this type receives)."""
        return list(self._leaves)

    def field(self, path: str) -> "Array | StructArray":
        """The array of one field's values (``"x"``, ``"inner.y"``), sharing
        this array's memory: an adjit array for a value field, an array of
        structs for a nested struct field. It is the very array kernels and
        tapes see, so its ``.grad`` is that field's gradient."""
        if path in self._paths:
            return self._leaves[self._paths.index(path)]
        t = self.dtype
        for part in path.split("."):
            if not isinstance(t, T.StructType) or part not in t.fields:
                raise KeyError(f"struct {self.dtype.name} has no field '{path}' (fields: {', '.join(self._paths)})")
            t = t.fields[part]
        prefix = path + "."
        return StructArray(t, [leaf for p, leaf in zip(self._paths, self._leaves) if p.startswith(prefix)])

    # --- gradients --------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether the float fields have gradients. Setting it sets it on
        each float field's array (the other fields have none)."""
        return any(leaf.requires_grad for leaf in self._leaves)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        for leaf, (_, t) in zip(self._leaves, self.dtype.leaves("")):
            if T.scalar_of(t).is_float:
                leaf.requires_grad = value

    @property
    def grad(self) -> "StructArray | None":
        """The gradient as an array of structs (None without one): its float
        fields are the float fields' gradient arrays (shared: writes go
        through); its other fields are zeros, made anew on each access."""
        if not any(leaf.grad is not None for leaf in self._leaves):
            return None
        return StructArray(self.dtype, [leaf.grad if leaf.grad is not None else zeros(leaf.shape, leaf.dtype)
                                        for leaf in self._leaves])

    # --- values -----------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The values as a numpy structured array (``dtype.numpy_dtype()``).
        A copy: Warp returns a view of its memory, but adjit keeps each field
        in its own array, so writes to the result change nothing here (write
        them back with ``assign``)."""
        out = np.empty(self.shape, self.dtype.numpy_dtype())
        for path, leaf in zip(self._paths, self._leaves):
            _field_view(out, path)[...] = leaf._buffer
        return out

    def list(self) -> list:
        """The elements in flattened order, as struct values (copies)."""
        flat = [leaf._buffer.reshape((self.size,) + leaf._buffer.shape[leaf.ndim:]) for leaf in self._leaves]
        return [_struct_value(self.dtype, self._paths, [f[k] for f in flat]) for k in range(self.size)]

    def assign(self, src) -> "StructArray":
        """Copies ``src`` (an array of the same struct and shape, a numpy
        structured array or a list of struct values of this shape) into
        this array, field by field (each recorded on an active tape as
        ``Array.assign`` is)."""
        if not isinstance(src, StructArray):
            src = struct_array(src, self.dtype)
        if src.dtype is not self.dtype or src.shape != self.shape:
            raise ValueError(f"assign: an array of {src.dtype.name} of shape {src.shape} into one of "
                             f"{self.dtype.name} of shape {self.shape}")
        for leaf, other in zip(self._leaves, src._leaves):
            leaf.assign(other)
        return self

    def zero_(self) -> "StructArray":
        """Sets every field of every element to zero."""
        for leaf in self._leaves:
            leaf.zero_()
        return self

    def fill_(self, value: T.StructValue) -> "StructArray":
        """Sets every element to the struct value ``value``."""
        for leaf, v in zip(self._leaves, _leaf_values(self.dtype, value, "fill_")):
            leaf.fill_(v)
        return self

    # --- views ------------------------------------------------------------------

    def __getitem__(self, key) -> "StructArray":
        """Views by basic indexing of the dimensions, as ``Array`` (field by
        field: ``a[i:j]``, rows, ``a[:, 1]``, ``a[::2]``)."""
        return StructArray(self.dtype, [leaf[key] for leaf in self._leaves])

    def transpose(self, axes=None) -> "StructArray":
        """A view with the dimensions permuted, as ``Array.transpose``."""
        return StructArray(self.dtype, [leaf.transpose(axes) for leaf in self._leaves])

    def flatten(self) -> "StructArray":
        return StructArray(self.dtype, [leaf.flatten() for leaf in self._leaves])

    def reshape(self, shape) -> "StructArray":
        return StructArray(self.dtype, [leaf.reshape(shape) for leaf in self._leaves])

    def __repr__(self) -> str:
        return f"adjit.array(shape={self.shape}, dtype={self.dtype.name})"


def field_seeds(array: StructArray, seed) -> list[tuple[Array, object]]:
    """``tape.backward(grads={a: seed})`` for an array of structs ``a``:
    (field array, its seed) for each float field. ``seed``: an array of the
    same struct and shape, or a numpy structured array with its fields."""
    if isinstance(seed, StructArray):
        if seed.dtype is not array.dtype or seed.shape != array.shape:
            raise ValueError(f"backward(grads=...): the seed of an array of {array.dtype.name} of shape "
                             f"{array.shape} is an array of {seed.dtype.name} of shape {seed.shape}")
        values = [leaf._buffer for leaf in seed._leaves]
    elif isinstance(seed, np.ndarray) and seed.dtype.names is not None:
        try:
            values = [_field_view(seed, path) for path in array._paths]
        except (KeyError, ValueError, IndexError):
            raise ValueError(f"backward(grads=...): the seed (fields {seed.dtype.names}) lacks fields of "
                             f"{array.dtype.name} ({', '.join(array._paths)})") from None
    else:
        raise TypeError(f"backward(grads=...): the seed of an array of {array.dtype.name} must be an array of "
                        f"{array.dtype.name} or a numpy structured array, got {_describe(seed)}")
    return [(leaf, value) for leaf, value in zip(array._leaves, values) if T.scalar_of(leaf.dtype).is_float]


def _paths(dtype: T.StructType) -> list[str]:
    """The leaf fields' paths relative to the struct (``x``, ``inner.y``)."""
    return [path[1:] for path, _ in dtype.leaves("")]


def _field_view(values: np.ndarray, path: str) -> np.ndarray:
    for part in path.split("."):
        values = values[part]
    return values


def _leaf_values(dtype: T.StructType, value, what: str) -> list:
    if not (isinstance(value, T.StructValue) and value._type is dtype):
        raise TypeError(f"{what}: an element of an array of {dtype.name} must be a {dtype.name} value, got "
                        f"{value!r}")
    return value.leaf_values()


def _struct_value(dtype: T.StructType, paths: list[str], values: list) -> T.StructValue:
    out = dtype()
    for path, v in zip(paths, values):
        *parents, name = path.split(".")
        target = out
        for part in parents:
            target = getattr(target, part)
        setattr(target, name, v)
    return out


def struct_array(data, dtype: T.StructType, shape=None, requires_grad: bool = False,
                 device: str = "cpu") -> StructArray:
    """``adjit.array(data, dtype=MyStruct)``: ``data`` a numpy structured
    array whose fields have the struct's names (nested for nested structs;
    extra fields are ignored), a (nested) list of struct values, or an array
    of structs (copied)."""
    T.StructArrayType(dtype)  # (a struct holding arrays has no arrays: TypeError)
    leaf_types = [t for _, t in dtype.leaves("")]
    paths = _paths(dtype)
    if isinstance(data, StructArray):
        if data.dtype is not dtype:
            raise TypeError(f"array: an array of {data.dtype.name} is not an array of {dtype.name}")
        data = data.numpy()
    if isinstance(data, np.ndarray) and data.dtype.names is not None:
        columns = []
        for path in paths:
            try:
                columns.append(_field_view(data, path))
            except (KeyError, ValueError, IndexError):
                raise ValueError(f"array: the numpy structured array (fields {data.dtype.names}) has no field "
                                 f"'{path}' of struct {dtype.name}") from None
    else:
        if isinstance(data, np.ndarray) and data.dtype == object:
            elements = data
        elif isinstance(data, (list, tuple)):
            elements = _object_array(data)
        else:
            raise TypeError(f"array: an array of {dtype.name} is made from a numpy structured array or a list of "
                            f"{dtype.name} values, got {_describe(data)}")
        if elements.ndim == 0 or not 1 <= elements.ndim <= 4:
            raise ValueError(f"array: arrays have 1 to 4 dimensions, got a list of shape {elements.shape}")
        rows = [_leaf_values(dtype, v, "array") for v in elements.flat]
        columns = []
        for k, t in enumerate(leaf_types):
            comp = () if isinstance(t, T.ScalarType) else t.shape
            column = np.asarray([r[k] for r in rows], dtype=T.scalar_of(t).np_dtype)
            columns.append(column.reshape(elements.shape + comp))
    leaves = []
    for t, column in zip(leaf_types, columns):
        comp = () if isinstance(t, T.ScalarType) else t.shape
        element_shape = column.shape[:column.ndim - len(comp)]
        if shape is not None and element_shape != _shape_tuple(shape):
            if int(np.prod(element_shape)) != int(np.prod(_shape_tuple(shape))):
                raise ValueError(f"array: {int(np.prod(element_shape))} elements of {dtype.name} do not fit "
                                 f"shape={shape!r}")
            column = column.reshape(_shape_tuple(shape) + comp)
        leaves.append(make_array(np.array(column, dtype=T.scalar_of(t).np_dtype), dtype=t, device=device))
    out = StructArray(dtype, leaves)
    out.requires_grad = requires_grad
    return out


def _describe(data) -> str:
    if isinstance(data, np.ndarray):
        return f"a numpy array of {data.dtype}"
    return repr(data) if isinstance(data, T.StructValue) else f"a {type(data).__name__}"


def _object_array(data) -> np.ndarray:
    """A (nested) list of struct values as a numpy object array of its shape
    (numpy would try to look into the values)."""
    shape = []
    level = data
    while isinstance(level, (list, tuple)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    out = np.empty(tuple(shape), dtype=object)
    for index in np.ndindex(*shape):
        v = data
        for k in index:
            if not isinstance(v, (list, tuple)) or len(v) != shape[len(shape) - len(index)]:
                raise ValueError("array: the list of struct values is ragged")
            v = v[k]
        if isinstance(v, (list, tuple)):
            raise ValueError("array: the list of struct values is ragged")
        out[index] = v
    return out


def struct_full(shape, value, dtype: T.StructType, device, requires_grad: bool) -> StructArray:
    """``adjit.zeros/empty/full(shape, dtype=MyStruct)``: ``value`` None for
    empty, 0 for zeros, else a struct value every element takes."""
    T.StructArrayType(dtype)  # (a struct holding arrays has no arrays: TypeError)
    leaves = []
    values = None if value is None or (isinstance(value, (int, float)) and value == 0) else \
        _leaf_values(dtype, value, "full")
    for k, (_, t) in enumerate(dtype.leaves("")):
        if value is None:
            leaves.append(empty(shape, t, device))
        elif values is None:
            leaves.append(zeros(shape, t, device))
        else:
            leaves.append(full(shape, values[k], t, device))
    out = StructArray(dtype, leaves)
    out.requires_grad = requires_grad
    return out


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0) -> StructArray:
    """``adjit.copy`` of arrays of structs: each field as ``adjit.copy``."""
    if not (isinstance(dest, StructArray) and isinstance(src, StructArray)) or dest.dtype is not src.dtype:
        raise ValueError(f"copy: dtypes differ: dest is {dest!r}, src {src!r} (copy converts nothing)")
    for d, s in zip(dest._leaves, src._leaves):
        copy_array(d, s, dest_offset, src_offset, count)
    return dest


def clone(src: StructArray, requires_grad: bool | None = None) -> StructArray:
    """``adjit.clone`` of an array of structs: each field cloned."""
    return StructArray(src.dtype, [clone_array(leaf, requires_grad and T.scalar_of(leaf.dtype).is_float
                                               if requires_grad is not None else None) for leaf in src._leaves])


# array() / zeros() / copy() / clone() of adjit.runtime.array hand arrays of
# structs to this module.
from . import array as _array_module  # noqa: E402

_array_module._struct_arrays = sys.modules[__name__]
