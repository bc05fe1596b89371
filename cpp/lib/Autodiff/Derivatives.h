//===- Derivatives.h - partial derivatives shared by both AD modes -*- C++ -*-===//
//
// The adjoint rules (AdjointRules.cpp) and the tangent rules
// (TangentRules.cpp) apply the same partial derivatives, in opposite
// directions; each is written here once. Every helper is elementwise, so it
// serves float scalars and vectors alike.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_AUTODIFF_DERIVATIVES_H
#define ADJIT_AUTODIFF_DERIVATIVES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <optional>

namespace mlir::adjit::derivatives {

/// A constant of float scalar or vector type `type` with every element `v`.
inline Value splatConstant(OpBuilder &b, Location loc, Type type, double v) {
  Type elemTy = type;
  if (auto vecTy = dyn_cast<VectorType>(type))
    elemTy = vecTy.getElementType();
  auto elem = b.getFloatAttr(elemTy, v);
  if (auto vecTy = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecTy, elem));
  return arith::ConstantOp::create(b, loc, elem);
}

inline Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
inline Value div(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}
inline Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
inline Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
inline Value neg(OpBuilder &b, Location loc, Value x) {
  return arith::NegFOp::create(b, loc, x);
}
inline Value cst(OpBuilder &b, Location loc, Value like, double v) {
  return splatConstant(b, loc, like.getType(), v);
}

//===----------------------------------------------------------------------===//
// d/dx f(x) of the unary math ops, in terms of x (the operand) and r = f(x)
//===----------------------------------------------------------------------===//

using UnaryDerivative = Value (*)(OpBuilder &, Location, Value x, Value r);

inline Value dSqrt(OpBuilder &b, Location l, Value, Value r) {
  return div(b, l, cst(b, l, r, 0.5), r);
}
inline Value dExp(OpBuilder &, Location, Value, Value r) { return r; }
inline Value dLog(OpBuilder &b, Location l, Value x, Value) {
  return div(b, l, cst(b, l, x, 1.0), x);
}
inline Value dLog2(OpBuilder &b, Location l, Value x, Value) {
  return div(b, l, cst(b, l, x, 1.0 / std::log(2.0)), x);
}
inline Value dLog10(OpBuilder &b, Location l, Value x, Value) {
  return div(b, l, cst(b, l, x, 1.0 / std::log(10.0)), x);
}
inline Value dSin(OpBuilder &b, Location l, Value x, Value) {
  return math::CosOp::create(b, l, x);
}
inline Value dCos(OpBuilder &b, Location l, Value x, Value) {
  return neg(b, l, math::SinOp::create(b, l, x));
}
inline Value dTan(OpBuilder &b, Location l, Value, Value r) {
  return add(b, l, cst(b, l, r, 1.0), mul(b, l, r, r));
}
inline Value oneMinusSquare(OpBuilder &b, Location l, Value x) {
  return sub(b, l, cst(b, l, x, 1.0), mul(b, l, x, x));
}
inline Value dAsin(OpBuilder &b, Location l, Value x, Value) {
  return div(b, l, cst(b, l, x, 1.0),
             math::SqrtOp::create(b, l, oneMinusSquare(b, l, x)));
}
inline Value dAcos(OpBuilder &b, Location l, Value x, Value r) {
  return neg(b, l, dAsin(b, l, x, r));
}
inline Value dAtan(OpBuilder &b, Location l, Value x, Value) {
  return div(b, l, cst(b, l, x, 1.0),
             add(b, l, cst(b, l, x, 1.0), mul(b, l, x, x)));
}
inline Value dSinh(OpBuilder &b, Location l, Value x, Value) {
  return math::CoshOp::create(b, l, x);
}
inline Value dCosh(OpBuilder &b, Location l, Value x, Value) {
  return math::SinhOp::create(b, l, x);
}
inline Value dTanh(OpBuilder &b, Location l, Value, Value r) {
  return oneMinusSquare(b, l, r);
}
inline Value dCbrt(OpBuilder &b, Location l, Value, Value r) {
  // d/dx x^(1/3) = 1 / (3 r^2) (infinite at 0, as the function's slope)
  return div(b, l, cst(b, l, r, 1.0),
             mul(b, l, cst(b, l, r, 3.0), mul(b, l, r, r)));
}
inline Value dErf(OpBuilder &b, Location l, Value x, Value) {
  // 2 / sqrt(pi) * exp(-x^2)
  return mul(b, l, cst(b, l, x, 2.0 / std::sqrt(M_PI)),
             math::ExpOp::create(b, l, neg(b, l, mul(b, l, x, x))));
}
inline Value dErfc(OpBuilder &b, Location l, Value x, Value r) {
  return neg(b, l, dErf(b, l, x, r));
}
inline Value dAbs(OpBuilder &b, Location l, Value x, Value) {
  Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x,
                                         cst(b, l, x, 0.0));
  return arith::SelectOp::create(b, l, negative, cst(b, l, x, -1.0),
                                 cst(b, l, x, 1.0));
}

//===----------------------------------------------------------------------===//
// Binary ops: the partial derivatives with respect to each operand
//===----------------------------------------------------------------------===//

/// pow(x, y): d/dx = y * x^(y-1).
inline Value dPowDx(OpBuilder &b, Location l, Value x, Value y) {
  return mul(b, l, y, math::PowFOp::create(b, l, x, sub(b, l, y, cst(b, l, y, 1.0))));
}
/// pow(x, y) = r: d/dy = r * log(x).
inline Value dPowDy(OpBuilder &b, Location l, Value x, Value r) {
  return mul(b, l, r, math::LogOp::create(b, l, x));
}
/// atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2); this is
/// x^2 + y^2.
inline Value atan2Norm(OpBuilder &b, Location l, Value y, Value x) {
  return add(b, l, mul(b, l, x, x), mul(b, l, y, y));
}
/// x rem y (C's fmod: x - trunc(x / y) y, the dividend's sign): d/dx = 1;
/// this is d/dy = -trunc(x / y).
inline Value dRemDy(OpBuilder &b, Location l, Value x, Value y) {
  return neg(b, l, math::TruncOp::create(b, l, div(b, l, x, y)));
}
/// copysign(x, y) = |x| sign(y): d/dx = copysign(1, x) copysign(1, y) (the
/// signs of zeros included); d/dy = 0.
inline Value dCopySignDx(OpBuilder &b, Location l, Value x, Value y) {
  Value one = cst(b, l, x, 1.0);
  Value signX = math::CopySignOp::create(b, l, one, x);
  Value signY = math::CopySignOp::create(b, l, one, y);
  return mul(b, l, signX, signY);
}
/// max/min select the lhs where `pred(lhs, rhs)` holds (the lhs on ties).
inline Value picksLhs(OpBuilder &b, Location l, arith::CmpFPredicate pred,
                      Value lhs, Value rhs) {
  return arith::CmpFOp::create(b, l, pred, lhs, rhs);
}

// --- matrix products (tiles' vector.contract) --------------------------------

/// The indexing maps of op(lhs) op(rhs) + acc over dims (i, j, r), the
/// result (i, j): lhs (i, r), or (r, i) when `transposeLhs`; rhs (r, j),
/// or (j, r) when `transposeRhs`.
inline SmallVector<AffineMap> matmulMaps(MLIRContext *ctx, bool transposeLhs,
                                         bool transposeRhs) {
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
             r = getAffineDimExpr(2, ctx);
  auto map = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, ctx);
  };
  return {transposeLhs ? map(r, i) : map(i, r),
          transposeRhs ? map(j, r) : map(r, j), map(i, j)};
}

/// For a matrix product of floats, op(A) op(B) + acc summed over one
/// dimension without masks (tile_matmul's form, and the products its
/// derivatives are): whether A and B are transposed (see matmulMaps).
/// These are the only contractions the derivative rules take.
struct MatmulForm {
  bool transposeLhs, transposeRhs;
};
inline std::optional<MatmulForm> matmulForm(vector::ContractionOp op) {
  auto iterators = op.getIteratorTypesArray();
  auto accTy = dyn_cast<VectorType>(op.getAccType());
  if (op.getKind() != vector::CombiningKind::ADD || iterators.size() != 3 ||
      iterators[0] != vector::IteratorType::parallel ||
      iterators[1] != vector::IteratorType::parallel ||
      iterators[2] != vector::IteratorType::reduction || !accTy ||
      !isa<FloatType>(accTy.getElementType()))
    return std::nullopt;
  auto maps = op.getIndexingMapsArray();
  for (bool tl : {false, true})
    for (bool tr : {false, true})
      if (maps == matmulMaps(op.getContext(), tl, tr))
        return MatmulForm{tl, tr};
  return std::nullopt;
}

/// op(lhs) op(rhs) + acc (see matmulMaps) as a vector.contract.
inline Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    Value acc, bool transposeLhs, bool transposeRhs) {
  MLIRContext *ctx = b.getContext();
  auto iterator = [&](vector::IteratorType t) {
    return vector::IteratorTypeAttr::get(ctx, t);
  };
  ArrayAttr iterators = b.getArrayAttr(
      {iterator(vector::IteratorType::parallel),
       iterator(vector::IteratorType::parallel),
       iterator(vector::IteratorType::reduction)});
  return vector::ContractionOp::create(
      b, loc, lhs, rhs, acc,
      b.getAffineMapArrayAttr(matmulMaps(ctx, transposeLhs, transposeRhs)),
      iterators);
}

} // namespace mlir::adjit::derivatives

#endif // ADJIT_AUTODIFF_DERIVATIVES_H
