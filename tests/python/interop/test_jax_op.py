"""adjit.jax.op: a kernel launch as a jax.custom_vjp over jax.pure_callback,
under jax.grad and jax.jit. Gradients are compared with adjit's own tape and,
in float64, with JAX's autodiff of the same function."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import adjit  # noqa: E402
import adjit.jax  # noqa: E402


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


@adjit.kernel
def gather(x: adjit.array(dtype=float), index: adjit.array(dtype=int), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = x[index[i]] * x[index[i]]


@pytest.fixture
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def _data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal(2).astype(np.float32),
            rng.standard_normal(n).astype(np.float32), rng.standard_normal((n, 3)).astype(np.float32))


def _tape_gradients(xs, ws, gy, gz):
    n = len(xs)
    x = adjit.array(xs, dtype=adjit.vec3, requires_grad=True)
    w = adjit.array(ws, requires_grad=True)
    y = adjit.zeros(n, requires_grad=True)
    z = adjit.zeros(n, dtype=adjit.vec3, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(model, dim=n, inputs=[1.5, x, w], outputs=[y, z])
    tape.backward(grads={y: gy, z: gz})
    return y.numpy(), z.numpy(), x.grad.numpy(), w.grad.numpy()


def test_jax_grad_equals_the_tape_gradients():
    xs, ws, gy, gz = _data()
    y_ref, z_ref, gx_ref, gw_ref = _tape_gradients(xs, ws, gy, gz)
    op = adjit.jax.op(model, outputs=("y", "z"))
    y, z = op(1.5, jnp.asarray(xs), jnp.asarray(ws))
    np.testing.assert_array_equal(np.asarray(y), y_ref)
    np.testing.assert_array_equal(np.asarray(z), z_ref)

    def loss(x, w):
        y, z = op(1.5, x, w)
        return (y * gy).sum() + (z * gz).sum()

    gx, gw = jax.grad(loss, argnums=(0, 1))(jnp.asarray(xs), jnp.asarray(ws))
    # the same seeds into the same adjoint: per-thread gradients are the same bits; w's
    # sums the threads' contributions with atomic adds, in an order that may differ
    np.testing.assert_array_equal(np.asarray(gx), gx_ref)
    np.testing.assert_allclose(np.asarray(gw), gw_ref, rtol=1e-5)


def test_under_jit():
    xs, ws, gy, gz = _data(seed=1)
    _, _, gx_ref, gw_ref = _tape_gradients(xs, ws, gy, gz)
    op = adjit.jax.op(model, outputs=("y", "z"))

    def loss(scale, x, w):
        y, z = op(scale, x, w)
        return (y * gy).sum() + (z * gz).sum()

    value = jax.jit(loss, static_argnums=0)(1.5, xs, ws)
    assert np.isclose(float(value), float(loss(1.5, xs, ws)), rtol=1e-6)
    grad = jax.jit(jax.grad(loss, argnums=(1, 2)), static_argnums=0)
    gx, gw = grad(1.5, jnp.asarray(xs), jnp.asarray(ws))
    np.testing.assert_array_equal(np.asarray(gx), gx_ref)
    np.testing.assert_allclose(np.asarray(gw), gw_ref, rtol=1e-5)
    gx2, _ = grad(1.5, jnp.asarray(xs), jnp.asarray(ws))   # the compiled function again
    np.testing.assert_array_equal(np.asarray(gx2), gx_ref)


def test_float64_gradients_equal_jax_autodiff(x64):
    op = adjit.jax.op(model64, outputs="y")
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.random(25))
    w = jnp.asarray(0.5 + rng.random(7))
    assert x.dtype == jnp.float64

    def loss(x, w):
        return (op(x, w, 0.75) ** 2).sum()

    def reference(x, w):
        s = sum(jnp.exp(-w[k] * x) * w[k + 3] for k in range(3))
        return ((0.75 * s + x * x * w[6]) ** 2).sum()

    np.testing.assert_allclose(float(loss(x, w)), float(reference(x, w)), rtol=1e-13)
    got = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    want = jax.grad(reference, argnums=(0, 1))(x, w)
    for g, r in zip(got, want):
        assert g.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-12, atol=1e-14)


def test_where_the_kernel_runs(x64):
    # (JAX here has its CPU only: the GPU placement is test_gpu_interop.py's and, through the
    # stand-in driver, cuda_fake_interop_checks.py's)
    from adjit.jax import _place_of
    x, w = jnp.linspace(0.0, 1.0, 5), jnp.ones(7)
    assert _place_of([x, w], "op") == "cpu"
    places = []
    jax.jit(lambda x: places.append(_place_of([x], "op")) or x)(x)  # traced: JAX's default device
    assert places == ["cpu"]
    default, on_cpu = adjit.jax.op(model64, outputs="y"), adjit.jax.op(model64, outputs="y", device="cpu")
    assert default.device is None and on_cpu.device == "cpu"
    np.testing.assert_array_equal(np.asarray(on_cpu(x, w, 2.0)), np.asarray(default(x, w, 2.0)))
    if not adjit.is_cuda_available():
        with pytest.raises(ValueError, match="'cuda:0' is not available"):
            adjit.jax.op(model64, outputs="y", device="cuda:0")


def test_integer_inputs_get_no_gradient():
    op = adjit.jax.op(gather, outputs="y", like="index")
    x = jnp.asarray([1.0, 2.0, 3.0])
    index = jnp.asarray([2, 0, 2, 2], dtype=jnp.int32)
    assert op(x, index).tolist() == [9.0, 1.0, 9.0, 9.0]
    gx = jax.jit(jax.grad(lambda x, i: op(x, i).sum()))(x, index)
    assert gx.tolist() == [2.0, 0.0, 18.0]                 # 2 x[k] per read of x[k]
    g_index = jax.grad(lambda x, i: op(x, i).sum(), argnums=1, allow_int=True)(x, index)
    assert g_index.dtype == jax.dtypes.float0


def test_errors_are_clear(x64):
    op = adjit.jax.op(model64, outputs="y")
    x, w = jnp.ones(4), jnp.ones(7)
    with pytest.raises(TypeError, match="'a'.*traced.*1-element array"):
        jax.jit(lambda x, w, a: op(x, w, a))(x, w, 1.0)
    with pytest.raises(TypeError, match="'a'.*traced"):
        jax.grad(lambda a: op(x, w, a).sum())(1.0)
    with pytest.raises(TypeError, match="must hold float64.*float32"):
        op(x.astype(jnp.float32), w, 1.0)


def test_float64_without_x64_says_how_to_enable_it():
    if jax.config.jax_enable_x64:
        pytest.skip("64-bit mode is on in this process")
    op = adjit.jax.op(model64, outputs="y")
    with pytest.raises(TypeError, match="jax_enable_x64"):
        op(jnp.ones(4), jnp.ones(7), 1.0)


def test_a_kernel_that_writes_an_input_is_refused():
    @adjit.kernel
    def clear(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = x[i]
        x[i] = 0.0

    with pytest.raises(ValueError, match="writes its parameter.*'x'"):
        adjit.jax.op(clear, outputs="y")(jnp.ones(3))


def test_adjit_jax_imports_the_real_jax():
    import jax as real
    assert adjit.jax.jax is real and hasattr(adjit.jax.jax, "custom_vjp")
