"""The seam between the device-independent launch and a backend: the
``VariantSpec`` that names a compiled variant (and keys the disk cache), and
the launch observers (``adjit.observe_launches``)."""
import dataclasses
import json
import threading

import numpy as np
import pytest

import adjit as wp
from adjit import config, loader
from adjit import variant as variant_module
from adjit.backends.base import PackedLaunch
from adjit.launch import launch_tangent
from adjit.variant import Checks, VariantSpec

# --- VariantSpec -------------------------------------------------------------


@wp.kernel
def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


def test_a_variant_spec_is_a_frozen_hashable_value():
    spec = VariantSpec(adjoint=True, checks=(True, False))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.noalias = False
    # lanes given as bools count as 1 / 0; checks become Checks
    assert spec == VariantSpec(adjoint=1, checks=Checks(bounds=True, finite=False))
    assert hash(spec) == hash(VariantSpec(adjoint=1))
    assert spec.adjoint == 1 and type(spec.adjoint) is int and isinstance(spec.checks, Checks)
    fields = [f.name for f in dataclasses.fields(VariantSpec)]
    assert fields == ["target", "adjoint", "tangent", "noalias", "checks", "all_checked", "ordered_atomics",
                      "strided", "fast_math"]
    # every field tells variants apart
    other = {"target": "cuda", "adjoint": 2, "tangent": 1, "noalias": False, "checks": Checks(False, False),
             "all_checked": True, "ordered_atomics": False, "strided": True, "fast_math": False}
    for name, value in other.items():
        assert dataclasses.replace(spec, **{name: value}) != spec, name
    assert len({dataclasses.replace(spec, **{n: v}) for n, v in other.items()}) == len(other)
    with pytest.raises(ValueError, match="unknown target"):
        VariantSpec(target="tpu")
    with pytest.raises(ValueError, match="lanes"):
        VariantSpec(tangent=-1)


def test_derived_variants_and_kinds():
    spec = VariantSpec(noalias=False)
    assert spec.fully_checked == dataclasses.replace(spec, all_checked=True)
    assert spec.fully_checked is spec.fully_checked  # made once
    assert spec.inline_atomics == dataclasses.replace(spec, ordered_atomics=False)
    assert [VariantSpec(**kw).kind for kw in ({}, {"adjoint": 3}, {"tangent": 1}, {"adjoint": 1, "tangent": 1})] \
        == ["forward", "backward", "tangent", "tangent"]


def test_variant_spec_of_a_kernel_follows_its_checks(monkeypatch):
    spec = VariantSpec.of(double, adjoint=1, noalias=False)
    assert spec == VariantSpec(adjoint=1, noalias=False, checks=loader.checks(double))
    assert VariantSpec.of(double, adjoint=1, noalias=False) is spec  # launches reuse it
    monkeypatch.setattr(config, "verify_fp", True)
    assert VariantSpec.of(double, adjoint=1, noalias=False).checks == Checks(True, True)


#: The options of each variant as the cache keys of earlier adjit versions
#: spelled them (before fast_math, whose absence means libm calls) (json.dumps(options, sort_keys=True) is hashed into the key):
#: entries on disk stay valid only while these hold.
KEYED_OPTIONS = [
    (VariantSpec(fast_math=False),
     '{"adjoint": false, "all_checked": false, "bounds_check": true, "no_grad": [], "noalias": true, '
     '"opt_level": 3, "ordered_atomics": true, "simd_width": 8, "tangent": 0, "target": "cpu", '
     '"verify_fp": false}'),
    (VariantSpec(adjoint=True, noalias=False, checks=(True, True), all_checked=True, ordered_atomics=False,
                 fast_math=False),
     '{"adjoint": true, "all_checked": true, "bounds_check": true, "no_grad": [], "noalias": false, '
     '"opt_level": 3, "ordered_atomics": false, "tangent": 0, "target": "cpu", "verify_fp": true}'),
    (VariantSpec(adjoint=3, checks=(False, False), fast_math=False),
     '{"adjoint": true, "adjoint_lanes": 3, "all_checked": false, "bounds_check": false, "no_grad": [], '
     '"noalias": true, "opt_level": 3, "ordered_atomics": true, "simd_width": 8, "tangent": 0, "target": "cpu", '
     '"verify_fp": false}'),
    (VariantSpec(tangent=2, strided=True, fast_math=False),
     '{"adjoint": false, "all_checked": false, "bounds_check": true, "no_grad": [], "noalias": true, '
     '"opt_level": 3, "ordered_atomics": true, "simd_width": 8, "strided_arrays": true, "tangent": 2, '
     '"target": "cpu", "verify_fp": false}'),
    (VariantSpec(adjoint=1, tangent=1, fast_math=False),
     '{"adjoint": true, "all_checked": false, "bounds_check": true, "no_grad": [], "noalias": true, '
     '"opt_level": 3, "ordered_atomics": true, "simd_width": 8, "tangent": 1, "target": "cpu", '
     '"verify_fp": false}'),
    # (fast_math, new: its entries have keys of their own)
    (VariantSpec(),
     '{"adjoint": false, "all_checked": false, "bounds_check": true, "fast_math": true, "no_grad": [], '
     '"noalias": true, "opt_level": 3, "ordered_atomics": true, "simd_width": 8, "tangent": 0, "target": "cpu", '
     '"verify_fp": false}'),
]


@pytest.mark.parametrize("spec, options", KEYED_OPTIONS)
def test_cache_keys_are_spelled_as_before(spec, options, monkeypatch):
    monkeypatch.setattr(variant_module, "simd_width", lambda: 8)  # (whatever ADJIT_SIMD_WIDTH says)
    assert json.dumps(loader.compile_options(double, spec), sort_keys=True) == options


def test_each_variant_has_its_own_cache_key():
    specs = [spec for spec, _ in KEYED_OPTIONS] + [VariantSpec(noalias=False)]
    keys = {loader._key_parts(double, spec).key() for spec in specs}
    keys |= {loader._key_parts(double, VariantSpec(target="cuda"), arch=arch).key() for arch in ("sm_80", "sm_90")}
    assert len(keys) == len(specs) + 2


def test_loaded_variants_are_kept_by_spec():
    x, y = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
    wp.launch(double, 4, [x, y])
    wp.launch(double, 4, [x, x])  # overlapping arrays: the variant without the no-overlap promise
    variants = loader._loaded(double).variants
    checked = loader.checks(double)
    assert {VariantSpec(checks=checked), VariantSpec(checks=checked, noalias=False)} <= set(variants)
    for spec, variant in variants.items():
        assert variant.spec == spec and variant.name == f"double_cpu_kernel_{spec.kind}"


def test_stage_lists_follow_the_spec():
    stages = pytest.importorskip("adjit.compiler.stages")
    cpu = stages.cpu_stages(VariantSpec(adjoint=2, noalias=False, all_checked=True, strided=True,
                                        ordered_atomics=False))
    assert [s.name for s in cpu] == ["adjit", "optimized", "adjoint", "checked", "cpu", "llvm"]
    assert "lanes=2" in cpu[2].pipeline
    assert cpu[4].pipeline == "adjit-lower-cpu{noalias=false all-checked=true strided-arrays=true}"
    assert cpu[5].pipeline == "adjit-cpu-to-llvm{ordered-atomics=false fast-math=true}"
    assert stages.cpu_stages(VariantSpec(fast_math=False))[-1].pipeline == "adjit-cpu-to-llvm{ordered-atomics=true}"
    cuda = stages.variant_stages(VariantSpec("cuda", tangent=1, checks=(False, False)), "sm_90")
    assert [s.name for s in cuda] == ["adjit", "optimized", "tangent", "gpu", "ptx"]
    assert cuda[-1].pipeline == "adjit-gpu-to-ptx{chip=sm_90}"
    with pytest.raises(ValueError, match="target"):
        stages.cpu_stages(VariantSpec("cuda"))
    assert "strided-arrays=true" in stages.cuda_stages(VariantSpec("cuda", strided=True))[-2].pipeline
    with pytest.raises(ValueError, match="all-checked version inside"):
        stages.cuda_stages(VariantSpec("cuda", all_checked=True))


# --- launch observers --------------------------------------------------------


@wp.kernel
def gather(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[idx[i]]


def test_observers_see_each_launch_before_and_after_it_runs():
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    events = []

    def before(launch):
        assert isinstance(launch, PackedLaunch) and launch.variant is not None
        events.append(("before", launch, launch.spec.kind, launch.args[1].copy()))

    def after(launch):
        events.append(("after", launch, launch.spec.kind, launch.args[1].copy()))

    with wp.observe_launches(before=before, after=after):
        with wp.Tape() as tape:
            wp.launch(double, 4, [x, y])
        tape.backward(grads={y: np.ones(4, np.float32)})
        launch_tangent(double, 4, [x, y], [wp.ones(4), wp.zeros(4)], record=False)
    assert [(e[0], e[2]) for e in events] == [("before", "forward"), ("after", "forward"),
                                              ("before", "backward"), ("after", "backward"),
                                              ("before", "tangent"), ("after", "tangent")]
    forward = events[0][1]
    assert events[1][1] is forward  # one object per launch
    assert forward.kernel is double and (forward.dim, forward.total, forward.shape) == (4, 4, (4, 1, 1, 1))
    assert forward.primal == [x, y] and forward.spec == VariantSpec(checks=loader.checks(double))
    assert forward.variant.digest is not None
    # the packed arguments are the arrays' buffers: y before and after the launch
    assert np.shares_memory(forward.args[1], y.numpy())
    np.testing.assert_array_equal(events[0][3], np.zeros(4))
    np.testing.assert_array_equal(events[1][3], 2.0 * np.arange(4))
    backward = events[2][1]
    assert backward.spec.adjoint == 1 and len(backward.args) == 4  # x, y, then their gradients
    assert np.shares_memory(backward.args[2], x.grad.numpy())
    tangent = events[4][1]
    assert tangent.spec.tangent == 1 and len(tangent.args) == 4  # x, y, then their tangents


def test_a_closed_observer_sees_nothing_and_a_failed_launch_has_no_after():
    seen = []
    observer = wp.observe_launches(after=lambda launch: seen.append(launch.spec))
    x, y = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
    bad = wp.array(np.array([0, 1, 2, 9], np.int32))
    before = []
    with wp.observe_launches(before=lambda launch: before.append(launch.spec)):
        with pytest.raises(wp.OutOfBoundsError):
            wp.launch(gather, 4, [x, bad, y])
    assert len(before) == 1 and seen == []
    # the launch condition (idx's range) does not hold: the all-checked variant ran
    wp.launch(gather, 4, [x, wp.array(np.array([0, 1, 2, 3], np.int32)), y])
    assert len(seen) == 1 and not seen[0].all_checked
    observer.close()
    wp.launch(gather, 4, [x, wp.array(np.array([0, 1, 2, 3], np.int32)), y])
    assert len(seen) == 1 and len(before) == 1


@wp.kernel
def guarded(x: wp.array(dtype=float), n: int):
    i = wp.tid()
    if i < n:
        x[i] = 1.0


def test_observers_see_the_variant_that_ran():
    seen = []
    with wp.observe_launches(before=lambda launch: seen.append(launch.spec),
                             after=lambda launch: seen.append(launch.spec)):
        wp.launch(guarded, 16, [wp.zeros(10), 10])  # 16 threads, 10 elements: not proved for the launch
    assert not seen[0].all_checked and seen[1] == seen[0].fully_checked


def test_observers_see_launches_from_every_thread():
    seen = []
    with wp.observe_launches(after=lambda launch: seen.append(threading.current_thread().name)):
        def work():
            wp.launch(double, 4, [wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)])
        threads = [threading.Thread(target=work, name=f"launcher {n}") for n in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(seen) == 3 and len(set(seen)) == 3


def test_observe_launches_checks_its_arguments():
    with pytest.raises(TypeError, match="before=, after="):
        wp.observe_launches()
    with pytest.raises(TypeError, match="callable"):
        wp.observe_launches(after=3)
