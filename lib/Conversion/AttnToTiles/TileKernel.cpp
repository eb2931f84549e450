//===- TileKernel.cpp - Fused, tiled attention kernels for CPUs -----------===//
//
// The CPU target of the kernel frame: queries in vector lanes, register
// blocking of S^T = K Q^T and O^T += V^T P (see TileKernel.h). Every step
// that is not about registers and loops (buffers, the walk over the
// layout, masks, bias, the online softmax, pointwise weights, the
// epilogue) is the frame's.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToTiles/TileKernel.h"

#include "attn-opt/Conversion/AttnKernel/KernelFrame.h"
#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A query row lives in one vector lane: nothing to combine.
class CpuTarget : public KernelTarget {
public:
  bool readsF32Operands() const override { return true; }
  Value combineRow(ImplicitLocOpBuilder &, Value partial,
                   RowCombine) const override {
    return partial;
  }
};

/// The loops of the CPU kernel around the frame's steps.
class TileGen {
public:
  TileGen(KernelFrame &f, const TargetModel &target, const TileSizes &tiles,
          bool staticLayout)
      : f(f), b(f.b), spec(f.spec), lanes(target.lanes),
        queryVectors(tiles.queryVectors), tileRows(tiles.queryTile(target)),
        keysPerStep(tiles.keysPerStep), keyBlock(tiles.keyBlock),
        valueGroup(tiles.valueGroup), groupedRows(tiles.groupedRows),
        vf(VectorType::get({lanes}, b.getF32Type())),
        keySplits(tiles.keySplits) {
    if (usesBf16Pairs(spec, target, tiles, staticLayout)) {
      dotKind = target.bf16Dot;
      vbf = VectorType::get({2 * lanes}, b.getBF16Type());
    }
    // Decode tiles of one query vector: the head dim in the lanes (see
    // dotsAlongHeadDim).
    DecodeBlocking d = DecodeBlocking::select(spec.dims, target, tiles);
    dRows = d.rows;
    dKeys = d.keysPerStep;
    dValueVectors = d.valueVectors;
  }

  SmallVector<Value> build() {
    // Decode tiles with the head dim in the lanes extend f16 / bf16 K and
    // V as they load them.
    // (bf16 pairs read K and V as bf16 too.)
    f.kvInElementType = dRows > 0 || pairs();
    f.prepare();
    f.guarded([&] {
      if (pairs())
        packValuePairs();
      f.classifyMaskBlocks();
      SmallVector<Value> lbs = {f.idx(0), f.idx(0), f.idx(0)};
      // Decode: per batch row, key/value head and tile of its grouped rows.
      SmallVector<Value> ubs =
          groupedRows
              ? SmallVector<Value>{f.batchSize, f.idx(f.queryHeads / f.group),
                                   f.idx(
                                       llvm::divideCeil(groupedRows, tileRows))}
              : SmallVector<Value>{f.batchSize, f.idx(f.queryHeads),
                                   f.numTiles};
      SmallVector<Value> steps = {f.idx(1), f.idx(1), f.idx(1)};
      if (keySplits == 1) {
        scf::ParallelOp::create(b, lbs, ubs, steps,
                                [&](OpBuilder &, Location, ValueRange ivs) {
                                  tile(ivs[0], ivs[1], ivs[2]);
                                  scf::ReduceOp::create(b);
                                });
        return;
      }
      // Split-KV: every (tile, key range) in parallel, each writing its
      // partial output, maximum and sum to the workspace; then per tile
      // the merge.
      SmallVector<int64_t> wsShape;
      for (Value ub : ubs)
        wsShape.push_back(*getConstantIntValue(ub));
      wsShape.append({keySplits, f.valueDim + 2, tileRows});
      workspace =
          memref::AllocOp::create(b, MemRefType::get(wsShape, b.getF32Type()));
      SmallVector<Value> splitLbs(lbs), splitUbs(ubs), splitSteps(steps);
      splitLbs.push_back(f.idx(0));
      splitUbs.push_back(f.idx(keySplits));
      splitSteps.push_back(f.idx(1));
      scf::ParallelOp::create(b, splitLbs, splitUbs, splitSteps,
                              [&](OpBuilder &, Location, ValueRange ivs) {
                                split = ivs[3];
                                tile(ivs[0], ivs[1], ivs[2]);
                                scf::ReduceOp::create(b);
                              });
      scf::ParallelOp::create(b, lbs, ubs, steps,
                              [&](OpBuilder &, Location, ValueRange ivs) {
                                mergeSplits(ivs[0], ivs[1], ivs[2]);
                                scf::ReduceOp::create(b);
                              });
    });
    SmallVector<Value> results = {f.finish()};
    if (spec.results.lse)
      results.push_back(f.finishLse());
    return results;
  }

private:
  KernelFrame &f;
  ImplicitLocOpBuilder &b;
  const KernelSpec &spec;
  /// W: f32 lanes; QV query vectors of Mr = QV * W rows per tile; NJ keys
  /// per QK^T register block; Nb keys per block; EG value columns per PV
  /// register block; decode: the G x Lq rows of a key/value head (0 when
  /// a tile holds one head's queries).
  int64_t lanes, queryVectors, tileRows, keysPerStep, keyBlock, valueGroup,
      groupedRows;
  VectorType vf;
  /// Decode: the key ranges of split-KV (1: none); the workspace of the
  /// partial results [B, Hkv, tiles, splits, Dv + 2, Mr] (rows 0..Dv-1 the
  /// unnormalized output; softmax: Dv the maximum, Dv + 1 the sum) and the
  /// current split.
  int64_t keySplits;
  Value workspace, split;
  /// Decode: the current tile's first grouped row, and per query vector
  /// the query positions of its lanes (i32).
  Value groupStart;
  SmallVector<Value> lanePositions, laneHeads;
  /// ALiBi: the slopes of the current tile's rows, per query vector.
  SmallVector<Value> laneSlopes;
  /// Decode with the head dim in the lanes (0 rows: off): the tile's rows
  /// computed (the grouped rows, at most a vector), keys per QK^T step and
  /// value vectors per PV register block; Q and O of the tile row by row
  /// (`dRows x D`, `dRows x Dv`).
  int64_t dRows = 0, dKeys = 1, dValueVectors = 1;
  Value qRowsBuf, oRowsBuf;
  /// Relative attention: the tile's `scale (q + v)^T` (`D x Mr`), which
  /// meets the distance embeddings, as qt (`scale (q + u)^T` then) meets
  /// the keys.
  Value qrt;
  /// bf16 dot products of pairs (usesBf16Pairs; None: off): the tile's Q^T
  /// and P in pairs along D and along the keys (`D/2 x 2 Mr`, `Nb/2 x 2 Mr`
  /// bf16: element (i, 2 r + t) is row r's element 2 i + t), and V in
  /// pairs of keys, packed once per call (`B x Hkv x ceil(Lk/2) x Dv` i32:
  /// bf16 V[2 j, e] in the low half, V[2 j + 1, e] in the high half).
  TargetModel::Bf16Dot dotKind = TargetModel::Bf16Dot::None;
  VectorType vbf;
  Value qPairs, pPairs, vPairs;
  bool pairs() const { return dotKind != TargetModel::Bf16Dot::None; }
  /// A paged cache whose pages hold whole key blocks: the current block's
  /// page, the row of its first key in the page, and that key's buffer
  /// row (blockPage null otherwise).
  Value blockPage, blockSlot, blockFirst;

  Value fsplat(double v) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vf, b.getF32FloatAttr(v)));
  }
  Value laneOffset(int64_t v) { return f.idx(v * lanes); }

  //===--------------------------------------------------------------------===//
  // One query tile
  //===--------------------------------------------------------------------===//

  /// Online-softmax state: m, then l, QV vectors each (empty for pointwise).
  struct RowState {
    SmallVector<Value> m, l;
    SmallVector<Value> flat() const {
      SmallVector<Value> all(m);
      all.append(l);
      return all;
    }
    static RowState of(ValueRange flat) {
      RowState s;
      size_t half = flat.size() / 2;
      s.m.assign(flat.begin(), flat.begin() + half);
      s.l.assign(flat.begin() + half, flat.end());
      return s;
    }
  };

  void tile(Value bIdx, Value h, Value t) {
    if (groupedRows) {
      // Decode: `h` is the key/value head; every tile's queries lie in the
      // first query tile (Lq <= Mr), whose key blocks it visits.
      f.forTile(bIdx, f.mul(h, f.group), f.idx(0), [&] {
        groupStart = f.mul(t, tileRows);
        tileBody();
      });
      return;
    }
    // Zigzag order: tiles 0, n-1, 1, n-2, ... so that contiguous shares of
    // the iteration space get as much causal work as each other.
    Value half = f.div(t, 2);
    Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, f.rem(t, 2),
                                      f.idx(0));
    Value tileIdx = arith::SelectOp::create(
        b, odd, f.sub(f.sub(f.numTiles, f.idx(1)), half), half);
    f.forTile(bIdx, h, tileIdx, [&] { tileBody(); });
  }

  void tileBody() {
    // Scratch tiles of this iteration. Heap buffers rather than allocas:
    // allocas inside an OpenMP work-sharing loop need an alloca scope that
    // the later control-flow lowering cannot keep valid. One allocation per
    // tile is negligible next to the tile's work; the buffer deallocation
    // pipeline frees them at the end of the iteration.
    Type f32 = b.getF32Type();
    // (bf16 pairs keep Q^T in qPairs instead.)
    Value qt = pairs() ? Value()
                       : memref::AllocOp::create(
                             b, MemRefType::get({f.headDim, tileRows}, f32))
                             .getResult();
    qrt = spec.isRelative()
              ? memref::AllocOp::create(
                    b, MemRefType::get({f.headDim, tileRows}, f32))
                    .getResult()
              : Value();
    Value st =
        memref::AllocOp::create(b, MemRefType::get({keyBlock, tileRows}, f32));
    Value ot = memref::AllocOp::create(
        b, MemRefType::get({f.valueDim, tileRows}, f32));

    if (pairs()) {
      Type bf16 = b.getBF16Type();
      qPairs = memref::AllocOp::create(
          b, MemRefType::get({f.headDim / 2, 2 * tileRows}, bf16));
      pPairs = memref::AllocOp::create(
          b, MemRefType::get({keyBlock / 2, 2 * tileRows}, bf16));
    }
    if (dRows) {
      qRowsBuf =
          memref::AllocOp::create(b, MemRefType::get({dRows, f.headDim}, f32));
      oRowsBuf =
          memref::AllocOp::create(b, MemRefType::get({dRows, f.valueDim}, f32));
    }
    setLanePositions();
    laneSlopes.clear();
    if (f.slopeBuf)
      for (int64_t v = 0; v < queryVectors; ++v)
        laneSlopes.push_back(f.alibiSlope(rowsOf(v)));
    loadQueryTile(qt);
    // O starts at zero: O^T, or with the head dim in the lanes O's rows
    // (rowsToLanes writes O^T from them).
    if (dRows)
      f.forEach(0, dRows, 1, [&](Value r) {
        f.forEach(0, f.valueDim, lanes, [&](Value e) {
          vector::StoreOp::create(b, fsplat(0.0), oRowsBuf, ValueRange{r, e});
        });
      });
    else
      f.forEach(0, f.valueDim, 1, [&](Value e) {
        for (int64_t v = 0; v < queryVectors; ++v)
          vector::StoreOp::create(b, fsplat(0.0), ot,
                                  ValueRange{e, laneOffset(v)});
      });
    RowState state;
    if (spec.isSoftmax())
      for (int64_t v = 0; v < queryVectors; ++v) {
        state.m.push_back(fsplat(-std::numeric_limits<double>::infinity()));
        state.l.push_back(fsplat(0.0));
      }
    auto visit = [&](Value k0, bool masked, ValueRange carried) {
      RowState s = RowState::of(carried);
      block(k0, masked, qt, st, ot, s);
      return s.flat();
    };
    if (keySplits == 1) {
      state = RowState::of(f.visitTile(state.flat(), visit));
      rowsToLanes(ot);
    } else {
      // Split-KV: only the key blocks of this split's range.
      int64_t numBlocks = llvm::divideCeil(spec.dims.keyLen, keyBlock);
      int64_t perSplit = llvm::divideCeil(numBlocks, keySplits);
      Value first = f.mul(split, perSplit);
      state = RowState::of(f.visitTile(
          state.flat(), [&](Value k0, bool masked, ValueRange carried) {
            Value blockIdx = f.div(k0, keyBlock);
            Value inside = arith::AndIOp::create(
                b,
                arith::CmpIOp::create(b, arith::CmpIPredicate::sge, blockIdx,
                                      first),
                f.lt(blockIdx, f.add(first, perSplit)));
            return f.ifThenElseKeep(inside, carried,
                                    [&] { return visit(k0, masked, carried); });
          }));
      rowsToLanes(ot);
      storePartial(ot, state);
      return;
    }
    Value lbuf = memref::AllocOp::create(b, MemRefType::get({tileRows}, f32));
    Value mbuf = rowMaxima();
    for (int64_t v = 0; v < queryVectors; ++v) {
      vector::StoreOp::create(b, spec.isSoftmax() ? state.l[v] : fsplat(1.0),
                              lbuf, ValueRange{laneOffset(v)});
      if (mbuf)
        vector::StoreOp::create(b, state.m[v], mbuf, ValueRange{laneOffset(v)});
    }
    storeOutputTile(ot, lbuf, mbuf);
  }

  /// Split-KV: the tile's unnormalized output and, for softmax, its
  /// maximum and sum (-inf and 0 where no key of the range is allowed) into
  /// the workspace.
  void storePartial(Value ot, const RowState &state) {
    auto at = [&](Value row, int64_t v) {
      return SmallVector<Value>{f.batch, f.kvHead, f.div(groupStart, tileRows),
                                split,   row,      laneOffset(v)};
    };
    f.forEach(0, f.valueDim, 1, [&](Value e) {
      for (int64_t v = 0; v < queryVectors; ++v)
        vector::StoreOp::create(
            b, vector::LoadOp::create(b, vf, ot, ValueRange{e, laneOffset(v)}),
            workspace, at(e, v));
    });
    // (Pointwise attention merges by adding the outputs only.)
    if (spec.isSoftmax())
      for (int64_t v = 0; v < queryVectors; ++v) {
        vector::StoreOp::create(b, state.m[v], workspace,
                                at(f.idx(f.valueDim), v));
        vector::StoreOp::create(b, state.l[v], workspace,
                                at(f.idx(f.valueDim + 1), v));
      }
  }

  /// Split-KV: merges the partial results of tile `t` of key/value head
  /// `h`: softmax weights each range by exp(m_s - M) (0 for a range without
  /// allowed keys), M the maximum over the ranges, and divides by the
  /// weighted sum of the sums; pointwise attention adds the ranges.
  void mergeSplits(Value bIdx, Value h, Value t) {
    f.forTile(bIdx, f.mul(h, f.group), f.idx(0), [&] {
      groupStart = f.mul(t, tileRows);
      Type f32 = b.getF32Type();
      Value ot = memref::AllocOp::create(
          b, MemRefType::get({f.valueDim, tileRows}, f32));
      Value lbuf = memref::AllocOp::create(b, MemRefType::get({tileRows}, f32));
      Value mbuf = rowMaxima();
      auto load = [&](int64_t s, Value row, int64_t v) -> Value {
        return vector::LoadOp::create(
            b, vf, workspace,
            ValueRange{f.batch, f.kvHead, t, f.idx(s), row, laneOffset(v)});
      };
      Value ninf = fsplat(-std::numeric_limits<double>::infinity());
      for (int64_t v = 0; v < queryVectors; ++v) {
        SmallVector<Value> weights(keySplits, fsplat(1.0));
        Value sum = fsplat(1.0);
        if (spec.isSoftmax()) {
          SmallVector<Value> m;
          Value top = ninf;
          for (int64_t s = 0; s < keySplits; ++s) {
            m.push_back(load(s, f.idx(f.valueDim), v));
            top = arith::MaximumFOp::create(b, top, m.back());
          }
          sum = fsplat(0.0);
          for (int64_t s = 0; s < keySplits; ++s) {
            Value none =
                arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m[s], ninf);
            Value w =
                math::ExpOp::create(b, arith::SubFOp::create(b, m[s], top));
            weights[s] = arith::SelectOp::create(b, none, fsplat(0.0), w);
            sum = vector::FMAOp::create(b, weights[s],
                                        load(s, f.idx(f.valueDim + 1), v), sum);
          }
          if (mbuf)
            vector::StoreOp::create(b, top, mbuf, ValueRange{laneOffset(v)});
        }
        vector::StoreOp::create(b, sum, lbuf, ValueRange{laneOffset(v)});
        f.forEach(0, f.valueDim, 1, [&](Value e) {
          Value o = fsplat(0.0);
          for (int64_t s = 0; s < keySplits; ++s)
            o = spec.isSoftmax()
                    ? Value(vector::FMAOp::create(b, weights[s], load(s, e, v),
                                                  o))
                    : Value(arith::AddFOp::create(b, o, load(s, e, v)));
          vector::StoreOp::create(b, o, ot, ValueRange{e, laneOffset(v)});
        });
      }
      storeOutputTile(ot, lbuf, mbuf);
    });
  }

  /// The query head and the query (in the sequence) of row `r` of the
  /// tile: the tile's head and query q0 + r, or with decode the grouped row
  /// (the tile's first plus r, the last for padding rows) of head
  /// kvHead * G + row / Lq, query row % Lq.
  std::pair<Value, Value> rowAt(Value r) {
    if (!groupedRows)
      return {f.head, f.add(f.firstQuery, r)};
    Value flat = f.minIdx(f.add(groupStart, r), groupedRows - 1);
    int64_t lq = groupedRows / f.group;
    return {f.add(f.head, f.div(flat, lq)), f.rem(flat, lq)};
  }

  /// Decode: the query positions of the lanes of each query vector (padding
  /// lanes repeat the last row's).
  void setLanePositions() {
    lanePositions.clear();
    laneHeads.clear();
    if (!groupedRows)
      return;
    auto vi = VectorType::get({lanes}, b.getIndexType());
    int64_t lq = groupedRows / f.group;
    auto splatIdx = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          b, DenseElementsAttr::get(vi, b.getIndexAttr(v)));
    };
    for (int64_t v = 0; v < queryVectors; ++v) {
      SmallVector<Attribute> lane;
      for (int64_t i = 0; i < lanes; ++i)
        lane.push_back(b.getIndexAttr(v * lanes + i));
      Value rows = arith::AddIOp::create(
          b, vector::BroadcastOp::create(b, vi, groupStart),
          arith::ConstantOp::create(b, DenseElementsAttr::get(vi, lane)));
      rows = arith::MinUIOp::create(b, rows, splatIdx(groupedRows - 1));
      Value pos = arith::RemUIOp::create(b, rows, splatIdx(lq));
      auto vi32 = VectorType::get({lanes}, b.getI32Type());
      lanePositions.push_back(arith::IndexCastOp::create(b, vi32, pos));
      Value heads =
          arith::AddIOp::create(b, vector::BroadcastOp::create(b, vi, f.head),
                                arith::DivUIOp::create(b, rows, splatIdx(lq)));
      laneHeads.push_back(arith::IndexCastOp::create(b, vi32, heads));
    }
  }

  /// qt[d, r] = scale * (normalized) q[b, h, q0 + r, d] (rowAt); rows past
  /// Lq repeat the last row (their results are never stored). With the head
  /// dim in the lanes, the computed rows into qRowsBuf[r, d] instead.
  void loadQueryTile(Value qt) {
    f.forEach(0, dRows ? dRows : tileRows, 1, [&](Value r) {
      Value head, query;
      std::tie(head, query) = rowAt(r);
      Value row = f.queryRow(query);
      auto loadQ = [&](Value d) -> Value {
        return memref::LoadOp::create(b, f.queryBuf,
                                      ValueRange{f.batch, head, row, d});
      };
      auto readQ = [&](Value d) { return f.toF32(loadQ(d)); };
      auto sumOver = [&](function_ref<Value(Value)> term) {
        return f.forLoop(f.idx(0), f.idx(f.headDim), 1, {f.f32Const(0.0)},
                         [&](Value d, ValueRange acc) {
                           return SmallVector<Value>{
                               arith::AddFOp::create(b, acc[0], term(d))};
                         })[0];
      };
      Value shift = f.f32Const(0.0), factor = f.queryFactor(Value());
      if (spec.qkNormEps) {
        // Layer norm of the row: mean, then variance, over D.
        Value mean = f.rowMean(sumOver(readQ));
        factor = f.queryFactor(sumOver([&](Value d) -> Value {
          Value c = arith::SubFOp::create(b, readQ(d), mean);
          return arith::MulFOp::create(b, c, c);
        }));
        shift = mean;
      }
      f.forEach(0, f.headDim, 1, [&](Value d) {
        if (pairs()) {
          // bf16 pairs: Q as it came (exact in bf16), scaled in the scores.
          Value x = loadQ(d);
          memref::StoreOp::create(
              b, x, qPairs,
              ValueRange{f.div(d, 2), f.add(f.mul(r, 2), f.rem(d, 2))});
          return;
        }
        Value x = arith::SubFOp::create(b, readQ(d), shift);
        if (spec.isRelative()) {
          auto biased = [&](Value bias) -> Value {
            Value u = memref::LoadOp::create(b, bias, ValueRange{head, d});
            return arith::MulFOp::create(b, arith::AddFOp::create(b, x, u),
                                         factor);
          };
          memref::StoreOp::create(b, biased(f.positionBiasBuf), qrt,
                                  ValueRange{d, r});
          x = biased(f.contentBiasBuf);
          memref::StoreOp::create(b, x, qt, ValueRange{d, r});
          return;
        }
        x = arith::MulFOp::create(b, x, factor);
        if (dRows)
          memref::StoreOp::create(b, x, qRowsBuf, ValueRange{r, d});
        else
          memref::StoreOp::create(b, x, qt, ValueRange{d, r});
      });
    });
  }

  /// With attention sinks or the log-sum-exp, a buffer for the rows'
  /// maxima (the sink's term of the denominator and the log-sum-exp need
  /// them), else null.
  Value rowMaxima() {
    if (!f.sinkBuf && !spec.results.lse)
      return Value();
    return memref::AllocOp::create(b,
                                   MemRefType::get({tileRows}, b.getF32Type()));
  }

  /// The query rows of query vector `v` of the current tile.
  QueryRows rowsOf(int64_t v) {
    return {f.add(f.firstQuery, f.idx(v * lanes)), lanes,
            groupedRows ? lanePositions[v] : Value(),
            groupedRows ? laneHeads[v] : Value()};
  }

  /// out[b, h, q0 + r, e] = ot[e, r] * rowFactor(l[r]), times the gate
  /// (rowAt: with decode, rows past the grouped ones are padding); `mbuf`
  /// holds the rows' maxima with attention sinks (else null).
  void storeOutputTile(Value ot, Value lbuf, Value mbuf = {}) {
    f.forEach(0, tileRows, 1, [&](Value r) {
      Value head, row;
      std::tie(head, row) = rowAt(r);
      Value inside = f.rowInside(row);
      if (groupedRows)
        inside = arith::AndIOp::create(b, inside,
                                       f.lt(f.add(groupStart, r), groupedRows));
      // The epilogue at the row's head (the rows of a decode tile span the
      // heads of a group).
      f.ifThen(inside, [&] {
        Value l = memref::LoadOp::create(b, lbuf, ValueRange{r});
        Value m =
            mbuf ? memref::LoadOp::create(b, mbuf, ValueRange{r}).getResult()
                 : Value();
        Value inv = f.rowFactor(l, m, head);
        if (spec.results.lse)
          f.storeLse(f.logSumExp(l, m, head), row, head);
        f.forEach(0, f.valueDim, 1, [&](Value e) {
          Value o = memref::LoadOp::create(b, ot, ValueRange{e, r});
          o = arith::MulFOp::create(b, o, inv);
          f.storeOutput(f.applyGate(o, row, e, head), row, e, head);
        });
      });
    });
  }

  //===--------------------------------------------------------------------===//
  // One key block
  //===--------------------------------------------------------------------===//

  /// Processes the key block from `k0`; `state` holds m and l for softmax.
  void block(Value k0, bool masked, Value qt, Value st, Value ot,
             RowState &state) {
    // A paged cache whose pages hold whole key blocks: the block's page
    // and first row, looked up once.
    blockPage = Value();
    if (f.pageTableBuf && keyBlocksFitPages(f.pageSize, keyBlock)) {
      SmallVector<Value, 3> at = f.kvAt(k0);
      blockPage = at[0];
      blockSlot = at[2];
      blockFirst = k0;
    }
    SmallVector<Value> blockMax = scoreBlock(k0, masked, qt, st);
    SmallVector<Value> alpha;
    if (spec.isSoftmax())
      alpha = softmaxBlock(st, state, blockMax);
    if (dRows) {
      accumulateRows(k0, masked, st, alpha);
    } else if (pairs()) {
      pairWeights(st);
      accumulatePairs(k0, masked, ot, alpha);
    } else {
      accumulateValues(k0, masked, st, ot, alpha);
    }
  }

  /// Decode with the head dim in the lanes: O (rows x Dv) into ot (Dv x
  /// lanes), lanes past the computed rows repeating the last one.
  void rowsToLanes(Value ot) {
    if (!dRows)
      return;
    f.forEach(0, f.valueDim, 1, [&](Value e) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < lanes; ++i)
        elems.push_back(memref::LoadOp::create(
            b, oRowsBuf, ValueRange{f.idx(std::min(i, dRows - 1)), e}));
      vector::StoreOp::create(b, vector::FromElementsOp::create(b, vf, elems),
                              ot, ValueRange{e, f.idx(0)});
    });
  }

  /// O[r, :] += P[r, j] V[j, :] with the value dim in the lanes (decode):
  /// O rescaled by alpha (softmax) first; then per chunk of a few keys (their
  /// V rows, a few KiB, stay in L1 across the value groups) and per group of
  /// value vectors, R broadcasts of P and a vector load per value vector
  /// feed R FMAs each, O's group in registers over the chunk.
  void accumulateRows(Value k0, bool masked, Value st, ArrayRef<Value> alpha) {
    if (!alpha.empty())
      for (int64_t r = 0; r < dRows; ++r) {
        Value a = vector::BroadcastOp::create(
            b, vf,
            vector::ExtractOp::create(b, alpha[0], ArrayRef<int64_t>{r}));
        f.forEach(0, f.valueDim, lanes, [&](Value e) {
          SmallVector<Value> at = {f.idx(r), e};
          vector::StoreOp::create(
              b,
              arith::MulFOp::create(
                  b, vector::LoadOp::create(b, vf, oRowsBuf, at), a),
              oRowsBuf, at);
        });
      }
    int64_t chunk = 1;
    while (chunk < 16 && keyBlock % (chunk * 2) == 0)
      chunk *= 2;
    int64_t eg = dValueVectors;
    f.forLoop(f.idx(0), f.idx(keyBlock), chunk, {}, [&](Value jc, ValueRange) {
      SmallVector<Value> keysRead;
      for (int64_t j = 0; j < chunk; ++j)
        keysRead.push_back(f.keyRow(f.add(f.add(k0, jc), j), masked));
      SmallVector<SmallVector<Value, 3>> keyAt = kvIndices(keysRead, masked);
      f.forLoop(
          f.idx(0), f.idx(f.valueDim), eg * lanes, {},
          [&](Value e0, ValueRange) {
            auto col = [&](int64_t g) { return f.add(e0, f.idx(g * lanes)); };
            SmallVector<Value> acc;
            for (int64_t r = 0; r < dRows; ++r)
              for (int64_t g = 0; g < eg; ++g)
                acc.push_back(vector::LoadOp::create(
                    b, vf, oRowsBuf, ValueRange{f.idx(r), col(g)}));
            for (int64_t j = 0; j < chunk; ++j) {
              SmallVector<Value> p, none, vv;
              for (int64_t r = 0; r < dRows; ++r) {
                p.push_back(vector::BroadcastOp::create(
                    b, vf,
                    memref::LoadOp::create(
                        b, st, ValueRange{f.add(jc, j), f.idx(r)})));
                if (masked)
                  none.push_back(isZeroWeight(b, p[r]));
              }
              for (int64_t g = 0; g < eg; ++g)
                vv.push_back(f.toF32(f.vectorLoad(
                    kvVector(f.valueBuf), f.valueBuf,
                    ValueRange{keyAt[j][0], keyAt[j][1], keyAt[j][2], col(g)},
                    f.valueDim)));
              for (int64_t r = 0; r < dRows; ++r)
                for (int64_t g = 0; g < eg; ++g) {
                  Value v = masked ? dropValue(b, none[r], vv[g]) : vv[g];
                  acc[r * eg + g] =
                      vector::FMAOp::create(b, p[r], v, acc[r * eg + g]);
                }
            }
            for (int64_t r = 0; r < dRows; ++r)
              for (int64_t g = 0; g < eg; ++g)
                vector::StoreOp::create(b, acc[r * eg + g], oRowsBuf,
                                        ValueRange{f.idx(r), col(g)});
            return SmallVector<Value>();
          });
      return SmallVector<Value>();
    });
  }

  /// A vector of a lane count of `buf`'s elements.
  VectorType kvVector(Value buf) {
    return VectorType::get({lanes},
                           cast<MemRefType>(buf.getType()).getElementType());
  }

  /// QK^T of `keyAt.size()` keys with the head dim in the lanes (decode):
  /// per lanes-wide slice of D, a vector load of each key and of each row
  /// of Q feed R x NJ FMAs; the sums reduced across the lanes at the end,
  /// one score vector (rows in lanes, the last row repeated) per key.
  SmallVector<Value> dotsAlongHeadDim(ArrayRef<SmallVector<Value, 3>> keyAt) {
    int64_t nj = keyAt.size();
    SmallVector<Value> zeros(nj * dRows, fsplat(0.0));
    SmallVector<Value> acc = f.forLoop(
        f.idx(0), f.idx(f.headDim), lanes, zeros, [&](Value d, ValueRange a) {
          SmallVector<Value> qv, next;
          for (int64_t r = 0; r < dRows; ++r)
            qv.push_back(vector::LoadOp::create(b, vf, qRowsBuf,
                                                ValueRange{f.idx(r), d}));
          for (int64_t j = 0; j < nj; ++j) {
            Value kv = f.toF32(f.vectorLoad(
                kvVector(f.keyBuf), f.keyBuf,
                ValueRange{keyAt[j][0], keyAt[j][1], keyAt[j][2], d},
                f.headDim));
            for (int64_t r = 0; r < dRows; ++r)
              next.push_back(
                  vector::FMAOp::create(b, qv[r], kv, a[j * dRows + r]));
          }
          return next;
        });
    SmallVector<Value> dots;
    for (int64_t j = 0; j < nj; ++j) {
      SmallVector<Value> sums;
      for (int64_t r = 0; r < dRows; ++r)
        sums.push_back(sumLanes(b, acc[j * dRows + r]));
      SmallVector<Value> elems;
      for (int64_t i = 0; i < lanes; ++i)
        elems.push_back(sums[std::min(i, dRows - 1)]);
      dots.push_back(vector::FromElementsOp::create(b, vf, elems));
    }
    return dots;
  }

  /// Decode: the K and V rows of keys [j0, j0 + count) of the next key
  /// block (from k0 + Nb, clamped into the keys) prefetched into L2, one
  /// cache line at a time. Decode streams the cache once; a key block's
  /// rows are too short (D elements) for the hardware prefetchers to ramp
  /// up. Each step of the score loop prefetches the rows of its own keys
  /// in the next block: the misses spread over the block rather than
  /// queued at its start, where they stall the core once the line-fill
  /// buffers are full.
  void prefetchNextKeys(Value k0, Value j0, int64_t count) {
    constexpr int64_t lineBytes = 64;
    Value next = f.add(k0, f.idx(keyBlock));
    // Pages holding whole key blocks: the next block's page once (keys past
    // the sequence read its last key, as keyRow clamps them).
    // Else pages holding runs of pagedRun keys: each run's page once. (A
    // run's keys clamped into the sequence stay in its page.)
    SmallVector<Value, 3> nextAt;
    Value nextFirst, lastKey;
    int64_t run = pagedRun(count);
    if (blockPage || run > 1)
      lastKey = f.keyRow(f.sub(f.seqKeyLen, f.idx(1)), /*clamp=*/false);
    if (blockPage) {
      nextFirst = f.keyRow(next, /*clamp=*/true);
      nextAt = f.kvAt(nextFirst);
    }
    for (int64_t i = 0; i < count; ++i) {
      Value j = f.add(j0, f.idx(i));
      if (run > 1 && i % run == 0) {
        nextFirst = f.keyRow(f.add(next, j), /*clamp=*/true);
        nextAt = f.kvAt(nextFirst);
      }
      Value offset = blockPage ? j : f.idx(i % run);
      SmallVector<Value, 3> at =
          blockPage || run > 1
              ? SmallVector<Value, 3>{nextAt[0], nextAt[1],
                                      f.add(nextAt[2],
                                            f.minIdx(offset, f.sub(lastKey,
                                                                   nextFirst)))}
              : f.kvAt(f.keyRow(f.add(next, j), /*clamp=*/true));
      for (auto [buf, dim] : {std::pair(f.keyBuf, f.headDim),
                              std::pair(f.valueBuf, f.valueDim)}) {
        int64_t perLine =
            lineBytes /
            (cast<MemRefType>(buf.getType()).getElementTypeBitWidth() / 8);
        for (int64_t c = 0; c < dim; c += perLine)
          memref::PrefetchOp::create(
              b, buf, ValueRange{at[0], at[1], at[2], f.idx(c)},
              /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
      }
    }
  }

  /// The K and V buffer indices (all but the dim) of buffer row `kRead` of
  /// the current block: the block's page when it has one, else the
  /// frame's lookup.
  SmallVector<Value, 3> kvIndex(Value kRead) {
    if (!blockPage)
      return f.kvAt(kRead);
    return {blockPage, f.kvHead, f.add(blockSlot, f.sub(kRead, blockFirst))};
  }

  /// Keys in one page per run of pagedRun(n) consecutive keys of a step
  /// of n keys from a multiple of n in the block (a paged cache whose pages
  /// do not hold whole key blocks; 1 otherwise): the greatest common
  /// divisor of n and the page size, when it also divides the key block.
  int64_t pagedRun(int64_t n) const {
    if (!f.pageTableBuf || blockPage)
      return 1;
    return pagedKeyRun(f.pageSize, keyBlock, n);
  }

  /// kvIndex of the consecutive buffer rows `keysRead`, the first a
  /// multiple of their count: in an unmasked block of a paged cache, one
  /// page lookup per run of pagedRun keys (a masked block clamps its keys,
  /// which then need not be consecutive).
  SmallVector<SmallVector<Value, 3>> kvIndices(ArrayRef<Value> keysRead,
                                               bool masked) {
    int64_t n = keysRead.size();
    int64_t run = masked ? 1 : pagedRun(n);
    SmallVector<SmallVector<Value, 3>> at;
    for (int64_t j = 0; j < n; ++j) {
      if (run == 1) {
        at.push_back(kvIndex(keysRead[j]));
      } else if (j % run == 0) {
        at.push_back(f.kvAt(keysRead[j]));
      } else {
        SmallVector<Value, 3> first = at[j - j % run];
        at.push_back({first[0], first[1], f.add(first[2], f.idx(j % run))});
      }
    }
    return at;
  }

  /// Scores of keys [k0, k0 + Nb) into st (scaled, masked, and for
  /// pointwise attention already the weights); returns the block's
  /// running max per query vector (softmax).
  SmallVector<Value> scoreBlock(Value k0, bool masked, Value qt, Value st) {
    SmallVector<Value> mInit;
    if (spec.isSoftmax())
      for (int64_t v = 0; v < queryVectors; ++v)
        mInit.push_back(fsplat(-std::numeric_limits<double>::infinity()));
    int64_t step = dRows ? dKeys : keysPerStep;
    return f.forLoop(f.idx(0), f.idx(keyBlock), step, mInit,
                     [&](Value jb, ValueRange mrun) {
                       return scoreStep(k0, jb, step, masked, qt, st, mrun);
                     });
  }

  /// QK^T of `keyAt.size()` keys with the queries in the lanes: per d, QV
  /// vector loads of Q^T and a broadcast of each key feed NJ x QV FMAs.
  SmallVector<Value> dotsAlongLanes(ArrayRef<SmallVector<Value, 3>> keyAt,
                                    Value qt, ArrayRef<Value> keys) {
    int64_t nj = keyAt.size();
    SmallVector<Value> zeros(nj * queryVectors, fsplat(0.0));
    SmallVector<Value> dots = f.forLoop(
        f.idx(0), f.idx(f.headDim), 1, zeros, [&](Value d, ValueRange acc) {
          SmallVector<Value> qv, next;
          for (int64_t v = 0; v < queryVectors; ++v)
            qv.push_back(vector::LoadOp::create(b, vf, qt,
                                                ValueRange{d, laneOffset(v)}));
          for (int64_t j = 0; j < nj; ++j) {
            Value kd = memref::LoadOp::create(
                b, f.keyBuf,
                ValueRange{keyAt[j][0], keyAt[j][1], keyAt[j][2], d});
            Value kb = vector::BroadcastOp::create(b, vf, kd);
            for (int64_t v = 0; v < queryVectors; ++v)
              next.push_back(vector::FMAOp::create(b, kb, qv[v],
                                                   acc[j * queryVectors + v]));
          }
          return next;
        });
    if (!spec.isRelative())
      return dots;
    // Transformer-XL's position term, the relative shift as index
    // arithmetic: the lanes of query vector v at distances M + i - k from
    // key k are contiguous in relBuf's row d, from relPad + M + q0 +
    // v W - k.
    SmallVector<Value> from;
    for (int64_t j = 0; j < nj; ++j)
      for (int64_t v = 0; v < queryVectors; ++v)
        from.push_back(
            f.sub(f.add(f.firstQuery, f.relPad + spec.memoryLen + v * lanes),
                  keys[j]));
    return f.forLoop(
        f.idx(0), f.idx(f.headDim), 1, dots, [&](Value d, ValueRange acc) {
          SmallVector<Value> qv, next;
          for (int64_t v = 0; v < queryVectors; ++v)
            qv.push_back(vector::LoadOp::create(b, vf, qrt,
                                                ValueRange{d, laneOffset(v)}));
          for (int64_t j = 0; j < nj; ++j)
            for (int64_t v = 0; v < queryVectors; ++v) {
              Value r = vector::LoadOp::create(
                  b, vf, f.relBuf,
                  ValueRange{f.head, d, from[j * queryVectors + v]});
              next.push_back(vector::FMAOp::create(b, r, qv[v],
                                                   acc[j * queryVectors + v]));
            }
          return next;
        });
  }

  /// `nj` keys from k0 + jb: QK^T in registers (dotsAlongLanes, or for decode
  /// tiles dotsAlongHeadDim), then the frame's scores.
  SmallVector<Value> scoreStep(Value k0, Value jb, int64_t nj, bool masked,
                               Value qt, Value st, ValueRange mrun) {
    // Keys in the sequence, and their buffer rows (clamped in partial
    // blocks, which may reach past the keys).
    SmallVector<Value> keys, keysRead;
    if (groupedRows)
      prefetchNextKeys(k0, jb, nj);
    for (int64_t j = 0; j < nj; ++j) {
      Value k = f.add(f.add(k0, jb), f.idx(j));
      keys.push_back(k);
      keysRead.push_back(f.keyRow(k, masked));
    }
    SmallVector<SmallVector<Value, 3>> keyAt = kvIndices(keysRead, masked);
    SmallVector<Value> dots = dRows     ? dotsAlongHeadDim(keyAt)
                              : pairs() ? dotsOfPairs(keyAt)
                                        : dotsAlongLanes(keyAt, qt, keys);
    SmallVector<Value> m(mrun.begin(), mrun.end());
    for (int64_t j = 0; j < nj; ++j)
      for (int64_t v = 0; v < queryVectors; ++v) {
        Value s = dots[j * queryVectors + v];
        if (pairs()) // (Q^T of pairs is not scaled)
          s = arith::MulFOp::create(b, s, fsplat(spec.scale));
        QueryRows rows = rowsOf(v);
        if (f.biasBuf)
          s = arith::AddFOp::create(b, s, f.loadBias(rows, keysRead[j]));
        s = f.modifyScore(s, rows, keys[j],
                          laneSlopes.empty() ? Value() : laneSlopes[v]);
        Value ok = masked ? f.allowed(rows, keys[j]) : Value();
        if (masked && f.maskBuf) {
          auto [added, tensorOk] = f.loadMaskTensor(rows, keysRead[j]);
          if (added)
            s = arith::AddFOp::create(b, s, added);
          ok = arith::AndIOp::create(b, ok, tensorOk);
        }
        if (spec.isSoftmax()) {
          s = f.maskedScore(s, ok);
          // The running max as x86's max (s > m ? s : m: one vmaxps, where
          // arith.maximumf's NaN and signed-zero rules take six vector ops
          // on the FMA ports). A NaN score is left out of the max and
          // still makes its row NaN: its weight exp(NaN - m) is NaN
          // (attn-math-approximation keeps exp's NaN; nan-scores.mlir).
          m[v] = arith::SelectOp::create(
              b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, s, m[v]),
              s, m[v]);
        } else {
          s = f.pointwiseWeight(s, ok);
        }
        vector::StoreOp::create(b, s, st,
                                ValueRange{f.add(jb, f.idx(j)), laneOffset(v)});
      }
    return m;
  }

  /// Exponentiates st in place (softmax) and returns the factor alpha that
  /// rescales the output accumulator.
  SmallVector<Value> softmaxBlock(Value st, RowState &state,
                                  ArrayRef<Value> blockMax) {
    SmallVector<Value> alpha, shift;
    for (int64_t v = 0; v < queryVectors; ++v) {
      SoftmaxStep step = f.softmaxStep(state.m[v], blockMax[v]);
      shift.push_back(step.shift);
      alpha.push_back(step.alpha);
      state.m[v] = step.max;
    }
    SmallVector<Value> zeros(queryVectors, fsplat(0.0));
    SmallVector<Value> sums = f.forLoop(
        f.idx(0), f.idx(keyBlock), 1, zeros, [&](Value j, ValueRange acc) {
          SmallVector<Value> next;
          for (int64_t v = 0; v < queryVectors; ++v) {
            SmallVector<Value> at = {j, laneOffset(v)};
            Value s = vector::LoadOp::create(b, vf, st, at);
            // Masked scores are -inf. (UNE: a NaN score is not masked;
            // its weight exp(NaN - m) makes the row NaN.)
            Value ok = arith::CmpFOp::create(
                b, arith::CmpFPredicate::UNE, s,
                fsplat(-std::numeric_limits<double>::infinity()));
            Value p = f.softmaxWeight(s, shift[v], ok);
            vector::StoreOp::create(b, p, st, at);
            next.push_back(arith::AddFOp::create(b, acc[v], p));
          }
          return next;
        });
    for (int64_t v = 0; v < queryVectors; ++v)
      state.l[v] = f.softmaxSum(state.l[v], alpha[v], sums[v]);
    return alpha;
  }

  /// The EG x QV accumulators of O^T's value columns from e0, rescaled by
  /// alpha when given.
  SmallVector<Value> loadOutputGroup(Value ot, Value e0,
                                     ArrayRef<Value> alpha) {
    SmallVector<Value> acc;
    for (int64_t e = 0; e < valueGroup; ++e)
      for (int64_t v = 0; v < queryVectors; ++v) {
        Value o = vector::LoadOp::create(
            b, vf, ot, ValueRange{f.add(e0, e), laneOffset(v)});
        if (!alpha.empty())
          o = arith::MulFOp::create(b, o, alpha[v]);
        acc.push_back(o);
      }
    return acc;
  }

  /// Stores loadOutputGroup's accumulators back.
  void storeOutputGroup(Value ot, Value e0, ArrayRef<Value> acc) {
    for (int64_t e = 0; e < valueGroup; ++e)
      for (int64_t v = 0; v < queryVectors; ++v)
        vector::StoreOp::create(b, acc[e * queryVectors + v], ot,
                                ValueRange{f.add(e0, e), laneOffset(v)});
  }

  /// O^T += V_blk^T P (after rescaling by alpha when given).
  void accumulateValues(Value k0, bool masked, Value st, Value ot,
                        ArrayRef<Value> alpha) {
    f.forLoop(
        f.idx(0), f.idx(f.valueDim), valueGroup, {}, [&](Value e0, ValueRange) {
          SmallVector<Value> acc = loadOutputGroup(ot, e0, alpha);
          SmallVector<Value> sums = f.forLoop(
              f.idx(0), f.idx(keyBlock), 1, acc, [&](Value j, ValueRange a) {
                SmallVector<Value, 3> at =
                    kvIndex(f.keyRow(f.add(k0, j), masked));
                SmallVector<Value> pv, none, next;
                for (int64_t v = 0; v < queryVectors; ++v) {
                  pv.push_back(vector::LoadOp::create(
                      b, vf, st, ValueRange{j, laneOffset(v)}));
                  if (masked)
                    none.push_back(isZeroWeight(b, pv[v]));
                }
                for (int64_t e = 0; e < valueGroup; ++e) {
                  Value ve = memref::LoadOp::create(
                      b, f.valueBuf,
                      ValueRange{at[0], at[1], at[2], f.add(e0, e)});
                  Value vb = vector::BroadcastOp::create(b, vf, ve);
                  for (int64_t v = 0; v < queryVectors; ++v) {
                    Value vs = masked ? dropValue(b, none[v], vb) : vb;
                    next.push_back(vector::FMAOp::create(
                        b, vs, pv[v], a[e * queryVectors + v]));
                  }
                }
                return next;
              });
          storeOutputGroup(ot, e0, sums);
          return SmallVector<Value>();
        });
  }

  //===--------------------------------------------------------------------===//
  // bf16 dot products of pairs
  //===--------------------------------------------------------------------===//

  /// acc + a[2i] b[2i] + a[2i+1] b[2i+1] per f32 lane i (dotBf16Pairs).
  Value dotPairs(Value acc, Value a, Value bv) {
    return dotBf16Pairs(b, dotKind, acc, a, bv);
  }

  /// A 32-bit pair (i32) broadcast to every lane, as bf16 pairs.
  Value broadcastPair(Value word) { return broadcastBf16Pair(b, word, lanes); }

  /// V in pairs of keys (vPairs), packed in parallel over (b, h, pair);
  /// a last key without a partner pairs with zero.
  void packValuePairs() {
    auto type = cast<MemRefType>(f.valueBuf.getType());
    int64_t batch = type.getDimSize(0), heads = type.getDimSize(1),
            keys = type.getDimSize(2), dv = type.getDimSize(3);
    int64_t half = llvm::divideCeil(keys, 2);
    Type i32 = b.getI32Type();
    vPairs = memref::AllocOp::create(
        b, MemRefType::get({batch, heads, half, dv}, i32));
    int64_t w = lanes;
    while (dv % w != 0)
      w /= 2;
    auto bfw = VectorType::get({w}, b.getBF16Type());
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(bfw));
    scf::ParallelOp::create(
        b, ValueRange{f.idx(0), f.idx(0), f.idx(0)},
        ValueRange{f.idx(batch), f.idx(heads), f.idx(half)},
        ValueRange{f.idx(1), f.idx(1), f.idx(1)},
        [&](OpBuilder &, Location, ValueRange ivs) {
          Value lo = f.mul(ivs[2], 2);
          Value hi = f.minIdx(f.add(lo, 1), keys - 1);
          Value paired = f.lt(f.add(lo, 1), keys);
          f.forEach(0, dv, w, [&](Value e) {
            auto load = [&](Value key) -> Value {
              return vector::LoadOp::create(b, bfw, f.valueBuf,
                                            ValueRange{ivs[0], ivs[1], key, e});
            };
            Value second = arith::SelectOp::create(b, paired, load(hi), zero);
            Value both = vector::InterleaveOp::create(b, load(lo), second);
            vector::StoreOp::create(
                b,
                vector::BitCastOp::create(b, VectorType::get({w}, i32), both),
                vPairs, ValueRange{ivs[0], ivs[1], ivs[2], e});
          });
          scf::ReduceOp::create(b);
        });
  }

  /// QK^T of `keyAt.size()` keys from Q^T in pairs: per pair of D, QV
  /// vector loads of Q^T and a broadcast pair of each key feed NJ x QV dot
  /// products of pairs (unscaled).
  SmallVector<Value> dotsOfPairs(ArrayRef<SmallVector<Value, 3>> keyAt) {
    int64_t nj = keyAt.size();
    auto pairType = VectorType::get({2}, b.getBF16Type());
    auto wordType = VectorType::get({1}, b.getI32Type());
    SmallVector<Value> zeros(nj * queryVectors, fsplat(0.0));
    return f.forLoop(
        f.idx(0), f.idx(f.headDim / 2), 1, zeros,
        [&](Value d2, ValueRange acc) {
          SmallVector<Value> qv, next;
          for (int64_t v = 0; v < queryVectors; ++v)
            qv.push_back(vector::LoadOp::create(
                b, vbf, qPairs, ValueRange{d2, f.idx(2 * v * lanes)}));
          for (int64_t j = 0; j < nj; ++j) {
            Value pair =
                vector::LoadOp::create(b, pairType, f.keyBuf,
                                       ValueRange{keyAt[j][0], keyAt[j][1],
                                                  keyAt[j][2], f.mul(d2, 2)});
            Value word = vector::ExtractOp::create(
                b, vector::BitCastOp::create(b, wordType, pair),
                ArrayRef<int64_t>{0});
            Value kb = broadcastPair(word);
            for (int64_t v = 0; v < queryVectors; ++v)
              next.push_back(dotPairs(acc[j * queryVectors + v], qv[v], kb));
          }
          return next;
        });
  }

  /// P (st, f32) into pPairs: rows 2 i and 2 i + 1 rounded to bf16 and
  /// interleaved.
  void pairWeights(Value st) {
    auto bfl = VectorType::get({lanes}, b.getBF16Type());
    f.forEach(0, keyBlock, 2, [&](Value j) {
      for (int64_t v = 0; v < queryVectors; ++v) {
        auto row = [&](Value r) -> Value {
          return arith::TruncFOp::create(
              b, bfl,
              vector::LoadOp::create(b, vf, st, ValueRange{r, laneOffset(v)}));
        };
        Value both = vector::InterleaveOp::create(b, row(j), row(f.add(j, 1)));
        vector::StoreOp::create(b, both, pPairs,
                                ValueRange{f.div(j, 2), f.idx(2 * v * lanes)});
      }
    });
  }

  /// O^T += V_blk^T P with pairs of keys (after rescaling by alpha when
  /// given): per pair, QV vector loads of P's pairs and a broadcast V pair
  /// per value column feed EG x QV dot products of pairs. Pairs past the
  /// keys (a ragged last block) read the last pair: their P is 0.
  void accumulatePairs(Value k0, bool masked, Value ot, ArrayRef<Value> alpha) {
    int64_t lastPair = cast<MemRefType>(vPairs.getType()).getDimSize(2) - 1;
    f.forLoop(
        f.idx(0), f.idx(f.valueDim), valueGroup, {}, [&](Value e0, ValueRange) {
          SmallVector<Value> acc = loadOutputGroup(ot, e0, alpha);
          SmallVector<Value> sums = f.forLoop(
              f.idx(0), f.idx(keyBlock), 2, acc, [&](Value j, ValueRange a) {
                Value pairIdx = f.div(f.add(k0, j), 2);
                if (masked)
                  pairIdx = f.minIdx(pairIdx, lastPair);
                SmallVector<Value> pv, none, next;
                for (int64_t v = 0; v < queryVectors; ++v) {
                  pv.push_back(vector::LoadOp::create(
                      b, vbf, pPairs,
                      ValueRange{f.div(j, 2), f.idx(2 * v * lanes)}));
                  if (masked)
                    none.push_back(isZeroWeight(b, pv[v]));
                }
                for (int64_t e = 0; e < valueGroup; ++e) {
                  Value word = memref::LoadOp::create(
                      b, vPairs,
                      ValueRange{f.batch, f.kvHead, pairIdx, f.add(e0, e)});
                  Value vb = broadcastPair(word);
                  for (int64_t v = 0; v < queryVectors; ++v) {
                    Value ve = masked ? dropValue(b, none[v], vb) : vb;
                    next.push_back(
                        dotPairs(a[e * queryVectors + v], pv[v], ve));
                  }
                }
                return next;
              });
          storeOutputGroup(ot, e0, sums);
          return SmallVector<Value>();
        });
  }
};

} // namespace

mlir::attn::DecodeBlocking
mlir::attn::DecodeBlocking::select(const AttentionDims &dims,
                                   const TargetModel &target,
                                   const TileSizes &tiles) {
  DecodeBlocking d;
  if (!tiles.groupedRows || tiles.queryVectors != 1 ||
      dims.headDim % target.lanes != 0 || dims.valueDim % target.lanes != 0)
    return d;
  d.rows = std::min(tiles.groupedRows, tiles.queryTile(target));
  int64_t budget = std::max<int64_t>(1, (target.registers / 2) / d.rows);
  while (d.keysPerStep * 2 <= budget &&
         tiles.keyBlock % (d.keysPerStep * 2) == 0)
    d.keysPerStep *= 2;
  int64_t vectors = dims.valueDim / target.lanes;
  int64_t groupBudget =
      std::max<int64_t>(1, (target.registers - 1 - d.rows) / (d.rows + 1));
  d.valueVectors = tileVectors(vectors, 1, groupBudget);
  return d;
}

int64_t mlir::attn::pagedKeyRun(int64_t pageSize, int64_t keyBlock,
                                int64_t keys) {
  int64_t run = std::gcd(keys, pageSize);
  return keyBlock % run == 0 ? run : 1;
}

Value mlir::attn::dotBf16Pairs(ImplicitLocOpBuilder &b,
                               TargetModel::Bf16Dot kind, Value acc, Value a,
                               Value bv) {
  auto vf = cast<VectorType>(acc.getType());
  if (kind == TargetModel::Bf16Dot::Native)
    return x86vector::DotBF16Op::create(b, vf, acc, a, bv);
  int64_t lanes = vf.getNumElements();
  SmallVector<int64_t> even, odd;
  for (int64_t i = 0; i < lanes; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  auto half = [&](Value v, ArrayRef<int64_t> mask) -> Value {
    Value picked = vector::ShuffleOp::create(b, v, v, mask);
    return arith::ExtFOp::create(b, vf, picked);
  };
  acc = vector::FMAOp::create(b, half(a, odd), half(bv, odd), acc);
  return vector::FMAOp::create(b, half(a, even), half(bv, even), acc);
}

Value mlir::attn::broadcastBf16Pair(ImplicitLocOpBuilder &b, Value word,
                                    int64_t lanes) {
  auto vi = VectorType::get({lanes}, b.getI32Type());
  return vector::BitCastOp::create(
      b, VectorType::get({2 * lanes}, b.getBF16Type()),
      vector::BroadcastOp::create(b, vi, word));
}

Value mlir::attn::interleaveBf16Pairs(ImplicitLocOpBuilder &b, Value x0,
                                      Value x1) {
  int64_t lanes = cast<VectorType>(x0.getType()).getNumElements();
  auto vbf = VectorType::get({lanes}, b.getBF16Type());
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < lanes; ++i) {
    mask.push_back(i);
    mask.push_back(lanes + i);
  }
  Value pairs =
      vector::ShuffleOp::create(b, arith::TruncFOp::create(b, vbf, x0),
                                arith::TruncFOp::create(b, vbf, x1), mask);
  return vector::BitCastOp::create(b, VectorType::get({lanes}, b.getI32Type()),
                                   pairs);
}

Value mlir::attn::packBf16Pairs(ImplicitLocOpBuilder &b, Value x) {
  int64_t lanes = cast<VectorType>(x.getType()).getNumElements();
  Value rounded =
      arith::TruncFOp::create(b, VectorType::get({lanes}, b.getBF16Type()), x);
  return vector::BitCastOp::create(
      b, VectorType::get({lanes / 2}, b.getI32Type()), rounded);
}

bool mlir::attn::usesBf16Pairs(const KernelSpec &spec,
                               const TargetModel &target,
                               const TileSizes &tiles, bool staticLayout) {
  auto isBf16 = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType().isBF16();
  };
  const AttentionDims &d = spec.dims;
  return target.bf16Dot != TargetModel::Bf16Dot::None && staticLayout &&
         !tiles.groupedRows && isBf16(spec.query) && isBf16(spec.key) &&
         isBf16(spec.value) && !spec.qkNormEps && !spec.paging.pageTable &&
         !spec.isRelative() && !spec.sequences.isPacked() &&
         d.headDim % 2 == 0 && d.valueDim % 2 == 0 && tiles.keyBlock % 2 == 0 &&
         !ShapedType::isDynamic(d.batch) && !ShapedType::isDynamic(d.keyLen);
}

SmallVector<Value> mlir::attn::buildTileKernel(ImplicitLocOpBuilder &b,
                                               const KernelSpec &spec,
                                               const TargetModel &target,
                                               const TileSizes &tiles,
                                               const BlockLayout *layout) {
  CpuTarget cpu;
  KernelFrame frame(b, spec, layout, tiles.queryTile(target), tiles.keyBlock,
                    cpu);
  TileGen gen(frame, target, tiles, layout != nullptr);
  return gen.build();
}
