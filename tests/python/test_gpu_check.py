"""tools/gpu_check.py and tools/gpu_runner.py without a GPU: the bundle is
complete and the runner packs every launch's parameters as its PTX entry
declares them (docs/gpu.md has what ran on a GPU)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))

import gpu_check  # noqa: E402
import gpu_runner  # noqa: E402


class RecordingDriver:
    """Stands for the CUDA driver: keeps uploads in host memory and records
    each launch's parameter buffers (nothing computes)."""

    def __init__(self):
        self.memory, self.launches, self.next_ptr = {}, [], 1 << 20

    def load(self, ptx: str, entry: str):
        assert f".entry {entry}(" in ptx
        return entry, 0.0

    def alloc(self, nbytes: int) -> int:
        self.next_ptr += nbytes + 256
        return self.next_ptr

    def upload(self, host) -> int:
        ptr = self.alloc(host.nbytes)
        self.memory[ptr] = np.array(host)
        return ptr

    def download(self, ptr: int, like):
        return self.memory[ptr].reshape(like.shape) if ptr in self.memory else np.zeros_like(like)

    def free(self, ptr: int) -> None:
        self.memory.pop(ptr, None)

    def launch(self, fn, total: int, params) -> None:
        self.launches.append((fn, total, len(params)))

    def sync(self) -> None:
        pass


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_bundle")
    gpu_check.prepare(out, "sm_90", 300)  # (ptxas checks the PTX when it is on PATH)
    return out


def test_the_bundle_has_every_launch_and_the_cpu_results(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert len(manifest["cases"]) == 11
    for name, case in manifest["cases"].items():
        assert set(case["launches"]) == {"forward", "adjoint", "tangent"}
        data = np.load(bundle / f"{name}.npz")
        for array in (k[3:] for k in data.files if k.startswith("in.")):
            assert f"out.{array}" in data.files
            assert array in case["seeds"] or f"grad.{array}" in data.files
        assert any(k.startswith("tangent_out.") for k in data.files)
    assert manifest["cases"]["gather"]["launches"]["forward"]["ranged"] == [1]
    assert manifest["cases"]["blur2d"]["dim"] == [17, 20]
    assert manifest["out_of_range"]["thread"] == gpu_check.BAD_THREAD


def test_the_runner_packs_each_launch_as_its_ptx_declares(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    driver = RecordingDriver()
    for name, case in manifest["cases"].items():
        gpu_runner.run_case(driver, bundle, name, case)
    gpu_runner.run_out_of_range(driver, bundle, manifest["out_of_range"])
    launches = []
    for case in manifest["cases"].values():
        forward = case["launches"]["forward"]
        # a gather's forward runs twice: proved, then with every check (unproven index ranges)
        launches += [forward] * (2 if forward["ranged"] else 1) + [case["launches"][w] for w in ("adjoint", "tangent")]
    launches.append(manifest["out_of_range"]["forward"])
    assert [(fn, count) for fn, _, count in driver.launches] == [(l["entry"], len(l["sizes"])) for l in launches]
    assert driver.launches[-1][1] == 300
    blur = [t for fn, t, _ in driver.launches if fn.startswith("blur2d")]
    assert blur == [17 * 20] * 3


def test_a_layout_that_does_not_match_the_entry_is_refused():
    with pytest.raises(ValueError, match="parameter 0: 16 bytes for a 8-byte slot"):
        gpu_runner.Params([8] * 5).value(bytes(16))
    with pytest.raises(ValueError, match="more than the 4 parameters"):
        gpu_runner.Params([8] * 4).finish(1, 0)  # total, 3 extents and the record: 5
    with pytest.raises(ValueError, match="5 parameters for a kernel that takes 6"):
        gpu_runner.Params([8] * 6).finish(1, 0)
