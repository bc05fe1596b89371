"""CUDA arrays and launches, where no GPU is needed: through the stand-in
driver (cuda_fake_array_checks.py, in a child process), and the parts that
are plain functions (the PTX parameter layout, the parameter packing, cache
keys by architecture). On a GPU machine the device tests run the kernels
(tools/gpu_check.py)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adjit as wp
from adjit import cache, loader
from adjit.backends import cuda as cuda_backend
from adjit.backends.base import PackedLaunch
from adjit.runtime import cuda, cuda_memory
from adjit.variant import VariantSpec

from test_cuda_driver import _fake_driver_path

HERE = Path(__file__).resolve().parent


def test_arrays_and_launches_through_a_stand_in_driver():
    driver = _fake_driver_path()
    if driver is None:
        pytest.fail("no C++ compiler found (set CXX): the stand-in CUDA driver needs one")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver), FAKE_CUDA_DEVICES="2")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "cuda_fake_array_checks.py")],
                         capture_output=True, text=True, env=env, cwd=HERE.parent, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout and "failed" not in out.stdout and "skipped" not in out.stdout


PTX = """
.visible .entry k(
\t.param .u64 .ptr .align 1 k_param_0,
\t.param .align 16 .b8 k_param_1[48],
\t.param .f32 k_param_2,
\t.param .u32 k_param_3
)
{ ret; }
"""


def test_ptx_parameters():
    assert cuda.ptx_parameters(PTX) == [(8, 8), (48, 16), (4, 4), (4, 4)]


@wp.kernel
def takes_values(x: wp.array(dtype=wp.vec3), m: wp.mat33, v: wp.vec3, s: float):
    i = wp.tid()
    x[i] = m * x[i] + v * s


def test_packing_lays_out_memrefs_values_and_the_launch_words():
    memory = cuda_memory.CudaMemory(cuda_memory._Allocation(0, 0x1000, 24), np.float32, (2, 3))
    m = np.arange(9, dtype=np.float32).tobytes()
    v = np.array([1, 2, 3], np.float32).tobytes()
    s = np.float32(0.5).tobytes()
    launch = PackedLaunch(takes_values, 2, 2, (2, 1, 1, 1), [memory, m, v, s], [])
    # memref (3 + 2 * 2 words), mat33 (3 rows of 16 bytes), vec3 (16), float, then 5 words
    layout = [(8, 8)] * 7 + [(48, 16), (16, 16), (4, 4)] + [(8, 8)] * 5
    data, offsets = cuda_backend.pack_parameters(launch, layout)
    cuda_backend._end(data, offsets, layout, 2, (1, 1, 1), 0x2000)
    words = np.frombuffer(bytes(data[:56]), np.int64)
    assert list(words) == [0x1000, 0x1000, 0, 2, 3, 3, 1]
    assert offsets[7] == 64 and offsets[8] == 112 and offsets[9] == 128 and offsets[10] == 136
    rows = np.frombuffer(bytes(data[64:112]), np.float32).reshape(3, 4)
    np.testing.assert_array_equal(rows[:, :3], np.arange(9).reshape(3, 3))
    np.testing.assert_array_equal(rows[:, 3], 0)
    np.testing.assert_array_equal(np.frombuffer(bytes(data[112:124]), np.float32), [1, 2, 3])
    assert np.frombuffer(bytes(data[128:132]), np.float32)[0] == 0.5
    assert list(np.frombuffer(bytes(data[136:]), np.uint64)) == [2, 1, 1, 1, 0x2000]
    with pytest.raises(wp.LaunchError, match="takes 3 parameters"):
        cuda_backend.pack_parameters(launch, [(8, 8)] * 3)
    # the plan made at a variant's first launch packs the same bytes
    plan = cuda_backend._Plan(launch, layout)
    assert plan.offsets == offsets
    assert plan.pack(launch.args, 2, (2, 1, 1, 1), 0x2000) == bytes(data)


def test_cuda_cache_entries_are_keyed_by_arch_not_by_this_cpu():
    spec = VariantSpec("cuda")
    a = loader._key_parts(takes_values, spec, arch="sm_90")
    b = loader._key_parts(takes_values, spec, arch="sm_80")
    assert a.target == "cuda-sm_90" and b.target == "cuda-sm_80" and a.key() != b.key()
    assert cache.target_id() not in a.target
    with pytest.raises(ValueError, match="needs its arch"):
        loader._key_parts(takes_values, spec)


def test_no_cuda_here_is_a_clear_error():
    if wp.is_cuda_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="cuda:0"):
        wp.zeros(4, device="cuda:0")


EXPORTED = '''
import adjit as wp

@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = x[i] * s

@wp.kernel
def not_exported(x: wp.array(dtype=float)):
    x[wp.tid()] = 1.0
'''

RUN_EXPORTED = '''
import sys
sys.modules["mlir"] = None  # the compiler cannot be imported here
import numpy as np
import adjit as wp, kernels
x = wp.array(np.arange(4, dtype=np.float32), device="cuda:0", requires_grad=True)
y = wp.zeros(4, dtype=float, device="cuda:0", requires_grad=True)
with wp.Tape() as tape:
    wp.launch(kernels.scale, dim=4, inputs=[x, y, 2.0])
tape.backward(grads={y: np.ones(4, np.float32)})
wp.synchronize()
from adjit import loader
print("FROM CACHE:", sorted(v.from_cache for v in loader._loaded(kernels.scale).cuda_variants.values()))
try:
    wp.launch(kernels.not_exported, dim=4, inputs=[x])
except wp.CompileError as e:
    print("MISSING:", e)
'''


def test_exported_ptx_runs_with_the_runtime_alone(tmp_path):
    driver = _fake_driver_path()
    if driver is None:
        pytest.fail("no C++ compiler found (set CXX): the stand-in CUDA driver needs one")
    (tmp_path / "kernels.py").write_text(EXPORTED)
    folder = tmp_path / "exported"
    env = {**os.environ, "ADJIT_CACHE_DIR": str(tmp_path / "unused")}
    subprocess.run([sys.executable, "-c", f"import adjit, kernels; adjit.export([kernels.scale], {str(folder)!r}, "
                    "targets=['sm_90'])"], cwd=tmp_path, env=env, check=True, timeout=600)
    # forward, tangent and adjoint, with and without the no-overlap promise; forward and adjoint
    # also for strided views; no CPU objects
    entries = list(folder.glob("*.adjitobj"))
    assert len(entries) == 10
    env = {**os.environ, "ADJIT_CACHE_DIR": str(folder), "ADJIT_CUDA_DRIVER": str(driver), "FAKE_CUDA_DEVICES": "1"}
    out = subprocess.run([sys.executable, "-c", RUN_EXPORTED], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FROM CACHE: [True, True]" in out.stdout
    assert "kernel 'not_exported'" in out.stdout and "not precompiled for CUDA sm_90" in out.stdout


@pytest.mark.parametrize("arch", [75, 80, 90, 100])
def test_the_runtime_helpers_ptx_assembles(tmp_path, arch):
    import shutil
    from adjit.runtime import cuda_helpers
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH")
    source = tmp_path / "helpers.ptx"
    source.write_text(cuda_helpers.ptx(arch))
    subprocess.run([ptxas, f"-arch=sm_{arch}", str(source), "-o", str(tmp_path / "helpers.cubin")], check=True)
