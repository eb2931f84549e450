//===- LshKernels.cpp - attn-lsh-kernels ----------------------------------===//
//
// Reformer LSH attention for the CPU: the reference lowering's semantics
// (LshLowering.cpp) as fused kernels: inverse key norms, per round a fused
// hash (projection and argmax), a stable counting sort and chunk kernels
// that fold the round into the output (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/Passes.h"

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"
#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Support/TargetModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLSHKERNELS
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Query rows of a register tile; f32 per cache line.
constexpr int64_t kRows = 4, kLineFloats = 16;

class LshGen : public VectorLoops {
public:
  LshGen(ImplicitLocOpBuilder &b, LshAttentionOp op, const TargetModel &target)
      : VectorLoops(b, target.lanes, target.registers),
        vi(VectorType::get({lanes}, b.getIndexType())) {
    ArrayRef<int64_t> s = cast<ShapedType>(op.getQk().getType()).getShape();
    batch = s[0];
    heads = s[1];
    len = s[2];
    dim = s[3];
    valueDim = cast<ShapedType>(op.getValue().getType()).getDimSize(3);
    chunk = op.getChunkSize();
    numChunks = len / chunk;
    window = numChunks == 1 ? chunk : 2 * chunk;
    buckets = op.getNumBuckets();
    rounds = op.getNumHashes();
    scale = op.getEffectiveScale();
    causal = op.getCausal();
    seed = op.getSeed();
  }

  /// True if the kernels take `op` (see the pass description).
  static bool applies(LshAttentionOp op, int64_t lanes) {
    auto qk = cast<ShapedType>(op.getQk().getType());
    auto v = cast<ShapedType>(op.getValue().getType());
    if (!qk.hasStaticShape() || !v.hasStaticShape() ||
        qk.getNumElements() == 0 || v.getNumElements() == 0)
      return false;
    int64_t c = op.getChunkSize();
    return c % lanes == 0 && c % kRows == 0 && v.getDimSize(3) % lanes == 0;
  }

  /// The op's result: the inverse key norms once, then per round the
  /// hash, the counting sort and the chunk kernels, which fold the round
  /// into the output and log-sum-exp buffers of the rounds before it.
  Value lower(LshAttentionOp op) {
    Type f32 = b.getF32Type();
    TensorBuilder tb(b);
    // (qk and the values as f32: views where they are f32 already.)
    qBuf = readOnlyBuffer(b, toF32Tensor(tb, op.getQk()));
    vBuf = readOnlyBuffer(b, toF32Tensor(tb, op.getValue()));
    invNorm = inverseNorms();
    out = memref::AllocOp::create(
        b, MemRefType::get({batch, heads, len, valueDim}, f32));
    lse = memref::AllocOp::create(b, MemRefType::get({batch, heads, len}, f32));
    // The rounds' rotations as one constant; round 0 writes the output,
    // the others (a loop: code size and compile time independent of the
    // round count) fold into it.
    rotations =
        readOnlyBuffer(b, lshRotationsConstant(b, seed, rounds, dim, buckets));
    attend(sortByBucket(hash(idx(0))), /*fold=*/false);
    if (rounds > 1) {
      auto loop = scf::ForOp::create(b, idx(1), idx(rounds), idx(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      attend(sortByBucket(hash(loop.getInductionVar())), /*fold=*/true);
    }
    return fromF32Tensor(tb, toTensor(out),
                         cast<RankedTensorType>(op.getType()).getElementType());
  }

  /// Keys per query of a chunk: its own chunk and the previous one.
  int64_t keysPerChunk() const { return window; }

private:
  VectorType vi;
  /// The rotations of every round (rounds x dim x buckets/2).
  Value rotations;
  int64_t batch, heads, len, dim, valueDim, chunk, numChunks, window, buckets,
      rounds;
  /// qk and the values as f32 buffers, the inverse norms of the keys
  /// (`B x H x L`: a key is its qk row times this), the output and
  /// log-sum-exp of the rounds so far (f32 `B x H x L x Dv`, `B x H x L`).
  Value qBuf, vBuf, invNorm, out, lse;
  double scale;
  bool causal;
  uint64_t seed;

  /// rsqrt(|x|^2 + kLshNormEpsilon) of each row x of qk, the reference's key
  /// normalization (LshLowering.cpp) without the normalized copy: the
  /// chunk kernels scale each key's scores by it.
  Value inverseNorms() {
    Type f32 = b.getF32Type();
    Value inv =
        memref::AllocOp::create(b, MemRefType::get({batch, heads, len}, f32));
    bool vectors = dim % lanes == 0;
    parallel({batch, heads}, [&](ValueRange ivs) {
      forEach(0, len, 1, [&](Value i) {
        SmallVector<Value> at = {ivs[0], ivs[1], i};
        Value sq;
        if (vectors) {
          Value acc =
              forEachCarry(0, dim, lanes, splat(0.0), [&](Value d, Value a) {
                Value x = vector::LoadOp::create(
                    b, vf, qBuf, ValueRange{ivs[0], ivs[1], i, d});
                return vector::FMAOp::create(b, x, x, a).getResult();
              });
          sq = sumLanes(b, acc);
        } else {
          sq = forEachCarry(0, dim, 1, f32Const(0.0), [&](Value d, Value a) {
            Value x = memref::LoadOp::create(b, qBuf,
                                             ValueRange{ivs[0], ivs[1], i, d});
            return math::FmaOp::create(b, x, x, a).getResult();
          });
        }
        Value r = math::RsqrtOp::create(
            b, arith::AddFOp::create(b, sq, f32Const(kLshNormEpsilon)));
        memref::StoreOp::create(b, r, inv, at);
      });
    });
    return inv;
  }

  /// The buckets of round `r` (index `B x H x L`), fused: per block of
  /// `lanes` rows (in the lanes), the rows transposed into L1, then per
  /// group of rotation columns c the projections x R[:, c] as independent
  /// FMA chains, and a running argmax in the order of the reference's rule
  /// (LshLowering.cpp: the lowest index of [x R, -x R] attaining max |x R|):
  /// the first c with the greatest x R_c, else the first with the greatest
  /// -x R_c (index c + buckets / 2); a NaN projection gives `buckets` (one
  /// more bucket, sorted last, as the reference's).
  Value hash(Value r) {
    Type f32 = b.getF32Type();
    int64_t half = buckets / 2;
    // Round r's rotation: rotations[r] (dim x half).
    auto rotType =
        cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
            {dim, half}, cast<MemRefType>(rotations.getType()),
            ArrayRef<int64_t>{ShapedType::kDynamic, 0, 0},
            ArrayRef<int64_t>{1, dim, half}, ArrayRef<int64_t>{1, 1, 1}));
    Value rotBuf = memref::SubViewOp::create(
        b, rotType, rotations,
        ArrayRef<OpFoldResult>{r, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(dim),
                               b.getIndexAttr(half)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)});
    Value ids = memref::AllocOp::create(
        b, MemRefType::get({batch, heads, len}, b.getIndexType()));
    // Columns per group (the largest divisor of half up to 8):
    // independent accumulators for the FMA latency.
    int64_t group = tileVectors(half, 1, 8);
    Value negInf = splat(-std::numeric_limits<double>::infinity());
    auto indexSplat = [&](Value i) -> Value {
      return vector::BroadcastOp::create(b, vi, i);
    };
    parallel({batch, heads, len / lanes}, [&](ValueRange ivs) {
      Value bi = ivs[0], h = ivs[1], row0 = mul(ivs[2], lanes);
      Value xt = memref::AllocOp::create(b, MemRefType::get({dim, lanes}, f32));
      forEach(0, lanes, 1, [&](Value t) {
        forEach(0, dim, 1, [&](Value d) {
          Value x = memref::LoadOp::create(b, qBuf,
                                           ValueRange{bi, h, add(row0, t), d});
          memref::StoreOp::create(b, x, xt, ValueRange{d, t});
        });
      });
      // Carried: best x R_c and its c, best -x R_c and its c, any NaN.
      Value zeroIdx = indexSplat(idx(0));
      Value noNan = arith::ConstantOp::create(
          b, DenseElementsAttr::get(VectorType::get({lanes}, b.getI1Type()),
                                    false));
      auto loop = scf::ForOp::create(
          b, idx(0), idx(half), idx(group),
          ValueRange{negInf, zeroIdx, negInf, zeroIdx, noNan},
          [&](OpBuilder &, Location, Value c0, ValueRange acc) {
            SmallVector<Value> sums = registerTile(
                b, 1, group, idx(dim), SmallVector<Value>(group, splat(0.0)),
                [&](int64_t, Value d) -> Value {
                  return vector::LoadOp::create(b, vf, xt,
                                                ValueRange{d, idx(0)});
                },
                [&](int64_t g, Value d) -> Value {
                  return vector::BroadcastOp::create(
                      b, vf,
                      memref::LoadOp::create(b, rotBuf,
                                             ValueRange{d, add(c0, idx(g))}));
                });
            Value pv = acc[0], pi = acc[1], nv = acc[2], ni = acc[3],
                  nan = acc[4];
            for (int64_t g = 0; g < group; ++g) {
              Value p = sums[g], n = arith::NegFOp::create(b, p);
              Value c = indexSplat(add(c0, idx(g)));
              // (The first column always takes: -inf may be the greatest.)
              Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                  c, zeroIdx);
              Value pTakes = arith::OrIOp::create(
                  b, first,
                  arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, p, pv));
              Value nTakes = arith::OrIOp::create(
                  b, first,
                  arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, n, nv));
              pv = arith::SelectOp::create(b, pTakes, p, pv);
              pi = arith::SelectOp::create(b, pTakes, c, pi);
              nv = arith::SelectOp::create(b, nTakes, n, nv);
              ni = arith::SelectOp::create(b, nTakes, c, ni);
              nan = arith::OrIOp::create(
                  b, nan,
                  arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, p, p));
            }
            scf::YieldOp::create(b, ValueRange{pv, pi, nv, ni, nan});
          });
      Value pv = loop.getResult(0), pi = loop.getResult(1),
            nv = loop.getResult(2), ni = loop.getResult(3),
            nan = loop.getResult(4);
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, pv, nv);
      Value id = arith::SelectOp::create(
          b, positive, pi, arith::AddIOp::create(b, ni, indexSplat(idx(half))));
      id = arith::SelectOp::create(b, nan, indexSplat(idx(buckets)), id);
      vector::StoreOp::create(b, id, ids, ValueRange{bi, h, row0});
    });
    return ids;
  }

  /// pos[b, h, p]: the position at place p of the stable sort by bucket
  /// (`ids`, in [0, buckets]), per (b, h): counts per bucket, their
  /// exclusive prefix sums, then each position in order to its bucket's
  /// next place. (A bucket id past the last, from NaN inputs, counts as one
  /// more bucket: sorted last, as the reference does.)
  Value sortByBucket(Value ids) {
    Value pos = memref::AllocOp::create(
        b, MemRefType::get({batch, heads, len}, b.getIndexType()));
    parallel({batch, heads}, [&](ValueRange ivs) {
      Value counts = memref::AllocOp::create(
          b, MemRefType::get({buckets + 1}, b.getIndexType()));
      forEach(0, buckets + 1, 1, [&](Value c) {
        memref::StoreOp::create(b, idx(0), counts, ValueRange{c});
      });
      auto bucketOf = [&](Value i) -> Value {
        return memref::LoadOp::create(b, ids, ValueRange{ivs[0], ivs[1], i});
      };
      forEach(0, len, 1, [&](Value i) {
        Value c = bucketOf(i);
        Value n = memref::LoadOp::create(b, counts, ValueRange{c});
        memref::StoreOp::create(b, add(n, idx(1)), counts, ValueRange{c});
      });
      scf::ForOp::create(
          b, idx(0), idx(buckets + 1), idx(1), ValueRange{idx(0)},
          [&](OpBuilder &, Location, Value c, ValueRange acc) {
            Value n = memref::LoadOp::create(b, counts, ValueRange{c});
            memref::StoreOp::create(b, acc[0], counts, ValueRange{c});
            scf::YieldOp::create(b, ValueRange{add(acc[0], n)});
          });
      forEach(0, len, 1, [&](Value i) {
        Value c = bucketOf(i);
        Value p = memref::LoadOp::create(b, counts, ValueRange{c});
        memref::StoreOp::create(b, i, pos, ValueRange{ivs[0], ivs[1], p});
        memref::StoreOp::create(b, add(p, idx(1)), counts, ValueRange{c});
      });
    });
    return pos;
  }

  /// One iteration (b, h, chunk c) of the chunk kernels: its indices and
  /// scratch (the deallocation pipeline frees it). `qt` holds scale Q^T
  /// (`D x C`), `kpos` and `qpos` the positions of the keys and queries,
  /// `st` S^T then P^T (`W x C`); per query, `factor` is what its row of
  /// P V is multiplied by (1 / l, times the round's weight when folding)
  /// and `keep` (when folding) what the rounds before are.
  struct ChunkIteration {
    Value bi, h, c;
    Value qt, kpos, qpos, st, factor, keep;
  };

  /// The chunk kernels: per (b, h, chunk), out and lse of its queries at
  /// their positions; with `fold`, the round is folded into those of the
  /// rounds before: L' = logaddexp(L, lse_r), out' = out e^(L - L') +
  /// o_r e^(lse_r - L') (the softmax over the rounds, accumulated). The queries
  /// sit in the vector lanes (scale Q^T gathered, `D x C`), the keys are rows
  /// read through pos: S^T = K Q^T
  /// (`W x C`), the softmax runs down its columns, and O = P V reads P^T.
  void attend(Value pos, bool fold) {
    int64_t evQ = tileVectors(chunk / lanes, kRows, registers / 2);
    int64_t evV = tileVectors(valueDim / lanes, kRows, registers / 2);
    parallel({batch, heads, numChunks}, [&](ValueRange ivs) {
      ChunkIteration it = allocateChunk(ivs, fold);
      gatherChunk(it, pos);
      chunkScores(it, evQ);
      chunkSoftmax(it, fold);
      chunkOutput(it, evV, fold);
    });
  }

  /// The indices `ivs` of a chunk kernel iteration and its scratch.
  ChunkIteration allocateChunk(ValueRange ivs, bool fold) {
    Type f32 = b.getF32Type();
    ChunkIteration it;
    it.bi = ivs[0];
    it.h = ivs[1];
    it.c = ivs[2];
    // (Scratch of the iteration; the deallocation pipeline frees it.)
    it.qt = memref::AllocOp::create(b, MemRefType::get({dim, chunk}, f32));
    it.kpos =
        memref::AllocOp::create(b, MemRefType::get({window}, b.getIndexType()));
    it.qpos =
        memref::AllocOp::create(b, MemRefType::get({chunk}, b.getIndexType()));
    it.st = memref::AllocOp::create(b, MemRefType::get({window, chunk}, f32));
    // Per query: what its row of P V is multiplied by (1 / l, times the
    // round's weight when folding) and what the rounds before are.
    it.factor = memref::AllocOp::create(b, MemRefType::get({chunk}, f32));
    it.keep = fold ? memref::AllocOp::create(b, MemRefType::get({chunk}, f32))
                         .getResult()
                   : Value();
    return it;
  }

  /// Prefetches the `width` elements of row `row` of (b, h) in `buf`.
  void prefetchRow(const ChunkIteration &it, Value buf, Value row,
                   int64_t width) {
    Value bi = it.bi, h = it.h;
    for (int64_t d = 0; d < width; d += kLineFloats)
      memref::PrefetchOp::create(b, buf, ValueRange{bi, h, row, idx(d)},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
  }

  /// The positions of the chunk's queries and of the keys of the
  /// previous chunk (the last for chunk 0) and its own; their rows
  /// prefetched (random rows: the gathers below would wait on each),
  /// then the queries scaled and transposed.
  void gatherChunk(const ChunkIteration &it, Value pos) {
    Value bi = it.bi, h = it.h, c = it.c;
    Value first = mul(c, chunk);
    forEach(0, chunk, 1, [&](Value t) {
      Value row =
          memref::LoadOp::create(b, pos, ValueRange{bi, h, add(first, t)});
      memref::StoreOp::create(b, row, it.qpos, ValueRange{t});
      prefetchRow(it, qBuf, row, dim);
    });
    Value prev =
        arith::RemUIOp::create(b, add(c, idx(numChunks - 1)), idx(numChunks));
    forEach(0, window, 1, [&](Value w) {
      Value src = c;
      if (window != chunk)
        src = arith::SelectOp::create(
            b,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, w, idx(chunk)),
            prev, c);
      Value place =
          add(mul(src, chunk), arith::RemUIOp::create(b, w, idx(chunk)));
      Value row = memref::LoadOp::create(b, pos, ValueRange{bi, h, place});
      memref::StoreOp::create(b, row, it.kpos, ValueRange{w});
      prefetchRow(it, qBuf, row, dim);
      prefetchRow(it, vBuf, row, valueDim);
    });
    forEach(0, chunk, 1, [&](Value t) {
      Value row = memref::LoadOp::create(b, it.qpos, ValueRange{t});
      forEach(0, dim, 1, [&](Value d) {
        Value x = memref::LoadOp::create(b, qBuf, ValueRange{bi, h, row, d});
        memref::StoreOp::create(b, arith::MulFOp::create(b, x, f32Const(scale)),
                                it.qt, ValueRange{d, t});
      });
    });
  }

  /// S^T = K (scale Q)^T in kRows keys x evQ query vectors.
  void chunkScores(const ChunkIteration &it, int64_t evQ) {
    Value bi = it.bi, h = it.h;
    forEach(0, window, kRows, [&](Value jb) {
      SmallVector<Value> keyRows;
      for (int64_t i = 0; i < kRows; ++i)
        keyRows.push_back(
            memref::LoadOp::create(b, it.kpos, ValueRange{add(jb, idx(i))}));
      forEach(0, chunk, evQ * lanes, [&](Value i0) {
        SmallVector<Value> acc = registerTile(
            b, kRows, evQ, idx(dim),
            SmallVector<Value>(kRows * evQ, splat(0.0)),
            [&](int64_t i, Value d) -> Value {
              return memref::LoadOp::create(b, qBuf,
                                            ValueRange{bi, h, keyRows[i], d});
            },
            [&](int64_t g, Value d) -> Value {
              return vector::LoadOp::create(
                  b, vf, it.qt, ValueRange{d, add(i0, idx(g * lanes))});
            });
        // (Key i's scores times its inverse norm: its normalized row's.)
        for (int64_t i = 0; i < kRows; ++i) {
          Value inv = vector::BroadcastOp::create(
              b, vf,
              memref::LoadOp::create(b, invNorm,
                                     ValueRange{bi, h, keyRows[i]}));
          for (int64_t g = 0; g < evQ; ++g)
            vector::StoreOp::create(
                b, arith::MulFOp::create(b, acc[i * evQ + g], inv), it.st,
                ValueRange{add(jb, idx(i)), add(i0, idx(g * lanes))});
        }
      });
    });
  }

  /// Lane `k` of vector `v`.
  Value lane(Value v, int64_t k) {
    return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{k});
  }

  /// Per query vector: the keys other than the query itself (and,
  /// causal, not after it); itself alone where there is none; softmax
  /// down the columns and the log-sum-exp.
  void chunkSoftmax(const ChunkIteration &it, bool fold) {
    Value bi = it.bi, h = it.h;
    double negInf = -std::numeric_limits<double>::infinity();
    forEach(0, chunk, lanes, [&](Value i0) {
      Value qv = vector::LoadOp::create(b, vi, it.qpos, ValueRange{i0});
      auto keyPos = [&](Value j) -> Value {
        return vector::BroadcastOp::create(
            b, vi, memref::LoadOp::create(b, it.kpos, ValueRange{j}));
      };
      auto rule = [&](Value kp) -> Value {
        Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, kp, qv);
        if (causal)
          ok = arith::AndIOp::create(
              b, ok,
              arith::CmpIOp::create(b, arith::CmpIPredicate::ule, kp, qv));
        return ok;
      };
      auto score = [&](Value j) -> Value {
        return vector::LoadOp::create(b, vf, it.st, ValueRange{j, i0});
      };
      // The maximum over the other keys; where there is none, the row
      // attends to itself alone (its weight exp(0) = 1, the log-sum-exp
      // its own score).
      // (and the score of the query itself, which is its log-sum-exp
      // when it is alone).
      auto firstPass = scf::ForOp::create(
          b, idx(0), idx(window), idx(1),
          ValueRange{splat(negInf), splat(negInf)},
          [&](OpBuilder &, Location, Value j, ValueRange acc) {
            Value kp = keyPos(j), x = score(j);
            Value other =
                arith::SelectOp::create(b, rule(kp), x, splat(negInf));
            Value self =
                arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kp, qv);
            scf::YieldOp::create(
                b, ValueRange{arith::MaximumFOp::create(b, acc[0], other),
                              arith::SelectOp::create(b, self, x, acc[1])});
          });
      Value others = firstPass.getResult(0);
      Value alone = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, others,
                                          splat(negInf));
      Value l = forEachCarry(
          0, window, 1, splat(0.0), [&](Value j, Value acc) -> Value {
            Value kp = keyPos(j);
            Value self =
                arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kp, qv);
            Value p = arith::SelectOp::create(
                b, rule(kp),
                softmaxExp(b, arith::SubFOp::create(b, score(j), others)),
                splat(0.0));
            p = arith::SelectOp::create(
                b, arith::AndIOp::create(b, self, alone), splat(1.0), p);
            vector::StoreOp::create(b, p, it.st, ValueRange{j, i0});
            return arith::AddFOp::create(b, acc, p);
          });
      Value m =
          arith::SelectOp::create(b, alone, firstPass.getResult(1), others);
      Value rowLse = arith::AddFOp::create(b, m, math::LogOp::create(b, l));
      Value f = arith::DivFOp::create(b, splat(1.0), l);
      if (fold)
        rowLse = foldRound(it, i0, qv, rowLse, f);
      vector::StoreOp::create(b, f, it.factor, ValueRange{i0});
      for (int64_t k = 0; k < lanes; ++k)
        memref::StoreOp::create(b, lane(rowLse, k), lse,
                                ValueRange{bi, h, lane(qv, k)});
    });
  }

  /// Folds the round's log-sum-exp `rowLse` of the query vector at `i0`
  /// (positions `qv`) into the rounds' so far: stores the share of the
  /// rounds before in `keep`, multiplies `f` by the round's share and
  /// returns the new log-sum-exp.
  Value foldRound(const ChunkIteration &it, Value i0, Value qv, Value rowLse,
                  Value &f) {
    Value bi = it.bi, h = it.h;
    // The rounds so far, L, at the lanes' positions.
    SmallVector<Value> old;
    for (int64_t k = 0; k < lanes; ++k)
      old.push_back(
          memref::LoadOp::create(b, lse, ValueRange{bi, h, lane(qv, k)}));
    Value prior = vector::FromElementsOp::create(b, vf, old);
    Value top = arith::MaximumFOp::create(b, prior, rowLse);
    auto weight = [&](Value x) -> Value {
      return math::ExpOp::create(b, arith::SubFOp::create(b, x, top));
    };
    Value total = arith::AddFOp::create(b, weight(prior), weight(rowLse));
    Value next = arith::AddFOp::create(b, top, math::LogOp::create(b, total));
    auto share = [&](Value x) -> Value {
      return math::ExpOp::create(b, arith::SubFOp::create(b, x, next));
    };
    vector::StoreOp::create(b, share(prior), it.keep, ValueRange{i0});
    f = arith::MulFOp::create(b, f, share(rowLse));
    return next;
  }

  /// O = P V / l in kRows queries x evV value vectors, V's rows through
  /// kpos, each row stored at its position.
  void chunkOutput(const ChunkIteration &it, int64_t evV, bool fold) {
    Value bi = it.bi, h = it.h;
    forEach(0, chunk, kRows, [&](Value rb) {
      forEach(0, valueDim, evV * lanes, [&](Value e0) {
        SmallVector<Value> acc = registerTile(
            b, kRows, evV, idx(window),
            SmallVector<Value>(kRows * evV, splat(0.0)),
            [&](int64_t i, Value j) -> Value {
              return memref::LoadOp::create(b, it.st,
                                            ValueRange{j, add(rb, idx(i))});
            },
            [&](int64_t g, Value j) -> Value {
              Value row = memref::LoadOp::create(b, it.kpos, ValueRange{j});
              return vector::LoadOp::create(
                  b, vf, vBuf, ValueRange{bi, h, row, add(e0, idx(g * lanes))});
            });
        for (int64_t i = 0; i < kRows; ++i) {
          Value t = add(rb, idx(i));
          Value qp = memref::LoadOp::create(b, it.qpos, ValueRange{t});
          auto scalarOf = [&](Value buf) -> Value {
            return vector::BroadcastOp::create(
                b, vf, memref::LoadOp::create(b, buf, ValueRange{t}));
          };
          Value f = scalarOf(it.factor);
          Value kept = fold ? scalarOf(it.keep) : Value();
          for (int64_t g = 0; g < evV; ++g) {
            SmallVector<Value> at = {bi, h, qp, add(e0, idx(g * lanes))};
            Value o = arith::MulFOp::create(b, acc[i * evV + g], f);
            if (fold)
              o = vector::FMAOp::create(
                  b, vector::LoadOp::create(b, vf, out, at), kept, o);
            vector::StoreOp::create(b, o, out, at);
          }
        }
      });
    });
  }
};

struct LshKernelsPass : public attn::impl::AttnLshKernelsBase<LshKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetModel> target = targetOfOptions(
        getOperation(), getArgument(), vectorWidth, vectorRegisters);
    if (failed(target))
      return signalPassFailure();
    replaceEmptyAttention(getOperation());
    SmallVector<LshAttentionOp> ops;
    getOperation()->walk([&](LshAttentionOp op) {
      if (LshGen::applies(op, target->lanes))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (LshAttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op.getLoc(), rewriter);
      LshGen gen(b, op, *target);
      Value result = gen.lower(op);
      op.emitRemark() << getArgument() << ": " << op.getNumHashes()
                      << " round(s): a counting sort by bucket, then chunk "
                         "kernels of "
                      << op.getChunkSize() << " queries x "
                      << gen.keysPerChunk()
                      << " keys (gathered, unsorted by the stores)";
      rewriter.replaceOp(op, result);
    }
  }
};

} // namespace
