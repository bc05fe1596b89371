"""``print_diagnostics()`` (Warp's): what adjit knows of its build and of
this machine, for bug reports."""
from __future__ import annotations

import importlib.util
import platform
import sys
from importlib import metadata

import numpy as np

from . import _runtime, cache, config
from .device import cuda_unavailable_reason, get_devices, is_cuda_available

#: The distribution of the MLIR Python bindings adjit is built against.
MLIR_DISTRIBUTION = "xtc-mlir-python-bindings"


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _compiler_installed() -> bool:
    try:
        return importlib.util.find_spec("adjit._adjit") is not None
    except (ImportError, ValueError):
        return False


def diagnostics() -> dict:
    """What ``print_diagnostics`` prints, as a dict."""
    return {
        "adjit": _version("adjit") or "unknown",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
        # None where the bindings are not installed (a runtime-only install)
        "mlir": _version(MLIR_DISTRIBUTION) if importlib.util.find_spec("mlir") is not None else None,
        "compiler": _compiler_installed(),
        "cpu": cache.target_id(),
        "cpu_threads": _runtime.num_threads(),
        "cache_dir": str(cache.cache_dir()),
        "cache_enabled": cache.enabled(),
        "cpu_kernel_cache_key": cache.get_cpu_kernel_cache_key(),
        "devices": [str(d) for d in get_devices()],
        "cuda_available": is_cuda_available(),
        # why not, where CUDA is unavailable ("" where it is)
        "cuda_unavailable_reason": cuda_unavailable_reason(),
        "cuda_driver_version": _runtime.cuda.driver_version(),
        "config": {name: getattr(config, name) for name in config.FIELDS},
    }


def print_diagnostics() -> dict:
    """Prints adjit's version, Python's, numpy's and the MLIR bindings',
    whether the compiler is installed, the CPU (as the runtime identifies
    it) and its worker threads, the kernel cache folder, the devices and
    ``adjit.config``; returns them as a dict (Warp's ``wp.print_diagnostics``)."""
    info = diagnostics()
    width = max(map(len, info))
    lines = ["adjit diagnostics"]
    for key, value in info.items():
        if key == "config":
            value = ", ".join(f"{k}={v!r}" for k, v in value.items())
        elif key == "devices":
            value = ", ".join(value)
        elif value is None:
            value = "not installed"
        lines.append(f"  {key:<{width}}  {value}")
    print("\n".join(lines))
    return info
