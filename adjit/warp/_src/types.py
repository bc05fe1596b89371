"""``warp._src.types``: Warp's implementation of ``warp.types``. Its names
are adjit.types' (Warp's public ``warp.types`` re-exports them from here),
plus the typing names programs import from it: ``Any`` (``typing.Any``, as
Warp imports it) and the generic hints ``Vector``, ``Matrix``,
``Quaternion``, ``Transformation`` (``Vector[Length, Scalar]``, ... in
annotations of host code). Any other name raises NotInAdjitError."""
from __future__ import annotations

import sys
import types as _pytypes
from typing import Any

from ... import types as _types
from . import lookup


class _Hint:
    """A generic type hint of Warp's: subscripting it with anything (``Vector[3,
    float32]``, ``Vector[Any, Int]``) gives a ``types.GenericAlias``, as
    annotations of host code need; it is no kernel type."""

    def __class_getitem__(cls, params):
        return _pytypes.GenericAlias(cls, params)


class Vector(_Hint):
    """Warp's type hint for a vector of some length and scalar type: ``Vector[Length, Scalar]``."""


class Matrix(_Hint):
    """Warp's type hint for a matrix of some shape and scalar type: ``Matrix[Rows, Cols, Scalar]``."""


class Quaternion(_Hint):
    """Warp's type hint for a quaternion: ``Quaternion[Float]``."""


class Transformation(_Hint):
    """Warp's type hint for a transformation: ``Transformation[Float]``."""


def __getattr__(name: str):
    return lookup("warp._src.types", _types, name, sys._getframe(1))


def __dir__():
    return sorted(set(globals()) | {n for n in vars(_types) if not n.startswith("_")})

