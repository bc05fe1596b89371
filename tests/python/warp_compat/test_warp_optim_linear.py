"""warp.optim.linear (issue 26, item 4): cg, cr, gmres, LinearOperator,
aslinearoperator, preconditioner, on small systems against
numpy.linalg.solve."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp
from adjit.optim import linear

RNG = np.random.default_rng(26)
N = 12


def _spd(n=N, dtype=np.float64):
    B = RNG.normal(size=(n, n))
    return (B @ B.T + n * np.diag(RNG.uniform(0.5, 2.0, n))).astype(dtype), RNG.normal(size=n).astype(dtype)


@pytest.mark.parametrize("solver", [linear.cg, linear.cr, linear.gmres])
@pytest.mark.parametrize("precondition", [False, True])
def test_solvers_match_numpy_on_an_spd_system(solver, precondition):
    A, b = _spd()
    wa = wp.array(A, dtype=wp.float64)
    M = linear.preconditioner(wa) if precondition else None
    x = wp.zeros(N, dtype=wp.float64)
    calls = []
    kwargs = dict(restart=4) if solver is linear.gmres else {}
    iterations, err, atol = solver(wa, wp.array(b, dtype=wp.float64), x, tol=1e-12, M=M, check_every=4,
                                   callback=lambda *a: calls.append(a), maxiter=200, **kwargs)
    assert atol == pytest.approx(1e-12 * np.linalg.norm(b), rel=1e-12)
    assert err <= atol and 0 < iterations < 200 and iterations % 4 == 0  # checked every 4 iterations
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b), rtol=1e-9, atol=1e-11)
    assert calls[0][0] == 0 and calls[-1] == (iterations, err, atol)


def test_gmres_solves_a_nonsymmetric_system_and_reports_the_true_residual():
    A = np.eye(N) * 4 + RNG.normal(size=(N, N))
    b = RNG.normal(size=N)
    x = wp.zeros(N, dtype=wp.float64)
    it, err, atol = linear.gmres(wp.array(A, dtype=wp.float64), wp.array(b, dtype=wp.float64), x, tol=1e-12,
                                 maxiter=120, restart=6, check_every=6)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b), rtol=1e-9, atol=1e-11)
    assert err == pytest.approx(np.linalg.norm(b - A @ x.numpy()), rel=1e-6, abs=1e-14)


def test_default_tolerance_and_iterations_in_float32():
    A, b = _spd(dtype=np.float32)
    x = wp.zeros(N, dtype=wp.float32)
    it, err, atol = linear.cg(wp.array(A, dtype=wp.float32), wp.array(b, dtype=wp.float32), x)
    # Warp's defaults: tol = atol = eps^(3/4) with eps = 1e-8 for float32; maxiter = the system size
    assert atol == pytest.approx(max(1e-6 * np.linalg.norm(b.astype(np.float64)), 1e-6), rel=1e-6)
    assert it == N
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A.astype(np.float64), b), rtol=2e-4, atol=1e-5)


@wp.kernel
def _tridiagonal(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.float64),
                 alpha: wp.float64, beta: wp.float64):
    i = wp.tid()
    n = x.shape[0]
    ax = wp.float64(2.5) * x[i]
    if i > 0:
        ax = ax - x[i - 1]
    if i < n - 1:
        ax = ax - x[i + 1]
    z[i] = alpha * ax + beta * y[i]


def test_a_custom_operator_launching_a_kernel():
    def matvec(x, y, z, alpha, beta):
        wp.launch(_tridiagonal, dim=N, inputs=[x, y, z, wp.float64(alpha), wp.float64(beta)])
    op = linear.LinearOperator((N, N), wp.float64, "cpu", matvec)
    assert linear.aslinearoperator(op) is op and op.scalar_type == wp.float64 and op.batch_count == 1
    A = 2.5 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)
    b = RNG.normal(size=N)
    x = wp.zeros(N, dtype=wp.float64)
    linear.cr(op, wp.array(b, dtype=wp.float64), x, tol=1e-13, maxiter=100, check_every=1)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)


def test_diagonal_operators_and_preconditioners():
    d = RNG.uniform(1, 3, (4, 3))
    op = linear.aslinearoperator(wp.array(d, dtype=wp.vec3d))  # a diagonal of vectors: componentwise
    x, y, z = (wp.array(RNG.normal(size=(4, 3)), dtype=wp.vec3d) for _ in range(3))
    op.matvec(x, y, z, 2.0, -1.0)
    np.testing.assert_allclose(z.numpy(), 2.0 * d * x.numpy() - y.numpy(), rtol=1e-15)
    A = np.array([[4.0, 1.0, 0.0], [1.0, -2.0, 0.0], [0.0, 0.0, 0.0]])
    wa = wp.array(A, dtype=wp.float64)
    for ptype, want in (("diag", [0.25, -0.5, 1.0]), ("diag_abs", [0.25, 0.5, 1.0])):
        M = linear.preconditioner(wa, ptype)
        v = wp.array(np.ones(3), dtype=wp.float64)
        out = wp.zeros(3, dtype=wp.float64)
        M.matvec(v, out, out, 1.0, 0.0)
        np.testing.assert_array_equal(out.numpy(), want)
    assert linear.preconditioner(wa, "id") is None


def test_what_is_not_supported_is_a_clear_error():
    A, b = _spd()
    wa, wb, x = wp.array(A, dtype=wp.float64), wp.array(b, dtype=wp.float64), wp.zeros(N, dtype=wp.float64)
    with pytest.raises(ValueError, match="Unsupported preconditioner type 'ilu'"):
        linear.preconditioner(wa, "ilu")
    with pytest.raises(NotImplementedError, match="run=False"):
        linear.cg(wa, wb, x, run=False)
    with pytest.raises(NotImplementedError, match="check_every=0"):
        linear.cr(wa, wb, x, check_every=0)
    with pytest.raises(NotImplementedError, match="restart="):
        linear.cg(wa, wb, x, restart=5)
    batched = linear.aslinearoperator(wa, batch_offsets=wp.array(np.array([0, 6, 12], np.int32), dtype=wp.int32))
    with pytest.raises(NotImplementedError, match="batched"):
        linear.cg(batched, wb, x)
    with pytest.raises(ValueError, match="Unable to create LinearOperator"):
        linear.aslinearoperator(np.eye(3))


def test_warp_optim_linear_imports_through_the_alias():
    code = textwrap.dedent("""
        import adjit
        adjit.alias_warp()
        import warp as wp
        import warp.optim.linear
        from warp.optim.linear import cg, LinearOperator
        print(cg is adjit.optim_linear.cg, wp.optim.linear is adjit.optim_linear)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
