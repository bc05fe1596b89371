"""Bounds checks (adjit-access-checks): every array access out of range is
skipped and reported as an OutOfBoundsError naming the kernel, line, array,
index, shape and thread; launches that fit their arrays are unaffected."""
import inspect

import numpy as np
import pytest

import adjit as wp
from adjit import loader
from adjit.launch import launch_adjoint
from adjit.variant import VariantSpec


def _line_of(kernel, text):
    """The source line number of the first line of ``kernel`` containing ``text``."""
    lines, first = inspect.getsourcelines(kernel.pyfunc)
    return first + next(i for i, line in enumerate(lines) if text in line)


@wp.kernel
def gather(x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]] * 2.0


@wp.kernel
def scatter(x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[idx[i]] = x[i]


@wp.kernel
def copy1(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] + 1.0


def test_in_range_launches_give_exact_results():
    x = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.arange(9, -1, -1, dtype=np.int32))
    out = wp.zeros(10)
    wp.launch(gather, dim=10, inputs=[x, idx, out])
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(9, -1, -1))
    # A launch smaller than its arrays is also in range (the proved fast path).
    y = wp.zeros(10)
    wp.launch(copy1, dim=7, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), np.r_[np.arange(7) + 1.0, np.zeros(3)])


def test_a_gathered_read_past_the_end_is_skipped_and_reported():
    x = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 12], dtype=np.int32))
    out = wp.full(10, 7.0)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather, dim=10, inputs=[x, idx, out])
    e = info.value
    assert isinstance(e, IndexError) and isinstance(e, wp.AdjitError)
    assert (e.kernel, e.array, e.access, e.index, e.shape, e.thread) == ("gather", "'x'", "read", (12,), (10,), (9,))
    assert e.filename == __file__ and e.lineno == _line_of(gather, "out[i] = x[idx[i]]")
    message = str(e)
    for words in ("kernel 'gather'", "index 12 is out of range for array 'x' of shape (10,)",
                  "thread 9", f"{__file__}:{e.lineno}", "out[i] = x[idx[i]] * 2.0"):
        assert words in message, message
    # The other threads ran; the skipped read gave zero.
    np.testing.assert_array_equal(out.numpy(), np.r_[2.0 * np.arange(9), 0.0])


def test_a_negative_index_is_out_of_range_not_wrapped():
    x = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.r_[np.arange(9), -1].astype(np.int32))
    out = wp.zeros(10)
    with pytest.raises(IndexError, match=r"index -1 is out of range .*no negative indices"):
        wp.launch(gather, dim=10, inputs=[x, idx, out])


def test_a_write_out_of_range_touches_no_neighbouring_memory():
    buffer = np.zeros(16, dtype=np.float32)
    out = wp.from_numpy(buffer[4:12])  # a view: neighbours on both sides
    x = wp.array(np.arange(1, 9, dtype=np.float32))
    for bad in (8, -1, 100_000, -(2**31)):
        idx = wp.array(np.array([0, 1, 2, bad, 4, 5, 6, 7], dtype=np.int32))
        with pytest.raises(wp.OutOfBoundsError) as info:
            wp.launch(scatter, dim=8, inputs=[x, idx, out])
        assert (info.value.access, info.value.index, info.value.array) == ("write", (bad,), "'out'")
        np.testing.assert_array_equal(buffer[:4], 0.0)
        np.testing.assert_array_equal(buffer[12:], 0.0)
        np.testing.assert_array_equal(buffer[4:12], [1, 2, 3, 0, 5, 6, 7, 8])


def test_a_launch_larger_than_its_arrays_reports_the_first_thread_past_the_end():
    x = wp.array(np.arange(10, dtype=np.float32))
    y = wp.zeros(10)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(copy1, dim=12, inputs=[x, y])
    # <= 1024 threads run in order on one thread: thread 10 fails first.
    assert (info.value.index, info.value.thread, info.value.array) == ((10,), (10,), "'x'")
    np.testing.assert_array_equal(y.numpy(), np.arange(10) + 1.0)


@wp.kernel
def guarded(x: wp.array(dtype=float), n: int):
    i = wp.tid()
    if i < n:
        x[i] = 1.0


def test_a_launch_larger_than_its_arrays_with_its_own_guard_runs_clean():
    # The launch-time proof fails (16 threads, 10 elements): the checked
    # version runs, and no access is out of range.
    x = wp.zeros(10)
    wp.launch(guarded, dim=10, inputs=[x, 10])
    assert VariantSpec(checks=loader.checks(guarded), all_checked=True) not in loader._loaded(guarded).variants
    wp.launch(guarded, dim=16, inputs=[x, 10])
    np.testing.assert_array_equal(x.numpy(), np.ones(10))
    # The proved variant ran nothing and asked for the all-checked one.
    assert VariantSpec(checks=loader.checks(guarded), all_checked=True) in loader._loaded(guarded).variants


@wp.kernel
def grid(a: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j + 1] = float(i * 10 + j)


def test_two_dimensional_accesses_report_both_coordinates():
    a = wp.zeros((3, 5))
    wp.launch(grid, dim=(3, 4), inputs=[a])
    expected = np.zeros((3, 5))
    expected[:, 1:] = np.arange(3)[:, None] * 10 + np.arange(4)
    np.testing.assert_array_equal(a.numpy(), expected)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(grid, dim=(3, 5), inputs=[a])
    assert (info.value.index, info.value.shape, info.value.thread) == ((0, 5), (3, 5), (0, 4))
    assert "index (0, 5) is out of range for array 'a' of shape (3, 5)" in str(info.value)
    assert "thread (0, 4)" in str(info.value)


@wp.kernel
def set_y(v: wp.array(dtype=wp.vec3), idx: wp.array(dtype=int)):
    i = wp.tid()
    v[idx[i]].y = 5.0


@wp.kernel
def add_to(total: wp.array(dtype=float), idx: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(total, idx[i], 1.0)


def test_component_writes_and_atomics_are_checked():
    v = wp.zeros(4, dtype=wp.vec3)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(set_y, dim=2, inputs=[v, wp.array(np.array([1, 4], dtype=np.int32))])
    assert (info.value.access, info.value.index) == ("write", (4,))
    np.testing.assert_array_equal(v.numpy()[:, 1], [0, 5, 0, 0])

    total = wp.zeros(3)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(add_to, dim=4, inputs=[total, wp.array(np.array([0, 2, 3, 2], dtype=np.int32))])
    assert (info.value.access, info.value.index, info.value.thread) == ("atomic_add", (3,), (2,))
    np.testing.assert_array_equal(total.numpy(), [1, 0, 2])


def test_many_threads_report_the_failure_and_finish_the_rest():
    n = 200_000
    x = wp.array(np.arange(n, dtype=np.float32))
    perm = np.arange(n, dtype=np.int32)
    perm[123_457] = n + 5
    out = wp.zeros(n)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather, dim=n, inputs=[x, wp.array(perm), out])
    assert (info.value.index, info.value.thread) == ((n + 5,), (123_457,))
    expected = 2.0 * np.arange(n, dtype=np.float32)
    expected[123_457] = 0.0
    np.testing.assert_array_equal(out.numpy(), expected)


@wp.func
def second(a: wp.array(dtype=float), i: int):
    return a[i + 1]


@wp.kernel
def via_func(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = second(a, i)


def test_accesses_in_device_functions_name_the_kernel_argument_and_the_function_line():
    a = wp.array(np.arange(5, dtype=np.float32))
    out = wp.zeros(5)
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(via_func, dim=5, inputs=[a, out])
    assert (info.value.array, info.value.index, info.value.thread) == ("'a'", (5,), (4,))
    assert info.value.lineno == _line_of(second, "return a[i + 1]")
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 4, 0])


def test_adjoint_kernels_are_checked_too():
    x = wp.array(np.arange(10, dtype=np.float32), requires_grad=True)
    idx = wp.array(np.r_[np.arange(9), 10].astype(np.int32))
    out = wp.zeros(10, requires_grad=True)
    out.grad = wp.ones(10)
    with pytest.raises(wp.OutOfBoundsError) as info:
        launch_adjoint(gather, 10, [x, idx, out])
    assert info.value.index == (10,) and info.value.thread == (9,)
    assert "'x'" in info.value.array
    np.testing.assert_array_equal(x.grad.numpy(), np.r_[2.0 * np.ones(9), 0.0])


@wp.kernel(bounds_check=False)
def unchecked_copy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i]


@wp.kernel
def strided(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i * 2]  # not a thread coordinate plus a constant: checked per access


def test_bounds_checks_can_be_turned_off_per_kernel_and_globally():
    from adjit.compiler import driver
    assert "launch_condition" in driver.compile(copy1)
    assert "launch_condition" not in driver.compile(copy1, bounds_check=False)
    assert "cmpxchg" in driver.compile(strided) and "cmpxchg" not in driver.compile(strided, bounds_check=False)
    assert not loader.checks(unchecked_copy)[0]
    x = wp.array(np.arange(4, dtype=np.float32))
    y = wp.zeros(4)
    wp.launch(unchecked_copy, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), np.arange(4))
    try:
        wp.config.bounds_check = False
        assert not loader.checks(copy1)[0]
        wp.launch(copy1, dim=4, inputs=[x, y])
        assert not loader.cpu_variant(copy1).sites
    finally:
        wp.config.bounds_check = True
    assert loader.cpu_variant(copy1).sites
    with pytest.raises(TypeError, match="bounds_check"):
        wp.config.bounds_check = "yes"
    with pytest.raises(TypeError, match="bounds_check"):
        wp.kernel(bounds_check=1)


def test_the_error_comes_back_from_a_cached_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path))

    @wp.kernel
    def shifted(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i + 2]

    x, y = wp.zeros(4), wp.zeros(4)
    with pytest.raises(wp.OutOfBoundsError) as first:
        wp.launch(shifted, dim=4, inputs=[x, y])
    loader._LOADED.clear()  # forget the loaded code: the next launch reads the cache
    with pytest.raises(wp.OutOfBoundsError) as again:
        wp.launch(shifted, dim=4, inputs=[x, y])
    assert loader.cpu_variant(shifted).from_cache
    assert str(again.value) == str(first.value)
    assert (again.value.index, again.value.thread) == ((4,), (2,))


# --------------------------------------------------------------------------- verify_fp

@wp.kernel
def logs(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.vec3(1.0, wp.log(x[i]), 2.0)


@wp.kernel
def roots(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sqrt(x[i])


@pytest.fixture
def verify_fp():
    wp.config.verify_fp = True
    try:
        yield
    finally:
        wp.config.verify_fp = False


def test_verify_fp_reports_the_first_nan_or_infinity_stored(verify_fp):
    x = wp.array(np.array([1.0, 2.0, 0.0, -1.0], np.float32))
    y = wp.zeros(4, dtype=wp.vec3)
    with pytest.raises(wp.NonFiniteError) as info:
        wp.launch(logs, dim=4, inputs=[x, y])
    e = info.value
    assert isinstance(e, FloatingPointError)
    assert (e.array, e.index, e.thread, e.access) == ("'y'", (2,), (2,), "write of NaN or infinity")
    assert e.lineno == _line_of(logs, "y[i] = wp.vec3")
    assert "y[i] = wp.vec3(1.0, wp.log(x[i]), 2.0)" in str(e)
    # Reported, not prevented: the values were stored.
    assert np.isneginf(y.numpy()[2, 1]) and np.isnan(y.numpy()[3, 1])
    # Finite results raise nothing.
    wp.launch(logs, dim=2, inputs=[x, y])


def test_verify_fp_checks_adjoint_kernels(verify_fp):
    x = wp.array(np.array([4.0, 0.0, 1.0], np.float32), requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(roots, dim=3, inputs=[x, y])  # sqrt(0) = 0 is finite
    with pytest.raises(wp.NonFiniteError) as info:
        tape.backward(grads={y: wp.ones(3)})  # d sqrt / dx at 0 is infinite
    assert info.value.index == (1,) and "'x'" in info.value.array
    assert info.value.kernel == "roots"


def test_debug_mode_turns_on_verify_fp():
    x = wp.array(np.array([0.0], np.float32))
    y = wp.zeros(1, dtype=wp.vec3)
    wp.launch(logs, dim=1, inputs=[x, y])  # release: -inf stored, nothing said
    try:
        wp.config.mode = "debug"
        with pytest.raises(wp.NonFiniteError):
            wp.launch(logs, dim=1, inputs=[x, y])
    finally:
        wp.config.mode = "release"


@wp.kernel
def accumulate(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])


def test_verify_fp_reports_an_atomic_sum_that_overflows(verify_fp):
    x = wp.array(np.full(4, 3e38, np.float32))
    total = wp.zeros(1)
    with pytest.raises(wp.NonFiniteError) as info:
        wp.launch(accumulate, dim=4, inputs=[x, total])
    assert info.value.access == "atomic_add result NaN or infinity" and info.value.thread == (1,)


# --- gathers proved once per launch ------------------------------------------------------------

@wp.kernel
def set_index(idx: wp.array(dtype=int), k: int, value: int):
    idx[k] = value


def test_gathers_through_an_index_array_are_proved_per_launch_from_its_value_range():
    x = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.arange(9, -1, -1, dtype=np.int32))
    out = wp.zeros(10)
    wp.launch(gather, dim=10, inputs=[x, idx, out])
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(9, -1, -1))
    variant = loader.cpu_variant(gather)
    assert variant.ranged == (1,)  # idx's (min, max) proves x[idx[i]]
    all_checked = [spec for spec in loader._loaded(gather).variants if spec.all_checked]
    assert not all_checked  # the proved variant ran it
    # A write through a numpy view: the cached range is dropped, the next
    # launch measures again, fails the proof and reports the index.
    idx.numpy()[3] = 10
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather, dim=10, inputs=[x, idx, out])
    assert (info.value.index, info.value.thread) == ((10,), (3,))
    # An adjit write bumps the version: measured again.
    wp.launch(set_index, dim=1, inputs=[idx, 3, 6])
    wp.launch(gather, dim=10, inputs=[x, idx, out])
    wp.launch(set_index, dim=1, inputs=[idx, 5, -2])
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(gather, dim=10, inputs=[x, idx, out])
    assert (info.value.index, info.value.thread) == ((-2,), (5,))
    # Memory shared with numpy is measured on every launch.
    memory = np.arange(10, dtype=np.int32)
    shared = wp.from_numpy(memory)
    wp.launch(gather, dim=10, inputs=[x, shared, out])
    memory[0] = 99
    with pytest.raises(wp.OutOfBoundsError):
        wp.launch(gather, dim=10, inputs=[x, shared, out])
