//===- MathApproximation.cpp - Polynomial approximations of math ops ------===//

#include "attn-opt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMATHAPPROXIMATION
#include "attn-opt/Pipelines/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct MathApproximationPass
    : public attn::impl::AttnMathApproximationBase<MathApproximationPass> {
  void runOnOperation() override {
    // MLIR's exp approximation returns 0 for NaN (its underflow test,
    // x > lower bound, is false for NaN): NaN passed through as the
    // result, as libm's exp does.
    getOperation()->walk([](math::ExpOp exp) {
      OpBuilder b(exp->getContext());
      b.setInsertionPointAfter(exp);
      Value x = exp.getOperand();
      Value isNan = arith::CmpFOp::create(b, exp.getLoc(),
                                          arith::CmpFPredicate::UNO, x, x);
      Value result = arith::SelectOp::create(b, exp.getLoc(), isNan, x, exp);
      exp.getResult().replaceAllUsesExcept(result, result.getDefiningOp());
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
