"""The gradient fuzzer: Hypothesis writes programs in the kernel language,
adjit compiles them through the real frontend, and the oracle checks

- forward values against a plain-numpy float64 evaluation of the same
  program, and
- the adjoint Jacobians (adjit.Tape backward) against central finite
  differences (eps=1e-6, rtol=1e-5, atol=1e-7), and
- forward mode against reverse mode: <u, J v> from the tangent kernels equals
  <J^T u, v> from the adjoint kernels to 1e-12 (the dot-product test),

printing a paste-ready reproducer for the shrunk failing program.

The CI profile is a fixed, derandomized budget (about two minutes on two
cores); ``ADJIT_FUZZ_PROFILE=long`` runs many more, freshly random examples.
Known open bugs are kept out by switches of GenConfig (see
test_fuzz_regressions.py); docs/testing.md explains it all.
"""
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import adjit as wp
from adjit.testing import (ForwardModeUnsupported, GenConfig, GradientMismatch, arrays, check_dot_product,
                           check_gradients, check_program, check_tape_gradients, fuzz_settings, module_source,
                           programs)
from adjit.testing import _program as P
from adjit.testing import _reference as R

f64 = wp.float64

# --- the fuzzer --------------------------------------------------------------------------

#: Valid examples per fuzz test in the CI profile (see docs/testing.md for the timing).
CI_EXAMPLES = {"one_launch": 300, "several_launches": 170, "scalars": 130, "each_builtin": 3, "second_order": 40}
#: Programs generated (not checked) by the coverage test.
COVERAGE_EXAMPLES = 250


#: What the fuzz tests of this session generated (for the coverage test below).
SEEN = {}
#: Why the forward-mode oracle skipped fuzzed programs (reason -> count).
FORWARD_MODE_SKIPS = Counter()


def _fuzz(name, program):
    SEEN.setdefault(name, Counter()).update(P.features(program))
    FORWARD_MODE_SKIPS.update(check_program(program).skipped.values())


@fuzz_settings(CI_EXAMPLES["one_launch"])
@given(programs(GenConfig(max_kernels=1)))
def test_fuzz_one_launch(program):
    _fuzz("one_launch", program)


@fuzz_settings(CI_EXAMPLES["several_launches"])
@given(programs(GenConfig(min_kernels=2, max_kernels=3, max_top_statements=4)))
def test_fuzz_several_launches_on_one_tape(program):
    _fuzz("several_launches", program)


@fuzz_settings(CI_EXAMPLES["scalars"])
@given(programs(GenConfig(types=(R.F,), max_kernels=1, max_depth=4)))
def test_fuzz_scalar_programs(program):
    _fuzz("scalars", program)


@fuzz_settings(CI_EXAMPLES["second_order"])
@given(programs(GenConfig(min_kernels=1, max_kernels=2, max_top_statements=3)))
def test_fuzz_second_order(program):
    # forward over reverse (the tangent kernels of the adjoint kernels) on
    # one or two launches: the Hessian they give must be symmetric
    SEEN.setdefault("second_order", Counter()).update(P.features(program))
    FORWARD_MODE_SKIPS.update(check_program(program, second_order=True).skipped.values())


FUZZED_BUILTINS = sorted({s.name for s in R.signatures()})


@pytest.mark.parametrize("builtin", FUZZED_BUILTINS)
def test_fuzz_each_builtin_on_a_differentiated_path(builtin):
    # The programs above may use a builtin only where no gradient flows (a
    # branch condition, constant arguments); these store it applied to inputs.
    # The surrounding code computes with the builtin's own types and float64, vec3d, mat33d, quatd:
    # 6- and 7-component values elsewhere would only add components near kinks, and discarded draws.
    own = {t for sig in R.signatures((builtin,)) for t in (*sig.args, sig.result)}
    types = tuple(t for t in R.VALUE_TYPES if t in (R.F, R.V, R.M, R.Q) or t in own)

    @fuzz_settings(CI_EXAMPLES["each_builtin"])
    @given(programs(GenConfig(max_kernels=1, max_top_statements=2, focus=builtin, types=types)))
    def fuzz(program):
        assert f"builtin:{builtin}" in P.features(program)
        _fuzz("each_builtin", program)
    fuzz()


# --- the generator reaches what it should ------------------------------------------------------

FEATURES = {
    "assign", "alias", "component:set", "component:+=", "component:*=", "augmented:+=", "augmented:*=",
    "store:element", "store:component", "store:atomic+=", "store:atomic-=", "if", "if/else",
    "for:constant", "for:runtime", "break", "continue", "return:early", "call:device_function",
    "read:own", "read:next", "read:component", "read:in_place", "read:in_place_in_loop", "expression:if_else", "expression:component",
    "expression:loop_index", "construct:vec3d", "construct:mat33d", "construct:quatd", "operator:/",
    "operator:**",
    "launches:several", "launches:chained", "launches:overwrite",
}


#: Differentiable builtins the fuzzer cannot call: those taking or giving a
#: 4x4 or 6x6 matrix (its values are float64, vec3d, mat33d, quatd, spatial_vectord
#: and transformd), taking integer arguments (Euler axis indices), giving
#: several results, or writing an argument. Their gradients are checked
#: against float64 finite differences in test_transforms.py,
#: test_builtins.py and (the matrix decompositions) test_decompositions.py.
NOT_FUZZED = ["eig3", "qr3", "quat_from_euler", "quat_to_axis_angle", "quat_to_euler", "spatial_adjoint", "svd2",
              "svd3", "transform_compose", "transform_decompose", "transform_from_matrix", "transform_set_rotation",
              "transform_set_translation", "transform_to_matrix"]
#: The noise builtins take a generator state (uint32), not a fuzzed type;
#: test_noise.py checks their gradients against float64 differences.
NOT_FUZZED = sorted(NOT_FUZZED + ["curlnoise", "noise", "pnoise"])
#: Warp's constructor builtins quaternion(...) and transformation(...) take a
#: static dtype= (as builtins with static parameters, the fuzzer leaves them
#: out); test_warp_builtins_more.py checks their gradients against float64
#: differences.
NOT_FUZZED = sorted(NOT_FUZZED + ["quaternion", "transformation"])
#: The tile builtins take tiles, shapes and offsets, which the generator
#: does not write yet; test_tiles.py and test_tile_linalg.py check each one's
#: gradients against float64 differences.
NOT_FUZZED = sorted(NOT_FUZZED + [name for name, entry in wp.builtin_registry().items()
                                  if entry.tile and entry.differentiable])


def test_every_differentiable_builtin_is_fuzzed():
    # Each one with a signature over the fuzzed types is a case of
    # test_fuzz_each_builtin_on_a_differentiated_path.
    assert R.uncovered_builtins() == NOT_FUZZED


def test_the_generator_reaches_every_language_feature():
    # The programs the fuzz tests above checked (they run first) plus a
    # generation-only run: what the generator reaches must not hinge on which
    # examples the oracle happened to keep. (Builtins: each is fuzzed by
    # test_fuzz_each_builtin_on_a_differentiated_path.)
    seen = Counter()
    for counter in SEEN.values():
        seen.update(counter)

    @settings(max_examples=COVERAGE_EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(programs())
    def collect(program):
        seen.update(P.features(program))
    collect()
    missing = sorted(FEATURES - set(seen))
    assert not missing, f"never generated: {missing}"


def test_the_forward_mode_oracle_checked_every_fuzzed_program():
    # The generator writes no kernel the tangent pass rejects (no @func_grad,
    # no float atomic min/max); one that starts to must be let in here knowingly.
    assert not FORWARD_MODE_SKIPS, f"forward mode skipped: {dict(FORWARD_MODE_SKIPS)}"


def test_every_fuzzed_builtin_has_an_independent_numpy_reference():
    # A new differentiable builtin is fuzzed at once (its forward values then
    # checked against the compiled builtin itself); this asks for a numpy
    # reference so that its forward values are checked independently too.
    assert R.missing_numpy_references() == []


def test_a_builtin_without_numpy_reference_is_evaluated_by_a_compiled_call(monkeypatch):
    sig = next(s for s in R.signatures(("atan2",)) if s.args == (R.F, R.F))
    monkeypatch.delitem(R.NUMPY_REFERENCES, "atan2")
    got = R.evaluate(sig, [np.float64(0.3), np.float64(1.7)])
    assert got == pytest.approx(np.arctan2(0.3, 1.7), rel=1e-15)


# --- the oracle catches wrong programs, and its reproducer runs as a test --------------------------

def _program(body, reads, writes, dim=3, n=2, funcs=()):
    """A hand-written program: arrays named x* are inputs, y* outputs."""
    rng = np.random.default_rng(0)
    arrays_ = {}
    for name, t in reads + writes:
        values = rng.uniform(0.2, 1.2, (dim,) + R.SHAPE[t])
        arrays_[name] = P.ArrayDecl(name, t, "input" if name.startswith("x") else "output", values,
                                    (0.2, 1.2))
    kernel = P.KernelDef("k0", [n_ for n_, _ in reads], [n_ for n_, _ in writes], False, body)
    return P.Program(dim, n, arrays_, list(funcs), [kernel]).evaluate()


def _sin_program():
    sig = next(s for s in R.signatures(("sin",)) if s.args == (R.F,))
    x = P.Read(R.F, "x0", R.F, dim=3)
    return _program([P.Store("y1", R.F, P.Bin(R.F, "*", P.Call(R.F, sig, [x]), x))],
                    [("x0", R.F)], [("y1", R.F)])


def test_a_correct_program_passes_and_its_reproducer_is_a_passing_test_file(tmp_path):
    program = _sin_program()
    check_program(program)
    path = tmp_path / "test_reproducer.py"
    path.write_text(module_source(program))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "4 passed" in proc.stdout, proc.stdout + proc.stderr


def test_a_wrong_forward_formula_is_caught_with_a_reproducer(monkeypatch):
    # sin emitted as cos, in this process only (and out of the compile cache)
    from mlir.dialects import math
    from adjit import builtins as B
    monkeypatch.setattr(wp.config, "cache", False)
    monkeypatch.setattr(B.lookup("sin"), "emit", lambda vals, types, result: math.CosOp(vals[0]).result)
    with pytest.raises(AssertionError) as info:
        check_program(_sin_program())
    text = str(info.value)
    assert "failed test_forward" in text and "Mismatched elements" in text
    assert "----- reproducer" in text and "def k0(x0: wp.array(dtype=wp.float64)" in text


def test_an_asymmetric_second_order_is_caught_with_a_reproducer(monkeypatch):
    # H v off by 1e-9 times a shift of v (not symmetric): far below what
    # finite differences of the gradient could see, not below the symmetry test.
    from adjit import autograd
    real = autograd.hvp

    def skewed(fn, inputs, tangents, output_grads=None):
        loss, gradients, hvps = real(fn, inputs, tangents, output_grads)
        return loss, gradients, [h if t is None else h + 1e-9 * np.roll(np.asarray(t), 1)
                                 for h, t in zip(hvps, tangents)]
    monkeypatch.setattr(autograd, "hvp", skewed)
    check_program(_sin_program())  # the first-order checks do not run it
    with pytest.raises(AssertionError) as info:
        check_program(_sin_program(), second_order=True)
    text = str(info.value)
    assert "failed test_second_order" in text and "not symmetric" in text
    assert "----- reproducer" in text and "check_hessian_symmetry(run, inputs(), rtol=1e-12" in text


def test_a_wrong_tangent_is_caught_with_a_reproducer(monkeypatch):
    # Every tangent a launch writes off by one part in 1e9: far inside the
    # finite differences' tolerance (test_gradients passes), not the dot product's.
    from adjit import autograd
    from adjit.launch import is_differentiable
    from adjit.loader import written_arguments
    real = autograd.launch_tangent

    def off_by_1e9(kernel, dim, args, tangents, record=True, **options):
        real(kernel, dim, args, tangents, record, **options)
        floats = [n for n, t in zip(kernel.arg_names, kernel.arg_types) if is_differentiable(t)]
        written = {kernel.arg_names[p] for p in written_arguments(kernel)}
        for name, tangent in zip(floats, tangents):
            if name in written:
                tangent.numpy()[...] *= 1 + 1e-9
    monkeypatch.setattr(autograd, "launch_tangent", off_by_1e9)
    with pytest.raises(AssertionError) as info:
        check_program(_sin_program())
    text = str(info.value)
    assert "failed test_forward_mode" in text and "forward mode and reverse mode disagree" in text
    assert "----- reproducer" in text and "check_dot_product(run, inputs(), rtol=1e-12" in text


@wp.func
def doubled(x: f64):
    return x + x


@wp.func_grad(doubled)
def adj_doubled(x: f64, adj_ret: f64):
    wp.adjoint[x] += f64(2.0) * adj_ret


@wp.kernel
def calls_custom_adjoint(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = doubled(x[i]) * x[i]


def _launches_custom_adjoint(x):
    y = wp.zeros(2, dtype=f64, requires_grad=True)
    wp.launch(calls_custom_adjoint, 2, inputs=[x], outputs=[y])
    return [y]


def test_a_kernel_the_tangent_pass_rejects_skips_the_forward_oracle_with_the_reason(monkeypatch):
    x = wp.array(np.array([0.5, 1.5]), dtype=f64, requires_grad=True)
    with pytest.raises(ForwardModeUnsupported) as info:  # a unittest.SkipTest: pytest reports a skip
        check_dot_product(_launches_custom_adjoint, [x])
    reason = str(info.value)
    assert "calls_custom_adjoint" in reason and "doubled" in reason and "custom adjoint" in reason
    # check_program runs the other checks, and returns (and warns) the reason
    from adjit import autograd
    real_jvp = autograd.jvp

    def rejects(fn, inputs, tangents):  # the generated program's jvp meets the same kernel
        return real_jvp(_launches_custom_adjoint, [x], [np.ones(2)])
    monkeypatch.setattr(autograd, "jvp", rejects)
    with pytest.warns(UserWarning, match="(?s)skipped test_forward_mode of a generated program.*custom adjoint"):
        result = check_program(_sin_program())
    assert "doubled" in result.skipped["test_forward_mode"]


REJECTED_BY_THE_TANGENT_PASS = '''
import numpy as np
import adjit as wp
from adjit.testing import check_dot_product

@wp.func
def doubled(x: wp.float64):
    return x + x

@wp.func_grad(doubled)
def adj_doubled(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += wp.float64(2.0) * adj_ret

@wp.kernel
def k0(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = doubled(x[i]) * x[i]

def run(x):
    y = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    wp.launch(k0, 2, inputs=[x], outputs=[y])
    return [y]

def test_forward():
    pass

def test_gradients():
    pass

def test_forward_mode():
    check_dot_product(run, [wp.array(np.array([0.5, 1.5]), dtype=wp.float64, requires_grad=True)])
'''


def test_an_isolated_check_reports_the_forward_oracle_skipped_with_the_reason():
    from adjit.testing._oracle import OracleSkipped, _check_isolated
    with pytest.warns(OracleSkipped):
        result = _check_isolated(REJECTED_BY_THE_TANGENT_PASS)
    assert list(result.skipped) == ["test_forward_mode"]
    assert "'k0' cannot be differentiated in forward mode" in result.skipped["test_forward_mode"]


def test_a_wrong_expected_value_is_caught(monkeypatch):
    program = _sin_program()
    program.expected["y1"] = program.expected["y1"] + 1e-6
    with pytest.raises(AssertionError, match="failed test_forward"):
        check_program(program)


def test_programs_near_a_kink_are_discarded():
    sig = next(s for s in R.signatures(("abs",)) if s.args == (R.F,))
    x = P.Read(R.F, "x0", R.F, dim=1)
    program = _program([P.Store("y1", R.F, P.Call(R.F, sig, [P.Bin(R.F, "-", x, P.Lit(R.F, 0.7))]))],
                       [("x0", R.F)], [("y1", R.F)], dim=1)
    program.arrays["x0"].values[:] = 0.7 + 1e-4
    from adjit.testing._oracle import well_conditioned
    assert "kink" in well_conditioned(program.evaluate())


# --- check_gradients and check_tape_gradients, as users call them -------------------------------------

@wp.kernel
def cubic(x: wp.array(dtype=f64), v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i] + wp.dot(v[i], v[i]) * wp.sin(x[i])


@wp.kernel
def kink_at_zero(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = wp.abs(x[i])


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(x=arrays(f64, 4, elements=st.floats(-2, 2)), v=arrays(wp.vec3d, 4))
def test_check_gradients_with_hypothesis_inputs(x, v):
    check_gradients(cubic, dim=4, inputs=[x, v], outputs=[wp.zeros(4, dtype=f64)])


def test_check_gradients_reports_the_worst_entries_readably():
    x = wp.array(np.array([0.0, 1.0]), dtype=f64)
    with pytest.raises(GradientMismatch) as info:
        check_gradients(kink_at_zero, dim=2, inputs=[x], outputs=[wp.zeros(2, dtype=f64)])
    text = str(info.value)
    assert "kernel 'kink_at_zero'" in text and "test_fuzz_gradients.py" in text
    assert "FAIL  d y / d x: 1 of 4 entries out of tolerance" in text
    assert "d y[0] / d x[0]: adjoint 1, finite difference 0" in text
    assert "x = [0., 1.]" in text


def test_check_tape_gradients_over_several_launches():
    xs = wp.array(np.array([0.3, -0.7, 1.1]), dtype=f64)
    vs = wp.array(np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [0.0, 0.4, -0.2]]), dtype=wp.vec3d)

    def run(x, v):
        t = wp.zeros(3, dtype=f64, requires_grad=True)
        wp.launch(cubic, dim=3, inputs=[x, v], outputs=[t])
        y = wp.zeros(3, dtype=f64, requires_grad=True)
        wp.launch(cubic, dim=3, inputs=[t, v], outputs=[y])
        return [t, y]

    check_tape_gradients(run, [xs, vs], names=["x", "v"])


def test_arrays_strategy_draws_adjit_arrays_that_print_as_code():
    from hypothesis.vendor.pretty import pretty

    @settings(max_examples=5, derandomize=True, database=None)
    @given(arrays(wp.mat33d, st.integers(1, 3)))
    def draw(a):
        assert isinstance(a, wp.Array) and a.dtype == wp.mat33d and a.numpy().shape[1:] == (3, 3)
        assert a.grad is not None
        text = pretty(a)
        assert text.startswith("adjit.array(np.array([[[") and "dtype=adjit.mat33d" in text

    draw()


def test_the_long_profile_runs_ten_times_the_ci_budget_freshly_random():
    ci, long = fuzz_settings(7, profile="ci"), fuzz_settings(7, profile="long")
    assert (ci.max_examples, ci.derandomize) == (7, True)
    assert (long.max_examples, long.derandomize) == (70, False)
