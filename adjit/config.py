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

Setting or reading any other attribute raises ``AttributeError`` naming the
known fields (so a misspelt setting is never silently ignored).
"""
from __future__ import annotations

import os
import sys
import types as _types

#: The fields and their defaults.
FIELDS = {"cache_dir": None, "cache": True, "bounds_check": True, "verify_fp": False, "mode": "release",
          "deterministic": True}
MODES = ("release", "debug")

cache_dir: str | None = None
cache: bool = True
bounds_check: bool = True
verify_fp: bool = False
mode: str = "release"
deterministic: bool = True


def _unknown(name: str) -> AttributeError:
    return AttributeError(f"adjit.config has no setting '{name}'; the settings are "
                          f"{', '.join(FIELDS)}")


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
    if name in ("cache", "bounds_check", "verify_fp"):
        if type(value) is not bool:
            raise TypeError(f"adjit.config.{name} must be True or False, got {value!r}")
        return value
    if name == "mode":
        if value not in MODES:
            raise ValueError(f"adjit.config.mode must be one of {', '.join(map(repr, MODES))}, got {value!r}")
        return value
    raise _unknown(name)


def reset() -> None:
    """Sets every field back to its default."""
    for name, value in FIELDS.items():
        setattr(sys.modules[__name__], name, value)


def __getattr__(name: str):
    # Only called for names the module does not have.
    if name.startswith("__"):
        raise AttributeError(name)
    raise _unknown(name)


class _ConfigModule(_types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        if name.startswith("__") and name.endswith("__"):  # the import system's own (__spec__, ...)
            super().__setattr__(name, value)
            return
        super().__setattr__(name, _check(name, value))

    def __delattr__(self, name: str) -> None:
        if name in FIELDS:
            raise AttributeError(f"adjit.config.{name} cannot be deleted (set it instead; default "
                                 f"{FIELDS[name]!r})")
        super().__delattr__(name)

    def __repr__(self) -> str:
        return "adjit.config(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in FIELDS) + ")"


sys.modules[__name__].__class__ = _ConfigModule
