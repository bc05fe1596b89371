"""``warp._src``: the few names of Warp's private implementation package
(Warp 1.10 moved its implementation under ``warp._src``) that programs
written against Warp import, each mapped to adjit's equivalent.

Only names real programs use are here (Newton 1.8: see docs/newton.md); the
submodules are listed in ``adjit.warp.SUBMODULES``. Any other name fails
at once, naming it and saying it is not in adjit yet: ``import
warp._src.codegen`` raises ``NotInAdjitImportError``, and reading a missing
``warp._src.types.name`` raises ``NotInAdjitError`` (an AttributeError),
never an error from deep inside adjit.
"""
from __future__ import annotations

import importlib
import sys

from ...errors import NotInAdjitError, NotInAdjitImportError, _is_import_from

#: The submodules of ``warp._src`` adjit stands in for (files beside this one).
SUBMODULES = ("types", "context", "utils", "thirdparty")


def missing(module: str, name: str, frame=None, why: str = "") -> Exception:
    """The error for Warp's private ``<module>.<name>`` (``module`` as Warp
    spells it, ``warp._src...``) that adjit has no counterpart of: a
    NotInAdjitImportError for ``from <module> import <name>``, else a
    NotInAdjitError (an AttributeError, so ``hasattr`` is False)."""
    text = (f"{module}.{name} is not in adjit yet: adjit, standing in for warp (adjit.alias_warp), has no "
            f"counterpart of Warp's internal {module}.{name}{why} (docs/warp_alias.md lists the warp._src "
            "names it covers)")
    if _is_import_from(frame):
        return NotInAdjitImportError(text, name=f"{module}.{name}")
    return NotInAdjitError(text, name=name)


def lookup(module: str, target, name: str, frame):
    """``<module>.<name>`` for the stand-in of Warp's ``module`` whose names
    are those of adjit's module ``target``: a module ``__getattr__`` returns
    this (``frame``: its caller's). A name ``target`` lacks raises
    ``missing``."""
    if name.startswith("__"):
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    if not name.startswith("_") and name in vars(target):
        return vars(target)[name]
    raise missing(module, name, frame)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'warp._src' has no attribute {name!r}")
    if name in SUBMODULES:  # ``wp._src.types...`` without importing it first, as Warp allows
        return importlib.import_module(f"{__name__}.{name}")
    raise missing("warp._src", name, sys._getframe(1))


def __dir__():
    return sorted(set(globals()) | set(SUBMODULES))
