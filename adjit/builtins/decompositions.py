"""Matrix decompositions: svd3, svd2, eig3, qr3 (each also in Warp's form
that writes its results into the arguments after the matrix).

Each is a fixed number of plane rotations built from arith/math ops, so its
derivatives (reverse and forward) are those of the rotations the C++ passes
differentiate: exact at convergence for distinct singular values /
eigenvalues. Matrices are lists of rows of scalar SSA values here.
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .helpers import elements, matrix_from
from .registry import add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
scf = deferred_import("mlir.dialects.scf")
vector_d = deferred_import("mlir.dialects.vector")
adjit_d = deferred_import("adjit.dialects.adjit")
values = deferred_import("adjit.compiler.values")

#: Jacobi sweeps (each rotates the pairs (0, 1), (0, 2), (1, 2) of a 3x3
#: matrix once) by bit width. The off-diagonal part falls quadratically: over
#: random, ill-conditioned and nearly repeated spectra, at most 2.4e-6 of the
#: matrix's size is left after 3 sweeps and rounding level after 4; float64
#: takes a fifth as margin (its rounding level is lower), float16 needs 3.
_JACOBI_SWEEPS = {16: 3, 32: 4, 64: 5}
_PAIRS3 = ((0, 1), (0, 2), (1, 2))


class _Scalar:
    """Scalar float arithmetic of one dtype on SSA values."""

    def __init__(self, dtype):
        self.dtype = dtype

    def c(self, v):
        return values.constant(self.dtype, v)

    def add(self, a, b):
        return arith.AddFOp(a, b).result

    def sub(self, a, b):
        return arith.SubFOp(a, b).result

    def mul(self, a, b):
        return arith.MulFOp(a, b).result

    def div(self, a, b):
        return arith.DivFOp(a, b).result

    def neg(self, a):
        return arith.NegFOp(a).result

    def abs(self, a):
        return math.AbsFOp(a).result

    def max(self, a, b):
        return arith.MaximumFOp(a, b).result

    def sqrt(self, a):
        return math.SqrtOp(a).result

    def select(self, cond, a, b):
        return arith.SelectOp(cond, a, b).result

    def less(self, a, b):
        return arith.CmpFOp(arith.CmpFPredicate.OLT, a, b).result

    def dot(self, a, b):
        total = self.mul(a[0], b[0])
        for x, y in zip(a[1:], b[1:]):
            total = self.add(total, self.mul(x, y))
        return total


def _hypot_parts(s: _Scalar, a, b):
    """(a / r, b / r, r) for r = hypot(a, b), scaled by max(|a|, |b|) so that
    no square overflows or underflows; (1, 0, 0) where a = b = 0, with finite
    derivatives there (the divisions see 1 where the guard is taken)."""
    m = s.max(s.abs(a), s.abs(b))
    zero = arith.CmpFOp(arith.CmpFPredicate.OEQ, m, s.c(0.0)).result
    # divided, not multiplied by 1 / m: that reciprocal overflows for a
    # subnormal m (float16 below 6e-5), and 0 * inf is NaN
    safe = s.select(zero, s.c(1.0), m)
    an, bn = s.div(a, safe), s.div(b, safe)
    # in [1, sqrt 2]; sqrt sees 1 where guarded, so its derivative stays finite
    rn = s.sqrt(s.select(zero, s.c(1.0), s.add(s.mul(an, an), s.mul(bn, bn))))
    cos, sin = s.div(an, rn), s.div(bn, rn)
    return s.select(zero, s.c(1.0), cos), s.select(zero, s.c(0.0), sin), s.mul(m, rn)


def _jacobi_rotation(s: _Scalar, app, aqq, apq):
    """(c, s) of the rotation J (J_pp = J_qq = c, J_pq = s, J_qp = -s) with
    (J^T S J)_pq = 0 for the symmetric S = [[app, apq], [apq, aqq]], of angle
    t in [-pi/4, pi/4]: cos 2t = |d| / r, sin 2t = sign(d) h / r for
    d = aqq - app, h = 2 apq, r = hypot(d, h) (no rotation where d = h = 0);
    c = sqrt((1 + cos 2t) / 2) >= sqrt(1/2), s = sin 2t / (2 c)."""
    d, h = s.sub(aqq, app), s.mul(s.c(2.0), apq)
    cos2, sin2, _ = _hypot_parts(s, s.abs(d), h)
    sin2 = s.select(s.less(d, s.c(0.0)), s.neg(sin2), sin2)
    c = s.sqrt(s.mul(s.add(s.c(1.0), cos2), s.c(0.5)))
    return c, s.div(sin2, s.mul(s.c(2.0), c))


def _rotate_columns(s: _Scalar, m, p, q, c, sn):
    """M J for the Jacobi rotation J of the pair (p, q): column p becomes
    c m_p - s m_q, column q becomes s m_p + c m_q."""
    m = [list(row) for row in m]
    for row in m:
        x, y = row[p], row[q]
        row[p] = s.sub(s.mul(c, x), s.mul(sn, y))
        row[q] = s.add(s.mul(sn, x), s.mul(c, y))
    return m


def _transposed_rows(m):
    return [list(col) for col in zip(*m)]


def _identity_rows(s: _Scalar, n):
    return [[s.c(1.0 if r == c else 0.0) for c in range(n)] for r in range(n)]


def _jacobi_loop(s: _Scalar, mats, types, sweep):
    """``sweep`` (lists of rows -> lists of rows) run _JACOBI_SWEEPS times in
    an scf.for carrying the 3x3 matrices ``mats``."""
    mlir_mats = [matrix_from(m, t) for m, t in zip(mats, types)]
    index = ir.IndexType.get()
    bound = lambda v: arith.ConstantOp(index, v).result  # noqa: E731
    loop = scf.ForOp(bound(0), bound(_JACOBI_SWEEPS[s.dtype.bits]), bound(1), mlir_mats)
    with ir.InsertionPoint(loop.body):
        inner = [elements(v, t.rows, t.cols) for v, t in zip(loop.inner_iter_args, types)]
        scf.YieldOp([matrix_from(m, t) for m, t in zip(sweep(*inner), types)])
    return [elements(v, t.rows, t.cols) for v, t in zip(loop.results, types)]


def _swap_columns_if(s: _Scalar, cond, mats, i, j):
    """Where ``cond``: column i of each matrix becomes column j, and column j
    minus column i (a rotation by pi/2, keeping the determinant's sign)."""
    out = []
    for m in mats:
        m = [list(row) for row in m]
        for row in m:
            x, y = row[i], row[j]
            row[i] = s.select(cond, y, x)
            row[j] = s.select(cond, s.neg(x), y)
        out.append(m)
    return out


def _one_sided_jacobi(s: _Scalar, a, n, mt):
    """(B, V) with B = A V, V a rotation and the columns of B orthogonal
    (Hestenes: each rotation is the Jacobi rotation of the Gram matrix of
    two columns), B's columns sorted by decreasing length."""
    pairs = _PAIRS3 if n == 3 else ((0, 1),)

    def sweep(b, v):
        for p, q in pairs:
            bt = _transposed_rows(b)
            c, sn = _jacobi_rotation(s, s.dot(bt[p], bt[p]), s.dot(bt[q], bt[q]), s.dot(bt[p], bt[q]))
            b, v = _rotate_columns(s, b, p, q, c, sn), _rotate_columns(s, v, p, q, c, sn)
        return b, v

    if n == 3:
        b, v = _jacobi_loop(s, [a, _identity_rows(s, 3)], [mt, mt], sweep)
    else:  # one rotation diagonalizes a 2x2 Gram matrix; the second mops up rounding
        b, v = sweep(*sweep(a, _identity_rows(s, 2)))
    for i, j in (((0, 1), (1, 2), (0, 1)) if n == 3 else ((0, 1),)):
        bt = _transposed_rows(b)
        b, v = _swap_columns_if(s, s.less(s.dot(bt[i], bt[i]), s.dot(bt[j], bt[j])), [b, v], i, j)
    return b, v


def _givens_qr(s: _Scalar, a, n):
    """(Q, R) with A = Q R, Q a rotation (a product of Givens rotations) and
    R upper triangular with R_kk >= 0 for k < n - 1 (R's last diagonal entry
    has the sign of det A)."""
    r, q = [list(row) for row in a], _identity_rows(s, n)
    for k, i in (_PAIRS3 if n == 3 else ((0, 1),)):
        c, sn, _ = _hypot_parts(s, r[k][k], r[i][k])
        rk, ri = r[k], r[i]
        r[k] = [s.add(s.mul(c, x), s.mul(sn, y)) for x, y in zip(rk, ri)]
        r[i] = [s.sub(s.mul(c, y), s.mul(sn, x)) for x, y in zip(rk, ri)]
        for row in q:
            x, y = row[k], row[i]
            row[k] = s.add(s.mul(c, x), s.mul(sn, y))
            row[i] = s.sub(s.mul(c, y), s.mul(sn, x))
    # Below the diagonal: -s r_kk + c r_ik = 0, exactly, and so is its derivative.
    return q, [[s.c(0.0) if col < k else x for col, x in enumerate(row)] for k, row in enumerate(r)]


#: Builtins whose value outputs (eigenvalues, singular values) are computed
#: so that their first derivatives are exact also where those values repeat
#: (Hellmann-Feynman: through the decomposition's vectors held constant);
#: their second derivatives would need the vectors' derivatives, so a
#: forward-over-reverse (Hessian) kernel calling one is a GradientError.
FIRST_ORDER_ONLY = ("eig3", "svd3", "svd2")


def _frozen(rows):
    """The entries of a matrix (rows of SSA scalars) through which no gradient flows."""
    return [[adjit_d.StopGradientOp(x.type, x).result for x in row] for row in rows]


def _svd(vals, n, mt):
    """(U, sigma, V) of an n x n matrix: one-sided Jacobi gives A V = B with
    orthogonal columns sorted by length, and the Givens QR of B gives U and
    sigma = diag(R). Each sigma_k gets the derivative of u_k^T A v_k with U
    and V held constant (its value up to rounding): u_k v_k^T, exact
    also for repeated singular values (through the rotations it is not)."""
    s = _Scalar(mt.dtype)
    b, v = _one_sided_jacobi(s, elements(vals[0], n, n), n, mt)
    u, r = _givens_qr(s, b, n)
    sigma = [r[k][k] for k in range(n)]
    if n == 2:  # both nonnegative: U takes the sign of det A
        negative = s.less(sigma[1], s.c(0.0))
        sigma[1] = s.select(negative, s.neg(sigma[1]), sigma[1])
        for row in u:
            row[1] = s.select(negative, s.neg(row[1]), row[1])
    a = elements(vals[0], n, n)
    fu, fv = _frozen(u), _frozen(v)
    sigma = [_with_derivative_of(s, sigma[k], _quadratic_form(s, [row[k] for row in fu], a,
                                                               [row[k] for row in fv], n)) for k in range(n)]
    return (matrix_from(u, mt), vector_d.FromElementsOp(T.vector(n, mt.dtype).mlir(), sigma).result,
            matrix_from(v, mt))


def _with_derivative_of(s, value, form):
    """``value`` (bit for bit) with the derivatives of ``form`` (equal to it up
    to rounding): stop(value) + (form - stop(form))."""
    def stop(x):
        return adjit_d.StopGradientOp(x.type, x).result
    return s.add(stop(value), s.sub(form, stop(form)))


def _quadratic_form(s, x, a, y, n):
    """x^T A y of SSA scalars."""
    total = None
    for r in range(n):
        row = None
        for c in range(n):
            term = s.mul(a[r][c], y[c])
            row = term if row is None else s.add(row, term)
        term = s.mul(x[r], row)
        total = term if total is None else s.add(total, term)
    return total


def _emit_eig3(vals, types, result):
    """Cyclic Jacobi on (A + A^T) / 2: S <- J^T S J, Q <- Q J, then the
    eigenvalues diag(S) sorted ascending with Q's columns. Each eigenvalue is
    given the derivative of q_k^T S q_k with Q held constant (its value is
    the same up to rounding): q_k q_k^T, exact also for repeated eigenvalues
    (through the rotations it is not)."""
    mt = types[0]
    s = _Scalar(mt.dtype)
    e = elements(vals[0], 3, 3)
    sym = [[s.mul(s.c(0.5), s.add(e[r][c], e[c][r])) for c in range(3)] for r in range(3)]

    def sweep(a, q):
        for p, r in _PAIRS3:
            c, sn = _jacobi_rotation(s, a[p][p], a[r][r], a[p][r])
            a = _transposed_rows(_rotate_columns(s, _transposed_rows(_rotate_columns(s, a, p, r, c, sn)),
                                                 p, r, c, sn))
            q = _rotate_columns(s, q, p, r, c, sn)
        return a, q

    a, q = _jacobi_loop(s, [sym, _identity_rows(s, 3)], [mt, mt], sweep)
    d = [a[k][k] for k in range(3)]
    for i, j in ((0, 1), (1, 2), (0, 1)):
        swap = s.less(d[j], d[i])
        d[i], d[j] = s.select(swap, d[j], d[i]), s.select(swap, d[i], d[j])
        (q,) = _swap_columns_if(s, swap, [q], i, j)
    fq = _frozen(q)
    d = [_with_derivative_of(s, d[k], _quadratic_form(s, [row[k] for row in fq], sym, [row[k] for row in fq], 3))
         for k in range(3)]
    out = (matrix_from(q, mt), vector_d.FromElementsOp(T.vector(3, mt.dtype).mlir(), d).result)
    return (out, []) if len(vals) == 1 else (None, list(out))


def _emit_svd(n):
    def emit(vals, types, result):
        out = _svd(vals, n, types[0])
        return (out, []) if len(vals) == 1 else (None, list(out))
    return emit


def _emit_qr3(vals, types, result):
    mt = types[0]
    q, r = _givens_qr(_Scalar(mt.dtype), elements(vals[0], 3, 3), 3)
    out = (matrix_from(q, mt), matrix_from(r, mt))
    return (out, []) if len(vals) == 1 else (None, list(out))


def _infer_decomposition(name, n, parts, names):
    """``name(A)`` returns the parts (of A's scalar type); ``name(A, *outs)``
    writes them (Warp's two forms)."""
    def infer(args):
        a = args[0] if args else None
        if isinstance(a, T.MatrixType) and a.shape == (n, n) and a.dtype.is_float:
            want = tuple(part(a.dtype) for part in parts)
            if len(args) == 1:
                return want
            if tuple(args[1:]) == want:
                return None
        outs = [f"{out} ({part(T.float32)})" for out, part in zip(names, parts)]
        raise TypeError(f"{name}() takes a float {n}x{n} matrix: {', '.join(names)} = {name}(A), or "
                        f"{name}(A, {', '.join(names)}) writing {', '.join(outs[:-1])} and {outs[-1]} of A's "
                        f"scalar type; got {', '.join(map(str, args)) or 'no arguments'}")
    return infer


_M33, _V3 = (lambda d: T.matrix((3, 3), d)), (lambda d: T.vector(3, d))
_M22, _V2 = (lambda d: T.matrix((2, 2), d)), (lambda d: T.vector(2, d))

add_builtin("svd3", "U, sigma, V = svd3(A): the singular value decomposition A = U diag(sigma) V^T of a 3x3 "
            "matrix; svd3(A, U, sigma, V) writes them (as Warp). U and V are rotations (determinant +1); sigma is "
            "sorted by decreasing magnitude, sigma[0] and sigma[1] are >= 0 and sigma[2] has the sign of "
            "det A (Warp's convention). One-sided Jacobi (4 sweeps in float32, 5 in float64), then a Givens "
            "QR. Column pairs of U and V are determined up to a common sign; derivatives of U and V need "
            "distinct singular values, those of sigma are exact also where they repeat (first derivatives "
            "only: a Hessian through svd3 is a GradientError).",
            _infer_decomposition("svd3", 3, (_M33, _V3, _M33), ("U", "sigma", "V")), _emit_svd(3),
            rebinds=(1, 2, 3))
add_builtin("svd2", "U, sigma, V = svd2(A): the singular value decomposition A = U diag(sigma) V^T of a 2x2 "
            "matrix; svd2(A, U, sigma, V) writes them (as Warp). sigma >= 0, sorted decreasing; V is a rotation "
            "and U has the sign of det A as its determinant (as Warp). Column pairs of U and V are determined "
            "up to a common sign; derivatives of U and V need distinct singular values, those of sigma are "
            "exact also where they repeat (first derivatives only).",
            _infer_decomposition("svd2", 2, (_M22, _V2, _M22), ("U", "sigma", "V")), _emit_svd(2),
            rebinds=(1, 2, 3))
add_builtin("eig3", "Q, d = eig3(A): the eigen-decomposition A = Q diag(d) Q^T of a symmetric 3x3 matrix; "
            "eig3(A, Q, d) writes them (as Warp). Of (A + A^T) / 2 for a nonsymmetric A. d is sorted ascending "
            "(Warp leaves the order unspecified) and Q is a rotation (determinant +1) whose columns are the "
            "eigenvectors, each determined up to sign (with its partner column's). Cyclic Jacobi (4 sweeps in "
            "float32, 5 in float64); derivatives of Q need distinct eigenvalues, those of d are exact also where "
            "eigenvalues repeat (first derivatives only: a Hessian through eig3 is a GradientError).",
            _infer_decomposition("eig3", 3, (_M33, _V3), ("Q", "d")), _emit_eig3, rebinds=(1, 2))
add_builtin("qr3", "Q, R = qr3(A): the QR decomposition A = Q R of a 3x3 matrix; qr3(A, Q, R) writes them (as "
            "Warp). Q is a rotation (determinant +1, Warp's convention), R upper triangular with R[0, 0], "
            "R[1, 1] >= 0 and R[2, 2] of the sign of det A. Givens rotations; derivatives need a full-rank A.",
            _infer_decomposition("qr3", 3, (_M33, _M33), ("Q", "R")), _emit_qr3, rebinds=(1, 2))
