"""A kernel's compiled code: found in this process, in the disk cache, or made
by the compiler, then loaded by the runtime.

The compiler (and with it MLIR) is imported only when the cache has no entry
for a kernel, so a machine with the runtime alone runs every kernel that was
compiled beforehand for its CPU (``export``) and says which one is missing.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from . import _runtime, cache, config, language
from ._interrupts import exit_waits_for_this
from .errors import CompileError, GradientError
from .language import Kernel
from .runtime.access import Access
from .variant import Checks, VariantSpec, checks

log = logging.getLogger("adjit.cache")

#: LLVM optimization level of CPU kernels.
CPU_OPT_LEVEL = 3


@dataclass
class CpuVariant:
    """A kernel (or its adjoint, or its tangent kernel) loaded into this process for the CPU."""

    #: Address of the entry (the ABI of cpp/runtime/CpuLaunch.h).
    entry: int
    #: Whether its code came from the disk cache rather than the compiler.
    from_cache: bool
    #: Its checked array accesses, by site number (see
    #: compiler.driver.CpuObject.sites); empty without bounds checks.
    sites: list
    #: Positions of the index arrays whose (min, max) a launch passes in.
    ranged: tuple = ()
    #: How its launches order float atomics (a value of
    #: _runtime.ATOMIC_ORDERS; see adjit-atomic-order).
    atomic_order: int = 0
    #: Seconds per thread of its recent launches, by atomic order (an
    #: "ordered" kernel may run "serial": the same result; see launch.py).
    seconds_per_thread: dict = field(default_factory=dict)
    #: Its launches that chose between orders so far.
    timed_launches: int = 0
    #: The name its launches have in ``adjit.timing_end()`` results.
    name: str = ""
    #: What it was compiled from (cache.KernelDigest): a recorded launch's
    #: adjoint must come from the same sources and constants.
    digest: object = None
    #: Which variant of the kernel it is.
    spec: VariantSpec | None = None
    #: The loaded object its code lives in (unmapped with the last variant holding it).
    image: object = None


@dataclass
class CudaVariant:
    """A kernel (or its adjoint, or its tangent kernel) loaded on one CUDA device."""

    #: The loaded kernel (``_runtime.cuda.Function``).
    function: object
    #: Whether its PTX came from the disk cache rather than the compiler.
    from_cache: bool
    #: As ``CpuVariant``'s.
    sites: list
    ranged: tuple = ()
    name: str = ""
    digest: object = None
    spec: VariantSpec | None = None
    #: The architecture its PTX is for ("sm_90").
    arch: str = ""
    #: (size, alignment) of each parameter of its PTX entry.
    layout: list = field(default_factory=list)
    #: Whether it adds floats atomically (the GPU's order: not deterministic yet).
    float_atomics: bool = False
    #: How its launches' parameters are packed (backends/cuda.py's _Plan, made at its first launch).
    plan: object = None


class _Loaded:
    """What is known of one kernel's compiled code in this process."""

    def __init__(self):
        self.variants: dict[VariantSpec, CpuVariant] = {}
        #: Variants loaded on CUDA devices, by (spec, device alias).
        self.cuda_variants: dict[tuple[VariantSpec, str], CudaVariant] = {}
        self.access: list[Access] | None = None
        # What the loaded variants were compiled from (all the same), and the
        # language.definitions count when that was last checked.
        self.digest: cache.KernelDigest | None = None
        self.generation = -1
        # Positions of the arguments the kernel writes (the launch's fast path).
        self.written: tuple[int, ...] | None = None
        #: A lock per variant being loaded (spec, or (spec, device alias)):
        #: threads launching a kernel first at once wait for one compile.
        self.loading: dict = {}


_LOADED: "weakref.WeakKeyDictionary[Kernel, _Loaded]" = weakref.WeakKeyDictionary()
#: Guards _LOADED and each state's ``loading`` (held only to look them up).
_STATE_LOCK = threading.Lock()


def _loaded(kernel: Kernel) -> _Loaded:
    state = _LOADED.get(kernel)
    if state is None:
        with _STATE_LOCK:  # (two threads making a kernel's state would each keep variants the other loses)
            state = _LOADED.get(kernel)
            if state is None:
                state = _LOADED[kernel] = _Loaded()
    return state


def _loading(state: _Loaded, key) -> threading.RLock:
    """The lock held while the variant ``key`` of a kernel is loaded: compiles
    run without the GIL, so without it every thread launching a kernel for
    the first time at once compiled it again."""
    with _STATE_LOCK:
        lock = state.loading.get(key)
        if lock is None:
            lock = state.loading[key] = threading.RLock()
        return lock


def loaded_variants(kernel: Kernel) -> dict[tuple[int, bool], CpuVariant]:
    """The variants of ``kernel`` loaded so far for its current checks, by
    (adjoint, noalias) (tangent kernels, all-checked, inline-atomics and
    strided variants not included)."""
    current = checks(kernel)
    return {(s.adjoint, s.noalias): v for s, v in _loaded(kernel).variants.items()
            if s.checks == current and not s.all_checked and s.ordered_atomics and not s.tangent
            and not s.strided}


def argument_access(kernel: Kernel, device=None) -> list[Access]:
    """How ``kernel`` touches each argument (the compiler's array access
    analysis; loads the kernel if needed: on a CUDA ``device`` its forward
    variant there, whose cache entry carries the analysis, so a machine
    with the runtime alone and the kernel's PTX exported needs no CPU
    code)."""
    state = _loaded(kernel)
    if state.access is None and device is not None and getattr(device, "is_cuda", False):
        load_cuda_variant(kernel, VariantSpec.of(kernel, target="cuda"), device)
        state = _loaded(kernel)
    if state.access is None:
        cpu_variant(kernel)
    return state.access


def written_arguments(kernel: Kernel) -> tuple[int, ...]:
    """The positions of the arguments ``kernel`` writes (loads it if needed)."""
    state = _loaded(kernel)
    if state.written is None:
        state.written = tuple(i for i, a in enumerate(argument_access(kernel)) if a.writes)
    return state.written


def cpu_variant(kernel: Kernel, adjoint: int = False, noalias: bool = True,
                all_checked: bool = False, tangent: int = 0, strided: bool = False) -> CpuVariant:
    """The kernel or its adjoint, or with ``tangent`` lanes the forward-mode
    tangent kernel (adjit-tangent) of either, as a CPU launch with these
    properties runs it (``launch_variant``). ``noalias``: the variant for
    launches whose arrays do not overlap (faster; the launch checks).
    ``strided``: the variant for launches with an array that is a strided
    view (dynamic element strides). ``all_checked``: the variant for
    launches whose bounds checks could not be proved once for the launch
    (the launch asks for it: ``_runtime.LAUNCH_UNPROVEN``)."""
    spec = VariantSpec.of(kernel, adjoint, tangent, noalias, strided)
    return launch_variant(kernel, spec.fully_checked if all_checked else spec)


def launch_variant(kernel: Kernel, spec: VariantSpec) -> CpuVariant:
    """The code a CPU launch asking for ``spec`` runs: that variant, except
    that with ``adjit.config.deterministic = False`` a kernel with float
    atomic adds gets its twin whose atomics are inline (not through the
    runtime, which orders them)."""
    variant = load_variant(kernel, spec)
    if config.deterministic or variant.atomic_order == _PARALLEL:
        return variant
    return load_variant(kernel, spec.inline_atomics)


_PARALLEL = _runtime.ATOMIC_ORDERS["parallel"]


def _current_state(kernel: Kernel) -> "_Loaded":
    """What is loaded of ``kernel``, its variants dropped first if a
    definition since changed what it compiles to."""
    state = _loaded(kernel)
    if state.generation != language.definitions:
        _check_sources(kernel, state)
    return state


def _digest_now(kernel: Kernel, state: "_Loaded") -> cache.KernelDigest:
    """The kernel's digest as its sources and constants are now (a variant
    about to be loaded is keyed by it); variants of another digest are dropped."""
    digest = cache.kernel_digest(kernel.pyfunc, kernel.param_types)
    if state.digest is not None and digest != state.digest:
        _forget_variants(kernel, state, digest)
    state.digest = digest
    return digest


def load_variant(kernel: Kernel, spec: VariantSpec) -> CpuVariant:
    """The variant ``spec`` of ``kernel`` loaded for the CPU: once per
    process, from the disk cache where it is there, else compiled."""
    state = _current_state(kernel)
    variant = state.variants.get(spec)
    if variant is not None:
        return variant
    with _loading(state, spec):
        variant = state.variants.get(spec)  # loaded by another thread meanwhile
        if variant is not None:
            return variant
        return _load_variant(kernel, state, spec)


def _load_variant(kernel: Kernel, state: "_Loaded", spec: VariantSpec) -> CpuVariant:
    variant = None
    digest = _digest_now(kernel, state)
    parts = _key_parts(kernel, spec, digest)
    if os.environ.get("ADJIT_DUMP_DIR"):
        # The stages exist only while compiling: dumping them means compiling.
        log.info("compiling %s: ADJIT_DUMP_DIR is set", kernel.pyfunc.__qualname__)
        entry = None
    else:
        entry = cache.load(kernel.pyfunc, parts)
    if entry is not None:
        try:
            variant = _from_entry(kernel, spec, *entry)
        except _DamagedEntry as e:
            # A checksum catches accidents, not every bad entry: one that does
            # not parse or load is deleted and rebuilt, never trusted.
            log.warning("compiling %s: the cache entry %s is damaged (%s); rebuilding it",
                        kernel.pyfunc.__qualname__, cache.entry_path(parts), e)
            cache.discard(parts)
    if variant is None:
        compiled = _compiler(kernel).compile_cpu_object(kernel, spec, CPU_OPT_LEVEL)
        cache.store(kernel.pyfunc, parts, compiled.code, _entry_metadata(kernel, compiled))
        try:
            address, image = _load(kernel, compiled.code, compiled.entry)
        except _DamagedEntry as e:
            raise CompileError(f"kernel '{kernel.__name__}': the compiled code does not load ({e}); "
                               "this is a bug in adjit") from None
        if not spec.adjoint:
            state.access = compiled.access
        variant = CpuVariant(address, False, compiled.sites, tuple(compiled.ranged),
                             _runtime.ATOMIC_ORDERS[compiled.atomic_order], image=image)
    return _keep(kernel, state, spec, variant, digest)


def load_cuda_variant(kernel: Kernel, spec: VariantSpec, device) -> CudaVariant:
    """The variant ``spec`` (target "cuda") of ``kernel`` loaded on the CUDA
    ``device``: its PTX for the device's architecture from the disk cache
    where it is there, else compiled; loaded once per device."""
    state = _current_state(kernel)
    variant = state.cuda_variants.get((spec, device.alias))
    if variant is not None:
        return variant
    with _loading(state, (spec, device.alias)):
        variant = state.cuda_variants.get((spec, device.alias))  # loaded by another thread meanwhile
        if variant is not None:
            return variant
        return _load_cuda_variant(kernel, state, spec, device)


def _load_cuda_variant(kernel: Kernel, state: "_Loaded", spec: VariantSpec, device) -> CudaVariant:
    digest = _digest_now(kernel, state)
    arch = f"sm_{device.arch}"
    parts = _key_parts(kernel, spec, digest, arch)
    entry = None if os.environ.get("ADJIT_DUMP_DIR") else cache.load(kernel.pyfunc, parts)
    metadata, from_cache = None, False
    if entry is not None:
        ptx, metadata = entry
        try:
            _check_metadata(kernel, spec, metadata)
            from_cache = True
        except _DamagedEntry as e:
            log.warning("compiling %s: the cache entry %s is damaged (%s); rebuilding it",
                        kernel.pyfunc.__qualname__, cache.entry_path(parts), e)
            cache.discard(parts)
            metadata = None
    if metadata is None:
        compiled = _compiler(kernel, arch).compile_cuda_code(kernel, spec, arch)
        ptx, metadata = compiled.ptx.encode(), _cuda_metadata(kernel, compiled)
        cache.store(kernel.pyfunc, parts, ptx, metadata)
    from .runtime import cuda
    label = f"{kernel.__name__} ({kernel.source.filename}:{kernel.source.first_line})"
    module = cuda.load_module(device, (parts.key(),), ptx, label)
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    layout = cuda.ptx_parameters(text)
    if not spec.adjoint and "access" in metadata:
        state.access = [Access(b) for b in metadata["access"]]
    sites = _rebased_sites(kernel, metadata["sites"], metadata.get("origins")) if from_cache else metadata["sites"]
    variant = CudaVariant(module.function(metadata["entry"]), from_cache, sites,
                          tuple(metadata["ranged"]), f"{kernel.__name__}_cuda_kernel_{spec.kind}", digest,
                          spec, arch, layout, bool(_FLOAT_ATOMIC_ADD.search(text)))
    state.cuda_variants[spec, device.alias] = variant
    return variant


#: A float atomic add in PTX (``atom.global.add.f32``, ``red.global.add.f64``, ...).
_FLOAT_ATOMIC_ADD = re.compile(r"\b(?:atom|red)(?:\.\w+)*\.add(?:\.\w+)*\.b?f(?:16|32|64)(?:x2)?\b")


def _cuda_metadata(kernel: Kernel, compiled) -> dict:
    """What a CUDA cache entry records beside the PTX (read back by load_cuda_variant)."""
    metadata = {"entry": compiled.entry, "sites": compiled.sites, "ranged": compiled.ranged,
                "origins": _source_origins(kernel)}
    if compiled.access is not None:
        metadata["access"] = [int(a) for a in compiled.access]
    return metadata


def _check_metadata(kernel: Kernel, spec: VariantSpec, metadata: dict) -> list[Access] | None:
    """Checks what an entry (CPU or CUDA) records beside its code; returns
    its access analysis (None for an adjoint). _DamagedEntry otherwise."""
    symbol = metadata.get("entry")
    if not isinstance(symbol, str) or not symbol:
        raise _DamagedEntry("no entry symbol in its metadata")
    access = None
    if not spec.adjoint:
        bits = metadata.get("access")
        if not isinstance(bits, list) or len(bits) != len(kernel.arg_names) or not all(
                type(b) is int and 0 <= b <= _ALL_ACCESS for b in bits):
            raise _DamagedEntry("its array access metadata is malformed")
        access = [Access(b) for b in bits]
    sites = metadata.get("sites")
    if not isinstance(sites, list) or not all(_valid_site(site) for site in sites):
        raise _DamagedEntry("its check sites are malformed")
    origins = metadata.get("origins", [])
    if not isinstance(origins, list) or not all(
            isinstance(o, list) and len(o) == 3 and type(o[0]) is str and type(o[1]) is int and type(o[2]) is int
            for o in origins):
        raise _DamagedEntry("its source origins are malformed")
    ranged = metadata.get("ranged")
    # (an adjoint's arguments are the kernel's followed by their gradients, a
    # tangent kernel's by the tangents of its float arguments, once per lane)
    if not isinstance(ranged, list) or len(ranged) > 4 or not all(
            type(p) is int and 0 <= p < len(kernel.arg_names) for p in ranged):
        raise _DamagedEntry("its index range arguments are malformed")
    return access


def _keep(kernel: Kernel, state: "_Loaded", spec: VariantSpec, variant: CpuVariant,
          digest: cache.KernelDigest) -> CpuVariant:
    """Names a loaded variant and keeps it for the next launches of ``spec``."""
    variant.name = f"{kernel.__name__}_cpu_kernel_{spec.kind}"
    variant.digest = digest
    variant.spec = spec
    state.variants[spec] = variant
    return variant


_ALL_ACCESS = int(Access.READ | Access.WRITE | Access.OWN_ELEMENT | Access.FLOAT_MIN_MAX)


class _DamagedEntry(Exception):
    """A cache entry (or object code) that does not parse or load."""


def _entry_metadata(kernel: Kernel, compiled) -> dict:
    """What a cache entry records beside the code (read back by _from_entry)."""
    metadata = {"entry": compiled.entry, "sites": compiled.sites, "ranged": compiled.ranged,
                "atomic_order": compiled.atomic_order, "origins": _source_origins(kernel)}
    if compiled.access is not None:
        metadata["access"] = [int(a) for a in compiled.access]
    return metadata


def _from_entry(kernel: Kernel, spec: VariantSpec, code: bytes, metadata: dict) -> CpuVariant:
    """Loads a cache entry of the variant ``spec``, checking its metadata first."""
    access = _check_metadata(kernel, spec, metadata)
    symbol, ranged = metadata["entry"], metadata["ranged"]
    sites = _rebased_sites(kernel, metadata["sites"], metadata.get("origins"))
    atomic_order = metadata.get("atomic_order")
    if atomic_order not in _runtime.ATOMIC_ORDERS:
        raise _DamagedEntry("its atomic order is malformed")
    address, image = _load(kernel, code, symbol)
    variant = CpuVariant(address, True, sites, tuple(ranged), _runtime.ATOMIC_ORDERS[atomic_order], image=image)
    if access is not None:
        _loaded(kernel).access = access
    return variant


def _source_origins(kernel: Kernel) -> list:
    """Where the sources an entry is compiled from lie: [file, first line,
    line count] of the kernel and of each device function it reaches, in the
    order the cache key reads them. The key holds their text, not where it
    is: an identical kernel in another file, or the same kernel moved by an
    edit above it, loads the entry, and its check sites are rebased to where
    the sources are now (``_rebased_sites``)."""
    from .source import SourceInfo
    seen: dict = {}
    cache._dependencies(kernel.pyfunc, seen)
    return [[info.filename, info.first_line, len(info.lines)] for info in map(SourceInfo.of, seen)]


def _rebased_sites(kernel: Kernel, sites: list, origins: list | None) -> list:
    """A cache entry's check sites, moved from where its sources were when
    it was compiled (``origins``) to where they are now: errors name this
    kernel's file and line, not the ones of the identical kernel that filled
    the entry. (Entries written before origins were recorded keep theirs.)"""
    if not origins:
        return sites
    now = _source_origins(kernel)
    if len(now) != len(origins) or now == origins:
        return sites
    rebased = []
    for site in sites:
        for (file, first, count), (new_file, new_first, _) in zip(origins, now):
            if site["file"] == file and first <= site["line"] < first + count:
                site = {**site, "file": new_file, "line": site["line"] - first + new_first}
                break
        rebased.append(site)
    return rebased


_SITE_FIELDS = {"file": str, "line": int, "array": str, "access": str, "rank": int}


def _valid_site(site) -> bool:
    return isinstance(site, dict) and site.keys() == _SITE_FIELDS.keys() and all(
        type(site[k]) is t for k, t in _SITE_FIELDS.items()) and 1 <= site["rank"] <= 4


def compile_options(kernel: Kernel, spec: VariantSpec, arch: str | None = None) -> dict:
    """Everything a variant's code depends on beside the kernel's sources:
    what its cache key holds (a CUDA variant's: with its ``arch``)."""
    options = {**spec.cache_options(), "opt_level": CPU_OPT_LEVEL, "no_grad": list(kernel.no_grad)}
    if spec.target == "cuda":
        if arch is None:
            raise ValueError("compile_options: a CUDA variant's key needs its arch")
        options["arch"] = arch
    elif spec.simd_width:
        options["simd_width"] = spec.simd_width
    return options


def _key_parts(kernel: Kernel, spec: VariantSpec, digest: cache.KernelDigest | None = None,
               arch: str | None = None) -> cache.KeyParts:
    """The cache key of one variant. The digest is recomputed for each (unless
    given): the globals a kernel reads may have changed since its other
    variants were compiled, and the key must describe what is compiled now."""
    return cache.key_parts(digest or cache.kernel_digest(kernel.pyfunc, kernel.param_types),
                           compile_options(kernel, spec, arch))


def _check_sources(kernel: Kernel, state: _Loaded) -> None:
    """A @func, @kernel, func_grad or func_jvp was defined since ``state`` was
    last checked: if it changed what the kernel compiles to (a redefined
    function it calls, as in a notebook), its loaded variants are dropped and
    compile again on use (Warp rebuilds a module whose functions change)."""
    state.generation = language.definitions
    if state.digest is None or not (state.variants or state.cuda_variants):
        return
    digest = cache.kernel_digest(kernel.pyfunc, kernel.param_types)
    if digest != state.digest:
        _forget_variants(kernel, state, digest)


#: Counts the times a kernel's loaded variants were dropped (launches keep
#: the variants they chose while it, the definitions and the settings stay:
#: ``prepared_variant``).
forgotten: int = 0


def prepared_variant(launch, key: tuple, choose) -> None:
    """Sets ``launch.spec`` and ``.variant`` (a ``PackedLaunch``) as
    ``Backend.prepare`` chose them for a launch of its kernel asking for
    ``key`` (what it reads from the launch: lanes, overlapping or strided
    arrays, device):
    ``choose(launch, key)``'s (spec, variant) at the first such launch, kept
    on the kernel until a definition, a setting, the kernel's own
    ``bounds_check`` or its loaded code changes (``language.definitions``,
    ``config.epoch``, ``forgotten``: what ``VariantSpec.of`` and the
    loader read besides the launch); later launches skip the variant lookup."""
    kernel = launch.kernel
    kept = kernel._prepared
    stamp = (language.definitions, config.epoch, forgotten, kernel.bounds_check)
    if kept is None or kept[0] != stamp:
        kept = kernel._prepared = (stamp, {})
    chosen = kept[1].get(key)
    if chosen is None:
        chosen = kept[1][key] = choose(launch, key)
    launch.spec, launch.variant = chosen


def _forget_variants(kernel: Kernel, state: _Loaded, digest: cache.KernelDigest) -> None:
    global forgotten
    forgotten += 1
    log.info("compiling %s again: %s since it was loaded", kernel.pyfunc.__qualname__,
             cache.describe_change(state.digest, digest))
    state.variants.clear()
    state.cuda_variants.clear()
    state.access = state.written = None
    state.digest = digest


#: Loaded objects by (code digest, entry symbol): identical code (a kernel
#: redefined as it was, in a notebook or a factory) shares one mapping, which
#: is unmapped when no variant holds it any more.
_IMAGES: "weakref.WeakValueDictionary[tuple, object]" = weakref.WeakValueDictionary()
_IMAGES_LOCK = threading.Lock()


def _load(kernel: Kernel, code: bytes, symbol: str) -> tuple[int, object]:
    """Loads object code into the process (or finds it loaded): its entry's
    address and the image keeping it mapped (None where LLVM's JIT loads it,
    for the process lifetime); _DamagedEntry if it does not load."""
    if not _runtime.object_loader_supported():
        # (LLVM's JIT: hosts other than x86-64 trust the checksum alone.)
        return _compiler(kernel).load_with_jit(code, [symbol])[0], None
    key = (hashlib.sha256(code).digest(), symbol)
    with _IMAGES_LOCK:
        image = _IMAGES.get(key)
        if image is None:
            try:
                image = _runtime.ObjectImage(code, [symbol])
            except RuntimeError as e:
                raise _DamagedEntry(str(e)) from None
            _IMAGES[key] = image
    return image.addresses[0], image


def _compiler(kernel: Kernel, arch: str | None = None):
    """The compiler driver; a clear error where it is not installed."""
    try:
        with exit_waits_for_this():
            from .compiler import driver
    except ImportError as e:
        raise CompileError(
            f"kernel '{kernel.__name__}' ({kernel.source.filename}:{kernel.source.first_line}) is not "
            f"precompiled for {'CUDA ' + arch if arch else 'this CPU'} in the kernel cache "
            f"({cache.cache_dir()}), and the compiler is "
            f"not installed here ({e}). Install the full adjit (`pip install adjit`), or compile the "
            "kernel on a machine that has it with adjit.export([kernels], folder) and point "
            "ADJIT_CACHE_DIR at that folder here.") from None
    return driver


def export(kernels, path, adjoint: bool = True, targets=("cpu",)) -> Path:
    """Compiles ``kernels`` into the folder ``path`` for each of ``targets``:
    "cpu" (this CPU) and CUDA architectures ("sm_90"); every variant a
    launch may need (and, with ``adjoint``, their adjoints, for the kernels
    that have one; for CUDA, also the tangent kernels ``adjit.jvp`` runs). A machine with the runtime alone (and this CPU, for
    "cpu"; a GPU of that architecture, for "sm_NN") runs them with
    ``ADJIT_CACHE_DIR=path`` (or ``adjit.config.cache_dir``). Writes a
    manifest, ``adjit-export.json``; returns the folder."""
    path = Path(path)
    targets = [targets] if isinstance(targets, str) else list(targets)
    for target in targets:
        if target != "cpu" and not re.fullmatch(r"sm_\d+a?", str(target)):
            raise ValueError(f"export: targets are 'cpu' and CUDA architectures such as 'sm_90', got {target!r}")
    manifest = {"target": cache.target_id(), "targets": targets, "kernels": []}
    for kernel in kernels:
        if not isinstance(kernel, Kernel):
            raise TypeError(f"export() takes @adjit.kernel objects, got {kernel!r}")
        record = {"kernel": kernel.key, "file": kernel.source.filename, "adjoint": adjoint}
        tangents = True
        for specs in exported_specs(kernel, adjoint):
            try:
                for spec in specs:
                    if "cpu" in targets:
                        ordered = _export_variant(kernel, path, spec)
                        if ordered.atomic_order != "parallel":
                            # (for launches with adjit.config.deterministic = False)
                            _export_variant(kernel, path, spec.inline_atomics)
                    if not spec.all_checked:  # (the GPU code carries both versions of its checks)
                        for arch in targets:
                            if arch != "cpu":
                                cuda_spec = dataclasses.replace(spec, target="cuda")
                                _export_cuda_variant(kernel, path, cuda_spec, arch)
                                # (views with strides: the CPU exports no strided variant yet)
                                _export_cuda_variant(kernel, path, dataclasses.replace(cuda_spec, strided=True), arch)
                                if not spec.adjoint and tangents:  # (adjit.jvp on the GPU)
                                    try:
                                        _export_cuda_variant(kernel, path, dataclasses.replace(cuda_spec, tangent=1),
                                                             arch)
                                    except GradientError:
                                        tangents = False
            except GradientError as e:
                record["adjoint"] = False
                record["no_adjoint_because"] = str(e)
                break
        manifest["kernels"].append(record)
    path.mkdir(parents=True, exist_ok=True)
    (path / "adjit-export.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def _export_cuda_variant(kernel: Kernel, path: Path, spec: VariantSpec, arch: str) -> None:
    compiled = _compiler(kernel, arch).compile_cuda_code(kernel, spec, arch)
    cache.store(kernel.pyfunc, _key_parts(kernel, spec, arch=arch), compiled.ptx.encode(),
                _cuda_metadata(kernel, compiled), directory=path)


def exported_specs(kernel: Kernel, adjoint: bool) -> list[list[VariantSpec]]:
    """The variants ``export`` writes for ``kernel`` (those a launch may ask
    for, with ordered atomics; each also with inline atomics where those
    differ): the kernel's, then with ``adjoint`` its adjoint's, each for
    arrays that overlap or not and, with bounds checks on, also for launches
    whose checks cannot be proved once for the launch (all_checked)."""
    checked: Checks = checks(kernel)
    return [[VariantSpec(adjoint=adj, noalias=noalias, checks=checked, all_checked=all_checked,
                         fast_math=kernel.fast_math)
             for noalias in (True, False) for all_checked in ((False, True) if checked.bounds else (False,))]
            for adj in ((0, 1) if adjoint else (0,))]


def _export_variant(kernel: Kernel, path: Path, spec: VariantSpec):
    compiled = _compiler(kernel).compile_cpu_object(kernel, spec, CPU_OPT_LEVEL)
    cache.store(kernel.pyfunc, _key_parts(kernel, spec), compiled.code, _entry_metadata(kernel, compiled),
                directory=path)
    return compiled


def _load_options(device, block_dim, max_workers, what: str) -> list:
    """Checks Warp's load options; returns the CUDA devices named (their
    kernels load there too). block_dim and max_workers are checked and
    change nothing (kernels compile one after another)."""
    from .device import get_device
    cuda_devices = []
    for d in device if isinstance(device, (list, tuple)) else [device]:
        if d is not None and get_device(d).is_cuda:
            cuda_devices.append(get_device(d))
    if block_dim is not None and (isinstance(block_dim, bool) or not isinstance(block_dim, int) or block_dim < 1):
        raise ValueError(f"{what}: block_dim must be a positive int or None, got {block_dim!r}")
    if max_workers is not None and (isinstance(max_workers, bool) or not isinstance(max_workers, int)
                                    or max_workers < 0):
        raise ValueError(f"{what}: max_workers must be an int >= 0 or None, got {max_workers!r}")
    return cuda_devices


def _load_kernels(kernels, cuda_devices=()) -> None:
    """Compiles (or takes from the disk cache) and loads what a launch of each
    kernel uses: its forward variant for arrays that do not overlap and are
    not strided views, under the current settings (bounds checks, verify_fp,
    determinism), and its adjoint where it has one (a kernel that cannot be
    differentiated raises its GradientError at backward() instead, as
    without loading); on the CPU and on each of ``cuda_devices``. Generic
    kernels are loaded through their instances. The variants compile on as
    many threads as there are cores (the compiler's passes and code
    generation run without the GIL)."""
    jobs = [(kernel, adjoint) for kernel in kernels if not kernel.is_generic
            for adjoint in ((False, True) if kernel.enable_backward else (False,))]
    for kernel, _ in jobs:
        _loaded(kernel)  # (made here: threads must not race to make one kernel's state)
    workers = min(len(jobs), _compile_threads())
    if workers > 1:
        try:
            from .compiler import driver  # noqa: F401  (imported here: its import must be on this thread)
        except ImportError:
            workers = 1  # the runtime alone: everything comes from the cache
    if workers <= 1:
        for kernel, adjoint in jobs:
            _load_one(kernel, adjoint, cuda_devices)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(workers, thread_name_prefix="adjit-compile") as pool:
        for future in [pool.submit(_load_one, kernel, adjoint, cuda_devices) for kernel, adjoint in jobs]:
            future.result()


def _compile_threads() -> int:
    """Threads that compile at once: ``ADJIT_COMPILE_THREADS``, else the cores."""
    value = os.environ.get("ADJIT_COMPILE_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return os.cpu_count() or 1


def _load_one(kernel: Kernel, adjoint: bool, cuda_devices) -> None:
    """The forward variant (or the adjoint) of ``kernel`` on the CPU and the CUDA devices."""
    try:
        cpu_variant(kernel, adjoint=int(adjoint))
        for device in cuda_devices:
            load_cuda_variant(kernel, VariantSpec.of(kernel, adjoint=int(adjoint), target="cuda"), device)
    except GradientError:
        if not adjoint:
            raise


def _module_name(module, what: str) -> str:
    import types as _types
    from .language import Module
    if isinstance(module, Module):
        return module.name
    if isinstance(module, _types.ModuleType):
        return module.__name__
    if isinstance(module, str):
        return module
    raise TypeError(f"{what}: module must be an adjit Module, a Python module or a module name, got {module!r}")


def load_module(module=None, device=None, recursive: bool = False, block_dim: int | None = None,
                max_workers: int | None = None) -> None:
    """Compiles and loads the kernels of ``module`` now, so their launches do
    not compile (Warp's ``wp.load_module``). ``module``: an adjit Module, a
    Python module or a module name (None: the calling code's module);
    ``recursive`` also loads its submodules (``name.*``). adjit compiles per
    kernel: each kernel's forward variant and adjoint are loaded (see
    ``_load_kernels``); variants for overlapping or strided arrays still
    compile at their first launch. RuntimeError where the module has no
    kernels (adjit compiles @func and @struct code into the kernels that use
    it, so there is nothing else to load)."""
    from .language import _kernels, _module_of
    if module is None:
        name = _module_of(None, 1).name
    else:
        name = _module_name(module, "load_module")
    if type(recursive) is not bool:
        raise TypeError(f"load_module: recursive must be True or False, got {recursive!r}")
    cuda_devices = _load_options(device, block_dim, max_workers, "load_module")
    kernels = sorted((k for k in list(_kernels)
                      if k.module.name == name or (recursive and k.module.name.startswith(name + "."))),
                     key=lambda k: k._serial)
    if not kernels:
        raise RuntimeError(f"load_module: module {name!r} has no adjit kernels"
                           + ("" if recursive else " (recursive=True also loads its submodules)")
                           + "; import it first, or name the module its kernels were declared in")
    _load_kernels(kernels, cuda_devices)


def force_load(device=None, modules=None, block_dim: int | None = None, max_workers: int | None = None) -> None:
    """Compiles and loads the kernels of ``modules`` (a list of adjit Modules,
    Python modules or names; None: every module with kernels), as
    ``load_module`` does for one (Warp's ``wp.force_load``)."""
    from .language import _kernels
    cuda_devices = _load_options(device, block_dim, max_workers, "force_load")
    if modules is None:
        kernels = list(_kernels)
    else:
        if not isinstance(modules, (list, tuple)):
            raise TypeError(f"force_load: modules must be a list of modules or None, got {modules!r}")
        names = {_module_name(m, "force_load") for m in modules}
        kernels = [k for k in list(_kernels) if k.module.name in names]
    _load_kernels(sorted(kernels, key=lambda k: k._serial), cuda_devices)
