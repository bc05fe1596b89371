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

import ast
import linecache
import types as pytypes

import numpy as np

from . import language
from . import types as T
from .types import host_type
from . import builtins as B
from ._generated import load_module
from .device import get_device
from .errors import AdjitError
from .runtime import array as _array_module

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
        elif isinstance(t, (T.VectorType, T.MatrixType)):
            v = v.view(T.CompositeValue)
        values.append(v.copy() if isinstance(v, np.ndarray) else v)
    return values[0] if len(values) == 1 else tuple(values)


def call_builtin(builtin, args, kwargs):
    """``builtin(*args, **kwargs)`` evaluated on the host."""
    writes = any(index < len(args) for index in builtin.rebinds) and not builtin.advances_state
    if builtin.array_args or writes:
        raise AdjitError(f"adjit.{builtin.name}() takes arrays or writes its arguments: it can only be called "
                         "inside an @adjit.kernel or @adjit.func")
    static_names = {p.name for p in builtin.static_params}
    if builtin.params:  # Warp's parameter names: any argument by name, cast(x, float32)
        args, kwargs = _by_name(builtin, args, kwargs, static_names)
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


def _by_name(builtin, args, kwargs, static_names):
    """(value arguments, static arguments) of a call of a builtin with Warp's
    parameter names, each given positionally or by name."""
    names = builtin.params
    if len(args) > len(names):
        raise TypeError(f"adjit.{builtin.name}() takes at most {len(names)} arguments ({', '.join(names)}), "
                        f"got {len(args)}")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"adjit.{builtin.name}() got an unexpected keyword argument '{k}'")
        if k in bound:
            raise TypeError(f"adjit.{builtin.name}() got multiple values for argument '{k}'")
        bound[k] = v
    return ([bound[n] for n in names if n in bound and n not in static_names],
            {n: bound[n] for n in names if n in bound and n in static_names})


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
B.registry.host_call = call_builtin
language.host_call = call_function


# --- wp.map: a function applied to every element -------------------------------------------

#: (callee, argument kinds, output ndim) -> (kernel, result types)
_MAP_KERNELS: dict = {}
#: Python functions and lambdas given to map, as @adjit.func, by code and
#: closure values (a lambda made again in a loop is compiled once).
_MAP_FUNCS: dict = {}


def map_function(func, *inputs, out=None, return_kernel: bool = False, block_dim: int = 256, device=None):
    """Warp's ``wp.map``: ``func`` (an @func, a builtin, a Python function
    or a lambda) applied to the elements of the input arrays (and indexed
    arrays), in one launch of a generated kernel. The arrays broadcast as in
    numpy; scalars and vector values are passed to every element. Returns the output array (a
    tuple for a function with several results), ``out`` if given (an array
    or a sequence of them, of the broadcast shape and the results' types);
    with ``return_kernel`` the kernel alone. The launch is an ordinary one:
    a tape records it, and the outputs get gradients when an input array
    has one."""
    from .launch import _check_launch_options, launch
    from .runtime.array import Array, zeros
    from .runtime.indexed_array import IndexedArray
    device = get_device(device)  # (a ValueError for a device adjit cannot run on)
    func = _map_callee(func)
    name = getattr(func, "__name__", None) or func.name
    arrays = [a for a in inputs if isinstance(a, (Array, IndexedArray))]
    if not arrays:
        raise TypeError(f"map({name}): give at least one adjit array to map over")
    try:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        raise ValueError(f"map({name}): the arrays have different shapes {[a.shape for a in arrays]} that do "
                         "not broadcast together (as in numpy)") from None
    kinds = []
    for k, a in enumerate(inputs):
        if isinstance(a, (Array, IndexedArray)):
            # Each array dimension: the output dimension it follows, None where it broadcasts.
            lead = len(shape) - a.ndim
            index = tuple(None if n == 1 and shape[lead + d] != 1 else lead + d for d, n in enumerate(a.shape))
            kinds.append(("indexed" if isinstance(a, IndexedArray) else "array", a.dtype, index))
        else:
            kinds.append(("value", host_type(a, f"map({name}) argument {k + 1}"), None))
    kinds = tuple(kinds)
    key = (("builtin", func.name) if isinstance(func, B.Builtin) else func, kinds, len(shape))
    entry = _MAP_KERNELS.get(key)
    if entry is None:
        element_types = [t for _, t, _ in kinds]
        if isinstance(func, B.Builtin):
            try:
                result = func.infer(element_types)
            except TypeError as e:
                raise TypeError(f"map({name}): {e}") from None
            results = tuple(result) if isinstance(result, tuple) else (result,)
        else:
            from .compiler import driver
            results = tuple(driver.function_result_types(func, element_types))
        if not results or None in results:
            raise TypeError(f"map({name}): the function returns nothing to map into")
        entry = _MAP_KERNELS[key] = (_map_kernel(func, name, kinds, results, len(shape)), results)
    kernel, results = entry
    if return_kernel:
        return kernel
    grads = any((a.data if isinstance(a, IndexedArray) else a).requires_grad for a in arrays)
    if out is None:
        outs = [zeros(shape, dtype=t, device=device, requires_grad=grads) for t in results]
    else:
        outs = [out] if isinstance(out, Array) else list(out)
        if len(outs) != len(results) or any(not isinstance(o, Array) or o.shape != shape or o.dtype != t
                                             for o, t in zip(outs, results)):
            raise ValueError(f"map({name}): out must be {len(results)} array(s) of shape {shape} and types "
                             f"{', '.join(map(str, results))}")
    _check_launch_options(kernel, None, 0, block_dim)
    launch(kernel, dim=shape, inputs=list(inputs), outputs=outs, device=device)
    return outs[0] if len(outs) == 1 and out is None or isinstance(out, Array) else tuple(outs)


def _map_callee(func):
    """``func`` as something kernels call: an @func or a builtin as is, a
    Python function or lambda made an @func (the names it uses outside
    itself are read when it is first mapped)."""
    if isinstance(func, (language.Function, B.Builtin)):
        return func
    if not isinstance(func, pytypes.FunctionType):
        raise TypeError(f"map: func must be an @adjit.func or a builtin (or a Python function or lambda made "
                        f"one), got {func!r}")
    key = (func.__code__, tuple(c.cell_contents for c in func.__closure__ or ()))
    try:
        hash(key)
    except TypeError:
        key = func
    wrapped = _MAP_FUNCS.get(key)
    if wrapped is None:
        wrapped = _MAP_FUNCS[key] = _lambda_func(func) if func.__name__ == "<lambda>" else language.func(func)
    return wrapped


def _lambda_func(fn) -> "language.Function":
    """A lambda as an @func: its expression returned by a generated ``def``
    whose module sees the lambda's globals and closure values."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    params = list(code.co_varnames[:code.co_argcount])
    candidates = set()
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if (isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
                and [a.arg for a in node.args.args] == params and not node.args.vararg and not node.args.kwarg):
            candidates.add(ast.unparse(node.body))
    if len(candidates) != 1:
        why = "cannot read its source" if not candidates else "its line has several lambdas of these parameters"
        raise TypeError(f"map: {why} ({code.co_filename}:{code.co_firstlineno}); give it as a def or @adjit.func")
    closure = {n: c.cell_contents for n, c in zip(code.co_freevars, fn.__closure__ or ())}
    source = ("import adjit as wp\n\n\n@wp.func\n"
              f"def map_lambda({', '.join(params)}):\n    return {candidates.pop()}\n")
    names = {n: v for n, v in fn.__globals__.items() if not n.startswith("__")}
    module = load_module(source, "adjit_map_lambda", {**names, **closure})
    return module.map_lambda


def _map_kernel(func, name: str, kinds, results, ndim: int):
    indices = ", ".join(f"i{d}" for d in range(ndim))
    params, call_args = [], []
    for k, (kind, _, index) in enumerate(kinds):
        if kind == "value":
            params.append(f"a{k}: _arg{k}")
            call_args.append(f"a{k}")
            continue
        array = "wp.indexedarray" if kind == "indexed" else "wp.array"
        params.append(f"a{k}: {array}(dtype=_arg{k}, ndim={len(index)})")
        call_args.append(f"a{k}[{', '.join('0' if d is None else f'i{d}' for d in index)}]")
    params += [f"r{k}: wp.array(dtype=_result{k}, ndim={ndim})" for k in range(len(results))]
    values = ", ".join(f"v{k}" for k in range(len(results)))
    stores = "".join(f"    r{k}[{indices}] = v{k}\n" for k in range(len(results)))
    kernel_name = f"map_{name}".replace("<lambda>", "lambda")
    source = ("import adjit as wp\n\n\n@wp.kernel\n"
              f"def {kernel_name}({', '.join(params)}):\n"
              f"    {indices} = wp.tid()\n"
              f"    {values} = _target({', '.join(call_args)})\n" + stores)
    module = load_module(source, "adjit_map", {
        "_target": func, **{f"_arg{k}": t for k, (_, t, _) in enumerate(kinds)},
        **{f"_result{k}": t for k, t in enumerate(results)}})
    return getattr(module, kernel_name)


def _array_arithmetic(name: str, *operands, out=None):
    """An operator of adjit arrays (``a + b``, ``-a``, ``a *= s``): ``map``
    of the builtin ``name``, as Warp's array operators."""
    return map_function(B.lookup(name), *operands, out=out)


_array_module._map_function = _array_arithmetic
