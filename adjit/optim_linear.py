"""Warp's ``warp.optim.linear`` iterative solvers (``cg``, ``cr``, ``gmres``)
with ``LinearOperator``, ``aslinearoperator`` and ``preconditioner``, run on
the host with numpy over CPU arrays.

The algorithms, tolerances and results follow Warp 1.19's: the absolute
tolerance is ``max(tol * |b|, atol)`` (defaults from the scalar type's
epsilon), the residual is checked every ``check_every`` iterations, and
``run=True`` returns ``(iterations, residual norm, absolute tolerance)``.
A ``LinearOperator``'s ``matvec(x, y, z, alpha, beta)`` computes
``z = alpha A x + beta y`` on adjit arrays, so custom operators may launch
kernels. Not supported yet (each a clear error): CUDA arrays, batched
operators (``batch_offsets``), ``run=False`` functors, ``check_every=0``
(device-side checks), ``restart=`` of cg/cr, and sparse (BSR) matrices
(adjit has no ``warp.sparse``).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from . import types as T
from .runtime.array import Array, _before_write, empty

__all__ = ["LinearOperator", "aslinearoperator", "preconditioner", "cg", "cr", "gmres"]


class LinearOperator:
    """A linear operator for the solvers: ``shape`` (rows, columns),
    ``dtype`` of its elements, ``device``, and ``matvec(x, y, z, alpha,
    beta)`` computing ``z = alpha A x + beta y`` (Warp's signature)."""

    def __init__(self, shape: tuple[int, int], dtype, device, matvec: Callable, batch_offsets=None,
                 max_batch_length: int | None = None):
        if max_batch_length is not None:
            if batch_offsets is None:
                raise ValueError("max_batch_length requires batch_offsets")
            if max_batch_length < 0:
                raise ValueError("max_batch_length must be non-negative")
        self._shape, self._dtype, self._device, self._matvec = tuple(shape), dtype, device, matvec
        self._batch_offsets, self._max_batch_length = batch_offsets, max_batch_length

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)
    matvec = property(lambda self: self._matvec)
    batch_offsets = property(lambda self: self._batch_offsets)
    max_batch_length = property(lambda self: self._max_batch_length)

    @property
    def scalar_type(self):
        return T.scalar_of(T.value_type_of(self._dtype))

    @property
    def batch_count(self) -> int:
        return 1 if self._batch_offsets is None else self._batch_offsets.shape[0] - 1


def _scalars(a: Array) -> np.ndarray:
    """The scalars of a contiguous CPU array, flattened (a view: writes go through)."""
    if str(a.device) != "cpu":
        raise NotImplementedError(f"warp.optim.linear: arrays on {a.device} are not supported yet (adjit solves on "
                                  "the host); copy them to the CPU first")
    buffer = a._buffer
    if not buffer.flags.c_contiguous:
        raise ValueError("warp.optim.linear: the arrays must be contiguous")
    return buffer.reshape(-1)


def _write(a: Array, values: np.ndarray) -> None:
    _before_write(a)
    _scalars(a)[...] = values


def _axpby(z: Array, alpha, ax: np.ndarray, beta, y: Array) -> None:
    """z = alpha * ax + beta * y (a zero factor's term is skipped, as Warp's kernels)."""
    dtype = _scalars(z).dtype
    out = np.zeros(_scalars(z).shape, dtype)
    if alpha != 0:
        out += dtype.type(alpha) * ax.astype(dtype, copy=False)
    if beta != 0:
        out += dtype.type(beta) * _scalars(y)
    _write(z, out)


def aslinearoperator(A, batch_offsets=None, max_batch_length: int | None = None) -> LinearOperator | None:
    """``A`` as a LinearOperator: a 2-d array is a dense matrix, a 1-d array
    a diagonal one (of scalars, or of vectors acting componentwise); a
    LinearOperator (or None) is returned as it is."""
    if A is None or isinstance(A, LinearOperator):
        return A
    if isinstance(A, Array) and A.ndim == 2 and isinstance(T.value_type_of(A.dtype), T.ScalarType):
        def dense_mv(x, y, z, alpha, beta):
            matrix = _scalars(A).reshape(A.shape)
            _axpby(z, alpha, matrix @ _scalars(x) if alpha != 0 else None, beta, y)
        return LinearOperator(A.shape, A.dtype, A.device, dense_mv, batch_offsets, max_batch_length)
    if isinstance(A, Array) and A.ndim == 1:
        def diag_mv(x, y, z, alpha, beta):
            _axpby(z, alpha, _scalars(A) * _scalars(x) if alpha != 0 else None, beta, y)
        return LinearOperator(A.shape, A.dtype, A.device, diag_mv, batch_offsets, max_batch_length)
    if type(A).__name__ == "BsrMatrix":
        raise NotImplementedError("aslinearoperator: sparse BSR matrices are not in adjit yet (no warp.sparse); "
                                  "wrap your product in a LinearOperator")
    raise ValueError(f"Unable to create LinearOperator from {A!r}")


def preconditioner(A, ptype: str = "diag") -> LinearOperator | None:
    """A preconditioner for ``A`` (a dense 2-d array): ``"diag"`` (Jacobi:
    the inverse diagonal, 1 where it is zero), ``"diag_abs"`` (of the
    absolute diagonal), ``"id"`` (None, no preconditioner); as Warp's."""
    if ptype == "id":
        return None
    if ptype not in ("diag", "diag_abs"):
        raise ValueError(f"Unsupported preconditioner type '{ptype}'")
    if not (isinstance(A, Array) and A.ndim == 2):
        if type(A).__name__ == "BsrMatrix":
            raise NotImplementedError("preconditioner: sparse BSR matrices are not in adjit yet (no warp.sparse)")
        raise ValueError("Unsupported source matrix type for building diagonal preconditioner")
    diag = np.diagonal(_scalars(A).reshape(A.shape)).copy()
    if ptype == "diag_abs":
        diag = np.abs(diag)
    one = diag.dtype.type(1)
    inverse = np.where(diag == 0, one, one / np.where(diag == 0, one, diag))
    inv_diag = empty(A.shape[0], dtype=A.dtype, device=A.device)
    _write(inv_diag, inverse)
    return aslinearoperator(inv_diag)


def _epsilon(scalar) -> float:
    return 1.0e-16 if scalar == T.float64 else 1.0e-4 if scalar == T.float16 else 1.0e-8


def _tolerances(scalar, tol, atol):
    eps = _epsilon(scalar)
    if tol is None and atol is None:
        tol = atol = eps ** 0.75
    elif tol is None:
        tol = atol
    elif atol is None:
        atol = tol
    return tol, max(atol, eps ** 2.25)


class _Setup:
    """What the three solvers share: operands checked, work arrays, the
    absolute tolerance and the iteration limit."""

    def __init__(self, who, A, b, x, tol, atol, maxiter, M, check_every, run, restart=None):
        self.A, self.M = aslinearoperator(A), aslinearoperator(M)
        for op in (self.A, self.M):
            if op is not None and op.batch_offsets is not None:
                raise NotImplementedError(f"{who}: batched operators (batch_offsets) are not supported yet")
        if not run:
            raise NotImplementedError(f"{who}: run=False (a pre-allocated solver functor) is not supported yet")
        if check_every == 0:
            raise NotImplementedError(f"{who}: check_every=0 (device-side convergence checks) is not supported yet")
        if restart is not None:
            raise NotImplementedError(f"{who}: restart= is not supported yet")
        if not isinstance(b, Array) or not isinstance(x, Array) or b.shape != x.shape or b.dtype != x.dtype:
            raise ValueError(f"{who}: b and x must be adjit arrays of one shape and dtype")
        self.b, self.x = b, x
        self.dtype = _scalars(b).dtype
        self.scalar = T.scalar_of(T.value_type_of(b.dtype))
        self.n = _scalars(b).size
        self.maxiter = self.n if maxiter is None or maxiter == 0 else int(maxiter)
        rtol, atol = _tolerances(self.scalar, tol, atol)
        b_norm = math.sqrt(float(self.dot(_scalars(b), _scalars(b))))
        self.atol = max(rtol * b_norm, atol)
        self.atol_sq = self.atol * self.atol

    def array(self) -> Array:
        return empty(self.b.shape, dtype=self.b.dtype, device=self.b.device)

    def dot(self, u, v):
        return np.dot(u, v).astype(self.dtype) if np.ndim(u) else u * v

    def apply(self, op: LinearOperator, source: Array, target: Array) -> np.ndarray:
        op.matvec(source, target, target, 1.0, 0.0)
        return _scalars(target)


def _loop(do_iteration, residual_sq, setup: _Setup, callback, check_every: int, cycle: int = 1):
    """Warp's host loop: check at 0, then every check_every iterations (and
    at the end); returns (iterations, residual norm, absolute tolerance)."""
    check_every = max(check_every, cycle)
    iteration = 0
    err = math.sqrt(float(residual_sq()))
    if callback is not None:
        callback(iteration, err, setup.atol)
    if residual_sq() <= setup.atol_sq:
        return iteration, err, setup.atol
    while True:
        do_iteration()
        iteration += cycle
        if iteration >= setup.maxiter:
            break
        if iteration % check_every < cycle:
            if residual_sq() <= setup.atol_sq:
                break
            if callback is not None:
                callback(iteration, math.sqrt(float(residual_sq())), setup.atol)
    err = math.sqrt(float(residual_sq()))
    if callback is not None:
        callback(iteration, err, setup.atol)
    return iteration, err, setup.atol


def cg(A, b: Array, x: Array, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0,
       M=None, callback: Callable | None = None, check_every=10, use_cuda_graph=True, run: bool = True, *,
       restart: int | None = None):
    """Conjugate gradients for a symmetric positive definite ``A`` (Warp's
    signature): ``x`` is the initial guess and receives the solution; ``M``
    an optional preconditioner. Returns (iterations, residual norm, absolute
    tolerance); the residual is the recursively updated one, as Warp's."""
    s = _Setup("cg", A, b, x, tol, atol, maxiter, M, check_every, run, restart)
    xs = _scalars(x)
    r_arr, z_arr, p_arr, ap_arr = s.array(), s.array(), s.array(), s.array()
    s.A.matvec(x, b, r_arr, -1.0, 1.0)
    r = _scalars(r_arr).copy()
    state = {}

    def update_rr_rz():
        state["rr"] = s.dot(r, r)
        if s.M is None:
            state["z"], state["rz"] = r, state["rr"]
        else:
            _write(r_arr, r)
            state["z"] = s.apply(s.M, r_arr, z_arr).copy()
            state["rz"] = s.dot(r, state["z"])

    update_rr_rz()
    p = state["z"].copy()

    def iteration():
        nonlocal p, r
        rz_old = state["rz"]
        _write(p_arr, p)
        ap = s.apply(s.A, p_arr, ap_arr).copy()
        alpha = rz_old / s.dot(p, ap) if state["rr"] > s.atol_sq else s.dtype.type(0)
        _write(x, xs + alpha * p)
        r = r - alpha * ap
        update_rr_rz()
        beta = state["rz"] / rz_old if state["rr"] > s.atol_sq else s.dtype.type(0)
        p = state["z"] + beta * p

    return _loop(iteration, lambda: state["rr"], s, callback, check_every)


def cr(A, b: Array, x: Array, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0,
       M=None, callback: Callable | None = None, check_every=10, use_cuda_graph=True, run: bool = True, *,
       restart: int | None = None):
    """Conjugate residuals for a symmetric (possibly indefinite) ``A``
    (Warp's signature and algorithm: with ``M``, the preconditioned residual
    z is updated recursively). Returns (iterations, residual norm, absolute
    tolerance)."""
    s = _Setup("cr", A, b, x, tol, atol, maxiter, M, check_every, run, restart)
    xs = _scalars(x)
    r_arr, z_arr, az_arr, ap_arr, y_arr = s.array(), s.array(), s.array(), s.array(), s.array()
    s.A.matvec(x, b, r_arr, -1.0, 1.0)
    r = _scalars(r_arr).copy()
    z = s.apply(s.M, r_arr, z_arr).copy() if s.M is not None else r.copy()
    state = {}

    def update_rr_zaz():
        _write(z_arr, z)
        state["az"] = s.apply(s.A, z_arr, az_arr).copy()
        state["rr"], state["zaz"] = s.dot(r, r), s.dot(z, state["az"])

    update_rr_zaz()
    p, ap = z.copy(), state["az"].copy()

    def iteration():
        nonlocal p, ap, r, z
        zaz_old = state["zaz"]
        if s.M is not None:
            _write(ap_arr, ap)
            y = s.apply(s.M, ap_arr, y_arr).copy()
        else:
            y = ap
        y_ap = s.dot(ap, y)
        if s.M is None:
            alpha = zaz_old / y_ap if state["rr"] > s.atol_sq else s.dtype.type(0)
        else:
            alpha = zaz_old / y_ap if state["rr"] > s.atol_sq and y_ap > 0 else s.dtype.type(0)
        _write(x, xs + alpha * p)
        r = r - alpha * ap
        z = z - alpha * y if s.M is not None else r.copy()
        update_rr_zaz()
        ok = state["rr"] > s.atol_sq and zaz_old > 0
        beta = state["zaz"] / zaz_old if ok else s.dtype.type(0)
        p = z + beta * p
        ap = state["az"] + beta * ap

    return _loop(iteration, lambda: state["rr"], s, callback, check_every)


def gmres(A, b: Array, x: Array, tol: float | None = None, atol: float | None = None, restart=31,
          maxiter: float | None = 0, M=None, callback: Callable | None = None, check_every=31, use_cuda_graph=True,
          is_left_preconditioner=False, run: bool = True):
    """Restarted GMRES[restart] (Warp's signature and algorithm: classical
    Gram-Schmidt Arnoldi, Givens least squares stopping at a pivot below
    eps^2, ``M`` a right preconditioner unless ``is_left_preconditioner``).
    Returns (iterations, residual norm ||b - A x||, absolute tolerance)."""
    s = _Setup("gmres", A, b, x, tol, atol, maxiter, M, check_every, run)
    k = min(int(restart), s.maxiter)
    check_every = max(k, check_every)
    pivot_tolerance = _epsilon(s.scalar) ** 2
    xs = _scalars(x)
    r_arr, w_arr, v_arr, t_arr = s.array(), s.array(), s.array(), s.array()
    state = {}

    def residual():
        s.A.matvec(x, b, r_arr, -1.0, 1.0)
        state["r"] = _scalars(r_arr).copy()
        state["rr"] = s.dot(state["r"], state["r"])

    def operator(v):  # (M A or A M or A) v
        _write(v_arr, v)
        if s.M is None:
            return s.apply(s.A, v_arr, w_arr).copy()
        first, second = (s.A, s.M) if is_left_preconditioner else (s.M, s.A)
        _write(t_arr, s.apply(first, v_arr, t_arr).copy())
        return s.apply(second, t_arr, w_arr).copy()

    def normalized(w, norm_sq):
        return w if norm_sq == 0 else w / np.sqrt(norm_sq)

    def cycle():
        rh = state["r"]
        if s.M is not None and is_left_preconditioner:
            _write(r_arr, rh)
            rh = s.apply(s.M, r_arr, w_arr).copy()
        norm_sq = s.dot(rh, rh)
        beta = np.sqrt(norm_sq)
        V = np.zeros((k + 1, s.n), s.dtype)
        H = np.zeros((k + 1, k), s.dtype)
        V[0] = normalized(rh, norm_sq)
        for j in range(k):
            w = operator(V[j])
            H[:j + 1, j] = V[:j + 1] @ w
            w = w - H[:j + 1, j] @ V[:j + 1]
            w_sq = s.dot(w, w)
            H[j + 1, j] = np.sqrt(w_sq)
            V[j + 1] = normalized(w, w_sq)
        y = _least_squares(H, beta, k, pivot_tolerance, s.dtype)
        update = y @ V[:k]
        if s.M is not None and not is_left_preconditioner:
            _write(v_arr, update)
            update = s.apply(s.M, v_arr, t_arr).copy()
        _write(x, xs + update)
        residual()

    residual()
    return _loop(cycle, lambda: state["rr"], s, callback, check_every, cycle=k)


def _least_squares(H, beta, k: int, pivot_tolerance: float, dtype) -> np.ndarray:
    """min |beta e_0 - H y| for the Hessenberg H by Givens rotations (Warp's:
    the columns from the first pivot below the tolerance on are dropped)."""
    H = H.copy()
    y = np.zeros(k, dtype)
    rhs = beta
    used = k
    for i in range(k):
        a, b = H[i, i], H[i + 1, i]
        norm_sq = a * a + b * b
        if norm_sq < pivot_tolerance:
            used = i
            break
        norm = np.sqrt(norm_sq)
        c, sn = a / norm, b / norm
        top, bottom = H[i, i:].copy(), H[i + 1, i:].copy()
        H[i, i:], H[i + 1, i:] = c * top + sn * bottom, c * bottom - sn * top
        y[i] = c * rhs
        rhs = -sn * rhs
    for i in range(used - 1, -1, -1):
        y[i] = (y[i] - H[i, i + 1:used] @ y[i + 1:used]) / H[i, i]
    return y


def __getattr__(name: str):
    # Only called for names this module lacks (bicgstab, the solver state
    # classes): a NotInAdjitError naming warp.optim.linear.<name>.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys as _sys
    from .errors import missing_name
    raise missing_name("adjit.optim.linear", name, _sys._getframe(1))
