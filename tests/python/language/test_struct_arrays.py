"""Arrays of structs (Warp's ``wp.array(dtype=MyStruct)``): host values
against numpy structured arrays, field and whole-element reads and writes in
kernels (nested structs, 2-D, device functions), reverse and forward
gradients through the float fields against float64 central differences, and
bad inputs as errors naming the line."""
import typing

import numpy as np
import pytest

import adjit as wp
from adjit import autograd


@wp.struct
class Inner:
    w: wp.vec2
    k: int


@wp.struct
class S:
    x: float
    v: wp.vec3
    n: int
    b: bool
    inner: Inner


#: What Warp 1.19's ``wp.zeros(3, dtype=S).numpy().dtype`` is for S (C
#: alignment: ``inner`` at 24 after the bool at 20, 36 bytes).
S_NUMPY = np.dtype({"names": ["x", "v", "n", "b", "inner"],
                    "formats": ["<f4", ("<f4", (3,)), "<i4", "?", [("w", "<f4", (2,)), ("k", "<i4")]],
                    "offsets": [0, 4, 16, 20, 24], "itemsize": 36})


def _values(n: int) -> list:
    out = []
    for j in range(n):
        s = S(x=0.5 * j, v=(1.0, j, -j), n=3 * j, b=j % 2 == 1)
        s.inner.w = (j, 2.0 * j)
        s.inner.k = 10 + j
        out.append(s)
    return out


def _structured(n: int) -> np.ndarray:
    data = np.zeros(n, S_NUMPY)
    j = np.arange(n)
    data["x"], data["n"], data["b"] = 0.5 * j, 3 * j, j % 2 == 1
    data["v"] = np.stack([np.ones(n), j, -j], axis=1)
    data["inner"]["w"] = np.stack([j, 2.0 * j], axis=1)
    data["inner"]["k"] = 10 + j
    return data


# --- host values ---------------------------------------------------------------

def test_zeros_numpy_is_a_structured_array_of_warps_layout():
    a = wp.zeros(3, dtype=S)
    values = a.numpy()
    assert values.dtype == S_NUMPY and values.dtype.itemsize == 36 and values.shape == (3,)
    # the compile cache keys on the layout
    assert repr(wp.array(dtype=S, ndim=2)) == ("array(dtype=S{x: float32, v: vec3, n: int32, b: bool, "
                                               "inner: Inner{w: vec2, k: int32}}, ndim=2)")
    assert not any(values[name].any() for name in ("x", "v", "n", "b"))
    assert (a.shape, a.ndim, a.size, len(a), a.dtype) == ((3,), 1, 3, 3, S)
    assert isinstance(a, wp.array) and isinstance(a, wp.StructArray)
    assert repr(a) == "adjit.array(shape=(3,), dtype=S)"


def test_round_trip_through_struct_values_and_numpy_structured_arrays():
    expected = _structured(4)
    from_values = wp.array(_values(4), dtype=S)
    np.testing.assert_array_equal(from_values.numpy(), expected)
    from_numpy = wp.array(expected, dtype=S)
    np.testing.assert_array_equal(from_numpy.numpy(), expected)
    np.testing.assert_array_equal(wp.array(from_numpy, dtype=S).numpy(), expected)  # a copy
    listed = from_numpy.list()
    assert all(isinstance(s, wp.types.StructValue) for s in listed)
    assert listed[3].x == 1.5 and listed[3].inner.k == 13 and listed[3].b
    np.testing.assert_array_equal(listed[2].v, [1, 2, -2])
    # shape= and 2-D data
    grid = wp.array(expected, dtype=S, shape=(2, 2))
    assert grid.shape == (2, 2)
    np.testing.assert_array_equal(grid.numpy().reshape(4), expected)
    nested = wp.array([_values(2), _values(2)], dtype=S)
    assert nested.shape == (2, 2) and nested.numpy()[1, 1]["inner"]["k"] == 11
    # fields by name in the numpy data, converted to the field types
    wider = np.zeros(2, [("x", "f8"), ("v", "f8", (3,)), ("n", "i8"), ("b", "?"),
                         ("inner", [("w", "f8", (2,)), ("k", "i8")]), ("extra", "f4")])
    wider["x"] = [1.25, 2.5]
    assert wp.array(wider, dtype=S).numpy()["x"].tolist() == [1.25, 2.5]


def test_numpy_is_a_copy_and_fields_share_memory():
    a = wp.array(_values(3), dtype=S)
    values = a.numpy()
    values["x"] = 99.0  # a copy (Warp's is a view): nothing changes
    assert a.numpy()["x"].tolist() == [0.0, 0.5, 1.0]
    x = a.field("x")
    assert isinstance(x, wp.Array) and x.dtype == wp.float32
    x.fill_(7.0)  # the field's array is the array's memory
    assert a.numpy()["x"].tolist() == [7.0, 7.0, 7.0]
    inner = a.field("inner")
    assert isinstance(inner, wp.StructArray) and inner.dtype is Inner
    assert inner.field("k") is a.field("inner.k")
    a.assign(values)
    assert a.numpy()["x"].tolist() == [99.0] * 3
    part = a[1:3]  # a view of elements 1 and 2
    part.field("n").fill_(-1)
    assert a.numpy()["n"].tolist() == [0, -1, -1]
    with pytest.raises(KeyError, match="no field 'q'"):
        a.field("q")


def test_constructors_copy_clone_and_gradients():
    full = wp.full(2, S(x=3.0, n=4), S)
    assert full.numpy()["x"].tolist() == [3.0, 3.0] and full.numpy()["n"].tolist() == [4, 4]
    assert wp.empty((2, 3), S).shape == (2, 3)
    with pytest.raises(TypeError, match="full"):
        wp.ones(2, S)
    a = wp.zeros(3, dtype=S, requires_grad=True)
    assert a.requires_grad and a.grad.dtype is S
    # float fields have gradients; the other fields none (their grad fields are zeros)
    assert a.field("x").grad is not None and a.field("inner.w").grad is not None
    assert a.field("n").grad is None and a.field("b").grad is None
    assert a.grad.field("x") is a.field("x").grad
    a.requires_grad = False
    assert a.grad is None and not a.requires_grad
    np.testing.assert_array_equal(wp.zeros_like(full).numpy(), wp.zeros(2, S).numpy())
    src = wp.array(_values(4), dtype=S)
    dest = wp.zeros(3, dtype=S)
    wp.copy(dest, src, dest_offset=1, src_offset=2, count=2)
    np.testing.assert_array_equal(dest.numpy()[1:], _structured(4)[2:])
    copied = wp.clone(src)
    assert copied.field("x") is not src.field("x")
    np.testing.assert_array_equal(copied.numpy(), src.numpy())


def test_bad_host_inputs_are_clear_errors():
    with pytest.raises(TypeError, match="must be a S value, got 1.0"):
        wp.array([1.0, 2.0], dtype=S)
    with pytest.raises(TypeError, match="numpy structured array or a list of S values"):
        wp.array(np.zeros(3), dtype=S)
    with pytest.raises(ValueError, match="has no field 'v'"):
        wp.array(np.zeros(3, [("x", "f4")]), dtype=S)
    with pytest.raises(ValueError, match="ragged"):
        wp.array([S(), [S()]], dtype=S)
    with pytest.raises(ValueError, match="do not fit"):
        wp.array(_values(3), dtype=S, shape=(2, 2))

    @wp.struct
    class HoldsArray:
        a: wp.array(dtype=float)

    with pytest.raises(TypeError, match="whose struct holds an array"):
        wp.zeros(2, dtype=HoldsArray)
    @wp.struct  # declared (the module imports), refused where it is used
    class HoldsStructArray:
        a: wp.array(dtype=S)

    with pytest.raises(TypeError, match="cannot be a struct field"):
        HoldsStructArray()


# --- kernels ---------------------------------------------------------------------

@wp.kernel
def fields_and_elements(a: wp.array(dtype=S), out: wp.array(dtype=float), copies: wp.array(dtype=S)):
    i = wp.tid()
    s = a[i]                                  # every field
    out[i] = a[i].x * 2.0 + s.v[1] + float(a[i].n) + a[i].inner.w[1] + float(len(a) + a.shape[0])
    if s.b:
        out[i] = out[i] + 1000.0
    copies[i] = s                             # every field stored
    copies[i].inner = a[(i + 1) % len(a)].inner   # a nested struct field, whole (no thread writes inner)
    a[i].v[2] = 7.0                           # a component of a field
    a[i].x += 1.0                             # an atomic add on the field's array
    a[i].b = not s.b


def test_field_and_whole_element_reads_and_writes():
    n = 4
    a = wp.array(_values(n), dtype=S)
    before = a.numpy()
    out = wp.zeros(n)
    copies = wp.zeros(n, dtype=S)
    wp.launch(fields_and_elements, n, [a], [out, copies])
    j = np.arange(n)
    expected = 2 * before["x"] + before["v"][:, 1] + before["n"] + before["inner"]["w"][:, 1] + 2 * n
    expected += 1000.0 * before["b"]
    np.testing.assert_allclose(out.numpy(), expected)
    want = before.copy()
    want["inner"] = before["inner"][(j + 1) % n]
    np.testing.assert_array_equal(copies.numpy(), want)
    after = a.numpy()
    np.testing.assert_allclose(after["x"], before["x"] + 1)
    assert after["v"][:, 2].tolist() == [7.0] * n and after["v"][:, :2].tolist() == before["v"][:, :2].tolist()
    assert after["b"].tolist() == (~before["b"]).tolist()
    np.testing.assert_array_equal(after["inner"], before["inner"])


@wp.kernel
def store_whole(a: wp.array(dtype=S)):
    i = wp.tid()
    t = S()                                  # zero fields
    t.x = float(i)
    t.inner.k = 5
    a[i] = t
    a[i].inner.w = wp.vec2(1.0, float(i))      # a nested field
    a[i].inner.k += 2                           # an atomic add on an int field


def test_a_struct_made_in_the_kernel_is_stored_whole():
    a = wp.array(_values(3), dtype=S)
    wp.launch(store_whole, 3, [a])
    want = np.zeros(3, S_NUMPY)
    want["x"], want["inner"]["k"] = [0, 1, 2], 7
    want["inner"]["w"] = [[1, 0], [1, 1], [1, 2]]
    np.testing.assert_array_equal(a.numpy(), want)


@wp.kernel
def grid_of_structs(a: wp.array2d(dtype=S), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = a[i, j].x + a[i][j].v[2] + float(a.shape[1])   # a[i][j] is a[i, j]
    s = a[i][j]
    s.x = float(i * 10 + j)
    a[i, j] = s


def test_two_dimensional_arrays_of_structs():
    a = wp.zeros((2, 3), dtype=S)
    a.field("v").fill_(wp.vec3(1.0, 2.0, 3.0))
    a.field("x").fill_(0.5)
    out = wp.zeros((2, 3))
    wp.launch(grid_of_structs, (2, 3), [a], [out])
    assert out.numpy().tolist() == [[6.5] * 3] * 2
    assert a.numpy()["x"].tolist() == [[0, 1, 2], [10, 11, 12]]
    assert a[1].numpy()["x"].tolist() == [10, 11, 12]  # a row view


@wp.func
def scaled_x(a: wp.array(dtype=S), i: int, k: float):
    return a[i].x * k


@wp.func
def set_inner(a: wp.array(dtype=S), i: int, value: Inner):
    a[i].inner = value


@wp.kernel
def through_functions(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = scaled_x(a, i, 3.0)
    inner = Inner()
    inner.k = 42
    set_inner(a, i, inner)


def test_arrays_of_structs_passed_to_functions():
    a = wp.array(_values(3), dtype=S)
    out = wp.zeros(3)
    wp.launch(through_functions, 3, [a], [out])
    np.testing.assert_allclose(out.numpy(), [0.0, 1.5, 3.0])
    assert a.numpy()["inner"]["k"].tolist() == [42] * 3


@wp.kernel
def generic_read(a: typing.Any, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i].x


def test_generic_kernels_take_arrays_of_structs():
    out = wp.zeros(3)
    wp.launch(generic_read, 3, [wp.array(_values(3), dtype=S)], [out])
    assert out.numpy().tolist() == [0.0, 0.5, 1.0]


@wp.kernel
def reads_past_the_end(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    out[0] = a[5].v[1]


def test_out_of_bounds_names_the_field_array():
    with pytest.raises(wp.OutOfBoundsError, match=r"'a\.v' of shape \(3,\)"):
        wp.launch(reads_past_the_end, 1, [wp.zeros(3, dtype=S)], [wp.zeros(1)])


# --- gradients -------------------------------------------------------------------

@wp.struct
class Body:
    m: wp.float64
    p: wp.vec3d
    spin: wp.vec2d
    tag: int


@wp.struct
class Pair:
    a: Body
    weight: wp.float64


@wp.func
def body_energy(bodies: wp.array(dtype=Pair), i: int):
    b = bodies[i].a
    return b.m * wp.dot(b.p, b.p) + wp.sin(b.spin[1]) * bodies[i].weight


@wp.kernel
def pair_energy(bodies: wp.array(dtype=Pair), out: wp.array(dtype=Pair), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    e = body_energy(bodies, i)
    q = bodies[i]
    q.a.p = q.a.p * e
    q.weight = e * e
    out[i] = q                               # a whole element stored
    out[i].a.spin[0] = q.a.m * 3.0           # then a component of a nested field
    wp.atomic_add(loss, 0, out[i].weight + wp.dot(out[i].a.p, out[i].a.p) * out[i].a.spin[0]
                  + out[i].a.spin[1] * wp.float64(out[i].a.tag))


def _bodies(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.zeros(n, Pair.numpy_dtype())
    data["a"]["m"] = rng.uniform(0.5, 1.5, n)
    data["a"]["p"] = rng.normal(size=(n, 3)) * 0.5
    data["a"]["spin"] = rng.normal(size=(n, 2))
    data["a"]["tag"] = np.arange(n) + 1
    data["weight"] = rng.normal(size=n)
    return data


def _loss(data: np.ndarray) -> float:
    bodies = wp.array(data, dtype=Pair)
    loss = wp.zeros(1, dtype=wp.float64)
    wp.launch(pair_energy, len(data), [bodies], [wp.zeros(len(data), dtype=Pair), loss])
    return float(loss.numpy()[0])


FLOAT_FIELDS = ("a.m", "a.p", "a.spin", "weight")


def _field(data: np.ndarray, path: str) -> np.ndarray:
    for part in path.split("."):
        data = data[part]
    return data


def _central_differences(data: np.ndarray, path: str, eps: float = 1e-6) -> np.ndarray:
    fd = np.zeros(_field(data, path).shape)
    for index in np.ndindex(*fd.shape):
        plus, minus = data.copy(), data.copy()
        _field(plus, path)[index] += eps
        _field(minus, path)[index] -= eps
        fd[index] = (_loss(plus) - _loss(minus)) / (2 * eps)
    return fd


def test_reverse_gradients_through_float_fields_match_central_differences():
    data = _bodies(3)
    bodies = wp.array(data, dtype=Pair, requires_grad=True)
    out = wp.zeros(3, dtype=Pair, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(pair_energy, 3, [bodies], [out, loss])
    tape.backward(loss=loss)
    grad = bodies.grad.numpy()
    assert grad.dtype == Pair.numpy_dtype() and not grad["a"]["tag"].any()
    for path in FLOAT_FIELDS:
        np.testing.assert_allclose(_field(grad, path), _central_differences(data, path), rtol=1e-6, atol=1e-8,
                                   err_msg=path)
    # the tape knows the field arrays; zero() clears them
    assert bodies.field("a.p") in tape.gradients and bodies.field("a.tag") not in tape.gradients
    tape.zero()
    assert not any(_field(bodies.grad.numpy(), p).any() for p in FLOAT_FIELDS)


def test_backward_seeded_on_an_array_of_structs():
    data = _bodies(2, seed=1)
    bodies = wp.array(data, dtype=Pair, requires_grad=True)
    out = wp.zeros(2, dtype=Pair, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(pair_energy, 2, [bodies], [out, loss])
    seed = np.zeros(2, Pair.numpy_dtype())
    seed["weight"] = 1.0  # d(sum of out.weight) = d(sum of e^2)
    tape.backward(grads={out: seed})

    def weights(d):
        o = wp.zeros(2, dtype=Pair)
        wp.launch(pair_energy, 2, [wp.array(d, dtype=Pair)], [o, wp.zeros(1, dtype=wp.float64)])
        return o.numpy()["weight"].sum()
    plus, minus = data.copy(), data.copy()
    plus["a"]["m"][1] += 1e-6
    minus["a"]["m"][1] -= 1e-6
    fd = (weights(plus) - weights(minus)) / 2e-6
    np.testing.assert_allclose(bodies.grad.numpy()["a"]["m"][1], fd, rtol=1e-6)
    with pytest.raises(TypeError, match="numpy structured array"):
        tape.backward(grads={out: 1.0})


def test_forward_gradients_through_float_fields_match_central_differences():
    data = _bodies(3, seed=2)
    bodies = wp.array(data, dtype=Pair)
    out = wp.zeros(3, dtype=Pair)
    loss = wp.zeros(1, dtype=wp.float64)

    def run(m, p, spin, weight):   # the field arrays: autograd.jvp tracks adjit arrays
        wp.launch(pair_energy, 3, [bodies], [out, loss])
        return loss, out.field("weight")

    rng = np.random.default_rng(3)
    tangents = [rng.normal(size=_field(data, path).shape) for path in FLOAT_FIELDS]
    (_, _), (d_loss, d_weight) = autograd.jvp(run, [bodies.field(path) for path in FLOAT_FIELDS], tangents)
    eps = 1e-6
    plus, minus = data.copy(), data.copy()
    for path, t in zip(FLOAT_FIELDS, tangents):
        _field(plus, path)[...] += eps * t
        _field(minus, path)[...] -= eps * t
    fd = (_loss(plus) - _loss(minus)) / (2 * eps)
    np.testing.assert_allclose(d_loss.numpy()[0], fd, rtol=1e-6)
    assert d_weight.shape == (3,)


@wp.kernel(no_grad=("a",))
def reads_without_gradient(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    i = wp.tid()
    s = a[i]
    out[i] = a[i].x * 2.0 + s.x


@wp.kernel
def reads_with_gradient(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    i = wp.tid()
    s = a[i]
    out[i] = a[i].x * 2.0 + s.x


def test_no_grad_covers_every_field():
    for kernel, expected in ((reads_without_gradient, 0.0), (reads_with_gradient, 3.0)):
        a = wp.zeros(2, dtype=S, requires_grad=True)
        out = wp.zeros(2, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(kernel, 2, [a], [out])
        tape.backward(grads={out: np.ones(2, np.float32)})
        assert a.grad.numpy()["x"].tolist() == [expected] * 2


# --- bad kernels -------------------------------------------------------------------

@wp.kernel
def unknown_field(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    out[0] = a[0].speed


@wp.kernel
def field_without_index(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    out[0] = a.x[0]


@wp.kernel
def bound_to_another_name(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    b = a
    out[0] = b[0].x


@wp.kernel
def stores_a_float(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    a[0] = out[0]


@wp.kernel
def atomic_on_a_field_value(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    wp.atomic_add(a[0].x, 1.0)


@wp.kernel
def stores_a_struct_in_a_field(a: wp.array(dtype=S), out: wp.array(dtype=float)):
    a[0].x = a[1]


@pytest.mark.parametrize("kernel, message", [
    (unknown_field, "struct S has no field 'speed'"),
    (field_without_index, r"'a' is an array of S: index it to reach a field \(a\[i\]\.x\)"),
    (bound_to_another_name, "cannot be bound to another name"),
    (stores_a_float, "the elements of 'a' are S structs; got a float32 value"),
    (atomic_on_a_field_value, r"atomic_add\(\) takes an array"),
    (stores_a_struct_in_a_field, "got a S struct"),
])
def test_bad_kernels_are_located_errors(kernel, message):
    with pytest.raises(wp.KernelError, match=message) as e:
        wp.launch(kernel, 1, [wp.zeros(2, dtype=S)], [wp.zeros(1)])
    assert "test_struct_arrays.py" in str(e.value)


def test_bad_launch_arguments_name_the_parameter():
    for bad, message in ((wp.zeros(2), "must be an array of S, got an array of float32"),
                         (wp.zeros((2, 2), dtype=S), "must be a 1-d array, got 2-d"),
                         (S(), "must be an array of S, got S"),
                         (wp.zeros(2, dtype=Inner), "must be an array of S, got an array of Inner")):
        with pytest.raises(wp.LaunchError, match=message) as e:
            wp.launch(reads_with_gradient, 1, [bad], [wp.zeros(1)])
        assert "test_struct_arrays.py" in str(e.value) and "argument 'a'" in str(e.value)
