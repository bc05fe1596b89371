"""What bounds checks cost: every runtime kernel of bench.py, forward and
backward, compiled with adjit's bounds checks (the default) and without
(``@kernel(bounds_check=False)``), timed interleaved in one run, with Warp's
CPU (which checks nothing outside its debug build) alongside as the anchor;
plus a gather and a scatter-add through an index array, whose checks cannot
be proved once per launch (one compare and branch per access).

    python benchmarks/bounds_check.py [--quick] [--repeat N]

The kernels and inputs are bench.py's; results and gradients of all three are
checked against numpy and central differences first (bench.verify*). Each
time is the median of N (default 3) whole measurements. Writes
docs/bounds_check.md.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import bench
from bench import Backend

DOC = bench.DOCS / "bounds_check.md"


def backends_with_and_without_checks() -> dict[str, Backend]:
    import adjit
    backends = {"adjit": Backend("adjit", adjit), "unchecked": Backend("unchecked", adjit)}
    for value in vars(backends["unchecked"].k).values():
        if isinstance(value, adjit.Kernel):
            value.bounds_check = False
    have_warp, why = bench.warp_available()
    if have_warp:
        backends["warp"] = Backend("warp", bench.import_backend("warp"))
    else:
        print(f"  Warp not importable ({why}): its column is left out")
    return backends


def check_variants(backends: dict[str, Backend]) -> None:
    """The two adjit backends really run checked and unchecked code."""
    from adjit import loader
    for name in ("saxpy_out", "springs"):
        checked = loader.cpu_variant(getattr(backends["adjit"].k, name))
        unchecked = loader.cpu_variant(getattr(backends["unchecked"].k, name))
        assert checked.sites and not unchecked.sites, name


GATHER_N = 4_000_000


def index_times(backends: dict[str, Backend], budget: float) -> dict:
    """{backend: {"gather": ..., "scatter_add": ...}} forward times, checked
    against numpy first."""
    rng = np.random.default_rng(3)
    x = rng.random(GATHER_N, dtype=np.float32)
    idx = rng.permutation(GATHER_N).astype(np.int32)
    out = {name: {} for name in backends}
    for kernel, expected in (("gather", x[idx] * np.float32(2.0)), ("scatter_add", None)):
        fns = {}
        for name, b in backends.items():
            args = [b.array(x), b.array(idx), b.array(np.zeros(GATHER_N, np.float32))]
            b.launch(getattr(b.k, kernel), GATHER_N, args)
            b.sync()
            want = expected if expected is not None else np.bincount(idx, x, GATHER_N)
            np.testing.assert_allclose(args[2].numpy(), want, rtol=1e-6, err_msg=f"{name} {kernel}")

            def fn(b=b, k=getattr(b.k, kernel), args=args):
                b.launch(k, GATHER_N, args)
                b.sync()
            fns[name] = fn
        for name, res in bench.interleaved(fns, budget).items():
            out[name][kernel] = res
    return out


def run(quick: bool) -> tuple[dict, list[str]]:
    backends = backends_with_and_without_checks()
    data = bench.make_data()
    args = {name: bench.prepare(b, data) for name, b in backends.items()}
    bench.verify(backends, args, data)
    check_variants(backends)
    budget = 0.5 if quick else 2.0
    times = bench.forward_times(backends, args, budget)
    for name, res in index_times(backends, budget).items():
        times[name].update(res)
    cases, notes = {}, []
    for name, b in backends.items():
        cases[name], error = bench.grad_cases(b, data)
        if error:
            notes.append(f"{name}: in-place saxpy backward left out ({error.splitlines()[0][:120]})")
    notes += bench.verify_gradients(backends, cases, data)
    for name, res in bench.backward_times(backends, cases, args, budget).items():
        times[name].update({k: v for k, v in res.items() if k.startswith("bwd_")})
    for name, res in bench.launch_overhead(backends, args, rounds=3 if quick else 8).items():
        times[name]["launch"] = res
    return times, notes


def report(times: dict, notes: list[str], quick: bool, repeat: int) -> str:
    have_warp = "warp" in times
    rows = []
    for key in ("saxpy", "saxpy_out", "cross", "springs", "gather", "scatter_add", "bwd_saxpy",
                "bwd_saxpy_out", "bwd_cross", "bwd_springs", "launch"):
        if key not in times["adjit"] or key not in times["unchecked"]:
            continue
        checked, unchecked = times["adjit"][key][0], times["unchecked"][key][0]
        label = (f"{key[4:]} backward" if key.startswith("bwd_") else
                 "launch overhead (dim=1)" if key == "launch" else f"{key} forward")
        unit, scale = ("us", 1e6) if key == "launch" else ("ms", 1e3)
        row = (f"| {label} | {checked * scale:.3f} {unit} | {unchecked * scale:.3f} {unit} | "
               f"{100 * (checked / unchecked - 1):+.1f}% |")
        if have_warp:
            warp = times["warp"].get(key)
            row += f" {warp[0] * scale:.3f} {unit} |" if warp else " |"
        rows.append(row)
    header = "| kernel | adjit, checked (default) | adjit, unchecked | cost of the checks |"
    header += " Warp (no checks) |" if have_warp else ""
    rule = "|---|---|---|---|" + ("---|" if have_warp else "")
    return "\n".join([
        "# The cost of bounds checks",
        "",
        "Generated by `python benchmarks/bounds_check.py" + (" --quick" if quick else "") +
        (f" --repeat {repeat}" if repeat != 3 else "") + "` on "
        f"{bench.machine()} ({time.strftime('%Y-%m-%d')}, adjit {bench.adjit_revision()}, load {bench.loadavg()}).",
        "",
        "Every runtime kernel of `benchmarks/bench.py` (same inputs), with adjit's bounds checks on and off,",
        "timed in interleaved rounds in one process (each time: the median of the rounds, then the median",
        f"of {repeat} whole measurements). All their accesses are indexed by the thread, so a launch that",
        "fits its arrays runs the version compiled without checks (the same code as unchecked: the",
        "differences are the noise of this machine). `gather` (`y[i] = x[idx[i]] * 2`) and `scatter_add`",
        f"(`atomic_add(y, idx[i], x[i])`), {GATHER_N:,} random indices, index through memory: one",
        "compare and branch per access.",
        "",
        header, rule, *rows, "",
        *(f"- {n}" for n in notes),
    ]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter timing budgets")
    ap.add_argument("--repeat", type=int, default=3, help="whole measurements to take the median of")
    ap.add_argument("--no-write", action="store_true", help=f"do not write {DOC.relative_to(bench.ROOT)}")
    opts = ap.parse_args()
    runs = [run(opts.quick) for _ in range(opts.repeat)]
    times = {name: {key: (float(np.median([r[0][name][key][0] for r in runs])),
                          sum(r[0][name][key][1] for r in runs))
                    for key in runs[0][0][name]}
             for name in runs[0][0]}
    text = report(times, runs[0][1], opts.quick, opts.repeat)
    print(text)
    if not opts.no_write:
        DOC.write_text(text)
        print(f"wrote {DOC.relative_to(bench.ROOT)}")


if __name__ == "__main__":
    main()
