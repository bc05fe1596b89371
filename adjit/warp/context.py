"""``warp.context`` for code written against Warp 1.9 and older, where
``Device``, ``Kernel``, ``Function``, ``Module`` and the device functions
lived: adjit's counterparts of the names such code reads from it."""
import sys

from ..device import Device, DeviceLike, get_device, get_devices, get_preferred_device, set_device  # noqa: F401
from ..errors import missing_name
from ..language import Function, Kernel, Module, get_module  # noqa: F401
from ..runtime.array import Array  # noqa: F401

#: Warp 1.9's spelling of ``DeviceLike``.
Devicelike = DeviceLike


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise missing_name("adjit.context", name, sys._getframe(1))
