"""Integer matrices (``wp.types.matrix(shape, dtype=wp.int32)``, unsigned and
narrow ones too), as Warp has them: storage in arrays, construction,
indexing, + - *, products with vectors and scalars, transpose, trace,
get_diag, ==, component-wise min/max (unsigned compares), division by a
scalar (truncating; by zero gives 0); builtins that need floats are
located type errors; kernels mixing them with floats differentiate."""
import numpy as np
import pytest

import adjit as wp

mat22i = wp.types.matrix(shape=(2, 2), dtype=wp.int32)
mat33i = wp.types.matrix(shape=(3, 3), dtype=wp.int32)
mat22ub = wp.types.matrix(shape=(2, 2), dtype=wp.uint8)


@wp.kernel
def int_ops(a: wp.array(dtype=mat22i), out: wp.array(dtype=mat22i), v: wp.array(dtype=wp.vec2i),
            s: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    m = a[i]
    n = mat22i(1, 2, 3, 4)
    out[i] = m + n - m * 2 + wp.transpose(n) * n
    v[i] = n * wp.vec2i(1, -1) + wp.get_diag(m)
    s[i, 0] = m[1, 0] + wp.trace(m)
    s[i, 1] = 0
    if m == n:
        s[i, 1] = 1
    q = m / 2
    s[i, 2] = q[1, 1]
    z = m / 0
    s[i, 3] = z[0, 0]
    m[0, 1] = 42
    s[i, 4] = m[0, 1] * 3


def test_integer_matrix_values_match_numpy():
    ms = np.array([[[1, 2], [3, 4]], [[-5, 0], [7, 9]]], np.int32)
    n = np.array([[1, 2], [3, 4]])
    out, v, s = wp.zeros(2, dtype=mat22i), wp.zeros(2, dtype=wp.vec2i), wp.zeros((2, 5), dtype=int)
    wp.launch(int_ops, 2, inputs=[wp.array(ms, dtype=mat22i)], outputs=[out, v, s])
    for i, m in enumerate(ms):
        np.testing.assert_array_equal(out.numpy()[i], m + n - 2 * m + n.T @ n)
        np.testing.assert_array_equal(v.numpy()[i], n @ [1, -1] + np.diag(m))
        assert s.numpy()[i].tolist() == [m[1, 0] + np.trace(m), int((m == n).all()), int(m[1, 1] / 2), 0, 126]


@wp.kernel
def unsigned_ops(a: wp.array(dtype=mat22ub), b: wp.array(dtype=mat22ub), lo: wp.array(dtype=mat22ub),
                 prod: wp.array(dtype=mat22ub)):
    i = wp.tid()
    lo[i] = wp.min(a[i], b[i])
    prod[i] = a[i] * b[i]  # wraps modulo 256, as uint8 arithmetic


def test_unsigned_matrices_compare_unsigned_and_wrap():
    a = np.array([[[200, 1], [3, 4]]], np.uint8)
    b = np.array([[[100, 250], [2, 9]]], np.uint8)
    lo, prod = wp.zeros(1, dtype=mat22ub), wp.zeros(1, dtype=mat22ub)
    wp.launch(unsigned_ops, 1, inputs=[wp.array(a, dtype=mat22ub), wp.array(b, dtype=mat22ub)], outputs=[lo, prod])
    np.testing.assert_array_equal(lo.numpy()[0], np.minimum(a[0], b[0]))
    np.testing.assert_array_equal(prod.numpy()[0], (a[0].astype(np.int64) @ b[0].astype(np.int64)) % 256)


@wp.kernel
def scaled_by_counts(x: wp.array(dtype=float), counts: wp.array(dtype=mat33i), y: wp.array(dtype=float)):
    i = wp.tid()
    c = counts[i]
    y[i] = x[i] * x[i] * float(wp.trace(c * wp.transpose(c)))


def test_kernels_with_integer_matrices_differentiate():
    xs = np.array([0.5, -2.0], np.float32)
    cs = np.array([np.arange(9).reshape(3, 3), np.eye(3) * 2], np.int32)
    x, y = wp.array(xs, requires_grad=True), wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_by_counts, 2, inputs=[x, wp.array(cs, dtype=mat33i)], outputs=[y])
    tape.backward(grads={y: wp.array(np.ones(2, np.float32))})
    weights = np.array([np.trace(c @ c.T) for c in cs.astype(np.float64)])
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs * weights, rtol=1e-6)


@pytest.mark.parametrize("expr, words", [
    ("wp.determinant(n)", "determinant() needs a float matrix, got matrix((2, 2), int32)"),
    ("wp.inverse(n)", "inverse() needs a float matrix"),
    ("wp.ddot(n, n)", "ddot() takes two float matrices"),
])
def test_float_only_builtins_are_type_errors(tmp_path, expr, words):
    import importlib.util
    path = tmp_path / "int_matrix_misuse.py"
    path.write_text("import adjit as wp\nmat22i = wp.types.matrix(shape=(2, 2), dtype=wp.int32)\n\n\n"
                    "@wp.kernel\ndef misuse(s: wp.array(dtype=int)):\n    n = mat22i(1, 2, 3, 4)\n"
                    f"    r = {expr}\n    s[0] = 1\n")
    spec = importlib.util.spec_from_file_location("int_matrix_misuse", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(module.misuse, 1, inputs=[wp.zeros(1, dtype=int)])
    assert info.value.lineno == 8 and words in str(info.value)
