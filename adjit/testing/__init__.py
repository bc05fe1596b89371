"""Testing helpers for adjit kernels and the gradient fuzzer (``adjit.testing``).

For kernel authors:

- ``check_gradients(kernel, dim, inputs, outputs, eps=, rtol=, atol=)``: the
  adjoint Jacobians against central finite differences; raises an
  AssertionError with a readable report. The step and tolerances default by
  the arrays' least precise float dtype (``TOLERANCES_BY_DTYPE``).
- ``check_tape_gradients(run, inputs, ...)``: the same for several launches
  recorded on one tape.
- ``check_dot_product(run, inputs, ...)``: forward mode against reverse mode,
  ``<u, J v> == <J^T u, v>`` for random ``u`` and ``v`` (float64, to 1e-12).
- ``arrays(dtype, shape, elements=...)``: a Hypothesis strategy of adjit arrays.

For adjit's own tests, the gradient fuzzer:

- ``programs(config)``: a Hypothesis strategy that writes programs in the
  kernel language (device functions, kernels, launches and their inputs);
- ``check_program(program)``: compiles one through the real frontend and
  checks its forward values against numpy, its gradients against finite
  differences and its forward mode against its reverse mode, raising an AssertionError with a paste-ready reproducer.

See docs/testing.md. The strategies need Hypothesis (``pip install
hypothesis``); the checks do not.
"""
from ._check import (ATOL, DOT_RTOL, EPS, RTOL, TOLERANCES_BY_DTYPE, DotProductMismatch, ForwardModeUnsupported,
                     GradientMismatch, HessianAsymmetry, check_dot_product, check_gradients, check_hessian_symmetry,
                     check_tape_gradients, default_tolerances)

__all__ = ["ATOL", "DOT_RTOL", "EPS", "RTOL", "TOLERANCES_BY_DTYPE", "default_tolerances", "DotProductMismatch", "ForwardModeUnsupported", "GradientMismatch",
           "HessianAsymmetry", "check_dot_product", "check_gradients", "check_hessian_symmetry",
           "check_tape_gradients", "arrays",
           "programs", "check_program", "GenConfig", "Tolerances", "module_source", "fuzz_settings"]

_LAZY = {
    "arrays": ("strategies", "arrays"),
    "programs": ("strategies", "programs"),
    "check_program": ("_oracle", "check_program"),
    "module_source": ("_oracle", "module_source"),
    "Tolerances": ("_oracle", "Tolerances"),
    "GenConfig": ("_generate", "GenConfig"),
    "fuzz_settings": ("_profiles", "fuzz_settings"),
}


def __getattr__(name):
    # Hypothesis is a test dependency: import the strategies on first use.
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
