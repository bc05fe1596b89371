"""The ordered compile stages (Python owns the list, C++ owns the pipelines).

Each stage after the first is produced from the one before by one pipeline
registered in cpp/lib/InitAll.cpp. With ``ADJIT_DUMP_DIR=dir`` every stage
of every compile is written to ``dir/<kernel>.<n>-<stage>.mlir`` with
locations, and replays with ``adjit-opt --<next pipeline> <file>``.
"""
from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from .. import _adjit
from ..errors import CompileError, GradientError
from ..variant import VariantSpec

#: The attributes adjit-access-checks describes a kernel's checked accesses
#: and the index arrays whose value ranges it needs in.
CHECK_SITES = _adjit.ATTRIBUTE_NAMES["check_sites"]
RANGED_ARGS = _adjit.ATTRIBUTE_NAMES["ranged_args"]
#: How a CPU launch orders a kernel's float atomics (adjit-atomic-order; on
#: the CPU entry at the "cpu" stage).
ATOMIC_ORDER = _adjit.ATTRIBUTE_NAMES["atomic_order"]


@dataclass(frozen=True)
class Stage:
    name: str
    #: The registered pipeline producing this stage from the previous one.
    pipeline: str | None = None


#: Bytes of loop states a CPU thread's loop reversal may keep (see
#: adjit-adjoint's checkpoint-bytes): a CPU worker runs its threads one after
#: another, so this is stack per core. GPU threads keep checkpoints only.
CPU_CHECKPOINT_BYTES = 256 * 1024


def _front(adjoint: int, checkpoint_bytes: int = 0, tangent: int = 0) -> list[Stage]:
    """``adjoint``: the lanes (seeds) of the adjoint kernel, 0 (or False) for
    none, True for one. ``tangent``: the lanes (seed directions) of the
    tangent kernel, 0 for none; with ``adjoint`` too, the tangent kernel of
    the adjoint kernel (forward over reverse: Hessian-vector products)."""
    stages = [Stage("adjit"), Stage("optimized", "adjit-optimize")]
    if adjoint:
        stages.append(Stage("adjoint", f"adjit-differentiate{{checkpoint-bytes={checkpoint_bytes} "
                                       f"lanes={int(adjoint)}}}"))
    if tangent:
        stages.append(Stage("tangent", f"adjit-differentiate-forward{{lanes={int(tangent)}}}"))
    return stages


def _checked(bounds_check: bool, verify_fp: bool) -> list[Stage]:
    if not (bounds_check or verify_fp):
        return []
    if not verify_fp:
        return [Stage("checked", "adjit-check")]
    return [Stage("checked", f"adjit-check{{bounds={'true' if bounds_check else 'false'} finite=true}}")]


def variant_stages(spec: VariantSpec, chip: str = "sm_80") -> list[Stage]:
    """The stages compiling the variant ``spec`` for its target (``chip``:
    the CUDA architecture)."""
    return cuda_stages(spec, chip) if spec.target == "cuda" else cpu_stages(spec)


def cpu_stages(spec: VariantSpec) -> list[Stage]:
    """adjit -> optimized [-> adjoint | tangent] [-> checked] -> cpu -> llvm,
    for the CPU variant ``spec``: the adjoint and the tangent kernel
    (adjit-tangent) with its lanes; for launches whose arrays do not overlap
    (``noalias``: the runtime checks); its checks (adjit-access-checks);
    every check kept (``all_checked``: for launches whose proved checks do
    not hold); float atomic adds through the runtime, which keeps them in
    thread order (``ordered_atomics``), else inline; arrays that may be
    views with any element strides (``strided``); f32 transcendental math
    as polynomial code (``fast_math``)."""
    if spec.target != "cpu":
        raise ValueError(f"cpu_stages: a variant for target {spec.target!r}")
    lower = (f"adjit-lower-cpu{{noalias={'true' if spec.noalias else 'false'}"
             + (f" simd-width={spec.simd_width}" if spec.simd_width else "")
             + (" all-checked=true" if spec.all_checked else "")
             + (" strided-arrays=true" if spec.strided else "") + "}")
    ordered = "true" if spec.ordered_atomics else "false"
    fast_math = " fast-math=true" if spec.fast_math else ""
    return _front(spec.adjoint, CPU_CHECKPOINT_BYTES, spec.tangent) + _checked(*spec.checks) + [
        Stage("cpu", lower), Stage("llvm", f"adjit-cpu-to-llvm{{ordered-atomics={ordered}{fast_math}}}")]


def cuda_stages(spec: VariantSpec, chip: str = "sm_80") -> list[Stage]:
    """adjit -> optimized [-> adjoint | tangent] [-> checked] -> gpu -> ptx,
    for the CUDA variant ``spec`` on ``chip``. ``noalias``: for launches
    whose arrays do not overlap (as on the CPU, the launcher must check).
    GPU atomics are the hardware's (``ordered_atomics`` changes nothing);
    ``strided``: arrays that may be views with any element strides. The GPU
    kernel compiles the all-checked version next to the proved one, so
    there is no all-checked variant."""
    if spec.target != "cuda":
        raise ValueError(f"cuda_stages: a variant for target {spec.target!r}")
    if spec.all_checked:
        raise ValueError("cuda_stages: a GPU kernel has its all-checked version inside (no variant of its own)")
    options = " ".join((["noalias=true"] if spec.noalias else []) + (["strided-arrays=true"] if spec.strided else []))
    return _front(spec.adjoint, tangent=spec.tangent) + _checked(*spec.checks) + [
        Stage("gpu", f"adjit-lower-gpu{{{options}}}" if options else "adjit-lower-gpu"),
        Stage("ptx", f"adjit-gpu-to-ptx{{chip={chip}}}")]


def _kernel_attributes(module: ir.Module, kernel_symbol: str):
    for op in module.body.operations:
        attrs = op.attributes
        if "sym_name" in attrs and ir.StringAttr(attrs["sym_name"]).value == kernel_symbol:
            return attrs
    raise CompileError(f"no kernel '{kernel_symbol}' in the checked module (a bug in adjit)")


def ranged_args(module: ir.Module, kernel_symbol: str) -> list[int]:
    """The argument positions of the index arrays whose (min, max) the
    kernel reads, in slot order (adjit.index_range)."""
    attrs = _kernel_attributes(module, kernel_symbol)
    return list(ir.DenseI64ArrayAttr(attrs[RANGED_ARGS])) if RANGED_ARGS in attrs else []


def atomic_order(module: ir.Module, entry_symbol: str) -> str:
    """"parallel", "ordered" or "serial": how the runtime launches the CPU
    entry (adjit-atomic-order, read at the "cpu" stage)."""
    attrs = _kernel_attributes(module, entry_symbol)
    return ir.StringAttr(attrs[ATOMIC_ORDER]).value if ATOMIC_ORDER in attrs else "parallel"


def check_sites(module: ir.Module, kernel_symbol: str) -> list[dict]:
    """The checked accesses of a kernel after the 'checked' stage, by site
    number: dicts of file, line, array, access and rank (see
    adjit-access-checks)."""
    attrs = _kernel_attributes(module, kernel_symbol)
    if CHECK_SITES not in attrs:
        return []
    return [{k: (ir.StringAttr(v).value if k in ("file", "array", "access") else ir.IntegerAttr(v).value)
             for k, v in ((n.name, n.attr) for n in ir.DictAttr(site))}
            for site in ir.ArrayAttr(attrs[CHECK_SITES])]


def dump_dir() -> Path | None:
    d = os.environ.get("ADJIT_DUMP_DIR")
    if not d:
        return None
    if os.path.exists(d) and not os.path.isdir(d):
        raise CompileError(f"ADJIT_DUMP_DIR={d!r} is not a directory (it names an existing file); set it to a "
                           "folder to dump every compile stage into, or unset it")
    return Path(d)


def verify(module: ir.Module, what: str) -> None:
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise CompileError(f"{what}: invalid IR (a bug in adjit):\n{e}") from None


def run_stages(module: ir.Module, stages: list[Stage], kernel_name: str,
               dump: bool = True, after_stage=None) -> ir.Module:
    """Runs every stage's pipeline on ``module`` in place, dumping each stage
    (when ``ADJIT_DUMP_DIR`` is set and ``dump``) and calling
    ``after_stage(stage_name, module)`` after each."""
    out = dump_dir() if dump else None
    verify(module, f"kernel '{kernel_name}', stage '{stages[0].name}'")
    for i, stage in enumerate(stages):
        if stage.pipeline is not None:
            # (without the GIL: other threads run, other kernels compile, meanwhile)
            errors = _adjit.run_pipeline(module.operation, f"builtin.module({stage.pipeline})")
            if errors:
                e = PipelineError(errors)
                if stage.name in ("adjoint", "tangent"):
                    raise _gradient_error(kernel_name, e, forward=stage.name == "tangent") from None
                raise CompileError(f"kernel '{kernel_name}': stage '{stage.name}' "
                                   f"({stage.pipeline}) failed:\n{e}") from None
        if out is not None:
            _dump(out, module, stages, i, kernel_name)
        if after_stage is not None:
            after_stage(stage.name, module)
    return module


def _dump(out: Path, module: ir.Module, stages: list[Stage], i: int, kernel_name: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stage = stages[i]
    header = f"// adjit stage '{stage.name}' of kernel '{kernel_name}'\n"
    if i + 1 < len(stages):
        header += f"// next stage: adjit-opt --pass-pipeline='builtin.module({stages[i + 1].pipeline})' <this file>\n"
    text = module.operation.get_asm(enable_debug_info=True)
    (out / f"{kernel_name}.{i}-{stage.name}.mlir").write_text(header + text)


class Diagnostic:
    """An error diagnostic of a pass pipeline: ``message``, ``location``
    (``ir.Location``) and ``notes`` (diagnostics too), as MLIR's bindings
    give them."""

    __slots__ = ("message", "location", "notes")

    def __init__(self, message: str, location, notes=()):
        self.message, self.location = message, location
        self.notes = [Diagnostic(m, at) for m, at in notes]

    def __str__(self) -> str:
        text = f"error: {self.location}: {self.message}"
        return text + "".join(f"\n note: {n.location}: {n.message}" for n in self.notes)


class PipelineError(Exception):
    """A pass pipeline failed (``_adjit.run_pipeline``'s errors)."""

    def __init__(self, errors):
        self.error_diagnostics = [Diagnostic(*e) for e in errors]
        super().__init__("Failure while executing pass pipeline:\n"
                         + "\n".join(str(d) for d in self.error_diagnostics))


def _gradient_error(kernel_name: str, error: PipelineError, forward: bool = False) -> GradientError:
    """A user-facing error for a kernel the adjoint (or, ``forward``, the
    tangent) pass rejected, located at the offending Python line (ops carry
    Python file:line:col locations)."""
    lines = []
    for diag in error.error_diagnostics:
        message = re.sub(r"^'[\w.]+' op ", "", diag.message)
        where = python_position(diag.location)
        if where is None:
            lines.append(message)
            continue
        lines.append(f"{where[0]}:{where[1]}: {message}\n    {_source_line(*where)}")
        for note in diag.notes:
            at = python_position(note.location)
            # (MLIR's "see current operation" note prints IR, not Python)
            if at is not None and not note.message.startswith("see current operation"):
                lines.append(f"  note: {at[0]}:{at[1]}: {note.message}\n    {_source_line(*at)}")
    mode = " in forward mode" if forward else ""
    return GradientError(f"kernel '{kernel_name}' cannot be differentiated{mode}:\n" + "\n".join(lines))


def python_position(loc: ir.Location) -> tuple[str, int] | None:
    """The Python (file, line) an op's location points at: the innermost
    position of a call site (where inlined code was written), the first of a
    fused location that has one."""
    if loc.is_a_file():
        return loc.filename, loc.start_line
    if loc.is_a_name():
        return python_position(loc.child_loc)
    if loc.is_a_callsite():
        return python_position(loc.callee) or python_position(loc.caller)
    if loc.is_a_fused():
        for part in loc.locations:
            where = python_position(part)
            if where is not None:
                return where
    return None


def _source_line(filename: str, line: int) -> str:
    return linecache.getline(filename, line).strip()
