"""More idioms of real Warp code (issue 26, items 3 and 4), each against Warp's semantics
(checked against Warp 1.19 on the CPU where noted)."""
import numpy as np
import pytest

import adjit as wp
import adjit.testing  # noqa: F401 (wp.testing.check_gradients)

f64 = wp.float64


# -- locals first assigned in a loop or on one path of an if, read after it --------------------------
# Warp keeps them visible after the statement: the value the loop last gave, the value of the path
# that assigned it; where nothing did, Warp reads uninitialized memory and adjit reads zero.

@wp.kernel
def _last_in_loop(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    for i in range(n):
        t = x[i] * x[i]
    y[0] = t


@wp.kernel
def _last_in_while(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = int(0)
    while i < n:
        v = wp.vec2d(x[i], f64(2.0) * x[i])
        i += 1
    y[0] = v[0] + v[1]


@wp.kernel
def _kept_across_iterations(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    # t is assigned only when x[i] > 0: after the loop, the last such value (as in Python)
    for i in range(x.shape[0]):
        if x[i] > f64(0.0):
            t = wp.sin(x[i])
    y[0] = t


@wp.kernel
def _with_break(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    for i in range(x.shape[0]):
        if x[i] < f64(0.0):
            break
        last = x[i] * f64(3.0)
    y[0] = last


@wp.kernel
def _nested(x: wp.array(dtype=f64, ndim=2), y: wp.array(dtype=f64)):
    s = f64(0.0)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            row_last = x[i, j]
        s += row_last  # the inner loop's last value, each row
    y[0] = s


def test_local_first_assigned_in_a_loop_is_read_after_it():
    x0 = np.array([1.0, 2.0, 3.0])
    x, y = wp.array(x0, dtype=f64), wp.zeros(1, dtype=f64)
    wp.launch(_last_in_loop, 1, inputs=[x, 3, y])
    assert y.numpy()[0] == 9.0
    wp.launch(_last_in_loop, 1, inputs=[x, 0, y])  # no iteration: zero (Warp: uninitialized)
    assert y.numpy()[0] == 0.0
    wp.launch(_last_in_while, 1, inputs=[x, 2, y])
    assert y.numpy()[0] == 6.0
    wp.launch(_kept_across_iterations, 1, inputs=[wp.array([0.5, 1.5, -1.0], dtype=f64), y])
    assert y.numpy()[0] == np.sin(1.5)
    wp.launch(_with_break, 1, inputs=[wp.array([1.0, 2.0, -1.0, 4.0], dtype=f64), y])
    assert y.numpy()[0] == 6.0
    wp.launch(_nested, 1, inputs=[wp.array(np.arange(6.0).reshape(2, 3), dtype=f64), y])
    assert y.numpy()[0] == 2.0 + 5.0


def test_loop_local_gradients():
    # d/dx of x[n-1]^2: only the last iteration counts (Warp 1.19 gives zero gradients here).
    x = wp.array([1.0, 2.0, 3.0], dtype=f64, requires_grad=True)
    wp.testing.check_gradients(_last_in_loop, 1, [x, 3], [wp.zeros(1, dtype=f64, requires_grad=True)])
    y = wp.zeros(1, dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_last_in_loop, 1, inputs=[x, 3, y])
    tape.backward(grads={y: np.ones(1)})
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 6.0])
    x = wp.array([0.5, 1.5, -1.0, 0.25], dtype=f64, requires_grad=True)
    wp.testing.check_gradients(_kept_across_iterations, 1, [x], [wp.zeros(1, dtype=f64, requires_grad=True)])
    x = wp.array([1.0, 2.0, -1.0, 4.0], dtype=f64, requires_grad=True)
    wp.testing.check_gradients(_with_break, 1, [x], [wp.zeros(1, dtype=f64, requires_grad=True)])
    x = wp.array([0.5, 1.25], dtype=f64, requires_grad=True)
    wp.testing.check_gradients(_last_in_while, 1, [x, 2], [wp.zeros(1, dtype=f64, requires_grad=True)])


@wp.func
def _clamped_scale(x: float, lo: float):
    if x > lo:
        s = x * 2.0
    elif x < -lo:
        s = -x
    return s  # zero for -lo <= x <= lo (Warp: uninitialized)


@wp.kernel
def _one_path(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    if x[i] > 0.0:
        if x[i] > 10.0:
            r = 100.0
        else:
            r = 1.0
    else:
        if x[i] < -10.0:
            r = -100.0
        else:
            r = -1.0
    y[i] = r + _clamped_scale(x[i], 0.5)


def test_local_assigned_on_one_path_of_an_if():
    x = wp.array([20.0, 5.0, -5.0, -20.0, 0.25], dtype=float)
    y = wp.zeros(5, dtype=float)
    wp.launch(_one_path, 5, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [140.0, 11.0, 4.0, -80.0, 1.0])
    xg = wp.array([0.75, -0.75, 0.25, 3.0], dtype=float, requires_grad=True)
    yg = wp.zeros(4, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_one_path, 4, inputs=[xg, yg])
    tape.backward(grads={yg: np.ones(4, np.float32)})
    np.testing.assert_array_equal(xg.grad.numpy(), [2.0, -1.0, 0.0, 2.0])


def test_reads_that_warp_refuses_are_located_errors():
    @wp.kernel
    def read_first(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        s = float(0.0)
        for i in range(3):
            if i > 0:
                s += prev  # Warp: "Referencing undefined symbol: prev"
            prev = x[i]
        y[0] = s

    with pytest.raises(wp.KernelNameError, match=r"test_warp_idioms_more.py:\d+: name 'prev' is not defined: it "
                                                 r"is assigned only later \(line \d+\).*assign it before the loop"):
        wp.launch(read_first, 1, inputs=[wp.zeros(3, dtype=float), wp.zeros(1, dtype=float)])

    @wp.kernel
    def sibling(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        if x[0] > 0.0:
            t = 1.0
        else:
            y[0] = t

    with pytest.raises(wp.KernelNameError, match=r"name 't' is not defined: the assignment at line \d+ does not "
                                                 "reach this read"):
        wp.launch(sibling, 1, inputs=[wp.zeros(3, dtype=float), wp.zeros(1, dtype=float)])


@wp.struct
class _Pair:
    a: float
    b: float


def test_structs_and_arrays_first_assigned_in_a_branch_or_loop():
    @wp.kernel
    def struct_in_loop(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        for i in range(3):
            p = _Pair()
            p.a = x[i]
        y[0] = p.a

    with pytest.raises(wp.KernelNameError, match=r"test_warp_idioms_more.py:\d+: name 'p' is not defined: 'p' is "
                                                 r"first assigned inside the loop at line \d+ and is a _Pair struct "
                                                 "there.*assign it before the loop"):
        wp.launch(struct_in_loop, 1, inputs=[wp.zeros(3, dtype=float), wp.zeros(1, dtype=float)])

    @wp.kernel
    def array_on_one_path(x: wp.array(dtype=float), z: wp.array(dtype=float), y: wp.array(dtype=float)):
        if x[0] > 0.0:
            src = z
        y[0] = src[0]

    with pytest.raises(wp.KernelNameError, match=r"name 'src' is not defined: 'src' is assigned on one path of "
                                                 r"the if at line \d+ only and is an array there"):
        wp.launch(array_on_one_path, 1, inputs=[wp.zeros(3, dtype=float), wp.zeros(3, dtype=float),
                                                wp.zeros(1, dtype=float)])


# -- constructors' keywords and cast's positional dtype (the forms Warp 1.19 takes) ------------------

@wp.kernel
def _keyword_constructors(x: wp.array(dtype=f64), q: wp.array(dtype=wp.quatd), t: wp.array(dtype=wp.transformd),
                          s: wp.array(dtype=wp.spatial_vectord)):
    a, b, c, d = x[0], x[1], x[2], x[3]
    q0 = wp.quatd(x=a, y=b, z=c, w=d)
    q1 = wp.quaternion(ijk=wp.vec3d(a, b, c), real=d)  # dtype from the components
    q2 = wp.quatd(quat=wp.quatd(d, c, b, a))
    q[0], q[1], q[2] = q0, q1, q2
    q[3] = wp.quaternion(quat=wp.quat(1.0, 2.0, 3.0, 4.0), dtype=f64)  # a conversion
    p = wp.vec3d(a, b, c)
    t[0] = wp.transformation(p=p, q=q0)
    t[1] = wp.transformation(p, q=q1, dtype=f64)
    t[2] = wp.transformd(p=p, q=q2)
    s[0] = wp.spatial_vectord(w=p, v=wp.vec3d(d, d, d))
    s[1] = wp.spatial_vectord(wx=a, wy=b, wz=c, vx=d, vy=a, vz=b)
    s[2] = wp.spatial_vectord(p, v=p)


def test_constructor_keywords():
    x0 = np.array([0.5, -1.0, 2.0, 3.0])
    q = wp.zeros(4, dtype=wp.quatd)
    t = wp.zeros(3, dtype=wp.transformd)
    s = wp.zeros(3, dtype=wp.spatial_vectord)
    wp.launch(_keyword_constructors, 1, inputs=[wp.array(x0, dtype=f64), q, t, s])
    a, b, c, d = x0
    np.testing.assert_array_equal(q.numpy(), [[a, b, c, d], [a, b, c, d], [d, c, b, a], [1, 2, 3, 4]])
    np.testing.assert_array_equal(t.numpy(), [[a, b, c, a, b, c, d], [a, b, c, a, b, c, d],
                                              [a, b, c, d, c, b, a]])
    np.testing.assert_array_equal(s.numpy(), [[a, b, c, d, d, d], [a, b, c, d, a, b], [a, b, c, a, b, c]])
    x = wp.array(x0, dtype=f64, requires_grad=True)
    outs = [wp.zeros(4, dtype=wp.quatd, requires_grad=True), wp.zeros(3, dtype=wp.transformd, requires_grad=True),
            wp.zeros(3, dtype=wp.spatial_vectord, requires_grad=True)]
    wp.testing.check_gradients(_keyword_constructors, 1, [x], outs)


def test_cast_takes_its_dtype_positionally():
    @wp.kernel
    def casts(x: wp.array(dtype=float), y: wp.array(dtype=wp.int32)):
        y[0] = wp.cast(x[0], wp.int32)
        y[1] = wp.cast(a=x[0], dtype=wp.int32)
        y[2] = wp.cast(x[0], dtype=int)

    y = wp.zeros(3, dtype=wp.int32)
    wp.launch(casts, 1, inputs=[wp.array([2.0], dtype=float), y])
    np.testing.assert_array_equal(y.numpy(), [0x40000000] * 3)
    assert wp.cast(wp.int32(0x40000000), wp.float32) == 2.0  # and on the host

    @wp.kernel
    def twice(x: wp.array(dtype=float), y: wp.array(dtype=wp.int32)):
        y[0] = wp.cast(x[0], wp.int32, dtype=wp.int32)

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms_more.py:\d+: cast\(\) got multiple values for "
                                                 "argument 'dtype'"):
        wp.launch(twice, 1, inputs=[wp.array([2.0], dtype=float), y])


@pytest.mark.parametrize("expr, message", [
    ("wp.quat(x=1.0, y=2.0, z=3.0)", r"quat\(\) takes its components positionally or by name in one of the forms "
                                      r"\(x, y, z, w\); \(ijk, real\); \(quat\); got 0 positional and x, y, z"),
    ("wp.quat(1.0, x=2.0, y=3.0, z=4.0)", r"in one of the forms"),
    ("wp.quat(s=1.0)", r"quat\(\): keyword s is not taken \(it takes x, y, z, w, ijk, real, quat, dtype\)"),
    ("wp.spatial_vector(w=wp.vec3())", r"in one of the forms \(w, v\); \(wx, wy, wz, vx, vy, vz\)"),
    ("wp.vec3(x=1.0, y=2.0, z=3.0)", r"keyword x is not taken \(it takes dtype\)"),  # Warp refuses too
    ("wp.quaternion(x=wp.float32(1.0), y=2.0, z=3.0, w=wp.float64(4.0))",
     r"component 3 is float64, not float32"),
    ("wp.mat44(wp.vec3(), wp.quat_identity(), wp.vec3())", r"removed from Warp in 1.10 in favor of "
                                                           r"transform_compose"),
    ("wp.matrix(pos=wp.vec3(), rot=wp.quat_identity(), scale=wp.vec3(), dtype=float)", r"removed from Warp"),
])
def test_bad_constructor_keywords_are_located_errors(expr, message, tmp_path):
    import importlib.util
    path = tmp_path / "bad_keywords.py"
    path.write_text("import adjit as wp\n\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n"
                    f"    v = {expr}\n    y[0] = 1.0\n")
    spec = importlib.util.spec_from_file_location("bad_keywords", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.KernelError, match=r"bad_keywords.py:6: .*" + message):
        wp.launch(module.k, 1, inputs=[wp.zeros(1, dtype=float)])


# -- a @func array parameter that defaults to None ---------------------------------------------------

@wp.func
def _weighted(x: f64, w: wp.array(dtype=f64) = None):
    if w:
        return x * x * w[0]
    if not w:
        return f64(3.0) * x
    return f64(0.0)


@wp.func
def _weighted_is(x: f64, w: wp.array(dtype=f64) = None):
    if w is None:
        return -x
    return x * w[0]


@wp.kernel
def _calls_weighted(x: wp.array(dtype=f64), w: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    y[0] = _weighted(x[0], w) + _weighted_is(x[0], w=w)


def test_func_array_parameter_defaulting_to_none():
    # Given the array (the kernel's own parameter, which a launch may set to None: Warp's null array),
    # the function tests it as Warp does.
    x0 = np.array([1.5])
    x, y = wp.array(x0, dtype=f64, requires_grad=True), wp.zeros(1, dtype=f64, requires_grad=True)
    w = wp.array([2.0], dtype=f64, requires_grad=True)
    wp.launch(_calls_weighted, 1, inputs=[x, w, y])
    assert y.numpy()[0] == 1.5 * 1.5 * 2.0 + 1.5 * 2.0
    wp.launch(_calls_weighted, 1, inputs=[x, None, y])
    assert y.numpy()[0] == 3.0 * 1.5 - 1.5
    wp.testing.check_gradients(_calls_weighted, 1, [x, w], [y])
    with wp.Tape() as tape:
        wp.launch(_calls_weighted, 1, inputs=[x, None, y])
    tape.backward(grads={y: np.ones(1)})
    assert x.grad.numpy()[0] == 2.0  # d(3x - x)/dx

    # Left out, it would be a null array built inside the kernel: Warp 1.19's C++ build fails on
    # such a call, adjit says so where the call is.
    @wp.kernel
    def leaves_it_out(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
        y[0] = _weighted(x[0])

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms_more.py:\d+: _weighted\(\) is called without its "
                                                 r"argument 'w', whose default is None.*pass the argument"):
        wp.launch(leaves_it_out, 1, inputs=[x, y])


# -- breakpoint() and wp.array(ptr=...) in kernels ------------------------------------------------------

def test_breakpoint_does_nothing_and_warns_once(caplog):
    @wp.kernel
    def stops(x: wp.array(dtype=float)):
        i = wp.tid()
        breakpoint()
        wp.breakpoint()
        x[i] = 1.0

    x = wp.zeros(2, dtype=float)
    with caplog.at_level("WARNING", logger="adjit.compile"):
        wp.launch(stops, 2, inputs=[x])
        wp.launch(stops, 2, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), [1.0, 1.0])
    warned = [r.getMessage() for r in caplog.records if "breakpoint()" in r.getMessage()]
    assert len(warned) == 2, warned  # once per call site
    assert all("does nothing in adjit" in m and "test_warp_idioms_more.py:" in m for m in warned)

    @wp.kernel
    def with_argument(x: wp.array(dtype=float)):
        breakpoint(1)

    with pytest.raises(wp.KernelSyntaxError, match=r"test_warp_idioms_more.py:\d+: breakpoint\(\) takes no "
                                                   "arguments"):
        wp.launch(with_argument, 1, inputs=[x])


def test_array_from_a_pointer_in_a_kernel_is_a_located_error():
    @wp.kernel
    def from_pointer(p: wp.uint64, y: wp.array(dtype=float)):
        a = wp.array(ptr=p, shape=(2,), dtype=float)
        y[0] = a[0]

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms_more.py:\d+: wp.array\(ptr=..., shape=..., "
                                                 r"dtype=...\) inside a kernel .* is not supported in adjit"):
        wp.launch(from_pointer, 1, inputs=[wp.uint64(0), wp.zeros(1, dtype=float)])


# -- bitwise operators on integer matrices (Warp's bit_and ... invert take them, as vectors) -----------

mat22i = wp.types.matrix(shape=(2, 2), dtype=wp.int32)
mat23u8 = wp.types.matrix(shape=(2, 3), dtype=wp.uint8)


@wp.kernel
def _matrix_bits(a: wp.array(dtype=mat22i), b: wp.array(dtype=mat23u8), out: wp.array(dtype=mat22i),
                 outb: wp.array(dtype=mat23u8)):
    m, n = a[0], a[1]
    out[0] = (m & n) | (m ^ n)
    out[1] = (m << n) + (~m >> mat22i(1, 1, 1, 1))
    out[2] = wp.bit_xor(m, n) + wp.invert(n)
    outb[0] = ~b[0] & mat23u8(wp.uint8(15), wp.uint8(15), wp.uint8(15), wp.uint8(15), wp.uint8(15),
                                wp.uint8(15))


def test_bitwise_operators_on_integer_matrices():
    m0 = np.array([[1, 2], [3, -4]], np.int32)
    n0 = np.array([[4, 1], [2, 3]], np.int32)
    b0 = np.arange(6, dtype=np.uint8).reshape(2, 3)
    out, outb = wp.zeros(3, dtype=mat22i), wp.zeros(1, dtype=mat23u8)
    wp.launch(_matrix_bits, 1, inputs=[wp.array(np.stack([m0, n0]), dtype=mat22i), wp.array(b0[None], dtype=mat23u8),
                                       out, outb])
    np.testing.assert_array_equal(out.numpy(), [(m0 & n0) | (m0 ^ n0), (m0 << n0) + (~m0 >> 1), (m0 ^ n0) + ~n0])
    np.testing.assert_array_equal(outb.numpy()[0], ~b0 & 15)

    @wp.kernel
    def float_matrix(a: wp.array(dtype=wp.mat22)):
        a[0] = a[0] & a[0]

    with pytest.raises(wp.KernelTypeError, match=r"test_warp_idioms_more.py:\d+: & needs integer operands, got "
                                                 r"mat22"):
        wp.launch(float_matrix, 1, inputs=[wp.zeros(1, dtype=wp.mat22)])
