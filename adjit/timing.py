"""``ScopedTimer``: wall time of a block, as Warp's ``wp.ScopedTimer``; and
Warp's activity timing: ``timing_begin``, ``timing_end``, ``timing_print``.

adjit's activities are its CPU kernel launches (forward, backward and
tangent kernels), each timed around the runtime's call, which returns when
every thread is done. Copies and fills are numpy operations, not activities:
``TIMING_MEMCPY``, ``TIMING_MEMSET`` and ``TIMING_GRAPH`` record nothing.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .device import CPU, Device, synchronize_device

#: Warp's activity filter flags.
TIMING_KERNEL = 1
TIMING_KERNEL_BUILTIN = 2
TIMING_MEMCPY = 4
TIMING_MEMSET = 8
TIMING_GRAPH = 16
TIMING_ALL = 0xFFFFFFFF


@dataclass
class TimingResult:
    """One timed activity (Warp's ``wp.TimingResult``)."""

    #: The device it ran on.
    device: Device
    #: The activity: ``<kernel>_cpu_kernel_forward`` (or ``_backward``, ``_tangent``).
    name: str
    #: Its kind (``TIMING_KERNEL``).
    filter: int
    #: Its time in milliseconds.
    elapsed: float


#: The open timing sessions, innermost last: (filter, results) each.
_sessions: list[tuple[int, list[TimingResult]]] = []


def recording() -> bool:
    """Whether a timing session is open (the launch's fast check)."""
    return bool(_sessions)


def record(name: str, elapsed_ms: float) -> None:
    """Records a kernel launch in each open session that times kernels."""
    for flags, results in _sessions:
        if flags & TIMING_KERNEL:
            results.append(TimingResult(CPU, name, TIMING_KERNEL, elapsed_ms))


def timing_begin(cuda_filter: int = TIMING_ALL, synchronize: bool = True) -> None:
    """Begins timing activities of the kinds in ``cuda_filter`` (sessions nest)."""
    if isinstance(cuda_filter, bool) or not isinstance(cuda_filter, int):
        raise TypeError(f"timing_begin: cuda_filter must be an int of TIMING_* flags, got {cuda_filter!r}")
    _sessions.append((cuda_filter, []))


def timing_end(synchronize: bool = True) -> list[TimingResult]:
    """Ends the innermost timing session; returns its activities in order."""
    if not _sessions:
        raise RuntimeError("timing_end: no timing session is open (call adjit.timing_begin() first)")
    return _sessions.pop()[1]


def timing_print(results: list[TimingResult], indent: str = "") -> None:
    """Prints the activities in order, then totals by activity and by device."""
    rule = indent + "-" * 16 + "+" + "-" * 9 + "+" + "-" * 24

    def table(title, header, rows):
        print(f"{indent}{title}:\n{rule}\n{indent}{header[0]:<16}| {header[1]:<8}| {header[2]}\n{rule}")
        for a, b, c in rows:
            print(f"{indent}{a:>12.6f} ms | {b:<8}| {c}")

    table("Activity timeline", ("Time", "Device", "Activity"),
          [(r.elapsed, str(r.device), r.name) for r in results])
    for title, key in (("Activity summary", lambda r: r.name), ("Device summary", lambda r: str(r.device))):
        totals: dict = {}
        for r in results:
            total, count = totals.get(key(r), (0.0, 0))
            totals[key(r)] = (total + r.elapsed, count + 1)
        table(title, ("Total time", "Count", title.split()[0]),
              [(t, c, k) for k, (t, c) in totals.items()])


class ScopedTimer:
    """``with adjit.ScopedTimer("step"):`` prints ``step took 1.23 ms`` when
    the block ends and keeps the time in ``.elapsed`` (milliseconds).

    ``active=False`` measures nothing; ``print=False`` keeps quiet;
    ``dict``: a dict whose list under ``name`` gets each elapsed time;
    ``synchronize``: wait for outstanding device work first and last (CPU
    launches are synchronous, so this changes nothing yet);
    ``report_func(elapsed_ms, name)`` is called instead of printing;
    ``cuda_filter`` (``TIMING_*`` flags): the block's activities are timed
    into ``.timing_results`` (and printed). Warp's other GPU profiling
    options are accepted and have no effect on the CPU.
    """

    def __init__(self, name: str, active: bool = True, print: bool = True, detailed: bool = False,  # noqa: A002
                 dict: dict | None = None, use_nvtx: bool = False, color="rapids",  # noqa: A002
                 synchronize: bool = False, cuda_filter: int = 0, report_func=None, skip_tape: bool = False):
        self.name = name
        self.active = active
        self.print = print
        self.dict = dict
        self.synchronize = synchronize
        self.report_func = report_func
        self.cuda_filter = cuda_filter
        self.elapsed = 0.0
        self.timing_results: list[TimingResult] = []

    def __enter__(self) -> "ScopedTimer":
        if self.active:
            if self.synchronize:
                synchronize_device()
            if self.cuda_filter:
                timing_begin(self.cuda_filter)
                self._session = _sessions[-1]
            self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if not self.active:
            return
        if self.synchronize:
            synchronize_device()
        self.elapsed = (time.perf_counter() - self._start) * 1e3
        if self.cuda_filter:  # its own session, even where one opened inside was left open
            del _sessions[next(i for i, s in enumerate(_sessions) if s is self._session)]
            self.timing_results = self._session[1]
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.report_func is not None:
            self.report_func(self.elapsed, self.name)
        elif self.print:
            print(f"{self.name} took {self.elapsed:.2f} ms")
            if self.cuda_filter:
                timing_print(self.timing_results, indent="    ")
