//===- LaunchUtils.cpp - shared by the CPU and GPU launch passes ----------===//

#include "LaunchUtils.h"

#include "adjit/AdjitDialect.h"
#include "runtime/ErrorRecord.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::adjit;

void mlir::adjit::markNoAliasArrays(Operation *fn, TypeRange argTypes) {
  SmallVector<int64_t> positions;
  int64_t position = 0;
  for (Type type : argTypes) {
    if (auto memrefTy = dyn_cast<MemRefType>(type)) {
      positions.push_back(position + 1);
      position += 3 + 2 * memrefTy.getRank();
    } else {
      position += 1;
    }
  }
  fn->setAttr(AdjitDialect::getNoAliasArgsAttrName(),
              DenseI64ArrayAttr::get(fn->getContext(), positions));
}

void mlir::adjit::fixLaunchCondition(func::FuncOp fn, bool value) {
  fn.walk([&](LaunchConditionOp cond) {
    OpBuilder b(cond);
    cond.replaceAllUsesWith(
        arith::ConstantIntOp::create(b, cond.getLoc(), value, 1).getResult());
    cond.erase();
  });
}

func::FuncOp mlir::adjit::splitLaunchCondition(OpBuilder &b, func::FuncOp body) {
  LaunchConditionOp cond;
  body.walk([&](LaunchConditionOp op) { cond = op; });
  if (!cond)
    return {};
  MLIRContext *ctx = b.getContext();
  Location loc = cond.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(body);

  // The condition alone: its backward slice, which reads only the body's
  // arguments (the launch extents, array sizes, constants).
  auto condition = func::FuncOp::create(
      b, loc, (body.getSymName() + "_launch_condition").str(),
      FunctionType::get(ctx, body.getArgumentTypes(), {b.getI1Type()}));
  condition.setPrivate();
  condition->setAttr("llvm.linkage",
                     LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  Block *block = condition.addEntryBlock();
  IRMapping mapping;
  mapping.map(body.getArguments(), block->getArguments());
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  (void)getBackwardSlice(cond.getOperation(), &slice, options);
  OpBuilder cb = OpBuilder::atBlockBegin(block);
  for (Operation *op : slice)
    cb.clone(*op, mapping);
  func::ReturnOp::create(cb, loc, mapping.lookup(cond.getCondition()));

  fixLaunchCondition(body, true);
  return condition;
}

FailureOr<func::FuncOp> mlir::adjit::outlineKernelBody(func::FuncOp kernel) {
  if (kernel.isExternal())
    return kernel.emitOpError("kernel has no body");
  MLIRContext *ctx = kernel.getContext();
  Type indexTy = IndexType::get(ctx);
  Block &entry = kernel.getBody().front();
  Location loc = kernel.getLoc();
  Value linear = entry.addArgument(indexTy, loc);
  // extents[0] is the total thread count, extents[1..3] the launch's.
  SmallVector<Value> extents;
  for (unsigned d = 0; d < kMaxLaunchDims; ++d)
    extents.push_back(entry.addArgument(indexTy, loc));
  Value record =
      entry.addArgument(LLVM::LLVMPointerType::get(ctx), loc);

  kernel.walk([&](TidOp tid) {
    OpBuilder b(tid);
    unsigned n = tid.getNumResults();
    SmallVector<Value> coords(n);
    Value rest = linear;
    for (unsigned d = n - 1; d >= 1; --d) {
      coords[d] = arith::RemUIOp::create(b, tid.getLoc(), rest, extents[d]);
      rest = arith::DivUIOp::create(b, tid.getLoc(), rest, extents[d]);
    }
    coords[0] = rest;
    tid.replaceAllUsesWith(coords);
    tid.erase();
  });

  kernel.walk([&](TidBoundsOp op) {
    // Coordinates 1..n-1 are bounded by the launch extents; coordinate 0 by
    // the rest of the threads: total / (e1 * ... * e_{n-1}).
    OpBuilder b(op);
    Location at = op.getLoc();
    unsigned n = op.getNumResults();
    SmallVector<Value> bounds(n);
    Value inner = arith::ConstantIndexOp::create(b, at, 1);
    for (unsigned d = 1; d < n; ++d) {
      bounds[d] = extents[d];
      inner = arith::MulIOp::create(b, at, inner, extents[d]);
    }
    // An empty launch runs no thread: avoid dividing by zero.
    Value one = arith::ConstantIndexOp::create(b, at, 1);
    inner = arith::MaxUIOp::create(b, at, inner, one);
    bounds[0] = arith::DivUIOp::create(b, at, extents[0], inner);
    op.replaceAllUsesWith(bounds);
    op.erase();
  });
  kernel.walk([&](ErrorRecordOp op) {
    op.replaceAllUsesWith(record);
    op.erase();
  });
  // Index ranges: the record's words AdjitRecordRanges + 2 * slot (min) and
  // the one after it (max).
  kernel.walk([&](IndexRangeOp op) {
    OpBuilder b(op);
    Location at = op.getLoc();
    auto i64 = b.getI64Type();
    auto word = [&](int64_t k) -> Value {
      Value ptr = LLVM::GEPOp::create(b, at, LLVM::LLVMPointerType::get(ctx),
                                      i64, record,
                                      ArrayRef<LLVM::GEPArg>{int32_t(k)});
      Value v = LLVM::LoadOp::create(b, at, i64, ptr);
      return arith::IndexCastOp::create(b, at, b.getIndexType(), v);
    };
    int64_t slot = op.getSlot();
    int64_t min = AdjitRecordRanges + 2 * slot;
    op.replaceAllUsesWith(ValueRange{word(min), word(min + 1)});
    op.erase();
  });

  kernel.setFunctionType(FunctionType::get(
      ctx, entry.getArgumentTypes(), kernel.getFunctionType().getResults()));
  kernel.setSymName((kernel.getSymName() + "_body").str());
  kernel.setPrivate();
  // Internal linkage: the entry's call is its only use, so LLVM inlines the
  // body into the thread loop and drops the symbol.
  kernel->setAttr("llvm.linkage",
                  LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  // The body is no longer a kernel: drop the kernel's adjit.* attributes.
  SmallVector<StringAttr> adjitAttrs;
  for (NamedAttribute attr : kernel->getAttrs())
    if (attr.getName().getValue().starts_with("adjit."))
      adjitAttrs.push_back(attr.getName());
  for (StringAttr name : adjitAttrs)
    kernel->removeAttr(name);
  return kernel;
}

Value mlir::adjit::assembleFromScalars(
    OpBuilder &b, Location loc, Type type,
    function_ref<Value(ArrayRef<int64_t>)> scalarAt) {
  auto vecTy = dyn_cast<VectorType>(type);
  if (!vecTy)
    return scalarAt({});
  ArrayRef<int64_t> shape = vecTy.getShape();
  auto rowTy = VectorType::get(shape.back(), vecTy.getElementType());
  auto buildRow = [&](ArrayRef<int64_t> prefix) {
    SmallVector<Value> elems;
    SmallVector<int64_t> pos(prefix.begin(), prefix.end());
    pos.push_back(0);
    for (int64_t i = 0; i < shape.back(); ++i) {
      pos.back() = i;
      elems.push_back(scalarAt(pos));
    }
    return vector::FromElementsOp::create(b, loc, rowTy, elems).getResult();
  };
  if (vecTy.getRank() == 1)
    return buildRow({});
  Value result = arith::ConstantOp::create(b, loc, vecTy, b.getZeroAttr(vecTy));
  for (int64_t r = 0; r < shape[0]; ++r)
    result = vector::InsertOp::create(b, loc, buildRow({r}), result,
                                      ArrayRef<int64_t>{r});
  return result;
}

Type mlir::adjit::memrefDescriptorType(MemRefType type) {
  MLIRContext *ctx = type.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto dims = LLVM::LLVMArrayType::get(i64, type.getRank());
  return LLVM::LLVMStructType::getLiteral(ctx, {ptrTy, ptrTy, i64, dims, dims});
}

std::optional<mlir::adjit::BodyLaunchArgs>
mlir::adjit::bodyLaunchArgs(func::FuncOp fn) {
  constexpr unsigned trailing = 1 + kMaxLaunchDims + 1;
  if (fn.isExternal() || fn.getNumArguments() < trailing)
    return std::nullopt;
  auto args = fn.getArguments().take_back(trailing);
  if (!isa<LLVM::LLVMPointerType>(args.back().getType()) ||
      !llvm::all_of(args.drop_back(), [](BlockArgument a) {
        return a.getType().isIndex();
      }))
    return std::nullopt;
  return BodyLaunchArgs{args.front(), args.back()};
}

void mlir::adjit::writeFirstFailure(OpBuilder &b, Location loc, Value record,
                                    int64_t tag, Value thread,
                                    ValueRange indices, ValueRange sizes) {
  Type i64 = b.getI64Type();
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  Value none = LLVM::ConstantOp::create(b, loc, i64, 0);
  Value tagValue = LLVM::ConstantOp::create(b, loc, i64, tag);
  static_assert(AdjitRecordSite == 0, "the site is the record's first word");
  auto exchange = LLVM::AtomicCmpXchgOp::create(
      b, loc, record, none, tagValue, LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic);
  Value won = LLVM::ExtractValueOp::create(b, loc, exchange, 1);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, won,
                                /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  auto storeWord = [&](int32_t word, Value index) {
    Value value = arith::IndexCastOp::create(b, loc, i64, index);
    Value at = LLVM::GEPOp::create(b, loc, ptrTy, i64, record,
                                   ArrayRef<LLVM::GEPArg>{word});
    LLVM::StoreOp::create(b, loc, value, at);
  };
  storeWord(AdjitRecordThread, thread);
  for (auto [d, index] : llvm::enumerate(indices))
    storeWord(AdjitRecordIndex + d, index);
  for (auto [d, size] : llvm::enumerate(sizes))
    storeWord(AdjitRecordSize + d, size);
}
