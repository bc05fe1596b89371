"""Work that a KeyboardInterrupt or interpreter exit must not cut in half.

Loading the compiler imports MLIR's bindings, whose extension modules
register themselves as they import: a Ctrl-C half-way (a notebook user
stopping the first compile) left them half-initialized, and the process
crashed later (a segfault at the next garbage collection or launch).
``interrupts_deferred()`` holds SIGINT back for such a section and delivers
it when the section ends, as the handler that was in place would have.

A compile uses MLIR's bindings, whose frames must not be unwound: at exit,
Python ends each daemon thread that asks for the GIL back, by unwinding its
stack, and a compile cut so aborted the process (nanobind: "attempted to
change the reference count of a Python object while the GIL was not
held"). ``exit_waits`` marks such sections: an atexit handler lets the ones
in flight finish (up to ``EXIT_WAIT_S``), and daemon threads that start one
after it ran wait for the process to end instead. (The compiler's first
import, which runs MLIR's bindings' module initialization, counts too.)
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import signal
import sys
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


#: The longest interpreter exit waits for compiles in daemon threads.
EXIT_WAIT_S = 10.0

_sections = threading.Condition()
_in_flight = 0
#: The thread running the interpreter's exit, once it has begun (atexit).
_exiting_thread: threading.Thread | None = None


@contextlib.contextmanager
def exit_waits_for_this():
    """Runs the body (a compile, or the compiler's import) so that
    interpreter exit waits for it; in other threads than the one exiting, a
    body that would start after exit began waits for the process to end."""
    global _in_flight
    with _sections:
        late = _exiting_thread is not None and threading.current_thread() is not _exiting_thread
        if not late:
            _in_flight += 1
    if late:  # (a daemon thread at exit)
        threading.Event().wait()
    try:
        yield
    finally:
        with _sections:
            _in_flight -= 1
            _sections.notify_all()


def exit_waits(fn):
    """Decorates ``fn`` (a compile): ``exit_waits_for_this`` around each call."""
    @functools.wraps(fn)
    def section(*args, **kwargs):
        with exit_waits_for_this():
            return fn(*args, **kwargs)
    return section


@atexit.register
def _before_exit() -> None:
    """Lets compiles in flight finish, then has the extension modules keep
    their threads that are without the GIL from taking it back (their
    ``_prepare_for_exit``: cpp/runtime/python/WithoutGil.h)."""
    global _exiting_thread
    with _sections:
        _exiting_thread = threading.current_thread()
        _sections.wait_for(lambda: _in_flight == 0, timeout=EXIT_WAIT_S)
    for name in ("adjit._adjit", "adjit._runtime"):
        module = sys.modules.get(name)
        if module is not None:
            module._prepare_for_exit()
