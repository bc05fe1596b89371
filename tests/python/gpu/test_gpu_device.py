"""Kernels on a CUDA device through adjit's own runtime: arrays on the
device, launches, the tape's adjoints, checks read back, interop.

Each test runs once per device (the ``device`` fixture: the CPU, then each
CUDA device; ``ADJIT_DEVICE_TESTS=cuda`` leaves the CPU out, as the GPU
machine does, where the kernels are precompiled for its GPU only). Without
a CUDA device the CUDA tests do not exist and the CPU runs check the tests
themselves. Expected values are computed with numpy, and
gradients are checked against central differences of float64 kernels run
on the same device, so the tests need no CPU kernels: the GPU machine runs
them with the runtime alone and the kernels of this file precompiled
(tools/gpu_device_check.py exports them with ``adjit.export(targets=[arch])``).
Keep every kernel at module level (the export finds them there).
"""
import gc
import os

import numpy as np
import pytest

import adjit as wp

from device_fixtures import CUDA_DEVICES, DEVICES, cuda_device, device  # noqa: F401 (fixtures)


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def length_cross(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = wp.length(wp.cross(a[i], b[i])) * a[i]


@wp.kernel
def settle(x: wp.array(dtype=wp.float64), steps: wp.array(dtype=int), y: wp.array(dtype=wp.float64)):
    # a runtime-bounded loop with break and continue, differentiated through
    i = wp.tid()
    v = x[i]
    for k in range(steps[i]):
        if v > wp.float64(4.0):
            break
        if k % 3 == 2:
            continue
        v = v * wp.float64(1.1) + wp.sin(v) * wp.float64(0.25)
    y[i] = v * v


@wp.kernel
def relax(x: wp.array(dtype=wp.float64), steps: wp.array(dtype=int), y: wp.array(dtype=wp.float64)):
    # a long runtime loop: its adjoint's checkpoints outgrow a GPU thread's frame
    i = wp.tid()
    v = x[i]
    for k in range(steps[i]):
        v = v * wp.float64(0.9999) + wp.sin(v) * wp.float64(0.0001)
    y[i] = v


@wp.kernel
def scatter_add(values: wp.array(dtype=float), at: wp.array(dtype=int), total: wp.array(dtype=float),
                counts: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(total, at[i], values[i])
    wp.atomic_add(counts, at[i], 1)


@wp.kernel
def gather(x: wp.array(dtype=float), at: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[at[i]]


@wp.kernel
def transform_points(p: wp.array(dtype=wp.vec3), m: wp.mat33, shift: wp.vec3, s: float,
                     out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = m * p[i] * s + shift


@wp.kernel
def blur(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    n, m = src.shape[0], src.shape[1]
    left = src[i, wp.max(j - 1, 0)]
    right = src[i, wp.min(j + 1, m - 1)]
    up = src[wp.max(i - 1, 0), j]
    down = src[wp.min(i + 1, n - 1), j]
    dst[i, j] = 0.2 * (src[i, j] + left + right + up + down)


@wp.kernel
def square(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def smallest(x: wp.array(dtype=float), at: wp.array(dtype=int), m: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_min(m, at[i], x[i])


def _rng():
    return np.random.default_rng(7)


def _central_differences(run, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d sum(seed * run(x)) / dx by central differences (``run``: host
    float64 values in, host values out; the seed is folded into ``run``)."""
    grad = np.zeros_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + h
        up = run(x)
        flat[k] = old - h
        down = run(x)
        flat[k] = old
        out[k] = (up - down) / (2 * h)
    return grad


def test_saxpy(device):
    rng = _rng()
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    xs, ys = wp.array(x, device=device), wp.array(y, device=device)
    wp.launch(saxpy, dim=1000, inputs=[2.5, xs, ys])
    np.testing.assert_allclose(ys.numpy(), 2.5 * x + y, rtol=1e-6)
    assert xs.device == device


def test_values_and_matrices_are_packed_as_the_ptx_takes_them(device):
    rng = _rng()
    p = rng.standard_normal((64, 3)).astype(np.float32)
    m = rng.standard_normal((3, 3)).astype(np.float32)
    shift = np.array([1.0, -2.0, 0.5], np.float32)
    out = wp.zeros(64, dtype=wp.vec3, device=device)
    wp.launch(transform_points, dim=64, inputs=[wp.array(p, dtype=wp.vec3, device=device), wp.mat33(m),
                                                wp.vec3(*shift), 0.5, out])
    np.testing.assert_allclose(out.numpy(), p @ m.T * 0.5 + shift, rtol=1e-5, atol=1e-6)


def test_two_dimensional_launch(device):
    src = _rng().standard_normal((17, 23)).astype(np.float32)
    dst = wp.zeros((17, 23), dtype=float, device=device)
    wp.launch(blur, dim=(17, 23), inputs=[wp.array(src, device=device), dst])
    padded = np.pad(src, 1, mode="edge")
    expected = 0.2 * (src + padded[1:-1, :-2] + padded[1:-1, 2:] + padded[:-2, 1:-1] + padded[2:, 1:-1])
    np.testing.assert_allclose(dst.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_launch_on_a_view_with_an_offset(device):
    x = wp.array(np.arange(10, dtype=np.float32), device=device)
    y = wp.zeros(10, dtype=float, device=device)
    wp.launch(saxpy, dim=4, inputs=[1.0, x[3:7], y[5:9]])
    np.testing.assert_array_equal(y.numpy(), [0, 0, 0, 0, 0, 3, 4, 5, 6, 0])


def test_launch_on_strided_views(device):
    # every third element of x, every other of y; a transposed 2-D array
    x = wp.array(np.arange(12, dtype=np.float32), device=device, requires_grad=True)
    y = wp.zeros(8, dtype=float, device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(saxpy, dim=4, inputs=[2.0, x[::3], y[1::2]])
    np.testing.assert_array_equal(y.numpy(), [0, 0, 0, 6, 0, 12, 0, 18])
    tape.backward(grads={y: wp.ones(8, dtype=float, device=device)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 0] * 4)
    src = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    dst = wp.zeros((7, 5), dtype=float, device=device)
    wp.launch(blur, dim=(7, 5), inputs=[wp.array(src, device=device).transpose(), dst])
    expected = np.empty((7, 5), np.float32)
    t = src.T
    for i in range(7):
        for j in range(5):
            expected[i, j] = 0.2 * (t[i, j] + t[i, max(j - 1, 0)] + t[i, min(j + 1, 4)] + t[max(i - 1, 0), j]
                                    + t[min(i + 1, 6), j])
    np.testing.assert_allclose(dst.numpy(), expected, rtol=1e-6)


def test_tape_gradients_match_central_differences(device):
    rng = _rng()
    a0, b0 = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    seed = rng.standard_normal((8, 3))
    a = wp.array(a0, dtype=wp.vec3d, device=device, requires_grad=True)
    b = wp.array(b0, dtype=wp.vec3d, device=device, requires_grad=True)
    out = wp.zeros(8, dtype=wp.vec3d, device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(length_cross, dim=8, inputs=[a, b, out])
    tape.backward(grads={out: wp.array(seed, dtype=wp.vec3d, device=device)})
    assert a.grad.device == device
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(np.cross(a0, b0), axis=1)[:, None] * a0, rtol=1e-12)

    def loss(av, bv):
        o = wp.zeros(8, dtype=wp.vec3d, device=device)
        wp.launch(length_cross, dim=8, inputs=[wp.array(av, dtype=wp.vec3d, device=device),
                                               wp.array(bv, dtype=wp.vec3d, device=device), o])
        return float(np.sum(seed * o.numpy()))

    np.testing.assert_allclose(a.grad.numpy(), _central_differences(lambda v: loss(v, b0), a0.copy()),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(b.grad.numpy(), _central_differences(lambda v: loss(a0, v), b0.copy()),
                               rtol=1e-6, atol=1e-8)


def _settle(v: float, steps: int) -> float:
    for k in range(steps):
        if v > 4.0:
            break
        if k % 3 == 2:
            continue
        v = v * 1.1 + np.sin(v) * 0.25
    return v * v


def test_runtime_loop_adjoint(device):
    rng = _rng()
    x0 = rng.uniform(0.1, 3.0, 16)
    steps = rng.integers(0, 40, 16).astype(np.int32)
    x = wp.array(x0, dtype=wp.float64, device=device, requires_grad=True)
    y = wp.zeros(16, dtype=wp.float64, device=device, requires_grad=True)
    s = wp.array(steps, device=device)
    tape = wp.Tape()
    with tape:
        wp.launch(settle, dim=16, inputs=[x, s, y])
    tape.backward(grads={y: wp.ones(16, dtype=wp.float64, device=device)})
    np.testing.assert_allclose(y.numpy(), [_settle(v, n) for v, n in zip(x0, steps)], rtol=1e-12)

    def total(v):
        o = wp.zeros(16, dtype=wp.float64, device=device)
        wp.launch(settle, dim=16, inputs=[wp.array(v, dtype=wp.float64, device=device), s, o])
        return float(o.numpy().sum())

    np.testing.assert_allclose(x.grad.numpy(), _central_differences(total, x0.copy()), rtol=1e-6, atol=1e-8)


def _relax(v: float, steps: int) -> tuple[float, float]:
    """relax's value and its derivative by the chain rule."""
    d = 1.0
    for _ in range(steps):
        v, d = v * 0.9999 + np.sin(v) * 0.0001, d * (0.9999 + np.cos(v) * 0.0001)
    return v, d


def test_long_runtime_loop_adjoint(device):
    # 20,000 to 50,000 iterations: 2 ceil(sqrt(n)) checkpoints of 8 bytes do
    # not fit a thread's 2 KiB frame buffer, so they go to the device heap
    rng = _rng()
    x0 = rng.uniform(0.1, 3.0, 8)
    steps = rng.integers(20_000, 50_000, 8).astype(np.int32)
    x = wp.array(x0, dtype=wp.float64, device=device, requires_grad=True)
    y = wp.zeros(8, dtype=wp.float64, device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(relax, dim=8, inputs=[x, wp.array(steps, device=device), y])
    tape.backward(grads={y: wp.ones(8, dtype=wp.float64, device=device)})
    expected = [_relax(v, n) for v, n in zip(x0, steps)]
    np.testing.assert_allclose(y.numpy(), [v for v, _ in expected], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), [d for _, d in expected], rtol=1e-10)


_EXHAUST_THE_HEAP = """
import sys
import numpy as np
import adjit as wp
from adjit.errors import DeviceHeapError
sys.path.insert(0, {here!r})
from test_gpu_device import relax, saxpy
wp.config.cuda_heap_bytes = 0  # (the driver's default heap, 8 MiB: far too small here)
n, device = 20_000, {device!r}
x = wp.array(np.full(n, 0.5), dtype=wp.float64, device=device, requires_grad=True)
y = wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True)
tape = wp.Tape()
with tape:
    wp.launch(relax, dim=n, inputs=[x, wp.full(n, 20_000, dtype=int, device=device), y])
try:
    tape.backward(grads={{y: wp.ones(n, dtype=wp.float64, device=device)}})
    wp.synchronize()
except DeviceHeapError as e:
    print("raised:", e)
# the context survives: a launch after it runs and is right
a = wp.array(np.arange(4, dtype=np.float32), device=device)
b = wp.zeros(4, dtype=float, device=device)
wp.launch(saxpy, dim=4, inputs=[2.0, a, b])
print("after:", b.numpy().tolist())
"""


def test_running_out_of_device_heap_is_an_error_not_a_fault(cuda_device):
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", _EXHAUST_THE_HEAP.format(here=here, device=cuda_device)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "raised:" in run.stdout and "kernel 'relax'" in run.stdout and "no device heap left" in run.stdout, \
        run.stdout[-3000:]
    assert "after: [0.0, 2.0, 4.0, 6.0]" in run.stdout, run.stdout[-3000:]


def test_atomic_min_gradient_goes_to_the_winners(device):
    # m's old value passes its gradient on only where no thread changed the element
    x = wp.array(np.array([3.0, 1.0, 4.0, 2.0], np.float32), device=device, requires_grad=True)
    m = wp.array(np.array([5.0, 5.0, -100.0], np.float32), device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(smallest, dim=4, inputs=[x, wp.array(np.array([0, 0, 1, 1], np.int32), device=device), m])
    np.testing.assert_array_equal(m.numpy(), [1.0, 2.0, -100.0])
    tape.backward(grads={m: wp.array(np.array([1.0, 2.0, 3.0], np.float32), device=device)})
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0, 2.0])
    np.testing.assert_array_equal(m.grad.numpy(), [0.0, 0.0, 3.0])


def test_atomics(device):
    rng = _rng()
    n = 1 << 16
    values = rng.standard_normal(n).astype(np.float32)
    at = rng.integers(0, 97, n).astype(np.int32)
    total = wp.zeros(97, dtype=float, device=device)
    counts = wp.zeros(97, dtype=int, device=device)
    wp.launch(scatter_add, dim=n, inputs=[wp.array(values, device=device), wp.array(at, device=device), total,
                                         counts])
    np.testing.assert_array_equal(counts.numpy(), np.bincount(at, minlength=97))
    np.testing.assert_allclose(total.numpy(), np.bincount(at, weights=values.astype(np.float64), minlength=97),
                               rtol=1e-4, atol=1e-3)


def test_an_index_out_of_range_is_reported_at_synchronize(device):
    x = wp.zeros(100, dtype=float, device=device)
    at = np.arange(256, dtype=np.int32) % 100
    at[77] = 1_000_000
    y = wp.zeros(256, dtype=float, device=device)
    with pytest.raises(wp.OutOfBoundsError, match="1000000") as info:
        wp.launch(gather, dim=256, inputs=[x, wp.array(at, device=device), y])  # (the CPU: here)
        wp.synchronize()  # (a GPU: here)
    assert "kernel 'gather'" in str(info.value) and "thread 77" in str(info.value)
    wp.launch(gather, dim=4, inputs=[x, wp.array(np.arange(4, dtype=np.int32), device=device), y])
    wp.synchronize()  # the error was reported once; later launches run


def test_clone_and_copy_are_differentiated_on_the_device(device):
    x0 = np.array([1.0, 2.0, 3.0, 4.0])
    x = wp.array(x0, dtype=wp.float64, device=device, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        c = wp.clone(x)
        wp.launch(square, dim=4, inputs=[c, y])
    tape.backward(grads={y: wp.ones(4, dtype=wp.float64, device=device)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0)


def test_copies_between_host_and_device(device):
    host = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    gpu = host.to(device)
    np.testing.assert_array_equal(gpu[:, 1].numpy(), [1, 5, 9])
    gpu[:, 1].assign(np.array([-1.0, -2.0, -3.0]))
    back = gpu.to("cpu").numpy()
    np.testing.assert_array_equal(back[:, 1], [-1, -2, -3])
    np.testing.assert_array_equal(back[:, 0], [0, 4, 8])


def test_streams(cuda_device):
    device = cuda_device
    stream = wp.Stream(device)
    x = wp.array(np.ones(1000, np.float32), device=device)
    y = wp.zeros(1000, dtype=float, device=device)
    wp.launch(saxpy, dim=1000, inputs=[3.0, x, y], stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(1000, 3.0))


def test_memory_returns_to_where_it_was(cuda_device):
    device = cuda_device
    d = wp.get_device(device)
    gc.collect()
    wp.synchronize()
    before = d.free_memory
    for _ in range(10_000):
        wp.zeros(1024, dtype=float, device=device)
    gc.collect()
    wp.synchronize()
    assert d.free_memory >= before - (64 << 20)  # (the pool may keep a little)


def test_torch_sees_the_memory(cuda_device):
    device = cuda_device
    x = wp.array(np.arange(6, dtype=np.float32), device=device)
    torch = pytest.importorskip("torch")
    t = torch.as_tensor(x, device=device)
    assert t.data_ptr() == x.ptr
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(x.numpy(), np.arange(6) * 2)
    through_dlpack = torch.from_dlpack(x)
    assert through_dlpack.data_ptr() == x.ptr and through_dlpack.device.type == "cuda"
    back = wp.from_torch(through_dlpack)
    assert back.ptr == x.ptr and back.device == device


def test_gathers_and_fills(device):
    rng = _rng()
    x0 = rng.standard_normal(1000).astype(np.float32)
    at0 = rng.integers(0, 1000, 5000).astype(np.int32)
    y = wp.zeros(5000, dtype=float, device=device)
    wp.launch(gather, dim=5000, inputs=[wp.array(x0, device=device), wp.array(at0, device=device), y])
    np.testing.assert_array_equal(y.numpy(), x0[at0])  # (the proved path: the indices are in range)
    v = wp.zeros(300, dtype=wp.vec3, device=device)
    v.fill_(wp.vec3(1.0, -2.0, 3.5))
    np.testing.assert_array_equal(v.numpy(), np.tile([1.0, -2.0, 3.5], (300, 1)).astype(np.float32))


def test_forward_mode_on_the_device(device):
    rng = _rng()
    a0, b0 = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    da, db = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))

    def run(av, bv):
        o = wp.zeros(8, dtype=wp.vec3d, device=device)
        wp.launch(length_cross, dim=8, inputs=[wp.array(av, dtype=wp.vec3d, device=device),
                                               wp.array(bv, dtype=wp.vec3d, device=device), o])
        return o.numpy()

    a = wp.array(a0, dtype=wp.vec3d, device=device)
    b = wp.array(b0, dtype=wp.vec3d, device=device)
    out = wp.zeros(8, dtype=wp.vec3d, device=device)
    (tangent,) = wp.jvp(length_cross, 8, inputs=[a, b], tangents=[da, db], outputs=[out])
    assert tangent.device == device
    h = 1e-6
    expected = (run(a0 + h * da, b0 + h * db) - run(a0 - h * da, b0 - h * db)) / (2 * h)
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(np.cross(a0, b0), axis=1)[:, None] * a0, rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6, atol=1e-8)
