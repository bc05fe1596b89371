"""The examples in examples/ run as documented (``python examples/<name>.py``),
on small sizes: each exits 0, writes a PNG (where matplotlib is installed)
and prints one line with the numbers it claims, which are checked here."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_example(name: str, tmp_path: Path, *args: str, env=None) -> dict:
    """Runs ``examples/<name>.py --small --out tmp/<name>.png``; returns the
    ``key=value`` numbers of its ``<name>: ...`` result line."""
    out = tmp_path / f"{name}.png"
    proc = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), "--small", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{name}.py failed:\n{proc.stdout}\n{proc.stderr}"
    if HAVE_MATPLOTLIB and env is None:
        assert out.read_bytes()[:8] == PNG_SIGNATURE, f"{out} is not a PNG"
    line = re.search(rf"^{name}: (.*)$", proc.stdout, re.MULTILINE)
    assert line, f"{name}.py printed no result line:\n{proc.stdout}"
    values = dict(item.split("=") for item in line.group(1).split())
    return {key: float(value) for key, value in values.items()} | {"_stderr": proc.stderr, "_out": out}


def test_projectile_hits_its_targets(tmp_path):
    r = run_example("projectile", tmp_path)
    # Gradient descent through the simulation loop: from over 10 m off to within 5 cm.
    assert r["initial_miss"] > 10
    assert r["final_miss"] < 0.05


def test_sensitivity_maps_match_finite_differences(tmp_path):
    r = run_example("sensitivity", tmp_path)
    assert r["checked"] == 3 and r["reading"] > 0
    assert r["max_rel_error"] < 1e-5


def test_gradient_check_example_passes_and_catches_the_bug(tmp_path):
    pytest.importorskip("hypothesis")  # its property-based test
    r = run_example("test_my_kernel", tmp_path)
    assert r["pytest_status"] == 0
    assert r["max_abs_error"] < 1e-6           # the kernel's adjoint matches finite differences
    assert r["buggy_max_abs_error"] > 0.1      # the deliberately wrong hand-written gradient does not


def test_torch_fit_recovers_the_parameters(tmp_path):
    pytest.importorskip("torch")
    r = run_example("torch_fit", tmp_path)
    # From the initial guess to the noise level of the measurements, near the true parameters.
    assert r["final_loss"] < 1.2 * r["noise_variance"] < 0.05 * r["initial_loss"]
    assert r["max_param_error"] < 0.05


def test_examples_run_without_matplotlib(tmp_path):
    # A "matplotlib" that fails to import, ahead of the real one on the path.
    blocker = tmp_path / "blocked" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('matplotlib blocked by the test')\n")
    path = os.pathsep.join(filter(None, [str(blocker.parent), os.environ.get("PYTHONPATH")]))
    r = run_example("projectile", tmp_path, env={"PYTHONPATH": path})
    assert "matplotlib is not installed" in r["_stderr"]
    assert not r["_out"].exists()
    assert r["final_miss"] < 0.05


def test_mesh_fit_finds_the_pose(tmp_path):
    r = run_example("mesh_fit", tmp_path)
    # From 0.2 RMS off the mesh to about the scan's noise (0.003), the pose within 0.01 rad / 0.01.
    assert r["initial_rms"] > 0.15
    assert r["final_rms"] < 0.006
    assert r["angle_error"] < 0.01 and r["shift_error"] < 0.01
