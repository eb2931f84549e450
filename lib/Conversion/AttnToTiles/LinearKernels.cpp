//===- LinearKernels.cpp - attn-linear-kernels ---------------------------===//
//
// Fused CPU kernels for the linear form of kernelized attention with an
// elementwise feature map (elu_plus_one, relu): attn.kv_state of
// attn.feature_map(K) and attn.state_apply of attn.feature_map(Q) become
// register-blocked loops that apply the feature map to a block of rows as
// they read it, so phi(K) and phi(Q) (L x D each) never exist.
//
//   kv_state:    parallel (b, kv head, key chunk):
//                  per block of Nb keys: phi(K_blk) (Nb x F, scratch),
//                  z += column sums, S += phi(K_blk)^T V_blk (FB x EV
//                  register tiles: FB broadcasts of phi, EV vector loads
//                  of V per key)
//                then, with several chunks, S and z summed over chunks.
//   state_apply: parallel (b, query head, query tile of Mr rows):
//                  phi(Q_tile) (Mr x F, scratch), den = phi(Q) z + eps,
//                  O = phi(Q) S in RB x EV register tiles, O / den (0
//                  where den is 0), times the gate.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/Passes.h"

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"
#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Support/Random.h"
#include "attn-opt/Support/TargetModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLINEARKERNELS
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A loop length of the kernels: static (`size`), or known at run time
/// (`value`; `size` is then kDynamic).
struct Length {
  int64_t size;
  Value value;
  /// The length, and its last index, as index values built by `a`.
  Value get(KernelArith &a) const { return value ? value : a.idx(size); }
  Value last(KernelArith &a) const {
    return value ? a.sub(value, a.idx(1)) : a.idx(size - 1);
  }
};

/// Loop and vector helpers of the two kernels.
class LinearGen : public VectorLoops {
public:
  LinearGen(ImplicitLocOpBuilder &b, const TargetModel &target)
      : VectorLoops(b, target.lanes, target.registers) {}

  /// S and z of `op` (key features from `fm`, the feature map of K).
  SmallVector<Value> kvState(KVStateOp op, FeatureMapOp fm) {
    Value key = fm.getInput(), value = op.getValue();
    auto kt = cast<RankedTensorType>(key.getType());
    auto vt = cast<RankedTensorType>(value.getType());
    int64_t batch = kt.getDimSize(0), heads = kt.getDimSize(1),
            keys = kt.getDimSize(2), dv = vt.getDimSize(3);
    int64_t f = cast<RankedTensorType>(fm.getType()).getDimSize(3);
    prepareMap(fm);
    Value kBuf = readOnlyBuffer(b, key), vBuf = readOnlyBuffer(b, value);
    // A batch or key length known at run time: the buffers' sizes.
    bool dynamicBatch = ShapedType::isDynamic(batch);
    bool dynamicKeys = ShapedType::isDynamic(keys);
    Value batchSize = dynamicBatch ? dim(kBuf, 0) : Value();
    Value keySize = dynamicKeys ? dim(kBuf, 2) : Value();
    // Key chunks run in parallel when the heads are few (a dynamic batch
    // counted as 1; with a dynamic key length, chunks of at least
    // kMinChunk keys: those past the keys are empty).
    int64_t chunks = std::clamp<int64_t>(
        llvm::divideCeil(kTasks, (dynamicBatch ? 1 : batch) * heads), 1,
        dynamicKeys ? kTasks : std::max<int64_t>(1, keys / kMinChunk));
    int64_t chunkLen =
        dynamicKeys ? 0 : static_cast<int64_t>(llvm::divideCeil(keys, chunks));
    Value chunkLenValue;
    if (dynamicKeys)
      chunkLenValue = arith::MaxSIOp::create(
          b, arith::CeilDivSIOp::create(b, keySize, idx(chunks)),
          idx(kMinChunk));
    Type f32 = b.getF32Type();
    auto alloc = [&](ArrayRef<int64_t> shape) -> Value {
      return memref::AllocOp::create(b, MemRefType::get(shape, f32),
                                     dynamicBatch ? ValueRange{batchSize}
                                                  : ValueRange{});
    };
    Value state = alloc({batch, heads, f, dv});
    Value sum = alloc({batch, heads, f});
    Value wsState = state, wsSum = sum;
    if (chunks > 1) {
      wsState = alloc({batch, heads, chunks, f, dv});
      wsSum = alloc({batch, heads, chunks, f});
    }
    OpFoldResult batchBound =
        dynamicBatch ? OpFoldResult(batchSize) : b.getIndexAttr(batch);
    parallel(
        {batchBound, b.getIndexAttr(heads), b.getIndexAttr(chunks)},
        [&](ValueRange ivs) {
          SmallVector<Value> at = {ivs[0], ivs[1]};
          if (chunks > 1)
            at.push_back(ivs[2]);
          auto stateAt = [&](Value fi, Value e) {
            SmallVector<Value> i(at);
            i.append({fi, e});
            return i;
          };
          auto sumAt = [&](Value fi) {
            SmallVector<Value> i(at);
            i.push_back(fi);
            return i;
          };
          forEach(0, f, 1, [&](Value fi) {
            forEach(0, dv, lanes, [&](Value e) {
              vector::StoreOp::create(b, splat(0.0), wsState, stateAt(fi, e));
            });
          });
          forEach(0, f, lanes, [&](Value fi) {
            vector::StoreOp::create(b, splat(0.0), wsSum, sumAt(fi));
          });
          // (Scratch of the iteration; the deallocation pipeline frees it.)
          int64_t block = wt ? kFavorBlock : kMapBlock;
          int64_t kBlock = dynamicKeys ? block : atMostRows(block, chunkLen);
          Value phi = memref::AllocOp::create(
              b, MemRefType::get({kBlock, f}, b.getF32Type()));
          Length chunkLength{chunkLen, chunkLenValue};
          Value start =
              arith::MulIOp::create(b, ivs[2], chunkLength.get(*this));
          Value end =
              arith::MinSIOp::create(b, add(start, chunkLength.get(*this)),
                                     Length{keys, keySize}.get(*this));
          scf::ForOp::create(
              b, start, end, idx(kBlock), ValueRange{},
              [&](OpBuilder &, Location, Value k0, ValueRange) {
                Value n = arith::MinSIOp::create(b, idx(kBlock), sub(end, k0));
                // phi of the block's keys, and their column sums.
                keyBlockFeatures(kBuf, ivs[0], ivs[1], f, kBlock, phi, k0, end,
                                 n, wsSum, sumAt);
                // S += phi^T V in FB x EV register tiles.
                addOuterProducts(
                    wsState, f, dv, n, phi,
                    [&](Value fi, Value e) { return stateAt(fi, e); },
                    [&](Value j, Value e) {
                      return load(vBuf, {ivs[0], ivs[1], add(k0, j), e});
                    });
                scf::YieldOp::create(b);
              });
        });
    if (chunks > 1)
      sumChunks(state, sum, wsState, wsSum, batchBound, heads, f, dv, chunks);
    return {toTensor(state), toTensor(sum)};
  }

  /// kv_state's features of a block: phi of the keys k0.. of `kBuf` at
  /// (bi, h) into the kBlock x F rows of `phi`, and their column sums (the
  /// n keys below the chunk's `end`) added to z at sumAt(feature). FAVOR+
  /// computes every row of the block (those past the chunk read its last
  /// key), the elementwise maps the n rows.
  void keyBlockFeatures(Value kBuf, Value bi, Value h, int64_t f,
                        int64_t kBlock, Value phi, Value k0, Value end, Value n,
                        Value wsSum,
                        function_ref<SmallVector<Value>(Value)> sumAt) {
    if (wt) // FAVOR+: every row of the block (past the chunk: its
            // last), the column sums of those below n as computed.
      favorRows(
          kBuf, bi, h, kBlock, phi,
          [&](Value j) {
            return arith::MinSIOp::create(b, add(k0, j), sub(end, idx(1)))
                .getResult();
          },
          [&](Value j0, Value f0, ArrayRef<Value> phis) {
            // (1 for rows below n, else 0: one FMA a vector.)
            SmallVector<Value> weights;
            for (int64_t i = 0; i < kRows; ++i)
              weights.push_back(arith::SelectOp::create(
                  b,
                  arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                        add(j0, idx(i)), n),
                  splat(1.0), splat(0.0)));
            int64_t ev = phis.size() / kRows;
            for (int64_t g = 0; g < ev; ++g) {
              SmallVector<Value> zi = sumAt(add(f0, idx(g * lanes)));
              Value acc = vector::LoadOp::create(b, vf, wsSum, zi);
              for (int64_t i = 0; i < kRows; ++i)
                acc =
                    vector::FMAOp::create(b, phis[i * ev + g], weights[i], acc);
              vector::StoreOp::create(b, acc, wsSum, zi);
            }
          });
    else
      forRange(idx(0), n, 1, [&](Value j) {
        forEach(0, f, lanes, [&](Value fi) {
          Value x = featureMap(load(kBuf, {bi, h, add(k0, j), fi}));
          vector::StoreOp::create(b, x, phi, ValueRange{j, fi});
          SmallVector<Value> zi = sumAt(fi);
          vector::StoreOp::create(
              b,
              arith::AddFOp::create(b, vector::LoadOp::create(b, vf, wsSum, zi),
                                    x),
              wsSum, zi);
        });
      });
  }

  /// kv_state's result from its key chunks' partial S and z (`wsState`
  /// B x H x chunks x F x Dv, `wsSum` B x H x chunks x F): their sums into
  /// `state` and `sum`.
  void sumChunks(Value state, Value sum, Value wsState, Value wsSum,
                 OpFoldResult batch, int64_t heads, int64_t f, int64_t dv,
                 int64_t chunks) {
    // S and z: the chunks' sums.
    parallel(
        {batch, b.getIndexAttr(heads), b.getIndexAttr(f)}, [&](ValueRange ivs) {
          auto sumOver = [&](Value dst, SmallVector<Value> dstAt, Value src,
                             function_ref<SmallVector<Value>(Value)> srcAt) {
            Value total = splat(0.0);
            for (int64_t c = 0; c < chunks; ++c)
              total = arith::AddFOp::create(
                  b, total, vector::LoadOp::create(b, vf, src, srcAt(idx(c))));
            vector::StoreOp::create(b, total, dst, dstAt);
          };
          forEach(0, dv, lanes, [&](Value e) {
            sumOver(state, {ivs[0], ivs[1], ivs[2], e}, wsState, [&](Value c) {
              return SmallVector<Value>{ivs[0], ivs[1], c, ivs[2], e};
            });
          });
          // (z per feature: a scalar sum, F x chunks of them.)
          Value total = f32Const(0.0);
          for (int64_t c = 0; c < chunks; ++c)
            total = arith::AddFOp::create(
                b, total,
                memref::LoadOp::create(
                    b, wsSum, ValueRange{ivs[0], ivs[1], idx(c), ivs[2]}));
          memref::StoreOp::create(b, total, sum,
                                  ValueRange{ivs[0], ivs[1], ivs[2]});
        });
  }

  /// The result of `op` (query features from `fm`, the feature map of Q).
  Value stateApply(StateApplyOp op, FeatureMapOp fm) {
    Value query = fm.getInput(), state = op.getState(), sum = op.getKeySum();
    auto qt = cast<RankedTensorType>(query.getType());
    auto st = cast<RankedTensorType>(state.getType());
    auto rt = cast<RankedTensorType>(op.getType());
    int64_t batch = qt.getDimSize(0), heads = qt.getDimSize(1),
            rows = qt.getDimSize(2), kvHeads = st.getDimSize(1),
            dv = st.getDimSize(3);
    int64_t f = cast<RankedTensorType>(fm.getType()).getDimSize(3);
    int64_t group = heads / kvHeads;
    prepareMap(fm);
    Value qBuf = readOnlyBuffer(b, query), sBuf = readOnlyBuffer(b, state),
          zBuf = readOnlyBuffer(b, sum), gBuf = readOnlyBuffer(b, op.getGate());
    Type outElem = rt.getElementType();
    // A batch or query length known at run time: the query buffer's sizes.
    bool dynamicBatch = ShapedType::isDynamic(batch);
    bool dynamicRows = ShapedType::isDynamic(rows);
    SmallVector<Value> outSizes = runtimeSizes(rt, qBuf);
    Value out = memref::AllocOp::create(
        b, MemRefType::get(rt.getShape(), outElem), outSizes);
    int64_t tile = queryTile(fm);
    int64_t ev = valueVectors(dv);
    double eps = op.getEps().convertToDouble();
    OpFoldResult batchBound =
        dynamicBatch ? OpFoldResult(outSizes.front()) : b.getIndexAttr(batch);
    Value rowCount = dynamicRows ? outSizes.back() : Value();
    OpFoldResult tiles =
        dynamicRows
            ? OpFoldResult(arith::CeilDivSIOp::create(b, rowCount, idx(tile))
                               .getResult())
            : b.getIndexAttr(llvm::divideCeil(rows, tile));
    // The queries (rows past Lq repeat the last).
    Length queries{rows, rowCount};
    parallel({batchBound, b.getIndexAttr(heads), tiles}, [&](ValueRange ivs) {
      Value bi = ivs[0], h = ivs[1], hk = div(h, group);
      Value r0 = mul(ivs[2], tile);
      Type f32 = b.getF32Type();
      Value phi = memref::AllocOp::create(b, MemRefType::get({tile, f}, f32));
      Value den = memref::AllocOp::create(b, MemRefType::get({tile}, f32));
      // phi of the tile's rows (rows past Lq repeat the last) and their
      // denominators phi(q) z + eps (from `dot`, phi(q) z by lanes).
      auto rowOf = [&](Value r) -> Value {
        return arith::MinSIOp::create(b, add(r0, r), queries.last(*this));
      };
      auto storeDen = [&](Value r, Value dot) {
        memref::StoreOp::create(
            b, arith::AddFOp::create(b, sumLanes(b, dot), f32Const(eps)), den,
            ValueRange{r});
      };
      if (wt) {
        // (FAVOR+: the products phi(q) z by lanes, as the features are
        // computed, then summed.)
        Value dots =
            memref::AllocOp::create(b, MemRefType::get({tile, lanes}, f32));
        forEach(0, tile, 1, [&](Value r) {
          vector::StoreOp::create(b, splat(0.0), dots, ValueRange{r, idx(0)});
        });
        favorRows(
            qBuf, bi, h, tile, phi, rowOf,
            [&](Value j0, Value f0, ArrayRef<Value> phis) {
              int64_t ev = phis.size() / kRows;
              SmallVector<Value> z;
              for (int64_t g = 0; g < ev; ++g)
                z.push_back(vector::LoadOp::create(
                    b, vf, zBuf, ValueRange{bi, hk, add(f0, idx(g * lanes))}));
              for (int64_t i = 0; i < kRows; ++i) {
                SmallVector<Value> at{add(j0, idx(i)), idx(0)};
                Value acc = vector::LoadOp::create(b, vf, dots, at);
                for (int64_t g = 0; g < ev; ++g)
                  acc = vector::FMAOp::create(b, phis[i * ev + g], z[g], acc);
                vector::StoreOp::create(b, acc, dots, at);
              }
            });
        forEach(0, tile, 1, [&](Value r) {
          storeDen(r,
                   vector::LoadOp::create(b, vf, dots, ValueRange{r, idx(0)}));
        });
        favorApply(phi, f, dv, tile, sBuf, {bi, hk},
                   [&](ArrayRef<Value> acc, Value rb, Value e0) {
                     storeRows(acc, ev, rb, r0, sub(queries.get(*this), r0), e0,
                               den, gBuf, out, bi, h, outElem);
                   });
        return;
      }
      forEach(0, tile, 1, [&](Value r) {
        Value row = rowOf(r);
        Value dot = splat(0.0);
        Value dots = forEachCarry(0, f, lanes, dot, [&](Value fi, Value acc) {
          Value x = featureMap(load(qBuf, {bi, h, row, fi}));
          vector::StoreOp::create(b, x, phi, ValueRange{r, fi});
          return vector::FMAOp::create(
              b, x, vector::LoadOp::create(b, vf, zBuf, ValueRange{bi, hk, fi}),
              acc);
        });
        storeDen(r, dots);
      });
      // O = phi(Q) S in RB x EV register tiles, divided by den.
      forEach(0, tile, kRows, [&](Value rb) {
        forEach(0, dv, ev * lanes, [&](Value e0) {
          SmallVector<Value> sums = rowTile(
              ev, idx(f), SmallVector<Value>(kRows * ev, splat(0.0)),
              [&](int64_t r, Value fi) -> Value {
                return memref::LoadOp::create(b, phi,
                                              ValueRange{add(rb, idx(r)), fi});
              },
              [&](int64_t g, Value fi) -> Value {
                return vector::LoadOp::create(
                    b, vf, sBuf,
                    ValueRange{bi, hk, fi, add(e0, idx(g * lanes))});
              });
          storeRows(sums, ev, rb, r0, sub(queries.get(*this), r0), e0, den,
                    gBuf, out, bi, h, outElem);
        });
      });
    });
    return toTensor(out);
  }

  /// What the steps of chunkedCausal share for one (batch, query head):
  /// the sizes, the operand and output buffers, the head, and the head's
  /// scratch.
  struct CausalHead {
    /// The sequence length.
    Length len;
    /// The features, the value dim, the chunk length, and the value vectors
    /// per register tile of O and of A.
    int64_t f, dv, chunk, ev, evA;
    double eps;
    /// Q, K, V and the gate (null when absent), the output and its type.
    Value qBuf, kBuf, vBuf, gBuf, out;
    Type outElem;
    /// The batch row, the query head and its key/value head.
    Value bi, h, hk;
    /// S and z (carried over the chunks), phi(K_c) (and transposed),
    /// phi(Q_c), A and den.
    Value state, sum, phiK, phiKT, phiQ, scores, den;
    /// The masked sums themselves (den = 1): chunked_linear's
    /// `unnormalized`.
    bool unnormalized = false;
    /// chunked_linear's `reverse`: logical row r (the chunks' order) is
    /// buffer row L - 1 - r, so the sums run over the following rows.
    bool reverse = false;
  };

  /// The buffer row of logical row `r` of head `s`.
  Value rowAt(const CausalHead &s, Value r) {
    return s.reverse ? sub(s.len.last(*this), r) : r;
  }

  /// The causal chunked form of `op` (no segment ids), the features of Q
  /// and K from `fmq` and `fmk` (the same map): per (batch, query head),
  /// the chunks in order, carrying S and z (see the pass description).
  Value chunkedCausal(ChunkedLinearOp op, FeatureMapOp fmq, FeatureMapOp fmk) {
    // (Without feature map ops the operands are the features themselves.)
    Value query = fmq ? fmq.getInput() : op.getQueryFeatures(),
          key = fmk ? fmk.getInput() : op.getKeyFeatures(),
          value = op.getValue();
    auto qt = cast<RankedTensorType>(query.getType());
    auto rt = cast<RankedTensorType>(op.getType());
    int64_t batch = qt.getDimSize(0), heads = qt.getDimSize(1),
            len = qt.getDimSize(2),
            kvHeads = cast<RankedTensorType>(key.getType()).getDimSize(1),
            dv = cast<RankedTensorType>(value.getType()).getDimSize(3);
    int64_t f =
        cast<RankedTensorType>(op.getQueryFeatures().getType()).getDimSize(3);
    int64_t group = heads / kvHeads;
    bool dynamicBatch = ShapedType::isDynamic(batch);
    bool dynamicLen = ShapedType::isDynamic(len);
    int64_t chunk =
        dynamicLen ? op.getChunkSize()
                   : std::min(op.getChunkSize(), llvm::alignTo(len, lanes));
    prepareMap(fmq);
    Value qBuf = readOnlyBuffer(b, query), kBuf = readOnlyBuffer(b, key),
          vBuf = readOnlyBuffer(b, value),
          gBuf = readOnlyBuffer(b, op.getGate());
    Type outElem = rt.getElementType(), f32 = b.getF32Type();
    // A batch or length known at run time: the query buffer's sizes (the
    // chunked form runs only where Lq == Lk, checked before it).
    SmallVector<Value> outSizes = runtimeSizes(rt, qBuf);
    Value out = memref::AllocOp::create(
        b, MemRefType::get(rt.getShape(), outElem), outSizes);
    Value lenValue = dynamicLen ? outSizes.back() : Value();
    int64_t ev = valueVectors(dv), evA = valueVectors(chunk);
    double eps = op.getEps().convertToDouble();
    int64_t chunks = dynamicLen ? 0 : llvm::divideCeil(len, chunk);
    Value chunkCount;
    if (dynamicLen)
      chunkCount = arith::CeilDivSIOp::create(b, lenValue, idx(chunk));
    OpFoldResult batchBound =
        dynamicBatch ? OpFoldResult(outSizes.front()) : b.getIndexAttr(batch);
    parallel({batchBound, b.getIndexAttr(heads)}, [&](ValueRange ivs) {
      Value bi = ivs[0], h = ivs[1], hk = div(h, group);
      // (Scratch of the iteration; the deallocation pipeline frees it.)
      auto alloc = [&](ArrayRef<int64_t> shape) -> Value {
        return memref::AllocOp::create(b, MemRefType::get(shape, f32));
      };
      Value state = alloc({f, dv}), sum = alloc({f});
      Value phiK = alloc({chunk, f}), phiKT = alloc({f, chunk});
      Value phiQ = alloc({chunk, f}), scores = alloc({chunk, chunk});
      Value den = alloc({chunk});
      forEach(0, f, 1, [&](Value fi) {
        forEach(0, dv, lanes, [&](Value e) {
          vector::StoreOp::create(b, splat(0.0), state, ValueRange{fi, e});
        });
      });
      forEach(0, f, lanes, [&](Value fi) {
        vector::StoreOp::create(b, splat(0.0), sum, ValueRange{fi});
      });
      CausalHead s{{len, lenValue},
                   f,
                   dv,
                   chunk,
                   ev,
                   evA,
                   eps,
                   qBuf,
                   kBuf,
                   vBuf,
                   gBuf,
                   out,
                   outElem,
                   bi,
                   h,
                   hk,
                   state,
                   sum,
                   phiK,
                   phiKT,
                   phiQ,
                   scores,
                   den};
      s.unnormalized = op.getUnnormalized();
      s.reverse = op.getReverse();
      if (dynamicLen)
        forRange(idx(0), chunkCount, 1, [&](Value c) { causalChunk(s, c); });
      else
        forEach(0, chunks, 1, [&](Value c) { causalChunk(s, c); });
    });
    return toTensor(out);
  }

  /// Chunk `c` of chunkedCausal's head `s`: the features of its keys and
  /// queries, per kRows rows A and den (causalScores) and the output
  /// (causalOutput), then S and z updated with its keys.
  void causalChunk(const CausalHead &s, Value c) {
    Value o = mul(c, s.chunk);
    Value n = arith::MinSIOp::create(b, idx(s.chunk), sub(s.len.get(*this), o));
    // Rows past the sequence read its last row (never used: the
    // triangle and the state stop at n, their outputs are dropped).
    auto rowOf = [&](Value j) -> Value {
      return rowAt(s, arith::MinSIOp::create(b, add(o, j), s.len.last(*this)));
    };
    featureRows(s.kBuf, s.bi, s.hk, s.chunk, s.phiK, rowOf);
    featureRows(s.qBuf, s.bi, s.h, s.chunk, s.phiQ, rowOf);
    forEach(0, s.chunk, 1, [&](Value j) {
      forEach(0, s.f, 1, [&](Value fi) {
        memref::StoreOp::create(
            b, memref::LoadOp::create(b, s.phiK, ValueRange{j, fi}), s.phiKT,
            ValueRange{fi, j});
      });
    });
    // A = phi(Q_c) phi(K_c)^T on and below the diagonal (0 above), and
    // den = phi(Q_c) z + rowsum A + eps.
    auto vi = VectorType::get({lanes}, b.getIndexType());
    SmallVector<Attribute> laneIdx;
    for (int64_t i = 0; i < lanes; ++i)
      laneIdx.push_back(b.getIndexAttr(i));
    Value iota =
        arith::ConstantOp::create(b, DenseElementsAttr::get(vi, laneIdx));
    forEach(0, s.chunk, kRows, [&](Value rb) {
      Value top = add(rb, idx(kRows));
      causalScores(s, rb, top, vi, iota);
      causalOutput(s, rb, top, o, n);
    });
    // S += phi(K_c)^T V_c, z += the column sums (the chunk's n keys).
    addOuterProducts(
        s.state, s.f, s.dv, n, s.phiK,
        [&](Value fi, Value e) { return SmallVector<Value>{fi, e}; },
        [&](Value j, Value e) {
          return load(s.vBuf, {s.bi, s.hk, rowAt(s, add(o, j)), e});
        });
    forRange(idx(0), n, 1, [&](Value j) {
      forEach(0, s.f, lanes, [&](Value fi) {
        vector::StoreOp::create(
            b,
            arith::AddFOp::create(
                b, vector::LoadOp::create(b, vf, s.sum, ValueRange{fi}),
                vector::LoadOp::create(b, vf, s.phiK, ValueRange{j, fi})),
            s.sum, ValueRange{fi});
      });
    });
  }

  /// Element (rb + i, fi) of head `s`'s phi(Q_c).
  Value phiQAt(const CausalHead &s, Value rb, int64_t i, Value fi) {
    return memref::LoadOp::create(b, s.phiQ, ValueRange{add(rb, idx(i)), fi});
  }

  /// Rows rb.. (kRows of them) of A = phi(Q_c) phi(K_c)^T into s.scores, on
  /// and below the diagonal (0 above; the key blocks of EvA vectors below
  /// `top`), and their den = phi(Q_c) z + rowsum A + eps; `vi` and `iota`
  /// the lane indices.
  void causalScores(const CausalHead &s, Value rb, Value top, VectorType vi,
                    Value iota) {
    SmallVector<Value> rowSums(kRows, splat(0.0));
    for (int64_t i = 0; i < kRows; ++i)
      rowSums[i] =
          forEachCarry(0, s.f, lanes, splat(0.0), [&](Value fi, Value acc) {
            return vector::FMAOp::create(
                b,
                vector::LoadOp::create(b, vf, s.phiQ,
                                       ValueRange{add(rb, idx(i)), fi}),
                vector::LoadOp::create(b, vf, s.sum, ValueRange{fi}), acc);
          });
    auto blocks = scf::ForOp::create(
        b, idx(0), top, idx(s.evA * lanes), rowSums,
        [&](OpBuilder &, Location, Value j0, ValueRange carried) {
          SmallVector<Value> a = phiQTimes(s, rb, s.evA, s.phiKT, j0);
          SmallVector<Value> next(carried.begin(), carried.end());
          for (int64_t i = 0; i < kRows; ++i)
            for (int64_t g = 0; g < s.evA; ++g) {
              Value j = add(j0, idx(g * lanes));
              Value cols = arith::AddIOp::create(
                  b, vector::BroadcastOp::create(b, vi, j), iota);
              Value keep = arith::CmpIOp::create(
                  b, arith::CmpIPredicate::ule, cols,
                  vector::BroadcastOp::create(b, vi, add(rb, idx(i))));
              Value x = arith::SelectOp::create(b, keep, a[i * s.evA + g],
                                                splat(0.0));
              vector::StoreOp::create(b, x, s.scores,
                                      ValueRange{add(rb, idx(i)), j});
              next[i] = arith::AddFOp::create(b, next[i], x);
            }
          scf::YieldOp::create(b, next);
        });
    if (s.unnormalized)
      return;
    for (int64_t i = 0; i < kRows; ++i) {
      Value d = sumLanes(b, blocks.getResult(i));
      memref::StoreOp::create(b, arith::AddFOp::create(b, d, f32Const(s.eps)),
                              s.den, ValueRange{add(rb, idx(i))});
    }
  }

  /// The kRows x ev register tile of phi(Q_c)'s rows rb.. times the F rows
  /// of `mat` (F x ..., ev vectors from column `col0`), from 0.
  SmallVector<Value> phiQTimes(const CausalHead &s, Value rb, int64_t ev,
                               Value mat, Value col0) {
    return rowTile(
        ev, idx(s.f), SmallVector<Value>(kRows * ev, splat(0.0)),
        [&](int64_t i, Value fi) { return phiQAt(s, rb, i, fi); },
        [&](int64_t g, Value fi) -> Value {
          return vector::LoadOp::create(
              b, vf, mat, ValueRange{fi, add(col0, idx(g * lanes))});
        });
  }

  /// Output rows rb.. (kRows of them; those below n are stored) of the
  /// chunk from row `o`, its rows from rb below `top`.
  void causalOutput(const CausalHead &s, Value rb, Value top, Value o,
                    Value n) {
    // O = (phi(Q_c) S + A V_c) / den: depth F, then the keys of the
    // triangle (within the chunk's n): those below rb, which every row of
    // the block sees, then the diagonal's, where the masked weights (0)
    // must not multiply their values (an inf or NaN there reaches no
    // earlier row).
    Value below = arith::MinSIOp::create(b, rb, n);
    Value depth = arith::MinSIOp::create(b, top, n);
    forEach(0, s.dv, s.ev * lanes, [&](Value e0) {
      SmallVector<Value> acc = phiQTimes(s, rb, s.ev, s.state, e0);
      auto keys = [&](Value from, Value count, SmallVector<Value> init,
                      bool diagonal) {
        return rowTile(
            s.ev, count, init,
            [&](int64_t i, Value j) -> Value {
              return memref::LoadOp::create(
                  b, s.scores, ValueRange{add(rb, idx(i)), add(from, j)});
            },
            [&](int64_t g, Value j) -> Value {
              return load(s.vBuf, {s.bi, s.hk, rowAt(s, add(o, add(from, j))),
                                   add(e0, idx(g * lanes))});
            },
            diagonal);
      };
      acc = keys(idx(0), below, acc, /*diagonal=*/false);
      acc = keys(below, sub(depth, below), acc, /*diagonal=*/true);
      storeRows(acc, s.ev, rb, o, n, e0, s.unnormalized ? Value() : s.den,
                s.gBuf, s.out, s.bi, s.h, s.outElem,
                [&](Value r) { return rowAt(s, r); });
    });
  }

  /// stateBuf[at(f, e)] += sum_{j < n} phi[j, f] v(j, e) over an F x Dv state
  /// (`v` a vector of value columns from e), in kRows x EV register tiles
  /// loaded from and stored back to the state.
  void addOuterProducts(Value stateBuf, int64_t f, int64_t dv, Value n,
                        Value phi,
                        function_ref<SmallVector<Value>(Value, Value)> at,
                        function_ref<Value(Value, Value)> v) {
    int64_t ev = valueVectors(dv);
    forEach(0, f, kRows, [&](Value f0) {
      forEach(0, dv, ev * lanes, [&](Value e0) {
        auto column = [&](int64_t g) { return add(e0, idx(g * lanes)); };
        SmallVector<Value> acc;
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t g = 0; g < ev; ++g)
            acc.push_back(vector::LoadOp::create(
                b, vf, stateBuf, at(add(f0, idx(r)), column(g))));
        SmallVector<Value> sums = rowTile(
            ev, n, acc,
            [&](int64_t r, Value j) -> Value {
              return memref::LoadOp::create(b, phi,
                                            ValueRange{j, add(f0, idx(r))});
            },
            [&](int64_t g, Value j) { return v(j, column(g)); });
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t g = 0; g < ev; ++g)
            vector::StoreOp::create(b, sums[r * ev + g], stateBuf,
                                    at(add(f0, idx(r)), column(g)));
      });
    });
  }

  /// The register tile of the three products (phi(K)^T V, phi(Q) S and
  /// FAVOR+'s projection): acc[i * ev + g] += row(i, k) * vec(g, k) for k
  /// in [0, depth), kRows scalars broadcast and ev vectors loaded per step.
  SmallVector<Value> rowTile(int64_t ev, Value depth, SmallVector<Value> init,
                             function_ref<Value(int64_t, Value)> row,
                             function_ref<Value(int64_t, Value)> vec,
                             bool zeroAddsNothing = false) {
    return registerTile(b, kRows, ev, depth, init, row, vec, zeroAddsNothing);
  }

  /// Queries per task of state_apply with the feature map `fm`: 128 with
  /// FAVOR+ (whose blocks of W^T and S, read from L2, each serve all of
  /// them: measured 0.95 of the time of 64, 256 slower), else 16; at most
  /// the queries when Lq is static (Lq rounded up to kRows: a decode step
  /// computes the features of kRows rows, not of a whole tile).
  static int64_t queryTile(FeatureMapOp fm) {
    int64_t rows =
        cast<RankedTensorType>(fm.getInput().getType()).getDimSize(2);
    int64_t most =
        kRows * (fm.getKernel().getFeatureMap() == FeatureMap::favor ? 32 : 4);
    return ShapedType::isDynamic(rows) ? most : atMostRows(most, rows);
  }

  /// `most` rows, or fewer: `rows` (at least 1) rounded up to kRows.
  static int64_t atMostRows(int64_t most, int64_t rows) {
    return std::min<int64_t>(most,
                             llvm::alignTo(std::max<int64_t>(rows, 1), kRows));
  }

  /// O = phi S for the `tile` rows of phi (F features) and the F x Dv state
  /// of `sBuf` at `at`, by blocks of features whose rows of S take 16 KiB
  /// (in L1 for all the rows): the partial O in a scratch tile, then
  /// `store(acc, rb, e0)` per kRows x EV register tile of the result.
  void favorApply(Value phi, int64_t f, int64_t dv, int64_t tile, Value sBuf,
                  ArrayRef<Value> at,
                  function_ref<void(ArrayRef<Value>, Value, Value)> store) {
    int64_t ev = valueVectors(dv);
    // (The largest divisor of F up to 4096 / Dv rows of S.)
    int64_t block = tileVectors(f, 1, std::max<int64_t>(1, 4096 / dv));
    // (Scratch: the partial products.)
    Value part =
        memref::AllocOp::create(b, MemRefType::get({tile, dv}, b.getF32Type()));
    auto tiles = [&](function_ref<void(Value, Value)> body) {
      forEach(0, tile, kRows, [&](Value rb) {
        forEach(0, dv, ev * lanes, [&](Value e0) { body(rb, e0); });
      });
    };
    auto partAt = [&](Value rb, int64_t r, Value e0, int64_t g) {
      return SmallVector<Value>{add(rb, idx(r)), add(e0, idx(g * lanes))};
    };
    auto loadPart = [&](Value rb, Value e0) {
      SmallVector<Value> acc;
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t g = 0; g < ev; ++g)
          acc.push_back(
              vector::LoadOp::create(b, vf, part, partAt(rb, r, e0, g)));
      return acc;
    };
    forEach(0, tile, 1, [&](Value r) {
      forEach(0, dv, lanes, [&](Value e) {
        vector::StoreOp::create(b, splat(0.0), part, ValueRange{r, e});
      });
    });
    forEach(0, f, block, [&](Value f0) {
      tiles([&](Value rb, Value e0) {
        SmallVector<Value> sums = rowTile(
            ev, idx(block), loadPart(rb, e0),
            [&](int64_t r, Value k) -> Value {
              return memref::LoadOp::create(
                  b, phi, ValueRange{add(rb, idx(r)), add(f0, k)});
            },
            [&](int64_t g, Value k) -> Value {
              SmallVector<Value> i(at);
              i.append({add(f0, k), add(e0, idx(g * lanes))});
              return vector::LoadOp::create(b, vf, sBuf, i);
            });
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t g = 0; g < ev; ++g)
            vector::StoreOp::create(b, sums[r * ev + g], part,
                                    partAt(rb, r, e0, g));
      });
    });
    tiles([&](Value rb, Value e0) { store(loadPart(rb, e0), rb, e0); });
  }

  /// The sizes a memref.alloc of `type` (`B x H x L x Dv`) takes: its
  /// dynamic batch and length, those of `buf`.
  SmallVector<Value> runtimeSizes(RankedTensorType type, Value buf) {
    SmallVector<Value> sizes;
    for (int64_t d : {0, 2})
      if (type.isDynamicDim(d))
        sizes.push_back(dim(buf, d));
    return sizes;
  }

  /// Value vectors per register tile: the largest divisor of Dv / lanes
  /// whose kRows x EV accumulators take at most half the registers.
  int64_t valueVectors(int64_t dv) {
    return tileVectors(dv / lanes, kRows, registers / 2);
  }

  /// Rows (FB, RB) of a register tile.
  static constexpr int64_t kRows = 4;

private:
  /// Keys per block of kv_state: elementwise maps 64; FAVOR+ 128 (W^T and
  /// the rows of S, 64 KiB each for m = 256, read from L2 once per block:
  /// 0.95 of the time of 64 by the best of two runs of 14 alternating
  /// rounds, 0.98 by the medians). Tasks to aim for (heads x key chunks)
  /// and the fewest keys of a chunk.
  static constexpr int64_t kMapBlock = 64, kFavorBlock = 128, kTasks = 16,
                           kMinChunk = 256;

  FeatureMap map = FeatureMap::elu_plus_one;
  /// No feature map: the operand rows are the features (chunked_linear's
  /// operands computed elsewhere, as the gradient's cotangents).
  bool identity = false;
  double inputScale = 1.0;
  /// FAVOR+: input_scale * W^T in blocks of the projection's register tile
  /// (m / FB x D x FB, f32; FB = favorEv vectors), and m.
  Value wt;
  int64_t features = 0, favorEv = 1;

  /// The map of `fm`; for FAVOR+, W^T scaled, from the seeded constant or
  /// the projection operand (once per op, m x D elements).
  void prepareMap(FeatureMapOp fm) {
    identity = !fm;
    wt = Value();
    inputScale = 1.0;
    if (identity)
      return;
    KernelAttr kernel = fm.getKernel();
    map = kernel.getFeatureMap();
    inputScale = fm.getInputScale() ? fm.getInputScale()->convertToDouble() : 1;
    wt = Value();
    if (map != FeatureMap::favor)
      return;
    int64_t dim = cast<RankedTensorType>(fm.getInput().getType()).getDimSize(3);
    features = kernel.getFeatures();
    Value w = fm.getProjection();
    if (!w) {
      std::vector<double> values = favorProjection(kernel.getSeed(), features,
                                                   dim, kernel.getOrthogonal());
      SmallVector<float> v(values.begin(), values.end());
      auto type = RankedTensorType::get({features, dim}, b.getF32Type());
      w = arith::ConstantOp::create(
          b, DenseElementsAttr::get(type, ArrayRef<float>(v)));
    }
    Value wBuf = readOnlyBuffer(b, w);
    // (Blocks of the projection's register tile, each contiguous. A wider
    // tile than the products': its K is only D deep, and the rows are
    // reused over all m features. Measured: 8 % faster on AVX2.)
    favorEv = tileVectors(features / lanes, kRows, registers - 4);
    int64_t fb = favorEv * lanes;
    wt = memref::AllocOp::create(
        b, MemRefType::get({features / fb, dim, fb}, b.getF32Type()));
    forEach(0, features, 1, [&](Value r) {
      Value blk = div(r, fb), in = arith::RemUIOp::create(b, r, idx(fb));
      forEach(0, dim, 1, [&](Value d) {
        Value x = memref::LoadOp::create(b, wBuf, ValueRange{r, d});
        if (!x.getType().isF32())
          x = arith::ExtFOp::create(b, b.getF32Type(), x);
        x = arith::MulFOp::create(b, x, f32Const(inputScale));
        memref::StoreOp::create(b, x, wt, ValueRange{blk, d, in});
      });
    });
  }

  /// phi of `count` rows (a multiple of kRows) into phi[j, :], the source
  /// row rowOf(j) of `src` at (bi, h): FAVOR+ (favorRows) or elementwise.
  void featureRows(Value src, Value bi, Value h, int64_t count, Value phi,
                   function_ref<Value(Value)> rowOf) {
    if (wt) {
      favorRows(src, bi, h, count, phi, rowOf);
      return;
    }
    int64_t dim = cast<MemRefType>(src.getType()).getDimSize(3);
    forEach(0, count, 1, [&](Value j) {
      Value row = rowOf(j);
      forEach(0, dim, lanes, [&](Value fi) {
        vector::StoreOp::create(b, featureMap(load(src, {bi, h, row, fi})), phi,
                                ValueRange{j, fi});
      });
    });
  }

  /// Stores the kRows x EV register tile `acc` of output rows rb.. of the
  /// chunk at `o` (those below n), columns e0..: divided by den (0 where
  /// den is 0, a division as the reference; not without `den`), times the
  /// gate, rounded; the rows through `rowAtOf` when given (buffer rows of
  /// logical rows).
  void storeRows(ArrayRef<Value> acc, int64_t ev, Value rb, Value o, Value n,
                 Value e0, Value den, Value gBuf, Value out, Value bi, Value h,
                 Type outElem, function_ref<Value(Value)> rowAtOf = nullptr) {
    for (int64_t r = 0; r < kRows; ++r) {
      Value rr = add(rb, idx(r));
      Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, rr, n);
      scf::IfOp::create(b, inside, [&](OpBuilder &, Location) {
        Value row = add(o, rr);
        if (rowAtOf)
          row = rowAtOf(row);
        Value d, nonzero;
        if (den) {
          d = vector::BroadcastOp::create(
              b, vf, memref::LoadOp::create(b, den, ValueRange{rr}));
          nonzero = arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, d,
                                          splat(0.0));
        }
        for (int64_t g = 0; g < ev; ++g) {
          Value e = add(e0, idx(g * lanes));
          Value v = acc[r * ev + g];
          if (den)
            v = arith::SelectOp::create(
                b, nonzero, arith::DivFOp::create(b, v, d), splat(0.0));
          if (gBuf)
            v = arith::MulFOp::create(b, v, load(gBuf, {bi, h, row, e}));
          if (outElem != b.getF32Type())
            v = arith::TruncFOp::create(b, VectorType::get({lanes}, outElem),
                                        v);
          vector::StoreOp::create(b, v, out, ValueRange{bi, h, row, e});
        }
        scf::YieldOp::create(b);
      });
    }
  }

  /// FAVOR+ features of `count` rows (a multiple of kRows) into phi:
  /// phi[j, r] = exp(<w_r, s x> - |s x|^2 / 2) / sqrt(m), x the source row
  /// rowOf(j) of `src` at (bi, h): per block of FB features (W^T's block
  /// stays in L1), all the rows, kRows at a time, in kRows x favorEv
  /// register tiles (broadcasts of x, vector loads of the block) that start
  /// at -(|s x|^2 + ln m) / 2 and hold the exponents.
  void favorRows(
      Value src, Value bi, Value h, int64_t count, Value phi,
      function_ref<Value(Value)> rowOf,
      function_ref<void(Value, Value, ArrayRef<Value>)> consume = nullptr) {
    int64_t dim = cast<MemRefType>(src.getType()).getDimSize(3);
    int64_t fb = favorEv * lanes;
    // (Scratch: the rows' starting values.)
    Value start =
        memref::AllocOp::create(b, MemRefType::get({count}, b.getF32Type()));
    double halfLogM = 0.5 * std::log(static_cast<double>(features));
    forEach(0, count, 1, [&](Value j) {
      Value row = rowOf(j);
      Value squares =
          forEachCarry(0, dim, lanes, splat(0.0), [&](Value d, Value acc) {
            Value x = arith::MulFOp::create(b, load(src, {bi, h, row, d}),
                                            splat(inputScale));
            return vector::FMAOp::create(b, x, x, acc);
          });
      Value half =
          arith::MulFOp::create(b, sumLanes(b, squares), f32Const(-0.5));
      memref::StoreOp::create(
          b, arith::SubFOp::create(b, half, f32Const(halfLogM)), start,
          ValueRange{j});
    });
    forEach(0, features, fb, [&](Value f0) {
      Value blk = div(f0, fb);
      forEach(0, count, kRows, [&](Value j0) {
        SmallVector<Value> rowsRead, init;
        for (int64_t i = 0; i < kRows; ++i) {
          Value j = add(j0, idx(i));
          rowsRead.push_back(rowOf(j));
          init.append(
              favorEv,
              vector::BroadcastOp::create(
                  b, vf, memref::LoadOp::create(b, start, ValueRange{j})));
        }
        SmallVector<Value> proj = rowTile(
            favorEv, idx(dim), init,
            [&](int64_t i, Value d) -> Value {
              Value x = memref::LoadOp::create(
                  b, src, ValueRange{bi, h, rowsRead[i], d});
              if (!x.getType().isF32())
                x = arith::ExtFOp::create(b, b.getF32Type(), x);
              return x;
            },
            [&](int64_t g, Value d) -> Value {
              return vector::LoadOp::create(b, vf, wt,
                                            ValueRange{blk, d, idx(g * lanes)});
            });
        for (Value &x : proj)
          x = math::ExpOp::create(b, x);
        for (int64_t i = 0; i < kRows; ++i)
          for (int64_t g = 0; g < favorEv; ++g)
            vector::StoreOp::create(
                b, proj[i * favorEv + g], phi,
                ValueRange{add(j0, idx(i)), add(f0, idx(g * lanes))});
        if (consume)
          consume(j0, f0, proj);
      });
    });
  }

  /// phi(input_scale * x), elementwise (x itself without a map).
  Value featureMap(Value x) {
    if (identity)
      return x;
    if (inputScale != 1.0)
      x = arith::MulFOp::create(b, x, splat(inputScale));
    if (map == FeatureMap::relu)
      return arith::MaximumFOp::create(b, x, splat(0.0));
    // elu(x) + 1: x + 1 for x > 0, exp(x) otherwise.
    Value positive =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, splat(0.0));
    return arith::SelectOp::create(
        b, positive, arith::AddFOp::create(b, x, splat(1.0)),
        math::ExpOp::create(b, arith::MinimumFOp::create(b, x, splat(0.0))));
  }
};

/// True if `t` (`B x H x L x X`) has static sizes but for its batch and
/// length, none of them 0 (zero-sized ops keep the reference lowering; a
/// batch or length of 0 at run time runs no iteration).
bool kernelShape(RankedTensorType t) {
  for (auto [d, size] : llvm::enumerate(t.getShape()))
    if (size == 0 || (ShapedType::isDynamic(size) && d != 0 && d != 2))
      return false;
  return t.getRank() == 4;
}

/// The feature map producing `v`, if the fused kernels take it: static
/// sizes but the batch and length, the input dim a multiple of the vector
/// width, the features a multiple of the register tile and the vector
/// width.
FeatureMapOp fusableMap(Value v, int64_t lanes) {
  auto fm = v.getDefiningOp<FeatureMapOp>();
  if (!fm)
    return {};
  // (FAVOR+: F = m features from a projection of the D inputs.)
  auto in = cast<RankedTensorType>(fm.getInput().getType());
  auto out = cast<RankedTensorType>(fm.getType());
  if (!kernelShape(in) || !kernelShape(out) || in.getDimSize(3) % lanes != 0 ||
      out.getDimSize(3) % lanes != 0 ||
      out.getDimSize(3) % LinearGen::kRows != 0)
    return {};
  if (fm.getProjection() &&
      !cast<RankedTensorType>(fm.getProjection().getType()).hasStaticShape())
    return {};
  return fm;
}

/// True if `v`, no feature map's result, can be the features of the causal
/// chunked kernel as it is: f32, the kernels' shape, a feature count that
/// is a multiple of the register tile and the vector width.
bool identityFeatures(Value v, int64_t lanes) {
  if (v.getDefiningOp<FeatureMapOp>())
    return false;
  auto t = cast<RankedTensorType>(v.getType());
  return t.getElementType().isF32() && kernelShape(t) &&
         t.getDimSize(3) % lanes == 0 &&
         t.getDimSize(3) % LinearGen::kRows == 0;
}

/// True if `a` and `b` compute the same feature map (kernel, input scale
/// and projection): the chunked kernel prepares one map for both.
bool sameMap(FeatureMapOp a, FeatureMapOp b) {
  return a.getKernel() == b.getKernel() &&
         a.getInputScale() == b.getInputScale() &&
         a.getProjection() == b.getProjection();
}

struct LinearKernelsPass
    : public attn::impl::AttnLinearKernelsBase<LinearKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetModel> target = targetOfOptions(
        getOperation(), getArgument(), vectorWidth, vectorRegisters);
    if (failed(target))
      return signalPassFailure();
    int64_t lanes = target->lanes;
    auto valueOk = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      return kernelShape(t) && t.getDimSize(3) % lanes == 0;
    };
    SmallVector<std::pair<KVStateOp, FeatureMapOp>> states;
    SmallVector<std::pair<StateApplyOp, FeatureMapOp>> applies;
    SmallVector<std::tuple<ChunkedLinearOp, FeatureMapOp, FeatureMapOp>>
        chunked;
    getOperation()->walk([&](Operation *op) {
      if (auto c = dyn_cast<ChunkedLinearOp>(op)) {
        FeatureMapOp fmq = fusableMap(c.getQueryFeatures(), lanes);
        FeatureMapOp fmk = fusableMap(c.getKeyFeatures(), lanes);
        // (Features from the same map, or operands that are the features.)
        bool features =
            fmq && fmk ? sameMap(fmq, fmk)
                       : !fmq && !fmk &&
                             identityFeatures(c.getQueryFeatures(), lanes) &&
                             identityFeatures(c.getKeyFeatures(), lanes);
        if (c.getCausal() && !c.getSegments() && features &&
            valueOk(c.getValue()) && c.getChunkSize() % lanes == 0 &&
            c.getChunkSize() % LinearGen::kRows == 0 &&
            (!c.getGate() ||
             kernelShape(cast<RankedTensorType>(c.getGate().getType()))))
          chunked.push_back({c, fmq, fmk});
        return;
      }
      if (auto kv = dyn_cast<KVStateOp>(op)) {
        if (FeatureMapOp fm = fusableMap(kv.getKeyFeatures(), lanes))
          if (valueOk(kv.getValue()))
            states.push_back({kv, fm});
      } else if (auto apply = dyn_cast<StateApplyOp>(op)) {
        if (FeatureMapOp fm = fusableMap(apply.getQueryFeatures(), lanes))
          if (valueOk(apply.getState()) &&
              (!apply.getGate() ||
               kernelShape(cast<RankedTensorType>(apply.getGate().getType()))))
            applies.push_back({apply, fm});
      }
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, fmq, fmk] : chunked) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op.getLoc(), rewriter);
      LinearGen gen(b, *target);
      op.emitRemark() << getArgument()
                      << ": causal chunked form in one kernel per query "
                         "head, chunks of "
                      << op.getChunkSize()
                      << " carrying S and z, the triangle in register tiles"
                      << (fmq ? "" : ", the operands as the features")
                      << (op.getUnnormalized() ? ", no denominator" : "")
                      << (op.getReverse()
                              ? ", reversed (rows read from the end)"
                              : "");
      rewriter.replaceOp(op, gen.chunkedCausal(op, fmq, fmk));
      for (FeatureMapOp fm : {fmq, fmk})
        if (fm && fm->use_empty())
          rewriter.eraseOp(fm);
    }
    for (auto [kv, fm] : states) {
      rewriter.setInsertionPoint(kv);
      ImplicitLocOpBuilder b(kv.getLoc(), rewriter);
      LinearGen gen(b, *target);
      kv.emitRemark() << getArgument()
                      << ": phi(K)^T V and the key sum fused with the "
                         "feature map, register tiles of "
                      << LinearGen::kRows << " features x "
                      << gen.valueVectors(
                             cast<RankedTensorType>(kv.getValue().getType())
                                 .getDimSize(3)) *
                             lanes
                      << " values";
      rewriter.replaceOp(kv, gen.kvState(kv, fm));
      if (fm->use_empty())
        rewriter.eraseOp(fm);
    }
    for (auto [apply, fm] : applies) {
      rewriter.setInsertionPoint(apply);
      ImplicitLocOpBuilder b(apply.getLoc(), rewriter);
      LinearGen gen(b, *target);
      apply.emitRemark() << getArgument()
                         << ": phi(Q) S / (phi(Q) z) fused with the feature "
                            "map, tiles of "
                         << LinearGen::queryTile(fm) << " queries";
      rewriter.replaceOp(apply, gen.stateApply(apply, fm));
      if (fm->use_empty())
        rewriter.eraseOp(fm);
    }
  }
};

} // namespace
