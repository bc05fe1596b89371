"""The kernel author's API: @kernel, @func, tid(), launch() and compile()."""
from __future__ import annotations

import math
import re
import struct

import numpy as np
from mlir import ir

from . import _adjit
from . import types as T
from .compiler import cache
from .compiler import stages as S
from .compiler.frontend import ModuleBuilder, SourceInfo, parameter_types
from .errors import KernelTypeError, LaunchError
from .runtime.array import Array
from .runtime.tape import active_tape, grad_or_scratch


#: LLVM optimization level of CPU kernels.
CPU_OPT_LEVEL = 3


def tid():
    """The calling thread's index; ``i, j = tid()`` in a 2-D launch. Kernels only."""
    raise RuntimeError("adjit.tid() can only be called inside an @adjit.kernel")


def constant(x):
    """Returns ``x``: marks a module-level value used by kernels (as in Warp).

    Kernels read numbers, numpy scalars (``adjit.float32(2)``) and vector,
    matrix and quaternion values (``adjit.vec3(...)``) from module globals
    whether or not they are wrapped; the value is compiled in (and part of the
    compile cache key).
    """
    return x


class Function:
    """A device function (``@adjit.func``): callable from kernels and other funcs.

    ``differentiable=False`` makes its results carry no gradient; a
    hand-written adjoint can be attached with ``@adjit.func_grad(f)``.
    """

    def __init__(self, pyfunc, differentiable: bool = True):
        self.pyfunc = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.differentiable = differentiable
        self.custom_grad = None

    def __call__(self, *args):
        raise RuntimeError(f"@adjit.func '{self.__name__}' can only be called inside kernels")


class CompiledCpuKernel:
    """A kernel compiled for the CPU: its object code and entry address.

    The code stays linked into the process-wide JIT for the process lifetime.
    """

    def __init__(self, entry: int, from_cache: bool):
        self.entry = entry
        self.from_cache = from_cache


class Kernel:
    """A kernel (``@adjit.kernel``): launched over a 1-4-D grid of threads."""

    def __init__(self, pyfunc, no_grad=()):
        self.pyfunc = pyfunc
        #: Parameters whose values carry no gradient (reads are constants).
        self.no_grad = tuple(no_grad)
        self.key = pyfunc.__qualname__
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self._source = SourceInfo.of(pyfunc)
        # (adjoint, noalias) -> compiled variant
        self._compiled: dict[tuple[bool, bool], CompiledCpuKernel] = {}
        self._arg_access: list[str] | None = None
        self._array_args: int | None = None
        self.arg_names = [a.arg for a in self._source.tree.args.args]
        self._arg_types: list | None = None

    @property
    def mlir_name(self) -> str:
        return re.sub(r"\W", "_", self.pyfunc.__name__)

    @property
    def arg_types(self) -> list:
        if self._arg_types is None:
            types = parameter_types(self.pyfunc, self._source, "kernel")
            for name, t, node in zip(self.arg_names, types, self._source.tree.args.args):
                if t is None:
                    raise KernelTypeError(f"kernel parameter '{name}' needs a type annotation",
                                          self._source.filename, self._source.line_of(node),
                                          self._source.col_of(node), self._source.source_line(node),
                                          self._source.qualname)
            self._arg_types = types
        return self._arg_types

    def build_module(self, context: ir.Context) -> ir.Module:
        """The kernel (and the device functions it calls) in the adjit dialect."""
        mb = ModuleBuilder(context)
        mb.add_kernel(self.pyfunc, self.arg_types, self.mlir_name, self.no_grad)
        return mb.module

    @property
    def arg_access(self) -> list[str]:
        """How the kernel accesses each argument, from the compiler's array
        access analysis: "read", "write", "read-write" or "none" (", own
        element" when each thread touches only its own element), "" for
        non-arrays. Known once the kernel is compiled (or loaded from cache)."""
        if self._arg_access is None:
            self.compile_cpu()
        return self._arg_access

    @property
    def array_args(self) -> int:
        """How many of the kernel's parameters are arrays."""
        if self._array_args is None:
            self._array_args = sum(isinstance(t, T.ArrayType) for t in self.arg_types)
        return self._array_args

    def _record_arg_access(self, stage: str, module: ir.Module) -> None:
        if stage == "optimized":
            fn = next(op for op in module.body.operations if "adjit.kernel" in op.attributes)
            self._arg_access = [ir.StringAttr(a).value for a in fn.attributes["adjit.arg_access"]]

    def compile_cpu(self, adjoint: bool = False, noalias: bool = True) -> CompiledCpuKernel:
        """Compiles the kernel (or its adjoint) for the CPU once per process,
        through the disk cache. ``noalias``: the variant for launches whose
        array arguments do not overlap (faster; the launch checks)."""
        compiled = self._compiled.get((adjoint, noalias))
        if compiled is None:
            options = {"target": "cpu", "opt_level": CPU_OPT_LEVEL, "adjoint": adjoint,
                       "noalias": noalias, "no_grad": list(self.no_grad)}
            parts = cache.key_parts(self.pyfunc, self.arg_types, options)
            entry = cache.load(self.pyfunc, parts)
            from_cache = entry is not None
            if entry is not None:
                obj, metadata = entry
                if not adjoint:
                    self._arg_access = metadata["arg_access"]
            else:
                context = ir.Context()
                module = self.build_module(context)
                S.run_stages(module, S.cpu_stages(adjoint, noalias), self.mlir_name,
                             after_stage=None if adjoint else self._record_arg_access)
                obj = _adjit.compile_to_object(module.operation, CPU_OPT_LEVEL)
                cache.store(self.pyfunc, parts, obj,
                            {} if adjoint else {"arg_access": self._arg_access})
            name = f"{self.mlir_name}_adjoint" if adjoint else self.mlir_name
            (entry,) = _adjit.load_object(obj, [f"{name}_cpu_entry"])
            compiled = CompiledCpuKernel(entry, from_cache)
            self._compiled[(adjoint, noalias)] = compiled
        return compiled

    def __call__(self, *args):
        raise RuntimeError(f"kernel '{self.__name__}' must be launched with adjit.launch()")


def kernel(fn=None, *, no_grad=(), **options):
    """Decorator: a Python function written in the kernel language becomes a Kernel.

    ``no_grad=("x",)``: reads of parameter ``x`` carry no gradient. Other
    options (Warp's ``module=``, ``enable_backward=``) are accepted and ignored.
    """
    if fn is None:
        return lambda f: Kernel(f, no_grad)
    return Kernel(fn, no_grad)


def func(fn=None, *, differentiable: bool = True):
    """Decorator: a device function callable from kernels.

    ``@adjit.func(differentiable=False)``: no gradient flows through its
    results (as if they were constants).
    """
    if fn is None:
        return lambda f: Function(f, differentiable)
    return Function(fn, differentiable)


def func_grad(f: Function):
    """Decorator: a hand-written adjoint for device function ``f`` (as Warp's).

    The adjoint takes f's parameters followed by one adjoint per result of
    ``f`` and accumulates into ``adjit.adjoint[param]``::

        @adjit.func_grad(my_func)
        def adj_my_func(x: float, y: float, adj_ret: float):
            adjit.adjoint[x] += adj_ret * y
            adjit.adjoint[y] += adj_ret * x
    """
    if not isinstance(f, Function):
        raise TypeError("func_grad(f) needs an @adjit.func")

    def attach(grad_fn):
        f.custom_grad = grad_fn
        return grad_fn
    return attach


class _Adjoints:
    """``adjit.adjoint[x]`` inside an ``@adjit.func_grad``."""

    def __getitem__(self, item):
        raise RuntimeError("adjit.adjoint[...] can only be used inside an @adjit.func_grad")


adjoint = _Adjoints()


def compile(k: Kernel, target: str = "cpu", arch: str = "sm_80", adjoint: bool = False) -> str:
    """Compiles a kernel (or, with ``adjoint=True``, its adjoint) and returns
    its final IR as text.

    ``target="cuda"`` returns the PTX for ``arch``; ``target="cpu"`` returns
    the LLVM dialect module that is JIT-compiled for this machine.
    """
    context = ir.Context()
    module = k.build_module(context)
    if target == "cuda":
        S.run_stages(module, S.cuda_stages(arch, adjoint), k.mlir_name)
        return _ptx_of(module)
    if target == "cpu":
        S.run_stages(module, S.cpu_stages(adjoint), k.mlir_name)
        return str(module)
    raise ValueError(f"unknown target '{target}' (expected 'cpu' or 'cuda')")


def _ptx_of(module: ir.Module) -> str:
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            objects = op.attributes["objects"]
            text = str(objects[0])
            m = re.search(r'assembly = "(.*)"', text, re.S)
            if m is None:
                break
            return _unescape_mlir_string(m.group(1))
    raise RuntimeError("the CUDA pipeline produced no PTX")


def _unescape_mlir_string(s: str) -> str:
    # MLIR escapes non-printable bytes as \XX (two hex digits) and \" \\.
    return re.sub(r"\\([0-9A-Fa-f]{2}|\\|\")",
                  lambda m: m.group(1) if m.group(1) in ('\\', '"') else chr(int(m.group(1), 16)), s)


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
    src = k._source
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
    scalar = t if isinstance(t, T.ScalarType) else t.dtype
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
    overlap = k.array_args > 1 and _adjit.arrays_overlap(packed)
    compiled = k.compile_cpu(noalias=not overlap)
    tape = active_tape()
    if tape is not None:
        tape.record_launch(k, dim, args)  # also bumps the written arrays' versions
    else:
        for a, access in zip(args, k._arg_access):
            if "write" in access:
                a._version += 1
    _adjit.launch_cpu(compiled.entry, total, shape, packed)


def launch_adjoint(k: Kernel, dim, args: list, grads_of: list | None = None) -> None:
    """Runs the adjoint of a launch of ``k`` with the primal values ``args``;
    its gradient arrays are the ``.grad`` of the arrays in ``grads_of``
    (default ``args``; a scratch array where there is none)."""
    total, shape = _launch_shape(dim)
    packed = [_pack_argument(k, n, t, v) for n, t, v in zip(k.arg_names, k.arg_types, args)]
    grads = [grad_or_scratch(a) for a, t in zip(grads_of or args, k.arg_types)
             if isinstance(t, T.ArrayType)]
    all_args = packed + [g.numpy() for g in grads]
    compiled = k.compile_cpu(adjoint=True, noalias=not _adjit.arrays_overlap(all_args))
    _adjit.launch_cpu(compiled.entry, total, shape, all_args)


def synchronize() -> None:
    """Waits for outstanding work (CPU launches are synchronous)."""
