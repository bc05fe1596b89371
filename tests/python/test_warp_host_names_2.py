"""Warp 1.19 host names, part 2 (issue 12): ``DeterministicMode`` and
``WarpDeterminismError`` over ``adjit.config.deterministic``; Warp's logging
API over the ``"adjit"`` Python loggers; ``print_diagnostics``;
``load_module`` / ``force_load`` (kernels compiled before their launches);
``get_cpu_kernel_cache_key``; ``from_ptr``."""
import ctypes
import logging
import sys
import types
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
