"""Host cost of one small launch (issues 24 and 27): the best of 5 rounds of
20,000 back-to-back ``dim=1`` launches, in microseconds per launch.

- CPU: a kernel with two arrays, plainly (the launch plan's path) and with a
  launch observer open (every launch then goes through the general path);
- CUDA (where ``cuda:0`` is there): a kernel with one array, beside a CuPy
  ``RawKernel`` doing the same (where cupy is installed), in the same run.

    python benchmarks/launch_overhead.py [--launches 20000] [--rounds 5]

With ``ADJIT_CUDA_DRIVER`` pointing at the stand-in driver
(cpp/runtime/test/fake_cuda_driver.cpp), the CUDA figure is the Python cost
of the launch path (the stand-in's launch does nothing). Prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import adjit as wp


@wp.kernel
def copy2(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i]


@wp.kernel
def noop(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i]


def best_us(launch, launches: int, rounds: int, sync=wp.synchronize) -> float:
    """The best of ``rounds`` rounds of ``launches`` calls of ``launch``, per call."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(launches):
            launch()
        sync()
        best = min(best, (time.perf_counter() - start) / launches * 1e6)
    return best


def cpu_figures(launches: int, rounds: int) -> dict:
    x, y = wp.zeros(4, dtype=float), wp.zeros(4, dtype=float)
    wp.launch(copy2, dim=1, inputs=[x, y])  # (compiles; the next launch makes the plan)
    plain = best_us(lambda: wp.launch(copy2, dim=1, inputs=[x, y]), launches, rounds)
    with wp.observe_launches(after=lambda launch: None):
        observed = best_us(lambda: wp.launch(copy2, dim=1, inputs=[x, y]), launches, rounds)
    return {"copy2_us": round(plain, 2), "copy2_observed_us": round(observed, 2)}


def cuda_figures(launches: int, rounds: int) -> dict:
    x = wp.zeros(1, dtype=float, device="cuda:0")
    wp.launch(noop, dim=1, inputs=[x])
    wp.synchronize()
    out = {"driver": os.environ.get("ADJIT_CUDA_DRIVER") or "libcuda",
           "noop_us": round(best_us(lambda: wp.launch(noop, dim=1, inputs=[x]), launches, rounds), 2)}
    try:
        import cupy
    except ImportError:
        out["cupy"] = "not installed"
        return out
    kernel = cupy.RawKernel(r'extern "C" __global__ void noop(float* x) { x[0] = x[0]; }', "noop")
    cx = cupy.zeros(1, cupy.float32)
    kernel((1,), (1,), (cx,))
    sync = cupy.cuda.runtime.deviceSynchronize
    sync()
    out["cupy_rawkernel_us"] = round(best_us(lambda: kernel((1,), (1,), (cx,)), launches, rounds, sync), 2)
    out["adjit_over_cupy"] = round(out["noop_us"] / out["cupy_rawkernel_us"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    result = {"launches": args.launches, "rounds": args.rounds, "cpu": cpu_figures(args.launches, args.rounds)}
    result["cpu"]["observed_over_plain"] = round(result["cpu"]["copy2_observed_us"] / result["cpu"]["copy2_us"], 2)
    if wp.is_cuda_available():
        result["cuda"] = cuda_figures(args.launches, args.rounds)
    else:
        result["cuda"] = "no CUDA device"
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
