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
