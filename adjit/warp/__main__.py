"""``python -m adjit.warp script.py args...`` runs a program written against
``import warp`` on adjit, unchanged, as ``python script.py args...`` would
run it (``__main__``, ``sys.argv``, the script's folder first on
``sys.path``); ``python -m adjit.warp -m package.module args...`` runs a
module as ``python -m`` does, and ``-c command`` a command as ``python -c``."""
from __future__ import annotations

import os
import runpy
import sys

from . import alias_warp

USAGE = ("usage: python -m adjit.warp script.py [args...]\n"
         "       python -m adjit.warp -m module [args...]\n"
         "       python -m adjit.warp -c command [args...]\n"
         "Runs a program written against 'import warp' with warp resolved to adjit.")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    alias_warp()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        # As ``python -m``: argv[0] becomes the module's file (runpy sets it), the
        # current folder stays first on sys.path.
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    if argv[0] == "-c":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        # As ``python -c``: argv[0] is "-c", the current folder first on sys.path.
        sys.argv = ["-c", *argv[2:]]
        main_module = sys.modules["__main__"]
        namespace = {"__name__": "__main__", "__builtins__": main_module.__builtins__}
        exec(compile(argv[1], "<string>", "exec"), namespace)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m adjit.warp: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    sys.argv = [script, *argv[1:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
