"""The launch fast path (adjit/launch.py, _runtime.LaunchPlan): a launch like
the kernel's last one runs in one C++ call, with the results, the array
versions and the errors of the general path; whatever the plan does not fit
goes through the general path, with its checks and messages."""
import numpy as np
import pytest

import adjit as wp
from adjit import config
from adjit.errors import GradientError, LaunchError, OutOfBoundsError


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def mixed(a: wp.array(dtype=wp.vec3), n: int, w: wp.float64, flag: bool, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = wp.float64(wp.length(a[i])) * w
    if flag:
        v = v + wp.float64(n)
    out[i] = v


@wp.kernel
def gather(x: wp.array(dtype=float), offset: int, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[int(x[i]) + offset]


@wp.kernel
def grid(out: wp.array2d(dtype=int)):
    i, j = wp.tid()
    out[i, j] = i * 100 + j


def _plan(k):
    plan = getattr(k, "_launch_plan")
    return None if plan is None else plan.runtime_plan


def _fast_launches(k, *args, **kwargs):
    """Launches twice; the second must have run on the kernel's plan (which
    declines nothing it fits, so the plan is kept)."""
    wp.launch(k, *args, **kwargs)
    plan = _plan(k)
    assert plan is not None
    wp.launch(k, *args, **kwargs)
    assert _plan(k) is plan


def test_results_and_versions_match_the_general_path():
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.zeros(8, dtype=float)
    _fast_launches(scale, 8, inputs=[x, y, 3.0])
    before = (x._version, y._version)
    for s in (0.5, 2, -1.0):  # (an int for a float parameter packs too)
        wp.launch(scale, dim=8, inputs=[x, y, s])
        np.testing.assert_array_equal(y.numpy(), np.arange(8, dtype=np.float32) * np.float32(s))
    # Each launch writes y (and not x): its version moves once per launch.
    assert (x._version, y._version) == (before[0], before[1] + 3)


def test_value_kinds_and_vector_arrays():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    out = wp.zeros(4, dtype=wp.float64)
    _fast_launches(mixed, 4, inputs=[a, 7, 0.5, True], outputs=[out])
    lengths = np.linalg.norm(np.arange(12, dtype=np.float32).reshape(4, 3), axis=1).astype(np.float32)
    for n, w, flag in ((7, 0.5, True), (-3, 2.0, False), (2**31 - 1, 1.0, True)):
        wp.launch(mixed, 4, inputs=(a, n, w, flag), outputs=(out,))
        expected = lengths.astype(np.float64) * w + (n if flag else 0)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_tuple_dims():
    out = wp.zeros((3, 5), dtype=int)
    _fast_launches(grid, (3, 5), inputs=[out])
    out.zero_()
    wp.launch(grid, (3, 5), inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.arange(3)[:, None] * 100 + np.arange(5)[None, :])


def test_failed_check_in_a_planned_launch_names_the_line():
    x = wp.array(np.zeros(8, dtype=np.float32))
    y = wp.zeros(8, dtype=float)
    _fast_launches(gather, 8, inputs=[x, 0, y])
    plan = _plan(gather)
    wp.copy(x, wp.array(np.full(8, 5.0, dtype=np.float32)))
    with pytest.raises(OutOfBoundsError) as e:
        wp.launch(gather, 8, inputs=[x, 4, y])  # reads x[9]
    assert "y[i] = x[int(x[i]) + offset]" in str(e.value) and "'x'" in str(e.value)
    assert _plan(gather) is plan  # (raised by the fast path: the plan was not replaced)


def test_what_the_plan_does_not_fit_goes_through_the_general_path():
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.zeros(8, dtype=float)
    _fast_launches(scale, 8, inputs=[x, y, 1.0])
    # The same array twice: the variant for overlapping arrays.
    wp.launch(scale, 8, inputs=[y, y, 2.0])
    wp.launch(scale, 8, inputs=[x, y, 1.0])
    wp.launch(scale, 8, inputs=[y, y, 2.0])
    np.testing.assert_array_equal(y.numpy(), np.arange(8, dtype=np.float32) * 2)
    # A strided view.
    wide = wp.array(np.arange(16, dtype=np.float32))
    wp.launch(scale, 8, inputs=[wide[::2], y, 1.0])
    np.testing.assert_array_equal(y.numpy(), np.arange(0, 16, 2, dtype=np.float32))
    # Errors come from the general path, with its messages.
    with pytest.raises(LaunchError, match="must be an array of float32"):
        wp.launch(scale, 8, inputs=[wp.zeros(8, dtype=wp.float64), y, 1.0])
    with pytest.raises(LaunchError, match="outside the range of float32"):
        wp.launch(scale, 8, inputs=[x, y, 1e39])
    with pytest.raises(LaunchError, match="takes 3 arguments"):
        wp.launch(scale, 8, inputs=[x, y])
    with pytest.raises(LaunchError, match="must be a list or tuple"):
        wp.launch(scale, 8, inputs=iter([x, y, 1.0]))
    with pytest.raises(LaunchError, match="must be an int or a tuple"):
        wp.launch(scale, True, inputs=[x, y, 1.0])
    wp.launch(scale, 8, inputs=[x, y, 4.0])
    np.testing.assert_array_equal(y.numpy(), np.arange(8, dtype=np.float32) * 4)


def test_read_only_buffer_is_refused():
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.zeros(8, dtype=float)
    _fast_launches(scale, 8, inputs=[x, y, 1.0])
    frozen = wp.array(np.arange(8, dtype=np.float32))
    frozen._buffer.flags.writeable = False
    with pytest.raises(LaunchError, match="read-only"):
        wp.launch(scale, 8, inputs=[frozen, y, 1.0])


def test_plans_follow_redefinitions_and_settings():
    @wp.func
    def f(v: float):
        return v + 1.0

    @wp.kernel
    def apply(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = f(x[i])

    x = wp.zeros(4, dtype=float)
    _fast_launches(apply, 4, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), 2.0)

    @wp.func
    def f(v: float):  # noqa: F811 (a redefinition, as in a notebook)
        return v + 10.0

    wp.launch(apply, 4, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), 12.0)

    plan = _plan(apply)
    saved = config.bounds_check
    try:
        config.bounds_check = not saved
        wp.launch(apply, 4, inputs=[x])
        assert _plan(apply) is not plan  # made again under the new settings
    finally:
        config.bounds_check = saved


def test_tapes_see_planned_writes():
    """A launch outside the tape that overwrites what a recorded launch read
    is caught at backward(), as with the general path."""
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    _fast_launches(scale, 4, inputs=[y, x, 1.0])  # (x written: its plan bumps x's version)
    tape = wp.Tape()
    with tape:
        wp.launch(scale, 4, inputs=[x, y, 2.0])
    wp.launch(scale, 4, inputs=[y, x, 1.0])  # x overwritten, outside the tape
    with pytest.raises(GradientError, match="overwritten"):
        tape.backward(grads={y: wp.ones(4, dtype=float)})


def test_observers_and_taped_launches_skip_the_plan():
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    _fast_launches(scale, 4, inputs=[x, y, 3.0])
    seen = []
    with wp.observe_launches(after=seen.append):
        wp.launch(scale, 4, inputs=[x, y, 3.0])
    assert len(seen) == 1
    tape = wp.Tape()
    with tape:
        wp.launch(scale, 4, inputs=[x, y, 3.0])
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    np.testing.assert_array_equal(x.grad.numpy(), 3.0)


def test_plan_rejects_what_it_cannot_take():
    from adjit import _runtime
    from adjit.runtime.array import Array
    with pytest.raises(ValueError, match="unknown argument kind"):
        _runtime.LaunchPlan(0, 0, Array, np.ndarray, [("uint8",)])
    with pytest.raises(ValueError, match="atomic_order"):
        _runtime.LaunchPlan(0, 7, Array, np.ndarray, [])
    with pytest.raises(ValueError, match="array rank"):
        _runtime.LaunchPlan(0, 0, Array, np.ndarray, [("array", wp.float32, "f", 7, False)])
