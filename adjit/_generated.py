"""Generated Python source imported as modules. The frontend reads kernel
source with inspect, so generated kernels (the fuzzer's programs, the
kernels behind builtins called from Python) must live in real files: they
are written to one temporary folder per process, removed when the process
exits."""
from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import sys
import tempfile

_FOLDER: list = []
_NUMBERS = itertools.count(1)


def _folder() -> str:
    if not _FOLDER:
        folder = tempfile.mkdtemp(prefix="adjit-generated-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _FOLDER.append(folder)
    return _FOLDER[0]


def write_source(source: str, stem: str) -> str:
    """Writes ``source`` to a new file in the temporary folder; returns its
    path, named ``<stem>_<pid>_<n>.py``."""
    path = os.path.join(_folder(), f"{stem}_{os.getpid()}_{next(_NUMBERS)}.py")
    with open(path, "w") as f:
        f.write(source)
    return path


def load_module(source: str, stem: str = "adjit_generated", namespace: dict | None = None):
    """Writes ``source`` to a new file (see ``write_source``) and imports it,
    with ``namespace`` in its globals before it runs."""
    path = write_source(source, stem)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace or {})
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def unload_module(module) -> None:
    sys.modules.pop(module.__name__, None)
