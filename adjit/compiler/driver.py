"""The compiler's entry points: a kernel in, IR text, PTX or a CPU object out.

``compile_cpu_object`` produces what the loader caches and the runtime runs
(object code, its entry symbol and the kernel's array access analysis);
``compile`` returns a kernel's final IR or PTX as text. Native failures are
``CompileError``s; kernels the adjoint pass rejects are ``GradientError``s.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._interrupts import exit_waits, interrupts_deferred

# MLIR's bindings and the dialect's registration load whole or not at all (a
# Ctrl-C half-way left extension modules half-initialized: adjit/_interrupts.py).
with interrupts_deferred():
    from mlir import ir
    from mlir.dialects import gpu

    from .. import _adjit
    from .. import dialects  # noqa: F401  (registers the dialect and passes)

from .. import _runtime
from .. import types as T
from ..errors import CompileError, KernelSyntaxError, KernelTypeError
from ..language import Kernel
from ..runtime.access import Access
from ..variant import Checks, VariantSpec
from . import stages as S
from .frontend import ModuleBuilder

@dataclass
class CpuObject:
    """A kernel (or its adjoint, or its tangent kernel) compiled for this CPU."""

    #: The relocatable object file.
    code: bytes
    #: Its entry symbol (the ABI of cpp/runtime/CpuLaunch.h).
    entry: str
    #: How the kernel touches each argument (kernels and tangent kernels:
    #: both run the kernel's memory traffic; None for adjoints).
    access: list[Access] | None
    #: Its checked array accesses, by site number (empty without bounds
    #: checks): dicts of file, line, array, access and rank.
    sites: list[dict]
    #: Positions of the index arrays whose (min, max) each launch passes in.
    ranged: list[int]
    #: How a launch orders its float atomics: "parallel", "ordered" or
    #: "serial" (adjit-atomic-order).
    atomic_order: str = "parallel"


@dataclass
class CudaCode:
    """A kernel (or its adjoint, or its tangent kernel) compiled for one
    CUDA architecture."""

    #: The PTX text.
    ptx: str
    #: The name of its ``.entry``.
    entry: str
    #: As ``CpuObject``'s: the access analysis, the check sites and the
    #: index arrays whose (min, max) the error record carries.
    access: list[Access] | None
    sites: list[dict]
    ranged: list[int]


def new_context() -> ir.Context:
    """An MLIR context for one compile, without MLIR's thread pool: kernel
    modules are small, so its threads would only be extra threads in every
    process that compiles."""
    context = ir.Context()
    context.enable_multithreading(False)
    return context


def build_module(kernel: Kernel, context: ir.Context, tangent_rules: bool = False,
                 second_order: bool = False, asserts: bool = False) -> ir.Module:
    """The kernel (and the device functions it calls) in the adjit dialect;
    ``tangent_rules``: for a tangent kernel (of the kernel or of its adjoint:
    ``func_jvp`` rules kept); ``second_order``: for the tangent of its adjoint;
    ``asserts``: with its ``assert`` statements checked."""
    mb = ModuleBuilder(context, tangent_rules, second_order, asserts)
    try:
        mb.add_kernel(kernel.pyfunc, kernel.param_types, kernel.mlir_name, kernel.no_grad)
    except T.NotInKernelsError as e:  # a host-only vector or matrix type outside a statement (a parameter)
        raise kernel.source.error(KernelTypeError, str(e), kernel.source.tree) from None
    except RecursionError:
        raise kernel.source.error(
            KernelSyntaxError, "the kernel nests too deeply for the compiler (an expression of "
            "hundreds of terms, or device functions calling each other hundreds deep); split the "
            "expression into statements or flatten the calls", kernel.source.tree) from None
    return mb.module


class _HostCaller:
    """The caller of a device function compiled for a call from Python (errors only)."""

    def __init__(self, fn):
        self.fn = fn

    def error(self, message, node=None, kind=KernelSyntaxError):
        return kind(f"@adjit.func '{self.fn.__name__}': {message}")


def function_result_types(fn, arg_types: list) -> list:
    """The result types of device function ``fn`` called with ``arg_types``
    (it is built to find them)."""
    context = new_context()
    mb = ModuleBuilder(context)
    _, results = mb.device_function(fn, arg_types, None, _HostCaller(fn))
    return results


def kernel_symbol(kernel: Kernel, spec: VariantSpec) -> str:
    """The symbol of the kernel, of its adjoint, of its tangent kernel or of
    the tangent kernel of its adjoint (as ``spec`` says) in compiled code."""
    symbol = kernel.mlir_name
    if spec.adjoint:
        symbol = _adjit.symbol_name(symbol, "adjoint")
    if spec.tangent:
        symbol = _adjit.symbol_name(symbol, "tangent")
    return symbol


def build_variant_module(kernel: Kernel, spec: VariantSpec, context: ir.Context) -> ir.Module:
    """The module the stages of ``spec`` start from (``build_module`` with
    the tangent rules a tangent kernel needs; ``assert`` statements checked
    in the variants with debug checks, ``Checks.finite``: debug mode or
    ``verify_fp``)."""
    return build_module(kernel, context, tangent_rules=bool(spec.tangent),
                        second_order=bool(spec.adjoint and spec.tangent), asserts=spec.checks.finite)


@exit_waits
def compile_cpu_object(kernel: Kernel, spec: VariantSpec, opt_level: int) -> CpuObject:
    """Compiles the variant ``spec`` of the kernel (the kernel or its
    adjoint; with tangent lanes, the forward-mode tangent kernel of either;
    see ``VariantSpec``) for this CPU at LLVM ``opt_level``."""
    if spec.target != "cpu":
        raise ValueError(f"compile_cpu_object: a variant for target {spec.target!r}")
    module = build_variant_module(kernel, spec, new_context())
    entry = _adjit.symbol_name(kernel_symbol(kernel, spec), "cpu_entry")
    found = _StageFindings(kernel, spec, entry)
    S.run_stages(module, S.cpu_stages(spec), kernel.mlir_name, after_stage=found.record)
    try:
        code = _adjit.compile_to_object(module.operation, opt_level)
    except RuntimeError as e:
        raise CompileError(f"kernel '{kernel.__name__}': {e}") from None
    return CpuObject(code, entry, found.access, found.sites, found.ranged, found.atomic_order)


class _StageFindings:
    """What a variant's stages tell the runtime, recorded as they run: the
    access analysis (after "optimized": the kernel's, also when a tangent
    kernel follows; None for adjoints), the check sites and ranged index
    arrays (after "checked"), the atomic order of a CPU entry (after "cpu")."""

    def __init__(self, kernel: Kernel, spec: VariantSpec, entry: str | None = None):
        self.symbol, self.entry, self.adjoint = kernel_symbol(kernel, spec), entry, spec.adjoint
        self.access = None if spec.adjoint else []
        self.sites, self.ranged = [], []
        self.atomic_order = "parallel"

    def record(self, stage: str, module: ir.Module) -> None:
        if stage == "optimized" and self.access is not None:
            self.access.extend(Access(bits) for bits in _adjit.kernel_argument_access(module.operation))
        if stage == "checked":
            self.sites.extend(S.check_sites(module, self.symbol))
            self.ranged.extend(S.ranged_args(module, self.symbol))
        if stage == "cpu":
            self.atomic_order = S.atomic_order(module, self.entry)


@exit_waits
def compile_cuda_code(kernel: Kernel, spec: VariantSpec, arch: str) -> CudaCode:
    """Compiles the variant ``spec`` of the kernel to PTX for ``arch``
    (e.g. "sm_90")."""
    if spec.target != "cuda":
        raise ValueError(f"compile_cuda_code: a variant for target {spec.target!r}")
    module = build_variant_module(kernel, spec, new_context())
    found = _StageFindings(kernel, spec)
    S.run_stages(module, S.cuda_stages(spec, arch), kernel.mlir_name, after_stage=found.record)
    ptx = ptx_of(module)
    return CudaCode(ptx, ptx_entry(ptx), found.access, found.sites, found.ranged)


def ptx_entry(ptx: str) -> str:
    """The name of the (one) kernel entry of a PTX module."""
    at = ptx.find(".entry")
    if at < 0:
        raise CompileError("the CUDA pipeline produced PTX without a kernel entry (a bug in adjit)")
    return ptx[at + len(".entry"):].split("(")[0].strip()


@exit_waits
def load_with_jit(code: bytes, names: list[str]) -> list[int]:
    """Links an object into LLVM's JIT (for hosts the runtime's loader does
    not support)."""
    try:
        return _adjit.load_object_with_jit(code, names, _runtime.runtime_symbols())
    except RuntimeError as e:
        raise CompileError(str(e)) from None


@exit_waits
def compile(k: Kernel, target: str = "cpu", arch: str = "sm_80", adjoint: bool = False,
            bounds_check: bool = True, verify_fp: bool = False, tangent: int = 0) -> str:
    """Compiles a kernel (or, with ``adjoint=True``, its adjoint; with
    ``tangent=K`` (or True), the forward-mode tangent kernel of either with K
    lanes) and returns its final IR as text.

    ``target="cuda"`` returns the PTX for ``arch``; ``target="cpu"`` returns
    the LLVM dialect module that is compiled for this machine.
    ``bounds_check``: with range checks on array accesses; ``verify_fp``:
    reporting non-finite values stored.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"unknown target '{target}' (expected 'cpu' or 'cuda')")
    spec = VariantSpec(target, adjoint, tangent, noalias=False, checks=Checks(bounds_check, verify_fp),
                       fast_math=k.fast_math)
    module = build_variant_module(k, spec, new_context())
    S.run_stages(module, S.variant_stages(spec, arch), k.mlir_name)
    return ptx_of(module) if target == "cuda" else str(module)


def ptx_of(module: ir.Module) -> str:
    """The PTX of the (first) object of the module's ``gpu.binary``."""
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            for attr in op.attributes["objects"]:
                return gpu.ObjectAttr(attr).object.decode()
    raise CompileError("the CUDA pipeline produced no PTX")
