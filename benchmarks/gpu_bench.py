"""GPU benchmarks through adjit's own runtime (adjit.launch on a CUDA
device), side by side with the anchors in one run: a device-to-device copy,
PyTorch eager and CuPy where installed.

    python benchmarks/gpu_bench.py [--out results.json]

Times are CUDA-event medians over repeats after a warm-up (launch overhead:
host wall time per launch of 20,000 back-to-back dim=1 launches; graph
replay: host time per launch of 100 dim=1 launches issued eagerly vs replayed
from a CUDA graph). On the GPU machine the kernels come precompiled
(tools/gpu_device_check.py).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import adjit as wp
from kernels import springs  # noqa: E402  (benchmarks/ is on the path: this script's folder)


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def length_cross(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.length(wp.cross(a[i], b[i])) * a[i]


@wp.kernel
def scatter_add(values: wp.array(dtype=float), at: wp.array(dtype=int), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, at[i], values[i])


@wp.kernel
def noop(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i]


def _event_ms(run, device: str, repeat: int = 20) -> float:
    """Median milliseconds of ``run()`` on the device's stream (CUDA events)."""
    run()
    wp.synchronize()
    times = []
    stream = wp.get_stream(device)
    for _ in range(repeat):
        start, end = wp.Event(device, enable_timing=True), wp.Event(device, enable_timing=True)
        stream.record_event(start)
        run()
        stream.record_event(end)
        times.append(wp.get_event_elapsed_time(start, end))
    return float(np.median(times))


def bench_saxpy(device: str, out: dict, n: int = 100_000_000) -> None:
    x = wp.array(np.ones(n, np.float32), device=device)
    y = wp.zeros(n, dtype=float, device=device)
    copy_dst = wp.zeros(n, dtype=float, device=device)
    saxpy_ms = _event_ms(lambda: wp.launch(saxpy, dim=n, inputs=[2.0, x, y]), device)
    copy_ms = _event_ms(lambda: wp.copy(copy_dst, x), device)
    saxpy_gbs = 3 * 4 * n / saxpy_ms / 1e6
    copy_gbs = 2 * 4 * n / copy_ms / 1e6
    result = {"n": n, "adjit_ms": saxpy_ms, "adjit_GBps": saxpy_gbs, "copy_ms": copy_ms,
              "copy_GBps": copy_gbs, "fraction_of_copy": saxpy_gbs / copy_gbs}
    # the block size's effect, and what CuPy's own saxpy reaches on the same card
    result["adjit_ms_by_block_dim"] = {
        block: _event_ms(lambda: wp.launch(saxpy, dim=n, inputs=[2.0, x, y], block_dim=block), device)
        for block in (128, 512, 1024)}
    try:
        import cupy
        cx, cy = cupy.ones(n, cupy.float32), cupy.zeros(n, cupy.float32)
        kernel = cupy.ElementwiseKernel("float32 a, float32 x", "float32 y", "y = a * x + y", "saxpy")
        kernel(cupy.float32(2.0), cx, cy)
        cupy.cuda.runtime.deviceSynchronize()
        times = []
        for _ in range(20):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            kernel(cupy.float32(2.0), cx, cy)
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end))
        cupy_ms = float(np.median(times))
        result["cupy_elementwise_ms"] = cupy_ms
        result["cupy_fraction_of_copy"] = 3 * 4 * n / cupy_ms / 1e6 / copy_gbs
    except ImportError:
        result["cupy"] = "not installed"
    out["saxpy"] = result


def bench_length_cross(device: str, out: dict, n: int = 10_000_000) -> None:
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal((n, 3)).astype(np.float32)
    a, b = wp.array(a_np, dtype=wp.vec3, device=device), wp.array(b_np, dtype=wp.vec3, device=device)
    res = wp.zeros(n, dtype=wp.vec3, device=device)
    ga, gb = wp.zeros_like(a), wp.zeros_like(b)
    seed = wp.ones(n, dtype=wp.vec3, device=device)
    fwd = _event_ms(lambda: wp.launch(length_cross, dim=n, inputs=[a, b, res]), device)
    bwd = _event_ms(lambda: wp.launch(length_cross, dim=n, inputs=[a, b, res], adj_inputs=[ga, gb, seed],
                                      adjoint=True), device)
    result = {"n": n, "adjit_forward_ms": fwd, "adjit_backward_ms": bwd}
    try:
        import torch
        ta = torch.as_tensor(a_np, device=device).requires_grad_()
        tb = torch.as_tensor(b_np, device=device).requires_grad_()

        def torch_forward():
            return torch.linalg.norm(torch.cross(ta, tb, dim=1), dim=1, keepdim=True) * ta

        def torch_ms(run, repeat=20):
            run()
            torch.cuda.synchronize()
            times = []
            for _ in range(repeat):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                run()
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e))
            return float(np.median(times))

        with torch.no_grad():
            result["torch_forward_ms"] = torch_ms(torch_forward)
        ones = torch.ones(n, 3, device=device)
        result["torch_backward_ms"] = torch_ms(lambda: torch.autograd.grad(torch_forward(), (ta, tb), ones))
        # the gradients agree with PyTorch's (a fresh seed: the adjoint of the store to `res` consumes it)
        ga.zero_()
        gb.zero_()
        wp.launch(length_cross, dim=n, inputs=[a, b, res], adj_inputs=[ga, gb, wp.ones(n, dtype=wp.vec3, device=device)],
                  adjoint=True)
        tga, tgb = torch.autograd.grad(torch_forward(), (ta, tb), ones)
        result["max_rel_grad_difference"] = float(max(
            np.max(np.abs(ga.numpy() - tga.cpu().numpy())) / np.max(np.abs(tga.cpu().numpy())),
            np.max(np.abs(gb.numpy() - tgb.cpu().numpy())) / np.max(np.abs(tgb.cpu().numpy()))))
    except ImportError:
        result["torch"] = "not installed"
    out["length_cross"] = result


def bench_springs(device: str, out: dict, n: int = 1_000_000, steps: int = 100) -> None:
    """springs (kernels.py: vec3/mat33 math, branches, a runtime loop of
    ``steps`` steps): forward, and its adjoint (the loop reversed from
    checkpoints, kernels.py's exact loop gradient)."""
    from bench import springs_inputs
    x_np, v_np, rot_np = springs_inputs(n)
    x, v = wp.array(x_np, dtype=wp.vec3, device=device), wp.array(v_np, dtype=wp.vec3, device=device)
    rot = wp.array(rot_np, dtype=wp.mat33, device=device)
    x_out, v_out = wp.zeros_like(x), wp.zeros_like(v)
    inputs = [x, v, rot, x_out, v_out, 0.01, 10.0, steps]
    grads = [wp.zeros_like(x), wp.zeros_like(v), wp.zeros_like(rot), wp.ones(n, dtype=wp.vec3, device=device),
             wp.ones(n, dtype=wp.vec3, device=device), 0.0, 0.0, 0]
    fwd = _event_ms(lambda: wp.launch(springs, dim=n, inputs=inputs), device)
    bwd = _event_ms(lambda: wp.launch(springs, dim=n, inputs=inputs, adj_inputs=grads, adjoint=True), device)
    out["springs"] = {"n": n, "steps": steps, "adjit_forward_ms": fwd, "adjit_backward_ms": bwd,
                      "backward_over_forward": bwd / fwd}


def bench_launch(device: str, out: dict, count: int = 20_000) -> None:
    x = wp.zeros(1, dtype=float, device=device)
    wp.launch(noop, dim=1, inputs=[x])
    wp.synchronize()

    def per_launch_us(launch) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(count):
                launch()
            wp.synchronize()
            best = min(best, (time.perf_counter() - start) / count * 1e6)
        return best

    result = {"adjit_us": per_launch_us(lambda: wp.launch(noop, dim=1, inputs=[x]))}
    try:
        import cupy
        kernel = cupy.RawKernel(r'extern "C" __global__ void noop(float* x) { x[0] = x[0]; }', "noop")
        cx = cupy.zeros(1, cupy.float32)
        kernel((1,), (1,), (cx,))
        cupy.cuda.runtime.deviceSynchronize()

        def cupy_launch():
            kernel((1,), (1,), (cx,))
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(count):
                cupy_launch()
            cupy.cuda.runtime.deviceSynchronize()
            best = min(best, (time.perf_counter() - start) / count * 1e6)
        result["cupy_rawkernel_us"] = best
    except ImportError:
        result["cupy"] = "not installed"
    out["launch"] = result


def bench_graph_replay(device: str, out: dict, launches: int = 100, repeat: int = 200) -> None:
    """100 small launches (dim=1) issued eagerly vs replayed from the CUDA
    graph a capture of them made (one cuGraphLaunch): host microseconds per
    launch to issue them (``issue``), and until the device finished them
    (``total``, synchronized once after ``repeat`` rounds)."""
    x = wp.zeros(1, dtype=float, device=device)

    def eager():
        for _ in range(launches):
            wp.launch(noop, dim=1, inputs=[x])
    eager()
    wp.synchronize()
    with wp.ScopedCapture(device=device) as capture:
        eager()
    graph = capture.graph
    wp.capture_launch(graph)
    wp.synchronize()

    def per_launch_us(run) -> tuple[float, float]:
        best_issue = best_total = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(repeat):
                run()
            issued = time.perf_counter()
            wp.synchronize()
            done = time.perf_counter()
            best_issue = min(best_issue, (issued - start) / (repeat * launches) * 1e6)
            best_total = min(best_total, (done - start) / (repeat * launches) * 1e6)
        return best_issue, best_total
    eager_issue, eager_total = per_launch_us(eager)
    graph_issue, graph_total = per_launch_us(lambda: wp.capture_launch(graph))
    out["graph_replay"] = {"launches": launches, "cuda_graph": graph.is_cuda_graph,
                           "eager_issue_us": eager_issue, "graph_issue_us": graph_issue,
                           "eager_total_us": eager_total, "graph_total_us": graph_total,
                           "issue_ratio": eager_issue / graph_issue, "total_ratio": eager_total / graph_total}


def bench_scatter_add(device: str, out: dict, n: int = 1_000_000, bins: int = 1000) -> None:
    rng = np.random.default_rng(1)
    values = wp.array(rng.standard_normal(n).astype(np.float32), device=device)
    at = wp.array(rng.integers(0, bins, n).astype(np.int32), device=device)
    total = wp.zeros(bins, dtype=float, device=device)
    out["scatter_add"] = {"n": n, "bins": bins, "native_atomics_ms": _event_ms(
        lambda: wp.launch(scatter_add, dim=n, inputs=[values, at, total]), device),
        "deterministic": "not yet on the GPU (float atomics are the hardware's)"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    d = wp.get_device(args.device)
    out = {"device": d.name, "arch": d.arch}
    for bench in (bench_saxpy, bench_length_cross, bench_springs, bench_launch, bench_graph_replay,
                  bench_scatter_add):
        try:
            bench(args.device, out)
        except Exception as e:  # noqa: BLE001  (one failing benchmark does not hide the others)
            out[bench.__name__] = f"failed: {type(e).__name__}: {e}"
        print(json.dumps({k: v for k, v in out.items() if k not in ("device", "arch")}, indent=1), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
