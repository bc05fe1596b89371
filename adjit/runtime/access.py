"""How a kernel touches each array argument: the compiler's array access
analysis, as a typed record.

The bits are defined once in C++ (``adjit::ArgumentAccess`` in
cpp/include/adjit/ArrayAccessAnalysis.h); the compiler returns them per
argument and the compile cache stores them with each kernel, so the runtime
knows them without the compiler. A test checks that these values are the
compiler's.
"""
from __future__ import annotations

import enum


class Access(enum.IntFlag):
    NONE = 0
    #: Some op reads the array (a load, or an atomic whose old value is used).
    READ = 1
    #: Some op writes it (a store, a component store, an atomic).
    WRITE = 2
    #: Every access is to the calling thread's own element.
    OWN_ELEMENT = 4
    #: A float atomic min/max writes it: its adjoint reads the array as the
    #: launch left it (the tape keeps a copy).
    FLOAT_MIN_MAX = 8

    @property
    def float_min_max(self) -> bool:
        return bool(self & Access.FLOAT_MIN_MAX)

    @property
    def reads(self) -> bool:
        return bool(self & Access.READ)

    @property
    def writes(self) -> bool:
        return bool(self & Access.WRITE)
