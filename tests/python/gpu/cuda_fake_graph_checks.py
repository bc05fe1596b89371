"""CUDA graphs through the stand-in driver (cpp/runtime/test/fake_cuda_driver.cpp:
"device memory" in host memory; launches, device copies and memsets queued
on a capturing stream are recorded into the graph and run at cuGraphLaunch;
what the real driver refuses in a capture is refused there too). The
stand-in's kernels compute nothing except the runtime's helpers (fills,
gradient sums, index ranges) and fill_u32, so results are checked through
those; the GPU tests (test_gpu_graphs.py) check kernels' results.
test_cuda_graphs.py builds the stand-in and runs this file in a child
process with ADJIT_CUDA_DRIVER pointing at it; it is not collected on its
own (no test_ prefix).
"""
import ctypes
import gc
import os

import numpy as np
import pytest

import adjit as wp
from adjit import _runtime
from adjit.runtime import capture, cuda

if "fake" not in os.environ.get("ADJIT_CUDA_DRIVER", ""):
    pytest.skip("runs with ADJIT_CUDA_DRIVER set to the stand-in driver (see test_cuda_graphs.py)",
                allow_module_level=True)

FAKE = ctypes.CDLL(os.environ["ADJIT_CUDA_DRIVER"])

FILL = """
.visible .entry fill_u32(
\t.param .u64 fill_u32_param_0,
\t.param .u32 fill_u32_param_1,
\t.param .u64 fill_u32_param_2
)
{
\tret;
}
"""


def stats() -> dict:
    words = (ctypes.c_long * 6)()
    FAKE.fake_cuda_stats(words)
    return dict(zip(("allocations", "streams", "events", "modules", "launches", "retains"), words))


def graph_stats() -> dict:
    words = (ctypes.c_long * 3)()
    FAKE.fake_cuda_graph_stats(words)
    return dict(zip(("graphs", "execs", "graph_launches"), words))


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def gather(x: wp.array(dtype=float), at: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[at[i]]


def test_the_driver_layer_captures_and_replays():
    cu = _runtime.cuda
    assert cu.graphs_supported()
    module = cu.Module(0, FILL.encode(), "fill")
    buffer = cu.DeviceAllocation(0, 16)
    stream = cu.Stream(0)
    assert cu.capture_status(0, stream.handle) == 0 and not cu.capture_open(0)
    cu.begin_capture(0, stream.handle, 1)
    assert cu.capture_status(0, stream.handle) == 1 and cu.capture_open(0)
    params = cuda.KernelParams().u64(buffer.ptr).u32(7).u64(4)
    module.function("fill_u32").launch((1, 1, 1), (32, 1, 1), params.data, params.offsets, stream.handle)
    buffer.fill(1, stream.handle, True, 0, 4)
    graph = cu.end_capture(0, stream.handle)
    assert cu.capture_status(0, stream.handle) == 0 and not cu.capture_open(0)
    assert graph.node_count == 2
    host = np.empty(4, np.uint32)
    buffer.copy_to_host(host)
    assert list(host) == [0, 0, 0, 0]  # (captured, not run)
    graph.launch(stream.handle, "a graph")
    stream.synchronize()
    buffer.copy_to_host(host)
    assert list(host) == [0x01010101, 7, 7, 7]
    before = graph_stats()
    graph.free()
    assert graph_stats()["execs"] == before["execs"] - 1 and not graph.alive
    with pytest.raises(ValueError, match="freed"):
        graph.launch(stream.handle)


def test_a_call_that_invalidates_the_capture_is_named():
    cu = _runtime.cuda
    stream = cu.Stream(0)
    cu.begin_capture(0, stream.handle, 1)
    with pytest.raises(cuda.CudaError, match=r"^cuCtxSynchronize failed on cuda:0: "
                                             r"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED \(900\)"):
        cu.synchronize_device(0)
    with pytest.raises(cuda.CudaError, match=r"^cuStreamEndCapture failed on cuda:0 \(ending a capture; .*\): "
                                             r"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED \(901\)"):
        cu.end_capture(0, stream.handle)
    assert not cu.capture_open(0)
    with pytest.raises(ValueError, match="legacy default stream"):
        cu.begin_capture(0, 0, 1)


def _work(x, y, v):
    """Fills, copies, a staged assign, an array made in the capture."""
    y.fill_(2.5)
    wp.copy(x, y, dest_offset=1, count=2)
    v.fill_(wp.vec3(1.0, -2.0, 3.5))
    y.assign(np.arange(4, dtype=np.float32) + 10)
    z = wp.clone(y)
    z.fill_(7.0)
    wp.copy(x, z, dest_offset=3, src_offset=3, count=1)
    w = wp.full(4, 4.0, dtype=float, device="cuda:0")
    wp.copy(y, w, count=1)


def _arrays():
    return (wp.zeros(4, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0"),
            wp.zeros(2, dtype=wp.vec3, device="cuda:0"))


def test_capture_then_replay_gives_the_eager_results():
    eager = _arrays()
    _work(*eager)
    expected = [a.numpy() for a in eager]
    arrays = _arrays()
    graphs = graph_stats()
    with wp.ScopedCapture(device="cuda:0") as cap:
        _work(*arrays)
    graph = cap.graph
    assert graph.is_cuda_graph and "CUDA graph" in repr(graph)
    assert graph_stats()["execs"] == graphs["execs"] + 1
    for a in arrays:  # (recorded, not run)
        assert not a.numpy().any()
    wp.capture_launch(graph)
    assert graph_stats()["graph_launches"] == graphs["graph_launches"] + 1
    for a, e in zip(arrays, expected):
        np.testing.assert_array_equal(a.numpy(), e)
    for a in arrays:
        a.zero_()
    wp.capture_launch(graph)
    for a, e in zip(arrays, expected):
        np.testing.assert_array_equal(a.numpy(), e)


def test_replays_read_the_values_the_arrays_hold_then():
    src = wp.array(np.arange(6, dtype=np.float32), device="cuda:0")
    dst = wp.zeros(6, dtype=float, device="cuda:0")
    total = wp.zeros(6, dtype=float, device="cuda:0")
    with wp.ScopedDevice("cuda:0"), wp.ScopedCapture() as cap:  # (the default device)
        wp.copy(dst, src)
    for step in range(3):
        src.assign(np.full(6, step, np.float32))
        wp.capture_launch(cap.graph)
        np.testing.assert_array_equal(dst.numpy(), np.full(6, step))
        total._buffer += dst._buffer  # (adjit_add_f32: the gradient sums' helper)
    np.testing.assert_array_equal(total.numpy(), np.full(6, 3.0))


def test_launches_in_a_graph_take_record_slots_of_its_own():
    at = wp.array(np.array([5, 2, 9, 3], np.int32), device="cuda:0")
    x, y = wp.zeros(10, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0")
    wp.synchronize()
    launches = stats()["launches"]
    with wp.ScopedCapture(device="cuda:0") as cap:
        wp.launch(gather, dim=4, inputs=[x, at, y])
        wp.launch(scale, dim=4, inputs=[x, y, 2.0])
    assert stats()["launches"] == launches  # (captured, not run)
    assert [kind for kind, _, _ in cap.graph.ops] == ["launch", "launch"]
    records = cap.graph._native.records
    assert len(records.slots) == 2 and (0 not in cuda._pools or not cuda._pools[0].pending)
    r = cuda._RECORD["ranges"]
    words = np.zeros((records.SLOTS, cuda._RECORD["words"]), np.int64)
    for values, expected in (([5, 2, 9, 3], (2, 9)), ([1, 1, 4, 0], (0, 4))):
        at.assign(np.array(values, np.int32))
        wp.capture_launch(cap.graph)
        records.chunks[0].copy_to_host(words, 0, 0, False)
        assert tuple(words[0, r:r + 2]) == expected  # (reset from the graph's copy, reduced anew)
        wp.synchronize()
    assert stats()["launches"] == launches + 6  # (the index range helper, gather, scale; twice)


def test_a_failed_check_in_a_replay_is_reported_at_the_next_synchronize():
    x, y = wp.zeros(4, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0")
    with wp.ScopedCapture(device="cuda:0") as cap:
        wp.launch(scale, dim=4, inputs=[x, y, 2.0])
    wp.capture_launch(cap.graph)
    # (the stand-in's kernels check nothing: the record is written as a kernel writes it)
    failure = np.zeros(cuda._RECORD["words"], np.int64)
    failure[cuda._RECORD["site"]] = 1
    failure[cuda._RECORD["thread"]] = 3
    failure[cuda._RECORD["index"]] = 7
    failure[cuda._RECORD["size"]] = 4
    records = cap.graph._native.records
    records.chunks[0].copy_from_host(failure, 0, 0, False)
    with pytest.raises(wp.OutOfBoundsError, match="scale"):
        wp.synchronize()
    wp.synchronize()  # (read once: the slots were zeroed)
    wp.capture_launch(cap.graph)
    wp.synchronize()


def test_what_a_cuda_graph_cannot_hold_is_a_capture_error():
    a = wp.zeros(4, dtype=float, device="cuda:0")
    other = wp.zeros(4, dtype=float, device="cuda:1")
    host = wp.zeros(4, dtype=float)
    cases = [
        (lambda: a.numpy(), "Reading device memory on the host"),
        (lambda: wp.synchronize(), r"synchronize\(\)"),
        (lambda: wp.synchronize_device("cuda:0"), r"synchronize_device\(\)"),
        (lambda: wp.get_stream("cuda:0").synchronize(), "synchronizing the stream being captured"),
        (lambda: wp.copy(a, host), "uses cpu"),
        (lambda: wp.copy(other, other), "uses cuda:1"),
        (lambda: wp.launch(scale, dim=4, inputs=[host, host, 1.0]), "uses cpu"),
        (lambda: print(a[::2].numpy()), "Reading device memory on the host"),
    ]
    for fn, message in cases:
        with pytest.raises(wp.CaptureError, match=message):
            with wp.ScopedCapture(device="cuda:0"):
                a.fill_(1.0)
                fn()
        assert not _runtime.cuda.capture_open(0) and capture.capturing() is None
    with wp.ScopedCapture(device="cuda:0") as cap:  # (a capture still works after)
        a.fill_(3.0)
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(a.numpy(), [3.0] * 4)


def test_graphs_and_the_memory_they_keep_are_freed():
    gc.collect()
    graphs, memory = graph_stats(), stats()["allocations"]
    a = wp.zeros(4, dtype=float, device="cuda:0")
    with wp.ScopedCapture(device="cuda:0") as cap:
        b = wp.full(4, 2.0, dtype=float, device="cuda:0")  # (plain memory, kept by the graph)
        wp.copy(a, b)
        a.fill_(wp.float32(1.5))
        wp.copy(a, b, count=2)
    del b
    gc.collect()
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(a.numpy(), [2.0, 2.0, 1.5, 1.5])
    assert graph_stats()["execs"] == graphs["execs"] + 1
    del cap
    gc.collect()
    now = graph_stats()
    assert (now["graphs"], now["execs"]) == (graphs["graphs"], graphs["execs"])
    del a
    gc.collect()
    wp.synchronize()
    assert stats()["allocations"] == memory


def test_a_tape_forward_and_backward_are_captured():
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
    y = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
    tape = wp.Tape()
    launches = stats()["launches"]
    with wp.ScopedCapture(device="cuda:0") as cap:
        with tape:
            wp.launch(scale, dim=4, inputs=[x, y, 3.0])
        tape.backward(grads={y: wp.array(np.ones(4, np.float32), device="cuda:0")})
    kinds = [kind for kind, _, _ in cap.graph.ops]
    assert kinds.count("launch") == 2, cap.graph.ops  # (forward and adjoint)
    assert stats()["launches"] == launches
    for _ in range(2):
        wp.capture_launch(cap.graph)
        tape.zero()
    wp.synchronize()
    assert stats()["launches"] == launches + 4
    assert x.grad.device == "cuda:0"


def test_capture_if_and_while_run_between_cuda_graphs():
    flag = wp.array(np.array([1], np.int32), device="cuda:0")
    a = wp.zeros(3, dtype=float, device="cuda:0")
    with wp.ScopedCapture(device="cuda:0") as cap:
        a.fill_(1.0)
        wp.capture_if(flag, on_true=lambda: a.fill_(5.0), on_false=lambda: a.fill_(6.0))
    segments = cap.graph._native.segments
    assert len(segments) == 2 and callable(segments[1])
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(a.numpy(), [5.0] * 3)
    flag.assign(np.array([0], np.int32))
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(a.numpy(), [6.0] * 3)
    count = wp.array(np.array([3], np.int32), device="cuda:0")

    def body():
        a.fill_(2.0)
        wp.copy(count, zero)
    zero = wp.zeros(1, dtype=wp.int32, device="cuda:0")
    with wp.ScopedCapture(device="cuda:0") as loop:
        wp.capture_while(count, body)
    wp.capture_launch(loop.graph)
    assert count.numpy()[0] == 0
    np.testing.assert_array_equal(a.numpy(), [2.0] * 3)


def test_a_capture_on_a_stream_of_its_own():
    s = wp.Stream("cuda:0")
    a = wp.zeros(4, dtype=float, device="cuda:0")
    before = wp.get_stream("cuda:0")
    with wp.ScopedCapture(stream=s) as cap:
        assert wp.get_stream("cuda:0") == s and s.is_capturing
        a.fill_(9.0)
    assert wp.get_stream("cuda:0") == before and not s.is_capturing
    wp.capture_launch(cap.graph, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(a.numpy(), [9.0] * 4)


def test_a_graph_replayed_in_a_graph():
    a = wp.zeros(2, dtype=float, device="cuda:0")
    with wp.ScopedCapture(device="cuda:0") as inner:
        a.fill_(1.0)
    with wp.ScopedCapture(device="cuda:0") as outer:
        wp.capture_launch(inner.graph)
        a._buffer += a._buffer
    a.zero_()
    wp.capture_launch(outer.graph)
    np.testing.assert_array_equal(a.numpy(), [2.0, 2.0])


def test_native_graphs_can_be_turned_off():
    a = wp.zeros(2, dtype=float, device="cuda:0")
    capture.native_cuda_graphs = False
    try:
        with wp.ScopedCapture(device="cuda:0") as cap:
            a.fill_(4.0)
    finally:
        capture.native_cuda_graphs = True
    assert not cap.graph.is_cuda_graph
    np.testing.assert_array_equal(a.numpy(), [0.0, 0.0])
    wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(a.numpy(), [4.0, 4.0])
