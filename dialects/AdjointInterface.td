//===- AdjointInterface.td - derivative rules as an op interface -*- tablegen -*-===//
//
// Every differentiable op carries its reverse-mode rule through this
// interface (attached as an external model for upstream ops), so the adjoint
// pass has no per-op code: it replays the primal, walks it backwards and asks
// each op to propagate its results' adjoints to its operands.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_ADJOINT_INTERFACE_TD
#define ADJIT_ADJOINT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Adjit_AdjointOpInterface : OpInterface<"AdjointOpInterface"> {
  let cppNamespace = "::mlir::adjit";
  let description = [{
    The reverse-mode derivative rule of an op. `emitAdjoint` is called once,
    in reverse program order, with the builder in the adjoint kernel; it reads
    the adjoints of the op's results from `state` and accumulates into the
    adjoints of its operands (and into gradient arrays for memory ops). Ops
    whose results are all inactive (integers, indices, booleans) need no rule.
  }];
  let methods = [
    InterfaceMethod<
      "Propagates the adjoints of this op's results to its operands.",
      "::llvm::LogicalResult", "emitAdjoint",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::adjit::AdjointState &":$state)>,
  ];
}

#endif // ADJIT_ADJOINT_INTERFACE_TD
