"""adjit.torch.op and adjit.jax.op with CUDA data, where no GPU is needed:
the CUDA side through the stand-in driver (cuda_fake_interop_checks.py, in
a child process with this interpreter, so with torch and JAX where it has
them). On a GPU machine test_gpu_interop.py runs the ops on the GPU."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_cuda_driver import _fake_driver_path

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or importlib.util.find_spec("jax") is None,
                    reason="needs PyTorch and JAX (the checks are of adjit.torch and adjit.jax)")
def test_the_ops_cuda_side_through_a_stand_in_driver():
    driver = _fake_driver_path()
    if driver is None:
        pytest.fail("no C++ compiler found (set CXX): the stand-in CUDA driver needs one")
    env = dict(os.environ, ADJIT_CUDA_DRIVER=str(driver), FAKE_CUDA_DEVICES="2")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(HERE / "cuda_fake_interop_checks.py")],
                         capture_output=True, text=True, env=env, cwd=HERE.parent, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout and "failed" not in out.stdout and "skipped" not in out.stdout
