"""Which device can reach which array's memory: Warp's ``can_access``."""
from __future__ import annotations

from ..device import get_device
from .array import Array
from .indexed_array import IndexedArray
from .struct_array import StructArray


def can_access(device, resource) -> bool:
    """Whether ``device`` can read and write ``resource`` (an adjit array,
    indexed array or array of structs) directly, as Warp's: True for the CPU
    and arrays on the CPU (host memory, ``MemoryKind.HOST``). TypeError for
    anything else (Warp's takes concrete arrays only); a CUDA device raises
    ValueError (not available)."""
    if not isinstance(resource, (Array, IndexedArray, StructArray)):
        raise TypeError(f"can_access: resource must be an adjit array (array, indexedarray or an array of structs), "
                        f"got {type(resource).__name__}")
    return get_device(device).is_cpu and str(resource.device) == "cpu"
