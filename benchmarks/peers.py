"""adjit against its peers on the CPU: Dr.Jit (LLVM), JAX (jit), Taichi and Warp.

    python benchmarks/peers.py            # ~6 minutes: 1 thread, then all cores
    python benchmarks/peers.py --quick    # smoke run: tiny sizes, whichever peers import, no files written

Not part of the project's dependencies, nor of CI: the peers live in an optional environment.
Set it up (Debian/Ubuntu, Python 3.11; the project's own venv is fine, or a copy of it):

    apt-get install -y libllvm19                  # Dr.Jit's LLVM backend loads libLLVM at run time
    pip install drjit "jax[cpu]" taichi "warp-lang>=1,<2" matplotlib
    export DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so   # optional: this script sets
                                                  # it when unset and that file exists

and run this file with the interpreter that imports adjit (the worktree's venv, or
``PYTHONPATH=/path/to/adjit``). Measured with drjit 1.5.0, jax/jaxlib 0.10.2, taichi 1.7.4
(the last release, with cp311 wheels) and warp-lang 1.19.0; a peer that fails to import is
reported as skipped, with the import error.

Workloads (float32; the same math in every system, each written the way that system is meant to
be used; see ``docs/benchmarks.md``, "Against the peers (CPU)"):

1. saxpy, y <- a*x + y in place on 10M elements (forward);
2. ``length(cross(a, b)) * a`` on 1M vec3: forward, and the gradient of the sum of the outputs
   with respect to a and b ("gradient": forward + backward, from the inputs to the gradients);
3. ``springs`` of ``kernels.py`` (vec3/mat33 math, if/else, a runtime loop of 100 steps) on 20,000
   particles: forward, and the gradient of sum(x_out) + sum(v_out) w.r.t. x, v and rot;
4. a Mandelbrot escape count (a data-dependent ``while`` loop, integer output) on a 1024x1024
   grid, at most 256 iterations (forward).

Each configuration (``--threads``, default 1 and then every core) runs in a fresh child process
with each system set to that thread count explicitly: ``ADJIT_NUM_THREADS``,
``drjit.set_thread_count``, ``XLA_FLAGS`` (intra-op threads), Taichi's ``cpu_max_num_threads``;
Warp's CPU launches are serial, whatever the count. Each system's CPU time / wall time over its
timed calls is reported as a check; ``--pin`` also pins the child to that many CPUs
(``os.sched_setaffinity``), which on a shared machine ties a 1-thread run to one busy core. The child has empty
compile caches (``HOME`` and ``XDG_CACHE_HOME`` point into a temporary folder, ``ADJIT_CACHE_DIR``,
Warp's ``kernel_cache_dir``, Taichi's ``offline_cache=False``; JAX keeps no persistent cache by
default), so the first call of each row is a cold compile plus one run. Every result is checked
against a float64 numpy reference (the springs gradient against float64 central differences)
and against adjit's before timing; a system whose result disagrees is reported as FAILED for
that row, not timed. Then the systems that passed take turns in interleaved rounds (medians).

Prints the tables; unless ``--quick`` or ``--no-write``, writes ``benchmarks/results/
peers_last_run.json``, the section "Against the peers (CPU)" of ``docs/benchmarks.md`` and
``docs/peers.png``.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"
DOC_MD = DOCS / "benchmarks.md"
DOC_PNG = DOCS / "peers.png"
LAST_RUN_JSON = HERE / "results" / "peers_last_run.json"

sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (inputs, references, machine description; imports no backend)

SECTION = bench.PEERS_SECTION  # this script's section of docs/benchmarks.md (bench.py keeps it)

SYSTEMS = ("adjit", "drjit", "jax", "taichi", "warp")
LABELS = {"adjit": "adjit", "drjit": "Dr.Jit", "jax": "JAX", "taichi": "Taichi", "warp": "Warp"}

SIZES = {
    "full": {"saxpy": 10_000_000, "cross": 1_000_000, "springs": 20_000, "springs_iters": 100,
             "mandel": (1024, 1024), "mandel_iters": 256, "budget": 2.0, "rounds": 10},
    "quick": {"saxpy": 100_000, "cross": 10_000, "springs": 256, "springs_iters": 20,
              "mandel": (64, 96), "mandel_iters": 64, "budget": 0.1, "rounds": 3},
}
SAXPY_A = 2.0
DT, STIFFNESS = bench.SPRINGS_DT, bench.SPRINGS_K
FD_N = 64                  # springs particles checked against float64 central differences
FD_TOL = 1e-3              # per particle: |directional derivative - fd| / (|fd| + 1e-2) (as loop_adjoints.py)
MANDEL_TOL = 0.01          # at most this fraction of the pixels may differ from the float64 escape counts
MANDEL_BOX = (-2.0, 0.5, -1.25, 1.25)
ROWS = (("saxpy", "forward"), ("cross", "forward"), ("cross", "gradient"), ("springs", "forward"),
        ("springs", "gradient"), ("mandelbrot", "forward"))
LIBLLVM19 = "/usr/lib/x86_64-linux-gnu/libLLVM-19.so"
PER_STEP = "per-step launches"   # a gradient variant: one launch per loop step, state arrays per step


class NotApplicable(Exception):
    """The system cannot compute this row (printed as n/a, with the reason)."""


def row_key(workload: str, mode: str) -> str:
    return f"{workload} {mode}"


def row_label(workload: str, mode: str, sz: dict) -> str:
    what = {"saxpy": f"saxpy y <- a*x + y, {sz['saxpy']:,} float32",
            "cross": f"length(cross(a, b)) * a, {sz['cross']:,} vec3",
            "springs": f"springs, {sz['springs']:,} particles x {sz['springs_iters']} steps",
            "mandelbrot": f"Mandelbrot, {sz['mandel'][0]}x{sz['mandel'][1]}, <= {sz['mandel_iters']} iterations"}
    return f"{what[workload]}: {mode}"


# --------------------------------------------------------------------------- data and references

def make_data(sz: dict) -> dict:
    rng = np.random.default_rng(1)
    n = sz["saxpy"]
    d = {"sx": rng.standard_normal(n).astype(np.float32), "sy": rng.standard_normal(n).astype(np.float32)}
    n = sz["cross"]
    d["ca"] = rng.standard_normal((n, 3)).astype(np.float32)
    d["cb"] = rng.standard_normal((n, 3)).astype(np.float32)
    d["px"], d["pv"], d["prot"] = bench.springs_inputs(sz["springs"])
    d["n_iter"] = sz["springs_iters"]
    h, w = sz["mandel"]
    x0, x1, y0, y1 = MANDEL_BOX
    # pixel centres, float32: every system reads these same values
    d["mx"] = (x0 + (np.arange(w) + 0.5) * ((x1 - x0) / w)).astype(np.float32)
    d["my"] = (y0 + (np.arange(h) + 0.5) * ((y1 - y0) / h)).astype(np.float32)
    d["m_iter"] = sz["mandel_iters"]
    return d


def mandelbrot_reference(cx: np.ndarray, cy: np.ndarray, max_iter: int) -> np.ndarray:
    """Escape counts in float64 (the float32 pixel centres widened), flattened row by row."""
    h, w = len(cy), len(cx)
    cr = np.broadcast_to(cx.astype(np.float64)[None, :], (h, w)).ravel()
    ci = np.broadcast_to(cy.astype(np.float64)[:, None], (h, w)).ravel()
    idx = np.arange(h * w)
    zr, zi = np.zeros(h * w), np.zeros(h * w)
    count = np.zeros(h * w, np.int32)
    for _ in range(max_iter):
        active = zr * zr + zi * zi <= 4.0
        if not active.all():
            idx, zr, zi = idx[active], zr[active], zi[active]
        if not len(idx):
            break
        zr, zi = zr * zr - zi * zi + cr[idx], 2.0 * zr * zi + ci[idx]
        count[idx] += 1
    return count


def springs_fd(d: dict, n: int):
    """Random directions for x, v, rot of the first ``n`` particles and the float64 central difference
    (h = 1e-6) of each particle's sum(x_out) + sum(v_out) along them."""
    rng = np.random.default_rng(7)
    dirs = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 3, 3))
    base = [d[k][:n].astype(np.float64) for k in ("px", "pv", "prot")]

    def loss(h):
        p, v = bench.springs_reference(*(x + h * e for x, e in zip(base, dirs)), DT, STIFFNESS, d["n_iter"])
        return p.sum(1) + v.sum(1)
    return dirs, (loss(1e-6) - loss(-1e-6)) / 2e-6


class References:
    """float64 references, computed when first asked for."""

    def __init__(self, d: dict):
        self.d = d
        self._cache = {}

    def get(self, key: str):
        if key not in self._cache:
            d = self.d
            if key == "saxpy forward":
                self._cache[key] = {"y": SAXPY_A * d["sx"].astype(np.float64) + d["sy"]}
            elif key == "cross forward":
                a, b = d["ca"].astype(np.float64), d["cb"].astype(np.float64)
                self._cache[key] = {"y": np.linalg.norm(np.cross(a, b), axis=1, keepdims=True) * a}
            elif key == "cross gradient":
                ga, gb = bench.length_cross_grads(d["ca"], d["cb"], np.ones_like(d["ca"]))
                self._cache[key] = {"a": ga, "b": gb}
            elif key == "springs forward":
                p, v = bench.springs_reference(d["px"].astype(np.float64), d["pv"].astype(np.float64),
                                               d["prot"].astype(np.float64), DT, STIFFNESS, d["n_iter"])
                self._cache[key] = {"x": p, "v": v}
            elif key == "springs gradient":
                self._cache[key] = springs_fd(d, min(FD_N, len(d["px"])))
            elif key == "mandelbrot":
                self._cache[key] = {"count": mandelbrot_reference(d["mx"], d["my"], d["m_iter"])}
        return self._cache[key]


def check(key: str, got: dict, refs: References, other: dict | None) -> tuple[bool, str]:
    """Whether ``got`` (one system's result) matches the float64 reference and, if given, ``other``
    (adjit's result); and a short description of the errors."""
    def close(name, a, b, rtol, atol):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if a.shape != b.shape:
            return False, f"{name}: shape {a.shape} != {b.shape}"
        bad = ~(np.abs(a - b) <= atol + rtol * np.abs(b))
        err = float(np.max(np.abs(a - b) / (atol + rtol * np.abs(b)))) if a.size else 0.0
        if bad.any():
            return False, f"{name}: {int(bad.sum())} of {a.size} values off (worst {err:.3g}x the tolerance)"
        return True, f"{name} within {err:.2g}x tol"

    parts, ok = [], True
    workload = key.split()[0]
    if workload == "mandelbrot":
        ref = refs.get("mandelbrot")["count"]
        c = np.asarray(got["count"]).ravel()
        if c.shape != ref.shape:
            return False, f"count: shape {c.shape} != {ref.shape}"
        frac = float(np.mean(c != ref))
        ok = frac <= MANDEL_TOL
        parts.append(f"{100 * frac:.3f} % of pixels differ from float64")
        if other is not None:
            f2 = float(np.mean(c != np.asarray(other["count"]).ravel()))
            ok &= f2 <= MANDEL_TOL
            parts.append(f"{100 * f2:.3f} % from adjit")
        return ok, "; ".join(parts)
    if key == "springs gradient":
        dirs, fd = refs.get(key)
        n = len(fd)
        with np.errstate(all="ignore"):
            err = bench.springs_fd_error([np.asarray(got[k])[:n] for k in ("x", "v", "rot")], dirs, fd)
        err = np.where(np.isfinite(err), err, np.inf)
        ok = bool((err <= FD_TOL).all())
        parts.append(f"vs float64 central differences ({n} particles): max rel. error {err.max():.2g}"
                     + ("" if ok else f", {int((err > FD_TOL).sum())} above {FD_TOL:g}"))
        if other is not None:
            for k in ("x", "v", "rot"):
                o, m = close(f"{k}.grad vs adjit", got[k], other[k], 2e-2, 2e-2)
                ok &= o
                if not o:
                    parts.append(m)
        return ok, "; ".join(parts)
    tol = {"saxpy forward": (1e-6, 1e-6), "cross forward": (1e-5, 1e-5), "cross gradient": (1e-3, 1e-3),
           "springs forward": (1e-3, 1e-3)}[key]
    ref = refs.get(key)
    for k, r in ref.items():
        o, m = close(k, got[k], r, *tol)
        ok &= o
        parts.append(m)
        if other is not None:
            o, m = close(f"{k} vs adjit", got[k], other[k], 2 * tol[0], 2 * tol[1])
            ok &= o
            if not o:
                parts.append(m)
    return ok, "; ".join(parts)


# --------------------------------------------------------------------------- systems
#
# Each system's ``make(key, d, variant)`` builds a row's inputs (untimed) and returns (run, result):
# ``run()`` computes the row once and waits for it (the timed call); ``result()`` returns its
# outputs as numpy arrays in one layout for all (vec3: (n, 3), mat33: (n, 3, 3)): "y" (saxpy, cross
# forward), "a"/"b" (cross gradient), "x"/"v" (springs forward: x_out, v_out), "x"/"v"/"rot"
# (springs gradient), "count" (mandelbrot). ``variant`` None is the system's natural formulation;
# ``fallbacks[key]`` lists the others tried, in order, when it runs but fails the check.


class AdjitOrWarp:
    """adjit and Warp run the very same kernels (``kernels.py``), launched the same way."""

    def __init__(self, name: str, threads: int, cache_dir: str):
        self.name = name
        wp = bench.import_backend(name, os.path.join(cache_dir, name))
        self.wp = wp
        self.b = bench.Backend(name, wp)
        # startup: the first compile of a process pays one-time costs (the compiler's own start);
        # a trivial kernel takes them here, so that the rows' first calls are their own compiles
        self.b.launch(self.b.k.trivial, 4, [self.b.array(np.zeros(4, np.float32))])
        self.b.sync()
        if name == "adjit":
            self.version = f"0.1.0 (git {bench.adjit_revision()})"
            self.threads = f"ADJIT_NUM_THREADS={os.environ.get('ADJIT_NUM_THREADS')}"
        else:
            self.version = wp.config.version
            self.threads = "1: Warp's CPU launches are serial (no setting)"
        self.fallbacks = {} if name == "adjit" else {"springs gradient": [PER_STEP]}

    def make(self, key, d, variant=None):
        b, wp, k = self.b, self.wp, self.b.k
        sync = b.sync
        if key == "saxpy forward":
            n = len(d["sx"])
            x, y = b.array(d["sx"]), b.array(d["sy"])

            def run():
                b.launch(k.saxpy, n, [SAXPY_A, x, y])
                sync()
            return run, lambda: {"y": y.numpy().copy()}
        if key.startswith("cross"):
            n = len(d["ca"])
            grad = key.endswith("gradient")
            a, bb = b.array(d["ca"], wp.vec3, requires_grad=grad), b.array(d["cb"], wp.vec3, requires_grad=grad)
            y = b.array(np.zeros_like(d["ca"]), wp.vec3, requires_grad=grad)
            if not grad:
                def run():
                    b.launch(k.length_cross, n, [a, bb, y])
                    sync()
                return run, lambda: {"y": y.numpy().copy()}
            seed = b.array(np.ones_like(d["ca"]), wp.vec3)
            return self._tape_run(lambda: b.launch(k.length_cross, n, [a, bb, y]), {y: seed},
                                  lambda: {"a": a.grad.numpy().copy(), "b": bb.grad.numpy().copy()})
        if key.startswith("springs"):
            n, n_iter = len(d["px"]), d["n_iter"]
            grad = key.endswith("gradient")
            g = lambda arr, dtype: b.array(arr, dtype, requires_grad=grad)  # noqa: E731
            x, v, rot = g(d["px"], wp.vec3), g(d["pv"], wp.vec3), g(d["prot"], wp.mat33)
            xo, vo = g(np.zeros_like(d["px"]), wp.vec3), g(np.zeros_like(d["px"]), wp.vec3)
            args = [x, v, rot, xo, vo, DT, STIFFNESS, n_iter]
            if not grad:
                def run():
                    b.launch(k.springs, n, args)
                    sync()
                return run, lambda: {"x": xo.numpy().copy(), "v": vo.numpy().copy()}
            ones = b.array(np.ones_like(d["px"]), wp.vec3)
            grads = lambda: {"x": x.grad.numpy().copy(), "v": v.grad.numpy().copy(),  # noqa: E731
                             "rot": rot.grad.numpy().copy()}
            if variant is None:
                return self._tape_run(lambda: b.launch(k.springs, n, args), {xo: ones, vo: ones}, grads)
            # Warp's adjoint of the runtime loop is wrong (the check says so): its gradient is then
            # the documented Warp way of differentiating a simulation, one launch of the loop body
            # per step on the tape, one state array per step
            xs = [x] + [g(np.zeros_like(d["px"]), wp.vec3) for _ in range(n_iter)]
            vs = [v] + [g(np.zeros_like(d["px"]), wp.vec3) for _ in range(n_iter)]

            def steps():
                for s in range(n_iter):
                    b.launch(k.springs_step, n, [xs[s], vs[s], rot, xs[s + 1], vs[s + 1], DT, STIFFNESS])
            return self._tape_run(steps, {xs[-1]: ones, vs[-1]: ones}, grads)
        if key == "mandelbrot forward":
            h, w = len(d["my"]), len(d["mx"])
            cx, cy = b.array(d["mx"]), b.array(d["my"])
            count = b.array(np.zeros(h * w, np.int32), wp.int32)

            def run():
                b.launch(k.mandelbrot, h * w, [cx, cy, w, d["m_iter"], count])
                sync()
            return run, lambda: {"count": count.numpy().copy()}
        raise KeyError(key)

    def _tape_run(self, forward, seeds, grads):
        """The gradient, Warp's way (adjit's is the same): zero the gradients of the previous
        call's tape, record the forward on a new tape, then ``tape.backward(grads=seeds)``."""
        state = {"tape": None}

        def run():
            if state["tape"] is not None:
                state["tape"].zero()
            tape = self.wp.Tape()
            with tape:
                forward()
            tape.backward(grads=seeds)
            self.b.sync()
            state["tape"] = tape
        return run, grads


class DrJit:
    """Dr.Jit's LLVM backend with automatic differentiation (``drjit.llvm.ad``): SoA arrays, loops
    as symbolic ``dr.while_loop`` (compiled into the kernel; a runtime trip count through
    ``dr.opaque``); kernels run asynchronously, so each call ends with ``dr.sync_thread()``."""

    def __init__(self, threads: int, cache_dir: str):
        if not os.environ.get("DRJIT_LIBLLVM_PATH") and os.path.exists(LIBLLVM19):
            os.environ["DRJIT_LIBLLVM_PATH"] = LIBLLVM19
        import drjit as dr
        import drjit.llvm.ad as T
        if not dr.has_backend(dr.JitBackend.LLVM):
            raise RuntimeError("Dr.Jit's LLVM backend is unavailable (libLLVM not found; set DRJIT_LIBLLVM_PATH)")
        dr.set_thread_count(threads)
        self.dr, self.T = dr, T
        dr.eval(T.Float(1.0) + 1.0)
        dr.sync_thread()
        lib = os.environ.get("DRJIT_LIBLLVM_PATH")
        lib = os.path.realpath(lib) if lib else "the libLLVM it found"
        self.version = f"{dr.__version__} (LLVM backend, {lib})"
        self.threads = f"dr.set_thread_count({threads}) (dr.thread_count() = {dr.thread_count()})"
        self.fallbacks = {}

    def _a3(self, x):
        T = self.T
        return T.Array3f(*(T.Float(np.ascontiguousarray(x[:, j])) for j in range(3)))

    def _m3(self, m):
        T = self.T
        return T.Matrix3f(*(T.Float(np.ascontiguousarray(m[:, i, j])) for i in range(3) for j in range(3)))

    @staticmethod
    def _np3(v):
        return np.stack([np.array(v[j]) for j in range(3)], 1)

    @staticmethod
    def _npm(m):
        return np.stack([np.stack([np.array(m[i][j]) for j in range(3)], 1) for i in range(3)], 1)

    def springs(self, p, vel, R, n_iter, max_iterations):
        dr, T = self.dr, self.T
        anchor, omega = T.Array3f(0.0, 1.0, 0.0), T.Array3f(0.1, 0.2, 0.3)

        def body(i, p, vel):
            d = R @ p - anchor
            L = dr.norm(d)
            f = dr.select(L > 1e-6, dr.normalize(d) * (-STIFFNESS * (L - 1.0)), T.Array3f(0.0, -1.0, 0.0))
            f = f - vel * 0.1 + dr.cross(omega, vel)
            vel = vel + f * DT
            p = p + vel * DT
            ground = p.y < 0.0
            p = T.Array3f(p.x, dr.select(ground, p.y - p.y, p.y), p.z)
            vel = dr.select(ground, vel * 0.5, vel)
            return i + 1, p, vel
        _, p, vel = dr.while_loop((T.UInt32(0), p, vel), lambda i, p, vel: i < n_iter, body,
                                  max_iterations=max_iterations)
        return p, vel

    def make(self, key, d, variant=None):
        dr, T = self.dr, self.T
        if key == "saxpy forward":
            st = {"x": T.Float(d["sx"]), "y": T.Float(d["sy"])}

            def run():
                st["y"] = SAXPY_A * st["x"] + st["y"]
                dr.eval(st["y"])
                dr.sync_thread()
            return run, lambda: {"y": np.array(st["y"])}
        if key.startswith("cross"):
            a0, b0 = self._a3(d["ca"]), self._a3(d["cb"])
            st = {}
            if key == "cross forward":
                def run():
                    st["y"] = dr.norm(dr.cross(a0, b0)) * a0
                    dr.eval(st["y"])
                    dr.sync_thread()
                return run, lambda: {"y": self._np3(st["y"])}

            def run():
                a, b = T.Array3f(a0), T.Array3f(b0)
                dr.enable_grad(a, b)
                y = dr.norm(dr.cross(a, b)) * a
                dr.backward(y)  # seeds every output with 1: the gradient of their sum
                st["y"], st["a"], st["b"] = dr.detach(y), dr.grad(a), dr.grad(b)
                dr.eval(st["y"], st["a"], st["b"])
                dr.sync_thread()
            return run, lambda: {"a": self._np3(st["a"]), "b": self._np3(st["b"])}
        if key.startswith("springs"):
            x0, v0, r0 = self._a3(d["px"]), self._a3(d["pv"]), self._m3(d["prot"])
            n_iter = dr.opaque(T.UInt32, d["n_iter"])  # a runtime trip count, as adjit's
            st = {}
            if key == "springs forward":
                def run():
                    st["x"], st["v"] = self.springs(x0, v0, r0, n_iter, None)
                    dr.eval(st["x"], st["v"])
                    dr.sync_thread()
                return run, lambda: {"x": self._np3(st["x"]), "v": self._np3(st["v"])}

            def run():
                x, v, r = T.Array3f(x0), T.Array3f(v0), T.Matrix3f(r0)
                dr.enable_grad(x, v, r)
                # reverse mode through a symbolic loop needs an upper bound of the trip count
                xo, vo = self.springs(x, v, r, n_iter, d["n_iter"])
                dr.backward(dr.sum(xo, axis=None) + dr.sum(vo, axis=None))
                st["xo"], st["vo"] = dr.detach(xo), dr.detach(vo)
                st["x"], st["v"], st["rot"] = dr.grad(x), dr.grad(v), dr.grad(r)
                dr.eval(st["xo"], st["vo"], st["x"], st["v"], st["rot"])
                dr.sync_thread()
            return run, lambda: {"x": self._np3(st["x"]), "v": self._np3(st["v"]), "rot": self._npm(st["rot"])}
        if key == "mandelbrot forward":
            h, w = len(d["my"]), len(d["mx"])
            cxs, cys = T.Float(d["mx"]), T.Float(d["my"])
            max_iter = dr.opaque(T.Int32, d["m_iter"])
            st = {}

            def run():
                idx = dr.arange(T.UInt32, h * w)
                cr, ci = dr.gather(T.Float, cxs, idx % w), dr.gather(T.Float, cys, idx // w)

                def body(zr, zi, n):
                    return zr * zr - zi * zi + cr, 2.0 * zr * zi + ci, n + 1
                _, _, st["count"] = dr.while_loop(
                    (T.Float(0.0), T.Float(0.0), T.Int32(0)),
                    lambda zr, zi, n: (n < max_iter) & (zr * zr + zi * zi <= 4.0), body)
                dr.eval(st["count"])
                dr.sync_thread()
            return run, lambda: {"count": np.array(st["count"])}
        raise KeyError(key)


class Jax:
    """``jax.jit`` on the CPU (float32). vec3 data as (3, n) arrays (struct of arrays: XLA's fused
    loops then read each component contiguously; an (n, 3) ``jnp.cross`` version measured 5-10x
    slower); loops as ``lax.fori_loop`` with a static trip count (a traced one would be a
    ``while_loop``, which JAX cannot differentiate in reverse mode) and ``lax.while_loop``;
    gradients with ``jax.vjp`` (seeds of ones: the gradient of the sum of the outputs, returned with
    the outputs), jitted as a whole; saxpy donates y (``donate_argnums``), JAX's in-place update."""

    def __init__(self, threads: int, cache_dir: str):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp
        jax.config.update("jax_platforms", "cpu")
        jax.jit(lambda x: x * 2.0 + 1.0)(jnp.zeros(4)).block_until_ready()  # startup: the first compile
        import jaxlib
        self.version = f"{jax.__version__} (jaxlib {jaxlib.__version__})"
        self.threads = f"XLA_FLAGS=\"{os.environ.get('XLA_FLAGS', '')}\""
        self.fallbacks = {}

    def springs_fn(self, n_iter: int):
        jnp, lax = self.jnp, self.jax.lax

        def springs(x, v, rot):
            R = rot

            def body(_, s):
                px, py, pz, vx, vy, vz = s
                dx = R[0, 0] * px + R[0, 1] * py + R[0, 2] * pz
                dy = R[1, 0] * px + R[1, 1] * py + R[1, 2] * pz - 1.0
                dz = R[2, 0] * px + R[2, 1] * py + R[2, 2] * pz
                L = jnp.sqrt(dx * dx + dy * dy + dz * dz)
                far = L > 1e-6
                Ls = jnp.where(far, L, 1.0)  # no 0/0 in the branch not taken (its gradient would be NaN)
                s_ = -STIFFNESS * (L - 1.0)
                fx = jnp.where(far, dx / Ls * s_, 0.0)
                fy = jnp.where(far, dy / Ls * s_, -1.0)
                fz = jnp.where(far, dz / Ls * s_, 0.0)
                fx = fx - vx * 0.1 + (0.2 * vz - 0.3 * vy)
                fy = fy - vy * 0.1 + (0.3 * vx - 0.1 * vz)
                fz = fz - vz * 0.1 + (0.1 * vy - 0.2 * vx)
                vx, vy, vz = vx + fx * DT, vy + fy * DT, vz + fz * DT
                px, py, pz = px + vx * DT, py + vy * DT, pz + vz * DT
                ground = py < 0.0
                py = jnp.where(ground, py - py, py)
                vx, vy, vz = (jnp.where(ground, c * 0.5, c) for c in (vx, vy, vz))
                return px, py, pz, vx, vy, vz
            s = lax.fori_loop(0, n_iter, body, (x[0], x[1], x[2], v[0], v[1], v[2]))
            return jnp.stack(s[:3]), jnp.stack(s[3:])
        return springs

    def make(self, key, d, variant=None):
        jax, jnp = self.jax, self.jnp
        st = {}
        soa = lambda x: jnp.asarray(np.ascontiguousarray(np.moveaxis(x, 0, -1)))  # noqa: E731  (n, ...) -> (..., n)
        aos = lambda x: np.moveaxis(np.asarray(x), -1, 0)  # noqa: E731

        def vjp_ones(f):
            def g(*args):
                out, pullback = jax.vjp(f, *args)
                return out, pullback(jax.tree_util.tree_map(jnp.ones_like, out))
            return jax.jit(g)
        if key == "saxpy forward":
            f = jax.jit(lambda a, x, y: a * x + y, donate_argnums=2)
            a, x = jnp.float32(SAXPY_A), jnp.asarray(d["sx"])
            st["y"] = jnp.asarray(d["sy"])

            def run():
                st["y"] = f(a, x, st["y"])
                st["y"].block_until_ready()
            return run, lambda: {"y": np.asarray(st["y"])}
        if key.startswith("cross"):
            def cross(a, b):
                ax, ay, az = a
                bx, by, bz = b
                cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
                return jnp.sqrt(cx * cx + cy * cy + cz * cz)[None] * a
            a, b = soa(d["ca"]), soa(d["cb"])
            if key == "cross forward":
                f = jax.jit(cross)

                def run():
                    st["y"] = f(a, b).block_until_ready()
                return run, lambda: {"y": aos(st["y"])}
            g = vjp_ones(cross)

            def run():
                st["out"] = jax.block_until_ready(g(a, b))
            return run, lambda: {"a": aos(st["out"][1][0]), "b": aos(st["out"][1][1])}
        if key.startswith("springs"):
            f = self.springs_fn(d["n_iter"])
            x, v, rot = soa(d["px"]), soa(d["pv"]), soa(d["prot"])
            if key == "springs forward":
                fj = jax.jit(f)

                def run():
                    st["out"] = jax.block_until_ready(fj(x, v, rot))
                return run, lambda: {"x": aos(st["out"][0]), "v": aos(st["out"][1])}
            g = vjp_ones(f)

            def run():
                st["out"] = jax.block_until_ready(g(x, v, rot))
            return run, lambda: {"x": aos(st["out"][1][0]), "v": aos(st["out"][1][1]), "rot": aos(st["out"][1][2])}
        if key == "mandelbrot forward":
            def mandelbrot(cx, cy, max_iter):
                cr = jnp.broadcast_to(cx[None, :], (cy.shape[0], cx.shape[0]))
                ci = jnp.broadcast_to(cy[:, None], cr.shape)

                def body(s):
                    zr, zi, n, _ = s
                    active = (n < max_iter) & (zr * zr + zi * zi <= 4.0)
                    zr, zi = (jnp.where(active, zr * zr - zi * zi + cr, zr),
                              jnp.where(active, 2.0 * zr * zi + ci, zi))
                    return zr, zi, n + active.astype(jnp.int32), jnp.any(active)
                zero = jnp.zeros(cr.shape, jnp.float32)
                out = jax.lax.while_loop(lambda s: s[3], body, (zero, zero, jnp.zeros(cr.shape, jnp.int32),
                                                                jnp.bool_(True)))
                return out[2].ravel()
            f = jax.jit(mandelbrot)
            cx, cy, max_iter = jnp.asarray(d["mx"]), jnp.asarray(d["my"]), jnp.int32(d["m_iter"])

            def run():
                st["count"] = f(cx, cy, max_iter).block_until_ready()
            return run, lambda: {"count": np.asarray(st["count"])}
        raise KeyError(key)


class Taichi:
    """Taichi's CPU backend (x64, LLVM): ``ti.field`` data, ``@ti.kernel`` with ``ti.template()``
    fields; gradients with ``needs_grad`` fields: the outputs' ``.grad`` filled with ones, then
    ``kernel.grad(...)`` (what ``ti.ad.Tape`` does after seeding a scalar loss); the runtime loop's
    loop-carried values go through Taichi's autodiff stack (``ad_stack_size``)."""

    def __init__(self, threads: int, cache_dir: str):
        import taichi as ti
        self.ti = ti
        self.ad_stack = 512
        ti.init(arch=ti.cpu, cpu_max_num_threads=threads, offline_cache=False, default_fp=ti.f32,
                ad_stack_size=self.ad_stack, log_level=ti.WARN, random_seed=0)
        self.version = ".".join(map(str, ti.__version__))
        self.threads = f"ti.init(cpu_max_num_threads={threads})"
        self.fallbacks = {"springs gradient": [PER_STEP]}
        self._kernels()
        one = ti.field(ti.f32, 4)
        self.k["saxpy"](1.0, one, one)  # startup: the first compile
        ti.sync()

    def _kernels(self):
        ti = self.ti
        tmpl = ti.template()

        @ti.kernel
        def saxpy(a: ti.f32, x: tmpl, y: tmpl):
            for i in x:
                y[i] = a * x[i] + y[i]

        @ti.kernel
        def length_cross(a: tmpl, b: tmpl, y: tmpl):
            for i in a:
                y[i] = a[i].cross(b[i]).norm() * a[i]

        @ti.kernel
        def springs(x: tmpl, v: tmpl, rot: tmpl, x_out: tmpl, v_out: tmpl, dt: ti.f32, stiffness: ti.f32,
                    n_iter: ti.i32):
            for i in x:
                p = x[i]
                vel = v[i]
                R = rot[i]
                anchor = ti.Vector([0.0, 1.0, 0.0])
                omega = ti.Vector([0.1, 0.2, 0.3])
                for _ in range(n_iter):
                    q = R @ p
                    d = q - anchor
                    L = d.norm()
                    f = ti.Vector([0.0, -1.0, 0.0])
                    if L > 1.0e-6:
                        f = d.normalized() * (-stiffness * (L - 1.0))
                    f = f - vel * 0.1 + omega.cross(vel)
                    vel = vel + f * dt
                    p = p + vel * dt
                    h = p.dot(ti.Vector([0.0, 1.0, 0.0]))
                    if h < 0.0:
                        p = p - ti.Vector([0.0, h, 0.0])
                        vel = vel * 0.5
                x_out[i] = p
                v_out[i] = vel

        @ti.kernel
        def springs_step(t: ti.i32, xs: tmpl, vs: tmpl, rot: tmpl, dt: ti.f32, stiffness: ti.f32):
            # one step of springs' loop: state t -> t + 1 (the DiffTaichi way to differentiate a
            # simulation: a step kernel per time step, the states in fields indexed by the step)
            for i in range(xs.shape[1]):
                p = xs[t, i]
                vel = vs[t, i]
                R = rot[i]
                anchor = ti.Vector([0.0, 1.0, 0.0])
                omega = ti.Vector([0.1, 0.2, 0.3])
                q = R @ p
                d = q - anchor
                L = d.norm()
                f = ti.Vector([0.0, -1.0, 0.0])
                if L > 1.0e-6:
                    f = d.normalized() * (-stiffness * (L - 1.0))
                f = f - vel * 0.1 + omega.cross(vel)
                vel = vel + f * dt
                p = p + vel * dt
                h = p.dot(ti.Vector([0.0, 1.0, 0.0]))
                if h < 0.0:
                    p = p - ti.Vector([0.0, h, 0.0])
                    vel = vel * 0.5
                xs[t + 1, i] = p
                vs[t + 1, i] = vel

        @ti.kernel
        def mandelbrot(cx: tmpl, cy: tmpl, max_iter: ti.i32, count: tmpl):
            for r, c in count:
                c_re = cx[c]
                c_im = cy[r]
                zr = 0.0
                zi = 0.0
                n = 0
                while n < max_iter and zr * zr + zi * zi <= 4.0:
                    t = zr * zr - zi * zi + c_re
                    zi = 2.0 * zr * zi + c_im
                    zr = t
                    n += 1
                count[r, c] = n
        self.k = {"saxpy": saxpy, "length_cross": length_cross, "springs": springs, "springs_step": springs_step,
                  "mandelbrot": mandelbrot}

    def make(self, key, d, variant=None):
        ti = self.ti
        k = self.k

        def vec(data, grad=False):
            return self._field(ti.Vector.field(3, ti.f32, len(data), needs_grad=grad), data)
        if key == "saxpy forward":
            x, y = (self._field(ti.field(ti.f32, len(d["sx"])), d[n]) for n in ("sx", "sy"))

            def run():
                k["saxpy"](SAXPY_A, x, y)
                ti.sync()
            return run, lambda: {"y": y.to_numpy()}
        if key.startswith("cross"):
            grad = key.endswith("gradient")
            a, b, y = vec(d["ca"], grad), vec(d["cb"], grad), vec(np.zeros_like(d["ca"]), grad)
            if not grad:
                def run():
                    k["length_cross"](a, b, y)
                    ti.sync()
                return run, lambda: {"y": y.to_numpy()}

            def run():
                k["length_cross"](a, b, y)
                a.grad.fill(0.0)
                b.grad.fill(0.0)
                y.grad.fill(1.0)
                k["length_cross"].grad(a, b, y)
                ti.sync()
            return run, lambda: {"a": a.grad.to_numpy(), "b": b.grad.to_numpy()}
        if key.startswith("springs"):
            grad = key.endswith("gradient")
            n = len(d["px"])
            x, v = vec(d["px"], grad), vec(d["pv"], grad)
            rot = self._field(ti.Matrix.field(3, 3, ti.f32, n, needs_grad=grad), d["prot"])
            n_iter = d["n_iter"]
            if variant == PER_STEP:
                # Taichi's gradient of the runtime loop is wrong (the check says so): a step kernel
                # per time step instead, its .grad() run in reverse order
                xs, vs = (ti.Vector.field(3, ti.f32, (n_iter + 1, n), needs_grad=True) for _ in range(2))
                hist = np.zeros((n_iter + 1, n, 3), np.float32)
                for f, k0 in ((xs, "px"), (vs, "pv")):
                    hist[0] = d[k0]
                    f.from_numpy(hist)
                step = k["springs_step"]

                def run():
                    for t in range(n_iter):
                        step(t, xs, vs, rot, DT, STIFFNESS)
                    for f in (xs, vs, rot):
                        f.grad.fill(0.0)
                    self._seed_last(xs, vs, n_iter)
                    for t in reversed(range(n_iter)):
                        step.grad(t, xs, vs, rot, DT, STIFFNESS)
                    ti.sync()
                return run, lambda: {"x": xs.grad.to_numpy()[0], "v": vs.grad.to_numpy()[0],
                                     "rot": rot.grad.to_numpy()}
            xo, vo = vec(np.zeros_like(d["px"]), grad), vec(np.zeros_like(d["px"]), grad)
            args = (x, v, rot, xo, vo, DT, STIFFNESS, n_iter)
            if not grad:
                def run():
                    k["springs"](*args)
                    ti.sync()
                return run, lambda: {"x": xo.to_numpy(), "v": vo.to_numpy()}

            def run():
                k["springs"](*args)
                for f in (x, v, rot):
                    f.grad.fill(0.0)
                xo.grad.fill(1.0)
                vo.grad.fill(1.0)
                k["springs"].grad(*args)
                ti.sync()
            return run, lambda: {"x": x.grad.to_numpy(), "v": v.grad.to_numpy(), "rot": rot.grad.to_numpy()}
        if key == "mandelbrot forward":
            h, w = len(d["my"]), len(d["mx"])
            cx, cy = (self._field(ti.field(ti.f32, len(d[n])), d[n]) for n in ("mx", "my"))
            count = ti.field(ti.i32, (h, w))

            def run():
                k["mandelbrot"](cx, cy, d["m_iter"], count)
                ti.sync()
            return run, lambda: {"count": count.to_numpy().ravel()}
        raise KeyError(key)

    def _seed_last(self, xs, vs, n_iter):
        """Gradients of ones for the last step's state."""
        if not hasattr(self, "_seed_kernel"):
            ti = self.ti

            @ti.kernel
            def seed(xs: ti.template(), vs: ti.template(), t: ti.i32):
                for i in range(xs.shape[1]):
                    xs.grad[t, i] = ti.Vector([1.0, 1.0, 1.0])
                    vs.grad[t, i] = ti.Vector([1.0, 1.0, 1.0])
            self._seed_kernel = seed
        self._seed_kernel(xs, vs, n_iter)

    @staticmethod
    def _field(f, data):
        f.from_numpy(data)
        return f


# --------------------------------------------------------------------------- the child: one thread count

def pin(threads: int) -> list[int]:
    """Restricts this process (and the threads it starts later) to ``threads`` of its CPUs."""
    cpus = sorted(os.sched_getaffinity(0))
    if threads > len(cpus):
        raise SystemExit(f"--threads {threads}: this process may use {len(cpus)} CPUs")
    os.sched_setaffinity(0, cpus[:threads])
    return cpus[:threads]


def child_env(threads: int, tmp: str) -> dict:
    env = dict(os.environ)
    for k in ("ADJIT_DUMP_DIR", "ADJIT_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        env.pop(k, None)
    env.update({
        "ADJIT_NUM_THREADS": str(threads),
        "ADJIT_CACHE_DIR": os.path.join(tmp, "adjit"),
        # XLA's CPU client sizes its intra-op thread pool by these (and by the CPUs it may run on)
        "XLA_FLAGS": f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                     f"intra_op_parallelism_threads={threads}",
        "JAX_PLATFORMS": "cpu",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "OMP_NUM_THREADS": str(threads),
        # empty compile caches: Dr.Jit keeps its kernels in ~/.drjit, Warp and others under ~/.cache
        "HOME": tmp, "XDG_CACHE_HOME": os.path.join(tmp, ".cache"),
    })
    if not env.get("DRJIT_LIBLLVM_PATH") and os.path.exists(LIBLLVM19):
        env["DRJIT_LIBLLVM_PATH"] = LIBLLVM19
    return env


def make_system(name: str, threads: int, tmp: str):
    if name in ("adjit", "warp"):
        return AdjitOrWarp(name, threads, tmp)
    return {"drjit": DrJit, "jax": Jax, "taichi": Taichi}[name](threads, tmp)


def interleaved(fns: dict, budget: float, rounds: int) -> dict:
    """{name: {median_s, n, cpu_per_wall}}: ``rounds`` rounds in which each function in turn runs a
    few timed calls, about ``budget`` seconds per function (one untimed warm-up call each first),
    so that a noisy stretch of a shared machine hits all alike. ``cpu_per_wall``: this process's CPU
    time over the wall time of the timed calls (how many cores the system kept busy)."""
    per_round = {}
    for name, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        per_round[name] = int(min(20, max(1, budget / rounds / (time.perf_counter() - t0))))
    samples = {name: [] for name in fns}
    cpu = {name: 0.0 for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            for _ in range(per_round[name]):
                c0, t0 = time.process_time(), time.perf_counter()
                fn()
                t = time.perf_counter() - t0
                cpu[name] += time.process_time() - c0
                samples[name].append(t)
    return {name: {"median_s": float(np.median(s)), "n": len(s), "cpu_per_wall": cpu[name] / sum(s),
                   "samples_s": [float(x) for x in s]} for name, s in samples.items()}


def child_main(threads: int, quick: bool, systems: list[str], pinned: bool) -> None:
    cpus = pin(threads) if pinned else sorted(os.sched_getaffinity(0))
    sz = SIZES["quick" if quick else "full"]
    tmp = os.environ["HOME"]
    out = {"threads": threads, "cpus": cpus, "pinned": pinned, "systems": {}, "rows": {}}
    objs = {}
    for name in systems:
        t0 = time.perf_counter()
        try:
            objs[name] = make_system(name, threads, tmp)
        except Exception as e:  # noqa: BLE001  (not installed, or cannot start: skipped, with why)
            why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            out["systems"][name] = {"status": "skipped", "why": why}
            print(f"  {LABELS[name]}: skipped ({why})", flush=True)
            continue
        s = objs[name]
        out["systems"][name] = {"status": "ok", "version": s.version, "threads": s.threads,
                                "startup_s": time.perf_counter() - t0}
        print(f"  {LABELS[name]} {s.version}; threads: {s.threads}", flush=True)
    d = make_data(sz)
    refs = References(d)
    for workload, mode in ROWS:
        key = row_key(workload, mode)
        print(f"  {row_label(workload, mode, sz)}", flush=True)
        res, runs = {}, {}
        for name, s in objs.items():
            rejected = []
            for variant in [None] + s.fallbacks.get(key, []):
                r = try_row(s, key, d, variant, refs, runs.get("adjit", (None, None))[1] if name != "adjit" else None)
                if variant is not None:
                    r["variant"] = variant
                if r["status"] == "ok" or "first_call_s" not in r:
                    break
                rejected.append(r)
            if r in rejected:
                rejected.remove(r)
            if rejected:
                r["rejected"] = rejected  # the default formulation ran but failed the check
            res[name] = r
            if r["status"] == "ok":
                runs[name] = (r.pop("run"), r.pop("got"))
            else:
                r.pop("run", None), r.pop("got", None)
            for x in rejected:
                x.pop("run", None), x.pop("got", None)
            shown = f"{LABELS[name]:7s}" + (f" [{r['variant']}]" if r.get("variant") else "")
            for x in r.get("rejected", []):
                print(f"    {LABELS[name]:7s} FAILED (so not timed, falling back to {r['variant']}): {x['why']}",
                      flush=True)
            if r["status"] == "ok":
                print(f"    {shown} first call {r['first_call_s'] * 1e3:9.1f} ms; {r['check']}", flush=True)
            else:
                print(f"    {shown} {r['status'].upper()}: {r['why']}", flush=True)
        times = interleaved({name: run for name, (run, _) in runs.items()}, sz["budget"], sz["rounds"])
        for name, t in times.items():
            res[name].update(t)
        print("    " + "  ".join(f"{LABELS[n]} {t['median_s'] * 1e3:.3f} ms (n={t['n']}, cpu/wall "
                                  f"{t['cpu_per_wall']:.2f})" for n, t in times.items()), flush=True)
        out["rows"][key] = res
        del runs
        gc.collect()
    print("PEERS_RESULT " + json.dumps(out), flush=True)


def try_row(s, key: str, d: dict, variant, refs: References, adjit_result) -> dict:
    """Builds (untimed), runs once (timed: the first call) and checks one system's row."""
    try:
        run, result = s.make(key, d, variant)
    except NotApplicable as e:
        return {"status": "n/a", "why": str(e)}
    try:
        t0 = time.perf_counter()
        run()
        first = time.perf_counter() - t0
        got = result()
    except Exception as e:  # noqa: BLE001  (a system that cannot compile or run this row)
        return {"status": "failed", "why": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    ok, detail = check(key, got, refs, adjit_result)
    r = {"status": "ok" if ok else "failed", "first_call_s": first, "check": detail, "run": run, "got": got}
    if not ok:
        r["why"] = "result disagrees: " + detail
    return r


# --------------------------------------------------------------------------- the parent

def run_child(threads: int, quick: bool, systems: list[str], pinned: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"peers-{threads}t-") as tmp:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(threads), ",".join(systems)]
        cmd += (["--quick"] if quick else []) + (["--pin"] if pinned else [])
        proc = subprocess.Popen(cmd, env=child_env(threads, tmp),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
        result = None
        tail = []
        for line in proc.stdout:
            if line.startswith("PEERS_RESULT "):
                result = json.loads(line[len("PEERS_RESULT "):])
            else:
                tail = (tail + [line])[-40:]
                if line.startswith("  "):  # the child's progress; the systems' own chatter only on failure
                    print(line, end="", flush=True)
        rc = proc.wait()
        dr_cache = Path(tmp, ".drjit")
        if result is not None:
            result["drjit_cache_in_tmp"] = dr_cache.exists()
    if rc != 0 or result is None:
        raise RuntimeError(f"the {threads}-thread child failed ({rc}):\n{''.join(tail)}")
    return result


def fmt_ms(v: float) -> str:
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def cell(r: dict | None, field: str = "median_s", scale: float = 1e3) -> str:
    if r is None or r["status"] == "skipped":
        return "skipped"
    if r["status"] == "n/a":
        return "n/a"
    if r["status"] == "failed":
        return "FAILED"
    if field not in r:
        return "-"
    return fmt_ms(r[field] * scale) + (" †" if r.get("variant") else "")


def shown_systems(run: dict) -> list[str]:
    return [s for s in SYSTEMS if any(c["systems"].get(s, {}).get("status") == "ok" for c in run["configs"])]


def ratio_cell(rows: dict) -> tuple[str, float | None]:
    """adjit's median / the fastest peer's, and that peer."""
    a = rows.get("adjit", {})
    peers = [(r["median_s"], s) for s, r in rows.items() if s != "adjit" and r.get("status") == "ok"]
    if a.get("status") != "ok" or not peers:
        return "-", None
    t, s = min(peers)
    v = a["median_s"] / t
    return f"{v:.2f} ({LABELS[s]})", v


def tables(run: dict) -> str:
    systems = shown_systems(run)
    sz = run["sizes"]
    out = []
    for c in run["configs"]:
        t = c["threads"]
        out += [f"### {t} thread{'s' if t > 1 else ''}: median ms", "",
                "| workload | " + " | ".join(LABELS[s] for s in systems) + " | adjit / fastest peer |",
                "|---|" + "---:|" * len(systems) + "---|"]
        for workload, mode in ROWS:
            rows = c["rows"].get(row_key(workload, mode), {})
            out.append(f"| {row_label(workload, mode, sz)} | "
                       + " | ".join(cell(rows.get(s)) for s in systems) + f" | {ratio_cell(rows)[0]} |")
        out.append("")
    c = run["configs"][0]
    plural = "s" if c["threads"] > 1 else ""
    out += [f"### First call (compile + one run at the row's size), {c['threads']} thread{plural}: ms", "",
            "| workload | " + " | ".join(LABELS[s] for s in systems) + " |", "|---|" + "---:|" * len(systems)]
    for workload, mode in ROWS:
        rows = c["rows"].get(row_key(workload, mode), {})
        out.append(f"| {row_label(workload, mode, sz)} | " + " | ".join(cell(rows.get(s), "first_call_s")
                                                                       for s in systems) + " |")
    out.append("| startup before the rows: import, init, a trivial kernel's compile | " + " | ".join(
        cell(c["systems"].get(s), "startup_s") for s in systems) + " |")
    return "\n".join(out) + "\n"


def failures(run: dict) -> list[str]:
    """One line per failed, rejected, skipped or n/a cell."""
    lines, seen = [], set()
    for c in run["configs"]:
        for name, info in c["systems"].items():
            if info["status"] != "ok" and (name, "init") not in seen:
                seen.add((name, "init"))
                lines.append(f"{LABELS[name]} skipped: {info['why']}")
        for key, rows in c["rows"].items():
            for name, r in rows.items():
                for x in r.get("rejected", []):
                    tag = (name, key, "rejected")
                    if tag not in seen:
                        seen.add(tag)
                        lines.append(f"{LABELS[name]}, {key} ({c['threads']} thread(s)): its default formulation "
                                     f"{x['why']}; timed instead: {r.get('variant')} (†)")
                if r["status"] in ("failed", "n/a"):
                    lines.append(f"{LABELS[name]}, {key} ({c['threads']} thread(s)): {r['status']}: {r['why']}")
    return lines


def thread_lines(run: dict) -> list[str]:
    out = []
    for c in run["configs"]:
        parts = [f"{LABELS[s]}: {i['threads']}" for s, i in c["systems"].items() if i["status"] == "ok"]
        where = f"pinned to CPU(s) {c['cpus']}" if c.get("pinned") else f"not pinned (CPUs {c['cpus']} allowed)"
        out.append(f"{c['threads']} thread(s), process {where}: " + "; ".join(parts))
    return out


def parallelism_line(run: dict) -> str:
    parts = []
    for c in run["configs"]:
        per = {}
        for rows in c["rows"].values():
            for s, r in rows.items():
                if "cpu_per_wall" in r:
                    per.setdefault(s, []).append(r["cpu_per_wall"])
        parts.append(f"{c['threads']} thread(s): " + ", ".join(
            f"{LABELS[s]} {min(v):.2f}-{max(v):.2f}" for s, v in per.items()))
    return "; ".join(parts)


def write_markdown(run: dict) -> None:
    versions = {}
    for c in run["configs"]:
        for s, i in c["systems"].items():
            if i["status"] == "ok":
                versions.setdefault(s, i["version"])
    sz = run["sizes"]
    md = [SECTION, "",
          f"Generated by `{run['command']}` on {run['date']} (setup: `benchmarks/peers.py`'s docstring or "
          "`benchmarks/README.md`; not part of CI).", "",
          f"- machine: {run['machine']}",
          "- versions: " + "; ".join(f"{LABELS[s]} {v}" for s, v in versions.items()),
          "- threads (each configuration a fresh process, every system set to the count explicitly; `--pin` would "
          "also pin the process to that many CPUs):"] + [f"  - {x}" for x in thread_lines(run)] + [
          f"- load average (1, 5, 15 min) at the start {run['loadavg_start']}, at the end {run['loadavg_end']} "
          "(a shared machine: other processes show up in these timings)", "",
          tables(run),
          "![adjit and its peers on the CPU](peers.png)", "",
          "How to read it:", "",
          "- Each cell is the median of interleaved calls (one warm-up call, then "
          f"{sz['rounds']} rounds in which every system runs about {sz['budget'] / sz['rounds']:.1g} s of calls "
          "in turn). A call includes waiting for the result (Dr.Jit's LLVM kernels run asynchronously: "
          "`dr.sync_thread()`; JAX: `block_until_ready()`; Taichi: `ti.sync()`). \"adjit / fastest peer\" is "
          "adjit's median over the fastest peer's (below 1: adjit is faster).",
          "- \"gradient\" rows time a whole gradient evaluation from the inputs: the forward and the backward "
          "pass, outputs and gradients both computed (adjit and Warp: the previous tape's `zero()`, a launch "
          "recorded on a new `Tape`, `tape.backward(grads={outputs: ones})`; Dr.Jit: `dr.enable_grad`, the "
          "forward, `dr.backward`; JAX: one jitted function returning the outputs and `jax.vjp`'s pullback "
          "of ones; Taichi: the kernel, its gradients' `fill`s, then `kernel.grad()`). `bench.py` times "
          "adjit's and Warp's `tape.backward()` alone instead.",
          "- Every result was checked before timing: against a float64 numpy reference (saxpy and the forward "
          "rows elementwise, the length_cross gradient against its analytic float64 gradient, the springs "
          f"gradient against float64 central differences on {FD_N} particles, per-particle error at most "
          f"{FD_TOL:g}; Mandelbrot: at most {100 * MANDEL_TOL:g} % of the escape counts may differ from the "
          "float64 ones, since float32 rounding decides pixels near the set's boundary), and against "
          "adjit's result. A result that disagrees is FAILED and not timed.",
          "- \"First call\" is the first call of that row in a process with empty compile caches: the compile "
          "of whatever that row needs and the system had not compiled yet (Warp compiles a kernel's adjoint "
          "with its forward, so its gradient rows find it compiled; JAX compiles the whole value-and-gradient "
          "function; adjit compiles the adjoint at the first backward) plus one run at full size. Startup "
          "(import, `ti.init`, `wp.init`, JAX's CPU client, and the compile of one trivial kernel, which "
          "takes the one-time costs of a system's first compile) is its own row.",
          "- CPU time / wall time during each system's timed calls (how many cores it kept busy), per row, "
          "lowest-highest: " + parallelism_line(run) + ". Warp's CPU launches run on one thread in any "
          "configuration.",
          "", "The formulations (`benchmarks/peers.py`; adjit and Warp run the same kernels of "
          "`benchmarks/kernels.py`):", "",
          "- Dr.Jit: `drjit.llvm.ad` types (SoA: `Array3f`, `Matrix3f`), loops as symbolic `dr.while_loop` "
          "(the trip count a runtime value through `dr.opaque`; reverse mode needs `max_iterations`, set to "
          "the trip count), the Mandelbrot loop with its data-dependent condition; the Python that traces "
          "each call is part of its time.",
          "- JAX: `jax.jit`, vec3 data as (3, n) arrays (XLA's fused loops then read each component "
          "contiguously; `jnp.cross` on (n, 3) measured 5-10x slower), springs with `lax.fori_loop` over a "
          "*static* trip count (a traced one lowers to `while_loop`, which JAX cannot differentiate in "
          "reverse mode: JAX compiles per trip count), Mandelbrot with `lax.while_loop` over the whole grid "
          "(masked updates until no pixel is active), saxpy with `donate_argnums` on y (its in-place update).",
          "- Taichi: `ti.field`s and `@ti.kernel`s with `ti.template()` arguments, the same per-thread code "
          "as the adjit/Warp kernels (runtime `range(n_iter)`, `while` loop).",
          "- † springs gradient of Warp and Taichi: their gradient of the single kernel with the runtime "
          "loop fails the check (below), so the time shown is each system's documented way to "
          "differentiate a simulation instead: one launch of the loop body per step (`springs_step`), the "
          "state of every step kept in arrays (Warp: 2 x 100 arrays on a `Tape`; Taichi: fields indexed "
          "by step, the step kernel's `.grad()` run in reverse order), checked like the others. Warp's "
          "adjoint of a dynamic loop replays the body on the loop-carried variables' final values (see "
          "the Warp notes above); Taichi's reverse pass of the runtime loop is right at n_iter = 1 and "
          "wrong from 2 on (on a small case; compiling it, Taichi warns \"Loading variable ... before "
          "anything is stored to it\" in `R @ p`, R being loaded before the loop).",
          "- Vectorization: Dr.Jit's LLVM backend compiles every kernel for packets of elements (8 float "
          "lanes with AVX2, this machine's widest) and runs loops with per-lane masks; adjit's CPU kernels "
          "leave vectorization to LLVM's loop vectorizer over the thread loop, which handles straight-line "
          "kernels (saxpy, length_cross) but apparently not those with an inner runtime or data-dependent "
          "loop (springs, Mandelbrot: there adjit's times equal Warp's and Taichi's, which run one element "
          "at a time). JAX's arrays are SIMD-wide by construction, but its Mandelbrot runs "
          "every pixel for as many iterations as the slowest (masked), and its gradients through "
          "`fori_loop` store every step's residuals.", ""]
    summary = []
    for c in run["configs"]:
        wins, losses = [], []
        for workload, mode in ROWS:
            txt, v = ratio_cell(c["rows"].get(row_key(workload, mode), {}))
            if v is not None:
                (wins if v < 1 else losses).append(f"{workload} {mode} ({txt})")
        summary.append(f"{c['threads']} thread(s): adjit fastest in {', '.join(wins) or 'none'}; a peer faster in "
                       f"{', '.join(losses) or 'none'}")
    md += ["In short (adjit / fastest peer): " + "; ".join(summary) + ".", ""]
    loads = [r["cpu_per_wall"] for c in run["configs"] if c["threads"] == 1 for rows in c["rows"].values()
             for r in rows.values() if "cpu_per_wall" in r]
    if loads and float(np.median(loads)) < 0.8:
        md += [f"This run shared the machine with other work: in the 1-thread process a system kept a median "
               f"{np.median(loads):.2f} of a core busy while its calls ran (1.0 on an idle machine), every "
               "system alike since they took turns; a multi-threaded call waits for its slowest thread, so "
               "the tables with more threads suffer most (compare Dr.Jit's and JAX's rows across them).", ""]
    fl = failures(run)
    if fl:
        md += ["Failed, replaced or skipped:", ""] + [f"- {x}" for x in fl] + [""]
    text = "\n".join(md)
    old = DOC_MD.read_text() if DOC_MD.exists() else "# Benchmarks\n"
    if SECTION in old:
        head = old[:old.index(SECTION)].rstrip("\n")
        rest = old[old.index(SECTION) + len(SECTION):]
        nxt = rest.find("\n## ")
        tail = rest[nxt:] if nxt >= 0 else ""
    else:
        head, tail = old.rstrip("\n"), ""
    DOC_MD.write_text(head + "\n\n" + text.rstrip("\n") + "\n" + tail)


def plot(run: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401
    systems = shown_systems(run)
    sz = run["sizes"]
    colors = {"adjit": "tab:green", "drjit": "tab:blue", "jax": "tab:orange", "taichi": "tab:purple",
              "warp": "tab:gray"}
    fig, axes = plt.subplots(1, len(run["configs"]), figsize=(6.5 * len(run["configs"]), 5.5), sharey=True,
                             squeeze=False)
    labels = [row_label(w, m, sz).replace(": ", "\n") for w, m in ROWS]
    h = 0.8 / len(systems)
    for ax, c in zip(axes[0], run["configs"]):
        for j, s in enumerate(systems):
            for i, (w, m) in enumerate(ROWS):
                rows = c["rows"].get(row_key(w, m), {})
                r, a = rows.get(s), rows.get("adjit")
                y = i + (j - (len(systems) - 1) / 2) * h
                if r and r.get("status") == "ok" and a and a.get("status") == "ok":
                    v = r["median_s"] / a["median_s"]
                    ax.barh(y, v, height=h, color=colors[s], label=LABELS[s] if i == 0 else None,
                            hatch="//" if r.get("variant") else None)
                    ax.text(v, y, f" {v:.2g}", va="center", fontsize=6)
                else:
                    txt = "skipped" if r is None else r["status"].upper()
                    ax.text(1.0, y, f" {LABELS[s]}: {txt}", va="center", fontsize=6, color="red")
        ax.set_xscale("log")
        ticks = [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20]
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([f"{t:g}" for t in ticks]))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{c['threads']} thread{'s' if c['threads'] > 1 else ''}")
        ax.set_xlabel("time / adjit's time (log; > 1: slower than adjit)")
        ax.set_yticks(range(len(ROWS)), labels, fontsize=7)
    axes[0][0].invert_yaxis()  # shared: once
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, loc="lower center", ncol=len(systems))
    fig.suptitle("adjit and its peers on the CPU (medians; hatched: per-step formulation, see docs)", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=2, metavar=("THREADS", "SYSTEMS"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="tiny sizes and budgets, no files written (a smoke run)")
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts, one child process each (default: 1 and all cores)")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset of " + ",".join(SYSTEMS))
    ap.add_argument("--pin", action="store_true",
                    help="also pin each child process to THREADS CPUs (os.sched_setaffinity); on a shared machine "
                         "that ties a 1-thread run to one busy core, so by default only the systems' own thread "
                         "settings apply (their CPU time / wall time is reported as a check)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/ and results/ alone")
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite the docs section and the plot from results/peers_last_run.json")
    opts = ap.parse_args()
    if opts.render_only:
        run = json.loads(LAST_RUN_JSON.read_text())
        write_markdown(run)
        plot(run, DOC_PNG)
        print(tables(run))
        return
    if opts.child:
        child_main(int(opts.child[0]), opts.quick, opts.child[1].split(","), opts.pin)
        return
    systems = [s for s in opts.systems.split(",") if s]
    bad = [s for s in systems if s not in SYSTEMS]
    if bad or "adjit" not in systems:
        raise SystemExit(f"--systems: choose among {','.join(SYSTEMS)}, adjit included (got {opts.systems})")
    ncpu = len(os.sched_getaffinity(0))
    threads = [int(t) for t in opts.threads.split(",")] if opts.threads else sorted({1, ncpu})
    command = "python benchmarks/peers.py" + "".join(f" {a}" for a in sys.argv[1:])
    run = {"command": command, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": bench.machine(), "adjit": bench.adjit_revision(), "loadavg_start": bench.loadavg(),
           "sizes": SIZES["quick" if opts.quick else "full"], "configs": []}
    print(f"machine: {run['machine']}", flush=True)
    for t in threads:
        print(f"{t} thread(s): a fresh process" + (f" pinned to {t} CPU(s)" if opts.pin else ""), flush=True)
        run["configs"].append(run_child(t, opts.quick, systems, opts.pin))
    run["loadavg_end"] = bench.loadavg()
    print()
    print(tables(run))
    for line in failures(run):
        print("note: " + line)
    print("threads: " + " | ".join(thread_lines(run)))
    if opts.quick or opts.no_write:
        return
    LAST_RUN_JSON.parent.mkdir(exist_ok=True)
    LAST_RUN_JSON.write_text(json.dumps(run, indent=1) + "\n")
    write_markdown(run)
    plot(run, DOC_PNG)
    print(f"wrote {LAST_RUN_JSON.relative_to(ROOT)}, {DOC_MD.relative_to(ROOT)} ({SECTION[3:]}) and "
          f"{DOC_PNG.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
