//===- LowerToStd.cpp - adjit arrays and values to memref/vector/func -----===//
//
// Algorithm: a dialect conversion. Every `!adjit.array<E, N>` becomes a
// row-major `memref` of E's scalar type with N dynamic dimensions followed by
// E's static component shape, so a vec3 array is `memref<?x3xf32>` and its
// packed 12-byte layout matches numpy's `(n, 3)` arrays. Each access to an
// element or a component becomes one scalar memref access per scalar
// component (LLVM merges adjacent ones), assembled into or split out of a
// vector value. Component ops on values map 1:1 onto `vector.extract/insert`
// and `adjit.call` onto `func.call`. Function signatures are converted too.
//
//===----------------------------------------------------------------------===//

#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"
#include "LaunchUtils.h"
#include "runtime/ErrorRecord.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITLOWERTOSTD
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

namespace {

/// Replaces each memref.alloca_scope (the adjoint's loop checkpoints) by
/// llvm.intr.stacksave, its body and llvm.intr.stackrestore: the same
/// meaning, in a form that survives convert-scf-to-cf (which would give the
/// scope's region several blocks, which the op does not allow).
void expandAllocaScopes(Operation *root) {
  SmallVector<memref::AllocaScopeOp> scopes;
  root->walk([&](memref::AllocaScopeOp scope) { scopes.push_back(scope); });
  for (memref::AllocaScopeOp scope : scopes) { // innermost first
    Location loc = scope.getLoc();
    OpBuilder b(scope);
    Value saved = LLVM::StackSaveOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()));
    Block &body = scope.getBodyRegion().front();
    auto ret = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
    SmallVector<Value> results(ret.getResults());
    scope->getBlock()->getOperations().splice(
        Block::iterator(scope), body.getOperations(), body.begin(),
        Block::iterator(ret));
    b.setInsertionPointAfter(scope);
    LLVM::StackRestoreOp::create(b, loc, saved);
    scope.replaceAllUsesWith(results);
    scope.erase();
  }
}

/// Calls `fn` with every full component position of `shape`, row-major.
void forEachPosition(ArrayRef<int64_t> shape,
                     function_ref<void(ArrayRef<int64_t>)> fn) {
  SmallVector<int64_t> pos(shape.size(), 0);
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t rest = linear;
    for (int d = shape.size() - 1; d >= 0; --d) {
      pos[d] = rest % shape[d];
      rest /= shape[d];
    }
    fn(pos);
  }
}

/// The memref indices addressing component `position` of the element at
/// `indices`.
SmallVector<Value> componentIndices(OpBuilder &b, Location loc,
                                    ValueRange indices,
                                    ArrayRef<int64_t> position) {
  SmallVector<Value> all(indices.begin(), indices.end());
  for (int64_t p : position)
    all.push_back(arith::ConstantIndexOp::create(b, loc, p));
  return all;
}

/// Calls `fn(pos, scalar)` for every scalar component of `value`.
void scatter(OpBuilder &b, Location loc, Value value,
             function_ref<void(ArrayRef<int64_t>, Value)> fn) {
  auto vecTy = dyn_cast<VectorType>(value.getType());
  if (!vecTy)
    return fn({}, value);
  forEachPosition(vecTy.getShape(), [&](ArrayRef<int64_t> pos) {
    fn(pos, vector::ExtractOp::create(b, loc, value, pos));
  });
}

SmallVector<int64_t> concat(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> all(a.begin(), a.end());
  all.append(b.begin(), b.end());
  return all;
}

/// Loads the component at `position` (empty: the whole element).
Value loadComponent(OpBuilder &b, Location loc, Value memref,
                    ValueRange indices, ArrayRef<int64_t> position,
                    Type resultType) {
  return assembleFromScalars(b, loc, resultType, [&](ArrayRef<int64_t> sub) {
    return memref::LoadOp::create(
        b, loc, memref,
        componentIndices(b, loc, indices, concat(position, sub)));
  });
}

/// Stores `value` into the component at `position` (empty: whole element).
void storeComponent(OpBuilder &b, Location loc, Value value, Value memref,
                    ValueRange indices, ArrayRef<int64_t> position) {
  scatter(b, loc, value, [&](ArrayRef<int64_t> sub, Value scalar) {
    memref::StoreOp::create(
        b, loc, scalar, memref,
        componentIndices(b, loc, indices, concat(position, sub)));
  });
}

struct LoadLowering : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, loadComponent(rewriter, op.getLoc(),
                                         adaptor.getArray(),
                                         adaptor.getIndices(), {},
                                         op.getType()));
    return success();
  }
};

struct LoadComponentLowering : OpConversionPattern<LoadComponentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadComponentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, loadComponent(rewriter, op.getLoc(),
                                         adaptor.getArray(),
                                         adaptor.getIndices(),
                                         op.getPosition(), op.getType()));
    return success();
  }
};

struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    storeComponent(rewriter, op.getLoc(), adaptor.getValue(),
                   adaptor.getArray(), adaptor.getIndices(), {});
    rewriter.eraseOp(op);
    return success();
  }
};

struct StoreComponentLowering : OpConversionPattern<StoreComponentOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreComponentOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    storeComponent(rewriter, op.getLoc(), adaptor.getValue(),
                   adaptor.getArray(), adaptor.getIndices(), op.getPosition());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The memref.atomic_rmw kind of an adjit atomic op on `scalar` values.
arith::AtomicRMWKind atomicKind(AtomicAddOp, Type scalar) {
  return isa<FloatType>(scalar) ? arith::AtomicRMWKind::addf
                                : arith::AtomicRMWKind::addi;
}
arith::AtomicRMWKind atomicKind(AtomicMinOp, Type scalar) {
  return isa<FloatType>(scalar) ? arith::AtomicRMWKind::minimumf
                                : arith::AtomicRMWKind::mins;
}
arith::AtomicRMWKind atomicKind(AtomicMaxOp, Type scalar) {
  return isa<FloatType>(scalar) ? arith::AtomicRMWKind::maximumf
                                : arith::AtomicRMWKind::maxs;
}
arith::AtomicRMWKind atomicKind(AtomicExchOp, Type) {
  return arith::AtomicRMWKind::assign;
}
arith::AtomicRMWKind atomicKind(AtomicAndOp, Type) {
  return arith::AtomicRMWKind::andi;
}
arith::AtomicRMWKind atomicKind(AtomicOrOp, Type) {
  return arith::AtomicRMWKind::ori;
}
arith::AtomicRMWKind atomicKind(AtomicXorOp, Type) {
  return arith::AtomicRMWKind::xori;
}

template <typename AtomicOp>
struct AtomicLowering : OpConversionPattern<AtomicOp> {
  using OpConversionPattern<AtomicOp>::OpConversionPattern;
  using OpAdaptor = typename AtomicOp::Adaptor;
  LogicalResult
  matchAndRewrite(AtomicOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Split the value into scalars, add each atomically, and reassemble the
    // old values into the result.
    SmallVector<Value> oldScalars;
    scatter(rewriter, loc, adaptor.getValue(),
            [&](ArrayRef<int64_t> sub, Value scalar) {
              arith::AtomicRMWKind kind = atomicKind(op, scalar.getType());
              oldScalars.push_back(memref::AtomicRMWOp::create(
                  rewriter, loc, kind, scalar, adaptor.getArray(),
                  componentIndices(rewriter, loc, adaptor.getIndices(),
                                   concat(op.getPosition(), sub))));
            });
    unsigned next = 0;
    rewriter.replaceOp(op, assembleFromScalars(rewriter, loc, op.getType(),
                                    [&](ArrayRef<int64_t>) {
                                      return oldScalars[next++];
                                    }));
    return success();
  }
};

/// A `cmpxchg` on the scalar's bits (LLVM's cmpxchg takes integers only,
/// so floats compare as their bits), through the element's address: the
/// memref's aligned pointer plus its linear offset.
struct AtomicCasLowering : OpConversionPattern<AtomicCasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AtomicCasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value memref = adaptor.getArray();
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, memref);
    Value linear = meta.getOffset();
    for (auto [index, stride] :
         llvm::zip(componentIndices(rewriter, loc, adaptor.getIndices(),
                                    op.getPosition()),
                   meta.getStrides()))
      linear = arith::AddIOp::create(
          rewriter, loc, linear,
          arith::MulIOp::create(rewriter, loc, index, stride));
    Type i64 = rewriter.getI64Type();
    auto ptrTy = LLVM::LLVMPointerType::get(rewriter.getContext());
    Value base = arith::IndexCastOp::create(
        rewriter, loc, i64,
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, memref));
    Type scalar = op.getValue().getType();
    Type bitsTy = rewriter.getIntegerType(scalar.getIntOrFloatBitWidth());
    Value at = LLVM::GEPOp::create(
        rewriter, loc, ptrTy, bitsTy,
        LLVM::IntToPtrOp::create(rewriter, loc, ptrTy, base),
        ValueRange{arith::IndexCastOp::create(rewriter, loc, i64, linear)});
    auto bits = [&](Value v) {
      return isa<FloatType>(scalar)
                 ? arith::BitcastOp::create(rewriter, loc, bitsTy, v).getResult()
                 : v;
    };
    Value compare = bits(adaptor.getCompare());
    Value value = bits(adaptor.getValue());
    auto exchange = LLVM::AtomicCmpXchgOp::create(
        rewriter, loc, at, compare, value, LLVM::AtomicOrdering::acq_rel,
        LLVM::AtomicOrdering::acquire);
    Value old = LLVM::ExtractValueOp::create(rewriter, loc, exchange, 0);
    if (isa<FloatType>(scalar))
      old = arith::BitcastOp::create(rewriter, loc, scalar, old);
    rewriter.replaceOp(op, old);
    return success();
  }
};

/// Writes the failure into the error record unless one is there (the site
/// word goes from 0 to site + 1 atomically; the winner fills in the rest).
struct AccessErrorLowering : OpConversionPattern<AccessErrorOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AccessErrorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    writeFirstFailure(rewriter, op.getLoc(), adaptor.getRecord(),
                      op.getSite() + 1, adaptor.getThread(),
                      adaptor.getIndices(), adaptor.getSizes());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Without adjit-access-checks (bounds checks off) the marker has no job.
struct CheckIndexLowering : OpConversionPattern<CheckIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CheckIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

struct DimLowering : OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::DimOp>(op, adaptor.getArray(),
                                               op.getDim());
    return success();
  }
};

/// An array at an address: the memref descriptor of a contiguous row-major
/// array there, built in the LLVM dialect and cast to the memref type (the
/// cast cancels against the one the LLVM conversion makes).
struct ArrayAtAddressLowering : OpConversionPattern<ArrayAtAddressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArrayAtAddressOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto memrefTy = dyn_cast_or_null<MemRefType>(
        getTypeConverter()->convertType(op.getType()));
    if (!memrefTy)
      return failure();
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, i64,
                                      rewriter.getI64IntegerAttr(v));
    };
    SmallVector<Value> sizes;
    for (Value extent : adaptor.getExtents())
      sizes.push_back(arith::IndexCastOp::create(rewriter, loc, i64, extent));
    auto arrayTy = cast<ArrayType>(op.getType());
    for (int64_t extent : arrayTy.getComponentShape())
      sizes.push_back(constant(extent));
    SmallVector<Value> strides(sizes.size());
    Value stride = constant(1);
    for (int d = int(sizes.size()) - 1; d >= 0; --d) {
      strides[d] = stride;
      if (d > 0)
        stride = LLVM::MulOp::create(rewriter, loc, stride, sizes[d]);
    }
    Value pointer = LLVM::IntToPtrOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext()),
        adaptor.getAddress());
    Value desc = LLVM::UndefOp::create(rewriter, loc,
                                       memrefDescriptorType(memrefTy));
    auto insert = [&](Value v, ArrayRef<int64_t> position) {
      desc = LLVM::InsertValueOp::create(rewriter, loc, desc, v, position);
    };
    insert(pointer, {0});
    insert(pointer, {1});
    insert(constant(0), {2});
    for (auto [d, size] : llvm::enumerate(sizes)) {
      insert(size, {3, int64_t(d)});
      insert(strides[d], {4, int64_t(d)});
    }
    rewriter.replaceOpWithNewOp<UnrealizedConversionCastOp>(
        op, TypeRange{memrefTy}, ValueRange{desc});
    return success();
  }
};

struct ExtractLowering : OpConversionPattern<ExtractOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExtractOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<vector::ExtractOp>(op, adaptor.getSource(),
                                                   op.getPosition());
    return success();
  }
};

struct InsertLowering : OpConversionPattern<InsertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(InsertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<vector::InsertOp>(
        op, adaptor.getValue(), adaptor.getDest(), op.getPosition());
    return success();
  }
};

struct StopGradientLowering : OpConversionPattern<StopGradientOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StopGradientOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct CallLowering : OpConversionPattern<CallOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(),
                                                resultTypes)))
      return failure();
    rewriter.replaceOpWithNewOp<func::CallOp>(op, op.getCallee(), resultTypes,
                                              adaptor.getOperands());
    return success();
  }
};

/// A reduction of a small vector (a vec3's dot product, a length) becomes a
/// chain of scalar ops in element order: LLVM's loop vectorizer cannot widen a
/// vector.reduce intrinsic across thread indices, scalar ops it can.
struct SmallReductionUnrolling : OpConversionPattern<vector::ReductionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ReductionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result = adaptor.getAcc();
    for (int64_t k = 0, e = op.getSourceVectorType().getNumElements(); k < e;
         ++k) {
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getVector(), k);
      result = result ? vector::makeArithReduction(rewriter, loc, op.getKind(),
                                                   result, element,
                                                   op.getFastmathAttr())
                      : element;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The largest vector whose reductions are unrolled into scalar ops.
constexpr int64_t kMaxUnrolledReduction = 16;

struct AdjitLowerToStdPass
    : adjit::impl::AdjitLowerToStdBase<AdjitLowerToStdPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    bool strided = stridedArrays;
    converter.addConversion([strided](ArrayType type) -> Type {
      SmallVector<int64_t> shape(type.getRank(), ShapedType::kDynamic);
      llvm::append_range(shape, type.getComponentShape());
      if (!strided)
        return MemRefType::get(shape, type.getScalarType());
      // Dynamic strides for the array dimensions; an element's components
      // stay row-major and contiguous.
      SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
      ArrayRef<int64_t> components = type.getComponentShape();
      SmallVector<int64_t> componentStrides(components.size(), 1);
      for (int i = int(components.size()) - 2; i >= 0; --i)
        componentStrides[i] = componentStrides[i + 1] * components[i + 1];
      llvm::append_range(strides, componentStrides);
      return MemRefType::get(
          shape, type.getScalarType(),
          StridedLayoutAttr::get(type.getContext(), /*offset=*/0, strides));
    });

    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, memref::MemRefDialect,
                           vector::VectorDialect, func::FuncDialect,
                           LLVM::LLVMDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    target.addIllegalDialect<AdjitDialect>();
    // Launch state and prints: replaced by the launch passes.
    target.addLegalOp<TidOp, TidBoundsOp, ErrorRecordOp, LaunchConditionOp,
                      IndexRangeOp, PrintOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<vector::ReductionOp>(
        [](vector::ReductionOp op) {
          VectorType type = op.getSourceVectorType();
          return type.getRank() != 1 || type.isScalable() ||
                 type.getNumElements() > kMaxUnrolledReduction ||
                 isa<vector::MaskOp>(op->getParentOp());
        });
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(ctx);
    patterns.add<LoadLowering, LoadComponentLowering, StoreLowering,
                 StoreComponentLowering, AtomicLowering<AtomicAddOp>,
                 AtomicLowering<AtomicMinOp>, AtomicLowering<AtomicMaxOp>,
                 AtomicLowering<AtomicExchOp>, AtomicLowering<AtomicAndOp>,
                 AtomicLowering<AtomicOrOp>, AtomicLowering<AtomicXorOp>,
                 AtomicCasLowering,
                 DimLowering, ArrayAtAddressLowering, AccessErrorLowering, CheckIndexLowering,
                 ExtractLowering, InsertLowering, StopGradientLowering,
                 CallLowering, SmallReductionUnrolling>(converter, ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    expandAllocaScopes(getOperation());
  }
};

} // namespace
