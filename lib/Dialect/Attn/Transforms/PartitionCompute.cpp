//===- PartitionCompute.cpp - A rank's attention to one key/value block ---===//
//
// attn-partition-sequence's compute step (PartitionSequence.h): the local
// queries against the key/value block in hand are an attn.attention of
// their own, built from a copy of the op's problem (AttentionProblem.h)
// with the block's operands, so everything the op says carries over. What
// depends on where the rows lie in the sequence (the pattern, the segment
// ids, the mask and score regions) becomes the block's regions over
// positions shifted by the block's offsets, the pattern emitted there by
// the one mask emitter (MaskEmitter::emitAllowedAt).
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::buildShiftedRegion(OpBuilder &builder, AttentionOp op,
                                    Region &region, bool isMask, Region *source,
                                    bool shifted, TypeRange captureTypes) {
  MaskPatternAttrInterface pattern =
      isMask ? op.getPatternAttr() : MaskPatternAttrInterface();
  if (!source && !pattern)
    return false;
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(builder);
  MLIRContext *ctx = builder.getContext();
  Type index = builder.getIndexType();
  SmallVector<Type> argTypes;
  if (!isMask)
    argTypes.push_back(Float32Type::get(ctx));
  argTypes.append(4, index);
  if (shifted)
    argTypes.push_back(RankedTensorType::get({2}, builder.getI64Type()));
  argTypes.append(captureTypes.begin(), captureTypes.end());
  Block *block = builder.createBlock(
      &region, {}, argTypes, SmallVector<Location>(argTypes.size(), loc));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(block);
  unsigned lead = isMask ? 0 : 1;
  Value q = block->getArgument(lead + 2), k = block->getArgument(lead + 3);
  unsigned firstCapture = lead + 4;
  if (shifted) {
    // The positions of the block's rows in the sequence.
    Value offsets = block->getArgument(lead + 4);
    auto at = [&](int64_t i) {
      Value c = arith::ConstantIndexOp::create(b, i);
      Value v = tensor::ExtractOp::create(b, offsets, ValueRange{c});
      return arith::IndexCastOp::create(b, index, v).getResult();
    };
    q = arith::AddIOp::create(b, q, at(0));
    k = arith::AddIOp::create(b, k, at(1));
    ++firstCapture;
  }
  Value result;
  if (pattern) {
    // The segment ids come after the op's own captures (regionCaptures).
    unsigned segments = firstCapture + captureTypes.size() - 2;
    Value batch = block->getArgument(lead);
    auto sameSegment = [&](ImplicitLocOpBuilder &eb, Value qi, Value ki) {
      Value sq = tensor::ExtractOp::create(eb, block->getArgument(segments),
                                           ValueRange{batch, qi});
      Value sk = tensor::ExtractOp::create(eb, block->getArgument(segments + 1),
                                           ValueRange{batch, ki});
      return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, sq, sk)
          .getResult();
    };
    // One sequence (Lq = Lk): a query's position is its index.
    mask::Mask m = buildMask(pattern, op.getPatternShape());
    MaskEmitter emitter(m, /*table=*/{}, sameSegment);
    result = emitter.emitAllowedAt(b, block->getArgument(lead + 1), q, q, k);
  }
  if (source) {
    Block &src = source->front();
    IRMapping map;
    for (unsigned i = 0; i < src.getNumArguments(); ++i) {
      Value to;
      if (i < lead)
        to = block->getArgument(i);
      else if (i == lead + 2)
        to = q;
      else if (i == lead + 3)
        to = k;
      else if (i < lead + 4)
        to = block->getArgument(i);
      else
        to = block->getArgument(firstCapture + (i - lead - 4));
      map.map(src.getArgument(i), to);
    }
    for (Operation &inner : src.without_terminator())
      b.clone(inner, map);
    Value yielded = map.lookup(src.getTerminator()->getOperand(0));
    result = result ? arith::AndIOp::create(b, result, yielded).getResult()
                    : yielded;
  }
  YieldOp::create(b, result);
  return true;
}

Value RankProgram::rowSlice(Value t, Value row, Value rows, bool keepType) {
  RowWindow w = rowWindow(t, row, rows);
  if (keepType)
    return tensor::ExtractSliceOp::create(b,
                                          cast<RankedTensorType>(t.getType()),
                                          t, w.offsets, w.sizes, w.strides);
  return tensor::ExtractSliceOp::create(b, t, w.offsets, w.sizes, w.strides)
      .getResult();
}

AttentionOp RankProgram::blockAttention(Value qs, Value ks, Value vs,
                                        Value offsets) {
  SmallVector<Value> captures = regionCaptures(op);
  bool hasMask = mask != nullptr;
  bool hasScore = !op.getScoreMod().empty();
  SmallVector<Value> stepCaptures;
  if (hasMask || hasScore) {
    stepCaptures.push_back(offsets);
    stepCaptures.append(captures.begin(), captures.end());
  }
  auto qsType = cast<RankedTensorType>(qs.getType());
  auto vsType = cast<RankedTensorType>(vs.getType());
  // Softmax blocks bring their log-sum-exp for the merge; pointwise
  // blocks add up (their Lk^-alpha factor, of the whole sequence, is
  // applied once at the end).
  AttentionProblem step = op.getProblem();
  step.query = qs;
  step.key = ks;
  step.value = vs;
  step.results.output =
      RankedTensorType::get({qsType.getDimSize(0), qsType.getDimSize(1),
                             qsType.getDimSize(2), vsType.getDimSize(3)},
                            b.getF32Type());
  if (auto pointwise = dyn_cast<PointwiseAttr>(op.getNormalizer())) {
    step.normalizer = PointwiseAttr::get(b.getContext(), pointwise.getFn(),
                                         llvm::APFloat(0.0));
    step.results.lse = RankedTensorType();
  } else {
    step.results.lse = RankedTensorType::get(
        {qsType.getDimSize(0), qsType.getDimSize(1), qsType.getDimSize(2)},
        b.getF32Type());
  }
  // Where the rows lie: the pattern, the segment ids and the regions are
  // the block's regions over shifted positions, reading the offsets and
  // the ids as captures.
  step.masking.pattern = MaskPatternAttrInterface();
  step.segments = AttentionSegments();
  step.regions = AttentionRegions();
  step.regions.captures = stepCaptures;
  auto attention = AttentionOp::create(b, step);
  TypeRange captureTypes = TypeRange(ValueRange(captures));
  if (hasMask)
    buildShiftedRegion(b, op, attention.getMaskMod(), /*isMask=*/true,
                       op.getMaskMod().empty() ? nullptr : &op.getMaskMod(),
                       /*shifted=*/true, captureTypes);
  if (hasScore)
    buildShiftedRegion(b, op, attention.getScoreMod(), /*isMask=*/false,
                       &op.getScoreMod(), /*shifted=*/true, captureTypes);
  b.setInsertionPointAfter(attention);
  return attention;
}

SmallVector<Value> RankProgram::overRunPairs(Value q, Value kBlock,
                                             Value vBlock, const Runs &held,
                                             ValueRange acc,
                                             PairCompute compute) {
  SmallVector<Value> out(acc);
  Runs qr = runsOf(rank), kr = held;
  int runs = s.zigzag ? 2 : 1;
  for (int a = 0; a < runs; ++a) {
    for (int c = 0; c < runs; ++c) {
      RunPair pair;
      pair.qRow = a == 0 ? idx(0) : qr.length[0];
      pair.qRows = qr.length[a];
      pair.kRow = c == 0 ? idx(0) : kr.length[0];
      pair.kRows = kr.length[c];
      Value run = mayMeet(qr.start[a], qr.length[a], kr.start[c], kr.length[c]);
      auto ifOp = scf::IfOp::create(b, ValueRange(out).getTypes(), run,
                                    /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, out);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value qs = rowSlice(q, pair.qRow, pair.qRows);
        Value ks = rowSlice(kBlock, pair.kRow, pair.kRows);
        Value vs = rowSlice(vBlock, pair.kRow, pair.kRows);
        auto toI64 = [&](Value x) { return indexCast(b.getI64Type(), x); };
        Value offsets = tensor::FromElementsOp::create(
            b, RankedTensorType::get({2}, b.getI64Type()),
            ValueRange{toI64(qr.start[a]), toI64(kr.start[c])});
        pair.step = blockAttention(qs, ks, vs, offsets);
        scf::YieldOp::create(b, compute(pair, out));
      }
      out.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
  }
  return out;
}

std::pair<Value, Value> RankProgram::computeBlock(Value q, Value kBlock,
                                                  Value vBlock,
                                                  const Runs &held, Value accO,
                                                  Value accL) {
  SmallVector<Value> out = overRunPairs(
      q, kBlock, vBlock, held, ValueRange{accO, accL},
      [&](const RunPair &pair, ValueRange acc) -> SmallVector<Value> {
        AttentionOp step = pair.step;
        if (isa<PointwiseAttr>(op.getNormalizer()))
          return {accumulate(acc[0], step.getResult(), pair.qRow, pair.qRows),
                  acc[1]};
        auto [o, l] = merge(acc[0], acc[1], step.getResult(), step.getLse(),
                            pair.qRow, pair.qRows);
        return {o, l};
      });
  return {out[0], out[1]};
}
