"""Names of Warp's classes adjit does not have yet (volumes, textures: issue
28) that Warp programs name where nothing runs yet: in annotations
(``def volume(self) -> wp.Volume | None``), ``isinstance`` checks and struct field
declarations, all evaluated when a module is imported. Each is a class with
no instances: the module imports; constructing one, or reading one of its
attributes (``wp.Volume.allocate_by_voxels``), raises NotInAdjitError naming
it. A struct with such a field can be declared, and fails where it is used
(see ``adjit.types.StructType``); a kernel naming one fails to compile."""
from __future__ import annotations

from ..errors import NotInAdjitError, _where

#: Why each kind of placeholder is not in adjit.
OUT_OF_SCOPE = "volumes and textures are not in adjit yet (issue 28)"


class _Placeholder(type):
    """The metaclass of the placeholders: attribute reads raise."""

    def __getattr__(cls, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotInAdjitError(f"{_where('adjit')}.{cls.__name__}.{name} is not in adjit: {cls._why}", name=name)

    def __repr__(cls) -> str:
        return f"<{_where('adjit')}.{cls.__name__}: not in adjit ({cls._why})>"

    def __or__(cls, other):  # ``wp.Bvh | None``
        import typing
        return typing.Union[cls, other]

    def __ror__(cls, other):
        import typing
        return typing.Union[other, cls]


def _placeholder(name: str, why: str) -> type:
    def __new__(cls, *args, **kwargs):
        raise NotInAdjitError(f"{_where('adjit')}.{name} is not in adjit: {why}", name=name)
    return _Placeholder(name, (), {"__new__": __new__, "_why": why, "__module__": "adjit",
                                   "__doc__": f"Warp's {name}: not in adjit ({why}); a name for annotations only."})


Texture2D = _placeholder("Texture2D", OUT_OF_SCOPE)
Texture3D = _placeholder("Texture3D", OUT_OF_SCOPE)
Volume = _placeholder("Volume", OUT_OF_SCOPE)

#: The placeholder classes by name (adjit exports each).
PLACEHOLDERS = {c.__name__: c for c in (Texture2D, Texture3D, Volume)}


def is_placeholder(obj) -> bool:
    """Whether ``obj`` is one of these placeholder classes."""
    return isinstance(obj, _Placeholder)
