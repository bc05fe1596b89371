"""Forward mode on the CPU, in float64: ``adjit.jvp`` (one launch of a
kernel's tangent kernel), ``adjit.autograd.jvp`` (a Python function of
launches) and ``adjit.autograd.jacobian(mode=...)``.

Each kernel's tangents are checked against float64 central differences along
the same direction, and with the dot-product identity <u, J v> (forward) ==
<J^T u, v> (reverse, through adjit's Tape) to 1e-12; forward-mode Jacobians
equal reverse-mode ones to 1e-12.
"""
import numpy as np
import pytest

import adjit as wp
from adjit import _runtime, loader
from adjit import types as T
from adjit.variant import VariantSpec


# --- kernels ----------------------------------------------------------------

@wp.kernel
def arith_math(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    b = wp.sin(a * s) + wp.exp(-a) * wp.log(a + wp.float64(2.0)) - wp.sqrt(a * a + s)
    c = wp.pow(a, wp.float64(3.0)) / (wp.float64(1.0) + wp.tanh(b)) + wp.atan2(b, a)
    y[i] = wp.max(b, c) * wp.min(a, s) + wp.abs(b - c)


@wp.kernel
def vectors(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.vec3d),
            n: wp.array(dtype=wp.float64)):
    i = wp.tid()
    w = m[i] * v[i]
    u = wp.cross(w, v[i]) + wp.normalize(w) * wp.length(v[i])
    u.x = u.y * u.z
    out[i] = u
    n[i] = wp.dot(u, w) + wp.determinant(m[i])


@wp.kernel
def control(x: wp.array(dtype=wp.float64), steps: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    acc = wp.float64(0.0)
    for j in range(steps):
        if acc > wp.float64(2.0):
            acc = wp.sqrt(acc) + a
        else:
            acc = acc + a * a + wp.float64(j) * wp.float64(0.1)
    k = int(0)
    while acc > wp.float64(1.0):
        acc = acc * wp.float64(0.6) + wp.float64(0.1) * a
        k += 1
        if k > 20:
            break
    y[i] = acc


@wp.kernel
def accumulate(x: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(total, 0, wp.sin(x[i]) * x[i])


# --- cases: (kernel, dim, make_args, float argument positions, outputs) -----

rng = np.random.default_rng(7)
N = 32
X = rng.uniform(0.3, 1.4, N)
V = rng.uniform(-1.0, 1.0, (N, 3))
M = rng.uniform(-1.0, 1.0, (N, 3, 3)) + 2.0 * np.eye(3)

CASES = {
    "arith_math": (arith_math, N,
                   lambda x=X, s=0.7: [wp.array(x, dtype=wp.float64), s, wp.zeros(N, dtype=wp.float64)],
                   [0, 1], [2]),
    "vectors": (vectors, N,
                lambda v=V, m=M: [wp.array(v, dtype=wp.vec3d), wp.array(m, dtype=wp.mat33d),
                                  wp.zeros(N, dtype=wp.vec3d), wp.zeros(N, dtype=wp.float64)],
                [0, 1], [2, 3]),
    "control": (control, N,
                lambda x=X: [wp.array(x, dtype=wp.float64), 7, wp.zeros(N, dtype=wp.float64)],
                [0], [2]),
    "accumulate": (accumulate, N,
                   lambda x=X: [wp.array(x, dtype=wp.float64), wp.zeros(1, dtype=wp.float64)],
                   [0], [1]),
}


def _value(a):
    return a.numpy() if isinstance(a, wp.array) else np.asarray(a, dtype=np.float64)


def _perturbed(make_args, inputs, direction, h):
    """make_args with each input (by position) moved by h * its direction."""
    args = make_args()
    for pos, d in zip(inputs, direction):
        a = args[pos]
        if isinstance(a, wp.array):
            args[pos] = wp.array(a.numpy() + h * d, dtype=a.dtype)
        else:
            args[pos] = a + h * d
    return args


def _jvp(k, dim, args, outputs, tangent_of):
    """adjit.jvp with ``args[:first output]`` as inputs (tangents by position
    from ``tangent_of``, None elsewhere); the output tangents by position, as
    numpy arrays."""
    first = min(outputs)
    tangents = [tangent_of.get(p) for p in range(first)]
    result = wp.jvp(k, dim, args[:first], tangents, args[first:])
    return {first + j: t.numpy().copy() for j, t in enumerate(result) if t is not None}


@pytest.mark.parametrize("name", CASES)
def test_tangent_matches_central_differences(name):
    k, dim, make_args, inputs, outputs = CASES[name]
    args = make_args()
    direction = [rng.normal(size=np.shape(_value(args[p]))) for p in inputs]
    tangents = _jvp(k, dim, args, outputs, dict(zip(inputs, direction)))
    h = 1e-6
    plus = _perturbed(make_args, inputs, direction, h)
    minus = _perturbed(make_args, inputs, direction, -h)
    wp.launch(k, dim=dim, inputs=plus)
    wp.launch(k, dim=dim, inputs=minus)
    primal = make_args()
    wp.launch(k, dim=dim, inputs=primal)
    for out in outputs:
        fd = (plus[out].numpy() - minus[out].numpy()) / (2 * h)
        np.testing.assert_allclose(tangents[out], fd, rtol=1e-6, atol=1e-7)
        assert np.abs(tangents[out]).max() > 0
        # jvp ran the kernel forward too, as a launch does
        np.testing.assert_array_equal(args[out].numpy(), primal[out].numpy())


@pytest.mark.parametrize("name", CASES)
def test_forward_and_reverse_agree(name):
    """<u, J v> from the tangent kernel == <J^T u, v> from the adjoint."""
    k, dim, make_args, inputs, outputs = CASES[name]
    arrays_in = [p for p in inputs if isinstance(k.arg_types[p], T.ArrayType)]
    args = make_args()
    v = {p: rng.normal(size=args[p].numpy().shape) for p in arrays_in}
    tangents = _jvp(k, dim, args, outputs, v)

    args = make_args()
    for p in arrays_in + outputs:
        args[p] = wp.array(args[p].numpy(), dtype=args[p].dtype, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=dim, inputs=args)
    u = {p: rng.normal(size=args[p].numpy().shape) for p in outputs}
    for p in outputs:
        args[p].grad = wp.array(u[p], dtype=args[p].dtype)
    tape.backward()
    forward = sum(float(np.sum(u[p] * tangents[p])) for p in outputs)
    reverse = sum(float(np.sum(args[p].grad.numpy() * v[p])) for p in arrays_in)
    assert forward == pytest.approx(reverse, rel=1e-12, abs=1e-12)


# --- adjit.jvp: arguments -----------------------------------------------------

def test_jvp_takes_tangents_by_name_and_scalar_tangents():
    x = wp.array(X, dtype=wp.float64)
    by_name = wp.jvp(arith_math, N, [x, 0.7], {"s": 1.0}, [wp.zeros(N, dtype=wp.float64)])[0].numpy()
    by_position = wp.jvp(arith_math, N, [x, 0.7], [None, 1.0], [wp.zeros(N, dtype=wp.float64)])[0].numpy()
    np.testing.assert_array_equal(by_name, by_position)
    h = 1e-6
    plus, minus = wp.zeros(N, dtype=wp.float64), wp.zeros(N, dtype=wp.float64)
    wp.launch(arith_math, N, inputs=[x, 0.7 + h], outputs=[plus])
    wp.launch(arith_math, N, inputs=[x, 0.7 - h], outputs=[minus])
    np.testing.assert_allclose(by_name, (plus.numpy() - minus.numpy()) / (2 * h), rtol=1e-6, atol=1e-7)
    # no tangents at all: zero output tangents
    zero = wp.jvp(arith_math, N, [x, 0.7], [], [wp.zeros(N, dtype=wp.float64)])[0].numpy()
    np.testing.assert_array_equal(zero, 0.0)


def test_jvp_accumulates_into_given_output_tangents():
    x = wp.array(X, dtype=wp.float64)
    v = rng.normal(size=N)
    start = wp.array([5.0], dtype=wp.float64)
    (result,) = wp.jvp(accumulate, N, [x], [v], [wp.zeros(1, dtype=wp.float64)], output_tangents=[start])
    assert result is start
    assert result.numpy()[0] == pytest.approx(5.0 + np.sum((np.cos(X) * X + np.sin(X)) * v), rel=1e-13)


def test_jvp_returns_none_for_outputs_without_tangents():
    @wp.kernel
    def scale_and_count(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                        counts: wp.array(dtype=wp.int32)):
        i = wp.tid()
        y[i] = wp.float64(3.0) * x[i]
        counts[i] = 1

    counts = wp.zeros(4, dtype=wp.int32)
    t_y, t_counts = wp.jvp(scale_and_count, 4, [wp.ones(4, dtype=wp.float64)], [np.arange(4.0)],
                           [wp.zeros(4, dtype=wp.float64), counts])
    np.testing.assert_array_equal(t_y.numpy(), 3.0 * np.arange(4.0))
    assert t_counts is None
    np.testing.assert_array_equal(counts.numpy(), 1)


@pytest.mark.parametrize("tangents, error, words", [
    ([np.ones(N + 1)], ValueError, ["arith_math", "'x'", "shape"]),
    ([wp.zeros(N, dtype=wp.float32)], TypeError, ["arith_math", "'x'", "float64", "float32"]),
    ([wp.zeros(N + 1, dtype=wp.float64)], ValueError, ["arith_math", "'x'", "shape"]),
    ([None, np.ones(3)], ValueError, ["arith_math", "'s'", "shape"]),
    ([None, "fast"], TypeError, ["arith_math", "'s'"]),
    ([[1.0] * N], TypeError, ["arith_math", "'x'", "list"]),
    ([None, None, None], ValueError, ["arith_math", "3 tangents for 2 inputs"]),
    ({"y": np.ones(N)}, ValueError, ["arith_math", "'y'"]),
    ("x", TypeError, ["arith_math", "tangents"]),
])
def test_jvp_rejects_bad_tangents(tangents, error, words):
    with pytest.raises(error) as e:
        wp.jvp(arith_math, N, [wp.array(X, dtype=wp.float64), 0.7], tangents, [wp.zeros(N, dtype=wp.float64)])
    for word in words:
        assert word in str(e.value)


def test_jvp_rejects_tangents_of_integers_and_bad_output_tangents():
    x = wp.array(X, dtype=wp.float64)
    with pytest.raises(TypeError, match="control.*'steps'.*int32.*no tangent"):
        wp.jvp(control, N, [x, 7], [None, 1], [wp.zeros(N, dtype=wp.float64)])
    with pytest.raises(ValueError, match="control.*'y'.*shape"):
        wp.jvp(control, N, [x, 7], [], [wp.zeros(N, dtype=wp.float64)],
               output_tangents=[wp.zeros(2, dtype=wp.float64)])
    with pytest.raises(ValueError, match="control.*takes 3 arguments"):
        wp.jvp(control, N, [x], [], [wp.zeros(N, dtype=wp.float64)])
    with pytest.raises(TypeError, match="@adjit.kernel"):
        wp.jvp(lambda x: x, N, [x], [])
    with pytest.raises(wp.LaunchError, match="'steps'"):  # a bad primal argument: as in launch
        wp.jvp(control, N, [x, "seven"], [], [wp.zeros(N, dtype=wp.float64)])


@wp.struct
class Spring:
    stiffness: wp.float64
    rest: wp.array(dtype=wp.float64)


@wp.kernel
def spring_force(s: Spring, x: wp.array(dtype=wp.float64), f: wp.array(dtype=wp.float64)):
    i = wp.tid()
    f[i] = s.stiffness * (x[i] - s.rest[i])


def test_struct_kernels_in_jvp_and_through_functions():
    s = Spring()
    s.stiffness = 3.0
    s.rest = wp.array([0.5, 1.0], dtype=wp.float64)
    x = wp.array([1.0, 4.0], dtype=wp.float64)
    (t,) = wp.jvp(spring_force, 2, [s, x], [{"stiffness": 1.0, "rest": np.array([1.0, 0.0])}, np.ones(2)],
                  [wp.zeros(2, dtype=wp.float64)])
    # d f = d stiffness (x - rest) + stiffness (dx - d rest)
    np.testing.assert_array_equal(t.numpy(), [0.5 + 3.0 * 0.0, 3.0 + 3.0 * 1.0])

    def force(x):
        f = wp.zeros(2, dtype=wp.float64)
        wp.launch(spring_force, 2, inputs=[s, x], outputs=[f])
        return f

    f, t_f = wp.autograd.jvp(force, [x], [np.array([1.0, -2.0])])
    np.testing.assert_array_equal(f.numpy(), [1.5, 9.0])
    np.testing.assert_array_equal(t_f.numpy(), [3.0, -6.0])


def test_a_func_with_a_custom_adjoint_is_an_error_naming_it_in_forward_mode():
    with pytest.raises(wp.GradientError) as e:
        wp.jvp(uses_custom_adjoint, 2, [wp.ones(2, dtype=wp.float64)], [np.ones(2)], [wp.zeros(2, dtype=wp.float64)])
    message = str(e.value)
    assert "uses_custom_adjoint" in message and "forward mode" in message
    assert "hand_differentiated" in message and "custom adjoint" in message and "@func_jvp" in message
    assert "test_forward_mode.py" in message  # located at the call in the kernel
    # the reverse mode of the same kernel uses the custom adjoint
    x = wp.ones(2, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(uses_custom_adjoint, 2, inputs=[x], outputs=[y])
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), 7.0)


@wp.func
def hand_differentiated(x: wp.float64):
    return x * x


@wp.func_grad(hand_differentiated)
def adj_hand_differentiated(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += wp.float64(7.0) * adj_ret


@wp.kernel
def uses_custom_adjoint(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = hand_differentiated(x[i])


# --- func_jvp: hand-written tangent rules ---------------------------------------

def f64(values):
    return wp.array(np.asarray(values, dtype=np.float64), dtype=wp.float64)


@wp.func
def softplus(x: wp.float64, k: wp.float64):
    return wp.log(wp.float64(1.0) + wp.exp(k * x)) / k


@wp.func_grad(softplus)
def adj_softplus(x: wp.float64, k: wp.float64, adj_ret: wp.float64):
    s = wp.float64(1.0) / (wp.float64(1.0) + wp.exp(-k * x))
    wp.adjoint[x] += adj_ret * s
    wp.adjoint[k] += adj_ret * (x * s - wp.log(wp.float64(1.0) + wp.exp(k * x)) / k) / k


@wp.func_jvp(softplus)
def softplus_jvp(x: wp.float64, k: wp.float64, dx: wp.float64, dk: wp.float64):
    s = wp.float64(1.0) / (wp.float64(1.0) + wp.exp(-k * x))
    return dx * s + dk * (x * s - wp.log(wp.float64(1.0) + wp.exp(k * x)) / k) / k


@wp.kernel
def uses_softplus(x: wp.array(dtype=wp.float64), k: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = softplus(x[i], k) * x[i]


@wp.func
def quantize(x: wp.float64):
    return wp.floor(x * wp.float64(4.0)) / wp.float64(4.0)


@wp.func_jvp(quantize)
def straight_through(x: wp.float64, dx: wp.float64):
    return dx


@wp.kernel
def uses_quantize(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = quantize(x[i]) * wp.float64(3.0)


def test_func_jvp_gives_forward_mode_a_rule_for_a_func_with_a_custom_adjoint():
    x0 = np.array([0.3, -1.2, 2.0])
    dx, dk = np.array([1.0, -0.5, 2.0]), 0.7
    y = wp.zeros(3, dtype=wp.float64)
    (ty,) = wp.jvp(uses_softplus, 3, [f64(x0), 2.5], [dx, dk], [y])

    def run(h):
        out = wp.zeros(3, dtype=wp.float64)
        wp.launch(uses_softplus, 3, inputs=[f64(x0 + h * dx), 2.5 + h * dk], outputs=[out])
        return out.numpy()
    h = 1e-6
    np.testing.assert_allclose(ty.numpy(), (run(h) - run(-h)) / (2 * h), rtol=1e-7, atol=1e-9)
    # batched seeds call the rule once per lane; the dot-product identity
    # with the func_grad holds (both rules are exact)
    (t0,), (t1,) = wp.jvp_batch(uses_softplus, 3, [f64(x0), 2.5], [[dx, dk], [None, 1.0]],
                                [wp.zeros(3, dtype=wp.float64)])
    np.testing.assert_array_equal(t0.numpy(), ty.numpy())
    u = np.array([0.5, 1.0, -1.5])
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(uses_softplus, 3, inputs=[x, 2.5], outputs=[out])
    tape.backward(grads={out: wp.array(u, dtype=wp.float64)})
    assert abs(np.dot(u, t0.numpy() - t1.numpy() * dk) - np.dot(x.grad.numpy(), dx)) < 1e-12


def test_func_jvp_alone_is_forward_mode_only():
    # a straight-through estimator: forward mode uses the rule, reverse mode
    # differentiates the body (floor: zero)
    x0 = np.array([0.3, -1.2, 2.05])
    (ty,) = wp.jvp(uses_quantize, 3, [f64(x0)], [np.array([1.0, 2.0, -1.0])], [wp.zeros(3, dtype=wp.float64)])
    np.testing.assert_array_equal(ty.numpy(), [3.0, 6.0, -3.0])
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(uses_quantize, 3, inputs=[x], outputs=[y])
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    np.testing.assert_array_equal(y.numpy(), np.floor(x0 * 4) / 4 * 3)


def test_a_func_jvp_returning_the_wrong_tangents_is_a_located_error():
    @wp.func
    def pair(x: wp.float64):
        return x * x

    @wp.func_jvp(pair)
    def pair_jvp(x: wp.float64, dx: wp.float64):
        return dx, dx

    @wp.kernel
    def uses_pair(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        y[i] = pair(x[i])

    with pytest.raises(wp.KernelTypeError, match=r"test_forward_mode.py:\d+.*func_jvp of 'pair' returns the "
                                                 r"tangents of its float results \(float64\)"):
        wp.jvp(uses_pair, 1, [f64([1.0])], [np.ones(1)], [wp.zeros(1, dtype=wp.float64)])


# --- the tangent variant: cache and atomic order ------------------------------

@wp.kernel
def sum_into(x: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])


def test_tangent_atomics_are_in_thread_order():
    """The tangent of a sum of atomic adds is the sum of the tangents, added
    in thread order, bit for bit, on the parallel ordered path and serially."""
    variant = loader.cpu_variant(sum_into, tangent=True)
    assert variant.atomic_order == _runtime.ATOMIC_ORDERS["ordered"]
    n = 1 << 17  # above the threads from which ordered launches run in parallel
    v = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
    in_order = np.cumsum(v)[-1]  # sequential float64 sum
    x = wp.array(rng.normal(size=n), dtype=wp.float64)
    for _ in range(4):  # both orders get timed and run
        (t,) = wp.jvp(sum_into, n, [x], [v], [wp.zeros(1, dtype=wp.float64)])
        assert t.numpy()[0] == in_order
    assert set(variant.seconds_per_thread) <= {_runtime.ATOMIC_ORDERS["ordered"], _runtime.ATOMIC_ORDERS["serial"]}


def test_nondeterministic_mode_uses_inline_tangent_atomics():
    v = rng.normal(size=1000)
    x = wp.array(rng.normal(size=1000), dtype=wp.float64)
    wp.config.deterministic = False
    try:
        (t,) = wp.jvp(sum_into, 1000, [x], [v], [wp.zeros(1, dtype=wp.float64)])
        # compiled with inline atomics
        variants = loader._loaded(sum_into).variants
        assert VariantSpec(tangent=1, checks=loader.checks(sum_into), ordered_atomics=False) in variants
    finally:
        wp.config.deterministic = True
    assert t.numpy()[0] == pytest.approx(v.sum(), rel=1e-12)


def test_tangent_kernels_have_their_own_cache_entries():
    checked = loader.checks(sum_into)
    assert loader._key_parts(sum_into, VariantSpec(tangent=1, checks=checked)) != \
        loader._key_parts(sum_into, VariantSpec(checks=checked))
    x = wp.array(X, dtype=wp.float64)
    (first,) = wp.jvp(sum_into, N, [x], [np.ones(N)], [wp.zeros(1, dtype=wp.float64)])
    loader._LOADED.pop(sum_into)  # forget the loaded code: the next jvp reads the cache
    (again,) = wp.jvp(sum_into, N, [x], [np.ones(N)], [wp.zeros(1, dtype=wp.float64)])
    assert loader.cpu_variant(sum_into, tangent=True).from_cache
    assert first.numpy()[0] == again.numpy()[0] == N


# --- jacobian(mode=...) -------------------------------------------------------

JACOBIAN_CASES = {
    "arith_math": (arith_math, N, lambda: [wp.array(X, dtype=wp.float64), 0.7],
                   lambda: [wp.zeros(N, dtype=wp.float64)]),
    "vectors": (vectors, 6, lambda: [wp.array(V[:6], dtype=wp.vec3d), wp.array(M[:6], dtype=wp.mat33d)],
                lambda: [wp.zeros(6, dtype=wp.vec3d), wp.zeros(6, dtype=wp.float64)]),
    "accumulate": (accumulate, N, lambda: [wp.array(X, dtype=wp.float64)], lambda: [wp.zeros(1, dtype=wp.float64)]),
}


@pytest.mark.parametrize("name", JACOBIAN_CASES)
def test_forward_jacobian_equals_reverse(name):
    k, dim, make_inputs, make_outputs = JACOBIAN_CASES[name]
    reverse = wp.autograd.jacobian(k, dim, make_inputs(), make_outputs(), mode="reverse")
    inputs, outputs = make_inputs(), make_outputs()
    forward = wp.autograd.jacobian(k, dim, inputs, outputs, mode="forward")
    auto = wp.autograd.jacobian(k, dim, make_inputs(), make_outputs(), mode="auto")
    assert sorted(forward) == sorted(reverse) == sorted(auto)
    for pair in reverse:
        np.testing.assert_allclose(forward[pair], reverse[pair], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(auto[pair], reverse[pair], rtol=1e-12, atol=1e-12)
        assert np.abs(forward[pair]).max() > 0
    # the outputs are what one launch leaves (accumulate adds once, not once per column)
    once = make_outputs()
    wp.launch(k, dim, inputs=make_inputs(), outputs=once)
    for got, expected in zip(outputs, once):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-15)


@wp.kernel(enable_backward=False)
def spread(a: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = a[0] * wp.float64(i) + a[1] * a[1]


def test_auto_jacobian_picks_forward_for_fewer_inputs():
    """spread has no adjoint: only forward mode gives its Jacobian, so auto
    must pick it for 2 inputs and 5 outputs, and reverse for 5 and 2."""
    a = wp.array([2.0, 3.0], dtype=wp.float64)
    jac = wp.autograd.jacobian(spread, 5, [a], [wp.zeros(5, dtype=wp.float64)], mode="auto")[0, 0]
    np.testing.assert_array_equal(jac, np.stack([np.arange(5.0), np.full(5, 6.0)], axis=1))
    with pytest.raises(wp.GradientError, match="enable_backward=False"):
        wp.autograd.jacobian(spread, 2, [wp.zeros(5, dtype=wp.float64)], [wp.zeros(2, dtype=wp.float64)],
                             mode="auto")
    with pytest.raises(ValueError, match="mode must be one of"):
        wp.autograd.jacobian(spread, 5, [a], [wp.zeros(5, dtype=wp.float64)], mode="sideways")


def test_forward_jacobian_restores_in_place_updates():
    @wp.kernel
    def scale_in_place(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        y[i] = y[i] * x[i] + x[i] * x[i]

    x0, y0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])
    forward = wp.autograd.jacobian(scale_in_place, 3, [wp.array(x0, dtype=wp.float64)],
                                   [y := wp.array(y0, dtype=wp.float64)], mode="forward")[0, 0]
    np.testing.assert_array_equal(forward, np.diag(y0 + 2 * x0))
    np.testing.assert_array_equal(y.numpy(), y0 * x0 + x0 * x0)


# --- autograd.jvp: a Python function of launches ------------------------------

@wp.kernel
def square_plus(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] + s


@wp.kernel
def sin_in_place(y: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.sin(y[i]) * x[i]


def test_function_jvp_matches_central_differences_and_keeps_the_primal():
    def steps(x, z):
        """y = x^2 + 1; y = sin(y) * x (in place); z = y^2 + 0.5; y = z^2 + 2 (overwrites y)."""
        y = wp.zeros(x.shape[0], dtype=wp.float64)
        wp.launch(square_plus, x.shape[0], inputs=[x, 1.0], outputs=[y])
        wp.launch(sin_in_place, x.shape[0], inputs=[y, x])
        wp.launch(square_plus, x.shape[0], inputs=[y, 0.5], outputs=[z])
        wp.launch(square_plus, x.shape[0], inputs=[z, 2.0], outputs=[y])  # overwrites y
        return z, y

    v = rng.normal(size=N)
    tangent_v = wp.array(v, dtype=wp.float64)
    x, z = wp.array(X, dtype=wp.float64), wp.zeros(N, dtype=wp.float64)
    (z_out, y_out), (t_z, t_y) = wp.autograd.jvp(steps, [x, z], [tangent_v, None])
    assert z_out is z
    np.testing.assert_array_equal(tangent_v.numpy(), v)  # the caller's tangent is unchanged
    reference = steps(wp.array(X, dtype=wp.float64), wp.zeros(N, dtype=wp.float64))
    np.testing.assert_array_equal(z_out.numpy(), reference[0].numpy())  # the replay changed no primal
    np.testing.assert_array_equal(y_out.numpy(), reference[1].numpy())
    h = 1e-6
    plus = steps(wp.array(X + h * v, dtype=wp.float64), wp.zeros(N, dtype=wp.float64))
    minus = steps(wp.array(X - h * v, dtype=wp.float64), wp.zeros(N, dtype=wp.float64))
    for tangent, p, m in zip((t_z, t_y), plus, minus):
        np.testing.assert_allclose(tangent.numpy(), (p.numpy() - m.numpy()) / (2 * h), rtol=1e-6, atol=1e-7)
        assert np.abs(tangent.numpy()).max() > 0


def test_function_jvp_agrees_with_reverse_mode():
    """<u, J v> through three launches == <J^T u, v> from the Tape."""
    def steps(x, z):
        y = wp.zeros(x.shape[0], dtype=wp.float64, requires_grad=True)
        wp.launch(square_plus, x.shape[0], inputs=[x, 1.0], outputs=[y])
        wp.launch(sin_in_place, x.shape[0], inputs=[y, x])
        wp.launch(square_plus, x.shape[0], inputs=[y, 0.5], outputs=[z])
        return z

    v, u = rng.normal(size=N), rng.normal(size=N)
    _, t_z = wp.autograd.jvp(steps, [wp.array(X, dtype=wp.float64), wp.zeros(N, dtype=wp.float64)], [v, None])
    x = wp.array(X, dtype=wp.float64, requires_grad=True)
    z = wp.zeros(N, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        steps(x, z)
    tape.backward(grads={z: wp.array(u, dtype=wp.float64)})
    assert float(np.dot(u, t_z.numpy())) == pytest.approx(float(np.dot(x.grad.numpy(), v)), rel=1e-12, abs=1e-12)


def test_function_jvp_rejects_bad_arguments():
    x = wp.array(X, dtype=wp.float64)

    def one(x):
        y = wp.zeros(N, dtype=wp.float64)
        wp.launch(square_plus, N, inputs=[x, 1.0], outputs=[y])
        return y

    with pytest.raises(ValueError, match="one: 0 tangents for 1 inputs"):
        wp.autograd.jvp(one, [x], [])
    with pytest.raises(ValueError, match="one: the tangent of input 0 must have numpy shape"):
        wp.autograd.jvp(one, [x], [np.ones(3)])
    with pytest.raises(TypeError, match="input 0.*int32.*no tangent"):
        wp.autograd.jvp(one, [wp.zeros(N, dtype=wp.int32)], [np.ones(N)])
    with pytest.raises(TypeError, match="must return an adjit array"):
        wp.autograd.jvp(lambda x: 3.0, [x], [None])
    with pytest.raises(TypeError, match="callable"):
        wp.autograd.jvp("one", [x], [None])
    # a copy has no tangent rule: refused, never a silent zero tangent
    with pytest.raises(wp.GradientError, match="'clone'.*no tangent"):
        wp.autograd.jvp(lambda x: one(wp.clone(x)), [x], [np.ones(N)])
    assert not x.requires_grad and x.grad is None  # as before the call


# --- struct parameters --------------------------------------------------------------

@wp.struct
class WaveParams:
    k: wp.float64
    scale: wp.vec3d
    n: int
    weights: wp.array(dtype=wp.float64)


@wp.kernel
def struct_wave(x: wp.array(dtype=wp.float64), p: WaveParams, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.sin(p.k * x[i]) * p.scale[1] * p.weights[i] + wp.float64(p.n)


def _wave_params(k, scale, weights, n=2):
    p = WaveParams()
    p.k, p.scale, p.n = k, wp.vec3d(*scale), n
    p.weights = f64(weights)
    return p


def test_jvp_of_a_kernel_with_a_struct_parameter():
    x0, w0 = np.array([0.3, 0.7, -0.4]), np.array([1.5, -2.0, 0.5])
    dx, dk, ds, dw = np.array([1.0, -1.0, 0.5]), 0.5, np.array([0.0, 2.0, 0.0]), np.array([0.3, 0.1, -1.0])

    def run(h):
        y = wp.zeros(3, dtype=wp.float64)
        p = _wave_params(2.0 + h * dk, np.array([1.0, 3.0, 5.0]) + h * ds, w0 + h * dw)
        wp.launch(struct_wave, 3, inputs=[f64(x0 + h * dx), p], outputs=[y])
        return y.numpy()
    h = 1e-6
    fd = (run(h) - run(-h)) / (2 * h)
    p = _wave_params(2.0, [1.0, 3.0, 5.0], w0)
    # the tangent of a struct: a struct value of its type (the int field is ignored) ...
    (ty,) = wp.jvp(struct_wave, 3, [f64(x0), p], [dx, _wave_params(dk, ds, dw, n=0)], [wp.zeros(3, dtype=wp.float64)])
    np.testing.assert_allclose(ty.numpy(), fd, rtol=1e-7, atol=1e-9)
    # ... or a dict by field name (missing fields: zero), the parameter by name too
    (tk,) = wp.jvp(struct_wave, 3, [f64(x0), p], {"p": {"k": 1.0}}, [wp.zeros(3, dtype=wp.float64)])
    np.testing.assert_allclose(tk.numpy(), np.cos(2.0 * x0) * x0 * 3.0 * w0, rtol=1e-12)
    with pytest.raises(ValueError, match=r"tangent of 'p' names \['q'\]"):
        wp.jvp(struct_wave, 3, [f64(x0), p], {"p": {"q": 1.0}}, [wp.zeros(3, dtype=wp.float64)])
    with pytest.raises(TypeError, match="tangent of 'p' must be a WaveParams"):
        wp.jvp(struct_wave, 3, [f64(x0), p], [None, 1.0], [wp.zeros(3, dtype=wp.float64)])
