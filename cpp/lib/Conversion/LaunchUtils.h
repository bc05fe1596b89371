//===- LaunchUtils.h - shared by the CPU and GPU launch passes --*- C++ -*-===//

#ifndef ADJIT_CONVERSION_LAUNCHUTILS_H
#define ADJIT_CONVERSION_LAUNCHUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::adjit {

/// Number of launch extents the entry points receive (launches are 1-4-D).
constexpr unsigned kMaxLaunchDims = 4;

/// Turns `kernel` into a private function `<name>_body` whose arguments are
/// the kernel's followed by (%linear, %total, %extent1, %extent2, %extent3),
/// all `index`, and %record, the launch's error record (`!llvm.ptr`).
/// Rewrites each `adjit.tid` into the delinearization of %linear over the
/// launch extents, `adjit.tid_bounds` into the matching extents and
/// `adjit.error_record` into %record. Returns failure (with a diagnostic) if
/// the kernel has no body.
FailureOr<func::FuncOp> outlineKernelBody(func::FuncOp kernel);

/// Builds a value of `type` (a scalar or a vector/matrix) from its scalar
/// components; `scalarAt(pos)` returns the component at full position `pos`.
Value assembleFromScalars(OpBuilder &b, Location loc, Type type,
                          function_ref<Value(ArrayRef<int64_t>)> scalarAt);

} // namespace mlir::adjit

#endif // ADJIT_CONVERSION_LAUNCHUTILS_H
