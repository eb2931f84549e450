//===- KernelFrame.cpp - The frame of the fused attention kernels ---------===//

#include "attn-opt/Conversion/AttnKernel/KernelFrame.h"

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

KernelTarget::~KernelTarget() = default;

KernelFrame::KernelFrame(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                         const BlockLayout *layout, int64_t blockQ,
                         int64_t blockK, const KernelTarget &target)
    : KernelArith(b), spec(spec), layout(layout), target(target),
      blockQ(blockQ), blockK(blockK) {
  const AttentionDims &d = spec.dims;
  queryHeads = d.queryHeads;
  group = d.groupSize();
  headDim = d.headDim;
  valueDim = d.valueDim;
  f32 = b.getF32Type();
  assert((layout != nullptr) == spec.hasStaticLayout() &&
         "a compile-time layout exactly when the spec has one");
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

Value KernelFrame::paddedDistances(TensorBuilder &tb) {
  ArrayRef<int64_t> es = cast<ShapedType>(spec.posEmb.getType()).getShape();
  int64_t heads = es[0], distances = es[1];
  relPad = blockQ + blockK;
  SmallVector<int64_t> shape = {heads, headDim, relPad + distances + blockQ};
  if (distances == 0) // (no distance: nothing to read)
    return tb.filled(shape, 0.0);
  Value emb = spec.posEmb;
  // rel[h, d, c] = emb[h, c - pad, d] where that is a distance, else 0.
  return tb.generic(
      {}, {}, tb.empty(shape, f32), tb.map(3, {0, 1, 2}), "ppp",
      [&](ImplicitLocOpBuilder &bb, ValueRange) -> Value {
        Value h = linalg::IndexOp::create(bb, 0);
        Value d = linalg::IndexOp::create(bb, 1);
        Value r =
            arith::SubIOp::create(bb, linalg::IndexOp::create(bb, 2),
                                  arith::ConstantIndexOp::create(bb, relPad));
        Value inside = arith::AndIOp::create(
            bb,
            arith::CmpIOp::create(bb, arith::CmpIPredicate::sge, r,
                                  arith::ConstantIndexOp::create(bb, 0)),
            arith::CmpIOp::create(
                bb, arith::CmpIPredicate::slt, r,
                arith::ConstantIndexOp::create(bb, distances)));
        Value at = arith::MinSIOp::create(
            bb,
            arith::MaxSIOp::create(bb, r,
                                   arith::ConstantIndexOp::create(bb, 0)),
            arith::ConstantIndexOp::create(bb, distances - 1));
        Value x = tb.toF32(
            bb, tensor::ExtractOp::create(bb, emb, ValueRange{h, at, d}));
        return arith::SelectOp::create(
            bb, inside, x,
            arith::ConstantOp::create(bb, bb.getF32FloatAttr(0.0)));
      });
}

void KernelFrame::prepare() {
  TensorBuilder tb(b);
  prepareOperandBuffers(tb);
  prepareSizes();
  Type outElem = prepareOutputBuffers();
  prepareTables(outElem);
}

void KernelFrame::prepareInputs() {
  TensorBuilder tb(b);
  prepareOperandBuffers(tb);
  prepareSizes();
  prepareTables(Type());
}

void KernelFrame::prepareSizes() {
  batchSize = dim(queryBuf, 0);
  queryLen = dim(queryBuf, 2);
  keyLen = pageTableBuf ? mul(dim(pageTableBuf, 1), pageSize) : dim(keyBuf, 2);
}

void KernelFrame::prepareOperandBuffers(TensorBuilder &tb) {
  bool convert = target.readsF32Operands();
  auto buffer = [&](Value tensor) {
    if (tensor && convert)
      tensor = toF32Tensor(tb, tensor);
    return readOnlyBuffer(b, tensor);
  };
  // Q, K and V of the CPU kernels (f32, read element by element) may be
  // strided views of the tensors a graph rearranged into them.
  auto view = [&](Value tensor) {
    if (convert && cast<ShapedType>(tensor.getType()).getElementType().isF32())
      return readOnlyView(b, tensor);
    return buffer(tensor);
  };
  // (Q in its own element type: the kernels extend it as they load it.)
  queryBuf = cast<ShapedType>(spec.query.getType()).getElementType().isF32()
                 ? view(spec.query)
                 : readOnlyBuffer(b, spec.query);
  Value key = spec.key;
  if (spec.qkNormEps) // K is normalized once, up front.
    key = layerNorm(tb, key, *spec.qkNormEps);
  // (K and V in their own element type, when the target converts them as
  // it loads them; a normalized key is f32 already.)
  keyBuf = kvInElementType ? readOnlyBuffer(b, key) : view(key);
  valueBuf = kvInElementType ? readOnlyBuffer(b, spec.value) : view(spec.value);
  biasBuf = buffer(spec.modifiers.bias);
  gateBuf = buffer(spec.modifiers.gate);
  slopeBuf = readOnlyBuffer(b, spec.modifiers.alibiSlopes);
  pageTableBuf = readOnlyBuffer(b, spec.paging.pageTable);
  if (pageTableBuf)
    pageSize = cast<ShapedType>(spec.key.getType()).getDimSize(2);
  sinkBuf = readOnlyBuffer(b, spec.modifiers.sinks);
  if (Value m = spec.masking.tensor)
    prepareMaskBuffer(tb, m, convert);
  if (spec.isRelative()) {
    contentBiasBuf = buffer(spec.contentBias);
    positionBiasBuf = buffer(spec.positionBias);
    relBuf = readOnlyBuffer(b, paddedDistances(tb));
  }
  querySegmentBuf = readOnlyBuffer(b, spec.segments.query);
  keySegmentBuf = readOnlyBuffer(b, spec.segments.key);
  queryLengthBuf = readOnlyBuffer(b, spec.sequences.queryLengths);
  keyLengthBuf = readOnlyBuffer(b, spec.sequences.keyLengths);
  queryOffsetBuf = readOnlyBuffer(b, spec.sequences.queryOffsets);
  keyOffsetBuf = readOnlyBuffer(b, spec.sequences.keyOffsets);
  // The regions' captured tensors, flattened (the kernels index them by
  // linear offsets, gathering along the query lanes).
  for (Value c : spec.regions.captures) {
    auto type = cast<RankedTensorType>(c.getType());
    SmallVector<Value> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(type.isDynamicDim(d)
                         ? tensor::DimOp::create(b, c, d).getResult()
                         : idx(type.getDimSize(d)));
    Value flat = c;
    if (type.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(
          b, c,
          ArrayRef<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))});
    captureBufs.push_back(readOnlyBuffer(b, flat));
    captureDims.push_back(std::move(dims));
  }
}

CaptureAccess KernelFrame::captureAccess() {
  CaptureAccess access;
  access.dim = [this](ImplicitLocOpBuilder &, unsigned c, unsigned d) -> Value {
    return captureDims[c][d];
  };
  access.read = [this](ImplicitLocOpBuilder &eb, unsigned c,
                       ValueRange at) -> Value {
    auto vec = dyn_cast<VectorType>(at[0].getType());
    Value linear = captureOffset(c, at);
    Value buf = captureBufs[c];
    Type elem = cast<MemRefType>(buf.getType()).getElementType();
    if (!vec)
      return memref::LoadOp::create(eb, buf, linear);
    auto result = VectorType::get(vec.getShape(), elem);
    Value all = arith::ConstantOp::create(
        eb, DenseElementsAttr::get(vec.clone(eb.getI1Type()),
                                   eb.getBoolAttr(true)));
    Value zero = arith::ConstantOp::create(
        eb, DenseElementsAttr::get(result, eb.getZeroAttr(elem)));
    return vector::GatherOp::create(
        eb, result, buf, ValueRange{arith::ConstantIndexOp::create(eb, 0)},
        linear, all, zero);
  };
  return access;
}

Value KernelFrame::captureOffset(unsigned c, ValueRange at) {
  auto vec = dyn_cast<VectorType>(at[0].getType());
  Value linear = at[0];
  for (size_t d = 1; d < at.size(); ++d) {
    Value size = captureDims[c][d];
    if (vec)
      size = vector::BroadcastOp::create(b, vec, size);
    linear =
        arith::AddIOp::create(b, arith::MulIOp::create(b, linear, size), at[d]);
  }
  return linear;
}

SmallVector<Value, 4> KernelFrame::regionIndices(QueryRows rows, Value q,
                                                 Value k) {
  auto asIndex = [&](Value v) -> Value {
    if (auto vec = dyn_cast<VectorType>(v.getType()))
      return vec.getElementType().isIndex()
                 ? v
                 : Value(arith::IndexCastOp::create(
                       b, vec.clone(b.getIndexType()), v));
    return v.getType().isIndex()
               ? v
               : Value(arith::IndexCastOp::create(b, b.getIndexType(), v));
  };
  Value h = rows.heads ? asIndex(rows.heads) : head;
  return {batch, h, asIndex(q), asIndex(k)};
}

MaskEmitter::TileKind KernelFrame::regionTileKind(Value k0) {
  Value q1 = sub(minIdx(add(firstQuery, blockQ), seqQueryLen), idx(1));
  Value k1 = sub(minIdx(add(k0, blockK), seqKeyLen), idx(1));
  return emitMaskTileKind(b, *spec.maskProgram, batch, head, firstQuery, q1, k0,
                          k1, captureAccess());
}

void KernelFrame::prepareMaskBuffer(TensorBuilder &tb, Value m, bool convert) {
  auto maskType = cast<RankedTensorType>(m.getType());
  if (maskType.getElementType().isInteger(1) && convert) {
    // The CPU reads a boolean mask as the bytes it is stored in (the LLVM
    // lowering stores an i1 element in a byte; vectors of i1 would be
    // packed into bits): its buffer reinterpreted as i8, the two memref
    // types having the same descriptor (a pair of casts through the
    // descriptor struct, folded by reconcile-unrealized-casts). No
    // converted copy, which cost a pass over L x L bytes and a fresh
    // buffer's page faults per call.
    MLIRContext *ctx = b.getContext();
    auto i64 = b.getI64Type();
    auto dims = LLVM::LLVMArrayType::get(i64, maskType.getRank());
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto descriptor =
        LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, i64, dims, dims});
    Value bits = readOnlyBuffer(b, m);
    Value raw =
        UnrealizedConversionCastOp::create(b, descriptor, bits).getResult(0);
    maskBuf = UnrealizedConversionCastOp::create(
                  b, MemRefType::get(maskType.getShape(), b.getI8Type()), raw)
                  .getResult(0);
  } else if (maskType.getElementType().isInteger(1)) {
    // Bytes rather than i1, whose vectors LLVM packs into bits.
    Type i8 = b.getI8Type();
    m = tb.elementwise(
        {m},
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          return arith::ExtUIOp::create(bb, i8, a[0]);
        },
        i8);
    maskBuf = readOnlyBuffer(b, m);
  } else {
    maskBuf = readOnlyBuffer(b, toF32Tensor(tb, m));
  }
}

Type KernelFrame::prepareOutputBuffers() {
  // (The output in the result type: storeOutput rounds as it stores.)
  Type outElem = cast<ShapedType>(spec.results.output).getElementType();
  auto outType = MemRefType::get(
      {spec.dims.batch, queryHeads, spec.dims.queryLen, valueDim}, outElem);
  SmallVector<Value> dynamicSizes;
  if (outType.isDynamicDim(0))
    dynamicSizes.push_back(batchSize);
  if (outType.isDynamicDim(2))
    dynamicSizes.push_back(queryLen);
  outputBuf =
      spec.outputView
          ? spec.outputView
          : memref::AllocOp::create(b, outType, dynamicSizes).getResult();
  if (spec.results.lse)
    lseBuf = memref::AllocOp::create(
        b,
        MemRefType::get({spec.dims.batch, queryHeads, spec.dims.queryLen}, f32),
        dynamicSizes);
  return outElem;
}

void KernelFrame::prepareTables(Type outElem) {
  if (layout) {
    tables = KernelTables::build(b, *layout, spec.dims.keyLen, spec.mask);
    numTiles = idx(layout->getNumQueryBlocks());
    boundKeys = spec.dims.keyLen % blockK != 0;
    return;
  }
  // Sizes known at run time: block tables of the mask only (no layout), and
  // every key bounded by its sequence's length.
  tables = KernelTables::build(b, spec.mask);
  boundKeys = true;
  if (spec.sequences.isVarlen() && outputBuf) {
    // Rows no sequence covers (padding) are zeros.
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(outElem));
    linalg::FillOp::create(b, ValueRange{zero}, ValueRange{outputBuf});
    if (lseBuf)
      linalg::FillOp::create(b, ValueRange{f32Const(kNegInf)},
                             ValueRange{lseBuf});
  }
  if (!spec.sequences.isPacked()) {
    numTiles = arith::CeilDivUIOp::create(b, queryLen, idx(blockQ));
    return;
  }
  preparePackedTiles();
}

void KernelFrame::preparePackedTiles() {
  auto [starts, count] = packedTiles(queryOffsetBuf, blockQ);
  tileStartBuf = starts;
  numTiles = count;
}

std::pair<Value, Value> KernelFrame::packedTiles(Value offsets, int64_t block) {
  // A packed batch: the tiles of every sequence, one after the other;
  // starts[s] is the first tile of sequence s, starts[N] their count.
  // (The deallocation pipeline frees the buffer.)
  // The offsets are read only once the run-time checks hold (they may be
  // empty or decreasing otherwise); a failed check leaves no tiles.
  Value n = memref::DimOp::create(b, offsets, 0);
  Value starts = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getIndexType()),
      ValueRange{arith::MaxUIOp::create(b, n, idx(1))});
  auto countTiles = [&]() -> Value {
    memref::StoreOp::create(b, idx(0), starts, ValueRange{idx(0)});
    return forLoop(idx(1), n, 1, {idx(0)}, [&](Value s, ValueRange acc) {
      Value len =
          sub(loadIndex(offsets, s), loadIndex(offsets, sub(s, idx(1))));
      Value total = add(acc[0], arith::CeilDivUIOp::create(b, len, idx(block)));
      memref::StoreOp::create(b, total, starts, ValueRange{s});
      return SmallVector<Value>{total};
    })[0];
  };
  if (!spec.runtimeOk)
    return {starts, countTiles()};
  Value count = scf::IfOp::create(
                    b, spec.runtimeOk,
                    [&](OpBuilder &, Location) {
                      scf::YieldOp::create(b, ValueRange{countTiles()});
                    },
                    [&](OpBuilder &, Location) {
                      scf::YieldOp::create(b, ValueRange{idx(0)});
                    })
                    .getResult(0);
  return {starts, count};
}

void KernelFrame::guarded(function_ref<void()> body) {
  if (!spec.runtimeOk) {
    body();
    return;
  }
  Value ok = spec.runtimeOk;
  ifThen(ok, body);
}

Value KernelFrame::finish() {
  auto bufType = cast<MemRefType>(outputBuf.getType());
  auto outType =
      RankedTensorType::get(bufType.getShape(), bufType.getElementType());
  Value out = bufferization::ToTensorOp::create(b, outType, outputBuf,
                                                /*restrict=*/true,
                                                /*writable=*/true);
  Type resultElem = cast<ShapedType>(spec.results.output).getElementType();
  if (bufType.getElementType() == resultElem)
    return out;
  TensorBuilder tb(b);
  return fromF32Tensor(tb, out, resultElem);
}

Value KernelFrame::finishLse() {
  if (!lseBuf)
    return Value();
  auto bufType = cast<MemRefType>(lseBuf.getType());
  return bufferization::ToTensorOp::create(
      b, RankedTensorType::get(bufType.getShape(), f32), lseBuf,
      /*restrict=*/true, /*writable=*/true);
}

//===----------------------------------------------------------------------===//
// The walk over the layout
//===----------------------------------------------------------------------===//

Value KernelFrame::sequenceOfTile(Value tileIdx) {
  return sequenceOf(tileStartBuf, tileIdx);
}

Value KernelFrame::firstTileOf(Value s) {
  return memref::LoadOp::create(b, tileStartBuf, ValueRange{s});
}

Value KernelFrame::sequenceOf(Value starts, Value tileIdx) {
  // The last s with starts[s] <= tileIdx, by bisection over [0, N).
  Value n = sub(memref::DimOp::create(b, starts, 0), idx(1));
  SmallVector<Value> range =
      forLoop(idx(0), idx(32), 1, {idx(0), n}, [&](Value, ValueRange lh) {
        Value mid = div(add(lh[0], lh[1]), 2);
        Value start = memref::LoadOp::create(b, starts, ValueRange{mid});
        Value below =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ule, start, tileIdx);
        Value narrow = lt(add(lh[0], 1), lh[1]);
        Value goUp = arith::AndIOp::create(b, narrow, below);
        Value goDown = arith::AndIOp::create(
            b, narrow,
            arith::XOrIOp::create(
                b, below, arith::ConstantOp::create(b, b.getBoolAttr(true))));
        return SmallVector<Value>{
            arith::SelectOp::create(b, goUp, mid, lh[0]),
            arith::SelectOp::create(b, goDown, mid, lh[1])};
      });
  return range[0];
}

void KernelFrame::forTile(Value batchIdx, Value headIdx, Value tileIdx,
                          function_ref<void()> body) {
  batch = batchIdx;
  head = headIdx;
  kvHead = div(headIdx, group);
  queryBase = keyBase = idx(0);
  seqQueryLen = queryLen;
  seqKeyLen = keyLen;
  tile = tileIdx;
  if (spec.sequences.isPacked()) {
    Value s = sequenceOfTile(tileIdx);
    tile = sub(tileIdx, memref::LoadOp::create(b, tileStartBuf, ValueRange{s}));
    Value s1 = add(s, 1);
    queryBase = loadIndex(queryOffsetBuf, s);
    keyBase = loadIndex(keyOffsetBuf, s);
    seqQueryLen = sub(loadIndex(queryOffsetBuf, s1), queryBase);
    seqKeyLen = sub(loadIndex(keyOffsetBuf, s1), keyBase);
  } else {
    if (queryLengthBuf)
      seqQueryLen = loadIndex(queryLengthBuf, batchIdx);
    if (keyLengthBuf)
      seqKeyLen = loadIndex(keyLengthBuf, batchIdx);
  }
  firstQuery = mul(tile, blockQ);
  if (!layout)
    maskOffset = sub(seqKeyLen, seqQueryLen);
  if (!spec.isSoftmax() && !layout) {
    // L^-alpha of this sequence's key length.
    Value len = arith::IndexCastOp::create(b, b.getI64Type(), seqKeyLen);
    lengthFactor = math::PowFOp::create(b, arith::SIToFPOp::create(b, f32, len),
                                        f32Const(-spec.alpha));
  }
  if (spec.sequences.isVarlen() && !spec.sequences.isPacked())
    ifThen(lt(firstQuery, seqQueryLen), body); // padding-only tiles skipped
  else
    body();
}

std::pair<Value, Value> KernelFrame::idRange(Value ids, Value start,
                                             int64_t count, Value length) {
  Value last = sub(length, idx(1));
  Value first =
      memref::LoadOp::create(b, ids, ValueRange{batch, minIdx(start, last)});
  SmallVector<Value> range = forLoop(
      idx(1), idx(count), 1, {first, first}, [&](Value i, ValueRange r) {
        Value id = memref::LoadOp::create(
            b, ids, ValueRange{batch, minIdx(add(start, i), last)});
        return SmallVector<Value>{arith::MinSIOp::create(b, r[0], id),
                                  arith::MaxSIOp::create(b, r[1], id)};
      });
  return {range[0], range[1]};
}

/// Whether entries `v` of the mask buffer (f32 additive or i8 boolean; a
/// scalar or a vector) allow their key: above -inf, or not 0.
static Value maskAllows(ImplicitLocOpBuilder &b, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  Value bound = arith::ConstantOp::create(
      b, elem.isF32() ? TypedAttr(b.getF32FloatAttr(kNegInf))
                      : TypedAttr(b.getI8IntegerAttr(0)));
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    bound = vector::BroadcastOp::create(b, vt, bound);
  if (elem.isF32())
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, v, bound);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, v, bound);
}

void KernelFrame::classifyMaskBlocks() {
  if (!maskBuf || spec.sequences.isVarlen() || spec.sequences.isPacked())
    return;
  auto type = cast<MemRefType>(maskBuf.getType());
  if (llvm::any_of(type.getShape().drop_back(2),
                   [](int64_t d) { return d != 1; }))
    return;
  Value queryBlocks = arith::CeilDivUIOp::create(b, queryLen, idx(blockQ));
  Value keyBlocks = arith::CeilDivUIOp::create(b, keyLen, idx(blockK));
  // (The deallocation pipeline frees the table.)
  Value kinds = memref::AllocOp::create(
      b,
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                      b.getI8Type()),
      ValueRange{queryBlocks, keyBlocks});
  scf::ParallelOp::create(
      b, ValueRange{idx(0), idx(0)}, ValueRange{queryBlocks, keyBlocks},
      ValueRange{idx(1), idx(1)}, [&](OpBuilder &, Location, ValueRange ivs) {
        // The block as the tiles see it (batch and head are not indices
        // of such a mask).
        auto [any, all] =
            classifyMaskBlock(idx(0), idx(0), mul(ivs[0], blockQ), queryLen,
                              mul(ivs[1], blockK), keyLen);
        Type i8 = b.getI8Type();
        Value kind = arith::OrIOp::create(
            b, arith::ExtUIOp::create(b, i8, any),
            arith::ShLIOp::create(
                b, arith::ExtUIOp::create(b, i8, all),
                arith::ConstantOp::create(b, b.getI8IntegerAttr(1))));
        memref::StoreOp::create(b, kind, kinds, ivs);
        scf::ReduceOp::create(b);
      });
  maskKinds = kinds;
}

std::pair<Value, Value> KernelFrame::maskTensorTileKind(Value k0) {
  if (!maskKinds)
    return classifyMaskBlock(batch, head, firstQuery, seqQueryLen, k0,
                             seqKeyLen);
  Value kind = memref::LoadOp::create(
      b, maskKinds, ValueRange{div(firstQuery, blockQ), div(k0, blockK)});
  auto bit = [&](int64_t v) -> Value {
    Value c = arith::ConstantOp::create(b, b.getI8IntegerAttr(v));
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne, arith::AndIOp::create(b, kind, c),
        arith::ConstantOp::create(b, b.getI8IntegerAttr(0)));
  };
  return {bit(1), bit(2)};
}

std::pair<Value, Value> KernelFrame::classifyMaskBlock(Value batchIdx,
                                                       Value headIdx, Value q0,
                                                       Value qLen, Value k0,
                                                       Value kLen) {
  auto type = cast<MemRefType>(maskBuf.getType());
  Type elem = type.getElementType();
  bool additive = elem.isF32();
  Value rowEnd = minIdx(add(q0, blockQ), qLen);
  Value keyEnd = minIdx(add(k0, blockK), kLen);
  // Each row of the block as vectors of `width` entries: whether the entry
  // allows its key, and whether it allows it adding 0 (boolean masks: the
  // same).
  auto classify = [&](Value v) -> std::pair<Value, Value> {
    Value allows = maskAllows(b, v);
    if (!additive)
      return {allows, allows};
    Value neutral = arith::CmpFOp::create(
        b, arith::CmpFPredicate::OEQ, v,
        vector::BroadcastOp::create(b, v.getType(), f32Const(0.0)));
    return {allows, neutral};
  };
  auto reduce = [&](Value any, Value all) {
    return std::pair<Value, Value>{
        vector::ReductionOp::create(b, vector::CombiningKind::OR, any),
        vector::ReductionOp::create(b, vector::CombiningKind::AND, all)};
  };
  auto rowAt = [&](Value row, Value k) {
    return biasIndices(type.getShape(), idx(0), batchIdx, headIdx, row, k);
  };

  // A whole block (the usual case): one vector per row, combined across the
  // rows lane by lane and reduced once.
  auto wholeBlock = [&]() -> SmallVector<Value> {
    auto vt = VectorType::get({blockK}, elem);
    auto bits = VectorType::get({blockK}, b.getI1Type());
    Value none =
        arith::ConstantOp::create(b, DenseElementsAttr::get(bits, false));
    Value every =
        arith::ConstantOp::create(b, DenseElementsAttr::get(bits, true));
    SmallVector<Value> acc =
        forLoop(q0, rowEnd, 1, {none, every}, [&](Value row, ValueRange a) {
          Value v = vector::LoadOp::create(b, vt, maskBuf, rowAt(row, k0));
          auto [allows, neutral] = classify(v);
          return SmallVector<Value>{arith::OrIOp::create(b, a[0], allows),
                                    arith::AndIOp::create(b, a[1], neutral)};
        });
    auto [any, all] = reduce(acc[0], acc[1]);
    return {any, all};
  };
  // A ragged block (past the end of the keys): element by element.
  auto raggedBlock = [&]() -> SmallVector<Value> {
    Value f = arith::ConstantOp::create(b, b.getBoolAttr(false));
    Value t = arith::ConstantOp::create(b, b.getBoolAttr(true));
    auto one = VectorType::get({1}, elem);
    return forLoop(q0, rowEnd, 1, {f, t}, [&](Value row, ValueRange a) {
      return forLoop(k0, keyEnd, 1, {a[0], a[1]}, [&](Value k, ValueRange c) {
        Value v = vector::LoadOp::create(b, one, maskBuf, rowAt(row, k));
        auto [allows, neutral] = classify(v);
        auto [any, all] = reduce(allows, neutral);
        return SmallVector<Value>{arith::OrIOp::create(b, c[0], any),
                                  arith::AndIOp::create(b, c[1], all)};
      });
    });
  };
  Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                      sub(keyEnd, k0), idx(blockK));
  auto ifWhole = scf::IfOp::create(
      b, whole,
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, wholeBlock()); },
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, raggedBlock()); });
  return {ifWhole.getResult(0), ifWhole.getResult(1)};
}

SmallVector<Value>
KernelFrame::visitBlock(Value k0, bool masked, ValueRange state,
                        std::optional<std::pair<Value, Value>> qIds,
                        BlockBody body) {
  // A partial block of the compile-time layout whose mask region reads
  // run-time data (captured tensors, the batch row): classified again by
  // the region's interval analysis over that data, skipped when empty.
  if (masked && layout && spec.maskProgram && !refiningRegion &&
      (spec.maskProgram->readsCaptures || spec.maskProgram->readsBatch)) {
    MaskEmitter::TileKind kind = regionTileKind(k0);
    refiningRegion = true;
    SmallVector<Value> next = ifThenElseKeep(kind.any, state, [&] {
      return visitBlock(k0, masked, state, qIds, body);
    });
    refiningRegion = false;
    return next;
  }
  if (maskBuf) {
    // The mask tensor's block: skipped when it allows nothing, masked
    // unless it allows everything (and adds 0).
    std::pair<Value, Value> kind = maskTensorTileKind(k0);
    Value any = kind.first, all = kind.second;
    auto visit = [&](bool m) {
      return [&, m](OpBuilder &, Location) {
        scf::YieldOp::create(b, visitSegmentBound(k0, m, state, qIds, body));
      };
    };
    auto skip = [&](OpBuilder &, Location) { scf::YieldOp::create(b, state); };
    if (masked) {
      auto ifAny = scf::IfOp::create(b, any, visit(true), skip);
      return SmallVector<Value>(ifAny.getResults());
    }
    auto ifAny = scf::IfOp::create(
        b, any,
        [&](OpBuilder &, Location) {
          auto ifAll = scf::IfOp::create(b, all, visit(false), visit(true));
          scf::YieldOp::create(b, ifAll.getResults());
        },
        skip);
    return SmallVector<Value>(ifAny.getResults());
  }
  return visitSegmentBound(k0, masked, state, qIds, body);
}

SmallVector<Value>
KernelFrame::visitSegmentBound(Value k0, bool masked, ValueRange state,
                               std::optional<std::pair<Value, Value>> qIds,
                               BlockBody body) {
  if (!qIds)
    return body(k0, masked, state);
  auto [kMin, kMax] = idRange(keySegmentBuf, k0, blockK, seqKeyLen);
  Value overlap = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::sge, qIds->second, kMin),
      arith::CmpIOp::create(b, arith::CmpIPredicate::sge, kMax, qIds->first));
  return ifThenElseKeep(overlap, state,
                        [&] { return body(k0, masked, state); });
}

SmallVector<Value> KernelFrame::visitBlocks(
    Value offsets, Value list, Value at, bool masked, ValueRange state,
    std::optional<std::pair<Value, Value>> qIds, BlockBody body) {
  Value begin = loadIndex(offsets, at);
  Value end = loadIndex(offsets, add(at, 1));
  return forLoop(begin, end, 1, state, [&](Value i, ValueRange st) {
    Value k0 = mul(loadIndex(list, i), blockK);
    return visitBlock(k0, masked, st, qIds, body);
  });
}

std::optional<std::pair<Value, Value>> KernelFrame::tileQueryIds() {
  if (!spec.segments.bound)
    return std::nullopt;
  return idRange(querySegmentBuf, firstQuery, blockQ, seqQueryLen);
}

std::pair<Value, Value> KernelFrame::tileQueries() {
  // (Rows past the sequence are dropped.)
  return {firstQuery,
          sub(minIdx(add(firstQuery, blockQ), seqQueryLen), idx(1))};
}

MaskEmitter KernelFrame::runtimeEmitter() {
  MaskEmitter::CustomLookup region;
  if (spec.maskProgram)
    region.tileKind = [this](ImplicitLocOpBuilder &eb, const mask::Node &,
                             Value q0, Value q1, Value k0,
                             Value k1) -> MaskEmitter::TileKind {
      return emitMaskTileKind(eb, *spec.maskProgram, batch, head, q0, q1, k0,
                              k1, captureAccess());
    };
  return MaskEmitter(spec.mask, {}, {}, region);
}

SmallVector<Value>
KernelFrame::visitClassified(MaskEmitter &emitter, Value kb, ValueRange state,
                             std::optional<std::pair<Value, Value>> qIds,
                             BlockBody body) {
  auto [q0, q1] = tileQueries();
  Value k0 = mul(kb, blockK);
  Value kEnd = minIdx(add(k0, blockK), seqKeyLen);
  MaskEmitter::TileKind kind =
      emitter.emitTileKind(b, head, q0, q1, k0, sub(kEnd, idx(1)), maskOffset);
  // A block reaching past the sequence's keys needs their bound.
  Value whole = lt(add(k0, blockK - 1), seqKeyLen);
  Value full = arith::AndIOp::create(b, kind.all, whole);
  auto ifFull = scf::IfOp::create(
      b, full,
      [&](OpBuilder &, Location) {
        scf::YieldOp::create(b, visitBlock(k0, false, state, qIds, body));
      },
      [&](OpBuilder &, Location) {
        auto ifAny = scf::IfOp::create(
            b, kind.any,
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(b, visitBlock(k0, true, state, qIds, body));
            },
            [&](OpBuilder &, Location) { scf::YieldOp::create(b, state); });
        scf::YieldOp::create(b, ifAny.getResults());
      });
  return SmallVector<Value>(ifFull.getResults());
}

SmallVector<Value>
KernelFrame::visitRuntimeBlocks(ValueRange state,
                                std::optional<std::pair<Value, Value>> qIds,
                                BlockBody body) {
  MaskEmitter emitter = runtimeEmitter();
  auto [q0, q1] = tileQueries();
  // Key blocks the pattern can reach, within the sequence.
  Value kbBegin = idx(0);
  Value kbEnd = arith::CeilDivUIOp::create(b, seqKeyLen, idx(blockK));
  if (std::optional<std::pair<Value, Value>> range =
          emitter.emitKeyRange(b, head, q0, q1, maskOffset)) {
    Value lo = maxIdx(range->first, idx(0));
    // (hi + blockK) floordiv blockK: the block after the one holding hi,
    // which may be negative.
    Value hiNext =
        arith::FloorDivSIOp::create(b, add(range->second, blockK), idx(blockK));
    kbBegin = div(lo, blockK);
    kbEnd = minIdx(kbEnd, maxIdx(hiNext, kbBegin));
  }
  return forLoop(kbBegin, kbEnd, 1, state, [&](Value kb, ValueRange st) {
    return visitClassified(emitter, kb, st, qIds, body);
  });
}

SmallVector<Value> KernelFrame::visitKeyBlockAtRuntime(Value kb,
                                                       ValueRange state,
                                                       BlockBody body) {
  assert(!layout && "blocks classified at run time");
  std::optional<std::pair<Value, Value>> qIds = tileQueryIds();
  MaskEmitter emitter = runtimeEmitter();
  // (Blocks past the sequence's keys hold none.)
  return ifThenElseKeep(lt(mul(kb, blockK), seqKeyLen), state, [&] {
    return visitClassified(emitter, kb, state, qIds, body);
  });
}

SmallVector<Value> KernelFrame::visitKeyBlock(Value kb, bool masked,
                                              ValueRange state,
                                              BlockBody body) {
  assert(layout && "the key blocks of a compile-time layout");
  std::optional<std::pair<Value, Value>> qIds = tileQueryIds();
  return visitBlock(mul(kb, blockK), masked, state, qIds, body);
}

SmallVector<Value> KernelFrame::visitTile(ValueRange state, BlockBody body) {
  std::optional<std::pair<Value, Value>> qIds = tileQueryIds();
  if (!layout)
    return visitRuntimeBlocks(state, qIds, body);
  Value lay = loadIndex(tables.headLayout, head);
  Value at = add(arith::MulIOp::create(b, lay, add(numTiles, 1)), tile);
  SmallVector<Value> s = visitBlocks(tables.fullOffsets, tables.fullBlocks, at,
                                     /*masked=*/false, state, qIds, body);
  return visitBlocks(tables.partialOffsets, tables.partialBlocks, at,
                     /*masked=*/true, s, qIds, body);
}

//===----------------------------------------------------------------------===//
// Rows
//===----------------------------------------------------------------------===//

Value KernelFrame::queryRow(Value row) {
  Value last = maxIdx(sub(seqQueryLen, idx(1)), idx(0));
  return add(queryBase, minIdx(row, last));
}

Value KernelFrame::keyRow(Value key, bool clamp) {
  if (clamp)
    key = minIdx(key, maxIdx(sub(seqKeyLen, idx(1)), idx(0)));
  return add(keyBase, key);
}

SmallVector<Value, 3> KernelFrame::kvAt(Value keyRow) {
  if (!pageTableBuf)
    return {batch, kvHead, keyRow};
  Value page = memref::LoadOp::create(b, pageTableBuf,
                                      ValueRange{batch, div(keyRow, pageSize)});
  return {arith::IndexCastOp::create(b, b.getIndexType(), page), kvHead,
          rem(keyRow, pageSize)};
}

Value KernelFrame::rowInside(Value row) { return lt(row, seqQueryLen); }

Value KernelFrame::rowsInside(QueryRows rows) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                               lanePositions(rows),
                               splatI32(seqQueryLen, rows.lanes));
}

std::pair<Value, Value> KernelFrame::sequenceLengths(Value batchIdx) {
  assert(!spec.sequences.isPacked() && "the lengths of a batch row");
  Value lq = queryLengthBuf ? loadIndex(queryLengthBuf, batchIdx) : queryLen;
  Value lk = keyLengthBuf ? loadIndex(keyLengthBuf, batchIdx) : keyLen;
  return {lq, lk};
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

Value KernelFrame::splatI32(Value index, int64_t lanes) {
  return vector::BroadcastOp::create(
      b, VectorType::get({lanes}, b.getI32Type()),
      arith::IndexCastOp::create(b, b.getI32Type(), index));
}

Value KernelFrame::lanePositions(QueryRows rows) {
  if (rows.positions)
    return rows.positions;
  auto lanesI32 = VectorType::get({rows.lanes}, b.getI32Type());
  Value iota = arith::ConstantOp::create(
      b, DenseElementsAttr::get(lanesI32,
                                ArrayRef<int32_t>(llvm::to_vector(
                                    llvm::seq<int32_t>(0, rows.lanes)))));
  return arith::AddIOp::create(b, splatI32(rows.start, rows.lanes), iota);
}

KernelFrame::Positions KernelFrame::positionsOf(QueryRows rows, Value key,
                                                bool needOffset) {
  Positions p{rows.start, key, maskOffset};
  if (!p.offset && needOffset)
    p.offset = idx(spec.dims.keyLen - spec.dims.queryLen); // static lengths
  if (rows.lanes == 0)
    return p;
  p.query = lanePositions(rows);
  p.key = splatI32(key, rows.lanes);
  if (p.offset)
    p.offset = splatI32(p.offset, rows.lanes);
  return p;
}

Value KernelFrame::allowed(QueryRows rows, Value key) {
  bool isVector = rows.lanes > 0;
  VectorType lanesI32, lanesI1;
  if (isVector) {
    lanesI32 = VectorType::get({rows.lanes}, b.getI32Type());
    lanesI1 = VectorType::get({rows.lanes}, b.getI1Type());
  }
  auto [q, k, offset] = positionsOf(rows, key, /*needOffset=*/false);
  MaskEmitter emitter(
      spec.mask,
      [&](ImplicitLocOpBuilder &eb, const mask::Node &node, Value row,
          Value col) -> Value {
        // Rows past the queries (padding lanes) and columns past the keys (a
        // ragged last block) read the last entry; both are masked.
        Type t = row.getType();
        row = arith::MinSIOp::create(
            eb, row, MaskEmitter::constant(eb, t, node.rows - 1));
        col = arith::MinSIOp::create(
            eb, col, MaskEmitter::constant(eb, t, node.cols - 1));
        Value linear = arith::AddIOp::create(
            eb,
            arith::MulIOp::create(eb, row,
                                  MaskEmitter::constant(eb, t, node.cols)),
            col);
        Value zero = MaskEmitter::constant(
            eb, isVector ? Type(lanesI32) : Type(eb.getI32Type()), 0);
        Value bits;
        if (isVector) {
          Value allTrue = arith::ConstantOp::create(
              eb, DenseElementsAttr::get(lanesI1, eb.getBoolAttr(true)));
          bits = vector::GatherOp::create(
              eb, lanesI32, tables.mask.at(&node),
              ValueRange{arith::ConstantIndexOp::create(eb, 0)}, linear,
              allTrue, zero);
        } else {
          bits = memref::LoadOp::create(eb, tables.mask.at(&node), linear);
        }
        return arith::CmpIOp::create(eb, arith::CmpIPredicate::ne, bits, zero);
      },
      [&](ImplicitLocOpBuilder &eb, Value, Value) -> Value {
        // Query rows past the end read -1 (vectors) or the last id; keys
        // past the end read the last id. Both are masked.
        Type idType =
            cast<MemRefType>(querySegmentBuf.getType()).getElementType();
        Value kClamped = arith::MinSIOp::create(
            eb, key,
            arith::SubIOp::create(eb, seqKeyLen,
                                  arith::ConstantIndexOp::create(eb, 1)));
        Value kId = memref::LoadOp::create(eb, keySegmentBuf,
                                           ValueRange{batch, kClamped});
        Value qIds;
        if (isVector) {
          auto idVector = VectorType::get({rows.lanes}, idType);
          Value pad =
              arith::ConstantOp::create(eb, eb.getIntegerAttr(idType, -1));
          qIds = vector::TransferReadOp::create(eb, idVector, querySegmentBuf,
                                                ValueRange{batch, rows.start},
                                                pad, ArrayRef<bool>{false});
          kId = vector::BroadcastOp::create(eb, idVector, kId);
        } else {
          Value qClamped = arith::MinSIOp::create(
              eb, rows.start,
              arith::SubIOp::create(eb, seqQueryLen,
                                    arith::ConstantIndexOp::create(eb, 1)));
          qIds = memref::LoadOp::create(eb, querySegmentBuf,
                                        ValueRange{batch, qClamped});
        }
        return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, qIds, kId);
      },
      {[&](ImplicitLocOpBuilder &eb, const mask::Node &, Value rq,
           Value rk) -> Value {
         Value r = emitModRegion(eb, *spec.regions.maskMod,
                                 regionIndices(rows, rq, rk), captureAccess());
         if (isVector && !isa<VectorType>(r.getType()))
           r = vector::BroadcastOp::create(eb, lanesI1, r);
         return r;
       },
       {}});
  Value ok = emitter.emitAllowed(b, head, q, k, offset);
  // Keys past the end of the sequence (a ragged last block).
  if (boundKeys) {
    Value inRange = lt(key, seqKeyLen);
    if (isVector)
      inRange = vector::BroadcastOp::create(b, lanesI1, inRange);
    ok = arith::AndIOp::create(b, ok, inRange);
  }
  return ok;
}

/// Element (`rows`, `key`) of a bias-shaped buffer (`Lq x Lk` or
/// `{1 or B} x {1 or Hq} x Lq x Lk`), a vector along the queries when
/// `rows.lanes` > 0 (rows past the buffer read `pad`).
static Value loadAlongQueries(ImplicitLocOpBuilder &b, Value buf,
                              QueryRows rows, Value batch, Value head,
                              Value key, Attribute pad) {
  auto type = cast<MemRefType>(buf.getType());
  SmallVector<Value, 4> at =
      biasIndices(type.getShape(), arith::ConstantIndexOp::create(b, 0), batch,
                  head, rows.start, key);
  if (rows.lanes == 0)
    return memref::LoadOp::create(b, buf, at);
  int64_t rank = type.getRank();
  AffineMap alongQueries =
      AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 2));
  return vector::TransferReadOp::create(
      b, VectorType::get({rows.lanes}, type.getElementType()), buf, at,
      arith::ConstantOp::create(b, cast<TypedAttr>(pad)), alongQueries,
      ArrayRef<bool>{false});
}

Value KernelFrame::loadBias(QueryRows rows, Value key) {
  Type elem = cast<MemRefType>(biasBuf.getType()).getElementType();
  return toF32(loadAlongQueries(b, biasBuf, rows, batch, head, key,
                                b.getFloatAttr(elem, 0.0)));
}

std::pair<Value, Value> KernelFrame::loadMaskTensor(QueryRows rows, Value key) {
  Type elem = cast<MemRefType>(maskBuf.getType()).getElementType();
  bool additive = elem.isF32();
  Attribute pad = additive ? Attribute(b.getF32FloatAttr(kNegInf))
                           : Attribute(b.getI8IntegerAttr(0));
  Value v = loadAlongQueries(b, maskBuf, rows, batch, head, key, pad);
  return {additive ? v : Value(), maskAllows(b, v)};
}

Value KernelFrame::maskedScore(Value score, Value ok) {
  if (!ok)
    return score;
  return arith::SelectOp::create(b, ok, score, splat(score, kNegInf));
}

Value KernelFrame::alibiSlope(QueryRows rows) {
  if (!slopeBuf)
    return Value();
  if (rows.lanes == 0)
    return memref::LoadOp::create(b, slopeBuf, ValueRange{head});
  auto vf = VectorType::get({rows.lanes}, f32);
  if (!rows.heads)
    return vector::BroadcastOp::create(
        b, vf, memref::LoadOp::create(b, slopeBuf, ValueRange{head}));
  // Lanes of several heads (decode): each lane's slope.
  Value at = arith::IndexCastOp::create(
      b, VectorType::get({rows.lanes}, b.getIndexType()), rows.heads);
  Value all = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({rows.lanes}, b.getI1Type()),
                                b.getBoolAttr(true)));
  Value zero = arith::ConstantOp::create(
      b, DenseElementsAttr::get(vf, b.getF32FloatAttr(0.0)));
  return vector::GatherOp::create(b, vf, slopeBuf, ValueRange{idx(0)}, at, all,
                                  zero);
}

Value KernelFrame::modifyScore(Value score, QueryRows rows, Value key,
                               Value slope) {
  return modify(score, rows, key, slope, nullptr);
}

std::pair<Value, Value>
KernelFrame::modifyScoreWithDerivative(Value score, QueryRows rows, Value key,
                                       Value slope,
                                       ModifierTangents *tangents) {
  Value derivative;
  Value s = modify(score, rows, key, slope, &derivative, tangents);
  return {s, derivative};
}

Value KernelFrame::modify(Value score, QueryRows rows, Value key, Value slope,
                          Value *derivative, ModifierTangents *tangents) {
  // (ALiBi adds a constant: its derivative is 1.)
  if (derivative)
    *derivative = splat(score, 1.0);
  if (slope) {
    // -slope * |i + offset - j|, the distance as f32.
    auto [q, k, offset] = positionsOf(rows, key, /*needOffset=*/true);
    Value dist =
        arith::SubIOp::create(b, arith::AddIOp::create(b, q, offset), k);
    if (rows.lanes == 0)
      dist = arith::IndexCastOp::create(b, b.getI64Type(), dist);
    dist = math::AbsIOp::create(b, dist);
    Type distType = rows.lanes ? Type(VectorType::get({rows.lanes}, f32)) : f32;
    Value d = arith::SIToFPOp::create(b, distType, dist);
    score = arith::SubFOp::create(b, score, arith::MulFOp::create(b, slope, d));
    if (tangents)
      tangents->slope = arith::NegFOp::create(b, d);
  }
  if (spec.modifiers.softcap) {
    // cap * tanh(s / cap)
    Value t = math::TanhOp::create(
        b, arith::MulFOp::create(b, score,
                                 splat(score, 1.0 / *spec.modifiers.softcap)));
    score = arith::MulFOp::create(b, t, splat(score, *spec.modifiers.softcap));
    if (derivative) // d/ds cap tanh(s / cap) = 1 - tanh^2
      *derivative = arith::SubFOp::create(b, splat(t, 1.0),
                                          arith::MulFOp::create(b, t, t));
  }
  if (!spec.regions.scoreMod)
    return score;
  auto [q, k, offset] = positionsOf(rows, key, /*needOffset=*/false);
  SmallVector<Value, 5> args = {score};
  llvm::append_range(args, regionIndices(rows, q, k));
  auto vec = dyn_cast<VectorType>(score.getType());
  auto lanesOf = [&](Value v) -> Value {
    if (vec && !isa<VectorType>(v.getType()))
      return vector::BroadcastOp::create(b, vec, v);
    return v;
  };
  if (!derivative)
    return lanesOf(
        emitModRegion(b, *spec.regions.scoreMod, args, captureAccess()));
  auto [r, dr] = emitScoreModWithDerivative(
      b, *spec.regions.scoreMod, args, captureAccess(),
      tangents ? &tangents->captures : nullptr);
  *derivative = arith::MulFOp::create(b, lanesOf(dr), *derivative);
  return lanesOf(r);
}

//===----------------------------------------------------------------------===//
// Normalizers
//===----------------------------------------------------------------------===//

SoftmaxStep KernelFrame::softmaxStep(Value runningMax, Value blockMax) {
  blockMax = target.combineRow(b, blockMax, RowCombine::Max);
  SoftmaxStep step;
  step.max = arith::MaximumFOp::create(b, runningMax, blockMax);
  // While no key is allowed the maximum is -inf: shift by 0 instead, so
  // that exp(-inf - shift) is 0, not NaN.
  Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, step.max,
                                     splat(step.max, kNegInf));
  step.shift = arith::SelectOp::create(b, none, splat(step.max, 0.0), step.max);
  step.alpha = softmaxExp(b, arith::SubFOp::create(b, runningMax, step.shift));
  return step;
}

Value KernelFrame::softmaxWeight(Value score, Value shift, Value ok) {
  Value p = softmaxExp(b, arith::SubFOp::create(b, score, shift));
  if (!ok)
    return p;
  return arith::SelectOp::create(b, ok, p, splat(p, 0.0));
}

Value KernelFrame::softmaxSum(Value runningSum, Value alpha, Value blockSum) {
  return arith::AddFOp::create(b, arith::MulFOp::create(b, runningSum, alpha),
                               blockSum);
}

Value KernelFrame::lengthFactorLike(Value like) {
  if (!lengthFactor)
    return splat(like, spec.lengthFactor);
  if (isa<VectorType>(like.getType()))
    return vector::BroadcastOp::create(b, like.getType(), lengthFactor);
  return lengthFactor;
}

Value KernelFrame::pointwiseWeight(Value score, Value ok) {
  Value p = applyPointwiseFn(b, spec.fn, score);
  p = arith::MulFOp::create(b, p, lengthFactorLike(p));
  if (!ok)
    return p;
  return arith::SelectOp::create(b, ok, p, splat(p, 0.0));
}

//===----------------------------------------------------------------------===//
// Query rows and the epilogue
//===----------------------------------------------------------------------===//

Value KernelFrame::rowMean(Value sum) {
  return arith::MulFOp::create(b, sum, splat(sum, 1.0 / headDim));
}

Value KernelFrame::queryFactor(Value centeredSquares) {
  if (!centeredSquares)
    return f32Const(spec.scale);
  Value var = arith::MulFOp::create(b, centeredSquares,
                                    splat(centeredSquares, 1.0 / headDim));
  Value inv = math::RsqrtOp::create(
      b, arith::AddFOp::create(b, var, splat(var, *spec.qkNormEps)));
  return arith::MulFOp::create(b, inv, splat(inv, spec.scale));
}

Value KernelFrame::denominator(Value sum, Value max, Value rowHead) {
  Value l = target.combineRow(b, sum, RowCombine::Sum);
  if (sinkBuf) {
    // The sink's term of the denominator, exp(t - m): with no allowed key
    // (m = -inf) it is +inf and the row's factor 0, as without a sink.
    assert(max && "sinks need the row maximum");
    Value t = memref::LoadOp::create(b, sinkBuf,
                                     ValueRange{rowHead ? rowHead : head});
    if (isa<VectorType>(l.getType()))
      t = vector::BroadcastOp::create(b, l.getType(), t);
    l = arith::AddFOp::create(
        b, l, math::ExpOp::create(b, arith::SubFOp::create(b, t, max)));
  }
  return l;
}

Value KernelFrame::logSumExp(Value sum, Value max, Value rowHead) {
  if (sinkBuf) {
    // With the sink's logit t: M = max(m, t), M + log(l e^(m - M) +
    // e^(t - M)). A row with no allowed key (m = -inf, l = 0) gives t, not
    // -inf + log(inf); M = -inf (a -inf sink too) gives -inf.
    Value l = target.combineRow(b, sum, RowCombine::Sum);
    Value t = memref::LoadOp::create(b, sinkBuf,
                                     ValueRange{rowHead ? rowHead : head});
    if (isa<VectorType>(l.getType()))
      t = vector::BroadcastOp::create(b, l.getType(), t);
    Value top = arith::MaximumFOp::create(b, max, t);
    auto expOf = [&](Value x) {
      return math::ExpOp::create(b, arith::SubFOp::create(b, x, top));
    };
    Value total = arith::AddFOp::create(
        b, arith::MulFOp::create(b, l, expOf(max)), expOf(t));
    Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, total,
                                           splat(total, 0.0));
    return keepNaN({top, total}, arith::SelectOp::create(
                                     b, positive,
                                     arith::AddFOp::create(
                                         b, top, math::LogOp::create(b, total)),
                                     splat(total, kNegInf)));
  }
  // m + log(l), -inf where l is 0.
  Value l = denominator(sum, max, rowHead);
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, splat(l, 0.0));
  return keepNaN({max, l},
                 arith::SelectOp::create(
                     b, positive,
                     arith::AddFOp::create(b, max, math::LogOp::create(b, l)),
                     splat(l, kNegInf)));
}

Value KernelFrame::keepNaN(ArrayRef<Value> sources, Value lse) {
  // A row that saw a NaN score has a NaN sum (the CPU's running max leaves
  // NaN out, the weight exp(NaN - m) keeps it) or maximum: its log-sum-exp
  // is NaN (what the backward pass reads), not the -inf of an empty row.
  Value nan;
  for (Value v : sources) {
    Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, v, v);
    nan = nan ? arith::OrIOp::create(b, nan, isNan).getResult() : isNan;
  }
  return arith::SelectOp::create(
      b, nan, splat(lse, std::numeric_limits<double>::quiet_NaN()), lse);
}

void KernelFrame::storeLse(Value lse, Value row, Value rowHead) {
  memref::StoreOp::create(
      b, lse, lseBuf,
      ValueRange{batch, rowHead ? rowHead : head, add(queryBase, row)});
}

Value KernelFrame::rowFactor(Value sum, Value max, Value rowHead) {
  if (!sum)
    return f32Const(1.0);
  Value l = denominator(sum, max, rowHead);
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, splat(l, 0.0));
  return arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, splat(l, 1.0), l), splat(l, 0.0));
}

Value KernelFrame::applyGate(Value out, Value row, Value col, Value rowHead) {
  if (!gateBuf)
    return out;
  SmallVector<Value> at = {batch, rowHead ? rowHead : head, queryRow(row), col};
  Value g;
  if (auto vt = dyn_cast<VectorType>(out.getType())) {
    Type elem = cast<MemRefType>(gateBuf.getType()).getElementType();
    g = vectorLoad(vt.clone(elem), gateBuf, at, valueDim);
  } else {
    g = memref::LoadOp::create(b, gateBuf, at);
  }
  return arith::MulFOp::create(b, out, toF32(g));
}

void KernelFrame::storeOutput(Value out, Value row, Value col, Value rowHead) {
  auto outType = cast<MemRefType>(outputBuf.getType());
  Value v = fromF32(out, outType.getElementType());
  SmallVector<Value> at = {batch, rowHead ? rowHead : head, add(queryBase, row),
                           col};
  // Rows of a strided view (spec.outputView) start at multiples of the
  // gcd of its outer strides and offset.
  int64_t rowLen = valueDim;
  if (!outType.getLayout().isIdentity()) {
    SmallVector<int64_t> strides;
    int64_t offset;
    rowLen = 1;
    if (succeeded(outType.getStridesAndOffset(strides, offset)) &&
        !ShapedType::isDynamic(offset)) {
      rowLen = offset;
      for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
        rowLen = ShapedType::isDynamic(s) ? 1 : std::gcd(rowLen, s);
    }
  }
  if (isa<VectorType>(v.getType()))
    vectorStore(v, outputBuf, at, rowLen);
  else
    memref::StoreOp::create(b, v, outputBuf, at);
}

//===----------------------------------------------------------------------===//
// Small builders
//===----------------------------------------------------------------------===//

Value KernelFrame::loadIndex(Value mem, Value at) {
  Value v = memref::LoadOp::create(b, mem, ValueRange{at});
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}

int64_t KernelFrame::alignmentOf(Type elem, int64_t count, int64_t rowLen) {
  int64_t width = std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
  int64_t bytes = count * width;
  int64_t align = 1;
  while (align * 2 <= std::min<int64_t>(bytes, 16) &&
         bytes % (align * 2) == 0 && (rowLen * width) % (align * 2) == 0)
    align *= 2;
  return align;
}

Value KernelFrame::vectorLoad(VectorType type, Value mem, ValueRange at,
                              int64_t rowLen) {
  auto op = vector::LoadOp::create(b, type, mem, at);
  int64_t align =
      alignmentOf(type.getElementType(), type.getNumElements(), rowLen);
  if (align > 1)
    op.setAlignment(align);
  return op;
}

void KernelFrame::vectorStore(Value v, Value mem, ValueRange at,
                              int64_t rowLen) {
  auto type = cast<VectorType>(v.getType());
  auto op = vector::StoreOp::create(b, v, mem, at);
  int64_t align =
      alignmentOf(type.getElementType(), type.getNumElements(), rowLen);
  if (align > 1)
    op.setAlignment(align);
}

SmallVector<Value>
KernelFrame::forLoop(Value lb, Value ub, int64_t step, ValueRange init,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop =
      scf::ForOp::create(b, lb, ub, idx(step), init,
                         [&](OpBuilder &, Location, Value iv, ValueRange args) {
                           scf::YieldOp::create(b, body(iv, args));
                         });
  return SmallVector<Value>(loop.getResults());
}

void KernelFrame::forEach(int64_t lb, int64_t ub, int64_t step,
                          function_ref<void(Value)> body) {
  forLoop(idx(lb), idx(ub), step, {}, [&](Value iv, ValueRange) {
    body(iv);
    return SmallVector<Value>();
  });
}

void KernelFrame::ifThen(Value cond, function_ref<void()> body) {
  scf::IfOp::create(b, cond, [&](OpBuilder &, Location) {
    body();
    scf::YieldOp::create(b);
  });
}

SmallVector<Value>
KernelFrame::ifThenElseKeep(Value cond, ValueRange state,
                            function_ref<SmallVector<Value>()> body) {
  auto ifOp = scf::IfOp::create(
      b, cond, [&](OpBuilder &, Location) { scf::YieldOp::create(b, body()); },
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, state); });
  return SmallVector<Value>(ifOp.getResults());
}
