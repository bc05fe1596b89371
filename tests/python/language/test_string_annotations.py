"""Kernels in a module with ``from __future__ import annotations``: their
annotations are strings, resolved in the kernel's globals and closure (a
kernel made by a factory names the factory's arguments, as in Warp)."""
from __future__ import annotations

import numpy as np
import pytest

import adjit


def _scaled_kernel(module, dtype, factor):
    @module.kernel
    def scaled(x: module.array(dtype=dtype), y: module.array(dtype=dtype)):
        i = module.tid()
        y[i] = x[i] * dtype(factor)
    return scaled


@pytest.mark.parametrize("dtype", [adjit.float32, adjit.float64])
def test_annotations_name_closure_variables(dtype):
    kernel = _scaled_kernel(adjit, dtype, 3.0)
    x = adjit.array(np.arange(4.0), dtype=dtype)
    y = adjit.zeros(4, dtype=dtype)
    adjit.launch(kernel, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), 3 * np.arange(4.0))
    assert y.dtype == dtype


def test_an_unknown_name_in_an_annotation_is_an_error_naming_the_line():
    @adjit.kernel
    def unknown(x: nowhere.array(dtype=float)):  # noqa: F821
        pass
    with pytest.raises(adjit.AdjitError, match=r"test_string_annotations\.py:\d+.*'nowhere'"):
        adjit.launch(unknown, dim=1, inputs=[adjit.zeros(1, dtype=float)])
