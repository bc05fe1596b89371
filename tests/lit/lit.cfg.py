# -*- Python -*-
"""lit configuration for adjit's FileCheck tests.

Run from the repository root with ``lit -sv tests/lit``.

Tools are found without importing ``adjit`` or ``mlir`` (importing them loads
the native modules, which is slow and fails during a rebuild):

* ``adjit`` -> the package search location holding ``bin/adjit-opt`` (an
  editable install has two locations, the sources and the built files; all are
  searched);
* ``llvm`` -> ``llvm/bin`` for FileCheck, not and count.

``ADJIT_BUILD_DIR=<dir>`` puts the build tree's adjit-opt (``<dir>`` or
``<dir>/bin``) first, to test a build without installing it.
Test outputs go to ``ADJIT_LIT_EXEC_ROOT`` (default: a directory under the
system temp dir), so no ``Output/`` directories appear in the source tree.
"""
import importlib.util
import os
import shutil
import sys
import tempfile

import lit.formats

config.name = "adjit"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get(
    "ADJIT_LIT_EXEC_ROOT",
    os.path.join(tempfile.gettempdir(), f"adjit-lit-{os.getuid()}"))


def _package_dirs(package, relative):
    """Every ``<search location>/<relative>`` of ``package`` that exists."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return []
    dirs = []
    for location in spec.submodule_search_locations or []:
        candidate = os.path.join(location, relative)
        if os.path.isdir(candidate):
            dirs.append(candidate)
    return dirs


def _with_tool(dirs, tool):
    return [d for d in dirs if os.path.isfile(os.path.join(d, tool))]


def _on_path(tool):
    """The directory of ``tool`` on PATH, as a last resort (e.g. lit started
    with ``python -m lit`` from the repository root, where ``adjit`` resolves
    to the uncompiled source tree)."""
    found = shutil.which(tool)
    return [os.path.dirname(os.path.realpath(found))] if found else []


tool_dirs = []
build_dir = os.environ.get("ADJIT_BUILD_DIR")
if build_dir:
    build_dir = os.path.abspath(build_dir)
    tool_dirs += _with_tool([os.path.join(build_dir, "bin"), build_dir],
                            "adjit-opt")
    if not tool_dirs:
        lit_config.fatal(f"ADJIT_BUILD_DIR={build_dir} has no adjit-opt")
adjit_bins = (_with_tool(_package_dirs("adjit", "bin"), "adjit-opt")
              or _on_path("adjit-opt"))
llvm_bins = (_with_tool(_package_dirs("llvm", "bin"), "FileCheck")
             or _on_path("FileCheck"))
if not adjit_bins and not tool_dirs:
    lit_config.fatal("adjit-opt not found: no bin/adjit-opt in the 'adjit' "
                     "package's search locations (is adjit installed, or "
                     "being rebuilt?)")
if not llvm_bins:
    lit_config.fatal("FileCheck not found: no bin/FileCheck in the 'llvm' "
                     "package (pip install the pinned LLVM wheel)")
tool_dirs += adjit_bins + llvm_bins

config.environment["PATH"] = os.pathsep.join(
    tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])
# The Python that runs lit runs the frontend tests, with the same packages.
config.substitutions.append(("%python", sys.executable))
# Tests that compile from Python never read or fill the user's kernel cache,
# and dump only where they say so.
config.environment["ADJIT_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                     "adjit-cache")
config.environment.pop("ADJIT_DUMP_DIR", None)
if "TMPDIR" in os.environ:
    config.environment["TMPDIR"] = os.environ["TMPDIR"]
