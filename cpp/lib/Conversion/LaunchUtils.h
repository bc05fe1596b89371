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

/// The launch arguments outlineKernelBody appended to `fn` (%linear and
/// %record), or std::nullopt if `fn`'s trailing arguments are not those.
struct BodyLaunchArgs {
  Value linear;
  Value record;
};
std::optional<BodyLaunchArgs> bodyLaunchArgs(func::FuncOp fn);

/// Writes a failure into the error record `record` unless one is there: the
/// site word goes from 0 to `tag` atomically and the winner stores `thread`,
/// `indices` and `sizes` (index values; at most AdjitRecordMaxRank each).
void writeFirstFailure(OpBuilder &b, Location loc, Value record, int64_t tag,
                       Value thread, ValueRange indices, ValueRange sizes);

/// Replaces the launch condition (adjit.launch_condition) in `fn` by the
/// constant `value`.
void fixLaunchCondition(func::FuncOp fn, bool value);

/// Splits the launch condition out of `body`, which is then compiled for it
/// holding: returns the condition as a function of the body's arguments,
/// created after `body` (null if the body has none; see
/// adjit-access-checks).
func::FuncOp splitLaunchCondition(OpBuilder &b, func::FuncOp body);

/// Marks the array (memref) arguments of `fn`, whose argument types are
/// `argTypes`, as non-overlapping for adjit-apply-noalias: records the
/// positions of their aligned pointers once the LLVM conversion expands each
/// memref into (allocated, aligned, offset, sizes..., strides...).
void markNoAliasArrays(Operation *fn, TypeRange argTypes);

/// Builds a value of `type` (a scalar or a vector/matrix) from its scalar
/// components; `scalarAt(pos)` returns the component at full position `pos`.
Value assembleFromScalars(OpBuilder &b, Location loc, Type type,
                          function_ref<Value(ArrayRef<int64_t>)> scalarAt);

/// The LLVM struct of a ranked memref descriptor (index lowered to i64):
/// (allocated, aligned, offset, sizes, strides).
Type memrefDescriptorType(MemRefType type);

} // namespace mlir::adjit

#endif // ADJIT_CONVERSION_LAUNCHUTILS_H
