"""tools/gpu_check.py and tools/gpu_runner.py without a GPU: the bundle is
complete and the runner packs every launch's parameters as its PTX entry
declares them (docs/gpu.md has what ran on a GPU)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

TOOLS = Path(__file__).resolve().parents[3] / "tools"
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


def test_the_runner_reads_the_error_record_words_the_runtime_has():
    from adjit import _runtime
    assert gpu_runner.RECORD == _runtime.ERROR_RECORD  # (the runner imports no adjit: it reads the header)


def test_a_layout_that_does_not_match_the_entry_is_refused():
    with pytest.raises(ValueError, match="parameter 0: 16 bytes for a 8-byte slot"):
        gpu_runner.Params([8] * 5).value(bytes(16))
    with pytest.raises(ValueError, match="more than the 4 parameters"):
        gpu_runner.Params([8] * 4).finish(1, 0)  # total, 3 extents and the record: 5
    with pytest.raises(ValueError, match="5 parameters for a kernel that takes 6"):
        gpu_runner.Params([8] * 6).finish(1, 0)


import gpu_replay  # noqa: E402

import adjit  # noqa: E402


vec3_bool = adjit.types.vector(length=3, dtype=adjit.bool)


@adjit.kernel
def scale_by_vector(x: adjit.array(dtype=adjit.vec3), s: adjit.vec3, flags: vec3_bool, y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = adjit.dot(x[i], s) + float(flags[1])


def test_the_replay_recorder_keeps_each_launch_and_compiles_its_kernel(tmp_path, monkeypatch, request):
    recorder = gpu_replay.LaunchRecorder(tmp_path, "sm_90", per_kernel=2, launch_bytes=1 << 20,
                                         total_bytes=1 << 24)
    recorder.pytest_configure(None)
    request.addfinalizer(lambda: recorder.pytest_unconfigure(None))  # (the observer ends with the test)
    x = adjit.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=adjit.vec3)
    y = adjit.zeros(4)
    for _ in range(3):  # the third is over the per-kernel limit
        adjit.launch(scale_by_vector, 4, [x, adjit.vec3(1.0, 2.0, 3.0), vec3_bool(False, True, False), y])
    # an adjoint launch (the tape's backward): recorded with its gradient arrays
    xg, yg = adjit.array(x.numpy(), dtype=adjit.vec3, requires_grad=True), adjit.zeros(4, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(scale_by_vector, 4, [xg, adjit.vec3(1.0, 2.0, 3.0), vec3_bool(False, True, False), yg])
    tape.backward(grads={yg: np.float32([1, 2, 3, 4])})
    manifest = gpu_replay.finish(recorder)

    assert len(manifest["launches"]) == 3
    adjoint = manifest["launches"][2]
    assert manifest["kernels"][adjoint["kernel"]]["name"] == "scale_by_vector (adjoint)"
    assert [p["array"] for p in adjoint["params"] if "array" in p] == [0, 3, 4, 5]  # x, y, then their gradients
    gradients = np.load(tmp_path / adjoint["file"])
    np.testing.assert_array_equal(gradients["out_4"], np.outer([1, 2, 3, 4], [1, 2, 3]))
    launch = manifest["launches"][0]
    kernel = manifest["kernels"][launch["kernel"]]
    assert kernel["name"] == "scale_by_vector" and not kernel["order_dependent"]
    # the vec3 value padded to its 16-byte parameter, the bool vector a byte per component (to 4):
    # parameters 7 and 8, after the 7 of x's descriptor (2 pointers, offset, 2 sizes, 2 strides)
    assert kernel["sizes"][7:9] == [16, 4]
    assert launch["params"][1]["value"] == np.float32([1, 2, 3, 0]).tobytes().hex()
    assert launch["params"][2]["value"] == "00010000"
    data = np.load(tmp_path / launch["file"])
    np.testing.assert_array_equal(data["out_3"], x.numpy() @ np.float32([1, 2, 3]) + 1.0)
    np.testing.assert_array_equal(data["in_3"], np.zeros(4, np.float32))

    out = tmp_path / "out"
    out.mkdir()
    driver = RecordingDriver()
    monkeypatch.setattr(gpu_runner, "Driver", lambda: driver)
    assert gpu_runner.replay_from(tmp_path, out, 0) == 0
    results = [json.loads(line) for line in (out / "replay.jsonl").read_text().splitlines()]
    assert [r["index"] for r in results] == [0, 1, 2] and not any("error" in r for r in results)
    adjoint_kernel = manifest["kernels"][adjoint["kernel"]]
    assert [(fn, count) for fn, _, count in driver.launches] == \
        [(kernel["entry"], len(kernel["sizes"]))] * 2 + [(adjoint_kernel["entry"], len(adjoint_kernel["sizes"]))]
