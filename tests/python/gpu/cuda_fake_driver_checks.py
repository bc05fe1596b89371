"""The CUDA driver layer through the stand-in driver
(cpp/runtime/test/fake_cuda_driver.cpp: two fake devices, "device memory"
in host memory, a current context required where the real driver requires
one). test_cuda_driver.py::test_the_layer_through_a_stand_in_driver builds
the stand-in and runs this file in a child process with ADJIT_CUDA_DRIVER
pointing at it; it is not collected on its own (no test_ prefix).

The last test leaves cuda:1's context faulted, as a real fault would.
"""
import ctypes
import gc
import os
import threading

import numpy as np
import pytest

import adjit as wp
from adjit import _runtime
from adjit.runtime import cuda

if "fake" not in os.environ.get("ADJIT_CUDA_DRIVER", ""):
    pytest.skip("runs with ADJIT_CUDA_DRIVER set to the stand-in driver (see test_cuda_driver.py)",
                allow_module_level=True)

FAKE = ctypes.CDLL(os.environ["ADJIT_CUDA_DRIVER"])  # the instance the runtime opened

FILL = """
.visible .entry fill_u32(
\t.param .u64 fill_u32_param_0,
\t.param .u32 fill_u32_param_1,
\t.param .u64 fill_u32_param_2
)
{
\tret;
}
.visible .entry fault()
{
\tret;
}
"""
LABEL = "kernel 'fill_u32' (kernels.py:12)"


def stats() -> dict:
    words = (ctypes.c_long * 6)()
    FAKE.fake_cuda_stats(words)
    return dict(zip(("allocations", "streams", "events", "modules", "launches", "retains"), words))


def in_new_thread(fn):
    """fn() on a thread that has no current context; its result."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_devices_and_their_properties():
    assert wp.is_cuda_available() and wp.cuda_unavailable_reason() == ""
    assert wp.get_cuda_device_count() == 2 and _runtime.cuda.driver_version() == 13000
    cpu, d0, d1 = wp.get_devices()
    assert cpu.is_cpu and d0.is_cuda and d1.alias == "cuda:1" and d1.ordinal == 1
    assert wp.get_cuda_devices() == [d0, d1] and wp.get_device("cuda:1") is d1
    assert d1.name == "Fake CUDA Device 1" and d1.arch == 90 and d1.sm_count == 132
    assert d1.total_memory == 16 << 30 and d1.pci_bus_id == "0000:42:00"
    assert d1.is_uva and d1.is_mempool_supported and d1.max_threads_per_block == 1024 and d1.warp_size == 32
    assert wp.get_device("cuda") is d0 and d0 == "cuda" and d0 == "cuda:0" and d1 != "cuda"
    assert wp.get_cuda_device() is d0 and wp.get_cuda_device(1) is d1
    assert wp.is_device_available("cuda:1") and not wp.is_device_available("cuda:2")
    with pytest.raises(ValueError, match=r"'cuda:2' is not available: this machine has 2 CUDA devices "
                                         r"\(cuda:0 to cuda:1\)"):
        wp.get_device("cuda:2")
    with pytest.raises(ValueError, match="unknown device 'cuda:x'"):
        wp.get_device("cuda:x")
    assert wp.get_preferred_device() == "cpu"  # arrays and launches run on the CPU only so far
    retains = stats()["retains"]
    assert d1.free_memory == 16 << 30 and d1.has_context  # asking retains the context, once
    assert d1.free_memory == 16 << 30 and stats()["retains"] == retains + 1


def test_every_call_makes_its_context_current_and_restores_the_threads():
    # The stand-in refuses calls without a current context, as the driver does.
    def work():
        before = FAKE.fake_cuda_has_current()
        buffer = cuda.DeviceBuffer.from_numpy(np.arange(5, dtype=np.int32), "cuda:1")
        values = buffer.numpy(np.int32)
        stream = wp.Stream("cuda:1")
        stream.synchronize()
        buffer.free()
        return before, values, FAKE.fake_cuda_has_current()

    before, values, after = in_new_thread(work)
    assert before == 0 and after == 0 and list(values) == [0, 1, 2, 3, 4]


def test_set_device_and_scoped_device():
    def work():
        wp.set_device("cuda:1")
        current = FAKE.fake_cuda_has_current()
        device = wp.get_device()
        with wp.ScopedDevice("cuda:0") as d0:
            inside = wp.get_device(), wp.get_device("cuda")
        return current, device, d0, inside, wp.get_device("cuda")

    current, device, d0, inside, after = in_new_thread(work)
    assert current == 1 and device == "cuda:1" and inside == (d0, d0) and after == "cuda:1"
    assert wp.get_device() == "cpu"  # the default device is per thread
    # arrays go to the device named (cuda_fake_array_checks.py tests them)
    assert wp.zeros(3, device="cuda:1").device == "cuda:1"
    assert wp.array(np.zeros(3), device=wp.get_device("cuda:0")).device == "cuda:0"


def test_memory_round_trip_copies_and_free():
    live = stats()["allocations"]
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = cuda.DeviceBuffer.from_numpy(host, "cuda:0")
    assert a.nbytes == 48 and a.ptr != 0 and stats()["allocations"] == live + 1
    np.testing.assert_array_equal(a.numpy(np.float32, (3, 4)), host)
    b = cuda.DeviceBuffer(48, "cuda:0")
    b.copy_from(a)
    b.copy_from(np.array([-1, -2], np.float32), offset=8)
    np.testing.assert_array_equal(b.numpy(np.float32), [0, 1, -1, -2, 4, 5, 6, 7, 8, 9, 10, 11])
    b.copy_from(host[:, ::2])  # not contiguous: copied contiguous first
    np.testing.assert_array_equal(b.numpy(np.float32)[:6], [0, 2, 4, 6, 8, 10])
    out = np.empty(4, np.float32)
    assert b.copy_to(out, offset=16) is out and list(out) == [8, 10, 6, 7]
    b.zero_()
    assert not b.numpy().any()
    with pytest.raises(ValueError, match="copy_from_host: 52 bytes at offset 0 do not fit in 48 bytes"):
        b.copy_from(np.zeros(13, np.float32))
    with pytest.raises(ValueError, match="copy_to_host: 8 bytes at offset 44 do not fit"):
        b.copy_to(np.empty(2, np.float32), offset=44)
    with pytest.raises(ValueError, match="writeable C-contiguous"):
        b.copy_to(np.empty((4, 4), np.float32)[:, 0])
    empty = cuda.DeviceBuffer(0, "cuda:0")
    assert empty.ptr == 0 and empty.numpy().size == 0
    b.free()
    b.free()
    with pytest.raises(ValueError, match="freed"):
        b.copy_from(np.zeros(1, np.float32))
    assert stats()["allocations"] == live + 1
    del a
    gc.collect()
    assert stats()["allocations"] == live
    with pytest.raises(cuda.CudaError, match=r"^cuMemAlloc_v2 failed on cuda:0 \(allocating 1125899906842624 "
                                             r"bytes, 1048576.00 GiB\): CUDA_ERROR_OUT_OF_MEMORY \(2\): out of "
                                             r"memory$"):
        cuda.DeviceBuffer(1 << 50, "cuda:0")
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        cuda.DeviceBuffer(-1, "cuda:0")


def test_stream_ordered_allocations_and_raw_copies():
    d = wp.get_device("cuda:0")
    stream = wp.Stream(d)
    live = stats()["allocations"]
    block = _runtime.cuda.DeviceAllocation(0, 64, stream.cuda_stream, True)
    _runtime.cuda.memset(0, block.ptr, 3, 64, stream.cuda_stream, True)
    host = np.empty(16, np.uint8)
    _runtime.cuda.memcpy_dtoh(0, host, block.ptr + 8, stream.cuda_stream, True)
    assert (host == 3).all() and stats()["allocations"] == live + 1
    _runtime.cuda.memcpy_htod(0, block.ptr, np.arange(8, dtype=np.uint8))
    _runtime.cuda.memcpy_dtod(0, block.ptr + 32, block.ptr, 8)
    _runtime.cuda.memcpy_dtoh(0, host, block.ptr + 28)
    assert list(host[:12]) == [3, 3, 3, 3, 0, 1, 2, 3, 4, 5, 6, 7]
    del block
    assert stats()["allocations"] == live


def test_streams_events_and_scoped_streams():
    d = wp.get_device("cuda:0")
    live = stats()
    s = wp.Stream(d)
    high = wp.Stream(d, priority=-3)  # clamped to -1, as Warp's
    assert s.device is d and s.cuda_stream != 0 and s.priority == 0 and high.priority == -1
    assert s.__cuda_stream__() == (0, s.cuda_stream) and s != high and s == s
    assert stats()["streams"] == live["streams"] + 2
    default = d.stream
    assert default is d.stream and default.cuda_stream not in (0, s.cuda_stream) and d.has_stream
    start, stop = wp.Event(d, enable_timing=True), wp.Event(d, enable_timing=True)
    assert s.record_event(start) is start and s.record_event(stop) is stop
    assert wp.get_event_elapsed_time(start, stop) == 1.5 and start.is_complete and s.is_complete
    untimed = s.record_event()
    assert isinstance(untimed, wp.Event) and untimed.device is d and not untimed.enable_timing
    with pytest.raises(cuda.CudaError, match=r"^cuEventElapsedTime failed on cuda:0: CUDA_ERROR_INVALID_HANDLE "
                                             r"\(400\): invalid resource handle$"):
        wp.get_event_elapsed_time(start, untimed)
    high.wait_event(untimed)
    high.wait_stream(s)
    assert s.cached_event is s.cached_event
    with pytest.raises(RuntimeError, match="Event from device cuda:1 cannot be recorded on stream from device cuda:0"):
        s.record_event(wp.Event("cuda:1"))
    with pytest.raises(RuntimeError, match="Stream from device cuda:1 cannot be used on device cuda:0"):
        wp.set_stream(wp.Stream("cuda:1"), device=d)
    with pytest.raises(NotImplementedError, match="interprocess"):
        wp.Event(d, interprocess=True)
    with pytest.raises(TypeError, match="priority must be an integer"):
        wp.Stream(d, priority=0.5)
    with wp.ScopedStream(s) as inside:
        assert inside is s and wp.get_stream() is s and wp.get_device() is d
        wp.wait_stream(high)
        event = wp.record_event()
        wp.wait_event(event)
        wp.synchronize_stream()
    assert d.stream is default and wp.get_device() == "cpu"
    with wp.ScopedStream(None) as nothing:
        assert nothing is None
    wp.set_stream(s, device=d)
    assert wp.get_stream(d) is s
    wp.set_stream(default, device="cuda:0", sync=True)
    external = wp.Stream(d, cuda_stream=s.cuda_stream)
    assert external.cuda_stream == s.cuda_stream
    del external
    gc.collect()
    assert stats()["streams"] == live["streams"] + 2  # s and high (not the wrapper's, not cuda:1's collected one)
    wp.synchronize_event(stop)
    wp.synchronize_stream(s)
    wp.synchronize_stream(d)
    wp.synchronize_device(d)
    wp.synchronize()
    peak = stats()["events"]
    del s, high, start, stop, untimed, event, inside
    gc.collect()
    assert stats()["events"] < peak
    assert stats()["streams"] == live["streams"]
    # what is left: the default stream's cached event (ScopedStream's sync), and any event a traceback holds
    assert stats()["events"] <= live["events"] + 2


def test_modules_launches_and_their_errors():
    d = wp.get_device("cuda:0")
    module = cuda.load_module(d, ("fill", 1), FILL, "'fill'")
    assert cuda.load_module(d, ("fill", 1), "not loaded again") is module
    function = module.function("fill_u32")
    assert function.name == "fill_u32" and function.parameter_layout == [(0, 8), (8, 4), (16, 8)]
    assert function.attributes["registers"] == 24 and function.attributes["local_bytes"] == 16
    out = cuda.DeviceBuffer(4 * 8, d)
    params = cuda.KernelParams().u64(out.ptr).u32(7).u64(5)
    assert params.offsets == [0, 8, 16]
    launches = stats()["launches"]
    cuda.launch_kernel(function, 5, params, label=LABEL)
    assert list(out.numpy(np.uint32)) == [7] * 5 + [0] * 3 and stats()["launches"] == launches + 1
    assert _runtime.cuda.last_launch(0) == LABEL
    # one packed buffer, laid out as the kernel's parameters are
    packed = cuda.KernelParams().u64(out.ptr).u32(9).u64(8)
    function.launch((1, 1, 1), (8, 1, 1), packed.data, None, d.stream.cuda_stream, 0, "packed")
    assert list(out.numpy(np.uint32)) == [9] * 8 and _runtime.cuda.last_launch(0) == "packed"
    with pytest.raises(ValueError, match=r"^kernel 'fill_u32' \(kernels.py:12\): 2 parameters for a kernel that "
                                         r"takes 3$"):
        function.launch((1, 1, 1), (1, 1, 1), params.data, params.offsets[:2], 0, 0, LABEL)
    with pytest.raises(ValueError, match="parameter 2 \\(8 bytes at offset 20\\) is past the 24 bytes"):
        function.launch((1, 1, 1), (1, 1, 1), params.data, [0, 8, 20])
    with pytest.raises(ValueError, match="20 bytes of packed parameters for a kernel whose parameters take 24"):
        function.launch((1, 1, 1), (1, 1, 1), params.data[:20])
    with pytest.raises(ValueError, match="must be positive"):
        function.launch((0, 1, 1), (1, 1, 1), params.data)
    with pytest.raises(cuda.CudaError, match=r"^cuLaunchKernel failed on cuda:0 \(launching kernel 'fill_u32' "
                                             r"\(kernels.py:12\) \(grid 1 x 1 x 1, block 2048 x 1 x 1, 0 bytes of "
                                             r"dynamic shared memory\)\): CUDA_ERROR_INVALID_VALUE \(1\): invalid "
                                             r"argument$"):
        cuda.launch_kernel(function, 5, params, block_dim=2048, label=LABEL)
    assert _runtime.cuda.last_launch(0) == "packed"  # a launch that failed did not run
    with pytest.raises(ValueError, match="module has no kernel named 'nope'"):
        module.function("nope")
    with pytest.raises(cuda.CudaError, match=r"^cuModuleLoadDataEx failed on cuda:0 \(loading module 'broken'\): "
                                             r"CUDA_ERROR_INVALID_PTX \(218\): a PTX JIT compilation failed; the "
                                             r"JIT's log:\nptxas application ptx input, line 3; error   : fake "
                                             r"syntax error$"):
        cuda.load_module(d, "broken", "FAKE_BAD_PTX", "'broken'")
    with pytest.raises(ValueError, match="block_dim must be positive"):
        cuda.launch_kernel(function, 5, params, block_dim=0)
    on_stream = wp.Stream(d)
    cuda.launch_kernel(function, 5, params, stream=on_stream)
    with pytest.raises(ValueError, match="the stream is on cuda:1, not cuda:0"):
        cuda.launch_kernel(function, 5, params, stream=wp.Stream("cuda:1"))
    modules = stats()["modules"]
    cuda.load_module("cuda:1", ("fill", 1), FILL)  # per device
    assert stats()["modules"] == modules + 1
    cuda.unload_modules()
    del module
    gc.collect()
    assert stats()["modules"] == modules  # cuda:0's is kept by `function`
    del function
    gc.collect()
    assert stats()["modules"] == modules - 1


def test_error_records():
    record = cuda.ErrorRecord("cuda:0", ranges=[(3, 9), (-1, -1)])
    words = record.read()
    assert words.shape == (19,) and list(words[10:14]) == [3, 9, -1, -1] and record.failure() is None
    failed = words.copy()
    failed[:10] = [3, 77, 1_000_000, 0, 0, 0, 20_000, 0, 0, 0]
    record.buffer.copy_from(failed)
    assert record.failure() == (2, 77, (1_000_000, 0, 0, 0), (20_000, 0, 0, 0))
    failed[0] = _runtime.LAUNCH_UNPROVEN
    record.buffer.copy_from(failed)
    assert record.failure() == _runtime.LAUNCH_UNPROVEN
    with pytest.raises(ValueError, match="at most 4 index ranges"):
        cuda.ErrorRecord("cuda:0", ranges=[(0, 1)] * 5)


def test_limits():
    assert cuda.get_stack_size("cuda:0") == 1024
    cuda.set_stack_size("cuda:0", 65536)
    assert cuda.get_stack_size("cuda:0") == 65536 and cuda.get_stack_size("cuda:1") == 1024
    with pytest.raises(cuda.CudaError, match="cuCtxSetLimit failed on cuda:0 \\(limit 7 to 1\\)"):
        _runtime.cuda.set_limit(0, 7, 1)
    with pytest.raises(ValueError, match="no CUDA device 5: this machine has 2 \\(cuda:0 to cuda:1\\)"):
        _runtime.cuda.synchronize_device(5)


def test_a_forked_child_cannot_use_cuda():
    buffer = cuda.DeviceBuffer(16, "cuda:0")
    pid = os.fork()
    if pid == 0:  # the child: CUDA is gone, and says why; freeing does nothing
        ok = "forked" in wp.cuda_unavailable_reason() and _runtime.cuda.device_count() == 0
        try:
            buffer.numpy()
            ok = False
        except cuda.CudaUnavailableError as e:
            ok = ok and "fork()" in str(e)
        del buffer
        gc.collect()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert wp.cuda_unavailable_reason() == "" and buffer.numpy().size == 16


def test_a_kernel_fault_is_reported_at_the_next_wait_naming_the_last_kernel():
    # (last: cuda:1's context stays faulted, as a real fault leaves it)
    d1 = wp.get_device("cuda:1")
    module = cuda.load_module(d1, "faulting", FILL)
    buffer = cuda.DeviceBuffer(16, d1)
    cuda.launch_kernel(module.function("fill_u32"), 1, cuda.KernelParams().u64(buffer.ptr).u32(1).u64(1),
                       label="kernel 'first' (a.py:1)")
    cuda.launch_kernel(module.function("fault"), 1, cuda.KernelParams(), label="kernel 'broken' (b.py:2)")
    expected = (r"CUDA_ERROR_ILLEGAL_ADDRESS \(700\): an illegal memory access was encountered\. A kernel faulted: "
                r"the driver reports such faults at the next call; the last kernel launched on cuda:1 was kernel "
                r"'broken' \(b.py:2\)\. The device's context cannot be used again: restart the process$")
    with pytest.raises(cuda.CudaError, match=r"^cuCtxSynchronize failed on cuda:1: " + expected):
        wp.synchronize_device(d1)
    with pytest.raises(cuda.CudaError, match=r"^cuCtxSynchronize failed on cuda:1: " + expected):
        wp.synchronize()
    with pytest.raises(cuda.CudaError, match=r"^cuMemcpyDtoHAsync_v2 failed on cuda:1 \(copying 16 bytes\): "
                                             + expected):
        buffer.numpy()
    del buffer  # freeing on a faulted context: nothing raised
    gc.collect()
    wp.synchronize_device("cuda:0")  # the other device is unaffected
