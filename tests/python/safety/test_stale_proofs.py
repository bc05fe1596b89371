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



# --- more routes to the memory (issue 25, item 9) ----------------------------------------------------

class _Interface:
    """An object that only re-exports an array's ``__array_interface__``, as
    libraries wrapping foreign memory do (numpy views it without a copy)."""

    def __init__(self, source):
        self.__array_interface__ = source.__array_interface__


def _poke(view, k, value=FAR):
    return lambda: view.__setitem__(k, value)


def _through_ctypes(idx):
    import ctypes
    address = idx.ptr  # the address is all the caller keeps
    return lambda: setattr(ctypes.c_int32.from_address(address + 3 * 4), "value", FAR)


def _through_ctypeslib(idx):
    import ctypes
    return _poke(np.ctypeslib.as_array(ctypes.cast(idx.ptr, ctypes.POINTER(ctypes.c_int32)), shape=(N,)), 3)


RAW_ROUTES = {
    # each returns the poke that makes idx[3] far out of range from outside adjit
    "ptr and ctypes": _through_ctypes,
    "ptr and np.ctypeslib": _through_ctypeslib,
    "__array_interface__ re-exported": lambda idx: _poke(np.asarray(_Interface(idx)), 3),
    "numpy() viewed as int16": lambda idx: _poke(idx.numpy().view(np.int16), 7, 0x7f),  # idx[3]'s high half
    "as_strided of numpy()": lambda idx: _poke(np.lib.stride_tricks.as_strided(idx.numpy(), (N,), (4,)), 3),
}


@pytest.mark.parametrize("kernel", [gather, scatter], ids=["gather", "scatter"])
@pytest.mark.parametrize("route", sorted(RAW_ROUTES))
def test_writes_through_raw_memory_routes_are_seen(route, kernel):
    idx = _indices()
    _launch_twice(kernel, idx, RAW_ROUTES[route](idx))


@pytest.mark.parametrize("kernel, array, access", [(gather, "'x'", "read"), (scatter, "'out'", "write")],
                         ids=["gather", "scatter"])
@pytest.mark.parametrize("value", [-1, N, 2**31 - 1, -2**31], ids=["-1", "N", "int32 max", "int32 min"])
def test_each_end_of_the_range_is_measured_again(kernel, array, access, value):
    """Below the start (the proof's min side) or just past the end (its max
    side): the error names the index written through the view, exactly."""
    idx = _indices()
    view = idx.numpy()[1:]
    x, out = wp.array(np.ones(N, np.float32)), wp.zeros(N, dtype=float)
    wp.launch(kernel, dim=N, inputs=[idx, x, out])
    view[3] = value  # idx[4]
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(kernel, dim=N, inputs=[idx, x, out])
    e = info.value
    assert (e.index, e.thread, e.array, e.access, e.kernel) == ((value,), (4,), array, access, kernel.__name__)
    assert e.filename == __file__ and e.lineno == kernel.source.first_line + 3  # the access's line


@wp.kernel
def gather64(idx: wp.array(dtype=wp.int64), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]]


def test_int64_indices_beyond_int32_are_not_truncated():
    """2**32 + 3 truncated to 32 bits would be 3, in range: a silent wrong read."""
    idx = wp.array(np.arange(N, dtype=np.int64))
    view = idx.numpy()[1:]
    x, out = wp.array(np.arange(N, dtype=np.float32)), wp.zeros(N, dtype=float)
    wp.launch(gather64, dim=N, inputs=[idx, x, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(N))
    view[2] = 2**32 + 3  # idx[3]
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather64, dim=N, inputs=[idx, x, out])
    assert info.value.index == (2**32 + 3,) and info.value.thread == (3,)


@wp.kernel
def scatter_add(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], x[i])


def test_atomic_scatter_through_a_negative_index_is_skipped():
    idx = _indices()
    view = idx.numpy()[5:]
    x, out = wp.array(np.ones(N, np.float32)), wp.zeros(N, dtype=float)
    wp.launch(scatter_add, dim=N, inputs=[idx, x, out])
    view[0] = -FAR  # idx[5]
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(scatter_add, dim=N, inputs=[idx, x, out])
    assert (info.value.index, info.value.access, info.value.array) == ((-FAR,), "atomic_add", "'out'")
    expected = np.full(N, 2.0)
    expected[5] = 1.0  # the second launch's add for thread 5 was skipped, every other one ran
    np.testing.assert_array_equal(out.numpy(), expected)


def test_a_float_arrays_bits_viewed_as_indices():
    """Indices are an int32 view (adjit's view(dtype)) of a float array whose
    numpy view writes a float: its bits are a huge index."""
    values = wp.array(np.zeros(N, np.float32))
    floats = values.numpy()
    idx = values.view(wp.int32)
    x, out = wp.array(np.ones(N, np.float32)), wp.zeros(N, dtype=float)
    wp.launch(gather, dim=N, inputs=[idx, x, out])
    floats[3] = 1e30
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather, dim=N, inputs=[idx, x, out])
    assert info.value.index == (int(np.float32(1e30).view(np.int32)),) and info.value.thread == (3,)


@pytest.mark.parametrize("view_of, element", [(lambda idx: idx[0:N], 3), (lambda idx: idx.reshape((2, N))[1], N + 3)],
                         ids=["slice", "row of a reshape"])
def test_an_adjit_view_launched_while_its_bases_numpy_view_lives(view_of, element):
    idx = wp.array(np.arange(2 * N, dtype=np.int32) % N)
    memory = idx.numpy()  # taken before the views, and before any launch proved anything
    _launch_twice(gather, view_of(idx), lambda: memory.__setitem__(element, FAR))  # the view's element 3


@wp.kernel
def gather_2d(idx: wp.array(dtype=int, ndim=2), x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i, j = wp.tid()
    out[i, j] = x[idx[i, j]]


def test_a_2d_index_array_written_through_a_flat_view():
    idx = wp.array(np.arange(N, dtype=np.int32).reshape(2, 5))
    flat = idx.numpy().ravel()  # a view (contiguous): numpy derives it from numpy()'s
    x, out = wp.array(np.arange(N, dtype=np.float32)), wp.zeros((2, 5), dtype=float)
    wp.launch(gather_2d, dim=(2, 5), inputs=[idx, x, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(N).reshape(2, 5))
    flat[7] = FAR
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather_2d, dim=(2, 5), inputs=[idx, x, out])
    assert info.value.index == (FAR,) and info.value.thread == (1, 2)


@pytest.mark.parametrize("kernel", [gather, scatter], ids=["gather", "scatter"])
@pytest.mark.parametrize("wrap", ["from_dlpack", "array(ptr=)"])
def test_more_arrays_over_the_callers_memory(kernel, wrap):
    memory = np.arange(N, dtype=np.int32)
    idx = wp.from_dlpack(memory) if wrap == "from_dlpack" else \
        wp.array(ptr=memory.ctypes.data, dtype=wp.int32, shape=(N,))
    assert np.shares_memory(idx.numpy(), memory)
    _launch_twice(kernel, idx, lambda: memory.__setitem__(3, FAR))


@wp.struct
class Table:
    idx: wp.array(dtype=int)
    x: wp.array(dtype=float)


@wp.kernel
def gather_struct(t: Table, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = t.x[t.idx[i]]


@pytest.mark.parametrize("field", ["numpy view of the field", "field over the caller's memory"])
def test_index_fields_of_a_struct_argument(field):
    table = Table()
    memory = np.arange(N, dtype=np.int32)
    table.idx = wp.from_numpy(memory, dtype=wp.int32) if "caller" in field else wp.array(memory)
    table.x = wp.array(np.arange(N, dtype=np.float32))
    out = wp.zeros(N, dtype=float)
    wp.launch(gather_struct, dim=N, inputs=[table, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(N))
    (memory if "caller" in field else table.idx.numpy()[2:])[3 if "caller" in field else 1] = -FAR  # idx[3]
    gc.collect()
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather_struct, dim=N, inputs=[table, out])
    assert (info.value.index, info.value.array, info.value.thread) == ((-FAR,), "'t.x'", (3,))


def test_indices_restored_through_the_view_give_exact_results_again():
    idx = _indices()
    view = idx.numpy()[::-1]  # a reversed view: idx[N - 1 - k]
    x = wp.array(np.linspace(1.0, 2.0, N).astype(np.float32))
    out = wp.zeros(N, dtype=float)
    for step in range(3):
        view[:] = FAR if step == 1 else np.arange(N, dtype=np.int32) * (1 + step // 2) % N
        if step == 1:
            with pytest.raises(wp.OutOfBoundsError):
                wp.launch(gather, dim=N, inputs=[idx, x, out])
            continue
        wp.launch(gather, dim=N, inputs=[idx, x, out])
        np.testing.assert_array_equal(out.numpy(), x.numpy()[idx.numpy()])


def test_the_adjoint_uses_the_indices_the_forward_read_through_ptr():
    """As test_the_adjoint_uses_the_indices_the_forward_read, with the
    indices changed through the raw address (no numpy view to track)."""
    idx = _indices()
    poke = _through_ctypes(idx)
    x = wp.array(np.ones(N, np.float32), requires_grad=True)
    out = wp.zeros(N, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(gather, dim=N, inputs=[idx, x, out])
    poke()  # idx[3] = FAR
    tape.backward(grads={out: np.arange(N, dtype=np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(N))
