//===- AttnInternalOps.cpp - The explicit steps of attention --------------===//

#include "ShapeChecker.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// Checks that `v` is a rank-4 `B x H x L x X` tensor with static heads and
/// last dim (batch and length may be dynamic).
static LogicalResult requireRank4(ShapeChecker &check, ArrayRef<Named> values) {
  if (failed(check.requireRank(values, 4, "batch x heads x length x dim")))
    return failure();
  return check.requireStaticDims(values, {1, 3});
}

/// Checks that `v` is a rank-4 `B x H x Lq x Lk` score tensor with static
/// heads (batch and both lengths may be dynamic).
static LogicalResult requireScores(ShapeChecker &check,
                                   ArrayRef<Named> values) {
  if (failed(check.requireRank(values, 4, "batch x heads x Lq x Lk")))
    return failure();
  return check.requireStaticDims(values, {1});
}

/// Checks that query heads `q` are a multiple of key/value heads `kv`.
static LogicalResult requireGroups(Operation *op, int64_t q, int64_t kv) {
  if (kv == 0 || q % kv != 0)
    return op->emitOpError()
           << "expects the query heads (" << q
           << ") to be a multiple of the key/value heads (" << kv << ")";
  return success();
}

/// The number of elements of `shape`; 0 when a size is dynamic (FLOP counts
/// of dynamic shapes are unknown until run time).
static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      return 0;
    n *= d;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  ShapeChecker check(*this);
  Named in{"input", typeOf(getInput())}, res{"result", typeOf(getResult())};
  if (failed(requireRank4(check, {in, res})) ||
      failed(
          check.requireExactShape(res, in.type.getShape(), "the input shape")))
    return failure();
  return check.requireFinite(getEpsilon(), "epsilon", /*positive=*/true);
}

double LayerNormOp::getFlopCount() {
  return 5.0 * product(typeOf(getInput()).getShape());
}

//===----------------------------------------------------------------------===//
// FeatureMapOp
//===----------------------------------------------------------------------===//

LogicalResult FeatureMapOp::verify() {
  ShapeChecker check(*this);
  Named in{"input", typeOf(getInput())}, res{"result", typeOf(getResult())},
      proj{"projection", typeOf(getProjection())};
  if (failed(requireRank4(check, {in, res})) ||
      failed(check.requireStatic({proj})))
    return failure();
  ArrayRef<int64_t> s = in.type.getShape();
  KernelAttr kernel = getKernel();
  int64_t features = kernel.getNumFeatures(s[3]);
  if (failed(check.requireExactShape(res, {s[0], s[1], s[2], features},
                                     "input rows x features")))
    return failure();
  if (kernel.getFeatureMap() == FeatureMap::favor && !proj.type &&
      !ShapedType::isDynamic(s[3]) && features * s[3] > kMaxFavorProjection)
    return emitOpError() << "has a FAVOR+ projection of " << features << " x "
                         << s[3] << " (features x input dim), more than the "
                         << kMaxFavorProjection
                         << " entries a compile-time projection may have "
                            "(pass it as the projection operand)";
  if (proj.type) {
    if (kernel.getFeatureMap() != FeatureMap::favor)
      return emitOpError()
             << "projection applies only to #attn.kernel<favor, ...>";
    if (failed(
            check.requireShape(proj, {features, s[3]}, "features x input dim")))
      return failure();
  }
  return check.requireFinite(getInputScale(), "input_scale",
                             /*positive=*/false);
}

double FeatureMapOp::getFlopCount() {
  ArrayRef<int64_t> s = typeOf(getInput()).getShape();
  double rows = product(s.drop_back());
  KernelAttr kernel = getKernel();
  if (kernel.getFeatureMap() != FeatureMap::favor)
    return rows * s[3];
  double m = kernel.getFeatures();
  return rows * (2.0 * m * s[3] + m + 2.0 * s[3]);
}

//===----------------------------------------------------------------------===//
// ScoresOp
//===----------------------------------------------------------------------===//

LogicalResult ScoresOp::verify() {
  ShapeChecker check(*this);
  Named q{"query", typeOf(getQuery())}, k{"key", typeOf(getKey())},
      res{"result", typeOf(getResult())}, bias{"bias", typeOf(getBias())};
  if (failed(requireRank4(check, {q, k})) ||
      failed(requireScores(check, {res})) ||
      failed(check.requireStaticDims({bias}, {1})) ||
      failed(check.requireSameDim(q, 0, k, 0, "the batch size")) ||
      failed(check.requireSameDim(q, 3, k, 3, "the head dimension")) ||
      failed(requireGroups(*this, q.type.getDimSize(1), k.type.getDimSize(1))))
    return failure();
  ArrayRef<int64_t> qs = q.type.getShape();
  int64_t lk = k.type.getDimSize(2);
  if (failed(check.requireExactShape(res, {qs[0], qs[1], qs[2], lk},
                                     "batch x query heads x Lq x Lk")))
    return failure();
  if (failed(check.requireBias(bias, qs[0], qs[1], qs[2], lk)))
    return failure();
  return check.requireFinite(getScale(), "scale", /*positive=*/false);
}

double ScoresOp::getFlopCount() {
  ArrayRef<int64_t> r = typeOf(getResult()).getShape();
  return 2.0 * product(r) * typeOf(getQuery()).getDimSize(3);
}

//===----------------------------------------------------------------------===//
// NormalizeOp
//===----------------------------------------------------------------------===//

LogicalResult NormalizeOp::verify() {
  ShapeChecker check(*this);
  Named s{"scores", typeOf(getScores())}, res{"result", typeOf(getResult())},
      segQ{"segments", typeOf(getQuerySegments())},
      segK{"key_segments", typeOf(getKeySegments())};
  if (failed(requireScores(check, {s, res})) ||
      failed(
          check.requireExactShape(res, s.type.getShape(), "the scores' shape")))
    return failure();
  ArrayRef<int64_t> shape = s.type.getShape();
  if (segK.type && !segQ.type)
    return emitOpError() << "key_segments requires segments";
  if (segQ.type) {
    if (failed(check.requireShape(segQ, {shape[0], shape[2]},
                                  "batch x query length")))
      return failure();
    if (segK.type) {
      if (failed(check.requireShape(segK, {shape[0], shape[3]},
                                    "batch x key length")))
        return failure();
    } else if (!ShapeChecker::compatible(shape[2], shape[3])) {
      return emitOpError() << "needs key_segments when the query length ("
                           << shape[2] << ") differs from the key length ("
                           << shape[3] << ")";
    }
  }
  Named m{"mask", typeOf(getMask())};
  if (m.type) {
    if (failed(check.requireBias(m, shape[0], shape[1], shape[2], shape[3],
                                 /*allowRank2=*/true)))
      return failure();
    if (!m.type.getElementType().isInteger(1) &&
        isa<KernelAttr>(getNormalizer()))
      return emitOpError() << "takes only a boolean mask with a kernel "
                              "normalizer";
  }
  MaskPatternAttrInterface pattern = getPatternAttr();
  bool hasSegments = static_cast<bool>(getQuerySegments());
  if (pattern && failed(pattern.verifyPattern(
                     [&] { return emitOpError(); },
                     {shape[1], shape[2], shape[3], hasSegments})))
    return failure();
  if (hasSegments && !(pattern && pattern.usesSegments()))
    return emitOpError() << "has segment ids but its pattern does not use "
                            "them (add #attn.segments)";
  return success();
}

mask::Mask NormalizeOp::getPatternMask() {
  ArrayRef<int64_t> s = typeOf(getScores()).getShape();
  return buildMask(getPatternAttr(),
                   {s[1], s[2], s[3], static_cast<bool>(getQuerySegments())});
}

double NormalizeOp::getFlopCount() {
  double perScore = isa<SoftmaxAttr>(getNormalizer()) ? 5.0 : 3.0;
  return perScore * product(typeOf(getScores()).getShape());
}

//===----------------------------------------------------------------------===//
// ApplyOp
//===----------------------------------------------------------------------===//

LogicalResult ApplyOp::verify() {
  ShapeChecker check(*this);
  Named p{"weights", typeOf(getWeights())}, v{"value", typeOf(getValue())},
      res{"result", typeOf(getResult())}, gate{"gate", typeOf(getGate())};
  if (failed(requireScores(check, {p})) ||
      failed(requireRank4(check, {v, res})) ||
      failed(check.requireStaticDims({gate}, {1, 3})) ||
      failed(check.requireSameDim(p, 0, v, 0, "the batch size")) ||
      failed(check.requireSameDim(p, 3, v, 2, "the key length")) ||
      failed(requireGroups(*this, p.type.getDimSize(1), v.type.getDimSize(1))))
    return failure();
  ArrayRef<int64_t> ps = p.type.getShape();
  if (failed(check.requireExactShape(
          res, {ps[0], ps[1], ps[2], v.type.getDimSize(3)},
          "batch x query heads x Lq x value dim")))
    return failure();
  if (gate.type && failed(check.requireShape(gate, res.type.getShape(),
                                             "the shape of the result")))
    return failure();
  return check.requireSameElementType({v, res, gate});
}

double ApplyOp::getFlopCount() {
  return 2.0 * product(typeOf(getWeights()).getShape()) *
         typeOf(getValue()).getDimSize(3);
}

//===----------------------------------------------------------------------===//
// KVStateOp
//===----------------------------------------------------------------------===//

LogicalResult KVStateOp::verify() {
  ShapeChecker check(*this);
  Named k{"key_features", typeOf(getKeyFeatures())},
      v{"value", typeOf(getValue())}, state{"state", typeOf(getState())},
      sum{"key_sum", typeOf(getKeySum())};
  if (failed(requireRank4(check, {k, v, state})) ||
      failed(check.requireStaticDims({sum}, {1, 2})) ||
      failed(check.requireSameDim(k, 0, v, 0, "the batch size")) ||
      failed(check.requireSameDim(k, 1, v, 1, "the number of heads")) ||
      failed(check.requireSameDim(k, 2, v, 2, "the key length")))
    return failure();
  ArrayRef<int64_t> ks = k.type.getShape();
  if (failed(check.requireExactShape(
          state, {ks[0], ks[1], ks[3], v.type.getDimSize(3)},
          "batch x heads x features x value dim")) ||
      failed(check.requireExactShape(sum, {ks[0], ks[1], ks[3]},
                                     "batch x heads x features")))
    return failure();
  return success();
}

double KVStateOp::getFlopCount() {
  ArrayRef<int64_t> k = typeOf(getKeyFeatures()).getShape();
  double dv = typeOf(getValue()).getDimSize(3);
  return product(k) * (2.0 * dv + 1.0);
}

//===----------------------------------------------------------------------===//
// StateApplyOp
//===----------------------------------------------------------------------===//

LogicalResult StateApplyOp::verify() {
  ShapeChecker check(*this);
  Named q{"query_features", typeOf(getQueryFeatures())},
      state{"state", typeOf(getState())}, sum{"key_sum", typeOf(getKeySum())},
      res{"result", typeOf(getResult())}, gate{"gate", typeOf(getGate())};
  if (failed(requireRank4(check, {q, state, res})) ||
      failed(check.requireStaticDims({sum}, {1, 2})) ||
      failed(check.requireStaticDims({gate}, {1, 3})) ||
      failed(check.requireSameDim(q, 0, state, 0, "the batch size")) ||
      failed(check.requireSameDim(q, 3, state, 2, "the number of features")) ||
      failed(
          requireGroups(*this, q.type.getDimSize(1), state.type.getDimSize(1))))
    return failure();
  ArrayRef<int64_t> ss = state.type.getShape(), qs = q.type.getShape();
  if (failed(check.requireShape(sum, {ss[0], ss[1], ss[2]},
                                "batch x heads x features")) ||
      failed(check.requireExactShape(res, {qs[0], qs[1], qs[2], ss[3]},
                                     "batch x query heads x Lq x value dim")))
    return failure();
  if (gate.type && failed(check.requireShape(gate, res.type.getShape(),
                                             "the shape of the result")))
    return failure();
  if (failed(check.requireSameElementType({res, gate})))
    return failure();
  return check.requireFinite(getEps(), "eps", /*positive=*/false);
}

double StateApplyOp::getFlopCount() {
  ArrayRef<int64_t> q = typeOf(getQueryFeatures()).getShape();
  double dv = typeOf(getState()).getDimSize(3);
  return product(q) * 2.0 * (dv + 1.0) + product(q.drop_back()) * dv;
}

//===----------------------------------------------------------------------===//
// ChunkedLinearOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkedLinearOp::verify() {
  ShapeChecker check(*this);
  Named q{"query_features", typeOf(getQueryFeatures())},
      k{"key_features", typeOf(getKeyFeatures())},
      v{"value", typeOf(getValue())}, res{"result", typeOf(getResult())},
      seg{"segments", typeOf(getSegments())}, gate{"gate", typeOf(getGate())};
  if (failed(requireRank4(check, {q, k, v, res})) ||
      failed(check.requireStaticDims({gate}, {1, 3})))
    return failure();
  FailureOr<AttentionDims> dims = verifyQKV(check, *this, q, k, v, res);
  if (failed(dims))
    return failure();
  if (!ShapeChecker::compatible(dims->queryLen, dims->keyLen))
    return emitOpError() << "expects as many queries as keys, got "
                         << dims->queryLen << " and " << dims->keyLen;
  if (seg.type && failed(check.requireShape(seg, {dims->batch, dims->keyLen},
                                            "batch x length")))
    return failure();
  if (!seg.type && !getCausal())
    return emitOpError() << "needs causal or segments (without a mask, use "
                            "attn.kv_state and attn.state_apply)";
  if (getReverse() && !getCausal())
    return emitOpError() << "with reverse needs causal (without it the "
                            "sums are the same either way)";
  if (gate.type && failed(check.requireShape(gate, res.type.getShape(),
                                             "the shape of the result")))
    return failure();
  if (failed(check.requireSameElementType({v, res, gate})))
    return failure();
  return check.requireFinite(getEps(), "eps", /*positive=*/false);
}

double ChunkedLinearOp::getFlopCount() {
  AttentionDims d = dimsOf(getQueryFeatures(), getKeyFeatures(), getValue());
  if (!d.isStatic())
    return 0.0;
  double c = std::min<int64_t>(getChunkSize(), d.keyLen);
  double f = d.headDim, dv = d.valueDim;
  double inter = (getCausal() ? 3.0 : 6.0) * f * dv;
  return d.batch * d.queryHeads * 2.0 * d.keyLen * (c * (f + dv) + inter);
}
