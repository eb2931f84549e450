//===- BackwardKernel.cpp - Fused backward pass of attention on CPUs ------===//
//
// attn-flash-backward: attn.attention_grad of softmax and pointwise
// attention as two fused passes over the compile-time block layout
// (FlashAttention-2's scheme, no atomics; see the pass description):
//
//   prologue (per batch row and head): Q and dO copied zero-padded to whole
//     query blocks, row-major and transposed; softmax: LSE (+inf padding)
//     and D = rowsum(dO * O); K and V zero-padded to whole key blocks
//   pass A, per (batch row, key/value head, key block): for each query head
//     of the group and each query block of the transposed layout's row
//       block step: S^T = K_j Q_i^T, P^T, dP^T = V_j dO_i^T, dS^T
//       dV_j += P^T dO_i, dK_j += dS^T Q_i           (registers x lanes)
//     dK_j, dV_j stored
//   pass B, per (batch row, query head, query block): for each key block
//     of the layout's row: the block step again, dQ_i += dS K_j; stored.
//
// Every output element has one writer and a fixed order of summation, so
// the gradients are the same bits for any thread count. Queries sit in
// vector lanes in the block step (as in the forward kernels: the mask
// emitter decides a vector of queries against one key); every product is
// one register-blocked loop (`gemm`): a row of `mr` broadcast scalars of A
// times `nv` vectors of a row of B. Zero padding makes padded rows
// contribute nothing: a padded query has dO = 0 (and P = 0 for softmax),
// a padded key K = V = 0, and the padded rows' results are not stored.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"
#include "attn-opt/Conversion/Capabilities.h"
#include "attn-opt/Conversion/Passes.h"

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Mask/BlockLayout.h"
#include "attn-opt/Support/TileSizes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>
#include <numeric>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFLASHBACKWARD
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

const Capability &mlir::attn::getFusedBackwardCapability() {
  // Static shapes and a compile-time layout of closed-form patterns; no
  // modifier. f16 and bf16 are read into f32 (the sums stay f32).
  FeatureSet closedForm =
      getClosedFormPatterns() |
      FeatureSet{Feature::Scale,        Feature::Layout,
                 Feature::GroupedHeads, Feature::UnequalLengths,
                 Feature::F16,          Feature::Bf16};
  static const Capability capability = forGradients(
      {"fused-backward",
       "attn-flash-backward",
       "the fused CPU backward: FlashAttention-2's two passes over the block "
       "layout",
       {closedForm | FeatureSet{Feature::Softmax},
        closedForm | FeatureSet{Feature::Pointwise}},
       {}});
  return capability;
}

namespace {

/// The features of `op`'s attention, with `lse` for a log-sum-exp
/// cotangent (grad_lse) rather than for the forward's result.
FeatureSet gradientFeatures(AttentionGradOp op) {
  FeatureSet features = op.getForwardOp().getFeatures();
  features.erase(Feature::Lse);
  if (op.getGradLse())
    features.insert(Feature::Lse);
  return features;
}

/// Why attn-flash-backward leaves `op` to the reference gradient, or "".
std::string unsupportedReason(AttentionGradOp op) {
  if (std::optional<Refusal> r =
          getFusedBackwardCapability().refusal(gradientFeatures(op)))
    return r->text();
  if (!BlockLayout::fitsAtCompileTime(op.getForwardOp().getPatternMask()))
    return "a layout too large for compile time";
  return "";
}

/// The kernel of one attn.attention_grad.
class BackwardGen : public KernelArith {
public:
  BackwardGen(ImplicitLocOpBuilder &b, AttentionGradOp op,
              const TargetModel &target, Value output, Value lse)
      : KernelArith(b), op(op), p(op.getForwardOp().getProblem()),
        mask(op.getForwardOp().getPatternMask()), lanes(target.lanes),
        registers(target.registers), output(output), lse(lse) {
    const AttentionDims &d = p.dims;
    batch = d.batch;
    heads = d.queryHeads;
    kvHeads = d.kvHeads;
    group = d.groupSize();
    lq = d.queryLen;
    lk = d.keyLen;
    dim = d.headDim;
    vdim = d.valueDim;
    TileSizes tiles = TileSizes::backward(target);
    queryVectors = tiles.queryVectors;
    blockQ = tiles.queryTile(target);
    blockK = tiles.keyBlock;
    lqp = llvm::alignTo(lq, blockQ);
    dimp = llvm::alignTo(dim, lanes);
    vdimp = llvm::alignTo(vdim, lanes);
    lkp = llvm::alignTo(lk, blockK);
    softmax = p.isSoftmax();
    pointwise = dyn_cast<PointwiseAttr>(p.normalizer);
    f32 = b.getF32Type();
    vf = VectorType::get({lanes}, f32);
    vi = VectorType::get({lanes}, b.getI32Type());
  }

  int64_t getBlockQ() const { return blockQ; }
  int64_t getBlockK() const { return blockK; }

  /// The gradients of query, key and value.
  /// Key/value-head tasks from which one pass computes every gradient
  /// (fewer leave threads idle: two passes then).
  static constexpr int64_t kMinHeadTasks = 4;

  /// True if one pass over (batch row, key/value head) computes dQ too.
  bool onePass() const { return batch * kvHeads >= kMinHeadTasks; }

  /// The gradients of query, key and value.
  SmallVector<Value> build(const BlockLayout &layout) {
    prologue();
    KernelTables columns =
        KernelTables::build(b, layout.transposed(), lq, mask);
    dq = alloc({batch, heads, lq, dim});
    dk = alloc({batch, kvHeads, lk, dim});
    dv = alloc({batch, kvHeads, lk, vdim});
    if (onePass()) {
      // dQ summed in the task of its key/value head, key block by key
      // block: five products per block, none recomputed.
      // (Each task sums the rows of its heads only.)
      Value dqAcc = alloc({batch, heads, lqp, dimp});
      parallel({batch, kvHeads}, [&](ValueRange ivs) {
        headTask(ivs[0], ivs[1], columns, layout.getNumKeyBlocks(), dqAcc);
      });
      return {toTensor(dq), toTensor(dk), toTensor(dv)};
    }
    KernelTables rows = KernelTables::build(b, layout, lk, mask);
    parallel({batch, kvHeads, lkp / blockK}, [&](ValueRange ivs) {
      keyBlockTask(ivs[0], ivs[1], ivs[2], columns, layout.getNumKeyBlocks(),
                   Value());
    });
    parallel({batch, heads, lqp / blockQ}, [&](ValueRange ivs) {
      queryBlockTask(ivs[0], ivs[1], ivs[2], rows, layout.getNumQueryBlocks());
    });
    return {toTensor(dq), toTensor(dk), toTensor(dv)};
  }

private:
  AttentionGradOp op;
  AttentionProblem p;
  mask::Mask mask;
  int64_t lanes, registers;
  Value output, lse;
  int64_t batch, heads, kvHeads, group, lq, lk, dim, vdim;
  /// The head dims padded to whole vectors.
  int64_t dimp, vdimp;
  int64_t queryVectors, blockQ, blockK, lqp, lkp;
  bool softmax;
  PointwiseAttr pointwise;
  Type f32;
  VectorType vf, vi;
  /// Padded copies: Q and dO rows and transposed, K and V rows; softmax's
  /// LSE and D rows. The gradients' buffers.
  Value qp, qt, dop, dot, kp, vp, lsep, dvec;
  Value dq, dk, dv;

  //===--------------------------------------------------------------------===//
  // Small builders
  //===--------------------------------------------------------------------===//

  Value alloc(ArrayRef<int64_t> shape) {
    return memref::AllocOp::create(b, MemRefType::get(shape, f32),
                                   b.getI64IntegerAttr(64));
  }
  /// A gradient buffer (f32) as a tensor of the operands' element type.
  Value toTensor(Value buf) {
    auto type = cast<MemRefType>(buf.getType());
    Value t = bufferization::ToTensorOp::create(
        b, RankedTensorType::get(type.getShape(), f32), buf,
        /*restrict=*/true, /*writable=*/true);
    if (p.elementType.isF32())
      return t;
    TensorBuilder tb(b);
    return fromF32Tensor(tb, t, p.elementType);
  }
  Value load(Value mem, ValueRange at) {
    return memref::LoadOp::create(b, mem, at);
  }
  void store(Value v, Value mem, ValueRange at) {
    memref::StoreOp::create(b, v, mem, at);
  }
  Value vload(Value mem, ValueRange at) {
    return vector::LoadOp::create(b, vf, mem, at);
  }
  void vstore(Value v, Value mem, ValueRange at) {
    vector::StoreOp::create(b, v, mem, at);
  }
  Value fsplat(double v) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vf, b.getF32FloatAttr(v)));
  }

  void parallel(ArrayRef<int64_t> ubs, function_ref<void(ValueRange)> body) {
    SmallVector<Value> lbs, ups, steps;
    for (int64_t u : ubs) {
      lbs.push_back(idx(0));
      ups.push_back(idx(u));
      steps.push_back(idx(1));
    }
    scf::ParallelOp::create(b, lbs, ups, steps,
                            [&](OpBuilder &, Location, ValueRange ivs) {
                              body(ivs);
                              scf::ReduceOp::create(b);
                            });
  }
  void forRange(Value lb, Value ub, function_ref<void(Value)> body) {
    scf::ForOp::create(b, lb, ub, idx(1), ValueRange{},
                       [&](OpBuilder &, Location, Value i, ValueRange) {
                         body(i);
                         scf::YieldOp::create(b);
                       });
  }
  SmallVector<Value>
  forLoop(Value lb, Value ub, int64_t step, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto loop = scf::ForOp::create(
        b, lb, ub, idx(step), init,
        [&](OpBuilder &, Location, Value i, ValueRange iter) {
          scf::YieldOp::create(b, body(i, iter));
        });
    return loop.getResults();
  }

  //===--------------------------------------------------------------------===//
  // The register-blocked product
  //===--------------------------------------------------------------------===//

  /// Rows of a register tile of `vectors` vectors per row: what leaves
  /// registers for the row of B and a broadcast.
  int64_t rowsFor(int64_t vectors) const {
    return std::max<int64_t>(1, (registers - vectors - 1) / vectors);
  }

  using ScalarAt = function_ref<Value(Value m, Value k)>;
  using VectorAt = function_ref<Value(Value k, Value n)>;
  using TileInit = function_ref<Value(Value m, Value n)>;
  using TileFinish = function_ref<void(Value m, Value n, Value acc)>;

  /// `C = init + A B` over an `M x N` tile, N a multiple of the lanes: A
  /// read as scalars `a(m, k)`, B as vectors `bv(k, n)` (n the first column
  /// of a vector), the accumulators started by `init(m, n)` and handed to
  /// `finish(m, n, acc)`. Register tiles of `mr` rows by `nv` vectors: per
  /// step of k, `nv` vector loads, `mr` broadcasts and `mr * nv` FMAs.
  ///
  /// With `skipZeros` (the products of partial blocks), a zero of A adds
  /// nothing even where B holds an inf or NaN: a masked score's weight or
  /// gradient (0) never meets what lies outside the mask (a NaN key reaches
  /// only the gradients of the queries that see it).
  void gemm(int64_t M, int64_t N, int64_t K, ScalarAt a, VectorAt bv,
            TileInit init, TileFinish finish, bool skipZeros = false) {
    int64_t vectors = N / lanes;
    int64_t maxVectors = std::min<int64_t>(vectors, registers >= 32 ? 4 : 2);
    for (int64_t n0 = 0; n0 < vectors; n0 += maxVectors) {
      int64_t nv = std::min(maxVectors, vectors - n0);
      int64_t mr = rowsFor(nv);
      auto tile = [&](Value m0, int64_t rows) {
        SmallVector<Value> acc;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t v = 0; v < nv; ++v)
            acc.push_back(init(add(m0, r), idx((n0 + v) * lanes)));
        SmallVector<Value> res =
            forLoop(idx(0), idx(K), 1, acc,
                    [&](Value k, ValueRange acc) -> SmallVector<Value> {
                      SmallVector<Value> row;
                      for (int64_t v = 0; v < nv; ++v)
                        row.push_back(bv(k, idx((n0 + v) * lanes)));
                      SmallVector<Value> next;
                      for (int64_t r = 0; r < rows; ++r) {
                        Value scalar = a(add(m0, r), k);
                        Value s = vector::BroadcastOp::create(b, vf, scalar);
                        Value zero = skipZeros
                                         ? arith::CmpFOp::create(
                                               b, arith::CmpFPredicate::OEQ,
                                               scalar, f32Const(0.0))
                                         : Value();
                        for (int64_t v = 0; v < nv; ++v) {
                          Value old = acc[r * nv + v];
                          Value sum = vector::FMAOp::create(b, s, row[v], old);
                          next.push_back(
                              zero ? arith::SelectOp::create(b, zero, old, sum)
                                         .getResult()
                                   : sum);
                        }
                      }
                      return next;
                    });
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t v = 0; v < nv; ++v)
            finish(add(m0, r), idx((n0 + v) * lanes), res[r * nv + v]);
      };
      int64_t whole = M / mr;
      if (whole > 0)
        forLoop(idx(0), idx(whole * mr), mr, {},
                [&](Value m0, ValueRange) -> SmallVector<Value> {
                  tile(m0, mr);
                  return {};
                });
      if (M % mr)
        tile(idx(whole * mr), M % mr);
    }
  }

  //===--------------------------------------------------------------------===//
  // Prologue
  //===--------------------------------------------------------------------===//

  /// Copies `src` (`[b, h, rows, cols]`) into `rowsBuf` (`[b, h,
  /// paddedRows, paddedCols]`) and, when given, `colsBuf` (`[b, h,
  /// paddedCols, paddedRows]`); the padding is zero.
  void padRows(Value src, Value rowsBuf, Value colsBuf, Value bIdx, Value h,
               int64_t valid, int64_t padded, int64_t cols,
               int64_t paddedCols) {
    forRange(idx(0), idx(padded), [&](Value i) {
      Value rowInside = lt(i, valid);
      forRange(idx(0), idx(paddedCols), [&](Value c) {
        Value inside = arith::AndIOp::create(b, rowInside, lt(c, cols));
        Value v = scf::IfOp::create(
                      b, inside,
                      [&](OpBuilder &, Location) {
                        scf::YieldOp::create(
                            b, ValueRange{toF32(load(src, {bIdx, h, i, c}))});
                      },
                      [&](OpBuilder &, Location) {
                        scf::YieldOp::create(b, ValueRange{f32Const(0.0)});
                      })
                      .getResult(0);
        store(v, rowsBuf, {bIdx, h, i, c});
        if (colsBuf)
          store(v, colsBuf, {bIdx, h, c, i});
      });
    });
  }

  void prologue() {
    Value q = readOnlyBuffer(b, p.query), k = readOnlyBuffer(b, p.key),
          v = readOnlyBuffer(b, p.value),
          dO = readOnlyBuffer(b, op.getGradOutput());
    qp = alloc({batch, heads, lqp, dimp});
    qt = alloc({batch, heads, dimp, lqp});
    dop = alloc({batch, heads, lqp, vdimp});
    dot = alloc({batch, heads, vdimp, lqp});
    kp = alloc({batch, kvHeads, lkp, dimp});
    vp = alloc({batch, kvHeads, lkp, vdimp});
    Value o, l;
    if (softmax) {
      lsep = alloc({batch, heads, lqp});
      dvec = alloc({batch, heads, lqp});
      o = readOnlyBuffer(b, output);
      l = readOnlyBuffer(b, lse);
    }
    parallel({batch, heads}, [&](ValueRange ivs) {
      Value bIdx = ivs[0], h = ivs[1];
      padRows(q, qp, qt, bIdx, h, lq, lqp, dim, dimp);
      padRows(dO, dop, dot, bIdx, h, lq, lqp, vdim, vdimp);
      if (!softmax)
        return;
      // LSE (+inf past the queries: P = 0 there) and D = rowsum(dO * O).
      forRange(idx(0), idx(lqp), [&](Value i) {
        Value inside = lt(i, lq);
        auto ifRow = scf::IfOp::create(
            b, inside,
            [&](OpBuilder &, Location) {
              Value sum = forLoop(idx(0), idx(vdim), 1, {f32Const(0.0)},
                                  [&](Value e, ValueRange acc) {
                                    Value x = toF32(load(dO, {bIdx, h, i, e}));
                                    Value y = toF32(load(o, {bIdx, h, i, e}));
                                    return SmallVector<Value>{
                                        math::FmaOp::create(b, x, y, acc[0])};
                                  })[0];
              scf::YieldOp::create(b, ValueRange{load(l, {bIdx, h, i}), sum});
            },
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(
                  b,
                  ValueRange{f32Const(std::numeric_limits<double>::infinity()),
                             f32Const(0.0)});
            });
        store(ifRow.getResult(0), lsep, {bIdx, h, i});
        store(ifRow.getResult(1), dvec, {bIdx, h, i});
      });
    });
    parallel({batch, kvHeads}, [&](ValueRange ivs) {
      padRows(k, kp, Value(), ivs[0], ivs[1], lk, lkp, dim, dimp);
      padRows(v, vp, Value(), ivs[0], ivs[1], lk, lkp, vdim, vdimp);
    });
  }

  //===--------------------------------------------------------------------===//
  // The block step
  //===--------------------------------------------------------------------===//

  /// Fills `pt` (P^T) and `dst` (dS^T, the gradient of the raw scores:
  /// scale included) for key block `kb` and query block `qb` of head `h`
  /// (key/value head `kh`), `blockK x blockQ` each; masked per element when
  /// `masked`.
  void blockStep(Value bIdx, Value h, Value kh, Value qb, Value kb, bool masked,
                 Value pt, Value dst) {
    Value i0 = mul(qb, blockQ), k0 = mul(kb, blockK);
    double scale = p.scale;
    double factor = 0.0;
    if (pointwise)
      factor = std::pow(static_cast<double>(lk),
                        -pointwise.getAlpha().convertToDouble());
    MaskEmitter emitter(mask, nullptr, nullptr);
    auto allowed = [&](Value m, Value n) -> Value {
      // Queries i0 + n + lane against key k0 + m.
      Value q0 = arith::IndexCastOp::create(b, b.getI32Type(), add(i0, n));
      SmallVector<int32_t> lane(lanes);
      std::iota(lane.begin(), lane.end(), 0);
      Value iota = arith::ConstantOp::create(
          b, DenseElementsAttr::get(vi, ArrayRef<int32_t>(lane)));
      Value qs = arith::AddIOp::create(
          b, vector::BroadcastOp::create(b, vi, q0), iota);
      Value key = arith::IndexCastOp::create(b, b.getI32Type(), add(k0, m));
      Value ks = vector::BroadcastOp::create(b, vi, key);
      return emitter.emitAllowed(b, h, qs, ks);
    };
    Value zero = fsplat(0.0);
    // S^T = K_j Q_i^T, then P^T (pointwise: and the factor of dS in dst).
    gemm(
        blockK, blockQ, dim,
        [&](Value m, Value d) { return load(kp, {bIdx, kh, add(k0, m), d}); },
        [&](Value d, Value n) { return vload(qt, {bIdx, h, d, add(i0, n)}); },
        [&](Value, Value) { return zero; },
        [&](Value m, Value n, Value acc) {
          Value s = arith::MulFOp::create(b, acc, fsplat(scale));
          Value ok = masked ? allowed(m, n) : Value();
          Value pv;
          if (softmax) {
            Value l = vload(lsep, {bIdx, h, add(i0, n)});
            // (A NaN score or row stays NaN: the approximated exp need not
            // keep it.)
            Value x = arith::SubFOp::create(b, s, l);
            Value nan =
                arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
            pv = arith::SelectOp::create(b, nan, x, softmaxExp(b, x));
          } else {
            pv = arith::MulFOp::create(
                b, applyPointwiseFn(b, pointwise.getFn(), s), fsplat(factor));
            Value fac = arith::MulFOp::create(
                b, applyPointwiseDerivative(b, pointwise.getFn(), s),
                fsplat(factor * scale));
            if (ok)
              fac = arith::SelectOp::create(b, ok, fac, zero);
            vstore(fac, dst, {m, n});
          }
          if (ok)
            pv = arith::SelectOp::create(b, ok, pv, zero);
          vstore(pv, pt, {m, n});
        });
    // dP^T = V_j dO_i^T, then dS^T.
    gemm(
        blockK, blockQ, vdim,
        [&](Value m, Value e) { return load(vp, {bIdx, kh, add(k0, m), e}); },
        [&](Value e, Value n) { return vload(dot, {bIdx, h, e, add(i0, n)}); },
        [&](Value, Value) { return zero; },
        [&](Value m, Value n, Value dp) {
          // Exactly 0 where the weight is (masked scores: dP and D may
          // hold a NaN of keys or rows the score does not see), as the
          // reference gradient.
          Value ds, isZero;
          if (softmax) {
            Value pv = vload(pt, {m, n});
            Value dd = vload(dvec, {bIdx, h, add(i0, n)});
            ds = arith::MulFOp::create(
                b,
                arith::MulFOp::create(b, pv, arith::SubFOp::create(b, dp, dd)),
                fsplat(scale));
            isZero =
                arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, pv, zero);
          } else {
            ds = arith::MulFOp::create(b, vload(dst, {m, n}), dp);
            if (masked)
              isZero = arith::XOrIOp::create(
                  b, allowed(m, n),
                  arith::ConstantOp::create(
                      b, DenseElementsAttr::get(
                             VectorType::get({lanes}, b.getI1Type()), true)));
          }
          if (isZero)
            ds = arith::SelectOp::create(b, isZero, zero, ds);
          vstore(ds, dst, {m, n});
        });
  }

  /// Visits the blocks of row `row` of the layout tables `t` (rows of
  /// `numRows`, the layout of head `h`): full blocks, then partial ones.
  void visitRow(const KernelTables &t, int64_t numRows, Value h, Value row,
                function_ref<void(Value block, bool masked)> body) {
    Value layoutIdx = arith::IndexCastOp::create(b, b.getIndexType(),
                                                 load(t.headLayout, {h}));
    Value at = add(mul(layoutIdx, numRows + 1), row);
    auto entries = [&](Value offsets, Value blocks, bool masked) {
      Value lo =
          arith::IndexCastOp::create(b, b.getIndexType(), load(offsets, {at}));
      Value hi = arith::IndexCastOp::create(b, b.getIndexType(),
                                            load(offsets, {add(at, 1)}));
      forRange(lo, hi, [&](Value e) {
        body(arith::IndexCastOp::create(b, b.getIndexType(), load(blocks, {e})),
             masked);
      });
    };
    entries(t.fullOffsets, t.fullBlocks, false);
    entries(t.partialOffsets, t.partialBlocks, true);
  }

  Value zeroed(ArrayRef<int64_t> shape) {
    Value buf = alloc(shape);
    linalg::FillOp::create(b, ValueRange{f32Const(0.0)}, ValueRange{buf});
    return buf;
  }

  /// Copies rows [0, min(rows, limit - first)) of `acc` (`rows x` padded
  /// `cols`) to `dst[bIdx, h, first + r, :cols]`.
  void storeRows(Value acc, Value dst, Value bIdx, Value h, Value first,
                 int64_t rows, int64_t limit, int64_t cols) {
    Value count = minIdx(sub(idx(limit), first), rows);
    forRange(idx(0), count, [&](Value r) {
      Value row = add(first, r);
      int64_t whole = cols / lanes * lanes;
      for (int64_t c = 0; c < whole; c += lanes)
        vstore(vload(acc, {r, idx(c)}), dst, {bIdx, h, row, idx(c)});
      for (int64_t c = whole; c < cols; ++c)
        store(load(acc, {r, idx(c)}), dst, {bIdx, h, row, idx(c)});
    });
  }

  /// `dq_i (rows x dimp) += dS_ij K_j`, dS read transposed from dS^T
  /// (`dst`, blockK x blockQ).
  void accumulateQuery(Value dst, Value bIdx, Value kh, Value k0, Value dqAcc,
                       ValueRange dqAt, bool masked) {
    gemm(
        blockQ, dimp, blockK,
        [&](Value m, Value k) { return load(dst, {k, m}); },
        [&](Value k, Value n) { return vload(kp, {bIdx, kh, add(k0, k), n}); },
        [&](Value m, Value n) {
          SmallVector<Value> at(dqAt);
          at.back() = add(at.back(), m);
          at.push_back(n);
          return vload(dqAcc, at);
        },
        [&](Value m, Value n, Value v) {
          SmallVector<Value> at(dqAt);
          at.back() = add(at.back(), m);
          at.push_back(n);
          vstore(v, dqAcc, at);
        },
        masked);
  }

  /// dK and dV of key block `kb` of key/value head `kh` (pass A); with
  /// `dqAcc` (`[B, Hq, Lqp, dimp]`) also each query block's dQ.
  void keyBlockTask(Value bIdx, Value kh, Value kb, const KernelTables &t,
                    int64_t numKeyBlocks, Value dqAcc) {
    // (`masked` blocks skip the zero weights and gradients of masked
    // scores in their products.)
    Value dkAcc = zeroed({blockK, dimp}), dvAcc = zeroed({blockK, vdimp});
    Value pt = alloc({blockK, blockQ}), dst = alloc({blockK, blockQ});
    Value k0 = mul(kb, blockK);
    forRange(idx(0), idx(group), [&](Value g) {
      Value h = add(mul(kh, group), g);
      visitRow(t, numKeyBlocks, h, kb, [&](Value qb, bool masked) {
        blockStep(bIdx, h, kh, qb, kb, masked, pt, dst);
        Value i0 = mul(qb, blockQ);
        // dV_j += P^T dO_i; dK_j += dS^T Q_i.
        auto accumulate = [&](Value lhs, Value rhs, Value acc, int64_t cols) {
          gemm(
              blockK, cols, blockQ,
              [&](Value m, Value k) { return load(lhs, {m, k}); },
              [&](Value k, Value n) {
                return vload(rhs, {bIdx, h, add(i0, k), n});
              },
              [&](Value m, Value n) { return vload(acc, {m, n}); },
              [&](Value m, Value n, Value v) { vstore(v, acc, {m, n}); },
              masked);
        };
        accumulate(pt, dop, dvAcc, vdimp);
        accumulate(dst, qp, dkAcc, dimp);
        if (dqAcc)
          accumulateQuery(dst, bIdx, kh, k0, dqAcc, {bIdx, h, i0}, masked);
      });
    });
    storeRows(dkAcc, dk, bIdx, kh, k0, blockK, lk, dim);
    storeRows(dvAcc, dv, bIdx, kh, k0, blockK, lk, vdim);
  }

  /// One pass: every gradient of key/value head `kh`, its key blocks in
  /// order (dQ of its query heads summed over them).
  void headTask(Value bIdx, Value kh, const KernelTables &t,
                int64_t numKeyBlocks, Value dqAcc) {
    forRange(idx(0), idx(group), [&](Value g) {
      Value h = add(mul(kh, group), g);
      forRange(idx(0), idx(lqp), [&](Value i) {
        for (int64_t c = 0; c < dimp; c += lanes)
          vstore(fsplat(0.0), dqAcc, {bIdx, h, i, idx(c)});
      });
    });
    forRange(idx(0), idx(lkp / blockK), [&](Value kb) {
      keyBlockTask(bIdx, kh, kb, t, numKeyBlocks, dqAcc);
    });
    forRange(idx(0), idx(group), [&](Value g) {
      Value h = add(mul(kh, group), g);
      forRange(idx(0), idx(lqp / blockQ), [&](Value qb) {
        Value i0 = mul(qb, blockQ);
        Value rows = memref::SubViewOp::create(
            b, dqAcc, SmallVector<OpFoldResult>{bIdx, h, i0, b.getIndexAttr(0)},
            SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                      b.getIndexAttr(blockQ),
                                      b.getIndexAttr(dimp)},
            SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
        storeRows(collapse(rows), dq, bIdx, h, i0, blockQ, lq, dim);
      });
    });
  }

  /// A `1 x 1 x R x C` view as `R x C`.
  Value collapse(Value view) {
    return memref::CollapseShapeOp::create(
        b, view, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  }

  /// Pass B: dQ of query block `qb` of head `h`.
  void queryBlockTask(Value bIdx, Value h, Value qb, const KernelTables &t,
                      int64_t numQueryBlocks) {
    Value dqAcc = zeroed({blockQ, dimp});
    Value pt = alloc({blockK, blockQ}), dst = alloc({blockK, blockQ});
    Value kh = div(h, group);
    visitRow(t, numQueryBlocks, h, qb, [&](Value kb, bool masked) {
      blockStep(bIdx, h, kh, qb, kb, masked, pt, dst);
      accumulateQuery(dst, bIdx, kh, mul(kb, blockK), dqAcc, {idx(0)}, masked);
    });
    storeRows(dqAcc, dq, bIdx, h, mul(qb, blockQ), blockQ, lq, dim);
  }
};

/// The forward results the kernel reads (softmax: the output and its
/// log-sum-exp, the forward op gaining a log-sum-exp result if it has
/// none); null for pointwise attention, whose gradient needs neither.
std::pair<Value, Value> forwardResults(RewriterBase &rewriter,
                                       AttentionGradOp op) {
  AttentionOp fwd = op.getForwardOp();
  if (!fwd.getProblem().isSoftmax())
    return {};
  Value out = op.getSavedOutput(), lse = op.getSavedLse();
  if (out && lse)
    return {out, lse};
  if (!fwd.getLse()) {
    AttentionProblem p = fwd.getProblem();
    auto o = cast<RankedTensorType>(fwd.getResult().getType());
    p.results.lse =
        RankedTensorType::get(o.getShape().drop_back(), rewriter.getF32Type());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(fwd);
    auto withLse = AttentionOp::create(rewriter, fwd.getLoc(), p);
    withLse->setDiscardableAttrs(fwd->getDiscardableAttrDictionary());
    rewriter.replaceAllUsesWith(fwd.getResult(), withLse.getResult());
    rewriter.eraseOp(fwd);
    fwd = withLse;
  }
  return {out ? out : fwd.getResult(), lse ? lse : fwd.getLse()};
}

struct FlashBackwardPass
    : public attn::impl::AttnFlashBackwardBase<FlashBackwardPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<TargetModel> target = targetOfOptions(
        getOperation(), getArgument(), vectorWidth, vectorRegisters);
    if (failed(target))
      return signalPassFailure();
    SmallVector<AttentionGradOp> ops;
    getOperation()->walk([&](AttentionGradOp op) { ops.push_back(op); });
    for (AttentionGradOp op : ops) {
      std::string why = unsupportedReason(op);
      if (!why.empty()) {
        op.emitRemark() << getArgument() << ": not fused (" << why
                        << "); convert-attn-grad-to-linalg computes it";
        continue;
      }
      lower(op, *target);
    }
  }

  void lower(AttentionGradOp op, const TargetModel &target) {
    IRRewriter rewriter(op.getContext());
    auto [output, lse] = forwardResults(rewriter, op);
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    AttentionOp fwd = op.getForwardOp();
    BackwardGen gen(b, op, target, output, lse);
    BlockLayout layout = BlockLayout::compute(fwd.getPatternMask(),
                                              gen.getBlockQ(), gen.getBlockK());
    SmallVector<Value> grads = gen.build(layout);
    op.emitRemark() << getArgument() << ": fused backward, "
                    << (gen.onePass() ? "one pass" : "two passes")
                    << ", blocks of " << gen.getBlockQ() << " queries x "
                    << gen.getBlockK() << " keys, " << layout.countVisited()
                    << " of " << layout.countBlocks()
                    << " blocks visited per pass (" << layout.countFull()
                    << " full); " << target.lanes << " lanes";
    rewriter.replaceOp(op, grads);
    if (fwd->use_empty())
      rewriter.eraseOp(fwd);
  }
};

} // namespace
