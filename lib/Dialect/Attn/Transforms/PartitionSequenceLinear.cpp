//===- PartitionSequenceLinear.cpp - Sequence-parallel linear attention ---===//
//
// The kernelized form of attn-partition-sequence's rank program
// (PartitionSequence.h). With features phi and the values extended by a
// column of ones, V' = [V, 1], the state S = phi(K)^T V' holds both the
// numerator state and the key sum of linear attention, so one reduction
// carries both:
//   unmasked: o_i = phi(q_i) S_all[:, :Dv] / (phi(q_i) S_all[:, Dv] + eps),
//             S_all the all-reduced sum of every rank's state;
//   causal:   u_i = chunked(phi(Q), phi(K), V')_i + phi(q_i) S_before,
//             o_i = u_i[:Dv] / (u_i[Dv] + eps), S_before the sum of the
//             states of the ranks before this one.
// What travels is B x Hkv x F x (Dv + 1) floats per rank (P of them for the
// causal prefix), whatever the sequence length.
//
// The gradient reduces the states the other way too: with the rows'
// cotangents du_i = [dO_i, -dO_i . o_i] / (den_i + eps), each rank's query
// state G = phi(Q)^T du (B x Hq x F x (Dv + 1)) is summed over the ranks
// after this one (causal; every other rank unmasked), and the rank's
// attn.attention_grad takes both sums as the states of the keys and
// queries outside its rows (key_state, query_state: the linear-time
// gradient's terms). A FAVOR+ projection's gradient is all-reduced.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "attn-opt/Dialect/Attn/Transforms/Transforms.h"
#include "attn-opt/Dialect/Attn/Utils/TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the linear program of one rank.
class LinearRank : public KernelArith {
public:
  LinearRank(ImplicitLocOpBuilder &b, AttentionOp op, Value comm)
      : KernelArith(b), op(op), comm(comm), f32(b.getF32Type()) {}

  Value build(Value q, Value k, Value v, Value rank, Value numRanks);
  SmallVector<Value> gradient(Value q, Value k, Value v, Value dO, Value rank,
                              Value numRanks, bool projectionGrad);

private:
  /// The size of dimension `d` of `t`, as an OpFoldResult.
  OpFoldResult size(Value t, int64_t d) {
    auto type = cast<RankedTensorType>(t.getType());
    if (!type.isDynamicDim(d))
      return b.getIndexAttr(type.getDimSize(d));
    return tensor::DimOp::create(b, t, d).getResult();
  }
  /// A tensor of `shape` (static sizes, dynamic ones from `sizes`) filled
  /// with `value`.
  Value filled(ArrayRef<OpFoldResult> sizes, double value) {
    Value empty = tensor::EmptyOp::create(b, sizes, f32);
    return linalg::FillOp::create(b, f32Const(value), empty).getResult(0);
  }
  /// `t[..., from : from + count]` along the last dimension; `count` 1
  /// drops that dimension.
  Value lastSlice(Value t, int64_t from, int64_t count) {
    auto type = cast<RankedTensorType>(t.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(size(t, d));
    offsets.back() = b.getIndexAttr(from);
    sizes.back() = b.getIndexAttr(count);
    SmallVector<int64_t> shape(type.getShape());
    if (count == 1)
      shape.pop_back();
    else
      shape.back() = count;
    auto resultType = RankedTensorType::get(shape, f32);
    return tensor::ExtractSliceOp::create(b, resultType, t, offsets, sizes,
                                          strides);
  }
  Value features(Value x);
  Value extendValues(Value v);
  /// Which ranks' states slotSum adds.
  enum class Slots { Before, After, Others };
  /// The sum of the `which` ranks' `state` (B x H x F x c, one per rank),
  /// in rank order: one all-reduce of a slot per rank.
  Value slotSum(Value state, Value rank, Value numRanks, Slots which);
  /// The rows' numerators and denominators `u` (B x Hq x L x W) over the
  /// whole sequence: the local form plus phi(q) times the outside state.
  Value wholeRows(Value fq, Value fk, Value v1, Value outside);
  /// du = [dO r, -(dO . num) r^2] (B x Hq x L x (Dv + 1)), r = 1 / (den +
  /// eps) (0 where that is 0), from `u` and `dO`.
  Value rowCotangents(Value u, Value dO);
  Value addQueryState(Value u, Value fq, Value state);
  Value divide(Value u);

  AttentionOp op;
  Value comm;
  Type f32;
  /// Dv: the ones column of the extended values.
  int64_t valueDim = 0;
};

Value LinearRank::features(Value x) {
  auto kernel = cast<KernelAttr>(op.getNormalizer());
  FloatAttr inputScale;
  if (op.getScale())
    inputScale = b.getF32FloatAttr(std::sqrt(op.getEffectiveScale()));
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[3] = kernel.getNumFeatures(shape[3]);
  return FeatureMapOp::create(b, RankedTensorType::get(shape, f32), x,
                              op.getProjection(), kernel, inputScale);
}

Value LinearRank::extendValues(Value v) {
  // [V, 1, 0, ...]: the ones column at Dv; the width rounded up to 16
  // columns (a multiple of every target's vector lanes) keeps the linear
  // ops on their fused vector kernels (LinearKernels.cpp).
  auto type = cast<RankedTensorType>(v.getType());
  int64_t dv = type.getDimSize(3);
  int64_t width = llvm::alignTo(dv + 1, 16);
  SmallVector<OpFoldResult> sizes = {size(v, 0), size(v, 1), size(v, 2),
                                     b.getIndexAttr(width)};
  Value out = filled(sizes, 0.0);
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
      strides(4, b.getIndexAttr(1));
  sizes.back() = b.getIndexAttr(dv);
  out = tensor::InsertSliceOp::create(b, v, out, offsets, sizes, strides);
  sizes.back() = b.getIndexAttr(1);
  offsets.back() = b.getIndexAttr(dv);
  return tensor::InsertSliceOp::create(b, filled(sizes, 1.0), out, offsets,
                                       sizes, strides);
}

Value LinearRank::slotSum(Value state, Value rank, Value numRanks,
                          Slots which) {
  // One slot per rank: this rank's state in slot `rank`, zeros elsewhere;
  // the all-reduced sum holds every rank's state.
  auto type = cast<RankedTensorType>(state.getType());
  SmallVector<OpFoldResult> stateSizes;
  for (int64_t d = 0; d < 4; ++d)
    stateSizes.push_back(size(state, d));
  SmallVector<OpFoldResult> slotSizes = {OpFoldResult(numRanks)};
  slotSizes.append(stateSizes);
  Value mine = filled(slotSizes, 0.0);
  SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0)),
      strides(5, b.getIndexAttr(1));
  offsets[0] = rank;
  SmallVector<OpFoldResult> one = {b.getIndexAttr(1)};
  one.append(stateSizes);
  mine = tensor::InsertSliceOp::create(b, state, mine, offsets, one, strides);
  Value into = tensor::EmptyOp::create(b, slotSizes, f32);
  Value all =
      AllReduceOp::create(b, mine.getType(), mine, into, comm).getResult();
  // The sum of the slots before `rank`, after it, or all but its own.
  Value zero = filled(stateSizes, 0.0);
  Value lo = which == Slots::After ? add(rank, idx(1)) : idx(0);
  Value hi = which == Slots::Before ? rank : numRanks;
  auto loop = scf::ForOp::create(b, lo, hi, idx(1), ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<OpFoldResult> at(5, b.getIndexAttr(0));
    at[0] = loop.getInductionVar();
    Value slot = tensor::ExtractSliceOp::create(b, type, all, at, one, strides);
    Value acc = loop.getRegionIterArgs()[0];
    Value sum = linalg::AddOp::create(b, ValueRange{acc, slot}, ValueRange{acc})
                    .getResult(0);
    if (which == Slots::Others)
      sum = select(cmp(arith::CmpIPredicate::eq, loop.getInductionVar(), rank),
                   acc, sum);
    scf::YieldOp::create(b, sum);
  }
  return loop.getResult(0);
}

Value LinearRank::addQueryState(Value u, Value fq, Value state) {
  // phi(q) S_before through attn.state_apply (GQA included): with a zero
  // key sum and eps 1 its denominator is 1, so it is the plain product.
  auto stateType = cast<RankedTensorType>(state.getType());
  SmallVector<OpFoldResult> sumSizes = {
      size(state, 0), size(state, 1), b.getIndexAttr(stateType.getDimSize(2))};
  Value zeros = filled(sumSizes, 0.0);
  Value product = StateApplyOp::create(b, u.getType(), fq, state, zeros,
                                       Value(), b.getF32FloatAttr(1.0f));
  return linalg::AddOp::create(b, ValueRange{u, product}, ValueRange{u})
      .getResult(0);
}

Value LinearRank::divide(Value u) {
  // o = u[..., :Dv] / (u[..., Dv] + eps), 0 where that is 0 (the
  // normalizer of attn.state_apply and attn.chunked_linear).
  int64_t dv = valueDim;
  Value num = lastSlice(u, 0, dv);
  Value den = lastSlice(u, dv, 1);
  double eps = cast<KernelAttr>(op.getNormalizer()).getEps().convertToDouble();
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap row = id.dropResult(3);
  SmallVector<OpFoldResult> sizes = {size(num, 0), size(num, 1), size(num, 2),
                                     b.getIndexAttr(dv)};
  Value out = tensor::EmptyOp::create(b, sizes, f32);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{out.getType()}, ValueRange{num, den}, ValueRange{out},
      ArrayRef<AffineMap>{id, row, id}, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value e = arith::ConstantOp::create(
            nb, loc, nb.getF32FloatAttr(static_cast<float>(eps)));
        Value zero = arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0));
        Value d = arith::AddFOp::create(nb, loc, a[1], e);
        Value nonzero =
            arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::ONE, d, zero);
        Value q = arith::DivFOp::create(nb, loc, a[0], d);
        linalg::YieldOp::create(
            nb, loc,
            ValueRange{arith::SelectOp::create(nb, loc, nonzero, q, zero)});
      });
  return generic.getResult(0);
}

Value LinearRank::build(Value q, Value k, Value v, Value rank, Value numRanks) {
  bool causal = static_cast<bool>(op.getPatternAttr());
  Value fq = features(q), fk = features(k);
  valueDim = cast<RankedTensorType>(v.getType()).getDimSize(3);
  Value v1 = extendValues(v);
  auto fkType = cast<RankedTensorType>(fk.getType());
  auto v1Type = cast<RankedTensorType>(v1.getType());
  int64_t f = fkType.getDimSize(3), dv1 = v1Type.getDimSize(3);
  auto stateType = RankedTensorType::get(
      {fkType.getDimSize(0), fkType.getDimSize(1), f, dv1}, f32);
  auto sumType = RankedTensorType::get(
      {fkType.getDimSize(0), fkType.getDimSize(1), f}, f32);
  Value state = KVStateOp::create(b, stateType, sumType, fk, v1).getState();
  auto qType = cast<RankedTensorType>(q.getType());
  if (!causal) {
    Value into = tensor::EmptyOp::create(
        b,
        SmallVector<OpFoldResult>{size(state, 0), size(state, 1),
                                  b.getIndexAttr(f), b.getIndexAttr(dv1)},
        f32);
    Value all =
        AllReduceOp::create(b, stateType, state, into, comm).getResult();
    auto resultType =
        RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                               qType.getDimSize(2), valueDim},
                              f32);
    double eps =
        cast<KernelAttr>(op.getNormalizer()).getEps().convertToDouble();
    return StateApplyOp::create(b, resultType, fq, lastSlice(all, 0, valueDim),
                                lastSlice(all, valueDim, 1), Value(),
                                b.getF32FloatAttr(static_cast<float>(eps)));
  }
  Value before = slotSum(state, rank, numRanks, Slots::Before);
  auto uType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), qType.getDimSize(2), dv1},
      f32);
  int64_t chunk = defaultChunkSize(f, dv1, std::numeric_limits<int64_t>::max());
  Value u = ChunkedLinearOp::create(b, uType, fq, fk, v1, Value(), Value(),
                                    b.getI64IntegerAttr(chunk), b.getUnitAttr(),
                                    b.getF32FloatAttr(0.0f), b.getUnitAttr());
  u = addQueryState(u, fq, before);
  return divide(u);
}

Value LinearRank::wholeRows(Value fq, Value fk, Value v1, Value outside) {
  auto fqType = cast<RankedTensorType>(fq.getType());
  auto v1Type = cast<RankedTensorType>(v1.getType());
  int64_t f = fqType.getDimSize(3), width = v1Type.getDimSize(3);
  auto uType = RankedTensorType::get(
      {fqType.getDimSize(0), fqType.getDimSize(1), fqType.getDimSize(2), width},
      f32);
  Value u;
  if (op.getPatternAttr()) {
    int64_t chunk =
        defaultChunkSize(f, width, std::numeric_limits<int64_t>::max());
    u = ChunkedLinearOp::create(b, uType, fq, fk, v1, Value(), Value(),
                                b.getI64IntegerAttr(chunk), b.getUnitAttr(),
                                b.getF32FloatAttr(0.0f), b.getUnitAttr());
  } else {
    // Unmasked: every key of the rank, as its own state.
    auto stateType = RankedTensorType::get(
        {fqType.getDimSize(0),
         cast<RankedTensorType>(fk.getType()).getDimSize(1), f, width},
        f32);
    auto sumType = RankedTensorType::get(
        {stateType.getDimSize(0), stateType.getDimSize(1), f}, f32);
    Value own = KVStateOp::create(b, stateType, sumType, fk, v1).getState();
    outside =
        linalg::AddOp::create(b, ValueRange{outside, own}, ValueRange{outside})
            .getResult(0);
    u = filled({size(fq, 0), size(fq, 1), size(fq, 2), b.getIndexAttr(width)},
               0.0);
  }
  return addQueryState(u, fq, outside);
}

Value LinearRank::rowCotangents(Value u, Value dO) {
  TensorBuilder tb(b);
  int64_t dv = valueDim;
  double eps = cast<KernelAttr>(op.getNormalizer()).getEps().convertToDouble();
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  TensorBuilder::Sizes rows = {size(u, 0), size(u, 1), size(u, 2)};
  Value r = tb.generic(
      {u},
      {AffineMap::get(3, 0, {d0, d1, d2, getAffineConstantExpr(dv, ctx)}, ctx)},
      tb.empty(rows), tb.map(3, {0, 1, 2}), "ppp",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        Value den = arith::AddFOp::create(bb, a[0], tb.f32Const(eps));
        Value zero = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, den,
                                           tb.f32Const(0.0));
        return arith::SelectOp::create(
            bb, zero, tb.f32Const(0.0),
            arith::DivFOp::create(bb, tb.f32Const(1.0), den));
      });
  auto [id, outer] = tb.rowMaps(4);
  Value dot =
      tb.generic({dO, lastSlice(u, 0, dv)}, {id, id}, tb.filled(rows, 0.0),
                 outer, "pppr", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                   return tb.fma(bb, a[0], a[1], a[2]);
                 });
  TensorBuilder::Sizes out = {rows[0], rows[1], rows[2],
                              b.getIndexAttr(dv + 1)};
  return tb.generic(
      {r, dot}, {outer, outer}, tb.empty(out), id, "pppp",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < 4; ++d)
          at.push_back(linalg::IndexOp::create(bb, d));
        Value col = at[3];
        at[3] = arith::MinUIOp::create(bb, col, tb.index(dv - 1));
        Value grad = tensor::ExtractOp::create(bb, dO, at);
        Value inside = arith::CmpIOp::create(bb, arith::CmpIPredicate::ult, col,
                                             tb.index(dv));
        Value num = arith::MulFOp::create(bb, grad, a[0]);
        Value den = arith::NegFOp::create(
            bb, arith::MulFOp::create(bb, a[1],
                                      arith::MulFOp::create(bb, a[0], a[0])));
        return arith::SelectOp::create(bb, inside, num, den);
      });
}

SmallVector<Value> LinearRank::gradient(Value q, Value k, Value v, Value dO,
                                        Value rank, Value numRanks,
                                        bool projectionGrad) {
  bool causal = static_cast<bool>(op.getPatternAttr());
  Value fq = features(q), fk = features(k);
  valueDim = cast<RankedTensorType>(v.getType()).getDimSize(3);
  int64_t dv = valueDim;
  Value v1 = extendValues(v);
  auto fkType = cast<RankedTensorType>(fk.getType());
  auto v1Type = cast<RankedTensorType>(v1.getType());
  int64_t f = fkType.getDimSize(3);
  auto stateType = RankedTensorType::get(
      {fkType.getDimSize(0), fkType.getDimSize(1), f, v1Type.getDimSize(3)},
      f32);
  auto sumType = RankedTensorType::get(
      {fkType.getDimSize(0), fkType.getDimSize(1), f}, f32);
  Value state = KVStateOp::create(b, stateType, sumType, fk, v1).getState();
  // The keys outside this rank's rows that its queries see.
  Value outside =
      slotSum(state, rank, numRanks, causal ? Slots::Before : Slots::Others);
  Value x = rowCotangents(wholeRows(fq, fk, v1, outside), dO);
  // The queries outside this rank's rows that see its keys: their
  // phi(Q)^T du, per query head.
  TensorBuilder tb(b);
  TensorBuilder::Sizes gSizes = {size(fq, 0), size(fq, 1), b.getIndexAttr(f),
                                 b.getIndexAttr(dv + 1)};
  Value g = tb.contract(fq, tb.map(5, {0, 1, 4, 2}), x, tb.map(5, {0, 1, 4, 3}),
                        gSizes, tb.map(5, {0, 1, 2, 3}), "ppppr");
  Value after =
      slotSum(g, rank, numRanks, causal ? Slots::After : Slots::Others);
  // The op's attention over this rank's rows, differentiated with both.
  AttentionProblem local = op.getProblem();
  local.query = q;
  local.key = k;
  local.value = v;
  local.results.output = cast<RankedTensorType>(dO.getType());
  local.results.lse = RankedTensorType();
  auto forward = AttentionOp::create(b, local);
  Value projection = op.getProjection();
  auto grad = AttentionGradOp::create(
      b, q.getType(), k.getType(), v.getType(), Type(), Type(), Type(), Type(),
      projectionGrad ? projection.getType() : Type(), TypeRange(),
      forward.getResult(), dO, Value(), Value(), Value(),
      lastSlice(outside, 0, dv + 1), after);
  SmallVector<Value> results = {grad.getGradQuery(), grad.getGradKey(),
                                grad.getGradValue()};
  if (projectionGrad) {
    Value dW = grad.getGradProjection();
    auto type = cast<RankedTensorType>(dW.getType());
    SmallVector<OpFoldResult> sizes = {size(dW, 0), size(dW, 1)};
    Value into = tensor::EmptyOp::create(b, sizes, type.getElementType());
    results.push_back(AllReduceOp::create(b, type, dW, into, comm).getResult());
  }
  return results;
}

} // namespace

SmallVector<Value> mlir::attn::buildLinearRankGradient(
    ImplicitLocOpBuilder &b, AttentionOp op, Value q, Value k, Value v,
    Value dO, Value comm, Value rank, Value numRanks, bool projectionGrad) {
  return LinearRank(b, op, comm)
      .gradient(q, k, v, dO, rank, numRanks, projectionGrad);
}

Value mlir::attn::buildLinearRankProgram(ImplicitLocOpBuilder &b,
                                         AttentionOp op, Value q, Value k,
                                         Value v, Value comm, Value rank,
                                         Value numRanks) {
  return LinearRank(b, op, comm).build(q, k, v, rank, numRanks);
}
