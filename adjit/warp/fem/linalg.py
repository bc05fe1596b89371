"""``warp.fem.linalg``: the device functions of Warp's finite-element
linear algebra that programs import, named and refused where called
(adjit.language.NotInAdjitFunction). Any other name raises NotInAdjitError."""
from __future__ import annotations

import sys

from ...language import NotInAdjitFunction
from .._src import missing

_WHY = ("Warp's finite-element library (warp.fem) is not in adjit, and its device functions are not "
        "written for adjit yet")

symmetric_eigenvalues_qr = NotInAdjitFunction("warp.fem.linalg.symmetric_eigenvalues_qr", _WHY)
array_axpy = NotInAdjitFunction("warp.fem.linalg.array_axpy", _WHY)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'warp.fem.linalg' has no attribute {name!r}")
    raise missing("warp.fem.linalg", name, sys._getframe(1))
