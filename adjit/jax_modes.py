"""The enums of Warp's JAX host names (no JAX imported): see adjit.jax_names."""
import enum


class JaxModulePreloadMode(enum.IntEnum):
    """Where the kernels of a JAX callable are loaded before its first call
    (Warp's values). adjit loads them for the CPU when the call is traced,
    whichever mode is given."""

    NONE = 0
    CURRENT_DEVICE = 1
    ALL_DEVICES = 2


class JaxCallableGraphMode(enum.IntEnum):
    """CUDA graph capture modes of ``jax_callable`` (Warp's values). On the
    CPU, NONE and JAX run without capture (as in Warp); the others need CUDA."""

    NONE = 0
    JAX = 1
    WARP = 2
    WARP_STAGED = 3
    WARP_STAGED_EX = 4
