"""The ``wp`` namespace adjit.geometry's device functions are written in,
made without importing adjit (whose package imports adjit.geometry).

It holds what ``import adjit as wp`` would give these modules: the
builtins (``wp.dot``, ``wp.min``, ``wp.stop_gradient``, ...), the decorators
and the types they use. A @func resolves ``wp.<name>`` in its module's
globals when it is compiled, so this namespace serves as well as the package.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

from .. import builtins as _builtins  # noqa: F401  (registers every builtin)
from .. import types as T
from ..builtins.registry import registry
from ..language import constant, func, tid

wp = SimpleNamespace(**registry())
wp.func, wp.constant, wp.struct, wp.ref, wp.tid = func, constant, T.struct, T.ref, tid
for _name in ("int32", "int64", "uint64", "float32", "float64", "vec2", "vec3", "vec2i", "vec3i", "vec3d"):
    setattr(wp, _name, getattr(T, _name))
wp.vector = T.vector  # vector(x, y): the type from the values
wp.array = T.ArrayType  # annotations: wp.array(dtype=wp.vec3)
wp.inf = math.inf
