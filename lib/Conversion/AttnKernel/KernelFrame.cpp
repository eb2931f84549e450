//===- KernelFrame.cpp - The frame of the fused attention kernels ---------===//

#include "attn-opt/Conversion/AttnKernel/KernelFrame.h"

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

KernelTarget::~KernelTarget() = default;

KernelFrame::KernelFrame(ImplicitLocOpBuilder &b, const KernelSpec &spec,
                         const BlockLayout &layout, const KernelTarget &target)
    : b(b), spec(spec), layout(layout), target(target) {
  const AttentionDims &d = spec.dims;
  batchSize = d.batch;
  queryHeads = d.queryHeads;
  group = d.groupSize();
  queryLen = d.queryLen;
  keyLen = d.keyLen;
  headDim = d.headDim;
  valueDim = d.valueDim;
  numTiles = layout.getNumQueryBlocks();
  blockQ = layout.getBlockQ();
  blockK = layout.getBlockK();
  f32 = b.getF32Type();
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

void KernelFrame::prepare() {
  bool convert = target.readsF32Operands();
  TensorBuilder tb(b);
  auto buffer = [&](Value tensor) {
    if (tensor && convert)
      tensor = toF32Tensor(tb, tensor);
    return readOnlyBuffer(b, tensor);
  };
  queryBuf = buffer(spec.query);
  Value key = spec.key;
  if (spec.qkNormEps) // K is normalized once, up front.
    key = layerNorm(tb, key, *spec.qkNormEps);
  keyBuf = buffer(key);
  valueBuf = buffer(spec.value);
  biasBuf = buffer(spec.bias);
  gateBuf = buffer(spec.gate);
  querySegmentBuf = readOnlyBuffer(b, spec.querySegments);
  keySegmentBuf = readOnlyBuffer(b, spec.keySegments);
  Type outElem =
      convert ? f32 : cast<ShapedType>(spec.resultType).getElementType();
  outputBuf = memref::AllocOp::create(
      b, MemRefType::get({batchSize, queryHeads, queryLen, valueDim}, outElem));
  tables = KernelTables::build(b, layout, keyLen, spec.mask);
}

Value KernelFrame::finish() {
  auto bufType = cast<MemRefType>(outputBuf.getType());
  auto outType =
      RankedTensorType::get(bufType.getShape(), bufType.getElementType());
  Value out = bufferization::ToTensorOp::create(b, outType, outputBuf,
                                                /*restrict=*/true,
                                                /*writable=*/true);
  Type resultElem = cast<ShapedType>(spec.resultType).getElementType();
  if (bufType.getElementType() == resultElem)
    return out;
  TensorBuilder tb(b);
  return fromF32Tensor(tb, out, resultElem);
}

//===----------------------------------------------------------------------===//
// The walk over the layout
//===----------------------------------------------------------------------===//

void KernelFrame::enterTile(Value batchIdx, Value headIdx, Value tileIdx) {
  batch = batchIdx;
  head = headIdx;
  tile = tileIdx;
  kvHead = div(headIdx, group);
  firstQuery = mul(tileIdx, blockQ);
}

std::pair<Value, Value> KernelFrame::idRange(Value ids, Value start,
                                             int64_t count, int64_t length) {
  Value first = memref::LoadOp::create(
      b, ids, ValueRange{batch, minIdx(start, length - 1)});
  SmallVector<Value> range = forLoop(
      idx(1), idx(count), 1, {first, first}, [&](Value i, ValueRange r) {
        Value id = memref::LoadOp::create(
            b, ids, ValueRange{batch, minIdx(add(start, i), length - 1)});
        return SmallVector<Value>{arith::MinSIOp::create(b, r[0], id),
                                  arith::MaxSIOp::create(b, r[1], id)};
      });
  return {range[0], range[1]};
}

SmallVector<Value> KernelFrame::visitBlocks(
    Value offsets, Value list, Value at, bool masked, ValueRange state,
    std::optional<std::pair<Value, Value>> qIds, BlockBody body) {
  Value begin = loadIndex(offsets, at);
  Value end = loadIndex(offsets, add(at, 1));
  return forLoop(begin, end, 1, state, [&](Value i, ValueRange st) {
    Value k0 = mul(loadIndex(list, i), blockK);
    if (!qIds)
      return body(k0, masked, st);
    auto [kMin, kMax] = idRange(keySegmentBuf, k0, blockK, keyLen);
    Value overlap = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, qIds->second, kMin),
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, kMax, qIds->first));
    auto ifOp = scf::IfOp::create(
        b, overlap,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, body(k0, masked, st));
        },
        [&](OpBuilder &, Location) { scf::YieldOp::create(b, st); });
    return SmallVector<Value>(ifOp.getResults());
  });
}

SmallVector<Value> KernelFrame::visitTile(ValueRange state, BlockBody body) {
  std::optional<std::pair<Value, Value>> qIds;
  if (spec.segmentBound)
    qIds = idRange(querySegmentBuf, firstQuery, blockQ, queryLen);
  Value lay = loadIndex(tables.headLayout, head);
  Value at = add(arith::MulIOp::create(b, lay, idx(numTiles + 1)), tile);
  SmallVector<Value> s = visitBlocks(tables.fullOffsets, tables.fullBlocks, at,
                                     /*masked=*/false, state, qIds, body);
  return visitBlocks(tables.partialOffsets, tables.partialBlocks, at,
                     /*masked=*/true, s, qIds, body);
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

Value KernelFrame::allowed(QueryRows rows, Value key) {
  bool isVector = rows.lanes > 0;
  VectorType lanesI32, lanesI1;
  Value q = rows.start, k = key;
  if (isVector) {
    lanesI32 = VectorType::get({rows.lanes}, b.getI32Type());
    lanesI1 = VectorType::get({rows.lanes}, b.getI1Type());
    Value iota = arith::ConstantOp::create(
        b, DenseElementsAttr::get(lanesI32,
                                  ArrayRef<int32_t>(llvm::to_vector(
                                      llvm::seq<int32_t>(0, rows.lanes)))));
    auto asI32 = [&](Value index) {
      return arith::IndexCastOp::create(b, b.getI32Type(), index);
    };
    q = arith::AddIOp::create(
        b, vector::BroadcastOp::create(b, lanesI32, asI32(rows.start)), iota);
    k = vector::BroadcastOp::create(b, lanesI32, asI32(key));
  }
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
            eb, key, arith::ConstantIndexOp::create(eb, keyLen - 1));
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
              eb, rows.start, arith::ConstantIndexOp::create(eb, queryLen - 1));
          qIds = memref::LoadOp::create(eb, querySegmentBuf,
                                        ValueRange{batch, qClamped});
        }
        return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, qIds, kId);
      });
  Value ok = emitter.emitAllowed(b, head, q, k);
  // Keys past the end of the key sequence (a ragged last block).
  if (keyLen % blockK != 0) {
    Value inRange = lt(key, keyLen);
    if (isVector)
      inRange = vector::BroadcastOp::create(b, lanesI1, inRange);
    ok = arith::AndIOp::create(b, ok, inRange);
  }
  return ok;
}

Value KernelFrame::loadBias(QueryRows rows, Value key) {
  auto type = cast<MemRefType>(biasBuf.getType());
  SmallVector<Value, 4> at =
      biasIndices(type.getShape(), idx(0), batch, head, rows.start, key);
  if (rows.lanes == 0)
    return toF32(memref::LoadOp::create(b, biasBuf, at));
  Type elem = type.getElementType();
  AffineMap alongQueries = AffineMap::get(4, 0, b.getAffineDimExpr(2));
  Value pad = arith::ConstantOp::create(b, b.getFloatAttr(elem, 0.0));
  return toF32(vector::TransferReadOp::create(
      b, VectorType::get({rows.lanes}, elem), biasBuf, at, pad, alongQueries,
      ArrayRef<bool>{false}));
}

Value KernelFrame::maskedScore(Value score, Value ok) {
  if (!ok)
    return score;
  return arith::SelectOp::create(b, ok, score, splat(score, kNegInf));
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
  step.alpha =
      math::ExpOp::create(b, arith::SubFOp::create(b, runningMax, step.shift));
  return step;
}

Value KernelFrame::softmaxWeight(Value score, Value shift, Value ok) {
  Value p = math::ExpOp::create(b, arith::SubFOp::create(b, score, shift));
  if (!ok)
    return p;
  return arith::SelectOp::create(b, ok, p, splat(p, 0.0));
}

Value KernelFrame::softmaxSum(Value runningSum, Value alpha, Value blockSum) {
  return arith::AddFOp::create(b, arith::MulFOp::create(b, runningSum, alpha),
                               blockSum);
}

Value KernelFrame::pointwiseWeight(Value score, Value ok) {
  Value p = applyPointwiseFn(b, spec.fn, score);
  p = arith::MulFOp::create(b, p, splat(p, spec.lengthFactor));
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

Value KernelFrame::rowFactor(Value sum) {
  if (!sum)
    return f32Const(1.0);
  Value l = target.combineRow(b, sum, RowCombine::Sum);
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, splat(l, 0.0));
  return arith::SelectOp::create(
      b, positive, arith::DivFOp::create(b, splat(l, 1.0), l), splat(l, 0.0));
}

Value KernelFrame::applyGate(Value out, Value row, Value col) {
  if (!gateBuf)
    return out;
  SmallVector<Value> at = {batch, head, row, col};
  Value g;
  if (auto vt = dyn_cast<VectorType>(out.getType())) {
    Type elem = cast<MemRefType>(gateBuf.getType()).getElementType();
    g = vectorLoad(vt.clone(elem), gateBuf, at, valueDim);
  } else {
    g = memref::LoadOp::create(b, gateBuf, at);
  }
  return arith::MulFOp::create(b, out, toF32(g));
}

void KernelFrame::storeOutput(Value out, Value row, Value col) {
  Type elem = cast<MemRefType>(outputBuf.getType()).getElementType();
  Value v = fromF32(out, elem);
  SmallVector<Value> at = {batch, head, row, col};
  if (isa<VectorType>(v.getType()))
    vectorStore(v, outputBuf, at, valueDim);
  else
    memref::StoreOp::create(b, v, outputBuf, at);
}

//===----------------------------------------------------------------------===//
// Small builders
//===----------------------------------------------------------------------===//

Value KernelFrame::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}
Value KernelFrame::f32Const(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
Value KernelFrame::splat(Value like, double v) { return floatLike(b, like, v); }
Value KernelFrame::add(Value x, Value y) {
  return arith::AddIOp::create(b, x, y);
}
Value KernelFrame::add(Value x, int64_t y) {
  return y == 0 ? x : add(x, idx(y));
}
Value KernelFrame::mul(Value x, int64_t y) {
  return arith::MulIOp::create(b, x, idx(y));
}
Value KernelFrame::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, x, idx(y));
}
Value KernelFrame::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, x, idx(y));
}
Value KernelFrame::minIdx(Value x, int64_t bound) {
  return arith::MinSIOp::create(b, x, idx(bound));
}
Value KernelFrame::lt(Value x, int64_t bound) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, idx(bound));
}

Value KernelFrame::loadIndex(Value mem, Value at) {
  Value v = memref::LoadOp::create(b, mem, ValueRange{at});
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}

Value KernelFrame::toF32(Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  if (t.isF32())
    return v;
  Type target = f32;
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = vt.clone(f32);
  return arith::ExtFOp::create(b, target, v);
}

Value KernelFrame::fromF32(Value v, Type elementType) {
  if (elementType.isF32())
    return v;
  Type target = elementType;
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = vt.clone(elementType);
  return arith::TruncFOp::create(b, target, v);
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
