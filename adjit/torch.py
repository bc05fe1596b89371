"""adjit kernels as PyTorch ops: ``adjit.torch.op``.

    import adjit.torch

    @adjit.kernel
    def scale(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = a * x[i] * x[i]

    f = adjit.torch.op(scale, outputs="y")        # y: shaped like x, dim: y's shape
    y = f(2.0, x)                                  # x: a float32 CPU tensor
    y.sum().backward()                             # x.grad from adjit's adjoint

The op is a ``torch.autograd.Function``: its forward launches the kernel
(recorded on an ``adjit.Tape`` when a gradient is needed), its backward seeds
the outputs' gradients and runs the tape's adjoint. This module needs
PyTorch; ``import adjit`` does not import it.

CPU tensors run the kernel on adjit's CPU, CUDA tensors on their GPU: the
arrays are zero-copy views of the tensors, the outputs and gradients are
tensors torch allocates on that device, and the launches (forward, adjoint,
adjit's copies) are queued on PyTorch's current stream of the device
(``torch.cuda.current_stream``, wrapped as an ``adjit.Stream``), so they are
ordered with torch's own work and nothing goes through the host.
"""
from __future__ import annotations

import contextlib

import torch  # the real PyTorch: imports are absolute (this module is adjit.torch)
from torch.autograd.function import once_differentiable

from . import loader
from .interop import _OpSpec, dtype_to_torch, from_torch
from .device import get_device
from .launch import launch
from .runtime.array import Array
from .runtime.cuda import ScopedStream, Stream
from .runtime.tape import Tape

__all__ = ["TorchOp", "adjit_stream", "op"]


def op(kernel, dim=None, *, outputs, inputs=None, like=None, shapes=None) -> TorchOp:
    """A PyTorch function that launches ``kernel``, differentiable by adjit's adjoint.

    - ``outputs``: the names of the kernel's array parameters the op returns
      (new tensors, zeroed before the launch; one name returns a tensor,
      several a tuple).
    - ``inputs``: the names of the other parameters, in the order the op
      takes them (default: the kernel's order); the op also takes them by
      name. Array parameters take tensors of the element's scalar dtype
      (a vec3 array of n: an (n, 3) tensor), all on one device: the CPU or
      one CUDA device, where the kernel then runs (outputs and gradients are
      made there); non-contiguous tensors are copied. Scalar, vector and
      matrix parameters take Python numbers (or tensors that do not require
      grad, read back to the host): adjit gives them no gradient, so a
      tensor that requires grad is refused (pass it as a 1-element array).
    - output shapes: ``shapes={"y": (n,)}`` (or a callable of the op's
      arguments returning the shape), else the shape of the array input
      ``like`` names (one name, or a dict output -> input), by default the
      first array input.
    - ``dim``: the launch grid: an int or tuple, an array input's name (its
      shape), a callable of the op's arguments, or None (the first output's
      shape).

    Kernels that write an input are refused (the op would modify a tensor
    autograd saved): make such parameters outputs. Double backward is not
    supported. On a GPU the launches are asynchronous, on PyTorch's current
    stream: a failed bounds check is raised at adjit's next synchronize
    (``adjit.synchronize()``), not by the op.
    """
    return TorchOp(_OpSpec(kernel, dim, inputs, outputs, like, shapes, "adjit.torch.op"))


class TorchOp:
    """A kernel launch as a differentiable PyTorch function (see ``op``)."""

    def __init__(self, spec: _OpSpec):
        self.spec = spec
        self.kernel = spec.kernel
        self.__name__ = spec.kernel.__name__
        self.__doc__ = spec.kernel.__doc__

    def __call__(self, *args, **kwargs):
        return _apply(self.spec, args, kwargs)

    def __repr__(self) -> str:
        return (f"adjit.torch.op({self.kernel.__name__}, inputs={self.spec.inputs}, "
                f"outputs={self.spec.outputs})")


def _apply(spec: _OpSpec, args, kwargs):
    values = spec.bind(args, kwargs)
    return _KernelFunction.apply(spec, *values)


# torch.compile: the op is a graph break, run eagerly between the compiled
# parts (dynamo would otherwise trace into the forward, which calls adjit's
# runtime and reads torch's stream handle, neither of which it can trace).
_disable = getattr(getattr(torch, "compiler", None), "disable", None)
if _disable is not None:
    _apply = _disable(_apply)


def _device_of(spec: _OpSpec, values) -> torch.device:
    """The device of the op's array arguments (the CPU if none is a
    tensor). A ValueError for arguments on several devices, or on a device
    adjit does not run on."""
    who = f"adjit.torch.op({spec.kernel.__name__})"
    placed = [(name, value.device) for name, value in zip(spec.inputs, values)
              if spec.is_array(name) and isinstance(value, torch.Tensor)]
    devices = {device for _, device in placed}
    if len(devices) > 1:
        where = ", ".join(f"'{name}' on {device}" for name, device in placed)
        raise ValueError(f"{who}: the array arguments are on different devices ({where}); an op runs on one "
                         "device: move them to one first (t.to(device))")
    if not placed:
        return torch.device("cpu")
    name, device = placed[0]
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"{who}: argument '{name}' is on '{device}'; adjit.torch.op runs on CPU and CUDA "
                         "tensors: pass t.cpu() (or t.cuda())")
    return device


#: adjit Streams over PyTorch's streams, by (device ordinal, CUstream).
_streams: dict[tuple[int, int], Stream] = {}


def adjit_stream(handle: int, ordinal: int) -> Stream:
    """The CUDA stream ``handle`` (a CUstream, 0 for the legacy default
    stream) of device ``ordinal`` as an ``adjit.Stream``: the same stream,
    not created or destroyed by adjit (one wrapper per handle)."""
    key = (int(ordinal), int(handle))
    stream = _streams.get(key)
    if stream is None:
        stream = _streams.setdefault(key, Stream(f"cuda:{key[0]}", cuda_stream=key[1]))
    return stream


def _on(device: torch.device):
    """The scope an op's adjit work runs in: on a CUDA device, PyTorch's
    current stream there is adjit's current stream (and the device adjit's
    default), after the work adjit queued on its previous stream."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    handle = torch.cuda.current_stream(device).cuda_stream
    return ScopedStream(adjit_stream(handle, device.index))


def _array_input(spec: _OpSpec, name: str, value) -> Array:
    who = f"adjit.torch.op({spec.kernel.__name__})"
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{who}: argument '{name}' is an array of {spec.element(name)}: pass a torch.Tensor, "
                        f"got {type(value).__name__}")
    expected = spec.np_dtype(name)
    if torch.empty((), dtype=value.dtype).numpy().dtype != expected:
        raise TypeError(f"{who}: argument '{name}' must hold {expected} (an array of {spec.element(name)}), "
                        f"got a {value.dtype} tensor; convert it (e.g. .to(torch.{expected}))")
    spec.array_shape(name, value.shape)
    data = value.detach()
    if not data.is_contiguous():
        data = data.contiguous()  # a copy (on the tensor's device): the kernel reads it
    return from_torch(data, dtype=spec.element(name), requires_grad=False)


def _new_array(spec: _OpSpec, name: str, shape, device: torch.device, like=None):
    """A zeroed tensor for array parameter ``name`` on ``device`` (torch's
    memory: on a GPU, from torch's allocator on its current stream), and the
    adjit array over it. ``like``: a tensor whose values it copies instead
    (contiguous, of the parameter's dtype)."""
    if like is None:
        tensor = torch.zeros(spec.buffer_shape(name, shape), dtype=dtype_to_torch(spec.element(name)),
                             device=device)
    else:
        tensor = like.detach().to(dtype_to_torch(spec.element(name))).clone(memory_format=torch.contiguous_format)
    return tensor, from_torch(tensor, dtype=spec.element(name), requires_grad=False)


def _value_input(spec: _OpSpec, name: str, value):
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            raise ValueError(f"adjit.torch.op({spec.kernel.__name__}): argument '{name}' is a value of "
                             f"{spec.element(name)}, and adjit gives kernel values no gradient; to "
                             "differentiate it, make the parameter a 1-element array")
        value = value.detach().cpu().numpy()  # (a CUDA tensor: its value is read back to the host)
        if value.ndim == 0:
            value = value.item()
    return value


class _KernelFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, spec: _OpSpec, *values):
        device = _device_of(spec, values)
        where = get_device(str(device)) if device.type == "cuda" else None
        spec.check_access(lambda kernel: loader.argument_access(kernel, where))
        with _on(device):
            named = {}
            arrays: dict[str, Array] = {}
            for name, value in zip(spec.inputs, values):
                if spec.is_array(name):
                    named[name] = arrays[name] = _array_input(spec, name, value)
                else:
                    named[name] = _value_input(spec, name, value)
            out_shapes = spec.output_shapes(list(values))
            results, outs = [], {}
            for name in spec.outputs:
                tensor, outs[name] = _new_array(spec, name, out_shapes[name], device)
                results.append(tensor)
            named.update(outs)
            dim = spec.launch_dim(list(values), out_shapes)
            # needs_input_grad[0] is the spec's.
            wants = {name for name, needs in zip(spec.inputs, ctx.needs_input_grad[1:])
                     if needs and spec.is_array(name) and spec.differentiable(name)}
            ctx.spec, ctx.wants, ctx.device = spec, wants, device
            if wants:
                with Tape() as tape:
                    launch(spec.kernel, dim, inputs=spec.kernel_args(named))
                ctx.tape, ctx.arrays, ctx.outs = tape, arrays, outs
                # torch checks at backward that no input was modified in place since.
                ctx.save_for_backward(*(v for v in values if isinstance(v, torch.Tensor)))
            else:
                launch(spec.kernel, dim, inputs=spec.kernel_args(named))
        ctx.mark_non_differentiable(*(r for name, r in zip(spec.outputs, results)
                                      if not spec.differentiable(name)))
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    @once_differentiable
    def backward(ctx, *grad_outputs):
        spec = ctx.spec
        if not ctx.wants:
            return (None,) * (1 + len(spec.inputs))
        ctx.saved_tensors  # noqa: B018 (raises if an input was modified in place)
        with _on(ctx.device):
            for name, g in zip(spec.outputs, grad_outputs):
                out = ctx.outs[name]
                # The seed is a copy: the adjoint consumes (zeroes) the output's gradient.
                seed = g if g is not None and spec.differentiable(name) else None
                out.grad = _new_array(spec, name, out.shape, ctx.device, like=seed)[1]
            # Fresh gradient tensors for every backward (the tape accumulates):
            # they are returned to torch.
            grads = {}
            for name in ctx.wants:
                a = ctx.arrays[name]
                grads[name], a.grad = _new_array(spec, name, a.shape, ctx.device)
            ctx.tape.backward()
        return (None, *(grads.get(name) for name in spec.inputs))
