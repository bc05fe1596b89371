"""``ScopedTimer``: wall time of a block, as Warp's ``wp.ScopedTimer``."""
from __future__ import annotations

import time


class ScopedTimer:
    """``with adjit.ScopedTimer("step"):`` prints ``step took 1.23 ms`` when
    the block ends and keeps the time in ``.elapsed`` (milliseconds).

    ``active=False`` measures nothing; ``print=False`` keeps quiet;
    ``dict``: a dict whose list under ``name`` gets each elapsed time;
    ``synchronize``: wait for outstanding device work first and last (CPU
    launches are synchronous, so this changes nothing yet);
    ``report_func(elapsed_ms, name)`` is called instead of printing. Warp's
    GPU profiling options are accepted and have no effect on the CPU.
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
        self.elapsed = 0.0

    def __enter__(self) -> "ScopedTimer":
        if self.active:
            if self.synchronize:
                from .launch import synchronize
                synchronize()
            self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if not self.active:
            return
        if self.synchronize:
            from .launch import synchronize
            synchronize()
        self.elapsed = (time.perf_counter() - self._start) * 1e3
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.report_func is not None:
            self.report_func(self.elapsed, self.name)
        elif self.print:
            print(f"{self.name} took {self.elapsed:.2f} ms")
