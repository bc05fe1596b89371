"""Runs Warp's own CPU tests of the kernel language and autodiff on adjit;
writes docs/warp_tests.md.

    python tools/warp_tests.py                    (all selected files, writes the doc)
    python tools/warp_tests.py test_math test_vec --no-doc   (a few files, prints the table)
    python tools/warp_tests.py --tiles --no-doc   (Warp's tile test files, tile/test_tile*.py; prints the table)

Each Warp test file runs unchanged, in a fresh interpreter (a crash or hang in
one file does not stop the others; each file has a timeout), with an import
shim installed first:

- ``import warp`` and ``import warp.<x>`` give ``adjit`` and ``adjit.<x>``
  (a name adjit lacks stays a ModuleNotFoundError);
- of Warp's internals, only ``warp._src.types`` (the scalar type tuples and
  the numpy dtype map test files build their parameter lists from, made of
  adjit's public types) and ``warp._src.logger`` (adjit's Warp-style logger)
  are stood in for; files needing its code generator, context or build
  system stay blocked;
- ``warp.tests`` is Warp's installed test package, so the test files and their
  helper modules (``warp.tests.aux_*``, ``warp.tests.matrix.utils``) load from
  Warp's own copy, never edited;
- ``warp.tests.unittest_utils`` is a stand-in written here: it registers each
  test for the ``"cpu"`` device only (CUDA-only tests get no device and are
  skipped, as Warp's harness skips them on a machine without a GPU), and its
  asserts compare with ``np.testing`` exactly as Warp's do.

The denominator is what Warp's own harness registers on a CPU-only machine:
each file is collected (not run) once under the real Warp. A test counts as
passed only when unittest reports it passed on adjit; a test Warp registers
that adjit never ran (the file failed to import, crashed or timed out) counts
as blocked, with the reason. Failures and errors are grouped into blockers by
exception type and first message line (paths, addresses and numbers in
assertion messages normalized).
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import types
import unittest
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "warp_tests.md"
TOOL = Path(__file__).resolve()

#: Warp test modules run on adjit (under ``warp.tests``), with why each is in.
#: Geometry (meshes, BVHs, volumes, intersect, closest-point), tiles, sparse,
#: fem, CUDA, interop and Warp's module/cache/build machinery are out: issue 12
#: leaves them out of scope or they test Warp's C++ toolchain (see the doc).
SELECTED = {
    # scalar math and builtins
    "test_math": "scalar math builtins and their adjoints",
    "test_scalar_ops": "scalar operators per dtype",
    "test_arithmetic": "arithmetic builtins per dtype, with gradients",
    "test_operators": "operator overloading of scalars, vectors, matrices",
    "test_bool": "bool scalars, vectors and arrays",
    "test_rounding": "round, rint, trunc, floor, ceil, frac",
    "test_special_values": "inf / nan handling in builtins",
    "test_constant_precision": "float literals and constants' precision",
    "test_lerp": "lerp builtin and gradient",
    "test_smoothstep": "smoothstep builtin and gradient",
    "test_bit_count": "bit-counting builtins",
    "test_fp16": "float16 scalars and arrays",
    "test_fast_math": "the fast_math module option and its effect on kernels",
    "test_rand": "random number builtins",
    "test_noise": "noise builtins (and their gradients)",
    # composite types
    "test_vec": "vector types and builtins",
    "test_vec_constructors": "vector constructors",
    "test_vec_scalar_ops": "vector-scalar operators per dtype, with gradients",
    "test_vec_assign_copy": "vector component assignment (copy semantics)",
    "test_vec_lite": "vector basics",
    "matrix.test_mat": "matrix types and builtins",
    "matrix.test_mat_basics": "matrix basics",
    "matrix.test_mat_constructors": "matrix constructors",
    "matrix.test_mat_elementwise_ops": "matrix element-wise operators",
    "matrix.test_mat_linalg": "matrix linear algebra builtins and gradients",
    "matrix.test_mat_assign_copy": "matrix component assignment (copy semantics)",
    "matrix.test_mat_lite": "matrix basics",
    "test_quat": "quaternion type and builtins, with gradients",
    "test_quat_assign_copy": "quaternion component assignment",
    "test_spatial": "spatial vectors/matrices and transforms (Warp has no test_transform file)",
    "test_spatial_assign_copy": "spatial types' component assignment",
    "test_types": "type constructors, casts, type checks",
    "test_struct": "structs in kernels and on the host",
    "test_tuple": "tuples in kernels",
    "test_unpack": "tuple unpacking of vectors/matrices",
    "test_enum": "enums as kernel constants",
    "test_subscript_types": "subscripted type annotations",
    # the language: functions, generics, codegen
    "test_func": "@wp.func: overloads, defaults, recursion of calls",
    "test_func_inline": "inlined functions",
    "test_generics": "generic functions and kernels (Any, overloads)",
    "test_static": "wp.static: compile-time evaluation",
    "test_codegen": "control flow, closures, constants: the code generator",
    "test_codegen_continue": "continue / break in loops",
    "test_conditional": "if / ternaries / boolean operators",
    "test_lvalue": "assignments to array elements and components",
    "test_iter": "iteration over vectors, matrices, arrays",
    "test_builtins_resolution": "builtin overload resolution and implicit casts",
    "test_implicit_init": "using the host API without wp.init()",
    "test_print": "print / printf in kernels",
    "test_assert": "assert in kernels",
    "test_launch": "wp.launch argument handling and dims",
    # arrays
    "test_array": "array creation, views, slicing, fill, numpy interop",
    "test_copy": "wp.copy between arrays and types",
    "test_indexedarray": "indexed arrays",
    "test_fixedarray": "fixed-size local arrays",
    "test_array_reduce": "array_sum / array_inner",
    "test_ctypes": "passing host values and arrays to kernels (ctypes layout)",
    # atomics
    "test_atomic": "atomic_add/min/max and their adjoints",
    "test_atomic_cas": "atomic_cas / atomic_exch",
    "test_atomic_bitwise": "atomic and/or/xor",
    # autodiff
    "test_grad": "reverse-mode gradients of kernels",
    "test_grad_customs": "custom gradients (func_grad) and replays",
    "test_grad_debug": "the tape's debugging aids",
    "test_tape": "wp.Tape: recording, backward, zeroing",
    "test_overwrite": "the overwrite check of the tape",
    "test_composite_component_adjoint": "adjoints of composite-component writes",
    "test_adam": "the Adam optimizer (warp.optim)",
    "test_sgd": "the SGD optimizer (warp.optim)",
}

#: Why the remaining Warp test files are not run (for the doc).
LEFT_OUT = [
    ("tile/*, test_tile*", "tile primitives: out of scope (issue 12)"),
    ("geometry/*, test_intersect, test_closest_point_edge_edge, test_triangle_closest_point",
     "geometry builtins, meshes, BVHs, volumes: out of scope (issue 12)"),
    ("cuda/*, test_graph, test_cuda_profiler, test_large, test_allocator, test_allocation_tracker",
     "CUDA runtime, graphs, memory pools, large GPU allocations"),
    ("interop/*", "torch / JAX / paddle / DLPack interop: not the kernel language"),
    ("test_sparse, test_linear_solvers, test_fsai, test_dense, test_coloring, test_runlength_encode, test_utils, "
     "test_map, fem", "Warp libraries built on top of kernels (warp.sparse, warp.fem, solvers, utilities)"),
    ("test_module_*, test_kernel_cache, test_reload, test_compilation, test_compile_consts, test_codegen_instancing, "
     "test_options, test_unique_module, test_transient_module, test_cpu_*, test_external_build, test_apic*, "
     "test_core_library_binary, test_snippet, test_template_launch_bounds, test_block_dim_dispatch",
     "Warp's module, cache, build and C++ toolchain machinery (and native snippets)"),
    ("test_fabricarray, test_array_subclass, test_factory_style_array_annotations, test_ref, test_bf16, "
     "test_verify_fp, test_sanitize, test_devices, test_context, test_logger, test_diagnostics, test_import, "
     "test_version, test_examples, test_render_opengl, test_func_parameter_targets, test_future_annotations",
     "Fabric arrays, bfloat16, host diagnostics/settings, examples and rendering: not kernel language or autodiff; "
     "candidates for a later round"),
]

CHILD_ISOLATED_ENV = "ADJIT_WARP_TESTS_ISOLATED_ID"


# --------------------------------------------------------------------------
# The import shim: ``warp`` -> ``adjit``; ``warp.tests`` -> Warp's test files.
# --------------------------------------------------------------------------

@functools.cache
def warp_tests_dir() -> Path:
    """Warp's installed test package, found without importing Warp."""
    spec = importlib.util.find_spec("warp")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("warp-lang is not installed: its test files are what this tool runs")
    return Path(list(spec.submodule_search_locations)[0]) / "tests"


def tile_modules() -> list[str]:
    """Warp's tile test files (``tile.test_tile*``), found in its installed tests."""
    return sorted(f"tile.{f.stem}" for f in (warp_tests_dir() / "tile").glob("test_tile*.py"))


class _WarpAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``warp`` to ``adjit``, ``warp.tests`` to Warp's test files and
    ``warp.tests.unittest_utils`` to the stand-in below."""

    def __init__(self, tests_dir: Path):
        self.tests_dir = tests_dir

    def find_spec(self, name, path=None, target=None):
        if name in _WARP_INTERNALS:
            return importlib.machinery.ModuleSpec(name, self, is_package=name == "warp._src")
        if name == "warp" or (name.startswith("warp.") and not name.startswith("warp.tests")):
            target_name = "adjit" + name[len("warp"):]
            try:
                if importlib.util.find_spec(target_name) is None:
                    return None
            except ModuleNotFoundError:  # a parent adjit lacks: report the warp name
                return None
            module = importlib.import_module(target_name)
            head, _, tail = name.rpartition(".")
            parent = sys.modules.get(head) if head else None
            if parent is not None and getattr(parent, tail, module) is not module:
                return None  # adjit has another object of that name: do not shadow it
            return importlib.machinery.ModuleSpec(name, self, origin=f"alias of {target_name}",
                                                  is_package=hasattr(module, "__path__"))
        if name == "warp.tests":
            spec = importlib.machinery.ModuleSpec(name, self, is_package=True)
            spec.submodule_search_locations = [str(self.tests_dir)]
            return spec
        if name == "warp.tests.unittest_utils":
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        if spec.name in _WARP_INTERNALS:
            return _WARP_INTERNALS[spec.name]
        if spec.name == "warp.tests":
            module = types.ModuleType(spec.name)
            module.__path__ = [str(self.tests_dir)]
            return module
        if spec.name == "warp.tests.unittest_utils":
            return _make_unittest_utils()
        return importlib.import_module("adjit" + spec.name[len("warp"):])

    def exec_module(self, module):
        pass


def install_shim() -> None:
    """Makes ``import warp`` give adjit in this interpreter."""
    if any(isinstance(f, _WarpAlias) for f in sys.meta_path):
        return
    tests_dir = warp_tests_dir()
    for name in [n for n in sys.modules if n == "warp" or n.startswith("warp.")]:
        del sys.modules[name]
    _WARP_INTERNALS.update(_make_warp_internals())
    sys.meta_path.insert(0, _WarpAlias(tests_dir))
    import warp  # noqa: F401  (adjit, through the shim)
    warp._src = _WARP_INTERNALS["warp._src"]  # ``wp._src.types...`` as test files spell it


#: Warp-internal modules (``warp._src...``) some test files read a few
#: names from, as stand-ins made of adjit's public names (filled by install_shim).
_WARP_INTERNALS: dict[str, types.ModuleType] = {}


def _make_warp_internals() -> dict[str, types.ModuleType]:
    """``warp._src.types``: the type tuples and numpy dtype map test files
    build their parameter lists from (adjit's types, through its public
    ``dtype_from_numpy``); ``warp._src.logger``: adjit's Warp-style logger.
    Nothing else of Warp's internals (its code generator, build system or
    context) is stood in for: files that need those stay blocked."""
    import numpy as np
    import adjit
    import adjit.logger
    int_types = (adjit.int8, adjit.uint8, adjit.int16, adjit.uint16, adjit.int32, adjit.uint32, adjit.int64,
                 adjit.uint64)
    float_types = (adjit.float16, adjit.float32, adjit.float64)
    src_types = types.ModuleType("warp._src.types", "adjit stand-in for a few of Warp's internal type tables")
    src_types.__dict__.update({name: getattr(adjit.types, name) for name in dir(adjit.types)
                               if not name.startswith("_")})
    src_types.__dict__.update(
        int_types=int_types, float_types=float_types, scalar_types=int_types + float_types,
        scalar_and_bool_types=int_types + float_types + (adjit.bool,),
        np_dtype_to_warp_type={np.dtype(t.np_dtype): t for t in int_types + float_types},
        warp_type_to_np_dtype={t: np.dtype(t.np_dtype) for t in int_types + float_types},
    )
    src = types.ModuleType("warp._src", "adjit stand-in for Warp's internal package")
    src.__path__ = []
    src.types, src.logger = src_types, adjit.logger
    return {"warp._src": src, "warp._src.types": src_types, "warp._src.logger": adjit.logger}


# --------------------------------------------------------------------------
# Stand-ins for warp.tests.unittest_utils (test utilities, written for adjit).
# --------------------------------------------------------------------------

def _libc_fflush() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


class StreamCapture:
    """Captures a standard stream at the file-descriptor level, so that
    output printed by compiled kernels is caught as well as Python's."""

    def __init__(self, stream_name: str):
        self.stream_name = stream_name

    def begin(self):
        sys.stdout.flush()
        sys.stderr.flush()
        _libc_fflush()
        self.saved = getattr(sys, self.stream_name)
        self.saved_fd = os.dup(self.saved.fileno())
        self.tmp = tempfile.TemporaryFile()
        os.dup2(self.tmp.fileno(), self.saved.fileno())
        self.wrapper = io.TextIOWrapper(self.tmp, encoding="utf-8", errors="replace", write_through=True)
        setattr(sys, self.stream_name, self.wrapper)

    def end(self) -> str:
        self.wrapper.flush()
        self.wrapper.detach()  # leaves self.tmp open
        _libc_fflush()
        os.dup2(self.saved_fd, self.saved.fileno())
        os.close(self.saved_fd)
        setattr(sys, self.stream_name, self.saved)
        self.tmp.seek(0)
        text = self.tmp.read().decode("utf-8", errors="replace")
        self.tmp.close()
        return text


class StdOutCapture(StreamCapture):
    def __init__(self):
        super().__init__("stdout")


class StdErrCapture(StreamCapture):
    def __init__(self):
        super().__init__("stderr")


def synchronize_after_test(test, test_failed=False):
    import warp as wp
    wp.synchronize()


class CheckOutput:
    """Fails the test when it printed anything to stdout (as Warp's harness
    does: an expect_eq that fails prints rather than raises)."""

    def __init__(self, test):
        self.test = test

    def __enter__(self):
        self.capture = StdOutCapture()
        self.capture.begin()

    def __exit__(self, exc_type, exc_value, tb):
        try:
            if exc_type is None:
                synchronize_after_test(self.test)
        finally:
            out = self.capture.end()
        if out:
            print(out.rstrip())
        kept = [line for line in out.splitlines() if not (line.startswith("Module") and "load on device" in line)]
        if exc_type is None and "\n".join(kept).strip():
            self.test.fail(f"Unexpected output:\n'{out.rstrip()}'")


def assert_np_equal(result, expect, tol=0.0):
    import numpy as np
    if tol != 0.0:
        np.testing.assert_allclose(result.flatten(), expect.flatten(), atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expect)


def assert_array_equal(result, expect):
    import numpy as np
    np.testing.assert_equal(result.numpy(), expect.numpy())


def sanitize_identifier(s) -> str:
    s = str(s)
    return s if s.isidentifier() else re.sub(r"\W|^(?=\d)", "_", s)


def get_cpu_test_devices():
    import warp as wp
    return [wp.get_device("cpu")] if wp.is_cpu_available() else []


def get_test_devices(mode=None):
    return get_cpu_test_devices()


def _no_cuda_devices(*args, **kwargs):
    return []


def _no_device_pair(*args, **kwargs):
    return None


def skip_test_func(self):
    self.skipTest("No suitable devices to run the test.")


def _make_test_func(func, device, check_output, device_check=None, enable_cpu_blocks=False, **kwargs):
    @functools.wraps(func)
    def test_func(self):
        import warp as wp
        if enable_cpu_blocks:
            wp.config.enable_cpu_blocks = True  # adjit lacking the setting is the test's error
        if device_check is not None:
            device_check(self, device)
        if check_output:
            with CheckOutput(self):
                func(self, device, **kwargs)
        else:
            func(self, device, **kwargs)
    return test_func


def add_function_test(cls, name, func, devices=None, check_output=True, device_check=None, **kwargs):
    if devices is None:
        setattr(cls, name, _make_test_func(func, None, check_output, device_check, **kwargs))
        return
    if not isinstance(devices, list):
        devices = [devices]
    if not devices:
        setattr(cls, name, skip_test_func)
    for device in devices:
        setattr(cls, f"{name}_{sanitize_identifier(device)}",
                _make_test_func(func, device, check_output, device_check, **kwargs))


def add_function_test_register_kernel(cls, name, func, devices=None, **kwargs):
    func(None, None, **kwargs, register_kernels=True)
    add_function_test(cls, name, func, devices=devices, **kwargs)


def add_kernel_test(cls, kernel, dim, name=None, expect=None, inputs=None, devices=None, inputs_factory=None):
    if inputs is not None and inputs_factory is not None:
        raise ValueError("Only one of `inputs` and `inputs_factory` may be provided.")

    def run(self, device):
        import warp as wp
        args = list((inputs_factory(device) if inputs_factory is not None else inputs) or [])
        if expect:
            expected = wp.array(expect, dtype=int, device=device)
            output = wp.zeros_like(expected)
            args.append(output)
        with CheckOutput(self):
            wp.launch(kernel, dim=dim, inputs=args, device=device)
        if expect:
            assert_array_equal(output, expected)

    for d in (get_test_devices() if devices is None else devices):
        setattr(cls, f"{name or kernel.key}_{sanitize_identifier(d)}", lambda self, d=d: run(self, d))


def make_isolated_kernel(func, **kwargs):
    import warp as wp
    key = f"{func.__module__}.{func.__qualname__}:{func.__code__.co_firstlineno}"
    return wp.Kernel(func=func, module=wp.get_module(key), **kwargs)


@contextlib.contextmanager
def suppress_native_error_output():
    yield  # adjit's runtime has no native error stream to silence


def _shim_prelude() -> str:
    return f"import sys; sys.path.insert(0, {str(TOOL.parent)!r}); import warp_tests; warp_tests.install_shim()\n"


def run_python_subprocess(source, *args, timeout=60, hide_gpu=False, env_updates=None):
    env = dict(os.environ, **(env_updates or {}))
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    source = "import resource; resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n" + _shim_prelude() + source
    return subprocess.run([sys.executable, "-u", "-c", source, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


def run_test_in_subprocess(test, *, timeout=600, hide_gpu=False, env_updates=None) -> bool:
    if os.environ.get(CHILD_ISOLATED_ENV) == test.id():
        return False
    result = run_python_subprocess("import unittest; unittest.main(module=None)", test.id(), timeout=timeout,
                                   hide_gpu=hide_gpu, env_updates={**(env_updates or {}),
                                                                   CHILD_ISOLATED_ENV: test.id()})
    if result.returncode != 0:
        test.fail(f"Isolated test process exited with code {result.returncode}.\n"
                  f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return True


def _make_unittest_utils() -> types.ModuleType:
    import numpy as np
    import warp as wp
    m = types.ModuleType("warp.tests.unittest_utils", "adjit stand-ins for Warp's test harness helpers")
    m.__dict__.update(
        np=np, wp=wp, unittest=unittest, os=os, sys=sys, subprocess=subprocess, time=time,
        USD_AVAILABLE=False, test_mode="basic", coverage_enabled=False, coverage_temp_dir=None,
        coverage_branch=None, LIBC=None,
        StreamCapture=StreamCapture, StdOutCapture=StdOutCapture, StdErrCapture=StdErrCapture,
        CheckOutput=CheckOutput, synchronize_after_test=synchronize_after_test,
        assert_np_equal=assert_np_equal, assert_array_equal=assert_array_equal,
        sanitize_identifier=sanitize_identifier, skip_test_func=skip_test_func,
        get_cpu_test_devices=get_cpu_test_devices, get_test_devices=get_test_devices,
        get_cuda_test_devices=_no_cuda_devices, get_selected_cuda_test_devices=_no_cuda_devices,
        get_test_devices_with_cuda_graph_module_load=_no_cuda_devices,
        get_test_devices_with_graph_capture_allocation=_no_cuda_devices,
        get_test_devices_with_graph_capture_allocation_and_cuda_graph_module_load=_no_cuda_devices,
        get_cuda_test_devices_with_mempool=_no_cuda_devices,
        get_selected_cuda_test_devices_with_mempool=_no_cuda_devices,
        get_cuda_device_pair_with_peer_access_support=_no_device_pair,
        get_cuda_device_pair_with_mempool_access_support=_no_device_pair,
        is_cuda_graph_module_load_supported=lambda device: False,
        add_function_test=add_function_test, add_function_test_register_kernel=add_function_test_register_kernel,
        add_kernel_test=add_kernel_test, make_isolated_kernel=make_isolated_kernel,
        suppress_native_error_output=suppress_native_error_output,
        run_python_subprocess=run_python_subprocess, run_test_in_subprocess=run_test_in_subprocess,
    )
    return m


# --------------------------------------------------------------------------
# The child: runs one test module, writes one JSON line per event.
# --------------------------------------------------------------------------

def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return ""


class _RecordingResult(unittest.TestResult):
    def __init__(self, sink):
        super().__init__()
        self.sink = sink

    def _write(self, **record):
        self.sink.write(json.dumps(record) + "\n")
        self.sink.flush()

    def startTest(self, test):
        super().startTest(test)
        self._write(event="start", id=test.id())

    def _outcome(self, test, outcome, err=None, reason=None):
        record = {"event": "result", "id": test.id(), "outcome": outcome}
        if err is not None:
            exc_type, exc, tb = err
            record["exc_type"] = exc_type.__name__
            record["message"] = _first_line(exc)
            frames = [f for f in traceback.extract_tb(tb) if "unittest" not in f.filename]
            if frames:
                record["where"] = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}"
        if reason is not None:
            record["message"] = str(reason)
        self._write(**record)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._outcome(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._outcome(test, "failed", err)

    def addError(self, test, err):
        super().addError(test, err)
        self._outcome(test, "errored", err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._outcome(test, "skipped", reason=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._outcome(test, "skipped", reason="expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._outcome(test, "failed", reason="unexpected success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:  # a failed subtest fails its test: unittest reports it that way
            self._outcome(test, "failed" if issubclass(err[0], test.failureException) else "errored", err)


def _test_ids(suite) -> list[str]:
    ids = []
    for t in suite:
        ids.extend(_test_ids(t) if isinstance(t, unittest.TestSuite) else [t.id()])
    return ids


def child_main(module: str, sink_path: str, real_warp: bool) -> None:
    sink = open(sink_path, "a")

    def write(**record):
        sink.write(json.dumps(record) + "\n")
        sink.flush()

    warp_tests_dir()  # found before the shim hides the real package
    if not real_warp:
        install_shim()
    try:
        mod = importlib.import_module(f"warp.tests.{module}")
        suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    except BaseException as exc:  # noqa: BLE001  (an import that fails is this file's result)
        frames = traceback.extract_tb(exc.__traceback__)
        # The test file's own line that failed (the last frame in Warp's tests).
        own = [f for f in frames if Path(f.filename).resolve().is_relative_to(warp_tests_dir())] or frames
        where = f"{Path(own[-1].filename).name}:{own[-1].lineno} `{(own[-1].line or '').strip()[:80]}`" if own else ""
        write(event="import_error", exc_type=type(exc).__name__, message=_first_line(exc), where=where)
        return
    write(event="collected", ids=_test_ids(suite))
    if real_warp:
        return
    result = _RecordingResult(sink)
    suite.run(result)
    write(event="done")


# --------------------------------------------------------------------------
# The parent: runs the files, aggregates, writes the doc.
# --------------------------------------------------------------------------

def _run_child(module: str, real_warp: bool, timeout: float) -> tuple[list[dict], str, float]:
    """Returns the child's records, its exit status in words, and seconds taken."""
    with tempfile.TemporaryDirectory() as tmp:
        sink = Path(tmp) / "records.jsonl"
        log = Path(tmp) / "log.txt"
        cmd = ["nice", "-n", "10", sys.executable, str(TOOL), "--child", module, str(sink)]
        if real_warp:
            cmd.append("--real-warp")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONFAULTHANDLER="1")
        start = time.monotonic()
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout)
                status = "ok" if rc == 0 else f"exit {rc}" if rc > 0 else f"signal {-rc}"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                status = "timeout"
        elapsed = time.monotonic() - start
        records = [json.loads(line) for line in sink.read_text().splitlines() if line.strip()] \
            if sink.exists() else []
        if status not in ("ok", "timeout"):
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            status += ": " + " | ".join(tail)[-200:]
    return records, status, elapsed


_NORMALIZE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(/[\w.+-]+)+/([\w.-]+\.py)"), r"\2"),
    (re.compile(r"\.py[:, ]+(line )?\d+(:\d+)?"), ".py"),
    (re.compile(r"<locals>\."), ""),
    (re.compile(r"^[\w.-]+\.py: "), ""),  # a kernel error's location
]


def blocker_key(exc_type: str, message: str) -> str:
    msg = message
    for pattern, repl in _NORMALIZE:
        msg = pattern.sub(repl, msg)
    if exc_type == "AssertionError":
        if " does not match " in msg:
            msg = "an expected exception's message does not match Warp's regex"
        elif msg.startswith("Unexpected output"):
            msg = "Unexpected output (the test printed, e.g. a failing expect_eq)"
        else:
            msg = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", msg)
    msg = msg.strip()
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{exc_type}: {msg}" if msg else exc_type


_CLASS_LEVEL = re.compile(r"^(setUpClass|setUpModule|tearDownClass|tearDownModule) \((.+)\)$")


def run_file(module: str, warp_ids: list[str] | None, timeout: float) -> dict:
    records, status, elapsed = _run_child(module, False, timeout)
    info = {"module": module, "status": status, "seconds": round(elapsed, 1), "warp": None,
            "passed": 0, "failed": 0, "errored": 0, "skipped": 0, "blocked": 0, "blockers": Counter(),
            "collected": 0}
    info["warp"] = len(warp_ids) if warp_ids is not None else None
    results, started, collected = {}, [], None
    import_error = None
    class_errors = {}  # a failing setUpClass / setUpModule: its tests never start
    for r in records:
        if r["event"] == "import_error":
            import_error = (r["exc_type"], r["message"])
            info["note"] = f"import fails at {r['where']}"
        elif r["event"] == "result" and (m := _CLASS_LEVEL.match(r["id"])):
            class_errors[m.group(2)] = (f"{m.group(1)} fails: {r.get('exc_type', '')}", r.get("message", ""))
        elif r["event"] == "collected":
            collected = r["ids"]
        elif r["event"] == "start":
            started.append(r["id"])
        elif r["event"] == "result":
            prev = results.get(r["id"])
            if prev is None or prev["outcome"] == "passed":  # a failed subtest outranks the pass
                results[r["id"]] = r
    info["collected"] = len(collected or [])
    for r in results.values():
        info[r["outcome"]] += 1
        if r["outcome"] in ("failed", "errored"):
            info["blockers"][(r.get("exc_type", "AssertionError"), r.get("message", ""))] += 1
    # Tests Warp registers (or adjit collected) that never got a result.
    expected = list(dict.fromkeys((warp_ids or []) + (collected or [])))
    results = {i: r for i, r in results.items() if not _CLASS_LEVEL.match(i)}
    unrun = [i for i in expected if i not in results]
    for scope, reason in class_errors.items():
        inside = [i for i in unrun if i.startswith(scope + ".")]
        info["blocked"] += len(inside)
        info["blockers"][reason] += len(inside)
        unrun = [i for i in unrun if i not in inside]
    if unrun:
        if import_error is not None:
            reason = ("file does not import: " + import_error[0], import_error[1])
        elif status == "timeout":
            reason = (f"file timed out after {timeout:.0f} s", "")
        elif status != "ok":
            reason = (f"file crashed ({status.split(':')[0]})", "")
        elif collected is not None:
            reason = ("test Warp registers on the CPU that adjit's run does not define", "")
        else:
            reason = (f"file produced no results ({status})", "")
        info["blocked"] += len(unrun)
        info["blockers"][reason] += len(unrun)
        if status == "timeout" and started and started[-1] not in results:
            info["hung_in"] = started[-1].rsplit(".", 1)[-1]
    info["total"] = len(expected)
    return info


def collect_under_warp(modules: list[str], timeout: float) -> dict[str, list[str] | None]:
    out = {}
    for m in modules:
        records, status, _ = _run_child(m, True, timeout)
        ids = next((r["ids"] for r in records if r["event"] == "collected"), None)
        out[m] = ids
    return out


def git_commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "adjit", "cpp",
                                "dialects"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return sha + (" (with uncommitted changes to adjit)" if dirty else "")
    except Exception:  # noqa: BLE001
        return "unknown"


#: Warp tests that fail because adjit is exact where the test encodes Warp's
#: own behaviour (checked by hand; they still count as failures).
DELIBERATE_DIFFERENCES = [
    ("test_arithmetic: test_binary_ops_*",
     "the test asserts d(x1 % x2)/dx2 == 0 (Warp's adjoint of mod); the derivative is -trunc(x1 / x2), which "
     "adjit gives (5 % 2 = 1, 5 % 2.1 = 0.8: slope -2)"),
    ("test_overwrite: *_warning, test_kernel_read_kernel_write, test_deferred_backward_still_warns, ...",
     "the tests expect Warp's warning that an array read by a recorded launch is overwritten before backward(), "
     "which may corrupt Warp's gradient; adjit's tape snapshots such an array (or raises GradientError naming it "
     "when written outside the tape), so the gradient stays exact and there is nothing to warn about"),
]


def render(infos: list[dict], command: str, timeout: float, total_seconds: float) -> str:
    tot = Counter()
    blockers = Counter()
    files_by_blocker = defaultdict(set)
    for i in infos:
        for k in ("total", "passed", "failed", "errored", "skipped", "blocked"):
            tot[k] += i[k]
        tot["warp"] += i["warp"] or 0
        for (exc_type, message), n in i["blockers"].items():
            b = blocker_key(exc_type, message)
            blockers[b] += n
            files_by_blocker[b].add(i["module"])
    ran = tot["total"] - tot["skipped"]
    no_import = [i for i in infos if i.get("note", "").startswith("import fails")]
    internals = [i for i in no_import if "_src" in i["note"] or any("_src" in m for (_, m) in i["blockers"])]

    def pct(n, d):
        return f"{100.0 * n / d:.1f}%" if d else "-"

    lines = [
        "# Warp's own CPU tests on adjit",
        "",
        "Generated by `tools/warp_tests.py`; do not edit by hand.",
        "",
        f"- date: {datetime.date.today().isoformat()}",
        f"- adjit commit: {git_commit()}",
        f"- Warp version: {importlib.metadata.version('warp-lang')} (its installed `warp/tests`, unchanged)",
        f"- command: `{command}`",
        f"- per-file timeout: {timeout:.0f} s; wall time of the run: {total_seconds / 60:.1f} min",
        "",
        "Each selected Warp test file runs unchanged in its own interpreter with `import warp` resolving to",
        "`adjit` and Warp's test harness (`warp.tests.unittest_utils`) replaced by stand-ins that register",
        "each test for the `cpu` device only and compare with `np.testing` as Warp's do (see the tool's",
        "docstring). Of Warp's internals, `warp._src.types` (its scalar type tuples and numpy dtype map,",
        "made of adjit's public types) and `warp._src.logger` are stood in for; nothing else.",
        "*Warp CPU tests* is what Warp's own harness registers for each file on a machine",
        "without a GPU (collected, not run, under the real Warp); tests that only run on CUDA are",
        "registered as skips there and here. A test counts as passed only when unittest says it passed.",
        "*Blocked* tests never got a result: their file did not import, crashed or timed out.",
        "",
        "## Totals",
        "",
        f"- files: {len(infos)}; tests: {tot['total']} (Warp registers {tot['warp']} on the CPU)",
        f"- **passed: {tot['passed']}** ({pct(tot['passed'], tot['total'])} of all, "
        f"{pct(tot['passed'], ran)} of those not skipped)",
        f"- failed: {tot['failed']}; errored: {tot['errored']}; blocked: {tot['blocked']}; "
        f"skipped: {tot['skipped']} (CUDA-only, or skipped by the test itself)",
        f"- blocked because their file does not import on adjit: {sum(i['blocked'] for i in no_import)} tests "
        f"in {len(no_import)} files; {sum(i['blocked'] for i in internals)} of them in the {len(internals)} files "
        f"that stop on Warp's internals (`warp._src`)",
        f"- files passing every test they run: "
        f"{sum(1 for i in infos if i['total'] and i['passed'] == i['total'] - i['skipped'])}",
        "",
        "## Per file",
        "",
        "| file | Warp CPU tests | passed | failed | errored | blocked | skipped | pass rate | s | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for i in infos:
        note = " ".join(x for x in ("" if i["status"] == "ok" else i["status"].split(":")[0], i.get("note", "")) if x)
        if i.get("hung_in"):
            note += f" (in {i['hung_in']})"
        warp = "?" if i["warp"] is None else str(i["warp"])
        lines.append(f"| {i['module']} | {warp} | {i['passed']} | {i['failed']} | {i['errored']} | {i['blocked']} | "
                     f"{i['skipped']} | {pct(i['passed'], i['total'] - i['skipped'])} | {i['seconds']:.0f} | "
                     f"{note} |")
    lines += [
        "",
        "## Top blockers",
        "",
        "Failures, errors and blocked tests grouped by exception type and first message line, counted",
        "over all files (a test counts once).",
        "",
        "| # | tests | files | blocker |",
        "|---:|---:|---:|---|",
    ]
    for n, (b, c) in enumerate(blockers.most_common(30), 1):
        cell = b.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {n} | {c} | {len(files_by_blocker[b])} | `{cell}` |")
    lines += ["", f"{len(blockers)} distinct blockers in all.", "",
              "## Failures where adjit differs from Warp on purpose", "",
              "These still count as failures above; each was checked by hand.", "",
              "| tests | why |", "|---|---|"]
    lines += [f"| {tests} | {why} |" for tests, why in DELIBERATE_DIFFERENCES]
    lines += ["",
              "## The files and why", "",
              "Run: Warp's test files for the kernel language and autodiff on the CPU.", "",
              "| file | what it tests |", "|---|---|"]
    lines += [f"| {m} | {why} |" for m, why in SELECTED.items()]
    lines += ["", "Left out:", "", "| files | why |", "|---|---|"]
    lines += [f"| {f} | {why} |" for f, why in LEFT_OUT]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("modules", nargs="*", help="Warp test modules (default: the selection), e.g. test_math")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per file (default 120)")
    p.add_argument("--jobs", type=int, default=1, help="files run at once (default 1)")
    p.add_argument("--tiles", action="store_true",
                   help="run Warp's tile test files (tile/test_tile*.py, left out of the selection) instead")
    p.add_argument("--no-doc", action="store_true", help="print the report instead of writing docs/warp_tests.md")
    p.add_argument("--json", type=Path, help="also write the per-file results as JSON here")
    p.add_argument("--from-json", type=Path, help="render the report from a --json file instead of running")
    p.add_argument("--child", nargs=2, metavar=("MODULE", "SINK"), help=argparse.SUPPRESS)
    p.add_argument("--real-warp", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child_main(args.child[0], args.child[1], args.real_warp)
        return

    if args.from_json:  # render again from a saved run
        saved = json.loads(args.from_json.read_text())
        infos = [{**i, "blockers": Counter({tuple(k): n for k, n in i["blockers"]})} for i in saved["files"]]
        text = render(infos, saved["command"], saved["timeout"], saved["seconds"])
        print(text) if args.no_doc else DOC.write_text(text)
        return

    if args.tiles and not args.no_doc:
        p.error("--tiles reports with --no-doc (docs/warp_tests.md covers the selection)")
    modules = args.modules or (tile_modules() if args.tiles else list(SELECTED))
    start = time.monotonic()
    print(f"collecting {len(modules)} files under Warp ...", file=sys.stderr)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        warp_ids = dict(zip(modules, pool.map(lambda m: collect_under_warp([m], 120)[m], modules)))

    def one(m):
        info = run_file(m, warp_ids[m], args.timeout)
        print(f"{m}: {info['passed']}/{info['total']} passed, {info['failed']} failed, {info['errored']} errored, "
              f"{info['blocked']} blocked, {info['skipped']} skipped ({info['seconds']:.0f} s, {info['status'][:80]})",
              file=sys.stderr)
        return info

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        infos = list(pool.map(one, modules))
    command = "python tools/warp_tests.py" + ("" if not args.modules else " " + " ".join(args.modules)) + \
        (" --tiles" if args.tiles and not args.modules else "") + \
        (f" --timeout {args.timeout:.0f}" if args.timeout != 120 else "") + \
        (f" --jobs {args.jobs}" if args.jobs != 1 else "")
    text = render(infos, command, args.timeout, time.monotonic() - start)
    if args.json:
        files = [{**i, "blockers": [[list(k), n] for k, n in i["blockers"].items()]} for i in infos]
        args.json.write_text(json.dumps({"command": command, "timeout": args.timeout,
                                         "seconds": time.monotonic() - start, "files": files}, indent=1))
    if args.no_doc:
        print(text)
    else:
        DOC.write_text(text)
        print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
