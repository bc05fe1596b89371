"""Batched seeds and second order on the CPU, in float64.

``adjit.jvp_batch`` (K seed directions from one launch of a K-lane tangent
kernel) against K single ``adjit.jvp`` launches and central differences;
``autograd.jacobian(mode="forward")`` in batches against reverse mode, with
the launches counted; ``autograd.hvp`` (forward over reverse: the tangent
kernels of the adjoint kernels) against central differences of the gradient,
through runtime loops whose reversal keeps checkpoints and values, in-place
updates, vectors and several launches, and the symmetry u.Hv == v.Hu.
"""
import numpy as np
import pytest

import adjit as wp
from adjit import forward
from adjit.errors import GradientError


@wp.kernel
def waves(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64),
          z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    a = x[i]
    b = wp.sin(a * s) + wp.exp(-a * a)
    y[i] = b * a
    z[i] = wp.vec3d(b, a * s, wp.cos(b))


@wp.kernel
def looped(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    acc = wp.float64(0.0)
    for j in range(n):
        acc = wp.sin(acc + x[i]) * wp.float64(0.9) + x[i] * acc * wp.float64(0.1)
    y[i] = acc * x[i]


@wp.kernel
def pairwise(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    j = (i + 1) % x.shape[0]
    d = x[i] - x[j]
    wp.atomic_add(loss, 0, wp.exp(-d * d) * x[i] * x[j])


@wp.kernel
def springs(p: wp.array(dtype=wp.vec3d), steps: int, energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    q = p[i]
    v = wp.vec3d(0.0, 0.0, 0.0)
    for k in range(steps):
        d = q - wp.vec3d(1.0, 0.5, -0.25)
        f = -d * (wp.length(d) - wp.float64(0.5))
        v = v + f * wp.float64(0.05)
        q = q + v * wp.float64(0.05)
    wp.atomic_add(energy, 0, wp.dot(q, q) + wp.length(v))


@wp.kernel
def scale_in_place(y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = y[i] * y[i] + wp.sin(y[i])


@wp.kernel
def sum_cubes(y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * y[i] * y[i])


def f64(values):
    return wp.array(np.asarray(values, dtype=np.float64), dtype=wp.float64)


# --- batched seeds ---------------------------------------------------------------

def test_jvp_batch_equals_one_jvp_per_direction():
    rng = np.random.default_rng(1)
    x0 = rng.uniform(-1, 1, 12)
    directions = [rng.normal(size=12) for _ in range(5)]
    s_tangents = [0.0, 1.0, -0.5, 0.25, 2.0]
    batch = [[d, st] for d, st in zip(directions, s_tangents)]
    x, y, z = f64(x0), wp.zeros(12, dtype=wp.float64), wp.zeros(12, dtype=wp.vec3d)
    batched = wp.jvp_batch(waves, 12, [x, 0.7], batch, [y, z])
    assert len(batched) == 5
    for (d, st), (ty, tz) in zip(batch, batched):
        one_y, one_z = wp.jvp(waves, 12, [f64(x0), 0.7], [d, st],
                              [wp.zeros(12, dtype=wp.float64), wp.zeros(12, dtype=wp.vec3d)])
        np.testing.assert_allclose(ty.numpy(), one_y.numpy(), rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(tz.numpy(), one_z.numpy(), rtol=1e-14, atol=1e-15)

        def run(h):
            yy, zz = wp.zeros(12, dtype=wp.float64), wp.zeros(12, dtype=wp.vec3d)
            wp.launch(waves, 12, inputs=[f64(x0 + h * d), 0.7 + h * st], outputs=[yy, zz])
            return yy.numpy(), zz.numpy()
        h = 1e-6
        (yp, zp), (ym, zm) = run(h), run(-h)
        np.testing.assert_allclose(ty.numpy(), (yp - ym) / (2 * h), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(tz.numpy(), (zp - zm) / (2 * h), rtol=1e-6, atol=1e-8)
    # the primal ran once, as a launch does
    expected_y = wp.zeros(12, dtype=wp.float64)
    wp.launch(waves, 12, inputs=[f64(x0), 0.7], outputs=[expected_y, wp.zeros(12, dtype=wp.vec3d)])
    np.testing.assert_array_equal(y.numpy(), expected_y.numpy())


def test_jvp_batch_through_a_runtime_loop():
    x0 = np.linspace(-0.8, 0.9, 7)
    dirs = [np.eye(7)[k] for k in range(7)]
    outs = wp.jvp_batch(looped, 7, [f64(x0), 30], [[d] for d in dirs], [wp.zeros(7, dtype=wp.float64)])
    jac = np.stack([o[0].numpy() for o in outs], axis=1)
    h = 1e-6
    for k in range(7):
        yp, ym = wp.zeros(7, dtype=wp.float64), wp.zeros(7, dtype=wp.float64)
        wp.launch(looped, 7, inputs=[f64(x0 + h * dirs[k]), 30], outputs=[yp])
        wp.launch(looped, 7, inputs=[f64(x0 - h * dirs[k]), 30], outputs=[ym])
        np.testing.assert_allclose(jac[:, k], (yp.numpy() - ym.numpy()) / (2 * h), rtol=1e-6, atol=1e-8)


def test_jvp_batch_rejects_too_many_directions():
    with pytest.raises(ValueError, match="1 to 16"):
        wp.jvp_batch(looped, 2, [f64([1.0, 2.0]), 3], [[None]] * 17, [wp.zeros(2, dtype=wp.float64)])
    with pytest.raises(ValueError, match="1 to 16"):
        wp.jvp_batch(looped, 2, [f64([1.0, 2.0]), 3], [], [wp.zeros(2, dtype=wp.float64)])


def test_forward_jacobian_takes_one_launch_per_batch(monkeypatch):
    x0 = np.linspace(-1, 1, 20)
    launches = []
    real = forward.launch_tangent
    monkeypatch.setattr(forward, "launch_tangent", lambda *a, **k: (launches.append(k.get("lanes", 1)),
                                                                    real(*a, **k))[1])
    fwd = wp.autograd.jacobian(pairwise, 20, [f64(x0)], [wp.zeros(1, dtype=wp.float64)], mode="forward")
    assert launches == [16, 16]  # 20 columns: 16, then 4 and 12 zero seeds
    rev = wp.autograd.jacobian(pairwise, 20, [f64(x0)], [wp.zeros(1, dtype=wp.float64)], mode="reverse")
    np.testing.assert_allclose(fwd[0, 0], rev[0, 0], rtol=1e-12, atol=1e-14)
    launches.clear()
    one = wp.autograd.jacobian(pairwise, 20, [f64(x0)], [wp.zeros(1, dtype=wp.float64)], mode="forward",
                               batch=1)
    assert launches == [1] * 20
    np.testing.assert_allclose(one[0, 0], fwd[0, 0], rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="batch"):
        wp.autograd.jacobian(pairwise, 20, [f64(x0)], [wp.zeros(1, dtype=wp.float64)], mode="forward",
                             batch=17)


# --- Hessian-vector products ---------------------------------------------------------

def _gradient(fn, x0, dtype=wp.float64):
    x = wp.array(x0, dtype=dtype, requires_grad=True)
    tape = wp.Tape()
    with tape:
        loss = fn(x)
    tape.backward(loss=loss)
    return x.grad.numpy().astype(np.float64)


def _check_hvp(fn, x0, v, dtype=wp.float64, h=1e-6, rtol=1e-6, atol=1e-8):
    x = wp.array(x0, dtype=dtype)
    loss, gradients, hvps = wp.autograd.hvp(fn, [x], [v])
    np.testing.assert_allclose(gradients[0], _gradient(fn, x0, dtype), rtol=1e-13, atol=1e-14)
    fd = (_gradient(fn, x0 + h * v, dtype) - _gradient(fn, x0 - h * v, dtype)) / (2 * h)
    np.testing.assert_allclose(hvps[0], fd, rtol=rtol, atol=atol)
    assert x.grad is None and not x.requires_grad  # the input is left as it was
    return hvps[0]


def loop_loss(steps):
    def fn(x):
        y = wp.zeros(x.shape[0], dtype=wp.float64, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(looped, x.shape[0], inputs=[x, steps], outputs=[y])
        wp.launch(sum_cubes, x.shape[0], inputs=[y], outputs=[loss])
        return loss
    return fn


@pytest.mark.parametrize("steps", [1, 5, 200])
def test_hvp_through_a_runtime_loop(steps):
    # 200 steps: the loop reversal keeps checkpoints and values in stack
    # buffers, whose tangents the tangent kernel carries.
    rng = np.random.default_rng(steps)
    _check_hvp(loop_loss(steps), rng.uniform(-0.9, 0.9, 6), rng.normal(size=6))


def test_hvp_of_a_pairwise_loss_against_the_full_hessian():
    rng = np.random.default_rng(4)
    x0 = rng.uniform(-1, 1, 5)

    def fn(x):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(pairwise, x.shape[0], inputs=[x], outputs=[loss])
        return loss
    columns = [_check_hvp(fn, x0, np.eye(5)[k]) for k in range(5)]
    hessian = np.stack(columns, axis=1)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12, atol=1e-13)
    # a sparse Hessian: x_i meets only its two neighbours
    assert hessian[0, 2] == 0 and hessian[0, 1] != 0


def test_hvp_of_vectors_and_loops():
    rng = np.random.default_rng(5)
    x0 = rng.uniform(-1, 1, (4, 3))

    def fn(p):
        energy = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(springs, 4, inputs=[p, 40], outputs=[energy])
        return energy
    u, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    hv = _check_hvp(fn, x0, v, dtype=wp.vec3d)
    hu = _check_hvp(fn, x0, u, dtype=wp.vec3d)
    assert abs(np.sum(u * hv) - np.sum(v * hu)) <= 1e-12 * (np.abs(u).sum() * np.abs(hv).sum() + 1)


def test_hvp_through_an_in_place_update():
    x0 = np.array([0.3, -0.7, 1.1])

    def fn(x):
        y = wp.clone(x)  # recorded: a copy is not a launch
        return y
    with pytest.raises(GradientError, match="replays kernel launches only"):
        wp.autograd.hvp(fn, [f64(x0)], [np.ones(3)])

    @wp.kernel
    def copy_into(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        y[i] = x[i]

    def in_place(x):
        y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(copy_into, 3, inputs=[x], outputs=[y])
        wp.launch(scale_in_place, 3, inputs=[y])
        wp.launch(scale_in_place, 3, inputs=[y])
        wp.launch(sum_cubes, 3, inputs=[y], outputs=[loss])
        return loss
    _check_hvp(in_place, x0, np.array([1.0, -2.0, 0.5]), rtol=1e-6, atol=1e-7)


def test_hvp_needs_a_loss_with_a_gradient():
    def no_grad(x):
        loss = wp.zeros(1, dtype=wp.float64)
        wp.launch(sum_cubes, 3, inputs=[x], outputs=[loss])
        return loss
    with pytest.raises(TypeError, match="must return the loss"):
        wp.autograd.hvp(no_grad, [f64([1.0, 2.0, 3.0])], [np.ones(3)])
    with pytest.raises(ValueError, match="2 tangents for 1 inputs"):
        wp.autograd.hvp(no_grad, [f64([1.0, 2.0, 3.0])], [None, None])


@wp.func
def softplus(x: wp.float64, k: wp.float64):
    return wp.log(wp.float64(1.0) + wp.exp(k * x)) / k


@wp.func_grad(softplus)
def adj_softplus(x: wp.float64, k: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += adj_ret / (wp.float64(1.0) + wp.exp(-k * x))


@wp.kernel
def softplus_loss(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, softplus(x[i], wp.float64(3.0)) * x[i])


def softplus_energy(x):
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(softplus_loss, x.shape[0], inputs=[x], outputs=[loss])
    return loss


def test_hvp_through_a_func_grad_needs_its_func_jvp():
    # forward over reverse differentiates the hand-written adjoint (inlined)
    # and the primal call, which needs a forward rule
    with pytest.raises(GradientError, match=r"softplus.*custom adjoint.*@func_jvp"):
        wp.autograd.hvp(softplus_energy, [f64([0.2, -0.5])], [np.ones(2)])

    @wp.func_jvp(softplus)
    def softplus_jvp(x: wp.float64, k: wp.float64, dx: wp.float64, dk: wp.float64):
        return dx / (wp.float64(1.0) + wp.exp(-k * x))

    try:
        x0, v = np.array([0.2, -0.5, 1.3]), np.array([1.0, 0.5, -2.0])
        hv = _check_hvp(softplus_energy, x0, v)
        s = 1 / (1 + np.exp(-3 * x0))
        np.testing.assert_allclose(hv, (3 * s * (1 - s) * x0 + 2 * s) * v, rtol=1e-12)
    finally:
        softplus.custom_jvp = None


# --- batched reverse mode ------------------------------------------------------------

@wp.kernel
def accumulate_in_place(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                        total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = y[i] * x[i] + wp.sin(y[i])       # read, then overwritten
    wp.atomic_add(total, i % 2, y[i] * x[(i + 1) % x.shape[0]])


def test_reverse_jacobian_takes_one_adjoint_launch_per_batch(monkeypatch):
    from adjit import autograd
    rng = np.random.default_rng(7)
    x0, y0 = rng.uniform(-1, 1, 20), rng.uniform(-1, 1, 20)
    launches = []
    real = autograd.launch_adjoint_batch
    monkeypatch.setattr(autograd, "launch_adjoint_batch",
                        lambda k, dim, args, grads, finals=None, compiled_from=None: (launches.append(len(grads)),
                                                                  real(k, dim, args, grads, finals))[1])

    def jac(mode, batch=16):
        y = f64(y0)
        out = wp.autograd.jacobian(accumulate_in_place, 20, [f64(x0)], [y, wp.zeros(2, dtype=wp.float64)],
                                   mode=mode, batch=batch)
        return out, y.numpy()
    batched, y_after = jac("reverse")
    # rows: y (20 elements, read and overwritten: 16 + 4 padded with zero
    # seeds), then total (2 elements: 2 lanes)
    assert launches == [16, 16, 2]
    one_by_one, _ = jac("reverse", batch=1)
    forward, _ = jac("forward")
    for key in batched:
        np.testing.assert_array_equal(batched[key], one_by_one[key])
        np.testing.assert_allclose(batched[key], forward[key], rtol=1e-12, atol=1e-14)
    # the arrays end as one launch leaves them
    np.testing.assert_allclose(y_after, y0 * x0 + np.sin(y0), rtol=1e-15)


def test_batched_adjoint_lanes_against_finite_differences():
    x0 = np.linspace(-0.8, 0.9, 7)
    rev = wp.autograd.jacobian(looped, 7, [f64(x0), 60], [wp.zeros(7, dtype=wp.float64)], mode="reverse")[0, 0]
    h = 1e-6
    for k in range(7):
        e = np.eye(7)[k]
        yp, ym = wp.zeros(7, dtype=wp.float64), wp.zeros(7, dtype=wp.float64)
        wp.launch(looped, 7, inputs=[f64(x0 + h * e), 60], outputs=[yp])
        wp.launch(looped, 7, inputs=[f64(x0 - h * e), 60], outputs=[ym])
        np.testing.assert_allclose(rev[:, k], (yp.numpy() - ym.numpy()) / (2 * h), rtol=1e-6, atol=1e-8)


@wp.kernel
def lowest(x: wp.array(dtype=wp.float64), lo: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_min(lo, i % 2, wp.sin(x[i]) * x[i] + x[i] * x[i] * x[i])


@wp.kernel
def squares_of(lo: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, lo[j] * lo[j] * wp.float64(j + 1))


def test_a_float_atomic_min_has_a_gradient_but_no_forward_mode():
    # reverse mode compares with the minimum the launch left (kept by the
    # tape); forward mode (and so forward over reverse) would need the
    # winner's tangent during the launch: a located error
    def fn(x):
        lo = wp.full(2, 5.0, dtype=wp.float64, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(lowest, x.shape[0], inputs=[x], outputs=[lo])
        wp.launch(squares_of, 2, inputs=[lo], outputs=[loss])
        return loss
    rng = np.random.default_rng(11)
    x0 = rng.uniform(-1.5, 1.5, 7)
    h, g = 1e-6, _gradient(fn, x0)
    fd = [(fn(f64(x0 + h * e)).numpy()[0] - fn(f64(x0 - h * e)).numpy()[0]) / (2 * h) for e in np.eye(7)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    assert np.count_nonzero(g) == 2  # the two minima
    with pytest.raises(GradientError, match=r"(?s)in forward mode.*test_second_order.py:\d+: atomic_min of float "
                                            r"values has no tangent"):
        wp.autograd.hvp(fn, [f64(x0)], [np.ones(7)])
