//===- BackwardKernel.cpp - Fused backward pass of attention on CPUs ------===//
//
// attn-flash-backward: attn.attention_grad of softmax and pointwise
// attention as two fused passes over the block layout (FlashAttention-2's
// scheme, no atomics; see the pass description), on the forward kernels'
// frame (KernelFrame.h): its scores, modifiers, masks and walk over the
// layout (compile-time, or classified at run time for dynamic sizes and
// varlen batches):
//
//   prologue (per batch row and head): Q (layer-normalized with
//     qk-layernorm) and dO (times the gate) copied zero-padded to whole
//     query blocks, row-major and transposed; softmax: LSE (+inf padding)
//     and D = rowsum(dO * O) - dLSE; K and V zero-padded to whole key blocks
//   pass A, per (batch row, key/value head, key block): for each query head
//     of the group and each query block the key block meets
//       block step: S^T = K_j Q_i^T, dP^T = V_j dO_i^T, then per score the
//       frame's modifiers (and their derivative) and mask: P^T, dS^T
//       dV_j += P^T dO_i, dK_j += dS^T Q_i           (registers x lanes)
//     dK_j, dV_j stored
//   pass B, per (batch row, query head, query tile): for each key block
//     of the frame's walk: the block step again, dQ_i += dS K_j; stored.
//   then the gradients of bias (summed over what it broadcasts over), gate
//   and sinks, and qk-layernorm's chain rule.
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

#include "attn-opt/Conversion/AttnKernel/KernelFrame.h"
#include "attn-opt/Conversion/AttnToTiles/TileKernel.h"
#include "attn-opt/Conversion/Capabilities.h"
#include "attn-opt/Conversion/Passes.h"

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Mask/BlockLayout.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"
#include "attn-opt/Support/TileSizes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
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
  // Static or dynamic sizes (blocks classified at run time), padded and
  // packed varlen batches; f16 and bf16 are read into f32 (the sums stay
  // f32). Every modifier the kernel frame applies, with the gradients of
  // bias, gate and sinks; qk-layernorm's through the normalized rows.
  static const Capability capability = forGradients(
      {"fused-backward",
       "attn-flash-backward",
       "the fused CPU backward: FlashAttention-2's two passes over the block "
       "layout, on the kernel frame",
       {getApplicableFeatures(Feature::Softmax),
        getApplicableFeatures(Feature::Pointwise)},
       {}});
  return capability;
}

namespace {

/// Why attn-flash-backward leaves `op` to the reference gradient, or "".
std::string unsupportedReason(AttentionGradOp op) {
  if (std::optional<Refusal> r =
          getFusedBackwardCapability().refusal(op.getFeatures()))
    return r->text();
  return "";
}

/// The frame's target for the backward: the CPU's, a query row per vector
/// lane (the whole row in one thread), the operands read as f32.
class BackwardTarget : public KernelTarget {
public:
  bool readsF32Operands() const override { return true; }
  Value combineRow(ImplicitLocOpBuilder &, Value partial,
                   RowCombine) const override {
    return partial;
  }
};

/// The kernel of one attn.attention_grad, on the kernel frame `f` (its
/// scores, masks, modifiers and walk over the layout).
class BackwardGen : public KernelArith {
public:
  BackwardGen(ImplicitLocOpBuilder &b, AttentionGradOp op, KernelFrame &f,
              const TargetModel &target, Value output, Value lse)
      : KernelArith(b), op(op), p(op.getForwardOp().getProblem()), f(f),
        lanes(target.lanes), registers(target.registers), output(output),
        lse(lse) {
    const AttentionDims &d = p.dims;
    heads = d.queryHeads;
    kvHeads = d.kvHeads;
    group = d.groupSize();
    dim = d.headDim;
    vdim = d.valueDim;
    blockQ = f.blockQ;
    blockK = f.blockK;
    dimp = llvm::alignTo(dim, lanes);
    vdimp = llvm::alignTo(vdim, lanes);
    softmax = p.isSoftmax();
    pointwise = dyn_cast<PointwiseAttr>(p.normalizer);
    modified = p.modifiers.softcap || p.regions.scoreMod;
    packed = p.sequences.isPacked();
    inlineScores = !modified && !p.modifiers.bias && !p.modifiers.alibiSlopes &&
                   !p.masking.tensor && !p.regions.maskMod && !p.segments.query;
    // The captured tensors whose gradients the op asks for: every
    // floating-point one, in order.
    if (!op.getGradCaptures().empty())
      for (unsigned c : op.getForwardOp().getFloatCaptures())
        slotOf[c] = gradCaptures.size(), gradCaptures.push_back(c);
    f32 = b.getF32Type();
    vf = VectorType::get({lanes}, f32);
    vi32 = VectorType::get({lanes}, b.getI32Type());
    vbf16 = VectorType::get({2 * lanes}, b.getBF16Type());
    dotKind = target.bf16Dot;
    pairs = usesPairs(op, dotKind);
  }

  /// True if the products multiply bf16 pairs (vdpbf16ps, f32 sums), as
  /// FlashAttention's bf16 backward multiplies bf16 tiles: bf16 Q, K, V
  /// and dO (exact in bf16: the scores' products lose nothing), P and dS
  /// rounded to bf16 for dV, dK and dQ. Not with a gate (dO times the gate
  /// is not a bf16 value), qk-layernorm (f32 rows) or a packed batch (its
  /// sequences may start at odd rows, and the pairs are of rows).
  static bool usesPairs(AttentionGradOp op, TargetModel::Bf16Dot kind) {
    AttentionProblem p = op.getForwardOp().getProblem();
    auto bf16 = [](Value v) {
      return cast<ShapedType>(v.getType()).getElementType().isBF16();
    };
    return kind != TargetModel::Bf16Dot::None && bf16(p.query) && bf16(p.key) &&
           bf16(p.value) && bf16(op.getGradOutput()) && !p.modifiers.gate &&
           !p.qkNormEps && !p.sequences.isPacked();
  }

  /// True if the products multiply bf16 pairs (usesPairs).
  bool multipliesPairs() const { return pairs; }

  /// Tasks from which one pass computes every gradient (fewer leave
  /// threads idle: another schedule then).
  static constexpr int64_t kMinHeadTasks = 4;

  /// How the gradients are scheduled: one pass over (batch row, key/value
  /// head) tasks, each computing every gradient of its heads; with GQA and
  /// too few of those, one pass over (batch row, query head) tasks, each
  /// summing its own head's part of dK and dV (the group's parts added in
  /// order afterwards); else two passes. (With a batch known only at run
  /// time: as if it were 1.)
  enum class Schedule { KeyValueHeads, QueryHeads, TwoPasses };
  Schedule schedule() const {
    int64_t rows = ShapedType::isDynamic(p.dims.batch) ? 1 : p.dims.batch;
    if (rows * kvHeads >= kMinHeadTasks)
      return Schedule::KeyValueHeads;
    if (group > 1 && rows * heads >= kMinHeadTasks && groupPartsFit(rows))
      return Schedule::QueryHeads;
    return Schedule::TwoPasses;
  }

  /// The most bytes the query heads' parts of dK and dV may take
  /// (Schedule::QueryHeads: Hq / Hkv times dK's and dV's memory).
  static constexpr int64_t kMaxGroupPartBytes = int64_t(256) << 20;

  /// True if the query heads' parts of dK and dV fit kMaxGroupPartBytes
  /// with `rows` batch rows (a key length known only at run time: as the
  /// rest of the kernel, linear in it).
  bool groupPartsFit(int64_t rows) const {
    if (ShapedType::isDynamic(p.dims.keyLen))
      return true;
    return rows * heads * p.dims.keyLen * (dim + vdim) * 4 <=
           kMaxGroupPartBytes;
  }
  bool onePass() const { return schedule() != Schedule::TwoPasses; }
  bool perQueryHead() const { return schedule() == Schedule::QueryHeads; }

  /// The gradients of query, key and value, then those of the bias, gate
  /// and sinks the op asks for. `layout` is the compile-time block layout,
  /// or null: blocks classified at run time (dynamic sizes, varlen).
  SmallVector<Value> build(const BlockLayout *layout) {
    f.prepareInputs();
    // The frame's sizes (constants when static), the rows padded to whole
    // blocks.
    batch = f.batchSize;
    lq = f.queryLen;
    lk = f.keyLen;
    lqp = padTo(lq, blockQ);
    lkp = padTo(lk, blockK);
    if (packed) {
      // (A sequence's tiles start at its first row: the last may reach a
      // block past the rows.)
      lqp = add(lqp, blockQ);
      lkp = add(lkp, blockK);
    }
    dq = alloc({batch, heads, lq, dim});
    dk = alloc({batch, kvHeads, lk, dim});
    dv = alloc({batch, kvHeads, lk, vdim});
    if (op.getGradBias())
      dbias = alloc({batch, heads, lq, lk});
    if (op.getGradGate())
      dgate = alloc({batch, heads, lq, vdim});
    // The bias's gradient in its shape (dbias itself when the bias has a
    // row per batch row and head) and the sinks'.
    Value biasOut = dbias ? biasGradientBuffer() : Value();
    Value sinkOut = op.getGradSinks() ? alloc({heads}) : Value();
    Value slopeOut = op.getGradAlibiSlopes() ? alloc({heads}) : Value();
    SmallVector<Value> captureOuts;
    for (unsigned c : gradCaptures) {
      SmallVector<Size> shape;
      for (auto [d, n] :
           llvm::enumerate(shapeOf(op.getForwardOp().getCaptures()[c])))
        shape.push_back(ShapedType::isDynamic(n) ? Size(f.captureDims[c][d])
                                                 : Size(n));
      captureOuts.push_back(alloc(shape));
    }
    allocatePadded();
    // (Under the run-time checks of dynamic sizes and varlen operands:
    // when one fails the hook has reported it and the gradients are left
    // uninitialized.)
    f.guarded([&] {
      compute(layout);
      if (biasOut != dbias)
        reduceBiasGradient(biasOut);
      if (sinkOut)
        sumSinkGradient(sinkOut);
      if (slopeOut)
        sumSlopeGradient(slopeOut);
      for (auto [slot, out] : llvm::enumerate(captureOuts))
        sumCaptureGradient(gradCaptures[slot], captureParts[slot], out);
    });
    SmallVector<Value> grads = {queryKeyGradient(dq, p.query),
                                queryKeyGradient(dk, p.key), toTensor(dv)};
    if (biasOut)
      grads.push_back(toTensor(biasOut, elementTypeOf(p.modifiers.bias)));
    if (dgate)
      grads.push_back(toTensor(dgate));
    if (sinkOut)
      grads.push_back(toTensor(sinkOut, elementTypeOf(op.getGradSinks())));
    if (slopeOut)
      grads.push_back(
          toTensor(slopeOut, elementTypeOf(op.getGradAlibiSlopes())));
    for (auto [out, grad] : llvm::zip(captureOuts, op.getGradCaptures()))
      grads.push_back(toTensor(out, elementTypeOf(grad)));
    return grads;
  }

private:
  /// A key block: its index in its sequence, the sequence (packed
  /// batches), the buffer row of its first key and the row its sequence
  /// ends at (where its gradients' rows stop).
  struct KeyBlock {
    Value local, seq, row0, rowEnd;
  };

  /// Visits the query tiles (flat tile indices for forTile) that key block
  /// `kb` of head `h` of batch row `bIdx` may meet, and whether the layout
  /// lists them partial.
  using QueryBlockWalk =
      std::function<void(Value bIdx, Value h, const KeyBlock &kb,
                         function_ref<void(Value, bool)> body)>;

  /// The prologue and the passes.
  void compute(const BlockLayout *layout) {
    prologue();
    for (Value g : {dbias, p.sequences.isVarlen() ? dq : Value(),
                    p.sequences.isVarlen() ? dk : Value(),
                    p.sequences.isVarlen() ? dv : Value(),
                    p.sequences.isVarlen() ? dgate : Value()})
      if (g) // (rows no sequence covers, blocks no pair reaches: zeros)
        linalg::FillOp::create(b, ValueRange{f32Const(0.0)}, ValueRange{g});
    Value keyTiles = blocksIn(lkp, blockK);
    if (packed)
      std::tie(keyStarts, keyTiles) = f.packedTiles(f.keyOffsets(), blockK);
    // Pass A's tasks (batch row, key/value head, key block) each sum their
    // part of the learned parameters' gradients (the slopes of the heads
    // of their group, the captured tensors), reduced in task order at the
    // end: the same bits for any thread count.
    numKeyTiles = keyTiles;
    if (perQueryHead()) {
      dkParts = alloc({batch, heads, lk, dim});
      dvParts = alloc({batch, heads, lk, vdim});
      if (p.sequences.isVarlen())
        for (Value g : {dkParts, dvParts})
          linalg::FillOp::create(b, ValueRange{f32Const(0.0)}, ValueRange{g});
    }
    Value tasks = mul(mul(batch, units()), keyTiles);
    if (op.getGradAlibiSlopes())
      slopeParts = alloc({tasks, group});
    for (unsigned c : gradCaptures)
      captureParts.push_back(alloc({tasks, captureSize(c), lanes}));
    std::optional<KernelTables> columns;
    if (layout)
      columns = KernelTables::build(b, layout->transposed(), p.dims.queryLen,
                                    f.spec.mask);
    // A key block's walk over the query blocks: the transposed layout's
    // row, or every query block of the sequence, classified at run time.
    QueryBlockWalk walk = [&, layout](Value bIdx, Value h, const KeyBlock &kb,
                                      function_ref<void(Value, bool)> body) {
      if (layout) {
        visitRow(*columns, layout->getNumKeyBlocks(), h, kb.local, body);
        return;
      }
      if (packed) {
        // The tiles of the key block's sequence.
        Value s1 = add(kb.seq, 1);
        Value len = sub(f.loadIndex(f.queryOffsets(), s1),
                        f.loadIndex(f.queryOffsets(), kb.seq));
        Value first = f.firstTileOf(kb.seq);
        forRange(idx(0), arith::CeilDivUIOp::create(b, len, idx(blockQ)),
                 [&](Value t) { body(add(first, t), /*masked=*/true); });
        return;
      }
      Value tiles = arith::CeilDivUIOp::create(b, f.sequenceLengths(bIdx).first,
                                               idx(blockQ));
      forRange(idx(0), tiles, [&](Value qb) { body(qb, /*masked=*/true); });
    };
    if (onePass()) {
      // dQ (and the ungated output) summed in the task of its key/value
      // head, key block by key block: five products per block, none
      // recomputed. (Each task sums the rows of its heads only.)
      Value dqAcc = alloc({batch, heads, lqp, dimp});
      Value outAcc = dgate ? alloc({batch, heads, lqp, vdimp}) : Value();
      parallel({batch, units()}, [&](ValueRange ivs) {
        headTask(ivs[0], ivs[1], keyTiles, walk, dqAcc, outAcc);
      });
      if (perQueryHead())
        sumGroupParts();
      return;
    }
    parallel({batch, kvHeads, keyTiles}, [&](ValueRange ivs) {
      keyBlockTask(ivs[0], ivs[1], ivs[2], walk, Value(), Value());
    });
    parallel({batch, heads, packed ? f.numTiles : blocksIn(lqp, blockQ)},
             [&](ValueRange ivs) { queryBlockTask(ivs[0], ivs[1], ivs[2]); });
  }

  /// Key block `kb` of batch row `bIdx` (a flat index over the sequences of
  /// a packed batch).
  KeyBlock keyBlockOf(Value bIdx, Value kb) {
    if (!packed)
      return {kb, Value(), mul(kb, blockK), lk};
    Value s = f.sequenceOf(keyStarts, kb);
    Value local = sub(kb, load(keyStarts, {s}));
    Value base = f.loadIndex(f.keyOffsets(), s);
    return {local, s, add(base, mul(local, blockK)),
            f.loadIndex(f.keyOffsets(), add(s, 1))};
  }

  AttentionGradOp op;
  AttentionProblem p;
  KernelFrame &f;
  int64_t lanes, registers;
  Value output, lse;
  TargetModel::Bf16Dot dotKind;
  bool pairs = false;
  VectorType vi32, vbf16;
  int64_t heads, kvHeads, group, dim, vdim;
  /// The head dims padded to whole vectors.
  int64_t dimp, vdimp;
  int64_t blockQ, blockK;
  /// The batch rows, query and key rows (index values, constants when
  /// static) and the rows padded to whole blocks.
  Value batch, lq, lk, lqp, lkp;
  bool softmax;
  PointwiseAttr pointwise;
  /// Whether a modifier has a derivative other than 1 (softcap, a score
  /// region): the score gradient is multiplied by it.
  bool modified;
  /// A packed batch (query and key offsets): tiles and key blocks start at
  /// their sequences' first rows, flat over the sequences.
  bool packed;
  /// The captured tensors with a gradient (their positions among the
  /// captures) and each one's position among them.
  SmallVector<unsigned> gradCaptures;
  llvm::DenseMap<unsigned, unsigned> slotOf;
  /// Pass A's key blocks per (batch row, key/value head), and the tasks'
  /// parts of the gradients of the slopes (`[tasks, group]`) and of the
  /// captured tensors (`[tasks, size]`, flattened), null when not asked
  /// for.
  Value numKeyTiles, slopeParts;
  SmallVector<Value> captureParts;
  /// The first flat key block of each sequence of a packed batch.
  Value keyStarts;
  /// Whether the per-score code is short (no modifier, bias, mask tensor,
  /// region or segment ids): then it runs in the product's registers.
  bool inlineScores;
  Type f32;
  VectorType vf;
  /// Padded copies: Q and dO rows and transposed (dO times the gate), K
  /// and V rows; softmax's LSE and D rows (D less the LSE's cotangent).
  /// The gradients' buffers (dbias `[B, Hq, Lq, Lk]`, reduced to the
  /// bias's shape at the end; dbias and dgate null unless asked for).
  Value qp, qt, dop, dot, kp, vp, lsep, dvec;
  /// With bf16 pairs (i32 words of two bf16): Q^T and dO^T in pairs of
  /// head-dim columns (`[b, h, dimp / 2, lqp]`, the scores' B), K and V
  /// rows as words (`[b, kvh, lkp, dimp / 2]`, their A), Q, dO and K in
  /// pairs of rows (`[b, h, lqp / 2, dimp]`: dK's, dV's and dQ's B).
  Value qtw, dotw, kw, vw, qRowPairs, doRowPairs, kRowPairs;
  /// Per batch row and head: 0 when its rows of Q and dO (queryChecks) or
  /// of K and V (keyChecks) are all finite, NaN otherwise (padRows).
  Value queryChecks, keyChecks;
  /// Schedule::QueryHeads: each query head's part of dK and dV (`[b, h,
  /// lk, d]`).
  Value dkParts, dvParts;
  Value dq, dk, dv, dbias, dgate;

  //===--------------------------------------------------------------------===//
  // Small builders
  //===--------------------------------------------------------------------===//

  /// A size: a constant or an index value (a constant index value counts
  /// as a constant).
  struct Size {
    Size(int64_t n) : n(n) {}
    Size(Value v) : v(v) {
      if (std::optional<int64_t> c = getConstantIntValue(v))
        n = *c;
    }
    int64_t n = ShapedType::kDynamic;
    Value v;
  };
  Value upper(const Size &s) {
    return ShapedType::isDynamic(s.n) ? s.v : idx(s.n);
  }
  /// `n` rounded up to a multiple of `block`.
  Value padTo(Value n, int64_t block) {
    if (std::optional<int64_t> c = getConstantIntValue(n))
      return idx(llvm::alignTo(*c, block));
    return mul(arith::CeilDivUIOp::create(b, n, idx(block)), block);
  }

  /// The blocks of `block` rows in `padded` (a multiple of it) rows.
  Value blocksIn(Value padded, int64_t block) {
    if (std::optional<int64_t> c = getConstantIntValue(padded))
      return idx(*c / block);
    return div(padded, block);
  }

  Value alloc(ArrayRef<Size> shape, Type elem = {}) {
    SmallVector<int64_t> dims;
    SmallVector<Value> dynamic;
    for (const Size &s : shape) {
      dims.push_back(s.n);
      if (ShapedType::isDynamic(s.n))
        dynamic.push_back(s.v);
    }
    return memref::AllocOp::create(b, MemRefType::get(dims, elem ? elem : f32),
                                   dynamic, b.getI64IntegerAttr(64));
  }
  /// The gradient of query or key (`operand`) from that of its
  /// layer-normalized rows (`buf`) with qk-layernorm (linear in L, on
  /// tensors after the kernel), else `buf`, in the operands' type.
  Value queryKeyGradient(Value buf, Value operand) {
    if (!p.qkNormEps)
      return toTensor(buf);
    TensorBuilder tb(b);
    Value g = layerNormGrad(tb, operand, toTensor(buf, f32), *p.qkNormEps);
    return p.elementType.isF32() ? g : fromF32Tensor(tb, g, p.elementType);
  }

  /// A gradient buffer (f32) as a tensor of the operands' element type.
  Value toTensor(Value buf, Type elem = {}) {
    auto type = cast<MemRefType>(buf.getType());
    Value t = bufferization::ToTensorOp::create(
        b, RankedTensorType::get(type.getShape(), f32), buf,
        /*restrict=*/true, /*writable=*/true);
    if (!elem)
      elem = p.elementType;
    if (elem.isF32())
      return t;
    TensorBuilder tb(b);
    return fromF32Tensor(tb, t, elem);
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

  void parallel(ArrayRef<Size> ubs, function_ref<void(ValueRange)> body) {
    SmallVector<Value> lbs, ups, steps;
    for (const Size &u : ubs) {
      lbs.push_back(idx(0));
      ups.push_back(upper(u));
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
    return f.forLoop(lb, ub, step, init, body);
  }
  static Type elementTypeOf(Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
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
  /// A product's factors as bf16 pairs: `K` words along k, A's `a(m, k)`
  /// (i32), B's `bv(k, n)` (vector of i32).
  struct Words {
    int64_t K;
    ScalarAt a;
    VectorAt bv;
  };
  using TileFinish = function_ref<void(Value m, Value n, Value acc)>;

  /// `C = init + A B` over an `M x N` tile, N a multiple of the lanes: A
  /// read as scalars `a(m, k)`, B as vectors `bv(k, n)` (n the first column
  /// of a vector), the accumulators started by `init(m, n)` and handed to
  /// `finish(m, n, acc)`. Register tiles of `mr` rows by `nv` vectors: per
  /// step of k, `nv` vector loads, `mr` broadcasts and `mr * nv` FMAs.
  ///
  /// With `finite` (the products of partial blocks: an i1, true when B is
  /// all finite), a zero of A adds nothing even where B holds an inf or
  /// NaN: a masked score's weight or gradient (0) never meets what lies
  /// outside the mask (a NaN key reaches only the gradients of the queries
  /// that see it). Where B is finite, `0 * b` adds a zero anyway: the
  /// plain product, without a test per element (which costs branches and
  /// spills), runs then.
  ///
  /// With `words` (bf16 pairs), the product of its factors replaces it
  /// where no zero needs skipping (`finite` null or true): A and B as i32
  /// words of two bf16 along k, `words->K` of them, multiplied by
  /// dotBf16Pairs. (0 x NaN is NaN in a pair too: the skipping product is
  /// the f32 one.)
  void gemm(int64_t M, int64_t N, int64_t K, ScalarAt a, VectorAt bv,
            TileInit init, TileFinish finish, Value finite = {},
            const std::optional<Words> &words = std::nullopt) {
    auto fast = [&] {
      if (words)
        gemmTiles(M, N, words->K, words->a, words->bv, init, finish,
                  /*skipZeros=*/false, /*pairs=*/true);
      else
        gemmTiles(M, N, K, a, bv, init, finish, /*skipZeros=*/false);
    };
    if (!finite) {
      fast();
      return;
    }
    scf::IfOp::create(
        b, finite,
        [&](OpBuilder &, Location) {
          fast();
          scf::YieldOp::create(b);
        },
        [&](OpBuilder &, Location) {
          gemmTiles(M, N, K, a, bv, init, finish, /*skipZeros=*/true);
          scf::YieldOp::create(b);
        });
  }

  /// Whether the rows of Q and dO of head `h` (`queryChecks`) or of K and
  /// V of key/value head `h` (`keyChecks`) of batch row `bIdx` are all
  /// finite (an i1).
  Value allFinite(Value checks, Value bIdx, Value h) {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                 load(checks, {bIdx, h}), f32Const(0.0));
  }

  void gemmTiles(int64_t M, int64_t N, int64_t K, ScalarAt a, VectorAt bv,
                 TileInit init, TileFinish finish, bool skipZeros,
                 bool withPairs = false) {
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
        SmallVector<Value> res = forLoop(
            idx(0), idx(K), 1, acc,
            [&](Value k, ValueRange acc) -> SmallVector<Value> {
              SmallVector<Value> row;
              for (int64_t v = 0; v < nv; ++v)
                row.push_back(bv(k, idx((n0 + v) * lanes)));
              SmallVector<Value> next;
              if (withPairs) {
                for (Value &x : row)
                  x = vector::BitCastOp::create(b, vbf16, x);
                for (int64_t r = 0; r < rows; ++r) {
                  Value s = broadcastBf16Pair(b, a(add(m0, r), k), lanes);
                  for (int64_t v = 0; v < nv; ++v)
                    next.push_back(
                        dotBf16Pairs(b, dotKind, acc[r * nv + v], s, row[v]));
                }
                return next;
              }
              for (int64_t r = 0; r < rows; ++r) {
                Value scalar = a(add(m0, r), k);
                Value s = vector::BroadcastOp::create(b, vf, scalar);
                Value zero =
                    skipZeros
                        ? arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
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

  /// Copies `src` (`[b, h, rows, cols]`, times `factor` of the same shape
  /// when given) into `rowsBuf` (`[b, h, paddedRows, paddedCols]`) and,
  /// when given, `colsBuf` (`[b, h, paddedCols, paddedRows]`); rows from
  /// `valid` on and the padding are zero. Returns the sum of the copied
  /// values times 0: 0 when they are all finite, NaN otherwise.
  Value padRows(Value src, Value rowsBuf, Value colsBuf, Value bIdx, Value h,
                Value valid, Value padded, int64_t cols, int64_t paddedCols,
                Value factor = {}) {
    // A vector of `lanes` columns at a time (read masked past `cols`, in
    // the source's type, extended); the transposed copy after.
    auto read = [&](Value from, Value i, int64_t c0) -> Value {
      Type elem = cast<MemRefType>(from.getType()).getElementType();
      Value pad = arith::ConstantOp::create(b, b.getZeroAttr(elem));
      Value x = vector::TransferReadOp::create(
          b, VectorType::get({lanes}, elem), from,
          ValueRange{bIdx, h, i, idx(c0)}, pad,
          ArrayRef<bool>{c0 + lanes <= cols});
      if (!elem.isF32())
        x = arith::ExtFOp::create(b, vf, x);
      return x;
    };
    Value check =
        forLoop(idx(0), padded, 1, {fsplat(0.0)}, [&](Value i, ValueRange acc) {
          Value rowInside = lt(i, valid);
          Value sum = acc[0];
          for (int64_t c0 = 0; c0 < paddedCols; c0 += lanes) {
            Value v =
                scf::IfOp::create(
                    b, rowInside,
                    [&](OpBuilder &, Location) {
                      Value x = read(src, i, c0);
                      if (factor)
                        x = arith::MulFOp::create(b, x, read(factor, i, c0));
                      scf::YieldOp::create(b, ValueRange{x});
                    },
                    [&](OpBuilder &, Location) {
                      scf::YieldOp::create(b, ValueRange{fsplat(0.0)});
                    })
                    .getResult(0);
            vstore(v, rowsBuf, {bIdx, h, i, idx(c0)});
            sum = arith::AddFOp::create(
                b, sum, arith::MulFOp::create(b, v, fsplat(0.0)));
          }
          return SmallVector<Value>{sum};
        })[0];
    Value finite =
        vector::ReductionOp::create(b, vector::CombiningKind::ADD, check);
    if (!colsBuf)
      return finite;
    // The transposed copy from the rows just written, `lanes` rows at a
    // time: each column's `lanes` elements (in one small block of rows,
    // cached) gathered into one vector store. (A scalar store per element
    // down a column of `paddedRows` floats touched a new cache line and
    // page each: a quarter of a window's backward.)
    forLoop(idx(0), padded, lanes, {}, [&](Value i0, ValueRange) {
      forRange(idx(0), idx(paddedCols), [&](Value c) {
        vstore(columnOf(rowsBuf, bIdx, h, i0, c), colsBuf, {bIdx, h, c, i0});
      });
      return SmallVector<Value>{};
    });
    return finite;
  }

  /// Column `c` of rows [i0, i0 + lanes) of head `h` of `rowsBuf` as one
  /// vector (the transposed copies' step: the rows are one small cached
  /// block).
  Value columnOf(Value rowsBuf, Value bIdx, Value h, Value i0, Value c) {
    SmallVector<Value> column;
    for (int64_t l = 0; l < lanes; ++l)
      column.push_back(load(rowsBuf, {bIdx, h, add(i0, idx(l)), c}));
    return vector::FromElementsOp::create(b, vf, column);
  }

  /// The prologue's buffers.
  void allocatePadded() {
    qp = alloc({batch, heads, lqp, dimp});
    dop = alloc({batch, heads, lqp, vdimp});
    kp = alloc({batch, kvHeads, lkp, dimp});
    vp = alloc({batch, kvHeads, lkp, vdimp});
    if (pairs) {
      Type i32 = b.getI32Type();
      qtw = alloc({batch, heads, dimp / 2, lqp}, i32);
      dotw = alloc({batch, heads, vdimp / 2, lqp}, i32);
      kw = alloc({batch, kvHeads, lkp, dimp / 2}, i32);
      vw = alloc({batch, kvHeads, lkp, vdimp / 2}, i32);
      qRowPairs = alloc({batch, heads, blocksIn(lqp, 2), dimp}, i32);
      doRowPairs = alloc({batch, heads, blocksIn(lqp, 2), vdimp}, i32);
      kRowPairs = alloc({batch, kvHeads, blocksIn(lkp, 2), dimp}, i32);
    } else {
      qt = alloc({batch, heads, dimp, lqp});
      dot = alloc({batch, heads, vdimp, lqp});
    }
    queryChecks = alloc({batch, heads});
    keyChecks = alloc({batch, kvHeads});
    if (softmax) {
      lsep = alloc({batch, heads, lqp});
      dvec = alloc({batch, heads, lqp});
    }
  }

  void prologue() {
    // (With qk-layernorm: the rows normalized, as the frame's key.)
    Value query = f.queryBuf;
    if (p.qkNormEps) {
      TensorBuilder tb(b);
      query = readOnlyBuffer(b, layerNorm(tb, p.query, *p.qkNormEps));
    }
    Value dO = readOnlyBuffer(b, op.getGradOutput());
    Value dlse = readOnlyBuffer(b, op.getGradLse());
    Value o, l;
    if (softmax) {
      o = readOnlyBuffer(b, output);
      l = readOnlyBuffer(b, lse);
    }
    parallel({batch, heads}, [&](ValueRange ivs) {
      Value bIdx = ivs[0], h = ivs[1];
      // (Rows past a padded batch row's length are zeros too.)
      Value rows = packed ? lq : f.sequenceLengths(bIdx).first;
      Value check = padRows(query, qp, qt, bIdx, h, rows, lqp, dim, dimp);
      // (The gradient of the ungated output: dO times the gate.)
      check = arith::AddFOp::create(
          b, check,
          padRows(dO, dop, dot, bIdx, h, rows, lqp, vdim, vdimp, f.gateBuf));
      store(check, queryChecks, {bIdx, h});
      if (pairs) {
        packWords(qp, bIdx, h, lqp, dimp, qtw, qRowPairs, Value());
        packWords(dop, bIdx, h, lqp, vdimp, dotw, doRowPairs, Value());
      }
      if (!softmax)
        return;
      // LSE (+inf past the queries: P = 0 there) and D = rowsum(dO * O)
      // (the gated output and its cotangent: the same sum), less the
      // LSE's cotangent.
      forRange(idx(0), lqp, [&](Value i) {
        auto ifRow = scf::IfOp::create(
            b, lt(i, rows),
            [&](OpBuilder &, Location) {
              Value sum = forLoop(idx(0), idx(vdim), 1, {f32Const(0.0)},
                                  [&](Value e, ValueRange acc) {
                                    Value x = toF32(load(dO, {bIdx, h, i, e}));
                                    Value y = toF32(load(o, {bIdx, h, i, e}));
                                    return SmallVector<Value>{
                                        math::FmaOp::create(b, x, y, acc[0])};
                                  })[0];
              if (dlse)
                sum = arith::SubFOp::create(b, sum, load(dlse, {bIdx, h, i}));
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
      Value keys = packed ? lk : f.sequenceLengths(ivs[0]).second;
      Value check =
          padRows(f.keyBuf, kp, Value(), ivs[0], ivs[1], keys, lkp, dim, dimp);
      check = arith::AddFOp::create(b, check,
                                    padRows(f.valueBuf, vp, Value(), ivs[0],
                                            ivs[1], keys, lkp, vdim, vdimp));
      store(check, keyChecks, {ivs[0], ivs[1]});
      if (pairs) {
        packWords(kp, ivs[0], ivs[1], lkp, dimp, Value(), kRowPairs, kw);
        packWords(vp, ivs[0], ivs[1], lkp, vdimp, Value(), Value(), vw);
      }
    });
  }

  /// The bf16 words of head `h` of the padded f32 rows `rowsBuf` (`[b, h,
  /// padded, cols]`, bf16 values: exact): into `columnPairs` (`[b, h,
  /// cols / 2, padded]`) pairs of columns transposed, into `rowPairs`
  /// (`[b, h, padded / 2, cols]`) pairs of rows, into `rowWords` (`[b, h,
  /// padded, cols / 2]`) each row's words. Each given; vector stores.
  void packWords(Value rowsBuf, Value bIdx, Value h, Value padded, int64_t cols,
                 Value columnPairs, Value rowPairs, Value rowWords) {
    auto row = [&](Value r, int64_t c0) {
      return vload(rowsBuf, {bIdx, h, r, idx(c0)});
    };
    if (rowPairs || rowWords)
      forRange(idx(0), blocksIn(padded, 2), [&](Value r2) {
        Value r = mul(r2, 2);
        for (int64_t c0 = 0; c0 < cols; c0 += lanes) {
          Value x0 = row(r, c0), x1 = row(add(r, 1), c0);
          if (rowPairs)
            vector::StoreOp::create(b, interleaveBf16Pairs(b, x0, x1), rowPairs,
                                    ValueRange{bIdx, h, r2, idx(c0)});
          if (rowWords)
            for (auto [x, at] : {std::pair(x0, r), std::pair(x1, add(r, 1))})
              vector::StoreOp::create(b, packBf16Pairs(b, x), rowWords,
                                      ValueRange{bIdx, h, at, idx(c0 / 2)});
        }
      });
    if (!columnPairs)
      return;
    // (`lanes` rows at a time, from a cached block of rows: as padRows's
    // transposed copy.)
    forLoop(idx(0), padded, lanes, {}, [&](Value i0, ValueRange) {
      forRange(idx(0), idx(cols / 2), [&](Value c2) {
        Value c = mul(c2, 2);
        vector::StoreOp::create(
            b,
            interleaveBf16Pairs(b, columnOf(rowsBuf, bIdx, h, i0, c),
                                columnOf(rowsBuf, bIdx, h, i0, add(c, 1))),
            columnPairs, ValueRange{bIdx, h, c2, i0});
      });
      return SmallVector<Value>{};
    });
  }

  //===--------------------------------------------------------------------===//
  // The block step
  //===--------------------------------------------------------------------===//

  /// Where a task of pass A sums the learned parameters' gradients: its
  /// index among the tasks (its row of the parts) and, with ALiBi slopes,
  /// the lanes of the current head's sum.
  struct TaskGradients {
    Value index, slopeAcc;
  };

  /// Buffers of one block step, `blockK x blockQ` each: P^T, dS^T, dP^T;
  /// with bf16 pairs also the words of P^T's and dS^T's rows (`blockK x
  /// blockQ / 2`: dV's and dK's A) and of dS^T's pairs of rows (`blockK /
  /// 2 x blockQ`: dQ's A, dS read transposed).
  struct StepBuffers {
    Value pt, dst, dpt, ptw, dsw, dskw;
  };
  StepBuffers stepBuffers() {
    StepBuffers sb;
    sb.pt = alloc({blockK, blockQ});
    sb.dst = alloc({blockK, blockQ});
    sb.dpt = alloc({blockK, blockQ});
    if (pairs) {
      Type i32 = b.getI32Type();
      sb.ptw = alloc({blockK, blockQ / 2}, i32);
      sb.dsw = alloc({blockK, blockQ / 2}, i32);
      sb.dskw = alloc({blockK / 2, blockQ}, i32);
    }
    return sb;
  }

  /// The words of the block's P^T and dS^T (StepBuffers), rounded to bf16.
  void packStep(const StepBuffers &sb) {
    forLoop(idx(0), idx(blockK / 2), 1, {}, [&](Value m2, ValueRange) {
      Value m = mul(m2, 2);
      forLoop(idx(0), idx(blockQ), lanes, {}, [&](Value n, ValueRange) {
        Value half = div(n, 2);
        for (auto [x, words] :
             {std::pair(sb.pt, sb.ptw), std::pair(sb.dst, sb.dsw)})
          for (Value at : {m, add(m, 1)})
            vector::StoreOp::create(b, packBf16Pairs(b, vload(x, {at, n})),
                                    words, ValueRange{at, half});
        vector::StoreOp::create(
            b,
            interleaveBf16Pairs(b, vload(sb.dst, {m, n}),
                                vload(sb.dst, {add(m, 1), n})),
            sb.dskw, ValueRange{m2, n});
        return SmallVector<Value>{};
      });
      return SmallVector<Value>{};
    });
  }

  /// A vector of words of `mem` at `at`.
  Value wload(Value mem, ValueRange at) {
    return vector::LoadOp::create(b, vi32, mem, at);
  }

  /// Runs `body(m, n)` for every vector of a `blockK x blockQ` block: key
  /// `m`, queries from `n` (loops, so that the per-score code, which may
  /// be long with modifiers and regions, is emitted once).
  void forEachVector(function_ref<void(Value m, Value n)> body) {
    forLoop(idx(0), idx(blockK), 1, {}, [&](Value m, ValueRange) {
      forLoop(idx(0), idx(blockQ), lanes, {}, [&](Value n, ValueRange) {
        body(m, n);
        return SmallVector<Value>{};
      });
      return SmallVector<Value>{};
    });
  }

  /// Fills P^T and dS^T (the gradient of the raw scores `Q K^T`: scale,
  /// modifiers and normalizer included) of the frame's current tile
  /// (query block from `i0`, head `h`, key/value head `kh`) and the key
  /// block from `k0`; masked per element when `masked`. The scores are the
  /// frame's (bias, ALiBi, softcap, score region, mask tensor), the mask
  /// its `allowed`. With `task` (pass A), the gradients of the bias (its
  /// block), the ALiBi slopes and the captured tensors too.
  void blockStep(Value bIdx, Value h, Value kh, Value i0, Value k0, bool masked,
                 const StepBuffers &sb, const TaskGradients *task) {
    Value zero = fsplat(0.0);
    // Buffer rows of the tile's first query and the block's first key (the
    // positions i0 and k0 are in the current sequence).
    Value qRow0 = add(f.queryBase, i0), kRow0 = add(f.keyBase, k0);
    Value slope = f.alibiSlope(QueryRows{i0, lanes});
    // The step of one vector of scores (key `m`, queries from `n`): the
    // score from S^T (in pt), P^T into pt, dS^T from dP^T (`dp`) into dst.
    auto scoreStep = [&](Value m, Value n, Value dp) {
      // The score, then P^T (pointwise: its derivative `fac`).
      QueryRows rows{add(i0, n), lanes};
      Value key = add(k0, m);
      Value keyRead = f.keyRow(key, masked); // (the bias's and mask's row)
      Value s = arith::MulFOp::create(b, vload(sb.pt, {m, n}), fsplat(p.scale));
      if (f.biasBuf)
        s = arith::AddFOp::create(b, s, f.loadBias(rows, keyRead));
      Value dmod;
      KernelFrame::ModifierTangents tangents;
      std::tie(s, dmod) = f.modifyScoreWithDerivative(
          s, rows, key, slope, task ? &tangents : nullptr);
      Value ok = masked ? f.allowed(rows, key) : Value();
      if (packed) // (a tile's last rows may be the next sequence's)
        ok = arith::AndIOp::create(b, ok, f.rowsInside(rows));
      if (masked && f.maskBuf) {
        auto [added, tensorOk] = f.loadMaskTensor(rows, keyRead);
        if (added)
          s = arith::AddFOp::create(b, s, added);
        ok = arith::AndIOp::create(b, ok, tensorOk);
      }
      Value pv, fac;
      if (softmax) {
        Value l = vload(lsep, {bIdx, h, add(qRow0, n)});
        // (A NaN score or row stays NaN: the approximated exp need not
        // keep it.)
        Value x = arith::SubFOp::create(b, s, l);
        Value nan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
        pv = arith::SelectOp::create(b, nan, x, softmaxExp(b, x));
      } else {
        pv = f.pointwiseWeight(s, Value());
        fac = arith::MulFOp::create(
            b, applyPointwiseDerivative(b, pointwise.getFn(), s),
            f.lengthFactorLike(s));
        if (ok)
          fac = arith::SelectOp::create(b, ok, fac, zero);
      }
      if (ok)
        pv = arith::SelectOp::create(b, ok, pv, zero);
      vstore(pv, sb.pt, {m, n});
      // dS^T: exactly 0 where the weight (softmax) or its derivative
      // (pointwise) is: masked scores, whose dP and D may hold a NaN of
      // keys or rows the score does not see, as the reference gradient.
      Value ds, isZero;
      if (softmax) {
        Value dd = vload(dvec, {bIdx, h, add(qRow0, n)});
        ds = arith::MulFOp::create(b, pv, arith::SubFOp::create(b, dp, dd));
        isZero = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, pv, zero);
      } else {
        ds = arith::MulFOp::create(b, fac, dp);
        isZero = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, fac, zero);
      }
      // (The gradient of the score region's result: its captured tensors'.)
      Value dsFinal = ds;
      if (modified)
        ds = arith::MulFOp::create(b, ds, dmod);
      ds = arith::SelectOp::create(b, isZero, zero, ds);
      if (task) {
        if (dbias)
          storeBiasGradient(ds, bIdx, h, add(qRow0, n), add(kRow0, m));
        // (A key past the sequence, zero padding in an unmasked block, has
        // a weight of its own: its score gradient meets zero rows in dQ
        // and dK, but a parameter's gradient only through this guard.)
        Value out = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, key,
                                          f.seqKeyLen);
        Value none = arith::OrIOp::create(
            b, isZero,
            vector::BroadcastOp::create(
                b, VectorType::get({lanes}, b.getI1Type()), out));
        addParameterGradients(
            *task, arith::SelectOp::create(b, none, zero, dsFinal),
            arith::SelectOp::create(b, none, zero, ds), tangents);
      }
      vstore(arith::MulFOp::create(b, ds, fsplat(p.scale)), sb.dst, {m, n});
    };
    // S^T = K_j Q_i^T, then dP^T = V_j dO_i^T: register-tiled products.
    // Plain scores are finished in the second product's registers; scores
    // with modifiers, a bias, a mask tensor or regions (long per-score
    // code) in a loop over the block.
    // (With bf16 pairs: K's and V's row words times Q^T's and dO^T's
    // column pairs.)
    auto scores = [&](Value rows, Value cols, Value rowWords, Value colPairs,
                      int64_t depth, TileFinish finish) {
      gemm(
          blockK, blockQ, depth,
          [&](Value m, Value d) {
            return load(rows, {bIdx, kh, add(kRow0, m), d});
          },
          [&](Value d, Value n) {
            return vload(cols, {bIdx, h, d, add(qRow0, n)});
          },
          [&](Value, Value) { return zero; }, finish, Value(),
          pairs ? std::optional<Words>(Words{
                      (depth + 1) / 2,
                      [&](Value m, Value d) {
                        return load(rowWords, {bIdx, kh, add(kRow0, m), d});
                      },
                      [&](Value d, Value n) {
                        return wload(colPairs, {bIdx, h, d, add(qRow0, n)});
                      }})
                : std::nullopt);
    };
    scores(kp, qt, kw, qtw, dim,
           [&](Value m, Value n, Value acc) { vstore(acc, sb.pt, {m, n}); });
    scores(vp, dot, vw, dotw, vdim, [&](Value m, Value n, Value dp) {
      if (inlineScores)
        scoreStep(m, n, dp);
      else
        vstore(dp, sb.dpt, {m, n});
    });
    if (!inlineScores)
      forEachVector(
          [&](Value m, Value n) { scoreStep(m, n, vload(sb.dpt, {m, n})); });
    if (pairs)
      packStep(sb);
  }

  /// Stores the score gradients of queries `row ..` (the lanes) and key
  /// `key` into dbias, rows and key past the attention's dropped.
  void storeBiasGradient(Value ds, Value bIdx, Value h, Value row, Value key) {
    auto write = [&] {
      AffineMap alongQueries = AffineMap::get(4, 0, b.getAffineDimExpr(2));
      vector::TransferWriteOp::create(b, ds, dbias,
                                      ValueRange{bIdx, h, row, key},
                                      alongQueries, ArrayRef<bool>{false});
    };
    if (!ShapedType::isDynamic(p.dims.keyLen) && p.dims.keyLen % blockK == 0) {
      write();
      return;
    }
    f.ifThen(lt(key, lk), write);
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

  Value zeroed(ArrayRef<Size> shape) {
    Value buf = alloc(shape);
    linalg::FillOp::create(b, ValueRange{f32Const(0.0)}, ValueRange{buf});
    return buf;
  }

  /// Copies rows [0, min(rows, limit - first)) of `acc` (`rows x` padded
  /// `cols`) to `dst[bIdx, h, first + r, :cols]`, each element times
  /// `factor[bIdx, h, first + r, c]` when given.
  void storeRows(Value acc, Value dst, Value bIdx, Value h, Value first,
                 int64_t rows, Value limit, int64_t cols, Value factor = {}) {
    Value count = maxIdx(minIdx(sub(limit, first), rows), idx(0));
    forRange(idx(0), count, [&](Value r) {
      Value row = add(first, r);
      if (factor) {
        forRange(idx(0), idx(cols), [&](Value c) {
          Value x = toF32(load(factor, {bIdx, h, row, c}));
          store(arith::MulFOp::create(b, load(acc, {r, c}), x), dst,
                {bIdx, h, row, c});
        });
        return;
      }
      int64_t whole = cols / lanes * lanes;
      for (int64_t c = 0; c < whole; c += lanes)
        vstore(vload(acc, {r, idx(c)}), dst, {bIdx, h, row, idx(c)});
      for (int64_t c = whole; c < cols; ++c)
        store(load(acc, {r, idx(c)}), dst, {bIdx, h, row, idx(c)});
    });
  }

  /// `acc_i (blockQ x cols) += X_ij Y_j`, X read transposed from `xt`
  /// (blockK x blockQ: dS^T for dQ with Y = K, P^T for the ungated output
  /// with Y = V), Y the rows of `y` from key `k0`.
  /// With `words` (bf16 pairs): X's pairs of rows (dS^T's,
  /// StepBuffers::dskw) times `yPairs`, Y's row pairs.
  void accumulateRows(Value xt, Value y, int64_t cols, Value bIdx, Value kh,
                      Value k0, Value acc, ValueRange accAt, bool masked,
                      Value words = {}, Value yPairs = {}) {
    gemm(
        blockQ, cols, blockK,
        [&](Value m, Value k) { return load(xt, {k, m}); },
        [&](Value k, Value n) { return vload(y, {bIdx, kh, add(k0, k), n}); },
        [&](Value m, Value n) {
          SmallVector<Value> at(accAt);
          at.back() = add(at.back(), m);
          at.push_back(n);
          return vload(acc, at);
        },
        [&](Value m, Value n, Value v) {
          SmallVector<Value> at(accAt);
          at.back() = add(at.back(), m);
          at.push_back(n);
          vstore(v, acc, at);
        },
        masked ? allFinite(keyChecks, bIdx, kh) : Value(),
        words ? std::optional<Words>(Words{
                    blockK / 2,
                    [&](Value m, Value k) { return load(words, {k, m}); },
                    [&](Value k, Value n) {
                      return wload(yPairs, {bIdx, kh, add(div(k0, 2), k), n});
                    }})
              : std::nullopt);
  }

  /// Runs `body` on key block `kb` of query block `qb` of the frame's
  /// current tile when the mask, segment ids and mask tensor let it
  /// through (`listedMasked`: the layout lists it partial).
  void visitKeyBlock(Value kb, bool listedMasked,
                     function_ref<void(bool masked)> body) {
    auto visit = [&](Value, bool masked, ValueRange) -> SmallVector<Value> {
      body(masked);
      return {};
    };
    if (f.layout)
      f.visitKeyBlock(kb, listedMasked, {}, visit);
    else
      f.visitKeyBlockAtRuntime(kb, {}, visit);
  }

  /// dK and dV of key block `kb` of the task's unit (a key/value head, or
  /// with Schedule::QueryHeads a query head; pass A); with
  /// `dqAcc` (`[B, Hq, Lqp, dimp]`) also each query block's dQ, with
  /// `outAcc` (`[B, Hq, Lqp, vdimp]`) its ungated output.
  void keyBlockTask(Value bIdx, Value unit, Value kbIdx,
                    const QueryBlockWalk &walk, Value dqAcc, Value outAcc) {
    Value kh = kvHeadOf(unit);
    // (`masked` blocks skip the zero weights and gradients of masked
    // scores in their products; every block of a packed batch is masked:
    // its tiles' last rows may be the next sequence's.)
    Value dkAcc = zeroed({blockK, dimp}), dvAcc = zeroed({blockK, vdimp});
    StepBuffers sb = stepBuffers();
    KeyBlock kb = keyBlockOf(bIdx, kbIdx);
    Value k0 = mul(kb.local, blockK);
    TaskGradients taskGrads = beginTaskGradients(bIdx, unit, kbIdx);
    forRange(idx(0), idx(headsPerUnit()), [&](Value g) {
      Value h = headOf(unit, g);
      if (taskGrads.slopeAcc)
        vstore(fsplat(0.0), taskGrads.slopeAcc, {idx(0)});
      walk(bIdx, h, kb, [&](Value qb, bool listedMasked) {
        f.forTile(bIdx, h, qb, [&] {
          visitKeyBlock(kb.local, listedMasked, [&](bool visitMasked) {
            bool masked = visitMasked || packed;
            Value i0 = f.firstQuery, qRow0 = add(f.queryBase, i0);
            blockStep(bIdx, h, kh, i0, k0, masked, sb, &taskGrads);
            // dV_j += P^T dO_i; dK_j += dS^T Q_i.
            // (With bf16 pairs: the rows' words of P^T and dS^T times
            // dO's and Q's row pairs.)
            auto accumulate = [&](Value lhs, Value rhs, Value acc, int64_t cols,
                                  Value lhsWords, Value rhsPairs) {
              gemm(
                  blockK, cols, blockQ,
                  [&](Value m, Value k) { return load(lhs, {m, k}); },
                  [&](Value k, Value n) {
                    return vload(rhs, {bIdx, h, add(qRow0, k), n});
                  },
                  [&](Value m, Value n) { return vload(acc, {m, n}); },
                  [&](Value m, Value n, Value v) { vstore(v, acc, {m, n}); },
                  masked ? allFinite(queryChecks, bIdx, h) : Value(),
                  pairs
                      ? std::optional<Words>(Words{
                            blockQ / 2,
                            [&](Value m, Value k) {
                              return load(lhsWords, {m, k});
                            },
                            [&](Value k, Value n) {
                              return wload(rhsPairs,
                                           {bIdx, h, add(div(qRow0, 2), k), n});
                            }})
                      : std::nullopt);
            };
            accumulate(sb.pt, dop, dvAcc, vdimp, sb.ptw, doRowPairs);
            accumulate(sb.dst, qp, dkAcc, dimp, sb.dsw, qRowPairs);
            if (dqAcc)
              accumulateRows(sb.dst, kp, dimp, bIdx, kh, kb.row0, dqAcc,
                             {bIdx, h, qRow0}, masked, sb.dskw, kRowPairs);
            if (outAcc)
              accumulateRows(sb.pt, vp, vdimp, bIdx, kh, kb.row0, outAcc,
                             {bIdx, h, qRow0}, masked);
          });
        });
      });
      if (taskGrads.slopeAcc) // (the lanes summed in order)
        store(vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                          vload(taskGrads.slopeAcc, {idx(0)})),
              slopeParts, {taskGrads.index, rem(h, group)});
    });
    storeRows(dkAcc, perQueryHead() ? dkParts : dk, bIdx, unit, kb.row0, blockK,
              kb.rowEnd, dim);
    storeRows(dvAcc, perQueryHead() ? dvParts : dv, bIdx, unit, kb.row0, blockK,
              kb.rowEnd, vdim);
  }

  /// The tasks' units (Schedule): query heads or key/value heads.
  int64_t units() const { return perQueryHead() ? heads : kvHeads; }
  int64_t headsPerUnit() const { return perQueryHead() ? 1 : group; }
  Value kvHeadOf(Value unit) {
    return perQueryHead() ? div(unit, group) : unit;
  }
  /// Query head `g` of `unit`.
  Value headOf(Value unit, Value g) {
    return perQueryHead() ? unit : add(mul(unit, group), g);
  }

  /// dK and dV from the query heads' parts (Schedule::QueryHeads), the
  /// group's heads added in order.
  void sumGroupParts() {
    parallel({batch, kvHeads, blocksIn(lkp, blockK)}, [&](ValueRange ivs) {
      Value bIdx = ivs[0], kh = ivs[1], r0 = mul(ivs[2], blockK);
      Value r1 = minIdx(add(r0, idx(blockK)), lk);
      for (auto parts :
           {std::tuple(dkParts, dk, dim), std::tuple(dvParts, dv, vdim)}) {
        Value from = std::get<0>(parts), out = std::get<1>(parts);
        int64_t cols = std::get<2>(parts);
        forRange(r0, r1, [&](Value r) {
          forRange(idx(0), idx(cols), [&](Value c) {
            Value sum =
                forLoop(idx(0), idx(group), 1, {f32Const(0.0)},
                        [&](Value g, ValueRange acc) {
                          Value h = add(mul(kh, group), g);
                          return SmallVector<Value>{arith::AddFOp::create(
                              b, acc[0], load(from, {bIdx, h, r, c}))};
                        })[0];
            store(sum, out, {bIdx, kh, r, c});
          });
        });
      }
    });
  }

  /// Zeroes rows [0, lqp) of head `h`'s part of `acc` (`[B, Hq, Lqp, n]`).
  void zeroRows(Value acc, Value bIdx, Value h, int64_t cols) {
    forRange(idx(0), lqp, [&](Value i) {
      for (int64_t c = 0; c < cols; c += lanes)
        vstore(fsplat(0.0), acc, {bIdx, h, i, idx(c)});
    });
  }

  /// Rows [i0, i0 + blockQ) of head `h`'s part of `acc` as `blockQ x cols`.
  Value rowsOf(Value acc, Value bIdx, Value h, Value i0, int64_t cols) {
    Value rows = memref::SubViewOp::create(
        b, acc, SmallVector<OpFoldResult>{bIdx, h, i0, b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                  b.getIndexAttr(blockQ), b.getIndexAttr(cols)},
        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    return memref::CollapseShapeOp::create(
        b, rows, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  }

  /// One pass: every gradient of the unit's heads (Schedule), its key blocks in
  /// order (dQ of its query heads summed over them, and their ungated
  /// outputs into `outAcc` for the gate's gradient).
  void headTask(Value bIdx, Value unit, Value keyTiles,
                const QueryBlockWalk &walk, Value dqAcc, Value outAcc) {
    forRange(idx(0), idx(headsPerUnit()), [&](Value g) {
      Value h = headOf(unit, g);
      zeroRows(dqAcc, bIdx, h, dimp);
      if (outAcc)
        zeroRows(outAcc, bIdx, h, vdimp);
    });
    forRange(idx(0), keyTiles, [&](Value kb) {
      keyBlockTask(bIdx, unit, kb, walk, dqAcc, outAcc);
    });
    forRange(idx(0), idx(headsPerUnit()), [&](Value g) {
      Value h = headOf(unit, g);
      forRange(idx(0), blocksIn(lqp, blockQ), [&](Value qb) {
        Value i0 = mul(qb, blockQ);
        storeRows(rowsOf(dqAcc, bIdx, h, i0, dimp), dq, bIdx, h, i0, blockQ, lq,
                  dim);
        if (outAcc)
          storeGateRows(rowsOf(outAcc, bIdx, h, i0, vdimp), bIdx, h, i0, lq);
      });
    });
  }

  /// dgate = dO * O_ungated for the rows from `i0` (`acc`: their ungated
  /// outputs, `blockQ x vdimp`).
  void storeGateRows(Value acc, Value bIdx, Value h, Value i0, Value limit) {
    Value dO = readOnlyBuffer(b, op.getGradOutput());
    storeRows(acc, dgate, bIdx, h, i0, blockQ, limit, vdim, dO);
  }

  /// Pass B: dQ (and the gate's gradient) of query block `qb` of head `h`,
  /// over the key blocks of the frame's walk.
  void queryBlockTask(Value bIdx, Value h, Value qb) {
    Value dqAcc = zeroed({blockQ, dimp});
    Value outAcc = dgate ? zeroed({blockQ, vdimp}) : Value();
    StepBuffers sb = stepBuffers();
    Value kh = div(h, group);
    // (Tiles with no query row of their sequence are skipped: their rows
    // are padding, zero-filled.)
    f.forTile(bIdx, h, qb, [&] {
      Value i0 = f.firstQuery, qRow0 = add(f.queryBase, i0);
      f.visitTile(
          {},
          [&](Value k0, bool visitMasked, ValueRange) -> SmallVector<Value> {
            bool masked = visitMasked || packed;
            Value kRow0 = add(f.keyBase, k0);
            blockStep(bIdx, h, kh, i0, k0, masked, sb, /*task=*/nullptr);
            accumulateRows(sb.dst, kp, dimp, bIdx, kh, kRow0, dqAcc, {idx(0)},
                           masked, sb.dskw, kRowPairs);
            if (outAcc)
              accumulateRows(sb.pt, vp, vdimp, bIdx, kh, kRow0, outAcc,
                             {idx(0)}, masked);
            return {};
          });
      Value end = add(f.queryBase, f.seqQueryLen);
      storeRows(dqAcc, dq, bIdx, h, qRow0, blockQ, end, dim);
      if (outAcc)
        storeGateRows(outAcc, bIdx, h, qRow0, end);
    });
  }

  //===--------------------------------------------------------------------===//
  // The modifiers' gradients
  //===--------------------------------------------------------------------===//

  /// Whether the bias has a row per batch row (dims 0) and per head (dim
  /// 1): a broadcast dim is a static 1 (the verifier and run-time checks
  /// tie the others to the batch and the heads).
  std::pair<bool, bool> biasRows() {
    ArrayRef<int64_t> shape = shapeOf(p.modifiers.bias);
    bool full = shape.size() == 4;
    return {full && shape[0] != 1, full && shape[1] != 1};
  }

  /// The buffer of the bias's gradient in the bias's shape (f32): dbias
  /// itself when the bias broadcasts over nothing.
  Value biasGradientBuffer() {
    auto [perBatch, perHead] = biasRows();
    if (perBatch && perHead)
      return dbias;
    if (shapeOf(p.modifiers.bias).size() != 4)
      return alloc({lq, lk});
    return alloc(
        {perBatch ? Size(batch) : Size(1), perHead ? heads : 1, lq, lk});
  }

  /// `out` = dbias summed over the batch rows and heads the bias broadcasts
  /// over, in a fixed order.
  void reduceBiasGradient(Value out) {
    bool perBatch, perHead;
    std::tie(perBatch, perHead) = biasRows();
    bool full = shapeOf(p.modifiers.bias).size() == 4;
    parallel({lq}, [&](ValueRange ivs) {
      Value i = ivs[0];
      Value rowsB = perBatch ? batch : idx(1);
      Value rowsH = idx(perHead ? heads : 1);
      forRange(idx(0), rowsB, [&](Value ob) {
        forRange(idx(0), rowsH, [&](Value oh) {
          forRange(idx(0), lk, [&](Value j) {
            // Sum over what the bias broadcasts over, in order.
            Value sum = forLoop(idx(0), perBatch ? idx(1) : batch, 1,
                                {f32Const(0.0)}, [&](Value bb, ValueRange acc) {
                                  return forLoop(
                                      idx(0), idx(perHead ? 1 : heads), 1, acc,
                                      [&](Value hh, ValueRange a) {
                                        Value bi = perBatch ? ob : bb;
                                        Value hi = perHead ? oh : hh;
                                        Value x = load(dbias, {bi, hi, i, j});
                                        return SmallVector<Value>{
                                            arith::AddFOp::create(b, a[0], x)};
                                      });
                                })[0];
            if (full)
              store(sum, out, {ob, oh, i, j});
            else
              store(sum, out, {i, j});
          });
        });
      });
    });
  }

  /// The task of key block `kbIdx` of unit `unit` (Schedule) of batch row
  /// `bIdx`, its rows of the captured tensors' parts zeroed.
  TaskGradients beginTaskGradients(Value bIdx, Value unit, Value kbIdx) {
    TaskGradients t;
    t.index = add(mul(add(mul(bIdx, units()), unit), numKeyTiles), kbIdx);
    if (slopeParts)
      t.slopeAcc = alloc({lanes});
    for (auto [c, part] : llvm::zip(gradCaptures, captureParts)) {
      Value buf = part;
      forRange(idx(0), captureSize(c), [&](Value o) {
        vstore(fsplat(0.0), buf, {t.index, o, idx(0)});
      });
    }
    return t;
  }

  /// Adds one vector of scores' part to the gradients of the ALiBi slopes
  /// (`ds`, the gradient of the score after ALiBi, times its tangent) and
  /// of the captured tensors the score region read (`dsFinal`, the
  /// gradient of the region's result, times each read's partial
  /// derivative, added at the read's element in the lane's own slot: one
  /// vector when every lane reads one element). A zero score gradient adds
  /// exactly nothing, whatever the derivative.
  void addParameterGradients(const TaskGradients &t, Value dsFinal, Value ds,
                             const KernelFrame::ModifierTangents &tangents) {
    Value zero = fsplat(0.0);
    if (t.slopeAcc && tangents.slope)
      vstore(math::FmaOp::create(b, ds, tangents.slope,
                                 vload(t.slopeAcc, {idx(0)})),
             t.slopeAcc, {idx(0)});
    Value none =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, dsFinal, zero);
    for (const CaptureTangent &ct : tangents.captures) {
      auto slot = slotOf.find(ct.capture);
      if (slot == slotOf.end())
        continue;
      Value part = captureParts[slot->second];
      Value d = ct.derivative;
      if (!isa<VectorType>(d.getType()))
        d = vector::BroadcastOp::create(b, vf, d);
      Value add = arith::SelectOp::create(b, none, zero,
                                          arith::MulFOp::create(b, dsFinal, d));
      Value offset = f.captureOffset(ct.capture, ct.indices);
      if (!isa<VectorType>(offset.getType())) {
        // One element for every lane: the lanes' slots at once.
        SmallVector<Value> at = {t.index, offset, idx(0)};
        vstore(arith::AddFOp::create(b, vload(part, at), add), part, at);
        continue;
      }
      forRange(idx(0), idx(lanes), [&](Value l) {
        SmallVector<Value> at = {
            t.index, vector::ExtractOp::create(b, offset, OpFoldResult(l)), l};
        Value x = vector::ExtractOp::create(b, add, OpFoldResult(l));
        store(arith::AddFOp::create(b, load(part, at), x), part, at);
      });
    }
  }

  /// The number of elements of captured tensor `c`.
  Value captureSize(unsigned c) {
    Value n = idx(1);
    for (Value d : f.captureDims[c])
      n = mul(n, d);
    return n;
  }

  /// `out[h]` = d slope_h: the tasks' parts summed in task order.
  void sumSlopeGradient(Value out) {
    parallel({heads}, [&](ValueRange ivs) {
      Value h = ivs[0], kh = div(h, group), g = rem(h, group);
      Value total = forLoop(
          idx(0), batch, 1, {f32Const(0.0)}, [&](Value bIdx, ValueRange acc) {
            Value unit = perQueryHead() ? h : kh;
            Value first = mul(add(mul(bIdx, units()), unit), numKeyTiles);
            return forLoop(
                idx(0), numKeyTiles, 1, acc, [&](Value kb, ValueRange a) {
                  Value x = load(slopeParts, {add(first, kb), g});
                  return SmallVector<Value>{arith::AddFOp::create(b, a[0], x)};
                });
          })[0];
      store(total, out, {h});
    });
  }

  /// `out` (captured tensor `c`'s shape) = the tasks' parts `parts`
  /// (`[tasks, elements, lanes]`) summed in task order, then the lanes in
  /// order.
  void sumCaptureGradient(unsigned c, Value parts, Value out) {
    Value tasks = KernelArith::dim(parts, 0);
    parallel({captureSize(c)}, [&](ValueRange ivs) {
      Value lanesSum =
          forLoop(idx(0), tasks, 1, {fsplat(0.0)}, [&](Value t, ValueRange a) {
            return SmallVector<Value>{arith::AddFOp::create(
                b, a[0], vload(parts, {t, ivs[0], idx(0)}))};
          })[0];
      Value total =
          vector::ReductionOp::create(b, vector::CombiningKind::ADD, lanesSum);
      // The element's indices, row-major.
      SmallVector<Value> at(f.captureDims[c].size());
      Value rest = ivs[0];
      for (int64_t d = at.size() - 1; d >= 0; --d) {
        Value n = f.captureDims[c][d];
        at[d] = arith::RemUIOp::create(b, rest, n);
        rest = arith::DivUIOp::create(b, rest, n);
      }
      store(total, out, at);
    });
  }

  /// `out[h]` = d sink_h, the sum over the batch rows and their queries of
  /// `exp(sink_h - lse) * (dlse - D)` (the sink's weight times the row's
  /// cotangent less D), rows in order.
  void sumSinkGradient(Value out) {
    parallel({heads}, [&](ValueRange ivs) {
      Value h = ivs[0];
      Value sink = toF32(load(f.sinkBuf, {h}));
      Value total = forLoop(
          idx(0), batch, 1, {f32Const(0.0)}, [&](Value bIdx, ValueRange acc) {
            // (The rows of a packed batch's sequences: up to the last
            // offset.)
            Value rows =
                packed ? f.loadIndex(
                             f.queryOffsets(),
                             sub(KernelArith::dim(f.queryOffsets(), 0), idx(1)))
                       : f.sequenceLengths(bIdx).first;
            return forLoop(idx(0), rows, 1, acc, [&](Value i, ValueRange a) {
              Value w = math::ExpOp::create(
                  b, arith::SubFOp::create(b, sink, load(lsep, {bIdx, h, i})));
              Value g = arith::NegFOp::create(b, load(dvec, {bIdx, h, i}));
              return SmallVector<Value>{math::FmaOp::create(b, w, g, a[0])};
            });
          })[0];
      store(total, out, {h});
    });
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
    FailureOr<TargetModel> target = cpuKernelTarget(
        getOperation(), getArgument(), vectorWidth, vectorRegisters, bf16Dot);
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
    TileSizes tiles = TileSizes::backward(target);
    int64_t blockQ = tiles.queryTile(target), blockK = tiles.keyBlock;
    KernelSpec spec = KernelSpec::get(fwd);
    // The layout at compile time when the sizes are static, else blocks
    // classified at run time (as the forward kernels do).
    std::optional<BlockLayout> layout;
    if (spec.hasStaticLayout())
      layout = BlockLayout::compute(fwd.getPatternMask(), blockQ, blockK);
    spec.runtimeOk = emitGradientChecks(b, op);
    BackwardTarget frameTarget;
    KernelFrame frame(b, spec, layout ? &*layout : nullptr, blockQ, blockK,
                      frameTarget);
    // (K and V are copied into the kernel's padded f32 rows: read them in
    // their own type.)
    frame.kvInElementType = true;
    BackwardGen gen(b, op, frame, target, output, lse);
    SmallVector<Value> grads = gen.build(layout ? &*layout : nullptr);
    InFlightDiagnostic remark = op.emitRemark();
    remark << getArgument() << ": fused backward, "
           << (gen.schedule() == BackwardGen::Schedule::QueryHeads
                   ? "one pass over query heads"
               : gen.onePass() ? "one pass"
                               : "two passes")
           << ", blocks of " << blockQ << " queries x " << blockK << " keys, ";
    if (layout)
      remark << layout->countVisited() << " of " << layout->countBlocks()
             << " blocks visited per pass (" << layout->countFull()
             << " full); ";
    else
      remark << "classified at run time (" << spec.runtimeLayoutReason()
             << "); ";
    remark << target.lanes << " lanes";
    if (gen.multipliesPairs())
      remark << "; bf16 dot products of pairs ("
             << (target.bf16Dot == TargetModel::Bf16Dot::Native ? "native"
                                                                : "emulated")
             << ")";
    remark.report();
    rewriter.replaceOp(op, grads);
    if (fwd->use_empty())
      rewriter.eraseOp(fwd);
  }
};

} // namespace
