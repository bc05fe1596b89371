"""examples/distributed_torch.py: 2 processes training an adjit kernel's
parameters data-parallel with torch.distributed (gloo, on localhost) end with
the parameters of one process trained on the whole batch."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "distributed_torch.py"
STEPS, N = 40, 1000  # 1000 samples: shards of 500 (uneven splits are covered by shard())


def _load_example():
    spec = importlib.util.spec_from_file_location("distributed_torch_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                    reason="torch.distributed with gloo is not available")
def test_two_processes_train_the_parameters_of_one_on_the_whole_batch(tmp_path):
    out = tmp_path / "params.json"
    run = subprocess.run([sys.executable, str(EXAMPLE), "--nprocs", "2", "--backend", "gloo",
                          "--steps", str(STEPS), "--n", str(N), "--out", str(out)],
                         capture_output=True, text=True, timeout=180, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    two = json.loads(out.read_text())
    assert two["world_size"] == 2

    example = _load_example()
    one = example.train(rank=0, world_size=1, steps=STEPS, n=N)
    # It trained: the loss fell and the parameters moved towards the curve's.
    assert one["losses"][-1] < 0.05 * one["losses"][0]
    assert not np.allclose(one["params"], example.INITIAL_PARAMS, atol=1e-2)
    # float64: the only difference is the order of the gradient's sum
    np.testing.assert_allclose(two["params"], one["params"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(two["losses"], one["losses"], rtol=1e-12)


def test_shards_cover_the_batch_once():
    example = _load_example()
    for n, world in ((1000, 2), (10, 3), (7, 4), (2, 4)):
        covered = np.concatenate([np.arange(n)[example.shard(n, r, world)] for r in range(world)])
        np.testing.assert_array_equal(covered, np.arange(n))
