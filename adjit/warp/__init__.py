"""Programs written against ``import warp`` run on adjit unchanged:
``adjit.alias_warp()`` makes ``warp`` and its submodules resolve to adjit.

    import adjit
    adjit.alias_warp()      # before the program imports warp
    import warp as wp       # adjit itself: wp is adjit, wp.types is adjit.types

or, for a whole program, ``python -m adjit.warp script.py args...`` (also
``python -m adjit.warp -m package.module args...``; see __main__.py).

``warp`` is adjit itself (the same module object, so settings such as
``wp.config.mode`` are adjit's). The submodules in ``SUBMODULES`` are
adjit's modules of the same role; ``warp.context`` is the small module
``adjit.warp.context`` (Warp's older home of ``Device``, ``Kernel``, ...).
Any other ``warp.<name>`` import raises ``NotInAdjitImportError`` (a
ModuleNotFoundError) naming it and saying that it is not in adjit yet, and a
missing ``wp.<name>`` raises ``NotInAdjitError`` (an AttributeError) the
same way; see docs/warp_alias.md.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from ..errors import NotInAdjitImportError

#: ``warp``'s modules adjit has, each with the adjit module that stands in
#: for it (imported when first imported as ``warp.<name>``).
SUBMODULES = {
    "warp": "adjit",
    "warp.types": "adjit.types",
    "warp.config": "adjit.config",
    "warp.autograd": "adjit.autograd",
    "warp.utils": "adjit.utils",
    "warp.optim": "adjit.optim",
    "warp.optim.linear": "adjit.optim_linear",
    "warp.context": "adjit.warp.context",
    "warp.tape": "adjit.runtime.tape",
    "warp.dlpack": "adjit.interop",
    "warp.torch": "adjit.torch",
    "warp.jax": "adjit.jax",
    # Warp 1.19's geometry module: IsoSurfaceMarchingCubes (adjit.geometry's
    # other names come along; Warp's others raise NotInAdjitError).
    "warp.geometry": "adjit.geometry",
    # Warp's private implementation package (Warp 1.10+), only the names
    # programs use (adjit/warp/_src; a name it lacks raises NotInAdjitError).
    "warp._src": "adjit.warp._src",
    "warp._src.types": "adjit.warp._src.types",
    "warp._src.context": "adjit.warp._src.context",
    "warp._src.utils": "adjit.warp._src.utils",
    "warp._src.thirdparty": "adjit.warp._src.thirdparty",
    "warp._src.thirdparty.appdirs": "adjit.warp._src.thirdparty.appdirs",
    # Warp's finite-element library is not in adjit: only the device functions
    # programs import from warp.fem.linalg are named (refused where called).
    "warp.fem": "adjit.warp.fem",
    "warp.fem.linalg": "adjit.warp.fem.linalg",
}

#: Warp's packages among them: ``warp.optim.<x>`` must reach the finder (and
#: its clear error) rather than Python's "'warp.optim' is not a package".
_PACKAGES = ("warp.optim",)


class _AliasLoader(importlib.abc.Loader):
    """Loads ``warp.<name>`` as the adjit module standing in for it: the
    placeholder module Python creates is replaced in ``sys.modules`` by that
    module, which the import then returns (its own ``__spec__`` untouched)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        sys.modules[module.__name__] = _target_module(module.__name__, self.target)


def _target_module(name: str, target: str):
    mod = importlib.import_module(target)
    if name in _PACKAGES and not hasattr(mod, "__path__"):
        mod.__path__ = []  # a package with no files: its submodules come from the finder
    return mod


class WarpFinder(importlib.abc.MetaPathFinder):
    """Resolves ``warp`` and ``warp.<name>`` imports to adjit (first on
    ``sys.meta_path``, so an installed Warp is never found instead)."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "warp" and not fullname.startswith("warp."):
            return None
        stand_in = SUBMODULES.get(fullname)
        if stand_in is None:
            raise NotInAdjitImportError(
                f"{fullname} is not in adjit yet: adjit stands in for warp here (adjit.alias_warp) and has "
                f"no counterpart of Warp's {fullname} module (docs/warp_alias.md lists the warp modules it "
                "covers)")
        return importlib.util.spec_from_loader(fullname, _AliasLoader(stand_in))


_FINDER = WarpFinder()


def alias_warp() -> None:
    """Makes ``import warp`` (and ``import warp.types``, ...) give adjit, for
    code written against Warp. Call it before that code imports warp; calling
    it again does nothing. Raises RuntimeError when another ``warp`` is
    already imported (its kernels and arrays would not mix with adjit's)."""
    adjit = sys.modules[__name__.rpartition(".")[0]]  # the package, imported before this module
    current = sys.modules.get("warp")
    if current is not None and current is not adjit:
        raise RuntimeError(
            f"adjit.alias_warp(): a different 'warp' is already imported (from "
            f"{getattr(current, '__file__', None)!r}); call alias_warp() before anything imports warp")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    sys.modules["warp"] = adjit
    for name, target in SUBMODULES.items():
        # What ``import warp`` makes an attribute is registered now (the rest on
        # first import, which also sets the attribute, as for Warp's modules).
        child = name.rpartition(".")[2]
        if name != "warp" and adjit.__dict__.get(child) is sys.modules.get(target, False):
            sys.modules[name] = _target_module(name, target)
    # Warp <= 1.9 exposes its context module as ``wp.context`` after ``import warp``.
    adjit.context = sys.modules["warp.context"] = _target_module("warp.context", SUBMODULES["warp.context"])
    # Warp 1.10+ imports its implementation from ``warp._src``, so ``wp._src`` is there too.
    adjit._src = sys.modules["warp._src"] = _target_module("warp._src", SUBMODULES["warp._src"])


def is_warp_aliased() -> bool:
    """Whether ``warp`` resolves to adjit in this process."""
    return sys.modules.get("warp") is sys.modules.get("adjit") is not None
