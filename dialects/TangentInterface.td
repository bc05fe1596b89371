//===- TangentInterface.td - forward-mode rules as an op interface -*- tablegen -*-===//
//
// The forward-mode counterpart of AdjointInterface.td: every differentiable
// op carries its tangent rule through this interface (attached as an
// external model for upstream ops), so the tangent pass has no per-op code.
// The partial derivatives both rules apply are written once, in
// cpp/lib/Autodiff/Derivatives.h.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_TANGENT_INTERFACE_TD
#define ADJIT_TANGENT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Adjit_TangentOpInterface : OpInterface<"TangentOpInterface"> {
  let cppNamespace = "::mlir::adjit";
  let description = [{
    The forward-mode (JVP) derivative rule of an op. `emitTangent` is called
    once, in program order, after the op was copied into the tangent kernel
    (its results are `state.primal(result)`); it reads the tangents of the
    op's operands from `state` (null: zero) and records the tangents of its
    results (memory ops also read and write tangent arrays). Ops whose
    results are all inactive (integers, indices, booleans) and that write no
    float array need no rule.
  }];
  let methods = [
    InterfaceMethod<
      "Computes the tangents of this op's results from its operands'.",
      "::llvm::LogicalResult", "emitTangent",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::adjit::TangentState &":$state)>,
  ];
}

#endif // ADJIT_TANGENT_INTERFACE_TD
