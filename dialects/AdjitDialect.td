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
    /// Name of the unit attribute that marks a `func.func` as a kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("adjit.kernel");
    }
  }];
}

class Adjit_Op<string mnemonic, list<Trait> traits = []>
    : Op<Adjit_Dialect, mnemonic, traits>;

#endif // ADJIT_DIALECT_TD
