//===- ApproximateMath.cpp - inline polynomial f32 math -------------------===//
//
// libm has no vector entry points LLVM can call here, so a `math.sin` on
// `vector<8xf32>` in a SIMD body became eight scalar libm calls. This pass
// rewrites f32 transcendental math (scalars and vectors alike, so the SIMD
// body and the scalar tail of a launch agree bit for bit) into range
// reduction and polynomials built from arith ops (MLIR's math
// approximations), which vectorize and do not depend on the host's libm.
// Which functions are rewritten is decided by their measured error bounds
// (docs/simd.md, tests/python/builtin_functions/test_fast_math.py).
//
//===----------------------------------------------------------------------===//

#include "adjit/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <map>
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
/// domain (docs/simd.md). The trigonometric ones are adjit's own (below),
/// computed in f64 and rounded once: MLIR's sin and cos reduce the argument
/// with one f32 multiple of pi/2 (5e8 ulp off at 9467), its atan is off by
/// 40 ulp.
constexpr StringLiteral kDefaultFunctions[] = {
    "exp", "log", "log2", "tanh", "erf", "sin",
    "cos", "tan", "atan", "atan2", "asin", "acos"};

/// The functions rewritten by adjit's own code rather than MLIR's patterns.
constexpr StringLiteral kOwnFunctions[] = {"sin",   "cos",  "tan", "atan",
                                           "atan2", "asin", "acos"};

/// Marks a math op that must stay libm's (a builtin that needs its result
/// correctly rounded, e.g. erfinv's Newton step on erf).
constexpr StringLiteral kLibmAttr = "adjit.libm";

/// `scalar` as a constant of `type`: its own type, or a vector of it.
Value constantOf(OpBuilder &b, Location loc, Type type, TypedAttr scalar) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(shaped, scalar));
  return arith::ConstantOp::create(b, loc, type, scalar);
}

/// A constant of `type` (f32 or a vector of f32).
Value f32Constant(OpBuilder &b, Location loc, Type type, double value) {
  return constantOf(b, loc, type, b.getF32FloatAttr(value));
}

/// The ops of the kinds `Ops` under `root` with f32 (element) results that
/// `chosen` names, not marked to stay libm's.
template <typename... Ops>
SmallVector<Operation *> chosenOps(Operation *root,
                                   const llvm::StringSet<> &chosen) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<Ops...>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
        chosen.contains(op->getName().stripDialect()) &&
        !op->hasAttr(kLibmAttr))
      ops.push_back(op);
  });
  return ops;
}

/// MLIR's approximations build 2^k from exponent bits, so they know no
/// subnormals: log and log2 misread subnormal inputs and exp flushes
/// subnormal results to zero; and erf(-0) came out +0. Around each chosen
/// op: log(x) = log(x 2^24) - 24 ln 2 for subnormal x (log2 likewise, - 24),
/// exp(x) = exp(x/2)^2 for x < -87 (x/2 is exact; the square rounds once
/// into the subnormals), and erf takes the sign of x (it is odd).
void fixEdgeCases(Operation *root, const llvm::StringSet<> &chosen) {
  SmallVector<Operation *> ops =
      chosenOps<math::LogOp, math::Log2Op, math::ExpOp, math::ErfOp>(root,
                                                                     chosen);
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

/// `type` (f32 or a vector of f32) with `element` as its element type.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

// sin and cos in double precision, rounded once to f32 (within 0.5 ulp and
// a hair): x = k pi/2 + r with k = round(x 2/pi) and pi/2 split into a 33-bit
// head (k P1 is exact for |k| < 2^20) and a tail, then sin(r) and cos(r) on
// [-pi/4, pi/4] by polynomials (least-squares fits to the float64 functions
// on Chebyshev nodes: relative errors 5e-12 and 1e-13), chosen and negated
// by k's quadrant. |x| > 2^20 (and NaN, inf) take libm's result, lane by
// lane, behind a branch no ordinary argument takes.
constexpr double kTwoOverPi = 0.6366197723675814;
constexpr double kPiOverTwoHead = 1.5707963267341256;
constexpr double kPiOverTwoTail = 6.077100506506192e-11;
constexpr double kReducedLimit = 0x1p20;
constexpr double kSinCoefficients[] = {-0.16666666642509254, 0.008333329457363585,
                                       -0.0001983935229097904,
                                       2.7184444758628773e-06};
constexpr double kCosCoefficients[] = {0.041666666619534644, -0.001388888350574082,
                                       2.4799461823857305e-05,
                                       -2.720589441676893e-07};

enum class Trig { Sin, Cos, Tan };

/// sin, cos or tan of `x` (f32 or a vector of f32) for |x| <= 2^20.
Value reducedTrig(OpBuilder &b, Location loc, Value x, Value outOfRange,
                  Trig function) {
  Type f32Type = x.getType();
  Type f64Type = withElement(f32Type, b.getF64Type());
  Type i32Type = withElement(f32Type, b.getI32Type());
  auto c = [&](double value) {
    return constantOf(b, loc, f64Type, b.getF64FloatAttr(value));
  };
  auto mul = [&](Value l, Value r) { return arith::MulFOp::create(b, loc, l, r); };
  auto add = [&](Value l, Value r) { return arith::AddFOp::create(b, loc, l, r); };
  auto sub = [&](Value l, Value r) { return arith::SubFOp::create(b, loc, l, r); };
  auto horner = [&](ArrayRef<double> coefficients, Value z) {
    Value p = c(coefficients.back());
    for (double coefficient : llvm::reverse(coefficients.drop_back()))
      p = add(c(coefficient), mul(p, z));
    return p;
  };
  Value wide = arith::ExtFOp::create(b, loc, f64Type, x);
  Value k = math::RoundEvenOp::create(b, loc, mul(wide, c(kTwoOverPi)));
  // (lanes out of range: k = 0, so the integer conversion below is defined)
  k = arith::SelectOp::create(b, loc, outOfRange, c(0.0), k);
  Value r = sub(sub(wide, mul(k, c(kPiOverTwoHead))), mul(k, c(kPiOverTwoTail)));
  Value z = mul(r, r);
  Value sinR = add(r, mul(mul(r, z), horner(kSinCoefficients, z)));
  Value cosR = add(sub(c(1.0), mul(c(0.5), z)),
                   mul(mul(z, z), horner(kCosCoefficients, z)));
  // quadrant q = k mod 4 (cos: of k + 1): odd takes the other function,
  // 2 and 3 negate
  auto i = [&](int32_t value) {
    return constantOf(b, loc, i32Type, b.getI32IntegerAttr(value));
  };
  Value q = arith::FPToSIOp::create(b, loc, i32Type, k);
  if (function == Trig::Cos)
    q = arith::AddIOp::create(b, loc, q, i(1));
  auto bitSet = [&](int64_t bit) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 arith::AndIOp::create(b, loc, q, i(bit)), i(0));
  };
  Value value;
  if (function == Trig::Tan) { // tan(r + k pi/2): sin/cos, or -cos/sin for odd k
    auto div = [&](Value l, Value r) { return arith::DivFOp::create(b, loc, l, r); };
    value = arith::SelectOp::create(b, loc, bitSet(1),
                                    arith::NegFOp::create(b, loc, div(cosR, sinR)),
                                    div(sinR, cosR));
  } else {
    value = arith::SelectOp::create(b, loc, bitSet(1), cosR, sinR);
    value = arith::SelectOp::create(
        b, loc, bitSet(2), arith::NegFOp::create(b, loc, value), value);
  }
  Value result = arith::TruncFOp::create(b, loc, f32Type, value);
  if (function != Trig::Cos) { // sin(-0) = tan(-0) = -0 (r = -0 - 0 k P1 came out +0)
    Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                       f32Constant(b, loc, f32Type, 0.0));
    result = arith::SelectOp::create(b, loc, zero, x, result);
  }
  return result;
}

/// Rewrites the chosen f32 sin, cos and tan ops (see reducedTrig).
void rewriteTrig(Operation *root, const llvm::StringSet<> &chosen) {
  SmallVector<Operation *> ops =
      chosenOps<math::SinOp, math::CosOp, math::TanOp>(root, chosen);
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type type = x.getType();
    // (unordered: NaN is out of range too)
    Value outOfRange = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::UGT, math::AbsFOp::create(b, loc, x),
        f32Constant(b, loc, type, kReducedLimit));
    Trig function = isa<math::SinOp>(op)   ? Trig::Sin
                    : isa<math::CosOp>(op) ? Trig::Cos
                                           : Trig::Tan;
    Value reduced = reducedTrig(b, loc, x, outOfRange, function);
    Value any = outOfRange;
    if (auto vector = dyn_cast<VectorType>(type)) { // (lanes: or-reduce)
      auto flat = VectorType::get({vector.getNumElements()}, b.getI1Type());
      Value lanes = vector.getRank() == 1
                        ? outOfRange
                        : vector::ShapeCastOp::create(b, loc, flat, outOfRange)
                              .getResult();
      any = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, lanes);
    }
    auto branch = scf::IfOp::create(
        b, loc, any,
        [&](OpBuilder &then, Location loc) {
          Operation *libm = then.clone(*op);
          libm->setAttr(kLibmAttr, then.getUnitAttr());
          Value picked = arith::SelectOp::create(then, loc, outOfRange,
                                                 libm->getResult(0), reduced);
          scf::YieldOp::create(then, loc, picked);
        },
        [&](OpBuilder &otherwise, Location loc) {
          scf::YieldOp::create(otherwise, loc, reduced);
        });
    op->getResult(0).replaceAllUsesWith(branch.getResult(0));
    op->erase();
  }
}

// atan, atan2, asin and acos in double precision, rounded once to f32:
// atan(a) for a >= 0 reduces a > 1 to pi/2 - atan(1/a), then a > tan(pi/8)
// to pi/4 + atan((a - 1) / (a + 1)), and takes atan(u) = u + u^3 P(u^2) on
// |u| <= tan(pi/8) (a least-squares fit to the function on Chebyshev nodes:
// relative error 3e-14). atan2(y, x) is atan(min/max of |y|, |x|) moved to
// its octant and given y's sign; the ratio is formed in f64, exactly enough
// for f32 operands, and zeros, infinities and NaN come out as IEEE's atan2
// gives them with no branch (a NaN x by a last select).
// asin(x) = atan2(x, sqrt((1 - x)(1 + x))) and
// acos(x) = atan2(sqrt((1 - x)(1 + x)), x), NaN outside [-1, 1].
constexpr double kTanPiOverEight = 0.41421356237309503;
constexpr double kPiOverTwo = 1.5707963267948966;
constexpr double kPiOverFour = 0.7853981633974483;
constexpr double kPi = 3.141592653589793;
constexpr double kAtanCoefficients[] = {
    -0.33333333331594883, 0.19999999672211463,  -0.1428569297127142,
    0.1111043583944393,   -0.09078963915636283, 0.07567357304677394,
    -0.05886859582139992, 0.030834072665852322};

/// f64 arithmetic on values of one shape (f64 or a vector of f64).
struct WideMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(double value) const {
    return constantOf(b, loc, type, b.getF64FloatAttr(value));
  }
  Value add(Value l, Value r) const { return arith::AddFOp::create(b, loc, l, r); }
  Value sub(Value l, Value r) const { return arith::SubFOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) const { return arith::MulFOp::create(b, loc, l, r); }
  Value div(Value l, Value r) const { return arith::DivFOp::create(b, loc, l, r); }
  Value cmp(arith::CmpFPredicate predicate, Value l, Value r) const {
    return arith::CmpFOp::create(b, loc, predicate, l, r);
  }
  Value select(Value condition, Value t, Value f) const {
    return arith::SelectOp::create(b, loc, condition, t, f);
  }

  /// atan(a) for a >= 0 (NaN stays NaN).
  Value atanOfNonNegative(Value a) const {
    Value inverted = cmp(arith::CmpFPredicate::OGT, a, c(1.0));
    a = select(inverted, div(c(1.0), a), a);
    Value shifted = cmp(arith::CmpFPredicate::OGT, a, c(kTanPiOverEight));
    Value u = select(shifted, div(sub(a, c(1.0)), add(a, c(1.0))), a);
    Value z = mul(u, u);
    Value p = c(ArrayRef<double>(kAtanCoefficients).back());
    for (double coefficient :
         llvm::reverse(ArrayRef<double>(kAtanCoefficients).drop_back()))
      p = add(c(coefficient), mul(p, z));
    Value r = add(u, mul(mul(u, z), p));
    r = select(shifted, add(r, c(kPiOverFour)), r);
    return select(inverted, sub(c(kPiOverTwo), r), r);
  }

  /// atan2(y, x) (IEEE's zeros, infinities and NaN included).
  Value atan2(Value y, Value x) const {
    Value ay = math::AbsFOp::create(b, loc, y);
    Value ax = math::AbsFOp::create(b, loc, x);
    Value steep = cmp(arith::CmpFPredicate::OGT, ay, ax);
    Value ratio = select(steep, div(ax, ay), div(ay, ax));
    // (0/0 and inf/inf: y = 0 gives 0 (then 0 or pi), |y| = |x| gives 1)
    ratio = select(cmp(arith::CmpFPredicate::OEQ, ay, ax), c(1.0), ratio);
    ratio = select(cmp(arith::CmpFPredicate::OEQ, ay, c(0.0)), c(0.0), ratio);
    Value r = atanOfNonNegative(ratio);
    r = select(steep, sub(c(kPiOverTwo), r), r);
    Value xNegative = cmp(arith::CmpFPredicate::OLT,
                          math::CopySignOp::create(b, loc, c(1.0), x), c(0.0));
    r = select(xNegative, sub(c(kPi), r), r);
    r = math::CopySignOp::create(b, loc, r, y);
    return select(cmp(arith::CmpFPredicate::UNO, x, x), x, r); // (atan2(0, NaN))
  }

  /// sqrt((1 - x)(1 + x)): exact enough near |x| = 1; NaN for |x| > 1.
  Value cosineOfArcsine(Value x) const {
    return math::SqrtOp::create(b, loc, mul(sub(c(1.0), x), add(c(1.0), x)));
  }
};

/// Rewrites the chosen f32 atan, atan2, asin and acos ops (see WideMath).
void rewriteInverseTrig(Operation *root, const llvm::StringSet<> &chosen) {
  SmallVector<Operation *> ops =
      chosenOps<math::AtanOp, math::Atan2Op, math::AsinOp, math::AcosOp>(
          root, chosen);
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type f32Type = op->getResult(0).getType();
    WideMath m{b, loc, withElement(f32Type, b.getF64Type())};
    auto wide = [&](Value v) { return arith::ExtFOp::create(b, loc, m.type, v); };
    Value x = wide(op->getOperand(0));
    Value result;
    if (isa<math::AtanOp>(op))
      result = math::CopySignOp::create(
          b, loc, m.atanOfNonNegative(math::AbsFOp::create(b, loc, x)), x);
    else if (isa<math::Atan2Op>(op))
      result = m.atan2(x, wide(op->getOperand(1)));
    else if (isa<math::AsinOp>(op))
      result = m.atan2(x, m.cosineOfArcsine(x));
    else
      result = m.atan2(m.cosineOfArcsine(x), x);
    op->getResult(0).replaceAllUsesWith(
        arith::TruncFOp::create(b, loc, f32Type, result));
    op->erase();
  }
}

/// A name for `type` in a helper's symbol: f32, v8f32, v3x8f32.
std::string typeSuffix(Type type) {
  std::string suffix;
  if (auto vector = dyn_cast<VectorType>(type)) {
    suffix = "v";
    llvm::interleave(
        vector.getShape(), [&](int64_t d) { suffix += std::to_string(d); },
        [&] { suffix += "x"; });
  }
  return suffix + "f32";
}

/// Uses of one function (and type) in a module up to which its code stays
/// inline: a call costs a pointwise sin kernel 20%.
constexpr size_t kInlineUses = 4;

/// Replaces the chosen one-operand f32 math ops of each kind and type used
/// more than kInlineUses times by calls to a private function holding just
/// that op (the rewrites below then work inside it), so its approximation is
/// compiled once per module rather than at every use: a kernel with 80 sin
/// calls took 3x as long to compile (6.3 s for its adjoint) with them all
/// inline. The functions are marked like SIMD bodies: not inlined, and left
/// wide by the host pipeline.
void outlineIntoHelpers(ModuleOp module, const llvm::StringSet<> &chosen) {
  std::map<std::string, SmallVector<Operation *>> uses; // (by name: a fixed order)
  module.walk([&](Operation *op) {
    if (isa<math::MathDialect>(op->getDialect()) && op->getNumOperands() == 1 &&
        op->getNumResults() == 1 &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
        chosen.contains(op->getName().stripDialect()) &&
        !op->hasAttr(kLibmAttr))
      uses[("adjit_" + op->getName().stripDialect() + "_" +
            typeSuffix(op->getResult(0).getType()))
               .str()]
          .push_back(op);
  });
  SymbolTable symbols(module);
  for (auto &[name, ops] : uses) {
    if (ops.size() <= kInlineUses)
      continue;
    Operation *first = ops.front();
    Type type = first->getResult(0).getType();
    auto builder = OpBuilder::atBlockEnd(module.getBody());
    auto helper = func::FuncOp::create(builder, module.getLoc(), name,
                                       builder.getFunctionType({type}, {type}));
    helper.setPrivate();
    helper->setAttr("adjit.simd_body", builder.getUnitAttr());
    symbols.insert(helper); // (a fresh name if the module has this one)
    Block *entry = helper.addEntryBlock();
    auto body = OpBuilder::atBlockEnd(entry);
    Operation *inner = body.clone(*first);
    inner->setOperand(0, entry->getArgument(0));
    func::ReturnOp::create(body, first->getLoc(), inner->getResults());
    for (Operation *op : ops) {
      OpBuilder b(op);
      auto call =
          func::CallOp::create(b, op->getLoc(), helper, op->getOperands());
      op->getResult(0).replaceAllUsesWith(call.getResult(0));
      op->erase();
    }
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
      // (the trigonometric functions: adjit's own, rewriteTrig and
      // rewriteInverseTrig)
      return chosen.contains(name) && !llvm::is_contained(kOwnFunctions, name);
    };
    outlineIntoHelpers(getOperation(), chosen);
    fixEdgeCases(getOperation(), chosen);
    rewriteTrig(getOperation(), chosen);
    rewriteInverseTrig(getOperation(), chosen);
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
