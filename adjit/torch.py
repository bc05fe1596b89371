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
"""
from __future__ import annotations

import torch  # the real PyTorch: imports are absolute (this module is adjit.torch)
from torch.autograd.function import once_differentiable

from . import loader
from .interop import _OpSpec, from_torch
from .launch import launch
from .runtime.array import Array, zeros, zeros_like
from .runtime.tape import Tape

__all__ = ["TorchOp", "op"]


def op(kernel, dim=None, *, outputs, inputs=None, like=None, shapes=None) -> TorchOp:
    """A PyTorch function that launches ``kernel``, differentiable by adjit's adjoint.

    - ``outputs``: the names of the kernel's array parameters the op returns
      (new tensors, zeroed before the launch; one name returns a tensor,
      several a tuple).
    - ``inputs``: the names of the other parameters, in the order the op
      takes them (default: the kernel's order); the op also takes them by
      name. Array parameters take CPU tensors of the element's scalar dtype
      (a vec3 array of n: an (n, 3) tensor); non-contiguous tensors are
      copied. Scalar, vector and matrix parameters take Python numbers (or
      tensors that do not require grad): adjit gives them no gradient, so a
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
    supported.
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
        values = self.spec.bind(args, kwargs)
        return _KernelFunction.apply(self.spec, *values)

    def __repr__(self) -> str:
        return (f"adjit.torch.op({self.kernel.__name__}, inputs={self.spec.inputs}, "
                f"outputs={self.spec.outputs})")


def _array_input(spec: _OpSpec, name: str, value) -> Array:
    who = f"adjit.torch.op({spec.kernel.__name__})"
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{who}: argument '{name}' is an array of {spec.element(name)}: pass a torch.Tensor, "
                        f"got {type(value).__name__}")
    if value.device.type != "cpu":
        raise ValueError(f"{who}: argument '{name}' is on '{value.device}'; adjit.torch.op runs on the CPU so far "
                         "(CUDA tensors in ops are not in adjit yet): pass t.cpu()")
    expected = spec.np_dtype(name)
    if torch.empty((), dtype=value.dtype).numpy().dtype != expected:
        raise TypeError(f"{who}: argument '{name}' must hold {expected} (an array of {spec.element(name)}), "
                        f"got a {value.dtype} tensor; convert it (e.g. .to(torch.{expected}))")
    spec.array_shape(name, value.shape)
    data = value.detach()
    if not data.is_contiguous():
        data = data.contiguous()  # a copy: the kernel reads it
    return from_torch(data, dtype=spec.element(name), requires_grad=False)


def _value_input(spec: _OpSpec, name: str, value):
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            raise ValueError(f"adjit.torch.op({spec.kernel.__name__}): argument '{name}' is a value of "
                             f"{spec.element(name)}, and adjit gives kernel values no gradient; to "
                             "differentiate it, make the parameter a 1-element array")
        value = value.detach().cpu().numpy()
        if value.ndim == 0:
            value = value.item()
    return value


class _KernelFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, spec: _OpSpec, *values):
        spec.check_access(loader.argument_access)
        named = {}
        arrays: dict[str, Array] = {}
        for name, value in zip(spec.inputs, values):
            if spec.is_array(name):
                named[name] = arrays[name] = _array_input(spec, name, value)
            else:
                named[name] = _value_input(spec, name, value)
        out_shapes = spec.output_shapes(list(values))
        outs = {name: zeros(out_shapes[name], spec.element(name)) for name in spec.outputs}
        named.update(outs)
        dim = spec.launch_dim(list(values), out_shapes)
        # needs_input_grad[0] is the spec's.
        wants = {name for name, needs in zip(spec.inputs, ctx.needs_input_grad[1:])
                 if needs and spec.is_array(name) and spec.differentiable(name)}
        ctx.spec, ctx.wants = spec, wants
        if wants:
            with Tape() as tape:
                launch(spec.kernel, dim, inputs=spec.kernel_args(named))
            ctx.tape, ctx.arrays, ctx.outs = tape, arrays, outs
            # torch checks at backward that no input was modified in place since.
            ctx.save_for_backward(*(v for v in values if isinstance(v, torch.Tensor)))
        else:
            launch(spec.kernel, dim, inputs=spec.kernel_args(named))
        results = tuple(torch.from_numpy(outs[name].numpy()) for name in spec.outputs)
        ctx.mark_non_differentiable(*(r for name, r in zip(spec.outputs, results)
                                      if not spec.differentiable(name)))
        return results[0] if len(results) == 1 else results

    @staticmethod
    @once_differentiable
    def backward(ctx, *grad_outputs):
        spec = ctx.spec
        if not ctx.wants:
            return (None,) * (1 + len(spec.inputs))
        ctx.saved_tensors  # noqa: B018 (raises if an input was modified in place)
        seeds = {}
        for name, g in zip(spec.outputs, grad_outputs):
            out = ctx.outs[name]
            out.grad = zeros_like(out, requires_grad=False)
            if g is not None and spec.differentiable(name):
                seeds[out] = g.detach().cpu().numpy()
        # Fresh gradient arrays for every backward (the tape accumulates):
        # the tensors returned below own them.
        for name in ctx.wants:
            a = ctx.arrays[name]
            a.grad = zeros_like(a, requires_grad=False)
        ctx.tape.backward(grads=seeds)
        grads = [torch.from_numpy(ctx.arrays[name].grad.numpy()) if name in ctx.wants else None
                 for name in spec.inputs]
        return (None, *grads)
