//===- AdjitDialect.td - the adjit dialect ------------------*- tablegen -*-===//
//
// The dialect that Warp-style Python kernels are parsed into. Kernels are
// `func.func` ops carrying the `adjit.kernel` unit attribute; device functions
// are plain `func.func` ops called with `adjit.call`. Scalars, vectors and
// matrices are SSA values (builtin scalar types, `vector<NxT>`, `vector<RxCxT>`);
// only arrays live in memory, behind `!adjit.array` values.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_DIALECT_TD
#define ADJIT_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Adjit_Dialect : Dialect {
  let name = "adjit";
  let cppNamespace = "::mlir::adjit";
  let summary = "Warp-style differentiable GPU kernels";
  let description = [{
    Kernels written in NVIDIA Warp's Python kernel language. Every value but
    an array is an SSA value, so `b = a` is a rename and a component write is
    a functional `adjit.insert`. Array traffic goes through explicit load,
    store, per-component load/store and atomic ops, which is what the adjoint
    and alias analyses reason about.
  }];
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    // The discardable attributes adjit puts on functions. Those the Python
    // frontend sets reach it through the C API (adjitAttributeName).

    /// The unit attribute that marks a `func.func` as a kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("adjit.kernel");
    }
    /// A kernel's parameter names (an array of strings), for diagnostics.
    static constexpr ::llvm::StringLiteral getArgNamesAttrName() {
      return ::llvm::StringLiteral("adjit.arg_names");
    }
    /// On a device function: the symbol of its hand-written adjoint.
    static constexpr ::llvm::StringLiteral getCustomAdjointAttrName() {
      return ::llvm::StringLiteral("adjit.custom_adjoint");
    }
    /// A device function's hand-written tangent rule (`func_jvp`): takes the
    /// function's arguments followed by the tangents of its float arguments
    /// and returns the tangents of its float results.
    static constexpr ::llvm::StringLiteral getCustomTangentAttrName() {
      return ::llvm::StringLiteral("adjit.custom_tangent");
    }
    /// The array access analysis's summary of a kernel (adjit-array-access).
    static constexpr ::llvm::StringLiteral getArgAccessAttrName() {
      return ::llvm::StringLiteral("adjit.arg_access");
    }
    /// Positions of the array pointers to mark `llvm.noalias`
    /// (adjit-cpu-launch{noalias} -> adjit-apply-noalias).
    static constexpr ::llvm::StringLiteral getNoAliasArgsAttrName() {
      return ::llvm::StringLiteral("adjit.noalias_args");
    }
    /// On a kernel: its checked accesses (adjit-access-checks), an array of
    /// dictionaries {file, line, array, access, rank} indexed by the `site` of each
    /// `adjit.access_error`; the launcher names the failing one from it.
    static constexpr ::llvm::StringLiteral getCheckSitesAttrName() {
      return ::llvm::StringLiteral("adjit.check_sites");
    }
    /// On a kernel: the argument numbers of the index arrays whose value
    /// ranges it reads (`adjit.index_range` slot k is the k-th).
    static constexpr ::llvm::StringLiteral getRangedArgsAttrName() {
      return ::llvm::StringLiteral("adjit.ranged_args");
    }
    /// On a CPU kernel body outlined by adjit-cpu-launch: its last argument
    /// is the launch's error record (adjit-defer-float-atomics passes it on).
    static constexpr ::llvm::StringLiteral getKernelBodyAttrName() {
      return ::llvm::StringLiteral("adjit.kernel_body");
    }
    /// On a kernel and its CPU entry: how the runtime keeps its float atomics
    /// deterministic, "parallel", "ordered" or "serial" (adjit-atomic-order).
    static constexpr ::llvm::StringLiteral getAtomicOrderAttrName() {
      return ::llvm::StringLiteral("adjit.atomic_order");
    }
  }];
}

class Adjit_Op<string mnemonic, list<Trait> traits = []>
    : Op<Adjit_Dialect, mnemonic, traits>;

#endif // ADJIT_DIALECT_TD
