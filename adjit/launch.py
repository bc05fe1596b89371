"""Launching kernels: argument checks and packing, the variant to run, and
the tape.

``launch`` runs a kernel over a grid of threads (recording it on the active
tape); ``launch_adjoint`` runs its adjoint, which is what the tape calls on
``backward()``.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from . import _runtime, loader
from . import types as T
from .errors import LaunchError
from .language import Kernel
from .runtime.array import Array, grad_or_scratch
from .runtime.recording import active_tape


def _launch_shape(dim) -> tuple[int, tuple[int, int, int, int]]:
    if type(dim) is int and dim >= 0:  # the common case, kept cheap
        return dim, (dim, 1, 1, 1)
    dims = (dim,) if np.ndim(dim) == 0 else tuple(dim)
    if not 1 <= len(dims) <= 4:
        raise LaunchError(f"launch dim must have 1 to 4 extents, got {dim!r}")
    dims = tuple(int(d) for d in dims)
    if any(d < 0 for d in dims):
        raise LaunchError(f"launch dim must be non-negative, got {dim!r}")
    return math.prod(dims), dims + (1,) * (4 - len(dims))


def _launch_error(k: Kernel, reason: str, name: str | None = None) -> LaunchError:
    """A LaunchError located at the kernel's parameter ``name`` (else at its ``def``)."""
    src = k.source
    node = src.tree if name is None else src.tree.args.args[k.arg_names.index(name)]
    return LaunchError(reason, src.filename, src.line_of(node), src.source_line(node))


#: struct formats of scalar kernel arguments, for the fast path of packing.
_SCALAR_FORMATS = {"float32": struct.Struct("<f"), "float64": struct.Struct("<d"),
                   "int32": struct.Struct("<i"), "int64": struct.Struct("<q"), "bool": struct.Struct("<?")}


def _pack_argument(k: Kernel, name: str, t, value):
    if type(value) is Array and t.__class__ is T.ArrayType and value.dtype == t.dtype \
            and len(value.shape) == t.ndim:
        return value._buffer  # the fast path of the checks below
    fmt = _SCALAR_FORMATS.get(t.name) if t.__class__ is T.ScalarType else None
    if fmt is not None and (type(value) is float and t.is_float or type(value) is int and not t.is_bool):
        try:
            return fmt.pack(value)
        except struct.error:
            pass  # out of range: the general path reports it
    if isinstance(t, T.ArrayType):
        if not isinstance(value, Array):
            raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be an adjit array of "
                                f"{t.dtype}, got {type(value).__name__}", name)
        if value.dtype != t.dtype:
            raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be an array of {t.dtype}, "
                                f"got an array of {value.dtype}", name)
        if value.ndim != t.ndim:
            raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be a {t.ndim}-d array, "
                                f"got {value.ndim}-d", name)
        return value.numpy()
    scalar = T.scalar_of(t)
    shape = () if isinstance(t, T.ScalarType) else t.shape
    try:
        if value is None:  # numpy would make it a NaN
            raise TypeError
        packed = np.asarray(value, dtype=scalar.np_dtype)
    except (TypeError, ValueError, OverflowError):
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got {value!r}",
                            name) from None
    if packed.shape != shape:
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got a value of shape "
                            f"{packed.shape}", name)
    if isinstance(t, T.ScalarType) and t.is_int and not float(value).is_integer():
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got {value!r}", name)
    return packed.tobytes()


def launch(k: Kernel, dim, inputs=(), outputs=(), device: str = "cpu") -> None:
    """Runs kernel ``k`` once per index of ``dim`` (an int or a 1-4-tuple)."""
    if not isinstance(k, Kernel):
        raise LaunchError(f"launch() needs an @adjit.kernel, got {k!r}")
    if device != "cpu":
        raise LaunchError(f"device '{device}' is not supported for launches yet (only 'cpu')")
    args = list(inputs) + list(outputs)
    if len(args) != len(k.arg_names):
        raise _launch_error(k, f"kernel '{k.__name__}' takes {len(k.arg_names)} arguments "
                            f"({', '.join(k.arg_names)}), got {len(args)}")
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    # Arrays that overlap (the same array twice, or views of one buffer) get
    # the variant compiled without the no-overlap promise.
    overlap = k.array_args > 1 and _runtime.arrays_overlap(packed)
    variant = loader.cpu_variant(k, noalias=not overlap)
    access = loader.argument_access(k)
    tape = active_tape()
    if tape is not None:
        tape.record_launch(k, dim, args, access, launch_adjoint)  # also bumps written arrays' versions
    else:
        for a, acc in zip(args, access):
            if acc.writes:
                a._version += 1
    _runtime.launch_cpu(variant.entry, total, shape, packed)


def launch_adjoint(k: Kernel, dim, args: list, grads_of: list | None = None) -> None:
    """Runs the adjoint of a launch of ``k`` with the primal values ``args``;
    its gradient arrays are the ``.grad`` of the arrays in ``grads_of``
    (default ``args``; a scratch array where there is none)."""
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    grads = [grad_or_scratch(a) for a, t in zip(grads_of or args, k.arg_types)
             if isinstance(t, T.ArrayType)]
    all_args = packed + [g.numpy() for g in grads]
    variant = loader.cpu_variant(k, adjoint=True, noalias=not _runtime.arrays_overlap(all_args))
    _runtime.launch_cpu(variant.entry, total, shape, all_args)


def synchronize() -> None:
    """Waits for outstanding work (CPU launches are synchronous)."""
