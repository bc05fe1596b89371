"""adjit: a differentiable kernel compiler for Warp-style Python kernels, on MLIR.

``import adjit as wp`` runs Warp-style kernels: ``@wp.kernel``, ``wp.tid()``,
``wp.array(...)``, ``wp.launch(...)``.

Importing adjit loads no MLIR: the compiler (``adjit.compiler``) is imported
the first time a kernel has to be compiled, so kernels compiled beforehand
run where only the runtime is installed (see ``export``).
"""
import builtins as _builtins
import math as _math
import sys as _sys

#: adjit's version (pyproject.toml's). Warp code reading ``wp.__version__``
#: with adjit standing in for warp gets this too.
__version__ = "0.1.0"

from . import types  # noqa: F401
from . import config  # noqa: F401
from .builtins.registry import registry as builtin_registry
from .device import (Device, DeviceLike, ScopedDevice, cuda_unavailable_reason, get_cuda_device,  # noqa: F401
                     get_cuda_device_count, get_cuda_devices, get_device, get_devices, get_preferred_device,
                     is_cpu_available, is_cuda_available, is_device_available, set_device, synchronize,
                     synchronize_device)
from .runtime.cuda import (Event, ScopedStream, Stream, get_event_elapsed_time, get_stream,  # noqa: F401
                           record_event, set_stream, synchronize_event, synchronize_stream, wait_event,
                           wait_stream)
from .errors import (AdjitError, CompileError, GradientError, KernelAssertionError, KernelError,  # noqa: F401
                     KernelNameError, KernelSyntaxError, KernelTypeError, LaunchError, NonFiniteError, OutOfBoundsError,
                     WarpCodegenAttributeError, WarpCodegenError, WarpCodegenIndexError, WarpCodegenKeyError,
                     WarpCodegenTypeError, WarpCodegenValueError)
from .interop import (device_from_jax, device_from_torch, device_to_jax, device_to_torch,  # noqa: F401
                      dtype_from_jax, dtype_from_torch, dtype_to_jax, dtype_to_torch, from_dlpack, from_jax,
                      from_numpy, from_torch, to_dlpack, to_jax, to_torch)
from .language import (Function, Kernel, adjoint, constant, expect_eq, expect_near, expect_neq,  # noqa: F401
                       func, func_grad, func_jvp, func_native, func_replay, grad, kernel, printf, static, tid)
from .language import Module, get_module, get_module_options, overload, set_module_options  # noqa: F401
from .launch import Launch, launch, launch_tiled, observe_launches  # noqa: F401
from .runtime.capture import (CaptureError, CaptureMode, Graph, ScopedCapture, capture_begin,  # noqa: F401
                              capture_debug_dot_print, capture_end, capture_if, capture_launch, capture_while,
                              is_conditional_graph_supported)
from . import host_calls  # noqa: F401,E402  (builtins and funcs called from Python)
from .host_calls import map_function as map  # noqa: F401,E402  (Warp's wp.map)
from .forward import jvp, jvp_batch  # noqa: F401
from .loader import export  # noqa: F401
from .runtime.array import (Array, array, array1d, array2d, array3d, array4d, clone, copy, empty,  # noqa: F401
                            empty_like, full, full_like, ones, ones_like, zeros, zeros_like)
from .runtime.struct_array import StructArray  # noqa: F401
from .runtime.indexed_array import (IndexedArray, indexedarray, indexedarray1d, indexedarray2d,  # noqa: F401
                                     indexedarray3d, indexedarray4d)
from .runtime.tape import Tape  # noqa: F401
from .timing import (TIMING_ALL, TIMING_GRAPH, TIMING_KERNEL, TIMING_KERNEL_BUILTIN, TIMING_MEMCPY,  # noqa: F401
                     TIMING_MEMSET, ScopedTimer, TimingResult, timing_begin, timing_end, timing_print)
from .types import (bfloat16, float16, int8, int16, uint8, uint16, uint32, uint64, struct)  # noqa: F401
from .types import fixedarray, ref  # noqa: F401  (Warp's local array type, by-reference parameters)
from .types import Float, Int, Scalar  # noqa: F401  (Warp's generic scalar annotations)
from .types import (bool_, dtype_from_numpy, dtype_to_numpy, float32, float64, int32, int64,  # noqa: F401
                    mat22, mat22d, mat33, mat33d, spatial_matrix, spatial_matrixd, spatial_matrixf,
                    spatial_vector, spatial_vectord, spatial_vectorf,
                    mat44, mat44d, matrix, quat, quatd, transform, transformd, vec2, vec2d, vec2i, vec3, vec3d,
                    vec3i, vec4, vec4d, vec4i, vector)

globals().update(types.EXPLICIT_PRECISION_NAMES)  # vec3ui, vec2h, mat33h, quath, ... (Warp's names)
quatf = quat  # Warp's name of the float32 quaternion
transformf = transform
# Warp's explicit-precision spellings of the float32 types, and wp.bool.
vec2f, vec3f, vec4f = vec2, vec3, vec4
mat22f, mat33f, mat44f = mat22, mat33, mat44
bool = bool_  # noqa: A001 (Warp's name; Python's bool is unaffected outside this module's namespace)
# Warp's wp.len: len() of a vector (its length), a matrix (its rows) or an array (its first
# extent), in kernels and on the host; Python's own len.
len = _builtins.len  # noqa: A001

# Warp's math constants, Python floats (in kernels, literals of the type around them).
e = E = _math.e
pi = PI = _math.pi
half_pi = HALF_PI = _math.pi / 2
tau = TAU = _math.tau
phi = PHI = (1 + _math.sqrt(5)) / 2
ln2 = LN2 = _math.log(2)
ln10 = LN10 = _math.log(10)
log2e = LOG2E = _math.log2(_math.e)
log10e = LOG10E = _math.log10(_math.e)
inf = INF = _math.inf
nan = NAN = _math.nan


def compile(k: Kernel, target: str = "cpu", arch: str = "sm_80", adjoint: int = False,
            tangent: int = False) -> str:
    """Compiles a kernel (or, with ``adjoint=True``, its adjoint; with
    ``tangent=True``, its forward-mode tangent kernel, or with both the
    tangent kernel of its adjoint) and returns its final IR as text: PTX for
    ``target="cuda"`` (for ``arch``), the LLVM dialect module for
    ``target="cpu"``. An int K > 1 for ``adjoint`` or ``tangent`` gives the
    batched kernel with K lanes (seeds). Needs the compiler."""
    from .compiler import driver
    return driver.compile(k, target, arch, adjoint, tangent=tangent)


def init() -> None:
    """Nothing to set up (Warp's ``wp.init()``; adjit initializes on import)."""


def clear_kernel_cache() -> None:
    """Deletes the compiled kernels in the kernel cache folder (Warp's name)."""
    from . import cache
    cache.clear()


def register_dialect(context, load: bool = True) -> None:
    """Registers (and loads) the adjit dialect in a context created before
    the compiler was first imported."""
    from . import _adjit, dialects  # noqa: F401
    _adjit.register_dialect(context, load)


def _export_builtins():
    for _name, _entry in builtin_registry().items():
        globals()[_name] = _entry


_export_builtins()

from . import autograd  # noqa: E402,F401
from . import optim, utils  # noqa: E402,F401
from .utils import transform_expand  # noqa: E402,F401
from .cache import get_cpu_kernel_cache_key  # noqa: E402,F401
from .determinism import DeterministicMode, WarpDeterminismError  # noqa: E402,F401
from .diagnostics import print_diagnostics  # noqa: E402,F401
from .loader import force_load, load_module  # noqa: E402,F401
from .logger import (LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING, Logger,  # noqa: E402,F401
                     ScopedLogger, ScopedLogLevel, get_logger, set_logger)
from .runtime.array import from_ptr  # noqa: E402,F401
from .runtime.memory import (Allocator, HostAllocator, MemoryKind, ScopedAllocator,  # noqa: E402,F401
                             ScopedMemoryTracker, get_device_allocator, print_memory_report,
                             set_device_allocator)
from .runtime.residency import can_access  # noqa: E402,F401
from .aot import compile_aot_module, load_aot_module  # noqa: E402,F401
from .jax_names import (JaxCallableGraphMode, JaxModulePreloadMode, clear_jax_callable_graph_cache,  # noqa: E402,F401
                         jax_callable, jax_kernel)
from .device import is_cubql_available  # noqa: E402,F401
from .cache import clear_lto_cache  # noqa: E402,F401
from .warp import alias_warp, is_warp_aliased  # noqa: E402,F401
# Warp's out-of-scope classes, as names for annotations only (adjit/warp/placeholders.py)
from .warp.placeholders import Texture2D, Texture3D, Volume  # noqa: E402,F401
# Meshes, Bvhs, hash grids and their queries, in adjit's own kernel language (adjit/geometry/)
from .geometry import (Bvh, BvhQuery, HashGrid, HashGridQuery, bvh_query_aabb, bvh_query_next,  # noqa: E402,F401
                       bvh_query_capsule, bvh_query_ray, bvh_query_sphere, hash_grid_point_id, hash_grid_query,
                       hash_grid_query_next)
from .geometry import (Mesh, MeshQuery, MeshQueryAABB, MeshQueryPoint, MeshQueryRay,  # noqa: E402,F401
                       mesh_eval_face_normal, mesh_eval_position, mesh_eval_velocity, mesh_get_index, mesh_get_point,
                       mesh_get_velocity, mesh_query_aabb, mesh_query_aabb_next, mesh_query_furthest_point_no_sign,
                       mesh_query_next, mesh_query_point, mesh_query_point_no_sign, mesh_query_point_sign_normal,
                       mesh_query_point_sign_parity, mesh_query_point_sign_winding_number, mesh_query_ray,
                       mesh_query_ray_anyhit, mesh_query_ray_count_intersections, mesh_query_sphere)
from .geometry import closest_point_edge_edge, intersect_tri_tri  # noqa: E402,F401
from .geometry import MarchingCubes  # noqa: E402,F401
from .errors import NotInAdjitError, NotInAdjitImportError, missing_name as _missing_name  # noqa: E402,F401


def __getattr__(name: str):
    # Only called for names adjit does not have: say so (Warp code asking for
    # a name adjit lacks gets this, never an AttributeError from deep inside).
    if name.startswith("__"):
        raise AttributeError(f"module 'adjit' has no attribute {name!r}")
    import os
    here = os.path.dirname(__file__)
    if os.path.isfile(os.path.join(here, f"{name}.py")) or os.path.isfile(os.path.join(here, name, "__init__.py")):
        raise NotInAdjitError(f"module 'adjit' has no attribute {name!r}: adjit.{name} is a submodule that is "
                              f"not imported yet (import adjit.{name} first)", name=name)
    raise _missing_name("adjit", name, _sys._getframe(1))
