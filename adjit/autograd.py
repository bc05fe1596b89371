"""Jacobians and gradient checks of kernels (``adjit.autograd``).

``jacobian`` uses the adjoint kernels (one backward pass per output element)
or the tangent kernels (``mode="forward"``: one launch per input element);
``jacobian_fd`` uses central finite differences; ``gradcheck`` compares the
adjoint's with finite differences. ``jvp`` is forward mode through a Python
function of launches. Masks name (input, output) pairs either by parameter name,
``("a", "out1")``, or by integer index, ``(0, 0)`` = ``inputs[0]`` and
``outputs[0]``; both spellings give identical results.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from . import types as T
from .forward import MAX_LANES, array_tangent, jvp as kernel_jvp, jvp_batch as kernel_jvp_batch, value_tangent
from .language import Kernel
from .launch import is_differentiable, launch, launch_adjoint_batch, launch_adjoint_tangent, launch_tangent
from .loader import written_arguments
from .errors import GradientError
from ._jacobian_plot import jacobian_plot
from .runtime.array import Array, _before_write, _zeros_in_layout, array, clone, grad_or_scratch, zeros_like
from .runtime.cuda_memory import may_share_memory
from .runtime.tape import Tape


class JacobianDict(dict):
    """Jacobians keyed by ``(input index, output index)``; lookups also accept
    parameter names, e.g. ``J["a", "out1"]``."""

    def __init__(self, names_in, names_out):
        super().__init__()
        self._names_in, self._names_out = names_in, names_out

    def __getitem__(self, key):
        return super().__getitem__(_normalize_pair(key, self._names_in, self._names_out))

    def __contains__(self, key):
        try:
            return super().__contains__(_normalize_pair(key, self._names_in, self._names_out))
        except GradientError:
            return False


def _normalize_pair(pair, names_in, names_out):
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise GradientError(f"a mask entry is an (input, output) pair, got {pair!r}")
    return (_index(pair[0], names_in, "input"), _index(pair[1], names_out, "output"))


def _index(item, names, what):
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= item < len(names):
            raise GradientError(f"{what} index {item} is out of range (there are {len(names)} {what}s)")
        return int(item)
    if isinstance(item, str):
        if item not in names:
            raise GradientError(f"'{item}' is not one of the {what}s {names}")
        return names.index(item)
    raise GradientError(f"a mask names an {what} by name or integer index, got {item!r}")


def _differentiable(a) -> bool:
    if not isinstance(a, Array):
        return False
    scalar = T.scalar_of(a.dtype)
    return scalar.is_float


def _pairs(kernel: Kernel, inputs, outputs, mask):
    names_in = kernel.arg_names[:len(inputs)]
    names_out = kernel.arg_names[len(inputs):len(inputs) + len(outputs)]
    if mask is None:
        pairs = [(i, o) for i, a in enumerate(inputs) if _differentiable(a)
                 for o, b in enumerate(outputs) if _differentiable(b)]
    else:
        pairs = [_normalize_pair(p, names_in, names_out) for p in mask]
    for i, o in pairs:
        for what, arr, idx in (("input", inputs[i], i), ("output", outputs[o], o)):
            if not _differentiable(arr):
                raise GradientError(f"{what} {idx} ('{(names_in if what == 'input' else names_out)[idx]}') "
                                    "is not a float array, so it has no Jacobian")
    if not pairs:
        raise GradientError(f"kernel '{kernel.__name__}' has no (float input array, float output "
                            "array) pair to differentiate")
    return pairs, names_in, names_out


def _with_grads(arrays):
    """Gives every array a gradient buffer (temporarily); returns an undo."""
    added = []
    for a in arrays:
        if isinstance(a, Array) and a.grad is None:
            a.grad = zeros_like(a, requires_grad=False)
            added.append(a)

    def undo():
        for a in added:
            a.grad = None
    return undo


# --- the values of arrays on any device -------------------------------------------------------
# Jacobians and gradient checks seed gradients, read them back and perturb
# inputs one number at a time. A CPU array's ``numpy()`` is a view, written
# through as before; a CUDA array's is a read-only host copy, so its numbers
# are written by copying host values to the device (``CudaMemory``
# assignment), after the tapes that hold its values saved them (as a CPU
# view handed out makes them do).

def _numbers(a: Array) -> int:
    """How many numbers ``a`` holds (vector/matrix components included): a
    Jacobian's rows or columns for it."""
    return a._buffer.size


def set_values(a: Array, values) -> None:
    """Sets every number of ``a`` to the host ``values`` (broadcast, as numpy
    assigns), on any device; not recorded on a tape."""
    if a.device == "cpu":
        a.numpy()[...] = values
        return
    _before_write(a)
    a._buffer[...] = values


def set_number(a: Array, k: int, value) -> None:
    """Sets number ``k`` of ``a`` (flattened, components included) to
    ``value``, on any device; not recorded on a tape."""
    if a.device == "cpu":
        view = a.numpy()
        view[np.unravel_index(k, view.shape)] = value  # (through the view: a strided one has no flat view)
        return
    _before_write(a)
    if a._buffer.is_c_contiguous:
        a._buffer.reshape(-1)[k] = value  # (one element copied to the device)
    else:
        host = a._buffer.numpy()
        host.reshape(-1)[k] = value
        a._buffer[...] = host


class FlatNumbers:
    """The numbers of an array, flattened, to read and to change one at a
    time (finite differences): a CPU array's through its numpy view, a CUDA
    array's through a host copy taken now, each change copied to the device."""

    __slots__ = ("array", "values", "size", "_copied")

    def __init__(self, a: Array):
        self.array = a
        view = a.numpy()
        # a CUDA array's host view is a read-only copy; a strided CPU view has no flat view
        self._copied = a.device != "cpu" or not view.flags.c_contiguous
        self.values = view.reshape(-1).copy() if self._copied else view.reshape(-1)
        self.size = self.values.size

    def __getitem__(self, k):
        return self.values[k]

    def __setitem__(self, k, value) -> None:
        self.values[k] = value
        if self._copied:
            set_number(self.array, k, self.values[k])


def zero_gradient(a: Array) -> Array:
    """A zero gradient array for ``a``, on its device (in its layout)."""
    if a.device == "cpu":
        return Array(np.zeros_like(a.numpy()), a.dtype, _owned=True)
    return Array(_zeros_in_layout(a._buffer, a.dtype, a.device, a.shape), a.dtype, False, a.device, _owned=True)


def arrays_device(what: str, arrays, device=None) -> str | None:
    """The device the arrays among ``arrays`` are on (they must all be on
    one): ``device`` where given, which must be theirs; None when there are
    no arrays and no ``device``. TypeError naming ``what`` otherwise (a
    device that does not exist here: its ValueError)."""
    found = []
    for a in arrays:
        if isinstance(a, Array) and a.device not in found:
            found.append(a.device)
    if len(found) > 1:
        raise TypeError(f"{what}: its arrays are on {' and '.join(repr(d) for d in found)}; they must be on one "
                        f"device (move them with a.to('{found[0]}'))")
    if device is None:
        return found[0] if found else None
    from .device import device_alias
    alias = device_alias(device)
    if found and found[0] != alias:
        raise TypeError(f"{what}: device={alias!r}, but its arrays are on {found[0]!r} (move them with "
                        f"a.to('{alias}'), or leave device=None: it runs where the arrays are)")
    return alias


JACOBIAN_MODES = ("reverse", "forward", "auto")


def jacobian(function, dim=None, inputs=None, outputs=None, input_output_mask=None, device=None,
             max_blocks: int = 0, block_dim: int = 256, max_outputs_per_var: int = -1,
             plot_jacobians: bool = False, metadata=None, *, mode: str = "reverse",
             batch: int = MAX_LANES) -> JacobianDict:
    """The Jacobians d outputs[o] / d inputs[i] of one launch of a kernel, or
    of a Python function of launches (Warp's signature).

    ``function``: a kernel, launched with ``dim``, ``inputs`` and
    ``outputs`` (its parameters in that order); or a Python function called
    as ``function(*inputs)`` that returns an array or a list of arrays (the
    outputs; ``dim`` and ``outputs`` are then None). Returns ``{(i, o): J}``
    with ``J`` a 2-D float64 ``adjit.array`` of shape (output size, input
    size), vector/matrix components flattened (``J.numpy()`` for numpy);
    keys also accept parameter names. Every float array takes part (Warp
    takes those with ``requires_grad=True``; adjit gives the others a
    gradient for the call). ``max_outputs_per_var`` > 0 computes only that
    many rows of each output (the rest stay zero); ``plot_jacobians`` shows
    them with ``jacobian_plot``. It runs where the arrays are (the CPU or
    a CUDA device; they must all be on one) and returns the Jacobians
    there, as Warp's; ``device`` (None: theirs) must be their device (a
    TypeError otherwise); ``max_blocks`` and ``block_dim`` are checked as
    by ``launch``.

    ``mode`` and ``batch`` are adjit's: ``mode="reverse"`` (the default)
    uses adjoint kernels, ``"forward"`` tangent kernels, ``"auto"`` forward
    when the inputs have fewer elements than the outputs; ``batch`` seeds
    share one launch (see below for kernels; a function is differentiated
    one seed at a time)."""
    if metadata is not None:
        raise TypeError("jacobian: metadata= (Warp's FunctionMetadata) is not supported; names come from the "
                        "kernel's or the function's parameters")
    if isinstance(function, Kernel):
        where = _check_kernel_call("jacobian", function, dim, inputs, outputs, device, max_blocks, block_dim)
        numeric = _kernel_jacobian(function, dim, list(inputs or ()), list(outputs or ()), input_output_mask, mode,
                                   batch, max_outputs_per_var)
        names = (function.__name__, numeric._names_in, numeric._names_out)
    else:
        numeric, outputs = _function_jacobian(function, dim, inputs, outputs, input_output_mask, mode,
                                              max_outputs_per_var)
        names = (getattr(function, "__name__", "function"), numeric._names_in, numeric._names_out)
        where = arrays_device("jacobian", inputs or ())
    result = _as_arrays(numeric, where)
    if plot_jacobians:
        jacobian_plot(result, names, inputs)
    return result


def _kernel_jacobian(kernel: Kernel, dim, inputs, outputs, input_output_mask=None, mode: str = "reverse",
                     batch: int = MAX_LANES, max_outputs_per_var: int = -1) -> JacobianDict:
    """The Jacobians d outputs[o] / d inputs[i] of one launch, as numpy arrays.

    Returns ``{(i, o): J}`` with ``J`` of shape (output size, input size)
    (vector/matrix components flattened). ``mode="reverse"``: the launch
    runs once, then one launch of the adjoint kernel per ``batch`` rows
    (batched seeds: up to 16 adjoints share one replay of the primal), each
    row seeded with a unit gradient on one output element; ``batch=1`` is one
    backward pass of the tape per row. ``mode="forward"``: one launch of the
    tangent kernel per ``batch`` columns (``adjit.jvp_batch``: up to 16
    seed directions share one run of the primal), each column seeded with a
    unit tangent on one input element, the arrays the kernel writes restored
    before each launch.
    ``mode="auto"``: forward when the inputs have fewer elements than the
    outputs, else reverse. Either way the arrays end as one launch leaves
    them.
    """
    if mode not in JACOBIAN_MODES:
        raise ValueError(f"jacobian: mode must be one of {JACOBIAN_MODES}, got {mode!r}")
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or not 1 <= batch <= MAX_LANES:
        raise ValueError(f"jacobian: batch must be an int from 1 to {MAX_LANES}, got {batch!r}")
    pairs, names_in, names_out = _pairs(kernel, inputs, outputs, input_output_mask)
    if max_outputs_per_var is not None and max_outputs_per_var > 0:
        mode = "reverse"  # rows are what reverse mode computes one by one
    if mode == "auto":
        input_elements = sum(_numbers(inputs[i]) for i in {i for i, _ in pairs})
        output_elements = sum(_numbers(outputs[o]) for o in {o for _, o in pairs})
        mode = "forward" if input_elements < output_elements else "reverse"
    if mode == "forward":
        return _jacobian_forward(kernel, dim, list(inputs), list(outputs), pairs, names_in, names_out,
                                 int(batch))
    if batch > 1:
        return _jacobian_reverse_batched(kernel, dim, list(inputs), list(outputs), pairs, names_in, names_out,
                                         int(batch), _row_limit(max_outputs_per_var))
    undo = _with_grads(list(inputs) + list(outputs))
    try:
        tape = Tape()
        with tape:
            launch(kernel, dim, inputs=inputs, outputs=outputs)
        result = JacobianDict(names_in, names_out)
        for o in sorted({o for _, o in pairs}):
            out = outputs[o]
            ins = [i for i, oo in pairs if oo == o]
            jac = {i: np.zeros((_numbers(out), _numbers(inputs[i]))) for i in ins}
            for row in range(min(_numbers(out), _row_limit(max_outputs_per_var))):
                tape.zero()
                for a in list(inputs) + list(outputs):
                    if isinstance(a, Array) and a.grad is not None:
                        set_values(a.grad, 0)
                set_number(out.grad, row, 1)
                tape.backward()
                for i in ins:
                    jac[i][row] = inputs[i].grad.numpy().reshape(-1)
            for i in ins:
                result[(i, o)] = jac[i]
        for a in list(inputs) + list(outputs):
            if isinstance(a, Array) and a.grad is not None:
                set_values(a.grad, 0)
        return result
    finally:
        undo()


def _row_limit(max_per_var) -> int:
    """Warp's max_outputs_per_var / max_inputs_per_var: -1 (or None) is all."""
    if max_per_var is None or max_per_var < 0:
        return np.iinfo(np.int64).max
    if max_per_var == 0:
        raise ValueError("max_outputs_per_var / max_inputs_per_var must be positive, or -1 for all")
    return int(max_per_var)


def _check_kernel_call(what: str, kernel: Kernel, dim, inputs, outputs, device, max_blocks,
                       block_dim) -> str | None:
    """Checks the launch a Jacobian makes; returns the device of its arrays
    (``device``, which must be theirs, or theirs; None: no arrays)."""
    from .launch import _check_launch_options
    if dim is None:
        raise TypeError(f"{what} of kernel '{kernel.__name__}': dim is required for a kernel")
    try:
        where = arrays_device(f"{what} of kernel '{kernel.__name__}'", list(inputs or ()) + list(outputs or ()),
                              device)
    except ValueError as e:  # (a device that is not here)
        raise TypeError(f"{what} of kernel '{kernel.__name__}': {e}") from None
    _check_launch_options(kernel, None, max_blocks, block_dim)
    return where


def _as_arrays(numeric: JacobianDict, device=None) -> JacobianDict:
    """The numpy Jacobians as float64 arrays on ``device`` (Warp's: the
    inputs' device; None: the default device)."""
    result = JacobianDict(numeric._names_in, numeric._names_out)
    for key, value in dict.items(numeric):
        result[key] = array(np.ascontiguousarray(value, dtype=np.float64), dtype=T.float64, device=device)
    return result


def _function_call(what: str, function, dim, inputs, outputs):
    """Checks a Python function of launches given to jacobian/jacobian_fd;
    returns (inputs, input names)."""
    if not callable(function):
        raise TypeError(f"{what}: function must be a kernel or a Python function of launches, got "
                        f"{_describe(function)}")
    fn_name = getattr(function, "__name__", repr(function))
    if dim is not None or outputs is not None:
        raise TypeError(f"{what} of function '{fn_name}': dim and outputs are for kernels; the function's "
                        "outputs are what it returns")
    inputs = list(inputs or ())
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        params = []
    names = params if len(params) == len(inputs) else [f"inputs[{k}]" for k in range(len(inputs))]
    return inputs, names


def _function_outputs(what: str, fn_name: str, result) -> list:
    outs = [result] if isinstance(result, Array) else result
    if not isinstance(outs, (list, tuple)) or not outs or not all(isinstance(o, Array) for o in outs):
        raise TypeError(f"{what} of function '{fn_name}': it must return an adjit array or a list of them, "
                        f"got {_describe(result)}")
    return list(outs)


def _output_names(function, outs) -> list[str]:
    names = getattr(function, "output_names", None)
    return list(names) if names is not None and len(names) == len(outs) else \
        [f"outputs[{o}]" for o in range(len(outs))]


def _function_pairs(what, fn_name, inputs, outs, names_in, names_out, mask):
    if mask is None:
        pairs = [(i, o) for i, a in enumerate(inputs) if _differentiable(a)
                 for o, b in enumerate(outs) if _differentiable(b)]
    else:
        pairs = [_normalize_pair(p, names_in, names_out) for p in mask]
        for i, o in pairs:
            if not (_differentiable(inputs[i]) and _differentiable(outs[o])):
                raise GradientError(f"{what} of function '{fn_name}': ({names_in[i]}, {names_out[o]}) is not a "
                                    "pair of float arrays, so it has no Jacobian")
    if not pairs:
        raise GradientError(f"{what} of function '{fn_name}': no (float input array, float output array) pair "
                            "to differentiate")
    return pairs


def _function_jacobian(function, dim, inputs, outputs, mask, mode, max_outputs_per_var):
    """The Jacobians of a Python function of launches: it runs once under a
    tape, then one backward pass per output row (reverse) or one ``jvp``
    per input column (forward); numpy values."""
    inputs, names_in = _function_call("jacobian", function, dim, inputs, outputs)
    fn_name = getattr(function, "__name__", repr(function))
    if mode not in JACOBIAN_MODES:
        raise ValueError(f"jacobian: mode must be one of {JACOBIAN_MODES}, got {mode!r}")
    diff = [a for a in inputs if _differentiable(a)]
    undo = _with_grads(diff)
    try:
        tape = Tape()
        with tape:
            outs = _function_outputs("jacobian", fn_name, function(*inputs))
        names_out = _output_names(function, outs)
        pairs = _function_pairs("jacobian", fn_name, inputs, outs, names_in, names_out, mask)
        if mode == "auto":
            mode = "forward" if sum(_numbers(inputs[i]) for i in {i for i, _ in pairs}) < \
                sum(_numbers(outs[o]) for o in {o for _, o in pairs}) else "reverse"
        if max_outputs_per_var is not None and max_outputs_per_var > 0:
            mode = "reverse"
        result = JacobianDict(names_in, names_out)
        if mode == "forward":
            for i in sorted({i for i, _ in pairs}):
                size = _numbers(inputs[i])
                jac = {o: np.zeros((_numbers(outs[o]), size)) for ii, o in pairs if ii == i}
                for column in range(size):
                    seeds = [None] * len(inputs)
                    seeds[i] = np.zeros(inputs[i]._buffer.shape)
                    seeds[i].reshape(-1)[column] = 1
                    _, out_tangents = jvp(lambda *xs: function(*xs), inputs, seeds)
                    out_tangents = [out_tangents] if isinstance(out_tangents, Array) else out_tangents
                    for o in jac:
                        jac[o][:, column] = out_tangents[o].numpy().reshape(-1)
                for o, value in jac.items():
                    result[(i, o)] = value
            return result, outs
        added = [o for o in outs if o.grad is None]
        for o in added:
            o.grad = zeros_like(o, requires_grad=False)
        try:
            for o in sorted({o for _, o in pairs}):
                ins = [i for i, oo in pairs if oo == o]
                rows = _numbers(outs[o])
                jac = {i: np.zeros((rows, _numbers(inputs[i]))) for i in ins}
                for row in range(min(rows, _row_limit(max_outputs_per_var))):
                    tape.zero()
                    for a in diff + outs:
                        set_values(a.grad, 0)
                    set_number(outs[o].grad, row, 1)
                    tape.backward()
                    for i in ins:
                        jac[i][row] = inputs[i].grad.numpy().reshape(-1)
                for i in ins:
                    result[(i, o)] = jac[i]
            tape.zero()
            for a in diff + outs:
                if a.grad is not None:
                    set_values(a.grad, 0)
        finally:
            for o in added:
                o.grad = None
        return result, outs
    finally:
        undo()
def _jacobian_reverse_batched(kernel: Kernel, dim, inputs: list, outputs: list, pairs, names_in,
                              names_out, batch: int, row_limit: int = np.iinfo(np.int64).max) -> JacobianDict:
    """Reverse mode with batched seeds: the launch runs once (recorded, so
    that its adjoints see the values it read), then one launch of the
    ``lanes``-lane adjoint kernel per ``lanes`` rows, each lane seeded with a
    unit gradient on one output element (the last batch padded with zero
    seeds)."""
    tape = Tape()
    tape._warned_gradient_stops = True  # (no .grad arrays here: the seeds are passed in)
    with tape:
        launch(kernel, dim, inputs=inputs, outputs=outputs)
    (step,) = tape.launch_steps()
    args = inputs + outputs
    array_args = [a for a, t in zip(args, kernel.arg_types) if isinstance(t, T.ArrayType)]
    result = JacobianDict(names_in, names_out)
    for o in sorted({o for _, o in pairs}):
        out = outputs[o]
        ins = [i for i, oo in pairs if oo == o]
        size = _numbers(out)
        rows = min(size, row_limit)
        jac = {i: np.zeros((size, _numbers(inputs[i]))) for i in ins}
        lanes = max(1, min(batch, rows))
        for first in range(0, rows, lanes):
            chosen = range(first, min(first + lanes, rows))
            batch_grads, grad_of = [], []
            for lane in range(lanes):
                # one gradient array per distinct array (an array passed twice
                # has one gradient, as with .grad)
                by_id = {id(a): zeros_like(a, requires_grad=False) for a in array_args}
                if lane < len(chosen):
                    set_number(by_id[id(out)], chosen[lane], 1)
                batch_grads.append([by_id[id(a)] for a in array_args])
                grad_of.append(by_id)
            launch_adjoint_batch(kernel, dim, step.captured, batch_grads, step.finals,
                                 compiled_from=step.compiled_from)
            for lane, row in enumerate(chosen):
                for i in ins:
                    jac[i][row] = grad_of[lane][id(inputs[i])].numpy().reshape(-1)
        for i in ins:
            result[(i, o)] = jac[i]
    return result


def _jacobian_forward(kernel: Kernel, dim, inputs: list, outputs: list, pairs, names_in,
                      names_out, batch: int) -> JacobianDict:
    args = inputs + outputs
    written = [args[p] for p in written_arguments(kernel) if isinstance(args[p], Array)]
    initial = [a.numpy().copy() for a in written]
    result = JacobianDict(names_in, names_out)
    launched = False
    for i in sorted({i for i, _ in pairs}):
        outs = [o for ii, o in pairs if ii == i]
        shape = inputs[i]._buffer.shape
        size = int(np.prod(shape))
        jac = {o: np.zeros((_numbers(outputs[o]), size)) for o in outs}
        # One launch per `lanes` columns (the last batch padded with zero seeds,
        # so that every launch uses the same compiled tangent kernel).
        lanes = max(1, min(batch, size))
        for first in range(0, size, lanes):
            for a, values in zip(written, initial):
                set_values(a, values)
            columns = range(first, min(first + lanes, size))
            seeds = []
            for lane in range(lanes):
                seed = np.zeros(shape)
                if lane < len(columns):
                    seed.reshape(-1)[columns[lane]] = 1
                tangents = [None] * len(inputs)
                tangents[i] = seed
                seeds.append(tangents)
            out_tangents = (kernel_jvp_batch(kernel, dim, inputs, seeds, outputs) if lanes > 1
                            else [kernel_jvp(kernel, dim, inputs, seeds[0], outputs)])
            launched = True
            for lane, column in enumerate(columns):
                for o in outs:
                    jac[o][:, column] = out_tangents[lane][o].numpy().reshape(-1)
        for o in outs:
            result[(i, o)] = jac[o]
    if not launched:  # inputs without elements: still one launch
        launch(kernel, dim, inputs=inputs, outputs=outputs)
    return result


def _input_tangents(mode, fn, inputs, tangents):
    """Check ``jvp``/``hvp``'s arguments; return fn's name, the inputs as a
    list, and id(input) -> (input, a copy of its tangent) for the inputs
    given a tangent."""
    if not callable(fn):
        raise TypeError(f"autograd.{mode}: fn must be callable, got {type(fn).__name__}")
    fn_name = getattr(fn, "__name__", repr(fn))
    inputs, tangents = list(inputs), list(tangents)
    if len(tangents) != len(inputs):
        raise ValueError(f"autograd.{mode} of {fn_name}: {len(tangents)} tangents for {len(inputs)} inputs "
                         "(pass None for the inputs without one)")
    tangent_of: dict[int, tuple[Array, Array]] = {}
    for position, (value, tangent) in enumerate(zip(inputs, tangents)):
        if tangent is None:
            continue
        what = f"autograd.{mode} of {fn_name}: the tangent of input {position}"
        if not (isinstance(value, Array) and is_differentiable(value.dtype)):
            raise TypeError(f"{what}: the input is {_describe(value)}, which has no tangent; pass None for it")
        given = array_tangent(what, value, tangent)
        copied = array(given.numpy().copy(), dtype=value.dtype, device=value.device)
        _track(tangent_of, value, copied, fn_name)
    return fn_name, inputs, tangent_of


def jvp(fn, inputs, tangents):
    """Forward mode through a Python function of launches: runs
    ``fn(*inputs)`` and returns ``(result, result_tangents)``, what ``fn``
    returned (an array, or a tuple or list of arrays) and the tangents of
    those arrays along ``tangents`` (a Jacobian-vector product).

    ``tangents``: parallel to ``inputs``; for each float array input an adjit
    array of the same dtype and shape (or a numpy array of its shape), None
    for zero (and for inputs that are not arrays). The caller's tangent
    arrays are not changed.

    The launches ``fn`` makes are recorded on a tape, then their tangent
    kernels run in the same order on the values each launch read, each
    reading the tangent arrays that the ones before wrote. Only arrays carry
    tangents from launch to launch: float scalars that ``fn`` passes to
    kernels are constants. Steps other than launches raise GradientError:
    ``record_func``, and the copies the tape records (``adjit.copy``,
    ``clone``, assignments into arrays with a gradient; while ``fn`` runs, the
    inputs with tangents have one, so their clones do too). A copy between
    arrays without gradients is not recorded, and passes no tangent: copy
    with a kernel inside ``fn``. Cost: the launches run twice, once as they
    are and once as tangent kernels.
    """
    fn_name, inputs, tangent_of = _input_tangents("jvp", fn, inputs, tangents)

    tape = Tape()
    tape._warned_gradient_stops = True  # (no gradients here: the tape only replays)
    # Inputs with tangents get gradients while fn runs, so that the tape
    # records their copies and clones (which forward mode then refuses).
    without_grad = [a for a, _ in tangent_of.values() if not a.requires_grad]
    try:
        for a in without_grad:
            a.requires_grad = True
        with tape:
            result = fn(*inputs)
    finally:
        for a in without_grad:
            a.requires_grad = False
    single = isinstance(result, Array)
    results = [result] if single else result
    if not isinstance(results, (list, tuple)) or not all(isinstance(r, Array) for r in results):
        raise TypeError(f"autograd.jvp of {fn_name}: fn must return an adjit array or a tuple or list of them, "
                        f"got {_describe(result)}")

    def run_tangent(kernel, dim, primal, arrays, compiled_from) -> None:
        tangent_args = []
        for param, t, value in zip(kernel.arg_names, kernel.arg_types, arrays):
            if not is_differentiable(t):
                continue
            if not isinstance(t, T.ArrayType):
                tangent_args.append(value_tangent(f"kernel '{kernel.__name__}' argument '{param}'", t, None))
                continue
            known = tangent_of.get(id(value))
            tangent = known[1] if known else _track(tangent_of, value, zeros_like(value, requires_grad=False),
                                                    fn_name)
            tangent_args.append(tangent)
        launch_tangent(kernel, dim, primal, tangent_args, record=False, compiled_from=compiled_from)

    tape.replay_forward(run_tangent)
    result_tangents = [tangent_of[id(r)][1] if id(r) in tangent_of else zeros_like(r, requires_grad=False)
                       for r in results]
    return (result, result_tangents[0]) if single else (result, type(results)(result_tangents))


def hvp(fn, inputs, tangents, output_grads=None):
    """Hessian-vector products by forward over reverse, through a Python
    function of launches: runs ``loss = fn(*inputs)`` and returns
    ``(loss, gradients, hvps)``, lists parallel to ``inputs``: the gradient
    of the sum of ``loss``'s elements with respect to each float array input
    and its directional derivative along ``tangents`` (H v, the Hessian of
    the loss times v; None for the other inputs).

    ``output_grads``: instead of a loss, ``fn`` returns an array or a tuple
    of arrays (each with a gradient) and ``output_grads`` gives their seeds
    (arrays or numpy arrays of their shapes, parallel): the result is then the
    Hessian of ``sum_k <output_grads[k], outputs[k]>`` times v.

    ``tangents``: as for ``jvp``, parallel to ``inputs``. The launches ``fn``
    makes are recorded on a tape (arrays it creates need
    ``requires_grad=True`` for gradients to pass, as with ``Tape``), run
    forward as tangent kernels (keeping the tangents each launch read), then
    backward, latest first, as the tangent kernels of their adjoint kernels
    (adjit-adjoint then adjit-tangent): each accumulates its gradients and
    their tangents. Exact through loops, checkpoints and in-place updates,
    like the adjoint. The inputs' ``.grad`` are not changed. Steps other than
    launches raise GradientError, as in ``jvp``."""
    fn_name, inputs, tangent_of = _input_tangents("hvp", fn, inputs, tangents)

    # The inputs' gradients are set aside: the reverse pass accumulates into
    # fresh ones, which are returned.
    differentiable = {id(a): a for a in inputs if isinstance(a, Array) and is_differentiable(a.dtype)}
    saved = {key: (a.requires_grad, a.grad) for key, a in differentiable.items()}
    try:
        for a in differentiable.values():
            a.requires_grad = False
            a.requires_grad = True
        tape = Tape()
        with tape:
            loss = fn(*inputs)
        results = [loss] if output_grads is None or isinstance(loss, Array) else loss
        if not isinstance(results, (list, tuple)) or not all(
                isinstance(r, Array) and r.grad is not None for r in results):
            raise TypeError(f"autograd.hvp of {fn_name}: fn must return the loss (or, with output_grads, its "
                            "outputs), adjit arrays with a gradient (requires_grad=True), got "
                            f"{_describe(loss)}")
        seeds = [1.0] if output_grads is None else list(output_grads)
        if len(seeds) != len(results):
            raise ValueError(f"autograd.hvp of {fn_name}: {len(seeds)} output_grads for {len(results)} outputs")
        steps = tape.launch_steps()
        step_tangents = _forward_tangents(steps, tangent_of, fn_name)

        # Reverse: the outputs' gradients seeded, their tangents zero.
        for r, seed in zip(results, seeds):
            set_values(r.grad, seed.numpy() if isinstance(seed, Array) else seed)
        grad_tangent_of: dict[int, Array] = {}

        def grad_tangent(g: Array) -> Array:
            if id(g) not in grad_tangent_of:
                grad_tangent_of[id(g)] = zeros_like(g, requires_grad=False)
            return grad_tangent_of[id(g)]

        for step, step_tangent_args in zip(reversed(steps), reversed(step_tangents)):
            kernel = step.kernel
            grads = [grad_or_scratch(a) for a, t in zip(step.grads_of, kernel.arg_types)
                     if isinstance(t, T.ArrayType)]
            float_grads = [g for g, t in zip(grads, [t for t in kernel.arg_types if isinstance(t, T.ArrayType)])
                           if is_differentiable(t)]
            launch_adjoint_tangent(kernel, step.dim, step.captured, grads, step_tangent_args,
                                   [grad_tangent(g) for g in float_grads], step.finals,
                                   compiled_from=step.compiled_from)
        gradients, hvps = [], []
        for a in inputs:
            if id(a) not in differentiable:
                gradients.append(None)
                hvps.append(None)
                continue
            gradients.append(a.grad.numpy().copy())
            product = grad_tangent_of.get(id(a.grad))
            hvps.append(product.numpy().copy() if product is not None else np.zeros_like(a.grad.numpy()))
    finally:
        for key, a in differentiable.items():
            requires, grad = saved[key]
            a.requires_grad = requires
            a.grad = grad
    return loss, gradients, hvps


def _forward_tangents(steps: list, tangent_of: dict, fn_name: str) -> list[list]:
    """Runs the recorded launches forward as tangent kernels, on the values
    each read, and returns each launch's tangent arguments as they were when
    it ran (a tangent array that a launch or a later one overwrites is copied
    first)."""
    written_later: set[int] = set()
    written_from = []  # for each step, ids of the arrays it or a later step writes
    for step in reversed(steps):
        written_later |= {id(a) for a, w in zip(step.grads_of, step.writes) if isinstance(a, Array) and w}
        written_from.append(set(written_later))
    written_from.reverse()
    out = []
    for step, overwritten in zip(steps, written_from):
        kernel = step.kernel
        run_args, keep = [], []
        for param, t, value in zip(kernel.arg_names, kernel.arg_types, step.grads_of):
            if not is_differentiable(t):
                continue
            if not isinstance(t, T.ArrayType):
                zero = value_tangent(f"kernel '{kernel.__name__}' argument '{param}'", t, None)
                run_args.append(zero)
                keep.append(zero)
                continue
            known = tangent_of.get(id(value))
            tangent = known[1] if known else _track(tangent_of, value, zeros_like(value, requires_grad=False),
                                                    fn_name)
            run_args.append(tangent)
            keep.append(_copy(tangent) if id(value) in overwritten else tangent)
        primal = [_copy(a) if isinstance(a, Array) and w else a for a, w in zip(step.captured, step.writes)]
        launch_tangent(kernel, step.dim, primal, run_args, record=False, compiled_from=step.compiled_from)
        out.append(keep)
    return out


def _copy(a: Array) -> Array:
    return array(a.numpy().copy(), dtype=a.dtype, device=a.device)


def _track(tangent_of: dict, value: Array, tangent: Array, fn_name: str) -> Array:
    """Adds ``value``'s tangent array; GradientError if ``value`` shares
    memory with another array seen (views would need one shared tangent)."""
    for other, _ in tangent_of.values():
        if other is not value and may_share_memory(other._buffer, value._buffer):
            raise GradientError(f"autograd.jvp of {fn_name}: two different arrays share memory (views of one "
                                "buffer); forward mode gives each array its own tangent, so it does not support "
                                "views of the arrays it differentiates (pass copies)")
    tangent_of[id(value)] = (value, tangent)
    return tangent


def _describe(value) -> str:
    if isinstance(value, Array):
        return f"an array of {value.dtype}"
    return f"a {type(value).__name__}"


def jacobian_fd(function, dim=None, inputs=None, outputs=None, input_output_mask=None, device=None,
                max_blocks: int = 0, block_dim: int = 256, max_inputs_per_var: int = -1, eps: float = 1e-4,
                plot_jacobians: bool = False, metadata=None) -> JacobianDict:
    """The Jacobians of ``jacobian`` by central finite differences (2 runs per
    input element), Warp's signature: ``function`` a kernel or a Python
    function of launches, as for ``jacobian``; 2-D float64 arrays.
    ``max_inputs_per_var`` > 0 differentiates only that many elements of each
    input (the other columns stay zero). A kernel's outputs are restored
    before each launch (kernels that accumulate into outputs are handled); a
    function must make fresh outputs, or overwrite them, on every call."""
    if metadata is not None:
        raise TypeError("jacobian_fd: metadata= (Warp's FunctionMetadata) is not supported")
    if isinstance(function, Kernel):
        where = _check_kernel_call("jacobian_fd", function, dim, inputs, outputs, device, max_blocks, block_dim)
        numeric = _kernel_jacobian_fd(function, dim, list(inputs or ()), list(outputs or ()), input_output_mask,
                                      eps, max_inputs_per_var)
        names = (function.__name__, numeric._names_in, numeric._names_out)
    else:
        numeric = _function_jacobian_fd(function, dim, inputs, outputs, input_output_mask, eps, max_inputs_per_var)
        names = (getattr(function, "__name__", "function"), numeric._names_in, numeric._names_out)
        where = arrays_device("jacobian_fd", inputs or ())
    result = _as_arrays(numeric, where)
    if plot_jacobians:
        jacobian_plot(result, names, inputs)
    return result


def _function_jacobian_fd(function, dim, inputs, outputs, mask, eps, max_inputs_per_var) -> JacobianDict:
    inputs, names_in = _function_call("jacobian_fd", function, dim, inputs, outputs)
    fn_name = getattr(function, "__name__", repr(function))

    def evaluate():
        return [np.asarray(o.numpy(), np.float64).reshape(-1).copy()
                for o in _function_outputs("jacobian_fd", fn_name, function(*inputs))]
    base = _function_outputs("jacobian_fd", fn_name, function(*inputs))
    names_out = _output_names(function, base)
    pairs = _function_pairs("jacobian_fd", fn_name, inputs, base, names_in, names_out, mask)
    result = JacobianDict(names_in, names_out)
    for i in sorted({i for i, _ in pairs}):
        flat = FlatNumbers(inputs[i])
        jac = {o: np.zeros((_numbers(base[o]), flat.size)) for ii, o in pairs if ii == i}
        for col in range(min(flat.size, _row_limit(max_inputs_per_var))):
            original = flat[col].copy()
            flat[col] = original + eps
            plus = evaluate()
            flat[col] = original - eps
            minus = evaluate()
            flat[col] = original
            for o in jac:
                jac[o][:, col] = (plus[o] - minus[o]) / (2 * eps)
        for o, value in jac.items():
            result[(i, o)] = value
    function(*inputs)  # leave what the function writes as at the original inputs
    return result


def _kernel_jacobian_fd(kernel: Kernel, dim, inputs, outputs, input_output_mask=None,
                        eps: float = 1e-4, max_inputs_per_var: int = -1) -> JacobianDict:
    """Central finite differences of one launch (numpy values). Outputs are
    restored to their values before each launch, so kernels that accumulate
    into outputs are handled."""
    pairs, names_in, names_out = _pairs(kernel, inputs, outputs, input_output_mask)
    initial = [o.numpy().copy() if isinstance(o, Array) else o for o in outputs]

    def evaluate():
        for o, init in zip(outputs, initial):
            if isinstance(o, Array):
                set_values(o, init)
        launch(kernel, dim, inputs=inputs, outputs=outputs)
        return [o.numpy().astype(np.float64).reshape(-1).copy() if isinstance(o, Array) else None
                for o in outputs]

    result = JacobianDict(names_in, names_out)
    for i in sorted({i for i, _ in pairs}):
        flat = FlatNumbers(inputs[i])
        outs = [o for ii, o in pairs if ii == i]
        jac = {o: np.zeros((_numbers(outputs[o]), flat.size)) for o in outs}
        for col in range(min(flat.size, _row_limit(max_inputs_per_var))):
            original = flat[col].copy()
            flat[col] = original + eps
            plus = evaluate()
            flat[col] = original - eps
            minus = evaluate()
            flat[col] = original
            for o in outs:
                jac[o][:, col] = (plus[o] - minus[o]) / (2 * eps)
        for o in outs:
            result[(i, o)] = jac[o]
    evaluate()  # leave the outputs as one launch at the original inputs leaves them
    return result


@dataclass
class GradcheckResult:
    """Whether the adjoint Jacobians match finite differences, and how closely."""

    passed: bool
    report: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.report


@dataclass(frozen=True)
class JacobianComparison:
    """One adjoint Jacobian against its finite-difference one, entry by entry:
    an entry fails unless ``|J - J_fd| <= atol + rtol * |J_fd|`` (so a NaN fails)."""

    pair: tuple  # (input index, output index)
    analytic: np.ndarray
    numeric: np.ndarray
    error: np.ndarray  # |J - J_fd|
    allowed: np.ndarray  # atol + rtol * |J_fd|

    @property
    def failed(self) -> np.ndarray:
        """The entries out of tolerance (a boolean mask); a NaN entry is out."""
        return ~(self.error <= self.allowed)

    @property
    def passed(self) -> bool:
        return not self.failed.any()

    @property
    def max_error(self) -> float:
        return float(self.error.max()) if self.error.size else 0.0

    def worst(self, count: int) -> list:
        """Up to ``count`` failing entries ``(row, column)``, the farthest out of tolerance first."""
        order = np.argsort(-(self.error - self.allowed), axis=None)[:count]
        entries = [np.unravel_index(flat, self.error.shape) for flat in order]
        return [(int(r), int(c)) for r, c in entries if self.failed[r, c]]


def compare_jacobians(analytic, numeric, rtol: float, atol: float) -> list:
    """Compares the Jacobians ``{(i, o): J}`` with ``{(i, o): J_fd}``
    elementwise; one JacobianComparison per pair, in sorted order."""
    out = []
    for pair in sorted(analytic):
        j, fd = analytic[pair], numeric[pair]
        out.append(JacobianComparison(pair, j, fd, np.abs(j - fd), atol + rtol * np.abs(fd)))
    return out


def gradcheck_result(function, dim=None, inputs=None, outputs=None, *, eps: float = 1e-4, atol: float = 1e-3,
              rtol: float = 1e-2, raise_exception: bool = True, input_output_mask=None, device=None,
              max_blocks: int = 0, block_dim: int = 256, max_inputs_per_var: int = -1,
              max_outputs_per_var: int = -1, plot_relative_error: bool = False, plot_absolute_error: bool = False,
              show_summary: bool = True) -> GradcheckResult:
    """``gradcheck`` returning a GradcheckResult (truthy when it passes, with
    its readable report) instead of Warp's plain bool.

    Compares ``jacobian`` with ``jacobian_fd`` elementwise (Warp's
    signature): passes when no adjoint entry is NaN and every entry has
    ``|J - J_fd| <= atol + rtol * |J_fd|``. ``function``: a kernel (with
    ``dim``, ``inputs``, ``outputs``) or a Python function of launches.

    Returns a GradcheckResult, truthy when it passes, with a readable report
    (printed when ``show_summary``). ``raise_exception``: a failure raises a
    ValueError carrying the report. ``max_outputs_per_var`` /
    ``max_inputs_per_var`` limit the rows / columns compared.
    ``plot_relative_error`` / ``plot_absolute_error`` show the error
    matrices with ``jacobian_plot``. The defaults suit float32 kernels; for
    tight checks compile the kernel for float64 and lower them."""
    analytic = jacobian(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                        max_outputs_per_var)
    numeric = jacobian_fd(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                          max_inputs_per_var, eps)
    rows = max_outputs_per_var if max_outputs_per_var > 0 else None
    cols = max_inputs_per_var if max_inputs_per_var > 0 else None
    a = {key: value.numpy()[:rows, :cols] for key, value in dict.items(analytic)}
    n = {key: value.numpy()[:rows, :cols] for key, value in dict.items(numeric)}
    comparisons = compare_jacobians(a, n, rtol, atol)
    names_in, names_out = analytic._names_in, analytic._names_out
    lines = []
    for c in comparisons:
        i, o = c.pair
        line = (f"{'ok  ' if c.passed else 'FAIL'} d {names_out[o]} / d {names_in[i]}: "
                f"max |J - J_fd| = {c.max_error:.3g}")
        if np.isnan(c.analytic).any():
            line += ", the adjoint has NaN entries"
        elif not c.passed:
            worst = c.worst(1)[0]
            line += (f", {int(c.failed.sum())} of {c.failed.size} entries out of tolerance; worst at "
                     f"(output {worst[0]}, input {worst[1]}): adjoint {c.analytic[worst]:.6g} vs "
                     f"finite difference {c.numeric[worst]:.6g}")
        lines.append(line)
    passed = all(c.passed for c in comparisons)
    what = f"kernel '{function.__name__}'" if isinstance(function, Kernel) else \
        f"function '{getattr(function, '__name__', 'function')}'"
    header = f"gradcheck of {what}: {'passed' if passed else 'FAILED'} (eps={eps}, atol={atol}, rtol={rtol})"
    result = GradcheckResult(passed, "\n".join([header] + lines))
    for wanted, label, error in ((plot_absolute_error, "absolute", lambda c: c.error),
                                 (plot_relative_error, "relative", lambda c: c.error / np.maximum(np.abs(c.numeric),
                                                                                                  1e-30))):
        if wanted:
            errors = JacobianDict(names_in, names_out)
            for c in comparisons:
                errors[c.pair] = error(c)
            jacobian_plot(errors, function, inputs, title=f"{label} error of {what}")
    if show_summary:
        print(result.report)
    if raise_exception and not passed:
        raise ValueError(result.report)
    return result


def gradcheck_tape_result(tape, *, eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2,
                   raise_exception: bool = True, input_output_masks: dict | None = None,
                   blacklist_kernels=None, whitelist_kernels=None, max_inputs_per_var: int = -1,
                   max_outputs_per_var: int = -1, plot_relative_error: bool = False,
                   plot_absolute_error: bool = False, show_summary: bool = True, reverse_launches: bool = False,
                   skip_to_launch_index: int = 0) -> GradcheckResult:
    """``gradcheck_tape`` returning a GradcheckResult (its report) instead
    of Warp's plain bool: ``gradcheck`` of every kernel launch recorded on
    ``tape`` (Warp's signature), each on copies of the arrays as that launch read them (the
    tape's snapshots), so the caller's arrays are left alone. Steps other
    than launches (``record_func``, copies) are not checked; a launch with
    no float input and output array, or with struct parameters, is reported
    as skipped. ``input_output_masks``: per kernel key, a mask as in
    ``jacobian``; ``blacklist_kernels`` / ``whitelist_kernels``: kernels (or
    their keys) to skip / to check only; ``reverse_launches`` checks the
    latest first, from launch ``skip_to_launch_index`` on."""
    from .runtime.tape import _LaunchStep
    launches = [s for s in tape._steps if isinstance(s, _LaunchStep)]
    order = list(range(len(launches)))
    if reverse_launches:
        order.reverse()
    order = order[skip_to_launch_index:]
    keys = lambda kernels: {k.key if isinstance(k, Kernel) else k for k in kernels or ()}  # noqa: E731
    black, white = keys(blacklist_kernels), keys(whitelist_kernels)
    lines, passed = [], True
    for index in order:
        step = launches[index]
        kernel = step.kernel
        label = f"launch {index} of kernel '{kernel.__name__}'"
        if kernel.key in black or (white and kernel.key not in white):
            lines.append(f"skip {label}: not selected")
            continue
        n_inputs = getattr(step, "n_inputs", None)
        if n_inputs is None or len(kernel.arg_names) != len(kernel.param_names):
            lines.append(f"skip {label}: struct parameters are not differentiated by gradcheck")
            continue
        args = [Array(a._buffer.copy(), a.dtype, False, a.device) if isinstance(a, Array) else a
                for a in step.captured]
        in_place = [p for p in written_arguments(kernel) if p < n_inputs and isinstance(args[p], Array)]
        if in_place:  # outputs among the inputs: d (array after) / d (arrays before), through clones
            function, call = _in_place_function(kernel, step.dim, n_inputs), dict(inputs=args)
        else:
            function, call = kernel, dict(dim=step.dim, inputs=args[:n_inputs], outputs=args[n_inputs:])
        try:
            result = gradcheck_result(function, **call, eps=eps, atol=atol, rtol=rtol, raise_exception=False,
                               input_output_mask=(input_output_masks or {}).get(kernel.key),
                               max_inputs_per_var=max_inputs_per_var, max_outputs_per_var=max_outputs_per_var,
                               plot_relative_error=plot_relative_error, plot_absolute_error=plot_absolute_error,
                               show_summary=False)
        except GradientError as e:
            lines.append(f"skip {label}: {e}")
            continue
        passed = passed and bool(result)
        lines.append(f"{'ok  ' if result else 'FAIL'} {label}")
        lines += ["    " + line for line in result.report.splitlines()[1:]]
    header = (f"gradcheck_tape of {len(launches)} launches: {'passed' if passed else 'FAILED'} "
              f"(eps={eps}, atol={atol}, rtol={rtol})")
    result = GradcheckResult(passed, "\n".join([header] + lines))
    if show_summary:
        print(result.report)
    if raise_exception and not passed:
        raise ValueError(result.report)
    return result


def gradcheck(function, dim=None, inputs=None, outputs=None, *, eps: float = 1e-4, atol: float = 1e-3,
              rtol: float = 1e-2, raise_exception: bool = True, input_output_mask=None, device=None,
              max_blocks: int = 0, block_dim: int = 256, max_inputs_per_var: int = -1,
              max_outputs_per_var: int = -1, plot_relative_error: bool = False, plot_absolute_error: bool = False,
              show_summary: bool = True) -> bool:
    """Whether the adjoint Jacobians match finite differences (Warp's
    signature and plain ``bool`` result; ``gradcheck_result`` takes the same
    arguments and returns the report too). See ``gradcheck_result``."""
    return gradcheck_result(function, dim, inputs, outputs, eps=eps, atol=atol, rtol=rtol,
                            raise_exception=raise_exception, input_output_mask=input_output_mask, device=device,
                            max_blocks=max_blocks, block_dim=block_dim, max_inputs_per_var=max_inputs_per_var,
                            max_outputs_per_var=max_outputs_per_var, plot_relative_error=plot_relative_error,
                            plot_absolute_error=plot_absolute_error, show_summary=show_summary).passed


def gradcheck_tape(tape, *, eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2,
                   raise_exception: bool = True, input_output_masks: dict | None = None,
                   blacklist_kernels=None, whitelist_kernels=None, max_inputs_per_var: int = -1,
                   max_outputs_per_var: int = -1, plot_relative_error: bool = False,
                   plot_absolute_error: bool = False, show_summary: bool = True, reverse_launches: bool = False,
                   skip_to_launch_index: int = 0) -> bool:
    """Whether every launch on ``tape`` passes ``gradcheck`` (Warp's signature
    and plain ``bool`` result; ``gradcheck_tape_result`` takes the same
    arguments and returns the report too)."""
    return gradcheck_tape_result(tape, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                                 input_output_masks=input_output_masks, blacklist_kernels=blacklist_kernels,
                                 whitelist_kernels=whitelist_kernels, max_inputs_per_var=max_inputs_per_var,
                                 max_outputs_per_var=max_outputs_per_var, plot_relative_error=plot_relative_error,
                                 plot_absolute_error=plot_absolute_error, show_summary=show_summary,
                                 reverse_launches=reverse_launches,
                                 skip_to_launch_index=skip_to_launch_index).passed


def _in_place_function(kernel: Kernel, dim, n_inputs: int):
    """A launch of ``kernel`` as a function of its arguments that returns the
    arrays it writes, written into clones (so that their values before and
    after are separate arrays, as a Jacobian needs)."""
    written = [p for p in written_arguments(kernel)]

    def launch_on_clones(*values):
        values = list(values)
        for p in written:
            values[p] = clone(values[p], requires_grad=True)
        launch(kernel, dim, inputs=values[:n_inputs], outputs=values[n_inputs:])
        return [values[p] for p in written]
    launch_on_clones.__name__ = kernel.__name__
    launch_on_clones.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY) for name in kernel.param_names])
    launch_on_clones.output_names = [f"{kernel.param_names[p]} (after)" for p in written]
    return launch_on_clones



def __getattr__(name: str):
    # Only called for names this module lacks: Warp code asking for one gets a
    # NotInAdjitError naming it (errors.missing_name), never a bare AttributeError.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys as _sys
    from .errors import missing_name
    raise missing_name(__name__, name, _sys._getframe(1))
