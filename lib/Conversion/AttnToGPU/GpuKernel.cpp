//===- GpuKernel.cpp - Fused attention kernels for NVIDIA GPUs ------------===//
//
// See GpuKernel.h for the kernels' structure. Conventions here:
//  - every loop and branch is uniform across a thread block (rows past the
//    queries compute on the last row and do not store), so barriers and
//    shuffles are always reached by every thread;
//  - arithmetic is f32; loads extend and stores truncate element types.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToGPU/GpuKernel.h"

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"
#include "attn-opt/Conversion/AttnToLinalg/TensorBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::attn;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

static int64_t byteWidth(Type t) {
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

GpuKernelPlan mlir::attn::planGpuKernel(const TileKernelSpec &spec,
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
    plan.blockQ = 64;
    // K and V blocks (rows padded by 8 elements) within 48 KiB.
    int64_t rowBytes = (d.headDim + 8 + d.valueDim + 8) * 2;
    plan.blockK = 64;
    while (plan.blockK > 16 && plan.blockK * rowBytes > 48 * 1024)
      plan.blockK /= 2;
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
    plan.blockQ = plan.threads / t;
    // With qk-layernorm, K is normalized up front into f32.
    int64_t kBytes = spec.qkNormEps ? 4 : byteWidth(k);
    int64_t rowBytes = d.headDim * kBytes + d.valueDim * byteWidth(v);
    plan.blockK = 64;
    while (plan.blockK > 16 && plan.blockK * rowBytes > 40 * 1024)
      plan.blockK /= 2;
  }
  if (blockK > 0)
    plan.blockK = blockK;
  plan.sharedBytes = gpuKernelSharedBytes(spec, plan);
  return plan;
}

int64_t mlir::attn::gpuKernelSharedBytes(const TileKernelSpec &spec,
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
// The shared frame
//===----------------------------------------------------------------------===//

namespace {

struct GpuGen : KernelDims {
  ImplicitLocOpBuilder &b;
  const TileKernelSpec &spec;
  const GpuKernelPlan &plan;
  const BlockLayout &layout;

  int64_t Bq, Nb, NT;
  Type f32, idxT;
  Value qM, kM, vM, biasM, gateM, segQM, segKM, outM;
  KernelTables tables;

  // Inside the launch.
  Value tid, tileIdx, h, bIdx, kh, q0;
  Value kS, vS; // shared-memory K and V blocks

  GpuGen(ImplicitLocOpBuilder &b, const TileKernelSpec &spec,
         const GpuKernelPlan &plan, const BlockLayout &layout)
      : KernelDims(spec.dims, layout), b(b), spec(spec), plan(plan),
        layout(layout) {
    Bq = plan.blockQ;
    Nb = plan.blockK;
    NT = plan.threads;
    f32 = b.getF32Type();
    idxT = b.getIndexType();
  }

  //===------------------------------------------------------------------===//
  // Small builders
  //===------------------------------------------------------------------===//

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value fc(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value i32c(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, x, idx(y)); }
  Value minIdx(Value x, int64_t bound) {
    return arith::MinSIOp::create(b, x, idx(bound));
  }
  Value lt(Value x, int64_t bound) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, idx(bound));
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value exp(Value x) { return math::ExpOp::create(b, x); }

  /// f32 (or vector of f32) from any float element type.
  Value toF32(Value v) {
    Type t = getElementTypeOrSelf(v.getType());
    if (t.isF32())
      return v;
    Type target = f32;
    if (auto vt = dyn_cast<VectorType>(v.getType()))
      target = vt.clone(f32);
    return arith::ExtFOp::create(b, target, v);
  }
  Value fromF32(Value v, Type elem) {
    if (elem.isF32())
      return v;
    Type target = elem;
    if (auto vt = dyn_cast<VectorType>(v.getType()))
      target = vt.clone(elem);
    return arith::TruncFOp::create(b, target, v);
  }
  static Type elementOf(Value memref) {
    return cast<MemRefType>(memref.getType()).getElementType();
  }

  /// An scf.for whose body returns the next iteration values.
  SmallVector<Value>
  forLoop(Value lb, Value ub, int64_t step, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto loop = scf::ForOp::create(
        b, lb, ub, idx(step), init,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(b, body(iv, args));
        });
    return SmallVector<Value>(loop.getResults());
  }
  void forEach(int64_t lb, int64_t ub, int64_t step,
               function_ref<void(Value)> body) {
    forLoop(idx(lb), idx(ub), step, {}, [&](Value iv, ValueRange) {
      body(iv);
      return SmallVector<Value>();
    });
  }
  void ifThen(Value cond, function_ref<void()> body) {
    scf::IfOp::create(b, cond, [&](OpBuilder &, Location) {
      body();
      scf::YieldOp::create(b);
    });
  }

  /// Vector load/store with the alignment the layout guarantees.
  Value vload(VectorType type, Value mem, ValueRange at, int64_t align) {
    auto op = vector::LoadOp::create(b, type, mem, at);
    if (align > 1)
      op.setAlignment(align);
    return op;
  }
  void vstore(Value v, Value mem, ValueRange at, int64_t align) {
    auto op = vector::StoreOp::create(b, v, mem, at);
    if (align > 1)
      op.setAlignment(align);
  }
  /// The alignment of `count` elements of `elem` at element offsets that
  /// are multiples of `count` in rows of `rowLen` elements.
  static int64_t alignmentOf(Type elem, int64_t count, int64_t rowLen) {
    int64_t bytes = count * byteWidth(elem);
    int64_t align = 1;
    while (align * 2 <= std::min<int64_t>(bytes, 16) && bytes % (align * 2) == 0 &&
           (rowLen * byteWidth(elem)) % (align * 2) == 0)
      align *= 2;
    return align;
  }

  /// XOR butterfly over `width` adjacent lanes (a power of two).
  Value shuffleXor(Value v, int64_t offset) {
    auto s = gpu::ShuffleOp::create(b, v, i32c(offset), i32c(32),
                                    gpu::ShuffleMode::XOR);
    return s.getShuffleResult();
  }
  Value butterflySum(Value v, int64_t width) {
    for (int64_t o = 1; o < width; o *= 2)
      v = fadd(v, shuffleXor(v, o));
    return v;
  }
  Value butterflyMax(Value v, int64_t width) {
    for (int64_t o = 1; o < width; o *= 2)
      v = fmax(v, shuffleXor(v, o));
    return v;
  }

  //===------------------------------------------------------------------===//
  // Buffers and tables (host side, before the launch)
  //===------------------------------------------------------------------===//

  Value buffer(Value tensor) { return readOnlyBuffer(b, tensor); }

  void prepare() {
    qM = buffer(spec.query);
    Value key = spec.key;
    if (spec.qkNormEps) { // K normalized once, up front.
      TensorBuilder tb(b);
      key = layerNorm(tb, key, *spec.qkNormEps);
    }
    kM = buffer(key);
    vM = buffer(spec.value);
    biasM = buffer(spec.bias);
    gateM = buffer(spec.gate);
    segQM = buffer(spec.querySegments);
    segKM = buffer(spec.keySegments ? spec.keySegments : spec.querySegments);
    Type outElem = cast<ShapedType>(spec.resultType).getElementType();
    outM = memref::AllocOp::create(b, MemRefType::get({B, Hq, Lq, Dv}, outElem));
    tables = KernelTables::build(b, layout, Lk, spec.mask);
  }

  //===------------------------------------------------------------------===//
  // Inside the kernel: indices, masks, shared-memory blocks
  //===------------------------------------------------------------------===//

  Value loadIndex(Value mem, Value at) {
    Value v = memref::LoadOp::create(b, mem, ValueRange{at});
    return arith::IndexCastOp::create(b, idxT, v);
  }

  /// i1: may query `q` of head h see key `k`? (Rows past the queries and
  /// keys past the keys read clamped ids; keys past the keys are masked.)
  Value allowed(Value q, Value k) {
    MaskEmitter emitter(
        spec.mask,
        [&](ImplicitLocOpBuilder &eb, const mask::Node &node, Value row,
            Value col) -> Value {
          // Rows past the queries and columns past the keys (a ragged last
          // block) read the last entry; their results are discarded.
          row = arith::MinSIOp::create(
              eb, row, arith::ConstantIndexOp::create(eb, node.rows - 1));
          col = arith::MinSIOp::create(
              eb, col, arith::ConstantIndexOp::create(eb, node.cols - 1));
          Value linear = arith::AddIOp::create(
              eb,
              arith::MulIOp::create(
                  eb, row, arith::ConstantIndexOp::create(eb, node.cols)),
              col);
          Value bit =
              memref::LoadOp::create(eb, tables.mask.at(&node), linear);
          Value zero = arith::ConstantOp::create(eb, eb.getI32IntegerAttr(0));
          return arith::CmpIOp::create(eb, arith::CmpIPredicate::ne, bit,
                                       zero);
        },
        [&](ImplicitLocOpBuilder &eb, Value qq, Value kk) -> Value {
          Value qi = arith::MinSIOp::create(
              eb, qq, arith::ConstantIndexOp::create(eb, Lq - 1));
          Value ki = arith::MinSIOp::create(
              eb, kk, arith::ConstantIndexOp::create(eb, Lk - 1));
          Value a = memref::LoadOp::create(eb, segQM, ValueRange{bIdx, qi});
          Value c = memref::LoadOp::create(eb, segKM, ValueRange{bIdx, ki});
          return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, a, c);
        });
    Value ok = emitter.emitAllowed(b, h, q, k);
    if (Lk % Nb != 0)
      ok = arith::AndIOp::create(b, ok, lt(k, Lk));
    return ok;
  }

  /// bias[b', h', q, k] as f32 (q and k already clamped).
  Value biasAt(Value q, Value k) {
    auto shape = cast<MemRefType>(biasM.getType()).getShape();
    Value bb = shape[0] == 1 ? idx(0) : bIdx;
    Value bh = shape[1] == 1 ? idx(0) : h;
    return toF32(memref::LoadOp::create(b, biasM, ValueRange{bb, bh, q, k}));
  }

  /// Copies keys [k0, k0 + Nb) of `src` (B x Hkv x L x width) into the
  /// shared block `dst` (Nb x rowLen), coalesced: consecutive threads copy
  /// consecutive chunks of up to 16 bytes. Keys past the end repeat the
  /// last key.
  void loadBlock(Value src, Value dst, int64_t width, int64_t rowLen,
                 Value k0) {
    Type elem = elementOf(src);
    int64_t vl = std::max<int64_t>(1, 16 / byteWidth(elem));
    while (vl > 1 && width % vl != 0)
      vl /= 2;
    int64_t perRow = width / vl, chunks = Nb * perRow;
    int64_t iters = (chunks + NT - 1) / NT;
    auto vt = VectorType::get({vl}, elem);
    int64_t srcAlign = alignmentOf(elem, vl, width);
    int64_t dstAlign = alignmentOf(elem, vl, rowLen);
    forEach(0, iters, 1, [&](Value i) {
      Value c = add(arith::MulIOp::create(b, i, idx(NT)), tid);
      auto body = [&] {
        Value j = div(c, perRow);
        Value d = mul(rem(c, perRow), vl);
        Value key = minIdx(add(k0, j), Lk - 1);
        Value v = vload(vt, src, ValueRange{bIdx, kh, key, d}, srcAlign);
        vstore(v, dst, ValueRange{j, d}, dstAlign);
      };
      if (chunks % NT == 0)
        body();
      else
        ifThen(lt(c, chunks), body);
    });
  }

  /// The smallest and largest segment id of positions [start, start+count).
  std::pair<Value, Value> idRange(Value ids, Value start, int64_t count,
                                  int64_t length) {
    Value first = memref::LoadOp::create(
        b, ids, ValueRange{bIdx, minIdx(start, length - 1)});
    SmallVector<Value> mm =
        forLoop(idx(1), idx(count), 1, {first, first}, [&](Value i, ValueRange r) {
          Value id = memref::LoadOp::create(
              b, ids, ValueRange{bIdx, minIdx(add(start, i), length - 1)});
          return SmallVector<Value>{arith::MinSIOp::create(b, r[0], id),
                                    arith::MaxSIOp::create(b, r[1], id)};
        });
    return {mm[0], mm[1]};
  }

  using BlockBody =
      function_ref<SmallVector<Value>(Value k0, bool masked, ValueRange)>;

  /// Runs `body` on the key blocks [offsets[at], offsets[at + 1]) of
  /// `list`, threading `state`; segment-bound masks skip blocks whose key
  /// ids cannot meet the tile's.
  SmallVector<Value> visitBlocks(Value offsets, Value list, Value at,
                                 bool masked, ValueRange state,
                                 std::optional<std::pair<Value, Value>> qIds,
                                 BlockBody body) {
    Value begin = loadIndex(offsets, at);
    Value end = loadIndex(offsets, add(at, 1));
    return forLoop(begin, end, 1, state, [&](Value i, ValueRange st) {
      Value k0 = mul(loadIndex(list, i), Nb);
      if (!qIds)
        return body(k0, masked, st);
      auto [kMin, kMax] = idRange(segKM, k0, Nb, Lk);
      Value overlap = arith::AndIOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, qIds->second,
                                kMin),
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, kMax,
                                qIds->first));
      auto ifOp = scf::IfOp::create(
          b, overlap,
          [&](OpBuilder &, Location) {
            scf::YieldOp::create(b, body(k0, masked, st));
          },
          [&](OpBuilder &, Location) { scf::YieldOp::create(b, st); });
      return SmallVector<Value>(ifOp.getResults());
    });
  }

  /// Launches the kernel; `body` emits the per-thread program given the
  /// launch's thread id and block ids.
  void launch(ArrayRef<Type> shared, function_ref<void()> body) {
    Value one = idx(1);
    auto op = gpu::LaunchOp::create(b, idx(numTiles), idx(Hq), idx(B), idx(NT),
                                    one, one, Value(), Type(), ValueRange{},
                                    TypeRange(shared));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&op.getBody().front());
    tid = op.getThreadIds().x;
    // Heaviest (causal: last) tiles first, for a shorter tail.
    tileIdx = arith::SubIOp::create(b, idx(numTiles - 1), op.getBlockIds().x);
    h = op.getBlockIds().y;
    bIdx = op.getBlockIds().z;
    kh = div(h, G);
    q0 = mul(tileIdx, Bq);
    ArrayRef<BlockArgument> attrs = op.getWorkgroupAttributions();
    kS = attrs[0];
    vS = attrs[1];
    body();
    gpu::TerminatorOp::create(b);
  }

  /// Where the tile's row of the layout starts in the offset tables.
  Value layoutRow() {
    Value lay = loadIndex(tables.headLayout, h);
    return add(arith::MulIOp::create(b, lay, idx(numTiles + 1)), tileIdx);
  }

  /// Visits the tile's full, then partial key blocks, threading `state`.
  SmallVector<Value> visitTile(ValueRange state, BlockBody body) {
    std::optional<std::pair<Value, Value>> qIds;
    if (spec.segmentsBound)
      qIds = idRange(segQM, q0, Bq, Lq);
    Value at = layoutRow();
    SmallVector<Value> s =
        visitBlocks(tables.fullOffsets, tables.fullBlocks, at, false, state,
                    qIds, body);
    return visitBlocks(tables.partialOffsets, tables.partialBlocks, at, true,
                       s, qIds, body);
  }

  Value finish() {
    auto outType = RankedTensorType::get(
        {B, Hq, Lq, Dv}, elementOf(outM));
    return bufferization::ToTensorOp::create(b, outType, outM,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  MemRefType sharedType(int64_t rows, int64_t cols, Type elem) {
    return MemRefType::get({rows, cols}, elem, MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  }
};

//===----------------------------------------------------------------------===//
// SIMT kernel
//===----------------------------------------------------------------------===//

struct SimtGen : GpuGen {
  using GpuGen::GpuGen;
  static constexpr int64_t kSub = 16; ///< keys per online-softmax step
  int64_t T = 1, Dp = 0, Dvp = 0;
  Value part, row, rowRead;

  Value build() {
    T = plan.rowThreads;
    Dp = D / T;
    Dvp = Dv / T;
    prepare();
    Type kElem = elementOf(kM), vElem = elementOf(vM);
    launch({sharedType(Nb, D, kElem), sharedType(Nb, Dv, vElem)},
           [&] { kernel(); });
    return finish();
  }

  void kernel() {
    part = rem(tid, T);
    row = add(q0, div(tid, T));
    rowRead = minIdx(row, Lq - 1);
    Value q = loadQuery();
    auto accType = VectorType::get({Dvp}, f32);
    Value acc = arith::ConstantOp::create(
        b, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0)));
    SmallVector<Value> state;
    if (spec.softmax)
      state = {fc(kNegInf), fc(0.0)};
    state.push_back(acc);
    store(visitTile(state, [&](Value k0, bool masked, ValueRange st) {
      return block(q, k0, masked, st);
    }));
  }

  /// This thread's slice of the (normalized, scaled) query row, f32.
  Value loadQuery() {
    Type elem = elementOf(qM);
    Value d0 = arith::MulIOp::create(b, part, idx(Dp));
    Value q = toF32(vload(VectorType::get({Dp}, elem), qM,
                          ValueRange{bIdx, h, rowRead, d0},
                          alignmentOf(elem, Dp, D)));
    auto vt = VectorType::get({Dp}, f32);
    auto splat = [&](Value s) { return vector::BroadcastOp::create(b, vt, s); };
    if (spec.qkNormEps) {
      auto sum = [&](Value v) {
        return butterflySum(
            vector::ReductionOp::create(b, vector::CombiningKind::ADD, v), T);
      };
      Value mean = fmul(sum(q), fc(1.0 / D));
      Value c = arith::SubFOp::create(b, q, splat(mean));
      Value var = fmul(sum(fmul(c, c)), fc(1.0 / D));
      Value inv = math::RsqrtOp::create(b, fadd(var, fc(*spec.qkNormEps)));
      q = fmul(c, splat(inv));
    }
    return fmul(q, splat(fc(spec.scale)));
  }

  SmallVector<Value> block(Value q, Value k0, bool masked, ValueRange st) {
    loadBlock(kM, kS, D, D, k0);
    loadBlock(vM, vS, Dv, Dv, k0);
    gpu::BarrierOp::create(b);
    Type kElem = elementOf(kM), vElem = elementOf(vM);
    int64_t kAlign = alignmentOf(kElem, Dp, D);
    int64_t vAlign = alignmentOf(vElem, Dvp, Dv);
    Value d0 = arith::MulIOp::create(b, part, idx(Dp));
    Value e0 = arith::MulIOp::create(b, part, idx(Dvp));
    auto accType = VectorType::get({Dvp}, f32);
    SmallVector<Value> out = forLoop(
        idx(0), idx(Nb), kSub, st, [&](Value j0, ValueRange s0) {
          SmallVector<Value> s, ok;
          for (int64_t j = 0; j < kSub; ++j) {
            Value r = add(j0, j);
            Value key = add(k0, r);
            Value kv = toF32(
                vload(VectorType::get({Dp}, kElem), kS, ValueRange{r, d0},
                      kAlign));
            Value dot = vector::ReductionOp::create(
                b, vector::CombiningKind::ADD, fmul(q, kv));
            dot = butterflySum(dot, T);
            if (biasM)
              dot = fadd(dot, biasAt(rowRead, minIdx(key, Lk - 1)));
            s.push_back(dot);
            if (masked)
              ok.push_back(allowed(row, key));
          }
          SmallVector<Value> p(kSub), next;
          Value acc = s0.back();
          if (spec.softmax) {
            Value m = s0[0], l = s0[1];
            Value mx = fc(kNegInf);
            for (int64_t j = 0; j < kSub; ++j)
              mx = fmax(mx, masked ? select(ok[j], s[j], fc(kNegInf)) : s[j]);
            Value mNew = fmax(m, mx);
            Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                               mNew, fc(kNegInf));
            Value mSafe = select(none, fc(0.0), mNew);
            Value alpha = exp(arith::SubFOp::create(b, m, mSafe));
            Value sum = fc(0.0);
            for (int64_t j = 0; j < kSub; ++j) {
              p[j] = exp(arith::SubFOp::create(b, s[j], mSafe));
              if (masked)
                p[j] = select(ok[j], p[j], fc(0.0));
              sum = fadd(sum, p[j]);
            }
            acc = fmul(acc, vector::BroadcastOp::create(b, accType, alpha));
            next = {mNew, fadd(fmul(l, alpha), sum)};
          } else {
            for (int64_t j = 0; j < kSub; ++j) {
              p[j] = fmul(applyPointwiseFn(b, spec.fn, s[j]),
                          fc(spec.lengthFactor));
              if (masked)
                p[j] = select(ok[j], p[j], fc(0.0));
            }
          }
          for (int64_t j = 0; j < kSub; ++j) {
            Value vv = toF32(vload(VectorType::get({Dvp}, vElem), vS,
                                   ValueRange{add(j0, j), e0}, vAlign));
            acc = vector::FMAOp::create(
                b, vector::BroadcastOp::create(b, accType, p[j]), vv, acc);
          }
          next.push_back(acc);
          return next;
        });
    gpu::BarrierOp::create(b);
    return out;
  }

  void store(ValueRange st) {
    Value acc = st.back();
    auto accType = VectorType::get({Dvp}, f32);
    if (spec.softmax) {
      Value l = st[1];
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, fc(0.0));
      Value inv = select(positive, arith::DivFOp::create(b, fc(1.0), l),
                         fc(0.0));
      acc = fmul(acc, vector::BroadcastOp::create(b, accType, inv));
    }
    Value e0 = arith::MulIOp::create(b, part, idx(Dvp));
    if (gateM) {
      Type g = elementOf(gateM);
      acc = fmul(acc, toF32(vload(VectorType::get({Dvp}, g), gateM,
                                  ValueRange{bIdx, h, rowRead, e0},
                                  alignmentOf(g, Dvp, Dv))));
    }
    Type oElem = elementOf(outM);
    Value o = fromF32(acc, oElem);
    ifThen(lt(row, Lq), [&] {
      vstore(o, outM, ValueRange{bIdx, h, row, e0},
             alignmentOf(oElem, Dvp, Dv));
    });
  }
};

//===----------------------------------------------------------------------===//
// Tensor-core (mma.sync m16n8k16) kernel
//===----------------------------------------------------------------------===//

/// Fragments per lane of mma.sync m16n8k16 (PTX ISA, "Matrix fragments for
/// mma.m16n8k16"), with g = lane / 4 and t = lane % 4:
///   A (16x16) vector<4x2>: [0] row g, cols 2t..2t+1;  [1] row g+8, same;
///                          [2] row g, cols 2t+8..;    [3] row g+8, same
///   B (16x8)  vector<2x2>: [0] rows 2t..2t+1, col g;  [1] rows 2t+8.., col g
///   C (16x8)  vector<2x2>: [0] row g, cols 2t..2t+1;  [1] row g+8, same
struct MmaGen : GpuGen {
  using GpuGen::GpuGen;
  int64_t KP = 0, VP = 0; ///< padded shared row lengths
  Type elem;              ///< f16 or bf16
  Value lane, g, t, r0, r1, rd0, rd1;

  Value build() {
    elem = cast<ShapedType>(spec.query.getType()).getElementType();
    // Rows padded by 16 bytes: the fragment loads of 8 rows x 4 lanes then
    // hit 32 different banks.
    KP = D + 8;
    VP = Dv + 8;
    prepare();
    launch({sharedType(Nb, KP, elem), sharedType(Nb, VP, elem)},
           [&] { kernel(); });
    return finish();
  }

  VectorType vec(ArrayRef<int64_t> shape, Type e) {
    return VectorType::get(shape, e);
  }
  Value zeroAcc() {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(vec({2, 2}, f32), b.getF32FloatAttr(0.0)));
  }
  Value mma(Value a, Value bb, Value c) {
    return nvgpu::MmaSyncOp::create(b, a, bb, c,
                                    ArrayRef<int64_t>{16, 8, 16});
  }
  /// A vector<Nx2xelem> from N vector<2xelem> pieces.
  Value stack(ArrayRef<Value> pieces) {
    auto type = vec({static_cast<int64_t>(pieces.size()), 2},
                    cast<VectorType>(pieces[0].getType()).getElementType());
    Value v = arith::ConstantOp::create(b, b.getZeroAttr(type));
    for (auto [i, p] : llvm::enumerate(pieces))
      v = vector::InsertOp::create(b, p, v, ArrayRef<int64_t>{(int64_t)i});
    return v;
  }
  Value pair(Value x, Value y) {
    return vector::FromElementsOp::create(b, vec({2}, getElementTypeOrSelf(x.getType())),
                                          ValueRange{x, y});
  }

  void kernel() {
    lane = rem(tid, 32);
    g = div(lane, 4);
    t = rem(lane, 4);
    Value warpRow = add(q0, mul(div(tid, 32), 16));
    r0 = add(warpRow, g);
    r1 = add(r0, 8);
    rd0 = minIdx(r0, Lq - 1);
    rd1 = minIdx(r1, Lq - 1);

    // Q fragments, one per 16 of D, loaded once.
    SmallVector<Value> qa;
    Value t2 = mul(t, 2);
    for (int64_t ks = 0; ks < D / 16; ++ks) {
      auto piece = [&](Value r, int64_t off) {
        return vload(vec({2}, elem), qM,
                     ValueRange{bIdx, h, r, add(t2, 16 * ks + off)},
                     alignmentOf(elem, 2, D));
      };
      qa.push_back(
          stack({piece(rd0, 0), piece(rd1, 0), piece(rd0, 8), piece(rd1, 8)}));
    }

    // State: m0 m1 l0 l1 (softmax), then the Dv/8 output accumulators.
    SmallVector<Value> state;
    if (spec.softmax)
      state = {fc(kNegInf), fc(kNegInf), fc(0.0), fc(0.0)};
    for (int64_t e = 0; e < Dv / 8; ++e)
      state.push_back(zeroAcc());
    store(visitTile(state, [&](Value k0, bool masked, ValueRange st) {
      return block(qa, k0, masked, st);
    }));
  }

  SmallVector<Value> block(ArrayRef<Value> qa, Value k0, bool masked,
                           ValueRange st) {
    loadBlock(kM, kS, D, KP, k0);
    loadBlock(vM, vS, Dv, VP, k0);
    gpu::BarrierOp::create(b);
    Value t2 = mul(t, 2);
    int64_t nTiles = Nb / 8;

    // S = Q K^T, n8 tiles of keys; s[n][i][j]: row r_i, key n*8 + 2t + j.
    SmallVector<std::array<std::array<Value, 2>, 2>> s(nTiles);
    SmallVector<std::array<std::array<Value, 2>, 2>> ok(nTiles);
    Value rows[2] = {r0, r1}, rowsRead[2] = {rd0, rd1};
    for (int64_t n = 0; n < nTiles; ++n) {
      Value c = zeroAcc();
      Value kr = add(g, n * 8);
      for (int64_t ks = 0; ks < D / 16; ++ks) {
        Value b0 = vload(vec({2}, elem), kS, ValueRange{kr, add(t2, 16 * ks)},
                         4);
        Value b1 = vload(vec({2}, elem), kS,
                         ValueRange{kr, add(t2, 16 * ks + 8)}, 4);
        c = mma(qa[ks], stack({b0, b1}), c);
      }
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          Value x = vector::ExtractOp::create(b, c, ArrayRef<int64_t>{i, j});
          x = fmul(x, fc(spec.scale));
          Value key = add(k0, add(t2, n * 8 + j));
          if (biasM)
            x = fadd(x, biasAt(rowsRead[i], minIdx(key, Lk - 1)));
          s[n][i][j] = x;
          if (masked)
            ok[n][i][j] = allowed(rows[i], key);
        }
    }

    // P in place of S; rescale the accumulators (softmax).
    SmallVector<Value> next;
    SmallVector<Value> accs(st.take_back(Dv / 8));
    if (spec.softmax) {
      Value alpha[2], sum[2];
      for (int64_t i = 0; i < 2; ++i) {
        Value mx = fc(kNegInf);
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t j = 0; j < 2; ++j)
            mx = fmax(mx, masked ? select(ok[n][i][j], s[n][i][j], fc(kNegInf))
                                 : s[n][i][j]);
        mx = butterflyMax(mx, 4); // the quad shares the row
        Value m = st[i];
        Value mNew = fmax(m, mx);
        Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew,
                                           fc(kNegInf));
        Value mSafe = select(none, fc(0.0), mNew);
        alpha[i] = exp(arith::SubFOp::create(b, m, mSafe));
        sum[i] = fc(0.0);
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t j = 0; j < 2; ++j) {
            Value p = exp(arith::SubFOp::create(b, s[n][i][j], mSafe));
            if (masked)
              p = select(ok[n][i][j], p, fc(0.0));
            s[n][i][j] = p;
            sum[i] = fadd(sum[i], p);
          }
        next.push_back(mNew);
      }
      // l stays a per-lane partial sum (alpha is uniform in the quad); the
      // quad's partials are added once, at the end.
      next.push_back(fadd(fmul(st[2], alpha[0]), sum[0]));
      next.push_back(fadd(fmul(st[3], alpha[1]), sum[1]));
      Value scaleRows = stack({pair(alpha[0], alpha[0]), pair(alpha[1], alpha[1])});
      for (Value &a : accs)
        a = fmul(a, scaleRows);
    } else {
      for (int64_t n = 0; n < nTiles; ++n)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            Value p = fmul(applyPointwiseFn(b, spec.fn, s[n][i][j]),
                           fc(spec.lengthFactor));
            if (masked)
              p = select(ok[n][i][j], p, fc(0.0));
            s[n][i][j] = p;
          }
    }

    // O += P V: the C fragments of key tiles 2kk and 2kk+1 are the A
    // fragment of the k16 step kk.
    SmallVector<Value> pa;
    for (int64_t kk = 0; kk < Nb / 16; ++kk) {
      auto half = [&](int64_t n, int64_t i) {
        return fromF32(pair(s[n][i][0], s[n][i][1]), elem);
      };
      pa.push_back(stack({half(2 * kk, 0), half(2 * kk, 1),
                          half(2 * kk + 1, 0), half(2 * kk + 1, 1)}));
    }
    for (int64_t e = 0; e < Dv / 8; ++e) {
      Value col = add(g, e * 8);
      for (int64_t kk = 0; kk < Nb / 16; ++kk) {
        auto at = [&](int64_t off) {
          return memref::LoadOp::create(
              b, vS, ValueRange{add(t2, 16 * kk + off), col});
        };
        Value bv = stack({pair(at(0), at(1)), pair(at(8), at(9))});
        accs[e] = mma(pa[kk], bv, accs[e]);
      }
    }
    next.append(accs.begin(), accs.end());
    gpu::BarrierOp::create(b);
    return next;
  }

  void store(ValueRange st) {
    Value inv[2] = {fc(1.0), fc(1.0)};
    if (spec.softmax)
      for (int64_t i = 0; i < 2; ++i) {
        Value l = butterflySum(st[2 + i], 4);
        Value positive =
            arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, fc(0.0));
        inv[i] = select(positive, arith::DivFOp::create(b, fc(1.0), l),
                        fc(0.0));
      }
    ValueRange accs = st.take_back(Dv / 8);
    Type oElem = elementOf(outM);
    Value rows[2] = {r0, r1}, rowsRead[2] = {rd0, rd1};
    Value t2 = mul(t, 2);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t e = 0; e < Dv / 8; ++e) {
        Value o = vector::ExtractOp::create(b, accs[e], ArrayRef<int64_t>{i});
        o = fmul(o, vector::BroadcastOp::create(b, vec({2}, f32), inv[i]));
        Value col = add(t2, e * 8);
        if (gateM) {
          Type ge = elementOf(gateM);
          o = fmul(o, toF32(vload(vec({2}, ge), gateM,
                                  ValueRange{bIdx, h, rowsRead[i], col},
                                  alignmentOf(ge, 2, Dv))));
        }
        Value out = fromF32(o, oElem);
        ifThen(lt(rows[i], Lq), [&] {
          vstore(out, outM, ValueRange{bIdx, h, rows[i], col},
                 alignmentOf(oElem, 2, Dv));
        });
      }
  }
};

} // namespace

Value mlir::attn::buildGpuKernel(ImplicitLocOpBuilder &b,
                                 const TileKernelSpec &spec,
                                 const GpuKernelPlan &plan,
                                 const BlockLayout &layout) {
  if (plan.kind == GpuKernelPlan::Kind::Mma) {
    MmaGen gen(b, spec, plan, layout);
    return gen.build();
  }
  SimtGen gen(b, spec, plan, layout);
  return gen.build();
}
