"""The CUDA driver layer (cpp/runtime/CudaDriver.h, adjit._runtime.cuda,
adjit.device, adjit.runtime.cuda).

Three kinds of test:
- without CUDA (this machine, CI): CUDA is unavailable and every CUDA name
  says why; the API has Warp's names and signatures;
- through a stand-in driver (cpp/runtime/test/fake_cuda_driver.cpp, built
  here and loaded through $ADJIT_CUDA_DRIVER in a child process): the
  layer's calls, contexts, errors and the Python API, without a GPU
  (tests/python/gpu/cuda_fake_driver_checks.py);
- on a GPU (skipped elsewhere): properties, memory, PTX launches compared
  with the CPU, streams and events, the error record, an illegal address
  reported at synchronize. docs/gpu.md has the command that runs them.

The GPU tests take their PTX from adjit.compile where the compiler is
installed, else from tests/python/gpu/data/cuda_driver/ (the GPU machine has no
compiler; ``python tests/python/gpu/test_cuda_driver.py --write-ptx``
regenerates those, and test_ptx_fixtures_match_the_compiler checks them).
"""
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import adjit as wp
from adjit import _runtime
from adjit.runtime import cuda

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIXTURES = HERE / "data" / "cuda_driver"
FIXTURE_ARCH = "sm_80"
CXX = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")

HAS_CUDA = wp.is_cuda_available()
HAS_COMPILER = importlib.util.find_spec("adjit._adjit") is not None

needs_gpu = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU: CUDA is not available here "
                               f"({wp.cuda_unavailable_reason()}); these run on a GPU machine (docs/gpu.md)")
without_cuda = pytest.mark.skipif(HAS_CUDA, reason="checks a machine without CUDA; this one has a GPU")


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def gather_float_index(x: wp.array(dtype=float), at: wp.array(dtype=float), y: wp.array(dtype=float)):
    # an index computed from a float: checked per access
    i = wp.tid()
    y[i] = x[int(at[i])]


@wp.kernel
def spin(steps: int, y: wp.array(dtype=float)):
    # a long runtime loop, converging to 2.0 from any start
    i = wp.tid()
    v = y[i]
    for k in range(steps):
        v = v * 0.5 + 1.0
    y[i] = v


KERNELS = {"saxpy": saxpy, "gather_float_index": gather_float_index, "spin": spin}


def _entry(ptx: str) -> tuple[str, list[str]]:
    """The PTX's .entry name and its parameters' declarations."""
    m = re.search(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)
    return m.group(1), [p.strip().rsplit(" ", 1)[0] for p in m.group(2).split(",")]


def _ptx(name: str, arch: str = FIXTURE_ARCH) -> str:
    """The kernel's PTX: compiled here where the compiler is installed, else
    the fixture (the GPU machine has no compiler)."""
    if HAS_COMPILER:
        return wp.compile(KERNELS[name], target="cuda", arch=arch)
    return (FIXTURES / f"{name}.ptx").read_text()


def _label(k) -> str:
    """How a launch names its kernel in errors: name and file:line."""
    return f"kernel '{k.__name__}' ({Path(__file__).name}:{_line(k.__name__)})"


def _line(name: str) -> int:
    for number, line in enumerate(Path(__file__).read_text().splitlines(), 1):
        if line.startswith(f"def {name}("):
            return number
    return 0


def _params(ptr_arrays, values_before=(), total=0, record=0) -> cuda.KernelParams:
    """adjit's GPU parameter list: values, arrays (memref descriptors), the
    launch's total, extents (1, 1, 1) and error record."""
    p = cuda.KernelParams()
    for v in values_before:
        p.value(v)
    for ptr, shape in ptr_arrays:
        p.array(ptr, shape)
    p.u64(total).u64(1).u64(1).u64(1).u64(record)
    return p


#
# Without CUDA
#

@without_cuda
def test_cuda_is_unavailable_and_says_why():
    reason = wp.cuda_unavailable_reason()
    assert reason and not wp.is_cuda_available()
    if not any(Path(d, "libcuda.so.1").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")):
        assert reason.startswith("the CUDA driver could not be loaded: ") and "libcuda.so.1" in reason
    assert wp.get_cuda_device_count() == 0 and wp.get_cuda_devices() == []
    assert wp.get_devices() == [wp.get_device("cpu")]
    assert not wp.is_device_available("cuda:0")
    assert _runtime.cuda.device_count() == 0 and _runtime.cuda.driver_version() == 0


@without_cuda
def test_asking_for_a_cuda_device_raises_the_reason():
    reason = wp.cuda_unavailable_reason()
    asks = [lambda: wp.get_device("cuda:0"), lambda: wp.get_device("cuda"), lambda: wp.get_cuda_device(),
            lambda: wp.set_device("cuda:0"), lambda: wp.ScopedDevice("cuda:1"),
            lambda: wp.synchronize_device("cuda:0"), lambda: wp.Stream("cuda:0"), lambda: wp.Event("cuda:0"),
            lambda: wp.get_stream("cuda:0"), lambda: cuda.DeviceBuffer(16, "cuda:0"),
            lambda: cuda.load_module("cuda:0", "k", ".version 8.0"), lambda: wp.zeros(3, device="cuda:0")]
    for ask in asks:
        with pytest.raises(ValueError, match="'cuda(:[01])?' is not available: adjit runs kernels on the CPU") as e:
            ask()
        assert reason[1:] in str(e.value)
    assert wp.get_device() == "cpu"


@without_cuda
def test_streams_and_events_on_the_cpu_raise_as_warps_do():
    # Warp raises RuntimeError for a stream or event on a device that is not a CUDA device
    for make in (wp.Stream, wp.Event, wp.get_stream, lambda: wp.record_event(),
                 lambda: wp.set_stream(None), lambda: cuda.DeviceBuffer(4)):
        with pytest.raises(RuntimeError, match="device cpu is not a CUDA device \\(CUDA is not available here: "):
            make()
    with pytest.raises(RuntimeError, match="not a CUDA device"):
        wp.get_device("cpu").stream


@without_cuda
def test_the_runtimes_cuda_calls_raise_cleanly_without_a_driver():
    for call in (lambda: _runtime.cuda.Stream(0), lambda: _runtime.cuda.Event(0),
                 lambda: _runtime.cuda.DeviceAllocation(0, 16), lambda: _runtime.cuda.device_properties(0),
                 lambda: _runtime.cuda.synchronize_device(0), lambda: _runtime.cuda.Module(0, b"x")):
        with pytest.raises(_runtime.cuda.CudaUnavailableError, match="CUDA is not available: "):
            call()
    _runtime.cuda.synchronize()  # nothing to wait for


def test_synchronizing_the_cpu_is_a_no_op():
    wp.synchronize()
    wp.synchronize_device()
    wp.synchronize_device("cpu")
    wp.synchronize_stream("cpu")


def test_a_library_that_is_not_a_driver_is_refused_by_name():
    code = "import adjit; print(adjit.cuda_unavailable_reason()); print(adjit.get_devices())"
    env = dict(os.environ, ADJIT_CUDA_DRIVER="libm.so.6")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines() == [
        "libm.so.6 has no entry point cuInit: not a CUDA driver, or one older than adjit needs",
        "[<adjit device 'cpu'>]"]
    env["ADJIT_CUDA_DRIVER"] = "/nonexistent/libcuda.so.1"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.startswith("the CUDA driver could not be loaded: /nonexistent/libcuda.so.1: cannot open")


def test_import_adjit_does_not_load_the_cuda_driver():
    code = "import adjit\nprint(open('/proc/self/maps').read().count('fake_cuda'))"
    driver = _fake_driver_path()
    if driver is None:
        pytest.skip("no C++ compiler to build the stand-in driver")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "0"


#
# Warp's names and signatures (warp/_src/context.py and utils.py, Warp 1.x)
#

WARP_SIGNATURES = {
    "Stream": "(self, device=None, priority=0, **kwargs)",
    "Event": "(self, device=None, cuda_event=None, enable_timing=False, interprocess=False)",
    "ScopedStream": "(self, stream, sync_enter=True, sync_exit=False)",
    "ScopedDevice": "(self, device)",
    "get_stream": "(device=None)",
    "set_stream": "(stream, device=None, sync=False)",
    "record_event": "(event=None, external=False)",
    "wait_event": "(event, external=False)",
    "wait_stream": "(other_stream, event=None, external=False)",
    "get_event_elapsed_time": "(start_event, end_event, synchronize=True)",
    "synchronize": "()",
    "synchronize_device": "(device=None)",
    "synchronize_stream": "(stream_or_device=None)",
    "synchronize_event": "(event)",
    "get_cuda_device_count": "()",
    "get_cuda_device": "(ordinal=None)",
    "get_cuda_devices": "()",
    "is_cuda_available": "()",
    "get_device": "(ident=None)",
    "set_device": "(ident)",
    "get_devices": "()",
}

WARP_METHODS = {
    "Stream": {"record_event": "(self, event=None, external=False)", "wait_event": "(self, event, external=False)",
               "wait_stream": "(self, other_stream, event=None, external=False)"},
    "Device": {"set_stream": "(self, stream, sync=True)"},
}


def _plain(signature: inspect.Signature) -> str:
    """A signature without annotations: '(self, device=None, ...)'."""
    parts = []
    for p in signature.parameters.values():
        text = ("**" if p.kind is p.VAR_KEYWORD else "*" if p.kind is p.VAR_POSITIONAL else "") + p.name
        if p.default is not p.empty:
            text += f"={p.default!r}"
        parts.append(text)
    return f"({', '.join(parts)})"


def test_the_cuda_names_have_warps_signatures():
    for name, expected in WARP_SIGNATURES.items():
        obj = getattr(wp, name)
        target = obj.__init__ if inspect.isclass(obj) else obj
        assert _plain(inspect.signature(target)) == expected, name
    for cls, methods in WARP_METHODS.items():
        for name, expected in methods.items():
            assert _plain(inspect.signature(getattr(getattr(wp, cls), name))) == expected, (cls, name)
    for attr in ("cuda_stream", "is_complete", "priority", "cached_event", "is_capturing", "is_blocking",
                 "__cuda_stream__", "device"):
        assert hasattr(wp.Stream, attr) or attr == "device", attr
    for attr in ("cuda_event", "is_complete", "Flags", "ipc_handle"):
        assert hasattr(wp.Event, attr), attr
    assert (wp.Event.Flags.DEFAULT, wp.Event.Flags.BLOCKING_SYNC, wp.Event.Flags.DISABLE_TIMING) == (0, 1, 2)
    cpu = wp.get_device("cpu")
    for attr in ("alias", "name", "ordinal", "arch", "is_cpu", "is_cuda", "sm_count", "total_memory",
                 "free_memory", "is_uva", "is_mempool_supported", "is_primary", "has_stream", "pci_bus_id"):
        assert hasattr(cpu, attr), attr
    assert (cpu.ordinal, cpu.arch, cpu.is_cpu, cpu.is_cuda) == (-1, 0, True, False)
    assert cpu.total_memory > 0


def test_kernel_params_pack_values_at_aligned_offsets():
    p = cuda.KernelParams().f32(1.5).array(0x1000, (4, 3)).u32(7).u64(9)
    assert p.offsets == [0, 8, 16, 24, 32, 40, 48, 56, 64, 72]
    data = p.data
    assert np.frombuffer(data[:4], np.float32)[0] == 1.5
    assert list(np.frombuffer(data[8:64], np.int64)) == [0x1000, 0x1000, 0, 4, 3, 3, 1]
    assert np.frombuffer(data[64:68], np.uint32)[0] == 7 and np.frombuffer(data[72:80], np.uint64)[0] == 9


#
# Through the stand-in driver
#

_FAKE = {}


def _fake_driver_path():
    """Builds cpp/runtime/test/fake_cuda_driver.cpp once per session."""
    if "path" not in _FAKE:
        _FAKE["path"] = None
        if CXX is not None:
            import tempfile
            out = Path(tempfile.mkdtemp(prefix="adjit-fake-cuda-")) / "libfake_cuda.so"
            subprocess.run([CXX, "-std=c++17", "-O1", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror",
                            str(ROOT / "cpp" / "runtime" / "test" / "fake_cuda_driver.cpp"), "-o", str(out)],
                           check=True)
            _FAKE["path"] = out
    return _FAKE["path"]


def test_the_layer_through_a_stand_in_driver():
    driver = _fake_driver_path()
    if driver is None:
        pytest.fail("no C++ compiler found (set CXX): the stand-in CUDA driver needs one")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver), FAKE_CUDA_DEVICES="2")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "cuda_fake_driver_checks.py")],
                         capture_output=True, text=True, env=env, cwd=HERE.parent, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout and "failed" not in out.stdout


def test_no_device_is_a_reason_not_a_crash():
    driver = _fake_driver_path()
    if driver is None:
        pytest.skip("no C++ compiler to build the stand-in driver")
    code = ("import adjit\nprint(adjit.cuda_unavailable_reason())\n"
            "try:\n    adjit.get_device('cuda:0')\nexcept ValueError as e:\n    print(e)")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver), FAKE_CUDA_DEVICES="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines() == [
        "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected",
        "device 'cuda:0' is not available: adjit runs kernels on the CPU only here, because cuInit failed: "
        "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected; use 'cpu'"]


#
# The PTX the GPU tests run
#

@pytest.mark.skipif(not HAS_COMPILER, reason="needs adjit's compiler")
def test_ptx_fixtures_match_the_compiler():
    # The fixtures are what the GPU machine (no compiler) launches: their
    # entries must take the parameters today's compiler gives the kernels.
    for name in KERNELS:
        fixture = (FIXTURES / f"{name}.ptx").read_text()
        assert _entry(fixture) == _entry(_ptx(name)), f"regenerate: python {Path(__file__).name} --write-ptx"


@pytest.mark.skipif(not HAS_COMPILER, reason="needs adjit's compiler")
def test_the_gpu_tests_kernels_on_the_cpu():
    # What the GPU tests expect, from the CPU runtime: bit-exact float32 saxpy,
    # the out-of-range index caught at thread 77, spin converging to 2.0.
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
    out = wp.array(y.copy())
    wp.launch(saxpy, dim=1000, inputs=[1.5, wp.array(x), out])
    np.testing.assert_array_equal(out.numpy(), np.float32(1.5) * x + y)
    at = np.zeros(100, np.float32)
    at[77] = 1e6
    with pytest.raises(wp.OutOfBoundsError, match="1000000"):
        wp.launch(gather_float_index, dim=100, inputs=[wp.zeros(100), wp.array(at), wp.zeros(100)])
    ys = wp.array(rng.standard_normal(64, dtype=np.float32))
    wp.launch(spin, dim=64, inputs=[200, ys])
    np.testing.assert_array_equal(ys.numpy(), 2.0)


#
# On a GPU
#

@needs_gpu
def test_gpu_device_properties():
    d = wp.get_device("cuda:0")
    assert d.is_cuda and not d.is_cpu and d.ordinal == 0 and str(d) == "cuda:0"
    assert wp.get_device("cuda") is d and wp.get_cuda_device(0) is d and wp.get_devices()[1] is d
    assert d.name and d.arch >= 70 and d.sm_count > 0 and d.total_memory > 2**30
    assert 0 < d.free_memory <= d.total_memory and d.has_context
    assert d.max_threads_per_block >= 1024 and d.warp_size == 32
    assert re.fullmatch(r"[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}", d.pci_bus_id)
    assert _runtime.cuda.driver_version() >= 12000
    print(f"{d.name} sm_{d.arch} {d.total_memory / 2**30:.1f} GiB, {d.sm_count} SMs, driver "
          f"{_runtime.cuda.driver_version()}, mempools {d.is_mempool_supported}")


@needs_gpu
def test_gpu_scoped_device_places_arrays_and_launches_check_it():
    with wp.ScopedDevice("cuda:0") as d:
        assert wp.get_device() is d and d == "cuda"
        assert wp.zeros(3).device == "cuda:0"
    assert wp.get_device() == "cpu"
    with pytest.raises(wp.LaunchError, match="must be on one device"):
        wp.launch(saxpy, dim=1, inputs=[1.0, wp.zeros(1), wp.zeros(1)], device="cuda:0")
    with pytest.raises(ValueError, match="this machine has"):
        wp.get_device(f"cuda:{wp.get_cuda_device_count()}")


@needs_gpu
def test_gpu_memory_round_trip():
    rng = np.random.default_rng(0)
    host = rng.standard_normal((1000, 3), dtype=np.float32)
    a = cuda.DeviceBuffer.from_numpy(host, "cuda:0")
    assert a.nbytes == host.nbytes and a.ptr != 0
    np.testing.assert_array_equal(a.numpy(np.float32, host.shape), host)
    b = cuda.DeviceBuffer(host.nbytes, "cuda:0")
    b.copy_from(a)
    np.testing.assert_array_equal(b.numpy(np.float32, host.shape), host)
    b.copy_from(np.arange(4, dtype=np.float32), offset=8)  # elements 2..5
    got = b.numpy(np.float32)
    np.testing.assert_array_equal(got[2:6], np.arange(4))
    np.testing.assert_array_equal(got[:2], host.flat[:2])
    b.zero_()
    assert not b.numpy().any()
    with pytest.raises(ValueError, match="do not fit"):
        b.copy_from(np.zeros(1001 * 3, np.float32))
    empty = cuda.DeviceBuffer(0, "cuda:0")
    assert empty.ptr == 0 and empty.numpy().size == 0
    a.free()
    a.free()  # twice: nothing
    big = cuda.DeviceBuffer(256 << 20, "cuda:0")  # freed with the object
    free_before = wp.get_device("cuda:0").free_memory
    del big
    assert wp.get_device("cuda:0").free_memory >= free_before
    with pytest.raises(cuda.CudaError, match=r"cuMemAlloc_v2 failed on cuda:0 \(allocating \d+ bytes, [\d.]+ GiB\): "
                                             r"CUDA_ERROR_OUT_OF_MEMORY"):
        cuda.DeviceBuffer(1 << 50, "cuda:0")


@needs_gpu
def test_gpu_saxpy_launch_matches_the_cpu():
    d = wp.get_device("cuda:0")
    ptx = _ptx("saxpy", f"sm_{d.arch}")
    function = cuda.load_module(d, ("test", "saxpy"), ptx, "saxpy").function(_entry(ptx)[0])
    assert cuda.load_module(d, ("test", "saxpy"), "ignored") is cuda.load_module(d, ("test", "saxpy"), "")
    n = 1_000_003  # not a multiple of the block
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    gx, gy = cuda.DeviceBuffer.from_numpy(x, d), cuda.DeviceBuffer.from_numpy(y, d)
    record = cuda.ErrorRecord(d)
    params = _params([(gx.ptr, (n,)), (gy.ptr, (n,))], [np.float32(1.5).tobytes()], n, record.ptr)
    layout = function.parameter_layout
    if layout is not None:  # the driver's layout is KernelParams'
        assert [offset for offset, _ in layout] == params.offsets and len(layout) == 16
    cuda.launch_kernel(function, n, params, label=_label(saxpy))
    assert record.failure() is None
    np.testing.assert_array_equal(gy.numpy(np.float32), np.float32(1.5) * x + y)  # the CPU's, bit for bit
    # the same launch with the parameters as one packed buffer
    gy.copy_from(y)
    function.launch((-(-n // 256), 1, 1), (256, 1, 1), params.data, None, d.stream.cuda_stream, 0, "packed")
    np.testing.assert_array_equal(gy.numpy(np.float32), np.float32(1.5) * x + y)
    attributes = function.attributes
    assert attributes["registers"] > 0 and attributes["max_threads_per_block"] >= 256


@needs_gpu
def test_gpu_out_of_range_index_in_the_error_record():
    d = wp.get_device("cuda:0")
    ptx = _ptx("gather_float_index", f"sm_{d.arch}")
    function = cuda.load_module(d, ("test", "gather"), ptx).function(_entry(ptx)[0])
    n = 20_000
    at = np.random.default_rng(3).uniform(0, n, n).astype(np.float32)
    at[77] = 1_000_000
    x, a, y = (cuda.DeviceBuffer.from_numpy(v, d) for v in (np.ones(n, np.float32), at, np.zeros(n, np.float32)))
    record = cuda.ErrorRecord(d)
    params = _params([(x.ptr, (n,)), (a.ptr, (n,)), (y.ptr, (n,))], (), n, record.ptr)
    cuda.launch_kernel(function, n, params, label=_label(gather_float_index))
    words = record.read()
    site, thread, index, size = record.failure()
    assert words[0] > 0 and thread == 77 and index[0] == 1_000_000 and size[0] == n, words


@needs_gpu
def test_gpu_streams_and_events_order_work():
    d = wp.get_device("cuda:0")
    ptx = _ptx("spin", f"sm_{d.arch}")
    function = cuda.load_module(d, ("test", "spin"), ptx).function(_entry(ptx)[0])
    n, steps = 1 << 20, 4000
    y = cuda.DeviceBuffer.from_numpy(np.full(n, 7.0, np.float32), d)
    record = cuda.ErrorRecord(d)
    producer, consumer = wp.Stream(d), wp.Stream(d, priority=-1)
    assert producer.device is d and producer.cuda_stream != 0 and producer.cuda_stream != consumer.cuda_stream
    assert consumer.priority <= producer.priority
    start, stop = wp.Event(d, enable_timing=True), wp.Event(d, enable_timing=True)
    producer.record_event(start)
    params = cuda.KernelParams().i32(steps).array(y.ptr, (n,)).u64(n).u64(1).u64(1).u64(1).u64(record.ptr)
    cuda.launch_kernel(function, n, params, stream=producer, label=_label(spin))
    producer.record_event(stop)
    consumer.wait_stream(producer)  # the copy below waits for the kernel, the host does not
    host = np.empty(n, np.float32)
    y.copy_to(host, stream=consumer)
    np.testing.assert_array_equal(host, 2.0)
    assert wp.get_event_elapsed_time(start, stop) > 0
    assert stop.is_complete and producer.is_complete
    # ScopedStream: the device's current stream inside, restored after
    default = d.stream
    with wp.ScopedStream(consumer) as s:
        assert s is consumer and wp.get_stream() is consumer and d.stream is consumer
        event = wp.record_event()
        wp.wait_event(event)
        wp.wait_stream(producer)
    assert d.stream is default and wp.get_device() == "cpu"
    wp.synchronize_event(event)
    wp.synchronize_stream(producer)
    wp.synchronize_stream(d)
    wp.synchronize_device("cuda:0")
    wp.synchronize()
    assert record.failure() is None


@needs_gpu
def test_gpu_launches_from_threads():
    d = wp.get_device("cuda:0")
    ptx = _ptx("saxpy", f"sm_{d.arch}")
    function = cuda.load_module(d, ("test", "saxpy"), ptx).function(_entry(ptx)[0])
    errors = []

    def work(seed):
        try:
            n = 4096 + seed
            x = np.full(n, seed, np.float32)
            gx, gy = cuda.DeviceBuffer.from_numpy(x, d), cuda.DeviceBuffer.from_numpy(x, d)
            stream = wp.Stream(d)
            record = cuda.ErrorRecord(d, stream=stream)
            for _ in range(20):
                cuda.launch_kernel(function, n, _params([(gx.ptr, (n,)), (gy.ptr, (n,))],
                                                        [np.float32(1.0).tobytes()], n, record.ptr), stream=stream)
            host = np.empty(n, np.float32)
            gy.copy_to(host, stream=stream)
            assert (host == 21 * seed).all(), host[:4]
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@needs_gpu
def test_gpu_errors_name_the_call_and_the_kernel():
    d = wp.get_device("cuda:0")
    with pytest.raises(cuda.CudaError, match=r"(?s)cuModuleLoadDataEx failed on cuda:0 \(loading module "
                                             r"'broken'\): CUDA_ERROR_INVALID_PTX.*the JIT's log:\n.*"):
        cuda.load_module(d, ("test", "broken"), ".version 8.0\n.target sm_80\n.address_size 64\nnot ptx;", "'broken'")
    ptx = _ptx("saxpy", f"sm_{d.arch}")
    module = cuda.load_module(d, ("test", "saxpy"), ptx)
    with pytest.raises(ValueError, match="no kernel named 'nope'"):
        module.function("nope")
    function = module.function(_entry(ptx)[0])
    record = cuda.ErrorRecord(d)
    params = _params([(0, (1,)), (0, (1,))], [np.float32(1).tobytes()], 1, record.ptr)
    with pytest.raises(cuda.CudaError, match=r"cuLaunchKernel failed on cuda:0 \(launching kernel 'saxpy' "
                                             r"\(test_cuda_driver.py:\d+\) \(grid 1 x 1 x 1, block 4096 x 1 x 1"):
        cuda.launch_kernel(function, 1, params, block_dim=4096, label=_label(saxpy))
    if function.parameter_layout is not None:
        with pytest.raises(ValueError, match="15 parameters for a kernel that takes 16"):
            function.launch((1, 1, 1), (1, 1, 1), params.data, params.offsets[:-1])
    wp.synchronize_device(d)  # none of these broke the context
    size = cuda.get_stack_size(d)
    cuda.set_stack_size(d, 64 * 1024)
    assert cuda.get_stack_size(d) == 64 * 1024
    cuda.set_stack_size(d, size)


ILLEGAL_ADDRESS = """
import numpy as np
import adjit as wp
from adjit.runtime import cuda
import test_cuda_driver as t
d = wp.get_device("cuda:0")
ptx = t._ptx("saxpy", f"sm_{d.arch}")
function = cuda.load_module(d, "saxpy", ptx).function(t._entry(ptx)[0])
n = 1 << 16
y = cuda.DeviceBuffer(4 * n, d)
record = cuda.ErrorRecord(d)
bogus = 256   # the first page is never mapped: x is read from an illegal address
cuda.launch_kernel(function, n, t._params([(bogus, (n,)), (y.ptr, (n,))], [np.float32(1).tobytes()], n, record.ptr),
                   label=t._label(t.saxpy))
print("launched")
try:
    wp.synchronize()
    print("synchronized without a fault")
except cuda.CudaError as e:
    print(e)
"""


@needs_gpu
def test_gpu_illegal_address_is_reported_at_synchronize_naming_the_kernel():
    # In a child process: the fault leaves the context unusable.
    path = os.pathsep.join([str(Path(wp.__file__).parents[1]), str(HERE), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", ILLEGAL_ADDRESS], capture_output=True, text=True, cwd=HERE,
                         timeout=120, env=dict(os.environ, PYTHONPATH=path))
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and lines[0] == "launched", out.stdout + out.stderr
    message = "\n".join(lines[1:])
    assert re.match(r"cuCtxSynchronize failed on cuda:0: CUDA_ERROR_ILLEGAL_ADDRESS \(700\): an illegal memory "
                    r"access was encountered\. A kernel faulted: .* the last kernel launched on cuda:0 was kernel "
                    r"'saxpy' \(test_cuda_driver.py:\d+\)\. The device's context cannot be used again", message), \
        message


def _write_ptx() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in KERNELS:
        (FIXTURES / f"{name}.ptx").write_text(wp.compile(KERNELS[name], target="cuda", arch=FIXTURE_ARCH))
        print(f"wrote {FIXTURES / name}.ptx")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-ptx"]:
        _write_ptx()
    else:
        sys.exit(textwrap.dedent(f"""\
            usage: python {Path(__file__).name} --write-ptx   (regenerates {FIXTURES.relative_to(ROOT)})"""))
