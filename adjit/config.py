"""Process-wide settings, a fixed set of fields: ``adjit.config.cache_dir = ...``.

This module is itself the settings object (its class is a module subclass
that checks every assignment), so ``adjit.config`` is the same object
however it is imported. Fields:

- ``cache_dir``: the kernel cache folder (``None``: ``$ADJIT_CACHE_DIR``,
  else ``$XDG_CACHE_HOME/adjit`` or ``~/.cache/adjit``); a str or path.
- ``cache``: whether compiled kernels are cached on disk (a bool).
- ``bounds_check``: range checks on every array access (a bool, default
  True): an index out of range raises ``IndexError`` after the launch, naming
  the kernel, the line, the array, the index and the thread. Checks the
  compiler proves once per launch cost nothing; turn them off only to measure.
  ``@adjit.kernel(bounds_check=...)`` overrides it per kernel.
- ``verify_fp``: report the first NaN or infinity a kernel (or its adjoint)
  stores into an array, as a ``NonFiniteError`` naming the line, the array,
  the index and the thread (a bool, default False; it costs a compare per
  float stored).
- ``mode``: ``"release"`` (the default) or ``"debug"``, which turns on
  ``verify_fp`` (bounds checks are on in both).
- ``deterministic``: CPU launches give bitwise the same results on every run
  and for any ``ADJIT_NUM_THREADS`` (a bool, default True): float atomic adds
  are applied in thread order (see docs/determinism.md). ``False`` lets
  them land in whatever order the threads run, as on a GPU. Warp's
  ``DeterministicMode`` values are accepted too: ``NOT_GUARANTEED`` sets
  False, ``RUN_TO_RUN`` True (the value read back is the bool, which
  compares equal to the mode), ``GPU_TO_GPU`` raises
  ``WarpDeterminismError`` (adjit cannot promise the same bits on other
  machines; see adjit/determinism.py).

Warp's names for the same or related settings, so Warp scripts run unchanged:

- ``kernel_cache_dir`` and ``cache_kernels``: other names of ``cache_dir``
  and ``cache`` (the same setting, read or written through either name).
- ``enable_backward``: the default of new modules' ``enable_backward``
  option (a bool, default True; as in Warp, a module takes the value when it
  is created, at its first kernel): ``False`` gives their kernels no
  adjoint, so ``backward()`` through one raises ``GradientError``.
- ``max_unroll``: the default of new modules' ``max_unroll`` option (an
  int >= 0, default 16). It changes no result: adjit compiles loops as loops
  (``range(static(n))`` is unrolled whatever it says) and LLVM unrolls.
- ``log_level``: the level of adjit's log messages, the ``"adjit"`` Python
  logger's (``adjit.LOG_DEBUG`` .. ``LOG_ERROR``; 0, the default, is
  ``logging.NOTSET``: the logger follows its parents', WARNING unless set).
- ``print_launches``: print a line per kernel launch (name, dim, device; a
  bool, default False).
- ``verify_autograd_array_access``: Warp's opt-in check that a recorded
  kernel's input is not overwritten before backward(). adjit always checks
  (a tape raises ``GradientError`` naming the array instead of returning a
  wrong gradient), so the value is stored and the check stays on.
- ``enable_vector_component_overwrites``: Warp's opt-in copy-on-write of
  vector, matrix and quaternion components written more than once, for
  exact gradients. adjit differentiates component overwrites exactly
  whatever it says (the value is stored).

Setting or reading any other attribute raises ``AttributeError`` naming the
known fields (so a misspelt setting is never silently ignored); Warp's
settings adjit has no counterpart for say why.
"""
from __future__ import annotations

import os
import sys
import types as _types

#: The fields and their defaults.
FIELDS = {"cache_dir": None, "cache": True, "bounds_check": True, "verify_fp": False, "mode": "release",
          "deterministic": True, "enable_backward": True, "max_unroll": 16, "print_launches": False,
          "verify_autograd_array_access": False, "log_level": 0, "enable_vector_component_overwrites": False}
MODES = ("release", "debug")
#: Warp's names for adjit's settings.
ALIASES = {"kernel_cache_dir": "cache_dir", "cache_kernels": "cache"}
_CUDA = "a CUDA build setting; adjit compiles PTX through MLIR and runs it with its own runtime"
_NATIVE = "a setting of Warp's C++ compiler; adjit compiles through MLIR and LLVM, in process"
#: Warp 1.19's settings adjit has no counterpart for, and why (the error says it).
WARP_ONLY = {
    **dict.fromkeys(("cuda_output", "ptx_target_arch", "cuda_arch_suffix", "llvm_cuda", "verify_cuda",
                     "enable_mathdx_gemm", "enable_mathdx_solver", "enable_mathdx_fft", "enable_mempools_at_init",
                     "enable_graph_capture_module_load_by_default", "enable_tiles_in_stack_memory",
                     "default_grid_stride", "lineinfo"), _CUDA),
    **dict.fromkeys(("cpu_compiler_flags", "legacy_cpu_linker", "use_precompiled_headers", "compile_time_trace",
                     "optimization_level", "line_directives", "enable_cpu_blocks"), _NATIVE),
    "legacy_scalar_return_types": "adjit's scalar results are Warp 1.19's (Python scalars on the host)",
    "launch_array_access_mode": "adjit's launches always check the arrays against the kernel's parameters",
    "deterministic_debug": "use adjit.config.deterministic (adjit's ordered atomics are always on by default)",
    "deterministic_max_records": "adjit's ordered atomics need no record buffer",
    "load_module_max_workers": "adjit compiles each kernel when first launched (adjit.load_module compiles "
                               "ahead)",
    "track_memory": "use adjit.ScopedMemoryTracker",
    "verbose_warnings": "adjit's warnings go through the 'adjit' Python logger (adjit.config.log_level)",
    "version": "adjit's version is adjit.__version__",
}

cache_dir: str | None = None
cache: bool = True
bounds_check: bool = True
verify_fp: bool = False
mode: str = "release"
deterministic: bool = True
enable_backward: bool = True
max_unroll: int = 16
print_launches: bool = False
#: Counts changes of the settings (not a setting: launches compare it).
epoch: int = 0
verify_autograd_array_access: bool = False
enable_vector_component_overwrites: bool = False
#: Bytes of device heap per CUDA device for runtime loops' checkpoints that do not fit a
#: thread's frame (docs/gpu.md); read when a device first loads a kernel that uses it.
cuda_heap_bytes: int = 1 << 30
# log_level is not stored here: it is the "adjit" logger's level (__getattr__).


def _unknown(name: str) -> AttributeError:
    why = f" ({name} is Warp's: {WARP_ONLY[name]})" if name in WARP_ONLY else ""
    return AttributeError(f"adjit.config has no setting '{name}'{why}; the settings are "
                          f"{', '.join(list(FIELDS) + list(ALIASES))}")


def _check(name: str, value):
    """``value`` as the setting ``name`` stores it, or the error saying why not."""
    if name == "cache_dir":
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"adjit.config.cache_dir must be a folder path (str or os.PathLike) or None, "
                            f"got {type(value).__name__}")
        return os.fspath(value)
    if name == "deterministic":
        from .determinism import deterministic_flag  # (imports only errors.py)
        return deterministic_flag(value)
    if name in ("cache", "bounds_check", "verify_fp", "enable_backward", "print_launches",
                "verify_autograd_array_access", "enable_vector_component_overwrites"):
        if type(value) is not bool:
            raise TypeError(f"adjit.config.{name} must be True or False, got {value!r}")
        return value
    if name in ("max_unroll", "log_level"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"adjit.config.{name} must be an int >= 0, got {value!r}")
        return value
    if name == "mode":
        if value not in MODES:
            raise ValueError(f"adjit.config.mode must be one of {', '.join(map(repr, MODES))}, got {value!r}")
        return value
    raise _unknown(name)


def settings_changed() -> None:
    """Marks launch plans made before as stale (adjit/launch.py): for
    settings kept outside this module (module options)."""
    module = sys.modules[__name__]
    module.__dict__["epoch"] = module.__dict__.get("epoch", 0) + 1


def reset() -> None:
    """Sets every field back to its default."""
    for name, value in FIELDS.items():
        setattr(sys.modules[__name__], name, value)


def __getattr__(name: str):
    # Only called for names the module does not have.
    if name.startswith("__"):
        raise AttributeError(name)
    if name in ALIASES:
        return getattr(sys.modules[__name__], ALIASES[name])
    if name == "log_level":
        import logging
        return logging.getLogger("adjit").level
    raise _unknown(name)


class _ConfigModule(_types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        if name.startswith("__") and name.endswith("__"):  # the import system's own (__spec__, ...)
            super().__setattr__(name, value)
            return
        name = ALIASES.get(name, name)
        value = _check(name, value)
        if name == "log_level":
            import logging
            logging.getLogger("adjit").setLevel(value)
            return
        super().__setattr__(name, value)
        # (launch plans made under other settings are stale: adjit/launch.py)
        self.__dict__["epoch"] = self.__dict__.get("epoch", 0) + 1

    def __delattr__(self, name: str) -> None:
        if name in FIELDS:
            raise AttributeError(f"adjit.config.{name} cannot be deleted (set it instead; default "
                                 f"{FIELDS[name]!r})")
        super().__delattr__(name)

    def __repr__(self) -> str:
        return "adjit.config(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in FIELDS) + ")"


def _check_environment() -> None:
    """Warns about an environment setting the runtime cannot use (it falls
    back to its default there, which would otherwise go unnoticed)."""
    import re
    import warnings
    threads = os.environ.get("ADJIT_NUM_THREADS")
    if threads is None:
        return
    # As cpp/runtime/ThreadPool.cpp reads it: an integer >= 1, at most 1024 used.
    if not re.fullmatch(r"\s*[+-]?[0-9]+", threads) or int(threads) < 1:
        warnings.warn(f"ADJIT_NUM_THREADS={threads!r} is not a positive integer: ignored (CPU launches use "
                      "every core this process may run on)", RuntimeWarning, stacklevel=3)
    elif int(threads) > 1024:
        warnings.warn(f"ADJIT_NUM_THREADS={threads!r}: at most 1024 threads are used", RuntimeWarning,
                      stacklevel=3)


sys.modules[__name__].__class__ = _ConfigModule
_check_environment()
