"""Zero-copy exchange with numpy, DLPack, PyTorch and JAX (adjit.interop):
writes through one view are read through the other, both ways, and
gradients map as in Warp. The framework tests skip without the framework."""
import subprocess
import sys

import numpy as np
import pytest

import adjit


@adjit.kernel
def scale_add(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = a * x[i] + y[i]


@adjit.kernel
def double_vec(x: adjit.array(dtype=adjit.vec3), y: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    y[i] = 2.0 * x[i]


def _shares(a, b) -> bool:
    return np.shares_memory(np.asarray(a), np.asarray(b))


def _aligned(n, dtype=np.float32, alignment=64):
    """A C-contiguous numpy array whose data is ``alignment``-byte aligned."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(n * itemsize + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + n * itemsize].view(dtype)


# --- numpy: __array_interface__ and from_numpy ------------------------------------------------

def test_array_interface_describes_the_buffer():
    a = adjit.zeros(5, dtype=adjit.vec3)
    interface = a.__array_interface__
    assert interface["version"] == 3
    assert interface["shape"] == (5, 3)  # the components are the trailing dimension
    assert interface["typestr"] == "<f4"
    assert interface["data"] == (a.numpy().ctypes.data, False)  # (pointer, read-only?)
    assert interface["strides"] is None  # C-contiguous
    m = adjit.zeros((2, 3), dtype=adjit.mat22d)
    assert m.__array_interface__["shape"] == (2, 3, 2, 2)
    assert m.__array_interface__["typestr"] == "<f8"


def test_numpy_view_of_an_array_shares_memory_both_ways():
    a = adjit.zeros(4, dtype=adjit.vec3)
    view = np.asarray(a)
    assert view.shape == (4, 3) and view.dtype == np.float32 and _shares(view, a.numpy())
    view[1] = (1, 2, 3)                                   # numpy writes, adjit reads
    adjit.launch(double_vec, dim=4, inputs=[a, out := adjit.zeros(4, dtype=adjit.vec3)])
    np.testing.assert_array_equal(out.numpy()[1], [2, 4, 6])
    adjit.launch(double_vec, dim=4, inputs=[out, a])      # adjit writes, numpy reads
    np.testing.assert_array_equal(view[1], [4, 8, 12])


def test_from_numpy_is_zero_copy_both_ways():
    data = np.arange(6, dtype=np.float32)
    x = adjit.from_numpy(data)
    assert x.dtype == adjit.float32 and x.shape == (6,) and _shares(x.numpy(), data)
    y = adjit.from_numpy(np.ones(6, np.float32))
    adjit.launch(scale_add, dim=6, inputs=[2.0, x, y])    # adjit writes y, numpy reads
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(6) + 1)
    data[0] = 10.0                                        # numpy writes, adjit reads
    adjit.launch(scale_add, dim=6, inputs=[1.0, x, y])
    assert np.asarray(y)[0] == 11.0


def test_from_numpy_vector_dtype_and_requires_grad():
    data = np.arange(12, dtype=np.float64).reshape(4, 3)
    v = adjit.from_numpy(data, dtype=adjit.vec3d, requires_grad=True)
    assert v.dtype == adjit.vec3d and v.shape == (4,) and _shares(v.numpy(), data)
    assert v.grad is not None and v.grad.shape == (4,) and not v.grad.numpy().any()


def test_from_numpy_refuses_what_it_cannot_share():
    with pytest.raises(ValueError, match="dtype float64 cannot be shared"):
        adjit.from_numpy(np.zeros(3), dtype=adjit.float32)
    with pytest.raises(ValueError, match="not C-contiguous"):
        adjit.from_numpy(np.zeros((4, 4), np.float32)[:, 1])
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        adjit.from_numpy(ro)
    with pytest.raises(ValueError, match="component shape"):
        adjit.from_numpy(np.zeros((4, 2), np.float32), dtype=adjit.vec3)
    with pytest.raises(ValueError, match="1 to 4 dimensions"):
        adjit.from_numpy(np.zeros((1,) * 5, np.float32))
    with pytest.raises(ValueError, match="no adjit element type"):
        adjit.from_numpy(np.zeros(3, np.complex64))


def test_from_numpy_copy_converts_and_does_not_share():
    data = np.zeros((4, 4))[:, 1]                         # float64, strided
    a = adjit.from_numpy(data, dtype=adjit.float32, copy=True)
    assert a.dtype == adjit.float32 and a.numpy().flags.c_contiguous and not _shares(a.numpy(), data)
    a.numpy()[0] = 1
    assert data[0] == 0


def test_from_numpy_takes_c_contiguous_data_with_odd_strides_of_unit_dimensions():
    data = np.zeros((1, 3), np.float32)
    odd = np.lib.stride_tricks.as_strided(data, (1, 3), (7, 4))  # numpy calls it C-contiguous
    assert odd.flags.c_contiguous
    a = adjit.from_numpy(odd, dtype=adjit.vec3)
    assert a.shape == (1,) and _shares(a.numpy(), data)
    adjit.launch(double_vec, dim=1, inputs=[adjit.ones(1, dtype=adjit.vec3), a])
    np.testing.assert_array_equal(data, [[2, 2, 2]])


# --- DLPack --------------------------------------------------------------------------------------

def test_dlpack_device_is_cpu():
    assert adjit.zeros(3).__dlpack_device__() == (1, 0)  # (kDLCPU, device 0)


def test_numpy_from_dlpack_of_an_array_shares_memory_both_ways():
    a = adjit.zeros(3, dtype=adjit.vec3)
    view = np.from_dlpack(a)
    assert view.shape == (3, 3) and _shares(view, a.numpy())
    view[2, 1] = 7.0
    assert a.numpy()[2, 1] == 7.0
    a.fill_(1.5)
    assert (view == 1.5).all()


def test_dlpack_refuses_a_stream_on_the_cpu():
    with pytest.raises(BufferError, match="stream"):
        adjit.zeros(3).__dlpack__(stream=1)


def test_from_dlpack_shares_memory_both_ways():
    data = np.arange(8, dtype=np.float32)
    x = adjit.from_dlpack(data)
    assert _shares(x.numpy(), data)
    y = adjit.zeros(8)
    adjit.launch(scale_add, dim=8, inputs=[3.0, x, y])
    np.testing.assert_array_equal(y.numpy(), 3 * data)
    x.fill_(1.0)                                          # adjit writes, the exporter reads
    assert (data == 1.0).all()
    v = adjit.from_dlpack(np.zeros((2, 3), np.float32), dtype=adjit.vec3, requires_grad=True)
    assert v.shape == (2,) and v.grad is not None


class _FakeCudaTensor:
    def __dlpack__(self, stream=None, **kwargs):
        raise AssertionError("not exported: the device is checked first")

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def test_from_dlpack_refuses_other_devices_clearly():
    with pytest.raises(ValueError, match="CUDA.*__cuda_array_interface__"):
        adjit.from_dlpack(_FakeCudaTensor())
    with pytest.raises(TypeError, match="DLPack protocol"):
        adjit.from_dlpack([1.0, 2.0])


def test_from_dlpack_of_a_torch_tensor_shares_memory():
    torch = pytest.importorskip("torch")
    t = torch.zeros(4, 3, dtype=torch.float64)
    a = adjit.from_dlpack(t, dtype=adjit.vec3d)
    assert a.shape == (4,)
    a.numpy()[1] = 2.0
    assert (t[1] == 2.0).all()
    t[3, 0] = -1.0
    assert a.numpy()[3, 0] == -1.0
    back = torch.from_dlpack(a)                           # the array's own __dlpack__
    assert back.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="not C-contiguous"):
        adjit.from_dlpack(torch.zeros(4, 4).t())


# --- PyTorch -------------------------------------------------------------------------------------

def test_to_torch_and_from_torch_share_memory_both_ways():
    torch = pytest.importorskip("torch")
    a = adjit.zeros(5)
    t = adjit.to_torch(a)
    assert t.dtype == torch.float32 and t.shape == (5,) and not t.requires_grad
    t[2] = 4.0                                            # torch writes, adjit reads
    y = adjit.zeros(5)
    adjit.launch(scale_add, dim=5, inputs=[0.5, a, y])
    assert y.numpy()[2] == 2.0
    adjit.launch(scale_add, dim=5, inputs=[1.0, y, a])    # adjit writes a, torch reads
    assert t[2].item() == 6.0

    src = torch.arange(6, dtype=torch.float32)
    b = adjit.from_torch(src)
    assert b.dtype == adjit.float32 and b.numpy().ctypes.data == src.data_ptr()
    adjit.launch(scale_add, dim=6, inputs=[2.0, adjit.ones(6), b])  # adjit writes, torch reads
    assert src.tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    src.zero_()                                           # torch writes, adjit reads
    assert not b.numpy().any()


def test_from_torch_vector_dtype():
    torch = pytest.importorskip("torch")
    t = torch.randn(6, 3)
    v = adjit.from_torch(t, dtype=adjit.vec3)
    assert v.dtype == adjit.vec3 and v.shape == (6,)
    out = adjit.zeros(6, dtype=adjit.vec3)
    adjit.launch(double_vec, dim=6, inputs=[v, out])
    assert torch.equal(adjit.to_torch(out), 2 * t)
    with pytest.raises(ValueError, match="component shape"):
        adjit.from_torch(torch.zeros(6, 2), dtype=adjit.vec3)


def test_from_torch_maps_the_gradient():
    torch = pytest.importorskip("torch")
    t = torch.rand(8, requires_grad=True)
    x = adjit.from_torch(t)
    assert x.requires_grad and t.grad is not None         # allocated as zeros
    assert x.grad.numpy().ctypes.data == t.grad.data_ptr()
    y = adjit.zeros(8, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(scale_add, dim=8, inputs=[3.0, x, y])
    tape.backward(grads={y: np.ones(8, np.float32)})
    assert torch.equal(t.grad, torch.full((8,), 3.0))      # adjit's adjoint wrote t.grad
    # an existing .grad is the one used
    g = torch.ones(8)
    t.grad = g
    assert adjit.from_torch(t).grad.numpy().ctypes.data == g.data_ptr()
    # requires_grad=False: no gradient
    assert adjit.from_torch(torch.rand(3, requires_grad=True), requires_grad=False).grad is None


def test_to_torch_maps_the_gradient():
    pytest.importorskip("torch")
    a = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    t = adjit.to_torch(a)
    assert t.requires_grad and t.is_leaf and t.grad.data_ptr() == a.grad.numpy().ctypes.data
    (t * t).sum().backward()                              # torch accumulates into a.grad
    np.testing.assert_array_equal(a.grad.numpy(), 2 * np.arange(4))
    b = adjit.zeros(3)
    tb = adjit.to_torch(b, requires_grad=True)            # gives b a gradient, shared
    tb.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))


def test_torch_errors_are_clear():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="not C-contiguous"):
        adjit.from_torch(torch.zeros(3, 4)[:, 1])
    with pytest.raises(ValueError, match="CPU and CUDA tensors only"):
        adjit.from_torch(torch.zeros(3, device="meta"))
    with pytest.raises(ValueError, match="no adjit element type"):
        adjit.from_torch(torch.zeros(3, dtype=torch.complex64))
    # float16 tensors are shared as float16 arrays
    half = torch.arange(3, dtype=torch.float16)
    assert adjit.from_torch(half).dtype == adjit.float16
    np.testing.assert_array_equal(adjit.from_torch(half).numpy(), [0, 1, 2])
    with pytest.raises(TypeError, match="torch.Tensor"):
        adjit.from_torch(np.zeros(3))


def test_missing_frameworks_are_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)       # as if not installed
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(ImportError, match="pip install torch"):
        adjit.to_torch(adjit.zeros(2))
    with pytest.raises(ImportError, match="pip install jax"):
        adjit.from_jax(np.zeros(2))


def test_import_adjit_imports_no_framework():
    code = ("import sys, adjit, adjit.interop\n"
            "print(sorted(m for m in ('torch', 'jax') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- JAX -----------------------------------------------------------------------------------------

@pytest.fixture
def jax64():
    """jax with 64-bit types enabled for the test (restored after)."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)


def test_to_jax_shares_memory():
    jax = pytest.importorskip("jax")
    a = adjit.from_numpy(_aligned(16))                    # JAX aliases 64-byte aligned host memory
    x = adjit.to_jax(a)
    assert isinstance(x, jax.Array) and x.dtype == np.float32 and x.shape == (16,)
    assert x.unsafe_buffer_pointer() == a.numpy().ctypes.data
    adjit.launch(scale_add, dim=16, inputs=[1.0, adjit.ones(16), a])  # adjit writes, JAX reads
    assert float(x.sum()) == 16.0


def test_to_jax_vector_array_and_unaligned_memory():
    pytest.importorskip("jax")
    a = adjit.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=adjit.vec3)
    x = adjit.to_jax(a)                                   # JAX copies what it cannot alias
    assert x.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(x), a.numpy())


def test_to_jax_of_64_bit_data_needs_x64():
    jax = pytest.importorskip("jax")
    if jax.config.jax_enable_x64:
        pytest.skip("64-bit mode is on in this process")
    with pytest.raises(TypeError, match="jax_enable_x64"):
        adjit.to_jax(adjit.zeros(3, dtype=adjit.float64))


def test_to_jax_float64(jax64):
    a = adjit.from_numpy(_aligned(8, np.float64))
    x = adjit.to_jax(a)
    assert x.dtype == np.float64 and x.unsafe_buffer_pointer() == a.numpy().ctypes.data
    a.fill_(0.25)
    assert float(x[3]) == 0.25


def test_from_jax_copies():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(12, dtype=jnp.float32).reshape(4, 3)
    a = adjit.from_jax(x, dtype=adjit.vec3, requires_grad=True)
    assert a.dtype == adjit.vec3 and a.shape == (4,) and a.grad is not None
    np.testing.assert_array_equal(a.numpy(), np.asarray(x))  # JAX's values, read by adjit
    out = adjit.zeros(4, dtype=adjit.vec3)
    adjit.launch(double_vec, dim=4, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), 2 * np.asarray(x))
    a.fill_(0.0)                                          # a copy: JAX arrays are immutable
    assert float(x[3, 2]) == 11.0
    # the runtime takes only writable memory, which JAX's exports are not
    with pytest.raises(ValueError, match="read-only"):
        adjit.from_dlpack(x)
