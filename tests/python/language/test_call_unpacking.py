"""``*args`` in calls inside kernels: a tuple (a literal or a function's
results) or a vector's components, into funcs, builtins and constructors;
gradients pass through; anything else is a located error."""
import os

import numpy as np
import pytest

import adjit as wp

f64 = wp.float64
THIS_FILE = os.path.realpath(__file__)


@wp.func
def weigh(a: f64, b: f64, c: f64 = f64(2.0)):
    return a * f64(100.0) + b * f64(10.0) + c


@wp.func
def halves(x: f64):
    return x * f64(0.5), x * x


@wp.kernel
def unpack(x: wp.array(dtype=f64), v: wp.array(dtype=wp.vec3d), out: wp.array(dtype=f64, ndim=2)):
    i = wp.tid()
    out[i, 0] = weigh(*(x[i], f64(1.0)))
    out[i, 1] = weigh(*halves(x[i]))
    out[i, 2] = weigh(*v[i])
    w = wp.vec3d(*halves(x[i]), f64(4.0))
    out[i, 3] = wp.dot(w, v[i])
    out[i, 4] = wp.max(*halves(x[i]))


def test_unpacking_tuples_and_vectors():
    xs = np.array([0.5, 3.0])
    vs = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    out = wp.zeros((2, 5), dtype=f64)
    wp.launch(unpack, 2, inputs=[wp.array(xs), wp.array(vs, dtype=wp.vec3d)], outputs=[out])
    h, sq = xs * 0.5, xs * xs
    want = np.stack([xs * 100 + 10 + 2, h * 100 + sq * 10 + 2, vs @ [100.0, 10.0, 1.0],
                     h * vs[:, 0] + sq * vs[:, 1] + 4 * vs[:, 2], np.maximum(h, sq)], axis=1)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15)


def test_gradients_pass_through_unpacking():
    xs = np.array([0.5, 3.0])
    x = wp.array(xs, requires_grad=True)
    v = wp.array(np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]), dtype=wp.vec3d, requires_grad=True)
    out = wp.zeros((2, 5), dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(unpack, 2, inputs=[x, v], outputs=[out])
    seed = np.zeros((2, 5))
    seed[:, 1] = 1.0  # weigh(x/2, x^2) = 50 x + 10 x^2 + 2
    tape.backward(grads={out: wp.array(seed)})
    np.testing.assert_allclose(x.grad.numpy(), 50 + 20 * xs, rtol=1e-15)


@wp.kernel
def unpack_a_float(x: wp.array(dtype=f64)):
    x[0] = weigh(*x[0], f64(1.0))  # E:float


def test_unpacking_a_scalar_is_a_located_error():
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(unpack_a_float, 1, inputs=[wp.zeros(1, dtype=f64)])
    err = info.value
    assert os.path.realpath(err.filename) == THIS_FILE
    assert "*x[0]: Starred expressions are only supported for tuples, vectors, matrices and slices (as Warp's), " \
        "not a float64 value" in str(err)
