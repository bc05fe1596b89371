"""The names of Warp's private ``warp._src`` package that real Warp programs
(Newton 1.8: tools/newton.py, docs/newton.md) import, as adjit stands in for
them (adjit/warp/_src), and the host names those programs need at import.
Nothing here needs Newton or the network."""
import json
import os
import subprocess
import sys
import textwrap
import typing

import pytest

import adjit
from adjit.warp import _src
from adjit.warp._src import context as src_context
from adjit.warp._src import types as src_types
from adjit.warp._src import utils as src_utils
from adjit.warp._src.thirdparty import appdirs


def test_src_types_are_adjits():
    assert src_types.vector is adjit.types.vector and src_types.matrix is adjit.types.matrix
    assert src_types.type_length is adjit.types.type_length
    assert src_types.type_scalar_type is adjit.types.type_scalar_type
    assert src_types.Int is adjit.types.Int
    assert src_types.Any is typing.Any  # Warp's ``from typing import Any``
    # Warp's generic hints, for annotations of host code (``Vector[Any, Int]``)
    hint = src_types.Vector[typing.Any, src_types.Int]
    assert typing.get_origin(hint) is src_types.Vector
    assert typing.get_args(hint) == (typing.Any, src_types.Int)
    assert typing.get_origin(src_types.Matrix[3, 3, adjit.float32]) is src_types.Matrix


def test_src_context_utils_appdirs():
    assert src_context.Device is adjit.Device and src_context.Kernel is adjit.Kernel
    assert src_context.get_device is adjit.get_device
    assert "sin" in src_context.builtin_functions and "no_such_builtin" not in src_context.builtin_functions
    assert src_utils.array_scan is adjit.utils.array_scan
    assert _src.types is src_types and _src.thirdparty.appdirs is appdirs


def test_user_cache_dir(monkeypatch):
    if sys.platform in ("win32", "darwin"):
        pytest.skip("the XDG convention is Linux's")
    monkeypatch.setenv("XDG_CACHE_HOME", "/some/cache")
    assert appdirs.user_cache_dir("newton", "newton-physics") == "/some/cache/newton"
    assert appdirs.user_cache_dir("newton", "newton-physics", version="1.8") == "/some/cache/newton/1.8"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert appdirs.user_cache_dir("app") == os.path.expanduser("~/.cache/app")


@pytest.mark.parametrize("module, name", [(_src, "codegen"), (src_types, "no_such_name"),
                                          (src_context, "runtime"), (src_utils, "no_such_name"),
                                          (appdirs, "user_data_dir")])
def test_missing_src_names_say_so(module, name):
    warp_name = module.__name__.replace("adjit.warp._src", "warp._src")
    with pytest.raises(adjit.NotInAdjitError, match=rf"^{warp_name}\.{name} is not in adjit yet"):
        getattr(module, name)
    assert not hasattr(module, name)
    with pytest.raises(adjit.NotInAdjitImportError, match=rf"^{warp_name}\.{name} is not in adjit yet"):
        exec(f"from {module.__name__} import {name}", {})


#: Newton's own import lines for Warp's internals, through the alias.
PROBE = textwrap.dedent('''
    import json
    import adjit
    adjit.alias_warp()
    import warp as wp
    from warp._src.thirdparty.appdirs import user_cache_dir
    from warp._src.types import Any, Int, Vector
    from warp._src import types as warp_types
    from warp._src.context import builtin_functions
    import warp._src.context as wpc
    out = {"src": wp._src is adjit._src, "types": warp_types.type_length(wp.vec3),
           "hint": repr(Vector[Any, Int]), "scan": wp._src.utils.array_scan is adjit.utils.array_scan,
           "device": wpc.Device is adjit.Device, "builtin": "sin" in builtin_functions}
    errors = {}
    for stmt in ("from warp._src import codegen", "import warp._src.codegen", "wp._src.codegen",
                 "wp._src.context.runtime", "from warp._src.types import no_such_name"):
        try:
            exec(stmt)
        except Exception as e:
            errors[stmt] = [type(e).__name__, str(e)]
    out["errors"] = errors
    print(json.dumps(out))
''')


def test_src_through_the_alias(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["src"] and out["types"] == 3 and out["scan"] and out["device"] and out["builtin"]
    assert "Vector[typing.Any, Int]" in out["hint"]
    errors = out["errors"]
    for stmt, (kind, name) in {"from warp._src import codegen": ("NotInAdjitImportError", "warp._src.codegen"),
                               "import warp._src.codegen": ("NotInAdjitImportError", "warp._src.codegen"),
                               "wp._src.codegen": ("NotInAdjitError", "warp._src.codegen"),
                               "wp._src.context.runtime": ("NotInAdjitError", "warp._src.context.runtime"),
                               "from warp._src.types import no_such_name":
                                   ("NotInAdjitImportError", "warp._src.types.no_such_name")}.items():
        assert errors[stmt][0] == kind, (stmt, errors[stmt])
        assert errors[stmt][1].startswith(f"{name} is not in adjit yet"), errors[stmt]


def test_version_is_pyprojects():
    import pathlib
    import re
    # (the repository's, next to the tests: the package may be installed elsewhere)
    pyproject = (pathlib.Path(__file__).resolve().parents[3] / "pyproject.toml").read_text()
    assert adjit.__version__ == re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    assert tuple(int(v) for v in adjit.__version__.split(".")[:2]) >= (0, 1)  # as Newton parses wp.__version__


def test_array_names_in_host_annotations():
    # ``points: wp.array | np.ndarray``, ``normals: wp.array | None = None``
    import numpy as np
    assert (adjit.array | None) == typing.Optional[adjit.array]
    assert typing.get_args(adjit.array | np.ndarray) == (adjit.array, np.ndarray)
    assert typing.get_args(None | adjit.array2d) == (type(None), adjit.array2d)

    def compute(points: adjit.array | np.ndarray, normals: adjit.array | None = None) -> adjit.array: ...
    assert compute.__annotations__["normals"] == typing.Optional[adjit.array]


@pytest.mark.parametrize("name", ["Texture2D", "Texture3D", "Volume"])
def test_out_of_scope_classes_are_names_for_annotations(name):
    cls = getattr(adjit, name)

    def host(x: cls | None = None) -> list[cls]: ...  # evaluated at import, as in Newton's modules
    assert host.__annotations__["x"] == typing.Optional[cls]
    assert not isinstance(object(), cls)
    with pytest.raises(adjit.NotInAdjitError, match=rf"^adjit\.{name} is not in adjit: volumes and textures "
                                                    r"are not in adjit yet \(issue 28\)"):
        cls()
    with pytest.raises(adjit.NotInAdjitError, match=rf"^adjit\.{name}\.LINEAR is not in adjit"):
        cls.LINEAR


def test_struct_with_an_out_of_scope_field_fails_where_used():
    @adjit.struct
    class SDFData:  # declared: a module declaring it imports
        scale: float
        texture: adjit.Texture3D | None

    assert list(SDFData.refused) == ["texture"]
    with pytest.raises(TypeError, match="struct SDFData field 'texture': Texture3D is not in adjit"):
        SDFData()
    with pytest.raises(TypeError, match="struct SDFData field 'texture'"):
        SDFData.leaves("s")


def test_graph_coloring_algorithm_names():
    algo = adjit.utils.GraphColoringAlgorithm
    assert (algo.MCS, algo.GREEDY) == (0, 1) and algo["GREEDY"] is algo(1)
    with pytest.raises(adjit.NotInAdjitError, match="graph_coloring_assign.*not in adjit yet"):
        adjit.utils.graph_coloring_assign


def test_overload_of_a_kernel_whose_annotations_fail_is_deferred(tmp_path):
    # Newton declares instances at import of a kernel annotated indexedarray(dtype=Any),
    # which adjit cannot resolve: the module imports, and launching the kernel says why.
    (tmp_path / "gather.py").write_text(textwrap.dedent('''
        from __future__ import annotations  # as Newton's module: annotations resolve when used
        from typing import Any
        import adjit as wp

        @wp.kernel
        def gather(port: wp.indexedarray(dtype=Any), out: wp.array(dtype=Any)):
            i = wp.tid()
            out[i] = port[i]

        wp.overload(gather, {"port": wp.indexedarray(dtype=float), "out": wp.array(dtype=float)})
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        import gather
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("gather", None)
    data = adjit.zeros(3, dtype=float)
    with pytest.raises(adjit.KernelTypeError, match=r"cannot resolve the annotation.*of 'port'"):
        adjit.launch(gather.gather, 3, inputs=[adjit.indexedarray(data, [adjit.array([0, 1, 2], dtype=adjit.int32)]),
                                                adjit.zeros(3, dtype=float)])


def test_issubclass_of_adjit_types_and_their_unions():
    # Newton: issubclass(dtype, wp.float16 | wp.float32 | wp.float64 | wp.int16 | wp.int32 | wp.int64)
    floats = adjit.float16 | adjit.float32 | adjit.float64
    ints = adjit.int16 | adjit.int32 | adjit.int64
    assert issubclass(adjit.float32, floats | ints) and issubclass(adjit.int64, floats | ints)
    assert not issubclass(adjit.int8, floats | ints) and not issubclass(int, floats)
    assert issubclass(adjit.vec3, adjit.vec3) and not issubclass(adjit.vec3, adjit.vec3d)


def test_array_of_a_typevar_in_host_annotations():
    index_type = typing.TypeVar("IndexType", adjit.int16, adjit.int32, adjit.int64)
    hint = adjit.array2d[index_type]
    assert typing.get_args(hint) == (index_type,)
    assert typing.get_args(hint | None)[1] is type(None)


def test_kernel_adj_args_and_is_array_of_annotations(tmp_path):
    # Newton: {arg.label: wp.array(dtype=wp.float32, ndim=arg.type.ndim) for arg in kernel.adj.args
    #          if wp.types.is_array(arg.type) and arg.type.dtype is Any}
    (tmp_path / "generic_dot.py").write_text(textwrap.dedent('''
        from typing import Any
        import adjit as wp

        @wp.kernel
        def dot(a: wp.array(dtype=Any), b: wp.array2d(dtype=Any), n: int, out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = float(a[i] * b[i, 0]) + float(n)
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        import generic_dot
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("generic_dot", None)
    kernel = generic_dot.dot
    args = kernel.adj.args
    assert [a.label for a in args] == ["a", "b", "n", "out"]
    assert adjit.types.is_array(args[0].type) and not adjit.types.is_array(args[2].type)
    generic = {a.label: adjit.array(dtype=adjit.float32, ndim=a.type.ndim) for a in args
               if adjit.types.is_array(a.type) and a.type.dtype is typing.Any}
    assert list(generic) == ["a", "b"] and generic["b"].ndim == 2
    adjit.overload(kernel, generic)
    assert len(kernel.overloads) == 1
    with pytest.raises(adjit.NotInAdjitError, match=r"Kernel\.adj\.blocks is not in adjit yet"):
        kernel.adj.blocks


def test_fem_linalg_functions_are_named_and_refused_where_called(tmp_path):
    from adjit.warp.fem import linalg
    with pytest.raises(adjit.NotInAdjitError, match=r"^warp\.fem\.linalg\.symmetric_eigenvalues_qr is not in "
                                                    r"adjit yet: Warp's finite-element library"):
        linalg.symmetric_eigenvalues_qr(adjit.mat33(), 1e-6)
    with pytest.raises(adjit.NotInAdjitError, match=r"^warp\.fem\.linalg\.no_such_name is not in adjit yet"):
        linalg.no_such_name
    (tmp_path / "uses_qr.py").write_text(textwrap.dedent('''
        import adjit as wp
        from adjit.warp.fem.linalg import symmetric_eigenvalues_qr

        @wp.kernel
        def eig(m: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.vec3)):
            i = wp.tid()
            values, vectors = symmetric_eigenvalues_qr(m[i], 1.0e-6)
            out[i] = values
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        import uses_qr
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("uses_qr", None)
    with pytest.raises(adjit.KernelTypeError, match=r"warp\.fem\.linalg\.symmetric_eigenvalues_qr is not in adjit "
                                                    r"yet(.|\n)*symmetric_eigenvalues_qr\(m\[i\], 1\.0e-6\)"):
        adjit.launch(uses_qr.eig, 1, inputs=[adjit.zeros(1, dtype=adjit.mat33), adjit.zeros(1, dtype=adjit.vec3)])
