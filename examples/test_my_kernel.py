"""Gradient-check your own kernels in pytest with ``adjit.testing``.

``check_gradients`` launches a kernel once under a tape, builds the Jacobian
of every float output with respect to every float input from the adjoint
kernel (one backward pass per output element), builds it again by central
finite differences, and raises an AssertionError naming the worst entries
if the two differ. Use float64 kernels for tight checks (see docs/testing.md).

    pytest examples/test_my_kernel.py        # the tests below, as in your own suite
    python examples/test_my_kernel.py        # the same tests, then a scatter plot of
                                             # adjoint vs finite-difference Jacobian entries

(Where adjit is installed non-editable, run pytest through its ``pytest``
command: ``python -m pytest`` from the repository root would import the
``adjit`` source folder, which has no compiled modules, instead of the package.)
"""
import numpy as np
import pytest

import adjit as wp
from adjit.testing import GradientMismatch, check_gradients, check_tape_gradients


# --- the kernels under test ----------------------------------------------------------------------

@wp.kernel
def spring_energy(x: wp.array(dtype=wp.vec3d), edges: wp.array(dtype=wp.vec2i), rest: wp.array(dtype=wp.float64),
                  stiffness: wp.float64, energy: wp.array(dtype=wp.float64)):
    """The energy of each spring of a mass-spring system (one thread per spring)."""
    e = wp.tid()
    a = edges[e][0]
    b = edges[e][1]
    stretch = wp.length(x[a] - x[b]) - rest[e]
    energy[e] = 0.5 * stiffness * stretch * stretch


@wp.func
def smooth_length(v: wp.vec3d):
    """|v|, smoothed near 0, with a hand-written derivative below."""
    return wp.sqrt(wp.dot(v, v) + 1.0e-6)


@wp.func_grad(smooth_length)
def adj_smooth_length(v: wp.vec3d, adj_ret: wp.float64):
    # A deliberate bug: the derivative of |v| is v / |v|; this forgets "/ |v|".
    wp.adjoint[v] += adj_ret * v


@wp.kernel
def spring_energy_buggy(x: wp.array(dtype=wp.vec3d), edges: wp.array(dtype=wp.vec2i),
                        rest: wp.array(dtype=wp.float64), stiffness: wp.float64,
                        energy: wp.array(dtype=wp.float64)):
    """The same energy through smooth_length, whose hand-written gradient is wrong."""
    e = wp.tid()
    stretch = smooth_length(x[edges[e][0]] - x[edges[e][1]]) - rest[e]
    energy[e] = 0.5 * stiffness * stretch * stretch


@wp.kernel
def total(energy: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, energy[i])


# --- a small system to test on -------------------------------------------------------------------

def square_with_diagonal(seed: int = 0):
    """4 points, 5 springs: a square and one diagonal, perturbed, rest lengths 1."""
    rng = np.random.default_rng(seed)
    points = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float64) + 0.2 * rng.standard_normal((4, 3))
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]], np.int32)
    x = wp.array(points, dtype=wp.vec3d, requires_grad=True)
    return x, wp.array(edges, dtype=wp.vec2i), wp.array(np.ones(len(edges)), dtype=wp.float64, requires_grad=True)


# --- the tests -----------------------------------------------------------------------------------

def test_spring_energy_gradients():
    x, edges, rest = square_with_diagonal()
    # Every (float input array, float output array) pair: d energy / d x and d energy / d rest.
    # (edges is an int array and stiffness a scalar: no Jacobian for them.)
    check_gradients(spring_energy, dim=5, inputs=[x, edges, rest, 3.0], outputs=[wp.zeros(5, dtype=wp.float64)])


def test_several_launches_on_one_tape():
    x, edges, rest = square_with_diagonal(seed=1)

    def run(x, edges, rest):          # makes fresh outputs on every call, returns them
        energy = wp.zeros(5, dtype=wp.float64, requires_grad=True)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(spring_energy, dim=5, inputs=[x, edges, rest, 3.0, energy])
        wp.launch(total, dim=5, inputs=[energy, out])
        return [out]

    check_tape_gradients(run, [x, edges, rest], names=["x", "edges", "rest"], output_names=["total"])


def test_a_wrong_hand_written_gradient_is_caught():
    x, edges, rest = square_with_diagonal()
    with pytest.raises(GradientMismatch) as report:
        check_gradients(spring_energy_buggy, dim=5, inputs=[x, edges, rest, 3.0],
                        outputs=[wp.zeros(5, dtype=wp.float64)])
    # The report names the kernel, the inputs and the worst entries:
    print(report.value)
    assert "spring_energy_buggy" in str(report.value) and "FAIL  d energy / d x" in str(report.value)


try:  # property-based: random inputs drawn by Hypothesis (pip install hypothesis)
    from hypothesis import given, settings, strategies as st
    from adjit.testing import arrays

    @settings(max_examples=20, deadline=None)
    @given(x=arrays(wp.vec3d, 4, elements=st.floats(-2.0, 2.0)))
    def test_spring_energy_gradients_anywhere(x):
        _, edges, rest = square_with_diagonal()
        # Keep away from the kink of |v| at 0 (two points on top of each other).
        p = x.numpy()
        for a, b in edges.numpy():
            if np.linalg.norm(p[a] - p[b]) < 1e-2:
                return
        check_gradients(spring_energy, dim=5, inputs=[x, edges, rest, 3.0], outputs=[wp.zeros(5, dtype=wp.float64)])
except ImportError:
    pass


# --- python examples/test_my_kernel.py: run the tests, then draw the Jacobians ---------------------

def main():
    import subprocess
    import sys
    from pathlib import Path

    from _common import log, parse_args, pyplot, save
    from adjit.autograd import jacobian, jacobian_fd

    args = parse_args("test_my_kernel", "Gradient-check a kernel; plot adjoint vs finite differences",
                      steps=1, small_steps=1, steps_help="(not used by this example)")
    log.info("running this file's tests with pytest")
    # (run from the picture's folder, where Hypothesis keeps its example database)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    status = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(Path(__file__).resolve())], cwd=args.out.parent, check=False).returncode
    log.info("pytest exit status: %d", status)

    x, edges, rest = square_with_diagonal()
    entries, errors = {}, {}
    for kernel in (spring_energy, spring_energy_buggy):
        inputs, outputs = [x, edges, rest, 3.0], [wp.zeros(5, dtype=wp.float64)]
        adjoint = jacobian(kernel, 5, inputs, outputs)["x", "energy"].numpy()   # (5 springs) x (4 points * 3)
        fd = jacobian_fd(kernel, 5, inputs, outputs, eps=1e-6)["x", "energy"].numpy()
        entries[kernel.__name__] = (fd.ravel(), adjoint.ravel())
        errors[kernel.__name__] = float(np.abs(adjoint - fd).max())
    print(f"test_my_kernel: pytest_status={status} max_abs_error={errors['spring_energy']:.3g} "
          f"buggy_max_abs_error={errors['spring_energy_buggy']:.3g}")

    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(5.6, 5.2))
        fd, adj = entries["spring_energy"]
        ax.scatter(fd, adj, s=36, label=f"spring_energy (max |diff| {errors['spring_energy']:.1e})", zorder=3)
        fd_b, adj_b = entries["spring_energy_buggy"]
        ax.scatter(fd_b, adj_b, s=30, marker="x", color="C3",
                   label=f"spring_energy_buggy (max |diff| {errors['spring_energy_buggy']:.2f})", zorder=3)
        lim = 1.1 * max(np.abs(fd).max(), np.abs(adj_b).max())
        ax.plot([-lim, lim], [-lim, lim], color="0.6", lw=1, zorder=1, label="adjoint = finite difference")
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("central finite difference")
        ax.set_ylabel("adjoint (adjit.autograd.jacobian)")
        ax.set_title("Jacobian entries d energy / d x", fontsize=11)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        save(fig, args.out)
    sys.exit(status)


if __name__ == "__main__":
    main()
