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
