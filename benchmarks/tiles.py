"""Tiles on the CPU: adjit's tile kernels against numpy (OpenBLAS), Warp's
CPU tiles and PyTorch, side by side in one run.

Workloads (float32), each result checked against a float64 numpy reference
before it is timed:
- ``gemm``: C = A B, N x N x N (1024: the issue's target; --quick 256), one
  block per TILE x TILE tile of C, looping over K in TILE steps
  (``tile_load`` / ``tile_matmul`` / ``tile_store``);
- ``sum``: the sum of N floats (100M; --quick 10M), one block per TILE
  elements (``tile_load`` / ``tile_sum`` / ``tile_atomic_add``), against
  copying the same array (the bandwidth bound);
- ``mlp``: y = tanh(W x) for a batch of 4096 inputs of 16 features, forward
  and backward (d sum(y) / dW), against PyTorch.

    /work/peers/bin/python benchmarks/tiles.py [--quick] [--tile 16]

Compile times are reported separately (the first launch of each kernel).
Systems that are not installed are skipped. Prints medians and ratios.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import adjit

try:
    import warp
except ImportError:
    warp = None
try:
    import torch
except ImportError:
    torch = None


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def first_call(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def gemm_kernel(wp, tile: int):
    @wp.kernel
    def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        i, j = wp.tid()
        s = wp.tile_zeros(shape=(tile, tile), dtype=float)
        for k in range(a.shape[1] // tile):
            x = wp.tile_load(a, shape=(tile, tile), offset=(i * tile, k * tile))
            y = wp.tile_load(b, shape=(tile, tile), offset=(k * tile, j * tile))
            wp.tile_matmul(x, y, s)
        wp.tile_store(c, s, offset=(i * tile, j * tile))
    return gemm


def sum_kernel(wp, tile: int):
    @wp.kernel
    def tiled_sum(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=tile, offset=i * tile)
        wp.tile_atomic_add(out, wp.tile_sum(t), offset=0)
    return tiled_sum


def mlp_kernel(wp, features: int, batch_tile: int):
    @wp.kernel
    def layer(w: wp.array2d(dtype=float), x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
        i = wp.tid()
        wt = wp.tile_load(w, shape=(features, features), offset=(0, 0))
        xt = wp.tile_load(x, shape=(features, batch_tile), offset=(0, i * batch_tile))
        wp.tile_store(y, wp.tile_map(wp.tanh, wp.tile_matmul(wt, xt)), offset=(0, i * batch_tile))
    return layer


def bench_gemm(n: int, tile: int, repeat: int, rows: list):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    ref = a_np.astype(np.float64) @ b_np.astype(np.float64)
    tol = 1e-3 * np.sqrt(n)
    results = {}
    kernel = gemm_kernel(adjit, tile)
    a, b, c = adjit.array(a_np), adjit.array(b_np), adjit.zeros((n, n), dtype=float)

    def run_adjit():
        adjit.launch_tiled(kernel, dim=(n // tile, n // tile), inputs=[a, b, c], block_dim=64)
    compile_s = first_call(run_adjit)
    assert np.abs(c.numpy() - ref).max() < tol, "adjit gemm is wrong"
    results["adjit"] = timed(run_adjit, repeat)
    rows.append(("gemm", "adjit compile (s)", compile_s))
    results["numpy"] = timed(lambda: a_np @ b_np, repeat)
    if torch is not None:
        ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
        results["torch"] = timed(lambda: ta @ tb, repeat)
    if warp is not None:
        wk = gemm_kernel(warp, tile)
        wa, wb, wc = (warp.array(a_np, device="cpu"), warp.array(b_np, device="cpu"),
                      warp.zeros((n, n), dtype=float, device="cpu"))

        def run_warp():
            warp.launch_tiled(wk, dim=(n // tile, n // tile), inputs=[wa, wb, wc], block_dim=64, device="cpu")
            warp.synchronize_device("cpu")
        rows.append(("gemm", "warp compile (s)", first_call(run_warp)))
        assert np.abs(wc.numpy() - ref).max() < tol, "warp gemm is wrong"
        results["warp"] = timed(run_warp, max(1, repeat // 3))
    return results


def bench_sum(n: int, tile: int, repeat: int, rows: list):
    x_np = np.random.default_rng(1).random(n, dtype=np.float32)
    ref = x_np.astype(np.float64).sum()
    results = {}
    kernel = sum_kernel(adjit, tile)
    x, out = adjit.array(x_np), adjit.zeros(1, dtype=float)

    def run_adjit():
        out.zero_()
        adjit.launch_tiled(kernel, dim=n // tile, inputs=[x, out], block_dim=64)
    compile_s = first_call(run_adjit)
    assert abs(out.numpy()[0] - ref) < 1e-4 * ref, "adjit sum is wrong"
    results["adjit"] = timed(run_adjit, repeat)
    rows.append(("sum", "adjit compile (s)", compile_s))
    results["numpy"] = timed(lambda: x_np.sum(), repeat)
    dst = np.empty_like(x_np)
    results["copy (bandwidth)"] = timed(lambda: np.copyto(dst, x_np), repeat)
    if warp is not None:
        wk = sum_kernel(warp, tile)
        wx, wout = warp.array(x_np, device="cpu"), warp.zeros(1, dtype=float, device="cpu")

        def run_warp():
            wout.zero_()
            warp.launch_tiled(wk, dim=n // tile, inputs=[wx, wout], block_dim=64, device="cpu")
            warp.synchronize_device("cpu")
        rows.append(("sum", "warp compile (s)", first_call(run_warp)))
        assert abs(wout.numpy()[0] - ref) < 1e-3 * ref, "warp sum is wrong"
        results["warp"] = timed(run_warp, repeat)
    return results


def bench_mlp(batch: int, repeat: int, rows: list):
    features, batch_tile = 16, 16
    rng = np.random.default_rng(2)
    w_np = (rng.standard_normal((features, features)) / 4).astype(np.float32)
    x_np = rng.standard_normal((features, batch)).astype(np.float32)
    pre = w_np.astype(np.float64) @ x_np.astype(np.float64)
    ref_y, ref_dw = np.tanh(pre), (1 - np.tanh(pre) ** 2) @ x_np.T.astype(np.float64)
    results = {}
    kernel = mlp_kernel(adjit, features, batch_tile)
    w = adjit.array(w_np, requires_grad=True)
    x = adjit.array(x_np)
    y = adjit.zeros((features, batch), dtype=float, requires_grad=True)

    def run_adjit():
        tape = adjit.Tape()
        with tape:
            adjit.launch_tiled(kernel, dim=batch // batch_tile, inputs=[w, x, y], block_dim=64)
        y.grad.fill_(1.0)
        tape.backward()
        return tape
    compile_s = first_call(run_adjit)
    w.grad.zero_()
    run_adjit()
    assert np.abs(y.numpy() - ref_y).max() < 1e-4 and np.abs(w.grad.numpy() - ref_dw).max() < 1e-2, \
        "adjit mlp is wrong"

    def step():
        w.grad.zero_()
        run_adjit()
    results["adjit"] = timed(step, repeat)
    rows.append(("mlp", "adjit compile fwd+bwd (s)", compile_s))
    if torch is not None:
        tw = torch.from_numpy(w_np).requires_grad_(True)
        tx = torch.from_numpy(x_np)

        def run_torch():
            tw.grad = None
            torch.tanh(tw @ tx).sum().backward()
        run_torch()
        assert np.abs(tw.grad.numpy() - ref_dw).max() < 1e-2, "torch mlp is wrong"
        results["torch"] = timed(run_torch, repeat)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tile", type=int, default=16)
    args = parser.parse_args()
    n_gemm, n_sum, repeat = (256, 10_000_000, 3) if args.quick else (1024, 100_000_000, 5)
    rows = []
    table = [("gemm", bench_gemm(n_gemm, args.tile, repeat, rows)),
             ("sum", bench_sum(n_sum, 256, repeat, rows)),
             ("mlp", bench_mlp(4096, repeat, rows))]
    print(f"# tiles, float32, {adjit.get_device('cpu')} ({'quick' if args.quick else 'full'}): gemm "
          f"{n_gemm}^3 with {args.tile}x{args.tile} tiles, sum of {n_sum:,}, mlp 16x16 layer on 4096")
    print(f"{'workload':10} {'system':18} {'median (ms)':>12} {'adjit / it':>11}")
    for name, results in table:
        for system, t in results.items():
            ratio = results["adjit"] / t
            print(f"{name:10} {system:18} {t * 1e3:12.2f} {ratio:11.2f}")
    for name, what, seconds in rows:
        print(f"{name:10} {what:30} {seconds:8.2f}")


if __name__ == "__main__":
    main()
