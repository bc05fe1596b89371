"""Forward mode: ``adjit.jvp``, the Jacobian-vector product of one launch.

The tangent kernel (adjit-tangent) of a kernel runs what the kernel runs and,
next to every float value, its directional derivative along the tangents of
the inputs; one launch gives the tangents of every output.
"""
from __future__ import annotations

import numpy as np

from . import types as T
from .language import Kernel
from .launch import is_differentiable, launch_tangent
from .runtime.array import Array, array, zeros_like


def jvp(kernel: Kernel, dim, inputs, tangents, outputs=(), output_tangents=None) -> list:
    """Launches ``kernel`` like ``adjit.launch(kernel, dim, inputs, outputs)``
    and returns the tangents of its outputs: d outputs along the direction
    ``tangents`` of the inputs (a Jacobian-vector product), from one launch of
    the kernel's tangent kernel.

    ``tangents``: a list parallel to ``inputs`` (shorter is fine), or a dict
    by parameter name. For a float array input, an adjit array of the same
    dtype and shape (or a numpy array of that shape); for a float scalar,
    vector or matrix, a value of its type; for a struct, a struct value of
    its type or a dict by field name (of its fields' tangents); for an array
    of structs, an array of structs or a dict by field name of arrays;
    missing or None means zero. Non-float inputs take no tangent.

    ``output_tangents``: optional tangent arrays for the outputs (a list
    parallel to ``outputs``); the others are allocated zeroed. A kernel that
    accumulates into an output (``atomic_add``) accumulates its tangent into
    the given tangent array likewise.

    Returns a list parallel to ``outputs``: the tangent array of each float
    array output, a dict by field name of tangent arrays for a struct or an
    array of structs, None for the other outputs. Tangent arrays travel with
    their arrays: an input array the kernel writes has its tangent array
    updated in place too. The launch is recorded on the active tapes like a
    launch. Wrong tangents raise ``TypeError``/``ValueError`` naming the
    kernel and the argument.
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"jvp() needs an @adjit.kernel, got {kernel!r}")
    name = kernel.__name__
    inputs = _as_list(inputs, name, "inputs")
    outputs = _as_list(outputs, name, "outputs")
    args = _checked_arguments(kernel, inputs, outputs)
    given = _by_position(kernel, tangents, len(inputs), "tangents", 0)
    given.update(_by_position(kernel, output_tangents, len(outputs), "output_tangents", len(inputs)))
    tangent_args, tangent_of_array = _tangent_arguments(kernel, args, _flat_tangents(kernel, given))
    launch_tangent(kernel, dim, args, tangent_args)  # (bad primal arguments: a LaunchError, as in launch)
    return _output_tangents(kernel, inputs, outputs, tangent_of_array)


#: The most seed directions one tangent launch carries (``jvp_batch``).
MAX_LANES = 16


def jvp_batch(kernel: Kernel, dim, inputs, tangent_batch, outputs=()) -> list[list]:
    """Batched seeds: the tangents of the outputs along several directions
    from one launch. ``tangent_batch``: a list of up to ``MAX_LANES`` (16)
    tangent lists, each as ``jvp``'s ``tangents``. The tangent kernel carries
    one tangent per direction (lane) beside every float value and runs the
    primal once, so K directions cost one launch, not K.

    Returns one list per direction, each as ``jvp`` returns. The launch is
    recorded on the active tapes like a launch."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"jvp_batch() needs an @adjit.kernel, got {kernel!r}")
    name = kernel.__name__
    inputs = _as_list(inputs, name, "inputs")
    outputs = _as_list(outputs, name, "outputs")
    batch = _as_list(tangent_batch, name, "tangent_batch")
    if not 1 <= len(batch) <= MAX_LANES:
        raise ValueError(f"jvp_batch of kernel '{name}': tangent_batch must hold 1 to {MAX_LANES} tangent lists, "
                         f"got {len(batch)}")
    args = _checked_arguments(kernel, inputs, outputs)
    flat, maps = [], []
    for tangents in batch:
        tangent_args, tangent_of_array = _tangent_arguments(
            kernel, args, _flat_tangents(kernel, _by_position(kernel, tangents, len(inputs), "tangents", 0)))
        flat += tangent_args
        maps.append(tangent_of_array)
    launch_tangent(kernel, dim, args, flat, lanes=len(batch))
    return [_output_tangents(kernel, inputs, outputs, m) for m in maps]


def _checked_arguments(kernel: Kernel, inputs: list, outputs: list) -> list:
    """The kernel's (flattened) arguments: struct values and arrays of
    structs expanded into their fields."""
    name = kernel.__name__
    args = inputs + outputs
    if len(args) != len(kernel.param_names):
        raise ValueError(f"jvp of kernel '{name}': it takes {len(kernel.param_names)} arguments "
                         f"({', '.join(kernel.param_names)}), got {len(inputs)} inputs and {len(outputs)} outputs")
    return kernel.flatten_arguments(args)


def _leaves(name: str, t) -> list[tuple[str, object]]:
    """(argument name, type) of the kernel arguments parameter ``name`` of
    type ``t`` becomes: its fields for a struct or an array of structs."""
    if isinstance(t, (T.StructType, T.StructArrayType, T.IndexedArrayType)):
        return t.leaves(name)
    return [(name, t)]


def _flat_tangents(kernel: Kernel, given: dict) -> dict:
    """{parameter position: tangent} -> {argument position: tangent}. The
    tangent of a struct parameter is a struct value of its type (its float
    fields' tangents), a dict by field name, or None; of an array of structs,
    an array of structs of its dtype, or a dict by field name of arrays."""
    flat, position = {}, 0
    for index, (param, t) in enumerate(zip(kernel.param_names, kernel.param_types)):
        leaves = _leaves(param, t)
        tangent = given.get(index)
        if tangent is not None and len(leaves) == 1 and leaves[0][0] == param:
            flat[position] = tangent
        elif tangent is not None and isinstance(t, T.IndexedArrayType):
            # the tangent of its data array (of the data's shape); an indexed array: its data
            flat[position] = getattr(tangent, "data", tangent)
        elif tangent is not None:
            fields = [path[len(param) + 1:] for path, _ in leaves]
            if isinstance(tangent, dict):
                unknown = [key for key in tangent if key not in fields]
                if unknown:
                    raise ValueError(f"jvp of kernel '{kernel.__name__}': the tangent of '{param}' names "
                                     f"{unknown!r}, which are not among its fields {fields}")
                values = [tangent.get(field) for field in fields]
            elif hasattr(tangent, "leaf_values") and getattr(tangent, "_type", None) is t:
                values = tangent.leaf_values()
            elif hasattr(tangent, "leaf_arrays") and getattr(tangent, "dtype", None) is getattr(t, "dtype", None):
                values = tangent.leaf_arrays()
            else:
                raise TypeError(f"jvp of kernel '{kernel.__name__}': the tangent of '{param}' must be "
                                f"{'an array of ' + t.dtype.name if isinstance(t, T.StructArrayType) else 'a ' + t.name}"
                                f" (its fields' tangents) or a dict by field name, got {type(tangent).__name__}")
            for k, ((_, leaf_type), value) in enumerate(zip(leaves, values)):
                if value is not None and is_differentiable(leaf_type):
                    flat[position + k] = value
        position += len(leaves)
    return flat


def _tangent_arguments(kernel: Kernel, args: list, given: dict) -> tuple[list, dict]:
    """The tangent kernel's tangent arguments for the tangents ``given`` by
    argument position (zeros for the others), and {id(array): its tangent
    array}."""
    name = kernel.__name__
    tangent_of_array: dict[int, Array] = {}  # id(array) -> its tangent array (an array passed twice has one)
    tangent_args = []
    for position, (param, t, value) in enumerate(zip(kernel.arg_names, kernel.arg_types, args)):
        tangent = given.get(position)
        if not is_differentiable(t):
            if tangent is not None:
                raise TypeError(f"jvp of kernel '{name}': argument '{param}' is {t}, which has no tangent; "
                                "pass None for it")
            continue
        if not isinstance(t, T.ArrayType):
            tangent_args.append(value_tangent(f"jvp of kernel '{name}': the tangent of argument '{param}'",
                                              t, tangent))
            continue
        if not isinstance(value, Array):
            raise TypeError(f"jvp of kernel '{name}': argument '{param}' must be an adjit array of {t.dtype}, "
                            f"got {type(value).__name__}")
        known = tangent_of_array.get(id(value))
        if tangent is None:
            tangent = known if known is not None else zeros_like(value, requires_grad=False)
        else:
            tangent = array_tangent(f"jvp of kernel '{name}': the tangent of argument '{param}'", value, tangent)
            if known is not None and known is not tangent:
                raise ValueError(f"jvp of kernel '{name}': argument '{param}' is an array passed for another "
                                 "parameter too, with a different tangent; give it one tangent")
        tangent_of_array[id(value)] = tangent
        tangent_args.append(tangent)
    return tangent_args, tangent_of_array


def _output_tangents(kernel: Kernel, inputs: list, outputs: list, tangent_of_array: dict) -> list:
    """Parallel to ``outputs``: a float array's tangent array; for a struct
    or an array of structs, a dict by field name of its float arrays'
    tangent arrays; None for the others."""
    out = []
    for param, t, value in zip(kernel.param_names[len(inputs):], kernel.param_types[len(inputs):], outputs):
        if isinstance(t, (T.StructType, T.StructArrayType)):
            leaves = _leaves(param, t)
            arrays = value.leaf_arrays() if isinstance(t, T.StructArrayType) else value.leaf_values()
            out.append({path[len(param) + 1:]: tangent_of_array.get(id(a))
                        for (path, leaf_type), a in zip(leaves, arrays)
                        if isinstance(a, Array) and is_differentiable(leaf_type)})
        elif isinstance(t, T.IndexedArrayType):  # the tangent of its data array
            out.append(tangent_of_array.get(id(value.data)) if is_differentiable(t.data_type) else None)
        else:
            out.append(tangent_of_array.get(id(value)) if isinstance(value, Array) and is_differentiable(t)
                       else None)
    return out



def _as_list(value, kernel_name: str, what: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"jvp of kernel '{kernel_name}': {what} must be a list or tuple, got "
                        f"{type(value).__name__}")
    return list(value)


def _by_position(kernel: Kernel, tangents, count: int, what: str, first: int) -> dict:
    """{argument position: tangent} from a list parallel to ``count``
    arguments starting at ``first``, or a dict by parameter name."""
    name = kernel.__name__
    if tangents is None:
        return {}
    if isinstance(tangents, dict):
        names = kernel.param_names[first:first + count]
        unknown = [key for key in tangents if key not in names]
        if unknown:
            raise ValueError(f"jvp of kernel '{name}': {what} names {unknown!r}, which are not among its "
                             f"{'inputs' if first == 0 else 'outputs'} {names}")
        return {first + names.index(key): value for key, value in tangents.items()}
    if not isinstance(tangents, (list, tuple)):
        raise TypeError(f"jvp of kernel '{name}': {what} must be a list (parallel to the "
                        f"{'inputs' if first == 0 else 'outputs'}) or a dict by parameter name, got "
                        f"{type(tangents).__name__}")
    if len(tangents) > count:
        raise ValueError(f"jvp of kernel '{name}': {len(tangents)} {what} for {count} "
                         f"{'inputs' if first == 0 else 'outputs'}")
    return {first + i: value for i, value in enumerate(tangents)}


def array_tangent(what: str, value: Array, tangent) -> Array:
    """The tangent array of the array ``value``: ``tangent`` if it is an
    adjit array of the same dtype and shape, else a copy of a numpy array of
    the same (numpy) shape. ``what`` begins the error messages."""
    if isinstance(tangent, Array):
        if tangent.dtype != value.dtype:
            raise TypeError(f"{what} must be an array of {value.dtype}, got an array of {tangent.dtype}")
        if tangent.shape != value.shape:
            raise ValueError(f"{what} must have shape {value.shape}, got {tangent.shape}")
        return tangent
    if not isinstance(tangent, np.ndarray):
        raise TypeError(f"{what} must be an adjit array or a numpy array, got {type(tangent).__name__}")
    expected = value._buffer.shape  # (the array's shape and its elements' components)
    if tangent.shape != expected:
        raise ValueError(f"{what} must have numpy shape {expected}, got {tangent.shape}")
    if not np.issubdtype(tangent.dtype, np.floating) and not np.issubdtype(tangent.dtype, np.integer):
        raise TypeError(f"{what} must hold numbers, got a numpy array of {tangent.dtype}")
    return array(tangent.astype(value._buffer.dtype), dtype=value.dtype, device=value.device)


def value_tangent(what: str, t, tangent):
    """The tangent of a float scalar, vector or matrix argument of type
    ``t`` (None: zero). ``what`` begins the error messages."""
    scalar = T.scalar_of(t)
    shape = () if isinstance(t, T.ScalarType) else t.shape
    if tangent is None:
        return 0.0 if shape == () else np.zeros(shape, scalar.np_dtype)
    try:
        if isinstance(tangent, (bool, np.bool_, str, bytes)):
            raise TypeError
        packed = np.asarray(tangent, dtype=scalar.np_dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be {t}, got {tangent!r}") from None
    if packed.shape != shape:
        raise ValueError(f"{what} must be {t} (shape {shape}), got a value of shape {packed.shape}")
    return float(packed) if shape == () else packed
