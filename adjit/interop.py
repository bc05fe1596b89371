"""Exchanging arrays with numpy, DLPack, PyTorch and JAX, without copies where
the memory can be shared.

``from_numpy``, ``from_dlpack`` and ``from_torch`` wrap the other side's
memory in an adjit array (zero-copy: writes through either view are seen by
the other); ``to_torch`` and ``to_jax`` wrap an adjit array's memory. Adjit
arrays also implement ``__array_interface__`` and ``__dlpack__``, so
``np.asarray(a)``, ``torch.from_dlpack(a)`` and ``np.from_dlpack(a)`` share
memory too.

The rules (see docs/interop.md):

- An adjit array's buffer is a C-contiguous, writable host array of its
  scalar type whose shape is the array shape followed by the element's
  component shape (a vec3 array of n elements: (n, 3) float32). Zero-copy
  needs exactly that: other memory is refused with a ValueError saying why
  (``from_numpy(..., copy=True)`` converts).
- CUDA memory travels through ``__cuda_array_interface__``: ``from_torch``
  of a CUDA tensor, ``from_dlpack`` of a CUDA object that has the interface
  and ``adjit.array(x)`` of one (a copy) on the adjit side;
  ``torch.as_tensor(a, device=a.device)``, ``cupy.asarray(a)`` and
  ``to_torch(a)`` on theirs (``from_cuda_array_interface`` for any other).
- Gradients as in Warp: ``from_torch(t)`` of a tensor that requires grad
  makes ``t.grad`` (zeros if it had none) the array's ``.grad``, sharing
  memory; ``to_torch(a)`` of an array with a gradient gives a tensor whose
  ``.grad`` is a view of ``a.grad``.
- JAX arrays are immutable, and adjit's runtime takes only writable buffers:
  ``from_jax`` copies. ``to_jax`` shares memory where JAX accepts it (a
  64-byte aligned buffer), else JAX copies; do not write into the adjit array
  while JAX uses the result.
- Writes made through another view bypass adjit: a tape does not see them.

torch and jax are optional: they are imported by the functions that need them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import types as T
from .runtime.array import _DL_CPU, Array, _component_shape

__all__ = ["from_cuda_array_interface", "from_dlpack", "from_jax", "from_numpy", "from_torch", "to_jax",
           "to_torch"]

#: DLPack device types (``DLDeviceType``), for messages.
_DL_DEVICES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
               9: "VPI", 10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}

_GPU_LATER = "adjit's CUDA arrays are shared through __cuda_array_interface__, which this object lacks"


def _import(module: str, who: str):
    """Imports an optional framework, or says how to install it."""
    try:
        if module == "torch":
            import torch
            return torch
        import jax
        import jax.dlpack  # noqa: F401
        return jax
    except ImportError as e:
        raise ImportError(f"{who} needs {module}, which is not installed: pip install {module}") from e


def _element_type(dtype, data_dtype, who: str) -> T.ValueType:
    if dtype is not None:
        return T.value_type_of(dtype)
    try:
        return T.scalar_type_of(data_dtype)
    except TypeError:
        raise ValueError(f"{who}: data of dtype {data_dtype} has no adjit element type (adjit arrays hold "
                         "float16/32/64, int8/16/32/64, uint8/16/32/64 or bool scalars, or vectors/matrices of them)") from None


def _wrap(data: np.ndarray, dtype, requires_grad: bool, who: str, copy: bool = False) -> Array:
    """``data`` as the buffer of an adjit array of ``dtype`` elements (the
    same memory unless ``copy``), or a ValueError saying why it cannot be."""
    t = _element_type(dtype, data.dtype, who)
    scalar = T.scalar_of(t)
    comp = _component_shape(t)
    if copy:
        data = np.array(data, dtype=scalar.np_dtype, order="C", copy=True)
    else:
        if data.dtype != scalar.np_dtype:
            raise ValueError(f"{who}: data of dtype {data.dtype} cannot be shared as an array of {t} "
                             f"({scalar.np_dtype} scalars); convert it first (or copy)")
        if not data.flags.c_contiguous:
            raise ValueError(f"{who}: data of shape {data.shape} with strides {data.strides} is not "
                             "C-contiguous, and adjit arrays are; make it contiguous first (a copy), "
                             "e.g. np.ascontiguousarray(x) or t.contiguous()")
        if not data.flags.writeable:
            raise ValueError(f"{who}: the data is read-only, and adjit's runtime takes only writable "
                             "buffers; copy it (from_numpy(x, copy=True))")
        canonical = _c_strides(data.shape, data.itemsize)
        if data.strides != canonical:  # C-contiguous up to the strides of extent-1 dimensions
            data = np.lib.stride_tricks.as_strided(data, data.shape, canonical, writeable=True)
    ndim = data.ndim - len(comp)
    if ndim < 0 or tuple(data.shape[ndim:]) != comp:
        raise ValueError(f"{who}: data of shape {data.shape} does not end in the component shape {comp} "
                         f"of {t}")
    if not 1 <= ndim <= 4:
        raise ValueError(f"{who}: adjit arrays have 1 to 4 dimensions; data of shape {data.shape} makes a "
                         f"{ndim}-d array of {t}")
    array = Array(data, t, requires_grad)
    # Without a copy the caller's object keeps the memory: adjit cannot see
    # its writes (a tape snapshots such arrays when it records them).
    array._shared = not copy
    return array


def from_cuda_array_interface(obj, dtype=None, requires_grad: bool = False, device=None) -> Array:
    """An adjit array over the CUDA memory of ``obj`` (CuPy arrays, PyTorch
    CUDA tensors, Numba device arrays: ``__cuda_array_interface__`` v2/v3),
    zero-copy; ``obj`` is kept alive by the array. ``device``: the CUDA
    device the memory is on (default: ``obj.device`` where it says, else the
    current CUDA device). Work queued by the producer on the stream the
    interface names is waited for first."""
    from .runtime import cuda_memory
    ordinal = cuda_memory.interface_ordinal(obj, device)
    memory = cuda_memory.from_interface(obj, ordinal)
    np_dtype, shape = memory.dtype, memory.shape
    t = _element_type(dtype, np_dtype, "from_cuda_array_interface")
    scalar, comp = T.scalar_of(t), _component_shape(t)
    if np_dtype != scalar.np_dtype:
        raise ValueError(f"from_cuda_array_interface: data of dtype {np_dtype} cannot be shared as an array of "
                         f"{t} ({scalar.np_dtype} scalars); convert it first")
    ndim = len(shape) - len(comp)
    if ndim < 1 or ndim > 4 or shape[ndim:] != comp:
        raise ValueError(f"from_cuda_array_interface: data of shape {shape} does not make a 1-4-d array of {t}")
    array = Array(memory, t, requires_grad, f"cuda:{ordinal}")
    array._shared = True  # (its producer can write it where adjit cannot see)
    return array


def _c_strides(shape, itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


# --- numpy and DLPack ------------------------------------------------------------


def from_numpy(a, dtype=None, shape=None, device=None, requires_grad: bool = False, *,
               copy: bool = False) -> Array:
    """An adjit array over the numpy array ``a`` (the same memory); Warp's
    parameters (``arr, dtype, shape, device, requires_grad``).

    ``dtype``: the element type (``adjit.vec3``: the last dimension of ``a``
    holds the 3 components); default: the scalar type of ``a.dtype``.
    ``shape``: the array's shape, a reshape of ``a`` with as many elements
    (a ValueError otherwise). ``device``: a CUDA device copies the data
    there (as Warp's); the CPU (the default) shares it. Without ``copy``,
    ``a`` must be C-contiguous, writable and of the element's scalar dtype
    (a ValueError otherwise); ``copy=True`` converts a copy of anything
    numpy can convert.
    """
    # (an ndarray is itself; another object exposing its memory, a view of it)
    data = np.asarray(a)
    if shape is not None:
        dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
        comp = _component_shape(_element_type(dtype, data.dtype, "from_numpy"))
        if int(np.prod(dims + comp)) != data.size:
            raise ValueError(f"from_numpy: data of shape {data.shape} ({data.size} scalars) cannot take the shape "
                             f"{dims}" + (f" of {comp}-component elements" if comp else ""))
        if not copy and not data.flags.c_contiguous:
            raise ValueError(f"from_numpy: data of shape {data.shape} is not C-contiguous, so it cannot be "
                             f"reshaped to {dims} without a copy (copy=True)")
        data = data.reshape(dims + comp)
    from .device import get_device
    target = get_device(device)
    if target.is_cuda:
        from .runtime.array import array as _array
        return _array(data, dtype=dtype, device=target, requires_grad=requires_grad)
    return _wrap(data, dtype, requires_grad, "from_numpy", copy=copy)


def from_dlpack(obj, dtype=None, requires_grad: bool = False) -> Array:
    """An adjit array over the memory of a DLPack-exporting object (a torch
    tensor, a numpy array, ...), zero-copy, through ``np.from_dlpack``.
    CPU memory only; the rules of ``from_numpy(copy=False)`` apply."""
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or not hasattr(obj, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(obj).__name__} does not implement the DLPack protocol "
                        "(__dlpack__ and __dlpack_device__)")
    kind, index = device()
    if int(kind) == 2 and hasattr(obj, "__cuda_array_interface__"):  # kDLCUDA
        return from_cuda_array_interface(obj, dtype, requires_grad, device=f"cuda:{int(index)}")
    if int(kind) != _DL_CPU:
        name = _DL_DEVICES.get(int(kind), f"device type {int(kind)}")
        raise ValueError(f"from_dlpack: the data lives on {name} (device {index}); {_GPU_LATER} "
                         "(copy it to the CPU first)")
    try:
        data = np.from_dlpack(obj)
    except BufferError as e:
        raise ValueError(f"from_dlpack: {type(obj).__name__} could not be shared: {e}") from e
    if not data.flags.writeable:
        raise ValueError(f"from_dlpack: {type(obj).__name__} exports read-only memory (JAX arrays are "
                         "immutable), and adjit's runtime takes only writable buffers; use "
                         "adjit.from_jax (a copy) or from_numpy(np.asarray(x), copy=True)")
    return _wrap(data, dtype, requires_grad, "from_dlpack")


# --- PyTorch -----------------------------------------------------------------------


def _check_cpu_tensor(torch, t, who: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{who} takes a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"{who}: the tensor is on '{t.device}'; adjit shares CPU and CUDA tensors only "
                         "(use t.cpu())")


def from_torch(t, dtype=None, requires_grad: bool | None = None) -> Array:
    """An adjit array over the memory of the CPU tensor ``t`` (zero-copy: it
    must be contiguous, of the element's scalar dtype).

    ``dtype=adjit.vec3`` makes an (n, 3) float32 tensor a vec3 array of n.
    ``requires_grad`` (default ``t.requires_grad``): the array's ``.grad`` is
    ``t.grad``, sharing memory (a zero tensor is set as ``t.grad`` if it had
    none), so adjit's adjoints accumulate into ``t.grad`` and torch's into
    the array's gradient.
    """
    torch = _import("torch", "from_torch")
    if isinstance(t, torch.Tensor) and t.device.type == "cuda":
        a = from_cuda_array_interface(t.detach(), dtype, False, device=f"cuda:{t.device.index or 0}")
        if requires_grad if requires_grad is not None else t.requires_grad:
            if t.grad is None:
                t.grad = torch.zeros_like(t, memory_format=torch.contiguous_format)
            a.grad = from_cuda_array_interface(t.grad.detach(), a.dtype, False, device=a.device)
            a.requires_grad = True
        return a
    _check_cpu_tensor(torch, t, "from_torch")
    a = _wrap(t.detach().numpy(), dtype, False, "from_torch")
    if requires_grad is None:
        requires_grad = t.requires_grad
    if requires_grad:
        if t.grad is None:
            t.grad = torch.zeros_like(t, memory_format=torch.contiguous_format)
        a.grad = _wrap(t.grad.detach().numpy(), a.dtype, False, "from_torch (the tensor's .grad)")
        a.requires_grad = True
    return a


def to_torch(a: Array, requires_grad: bool | None = None):
    """A CPU tensor over the memory of the adjit array ``a`` (zero-copy; shape
    ``a.shape`` plus the element's component shape).

    ``requires_grad`` (default ``a.requires_grad``): the tensor requires grad
    and its ``.grad`` is a view of ``a.grad`` (a zero gradient is given to
    ``a`` if it had none), so torch accumulates into the array's gradient.
    """
    torch = _import("torch", "to_torch")
    if not isinstance(a, Array):
        raise TypeError(f"to_torch takes an adjit array, got {type(a).__name__}")
    if a.device != "cpu":  # the same device memory, through __cuda_array_interface__
        t = torch.as_tensor(a, device=a.device)
        if requires_grad if requires_grad is not None else a.requires_grad:
            if a.grad is None:
                a.requires_grad = True
            t.requires_grad_(True)
            t.grad = torch.as_tensor(a.grad, device=a.device)
        return t
    t = torch.from_numpy(a.numpy())
    if requires_grad is None:
        requires_grad = a.requires_grad
    if requires_grad:
        if a.grad is None:
            a.grad = Array(np.zeros_like(a.numpy()), a.dtype, False, a.device, _owned=True)
            a.requires_grad = True
        t.requires_grad_(True)
        t.grad = torch.from_numpy(a.grad.numpy())
    return t


# --- JAX ---------------------------------------------------------------------------


def _jax_x64(jax) -> bool:
    return bool(jax.config.jax_enable_x64)


def to_jax(a: Array):
    """A JAX array of the values of ``a``: zero-copy through DLPack where JAX
    accepts the memory (CPU, 64-byte aligned), else a copy JAX makes. Do not
    write into ``a`` while JAX uses the result (JAX arrays are immutable).
    64-bit arrays need ``jax.config.update("jax_enable_x64", True)``."""
    jax = _import("jax", "to_jax")
    if not isinstance(a, Array):
        raise TypeError(f"to_jax takes an adjit array, got {type(a).__name__}")
    if T.scalar_of(a.dtype).bits == 64 and not _jax_x64(jax):
        raise TypeError(f"to_jax: an array of {a.dtype} needs JAX's 64-bit mode (without it JAX would make "
                        "it 32-bit): jax.config.update(\"jax_enable_x64\", True)")
    return jax.dlpack.from_dlpack(a)


def from_jax(x, dtype=None, requires_grad: bool = False) -> Array:
    """An adjit array holding a copy of the JAX array ``x`` (from any device).

    JAX arrays are immutable and their host memory is read-only, while
    adjit's runtime takes only writable buffers, so this copies: writes to
    the result are not seen by ``x``. (For the other direction, ``to_jax``
    shares memory.) Use ``adjit.jax.op`` to put a kernel inside JAX code.
    """
    _import("jax", "from_jax")
    return _wrap(np.asarray(x), dtype, requires_grad, "from_jax", copy=True)


# --- kernels as framework ops (shared by adjit.torch and adjit.jax) ----------------


class _OpSpec:
    """A kernel launch seen as a function from arrays to new arrays, for
    ``adjit.torch.op`` and ``adjit.jax.op``.

    ``outputs``: names of the kernel's array parameters the op allocates
    (zeroed) and returns. ``inputs``: names of the other parameters, in the
    order the op takes them (default: the kernel's order). Output shapes:
    ``shapes[name]`` (a shape, or a callable of the op's arguments returning
    one), else the shape of the array input ``like`` names (a name, or a
    dict output -> input name; default: the first array input). ``dim``: an
    int or tuple, the name of an array input (its shape), a callable of the
    op's arguments, or None (the shape of the first output).
    """

    def __init__(self, kernel, dim, inputs, outputs, like, shapes, who: str):
        if not hasattr(kernel, "arg_names") or not hasattr(kernel, "arg_types"):
            raise TypeError(f"{who} takes an @adjit.kernel, got {kernel!r}")
        self.kernel, self.who = kernel, who
        names = list(kernel.arg_names)
        self.types = dict(zip(names, kernel.arg_types))
        kname = kernel.__name__
        if isinstance(outputs, str):
            outputs = (outputs,)
        self.outputs = tuple(outputs or ())
        if not self.outputs:
            raise ValueError(f"{who}: name the array parameters of kernel '{kname}' the op returns "
                             f"(outputs=...); its parameters: {', '.join(names)}")
        for name in self.outputs:
            self._check_name(name, "outputs")
            if not self.is_array(name):
                raise ValueError(f"{who}: output '{name}' of kernel '{kname}' is not an array parameter")
        if len(set(self.outputs)) != len(self.outputs):
            raise ValueError(f"{who}: outputs {self.outputs} name a parameter twice")
        rest = [n for n in names if n not in self.outputs]
        if inputs is None:
            inputs = rest
        elif isinstance(inputs, str):
            inputs = (inputs,)
        self.inputs = tuple(inputs)
        for name in self.inputs:
            self._check_name(name, "inputs")
        if sorted(self.inputs) != sorted(rest):
            raise ValueError(f"{who}: inputs {self.inputs} must name each parameter of kernel '{kname}' "
                             f"that is not an output once: {', '.join(rest)}")
        self.array_inputs = tuple(n for n in self.inputs if self.is_array(n))
        shapes = dict(shapes or {})
        for name in shapes:
            if name not in self.outputs:
                raise ValueError(f"{who}: shapes names '{name}', which is not an output {self.outputs}")
        if isinstance(like, str) or like is None:
            like = {name: like for name in self.outputs}
        like = dict(like)
        self.shape_of: dict[str, object] = {}
        for name in self.outputs:
            if name in shapes:
                self.shape_of[name] = shapes[name]
                continue
            source = like.get(name) or (self.array_inputs[0] if self.array_inputs else None)
            if source is None:
                raise ValueError(f"{who}: kernel '{kname}' has no array input to take the shape of output "
                                 f"'{name}' from: give shapes={{'{name}': ...}}")
            if source not in self.array_inputs:
                raise ValueError(f"{who}: like names '{source}', which is not an array input "
                                 f"{self.array_inputs}")
            self.shape_of[name] = source
        if isinstance(dim, str) and dim not in self.array_inputs:
            raise ValueError(f"{who}: dim names '{dim}', which is not an array input {self.array_inputs}")
        self.dim = dim
        self._access_checked = False

    def _check_name(self, name, what: str) -> None:
        if name not in self.types:
            raise ValueError(f"{self.who}: {what} names '{name}', which is not a parameter of kernel "
                             f"'{self.kernel.__name__}' ({', '.join(self.types)})")

    # --- parameter types --------------------------------------------------

    def is_array(self, name: str) -> bool:
        return isinstance(self.types[name], T.ArrayType)

    def element(self, name: str) -> T.ValueType:
        """The element type of an array parameter, or the type of a value."""
        t = self.types[name]
        return t.dtype if isinstance(t, T.ArrayType) else t

    def np_dtype(self, name: str) -> np.dtype:
        return T.scalar_of(self.element(name)).np_dtype

    def differentiable(self, name: str) -> bool:
        return T.scalar_of(self.element(name)).is_float

    def component_shape(self, name: str) -> tuple[int, ...]:
        return _component_shape(self.element(name))

    # --- a call -----------------------------------------------------------

    def bind(self, args: Sequence, kwargs: dict) -> list:
        """The op's arguments (positional and by name) in ``inputs`` order."""
        if len(args) > len(self.inputs):
            raise TypeError(f"{self.who}({self.kernel.__name__}) takes {len(self.inputs)} arguments "
                            f"({', '.join(self.inputs)}), got {len(args)}")
        values = dict(zip(self.inputs, args))
        for name, value in kwargs.items():
            if name not in self.inputs:
                raise TypeError(f"{self.who}({self.kernel.__name__}) has no argument '{name}' "
                                f"(its arguments: {', '.join(self.inputs)})")
            if name in values:
                raise TypeError(f"{self.who}({self.kernel.__name__}) got argument '{name}' twice")
            values[name] = value
        missing = [n for n in self.inputs if n not in values]
        if missing:
            raise TypeError(f"{self.who}({self.kernel.__name__}) is missing argument(s) {', '.join(missing)}")
        return [values[n] for n in self.inputs]

    def array_shape(self, name: str, data_shape) -> tuple[int, ...]:
        """The array shape of framework data of shape ``data_shape`` passed
        to array input ``name`` (its trailing dims are the components)."""
        comp = self.component_shape(name)
        ndim = self.types[name].ndim
        data_shape = tuple(int(s) for s in data_shape)
        if len(data_shape) != ndim + len(comp) or data_shape[ndim:] != comp:
            what = f"{ndim}-d array of {self.element(name)}"
            expected = f"{ndim} dimensions" + (f" followed by the component shape {comp}" if comp else "")
            raise ValueError(f"{self.who}({self.kernel.__name__}): argument '{name}' is a {what}: its data "
                             f"needs {expected}, got shape {data_shape}")
        return data_shape[:ndim]

    def output_shapes(self, values: list) -> dict[str, tuple[int, ...]]:
        """Array shapes of the outputs, for the op's arguments ``values``."""
        named = dict(zip(self.inputs, values))
        shapes = {}
        for name in self.outputs:
            spec = self.shape_of[name]
            if isinstance(spec, str):
                shape = self.array_shape(spec, named[spec].shape)
            else:
                shape = spec(*values) if callable(spec) else spec
                shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
            if len(shape) != self.types[name].ndim:
                raise ValueError(f"{self.who}({self.kernel.__name__}): output '{name}' is a "
                                 f"{self.types[name].ndim}-d array, but its shape would be {shape}")
            shapes[name] = shape
        return shapes

    def launch_dim(self, values: list, out_shapes: dict):
        dim = self.dim
        if dim is None:
            return out_shapes[self.outputs[0]]
        if isinstance(dim, str):
            return self.array_shape(dim, dict(zip(self.inputs, values))[dim].shape)
        if callable(dim):
            return dim(*values)
        return dim

    def buffer_shape(self, name: str, shape) -> tuple[int, ...]:
        return tuple(shape) + self.component_shape(name)

    def kernel_args(self, named: dict) -> list:
        """Arguments in the kernel's parameter order."""
        return [named[n] for n in self.types]

    def check_access(self, access: Callable[[object], list]) -> None:
        """Refuses kernels that write an input (the framework's data must
        not change under it): ``access(kernel)`` is the kernel's array access
        analysis (``adjit.loader.argument_access``)."""
        if self._access_checked:
            return
        flags = dict(zip(self.types, access(self.kernel)))
        written = [n for n in self.array_inputs if flags[n].writes]
        if written:
            raise ValueError(f"{self.who}: kernel '{self.kernel.__name__}' writes its parameter(s) "
                             f"{', '.join(repr(n) for n in written)}, which the op takes as input(s); "
                             "framework arrays must not change in place: make them outputs (the op "
                             "returns new arrays)")
        self._access_checked = True


# --- Warp's dtype and device converters -------------------------------------------------

#: adjit scalar types by torch dtype name (torch.float32 -> "float32").
_TORCH_SCALARS = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                  "int64", "uint64", "bool")


def dtype_from_torch(torch_dtype) -> T.ScalarType:
    """The adjit scalar type of a torch dtype (``torch.float32`` -> float32)."""
    torch = _import("torch", "dtype_from_torch")
    if not isinstance(torch_dtype, torch.dtype):
        raise TypeError(f"dtype_from_torch takes a torch.dtype, got {torch_dtype!r}")
    name = str(torch_dtype).removeprefix("torch.")
    if name not in _TORCH_SCALARS:
        raise TypeError(f"dtype_from_torch: adjit has no type for {torch_dtype}")
    return T.scalar_type_of(name)


def dtype_to_torch(dtype):
    """The torch dtype of an adjit type's scalars (a vector's or matrix's
    scalar type: torch holds them as trailing dimensions)."""
    torch = _import("torch", "dtype_to_torch")
    scalar = T.scalar_of(T.value_type_of(dtype))
    if scalar is None or not hasattr(torch, scalar.name):
        raise TypeError(f"dtype_to_torch: torch has no dtype for {dtype}")
    return getattr(torch, scalar.name)


def dtype_from_jax(jax_dtype) -> T.ScalarType:
    """The adjit scalar type of a JAX dtype (``jnp.float32`` or a numpy dtype)."""
    try:
        return T.scalar_type_of(np.dtype(jax_dtype))
    except TypeError:
        raise TypeError(f"dtype_from_jax: adjit has no type for {jax_dtype!r}") from None


def dtype_to_jax(dtype):
    """The JAX dtype of an adjit type's scalars."""
    jax = _import("jax", "dtype_to_jax")
    scalar = T.scalar_of(T.value_type_of(dtype))
    if scalar is None:
        raise TypeError(f"dtype_to_jax: JAX has no dtype for {dtype}")
    return jax.numpy.dtype(scalar.name if scalar.name != "bool" else "bool_")


def device_from_torch(torch_device):
    """The adjit device of a torch device ("cpu", "cuda:N")."""
    from .device import get_device
    return get_device(str(torch_device))


def device_to_torch(device=None) -> str:
    """The torch device string of an adjit device (default: the current one)."""
    from .device import get_device
    return str(get_device(device))


def device_from_jax(jax_device):
    """The adjit device of a JAX device (its platform: "cpu")."""
    from .device import get_device
    platform = getattr(jax_device, "platform", None)
    if platform is None:
        raise TypeError(f"device_from_jax takes a JAX device, got {jax_device!r}")
    return get_device("cpu" if platform == "cpu" else f"cuda:{getattr(jax_device, 'id', 0)}")


def device_to_jax(device=None):
    """The JAX device of an adjit device (the CPU device)."""
    jax = _import("jax", "device_to_jax")
    from .device import get_device
    d = get_device(device)
    if str(d) == "cpu":
        return jax.devices("cpu")[0]
    gpus = [g for g in jax.devices() if g.platform == "gpu"]
    if d.ordinal >= len(gpus):
        raise ValueError(f"device_to_jax: {d}: JAX has no such GPU (it has {len(gpus)})")
    return gpus[d.ordinal]


def to_dlpack(a: Array):
    """A DLPack capsule of ``a``'s memory (zero-copy; Warp's ``wp.to_dlpack``)."""
    if not isinstance(a, Array):
        raise TypeError(f"to_dlpack takes an adjit array, got {type(a).__name__}")
    return a.__dlpack__()
