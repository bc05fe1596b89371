"""Graph capture on a CUDA device: a stream capture into a CUDA graph,
replayed with one cuGraphLaunch (runtime/capture.py), checked against the
same operations run eagerly.

As test_gpu_device.py: each test runs once per device (the CPU, where the
operations are recorded in Python and re-issued, then each CUDA device;
``ADJIT_DEVICE_TESTS=cuda`` leaves the CPU out, as the GPU machine does).
Without a CUDA device the CPU runs check the tests themselves. Keep every
kernel at module level: tools/gpu_device_check.py precompiles them for the
GPU machine, which has no compiler.
"""
import contextlib
import gc
import signal

import numpy as np
import pytest

import adjit as wp

from device_fixtures import CUDA_DEVICES, DEVICES, cuda_device, device  # noqa: F401 (fixtures)


@wp.kernel
def graph_axpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def graph_square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def graph_gather(x: wp.array(dtype=float), at: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[at[i]]


@wp.kernel
def graph_energy(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = p[i] - q[i]
    out[i] = wp.dot(d, d) * wp.length(p[i])


@wp.kernel
def graph_count_down(n: wp.array(dtype=wp.int32), total: wp.array(dtype=float)):
    n[0] = n[0] - 1
    total[0] = total[0] + 1.0


def _check_native(graph, device: str) -> None:
    assert graph.is_cuda_graph == (device != "cpu")


def _steps(x, y, z, scratch):
    """A few dependent launches, a copy and fills: a small simulation step."""
    wp.launch(graph_square, dim=x.shape[0], inputs=[x, scratch])
    wp.launch(graph_axpy, dim=x.shape[0], inputs=[0.5, scratch, y])
    wp.copy(z, y)
    wp.launch(graph_axpy, dim=x.shape[0], inputs=[-2.0, x, z])
    scratch.zero_()


def test_a_replay_gives_what_the_eager_launches_give(device):
    n = 1000
    x0 = np.linspace(-1.0, 1.0, n).astype(np.float32)
    eager = [wp.array(x0, device=device)] + [wp.zeros(n, dtype=float, device=device) for _ in range(3)]
    for _ in range(3):
        _steps(*eager)
    arrays = [wp.array(x0, device=device)] + [wp.zeros(n, dtype=float, device=device) for _ in range(3)]
    with wp.ScopedCapture(device=device) as capture:
        _steps(*arrays)
    _check_native(capture.graph, device)
    for _ in range(3):
        wp.capture_launch(capture.graph)
    wp.synchronize()
    for a, e in zip(arrays, eager):
        np.testing.assert_array_equal(a.numpy(), e.numpy())


def test_replays_read_the_values_written_since(device):
    x = wp.zeros(64, dtype=float, device=device)
    y = wp.zeros(64, dtype=float, device=device)
    with wp.ScopedCapture(device=device) as capture:
        y.zero_()
        wp.launch(graph_axpy, dim=64, inputs=[3.0, x, y])
    for step in range(4):
        values = np.arange(64, dtype=np.float32) * (step + 1)
        x.assign(values)
        wp.capture_launch(capture.graph)
        np.testing.assert_array_equal(y.numpy(), 3.0 * values)


def test_arrays_made_in_a_capture_are_kept_by_the_graph(device):
    x = wp.array(np.arange(8, dtype=np.float32), device=device)
    out = wp.zeros(8, dtype=float, device=device)
    with wp.ScopedCapture(device=device) as capture:
        scratch = wp.full(8, 2.0, dtype=float, device=device)
        copy = wp.clone(x)
        wp.launch(graph_axpy, dim=8, inputs=[1.0, copy, scratch])
        wp.copy(out, scratch)
    del scratch, copy
    gc.collect()
    for _ in range(2):
        wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(out.numpy(), np.arange(8) + 2.0)


def test_an_index_out_of_range_in_a_replay_is_reported(device):
    x = wp.zeros(100, dtype=float, device=device)
    at = wp.array(np.arange(256, dtype=np.int32) % 100, device=device)
    y = wp.zeros(256, dtype=float, device=device)
    with wp.ScopedCapture(device=device) as capture:
        wp.launch(graph_gather, dim=256, inputs=[x, at, y])
    wp.capture_launch(capture.graph)
    wp.synchronize()
    bad = np.arange(256, dtype=np.int32) % 100
    bad[77] = 1_000_000
    at.assign(bad)
    with pytest.raises(wp.OutOfBoundsError, match="1000000") as info:
        wp.capture_launch(capture.graph)  # (the CPU: here)
        wp.synchronize()  # (a GPU: here, after the replay)
    assert "kernel 'graph_gather'" in str(info.value) and "thread 77" in str(info.value)
    at.assign(np.arange(256, dtype=np.int32) % 100)
    wp.capture_launch(capture.graph)
    wp.synchronize()  # reported once; later replays run


def test_a_tape_forward_and_backward_replayed_match_eager(device):
    rng = np.random.default_rng(7)
    p0, q0 = rng.standard_normal((16, 3)), rng.standard_normal((16, 3))

    def arrays():
        return (wp.array(p0, dtype=wp.vec3d, device=device, requires_grad=True),
                wp.array(q0, dtype=wp.vec3d, device=device, requires_grad=True),
                wp.zeros(16, dtype=wp.float64, device=device, requires_grad=True))
    seed = wp.array(np.linspace(0.5, 2.0, 16), dtype=wp.float64, device=device)
    p, q, out = arrays()
    tape = wp.Tape()
    with tape:
        wp.launch(graph_energy, dim=16, inputs=[p, q, out])
    tape.backward(grads={out: seed})
    expected = [a.numpy() for a in (out, p.grad, q.grad)]
    p, q, out = arrays()
    tape = wp.Tape()
    with wp.ScopedCapture(device=device) as capture:
        with tape:
            wp.launch(graph_energy, dim=16, inputs=[p, q, out])
        tape.backward(grads={out: seed})
    _check_native(capture.graph, device)
    for _ in range(3):
        tape.zero()
        wp.capture_launch(capture.graph)
        for got, e in zip((out.numpy(), p.grad.numpy(), q.grad.numpy()), expected):
            np.testing.assert_allclose(got, e, rtol=1e-12, atol=1e-14)


def test_capture_if_and_while_choose_at_each_replay(device):
    flag = wp.array(np.array([1], np.int32), device=device)
    x = wp.array(np.ones(4, np.float32), device=device)
    y = wp.zeros(4, dtype=float, device=device)
    with wp.ScopedCapture(device=device) as capture:
        y.zero_()
        wp.capture_if(flag, on_true=lambda: wp.launch(graph_axpy, dim=4, inputs=[2.0, x, y]),
                      on_false=lambda: wp.launch(graph_axpy, dim=4, inputs=[-1.0, x, y]))
        wp.launch(graph_axpy, dim=4, inputs=[10.0, x, y])
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), [12.0] * 4)
    flag.assign(np.array([0], np.int32))
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), [9.0] * 4)
    n = wp.array(np.array([0], np.int32), device=device)
    total = wp.zeros(1, dtype=float, device=device)
    with wp.ScopedCapture(device=device) as loop:
        wp.capture_while(n, lambda: wp.launch(graph_count_down, dim=1, inputs=[n, total]))
    n.assign(np.array([5], np.int32))
    with _deadline(60):  # (a loop that never ends fails here, not the whole run)
        wp.capture_launch(loop.graph)
    assert n.numpy()[0] == 0 and total.numpy()[0] == 5.0


@contextlib.contextmanager
def _deadline(seconds: int):
    """TimeoutError in this (the main) thread after ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_what_a_cuda_graph_cannot_hold_is_refused_at_capture(cuda_device):
    x, y = wp.zeros(4, dtype=float, device=cuda_device), wp.zeros(4, dtype=float, device=cuda_device)
    for bad in (lambda: x.numpy(), wp.synchronize, lambda: wp.copy(x, wp.zeros(4, dtype=float))):
        with pytest.raises(wp.CaptureError):
            with wp.ScopedCapture(device=cuda_device):
                wp.launch(graph_axpy, dim=4, inputs=[1.0, y, x])
                bad()
    with wp.ScopedCapture(device=cuda_device) as capture:  # the device is still fine
        x.fill_(1.5)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(x.numpy(), [1.5] * 4)


def test_a_capture_on_a_stream_of_its_own(cuda_device):
    stream = wp.Stream(cuda_device)
    x = wp.array(np.arange(32, dtype=np.float32), device=cuda_device)
    y = wp.zeros(32, dtype=float, device=cuda_device)
    wp.synchronize()
    with wp.ScopedCapture(stream=stream) as capture:
        assert stream.is_capturing
        wp.launch(graph_axpy, dim=32, inputs=[2.0, x, y])
    assert not stream.is_capturing
    for _ in range(3):
        wp.capture_launch(capture.graph, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), 6.0 * np.arange(32))


def test_graphs_and_their_memory_are_freed(cuda_device):
    d = wp.get_device(cuda_device)
    x = wp.zeros(1, dtype=float, device=cuda_device)
    wp.synchronize()
    free = d.free_memory
    for _ in range(10):
        with wp.ScopedCapture(device=cuda_device) as capture:
            big = wp.zeros(16 << 20, dtype=float, device=cuda_device)  # 64 MiB, made in the capture
            wp.launch(graph_axpy, dim=1, inputs=[1.0, big, x])
        wp.capture_launch(capture.graph)
        del capture, big
        gc.collect()
    wp.synchronize()
    assert free - d.free_memory < 256 << 20  # (not the 640 MiB the graphs held)
