#!/usr/bin/env python3
"""The one test command: lit (dialect, passes, pipelines) then pytest.

Usage: python tests/run.py [extra pytest args]
Exits non-zero if either suite fails.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    # Run from tests/, not the repository root: there `import adjit` would pick
    # the source tree (which has no compiled module) over the installed package.
    cwd = ROOT / "tests"
    lit = subprocess.run([sys.executable, "-c", "from lit.main import main; main()", "-sv",
                          str(ROOT / "tests" / "lit")], cwd=cwd)
    pytest = subprocess.run([sys.executable, "-m", "pytest", "-q", str(ROOT / "tests" / "python"),
                             *sys.argv[1:]], cwd=cwd)
    print(f"\nlit: {'passed' if lit.returncode == 0 else 'FAILED'}; "
          f"pytest: {'passed' if pytest.returncode == 0 else 'FAILED'}")
    return 1 if lit.returncode or pytest.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
