"""Work that a KeyboardInterrupt must not cut in half.

Loading the compiler imports MLIR's bindings, whose extension modules
register themselves as they import: a Ctrl-C half-way (a notebook user
stopping the first compile) left them half-initialized, and the process
crashed later (a segfault at the next garbage collection or launch).
``interrupts_deferred()`` holds SIGINT back for such a section and delivers
it when the section ends, as the handler that was in place would have.
"""
from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def interrupts_deferred():
    """Runs the body with SIGINT held back (main thread only: Python runs
    signal handlers there, so other threads are never interrupted anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(frame))
    except (ValueError, TypeError):  # no signal support here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, received[0])
            elif previous == signal.SIG_DFL:
                raise KeyboardInterrupt
