"""Strided views of host arrays (Warp's ``a[:, 1]``, ``a[1:5:2]``,
``a.transpose()``): shapes, strides and values against the same numpy views,
writes through a view seen by its base and the other way, gradients of
views, host writes (copy, clone, assign, fill_, zero_) through views, the
version bookkeeping tapes rely on, and the indexing that is refused."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def square_2d(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    y[i, j] = x[i, j] * x[i, j]


def f32(values):
    return np.asarray(values, dtype=np.float32)


def ramp(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


E = Ellipsis
KEYS_2D = [
    (slice(None), 1), slice(1, 5, 2), (slice(None, None, 2), slice(1, 3)), (E, 0), (1, E), (E, slice(0, 6, 4)),
    (slice(-3, None), -1), slice(0, 5, 3), (slice(4, 4), slice(None)), (slice(None), slice(None, None, 5)),
    (np.int64(2), slice(1, None, 2)), (E,), (slice(1, 4), E, slice(2, 3)),
]
KEYS_3D = [
    (slice(None), 1), (E, 2), (slice(None), slice(None, None, 2), 0), (1, slice(None), slice(1, None, 3)),
    (slice(None, None, 2), E, slice(3, 4)), (E, 1, slice(None)),
]


def check_view(a, key):
    """a[key] is numpy's view of the same elements: shape, strides, memory, values."""
    base = a.numpy()
    keys = key if isinstance(key, tuple) else (key,)
    if E in keys:  # '...' stands for dimensions of the array, not its components
        n = keys.index(E)
        keys = keys[:n] + (slice(None),) * (a.ndim - len(keys) + 1) + keys[n + 1:]
    view, ref = a[key], base[keys]
    comp = base.ndim - a.ndim
    assert view.shape == ref.shape[:ref.ndim - comp]
    assert view.strides == ref.strides[:ref.ndim - comp]
    assert view.is_contiguous == ref.flags.c_contiguous
    out = view.numpy()
    assert out.shape == ref.shape and out.strides == ref.strides
    assert out.size == 0 or np.shares_memory(out, base)
    np.testing.assert_array_equal(out, ref)
    return view, ref


@pytest.mark.parametrize("key", KEYS_2D, ids=repr)
def test_views_of_a_2d_array_match_numpy(key):
    check_view(wp.array(ramp((5, 6))), key)


@pytest.mark.parametrize("key", KEYS_3D, ids=repr)
def test_views_of_3d_vector_arrays_match_numpy(key):
    check_view(wp.array(ramp((4, 5, 6, 3)), dtype=wp.vec3), key)
    check_view(wp.array(ramp((4, 5, 6), np.int32)), key)


def test_views_of_views_and_of_4d_arrays():
    a = wp.array(ramp((3, 4, 5, 6)))
    n = a.numpy()
    v = a[::2, 1][:, 1:4][..., ::2]
    np.testing.assert_array_equal(v.numpy(), n[::2, 1][:, 1:4][..., ::2])
    assert v.strides == n[::2, 1][:, 1:4][..., ::2].strides
    row = a[:, 1:3][1]  # a row of a strided view
    np.testing.assert_array_equal(row.numpy(), n[1, 1:3])
    assert a[1].is_contiguous and a[1:2].is_contiguous and not a[:, 1].is_contiguous


def test_writes_through_a_view_reach_the_base_and_back():
    a = wp.array(ramp((4, 6)))
    ref = ramp((4, 6))
    col = a[:, 2]
    col.fill_(-1.0)
    ref[:, 2] = -1
    np.testing.assert_array_equal(a.numpy(), ref)
    a[::2, 1:5:3].assign(f32([[10, 11], [12, 13]]))
    ref[::2, 1:5:3] = [[10, 11], [12, 13]]
    np.testing.assert_array_equal(a.numpy(), ref)
    a.numpy()[3, 2] = 99  # a write to the base, seen through the view
    np.testing.assert_array_equal(col.numpy(), [-1, -1, -1, 99])
    col.numpy()[0] = 7  # a write through the view's numpy view
    assert a.numpy()[0, 2] == 7
    a[1::2].zero_()
    ref[0, 2], ref[3, 2] = 7, 99
    ref[1::2] = 0
    np.testing.assert_array_equal(a.numpy(), ref)


# --- transpose ---------------------------------------------------------------------

def test_transpose_matches_numpy():
    a = wp.array(ramp((2, 3, 4)))
    n = a.numpy()
    for axes in (None, (0, 2, 1), (2, 0, 1), [1, 0, 2], (-1, 0, 1)):
        t = a.transpose(axes) if axes is not None else a.transpose()
        ref = n.transpose(axes)
        assert t.shape == ref.shape and t.strides == ref.strides
        assert t.is_contiguous == ref.flags.c_contiguous
        np.testing.assert_array_equal(t.numpy(), ref)
        assert np.shares_memory(t.numpy(), n)
    assert a.transpose((0, 1, 2)).is_contiguous
    v = wp.array(ramp((3, 4, 2)), dtype=wp.vec2)  # the components stay last
    np.testing.assert_array_equal(v.transpose().numpy(), ramp((3, 4, 2)).transpose(1, 0, 2))
    one = wp.zeros(5)
    assert one.transpose() is one  # as in Warp
    m = wp.array(ramp((3, 4)))
    m.transpose()[1].fill_(-1.0)  # column 1 of m
    assert (m.numpy()[:, 1] == -1).all() and (m.numpy()[:, 0] != -1).all()
    assert not hasattr(m, "T")  # Warp has no .T


def test_bad_transposes():
    a = wp.zeros((2, 3))
    with pytest.raises(ValueError, match="not a permutation"):
        a.transpose((0, 0))
    with pytest.raises(ValueError, match="not a permutation"):
        a.transpose((0,))
    with pytest.raises(ValueError, match="not a permutation"):
        a.transpose((0, 2))
    with pytest.raises(TypeError, match="ints"):
        a.transpose((0.0, 1))
    with pytest.raises(TypeError, match="sequence"):
        a.transpose(1)


# --- flatten, reshape, view, contiguous, list -----------------------------------------

def test_flatten_and_reshape_of_strided_views_are_refused_as_in_warp():
    a = wp.array(ramp((4, 6)))
    for v in (a[:, 1:3], a[::2], a.transpose()):
        with pytest.raises(ValueError, match="strided view.*contiguous"):
            v.flatten()
        with pytest.raises(ValueError, match="strided view.*contiguous"):
            v.reshape(-1)
        c = v.contiguous()
        assert c.is_contiguous and c.shape == v.shape
        assert not np.shares_memory(c.numpy(), a.numpy())
        np.testing.assert_array_equal(c.flatten().numpy(), v.numpy().ravel())
    col = a[:, 1]
    np.testing.assert_array_equal(col.flatten().numpy(), [1, 7, 13, 19])  # 1-D: itself, as in Warp
    assert np.shares_memory(col.flatten().numpy(), a.numpy())
    assert a[1:3].contiguous() is not None and a.contiguous() is a


def test_dtype_views_of_strided_arrays():
    v = wp.array(ramp((4, 3)), dtype=wp.vec3)
    ys = v.view(float)[:, 1]  # the y components: a strided scalar view
    assert ys.shape == (4,) and ys.strides == (12,)
    ys.fill_(-1.0)
    np.testing.assert_array_equal(v.numpy()[:, 1], [-1, -1, -1, -1])
    np.testing.assert_array_equal(v[::2].view(float).numpy(), v.numpy()[::2])
    pairs = wp.array(ramp((3, 6)))[:, 2:4].view(wp.vec2)  # contiguous pairs inside strided rows
    assert pairs.shape == (3,) and pairs.strides == (24,)
    np.testing.assert_array_equal(pairs.numpy(), ramp((3, 6))[:, 2:4])
    ints = wp.array(ramp((3, 4), np.int32))[:, ::2].view(wp.uint32)
    assert ints.strides == (16, 8) and ints.list() == [0, 2, 4, 6, 8, 10]
    with pytest.raises(ValueError, match="not the contiguous components"):
        wp.array(ramp((3, 6)))[:, ::2].view(wp.vec3)


def test_list_of_views():
    a = wp.array(ramp((3, 4)))
    assert a.transpose().list() == ramp((3, 4)).T.ravel().tolist()
    assert a[:, 1].list() == [1, 5, 9]
    v = wp.array(ramp((3, 2, 3)), dtype=wp.vec3)
    assert [list(e) for e in v[:, 1].list()] == [[3, 4, 5], [9, 10, 11], [15, 16, 17]]


# --- gradients of views ----------------------------------------------------------------

def test_the_gradient_of_a_view_is_the_same_view_of_the_base_gradient():
    a = wp.array(ramp((5, 6)), requires_grad=True)
    for key in KEYS_2D:
        v = a[key]
        g = v.grad
        assert g is not None and g.shape == v.shape and g.strides == v.strides
        assert g.numpy().size == 0 or np.shares_memory(g.numpy(), a.grad.numpy())
    t = a.transpose()[::2]
    t.grad.fill_(3.0)  # through the view's gradient: seen in the base's
    ref = np.zeros((5, 6), np.float32)
    ref.T[::2] = 3
    np.testing.assert_array_equal(a.grad.numpy(), ref)
    a.grad.numpy()[1, 2] = 5  # and the other way
    assert t.grad.numpy()[1, 1] == 5
    assert a[:, 1].view(wp.int32).grad.strides == (24,)


def test_requires_grad_on_a_strided_view_gives_a_gradient_of_its_strides():
    w = wp.array(ramp((3, 4)))[:, ::2]
    w.requires_grad = True
    assert w.grad.shape == (3, 2) and w.grad.strides == w.strides
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2)))
    w.grad.fill_(1.0)
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((3, 2)))


def test_copy_and_clone_through_views_are_differentiated():
    x = wp.array(ramp((3, 4)), requires_grad=True)
    y = wp.zeros((4, 3), requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y[:, 1], x[1])  # row 1 of x into column 1 of y
        c = wp.clone(x[:, ::2])
    np.testing.assert_array_equal(y.numpy()[:, 1], [4, 5, 6, 7])
    assert c.is_contiguous and c.shape == (3, 2)
    np.testing.assert_array_equal(c.numpy(), ramp((3, 4))[:, ::2])
    y.grad.numpy()[...] = ramp((4, 3)) + 1
    c.grad.fill_(100.0)
    tape.backward()
    ref = np.zeros((3, 4), np.float32)
    ref[1] = (ramp((4, 3)) + 1)[:, 1]
    ref[:, ::2] += 100
    np.testing.assert_array_equal(x.grad.numpy(), ref)
    expected = ramp((4, 3)) + 1
    expected[:, 1] = 0  # the copied values' gradient was consumed
    np.testing.assert_array_equal(y.grad.numpy(), expected)


def test_copy_with_offsets_between_strided_views():
    a = wp.array(ramp((4, 4)))
    dest = wp.zeros((4, 4))
    wp.copy(dest.transpose(), a[:, 1:3], dest_offset=2, src_offset=1, count=5)
    ref = np.zeros((4, 4), np.float32)
    flat = ref.T.copy().ravel()
    flat[2:7] = ramp((4, 4))[:, 1:3].ravel()[1:6]
    ref = flat.reshape(4, 4).T
    np.testing.assert_array_equal(dest.numpy(), ref)
    # within one array, overlapping ranges (numpy's semantics: as if through a temporary)
    b = wp.array(ramp((6,)))
    wp.copy(b[::2], b[1:], count=3)
    np.testing.assert_array_equal(b.numpy(), [1, 1, 2, 3, 3, 5])


def test_assign_to_a_strided_view_is_recorded():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    src = wp.array(f32([7, 8]), requires_grad=True)
    with wp.Tape() as tape:
        x[::2].assign(src)
    np.testing.assert_array_equal(x.numpy(), [7, 2, 8, 4])
    tape.backward(grads={x: f32([1, 10, 100, 1000])})
    np.testing.assert_array_equal(src.grad.numpy(), [1, 100])
    np.testing.assert_array_equal(x.grad.numpy(), [0, 10, 0, 1000])


# --- the version bookkeeping of tapes -----------------------------------------------------

def test_a_write_through_a_strided_view_inside_the_tape_saves_the_base():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    v0 = x._version
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
        x.reshape((2, 2))[:, 1].fill_(0.0)  # elements 1 and 3
    assert x._version > v0
    np.testing.assert_array_equal(x.numpy(), [1, 0, 3, 0])
    tape.backward(grads={y: f32([1, 1, 1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8])  # from the old values


@pytest.mark.parametrize("write", ["fill_", "assign", "copy", "zero_", "transpose"])
def test_a_write_through_a_strided_view_outside_the_tape_is_detected(write):
    x = wp.array(ramp((2, 3)) + 1, requires_grad=True)
    y = wp.zeros((2, 3), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square_2d, dim=(2, 3), inputs=[x, y])
    view = x[:, ::2]
    if write == "fill_":
        view.fill_(1.0)
    elif write == "assign":
        view.assign(np.ones((2, 2)))
    elif write == "copy":
        wp.copy(view, wp.ones((2, 2)))
    elif write == "zero_":
        view.zero_()
    else:
        x.transpose()[1].fill_(1.0)
    with pytest.raises(wp.GradientError, match="overwritten"):
        tape.backward(grads={y: np.ones((2, 3), np.float32)})


def test_numpy_of_a_strided_view_saves_the_base_for_the_tape():
    x = wp.array(f32([1, 2, 3, 4]), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[x, y])
    x[1::2].numpy()[:] = 0  # handing out the numpy view saves x first
    tape.backward(grads={y: f32([1, 1, 1, 1])})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6, 8])


# --- refused indexing ------------------------------------------------------------------

@pytest.mark.parametrize("key, words", [
    ((0, 1), "picks one element"),
    ((slice(None), slice(None), 0), "has 3 indices, but the array has 2"),
    ((None, 0), "newaxis"),
    ([0, 1], "indexedarray"),
    (np.array([0, 1]), "indexedarray"),
    (slice(None, None, -1), "negative slice steps"),
    (slice(0, 3, 1.5), "steps must be integers"),
    ((E, 0, E), "at most one"),
    ((slice(None), 6), "out of range for an extent of 6"),
    ((slice(None), slice(2, 7)), "out of range"),
    (slice(3, 1), "out of range"),
    ((1.0,), "ints, slices"),
    (True, "ints, slices"),
])
def test_bad_indexing_is_an_index_error(key, words):
    with pytest.raises(IndexError, match=words):
        wp.zeros((4, 6))[key]


def test_other_bad_indexing():
    with pytest.raises(ValueError, match="step cannot be zero"):
        wp.zeros((4, 6))[::0]
    with pytest.raises(IndexError, match="1-D array is not supported"):
        wp.zeros(4)[..., 2]
    with pytest.raises(IndexError, match="indexedarray"):
        wp.zeros(4)[wp.array([0, 1], dtype=wp.int32)]
    v = wp.zeros(3, dtype=wp.vec3)  # components are not dimensions
    with pytest.raises(IndexError, match=r"components of its vec3 elements are not dimensions: a.view\(float32\)"):
        v[:, 0]
    with pytest.raises(IndexError, match="components of its mat22"):
        wp.zeros((2, 2), dtype=wp.mat22)[0, :, 1]


def test_struct_arrays_take_strided_views_field_by_field():
    @wp.struct
    class P:
        x: float
        v: wp.vec3

    a = wp.zeros((3, 4), dtype=P)
    a.field("x").assign(ramp((3, 4)))
    col = a[:, 1]
    assert col.shape == (3,)
    np.testing.assert_array_equal(col.field("x").numpy(), [1, 5, 9])
    t = a.transpose()
    assert t.shape == (4, 3)
    np.testing.assert_array_equal(t.field("x").numpy(), ramp((3, 4)).T)
    t[2].field("v").fill_(wp.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(a.field("v").numpy()[:, 2], np.tile([1, 2, 3], (3, 1)))


# --- kernel launches on strided views ------------------------------------------------------

def test_launches_on_strided_views():
    x = wp.array(ramp((3, 4)) + 1, requires_grad=True)
    y = wp.zeros((3, 5), requires_grad=True)
    z = wp.zeros((4, 3))
    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x[:, 1], y[:, 2]])  # a column into a column
        wp.launch(square_2d, dim=(4, 3), inputs=[x.transpose(), z])
    expected = np.zeros((3, 5), np.float32)
    expected[:, 2] = (ramp((3, 4)) + 1)[:, 1] ** 2
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(z.numpy(), (ramp((3, 4)) + 1).T ** 2)
    tape.backward(grads={y: np.ones((3, 5), np.float32)})
    expected = np.zeros((3, 4), np.float32)
    expected[:, 1] = 2 * (ramp((3, 4)) + 1)[:, 1]
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_a_launch_on_a_strided_view_with_its_own_gradient():
    x = wp.array(ramp((4, 3)) + 1)[::2, 1]  # no base gradient: the view gets one of its strides
    x.requires_grad = True
    y = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=2, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), f32([2, 8]) ** 2)
    tape.backward(grads={y: f32([1, 10])})
    np.testing.assert_array_equal(x.grad.numpy(), [4, 160])


def test_a_saved_strided_input_keeps_its_strided_gradient():
    x = wp.array(ramp((3, 4)) + 1, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(square, dim=3, inputs=[x[:, 1], y])
        x.fill_(0.0)  # the launch's input is saved (a contiguous copy); its gradient stays the strided view
    tape.backward(grads={y: np.ones(3, np.float32)})
    expected = np.zeros((3, 4), np.float32)
    expected[:, 1] = [4, 12, 20]
    np.testing.assert_array_equal(x.grad.numpy(), expected)
