"""adjit against NVIDIA Warp, side by side, on the CPU.

    python benchmarks/bench.py [--quick]

Measures, for both (Warp columns are skipped if ``warp`` is not importable):

1. cold compile: in a fresh process with an empty compile cache, the time of
   the first launch (the compile and one tiny run), import time apart;
2. warm load: the same in a second fresh process with the cache populated;
3. forward time (median of N launches after warm-up) of saxpy on 10M float32,
   ``length(cross(a, b)) * a`` on 1M vec3 and ``springs`` (vec3/mat33 math,
   a runtime-bounded loop, if/else; see kernels.py);
4. launch overhead: median time of a dim=1 launch of a trivial kernel (one array) and of
   one with three arrays and a float;
5. saxpy bandwidth against ``np.copyto`` of a large float32 array;
6. backward time (median of N ``tape.backward()`` calls after warm-up, the forward recorded once
   on a tape, the output gradients re-seeded untimed before each call) of saxpy (in place; left
   out with adjit's error in the notes if adjit cannot differentiate it), ``saxpy_out``
   (z = a*x + y), ``length_cross`` and ``springs``, and its ratio to the forward time of the same
   kernel timed alongside; the fresh processes of 1-2 (on ``saxpy_out`` and ``springs``) also time
   the first backward (adjit compiles the adjoint there, Warp with the forward);

and 3-6 again in a fresh process with ``ADJIT_NUM_THREADS=1`` (Warp's CPU
launches are single-threaded). Results and gradients are checked against each other, numpy and
central differences before timing. Writes
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
COMPILE_KERNELS = ("saxpy_out", "springs")
FD_N = 4096  # springs particles checked against float64 central differences
PEERS_SECTION = "## Against the peers (CPU)"  # written by peers.py into docs/benchmarks.md


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

    def array(self, data, dtype=None, requires_grad=False):
        kw = {} if dtype is None else {"dtype": dtype}
        if self.name == "warp":
            kw["device"] = "cpu"
        if requires_grad:
            kw["requires_grad"] = True
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
    """A tiny problem for the first-launch (compile) measurement: kernel, dim, arguments (arrays
    with gradients) and the positions of the outputs, whose gradients seed the first backward."""
    n = COMPILE_N
    if kernel == "saxpy_out":
        xs = np.linspace(0, 1, n, dtype=np.float32)
        return b.k.saxpy_out, n, [2.0, b.array(xs, requires_grad=True),
                                  b.array(np.ones(n, np.float32), requires_grad=True),
                                  b.array(np.zeros(n, np.float32), requires_grad=True)], [3]
    x, v, rot = springs_inputs(n)
    wp = b.wp
    g = lambda data, dtype: b.array(data, dtype, requires_grad=True)  # noqa: E731
    return b.k.springs, n, [g(x, wp.vec3), g(v, wp.vec3), g(rot, wp.mat33), g(np.zeros_like(x), wp.vec3),
                            g(np.zeros_like(x), wp.vec3), SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS], [3, 4]


# --------------------------------------------------------------------------- 1, 2: compile

def child_main(backend: str, kernel: str, cache_dir: str) -> None:
    """A fresh process: import, then time the first launch of one kernel (recorded on a tape),
    then its first backward (adjit compiles the adjoint there, Warp did with the forward)."""
    t0 = time.perf_counter()
    wp = import_backend(backend, cache_dir)
    import_s = time.perf_counter() - t0
    b = Backend(backend, wp)
    k, dim, args, outputs = compile_args(b, kernel)
    if backend == "warp":
        wp.config.log_level = wp.LOG_INFO  # Warp then says "... (compiled)" or "... (cached)"
    t0 = time.perf_counter()
    with wp.Tape() as tape:
        b.launch(k, dim, args)
    b.sync()
    first_s = time.perf_counter() - t0
    print("BENCH_FORWARD_DONE", flush=True)
    for i in outputs:  # the seed, not timed
        args[i].grad.numpy()[...] = 1.0
    t0 = time.perf_counter()
    tape.backward()
    b.sync()
    backward_s = time.perf_counter() - t0
    if not np.any(args[1].grad.numpy()):
        raise RuntimeError(f"{backend}/{kernel}: the first backward left a zero gradient")
    result = {"import_s": import_s, "first_launch_s": first_s, "first_backward_s": backward_s}
    if backend == "adjit":
        from adjit.loader import cpu_variant
        result["from_cache"] = cpu_variant(k).from_cache
        result["adjoint_from_cache"] = cpu_variant(k, adjoint=True).from_cache
    print("BENCH_RESULT " + json.dumps(result), flush=True)


def run_child(backend: str, kernel: str, cache_dir: str) -> dict:
    env = dict(os.environ)
    env.pop("ADJIT_DUMP_DIR", None)
    env.pop("ADJIT_CACHE", None)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", backend, kernel, cache_dir],
                          capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{backend}/{kernel} child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    result, warp_says, warp_loads_in_backward = None, None, 0
    forward_done = False
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            result = json.loads(line[len("BENCH_RESULT "):])
        elif line.startswith("BENCH_FORWARD_DONE"):
            forward_done = True
        elif backend == "warp" and " load on device " in line:
            if forward_done:
                warp_loads_in_backward += 1
            else:
                warp_says = "(cached)" in line
    if result is None:
        raise RuntimeError(f"{backend}/{kernel} child printed no result:\n{proc.stdout}\n{proc.stderr}")
    if backend == "warp":
        result["from_cache"] = warp_says
        # Warp builds the adjoint with the forward: its first backward loads nothing
        result["adjoint_from_cache"] = None if warp_loads_in_backward else warp_says
    return result


def measure_compile(backends: list[str], repeats: int) -> dict:
    """{(backend, kernel): (cold, warm)}, each the per-field median over ``repeats`` cache dirs."""
    out = {}
    for backend in backends:
        for kernel in COMPILE_KERNELS:
            colds, warms = [], []
            for _ in range(repeats):
                cache = tempfile.mkdtemp(prefix=f"bench-{backend}-{kernel}-")
                try:
                    cold = run_child(backend, kernel, cache)
                    warm = run_child(backend, kernel, cache)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                for field in ("from_cache", "adjoint_from_cache"):
                    if cold.get(field) is not False or warm.get(field) is not True:
                        raise RuntimeError(f"{backend}/{kernel}: the cold run should compile and the warm one "
                                           f"load from the cache, got {field}={cold.get(field)} and "
                                           f"{warm.get(field)}")
                for r in (cold, warm):
                    r["launch_and_backward_s"] = r["first_launch_s"] + r["first_backward_s"]
                colds.append(cold)
                warms.append(warm)
            fields = ("import_s", "first_launch_s", "first_backward_s", "launch_and_backward_s")
            med = [{f: float(np.median([r[f] for r in runs])) for f in fields} for runs in (colds, warms)]
            out[(backend, kernel)] = tuple(med)
            print(f"  {backend:5s} {kernel:9s} import {med[0]['import_s']:.3f}s  "
                  f"cold {med[0]['first_launch_s']:.3f}s + backward {med[0]['first_backward_s']:.3f}s  "
                  f"warm {med[1]['first_launch_s'] * 1e3:.2f}ms + backward {med[1]['first_backward_s'] * 1e3:.2f}ms"
                  f"  (medians of {repeats}; cold launch + backward: " +
                  ", ".join(f"{r['launch_and_backward_s']:.3f}" for r in colds) + ")", flush=True)
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
        "saxpy_out": [2.0, b.array(data["sx"]), b.array(data["sy"]), b.array(np.zeros_like(data["sy"]))],
        "cross": [b.array(data["ca"], wp.vec3), b.array(data["cb"], wp.vec3),
                  b.array(np.zeros_like(data["ca"]), wp.vec3)],
        "springs": [b.array(data["px"], wp.vec3), b.array(data["pv"], wp.vec3), b.array(data["prot"], wp.mat33),
                    b.array(np.zeros_like(data["px"]), wp.vec3), b.array(np.zeros_like(data["px"]), wp.vec3),
                    SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS],
        "trivial": [b.array(np.zeros(1, np.float32))],
        "few_args": [b.array(np.ones(1, np.float32)), b.array(np.ones(1, np.float32)),
                     b.array(np.zeros(1, np.float32)), 2.0],
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
        b.launch(b.k.saxpy_out, SAXPY_N, A["saxpy_out"])
        b.launch(b.k.length_cross, CROSS_N, A["cross"])
        b.launch(b.k.springs, SPRINGS_N, A["springs"])
        b.launch(b.k.trivial, 1, A["trivial"])
        b.launch(b.k.few_args, 1, A["few_args"])
        b.sync()
        r = {"saxpy": A["saxpy"][2].numpy().copy(), "saxpy_out": A["saxpy_out"][3].numpy().copy(), "cross": A["cross"][2].numpy().copy(),
             "px": A["springs"][3].numpy().copy(), "pv": A["springs"][4].numpy().copy()}
        np.testing.assert_allclose(r["saxpy"], ref_saxpy, rtol=1e-6, atol=1e-6, err_msg=f"{name} saxpy")
        np.testing.assert_allclose(r["saxpy_out"], ref_saxpy, rtol=1e-6, atol=1e-6, err_msg=f"{name} saxpy_out")
        np.testing.assert_allclose(r["cross"], ref_cross, rtol=1e-5, atol=1e-5, err_msg=f"{name} length_cross")
        np.testing.assert_allclose(r["px"], ref_px, rtol=1e-4, atol=1e-4, err_msg=f"{name} springs x")
        np.testing.assert_allclose(r["pv"], ref_pv, rtol=1e-4, atol=1e-3, err_msg=f"{name} springs v")
        assert A["trivial"][0].numpy()[0] == 1.0, f"{name} trivial"
        assert A["few_args"][2].numpy()[0] == 3.0, f"{name} few_args"
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


def make_data() -> dict:
    """The inputs and output seeds of every runtime benchmark (fixed seeds)."""
    rng = np.random.default_rng(0)
    px, pv, prot = springs_inputs(SPRINGS_N)
    return {"sx": rng.random(SAXPY_N, dtype=np.float32), "sy": rng.random(SAXPY_N, dtype=np.float32),
            "ca": rng.standard_normal((CROSS_N, 3)).astype(np.float32),
            "cb": rng.standard_normal((CROSS_N, 3)).astype(np.float32),
            "px": px, "pv": pv, "prot": prot,
            "s_seed": rng.random(SAXPY_N, dtype=np.float32),
            "c_seed": rng.standard_normal((CROSS_N, 3)).astype(np.float32),
            "px_seed": rng.standard_normal((SPRINGS_N, 3)).astype(np.float32),
            "pv_seed": rng.standard_normal((SPRINGS_N, 3)).astype(np.float32)}


def measure_runtime(backends: dict[str, Backend], quick: bool, with_copy: bool = True) -> dict:
    data = make_data()
    args = {name: prepare(b, data) for name, b in backends.items()}
    t0 = time.perf_counter()
    verify(backends, args, data)  # also the in-process compile of each kernel
    print(f"  compile + verify: {time.perf_counter() - t0:.1f}s")
    out = forward_times(backends, args, 0.5 if quick else 2.0)
    for name, res in out.items():
        print("  " + name + ": " + ", ".join(f"{k} {v[0] * 1e3:.3f} ms (n={v[1]})" for k, v in res.items()),
              flush=True)
    t0 = time.perf_counter()
    cases, notes = {}, []
    for name, b in backends.items():  # the forwards, recorded on tapes
        cases[name], error = grad_cases(b, data)
        if error:
            notes.append("adjit cannot differentiate the in-place saxpy `y[i] = a * x[i] + y[i]` (its backward "
                         f"row is left empty; `saxpy_out` is the out-of-place one): `tape.backward` raises {error}")
            print("  adjit, in-place saxpy: " + error)
    notes += verify_gradients(backends, cases, data)  # also the in-process compile of the adjoints
    print(f"  record + adjoint compile + verify gradients: {time.perf_counter() - t0:.1f}s")
    for name, res in backward_times(backends, cases, args, 0.5 if quick else 2.0).items():
        out[name].update(res)
        print("  " + name + ": backward " + ", ".join(
            f"{k[4:]} {v[0] * 1e3:.3f} ms (n={v[1]}, {v[0] / res['fwd_' + k[4:]][0]:.2f}x the forward "
            f"timed alongside, {res['fwd_' + k[4:]][0] * 1e3:.3f} ms)" for k, v in res.items() if k.startswith("bwd_")),
            flush=True)
    del cases
    out["grad_notes"] = notes
    for kernel, key in (("trivial", "launch"), ("few_args", "launch_few_args")):
        for name, res in launch_overhead(backends, args, rounds=3 if quick else 8, kernel=kernel).items():
            out[name][key] = res
            print(f"  {name}: launch overhead, {kernel} {res[0] * 1e6:.1f} us (n={res[1]})")
    if with_copy:
        out["copy_gbs"], out["copy_s"] = copy_bandwidth(quick)
    return out


def forward_times(backends: dict[str, Backend], args: dict[str, dict], budget: float, rounds: int = 5) -> dict:
    """{backend: {kernel: (median seconds, launches)}}: after two warm-up launches, ``rounds``
    rounds in which each backend in turn runs a few timed launches (so a noisy stretch of a
    shared machine hits both alike), about ``budget`` seconds per backend and kernel."""
    cases = {"saxpy": ("saxpy", SAXPY_N), "saxpy_out": ("saxpy_out", SAXPY_N), "cross": ("length_cross", CROSS_N),
             "springs": ("springs", SPRINGS_N)}
    out = {name: {} for name in backends}
    for key, (kernel, dim) in cases.items():
        fns = {}
        for name, b in backends.items():
            def fn(b=b, k=getattr(b.k, kernel), inputs=args[name][key]):
                b.launch(k, dim, inputs)
                b.sync()
            fns[name] = fn
        for name, res in interleaved(fns, budget, rounds).items():
            out[name][key] = res
    return out


def interleaved(fns: dict, budget: float, rounds: int = 5, setups: dict | None = None,
                warmup: int = 2) -> dict:
    """{name: (median seconds, samples)} of ``fns[name]()``: after ``warmup`` calls, ``rounds`` rounds
    in which each function in turn runs a few timed calls, about ``budget`` seconds per function.
    ``setups[name]()``, if given, runs untimed before every call."""
    setups = setups or {}
    per_round = {}
    for name, fn in fns.items():
        setup = setups.get(name, lambda: None)
        for _ in range(warmup):
            setup()
            fn()
        setup()
        t0 = time.perf_counter()
        fn()
        per_round[name] = int(min(10, max(1, budget / rounds / (time.perf_counter() - t0))))
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            setup = setups.get(name, lambda: None)
            for _ in range(per_round[name]):
                setup()
                t0 = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t0)
    return {name: (float(np.median(t)), len(t)) for name, t in samples.items()}


# --------------------------------------------------------------------------- 6: backward

class GradCase:
    """One kernel launched on arrays with gradients and recorded once on a tape, whose backward is
    then run again and again: ``reseed()`` (zero every gradient, then copy the seeds into the
    outputs' gradients; adjit's backward consumes the outputs' gradients, Warp's accumulates into
    the inputs') and ``backward()`` (``tape.backward()`` with no arguments, the seeds already in
    place, so the seed copy stays out of the timing)."""

    def __init__(self, b: Backend, kernel: str, dim: int, args: list, seeds: dict):
        """``seeds``: {output position: (numpy seed, dtype or None)}."""
        self.b, self.kernel, self.dim, self.args, self.seeds = b, getattr(b.k, kernel), dim, args, seeds
        self.arrays = [a for a in args if getattr(a, "grad", None) is not None]
        with b.wp.Tape() as self.tape:
            b.launch(self.kernel, dim, args)
        b.sync()

    def zero(self) -> None:
        for a in self.arrays:
            a.grad.zero_()

    def reseed(self) -> None:
        self.zero()
        for i, (seed, _) in self.seeds.items():
            self.args[i].grad.numpy()[...] = seed

    def backward(self) -> None:
        self.tape.backward()
        self.b.sync()

    def backward_with_grads(self) -> None:
        """The documented API, for the check: ``tape.backward(grads={output: seed})``."""
        self.zero()
        self.tape.backward(grads={self.args[i]: self.b.array(seed, dtype) for i, (seed, dtype) in self.seeds.items()})
        self.b.sync()

    def grad(self, i: int) -> np.ndarray:
        return self.args[i].grad.numpy().copy()


WARP_SPRINGS_WRONG = "Warp's springs gradient is wrong"
BACKWARD_CASES = {"saxpy": ("saxpy", SAXPY_N), "saxpy_out": ("saxpy_out", SAXPY_N), "cross": ("length_cross", CROSS_N),
                  "springs": ("springs", SPRINGS_N)}


def grad_cases(b: Backend, data: dict) -> tuple[dict, str | None]:
    """The backward cases of one backend, and adjit's error for the in-place saxpy if it cannot
    differentiate it (that case is then left out)."""
    wp = b.wp
    g = lambda x, dtype=None: b.array(x, dtype, requires_grad=True)  # noqa: E731
    cases, error = {}, None
    try:
        cases["saxpy"] = GradCase(b, "saxpy", SAXPY_N, [2.0, g(data["sx"]), g(data["sy"])],
                                  {2: (data["s_seed"], None)})
        cases["saxpy"].backward_with_grads()  # adjit compiles the adjoint (or refuses) here
    except Exception as e:  # noqa: BLE001
        if b.name != "adjit":
            raise
        cases.pop("saxpy", None)
        error = f"{type(e).__name__}: " + " / ".join(line.strip() for line in str(e).splitlines() if line.strip())
    cases["saxpy_out"] = GradCase(b, "saxpy_out", SAXPY_N, [2.0, g(data["sx"]), g(data["sy"]),
                                                            g(np.zeros_like(data["sy"]))], {3: (data["s_seed"], None)})
    cases["cross"] = GradCase(b, "length_cross", CROSS_N,
                              [g(data["ca"], wp.vec3), g(data["cb"], wp.vec3), g(np.zeros_like(data["ca"]), wp.vec3)],
                              {2: (data["c_seed"], wp.vec3)})
    cases["springs"] = GradCase(b, "springs", SPRINGS_N,
                                [g(data["px"], wp.vec3), g(data["pv"], wp.vec3), g(data["prot"], wp.mat33),
                                 g(np.zeros_like(data["px"]), wp.vec3), g(np.zeros_like(data["px"]), wp.vec3),
                                 SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS],
                                {3: (data["px_seed"], wp.vec3), 4: (data["pv_seed"], wp.vec3)})
    return cases, error


def length_cross_grads(a, b, seed):
    """d/da and d/db of sum(seed * length(cross(a, b)) * a), in float64."""
    a, b, s = (np.asarray(t, np.float64) for t in (a, b, seed))
    c = np.cross(a, b)
    L = np.sqrt((c * c).sum(1, keepdims=True))
    adj_c = (s * a).sum(1, keepdims=True) * c / L
    return L * s + np.cross(b, adj_c), np.cross(adj_c, a)


def springs_fd(data: dict, n: int, seed: int = 7):
    """Random per-particle directions for x, v, rot of the first ``n`` particles, and the central
    difference (float64, h = 1e-6) of each particle's sum(seed_x * x_out + seed_v * v_out) along them."""
    rng = np.random.default_rng(seed)
    dirs = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 3, 3))
    base = [data[k][:n].astype(np.float64) for k in ("px", "pv", "prot")]
    sx, sv = data["px_seed"][:n], data["pv_seed"][:n]

    def loss(h):
        p, v = springs_reference(*(x + h * d for x, d in zip(base, dirs)), SPRINGS_DT, SPRINGS_K, SPRINGS_ITERS)
        return (sx * p + sv * v).sum(1)
    h = 1e-6
    return dirs, (loss(h) - loss(-h)) / (2 * h)


def springs_fd_error(grads, dirs, fd) -> np.ndarray:
    """Per particle: |directional derivative from the gradients - central difference| / (|fd| + 1e-2)."""
    n = len(fd)
    an = sum((g[:n] * d).reshape(n, -1).sum(1) for g, d in zip(grads, dirs))
    return np.abs(an - fd) / (np.abs(fd) + 1e-2)


def verify_gradients(backends: dict[str, Backend], cases: dict, data: dict) -> list[str]:
    """Runs each case's backward once through ``tape.backward(grads=...)`` and checks the gradients:
    saxpy against numpy, length_cross against float64 numpy, springs against float64 central
    differences on FD_N particles, and adjit against Warp. Returns notes for the report."""
    notes = []
    ref_ca, ref_cb = length_cross_grads(data["ca"], data["cb"], data["c_seed"])
    dirs, fd = springs_fd(data, FD_N)
    got, inplace = {}, {}
    for name, b in backends.items():
        c = cases[name]
        for case in c.values():
            case.backward_with_grads()
        if "saxpy" in c:  # in-place: y.grad means different things in the two systems; x.grad does not
            r_inplace = c["saxpy"].grad(1)
            np.testing.assert_allclose(r_inplace, np.float32(2.0) * data["s_seed"], rtol=1e-6, atol=0,
                                       err_msg=f"{name} saxpy (in-place) x.grad")
            inplace[name] = (r_inplace, c["saxpy"].grad(2))
        r = {"sx": c["saxpy_out"].grad(1), "sy": c["saxpy_out"].grad(2), "ca": c["cross"].grad(0),
             "cb": c["cross"].grad(1), "px": c["springs"].grad(0), "pv": c["springs"].grad(1),
             "prot": c["springs"].grad(2)}
        got[name] = r
        np.testing.assert_allclose(r["sx"], np.float32(2.0) * data["s_seed"], rtol=1e-6, atol=0,
                                   err_msg=f"{name} saxpy_out x.grad")
        np.testing.assert_array_equal(r["sy"], data["s_seed"], err_msg=f"{name} saxpy_out y.grad")
        np.testing.assert_allclose(r["ca"], ref_ca, rtol=1e-3, atol=1e-3, err_msg=f"{name} length_cross a.grad")
        np.testing.assert_allclose(r["cb"], ref_cb, rtol=1e-3, atol=1e-3, err_msg=f"{name} length_cross b.grad")
        err = springs_fd_error([r["px"], r["pv"], r["prot"]], dirs, fd)
        bad = float((err > 1e-3).mean())
        r["fd_err"] = (float(np.median(err)), float(err.max()), bad)
        print(f"  {name} springs gradient vs float64 central differences ({FD_N} particles): median rel. "
              f"error {np.median(err):.2g}, max {err.max():.2g}, {100 * bad:.1f} % of particles above 1e-3")
        if name == "adjit" and bad > 0:
            raise AssertionError(f"adjit springs gradient disagrees with central differences: {r['fd_err']}")
    if len(got) == 2:
        ga, gw = got["adjit"], got["warp"]
        np.testing.assert_array_equal(ga["sx"], gw["sx"], err_msg="adjit vs warp saxpy_out x.grad")
        if len(inplace) == 2:
            np.testing.assert_array_equal(inplace["adjit"][0], inplace["warp"][0],
                                          err_msg="adjit vs warp saxpy x.grad")
            ya, yw = inplace["adjit"][1], inplace["warp"][1]
            if np.array_equal(ya, yw):
                y_says = "y.grad (the gradient with respect to y's values before the launch) = seed in both too"
            else:
                big = data["s_seed"] > 0.01
                y_says = (f"y.grad differs: adjit's is a median {np.median(ya[big] / data['s_seed'][big]):g} x the "
                          f"seed, Warp's {np.median(yw[big] / data['s_seed'][big]):g} x")
            notes.append("The in-place saxpy `y[i] = a * x[i] + y[i]` differentiates in both: x.grad = a * seed in "
                         f"both (checked, equal); {y_says}. `saxpy_out` (z = a*x + y) is its out-of-place "
                         "form, timed as well.")
        for key in ("ca", "cb"):
            np.testing.assert_allclose(ga[key], gw[key], rtol=1e-4, atol=1e-4, err_msg=f"adjit vs warp {key}")
        m, mx, bad = gw["fd_err"]
        if bad > 0:
            differ = float(np.mean(np.any(np.abs(ga["px"] - gw["px"]) > 1e-3 * (1 + np.abs(ga["px"])), axis=1)))
            notes.append(
                f"{WARP_SPRINGS_WRONG}: against float64 central differences on {FD_N} particles "
                f"its directional derivatives are off by a median {m:.2g} and up to {mx:.2g} (relative), "
                f"{100 * bad:.0f} % of the particles above 1e-3, where adjit's are within "
                f"{got['adjit']['fd_err'][1]:.1g}; x.grad of the two differ on {100 * differ:.0f} % of the 1M "
                "particles. Warp's adjoint of a dynamic (runtime-bounded) loop replays the body on the "
                "loop-carried variables' final values instead of each iteration's, and only says so at "
                "debug log level (\"detected mutated variable ... during a dynamic for-loop ... this may "
                "not be a differentiable operation\"). Its springs backward time is that of a cheaper, "
                "incorrect computation.")
    print("  gradients verified: saxpy (x.grad) and saxpy_out against numpy, length_cross against float64 numpy, springs against "
          "central differences" + ("; adjit == warp for saxpy_out and length_cross" if len(got) == 2 else ""))
    return notes


def backward_times(backends: dict[str, Backend], cases: dict, args: dict, budget: float) -> dict:
    """{backend: {"bwd_" + case: (median seconds, calls), "fwd_" + case: ...}}: the backward, and the
    forward launch of the same kernel (on arrays without gradients, no tape) timed in the same
    interleaved rounds, so that their ratio is not skewed by the load of a shared machine changing
    between the forward and the backward measurements."""
    out = {name: {} for name in backends}
    for key, (kernel, dim) in BACKWARD_CASES.items():
        fns, setups = {}, {}
        for name, b in backends.items():
            if key not in cases[name]:
                continue

            def fwd(b=b, k=getattr(b.k, kernel), inputs=args[name][key]):
                b.launch(k, dim, inputs)
                b.sync()
            fns[(name, "fwd_")] = fwd
            fns[(name, "bwd_")] = cases[name][key].backward
            setups[(name, "bwd_")] = cases[name][key].reseed
        for (name, which), res in interleaved(fns, budget, setups=setups, warmup=1).items():
            out[name][which + key] = res
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


def launch_overhead(backends: dict[str, Backend], args: dict[str, dict], rounds: int, kernel: str = "trivial",
                    per_round: int = 1000) -> dict:
    """Median time of a dim=1 launch of ``kernel``, the backends interleaved round by round
    (so a noisy stretch of a shared machine hits both alike)."""
    samples = {name: [] for name in backends}
    for _ in range(rounds):
        for name, b in backends.items():
            k, x = getattr(b.k, kernel), args[name][kernel]
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

    def add(label, unit, a, w, a1=None, w1=None, higher_is_better=False, speedup=True):
        rows.append({"label": label, "unit": unit, "adjit": a, "warp": w,
                     "speedup": ratio(a, w, higher_is_better) if speedup else None,
                     "adjit1": a1, "speedup1": ratio(a1, w1, higher_is_better) if speedup else None})

    def c(backend, kernel, which, field, scale=1.0):
        if (backend, kernel) not in compile_res:
            return None
        return compile_res[(backend, kernel)][which][field] * scale

    def r(backend, key, scale):
        # "adjit1", "warp1": the ADJIT_NUM_THREADS=1 process
        src = (one_thread or {}).get(backend[:-1]) if backend.endswith("1") else run_res.get(backend)
        return None if src is None or key not in src else src[key][0] * scale

    add("import (Warp: import + wp.init())", "s", c("adjit", COMPILE_KERNELS[0], 0, "import_s"),
        c("warp", COMPILE_KERNELS[0], 0, "import_s"))
    for kernel in COMPILE_KERNELS:
        add(f"cold compile: first launch of {kernel}, empty cache", "s",
            c("adjit", kernel, 0, "first_launch_s"), c("warp", kernel, 0, "first_launch_s"))
    for kernel in COMPILE_KERNELS:
        add(f"cold compile + adjoint: first launch + first backward of {kernel}, empty cache", "s",
            c("adjit", kernel, 0, "launch_and_backward_s"), c("warp", kernel, 0, "launch_and_backward_s"))
    for kernel in COMPILE_KERNELS:
        add(f"warm load: first launch of {kernel}, cache populated", "ms",
            c("adjit", kernel, 1, "first_launch_s", 1e3), c("warp", kernel, 1, "first_launch_s", 1e3))
    for kernel in COMPILE_KERNELS:
        add(f"warm load + adjoint: first launch + first backward of {kernel}, cache populated", "ms",
            c("adjit", kernel, 1, "launch_and_backward_s", 1e3), c("warp", kernel, 1, "launch_and_backward_s", 1e3))
    what = {"saxpy": f"saxpy (in place, y = a*x + y), {SAXPY_N / 1e6:g}M float32",
            "saxpy_out": f"saxpy_out (z = a*x + y), {SAXPY_N / 1e6:g}M float32",
            "cross": f"length(cross(a,b))*a, {CROSS_N / 1e6:g}M vec3",
            "springs": f"springs, {SPRINGS_N / 1e6:g}M particles x {SPRINGS_ITERS} iters"}
    for key, label in what.items():
        add("forward: " + label, "ms", r("adjit", key, 1e3), r("warp", key, 1e3), r("adjit1", key, 1e3),
            r("warp1", key, 1e3))
    warp_wrong = any(n.startswith(WARP_SPRINGS_WRONG) for n in run_res.get("grad_notes", []))
    if warp_wrong:
        what["springs"] += " (Warp's gradient is wrong, see notes)"
    for key in BACKWARD_CASES:
        add("backward: " + what[key], "ms", r("adjit", "bwd_" + key, 1e3), r("warp", "bwd_" + key, 1e3),
            r("adjit1", "bwd_" + key, 1e3), r("warp1", "bwd_" + key, 1e3))

    def bwd_ratio(backend, key):
        b, f = r(backend, "bwd_" + key, 1.0), r(backend, "fwd_" + key, 1.0)
        return None if b is None or f is None else b / f
    for key in BACKWARD_CASES:
        add("backward / forward (timed alongside): " + {"cross": "length_cross"}.get(key, key)
            + (" (Warp's gradient is wrong)" if key == "springs" and warp_wrong else ""), "x", bwd_ratio("adjit", key),
            bwd_ratio("warp", key), bwd_ratio("adjit1", key), speedup=False)
    add("launch overhead: trivial kernel, dim=1", "us", r("adjit", "launch", 1e6), r("warp", "launch", 1e6),
        r("adjit1", "launch", 1e6), r("warp1", "launch", 1e6))
    add("launch overhead: 3 arrays and a float, dim=1", "us", r("adjit", "launch_few_args", 1e6),
        r("warp", "launch_few_args", 1e6), r("adjit1", "launch_few_args", 1e6), r("warp1", "launch_few_args", 1e6))

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


def targets_note(compile_res: dict, run_res: dict, have_warp: bool) -> str:
    def ratio(backend, key):
        return run_res[backend]["bwd_" + key][0] / run_res[backend]["fwd_" + key][0]

    def verdict(ok):
        return "met" if ok else "NOT met"
    parts = []
    for key, limit, issue_warp in (("saxpy", 2.0, 2.95), ("saxpy_out", 2.0, 2.95), ("cross", 3.0, 5.0)):
        if "bwd_" + key not in run_res["adjit"]:
            parts.append(f"backward/forward of {key} at most {limit:g}: not measured (adjit failed, see above)")
            continue
        a = ratio("adjit", key)
        w = f"; Warp here {ratio('warp', key):.2f}" if have_warp else ""
        parts.append(f"backward/forward of {key} at most {limit:g}: adjit {a:.2f}, {verdict(a <= limit)} "
                     f"(the issue measured Warp at {issue_warp:g}{w})")
    if have_warp:
        for kernel in COMPILE_KERNELS:
            a = compile_res[("adjit", kernel)][0]["launch_and_backward_s"]
            w = compile_res[("warp", kernel)][0]["launch_and_backward_s"]
            parts.append(f"cold forward + adjoint compile of {kernel} at most a fifth of Warp's: adjit {a:.3f} s = "
                         f"1/{w / a:.0f} of Warp's {w:.2f} s, {verdict(a <= w / 5)}")
    return "Targets from the issue: " + "; ".join(parts) + "."


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
              .replace("first launch + first backward of ", "").replace("first launch of ", "") for row in items]
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
          "adjit is faster. \"adjit, 1 thread\" repeats the forward, backward and launch measurements in a fresh "
          "process with `ADJIT_NUM_THREADS=1`, like for like with Warp's single-threaded CPU launches; "
          "its speedup is against Warp timed again in that process (not shown; it varies with the "
          "machine's load like the Warp column). Forward launches of the two backends are timed in "
          "interleaved rounds, so a noisy stretch of a shared machine hits both alike. Forward times are medians of N launches after two warm-up launches; "
          "cold and warm compile times are first launches (compile + a 1024-element run) in "
          f"fresh processes, medians of {repeats} repetition(s), each with its own empty temporary cache "
          "(`ADJIT_CACHE_DIR`, `wp.config.kernel_cache_dir` set before `wp.init()`); the \"+ adjoint\" "
          "rows add the first `tape.backward()` of that launch in the same process (its seed set untimed). "
          "Ratio rows (unit x) are backward time / forward time of each system, lower is better; they have "
          "no speedup column.", "",
          "![adjit speedup over Warp](benchmarks.png)", ""]
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    # peers.py's section "Against the peers (CPU)" lives in the same file: kept as it is
    old = path.read_text() if path.exists() else ""
    keep = old[old.index(PEERS_SECTION):] if PEERS_SECTION in old else ""
    path.write_text("\n".join(md) + ("\n" + keep if keep else ""))


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
    print("1-2. cold compile / warm load, first launch + first backward (fresh processes)")
    repeats = 1 if opts.quick else 3
    compile_res = measure_compile(backends, repeats)
    print("3-6. forward, backward, launch overhead, bandwidth (this process)")
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
    print("3, 4, 6 again with adjit on one thread (fresh process, ADJIT_NUM_THREADS=1, Warp alongside)")
    one_thread = measure_one_thread(opts.quick)
    rows = build_rows(compile_res, run_res, one_thread, backends)
    notes += run_res["grad_notes"]
    notes.append(targets_note(compile_res, run_res, ok))
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
    notes.append("Backward: each kernel is launched once on arrays created with `requires_grad=True`, recorded on a "
                 "tape; each timed call is `tape.backward()` alone. Before it, untimed, every gradient of the "
                 "launch's arrays is zeroed (`.grad.zero_()`) and the outputs' gradients are set to the seed "
                 "(written into `.grad` directly, which is what `tape.backward(grads={out: seed})` does first), "
                 "the same for both systems (adjit's backward consumes the outputs' gradient slots, so they need "
                 "re-seeding anyway). Medians after one warm-up call (and the checked call before it), in "
                 "interleaved rounds with forward launches of the same kernel (on arrays without gradients, "
                 "no tape); the ratio rows divide the backward by that forward, not by the forward rows above "
                 "(timed earlier, when the load of the machine may have differed). Gradients are checked first through `tape.backward(grads=...)`: saxpy_out's "
                 "x.grad = a * seed and y.grad = seed in both, length_cross against float64 numpy and adjit == "
                 "Warp, springs against float64 central differences.")
    if one_thread and "bwd_springs" in one_thread.get("adjit", {}):
        per = one_thread["adjit"]["bwd_springs"][0] / SPRINGS_N
        notes.append(f"The warm \"+ adjoint\" rows include running that first backward on {COMPILE_N} elements: "
                     f"adjit's springs adjoint costs {per * 1e6:.1f} us per particle on one thread (the "
                     f"recomputation below), about {per * COMPILE_N * 1e3:.1f} ms of its row.")
    notes.append("adjit's adjoint of springs' runtime-bounded loop recomputes the loop state from the start for "
                 "each reversed iteration (O(1) memory per thread, O(n^2) time in the trip count: "
                 f"{SPRINGS_ITERS * (SPRINGS_ITERS + 1) // 2} body evaluations for {SPRINGS_ITERS} iterations), "
                 "hence its high backward/forward ratio.")
    if ok:
        notes.append("Warp compiles a kernel's adjoint together with its forward on the first launch, so its "
                     "\"cold compile: first launch\" rows already include the adjoint and its first backward "
                     "compiles nothing (checked in its log); adjit compiles the adjoint on the first backward. "
                     "Compare the \"+ adjoint\" rows for like with like.")
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
