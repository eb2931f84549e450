//===- Decompose.cpp - attn.attention to its explicit steps ---------------===//

#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static RankedTensorType withShape(Value like, ArrayRef<int64_t> shape,
                                  Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

ApplyOp mlir::attn::decomposeAttention(RewriterBase &rewriter, AttentionOp op) {
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  Value query = op.getQuery(), key = op.getKey();
  if (std::optional<APFloat> eps = op.getQkNormEps()) {
    FloatAttr epsAttr = op.getQkNormEpsAttr();
    query = LayerNormOp::create(
        rewriter, loc, withShape(query, shape(query), f32), query, epsAttr);
    key = LayerNormOp::create(rewriter, loc, withShape(key, shape(key), f32),
                              key, epsAttr);
  }
  FloatAttr scoreScale;
  if (auto kernel = dyn_cast<KernelAttr>(op.getNormalizer())) {
    FloatAttr inputScale;
    if (op.getScale())
      inputScale = rewriter.getF32FloatAttr(std::sqrt(op.getEffectiveScale()));
    auto features = [&](Value x) -> Value {
      ArrayRef<int64_t> s = shape(x);
      SmallVector<int64_t> out = {s[0], s[1], s[2],
                                  kernel.getNumFeatures(s[3])};
      return FeatureMapOp::create(rewriter, loc, withShape(x, out, f32), x,
                                  op.getProjection(), kernel, inputScale);
    };
    query = features(query);
    key = features(key);
  } else {
    scoreScale = rewriter.getF32FloatAttr(op.getEffectiveScale());
  }
  AttentionDims d = op.getDims();
  auto scoreType =
      RankedTensorType::get({d.batch, d.queryHeads, d.queryLen, d.keyLen}, f32);
  Value scores = ScoresOp::create(rewriter, loc, scoreType, query, key,
                                  op.getBias(), scoreScale);
  Value weights = NormalizeOp::create(
      rewriter, loc, scoreType, scores, op.getQuerySegments(),
      op.getKeySegments(), op.getNormalizer(), op.getPatternAttr());
  auto apply = ApplyOp::create(rewriter, loc, op.getType(), weights,
                               op.getValue(), op.getGate());
  rewriter.replaceOp(op, apply.getResult());
  return apply;
}

namespace {
struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    decomposeAttention(rewriter, op);
    return success();
  }
};

struct DecomposePass : public attn::impl::AttnDecomposeBase<DecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::attn::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
