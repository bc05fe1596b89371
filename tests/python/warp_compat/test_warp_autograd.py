"""``adjit.autograd`` with Warp's signatures: ``jacobian`` / ``jacobian_fd``
returning 2-D arrays, of kernels and of Python functions of launches,
``max_outputs_per_var`` / ``max_inputs_per_var``, ``gradcheck`` with
``raise_exception`` and ``show_summary``, ``gradcheck_tape`` over every
launch of a tape, and ``jacobian_plot``. Values against hand-derived
Jacobians."""
import numpy as np
import pytest

import adjit as wp

f64 = wp.float64


@wp.kernel
def scale_sin(x: wp.array(dtype=f64), s: f64, y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * s


@wp.kernel
def pair_product(y: wp.array(dtype=f64), z: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    j = (i + 1) % 3
    z[i] = wp.vec2d(y[i] * y[j], y[i] + f64(2.0) * y[j])


@wp.kernel
def grow_in_place(x: wp.array(dtype=f64), a: f64):
    i = wp.tid()
    x[i] = x[i] * x[i] * a


X = np.array([0.3, -0.8, 1.2])


def _pair_product_jacobian(y):
    J = np.zeros((6, 3))
    for i in range(3):
        j = (i + 1) % 3
        J[2 * i, i] += y[j]
        J[2 * i, j] += y[i]
        J[2 * i + 1, i] += 1.0
        J[2 * i + 1, j] += 2.0
    return J


def test_jacobian_of_a_kernel_is_a_2d_float64_array():
    x, y = wp.array(X), wp.zeros(3, dtype=f64)
    jac = wp.autograd.jacobian(scale_sin, 3, [x, 2.0], [y])
    J = jac[0, 0]
    assert isinstance(J, wp.Array) and J.shape == (3, 3) and J.dtype == f64
    np.testing.assert_allclose(J.numpy(), np.diag(2 * np.cos(X)), rtol=1e-15)
    assert np.array_equal(jac["x", "y"].numpy(), J.numpy())
    fd = wp.autograd.jacobian_fd(scale_sin, 3, [x, 2.0], [y], eps=1e-6)[0, 0]
    np.testing.assert_allclose(fd.numpy(), np.diag(2 * np.cos(X)), atol=1e-9)


def two_launches(x):
    y = wp.zeros(3, dtype=f64, requires_grad=True)
    z = wp.zeros(3, dtype=wp.vec2d, requires_grad=True)
    wp.launch(scale_sin, 3, inputs=[x, 2.0], outputs=[y])
    wp.launch(pair_product, 3, inputs=[y], outputs=[z])
    return [y, z]


@wp.kernel
def squared_norms(v: wp.array(dtype=wp.vec2d), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = wp.dot(v[i], v[i])


def test_jacobians_of_strided_views_perturb_and_seed_the_view():
    # every other vector of a longer array (no flat view of its numbers):
    # finite differences must change the view's numbers, not a copy's
    V = np.arange(12, dtype=np.float64).reshape(6, 2) * 0.25 - 1.0
    base = wp.array(V, dtype=wp.vec2d)
    v, y = base[::2], wp.zeros(3, dtype=f64)
    expected = np.zeros((3, 6))
    for i in range(3):
        expected[i, 2 * i:2 * i + 2] = 2 * V[2 * i]
    fd = wp.autograd.jacobian_fd(squared_norms, 3, [v], [y], eps=1e-6)[0, 0]
    np.testing.assert_allclose(fd.numpy(), expected, atol=1e-8)
    np.testing.assert_array_equal(base.numpy(), V)  # restored
    np.testing.assert_allclose(wp.autograd.jacobian(squared_norms, 3, [v], [y])[0, 0].numpy(), expected,
                               rtol=1e-15)


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_jacobian_of_a_python_function_of_launches(mode):
    x = wp.array(X)
    jac = wp.autograd.jacobian(two_launches, inputs=[x], mode=mode)
    y = 2 * np.sin(X)
    dy = np.diag(2 * np.cos(X))
    np.testing.assert_allclose(jac[0, 0].numpy(), dy, rtol=1e-14)
    np.testing.assert_allclose(jac["x", 1].numpy(), _pair_product_jacobian(y) @ dy, rtol=1e-13)
    fd = wp.autograd.jacobian_fd(two_launches, inputs=[x], eps=1e-6)
    np.testing.assert_allclose(fd[0, 1].numpy(), jac[0, 1].numpy(), atol=1e-8)
    assert x.grad is None  # the gradient it needed was temporary


def test_max_outputs_and_inputs_per_var_limit_rows_and_columns():
    y0 = np.array([0.5, 1.5, -1.0])
    full = _pair_product_jacobian(y0)
    part = wp.autograd.jacobian(pair_product, 3, [wp.array(y0)], [wp.zeros(3, dtype=wp.vec2d)],
                                max_outputs_per_var=4)[0, 0].numpy()
    np.testing.assert_allclose(part[:4], full[:4], rtol=1e-15)
    np.testing.assert_array_equal(part[4:], 0.0)
    cols = wp.autograd.jacobian_fd(pair_product, 3, [wp.array(y0)], [wp.zeros(3, dtype=wp.vec2d)],
                                   max_inputs_per_var=2, eps=1e-6)[0, 0].numpy()
    np.testing.assert_allclose(cols[:, :2], full[:, :2], atol=1e-8)
    np.testing.assert_array_equal(cols[:, 2], 0.0)


@wp.func
def cube(x: f64):
    return x * x * x


@wp.func_grad(cube)
def adj_cube(x: f64, adj_ret: f64):
    wp.adjoint[x] += adj_ret * f64(3.3) * x * x  # 10% too large


@wp.kernel
def cubes(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = cube(x[i])


def test_gradcheck_raises_by_default_and_prints_its_summary(capsys):
    x = wp.array(X)
    assert wp.autograd.gradcheck(scale_sin, 3, [x, 2.0], [wp.zeros(3, dtype=f64)], eps=1e-6, atol=1e-8,
                                 rtol=1e-6) == True  # noqa: E712 (Warp's plain bool, as code compares it)
    assert "gradcheck of kernel 'scale_sin': passed" in capsys.readouterr().out
    assert wp.autograd.gradcheck(two_launches, inputs=[x], eps=1e-6, atol=1e-8, rtol=1e-6, show_summary=False)
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="FAIL d y / d x"):
        wp.autograd.gradcheck(cubes, 3, [x], [wp.zeros(3, dtype=f64)], eps=1e-6, show_summary=False)
    assert wp.autograd.gradcheck(cubes, 3, [x], [wp.zeros(3, dtype=f64)], eps=1e-6, raise_exception=False,
                                 show_summary=False) is False  # Warp's plain bool
    result = wp.autograd.gradcheck_result(cubes, 3, [x], [wp.zeros(3, dtype=f64)], eps=1e-6,
                                          raise_exception=False, show_summary=False)
    assert not result and "adjoint 3.3" not in result.report  # values, not the factor
    assert "3 of 9 entries out of tolerance" in result.report


def _recorded_tape():
    x = wp.array(X, requires_grad=True)
    y, c = wp.zeros(3, dtype=f64, requires_grad=True), wp.zeros(3, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_sin, 3, inputs=[x, 2.0], outputs=[y])
        wp.launch(grow_in_place, 3, inputs=[y, 0.5])
        wp.launch(cubes, 3, inputs=[y], outputs=[c])
    return tape, x, y, c


def test_gradcheck_tape_checks_each_launch_on_the_values_it_read():
    tape, x, y, c = _recorded_tape()
    before = [a.numpy().copy() for a in (x, y, c)]
    with pytest.raises(ValueError) as info:
        wp.autograd.gradcheck_tape(tape, eps=1e-6, atol=1e-8, rtol=1e-6, show_summary=False)
    report = str(info.value)
    assert "gradcheck_tape of 3 launches: FAILED" in report
    assert "ok   launch 0 of kernel 'scale_sin'" in report
    assert "ok   launch 1 of kernel 'grow_in_place'" in report  # on y as it was before it grew
    assert "FAIL launch 2 of kernel 'cubes'" in report
    for a, b in zip((x, y, c), before):
        np.testing.assert_array_equal(a.numpy(), b)  # the caller's arrays are left alone
    assert wp.autograd.gradcheck_tape(tape, eps=1e-6, atol=1e-8, rtol=1e-6, blacklist_kernels=[cubes],
                                      show_summary=False) is True  # Warp's plain bool
    result = wp.autograd.gradcheck_tape_result(tape, eps=1e-6, atol=1e-8, rtol=1e-6, blacklist_kernels=[cubes],
                                               show_summary=False)
    assert result and "skip launch 2 of kernel 'cubes': not selected" in result.report
    only = wp.autograd.gradcheck_tape_result(tape, eps=1e-6, atol=1e-8, rtol=1e-6,
                                             whitelist_kernels=[grow_in_place], raise_exception=False,
                                             show_summary=False, reverse_launches=True, skip_to_launch_index=1)
    lines = only.report.splitlines()
    assert lines[1].startswith("ok   launch 1 of kernel 'grow_in_place'")
    assert lines[-1] == "skip launch 0 of kernel 'scale_sin': not selected"


def test_gradcheck_tape_checks_an_in_place_update_through_clones():
    # x = x * x * a in place: checked as d x (after) / d x (before), from the
    # tape's snapshot of x before the launch
    x = wp.array(X, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(grow_in_place, 3, inputs=[x, 3.0])
    np.testing.assert_array_equal(tape._steps[0].captured[0].numpy(), X)
    result = wp.autograd.gradcheck_tape_result(tape, eps=1e-6, atol=1e-8, rtol=1e-6, show_summary=False)
    assert "ok   launch 0 of kernel 'grow_in_place'" in result.report
    assert "ok   d x (after) / d x:" in result.report
    np.testing.assert_allclose(x.numpy(), 3 * X * X, rtol=1e-15)  # the caller's array as the launch left it


def test_jacobian_plot_draws_each_jacobian():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    x = wp.array(X)
    jac = wp.autograd.jacobian(two_launches, inputs=[x])
    fig = wp.autograd.jacobian_plot(jac, two_launches, [x], show_plot=False)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    np.testing.assert_array_equal(images[0].get_array(), jac[0, 0].numpy())
    np.testing.assert_array_equal(images[1].get_array(), jac[0, 1].numpy())
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["d outputs[0] / d x", "d outputs[1] / d x"]
    fig = wp.autograd.jacobian_plot(jac, "two launches", show_plot=False, log_scale=True,
                                    scale_colors_per_submatrix=True, title="log")
    assert fig._suptitle.get_text() == "log"
    import matplotlib.pyplot as plt
    plt.close("all")


def test_bad_calls_are_clear_errors():
    x = wp.array(X)
    with pytest.raises(TypeError, match="dim is required for a kernel"):
        wp.autograd.jacobian(scale_sin, inputs=[x, 2.0], outputs=[wp.zeros(3, dtype=f64)])
    with pytest.raises(TypeError, match="dim and outputs are for kernels"):
        wp.autograd.jacobian(two_launches, 3, inputs=[x])
    with pytest.raises(TypeError, match="must return an adjit array or a list of them"):
        wp.autograd.jacobian(lambda x: 3.0, inputs=[x])
    with pytest.raises(TypeError, match="metadata="):
        wp.autograd.jacobian(two_launches, inputs=[x], metadata=object())
    with pytest.raises(ValueError, match="must be positive"):
        wp.autograd.jacobian(scale_sin, 3, [x, 2.0], [wp.zeros(3, dtype=f64)], max_outputs_per_var=0)


@wp.kernel
def compact(x: wp.array(dtype=f64), counter: wp.array(dtype=int), out: wp.array(dtype=f64)):
    i = wp.tid()
    if x[i] > f64(0.0):
        slot = wp.atomic_add(counter, 0, 1)
        out[slot] = x[i]


def test_func_replay_is_declared_and_the_kernels_it_serves_are_gradient_errors():
    @wp.func
    def next_slot(counter: wp.array(dtype=int)):
        return wp.atomic_add(counter, 0, 1)

    @wp.func_replay(next_slot)  # declared (its module imports); adjit never replays
    def replay(counter: wp.array(dtype=int)):
        return counter[1]

    assert next_slot.replay is replay
    with pytest.raises(TypeError, match="needs an @adjit.func"):
        wp.func_replay(lambda c: c)
    x = wp.array(np.array([1.0, -1.0, 2.0]), requires_grad=True)
    out = wp.zeros(3, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(compact, 3, inputs=[x, wp.zeros(1, dtype=int)], outputs=[out])
    with pytest.raises(wp.GradientError, match="writes kernel argument 'counter'.*depend on the order the threads"):
        tape.backward(grads={out: wp.array(np.ones(3))})
