"""``warp._src.context``: Warp's implementation of its runtime (devices,
kernels, modules, the builtin table). Its names are those of
``adjit.warp.context`` (Warp <= 1.9's ``warp.context``: ``Device``,
``Kernel``, ``Function``, ``Module``, ``get_device``, ...), plus
``builtin_functions``: adjit's kernel builtins by name (Warp's table of
its builtins; programs test ``name in builtin_functions``). Any other name
raises NotInAdjitError."""
from __future__ import annotations

import sys

from .. import context as _context
from . import lookup


def __getattr__(name: str):
    if name == "builtin_functions":
        from ...builtins.registry import registry
        return registry()
    return lookup("warp._src.context", _context, name, sys._getframe(1))
