"""The tape: records launches (and array copies) for reverse-mode gradients.

``with adjit.Tape() as tape:`` records every launch made inside it;
``tape.backward(loss=...)`` (or ``grads={array: seed}``) then runs the
recorded steps' adjoints in reverse order, accumulating into ``.grad``.

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
from typing import Callable

import numpy as np

from ..errors import GradientError
from . import recording
from .access import Access
from .array import Array

#: Runs the adjoint of a recorded launch:
#: ``run_adjoint(kernel, dim, primal_args, grads_of)`` (see ``adjit.launch``).
RunAdjoint = Callable[[object, object, list, list], None]

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
                      run_adjoint: RunAdjoint) -> None:
        """Records a launch of ``kernel`` (whose array access analysis is
        ``access``); on backward(), ``run_adjoint`` runs its adjoint. The
        caller bumps the written arrays' versions (once, however many tapes
        record the launch)."""
        with self._lock:
            self._record_launch(kernel, dim, args, access, run_adjoint)

    def _record_launch(self, kernel, dim, args, access, run_adjoint) -> None:
        # Arrays passed to several parameters: fine while none of those is
        # written (their adjoints all add into the one .grad); a write through
        # one parameter would change what the others read.
        arrays = [(name, a, acc.writes)
                  for name, a, acc in zip(kernel.arg_names, args, access) if isinstance(a, Array)]
        for i, (name_a, a, writes_a) in enumerate(arrays):
            for name_b, b, writes_b in arrays[i + 1:]:
                if (writes_a or writes_b) and np.may_share_memory(a._buffer, b._buffer):
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
        captured = [_snapshot(a) if isinstance(a, Array) and acc.reads and (acc.writes or a._writable_elsewhere)
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
                           run_adjoint)
        for k, acc in enumerate(access):
            if isinstance(captured[k], Array) and acc.reads and captured[k] is args[k]:
                self._readers.setdefault(id(args[k]), []).append((step, k))
                args[k]._hold(self)
        self._steps.append(step)

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
        """Called before ``array`` is overwritten: recorded steps that read it
        switch to a snapshot of its current values."""
        with self._lock:
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

    def record(self, backward: Callable[[], None], arrays=()) -> None:
        """Records a custom step: ``backward()`` runs in reverse order."""
        with self._lock:
            for a in arrays:
                self._arrays[id(a)] = a
            self._steps.append(backward)

    # --- replay ---------------------------------------------------------------

    def backward(self, loss: Array | None = None, grads: dict | None = None) -> None:
        """Runs the recorded adjoints in reverse order.

        ``loss``: an array whose gradient is seeded with ones (a one-element
        loss, or the sum of its elements). ``grads``: ``{array: seed}`` to seed
        any outputs' gradients explicitly. Gradients accumulate into ``.grad``.
        """
        with self._lock:
            self._backward(loss, grads)

    def _backward(self, loss, grads) -> None:
        if loss is not None:
            _require_grad(loss, "loss")
            loss.grad._buffer[...] = 1
        for array, seed in (grads or {}).items():
            _require_grad(array, "grads")
            array.grad._buffer[...] = seed._buffer if isinstance(seed, Array) else seed
        for step in reversed(self._steps):
            step()

    def zero(self) -> None:
        """Zeroes the gradients of every array the tape has seen."""
        with self._lock:
            for a in self._arrays.values():
                if a.grad is not None:
                    a.grad._buffer[...] = 0

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
                 run_adjoint: RunAdjoint):
        self.kernel, self.dim, self.captured, self.grads_of = kernel, dim, captured, grads_of
        self.versions = [a._version if isinstance(a, Array) else None for a in captured]
        # Only values the adjoint replays matter: arrays the kernel reads.
        self.reads = reads
        self.run_adjoint = run_adjoint

    def __call__(self) -> None:
        for name, a, version, read in zip(self.kernel.arg_names, self.captured, self.versions,
                                          self.reads):
            if read and isinstance(a, Array) and a._version != version:
                raise GradientError(
                    f"the array passed as '{name}' to kernel '{self.kernel.__name__}' was overwritten "
                    "after the launch was recorded, outside the tape, and its recorded values "
                    "were not saved; record that write on the tape too (or launch on a copy)")
        self.run_adjoint(self.kernel, self.dim, self.captured, self.grads_of)


def _snapshot(array: Array) -> Array:
    """A copy of the values (no gradient of its own: the original's is used)."""
    return Array(array._buffer.copy(), array.dtype, False, array.device)


def _require_grad(array: Array, what: str) -> None:
    if not isinstance(array, Array) or array.grad is None:
        raise GradientError(f"backward({what}=...) needs an array created with requires_grad=True")
