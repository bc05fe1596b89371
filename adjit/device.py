"""Devices, as Warp's host API names them: ``get_device``, ``ScopedDevice``, ...

adjit runs on the CPU so far, so there is one device, ``"cpu"``. The CUDA
names answer truthfully (``is_cuda_available()`` is False, no CUDA devices),
and asking for a CUDA device raises a ``ValueError`` saying so, rather than
running somewhere else than asked.
"""
from __future__ import annotations

import platform
import threading


class Device:
    """A device kernels run on and arrays live on (only the CPU so far)."""

    def __init__(self, alias: str):
        self.alias = alias
        self.name = platform.processor() or platform.machine() or "CPU"
        self.ordinal = -1
        self.is_cpu = alias == "cpu"
        self.is_cuda = False
        self.arch = 0

    def __str__(self) -> str:
        return self.alias

    def __repr__(self) -> str:
        return f"<adjit device '{self.alias}'>"

    def __eq__(self, other) -> bool:
        if isinstance(other, Device):
            return other.alias == self.alias
        if isinstance(other, str):
            return other == self.alias
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.alias)


CPU = Device("cpu")

#: The default device of each thread (``set_device``, ``ScopedDevice``).
_state = threading.local()


def _unavailable(ident) -> ValueError:
    return ValueError(f"device {str(ident)!r} is not available: adjit runs kernels on the CPU so far "
                      "(its GPU runtime is not built yet); use 'cpu'")


def get_device(ident=None) -> Device:
    """The device ``ident`` names ("cpu", a Device), or the current default
    device with no argument."""
    if ident is None:
        return getattr(_state, "device", CPU)
    if isinstance(ident, Device):
        return ident
    if ident == "cpu":
        return CPU
    if isinstance(ident, str) and (ident == "cuda" or ident.startswith("cuda:")):
        raise _unavailable(ident)
    raise ValueError(f"unknown device {ident!r} (devices are named 'cpu' or 'cuda:N')")


def device_alias(ident) -> str:
    """The alias of the device ``ident`` names (None: the default device)."""
    return get_device(ident).alias


def set_device(ident) -> None:
    """Makes ``ident`` the default device of this thread."""
    _state.device = get_device(ident)


def get_devices() -> list[Device]:
    """Every device available: the CPU."""
    return [CPU]


def get_preferred_device() -> Device:
    """The device Warp would pick by default: the first CUDA device, else the CPU."""
    return CPU


def get_cuda_devices() -> list[Device]:
    return []


def get_cuda_device_count() -> int:
    return 0


def is_cpu_available() -> bool:
    return True


def is_cuda_available() -> bool:
    """False: adjit has no GPU runtime yet (it produces PTX; nothing runs it)."""
    return False


def is_device_available(device) -> bool:
    try:
        return get_device(device) in get_devices()
    except ValueError:
        return False


def synchronize_device(device=None) -> None:
    """Waits for ``device``'s outstanding work: CPU launches are synchronous,
    so this only checks the device exists."""
    get_device(device)


class ScopedDevice:
    """``with ScopedDevice("cpu"):``: the default device inside the block."""

    def __init__(self, device):
        self.device = get_device(device)

    def __enter__(self) -> Device:
        self._saved = get_device()
        set_device(self.device)
        return self.device

    def __exit__(self, *exc) -> None:
        set_device(self._saved)


def is_cubql_available() -> bool:
    """Whether the cuBQL BVH builder is available (Warp's): False, adjit's
    runtime being built without it (it builds no BVHs on the GPU)."""
    return False
