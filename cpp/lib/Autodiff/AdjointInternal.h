//===- AdjointInternal.h - what the adjoint pass's files share --*- C++ -*-===//
//
// adjit-adjoint lives in three files, along the steps of the algorithm atop
// AdjointPass.cpp: AdjointPrepare.cpp (step 1), AdjointPass.cpp (the replay,
// the reversal of blocks and branches, the pass) and LoopReversal.cpp (the
// reversal of loops). These are the functions they call across files.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_AUTODIFF_ADJOINTINTERNAL_H
#define ADJIT_AUTODIFF_ADJOINTINTERNAL_H

#include "AutodiffUtils.h"
#include "adjit/Adjoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::adjit::autodiff {

//===-- AdjointPrepare.cpp ------------------------------------------------===//

/// Whether `op` writes an array element (a store or an atomic).
bool writesMemory(Operation *op);

/// Whether `op` writes a float value (an active one) to an array.
bool writesActiveValue(Operation *op);

/// Whether `root` or anything nested in it computes active values (floats
/// that depend on the kernel's differentiable inputs, not through
/// adjit.stop_gradient) or writes floats to arrays. (A loop or branch that
/// only passes active values through, `scf.if -> f64 { yield %a } else {
/// yield %b }`, has active results.)
bool hasActiveWork(Operation *root);

/// Step 1 on `work`, a clone of `kernel`: unrolls small constant loops,
/// carries array elements as values and rejects, with a diagnostic, what
/// cannot be differentiated.
LogicalResult prepare(func::FuncOp work, func::FuncOp kernel,
                      int64_t maxUnroll);

//===-- AdjointPass.cpp ---------------------------------------------------===//

/// Binds the results of some ops of a replayed block instead of cloning them
/// (true when it did): a loop reversal reading values it kept.
using ReplaySubstitute = function_ref<bool(Operation &, IRMapping &)>;

/// Replays `block` at `b` (its ops but its terminator, without memory
/// writes and prints) with `from` bound to `to` and, with `bind`, more
/// values mapped; the values defined outside `block` are read through the
/// current primal map, and the ops `substitute` binds are not cloned.
/// Returns the replay's mapping.
FailureOr<IRMapping>
replayBound(Block &block, ValueRange from, ValueRange to, OpBuilder &b,
            AdjointState &s, function_ref<void(IRMapping &)> bind = nullptr,
            ReplaySubstitute substitute = nullptr);

/// Active values defined outside `root` (an scf.if or a loop) and used by it
/// or inside it, in the order of a post-order walk: the outer values whose
/// adjoints reversing `root` may change.
llvm::SetVector<Value> capturedActiveValues(Operation *root);

/// Step 3 for `block`: applies the rules of its ops (but its terminator)
/// last to first at `b`, reversing the scf.if, scf.for and scf.while ops in
/// it.
LogicalResult reverseBlock(Block &block, OpBuilder &b, AdjointState &s);

//===-- LoopReversal.cpp --------------------------------------------------===//

/// Step 3 for an scf.for: see LoopReversal.cpp.
LogicalResult reverseFor(scf::ForOp loop, OpBuilder &b, AdjointState &s);

/// Step 3 for an scf.while in canonical form: see LoopReversal.cpp.
LogicalResult reverseWhile(scf::WhileOp loop, OpBuilder &b, AdjointState &s);

} // namespace mlir::adjit::autodiff

#endif // ADJIT_AUTODIFF_ADJOINTINTERNAL_H
