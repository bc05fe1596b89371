"""Vectors and matrices: dot, length, normalize, cross; transpose, trace,
determinant, inverse, outer, diag, identity; the component-wise products;
norms; skew, get_diag, matrices from rows or columns; argmin, argmax; ddot.
Also the matrix products of ``mul`` (``emit_matmul``, see operators.py).
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .helpers import elements, emit_dot, is_composite, matrix_from
from .registry import StaticParam, add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
math = deferred_import("mlir.dialects.math")
vector_d = deferred_import("mlir.dialects.vector")
values = deferred_import("adjit.compiler.values")


# --- vectors ----------------------------------------------------------------

def _float_vectors(name, count, result):
    def infer(args):
        if len(args) != count:
            raise TypeError(f"{name}() takes {count} arguments, got {len(args)}")
        if not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float or any(a != args[0] for a in args):
            raise TypeError(f"{name}() needs float vectors of one type, got {', '.join(map(str, args))}")
        if name == "cross" and args[0].length != 3:
            raise TypeError(f"cross() needs 3-vectors, got {args[0]}")
        return result(args[0])
    return infer


def _emit_dot(vals, types, result):
    return emit_dot(vals[0], vals[1], result)


def _safe_length(v, scalar: T.ScalarType):
    """(length of ``v``, length > 0), with a zero gradient at the zero vector
    (as Warp): sqrt only sees the squared length where it is positive, so its
    derivative's 1/sqrt never meets a zero adjoint there (inf * 0 = NaN)."""
    squared = emit_dot(v, v, scalar)
    zero, one = values.constant(scalar, 0.0), values.constant(scalar, 1.0)
    positive = arith.CmpFOp(arith.CmpFPredicate.OGT, squared, zero).result
    root = math.SqrtOp(arith.SelectOp(positive, squared, one).result).result
    return arith.SelectOp(positive, root, zero).result, positive


def _emit_length(vals, types, result):
    return _safe_length(vals[0], result)[0]


def _emit_length_sq(vals, types, result):
    return emit_dot(vals[0], vals[0], result)


def emit_normalize(vals, types, result):
    """v / length(v); the zero vector (and a zero gradient) at zero, as Warp."""
    scalar = result.dtype
    length, positive = _safe_length(vals[0], scalar)
    one = values.constant(scalar, 1.0)
    inverse = arith.DivFOp(one, arith.SelectOp(positive, length, one).result).result
    inverse = arith.SelectOp(positive, inverse, values.constant(scalar, 0.0)).result
    return arith.MulFOp(vals[0], vector_d.BroadcastOp(result.mlir(), inverse).result).result


def emit_cross(vals, types, result):
    a, b = vals

    def comp(v, i):
        return vector_d.ExtractOp(v, [], [i]).result

    def term(i, j):  # a[i]*b[j] - a[j]*b[i]
        return arith.SubFOp(arith.MulFOp(comp(a, i), comp(b, j)).result,
                            arith.MulFOp(comp(a, j), comp(b, i)).result).result

    return vector_d.FromElementsOp(result.mlir(), [term(1, 2), term(2, 0), term(0, 1)]).result


add_builtin("dot", "Dot product of two float vectors.",
            _float_vectors("dot", 2, lambda v: v.dtype), _emit_dot)
add_builtin("length", "Euclidean length of a float vector (its gradient at the zero vector is zero).",
            _float_vectors("length", 1, lambda v: v.dtype), _emit_length,
            domain=((0.1, 10.0),))
add_builtin("length_sq", "Squared Euclidean length of a float vector.",
            _float_vectors("length_sq", 1, lambda v: v.dtype), _emit_length_sq)
add_builtin("normalize", "The vector divided by its length (the zero vector, with a zero gradient, at zero).",
            _float_vectors("normalize", 1, lambda v: v), emit_normalize,
            domain=((0.1, 10.0),))
add_builtin("cross", "Cross product of two 3-vectors.",
            _float_vectors("cross", 2, lambda v: v), emit_cross)


# --- matrices -------------------------------------------------------------------

def matrix_arg(name, square=False, ints=False):
    """The infer of a builtin of one matrix: float matrices, or any (integer
    ones too) with ``ints``."""
    def infer(args):
        if len(args) != 1 or not isinstance(args[0], T.MatrixType):
            raise TypeError(f"{name}() needs one matrix, got {', '.join(map(str, args))}")
        m = args[0]
        if not ints and not m.dtype.is_float:
            raise TypeError(f"{name}() needs a float matrix, got {m}")
        if square and m.rows != m.cols:
            raise TypeError(f"{name}() needs a square matrix, got {m}")
        return m
    return infer


def _det(e):
    """Determinant of a square list-of-lists of f32/f64 SSA scalars (Laplace expansion)."""
    n = len(e)
    if n == 1:
        return e[0][0]
    if n == 2:
        return arith.SubFOp(arith.MulFOp(e[0][0], e[1][1]).result,
                            arith.MulFOp(e[0][1], e[1][0]).result).result
    acc = None
    for c in range(n):
        minor = [row[:c] + row[c + 1:] for row in e[1:]]
        term = arith.MulFOp(e[0][c], _det(minor)).result
        if acc is None:
            acc = term
        elif c % 2:
            acc = arith.SubFOp(acc, term).result
        else:
            acc = arith.AddFOp(acc, term).result
    return acc


def _transpose_type(m: T.MatrixType) -> T.MatrixType:
    return T.matrix((m.cols, m.rows), m.dtype)


def _emit_transpose(vals, types, result):
    return vector_d.TransposeOp(result.mlir(), vals[0], [1, 0]).result


def _emit_trace(vals, types, result):
    m = types[0]
    add = arith.AddFOp if m.dtype.is_float else arith.AddIOp
    acc = vector_d.ExtractOp(vals[0], [], [0, 0]).result
    for i in range(1, m.rows):
        acc = add(acc, vector_d.ExtractOp(vals[0], [], [i, i]).result).result
    return acc


def _emit_determinant(vals, types, result):
    m = types[0]
    return _det(elements(vals[0], m.rows, m.cols))


def _emit_inverse(vals, types, result):
    n = result.rows
    e = elements(vals[0], n, n)
    inv_det = arith.DivFOp(values.constant(result.dtype, 1.0), _det(e)).result
    rows = []
    for r in range(n):
        row = []
        for c in range(n):
            # inverse[r][c] = cofactor(c, r) / det
            minor = [er[:r] + er[r + 1:] for i, er in enumerate(e) if i != c]
            cof = _det(minor)
            if (r + c) % 2:
                cof = arith.NegFOp(cof).result
            row.append(arith.MulFOp(cof, inv_det).result)
        rows.append(row)
    return matrix_from(rows, result)


def _infer_outer(args):
    if len(args) != 2 or not all(isinstance(a, T.VectorType) and a.dtype.is_float for a in args) \
            or args[0].dtype != args[1].dtype:
        raise TypeError(f"outer() needs two float vectors, got {', '.join(map(str, args))}")
    return T.matrix((args[0].length, args[1].length), args[0].dtype)


def _emit_outer(vals, types, result):
    a, b = vals
    rows = [[arith.MulFOp(vector_d.ExtractOp(a, [], [r]).result, vector_d.ExtractOp(b, [], [c]).result).result
             for c in range(result.cols)] for r in range(result.rows)]
    return matrix_from(rows, result)


def _infer_diag(args):
    if len(args) != 1 or not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float:
        raise TypeError(f"diag() needs one float vector, got {', '.join(map(str, args))}")
    return T.matrix((args[0].length, args[0].length), args[0].dtype)


def _emit_diag(vals, types, result):
    zero = values.constant(result.dtype, 0.0)
    rows = [[vector_d.ExtractOp(vals[0], [], [r]).result if r == c else zero for c in range(result.cols)]
            for r in range(result.rows)]
    return matrix_from(rows, result)


add_builtin("transpose", "The transpose of a matrix.",
            lambda a: _transpose_type(matrix_arg("transpose", ints=True)(a)),
            _emit_transpose)
add_builtin("trace", "Sum of the diagonal of a square matrix.",
            lambda a: matrix_arg("trace", square=True, ints=True)(a).dtype, _emit_trace)
add_builtin("determinant", "Determinant of a square 2x2, 3x3 or 4x4 matrix.",
            lambda a: matrix_arg("determinant", square=True)(a).dtype, _emit_determinant)
add_builtin("inverse", "Inverse of a square 2x2, 3x3 or 4x4 matrix (adjugate over determinant).",
            matrix_arg("inverse", square=True), _emit_inverse)
add_builtin("inverse_approx", "inverse_approx(m): Warp's inverse with approximate GPU intrinsics; adjit computes the "
            "exact inverse (as Warp does on the CPU), a valid value of the approximation.",
            matrix_arg("inverse_approx", square=True), _emit_inverse)
add_builtin("outer", "Outer product a b^T of two float vectors.", _infer_outer, _emit_outer)
add_builtin("diag", "The square matrix with vector v on its diagonal.", _infer_diag, _emit_diag)


# --- matrix products (a * b: see operators.py) ----------------------------------------

def _transposed(m: ir.Value, t: T.MatrixType) -> ir.Value:
    return vector_d.TransposeOp(_transpose_type(t).mlir(), m, [1, 0]).result


def emit_matmul(a: ir.Value, b: ir.Value, ta, tb, result) -> ir.Value:
    """matrix * vector, vector * matrix (v^T M) and matrix * matrix."""
    scalar = ta.dtype
    if isinstance(ta, T.VectorType):  # v * M = M^T v
        return emit_matmul(_transposed(b, tb), a, _transpose_type(tb), ta, result)
    if isinstance(tb, T.VectorType):
        comps = [emit_dot(vector_d.ExtractOp(a, [], [r]).result, b, scalar) for r in range(ta.rows)]
        return vector_d.FromElementsOp(result.mlir(), comps).result
    bt = _transposed(b, tb)
    m = values.constant(result, 0)
    row_t = result.row_type().mlir()
    for r in range(ta.rows):
        row_a = vector_d.ExtractOp(a, [], [r]).result
        comps = [emit_dot(row_a, vector_d.ExtractOp(bt, [], [c]).result, scalar) for c in range(tb.cols)]
        m = vector_d.InsertOp(vector_d.FromElementsOp(row_t, comps).result, m, [], [r]).result
    return m


# --- identity matrices ------------------------------------------------------------------

def _infer_identity(args, n, dtype):
    if args:
        raise TypeError(f"identity() takes only n and dtype, got {len(args)} more arguments")
    if n < 2 or n * n > T.MAX_COMPONENTS:
        raise TypeError(f"identity() needs n of 2 to 8 (at most {T.MAX_COMPONENTS} scalars), got {n}")
    if not dtype.is_float:
        raise TypeError(f"identity() needs a float dtype, got {dtype}")
    return T.matrix((n, n), dtype)


def _emit_identity(vals, types, result, n, dtype):
    zero, one = values.constant(dtype, 0.0), values.constant(dtype, 1.0)
    return matrix_from([[one if r == c else zero for c in range(n)] for r in range(n)], result)


add_builtin("identity", "identity(n=3, dtype=float): the n x n identity matrix (n a constant of 2 to 4).",
            _infer_identity, _emit_identity, differentiable=False,
            static_params=(StaticParam("n", "int"), StaticParam("dtype", "dtype", T.float32)),
            static_positional=True)


# --- component-wise products -------------------------------------------------------------

def _infer_cw(name):
    def infer(args):
        if len(args) != 2 or not is_composite(args[0]) or args[0] != args[1]:
            raise TypeError(f"{name}() needs two vectors or matrices of one type, got {', '.join(map(str, args))}")
        return args[0]
    return infer


def _emit_cw(float_op, int_op):
    def emit(vals, types, result):
        if result.dtype.is_float:
            return getattr(arith, float_op)(vals[0], vals[1]).result
        if int_op == "DivSIOp":  # defined for every input: no trap on a zero divisor (unsigned: divui)
            return values.integer_divide(arith.DivSIOp, result, vals[0], vals[1])
        return getattr(arith, int_op)(vals[0], vals[1]).result
    return emit


add_builtin("cw_mul", "The component-wise product of two vectors or matrices of one type.",
            _infer_cw("cw_mul"), _emit_cw("MulFOp", "MulIOp"))
add_builtin("cw_div", "The component-wise quotient of two vectors or matrices of one type "
            "(integers truncate toward zero, as `/` does; an integer divided by zero gives 0).",
            _infer_cw("cw_div"), _emit_cw("DivFOp", "DivSIOp"), domain=((-5.0, 5.0), (0.5, 5.0)))


# --- norms and vector/matrix assembly (compositions: their gradients come from the ops') ---

def _vector_and_delta(name):
    def infer(args):
        if len(args) not in (1, 2) or not isinstance(args[0], T.VectorType) or not args[0].dtype.is_float:
            raise TypeError(f"{name}(v[, delta]) needs a float vector, got {', '.join(map(str, args))}")
        if len(args) == 2 and args[1] != args[0].dtype:
            raise TypeError(f"{name}(v, delta) needs delta of type {args[0].dtype}, got {args[1]}")
        return args[0].dtype if name != "smooth_normalize" else args[0]
    return infer


def _vector_scalar_literals(types):
    # A literal delta takes the vector's scalar type.
    if types and isinstance(types[0], T.VectorType):
        return [None] + [types[0].dtype] * (len(types) - 1)
    return [None] * len(types)


def _delta(vals, scalar):
    return vals[1] if len(vals) > 1 else values.constant(scalar, 1.0)


def _emit_norm_l1(vals, types, result):
    total = None
    for k in range(types[0].length):
        c = math.AbsFOp(vector_d.ExtractOp(vals[0], [], [k]).result).result
        total = c if total is None else arith.AddFOp(total, c).result
    return total


def _emit_norm_huber(vals, types, result):
    """0.5 |v|^2 where |v| <= delta, else delta (|v| - delta / 2)."""
    delta = _delta(vals, result)
    length, _ = _safe_length(vals[0], result)
    half = values.constant(result, 0.5)
    inner = arith.MulFOp(half, emit_dot(vals[0], vals[0], result)).result
    outer = arith.MulFOp(delta, arith.SubFOp(length, arith.MulFOp(half, delta).result).result).result
    small = arith.CmpFOp(arith.CmpFPredicate.OLE, length, delta).result
    return arith.SelectOp(small, inner, outer).result


def _pseudo_huber(v, delta, scalar):
    """delta sqrt(1 + |v|^2 / delta^2)."""
    one = values.constant(scalar, 1.0)
    ratio = arith.DivFOp(emit_dot(v, v, scalar), arith.MulFOp(delta, delta).result).result
    return arith.MulFOp(delta, math.SqrtOp(arith.AddFOp(one, ratio).result).result).result


def _emit_norm_pseudo_huber(vals, types, result):
    return _pseudo_huber(vals[0], _delta(vals, result), result)


def _emit_smooth_normalize(vals, types, result):
    norm = _pseudo_huber(vals[0], _delta(vals, result.dtype), result.dtype)
    return arith.DivFOp(vals[0], vector_d.BroadcastOp(result.mlir(), norm).result).result


add_builtin("norm_l1", "Sum of the absolute values of a float vector's components.",
            _float_vectors("norm_l1", 1, lambda v: v.dtype), _emit_norm_l1, domain=((0.1, 10.0),))
add_builtin("norm_l2", "Euclidean norm of a float vector (length(); zero gradient at the zero vector).",
            _float_vectors("norm_l2", 1, lambda v: v.dtype), _emit_length, domain=((0.1, 10.0),))
add_builtin("norm_huber", "Huber norm of a float vector: 0.5 |v|^2 where |v| <= delta (default 1), else "
            "delta (|v| - delta / 2).", _vector_and_delta("norm_huber"), _emit_norm_huber,
            literal_types=_vector_scalar_literals, domain=((0.1, 3.0), (0.5, 2.0)))
add_builtin("norm_pseudo_huber", "Pseudo-Huber norm of a float vector: delta sqrt(1 + |v|^2 / delta^2) "
            "(delta defaults to 1).", _vector_and_delta("norm_pseudo_huber"), _emit_norm_pseudo_huber,
            literal_types=_vector_scalar_literals, domain=((-3.0, 3.0), (0.5, 2.0)))
add_builtin("smooth_normalize", "The vector divided by its pseudo-Huber norm (norm_pseudo_huber; delta "
            "defaults to 1): smooth at the zero vector.", _vector_and_delta("smooth_normalize"),
            _emit_smooth_normalize, literal_types=_vector_scalar_literals, domain=((-3.0, 3.0), (0.5, 2.0)))


def _infer_skew(args):
    if len(args) != 1 or not isinstance(args[0], T.VectorType) or args[0].length != 3 \
            or not args[0].dtype.is_float:
        raise TypeError(f"skew() needs a float 3-vector, got {', '.join(map(str, args))}")
    return T.matrix((3, 3), args[0].dtype)


def _emit_skew(vals, types, result):
    """[[0, -z, y], [z, 0, -x], [-y, x, 0]]: skew(a) * b == cross(a, b)."""
    x, y, z = (vector_d.ExtractOp(vals[0], [], [k]).result for k in range(3))
    zero = values.constant(result.dtype, 0.0)
    neg = lambda v: arith.NegFOp(v).result  # noqa: E731
    return matrix_from([[zero, neg(z), y], [z, zero, neg(x)], [neg(y), x, zero]], result)


def _infer_get_diag(args):
    m = matrix_arg("get_diag", square=True, ints=True)(args)
    return T.vector(m.rows, m.dtype)


def _emit_get_diag(vals, types, result):
    n = result.length
    e = elements(vals[0], n, n)
    return vector_d.FromElementsOp(result.mlir(), [e[k][k] for k in range(n)]).result


def _vectors_to_matrix(name):
    def infer(args):
        if not args or not all(isinstance(a, T.VectorType) for a in args) or any(a != args[0] for a in args):
            raise TypeError(f"{name}() needs vectors of one type, got {', '.join(map(str, args))}")
        n = len(args)
        return T.matrix((n, args[0].length) if name == "matrix_from_rows" else (args[0].length, n),
                        args[0].dtype)
    return infer


def _emit_matrix_from_vectors(by_rows):
    def emit(vals, types, result):
        comps = [[vector_d.ExtractOp(v, [], [k]).result for k in range(types[0].length)] for v in vals]
        rows = comps if by_rows else [list(col) for col in zip(*comps)]
        return matrix_from(rows, result)
    return emit


add_builtin("skew", "The 3x3 skew-symmetric matrix of a 3-vector a, with skew(a) * b == cross(a, b).",
            _infer_skew, _emit_skew)
add_builtin("get_diag", "The diagonal of a square matrix, as a vector.", _infer_get_diag, _emit_get_diag)
add_builtin("matrix_from_rows", "The matrix whose rows are the given vectors (of one type).",
            _vectors_to_matrix("matrix_from_rows"), _emit_matrix_from_vectors(True))
add_builtin("matrix_from_cols", "The matrix whose columns are the given vectors (of one type).",
            _vectors_to_matrix("matrix_from_cols"), _emit_matrix_from_vectors(False))


def _infer_arg_extreme(name):
    def infer(args):
        if len(args) != 1 or not isinstance(args[0], T.VectorType) or args[0].dtype.is_bool:
            raise TypeError(f"{name}() needs a numeric vector, got {', '.join(map(str, args))}")
        return T.int32
    return infer


def _emit_arg_extreme(smaller):
    def emit(vals, types, result):
        """The first index of the smallest (largest) component."""
        vec = types[0]
        best = vector_d.ExtractOp(vals[0], [], [0]).result
        index = values.constant(T.int32, 0)
        for k in range(1, vec.length):
            c = vector_d.ExtractOp(vals[0], [], [k]).result
            if vec.dtype.is_float:
                better = arith.CmpFOp(arith.CmpFPredicate.OLT if smaller else arith.CmpFPredicate.OGT,
                                      c, best).result
            else:
                less, greater = ((arith.CmpIPredicate.ult, arith.CmpIPredicate.ugt) if vec.dtype.is_unsigned
                                 else (arith.CmpIPredicate.slt, arith.CmpIPredicate.sgt))
                better = arith.CmpIOp(less if smaller else greater, c, best).result
            best = arith.SelectOp(better, c, best).result
            index = arith.SelectOp(better, values.constant(T.int32, k), index).result
        return index
    return emit


add_builtin("argmin", "Index of the smallest component of a vector (the first, on ties).",
            _infer_arg_extreme("argmin"), _emit_arg_extreme(True), differentiable=False)
add_builtin("argmax", "Index of the largest component of a vector (the first, on ties).",
            _infer_arg_extreme("argmax"), _emit_arg_extreme(False), differentiable=False)


# --- ddot ------------------------------------------------------------------------------------------

def _infer_ddot(args):
    if len(args) == 2 and isinstance(args[0], T.MatrixType) and args[0] == args[1] and args[0].dtype.is_float:
        return args[0].dtype
    raise TypeError(f"ddot() takes two float matrices of one shape, got {', '.join(map(str, args))}")


def _emit_ddot(vals, types, result):
    """sum_ij a_ij b_ij: the rows' dot products, summed."""
    total = None
    for r in range(types[0].rows):
        row = emit_dot(vector_d.ExtractOp(vals[0], [], [r]).result, vector_d.ExtractOp(vals[1], [], [r]).result, result)
        total = row if total is None else arith.AddFOp(total, row).result
    return total


add_builtin("ddot", "ddot(a, b): the double dot product sum_ij a_ij b_ij of two matrices.", _infer_ddot, _emit_ddot)
