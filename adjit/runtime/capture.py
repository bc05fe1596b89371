"""Graph capture (Warp's names): a sequence of launches, copies and fills
recorded once and replayed many times at a lower host cost.

    with adjit.ScopedCapture() as capture:
        adjit.launch(step, dim=n, inputs=[state])
        adjit.copy(previous, state)
    for _ in range(frames):
        adjit.capture_launch(capture.graph)

While a capture is open on a thread (``capture_begin`` ... ``capture_end``),
the operations that thread issues are recorded, not run: kernel launches
(checked, packed and their code loaded at capture time, so a replay only
runs them), ``copy``, ``assign``, ``fill_`` and ``zero_`` of existing
arrays, and ``capture_if`` / ``capture_while`` (host conditionals on a
device int, each branch a graph of its own). Arrays made during the capture
(``zeros``, ``full``, ``clone``) exist from then on, and the values they
were made with are written again at each replay, as a CUDA graph's memsets
and copies are. ``capture_launch(graph)`` replays the operations in order
with the arguments they were captured with (the same arrays, read and
written anew): bitwise what running them eagerly gives. Graphs work on
every device (on a CUDA device they re-issue the recorded launches; native
CUDA graphs are not used yet).

A ``Tape`` open in a capture records its launches as usual; its snapshots,
the seeds and zeroing of ``backward`` and ``zero()``, and the adjoint
launches are captured too (Warp's training loop: forward, backward, update,
zero, replayed per iteration). What cannot be captured raises
``CaptureError`` at capture time rather than misbehave at replay: array
operations recorded on an open tape (their adjoints are not captured yet),
float atomic min/max on a tape, and a second ``capture_begin`` on one
thread. Writes through ``numpy()`` views are host writes, not operations:
they happen when made, never at replay.
"""
from __future__ import annotations

import enum
import threading

from ..errors import AdjitError


class CaptureError(AdjitError, RuntimeError):
    """An operation that cannot be recorded in a graph, or a capture used wrongly."""


class CaptureMode(enum.IntEnum):
    """Warp's capture modes (CUDA's stream capture modes). adjit records the
    operations of the capturing thread in every mode."""

    GLOBAL = 0
    THREAD_LOCAL = 1
    RELAXED = 2


class Graph:
    """A recorded sequence of operations (``capture_end``, ``ScopedCapture.graph``);
    ``capture_launch`` replays it."""

    def __init__(self, device=None):
        self.device = device
        #: The operations, in order: (kind, label, run) with ``run()`` replaying one.
        self.ops: list[tuple[str, str, object]] = []

    def __len__(self) -> int:
        return len(self.ops)

    def __repr__(self) -> str:
        return f"<adjit.Graph of {len(self.ops)} operations>"

    def _replay(self) -> None:
        for _, _, run in self.ops:
            run()


class _Capture:
    """An open capture on one thread."""

    def __init__(self, device, mode: CaptureMode):
        self.graph = Graph(device)
        self.mode = mode


_state = threading.local()
#: Captures open in the process (a launch checks this before the thread-local).
_open = 0
_open_lock = threading.Lock()


def capturing() -> "_Capture | None":
    """The capture open on this thread, if any (cheap when none is open anywhere)."""
    if not _open:
        return None
    return getattr(_state, "capture", None)


def record(kind: str, label: str, run, tapes=()) -> None:
    """Records an operation in this thread's open capture: ``run()`` does it
    at each replay. ``tapes``: the tapes active now (a recorded operation on
    a tape cannot be captured yet)."""
    if tapes:
        raise CaptureError(f"{label}: an operation recorded on a Tape cannot be captured in a graph yet (adjit "
                           "replays launches and copies, not a tape's bookkeeping); capture without a tape, or "
                           "run the tape's launches eagerly")
    _state.capture.graph.ops.append((kind, label, run))


def _check_device(device):
    from ..device import get_device
    return None if device is None else get_device(device)


def capture_begin(device=None, stream=None, force_module_load=None, external: bool = False, apic: bool = False,
                  capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL) -> None:
    """Starts recording this thread's launches, copies and fills into a graph
    (``capture_end`` returns it). ``device``: the device captured on
    (checked; every device's operations are recorded); ``stream``,
    ``force_module_load`` and ``apic`` are accepted as in Warp (kernels are
    loaded at their first recorded launch); ``external=True`` (a capture
    begun by another library) is not supported."""
    global _open
    if external:
        raise CaptureError("capture_begin(external=True): adjit does not join captures begun elsewhere")
    if getattr(_state, "capture", None) is not None:
        raise CaptureError("capture_begin: a capture is already open on this thread (end it with capture_end)")
    if not isinstance(capture_mode, (CaptureMode, int)) or int(capture_mode) not in (0, 1, 2):
        raise ValueError(f"capture_begin: capture_mode must be a CaptureMode, got {capture_mode!r}")
    _state.capture = _Capture(_check_device(device), CaptureMode(int(capture_mode)))
    with _open_lock:
        _open += 1


def capture_end(device=None, stream=None) -> Graph:
    """Ends this thread's capture; returns its graph."""
    global _open
    capture = getattr(_state, "capture", None)
    if capture is None:
        raise CaptureError("capture_end: no capture is open on this thread (begin one with capture_begin)")
    _state.capture = None
    with _open_lock:
        _open -= 1
    return capture.graph


def capture_launch(graph: Graph, stream=None) -> None:
    """Replays ``graph``'s operations in order (as captured: same arrays,
    same arguments)."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_launch takes an adjit.Graph (from capture_end), got {type(graph).__name__}")
    if capturing() is not None:
        # a graph launched inside a capture: its operations become this capture's
        _state.capture.graph.ops.append(("graph", f"graph of {len(graph)} operations", graph._replay))
        return
    graph._replay()


class ScopedCapture:
    """``capture_begin`` on entry, ``capture_end`` on exit; the graph is
    ``.graph`` afterwards (Warp's). On an exception the capture is ended
    and no graph is kept."""

    def __init__(self, device=None, stream=None, force_module_load=None, external: bool = False,
                 apic: bool = False, capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL):
        self.device, self.stream, self.external = device, stream, external
        self.capture_mode = capture_mode
        self.graph: Graph | None = None
        self.active = False

    def __enter__(self) -> "ScopedCapture":
        capture_begin(self.device, self.stream, external=self.external, capture_mode=self.capture_mode)
        self.active = True
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        graph = capture_end(self.device, self.stream)
        self.active = False
        if exc_type is None:
            self.graph = graph


def _condition_value(condition) -> bool:
    # (an adjit array, by its attributes: runtime/array.py imports this module)
    name = getattr(getattr(condition, "dtype", None), "name", None)
    if not hasattr(condition, "numpy") or getattr(condition, "size", 0) < 1 or name not in ("int32", "int64",
                                                                                            "uint32", "bool"):
        raise TypeError("the condition must be an adjit array of one int32 (Warp's device int), got "
                        f"{condition!r}")
    return bool(condition.numpy().reshape(-1)[0])


def _branch(body, args, kwargs) -> Graph | None:
    """``body`` captured into a graph of its own (or a Graph given as such)."""
    if body is None:
        return None
    if isinstance(body, Graph):
        return body
    if not callable(body):
        raise TypeError(f"a branch must be a callable or a Graph, got {body!r}")
    outer = _state.capture
    _state.capture = _Capture(outer.graph.device, outer.mode)
    try:
        body(*args, **kwargs)
    finally:
        inner, _state.capture = _state.capture, outer
    return inner.graph


def capture_if(condition, on_true=None, on_false=None, stream=None, **kwargs) -> None:
    """Runs ``on_true`` if ``condition[0]`` (a one-element int array) is
    nonzero, else ``on_false`` (callables taking ``**kwargs``, or Graphs).
    Inside a capture, both branches are captured and the choice is made at
    each replay from the array's value then."""
    if capturing() is None:
        chosen = on_true if _condition_value(condition) else on_false
        if isinstance(chosen, Graph):
            capture_launch(chosen)
        elif chosen is not None:
            chosen(**kwargs)
        return
    _condition_value(condition)  # (checked now)
    yes, no = _branch(on_true, (), kwargs), _branch(on_false, (), kwargs)

    def run():
        chosen = yes if _condition_value(condition) else no
        if chosen is not None:
            chosen._replay()
    _state.capture.graph.ops.append(("if", "capture_if", run))


def capture_while(condition, while_body, stream=None, **kwargs) -> None:
    """Runs ``while_body`` (a callable taking ``**kwargs``, or a Graph) while
    ``condition[0]`` is nonzero; the body is expected to change the
    condition. Inside a capture, the body is captured once and the loop runs
    at each replay."""
    if capturing() is None:
        while _condition_value(condition):
            if isinstance(while_body, Graph):
                capture_launch(while_body)
            else:
                while_body(**kwargs)
        return
    _condition_value(condition)
    body = _branch(while_body, (), kwargs)

    def run():
        while _condition_value(condition):
            body._replay()
    _state.capture.graph.ops.append(("while", "capture_while", run))


def is_conditional_graph_supported() -> bool:
    """Whether ``capture_if`` / ``capture_while`` can be captured: yes (adjit's
    graphs evaluate their conditions at replay, on every device)."""
    return True


def capture_debug_dot_print(graph: Graph, path: str, verbose: bool = False) -> None:
    """Writes ``graph`` as a Graphviz DOT file: one node per operation, in order."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_debug_dot_print takes an adjit.Graph, got {type(graph).__name__}")
    lines = ["digraph adjit_graph {", "  node [shape=box];"]
    for n, (kind, label, _) in enumerate(graph.ops):
        text = f"{kind}: {label}" if verbose else label
        lines.append(f'  op{n} [label="{n}: {_dot_escape(text)}"];')
        if n:
            lines.append(f"  op{n - 1} -> op{n};")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


__all__ = ["CaptureError", "CaptureMode", "Graph", "ScopedCapture", "capture_begin", "capture_debug_dot_print",
           "capture_end", "capture_if", "capture_launch", "capture_while", "is_conditional_graph_supported"]
