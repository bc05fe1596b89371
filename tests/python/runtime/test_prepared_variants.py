"""The variants a kernel's launches keep (loader.prepared_variant):
the general launch path chooses a variant once per kind of launch and
reuses it, so a later launch with other arrays (sizes, overlap, strides),
other values, under a tape or an observer, or after a redefinition, a
setting change or the loader dropping the kernel's code, must still run
what the lookup would have chosen, with its checks and results.

The launches here run under an observer, so they take the general path
(not the CPU launch plan of test_launch_plan.py)."""
import typing

import numpy as np
import pytest

import adjit as wp
from adjit import config, loader
from adjit.errors import OutOfBoundsError


@wp.kernel
def shift(x: wp.array(dtype=float), y: wp.array(dtype=float), offset: int, s: float):
    i = wp.tid()
    y[i] = x[i + offset] * s


@wp.kernel
def add_into(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = y[i] + x[i]


def _observed(k, dim, inputs):
    """Launches through the general path; the PackedLaunch it ran."""
    seen = []
    with wp.observe_launches(after=seen.append):
        wp.launch(k, dim, inputs=inputs)
    (launch,) = seen
    return launch


def test_other_sizes_and_values_are_not_stale():
    a, out_a = wp.array(np.arange(8, dtype=np.float32)), wp.zeros(8, dtype=float)
    first = _observed(shift, 8, [a, out_a, 0, 2.0])
    np.testing.assert_array_equal(out_a.numpy(), np.arange(8) * 2)
    b, out_b = wp.array(np.arange(4, dtype=np.float32) + 10), wp.zeros(4, dtype=float)
    second = _observed(shift, 3, [b, out_b, 1, -1.0])
    assert second.variant is first.variant  # (the kept choice) ...
    np.testing.assert_array_equal(out_b.numpy(), [-11, -12, -13, 0])  # ... with b's values and size
    # b's size bounds its reads: a launch that fits a (8 elements) does not fit b.
    with pytest.raises(OutOfBoundsError) as e:
        _observed(shift, 4, [b, out_b, 1, 1.0])
    assert "'x'" in str(e.value) and "(4,)" in str(e.value)
    _observed(shift, 7, [a, out_a, 1, 1.0])  # (and a still fits)
    np.testing.assert_array_equal(out_a.numpy()[:7], np.arange(1, 8))


def test_overlap_and_strides_choose_their_variants():
    x, y = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4, dtype=float)
    apart = _observed(add_into, 4, [x, y])
    assert apart.spec.noalias and not apart.spec.strided
    same = _observed(add_into, 4, [y, y])
    assert not same.spec.noalias and same.variant is not apart.variant
    np.testing.assert_array_equal(y.numpy(), np.arange(4) * 2)
    wide = wp.array(np.arange(8, dtype=np.float32))
    strided = _observed(add_into, 4, [wide[::2], y])
    assert strided.spec.strided
    np.testing.assert_array_equal(y.numpy(), np.arange(4) * 2 + np.arange(0, 8, 2))
    assert _observed(add_into, 4, [x, y]).variant is apart.variant


@wp.kernel
def double(x: wp.array(dtype=typing.Any)):
    i = wp.tid()
    x[i] = x[i] + x[i]


def test_a_generic_kernel_keeps_a_choice_per_instance():
    f32, f64 = wp.ones(3, dtype=wp.float32), wp.ones(3, dtype=wp.float64)
    one = _observed(double, 3, [f32])
    other = _observed(double, 3, [f64])
    assert one.kernel is not other.kernel and one.variant is not other.variant
    _observed(double, 3, [f32])
    np.testing.assert_array_equal(f32.numpy(), 4.0)
    np.testing.assert_array_equal(f64.numpy(), 2.0)


def test_settings_redefinitions_and_dropped_code_choose_again():
    @wp.func
    def g(v: float):
        return v + 1.0

    @wp.kernel
    def apply(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = g(x[i])

    x = wp.zeros(2, dtype=float)
    first = _observed(apply, 2, [x])

    @wp.func
    def g(v: float):  # noqa: F811 (a redefinition, as in a notebook)
        return v + 10.0

    redefined = _observed(apply, 2, [x])
    assert redefined.variant is not first.variant
    np.testing.assert_array_equal(x.numpy(), 11.0)
    saved = config.bounds_check
    try:
        config.bounds_check = not saved
        unchecked = _observed(apply, 2, [x])
        assert unchecked.spec.checks != redefined.spec.checks
        np.testing.assert_array_equal(x.numpy(), 21.0)
    finally:
        config.bounds_check = saved
    apply.bounds_check = not saved  # (the kernel's own setting)
    try:
        assert _observed(apply, 2, [x]).spec.checks == unchecked.spec.checks
    finally:
        apply.bounds_check = None
    np.testing.assert_array_equal(x.numpy(), 31.0)
    # The loader dropping the kernel's variants (its digest changed when
    # another variant was loaded) is followed too.
    forgotten = loader.forgotten
    loader._forget_variants(apply, loader._loaded(apply), loader._loaded(apply).digest)
    assert loader.forgotten == forgotten + 1
    again = _observed(apply, 2, [x])
    assert again.variant is not redefined.variant
    np.testing.assert_array_equal(x.numpy(), 41.0)


def test_tapes_and_observers_see_every_launch():
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    seen = []
    tape = wp.Tape()
    with wp.observe_launches(before=seen.append), tape:
        for s in (1.0, 2.0, 3.0):
            wp.launch(shift, 4, inputs=[x, y, 0, s])
    assert len(seen) == 3 and len({id(launch.variant) for launch in seen}) == 1
    assert len(tape._steps) == 3
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    # (each launch overwrites y: only the last one's s reaches x)
    np.testing.assert_array_equal(x.grad.numpy(), 3.0)
    np.testing.assert_array_equal(y.numpy(), np.arange(4) * 3)


def test_the_fast_path_follows_the_kernels_own_bounds_check():
    @wp.kernel
    def add_one(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0

    x = wp.zeros(3, dtype=float)
    wp.launch(add_one, 3, inputs=[x])  # through the general path, which makes the plan
    plan = add_one._launch_plan
    assert plan is not None
    wp.launch(add_one, 3, inputs=[x])  # on the plan
    add_one.bounds_check = not config.bounds_check
    try:
        wp.launch(add_one, 3, inputs=[x])  # the plan's variant has the other checks: not used
        assert add_one._launch_plan is not plan and add_one._launch_plan.variant is not plan.variant
    finally:
        add_one.bounds_check = None
    np.testing.assert_array_equal(x.numpy(), 3.0)
