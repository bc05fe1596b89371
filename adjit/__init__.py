"""adjit: a differentiable kernel compiler for Warp-style Python kernels, on MLIR."""
import mlir.ir  # noqa: F401  (loads the MLIR bindings adjit registers into)
from mlir._mlir_libs import get_dialect_registry as _get_dialect_registry

from . import _adjit

# Every mlir.ir.Context created from now on gets the adjit dialect, and the
# passes and pipelines are available to PassManager.parse.
_adjit.register_dialects(_get_dialect_registry())
_adjit.register_passes()
