"""The fuzzer's generated programs are modules of adjit._generated (see there)."""
from __future__ import annotations

from .._generated import load_module as _load_module, unload_module, write_source  # noqa: F401


def load_module(source: str, stem: str = "adjit_fuzz_program"):
    return _load_module(source, stem)
