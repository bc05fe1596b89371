"""Bool vectors (``wp.types.vector(length, dtype=wp.bool)``) as Warp has
them: construction, constants, kernel and func arguments and returns,
component reads and writes, == and !=, print; arithmetic on them and arrays
of them are clear errors."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp

vec3b = wp.types.vector(length=3, dtype=wp.bool)
PATTERN = wp.constant(vec3b(True, False, True))


@wp.func
def flip_first(v: vec3b):
    r = v
    r[0] = not v[0]
    return r


@wp.kernel
def count(x: wp.array(dtype=float), mask: vec3b, out: wp.array(dtype=int)):
    i = wp.tid()
    v = vec3b(True, False, x[i] > 0.0)
    v[1] = x[i] > 2.0
    n = int(0)
    for j in range(3):
        if v[j]:
            n += 1
        if PATTERN[j]:
            n += 10
        if mask[j]:
            n += 100
    if v == vec3b(True, True, True):
        n += 1000
    if flip_first(v) != v:
        n += 10000
    out[i] = n


def test_bool_vector_values():
    xs = np.array([3.0, 1.0, -1.0], np.float32)
    out = wp.zeros(3, dtype=int)
    wp.launch(count, 3, inputs=[wp.array(xs), vec3b(False, True, False)], outputs=[out])
    for x, n in zip(xs, out.numpy()):
        v = [True, x > 2.0, x > 0.0]
        assert n == sum(v) + 20 + 100 + (1000 if all(v) else 0) + 10000


def test_printing_a_bool_vector(tmp_path):
    script = tmp_path / "print_bools.py"
    script.write_text(textwrap.dedent("""
        import adjit as wp
        vec3b = wp.types.vector(length=3, dtype=wp.bool)

        @wp.kernel
        def show(x: wp.array(dtype=float)):
            print(vec3b(x[0] > 0.0, False, True))

        wp.launch(show, 1, inputs=[wp.array([1.0], dtype=float)])
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[1 0 1]"


@pytest.mark.parametrize("expr, words", [
    ("v + v", "arithmetic on bool vectors is not supported (+)"),
    ("v * 2", "arithmetic on bool vectors is not supported (*)"),
    ("wp.dot(v, v)", "dot() needs float vectors"),
])
def test_arithmetic_on_bool_vectors_is_a_type_error(tmp_path, expr, words):
    import importlib.util
    path = tmp_path / "bool_vector_misuse.py"
    path.write_text("import adjit as wp\nvec3b = wp.types.vector(length=3, dtype=wp.bool)\n\n\n"
                    "@wp.kernel\ndef misuse(s: wp.array(dtype=int)):\n    v = vec3b(True, False, True)\n"
                    f"    r = {expr}\n    s[0] = 1\n")
    spec = importlib.util.spec_from_file_location("bool_vector_misuse", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.KernelTypeError) as info:
        wp.launch(module.misuse, 1, inputs=[wp.zeros(1, dtype=int)])
    assert info.value.lineno == 8 and words in str(info.value)


def test_arrays_of_bool_vectors_are_refused():
    with pytest.raises(TypeError, match="arrays of bool vectors .* are not supported yet"):
        wp.array(dtype=vec3b)
    with pytest.raises(TypeError, match="arrays of bool vectors .* are not supported yet"):
        wp.zeros(3, dtype=vec3b)
