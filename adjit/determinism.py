"""Warp's names for deterministic execution: ``DeterministicMode`` and
``WarpDeterminismError``, mapped onto ``adjit.config.deterministic``.

adjit's CPU launches are deterministic by default: float atomic adds land in
thread order, so results are bitwise the same on every run and for any
number of threads (docs/determinism.md). Warp's modes mean, in adjit:

- ``NOT_GUARANTEED``: ``adjit.config.deterministic = False`` (atomic adds
  land as the threads run; results may vary in their last bits).
- ``RUN_TO_RUN``: ``adjit.config.deterministic = True`` (the default).
- ``GPU_TO_GPU``: the same bits on other machines and architectures. adjit
  cannot promise that (kernels are compiled for the host CPU, whose
  instruction set changes the code; GPU float atomics are in hardware order), so asking
  for it raises ``WarpDeterminismError``.

The modes are ints (an ``IntEnum``, as Warp's): ``RUN_TO_RUN == True`` and
``NOT_GUARANTEED == False``, so ``adjit.config.deterministic`` (stored as a
bool) compares equal to the mode that was set.
"""
from __future__ import annotations

import enum

from .errors import AdjitError


class DeterministicMode(enum.IntEnum):
    """Deterministic execution modes for float atomic operations (Warp's)."""

    #: Atomic adds land in whatever order the threads run (``config.deterministic = False``).
    NOT_GUARANTEED = 0
    #: Bitwise the same results on every run, for any thread count (adjit's default).
    RUN_TO_RUN = 1
    #: The same results across architectures: not available in adjit (WarpDeterminismError).
    GPU_TO_GPU = 2


class WarpDeterminismError(AdjitError, RuntimeError):
    """Raised when adjit cannot provide the determinism asked for (Warp's name)."""


def deterministic_flag(mode, what: str = "adjit.config.deterministic") -> bool:
    """The ``adjit.config.deterministic`` bool a mode (or bool) stands for;
    ``WarpDeterminismError`` for ``GPU_TO_GPU``, ``TypeError`` for other values."""
    if type(mode) is bool:
        return mode
    if isinstance(mode, DeterministicMode):
        if mode is DeterministicMode.GPU_TO_GPU:
            raise WarpDeterminismError(
                f"{what} = DeterministicMode.GPU_TO_GPU asks for the same results on other architectures, "
                "which adjit cannot promise: kernels are compiled for this machine's CPU (its instruction set "
                "changes the code) and GPU float atomics are not in thread order yet. DeterministicMode.RUN_TO_RUN (the "
                "default) gives bitwise the same results on every run on this machine, for any number of "
                "threads")
        return mode is DeterministicMode.RUN_TO_RUN
    raise TypeError(f"{what} must be True, False or an adjit.DeterministicMode (NOT_GUARANTEED or RUN_TO_RUN), "
                    f"got {mode!r}")
