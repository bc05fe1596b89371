"""Programs written against ``import warp`` run on adjit unchanged:
``python -m adjit.warp`` and ``adjit.alias_warp()`` (docs/warp_alias.md).

Each case runs in a subprocess: aliasing changes ``sys.modules`` for the
whole process, which the other tests must not see."""
import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

import adjit


def _run(args, cwd, code=None):
    """Runs ``python args...`` in ``cwd``; returns its stdout (fails the test on a nonzero exit)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == (code or 0), proc.stderr
    return proc.stdout if code is None else proc.stderr


#: A Warp program, unchanged: a kernel, a launch and a gradient through wp.Tape.
SCRIPT = textwrap.dedent('''
    import json
    import sys

    import numpy as np
    import warp as wp
    import warp.types
    from warp.types import vector

    wp.init()

    @wp.kernel
    def energy(x: wp.array(dtype=wp.vec3), k: float, out: wp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        wp.atomic_add(out, 0, k * wp.dot(v, v) + wp.sin(v[0]))

    x = wp.array(np.array([[1.0, 2.0, 3.0], [-0.5, 0.25, 2.0]]), dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(energy, dim=2, inputs=[x, 1.5], outputs=[out])
    tape.backward(loss=out)
    print(json.dumps({
        "name": __name__,
        "argv": sys.argv,
        "loss": float(out.numpy()[0]),
        "grad": x.grad.numpy().tolist(),
        "same": [wp is sys.modules["adjit"], warp.types is sys.modules["adjit.types"],
                 vector(3, wp.float32) == wp.vec3],
    }))
''')


def _check_energy(result):
    # loss = sum_i 1.5 |x_i|^2 + sin(x_i0); d/dx_i = 3 x_i + (cos(x_i0), 0, 0)
    x = [[1.0, 2.0, 3.0], [-0.5, 0.25, 2.0]]
    loss = sum(1.5 * sum(c * c for c in v) + math.sin(v[0]) for v in x)
    assert result["loss"] == pytest.approx(loss, rel=1e-6)
    expect = [3 * c + (math.cos(v[0]) if j == 0 else 0.0) for v in x for j, c in enumerate(v)]
    assert [c for v in result["grad"] for c in v] == pytest.approx(expect, rel=1e-6)
    assert result["same"] == [True, True, True]


def test_script_runs_unchanged(tmp_path):
    (tmp_path / "sim.py").write_text(SCRIPT)
    result = json.loads(_run(["-m", "adjit.warp", "sim.py", "--steps", "3"], cwd=tmp_path))
    assert result["name"] == "__main__"
    assert result["argv"] == ["sim.py", "--steps", "3"]
    _check_energy(result)


def test_module_runs_unchanged(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text(SCRIPT)
    result = json.loads(_run(["-m", "adjit.warp", "-m", "mypkg.run", "a"], cwd=tmp_path))
    assert result["name"] == "__main__"
    assert result["argv"] == [str(pkg / "run.py"), "a"]
    _check_energy(result)


def test_command_runs_unchanged(tmp_path):
    out = _run(["-m", "adjit.warp", "-c", "import sys, warp as wp; print(wp.__name__, __name__, sys.argv)", "x"],
               cwd=tmp_path)
    assert out.strip() == "adjit __main__ ['-c', 'x']"


def test_script_folder_is_first_on_path(tmp_path):
    # As ``python sub/main.py``: the script's folder, not the current one, is sys.path[0].
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "helper.py").write_text("import warp as wp\nSCALE = wp.vec3(1.0, 2.0, 3.0)\n")
    (sub / "main.py").write_text("import helper\nprint(list(map(float, helper.SCALE)))\n")
    assert json.loads(_run(["-m", "adjit.warp", "sub/main.py"], cwd=tmp_path)) == [1.0, 2.0, 3.0]


def test_script_errors_and_exit_codes_pass_through(tmp_path):
    (tmp_path / "fails.py").write_text("import sys\nsys.exit(7)\n")
    _run(["-m", "adjit.warp", "fails.py"], cwd=tmp_path, code=7)
    assert "can't open file" in _run(["-m", "adjit.warp", "missing.py"], cwd=tmp_path, code=2)
    assert "usage" in _run(["-m", "adjit.warp"], cwd=tmp_path, code=2)


PROBE = textwrap.dedent('''
    import json
    import adjit
    adjit.alias_warp()
    adjit.alias_warp()  # twice does nothing
    import warp as wp
    import warp.autograd, warp.config, warp.optim, warp.types, warp.utils, warp.context
    from warp.types import vector, matrix
    from warp.autograd import gradcheck
    from warp.optim import Adam, SGD
    from warp.utils import array_sum
    from warp.context import Device, Devicelike
    from warp import DeviceLike

    out = {"mods": [warp.autograd is adjit.autograd, warp.config is adjit.config, warp.optim is adjit.optim,
                    warp.utils is adjit.utils, wp.context is warp.context, Device is adjit.Device,
                    DeviceLike is adjit.DeviceLike, Devicelike is DeviceLike]}
    wp.config.mode = "debug"   # Warp's settings are adjit's
    out["mode"] = adjit.config.mode
    errors = {}
    for stmt in ["import warp.sparse", "import warp.sim", "from warp.optim.linear import bicgstab",
                 "from warp import sparse", "from warp.fem import integrand", "import warp.fem; warp.fem.Grid3D",
                 "from warp import no_such_name", "from warp.types import no_such_name", "wp.no_such_name",
                 "wp.types.no_such_name", "wp.utils.no_such_name"]:
        try:
            exec(stmt)
            errors[stmt] = None
        except Exception as e:
            errors[stmt] = [type(e).__name__, isinstance(e, ImportError), isinstance(e, AttributeError), str(e)]
    out["errors"] = errors
    out["hasattr"] = [hasattr(wp, "no_such_name"), getattr(wp, "fabricarray", 5)]
    print(json.dumps(out))
''')


def test_submodules_and_missing_names(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    out = json.loads(_run(["probe.py"], cwd=tmp_path))
    assert out["mods"] == [True] * 8
    assert out["mode"] == "debug"
    assert out["hasattr"] == [False, 5]
    errors = out["errors"]
    for stmt, missing in [("import warp.sparse", "warp.sparse"), ("import warp.sim", "warp.sim"),
                          ("from warp.optim.linear import bicgstab", "warp.optim.linear.bicgstab"),
                          ("from warp import sparse", "warp.sparse"),
                          # warp.fem imports (programs take a device function from warp.fem.linalg);
                          # its names fail at once
                          ("from warp.fem import integrand", "warp.fem.integrand"),
                          ("from warp import no_such_name", "warp.no_such_name"),
                          ("from warp.types import no_such_name", "warp.types.no_such_name")]:
        kind, is_import, is_attribute, text = errors[stmt]
        assert kind == "NotInAdjitImportError" and is_import and not is_attribute, stmt
        assert text.startswith(f"{missing} is not in adjit yet"), text
    for stmt, missing in [("wp.no_such_name", "warp.no_such_name"),
                          ("import warp.fem; warp.fem.Grid3D", "warp.fem.Grid3D"),
                          ("wp.types.no_such_name", "warp.types.no_such_name"),
                          ("wp.utils.no_such_name", "warp.utils.no_such_name")]:
        kind, is_import, is_attribute, text = errors[stmt]
        assert kind == "NotInAdjitError" and is_attribute and not is_import, stmt
        assert text.startswith(f"{missing} is not in adjit yet"), text


def test_alias_refuses_another_warp(tmp_path):
    # A different module already imported as warp (the real Warp, say) is not silently replaced.
    (tmp_path / "warp.py").write_text("NAME = 'not adjit'\n")
    (tmp_path / "clash.py").write_text("import warp\nimport adjit\nadjit.alias_warp()\n")
    err = _run(["clash.py"], cwd=tmp_path, code=1)
    assert "RuntimeError" in err and "a different 'warp' is already imported" in err


def test_missing_name_without_alias():
    # Unaliased, adjit's own missing names say the same, as adjit's names.
    with pytest.raises(adjit.NotInAdjitError, match=r"module 'adjit' has no attribute 'no_such_name'.*not in adjit yet"):
        adjit.no_such_name
    with pytest.raises(AttributeError):
        adjit.types.no_such_name
    assert not hasattr(adjit, "no_such_name")
    assert not adjit.is_warp_aliased()


def test_device_like():
    assert adjit.DeviceLike == adjit.Device | str | None
