//===- ApproximateMath.cpp - inline polynomial f32 math -------------------===//
//
// libm has no vector entry points LLVM can call here, so a `math.sin` on
// `vector<8xf32>` in a SIMD body became eight scalar libm calls. This pass
// rewrites f32 transcendental math (scalars and vectors alike, so the SIMD
// body and the scalar tail of a launch agree bit for bit) into range
// reduction and polynomials built from arith ops (MLIR's math
// approximations), which vectorize and do not depend on the host's libm.
// Which functions are rewritten is decided by their measured error bounds
// (docs/simd.md, tests/python/test_fast_math.py).
//
//===----------------------------------------------------------------------===//

#include "adjit/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITAPPROXIMATEMATH
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;

namespace {

/// The functions rewritten by default: those whose approximations stay
/// within a few ulp of the correctly rounded result over the whole f32
/// domain (docs/simd.md). MLIR's sin and cos reduce the argument with one
/// f32 multiple of pi/2 (wrong past a few thousand), and its atan is off by
/// 40 ulp: those stay libm calls.
constexpr StringLiteral kDefaultFunctions[] = {"exp", "log", "log2", "tanh",
                                               "erf"};

/// Marks a math op that must stay libm's (a builtin that needs its result
/// correctly rounded, e.g. erfinv's Newton step on erf).
constexpr StringLiteral kLibmAttr = "adjit.libm";

/// A constant of `type` (f32 or a vector of f32).
Value f32Constant(OpBuilder &b, Location loc, Type type, double value) {
  auto attr = b.getF32FloatAttr(value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(shaped, attr));
  return arith::ConstantOp::create(b, loc, type, attr);
}

/// MLIR's approximations build 2^k from exponent bits, so they know no
/// subnormals: log and log2 misread subnormal inputs and exp flushes
/// subnormal results to zero; and erf(-0) came out +0. Around each chosen
/// op: log(x) = log(x 2^24) - 24 ln 2 for subnormal x (log2 likewise, - 24),
/// exp(x) = exp(x/2)^2 for x < -87 (x/2 is exact; the square rounds once
/// into the subnormals), and erf takes the sign of x (it is odd).
void fixEdgeCases(Operation *root, const llvm::StringSet<> &chosen) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::LogOp, math::Log2Op, math::ExpOp, math::ErfOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
        chosen.contains(op->getName().stripDialect()) &&
        !op->hasAttr(kLibmAttr))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type type = x.getType();
    auto constant = [&](double value) {
      return f32Constant(b, loc, type, value);
    };
    // (the argument first, then the op on it, then the result's fix-up)
    auto applyTo = [&](Value argument) {
      Operation *inner = b.clone(*op);
      inner->setOperand(0, argument);
      return inner->getResult(0);
    };
    Value result;
    if (isa<math::ErfOp>(op)) {
      result = math::CopySignOp::create(b, loc, applyTo(x), x);
    } else if (isa<math::ExpOp>(op)) {
      Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                         constant(-87.0));
      Value e = applyTo(arith::SelectOp::create(
          b, loc, tiny, arith::MulFOp::create(b, loc, x, constant(0.5)), x));
      result = arith::SelectOp::create(b, loc, tiny,
                                       arith::MulFOp::create(b, loc, e, e), e);
    } else {
      double shift = isa<math::LogOp>(op) ? 24.0 * std::log(2.0) : 24.0;
      Value subnormal = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, x),
          constant(0x1p-126));
      Value log = applyTo(arith::SelectOp::create(
          b, loc, subnormal, arith::MulFOp::create(b, loc, x, constant(0x1p24)),
          x));
      result = arith::SubFOp::create(
          b, loc, log,
          arith::SelectOp::create(b, loc, subnormal, constant(shift),
                                  constant(0.0)));
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

struct ApproximateMathPass
    : public adjit::impl::AdjitApproximateMathBase<ApproximateMathPass> {
  using AdjitApproximateMathBase::AdjitApproximateMathBase;

  void runOnOperation() override {
    llvm::StringSet<> chosen;
    if (functions.empty())
      for (StringRef name : kDefaultFunctions)
        chosen.insert(name);
    else
      for (const std::string &name : functions)
        chosen.insert(name);
    auto isChosen = [&](StringRef name) {
      name.consume_front("math.");
      return chosen.contains(name);
    };
    fixEdgeCases(getOperation(), chosen);
    // The patterns rewrite every op of a chosen kind: collect the others
    // (marked, f64, ...) first and rewrite only the ops to approximate.
    SmallVector<Operation *> targets;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          isChosen(op->getName().getStringRef()) && !op->hasAttr(kLibmAttr))
        targets.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isChosen);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    FrozenRewritePatternSet frozen(std::move(patterns));
    (void)applyOpPatternsGreedily(targets, frozen, config);
  }
};

} // namespace
