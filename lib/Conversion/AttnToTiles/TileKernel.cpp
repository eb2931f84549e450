//===- TileKernel.cpp - Fused, tiled attention kernels for CPUs -----------===//

#include "attn-opt/Conversion/AttnToTiles/TileKernel.h"

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>
#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

namespace {

/// What every part of the generator shares: sizes, types, buffers.
struct KernelShared : KernelDims {
  explicit KernelShared(const KernelDims &dims) : KernelDims(dims) {}
  int64_t W, QV, Mr, NJ, Nb, EG;
  Type f32, i32;
  VectorType vf, vi;
  // Buffers.
  Value qM, kM, vM, biasM, gateM, segQM, segKM, outM;
  // Layout and mask tables: offsets are indexed by
  // layout * (numTiles + 1) + tile.
  KernelTables tables;
};

/// Emits code at `b`; nested regions use a copy with their own builder.
struct KernelGen : KernelShared {
  ImplicitLocOpBuilder &b;
  const TileKernelSpec &spec;
  const BlockLayout &layout;

  /// A generator sharing `other`'s state, building with `nb`.
  KernelGen(const KernelGen &other, ImplicitLocOpBuilder &nb)
      : KernelShared(other), b(nb), spec(other.spec), layout(other.layout) {}

  KernelGen(ImplicitLocOpBuilder &b, const TileKernelSpec &spec,
            const TargetModel &target, const TileSizes &tiles,
            const BlockLayout &layout)
      : KernelShared(KernelDims(spec.dims, layout)), b(b), spec(spec),
        layout(layout) {
    W = target.lanes;
    QV = tiles.queryVectors;
    Mr = QV * W;
    NJ = tiles.keysPerStep;
    Nb = tiles.keyBlock;
    EG = tiles.valueGroup;
    f32 = b.getF32Type();
    i32 = b.getI32Type();
    vf = VectorType::get({W}, f32);
    vi = VectorType::get({W}, i32);
  }

  //===--------------------------------------------------------------------===//
  // Small builders
  //===--------------------------------------------------------------------===//

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value fconst(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value fsplat(double v) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vf, b.getF32FloatAttr(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value minIdx(Value x, int64_t bound) {
    return arith::MinSIOp::create(b, x, idx(bound));
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, i32, index);
  }

  /// A read-only buffer of an f32 (converted) or integer tensor.
  Value buffer(Value tensor, bool convert) {
    if (tensor && convert) {
      TensorBuilder tb(b);
      tensor = toF32Tensor(tb, tensor);
    }
    return readOnlyBuffer(b, tensor);
  }

  Value loadIndex(Value mem, Value at) {
    Value v = memref::LoadOp::create(b, mem, ValueRange{at});
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }

  //===--------------------------------------------------------------------===//
  // Setup
  //===--------------------------------------------------------------------===//

  void prepareBuffers() {
    TensorBuilder tb(b);
    qM = buffer(spec.query, true);
    Value key = spec.key;
    if (spec.qkNormEps) // K is normalized once, up front (a prologue loop).
      key = layerNorm(tb, key, *spec.qkNormEps);
    kM = buffer(key, true);
    vM = buffer(spec.value, true);
    biasM = buffer(spec.bias, true);
    gateM = buffer(spec.gate, true);
    segQM = buffer(spec.querySegments, false);
    segKM = buffer(spec.keySegments ? spec.keySegments : spec.querySegments,
                   false);
    outM = memref::AllocOp::create(
        b, MemRefType::get({B, Hq, Lq, Dv}, f32));
    tables = KernelTables::build(b, layout, Lk, spec.mask);
  }

  //===--------------------------------------------------------------------===//
  // The mask of a partial block, one (key, query vector) at a time
  //===--------------------------------------------------------------------===//

  /// i1 vector: may the W queries from `qStart` of head `h` see key `k`?
  Value allowed(Value bIdx, Value h, Value qStart, Value k) {
    Value iota = arith::ConstantOp::create(
        b, DenseElementsAttr::get(
               vi, ArrayRef<int32_t>(llvm::to_vector(llvm::seq<int32_t>(0, W)))));
    Value qVec = arith::AddIOp::create(
        b, vector::BroadcastOp::create(b, vi, toI32(qStart)), iota);
    Value kVec = vector::BroadcastOp::create(b, vi, toI32(k));
    MaskEmitter emitter(
        spec.mask,
        [&](ImplicitLocOpBuilder &eb, const mask::Node &node, Value row,
            Value col) -> Value {
          // Rows past the queries (padding lanes) and columns past the keys
          // (a ragged last block) read the last entry; both are masked.
          Value rows = MaskEmitter::constant(eb, vi, node.rows - 1);
          row = arith::MinSIOp::create(eb, row, rows);
          col = arith::MinSIOp::create(
              eb, col, MaskEmitter::constant(eb, vi, node.cols - 1));
          Value linear = arith::AddIOp::create(
              eb, arith::MulIOp::create(
                      eb, row, MaskEmitter::constant(eb, vi, node.cols)),
              col);
          Value allTrue = arith::ConstantOp::create(
              eb, DenseElementsAttr::get(VectorType::get({W}, eb.getI1Type()),
                                         eb.getBoolAttr(true)));
          Value zeros = MaskEmitter::constant(eb, vi, 0);
          Value bits = vector::GatherOp::create(
              eb, vi, tables.mask.at(&node),
              ValueRange{arith::ConstantIndexOp::create(eb, 0)}, linear,
              allTrue, zeros);
          return arith::CmpIOp::create(eb, arith::CmpIPredicate::ne, bits,
                                       zeros);
        },
        [&](ImplicitLocOpBuilder &eb, Value, Value) -> Value {
          Type idType = cast<MemRefType>(segQM.getType()).getElementType();
          Value pad = arith::ConstantOp::create(eb, eb.getIntegerAttr(idType, -1));
          Value qIds = vector::TransferReadOp::create(
              eb, VectorType::get({W}, idType), segQM, ValueRange{bIdx, qStart},
              pad, ArrayRef<bool>{false});
          Value kClamped = arith::MinSIOp::create(
              eb, k, arith::ConstantIndexOp::create(eb, Lk - 1));
          Value kId =
              memref::LoadOp::create(eb, segKM, ValueRange{bIdx, kClamped});
          Value kIds =
              vector::BroadcastOp::create(eb, VectorType::get({W}, idType), kId);
          return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, qIds,
                                       kIds);
        });
    Value ok = emitter.emitAllowed(b, h, qVec, kVec);
    // Keys past the end of the key sequence (a ragged last block).
    if (Lk % Nb != 0) {
      Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, k,
                                            idx(Lk));
      Value inVec = vector::BroadcastOp::create(
          b, VectorType::get({W}, b.getI1Type()), inRange);
      ok = arith::AndIOp::create(b, ok, inVec);
    }
    return ok;
  }

  //===--------------------------------------------------------------------===//
  // One key block
  //===--------------------------------------------------------------------===//

  struct RowState {
    SmallVector<Value> m, l; // softmax only, QV vectors each
  };

  /// Scores of keys [k0, k0 + Nb) into st (scaled, masked, and for
  /// pointwise attention already the weights); returns the block's
  /// running max per query vector (softmax).
  SmallVector<Value> scoreBlock(Value bIdx, Value h, Value kh, Value q0,
                                Value k0, bool masked, Value qt, Value st) {
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> mInit;
    if (spec.softmax)
      for (int64_t v = 0; v < QV; ++v)
        mInit.push_back(fsplat(negInf));
    auto jbLoop = scf::ForOp::create(
        b, idx(0), idx(Nb), idx(NJ), mInit,
        [&](OpBuilder &nested, Location loc, Value jb, ValueRange mrun) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          SmallVector<Value> next = g.scoreStep(bIdx, h, kh, q0, k0, jb,
                                                masked, qt, st, mrun);
          scf::YieldOp::create(ib, next);
        });
    return SmallVector<Value>(jbLoop.getResults());
  }

  /// NJ keys from k0 + jb: QK^T in registers, then post-processing.
  SmallVector<Value> scoreStep(Value bIdx, Value h, Value kh, Value q0,
                               Value k0, Value jb, bool masked, Value qt,
                               Value st, ValueRange mrun) {
    SmallVector<Value> keys, keysRead;
    for (int64_t j = 0; j < NJ; ++j) {
      Value k = add(add(k0, jb), idx(j));
      keys.push_back(k);
      keysRead.push_back(masked ? minIdx(k, Lk - 1) : k);
    }
    SmallVector<Value> zeros(NJ * QV, fsplat(0.0));
    auto dLoop = scf::ForOp::create(
        b, idx(0), idx(D), idx(1), zeros,
        [&](OpBuilder &nested, Location loc, Value d, ValueRange acc) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> qv, next;
          for (int64_t v = 0; v < QV; ++v)
            qv.push_back(vector::LoadOp::create(
                ib, vf, qt,
                ValueRange{d, arith::ConstantIndexOp::create(ib, v * W)}));
          for (int64_t j = 0; j < NJ; ++j) {
            Value kd = memref::LoadOp::create(
                ib, kM, ValueRange{bIdx, kh, keysRead[j], d});
            Value kb = vector::BroadcastOp::create(ib, vf, kd);
            for (int64_t v = 0; v < QV; ++v)
              next.push_back(
                  vector::FMAOp::create(ib, kb, qv[v], acc[j * QV + v]));
          }
          scf::YieldOp::create(ib, next);
        });
    SmallVector<Value> m(mrun.begin(), mrun.end());
    for (int64_t j = 0; j < NJ; ++j)
      for (int64_t v = 0; v < QV; ++v) {
        Value s = dLoop.getResult(j * QV + v);
        Value qStart = add(q0, idx(v * W));
        if (gateBiasReady())
          s = arith::AddFOp::create(b, s, biasVector(bIdx, h, qStart,
                                                     keysRead[j]));
        Value ok = masked ? allowed(bIdx, h, qStart, keys[j]) : Value();
        if (spec.softmax) {
          if (ok)
            s = arith::SelectOp::create(
                b, ok, s, fsplat(-std::numeric_limits<double>::infinity()));
          m[v] = arith::MaximumFOp::create(b, m[v], s);
        } else {
          s = applyPointwiseFn(b, spec.fn, s);
          s = arith::MulFOp::create(b, s, fsplat(spec.lengthFactor));
          if (ok)
            s = arith::SelectOp::create(b, ok, s, fsplat(0.0));
        }
        vector::StoreOp::create(b, s, st,
                                ValueRange{add(jb, idx(j)), idx(v * W)});
      }
    return m;
  }

  bool gateBiasReady() const { return static_cast<bool>(biasM); }

  /// bias[b', h', q .. q + W, k] as a vector along the queries.
  Value biasVector(Value bIdx, Value h, Value qStart, Value k) {
    auto shape = cast<MemRefType>(biasM.getType()).getShape();
    Value bb = shape[0] == 1 ? idx(0) : bIdx;
    Value bh = shape[1] == 1 ? idx(0) : h;
    AffineMap along = AffineMap::get(4, 0, b.getAffineDimExpr(2));
    return vector::TransferReadOp::create(b, vf, biasM,
                                          ValueRange{bb, bh, qStart, k},
                                          fconst(0.0), along,
                                          ArrayRef<bool>{false});
  }

  /// Exponentiates st in place (softmax) and returns the updated state and
  /// the factor alpha that rescales the output accumulator.
  SmallVector<Value> softmaxBlock(Value st, RowState &state,
                                  ArrayRef<Value> blockMax) {
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> alpha, mSafe;
    for (int64_t v = 0; v < QV; ++v) {
      Value mNew = arith::MaximumFOp::create(b, state.m[v], blockMax[v]);
      Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                         fsplat(negInf));
      Value safe = arith::SelectOp::create(b, none, fsplat(0.0), mNew);
      mSafe.push_back(safe);
      alpha.push_back(math::ExpOp::create(
          b, arith::SubFOp::create(b, state.m[v], safe)));
      state.m[v] = mNew;
    }
    SmallVector<Value> zeros(QV, fsplat(0.0));
    auto loop = scf::ForOp::create(
        b, idx(0), idx(Nb), idx(1), zeros,
        [&](OpBuilder &nested, Location loc, Value j, ValueRange sums) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          SmallVector<Value> next;
          for (int64_t v = 0; v < QV; ++v) {
            SmallVector<Value> at = {j, g.idx(v * W)};
            Value s = vector::LoadOp::create(ib, vf, st, at);
            Value isMasked = arith::CmpFOp::create(
                ib, arith::CmpFPredicate::OEQ, s, g.fsplat(negInf));
            Value p = math::ExpOp::create(
                ib, arith::SubFOp::create(ib, s, mSafe[v]));
            p = arith::SelectOp::create(ib, isMasked, g.fsplat(0.0), p);
            vector::StoreOp::create(ib, p, st, at);
            next.push_back(arith::AddFOp::create(ib, sums[v], p));
          }
          scf::YieldOp::create(ib, next);
        });
    for (int64_t v = 0; v < QV; ++v)
      state.l[v] = arith::AddFOp::create(
          b, arith::MulFOp::create(b, state.l[v], alpha[v]),
          loop.getResult(v));
    return alpha;
  }

  /// O^T += V_blk^T P (after rescaling by alpha when given).
  void accumulateValues(Value bIdx, Value kh, Value k0, bool masked, Value st,
                        Value ot, ArrayRef<Value> alpha) {
    scf::ForOp::create(
        b, idx(0), idx(Dv), idx(EG), ValueRange{},
        [&](OpBuilder &nested, Location loc, Value e0, ValueRange) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          SmallVector<Value> acc;
          for (int64_t e = 0; e < EG; ++e)
            for (int64_t v = 0; v < QV; ++v) {
              Value o = vector::LoadOp::create(
                  ib, vf, ot, ValueRange{g.add(e0, g.idx(e)), g.idx(v * W)});
              if (!alpha.empty())
                o = arith::MulFOp::create(ib, o, alpha[v]);
              acc.push_back(o);
            }
          auto jLoop = scf::ForOp::create(
              ib, g.idx(0), g.idx(Nb), g.idx(1), acc,
              [&](OpBuilder &n2, Location l2, Value j, ValueRange a) {
                ImplicitLocOpBuilder jb(l2, n2);
                KernelGen g2(*this, jb);
                Value k = g2.add(k0, j);
                if (masked)
                  k = g2.minIdx(k, Lk - 1);
                SmallVector<Value> pv, next;
                for (int64_t v = 0; v < QV; ++v)
                  pv.push_back(vector::LoadOp::create(
                      jb, vf, st, ValueRange{j, g2.idx(v * W)}));
                for (int64_t e = 0; e < EG; ++e) {
                  Value ve = memref::LoadOp::create(
                      jb, vM, ValueRange{bIdx, kh, k, g2.add(e0, g2.idx(e))});
                  Value vb = vector::BroadcastOp::create(jb, vf, ve);
                  for (int64_t v = 0; v < QV; ++v)
                    next.push_back(vector::FMAOp::create(jb, vb, pv[v],
                                                         a[e * QV + v]));
                }
                scf::YieldOp::create(jb, next);
              });
          for (int64_t e = 0; e < EG; ++e)
            for (int64_t v = 0; v < QV; ++v)
              vector::StoreOp::create(
                  ib, jLoop.getResult(e * QV + v), ot,
                  ValueRange{g.add(e0, g.idx(e)), g.idx(v * W)});
          scf::YieldOp::create(ib);
        });
  }

  /// Processes key block `kb`; `state` holds m and l for softmax.
  void block(Value bIdx, Value h, Value kh, Value q0, Value kb, bool masked,
             Value qt, Value st, Value ot, RowState &state) {
    Value k0 = mul(kb, idx(Nb));
    SmallVector<Value> blockMax =
        scoreBlock(bIdx, h, kh, q0, k0, masked, qt, st);
    SmallVector<Value> alpha;
    if (spec.softmax)
      alpha = softmaxBlock(st, state, blockMax);
    accumulateValues(bIdx, kh, k0, masked, st, ot, alpha);
  }

  /// The smallest and largest segment id of `count` positions from `start`
  /// of row `bIdx` (positions past `length` read the last one).
  std::pair<Value, Value> idRange(Value ids, Value bIdx, Value start,
                                  int64_t count, int64_t length) {
    Value first = memref::LoadOp::create(
        b, ids, ValueRange{bIdx, minIdx(start, length - 1)});
    auto loop = scf::ForOp::create(
        b, idx(1), idx(count), idx(1), ValueRange{first, first},
        [&](OpBuilder &nested, Location loc, Value i, ValueRange mm) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          Value id = memref::LoadOp::create(
              ib, ids, ValueRange{bIdx, g.minIdx(g.add(start, i), length - 1)});
          scf::YieldOp::create(
              ib, ValueRange{arith::MinSIOp::create(ib, mm[0], id),
                             arith::MaxSIOp::create(ib, mm[1], id)});
        });
    return {loop.getResult(0), loop.getResult(1)};
  }

  /// Visits the blocks listed in [offsets[at], offsets[at + 1]) of `list`.
  /// With a segment-bound mask, `queryIds` is the tile's id range and blocks
  /// whose key ids cannot match are skipped.
  void visitBlocks(Value offsets, Value list, Value at, bool masked,
                   Value bIdx, Value h, Value kh, Value q0, Value qt, Value st,
                   Value ot, RowState &state,
                   std::optional<std::pair<Value, Value>> queryIds) {
    Value begin = loadIndex(offsets, at);
    Value end = loadIndex(offsets, add(at, idx(1)));
    SmallVector<Value> init(state.m);
    init.append(state.l);
    auto loop = scf::ForOp::create(
        b, begin, end, idx(1), init,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange carried) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          Value kb = g.loadIndex(list, i);
          auto visit = [&](KernelGen &x) {
            RowState s;
            s.m.assign(carried.begin(), carried.begin() + state.m.size());
            s.l.assign(carried.begin() + state.m.size(), carried.end());
            x.block(bIdx, h, kh, q0, kb, masked, qt, st, ot, s);
            SmallVector<Value> next(s.m);
            next.append(s.l);
            return next;
          };
          if (!queryIds) {
            scf::YieldOp::create(ib, visit(g));
            return;
          }
          auto [kMin, kMax] = g.idRange(segKM, bIdx, g.mul(kb, g.idx(Nb)), Nb,
                                        Lk);
          Value overlap = arith::AndIOp::create(
              ib,
              arith::CmpIOp::create(ib, arith::CmpIPredicate::sge,
                                    queryIds->second, kMin),
              arith::CmpIOp::create(ib, arith::CmpIPredicate::sge, kMax,
                                    queryIds->first));
          auto ifOp = scf::IfOp::create(
              ib, overlap,
              [&](OpBuilder &n2, Location l2) {
                ImplicitLocOpBuilder xb(l2, n2);
                KernelGen x(*this, xb);
                scf::YieldOp::create(xb, visit(x));
              },
              [&](OpBuilder &n2, Location l2) {
                ImplicitLocOpBuilder xb(l2, n2);
                scf::YieldOp::create(xb, carried);
              });
          scf::YieldOp::create(ib, ifOp.getResults());
        });
    for (size_t v = 0; v < state.m.size(); ++v) {
      state.m[v] = loop.getResult(v);
      state.l[v] = loop.getResult(state.m.size() + v);
    }
  }

  //===--------------------------------------------------------------------===//
  // One query tile
  //===--------------------------------------------------------------------===//

  void tile(Value bIdx, Value h, Value t) {
    // Zigzag order: tiles 0, n-1, 1, n-2, ... so that contiguous shares of
    // the iteration space get as much causal work as each other.
    Value half = arith::DivUIOp::create(b, t, idx(2));
    Value odd = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne, arith::RemUIOp::create(b, t, idx(2)),
        idx(0));
    Value tileIdx = arith::SelectOp::create(
        b, odd, arith::SubIOp::create(b, idx(numTiles - 1), half), half);
    Value q0 = mul(tileIdx, idx(Mr));
    Value kh = arith::DivUIOp::create(b, h, idx(G));
    Value lay = loadIndex(tables.headLayout, h);
    Value at = add(mul(lay, idx(numTiles + 1)), tileIdx);

    // Scratch tiles of this iteration. Heap buffers rather than allocas:
    // allocas inside an OpenMP work-sharing loop need an alloca scope that
    // the later control-flow lowering cannot keep valid. One allocation per
    // tile is negligible next to the tile's work; the buffer deallocation
    // pipeline frees them at the end of the iteration.
    Value qt = memref::AllocOp::create(b, MemRefType::get({D, Mr}, f32));
    Value st = memref::AllocOp::create(b, MemRefType::get({Nb, Mr}, f32));
    Value ot = memref::AllocOp::create(b, MemRefType::get({Dv, Mr}, f32));
    Value lbuf = memref::AllocOp::create(b, MemRefType::get({Mr}, f32));

    loadQueryTile(bIdx, h, q0, qt);
    scf::ForOp::create(b, idx(0), idx(Dv), idx(1), ValueRange{},
                       [&](OpBuilder &nested, Location loc, Value e,
                           ValueRange) {
                         ImplicitLocOpBuilder ib(loc, nested);
                         KernelGen g(*this, ib);
                         for (int64_t v = 0; v < QV; ++v)
                           vector::StoreOp::create(
                               ib, g.fsplat(0.0), ot,
                               ValueRange{e, g.idx(v * W)});
                         scf::YieldOp::create(ib);
                       });

    RowState state;
    if (spec.softmax)
      for (int64_t v = 0; v < QV; ++v) {
        state.m.push_back(fsplat(-std::numeric_limits<double>::infinity()));
        state.l.push_back(fsplat(0.0));
      }
    std::optional<std::pair<Value, Value>> queryIds;
    if (spec.segmentsBound)
      queryIds = idRange(segQM, bIdx, q0, Mr, Lq);
    visitBlocks(tables.fullOffsets, tables.fullBlocks, at, /*masked=*/false, bIdx, h, kh, q0, qt,
                st, ot, state, queryIds);
    visitBlocks(tables.partialOffsets, tables.partialBlocks, at,
                /*masked=*/true, bIdx, h, kh, q0, qt,
                st, ot, state, queryIds);
    for (int64_t v = 0; v < QV; ++v)
      vector::StoreOp::create(b, spec.softmax ? state.l[v] : fsplat(1.0),
                              lbuf, ValueRange{idx(v * W)});
    storeOutputTile(bIdx, h, q0, ot, lbuf);
  }

  /// qt[d, r] = scale * (normalized) q[b, h, q0 + r, d]; rows past Lq
  /// repeat the last row (their results are never stored).
  void loadQueryTile(Value bIdx, Value h, Value q0, Value qt) {
    scf::ForOp::create(
        b, idx(0), idx(Mr), idx(1), ValueRange{},
        [&](OpBuilder &nested, Location loc, Value r, ValueRange) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          Value row = g.minIdx(g.add(q0, r), Lq - 1);
          auto readQ = [&](ImplicitLocOpBuilder &x, Value d) -> Value {
            return memref::LoadOp::create(x, qM, ValueRange{bIdx, h, row, d});
          };
          Value shift = g.fconst(0.0), factor = g.fconst(spec.scale);
          if (spec.qkNormEps) {
            // Layer norm of the row: mean, then variance, over D.
            auto sumOver = [&](function_ref<Value(ImplicitLocOpBuilder &,
                                                  Value)> term) {
              auto loop = scf::ForOp::create(
                  ib, g.idx(0), g.idx(D), g.idx(1), ValueRange{g.fconst(0.0)},
                  [&](OpBuilder &n2, Location l2, Value d, ValueRange acc) {
                    ImplicitLocOpBuilder xb(l2, n2);
                    scf::YieldOp::create(
                        xb, ValueRange{arith::AddFOp::create(xb, acc[0],
                                                             term(xb, d))});
                  });
              return loop.getResult(0);
            };
            Value invD = g.fconst(1.0 / D);
            Value mean = arith::MulFOp::create(
                ib, sumOver([&](ImplicitLocOpBuilder &x, Value d) {
                  return readQ(x, d);
                }),
                invD);
            Value var = arith::MulFOp::create(
                ib, sumOver([&](ImplicitLocOpBuilder &x, Value d) -> Value {
                  Value c = arith::SubFOp::create(x, readQ(x, d), mean);
                  return arith::MulFOp::create(x, c, c);
                }),
                invD);
            Value inv = math::RsqrtOp::create(
                ib, arith::AddFOp::create(ib, var, g.fconst(*spec.qkNormEps)));
            shift = mean;
            factor = arith::MulFOp::create(ib, inv, g.fconst(spec.scale));
          }
          scf::ForOp::create(
              ib, g.idx(0), g.idx(D), g.idx(1), ValueRange{},
              [&](OpBuilder &n2, Location l2, Value d, ValueRange) {
                ImplicitLocOpBuilder xb(l2, n2);
                Value x = arith::SubFOp::create(xb, readQ(xb, d), shift);
                x = arith::MulFOp::create(xb, x, factor);
                memref::StoreOp::create(xb, x, qt, ValueRange{d, r});
                scf::YieldOp::create(xb);
              });
          scf::YieldOp::create(ib);
        });
  }

  /// out[b, h, q0 + r, e] = ot[e, r] / l[r] (0 when l = 0), times the gate.
  void storeOutputTile(Value bIdx, Value h, Value q0, Value ot, Value lbuf) {
    scf::ForOp::create(
        b, idx(0), idx(Mr), idx(1), ValueRange{},
        [&](OpBuilder &nested, Location loc, Value r, ValueRange) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          Value row = g.add(q0, r);
          Value inside = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt,
                                               row, g.idx(Lq));
          scf::IfOp::create(ib, inside, [&](OpBuilder &n2, Location l2) {
            ImplicitLocOpBuilder xb(l2, n2);
            KernelGen g2(*this, xb);
            Value l = memref::LoadOp::create(xb, lbuf, ValueRange{r});
            Value positive = arith::CmpFOp::create(
                xb, arith::CmpFPredicate::OGT, l, g2.fconst(0.0));
            Value inv = arith::SelectOp::create(
                xb, positive, arith::DivFOp::create(xb, g2.fconst(1.0), l),
                g2.fconst(0.0));
            scf::ForOp::create(
                xb, g2.idx(0), g2.idx(Dv), g2.idx(1), ValueRange{},
                [&](OpBuilder &n3, Location l3, Value e, ValueRange) {
                  ImplicitLocOpBuilder eb(l3, n3);
                  Value o = memref::LoadOp::create(eb, ot, ValueRange{e, r});
                  o = arith::MulFOp::create(eb, o, inv);
                  if (gateM)
                    o = arith::MulFOp::create(
                        eb, o,
                        memref::LoadOp::create(eb, gateM,
                                               ValueRange{bIdx, h, row, e}));
                  memref::StoreOp::create(eb, o, outM,
                                          ValueRange{bIdx, h, row, e});
                  scf::YieldOp::create(eb);
                });
            scf::YieldOp::create(xb);
          });
          scf::YieldOp::create(ib);
        });
  }

  Value build() {
    prepareBuffers();
    SmallVector<Value> lbs = {idx(0), idx(0), idx(0)};
    SmallVector<Value> ubs = {idx(B), idx(Hq), idx(numTiles)};
    SmallVector<Value> steps = {idx(1), idx(1), idx(1)};
    scf::ParallelOp::create(
        b, lbs, ubs, steps,
        [&](OpBuilder &nested, Location loc, ValueRange ivs) {
          ImplicitLocOpBuilder ib(loc, nested);
          KernelGen g(*this, ib);
          g.tile(ivs[0], ivs[1], ivs[2]);
          scf::ReduceOp::create(ib);
        });
    auto outType = RankedTensorType::get({B, Hq, Lq, Dv}, f32);
    Value out = bufferization::ToTensorOp::create(b, outType, outM,
                                                  /*restrict=*/true,
                                                  /*writable=*/true);
    TensorBuilder tb(b);
    return fromF32Tensor(
        tb, out, cast<RankedTensorType>(spec.resultType).getElementType());
  }
};

} // namespace

LayoutTables mlir::attn::flattenLayout(const BlockLayout &layout,
                                      int64_t keyLen) {
  LayoutTables t;
  int64_t numTiles = layout.getNumQueryBlocks();
  bool ragged = keyLen % layout.getBlockK() != 0;
  int32_t lastBlock = layout.getNumKeyBlocks() - 1;
  for (const BlockLayout::Compressed &c : layout.getLayouts()) {
    for (int64_t r = 0; r < numTiles; ++r) {
      t.fullOffsets.push_back(t.fullBlocks.size());
      t.partialOffsets.push_back(t.partialBlocks.size());
      auto fullBegin = c.fullBlocks.begin() + c.fullOffsets[r];
      auto fullEnd = c.fullBlocks.begin() + c.fullOffsets[r + 1];
      for (auto it = fullBegin; it != fullEnd; ++it)
        if (!ragged || *it != lastBlock)
          t.fullBlocks.push_back(*it);
      for (int32_t i = c.partialOffsets[r]; i < c.partialOffsets[r + 1]; ++i)
        t.partialBlocks.push_back(c.partialBlocks[i]);
      if (ragged && std::binary_search(fullBegin, fullEnd, lastBlock))
        t.partialBlocks.push_back(lastBlock);
    }
    t.fullOffsets.push_back(t.fullBlocks.size());
    t.partialOffsets.push_back(t.partialBlocks.size());
  }
  for (int64_t h = 0; h < layout.getNumHeads(); ++h)
    t.headLayout.push_back(layout.getLayoutOfHead(h));
  return t;
}

KernelDims::KernelDims(const AttentionDims &d, const BlockLayout &layout)
    : D(d.headDim), Dv(d.valueDim), G(d.groupSize()), Lq(d.queryLen),
      Lk(d.keyLen), B(d.batch), Hq(d.queryHeads),
      numTiles(layout.getNumQueryBlocks()) {}

Value mlir::attn::readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return Value();
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

KernelTables KernelTables::build(ImplicitLocOpBuilder &b,
                                 const BlockLayout &layout, int64_t keyLen,
                                 const mask::Mask &mask) {
  auto table = [&](ArrayRef<int32_t> values) {
    SmallVector<int32_t> v(values.begin(), values.end());
    if (v.empty())
      v.push_back(0);
    auto type = RankedTensorType::get({static_cast<int64_t>(v.size())},
                                      b.getI32Type());
    return readOnlyBuffer(
        b, arith::ConstantOp::create(
               b, DenseElementsAttr::get(type, ArrayRef<int32_t>(v))));
  };
  KernelTables t;
  LayoutTables flat = flattenLayout(layout, keyLen);
  t.fullOffsets = table(flat.fullOffsets);
  t.fullBlocks = table(flat.fullBlocks);
  t.partialOffsets = table(flat.partialOffsets);
  t.partialBlocks = table(flat.partialBlocks);
  t.headLayout = table(flat.headLayout);
  std::function<void(const mask::Node &)> collect = [&](const mask::Node &n) {
    if (n.kind == mask::Node::Kind::Table)
      t.mask[&n] = table(SmallVector<int32_t>(n.table.begin(), n.table.end()));
    for (const mask::Node &c : n.children)
      collect(c);
  };
  collect(mask.getRoot());
  return t;
}

bool mlir::attn::isSegmentBound(MaskPatternAttrInterface pattern) {
  if (isa_and_nonnull<SegmentsAttr>(pattern))
    return true;
  if (auto inter = dyn_cast_or_null<IntersectAttr>(pattern))
    return llvm::any_of(inter.getPatterns(), [](MaskPatternAttrInterface p) {
      return isa<SegmentsAttr>(p);
    });
  return false;
}

template <typename OpTy>
static TileKernelSpec specOf(OpTy op) {
  AttentionDims d = op.getDims();
  TileKernelSpec spec;
  spec.query = op.getQuery();
  spec.key = op.getKey();
  spec.value = op.getValue();
  spec.bias = op.getBias();
  spec.gate = op.getGate();
  spec.querySegments = op.getQuerySegments();
  spec.keySegments = op.getEffectiveKeySegments();
  spec.dims = d;
  spec.scale = op.getEffectiveScale();
  if (std::optional<APFloat> eps = op.getQkNormEps())
    spec.qkNormEps = eps->convertToDouble();
  spec.softmax = isa<SoftmaxAttr>(op.getNormalizer());
  if (auto p = dyn_cast<PointwiseAttr>(op.getNormalizer())) {
    spec.fn = p.getFn();
    spec.lengthFactor = std::pow(static_cast<double>(d.keyLen),
                                 -p.getAlpha().convertToDouble());
  }
  spec.mask = op.getMask();
  spec.segmentsBound = isSegmentBound(op.getPatternAttr());
  spec.resultType = op.getType();
  return spec;
}

TileKernelSpec mlir::attn::kernelSpecOf(Operation *op) {
  if (auto a = dyn_cast<AttentionOp>(op))
    return specOf(a);
  return specOf(cast<BlockSparseAttentionOp>(op));
}

Value mlir::attn::buildTileKernel(ImplicitLocOpBuilder &b,
                                  const TileKernelSpec &spec,
                                  const TargetModel &target,
                                  const TileSizes &tiles,
                                  const BlockLayout &layout) {
  KernelGen gen(b, spec, target, tiles, layout);
  return gen.build();
}
