"""adjit.torch.op and adjit.jax.op on a GPU, and the distributed torch
example with NCCL on one GPU.

As in test_gpu_device.py, each test runs once per device (the ``device``
fixture: the CPU, then each CUDA device; ``ADJIT_DEVICE_TESTS=cuda`` leaves
the CPU out, as the GPU machine does, where the kernels are precompiled for
its GPU only). Without a CUDA device the CUDA tests do not exist and the CPU
runs check the tests themselves. A test skips, saying why, where PyTorch or
JAX has no CUDA. Gradients are compared with PyTorch's (JAX's) own autograd
of the same function on the same device and data, in float64, and with
torch.autograd.gradcheck (float64 finite differences). The GPU machine runs
this file with the runtime alone: keep every kernel at module level
(tools/gpu_device_check.py exports them for the GPU's arch).
"""
import inspect
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: no 75% of the GPU up front

import numpy as np
import pytest

import adjit
import adjit as wp

from device_fixtures import CUDA_DEVICES, DEVICES, cuda_device, device  # noqa: F401 (fixtures)
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "distributed_torch.py"


def _torch(device):
    """PyTorch, where it can hold tensors on ``device`` (else the test skips)."""
    torch = pytest.importorskip("torch")
    import adjit.torch  # noqa: F401
    if device != "cpu" and not torch.cuda.is_available():
        pytest.skip(f"PyTorch has no CUDA here (torch {torch.__version__}): it cannot put tensors on {device}")
    return torch


def _jax(device):
    """JAX and its device for adjit's ``device`` (else the test skips)."""
    jax = pytest.importorskip("jax")
    import adjit.jax  # noqa: F401
    if device == "cpu":
        return jax, jax.devices("cpu")[0]
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU here: {e}")
    ordinal = wp.get_device(device).ordinal
    if ordinal >= len(gpus):
        pytest.skip(f"JAX has {len(gpus)} GPU(s), not {device}")
    return jax, gpus[ordinal]


@wp.kernel
def decay(x: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), a: wp.float64,
          y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = wp.float64(0.0)
    for k in range(3):
        s = s + wp.exp(-w[k] * x[i]) * w[k + 3]
    y[i] = a * s + x[i] * x[i] * w[6]


@wp.kernel
def swirl(scale: float, x: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), y: wp.array(dtype=float),
          z: wp.array(dtype=wp.vec3), count: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    y[i] = scale * wp.length(v) * w[0] + wp.sin(v[1]) * w[1]
    z[i] = wp.cross(v, wp.vec3(w[0], w[1], 1.0)) * w[1]
    wp.atomic_add(count, 0, 1)


# examples/distributed_torch.py's kernel, character for character (so the same cache entries: the GPU
# machine has this file's kernels precompiled, not the example's)
@adjit.kernel
def predict(x: adjit.array(dtype=adjit.float64), params: adjit.array(dtype=adjit.float64),
            y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    t = x[i]
    y[i] = params[0] * adjit.sin(params[1] * t + params[2]) + params[3] * t


def _decay_reference(torch_or_jnp, x, w, a):
    s = sum(torch_or_jnp.exp(-w[k] * x) * w[k + 3] for k in range(3))
    return a * s + x * x * w[6]


class _Launches:
    """Observes launches: (kernel, adjit device, the CUstream it is queued on)."""

    def __init__(self):
        self.seen = []

    def __call__(self, launch):
        device = wp.get_device(launch.device)
        stream = launch.stream if launch.stream is not None or not device.is_cuda else device.stream.cuda_stream
        self.seen.append((launch.kernel.__name__, str(device), stream))


# --- adjit.torch.op ---------------------------------------------------------------------------------------


def test_torch_op_gradients_equal_torchs_autograd(device):
    torch = _torch(device)
    op = wp.torch.op(decay, outputs="y")
    gen = torch.Generator().manual_seed(3)
    x0 = torch.rand(257, dtype=torch.float64, generator=gen)
    w0 = 0.5 + torch.rand(7, dtype=torch.float64, generator=gen)
    seed = torch.randn(257, dtype=torch.float64, generator=gen).to(device)
    x = x0.to(device).requires_grad_()
    w = w0.to(device).requires_grad_()
    launches = _Launches()
    with wp.observe_launches(before=launches):
        y = op(x, w, 0.75)
        (y * seed).sum().backward()
    assert y.device == x.device and y.dtype == torch.float64 and y.requires_grad
    assert x.grad.device == x.device and w.grad.device == x.device
    # the forward and its adjoint ran on the tensors' device
    assert [(name, where) for name, where, _ in launches.seen] == [("decay", device)] * 2

    x2, w2 = x0.to(device).requires_grad_(), w0.to(device).requires_grad_()
    y2 = _decay_reference(torch, x2, w2, 0.75)
    (y2 * seed).sum().backward()
    torch.testing.assert_close(y.detach(), y2.detach(), rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-11, atol=1e-13)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-11, atol=1e-12)  # (summed over threads by atomics)

    # retain_graph: the same gradient again, in new tensors
    y = op(x, w, 0.75)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(first, second, rtol=0, atol=0)
    assert first.data_ptr() != second.data_ptr() and first.device == x.device


def test_torch_gradcheck_float64(device):
    torch = _torch(device)
    op = wp.torch.op(decay, outputs="y")
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(9, dtype=torch.float64, generator=gen).to(device).requires_grad_()
    w = (0.5 + torch.rand(7, dtype=torch.float64, generator=gen)).to(device).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w: op(x, w, 0.75), (x, w), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_torch_op_vectors_non_contiguous_inputs_and_integer_outputs(device):
    torch = _torch(device)
    op = wp.torch.op(swirl, outputs=("y", "z", "count"), shapes={"count": 1})
    gen = torch.Generator().manual_seed(5)
    n = 1000
    base = torch.randn(3, n, generator=gen).to(device)
    x = base.t().requires_grad_()  # (n, 3), not contiguous: copied on the device
    assert not x.is_contiguous()
    w = torch.tensor([0.3, -0.7], device=device, requires_grad=True)
    gy, gz = torch.randn(n, generator=gen).to(device), torch.randn(n, 3, generator=gen).to(device)
    y, z, count = op(1.5, x, w)
    assert y.shape == (n,) and z.shape == (n, 3) and count.shape == (1,)
    assert count.dtype == torch.int32 and not count.requires_grad and count.item() == n
    ((y * gy).sum() + (z * gz).sum()).backward()

    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    y2 = 1.5 * torch.linalg.vector_norm(x2, dim=1) * w2[0] + torch.sin(x2[:, 1]) * w2[1]
    other = torch.stack([w2[0], w2[1], torch.ones((), device=x2.device)]).expand(n, 3)
    z2 = torch.linalg.cross(x2, other, dim=1) * w2[1]
    ((y2 * gy).sum() + (z2 * gz).sum()).backward()
    torch.testing.assert_close(y.detach(), y2.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(z.detach(), z2.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-4, atol=1e-3)  # (float32 sums in another order)


def test_torch_op_runs_on_torchs_current_stream(cuda_device):
    device = cuda_device
    torch = _torch(device)
    op = wp.torch.op(decay, outputs="y")
    side = torch.cuda.Stream(device)
    gen = torch.Generator().manual_seed(9)
    x0, w0 = torch.rand(1 << 20, dtype=torch.float64, generator=gen), 0.5 + torch.rand(7, dtype=torch.float64)
    launches = _Launches()
    with torch.cuda.stream(side):
        # produced on the side stream just before the op: the op's launch must queue after it there
        big = x0.to(device)
        x = (big * 1.0).sin().asin().requires_grad_()
        w = w0.to(device).requires_grad_()
        with wp.observe_launches(before=launches):
            y = op(x, w, 2.0)
            y.sum().backward()  # (autograd runs a backward on its forward's stream)
        expected = _decay_reference(torch, x.detach(), w.detach(), 2.0)
    side.synchronize()
    assert [(name, stream) for name, _, stream in launches.seen] == [("decay", side.cuda_stream)] * 2
    torch.testing.assert_close(y.detach(), expected, rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(x.grad, torch.autograd.grad(_decay_reference(torch, x, w, 2.0).sum(), x)[0],
                               rtol=1e-11, atol=1e-13)
    wp.synchronize()  # (no failed check on the device)


def test_torch_op_refuses_tensors_on_two_devices(cuda_device):
    torch = _torch(cuda_device)
    op = wp.torch.op(decay, outputs="y")
    x = torch.rand(4, dtype=torch.float64, device=cuda_device)
    with pytest.raises(ValueError, match=rf"different devices \('x' on {cuda_device}, 'w' on cpu\)"):
        op(x, torch.rand(7, dtype=torch.float64), 1.0)


def test_torch_compile_around_the_op(device):
    # (the op is a graph break for dynamo: torch.compile runs it eagerly between compiled parts)
    torch = _torch(device)
    op = wp.torch.op(decay, outputs="y")
    gen = torch.Generator().manual_seed(4)
    x = torch.rand(33, dtype=torch.float64, generator=gen).to(device).requires_grad_()
    w = (0.5 + torch.rand(7, dtype=torch.float64, generator=gen)).to(device).requires_grad_()
    compiled = torch.compile(lambda x, w: (op(x, w, 0.75) ** 2).sum(), backend="aot_eager")
    loss = compiled(x, w)
    loss.backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    reference = (_decay_reference(torch, x2, w2, 0.75) ** 2).sum()
    reference.backward()
    torch.testing.assert_close(loss.detach(), reference.detach(), rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-11, atol=1e-13)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-11, atol=1e-12)


# --- adjit.jax.op -----------------------------------------------------------------------------------------


@pytest.fixture
def x64():
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def test_jax_op_gradients_equal_jax_autodiff(device, x64):
    jax, jax_device = _jax(device)
    jnp = jax.numpy
    op = wp.jax.op(decay, outputs="y")
    rng = np.random.default_rng(2)
    x = jax.device_put(jnp.asarray(rng.random(65)), jax_device)
    w = jax.device_put(jnp.asarray(0.5 + rng.random(7)), jax_device)

    def loss(x, w):
        return (op(x, w, 0.75) ** 2).sum()

    def reference(x, w):
        return (_decay_reference(jnp, x, w, 0.75) ** 2).sum()

    launches = _Launches()
    with wp.observe_launches(before=launches):
        y = op(x, w, 0.75)
        grads = jax.grad(loss, argnums=(0, 1))(x, w)
    # eager on the device's arrays: adjit ran the kernel there; jax.grad traces: JAX's default device
    # (forward; forward again and adjoint)
    traced = wp.jax._place_of([], "op")
    assert [(name, where) for name, where, _ in launches.seen] == [("decay", device)] + [("decay", traced)] * 3
    assert traced == "cpu" or device == "cpu" or wp.get_device(traced).is_cuda
    np.testing.assert_allclose(np.asarray(y), np.asarray(_decay_reference(jnp, x, w, 0.75)), rtol=1e-12)
    want = jax.grad(reference, argnums=(0, 1))(x, w)
    for g, r in zip(grads, want):
        assert g.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-11, atol=1e-13)
    jitted = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)  # traced: on JAX's default device
    for g, r in zip(jitted, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-11, atol=1e-13)
    wp.synchronize()


# --- examples/distributed_torch.py ------------------------------------------------------------------------


def _backend(device) -> str:
    """NCCL on a GPU, gloo on the CPU (else the test skips)."""
    import torch.distributed as dist
    backend = "gloo" if device == "cpu" else "nccl"
    if not dist.is_available() or not (dist.is_gloo_available() if backend == "gloo" else dist.is_nccl_available()):
        pytest.skip(f"torch.distributed has no {backend} here")
    return backend


def test_distributed_example_with_nccl_on_one_gpu(device):
    torch = _torch(device)
    import torch.distributed as dist
    backend = _backend(device)
    import importlib.util
    spec = importlib.util.spec_from_file_location("distributed_torch_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    # The example's kernel, as this file's (whose PTX the GPU machine has, exported from here):
    # the same source, so the same function.
    assert inspect.getsource(example.predict.pyfunc) == inspect.getsource(predict.pyfunc)
    example.predict_op = wp.torch.op(predict, outputs="y")
    steps, n = 30, 1000
    where = torch.device(device)
    if where.type == "cuda":
        torch.cuda.set_device(where)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        result = example.train(0, 1, steps, n, 0.1, comm_device=where if backend == "nccl" else None,
                               device=where)
    finally:
        dist.destroy_process_group()
    assert result["device"] == device and result["world_size"] == 1

    # the same training in torch alone, float64 on the CPU
    x, y = example.make_data(n)
    params = torch.nn.Parameter(torch.tensor(example.INITIAL_PARAMS, dtype=torch.float64))
    optimizer = torch.optim.SGD([params], lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        a, b, c, d = params
        loss = ((a * torch.sin(b * x + c) + d * x - y) ** 2).sum() / n
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.2 * losses[0]  # it trains
    np.testing.assert_allclose(result["losses"], losses, rtol=1e-9)
    np.testing.assert_allclose(result["params"], params.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_distributed_example_runs_as_a_script_with_nccl(device, tmp_path):
    """The script itself, a group of one (NCCL; on the CPU: one process without torch.distributed). Its
    own kernel is compiled where the compiler is, else found in the cache: the same source as this
    file's predict, the same entries."""
    _torch(device)
    backend = _backend(device)
    out = tmp_path / "params.json"
    run = subprocess.run([sys.executable, str(EXAMPLE), "--nprocs", "1", "--backend", backend, "--device",
                          device, "--steps", "10", "--n", "500", "--out", str(out)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["device"] == device and len(result["losses"]) == 10
    assert result["losses"][-1] < result["losses"][0]
