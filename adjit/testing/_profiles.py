"""Hypothesis settings of the gradient fuzzer: a fixed, derandomized budget
for CI, and a longer randomized run (``ADJIT_FUZZ_PROFILE=long``)."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: profile -> (examples as a multiple of a test's CI budget, derandomize);
#: the CI budget is sized for about two and a half minutes in total on a
#: 2-core machine (docs/testing.md).
PROFILES = {
    "ci": (1, True),
    "long": (10, False),
}


def profile_name() -> str:
    name = os.environ.get("ADJIT_FUZZ_PROFILE", "ci")
    if name not in PROFILES:
        raise ValueError(f"ADJIT_FUZZ_PROFILE={name!r}: expected one of {', '.join(PROFILES)}")
    return name


def fuzz_settings(ci_examples: int, profile: str | None = None, **overrides) -> settings:
    """Settings for one fuzz test: ``ci_examples`` valid examples with a fixed
    seed in the ``ci`` profile; many more, freshly random (and replaying
    earlier failures from Hypothesis' example database) in ``long``."""
    name = profile or profile_name()
    scale, derandomize = PROFILES[name]
    options = dict(
        max_examples=scale * ci_examples,
        derandomize=derandomize,
        deadline=None,  # compile times vary; the budget is the number of examples
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
    if derandomize:
        options["database"] = None  # a fixed run: no replay of examples saved by other runs
    options.update(overrides)
    return settings(**options)
