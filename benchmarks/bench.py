"""adjit against NVIDIA Warp, side by side, on the CPU.

    python benchmarks/bench.py [--quick]

Measures, for both (Warp columns are skipped if ``warp`` is not importable):

1. cold compile: in a fresh process with an empty compile cache, the time of
   the first launch (the compile and one tiny run), import time apart;
2. warm load: the same in a second fresh process with the cache populated;
3. forward time (median of N launches after warm-up) of saxpy on 10M float32,
   ``length(cross(a, b)) * a`` on 1M vec3 and ``springs`` (vec3/mat33 math,
   a runtime-bounded loop, if/else; see kernels.py);
4. launch overhead: median time of a dim=1 launch of a trivial kernel;
5. saxpy bandwidth against ``np.copyto`` of a large float32 array;

and 3-5 again in a fresh process with ``ADJIT_NUM_THREADS=1`` (Warp's CPU
launches are single-threaded). Results are checked against each other and numpy before timing. Writes
docs/benchmarks.md and docs/benchmarks.png.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"

SAXPY_N = 10_000_000
CROSS_N = 1_000_000
SPRINGS_N = 1_000_000
SPRINGS_ITERS = 10
SPRINGS_DT, SPRINGS_K = 0.01, 5.0
COPY_N = 16_000_000
COMPILE_N = 1024  # elements of the (negligible) run inside the timed first launch


# --------------------------------------------------------------------------- backends

def load_kernels(wp, name: str):
    """Executes kernels.py with ``wp`` bound to ``wp`` (adjit or warp)."""
    spec = importlib.util.spec_from_file_location(f"bench_kernels_{name}", HERE / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    module.wp = wp
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Backend:
    def __init__(self, name: str, wp):
        self.name = name
        self.wp = wp
        self.k = load_kernels(wp, name)

    def array(self, data, dtype=None):
        kw = {} if dtype is None else {"dtype": dtype}
        if self.name == "warp":
            kw["device"] = "cpu"
        return self.wp.array(data, **kw)

    def launch(self, kernel, dim, inputs):
        self.wp.launch(kernel, dim=dim, inputs=inputs, device="cpu")

    def sync(self):
        if self.name == "warp":
            self.wp.synchronize_device("cpu")
        else:
            self.wp.synchronize()


def import_backend(name: str, cache_dir: str | None = None):
    """Imports adjit, or warp (then sets its cache dir and calls wp.init())."""
    if name == "adjit":
        if cache_dir:
            os.environ["ADJIT_CACHE_DIR"] = cache_dir
        import adjit
        return adjit
    import warp
    warp.config.log_level = warp.LOG_ERROR  # no banner, no "CUDA driver not found" warning
    if cache_dir:
        warp.config.kernel_cache_dir = cache_dir
    warp.init()
    return warp


def warp_available() -> tuple[bool, str]:
    try:
        import warp  # noqa: F401
        return True, ""
    except Exception as e:  # noqa: BLE001
        return False, f"{type(e).__name__}: {e}"


# --------------------------------------------------------------------------- inputs

def springs_inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    x[:, 1] = np.abs(x[:, 1])
    v = rng.standard_normal((n, 3)).astype(np.float32)
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, a, b, c = q.T
    rot = np.stack([
        np.stack([1 - 2 * (b * b + c * c), 2 * (a * b - c * w), 2 * (a * c + b * w)], -1),
        np.stack([2 * (a * b + c * w), 1 - 2 * (a * a + c * c), 2 * (b * c - a * w)], -1),
        np.stack([2 * (a * c - b * w), 2 * (b * c + a * w), 1 - 2 * (a * a + b * b)], -1),
    ], 1).astype(np.float32)
    return x, v, rot


def springs_reference(x, v, rot, dt, stiffness, n_iter):
    f32 = np.float32
    p, vel = x.copy(), v.copy()
    anchor = np.array([0, 1, 0], np.float32)
    omega = np.array([0.1, 0.2, 0.3], np.float32)
    for _ in range(n_iter):
        d = np.einsum("nij,nj->ni", rot, p) - anchor
        L = np.sqrt((d * d).sum(1))
        safe = np.where(L > 0, L, f32(1))
        f = np.where((L > f32(1e-6))[:, None], d / safe[:, None] * (-f32(stiffness) * (L - f32(1)))[:, None],
                     np.array([0, -1, 0], np.float32))
        f = f - vel * f32(0.1) + np.cross(omega, vel)
        vel = vel + f * f32(dt)
        p = p + vel * f32(dt)
        ground = p[:, 1] < 0
        p[ground, 1] = 0
        vel[ground] *= f32(0.5)
    return p, vel


def compile_args(b: Backend, kernel: str):
    """A tiny problem for the first-launch (compile) measurement."""
    n = COMPILE_N
    if kernel == "saxpy":
        xs = np.linspace(0, 1, n, dtype=np.float32)
        return b.k.saxpy, n, [2.0, b.array(xs), b.array(np.ones(n, np.float32))]
    x, v, rot = springs_inputs(n)
    wp = b.wp
    return b.k.springs, n, [b.array(x, wp.vec3), b.array(v, wp.vec3), b.array(rot, wp.mat33),
                            b.array(np.zeros_like(x), wp.vec3), b.array(np.zeros_like(x), wp.vec3),
                            SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS]


# --------------------------------------------------------------------------- 1, 2: compile

def child_main(backend: str, kernel: str, cache_dir: str) -> None:
    """A fresh process: import, then time the first launch of one kernel."""
    t0 = time.perf_counter()
    wp = import_backend(backend, cache_dir)
    import_s = time.perf_counter() - t0
    b = Backend(backend, wp)
    k, dim, args = compile_args(b, kernel)
    if backend == "warp":
        wp.config.log_level = wp.LOG_INFO  # Warp then says "... (compiled)" or "... (cached)"
    t0 = time.perf_counter()
    b.launch(k, dim, args)
    b.sync()
    first_s = time.perf_counter() - t0
    result = {"import_s": import_s, "first_launch_s": first_s}
    if backend == "adjit":
        result["from_cache"] = k._cpu.from_cache
    print("BENCH_RESULT " + json.dumps(result), flush=True)


def run_child(backend: str, kernel: str, cache_dir: str) -> dict:
    env = dict(os.environ)
    env.pop("ADJIT_DUMP_DIR", None)
    env.pop("ADJIT_CACHE", None)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", backend, kernel, cache_dir],
                          capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{backend}/{kernel} child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    result, warp_says = None, None
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            result = json.loads(line[len("BENCH_RESULT "):])
        elif backend == "warp" and " load on device " in line:
            warp_says = "(cached)" in line
    if result is None:
        raise RuntimeError(f"{backend}/{kernel} child printed no result:\n{proc.stdout}\n{proc.stderr}")
    if backend == "warp":
        result["from_cache"] = warp_says
    return result


def measure_compile(backends: list[str], repeats: int) -> dict:
    """{(backend, kernel): (cold, warm)}, each the per-field median over ``repeats`` cache dirs."""
    out = {}
    for backend in backends:
        for kernel in ("saxpy", "springs"):
            colds, warms = [], []
            for _ in range(repeats):
                cache = tempfile.mkdtemp(prefix=f"bench-{backend}-{kernel}-")
                try:
                    cold = run_child(backend, kernel, cache)
                    warm = run_child(backend, kernel, cache)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                if cold.get("from_cache") is not False or warm.get("from_cache") is not True:
                    raise RuntimeError(f"{backend}/{kernel}: the cold run should compile and the warm one load "
                                       f"from the cache, got from_cache={cold.get('from_cache')} and "
                                       f"{warm.get('from_cache')}")
                colds.append(cold)
                warms.append(warm)
            med = [{f: float(np.median([r[f] for r in runs])) for f in ("import_s", "first_launch_s")}
                   for runs in (colds, warms)]
            out[(backend, kernel)] = tuple(med)
            print(f"  {backend:5s} {kernel:8s} import {med[0]['import_s']:.3f}s  "
                  f"cold {med[0]['first_launch_s']:.3f}s  warm {med[1]['first_launch_s'] * 1e3:.2f}ms  "
                  f"(medians of {repeats}; cold: " +
                  ", ".join(f"{r['first_launch_s']:.3f}" for r in colds) + ")", flush=True)
    return out


# --------------------------------------------------------------------------- 3, 4, 5: run time

def median_time(fn, budget_s: float, min_n: int = 5, max_n: int = 50, warmup: int = 2) -> tuple[float, int]:
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    n = int(min(max_n, max(min_n, budget_s / max(first, 1e-9))))
    times = [first]
    for _ in range(n - 1):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), n


def prepare(b: Backend, data: dict) -> dict:
    wp = b.wp
    return {
        "saxpy": [2.0, b.array(data["sx"]), b.array(data["sy"].copy())],
        "cross": [b.array(data["ca"], wp.vec3), b.array(data["cb"], wp.vec3),
                  b.array(np.zeros_like(data["ca"]), wp.vec3)],
        "springs": [b.array(data["px"], wp.vec3), b.array(data["pv"], wp.vec3), b.array(data["prot"], wp.mat33),
                    b.array(np.zeros_like(data["px"]), wp.vec3), b.array(np.zeros_like(data["px"]), wp.vec3),
                    SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS],
        "trivial": [b.array(np.zeros(1, np.float32))],
    }


def verify(backends: dict[str, Backend], args: dict[str, dict], data: dict) -> None:
    ref_saxpy = np.float32(2.0) * data["sx"] + data["sy"]
    a, bb = data["ca"], data["cb"]
    ref_cross = np.sqrt((np.cross(a, bb) ** 2).sum(1))[:, None] * a
    ref_px, ref_pv = springs_reference(data["px"], data["pv"], data["prot"], SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS)
    results = {}
    for name, b in backends.items():
        A = args[name]
        b.launch(b.k.saxpy, SAXPY_N, A["saxpy"])
        b.launch(b.k.length_cross, CROSS_N, A["cross"])
        b.launch(b.k.springs, SPRINGS_N, A["springs"])
        b.launch(b.k.trivial, 1, A["trivial"])
        b.sync()
        r = {"saxpy": A["saxpy"][2].numpy().copy(), "cross": A["cross"][2].numpy().copy(),
             "px": A["springs"][3].numpy().copy(), "pv": A["springs"][4].numpy().copy()}
        np.testing.assert_allclose(r["saxpy"], ref_saxpy, rtol=1e-6, atol=1e-6, err_msg=f"{name} saxpy")
        np.testing.assert_allclose(r["cross"], ref_cross, rtol=1e-5, atol=1e-5, err_msg=f"{name} length_cross")
        np.testing.assert_allclose(r["px"], ref_px, rtol=1e-4, atol=1e-4, err_msg=f"{name} springs x")
        np.testing.assert_allclose(r["pv"], ref_pv, rtol=1e-4, atol=1e-3, err_msg=f"{name} springs v")
        assert A["trivial"][0].numpy()[0] == 1.0, f"{name} trivial"
        results[name] = r
    if len(results) == 2:
        ra, rw = results["adjit"], results["warp"]
        for key in ra:
            np.testing.assert_allclose(ra[key], rw[key], rtol=1e-4, atol=1e-4, err_msg=f"adjit vs warp {key}")
    # saxpy accumulates into y; restore it so timings start from the same data
    for name in backends:
        args[name]["saxpy"][2].numpy()[:] = data["sy"]
    print(f"  verified against numpy: {', '.join(backends)}" + ("; adjit == warp" if len(results) == 2 else ""))


def copy_bandwidth(quick: bool) -> tuple[float, float]:
    src = np.random.default_rng(1).random(COPY_N, dtype=np.float32)
    dst = np.empty_like(src)
    t, _ = median_time(lambda: np.copyto(dst, src), 0.5 if quick else 1.5, min_n=10)
    assert np.array_equal(dst, src)
    return 2 * src.nbytes / t / 1e9, t


def measure_runtime(backends: dict[str, Backend], quick: bool, with_copy: bool = True) -> dict:
    rng = np.random.default_rng(0)
    px, pv, prot = springs_inputs(SPRINGS_N)
    data = {"sx": rng.random(SAXPY_N, dtype=np.float32), "sy": rng.random(SAXPY_N, dtype=np.float32),
            "ca": rng.standard_normal((CROSS_N, 3)).astype(np.float32),
            "cb": rng.standard_normal((CROSS_N, 3)).astype(np.float32),
            "px": px, "pv": pv, "prot": prot}
    args = {name: prepare(b, data) for name, b in backends.items()}
    t0 = time.perf_counter()
    verify(backends, args, data)  # also the in-process compile of each kernel
    print(f"  compile + verify: {time.perf_counter() - t0:.1f}s")
    out = forward_times(backends, args, 0.5 if quick else 2.0)
    for name, res in out.items():
        print("  " + name + ": " + ", ".join(f"{k} {v[0] * 1e3:.3f} ms (n={v[1]})" for k, v in res.items()),
              flush=True)
    for name, res in launch_overhead(backends, args, rounds=3 if quick else 8).items():
        out[name]["launch"] = res
        print(f"  {name}: launch overhead {res[0] * 1e6:.1f} us (n={res[1]})")
    if with_copy:
        out["copy_gbs"], out["copy_s"] = copy_bandwidth(quick)
    return out


def forward_times(backends: dict[str, Backend], args: dict[str, dict], budget: float, rounds: int = 5) -> dict:
    """{backend: {kernel: (median seconds, launches)}}: after two warm-up launches, ``rounds``
    rounds in which each backend in turn runs a few timed launches (so a noisy stretch of a
    shared machine hits both alike), about ``budget`` seconds per backend and kernel."""
    cases = {"saxpy": ("saxpy", SAXPY_N), "cross": ("length_cross", CROSS_N), "springs": ("springs", SPRINGS_N)}
    out = {name: {} for name in backends}
    for key, (kernel, dim) in cases.items():
        fns, per_round = {}, {}
        for name, b in backends.items():
            def fn(b=b, k=getattr(b.k, kernel), inputs=args[name][key]):
                b.launch(k, dim, inputs)
                b.sync()
            fn()
            fn()
            t0 = time.perf_counter()
            fn()
            per_round[name] = int(min(10, max(1, budget / rounds / (time.perf_counter() - t0))))
            fns[name] = fn
        samples = {name: [] for name in backends}
        for _ in range(rounds):
            for name, fn in fns.items():
                for _ in range(per_round[name]):
                    t0 = time.perf_counter()
                    fn()
                    samples[name].append(time.perf_counter() - t0)
        for name, t in samples.items():
            out[name][key] = (float(np.median(t)), len(t))
    return out


def one_thread_child_main(cache_dir: str, quick: bool) -> None:
    """Forward times and launch overhead of adjit with ADJIT_NUM_THREADS=1 (set by the parent),
    and of Warp again, interleaved with it in this process."""
    backends = {"adjit": Backend("adjit", import_backend("adjit", os.path.join(cache_dir, "adjit")))}
    if warp_available()[0]:
        backends["warp"] = Backend("warp", import_backend("warp", os.path.join(cache_dir, "warp")))
    res = measure_runtime(backends, quick, with_copy=False)
    print("BENCH_RESULT " + json.dumps(res), flush=True)


def measure_one_thread(quick: bool) -> dict:
    cache = tempfile.mkdtemp(prefix="bench-1thread-")
    env = dict(os.environ, ADJIT_NUM_THREADS="1")
    env.pop("ADJIT_DUMP_DIR", None)
    try:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one-thread-child", cache]
                              + (["--quick"] if quick else []), capture_output=True, text=True, env=env,
                              timeout=300)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the one-thread child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line[len("BENCH_RESULT "):])
        print("  " + line, flush=True)
    raise RuntimeError(f"the one-thread child printed no result:\n{proc.stdout}\n{proc.stderr}")


def launch_overhead(backends: dict[str, Backend], args: dict[str, dict], rounds: int,
                    per_round: int = 1000) -> dict:
    """Median time of a dim=1 launch of ``trivial``, the backends interleaved round by round
    (so a noisy stretch of a shared machine hits both alike)."""
    samples = {name: [] for name in backends}
    for _ in range(rounds):
        for name, b in backends.items():
            k, x = b.k.trivial, args[name]["trivial"]
            for _ in range(50):
                b.launch(k, 1, x)
            for _ in range(per_round):
                t0 = time.perf_counter()
                b.launch(k, 1, x)
                b.sync()
                samples[name].append(time.perf_counter() - t0)
    return {name: (float(np.median(t)), len(t)) for name, t in samples.items()}


# --------------------------------------------------------------------------- report

def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def adjit_revision() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return rev or "unknown revision"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor() or model
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{model}, os.cpu_count() = {os.cpu_count()} (usable by this process: {affinity}), "
            f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")


def build_rows(compile_res: dict, run_res: dict, one_thread: dict | None, backends: list[str]) -> list[dict]:
    """Table rows; ``speedup`` > 1 means adjit is better (faster, or more GB/s)."""
    have_warp = "warp" in backends
    rows = []

    def ratio(a, w, higher_is_better):
        if a is None or w is None or not a or not w:
            return None
        return (a / w) if higher_is_better else (w / a)

    def add(label, unit, a, w, a1=None, w1=None, higher_is_better=False):
        rows.append({"label": label, "unit": unit, "adjit": a, "warp": w, "speedup": ratio(a, w, higher_is_better),
                     "adjit1": a1, "speedup1": ratio(a1, w1, higher_is_better)})

    def c(backend, kernel, which, field, scale=1.0):
        if (backend, kernel) not in compile_res:
            return None
        return compile_res[(backend, kernel)][which][field] * scale

    def r(backend, key, scale):
        # "adjit1", "warp1": the ADJIT_NUM_THREADS=1 process
        src = (one_thread or {}).get(backend[:-1]) if backend.endswith("1") else run_res.get(backend)
        return None if src is None else src[key][0] * scale

    add("import (Warp: import + wp.init())", "s", c("adjit", "saxpy", 0, "import_s"),
        c("warp", "saxpy", 0, "import_s"))
    for kernel in ("saxpy", "springs"):
        add(f"cold compile: first launch of {kernel}, empty cache", "s",
            c("adjit", kernel, 0, "first_launch_s"), c("warp", kernel, 0, "first_launch_s"))
    for kernel in ("saxpy", "springs"):
        add(f"warm load: first launch of {kernel}, cache populated", "ms",
            c("adjit", kernel, 1, "first_launch_s", 1e3), c("warp", kernel, 1, "first_launch_s", 1e3))
    labels = {"saxpy": f"forward: saxpy, {SAXPY_N / 1e6:g}M float32",
              "cross": f"forward: length(cross(a,b))*a, {CROSS_N / 1e6:g}M vec3",
              "springs": f"forward: springs, {SPRINGS_N / 1e6:g}M particles x {SPRINGS_ITERS} iters"}
    for key, label in labels.items():
        add(label, "ms", r("adjit", key, 1e3), r("warp", key, 1e3), r("adjit1", key, 1e3), r("warp1", key, 1e3))
    add("launch overhead: trivial kernel, dim=1", "us", r("adjit", "launch", 1e6), r("warp", "launch", 1e6),
        r("adjit1", "launch", 1e6), r("warp1", "launch", 1e6))

    def gbs(backend):
        t = r(backend, "saxpy", 1.0)
        return None if t is None else 12 * SAXPY_N / t / 1e9

    def pct(v):
        return None if v is None else 100 * v / run_res["copy_gbs"]
    add("saxpy bandwidth (12 B/element)", "GB/s", gbs("adjit"), gbs("warp"), gbs("adjit1"), gbs("warp1"),
        higher_is_better=True)
    add(f"saxpy bandwidth, % of np.copyto ({run_res['copy_gbs']:.1f} GB/s)", "%", pct(gbs("adjit")),
        pct(gbs("warp")), pct(gbs("adjit1")), pct(gbs("warp1")), higher_is_better=True)
    return rows


def fmt(v) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def table(rows) -> str:
    lines = ["| measurement | unit | adjit | Warp | adjit speedup (x) | adjit, 1 thread | 1-thread speedup (x) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append("| {label} | {unit} | ".format(**row) + " | ".join(
            fmt(row[k]) for k in ("adjit", "warp", "speedup", "adjit1", "speedup1")) + " |")
    return "\n".join(lines)


def plot(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    items = [row for row in rows if row["speedup"] is not None and row["unit"] != "%"]
    if not items:
        return
    labels = [row["label"].replace(", cache populated", " (cached)").replace(", empty cache", "")
              .replace("first launch of ", "") for row in items]
    y = np.arange(len(items))
    h = 0.4
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(items) + 1.6))
    main = [row["speedup"] for row in items]
    ax.barh(y - h / 2, main, height=h, color=["tab:green" if v >= 1 else "tab:red" for v in main],
            label="adjit (all cores)")
    one = [(i, row["speedup1"]) for i, row in enumerate(items) if row["speedup1"] is not None]
    if one:
        ax.barh([i + h / 2 for i, _ in one], [v for _, v in one], height=h, color="tab:gray",
                label="adjit, ADJIT_NUM_THREADS=1")
        for i, v in one:
            ax.text(v, i + h / 2, f" {v:.2g}x", va="center", fontsize=7)
    for i, v in enumerate(main):
        ax.text(v, i - h / 2, f" {v:.2g}x", va="center", fontsize=7)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("adjit speedup over Warp (Warp time / adjit time; > 1: adjit faster), log scale")
    ax.set_title(f"adjit vs Warp on the CPU ({os.cpu_count()} cores)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_markdown(rows, command: str, notes: list[str], path: Path, warp_version: str | None,
                   repeats: int) -> None:
    import adjit
    md = ["# Benchmarks: adjit vs Warp (CPU)", "",
          f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M')}.", "",
          f"- machine: {machine()}",
          f"- adjit {getattr(adjit, '__version__', '0.1.0')} (git {adjit_revision()}); Warp {warp_version or 'not installed'} "
          "(device=\"cpu\")",
          "- kernels: `benchmarks/kernels.py` (one source text compiled by both)", "",
          table(rows), "",
          "The speedup columns are Warp time / adjit time (for GB/s rows adjit / Warp), so > 1 means "
          "adjit is faster. \"adjit, 1 thread\" repeats the forward and launch measurements in a fresh "
          "process with `ADJIT_NUM_THREADS=1`, like for like with Warp's single-threaded CPU launches; "
          "its speedup is against Warp timed again in that process (not shown; it varies with the "
          "machine's load like the Warp column). Forward launches of the two backends are timed in "
          "interleaved rounds, so a noisy stretch of a shared machine hits both alike. Forward times are medians of N launches after two warm-up launches; "
          "cold and warm compile times are first launches (compile + a 1024-element run) in "
          f"fresh processes, medians of {repeats} repetition(s), each with its own empty temporary cache "
          "(`ADJIT_CACHE_DIR`, `wp.config.kernel_cache_dir` set before `wp.init()`).", "",
          "![adjit speedup over Warp](benchmarks.png)", ""]
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path.write_text("\n".join(md))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=3, metavar=("BACKEND", "KERNEL", "CACHE_DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--one-thread-child", metavar="CACHE_DIR", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="shorter timing budgets")
    ap.add_argument("--no-write", action="store_true", help="do not write docs/benchmarks.{md,png}")
    opts = ap.parse_args()
    if opts.child:
        child_main(*opts.child)
        return
    if opts.one_thread_child:
        one_thread_child_main(opts.one_thread_child, opts.quick)
        return
    t_start = time.perf_counter()
    load_start = loadavg()
    command = "python benchmarks/bench.py" + (" --quick" if opts.quick else "")
    ok, why = warp_available()
    backends = ["adjit"] + (["warp"] if ok else [])
    notes = []
    if not ok:
        notes.append(f"Warp columns skipped: `import warp` failed ({why}); `pip install \".[bench]\"`.")
    print(f"machine: {machine()}")
    print("1-2. cold compile / warm load (fresh processes)")
    repeats = 1 if opts.quick else 3
    compile_res = measure_compile(backends, repeats)
    print("3-5. forward, launch overhead, bandwidth (this process)")
    adjit_cache = tempfile.mkdtemp(prefix="bench-adjit-main-")
    warp_cache = tempfile.mkdtemp(prefix="bench-warp-main-") if ok else None
    warp_version = None
    try:
        wps = {"adjit": import_backend("adjit", adjit_cache)}
        if ok:
            wps["warp"] = import_backend("warp", warp_cache)
            warp_version = wps["warp"].config.version
        backends_obj = {n: Backend(n, w) for n, w in wps.items()}
        run_res = measure_runtime(backends_obj, opts.quick)
    finally:
        for d in (adjit_cache, warp_cache):
            if d:
                shutil.rmtree(d, ignore_errors=True)
    print("3-4 again with adjit on one thread (fresh process, ADJIT_NUM_THREADS=1, Warp alongside)")
    one_thread = measure_one_thread(opts.quick)
    rows = build_rows(compile_res, run_res, one_thread, backends)
    if ok:
        notes.append("Warp runs CPU kernels on one thread (its generated CPU entry is a serial loop over "
                     "the grid, C++ built by its bundled clang at -O2); adjit splits a launch across all "
                     f"cores of its thread pool (os.cpu_count() = {os.cpu_count()} here), hence the "
                     "`ADJIT_NUM_THREADS=1` columns. On a shared 2-vCPU sandbox the second core is not "
                     "always available: compare the two adjit columns before reading much into threading.")
    notes.append("The copy reference is `np.copyto` of "
                 f"{COPY_N // 1_000_000}M float32 ({run_res['copy_s'] * 1e3:.1f} ms), counting only bytes read "
                 "+ written (8 B/element). It runs on one thread, and its destination lines are also read "
                 "by the CPU before being written (write-allocate), traffic the count leaves out; saxpy reads "
                 "y anyway, so its 12 B/element are all the traffic. Hence saxpy can exceed 100 % of "
                 "the copy, even on one thread.")
    notes.append(f"Load average (1, 5, 15 min) at the start {load_start}, at the end {loadavg()}: other "
                 "processes sharing the machine show up in these timings.")
    print()
    print(table(rows))
    for note in notes:
        print(f"note: {note}")
    print(f"\ntotal {time.perf_counter() - t_start:.1f}s")
    if not opts.no_write:
        DOCS.mkdir(exist_ok=True)
        write_markdown(rows, command, notes, DOCS / "benchmarks.md", warp_version, repeats)
        plot(rows, DOCS / "benchmarks.png")
        print(f"wrote {DOCS / 'benchmarks.md'} and {DOCS / 'benchmarks.png'}")


if __name__ == "__main__":
    main()
