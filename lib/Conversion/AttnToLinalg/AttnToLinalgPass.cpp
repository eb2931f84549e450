//===- AttnToLinalgPass.cpp - The convert-attn-to-linalg pass -------------===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"
#include "attn-opt/Conversion/Passes.h"
#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#define GEN_PASS_DEF_CONVERTATTNGRADTOLINALG
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ConvertAttnToLinalgPass
    : public attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    // Gradients first: they read their forward ops, which the rest
    // replaces.
    if (failed(lowerAttentionGrads(getOperation())))
      return signalPassFailure();
    replaceEmptyAttention(getOperation());
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Every attn op has a reference lowering; anything left is an op this
    // pass does not know (for example an internal op of a later pass).
    // The communication ops stay: they bufferize, then become mpi ops
    // (attn-lower-communication).
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (!isa<AttnDialect>(op->getDialect()) ||
          isa<ExchangeOp, ExchangeWaitOp, AllReduceOp>(op))
        return WalkResult::advance();
      op->emitOpError("has no reference lowering to linalg");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct ConvertAttnGradToLinalgPass
    : public attn::impl::ConvertAttnGradToLinalgBase<
          ConvertAttnGradToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowerAttentionGrads(getOperation(), linearKernelized)))
      signalPassFailure();
  }
};
} // namespace
