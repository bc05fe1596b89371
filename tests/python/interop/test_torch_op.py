"""adjit.torch.op: a kernel launch as a torch.autograd.Function whose
backward is adjit's adjoint. Gradients through loss.backward() are compared
with adjit's own tape, and with torch.autograd.gradcheck (float64 finite
differences)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import adjit  # noqa: E402
import adjit.torch  # noqa: E402


@adjit.kernel
def model(scale: float, x: adjit.array(dtype=adjit.vec3), w: adjit.array(dtype=float),
          y: adjit.array(dtype=float), z: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    v = x[i]
    y[i] = scale * adjit.length(v) * w[0] + adjit.sin(v[1]) * w[1]
    z[i] = adjit.cross(v, adjit.vec3(w[0], w[1], 1.0)) * w[1]


@adjit.kernel
def model64(x: adjit.array(dtype=adjit.float64), w: adjit.array(dtype=adjit.float64), a: adjit.float64,
            y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    s = adjit.float64(0.0)
    for k in range(3):
        s = s + adjit.exp(-w[k] * x[i]) * w[k + 3]
    y[i] = a * s + x[i] * x[i] * w[6]


def test_gradients_through_backward_equal_the_tape_gradients():
    rng = np.random.default_rng(0)
    n = 64
    xs = rng.standard_normal((n, 3)).astype(np.float32)
    ws = rng.standard_normal(2).astype(np.float32)
    gy = rng.standard_normal(n).astype(np.float32)
    gz = rng.standard_normal((n, 3)).astype(np.float32)

    # adjit alone, on its tape
    x = adjit.array(xs, dtype=adjit.vec3, requires_grad=True)
    w = adjit.array(ws, requires_grad=True)
    y = adjit.zeros(n, requires_grad=True)
    z = adjit.zeros(n, dtype=adjit.vec3, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(model, dim=n, inputs=[1.5, x, w], outputs=[y, z])
    tape.backward(grads={y: gy, z: gz})

    # the same launch inside torch
    op = adjit.torch.op(model, outputs=("y", "z"))
    xt = torch.tensor(xs, requires_grad=True)
    wt = torch.tensor(ws, requires_grad=True)
    yt, zt = op(1.5, xt, wt)
    assert yt.shape == (n,) and zt.shape == (n, 3) and yt.dtype == torch.float32
    np.testing.assert_array_equal(yt.detach().numpy(), y.numpy())
    np.testing.assert_array_equal(zt.detach().numpy(), z.numpy())
    loss = (yt * torch.from_numpy(gy)).sum() + (zt * torch.from_numpy(gz)).sum()
    loss.backward()
    # the same seeds into the same adjoint: per-thread gradients are the same bits; w's
    # sums the threads' contributions with atomic adds, in an order that may differ
    np.testing.assert_array_equal(xt.grad.numpy(), x.grad.numpy())
    np.testing.assert_allclose(wt.grad.numpy(), w.grad.numpy(), rtol=1e-5)


def test_gradcheck_float64():
    op = adjit.torch.op(model64, outputs="y")
    torch.manual_seed(0)
    x = torch.rand(13, dtype=torch.float64, requires_grad=True)
    w = (0.5 + torch.rand(7, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w: op(x, w, 0.75), (x, w), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_gradients_equal_torchs_own_for_the_same_function():
    op = adjit.torch.op(model64, outputs="y")
    torch.manual_seed(1)
    x = torch.rand(20, dtype=torch.float64, requires_grad=True)
    w = torch.rand(7, dtype=torch.float64, requires_grad=True)
    (op(x, w, 2.0) ** 2).sum().backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    s = sum(torch.exp(-w2[k] * x2) * w2[k + 3] for k in range(3))
    ((2.0 * s + x2 * x2 * w2[6]) ** 2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-12, atol=1e-12)


def test_non_contiguous_inputs_are_copied():
    op = adjit.torch.op(model, outputs=("y", "z"))
    base = torch.randn(3, 32, dtype=torch.float32)
    x_strided = base.t().requires_grad_()                 # (32, 3), not contiguous
    assert not x_strided.is_contiguous()
    x_contig = x_strided.detach().contiguous().requires_grad_()
    w = torch.tensor([0.3, -0.7])
    for x in (x_strided, x_contig):
        y, z = op(2.0, x, w)
        (y.sum() + z.square().sum()).backward()
    torch.testing.assert_close(x_strided.grad, x_contig.grad, rtol=0, atol=0)
    torch.testing.assert_close(op(2.0, x_strided, w)[0], op(2.0, x_contig, w)[0], rtol=0, atol=0)


def test_repeated_backward_with_retain_graph_is_the_same():
    op = adjit.torch.op(model64, outputs="y")
    x = torch.rand(9, dtype=torch.float64, requires_grad=True)
    w = torch.rand(7, dtype=torch.float64, requires_grad=True)
    y = op(x, w, 1.0)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(first, second, rtol=0, atol=0)
    assert first.data_ptr() != second.data_ptr()


def test_options_shapes_dim_keywords_and_no_grad():
    @adjit.kernel
    def head(x: adjit.array(dtype=float), k: int, y: adjit.array(dtype=float), count: adjit.array(dtype=int)):
        i = adjit.tid()
        y[i] = x[i] * x[i + k]
        adjit.atomic_add(count, 0, 1)

    op = adjit.torch.op(head, outputs=["y", "count"], inputs=["k", "x"],
                        shapes={"y": lambda k, x: x.shape[0] - k, "count": 1})
    x = torch.arange(6, dtype=torch.float32, requires_grad=True)
    y, count = op(x=x, k=2)
    assert y.tolist() == [0.0, 3.0, 8.0, 15.0] and count.tolist() == [4]
    assert count.dtype == torch.int32 and not count.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 3.0, 4.0, 6.0, 2.0, 3.0]  # x[j + 2] + x[j - 2]
    with torch.no_grad():
        assert not op(2, x)[0].requires_grad


def test_dim_may_differ_from_the_output_shape():
    @adjit.kernel
    def total(x: adjit.array(dtype=float), s: adjit.array(dtype=float)):
        adjit.atomic_add(s, 0, x[adjit.tid()])

    op = adjit.torch.op(total, outputs="s", shapes={"s": 1}, dim="x")
    x = torch.rand(10, requires_grad=True)
    s = op(x)
    torch.testing.assert_close(s, x.sum().reshape(1))
    (3 * s).sum().backward()
    assert x.grad.tolist() == [3.0] * 10


def test_an_input_modified_in_place_after_the_forward_is_an_error():
    op = adjit.torch.op(model64, outputs="y")
    x = torch.rand(4, dtype=torch.float64, requires_grad=True)
    w = torch.rand(7, dtype=torch.float64, requires_grad=True)
    y = op(x, w, 1.0)
    with torch.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_errors_are_clear():
    op = adjit.torch.op(model64, outputs="y")
    x = torch.rand(4, dtype=torch.float64)
    w = torch.rand(7, dtype=torch.float64)
    with pytest.raises(TypeError, match="must hold float64.*float32"):
        op(x.float(), w, 1.0)
    with pytest.raises(ValueError, match="no gradient.*1-element array"):
        op(x, w, torch.tensor(1.0, dtype=torch.float64, requires_grad=True))
    op(x, w, torch.tensor(1.0, dtype=torch.float64))      # a tensor without grad is a value
    with pytest.raises(ValueError, match=r"different devices \('x' on meta, 'w' on cpu\).*one device"):
        op(x.to("meta"), w, 1.0)
    with pytest.raises(ValueError, match="'x' is on 'meta'.*runs on CPU and CUDA tensors"):
        op(x.to("meta"), w.to("meta"), 1.0)
    with pytest.raises(ValueError, match="1-d array"):
        op(x.reshape(2, 2), w, 1.0)
    with pytest.raises(TypeError, match="missing argument"):
        op(x, w)
    with pytest.raises(TypeError, match="torch.Tensor"):
        op(np.zeros(4), w, 1.0)
    with pytest.raises(ValueError, match="not a parameter"):
        adjit.torch.op(model64, outputs="out")
    with pytest.raises(ValueError, match="each parameter"):
        adjit.torch.op(model64, outputs="y", inputs=["x", "w"])
    with pytest.raises(ValueError, match="not an array parameter"):
        adjit.torch.op(model64, outputs="a")


def test_a_kernel_that_writes_an_input_is_refused():
    @adjit.kernel
    def scale_in_place(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = x[i]
        x[i] = 0.0

    op = adjit.torch.op(scale_in_place, outputs="y")
    x = torch.ones(3)
    with pytest.raises(ValueError, match="writes its parameter.*'x'"):
        op(x)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_torch_compile_runs_the_op_between_compiled_parts():
    op = adjit.torch.op(model64, outputs="y")
    torch.manual_seed(2)
    x = torch.rand(11, dtype=torch.float64, requires_grad=True)
    w = torch.rand(7, dtype=torch.float64, requires_grad=True)
    # (aot_eager: dynamo and autograd without inductor's C++ build; the default backend gives the same)
    compiled = torch.compile(lambda x, w: (op(x, w, 2.0) ** 2).sum(), backend="aot_eager")
    loss = compiled(x, w)
    loss.backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    eager = (op(x2, w2, 2.0) ** 2).sum()
    eager.backward()
    torch.testing.assert_close(loss, eager, rtol=1e-12, atol=0)
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-12, atol=0)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-12, atol=0)


def test_adjit_torch_imports_the_real_torch():
    import torch as real
    assert adjit.torch.torch is real and hasattr(adjit.torch.torch, "autograd")
