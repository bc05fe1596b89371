"""What deterministic atomics cost: atomic-heavy kernels, forward and
backward, with adjit's deterministic launches (the default: float atomic adds
applied in thread order), with its opt-in non-deterministic ones
(``adjit.config.deterministic = False``: inline atomics), and Warp's CPU
(serial, hence repeatable) alongside, timed interleaved in one run.

    python benchmarks/atomics.py [--quick] [--repeat N]

Before timing, every result is checked against numpy (``np.add.at`` adds in
index order, in float32: bitwise what a deterministic launch must give) and
each case is run 5 times per backend to count distinct bit patterns. Each
time is the median of N (default 3) whole measurements. Writes
docs/atomics.md.
"""
from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

import bench
from bench import Backend

DOC = bench.DOCS / "atomics.md"
N = 4_000_000       # threads of the scatter and reduction cases
BINS = 1024         # elements the contended scatter adds into
EDGES = 1_000_000   # springs of the edge_forces case
POINTS = 250_000


class Case:
    """One kernel launch (or the backward of one), with what it must give."""

    def __init__(self, name: str, kernel: str, dim: int, inputs: list, output: int,
                 expected: np.ndarray, backward_seed: np.ndarray | None = None, grad_of: int = 0,
                 exact: bool = True):
        self.name, self.kernel, self.dim, self.inputs, self.output = name, kernel, dim, inputs, output
        self.expected, self.backward_seed, self.grad_of, self.exact = expected, backward_seed, grad_of, exact


def cases() -> list[Case]:
    rng = np.random.default_rng(11)
    # Magnitudes from 1e-2 to 1e2: the order of float adds shows in the sums.
    x = (rng.standard_normal(N) * 10.0 ** rng.integers(-2, 3, N)).astype(np.float32)
    spread = rng.integers(0, N, N).astype(np.int32)
    bins = rng.integers(0, BINS, N).astype(np.int32)

    def added(at, values, size):
        out = np.zeros(size, np.float32)
        np.add.at(out, at, values)
        return out

    seed = (rng.standard_normal(N)).astype(np.float32)
    points = (rng.standard_normal((POINTS, 3)) * 3).astype(np.float32)
    edges = rng.integers(0, POINTS, 2 * EDGES).astype(np.int32)
    a, b = edges[0::2], edges[1::2]
    d = points[b] - points[a]
    f = d * (np.linalg.norm(d, axis=1, keepdims=True) - np.float32(1.0))
    forces = np.zeros((POINTS, 3), np.float64)
    np.add.at(forces, a, f)
    np.add.at(forces, b, -f)
    return [
        Case("sum of squares into one element (forward)", "sum_squares", N,
             [x, np.zeros(1, np.float32)], 1, added(np.zeros(N, np.intp), x * x, 1)),
        Case("scatter-add, random indices over 4M (forward)", "scatter_add", N,
             [x, spread, np.zeros(N, np.float32)], 2, added(spread, x, N)),
        Case(f"scatter-add into {BINS} bins (forward)", "scatter_add", N,
             [x, bins, np.zeros(BINS, np.float32)], 2, added(bins, x, BINS)),
        Case("gather y = 2 x[idx] (backward: adds into x.grad)", "gather", N,
             [x, spread, np.zeros(N, np.float32)], 2, added(spread, np.float32(2.0) * seed, N),
             backward_seed=seed, grad_of=0),
        Case("edge_forces: vec3 springs, adds at both ends (forward)", "edge_forces", EDGES,
             [points, edges, np.zeros((POINTS, 3), np.float32)], 2, forces.astype(np.float32), exact=False),
    ]


def backends() -> dict[str, Backend]:
    import adjit
    out = {"adjit": Backend("adjit", adjit), "adjit_nondet": Backend("adjit_nondet", adjit)}
    have_warp, why = bench.warp_available()
    if have_warp:
        out["warp"] = Backend("warp", bench.import_backend("warp"))
    else:
        print(f"  Warp not importable ({why}): its column is left out")
    return out


def _dtype(b: Backend, a: np.ndarray):
    if a.ndim == 2:
        return b.wp.vec3
    return b.wp.int32 if a.dtype == np.int32 else b.wp.float32


class Run:
    """A case set up for one backend: ``go()`` runs it (a forward launch, or
    the backward of one recorded on a tape), ``result()`` what it gave."""

    def __init__(self, b: Backend, case: Case):
        import adjit
        self.b, self.case = b, case
        self.deterministic = b.name != "adjit_nondet"
        self.adjit = adjit
        backward = case.backward_seed is not None
        self.arrays = [b.array(a, _dtype(b, a), requires_grad=backward and a.dtype == np.float32)
                       for a in case.inputs]
        self.kernel = getattr(b.k, case.kernel)
        if backward:
            with self._mode():
                with b.wp.Tape() as self.tape:
                    b.launch(self.kernel, case.dim, self.arrays)
            self.seed_array = self.arrays[case.output].grad

    def _mode(self):
        adjit, deterministic = self.adjit, self.deterministic

        class Mode:
            def __enter__(self):
                self.saved = adjit.config.deterministic
                adjit.config.deterministic = deterministic

            def __exit__(self, *exc):
                adjit.config.deterministic = self.saved
        return Mode()

    def reset(self) -> None:
        """Zeroes what the run adds into (and reseeds a backward)."""
        if self.case.backward_seed is None:
            self.arrays[self.case.output].zero_()
            return
        for a in self.arrays:
            if getattr(a, "grad", None) is not None:
                a.grad.zero_()
        self.seed_array.numpy()[...] = self.case.backward_seed

    def go(self) -> None:
        with self._mode():
            if self.case.backward_seed is None:
                self.b.launch(self.kernel, self.case.dim, self.arrays)
            else:
                self.tape.backward()
        self.b.sync()

    def orders(self) -> str:
        """How adjit ran the launch: its atomic order, and for an ordered
        kernel the recent ns per thread of each way it may run."""
        from adjit import _runtime, loader
        names = {v: k for k, v in _runtime.ATOMIC_ORDERS.items()}
        v = loader.cpu_variant(self.kernel, adjoint=self.case.backward_seed is not None)
        if not v.seconds_per_thread:
            return names[v.atomic_order]
        return ", ".join(f"{names[o]} {t * 1e9:.1f}" for o, t in sorted(v.seconds_per_thread.items()))

    def result(self) -> np.ndarray:
        if self.case.backward_seed is None:
            return self.arrays[self.case.output].numpy().copy()
        return self.arrays[self.case.grad_of].grad.numpy().copy()


def check(runs: dict[str, Run], repeats: int = 5) -> dict[str, int]:
    """{backend: distinct bit patterns in ``repeats`` runs}; asserts every
    result against numpy (bitwise for deterministic adjit where the
    reference adds in the same order)."""
    distinct = {}
    for name, run in runs.items():
        digests = set()
        for _ in range(repeats):
            run.reset()
            run.go()
            got = run.result()
            digests.add(hashlib.sha256(got.tobytes()).hexdigest())
            want = run.case.expected
            if name == "adjit" and run.case.exact:
                assert got.tobytes() == want.tobytes(), f"{run.case.name}: not the thread-order sum"
            else:
                scale = np.abs(want).max()
                np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5 * scale,
                                           err_msg=f"{name}: {run.case.name}")
        distinct[name] = len(digests)
    return distinct


def measure(quick: bool, repeat: int) -> tuple[list[dict], list[str]]:
    bs = backends()
    rows = []
    budget = 0.5 if quick else 2.0
    for case in cases():
        runs = {name: Run(b, case) for name, b in bs.items()}
        distinct = check(runs)
        samples = {name: [] for name in runs}
        for _ in range(repeat):
            res = bench.interleaved({n: r.go for n, r in runs.items()}, budget,
                                    setups={n: r.reset for n, r in runs.items()})
            for name, (t, _) in res.items():
                samples[name].append(t)
        times = {name: float(np.median(ts)) for name, ts in samples.items()}
        rows.append({"case": case.name, "times": times, "distinct": distinct, "orders": runs["adjit"].orders()})
        print(f"  {case.name}: " + ", ".join(f"{n} {t * 1e3:.2f} ms ({distinct[n]} distinct)"
                                            for n, t in times.items()), flush=True)
    return rows, list(bs)


def write(rows: list[dict], names: list[str], command: str, threads: int) -> None:
    have_warp = "warp" in names
    head = ["case", "adjit deterministic ms", "adjit non-deterministic ms", "deterministic / non-deterministic"]
    if have_warp:
        head += ["Warp ms", "Warp / adjit deterministic"]
    head += ["distinct results in 5 runs (adjit det. / non-det." + (" / Warp)" if have_warp else ")"),
             "adjit det.: ns per thread, ordered / serial"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for r in rows:
        t = r["times"]
        cells = [r["case"], f"{t['adjit'] * 1e3:.2f}", f"{t['adjit_nondet'] * 1e3:.2f}",
                 f"{t['adjit'] / t['adjit_nondet']:.2f}"]
        if have_warp:
            cells += [f"{t['warp'] * 1e3:.2f}", f"{t['warp'] / t['adjit']:.2f}"]
        cells.append(" / ".join(str(r["distinct"][n]) for n in names))
        cells.append(r["orders"])
        lines.append("| " + " | ".join(cells) + " |")
    import adjit
    warp = ""
    if have_warp:
        import warp as wpm
        warp = f"; Warp {wpm.config.version} (device=\"cpu\", one thread)"
    text = f"""# Deterministic atomics: what they cost (issue 11)

Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.

- machine: {bench.machine()}
- adjit (git {bench.adjit_revision()}), {threads} threads (ADJIT_NUM_THREADS or all cores){warp}
- kernels: `benchmarks/kernels.py` (`sum_squares`, `scatter_add`, `gather`, `edge_forces`); inputs in `benchmarks/atomics.py`

{chr(10).join(lines)}

"deterministic / non-deterministic" is adjit's time with its default deterministic launches over its time with
`adjit.config.deterministic = False` (float atomic adds inline, as on a GPU); below 1 the deterministic launch is
faster. Times are medians of {{repeat}} whole measurements, each the median of calls interleaved between the backends
(`bench.interleaved`), the arrays added into zeroed (and a backward's seed copied in) untimed before each call. Every
result is first checked against numpy: deterministic adjit bitwise against `np.add.at` (which adds in index order, in
float32: the order of a one-thread run) for the scalar cases, the others within float tolerance; "distinct results"
counts the bit patterns of 5 runs of each.

How it works: docs/determinism.md. A deterministic launch of a kernel with float atomic adds gives the bits of running
its threads one after another in index order. It gets them one of two ways: "ordered" (on every core, each chunk of
threads logs its adds, 16 bytes each, and the logs are applied in thread order, in parallel over disjoint parts of
memory) or "serial" (one core, adding directly: no atomics, no log). The launcher times both on a kernel's first large
launches and then takes the faster per thread (the last column: the recent time per thread of each), timing the other
again now and then. Atomics cost more than they seem: an uncontended `lock cmpxchg` orders the loads around it, so a
scatter's cache misses no longer overlap, and contended ones (one element, a few bins) bounce a cache line between
cores; on this 2-core machine adding directly on one core beats atomics on two.
"""
    DOC.write_text(text)
    print(f"wrote {DOC}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from adjit import _runtime
    rows, names = measure(args.quick, args.repeat)
    command = "python benchmarks/atomics.py" + (" --quick" if args.quick else "") + (
        f" --repeat {args.repeat}" if args.repeat != 3 else "")
    write(rows, names, command.replace("{repeat}", str(args.repeat)), _runtime.num_threads())
    DOC.write_text(DOC.read_text().replace("{repeat}", str(args.repeat)))


if __name__ == "__main__":
    main()
