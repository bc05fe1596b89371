"""adjit.torch.op's and adjit.jax.op's CUDA side through the stand-in driver
(cpp/runtime/test/fake_cuda_driver.cpp: device memory in host memory, so
copies are real; kernels load from real PTX and launch with the driver's
parameter checks, but compute nothing). test_interop_cuda.py runs this file
in a child process with ADJIT_CUDA_DRIVER pointing at the stand-in; it is
not collected on its own (no test_ prefix). PyTorch here has no CUDA, so
the torch checks cover what adjit does with torch's stream (wrapping its
handle, launching on it); the results on a GPU are test_gpu_interop.py's.
"""
import ctypes
import os

import numpy as np
import pytest

import adjit as wp

if "fake" not in os.environ.get("ADJIT_CUDA_DRIVER", ""):
    pytest.skip("runs with ADJIT_CUDA_DRIVER set to the stand-in driver (see test_interop_cuda.py)",
                allow_module_level=True)

FAKE = ctypes.CDLL(os.environ["ADJIT_CUDA_DRIVER"])


def launches() -> int:
    words = (ctypes.c_long * 6)()
    FAKE.fake_cuda_stats(words)
    return words[4]


@wp.kernel
def scale(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * s


class _Seen:
    """The launches observed: (kernel name, device, the device's current stream, host copies of the arrays)."""

    def __init__(self):
        self.launches = []

    def __call__(self, launch):
        device = wp.get_device(launch.device)
        stream = launch.stream if launch.stream is not None or not device.is_cuda else device.stream.cuda_stream
        arrays = [a.numpy().copy() for a in launch.primal if isinstance(a, wp.array)]
        self.launches.append((launch.kernel.__name__, str(device), stream, arrays))


def test_a_torch_stream_handle_is_wrapped_not_owned():
    torch_op = pytest.importorskip("adjit.torch")
    foreign = wp._runtime.cuda.Stream(0)  # a stream adjit did not make through adjit.Stream (as torch's)
    stream = torch_op.adjit_stream(foreign.handle, 0)
    assert stream.cuda_stream == foreign.handle and stream.device == "cuda:0"
    assert torch_op.adjit_stream(foreign.handle, 0) is stream  # one wrapper per handle
    other = torch_op.adjit_stream(foreign.handle, 1)
    assert other.device == "cuda:1" and other is not stream
    legacy = torch_op.adjit_stream(0, 0)  # torch's default stream: the legacy one
    assert legacy.cuda_stream == 0


def test_launches_inside_the_op_scope_go_to_the_wrapped_stream():
    torch_op = pytest.importorskip("adjit.torch")
    foreign = wp._runtime.cuda.Stream(0)
    stream = torch_op.adjit_stream(foreign.handle, 0)
    before = wp.get_stream("cuda:0")
    x = wp.array(np.arange(4.0), dtype=wp.float64, device="cuda:0", requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, device="cuda:0", requires_grad=True)
    seen = _Seen()
    count = launches()
    with wp.observe_launches(before=seen):
        with wp.ScopedStream(stream):
            assert wp.get_stream("cuda:0").cuda_stream == foreign.handle
            tape = wp.Tape()
            with tape:
                wp.launch(scale, dim=4, inputs=[x, 2.0, y])
            y.grad.fill_(1.0)  # (a helper kernel, on the same stream)
            tape.backward()
        wp.synchronize()
    assert wp.get_stream("cuda:0") == before  # the scope gave the stream back
    assert launches() == count + 3
    assert [(name, device, handle) for name, device, handle, _ in seen.launches] == [
        ("scale", "cuda:0", foreign.handle), ("scale", "cuda:0", foreign.handle)]  # forward, adjoint


def test_jax_op_runs_the_kernel_on_the_cuda_device_named():
    jax = pytest.importorskip("jax")
    import adjit.jax
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        op = adjit.jax.op(scale, outputs="y", device="cuda:1")
        assert op.device == "cuda:1"
        x0 = np.array([1.0, -2.0, 3.5])
        seen = _Seen()
        count = launches()
        with wp.observe_launches(before=seen):
            y = op(x0, 2.0)
            grad = jax.grad(lambda x: op(x, 2.0).sum())(x0)
        # the stand-in computes nothing: the results are the zeroed outputs, copied back through the host
        assert y.shape == (3,) and y.dtype == np.float64 and not np.asarray(y).any()
        assert grad.shape == (3,) and grad.dtype == np.float64
        # op: the forward; jax.grad: the forward, then the backward's forward again and its adjoint; all on
        # cuda:1, with the JAX data uploaded
        assert [(name, device) for name, device, _, _ in seen.launches] == [("scale", "cuda:1")] * 4
        for _, _, _, arrays in seen.launches:
            np.testing.assert_array_equal(arrays[0], x0)
        assert launches() == count + 4
        with pytest.raises(ValueError, match="cuda:7"):
            adjit.jax.op(scale, outputs="y", device="cuda:7")
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_jax_on_the_cpu_keeps_the_kernel_on_the_cpu():
    jax = pytest.importorskip("jax")
    import adjit.jax
    from adjit.jax import _place_of
    assert _place_of([jax.numpy.zeros(3)], "op") == "cpu"  # (JAX here has its CPU only)
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        seen = _Seen()
        with wp.observe_launches(before=seen):
            y = adjit.jax.op(scale, outputs="y")(np.arange(3.0), 2.0)
        np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0])  # computed: on the CPU
        assert [(name, device) for name, device, _, _ in seen.launches] == [("scale", "cpu")]
    finally:
        jax.config.update("jax_enable_x64", previous)
