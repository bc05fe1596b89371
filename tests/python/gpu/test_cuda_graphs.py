"""CUDA graphs where no GPU is needed: through the stand-in driver
(cuda_fake_graph_checks.py, in a child process). On a GPU machine
test_gpu_graphs.py runs them for real."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_cuda_driver import _fake_driver_path

HERE = Path(__file__).resolve().parent


def test_cuda_graphs_through_a_stand_in_driver():
    driver = _fake_driver_path()
    if driver is None:
        pytest.fail("no C++ compiler found (set CXX): the stand-in CUDA driver needs one")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver), FAKE_CUDA_DEVICES="2")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "cuda_fake_graph_checks.py")],
                         capture_output=True, text=True, env=env, cwd=HERE.parent, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout and "failed" not in out.stdout and "skipped" not in out.stdout
