//===- ApproximateSoftmax.cpp - Softmax attention to FAVOR+ ---------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATESOFTMAX
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ApproximateSoftmaxPass
    : public attn::impl::AttnApproximateSoftmaxBase<ApproximateSoftmaxPass> {
  using Base::Base;

  void runOnOperation() override {
    if (features < 1) {
      getOperation()->emitError(
          "attn-approximate-softmax: features must be positive");
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation()->walk([&](AttentionOp op) {
      if (!isa<SoftmaxAttr>(op.getNormalizer()))
        return;
      if (op.getBias()) {
        op.emitRemark() << "attn-approximate-softmax: left exact: a bias "
                           "does not apply to kernel attention";
        return;
      }
      if (op.getMask() && !op.hasBoolMask()) {
        op.emitRemark() << "attn-approximate-softmax: left exact: an additive "
                           "mask does not apply to kernel attention";
        return;
      }
      if (op.getLse()) {
        op.emitRemark() << "attn-approximate-softmax: left exact: its "
                           "log-sum-exp result is defined for softmax only";
        return;
      }
      if (op.hasScoreModifiers()) {
        op.emitRemark() << "attn-approximate-softmax: left exact: softcap, "
                           "ALiBi, sinks and score or mask regions do not "
                           "apply to its kernel attention";
        return;
      }
      double scale = op.getEffectiveScale();
      if (!(scale > 0)) {
        op.emitRemark() << "attn-approximate-softmax: left exact: FAVOR+ "
                           "needs a positive scale";
        return;
      }
      auto kernel = KernelAttr::get(&getContext(), FeatureMap::favor, features,
                                    orthogonal, seed, APFloat(0.0));
      op.setNormalizerAttr(kernel);
      op.setScaleAttr(b.getF32FloatAttr(scale));
    });
  }
};
} // namespace
