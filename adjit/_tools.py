"""Console-script shims for the native tools shipped inside the package."""
import importlib.util
import os
import sys
from pathlib import Path


def tool_path(name: str) -> Path:
    """Path of a native tool installed in ``adjit/bin``.

    Found through the package's search locations (not ``__file__``), so it
    works for editable installs too, where compiled files and ``.py`` sources
    live in different directories. Importing ``adjit`` is not needed.
    """
    spec = importlib.util.find_spec("adjit")
    for location in spec.submodule_search_locations or []:
        candidate = Path(location) / "bin" / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"adjit tool '{name}' is not installed (looked in adjit/bin)")


def adjit_opt() -> None:
    """``adjit-opt``: mlir-opt with every upstream dialect and pass plus adjit's."""
    path = tool_path("adjit-opt")
    os.execv(str(path), [str(path), *sys.argv[1:]])
