"""Warp's JAX host names (``wp.jax_kernel``, ``wp.jax_callable``, their
enums), importable without JAX: the functions import ``adjit.jax`` (and with
it JAX) when called.

Warp runs them through XLA's FFI on the CPU and CUDA; adjit builds them on
``adjit.jax.op``'s ``pure_callback`` on the CPU, so each call copies its
arrays between JAX and adjit. CUDA graph capture (``JaxCallableGraphMode``
WARP, WARP_STAGED, WARP_STAGED_EX) needs CUDA and is refused.
"""
from __future__ import annotations

from .jax_modes import JaxCallableGraphMode, JaxModulePreloadMode


def jax_kernel(kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
               in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
               enable_backward: bool = False, has_side_effect: bool = False, block_dim: int | None = None):
    """A JAX function launching ``kernel`` (Warp's ``jax_kernel``; see
    ``adjit.jax.JaxKernel``). Imports JAX."""
    from . import jax as adjit_jax
    return adjit_jax.jax_kernel(kernel, num_outputs, vmap_method, launch_dims, output_dims, in_out_argnames,
                                module_preload_mode, enable_backward, has_side_effect, block_dim)


def jax_callable(func, num_outputs: int = 1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max: int | None = 32, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect: bool = False):
    """A JAX function calling the annotated Python function ``func`` (Warp's
    ``jax_callable``; see ``adjit.jax.JaxCallable``). Imports JAX."""
    from . import jax as adjit_jax
    return adjit_jax.jax_callable(func, num_outputs, graph_mode, vmap_method, output_dims, in_out_argnames,
                                  stage_in_argnames, stage_out_argnames, graph_cache_max, module_preload_mode,
                                  has_side_effect)


def clear_jax_callable_graph_cache(callable=None) -> None:  # noqa: A002 (Warp's name)
    """Clears the CUDA graphs cached by ``callable`` (None: every one), as
    Warp's. adjit captures no graphs (CPU only), so there is nothing to
    clear; anything but None or a ``jax_callable`` result is a TypeError."""
    if callable is None:
        return
    import sys
    module = sys.modules.get("adjit.jax")
    if module is None or not isinstance(callable, module.JaxCallable):
        raise TypeError(f"clear_jax_callable_graph_cache takes a jax_callable result or None, got {callable!r}")
