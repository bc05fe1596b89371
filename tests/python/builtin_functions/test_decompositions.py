"""svd3, svd2, eig3 and qr3 (Warp's matrix decompositions): forward values
against numpy and Warp's documented conventions, float32 and float64, both
call forms; reverse and forward derivatives against float64 central finite
differences; degenerate inputs; and bad calls."""
import inspect

import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

rng = np.random.default_rng(12)

#: (mat33, vec3, mat22, vec2) by dtype name
TYPES = {"float32": (adjit.mat33, adjit.vec3, adjit.mat22, adjit.vec2),
         "float64": (adjit.mat33d, adjit.vec3d, adjit.mat22d, adjit.vec2d)}
#: relative accuracy wanted of the forward values, by dtype name
TOL = {"float32": 2e-6, "float64": 1e-14}


def _decompose_kernel(m33, v3, m22, v2):
    @adjit.kernel
    def decompose(a: adjit.array(dtype=m33), b: adjit.array(dtype=m22),
                  u: adjit.array(dtype=m33), s: adjit.array(dtype=v3), v: adjit.array(dtype=m33),
                  q: adjit.array(dtype=m33), d: adjit.array(dtype=v3),
                  qq: adjit.array(dtype=m33), r: adjit.array(dtype=m33),
                  u2: adjit.array(dtype=m22), s2: adjit.array(dtype=v2), v2_: adjit.array(dtype=m22)):
        i = adjit.tid()
        U, sigma, V = adjit.svd3(a[i])
        u[i] = U
        s[i] = sigma
        v[i] = V
        Q, D = adjit.eig3(a[i] + adjit.transpose(a[i]))
        q[i] = Q
        d[i] = D
        Qr, R = adjit.qr3(a[i])
        qq[i] = Qr
        r[i] = R
        U2, sigma2, V2 = adjit.svd2(b[i])
        u2[i] = U2
        s2[i] = sigma2
        v2_[i] = V2
    return decompose


DECOMPOSE = {name: _decompose_kernel(*types) for name, types in TYPES.items()}


def _special_matrices():
    """Degenerate cases: zero, identity, diagonal (distinct, repeated,
    negative), rank 1 and 2, a permutation, a reflection."""
    e = np.eye(3)
    return np.array([np.zeros((3, 3)), e, np.diag([1.0, 2.0, 3.0]), np.diag([2.0, 2.0, 1.0]), np.diag([-1.0, 3.0, 0.5]),
                     np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]), np.diag([4.0, 1.0, 0.0]), e[[2, 0, 1]],
                     np.diag([1.0, 1.0, -1.0])])


def _matrices(n):
    """Random 3x3 and 2x2 matrices, some ill-conditioned, after the special ones."""
    special = _special_matrices()
    a = rng.standard_normal((n, 3, 3))
    a[: len(special)] = special
    a[len(special)::5] *= rng.uniform(1e-3, 1e3, size=(len(a[len(special)::5]), 1, 1))  # scales
    a[len(special) + 1::5] = a[len(special) + 1::5] @ np.diag([1.0, 1e-2, 1e-3])  # ill-conditioned
    b = rng.standard_normal((n, 2, 2))
    b[:4] = [np.zeros((2, 2)), np.eye(2), np.diag([1.0, -3.0]), np.outer([1.0, 2.0], [3.0, -1.0])]
    return a, b


def _run(dtype, a, b):
    m33, v3, m22, v2 = TYPES[dtype]
    n = len(a)
    outs = [adjit.zeros(n, dtype=t) for t in (m33, v3, m33, m33, v3, m33, m33, m22, v2, m22)]
    adjit.launch(DECOMPOSE[dtype], dim=n, inputs=[adjit.array(a, dtype=m33), adjit.array(b, dtype=m22)],
                 outputs=outs)
    return [o.numpy().astype(np.float64) for o in outs]


def _transposed(m):
    return np.swapaxes(m, -1, -2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_decompositions_match_numpy_and_warps_conventions(dtype):
    a, b = _matrices(400)
    a32, b32 = a.astype(dtype).astype(np.float64), b.astype(dtype).astype(np.float64)  # the inputs as given
    u, s, v, q, d, qq, r, u2, s2, v2 = _run(dtype, a, b)
    for out in (u, s, v, q, d, qq, r, u2, s2, v2):
        assert np.isfinite(out).all()
    tol = TOL[dtype]
    scale = np.linalg.norm(a32, 2, axis=(1, 2))[:, None, None]
    eye3, eye2 = np.eye(3), np.eye(2)

    # svd3: A = U diag(sigma) V^T, U and V rotations, |sigma| sorted decreasing, the
    # first two >= 0, the last of det A's sign (Warp's convention).
    assert np.abs(u @ (s[:, :, None] * _transposed(v)) - a32).max(axis=(1, 2)).max() <= 8 * tol * scale.max()
    assert (np.abs(u @ (s[:, :, None] * _transposed(v)) - a32) <= 8 * tol * scale).all()
    for m in (u, v):
        assert np.abs(m @ _transposed(m) - eye3).max() <= 8 * tol
        assert np.abs(np.linalg.det(m) - 1).max() <= 8 * tol
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(a32, compute_uv=False), rtol=0, atol=8 * tol * scale.max())
    assert (np.abs(s - np.linalg.svd(a32, compute_uv=False)
                   * np.stack([np.ones(len(a)), np.ones(len(a)), np.sign(np.linalg.det(a32))], 1))
            <= 8 * tol * scale[:, :, 0]).all()
    assert (s[:, :2] >= 0).all() and (np.abs(s[:, :-1]) >= np.abs(s[:, 1:])).all()

    # eig3 of the symmetric A + A^T: (A + A^T) Q = Q diag(d), Q a rotation, d ascending.
    sym = a32 + _transposed(a32)
    assert (np.abs(sym @ q - q * d[:, None, :]) <= 16 * tol * scale).all()
    assert np.abs(q @ _transposed(q) - eye3).max() <= 8 * tol
    assert np.abs(np.linalg.det(q) - 1).max() <= 8 * tol
    assert (np.abs(d - np.linalg.eigvalsh(sym)) <= 16 * tol * scale[:, :, 0]).all()

    # qr3: A = Q R, Q a rotation, R upper triangular (exactly), R[0, 0], R[1, 1] >= 0.
    assert (np.abs(qq @ r - a32) <= 8 * tol * scale).all()
    assert np.abs(qq @ _transposed(qq) - eye3).max() <= 8 * tol
    assert np.abs(np.linalg.det(qq) - 1).max() <= 8 * tol
    assert (np.tril(r, -1) == 0).all() and (r[:, 0, 0] >= 0).all() and (r[:, 1, 1] >= 0).all()
    full_rank = np.abs(np.linalg.det(a32)) > 1e-3 * scale[:, 0, 0] ** 3
    np.testing.assert_array_equal(np.sign(r[full_rank, 2, 2]), np.sign(np.linalg.det(a32[full_rank])))

    # svd2: sigma >= 0 sorted decreasing, V a rotation, det U = sign(det A) (as Warp).
    scale2 = np.linalg.norm(b32, 2, axis=(1, 2))[:, None, None]
    assert (np.abs(u2 @ (s2[:, :, None] * _transposed(v2)) - b32) <= 8 * tol * scale2).all()
    for m in (u2, v2):
        assert np.abs(m @ _transposed(m) - eye2).max() <= 8 * tol
    assert (np.abs(s2 - np.linalg.svd(b32, compute_uv=False)) <= 8 * tol * scale2[:, :, 0]).all()
    assert (s2 >= 0).all() and (s2[:, 0] >= s2[:, 1]).all()
    assert np.abs(np.linalg.det(v2) - 1).max() <= 8 * tol
    negative = np.linalg.det(b32) < 0
    np.testing.assert_allclose(np.linalg.det(u2), np.where(negative, -1.0, 1.0), atol=8 * tol)


def test_degenerate_inputs_give_exact_simple_factors():
    """Zero and diagonal inputs: no rotation where none is needed, no NaN."""
    a, b = _matrices(12)
    u, s, v, q, d, qq, r, u2, s2, v2 = _run("float64", a, b)
    eye = np.eye(3)
    np.testing.assert_array_equal(u[0], eye)
    np.testing.assert_array_equal(s[0], 0)
    np.testing.assert_array_equal(v[0], eye)
    np.testing.assert_array_equal(qq[0], eye)
    np.testing.assert_array_equal(r[0], 0)
    np.testing.assert_array_equal(q[0], eye)
    np.testing.assert_array_equal(d[0], 0)
    np.testing.assert_array_equal(s[1], 1)
    np.testing.assert_array_equal(d[1], 2)
    np.testing.assert_array_equal(s[2], [3, 2, 1])
    np.testing.assert_array_equal(d[2], [2, 4, 6])
    np.testing.assert_array_equal(s2[0], 0)
    np.testing.assert_array_equal(u2[0], np.eye(2))
    np.testing.assert_array_equal(s2[1], 1)
    np.testing.assert_array_equal(s2[2], [3, 1])


def test_warps_documented_examples():
    """The outputs printed in Warp 1.19's doc strings of svd3, svd2 and qr3."""
    f = np.array([[2.598076, -1.0, 0.0], [1.5, 1.732051, 0.0], [0.0, 0.0, -1.0]])
    u, sigma, v = adjit.svd3(adjit.mat33d(*f.ravel()))
    np.testing.assert_allclose(sigma, [3.0, 2.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(u @ v.T, [[0.866, -0.5, 0.0], [0.5, 0.866, 0.0], [0.0, 0.0, 1.0]], atol=5e-4)
    u, sigma, v = adjit.svd2(adjit.mat22d(3.0, 0.0, 4.0, 5.0))
    np.testing.assert_allclose(sigma, [6.708, 2.236], atol=5e-4)
    np.testing.assert_allclose(u @ v.T, [[0.894, -0.447], [0.447, 0.894]], atol=5e-4)
    q, r = adjit.qr3(adjit.mat33d(1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0))
    np.testing.assert_allclose(q, [[0.707, 0.408, 0.577], [0.707, -0.408, -0.577], [0.0, 0.816, -0.577]], atol=5e-4)
    np.testing.assert_allclose(np.diag(r), [1.414, 1.225, -1.155], atol=5e-4)
    s = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 1.0], [2.0, 1.0, 5.0]])
    q, d = adjit.eig3(adjit.mat33d(*s.ravel()))
    np.testing.assert_allclose(q @ np.diag(d) @ q.T, s, atol=1e-12)


@adjit.kernel
def written_forms(a: adjit.array(dtype=adjit.mat33d), b: adjit.array(dtype=adjit.mat22d),
                  y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    U = adjit.mat33d()
    sigma = adjit.vec3d()
    V = adjit.mat33d()
    adjit.svd3(a[i], U, sigma, V)  # writes U, sigma and V, as Warp
    U1, sigma1, V1 = adjit.svd3(a[i])
    Q = adjit.mat33d()
    d = adjit.vec3d()
    adjit.eig3(a[i], Q, d)
    Q1, d1 = adjit.eig3(a[i])
    Qr = adjit.mat33d()
    R = adjit.mat33d()
    adjit.qr3(a[i], Qr, R)
    Qr1, R1 = adjit.qr3(a[i])
    U2 = adjit.mat22d()
    sigma2 = adjit.vec2d()
    V2 = adjit.mat22d()
    adjit.svd2(b[i], U2, sigma2, V2)
    U3, sigma3, V3 = adjit.svd2(b[i])
    differences = adjit.ddot(U - U1, U - U1) + adjit.length_sq(sigma - sigma1) + adjit.ddot(V - V1, V - V1) \
        + adjit.ddot(Q - Q1, Q - Q1) + adjit.length_sq(d - d1) + adjit.ddot(Qr - Qr1, Qr - Qr1) \
        + adjit.ddot(R - R1, R - R1) + adjit.ddot(U2 - U3, U2 - U3) + adjit.length_sq(sigma2 - sigma3) \
        + adjit.ddot(V2 - V3, V2 - V3)
    y[2 * i] = differences
    y[2 * i + 1] = adjit.length_sq(sigma)


def test_the_writing_form_gives_the_returned_values():
    a, b = _matrices(16)
    y = adjit.zeros(32, dtype=adjit.float64)
    adjit.launch(written_forms, dim=16, inputs=[adjit.array(a, dtype=adjit.mat33d), adjit.array(b, dtype=adjit.mat22d)],
                 outputs=[y])
    np.testing.assert_array_equal(y.numpy()[0::2], 0)
    np.testing.assert_allclose(y.numpy()[1::2], (np.linalg.svd(a, compute_uv=False) ** 2).sum(1), rtol=1e-13)


# --- derivatives ------------------------------------------------------------------------------------

@adjit.kernel
def svd3_parts(a: adjit.array(dtype=adjit.mat33d), u: adjit.array(dtype=adjit.mat33d),
               s: adjit.array(dtype=adjit.vec3d), v: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    U, sigma, V = adjit.svd3(a[i])
    u[i] = U
    s[i] = sigma
    v[i] = V


@adjit.kernel
def eig3_parts(a: adjit.array(dtype=adjit.mat33d), q: adjit.array(dtype=adjit.mat33d),
               d: adjit.array(dtype=adjit.vec3d)):
    i = adjit.tid()
    Q = adjit.mat33d()
    D = adjit.vec3d()
    adjit.eig3(a[i], Q, D)
    q[i] = Q
    d[i] = D


@adjit.kernel
def qr3_parts(a: adjit.array(dtype=adjit.mat33d), q: adjit.array(dtype=adjit.mat33d),
              r: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    Q, R = adjit.qr3(a[i])
    q[i] = Q
    r[i] = R


@adjit.kernel
def svd2_parts(a: adjit.array(dtype=adjit.mat22d), u: adjit.array(dtype=adjit.mat22d),
               s: adjit.array(dtype=adjit.vec2d), v: adjit.array(dtype=adjit.mat22d)):
    i = adjit.tid()
    U, sigma, V = adjit.svd2(a[i])
    u[i] = U
    s[i] = sigma
    v[i] = V


def _rotation3():
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    return q * np.sign(np.linalg.det(q))


def _well_conditioned(n, size=3, symmetric=False):
    """Random matrices with well separated singular values (or eigenvalues),
    one of negative determinant."""
    out = []
    for k in range(n):
        spectrum = np.array([3.0, 1.8, 0.7][:size]) * rng.uniform(0.9, 1.1, size)
        if symmetric:
            spectrum[1] *= -1
            r = _rotation3()
            out.append(r @ np.diag(spectrum) @ r.T)
            continue
        if k == 1:
            spectrum[-1] *= -1
        r1, r2 = (_rotation3()[:size, :size], _rotation3()[:size, :size]) if size == 3 else (
            _rotation2(), _rotation2())
        out.append(r1 @ np.diag(spectrum) @ r2.T)
    return np.array(out)


def _rotation2():
    t = rng.uniform(-np.pi, np.pi)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


CASES = {  # kernel, matrix type, input matrices, the output types
    "svd3": (svd3_parts, adjit.mat33d, lambda: _well_conditioned(3), (adjit.mat33d, adjit.vec3d, adjit.mat33d)),
    "eig3": (eig3_parts, adjit.mat33d, lambda: _well_conditioned(3, symmetric=True) + 0.05 * rng.standard_normal(
        (3, 3, 3)), (adjit.mat33d, adjit.vec3d)),
    "qr3": (qr3_parts, adjit.mat33d, lambda: _well_conditioned(3), (adjit.mat33d, adjit.mat33d)),
    "svd2": (svd2_parts, adjit.mat22d, lambda: _well_conditioned(3, size=2), (adjit.mat22d, adjit.vec2d, adjit.mat22d)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_mode_matches_finite_differences(name):
    kernel, mt, make, out_types = CASES[name]
    a = make()
    outs = [adjit.zeros(len(a), dtype=t, requires_grad=True) for t in out_types]
    check_gradients(kernel, len(a), [adjit.array(a, dtype=mt, requires_grad=True)], outs)


@pytest.mark.parametrize("name", list(CASES))
def test_forward_mode_matches_finite_differences(name):
    kernel, mt, make, out_types = CASES[name]
    a = make()
    n = len(a)
    da = rng.standard_normal(a.shape)

    def launch(x):
        outs = [adjit.zeros(n, dtype=t) for t in out_types]
        adjit.launch(kernel, dim=n, inputs=[adjit.array(x, dtype=mt)], outputs=outs)
        return [o.numpy() for o in outs]

    eps = 1e-6
    plus, minus = launch(a + eps * da), launch(a - eps * da)
    tangents = adjit.jvp(kernel, n, [adjit.array(a, dtype=mt)], [da],
                         [adjit.zeros(n, dtype=t) for t in out_types])
    for t, p, m in zip(tangents, plus, minus):
        np.testing.assert_allclose(t.numpy(), (p - m) / (2 * eps), rtol=1e-6, atol=1e-7)


@adjit.kernel
def decomposition_loss(a: adjit.array(dtype=adjit.mat33d), b: adjit.array(dtype=adjit.mat22d),
                       y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    U, sigma, V = adjit.svd3(a[i])
    Q, d = adjit.eig3(a[i])
    Qr, R = adjit.qr3(a[i])
    U2, sigma2, V2 = adjit.svd2(b[i])
    y[i] = adjit.ddot(U, V) + adjit.dot(sigma, adjit.vec3d(1.0, 2.0, 3.0)) + adjit.trace(Q) + adjit.length_sq(d) \
        + adjit.ddot(Qr, R) + adjit.ddot(U2, V2) + adjit.length_sq(sigma2)


def test_derivatives_are_finite_at_degenerate_inputs():
    """Zero, identity, diagonal, repeated and rank-deficient inputs: the
    derivatives are not unique there, but neither mode gives NaN or inf."""
    a, b = _matrices(12)
    n = len(a)
    xa = adjit.array(a, dtype=adjit.mat33d, requires_grad=True)
    xb = adjit.array(b, dtype=adjit.mat22d, requires_grad=True)
    y = adjit.zeros(n, dtype=adjit.float64, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(decomposition_loss, dim=n, inputs=[xa, xb], outputs=[y])
    tape.backward(grads={y: adjit.array(np.ones(n), dtype=adjit.float64)})
    assert np.isfinite(xa.grad.numpy()).all() and np.isfinite(xb.grad.numpy()).all()
    (dy,) = adjit.jvp(decomposition_loss, n, [adjit.array(a, dtype=adjit.mat33d), adjit.array(b, dtype=adjit.mat22d)],
                      [rng.standard_normal(a.shape), rng.standard_normal(b.shape)],
                      [adjit.zeros(n, dtype=adjit.float64)])
    assert np.isfinite(dy.numpy()).all()


# --- bad calls ------------------------------------------------------------------------------------

def _bad_svd3(a: adjit.array(dtype=adjit.mat22d), y: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    U, s, V = adjit.svd3(a[i])  # bad: a 2x2 matrix
    y[i] = U


def _bad_eig3(a: adjit.array(dtype=adjit.mat33d), y: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    Q = adjit.mat33d()
    d = adjit.vec3()
    adjit.eig3(a[i], Q, d)  # bad: d is float32, A float64
    y[i] = Q


def _bad_qr3(a: adjit.array(dtype=adjit.mat33d), y: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    adjit.qr3(a[i], y[i], y[i])  # bad: array elements are not locals


def _bad_svd2(a: adjit.array(dtype=adjit.mat33d), y: adjit.array(dtype=adjit.mat33d)):
    i = adjit.tid()
    U, s, V = adjit.svd2(adjit.vec2d(1.0, 2.0))  # bad: a vector


@pytest.mark.parametrize("fn, in_type, words", [
    (_bad_svd3, adjit.mat22d, ["svd3() takes a float 3x3 matrix", "got mat22d"]),
    (_bad_eig3, adjit.mat33d, ["eig3() takes a float 3x3 matrix", "eig3(A, Q, d)", "got mat33d, mat33d, vec3"]),
    (_bad_qr3, adjit.mat33d, ["qr3() writes its argument 2", "local variable"]),
    (_bad_svd2, adjit.mat33d, ["svd2() takes a float 2x2 matrix", "got vec2d"]),
])
def test_bad_calls_name_the_kernel_line(fn, in_type, words):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelTypeError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(1, dtype=in_type)],
                     outputs=[adjit.zeros(1, dtype=adjit.mat33d)])
    message = str(e.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_decompositions.py:{line}:" in message, message
    for word in words:
        assert word in message, message


def test_float16_in_half_precision():
    a = np.array([[2.0, 1.0, 0.5], [0.3, -1.0, 2.0], [1.0, 1.0, 1.0]])
    u, sigma, v = (np.asarray(x, np.float64) for x in adjit.svd3(adjit.mat33h(*a.ravel())))
    np.testing.assert_allclose(u @ np.diag(sigma) @ v.T, a, atol=1e-2)
    np.testing.assert_allclose(sigma, np.linalg.svd(a, compute_uv=False) * [1, 1, -1], atol=1e-2)
    q, d = (np.asarray(x, np.float64) for x in adjit.eig3(adjit.mat33h(*(a + a.T).ravel())))
    np.testing.assert_allclose(d, np.linalg.eigvalsh(a + a.T), atol=2e-2)
    q, r = (np.asarray(x, np.float64) for x in adjit.qr3(adjit.mat33h(*a.ravel())))
    np.testing.assert_allclose(q @ r, a, atol=1e-2)
    u, sigma, v = (np.asarray(x, np.float64) for x in adjit.svd2(adjit.mat22h(1.0, 2.0, 3.0, 4.0)))
    np.testing.assert_allclose(sigma, np.linalg.svd([[1.0, 2.0], [3.0, 4.0]], compute_uv=False), atol=1e-2)


# --- eigenvalues and singular values where they repeat ---------------------------------------------

@adjit.kernel
def spectral_losses(a: adjit.array(dtype=adjit.mat33d), out: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    q, d = adjit.eig3(a[i])
    u, s, v = adjit.svd3(a[i])
    out[3 * i] = adjit.dot(d, d)                 # trace(A^2): gradient 2A (A symmetric)
    out[3 * i + 1] = d[0] + d[1] + d[2]          # trace(A): gradient I
    out[3 * i + 2] = s[0] + s[1] + s[2]          # sigma[2] has det A's sign (Warp's): gradient U V^T


def test_eigen_and_singular_value_gradients_are_exact_where_they_repeat():
    # Through the Jacobi rotations these gradients were ~1e63 at repeated eigenvalues (a
    # rotation angle's derivative divides by their difference); Hellmann-Feynman gives
    # q q^T and u v^T, exact also there.
    rng = np.random.default_rng(0)
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    cases = [rot @ np.diag([2.0, 2.0, 5.0]) @ rot.T, np.eye(3), np.diag([1.0, 3.0, 3.0]),
             rot @ np.diag([-1.0, 0.5, 4.0]) @ rot.T]
    a = adjit.array(np.array(cases), dtype=adjit.mat33d, requires_grad=True)
    out = adjit.zeros(3 * len(cases), dtype=adjit.float64, requires_grad=True)
    for k in range(3):
        tape = adjit.Tape()
        with tape:
            adjit.launch(spectral_losses, len(cases), inputs=[a], outputs=[out])
        seed = np.zeros(3 * len(cases))
        seed[k::3] = 1.0
        tape.backward(grads={out: adjit.array(seed)})
        grad = a.grad.numpy()
        for m, g in zip(cases, grad):
            if k == 0:
                np.testing.assert_allclose(g, 2 * m, atol=1e-12)
            elif k == 1:
                np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
            else:
                u, _, vt = np.linalg.svd(m)
                np.testing.assert_allclose(g, u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(m))]) @ vt, atol=1e-9)
        tape.zero()


def test_eig3_of_a_float16_matrix_with_a_subnormal_eigenvalue():
    m33h = adjit.types.matrix((3, 3), adjit.float16)
    v3h = adjit.types.vector(3, adjit.float16)

    @adjit.kernel
    def eig_half(a: adjit.array(dtype=m33h), d: adjit.array(dtype=v3h)):
        q, dd = adjit.eig3(a[0])
        d[0] = dd

    d = adjit.zeros(1, dtype=v3h)
    adjit.launch(eig_half, 1, inputs=[adjit.array(np.diag([0.0, 1e-5, 1.0]).astype(np.float16)[None], dtype=m33h),
                                      d])
    np.testing.assert_array_equal(d.numpy()[0], np.array([0.0, 1e-5, 1.0], np.float16))


def test_hessian_vector_products_through_eigenvalues_are_refused():
    @adjit.kernel
    def eig_energy(a: adjit.array(dtype=adjit.mat33d), e: adjit.array(dtype=adjit.float64)):
        q, d = adjit.eig3(a[0])
        e[0] = adjit.dot(d, d)

    def run(a):
        e = adjit.zeros(1, dtype=adjit.float64, requires_grad=True)
        adjit.launch(eig_energy, 1, inputs=[a], outputs=[e])
        return e

    a = adjit.array(np.diag([1.0, 2.0, 3.0])[None], dtype=adjit.mat33d, requires_grad=True)
    with pytest.raises(adjit.GradientError, match=r"test_decompositions.py:\d+: eig3\(\) has exact first "
                                                  r"derivatives only"):
        adjit.autograd.hvp(run, [a], [np.ones((1, 3, 3))])
