"""adjit: a differentiable kernel compiler for Warp-style Python kernels, on MLIR.

``import adjit as wp`` runs Warp-style kernels: ``@wp.kernel``, ``wp.tid()``,
``wp.array(...)``, ``wp.launch(...)``.
"""
import mlir.ir  # noqa: F401  (the MLIR bindings adjit registers into)
from mlir._mlir_libs import get_dialect_registry as _get_dialect_registry

from . import _adjit

# Every mlir.ir.Context created from now on gets the adjit dialect, and the
# passes and pipelines are available to PassManager.parse.
_adjit.register_dialects(_get_dialect_registry())
_adjit.register_passes()

# The CPU JIT is created in the background while the program imports and
# defines its kernels; the thread is joined before the interpreter exits.
_adjit.start_jit_warmup()
import atexit as _atexit  # noqa: E402
_atexit.register(_adjit.wait_jit_warmup)

from . import types  # noqa: E402
from .api import (Function, Kernel, adjoint, compile, constant, func, func_grad, kernel,  # noqa: E402
                  launch, synchronize, tid)
from .compiler.builtins import registry as builtin_registry  # noqa: E402
from .compiler.cache import config  # noqa: E402
from .errors import (AdjitError, CompileError, GradientError, KernelError, KernelNameError,  # noqa: E402
                     KernelSyntaxError, KernelTypeError, LaunchError)
from .runtime.tape import Tape  # noqa: E402
from .runtime.array import (Array, array, clone, copy, array1d, array2d, array3d, array4d, empty, full, ones,  # noqa: E402
                            ones_like, zeros, zeros_like)
from .types import (bool_, float32, float64, int32, int64, mat22, mat22d, mat33, mat33d,  # noqa: E402
                    mat44, mat44d, matrix, quat, quatd, vec2, vec2d, vec2i, vec3, vec3d, vec3i, vec4, vec4d,
                    vec4i, vector)

quatf = quat  # Warp's name of the float32 quaternion


def register_dialect(context, load: bool = True) -> None:
    """Registers (and loads) the adjit dialect in a context created before import."""
    _adjit.register_dialect(context, load)


def _export_builtins():
    for _name, _entry in builtin_registry().items():
        globals()[_name] = _entry


_export_builtins()

from . import autograd  # noqa: E402,F401
