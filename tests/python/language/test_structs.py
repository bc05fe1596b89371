"""@adjit.struct (Warp's @wp.struct): struct kernel parameters and locals,
nested structs, arrays in structs (with gradients), structs passed to
functions; values checked by hand, gradients against finite differences."""
import numpy as np
import pytest

import adjit as wp


@wp.struct
class Inner:
    scale: float
    offset: wp.vec3


@wp.struct
class Params:
    gain: float
    inner: Inner
    pos: wp.array(dtype=wp.vec3)
    n: int


@wp.kernel
def use_params(p: Params, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = p                                    # a copy: p is unchanged below
    q.gain = q.gain * 2.0
    acc = wp.vec3(0.0)
    for j in range(p.n):                     # a struct field carried through a loop
        q.inner.scale = q.inner.scale + 1.0
        acc = acc + p.pos[i] * q.inner.scale
    if acc[0] > 0.0:                         # and through a branch (a component write in one)
        q.inner.offset = wp.vec3(1.0, 2.0, 3.0)
    else:
        q.inner.offset.y = 5.0
    t = Params()                             # made in the kernel: zero fields
    t.gain = 7.0
    out[i] = acc * q.gain + q.inner.offset + p.inner.offset * t.gain + wp.vec3(p.gain) + wp.vec3(t.inner.scale)
    p.pos[i] = p.pos[i] * 0.5                # an array field's element written


def _params():
    p = Params()
    p.gain = 1.5
    p.inner.scale = 1.0
    p.inner.offset = wp.vec3(0.1, 0.2, 0.3)
    p.pos = wp.array(np.array([[1, 1, 1], [-1, 2, 0]], np.float32), dtype=wp.vec3, requires_grad=True)
    p.n = 2
    return p


def test_struct_parameters_locals_and_nesting():
    p = _params()
    out = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_params, dim=2, inputs=[p], outputs=[out])
    pos = np.array([[1, 1, 1], [-1, 2, 0]], np.float32)
    # scale runs 2, 3: acc = 5 pos; the gain doubles to 3; the offset depends on the branch
    offsets = np.array([[1.0, 2.0, 3.0], [0.1, 5.0, 0.3]], np.float32)
    expected = 15 * pos + offsets + 7 * np.array([0.1, 0.2, 0.3], np.float32) + 1.5
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(p.pos.numpy(), pos * 0.5)
    tape.backward(grads={out: np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(p.pos.grad.numpy(), np.full((2, 3), 15.0))  # w.r.t. the values read
    assert p.gain == np.float32(1.5)  # the host value is untouched


@wp.struct
class Body:
    mass: wp.float64
    vel: wp.vec3d
    x: wp.array(dtype=wp.vec3d)


@wp.func
def kinetic(b: Body, i: int):
    v = b.vel + b.x[i]
    return wp.float64(0.5) * b.mass * wp.dot(v, v)


@wp.func
def heavier(b: Body, f: wp.float64):
    c = b
    c.mass = c.mass * f
    return kinetic(c, 0)


@wp.kernel
def energies(b: Body, e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    e[i] = kinetic(b, i) + heavier(b, wp.float64(2.0))


def test_structs_passed_to_functions_and_gradients_through_their_arrays():
    b = Body(mass=2.0, vel=wp.vec3d(1.0, 0.0, 0.0))
    x0 = np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    b.x = wp.array(x0, dtype=wp.vec3d, requires_grad=True)
    e = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    wp.launch(energies, dim=2, inputs=[b], outputs=[e])
    v = x0 + [1.0, 0.0, 0.0]
    kinetic_np = 0.5 * 2.0 * (v * v).sum(axis=1)
    np.testing.assert_allclose(e.numpy(), kinetic_np + 0.5 * 4.0 * (v[0] @ v[0]), rtol=1e-14)
    # gradients w.r.t. the array field against central finite differences
    w = np.array([0.7, -1.3])
    e = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(energies, dim=2, inputs=[b], outputs=[e])
    tape.backward(grads={e: w})

    def loss(x):
        probe = Body(mass=2.0, vel=wp.vec3d(1.0, 0.0, 0.0))
        probe.x = wp.array(x, dtype=wp.vec3d)
        out = wp.zeros(2, dtype=wp.float64)
        wp.launch(energies, dim=2, inputs=[probe], outputs=[out])
        return out.numpy() @ w

    fd = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        plus, minus = x0.copy(), x0.copy()
        plus[idx] += 1e-6
        minus[idx] -= 1e-6
        fd[idx] = (loss(plus) - loss(minus)) / 2e-6
    np.testing.assert_allclose(b.x.grad.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_gradients_through_a_struct_copy_in_a_function():
    b = Body(mass=3.0, vel=wp.vec3d(0.5, -1.0, 0.0))
    b.x = wp.array(np.array([[0.2, 0.1, 0.0], [1.0, -1.0, 2.0]]), dtype=wp.vec3d, requires_grad=True)
    e = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(energies, dim=2, inputs=[b], outputs=[e])
    tape.backward(grads={e: np.array([1.0, 1.0])})
    v = b.x.numpy() + [0.5, -1.0, 0.0]
    expected = 3.0 * v
    expected[0] += 2 * 6.0 * v[0]  # heavier(): mass 6, x[0], from both threads
    np.testing.assert_allclose(b.x.grad.numpy(), expected, rtol=1e-14)


def test_host_struct_values_check_and_convert_their_fields():
    p = Params(gain=2)
    assert p.gain == np.float32(2.0) and p.gain.dtype == np.float32
    np.testing.assert_array_equal(p.inner.offset, [0, 0, 0])
    assert p.pos is None and p.n == 0
    with pytest.raises(AttributeError, match="no field 'speed'"):
        p.speed = 1.0
    with pytest.raises(TypeError, match="shape"):
        p.inner.offset = [1.0, 2.0]
    with pytest.raises(TypeError, match="array of vec3"):
        p.pos = wp.zeros(3)
    with pytest.raises(TypeError, match="takes a Inner"):
        p.inner = Params()
    assert "Params" in repr(p)


def test_launch_errors_name_the_struct():
    out = wp.zeros(2, dtype=wp.vec3)
    with pytest.raises(wp.LaunchError, match="must be a Params struct value"):
        wp.launch(use_params, dim=2, inputs=[Inner()], outputs=[out])
    p = _params()
    p.pos = None  # Warp's null array: reading it is out of bounds, named by the field
    with pytest.raises(wp.OutOfBoundsError, match=r"array 'p.pos' of shape \(0,\)"):
        wp.launch(use_params, dim=2, inputs=[p], outputs=[out])


def test_arrays_of_structs_holding_arrays_are_a_clear_error():
    # (arrays of structs of values: tests/python/language/test_struct_arrays.py)
    with pytest.raises(TypeError, match=r"arrays of structs \(Params\) whose struct holds an array \(Params.pos\)"):
        wp.array(dtype=Params)


@wp.kernel
def unknown_field(p: Params, out: wp.array(dtype=float)):
    out[0] = p.speed


def test_an_unknown_field_is_a_located_error():
    with pytest.raises(wp.KernelError, match="no field 'speed'") as e:
        wp.launch(unknown_field, dim=1, inputs=[_params()], outputs=[wp.zeros(1)])
    assert "test_structs.py" in str(e.value)


def test_the_cache_key_follows_the_field_layout():
    @wp.struct
    class A:
        u: float
        v: float

    @wp.struct
    class B:
        v: float
        u: float

    assert repr(A) != repr(B)  # same leaf types, other fields: other kernels
    assert repr(A) == "A{u: float32, v: float32}"
