"""Builtins and @func called from Python scope: ``adjit.sin(0.5)``,
``adjit.quat_from_axis_angle(axis, angle)``, ``my_func(x)`` outside kernels.

Warp evaluates these on the host; adjit runs each call as a kernel of one
thread, compiled once per callee and argument types, so a value computed on
the host is bitwise the value a kernel computes. A random draw called here
leaves its state unchanged (Warp's rule: the state is a value).

Arguments are typed as in kernels: a Python float is a float32, an int an
int32, a bool a bool; numpy scalars keep their type; a numpy array of shape
(n,) is a vector, (r, c) a matrix (a quaternion or transform value keeps its
kind). Results come back as numpy values (a scalar, or an array for vectors
and matrices), a tuple for several.
"""
from __future__ import annotations

import numpy as np

from . import language
from . import types as T
from .types import host_type
from .compiler import builtins as B
from ._generated import load_module
from .errors import AdjitError

#: (callee, argument types, static keywords) -> (kernel, result types)
_KERNELS: dict = {}


def _kernel_for(target, name: str, arg_types: tuple, result_types: tuple, static: dict):
    """A kernel of one thread: reads each argument from a one-element array,
    calls ``target`` and stores each result (a generated module, its types
    and target bound in its globals)."""
    params = [f"a{k}: wp.array(dtype=_arg{k})" for k in range(len(arg_types))]
    params += [f"r{k}: wp.array(dtype=_result{k})" for k in range(len(result_types))]
    call_args = [f"a{k}[0]" for k in range(len(arg_types))] + [f"{key}=_static_{key}" for key in static]
    results = ", ".join(f"v{k}" for k in range(len(result_types)))
    stores = "".join(f"    r{k}[0] = v{k}\n" for k in range(len(result_types)))
    source = ("import adjit as wp\n\n\n@wp.kernel\n"
              f"def host_call_{name}({', '.join(params)}):\n"
              f"    {results} = _target({', '.join(call_args)})\n" + stores)
    module = load_module(source, f"adjit_host_call_{name}", {
        "_target": target, **{f"_arg{k}": t for k, t in enumerate(arg_types)},
        **{f"_result{k}": t for k, t in enumerate(result_types)},
        **{f"_static_{key}": v for key, v in static.items()}})
    return getattr(module, f"host_call_{name}")


def _run(kernel, args, arg_types, result_types):
    from .launch import launch
    from .runtime import recording
    from .runtime.array import Array, zeros
    inputs = []
    for value, t in zip(args, arg_types):
        scalar = T.scalar_of(t)
        data = np.asarray(value, dtype=scalar.np_dtype).reshape((1,) + (() if isinstance(t, T.ScalarType)
                                                                        else t.shape))
        inputs.append(Array(np.ascontiguousarray(data), t))
    outputs = [zeros(1, dtype=t) for t in result_types]
    with recording.paused():  # not a step of a tape the caller records
        launch(kernel, dim=1, inputs=inputs, outputs=outputs)
    values = []
    for out, t in zip(outputs, result_types):
        v = out.numpy()[0]
        if isinstance(t, T.QuatType):
            v = v.view(T.QuatValue)
        elif isinstance(t, T.TransformType):
            v = v.view(T.TransformValue)
        values.append(v.copy() if isinstance(v, np.ndarray) else v)
    return values[0] if len(values) == 1 else tuple(values)


def call_builtin(builtin, args, kwargs):
    """``builtin(*args, **kwargs)`` evaluated on the host."""
    writes = any(index < len(args) for index in builtin.rebinds) and not builtin.advances_state
    if builtin.array_args or writes:
        raise AdjitError(f"adjit.{builtin.name}() takes arrays or writes its arguments: it can only be called "
                         "inside an @adjit.kernel or @adjit.func")
    static_names = {p.name for p in builtin.static_params}
    unknown = set(kwargs) - static_names
    if unknown:
        raise TypeError(f"adjit.{builtin.name}() got unexpected keyword arguments {sorted(unknown)}")
    arg_types = tuple(host_type(a, f"adjit.{builtin.name}() argument {k + 1}") for k, a in enumerate(args))
    # A plain Python float next to a float64 argument takes its type (as a literal in a kernel).
    floats = {t for t in arg_types if isinstance(t, T.ScalarType) and t.is_float}
    if len(floats) > 1 and T.float64 in floats:
        arg_types = tuple(T.float64 if type(a) is float else t for a, t in zip(args, arg_types))
    static = dict(kwargs)
    key = (builtin.name, arg_types, tuple(sorted((k, repr(v)) for k, v in static.items())))
    entry = _KERNELS.get(key)
    if entry is None:
        try:
            result = builtin.infer(list(arg_types), **{p.name: static.get(p.name, p.default)
                                                       for p in builtin.static_params})
        except TypeError as e:
            raise TypeError(f"adjit.{builtin.name}(): {e}") from None
        result_types = result if isinstance(result, tuple) else (result,)
        entry = _KERNELS[key] = (_kernel_for(builtin, builtin.name, arg_types, result_types, static), result_types)
    kernel, result_types = entry
    return _run(kernel, args, arg_types, result_types)


def call_grad(wrapper, args, kwargs):
    """``grad(f)(*args)`` evaluated on the host: one gradient per argument,
    of its type (a float is a float32, as in kernels)."""
    if kwargs:
        raise TypeError(f"{wrapper.__name__} called from Python takes positional arguments only")
    arg_types = tuple(host_type(a, f"{wrapper.__name__} argument {k + 1}") for k, a in enumerate(args))
    for k, t in enumerate(arg_types):
        scalar = T.scalar_of(t)
        if scalar is None or not scalar.is_float:
            raise TypeError(f"{wrapper.__name__} argument {k + 1} is {t}; grad() differentiates with respect "
                            "to float scalars, vectors and matrices only")
    key = (wrapper.func, arg_types, "grad")
    entry = _KERNELS.get(key)
    if entry is None:
        name = "grad_" + (getattr(wrapper.func, "__name__", None) or wrapper.func.name)
        entry = _KERNELS[key] = (_kernel_for(wrapper, name, arg_types, arg_types, {}), arg_types)
    kernel, result_types = entry
    return _run(kernel, args, arg_types, result_types)


def call_function(fn, args, kwargs):
    """``fn(*args)`` for an @adjit.func, evaluated on the host."""
    if isinstance(fn, language.GradWrapper):
        return call_grad(fn, args, kwargs)
    if kwargs:
        raise TypeError(f"@adjit.func '{fn.__name__}' called from Python takes positional arguments only")
    arg_types = tuple(host_type(a, f"{fn.__name__}() argument {k + 1}") for k, a in enumerate(args))
    key = (fn, arg_types, ())
    entry = _KERNELS.get(key)
    if entry is None:
        from .compiler import driver
        result_types = tuple(driver.function_result_types(fn, list(arg_types)))
        if not result_types:
            raise AdjitError(f"@adjit.func '{fn.__name__}' returns nothing: calling it from Python has no effect")
        entry = _KERNELS[key] = (_kernel_for(fn, fn.__name__, arg_types, result_types, {}), result_types)
    kernel, result_types = entry
    return _run(kernel, args, arg_types, result_types)


# Builtins and funcs call these when called outside kernels (hooks, so that
# neither imports this module: it imports the compiler).
B.host_call = call_builtin
language.host_call = call_function
