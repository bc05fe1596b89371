"""The CPU backend: which variant of a kernel a launch runs, how the runtime
runs it, and what a failed check means.

``adjit.launch`` hands it a ``PackedLaunch`` (arguments checked and packed).
``prepare`` chooses the variant: for arrays that overlap or not, that are
strided views or not (``VariantSpec``), loaded by ``adjit.loader``. ``run``
calls ``_runtime.launch_cpu``, ordering the kernel's float atomics (run
ordered in parallel, or serially: whichever has been faster), runs the
all-checked variant where the launch condition (its proved checks) does not
hold, and turns the first failed check into an ``OutOfBoundsError`` or
``NonFiniteError``.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from .. import _runtime, config, loader, timing
from .. import types as T
from ..runtime.array import Array
from ..variant import VariantSpec
from .base import Backend, PackedLaunch, check_failed

_PARALLEL, _ORDERED, _SERIAL = (_runtime.ATOMIC_ORDERS[o] for o in ("parallel", "ordered", "serial"))
#: Launches of an ordered kernel with fewer threads run serially.
_ORDERED_MIN_THREADS = 1 << 16
#: An ordered kernel is timed again in the order it does not prefer every
#: this many launches times how much slower that order was, to follow
#: changes in its launches and in the machine.
_REPROBE_EVERY = 32


class CpuBackend(Backend):
    """Runs launches on this CPU's thread pool (``adjit._runtime``)."""

    target = "cpu"

    def prepare(self, launch: PackedLaunch) -> None:
        k, args = launch.kernel, launch.args
        # Arrays that overlap (the same array twice, or views of one buffer)
        # get the variant compiled without the no-overlap promise. (A kernel's
        # single array overlaps nothing; adjoints and tangent kernels have more.)
        if launch.adjoint or launch.tangent or k.array_args > 1:
            noalias = not _runtime.arrays_overlap(args)
        else:
            noalias = True
        loader.prepared_variant(launch, (launch.adjoint, launch.tangent, noalias, _strided(args)), self._choose)

    @staticmethod
    def _choose(launch: PackedLaunch, key: tuple) -> tuple:
        spec = VariantSpec.of(launch.kernel, *key)  # (adjoint, tangent, noalias, strided)
        return spec, loader.launch_variant(launch.kernel, spec)

    def run(self, launch: PackedLaunch) -> None:
        variant, noalias = launch.variant, launch.spec.noalias
        ranges = _index_ranges(variant, launch.primal, not noalias) if variant.ranged else []
        failure = _run(variant, launch.total, launch.shape, launch.args, ranges, noalias)
        if failure is None:
            return
        if failure == _runtime.LAUNCH_UNPROVEN:
            # Nothing ran: the kernel's all-checked variant runs instead.
            launch.spec = launch.spec.fully_checked
            launch.variant = variant = loader.launch_variant(launch.kernel, launch.spec)
            failure = _run(variant, launch.total, launch.shape, launch.args, [], noalias)
            if failure is None:
                return
        raise check_failed(launch, variant, failure)


#: The backend of CPU launches.
BACKEND = CpuBackend()

#: Value parameters a launch plan packs.
_PLAN_VALUES = frozenset(("float32", "float64", "int32", "int64", "bool"))


def launch_plan(launch: PackedLaunch):
    """A ``_runtime.LaunchPlan`` that runs later launches like ``launch`` (a
    forward launch that just ran here) in one call: the same variant, with
    arguments of the same kinds (arrays of the same dtype and rank, C-contiguous
    and writable, not overlapping; float, int or bool values). None where the
    plan would not be the general path's choice: adjoint and tangent
    launches, overlapping or strided arrays, a variant with index ranges to
    measure or one that prints (serial), other argument types. Returns the
    plan and its argument kinds: the caller keeps both, and
    ``launch.variant`` (the code), alive while it uses the plan."""
    k, spec, variant = launch.kernel, launch.spec, launch.variant
    if launch.adjoint or launch.tangent or not spec.noalias or spec.strided or spec.all_checked \
            or variant.ranged or variant.atomic_order == _SERIAL or len(k.arg_types) != len(launch.primal):
        return None
    written = set(loader.written_arguments(k))
    params = []
    for position, (t, value, packed) in enumerate(zip(k.arg_types, launch.primal, launch.args)):
        if type(t) is T.ArrayType:
            if type(value) is not Array or type(packed) is not np.ndarray or packed is not value._buffer \
                    or packed.dtype.kind == "V":
                return None
            params.append(("array", value.dtype, memoryview(packed).format, packed.ndim, position in written))
        elif type(t) is T.ScalarType and t.name in _PLAN_VALUES:
            params.append((t.name,))
        else:
            return None
    return _runtime.LaunchPlan(variant.entry, variant.atomic_order, Array, np.ndarray, params), params


def _strided(packed: list) -> bool:
    """Whether an array argument is a strided view (not C-contiguous): the
    launch then runs the variant whose arrays have dynamic strides."""
    for a in packed:  # (a loop: cheaper than any() over a generator)
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
            return True
    return False


def _index_ranges(variant, args: list, overlap: bool) -> list[int]:
    """(min, max) of each index array the variant proves gathers through
    (flattened; ``args``: the kernel's arguments). With overlapping arrays a
    write could change an index array during the launch: (-1, -1) makes the
    proof fail (the all-checked variant runs)."""
    out = []
    for position in variant.ranged:
        out.extend((-1, -1) if overlap else args[position]._value_range())
    return out


def _run(variant, total: int, shape, args: list, ranges: list, noalias: bool):
    """Runs a loaded variant (``_runtime.launch_cpu``), its float atomics
    ordered as ``_atomic_order`` says; returns what the runtime reports.
    Between ``adjit.timing_begin()`` and ``timing_end()``, each launch that
    completes is recorded with its time (CPU launches are synchronous)."""
    if not timing.recording():
        return _run_variant(variant, total, shape, args, ranges, noalias)
    start = time.perf_counter()
    failure = _run_variant(variant, total, shape, args, ranges, noalias)
    if failure is None:
        timing.record(variant.name, (time.perf_counter() - start) * 1e3)
    return failure


def _run_variant(variant, total: int, shape, args: list, ranges: list, noalias: bool):
    order = _atomic_order(variant, noalias, total)
    if variant.atomic_order == _SERIAL:
        sys.stdout.flush()  # a kernel that prints (serial) comes after Python's earlier output
    if order == _PARALLEL or variant.atomic_order != _ORDERED or total < _ORDERED_MIN_THREADS:
        return _runtime.launch_cpu(variant.entry, total, shape, args, ranges, order)
    start = time.perf_counter()
    failure = _runtime.launch_cpu(variant.entry, total, shape, args, ranges, order)
    seconds = (time.perf_counter() - start) / total
    past = variant.seconds_per_thread.get(order)
    variant.seconds_per_thread[order] = seconds if past is None else (past + seconds) / 2
    return failure


def _atomic_order(variant, noalias: bool, total: int) -> int:
    """How the launch orders the kernel's float atomics: as the compiler
    decided (adjit-atomic-order); with ``config.deterministic = False``, as
    they come. An "ordered" kernel runs in one thread where arrays overlap
    (its adds may then reach memory it reads). Otherwise it may run either
    ordered (in parallel, its adds logged and applied in thread order) or
    serial (one thread, adding directly): both give the same bits, so the
    launch takes the one that has been faster per thread for this kernel
    (serial for small launches and on one core), timing both at first and
    the slower one again now and then."""
    if not config.deterministic:
        return _PARALLEL
    if variant.atomic_order != _ORDERED:
        return variant.atomic_order
    if not noalias or total < _ORDERED_MIN_THREADS or _runtime.num_threads() == 1:
        return _SERIAL
    times = variant.seconds_per_thread
    variant.timed_launches += 1
    for order in (_ORDERED, _SERIAL):
        if order not in times:
            return order
    faster, slower = (_ORDERED, _SERIAL) if times[_ORDERED] <= times[_SERIAL] else (_SERIAL, _ORDERED)
    # The slower the other order, the rarer its probes: they cost about
    # 1 / _REPROBE_EVERY of a launch.
    every = _REPROBE_EVERY * max(1, round(times[slower] / times[faster]))
    return slower if variant.timed_launches % every == 0 else faster
