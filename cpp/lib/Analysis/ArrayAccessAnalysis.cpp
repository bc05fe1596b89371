//===- ArrayAccessAnalysis.cpp - how a kernel touches its arrays ----------===//

#include "adjit/ArrayAccessAnalysis.h"
#include "adjit-c/Adjit.h"
#include "adjit/AdjitDialect.h"
#include "adjit/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::adjit {
#define GEN_PASS_DEF_ADJITARRAYACCESS
#include "Passes.h.inc"
} // namespace mlir::adjit

using namespace mlir;
using namespace mlir::adjit;

/// Looks through index -> integer -> index cast round trips.
static Value stripIndexCasts(Value v) {
  while (auto outer = v.getDefiningOp<arith::IndexCastOp>()) {
    auto inner = outer.getIn().getDefiningOp<arith::IndexCastOp>();
    if (!inner || !isa<IndexType>(inner.getIn().getType()))
      break;
    v = inner.getIn();
  }
  return v;
}

bool ArrayAccessAnalysis::isOwnElement(ValueRange indices) {
  TidOp tid;
  for (auto [position, index] : llvm::enumerate(indices)) {
    auto result = dyn_cast<OpResult>(stripIndexCasts(index));
    if (!result || result.getResultNumber() != position)
      return false;
    auto owner = dyn_cast<TidOp>(result.getOwner());
    if (!owner || (tid && owner != tid))
      return false;
    tid = owner;
  }
  return tid && tid.getNumResults() == indices.size();
}

/// Whether device function `fn` (transitively) reads or writes the array it
/// takes as argument `position`.
static void argumentEffects(func::FuncOp fn, unsigned position, bool &reads,
                            bool &writes) {
  reads = writes = false;
  Value arg = fn.getArgument(position);
  fn.walk([&](Operation *op) {
    if (auto call = dyn_cast<CallOp>(op)) {
      auto callee =
          SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
      for (auto [p, operand] : llvm::enumerate(call.getOperands())) {
        if (operand != arg)
          continue;
        bool r = true, w = true;
        if (callee && !callee.isExternal())
          argumentEffects(callee, p, r, w);
        reads |= r;
        writes |= w;
      }
      return;
    }
    auto access = dyn_cast<ArrayElementAccessOpInterface>(op);
    if (!access || access.getAccessedArray() != arg)
      return;
    reads |= access.readsElement();
    writes |= access.writesElement();
  });
}

ArrayAccessAnalysis::ArrayAccessAnalysis(func::FuncOp kernel) {
  for (BlockArgument arg : kernel.getArguments())
    if (isa<ArrayType>(arg.getType()))
      accesses[arg];
  kernel.walk([&](Operation *op) {
    // A device function that was not inlined (one with a custom adjoint)
    // accesses the arrays it is passed at indices this analysis does not
    // follow: the call reads and writes what the callee does, not only at
    // the thread's own element.
    if (auto call = dyn_cast<CallOp>(op)) {
      auto callee =
          SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
      for (auto [position, operand] : llvm::enumerate(call.getOperands())) {
        auto it = accesses.find(operand);
        if (it == accesses.end())
          continue;
        bool reads = true, writes = true;
        if (callee && !callee.isExternal())
          argumentEffects(callee, position, reads, writes);
        if (reads)
          it->second.reads.push_back(op);
        if (writes)
          it->second.writes.push_back(op);
        if (reads || writes)
          it->second.ownElementOnly = false;
      }
      return;
    }
    auto access = dyn_cast<ArrayElementAccessOpInterface>(op);
    if (!access)
      return;
    auto it = accesses.find(access.getAccessedArray());
    if (it == accesses.end())
      return;
    ArgumentAccess &info = it->second;
    // An atomic reads only if its old value is used; an unused one only
    // combines into memory.
    bool reads = access.isAtomic() ? !op->getResult(0).use_empty()
                                   : access.readsElement();
    bool writes = access.writesElement();
    if (reads)
      info.reads.push_back(op);
    if (writes)
      info.writes.push_back(op);
    if (!isOwnElement(access.getAccessedIndices()))
      info.ownElementOnly = false;
  });
}

const ArrayAccessAnalysis::ArgumentAccess *
ArrayAccessAnalysis::lookup(Value arg) const {
  auto it = accesses.find(arg);
  return it == accesses.end() ? nullptr : &it->second;
}

std::string ArrayAccessAnalysis::describe(const ArgumentAccess &access) {
  std::string kind = access.isRead() && access.isWritten() ? "read-write"
                     : access.isRead()                     ? "read"
                     : access.isWritten()                  ? "write"
                                                           : "none";
  if (access.ownElementOnly && (access.isRead() || access.isWritten()))
    kind += ", own element";
  return kind;
}

uint32_t ArrayAccessAnalysis::flags(const ArgumentAccess &access) {
  uint32_t bits = 0;
  if (access.isRead())
    bits |= AdjitAccessRead;
  if (access.isWritten())
    bits |= AdjitAccessWrite;
  if (access.ownElementOnly && (access.isRead() || access.isWritten()))
    bits |= AdjitAccessOwnElement;
  if (llvm::any_of(access.writes, [](Operation *op) {
        return isa<AtomicMinOp, AtomicMaxOp>(op) &&
               isa<FloatType>(getElementTypeOrSelf(op->getOperand(0).getType()));
      }))
    bits |= AdjitAccessFloatMinMax;
  return bits;
}

namespace {

/// Annotates each kernel with `adjit.arg_access` (one string per argument:
/// "" for non-arrays) and, with `remarks`, reports it as remarks.
struct AdjitArrayAccessPass
    : adjit::impl::AdjitArrayAccessBase<AdjitArrayAccessPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(kernel))
        continue;
      ArrayAccessAnalysis analysis(kernel);
      SmallVector<Attribute> summary;
      auto names = kernel->getAttrOfType<ArrayAttr>(AdjitDialect::getArgNamesAttrName());
      for (BlockArgument arg : kernel.getArguments()) {
        const auto *access = analysis.lookup(arg);
        std::string text = access ? ArrayAccessAnalysis::describe(*access) : "";
        summary.push_back(StringAttr::get(kernel.getContext(), text));
        if (!remarks || !access)
          continue;
        InFlightDiagnostic remark = kernel.emitRemark()
                                    << "argument #" << arg.getArgNumber();
        if (names && arg.getArgNumber() < names.size())
          remark << " (" << names[arg.getArgNumber()] << ")";
        remark << ": " << text;
      }
      kernel->setAttr(AdjitDialect::getArgAccessAttrName(),
                      ArrayAttr::get(kernel.getContext(), summary));
    }
  }
};

} // namespace
