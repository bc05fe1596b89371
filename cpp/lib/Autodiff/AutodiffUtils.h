//===- AutodiffUtils.h - what both differentiation modes share --*- C++ -*-===//

#ifndef ADJIT_AUTODIFF_AUTODIFFUTILS_H
#define ADJIT_AUTODIFF_AUTODIFFUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::adjit::autodiff {

/// Positions `b` at the end of `block`, before any terminator it already has
/// (which is erased: the caller emits its own).
void setInsertionToEndReplacingTerminator(OpBuilder &b, Block *block);

/// Arguments a derived kernel adds, named after the arguments at `positions`
/// of the kernel it derives from: `<prefix>_<name>`, or, with several
/// `lanes`, `<prefix><lane>_<name>` lane after lane.
struct DerivedArgs {
  StringRef prefix;
  unsigned lanes;
  ArrayRef<unsigned> positions;
};

/// Creates the empty kernel `name`(`inputs`) after `kernel`, derived from it:
/// marked with `derivedOfAttr` and, if `kernel` names its arguments, naming
/// its own: `kernel`'s names, then those of `added`, in order.
func::FuncOp createDerivedKernel(func::FuncOp kernel, StringRef name,
                                 TypeRange inputs, StringRef derivedOfAttr,
                                 ArrayRef<DerivedArgs> added);

/// Calls `differentiate` on each kernel of `module` that needs a derived
/// kernel: one not derived itself (it has no `derivedOfAttr`) whose derived
/// kernel, `derivedName(its name)`, does not exist yet. Fails at the first
/// kernel without a body (with a diagnostic) or that `differentiate` fails
/// on. Returns the kernels differentiated.
FailureOr<SmallVector<func::FuncOp>>
differentiateKernels(ModuleOp module, StringRef derivedOfAttr,
                     function_ref<std::string(StringRef)> derivedName,
                     function_ref<LogicalResult(func::FuncOp)> differentiate);

} // namespace mlir::adjit::autodiff

#endif // ADJIT_AUTODIFF_AUTODIFFUTILS_H
