"""Small points of Warp 1.19's API that its own test suite relies on (issue 12),
each checked against the real Warp on the CPU when written."""
import ctypes

import numpy as np
import pytest

import adjit as wp


@pytest.mark.parametrize("t, ctype", [
    (wp.float16, ctypes.c_uint16), (wp.float32, ctypes.c_float), (wp.float64, ctypes.c_double),
    (wp.int8, ctypes.c_int8), (wp.uint8, ctypes.c_uint8), (wp.int16, ctypes.c_int16),
    (wp.uint16, ctypes.c_uint16), (wp.int32, ctypes.c_int32), (wp.uint32, ctypes.c_uint32),
    (wp.int64, ctypes.c_int64), (wp.uint64, ctypes.c_uint64), (wp.bool, ctypes.c_bool),
    (wp.vec3, ctypes.c_float), (wp.mat22d, ctypes.c_double), (wp.vec3h, ctypes.c_uint16)])
def test_types_have_warps_ctypes_type(t, ctype):
    # Warp's test_scalar_ops wraps values with wptype._type_(value).value
    assert t._type_ is ctype
    if t in (wp.int8, wp.uint8):
        assert t._type_(-129 if t is wp.int8 else 257).value == (127 if t is wp.int8 else 1)


@wp.kernel
def print_small_types(value: int):
    wp.print(wp.int8(value))
    print(wp.int16(value), wp.uint8(value), wp.uint16(value), wp.uint32(value), wp.uint64(value))
    print(wp.float16(value), wp.bfloat16(value), wp.float(value) * 0.5)
    print(wp.vector(wp.int8(value), wp.int8(2)), wp.matrix(wp.uint16(value), wp.uint16(1), wp.uint16(2),
                                                           wp.uint16(3), shape=(2, 2)), wp.vec2h(wp.float16(1.5)))
    wp.expect_eq(wp.vec2ub(wp.uint8(value)), wp.vec2ub(wp.uint8(3)))


def test_print_and_expect_of_8_and_16_bit_values(capfd):
    # as Warp's test_print_numeric: C's promotion of each type, unsigned ones as unsigned
    wp.launch(print_small_types, 1, inputs=[-1])
    wp.synchronize()
    lines = capfd.readouterr().out.splitlines()
    assert lines[:4] == ["-1", "-1 255 65535 4294967295 18446744073709551615", "-1 -1 -0.5",
                         "[-1 2] [[65535 1] [2 3]] [1.5 1.5]"]
    assert lines[4].endswith("failed: [255 255] vs [3 3]")


@wp.kernel
def read_mat22(m: wp.mat22, out: wp.array(dtype=wp.mat22)):
    out[0] = m


@pytest.mark.parametrize("value", [(1, 2, 3, 4), [1, 2, 3, 4], np.arange(1.0, 5.0), [[1, 2], [3, 4]],
                                   wp.vec4(1, 2, 3, 4), wp.mat22d(1, 2, 3, 4)])
def test_matrix_argument_from_a_flat_or_nested_sequence(value):
    # Warp 1.19 takes a matrix argument as its components row by row, flat or nested
    out = wp.zeros(1, dtype=wp.mat22)
    wp.launch(read_mat22, 1, inputs=[value, out])
    np.testing.assert_array_equal(out.numpy()[0], [[1, 2], [3, 4]])


@pytest.mark.parametrize("value", [(1, 2, 3), (1, 2, 3, 4, 5), np.arange(4.0).reshape(4, 1), 42])
def test_matrix_argument_of_another_size_is_refused(value):
    with pytest.raises(wp.LaunchError, match="argument 'm' must be mat22"):
        wp.launch(read_mat22, 1, inputs=[value, wp.zeros(1, dtype=wp.mat22)])


def test_matrix_constructor_fills_from_one_scalar():
    np.testing.assert_array_equal(wp.mat22(42), np.full((2, 2), 42, np.float32))
    np.testing.assert_array_equal(wp.mat33d(wp.float16(1.5)), np.full((3, 3), 1.5))
    np.testing.assert_array_equal(wp.mat22((1, 2, 3, 4)), [[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        wp.mat22(1, 2, 3)


CONSTANTS = {"e": np.e, "pi": np.pi, "half_pi": np.pi / 2, "tau": 2 * np.pi, "phi": (1 + np.sqrt(5)) / 2,
             "ln2": np.log(2), "ln10": np.log(10), "log2e": np.log2(np.e), "log10e": np.log10(np.e),
             "inf": np.inf}


@pytest.mark.parametrize("name", list(CONSTANTS) + ["nan"])
def test_math_constants_on_the_host(name):
    for spelling in (name, name.upper()):
        value = getattr(wp, spelling)
        assert type(value) is float
        if name == "nan":
            assert np.isnan(value)
        else:
            assert value == pytest.approx(CONSTANTS[name], rel=1e-15)


@wp.kernel
def read_constants(f32: wp.array(dtype=float), f64: wp.array(dtype=wp.float64), f16: wp.array(dtype=wp.float16)):
    f32[0] = wp.pi
    f32[1] = -wp.INF
    f32[2] = wp.NAN
    f32[3] = wp.LOG2E * wp.ln2
    f64[0] = wp.float64(wp.pi)
    f64[1] = wp.float64(1.0) + wp.HALF_PI
    f64[2] = wp.tau
    f16[0] = wp.float16(2.0) * wp.inf


def test_math_constants_in_kernels():
    f32, f64, f16 = wp.zeros(4), wp.zeros(3, dtype=wp.float64), wp.zeros(1, dtype=wp.float16)
    wp.launch(read_constants, 1, inputs=[f32, f64, f16])
    np.testing.assert_array_equal(f32.numpy(), np.array([np.pi, -np.inf, np.nan, 1.0], np.float32))
    np.testing.assert_array_equal(f64.numpy(), [np.pi, 1 + np.pi / 2, 2 * np.pi])  # float64 keeps every digit
    assert f16.numpy()[0] == np.inf


@wp.kernel
def expect_by_keyword(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3)):
    wp.expect_near(x[0], wp.float64(1.25), tolerance=wp.float64(0.1))
    wp.expect_near(b=v[0], a=wp.vec3(1.0, 2.0, 3.0), tolerance=0.01)
    wp.expect_eq(a=x[0], b=wp.float64(1.0))
    wp.expect_neq(v[0], b=wp.vec3(0.0))


def test_expect_takes_warps_keywords(capfd):
    # Warp's builtins name their parameters a, b and tolerance
    x = wp.array(np.array([1.0]), dtype=wp.float64)
    v = wp.array(np.array([[1.0, 2.0, 3.05]], np.float32), dtype=wp.vec3)
    wp.launch(expect_by_keyword, 1, inputs=[x, v])
    wp.synchronize()
    lines = capfd.readouterr().out.splitlines()
    assert [ln.split(": ", 1)[1] for ln in lines] == [
        "wp.expect_near(x[0], wp.float64(1.25), tolerance=wp.float64(0.1)) failed: 1 vs 1.25",
        "wp.expect_near(b=v[0], a=wp.vec3(1.0, 2.0, 3.0), tolerance=0.01) failed: [1 2 3] vs [1 2 3.05]"]


def test_expect_refuses_unknown_or_missing_arguments():
    def near_rtol(x: float):
        wp.expect_near(x, 1.0, rtol=0.1)

    def eq_one(x: float):
        wp.expect_eq(a=x)

    for f in (near_rtol, eq_one):
        with pytest.raises(wp.KernelSyntaxError, match=r"takes a, b"):
            wp.launch(wp.kernel(f), 1, inputs=[1.0])


def test_array_to_the_cpu_is_the_array_itself():
    a = wp.array(np.arange(3.0, dtype=np.float32), requires_grad=True)
    assert a.to("cpu") is a and a.to(wp.get_device("cpu"), requires_grad=False) is a  # as Warp's
    assert a.requires_grad
    view = a[::2]
    assert view.to("cpu") is view
    with pytest.raises(ValueError, match="not available"):
        a.to("cuda:0")


def test_constructors_take_warps_n_keyword():
    # Warp's older spelling of a 1-d shape (its test_ctypes uses it); n wins over shape, as in Warp
    a = wp.zeros(n=3, dtype=wp.vec2)
    assert a.shape == (3,) and a.dtype == wp.vec2
    np.testing.assert_array_equal(a.numpy(), np.zeros((3, 2), np.float32))
    np.testing.assert_array_equal(wp.ones(n=2).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(wp.full(n=2, value=3.5).numpy(), [3.5, 3.5])
    assert wp.empty(n=4, dtype=wp.int32).shape == (4,)
    assert wp.zeros(3, n=4).shape == (4,)
    assert wp.zeros().shape == (0,)  # as Warp's: no shape is an empty 1-d array
    with pytest.raises(TypeError):
        wp.zeros(n=(2, 3))


def test_array_arithmetic_is_elementwise_as_warps():
    # Warp 1.19's arrays: a + s, s - a, a % s, -a ... are wp.map launches of the builtin (a new array)
    a = wp.array((1, 2, 3), dtype=wp.float32)
    s = wp.float32(5)  # a numpy scalar on adjit's host: on the left it maps too
    cases = {"a + s": (a + s, [6, 7, 8]), "s + a": (s + a, [6, 7, 8]), "s - a": (s - a, [4, 3, 2]),
             "a * s": (a * s, [5, 10, 15]), "s % a": (s % a, [0, 1, 2]), "s / a": (s / a, [5, 2.5, 5 / 3]),
             "a // s": (a // s, [0, 0, 0]), "a ** s": (a ** s, [1, 32, 243]), "-a": (-a, [-1, -2, -3]),
             "+a": (+a, [1, 2, 3]), "a + a": (a + a, [2, 4, 6]), "2.0 - a": (2.0 - a, [1, 0, -1])}
    for what, (r, expect) in cases.items():
        assert type(r) is wp.Array and r.dtype == wp.float32 and r is not a, what
        np.testing.assert_allclose(r.numpy(), np.array(expect, np.float32), rtol=1e-6, err_msg=what)
    i = wp.array((-7, 7), dtype=wp.int8)
    np.testing.assert_array_equal((i / wp.int8(2)).numpy(), [-3, 3])  # the kernels' integer division
    np.testing.assert_array_equal((i % wp.int8(3)).numpy(), [-1, 1])
    q = a * wp.quat(0.0, 0.0, 0.0, 1.0)
    assert q.dtype == wp.quat and q.numpy()[2].tolist() == [0, 0, 0, 3]
    with pytest.raises(TypeError, match="of one type"):
        a + 5  # an int is an int32, as in Warp (which raises too)
    with pytest.raises(ValueError, match="broadcast"):
        a + wp.zeros(2)


def test_array_in_place_arithmetic_writes_the_array():
    a = wp.array((1.0, 2.0, 3.0), dtype=float)
    b, tail = a, a[1:]
    a += wp.float32(1.0)
    a *= 2.0
    assert a is b
    np.testing.assert_array_equal(tail.numpy(), [6.0, 8.0])
    i = wp.array((1, 2), dtype=int)
    i -= 1
    np.testing.assert_array_equal(i.numpy(), [0, 1])


def test_array_arithmetic_is_recorded_on_the_tape():
    x = wp.array((1.0, 2.0, 3.0), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        y = x * wp.float32(3.0) + x * x
    assert y.requires_grad
    tape.backward(grads={y: wp.ones(3)})
    np.testing.assert_array_equal(x.grad.numpy(), 3.0 + 2.0 * x.numpy())


def test_numpy_arrays_and_ufuncs_keep_numpys_meaning():
    a = wp.array((1.0, 2.0, 3.0), dtype=float)
    for r, expect in [(np.ones(3) + a, [2, 3, 4]), (a - np.ones(3), [0, 1, 2]), (np.sin(a), np.sin([1, 2, 3])),
                      (np.ones(3) == a, [True, False, False])]:
        assert type(r) is np.ndarray
        np.testing.assert_allclose(r, expect, rtol=1e-6)
    n = np.zeros(3, np.float32)
    n += a
    np.testing.assert_array_equal(n, [1, 2, 3])


def _compile_error(f, *inputs):
    with pytest.raises(wp.KernelTypeError) as e:
        wp.launch(wp.kernel(f), 1, inputs=list(inputs))
    return str(e.value)


def test_constructors_refuse_a_float_of_the_other_precision_as_fill_or_quaternion_component():
    # as their component form already did (Warp refuses each; adjit asks for the explicit conversion)
    def mat_fill(x: wp.float64):
        m = wp.mat22(x)  # noqa: F841

    def vec_fill(x: float):
        v = wp.vec3h(x)  # noqa: F841

    def quat_components(x: wp.float64):
        q = wp.quat(x, x, x, x)  # noqa: F841

    def quat_xyz_w(v: wp.vec3d, w: wp.float64):
        q = wp.quat(v, w)  # noqa: F841

    assert "mat22(): the fill value is float64, not float32; convert it explicitly" in _compile_error(mat_fill, 1.0)
    assert "vec3h(): the fill value is float32, not float16" in _compile_error(vec_fill, 1.0)
    assert "quat() component 0 is float64, not float32" in _compile_error(quat_components, 1.0)
    assert "quat() component 0 is float64" in _compile_error(quat_xyz_w, wp.vec3d(1, 2, 3), 1.0)


@wp.kernel
def explicit_fills(x: wp.float64, out: wp.array(dtype=wp.mat22), q: wp.array(dtype=wp.quat)):
    out[0] = wp.mat22(wp.float32(x))
    q[0] = wp.quat(wp.float32(x), 2.0, 3.0, wp.float32(x))


def test_explicit_conversions_and_literals_still_fill():
    out, q = wp.zeros(1, dtype=wp.mat22), wp.zeros(1, dtype=wp.quat)
    wp.launch(explicit_fills, 1, inputs=[1.5, out, q])
    np.testing.assert_array_equal(out.numpy()[0], np.full((2, 2), 1.5))
    np.testing.assert_array_equal(q.numpy()[0], [1.5, 2.0, 3.0, 1.5])
