//===- InitAll.h - register everything adjit provides -----------*- C++ -*-===//
//
// One place registers the dialect, the passes and the named pipelines; both
// adjit-opt and the Python module call it, so they can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_INITALL_H
#define ADJIT_INITALL_H

namespace mlir {
class DialectRegistry;
namespace adjit {
/// Adds the adjit dialect (and what it needs) to `registry`.
void registerAdjitDialects(DialectRegistry &registry);
/// Registers the adjit passes and the stage pipelines with the global pass
/// registry. Idempotent.
void registerAdjitPassesAndPipelines();
} // namespace adjit
} // namespace mlir

#endif // ADJIT_INITALL_H
