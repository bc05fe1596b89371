"""docs/architecture.md maps the whole tree: every module of the package and
every pass of dialects/Passes.td is named there."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def test_every_module_is_in_the_architecture_doc():
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "adjit").rglob("*.py")
                     if "__pycache__" not in p.parts and p.name != "__init__.py" and p.name != "_adjit_ops_gen.py")
    assert len(modules) > 40
    missing = [m for m in modules if m.removeprefix("adjit/") not in DOC and m not in DOC]
    assert not missing, f"docs/architecture.md does not mention: {missing}"


def test_every_pass_is_in_the_architecture_doc():
    passes = re.findall(r'^def \w+\s*:\s*Pass<"([a-z-]+)"', (ROOT / "dialects" / "Passes.td").read_text(), re.M)
    assert len(passes) > 10
    missing = [p for p in passes if p not in DOC]
    assert not missing, f"docs/architecture.md does not mention the passes {missing}"
