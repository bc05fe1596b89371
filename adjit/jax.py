"""adjit kernels as JAX functions: ``adjit.jax.op``, usable under ``jax.jit``
and ``jax.grad``.

    import adjit.jax

    f = adjit.jax.op(scale, outputs="y")            # y: shaped like x
    g = jax.jit(jax.grad(lambda x: f(2.0, x).sum()))

The op is a ``jax.custom_vjp`` whose forward and backward run adjit on the
host through ``jax.pure_callback`` (CPU): the forward launches the kernel;
the backward launches it again on an ``adjit.Tape`` (JAX keeps no host state
between the two: the residuals are the inputs), seeds the outputs'
gradients with the cotangents and runs the tape's adjoint. Each call copies
its inputs and results between JAX and adjit (JAX's buffers are read-only
to the callback). This module needs JAX; ``import adjit`` does not import it.
"""
from __future__ import annotations

import jax  # the real JAX: imports are absolute (this module is adjit.jax)
import jax.numpy as jnp
import numpy as np

from . import loader
from .interop import _OpSpec, _wrap
from .launch import launch
from .runtime.array import zeros, zeros_like
from .runtime.tape import Tape

__all__ = ["JaxOp", "op"]


def op(kernel, dim=None, *, outputs, inputs=None, like=None, shapes=None) -> JaxOp:
    """A JAX function that launches ``kernel``, differentiable by adjit's adjoint.

    The arguments are those of ``adjit.torch.op``: ``outputs`` (the array
    parameters returned, zeroed before the launch), ``inputs`` (the others,
    in the order the op takes them), ``shapes``/``like`` (output shapes) and
    ``dim`` (the launch grid). Array parameters take JAX (or numpy) arrays
    of the element's scalar dtype, float64 ones needing
    ``jax.config.update("jax_enable_x64", True)``. Scalar, vector and matrix
    parameters take Python or numpy values, static under ``jax.jit``: adjit
    gives them no gradient, so a traced value is refused (make the parameter
    a 1-element array to trace or differentiate it). Integer arrays get a
    zero (float0) cotangent. Not supported: ``jax.vmap``, forward mode
    (``jax.jvp``), higher derivatives.
    """
    return JaxOp(_OpSpec(kernel, dim, inputs, outputs, like, shapes, "adjit.jax.op"))


class JaxOp:
    """A kernel launch as a differentiable JAX function (see ``op``)."""

    def __init__(self, spec: _OpSpec):
        self.spec = spec
        self.kernel = spec.kernel
        self.__name__ = spec.kernel.__name__
        self.__doc__ = spec.kernel.__doc__

    def __repr__(self) -> str:
        return (f"adjit.jax.op({self.kernel.__name__}, inputs={self.spec.inputs}, "
                f"outputs={self.spec.outputs})")

    def __call__(self, *args, **kwargs):
        spec = self.spec
        spec.check_access(loader.argument_access)
        values = spec.bind(args, kwargs)
        who = f"adjit.jax.op({spec.kernel.__name__})"
        statics, arrays = {}, []
        for name, value in zip(spec.inputs, values):
            if spec.is_array(name):
                value = jnp.asarray(value)
                expected = spec.np_dtype(name)
                if value.dtype != expected:
                    hint = (" (JAX makes 64-bit data 32-bit unless jax.config.update(\"jax_enable_x64\", "
                            "True))" if expected.itemsize == 8 and value.dtype.itemsize == 4 else "")
                    raise TypeError(f"{who}: argument '{name}' must hold {expected} (an array of "
                                    f"{spec.element(name)}), got {value.dtype}{hint}")
                spec.array_shape(name, value.shape)
                arrays.append(value)
            else:
                try:
                    statics[name] = np.asarray(value)
                except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
                    raise TypeError(f"{who}: argument '{name}' is a value of {spec.element(name)}, passed "
                                    "traced (under jax.jit or differentiated); kernel values are static "
                                    "and get no gradient from adjit: pass a Python number (e.g. mark it "
                                    "static in jax.jit), or make the parameter a 1-element array") from None
        out_shapes = spec.output_shapes(values)
        dim = spec.launch_dim(values, out_shapes)
        results = tuple(jax.ShapeDtypeStruct(spec.buffer_shape(n, out_shapes[n]), spec.np_dtype(n))
                        for n in spec.outputs)
        fn = _make_function(spec, statics, dim, out_shapes, results, [(a.shape, a.dtype) for a in arrays])
        out = fn(*arrays)
        return out[0] if len(out) == 1 else out


def _make_function(spec: _OpSpec, statics: dict, dim, out_shapes: dict, results: tuple, in_avals: list):
    """The custom_vjp function of the array inputs, for these static values and shapes."""
    grad_inputs = [n for n in spec.array_inputs if spec.differentiable(n)]
    grad_outputs = [n for n in spec.outputs if spec.differentiable(n)]
    in_shape = dict(zip(spec.array_inputs, in_avals))

    def run(inputs, cotangents=None):
        """Launches the kernel on host copies of ``inputs``; without
        ``cotangents`` returns the outputs, with them the gradients of the
        float array inputs."""
        named = dict(statics)
        arrays = {}
        for name, x in zip(spec.array_inputs, inputs):
            # A copy: the callback's buffers are read-only, adjit's writable.
            named[name] = arrays[name] = _wrap(np.asarray(x), spec.element(name), False, spec.who, copy=True)
        outs = {n: zeros(out_shapes[n], spec.element(n)) for n in spec.outputs}
        named.update(outs)
        args = spec.kernel_args(named)
        if cotangents is None:
            launch(spec.kernel, dim, inputs=args)
            return tuple(outs[n].numpy() for n in spec.outputs)
        with Tape() as tape:
            launch(spec.kernel, dim, inputs=args)
        seeds = {}
        for name, ct in zip(grad_outputs, cotangents):
            outs[name].grad = zeros_like(outs[name], requires_grad=False)
            seeds[outs[name]] = np.asarray(ct)
        for name in grad_inputs:
            arrays[name].grad = zeros_like(arrays[name], requires_grad=False)
        tape.backward(grads=seeds)
        return tuple(arrays[n].grad.numpy() for n in grad_inputs)

    @jax.custom_vjp
    def fn(*inputs):
        return jax.pure_callback(lambda *xs: run(xs), results, *inputs)

    def fn_fwd(*inputs):
        return fn(*inputs), inputs

    def fn_bwd(inputs, cts):
        float_cts = [ct for name, ct in zip(spec.outputs, cts) if spec.differentiable(name)]
        grad_avals = tuple(jax.ShapeDtypeStruct(*in_shape[n]) for n in grad_inputs)
        grads = iter(jax.pure_callback(lambda *xs: run(xs[:len(inputs)], xs[len(inputs):]), grad_avals,
                                       *inputs, *float_cts) if grad_inputs else ())
        return tuple(next(grads) if spec.differentiable(name)
                     else np.zeros(in_shape[name][0], dtype=jax.dtypes.float0)
                     for name in spec.array_inputs)

    fn.defvjp(fn_fwd, fn_bwd)
    return fn
