"""Modules imported on first use: the compiler's MLIR imports stay out of ``import adjit``.

``ir = deferred_import("mlir.ir")`` at a module's top level binds a stand-in
that imports ``mlir.ir`` the first time one of its attributes is read. Modules
that declare what the kernel language has (types, the builtin registry) use it
for the MLIR they need only when a kernel is compiled, so that running
precompiled kernels never loads MLIR.
"""
from __future__ import annotations

import importlib


class _DeferredModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<deferred import of {self._name}>"


def deferred_import(name: str):
    """A stand-in for module ``name`` that imports it on first attribute access."""
    return _DeferredModule(name)
