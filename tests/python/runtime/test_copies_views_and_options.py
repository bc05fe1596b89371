"""Warp's host API, second batch: wp.copy with offsets, array views and
methods, Tape.gradients / record_func / visualize, module options,
wp.utils and wp.optim. Values against numpy or hand-derived numbers;
gradients exact."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def set_five(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 5.0


@wp.kernel(module="host_api_ii_options")
def triple(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 3.0 * x[i]


def f32(values):
    return np.asarray(values, dtype=np.float32)


# --- wp.copy -------------------------------------------------------------------

def test_copy_with_offsets_and_count_between_shapes():
    src = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    dest = wp.zeros(8)
    wp.copy(dest, src)  # all of src, flattened
    np.testing.assert_array_equal(dest.numpy(), [0, 1, 2, 3, 4, 5, 0, 0])
    dest = wp.zeros(8)
    assert wp.copy(dest, src, 2, 1, 3) is dest
    np.testing.assert_array_equal(dest.numpy(), [0, 0, 1, 2, 3, 0, 0, 0])
    dest = wp.zeros(8)
    wp.copy(dest, src, dest_offset=5, src_offset=3)  # count 0: the rest of src
    np.testing.assert_array_equal(dest.numpy(), [0, 0, 0, 0, 0, 3, 4, 5])
    grid = wp.zeros((2, 2))
    wp.copy(grid, src, 1, 2, 2)
    np.testing.assert_array_equal(grid.numpy(), [[0, 2], [3, 0]])


def test_copy_of_vectors_counts_elements():
    src = wp.array(np.arange(9, dtype=np.float32).reshape(3, 3), dtype=wp.vec3)
    dest = wp.zeros(4, dtype=wp.vec3)
    wp.copy(dest, src, 2, 1, 2)
    np.testing.assert_array_equal(dest.numpy(), [[0, 0, 0], [0, 0, 0], [3, 4, 5], [6, 7, 8]])


def test_copy_gradient_flows_only_through_the_copied_range():
    a = wp.array(f32([1, 2, 3, 4, 5]), requires_grad=True)
    b = wp.array(f32([9, 9, 9, 9, 9]), requires_grad=True)
    y = wp.zeros(5, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(b, a, dest_offset=1, src_offset=2, count=2)  # b = [9, 3, 4, 9, 9]
        wp.launch(square, dim=5, inputs=[b, y])
    np.testing.assert_array_equal(b.numpy(), [9, 3, 4, 9, 9])
    tape.backward(grads={y: f32([1, 1, 1, 1, 1])})
    # d sum(b^2) / d b = 2 b; the copied range passes on to a[2:4] and is consumed.
    np.testing.assert_array_equal(a.grad.numpy(), [0, 0, 6, 8, 0])
    np.testing.assert_array_equal(b.grad.numpy(), [18, 0, 0, 18, 18])


def test_copy_within_one_array_overlapping():
    x = wp.array(f32([0, 1, 2, 3, 4, 5]), requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(x, x, dest_offset=1, src_offset=0, count=4)
    np.testing.assert_array_equal(x.numpy(), [0, 0, 1, 2, 3, 5])
    tape.backward(grads={x: f32([1, 2, 3, 4, 5, 6])})
    # x'[0] = x[0], x'[1..4] = x[0..3], x'[5] = x[5]
    np.testing.assert_array_equal(x.grad.numpy(), [1 + 2, 3, 4, 5, 0, 6])


def test_copy_over_an_array_a_recorded_launch_read_keeps_its_gradient():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    z = wp.array(f32([7, 8, 9, 10]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
        wp.copy(x, z, 0, 2, 2)  # overwrites x[0:2]: the launch's adjoint needs the old values
    np.testing.assert_array_equal(x.numpy(), [9, 10, 3, 4])
    tape.backward(grads={y: f32([1, 1, 1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8])
    np.testing.assert_array_equal(z.grad.numpy(), [0, 0, 0, 0])


def test_copy_outside_the_tape_is_a_detected_overwrite():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
    wp.copy(x, wp.zeros(4), 1, 0, 1)
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: f32([1, 1, 1, 1])})


def test_copy_bad_arguments():
    src, dest = wp.zeros(6), wp.zeros(4)
    with pytest.raises(ValueError, match="run past the end of dest"):
        wp.copy(dest, src)
    with pytest.raises(ValueError, match="run past the end of src"):
        wp.copy(wp.zeros(8), src, 0, 3, 4)
    with pytest.raises(ValueError, match="src_offset 7 is past the end"):
        wp.copy(dest, src, 0, 7, 1)
    with pytest.raises(ValueError, match="dest_offset must be non-negative"):
        wp.copy(dest, src, -1, 0, 1)
    with pytest.raises(ValueError, match="count must be non-negative"):
        wp.copy(dest, src, 0, 0, -1)
    with pytest.raises(TypeError, match="count must be an int"):
        wp.copy(dest, src, 0, 0, 1.5)
    with pytest.raises(ValueError, match="dtypes differ"):
        wp.copy(wp.zeros(6, dtype=wp.float64), src)
    with pytest.raises(ValueError, match="dtypes differ"):
        wp.copy(wp.zeros(2, dtype=wp.vec3), src)
    with pytest.raises(TypeError, match="two adjit arrays"):
        wp.copy(dest, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="no stream"):
        wp.copy(dest, src, count=2, stream="s")


# --- array views and methods ------------------------------------------------------

def test_array_methods():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.strides == (16, 4) and a.is_contiguous
    assert a.list() == list(range(12)) and all(type(v) is float for v in a.list())
    ints = wp.array([3, 1, 2], dtype=wp.int32)
    assert ints.list() == [3, 1, 2] and type(ints.list()[0]) is int
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    assert v.strides == (12,)
    assert [list(e) for e in v.list()] == [[0, 1, 2], [3, 4, 5]]
    assert a.ptr == a.numpy().ctypes.data and a[1:].ptr - a.ptr == 16
    with pytest.raises(TypeError, match="not iterable"):
        iter(a)


def test_views_share_memory_and_shape():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(a[1:3].numpy(), ref[1:3])
    np.testing.assert_array_equal(a[-2:].numpy(), ref[-2:])
    np.testing.assert_array_equal(a[1].numpy(), ref[1])
    assert a[2:2].shape == (0, 4) and a[:].shape == (3, 4)
    np.testing.assert_array_equal(a.flatten().numpy(), ref.ravel())
    np.testing.assert_array_equal(a.reshape((4, 3)).numpy(), ref.reshape(4, 3))
    np.testing.assert_array_equal(a.reshape((-1, 2)).numpy(), ref.reshape(-1, 2))
    assert a.reshape(12).shape == (12,)
    # A launch writing a view writes the base.
    wp.launch(set_five, dim=4, inputs=[a.flatten()[2:6]])
    ref.ravel()[2:6] = 5
    np.testing.assert_array_equal(a.numpy(), ref)
    wp.launch(set_five, dim=4, inputs=[a[2]])
    ref[2] = 5
    np.testing.assert_array_equal(a.numpy(), ref)


def test_view_reinterprets_dtype():
    a = wp.array(f32([1.0, -2.0, 0.5]))
    np.testing.assert_array_equal(a.view(wp.int32).numpy(), f32([1.0, -2.0, 0.5]).view(np.int32))
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    flat = v.view(float)
    assert flat.dtype == wp.float32 and flat.shape == (2, 3)
    back = flat.view(wp.vec3)
    assert back.dtype == wp.vec3 and back.shape == (2,)
    m = wp.zeros((3, 4)).view(wp.vec4)
    assert m.shape == (3,)
    assert wp.zeros(4, dtype=wp.vec4).view(wp.mat22).shape == (4,)
    with pytest.raises(TypeError, match="cannot view"):
        a.view(wp.float64)
    with pytest.raises(ValueError, match="does not end in the shape"):
        wp.zeros((3, 4)).view(wp.vec3)


def test_view_gradients_are_views_of_the_gradient():
    a = wp.zeros((3, 4), requires_grad=True)
    row = a[1]
    assert row.requires_grad and row.grad.shape == (4,)
    row.grad.fill_(3.0)
    a.reshape((6, 2))[5].grad.fill_(1.0)
    expected = np.zeros((3, 4), np.float32)
    expected[1] = 3
    expected[2, 2:] = 1
    np.testing.assert_array_equal(a.grad.numpy(), expected)
    assert wp.zeros(3)[1:].grad is None


def test_gradient_through_a_slice_view():
    x = wp.array(f32([1, 2, 3, 4, 5]), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x[1:4], y])
    tape.backward(grads={y: f32([1, 10, 100])})
    np.testing.assert_array_equal(x.grad.numpy(), [0, 4, 60, 800, 0])


def test_a_write_through_a_view_saves_what_a_recorded_launch_read_from_the_base():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
        wp.launch(set_five, dim=2, inputs=[x[0:2]])
    np.testing.assert_array_equal(x.numpy(), [5, 5, 3, 4])
    tape.backward(grads={y: f32([1, 1, 1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8])  # from the old values


def test_a_write_through_a_view_outside_the_tape_is_detected():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
    wp.launch(set_five, dim=1, inputs=[x.reshape((2, 2))[1]])
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: f32([1, 1, 1, 1])})
    # and the other way: a write to the base seen by a launch that read a view
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=2, inputs=[x[2:], y])
    x.fill_(0.0)
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: f32([1, 1])})


def test_numpy_writes_through_a_view_save_the_base_first():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
    x[2:].numpy()[:] = 0  # handing out the numpy view saves x for the tape first
    tape.backward(grads={y: f32([1, 1, 1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8])


def test_bad_indexing_and_reshapes():
    a = wp.zeros((3, 4))
    for key in (slice(0, 4), slice(2, 1), 3, -4, 1.0):  # strided views: test_strided_views.py
        with pytest.raises(IndexError):
            a[key]
    with pytest.raises(IndexError, match="1-D array is not supported"):
        wp.zeros(3)[0]
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape((5, 3))
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape((-1, 5))
    with pytest.raises(ValueError, match="only one -1"):
        a.reshape((-1, -1))
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        a.reshape((1, 1, 1, 3, 4))


# --- Tape -------------------------------------------------------------------------

def test_tape_gradients_maps_arrays_to_their_gradients():
    x = wp.array(f32([1, 2]), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    c = wp.zeros(2)
    with wp.Tape() as tape:
        wp.launch(square, dim=2, inputs=[x, y])
        wp.launch(square, dim=2, inputs=[y, c])
    grads = tape.gradients
    assert set(map(id, grads)) == {id(x), id(y)}
    assert grads[x] is x.grad and grads[y] is y.grad
    with pytest.raises(TypeError):
        grads[c] = wp.zeros(2)


def test_record_func_runs_in_reverse_order_during_backward():
    x = wp.array(f32([1, 2, 3]), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    z = wp.zeros(3, requires_grad=True)
    seen = []

    def double_z_to_y():  # the adjoint of y -> z = 2 y, done by hand
        seen.append(z.grad.numpy().copy())
        y.grad.assign(y.grad.numpy() + 2 * z.grad.numpy())

    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x, y])
        z.assign(2 * y.numpy())
        tape.record_func(double_z_to_y, [y, z])
    tape.backward(grads={z: f32([1, 1, 1])})
    np.testing.assert_array_equal(seen[0], [1, 1, 1])
    np.testing.assert_array_equal(x.grad.numpy(), [4, 8, 12])  # 2 * 2x
    tape.zero()
    np.testing.assert_array_equal(z.grad.numpy(), [0, 0, 0])
    with pytest.raises(wp.GradientError, match="has no gradient"):
        tape.record_func(double_z_to_y, [wp.zeros(3)])
    with pytest.raises(TypeError, match="must be callable"):
        tape.record_func(None, [y])


def test_visualize_writes_dot_text(tmp_path):
    x = wp.array(f32([1, 2]), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    z = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=2, inputs=[x, y])
        wp.copy(z, y)
    path = tmp_path / "tape.dot"
    dot = tape.visualize(str(path), array_labels={z: "out"})
    assert path.read_text() == dot
    assert dot.startswith("digraph Tape {") and dot.rstrip().endswith("}") and "rankdir=LR;" in dot
    assert 'a0 [shape=ellipse, label="x\\nfloat32 (2,)"];' in dot
    assert 'a1 [shape=ellipse, label="y\\nfloat32 (2,)"];' in dot
    assert 'a2 [shape=ellipse, label="out\\nfloat32 (2,)"];' in dot
    assert 's0 [shape=box, label="square\\ndim=2"];' in dot and 's1 [shape=box, label="copy"];' in dot
    edges = {line.strip() for line in dot.splitlines() if "->" in line}
    assert edges == {"a0 -> s0;", "s0 -> a1;", "a1 -> s1;", "s1 -> a2;"}
    hidden = tape.visualize(hide_readonly_arrays=True, graph_direction="TB")
    assert "rankdir=TB;" in hidden and '"x\\n' not in hidden and "a0 -> s0;" not in hidden
    tracked = tape.visualize(hide_readonly_arrays=True, track_inputs=[x], track_input_names=["param"])
    assert 'label="param\\nfloat32 (2,)", style=filled' in tracked
    with pytest.raises(ValueError, match="graph_direction"):
        tape.visualize(graph_direction="up")


# --- module options ---------------------------------------------------------------

def test_kernel_key_and_module():
    assert square.key == "square"
    assert square.module is wp.get_module(__name__) and square.module.name == __name__
    assert triple.module is wp.get_module("host_api_ii_options")

    def make():
        @wp.kernel(module="unique")
        def inner(x: wp.array(dtype=float)):
            i = wp.tid()
            x[i] = 0.0
        return inner
    inner = make()
    assert inner.key == "test_kernel_key_and_module__locals__make__locals__inner"
    assert inner.module.name.startswith(inner.key) and inner.module is not make().module


def test_module_options_get_set_and_defaults():
    options = wp.get_module_options()
    assert options is wp.get_module(__name__).options and options is wp.get_module_options(__name__)
    assert options["enable_backward"] is True and options["max_unroll"] == 16 and options["mode"] is None
    wp.set_module_options({"mode": "debug", "fast_math": True}, module="host_api_ii_other")
    other = wp.get_module_options("host_api_ii_other")
    assert other["mode"] == "debug" and other["fast_math"] is True and options["mode"] is None
    with pytest.raises(KeyError, match="unknown option.*'enable_backwards'"):
        wp.set_module_options({"enable_backwards": False})
    with pytest.raises(TypeError, match="enable_backward must be True or False"):
        wp.set_module_options({"enable_backward": 0})
    with pytest.raises(TypeError, match="options must be a dict"):
        wp.set_module_options([("mode", "debug")])
    with pytest.raises(TypeError, match="module must be"):
        wp.get_module_options(3)


def test_set_module_options_defaults_to_the_calling_module():
    try:
        wp.set_module_options({"max_unroll": 4})
        assert wp.get_module(__name__).options["max_unroll"] == 4
    finally:
        wp.set_module_options({"max_unroll": 16})


def test_module_enable_backward_false_is_honoured():
    x = wp.array(f32([1, 2]), requires_grad=True)
    y = wp.zeros(2, requires_grad=True)
    try:
        wp.set_module_options({"enable_backward": False}, module="host_api_ii_options")
        assert not triple.enable_backward and square.enable_backward
        with wp.Tape() as tape:
            wp.launch(triple, dim=2, inputs=[x, y])
        np.testing.assert_array_equal(y.numpy(), [3, 6])  # the forward runs
        with pytest.raises(wp.GradientError, match="'triple'.*enable_backward=False"):
            tape.backward(grads={y: f32([1, 1])})
    finally:
        wp.set_module_options({"enable_backward": True}, module="host_api_ii_options")
    y.grad.zero_()
    tape.backward(grads={y: f32([1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3])


def test_a_kernels_own_enable_backward_wins_over_its_modules():
    @wp.kernel(enable_backward=True, module="host_api_ii_options")
    def copy_twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = 2.0 * x[i]
    try:
        wp.set_module_options({"enable_backward": False}, module="host_api_ii_options")
        assert copy_twice.enable_backward and not triple.enable_backward
    finally:
        wp.set_module_options({"enable_backward": True}, module="host_api_ii_options")


# --- wp.utils ---------------------------------------------------------------------

def test_array_sum():
    values = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    a = wp.array(values)
    total = wp.utils.array_sum(a)
    assert isinstance(total, np.float32)
    np.testing.assert_allclose(total, values.sum(), rtol=1e-6)
    np.testing.assert_allclose(wp.utils.array_sum(a, value_count=5), values.ravel()[:5].sum(), rtol=1e-6)
    out = wp.zeros(1)
    assert wp.utils.array_sum(a, out=out) is out
    np.testing.assert_allclose(out.numpy(), [values.sum()], rtol=1e-6)
    np.testing.assert_allclose(wp.utils.array_sum(a, axis=0).numpy(), values.sum(0, keepdims=True), rtol=1e-6)
    by_row = wp.utils.array_sum(a, axis=-1)
    assert by_row.shape == (3, 1)
    np.testing.assert_allclose(by_row.numpy(), values.sum(1, keepdims=True), rtol=1e-6)
    v = wp.array(np.arange(6, dtype=np.float64).reshape(2, 3), dtype=wp.vec3d)
    np.testing.assert_array_equal(wp.utils.array_sum(v), [3, 5, 7])
    with pytest.raises(TypeError, match="int32 are not supported"):
        wp.utils.array_sum(wp.zeros(3, dtype=wp.int32))
    with pytest.raises(ValueError, match=r"shape \(1, 4\)"):
        wp.utils.array_sum(a, axis=0, out=wp.zeros(4))
    with pytest.raises(IndexError, match="axis 2 is out of range"):
        wp.utils.array_sum(a, axis=2)
    with pytest.raises(ValueError, match="value_count=13"):
        wp.utils.array_sum(a, value_count=13)


def test_array_inner():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3, 4))
    a, b = wp.array(x, dtype=wp.float64), wp.array(y, dtype=wp.float64)
    np.testing.assert_allclose(wp.utils.array_inner(a, b), (x * y).sum(), rtol=1e-12)
    np.testing.assert_allclose(wp.utils.array_inner(a, b, count=7), (x.ravel() * y.ravel())[:7].sum(), rtol=1e-12)
    np.testing.assert_allclose(wp.utils.array_inner(a, b, axis=1).numpy(), (x * y).sum(1, keepdims=True),
                               rtol=1e-12)
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    assert wp.utils.array_inner(v, v) == 55.0
    with pytest.raises(ValueError, match="same shape and dtype"):
        wp.utils.array_inner(a, wp.zeros(12, dtype=wp.float64))


def test_array_scan():
    x = wp.array([1, 2, 3, 4], dtype=wp.int32)
    out = wp.zeros(4, dtype=wp.int32)
    wp.utils.array_scan(x, out)
    np.testing.assert_array_equal(out.numpy(), [1, 3, 6, 10])
    wp.utils.array_scan(x, out, inclusive=False)
    np.testing.assert_array_equal(out.numpy(), [0, 1, 3, 6])
    values = np.random.default_rng(3).standard_normal(50)
    f = wp.zeros(50, dtype=wp.float64)
    wp.utils.array_scan(wp.array(values, dtype=wp.float64), f)
    np.testing.assert_allclose(f.numpy(), np.cumsum(values), rtol=1e-12)
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    vout = wp.zeros(2, dtype=wp.vec3)
    wp.utils.array_scan(v, vout, inclusive=False)
    np.testing.assert_array_equal(vout.numpy(), [[0, 0, 0], [0, 1, 2]])
    grid = wp.zeros((2, 2), dtype=wp.int32)
    wp.utils.array_scan(wp.array(np.ones((2, 2), np.int32)), grid)
    np.testing.assert_array_equal(grid.numpy(), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="same number of elements"):
        wp.utils.array_scan(x, wp.zeros(3, dtype=wp.int32))
    with pytest.raises(ValueError, match="same dtype"):
        wp.utils.array_scan(x, wp.zeros(4))


def test_radix_sort_pairs_is_a_stable_sort_of_the_first_count_pairs():
    rng = np.random.default_rng(4)
    n = 100
    keys_np = rng.integers(-5, 5, 2 * n).astype(np.int32)
    values_np = np.arange(2 * n, dtype=np.int32)
    keys, values = wp.array(keys_np), wp.array(values_np)
    wp.utils.radix_sort_pairs(keys, values, n)
    order = np.argsort(keys_np[:n], kind="stable")
    np.testing.assert_array_equal(keys.numpy()[:n], keys_np[:n][order])
    np.testing.assert_array_equal(values.numpy()[:n], values_np[:n][order])
    np.testing.assert_array_equal(keys.numpy()[n:], keys_np[n:])  # the scratch half is left alone

    fkeys = wp.array(f32([0.5, -1.5, 2.0, -0.0, 0.0, -3.0] + [0] * 6))
    fvalues = wp.array(np.arange(12, dtype=np.float64), dtype=wp.float64)
    wp.utils.radix_sort_pairs(fkeys, fvalues, 6)
    np.testing.assert_array_equal(fkeys.numpy()[:6], [-3, -1.5, -0.0, 0, 0.5, 2])
    assert np.signbit(fkeys.numpy()[2]) and not np.signbit(fkeys.numpy()[3])
    np.testing.assert_array_equal(fvalues.numpy()[:6], [5, 1, 3, 4, 0, 2])


def test_radix_sort_pairs_bit_range():
    keys = wp.array([7, 5, 6, 4, 0, 0, 0, 0], dtype=wp.int32)
    values = wp.array(np.arange(8, dtype=np.int32))
    wp.utils.radix_sort_pairs(keys, values, 4, begin_bit=1)  # by key >> 1: 3, 2, 3, 2
    np.testing.assert_array_equal(values.numpy()[:4], [1, 3, 0, 2])
    keys = wp.array([-7, 5, -6, 4, 0, 0, 0, 0], dtype=wp.int32)
    values = wp.array(np.arange(8, dtype=np.int32))
    wp.utils.radix_sort_pairs(keys, values, 4, end_bit=3)  # by the low 3 bits: 1, 5, 2, 4
    np.testing.assert_array_equal(keys.numpy()[:4], [-7, -6, 4, 5])
    np.testing.assert_array_equal(values.numpy()[:4], [0, 2, 3, 1])


def test_radix_sort_pairs_bad_arguments():
    with pytest.raises(ValueError, match="2\\*count = 6"):
        wp.utils.radix_sort_pairs(wp.zeros(3, dtype=wp.int32), wp.zeros(3, dtype=wp.int32), 3)
    with pytest.raises(TypeError, match="values of vec3"):
        wp.utils.radix_sort_pairs(wp.zeros(8, dtype=wp.int32), wp.zeros(8, dtype=wp.vec3), 4)
    with pytest.raises(TypeError, match="keys of vec3"):
        wp.utils.radix_sort_pairs(wp.zeros(8, dtype=wp.vec3), wp.zeros(8, dtype=wp.int32), 4)
    with pytest.raises(ValueError, match="end_bit must be an int from 0 to 32"):
        wp.utils.radix_sort_pairs(wp.zeros(8, dtype=wp.int32), wp.zeros(8, dtype=wp.int32), 4, end_bit=40)


def test_utils_writes_are_seen_by_the_tape():
    x = wp.array(f32([1, 2, 3]), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x, y])
    wp.utils.array_scan(wp.array(f32([1, 1, 1])), x)  # overwrites x outside the tape
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: f32([1, 1, 1])})


def test_utils_are_not_differentiable_on_a_tape():
    x = wp.array(f32([1, 2, 3]), requires_grad=True)
    total = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.utils.array_sum(x, out=total)
    np.testing.assert_array_equal(total.numpy(), [6])
    with pytest.raises(wp.GradientError, match="array_sum is not differentiable"):
        tape.backward(grads={total: f32([1])})
    # No gradient arriving: nothing is dropped, the backward pass goes through.
    tape.backward(grads={total: f32([0])})
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])


# --- wp.optim ---------------------------------------------------------------------

def _sgd_reference(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, buf = p.astype(np.float64), None
    for g in grads:
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def _adam_reference(p, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    p = p.astype(np.float64)
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return p


@pytest.mark.parametrize("options", [{}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.5},
                                     {"momentum": 0.9, "weight_decay": 0.01, "nesterov": True},
                                     {"momentum": 0.5, "dampening": 0.3, "weight_decay": 0.1}])
def test_sgd_matches_its_formulas(options):
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal(6).astype(np.float32)
    grads = [rng.standard_normal(6).astype(np.float32) for _ in range(4)]
    p = wp.array(p0)
    opt = wp.optim.SGD([p], lr=0.1, **options)
    for g in grads:
        opt.step([wp.array(g)])
    np.testing.assert_allclose(p.numpy(), _sgd_reference(p0, grads, 0.1, **options), rtol=1e-5, atol=1e-6)
    assert opt.t == 4


def test_adam_matches_its_formulas():
    rng = np.random.default_rng(6)
    p0 = rng.standard_normal((3, 2))
    grads = [rng.standard_normal((3, 2)) for _ in range(5)]
    p = wp.array(p0, dtype=wp.float64)
    opt = wp.optim.Adam([p], lr=0.05, betas=(0.5, 0.6), eps=0.1)
    for g in grads:
        opt.step([wp.array(g, dtype=wp.float64)])
    np.testing.assert_allclose(p.numpy(), _adam_reference(p0, grads, 0.05, 0.5, 0.6, 0.1), rtol=1e-12)
    # First step by hand: m_hat = g, v_hat = g^2, so p -= lr * g / (|g| + eps).
    q = wp.array(f32([1.0, 1.0]))
    wp.optim.Adam([q], lr=0.1).step([wp.array(f32([2.0, -0.5]))])
    np.testing.assert_allclose(q.numpy(), [1 - 0.1 * 2 / (2 + 1e-8), 1 + 0.1 * 0.5 / (0.5 + 1e-8)], rtol=1e-6)


def test_adam_vectors_componentwise_and_reset():
    v = wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3)
    g = wp.array(np.full((2, 3), 4.0, np.float32), dtype=wp.vec3)
    opt = wp.optim.Adam([v], lr=0.1)
    opt.step([g])
    np.testing.assert_allclose(v.numpy(), np.full((2, 3), 0.9), rtol=1e-6)
    opt.step([g])
    np.testing.assert_allclose(v.numpy(), np.full((2, 3), 0.8), rtol=1e-6)
    opt.reset_internal_state()
    assert opt.t == 0 and not np.any(opt.m[0]) and not np.any(opt.v[0])
    other = wp.zeros(2)
    opt.set_params([other])
    opt.step([wp.array(f32([1, -1]))])
    np.testing.assert_allclose(other.numpy(), [-0.1, 0.1], rtol=1e-6)


def test_optimizer_bad_arguments():
    p = wp.zeros(3)
    with pytest.raises(ValueError, match="nesterov momentum needs momentum > 0"):
        wp.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="2 gradient arrays for 1 parameters"):
        wp.optim.SGD([p]).step([p, p])
    with pytest.raises(ValueError, match="does not match its parameter"):
        wp.optim.Adam([p]).step([wp.zeros(4)])
    with pytest.raises(TypeError, match="parameters of int32 are not supported"):
        wp.optim.Adam([wp.zeros(3, dtype=wp.int32)])
    with pytest.raises(TypeError, match="betas must be a pair"):
        wp.optim.Adam([p], betas=0.9)
    empty = wp.optim.SGD()
    assert empty.params == []


def test_optimizer_steps_are_writes_the_tape_sees():
    x = wp.array(f32([1, 2, 3]), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x, y])
    wp.optim.SGD([x], lr=0.5).step([wp.array(f32([1, 1, 1]))])
    np.testing.assert_array_equal(x.numpy(), [0.5, 1.5, 2.5])
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: f32([1, 1, 1])})
