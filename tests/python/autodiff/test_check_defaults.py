"""``check_gradients`` and ``check_tape_gradients`` pick their step and
tolerances from the arrays' float dtypes: smooth float32 and float16 kernels
pass with the defaults, and the float32 defaults still catch a gradient that
is 3% off."""
import numpy as np
import pytest

import adjit as wp
from adjit.testing import (GradientMismatch, TOLERANCES_BY_DTYPE, check_gradients, check_tape_gradients,
                           default_tolerances)


@wp.kernel
def smooth32(p: wp.array(dtype=wp.vec3), s: wp.array(dtype=float), out: wp.array(dtype=float),
             n: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.sin(s[i]) * wp.exp(0.3 * wp.length(p[i])) + s[i] * s[i] * 4.0
    n[i] = wp.normalize(p[i]) * wp.cos(s[i])


def test_a_smooth_float32_kernel_passes_with_the_defaults():
    rng = np.random.default_rng(0)
    for trial in range(5):
        p = wp.array(rng.uniform(0.5, 2.0, (6, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
        s = wp.array(rng.uniform(-2.0, 2.0, 6).astype(np.float32), requires_grad=True)
        check_gradients(smooth32, 6, [p, s], [wp.zeros(6, requires_grad=True),
                                              wp.zeros(6, dtype=wp.vec3, requires_grad=True)])


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func_grad(softplus)
def adj_softplus(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret * 1.03 / (1.0 + wp.exp(-x))  # 3% too large


@wp.kernel
def soft(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = softplus(x[i])


def test_the_float32_defaults_still_catch_a_gradient_three_percent_off():
    x = wp.array(np.linspace(-1.0, 2.0, 5).astype(np.float32), requires_grad=True)
    with pytest.raises(GradientMismatch, match=r"eps=0\.001, rtol=0\.01, atol=0\.001"):
        check_gradients(soft, 5, [x], [wp.zeros(5, requires_grad=True)])


@wp.kernel
def smooth16(x: wp.array(dtype=wp.float16), y: wp.array(dtype=wp.float16)):
    i = wp.tid()
    v = float(x[i])
    y[i] = wp.float16(v * v * 0.5 + wp.sin(v))


def test_a_float16_kernel_and_several_launches_use_the_least_precise_dtype():
    x = wp.array(np.array([0.25, -0.5, 1.0, 1.5], np.float16), dtype=wp.float16, requires_grad=True)
    check_gradients(smooth16, 4, [x], [wp.zeros(4, dtype=wp.float16, requires_grad=True)])

    def run(x):
        y = wp.zeros(4, dtype=wp.float16, requires_grad=True)
        wp.launch(smooth16, 4, inputs=[x], outputs=[y])
        return [y]
    check_tape_gradients(run, [x])


def test_default_tolerances_follow_the_least_precise_dtype():
    f64, f32 = wp.zeros(2, dtype=wp.float64), wp.zeros(2)
    assert default_tolerances([f64]) == TOLERANCES_BY_DTYPE["float64"] == (1e-6, 1e-5, 1e-7)
    assert default_tolerances([f64, f32]) == TOLERANCES_BY_DTYPE["float32"]
    assert default_tolerances([f64, wp.zeros(2, dtype=wp.float16)]) == TOLERANCES_BY_DTYPE["float16"]
    assert default_tolerances([wp.zeros(2, dtype=wp.vec3d), wp.zeros(2, dtype=int)]) == TOLERANCES_BY_DTYPE["float64"]
