"""Type objects answer what Warp code reads from Warp's type classes:
``__name__`` (vec3f, mat33d, quatf, transformd, float32), ``_length_``,
``_shape_``, ``_wp_scalar_type_``, ``_wp_generic_type_str_``,
``_wp_type_params_``."""
import pytest

import adjit as wp


@pytest.mark.parametrize("t, name, length, shape, generic, params", [
    (wp.vec3, "vec3f", 3, (3,), "vec_t", [3, wp.float32]),
    (wp.vec3d, "vec3d", 3, (3,), "vec_t", [3, wp.float64]),
    (wp.vec2ui, "vec2ui", 2, (2,), "vec_t", [2, wp.uint32]),
    (wp.types.vector(length=6, dtype=wp.float16), "vec6h", 6, (6,), "vec_t", [6, wp.float16]),
    (wp.mat33, "mat33f", 9, (3, 3), "mat_t", [3, 3, wp.float32]),
    (wp.types.matrix(shape=(2, 4), dtype=wp.float64), "mat24d", 8, (2, 4), "mat_t", [2, 4, wp.float64]),
    (wp.quat, "quatf", 4, (4,), "quat_t", [wp.float32]),
    (wp.transformd, "transformd", 7, (7,), "transform_t", [wp.float64]),
])
def test_vector_and_matrix_types_look_like_warps_classes(t, name, length, shape, generic, params):
    assert t.__name__ == name
    assert t._length_ == length and t._shape_ == shape
    assert t._wp_scalar_type_ == params[-1]
    assert t._wp_generic_type_str_ == generic and t._wp_type_params_ == params


def test_scalar_types_are_named():
    assert [t.__name__ for t in (wp.float32, wp.float64, wp.int8, wp.uint64, wp.bool)] == \
        ["float32", "float64", "int8", "uint64", "bool"]
    # the class of the type objects keeps its own name
    assert type(wp.vec3).__name__ == "VectorType" and wp.types.VectorType.__name__ == "VectorType"


@wp.kernel
def generic_constructors(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    zero = wp.vector(length=3, dtype=wp.float64)  # zeros of the given type
    v = wp.vector(x[0], x[0] * wp.float64(2.0), wp.float64(5.0))  # a vec3d, from its values' type
    ints = wp.vector(1, 2, 3, 4)  # literals only: int32
    m = wp.matrix(shape=(2, 2), dtype=wp.float64)
    n = wp.matrix(x[0], wp.float64(2.0), wp.float64(3.0), wp.float64(4.0), shape=(2, 2))
    out[0] = zero[2] + v[1] + wp.float64(ints[3]) + m[1, 1] + n[0, 0] * n[1, 1]


def test_vector_and_matrix_constructors_in_kernels():
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(generic_constructors, 1, inputs=[wp.array([1.5], dtype=wp.float64)], outputs=[out])
    assert out.numpy()[0] == 0 + 3.0 + 4 + 0 + 1.5 * 4


def test_warp_type_introspection():
    T = wp.types
    assert T.type_repr(wp.vec3) == "vector(length=3, dtype=float32)"
    assert T.type_repr(wp.mat33d) == "matrix(shape=(3, 3), dtype=float64)"
    assert T.type_repr(wp.quat) == "quaternion(dtype=float32)"
    assert T.type_repr(wp.transformd) == "transformation(dtype=float64)"
    assert T.type_repr(wp.array(dtype=wp.vec3, ndim=2)) == "array(ndim=2, dtype=vector(length=3, dtype=float32))"
    assert T.type_repr(float) == "float32"
    assert [T.type_length(t) for t in (wp.float32, wp.vec4, wp.mat33, wp.transform)] == [1, 4, 9, 7]
    assert [T.type_size_in_bytes(t) for t in (wp.float64, wp.vec3d, wp.mat22h)] == [8, 24, 8]
    assert T.type_typestr(wp.vec3) == "<f4" and T.type_scalar_type(wp.array(dtype=wp.vec3h)) == wp.float16
    assert T.types_equal(float, wp.float32) and not T.types_equal(wp.vec3, wp.vec3d)
    assert T.types_equal(wp.vec3, __import__("typing").Any, match_generic=True)
    assert T.type_is_vector(wp.vec3) and not T.type_is_vector(wp.quat) and T.type_is_quaternion(wp.quat)
    assert T.type_is_matrix(wp.mat33) and T.type_is_transformation(wp.transform) and T.type_is_composite(wp.quat)
    assert T.type_is_float(float) and T.type_is_int(wp.uint8) and not T.type_is_int(wp.bool)
    assert T.type_is_value(wp.mat33) and not T.type_is_value(wp.array(dtype=float))
    assert T.type_is_array(wp.array(dtype=float))
