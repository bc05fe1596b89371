"""The tape: records launches (and array copies) for reverse-mode gradients.

``with adjit.Tape() as tape:`` records every launch made inside it;
``tape.backward(loss=...)`` (or ``grads={array: seed}``) then runs the
recorded steps' adjoints in reverse order, accumulating into ``.grad``.
``tape.replay_forward(...)`` runs the recorded launches again in order, for
forward mode (``adjit.autograd.jvp``); ``launch_steps()`` hands them to
forward over reverse (``adjit.autograd.hvp``).

Gradient slots of outputs are consumed: the adjoint of a store reads the
stored element's gradient, passes it on and zeroes it, because the value
that was there before the store did not reach the output. Gradients of
inputs accumulate across backward calls; ``tape.zero()`` clears them.

Nested tapes: a tape opened inside another records into both; each tape's
``backward()`` replays its own steps (calling both accumulates twice).

Threads: each thread has its own active tapes. One tape may be shared by
several threads (each enters it with ``with tape:``): recording takes the
tape's lock, and a launch recorded on a tape runs under that lock, so the
tape's steps are in the order the launches ran.

A recorded launch whose written arrays have no gradient while some array it
reads has one stops the gradient there: logger ``adjit.tape`` warns, once per
tape (give the outputs ``requires_grad=True`` to pass gradients through).
"""
from __future__ import annotations

import logging
import threading
import types
from typing import Callable

from ..errors import GradientError
from . import recording
from .access import Access
from . import capture
from .array import Array, _set, numbers_for
from .cuda_memory import may_share_memory
from .struct_array import StructArray, field_seeds

#: Runs the adjoint of a recorded launch:
#: ``run_adjoint(kernel, dim, primal_args, grads_of, finals, compiled_from=)``
#: (see ``adjit.launch``; ``finals``: the arrays float atomic min/max wrote,
#: as the launch left them, or None; ``compiled_from``: what the launch's
#: code was compiled from, which its adjoint's must match).
RunAdjoint = Callable[[object, object, list, list], None]
#: Runs the tangent kernel of a recorded launch:
#: ``run_tangent(kernel, dim, primal_args, arrays, compiled_from)`` (see ``replay_forward``).
RunTangent = Callable[[object, object, list, list], None]

logger = logging.getLogger("adjit.tape")


class Tape:
    """Records launches for reverse-mode differentiation (as Warp's Tape)."""

    def __init__(self):
        self._steps: list[Callable[[], None]] = []
        self._arrays: dict[int, Array] = {}
        # id(array) -> [(captured argument list, position, version)] of
        # recorded launches that read the array and still refer to it.
        self._readers: dict[int, list] = {}
        # Held while recording and while a recorded launch runs (re-entrant:
        # a launch holds it while recording into it).
        self._lock = threading.RLock()
        self._warned_gradient_stops = False

    def __enter__(self) -> "Tape":
        recording.push(self)
        return self

    def __exit__(self, *exc) -> None:
        recording.pop(self)

    # --- recording ------------------------------------------------------------

    def record_launch(self, kernel, dim, args: list, access: list[Access],
                      run_adjoint: RunAdjoint) -> "_LaunchStep":
        """Records a launch of ``kernel`` (whose array access analysis is
        ``access``); on backward(), ``run_adjoint`` runs its adjoint. The
        caller bumps the written arrays' versions (once, however many tapes
        record the launch), and after the launch gives the step the arrays
        float atomic min/max wrote (``step.finals``). Returns the step."""
        with self._lock:
            return self._record_launch(kernel, dim, args, access, run_adjoint)

    def _record_launch(self, kernel, dim, args, access, run_adjoint) -> "_LaunchStep":
        # Arrays passed to several parameters: fine while none of those is
        # written (their adjoints all add into the one .grad); a write through
        # one parameter would change what the others read.
        arrays = [(name, a, acc.writes)
                  for name, a, acc in zip(kernel.arg_names, args, access) if isinstance(a, Array)]
        for i, (name_a, a, writes_a) in enumerate(arrays):
            for name_b, b, writes_b in arrays[i + 1:]:
                if (writes_a or writes_b) and may_share_memory(a._buffer, b._buffer):
                    written = name_a if writes_a else name_b
                    raise GradientError(
                        f"kernel '{kernel.__name__}': arguments '{name_a}' and '{name_b}' share memory and "
                        f"the kernel writes '{written}'; gradients of launches that write an array also "
                        "passed to another parameter are not supported (pass distinct arrays, e.g. "
                        "adjit.clone() one of them)")
        for _, a, _ in arrays:
            self._arrays[id(a)] = a
        # This launch overwrites some arrays: earlier steps that still need
        # their current values get a snapshot first.
        for a, acc in zip(args, access):
            if isinstance(a, Array) and acc.writes:
                self.protect(a)
        captured = [_snapshot(a) if isinstance(a, Array) and (
                        acc.reads and (acc.writes or a._writable_elsewhere) or acc.float_min_max)
                    else a for a, acc in zip(args, access)]
        # (An array read and overwritten by this very launch: its adjoint
        # needs the values from before it, kept in a snapshot; the compiler
        # accepts only the patterns where that is exact. An array that memory
        # outside adjit may write (a numpy view handed out and alive, a
        # buffer shared with numpy or torch): snapshot too, as adjit would
        # not see such a write.)
        if not self._warned_gradient_stops:
            self._warn_if_gradient_stops(kernel, arrays)
        step = _LaunchStep(kernel, dim, captured, list(args), [acc.reads for acc in access],
                           run_adjoint, [acc.writes for acc in access])
        for k, acc in enumerate(access):
            if isinstance(captured[k], Array) and acc.reads and captured[k] is args[k]:
                self._readers.setdefault(id(args[k]), []).append((step, k))
                args[k]._hold(self)
        self._steps.append(step)
        return step

    def _warn_if_gradient_stops(self, kernel, arrays) -> None:
        written = [(name, a) for name, a, writes in arrays if writes]
        with_grad = [name for name, a, writes in arrays if not writes and a.grad is not None]
        if written and with_grad and all(a.grad is None for _, a in written):
            self._warned_gradient_stops = True
            logger.warning(
                "kernel '%s' reads arrays with a gradient (%s) but the arrays it writes (%s) have no "
                "gradient, so the gradient stops at this launch; create the written arrays with "
                "requires_grad=True (or set a.requires_grad = True) to pass it on (warned once per tape)",
                kernel.__name__, ", ".join(f"'{n}'" for n in with_grad),
                ", ".join(f"'{n}'" for n, _ in written))

    def protect(self, array: Array) -> None:
        """Called before ``array`` is overwritten: recorded steps that read it,
        or another view of its memory, switch to a snapshot of the current
        values."""
        with self._lock:
            for alias in array._aliases():
                self._protect_one(alias)

    def _protect_one(self, array: Array) -> None:
        readers = self._readers.pop(id(array), None)
        if not readers:
            return
        snapshot = _snapshot(array)
        for step, k in readers:
            # Only if the step still sees the values it read; otherwise the
            # step reports the overwrite when it runs.
            if step.captured[k] is array and array._version == step.versions[k]:
                step.captured[k] = snapshot
                step.versions[k] = snapshot._version

    def record(self, backward: Callable[[], None], arrays=(), *, name: str | None = None,
               inputs=(), outputs=()) -> None:
        """Records a custom step: ``backward()`` runs in reverse order.
        ``arrays``: the arrays whose gradients ``zero()`` clears; ``name``,
        ``inputs`` and ``outputs`` only label the step in ``visualize()``."""
        with self._lock:
            for a in arrays:
                self._arrays[id(a)] = a
            self._steps.append(_CustomStep(backward, name or getattr(backward, "__name__", "func"),
                                           list(inputs), list(outputs)))

    def record_func(self, backward: Callable[[], None], arrays) -> None:
        """Records a Python function run in the backward pass (as Warp's):
        ``backward()`` is called, with no arguments, in reverse order among
        the recorded launches. ``arrays``: the arrays it uses, each with a
        gradient (``zero()`` clears them, ``gradients`` lists them).

        The function reads arrays when backward() runs: the tape does not
        save their values, so it must not rely on values overwritten since."""
        if not callable(backward):
            raise TypeError(f"record_func: backward must be callable, got {type(backward).__name__}")
        arrays = list(arrays)
        for a in arrays:
            if not isinstance(a, Array):
                raise TypeError(f"record_func: arrays must be adjit arrays, got {type(a).__name__}")
            if a.grad is None:
                raise GradientError(f"record_func: {a!r} has no gradient; create it with requires_grad=True "
                                    "(or set a.requires_grad = True)")
        self.record(backward, arrays, inputs=arrays)

    @property
    def gradients(self) -> types.MappingProxyType:
        """{array: its gradient array} for every array with a gradient that
        the tape has seen (as Warp's ``Tape.gradients``); read-only (seed
        gradients with ``backward(grads=...)``)."""
        with self._lock:
            return types.MappingProxyType({a: a.grad for a in self._arrays.values() if a.grad is not None})

    # --- replay ---------------------------------------------------------------

    def backward(self, loss: Array | None = None, grads: dict | None = None) -> None:
        """Runs the recorded adjoints in reverse order.

        ``loss``: an array whose gradient is seeded with ones (a one-element
        loss, or the sum of its elements). ``grads``: ``{array: seed}`` to seed
        any outputs' gradients explicitly (an array of structs: its float
        fields', from an array of structs or a numpy structured array).
        Gradients accumulate into ``.grad``.
        """
        with self._lock:
            self._backward(loss, grads)

    def _backward(self, loss, grads) -> None:
        if loss is not None:
            _require_grad(loss, "loss")
            _write(loss.grad, numbers_for(loss.grad, 1))
        seeds = []
        for array, seed in (grads or {}).items():
            seeds += field_seeds(array, seed) if isinstance(array, StructArray) else [(array, seed)]
        for array, seed in seeds:
            _require_grad(array, "grads")
            _write(array.grad, seed._buffer if isinstance(seed, Array) else numbers_for(array.grad, seed))
        for step in reversed(self._steps):
            step()

    def replay_forward(self, run_tangent: RunTangent) -> None:
        """Runs the recorded launches again in the order they ran, through
        ``run_tangent(kernel, dim, primal_args, arrays, compiled_from)`` (forward mode):
        ``primal_args`` hold the values each launch read, its written arrays
        being scratch copies (the replay changes neither the arrays nor what
        the tape saved); ``arrays`` are the arguments it was given;
        ``compiled_from``: what its code was compiled from. A
        recorded step other than a launch (a copy, ``record_func``) has no
        forward mode: GradientError naming it."""
        with self._lock:
            for step in self._steps:
                if not isinstance(step, _LaunchStep):
                    raise GradientError(
                        f"forward mode replays kernel launches only, and the tape recorded the step "
                        f"'{step.label}', which has no tangent; compute it with a kernel instead")
                step.check_unchanged()
                primal = [_snapshot(a) if isinstance(a, Array) and writes else a
                          for a, writes in zip(step.captured, step.writes)]
                run_tangent(step.kernel, step.dim, primal, step.grads_of, step.compiled_from)

    def launch_steps(self) -> list:
        """The recorded launches in the order they ran, each checked to still
        see the values it read (forward-over-reverse replays them both ways).
        A recorded step other than a launch: GradientError naming it."""
        with self._lock:
            for step in self._steps:
                if not isinstance(step, _LaunchStep):
                    raise GradientError(
                        f"second-order differentiation replays kernel launches only, and the tape recorded "
                        f"the step '{step.label}'; compute it with a kernel instead")
                step.check_unchanged()
            return list(self._steps)

    def visualize(self, filename: str | None = None, simplify_graph: bool = True,
                  hide_readonly_arrays: bool = False, array_labels: dict | None = None,
                  choose_longest_node_name: bool = True, ignore_graph_scopes: bool = False,
                  track_inputs: list | None = None, track_outputs: list | None = None,
                  track_input_names: list | None = None, track_output_names: list | None = None,
                  graph_direction: str = "LR") -> str:
        """The recorded steps as Graphviz dot text (Warp's signature): a box
        per launch (kernel name and dim) or Python step (copy, clone,
        record_func, ...), an ellipse per array (named by ``array_labels``,
        else by the kernel parameter it was passed as: the longest such name
        with ``choose_longest_node_name``, else the first), an edge from each
        array a step reads and to each array it writes. Written to
        ``filename`` too if given; render with ``dot -Tpng tape.dot``.

        ``hide_readonly_arrays`` leaves out arrays no step writes (except
        ``track_inputs``/``track_outputs``, which are drawn highlighted and
        named by ``track_input_names``/``track_output_names``).
        ``simplify_graph`` and ``ignore_graph_scopes`` have no effect: adjit
        records no scopes and draws every step."""
        if graph_direction not in ("LR", "RL", "TB", "BT"):
            raise ValueError(f"visualize: graph_direction must be 'LR', 'RL', 'TB' or 'BT', got "
                             f"{graph_direction!r}")
        labels = {id(a): str(name) for a, name in (array_labels or {}).items()}
        tracked = {}
        for arrays, names, kind in ((track_inputs, track_input_names, "input"),
                                    (track_outputs, track_output_names, "output")):
            arrays = list(arrays or [])
            names = list(names or [])
            if names and len(names) != len(arrays):
                raise ValueError(f"visualize: track_{kind}_names has {len(names)} names for {len(arrays)} arrays")
            for k, a in enumerate(arrays):
                tracked[id(a)] = kind
                if names:
                    labels.setdefault(id(a), str(names[k]))
        with self._lock:
            steps = list(self._steps)
        arrays: dict[int, Array] = {}
        param_names: dict[int, list[str]] = {}
        written: set[int] = set()
        for step in steps:
            for name, a, _, writes in step.arrays():
                arrays.setdefault(id(a), a)
                if name is not None:
                    param_names.setdefault(id(a), []).append(name)
                if writes:
                    written.add(id(a))
        for kind in ("input", "output"):
            for a in (track_inputs if kind == "input" else track_outputs) or []:
                arrays.setdefault(id(a), a)
        shown = [key for key in arrays if not hide_readonly_arrays or key in written or key in tracked]

        def array_label(key: int, number: int) -> str:
            if key in labels:
                return labels[key]
            names = param_names.get(key)
            if not names:
                return f"array{number}"
            return max(names, key=len) if choose_longest_node_name else names[0]

        lines = ["digraph Tape {", f"  rankdir={graph_direction};",
                 '  node [fontname="Helvetica"];']
        node_of = {}
        for number, key in enumerate(shown):
            a = arrays[key]
            node_of[key] = f"a{number}"
            style = {"input": ', style=filled, fillcolor="#c8e6c9"',
                     "output": ', style=filled, fillcolor="#ffcdd2"'}.get(tracked.get(key), "")
            text = f"{array_label(key, number)}\n{a.dtype} {a.shape}"
            lines.append(f'  a{number} [shape=ellipse, label="{_dot_escape(text)}"{style}];')
        for number, step in enumerate(steps):
            lines.append(f'  s{number} [shape=box, label="{_dot_escape(step.label)}"];')
            for _, a, reads, writes in step.arrays():
                node = node_of.get(id(a))
                if node is None:
                    continue
                if reads:
                    lines.append(f"  {node} -> s{number};")
                if writes:
                    lines.append(f"  s{number} -> {node};")
        lines.append("}")
        text = "\n".join(lines) + "\n"
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    def zero(self) -> None:
        """Zeroes the gradients of every array the tape has seen."""
        with self._lock:
            for a in self._arrays.values():
                if a.grad is not None:
                    _write(a.grad, 0)

    def reset(self) -> None:
        """Forgets the recorded steps and zeroes the gradients."""
        with self._lock:
            self.zero()
            self._steps.clear()
            self._arrays.clear()
            self._readers.clear()
            self._warned_gradient_stops = False


class _LaunchStep:
    """A recorded launch: runs its adjoint, after checking that every array it
    reads still holds the values it read (or was saved before it changed)."""

    def __init__(self, kernel, dim, captured: list, grads_of: list, reads: list[bool],
                 run_adjoint: RunAdjoint, writes: list[bool]):
        self.kernel, self.dim, self.captured, self.grads_of = kernel, dim, captured, grads_of
        self.versions = [a._version if isinstance(a, Array) else None for a in captured]
        # Only values the adjoint replays matter: arrays the kernel reads.
        self.reads = reads
        self.writes = writes
        self.run_adjoint = run_adjoint
        #: The arrays float atomic min/max wrote, as the launch left them
        #: (the launcher sets them after the launch), else None.
        self.finals = None
        #: How many of the arguments were launch()'s inputs (the launcher sets it).
        self.n_inputs = None
        #: What the launch's code was compiled from (the launcher sets it).
        self.compiled_from = None

    @property
    def label(self) -> str:
        return f"{self.kernel.__name__}\ndim={self.dim}"

    def arrays(self):
        """(parameter name, array, read, written) of each array argument."""
        return [(name, a, read, written) for name, a, read, written
                in zip(self.kernel.arg_names, self.grads_of, self.reads, self.writes) if isinstance(a, Array)]

    def __call__(self) -> None:
        self.check_unchanged()
        self.run_adjoint(self.kernel, self.dim, self.captured, self.grads_of, self.finals,
                         compiled_from=self.compiled_from)

    def check_unchanged(self) -> None:
        """GradientError if an array it read was overwritten since, unsaved."""
        for name, a, version, read in zip(self.kernel.arg_names, self.captured, self.versions,
                                          self.reads):
            if read and isinstance(a, Array) and a._version != version:
                raise GradientError(
                    f"the array passed as '{name}' to kernel '{self.kernel.__name__}' was overwritten "
                    "after the launch was recorded, outside the tape, and its recorded values "
                    "were not saved; record that write on the tape too (or launch on a copy)")


class _CustomStep:
    """A recorded Python step (a copy, an overwrite, ``record_func``)."""

    def __init__(self, backward: Callable[[], None], label: str, inputs: list, outputs: list):
        self.backward, self.label, self.inputs, self.outputs = backward, label, inputs, outputs

    def __call__(self) -> None:
        self.backward()

    def arrays(self):
        return ([(None, a, True, False) for a in self.inputs]
                + [(None, a, False, True) for a in self.outputs])


def _dot_escape(text: str) -> str:
    """``text`` inside a dot string literal (line breaks become ``\\n``)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _snapshot(array: Array) -> Array:
    """A copy of the values (no gradient of its own: the original's is used);
    in a capture, taken again at each replay of the graph."""
    snapshot = Array(array._buffer.copy(), array.dtype, False, array.device, _owned=True)
    if capture._open and capture.capturing() is not None:
        capture.record("memory", f"snapshot of {array!r}", lambda: _set(snapshot, array._buffer), (),
                       array.device, ran=True)
    return snapshot


def _write(dest: Array, values) -> None:
    """``dest``'s values set to ``values`` (seeding and zeroing gradients);
    in a capture, recorded for the graph's replays instead."""
    if capture._open and capture.capturing() is not None:
        capture.record("memory", f"gradient values of {dest!r}", lambda: _set(dest, values), (), dest.device)
        return
    dest._buffer[...] = values


def _require_grad(array: Array, what: str) -> None:
    if not isinstance(array, Array) or array.grad is None:
        raise GradientError(f"backward({what}=...) needs an array created with requires_grad=True")
