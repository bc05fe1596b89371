"""Values where Warp 1.19 defines a convention, checked here as its kernels
compute them (each checked against the real Warp on the CPU when written)."""
import numpy as np

import adjit as wp

NAN = float("nan")


@wp.kernel
def min_max_clamp(x: wp.array(dtype=float), a: wp.array(dtype=float), b: wp.array(dtype=float),
                  out: wp.array(dtype=float)):
    i = wp.tid()
    out[3 * i] = wp.min(x[i], a[i])
    out[3 * i + 1] = wp.max(x[i], a[i])
    out[3 * i + 2] = wp.clamp(x[i], a[i], b[i])


def test_min_max_clamp_ignore_a_nan_operand_and_route_the_gradient_to_the_other():
    # Warp: max(NaN, 1) = 1, clamp(NaN, -1, 1) = min(-1, 1) = -1; NaN only if both are.
    rows = [(NAN, -1.0, 1.0), (0.5, NAN, 1.0), (2.0, NAN, 1.0), (NAN, NAN, NAN), (0.5, -1.0, 1.0)]
    x, a, b = (wp.array(np.array(c, np.float32), requires_grad=True) for c in zip(*rows))
    out = wp.zeros(3 * len(rows), requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(min_max_clamp, len(rows), inputs=[x, a, b], outputs=[out])
    np.testing.assert_array_equal(out.numpy().reshape(-1, 3), [
        [-1.0, -1.0, -1.0], [0.5, 0.5, 0.5], [2.0, 2.0, 1.0], [NAN, NAN, NAN], [-1.0, 0.5, 0.5]])
    seed = np.zeros(3 * len(rows), np.float32)
    seed[2::3] = 1.0  # clamp's gradient
    tape.backward(grads={out: wp.array(seed)})
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 0, 1, 1])  # all NaN: the first operand
    np.testing.assert_array_equal(a.grad.numpy(), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(b.grad.numpy(), [0, 0, 1, 0, 0])


@wp.kernel
def defaults(t: wp.array(dtype=wp.transform), q: wp.array(dtype=wp.quat), axis: wp.array(dtype=wp.vec3)):
    t[0] = wp.transform()
    q[0] = wp.quat()
    ax, angle = wp.quat_to_axis_angle(wp.quat_identity())
    axis[0] = ax


def test_default_constructors_and_the_axis_of_no_rotation():
    t, q, axis = wp.zeros(1, dtype=wp.transform), wp.zeros(1, dtype=wp.quat), wp.ones(1, dtype=wp.vec3)
    wp.launch(defaults, 1, inputs=[t, q, axis])
    np.testing.assert_array_equal(t.numpy(), np.zeros((1, 7)))  # in kernels, zeros
    np.testing.assert_array_equal(np.asarray(wp.transform()), [0, 0, 0, 0, 0, 0, 1])  # on the host, the identity
    np.testing.assert_array_equal(q.numpy(), np.zeros((1, 4)))
    np.testing.assert_array_equal(axis.numpy(), np.zeros((1, 3)))


@wp.kernel
def reductions(v: wp.array(dtype=wp.vec3), lo: wp.array(dtype=float), hi: wp.array(dtype=float),
               iv: wp.array(dtype=wp.vec3i), ilo: wp.array(dtype=int)):
    i = wp.tid()
    lo[i] = wp.min(v[i])
    hi[i] = wp.max(v[i])
    ilo[i] = wp.min(iv[i])


def test_min_max_of_one_vector_reduce_skipping_nan_with_the_gradient_at_the_pick():
    rows = np.array([[NAN, 2.0, -1.0], [3.0, 3.0, 1.0], [0.5, -4.0, 7.0]], np.float32)
    v = wp.array(rows, dtype=wp.vec3, requires_grad=True)
    lo, hi = wp.zeros(3, requires_grad=True), wp.zeros(3, requires_grad=True)
    iv, ilo = wp.array(np.array([[4, -2, 9]] * 3, np.int32), dtype=wp.vec3i), wp.zeros(3, dtype=int)
    tape = wp.Tape()
    with tape:
        wp.launch(reductions, 3, inputs=[v], outputs=[lo, hi, iv, ilo])
    np.testing.assert_array_equal(lo.numpy(), [-1.0, 1.0, -4.0])
    np.testing.assert_array_equal(hi.numpy(), [2.0, 3.0, 7.0])
    np.testing.assert_array_equal(ilo.numpy(), [-2, -2, -2])
    tape.backward(grads={lo: wp.ones(3), hi: wp.ones(3)})
    # min's and max's picks (the first of equal components)
    np.testing.assert_array_equal(v.grad.numpy(), [[0, 1, 1], [1, 0, 1], [0, 1, 1]])
