"""tools/newton.py without Newton or the network: finding module-level
kernels in a source tree, grouping failures by reason and kind, and the
report (docs/newton.md has what a run on Newton gave)."""
import importlib.util
import textwrap
from pathlib import Path

TOOL = Path(__file__).resolve().parents[3] / "tools" / "newton.py"
# (loaded by path under another name: the file's own name is Newton's package's)
_spec = importlib.util.spec_from_file_location("adjit_newton_tool", TOOL)
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)


def _tree(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_scan_finds_module_level_kernels_only(tmp_path):
    src = _tree(tmp_path, {
        "newton/__init__.py": "",
        "newton/_src/sim/kernels.py": """
            import warp as wp

            @wp.kernel
            def a(x: wp.array(dtype=float)):
                pass

            @wp.kernel(enable_backward=False)
            def b(x: wp.array(dtype=float)):
                pass

            @wp.func
            def f(x: float):
                return x

            def factory():
                @wp.kernel
                def inner(x: wp.array(dtype=float)):
                    pass
                return inner
        """,
        "newton/_src/pkg/__init__.py": "import warp as wp\n@wp.kernel\ndef c(x: int):\n    pass\n",
        "newton/tests/test_x.py": "import warp as wp\n@wp.kernel\ndef t(x: int):\n    pass\n",
        "newton/_src/solver/examples/ex.py": "import warp as wp\n@wp.kernel\ndef e(x: int):\n    pass\n",
    })
    assert tool.scan_kernels(src) == {"newton._src.pkg": [("c", 3)],
                                      "newton._src.sim.kernels": [("a", 5), ("b", 9)]}


def test_reasons_drop_locations_and_kinds_say_who_has_the_work():
    reason = tool.reason_of({"type": "KernelNameError",
                             "message": "/x/newton/_src/geometry/kernels.py:12: 'wp.mesh_query_point' is not defined"})
    assert reason == "KernelNameError: 'wp.mesh_query_point' is not defined"
    assert tool.kind_of(reason)[1] == "out of scope"
    native = tool.reason_of({"type": "KernelTypeError", "message": "@func_native '_flip' (/x/newton/a.py:3) is not "
                                                                   "in adjit: its body is a C++/CUDA snippet"})
    assert native == "KernelTypeError: @func_native '...' is not in adjit: its body is a C++/CUDA snippet"
    assert tool.kind_of(native)[0].startswith("native C++/CUDA snippets")
    assert tool.kind_of("KernelNameError: 'wp.tile_sum' is not defined")[1] == "out of scope"
    assert tool.kind_of("KernelNameError: name 'v0_local' is not defined")[1] == "frontend / builtins"
    assert tool.kind_of("KernelTypeError: vec1f cannot be used in kernels")[1] == "frontend / compiler"
    missing = tool.reason_of({"type": "ModuleNotFoundError", "message": "No module named 'scipy.sparse'",
                              "missing_module": "scipy.sparse"})
    assert tool.kind_of(missing)[1] == "none (not adjit's)"


def test_summary_and_report():
    modules = {"newton.a": [("k1", 3), ("k2", 9), ("g", 20), ("k4", 30)], "newton.b": [("k3", 4)]}
    results = [
        {"module": "newton.a", "kernel": "k1", "line": 3, "status": "ok"},
        {"module": "newton.a", "kernel": "k2", "line": 9, "status": "fail",
         "error": {"type": "KernelNameError", "message": "'wp.tile_sum' is not defined",
                   "where": {"file": "newton/a.py", "line": 11, "code": ""}}},
        {"module": "newton.a", "kernel": "g", "line": 20, "status": "generic"},
        {"module": "newton.a", "kernel": "k4", "line": 30, "status": "fail",
         "error": {"type": "KernelTypeError", "message": "vec1f cannot be used in kernels", "where": None}},
        {"module": "newton.b", "import_error": {"type": "NotInAdjitImportError",
                                                "message": "warp.sparse is not in adjit yet: ...", "where": None}},
    ]
    summary = tool.summarize(modules, results)
    status = {(r["module"], r["kernel"]): r["status"] for r in summary["rows"]}
    assert status == {("newton.a", "k1"): "ok", ("newton.a", "k2"): "fail", ("newton.a", "g"): "generic",
                      ("newton.a", "k4"): "fail", ("newton.b", "k3"): "fail"}
    text = tool.render(summary, {"ok": True, "seconds": 1.0},
                       [{"name": "basic_pendulum", "ok": False, "error": "ValueError: x", "where": "newton/b.py:1"}],
                       "python tools/newton.py", 60.0, 2)
    assert "**`import newton` succeeds**" in text
    assert "**Kernels: 1 of 4 compile on adjit's CPU backend (25.0%).**" in text
    assert "- 1 × `KernelTypeError: vec1f cannot be used in kernels` (`newton.a.k4`, line 30)" in \
        text.split("## For the frontend and compiler")[1]
    assert "| `newton.a.k2` | 9 | `KernelNameError: 'wp.tile_sum' is not defined` | newton/a.py:11 |" in text
    assert "| `newton.b` | 1 | `NotInAdjitImportError: warp.sparse is not in adjit yet: ...` |  |" in text
    assert "`newton.a.g`" in text.split("## Generic kernels with no declared instance")[1]
    assert "| basic_pendulum | `ValueError: x` | newton/b.py:1 |" in text


def test_compare_states_uses_the_stated_tolerance():
    import numpy as np
    warp = {"final.body_q": np.array([[1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]], np.float32),
            "final.body_qd": np.zeros((1, 6), np.float32)}
    tol = tool.COMPARE_ATOL + tool.COMPARE_RTOL * 3.0  # the bound at the component of magnitude 3
    within = {k: v.copy() for k, v in warp.items()}
    within["final.body_q"][0, 2] += np.float32(0.9 * tol)
    result = tool.compare_states(within, warp)
    assert result["agree"] and result["where"] == "final.body_q"
    assert abs(result["max_abs_diff"] - 0.9 * tol) < 1e-6
    beyond = {k: v.copy() for k, v in warp.items()}
    beyond["final.body_qd"][0, 0] = np.float32(2 * tool.COMPARE_ATOL)  # |Warp's| is 0 there: atol alone
    result = tool.compare_states(beyond, warp)
    assert not result["agree"] and result["where"] == "final.body_qd"
    nan = {k: v.copy() for k, v in warp.items()}
    nan["final.body_q"][0, 0] = np.nan
    assert not tool.compare_states(nan, warp)["agree"]
    assert "nan" in tool.compare_states(nan, warp)["detail"]
    assert not tool.compare_states({"final.body_q": warp["final.body_q"]}, warp)["agree"]  # an array missing
    assert "shape" in tool.compare_states({**warp, "final.body_qd": np.zeros((2, 6), np.float32)}, warp)["detail"]
    assert not tool.compare_states({}, {})["agree"]


def test_report_shows_the_comparison_with_warp_and_where_each_figure_comes_from():
    summary = tool.summarize({"newton.a": [("k1", 3)]}, [{"module": "newton.a", "kernel": "k1", "line": 3,
                                                          "status": "ok"}])
    examples = [{"name": "basic_pendulum", "ok": True,
                 "warp": {"agree": True, "detail": "largest difference 2e-06 (final.body_q)"}},
                {"name": "cloth_hanging", "ok": True, "warp": {"agree": False, "detail": "on Warp: a|b"}},
                {"name": "diffsim_ball", "ok": False, "error": "TypeError: x", "where": "newton/b.py:1"}]
    text = tool.render(summary, {"ok": True, "seconds": 1.0}, examples, "python tools/newton.py", 60.0, 2,
                       commit="bbb", frames=3, kernels_commit="aaa",
                       examples_command="python tools/newton.py --examples-only --num-frames 3")
    assert "- adjit commit: bbb (examples; the kernels, import and their tables below are from aaa)" in text
    assert "--num-frames 3 --device cpu" in text
    assert "2 of 3 of Newton's examples run headless" in text
    assert "1 of 3 agree with Warp 1.19's CPU after the same 3 frames" in text
    assert "| basic_pendulum | runs |  | yes: largest difference 2e-06 (final.body_q) |" in text
    assert "| cloth_hanging | runs |  | no: on Warp: a\\|b |" in text  # (a | in a cell is escaped)
    assert "| diffsim_ball | `TypeError: x` | newton/b.py:1 | |" in text
    assert "| aaa | this report: 1 of 1 kernels compile (100.0%) |" in text
    assert "| bbb | this report's examples; 2 of 3 examples run, 1 agree with Warp's CPU |" in text


_FAKE_EXAMPLES = {
    "newton/__init__.py": "",
    "newton/examples/__init__.py": """
        import runpy
        import sys

        def run(example, args):  # (Newton's steps until the viewer stops: --num-frames frames)
            for _ in range(args.num_frames):
                example.step()

        def main():
            name = sys.argv[1]
            sys.argv = [name, *sys.argv[2:]]
            runpy.run_module("newton.examples.example_" + name, run_name="__main__")
    """,
    "newton/examples/example_fall.py": """
        import argparse
        import warp as wp
        import newton.examples

        @wp.kernel
        def fall(q: wp.array(dtype=wp.vec3), qd: wp.array(dtype=wp.vec3), dt: float):
            i = wp.tid()
            qd[i] = qd[i] + wp.vec3(0.0, -8.0, 0.0) * dt
            q[i] = q[i] + qd[i] * dt

        class State:
            pass

        class Example:
            def __init__(self, args):
                assert args.viewer == "null" and args.device == "cpu"
                self.state_0 = State()
                self.state_0.particle_q = wp.array([[0.0, 1.0, 0.0]], dtype=wp.vec3)
                self.state_0.particle_qd = wp.zeros(1, dtype=wp.vec3)

            def step(self):
                wp.launch(fall, dim=1, inputs=[self.state_0.particle_q, self.state_0.particle_qd, 0.5])

        if __name__ == "__main__":
            p = argparse.ArgumentParser()
            p.add_argument("--viewer")
            p.add_argument("--num-frames", type=int)
            p.add_argument("--device")
            args = p.parse_args()
            newton.examples.run(Example(args), args)
    """,
}


def test_example_worker_saves_the_final_state_on_adjit(tmp_path):
    import subprocess
    import sys

    import numpy as np
    src = _tree(tmp_path / "src", _FAKE_EXAMPLES)
    out = tmp_path / "fall.npz"
    proc = subprocess.run([sys.executable, str(TOOL), "--worker-example", str(src), "--example", "fall",
                           "--num-frames", "3", "--backend", "adjit", "--out", str(out)],
                          cwd=str(src), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as saved:
        assert sorted(saved) == ["final.particle_q", "final.particle_qd"]
        # 3 frames of dt = 0.5 at -8: velocities -4, -8, -12; heights 1 - 2 - 4 - 6 (all exact in float32)
        np.testing.assert_array_equal(saved["final.particle_qd"], np.array([[0.0, -12.0, 0.0]], np.float32))
        np.testing.assert_array_equal(saved["final.particle_q"], np.array([[0.0, -11.0, 0.0]], np.float32))
