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
written anew): bitwise what running them eagerly gives.

On a CUDA device (the capture's ``device``, else the default device) the
capture is a CUDA stream capture of the device's current stream (or
``stream``): the launches, copies and fills issued during it are recorded
by the driver, not run; ``capture_end`` instantiates the CUDA graph, and
``capture_launch`` replays it with one ``cuGraphLaunch``. What a launch or
copy does on the host that a stream capture cannot hold is handled here:
each launch gets an error record slot of the graph's own, read back after
each replay at the next synchronize (an index out of range in a replay is
reported naming the kernel); host values written into device memory (fills,
``assign``, a tape's gradient seeds) are staged in device memory the graph
keeps, copied there once at capture time; device memory allocated during
the capture is plain ``cuMemAlloc`` memory (not stream-ordered, whose
allocation would be a node of the graph), kept alive by the graph; frees
wait for the capture's end. What cannot be recorded raises CaptureError at
capture time: reading device memory on the host (``numpy()``, a strided
view's copy), copies between host and device arrays, synchronizing, and
operations on another device or the CPU. ``capture_if`` / ``capture_while``
split the CUDA graph: the parts between them are CUDA graphs, and the
condition is read on the host at each replay (conditional graph nodes are
not used yet). Elsewhere (the CPU, or ``native_cuda_graphs = False``) the
operations are recorded in Python and re-issued at each replay.

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

#: Whether a capture on a CUDA device records a CUDA graph (stream capture,
#: replayed by cuGraphLaunch). False: the operations are recorded in Python
#: and re-issued at each replay, as on the CPU.
native_cuda_graphs = True


class _CudaRuntime:
    """What a CUDA graph capture needs of runtime/cuda.py, which registers
    it when imported (``import adjit`` does; it imports this module, not
    the reverse): ``GraphRecords``, ``replayed``, ``check_pending_failures``."""

    GraphRecords = replayed = check_pending_failures = None


_cuda_runtime = _CudaRuntime()


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
        #: A capture on a CUDA device: its CUDA graphs (``_NativeGraph``); None elsewhere.
        self._native = None

    def __len__(self) -> int:
        return len(self.ops)

    def __repr__(self) -> str:
        kind = " (a CUDA graph)" if self._native is not None else ""
        return f"<adjit.Graph of {len(self.ops)} operations{kind}>"

    @property
    def is_cuda_graph(self) -> bool:
        """Whether replays launch a CUDA graph (else they re-issue the operations)."""
        return self._native is not None

    def _replay(self, stream=None) -> None:
        if self._native is not None:
            self._native.replay(stream)
            return
        for _, _, run in self.ops:
            run()


class _Capture:
    """An open capture on one thread."""

    def __init__(self, device, mode: CaptureMode):
        self.graph = Graph(device)
        self.mode = mode
        #: The stream capture of a capture on a CUDA device (None elsewhere).
        self.native: _NativeCapture | None = None


class _NativeCapture:
    """A capture on a CUDA device: the stream captured, the CUDA graphs made
    so far (a capture_if / capture_while between them), the error records of
    the graph's launches and the device memory its replays read."""

    def __init__(self, device, stream, mode: CaptureMode):
        self.device, self.ordinal, self.mode = device, device.ordinal, mode
        self.stream = stream
        self.records = _cuda_runtime.GraphRecords(device.ordinal)
        #: Staged host values (runtime.cuda.stage) the replays read.
        self.keep: list = []
        #: CUDA graphs (``_runtime.cuda.Graph``) and host steps (``f(stream)``), in order.
        self.segments: list = []
        #: Whether the stream is being captured now (not between segments).
        self.capturing = False
        self.labels: list[str] = []
        #: The device's current stream before a capture_begin(stream=...).
        self.saved_stream = None

    def begin(self) -> None:
        from .. import _runtime
        _runtime.cuda.begin_capture(self.ordinal, self.stream.cuda_stream, int(self.mode))
        self.capturing = True

    def end(self) -> None:
        """Ends the stream capture; its graph (if it has nodes) becomes a segment."""
        from .. import _runtime
        self.capturing = False
        graph = _runtime.cuda.end_capture(self.ordinal, self.stream.cuda_stream)
        if graph.node_count:
            self.segments.append(graph)
        else:
            graph.free()

    def host_step(self, step) -> None:
        """``step(stream)`` runs on the host between two CUDA graphs at each replay."""
        self.end()
        self.segments.append(step)
        self.begin()


class _NativeGraph:
    """What a capture on a CUDA device made: see ``_NativeCapture``."""

    def __init__(self, native: _NativeCapture, count: int):
        self.device, self.ordinal = native.device, native.ordinal
        self.segments, self.records, self.keep = native.segments, native.records, native.keep
        kernels = list(dict.fromkeys(native.labels))
        shown = ", ".join(kernels[:4]) + (f" and {len(kernels) - 4} more" if len(kernels) > 4 else "")
        self.label = f"a CUDA graph of {count} operations" + (f" (kernels {shown})" if shown else "")

    def replay(self, stream=None) -> None:
        if stream is None:
            stream = self.device.stream
        elif stream.device != self.device:
            raise ValueError(f"capture_launch: the graph was captured on {self.device}, the stream is on "
                             f"{stream.device}")
        handle = stream.cuda_stream
        launched = False
        for segment in self.segments:
            if callable(segment):
                segment(stream)
            else:
                segment.launch(handle, self.label)
                launched = True
        if launched and self.records.slots:
            _cuda_runtime.replayed(self.records)

    def free(self) -> None:
        """Destroys the CUDA graphs now."""
        for segment in self.segments:
            if not callable(segment):
                segment.free()


_state = threading.local()
#: Captures open in the process (a launch checks this before the thread-local).
_open = 0
_open_lock = threading.Lock()


def capturing() -> "_Capture | None":
    """The capture open on this thread, if any (cheap when none is open anywhere)."""
    if not _open:
        return None
    return getattr(_state, "capture", None)


def record(kind: str, label: str, run, tapes=(), device=None, ran: bool = False) -> None:
    """Records an operation in this thread's open capture: ``run()`` does it
    at each replay. ``tapes``: the tapes active now (a recorded operation on
    a tape cannot be captured yet). ``device``: where it runs (or a tuple of
    the devices it uses), if known. In a capture on a CUDA device ``run()``
    is called now, and the work it queues on the captured stream is what the
    CUDA graph replays (``ran``: the caller did it already)."""
    if tapes:
        raise CaptureError(f"{label}: an operation recorded on a Tape cannot be captured in a graph yet (adjit "
                           "replays launches and copies, not a tape's bookkeeping); capture without a tape, or "
                           "run the tape's launches eagerly")
    capture = _state.capture
    native = capture.native
    if native is not None:
        for d in device if isinstance(device, (tuple, list)) else (device,):
            if d is not None and _alias(d) != native.device.alias:
                raise CaptureError(f"{label}: uses {_alias(d)}, but this capture records a CUDA graph of "
                                   f"{native.device.alias}'s stream, which holds only that device's work; "
                                   f"capture it separately (adjit.ScopedCapture(device='{_alias(d)}')) or run it "
                                   "outside the capture")
        if not ran:
            run()
        if kind == "launch":
            native.labels.append(label.split(" (")[0])
    capture.graph.ops.append((kind, label, run))


def _alias(device) -> str:
    from ..device import get_device
    return device if isinstance(device, str) and ":" in device else get_device(device).alias


def native_capture(ordinal: int | None = None) -> "_NativeCapture | None":
    """The stream capture open on this thread (on CUDA device ``ordinal``,
    if given) and capturing now; None if none (cheap when no capture is open)."""
    if not _open:
        return None
    capture = getattr(_state, "capture", None)
    native = None if capture is None else capture.native
    if native is None or not native.capturing or (ordinal is not None and native.ordinal != ordinal):
        return None
    return native


def refuse(what: str, ordinal: int | None = None) -> None:
    """Raises CaptureError if this thread is capturing a CUDA graph (of
    device ``ordinal``, if given): ``what`` cannot be recorded in one."""
    native = native_capture(ordinal)
    if native is not None:
        raise CaptureError(f"{what} cannot be recorded in a CUDA graph (the capture on {native.device.alias} "
                           "records work queued on its stream, and this needs the host); do it before "
                           "capture_begin or after capture_end")


def _check_device(device):
    from ..device import get_device
    return None if device is None else get_device(device)


def _native_target(device, stream):
    """The CUDA device a capture records a CUDA graph of, or None (the
    operations are recorded in Python)."""
    if not native_cuda_graphs:
        return None
    from ..device import get_device
    target = stream.device if stream is not None and device is None else (device or get_device())
    if not target.is_cuda:
        return None
    from .. import _runtime
    if _cuda_runtime.GraphRecords is None or not _runtime.cuda.graphs_supported():
        return None
    return target


def capture_begin(device=None, stream=None, force_module_load=None, external: bool = False, apic: bool = False,
                  capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL) -> None:
    """Starts recording this thread's launches, copies and fills into a graph
    (``capture_end`` returns it). ``device``: the device captured on
    (checked; every device's operations are recorded); ``stream``,
    ``force_module_load`` and ``apic`` are accepted as in Warp (kernels are
    loaded at their first recorded launch); ``external=True`` (a capture
    begun by another library) is not supported. On a CUDA device (``device``,
    else ``stream``'s, else the default device) this begins a CUDA stream
    capture of ``stream`` (None: the device's current stream; a stream given
    is made the current one until ``capture_end``)."""
    global _open
    if external:
        raise CaptureError("capture_begin(external=True): adjit does not join captures begun elsewhere")
    if getattr(_state, "capture", None) is not None:
        raise CaptureError("capture_begin: a capture is already open on this thread (end it with capture_end)")
    if not isinstance(capture_mode, (CaptureMode, int)) or int(capture_mode) not in (0, 1, 2):
        raise ValueError(f"capture_begin: capture_mode must be a CaptureMode, got {capture_mode!r}")
    capture = _Capture(_check_device(device), CaptureMode(int(capture_mode)))
    target = _native_target(capture.graph.device, stream)
    if target is not None:
        capture.native = _begin_native(target, stream, capture.mode)
    _state.capture = capture
    with _open_lock:
        _open += 1


def _begin_native(device, stream, mode: CaptureMode) -> _NativeCapture:
    """Begins the stream capture: the launches before it are checked first
    (their error records are read back: none is pending in the capture)."""
    if stream is not None and stream.device != device:
        raise ValueError(f"capture_begin: the stream is on {stream.device}, not on {device}")
    _cuda_runtime.check_pending_failures(device.ordinal)
    saved = None
    if stream is not None and stream != device.stream:
        saved = device.stream
        device.set_stream(stream, sync=False)
    native = _NativeCapture(device, device.stream, mode)
    native.saved_stream = saved
    try:
        native.begin()
    except BaseException:
        if saved is not None:
            device.set_stream(saved, sync=False)
        raise
    return native


def _end_native(capture: _Capture) -> None:
    """Ends the stream capture and instantiates its CUDA graphs."""
    native = capture.native
    try:
        native.end()
    finally:
        if native.saved_stream is not None:
            native.device.set_stream(native.saved_stream, sync=False)
    capture.graph._native = _NativeGraph(native, len(capture.graph.ops))


def capture_end(device=None, stream=None) -> Graph:
    """Ends this thread's capture; returns its graph."""
    global _open
    capture = getattr(_state, "capture", None)
    if capture is None:
        raise CaptureError("capture_end: no capture is open on this thread (begin one with capture_begin)")
    _state.capture = None
    with _open_lock:
        _open -= 1
    if capture.native is not None:
        _end_native(capture)
    return capture.graph


def capture_launch(graph: Graph, stream=None) -> None:
    """Replays ``graph``'s operations in order (as captured: same arrays,
    same arguments)."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_launch takes an adjit.Graph (from capture_end), got {type(graph).__name__}")
    if capturing() is not None:
        # a graph launched inside a capture: its operations become this capture's
        capture = _state.capture
        if capture.native is not None:  # (between two CUDA graphs of this one)
            capture.native.host_step(graph._replay)
        capture.graph.ops.append(("graph", f"graph of {len(graph)} operations",
                                  graph._replay if capture.native is None else lambda: None))
        return
    if stream is not None and graph._native is None:
        raise ValueError("capture_launch: stream= is for graphs captured on a CUDA device")
    graph._replay(stream)


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
        self.active = False
        if exc_type is not None:
            try:
                capture_end(self.device, self.stream)
            except Exception:
                pass  # (the driver's error at the end of a capture the exception broke off)
            return
        self.graph = capture_end(self.device, self.stream)


def _check_condition(condition) -> None:
    # (an adjit array, by its attributes: runtime/array.py imports this module)
    name = getattr(getattr(condition, "dtype", None), "name", None)
    if not hasattr(condition, "numpy") or getattr(condition, "size", 0) < 1 or name not in ("int32", "int64",
                                                                                            "uint32", "bool"):
        raise TypeError("the condition must be an adjit array of one int32 (Warp's device int), got "
                        f"{condition!r}")


def _condition_value(condition, stream=None) -> bool:
    _check_condition(condition)
    if stream is not None:
        stream.synchronize()  # (a replay's stream may not be the current one numpy() waits for)
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
    inner = _Capture(outer.graph.device, outer.mode)
    if outer.native is not None:  # (the outer stream capture is ended meanwhile)
        inner.native = _NativeCapture(outer.native.device, outer.native.stream, outer.mode)
        inner.native.begin()
    _state.capture = inner
    try:
        body(*args, **kwargs)
    finally:
        _state.capture = outer
        if inner.native is not None:
            _end_native(inner)
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
    _check_condition(condition)
    native = _state.capture.native
    if native is None:
        _condition_value(condition)  # (checked now)
        yes, no = _branch(on_true, (), kwargs), _branch(on_false, (), kwargs)

        def run():
            chosen = yes if _condition_value(condition) else no
            if chosen is not None:
                chosen._replay()
        _state.capture.graph.ops.append(("if", "capture_if", run))
        return
    native.end()
    try:
        yes, no = _branch(on_true, (), kwargs), _branch(on_false, (), kwargs)
    except BaseException:
        native.begin()
        raise

    def step(stream):
        chosen = yes if _condition_value(condition, stream) else no
        if chosen is not None:
            chosen._replay(stream if chosen._native is not None else None)
    native.segments.append(step)
    native.begin()
    _state.capture.graph.ops.append(("if", "capture_if", lambda: None))


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
    _check_condition(condition)
    native = _state.capture.native
    if native is None:
        _condition_value(condition)
        body = _branch(while_body, (), kwargs)

        def run():
            while _condition_value(condition):
                body._replay()
        _state.capture.graph.ops.append(("while", "capture_while", run))
        return
    native.end()
    try:
        body = _branch(while_body, (), kwargs)
    except BaseException:
        native.begin()
        raise

    def step(stream):
        while _condition_value(condition, stream):
            body._replay(stream if body._native is not None else None)
    native.segments.append(step)
    native.begin()
    _state.capture.graph.ops.append(("while", "capture_while", lambda: None))


def is_conditional_graph_supported() -> bool:
    """Whether ``capture_if`` / ``capture_while`` can be captured: yes (adjit's
    graphs evaluate their conditions at replay, on every device: on a CUDA
    device on the host, between the CUDA graphs before and after them)."""
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
