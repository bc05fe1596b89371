"""The array fields of a struct made in a kernel are Warp's null arrays, as
in Warp: Newton's collide.compute_shape_aabbs makes a
``SupportMapDataProvider()`` (two array fields) and passes it to a @func that
tests them. A null array has no elements: false in ``if a:``, shape 0, and an
access is out of range. Expected values are Warp 1.19's for the same kernels."""
import numpy as np
import pytest

import adjit as wp


@wp.struct
class Provider:
    support: wp.array(dtype=wp.vec4i)
    neighbors: wp.array(dtype=int)
    grid: wp.array2d(dtype=float)
    scale: float


@wp.func
def lookup(p: Provider, i: int) -> int:
    if p.neighbors:
        return p.neighbors[i]
    return -1


@wp.kernel
def made_here(flag: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    if flag[i] > 0:
        p = Provider()
        p.scale = 2.0
    else:
        p = Provider()
    # used after the branch that made it
    out[i * 5 + 0] = lookup(p, i)
    out[i * 5 + 1] = p.neighbors.shape[0]
    out[i * 5 + 2] = p.grid.shape[1]
    out[i * 5 + 3] = wp.where(p.support, 1, 0)
    out[i * 5 + 4] = int(p.scale)


def test_struct_made_in_a_kernel_holds_null_arrays():
    out = wp.full(10, 99, dtype=int)
    wp.launch(made_here, dim=2, inputs=[wp.array(np.array([1, 0], np.int32), dtype=int)], outputs=[out])
    # Warp 1.19: [-1, 0, 0, 0, 2, -1, 0, 0, 0, 0]
    assert out.numpy().tolist() == [-1, 0, 0, 0, 2, -1, 0, 0, 0, 0]


@wp.kernel
def reads_a_null_array(out: wp.array(dtype=int)):
    p = Provider()
    out[0] = p.neighbors[0]


def test_reading_a_null_array_is_out_of_range(monkeypatch):
    out = wp.zeros(1, dtype=int)
    with pytest.raises(Exception, match=r"(?s)out of (range|bounds).*Provider\.neighbors"):
        wp.launch(reads_a_null_array, dim=1, outputs=[out])
        wp.synchronize()


@wp.func
def made_in_a_func(k: int) -> int:
    p = Provider()
    if k > 0:
        p.scale = float(k)
    if p.support:
        return 100
    return p.grid.shape[0] + int(p.scale)


@wp.kernel
def calls_it(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = made_in_a_func(i)


def test_a_struct_made_in_a_device_function():
    out = wp.zeros(3, dtype=int)
    wp.launch(calls_it, dim=3, outputs=[out])
    assert out.numpy().tolist() == [0, 1, 2]  # Warp 1.19: [0, 1, 2]
