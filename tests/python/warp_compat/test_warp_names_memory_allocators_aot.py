"""Warp 1.19 host names, part 3 (issue 12): memory tracking
(``ScopedMemoryTracker``, ``print_memory_report``, ``MemoryKind``);
allocators (``Allocator``, ``ScopedAllocator``, ``get/set_device_allocator``,
``can_access``); ahead-of-time modules (``compile_aot_module``,
``load_aot_module``); JAX names (``jax_kernel``, ``jax_callable``, their
enums); ``is_cubql_available``, ``clear_lto_cache``."""
import ctypes
import gc
import io
import re

import numpy as np
import pytest

import adjit as wp
from adjit.runtime import memory


@wp.kernel
def axpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


# --- memory tracking ----------------------------------------------------------------------

@pytest.fixture
def fresh_tracking():
    memory._tracking.clear()
    yield
    memory._tracking.clear()


def _live(report: str) -> list[str]:
    """The live allocation lines of a report."""
    return [line.strip() for line in report.splitlines() if re.match(r"\s+\d+(\.\d+)? [KMG]?B : cpu : ", line)]


def test_tracker_reports_allocations_in_the_scope(fresh_tracking):
    before = wp.zeros(100, dtype=float)  # not tracked: no tracker is active
    reports = []
    with wp.ScopedMemoryTracker("sim", report_func=reports.append):
        a = wp.zeros(1000, dtype=wp.float32)
        v = wp.empty((10, 3), dtype=wp.vec3)
        d = wp.array(np.arange(5, dtype=np.float64))
    (report,) = reports
    assert "Total allocations:\n    cpu              3 (4.30 KB)" in report  # 4000 + 360 + 40 bytes
    live = _live(report)
    assert live[0].startswith("3.91 KB : cpu : array[float32, 1000] : ") and "test_warp_names_memory_allocators_aot.py" in live[0]
    assert live[1].startswith("360 B : cpu : array[vec3, (10, 3)] : ")
    assert live[2].startswith("40 B : cpu : array[float64, 5] : ")
    assert "test_tracker_reports_allocations_in_the_scope()" in live[0]  # the allocating line's function
    assert "    sim:\n      cpu: 3 allocs, 4.30 KB" in report
    assert len(live) == 3  # `before` was allocated while nothing tracked
    del before, a, v, d


def test_freed_arrays_leave_the_live_list(fresh_tracking):
    out = io.StringIO()
    with wp.ScopedMemoryTracker("scope", print=False):
        keep = wp.zeros(8, dtype=wp.int32)
        gone = wp.zeros(64, dtype=wp.float32, requires_grad=True)  # the gradient is an allocation too
        view = gone[1:3]  # a view keeps the memory alive
        del gone
        gc.collect()
        wp.print_memory_report(out)
        del view
        gc.collect()
        wp.print_memory_report(out, sort="chronological")
    first, second = out.getvalue().split("Allocation Tracking Report")[1:]
    assert "Total allocations:\n    cpu              3 (544 B)" in first  # 32 + 256 + 256
    assert len(_live(first)) == 3
    assert "Live allocations:\n    cpu              1 (32 B)" in second
    assert _live(second) == [line for line in _live(second) if "array[int32, 8]" in line] and len(_live(second)) == 1
    assert "Peak usage:\n    cpu              544 B" in second
    del keep


def test_nested_trackers_make_scope_paths(fresh_tracking):
    reports = []
    with wp.ScopedMemoryTracker("outer", report_func=lambda s: reports.append(("outer", s))):
        a = wp.zeros(4, dtype=float)
        with wp.ScopedMemoryTracker("inner", report_func=lambda s: reports.append(("inner", s))):
            b = wp.zeros(16, dtype=float)
        c = wp.zeros(2, dtype=wp.float64)
        with wp.ScopedMemoryTracker("off", active=False, print=False):
            d = wp.zeros(1, dtype=float)  # an inactive tracker adds no scope
    assert [name for name, _ in reports] == ["inner", "outer"]
    outer = reports[1][1]
    assert "    outer:\n      cpu: 3 allocs, 36 B" in outer  # 16 + 16 + 4 (a, c, d)
    assert "    outer/inner:\n      cpu: 1 allocs, 64 B" in outer
    assert "outer/off" not in outer
    del a, b, c, d


def test_tracker_prints_on_exit_and_clear(fresh_tracking, capsys):
    with wp.ScopedMemoryTracker("printed") as tracker:
        a = wp.ones(3, dtype=float)
    assert "Allocation Tracking Report" in capsys.readouterr().out
    with wp.ScopedMemoryTracker("quiet", print=False):
        b = wp.ones(3, dtype=float)
    assert capsys.readouterr().out == ""
    tracker.report()
    assert "    quiet:" in capsys.readouterr().out
    tracker.clear()
    tracker.report()
    assert "quiet" not in capsys.readouterr().out
    del a, b


def test_print_memory_report_bad_inputs(fresh_tracking):
    with pytest.raises(RuntimeError, match="not active"):
        wp.print_memory_report()
    with wp.ScopedMemoryTracker("x", print=False):
        with pytest.raises(ValueError, match="sort order"):
            wp.print_memory_report(sort="name")
        with pytest.raises(ValueError, match="max_items"):
            wp.print_memory_report(max_items=-1)
    with pytest.raises(ValueError, match="name"):
        wp.ScopedMemoryTracker("a/b")
    with pytest.raises(TypeError, match="report_func"):
        wp.ScopedMemoryTracker("a", report_func="stdout")
    with pytest.raises(TypeError, match="active"):
        wp.ScopedMemoryTracker("a", active="yes")


def test_max_items_limits_the_listing(fresh_tracking):
    out = io.StringIO()
    with wp.ScopedMemoryTracker("many", print=False):
        arrays = [wp.zeros(n + 1, dtype=float) for n in range(5)]
        wp.print_memory_report(out, max_items=2)
    live = _live(out.getvalue())
    assert [line.split(" : ")[2] for line in live] == ["array[float32, 5]", "array[float32, 4]"]
    del arrays


def test_memory_kind_is_warps():
    assert [(k.name, int(k)) for k in wp.MemoryKind] == [
        ("UNKNOWN", 0), ("HOST", 1), ("PINNED", 2), ("CUDA_DEVICE", 3), ("CUDA_MEMPOOL", 4), ("CUDA_MANAGED", 5)]
    assert wp.zeros(2, dtype=float).memory_kind is wp.MemoryKind.HOST


# --- allocators -------------------------------------------------------------------------------

class NumpyAllocator:
    """Warp's Allocator protocol over numpy buffers, logging its calls."""

    def __init__(self):
        self.blocks, self.calls = {}, []

    def allocate(self, size_in_bytes):
        block = np.zeros(size_in_bytes + 64, np.uint8)
        address = block.ctypes.data + (-block.ctypes.data % 64)
        self.blocks[address] = block
        self.calls.append(("allocate", size_in_bytes))
        return address

    def deallocate(self, ptr, size_in_bytes):
        self.calls.append(("deallocate", size_in_bytes))
        del self.blocks[ptr]


class CtypesAllocator:
    def __init__(self):
        self.buffers, self.freed = {}, []

    def allocate(self, size_in_bytes):
        buf = ctypes.create_string_buffer(size_in_bytes)
        self.buffers[ctypes.addressof(buf)] = buf
        return ctypes.addressof(buf)

    def deallocate(self, ptr, size_in_bytes):
        self.freed.append(size_in_bytes)
        del self.buffers[ptr]


def _inside(allocator: NumpyAllocator, a) -> bool:
    address = a._buffer.ctypes.data
    return any(p <= address < p + b.size for p, b in allocator.blocks.items())


def test_arrays_take_memory_from_a_scoped_allocator():
    alloc = NumpyAllocator()
    with wp.ScopedAllocator("cpu", alloc) as scoped:
        assert wp.get_device_allocator("cpu") is alloc and scoped.allocator is alloc
        x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
        y = wp.full(4, 1.5, dtype=float, requires_grad=True)
        v = wp.zeros(3, dtype=wp.vec3)
    assert isinstance(wp.get_device_allocator("cpu"), wp.HostAllocator)  # restored
    assert alloc.calls == [("allocate", 16)] * 4 + [("allocate", 36)]  # x, x.grad, y, y.grad, v
    assert _inside(alloc, x) and _inside(alloc, x.grad) and _inside(alloc, y) and _inside(alloc, y.grad) and _inside(alloc, v)
    after = wp.zeros(4, dtype=float)
    assert not _inside(alloc, after)
    with wp.Tape() as tape:
        wp.launch(axpy, dim=4, inputs=[2.0, x, y])
    assert np.array_equal(y.numpy(), [1.5, 3.5, 5.5, 7.5])
    tape.backward(grads={y: np.ones(4, np.float32)})
    assert np.array_equal(x.grad.numpy(), [2, 2, 2, 2])
    assert np.array_equal(v.numpy(), np.zeros((3, 3)))
    del x, y, v, tape
    gc.collect()
    assert alloc.calls.count(("deallocate", 16)) == 4 and ("deallocate", 36) in alloc.calls
    assert not alloc.blocks


def test_a_view_keeps_allocator_memory_alive():
    alloc = CtypesAllocator()
    wp.set_device_allocator("cpu", alloc)
    try:
        a = wp.array(np.arange(6, dtype=np.float32))
        clone = wp.clone(a)
    finally:
        wp.set_device_allocator("cpu", None)
    view = a[2:5]
    values = view.numpy()
    del a
    gc.collect()
    assert alloc.freed == []  # the view still uses the memory
    y = wp.zeros(3, dtype=float)
    wp.launch(axpy, dim=3, inputs=[1.0, view, y])
    assert np.array_equal(y.numpy(), [2, 3, 4]) and np.array_equal(clone.numpy(), np.arange(6))
    del view, values
    gc.collect()
    assert alloc.freed == [24]
    del clone
    gc.collect()
    assert alloc.freed == [24, 24] and not alloc.buffers


def test_bad_allocators_are_refused():
    class NoFree:
        def allocate(self, n):
            return 1

    with pytest.raises(TypeError, match="lacks deallocate"):
        wp.set_device_allocator("cpu", NoFree())
    with pytest.raises(TypeError, match="Allocator protocol"):
        wp.ScopedAllocator("cpu", object())
    with pytest.raises(ValueError, match="not available"):
        wp.set_device_allocator("cuda:0", NumpyAllocator())

    class Returns:
        def __init__(self, value):
            self.value, self.freed = value, []

        def allocate(self, n):
            return self.value(n) if callable(self.value) else self.value

        def deallocate(self, ptr, n):
            self.freed.append(ptr)

    block = np.zeros(64, np.uint8)
    odd = block.ctypes.data + (-block.ctypes.data % 16) + 1
    cases = [(Returns(None), TypeError, "as an int"), (Returns("0x10"), TypeError, "as an int"),
             (Returns(0), MemoryError, "out of memory"), (Returns(odd), ValueError, "not aligned")]
    for bad, error, message in cases:
        with wp.ScopedAllocator("cpu", bad):
            with pytest.raises(error, match=message):
                wp.zeros(4, dtype=float)
    assert cases[3][0].freed == [odd]  # a misaligned block is given back
    assert cases[0][0].freed == []

    class Fails:
        def allocate(self, n):
            raise MemoryError("pool exhausted")

        def deallocate(self, ptr, n):
            pass

    with wp.ScopedAllocator("cpu", Fails()):
        with pytest.raises(MemoryError, match="pool exhausted"):
            wp.empty(3, dtype=float)
        assert wp.empty(0, dtype=float).shape == (0,)  # nothing to allocate: the allocator is not called
    assert isinstance(wp.get_device_allocator("cpu"), wp.HostAllocator)


def test_host_allocator_is_usable():
    host = wp.get_device_allocator("cpu")
    assert isinstance(host, wp.Allocator) and isinstance(NumpyAllocator(), wp.Allocator)
    p = host.allocate(100)
    assert p % 64 == 0
    ctypes.memset(p, 7, 100)
    host.deallocate(p, 100)
    with pytest.raises(ValueError, match="not allocated"):
        host.deallocate(p, 100)
    with pytest.raises(ValueError, match="size_in_bytes"):
        host.allocate(-1)


def test_tracked_allocator_memory(fresh_tracking):
    alloc = NumpyAllocator()
    reports = []
    with wp.ScopedAllocator("cpu", alloc), wp.ScopedMemoryTracker("pool", report_func=reports.append):
        a = wp.zeros(10, dtype=float)
    assert "    pool:\n      cpu: 1 allocs, 40 B" in reports[0] and alloc.calls == [("allocate", 40)]
    del a


def test_can_access():
    a = wp.zeros(3, dtype=float)
    assert wp.can_access("cpu", a) and wp.can_access(wp.get_device(), a[1:])
    idx = wp.indexedarray(a, [wp.array(np.array([0, 2], np.int32))])
    assert wp.can_access("cpu", idx)
    with pytest.raises(TypeError, match="adjit array"):
        wp.can_access("cpu", np.zeros(3))
    with pytest.raises(ValueError, match="not available"):
        wp.can_access("cuda:0", a)


# --- ahead-of-time modules ------------------------------------------------------------------

from adjit import cache, loader  # noqa: E402

AOT = "adjit_test_aot_module"


@wp.kernel(module=AOT)
def aot_cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


@wp.kernel(module=AOT)
def aot_sum(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    wp.atomic_add(total, 0, 2.0 * x[wp.tid()])


@pytest.fixture
def no_compiler(monkeypatch):
    """Makes compiling and reading the kernel cache fail."""
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel was compiled or read from the kernel cache")

    def arm():
        monkeypatch.setattr(loader, "_compiler", refuse)
        monkeypatch.setattr(loader.cache, "load", refuse)
    return arm


def _loaded(kernel) -> set:
    return set(loader.loaded_variants(kernel))


def test_aot_module_runs_without_the_compiler(tmp_path, no_compiler):
    artifacts = wp.compile_aot_module(AOT, device="cpu", module_dir=tmp_path, use_ptx=False, strip_hash=False)
    assert artifacts == [tmp_path / f"{AOT}.adjit-aot.json"] and artifacts[0].is_file()
    assert len(list(tmp_path.glob("*.adjitobj"))) >= 8  # 2 kernels x (forward, adjoint) x (noalias, aliasing)
    assert not _loaded(aot_cube) and not _loaded(aot_sum)  # compiled, not loaded
    no_compiler()
    wp.load_aot_module(AOT, device="cpu", module_dir=tmp_path)
    assert _loaded(aot_cube) == {(False, True), (False, False), (True, True), (True, False)}
    x = wp.array(np.array([1, 2, 3], np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(aot_cube, dim=3, inputs=[x, y])
        wp.launch(aot_sum, dim=3, inputs=[y, total])
    assert np.array_equal(y.numpy(), [1, 8, 27]) and total.numpy()[0] == 72
    tape.backward(loss=total)
    assert np.array_equal(x.grad.numpy(), [6, 24, 54])  # d(2 x^3)/dx
    wp.launch(aot_cube, dim=2, inputs=[x[:2], x[1:]])  # overlapping arrays: the aliasing variant, loaded
    assert np.array_equal(x.numpy(), [1, 1, 1])


def test_aot_load_reads_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no compiled module"):
        wp.load_aot_module(AOT, module_dir=tmp_path)
    wp.compile_aot_module(AOT, module_dir=tmp_path)
    wp.load_aot_module(AOT, module_dir=tmp_path)
    entries = sorted(tmp_path.glob("*.adjitobj"))
    entries[0].unlink()
    with pytest.raises(FileNotFoundError, match="has no code for kernel"):
        wp.load_aot_module(AOT, module_dir=tmp_path)
    wp.compile_aot_module(AOT, module_dir=tmp_path)
    entries[0].write_bytes(b"not an entry")
    with pytest.raises(RuntimeError, match="corrupted"):
        wp.load_aot_module(AOT, module_dir=tmp_path)


def test_aot_default_folder_is_the_kernel_cache():
    (artifact,) = wp.compile_aot_module(AOT)
    assert artifact.parent == cache.cache_dir()
    wp.load_aot_module(AOT)


def test_aot_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="CUDA architectures"):
        wp.compile_aot_module(AOT, arch=80, module_dir=tmp_path)
    with pytest.raises(ValueError, match="CUDA architectures"):
        wp.load_aot_module(AOT, arch=[75, 86], module_dir=tmp_path)
    with pytest.raises(ValueError, match="not available"):
        wp.compile_aot_module(AOT, device="cuda:0", module_dir=tmp_path)
    with pytest.raises(ValueError, match="not available"):
        wp.load_aot_module(AOT, device=["cpu", "cuda:1"], module_dir=tmp_path)
    with pytest.raises(TypeError, match="module must be"):
        wp.compile_aot_module(3.5)
    with pytest.raises(RuntimeError, match="has no adjit kernels"):
        wp.compile_aot_module("no_such_aot_module", module_dir=tmp_path)
    with pytest.raises(TypeError, match="use_ptx"):
        wp.compile_aot_module(AOT, use_ptx="yes", module_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing was written


# --- JAX ------------------------------------------------------------------------------------

def test_jax_names_do_not_import_jax():
    import subprocess
    import sys
    code = ("import sys, adjit\n"
            "assert adjit.JaxModulePreloadMode.CURRENT_DEVICE == 1 and callable(adjit.jax_kernel)\n"
            "adjit.clear_jax_callable_graph_cache()\n"
            "print('jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_jax_enums_are_warps():
    assert [(m.name, int(m)) for m in wp.JaxModulePreloadMode] == [("NONE", 0), ("CURRENT_DEVICE", 1),
                                                                   ("ALL_DEVICES", 2)]
    assert [(m.name, int(m)) for m in wp.JaxCallableGraphMode] == [
        ("NONE", 0), ("JAX", 1), ("WARP", 2), ("WARP_STAGED", 3), ("WARP_STAGED_EX", 4)]


@wp.kernel
def jax_two_outputs(x: wp.array(dtype=float), s: float, y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = s * x[i] * x[i]
    z[i] = x[i] + 1.0


@wp.kernel
def jax_rows(m: wp.array(dtype=float, ndim=2), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = wp.vec2(m[i, 0] * m[i, 1], m[i, 0] - m[i, 1])


def test_jax_kernel_forward():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = wp.jax_kernel(jax_two_outputs, num_outputs=2)
    x = jnp.arange(4, dtype=jnp.float32)
    y, z = f(x, 3.0)  # Warp's convention: the last num_outputs parameters, returned as a list
    assert np.array_equal(y, [0, 3, 12, 27]) and np.array_equal(z, [1, 2, 3, 4])
    y, z = jax.jit(lambda x: f(x, 2.0))(x)
    assert np.array_equal(y, [0, 2, 8, 18])
    # per-call launch and output dims: outputs past the launch stay zero
    y, z = f(x, 1.0, launch_dims=2, output_dims={"y": 2, "z": 3})
    assert np.array_equal(y, [0, 1]) and np.array_equal(z, [1, 2, 0])
    y, _ = f(x, 1.0, output_dims=6)
    assert np.array_equal(y, [0, 1, 4, 9, 0, 0])
    rows = wp.jax_kernel(jax_rows, launch_dims=3)
    (out,) = rows(jnp.array([[1, 2], [3, 4], [5, 7]], dtype=jnp.float32))
    assert out.shape == (3, 2) and np.array_equal(out, [[2, -1], [12, -1], [35, -2]])
    batched = jax.vmap(lambda r: f(r, 2.0)[0])(jnp.arange(6, dtype=jnp.float32).reshape(2, 3))
    assert np.array_equal(batched, [[0, 2, 8], [18, 32, 50]])


def test_jax_kernel_gradient():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = wp.jax_kernel(jax_two_outputs, num_outputs=2, enable_backward=True)
    x = jnp.array([1, 2, 3], dtype=jnp.float32)
    # d/dx sum(3 x^2) = 6 x; d/dx sum(3 x^2 (x + 1)) = 9 x^2 + 6 x
    assert np.array_equal(jax.grad(lambda x: f(x, 3.0)[0].sum())(x), [6, 12, 18])
    product = jax.jit(jax.grad(lambda x: (f(x, 3.0)[0] * f(x, 3.0)[1]).sum()))
    assert np.array_equal(product(x), [15, 48, 99])
    plain = wp.jax_kernel(jax_two_outputs, num_outputs=2)
    with pytest.raises(ValueError, match="enable_backward=False"):
        jax.grad(lambda x: plain(x, 3.0)[0].sum())(x)
    with pytest.raises(ValueError, match="launch_dims is fixed"):
        f(x, 1.0, launch_dims=2)


def test_jax_kernel_bad_inputs():
    jax = pytest.importorskip("jax")
    x = jax.numpy.zeros(3, dtype=jax.numpy.float32)
    with pytest.raises(ValueError, match="more than the 4 parameter"):
        wp.jax_kernel(jax_two_outputs, num_outputs=5)
    with pytest.raises(ValueError, match="num_outputs"):
        wp.jax_kernel(jax_two_outputs, num_outputs=0)
    with pytest.raises(ValueError, match="not an array parameter"):
        wp.jax_kernel(jax_two_outputs, num_outputs=3)  # s would be an output
    with pytest.raises(ValueError, match="in_out_argnames"):
        wp.jax_kernel(jax_two_outputs, num_outputs=2, in_out_argnames=["x"])
    with pytest.raises(ValueError, match="output_dims is not supported"):
        wp.jax_kernel(jax_two_outputs, num_outputs=2, enable_backward=True, output_dims=3)
    with pytest.raises(ValueError, match="vmap_method"):
        wp.jax_kernel(jax_two_outputs, num_outputs=2, vmap_method="parallel")
    with pytest.raises(ValueError, match="block_dim"):
        wp.jax_kernel(jax_two_outputs, num_outputs=2, block_dim=0)
    with pytest.raises(TypeError, match="takes an @adjit.kernel"):
        wp.jax_kernel(lambda x: x)
    f = wp.jax_kernel(jax_two_outputs, num_outputs=2)
    with pytest.raises(ValueError, match="expected 2 inputs"):
        f(x)
    with pytest.raises(ValueError, match="launch_dims"):
        f(x, 1.0, launch_dims=(2, -1))
    with pytest.raises(ValueError, match="output 'y' is a 1-d array"):
        f(x, 1.0, output_dims=(2, 2))
    with pytest.raises(TypeError, match="float32"):
        f(jax.numpy.zeros(3, dtype=jax.numpy.int32), 1.0)


def jax_host_func(x: wp.array(dtype=float), scale: float, y: wp.array(dtype=float)):
    """A jax_callable body: a launch and a host-side copy into the output."""
    tmp = wp.zeros_like(y)
    wp.launch(jax_two_outputs, dim=x.shape, inputs=[x, scale, tmp, wp.zeros_like(y)])
    wp.copy(y, tmp)


def test_jax_callable():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    c = wp.jax_callable(jax_host_func, graph_mode=wp.JaxCallableGraphMode.NONE)
    x = jnp.array([1, 2, 3], dtype=jnp.float32)
    (y,) = c(x, 2.0)
    assert np.array_equal(y, [2, 8, 18])
    (y,) = jax.jit(lambda x: c(x, 1.0, output_dims=4))(x)
    assert np.array_equal(y, [1, 4, 9, 0])
    wp.clear_jax_callable_graph_cache(c)
    wp.clear_jax_callable_graph_cache()
    with pytest.raises(TypeError, match="jax_callable result"):
        wp.clear_jax_callable_graph_cache(jax_host_func)
    with pytest.raises(ValueError, match="CUDA graphs"):
        wp.jax_callable(jax_host_func, graph_mode=wp.JaxCallableGraphMode.WARP_STAGED)
    with pytest.raises(ValueError, match="WARP_STAGED"):
        wp.jax_callable(jax_host_func, stage_in_argnames=["x"])
    with pytest.raises(TypeError, match="no type annotation"):
        wp.jax_callable(lambda x, y: None)
    with pytest.raises(ValueError, match="graph_cache_max"):
        wp.jax_callable(jax_host_func, graph_cache_max=-1)


# --- is_cubql_available, clear_lto_cache ---------------------------------------------------------

def test_is_cubql_available_and_clear_lto_cache():
    assert wp.is_cubql_available() is False
    wp.compile_aot_module(AOT)  # entries in the kernel cache
    entries = sorted(cache.cache_dir().glob("*.adjitobj"))
    assert entries
    assert wp.clear_lto_cache() is None
    assert sorted(cache.cache_dir().glob("*.adjitobj")) == entries  # the kernel cache is untouched
