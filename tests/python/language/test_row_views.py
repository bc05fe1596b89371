"""Rows of arrays as views (issue 12): ``row = a[i]`` of a 2-, 3- or 4-d
array shares ``a``'s memory, as in Warp. Values against numpy (reads,
writes, +=, atomics through rows of 2-d and 3-d arrays, loops and branches
over rows, rows passed to @funcs), bounds errors through a row naming the
array, reverse (Tape) and forward (jvp) gradients against float64 central
differences, and bad inputs naming the kernel line.
"""
import inspect

import numpy as np
import pytest

import adjit

rng = np.random.default_rng(12)


@adjit.func
def row_sum(r: adjit.array(dtype=float)):
    s = float(0.0)
    for j in range(r.shape[0]):
        s += r[j]
    return s


@adjit.func
def scale_row(r: adjit.array(dtype=float), k: float):
    for j in range(len(r)):
        r[j] = r[j] * k


@adjit.func
def plane_corner(p: adjit.array(dtype=float, ndim=2)):
    q = p[1]  # a row of a row
    return row_sum(q) + p[0, 0]


@adjit.kernel
def through_rows(a: adjit.array(dtype=float, ndim=2), b: adjit.array(dtype=float, ndim=3),
                 out: adjit.array(dtype=float, ndim=2)):
    i = adjit.tid()
    row = a[i]
    out[i, 0] = row_sum(row) + float(row.shape[0]) * 100.0 + float(len(row)) * 1000.0
    row[0] = 5.0
    row[1] += 1.0
    row[2] -= 0.5
    old = adjit.atomic_add(row, 3, 10.0)
    out[i, 1] = old
    scale_row(a[i], 2.0)
    plane = b[i]
    r2 = plane[1]
    r2[0] = 7.0
    x = b[i][1][1]
    b[i][0][0] = x + 1.0
    adjit.atomic_sub(plane, 0, 1, 0.25)
    out[i, 2] = plane_corner(b[i]) + float(plane.shape[0] * 10 + plane.shape[1])


def test_reads_writes_and_atomics_through_rows_match_numpy():
    a0 = np.arange(15, dtype=np.float32).reshape(3, 5)
    b0 = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 2, 4)
    a, b = adjit.array(a0), adjit.array(b0)
    out = adjit.zeros((3, 3), dtype=float)
    adjit.launch(through_rows, 3, [a, b, out])
    wa, wb, wout = a0.copy(), b0.copy(), np.zeros((3, 3), np.float32)
    for i in range(3):
        row = wa[i]  # numpy views share memory too
        wout[i, 0] = row.sum() + 500.0 + 5000.0
        row[0] = 5.0
        row[1] += 1.0
        row[2] -= 0.5
        wout[i, 1] = row[3]
        row[3] += 10.0
        row *= 2.0
        plane = wb[i]
        plane[1][0] = 7.0
        wb[i, 0, 0] = wb[i, 1, 1] + 1.0
        plane[0, 1] -= 0.25
        wout[i, 2] = plane[1].sum() + plane[0, 0] + 24.0
    np.testing.assert_array_equal(a.numpy(), wa)
    np.testing.assert_array_equal(b.numpy(), wb)
    np.testing.assert_array_equal(out.numpy(), wout)


@adjit.kernel
def row_sums(a: adjit.array(dtype=float, ndim=2), out: adjit.array(dtype=float)):
    s = float(0.0)
    for i in range(a.shape[0]):
        row = a[i]
        for j in range(len(row)):
            s += row[j] * float(i + 1)
    r = a[0]
    for i in range(a.shape[0]):  # rebinding a row in a loop: its index is carried
        if a[i, 0] > r[0]:
            r = a[i]
    out[0] = s
    out[1] = row_sum(r)


def test_loops_over_rows_and_a_row_carried_through_a_loop():
    a0 = rng.normal(size=(4, 3)).astype(np.float32)
    out = adjit.zeros(2, dtype=float)
    adjit.launch(row_sums, 1, [adjit.array(a0), out])
    want = sum(a0[i].sum() * (i + 1) for i in range(4))
    np.testing.assert_allclose(out.numpy()[0], want, rtol=1e-6)
    np.testing.assert_allclose(out.numpy()[1], a0[np.argmax(a0[:, 0])].sum(), rtol=1e-6)


@adjit.kernel
def rows_in_branches(a: adjit.array(dtype=float, ndim=2), flags: adjit.array(dtype=int),
                     out: adjit.array(dtype=float)):
    t = adjit.tid()
    if flags[t] > 0:
        row = a[t]
    else:
        row = a[0]
    view = row  # a copy of the view: the same row
    view[1] = -1.0
    out[t] = row[0] + row[1]


def test_rows_chosen_in_branches():
    a0 = np.arange(8, dtype=np.float32).reshape(4, 2)
    a = adjit.array(a0)
    out = adjit.zeros(4, dtype=float)
    adjit.launch(rows_in_branches, 4, [a, adjit.array(np.array([0, 1, 0, 1], np.int32)), out])
    want_a = a0.copy()
    want_a[[0, 1, 3], 1] = -1.0
    np.testing.assert_array_equal(a.numpy(), want_a)
    np.testing.assert_array_equal(out.numpy(), [-1.0, 1.0, -1.0, 5.0])


@adjit.kernel
def vector_and_int_rows(v: adjit.array(dtype=adjit.vec3, ndim=2), m: adjit.array(dtype=int, ndim=3),
                        flags: adjit.array(dtype=bool, ndim=2), out: adjit.array(dtype=float)):
    i = adjit.tid()
    row = v[i]
    row[0].x = 9.0
    row[1][2] += 0.5
    out[i] = row[1].y + row[0][0] + adjit.length(row[2])
    plane = m[i]
    plane[0, 1] |= 4
    plane[1][0] += 3
    adjit.atomic_max(plane[1], 1, 100)
    if flags[i][1]:
        out[i] += 1000.0
    f = flags[i]
    f[0] = True


def test_vector_int_and_bool_rows():
    v0 = rng.normal(size=(2, 3, 3)).astype(np.float32)
    m0 = np.arange(2 * 2 * 2, dtype=np.int32).reshape(2, 2, 2)
    f0 = np.array([[False, True], [False, False]])
    v, m, f = adjit.array(v0, dtype=adjit.vec3), adjit.array(m0), adjit.array(f0)
    out = adjit.zeros(2, dtype=float)
    adjit.launch(vector_and_int_rows, 2, [v, m, f, out])
    wv, wm = v0.copy(), m0.copy()
    wv[:, 0, 0] = 9.0
    wv[:, 1, 2] += 0.5
    wout = wv[:, 1, 1] + wv[:, 0, 0] + np.linalg.norm(wv[:, 2], axis=-1) + 1000.0 * f0[:, 1]
    wm[:, 0, 1] |= 4
    wm[:, 1, 0] += 3
    wm[:, 1, 1] = np.maximum(wm[:, 1, 1], 100)
    np.testing.assert_allclose(v.numpy(), wv, rtol=1e-6)
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_allclose(out.numpy(), wout, rtol=1e-6)
    np.testing.assert_array_equal(f.numpy(), [[True, True], [True, False]])


@adjit.kernel
def four_d(a: adjit.array(dtype=float, ndim=4), out: adjit.array(dtype=float)):
    i = adjit.tid()
    cube = a[i]
    line = cube[1, 0]
    out[i] = line[2] + cube[0][1][0] + float(cube.shape[2])
    cube[1][1][1] = 42.0


def test_four_dimensional_rows():
    a0 = np.arange(2 * 2 * 2 * 3, dtype=np.float32).reshape(2, 2, 2, 3)
    a, out = adjit.array(a0), adjit.zeros(2, dtype=float)
    adjit.launch(four_d, 2, [a, out])
    np.testing.assert_array_equal(out.numpy(), a0[:, 1, 0, 2] + a0[:, 0, 1, 0] + 3.0)
    want = a0.copy()
    want[:, 1, 1, 1] = 42.0
    np.testing.assert_array_equal(a.numpy(), want)


@adjit.struct
class Grid:
    cells: adjit.array(dtype=float, ndim=2)
    scale: float


@adjit.kernel
def struct_rows_and_break(g: Grid, out: adjit.array(dtype=float)):
    i = adjit.tid()
    row = g.cells[i]  # a row of a struct's array field
    out[i] = row[1] * g.scale
    r = g.cells[0]
    j = 0
    while j < g.cells.shape[0]:  # a row chosen in a loop left by break
        if g.cells[j, 0] > 2.5:
            r = g.cells[j]
            break
        j += 1
    out[i] += r[0] * 100.0


def test_rows_of_struct_fields_and_rows_chosen_before_a_break():
    g = Grid()
    g.cells = adjit.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    g.scale = 2.0
    out = adjit.zeros(3, dtype=float)
    adjit.launch(struct_rows_and_break, 3, [g, out])
    np.testing.assert_array_equal(out.numpy(), [402.0, 406.0, 410.0])


@adjit.func
def put_square(r: adjit.array(dtype=adjit.float64), j: int, v: adjit.float64):
    r[j] = v * v


@adjit.kernel
def writes_in_funcs(x: adjit.array(dtype=adjit.float64, ndim=2), y: adjit.array(dtype=adjit.float64, ndim=2)):
    i = adjit.tid()
    put_square(y[i], 0, x[i, 0] * adjit.float64(3.0))
    put_square(y[i], 1, adjit.sin(x[i][1]))


def test_gradients_of_writes_through_a_row_in_a_func():
    x = rng.normal(size=(2, 2))
    xa = adjit.array(x, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros((2, 2), dtype=adjit.float64, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(writes_in_funcs, 2, [xa, y])
    np.testing.assert_allclose(y.numpy(), np.stack([9 * x[:, 0] ** 2, np.sin(x[:, 1]) ** 2], 1), rtol=1e-12)
    tape.backward(grads={y: adjit.array(np.ones((2, 2)), dtype=adjit.float64)})
    want = np.stack([18 * x[:, 0], 2 * np.sin(x[:, 1]) * np.cos(x[:, 1])], 1)
    np.testing.assert_allclose(xa.grad.numpy(), want, rtol=1e-12)


# --- bounds ---------------------------------------------------------------------------------------

def _line_of(kernel, text):
    lines, first = inspect.getsourcelines(kernel.pyfunc)
    return first + next(i for i, line in enumerate(lines) if text in line)


@adjit.kernel
def read_through_row(a: adjit.array(dtype=float, ndim=2), k: adjit.array(dtype=int),
                     out: adjit.array(dtype=float)):
    i = adjit.tid()
    row = a[i]
    out[i] = row[k[i]]


@adjit.kernel
def write_through_row(a: adjit.array(dtype=float, ndim=2), k: adjit.array(dtype=int)):
    i = adjit.tid()
    row = a[i]
    row[k[i]] = 1.0


def test_an_out_of_range_index_through_a_row_names_the_array():
    a = adjit.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(read_through_row, 2, [a, adjit.array(np.array([0, 3], np.int32)), adjit.zeros(2)])
    e = info.value
    assert (e.array, e.access, e.index, e.shape) == ("'a'", "read", (1, 3), (2, 3))
    assert e.lineno == _line_of(read_through_row, "out[i] = row[k[i]]")
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(write_through_row, 2, [a, adjit.array(np.array([-1, 0], np.int32))])
    assert (info.value.array, info.value.access, info.value.index) == ("'a'", "write", (0, -1))
    np.testing.assert_array_equal(a.numpy(), [[0, 1, 2], [1, 4, 5]])


# --- gradients ------------------------------------------------------------------------------------

@adjit.func
def weighted(r: adjit.array(dtype=adjit.float64), w: adjit.float64):
    s = adjit.float64(0.0)
    for j in range(len(r)):
        s += adjit.sin(r[j]) * w * adjit.float64(j + 1)
    return s


@adjit.kernel
def smooth(x: adjit.array(dtype=adjit.float64, ndim=2), b: adjit.array(dtype=adjit.float64, ndim=3),
           y: adjit.array(dtype=adjit.float64, ndim=2)):
    i = adjit.tid()
    row = x[i]
    out = y[i]
    out[0] = weighted(row, row[0]) + row[1] * row[2]
    plane = b[i]
    s = adjit.float64(0.0)
    for k in range(plane.shape[0]):
        r = plane[k]
        s += r[0] * r[1] * row[k % 3]
    out[1] = s
    adjit.atomic_add(out, 1, row[2] * row[2])
    out[2] += adjit.exp(b[i][1][0]) * x[i, 1]


def _loss(x, b):
    y = adjit.zeros((len(x), 3), dtype=adjit.float64)
    adjit.launch(smooth, len(x), [adjit.array(x, dtype=adjit.float64), adjit.array(b, dtype=adjit.float64), y])
    return y.numpy().copy()


def _case():
    return rng.normal(size=(3, 4)), rng.normal(size=(3, 3, 2))


def test_reverse_gradient_through_rows_matches_central_differences():
    x, b = _case()
    xa = adjit.array(x, dtype=adjit.float64, requires_grad=True)
    ba = adjit.array(b, dtype=adjit.float64, requires_grad=True)
    y = adjit.zeros((3, 3), dtype=adjit.float64, requires_grad=True)
    w = rng.normal(size=(3, 3))
    tape = adjit.Tape()
    with tape:
        adjit.launch(smooth, 3, [xa, ba, y])
    tape.backward(grads={y: adjit.array(w, dtype=adjit.float64)})
    h = 1e-6
    for value, grad, perturb in ((x, xa, lambda e: (x + e, b)), (b, ba, lambda e: (x, b + e))):
        fd = np.zeros_like(value)
        for k in np.ndindex(value.shape):
            e = np.zeros_like(value)
            e[k] = h
            fd[k] = np.sum(w * (_loss(*perturb(e)) - _loss(*perturb(-e)))) / (2 * h)
        np.testing.assert_allclose(grad.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_forward_gradient_through_rows_matches_central_differences():
    x, b = _case()
    dx, db = rng.normal(size=x.shape), rng.normal(size=b.shape)
    (dy,) = adjit.jvp(smooth, 3, [adjit.array(x, dtype=adjit.float64), adjit.array(b, dtype=adjit.float64)],
                      [dx, db], [adjit.zeros((3, 3), dtype=adjit.float64)])
    h = 1e-6
    fd = (_loss(x + h * dx, b + h * db) - _loss(x - h * dx, b - h * db)) / (2 * h)
    np.testing.assert_allclose(np.asarray(dy), fd, rtol=1e-6, atol=1e-8)


# --- bad inputs -----------------------------------------------------------------------------------

def _row_of_1d(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = x[0]
    x[1] = row[0]  # bad


def _too_many(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    x[0] = row[0, 1]  # bad


def _too_many_write(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    row[0, 1] = 1.0  # bad


def _float_index(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[x[0]]  # bad
    x[0] = row[0]


def _float_index_in_row(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    x[0] = row[1.5]  # bad


def _whole_row(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    a[1] = row  # bad


def _whole_row_value(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    a[1] = 1.0  # bad


def _rebind_other_array(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    b = a
    row = x  # bad
    x[0] = row[0]


def _rebind_to_value(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    row = 1.0  # bad


def _shape_attr(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    x[0] = float(row.size)  # bad


def _lower_bound(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    x[0] = float(adjit.lower_bound(a[0], 0.5))  # bad


@adjit.func
def _takes_2d(p: adjit.array(dtype=float, ndim=2)):
    return p[0, 0]


def _wrong_rank_for_func(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    x[0] = _takes_2d(a[0])  # bad


def _returned(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    x[0] = row + 1.0  # bad


@pytest.mark.parametrize("fn, words", [
    (_row_of_1d, ["float32 value cannot be indexed"]),
    (_too_many, ["row (a row of an array(dtype=float32, ndim=2)", "is a 1-d array: it takes 1 index, got 2"]),
    (_too_many_write, ["is a 1-d array: it takes 1 index, got 2"]),
    (_float_index, ["array indices must be integers, got a float32 value"]),
    (_float_index_in_row, ["array indices must be integers"]),
    (_whole_row, ["cannot assign to a[1]: it is a row of a 2-d array", "assign its elements"]),
    (_whole_row_value, ["cannot assign to a[1]: it is a row of a 2-d array"]),
    (_rebind_other_array, ["cannot rebind the array 'row'"]),
    (_rebind_to_value, ["cannot rebind the array 'row'"]),
    (_shape_attr, ["array rows have no attribute 'size'"]),
    (_lower_bound, ["lower_bound() does not take array rows"]),
    (_wrong_rank_for_func, ["argument 1 of _takes_2d() must be array(dtype=float32, ndim=2)"]),
    (_returned, ["unsupported operands"]),
])
def test_bad_inputs_name_the_kernel_line(fn, words):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(2), adjit.zeros((2, 2))])
    message = str(e.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_row_views.py:{line}:" in message, message
    for word in words:
        assert word in message, message


def _rebind_in_branch(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2),
                      b: adjit.array(dtype=float, ndim=2)):
    row = a[0]
    if x[0] > 0.0:
        row = b[0]  # bad
    x[0] = row[0]


def _different_arrays_in_branches(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2),
                                  b: adjit.array(dtype=float, ndim=2)):
    if x[0] > 0.0:  # bad
        row = a[0]
    else:
        row = b[0]
    x[0] = row[0]


def _value_rebound_to_row(x: adjit.array(dtype=float), a: adjit.array(dtype=float, ndim=2),
                          b: adjit.array(dtype=float, ndim=2)):
    v = x[0]
    v = a[0]  # bad
    x[0] = v[0]


@pytest.mark.parametrize("fn, words", [
    (_rebind_in_branch, ["'row' is a row of one array", "not supported (use another name)"]),
    (_value_rebound_to_row, ["'v' holds a float32 value; it cannot be rebound to a row of an array"]),
    (_different_arrays_in_branches, ["a row view must be a row of the same array on both paths"]),
])
def test_rows_of_different_arrays_under_one_name_are_refused(fn, words):
    kernel = adjit.kernel(fn)
    with pytest.raises(adjit.KernelError) as e:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros(2), adjit.zeros((2, 2)), adjit.zeros((2, 2))])
    message = str(e.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, text in enumerate(lines) if "# bad" in text)
    assert f"test_row_views.py:{line}:" in message, message
    for word in words:
        assert word in message, message
