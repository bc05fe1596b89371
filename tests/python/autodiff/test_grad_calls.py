"""``adjit.grad(f)(args)`` (Warp's ``wp.grad``) in kernels and from Python:
values against hand-derived derivatives and float64 central differences, the
gradient of a kernel that uses it (second derivatives of f) in reverse and
forward mode, ``func_grad`` functions, builtins, and located errors."""
import os

import numpy as np
import pytest

import adjit
from adjit.testing import check_dot_product, check_gradients

f64 = adjit.float64
vec3d = adjit.types.vector(length=3, dtype=f64)
mat33d = adjit.types.matrix(shape=(3, 3), dtype=f64)
THIS_FILE = os.path.realpath(__file__)


@adjit.func
def square(x: float):
    return x * x


@adjit.func
def wave(x: f64, v: vec3d):
    # a loop, a runtime component index and a vector norm
    s = f64(0.0)
    for k in range(3):
        s += adjit.sin(x * v[k])
    return s * adjit.length(v)


def _wave(x, v):
    return np.sum(np.sin(x * v)) * np.linalg.norm(v)


@adjit.func
def det(m: mat33d):
    return adjit.determinant(m)


@adjit.func
def piecewise(x: f64):
    if x > f64(1.0):
        return x * x * x
    return adjit.exp(x)


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


# --- values ----------------------------------------------------------------------------------------

@adjit.kernel
def grads(x: adjit.array(dtype=f64), gx: adjit.array(dtype=f64), gv: adjit.array(dtype=vec3d),
          gm: adjit.array(dtype=mat33d), gp: adjit.array(dtype=f64), ga: adjit.array(dtype=f64),
          gs: adjit.array(dtype=float)):
    i = adjit.tid()
    v = vec3d(x[i], f64(2.0) * x[i], f64(0.5))
    dx, dv = adjit.grad(wave)(x[i], v)
    gx[i] = dx
    gv[i] = dv
    m = mat33d(f64(2.0), x[i], f64(0.0), f64(1.0), f64(3.0), x[i] * x[i], f64(0.5), f64(0.0), f64(1.0))
    gm[i] = adjit.grad(det)(m)
    gp[i] = adjit.grad(piecewise)(x[i])
    dy, dx2 = adjit.grad(adjit.atan2)(x[i], f64(2.0))  # a builtin
    ga[i] = dy + f64(10.0) * dx2
    gs[i] = adjit.grad(square)(float(x[i]))


def _matrix(x):
    return np.array([[2.0, x, 0.0], [1.0, 3.0, x * x], [0.5, 0.0, 1.0]])


def test_grad_values_match_derivatives():
    xs = np.array([0.3, 0.9, 1.4, 2.0], np.float64)
    n = len(xs)
    out = [adjit.zeros(n, dtype=f64), adjit.zeros(n, dtype=vec3d), adjit.zeros(n, dtype=mat33d),
           adjit.zeros(n, dtype=f64), adjit.zeros(n, dtype=f64), adjit.zeros(n, dtype=float)]
    adjit.launch(grads, dim=n, inputs=[adjit.array(xs), *out])
    gx, gv, gm, gp, ga, gs = (o.numpy() for o in out)
    for i, x in enumerate(xs):
        v = np.array([x, 2 * x, 0.5])
        np.testing.assert_allclose(gx[i], _central(lambda t: _wave(t, v), x), rtol=1e-8)
        want_v = [_central(lambda t: _wave(x, v + t * e), 0.0) for e in np.eye(3)]
        np.testing.assert_allclose(gv[i], want_v, rtol=1e-8)
        m = _matrix(x)
        np.testing.assert_allclose(gm[i], np.linalg.det(m) * np.linalg.inv(m).T, rtol=1e-12)  # cofactors
        np.testing.assert_allclose(gp[i], 3 * x * x if x > 1 else np.exp(x), rtol=1e-14)
        np.testing.assert_allclose(ga[i], 2 / (x * x + 4) + 10 * -x / (x * x + 4), rtol=1e-14)
    np.testing.assert_allclose(gs, 2 * xs.astype(np.float32), rtol=1e-7)


dsquare = adjit.grad(square)  # grad(f) named at module level


@adjit.kernel
def named(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = dsquare(x[i]) + dsquare(1.5)


def test_grad_named_at_module_level_and_called_from_python():
    x, y = adjit.array(np.array([1.0, -2.0], np.float32)), adjit.zeros(2)
    adjit.launch(named, dim=2, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [5.0, -1.0])
    assert adjit.grad(square)(3.0) == 6.0
    dx, dv = adjit.grad(wave)(f64(0.5), np.array([1.0, 2.0, 3.0]))
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dx, _central(lambda t: _wave(t, v), 0.5), rtol=1e-8)
    np.testing.assert_allclose(dv, [_central(lambda t: _wave(0.5, v + t * e), 0.0) for e in np.eye(3)],
                               rtol=1e-8)
    assert repr(dsquare) == "adjit.grad(square)"


# --- func_grad: grad() calls the hand-written adjoint ------------------------------------------

@adjit.func
def safe_sqrt(x: f64):
    return adjit.sqrt(x)


@adjit.func_grad(safe_sqrt)
def adj_safe_sqrt(x: f64, adj_ret: f64):
    adjit.adjoint[x] += adj_ret * f64(0.5) / adjit.max(adjit.sqrt(x), f64(1e-3))


@adjit.kernel
def sqrt_grad(x: adjit.array(dtype=f64), y: adjit.array(dtype=f64)):
    i = adjit.tid()
    y[i] = adjit.grad(safe_sqrt)(x[i])


def test_grad_of_a_func_with_func_grad_calls_it():
    x, y = adjit.array(np.array([0.0, 4.0])), adjit.zeros(2, dtype=f64)
    adjit.launch(sqrt_grad, dim=2, inputs=[x, y])
    # The body's derivative at 0 is inf; the func_grad's is 0.5 / 1e-3.
    np.testing.assert_allclose(y.numpy(), [500.0, 0.25], rtol=1e-14)


@adjit.func
def cube(x: f64):
    return x * x * x


@adjit.func
def cube_product(x: f64, y: f64):
    return cube(x) * y


@adjit.func_grad(cube_product)
def adj_cube_product(x: f64, y: f64, adj_ret: f64):
    # grad() inside a custom adjoint (Warp's documented use)
    adjit.adjoint[x] += adj_ret * adjit.grad(cube)(x) * y
    adjit.adjoint[y] += adj_ret * cube(x)


@adjit.kernel
def product_loss(x: adjit.array(dtype=f64), y: adjit.array(dtype=f64), out: adjit.array(dtype=f64)):
    i = adjit.tid()
    out[i] = cube_product(x[i], y[i])


def test_grad_inside_a_func_grad():
    x, y = adjit.array(np.array([0.5, -1.5]), requires_grad=True), adjit.array(np.array([2.0, 3.0]),
                                                                              requires_grad=True)
    out = adjit.zeros(2, dtype=f64, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(product_loss, dim=2, inputs=[x, y, out])
    tape.backward(grads={out: adjit.array(np.ones(2))})
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.5, -1.5]) ** 2 * [2.0, 3.0], rtol=1e-14)
    np.testing.assert_allclose(y.grad.numpy(), np.array([0.5, -1.5]) ** 3, rtol=1e-14)


# --- second order: the gradient of a kernel that uses grad() ------------------------------------

@adjit.kernel
def force(x: adjit.array(dtype=vec3d), s: adjit.array(dtype=f64), e: adjit.array(dtype=f64),
          f: adjit.array(dtype=vec3d)):
    i = adjit.tid()
    # a force from a potential, then an energy of the force
    ds, dv = adjit.grad(wave)(s[i], x[i])
    f[i] = -dv * ds
    e[i] = adjit.dot(dv, dv) + adjit.grad(piecewise)(s[i])


def _force_inputs():
    rng = np.random.default_rng(4)
    x = adjit.array(rng.uniform(0.3, 1.2, (5, 3)), dtype=vec3d, requires_grad=True)
    s = adjit.array(np.array([0.4, 0.7, 1.3, 1.8, 0.2]), requires_grad=True)
    return x, s


def test_gradient_of_a_kernel_using_grad_matches_finite_differences():
    x, s = _force_inputs()
    e, f = adjit.zeros(5, dtype=f64, requires_grad=True), adjit.zeros(5, dtype=vec3d, requires_grad=True)
    check_gradients(force, 5, [x, s], [e, f], eps=1e-6, rtol=1e-6, atol=1e-8)


def test_forward_and_reverse_mode_agree_through_grad():
    x, s = _force_inputs()

    def run(x, s):
        e, f = adjit.zeros(5, dtype=f64, requires_grad=True), adjit.zeros(5, dtype=vec3d, requires_grad=True)
        adjit.launch(force, dim=5, inputs=[x, s, e, f])
        return [e, f]
    check_dot_product(run, [x, s])


def test_jvp_through_grad_matches_finite_differences():
    x, s = _force_inputs()
    ds = adjit.array(np.array([1.0, -0.5, 0.25, 2.0, 1.0]))
    zero = adjit.zeros(5, dtype=vec3d)
    de, df = adjit.jvp(force, 5, [x, s], [zero, ds], [adjit.zeros(5, dtype=f64), adjit.zeros(5, dtype=vec3d)])
    h = 1e-6

    def energy(shift):
        e, f = adjit.zeros(5, dtype=f64), adjit.zeros(5, dtype=vec3d)
        adjit.launch(force, dim=5, inputs=[x, adjit.array(s.numpy() + shift * ds.numpy()), e, f])
        return e.numpy(), f.numpy()
    (ep, fp), (em, fm) = energy(h), energy(-h)
    np.testing.assert_allclose(de.numpy(), (ep - em) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(df.numpy(), (fp - fm) / (2 * h), rtol=1e-6, atol=1e-8)


# --- errors ------------------------------------------------------------------------------------

@adjit.func
def to_vector(x: float):
    return adjit.vec3(x, x, x)


@adjit.func
def two_results(x: float):
    return x, x


@adjit.func
def scaled(x: float, n: int):
    return x * float(n)


@adjit.func(differentiable=False)
def opaque(x: float):
    return x


@adjit.kernel
def vector_result(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(to_vector)(x[i])[0]  # E:vector_result


@adjit.kernel
def several_results(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(two_results)(x[i])  # E:several_results


@adjit.kernel
def int_argument(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(scaled)(x[i], 3)[0]  # E:int_argument


@adjit.kernel
def not_differentiable(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(opaque)(x[i])  # E:not_differentiable


@adjit.kernel
def not_a_function(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(x)(x[i])  # E:not_a_function


@adjit.kernel
def array_builtin(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.grad(adjit.atomic_add)(x, i, 1.0)  # E:array_builtin


def _line(marker):
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# E:{marker}"):
                return number
    raise AssertionError(marker)


@pytest.mark.parametrize("kernel, cls, words", [
    (vector_result, adjit.KernelTypeError, "one float scalar result, this one returns vec3"),
    (several_results, adjit.KernelTypeError, "one float scalar result, this one returns float32, float32"),
    (int_argument, adjit.KernelTypeError, "argument 2 is int32"),
    (not_differentiable, adjit.KernelTypeError, "differentiable=False"),
    (not_a_function, adjit.KernelSyntaxError, "by name"),
    (array_builtin, adjit.KernelTypeError, "grad(atomic_add): the builtin is not differentiable"),
], ids=lambda v: v.__name__ if isinstance(v, adjit.Kernel) else None)
def test_misuse_is_a_located_error(kernel, cls, words):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(1)])
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    assert os.path.realpath(err.filename) == THIS_FILE
    assert err.lineno == _line(kernel.__name__), str(err)
    assert words in str(err), str(err)


def test_grad_on_the_host_rejects_what_it_cannot_differentiate():
    with pytest.raises(TypeError, match="needs an @adjit.func or a builtin"):
        adjit.grad(len)
    with pytest.raises(TypeError, match="argument 2 is int32"):
        adjit.grad(scaled)(1.0, 3)


# --- funcs with a func_grad inside f: grad() needs their forward rule ---------------------------

@adjit.func
def clipped_root(x: f64):
    return adjit.sqrt(x)


@adjit.func_grad(clipped_root)
def adj_clipped_root(x: f64, adj_ret: f64):
    adjit.adjoint[x] += adj_ret * f64(0.5) / adjit.max(adjit.sqrt(x), f64(1e-3))


@adjit.func
def uses_clipped_root(x: f64):
    return clipped_root(x) * x  # E:uses_clipped_root


@adjit.kernel
def grad_through_func_grad(x: adjit.array(dtype=f64)):
    i = adjit.tid()
    x[i] = adjit.grad(uses_clipped_root)(x[i])


def test_grad_through_a_func_with_only_a_func_grad_is_an_error_naming_it():
    with pytest.raises(adjit.CompileError) as info:
        adjit.launch(grad_through_func_grad, dim=1, inputs=[adjit.zeros(1, dtype=f64)])
    message = str(info.value)
    assert f"{THIS_FILE}\":{_line('uses_clipped_root')}" in message, message
    assert "no forward-mode rule (give it one with @func_jvp)" in message, message


@adjit.func
def root_with_rules(x: f64):
    return adjit.sqrt(x)


@adjit.func_grad(root_with_rules)
def adj_root_with_rules(x: f64, adj_ret: f64):
    adjit.adjoint[x] += adj_ret * f64(0.5) / adjit.max(adjit.sqrt(x), f64(1e-3))


@adjit.func_jvp(root_with_rules)
def root_with_rules_jvp(x: f64, dx: f64):
    return dx * f64(0.5) / adjit.max(adjit.sqrt(x), f64(1e-3))


@adjit.func
def uses_root_with_rules(x: f64):
    return root_with_rules(x) * x


@adjit.kernel
def grad_through_func_jvp(x: adjit.array(dtype=f64), y: adjit.array(dtype=f64)):
    i = adjit.tid()
    y[i] = adjit.grad(uses_root_with_rules)(x[i])


def test_grad_through_a_func_with_func_grad_and_func_jvp_uses_the_jvp():
    x, y = adjit.array(np.array([0.0, 4.0])), adjit.zeros(2, dtype=f64)
    adjit.launch(grad_through_func_jvp, dim=2, inputs=[x, y])
    # d/dx sqrt(x) x = sqrt(x) + x * (the rule's derivative of sqrt)
    np.testing.assert_allclose(y.numpy(), [0.0 + 0.0 * 500.0, 2.0 + 4.0 * 0.25], rtol=1e-14)
