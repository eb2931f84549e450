//===- InternalOpsToLinalg.cpp - Reference lowering of the internal ops ---===//
//
// The explicit steps of attention (attn-decompose, attn-reassociate) lowered
// with the same building blocks as attn.attention, so a decomposed module
// computes exactly what the op computed.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"

#include "attn-opt/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// `B x H x L x X` to `B x H x 1 x L x X` (heads as key/value heads, one
/// query per group).
Value addGroupDim(TensorBuilder &tb, Value v) {
  return splitHeads(tb, v, shapeOf(v)[1]);
}

/// Rounds the 5-D f32 output to `result`'s element type and merges heads.
Value finish(TensorBuilder &tb, Value o, Value result) {
  return finishHeads(tb, o, elementTypeOf(result));
}

template <typename OpTy>
struct InternalLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    TensorBuilder tb(b);
    SmallVector<Value> results = lower(tb, op);
    rewriter.replaceOp(op, results);
    return success();
  }

  virtual SmallVector<Value> lower(TensorBuilder &tb, OpTy op) const = 0;
};

struct LayerNormLowering : InternalLowering<LayerNormOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, LayerNormOp op) const override {
    return {layerNorm(tb, op.getInput(), op.getEpsilon().convertToDouble())};
  }
};

struct FeatureMapLowering : InternalLowering<FeatureMapOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, FeatureMapOp op) const override {
    double scale =
        op.getInputScale() ? op.getInputScale()->convertToDouble() : 1.0;
    return {featureMap(tb, op.getInput(), op.getKernel(), scale,
                       op.getProjection())};
  }
};

struct ScoresLowering : InternalLowering<ScoresOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, ScoresOp op) const override {
    ArrayRef<int64_t> ks = shapeOf(op.getKey());
    Value s = scores5(tb, splitHeads(tb, op.getQuery(), ks[1]), op.getKey());
    double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0;
    Value bias = op.getBias();
    if (scale != 1.0 || bias) {
      ArrayRef<int64_t> qs = shapeOf(op.getQuery());
      int64_t group = qs[1] / ks[1];
      s = tb.elementwise({s}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        Value x = arith::MulFOp::create(bb, a[0], tb.f32Const(scale));
        if (!bias)
          return x;
        SmallVector<Value> idx;
        for (int64_t d = 0; d < 5; ++d)
          idx.push_back(linalg::IndexOp::create(bb, d));
        Value v = biasAt5(bb, bias, group, idx);
        return arith::AddFOp::create(bb, x, v).getResult();
      });
    }
    return {mergeHeads(tb, s)};
  }
};

struct NormalizeLowering : InternalLowering<NormalizeOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, NormalizeOp op) const override {
    WeightSpec spec;
    spec.normalizer = op.getNormalizer();
    spec.keyLen = tb.size(op.getScores(), 3);
    spec.maskTensor = op.getMask();
    mask::Mask m = op.getPatternMask();
    if (!m.isAll()) {
      spec.mask = &m;
      if (!m.hasStaticLengths())
        spec.maskOffset =
            arith::SubIOp::create(tb.b, tb.indexOf(tb.size(op.getScores(), 3)),
                                  tb.indexOf(tb.size(op.getScores(), 2)));
      spec.querySegments = op.getQuerySegments();
      spec.keySegments =
          op.getKeySegments() ? op.getKeySegments() : op.getQuerySegments();
    }
    return {
        mergeHeads(tb, weights5(tb, addGroupDim(tb, op.getScores()), spec))};
  }
};

struct ApplyLowering : InternalLowering<ApplyOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, ApplyOp op) const override {
    int64_t kvHeads = shapeOf(op.getValue())[1];
    Value o = applyValues5(tb, splitHeads(tb, op.getWeights(), kvHeads),
                           op.getValue());
    o = applyGate(tb, o, op.getGate(), kvHeads);
    return {finish(tb, o, op.getResult())};
  }
};

struct KVStateLowering : InternalLowering<KVStateOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, KVStateOp op) const override {
    TensorBuilder::Sizes ks = tb.sizes(op.getKeyFeatures());
    OpFoldResult dv = tb.size(op.getValue(), 3);
    // state[b,h,f,e] = sum_j phik[b,h,j,f] v[b,h,j,e]; loops (b,h,j,f,e).
    Value state =
        tb.contract(op.getKeyFeatures(), tb.map(5, {0, 1, 2, 3}), op.getValue(),
                    tb.map(5, {0, 1, 2, 4}), {ks[0], ks[1], ks[3], dv},
                    tb.map(5, {0, 1, 3, 4}), "pprpp");
    // key_sum[b,h,f] = sum_j phik[b,h,j,f]; loops (b,h,j,f).
    Value sum =
        tb.generic({op.getKeyFeatures()}, {tb.map(4, {0, 1, 2, 3})},
                   tb.filled({ks[0], ks[1], ks[3]}, 0.0), tb.map(4, {0, 1, 3}),
                   "pprp", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                     return tb.add(bb, a[1], a[0]);
                   });
    return {state, sum};
  }
};

struct StateApplyLowering : InternalLowering<StateApplyOp> {
  using InternalLowering::InternalLowering;
  SmallVector<Value> lower(TensorBuilder &tb, StateApplyOp op) const override {
    ArrayRef<int64_t> ss = shapeOf(op.getState());
    Value q5 = splitHeads(tb, op.getQueryFeatures(), ss[1]);
    TensorBuilder::Sizes qs = tb.sizes(q5);
    // num[b,k,g,i,e] = sum_f q5[b,k,g,i,f] state[b,k,f,e].
    Value num = tb.contract(
        q5, tb.map(6, {0, 1, 2, 3, 4}), op.getState(), tb.map(6, {0, 1, 4, 5}),
        {qs[0], qs[1], qs[2], qs[3], tb.size(op.getState(), 3)},
        tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
    // den[b,k,g,i] = sum_f q5[b,k,g,i,f] key_sum[b,k,f].
    Value den = tb.contract(q5, tb.map(5, {0, 1, 2, 3, 4}), op.getKeySum(),
                            tb.map(5, {0, 1, 4}), {qs[0], qs[1], qs[2], qs[3]},
                            tb.map(5, {0, 1, 2, 3}), "ppppr");
    Value o = divideRows(tb, num, den, op.getEps().convertToDouble());
    o = applyGate(tb, o, op.getGate(), ss[1]);
    return {finish(tb, o, op.getResult())};
  }
};

/// The reference of the chunked form is the quadratic form it computes
/// (reversed: on the reversed sequences).
struct ChunkedLinearLowering : InternalLowering<ChunkedLinearOp> {
  using InternalLowering::InternalLowering;
  LogicalResult matchAndRewrite(ChunkedLinearOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getReverse())
      return InternalLowering::matchAndRewrite(op, rewriter);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    TensorBuilder tb(b);
    ChunkedLinearOp forward;
    Value out = expandReversedChunkedLinear(tb, op, forward);
    // (The forward op's lowering before it, before the reversal of its
    // result.)
    b.setInsertionPoint(forward);
    rewriter.replaceOp(forward, lower(tb, forward));
    rewriter.replaceOp(op, out);
    return success();
  }

  SmallVector<Value> lower(TensorBuilder &tb,
                           ChunkedLinearOp op) const override {
    ArrayRef<int64_t> ks = shapeOf(op.getKeyFeatures());
    ArrayRef<int64_t> qs = shapeOf(op.getQueryFeatures());
    Value q5 = splitHeads(tb, op.getQueryFeatures(), ks[1]);
    Value s = scores5(tb, q5, op.getKeyFeatures());
    std::vector<mask::Node> parts;
    if (op.getCausal())
      parts.push_back(mask::Node::causal());
    if (op.getSegments())
      parts.push_back(mask::Node::segments());
    mask::Node root =
        parts.size() == 1 ? parts.front() : mask::Node::intersect(parts);
    mask::Mask m(root, qs[1], qs[2], ks[2]);
    bool staticLengths = m.hasStaticLengths();
    WeightSpec spec;
    MLIRContext *ctx = op.getContext();
    // Kernel normalization of the feature products (the feature map itself
    // was applied already; only eps matters here).
    spec.normalizer = KernelAttr::get(ctx, FeatureMap::relu, 0, false, 0,
                                      APFloat(op.getEps().convertToDouble()));
    spec.keyLen = tb.size(op.getKeyFeatures(), 2);
    spec.group = qs[1] / ks[1];
    spec.mask = &m;
    if (!staticLengths)
      spec.maskOffset = arith::SubIOp::create(
          tb.b, tb.indexOf(tb.size(op.getKeyFeatures(), 2)),
          tb.indexOf(tb.size(op.getQueryFeatures(), 2)));
    spec.querySegments = spec.keySegments = op.getSegments();
    Value weights = op.getUnnormalized() ? maskedScores5(tb, s, spec)
                                         : weights5(tb, s, spec);
    Value o = applyValues5(tb, weights, op.getValue());
    o = applyGate(tb, o, op.getGate(), ks[1]);
    return {finish(tb, o, op.getResult())};
  }
};

} // namespace

void mlir::attn::populateInternalOpsToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, FeatureMapLowering, ScoresLowering,
               NormalizeLowering, ApplyLowering, KVStateLowering,
               StateApplyLowering, ChunkedLinearLowering>(
      patterns.getContext());
}

Value mlir::attn::expandReversedChunkedLinear(TensorBuilder &tb,
                                              ChunkedLinearOp op,
                                              ChunkedLinearOp &forward) {
  auto rev = [&](Value x) { return x ? tb.reversedAlong(x, 2) : Value(); };
  Value ids = op.getSegments()
                  ? tb.reversedAlong(op.getSegments(), 1, /*negate=*/true)
                  : Value();
  forward = ChunkedLinearOp::create(
      tb.b, op.getType(), rev(op.getQueryFeatures()), rev(op.getKeyFeatures()),
      rev(op.getValue()), ids, rev(op.getGate()), op.getChunkSizeAttr(),
      op.getCausalAttr(), op.getEpsAttr(), op.getUnnormalizedAttr(),
      UnitAttr());
  return tb.reversedAlong(forward.getResult(), 2);
}
