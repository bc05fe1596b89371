"""Transcendental math on the CPU: adjit's inline polynomials (fast_math, the
default) against libm calls (fast_math=False), Warp's CPU backend, Dr.Jit's
LLVM backend and JAX ``jit``, side by side in one run.

Three workloads, forward and gradient (d sum(y) / d x), float32:
- ``pointwise``: y = tanh(x) exp(-x^2/4) + log(1 + x^2) - erf(x/2) on 4M values;
- ``waves``: y = sin(x) cos(2x) + sin(3x) on 4M values in [-30, 30];
- ``recurrence``: 32 steps of v = tanh(a v + x) + 0.1 log(1 + v^2) exp(-v^2)
  per thread, 200k threads (a loop: adjit runs it as a SIMD program).
Every system's result is checked against a float64 numpy reference first.

    /work/peers/bin/python benchmarks/fast_math.py [--quick] [--threads N]

Systems that are not installed are skipped (pip install warp-lang drjit
"jax[cpu]"). Prints a table of medians and adjit's ratio to each.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

import adjit

try:
    import warp
except ImportError:
    warp = None

STEPS = 32
A = 0.9


def reference(workload: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 values and d sum(y) / dx (central differences; waves: exact, at
    the float32 arguments 2x and 3x the kernels compute)."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    if workload == "waves":
        x1 = x.astype(np.float64)
        x2, x3 = (np.float32(2) * x).astype(np.float64), (np.float32(3) * x).astype(np.float64)
        return (np.sin(x1) * np.cos(x2) + np.sin(x3),
                np.cos(x1) * np.cos(x2) - 2 * np.sin(x1) * np.sin(x2) + 3 * np.cos(x3))

    def f(x):
        if workload == "pointwise":
            return np.tanh(x) * np.exp(-x * x / 4) + np.log(1 + x * x) - erf(x / 2)
        v = np.zeros_like(x)
        for _ in range(STEPS):
            v = np.tanh(A * v + x) + 0.1 * np.log(1 + v * v) * np.exp(-v * v)
        return v

    x = x.astype(np.float64)
    h = 1e-6
    return f(x), (f(x + h) - f(x - h)) / (2 * h)


def adjit_system(fast_math: bool):
    wp = adjit
    wp.set_module_options({"fast_math": fast_math}, module=f"fast_math_bench_{fast_math}")

    @wp.kernel(module=f"fast_math_bench_{fast_math}")
    def pointwise(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.tanh(v) * wp.exp(-v * v * 0.25) + wp.log(1.0 + v * v) - wp.erf(v * 0.5)

    @wp.kernel(module=f"fast_math_bench_{fast_math}")
    def waves(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.sin(v) * wp.cos(2.0 * v) + wp.sin(3.0 * v)

    @wp.kernel(module=f"fast_math_bench_{fast_math}")
    def recurrence(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = wp.tid()
        v = float(0.0)
        for _ in range(32):
            v = wp.tanh(0.9 * v + x[i]) + 0.1 * wp.log(1.0 + v * v) * wp.exp(-v * v)
        y[i] = v

    kernels = {"pointwise": pointwise, "waves": waves, "recurrence": recurrence}

    def make(workload, mode, x_np):
        k = kernels[workload]
        x = wp.array(x_np, dtype=float, requires_grad=True)
        y = wp.zeros(len(x_np), dtype=float, requires_grad=True)
        ones = wp.array(np.ones(len(x_np), np.float32))
        if mode == "forward":
            def run():
                wp.launch(k, len(x_np), inputs=[x, y])
                return y.numpy()
        else:
            def run():
                x.grad.zero_()
                wp.launch(k, len(x_np), inputs=[x, y], adj_inputs=[x.grad, ones],
                          adjoint=True)
                return x.grad.numpy()
        return run

    return make


def warp_system():
    if warp is None:
        raise ImportError("warp is not installed")
    wp = warp
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def pointwise(x: warp.array(dtype=float), y: warp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.tanh(v) * wp.exp(-v * v * 0.25) + wp.log(1.0 + v * v) - wp.erf(v * 0.5)

    @wp.kernel
    def waves(x: warp.array(dtype=float), y: warp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.sin(v) * wp.cos(2.0 * v) + wp.sin(3.0 * v)

    @wp.kernel
    def recurrence(x: warp.array(dtype=float), y: warp.array(dtype=float)):
        i = wp.tid()
        v = float(0.0)
        for _ in range(32):
            v = wp.tanh(0.9 * v + x[i]) + 0.1 * wp.log(1.0 + v * v) * wp.exp(-v * v)
        y[i] = v

    kernels = {"pointwise": pointwise, "waves": waves, "recurrence": recurrence}

    def make(workload, mode, x_np):
        k = kernels[workload]
        x = wp.array(x_np, dtype=float, requires_grad=True, device="cpu")
        y = wp.zeros(len(x_np), dtype=float, requires_grad=True, device="cpu")
        ones = wp.array(np.ones(len(x_np), np.float32), device="cpu")
        if mode == "forward":
            def run():
                wp.launch(k, len(x_np), inputs=[x, y], device="cpu")
                return y.numpy()
        else:
            def run():
                x.grad.zero_()
                wp.launch(k, len(x_np), inputs=[x, y], adj_inputs=[x.grad, ones],
                          adjoint=True, device="cpu")
                return x.grad.numpy()
        return run

    return make


def drjit_system():
    import drjit as dr
    from drjit.llvm.ad import Float

    def f(workload, x):
        if workload == "pointwise":
            return dr.tanh(x) * dr.exp(-x * x * 0.25) + dr.log(1.0 + x * x) - dr.erf(x * 0.5)
        if workload == "waves":
            return dr.sin(x) * dr.cos(2.0 * x) + dr.sin(3.0 * x)
        v = dr.zeros(Float, dr.width(x))
        for _ in range(STEPS):  # (traced: one fused kernel of 32 steps)
            v = dr.tanh(A * v + x) + 0.1 * dr.log(1.0 + v * v) * dr.exp(-v * v)
        return v

    def make(workload, mode, x_np):
        if mode == "forward":
            def run():
                x = Float(x_np)
                y = f(workload, x)
                dr.eval(y)
                return y.numpy()
        else:
            def run():
                x = Float(x_np)
                dr.enable_grad(x)
                y = f(workload, x)
                dr.backward(dr.sum(y))
                g = dr.grad(x)
                dr.eval(g)
                return g.numpy()
        return run

    return make


def jax_system():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")

    def f(workload, x):
        if workload == "pointwise":
            return jnp.tanh(x) * jnp.exp(-x * x * 0.25) + jnp.log(1.0 + x * x) - jax.scipy.special.erf(x * 0.5)
        if workload == "waves":
            return jnp.sin(x) * jnp.cos(2.0 * x) + jnp.sin(3.0 * x)

        def step(_, v):
            return jnp.tanh(A * v + x) + 0.1 * jnp.log(1.0 + v * v) * jnp.exp(-v * v)
        return jax.lax.fori_loop(0, STEPS, step, jnp.zeros_like(x))

    def make(workload, mode, x_np):
        x = jnp.asarray(x_np)
        if mode == "forward":
            fn = jax.jit(lambda x: f(workload, x))
        else:
            fn = jax.jit(jax.grad(lambda x: jnp.sum(f(workload, x))))

        def run():
            return np.asarray(fn(x).block_until_ready())
        return run

    return make


SYSTEMS = {"adjit": lambda: adjit_system(True), "adjit libm": lambda: adjit_system(False), "warp": warp_system,
           "drjit": drjit_system, "jax": jax_system}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sizes = {"pointwise": 40_000 if args.quick else 4_000_000, "waves": 40_000 if args.quick else 4_000_000,
             "recurrence": 2_000 if args.quick else 200_000}
    rng = np.random.default_rng(0)
    makers = {}
    for name, factory in SYSTEMS.items():
        try:
            makers[name] = factory()
        except ImportError as e:
            print(f"{name}: skipped ({e})")
    print(f"threads: {os.cpu_count()} cores; median of {args.rounds} interleaved rounds")
    for workload, n in sizes.items():
        x = rng.uniform(-30 if workload == "waves" else -3, 30 if workload == "waves" else 3, n).astype(np.float32)
        values, grads = reference(workload, x)
        for mode in ("forward", "gradient"):
            expected = values if mode == "forward" else grads
            runs, times, first = {}, {}, {}
            for name, make in makers.items():
                run = make(workload, mode, x)
                t = time.perf_counter()
                got = run()
                first[name] = time.perf_counter() - t
                err = np.max(np.abs(got - expected) / (1e-3 + np.abs(expected)))
                if not err < 1e-3:
                    print(f"  {name} {workload} {mode}: wrong result (max relative error {err:.2e}); not timed")
                    continue
                runs[name], times[name] = run, []
            for _ in range(args.rounds):
                for name, run in runs.items():
                    t = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - t)
            medians = {name: statistics.median(ts) for name, ts in times.items()}
            line = f"{workload:10s} {mode:8s} n={n:>9,}"
            for name, m in medians.items():
                ratio = f" ({medians['adjit'] / m:.2f}x)" if "adjit" in medians and name != "adjit" else ""
                line += f" | {name} {m * 1e3:8.2f} ms{ratio}"
            print(line, flush=True)
            print("  first calls: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in first.items()))
    print("(xN): adjit's median / that system's: below 1, adjit is faster")


if __name__ == "__main__":
    sys.exit(main())
