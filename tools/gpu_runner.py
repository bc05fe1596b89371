"""Loads adjit's PTX with the CUDA driver and runs it: the GPU half of
tools/gpu_check.py. Needs numpy and libcuda.so.1 only (PyTorch and CuPy,
when present, are the benchmarks' anchors); adjit is not imported.

    python tools/gpu_runner.py BUNDLE OUT_DIR [--skip-bench | --bench NAME]
    python tools/gpu_runner.py replay REPLAY_BUNDLE OUT_DIR   (tools/gpu_replay.py's bundle)

Each case's forward PTX runs on the bundle's inputs and its adjoint on seeded
output gradients; results and gradients are compared with what adjit's CPU
runtime computed for the same launches. Then the benchmarks: saxpy on 100M
float32 against a device-to-device copy, length(cross(a, b)) * a on 10M vec3
forward and backward against PyTorch eager, springs, and the cost of a
dim=1 launch against a CuPy RawKernel. Writes OUT_DIR/gpu_results.json and
prints a report.

This is a check of the compiler's GPU code through a minimal launcher in
Python (ctypes), not adjit's GPU runtime (issue 10): its launch overhead is
ctypes', not what a C++ launcher would cost.
"""
from __future__ import annotations

import ctypes as C
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

BLOCK = 256


def error_record_layout(header: Path = Path(__file__).resolve().parents[1] / "cpp" / "runtime" / "ErrorRecord.h"
                        ) -> dict[str, int]:
    """The error record's word indices and sizes, read from the C header that
    numbers them (as adjit._runtime.ERROR_RECORD has them: "site", "thread",
    "index", "size", "ranges", "add_log", "words", "max_rank", "max_ranged").
    adjit is not imported here."""
    fields = re.findall(r"\bAdjitRecord(\w+)\s*=\s*(-?\d+)", header.read_text())
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(): int(value) for name, value in fields}


#: The error record's words (cpp/runtime/ErrorRecord.h).
RECORD = error_record_layout()


class CudaError(RuntimeError):
    pass


class Driver:
    """The few CUDA driver calls a launch needs, each checked."""

    def __init__(self, ordinal: int = 0):
        self.lib = C.CDLL("libcuda.so.1")
        self.call("cuInit", 0)
        dev = C.c_int()
        self.call("cuDeviceGet", C.byref(dev), ordinal)
        self.ctx = C.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", C.byref(self.ctx), dev)
        self.call("cuCtxSetCurrent", self.ctx)
        name = C.create_string_buffer(256)
        self.call("cuDeviceGetName", name, 256, dev)
        major, minor = C.c_int(), C.c_int()
        self.call("cuDeviceGetAttribute", C.byref(major), 75, dev)  # compute capability major
        self.call("cuDeviceGetAttribute", C.byref(minor), 76, dev)
        version = C.c_int()
        self.call("cuDriverGetVersion", C.byref(version))
        self.name, self.cc, self.version = name.value.decode(), (major.value, minor.value), version.value

    def call(self, fn: str, *args) -> None:
        result = getattr(self.lib, fn)(*args)
        if result != 0:
            message = C.c_char_p()
            self.lib.cuGetErrorString(result, C.byref(message))
            raise CudaError(f"{fn} failed: error {result}: {(message.value or b'?').decode()}")

    def load(self, ptx: str, entry: str):
        """(function, seconds to JIT): loads PTX, with the JIT's log on failure."""
        module = C.c_void_p()
        log = C.create_string_buffer(16384)
        options = (C.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES)
        values = (C.c_void_p * 2)(C.cast(log, C.c_void_p), C.c_void_p(len(log)))
        start = time.perf_counter()
        try:
            self.call("cuModuleLoadDataEx", C.byref(module), ptx.encode() + b"\0", 2, options, values)
        except CudaError as e:
            raise CudaError(f"{e}; JIT log: {log.value.decode(errors='replace')}") from None
        seconds = time.perf_counter() - start
        fn = C.c_void_p()
        self.call("cuModuleGetFunction", C.byref(fn), module, entry.encode())
        return fn, seconds

    def alloc(self, nbytes: int) -> int:
        ptr = C.c_uint64()
        self.call("cuMemAlloc_v2", C.byref(ptr), max(nbytes, 1))
        return ptr.value

    def upload(self, host: np.ndarray) -> int:
        host = np.ascontiguousarray(host)
        ptr = self.alloc(host.nbytes)
        self.call("cuMemcpyHtoD_v2", C.c_uint64(ptr), host.ctypes.data_as(C.c_void_p), C.c_size_t(host.nbytes))
        return ptr

    def download(self, ptr: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        self.call("cuMemcpyDtoH_v2", out.ctypes.data_as(C.c_void_p), C.c_uint64(ptr), C.c_size_t(out.nbytes))
        return out

    def free(self, ptr: int) -> None:
        self.call("cuMemFree_v2", C.c_uint64(ptr))

    def launch(self, fn, total: int, params) -> None:
        grid = max(1, (total + BLOCK - 1) // BLOCK)
        self.call("cuLaunchKernel", fn, grid, 1, 1, BLOCK, 1, 1, 0, None, params, None)

    def sync(self) -> None:
        self.call("cuCtxSynchronize")

    def event(self):
        e = C.c_void_p()
        self.call("cuEventCreate", C.byref(e), 0)
        return e

    def elapsed_ms(self, start, stop) -> float:
        ms = C.c_float()
        self.call("cuEventElapsedTime", C.byref(ms), start, stop)
        return ms.value


def entry_param_sizes(ptx: str) -> list[int]:
    """The byte size of each parameter of the PTX's .entry, in order."""
    signature = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S).group(1)
    sizes = []
    for param in signature.split(","):
        array = re.search(r"\[(\d+)\]", param)
        sizes.append(int(array.group(1)) if array else int(re.search(r"\.[a-z](\d+)\b", param).group(1)) // 8)
    return sizes


class Params:
    """A launch's kernelParams: one buffer per PTX parameter, laid out as the
    GPU-to-NVVM lowering expects (memrefs expanded into their descriptor's
    fields), followed by the total thread count, 3 extents and the record."""

    def __init__(self, sizes: list[int]):
        self.sizes, self.buffers = sizes, []

    def _add(self, data: bytes) -> None:
        if len(self.buffers) == len(self.sizes):
            raise ValueError(f"more than the {len(self.sizes)} parameters the kernel takes")
        size = self.sizes[len(self.buffers)]
        if len(data) > size:
            raise ValueError(f"parameter {len(self.buffers)}: {len(data)} bytes for a {size}-byte slot")
        self.buffers.append(C.create_string_buffer(data.ljust(size, b"\0"), size))

    def array(self, ptr: int, shape: tuple) -> None:
        strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1] if shape else ()
        for word in (ptr, ptr, 0, *shape, *strides):
            self._add(np.int64(word).tobytes())

    def value(self, data: bytes) -> None:
        self._add(data)

    def finish(self, total: int, record: int, extents=(1, 1, 1)):
        for word in (total, *extents, record):
            self._add(np.uint64(word).tobytes())
        if len(self.buffers) != len(self.sizes):
            raise ValueError(f"{len(self.buffers)} parameters for a kernel that takes {len(self.sizes)}")
        return (C.c_void_p * len(self.buffers))(*[C.cast(b, C.c_void_p) for b in self.buffers])


def _error(actual: np.ndarray, expected: np.ndarray) -> float:
    """Largest difference relative to the array's scale (0 for equal ints)."""
    if actual.dtype.kind in "iub":
        return float(np.max(actual != expected)) if actual.size else 0.0
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


def _extents(dim) -> tuple[int, list[int]]:
    """(total threads, extents 1-3) of a launch dim, as adjit's launcher passes them."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    return int(np.prod(dims)), (dims[1:] + [1, 1, 1])[:3]


def _launch(driver: Driver, bundle: Path, name: str, launch: dict, dim, arrays: dict, shapes: dict,
            unproven: bool = False) -> np.ndarray:
    """Loads and runs one launch; ``arrays`` maps "array"/"grad"/"tangent"
    parameter names to device pointers. Returns the error record after it.
    ``unproven``: index ranges of (-1, -1), as the CPU runtime passes for
    overlapping arrays, so the launch condition fails and every check runs."""
    fn, _ = driver.load((bundle / f"{name}.ptx").read_text(), launch["entry"])
    params = Params(launch["sizes"])
    for p in launch["params"]:
        if "value" in p:
            params.value(bytes.fromhex(p["value"]))
        else:
            kind, array = next(iter(p.items()))
            params.array(arrays[kind, array], shapes[array])
    total, extents = _extents(dim)
    index_arrays = [arrays["host", launch["params"][position]["array"]] for position in launch["ranged"]]
    ranges = [(-1, -1) if unproven else (a.min(), a.max()) for a in index_arrays]
    return _run(driver, fn, params, total, extents, ranges)


def _run(driver: Driver, fn, params: Params, total: int, extents, ranges: list) -> np.ndarray:
    """Launches ``fn`` with an error record holding the index arrays'
    (min, max) ``ranges``, waits, and returns the record's words."""
    words = np.zeros(RECORD["words"], np.int64)
    for slot, (lo, hi) in enumerate(ranges):
        words[RECORD["ranges"] + 2 * slot: RECORD["ranges"] + 2 * slot + 2] = (lo, hi)
    record = driver.upload(words)
    try:
        driver.launch(fn, total, params.finish(total, record, extents))
        driver.sync()
        return driver.download(record, words)
    finally:
        driver.free(record)


def run_case(driver: Driver, bundle: Path, name: str, case: dict) -> dict:
    data = dict(np.load(bundle / f"{name}.npz"))
    inputs = {k[3:]: v for k, v in data.items() if k.startswith("in.")}
    shapes = {a: v.shape for a, v in inputs.items()}
    report = {}
    start = time.perf_counter()

    def fresh(extra: dict) -> dict:
        arrays = {("array", a): driver.upload(v) for a, v in inputs.items()}
        arrays.update({("host", a): v for a, v in inputs.items()})
        for (kind, a), host in extra.items():
            arrays[kind, a] = driver.upload(host)
        return arrays

    def compare(which: str, arrays: dict, expected: dict) -> None:
        report[which] = {a: _error(driver.download(arrays[kind, a], inputs[a]), want)
                         for (kind, a), want in expected.items()}

    def release(arrays: dict) -> None:
        for (kind, _), ptr in arrays.items():
            if kind != "host":
                driver.free(ptr)

    arrays = fresh({})
    site = _launch(driver, bundle, f"{name}.forward", case["launches"]["forward"], case["dim"], arrays,
                   shapes)[RECORD["site"]]
    compare("forward", arrays, {("array", a): data[f"out.{a}"] for a in inputs})
    report["forward"]["record_site"] = int(site)

    if case["launches"]["forward"]["ranged"]:  # the version with every check, on the same inputs
        release(arrays)
        arrays = fresh({})
        site = _launch(driver, bundle, f"{name}.forward", case["launches"]["forward"], case["dim"], arrays, shapes,
                       unproven=True)[RECORD["site"]]
        compare("forward_checked", arrays, {("array", a): data[f"out.{a}"] for a in inputs})
        report["forward_checked"]["record_site"] = int(site)

    # the adjoint runs on the forward's results, as the tape's does
    for a in inputs:
        arrays["grad", a] = driver.upload(data[f"seed.{a}"] if a in case["seeds"] else np.zeros_like(inputs[a]))
    site = _launch(driver, bundle, f"{name}.adjoint", case["launches"]["adjoint"], case["dim"], arrays,
                   shapes)[RECORD["site"]]
    compare("adjoint", arrays, {("grad", a): data[f"grad.{a}"] for a in inputs if a not in case["seeds"]})
    report["adjoint"]["record_site"] = int(site)
    release(arrays)

    arrays = fresh({("tangent", k[11:]): v for k, v in data.items() if k.startswith("tangent_in.")})
    site = _launch(driver, bundle, f"{name}.tangent", case["launches"]["tangent"], case["dim"], arrays,
                   shapes)[RECORD["site"]]
    compare("tangent", arrays, {**{("tangent", k[12:]): v for k, v in data.items() if k.startswith("tangent_out.")},
                                **{("array", a): data[f"out.{a}"] for a in inputs}})
    report["tangent"]["record_site"] = int(site)
    release(arrays)
    report["seconds"] = time.perf_counter() - start
    return report


def run_out_of_range(driver: Driver, bundle: Path, case: dict) -> dict:
    """A launch with one index out of range: the record must name its thread and index."""
    inputs = {k[3:]: v for k, v in np.load(bundle / "bad_index.npz").items()}
    arrays = {("array", a): driver.upload(v) for a, v in inputs.items()}
    arrays.update({("host", a): v for a, v in inputs.items()})
    words = _launch(driver, bundle, "bad_index.forward", case["forward"], case["dim"], arrays,
                    {a: v.shape for a, v in inputs.items()})
    report = {"site": int(words[RECORD["site"]]), "thread": int(words[RECORD["thread"]]),
              "index": int(words[RECORD["index"]])}
    report["ok"] = report["site"] > 0 and report["thread"] == case["thread"] and report["index"] == case["index"]
    return report


def _time_ms(driver: Driver, run, repeat: int = 20) -> float:
    """Median device time of run() in ms (CUDA events around each call)."""
    run()
    driver.sync()
    start, stop, times = driver.event(), driver.event(), []
    for _ in range(repeat):
        driver.call("cuEventRecord", start, None)
        run()
        driver.call("cuEventRecord", stop, None)
        driver.call("cuEventSynchronize", stop)
        times.append(driver.elapsed_ms(start, stop))
    return float(np.median(times))


def _bench_launcher(driver: Driver, bundle: Path, manifest: dict, name: str, n: int, arrays: dict,
                    values: list, grads: dict | None = None, noalias: bool = False, tangents: list | None = None):
    """fn, params for a benchmark kernel: ``arrays`` maps argument names to
    (ptr, shape) in order with ``values`` (packed bytes) at their places.
    ``grads``: the adjoint with these gradient arrays; ``tangents``: the
    tangent kernel with these tangents, (ptr, shape) or packed bytes, one per
    float argument. ``noalias``: the variant compiled for arrays that do not
    overlap."""
    which = "adjoint" if grads is not None else "tangent" if tangents is not None else "forward"
    which += ".noalias" if noalias else ""
    ptx = (bundle / f"bench.{name}.{which}.ptx").read_text()
    fn, _ = driver.load(ptx, manifest["bench"][f"{name}.{which}"])
    params = Params(entry_param_sizes(ptx))
    for item in values:
        if isinstance(item, bytes):
            params.value(item)
        else:
            params.array(*arrays[item])
    for item in (grads or {}):
        params.array(*grads[item])
    for item in (tangents or []):
        if isinstance(item, bytes):
            params.value(item)
        else:
            params.array(*item)
    record = driver.upload(np.zeros(RECORD["words"], np.int64))
    return fn, params.finish(n, record), record


f32 = np.float32


def bench_saxpy(driver: Driver, bundle: Path, manifest: dict, rng, out: dict) -> None:
    """saxpy, 100M float32, against a device-to-device copy of as many bytes."""
    n = 100_000_000
    x, y = rng.standard_normal(n, dtype=f32), rng.standard_normal(n, dtype=f32)
    px, py = driver.upload(x), driver.upload(y)
    fn, params, _ = _bench_launcher(driver, bundle, manifest, "saxpy", n, {"x": (px, (n,)), "y": (py, (n,))},
                                    [f32(2.0).tobytes(), "x", "y"])
    saxpy_ms = _time_ms(driver, lambda: driver.launch(fn, n, params))
    fn, params, _ = _bench_launcher(driver, bundle, manifest, "saxpy", n, {"x": (px, (n,)), "y": (py, (n,))},
                                    [f32(2.0).tobytes(), "x", "y"], noalias=True)
    noalias_ms = _time_ms(driver, lambda: driver.launch(fn, n, params))
    tx, ty = driver.upload(x), driver.upload(y)
    fn, params, _ = _bench_launcher(driver, bundle, manifest, "saxpy", n, {"x": (px, (n,)), "y": (py, (n,))},
                                    [f32(2.0).tobytes(), "x", "y"],
                                    tangents=[f32(0.5).tobytes(), (tx, (n,)), (ty, (n,))])
    tangent_ms = _time_ms(driver, lambda: driver.launch(fn, n, params))
    driver.free(tx)
    driver.free(ty)
    copy_dst = driver.alloc(4 * n)
    copy_ms = _time_ms(driver, lambda: driver.call("cuMemcpyDtoD_v2", C.c_uint64(copy_dst), C.c_uint64(px),
                                                   C.c_size_t(4 * n)))
    # correctness after 3 x (1 + 20) launches: y += 63 * 2 x (float32 rounding: compare loosely, a few elements)
    check = driver.download(py, y)[:1000].astype(np.float64)
    expect = y[:1000].astype(np.float64) + 126.0 * x[:1000]
    out["saxpy"] = {"n": n, "ms": saxpy_ms, "GB_s": 12 * n / saxpy_ms / 1e6, "copy_ms": copy_ms,
                    "copy_GB_s": 8 * n / copy_ms / 1e6, "max_rel_error_vs_numpy": _error(check, expect)}
    out["saxpy"]["fraction_of_copy"] = out["saxpy"]["GB_s"] / out["saxpy"]["copy_GB_s"]
    out["saxpy"]["noalias_ms"] = noalias_ms
    out["saxpy"]["noalias_fraction_of_copy"] = 12 * n / noalias_ms / 1e6 / out["saxpy"]["copy_GB_s"]
    out["saxpy"]["tangent_ms"] = tangent_ms
    out["saxpy"]["tangent_over_forward"] = tangent_ms / saxpy_ms
    for p in (px, py, copy_dst):
        driver.free(p)



def bench_length_cross(driver: Driver, bundle: Path, manifest: dict, rng, out: dict) -> None:
    """length(cross(a, b)) * a on 10M vec3, forward and backward, against PyTorch eager."""
    n = 10_000_000
    a, b = rng.standard_normal((n, 3), dtype=f32), rng.standard_normal((n, 3), dtype=f32)
    seed = rng.standard_normal((n, 3), dtype=f32)
    pa, pb, py = driver.upload(a), driver.upload(b), driver.alloc(12 * n)
    ga, gb, gy = driver.alloc(12 * n), driver.alloc(12 * n), driver.upload(seed)
    arrays = {"a": (pa, (n, 3)), "b": (pb, (n, 3)), "y": (py, (n, 3))}
    lc, adjoints = {"n": n}, {}
    for variant in ("", "noalias_"):
        fwd, fparams, _ = _bench_launcher(driver, bundle, manifest, "length_cross", n, arrays, ["a", "b", "y"],
                                          noalias=bool(variant))
        adj, aparams, _ = _bench_launcher(driver, bundle, manifest, "length_cross", n, arrays, ["a", "b", "y"],
                                          {"a": (ga, (n, 3)), "b": (gb, (n, 3)), "y": (gy, (n, 3))},
                                          noalias=bool(variant))
        tan, tparams, _ = _bench_launcher(driver, bundle, manifest, "length_cross", n, arrays, ["a", "b", "y"],
                                          noalias=bool(variant),
                                          tangents=[(ga, (n, 3)), (gb, (n, 3)), (gy, (n, 3))])
        lc[f"{variant}forward_ms"] = _time_ms(driver, lambda: driver.launch(fwd, n, fparams))
        lc[f"{variant}tangent_ms"] = _time_ms(driver, lambda: driver.launch(tan, n, tparams))
        lc[f"{variant}tangent_over_forward"] = lc[f"{variant}tangent_ms"] / lc[f"{variant}forward_ms"]
        lc[f"{variant}backward_ms"] = _time_ms(driver, lambda: driver.launch(adj, n, aparams))
        adjoints[variant] = (adj, aparams)
    try:
        import torch
        ta = torch.from_numpy(a).cuda().requires_grad_(True)
        tb = torch.from_numpy(b).cuda().requires_grad_(True)
        tseed = torch.from_numpy(seed).cuda()

        def torch_forward():
            return torch.linalg.vector_norm(torch.cross(ta, tb, dim=1), dim=1, keepdim=True) * ta

        def torch_ms(run, repeat=20):
            run()
            torch.cuda.synchronize()
            times = []
            for _ in range(repeat):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                run()
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
            return float(np.median(times))

        with torch.no_grad():
            lc["torch_forward_ms"] = torch_ms(torch_forward)
        ty = torch_forward()
        lc["torch_backward_ms"] = torch_ms(lambda: torch.autograd.grad(ty, (ta, tb), tseed, retain_graph=True))
        # adjit's adjoints against torch's gradient (a fresh adjoint launch on zeroed grads)
        tga, tgb = torch.autograd.grad(ty, (ta, tb), tseed)
        for variant, (adj, aparams) in adjoints.items():
            driver.call("cuMemsetD8_v2", C.c_uint64(ga), 0, C.c_size_t(12 * n))
            driver.call("cuMemsetD8_v2", C.c_uint64(gb), 0, C.c_size_t(12 * n))
            driver.call("cuMemcpyHtoD_v2", C.c_uint64(gy), seed.ctypes.data_as(C.c_void_p), C.c_size_t(seed.nbytes))
            driver.launch(adj, n, aparams)
            driver.sync()
            lc[f"{variant}grad_a_rel_error_vs_torch"] = _error(driver.download(ga, a), tga.double().cpu().numpy())
            lc[f"{variant}grad_b_rel_error_vs_torch"] = _error(driver.download(gb, b), tgb.double().cpu().numpy())
        lc["y_rel_error_vs_torch"] = _error(driver.download(py, a), ty.detach().double().cpu().numpy())
        del ta, tb, ty, tga, tgb, tseed
        torch.cuda.empty_cache()
    except ImportError as e:
        lc["torch"] = f"not measured: {e}"
    out["length_cross"] = lc
    for p in (pa, pb, py, ga, gb, gy):
        driver.free(p)



def bench_springs(driver: Driver, bundle: Path, manifest: dict, rng, out: dict) -> None:
    """springs, 1M particles, 16 steps: forward and backward."""
    n = 1_000_000
    x = rng.standard_normal((n, 3), dtype=f32)
    x[:, 1] = np.abs(x[:, 1])
    v = rng.standard_normal((n, 3), dtype=f32)
    rot = np.tile(np.eye(3, dtype=f32), (n, 1, 1))
    ptrs = {"x": driver.upload(x), "v": driver.upload(v), "rot": driver.upload(rot),
            "x_out": driver.alloc(12 * n), "v_out": driver.alloc(12 * n)}
    shapes = {"x": (n, 3), "v": (n, 3), "rot": (n, 3, 3), "x_out": (n, 3), "v_out": (n, 3)}
    arrays = {k: (ptrs[k], shapes[k]) for k in ptrs}
    values = ["x", "v", "rot", "x_out", "v_out", f32(0.01).tobytes(), f32(4.0).tobytes(), np.int32(16).tobytes()]
    grads = {k: (driver.alloc(4 * int(np.prod(shapes[k]))), shapes[k]) for k in ptrs}
    out["springs"] = {"n": n, "n_iter": 16}
    for variant in ("", "noalias_"):
        fwd, fparams, _ = _bench_launcher(driver, bundle, manifest, "springs", n, arrays, values, noalias=bool(variant))
        adj, aparams, _ = _bench_launcher(driver, bundle, manifest, "springs", n, arrays, values, grads,
                                          noalias=bool(variant))
        tan, tparams, _ = _bench_launcher(driver, bundle, manifest, "springs", n, arrays, values, noalias=bool(variant),
                                          tangents=[grads[k] for k in ptrs] + [f32(0.0).tobytes()] * 2)
        out["springs"][f"{variant}forward_ms"] = _time_ms(driver, lambda: driver.launch(fwd, n, fparams))
        out["springs"][f"{variant}tangent_ms"] = _time_ms(driver, lambda: driver.launch(tan, n, tparams))
        out["springs"][f"{variant}tangent_over_forward"] = (out["springs"][f"{variant}tangent_ms"]
                                                           / out["springs"][f"{variant}forward_ms"])
        out["springs"][f"{variant}backward_ms"] = _time_ms(driver, lambda: driver.launch(adj, n, aparams))
    for p in list(ptrs.values()) + [g for g, _ in grads.values()]:
        driver.free(p)



def bench_launch(driver: Driver, bundle: Path, manifest: dict, rng, out: dict) -> None:
    """Launch overhead: dim=1, back to back, one synchronize at the end, against CuPy."""
    one = driver.alloc(4)
    fn, params, _ = _bench_launcher(driver, bundle, manifest, "trivial", 1, {"x": (one, (1,))}, ["x"])
    count = 20000

    def per_launch_us(launch) -> float:
        for _ in range(100):
            launch()
        driver.sync()
        start = time.perf_counter()
        for _ in range(count):
            launch()
        driver.sync()
        return (time.perf_counter() - start) / count * 1e6

    overhead = {"adjit_ptx_via_ctypes_us": per_launch_us(lambda: driver.launch(fn, 1, params))}
    try:
        import cupy
        kernel = cupy.RawKernel('extern "C" __global__ void trivial(float* x) { x[0] = 1.0f; }', "trivial")
        cx = cupy.zeros(1, dtype=cupy.float32)
        overhead["cupy_rawkernel_us"] = per_launch_us(lambda: kernel((1,), (1,), (cx,)))
    except ImportError as e:
        overhead["cupy"] = f"not measured: {e}"
    out["launch_overhead"] = overhead
    driver.free(one)


BENCHMARKS = {"saxpy": bench_saxpy, "length_cross": bench_length_cross, "springs": bench_springs,
              "launch": bench_launch}


def bench(driver: Driver, bundle: Path, manifest: dict, only: str | None = None) -> dict:
    """The benchmarks (``only``: the one named, e.g. under a profiler)."""
    out, rng = {}, np.random.default_rng(0)
    for name, run in BENCHMARKS.items():
        if only in (None, name):
            run(driver, bundle, manifest, rng, out)
    return out


def _compare(actual: np.ndarray, expected: np.ndarray, bfloat16: bool = False) -> float:
    """0 when equal: integers and bools bit for bit, floats (bfloat16 through
    float32) as _error, with NaNs and infinities where the CPU has them."""
    if bfloat16 or expected.dtype.kind == "V" and expected.dtype.itemsize == 2:  # bfloat16: its float32 value
        widen = lambda a: (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)  # noqa: E731
        actual, expected = widen(actual), widen(expected)
    if expected.dtype.kind not in "fc":
        return float(actual.tobytes() != expected.tobytes())
    finite = np.isfinite(expected)
    if not np.array_equal(finite, np.isfinite(actual)) or \
            actual[~finite].tobytes() != expected[~finite].astype(actual.dtype).tobytes() and \
            not np.array_equal(actual[~finite], expected[~finite], equal_nan=True):
        return float("inf")  # a NaN or infinity where the CPU has none, or another one
    return _error(actual[finite], expected[finite]) if finite.any() else 0.0


def replay_from(bundle: Path, out_dir: Path, start: int) -> int:
    """Replays the recorded launches from ``start`` on, appending one JSON
    line per launch to OUT_DIR/replay.jsonl. Returns 3 after a CUDA error
    (the context is lost: the caller goes on in a new process), else 0."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    driver = Driver()
    if os.environ.get("ADJIT_REPLAY_STACK"):  # bytes of stack per thread (the driver's default: 1 KiB)
        driver.call("cuCtxSetLimit", 0, C.c_size_t(int(os.environ["ADJIT_REPLAY_STACK"])))
    functions = {}
    with open(out_dir / "replay.jsonl", "a") as log:
        only = os.environ.get("ADJIT_REPLAY_ONLY")  # kernel names, comma-separated
        for index in range(start, len(manifest["launches"])):
            launch = manifest["launches"][index]
            kernel = manifest["kernels"][launch["kernel"]]
            if only and kernel["name"] not in only.split(","):
                log.write(json.dumps({"index": index, "key": launch["kernel"], "kernel": kernel["name"],
                                      "source": kernel["source"], "skipped": True}) + "\n")
                continue
            result = {"index": index, "key": launch["kernel"], "kernel": kernel["name"], "source": kernel["source"]}
            try:
                if launch["kernel"] not in functions:
                    functions[launch["kernel"]] = driver.load((bundle / kernel["ptx"]).read_text(), kernel["entry"])[0]
                data = np.load(bundle / launch["file"])
                params = Params(kernel["sizes"])
                device = {}
                for p in launch["params"]:
                    if "value" in p:
                        params.value(bytes.fromhex(p["value"]))
                    else:
                        host = data[f"in_{p['array']}"]
                        device[p["array"]] = driver.upload(host)
                        params.array(device[p["array"]], host.shape)
                ranges = [(data[f"in_{j}"].min(), data[f"in_{j}"].max()) for j in kernel["ranged"]]
                words = _run(driver, functions[launch["kernel"]], params, launch["total"], launch["shape"][1:4],
                             ranges)
                result["record_site"] = int(words[RECORD["site"]])
                results = {j: driver.download(ptr, data[f"out_{j}"]) for j, ptr in device.items()}
                bf16 = {p["array"] for p in launch["params"] if p.get("bfloat16")}
                errors = {str(j): _compare(results[j], data[f"out_{j}"], j in bf16) for j in results}
                if max(errors.values(), default=0.0) > 1e-4:  # what the GPU computed, to look at
                    np.savez(out_dir / f"gpu_{index}.npz", **{f"out_{j}": a for j, a in results.items()})
                result["worst"] = max(errors.values(), default=0.0)
                result["errors"] = {j: e for j, e in errors.items() if e > 0}
                for ptr in device.values():
                    driver.free(ptr)
            except CudaError as e:
                result["cuda_error"] = str(e)
                log.write(json.dumps(result) + "\n")
                return 3
            except (ValueError, KeyError) as e:
                result["error"] = f"{type(e).__name__}: {e}"
            log.write(json.dumps(result) + "\n")
            log.flush()
    return 0


def replay(bundle: Path, out_dir: Path) -> None:
    """Replays every recorded launch, a new process after each CUDA error,
    and prints the summary (written to OUT_DIR/replay_summary.json)."""
    import subprocess
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / "replay.jsonl"
    log.write_text("")
    manifest = json.loads((bundle / "manifest.json").read_text())
    while True:
        done = len(log.read_text().splitlines())
        if done >= len(manifest["launches"]):
            break
        subprocess.run([sys.executable, __file__, "replay-from", str(bundle), str(out_dir), str(done)])
        if len(log.read_text().splitlines()) == done:  # the child died without a word
            with open(log, "a") as f:
                f.write(json.dumps({"index": done, "kernel": manifest["launches"][done]["kernel"],
                                    "cuda_error": "the replaying process died"}) + "\n")
    results = [r for r in map(json.loads, log.read_text().splitlines()) if not r.get("skipped")]
    by_kernel: dict[str, list] = {}
    for r in results:
        by_kernel.setdefault(f"{r['kernel']} ({r.get('source', '?')})", []).append(r)

    def ok(r) -> bool:
        return r.get("worst", 1.0) <= 1e-4 and r.get("record_site", 1) == 0 and "error" not in r \
            and "cuda_error" not in r

    bad = {k: rs for k, rs in by_kernel.items() if not all(ok(r) for r in rs)}
    # kernels whose atomics' old values are used run serially, in thread order, on the CPU; on the GPU
    # the threads' order is the hardware's, so those results may differ legitimately
    order_dependent = {k: rs for k, rs in bad.items()
                       if manifest["kernels"].get(rs[0].get("key"), {}).get("order_dependent")
                       and not any("cuda_error" in r or r.get("record_site") for r in rs)}
    bad = {k: rs for k, rs in bad.items() if k not in order_dependent}
    not_compiled = {k["name"] + f" ({k['source']})": k.get("compile_error") or k.get("layout_error")
                    for k in manifest["kernels"].values() if "compile_error" in k or "layout_error" in k}
    summary = {"launches": len(results), "kernels": len(by_kernel),
               "kernels_ok": len(by_kernel) - len(bad) - len(order_dependent),
               "launches_ok": sum(ok(r) for r in results), "not_ok": bad, "order_dependent": order_dependent,
               "not_compiled": not_compiled,
               "skipped_at_recording": manifest["skipped"]}
    (out_dir / "replay_summary.json").write_text(json.dumps(summary, indent=1))
    print(f"replayed {len(results)} launches of {len(by_kernel)} kernels: {summary['launches_ok']} launches and "
          f"{summary['kernels_ok']} kernels agree with the CPU; {len(order_dependent)} kernels differ where "
          f"their atomics' order decides; {len(bad)} differ otherwise; {len(not_compiled)} did not compile")
    for k in order_dependent:
        print(f"  ORDER-DEPENDENT {k}")
    for k, rs in bad.items():
        print(f"  NOT OK {k}: {[{x: r[x] for x in r if x not in ('kernel', 'source', 'key')} for r in rs][:2]}")
    for k, why in not_compiled.items():
        print(f"  NOT COMPILED {k}: {why[:300]}")


def main() -> None:
    if sys.argv[1] == "replay":
        return replay(Path(sys.argv[2]), Path(sys.argv[3]))
    if sys.argv[1] == "replay-from":
        sys.exit(replay_from(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])))
    bundle, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    manifest = json.loads((bundle / "manifest.json").read_text())
    driver = Driver()
    results = {"device": driver.name, "compute_capability": driver.cc, "driver_version": driver.version,
               "arch": manifest["arch"], "cases": {}}
    print(f"{driver.name} (sm_{driver.cc[0]}{driver.cc[1]}), driver {driver.version}, PTX for {manifest['arch']}")
    failed = []
    for name, case in manifest["cases"].items():
        try:
            report = run_case(driver, bundle, name, case)
        except CudaError as e:
            report = {"error": str(e)}
        results["cases"][name] = report
        if "error" in report:
            failed.append(name)
            print(f"{name}: {report['error']}")
            continue
        launches = [w for w in ("forward", "forward_checked", "adjoint", "tangent") if w in report]
        errors = {f"{w}.{a}": e for w in launches for a, e in report[w].items() if a != "record_site"}
        sites = tuple(report[w]["record_site"] for w in launches)
        ok = max(errors.values()) <= 1e-4 and not any(sites)
        report["ok"] = ok
        if not ok:
            failed.append(name)
        worst = max(errors, key=errors.get)
        print(f"{name}: {'ok' if ok else 'MISMATCH'}  worst {worst} {errors[worst]:.2e}  record sites {sites}  "
              f"({report['seconds']:.2f} s with PTX JIT)")
    report = run_out_of_range(driver, bundle, manifest["out_of_range"])
    results["out_of_range"] = report
    if not report["ok"]:
        failed.append("out_of_range")
    print(f"out of range: {'ok' if report['ok'] else 'MISMATCH'} {report}")
    if "--skip-bench" not in sys.argv:
        only = sys.argv[sys.argv.index("--bench") + 1] if "--bench" in sys.argv else None
        results["bench"] = bench(driver, bundle, manifest, only)
        print(json.dumps(results["bench"], indent=1))
    results["failed"] = failed
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "gpu_results.json").write_text(json.dumps(results, indent=1))
    print("failed:", failed or "none")


if __name__ == "__main__":
    main()
