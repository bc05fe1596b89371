"""A launch proves gathers and scatters through an index array from the
array's (min, max), kept between launches while only adjit can write it.
Every route that hands its memory out must end that: numpy views and
anything numpy derives from them (slices, reshapes, transposes), arrays over
the caller's memory, struct fields. Whatever the user does with numpy, an
out-of-range index is an OutOfBoundsError, never a silent read, a write past
the end, or a crash; and a tape never differentiates values changed behind
its back."""
import gc

import numpy as np
import pytest

import adjit as wp


@wp.kernel
def gather(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]]


@wp.kernel
def scatter(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[idx[i]] = x[i]


N = 10
FAR = 10 ** 7  # far past the end: a write there would crash the process


def _launch_twice(kernel, idx, poke):
    """Launches once (proving idx's range), pokes idx's memory from outside
    adjit, launches again: the second launch must see the new index."""
    x, out = wp.array(np.ones(N, np.float32)), wp.zeros(N, dtype=float)
    wp.launch(kernel, dim=N, inputs=[idx, x, out])
    poke()
    gc.collect()
    with pytest.raises(wp.OutOfBoundsError, match="out of range"):
        wp.launch(kernel, dim=N, inputs=[idx, x, out])


def _indices():
    return wp.array(np.arange(N, dtype=np.int32))


ROUTES = {
    # views numpy derives from numpy(); the view numpy() returned is gone
    "slice of numpy()": lambda idx: idx.numpy()[2:],
    "reshape of numpy()": lambda idx: idx.numpy().reshape(2, 5).ravel(),
    "transpose of numpy()": lambda idx: idx.numpy().reshape(2, 5).T.T.reshape(-1),
    "np.asarray": lambda idx: np.asarray(idx),
    "memoryview of numpy()": lambda idx: np.frombuffer(memoryview(idx.numpy()), dtype=np.int32),
    "__dlpack__": lambda idx: np.from_dlpack(idx),
    "a slice's numpy()": lambda idx: idx[1:].numpy(),
}


@pytest.mark.parametrize("kernel", [gather, scatter], ids=["gather", "scatter"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_writes_through_derived_views_are_seen(route, kernel):
    idx = _indices()
    view = ROUTES[route](idx)
    _launch_twice(kernel, idx, lambda: view.__setitem__(3, FAR))


@pytest.mark.parametrize("kernel", [gather, scatter], ids=["gather", "scatter"])
def test_arrays_over_the_callers_memory(kernel):
    for make in (lambda n: wp.array(n, dtype=int, copy=False), lambda n: wp.from_numpy(n, dtype=wp.int32),
                 lambda n: wp.Array(n, wp.int32)):
        memory = np.arange(N, dtype=np.int32)
        _launch_twice(kernel, make(memory), lambda: memory.__setitem__(3, FAR))


def test_struct_field_views():
    @wp.struct
    class Lookup:
        idx: wp.array(dtype=int)

    s = Lookup()
    s.idx = _indices()
    view = s.idx.numpy()[1:]
    _launch_twice(gather, s.idx, lambda: view.__setitem__(3, FAR))


def test_the_adjoint_uses_the_indices_the_forward_read():
    """gather's adjoint scatters into x.grad at idx. Indices changed through
    a derived view after the launch was recorded are not the ones the
    forward read: the tape's snapshot is used (no write past x.grad's end)."""
    idx = _indices()
    view = idx.numpy()[::2]
    x = wp.array(np.ones(N, np.float32), requires_grad=True)
    out = wp.zeros(N, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(gather, dim=N, inputs=[idx, x, out])
    view[1] = FAR  # idx[2]
    tape.backward(grads={out: np.arange(N, dtype=np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(N))  # x[k] was read by thread k only


def test_range_is_still_kept_for_memory_only_adjit_writes():
    idx = _indices()
    x, out = wp.array(np.ones(N, np.float32)), wp.zeros(N, dtype=float)
    wp.launch(gather, dim=N, inputs=[idx, x, out])
    assert idx._range_cache is not None  # proved once, reused while nothing else can write idx
    view = idx.numpy()[1:]
    assert idx._range_cache is None and idx._writable_elsewhere
    del view
    gc.collect()
    assert not idx._writable_elsewhere  # every derived view is gone: adjit owns the memory again


@wp.kernel
def square(a: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a[i] * a[i]


def test_tape_snapshots_arrays_a_derived_view_can_write():
    a = wp.array(np.full(4, 2.0, np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    view = a.numpy()[:]  # the view numpy() returned is gone; this slice can still write a
    with wp.Tape() as tape:
        wp.launch(square, dim=4, inputs=[a, y])
    view[:] = 5.0
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(a.grad.numpy(), 4.0)  # d(a^2)/da at the recorded a = 2
