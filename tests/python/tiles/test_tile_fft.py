"""tile_fft and tile_ifft (Warp's FFTs of vec2 tiles) on the CPU against
numpy.fft: forward, inverse (unnormalized, as Warp's), batches in 2-d and
3-d tiles, power-of-two and other sizes, float32 and float64; gradients
against float64 finite differences and Warp's adjoint (N ifft of the
output's adjoint); forward mode against the transform of the tangent; bad
arguments as errors naming the kernel's line."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_gradients

V2 = adjit.vec2d


def _complex(a):
    a = a.numpy()
    return a[..., 0] + 1j * a[..., 1]


def _pairs(c):
    return np.stack([c.real, c.imag], axis=-1)


@adjit.kernel
def _both(x: adjit.array2d(dtype=V2), y: adjit.array2d(dtype=V2), z: adjit.array2d(dtype=V2)):
    t = adjit.tile_load(x, shape=(3, 8))
    adjit.tile_fft(t)
    adjit.tile_store(y, t)
    u = adjit.tile_load(x, shape=(3, 8))
    adjit.tile_ifft(u)
    adjit.tile_store(z, u)


def test_fft_and_ifft_of_batched_rows_and_gradients():
    rng = np.random.default_rng(0)
    x = adjit.array(rng.standard_normal((3, 8, 2)), dtype=V2)
    y, z = adjit.zeros((3, 8), dtype=V2), adjit.zeros((3, 8), dtype=V2)
    adjit.launch_tiled(_both, dim=1, inputs=[x, y, z], block_dim=8)
    xc = _complex(x)
    np.testing.assert_allclose(_complex(y), np.fft.fft(xc, axis=-1), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(_complex(z), np.fft.ifft(xc, axis=-1) * 8, rtol=1e-13, atol=1e-13)
    check_gradients(_both, 1, [x], [y, z])


@adjit.kernel
def _forward(x: adjit.array2d(dtype=V2), y: adjit.array2d(dtype=V2)):
    t = adjit.tile_load(x, shape=(2, 4))
    adjit.tile_fft(t)
    adjit.tile_store(y, t)


def test_adjoint_is_n_times_the_inverse_transform_and_tangent_the_transform():
    rng = np.random.default_rng(1)
    x = adjit.array(rng.standard_normal((2, 4, 2)), dtype=V2, requires_grad=True)
    y = adjit.zeros((2, 4), dtype=V2, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch_tiled(_forward, dim=1, inputs=[x, y], block_dim=4)
    g = rng.standard_normal((2, 4, 2))
    tape.backward(grads={y: adjit.array(g, dtype=V2)})
    gc = g[..., 0] + 1j * g[..., 1]
    np.testing.assert_allclose(_complex(x.grad), np.fft.ifft(gc, axis=-1) * 4, rtol=1e-13, atol=1e-13)  # Warp's
    dx = rng.standard_normal((2, 4, 2))
    (dy,) = adjit.jvp(_forward, 1, [adjit.array(x.numpy(), dtype=V2)], [adjit.array(dx, dtype=V2)],
                      outputs=[adjit.zeros((2, 4), dtype=V2)])
    np.testing.assert_allclose(_complex(dy), np.fft.fft(dx[..., 0] + 1j * dx[..., 1], axis=-1), rtol=1e-13,
                               atol=1e-13)


@adjit.kernel
def _odd_sizes(x: adjit.array3d(dtype=adjit.vec2f), y: adjit.array3d(dtype=adjit.vec2f),
               z: adjit.array2d(dtype=V2), w: adjit.array2d(dtype=V2)):
    t = adjit.tile_load(x, shape=(2, 3, 16))  # 3-d: six batches of 16 points
    adjit.tile_ifft(t)
    adjit.tile_store(y, t)
    u = adjit.tile_load(z, shape=(2, 6))  # 6 points: the direct sum
    adjit.tile_fft(u)
    adjit.tile_store(w, u)


def test_3d_tiles_float32_and_sizes_other_than_powers_of_two():
    rng = np.random.default_rng(2)
    x = adjit.array(rng.random((2, 3, 16, 2), dtype=np.float32), dtype=adjit.vec2f)
    y = adjit.zeros((2, 3, 16), dtype=adjit.vec2f)
    z, w = adjit.array(rng.standard_normal((2, 6, 2)), dtype=V2), adjit.zeros((2, 6), dtype=V2)
    adjit.launch_tiled(_odd_sizes, dim=1, inputs=[x, y, z, w], block_dim=8)
    np.testing.assert_allclose(_complex(y), np.fft.ifft(_complex(x).astype(np.complex128), axis=-1) * 16,
                               rtol=0, atol=3e-5)  # (Warp's float32 tolerance)
    np.testing.assert_allclose(_complex(w), np.fft.fft(_complex(z), axis=-1), rtol=1e-13, atol=1e-13)


@adjit.kernel
def _bad_dtype(a: adjit.array2d(dtype=adjit.vec3)):
    t = adjit.tile_load(a, shape=(2, 2))
    adjit.tile_fft(t)


@adjit.kernel
def _bad_rank(a: adjit.array(dtype=adjit.vec2)):
    t = adjit.tile_load(a, shape=4)
    adjit.tile_ifft(t)


@adjit.kernel
def _bad_storage(a: adjit.array2d(dtype=adjit.vec2)):
    t = adjit.tile_load(a, shape=(2, 2), storage="shared")
    adjit.tile_fft(t)


@pytest.mark.parametrize("kernel,ndim,match", [
    (_bad_dtype, 2, r"tile_fft\(\) argument must be a tile of vec2f or vec2d .* got vec3"),
    (_bad_rank, 1, r"tile_ifft\(\) argument must be a tile with at least 2 dimensions, got 1D"),
    (_bad_storage, 2, r"must have 'register' storage, got shared"),
])
def test_bad_arguments_are_errors_naming_the_line(kernel, ndim, match):
    dtype = adjit.vec3 if kernel is _bad_dtype else adjit.vec2
    with pytest.raises(adjit.AdjitError, match=match) as info:
        adjit.launch(kernel, dim=1, inputs=[adjit.zeros((2,) * ndim, dtype=dtype)])
    assert "test_tile_fft.py" in str(info.value)
