"""The adjit dialect in MLIR's Python bindings, registered on first import.

Importing this package (the compiler does, ``import adjit`` does not) adds
the dialect to the bindings' global registry, so every ``mlir.ir.Context``
created afterwards has it, and registers the passes and stage pipelines for
``PassManager.parse``. ``adjit.dialects.adjit`` holds the op builders
generated from dialects/AdjitOps.td.
"""
from mlir._mlir_libs import get_dialect_registry as _get_dialect_registry

from .. import _adjit

_adjit.register_dialects(_get_dialect_registry())
_adjit.register_passes()
