"""``adjit.array`` with Warp's signature: ``ptr=`` (memory at an address,
with byte ``strides``, ``capacity`` and a ``deleter``), ``copy=False``
(sharing the data where its layout allows, else a copy), ``grad=``, and the
errors for what does not fit."""
import gc

import numpy as np
import pytest

import adjit as wp


@wp.kernel
def double(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0


@wp.kernel
def square_sum(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i])


def test_ptr_arrays_alias_the_memory_with_vectors_and_strides():
    buf = np.arange(12, dtype=np.float32)
    vecs = wp.array(ptr=buf.ctypes.data, shape=(4,), dtype=wp.vec3)
    np.testing.assert_array_equal(vecs.numpy(), buf.reshape(4, 3))
    every_other = wp.array(ptr=buf.ctypes.data, shape=(6,), dtype=float, strides=(8,))
    np.testing.assert_array_equal(every_other.numpy(), buf[::2])
    wp.launch(double, 6, inputs=[every_other])  # a kernel writes through the strided view
    np.testing.assert_array_equal(buf, [0, 1, 4, 3, 8, 5, 12, 7, 16, 9, 20, 11])
    np.testing.assert_array_equal(vecs.numpy()[1], [3, 8, 5])


def test_ptr_array_gradients_on_a_tape():
    buf = np.array([1.0, -2.0, 3.0], np.float32)
    x = wp.array(ptr=buf.ctypes.data, shape=(3,), dtype=float, requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, 3, inputs=[x], outputs=[out])
    buf[:] = 0.0  # memory adjit does not own changes after the launch: the tape kept a snapshot
    tape.backward(out)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])


def test_the_deleter_runs_when_the_array_is_freed():
    buf = np.zeros(4, np.float64)
    freed = []
    a = wp.array(ptr=buf.ctypes.data, shape=(4,), dtype=wp.float64, deleter=lambda p, n: freed.append((p, n)))
    del a
    gc.collect()
    assert freed == [(buf.ctypes.data, 32)]


def test_copy_false_shares_where_it_can_and_copies_otherwise():
    buf = np.arange(4, dtype=np.float32)
    shared = wp.array(buf, copy=False)
    shared.numpy()[0] = 7.0
    assert buf[0] == 7.0
    converted = wp.array(buf.astype(np.float64), dtype=float, copy=False)  # needs a conversion: a copy
    converted.numpy()[1] = 9.0
    assert buf[1] == 1.0 and converted.dtype == wp.float32
    copied = wp.array(buf)  # the default copies
    copied.numpy()[2] = 9.0
    assert buf[2] == 2.0


def test_grad_is_the_given_array():
    g = wp.zeros(3)
    x = wp.array(np.array([1.0, 2.0, 3.0], np.float32), grad=g)
    assert x.grad is g and x.requires_grad
    out = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, 3, inputs=[x], outputs=[out])
    tape.backward(out)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("kwargs, words", [
    (dict(ptr=0, shape=(3,), dtype=float), "ptr must be a positive int address"),
    (dict(ptr=4096, dtype=float), "ptr= needs shape= and dtype="),
    (dict(ptr=4096, shape=(3,), dtype=float, capacity=8), "reaches 12 bytes, past capacity=8"),
    (dict(ptr=4096, shape=(3, 2), dtype=float, strides=(8,)), "strides must be 2 non-negative byte counts"),
    (dict(data=[1.0, 2.0], strides=(4,)), "describe memory given by ptr="),
    (dict(data=[1.0, 2.0], grad=wp.zeros(3)), "grad= must be an array of the same shape and dtype"),
    (dict(data=[1.0, 2.0], ndim=2), "ndim=2 but the data makes a 1-d array"),
])
def test_bad_arguments_are_errors(kwargs, words):
    with pytest.raises(ValueError) as info:
        wp.array(**kwargs)
    assert words in str(info.value)


@pytest.mark.parametrize("shape, dtype, expected", [
    ((4,), wp.vec4, (1,)),        # exactly one element's components: one element
    ((7,), wp.transform, (1,)),
    ((2, 2), wp.mat22, (1,)),
    ((8,), wp.vec4, (2,)),        # flat data: consecutive elements
    ((2, 4), wp.mat22, (2,)),     # a last extent holding one matrix, row-major
    ((3, 2, 2), wp.mat22, (3,)),
    ((5, 3), wp.vec3, (5,)),
])
def test_component_data_is_read_as_warp_reads_it(shape, dtype, expected):
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    a = wp.array(data, dtype=dtype)
    assert a.shape == expected
    np.testing.assert_array_equal(a.numpy().reshape(-1), data.reshape(-1))


def test_component_data_that_does_not_divide_is_refused():
    with pytest.raises(ValueError, match="component shape"):
        wp.array(np.zeros(5, np.float32), dtype=wp.vec2)
