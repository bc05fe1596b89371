"""Errors in kernels and launches: the right adjit error class, the kernel's
file and line, the offending source line and a caret under the culprit.

Each offending line below carries a marker comment (``# E:<name>``) that the
tests use to find its line number, so editing this file keeps them right.
"""
import importlib.util
import os
import textwrap

import numpy as np
import pytest

import adjit

THIS_FILE = os.path.realpath(__file__)
with open(THIS_FILE) as _f:
    _LINES = _f.read().splitlines()


def _line(marker: str) -> int:
    hits = [n for n, text in enumerate(_LINES, 1) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, f"marker {marker} must occur once, found {hits}"
    return hits[0]


def _check(err, cls, marker, culprit=None, path=THIS_FILE, lines=None):
    """``err`` is a ``cls`` located at the line marked ``marker`` in ``path``."""
    lines = _LINES if lines is None else lines
    assert type(err) is cls, f"expected {cls.__name__}, got {type(err).__name__}: {err}"
    assert isinstance(err, adjit.AdjitError)
    lineno = marker if isinstance(marker, int) else _line(marker)
    text = lines[lineno - 1].split("# E:")[0].rstrip()
    message = str(err)
    assert os.path.realpath(err.filename) == path
    assert err.lineno == lineno, message
    assert message.startswith(f"{err.filename}:{lineno}: "), message
    assert text.strip() in message, message
    if culprit is not None:
        # The caret line follows the source line and points at the culprit.
        shown = message.splitlines()
        k = shown.index("    " + lines[lineno - 1].rstrip())
        caret = shown[k + 1].index("^")
        assert shown[k][caret:].startswith(culprit), f"caret under {shown[k][caret:]!r}:\n{message}"
    return message


def _compile_error(kernel):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.compile(kernel)
    return info.value


# --- names -----------------------------------------------------------------------------------------

@adjit.kernel
def undefined_name(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = foo + 1.0  # noqa: F821  # E:undefined_name


@adjit.kernel
def undefined_attribute(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.no_such_builtin(x[i])  # E:undefined_attribute


@adjit.kernel
def undefined_function(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = helper(x[i])  # noqa: F821  # E:undefined_function


@adjit.kernel
def defined_on_one_path(x: adjit.array(dtype=float)):
    i = adjit.tid()
    if i > 0:
        q = 1.0
    else:  # (read after the if, q would be zero on this path: branch_locals)
        x[i] = q  # E:one_path


def test_undefined_name():
    msg = _check(_compile_error(undefined_name), adjit.KernelNameError, "undefined_name", "foo")
    assert "'foo'" in msg and "undefined_name" in msg  # names the kernel too


def test_undefined_attribute():
    msg = _check(_compile_error(undefined_attribute), adjit.KernelNameError, "undefined_attribute",
                 "adjit.no_such_builtin")
    assert "no_such_builtin" in msg


def test_undefined_function():
    _check(_compile_error(undefined_function), adjit.KernelNameError, "undefined_function", "helper")


def test_name_defined_on_one_path_only():
    _check(_compile_error(defined_on_one_path), adjit.KernelNameError, "one_path", "q")


# --- unsupported constructs --------------------------------------------------------------------------

@adjit.kernel
def with_statement(x: adjit.array(dtype=float)):
    i = adjit.tid()
    with open(os.devnull):  # E:with
        x[i] = 1.0


@adjit.kernel
def list_comprehension(x: adjit.array(dtype=float)):
    i = adjit.tid()
    ys = [float(j) for j in range(3)]  # E:listcomp
    x[i] = ys[0]


@adjit.kernel
def lambda_expression(x: adjit.array(dtype=float)):
    i = adjit.tid()
    f = lambda v: v * 2.0  # noqa: E731  # E:lambda
    x[i] = f(x[i])




@adjit.kernel
def kernel_returns_value(x: adjit.array(dtype=float)):
    i = adjit.tid()
    return x[i]  # E:kernel_return


@adjit.kernel
def while_else(x: adjit.array(dtype=float)):
    i = adjit.tid()
    while i < 0:  # E:while_else
        i += 1
    else:
        x[i] = 1.0


@pytest.mark.parametrize("kernel,marker,culprit", [
    (with_statement, "with", "with"),
    (list_comprehension, "listcomp", "[float(j)"),
    (lambda_expression, "lambda", "lambda"),
    (kernel_returns_value, "kernel_return", "return"),
    (while_else, "while_else", "while"),
], ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", None))
def test_unsupported_constructs(kernel, marker, culprit):
    _check(_compile_error(kernel), adjit.KernelSyntaxError, marker, culprit)


# --- types -------------------------------------------------------------------------------------------

@adjit.kernel
def float32_plus_float64(x: adjit.array(dtype=float), d: adjit.float64):
    i = adjit.tid()
    x[i] = x[i] + d  # E:f32_f64


@adjit.kernel
def int_plus_float(x: adjit.array(dtype=float)):
    i = adjit.tid()
    v = x[i]
    x[i] = v + i  # E:int_float


@adjit.kernel
def float_literal_into_int(x: adjit.array(dtype=int)):
    i = adjit.tid()
    x[i] = 1.5  # E:float_into_int


@adjit.kernel
def branches_disagree(x: adjit.array(dtype=float)):
    i = adjit.tid()
    if i > 0:  # E:branches_disagree
        a = 1.0
    else:
        a = i
    x[i] = a


@adjit.kernel
def vector_size_mismatch(v: adjit.vec3, w: adjit.vec2, x: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    x[i] = v + w  # E:vec_mismatch


@adjit.kernel
def array_arithmetic(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    z = x + y  # E:array_arith
    z[i] = 1.0


@adjit.kernel
def builtin_bad_arguments(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = adjit.sqrt(i)  # E:builtin_args


@adjit.kernel
def runtime_component_index(v: adjit.vec3, x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = v[float(i)]  # E:runtime_index


@adjit.kernel
def float_array_index(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[float(i)] = 1.0  # E:float_index


@adjit.kernel
def literal_overflow(x: adjit.array(dtype=int)):
    i = adjit.tid()
    x[i] = i + 10000000000  # E:literal_overflow


@pytest.mark.parametrize("kernel,marker,culprit", [
    (float32_plus_float64, "f32_f64", "x[i] + d"),
    (int_plus_float, "int_float", "v + i"),
    (float_literal_into_int, "float_into_int", "x[i]"),
    (branches_disagree, "branches_disagree", "if"),
    (vector_size_mismatch, "vec_mismatch", "v + w"),
    (array_arithmetic, "array_arith", "x + y"),
    (builtin_bad_arguments, "builtin_args", "adjit.sqrt"),
    (runtime_component_index, "runtime_index", "float(i)"),
    (float_array_index, "float_index", "float(i)"),
    (literal_overflow, "literal_overflow", None),
], ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", None))
def test_type_errors(kernel, marker, culprit):
    _check(_compile_error(kernel), adjit.KernelTypeError, marker, culprit)


def test_type_mismatch_messages_name_both_types():
    assert "float32 and float64" in str(_compile_error(float32_plus_float64))
    assert "float32 and int32" in str(_compile_error(int_plus_float))


# --- device functions ----------------------------------------------------------------------------------

@adjit.func
def broken_helper(v: float) -> float:
    return v * undefined_scale  # noqa: F821  # E:helper_body


@adjit.kernel
def calls_broken_helper(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = broken_helper(x[i])


@adjit.func
def countdown(n: int) -> int:
    if n <= 0:
        return 0
    return countdown(n - 1)  # E:recursion


@adjit.kernel
def calls_recursive(x: adjit.array(dtype=int)):
    i = adjit.tid()
    x[i] = countdown(i)


@adjit.func
def wants_float(v: float) -> float:
    return v


@adjit.kernel
def wrong_function_argument(x: adjit.array(dtype=int)):
    i = adjit.tid()
    x[i] = int(wants_float(i))  # E:func_arg


@adjit.func
def tid_in_function() -> int:
    return adjit.tid()  # E:tid_in_func


@adjit.kernel
def calls_tid_function(x: adjit.array(dtype=int)):
    i = adjit.tid()
    x[i] = tid_in_function()


@adjit.func  # (declared -> float, it would return 0.0 where it falls off, as Warp)
def returns_on_one_path(v: float):  # E:missing_return
    if v > 0.0:
        return v


@adjit.kernel
def calls_partial_function(x: adjit.array(dtype=float)):
    i = adjit.tid()
    x[i] = returns_on_one_path(x[i])


def test_error_inside_a_device_function_points_into_it():
    msg = _check(_compile_error(calls_broken_helper), adjit.KernelNameError, "helper_body", "undefined_scale")
    assert "broken_helper" in msg


def test_recursion_is_an_error_not_a_crash():
    _check(_compile_error(calls_recursive), adjit.KernelSyntaxError, "recursion", "countdown")


def test_device_function_argument_type():
    _check(_compile_error(wrong_function_argument), adjit.KernelTypeError, "func_arg", "wants_float")


def test_tid_is_kernel_only():
    _check(_compile_error(calls_tid_function), adjit.KernelSyntaxError, "tid_in_func", "adjit.tid")


def test_device_function_must_return_on_every_path():
    _check(_compile_error(calls_partial_function), adjit.KernelSyntaxError, "missing_return")


# --- launches ------------------------------------------------------------------------------------------

@adjit.kernel
def two_params(  # E:launch_def
        x: adjit.array(dtype=float),  # E:launch_x
        s: float):  # E:launch_s
    i = adjit.tid()
    x[i] = s


@adjit.kernel
def unannotated(x: adjit.array(dtype=float), s):  # E:unannotated
    i = adjit.tid()
    x[i] = 1.0


def _launch_error(*inputs, kernel=two_params, dim=1):
    with pytest.raises(adjit.AdjitError) as info:
        adjit.launch(kernel, dim=dim, inputs=list(inputs))
    return info.value


@pytest.mark.parametrize("inputs", [[], [adjit.zeros(2)], [adjit.zeros(2), 1.0, 2.0]])
def test_wrong_number_of_launch_arguments(inputs):
    msg = _check(_launch_error(*inputs), adjit.LaunchError, "launch_def")
    assert f"takes 2 arguments (x, s), got {len(inputs)}" in msg


@pytest.mark.parametrize("array,what", [
    (adjit.zeros(2, dtype=adjit.float64), "array of float32, got an array of float64"),
    (adjit.zeros(2, dtype=int), "array of float32, got an array of int32"),
    (adjit.zeros(2, dtype=adjit.vec3), "array of float32, got an array of vec3"),
    (adjit.zeros((2, 2)), "1-d array, got 2-d"),
    (np.zeros(2, np.float32), "adjit array of float32, got ndarray"),
])
def test_wrong_array_argument(array, what):
    msg = _check(_launch_error(array, 1.0), adjit.LaunchError, "launch_x")
    assert "'x'" in msg and what in msg


@pytest.mark.parametrize("value", ["fast", adjit.zeros(1), [1.0, 2.0], None])
def test_wrong_scalar_argument(value):
    msg = _check(_launch_error(adjit.zeros(2), value), adjit.LaunchError, "launch_s")
    assert "'s'" in msg and "float32" in msg


@adjit.kernel
def int_param(x: adjit.array(dtype=int), n: int):
    i = adjit.tid()
    x[i] = n


@pytest.mark.parametrize("value", [2.5, 2 ** 40])
def test_int_argument_must_be_an_int32(value):
    with pytest.raises(adjit.LaunchError, match="'n' must be int32"):
        adjit.launch(int_param, dim=1, inputs=[adjit.zeros(1, dtype=int), value])


def test_missing_annotation():
    msg = _check(_launch_error(adjit.zeros(2), 1.0, kernel=unannotated), adjit.KernelTypeError, "unannotated", "s")
    assert "'s' needs a type annotation" in msg


@pytest.mark.parametrize("dim", [(1, 2, 3, 4, 5), (), (-1,), -3])
def test_bad_launch_dims(dim):
    with pytest.raises(adjit.LaunchError, match="launch dim"):
        adjit.launch(two_params, dim=dim, inputs=[adjit.zeros(2), 1.0])


def test_launch_needs_a_kernel():
    with pytest.raises(adjit.LaunchError):
        adjit.launch(lambda x: x, dim=1, inputs=[1.0])


def test_errors_repeat_and_leave_the_kernel_usable():
    for _ in range(2):
        _check(_compile_error(undefined_name), adjit.KernelNameError, "undefined_name")
    # A launch error does not poison later, correct launches.
    _launch_error(adjit.zeros(2, dtype=adjit.float64), 1.0)
    x = adjit.zeros(3)
    adjit.launch(two_params, dim=3, inputs=[x, 4.0])
    np.testing.assert_array_equal(x.numpy(), [4.0, 4.0, 4.0])


def test_a_kernel_is_not_callable_from_python_and_a_func_is_evaluated():
    with pytest.raises(RuntimeError, match="adjit.launch"):
        two_params(adjit.zeros(1), 1.0)
    # a func called from Python runs as in a kernel (test_host_calls.py); its argument types still hold
    with pytest.raises(adjit.KernelTypeError, match="must be float32"):
        wants_float(1)


# --- never a crash: anything the frontend rejects is a KernelError ------------------------------------

BAD_BODIES = [
    ("KernelSyntaxError", "d = {}"),
    ("KernelSyntaxError", "s = f'{i}'"),
    ("KernelSyntaxError", "assert i > 0, i"),  # (a bare assert is Warp's: checked in debug mode)
    ("KernelSyntaxError", "global g"),
    ("KernelSyntaxError", "del i"),
    ("KernelSyntaxError", "a = (*x,)"),
    ("KernelSyntaxError", "x[i] = (q := 1.0)"),
    ("KernelSyntaxError", "a = None"),
    ("KernelSyntaxError", "s = 'text'"),
    ("KernelTypeError", "a = ~(i > 0)"),
    ("KernelTypeError", "a = x[i] << 1"),
    ("KernelSyntaxError", "a = i is i"),
    ("KernelSyntaxError", "a = adjit.vec3(x=1.0)"),
    ("KernelSyntaxError", "a = adjit.identity(**d)"),
    ("KernelSyntaxError", "for j in x:\n        pass"),
    ("KernelSyntaxError", "for j in range(3):\n        pass\n    else:\n        pass"),
    ("KernelSyntaxError", "try:\n        pass\n    except Exception:\n        pass"),
    ("KernelSyntaxError", "def g():\n        pass"),
    ("KernelSyntaxError", "a = b = 1.0"),
    ("KernelNameError", "input(i)"),
    ("KernelNameError", "q += 1"),
    ("KernelTypeError", "a = math.sin(1.0)"),
    ("KernelTypeError", "x = 1.0"),
    ("KernelTypeError", "a = -x"),
    ("KernelTypeError", "a = adjit.abs(x)"),
    ("KernelTypeError", "a = x(1)"),
    ("KernelTypeError", "a = adjit.vec3(1.0, 2.0)"),
    ("KernelTypeError", "a = adjit.vec3() * adjit.vec3()"),
    ("KernelTypeError", "a = adjit.vec3() + 1.0"),
    ("KernelTypeError", "a = 1.0 % adjit.vec3()"),  # (1.0 / v is Warp's div(scalar, vector))
    ("KernelTypeError", "a = adjit.mat33() * adjit.vec2()"),
    ("KernelTypeError", "a = adjit.vec3()[3]"),
    ("KernelTypeError", "a = adjit.vec3().w"),
    ("KernelTypeError", "a = adjit.mat33().x"),
    ("KernelTypeError", "a = 1.0\n    a.x = 2.0"),
    ("KernelTypeError", "a = 1.0\n    b = a[0]"),
    ("KernelTypeError", "a = x.shape[1]"),
    ("KernelTypeError", "a = x.size"),
    ("KernelTypeError", "a = (i > 0) + (i > 1)"),
    ("KernelTypeError", "a = adjit.vec3() < adjit.vec3()"),
    ("KernelTypeError", "a = not adjit.vec3()"),
    ("KernelTypeError", "a = 1 / 0"),
    ("KernelTypeError", "a = adjit.tid(1)"),
    ("KernelTypeError", "a, b = 1.0, 2.0, 3.0"),
    ("KernelTypeError", "a: int = 1.5"),
    ("KernelTypeError", "for j in range(0, 3, 0):\n        pass"),
    ("KernelTypeError", "for j in range(1.5):\n        pass"),
    ("KernelTypeError", "a = adjit.int64(i) + i"),
    ("KernelTypeError", "a = adjit.where(1.5, 1.0, 2.0)"),  # (an int condition is Warp's)
    ("KernelTypeError", "a = adjit.cross(adjit.vec2(), adjit.vec2())"),
    ("KernelTypeError", "a = adjit.min(1.0, b=2.0)"),
    ("KernelTypeError", "a = adjit.identity(m=3)"),
    ("KernelTypeError", "a = adjit.identity()"),
    ("KernelTypeError", "a = adjit.identity(n=i)"),
    ("KernelTypeError", "a = adjit.identity(n=9)"),
    ("KernelTypeError", "a = adjit.identity(n=3, dtype=x)"),
    ("KernelTypeError", "a = adjit.identity(n=3, dtype=int)"),
    ("KernelTypeError", "a = adjit.identity(3, n=3)"),
    ("KernelTypeError", "a = adjit.quat_identity(dtype=adjit.vec3)"),
    ("KernelTypeError", "a = adjit.quat(1.0, 2.0, 3.0)"),
    ("KernelTypeError", "a = adjit.quat(1.0)"),
    ("KernelTypeError", "a = adjit.quat() * adjit.vec4()"),
    ("KernelTypeError", "a = adjit.vec4() * adjit.quat()"),
    ("KernelTypeError", "a = adjit.mat44() * adjit.quat()"),
    ("KernelTypeError", "a = adjit.quat() + adjit.vec4()"),
    ("KernelTypeError", "a = adjit.quatd() * adjit.quat()"),
    ("KernelTypeError", "a = adjit.quat_rotate(adjit.vec4(), adjit.vec3())"),
    ("KernelTypeError", "a = adjit.quat_rotate(adjit.quat(), adjit.vec3d())"),
    ("KernelTypeError", "a = adjit.quat_from_axis_angle(adjit.vec3(), adjit.float64(1.0))"),
    ("KernelTypeError", "a = adjit.mul(adjit.vec3(), adjit.vec3())"),
    ("KernelTypeError", "a = adjit.mul(1.0)"),
    ("KernelTypeError", "a = adjit.vec3d() * adjit.float32(2.0)"),
    ("KernelTypeError", "a = adjit.atomic_add(x, i)"),
    ("KernelTypeError", "a = adjit.atomic_add(x, i, i, 1.0)"),
    ("KernelTypeError", "a = adjit.atomic_add(x, 1.5, 1.0)"),
    ("KernelTypeError", "a = adjit.atomic_add(x, i, adjit.vec3())"),
    ("KernelTypeError", "a = adjit.atomic_max(x, i, adjit.float64(1.0))"),
    ("KernelTypeError", "a = adjit.atomic_sub(1.0, i, 1.0)"),
]


@pytest.mark.parametrize("expected,body", BAD_BODIES, ids=[b.split("\n")[0] for _, b in BAD_BODIES])
def test_rejected_code_raises_a_located_kernel_error(tmp_path, expected, body):
    # A module file of its own, so the kernel has real source and a real path.
    source = textwrap.dedent("""\
        import math
        import adjit

        @adjit.kernel
        def bad(x: adjit.array(dtype=float)):
            i = adjit.tid()
        """) + f"    {body}\n"
    path = tmp_path / "bad_kernel.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"bad_kernel_{abs(hash(body))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = _compile_error(module.bad)
    assert type(err).__name__ == expected, f"{type(err).__name__}: {err}"
    lines = source.splitlines()
    # The culprit is on one of the body's lines (7 and on).
    assert 7 <= err.lineno <= len(lines), str(err)
    _check(err, type(err), err.lineno, path=os.path.realpath(path), lines=lines)


def test_errors_in_an_indented_kernel_have_true_columns():
    @adjit.kernel
    def nested(x: adjit.array(dtype=float)):
        i = adjit.tid()
        x[i] = nested_undefined * 2.0  # noqa: F821  # E:nested
    _check(_compile_error(nested), adjit.KernelNameError, "nested", "nested_undefined")


# --- nesting the compiler cannot follow: a clear error, not a RecursionError -------------------

def test_an_expression_of_hundreds_of_terms_is_a_clear_error(tmp_path):
    terms = " + ".join(["x[i]"] * 700)
    (tmp_path / "deep_expression.py").write_text(
        "import adjit as wp\n\n\n@wp.kernel\n"
        "def long_sum(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n"
        f"    y[i] = {terms}\n")
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        import deep_expression
        with pytest.raises(adjit.KernelSyntaxError, match="nests too deeply") as e:
            adjit.launch(deep_expression.long_sum, dim=1, inputs=[adjit.zeros(1), adjit.zeros(1)])
        assert "deep_expression.py:5" in str(e.value)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("deep_expression", None)


def test_device_functions_nested_hundreds_deep_are_a_clear_error(tmp_path):
    depth = 400
    lines = ["import adjit as wp", "", "", "@wp.func", "def f0(a: float):", "    return a + 1.0", ""]
    for k in range(1, depth):
        lines += ["", "@wp.func", f"def f{k}(a: float):", f"    return f{k - 1}(a) * 1.0", ""]
    lines += ["", "@wp.kernel", "def deep(x: wp.array(dtype=float)):", "    i = wp.tid()",
              f"    x[i] = f{depth - 1}(x[i])", ""]
    (tmp_path / "deep_calls.py").write_text("\n".join(lines))
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        import deep_calls
        try:
            adjit.launch(deep_calls.deep, dim=1, inputs=[adjit.zeros(1)])
        except adjit.KernelSyntaxError as e:
            assert "nests too deeply" in str(e) and "deep_calls.py" in str(e)
        else:  # compiled: then it must be right
            x = adjit.zeros(1)
            adjit.launch(deep_calls.deep, dim=1, inputs=[x])
            assert x.numpy()[0] == pytest.approx(1.0)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("deep_calls", None)


# --- Warp's error names ----------------------------------------------------------------------

def test_warp_codegen_error_names_catch_adjits_kernel_errors():
    assert issubclass(adjit.KernelTypeError, adjit.WarpCodegenTypeError)
    assert issubclass(adjit.KernelNameError, adjit.WarpCodegenAttributeError)
    for name in ("WarpCodegenTypeError", "WarpCodegenAttributeError", "WarpCodegenValueError",
                 "WarpCodegenKeyError", "WarpCodegenIndexError"):
        assert issubclass(getattr(adjit, name), adjit.WarpCodegenError)
    assert issubclass(adjit.WarpCodegenValueError, ValueError) and issubclass(adjit.WarpCodegenKeyError, KeyError)
    assert isinstance(_compile_error(float32_plus_float64), adjit.WarpCodegenTypeError)
    # Warp's WarpCodegenTypeError is a TypeError: so is adjit's, located as ever.
    with pytest.raises(TypeError, match=r"test_errors.py:\d+"):
        adjit.launch(float32_plus_float64, dim=1, inputs=[adjit.zeros(1), adjit.float64(1.0)])
    with pytest.raises(adjit.WarpCodegenError):  # as Warp code catches it
        adjit.launch(float32_plus_float64, dim=1, inputs=[adjit.zeros(1), adjit.float64(1.0)])
