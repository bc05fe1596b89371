"""``warp._src.utils``: Warp's implementation of ``warp.utils``; its names
are adjit.utils' (``array_scan``, ``array_sum``, ...). Any other name
raises NotInAdjitError."""
from __future__ import annotations

import sys

from ... import utils as _utils
from . import lookup


def __getattr__(name: str):
    return lookup("warp._src.utils", _utils, name, sys._getframe(1))
