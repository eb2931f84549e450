//===- Decompose.cpp - attn.attention to its explicit steps ---------------===//

#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Transforms.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

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

FailureOr<ApplyOp> mlir::attn::decomposeAttention(RewriterBase &rewriter,
                                                  AttentionOp op) {
  // The internal ops have no lengths or offsets, nor score modifiers.
  if (op.isVarlen() || op.hasScoreModifiers() || op.getLse())
    return failure();
  Type f32 = rewriter.getF32Type();
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  ApplyOp apply;
  // The steps assume the sizes agree: dynamic ones are checked first.
  Value result = buildUnderRuntimeChecks(b, op, [&]() -> Value {
    Value query = op.getQuery(), key = op.getKey();
    if (std::optional<APFloat> eps = op.getQkNormEps()) {
      FloatAttr epsAttr = op.getQkNormEpsAttr();
      query = LayerNormOp::create(b, withShape(query, shape(query), f32), query,
                                  epsAttr);
      key =
          LayerNormOp::create(b, withShape(key, shape(key), f32), key, epsAttr);
    }
    FloatAttr scoreScale;
    if (auto kernel = dyn_cast<KernelAttr>(op.getNormalizer())) {
      FloatAttr inputScale;
      if (op.getScale())
        inputScale = b.getF32FloatAttr(std::sqrt(op.getEffectiveScale()));
      auto features = [&](Value x) -> Value {
        ArrayRef<int64_t> s = shape(x);
        SmallVector<int64_t> out = {s[0], s[1], s[2],
                                    kernel.getNumFeatures(s[3])};
        return FeatureMapOp::create(b, withShape(x, out, f32), x,
                                    op.getProjection(), kernel, inputScale);
      };
      query = features(query);
      key = features(key);
    } else {
      scoreScale = b.getF32FloatAttr(op.getEffectiveScale());
    }
    AttentionDims d = op.getDims();
    auto scoreType = RankedTensorType::get(
        {d.batch, d.queryHeads, d.queryLen, d.keyLen}, f32);
    Value scores =
        ScoresOp::create(b, scoreType, query, key, op.getBias(), scoreScale);
    Value weights = NormalizeOp::create(
        b, scoreType, scores, op.getQuerySegments(), op.getKeySegments(),
        op.getMask(), op.getNormalizer(), op.getPatternAttr());
    apply =
        ApplyOp::create(b, op.getType(), weights, op.getValue(), op.getGate());
    return apply.getResult();
  });
  rewriter.replaceOp(op, result);
  return apply;
}

namespace {
struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (succeeded(decomposeAttention(rewriter, op)))
      return success();
    op.emitRemark()
        << "attn-decompose: kept attn.attention: its "
        << (op.isVarlen() ? "varlen operands (lengths or offsets) have"
            : op.hasScoreModifiers()
                ? "score modifiers (softcap, ALiBi, sinks, score or mask "
                  "regions) have"
                : "log-sum-exp result has")
        << " no decomposed form";
    return failure();
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
