"""Reverse-mode gradients: the adjoint pass through Tape.backward.

Every gradient is checked against a hand-derived value or float64 central
finite differences of the same kernel (float64 kernels, tight tolerances).
"""
import numpy as np
import pytest

import adjit as wp


def _fd_check(kernel, inputs, n_out, out_dtype=wp.float64, h=1e-6, rtol=1e-6, atol=1e-8, seed=0,
              scalars=()):
    """Checks x.grad of every float64 input array against central differences
    of L(x) = sum(w * y(x)) for a random weight w on the outputs."""
    rng = np.random.default_rng(seed)
    out_shape = (n_out,) + (out_dtype.shape if hasattr(out_dtype, "shape") else ())
    w = rng.normal(size=out_shape)

    def run(arrays):
        y = wp.zeros(n_out, dtype=out_dtype)
        wp.launch(kernel, dim=n_out, inputs=[*arrays, *scalars], outputs=[y])
        return float(np.sum(w * y.numpy()))

    xs = [wp.array(a, dtype=t, requires_grad=True) for a, t in inputs]
    y = wp.zeros(n_out, dtype=out_dtype, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, dim=n_out, inputs=[*xs, *scalars], outputs=[y])
    tape.backward(grads={y: w})
    for k, (a, t) in enumerate(inputs):
        fd = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus, minus = [x.copy() for x, _ in inputs], [x.copy() for x, _ in inputs]
            plus[k][idx] += h
            minus[k][idx] -= h
            lp = run([wp.array(p, dtype=tt) for p, (_, tt) in zip(plus, inputs)])
            lm = run([wp.array(m, dtype=tt) for m, (_, tt) in zip(minus, inputs)])
            fd[idx] = (lp - lm) / (2 * h)
        np.testing.assert_allclose(xs[k].grad.numpy(), fd, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k} of {kernel.__name__}")


# --- the five reports that started adjit ------------------------------------------

@wp.kernel
def s3_components(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    y[tid].x = x[tid] * 2.0
    y[tid].y = x[tid] * 3.0
    y[tid].z = x[tid] * 4.0


@wp.kernel
def s3_whole(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    v = wp.vec3(x[tid] * 2.0, x[tid] * 3.0, x[tid] * 4.0)
    y[tid] = v


@pytest.mark.parametrize("kernel", [s3_components, s3_whole])
def test_s3_component_stores_into_array_elements(kernel):
    n = 7
    x = wp.array(np.linspace(-1, 1, n).astype(np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, dim=n, inputs=[x], outputs=[y])
    tape.backward(grads={y: np.ones((n, 3), np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(n, 9.0, np.float32))


@wp.func
def s4_func(a: float):
    b = a
    if b > 0.0:
        return b * b
    return -b * 3.0


@wp.kernel
def s4_func_alias(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    tid = wp.tid()
    y[tid] = s4_func(x[tid])


@wp.kernel
def s4_kernel_alias(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    tid = wp.tid()
    v = x[tid]
    w = v
    y[tid] = w * w


def test_s4_aliases_in_funcs_and_kernels():
    xs = np.array([-2.0, -0.5, 0.25, 3.0], np.float32)
    for kernel, ref in ((s4_func_alias, np.where(xs > 0, 2 * xs, -3.0)), (s4_kernel_alias, 2 * xs)):
        x = wp.array(xs, requires_grad=True)
        y = wp.zeros(4, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(kernel, dim=4, inputs=[x], outputs=[y])
        tape.backward(grads={y: 1.0})
        np.testing.assert_allclose(x.grad.numpy(), ref.astype(np.float32), rtol=1e-6)


@wp.kernel
def s5_accumulate_components(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    ai = a[tid]
    tmp = wp.vec3(0.0)
    tmp[0] += ai[0]
    tmp[1] += ai[1]
    tmp[2] += ai[2]
    b[tid] = tmp


def test_s5_augmented_component_assignment():
    n = 6
    a = wp.array(np.random.default_rng(1).normal(size=(n, 3)).astype(np.float32), dtype=wp.vec3,
                 requires_grad=True)
    b = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(s5_accumulate_components, dim=n, inputs=[a], outputs=[b])
    tape.backward(grads={b: np.ones((n, 3), np.float32)})
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((n, 3), np.float32))


# --- classes Warp gets silently wrong --------------------------------------------------

@wp.kernel
def component_written_twice(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    xi = x[i]
    a = wp.vec3d(1.0, 2.0, 3.0)
    a.x = xi
    a.x = a.x * xi
    a.y *= xi
    w = a
    w[2] = xi * 5.0
    y[i] = a.x + a.y + a.z + w[2] * xi


def test_repeated_component_writes_mul_assign_and_value_semantics():
    xs = np.array([0.5, -1.5, 2.0])
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(component_written_twice, dim=3, inputs=[x], outputs=[y])
    tape.backward(grads={y: 1.0})
    # y = x^2 + 2x + 3 + 5x^2  ->  dy/dx = 12x + 2 (a.z keeps 3: w is a copy)
    np.testing.assert_allclose(y.numpy(), 6 * xs ** 2 + 2 * xs + 3, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 12 * xs + 2, rtol=1e-12)


@wp.kernel
def in_place_square(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * x[i]


@wp.kernel
def write_read_back_rewrite(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    # an output written, read back and rewritten in one thread
    i = wp.tid()
    y[i] = x[i] * wp.float64(2.0)
    t = y[i]
    y[i] = t * t + y[i]


def test_output_written_read_back_and_rewritten():
    _fd_check(write_read_back_rewrite, [(np.array([0.5, -1.0, 2.0]), wp.float64)], 3)


@wp.kernel
def neighbour_in_place(x: wp.array(dtype=float)):
    i = wp.tid()
    if i > 0:
        x[i] = x[i - 1] * 2.0


@pytest.mark.parametrize("kernel,inputs,message", [
    (neighbour_in_place, lambda: [wp.array(np.ones(3, np.float32), requires_grad=True)],
     "a data race in the forward launch too"),
])
def test_unsupported_gradients_are_clear_errors_not_wrong(kernel, inputs, message):
    args = inputs()
    with wp.Tape() as tape:
        wp.launch(kernel, dim=1, inputs=args)
    with pytest.raises(wp.GradientError) as info:
        tape.backward(grads={args[-1]: 1.0})
    text = str(info.value)
    assert message in text
    assert "test_autodiff.py:" in text  # located at the kernel's Python line


# --- in-place updates inside runtime loops: the element is carried as a value ----------

def _fd_check_in_place(kernel, x0, y0, dtype, scalars=(), h=1e-6, rtol=1e-6, atol=1e-8, seed=0):
    """x.grad and y.grad (the gradient with respect to y's values before the
    launch) of L = sum(w * y after the launch), against central differences."""
    w = np.random.default_rng(seed).normal(size=y0.shape)

    def loss(xv, yv):
        y = wp.array(yv, dtype=dtype)
        wp.launch(kernel, dim=len(yv), inputs=[wp.array(xv, dtype=wp.float64), *scalars, y])
        return float(np.sum(w * y.numpy()))

    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    y = wp.array(y0, dtype=dtype, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, dim=len(y0), inputs=[x, *scalars, y])
    tape.backward(grads={y: w})
    for name, arr, grad, other in (("x", x0, x.grad, y0), ("y", y0, y.grad, x0)):
        fd = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += h
            minus[idx] -= h
            if name == "x":
                fd[idx] = (loss(plus, other) - loss(minus, other)) / (2 * h)
            else:
                fd[idx] = (loss(other, plus) - loss(other, minus)) / (2 * h)
        np.testing.assert_allclose(grad.numpy(), fd, rtol=rtol, atol=atol,
                                   err_msg=f"{name}.grad of {kernel.__name__}")


@wp.kernel
def loop_in_place(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    for k in range(n):
        y[i] = y[i] * x[i] + wp.sin(y[i])


@wp.kernel
def while_in_place(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    while y[i] < wp.float64(4.0):  # the trip count depends on the data
        y[i] = y[i] * x[i] + wp.float64(0.5)


@wp.kernel
def break_continue_in_place(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    for k in range(n):
        if y[i] > wp.float64(3.0):
            break
        if k == 1:
            y[i] += x[i]
            continue
        y[i] = y[i] * x[i]


@wp.kernel
def nested_loops_in_place(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    for k in range(n):
        for m in range(n):
            y[i] = y[i] * x[i] + wp.float64(0.1) * wp.float64(m)
        y[i] = wp.sqrt(y[i])


@wp.kernel
def stored_then_looped(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] + y[i]
    for k in range(n):
        y[i] = y[i] * y[i] * wp.float64(0.5)


@wp.kernel
def components_in_place(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    for k in range(n):
        y[i].x = y[i].x * x[i] + y[i].y
        y[i][2] += x[i] * y[i].x
        if y[i].y > wp.float64(0.0):
            y[i].y *= wp.float64(0.5)


@wp.kernel
def written_in_a_branch_then_read(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if x[i] > wp.float64(0.0):
        y[i] = y[i] * x[i]
    t = y[i] * wp.float64(3.0)
    y[i] += t * x[i]


@pytest.mark.parametrize("kernel,x0,y0,dtype,scalars", [
    (written_in_a_branch_then_read, [0.5, -1.2, 0.7], [0.3, -0.4, 1.1], wp.float64, ()),
    (loop_in_place, [0.5, 1.2, -0.7], [0.3, -0.4, 1.1], wp.float64, (3,)),
    (loop_in_place, [0.5, 1.2], [0.3, -0.4], wp.float64, (0,)),
    (while_in_place, [1.5, 2.0, 1.3], [0.7, 3.9, 5.0], wp.float64, ()),
    (break_continue_in_place, [1.5, 0.8, 2.0], [0.6, 2.9, 3.5], wp.float64, (4,)),
    (nested_loops_in_place, [0.9, 1.1], [0.8, 1.3], wp.float64, (2,)),
    (stored_then_looped, [0.4, -0.3], [0.5, 1.2], wp.float64, (2,)),
    (components_in_place, [0.7, -1.2], [[0.3, 0.4, -0.2], [-0.5, -0.6, 0.9]], wp.vec3d, (3,)),
])
def test_in_place_updates_in_runtime_loops_are_exact(kernel, x0, y0, dtype, scalars):
    _fd_check_in_place(kernel, np.array(x0), np.array(y0), dtype, scalars)


def test_in_place_updates_use_the_pre_launch_values():
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    x = wp.array(xs, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(in_place_square, dim=3, inputs=[x])   # x <- x^2
        wp.launch(in_place_square, dim=3, inputs=[x])   # x <- x^4
    tape.backward(grads={x: 1.0})
    np.testing.assert_allclose(x.numpy(), xs ** 4)
    np.testing.assert_allclose(x.grad.numpy(), 4 * xs ** 3)


def test_saxpy_gradients():
    x = wp.array(np.arange(5, dtype=np.float32), requires_grad=True)
    y = wp.array(np.ones(5, np.float32), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(saxpy_kernel, dim=5, inputs=[2.0, x, y])
    tape.backward(grads={y: np.full(5, 3.0, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(5, 6.0, np.float32))
    np.testing.assert_array_equal(y.grad.numpy(), np.full(5, 3.0, np.float32))  # d y_new / d y_old = 1


@wp.kernel
def saxpy_kernel(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def test_aliased_written_arguments_are_rejected_when_recorded():
    x = wp.array(np.ones(4, np.float32), requires_grad=True)
    with wp.Tape():
        with pytest.raises(wp.GradientError, match="share memory and the kernel writes 'y'"):
            wp.launch(s4_kernel_alias, dim=4, inputs=[x, x])


@wp.kernel
def product_of_neighbours(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
                          y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = a[i] * b[(i + 1) % 3] + wp.sin(a[i])


def test_an_array_read_through_two_parameters_gets_both_gradients():
    xs = np.array([0.3, -1.2, 0.8])
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(product_of_neighbours, dim=3, inputs=[x, x], outputs=[y])
    w = np.array([1.0, -2.0, 0.5])
    tape.backward(grads={y: w})
    # L = sum_i w_i (x_i x_{i+1} + sin x_i)
    expected = w * (np.roll(xs, -1) + np.cos(xs)) + np.roll(w * xs, 1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)


def test_gradients_accumulate_across_backward_calls_and_zero_resets():
    xs = np.array([1.0, 2.0], np.float32)
    x = wp.array(xs, requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(s4_kernel_alias, dim=2, inputs=[x], outputs=[y])
    tape.backward(grads={y: 1.0})
    tape.backward(grads={y: 1.0})
    np.testing.assert_allclose(x.grad.numpy(), 4 * xs)
    tape.zero()
    assert not x.grad.numpy().any()
    tape.backward(loss=y)
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs)


# --- derivative rules against float64 finite differences ---------------------------------

@wp.kernel
def scalar_math(x: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    b = z[i]
    r = wp.sin(a) * wp.cos(b) + wp.exp(a * 0.3) / (1.0 + b * b) + wp.log(2.0 + a * a)
    r = r + wp.sqrt(1.5 + wp.tanh(b)) + wp.atan2(a, b + 3.0) + wp.pow(1.5 + a * a, b * 0.5)
    r = r + wp.max(a, b) * wp.min(a, -b) + wp.abs(a - 0.1) - wp.tan(a * 0.2) + wp.asin(b * 0.3)
    r = r + wp.acos(a * 0.2) + wp.atan(b) + wp.sinh(a * 0.5) * wp.cosh(b * 0.5)
    r = r + wp.log2(3.0 + b) + wp.log10(3.0 + a) + wp.floor(a) + wp.float64(wp.int32(b * 0.0))
    if a > b:
        r = r * a
    else:
        r = r - b * b
    y[i] = wp.where(a < 0.0, r * 2.0, r) + (a if b > 0.0 else -a)


def test_scalar_rules_match_finite_differences():
    rng = np.random.default_rng(5)
    x = rng.uniform(-1.5, 1.5, 16)
    z = rng.uniform(-1.5, 1.5, 16)
    _fd_check(scalar_math, [(x, wp.float64), (z, wp.float64)], 16)


@wp.kernel
def vector_math(p: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = p[i]
    M = m[i]
    q = M * v + wp.cross(v, wp.vec3d(0.3, -0.2, 0.1)) * 2.0
    n = wp.normalize(q)
    t = wp.transpose(M) * M
    d = wp.determinant(M) + wp.trace(t) * 0.1
    inv = wp.inverse(M)
    r = wp.dot(n, v) + wp.length(q) * d + inv[0, 1] + wp.length_sq(v * 0.5) + (v / 3.0).y
    u = v
    u.z = r
    y[i] = u.z + wp.outer(v, n)[1, 2] - (-v).x + M[2][0] * p[i].y


def test_vector_matrix_rules_match_finite_differences():
    rng = np.random.default_rng(7)
    n = 6
    p = rng.normal(size=(n, 3))
    m = rng.normal(size=(n, 3, 3)) + 3 * np.eye(3)
    _fd_check(vector_math, [(p, wp.vec3d), (m, wp.mat33d)], n)


@wp.kernel
def lengths_and_directions(v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = wp.normalize(v[i]) + wp.vec3d(wp.length(v[i]), wp.float64(0.0), wp.float64(0.0))


def test_length_and_normalize_at_zero_have_zero_gradients_as_in_warp():
    v = wp.array(np.zeros((1, 3)), dtype=wp.vec3d, requires_grad=True)
    y = wp.zeros(1, dtype=wp.vec3d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(lengths_and_directions, dim=1, inputs=[v], outputs=[y])
    tape.backward(grads={y: np.array([[1.0, 2.0, 3.0]])})
    assert np.array_equal(y.numpy(), np.zeros((1, 3)))
    assert np.array_equal(v.grad.numpy(), np.zeros((1, 3)))
    # Away from zero (even very near it), the same kernel is exact.
    p = np.random.default_rng(3).normal(size=(4, 3)) * np.array([[1.0], [1.0], [1e-3], [10.0]])
    _fd_check(lengths_and_directions, [(p, wp.vec3d)], 4, out_dtype=wp.vec3d, h=1e-8, rtol=1e-5)


@wp.kernel
def constant_loop(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = wp.float64(0.0)
    v = x[i]
    for k in range(4):
        s = s * v + wp.float64(k) * v
    y[i] = s


def test_constant_loops_are_unrolled_and_differentiated():
    _fd_check(constant_loop, [(np.linspace(-1, 1, 5), wp.float64)], 5)


# --- S1: Jacobians with masks by name or by index; S2: copies on the tape --------------

@wp.kernel
def two_outputs(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
                out1: wp.array(dtype=wp.float64), out2: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    out1[i] = a[i] * b[i]
    out2[i] = wp.vec2d(wp.sin(a[i]), a[i] + b[i] * b[i])


def _two_output_args():
    a = wp.array(np.array([0.1, 0.2, 0.3]), dtype=wp.float64)
    b = wp.array(np.array([1.0, 2.0, 3.0]), dtype=wp.float64)
    return [a, b], [wp.zeros(3, dtype=wp.float64), wp.zeros(3, dtype=wp.vec2d)]


def test_s1_jacobian_mask_by_index_and_by_name_agree():
    ins, outs = _two_output_args()
    by_index = wp.autograd.jacobian(two_outputs, 3, ins, outs, input_output_mask=[(0, 0), (1, 1)])
    by_name = wp.autograd.jacobian(two_outputs, 3, ins, outs, input_output_mask=[("a", "out1"), ("b", "out2")])
    np.testing.assert_array_equal(by_index[0, 0], np.diag([1.0, 2.0, 3.0]))
    expected_b_out2 = np.zeros((6, 3))
    for k, bk in enumerate([1.0, 2.0, 3.0]):
        expected_b_out2[2 * k + 1, k] = 2 * bk
    np.testing.assert_allclose(by_index[1, 1], expected_b_out2)
    for key_i, key_n in (((0, 0), ("a", "out1")), ((1, 1), ("b", "out2"))):
        np.testing.assert_array_equal(by_index[key_i], by_name[key_n])
        np.testing.assert_array_equal(by_index[key_n], by_name[key_i])  # lookups accept both


def test_jacobian_matches_finite_differences_and_gradcheck_reports():
    ins, outs = _two_output_args()
    assert wp.autograd.gradcheck(two_outputs, 3, ins, outs, eps=1e-6, atol=1e-8, rtol=1e-6) is True  # Warp's bool
    result = wp.autograd.gradcheck_result(two_outputs, 3, ins, outs, eps=1e-6, atol=1e-8, rtol=1e-6)
    assert result, result.report
    assert "d out2 / d b" in result.report


@wp.kernel
def kink(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.abs(x[i])


def test_gradcheck_fails_at_a_kink_with_a_readable_report():
    x = wp.array(np.array([0.0, 1.0]), dtype=wp.float64)
    assert wp.autograd.gradcheck(kink, 2, [x], [wp.zeros(2, dtype=wp.float64)], eps=1e-6,
                                 raise_exception=False) is False
    result = wp.autograd.gradcheck_result(kink, 2, [x], [wp.zeros(2, dtype=wp.float64)], eps=1e-6,
                                          raise_exception=False)
    assert not result
    assert "FAIL d y / d x" in result.report and "adjoint 1 vs finite difference 0" in result.report
    with pytest.raises(ValueError, match="adjoint 1 vs finite difference 0"):  # Warp's default: raise
        wp.autograd.gradcheck(kink, 2, [x], [wp.zeros(2, dtype=wp.float64)], eps=1e-6, show_summary=False)


def test_bad_masks_are_clear_errors():
    ins, outs = _two_output_args()
    with pytest.raises(wp.GradientError, match="out of range"):
        wp.autograd.jacobian(two_outputs, 3, ins, outs, input_output_mask=[(2, 0)])
    with pytest.raises(wp.GradientError, match="'c' is not one of the inputs"):
        wp.autograd.jacobian(two_outputs, 3, ins, outs, input_output_mask=[("c", "out1")])


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_s2_clone_copy_and_assign_are_on_the_tape():
    xs = np.array([1.0, -2.0, 3.0], np.float32)
    x = wp.array(xs, requires_grad=True)
    with wp.Tape() as tape:
        c = wp.clone(x)                      # c = x
        d = wp.zeros(3, requires_grad=True)
        wp.copy(d, c)                        # d = c
        e = wp.zeros(3, requires_grad=True)
        e.assign(d)                          # e = d
        y = wp.zeros(3, requires_grad=True)
        wp.launch(square, dim=3, inputs=[e], outputs=[y])
    tape.backward(grads={y: 1.0})
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs)
    # consumed on the way: the intermediate gradients were passed on, not kept
    assert not d.grad.numpy().any() and not e.grad.numpy().any()


def test_overwrites_cut_the_gradient():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    with wp.Tape() as tape:
        y = wp.zeros(2, requires_grad=True)
        wp.launch(square, dim=2, inputs=[x], outputs=[y])
        y.fill_(5.0)                         # y no longer depends on x
    tape.backward(grads={y: 1.0})
    assert not x.grad.numpy().any()


# --- loops with runtime trip counts (checkpointed: O(n) time, O(sqrt n) memory per thread) ---

f64 = wp.float64


@wp.kernel
def runtime_product(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    p = f64(1.0)
    for k in range(n):
        p = p * x[k]
    y[i] = p * f64(i + 1)


@wp.kernel
def runtime_recurrence(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    # a nonlinear recurrence, a value defined before the loop and used after
    # it, and the accumulator used nonlinearly after the loop
    i = wp.tid()
    a = x[i]
    s = f64(0.0)
    z = a
    for k in range(n):
        z = wp.sin(z) * a + f64(0.1) * z * z
        s = s + z
    y[i] = wp.sqrt(s * s + f64(1.0)) + a * z


@wp.kernel
def data_dependent_while(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    t = f64(0.0)
    while v < f64(10.0):
        v = v * f64(1.5) + f64(0.3)
        t = t + v * v
    y[i] = t


@wp.kernel
def runtime_argmax(x: wp.array(dtype=f64, ndim=2), n: int, y: wp.array(dtype=f64)):
    r = wp.tid()
    best = f64(-1.0)
    for k in range(n):
        v = x[r, k]
        if v < f64(0.2):
            continue
        if v > f64(2.5):
            break
        if v > best:
            best = v
    y[r] = best * best


def test_product_over_a_runtime_bounded_loop():
    _fd_check(runtime_product, [(np.linspace(0.5, 1.5, 6), f64)], 3, scalars=(6,))


def test_nonlinear_recurrence_in_a_runtime_loop():
    _fd_check(runtime_recurrence, [(np.linspace(0.1, 0.9, 4), f64)], 4, scalars=(5,))


def test_while_loop_with_a_data_dependent_trip_count():
    _fd_check(data_dependent_while, [(np.array([0.5, 1.0, 2.0, 9.5, 11.0]), f64)], 5)


def test_break_and_continue_in_a_runtime_loop():
    # values stay away from the branch thresholds, where the function jumps
    x = np.array([[0.5, 0.05, 0.9, 0.3, 3.0, 1.7], [0.1, 0.6, 0.3, 0.45, 0.01, 0.05]])
    _fd_check(runtime_argmax, [(x, f64)], 2, scalars=(6,))


@wp.kernel
def power_by_loop(a: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    p = f64(1.0)
    for k in range(n):
        p = p * a[i]
    y[i] = p


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 8, 9, 10, 15, 16, 17, 99, 100, 101, 1000, 4097])
def test_runtime_loops_of_any_length_across_checkpoint_segments(n):
    # y = a^n, dy/da = n a^(n-1): every trip count around the segment length
    # ceil(sqrt(n)) (full and partial last segments), and long loops
    a = np.array([1.0 + 0.5 / max(n, 1), 0.9, -1.0 + 0.25 / max(n, 1)])
    x = wp.array(a, dtype=f64, requires_grad=True)
    y = wp.zeros(3, dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(power_by_loop, dim=3, inputs=[x, n], outputs=[y])
    tape.backward(grads={y: np.ones(3)})
    np.testing.assert_allclose(y.numpy(), a ** n, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), n * a ** (n - 1) if n else 0 * a, rtol=1e-10, atol=1e-300)


@wp.kernel
def nested_runtime_loops(x: wp.array(dtype=f64), n: int, m: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    a = x[i]
    s = f64(0.0)
    for k in range(n):
        z = a * f64(k + 1) * f64(0.01)
        for j in range(m):
            z = wp.sin(z) + f64(0.5) * a
        if z > f64(0.6):
            s = s + z * z
        else:
            s = s - z
    y[i] = s


def test_nested_runtime_loops_with_a_branch():
    _fd_check(nested_runtime_loops, [(np.linspace(0.2, 1.4, 5), f64)], 5, scalars=(11, 7))


@wp.kernel
def long_while_with_break(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    t = f64(0.0)
    k = int(0)
    while True:
        v = v + f64(0.001) * wp.cos(v)
        t = t + v * f64(0.001)
        k = k + 1
        if k >= 2000 + i:
            break
    y[i] = t + v


def test_long_while_loop_with_break():
    _fd_check(long_while_with_break, [(np.linspace(0.1, 2.0, 4), f64)], 4, rtol=1e-6, atol=1e-8)


def _spring_steps(x: wp.array(dtype=wp.vec3d), n: int, y: wp.array(dtype=wp.vec3d)):
    # a vec3 position and velocity, and per iteration several values the
    # reversal reads (d, |d|^2, |d|, the force, the new state): 176 bytes an
    # iteration, so the CPU's 256 KiB holds 1489 iterations and 3000 take
    # three segments
    i = wp.tid()
    p = x[i]
    v = wp.vec3d(f64(0.0), f64(0.1), f64(0.0))
    omega = wp.vec3d(f64(0.1), f64(0.2), f64(0.3))
    for k in range(n):
        d = p - wp.vec3d(f64(0.0), f64(1.0), f64(0.0))
        L = wp.length(d)
        f = wp.normalize(d) * (-(L - f64(1.0))) - v * f64(0.1) + wp.cross(omega, v)
        v = v + f * f64(0.01)
        p = p + v * f64(0.01)
    y[i] = p + v * f64(0.5)


spring_steps = wp.kernel(_spring_steps)


@pytest.mark.parametrize("n", [1, 7, 3000])
def test_loop_reversal_reading_kept_values_across_segments(n):
    x0 = np.array([[0.3, 1.9, -0.2], [1.2, 0.4, 0.7]])
    _fd_check(spring_steps, [(x0, wp.vec3d)], 2, out_dtype=wp.vec3d, scalars=(n,), rtol=1e-6, atol=1e-8)


def test_kept_values_give_bitwise_the_gradient_of_recomputing_them(monkeypatch):
    # The CPU pipeline keeps the primal values a reversed iteration reads; the
    # GPU's (checkpoint-bytes=0) recomputes them. Same ops on the same inputs:
    # the same bits.
    from adjit.compiler import stages

    def gradient(kernel):
        x = wp.array(np.array([[0.3, 1.9, -0.2], [1.2, 0.4, 0.7]]), dtype=wp.vec3d, requires_grad=True)
        y = wp.zeros(2, dtype=wp.vec3d, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(kernel, dim=2, inputs=[x, 3000], outputs=[y])
        tape.backward(grads={y: np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])})
        return x.grad.numpy()

    monkeypatch.setenv("ADJIT_CACHE", "0")
    kept = gradient(wp.kernel(_spring_steps))
    monkeypatch.setattr(stages, "CPU_CHECKPOINT_BYTES", 0)
    recomputed = gradient(wp.kernel(_spring_steps))
    assert np.isfinite(kept).all() and np.abs(kept).max() > 0
    np.testing.assert_array_equal(kept, recomputed)


# --- later writes: saved when recorded, a clear error when not ------------------------------

@wp.kernel
def square_into(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def overwrite_with_three(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 3.0


def test_a_later_recorded_launch_overwriting_an_input_is_saved_for():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square_into, dim=2, inputs=[x], outputs=[y])
        wp.launch(overwrite_with_three, dim=2, inputs=[x])
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # from the values square_into read


def test_an_unrecorded_overwrite_of_a_recorded_input_is_an_error():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square_into, dim=2, inputs=[x], outputs=[y])
    wp.launch(overwrite_with_three, dim=2, inputs=[x])  # outside the tape
    with pytest.raises(wp.GradientError, match="'x' to kernel 'square_into' was overwritten"):
        tape.backward(grads={y: 1.0})
    x2 = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    with wp.Tape() as tape2:
        wp.launch(square_into, dim=2, inputs=[x2], outputs=[y])
    x2.fill_(0.0)  # also outside the tape
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape2.backward(grads={y: 1.0})


def _square_recorded(x):
    y = wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_into, dim=2, inputs=[x], outputs=[y])
    return tape, y


def test_host_writes_through_a_numpy_view_after_recording_do_not_change_the_gradient():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    tape, y = _square_recorded(x)
    assert tape._steps[0].captured[0] is x  # no view alive: recorded in place, no copy
    x.numpy()[:] = 5.0  # handing out the view saves the recorded values first
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_host_writes_through_a_view_taken_before_recording_do_not_change_the_gradient():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    view = x.numpy()
    tape, y = _square_recorded(x)
    assert tape._steps[0].captured[0] is not x  # a live view: recorded as a snapshot
    view[:] = 5.0
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    del view
    tape2, y2 = _square_recorded(x)  # the view is gone: in place again
    assert tape2._steps[0].captured[0] is x


def test_host_writes_to_shared_numpy_memory_do_not_change_the_gradient():
    memory = np.array([1.0, 2.0], np.float32)
    x = wp.from_numpy(memory, requires_grad=True)
    tape, y = _square_recorded(x)
    memory[:] = 5.0  # the caller's own array: adjit cannot see this write
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.numpy(), [5.0, 5.0])


def test_host_writes_through_dlpack_and_the_array_interface_do_not_change_the_gradient():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    tape, y = _square_recorded(x)
    alias = np.from_dlpack(x)
    alias[:] = 5.0
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])

    z = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    tape, y = _square_recorded(z)
    np.asarray(z)[:] = 7.0  # through __array_interface__
    tape.backward(grads={y: 1.0})
    np.testing.assert_array_equal(z.grad.numpy(), [2.0, 4.0])
    tape3, _ = _square_recorded(z)  # shared from then on: always a snapshot
    assert tape3._steps[0].captured[0] is not z


# --- custom and suppressed gradients ---------------------------------------------------------

@wp.func
def scaled_product(x: float, y: float):
    return x * y


@wp.func_grad(scaled_product)
def adj_scaled_product(x: float, y: float, adj_ret: float):
    # deliberately not the true derivative, so the test sees which one is used
    wp.adjoint[x] += adj_ret * y * 10.0
    wp.adjoint[y] += adj_ret * x


@wp.func(differentiable=False)
def square_no_grad(x: float):
    return x * x


@wp.kernel
def custom_and_suppressed(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = scaled_product(a[i], b[i]) + square_no_grad(a[i]) + wp.stop_gradient(b[i] * b[i])


@wp.kernel(no_grad=("b",))
def product_no_grad_b(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * b[i]


def test_func_grad_replaces_the_derivative_and_marks_stop_gradients():
    a = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    b = wp.array(np.array([3.0, 4.0], np.float32), requires_grad=True)
    out = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(custom_and_suppressed, dim=2, inputs=[a, b], outputs=[out])
    tape.backward(grads={out: 1.0})
    np.testing.assert_array_equal(out.numpy(), [1 * 3 + 1 + 9, 2 * 4 + 4 + 16])
    np.testing.assert_array_equal(a.grad.numpy(), [30.0, 40.0])  # custom rule; square_no_grad adds 0
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0])    # stop_gradient(b*b) adds 0


def test_no_grad_kernel_parameters():
    a = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    b = wp.array(np.array([3.0, 4.0], np.float32), requires_grad=True)
    out = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(product_no_grad_b, dim=2, inputs=[a, b], outputs=[out])
    tape.backward(grads={out: 1.0})
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    assert not b.grad.numpy().any()


@wp.kernel
def atomic_sum_of_squares(x: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i] * x[i])


def test_gradient_through_an_atomic_reduction():
    xs = np.array([0.5, -1.0, 2.0])
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    total = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(atomic_sum_of_squares, dim=3, inputs=[x], outputs=[total])
    tape.backward(loss=total)
    assert total.numpy()[0] == pytest.approx(np.sum(xs ** 2))
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs)


@wp.kernel
def atomic_min_of_squares(x: wp.array(dtype=wp.float64), lo: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_min(lo, i % 2, x[i] * x[i])


@wp.kernel
def bounds_of(x: wp.array(dtype=wp.float64), lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    v = x[i] * x[i] + wp.sin(x[i])
    wp.atomic_min(lo, i % 3, v)
    wp.atomic_max(hi, i % 3, wp.vec2d(v, wp.float64(-0.5) * v))  # per component


@wp.kernel
def weigh_bounds(lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, wp.float64(j + 1) * lo[j] + hi[j].x * hi[j].x + hi[j].y)


def test_float_atomic_min_and_max_are_differentiated_against_central_differences():
    # Each value's gradient is the element's if it is the element's final
    # value; the element's old value keeps its gradient only where no value
    # beat it (lo[0] = -5 wins over every thread here, hi[1].y = 5 too).
    rng = np.random.default_rng(3)
    x0 = rng.uniform(-2.0, 2.0, 12)
    lo0, hi0 = np.array([-5.0, 9.0, 9.0]), np.array([[-9.0, -9.0], [-9.0, 5.0], [-9.0, -9.0]])

    def run(xv, lov=lo0, hiv=hi0):
        x = wp.array(xv, dtype=wp.float64, requires_grad=True)
        lo = wp.array(lov, dtype=wp.float64, requires_grad=True)
        hi = wp.array(hiv, dtype=wp.vec2d, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(bounds_of, dim=12, inputs=[x], outputs=[lo, hi])
            wp.launch(weigh_bounds, dim=3, inputs=[lo, hi], outputs=[loss])
        return tape, loss, x, lo, hi

    tape, loss, x, lo, hi = run(x0)
    tape.backward(loss=loss)
    h = 1e-6

    def fd(shift):
        return (run(*shift(h))[1].numpy()[0] - run(*shift(-h))[1].numpy()[0]) / (2 * h)
    fd_x = [fd(lambda e, k=k: (x0 + e * np.eye(12)[k],)) for k in range(12)]
    fd_lo = [fd(lambda e, k=k: (x0, lo0 + e * np.eye(3)[k])) for k in range(3)]
    fd_hi = [fd(lambda e, k=k: (x0, lo0, hi0 + e * np.eye(6)[k].reshape(3, 2))) for k in range(6)]
    np.testing.assert_allclose(x.grad.numpy(), fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(lo.grad.numpy(), fd_lo, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hi.grad.numpy().reshape(-1), fd_hi, rtol=1e-6, atol=1e-8)
    assert lo.grad.numpy()[0] != 0 and hi.grad.numpy()[1, 1] != 0 and lo.grad.numpy()[1] == 0
    # batched reverse mode (the Jacobian's rows, 16 seeds per adjoint launch)
    # gives the same gradient: loss = sum (j + 1) lo_j + hi_j.x^2 + hi_j.y
    J = wp.autograd.jacobian(bounds_of, 12, [wp.array(x0, dtype=wp.float64)],
                             [wp.array(lo0, dtype=wp.float64), wp.array(hi0, dtype=wp.vec2d)])
    hi_seed = np.stack([2 * hi.numpy()[:, 0], np.ones(3)], axis=1).reshape(-1)
    np.testing.assert_allclose(J[0, 0].numpy().T @ np.array([1.0, 2.0, 3.0]) + J[0, 1].numpy().T @ hi_seed, x.grad.numpy(),
                               rtol=1e-12, atol=1e-15)


def test_a_float_atomic_min_launch_not_on_a_tape_has_no_adjoint():
    from adjit.launch import launch_adjoint
    x = wp.array(np.array([0.5, -1.5]), dtype=wp.float64)
    lo = wp.full(2, 100.0, dtype=wp.float64)
    with pytest.raises(wp.GradientError, match="'lo' with a float atomic min/max.*only a launch recorded on a tape"):
        launch_adjoint(atomic_min_of_squares, 2, [x, lo])
