//===- DistinctResults.cpp - attn-distinct-results ------------------------===//
//
// Copies a tensor returned more than once, so that every result of a
// function is its own buffer after bufferization (buffer-results-to-out-
// params erases a hoisted allocation once per result it is).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDISTINCTRESULTS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct DistinctResultsPass
    : public attn::impl::AttnDistinctResultsBase<DistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(
            b, ret.getLoc(), type, ValueRange(), /*copy=*/v));
      }
    });
  }
};
} // namespace
