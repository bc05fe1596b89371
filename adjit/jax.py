"""adjit kernels as JAX functions: ``adjit.jax.op``, usable under ``jax.jit``
and ``jax.grad``.

    import adjit.jax

    f = adjit.jax.op(scale, outputs="y")            # y: shaped like x
    g = jax.jit(jax.grad(lambda x: f(2.0, x).sum()))

The op is a ``jax.custom_vjp`` whose forward and backward call adjit from
the host through ``jax.pure_callback``: the forward launches the kernel;
the backward launches it again on an ``adjit.Tape`` (JAX keeps no host state
between the two: the residuals are the inputs), seeds the outputs'
gradients with the cotangents and runs the tape's adjoint. Each call copies
its inputs and results between JAX and adjit (JAX's buffers are read-only
to the callback). This module needs JAX; ``import adjit`` does not import it.

On a GPU (JAX arrays on a GPU, or JAX's default device a GPU under
``jax.jit``) the kernel runs on adjit's CUDA device of the same ordinal, but
through the host both ways: XLA copies the inputs to the host for the
callback, adjit uploads them, launches, and copies the results back, which
XLA uploads again. A GPU path without the host needs an XLA FFI handler
(C++ that adjit does not have yet); ``device=`` picks where adjit runs.
"""
from __future__ import annotations

import jax  # the real JAX: imports are absolute (this module is adjit.jax)
import jax.numpy as jnp
import numpy as np

from . import loader
from . import types as T
from .interop import _OpSpec, _wrap
from .jax_modes import JaxCallableGraphMode, JaxModulePreloadMode
from .launch import launch
from .runtime.array import _component_shape, zeros, zeros_like
from .runtime.tape import Tape

__all__ = ["JaxCallable", "JaxKernel", "JaxOp", "jax_callable", "jax_kernel", "op"]


def op(kernel, dim=None, *, outputs, inputs=None, like=None, shapes=None, device=None) -> JaxOp:
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

    ``device``: where adjit runs the kernel ("cpu", "cuda:N"); None: where
    the JAX arrays are (traced ones: JAX's default device), a JAX GPU being
    adjit's CUDA device of the same ordinal. Either way the data goes
    through the host (see the module's docstring).
    """
    spec = _OpSpec(kernel, dim, inputs, outputs, like, shapes, "adjit.jax.op")
    jax_op = JaxOp(spec)
    if device is not None:
        from .device import get_device
        jax_op.device = str(get_device(device))
    return jax_op


class JaxOp:
    """A kernel launch as a differentiable JAX function (see ``op``)."""

    def __init__(self, spec: _OpSpec):
        self.spec = spec
        self.kernel = spec.kernel
        self.__name__ = spec.kernel.__name__
        self.__doc__ = spec.kernel.__doc__
        #: JAX's vmap_method of the callbacks (None: no jax.vmap).
        self.vmap_method = None
        #: Why jax.grad is refused (None: differentiable by adjit's adjoint).
        self.no_grad_reason = None
        #: Where adjit runs the kernel ("cpu", "cuda:N"; None: where the JAX arrays are).
        self.device = None

    def __repr__(self) -> str:
        return (f"adjit.jax.op({self.kernel.__name__}, inputs={self.spec.inputs}, "
                f"outputs={self.spec.outputs})")

    def __call__(self, *args, **kwargs):
        spec = self.spec
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
        place = self.device if self.device is not None else _place_of(arrays, who)
        from .device import get_device
        where = get_device(place)
        spec.check_access(lambda kernel: loader.argument_access(kernel, where if where.is_cuda else None))
        fn = _make_function(spec, statics, dim, out_shapes, results, [(a.shape, a.dtype) for a in arrays],
                            self.vmap_method, self.no_grad_reason, place)
        out = fn(*arrays)
        return out[0] if len(out) == 1 else out


def _adjit_copy(data: np.ndarray, element, who: str, place: str):
    """An adjit array on ``place`` holding a copy of the host data (the
    callback's buffers are read-only, adjit's arrays writable)."""
    array = _wrap(data, element, False, who, copy=True)
    return array if place == "cpu" else array.to(place)


def _place_of(arrays: list, who: str) -> str:
    """The adjit device of the JAX arrays of a call: that of the concrete
    ones (all on one device), else (traced: JAX places the computation)
    JAX's default device; a JAX GPU is adjit's CUDA device of its ordinal."""
    from .interop import device_from_jax
    tracer = getattr(jax.core, "Tracer", ())
    devices = set()
    for a in arrays:
        if isinstance(a, jax.Array) and not isinstance(a, tracer):
            try:
                devices |= set(a.devices())
            except Exception:  # noqa: BLE001 (a traced value: JAX places it)
                pass
    if len(devices) > 1:
        raise ValueError(f"{who}: the array arguments are on several devices ({sorted(map(str, devices))}); "
                         "put them on one (jax.device_put), or name where adjit runs with device=")
    if devices:
        device = devices.pop()
    else:
        device = getattr(jax.config, "jax_default_device", None) or jax.devices()[0]
        if isinstance(device, str):  # (a platform name)
            device = jax.devices(device)[0]
    return str(device_from_jax(device))


def _make_function(spec: _OpSpec, statics: dict, dim, out_shapes: dict, results: tuple, in_avals: list,
                   vmap_method: str | None = None, no_grad_reason: str | None = None, place: str = "cpu"):
    """The custom_vjp function of the array inputs, for these static values
    and shapes. ``vmap_method``: JAX's, for the callbacks (a kernel launch is
    mapped over a batch one element at a time whatever it is: the results
    of every method are the same). ``no_grad_reason``: differentiating
    raises a ValueError saying it. ``place``: the adjit device the kernel
    runs on ("cpu", or "cuda:N": the host data is uploaded there and the
    results copied back)."""
    callback_options = {} if vmap_method is None else {"vmap_method": "sequential"}
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
            named[name] = arrays[name] = _adjit_copy(np.asarray(x), spec.element(name), spec.who, place)
        outs = {n: zeros(out_shapes[n], spec.element(n), device=place) for n in spec.outputs}
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
            seeds[outs[name]] = _adjit_copy(np.asarray(ct), spec.element(name), spec.who, place)
        for name in grad_inputs:
            arrays[name].grad = zeros_like(arrays[name], requires_grad=False)
        tape.backward(grads=seeds)
        return tuple(arrays[n].grad.numpy() for n in grad_inputs)

    @jax.custom_vjp
    def fn(*inputs):
        return jax.pure_callback(lambda *xs: run(xs), results, *inputs, **callback_options)

    def fn_fwd(*inputs):
        return fn(*inputs), inputs

    def fn_bwd(inputs, cts):
        if no_grad_reason is not None:
            raise ValueError(no_grad_reason)
        float_cts = [ct for name, ct in zip(spec.outputs, cts) if spec.differentiable(name)]
        grad_avals = tuple(jax.ShapeDtypeStruct(*in_shape[n]) for n in grad_inputs)
        grads = iter(jax.pure_callback(lambda *xs: run(xs[:len(inputs)], xs[len(inputs):]), grad_avals,
                                       *inputs, *float_cts, **callback_options) if grad_inputs else ())
        return tuple(next(grads) if spec.differentiable(name)
                     else np.zeros(in_shape[name][0], dtype=jax.dtypes.float0)
                     for name in spec.array_inputs)

    fn.defvjp(fn_fwd, fn_bwd)
    return fn


# --- Warp's jax_kernel and jax_callable ---------------------------------------------------------

_VMAP_METHODS = ("broadcast_all", "expand_dims", "sequential", "sequential_unrolled", "legacy_vectorized")


def _check_common(who: str, num_outputs, names: list, vmap_method, in_out_argnames, module_preload_mode,
                  has_side_effect) -> None:
    if isinstance(num_outputs, bool) or not isinstance(num_outputs, int) or num_outputs < 1:
        raise ValueError(f"{who}: num_outputs must be an int >= 1, got {num_outputs!r}")
    if num_outputs > len(names):
        raise ValueError(f"{who}: num_outputs={num_outputs} is more than the {len(names)} parameter(s) "
                         f"({', '.join(names)})")
    _check_vmap(who, vmap_method)
    if in_out_argnames:
        raise ValueError(f"{who}: in_out_argnames is not supported by adjit (JAX's buffers are read-only to its "
                         "callbacks): make such parameters outputs, written from an input copy")
    if module_preload_mode not in tuple(JaxModulePreloadMode):
        raise ValueError(f"{who}: module_preload_mode must be a JaxModulePreloadMode, got {module_preload_mode!r}")
    if not isinstance(has_side_effect, bool):
        raise TypeError(f"{who}: has_side_effect must be True or False, got {has_side_effect!r}")


def _check_vmap(who: str, vmap_method) -> None:
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"{who}: vmap_method must be one of {', '.join(_VMAP_METHODS)} or None, got "
                         f"{vmap_method!r}")


def _dims(value, who: str, what: str):
    """Warp's launch/output dims: an int or a tuple of ints (None: inferred)."""
    if value is None:
        return None
    shape = (value,) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    try:
        shape = tuple(shape)
    except TypeError:
        shape = None
    if not shape or len(shape) > 4 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                              and d >= 0 for d in shape):
        raise ValueError(f"{who}: {what} must be an int or a tuple of 1 to 4 ints >= 0, got {value!r}")
    return tuple(int(d) for d in shape)


class JaxKernel:
    """A kernel launch as a JAX function, as Warp's ``jax_kernel``.

    The kernel's last ``num_outputs`` parameters are the outputs (zeroed,
    then written by the launch, returned as a list); the others are the
    function's arguments, in order: arrays as JAX arrays, scalars and
    vector values static (as in Warp). ``launch_dims`` (default: the shape
    of the first array argument) and ``output_dims`` (an int or tuple for
    every output, or a dict by output name; default: the launch dims) may
    also be given per call, with ``vmap_method``. With
    ``enable_backward=True`` ``jax.grad`` runs adjit's adjoint (then
    launch_dims is fixed and output_dims refused, as in Warp); without it,
    differentiating raises ValueError. ``jax.vmap`` maps the launch over
    the batch one element at a time. ``module_preload_mode``, ``block_dim``
    and ``has_side_effect`` change nothing on the CPU (kernels load when the
    call is traced; CPU launches have no blocks; the launch writes only its
    outputs). ``in_out_argnames`` is refused.
    """

    def __init__(self, kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
                 in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 enable_backward: bool = False, has_side_effect: bool = False, block_dim: int | None = None):
        who = "jax_kernel"
        if not hasattr(kernel, "arg_names") or not hasattr(kernel, "arg_types"):
            raise TypeError(f"{who} takes an @adjit.kernel, got {kernel!r}")
        names = list(kernel.arg_names)
        _check_common(who, num_outputs, names, vmap_method, in_out_argnames, module_preload_mode, has_side_effect)
        if not isinstance(enable_backward, bool):
            raise TypeError(f"{who}: enable_backward must be True or False, got {enable_backward!r}")
        if block_dim is not None and (isinstance(block_dim, bool) or not isinstance(block_dim, int) or block_dim < 1):
            raise ValueError(f"{who}: block_dim must be a positive int or None, got {block_dim!r}")
        if enable_backward and output_dims is not None:
            raise ValueError(f"{who}: output_dims is not supported with enable_backward=True (as in Warp)")
        self.kernel, self.num_outputs, self.enable_backward = kernel, num_outputs, enable_backward
        self.vmap_method = vmap_method
        self.launch_dims = _dims(launch_dims, who, "launch_dims")
        self.output_dims = output_dims
        self.outputs = tuple(names[len(names) - num_outputs:])
        self.inputs = tuple(names[:len(names) - num_outputs])
        self._ops: dict = {}
        # The parameters are checked now (outputs are arrays, shapes can be inferred).
        self._op(self.launch_dims, output_dims)

    def __repr__(self) -> str:
        return f"adjit.jax_kernel({self.kernel.__name__}, num_outputs={self.num_outputs})"

    def _op(self, launch_dims, output_dims) -> JaxOp:
        who = f"jax_kernel({self.kernel.__name__})"
        if isinstance(output_dims, dict):
            shapes = {name: _dims(v, who, f"output_dims[{name!r}]") for name, v in output_dims.items()}
        else:
            shape = _dims(output_dims, who, "output_dims")
            shapes = {} if shape is None else dict.fromkeys(self.outputs, shape)
        if launch_dims is not None:
            for name in self.outputs:
                shapes.setdefault(name, launch_dims)
        key = (launch_dims, tuple(sorted(shapes.items())))
        op = self._ops.get(key)
        if op is None:
            arrays = [n for n in self.inputs if isinstance(self.kernel.arg_types[list(self.kernel.arg_names).index(n)],
                                                           T.ArrayType)]
            dim = launch_dims if launch_dims is not None else (arrays[0] if arrays else None)
            op = JaxOp(_OpSpec(self.kernel, dim, self.inputs, self.outputs, None, shapes, who))
            op.no_grad_reason = None if self.enable_backward else (
                f"{who} was made with enable_backward=False (Warp's default): it cannot be differentiated; "
                "make it with enable_backward=True")
            self._ops[key] = op
        return op

    def __call__(self, *args, launch_dims=None, output_dims=None, vmap_method=None) -> list:
        who = f"jax_kernel({self.kernel.__name__})"
        if self.enable_backward and launch_dims is not None:
            raise ValueError(f"{who}: launch_dims is fixed when the function is made with enable_backward=True "
                             "(as in Warp)")
        if self.enable_backward and output_dims is not None:
            raise ValueError(f"{who}: output_dims is not supported with enable_backward=True (as in Warp)")
        if len(args) != len(self.inputs):
            raise ValueError(f"{who}: expected {len(self.inputs)} inputs ({', '.join(self.inputs)}), got {len(args)}")
        _check_vmap(who, vmap_method)
        op = self._op(_dims(launch_dims, who, "launch_dims") if launch_dims is not None else self.launch_dims,
                      output_dims if output_dims is not None else self.output_dims)
        op.vmap_method = vmap_method if vmap_method is not None else self.vmap_method
        out = op(*args)
        return list(out) if isinstance(out, tuple) else [out]


def jax_kernel(kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
               in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
               enable_backward: bool = False, has_side_effect: bool = False, block_dim: int | None = None) -> JaxKernel:
    """Warp's ``jax_kernel``: see ``JaxKernel``."""
    return JaxKernel(kernel, num_outputs, vmap_method, launch_dims, output_dims, in_out_argnames,
                     module_preload_mode, enable_backward, has_side_effect, block_dim)


class JaxCallable:
    """An annotated Python function as a JAX function, as Warp's
    ``jax_callable``: its last ``num_outputs`` parameters are arrays it
    fills (adjit arrays, zeroed first; returned as a list), the others its
    arguments (arrays as JAX arrays, copied to adjit arrays; scalars
    static). It may launch kernels, copy and allocate. Output shapes:
    ``output_dims`` (an int or tuple for every output, or a dict by name;
    per call too), else the shape of the first array argument. Not
    differentiable (as in Warp); ``jax.vmap`` calls it once per batch
    element. Graph modes WARP, WARP_STAGED and WARP_STAGED_EX need CUDA and
    are refused; ``graph_cache_max`` is checked and unused."""

    def __init__(self, func, num_outputs=1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max=32, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect: bool = False):
        import inspect
        who = "jax_callable"
        if not callable(func):
            raise TypeError(f"{who} takes an annotated Python function, got {func!r}")
        names = list(inspect.signature(func).parameters)
        _check_common(who, num_outputs, names, vmap_method, in_out_argnames, module_preload_mode, has_side_effect)
        if graph_mode not in tuple(JaxCallableGraphMode):
            raise ValueError(f"{who}: graph_mode must be a JaxCallableGraphMode, got {graph_mode!r}")
        if graph_mode not in (JaxCallableGraphMode.NONE, JaxCallableGraphMode.JAX):
            raise ValueError(f"{who}: graph_mode={JaxCallableGraphMode(graph_mode).name} captures CUDA graphs, and "
                             "adjit runs on the CPU only: use JaxCallableGraphMode.JAX or NONE")
        if stage_in_argnames is not None or stage_out_argnames is not None:
            raise ValueError(f"{who}: stage_in_argnames/stage_out_argnames are for the WARP_STAGED graph modes, "
                             "which need CUDA")
        if graph_cache_max is not None and (isinstance(graph_cache_max, bool) or not isinstance(graph_cache_max, int)
                                            or graph_cache_max < 0):
            raise ValueError(f"{who}: graph_cache_max must be an int >= 0 or None, got {graph_cache_max!r}")
        hints = dict(getattr(func, "__annotations__", {}))
        types = {}
        for name in names:
            if name not in hints:
                raise TypeError(f"{who}: parameter '{name}' of {func.__name__} has no type annotation (annotate it "
                                "as in a kernel: wp.array(dtype=float), float, ...)")
            hint = hints[name]
            if isinstance(hint, str):  # (postponed annotations)
                hint = eval(hint, getattr(func, "__globals__", {}))  # noqa: S307 (the function's own annotation)
            types[name] = hint if isinstance(hint, T.ArrayType) else T.value_type_of(hint)
        self.func, self.num_outputs, self.graph_mode = func, num_outputs, graph_mode
        self.vmap_method, self.output_dims = vmap_method, output_dims
        self.types = types
        self.outputs = tuple(names[len(names) - num_outputs:])
        self.inputs = tuple(names[:len(names) - num_outputs])
        for name in self.outputs:
            if not isinstance(types[name], T.ArrayType):
                raise ValueError(f"{who}: output '{name}' of {func.__name__} is not an array parameter")
        self.array_inputs = [n for n in self.inputs if isinstance(types[n], T.ArrayType)]
        self.__name__ = getattr(func, "__name__", "jax_callable")

    def __repr__(self) -> str:
        return f"adjit.jax_callable({self.__name__}, num_outputs={self.num_outputs})"

    def _shapes(self, values: dict, output_dims) -> dict:
        who = f"jax_callable({self.__name__})"
        if isinstance(output_dims, dict):
            unknown = [n for n in output_dims if n not in self.outputs]
            if unknown:
                raise ValueError(f"{who}: output_dims names {unknown}, not outputs {self.outputs}")
            shapes = {n: _dims(v, who, f"output_dims[{n!r}]") for n, v in output_dims.items()}
        else:
            shape = _dims(output_dims, who, "output_dims")
            shapes = {} if shape is None else dict.fromkeys(self.outputs, shape)
        for name in self.outputs:
            if name not in shapes:
                if not self.array_inputs:
                    raise ValueError(f"{who}: no array argument to take the shape of output '{name}' from: give "
                                     "output_dims")
                first = self.array_inputs[0]
                shapes[name] = tuple(values[first].shape[:self.types[first].ndim])
            if len(shapes[name]) != self.types[name].ndim:
                raise ValueError(f"{who}: output '{name}' is a {self.types[name].ndim}-d array, but its shape "
                                 f"would be {shapes[name]}")
        return shapes

    def __call__(self, *args, output_dims=None, vmap_method=None):
        who = f"jax_callable({self.__name__})"
        if len(args) != len(self.inputs):
            raise ValueError(f"{who}: expected {len(self.inputs)} inputs ({', '.join(self.inputs)}), got {len(args)}")
        _check_vmap(who, vmap_method)
        vmap_method = vmap_method if vmap_method is not None else self.vmap_method
        values, statics, arrays = {}, {}, []
        for name, value in zip(self.inputs, args):
            t = self.types[name]
            if isinstance(t, T.ArrayType):
                value = jnp.asarray(value)
                expected = T.scalar_of(t.dtype).np_dtype
                if value.dtype != expected:
                    raise TypeError(f"{who}: argument '{name}' must hold {expected}, got {value.dtype}")
                comp = _component_shape(t.dtype)
                if value.ndim != t.ndim + len(comp) or tuple(value.shape[t.ndim:]) != comp:
                    raise ValueError(f"{who}: argument '{name}' is a {t.ndim}-d array of {t.dtype}, got data of "
                                     f"shape {value.shape}")
                arrays.append(value)
            else:
                try:
                    statics[name] = np.asarray(value)
                except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
                    raise TypeError(f"{who}: argument '{name}' is a value of {t}, passed traced; values are "
                                    "static (as in Warp): pass a Python number") from None
            values[name] = value
        shapes = self._shapes(values, output_dims if output_dims is not None else self.output_dims)
        results = tuple(jax.ShapeDtypeStruct(shapes[n] + _component_shape(self.types[n].dtype),
                                             T.scalar_of(self.types[n].dtype).np_dtype) for n in self.outputs)

        def run(*xs):
            it = iter(xs)
            call = {}
            for name in self.inputs:
                t = self.types[name]
                call[name] = (_wrap(np.asarray(next(it)), t.dtype, False, who, copy=True)
                              if isinstance(t, T.ArrayType) else statics[name])
            outs = {n: zeros(shapes[n], self.types[n].dtype) for n in self.outputs}
            self.func(*[call[n] for n in self.inputs], *[outs[n] for n in self.outputs])
            return tuple(outs[n].numpy() for n in self.outputs)

        options = {} if vmap_method is None else {"vmap_method": "sequential"}
        return list(jax.pure_callback(run, results, *arrays, **options))


def jax_callable(func, num_outputs=1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max=32, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect: bool = False) -> JaxCallable:
    """Warp's ``jax_callable``: see ``JaxCallable``."""
    return JaxCallable(func, num_outputs, graph_mode, vmap_method, output_dims, in_out_argnames, stage_in_argnames,
                       stage_out_argnames, graph_cache_max, module_preload_mode, has_side_effect)
