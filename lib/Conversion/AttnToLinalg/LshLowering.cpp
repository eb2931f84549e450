//===- LshLowering.cpp - Reference lowering of attn.lsh_attention ---------===//
//
// Reformer attention as linalg on tensors, one hash round after another:
//   hash    bucket(x) = argmax([x R, -x R]), lowest index on ties;
//   sort    rank(i) = #{j : b_j < b_i} + #{j < i : b_j == b_i} (a stable
//           sort by bucket, as an O(L^2) count that is plain linalg), and
//           pos(p) = the i with rank(i) = p;
//   attend  chunks of the sorted order see their own and the previous chunk,
//           self excluded unless alone, optionally causal;
//   unsort  o_r(i) = o_sorted(rank(i)), lse_r(i) likewise;
//   combine o(i) = sum_r softmax_r(lse_r(i)) o_r(i).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"

#include "attn-opt/Support/Random.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
struct LshLowering {
  ImplicitLocOpBuilder &b;
  TensorBuilder tb;
  int64_t batch, heads, len, dim, valueDim;
  int64_t chunk, numChunks, window;
  Type i64;

  LshLowering(ImplicitLocOpBuilder &b, LshAttentionOp op)
      : b(b), tb(b), i64(b.getI64Type()) {
    ArrayRef<int64_t> s = shapeOf(op.getQk());
    batch = s[0];
    heads = s[1];
    len = s[2];
    dim = s[3];
    valueDim = shapeOf(op.getValue())[3];
    chunk = op.getChunkSize();
    numChunks = len / chunk;
    window = numChunks == 1 ? chunk : 2 * chunk;
  }

  Value i64Const(int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  }

  /// Keys normalized to unit length: x * rsqrt(|x|^2 + kLshNormEpsilon).
  Value normalizeKeys(Value qk) {
    Value sq =
        tb.reduceLast(qk, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
          Value x = tb.toF32(bb, a[0]);
          return tb.fma(bb, x, x, a[1]);
        });
    return tb.generic(
        {qk, sq}, {tb.map(4, {0, 1, 2, 3}), tb.map(4, {0, 1, 2})},
        tb.empty({batch, heads, len, dim}), tb.map(4, {0, 1, 2, 3}), "pppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value inv = math::RsqrtOp::create(
              bb,
              arith::AddFOp::create(bb, a[1], tb.f32Const(kLshNormEpsilon)));
          return arith::MulFOp::create(bb, tb.toF32(bb, a[0]), inv);
        });
  }

  /// Buckets (i64, B x H x rounds x L) of every round, round r's rotation
  /// being `rotations[r]` (lshRotationsConstant): one contraction with the
  /// whole constant (a GPU kernel reads it whole, as a device copy).
  Value hashAll(Value qk, Value rotations, int64_t rounds, int64_t numBuckets) {
    int64_t half = numBuckets / 2;
    // proj[b,h,r,i,c] = sum_d qk[b,h,i,d] R[r,d,c]; loops (b,h,r,i,d,c).
    Value proj =
        tb.contract(qk, tb.map(6, {0, 1, 3, 4}), rotations,
                    tb.map(6, {2, 4, 5}), {batch, heads, rounds, len, half},
                    tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
    Value maxAbs =
        tb.reduceLast(proj, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
          return arith::MaximumFOp::create(bb, math::AbsFOp::create(bb, a[0]),
                                           a[1])
              .getResult();
        });
    // The lowest index among [proj, -proj] reaching the maximum.
    return tb.generic(
        {proj, maxAbs}, {tb.map(5, {0, 1, 2, 3, 4}), tb.map(5, {0, 1, 2, 3})},
        tb.filled({batch, heads, rounds, len}, numBuckets, i64),
        tb.map(5, {0, 1, 2, 3}), "ppppr",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value c = arith::IndexCastOp::create(bb, i64,
                                               linalg::IndexOp::create(bb, 4));
          Value none = i64Const(numBuckets);
          Value isPos =
              arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, a[0], a[1]);
          Value isNeg =
              arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                    arith::NegFOp::create(bb, a[0]), a[1]);
          Value pos = arith::SelectOp::create(bb, isPos, c, none);
          Value neg = arith::SelectOp::create(
              bb, isNeg, arith::AddIOp::create(bb, c, i64Const(half)), none);
          Value best = arith::MinSIOp::create(bb, pos, neg);
          return arith::MinSIOp::create(bb, best, a[2]);
        });
  }

  /// Round `round`'s buckets (B x H x L) of hashAll's.
  Value bucketsOf(Value all, Value round) {
    // (Unit dimensions are dropped by a reshape: a rank-reducing slice
    // with unit batch is ambiguous to the canonicalizer.)
    Value slice = tensor::ExtractSliceOp::create(
        b, RankedTensorType::get({batch, heads, 1, len}, i64), all,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), round,
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads),
                               b.getIndexAttr(1), b.getIndexAttr(len)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1), b.getIndexAttr(1)});
    return tensor::CollapseShapeOp::create(
        b, RankedTensorType::get({batch, heads, len}, i64), slice,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  }

  /// rank(i): position of i in the stable sort by bucket.
  Value ranks(Value buckets) {
    return tb.generic(
        {buckets, buckets}, {tb.map(4, {0, 1, 2}), tb.map(4, {0, 1, 3})},
        tb.filled({batch, heads, len}, 0, i64), tb.map(4, {0, 1, 2}), "pppr",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(bb, 2);
          Value j = linalg::IndexOp::create(bb, 3);
          Value less =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::slt, a[1], a[0]);
          Value same =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::eq, a[1], a[0]);
          Value before =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::ult, j, i);
          Value counts = arith::OrIOp::create(
              bb, less, arith::AndIOp::create(bb, same, before));
          return arith::AddIOp::create(bb, a[2],
                                       arith::ExtUIOp::create(bb, i64, counts));
        });
  }

  /// pos(p): the i with rank(i) = p.
  Value positions(Value rank) {
    return tb.generic(
        {rank}, {tb.map(4, {0, 1, 3})}, tb.filled({batch, heads, len}, 0, i64),
        tb.map(4, {0, 1, 2}), "pppr",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value p = arith::IndexCastOp::create(bb, i64,
                                               linalg::IndexOp::create(bb, 2));
          Value i = arith::IndexCastOp::create(bb, i64,
                                               linalg::IndexOp::create(bb, 3));
          Value hit =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::eq, a[0], p);
          return arith::AddIOp::create(
              bb, a[1], arith::SelectOp::create(bb, hit, i, i64Const(0)));
        });
  }

  /// rows[b,h,p,:] = src[b,h,index[b,h,p],:] (f32).
  Value gatherRows(Value src, Value index) {
    int64_t width = shapeOf(src)[3];
    int64_t rows = shapeOf(index)[2];
    return tb.generic(
        {index}, {tb.map(4, {0, 1, 2})}, tb.empty({batch, heads, rows, width}),
        tb.map(4, {0, 1, 2, 3}), "pppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value row = arith::IndexCastOp::create(bb, bb.getIndexType(), a[0]);
          Value v = tensor::ExtractOp::create(
              bb, src,
              ValueRange{linalg::IndexOp::create(bb, 0),
                         linalg::IndexOp::create(bb, 1), row,
                         linalg::IndexOp::create(bb, 3)});
          return tb.toF32(bb, v);
        });
  }

  /// `B x H x L x X` (or `B x H x L`) to chunks `B x H x nC x C (x X)`.
  Value toChunks(Value v) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<int64_t> shape = {s[0], s[1], numChunks, chunk};
    SmallVector<ReassociationIndices> re = {{0}, {1}, {2, 3}};
    if (s.size() == 4) {
      shape.push_back(s[3]);
      re.push_back({4});
    }
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(v.getType()).getElementType());
    return tensor::ExpandShapeOp::create(b, type, v, re);
  }

  /// Chunks `c` of `x` (`B x H x nC x C (x X)`) along dim 2.
  Value chunkSlice(Value x, int64_t first, int64_t count) {
    ArrayRef<int64_t> s = shapeOf(x);
    SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    offsets[2] = b.getIndexAttr(first);
    sizes[2] = b.getIndexAttr(count);
    return tensor::ExtractSliceOp::create(b, x, offsets, sizes, strides);
  }

  /// Each chunk preceded by the previous one (the last for chunk 0) along
  /// dim 3: `B x H x nC x W (x X)`.
  Value withLookBack(Value x) {
    if (numChunks == 1)
      return x;
    Value prev =
        tensor::ConcatOp::create(b, 2,
                                 ValueRange{chunkSlice(x, numChunks - 1, 1),
                                            chunkSlice(x, 0, numChunks - 1)});
    return tensor::ConcatOp::create(b, 3, ValueRange{prev, x});
  }

  /// The attention of the chunks of a round: queries `sq` (`B x H x nC x C
  /// x D`, positions `qpos`), keys `kc` and values `vc` with their look-back
  /// (`B x H x nC x W x X`, positions `kpos`). Returns the chunked output
  /// (`B x H x nC x C x Dv`) and log-sum-exp (`B x H x nC x C`).
  std::pair<Value, Value> attendChunks(Value sq, Value kc, Value vc, Value qpos,
                                       Value kpos, double scale, bool causal) {
    // Scores over loops (b, h, c, t, d, w).
    Value kcT = tb.transpose(kc, {0, 1, 2, 4, 3});
    Value s = tb.contract(sq, tb.map(6, {0, 1, 2, 3, 4}), kcT,
                          tb.map(6, {0, 1, 2, 4, 5}),
                          {batch, heads, numChunks, chunk, window},
                          tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
    AffineMap id5 = tb.map(5, {0, 1, 2, 3, 4});
    AffineMap qMap = tb.map(5, {0, 1, 2, 3}), kMap = tb.map(5, {0, 1, 2, 4});
    auto rule = [&](ImplicitLocOpBuilder &bb, Value qp, Value kp) {
      Value notSelf =
          arith::CmpIOp::create(bb, arith::CmpIPredicate::ne, kp, qp);
      if (!causal)
        return notSelf;
      Value past = arith::CmpIOp::create(bb, arith::CmpIPredicate::sle, kp, qp);
      return arith::AndIOp::create(bb, notSelf, past).getResult();
    };
    // Whether the query has an allowed key other than itself.
    Value hasOther = tb.generic(
        {qpos, kpos}, {qMap, kMap},
        tb.filled({batch, heads, numChunks, chunk}, 0.0), qMap, "ppppr",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value ok = rule(bb, a[0], a[1]);
          Value one =
              arith::SelectOp::create(bb, ok, tb.f32Const(1), tb.f32Const(0));
          return arith::MaximumFOp::create(bb, a[2], one);
        });
    double negInf = -std::numeric_limits<double>::infinity();
    Value masked = tb.generic(
        {s, qpos, kpos, hasOther}, {id5, qMap, kMap, qMap},
        tb.empty({batch, heads, numChunks, chunk, window}), id5, "ppppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value ok = rule(bb, a[1], a[2]);
          Value self =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::eq, a[1], a[2]);
          Value alone = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                              a[3], tb.f32Const(0));
          Value allowed = arith::OrIOp::create(
              bb, ok, arith::AndIOp::create(bb, self, alone));
          Value x = arith::MulFOp::create(bb, a[0], tb.f32Const(scale));
          return arith::SelectOp::create(bb, allowed, x, tb.f32Const(negInf));
        });
    Value rowMax = tb.rowMax(masked);
    Value ex = tb.generic(
        {masked, rowMax}, {id5, qMap}, tb.empty(shapeOf(masked)), id5, "ppppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          return math::ExpOp::create(bb, arith::SubFOp::create(bb, a[0], a[1]));
        });
    Value rowSum = tb.rowSum(ex);
    // o[b,h,c,t,e] = sum_w ex * vc / rowSum; loops (b, h, c, t, w, e).
    Value weighted = tb.weightedSum(ex, tb.map(6, {0, 1, 2, 3, 4}), vc,
                                    tb.map(6, {0, 1, 2, 4, 5}),
                                    {batch, heads, numChunks, chunk, valueDim},
                                    tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
    Value out = tb.generic(
        {weighted, rowSum}, {id5, qMap},
        tb.empty({batch, heads, numChunks, chunk, valueDim}), id5, "ppppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          return arith::DivFOp::create(bb, a[0], a[1]);
        });
    Value lse = tb.elementwise(
        {rowMax, rowSum}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          return arith::AddFOp::create(bb, a[0], math::LogOp::create(bb, a[1]));
        });
    return {out, lse};
  }

  /// Back to the original order: the chunked output `out` and log-sum-exp
  /// `lse` of the sorted rows at the rows' ranks `rank`.
  std::pair<Value, Value> unsort(Value out, Value lse, Value rank) {
    auto flat = [&](Value v) -> Value {
      SmallVector<ReassociationIndices> re = {{0}, {1}, {2, 3}};
      if (shapeOf(v).size() == 5)
        re.push_back({4});
      return tensor::CollapseShapeOp::create(b, v, re);
    };
    Value oRound = gatherRows(flat(out), rank);
    Value lseFlat = flat(lse);
    Value lseRound = tb.generic(
        {rank}, {tb.map(3, {0, 1, 2})}, tb.empty({batch, heads, len}),
        tb.map(3, {0, 1, 2}), "ppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value row = arith::IndexCastOp::create(bb, bb.getIndexType(), a[0]);
          return tensor::ExtractOp::create(
              bb, lseFlat,
              ValueRange{linalg::IndexOp::create(bb, 0),
                         linalg::IndexOp::create(bb, 1), row});
        });
    return {oRound, lseRound};
  }

  /// One round: the unsorted output (`B x H x L x Dv`) and log-sum-exp
  /// (`B x H x L`).
  std::pair<Value, Value> round(Value qk, Value keys, Value value,
                                Value buckets, double scale, bool causal) {
    Value rank = ranks(buckets);
    Value pos = positions(rank);
    Value sq = toChunks(gatherRows(qk, pos));    // B H nC C D
    Value sk = toChunks(gatherRows(keys, pos));  // B H nC C D
    Value sv = toChunks(gatherRows(value, pos)); // B H nC C Dv
    Value qpos = toChunks(pos);                  // B H nC C
    Value kc = withLookBack(sk), vc = withLookBack(sv);
    Value kpos = withLookBack(qpos); // B H nC W
    auto [out, lse] = attendChunks(sq, kc, vc, qpos, kpos, scale, causal);
    return unsort(out, lse, rank);
  }

  Value lower(LshAttentionOp op) {
    Value qk = op.getQk(), value = op.getValue();
    Value keys = normalizeKeys(qk);
    double scale = op.getEffectiveScale();
    Type elementType = cast<RankedTensorType>(op.getType()).getElementType();
    int64_t rounds = op.getNumHashes(), numBuckets = op.getNumBuckets();
    Value buckets = hashAll(
        qk, lshRotationsConstant(b, op.getSeed(), rounds, dim, numBuckets),
        rounds, numBuckets);
    auto roundAt = [&](Value r) {
      return round(qk, keys, value, bucketsOf(buckets, r), scale,
                   op.getCausal());
    };
    auto [result, lse] = roundAt(arith::ConstantIndexOp::create(b, 0));
    if (rounds > 1) {
      // The other rounds in a loop (code size and compile time independent
      // of the round count), each merged by its log-sum-exp:
      // lse' = log(e^lse + e^lse_r), o' = e^(lse - lse') o + e^(lse_r -
      // lse') o_r.
      auto loop = scf::ForOp::create(b, arith::ConstantIndexOp::create(b, 1),
                                     arith::ConstantIndexOp::create(b, rounds),
                                     arith::ConstantIndexOp::create(b, 1),
                                     ValueRange{result, lse});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value o = loop.getRegionIterArgs()[0], l = loop.getRegionIterArgs()[1];
      auto [oR, lR] = roundAt(loop.getInductionVar());
      Value merged = tb.generic(
          {l, lR}, {tb.map(3, {0, 1, 2}), tb.map(3, {0, 1, 2})},
          tb.empty({batch, heads, len}), tb.map(3, {0, 1, 2}), "ppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            Value m = arith::MaximumFOp::create(bb, a[0], a[1]);
            Value sum = arith::AddFOp::create(
                bb, math::ExpOp::create(bb, arith::SubFOp::create(bb, a[0], m)),
                math::ExpOp::create(bb, arith::SubFOp::create(bb, a[1], m)));
            return arith::AddFOp::create(bb, m, math::LogOp::create(bb, sum));
          });
      auto lse3 = tb.map(4, {0, 1, 2});
      Value out = tb.generic(
          {o, l, oR, lR, merged},
          {tb.map(4, {0, 1, 2, 3}), lse3, tb.map(4, {0, 1, 2, 3}), lse3, lse3},
          tb.empty({batch, heads, len, valueDim}), tb.map(4, {0, 1, 2, 3}),
          "pppp", [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            Value w0 =
                math::ExpOp::create(bb, arith::SubFOp::create(bb, a[1], a[4]));
            Value w1 =
                math::ExpOp::create(bb, arith::SubFOp::create(bb, a[3], a[4]));
            return arith::AddFOp::create(bb,
                                         arith::MulFOp::create(bb, w0, a[0]),
                                         arith::MulFOp::create(bb, w1, a[2]));
          });
      scf::YieldOp::create(b, ValueRange{out, merged});
      result = loop.getResult(0);
    }
    return fromF32Tensor(tb, result, elementType);
  }
};
} // namespace

FailureOr<Value> mlir::attn::lowerLshAttention(ImplicitLocOpBuilder &b,
                                               LshAttentionOp op) {
  LshLowering lowering(b, op);
  return lowering.lower(op);
}
