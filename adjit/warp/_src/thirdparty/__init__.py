"""``warp._src.thirdparty``: of Warp's vendored third-party modules, only
``appdirs`` (its ``user_cache_dir`` is what programs import)."""
import importlib
import sys

from .. import missing


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'warp._src.thirdparty' has no attribute {name!r}")
    if name == "appdirs":
        return importlib.import_module(f"{__name__}.appdirs")
    raise missing("warp._src.thirdparty", name, sys._getframe(1))
