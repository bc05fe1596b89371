"""Bugs the gradient fuzzer (adjit.testing, tests/python/autodiff/test_fuzz_gradients.py)
found, as minimal reproducers.

Each test asserts the correct behaviour and is marked xfail(strict=True)
while the bug is open: when a fix lands the test passes, strict makes that
an error, and the marker (and the matching ``GenConfig`` switch that keeps
the fuzzer away from the bug, named in each reason) must be removed.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp
from adjit.testing import check_gradients

f64 = wp.float64


# --- loops reversed by recomputation inside an if ---------------------------

_RUNTIME_LOOP_IN_IF = textwrap.dedent('''
    import numpy as np
    import adjit as wp
    from adjit.testing import check_gradients

    @wp.kernel
    def loop_in_branch(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        h = x[i]
        if h > wp.float64(0.0):
            for j in range(n):
                h = h * x[i]
        y[i] = h

    x = wp.array(np.array([0.5, -1.5]), dtype=wp.float64)
    check_gradients(loop_in_branch, dim=2, inputs=[x, 2], outputs=[wp.zeros(2, dtype=wp.float64)])
    print("gradients ok")
''')


# Regression (found by the fuzzer, fixed): adjit-adjoint aborts the process (LLVM assertion in MutableArrayRef<BlockArgument>::drop_front:  'Dropping more elements than exist') on an scf.for wi...
def test_runtime_loop_inside_an_if_is_differentiable(tmp_path):
    script = tmp_path / "loop_in_branch.py"  # kernels must live in a file
    script.write_text(_RUNTIME_LOOP_IN_IF)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "gradients ok" in proc.stdout, proc.stderr[-2000:]


@wp.kernel
def while_in_branch(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    s = x[i]
    if x[i] > f64(0.0):
        while s < f64(3.0):
            s = s * f64(2.0) + x[i]
    y[i] = s


@wp.kernel
def loop_with_break_in_branch(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    s = x[i]
    if x[i] > f64(0.0):
        for j in range(3):
            if f64(j) >= f64(1.0):
                break
            s = s * x[i]
    y[i] = s


# Regression (found by the fuzzer, fixed): adjit-adjoint emits invalid IR ('along control flow edge from parent to Region #0: region branch  point has N operands, but region successor needs 0 i...
@pytest.mark.parametrize("kernel", [while_in_branch, loop_with_break_in_branch], ids=lambda k: k.__name__)
def test_while_loop_inside_an_if_is_differentiable(kernel):
    x = wp.array(np.array([0.5, -1.5, 1.25]), dtype=f64)
    check_gradients(kernel, dim=3, inputs=[x], outputs=[wp.zeros(3, dtype=f64)])


_NESTED_RUNTIME_LOOPS = textwrap.dedent('''
    import numpy as np
    import adjit as wp
    from adjit.testing import check_gradients

    @wp.kernel
    def nested_loops(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        h = x[i]
        for j in range(n):
            for k in range(n):
                h = h * wp.float64(0.5) + x[i]
        y[i] = h

    x = wp.array(np.array([0.5, 1.5]), dtype=wp.float64)
    check_gradients(nested_loops, dim=2, inputs=[x, 2], outputs=[wp.zeros(2, dtype=wp.float64)])
    print("gradients ok")
''')


# Regression (found by the fuzzer, fixed): adjit-adjoint aborts the process (the same LLVM assertion in drop_front) on a runtime-bounded  scf.for nested in another runtime-bounded scf.for (a co...
def test_nested_runtime_loops_are_differentiable(tmp_path):
    script = tmp_path / "nested_loops.py"
    script.write_text(_NESTED_RUNTIME_LOOPS)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "gradients ok" in proc.stdout, proc.stderr[-2000:]


# --- matrices with a constant row -----------------------------------------------------------

@wp.kernel
def matrix_with_constant_rows(x: wp.array(dtype=f64), y: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    y[i] = wp.mat33d(wp.vec3d(x[i]), wp.vec3d(1.0, 2.0, 3.0), wp.vec3d(4.0, 5.0, 6.0))


@wp.kernel
def element_of_matrix_from_scalars(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    m = wp.mat33d(x[i], f64(1.0), f64(2.0), f64(3.0), f64(4.0), f64(5.0), f64(6.0), f64(7.0), f64(8.0))
    y[i] = m[0, 0] * m[0, 1]


# Regression (found by the fuzzer, fixed): a matrix built (from rows or from nine scalars) with a constant row: adjit-optimize folds the  constant row into `vector.to_elements` of a constant ve...
@pytest.mark.parametrize("kernel", [matrix_with_constant_rows, element_of_matrix_from_scalars],
                         ids=lambda k: k.__name__)
def test_matrix_with_a_constant_row_is_differentiable(kernel):
    x = wp.array(np.array([0.5, -1.5]), dtype=f64)
    out = wp.zeros(2, dtype=kernel.arg_types[-1].dtype)
    check_gradients(kernel, dim=2, inputs=[x], outputs=[out])


# --- a branch that stores a value computed from a load made in the branch -------------------

@wp.kernel
def square_if_positive(x: wp.array(dtype=f64), z: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    if z[i] > f64(0.0):
        y[i] = x[i] * x[i]


@wp.kernel
def copy_if_positive(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    if x[i] > f64(0.0):
        y[i] = x[i]


# Regression (found by the fuzzer, fixed): adjit-adjoint builds an invalid scf.if ('expects a non-empty block': a region without its  scf.yield) for an if without else that stores a value compu...
@pytest.mark.parametrize("kernel", [square_if_positive, copy_if_positive], ids=lambda k: k.__name__)
def test_a_branch_storing_a_value_loaded_in_it_is_differentiable(kernel):
    xs = np.array([0.5, -1.5, 2.0])
    inputs = [wp.array(xs, dtype=f64) for _ in range(len(kernel.arg_names) - 1)]
    check_gradients(kernel, dim=3, inputs=inputs, outputs=[wp.zeros(3, dtype=f64)])


# --- a loop whose body always breaks --------------------------------------------------------------

@wp.kernel
def always_breaks(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    s = x[i]
    for j in range(n):
        s = s * x[i]
        break
    y[i] = s


# Was rejected: canonicalize rewrote the frontend's scf.while into a form
# that forwards values other than its loop-carried ones to its body.
# adjit-adjoint now puts such loops back into the canonical form.
@pytest.mark.parametrize("n", [0, 3])
def test_a_loop_that_always_breaks_is_differentiable(n):
    xs = np.array([0.5, -1.5])
    check_gradients(always_breaks, dim=2, inputs=[wp.array(xs, dtype=f64), n], outputs=[wp.zeros(2, dtype=f64)])
    # x.grad is hand-derivable: y = x*x after one iteration, y = x with none.
    x = wp.array(xs, dtype=f64, requires_grad=True)
    y = wp.zeros(2, dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(always_breaks, dim=2, inputs=[x, n], outputs=[y])
    tape.backward(grads={y: np.ones(2)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs if n else np.ones(2), rtol=1e-15)


# --- in-place reads (found when the fuzzer started reading arrays a kernel writes) -----------------

@wp.kernel
def written_then_read_in_a_loop(x2: wp.array(dtype=f64), x4: wp.array(dtype=f64), n: int,
                                y0: wp.array(dtype=f64), y1: wp.array(dtype=f64)):
    i = wp.tid()
    y0[i] = x2[i] * x2[i]
    y0[i] += x4[i]
    for j in range(n):
        y1[i] = y0[i] * wp.float64(j + 1)


@wp.kernel
def stored_in_a_branch_from_outside(x2: wp.array(dtype=f64), c: float, y0: wp.array(dtype=f64)):
    i = wp.tid()
    a = x2[i] * wp.float64(3.0)
    if c > 0.0:
        y0[i] = a
    y0[i] = y0[i] * x2[i]


# Was a GradientError: a loop that only reads an element the kernel writes
# elsewhere was not carried, so the kernel-wide carrying found a load in a loop.
@pytest.mark.parametrize("n", [0, 2])
def test_an_element_written_before_a_loop_and_read_in_it(n):
    check_gradients(written_then_read_in_a_loop, dim=2,
                    inputs=[wp.array(np.array([0.7, -0.4]), dtype=f64), wp.array(np.array([0.3, 1.1]), dtype=f64), n],
                    outputs=[wp.zeros(2, dtype=f64), wp.zeros(2, dtype=f64)])


# Was a silently wrong (zero) gradient: an scf.if or loop that only passes
# active values through (no op inside) was taken as inactive and skipped.
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_branch_that_only_forwards_a_value_keeps_its_gradient(c):
    xs = np.array([0.7, -0.4])
    x = wp.array(xs, dtype=f64, requires_grad=True)
    y = wp.array(np.array([0.5, 2.0]), dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(stored_in_a_branch_from_outside, dim=2, inputs=[x, c], outputs=[y])
    tape.backward(grads={y: np.ones(2)})
    # c > 0: y = 3 x * x, so dy/dx = 6 x and dy/dy_before = 0; else y = y_before * x.
    if c > 0:
        np.testing.assert_allclose(x.grad.numpy(), 6 * xs, rtol=1e-15)
        np.testing.assert_allclose(y.grad.numpy(), [0.0, 0.0])
    else:
        np.testing.assert_allclose(x.grad.numpy(), [0.5, 2.0], rtol=1e-15)
        np.testing.assert_allclose(y.grad.numpy(), xs, rtol=1e-15)
