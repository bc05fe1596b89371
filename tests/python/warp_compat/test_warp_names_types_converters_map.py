"""Warp 1.19 host names (issue 12): ``warp.types`` introspection, the torch
and JAX converters, ``wp.map`` (Warp's examples, broadcasting, Python
functions and lambdas, gradients), ``transform_expand``, activity timing and
the code generator's error names. Values are checked against numpy."""
import ctypes

import numpy as np
import pytest

import adjit as wp


# --- warp.types ------------------------------------------------------------------------------

@wp.struct
class Pair:
    a: float
    b: wp.vec3


def test_type_repr_and_type_predicates():
    T = wp.types
    assert T.type_repr(wp.vec3f) == T.type_repr(wp.vec3) == "vector(length=3, dtype=float32)"
    assert T.type_repr(wp.vec2i) == "vector(length=2, dtype=int32)"
    assert T.type_repr(wp.mat33) == "matrix(shape=(3, 3), dtype=float32)"
    assert T.type_repr(wp.float32) == T.type_repr(float) == "float32"
    assert T.type_repr(wp.array(dtype=wp.mat22d, ndim=3)) == \
        "array(ndim=3, dtype=matrix(shape=(2, 2), dtype=float64))"
    assert [T.type_size_in_bytes(t) for t in (wp.vec3, wp.mat33d, wp.quath, wp.transform, wp.uint8)] == \
        [12, 72, 8, 28, 1]
    assert [T.type_size(t) for t in (wp.float64, wp.vec4, wp.mat33, wp.spatial_vector, Pair)] == [1, 4, 9, 6, 1]
    assert T.type_scalar_type(wp.mat44d) == wp.float64 and T.type_scalar_type(wp.vec3h) == wp.float16
    assert T.types_equal(wp.vec3, wp.vec3f) and not T.types_equal(wp.vec3, wp.vec3d)
    assert not T.types_equal(wp.mat22, wp.vec4)
    assert T.type_is_vector(wp.vec3) and not T.type_is_vector(wp.transform) and not T.type_is_vector(wp.mat22)
    assert T.type_is_matrix(wp.spatial_matrix) and T.type_is_quaternion(wp.quatd)
    assert T.type_is_transformation(wp.transformd) and not T.type_is_transformation(wp.quat)
    assert T.type_is_scalar(int) and T.type_is_scalar(wp.bool) and not T.type_is_scalar(wp.vec2)
    assert T.type_is_struct(Pair) and not T.type_is_struct(wp.vec3)
    assert [T.type_ctype(t) for t in (wp.float32, wp.vec3d, wp.float16, wp.int8, wp.uint64, wp.bool)] == \
        [ctypes.c_float, ctypes.c_double, ctypes.c_uint16, ctypes.c_int8, ctypes.c_uint64, ctypes.c_bool]


def test_value_predicates():
    T = wp.types
    values = [1.5, 2, wp.float16(1.0), wp.vec3(1, 2, 3), wp.mat22(), wp.quat(), wp.transform(), Pair(),
              wp.zeros(2), "x"]
    table = {name: [getattr(T, name)(v) for v in values] for name in (
        "is_scalar", "is_float", "is_int", "is_vector", "is_matrix", "is_quaternion", "is_transformation",
        "is_composite", "is_value", "is_struct", "is_array")}
    assert table == {
        "is_scalar": [1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
        "is_float": [1, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        "is_int": [0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
        "is_vector": [0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        "is_matrix": [0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        "is_quaternion": [0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        "is_transformation": [0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
        "is_composite": [0, 0, 0, 1, 1, 1, 1, 0, 0, 0],
        "is_value": [1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
        "is_struct": [0, 0, 0, 0, 0, 0, 0, 1, 0, 0],
        "is_array": [0, 0, 0, 0, 0, 0, 0, 0, 1, 0]}


# --- interop converters ----------------------------------------------------------------------

def test_torch_converters_round_trip_and_refuse_what_adjit_lacks():
    torch = pytest.importorskip("torch")
    for t in (wp.float16, wp.float32, wp.float64, wp.int8, wp.int16, wp.int32, wp.int64, wp.uint8, wp.bool):
        assert wp.dtype_from_torch(wp.dtype_to_torch(t)) == t
    assert wp.dtype_to_torch(wp.mat33) == torch.float32
    assert wp.device_to_torch("cpu") == "cpu" and wp.device_from_torch("cpu") == wp.get_device("cpu")
    with pytest.raises(ValueError, match="'cuda:1' is not available"):
        wp.device_from_torch(torch.device("cuda:1"))
    with pytest.raises(ValueError, match="not available"):
        wp.device_to_torch("cuda:0")
    # to_dlpack: a vector array gives its components as the last dimension, sharing memory.
    a = wp.array(np.arange(6, dtype=np.float64).reshape(2, 3), dtype=wp.vec3d)
    t = torch.from_dlpack(wp.to_dlpack(a))
    assert t.shape == (2, 3) and t.dtype == torch.float64
    t[0, 1] = 7.0
    np.testing.assert_array_equal(a.numpy(), [[0, 7, 2], [3, 4, 5]])
    with pytest.raises(TypeError, match="PyCapsule does not implement the DLPack protocol"):
        wp.from_dlpack(wp.to_dlpack(a))  # capsules: not yet (numpy imports them read-only)


def test_jax_converters_round_trip():
    jax = pytest.importorskip("jax")
    for t in (wp.float16, wp.float32, wp.int8, wp.int32, wp.uint16, wp.bool):
        assert wp.dtype_from_jax(wp.dtype_to_jax(t)) == t
    assert wp.dtype_to_jax(wp.vec4h) == jax.numpy.float16
    assert wp.device_from_jax(wp.device_to_jax("cpu")) == wp.get_device("cpu")
    with pytest.raises(TypeError, match="adjit has no type"):
        wp.dtype_from_jax(jax.numpy.complex64)


# --- wp.map ----------------------------------------------------------------------------------

def test_map_warps_documented_examples():
    a = wp.array([1, 2, 3], dtype=wp.float32)
    b = wp.array([4, 5, 6], dtype=wp.float32)
    c = wp.array([7, 8, 9], dtype=wp.float32)
    np.testing.assert_array_equal(wp.map(lambda x, y, z: x + 2.0 * y - z, a, b, c).numpy(), [2, 4, 6])
    xs = wp.array([-1.0, 0.0, 1.0], dtype=wp.float32)
    assert wp.map(wp.clamp, xs, -0.5, 0.5, out=xs) is xs
    np.testing.assert_array_equal(xs.numpy(), [-0.5, 0.0, 0.5])
    # One transform value for every point.
    tf = wp.transform((1.0, 2.0, 3.0), wp.quat_rpy(0.2, -0.6, 0.1))
    pts = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    moved = wp.map(wp.transform_point, tf, wp.array(pts, dtype=wp.vec3)).numpy()
    np.testing.assert_allclose(moved, [wp.transform_point(tf, p) for p in pts], rtol=1e-6)
    # An indexed array.
    arr = wp.array(np.arange(10, dtype=np.float32))
    iarr = wp.indexedarray1d(arr, [wp.array([1, 3, 5, 7, 9], dtype=int)])
    np.testing.assert_array_equal(wp.map(lambda x: x * 10.0, iarr).numpy(), [10, 30, 50, 70, 90])


def test_map_a_builtin_and_a_python_function_against_numpy():
    xs = np.linspace(-2.0, 2.0, 7).astype(np.float32)
    np.testing.assert_allclose(wp.map(wp.sin, wp.array(xs)).numpy(), np.sin(xs), rtol=1e-6, atol=1e-7)
    scale = 3.0

    def cubic(x, y):
        return x * x * y + scale

    ys = np.arange(7, dtype=np.float32)
    np.testing.assert_allclose(wp.map(cubic, wp.array(xs), wp.array(ys)).numpy(), xs * xs * ys + 3.0,
                               rtol=1e-6)
    # A lambda made anew each time is compiled once.
    kernels = {wp.map(lambda x: x * scale, wp.array(xs), return_kernel=True) for _ in range(3)}
    assert len(kernels) == 1


def test_map_broadcasts_as_numpy():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    col = np.array([[10.0], [20.0]], np.float32)
    row = np.array([1.0, 2.0, 3.0], np.float32)
    r = wp.map(lambda x, y, z: x + y * z, wp.array(m), wp.array(col), wp.array(row))
    assert r.shape == (2, 3)
    np.testing.assert_array_equal(r.numpy(), m + col * row)
    with pytest.raises(ValueError, match=r"\(2, 3\), \(2,\)\] that do not broadcast"):
        wp.map(wp.add, wp.array(m), wp.zeros(2))


@wp.func
def polar(r: float, t: float):
    return r * wp.cos(t), r * wp.sin(t)


def test_map_several_results_and_out():
    r = np.array([1.0, 2.0, 0.5], np.float32)
    t = np.array([0.0, 0.5, 2.0], np.float32)
    x, y = wp.map(polar, wp.array(r), wp.array(t))
    np.testing.assert_allclose(x.numpy(), r * np.cos(t), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), r * np.sin(t), rtol=1e-6)
    outs = (wp.zeros(3), wp.zeros(3))
    got = wp.map(polar, wp.array(r), 0.5, out=outs)
    assert got[0] is outs[0] and got[1] is outs[1]
    np.testing.assert_allclose(outs[1].numpy(), r * np.sin(0.5), rtol=1e-6)
    with pytest.raises(ValueError, match="out must be 2 array"):
        wp.map(polar, wp.array(r), wp.array(t), out=wp.zeros(3))


def test_map_gradients_through_the_tape():
    xs = np.array([0.3, -1.2, 2.0])
    ws = np.array([1.5, -0.5])
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    w = wp.array(ws.reshape(2, 1), dtype=wp.float64, requires_grad=True)  # broadcast along x
    seed = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    tape = wp.Tape()
    with tape:
        y = wp.map(lambda a, b: b * a * a + wp.sin(a), x, w)  # y[i, j] = w[i] x[j]^2 + sin(x[j])
    assert y.shape == (2, 3) and y.requires_grad
    np.testing.assert_allclose(y.numpy(), ws[:, None] * xs ** 2 + np.sin(xs), rtol=1e-14)
    tape.backward(grads={y: wp.array(seed, dtype=wp.float64)})
    # dy/dx[j] = 2 w[i] x[j] + cos(x[j]); dy/dw[i] = x[j]^2, summed over what broadcast.
    np.testing.assert_allclose(x.grad.numpy(), (seed * (2 * ws[:, None] * xs + np.cos(xs))).sum(0), rtol=1e-13)
    np.testing.assert_allclose(w.grad.numpy()[:, 0], (seed * xs ** 2).sum(1), rtol=1e-13)


def test_map_bad_calls_are_clear_errors():
    a = wp.zeros(3)
    with pytest.raises(TypeError, match="at least one adjit array"):
        wp.map(wp.sin, 1.0)
    with pytest.raises(TypeError, match="must be an @adjit.func or a builtin"):
        wp.map(np.sin, a)
    with pytest.raises(TypeError, match=r"map\(length\): length\(\) needs float vectors"):
        wp.map(wp.length, a)
    with pytest.raises(TypeError, match="several lambdas"):
        (wp.map(lambda x: x + 1.0, a), wp.map(lambda x: x * 2.0, a))
    with pytest.raises(ValueError, match="not available"):
        wp.map(wp.sin, a, device="cuda:0")


# --- transform_expand ------------------------------------------------------------------------

def test_transform_expand():
    t = wp.transform_expand([1.0, 2.0, 3.0, 0.0, 0.6, 0.0, 0.8])
    assert isinstance(t, type(wp.transform())) and t.dtype == np.float32
    np.testing.assert_allclose(wp.transform_get_translation(t), [1, 2, 3])
    np.testing.assert_allclose(wp.transform_get_rotation(t), [0, 0.6, 0, 0.8], rtol=1e-7)
    np.testing.assert_allclose(wp.transform_point(t, wp.vec3(1.0, 0.0, 0.0)), [1.28, 2.0, 2.04], rtol=1e-6)
    with pytest.raises(ValueError, match="takes 7 numbers"):
        wp.transform_expand([1.0, 2.0, 3.0])


# --- activity timing -------------------------------------------------------------------------

@wp.kernel
def scale_in_place(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


def test_timing_records_each_cpu_launch(capsys):
    a = wp.array(np.ones(64, np.float32), requires_grad=True)
    wp.launch(scale_in_place, 64, inputs=[a, 2.0])  # compiled before timing
    wp.timing_begin(cuda_filter=wp.TIMING_KERNEL)
    wp.launch(scale_in_place, 64, inputs=[a, 2.0])
    tape = wp.Tape()
    with tape:
        wp.launch(scale_in_place, 64, inputs=[a, 3.0])
    wp.timing_begin(cuda_filter=wp.TIMING_MEMCPY)  # nested: only copies, of which adjit launches none
    tape.backward(grads={a: wp.ones(64)})
    assert wp.timing_end() == []
    results = wp.timing_end()
    assert [r.name for r in results] == ["scale_in_place_cpu_kernel_forward"] * 2 + \
        ["scale_in_place_cpu_kernel_backward"]
    assert all(isinstance(r, wp.TimingResult) and r.device == "cpu" and r.filter == wp.TIMING_KERNEL
               and 0.0 < r.elapsed < 1e4 for r in results)
    np.testing.assert_array_equal(a.grad.numpy(), np.full(64, 3.0))
    wp.timing_print(results, indent="  ")
    printed = capsys.readouterr().out
    assert "  Activity summary:" in printed
    assert "| 2       | scale_in_place_cpu_kernel_forward" in printed
    assert "| 3       | cpu" in printed
    with pytest.raises(RuntimeError, match="no timing session is open"):
        wp.timing_end()
    with pytest.raises(TypeError, match="cuda_filter"):
        wp.timing_begin(cuda_filter="kernels")


def test_scoped_timer_with_a_filter_keeps_the_launches():
    a = wp.zeros(8)
    with wp.ScopedTimer("step", print=False, cuda_filter=wp.TIMING_ALL) as timer:
        wp.launch(scale_in_place, 8, inputs=[a, 2.0])
        wp.launch(scale_in_place, 8, inputs=[a, 2.0])
    assert [r.name for r in timer.timing_results] == ["scale_in_place_cpu_kernel_forward"] * 2
    assert sum(r.elapsed for r in timer.timing_results) <= timer.elapsed
    with wp.ScopedTimer("quiet", print=False) as timer:  # no filter: no activities
        wp.launch(scale_in_place, 8, inputs=[a, 2.0])
    assert timer.timing_results == []


# --- the code generator's error names --------------------------------------------------------

@wp.kernel
def adds_a_float64_to_a_float32(x: wp.array(dtype=float), d: wp.float64):
    i = wp.tid()
    x[i] = x[i] + d


def test_warp_codegen_errors_catch_adjits_kernel_errors():
    try:
        wp.launch(adds_a_float64_to_a_float32, 1, inputs=[wp.zeros(1), wp.float64(1.0)])
    except wp.WarpCodegenError as e:  # as Warp code catches compile errors
        caught = e
    assert isinstance(caught, wp.WarpCodegenTypeError) and isinstance(caught, wp.KernelTypeError)
    assert caught.lineno == adds_a_float64_to_a_float32.source.first_line + 3  # (after @wp.kernel)
    assert "x[i] = x[i] + d" in str(caught)
    for name in ("WarpCodegenValueError", "WarpCodegenKeyError", "WarpCodegenIndexError",
                 "WarpCodegenAttributeError"):
        assert issubclass(getattr(wp, name), wp.WarpCodegenError)
    assert issubclass(wp.WarpCodegenIndexError, IndexError) and issubclass(wp.KernelNameError,
                                                                            wp.WarpCodegenAttributeError)
