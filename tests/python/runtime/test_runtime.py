"""The runtime without the compiler: its C++ tests, and precompiled kernels
(forward and backward) run where MLIR cannot be imported."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUNTIME = ROOT / "cpp" / "runtime"
CXX = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")


def _build(tmp_path, sources, name):
    if CXX is None:
        pytest.fail("no C++ compiler found (set CXX): the runtime's C++ tests need one")
    exe = tmp_path / name
    subprocess.run([CXX, "-std=c++17", "-O2", "-pthread", f"-I{ROOT / 'cpp'}",
                    *map(str, sources), "-ldl", "-lm", "-o", str(exe)], check=True)
    return exe


def test_thread_pool_and_cpu_launch(tmp_path):
    exe = _build(tmp_path, [RUNTIME / "ThreadPool.cpp", RUNTIME / "CpuLaunch.cpp", RUNTIME / "OrderedAtomics.cpp",
                            RUNTIME / "FloatHelpers.cpp", RUNTIME / "test" / "runtime_test.cpp"], "runtime_test")
    subprocess.run([str(exe)], check=True, timeout=300)


def test_object_loader_runs_compiled_kernels_and_refuses_bad_objects(tmp_path):
    objects = tmp_path / "objects"
    subprocess.run([sys.executable, str(RUNTIME / "test" / "make_test_objects.py"), str(objects)],
                   check=True, cwd=tmp_path)
    exe = _build(tmp_path, [RUNTIME / "ObjectLoader.cpp", RUNTIME / "OrderedAtomics.cpp",
                            RUNTIME / "FloatHelpers.cpp", RUNTIME / "test" / "object_loader_test.cpp"],
                 "object_loader_test")
    out = subprocess.run([str(exe), str(objects)], check=True, capture_output=True, text=True)
    assert "object loader: all checks passed" in out.stdout


KERNELS = '''
import numpy as np
import adjit as wp


@wp.kernel
def scaled_sin(a: float, x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.vec3(a * wp.sin(x[i]), x[i] * x[i], 1.0)


@wp.kernel
def not_exported(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 2.0 * x[i]


def run():
    """y = (a sin x, x^2, 1); returns y and d(sum y)/dx = a cos x + 2x."""
    n = 5000
    x = wp.array(np.linspace(-2, 2, n).astype(np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scaled_sin, dim=n, inputs=[3.0, x, y])
    tape.backward(grads={y: np.ones((n, 3), np.float32)})
    return x.numpy(), y.numpy(), x.grad.numpy()
'''

RUNTIME_ONLY = '''
import sys
sys.modules["mlir"] = None  # the compiler cannot be imported here
import numpy as np
import kernels
x, y, grad = kernels.run()
np.testing.assert_allclose(y[:, 0], 3 * np.sin(x), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(y[:, 1], x * x, rtol=1e-6)
np.testing.assert_allclose(grad, 3 * np.cos(x) + 2 * x, rtol=1e-5, atol=1e-5)
assert not any(m == "mlir" or m.startswith("mlir.") for m, v in sys.modules.items() if v is not None)
import adjit
try:
    adjit.launch(kernels.not_exported, dim=4, inputs=[adjit.zeros(4)])
except adjit.CompileError as e:
    print("MISSING:", e)
else:
    raise SystemExit("a kernel that was never compiled ran without the compiler")
'''


RUNTIME_ONLY_UNPROVEN = '''
import sys
sys.modules["mlir"] = None
import adjit, kernels
# one thread more than the arrays hold: the exported all-checked variant runs
try:
    adjit.launch(kernels.scaled_sin, dim=5001, inputs=[3.0, adjit.zeros(5000), adjit.zeros(5000, dtype=adjit.vec3)])
except adjit.OutOfBoundsError as e:
    print("out of range:", e.index, "thread", e.thread)
'''


def _run(script: str, folder: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ADJIT_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", script], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)


def _check(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_precompiled_kernels_run_forward_and_backward_without_mlir(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    cache = tmp_path / "cache"
    _check(_run("import kernels; kernels.run()", tmp_path, cache))  # fills the cache
    out = _check(_run(RUNTIME_ONLY, tmp_path, cache))
    assert "kernel 'not_exported'" in out and "not precompiled for this CPU" in out
    assert "adjit.export" in out


def test_export_makes_a_folder_the_runtime_alone_uses(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    folder = tmp_path / "exported"
    _check(_run(f"import adjit, kernels; adjit.export([kernels.scaled_sin], {str(folder)!r})",
                tmp_path, tmp_path / "unused-cache"))
    assert (folder / "adjit-export.json").exists()
    # forward and adjoint, each with and without the no-overlap promise, each
    # also for launches whose bounds checks are not proved (all-checked)
    assert len(list(folder.glob("*.adjitobj"))) == 8
    _check(_run(RUNTIME_ONLY, tmp_path, folder))
    out = _check(_run(RUNTIME_ONLY_UNPROVEN, tmp_path, folder))
    assert "out of range: (5000,) thread (5000,)" in out


def test_the_cache_says_why_each_variant_compiles(tmp_path, monkeypatch, caplog):
    import logging

    import numpy as np

    import adjit as wp
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path))

    @wp.kernel
    def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = 2.0 * x[i]

    x = wp.array(np.ones(4, np.float32), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with caplog.at_level(logging.INFO, logger="adjit.cache"):
        with wp.Tape() as tape:
            wp.launch(double, dim=4, inputs=[x, y])
        tape.backward(grads={y: np.ones(4, np.float32)})
    reasons = [r.getMessage() for r in caplog.records]
    # the forward kernel and then its adjoint: each is its first compile
    assert len(reasons) == 2 and all(r.endswith(".double: first compile") for r in reasons), reasons
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)


def test_adjit_dump_dir_dumps_kernels_found_in_the_cache(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    cache = tmp_path / "cache"
    _check(_run("import kernels; kernels.run()", tmp_path, cache))  # fills the cache
    dump = tmp_path / "dump"
    env = {**os.environ, "ADJIT_CACHE_DIR": str(cache), "ADJIT_DUMP_DIR": str(dump)}
    proc = subprocess.run([sys.executable, "-c", "import kernels; kernels.run()"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in dump.glob("*.mlir"))
    assert "scaled_sin.0-adjit.mlir" in names and any("adjoint" in n for n in names), names
