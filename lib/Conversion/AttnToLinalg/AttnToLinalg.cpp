//===- AttnToLinalg.cpp - Reference lowering of attn ops to linalg --------===//

#include "attn-opt/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"
#include "attn-opt/Conversion/Capabilities.h"

#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

const Capability &mlir::attn::getReferenceLoweringCapability() {
  static const Capability capability{
      "reference",
      "convert-attn-to-linalg",
      "the reference lowering: scores, weights and output as linalg ops "
      "(the semantics every other generator is checked against)",
      {getApplicableFeatures(Feature::Softmax),
       getApplicableFeatures(Feature::Pointwise),
       getApplicableFeatures(Feature::Kernel)},
      {}};
  return capability;
}

namespace {

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

struct AttentionOpLowering : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    // Dynamic sizes and varlen operands are checked first; the attention is
    // computed only when they hold.
    rewriter.replaceOp(
        op, buildUnderRuntimeChecks(b, op, [&] { return lower(b, op); }));
    return success();
  }

  /// The op's results: the attention, and its log-sum-exp when asked for.
  static SmallVector<Value> lower(ImplicitLocOpBuilder &b, AttentionOp op) {
    TensorBuilder tb(b);
    AttentionProblem p = op.getProblem();
    AttentionScores sc;
    buildAttentionScores(tb, op, sc);
    Value lse;
    Value o = applyValues5(
        tb, weights5(tb, sc.scores, sc.spec, p.results.lse ? &lse : nullptr),
        sc.valueIn, &sc.spec);
    o = applyGate(tb, o, p.modifiers.gate, p.dims.kvHeads);
    SmallVector<Value> results = {finishHeads(tb, o, p.elementType)};
    if (lse)
      results.push_back(tensor::CollapseShapeOp::create(
          b, lse, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}}));
    return results;
  }
};

struct LowRankAttentionOpLowering : OpRewritePattern<LowRankAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LowRankAttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    TensorBuilder tb(b);
    Value key = lowRankProjection(tb, op.getKeyProj(), op.getKey());
    Value value = lowRankProjection(tb, op.getValueProj(), op.getValue());
    int64_t rows = shapeOf(op.getKeyProj())[0];
    Value q5 = splitHeads(tb, op.getQuery(), shapeOf(op.getKey())[1]);
    WeightSpec spec;
    spec.normalizer = SoftmaxAttr::get(op.getContext());
    spec.scale = op.getEffectiveScale();
    spec.keyLen = b.getIndexAttr(rows);
    rewriter.replaceOp(op, attend(tb, scores5(tb, q5, key), spec, value,
                                  elementTypeOf(op.getQuery())));
    return success();
  }
};

struct RelativeAttentionOpLowering : OpRewritePattern<RelativeAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RelativeAttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    TensorBuilder tb(b);
    Value key = op.getKey(), value = op.getValue();
    int64_t mem = op.getMemoryLength();
    if (mem > 0) {
      key = tensor::ConcatOp::create(b, 2, ValueRange{op.getMemoryKey(), key});
      value = tensor::ConcatOp::create(b, 2,
                                       ValueRange{op.getMemoryValue(), value});
    }
    ArrayRef<int64_t> qs = shapeOf(op.getQuery());
    int64_t heads = qs[1], len = qs[2], keyLen = mem + len;
    Value q5 = splitHeads(tb, op.getQuery(), heads); // B H 1 L D
    // q + u and q + v, with u, v per head.
    auto addBias = [&](Value bias) {
      return tb.generic(
          {q5, bias}, {tb.map(5, {0, 1, 2, 3, 4}), tb.map(5, {1, 4})},
          tb.empty(tb.sizes(q5)), tb.map(5, {0, 1, 2, 3, 4}), "ppppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            return arith::AddFOp::create(bb, tb.toF32(bb, a[0]),
                                         tb.toF32(bb, a[1]));
          });
    };
    Value content = scores5(tb, addBias(op.getContentBias()), key);
    // BD[b,h,0,i,r] = (q_i + v) . pos_emb[h, r] over every distance r.
    Value pos4 = tensor::ExpandShapeOp::create(
        b,
        RankedTensorType::get({1, heads, keyLen, qs[3]},
                              elementTypeOf(op.getPosEmb())),
        op.getPosEmb(), ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    Value position = scores5(tb, addBias(op.getPositionBias()), pos4);

    mask::Mask m(mask::Node::causal(), heads, len, keyLen);
    WeightSpec spec;
    spec.normalizer = SoftmaxAttr::get(op.getContext());
    spec.scale = op.getEffectiveScale();
    spec.keyLen = b.getIndexAttr(keyLen);
    spec.mask = &m;
    // The score of key j adds BD at distance M + i - j (clamped where the
    // causal mask discards it anyway).
    spec.extraScore = [&, mem, keyLen](ImplicitLocOpBuilder &bb,
                                       ValueRange idx) -> Value {
      Value dist = arith::SubIOp::create(
          bb,
          arith::AddIOp::create(bb, idx[3],
                                arith::ConstantIndexOp::create(bb, mem)),
          idx[4]);
      dist = arith::MaxSIOp::create(bb, dist,
                                    arith::ConstantIndexOp::create(bb, 0));
      dist = arith::MinSIOp::create(
          bb, dist, arith::ConstantIndexOp::create(bb, keyLen - 1));
      return tensor::ExtractOp::create(
          bb, position, ValueRange{idx[0], idx[1], idx[2], idx[3], dist});
    };
    rewriter.replaceOp(
        op, attend(tb, content, spec, value, elementTypeOf(op.getQuery())));
    return success();
  }
};

struct LshAttentionOpLowering : OpRewritePattern<LshAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LshAttentionOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    FailureOr<Value> result = lowerLshAttention(b, op);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

} // namespace

void mlir::attn::buildAttentionScores(TensorBuilder &tb, AttentionOp op,
                                      AttentionScores &out) {
  ImplicitLocOpBuilder &b = tb.b;
  AttentionProblem p = op.getProblem();
  const AttentionDims &d = p.dims;
  Value q5 = splitHeads(tb, p.query, d.kvHeads);
  // A paged cache: its sequences' pages gathered into contiguous keys and
  // values first.
  Value keyIn = p.key, valueIn = p.value;
  if (Value table = p.paging.pageTable) {
    keyIn = gatherPages(tb, keyIn, table);
    valueIn = gatherPages(tb, valueIn, table);
  }
  Value key = keyIn;
  if (p.qkNormEps) {
    q5 = layerNorm(tb, q5, *p.qkNormEps);
    key = layerNorm(tb, key, *p.qkNormEps);
  }

  WeightSpec &spec = out.spec;
  spec.normalizer = p.normalizer;
  spec.group = d.groupSize();
  spec.keyLen = tb.size(keyIn, 2);
  if (auto kernel = dyn_cast<KernelAttr>(p.normalizer)) {
    double inputScale = p.explicitScale ? std::sqrt(p.scale) : 1.0;
    q5 = featureMap(tb, q5, kernel, inputScale, p.projection);
    key = featureMap(tb, key, kernel, inputScale, p.projection);
  } else {
    spec.scale = p.scale;
  }
  out.scores = scores5(tb, q5, key);
  out.query5 = q5;
  out.key = key;
  out.keyIn = keyIn;
  out.valueIn = valueIn;

  out.mask.emplace(op.getPatternMask());
  const mask::Mask &m = *out.mask;
  if (!m.isAll()) {
    spec.mask = &m;
    spec.querySegments = p.segments.query;
    spec.keySegments = p.segments.key;
    if (!m.hasStaticLengths())
      spec.maskOffset = arith::SubIOp::create(b, tb.indexOf(tb.size(keyIn, 2)),
                                              tb.indexOf(tb.size(p.query, 2)));
  }
  spec.queryLengths = p.sequences.queryLengths;
  spec.keyLengths = p.sequences.keyLengths;
  if (p.sequences.isPacked()) {
    spec.queryOffsets = p.sequences.queryOffsets;
    spec.keyOffsets = p.sequences.keyOffsets;
    spec.querySequence =
        rowSequences(tb, spec.queryOffsets, tb.size(p.query, 2));
    spec.keySequence = rowSequences(tb, spec.keyOffsets, tb.size(p.key, 2));
  }
  spec.maskTensor = p.masking.tensor;
  if (Value bias = p.modifiers.bias) {
    int64_t group = d.groupSize();
    spec.bias = [bias, group](ImplicitLocOpBuilder &bb,
                              ValueRange idx) -> Value {
      return biasAt5(bb, bias, group, idx);
    };
  }
  spec.softcap = p.modifiers.softcap;
  spec.alibiSlopes = p.modifiers.alibiSlopes;
  spec.sinks = p.modifiers.sinks;
  spec.scoreMod = p.regions.scoreMod;
  spec.maskMod = p.regions.maskMod;
  spec.captures = p.regions.captures;
}

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionOpLowering, LowRankAttentionOpLowering,
               LshAttentionOpLowering, RelativeAttentionOpLowering>(
      patterns.getContext());
  populateInternalOpsToLinalgPatterns(patterns);
}
