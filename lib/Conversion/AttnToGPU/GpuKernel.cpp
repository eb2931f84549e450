//===- GpuKernel.cpp - Fused attention kernels for NVIDIA GPUs ------------===//
//
// The GPU targets of the kernel frame (see GpuKernel.h). Conventions here:
//  - every loop and branch is uniform across a thread block (rows past the
//    queries compute on the last row and do not store), so barriers and
//    shuffles are always reached by every thread;
//  - arithmetic is f32; loads extend and stores truncate element types.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToGPU/GpuKernel.h"

#include "attn-opt/Conversion/AttnKernel/KernelFrame.h"
#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"
#include "attn-opt/Conversion/Capabilities.h"
#include "attn-opt/Dialect/Attn/Utils/MmaFragment.h"
#include "attn-opt/Support/TileSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

static int64_t byteWidth(Type t) {
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

GpuKernelPlan mlir::attn::planGpuKernel(const KernelSpec &spec,
                                        bool tensorCores, int64_t blockK) {
  const AttentionDims &d = spec.dims;
  GpuKernelPlan plan;
  Type q = cast<ShapedType>(spec.query.getType()).getElementType();
  Type k = cast<ShapedType>(spec.key.getType()).getElementType();
  Type v = cast<ShapedType>(spec.value.getType()).getElementType();
  auto isHalf = [](Type t) { return t.isF16() || t.isBF16(); };
  std::string why;
  if (!tensorCores)
    why = "tensor cores disabled";
  else if (!isHalf(q) || q != k || q != v)
    why = "Q, K and V are not all f16 or all bf16";
  else if (d.headDim % 16 != 0 || d.headDim > 256)
    why = "head dim is not a multiple of 16 up to 256";
  else if (d.valueDim % 8 != 0 || d.valueDim > 256)
    why = "value dim is not a multiple of 8 up to 256";
  else if (spec.qkNormEps)
    why = "qk-layernorm";
  if (why.empty()) {
    plan.kind = GpuKernelPlan::Kind::Mma;
    plan.threads = 128; // four warps of 16 query rows
    GpuTileSizes tiles = GpuTileSizes::mma(d.headDim, d.valueDim);
    plan.blockQ = tiles.blockQ;
    plan.blockK = tiles.blockK;
  } else {
    plan.kind = GpuKernelPlan::Kind::Simt;
    plan.simtReason = why;
    // Threads per row: each keeps at most 64 elements of q and of the
    // output accumulator in registers.
    int64_t t = 1;
    while (t < 32 && (d.headDim > 64 * t || d.valueDim > 64 * t))
      t *= 2;
    while (t > 1 && (d.headDim % t != 0 || d.valueDim % t != 0))
      t /= 2;
    plan.rowThreads = t;
    plan.threads = 128;
    // With qk-layernorm, K is normalized up front into f32.
    int64_t kBytes = spec.qkNormEps ? 4 : byteWidth(k);
    GpuTileSizes tiles = GpuTileSizes::simt(
        plan.threads, t, d.headDim * kBytes + d.valueDim * byteWidth(v));
    plan.blockQ = tiles.blockQ;
    plan.blockK = tiles.blockK;
  }
  if (blockK > 0)
    plan.blockK = blockK;
  plan.sharedBytes = gpuKernelSharedBytes(spec, plan);
  return plan;
}

int64_t mlir::attn::gpuKernelSharedBytes(const KernelSpec &spec,
                                         const GpuKernelPlan &plan) {
  const AttentionDims &d = spec.dims;
  if (plan.kind == GpuKernelPlan::Kind::Mma)
    return plan.blockK * (d.headDim + 8 + d.valueDim + 8) * 2;
  Type k = cast<ShapedType>(spec.key.getType()).getElementType();
  Type v = cast<ShapedType>(spec.value.getType()).getElementType();
  int64_t kBytes = spec.qkNormEps ? 4 : byteWidth(k);
  return plan.blockK * (d.headDim * kBytes + d.valueDim * byteWidth(v));
}

//===----------------------------------------------------------------------===//
// What both GPU kernels share: the launch, shared memory, shuffles
//===----------------------------------------------------------------------===//

const Capability &mlir::attn::getGpuKernelCapability() {
  static const Capability capability{
      "gpu-kernel",
      "convert-attn-to-gpu",
      "the fused GPU kernels: SIMT, or mma.sync for f16 and bf16",
      {getApplicableFeatures(Feature::Softmax) - FeatureSet{Feature::Mask},
       getApplicableFeatures(Feature::Pointwise) - FeatureSet{Feature::Mask}},
      {}};
  return capability;
}

namespace {

/// XOR butterfly combining `v` over `width` adjacent lanes (a power of two).
Value butterfly(ImplicitLocOpBuilder &b, Value v, int64_t width,
                RowCombine kind) {
  for (int64_t o = 1; o < width; o *= 2) {
    Value offset = arith::ConstantOp::create(b, b.getI32IntegerAttr(o));
    Value lanes = arith::ConstantOp::create(b, b.getI32IntegerAttr(32));
    Value other =
        gpu::ShuffleOp::create(b, v, offset, lanes, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = kind == RowCombine::Sum ? Value(arith::AddFOp::create(b, v, other))
                                : Value(arith::MaximumFOp::create(b, v, other));
  }
  return v;
}

/// A query row held by `rowThreads` adjacent threads (SIMT) or by the four
/// lanes of an mma.sync quad, each with a part of the row's keys (MMA).
class GpuTarget : public KernelTarget {
public:
  /// `keyPartitions`: threads that hold different keys of one row.
  explicit GpuTarget(int64_t keyPartitions) : keyPartitions(keyPartitions) {}
  bool readsF32Operands() const override { return false; }
  Value combineRow(ImplicitLocOpBuilder &b, Value partial,
                   RowCombine kind) const override {
    return butterfly(b, partial, keyPartitions, kind);
  }

private:
  int64_t keyPartitions;
};

class GpuGen {
public:
  GpuGen(KernelFrame &f, const GpuKernelPlan &plan)
      : f(f), b(f.b), spec(f.spec), plan(plan), threads(plan.threads) {}

protected:
  KernelFrame &f;
  ImplicitLocOpBuilder &b;
  const KernelSpec &spec;
  const GpuKernelPlan &plan;
  int64_t threads;
  /// Inside the launch: the thread id and the shared K and V blocks.
  Value tid, kShared, vShared;

  static Type elementOf(Value memref) {
    return cast<MemRefType>(memref.getType()).getElementType();
  }

  MemRefType sharedType(int64_t rows, int64_t cols, Type elem) {
    return MemRefType::get({rows, cols}, elem, MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  }

  /// Launches the kernel with the K and V blocks in shared memory of
  /// `shared` types; `body` emits the per-thread program. Returns the
  /// result and, with spec.results.lse, the log-sum-exp tensor.
  SmallVector<Value> launch(ArrayRef<Type> shared, function_ref<void()> body) {
    f.prepare();
    f.guarded([&] {
      Value one = f.idx(1);
      auto op = gpu::LaunchOp::create(
          b, f.numTiles, f.idx(f.queryHeads), f.batchSize, f.idx(threads), one,
          one, Value(), Type(), ValueRange{}, TypeRange(shared));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&op.getBody().front());
      tid = op.getThreadIds().x;
      ArrayRef<BlockArgument> attrs = op.getWorkgroupAttributions();
      kShared = attrs[0];
      vShared = attrs[1];
      // Heaviest (causal: last) tiles first, for a shorter tail.
      Value tileIdx = f.sub(f.sub(f.numTiles, one), op.getBlockIds().x);
      f.forTile(op.getBlockIds().z, op.getBlockIds().y, tileIdx, body);
      gpu::TerminatorOp::create(b);
    });
    SmallVector<Value> results = {f.finish()};
    if (Value lse = f.finishLse())
      results.push_back(lse);
    return results;
  }

  /// Copies keys [k0, k0 + Nb) of `src` (B x Hkv x L x width, or a paged
  /// pool: each key's page from the page table) into the shared block
  /// `dst` (Nb x rowLen), coalesced: consecutive threads copy consecutive
  /// chunks of up to 16 bytes. Keys past the end repeat the last key.
  void loadBlock(Value src, Value dst, int64_t width, int64_t rowLen,
                 Value k0) {
    Type elem = elementOf(src);
    int64_t vl = std::max<int64_t>(1, 16 / byteWidth(elem));
    while (vl > 1 && width % vl != 0)
      vl /= 2;
    int64_t perRow = width / vl, chunks = f.blockK * perRow;
    int64_t iters = (chunks + threads - 1) / threads;
    auto vt = VectorType::get({vl}, elem);
    f.forEach(0, iters, 1, [&](Value i) {
      Value c = f.add(arith::MulIOp::create(b, i, f.idx(threads)), tid);
      auto body = [&] {
        Value j = f.div(c, perRow);
        Value d = f.mul(f.rem(c, perRow), vl);
        SmallVector<Value, 3> at =
            f.kvAt(f.keyRow(f.add(k0, j), /*clamp=*/true));
        Value v =
            f.vectorLoad(vt, src, ValueRange{at[0], at[1], at[2], d}, width);
        f.vectorStore(v, dst, ValueRange{j, d}, rowLen);
      };
      if (chunks % threads == 0)
        body();
      else
        f.ifThen(f.lt(c, chunks), body);
    });
  }
};

//===----------------------------------------------------------------------===//
// SIMT kernel
//===----------------------------------------------------------------------===//

class SimtGen : public GpuGen {
public:
  using GpuGen::GpuGen;

  SmallVector<Value> build() {
    rowThreads = plan.rowThreads;
    dPart = f.headDim / rowThreads;
    dvPart = f.valueDim / rowThreads;
    Type kElem = cast<ShapedType>(spec.key.getType()).getElementType();
    if (spec.qkNormEps)
      kElem = f.f32; // K is normalized into f32 up front.
    Type vElem = cast<ShapedType>(spec.value.getType()).getElementType();
    return launch({sharedType(f.blockK, f.headDim, kElem),
                   sharedType(f.blockK, f.valueDim, vElem)},
                  [&] { kernel(); });
  }

private:
  static constexpr int64_t kSub = 16; ///< keys per online-softmax step
  /// Threads per row, and the slices of D and Dv each holds.
  int64_t rowThreads = 1, dPart = 0, dvPart = 0;
  Value part, row, rowRead;

  VectorType accType() { return VectorType::get({dvPart}, f.f32); }
  Value broadcast(Value scalar, int64_t n) {
    return vector::BroadcastOp::create(b, VectorType::get({n}, f.f32), scalar);
  }
  Value rowSum(Value slice) {
    return butterfly(
        b, vector::ReductionOp::create(b, vector::CombiningKind::ADD, slice),
        rowThreads, RowCombine::Sum);
  }

  void kernel() {
    part = f.rem(tid, rowThreads);
    row = f.add(f.firstQuery, f.div(tid, rowThreads));
    rowRead = f.queryRow(row);
    Value q = loadQuery();
    Value acc = arith::ConstantOp::create(
        b, DenseElementsAttr::get(accType(), b.getF32FloatAttr(0.0)));
    SmallVector<Value> state;
    if (spec.isSoftmax())
      state = {f.f32Const(kNegInf), f.f32Const(0.0)};
    state.push_back(acc);
    store(f.visitTile(state, [&](Value k0, bool masked, ValueRange st) {
      return block(q, k0, masked, st);
    }));
  }

  /// This thread's slice of the (normalized, scaled) query row, f32.
  Value loadQuery() {
    Type elem = GpuGen::elementOf(f.queryBuf);
    Value d0 = arith::MulIOp::create(b, part, f.idx(dPart));
    Value q = f.toF32(f.vectorLoad(VectorType::get({dPart}, elem), f.queryBuf,
                                   ValueRange{f.batch, f.head, rowRead, d0},
                                   f.headDim));
    Value centeredSquares;
    if (spec.qkNormEps) {
      Value mean = f.rowMean(rowSum(q));
      q = arith::SubFOp::create(b, q, broadcast(mean, dPart));
      centeredSquares = rowSum(arith::MulFOp::create(b, q, q));
    }
    return arith::MulFOp::create(
        b, q, broadcast(f.queryFactor(centeredSquares), dPart));
  }

  SmallVector<Value> block(Value q, Value k0, bool masked, ValueRange st) {
    loadBlock(f.keyBuf, kShared, f.headDim, f.headDim, k0);
    loadBlock(f.valueBuf, vShared, f.valueDim, f.valueDim, k0);
    gpu::BarrierOp::create(b);
    Type kElem = elementOf(f.keyBuf), vElem = elementOf(f.valueBuf);
    Value d0 = arith::MulIOp::create(b, part, f.idx(dPart));
    Value e0 = arith::MulIOp::create(b, part, f.idx(dvPart));
    SmallVector<Value> out = f.forLoop(
        f.idx(0), f.idx(f.blockK), kSub, st, [&](Value j0, ValueRange s0) {
          SmallVector<Value> s, ok(kSub);
          for (int64_t j = 0; j < kSub; ++j) {
            Value r = f.add(j0, j);
            Value key = f.add(k0, r);
            Value kv =
                f.toF32(f.vectorLoad(VectorType::get({dPart}, kElem), kShared,
                                     ValueRange{r, d0}, f.headDim));
            Value dot = rowSum(arith::MulFOp::create(b, q, kv));
            if (f.biasBuf)
              dot = arith::AddFOp::create(
                  b, dot, f.loadBias({rowRead}, f.keyRow(key, /*clamp=*/true)));
            dot = f.modifyScore(dot, {row}, key, f.alibiSlope({row}));
            s.push_back(dot);
            if (masked)
              ok[j] = f.allowed({row}, key);
          }
          SmallVector<Value> p(kSub), next;
          Value acc = s0.back();
          if (spec.isSoftmax()) {
            Value mx = f.f32Const(kNegInf);
            for (int64_t j = 0; j < kSub; ++j)
              mx = arith::MaximumFOp::create(b, mx, f.maskedScore(s[j], ok[j]));
            SoftmaxStep step = f.softmaxStep(s0[0], mx);
            Value sum = f.f32Const(0.0);
            for (int64_t j = 0; j < kSub; ++j) {
              p[j] = f.softmaxWeight(s[j], step.shift, ok[j]);
              sum = arith::AddFOp::create(b, sum, p[j]);
            }
            acc = arith::MulFOp::create(b, acc, broadcast(step.alpha, dvPart));
            next = {step.max, f.softmaxSum(s0[1], step.alpha, sum)};
          } else {
            for (int64_t j = 0; j < kSub; ++j)
              p[j] = f.pointwiseWeight(s[j], ok[j]);
          }
          for (int64_t j = 0; j < kSub; ++j) {
            Value vv =
                f.toF32(f.vectorLoad(VectorType::get({dvPart}, vElem), vShared,
                                     ValueRange{f.add(j0, j), e0}, f.valueDim));
            // A masked key's weight (0) must not multiply its value: an
            // inf or NaN there reaches no row that does not see the key.
            if (masked)
              vv = dropValue(b, isZeroWeight(b, p[j]), vv);
            acc = vector::FMAOp::create(b, broadcast(p[j], dvPart), vv, acc);
          }
          next.push_back(acc);
          return next;
        });
    gpu::BarrierOp::create(b);
    return out;
  }

  void store(ValueRange st) {
    Value inv = spec.isSoftmax() ? f.rowFactor(st[1], st[0]) : f.rowFactor({});
    Value acc = arith::MulFOp::create(b, st.back(), broadcast(inv, dvPart));
    Value e0 = arith::MulIOp::create(b, part, f.idx(dvPart));
    acc = f.applyGate(acc, row, e0);
    // The row's threads hold the same log-sum-exp; the first stores it.
    Value lse = spec.results.lse ? f.logSumExp(st[1], st[0]) : Value();
    f.ifThen(f.rowInside(row), [&] {
      f.storeOutput(acc, row, e0);
      if (lse)
        f.ifThen(f.lt(part, 1), [&] { f.storeLse(lse, row); });
    });
  }
};

//===----------------------------------------------------------------------===//
// Tensor-core (mma.sync m16n8k16) kernel
//===----------------------------------------------------------------------===//

/// Fragments of mma.sync m16n8k16 come from MLIR's layout (MmaFragment.h):
/// a lane's slots 2r and 2r + 1 are neighbours along a row (A, C) or a
/// column (B), so each pair is one 2-element access, and the accumulators
/// of two n8 tiles of S are the A fragment of one k16 step of P V (both
/// checked by unittests/MmaFragmentTest.cpp). With g = lane / 4 and
/// t = lane % 4 (PTX ISA, "Matrix fragments for mma.m16n8k16"):
///   A (16x16) vector<4x2>: [0] row g, cols 2t..2t+1;  [1] row g+8, same;
///                          [2] row g, cols 2t+8..;    [3] row g+8, same
///   B (16x8)  vector<2x2>: [0] rows 2t..2t+1, col g;  [1] rows 2t+8.., col g
///   C (16x8)  vector<2x2>: [0] row g, cols 2t..2t+1;  [1] row g+8, same
class MmaGen : public GpuGen {
public:
  using GpuGen::GpuGen;

  SmallVector<Value> build() {
    elem = cast<ShapedType>(spec.query.getType()).getElementType();
    // Rows padded by 16 bytes: the fragment loads of 8 rows x 4 lanes then
    // hit 32 different banks.
    kRow = f.headDim + 8;
    vRow = f.valueDim + 8;
    return launch(
        {sharedType(f.blockK, kRow, elem), sharedType(f.blockK, vRow, elem)},
        [&] { kernel(); });
  }

private:
  int64_t kRow = 0, vRow = 0; ///< padded shared row lengths
  Type elem;                  ///< f16 or bf16
  /// This lane's fragment coordinates, (row, col) per slot.
  using Coords = SmallVector<std::pair<Value, Value>>;
  Coords aAt, bAt, cAt;
  /// The two query rows of this lane's accumulators, and the rows read
  /// (clamped).
  std::array<Value, 2> rows, rowsRead;

  VectorType vec(ArrayRef<int64_t> shape, Type e) {
    return VectorType::get(shape, e);
  }
  Value zeroAcc() {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vec({2, 2}, f.f32), b.getF32FloatAttr(0.0)));
  }
  Value mma(Value a, Value bb, Value c) {
    return nvgpu::MmaSyncOp::create(b, a, bb, c, ArrayRef<int64_t>{16, 8, 16});
  }
  /// A vector<Nx2xelem> from N vector<2xelem> pieces.
  Value stack(ArrayRef<Value> pieces) {
    auto type = vec({static_cast<int64_t>(pieces.size()), 2},
                    cast<VectorType>(pieces[0].getType()).getElementType());
    Value v = arith::ConstantOp::create(b, b.getZeroAttr(type));
    for (auto [i, p] : llvm::enumerate(pieces))
      v = vector::InsertOp::create(b, p, v,
                                   ArrayRef<int64_t>{static_cast<int64_t>(i)});
    return v;
  }
  Value pair(Value x, Value y) {
    return vector::FromElementsOp::create(
        b, vec({2}, getElementTypeOrSelf(x.getType())), ValueRange{x, y});
  }

  void kernel() {
    Value lane = f.rem(tid, 32);
    for (auto [operand, coords] : {std::make_pair(MmaOperand::A, &aAt),
                                   std::make_pair(MmaOperand::B, &bAt),
                                   std::make_pair(MmaOperand::C, &cAt)})
      for (int64_t s = 0; s < mmaSlots(operand); ++s)
        coords->push_back(mmaCoordinate(b, operand, lane, s));
    Value warpRow = f.add(f.firstQuery, f.mul(f.div(tid, 32), 16));
    for (int64_t i = 0; i < 2; ++i) {
      rows[i] = f.add(warpRow, cAt[2 * i].first);
      rowsRead[i] = f.queryRow(rows[i]);
    }

    // Q fragments, one per 16 of D, loaded once: slots 2r, 2r + 1 of A.
    SmallVector<Value> qa;
    for (int64_t ks = 0; ks < f.headDim / 16; ++ks) {
      SmallVector<Value> pieces;
      for (int64_t r = 0; r < 4; ++r) {
        auto [row, col] = aAt[2 * r];
        Value q = f.queryRow(f.add(warpRow, row));
        pieces.push_back(f.vectorLoad(
            vec({2}, elem), f.queryBuf,
            ValueRange{f.batch, f.head, q, f.add(col, 16 * ks)}, f.headDim));
      }
      qa.push_back(stack(pieces));
    }

    // State: m0 m1 l0 l1 (softmax), then the Dv/8 output accumulators.
    SmallVector<Value> state;
    if (spec.isSoftmax())
      state = {f.f32Const(kNegInf), f.f32Const(kNegInf), f.f32Const(0.0),
               f.f32Const(0.0)};
    for (int64_t e = 0; e < f.valueDim / 8; ++e)
      state.push_back(zeroAcc());
    store(f.visitTile(state, [&](Value k0, bool masked, ValueRange st) {
      return block(qa, k0, masked, st);
    }));
  }

  SmallVector<Value> block(ArrayRef<Value> qa, Value k0, bool masked,
                           ValueRange st) {
    loadBlock(f.keyBuf, kShared, f.headDim, kRow, k0);
    loadBlock(f.valueBuf, vShared, f.valueDim, vRow, k0);
    gpu::BarrierOp::create(b);
    int64_t nTiles = f.blockK / 8;

    // S = Q K^T, n8 tiles of keys; s[n][i][j]: row i, key n*8 + 2t + j.
    using Quad = std::array<std::array<Value, 2>, 2>;
    SmallVector<Quad> s(nTiles), ok(nTiles);
    for (int64_t n = 0; n < nTiles; ++n) {
      // B = K^T: element (d, key) is kShared[key][d].
      Value c = zeroAcc();
      for (int64_t ks = 0; ks < f.headDim / 16; ++ks) {
        SmallVector<Value> pieces;
        for (int64_t r = 0; r < 2; ++r) {
          auto [d, key] = bAt[2 * r];
          pieces.push_back(f.vectorLoad(
              vec({2}, elem), kShared,
              ValueRange{f.add(key, n * 8), f.add(d, 16 * ks)}, kRow));
        }
        c = mma(qa[ks], stack(pieces), c);
      }
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          Value x = vector::ExtractOp::create(b, c, ArrayRef<int64_t>{i, j});
          x = arith::MulFOp::create(b, x, f.f32Const(spec.scale));
          Value key = f.add(k0, f.add(cAt[2 * i + j].second, n * 8));
          if (f.biasBuf)
            x = arith::AddFOp::create(
                b, x, f.loadBias({rowsRead[i]}, f.keyRow(key, /*clamp=*/true)));
          x = f.modifyScore(x, {rows[i]}, key, f.alibiSlope({rows[i]}));
          s[n][i][j] = x;
          if (masked)
            ok[n][i][j] = f.allowed({rows[i]}, key);
        }
    }

    // P in place of S; rescale the accumulators (softmax).
    SmallVector<Value> next;
    SmallVector<Value> accs(st.take_back(f.valueDim / 8));
    if (spec.isSoftmax()) {
      std::array<Value, 2> alpha, sum;
      for (int64_t i = 0; i < 2; ++i) {
        Value mx = f.f32Const(kNegInf);
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t j = 0; j < 2; ++j)
            mx = arith::MaximumFOp::create(
                b, mx, f.maskedScore(s[n][i][j], ok[n][i][j]));
        // The quad shares the row: the frame combines its maxima.
        SoftmaxStep step = f.softmaxStep(st[i], mx);
        alpha[i] = step.alpha;
        sum[i] = f.f32Const(0.0);
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t j = 0; j < 2; ++j) {
            s[n][i][j] = f.softmaxWeight(s[n][i][j], step.shift, ok[n][i][j]);
            sum[i] = arith::AddFOp::create(b, sum[i], s[n][i][j]);
          }
        next.push_back(step.max);
      }
      // l stays a per-lane partial sum (alpha is uniform in the quad); the
      // quad's partials are combined once, in the epilogue.
      for (int64_t i = 0; i < 2; ++i)
        next.push_back(f.softmaxSum(st[2 + i], alpha[i], sum[i]));
      Value scaleRows =
          stack({pair(alpha[0], alpha[0]), pair(alpha[1], alpha[1])});
      for (Value &a : accs)
        a = arith::MulFOp::create(b, a, scaleRows);
    } else {
      for (int64_t n = 0; n < nTiles; ++n)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            s[n][i][j] = f.pointwiseWeight(s[n][i][j], ok[n][i][j]);
    }

    // O += P V: the C fragments of key tiles 2kk and 2kk+1 are the A
    // fragment of the k16 step kk.
    SmallVector<Value> pa;
    for (int64_t kk = 0; kk < f.blockK / 16; ++kk) {
      auto half = [&](int64_t n, int64_t i) {
        return f.fromF32(pair(s[n][i][0], s[n][i][1]), elem);
      };
      pa.push_back(stack({half(2 * kk, 0), half(2 * kk, 1), half(2 * kk + 1, 0),
                          half(2 * kk + 1, 1)}));
    }
    // B = V: element (key, e) is vShared[key][e].
    for (int64_t e = 0; e < f.valueDim / 8; ++e) {
      for (int64_t kk = 0; kk < f.blockK / 16; ++kk) {
        auto at = [&](int64_t slot) {
          auto [key, col] = bAt[slot];
          return memref::LoadOp::create(
              b, vShared, ValueRange{f.add(key, 16 * kk), f.add(col, 8 * e)});
        };
        Value bv = stack({pair(at(0), at(1)), pair(at(2), at(3))});
        accs[e] = mma(pa[kk], bv, accs[e]);
      }
    }
    next.append(accs.begin(), accs.end());
    gpu::BarrierOp::create(b);
    return next;
  }

  void store(ValueRange st) {
    ValueRange accs = st.take_back(f.valueDim / 8);
    for (int64_t i = 0; i < 2; ++i) {
      Value inv =
          spec.isSoftmax() ? f.rowFactor(st[2 + i], st[i]) : f.rowFactor({});
      Value invPair = vector::BroadcastOp::create(b, vec({2}, f.f32), inv);
      for (int64_t e = 0; e < f.valueDim / 8; ++e) {
        Value o = vector::ExtractOp::create(b, accs[e], ArrayRef<int64_t>{i});
        o = arith::MulFOp::create(b, o, invPair);
        Value col = f.add(cAt[2 * i].second, e * 8);
        o = f.applyGate(o, rows[i], col);
        f.ifThen(f.rowInside(rows[i]), [&] { f.storeOutput(o, rows[i], col); });
      }
      // The quad's lanes hold the same log-sum-exp of the row (after the
      // shuffles, which all of them take); the lane with column 0 stores it.
      if (spec.results.lse) {
        Value lse = f.logSumExp(st[2 + i], st[i]);
        f.ifThen(f.rowInside(rows[i]), [&] {
          f.ifThen(f.lt(cAt[2 * i].second, 1),
                   [&] { f.storeLse(lse, rows[i]); });
        });
      }
    }
  }
};

} // namespace

SmallVector<Value> mlir::attn::buildGpuKernel(ImplicitLocOpBuilder &b,
                                              const KernelSpec &spec,
                                              const GpuKernelPlan &plan,
                                              const BlockLayout *layout) {
  if (plan.kind == GpuKernelPlan::Kind::Mma) {
    GpuTarget quad(/*keyPartitions=*/4);
    KernelFrame frame(b, spec, layout, plan.blockQ, plan.blockK, quad);
    return MmaGen(frame, plan).build();
  }
  // The threads of a SIMT row split D, not the keys: each holds whole
  // scores.
  GpuTarget row(/*keyPartitions=*/1);
  KernelFrame frame(b, spec, layout, plan.blockQ, plan.blockK, row);
  return SimtGen(frame, plan).build();
}
