//===- AttentionLowering.cpp - Shared pieces of the reference lowering ----===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"

#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"
#include "attn-opt/Dialect/Attn/Utils/ModRegionEmitter.h"
#include "attn-opt/Support/Random.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::splitHeads(TensorBuilder &tb, Value v, int64_t kvHeads) {
  ArrayRef<int64_t> s = shapeOf(v);
  auto type = RankedTensorType::get(
      {s[0], kvHeads, s[1] / kvHeads, s[2], s[3]},
      cast<RankedTensorType>(v.getType()).getElementType());
  TensorBuilder::Sizes in = tb.sizes(v);
  SmallVector<OpFoldResult> out = {in[0], tb.b.getIndexAttr(kvHeads),
                                   tb.b.getIndexAttr(s[1] / kvHeads), in[2],
                                   in[3]};
  return tensor::ExpandShapeOp::create(
      tb.b, type, v, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      out);
}

Value mlir::attn::mergeHeads(TensorBuilder &tb, Value v) {
  return tensor::CollapseShapeOp::create(
      tb.b, v, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

Value mlir::attn::gatherPages(TensorBuilder &tb, Value pool, Value table) {
  ImplicitLocOpBuilder &b = tb.b;
  auto poolType = cast<RankedTensorType>(pool.getType());
  int64_t page = poolType.getDimSize(2);
  TensorBuilder::Sizes sizes = tb.sizes(pool);
  OpFoldResult tablePages = tb.size(table, 1);
  sizes[0] = tb.size(table, 0);
  if (auto n = getConstantIntValue(tablePages))
    sizes[2] = b.getIndexAttr(*n * page);
  else
    sizes[2] = arith::MulIOp::create(b, tb.indexOf(tablePages), tb.index(page))
                   .getResult();
  Value last =
      arith::SubIOp::create(b, tensor::DimOp::create(b, pool, 0), tb.index(1));
  return tb.generic(
      {}, {}, tb.empty(sizes, poolType.getElementType()),
      tb.map(4, {0, 1, 2, 3}), "pppp",
      [&](ImplicitLocOpBuilder &bb, ValueRange) -> Value {
        SmallVector<Value> i;
        for (int64_t d = 0; d < 4; ++d)
          i.push_back(linalg::IndexOp::create(bb, d));
        Value pageIdx = arith::IndexCastOp::create(
            bb, bb.getIndexType(),
            tensor::ExtractOp::create(
                bb, table,
                ValueRange{i[0],
                           arith::DivUIOp::create(bb, i[2], tb.index(page))}));
        pageIdx = arith::MaxSIOp::create(
            bb, arith::MinSIOp::create(bb, pageIdx, last), tb.index(0));
        return tensor::ExtractOp::create(
            bb, pool,
            ValueRange{pageIdx, i[1],
                       arith::RemUIOp::create(bb, i[2], tb.index(page)), i[3]});
      });
}

Value mlir::attn::biasAt5(ImplicitLocOpBuilder &b, Value bias, int64_t group,
                          ValueRange idx) {
  Value head = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, idx[1],
                            arith::ConstantIndexOp::create(b, group)),
      idx[2]);
  Value v = tensor::ExtractOp::create(
      b, bias,
      biasIndices(shapeOf(bias), arith::ConstantIndexOp::create(b, 0), idx[0],
                  head, idx[3], idx[4]));
  Type f32 = b.getF32Type();
  if (v.getType() == f32 || v.getType().isInteger(1))
    return v;
  return arith::ExtFOp::create(b, f32, v);
}

Value mlir::attn::favorWeights(TensorBuilder &tb, KernelAttr kernel,
                               int64_t dim, Value projection) {
  if (projection)
    return projection;
  int64_t m = kernel.getFeatures();
  std::vector<double> values =
      favorProjection(kernel.getSeed(), m, dim, kernel.getOrthogonal());
  SmallVector<float> f(values.begin(), values.end());
  auto type = RankedTensorType::get({m, dim}, tb.f32);
  return arith::ConstantOp::create(
      tb.b, DenseElementsAttr::get(type, ArrayRef<float>(f)));
}

Value mlir::attn::featureMapGrad(TensorBuilder &tb, Value x, Value dPhi,
                                 KernelAttr kernel, double inputScale,
                                 Value projection, Value *dProjection) {
  int64_t rank = shapeOf(x).size(), dim = shapeOf(x).back();
  Value scaleCst = tb.f32Const(inputScale);
  auto scaled = [&](ImplicitLocOpBuilder &bb, Value v) -> Value {
    v = tb.toF32(bb, v);
    return inputScale == 1.0 ? v : arith::MulFOp::create(bb, v, scaleCst);
  };
  if (kernel.getFeatureMap() != FeatureMap::favor) {
    bool elu = kernel.getFeatureMap() == FeatureMap::elu_plus_one;
    return tb.elementwise(
        {x, dPhi}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value v = scaled(bb, a[0]);
          Value pos = arith::CmpFOp::create(bb, arith::CmpFPredicate::OGT, v,
                                            tb.f32Const(0.0));
          Value slope = arith::SelectOp::create(
              bb, pos, tb.f32Const(1.0),
              elu ? math::ExpOp::create(bb, v).getResult() : tb.f32Const(0.0));
          return arith::MulFOp::create(
              bb, arith::MulFOp::create(bb, slope, a[1]), scaleCst);
        });
  }
  // d phi_r / dv = phi_r (w_r - v): dv = W^T (dPhi phi) - v sum_r dPhi_r
  // phi_r, then times the input scale.
  Value phi = featureMap(tb, x, kernel, inputScale, projection);
  Value t =
      tb.elementwise({phi, dPhi}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return tb.mul(bb, a[0], a[1]);
      });
  Value w = favorWeights(tb, kernel, dim, projection);
  // Loops: outer dims, then d, then r (reduction).
  SmallVector<int64_t> tDims, outDims;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    tDims.push_back(d);
    outDims.push_back(d);
  }
  tDims.push_back(rank);
  outDims.push_back(rank - 1);
  std::string iters(rank, 'p');
  iters += "r";
  Value proj = tb.contract(t, tb.map(rank + 1, tDims), w,
                           tb.map(rank + 1, {rank, rank - 1}), tb.sizes(x),
                           tb.map(rank + 1, outDims), iters);
  if (dProjection && kernel.getFeatureMap() == FeatureMap::favor) {
    // dW[r, d] = sum over the rows of t[.., r] v[.., d]: loops (r, d, rows).
    Value v = tb.elementwise({x}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
      return scaled(bb, a[0]);
    });
    SmallVector<int64_t> rowsR = {}, rowsD = {};
    for (int64_t d = 0; d + 1 < rank; ++d) {
      rowsR.push_back(2 + d);
      rowsD.push_back(2 + d);
    }
    rowsR.push_back(0);
    rowsD.push_back(1);
    Value dw = tb.contract(
        t, tb.map(rank + 1, rowsR), v, tb.map(rank + 1, rowsD), tb.sizes(w),
        tb.map(rank + 1, {0, 1}), "pp" + std::string(rank - 1, 'r'));
    *dProjection =
        *dProjection
            ? tb.elementwise({*dProjection, dw},
                             [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                               return tb.add(bb, a[0], a[1]);
                             })
            : dw;
  }
  Value sum = tb.rowSum(t);
  auto [id, outer] = tb.rowMaps(rank);
  return tb.generic({proj, x, sum}, {id, id, outer}, tb.empty(tb.sizes(x)), id,
                    std::string(rank, 'p'),
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      Value v = scaled(bb, a[1]);
                      Value d = arith::SubFOp::create(
                          bb, a[0], arith::MulFOp::create(bb, v, a[2]));
                      return arith::MulFOp::create(bb, d, scaleCst);
                    });
}

Value mlir::attn::featureMap(TensorBuilder &tb, Value x, KernelAttr kernel,
                             double inputScale, Value projection) {
  ImplicitLocOpBuilder &b = tb.b;
  TensorBuilder::Sizes shape = tb.sizes(x);
  int64_t rank = shape.size(), dim = shapeOf(x).back();
  Value scaleCst = tb.f32Const(inputScale);
  auto scaled = [&](ImplicitLocOpBuilder &bb, Value v) -> Value {
    v = tb.toF32(bb, v);
    return inputScale == 1.0 ? v : arith::MulFOp::create(bb, v, scaleCst);
  };
  switch (kernel.getFeatureMap()) {
  case FeatureMap::elu_plus_one:
    return tb.elementwise({x}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
      Value v = scaled(bb, a[0]);
      Value pos = arith::CmpFOp::create(bb, arith::CmpFPredicate::OGT, v,
                                        tb.f32Const(0.0));
      Value plus = arith::AddFOp::create(bb, v, tb.f32Const(1.0));
      Value ex = math::ExpOp::create(bb, v);
      return arith::SelectOp::create(bb, pos, plus, ex).getResult();
    });
  case FeatureMap::relu:
    return tb.elementwise({x}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
      return arith::MaximumFOp::create(bb, scaled(bb, a[0]), tb.f32Const(0.0))
          .getResult();
    });
  case FeatureMap::favor:
    break;
  }
  // FAVOR+: phi(x)_r = exp(<w_r, x> - |x|^2 / 2) / sqrt(m).
  int64_t m = kernel.getFeatures();
  Value w = favorWeights(tb, kernel, dim, projection);
  Value wt = tb.transpose(w, {1, 0}); // D x m
  // Loops: outer dims of x, then d (reduction), then r.
  SmallVector<int64_t> xDims, outDims;
  for (int64_t d = 0; d < rank; ++d)
    xDims.push_back(d);
  for (int64_t d = 0; d + 1 < rank; ++d)
    outDims.push_back(d);
  outDims.push_back(rank);
  TensorBuilder::Sizes outShape(shape.begin(), shape.end() - 1);
  outShape.push_back(b.getIndexAttr(m));
  std::string iters(rank - 1, 'p');
  iters += "rp";
  Value proj = tb.generic(
      {x, wt}, {tb.map(rank + 1, xDims), tb.map(rank + 1, {rank - 1, rank})},
      tb.filled(outShape, 0.0), tb.map(rank + 1, outDims), iters,
      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return tb.fma(bb, scaled(bb, a[0]), tb.toF32(bb, a[1]), a[2]);
      });
  Value halfSq =
      tb.reduceLast(x, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        Value v = scaled(bb, a[0]);
        return tb.fma(bb, v, arith::MulFOp::create(bb, v, tb.f32Const(0.5)),
                      a[1]);
      });
  auto [id, outer] = tb.rowMaps(rank);
  Value invSqrtM = tb.f32Const(1.0 / std::sqrt(static_cast<double>(m)));
  return tb.generic({proj, halfSq}, {id, outer}, tb.empty(outShape), id,
                    std::string(rank, 'p'),
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      Value e = math::ExpOp::create(
                          bb, arith::SubFOp::create(bb, a[0], a[1]));
                      return arith::MulFOp::create(bb, e, invSqrtM);
                    });
}

Value mlir::attn::scores5(TensorBuilder &tb, Value q5, Value key) {
  ArrayRef<int64_t> qs = shapeOf(q5), ks = shapeOf(key);
  TensorBuilder::Sizes q = tb.sizes(q5), k = tb.sizes(key);
  Value kt = tb.transpose(key, {0, 1, 3, 2}); // B x Hkv x D x Lk
  // Loops (b, k, g, i, d, j); a key batch of 1 broadcasts.
  int64_t kb = ks[0] == 1 && qs[0] != 1 ? -1 : 0;
  return tb.contract(q5, tb.map(6, {0, 1, 2, 3, 4}), kt,
                     tb.map(6, {kb, 1, 4, 5}), {q[0], q[1], q[2], q[3], k[2]},
                     tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
}

namespace {
/// Materializes the block tables of a mask as constants, before the generic
/// that reads them.
struct MaskTables {
  std::map<const mask::Node *, Value> tables;

  void collect(TensorBuilder &tb, const mask::Node &n) {
    if (n.kind == mask::Node::Kind::Table) {
      auto type = RankedTensorType::get({n.rows, n.cols}, tb.b.getI8Type());
      SmallVector<int8_t> bits(n.table.begin(), n.table.end());
      tables[&n] = arith::ConstantOp::create(
          tb.b, DenseElementsAttr::get(type, ArrayRef<int8_t>(bits)));
    }
    for (const mask::Node &c : n.children)
      collect(tb, c);
  }
};
} // namespace

Value mlir::attn::rowSequences(TensorBuilder &tb, Value offsets,
                               OpFoldResult rows) {
  ImplicitLocOpBuilder &b = tb.b;
  Type i32 = b.getI32Type();
  Value n = arith::SubIOp::create(b, tensor::DimOp::create(b, offsets, 0),
                                  tb.index(1));
  return tb.generic(
      {}, {}, tb.empty({rows}, i32), tb.map(1, {0}), "p",
      [&](ImplicitLocOpBuilder &bb, ValueRange) -> Value {
        // The last sequence whose first row is at or before this row, if
        // the row lies before the last offset.
        Value row =
            arith::IndexCastOp::create(bb, i32, linalg::IndexOp::create(bb, 0));
        Value none = arith::ConstantOp::create(bb, bb.getI32IntegerAttr(-1));
        auto loop = scf::ForOp::create(
            bb, arith::ConstantIndexOp::create(bb, 0), n,
            arith::ConstantIndexOp::create(bb, 1), ValueRange{none},
            [&](OpBuilder &, Location, Value s, ValueRange found) {
              Value lo = tensor::ExtractOp::create(bb, offsets, ValueRange{s});
              Value hi = tensor::ExtractOp::create(
                  bb, offsets,
                  ValueRange{arith::AddIOp::create(
                      bb, s, arith::ConstantIndexOp::create(bb, 1))});
              Value inside = arith::AndIOp::create(
                  bb,
                  arith::CmpIOp::create(bb, arith::CmpIPredicate::sge, row, lo),
                  arith::CmpIOp::create(bb, arith::CmpIPredicate::slt, row,
                                        hi));
              Value s32 = arith::IndexCastOp::create(bb, i32, s);
              scf::YieldOp::create(bb, ValueRange{arith::SelectOp::create(
                                           bb, inside, s32, found[0])});
            });
        return loop.getResult(0);
      });
}

namespace {
/// Where a score sits in its sequence: whether it exists, the query and key
/// positions within the sequence, the key position of the sequence's first
/// query (`Lk - Lq` of the sequence) and its key length, all index values.
struct SequencePosition {
  Value valid, query, key, offset, keyLen;
};

/// The position of score (b, q, k) under `spec`'s varlen operands (or the
/// whole batch row without them).
SequencePosition positionOf(ImplicitLocOpBuilder &bb, const WeightSpec &spec,
                            Value batch, Value q, Value k, Value queryLen,
                            Value keyLen) {
  Type idx = bb.getIndexType();
  auto at = [&](Value t, Value i) -> Value {
    return arith::IndexCastOp::create(
        bb, idx, tensor::ExtractOp::create(bb, t, ValueRange{i}));
  };
  auto lt = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(bb, arith::CmpIPredicate::slt, x, y);
  };
  SequencePosition p;
  if (spec.querySequence) {
    Value sq = at(spec.querySequence, q), sk = at(spec.keySequence, k);
    Value zero = arith::ConstantIndexOp::create(bb, 0);
    Value one = arith::ConstantIndexOp::create(bb, 1);
    p.valid = arith::AndIOp::create(
        bb, arith::CmpIOp::create(bb, arith::CmpIPredicate::eq, sq, sk),
        arith::CmpIOp::create(bb, arith::CmpIPredicate::sge, sq, zero));
    Value s = arith::MaxSIOp::create(bb, sq, zero);
    Value s1 = arith::AddIOp::create(bb, s, one);
    Value q0 = at(spec.queryOffsets, s), q1 = at(spec.queryOffsets, s1);
    Value k0 = at(spec.keyOffsets, s), k1 = at(spec.keyOffsets, s1);
    p.query = arith::SubIOp::create(bb, q, q0);
    p.key = arith::SubIOp::create(bb, k, k0);
    p.keyLen = arith::SubIOp::create(bb, k1, k0);
    p.offset =
        arith::SubIOp::create(bb, p.keyLen, arith::SubIOp::create(bb, q1, q0));
    return p;
  }
  Value lq = spec.queryLengths ? at(spec.queryLengths, batch) : queryLen;
  p.keyLen = spec.keyLengths ? at(spec.keyLengths, batch) : keyLen;
  p.valid = arith::AndIOp::create(bb, lt(q, lq), lt(k, p.keyLen));
  p.query = q;
  p.key = k;
  p.offset = arith::SubIOp::create(bb, p.keyLen, lq);
  return p;
}
} // namespace

Value mlir::attn::applyValues5(TensorBuilder &tb, Value p, Value value,
                               const WeightSpec *spec) {
  TensorBuilder::Sizes ps = tb.sizes(p), vs = tb.sizes(value);
  // Loops (b, k, g, i, j, e).
  AffineMap pMap = tb.map(6, {0, 1, 2, 3, 4}), vMap = tb.map(6, {0, 1, 4, 5}),
            outMap = tb.map(6, {0, 1, 2, 3, 5});
  TensorBuilder::Sizes outSizes = {ps[0], ps[1], ps[2], ps[3], vs[3]};
  bool varlen =
      spec && (spec->queryLengths || spec->keyLengths || spec->querySequence);
  if (!varlen)
    return tb.weightedSum(p, pMap, value, vMap, outSizes, outMap, "pppprp");
  Value queryLen = tb.indexOf(ps[3]), keyLen = tb.indexOf(ps[4]);
  return tb.generic(
      {p, value}, {pMap, vMap}, tb.filled(outSizes, 0.0), outMap, "pppprp",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        SequencePosition pos =
            positionOf(bb, *spec, linalg::IndexOp::create(bb, 0),
                       linalg::IndexOp::create(bb, 3),
                       linalg::IndexOp::create(bb, 4), queryLen, keyLen);
        // (A zero weight adds nothing, even against an inf or NaN value.)
        Value w = tb.toF32(bb, a[0]);
        Value sum = tb.fma(bb, w, tb.toF32(bb, a[1]), a[2]);
        Value some = arith::CmpFOp::create(bb, arith::CmpFPredicate::UNE, w,
                                           tb.f32Const(0.0));
        return arith::SelectOp::create(
            bb, arith::AndIOp::create(bb, pos.valid, some), sum, a[2]);
      });
}

namespace {
/// weights5 phase by phase: the masked, scaled scores (score modifiers, the
/// mask tensor, pointwise attention's function, then the mask), then the
/// kernel normalization or the softmax (attention sinks and log-sum-exp).
/// Holds what the phases share; `prepare` sets it up.
struct WeightsLowering {
  TensorBuilder &tb;
  const WeightSpec &spec;
  MaskTables tables;
  double negInf = -std::numeric_limits<double>::infinity();
  bool isSoftmax = false;
  PointwiseAttr pointwise;
  KernelAttr kernel;
  bool varlen = false;
  Value queryLen, keyLen;
  /// The fill value that marks masked scores.
  double maskedValue = 0.0;
  /// Pointwise attention's alpha and, without varlen operands, its L^-alpha.
  double alpha = 0.0;
  Value lengthFactor;
  /// ALiBi's key position of query 0 without varlen operands.
  Value alibiOffset;

  WeightsLowering(TensorBuilder &tb, const WeightSpec &spec)
      : tb(tb), spec(spec) {}

  /// The query head of 5-D score indices (b, kvHead, g, ...).
  Value headOf(ImplicitLocOpBuilder &bb, ValueRange idx) {
    return arith::AddIOp::create(
        bb, arith::MulIOp::create(bb, idx[1], tb.index(spec.group)), idx[2]);
  }

  /// `len^-alpha` as an f32 value (`len` an index value).
  Value powerOf(ImplicitLocOpBuilder &bb, Value len) {
    Value l = arith::IndexCastOp::create(bb, bb.getI64Type(), len);
    return math::PowFOp::create(bb, arith::SIToFPOp::create(bb, tb.f32, l),
                                tb.f32Const(-alpha));
  }

  /// The sizes of the scores `s`; materializes the mask tables, the
  /// lengths and the factors shared by every score.
  TensorBuilder::Sizes prepare(Value s) {
    TensorBuilder::Sizes shape = tb.sizes(s);
    if (spec.mask)
      tables.collect(tb, spec.mask->getRoot());
    isSoftmax = isa<SoftmaxAttr>(spec.normalizer);
    pointwise = dyn_cast<PointwiseAttr>(spec.normalizer);
    kernel = dyn_cast<KernelAttr>(spec.normalizer);
    varlen = spec.queryLengths || spec.keyLengths || spec.querySequence;
    queryLen = tb.indexOf(shape[3]);
    keyLen = tb.indexOf(shape[4]);

    // Masked, scaled scores; the fill value marks what is masked.
    maskedValue = isSoftmax ? negInf : 0.0;
    // L^-alpha of pointwise attention: a constant for a static key length, a
    // run-time power otherwise (per sequence for varlen batches).
    alpha = pointwise ? pointwise.getAlpha().convertToDouble() : 0.0;
    if (pointwise && !varlen) {
      if (std::optional<int64_t> len = getConstantIntValue(spec.keyLen))
        lengthFactor = tb.f32Const(std::pow(static_cast<double>(*len), -alpha));
      else
        lengthFactor = powerOf(tb.b, tb.indexOf(spec.keyLen));
    }
    // ALiBi's key position of query 0, Lk - Lq (per sequence for varlen
    // batches, from positionOf).
    if (spec.alibiSlopes && !varlen)
      alibiOffset = arith::SubIOp::create(tb.b, keyLen, queryLen);
    return shape;
  }

  /// The score modifiers applied to the raw score `x` at `idx`: the extra
  /// score, the scale, the bias, ALiBi and soft-capping, in that order.
  Value modifiedScore(ImplicitLocOpBuilder &bb, ValueRange idx,
                      const std::optional<SequencePosition> &pos, Value x,
                      Value *capped = nullptr, Value *regionSlope = nullptr,
                      SmallVectorImpl<CaptureTangent> *tangents = nullptr) {
    if (spec.extraScore)
      x = arith::AddFOp::create(bb, x, spec.extraScore(bb, idx));
    if (!kernel && spec.scale != 1.0)
      x = arith::MulFOp::create(bb, x, tb.f32Const(spec.scale));
    if (spec.bias)
      x = arith::AddFOp::create(bb, x, spec.bias(bb, idx));
    if (spec.alibiSlopes) {
      // -slope[h] * |i + Lk - Lq - j|, per sequence for varlen batches.
      Value slope = tensor::ExtractOp::create(bb, spec.alibiSlopes,
                                              ValueRange{headOf(bb, idx)});
      x = arith::SubFOp::create(
          bb, x, arith::MulFOp::create(bb, slope, alibiDistance(bb, idx, pos)));
    }
    if (spec.softcap) {
      Value t = math::TanhOp::create(
          bb, arith::MulFOp::create(bb, x, tb.f32Const(1.0 / *spec.softcap)));
      x = arith::MulFOp::create(bb, t, tb.f32Const(*spec.softcap));
    }
    if (capped)
      *capped = x;
    if (!spec.scoreMod)
      return x;
    SmallVector<Value, 5> args = {x, idx[0], headOf(bb, idx),
                                  pos ? pos->query : idx[3],
                                  pos ? pos->key : idx[4]};
    if (!regionSlope)
      return emitModRegion(bb, *spec.scoreMod, args, captureAccess());
    auto [y, slope] = emitScoreModWithDerivative(bb, *spec.scoreMod, args,
                                                 captureAccess(), tangents);
    *regionSlope = slope;
    return y;
  }

  /// The distance ALiBi scales at score indices `idx`: |i + Lk - Lq - j|
  /// (per sequence for varlen batches), as f32.
  Value alibiDistance(ImplicitLocOpBuilder &bb, ValueRange idx,
                      const std::optional<SequencePosition> &pos) {
    Value q = pos ? pos->query : idx[3], k = pos ? pos->key : idx[4];
    Value offset = pos ? pos->offset : alibiOffset;
    Value dist =
        arith::SubIOp::create(bb, arith::AddIOp::create(bb, q, offset), k);
    dist = math::AbsIOp::create(
        bb, arith::IndexCastOp::create(bb, bb.getI64Type(), dist));
    return arith::SIToFPOp::create(bb, tb.f32, dist);
  }

  /// The captured tensors of the regions, read in place.
  CaptureAccess captureAccess() const {
    CaptureAccess access;
    access.dim = [this](ImplicitLocOpBuilder &eb, unsigned c,
                        unsigned d) -> Value {
      return eb.createOrFold<tensor::DimOp>(spec.captures[c], d);
    };
    access.read = [this](ImplicitLocOpBuilder &eb, unsigned c,
                         ValueRange at) -> Value {
      return tensor::ExtractOp::create(eb, spec.captures[c], at);
    };
    return access;
  }

  /// The mask tensor's verdict on the score `x` at `idx` (null without a
  /// mask tensor): a boolean decides; an additive one is added to `x`, its
  /// -inf entries deciding.
  Value applyMaskTensor(ImplicitLocOpBuilder &bb, ValueRange idx, Value &x) {
    Value tensorOk;
    if (spec.maskTensor) {
      Value m = biasAt5(bb, spec.maskTensor, spec.group, idx);
      if (m.getType().isInteger(1)) {
        tensorOk = m;
      } else {
        x = arith::AddFOp::create(bb, x, m);
        tensorOk = arith::CmpFOp::create(bb, arith::CmpFPredicate::OGT, m,
                                         tb.f32Const(negInf));
      }
    }
    return tensorOk;
  }

  /// Whether `spec.mask` allows the score at `idx` (positions within the
  /// sequence `pos` for varlen batches).
  Value maskAllowed(ImplicitLocOpBuilder &bb, ValueRange idx,
                    const std::optional<SequencePosition> &pos) {
    Value head = headOf(bb, idx);
    MaskEmitter emitter(
        *spec.mask,
        [&](ImplicitLocOpBuilder &eb, const mask::Node &node, Value row,
            Value col) -> Value {
          Value bit = tensor::ExtractOp::create(eb, tables.tables.at(&node),
                                                ValueRange{row, col});
          return arith::CmpIOp::create(
              eb, arith::CmpIPredicate::ne, bit,
              arith::ConstantOp::create(eb, eb.getI8IntegerAttr(0)));
        },
        [&](ImplicitLocOpBuilder &eb, Value q, Value k) -> Value {
          Value sq = tensor::ExtractOp::create(eb, spec.querySegments,
                                               ValueRange{idx[0], q});
          Value sk = tensor::ExtractOp::create(eb, spec.keySegments,
                                               ValueRange{idx[0], k});
          return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, sq, sk);
        },
        {[&](ImplicitLocOpBuilder &eb, const mask::Node &, Value q,
             Value k) -> Value {
           return emitModRegion(eb, *spec.maskMod, {idx[0], head, q, k},
                                captureAccess());
         },
         {}});
    return pos ? emitter.emitAllowed(bb, head, pos->query, pos->key,
                                     pos->offset)
               : emitter.emitAllowed(bb, head, idx[3], idx[4], spec.maskOffset);
  }

  /// The body of the masked scores: the score `a[0]` modified, then set to
  /// `maskedValue` where the mask, the sequence or the mask tensor forbid it.
  Value maskedScore(ImplicitLocOpBuilder &bb, ValueRange a) {
    SmallVector<Value> idx;
    for (int64_t d = 0; d < 5; ++d)
      idx.push_back(linalg::IndexOp::create(bb, d));
    std::optional<SequencePosition> pos;
    if (varlen)
      pos = positionOf(bb, spec, idx[0], idx[3], idx[4], queryLen, keyLen);
    Value x = modifiedScore(bb, idx, pos, a[0]);
    Value tensorOk = applyMaskTensor(bb, idx, x);
    if (pointwise)
      x = arith::MulFOp::create(bb, applyPointwiseFn(bb, pointwise.getFn(), x),
                                pos ? powerOf(bb, pos->keyLen) : lengthFactor);
    if (!spec.mask && !pos && !tensorOk)
      return x;
    Value allowed;
    if (spec.mask)
      allowed = maskAllowed(bb, idx, pos);
    for (Value part : {pos ? pos->valid : Value(), tensorOk})
      if (part)
        allowed = allowed ? arith::AndIOp::create(bb, allowed, part).getResult()
                          : part;
    return arith::SelectOp::create(bb, allowed, x, tb.f32Const(maskedValue));
  }

  /// The body of scoreGradient5: `a` = raw score, then softmax's P, dP, D
  /// (and dLse) or pointwise's dP.
  Value scoreGradient(ImplicitLocOpBuilder &bb, ValueRange a, bool hasDLse,
                      bool atRegionResult) {
    SmallVector<Value> idx;
    for (int64_t d = 0; d < 5; ++d)
      idx.push_back(linalg::IndexOp::create(bb, d));
    std::optional<SequencePosition> pos;
    if (varlen)
      pos = positionOf(bb, spec, idx[0], idx[3], idx[4], queryLen, keyLen);
    // The soft-capped score (before the score region) and the region's
    // derivative at it.
    Value capped, regionSlope;
    Value x = modifiedScore(bb, idx, pos, a[0], &capped, &regionSlope);
    Value tensorOk = applyMaskTensor(bb, idx, x);
    Value zero = tb.f32Const(0.0);
    Value dx;
    if (kernel) {
      // (dP - D) / (den + eps) on allowed scores of rows with a non-zero
      // denominator; a[1] dP, a[2] D, a[3] the row's den + eps.
      dx = arith::DivFOp::create(bb, arith::SubFOp::create(bb, a[1], a[2]),
                                 a[3]);
      Value allowed =
          arith::CmpFOp::create(bb, arith::CmpFPredicate::ONE, a[3], zero);
      if (spec.mask)
        allowed = arith::AndIOp::create(bb, allowed, maskAllowed(bb, idx, pos));
      for (Value part : {pos ? pos->valid : Value(), tensorOk})
        if (part)
          allowed = arith::AndIOp::create(bb, allowed, part);
      return arith::SelectOp::create(bb, allowed, dx, zero);
    }
    if (isSoftmax) {
      // P (dP - D + dLse); exactly 0 where P is (masked scores, rows
      // without keys), whatever dP holds there.
      Value t = arith::SubFOp::create(bb, a[2], a[3]);
      if (hasDLse)
        t = arith::AddFOp::create(bb, t, a[4]);
      Value isZero =
          arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, a[1], zero);
      dx = arith::SelectOp::create(bb, isZero, zero,
                                   arith::MulFOp::create(bb, a[1], t));
    } else {
      dx = arith::MulFOp::create(
          bb,
          arith::MulFOp::create(
              bb, applyPointwiseDerivative(bb, pointwise.getFn(), x), a[1]),
          pos ? powerOf(bb, pos->keyLen) : lengthFactor);
      Value allowed;
      if (spec.mask)
        allowed = maskAllowed(bb, idx, pos);
      for (Value part : {pos ? pos->valid : Value(), tensorOk})
        if (part)
          allowed = allowed
                        ? arith::AndIOp::create(bb, allowed, part).getResult()
                        : part;
      if (allowed)
        dx = arith::SelectOp::create(bb, allowed, dx, zero);
    }
    if (atRegionResult)
      return dx;
    if (regionSlope) {
      // (Zero where the score takes no gradient, whatever the region's
      // derivative is there.)
      Value none =
          arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, dx, zero);
      dx = arith::SelectOp::create(bb, none, zero,
                                   arith::MulFOp::create(bb, dx, regionSlope));
    }
    if (spec.softcap) {
      // d(cap tanh(y / cap)) / dy = 1 - tanh^2.
      Value t =
          arith::MulFOp::create(bb, capped, tb.f32Const(1.0 / *spec.softcap));
      Value d = arith::SubFOp::create(bb, tb.f32Const(1.0),
                                      arith::MulFOp::create(bb, t, t));
      dx = arith::MulFOp::create(bb, dx, d);
    }
    return dx;
  }

  /// Masked, scaled scores `s`; the fill value marks what is masked.
  Value maskedScores(Value s) {
    return tb.elementwise({s},
                          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                            return maskedScore(bb, a);
                          });
  }

  /// The attention sink of the row of a generic over rows
  /// [b, kvHead, g, i].
  Value sinkOf(ImplicitLocOpBuilder &bb) {
    SmallVector<Value> ri;
    for (int64_t d = 0; d < 3; ++d)
      ri.push_back(linalg::IndexOp::create(bb, d));
    return tensor::ExtractOp::create(bb, spec.sinks,
                                     ValueRange{headOf(bb, ri)});
  }

  /// The rows' log-sum-exp from their sum and maximum, -inf where the sum
  /// is 0.
  Value logSumExp(Value rowSum, Value rowMax) {
    return tb.elementwise(
        {rowSum, rowMax}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          // (UGT: a NaN sum, from a NaN score, stays NaN.)
          Value positive = arith::CmpFOp::create(bb, arith::CmpFPredicate::UGT,
                                                 a[0], tb.f32Const(0));
          Value v =
              arith::AddFOp::create(bb, a[1], math::LogOp::create(bb, a[0]));
          return arith::SelectOp::create(bb, positive, v, tb.f32Const(negInf));
        });
  }

  /// The softmax of the rows of `masked` (sizes `shape`, row maps `id` and
  /// `outer`), with the attention sinks; sets `*lse` when given.
  Value softmax(Value masked, const TensorBuilder::Sizes &shape, AffineMap id,
                AffineMap outer, Value *lse) {
    // Softmax: subtract the row max, exponentiate the allowed entries,
    // normalize rows with a positive sum.
    Value rowMax = tb.rowMax(masked);
    // Attention sinks join the maximum and the sum (rows [b, kvHead, g, i]).
    if (spec.sinks)
      rowMax = tb.elementwise(
          {rowMax}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            return arith::MaximumFOp::create(bb, a[0], sinkOf(bb));
          });
    Value ex = tb.generic(
        {masked, rowMax}, {id, outer}, tb.empty(shape), id, "ppppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value isMasked = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                                 a[0], tb.f32Const(negInf));
          Value e =
              math::ExpOp::create(bb, arith::SubFOp::create(bb, a[0], a[1]));
          return arith::SelectOp::create(bb, isMasked, tb.f32Const(0), e);
        });
    Value rowSum = tb.rowSum(ex);
    if (spec.sinks)
      rowSum = tb.elementwise(
          {rowSum, rowMax},
          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            Value t = arith::SubFOp::create(bb, sinkOf(bb), a[1]);
            return arith::AddFOp::create(bb, a[0], math::ExpOp::create(bb, t));
          });
    if (lse)
      *lse = logSumExp(rowSum, rowMax);
    return tb.generic(
        {ex, rowSum}, {id, outer}, tb.empty(shape), id, "ppppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          // Zeros for an empty row (sum 0); a NaN sum, from
          // a NaN score, gives NaN (UGT) but where the score is masked
          // (its exponential 0): a masked weight is 0 whatever the row
          // holds, so that gradients never see a NaN through it.
          Value positive = arith::CmpFOp::create(bb, arith::CmpFPredicate::UGT,
                                                 a[1], tb.f32Const(0));
          Value zero = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                             a[0], tb.f32Const(0));
          Value p = arith::DivFOp::create(bb, a[0], a[1]);
          p = arith::SelectOp::create(bb, zero, tb.f32Const(0), p);
          return arith::SelectOp::create(bb, positive, p, tb.f32Const(0));
        });
  }
};
} // namespace

Value mlir::attn::weights5(TensorBuilder &tb, Value s, const WeightSpec &spec,
                           Value *lse) {
  WeightsLowering w(tb, spec);
  TensorBuilder::Sizes shape = w.prepare(s);
  Value masked = w.maskedScores(s);
  if (w.pointwise)
    return masked;

  auto [id, outer] = tb.rowMaps(5);
  if (w.kernel)
    return divideRows(tb, masked, tb.rowSum(masked),
                      w.kernel.getEps().convertToDouble());
  return w.softmax(masked, shape, id, outer, lse);
}

Value mlir::attn::maskedScores5(TensorBuilder &tb, Value s,
                                const WeightSpec &spec) {
  WeightsLowering w(tb, spec);
  w.prepare(s);
  return w.maskedScores(s);
}

Value mlir::attn::scoreGradient5(TensorBuilder &tb, Value s,
                                 const WeightSpec &spec,
                                 const ScoreCotangent &c) {
  WeightsLowering w(tb, spec);
  TensorBuilder::Sizes shape = w.prepare(s);
  auto [id, outer] = tb.rowMaps(5);
  SmallVector<Value> inputs = {s};
  SmallVector<AffineMap> maps = {id};
  if (w.kernel) {
    inputs.append({c.dWeights, c.rowDot, c.denominator});
    maps.append({id, outer, outer});
  } else if (w.isSoftmax) {
    inputs.append({c.weights, c.dWeights, c.rowDot});
    maps.append({id, id, outer});
    if (c.dLse) {
      inputs.push_back(c.dLse);
      maps.push_back(outer);
    }
  } else {
    inputs.push_back(c.dWeights);
    maps.push_back(id);
  }
  bool hasDLse = w.isSoftmax && c.dLse;
  return tb.generic(inputs, maps, tb.empty(shape), id, "ppppp",
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      return w.scoreGradient(bb, a, hasDLse, c.atRegionResult);
                    });
}

Value mlir::attn::alibiSlopeGradient5(TensorBuilder &tb, Value dy,
                                      const WeightSpec &spec) {
  WeightsLowering w(tb, spec);
  TensorBuilder::Sizes shape = w.prepare(dy);
  // Over (b, kvHead, g, i, j) into [kvHead, g], then the query heads.
  Value perGroup = tb.generic(
      {dy}, {tb.map(5, {0, 1, 2, 3, 4})}, tb.filled({shape[1], shape[2]}, 0.0),
      tb.map(5, {1, 2}), "rpprr",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < 5; ++d)
          idx.push_back(linalg::IndexOp::create(bb, d));
        std::optional<SequencePosition> pos;
        if (w.varlen)
          pos = positionOf(bb, spec, idx[0], idx[3], idx[4], w.queryLen,
                           w.keyLen);
        Value term = arith::MulFOp::create(
            bb, a[0], arith::NegFOp::create(bb, w.alibiDistance(bb, idx, pos)));
        // (A zero gradient adds nothing.)
        Value none = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, a[0],
                                           tb.f32Const(0.0));
        return arith::SelectOp::create(bb, none, a[1],
                                       arith::AddFOp::create(bb, a[1], term));
      });
  return tensor::CollapseShapeOp::create(
      tb.b, perGroup, ArrayRef<ReassociationIndices>{{0, 1}});
}

SmallVector<Value> mlir::attn::captureGradients5(TensorBuilder &tb, Value s,
                                                 const WeightSpec &spec,
                                                 Value dyFinal,
                                                 ArrayRef<unsigned> captures) {
  WeightsLowering w(tb, spec);
  TensorBuilder::Sizes shape = w.prepare(s);
  ImplicitLocOpBuilder &b = tb.b;
  SmallVector<Value> init;
  for (unsigned c : captures)
    init.push_back(tb.filled(tb.sizes(spec.captures[c]), 0.0));
  if (!spec.scoreMod) // (mask regions' reads take no gradient)
    return init;
  // for b, kvHead, g, i, j: where dyFinal is not 0, each read's partial
  // derivative times it added at the read's element.
  std::function<SmallVector<Value>(int64_t, SmallVector<Value> &, ValueRange)>
      nest = [&](int64_t d, SmallVector<Value> &idx,
                 ValueRange acc) -> SmallVector<Value> {
    if (d == 5) {
      Value x = tensor::ExtractOp::create(b, dyFinal, idx);
      Value some = arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, x,
                                         tb.f32Const(0.0));
      auto ifOp = scf::IfOp::create(
          b, some,
          [&](OpBuilder &, Location) {
            std::optional<SequencePosition> pos;
            if (w.varlen)
              pos = positionOf(b, spec, idx[0], idx[3], idx[4], w.queryLen,
                               w.keyLen);
            Value capped, slope;
            SmallVector<CaptureTangent> tangents;
            w.modifiedScore(b, idx, pos, tensor::ExtractOp::create(b, s, idx),
                            &capped, &slope, &tangents);
            SmallVector<Value> out(acc);
            for (const CaptureTangent &t : tangents) {
              auto at = llvm::find(captures, t.capture);
              if (at == captures.end())
                continue;
              Value &g = out[at - captures.begin()];
              Value old = tensor::ExtractOp::create(b, g, t.indices);
              Value add = arith::MulFOp::create(b, x, t.derivative);
              g = tensor::InsertOp::create(
                  b, arith::AddFOp::create(b, old, add), g, t.indices);
            }
            scf::YieldOp::create(b, out);
          },
          [&](OpBuilder &, Location) { scf::YieldOp::create(b, acc); });
      return SmallVector<Value>(ifOp.getResults());
    }
    auto loop = scf::ForOp::create(
        b, tb.index(0), tb.indexOf(shape[d]), tb.index(1), acc,
        [&](OpBuilder &, Location, Value iv, ValueRange inner) {
          idx.push_back(iv);
          scf::YieldOp::create(b, nest(d + 1, idx, inner));
          idx.pop_back();
        });
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> idx;
  return nest(0, idx, init);
}

Value mlir::attn::divideRows(TensorBuilder &tb, Value num, Value den,
                             double eps) {
  int64_t rank = shapeOf(num).size();
  auto [id, outer] = tb.rowMaps(rank);
  return tb.generic(
      {num, den}, {id, outer}, tb.empty(tb.sizes(num)), id,
      std::string(rank, 'p'),
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        Value d = arith::AddFOp::create(bb, a[1], tb.f32Const(eps));
        Value nonzero = arith::CmpFOp::create(bb, arith::CmpFPredicate::ONE, d,
                                              tb.f32Const(0));
        Value q = arith::DivFOp::create(bb, a[0], d);
        return arith::SelectOp::create(bb, nonzero, q, tb.f32Const(0));
      });
}

Value mlir::attn::applyGate(TensorBuilder &tb, Value o, Value gate,
                            int64_t kvHeads) {
  if (!gate)
    return o;
  Value g5 = splitHeads(tb, gate, kvHeads);
  return tb.elementwise(
      {o, g5}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        return arith::MulFOp::create(bb, a[0], tb.toF32(bb, a[1]));
      });
}

Value mlir::attn::finishHeads(TensorBuilder &tb, Value o, Type elementType) {
  return mergeHeads(tb, fromF32Tensor(tb, o, elementType));
}

Value mlir::attn::attend(TensorBuilder &tb, Value s, const WeightSpec &spec,
                         Value value, Type elementType) {
  return finishHeads(tb, applyValues5(tb, weights5(tb, s, spec), value, &spec),
                     elementType);
}
