//===- AdjitDialect.cpp - adjit dialect, types and op verifiers ----------===//

#include "adjit/AdjitDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::adjit;

#include "AdjitDialect.cpp.inc"

#include "ArrayAccessInterface.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "AdjitTypes.cpp.inc"

#define GET_OP_CLASSES
#include "AdjitOps.cpp.inc"

namespace {
/// Device functions are inlined into kernels (before differentiation, and by
/// LLVM anyway); every adjit op may be inlined.
struct AdjitInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *callable, bool) const final {
    // Device functions with a custom adjoint stay calls until the adjoint
    // pass has seen them (the frontend marks them no_inline).
    return !callable->hasAttr("no_inline");
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void AdjitDialect::initialize() {
  addInterfaces<AdjitInlinerInterface>();
  addTypes<
#define GET_TYPEDEF_LIST
#include "AdjitTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "AdjitOps.cpp.inc"
      >();
}

bool mlir::adjit::isKernel(Operation *op) {
  return isa<func::FuncOp>(op) &&
         op->hasAttr(AdjitDialect::getKernelAttrName());
}

FailureOr<Type> mlir::adjit::getComponentType(Type aggregate,
                                              ArrayRef<int64_t> position) {
  auto vecTy = dyn_cast<VectorType>(aggregate);
  if (!vecTy) {
    if (position.empty())
      return aggregate;
    return failure();
  }
  ArrayRef<int64_t> shape = vecTy.getShape();
  if (position.size() > shape.size())
    return failure();
  for (auto [p, extent] : llvm::zip(position, shape))
    if (p < 0 || p >= extent)
      return failure();
  if (position.size() == shape.size())
    return vecTy.getElementType();
  return Type(VectorType::get(shape.drop_front(position.size()),
                              vecTy.getElementType()));
}

//===----------------------------------------------------------------------===//
// ArrayType
//===----------------------------------------------------------------------===//

/// The most scalars in an array element vector or matrix
/// (adjit.types.MAX_COMPONENTS: an 8x8 matrix, a 64-vector).
static constexpr int64_t kMaxComponents = 64;

static bool isArrayScalar(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64() || t.isInteger(8) ||
         t.isInteger(16) || t.isInteger(32) || t.isInteger(64);
}

LogicalResult ArrayType::verify(function_ref<InFlightDiagnostic()> emitError,
                                Type elementType, unsigned rank) {
  if (rank < 1 || rank > 4)
    return emitError() << "array rank must be 1 to 4, got " << rank;
  if (isArrayScalar(elementType))
    return success();
  auto vecTy = dyn_cast<VectorType>(elementType);
  if (!vecTy || vecTy.isScalable() || vecTy.getRank() < 1 || vecTy.getRank() > 2 ||
      !isArrayScalar(vecTy.getElementType()) ||
      llvm::any_of(vecTy.getShape(),
                   [](int64_t n) { return n < 2; }) ||
      vecTy.getNumElements() > kMaxComponents)
    return emitError() << "array element must be f16, bf16, f32, f64, i8, i16, i32, i64, or a "
                          "vector<N x T> / matrix vector<R x C x T> of them "
                          "with extents of at least 2 and at most "
                       << kMaxComponents << " scalars, got " << elementType;
  return success();
}

Type ArrayType::getScalarType() const {
  if (auto vecTy = dyn_cast<VectorType>(getElementType()))
    return vecTy.getElementType();
  return getElementType();
}

ArrayRef<int64_t> ArrayType::getComponentShape() const {
  if (auto vecTy = dyn_cast<VectorType>(getElementType()))
    return vecTy.getShape();
  return {};
}

//===----------------------------------------------------------------------===//
// Op verifiers
//===----------------------------------------------------------------------===//

/// Checks that an access op addresses its array with one index per dimension.
static LogicalResult verifyIndices(Operation *op, Value array,
                                   ValueRange indices) {
  auto arrayTy = cast<ArrayType>(array.getType());
  if (indices.size() != arrayTy.getRank())
    return op->emitOpError() << "expects " << arrayTy.getRank()
                             << " indices for " << arrayTy << ", got "
                             << indices.size();
  return success();
}

/// Checks that `position` addresses a component of type `expected` in
/// `aggregate`. `what` names the value that should have `expected` type.
static LogicalResult verifyComponent(Operation *op, Type aggregate,
                                     ArrayRef<int64_t> position, Type expected,
                                     StringRef what) {
  FailureOr<Type> componentTy = getComponentType(aggregate, position);
  if (failed(componentTy))
    return op->emitOpError() << "position [" << position
                             << "] does not address a component of "
                             << aggregate;
  if (*componentTy != expected)
    return op->emitOpError() << what << " type " << expected
                             << " does not match the component type "
                             << *componentTy << " at [" << position << "]";
  return success();
}

LogicalResult TidOp::verify() {
  if (getIndices().empty() || getIndices().size() > 4)
    return emitOpError() << "expects 1 to 4 results, got "
                         << getIndices().size();
  auto fn = (*this)->getParentOfType<func::FuncOp>();
  if (!fn || !isKernel(fn))
    return emitOpError() << "is only valid inside a kernel (a func.func with "
                            "the adjit.kernel attribute); device functions "
                            "take the index as an argument";
  return success();
}

/// Ops that read per-launch state exist only in kernels.
static LogicalResult verifyInKernel(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  if (!fn || !isKernel(fn))
    return op->emitOpError() << "is only valid inside a kernel (a func.func "
                                "with the adjit.kernel attribute)";
  return success();
}

LogicalResult TidBoundsOp::verify() {
  if (getBounds().empty() || getBounds().size() > 4)
    return emitOpError() << "expects 1 to 4 results, got "
                         << getBounds().size();
  return verifyInKernel(*this);
}

LogicalResult ErrorRecordOp::verify() { return verifyInKernel(*this); }

LogicalResult IndexRangeOp::verify() {
  if (getSlot() < 0 || getSlot() >= 4)
    return emitOpError() << "slot must be 0 to 3, got " << getSlot();
  return verifyInKernel(*this);
}

LogicalResult AccessErrorOp::verify() {
  if (getIndices().size() != getSizes().size())
    return emitOpError() << "has " << getIndices().size() << " indices but "
                         << getSizes().size() << " sizes";
  if (getIndices().empty() || getIndices().size() > 4)
    return emitOpError() << "expects 1 to 4 indices, got "
                         << getIndices().size();
  if (getSite() < 0)
    return emitOpError() << "site must be non-negative";
  return success();
}

LogicalResult ArrayAtAddressOp::verify() {
  auto arrayTy = cast<ArrayType>(getResult().getType());
  if (getExtents().size() != arrayTy.getRank())
    return emitOpError() << "has " << getExtents().size()
                         << " extents for an array of rank "
                         << arrayTy.getRank();
  return success();
}

LogicalResult DimOp::verify() {
  auto arrayTy = cast<ArrayType>(getArray().getType());
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= static_cast<int64_t>(arrayTy.getRank()))
    return emitOpError() << "dimension " << dim << " is out of range for "
                         << arrayTy;
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyIndices(*this, getArray(), getIndices());
}

LogicalResult StoreOp::verify() {
  return verifyIndices(*this, getArray(), getIndices());
}

LogicalResult LoadComponentOp::verify() {
  if (failed(verifyIndices(*this, getArray(), getIndices())))
    return failure();
  if (getPosition().empty())
    return emitOpError() << "expects a non-empty position (use adjit.load for "
                            "the whole element)";
  auto arrayTy = cast<ArrayType>(getArray().getType());
  return verifyComponent(*this, arrayTy.getElementType(), getPosition(),
                         getResult().getType(), "result");
}

LogicalResult StoreComponentOp::verify() {
  if (failed(verifyIndices(*this, getArray(), getIndices())))
    return failure();
  if (getPosition().empty())
    return emitOpError() << "expects a non-empty position (use adjit.store for "
                            "the whole element)";
  auto arrayTy = cast<ArrayType>(getArray().getType());
  return verifyComponent(*this, arrayTy.getElementType(), getPosition(),
                         getValue().getType(), "value");
}

/// The shared verifier of the atomic ops.
template <typename AtomicOp>
static LogicalResult verifyAtomic(AtomicOp op) {
  if (failed(verifyIndices(op, op.getArray(), op.getIndices())))
    return failure();
  auto arrayTy = cast<ArrayType>(op.getArray().getType());
  return verifyComponent(op, arrayTy.getElementType(), op.getPosition(),
                         op.getValue().getType(), "value");
}

LogicalResult AtomicAddOp::verify() { return verifyAtomic(*this); }
LogicalResult AtomicMinOp::verify() { return verifyAtomic(*this); }
LogicalResult AtomicMaxOp::verify() { return verifyAtomic(*this); }

/// exch and cas: a scalar integer or float value (no vector or matrix).
template <typename AtomicOp>
static LogicalResult verifyScalarAtomic(AtomicOp op) {
  if (failed(verifyAtomic(op)))
    return failure();
  if (!isa<IntegerType, FloatType>(op.getValue().getType()))
    return op.emitOpError() << "takes a scalar integer or float value, got "
                            << op.getValue().getType();
  return success();
}

/// and, or and xor: integer values (scalars, vectors or matrices).
template <typename AtomicOp>
static LogicalResult verifyBitwiseAtomic(AtomicOp op) {
  if (failed(verifyAtomic(op)))
    return failure();
  if (!isa<IntegerType>(getElementTypeOrSelf(op.getValue().getType())))
    return op.emitOpError() << "takes integer values, got "
                            << op.getValue().getType();
  return success();
}

LogicalResult AtomicExchOp::verify() { return verifyScalarAtomic(*this); }
LogicalResult AtomicAndOp::verify() { return verifyBitwiseAtomic(*this); }
LogicalResult AtomicOrOp::verify() { return verifyBitwiseAtomic(*this); }
LogicalResult AtomicXorOp::verify() { return verifyBitwiseAtomic(*this); }
LogicalResult AtomicCasOp::verify() { return verifyScalarAtomic(*this); }

// ArrayElementAccessOpInterface: what differs from an atomic (the default).
ArrayRef<int64_t> LoadOp::getAccessedComponent() { return {}; }
Value LoadOp::getWrittenValue() { return Value(); }
bool LoadOp::writesElement() { return false; }
ArrayRef<int64_t> StoreOp::getAccessedComponent() { return {}; }
bool StoreOp::readsElement() { return false; }
Value LoadComponentOp::getWrittenValue() { return Value(); }
bool LoadComponentOp::writesElement() { return false; }
bool StoreComponentOp::readsElement() { return false; }

LogicalResult ExtractOp::verify() {
  if (getPosition().empty())
    return emitOpError() << "expects a non-empty position";
  return verifyComponent(*this, getSource().getType(), getPosition(),
                         getResult().getType(), "result");
}

LogicalResult InsertOp::verify() {
  if (getPosition().empty())
    return emitOpError() << "expects a non-empty position";
  return verifyComponent(*this, getDest().getType(), getPosition(),
                         getValue().getType(), "value");
}

//===----------------------------------------------------------------------===//
// GradCallOp
//===----------------------------------------------------------------------===//

LogicalResult GradCallOp::verify() {
  if (getOperandTypes() != getResultTypes())
    return emitOpError("gives one gradient per argument, of the argument's "
                       "type");
  for (Type t : getOperandTypes())
    if (!isa<FloatType>(getElementTypeOrSelf(t)))
      return emitOpError("differentiates float arguments only, got ") << t;
  return success();
}

LogicalResult GradCallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!fn || isKernel(fn))
    return emitOpError() << "'" << getCallee()
                         << "' does not reference a device function";
  FunctionType type = fn.getFunctionType();
  if (TypeRange(type.getInputs()) != getOperandTypes())
    return emitOpError() << "arguments do not match the callee type " << type;
  if (type.getNumResults() != 1 || !isa<FloatType>(type.getResult(0)))
    return emitOpError() << "callee must return one float scalar, not "
                         << type;
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

FunctionType CallOp::getCalleeType() {
  return FunctionType::get(getContext(), getOperandTypes(), getResultTypes());
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!fn)
    return emitOpError() << "'" << getCallee()
                         << "' does not reference a func.func in this module";
  if (isKernel(fn))
    return emitOpError() << "cannot call kernel '" << getCallee()
                         << "'; kernels are launched, not called";
  if (fn.getFunctionType() != getCalleeType())
    return emitOpError() << "call type " << getCalleeType()
                         << " does not match callee type "
                         << fn.getFunctionType();
  return success();
}
