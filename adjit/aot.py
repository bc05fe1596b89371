"""Ahead-of-time modules, Warp's ``compile_aot_module`` / ``load_aot_module``,
over adjit's export (``adjit.export``) and its cache entries.

Warp compiles a module into one binary per device (a CPU object, a CUBIN or
PTX per architecture) and loads that binary back. adjit compiles each
kernel on its own, so a module's "binary" is a folder of cache entries, one
per kernel variant a launch may need (see ``adjit.export``), and a manifest
``<module>.adjit-aot.json``. ``load_aot_module`` loads every entry from that
folder without the compiler or the kernel cache: launches then run the
loaded code, and a missing or stale entry is a FileNotFoundError.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import cache, loader
from .device import cpu_only
from .language import _kernels
from .variant import VariantSpec

_SUFFIX = ".adjit-aot.json"


def _check_target(device, arch, use_ptx, strip_hash, what: str) -> None:
    """Warp's target arguments, on adjit's one target (this CPU)."""
    for d in device if isinstance(device, (list, tuple)) else [device]:
        if d is not None:
            cpu_only(d, what)
    if arch is not None:
        raise ValueError(f"{what}: arch={arch!r} selects CUDA architectures; adjit's AOT modules are for this "
                         "CPU so far: leave arch=None, and export PTX with adjit.export(kernels, folder, "
                         "targets=['sm_90'])")
    for name, value in (("use_ptx", use_ptx), ("strip_hash", strip_hash)):
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{what}: {name} must be True, False or None, got {value!r}")


def _module_kernels(module, what: str) -> tuple[str, list]:
    name = loader._module_name(module, what)
    kernels = sorted((k for k in list(_kernels) if k.module.name == name and not k.is_generic),
                     key=lambda k: k._serial)
    if not kernels:
        raise RuntimeError(f"{what}: module {name!r} has no adjit kernels (import it first, or name the module "
                           "its kernels were declared in; generic kernels count through their overloads)")
    return name, kernels


def _folder(module_dir) -> Path:
    return cache.cache_dir() if module_dir is None else Path(module_dir)


def compile_aot_module(module, device=None, arch=None, module_dir=None, use_ptx: bool | None = None,
                       strip_hash: bool | None = None) -> list[Path]:
    """Compiles the kernels of ``module`` (an adjit Module, a Python module
    or a module name) for this CPU into the folder ``module_dir`` (default:
    the kernel cache folder): each kernel's variants and adjoint, as
    ``adjit.export`` writes them, under the current settings (bounds checks,
    ``verify_fp``). Returns the paths of the artifacts, one per target: the
    module's manifest ``<module>.adjit-aot.json``.

    ``device`` must be the CPU (None or "cpu"); ``arch`` names CUDA
    architectures and raises ValueError; ``use_ptx`` (a GPU setting) changes
    nothing. ``strip_hash`` changes nothing either: adjit finds a kernel's
    code by a hash of its source and settings, so loading needs the same
    source (Warp's stripped names let other source load the binary)."""
    _check_target(device, arch, use_ptx, strip_hash, "compile_aot_module")
    name, kernels = _module_kernels(module, "compile_aot_module")
    folder = _folder(module_dir)
    loader.export(kernels, folder)
    exported = json.loads((folder / "adjit-export.json").read_text())
    manifest = folder / f"{name}{_SUFFIX}"
    manifest.write_text(json.dumps({"module": name, "target": exported["target"],
                                    "kernels": exported["kernels"]}, indent=2) + "\n")
    return [manifest]


def load_aot_module(module, device=None, arch=None, module_dir=None, use_ptx: bool | None = None,
                    strip_hash: bool | None = None) -> None:
    """Loads the kernels of ``module`` compiled by ``compile_aot_module``
    from ``module_dir`` (default: the kernel cache folder), without the
    compiler: their launches (and adjoints) then run that code.
    FileNotFoundError when the folder has no manifest of the module, or
    lacks a kernel's code for its current source and settings (compile the
    module again). Arguments as ``compile_aot_module``'s."""
    _check_target(device, arch, use_ptx, strip_hash, "load_aot_module")
    name, kernels = _module_kernels(module, "load_aot_module")
    folder = _folder(module_dir)
    manifest_path = folder / f"{name}{_SUFFIX}"
    try:
        manifest = json.loads(manifest_path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"load_aot_module: no compiled module {name!r} in {folder} (tried "
                                f"{manifest_path}); run compile_aot_module({name!r}, module_dir=...) first") from None
    except ValueError as e:
        raise RuntimeError(f"load_aot_module: the manifest {manifest_path} is damaged ({e})") from None
    if manifest.get("target") != cache.target_id():
        raise RuntimeError(f"load_aot_module: module {name!r} in {folder} was compiled for the CPU "
                           f"{manifest.get('target')!r}, not this one ({cache.target_id()!r})")
    records = {r.get("kernel"): r for r in manifest.get("kernels", []) if isinstance(r, dict)}
    for kernel in kernels:
        record = records.get(kernel.key)
        if record is None:
            raise FileNotFoundError(f"load_aot_module: kernel '{kernel.key}' of module {name!r} is not in the "
                                    f"compiled module {manifest_path}; compile the module again")
        _load_kernel(kernel, folder, bool(record.get("adjoint")))


def _load_kernel(kernel, folder: Path, adjoint: bool) -> None:
    """Loads the variants ``adjit.export`` wrote for ``kernel`` from ``folder``."""
    for specs in loader.exported_specs(kernel, adjoint):
        for spec in specs:
            ordered = _load_variant(kernel, folder, spec)
            if ordered.atomic_order != loader._PARALLEL:
                _load_variant(kernel, folder, spec.inline_atomics)


def _load_variant(kernel, folder: Path, spec: VariantSpec) -> loader.CpuVariant:
    state = loader._loaded(kernel)
    digest = cache.kernel_digest(kernel.pyfunc, kernel.param_types)
    if state.digest is not None and digest != state.digest:
        loader._forget_variants(kernel, state, digest)
    state.digest = digest
    parts = loader._key_parts(kernel, spec, digest)
    path = cache.entry_path(parts, folder)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"load_aot_module: {folder} has no code for kernel '{kernel.key}'"
            f"{' (its adjoint)' if spec.adjoint else ''} as it is now (tried {path.name}): its source, the "
            f"functions it calls or the settings (bounds_check={spec.checks.bounds}, "
            f"verify_fp={spec.checks.finite}) changed since compile_aot_module; compile the module again") from None
    payload = cache._verified_payload(blob)
    if payload is None:
        raise RuntimeError(f"load_aot_module: the compiled code {path} is corrupted or truncated; compile the "
                           "module again")
    try:
        variant = loader._from_entry(kernel, spec, *payload)
    except loader._DamagedEntry as e:
        raise RuntimeError(f"load_aot_module: the compiled code {path} does not load ({e}); compile the module "
                           "again") from None
    return loader._keep(kernel, state, spec, variant, digest)
