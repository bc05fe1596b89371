"""``warp._src.thirdparty.appdirs``: Warp vendors the ``appdirs`` package;
programs import its ``user_cache_dir``. This is adjit's own implementation
of that one function, with appdirs' platform conventions."""
from __future__ import annotations

import os
import sys

from .. import missing


def user_cache_dir(appname: str | None = None, appauthor: str | None = None, version: str | None = None,
                   opinion: bool = True) -> str:
    """The user's cache folder for ``appname``, as ``appdirs.user_cache_dir``
    gives it: ``$XDG_CACHE_HOME/appname`` (``~/.cache/appname``) on Linux,
    ``~/Library/Caches/appname`` on macOS, ``%LOCALAPPDATA%/appauthor/appname/Cache``
    on Windows (``Cache`` only with ``opinion``); ``version`` is appended
    when given with ``appname``."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        path = base
        if appname:
            path = (os.path.join(base, appname) if appauthor is False
                    else os.path.join(base, appauthor or appname, appname))
            if opinion:
                path = os.path.join(path, "Cache")
    elif sys.platform == "darwin":
        path = os.path.expanduser("~/Library/Caches")
        if appname:
            path = os.path.join(path, appname)
    else:
        path = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        if appname:
            path = os.path.join(path, appname)
    if appname and version:
        path = os.path.join(path, version)
    return path


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'warp._src.thirdparty.appdirs' has no attribute {name!r}")
    raise missing("warp._src.thirdparty.appdirs", name, sys._getframe(1))
