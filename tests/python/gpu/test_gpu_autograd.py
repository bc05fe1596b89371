"""Jacobians and gradient checks on a CUDA device: ``autograd.jacobian``
(reverse and forward mode, one seed or a batch of 4 per launch),
``jacobian_fd``, ``gradcheck``, ``gradcheck_tape`` and ``adjit.testing``'s
checks, each run where its arrays are.

Each test runs once per device (the ``device`` fixture: the CPU, then each
CUDA device; ``ADJIT_DEVICE_TESTS=cuda`` leaves the CPU out, as the GPU
machine does). The GPU machine has no compiler and no CPU kernels, so the
expected Jacobians are derived by hand (numpy) or are float64 finite
differences on the same device, never a CPU run. tools/gpu_device_check.py
exports the module-level kernels of this file for the GPU's arch: the
variants every launch needs, and for this file also the 4-lane batched
adjoints and tangent kernels (``BATCHED_LANES``) and the adjoints' tangent
kernels (forward over reverse), which ``jacobian(batch=4)``, ``gradcheck``
(its default batch gives 4 lanes for 4 output numbers) and
``check_hessian_symmetry`` run. Keep every kernel at module level, and keep
the outputs ``gradcheck`` differentiates at 4 numbers.
"""

import numpy as np
import pytest

import adjit as wp
from adjit.testing import GradientMismatch, check_dot_product, check_gradients, check_hessian_symmetry, \
    check_tape_gradients

from device_fixtures import CUDA_DEVICES, DEVICES, cuda_device, device  # noqa: F401 (fixtures)


@wp.kernel
def stretch(p: wp.array(dtype=wp.vec3d), s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.vec3d),
            energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = p[i] * (s[i] * s[i])
    energy[i] = wp.dot(p[i], p[i]) * s[i]


@wp.func
def softplus(x: wp.float64):
    return wp.log(wp.float64(1.0) + wp.exp(x))


@wp.func
def softplus_off(x: wp.float64):
    return wp.log(wp.float64(1.0) + wp.exp(x))


@wp.func_grad(softplus_off)
def adj_softplus_off(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += adj_ret * wp.float64(1.03) / (wp.float64(1.0) + wp.exp(-x))  # 3% too large


@wp.kernel
def soft(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = softplus(x[i])


@wp.kernel
def soft_off(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = softplus_off(x[i])


N = 4  # elements: gradcheck's 4 output numbers are one 4-lane batch


def _inputs(device):
    rng = np.random.default_rng(11)
    p0, s0 = rng.standard_normal((N, 3)), rng.uniform(0.5, 1.5, N)
    p = wp.array(p0, dtype=wp.vec3d, device=device, requires_grad=True)
    s = wp.array(s0, dtype=wp.float64, device=device, requires_grad=True)
    out = wp.zeros(N, dtype=wp.vec3d, device=device, requires_grad=True)
    energy = wp.zeros(N, dtype=wp.float64, device=device, requires_grad=True)
    return p0, s0, p, s, out, energy


def _expected(p0: np.ndarray, s0: np.ndarray) -> dict:
    """stretch's Jacobians by hand, keyed (input, output) as jacobian's:
    out[i] = s_i^2 p_i, energy[i] = (p_i . p_i) s_i."""
    n = len(s0)
    out_p, out_s = np.zeros((3 * n, 3 * n)), np.zeros((3 * n, n))
    energy_p, energy_s = np.zeros((n, 3 * n)), np.zeros((n, n))
    for i in range(n):
        out_p[3 * i:3 * i + 3, 3 * i:3 * i + 3] = s0[i] ** 2 * np.eye(3)
        out_s[3 * i:3 * i + 3, i] = 2 * s0[i] * p0[i]
        energy_p[i, 3 * i:3 * i + 3] = 2 * s0[i] * p0[i]
        energy_s[i, i] = p0[i] @ p0[i]
    return {(0, 0): out_p, (1, 0): out_s, (0, 1): energy_p, (1, 1): energy_s}


def _check_jacobians(J, expected, device, rtol=1e-12, atol=1e-12):
    assert sorted(dict.keys(J)) == sorted(expected)
    for key, want in expected.items():
        assert J[key].device == device and J[key].dtype == wp.float64
        np.testing.assert_allclose(J[key].numpy(), want, rtol=rtol, atol=atol, err_msg=f"pair {key}")


def _check_left_as_one_launch_leaves_them(p0, s0, p, s, out, energy):
    np.testing.assert_array_equal(p.numpy(), p0)
    np.testing.assert_array_equal(s.numpy(), s0)
    np.testing.assert_allclose(out.numpy(), p0 * (s0 ** 2)[:, None], rtol=1e-14)
    np.testing.assert_allclose(energy.numpy(), np.sum(p0 * p0, axis=1) * s0, rtol=1e-14)
    for a in (p, s, out, energy):
        np.testing.assert_array_equal(a.grad.numpy(), 0)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_one_seed_per_launch_matches_the_hand_derived_one(device, mode):
    p0, s0, p, s, out, energy = _inputs(device)
    J = wp.autograd.jacobian(stretch, dim=N, inputs=[p, s], outputs=[out, energy], mode=mode, batch=1)
    _check_jacobians(J, _expected(p0, s0), device)
    assert J["p", "energy"] is J[0, 1]
    _check_left_as_one_launch_leaves_them(p0, s0, p, s, out, energy)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_with_batched_seeds_matches_the_hand_derived_one(device, mode):
    # 12 rows of out (reverse) or 12 columns of p (forward): three launches of 4 lanes
    p0, s0, p, s, out, energy = _inputs(device)
    J = wp.autograd.jacobian(stretch, dim=N, inputs=[p, s], outputs=[out, energy], mode=mode, batch=4,
                             device=device)
    _check_jacobians(J, _expected(p0, s0), device)
    np.testing.assert_array_equal(p.numpy(), p0)
    np.testing.assert_allclose(out.numpy(), p0 * (s0 ** 2)[:, None], rtol=1e-14)


def test_jacobian_with_a_mask_and_a_row_limit(device):
    p0, s0, p, s, out, energy = _inputs(device)
    J = wp.autograd.jacobian(stretch, dim=N, inputs=[p, s], outputs=[out, energy], batch=1,
                             input_output_mask=[("s", "out")], max_outputs_per_var=5)
    assert list(dict.keys(J)) == [(1, 0)]
    want = _expected(p0, s0)[1, 0].copy()
    want[5:] = 0  # rows past the limit stay zero
    np.testing.assert_allclose(J["s", "out"].numpy(), want, rtol=1e-12, atol=1e-12)


def test_jacobian_fd_matches_the_hand_derived_one(device):
    p0, s0, p, s, out, energy = _inputs(device)
    J = wp.autograd.jacobian_fd(stretch, dim=N, inputs=[p, s], outputs=[out, energy], device=device, eps=1e-4)
    # out is quadratic in s and energy quadratic in p: central differences are exact up to rounding
    _check_jacobians(J, _expected(p0, s0), device, rtol=1e-7, atol=1e-8)
    np.testing.assert_array_equal(p.numpy(), p0)  # every perturbation undone
    np.testing.assert_array_equal(s.numpy(), s0)
    np.testing.assert_allclose(energy.numpy(), np.sum(p0 * p0, axis=1) * s0, rtol=1e-14)


def _stretched(p, s):
    """stretch as a Python function of launches, with fresh outputs on the arrays' device."""
    out = wp.zeros(p.shape[0], dtype=wp.vec3d, device=p.device, requires_grad=True)
    energy = wp.zeros(p.shape[0], dtype=wp.float64, device=p.device, requires_grad=True)
    wp.launch(stretch, dim=p.shape[0], inputs=[p, s], outputs=[out, energy])
    return [out, energy]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_function_of_launches(device, mode):
    p0, s0, p, s, _, _ = _inputs(device)
    J = wp.autograd.jacobian(_stretched, inputs=[p, s], mode=mode)
    _check_jacobians(J, _expected(p0, s0), device)
    fd = wp.autograd.jacobian_fd(_stretched, inputs=[p, s])
    _check_jacobians(fd, _expected(p0, s0), device, rtol=1e-7, atol=1e-8)
    np.testing.assert_array_equal(p.numpy(), p0)


def test_gradcheck_passes_a_correct_adjoint_and_fails_a_wrong_one(device):
    x = wp.array(np.array([0.5, 1.0, 1.5, 2.0]), dtype=wp.float64, device=device, requires_grad=True)
    y = wp.zeros(N, dtype=wp.float64, device=device, requires_grad=True)
    assert wp.autograd.gradcheck(soft, dim=N, inputs=[x], outputs=[y], device=device, show_summary=False)
    result = wp.autograd.gradcheck_result(soft_off, dim=N, inputs=[x], outputs=[y], raise_exception=False,
                                          show_summary=False)
    assert not result and "FAIL d y / d x" in result.report
    with pytest.raises(ValueError, match="gradcheck of kernel 'soft_off': FAILED"):
        wp.autograd.gradcheck(soft_off, dim=N, inputs=[x], outputs=[y], show_summary=False)
    np.testing.assert_array_equal(x.numpy(), [0.5, 1.0, 1.5, 2.0])


def test_gradcheck_tape_checks_the_launches_recorded_on_the_device(device):
    x = wp.array(np.array([0.5, 1.0, 1.5, 2.0]), dtype=wp.float64, device=device, requires_grad=True)
    y = wp.zeros(N, dtype=wp.float64, device=device, requires_grad=True)
    z = wp.zeros(N, dtype=wp.float64, device=device, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(soft, dim=N, inputs=[x], outputs=[y])
        wp.launch(soft_off, dim=N, inputs=[y], outputs=[z])
    assert wp.autograd.gradcheck_tape(tape, whitelist_kernels=[soft], raise_exception=False, show_summary=False)
    result = wp.autograd.gradcheck_tape_result(tape, raise_exception=False, show_summary=False)
    assert not result and "FAIL launch 1 of kernel 'soft_off'" in result.report
    assert "ok   launch 0 of kernel 'soft'" in result.report


def test_check_gradients_on_the_device(device):
    p0, s0, p, s, out, energy = _inputs(device)
    check_gradients(stretch, N, [p, s], [out, energy])
    x = wp.array(np.array([0.5, 1.0, 1.5, 2.0]), dtype=wp.float64, device=device)
    y = wp.zeros(N, dtype=wp.float64, device=device)
    with pytest.raises(GradientMismatch, match="kernel 'soft_off'"):
        check_gradients(soft_off, N, [x], [y])
    np.testing.assert_array_equal(p.numpy(), p0)


def test_tape_and_forward_mode_checks_on_the_device(device):
    p0, s0, p, s, _, _ = _inputs(device)
    check_tape_gradients(_stretched, [p, s], names=["p", "s"], output_names=["out", "energy"])
    check_dot_product(_stretched, [p, s])
    check_hessian_symmetry(_stretched, [p, s])
    np.testing.assert_array_equal(p.numpy(), p0)
    assert p.grad is not None and not np.any(p.grad.numpy())


def test_hessian_vector_product_matches_the_hand_derived_one(device):
    # loss = sum_i (p_i . p_i) s_i: H v for v = (dp, ds) is
    # (2 s_i dp_i + 2 p_i ds_i, 2 p_i . dp_i) per element
    p0, s0, p, s, _, _ = _inputs(device)
    rng = np.random.default_rng(3)
    dp, ds = rng.standard_normal((N, 3)), rng.standard_normal(N)
    _, grads, hvps = wp.autograd.hvp(lambda p, s: _stretched(p, s)[1], [p, s], [dp, ds],
                                     output_grads=[np.ones(N)])
    np.testing.assert_allclose(grads[0], 2 * s0[:, None] * p0, rtol=1e-12)
    np.testing.assert_allclose(grads[1], np.sum(p0 * p0, axis=1), rtol=1e-12)
    np.testing.assert_allclose(hvps[0], 2 * s0[:, None] * dp + 2 * p0 * ds[:, None], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hvps[1], 2 * np.sum(p0 * dp, axis=1), rtol=1e-12, atol=1e-12)


def test_a_device_that_is_not_the_arrays_is_refused(device):
    _, _, p, s, out, energy = _inputs(device)
    other = "cuda:0" if device == "cpu" else "cpu"
    # (on a machine without CUDA, 'cuda:0' is refused as not available)
    with pytest.raises(TypeError, match="jacobian of kernel 'stretch': "):
        wp.autograd.jacobian(stretch, dim=N, inputs=[p, s], outputs=[out, energy], device=other)
    with pytest.raises(TypeError, match="jacobian_fd of kernel 'stretch': "):
        wp.autograd.jacobian_fd(stretch, dim=N, inputs=[p, s], outputs=[out, energy], device=other)
    if device != "cpu":
        with pytest.raises(TypeError, match=f"device='cpu', but its arrays are on '{device}'"):
            wp.autograd.gradcheck(stretch, dim=N, inputs=[p, s], outputs=[out, energy], device="cpu")
        with pytest.raises(TypeError, match="its arrays are on .* they must be on one device"):
            wp.autograd.jacobian(stretch, dim=N, inputs=[p, s.to("cpu")], outputs=[out, energy])
