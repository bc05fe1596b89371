"""``warp.fem``: Warp's finite-element library is not in adjit. Programs
that only take a device function from it (Newton's Kamino solver imports
``warp.fem.linalg.symmetric_eigenvalues_qr`` at module level) import: the
names in ``linalg`` are named, and refused where called (a kernel calling
one fails to compile, saying it is not in adjit yet). Any other name of
``warp.fem`` raises NotInAdjitError at once, so code using the library
(``fem.integrand``, ``fem.Grid3D``, ...) fails where it names it."""
from __future__ import annotations

import importlib
import sys

from .._src import missing


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'warp.fem' has no attribute {name!r}")
    if name == "linalg":
        return importlib.import_module(f"{__name__}.linalg")
    raise missing("warp.fem", name, sys._getframe(1), why=" (Warp's finite-element library)")
