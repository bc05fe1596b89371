//===- TangentInternal.h - what the forward-mode passes share ---*- C++ -*-===//
//
// adjit-tangent (TangentPass.cpp) and adjit-expand-grad-calls
// (ExpandGradCalls.cpp) both copy a block with the tangents of its values.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_AUTODIFF_TANGENTINTERNAL_H
#define ADJIT_AUTODIFF_TANGENTINTERNAL_H

#include "adjit/Tangent.h"

namespace mlir::adjit::autodiff {

/// Copies the ops of `block` but its terminator at `b`, in program order,
/// each followed by what its TangentOpInterface rule emits in every lane;
/// scf.if, scf.for, scf.while and memref.alloca_scope ops are rebuilt with
/// the tangents beside their values (steps 2 and 3 of adjit-tangent). Fails,
/// with a diagnostic at the op, on an op that needs a rule it lacks.
LogicalResult tangentBlock(Block &block, OpBuilder &b, TangentState &s);

} // namespace mlir::adjit::autodiff

#endif // ADJIT_AUTODIFF_TANGENTINTERNAL_H
