"""Warp 1.19 host names, part 2 (issue 12): ``DeterministicMode`` and
``WarpDeterminismError`` over ``adjit.config.deterministic``; Warp's logging
API over the ``"adjit"`` Python loggers; ``print_diagnostics``;
``load_module`` / ``force_load`` (kernels compiled before their launches);
``get_cpu_kernel_cache_key``; ``from_ptr``."""
import logging
import sys
import types
import typing
import warnings

import numpy as np
import pytest

import adjit as wp
from adjit import cache, loader
from adjit.determinism import DeterministicMode, WarpDeterminismError
from adjit.errors import AdjitError


# --- DeterministicMode ----------------------------------------------------------------------

@wp.kernel
def scatter_add(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y, idx[i], x[i])


@pytest.fixture
def restore_deterministic():
    yield
    wp.config.deterministic = True


def test_deterministic_mode_values_are_warps():
    assert [(m.name, int(m)) for m in DeterministicMode] == \
        [("NOT_GUARANTEED", 0), ("RUN_TO_RUN", 1), ("GPU_TO_GPU", 2)]
    assert issubclass(WarpDeterminismError, RuntimeError) and issubclass(WarpDeterminismError, AdjitError)


def test_deterministic_modes_set_the_config_flag(restore_deterministic):
    wp.config.deterministic = DeterministicMode.NOT_GUARANTEED
    assert wp.config.deterministic is False
    assert wp.config.deterministic == DeterministicMode.NOT_GUARANTEED
    wp.config.deterministic = DeterministicMode.RUN_TO_RUN
    assert wp.config.deterministic is True
    assert wp.config.deterministic == DeterministicMode.RUN_TO_RUN


def test_run_to_run_adds_in_thread_order(restore_deterministic):
    """RUN_TO_RUN is adjit's ordered atomics: bitwise numpy's np.add.at."""
    rng = np.random.default_rng(3)
    n = 70_000
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    idx = rng.integers(0, 31, n).astype(np.int32)
    wp.config.deterministic = DeterministicMode.RUN_TO_RUN
    y = wp.zeros(31, dtype=float)
    wp.launch(scatter_add, dim=n, inputs=[wp.array(x, dtype=float), wp.array(idx, dtype=int), y])
    expected = np.zeros(31, np.float32)
    np.add.at(expected, idx, x)
    assert y.numpy().tobytes() == expected.tobytes()


def test_gpu_to_gpu_is_refused_and_leaves_the_setting(restore_deterministic):
    wp.config.deterministic = DeterministicMode.NOT_GUARANTEED
    with pytest.raises(WarpDeterminismError, match="GPU_TO_GPU.*cannot promise"):
        wp.config.deterministic = DeterministicMode.GPU_TO_GPU
    assert wp.config.deterministic is False


def test_deterministic_rejects_other_values(restore_deterministic):
    for bad in (1, 2, "RUN_TO_RUN", None):
        with pytest.raises(TypeError, match="True, False or an adjit.DeterministicMode"):
            wp.config.deterministic = bad
    assert wp.config.deterministic is True


def test_module_option_deterministic_is_checked():
    name = "adjit_test_det_option"
    wp.set_module_options({"deterministic": DeterministicMode.RUN_TO_RUN}, module=name)
    assert wp.get_module_options(name)["deterministic"] is DeterministicMode.RUN_TO_RUN
    with pytest.raises(WarpDeterminismError, match="option 'deterministic'"):
        wp.set_module_options({"deterministic": DeterministicMode.GPU_TO_GPU}, module=name)
    with pytest.raises(TypeError, match="option 'deterministic'"):
        wp.set_module_options({"deterministic": "yes"}, module=name)
    assert wp.get_module_options(name)["deterministic"] is DeterministicMode.RUN_TO_RUN


# --- logging --------------------------------------------------------------------------------

from adjit.logger import (LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING, Logger, ScopedLogger,  # noqa: E402
                          ScopedLogLevel, get_logger, set_logger)


class Capture:
    """A Warp-style logger that keeps what it is given."""

    def __init__(self):
        self.records = []

    def debug(self, message):
        self.records.append(("debug", message))

    def info(self, message):
        self.records.append(("info", message))

    def warning(self, message, category=None, stacklevel=1):
        self.records.append(("warning", message))

    def error(self, message):
        self.records.append(("error", message))


def test_log_levels_are_pythons():
    assert (LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR) == \
        (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)


def test_default_logger_is_the_adjit_python_logger(caplog):
    logger = get_logger()
    assert isinstance(logger, Logger)
    with caplog.at_level(logging.INFO, logger="adjit"):
        logger.info("diagnostic one")
        logger.warning("diagnostic two")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == \
        [("adjit", logging.INFO, "diagnostic one"), ("adjit", logging.WARNING, "diagnostic two")]


def test_scoped_logger_receives_adjits_compile_messages():
    """A fresh kernel compiles: adjit.cache says why, at INFO, to the installed logger."""
    @wp.kernel
    def logged_kernel(a: wp.array(dtype=float)):
        a[wp.tid()] = 3.0

    capture = Capture()
    python_logger = logging.getLogger("adjit")
    level, propagate = python_logger.level, python_logger.propagate
    with ScopedLogger(capture), ScopedLogLevel(LOG_INFO):
        assert get_logger() is capture
        assert python_logger.level == LOG_INFO and python_logger.propagate is False
        a = wp.zeros(4, dtype=float)
        wp.launch(logged_kernel, dim=4, inputs=[a])
        logging.getLogger("adjit.tape").warning("a tape warning %d", 7)
        logging.getLogger("adjit.cache").error("an error")
    assert np.array_equal(a.numpy(), [3, 3, 3, 3])
    assert any(kind == "info" and message.startswith("compiling ") and "logged_kernel" in message
               for kind, message in capture.records), capture.records
    assert ("warning", "a tape warning 7") in capture.records and ("error", "an error") in capture.records
    # restored: the default logger, the level and propagation as before, no handler left behind
    assert get_logger() is not capture and python_logger.level == level and python_logger.propagate == propagate
    count = len(capture.records)
    logging.getLogger("adjit.cache").error("after the scope")
    assert len(capture.records) == count


def test_log_level_filters_what_the_logger_gets():
    capture = Capture()
    set_logger(capture)
    try:
        with ScopedLogLevel(LOG_ERROR):
            logging.getLogger("adjit.tape").warning("hidden")
            logging.getLogger("adjit.tape").error("shown")
        with ScopedLogLevel(LOG_DEBUG):
            logging.getLogger("adjit.cache").debug("detail")
    finally:
        set_logger(None)
    assert capture.records == [("error", "shown"), ("debug", "detail")]


def test_scoped_log_level_restores_on_error():
    python_logger = logging.getLogger("adjit")
    before = python_logger.level
    with pytest.raises(KeyError):
        with ScopedLogLevel(LOG_DEBUG):
            assert python_logger.level == LOG_DEBUG
            raise KeyError("x")
    assert python_logger.level == before


def test_logger_bad_inputs():
    class NoError:
        def debug(self, m): ...
        def info(self, m): ...
        def warning(self, m, category=None, stacklevel=1): ...

    with pytest.raises(TypeError, match="Logger protocol.*has no error"):
        set_logger(NoError())
    with pytest.raises(TypeError, match="Logger protocol"):
        ScopedLogger(object())
    assert get_logger() is not None and not isinstance(get_logger(), NoError)
    with pytest.raises(TypeError, match="log_level must be an int"):
        ScopedLogLevel("info")
    with pytest.raises(TypeError, match="log_level must be an int"):
        ScopedLogLevel(True)
    with pytest.raises(ValueError, match=">= 0"):
        ScopedLogLevel(-1)


# --- print_diagnostics, get_cpu_kernel_cache_key -------------------------------------------

from adjit.diagnostics import print_diagnostics  # noqa: E402


def test_print_diagnostics_reports_the_environment(capsys):
    info = print_diagnostics()
    out = capsys.readouterr().out
    assert info["python"] == sys.version.split()[0] and info["numpy"] == np.__version__
    assert info["cpu"] == wp._runtime.host_id() and info["cpu_threads"] == wp._runtime.num_threads()
    assert info["cache_dir"] == str(cache.cache_dir()) and info["devices"] == ["cpu"]
    assert info["cuda_available"] is False and info["compiler"] is True
    assert info["config"]["deterministic"] is wp.config.deterministic
    from importlib import metadata
    assert info["mlir"] == metadata.version("xtc-mlir-python-bindings")
    for value in (info["python"], info["numpy"], info["cpu"], info["cache_dir"], info["mlir"]):
        assert value in out


def test_cpu_kernel_cache_key_names_the_target():
    import platform
    from importlib import metadata
    key = cache.get_cpu_kernel_cache_key()
    assert key.startswith(f"{metadata.version('adjit')}-{platform.system()}-{platform.machine()}-")
    assert key == cache.get_cpu_kernel_cache_key(cpu_compiler_flags="-march=native")
    assert len(key.rsplit("-", 1)[1]) == 8
    # the hash follows the runtime's CPU identity (what cache keys hold)
    cache.target_id.cache_clear()
    real = wp._runtime.host_id
    try:
        wp._runtime.host_id = lambda: "x86_64-SomeOtherCPU"
        other = cache.get_cpu_kernel_cache_key()
    finally:
        wp._runtime.host_id = real
        cache.target_id.cache_clear()
    assert other != key and other.rsplit("-", 1)[0] == key.rsplit("-", 1)[0]
    assert cache.get_cpu_kernel_cache_key() == key
    with pytest.raises(ValueError, match="this machine's CPU only"):
        cache.get_cpu_kernel_cache_key(cpu_compiler_flags="")
    with pytest.raises(ValueError, match="this machine's CPU only"):
        cache.get_cpu_kernel_cache_key(cpu_compiler_flags="-O2")
    with pytest.raises(TypeError):
        cache.get_cpu_kernel_cache_key(cpu_compiler_flags=3)
    with pytest.raises(TypeError):
        cache.get_cpu_kernel_cache_key("-march=native")  # keyword-only, as Warp's


# --- load_module / force_load ----------------------------------------------------------------

MOD = "adjit_test_load_module"


@wp.kernel(module=MOD)
def load_square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel(module=MOD + ".sub")
def load_double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


FORCE = "adjit_test_force_load"


@wp.kernel(module=FORCE)
def force_scale(x: wp.array(dtype=typing.Any), s: typing.Any, y: wp.array(dtype=typing.Any)):
    i = wp.tid()
    y[i] = s * x[i]


force_scale_f64 = wp.overload(force_scale, [wp.array(dtype=wp.float64), wp.float64, wp.array(dtype=wp.float64)])


def _forward_loaded(kernel) -> bool:
    return any(not adjoint for adjoint, _ in loader.loaded_variants(kernel))


def _adjoint_loaded(kernel) -> bool:
    return any(adjoint for adjoint, _ in loader.loaded_variants(kernel))


@pytest.fixture
def no_compiling(monkeypatch):
    """Makes compiling (or reading the disk cache) fail: what runs must be loaded already."""
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel was compiled or read from the cache after load_module")
    def arm():
        monkeypatch.setattr(loader, "_compiler", refuse)
        monkeypatch.setattr(loader.cache, "load", refuse)
    return arm


def test_load_module_compiles_before_the_launch(no_compiling):
    assert not _forward_loaded(load_square)
    loader.load_module(MOD)
    assert _forward_loaded(load_square) and _adjoint_loaded(load_square)
    assert not _forward_loaded(load_double)  # a submodule: only with recursive=True
    no_compiling()
    x = wp.array(np.array([1, 2, 3], np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(load_square, dim=3, inputs=[x, y])
    tape.backward(grads={y: np.ones(3, np.float32)})
    assert np.array_equal(y.numpy(), [1, 4, 9]) and np.array_equal(x.grad.numpy(), [2, 4, 6])
    # the same launch unloaded would have compiled: the check is live
    with pytest.raises(AssertionError, match="compiled"):
        wp.launch(load_double, dim=3, inputs=[x, y])


def test_load_module_recursive_and_by_module_object(no_compiling):
    module = types.ModuleType(MOD)
    loader.load_module(module, device="cpu", recursive=True, block_dim=256, max_workers=0)
    assert _forward_loaded(load_double)
    no_compiling()
    x, y = wp.array(np.array([1.5, -2], np.float32)), wp.zeros(2, dtype=float)
    wp.launch(load_double, dim=2, inputs=[x, y])
    assert np.array_equal(y.numpy(), [3, -4])


CALLER = """
import adjit as wp
from adjit.loader import load_module


@wp.kernel
def caller_kernel(a: wp.array(dtype=float)):
    a[wp.tid()] = 5.0


def preload():
    load_module()
"""


def test_load_module_of_the_calling_module(tmp_path, monkeypatch):
    """With no module, load_module loads the kernels of the module calling it."""
    import importlib.util
    (tmp_path / "adjit_caller_module.py").write_text(CALLER)
    spec = importlib.util.spec_from_file_location("adjit_caller_module", tmp_path / "adjit_caller_module.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "adjit_caller_module", module)
    spec.loader.exec_module(module)
    assert not _forward_loaded(module.caller_kernel)
    module.preload()
    assert _forward_loaded(module.caller_kernel)


def test_force_load_loads_generic_instances(no_compiling):
    assert not _forward_loaded(force_scale_f64)
    loader.force_load(device=["cpu"], modules=[FORCE])
    assert _forward_loaded(force_scale_f64)
    no_compiling()
    x, y = wp.array(np.array([1, 2], np.float64), dtype=wp.float64), wp.zeros(2, dtype=wp.float64)
    wp.launch(force_scale_f64, dim=2, inputs=[x, 0.5, y])
    assert np.array_equal(y.numpy(), [0.5, 1.0])


def test_load_module_bad_inputs():
    with pytest.raises(RuntimeError, match="'no_such_adjit_module' has no adjit kernels"):
        loader.load_module("no_such_adjit_module")
    with pytest.raises(TypeError, match="module must be"):
        loader.load_module(42)
    with pytest.raises(ValueError, match="not available"):
        loader.load_module(MOD, device="cuda:0")
    with pytest.raises(ValueError, match="block_dim"):
        loader.load_module(MOD, block_dim=0)
    with pytest.raises(ValueError, match="max_workers"):
        loader.load_module(MOD, max_workers=-1)
    with pytest.raises(TypeError, match="recursive"):
        loader.load_module(MOD, recursive="yes")
    with pytest.raises(TypeError, match="modules must be a list"):
        loader.force_load(modules=MOD)


# --- from_ptr --------------------------------------------------------------------------------

from adjit.runtime.array import from_ptr  # noqa: E402


def test_from_ptr_wraps_memory():
    data = np.arange(12, dtype=np.float32)
    with pytest.warns(DeprecationWarning, match="adjit.array\\(ptr="):
        a = from_ptr(data.ctypes.data, 12)
    assert a.shape == (12,) and a.dtype == wp.float32
    with pytest.warns(DeprecationWarning):
        b = from_ptr(data.ctypes.data, 12, dtype=wp.float32, shape=(3, 4), device="cpu")
    assert b.shape == (3, 4) and np.array_equal(b.numpy(), data.reshape(3, 4))
    with pytest.warns(DeprecationWarning):
        v = from_ptr(data.ctypes.data, 4, dtype=wp.vec3)
    assert v.shape == (4,) and np.array_equal(v.numpy(), data.reshape(4, 3))
    wp.launch(load_square, dim=12, inputs=[a, a])  # writes go to the wrapped memory
    assert np.array_equal(data, np.arange(12, dtype=np.float32) ** 2)


def test_from_ptr_bad_inputs():
    data = np.zeros(4, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match="holds 6 elements, not length=4"):
            from_ptr(data.ctypes.data, 4, shape=(2, 3))
        with pytest.raises(ValueError, match="length must be an int"):
            from_ptr(data.ctypes.data, -1)
        with pytest.raises(ValueError, match="ptr must be a positive int"):
            from_ptr(0, 4)
        with pytest.raises(ValueError, match="not available"):
            from_ptr(data.ctypes.data, 4, device="cuda")


def test_a_kernel_from_exec_without_a_module_name_does_not_break_load_module(tmp_path):
    """A kernel defined by exec() with globals lacking __name__ has no Python
    module (its __module__ is None): it belongs to __main__'s, and modules
    that other kernels are loaded from are unaffected (found by
    tools/gpu_replay.py, which keeps kernels alive)."""
    path = tmp_path / "no_module_name.py"
    path.write_text("import adjit\n\n@adjit.kernel\ndef nameless(x: adjit.array(dtype=float)):\n"
                    "    x[adjit.tid()] = 2.0\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    nameless = namespace["nameless"]
    assert nameless.pyfunc.__module__ is None
    assert nameless.module is wp.get_module("__main__")
    loader.load_module(MOD)  # iterates over every live kernel's module
    x = wp.zeros(2)
    wp.launch(nameless, 2, [x])
    np.testing.assert_array_equal(x.numpy(), [2.0, 2.0])
