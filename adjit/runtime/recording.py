"""The tape being recorded, per thread.

Arrays and launches ask ``active_tape()`` whether their writes must be
recorded; ``Tape`` pushes itself here on ``with``. Each thread records into
its own tapes: a tape opened in one thread never sees another thread's work.
"""
from __future__ import annotations

import threading

_local = threading.local()


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def active_tape():
    """The innermost tape this thread is recording into, if any."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def push(tape) -> None:
    _stack().append(tape)


def pop(tape) -> None:
    _stack().remove(tape)
