"""Trip-count benchmark of runtime-loop adjoints (issue 11, "Fast exact loop gradients").

    python benchmarks/loop_adjoints.py                                   # current build + Warp
    python benchmarks/loop_adjoints.py --before-python /tmp/beforevenv/bin/python \\
        --before-path /tmp/adjit-before                                  # + a snapshot of adjit

The ``springs`` kernel of kernels.py (a runtime-bounded loop of ``n_iter`` steps) on
20,000 particles, at n_iter = 10, 100, 1000 and 3000: forward time, ``tape.backward()`` time
alone, and backward / forward, for adjit and NVIDIA Warp (CPU), timed alongside (interleaved
calls in one process). Up to two adjit builds are measured, each in its own child process with
Warp timed again alongside it:

- "current": the adjit this interpreter imports (the checkout's build);
- "before": an older adjit (a checkout with its compiled modules, run by another interpreter
  with ``PYTHONPATH``, since an editable install's import hook wins over ``PYTHONPATH``):
  ``--before-python`` / ``--before-path``. Its results are saved to ``--before-json``
  (benchmarks/results/loop_adjoints_before.json); without ``--before-python`` that file is read
  back as the "before" series, if it exists.

After the timing at each trip count, every backend's gradient (that of the last timed backward)
is checked against float64 central differences on 64 particles; adjit's must agree at
n_iter <= 100 (``--strict``: at every trip count). Warp's does not: its adjoint of a dynamic loop
is wrong, which is reported, not asserted. A (backend, trip count) whose backward is predicted
to take longer than ``--max-call-s`` (from the previous trip count, growing as n^2, or with the
exponent measured between the last two, clamped to [1, 2]) is skipped and listed. Writes
docs/loop_adjoints.md and docs/loop_adjoints.png.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"
RESULTS = HERE / "results"
DEFAULT_BEFORE_JSON = RESULTS / "loop_adjoints_before.json"
LAST_RUN_JSON = RESULTS / "loop_adjoints_last_run.json"  # everything docs/loop_adjoints.* are made of

sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (timing and checking helpers; imports no backend)

N = 20_000
TRIPS = (10, 100, 1000, 3000)
DT, STIFFNESS = bench.SPRINGS_DT, bench.SPRINGS_K
FD_N = 64           # particles checked against float64 central differences
FD_TOL = 1e-3       # per particle: |directional derivative - fd| / (|fd| + 1e-2)
CHECK_TRIPS = 100   # the trip count at which the check is required (and asserted) in any case


# --------------------------------------------------------------------------- timing

def adaptive_interleaved(fns: dict, setups: dict, budget: float, max_n: int, long_s: float) -> dict:
    """{key: (median s, samples, [samples])} of ``fns[key]()`` (``setups[key]()`` untimed before each
    call). A first call of each is timed; it is a warm-up if shorter than ``long_s`` (then at least 3
    samples follow), else it is the first sample. Each function gets about ``budget`` seconds, between
    1 and ``max_n`` samples, the functions taking turns call by call, so that a noisy stretch of a
    shared machine hits all alike."""
    samples = {k: [] for k in fns}
    target = {}
    for k, fn in fns.items():
        setups.get(k, lambda: None)()
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        if t >= long_s:
            samples[k].append(t)
            target[k] = max(1, min(max_n, round(budget / t)))
        else:
            target[k] = max(3, min(max_n, int(budget / t)))
    while any(len(samples[k]) < target[k] for k in fns):
        for k, fn in fns.items():
            if len(samples[k]) >= target[k]:
                continue
            setups.get(k, lambda: None)()
            t0 = time.perf_counter()
            fn()
            samples[k].append(time.perf_counter() - t0)
    return {k: (float(np.median(s)), len(s), [float(x) for x in s]) for k, s in samples.items()}


# --------------------------------------------------------------------------- checks

def springs_fd(data: dict, n: int, n_iter: int, seed: int = 7):
    """Random per-particle directions for x, v, rot of the first ``n`` particles, and the float64
    central difference (h = 1e-6) of each particle's sum(seed_x * x_out + seed_v * v_out) along them."""
    rng = np.random.default_rng(seed)
    dirs = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 3, 3))
    base = [data[k][:n].astype(np.float64) for k in ("px", "pv", "prot")]
    sx, sv = data["px_seed"][:n].astype(np.float64), data["pv_seed"][:n].astype(np.float64)

    def loss(h):
        p, v = bench.springs_reference(*(x + h * d for x, d in zip(base, dirs)), DT, STIFFNESS, n_iter)
        return (sx * p + sv * v).sum(1)
    h = 1e-6
    with np.errstate(all="ignore"):  # particles that overflow come out non-finite and are left out
        fd = (loss(h) - loss(-h)) / (2 * h)
        p32, v32 = bench.springs_reference(data["px"][:n], data["pv"][:n], data["prot"][:n], DT, STIFFNESS, n_iter)
    ok = np.isfinite(fd) & np.isfinite(p32).all(1) & np.isfinite(v32).all(1)
    return dirs, fd, ok


def fd_check(case, dirs, fd, ok) -> dict:
    """The error of each particle's directional derivative (``bench.springs_fd_error``), over the particles
    ``ok`` (whose state stays finite in the float32 numpy reference: springs' rotated spring force is not
    conservative, some particles gain energy, and by n_iter = 3000 a few percent overflow float32); a
    non-finite gradient of such a particle counts as an error."""
    with np.errstate(all="ignore"):
        err = bench.springs_fd_error([case.grad(0), case.grad(1), case.grad(2)], dirs, fd)
    err = np.where(np.isfinite(err), err, np.inf)[ok]
    excluded = int((~ok).sum())
    if not len(err):
        return {"max": None, "median": None, "above_tol": 0.0, "particles": 0, "excluded": excluded}
    return {"max": float(err.max()), "median": float(np.median(err)), "above_tol": float((err > FD_TOL).mean()),
            "particles": int(ok.sum()), "excluded": excluded}


# --------------------------------------------------------------------------- child

def child_main(opts) -> None:
    """One process: one adjit (whichever this interpreter imports) and Warp, timed alongside."""
    if opts.adjit_threads:
        os.environ["ADJIT_NUM_THREADS"] = str(opts.adjit_threads)
    cache = tempfile.mkdtemp(prefix=f"loop-adjoints-{opts.child}-")
    wps = {"adjit": bench.import_backend("adjit", os.path.join(cache, "adjit"))}
    import adjit
    adjit_file = str(Path(adjit.__file__).resolve())
    print(f"[{opts.child}] adjit from {adjit_file}", flush=True)
    if opts.expect_path:
        expect = str(Path(opts.expect_path).resolve())
        if not adjit_file.startswith(expect + os.sep):
            raise SystemExit(f"[{opts.child}] expected adjit under {expect}, imported {adjit_file}")
    if opts.reject_path and adjit_file.startswith(str(Path(opts.reject_path).resolve()) + os.sep):
        raise SystemExit(f"[{opts.child}] imported the snapshot {adjit_file}, not the current build")
    warp_ok, why = bench.warp_available() if not opts.no_warp else (False, "--no-warp")
    if warp_ok:
        wps["warp"] = bench.import_backend("warp", os.path.join(cache, "warp"))
    else:
        print(f"[{opts.child}] Warp skipped: {why}", flush=True)
    backends = {name: bench.Backend(name, wp) for name, wp in wps.items()}
    info = {"label": opts.child, "adjit_file": adjit_file,
            "adjit_threads": os.environ.get("ADJIT_NUM_THREADS") or f"default ({os.cpu_count()})",
            "warp_version": wps["warp"].config.version if warp_ok else None,
            "machine": bench.machine(), "load_start": bench.loadavg()}

    px, pv, prot = bench.springs_inputs(N)
    rng = np.random.default_rng(0)
    data = {"px": px, "pv": pv, "prot": prot,
            "px_seed": rng.standard_normal((N, 3)).astype(np.float32),
            "pv_seed": rng.standard_normal((N, 3)).astype(np.float32)}
    trips = [int(t) for t in opts.trips.split(",")]
    results, skipped = {}, []
    prev = {}  # name -> [(trips, backward median)]
    for n_iter in trips:
        print(f"[{opts.child}] n_iter = {n_iter}", flush=True)
        with np.errstate(all="ignore"):
            ref_p, _ = bench.springs_reference(px[:FD_N * 16], pv[:FD_N * 16], prot[:FD_N * 16], DT, STIFFNESS, n_iter)
        active, fwd_args, cases = {}, {}, {}
        for name, b in backends.items():
            if prev.get(name):
                (n_prev, t_prev), expo = prev[name][-1], 2.0
                if len(prev[name]) > 1:  # the growth measured between the last two trip counts, in [1, 2]
                    (n0, t0_), (n1, t1_) = prev[name][-2:]
                    expo = float(np.clip(np.log(t1_ / t0_) / np.log(n1 / n0), 1.0, 2.0))
                predicted = t_prev * (n_iter / n_prev) ** expo
                if predicted > opts.max_call_s:
                    msg = (f"{opts.child}/{name} at n_iter={n_iter}: a backward predicted to take {predicted:.0f} s "
                           f"({t_prev:.3g} s at n_iter={n_prev}, times (n/{n_prev})^{expo:.2f}) > --max-call-s "
                           f"{opts.max_call_s:g}")
                    print(f"[{opts.child}] skipped: {msg}", flush=True)
                    skipped.append(msg)
                    continue
            active[name] = b
            wp = b.wp
            fwd_args[name] = [b.array(px, wp.vec3), b.array(pv, wp.vec3), b.array(prot, wp.mat33),
                              b.array(np.zeros_like(px), wp.vec3), b.array(np.zeros_like(px), wp.vec3),
                              DT, STIFFNESS, n_iter]
            b.launch(b.k.springs, N, fwd_args[name])
            b.sync()
            k = FD_N * 16  # forward result checked against numpy on the first particles
            np.testing.assert_allclose(fwd_args[name][3].numpy()[:k], ref_p, rtol=1e-3, atol=1e-3,
                                       err_msg=f"{opts.child}/{name} springs x_out, n_iter={n_iter}")
            g = lambda x, dtype: b.array(x, dtype, requires_grad=True)  # noqa: E731
            t0 = time.perf_counter()
            cases[name] = bench.GradCase(b, "springs", N,
                                         [g(px, wp.vec3), g(pv, wp.vec3), g(prot, wp.mat33),
                                          g(np.zeros_like(px), wp.vec3), g(np.zeros_like(px), wp.vec3),
                                          DT, STIFFNESS, n_iter],
                                         {3: (data["px_seed"], wp.vec3), 4: (data["pv_seed"], wp.vec3)})
            if n_iter == trips[0]:  # the documented API once (adjit compiles the adjoint here)
                cases[name].backward_with_grads()
                print(f"[{opts.child}] {name}: record + first backward" + (" (compiles the adjoint)" if name == "adjit" else "") + " "
                      f"{time.perf_counter() - t0:.2f} s", flush=True)
        if not active:
            continue
        fns, setups = {}, {}
        for name, b in active.items():
            def fwd(b=b, args=fwd_args[name]):
                b.launch(b.k.springs, N, args)
                b.sync()
            fns[(name, "fwd")] = fwd
            fns[(name, "bwd")] = cases[name].backward
            setups[(name, "bwd")] = cases[name].reseed
        timed = adaptive_interleaved(fns, setups, opts.budget, opts.max_n, opts.long_s)
        dirs, fd, ok = springs_fd(data, FD_N, n_iter)
        results[n_iter] = {}
        for name in active:
            f, bw = timed[(name, "fwd")], timed[(name, "bwd")]
            check = fd_check(cases[name], dirs, fd, ok)  # the gradient of the last timed backward
            r = {"fwd_s": f[0], "fwd_n": f[1], "fwd_samples": f[2], "bwd_s": bw[0], "bwd_n": bw[1],
                 "bwd_samples": bw[2], "ratio": bw[0] / f[0], "fd": check}
            results[n_iter][name] = r
            prev.setdefault(name, []).append((n_iter, bw[0]))
            print(f"[{opts.child}] {name:5s} n_iter={n_iter:5d}: forward {f[0] * 1e3:9.2f} ms (n={f[1]}), backward "
                  f"{bw[0] * 1e3:10.2f} ms (n={bw[1]}), backward/forward {r['ratio']:6.2f}; gradient vs float64 "
                  f"central differences on {check['particles']} particles: max rel. error {fmt_e(check['max'])} "
                  f"(median {fmt_e(check['median'])}, {100 * check['above_tol']:.0f} % above {FD_TOL:g})"
                  + (f"; {check['excluded']} of {FD_N} left out, their float32 state overflows" if check["excluded"] else "")
                  + ("  [Warp's gradient is wrong]" if name == "warp" and check["above_tol"] > 0 else ""), flush=True)
            if name == "adjit" and check["above_tol"] > 0 and (n_iter <= CHECK_TRIPS or opts.strict):
                raise SystemExit(f"[{opts.child}] adjit's springs gradient at n_iter={n_iter} disagrees with float64 "
                                 f"central differences: {check}")
        del cases
    if CHECK_TRIPS not in results:  # the required check, if n_iter=100 was not timed
        print(f"[{opts.child}] checking gradients at n_iter={CHECK_TRIPS}", flush=True)
        dirs, fd, ok = springs_fd(data, FD_N, CHECK_TRIPS)
        for name, b in backends.items():
            wp = b.wp
            g = lambda x, dtype: b.array(x, dtype, requires_grad=True)  # noqa: E731
            case = bench.GradCase(b, "springs", N, [g(px, wp.vec3), g(pv, wp.vec3), g(prot, wp.mat33),
                                                    g(np.zeros_like(px), wp.vec3), g(np.zeros_like(px), wp.vec3),
                                                    DT, STIFFNESS, CHECK_TRIPS],
                                  {3: (data["px_seed"], wp.vec3), 4: (data["pv_seed"], wp.vec3)})
            case.backward_with_grads()
            check = fd_check(case, dirs, fd, ok)
            info.setdefault("fd_check", {})[name] = check
            print(f"[{opts.child}] {name} n_iter={CHECK_TRIPS}: max rel. error {fmt_e(check['max'])}", flush=True)
            if name == "adjit" and check["above_tol"] > 0:
                raise SystemExit(f"[{opts.child}] adjit's springs gradient disagrees with central differences: {check}")
    compiled = getattr(sys.modules.get("adjit._adjit"), "__file__", None)  # loaded by the first adjoint compile
    if compiled:
        info.update({"adjit_module": compiled,
                     "adjit_module_sha256": hashlib.sha256(Path(compiled).read_bytes()).hexdigest()[:16],
                     "adjit_module_mtime": time.strftime("%Y-%m-%d %H:%M %Z",
                                                         time.localtime(Path(compiled).stat().st_mtime))})
    info["load_end"] = bench.loadavg()
    info["results"] = {str(k): v for k, v in results.items()}
    info["skipped"] = skipped
    print("LOOP_RESULT " + json.dumps(info), flush=True)


# --------------------------------------------------------------------------- parent

def site_packages(python: str) -> str:
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def run_child(label: str, python: str, opts, env_extra: dict, expect: str | None, reject: str | None) -> dict:
    env = dict(os.environ)
    for k in ("ADJIT_DUMP_DIR", "ADJIT_CACHE", "ADJIT_CACHE_DIR", "PYTHONPATH"):
        env.pop(k, None)
    env.update(env_extra)
    cmd = [python, str(Path(__file__).resolve()), "--child", label, "--trips", opts.trips,
           "--budget", str(opts.budget), "--max-n", str(opts.max_n), "--long-s", str(opts.long_s),
           "--max-call-s", str(opts.max_call_s)]
    cmd += ["--adjit-threads", str(opts.adjit_threads)] if opts.adjit_threads else []
    cmd += ["--no-warp"] if opts.no_warp else []
    cmd += ["--strict"] if opts.strict else []
    cmd += ["--expect-path", expect] if expect else []
    cmd += ["--reject-path", reject] if reject else []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=str(ROOT))
    result = None
    for line in proc.stdout:
        if line.startswith("LOOP_RESULT "):
            result = json.loads(line[len("LOOP_RESULT "):])
        else:
            print("  " + line.rstrip(), flush=True)
    if proc.wait() != 0 or result is None:
        raise SystemExit(f"the {label} child failed (exit {proc.returncode})")
    return result


def git(path: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def measure_before(opts) -> dict:
    path = Path(opts.before_path).resolve()
    sp = site_packages(opts.before_python)
    env = {"PYTHONPATH": str(path),
           "LD_LIBRARY_PATH": ":".join(filter(None, [f"{sp}/mlir/_mlir_libs", f"{sp}/llvm/lib",
                                                     os.environ.get("LD_LIBRARY_PATH")]))}
    res = run_child("before", opts.before_python, opts, env, expect=str(path), reject=None)
    dirty = [line for line in git(path, "status", "--porcelain", "--untracked-files=no").splitlines() if line]
    res.update({"git_commit": git(path, "rev-parse", "HEAD"), "git_subject": git(path, "log", "-1", "--format=%s")[:120],
                "git_tracked_changes": dirty, "before_path": str(path), "before_python": opts.before_python,
                "date": time.strftime("%Y-%m-%d %H:%M %Z"), "command": opts.command})
    return res


def fmt_e(v: float | None) -> str:
    return "-" if v is None else f"{v:.2g}"


def fmt_ms(s: float | None) -> str:
    if s is None:
        return "-"
    ms = s * 1e3
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def fmt_x(v: float | None) -> str:
    return "-" if v is None else (f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def series(runs: dict) -> list[tuple[str, str, dict]]:
    """(column label, backend, run) in display order."""
    out = []
    if "before" in runs:
        out.append(("adjit before", "adjit", runs["before"]))
    if "current" in runs:
        out.append(("adjit current build", "adjit", runs["current"]))
    warp_run = runs.get("current") or runs.get("before")
    if warp_run and warp_run.get("warp_version"):
        out.append(("Warp", "warp", warp_run))
    return out


def trips_of(runs: dict) -> list[int]:
    return sorted({int(t) for r in runs.values() for t in r["results"]})


def get(run: dict, n: int, backend: str) -> dict | None:
    return run["results"].get(str(n), {}).get(backend)


def missing(run: dict, n: int, backend: str) -> str:
    """Why a run has no result: "skipped" (over --max-call-s) or "-" (that trip count was not run)."""
    return "skipped" if any(m.startswith(f"{run['label']}/{backend} at n_iter={n}:") for m in run.get("skipped", [])) \
        else "-"


def summary_table(runs: dict) -> str:
    cols = series(runs)
    head = ["n_iter"] + [f"{label}: backward ms" for label, _, _ in cols]
    if "before" in runs and "current" in runs:
        head.append("before / current backward (x)")
    head += [f"{label}: backward / forward" for label, _, _ in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for n in trips_of(runs):
        cells = [str(n)]
        rs = [get(run, n, backend) for _, backend, run in cols]
        cells += [fmt_ms(r["bwd_s"]) + f" (n={r['bwd_n']})" if r else missing(run, n, backend)
                  for r, (_, backend, run) in zip(rs, cols)]
        if "before" in runs and "current" in runs:
            b, c = get(runs["before"], n, "adjit"), get(runs["current"], n, "adjit")
            cells.append(fmt_x(b["bwd_s"] / c["bwd_s"]) if b and c else "-")
        cells += [fmt_x(r["ratio"]) if r else "-" for r in rs]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def detail_table(runs: dict) -> str:
    lines = ["| n_iter | process | backend | forward ms (n) | backward ms (n) | backward / forward | "
             "backward vs Warp's in the same process (x) | gradient: max rel. error vs float64 FD |",
             "|---:|---|---|---:|---:|---:|---:|---:|"]
    for n in trips_of(runs):
        for label in ("before", "current"):
            run = runs.get(label)
            if not run:
                continue
            w = get(run, n, "warp")
            for backend in ("adjit", "warp"):
                r = get(run, n, backend)
                if backend == "warp" and not run.get("warp_version"):
                    continue
                name = ("adjit " + label) if backend == "adjit" else "Warp (gradient wrong)"
                if not r:
                    why = missing(run, n, backend)
                    lines.append(f"| {n} | {label} | {name} | {why} | {why} | - | - | - |")
                    continue
                vs = fmt_x(r["bwd_s"] / w["bwd_s"]) if backend == "adjit" and w else "-"
                lines.append(f"| {n} | {label} | {name} | {fmt_ms(r['fwd_s'])} ({r['fwd_n']}) | "
                             f"{fmt_ms(r['bwd_s'])} ({r['bwd_n']}) | {fmt_x(r['ratio'])} | {vs} | "
                             f"{fmt_e(r['fd']['max'])}" + (f" ({r['fd']['excluded']} of {FD_N} left out)"
                                                           if r['fd'].get('excluded') else "") + " |")
    return "\n".join(lines)


def plot(runs: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    styles = {"adjit before": ("tab:red", "o"), "adjit current build": ("tab:green", "s"), "Warp": ("tab:gray", "^")}
    for label, backend, run in series(runs):
        pts = [(n, get(run, n, backend)["bwd_s"]) for n in trips_of(runs) if get(run, n, backend)]
        if not pts:
            continue
        if label == "adjit before":
            text = f"adjit before ({run.get('git_commit', '')[:7]}, recorded {run.get('date', '')[:10]})"
        elif label == "Warp":
            text = f"Warp {run['warp_version']} (its gradient is wrong)"
        else:
            text = f"adjit current build ({run.get('git_describe', '')})"
        color, marker = styles[label]
        ax.plot(*zip(*pts), marker=marker, color=color, label=text)
        for n, t in pts:
            once = " (1 run)" if get(run, n, backend)["bwd_n"] == 1 else ""
            ax.annotate(f"{t:.3g} s{once}", (n, t), textcoords="offset points", fontsize=7, color=color,
                        xytext=(-6, 6) if label == "adjit before" else (5, -10),
                        ha="right" if label == "adjit before" else "left")
    ns = np.array(trips_of(runs), float)
    ref = get(runs.get("current") or runs.get("before"), int(ns[0]), "adjit")
    if ref and len(ns) > 1:
        t0 = ref["bwd_s"]
        ax.plot(ns, t0 * ns / ns[0], ":", color="black", linewidth=0.8, label="guide: slope 1, O(n)")
        ax.plot(ns, t0 * (ns / ns[0]) ** 2, "--", color="black", linewidth=0.8, label="guide: slope 2, O(n²)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(ns[0] / 1.8, ns[-1] * 1.8)
    ax.set_xlabel("trip count n_iter of the springs loop")
    ax.set_ylabel("tape.backward() time, s (median)")
    ax.set_title(f"Runtime-loop adjoint: springs, {N:,} particles, CPU ({os.cpu_count()} cores)")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def notes(runs: dict, opts, before_source: str) -> list[str]:
    out = []
    if "before" in runs:
        b = runs["before"]
        dirty = " (with changes to tracked files!)" if b.get("git_tracked_changes") else ""
        out.append(f"\"adjit before\" is git {b['git_commit'][:10]}{dirty} (\"{b['git_subject']}\"), {before_source}; "
                   f"recorded on {b['date']} by `{b['command']}` (compiled module {b.get('adjit_module')}, sha256 "
                   f"{b.get('adjit_module_sha256')}, built {b.get('adjit_module_mtime')}; Warp {b.get('warp_version')} timed alongside it in that process, "
                   f"load average {b['load_start']} -> {b['load_end']}).")
    if "current" in runs:
        c = runs["current"]
        out.append(f"\"adjit current build\" is the adjit imported by `{c.get('python')}`: {c['adjit_file']} "
                   f"(git {c['git_describe']} at the time of the run; compiled module {c.get('adjit_module')}, sha256 "
                   f"{c.get('adjit_module_sha256')}, built {c.get('adjit_module_mtime')}); load average {c['load_start']} -> {c['load_end']}.")
    warp_run = runs.get("current") or runs.get("before")
    warps = [(n, get(warp_run, n, "warp")["fd"]) for n in trips_of(runs) if get(warp_run, n, "warp")]
    if any(f["above_tol"] > 0 for _, f in warps):
        out.append("Warp's springs gradient is wrong, so its backward times are those of a cheaper, incorrect "
                   f"computation: against float64 central differences its directional derivatives are off by a "
                   "median (relative) " + ", ".join(f"{fmt_e(f['median'])} at n_iter={n} ({100 * f['above_tol']:.0f} % "
                                                    f"of {f['particles']} particles above {FD_TOL:g})" for n, f in warps)
                   + ". Warp's adjoint of a dynamic (runtime-bounded) loop replays the body on the loop-carried "
                   "variables' final values instead of each iteration's (see docs/benchmarks.md).")
    adj = [(label, n, get(run, n, "adjit")["fd"]["max"]) for label, run in runs.items() for n in trips_of(runs)
           if get(run, n, "adjit")]
    if adj:
        out.append("Gradient check: after the timing at each trip count, the gradients of the last timed backward "
                   f"are compared with float64 central differences (h = 1e-6) of the numpy reference on {FD_N} "
                   "particles (random directions in x, v, rot; error |directional derivative - fd| / (|fd| + 1e-2)); "
                   f"adjit must stay within {FD_TOL:g} at n_iter <= {CHECK_TRIPS} (asserted). adjit's max errors: "
                   + ", ".join(f"{label} n={n}: {fmt_e(e)}" for label, n, e in adj) + ". The kernel's rotated spring "
                   "force is not conservative: some particles gain energy (in the numpy reference 30 % of the 20,000 "
                   "reach |x| > 1e3 by n_iter = 1000 and 4.5 % overflow to inf/nan by 3000, in float32, alike in all "
                   "backends, and the gradients of those are inf/nan); particles whose float32 state overflows in the numpy "
                   "reference are left out of the check (counted in the table); the relative error copes with the "
                   "growth of the others.")
    out.append(f"Timing: each trip count is recorded once on a tape per backend (20,000 particles, n_iter a runtime "
               "argument); the forward (arrays without gradients, no tape) and `tape.backward()` alone (gradients "
               "zeroed and outputs re-seeded untimed before each call) of adjit and Warp are timed in one process, "
               "taking turns call by call. A first call of each is a warm-up (or, if it takes over "
               f"{opts.long_s:g} s, the first sample); then about {opts.budget:g} s per series, at least 3 samples (1 for "
               f"calls over {opts.long_s:g} s) and at most {opts.max_n}. Times are medians; n is the number of samples. "
               "\"backward vs Warp\" divides by Warp's backward timed in the same process; \"before / current\" "
               "compares two processes (and, for a recorded \"before\", two runs), so it is noisier.")
    out.append("adjit splits a launch over all cores of its thread pool "
               f"(ADJIT_NUM_THREADS: {runs.get('current', runs.get('before'))['adjit_threads']}); Warp runs CPU "
               "kernels on one thread. Only adjit's own times compare like for like (backward / forward, growth "
               "with n_iter, before / current).")
    if "before" in runs and "current" in runs:
        common = [n for n in trips_of(runs) if get(runs["before"], n, "adjit") and get(runs["current"], n, "adjit")]
        fwd = [(n, get(runs["before"], n, "adjit")["fwd_s"], get(runs["current"], n, "adjit")["fwd_s"]) for n in common]
        if fwd:
            out.append("The forward did not change between the two builds, so the forward times of the two processes "
                       "show how alike the machine was: adjit's forward took " + ", ".join(
                           f"{fmt_ms(b)} / {fmt_ms(c)} ms at n_iter={n}" for n, b, c in fwd) + " (before / current). "
                       "Where they differ (a shared 2-core machine: the second core is not always free), \"before / "
                       "current backward\" is skewed likewise; the ratio of the backward / forward columns, each "
                       "timed within one process, is the steadier comparison.")
    if "before" in runs and "current" in runs and runs["before"]["adjit_threads"] != runs["current"]["adjit_threads"]:
        out.append(f"WARNING: \"before\" ran adjit with ADJIT_NUM_THREADS {runs['before']['adjit_threads']}, the current "
                   f"build with {runs['current']['adjit_threads']}: their times do not compare.")
    skipped = [m for run in runs.values() for m in run.get("skipped", [])]
    if skipped:
        out.append("Skipped (over the per-call budget): " + "; ".join(skipped) + ".")
    return out


def write_markdown(runs: dict, opts, before_source: str, path: Path, date: str) -> None:
    run = runs.get("current") or runs.get("before")
    md = ["# Runtime-loop adjoints: backward time against trip count (issue 11)", "",
          f"Generated by `{opts.command}` on {date}.", "",
          f"- machine: {run['machine']}",
          f"- kernel: `springs` of `benchmarks/kernels.py` (a runtime-bounded loop of n_iter steps: vec3/mat33 math, "
          f"if/else), {N:,} threads, CPU; Warp {run.get('warp_version') or 'not installed'} (device=\"cpu\")", "",
          "## Backward time", "",
          summary_table(runs), "",
          "![backward time against trip count](loop_adjoints.png)", "",
          "## All measurements", "",
          "Each process times one adjit and Warp alongside (\"process\": which adjit).", "",
          detail_table(runs), "",
          "## Notes", ""] + [f"- {n}" for n in notes(runs, opts, before_source)] + [""]
    path.write_text("\n".join(md))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--expect-path", help=argparse.SUPPRESS)
    ap.add_argument("--reject-path", help=argparse.SUPPRESS)
    ap.add_argument("--trips", default=",".join(map(str, TRIPS)), help="comma-separated trip counts (default %(default)s)")
    ap.add_argument("--before-python", help="interpreter for the \"before\" adjit (e.g. /tmp/beforevenv/bin/python)")
    ap.add_argument("--before-path", help="checkout of the \"before\" adjit with its compiled modules, put on PYTHONPATH")
    ap.add_argument("--before-json", default=str(DEFAULT_BEFORE_JSON),
                    help="where the \"before\" results are saved (with --before-python) or read from (default "
                         "benchmarks/results/loop_adjoints_before.json)")
    ap.add_argument("--no-current", action="store_true", help="do not measure the current build")
    ap.add_argument("--no-warp", action="store_true", help="do not time Warp")
    ap.add_argument("--budget", type=float, default=3.0, help="seconds per timed series (default %(default)s)")
    ap.add_argument("--max-n", type=int, default=15, help="most samples per series (default %(default)s)")
    ap.add_argument("--long-s", type=float, default=20.0,
                    help="a call this long needs no warm-up and may be timed once (default %(default)s)")
    ap.add_argument("--max-call-s", type=float, default=900.0,
                    help="skip a trip count whose backward is predicted to take longer (default %(default)s)")
    ap.add_argument("--adjit-threads", type=int, default=0, help="ADJIT_NUM_THREADS for adjit (default: all cores)")
    ap.add_argument("--strict", action="store_true", help="assert adjit's gradient check at every trip count")
    ap.add_argument("--quick", action="store_true", help="trip counts 10,100 and a 1 s budget (a smoke test)")
    ap.add_argument("--no-write", action="store_true",
                    help="do not write docs/loop_adjoints.{md,png} and benchmarks/results/loop_adjoints_last_run.json")
    ap.add_argument("--render-only", action="store_true",
                    help="measure nothing: rewrite docs/loop_adjoints.{md,png} from benchmarks/results/"
                         "loop_adjoints_last_run.json")
    opts = ap.parse_args()
    if opts.quick:
        opts.trips, opts.budget = "10,100", 1.0
    if opts.child:
        child_main(opts)
        return
    if opts.render_only:
        last = json.loads(LAST_RUN_JSON.read_text())
        for k, v in last["opts"].items():
            setattr(opts, k, v)
        write_docs(last["runs"], opts, last["before_source"], last["date"])
        return
    if bool(opts.before_python) != bool(opts.before_path):
        ap.error("--before-python and --before-path go together")
    argv = [a for a in sys.argv[1:]]
    opts.command = "python benchmarks/loop_adjoints.py" + ("" if not argv else " " + shlex.join(argv))
    t_start = time.perf_counter()
    print(f"machine: {bench.machine()}", flush=True)
    runs, before_source = {}, ""
    before_json = Path(opts.before_json)
    if opts.before_python:
        print(f"adjit before: {opts.before_path} run by {opts.before_python}", flush=True)
        runs["before"] = measure_before(opts)
        before_json.parent.mkdir(parents=True, exist_ok=True)
        before_json.write_text(json.dumps(runs["before"], indent=1) + "\n")
        print(f"wrote {before_json}", flush=True)
        before_source = f"measured in this run from {runs['before']['before_path']}"
    elif before_json.exists():
        runs["before"] = json.loads(before_json.read_text())
        before_source = f"read back from `{before_json.resolve().relative_to(ROOT) if before_json.resolve().is_relative_to(ROOT) else before_json}`"
        print(f"adjit before: read back from {before_json} (recorded {runs['before']['date']}, "
              f"git {runs['before']['git_commit'][:10]})", flush=True)
    else:
        print("adjit before: not given (--before-python/--before-path) and no saved results; skipped", flush=True)
    if not opts.no_current:
        print("adjit current build", flush=True)
        runs["current"] = run_child("current", sys.executable, opts, {}, expect=None,
                                    reject=opts.before_path)
        runs["current"].update(git_describe=bench.adjit_revision(), python=sys.executable,
                               date=time.strftime("%Y-%m-%d %H:%M %Z"))
    if not runs:
        raise SystemExit("nothing measured")
    print()
    print(summary_table(runs))
    print()
    print(detail_table(runs))
    for n in notes(runs, opts, before_source):
        print(f"note: {n}")
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
    if not opts.no_write:
        date = time.strftime("%Y-%m-%d %H:%M %Z")
        RESULTS.mkdir(parents=True, exist_ok=True)
        LAST_RUN_JSON.write_text(json.dumps({
            "date": date, "before_source": before_source, "runs": runs,
            "opts": {k: getattr(opts, k) for k in ("command", "budget", "max_n", "long_s", "max_call_s")}},
            indent=1) + "\n")
        print(f"wrote {LAST_RUN_JSON}")
        write_docs(runs, opts, before_source, date)


def write_docs(runs: dict, opts, before_source: str, date: str) -> None:
    DOCS.mkdir(exist_ok=True)
    write_markdown(runs, opts, before_source, DOCS / "loop_adjoints.md", date)
    plot(runs, DOCS / "loop_adjoints.png")
    print(f"wrote {DOCS / 'loop_adjoints.md'} and {DOCS / 'loop_adjoints.png'}")


if __name__ == "__main__":
    main()
