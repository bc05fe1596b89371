"""Warp's dtype and device converters for torch and JAX, and ``to_dlpack``
(a zero-copy capsule)."""
import numpy as np
import pytest

import adjit as wp


def test_torch_dtypes_and_devices():
    torch = pytest.importorskip("torch")
    pairs = [(torch.float16, wp.float16), (torch.float32, wp.float32), (torch.float64, wp.float64),
             (torch.int8, wp.int8), (torch.uint8, wp.uint8), (torch.int32, wp.int32), (torch.int64, wp.int64),
             (torch.bool, wp.bool), (torch.bfloat16, wp.bfloat16)]
    for t, a in pairs:
        assert wp.dtype_from_torch(t) == a
        assert wp.dtype_to_torch(a) == t
    assert wp.dtype_to_torch(wp.vec3d) == torch.float64  # a vector's scalar type
    with pytest.raises(TypeError, match="adjit has no type for torch.complex64"):
        wp.dtype_from_torch(torch.complex64)
    with pytest.raises(TypeError, match="takes a torch.dtype"):
        wp.dtype_from_torch("float32")
    assert str(wp.device_from_torch(torch.device("cpu"))) == "cpu"
    assert torch.device(wp.device_to_torch()) == torch.device("cpu")
    with pytest.raises(Exception, match="cuda"):
        wp.device_from_torch(torch.device("cuda:0"))


def test_jax_dtypes_and_devices():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    for j, a in [(jnp.float32, wp.float32), (jnp.float16, wp.float16), (jnp.int32, wp.int32),
                 (jnp.uint8, wp.uint8), (jnp.bool_, wp.bool)]:
        assert wp.dtype_from_jax(j) == a
        assert wp.dtype_to_jax(a) == jnp.dtype(j)
    assert wp.dtype_to_jax(wp.mat33d) == jnp.dtype("float64")
    cpu = jax.devices("cpu")[0]
    assert str(wp.device_from_jax(cpu)) == "cpu" and wp.device_to_jax() == cpu
    with pytest.raises(TypeError, match="takes a JAX device"):
        wp.device_from_jax("cpu")


def test_to_dlpack_shares_the_memory():
    torch = pytest.importorskip("torch")
    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = torch.utils.dlpack.from_dlpack(wp.to_dlpack(a))
    assert t.shape == (2, 3) and t.dtype == torch.float32
    t[1, 2] = -1.0
    assert a.numpy()[1, 2] == -1.0
    with pytest.raises(TypeError, match="takes an adjit array"):
        wp.to_dlpack(np.zeros(3))
