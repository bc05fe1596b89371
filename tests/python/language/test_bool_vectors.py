"""Bool vectors (``wp.types.vector(length, dtype=wp.bool)``) and bool
matrices as Warp has them: construction, constants, kernel and func arguments and returns,
component reads and writes, == and !=, print, arrays of them (bytes in
memory, as bool arrays), struct fields and row views; arithmetic on them is
a located type error."""
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
    ("wp.dot(v, v)", "dot() does not take bool vectors or matrices"),
    ("wp.max(v, v)", "max() does not take bool vectors or matrices"),
    ("wp.cw_mul(v, v)", "cw_mul() does not take bool vectors or matrices"),
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


@wp.struct
class Flags:
    on: vec3b
    weight: float


@wp.kernel
def through_memory(x: wp.array(dtype=float), flags: wp.array(dtype=vec3b), grid: wp.array2d(dtype=vec3b),
                   structs: wp.array(dtype=Flags), out: wp.array(dtype=int)):
    i = wp.tid()
    f = flags[i]
    n = int(0)
    for j in range(3):
        if f[j]:
            n += 1
    if flags[i][2]:  # a component read from memory
        n += 10
    flags[i] = vec3b(x[i] > 0.0, True, f[0])
    flags[i][1] = x[i] > 5.0  # a component write
    row = grid[i]  # a row view of a 2-d array
    if row[1][0]:
        n += 100
    s = structs[i]
    if s.on[1]:
        n += 1000
    s.on = vec3b(True, x[i] > 5.0, False)
    structs[i] = s
    out[i] = n


def test_arrays_of_bool_vectors_store_bytes():
    flags = wp.array(np.array([[True, False, True], [False, False, False]]), dtype=vec3b)
    grid = wp.array(np.array([[[0, 0, 0], [1, 0, 0]], [[0, 0, 0], [0, 1, 1]]], dtype=bool), dtype=vec3b)
    structs = wp.zeros(2, dtype=Flags)
    out = wp.zeros(2, dtype=int)
    wp.launch(through_memory, 2, inputs=[wp.array(np.array([1.0, 7.0], np.float32)), flags, grid, structs],
              outputs=[out])
    assert out.numpy().tolist() == [2 + 10 + 100, 0]
    np.testing.assert_array_equal(flags.numpy(), [[True, False, True], [True, True, False]])
    np.testing.assert_array_equal(structs.numpy()["on"], [[True, False, False], [True, True, False]])
    assert flags.numpy().dtype == np.bool_ and flags.numpy().view(np.uint8).max() == 1  # bytes 0 and 1


mat22b = wp.types.matrix(shape=(2, 2), dtype=wp.bool)
DIAGONAL = wp.constant(mat22b(True, False, False, True))
COUNTS = np.array([[1, 2], [3, 4]], np.int32)  # an integer matrix constant


@wp.kernel
def bool_matrices(x: wp.array(dtype=float), m: wp.array(dtype=mat22b), out: wp.array(dtype=int)):
    i = wp.tid()
    b = m[i]
    n = int(0)
    if b[0, 1]:
        n += 1
    if DIAGONAL[1, 1]:
        n += 10
    if b == mat22b(True, True, True, True):
        n += 100
    n += COUNTS[1, 0] * 1000
    b[1, 0] = x[i] > 0.0
    m[i] = b
    m[i][0, 0] = False
    out[i] = n


def test_bool_matrices_in_memory_and_as_values():
    m = wp.array(np.array([[[1, 1], [1, 1]], [[0, 0], [0, 0]]], bool), dtype=mat22b)
    out = wp.zeros(2, dtype=int)
    wp.launch(bool_matrices, 2, inputs=[wp.array(np.array([-1.0, 1.0], np.float32)), m], outputs=[out])
    assert out.numpy().tolist() == [3111, 3010]
    np.testing.assert_array_equal(m.numpy(), [[[False, True], [False, True]], [[False, False], [True, False]]])
