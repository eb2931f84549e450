//===- ProjectLowRank.cpp - Linformer as projections + dense attention ----===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPROJECTLOWRANK
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ProjectLowRankPass
    : public attn::impl::AttnProjectLowRankBase<ProjectLowRankPass> {
  void runOnOperation() override {
    SmallVector<LowRankAttentionOp> ops;
    getOperation()->walk([&](LowRankAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (LowRankAttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op.getLoc(), rewriter);
      TensorBuilder tb(b);
      Value key = lowRankProjection(tb, op.getKeyProj(), op.getKey());
      Value value = lowRankProjection(tb, op.getValueProj(), op.getValue());
      // In f32 (the projections are), as the reference lowering computes.
      Value query = toF32Tensor(tb, op.getQuery());
      auto resultType = cast<RankedTensorType>(op.getType());
      auto attention = AttentionOp::create(b, query, key, value,
                                           SoftmaxAttr::get(&getContext()));
      attention.setScaleAttr(b.getF32FloatAttr(op.getEffectiveScale()));
      op.emitRemark() << getArgument() << ": keys and values projected to "
                      << shapeOf(key)[2]
                      << " rows (tiled contractions), then dense softmax "
                         "attention over them";
      rewriter.replaceOp(op, fromF32Tensor(tb, attention.getResult(),
                                           resultType.getElementType()));
    }
  }
};
} // namespace
