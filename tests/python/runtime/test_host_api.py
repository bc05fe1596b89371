"""Warp's host API names beyond arrays and launches: devices, ScopedDevice,
dtype conversions, *_like constructors, ScopedTimer, the kernel cache."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


def test_the_cpu_is_the_default_device():
    cpu = wp.get_device()
    assert cpu == "cpu" and str(cpu) == "cpu" and cpu.is_cpu and not cpu.is_cuda
    assert wp.get_device("cpu") is cpu and wp.get_device(cpu) is cpu
    assert wp.get_devices()[0] is cpu and wp.get_preferred_device() == cpu
    assert wp.is_cpu_available() and wp.is_device_available("cpu")
    # Arrays and launches run on the CPU only so far: asking for a CUDA device
    # says so (why, where CUDA is unavailable) instead of running elsewhere.
    with pytest.raises(ValueError, match="'cuda:0' is not available"):
        wp.zeros(3, device="cuda:0")
    if wp.is_cuda_available():  # (test_cuda_driver.py checks the CUDA devices)
        return
    assert wp.get_devices() == [cpu]
    assert wp.get_cuda_device_count() == 0 and wp.get_cuda_devices() == []
    assert not wp.is_device_available("cuda:0")
    for ask in (lambda: wp.get_device("cuda:0"), lambda: wp.set_device("cuda"),
                lambda: wp.ScopedDevice("cuda:1"), lambda: wp.synchronize_device("cuda:0")):
        with pytest.raises(ValueError, match="not available: adjit runs kernels on the CPU"):
            ask()
    with pytest.raises(ValueError, match="unknown device"):
        wp.get_device("tpu")
    wp.init()
    wp.synchronize_device()
    wp.synchronize_device("cpu")


def test_scoped_device_sets_the_default_for_arrays_and_launches():
    with wp.ScopedDevice("cpu") as device:
        assert device == "cpu" and wp.get_device() == device
        x = wp.array(np.arange(4, dtype=np.float32))
        y = wp.zeros(4, dtype=float, device=device)  # a Device where a name goes
        wp.launch(double, dim=4, inputs=[x, y])
        assert x.device == "cpu" and y.device == "cpu"
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])
    with pytest.raises(wp.LaunchError, match="'cuda:0' is not available"):
        wp.launch(double, dim=4, inputs=[x, y], device="cuda:0")
    wp.set_device("cpu")
    assert wp.get_device() == "cpu"


def test_dtype_conversions():
    assert wp.dtype_from_numpy(np.float32) is wp.float32
    assert wp.dtype_from_numpy(np.dtype("float64")) is wp.float64
    assert wp.dtype_from_numpy("int32") is wp.int32 and wp.dtype_from_numpy(np.int64) is wp.int64
    assert wp.dtype_from_numpy(np.bool_) is wp.bool
    with pytest.raises(TypeError, match="no adjit type"):
        wp.dtype_from_numpy(np.complex64)
    assert wp.dtype_to_numpy(wp.float64) == np.float64 and wp.dtype_to_numpy(float) == np.float32
    assert wp.dtype_to_numpy(wp.vec3.dtype) == np.float32
    with pytest.raises(TypeError, match="takes a scalar type"):
        wp.dtype_to_numpy(wp.vec3)


def test_full_like_and_empty_like():
    a = wp.array(np.ones((2, 3), np.float64), dtype=wp.float64, requires_grad=True)
    f = wp.full_like(a, 2.5)
    assert f.shape == (2, 3) and f.dtype == wp.float64 and f.grad is not None
    np.testing.assert_array_equal(f.numpy(), 2.5)
    e = wp.empty_like(a, requires_grad=False)
    assert e.shape == (2, 3) and e.dtype == wp.float64 and e.grad is None
    v = wp.full_like(wp.zeros(3, dtype=wp.vec3), wp.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3]] * 3)


def test_scoped_timer(capsys):
    times = {}
    with wp.ScopedTimer("double", dict=times) as timer:
        wp.launch(double, dim=4, inputs=[wp.zeros(4, dtype=float), wp.zeros(4, dtype=float)])
    assert timer.elapsed > 0 and times["double"] == [timer.elapsed]
    assert capsys.readouterr().out.startswith("double took ")
    reports = []
    with wp.ScopedTimer("quiet", report_func=lambda ms, name: reports.append((name, ms))):
        pass
    assert capsys.readouterr().out == "" and reports[0][0] == "quiet"
    with wp.ScopedTimer("off", active=False) as off:
        pass
    assert off.elapsed == 0.0 and capsys.readouterr().out == ""


def test_clear_kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path))
    (tmp_path / "keep.txt").write_text("not a kernel")

    @wp.kernel
    def triple(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = 3.0 * x[i]

    wp.launch(triple, dim=2, inputs=[wp.ones(2, dtype=float)])
    assert list(tmp_path.glob("*.adjitobj"))
    wp.clear_kernel_cache()
    assert not list(tmp_path.glob("*.adjitobj")) and (tmp_path / "keep.txt").exists()


@wp.kernel
def subscripted(a: wp.array[float], b: wp.array[wp.vec3], c: wp.array2d[float]):
    i = wp.tid()
    c[i, 0] = a[i] + b[i].y


def test_array_subscript_annotations_and_isinstance():
    """Warp's newer spellings: wp.array[float], wp.array2d[T]; isinstance(x, wp.array)."""
    assert wp.array[float] == wp.array(dtype=float) and wp.array2d[wp.vec3] == wp.array2d(dtype=wp.vec3)
    x = wp.array(np.arange(3, dtype=np.float32))
    b = wp.array(np.ones((3, 3), np.float32), dtype=wp.vec3)
    c = wp.zeros((3, 1), dtype=float)
    wp.launch(subscripted, dim=3, inputs=[x, b, c])
    np.testing.assert_array_equal(c.numpy()[:, 0], [1, 2, 3])
    assert isinstance(x, wp.array) and isinstance(c, wp.array2d) and not isinstance(x, wp.array2d)
    assert not isinstance(x.numpy(), wp.array)
    assert wp.array.__name__ == "array" and "annotation" in wp.array.__doc__
