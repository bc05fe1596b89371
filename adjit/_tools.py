"""Console-script shims for the native tools shipped inside the package."""
import os
import sys
from pathlib import Path


def tool_path(name: str) -> Path:
    """Path of a native tool installed in ``adjit/bin``."""
    return Path(__file__).resolve().parent / "bin" / name


def adjit_opt() -> None:
    """``adjit-opt``: mlir-opt with every upstream dialect and pass plus adjit's."""
    path = tool_path("adjit-opt")
    os.execv(str(path), [str(path), *sys.argv[1:]])
