"""Warp's ``warp.utils`` array helpers: sums, inner products, prefix sums,
key-value sorts (whole and by segments), run-length encoding and element
type casts, run on the host with numpy.

As in Warp, none of them is differentiable. Their writes count as adjit
writes (the written array's version is bumped, and tapes holding its old
values save them first). Called while a tape records, a helper that writes
an array with a gradient is recorded as a step without an adjoint: on
``backward()``, a nonzero gradient reaching what it wrote raises
``GradientError`` when one of its inputs has a gradient (rather than
dropping that gradient silently); otherwise that gradient is consumed.
"""
from __future__ import annotations

import enum

import numpy as np

from . import types as T
from .runtime import recording
from .runtime.array import (Array, _before_write, _component_shape, _elements, _record_non_differentiable,
                            _write_elements, empty)
from .runtime.recording import active_tapes
from .timing import (TIMING_ALL, TIMING_GRAPH, TIMING_KERNEL, TIMING_KERNEL_BUILTIN,  # noqa: F401 (Warp's
                     TIMING_MEMCPY, TIMING_MEMSET, ScopedTimer, TimingResult,  # warp.utils names)
                     timing_begin, timing_end, timing_print)

__all__ = ["array_sum", "array_inner", "array_scan", "radix_sort_pairs", "segmented_sort_pairs", "runlength_encode",
           "array_cast", "transform_expand", "ScopedTimer", "TimingResult", "timing_begin", "timing_end",
           "timing_print", "GraphColoringAlgorithm"]


def transform_expand(t) -> T.TransformValue:
    """A float32 transform from 7 numbers ``(px, py, pz, qx, qy, qz, qw)``
    (Warp's ``wp.transform_expand``)."""
    values = np.asarray(t)
    if values.shape != (7,):
        raise ValueError(f"transform_expand: takes 7 numbers (p then q), got shape {values.shape}")
    return T.transform(values[0:3], values[3:7])


def _check_array(a, who: str, what: str) -> Array:
    if not isinstance(a, Array):
        raise TypeError(f"{who}: {what} must be an adjit array, got {type(a).__name__}")
    return a


def _check_float(a: Array, who: str) -> None:
    scalar = T.scalar_of(a.dtype)
    if scalar not in (T.float32, T.float64):
        raise TypeError(f"{who}: arrays of {a.dtype} are not supported (float32 or float64 scalars, vectors "
                        "and matrices, as in Warp)")


def _axis(a: Array, axis, who: str) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: axis must be an int or None, got {axis!r}")
    if not -a.ndim <= axis < a.ndim:
        raise IndexError(f"{who}: axis {axis} is out of range for a {a.ndim}-d array")
    return int(axis) % a.ndim


def _count(count, size: int, who: str, what: str) -> int:
    if count is None:
        return size
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)):
        raise TypeError(f"{who}: {what} must be an int or None, got {count!r}")
    if not 0 <= count <= size:
        raise ValueError(f"{who}: {what}={count} is not within the array's {size} elements")
    return int(count)


def _reduce(who: str, values: dict, out, count, axis, combine, result_type):
    """Reduces the flattened first ``count`` elements, or along ``axis``;
    ``combine(buffers, axis)`` maps the buffers to the reduced values, of
    ``result_type``."""
    first = next(iter(values.values()))
    if axis is None:
        n = _count(count, first.size, who, "count" if len(values) > 1 else "value_count")
        result = combine([_elements(a)[:n] for a in values.values()], 0)
        out_shape = (1,)
    else:
        if count is not None:
            raise ValueError(f"{who}: a count with an axis is not supported; pass one or the other")
        axis = _axis(first, axis, who)
        result = combine([a._buffer for a in values.values()], axis)
        out_shape = tuple(1 if k == axis else d for k, d in enumerate(first.shape))
    if out is None and axis is None:
        return result  # a number (a numpy scalar or vector/matrix value), as Warp returns
    if out is None:
        out = empty(out_shape, result_type, device=first.device)
    _check_array(out, who, "out")
    if out.dtype != result_type or out.shape != out_shape:
        raise ValueError(f"{who}: out must be an array of {result_type} of shape {out_shape}, got one of "
                         f"{out.dtype} of shape {out.shape}")
    with recording.locked(active_tapes()):
        _before_write(out)
        out._buffer[...] = np.reshape(result, out._buffer.shape)
        _record_non_differentiable(who, [out], list(values.values()))
    return out


def _sum(buffers, axis):
    (buffer,) = buffers
    return buffer.sum(axis=axis, keepdims=False, dtype=buffer.dtype)


def array_sum(values: Array, out: Array | None = None, value_count: int | None = None, axis: int | None = None):
    """The sum of the elements of ``values`` (float32/float64 scalars, or
    vectors/matrices summed componentwise), as Warp's.

    ``axis=None``: the sum of the first ``value_count`` elements of the
    flattened array (default all), returned as a number (a vector/matrix
    value for those dtypes), or written to ``out`` (shape (1,)) and ``out``
    returned. With ``axis``: the sums along it, written to ``out`` (made if
    None) of the array's shape with extent 1 on that axis, as Warp.
    Not differentiable (see the module's docstring)."""
    who = "array_sum"
    _check_array(values, who, "values")
    _check_float(values, who)
    return _reduce(who, {"values": values}, out, value_count, axis, _sum, values.dtype)


def array_inner(a: Array, b: Array, out: Array | None = None, count: int | None = None, axis: int | None = None):
    """The inner product of ``a`` and ``b`` (same shape and dtype; vector
    and matrix elements contribute the sum of their componentwise products),
    as Warp's: over the first ``count`` elements of the flattened arrays
    (default all) for ``axis=None``, returned as a number or written to
    ``out`` (shape (1,)); along ``axis`` into ``out`` (made if None) of the
    arrays' shape with extent 1 there. Not differentiable (see the module's
    docstring)."""
    who = "array_inner"
    _check_array(a, who, "a")
    _check_array(b, who, "b")
    _check_float(a, who)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"{who}: a and b must have the same shape and dtype, got {a.shape} {a.dtype} and "
                         f"{b.shape} {b.dtype}")
    ncomp = len(_component_shape(a.dtype))

    def combine(buffers, axis):
        x, y = buffers
        products = x * y
        if ncomp:
            products = products.sum(axis=tuple(range(products.ndim - ncomp, products.ndim)), dtype=x.dtype)
        return products.sum(axis=axis, dtype=x.dtype)
    return _reduce(who, {"a": a, "b": b}, out, count, axis, combine, T.scalar_of(a.dtype))


_SCAN_SCALARS = (T.int32, T.int64, T.float32, T.float64)


def array_scan(in_array: Array, out_array: Array, inclusive: bool = True) -> None:
    """Prefix sums of ``in_array`` into ``out_array`` (same dtype and element
    count), in flattened order, as Warp's: ``inclusive`` includes each
    element in its own sum, else the sum stops before it (the first is 0).
    int32/int64/float32/float64 scalars, vectors componentwise. Sums are
    accumulated in the array's dtype (integers wrap). Not differentiable
    (see the module's docstring)."""
    who = "array_scan"
    _check_array(in_array, who, "in_array")
    _check_array(out_array, who, "out_array")
    if T.scalar_of(in_array.dtype) not in _SCAN_SCALARS or isinstance(in_array.dtype, T.MatrixType):
        raise TypeError(f"{who}: arrays of {in_array.dtype} are not supported (int32, int64, float32 or float64 "
                        "scalars or vectors)")
    if out_array.dtype != in_array.dtype:
        raise ValueError(f"{who}: in and out arrays must have the same dtype, got {in_array.dtype} and "
                         f"{out_array.dtype}")
    if out_array.size != in_array.size:
        raise ValueError(f"{who}: in and out arrays must have the same number of elements, got {in_array.size} "
                         f"and {out_array.size}")
    if type(inclusive) is not bool:
        raise TypeError(f"{who}: inclusive must be True or False, got {inclusive!r}")
    source = _elements(in_array)
    with np.errstate(over="ignore"):
        sums = np.cumsum(source, axis=0, dtype=source.dtype)
    if not inclusive:
        sums = np.concatenate([np.zeros_like(sums[:1]), sums[:-1]]) if len(sums) else sums
    with recording.locked(active_tapes()):
        _before_write(out_array)
        _write_elements(out_array, 0, out_array.size, sums)
        _record_non_differentiable(who, [out_array], [in_array])


_SORT_KEYS = {"int32": np.uint32, "int64": np.uint64, "float32": np.uint32, "float64": np.uint64}


def _unsigned_keys(keys: np.ndarray) -> np.ndarray:
    """The keys as unsigned integers in the same order (signed integers with
    the sign bit flipped; floats by their bits, negative ones inverted, so
    -0.0 comes before 0.0), as radix sorts order them."""
    unsigned = keys.view(_SORT_KEYS[keys.dtype.name]).copy()
    sign = unsigned.dtype.type(1) << unsigned.dtype.type(8 * unsigned.itemsize - 1)
    if keys.dtype.kind == "i":
        return unsigned ^ sign
    negative = (unsigned & sign) != 0
    return np.where(negative, ~unsigned, unsigned | sign)


def radix_sort_pairs(keys: Array, values: Array, count: int, begin_bit: int = 0, end_bit: int | None = None) -> None:
    """Sorts the first ``count`` (key, value) pairs by key in place, stable,
    as Warp's: ``keys`` of int32, int64, float32 or float64 (floats by
    value, -0.0 before 0.0), ``values`` of a 4- or 8-byte scalar type. As in
    Warp both arrays must hold at least ``2 * count`` elements (Warp uses the
    second half as scratch; adjit leaves it unchanged). Only key bits
    ``begin_bit`` to ``end_bit - 1`` of the radix order (signed keys with the
    sign bit flipped, float keys order-preserving) are compared (default:
    all). Not differentiable (see the module's docstring)."""
    who = "radix_sort_pairs"
    _check_array(keys, who, "keys")
    _check_array(values, who, "values")
    if keys.ndim != 1 or values.ndim != 1:
        raise ValueError(f"{who}: keys and values must be 1-D arrays")
    if not isinstance(keys.dtype, T.ScalarType) or keys.dtype.name not in _SORT_KEYS:
        raise TypeError(f"{who}: keys of {keys.dtype} are not supported (int32, int64, float32 or float64)")
    if not isinstance(values.dtype, T.ScalarType) or values.dtype.np_dtype.itemsize not in (4, 8):
        raise TypeError(f"{who}: values of {values.dtype} are not supported (a 4- or 8-byte scalar type)")
    if count is None:
        raise TypeError(f"{who}: count must be an int, got None")
    count = _count(count, min(keys.size, values.size), who, "count")
    if keys.size < 2 * count or values.size < 2 * count:
        raise ValueError(f"{who}: keys and values must hold 2*count = {2 * count} elements (as in Warp), got "
                         f"{keys.size} keys and {values.size} values")
    bits = 8 * keys.dtype.np_dtype.itemsize
    end_bit = bits if end_bit is None else end_bit
    for name, bit in (("begin_bit", begin_bit), ("end_bit", end_bit)):
        if isinstance(bit, (bool, np.bool_)) or not isinstance(bit, (int, np.integer)) or not 0 <= bit <= bits:
            raise ValueError(f"{who}: {name} must be an int from 0 to {bits}, got {bit!r}")
    if begin_bit > end_bit:
        raise ValueError(f"{who}: begin_bit {begin_bit} is after end_bit {end_bit}")
    radix = _unsigned_keys(keys._buffer[:count])
    width = end_bit - begin_bit
    if width < bits:
        one = radix.dtype.type(1)
        radix = (radix >> radix.dtype.type(begin_bit)) & ((one << radix.dtype.type(width)) - one)
    order = np.argsort(radix, kind="stable")
    with recording.locked(active_tapes()):
        for a in (keys, values):
            _before_write(a)
            a._buffer[:count] = a._buffer[:count][order]
        _record_non_differentiable(who, [keys, values], [keys, values])


def _cpu_only(who: str, *arrays) -> None:
    """The helpers below run on the host: CUDA arrays are refused (never
    read or written through a wrong path)."""
    devices = {str(a.device) for a in arrays if a is not None}
    if len(devices) > 1:
        raise ValueError(f"{who}: the arrays are on different devices ({', '.join(sorted(devices))})")
    if devices and devices != {"cpu"}:
        raise NotImplementedError(f"{who}: arrays on {devices.pop()} are not supported yet (adjit runs it on the "
                                  "host); copy them to the CPU (a.numpy() / adjit.clone(a, device='cpu')) first")


def _int32_array(a, who: str, what: str) -> Array:
    _check_array(a, who, what)
    if a.dtype != T.int32:
        raise TypeError(f"{who}: {what} must be an array of int32, got {a.dtype}")
    return a


def segmented_sort_pairs(keys: Array, values: Array, count: int, segment_start_indices: Array,
                         segment_end_indices: Array | None = None) -> None:
    """Sorts (key, value) pairs by key within each segment, in place,
    stable, as Warp's: segment ``s`` is ``[start[s], end[s])``, the ends
    ``segment_end_indices`` or else ``segment_start_indices[1:]`` (then
    there is one segment fewer than starts). ``keys`` of int32 or float32
    (floats by value, -0.0 before 0.0, as a radix sort), ``values`` of
    int32; both hold at least ``2 * count`` elements, as in Warp (which
    uses the second half as scratch; adjit leaves it unchanged). Elements
    outside every segment are left alone; a segment outside ``[0, count]``
    is a ValueError. Not differentiable (see the module's docstring)."""
    who = "segmented_sort_pairs"
    _check_array(keys, who, "keys")
    _int32_array(values, who, "values")
    _int32_array(segment_start_indices, who, "segment_start_indices")
    if segment_end_indices is not None:
        _int32_array(segment_end_indices, who, "segment_end_indices")
    _cpu_only(who, keys, values, segment_start_indices, segment_end_indices)
    if keys.dtype not in (T.int32, T.float32):
        raise TypeError(f"{who}: keys of {keys.dtype} are not supported (int32 or float32, as in Warp)")
    count = _count(count, min(keys.size, values.size), who, "count")
    if count == 0:
        return
    if keys.size < 2 * count or values.size < 2 * count:
        raise ValueError(f"{who}: keys and values must hold 2*count = {2 * count} elements (as in Warp), got "
                         f"{keys.size} keys and {values.size} values")
    starts = _elements(segment_start_indices).astype(np.int64)
    ends = starts[1:] if segment_end_indices is None else _elements(segment_end_indices).astype(np.int64)
    starts = starts[:len(ends)]
    if len(ends) < len(starts) or np.any(starts < 0) or np.any(ends > count) or np.any(starts > ends):
        bad = next((k for k in range(len(starts)) if k >= len(ends) or not 0 <= starts[k] <= ends[k] <= count),
                   len(ends))
        raise ValueError(f"{who}: segment {bad} is not within [0, count={count}] (start "
                         f"{starts[bad] if bad < len(starts) else '-'}, end {ends[bad] if bad < len(ends) else '-'})")
    key_data, value_data = _elements(keys)[:count].copy(), _elements(values)[:count].copy()
    for start, end in zip(starts, ends):
        order = np.argsort(_unsigned_keys(key_data[start:end]), kind="stable")
        key_data[start:end] = key_data[start:end][order]
        value_data[start:end] = value_data[start:end][order]
    with recording.locked(active_tapes()):
        for a, data in ((keys, key_data), (values, value_data)):
            _before_write(a)
            _write_elements(a, 0, count, data)
        _record_non_differentiable(who, [keys, values], [keys, values])


def runlength_encode(values: Array, run_values: Array, run_lengths: Array, run_count: Array | None = None,
                     value_count: int | None = None):
    """Run-length encodes the first ``value_count`` elements of ``values``
    (default all; int32, as Warp's), as Warp's: each run of equal values
    gives its value in ``run_values`` and its length in ``run_lengths``
    (int32), both at least ``value_count`` long. Returns the number of runs,
    or, given ``run_count`` (an int32 array), writes it to ``run_count[0]``
    and returns ``run_count``. Not differentiable."""
    who = "runlength_encode"
    _int32_array(values, who, "values")
    _check_array(run_values, who, "run_values")
    _int32_array(run_lengths, who, "run_lengths")
    if run_count is not None:
        _int32_array(run_count, who, "run_count")
    _cpu_only(who, values, run_values, run_lengths, run_count)
    if run_values.dtype != values.dtype:
        raise TypeError(f"{who}: values and run_values must have one dtype, got {values.dtype} and "
                        f"{run_values.dtype}")
    if value_count is not None and not isinstance(value_count, (bool, np.bool_)) and \
            isinstance(value_count, (int, np.integer)) and value_count < 0:
        raise ValueError(f"{who}: value_count must be non-negative, got {value_count}")
    n = _count(value_count, values.size, who, "value_count")
    if run_values.size < n or run_lengths.size < n:
        raise ValueError(f"{who}: run_values and run_lengths must hold value_count = {n} elements, got "
                         f"{run_values.size} and {run_lengths.size}")
    data = _elements(values)[:n]
    starts = np.flatnonzero(np.concatenate([[True], data[1:] != data[:-1]])) if n else np.zeros(0, np.int64)
    lengths = np.diff(np.append(starts, n)).astype(np.int32)
    runs = len(starts)
    with recording.locked(active_tapes()):
        for a, result in ((run_values, data[starts]), (run_lengths, lengths)):
            if runs:
                _before_write(a)
                _write_elements(a, 0, runs, result)
        if run_count is not None:
            _before_write(run_count)
            _write_elements(run_count, 0, 1, np.array([runs], np.int32))
    return runs if run_count is None else run_count


def array_cast(in_array: Array, out_array: Array, count: int | None = None) -> None:
    """Converts the elements of ``in_array`` to ``out_array``'s type, as
    Warp's (each as a kernel's ``out.dtype(x)``: floats to integers truncate,
    numbers to bool test nonzero). Arrays of one ndim and component shape
    convert element by element (all of them, or the first ``count`` of a
    1-d array); otherwise both are flattened to scalars and the first
    ``count`` elements' scalars (default all) convert in order. Same dtypes
    copy. Not differentiable."""
    who = "array_cast"
    _check_array(in_array, who, "in_array")
    _check_array(out_array, who, "out_array")
    _cpu_only(who, in_array, out_array)
    source, target = T.scalar_of(in_array.dtype), T.scalar_of(out_array.dtype)
    if source is None or target is None:
        raise TypeError(f"{who}: arrays of {in_array.dtype} and {out_array.dtype}: only scalar, vector and "
                        "matrix elements convert")
    if T.bfloat16 in (source, target) and source != target:
        raise NotImplementedError(f"{who}: bfloat16 conversions are not supported yet ({source} to {target})")
    in_comp, out_comp = _component_shape(in_array.dtype), _component_shape(out_array.dtype)
    per_element = int(np.prod(in_comp))
    if in_array.ndim != out_array.ndim or in_comp != out_comp:
        n = _count(count, in_array.size, who, "count") * per_element  # scalars
        available = out_array.size * int(np.prod(out_comp))
        if n > available:
            raise ValueError(f"{who}: {n} scalars do not fit in out_array ({available} scalars of {out_array.dtype})")
        scalars = np.asarray(_elements(in_array)).reshape(-1)[:n].astype(target.np_dtype)
        out_scalars = np.asarray(_elements(out_array)).reshape(-1).copy()
        out_scalars[:n] = scalars
        result, n_out = out_scalars.reshape((out_array.size,) + out_comp), out_array.size
    else:
        n = _count(count, in_array.size, who, "count")
        if in_array.ndim > 1 and n < in_array.size:
            raise ValueError(f"{who}: a partial cast (count={n}) is not supported for arrays with more than one "
                             "dimension, as in Warp")
        if in_array.ndim > 1 and in_array.shape != out_array.shape:
            raise ValueError(f"{who}: arrays of shapes {in_array.shape} and {out_array.shape} do not match")
        if n > out_array.size:
            raise ValueError(f"{who}: {n} elements do not fit in out_array ({out_array.size})")
        result, n_out = np.asarray(_elements(in_array))[:n].astype(target.np_dtype), n
    with recording.locked(active_tapes()):
        _before_write(out_array)
        _write_elements(out_array, 0, n_out, result)
        _record_non_differentiable(who, [out_array], [in_array])


class GraphColoringAlgorithm(enum.IntEnum):
    """Warp's choice of graph coloring algorithm (``MCS``: maximum
    cardinality search, ``GREEDY``: degree-ordered greedy), with Warp's
    values. Only the names: the coloring functions (``graph_coloring_assign``,
    ...) are not in adjit yet; code written against Warp names the enum in
    annotations and conversions at import."""

    MCS = 0
    GREEDY = 1


def __getattr__(name: str):
    # Only called for names this module lacks: Warp code asking for one gets a
    # NotInAdjitError naming it (errors.missing_name), never a bare AttributeError.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys as _sys
    from .errors import missing_name
    raise missing_name(__name__, name, _sys._getframe(1))
