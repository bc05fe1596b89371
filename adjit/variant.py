"""Which compiled variant of a kernel a launch runs: ``VariantSpec``.

A kernel compiles to several variants: the kernel itself, its adjoint (with
one or more lanes of seeds), its tangent kernel (lanes of seed directions)
or the tangent kernel of its adjoint; each for arrays that may overlap or
not, that are strided views or not, with the run-time checks in force, with
every check kept (for launches whose proved checks do not hold), and with
float atomic adds ordered by the runtime or inline. One ``VariantSpec``
names one of them: a backend chooses it for a launch, the loader keys loaded
code and the disk cache by it, and the compiler picks its stages from it.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from . import config

#: The targets code is compiled for.
TARGETS = ("cpu", "cuda")

#: Threads a CPU kernel body runs at once as a SIMD program
#: (adjit-vectorize-threads), for variants whose arrays do not overlap:
#: ``ADJIT_SIMD_WIDTH`` (0 leaves every body scalar).
_SIMD_WIDTHS = (0, 1, 2, 4, 8, 16)


@functools.cache
def simd_width() -> int:
    """The SIMD width CPU variants are compiled with (read once)."""
    text = os.environ.get("ADJIT_SIMD_WIDTH", "8").strip()
    if not text.isdigit() or int(text) not in _SIMD_WIDTHS:
        warnings.warn(f"ADJIT_SIMD_WIDTH={text!r} is not one of {', '.join(map(str, _SIMD_WIDTHS))}; "
                      "using 8", RuntimeWarning, stacklevel=2)
        return 8
    return int(text)


class Checks(NamedTuple):
    """The run-time checks compiled into a variant."""

    #: Array indices checked against the arrays' extents (adjit-access-checks).
    bounds: bool
    #: Stored floats checked finite.
    finite: bool


def checks(kernel) -> Checks:
    """The run-time checks launches of ``kernel`` compile in now: indices in
    range (the kernel's ``bounds_check`` option, else
    ``adjit.config.bounds_check``); stored floats finite
    (``adjit.config.verify_fp`` or debug mode). (``VariantSpec.of`` spells
    this too, for speed.)"""
    return Checks(config.bounds_check if kernel.bounds_check is None else kernel.bounds_check,
                  config.verify_fp or config.mode == "debug")


@dataclass(frozen=True)
class VariantSpec:
    """One compiled variant of a kernel (see the module docstring).

    ``adjoint`` and ``tangent`` count lanes: 0 is none, 1 the adjoint (or
    tangent kernel), K > 1 the batched one with K seeds; both set: the
    tangent kernel of the adjoint (forward over reverse)."""

    #: What the code runs on: "cpu" or "cuda".
    target: str = "cpu"
    #: Lanes (seeds) of the adjoint; 0: not the adjoint.
    adjoint: int = 0
    #: Lanes (seed directions) of the tangent kernel; 0: not a tangent kernel.
    tangent: int = 0
    #: For launches whose arrays do not overlap (the launch checks).
    noalias: bool = True
    #: The run-time checks compiled in.
    checks: Checks = Checks(True, False)
    #: Every check kept: for launches whose proved checks do not hold (the
    #: runtime reports LAUNCH_UNPROVEN for the other variant).
    all_checked: bool = False
    #: Float atomic adds go through the runtime, which can apply them in
    #: thread order; else they are inline atomics (adjit.config.deterministic
    #: = False).
    ordered_atomics: bool = True
    #: Arrays may be views with any element strides (not C-contiguous).
    strided: bool = False
    #: f32 transcendental math as inline polynomial code (the kernel's
    #: ``fast_math`` module option; adjit-approximate-math), else libm calls.
    #: CPU only: CUDA variants use libdevice either way.
    fast_math: bool = True

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"VariantSpec: unknown target {self.target!r} (expected one of {TARGETS})")
        if self.target != "cpu" and self.fast_math:
            # (CUDA math is libdevice's either way; one spec per CUDA variant)
            object.__setattr__(self, "fast_math", False)
        # (lanes given as True / False are 1 / 0)
        object.__setattr__(self, "adjoint", int(self.adjoint))
        object.__setattr__(self, "tangent", int(self.tangent))
        if self.adjoint < 0 or self.tangent < 0:
            raise ValueError(f"VariantSpec: lanes must be >= 0, got adjoint={self.adjoint}, "
                             f"tangent={self.tangent}")
        object.__setattr__(self, "checks", Checks(*self.checks))
        # Launches look variants up by spec: the hash is computed once.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self))))

    def __hash__(self) -> int:
        return self._hash

    @staticmethod
    def of(kernel, adjoint: int = 0, tangent: int = 0, noalias: bool = True, strided: bool = False,
           target: str = "cpu") -> "VariantSpec":
        """The variant of ``kernel`` a launch asks for: the given kind and
        arrays, with the kernel's current checks (``checks(kernel)``) and
        ``fast_math``, ordered atomics and the proved checks. Made once per
        distinct value (a launch asks for one each time)."""
        bounds = config.bounds_check if kernel.bounds_check is None else kernel.bounds_check
        fast_math = target == "cpu" and kernel.fast_math
        key = (target, adjoint, tangent, noalias, strided, fast_math, bounds,
               config.verify_fp or config.mode == "debug")
        spec = _MADE.get(key)
        if spec is None:
            spec = _MADE[key] = VariantSpec(target, adjoint, tangent, noalias, key[-2:], strided=strided,
                                            fast_math=fast_math)
        return spec

    @property
    def simd_width(self) -> int:
        """Threads its CPU kernel bodies run at once as SIMD programs (0:
        scalar bodies): ``simd_width()`` for CPU variants whose arrays do not
        overlap."""
        width = simd_width()
        return width if self.target == "cpu" and self.noalias and width > 1 else 0

    @cached_property
    def fully_checked(self) -> "VariantSpec":
        """This variant with every check kept (``all_checked``)."""
        return dataclasses.replace(self, all_checked=True)

    @cached_property
    def inline_atomics(self) -> "VariantSpec":
        """This variant with inline float atomic adds (not ``ordered_atomics``)."""
        return dataclasses.replace(self, ordered_atomics=False)

    @property
    def kind(self) -> str:
        """What the variant computes: "forward", "backward" or "tangent"."""
        return "tangent" if self.tangent else "backward" if self.adjoint else "forward"

    def cache_options(self) -> dict:
        """The compile options of this variant as cache keys hold them (the
        loader adds the optimization level and the kernel's ``no_grad``).
        Their spelling is part of every on-disk key: change it only with
        ``cache.CACHE_FORMAT``."""
        options = {"target": self.target, "adjoint": bool(self.adjoint), "tangent": self.tangent,
                   "noalias": self.noalias, "bounds_check": self.checks.bounds,
                   "verify_fp": self.checks.finite, "all_checked": self.all_checked,
                   "ordered_atomics": self.ordered_atomics}
        if self.adjoint > 1:
            options["adjoint_lanes"] = self.adjoint
        if self.strided:
            options["strided_arrays"] = True
        if self.fast_math:  # (absent: libm calls, as every entry before fast_math)
            options["fast_math"] = True
        return options


#: VariantSpec.of's specs, by what they were made from.
_MADE: dict[tuple, VariantSpec] = {}
