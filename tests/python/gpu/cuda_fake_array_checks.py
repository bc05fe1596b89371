"""CUDA arrays and launches through the stand-in driver
(cpp/runtime/test/fake_cuda_driver.cpp: "device memory" in host memory, so
every copy, fill and view runs for real; kernels load from real PTX and are
launched with the driver's parameter checks, but compute nothing).
test_cuda_arrays.py builds the stand-in and runs this file in a child
process with ADJIT_CUDA_DRIVER pointing at it; it is not collected on its
own (no test_ prefix).

What the stand-in cannot show (the kernels' results on a GPU) is checked by
the device tests on a GPU machine (tools/gpu_check.py, docs/gpu.md).
"""
import ctypes
import gc
import os

import numpy as np
import pytest

import adjit as wp
from adjit.runtime.cuda_memory import CudaMemory

if "fake" not in os.environ.get("ADJIT_CUDA_DRIVER", ""):
    pytest.skip("runs with ADJIT_CUDA_DRIVER set to the stand-in driver (see test_cuda_arrays.py)",
                allow_module_level=True)

FAKE = ctypes.CDLL(os.environ["ADJIT_CUDA_DRIVER"])


def stats() -> dict:
    words = (ctypes.c_long * 6)()
    FAKE.fake_cuda_stats(words)
    return dict(zip(("allocations", "streams", "events", "modules", "launches", "retains"), words))


def test_constructors_put_values_on_the_device():
    a = wp.array(np.arange(6, dtype=np.float32), device="cuda:0")
    assert a.device == "cuda:0" and isinstance(a._buffer, CudaMemory)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(wp.zeros(4, dtype=wp.int32, device="cuda:0").numpy(), np.zeros(4, np.int32))
    np.testing.assert_array_equal(wp.ones((2, 3), dtype=float, device="cuda").numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(wp.full(3, 2.5, dtype=wp.float64, device="cuda:1").numpy(), [2.5] * 3)
    v = wp.full(2, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3, device="cuda:0")
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3], [1, 2, 3]])
    assert wp.empty(5, dtype=wp.vec2, device="cuda:0").shape == (5,)
    like = wp.zeros_like(v)
    assert like.device == "cuda:0" and like.dtype == wp.vec3
    np.testing.assert_array_equal(like.numpy(), np.zeros((2, 3), np.float32))


def test_copies_between_devices():
    host = wp.array(np.arange(8, dtype=np.float32))
    on_gpu = host.to("cuda:0")
    assert on_gpu.device == "cuda:0" and on_gpu.to("cuda:0") is on_gpu
    on_other = on_gpu.to("cuda:1")
    back = on_other.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), np.arange(8))
    dest = wp.zeros(8, dtype=float, device="cuda:0")
    wp.copy(dest, host, dest_offset=2, src_offset=0, count=3)
    np.testing.assert_array_equal(dest.numpy(), [0, 0, 0, 1, 2, 0, 0, 0])
    wp.copy(dest, on_gpu, dest_offset=5, src_offset=5, count=3)
    np.testing.assert_array_equal(dest.numpy(), [0, 0, 0, 1, 2, 5, 6, 7])
    cpu = wp.zeros(8, dtype=float)
    wp.copy(cpu, dest)
    np.testing.assert_array_equal(cpu.numpy(), [0, 0, 0, 1, 2, 5, 6, 7])
    c = wp.clone(dest)
    dest.zero_()
    np.testing.assert_array_equal(c.numpy(), [0, 0, 0, 1, 2, 5, 6, 7])
    np.testing.assert_array_equal(dest.numpy(), np.zeros(8))
    dest.fill_(3.0)
    np.testing.assert_array_equal(dest.numpy(), np.full(8, 3.0))
    dest.assign(np.arange(8) * 2.0)
    np.testing.assert_array_equal(dest.numpy(), np.arange(8) * 2.0)
    assert wp.clone(dest, device="cpu").device == "cpu"


def test_views_read_and_write_the_device_memory():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), device="cuda:0")
    row = a[1]
    np.testing.assert_array_equal(row.numpy(), [4, 5, 6, 7])
    column = a[:, 2]
    assert not column.is_contiguous
    np.testing.assert_array_equal(column.numpy(), [2, 6, 10])
    column.assign(np.array([-1.0, -2.0, -3.0]))  # a strided write
    np.testing.assert_array_equal(a.numpy()[:, 2], [-1, -2, -3])
    np.testing.assert_array_equal(a.numpy()[:, 1], [1, 5, 9])  # the neighbours are untouched
    np.testing.assert_array_equal(a.transpose().numpy(), a.numpy().T)
    np.testing.assert_array_equal(a.flatten().numpy(), a.numpy().ravel())
    np.testing.assert_array_equal(a[::2, 1:3].numpy(), a.numpy()[::2, 1:3])
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3, device="cuda:0")
    np.testing.assert_array_equal(v.view(wp.float32).numpy(), np.arange(6).reshape(2, 3))
    assert a.strides == (16, 4) and column.strides == (16,)


def test_gradients_live_on_the_array_device():
    a = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
    assert a.grad.device == "cuda:0"
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros(4))


def test_cuda_array_interface():
    a = wp.array(np.arange(4, dtype=np.float64), device="cuda:0")
    face = a.__cuda_array_interface__
    assert face["version"] == 3 and face["shape"] == (4,) and face["typestr"] == "<f8"
    assert face["data"][0] == a.ptr and face["strides"] is None
    assert a[::2].__cuda_array_interface__["strides"] == (16,)
    assert a.__dlpack_device__() == (2, 0)
    with pytest.raises(TypeError, match="no host memory"):
        np.asarray(a)
    assert not hasattr(wp.zeros(2), "__cuda_array_interface__")


def test_memory_returns_when_arrays_are_collected():
    gc.collect()
    before = stats()["allocations"]
    for _ in range(200):
        wp.zeros(1000, dtype=float, device="cuda:0")
    gc.collect()
    assert stats()["allocations"] == before


def test_memory_tracker_reports_device_allocations():
    reports = []
    with wp.ScopedMemoryTracker("gpu", report_func=reports.append):
        keep = wp.zeros(256, dtype=float, device="cuda:0")
    assert "cuda:0" in reports[0] and "1.00 KB" in reports[0], reports[0]
    del keep


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def move(p: wp.array(dtype=wp.vec3), v: wp.vec3, m: wp.mat33, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = m * p[i] + v


def test_launch_loads_ptx_and_packs_its_parameters():
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0")
    y = wp.zeros(4, dtype=float, device="cuda:0")
    launches = stats()["launches"]
    wp.launch(scale, dim=4, inputs=[x, y, 2.0])
    wp.launch(move, dim=2, inputs=[wp.zeros(2, dtype=wp.vec3, device="cuda:0"), wp.vec3(1.0, 2.0, 3.0),
                                   wp.mat33(np.eye(3)), wp.zeros(2, dtype=wp.vec3, device="cuda:0")])
    wp.synchronize()
    assert stats()["launches"] == launches + 2
    from adjit import loader
    variant = next(iter(loader._loaded(scale).cuda_variants.values()))
    assert variant.arch == "sm_90" and variant.spec.target == "cuda"


@wp.kernel
def scale_again(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s


def test_plain_launches_take_the_fast_path_with_their_own_arguments(monkeypatch):
    """After one launch through the general path, a plain launch like it
    (nothing observes or records it) runs on the kernel's CUDA launch plan:
    each still packs its own pointers, sizes and values and moves the written
    array's version; what the plan does not fit (another device, arrays that
    overlap, an int for a float) goes the general way and is packed alike."""
    from adjit.backends import cuda as cuda_backend
    packed, planned = [], []
    pack, run = cuda_backend._Plan.pack, cuda_backend.LaunchPlan.run

    def recording(plan, args, total, shape, record):
        data = pack(plan, args, total, shape, record)
        packed.append(np.frombuffer(data, np.uint8))
        return data

    def counting(plan, dim, args, block_dim):
        ran = run(plan, dim, args, block_dim)
        planned.append(ran)
        return ran

    monkeypatch.setattr(cuda_backend._Plan, "pack", recording)
    monkeypatch.setattr(cuda_backend.LaunchPlan, "run", counting)
    x, y = wp.zeros(8, dtype=float, device="cuda:0"), wp.zeros(8, dtype=float, device="cuda:0")
    a, b = wp.zeros(4, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0")
    halves = wp.zeros(8, dtype=float, device="cuda:0")
    c, d = wp.zeros(3, dtype=float, device="cuda:1"), wp.zeros(3, dtype=float, device="cuda:1")
    launches = stats()["launches"]
    wp.launch(scale_again, dim=8, inputs=[x, y, 2.0])  # the general path, which makes the plan
    assert scale_again._launch_plan.device.alias == "cuda:0" and planned == []
    version = b._version
    wp.launch(scale_again, dim=4, inputs=[a, b, -1.5])
    wp.launch(scale_again, dim=4, inputs=[halves[:4], halves[4:], 0.5], device="cuda:0", block_dim=64)
    assert planned == [True, True] and b._version == version + 1
    wp.launch(scale_again, dim=4, inputs=[a, b, 3])  # an int for the float: the general path
    wp.launch(scale_again, dim=3, inputs=[c, d, 0.25])  # another device: the general path, a plan there
    assert planned == [True, True, False, False] and scale_again._launch_plan.device.alias == "cuda:1"
    wp.launch(scale_again, dim=8, inputs=[y, y, 1.0])  # overlapping: the general path, and no plan
    assert scale_again._launch_plan is None
    wp.synchronize()
    assert stats()["launches"] == launches + 6
    expected = [(x, y, 2.0, 8), (a, b, -1.5, 4), (halves[:4], halves[4:], 0.5, 4), (a, b, 3.0, 4),
                (c, d, 0.25, 3), (y, y, 1.0, 8)]
    assert len(packed) == len(expected)
    for data, (first, second, value, n) in zip(packed, expected):
        words = data[:80].view(np.int64)  # two 1-d memrefs: (ptr, ptr, 0, size, stride) each
        assert list(words) == [first.ptr, first.ptr, 0, n, 1, second.ptr, second.ptr, 0, n, 1]
        assert data[80:84].view(np.float32)[0] == value
        assert data[88:96].view(np.int64)[0] == n  # the thread count


def test_a_failure_in_a_planned_launch_names_the_kernel_and_thread():
    x, y = wp.zeros(8, dtype=float, device="cuda:0"), wp.zeros(8, dtype=float, device="cuda:0")
    wp.launch(scale_again, dim=8, inputs=[x, y, 2.0])
    plan = scale_again._launch_plan.runtime_plan
    site = next(n for n, s in enumerate(plan.variant.sites) if s["array"] == "y")
    error = plan._failure(8, [x._buffer, y._buffer, b"\0" * 4], [x, y, 2.0], (site, 5, (9,), (8,)))
    assert isinstance(error, wp.OutOfBoundsError)
    assert (error.kernel, error.array, error.index, error.thread) == ("scale_again", "'y'", (9,), (5,))
    assert error.filename == __file__


def test_repeated_launches_pack_each_launchs_own_arguments(monkeypatch):
    """The variant a launch chose is kept for the next ones
    (loader.prepared_variant) and its parameter layout too: each launch still packs
    its own pointers, sizes and values, and other devices or overlapping
    arrays choose their own variants."""
    from adjit.backends import cuda as cuda_backend
    packed = []
    pack = cuda_backend._Plan.pack

    def recording(plan, args, total, shape, record):
        data = pack(plan, args, total, shape, record)
        packed.append(np.frombuffer(data, np.uint8))
        return data

    monkeypatch.setattr(cuda_backend._Plan, "pack", recording)
    seen = []
    x, y = wp.zeros(8, dtype=float, device="cuda:0"), wp.zeros(8, dtype=float, device="cuda:0")
    a, b = wp.zeros(4, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0")
    c, d = wp.zeros(3, dtype=float, device="cuda:1"), wp.zeros(3, dtype=float, device="cuda:1")
    with wp.observe_launches(after=seen.append):
        wp.launch(scale, dim=8, inputs=[x, y, 2.0])
        wp.launch(scale, dim=4, inputs=[a, b, -1.5])
        wp.launch(scale, dim=3, inputs=[c, d, 0.25])
        wp.launch(scale, dim=8, inputs=[y, y, 1.0])
    wp.synchronize()
    assert [launch.device.alias for launch in seen] == ["cuda:0", "cuda:0", "cuda:1", "cuda:0"]
    assert seen[1].variant is seen[0].variant and seen[2].variant is not seen[0].variant
    assert seen[0].spec.noalias and not seen[3].spec.noalias and seen[3].variant is not seen[0].variant
    for data, launch, (first, second, value, n) in zip(packed, seen, [(x, y, 2.0, 8), (a, b, -1.5, 4),
                                                                     (c, d, 0.25, 3), (y, y, 1.0, 8)]):
        words = data[:80].view(np.int64)  # two 1-d memrefs: (ptr, ptr, 0, size, stride) each
        assert list(words) == [first.ptr, first.ptr, 0, n, 1, second.ptr, second.ptr, 0, n, 1]
        assert data[80:84].view(np.float32)[0] == value
        offsets = launch.variant.plan.offsets
        assert data[offsets[-5]:offsets[-5] + 8].view(np.int64)[0] == n  # the thread count


def test_a_tape_records_repeated_gpu_launches():
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
    y = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
    tape = wp.Tape()
    with tape:
        for s in (1.0, 2.0, 3.0):
            wp.launch(scale, dim=4, inputs=[x, y, s])
    assert len(tape._steps) == 3
    launches = stats()["launches"]
    tape.backward(grads={y: wp.ones(4, dtype=float, device="cuda:0")})
    wp.synchronize()
    assert stats()["launches"] > launches  # (the adjoints ran on the device)


def test_launch_refuses_arrays_on_two_devices():
    x = wp.zeros(4, dtype=float, device="cuda:0")
    with pytest.raises(wp.LaunchError, match="must be on one device"):
        wp.launch(scale, dim=4, inputs=[x, wp.zeros(4, dtype=float), 1.0])
    with pytest.raises(wp.LaunchError, match="must be on one device"):
        wp.launch(scale, dim=4, inputs=[x, wp.zeros(4, dtype=float, device="cuda:1"), 1.0])
    with pytest.raises(wp.LaunchError, match="its arrays are on cuda:0"):
        wp.launch(scale, dim=4, inputs=[x, x, 1.0], device="cuda:1")


def test_strided_views_run_the_strided_variant(monkeypatch):
    """A view with a step runs the kernel's strided variant, its
    descriptor carrying the view's start and stride in elements."""
    from adjit.backends import cuda as cuda_backend
    packed = []
    pack = cuda_backend._Plan.pack
    monkeypatch.setattr(cuda_backend._Plan, "pack", lambda plan, args, *rest: packed.append(
        np.frombuffer(pack(plan, args, *rest), np.uint8)) or pack(plan, args, *rest))
    x = wp.zeros(8, dtype=float, device="cuda:0")
    y = wp.zeros(2, dtype=float, device="cuda:0")
    seen = []
    with wp.observe_launches(after=seen.append):
        wp.launch(scale, dim=2, inputs=[x[1:7:3], y, 1.0])
        wp.launch(scale, dim=2, inputs=[x[:2], y, 1.0])
    wp.synchronize()
    assert seen[0].spec.strided and not seen[1].spec.strided and seen[0].variant is not seen[1].variant
    words = packed[0][:80].view(np.int64)
    assert list(words) == [x.ptr + 4, x.ptr + 4, 0, 2, 3, y.ptr, y.ptr, 0, 2, 1]


def test_a_tape_records_gpu_launches():
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
    y = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x, y, 3.0])
    y.grad.fill_(1.0)
    launches = stats()["launches"]
    tape.backward()
    wp.synchronize()
    assert stats()["launches"] == launches + 1  # the adjoint ran on the device
    assert x.grad.device == "cuda:0"


def test_fills_and_gradient_sums_run_on_the_device():
    launches = stats()["launches"]
    v = wp.zeros(5, dtype=wp.vec3, device="cuda:0")
    v.fill_(wp.vec3(1.0, -2.0, 3.5))  # one element's bytes, repeated by a helper kernel
    np.testing.assert_array_equal(v.numpy(), np.tile([1.0, -2.0, 3.5], (5, 1)))
    d = wp.full(7, 2.5, dtype=wp.float64, device="cuda:0")
    np.testing.assert_array_equal(d.numpy(), np.full(7, 2.5))
    assert stats()["launches"] == launches + 2
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
    tape = wp.Tape()
    with tape:
        c = wp.clone(x)
    c.grad.assign(np.array([1.0, 2.0, 3.0, 4.0]))
    launches = stats()["launches"]
    tape.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 4])  # (added by adjit_add_f32)
    assert stats()["launches"] == launches + 1


@wp.kernel
def gather(x: wp.array(dtype=float), at: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[at[i]]


def test_index_ranges_are_reduced_on_the_device_into_the_record():
    from adjit.runtime import cuda
    wp.synchronize()
    at = wp.array(np.array([5, 2, 9, 3], np.int32), device="cuda:0")
    x, y = wp.zeros(10, dtype=float, device="cuda:0"), wp.zeros(4, dtype=float, device="cuda:0")
    wp.launch(gather, dim=4, inputs=[x, at, y])
    pool = cuda._pools[0]
    assert len(pool.pending) == 1
    words = np.zeros(cuda._RECORD["words"], np.int64)
    pool.memory.copy_to_host(words, 0, 0, False)
    r = cuda._RECORD["ranges"]
    assert tuple(words[r:r + 2]) == (2, 9)
    wp.launch(gather, dim=4, inputs=[x, at, x[:4]])  # overlapping arrays: not proved, every check runs
    pool.memory.copy_to_host(words, pool.nbytes, 0, False)
    assert tuple(words[r:r + 2]) == (-1, -1)
    wp.synchronize()


@wp.kernel
def sum_into(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    wp.atomic_add(total, 0, x[wp.tid()])


def test_float_atomics_on_the_gpu_warn_that_they_are_not_in_thread_order():
    x, total = wp.zeros(8, dtype=float, device="cuda:0"), wp.zeros(1, dtype=float, device="cuda:0")
    with pytest.warns(RuntimeWarning, match="kernel 'sum_into' .* adds floats atomically"):
        wp.launch(sum_into, dim=8, inputs=[x, total])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wp.launch(sum_into, dim=8, inputs=[x, total])  # (once per variant)
        wp.launch(scale, dim=4, inputs=[x, x, 1.0])  # no float atomics: no warning


class _Foreign:
    """Another library's CUDA array (as CuPy's or a torch tensor's interface shows it)."""

    def __init__(self, array, stream=None):
        self.keep = array
        self.__cuda_array_interface__ = {"version": 3, "shape": array._buffer.shape,
                                         "typestr": array._buffer.dtype.str, "data": (array.ptr, False),
                                         "strides": None, "stream": stream}


def test_memory_of_other_libraries_is_shared_or_copied():
    from adjit.interop import from_cuda_array_interface
    source = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda:1")
    foreign = _Foreign(source)
    shared = from_cuda_array_interface(foreign, dtype=wp.vec3, device="cuda:1")
    assert shared.device == "cuda:1" and shared.shape == (2,) and shared.ptr == source.ptr
    shared.fill_(wp.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(source.numpy(), [[1, 2, 3], [1, 2, 3]])  # the same memory
    copied = wp.array(_Foreign(source, stream=1), device="cuda:1")
    assert copied.ptr != source.ptr and copied.dtype == wp.float32 and copied.shape == (2, 3)
    np.testing.assert_array_equal(copied.numpy(), [[1, 2, 3], [1, 2, 3]])
    on_host = wp.array(copied, device="cpu")
    assert on_host.device == "cpu" and on_host.numpy()[1, 2] == 3
    with pytest.raises(ValueError, match="does not make a 1-4-d array of vec4"):
        from_cuda_array_interface(foreign, dtype=wp.vec4, device="cuda:1")


def test_host_views_of_cuda_arrays_are_read_only_copies():
    a = wp.zeros(3, dtype=float, device="cuda:0")
    view = a.numpy()
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0  # it would not reach the array: refused, not lost
    np.testing.assert_array_equal(a.numpy(), 0)


def test_jacobian_helpers_write_the_device_memory():
    from adjit.autograd import FlatNumbers, set_number, set_values, zero_gradient
    v = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3, device="cuda:0")
    set_number(v, 4, 9.0)  # (element 1, component y)
    np.testing.assert_array_equal(v.numpy(), [[0, 1, 2], [3, 9, 5]])
    set_values(v, 0.5)
    np.testing.assert_array_equal(v.numpy(), np.full((2, 3), 0.5))
    set_values(v, np.arange(6).reshape(2, 3))
    strided = wp.array(np.arange(8, dtype=np.float32), device="cuda:0")[::2]
    set_number(strided, 1, -1.0)  # (through the host: a strided view)
    np.testing.assert_array_equal(strided.numpy(), [0, -1, 4, 6])
    flat = FlatNumbers(v)
    assert flat.size == 6 and flat[4] == 4
    flat[4] = flat[4] + np.float32(1e-3)
    assert v.numpy()[1, 1] == np.float32(4) + np.float32(1e-3) and flat.values.flags.writeable
    g = zero_gradient(v)
    assert g.device == "cuda:0" and g.dtype == wp.vec3
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))


def test_jacobians_run_on_the_arrays_device():
    # The stand-in runs no kernel code: every Jacobian is zero here; what is
    # checked is that the seeds, the perturbations and the launches go to the
    # device, and that the inputs and gradients are left as they were.
    x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
    y = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
    for mode, batch in (("reverse", 1), ("reverse", 16), ("forward", 1), ("forward", 16)):
        J = wp.autograd.jacobian(scale, dim=4, inputs=[x], outputs=[y, 2.0], mode=mode, batch=batch)
        assert J[0, 0].device == "cuda:0" and J[0, 0].shape == (4, 4)
        np.testing.assert_array_equal(J["x", "y"].numpy(), np.zeros((4, 4)))
    launches = stats()["launches"]
    J = wp.autograd.jacobian_fd(scale, dim=4, inputs=[x], outputs=[y, 2.0], device="cuda:0")
    assert stats()["launches"] == launches + 2 * 4 + 1 and J[0, 0].device == "cuda:0"
    np.testing.assert_array_equal(x.numpy(), np.arange(4))  # the perturbations undone
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4))
    assert wp.autograd.gradcheck(scale, 4, [x], [y, 2.0], show_summary=False)  # (0 == 0 here)
    from adjit.testing import check_gradients
    check_gradients(scale, 4, [x], [y, 2.0])


def test_jacobians_refuse_arrays_on_another_device_clearly():
    x = wp.zeros(4, dtype=float, device="cuda:0")
    y = wp.zeros(4, dtype=float, device="cuda:1")
    with pytest.raises(TypeError, match="its arrays are on 'cuda:0' and 'cuda:1'; they must be on one device"):
        wp.autograd.jacobian(scale, dim=4, inputs=[x], outputs=[y, 1.0])
    with pytest.raises(TypeError, match="device='cuda:1', but its arrays are on 'cuda:0'"):
        wp.autograd.jacobian_fd(scale, dim=4, inputs=[x], outputs=[wp.zeros_like(x), 1.0], device="cuda:1")
    with pytest.raises(TypeError, match="device='cpu', but its arrays are on 'cuda:0'"):
        wp.autograd.gradcheck(scale, 4, [x], [wp.zeros_like(x), 1.0], device="cpu")
    from adjit.testing import check_gradients
    with pytest.raises(TypeError, match="check_gradients of kernel 'scale': its arrays are on"):
        check_gradients(scale, 4, [x], [y, 1.0])


def test_optimizers_update_cuda_parameters():
    from adjit.optim import SGD
    p = wp.array(np.array([1.0, 2.0], np.float32), device="cuda:0")
    g = wp.array(np.array([0.5, -1.0], np.float32), device="cuda:0")
    SGD([p], lr=0.1).step([g])
    np.testing.assert_allclose(p.numpy(), [0.95, 2.1], rtol=1e-6)


@wp.kernel
def no_arrays(s: float):
    wp.printf("%f\n", s)


def test_a_kernel_without_arrays_runs_on_the_default_device():
    launches = stats()["launches"]
    with wp.ScopedDevice("cuda:1"):
        wp.launch(no_arrays, dim=1, inputs=[1.0])
    wp.synchronize()
    assert stats()["launches"] == launches + 1


def test_dlpack_export_of_a_cuda_array():
    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda:1")
    assert a.__dlpack_device__() == (2, 1)
    capsule = a.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule" and "dltensor" in repr(capsule)
    with pytest.raises(BufferError, match="copy=True"):
        a.__dlpack__(copy=True)
