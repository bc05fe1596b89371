"""The tapes being recorded, per thread.

Arrays and launches ask ``active_tapes()`` which tapes their writes must be
recorded on; ``Tape`` pushes itself here on ``with``. Each thread records into
its own tapes: a tape opened in one thread never sees another thread's work
(unless that thread enters the same tape object with ``with tape:`` too).

Nested tapes: a tape opened inside another records into both, so the outer
tape sees every launch made inside the inner one (Warp raises instead).
"""
from __future__ import annotations

import contextlib
import threading

class _Local(threading.local):
    #: The tapes this thread records into, innermost last (None before its
    #: first tape: a class default, so asking costs no AttributeError).
    stack: list | None = None


_local = _Local()


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def active_tape():
    """The innermost tape this thread is recording into, if any."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def active_tapes() -> tuple:
    """Every tape this thread is recording into, outermost first, each once
    (empty when none)."""
    stack = getattr(_local, "stack", None)
    if not stack:
        return ()
    if len(stack) == 1:
        return (stack[0],)
    seen, tapes = set(), []
    for tape in stack:
        if id(tape) not in seen:
            seen.add(id(tape))
            tapes.append(tape)
    return tuple(tapes)


@contextlib.contextmanager
def locked(tapes):
    """Holds the recording locks of ``tapes`` (in one global order, so two
    threads nesting the same tapes differently cannot deadlock): a launch
    records and runs under them, so each tape's order is the order in which
    its launches ran, also when several threads record onto one tape."""
    if not tapes:
        yield
        return
    ordered = sorted(tapes, key=id)
    with contextlib.ExitStack() as stack:
        for tape in ordered:
            stack.enter_context(tape._lock)
        yield


@contextlib.contextmanager
def paused():
    """No tape records in this thread meanwhile (a host evaluation of a
    builtin runs a launch that is no step of the user's computation)."""
    saved = _stack()[:]
    _local.stack = []
    try:
        yield
    finally:
        _local.stack = saved


def push(tape) -> None:
    _stack().append(tape)


def pop(tape) -> None:
    stack = _stack()
    # The innermost entry of this tape (a tape may be entered twice).
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is tape:
            del stack[i]
            return
    raise RuntimeError("adjit.Tape.__exit__ without a matching __enter__ in this thread")
