"""Launching kernels, on any device: argument checks and packing, the tape,
and the one sequence every launch runs through.

``launch`` runs a kernel over a grid of threads (recording it on the active
tape); ``launch_adjoint`` runs its adjoint, which is what the tape calls on
``backward()``; ``launch_tangent`` runs its forward-mode tangent kernel
(``adjit.jvp``); ``launch_adjoint_batch`` and ``launch_adjoint_tangent`` run
the batched adjoint and the tangent of the adjoint. Each checks and packs its
arguments into a ``PackedLaunch`` and hands it to ``_execute``; what depends
on the device (which variant runs, the runtime call, what a failed check
means) is the backend's (``adjit.backends``). ``observe_launches`` lets
tools see every launch.
"""
from __future__ import annotations

import math
import struct
import threading
from typing import NamedTuple

import numpy as np

from . import cache, config, language, loader, timing
from .backends import cpu
from .backends.base import Backend, PackedLaunch
from .device import CPU, device_alias, get_device
from . import types as T
from .errors import GradientError, LaunchError
from .language import Kernel
from .runtime.array import Array, empty, grad_or_scratch
from .runtime.cuda_memory import CudaMemory
from .runtime.indexed_array import IndexedArray
from .runtime.struct_array import StructArray
from .runtime import capture, recording
from .runtime.recording import _local as _tapes_local, active_tapes


#: The largest extent of one launch dimension: each ``tid()`` coordinate is an int32.
MAX_EXTENT = 2**31 - 1
#: The most threads one CPU launch runs (the runtime counts them in an int64).
MAX_THREADS = 2**63 - 1


def _launch_shape(dim) -> tuple[int, tuple[int, int, int, int]]:
    if type(dim) is int and 0 <= dim <= MAX_EXTENT:  # the common case, kept cheap
        return dim, (dim, 1, 1, 1)
    if isinstance(dim, (str, bytes)) or dim is None or isinstance(dim, (bool, np.bool_)):
        raise LaunchError(f"launch dim must be an int or a tuple of 1 to 4 ints, got {dim!r}")
    if np.ndim(dim) == 0:
        dims = (dim,)
    else:
        try:
            dims = tuple(dim)
        except TypeError:
            raise LaunchError(f"launch dim must be an int or a tuple of 1 to 4 ints, got {dim!r}") from None
    if not 1 <= len(dims) <= 4:
        raise LaunchError(f"launch dim must have 1 to 4 extents, got {dim!r}")
    extents = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            hint = " (round it yourself: a fractional thread count has no meaning)" \
                if isinstance(d, (float, np.floating)) else ""
            raise LaunchError(f"launch dim extents must be integers, got {d!r} of type {type(d).__name__} "
                              f"in dim={dim!r}{hint}")
        extents.append(int(d))
    if any(d < 0 for d in extents):
        raise LaunchError(f"launch dim must be non-negative, got {dim!r}")
    if any(d > MAX_EXTENT for d in extents):
        raise LaunchError(f"launch dim extents must be at most 2**31 - 1 = {MAX_EXTENT} (tid() coordinates "
                          f"are int32), got {dim!r}; split the launch or use more dimensions")
    total = math.prod(extents)
    if total > MAX_THREADS:
        raise LaunchError(f"launch dim {dim!r} has {total} threads, more than the {MAX_THREADS} (int64) one "
                          "CPU launch can run")
    return total, tuple(extents) + (1,) * (4 - len(extents))


def _argument_list(k: Kernel, what: str, value) -> list:
    if not isinstance(value, (list, tuple)):
        raise LaunchError(f"launch of kernel '{k.__name__}': {what} must be a list or tuple of arguments, "
                          f"got {type(value).__name__}")
    return list(value)


def _argument_type(k: Kernel, name: str, value):
    """The kernel type of a launch argument (a generic kernel's instance is
    chosen by them)."""
    if isinstance(value, Array):
        return T.ArrayType(value.dtype, value.ndim)
    if isinstance(value, T.StructValue):
        return value._type
    if isinstance(value, StructArray):
        return T.ArrayType(value.dtype, value.ndim)
    if isinstance(value, IndexedArray):
        return T.IndexedArrayType(value.dtype, value.ndim)
    try:
        return T.host_type(value, f"kernel '{k.__name__}' argument '{name}'")
    except TypeError as e:
        raise _launch_error(k, str(e), name) from None


def _launch_error(k: Kernel, reason: str, name: str | None = None) -> LaunchError:
    """A LaunchError located at the kernel's parameter ``name`` (else at its ``def``)."""
    src = k.source
    node = src.tree if name is None else src.tree.args.args[k.param_names.index(name.split(".")[0])]
    return LaunchError(reason, src.filename, src.line_of(node), src.source_line(node))


#: struct formats of scalar kernel arguments, for the fast path of packing.
_SCALAR_FORMATS = {"float32": struct.Struct("<f"), "float64": struct.Struct("<d"),
                   "int32": struct.Struct("<i"), "int64": struct.Struct("<q"), "bool": struct.Struct("<?")}


def _pack_argument(k: Kernel, name: str, t, value):
    if type(value) is Array and t.__class__ is T.ArrayType and value.dtype == t.dtype \
            and len(value.shape) == t.ndim:
        buffer = value._buffer
        if buffer.__class__ is CudaMemory:
            return _check_buffer(k, name, buffer)
        flags = buffer.flags
        if flags.c_contiguous and flags.writeable and buffer.dtype.kind != "V":
            return buffer  # the fast path of the checks below (not ml_dtypes' bfloat16)
        return _check_buffer(k, name, buffer)
    fmt = _SCALAR_FORMATS.get(t.name) if t.__class__ is T.ScalarType else None
    if fmt is not None and (type(value) is float and t.is_float or type(value) is int and not t.is_bool):
        try:
            return fmt.pack(value)
        except struct.error:
            pass  # out of range: the general path reports it
        except OverflowError:  # a float beyond the float32 range (inf and nan pack)
            raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' is {value!r}, outside the range of "
                                f"{t} (largest finite: {np.finfo(np.float32).max:.6g}); pass float('inf') if "
                                "infinity is meant, or make the parameter float64", name) from None
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
        return _check_buffer(k, name, value._buffer)
    scalar = T.scalar_of(t)
    shape = () if isinstance(t, T.ScalarType) else t.shape
    try:
        if value is None:  # numpy would make it a NaN
            raise TypeError
        with np.errstate(over="ignore"):  # (a value out of range is reported below)
            packed = scalar.host(value)
    except (TypeError, ValueError, OverflowError):
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got {value!r}",
                            name) from None
    if isinstance(t, T.MatrixType) and packed.shape == (t.rows * t.cols,):
        packed = packed.reshape(shape)  # a flat sequence of the components, row by row, as Warp takes
    if packed.shape != shape:
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got a value of shape "
                            f"{packed.shape}", name)
    if isinstance(t, T.ScalarType) and t.is_int and not float(value).is_integer():
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' must be {t}, got {value!r}", name)
    if scalar.is_float and scalar.np_dtype.itemsize < 8 and not np.all(np.isfinite(packed)):
        wide = np.asarray(value, dtype=np.float64)
        if np.any(np.isfinite(wide) & ~np.isfinite(packed.astype(np.float64))):
            raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}' is {value!r}, outside the range of "
                                f"{scalar}: pass infinity explicitly if it is meant, or a wider type", name)
    return packed.tobytes()


def _check_buffer(k: Kernel, name: str, buffer) -> np.ndarray:
    """The buffer of an array argument, if the runtime can take it: a
    writable host ndarray whose strides are whole, non-negative numbers of
    elements (else the runtime would fail with a C++ cast error, or run on a
    temporary copy and write nothing)."""
    if isinstance(buffer, CudaMemory):
        return buffer.view(np.uint16) if buffer.dtype.kind == "V" else buffer
    if not isinstance(buffer, np.ndarray):
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}': the array's buffer is a "
                            f"{type(buffer).__name__}, not a numpy array", name)
    if not buffer.flags.writeable:
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}': the array's buffer is read-only "
                            "(numpy writeable=False), and kernels take only writable buffers; pass a copy "
                            "(adjit.clone(a)) or make the buffer writable", name)
    if not buffer.flags.c_contiguous and any(
            s < 0 or s % buffer.itemsize for s in buffer.strides):
        raise _launch_error(k, f"kernel '{k.__name__}' argument '{name}': the array's strides {buffer.strides} "
                            "are not whole, non-negative numbers of elements (a reversed or byte-offset view); "
                            "pass adjit.clone(a) (a contiguous copy)", name)
    if buffer.dtype.kind == "V" and buffer.dtype == T.bfloat16.np_dtype:
        return buffer.view(np.uint16)  # ml_dtypes.bfloat16: the runtime takes its bits
    return buffer


def launch(kernel: Kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None, stream=None,
           adjoint: bool = False, record_tape: bool = True, record_cmd: bool = False, max_blocks: int = 0,
           block_dim: int = 256):
    """Runs ``kernel`` once per index of ``dim`` (an int or a 1-4-tuple) on
    ``device`` (None: the default device, see ``adjit.ScopedDevice``), with
    the arguments ``inputs`` followed by ``outputs`` (Warp's signature).

    ``adjoint=True`` runs the adjoint kernel instead: ``adj_inputs`` and
    ``adj_outputs`` (one entry per argument; None, or any value for a
    non-array parameter) are the gradient arrays of the array arguments, the
    outputs' holding the incoming gradients, into which the inputs'
    accumulate; left empty, each array's ``.grad`` is used (a zeroed scratch
    array where there is none). ``record_tape=False``: no open ``Tape``
    records the launch. ``record_cmd=True`` returns a ``Launch`` to run
    later instead of launching. ``stream`` (CUDA only) must be None on the
    CPU; ``max_blocks`` and ``block_dim`` are checked and do not change a CPU
    launch (``block_dim()`` is 1 there)."""
    # The fast path: a plain launch that nothing observes, records or
    # captures runs on the kernel's plan (made by the last such launch that
    # went through the general path below) if the plan fits its arguments.
    if (stream is None and not adjoint and not record_cmd and max_blocks == 0 and not _observers
            and not capture._open and not timing._sessions and not config.print_launches
            and not getattr(_tapes_local, "stack", None)):
        plan = getattr(kernel, "_launch_plan", None)
        if (plan is not None and plan.definitions == language.definitions
                and plan.settings == (config.epoch, loader.forgotten, kernel.bounds_check)):
            if plan.device is CPU:
                if (device is None or device is CPU or device == "cpu") and block_dim == 256:
                    failure = plan.runtime_plan.run(dim, inputs, outputs)
                    if failure is None:
                        return None
                    if failure is not False:
                        launched = PackedLaunch(kernel, dim, 0, (), [], list(inputs) + list(outputs))
                        raise cpu.check_failed(launched, plan.variant, failure)
            elif ((device is None or device is plan.device or device == plan.device.alias)
                  and dim.__class__ is int and 0 <= dim <= MAX_EXTENT and block_dim.__class__ is int
                  and block_dim > 0 and inputs.__class__ in _SEQUENCES and outputs.__class__ in _SEQUENCES
                  and plan.runtime_plan.run(dim, [*inputs, *outputs], block_dim)):
                return None
        fast = True  # (the plan to make, if the launch fits one)
    else:
        fast = False
    k = kernel
    if not isinstance(k, Kernel):
        raise LaunchError(f"launch() needs an @adjit.kernel, got {k!r}")
    if device is not None:
        try:
            device = get_device(device)
        except ValueError as e:
            raise LaunchError(f"kernel '{k.__name__}': {e}") from None
    _check_launch_options(k, stream, max_blocks, block_dim)
    if record_cmd:
        return Launch(k, dim, list(inputs), list(outputs), list(adj_inputs), list(adj_outputs), device=device,
                      adjoint=adjoint, record_tape=record_tape, max_blocks=max_blocks, block_dim=block_dim)
    if config.print_launches:
        print(f"kernel: {k.__name__}{' (adjoint)' if adjoint else ''} dim: {dim} inputs: {_describe_list(inputs)} "
              f"outputs: {_describe_list(outputs)} device: {device_alias(device)}")
    where = None if device is None and stream is None and block_dim == 256 else (device, stream, block_dim)
    if adjoint:
        return _launch_adjoint_with(k, dim, inputs, outputs, adj_inputs, adj_outputs)
    if not record_tape:
        with recording.paused():
            return _launch(k, dim, inputs, outputs, where)
    return _launch(k, dim, inputs, outputs, where, fast)


def _describe_list(values) -> str:
    """Arguments in a ``print_launches`` line: arrays by shape and dtype."""
    def one(v):
        if isinstance(v, (Array, IndexedArray, StructArray)):
            return f"{type(v).__name__}(shape={tuple(v.shape)}, dtype={getattr(v.dtype, '__name__', v.dtype)})"
        return repr(v)
    return "[" + ", ".join(one(v) for v in values) + "]"


def _check_launch_options(k: Kernel, stream, max_blocks, block_dim) -> None:
    if stream is None and type(max_blocks) is int and type(block_dim) is int and block_dim >= 1:
        return  # the common case, kept cheap
    from .runtime.cuda import Stream
    if stream is not None and not isinstance(stream, Stream):
        raise LaunchError(f"launch of kernel '{k.__name__}': stream must be an adjit.Stream (CUDA launches) or "
                          f"None, got {type(stream).__name__}")
    for name, value, low in (("max_blocks", max_blocks, None), ("block_dim", block_dim, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (low is not None and value < low):
            raise LaunchError(f"launch of kernel '{k.__name__}': {name} must be an int"
                              + (f" >= {low}" if low is not None else "") + f", got {value!r}")


def _launch_adjoint_with(k: Kernel, dim, inputs, outputs, adj_inputs, adj_outputs) -> None:
    """``launch(..., adjoint=True)``: the adjoint kernel with explicit
    gradient arrays (Warp's adj_inputs/adj_outputs) or the arrays' .grad."""
    args = _argument_list(k, "inputs", inputs) + _argument_list(k, "outputs", outputs)
    if len(args) != len(k.param_names):
        raise _launch_error(k, f"kernel '{k.__name__}' takes {len(k.param_names)} arguments "
                            f"({', '.join(k.param_names)}), got {len(args)}")
    # As in Warp, adj_inputs + adj_outputs hold one entry per argument, or
    # are left empty; an array argument whose entry is None (or every one,
    # when they are empty) takes the array's own .grad.
    adj = _argument_list(k, "adj_inputs", adj_inputs) + _argument_list(k, "adj_outputs", adj_outputs)
    if adj and len(adj) != len(args):
        raise _launch_error(k, f"an adjoint launch of kernel '{k.__name__}' takes one adjoint per argument "
                            f"({len(args)}) in adj_inputs + adj_outputs, got {len(adj)}")
    adj = adj or [None] * len(args)
    if k.is_generic:
        k = k.overload([_argument_type(k, name, v) for name, v in zip(k.param_names, args)])
    if len(k.arg_names) != len(k.param_names):
        raise _launch_error(k, f"an adjoint launch of kernel '{k.__name__}' with struct parameters: record the "
                            "launch on an adjit.Tape and call backward() instead")
    holders = []
    for n, (name, t, a) in enumerate(zip(k.param_names, k.arg_types, args)):
        g = adj[n] if adj[n] is not None else (a.grad if isinstance(a, Array) else None)
        if isinstance(t, T.ArrayType) and g is not None:
            if not isinstance(g, Array) or not isinstance(a, Array) or g.shape != a.shape or g.dtype != a.dtype:
                raise _launch_error(k, f"the adjoint of argument '{name}' of kernel '{k.__name__}' must be an "
                                    f"array of its shape and dtype ({getattr(a, 'shape', None)}, "
                                    f"{getattr(a, 'dtype', None)}), got {g!r}")
        holders.append(_GradOf(g if isinstance(t, T.ArrayType) else None, a))
    launch_adjoint(k, dim, args, holders)


class _GradOf:
    """Stands for an argument in launch_adjoint's ``grads_of``: its ``.grad``
    is the gradient array given for it."""

    def __init__(self, grad, array):
        self.grad = grad
        self._array = array

    def __getattr__(self, name):  # zeros_like(...) of a missing gradient reads the array's shape and dtype
        return getattr(self._array, name)


def launch_tiled(kernel: Kernel, dim, inputs=(), outputs=(), block_dim: int | None = None, **kwargs):
    """Warp's launch of a tiled kernel: ``dim`` counts blocks, and each block
    has ``block_dim`` threads, a trailing launch dimension (``i, j = tid()``
    reads the block's indices). On the CPU a block is one thread, as in
    Warp's CPU launches, so the trailing extent is 1 whatever ``block_dim``
    says (it is checked as ``launch`` checks it)."""
    if block_dim is None:
        raise LaunchError("launch_tiled() needs block_dim= (the threads of a block), as Warp's")
    if isinstance(dim, (str, bytes)) or dim is None:
        raise LaunchError(f"launch_tiled dim must be an int or a tuple of 1 to 3 ints, got {dim!r}")
    dims = (dim,) if np.ndim(dim) == 0 else tuple(dim)
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"launch_tiled dim must have 1 to 3 extents (the block's threads are the 4th), got {dim!r}")
    return launch(kernel, (*dims, 1), inputs, outputs, block_dim=block_dim, **kwargs)


class Launch:
    """A launch recorded with ``launch(..., record_cmd=True)`` (Warp's
    ``Launch``): ``launch()`` runs it; ``set_dim`` and ``set_param_*``
    change it first."""

    def __init__(self, kernel: Kernel, dim, inputs: list, outputs: list, adj_inputs: list, adj_outputs: list,
                 device=None, adjoint: bool = False, record_tape: bool = True, max_blocks: int = 0,
                 block_dim: int = 256):
        self.kernel, self.dim = kernel, dim
        self.params = inputs + outputs
        self.adj_params = adj_inputs + adj_outputs
        self._split = len(inputs)
        self.device, self.adjoint, self.record_tape = device, adjoint, record_tape
        self.max_blocks, self.block_dim = max_blocks, block_dim

    def set_dim(self, dim) -> None:
        _launch_shape(dim)  # checked now
        self.dim = dim

    def set_param_at_index(self, index: int, value, adjoint: bool = False) -> None:
        params = self.adj_params if adjoint else self.params
        if not -len(params) <= index < len(params):
            raise LaunchError(f"Launch of kernel '{self.kernel.__name__}': no parameter at index {index} (it has "
                              f"{len(params)})")
        params[index] = value

    def set_param_by_name(self, name: str, value, adjoint: bool = False) -> None:
        if name not in self.kernel.param_names:
            raise LaunchError(f"Launch of kernel '{self.kernel.__name__}': no parameter '{name}' (its parameters: "
                              f"{', '.join(self.kernel.param_names)})")
        self.set_param_at_index(self.kernel.param_names.index(name), value, adjoint)

    def set_params(self, values) -> None:
        values = list(values)
        if len(values) != len(self.params):
            raise LaunchError(f"Launch of kernel '{self.kernel.__name__}': set_params takes {len(self.params)} "
                              f"values, got {len(values)}")
        self.params = values

    def launch(self, stream=None) -> None:
        split = self._split
        launch(self.kernel, self.dim, self.params[:split], self.params[split:], self.adj_params[:split],
               self.adj_params[split:], device=self.device, stream=stream, adjoint=self.adjoint,
               record_tape=self.record_tape, max_blocks=self.max_blocks, block_dim=self.block_dim)


def _launch(k: Kernel, dim, inputs, outputs, where=None, fast: bool = False) -> None:
    """A forward launch through the general path. ``fast``: ``launch()``'s
    fast path could have taken it (nothing observes, records or captures
    launches); the kernel then gets a plan for later launches like it."""
    args = _argument_list(k, "inputs", inputs) + _argument_list(k, "outputs", outputs)
    n_inputs = len(inputs)
    if len(args) != len(k.param_names):
        raise _launch_error(k, f"kernel '{k.__name__}' takes {len(k.param_names)} arguments "
                            f"({', '.join(k.param_names)}), got {len(args)}")
    if k.is_generic:  # typing.Any parameters: the instance for these arguments' types
        k = k.overload([_argument_type(k, name, v) for name, v in zip(k.param_names, args)])
    if k.has_struct_params:
        try:
            args = k.flatten_arguments(args)  # struct values -> their fields
        except TypeError as e:
            raise _launch_error(k, str(e)) from None
    for v in args:  # (a loop: cheaper than any() over a generator)
        if v is None:
            args = _null_arrays(k, args)
            break
    total, shape = _launch_shape(dim)
    if total > MAX_EXTENT:
        _check_linear_tid(k, dim, total)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    launch = PackedLaunch(k, dim, total, shape, packed, args)
    if where is not None:
        _place(launch, *where)
    _execute(launch, tapes=active_tapes(), n_inputs=n_inputs, written=_written_arguments)
    if fast:
        definitions, settings = language.definitions, (config.epoch, loader.forgotten, k.bounds_check)
        if launch.device is CPU:
            if launch.block_dim in (0, 256):
                made = cpu.launch_plan(launch)
                k._launch_plan = None if made is None else _LaunchPlan(*made, launch.variant, definitions,
                                                                       settings, CPU)
        elif config.mode != "debug":
            made = _cuda_backend_module().launch_plan(launch)
            k._launch_plan = None if made is None else _LaunchPlan(made, None, launch.variant, definitions,
                                                                   settings, launch.device)


class _LaunchPlan(NamedTuple):
    """A kernel's fast path: its runtime plan (``_runtime.LaunchPlan``, made
    by the CPU backend) for launches like the last one that ran through the
    general path, valid while no definition, no setting (config's, the
    kernel's ``bounds_check``) and none of the loader's code changed."""
    runtime_plan: object
    #: What the runtime plan compares arguments with (their dtypes), and the
    #: code it runs: kept alive here.
    params: list
    variant: object
    definitions: int
    #: (config.epoch, loader.forgotten, the kernel's bounds_check) when it was made
    settings: tuple
    #: The device it launches on: the CPU, or a CUDA device (then
    #: ``runtime_plan`` is ``backends.cuda.LaunchPlan``).
    device: object


#: The argument lists the fast path takes as they are.
_SEQUENCES = (list, tuple)


def _cuda_backend_module():
    from .backends import cuda
    return cuda


def _place(launch: PackedLaunch, device, stream, block_dim: int) -> None:
    """The device, stream and block size ``launch()`` was given."""
    if stream is not None:
        if device is not None and stream.device != device:
            raise _launch_error(launch.kernel, f"launch of kernel '{launch.kernel.__name__}': the stream is on "
                                f"{stream.device}, not on device {device}")
        device = stream.device
        launch.stream = stream.cuda_stream
    launch.device = device
    launch.block_dim = block_dim


def _null_arrays(k: Kernel, args: list) -> list:
    """The arguments with None for an array parameter replaced by an empty
    array of its type: Warp's null array, which is false as a condition in
    the kernel (``if arr:``), and whose every element access is out of
    bounds (an OutOfBoundsError naming the line, not a crash). It is made
    on the device of the launch's other arrays."""
    device = next((a.device for a in args if isinstance(a, Array)), "cpu")
    return [empty((0,) * t.ndim, dtype=t.dtype, device=device) if v is None and type(t) is T.ArrayType else v
            for t, v in zip(k.arg_types, args)]


def _written_arguments(launch: PackedLaunch) -> list:
    """The arguments a launch of the kernel writes."""
    return [launch.primal[i] for i in loader.written_arguments(launch.kernel)]


#: The backend of CPU launches (CUDA launches: backends/cuda.py's, loaded
#: at the first one).
_backend: Backend = cpu.BACKEND


#: CUDA devices by ordinal (launches look them up by their arrays' memory).
_CUDA: dict = {}


def _backend_for(launch: PackedLaunch) -> Backend:
    """The backend of the device the launch runs on: the one its arrays are
    on (they must all be on one), or ``launch()``'s ``device=``, which must
    be theirs; the CPU for a launch with neither."""
    found = None
    host = False  # (whether a host array is among them)
    for position, a in enumerate(launch.args):
        if a.__class__ is CudaMemory:
            if found is None:
                found = a.allocation.ordinal
            elif a.allocation.ordinal != found:
                raise _wrong_device(launch, position, f"cuda:{found}", f"cuda:{a.ordinal}")
        elif a.__class__ is np.ndarray:
            host = True
    asked = launch.device
    if found is None and asked is None and launch.kernel.array_args == 0:
        asked = get_device()  # (a kernel without arrays runs on the default device, as in Warp)
    if found is None and (asked is None or not asked.is_cuda):
        launch.device = CPU
        return _backend
    device = asked if found is None else (_CUDA.get(found) or _CUDA.setdefault(found, get_device(f"cuda:{found}")))
    if asked is not None and asked != device:
        raise _launch_error(launch.kernel, f"launch of kernel '{launch.kernel.__name__}' on {asked}: its arrays "
                            f"are on {device} (move them with a.to('{asked.alias}'))")
    if host:
        position = next(p for p, a in enumerate(launch.args) if a.__class__ is np.ndarray)
        raise _wrong_device(launch, position, device.alias, "cpu")
    launch.device = device
    return _cuda_backend or _load_cuda_backend()


#: The backend of CUDA launches (loaded at the first one).
_cuda_backend: Backend | None = None


def _load_cuda_backend() -> Backend:
    global _cuda_backend
    from .backends import cuda
    _cuda_backend = cuda.BACKEND
    return _cuda_backend


def _wrong_device(launch: PackedLaunch, position: int, expected: str, got: str) -> LaunchError:
    k = launch.kernel
    names = list(k.arg_names)
    name = names[position] if position < len(names) else f"#{position} (a gradient or tangent)"
    return _launch_error(k, f"kernel '{k.__name__}' argument '{name}' is on '{got}', but the launch's other "
                         f"arrays are on '{expected}': the arrays of a launch must be on one device (move it with "
                         f"a.to('{expected}'))", name if position < len(names) else None)


def _execute(launch: PackedLaunch, compiled_from=None, tapes=(), n_inputs: int | None = None,
             written=None) -> None:
    """The sequence every launch runs: the backend chooses and loads the
    variant; a recorded launch's adjoint must come from the code that ran
    (``compiled_from``); the launch is recorded on ``tapes`` (forward and
    tangent launches: ``n_inputs`` arguments are inputs); the arrays it
    writes (``written(launch)``) get new versions; observers see it; the
    backend runs it."""
    backend = _backend_for(launch)
    backend.prepare(launch)
    if compiled_from is not None:
        _check_compiled_from(launch.kernel, launch.variant, compiled_from)
    if capture._open and capture.capturing() is not None:
        _capture(launch, backend, tapes, n_inputs, written)
        return
    if not tapes:
        _run_observed(launch, written, backend)
        return
    k = launch.kernel
    access = loader.argument_access(k)
    # Recorded on every tape open in this thread (nested tapes both record),
    # and run while holding their locks (threads sharing a tape record in the
    # order their launches run).
    with recording.locked(tapes):
        steps = [tape.record_launch(k, launch.dim, launch.primal, access, launch_adjoint) for tape in tapes]
        for step in steps:
            if n_inputs is not None:
                step.n_inputs = n_inputs  # where the outputs start (autograd.gradcheck_tape)
            step.compiled_from = launch.variant.digest
        _run_observed(launch, written, backend)
        _keep_finals(steps, launch.primal, access)


def _capture(launch: PackedLaunch, backend: Backend, tapes, n_inputs, written) -> None:
    """A launch in a graph capture (runtime/capture.py): recorded, not run; a
    replay runs it as prepared now. Open tapes record it as a launch (their
    snapshots and backward passes are captured too); the written arrays'
    versions move as if it ran."""
    k = launch.kernel
    if tapes:
        access = loader.argument_access(k)
        if any(acc.float_min_max for acc in access):
            raise capture.CaptureError(f"kernel '{k.__name__}' has float atomic min/max, whose adjoint needs the "
                                       "values the launch leaves; a tape cannot keep them in a graph capture yet")
        with recording.locked(tapes):
            steps = [tape.record_launch(k, launch.dim, launch.primal, access, launch_adjoint) for tape in tapes]
            for step in steps:
                if n_inputs is not None:
                    step.n_inputs = n_inputs
                step.compiled_from = launch.variant.digest
            if written is not None:
                for array in written(launch):
                    array._version += 1
    capture.record("launch", f"{k.__name__} ({launch.spec.kind}, dim={launch.dim})",
                   lambda: _run_observed(launch, written, backend), device=launch.device)


def _run_observed(launch: PackedLaunch, written, backend: Backend) -> None:
    if written is not None:
        for array in written(launch):
            array._version += 1
    observers = _observers
    for observer in observers:
        if observer.before is not None:
            observer.before(launch)
    backend.run(launch)
    for observer in observers:
        if observer.after is not None:
            observer.after(launch)


class LaunchObserver:
    """A registration made by ``observe_launches``: ``close()`` (or the end
    of its ``with`` block) ends it."""

    def __init__(self, before, after):
        self.before, self.after = before, after

    def close(self) -> None:
        global _observers
        with _observers_lock:
            _observers = tuple(o for o in _observers if o is not self)

    def __enter__(self) -> "LaunchObserver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


#: The open observers (replaced, never changed in place: launches in other
#: threads iterate over them).
_observers: tuple[LaunchObserver, ...] = ()
_observers_lock = threading.Lock()


def observe_launches(before=None, after=None) -> LaunchObserver:
    """Calls ``before(launch)`` before each kernel launch runs and
    ``after(launch)`` once it ran without a failed check, in every thread,
    until the returned observer is closed (it is a context manager:
    ``with adjit.observe_launches(after=f): ...``). Forward, adjoint (the
    tape's ``backward()``) and tangent launches are all observed.

    ``launch`` (the same object in both calls) is an
    ``adjit.backends.base.PackedLaunch``: the kernel, ``dim``, ``total``
    threads and the 4 extents ``shape``, the kernel's arguments ``primal``,
    the packed arguments ``args`` as the compiled entry takes them (array
    buffers and value bytes), and the variant that runs: ``spec`` (a
    ``VariantSpec``: adjoint and tangent lanes, noalias, strided, checks...)
    and the backend's loaded ``variant``. Observers read the launch; an
    exception raised by one propagates out of the launch."""
    global _observers
    if before is None and after is None:
        raise TypeError("observe_launches: give before=, after= or both")
    for name, f in (("before", before), ("after", after)):
        if f is not None and not callable(f):
            raise TypeError(f"observe_launches: {name} must be callable, got {f!r}")
    observer = LaunchObserver(before, after)
    with _observers_lock:
        _observers = _observers + (observer,)
    return observer


def _keep_finals(steps: list, args: list, access: list) -> None:
    """Gives the recorded steps of a launch the arrays its float atomic
    min/max wrote, as it left them (their adjoint compares against them)."""
    positions = [i for i, acc in enumerate(access) if acc.float_min_max]
    if positions:
        finals = [Array(args[i]._buffer.copy(), args[i].dtype, False, args[i].device) for i in positions]
        for step in steps:
            step.finals = finals


def _min_max_arrays(k: Kernel, finals) -> list[int]:
    """The positions of the arrays a float atomic min/max of ``k`` writes,
    checking that their final values were kept (``finals``)."""
    positions = [i for i, acc in enumerate(loader.argument_access(k)) if acc.float_min_max]
    if positions and (finals is None or len(finals) != len(positions)):
        raise GradientError(
            f"kernel '{k.__name__}' writes {', '.join(repr(k.arg_names[i]) for i in positions)} with a float "
            "atomic min/max, whose adjoint compares each value with the element as the launch left it; only a "
            "launch recorded on a tape keeps those values")
    return positions


def _keep_unchanged_elements(args: list, grads_by_position: dict, positions: list[int], finals: list) -> None:
    """After the adjoint of a float atomic min/max: an element's old value
    passes its gradient on only where no thread changed the element (a
    winner took it), so the gradient is zeroed where the launch changed it."""
    for i, final in zip(positions, finals):
        if args[i].device == "cpu":
            changed = args[i]._buffer != final._buffer
            for grad in grads_by_position.get(i, ()):
                grad._buffer[changed] = 0
            continue
        # a CUDA array has no masked assignment: compared and zeroed on the host for now
        changed = args[i].numpy() != final.numpy()
        for grad in grads_by_position.get(i, ()):
            values = grad.numpy().copy()
            values[changed] = 0
            grad._buffer[...] = values


def _check_linear_tid(k: Kernel, dim, total: int) -> None:
    """Refuses a launch whose linear thread index overflows the kernel's
    int32 ``i = tid()``."""
    if k.linear_tid:
        raise _launch_error(k, f"launch dim {dim!r} has {total} threads, but kernel '{k.__name__}' takes its "
                            "thread index as one int32 (i = tid()), which holds at most 2**31 - 1 = "
                            f"{MAX_EXTENT}; take one index per dimension (i, j = tid()) or split the launch")


def launch_adjoint(k: Kernel, dim, args: list, grads_of: list | None = None, finals: list | None = None,
                   compiled_from=None) -> None:
    """Runs the adjoint of a launch of ``k`` with the primal values ``args``;
    its gradient arrays are the ``.grad`` of the arrays in ``grads_of``
    (default ``args``; a scratch array where there is none). ``finals``: the
    arrays its float atomic min/max wrote, as the launch left them (the
    tape keeps them). ``compiled_from``: what the launch's code was
    compiled from (a recorded launch's ``variant.digest``); a GradientError
    if the adjoint's differs."""
    if not k.enable_backward:
        raise GradientError(f"kernel '{k.__name__}' ({k.source.filename}:{k.source.first_line}) was declared "
                            "with enable_backward=False, so it has no adjoint: backward() cannot pass "
                            "gradients through its launch (remove the option, or launch it outside the tape)")
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    positions = _min_max_arrays(k, finals)
    grads = [(n, grad_or_scratch(a)) for n, a, t in zip(k.arg_names, grads_of or args, k.arg_types)
             if isinstance(t, T.ArrayType)]
    all_args = packed + [_check_buffer(k, n, g._buffer) for n, g in grads]
    all_args += [_check_buffer(k, k.arg_names[i], f._buffer) for i, f in zip(positions, finals or ())]
    _execute(PackedLaunch(k, dim, total, shape, all_args, args, adjoint=1), compiled_from)
    if positions:
        array_positions = [i for i, t in enumerate(k.arg_types) if isinstance(t, T.ArrayType)]
        by_position = {p: [g] for p, (_, g) in zip(array_positions, grads)}
        _keep_unchanged_elements(args, by_position, positions, finals)


def _check_compiled_from(k: Kernel, variant, compiled_from) -> None:
    """The adjoint of a recorded launch must be compiled from what the launch
    ran: a function it calls redefined, or a global it reads changed, between
    the launch and backward() would pair the gradient with other code."""
    if compiled_from is None or variant.digest == compiled_from:
        return
    raise GradientError(
        f"kernel '{k.__name__}' ({k.source.filename}:{k.source.first_line}) changed after its recorded launch "
        f"ran: {cache.describe_change(compiled_from, variant.digest)}. Its derivative would be that of other code "
        "than the forward that ran; launch it again on a new tape after the change")


def launch_adjoint_batch(k: Kernel, dim, args: list, grad_batch: list[list], finals: list | None = None,
                         compiled_from=None) -> None:
    """Batched seeds in reverse mode: the adjoint of a launch of ``k`` with
    the primal values ``args`` for several seeds at once. ``grad_batch``: one
    list per seed (lane) of gradient arrays, one per array parameter; the
    adjoint kernel is compiled with that many lanes (adjit-adjoint{lanes}),
    replays the primal once and carries one adjoint per lane beside every
    float value."""
    if not k.enable_backward:
        raise GradientError(f"kernel '{k.__name__}' ({k.source.filename}:{k.source.first_line}) was declared "
                            "with enable_backward=False, so it has no adjoint")
    lanes = len(grad_batch)
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    array_names = [n for n, t in zip(k.arg_names, k.arg_types) if isinstance(t, T.ArrayType)]
    grads = []
    for lane_grads in grad_batch:
        if len(lane_grads) != len(array_names):
            raise LaunchError(f"kernel '{k.__name__}': each seed needs {len(array_names)} gradient arrays, got "
                              f"{len(lane_grads)}")
        grads += list(lane_grads)
    positions = _min_max_arrays(k, finals)
    all_args = packed + [_check_buffer(k, n, g._buffer) for n, g in zip(array_names * lanes, grads)]
    all_args += [_check_buffer(k, k.arg_names[i], f._buffer) for i, f in zip(positions, finals or ())]
    _execute(PackedLaunch(k, dim, total, shape, all_args, list(args), adjoint=max(lanes, 1)), compiled_from)
    if positions:
        array_positions = [i for i, t in enumerate(k.arg_types) if isinstance(t, T.ArrayType)]
        by_position = {p: [lane_grads[n] for lane_grads in grad_batch] for n, p in enumerate(array_positions)}
        _keep_unchanged_elements(args, by_position, positions, finals)


def is_differentiable(t) -> bool:
    """Whether a kernel parameter of type ``t`` has a tangent (and a
    gradient): floats, float vectors and matrices, and arrays of them."""
    scalar = T.scalar_of(t.dtype if isinstance(t, T.ArrayType) else t)
    return scalar is not None and scalar.is_float


def launch_tangent(k: Kernel, dim, args: list, tangents: list, record: bool = True, lanes: int = 1,
                   compiled_from=None) -> None:
    """Runs the tangent kernel of ``k`` (adjit-tangent): one launch that does
    what a launch of ``k`` with ``args`` does and also stores, into the tangent
    arrays, the tangent of every float it stores. ``tangents``: one per float
    argument in order (``is_differentiable``), an adjit array of the same type
    and shape for an array, a value for a scalar, vector or matrix; the caller
    checks their shapes. With ``lanes`` > 1, ``tangents`` holds that many such
    lists one after another (seed directions, one launch for all). With
    ``record``, the launch is recorded on the active tapes as a launch of
    ``k``. ``compiled_from``: as for ``launch_adjoint`` (a replayed recorded launch)."""
    if any(v is None for v in args):
        args = _null_arrays(k, args)
    total, shape = _launch_shape(dim)
    if total > MAX_EXTENT:
        _check_linear_tid(k, dim, total)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    floats = [(n, t) for n, t in zip(k.arg_names, k.arg_types) if is_differentiable(t)]
    if len(tangents) != lanes * len(floats):
        raise LaunchError(f"kernel '{k.__name__}' has {len(floats)} float arguments, got {len(tangents)} tangents "
                          f"for {lanes} lane(s)")
    packed += [_check_buffer(k, n, tangent._buffer) if isinstance(t, T.ArrayType)
               else _pack_argument(k, n, t, tangent) for (n, t), tangent in zip(floats * lanes, tangents)]

    def written(launch: PackedLaunch) -> list:
        # The tangent arrays of each written float array are written too.
        written = loader.written_arguments(k)
        written_names = {k.arg_names[i] for i in written}
        return [args[i] for i in written] + [tangent for (n, _), tangent in zip(floats * lanes, tangents)
                                             if n in written_names and isinstance(tangent, Array)]

    _execute(PackedLaunch(k, dim, total, shape, packed, args, tangent=lanes), compiled_from,
             tapes=active_tapes() if record else (), written=written)


def launch_adjoint_tangent(k: Kernel, dim, args: list, grads: list, tangents: list, grad_tangents: list,
                           finals: list | None = None, compiled_from=None) -> None:
    """Runs the tangent kernel of the adjoint of ``k`` (forward over reverse):
    the adjoint of a launch with the primal values ``args`` and the gradient
    arrays ``grads`` (one per array parameter), and, beside it, the tangents of
    everything it computes along ``tangents`` (one per float parameter, as in
    ``launch_tangent``) and ``grad_tangents`` (one per float array parameter:
    the tangents of the gradient arrays, accumulated like the gradients).
    With the seed gradients' tangents zero, what accumulates into the input
    gradients' tangents is the Hessian-vector product. ``compiled_from``: as for
    ``launch_adjoint``."""
    if not k.enable_backward:
        raise GradientError(f"kernel '{k.__name__}' ({k.source.filename}:{k.source.first_line}) was declared "
                            "with enable_backward=False, so it has no adjoint and no Hessian")
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    array_params = [(n, t) for n, t in zip(k.arg_names, k.arg_types) if isinstance(t, T.ArrayType)]
    floats = [(n, t) for n, t in zip(k.arg_names, k.arg_types) if is_differentiable(t)]
    float_arrays = [(n, t) for n, t in array_params if is_differentiable(t)]
    if len(grads) != len(array_params) or len(tangents) != len(floats) or len(grad_tangents) != len(float_arrays):
        raise LaunchError(f"kernel '{k.__name__}': the adjoint's tangent kernel takes {len(array_params)} "
                          f"gradients, {len(floats)} tangents and {len(float_arrays)} gradient tangents")
    positions = _min_max_arrays(k, finals)
    packed += [_check_buffer(k, n, g._buffer) for (n, _), g in zip(array_params, grads)]
    packed += [_check_buffer(k, k.arg_names[i], f._buffer) for i, f in zip(positions, finals or ())]
    packed += [_check_buffer(k, n, tangent._buffer) if isinstance(t, T.ArrayType)
               else _pack_argument(k, n, t, tangent) for (n, t), tangent in zip(floats, tangents)]
    packed += [_check_buffer(k, n, g._buffer) for (n, _), g in zip(float_arrays, grad_tangents)]
    # (the final arrays' tangents: zero, a comparison has none)
    packed += [_check_buffer(k, k.arg_names[i], np.zeros_like(f._buffer)) for i, f in zip(positions, finals or ())]
    _execute(PackedLaunch(k, dim, total, shape, packed, list(args), adjoint=1, tangent=1), compiled_from)
    if positions:
        by_position = {}
        for (n, t), g in zip(array_params, grads):
            by_position.setdefault(k.arg_names.index(n), []).append(g)
        for (n, t), g in zip(float_arrays, grad_tangents):
            by_position.setdefault(k.arg_names.index(n), []).append(g)
        _keep_unchanged_elements(args, by_position, positions, finals)

