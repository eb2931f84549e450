//===- ModRegion.cpp - Score and mask regions of attn.attention -----------===//

#include "attn-opt/Dialect/Attn/IR/ModRegion.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static bool isScalar(Type t) { return t.isIntOrIndexOrFloat(); }

LogicalResult mlir::attn::verifyModRegion(Operation *op, Region &region,
                                          bool isMask, TypeRange captureTypes) {
  StringRef name = isMask ? "mask_mod" : "score_mod";
  auto fail = [&](Location loc) {
    return emitError(loc) << "'" << op->getName() << "' " << name << " region ";
  };
  if (!region.hasOneBlock())
    return fail(op->getLoc()) << "must have one block";
  Block &block = region.front();
  Builder b(op->getContext());
  SmallVector<Type> expected;
  if (!isMask)
    expected.push_back(b.getF32Type());
  expected.append(kMaskModIndexArgs, b.getIndexType());
  llvm::append_range(expected, captureTypes);
  if (block.getArgumentTypes() != TypeRange(expected)) {
    InFlightDiagnostic d = fail(op->getLoc());
    d << "must take (";
    llvm::interleaveComma(expected, d);
    d << ")"
      << (isMask ? " (batch, head, query, key"
                 : " (score, batch, head, query, key")
      << (captureTypes.empty() ? ")" : ", then the captures)") << ", got (";
    llvm::interleaveComma(block.getArgumentTypes(), d);
    return d << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return fail(op->getLoc()) << "must end in attn.yield";
  Type want = isMask ? Type(b.getI1Type()) : Type(b.getF32Type());
  if (yield.getValue().getType() != want)
    return fail(yield.getLoc())
           << "must yield " << want << ", got " << yield.getValue().getType();
  unsigned firstCapture = block.getNumArguments() - captureTypes.size();
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumRegions() != 0)
      return fail(inner.getLoc())
             << "may not hold '" << inner.getName() << "' (an op with regions)";
    bool extract = isa<tensor::ExtractOp, tensor::DimOp>(inner);
    bool scalarDialect =
        isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
    if (!extract && !scalarDialect)
      return fail(inner.getLoc())
             << "may hold only arith and math operations and tensor.extract "
                "or tensor.dim of a capture, got '"
             << inner.getName() << "'";
    if (extract) {
      auto arg = dyn_cast<BlockArgument>(inner.getOperand(0));
      if (!arg || arg.getOwner() != &block || arg.getArgNumber() < firstCapture)
        return fail(inner.getLoc())
               << "reads a tensor that is not one of its captures";
    }
    for (Value operand : inner.getOperands()) {
      if (extract && operand == inner.getOperand(0))
        continue;
      if (!isScalar(operand.getType()))
        return fail(inner.getLoc())
               << "computes on scalars only, got an operand of type "
               << operand.getType();
    }
    for (Type t : inner.getResultTypes())
      if (!isScalar(t))
        return fail(inner.getLoc())
               << "computes on scalars only, got a result of type " << t;
    if (!isMemoryEffectFree(&inner))
      return fail(inner.getLoc()) << "must be a pure function, '"
                                  << inner.getName() << "' has side effects";
  }
  return success();
}
