//===- PartitionExchange.cpp - The ring of attn-partition-sequence --------===//
//
// attn-partition-sequence's schedule (PartitionSequence.h): the rows each
// rank holds (contiguous chunks or the two runs of the zigzag order, from
// the row counts gathered from every rank), which rank's queries may see
// which rank's keys (the interval analysis of the op's mask at global
// positions, run at run time), the rows a block must carry (a pattern's
// key range, through the mask emitter) and the ring: P steps, each
// exchanging the block in hand for the next one (nonblocking, only with
// the ranks that need it) around the kernels of the block in hand.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "attn-opt/Dialect/Attn/Utils/ModRegionEmitter.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

RankProgram::RankProgram(ImplicitLocOpBuilder &b, ShardedAttention &s,
                         const ModProgram *mask)
    : KernelArith(b), s(s), op(s.op), mask(mask) {
  if (MaskPatternAttrInterface pattern = op.getPatternAttr())
    patternMask = buildMask(pattern, op.getPatternShape());
}

//===----------------------------------------------------------------------===//
// Rows and who needs them
//===----------------------------------------------------------------------===//

Value RankProgram::rowsOf(Value r) {
  Value e = tensor::ExtractOp::create(b, sizes, ValueRange{r});
  return arith::IndexCastOp::create(b, b.getIndexType(), e);
}

RankProgram::Runs RankProgram::runsOf(Value r) {
  Runs runs;
  if (!s.zigzag) {
    // Prefix sum of the sizes before `r`.
    auto loop = scf::ForOp::create(b, idx(0), r, idx(1), ValueRange{idx(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value acc =
          add(loop.getRegionIterArgs()[0], rowsOf(loop.getInductionVar()));
      scf::YieldOp::create(b, acc);
    }
    runs.start[0] = loop.getResult(0);
    runs.length[0] = rowsOf(r);
    runs.start[1] = idx(0);
    runs.length[1] = idx(0);
    return runs;
  }
  // 2P near-equal chunks, the first (L mod 2P) one row longer.
  Value chunks = arith::MulIOp::create(b, numRanks, idx(2));
  Value base = arith::DivUIOp::create(b, total, chunks);
  Value extra = arith::RemUIOp::create(b, total, chunks);
  auto chunk = [&](Value j, Value &start, Value &length) {
    start = add(arith::MulIOp::create(b, j, base),
                arith::MinUIOp::create(b, j, extra));
    length = add(
        base, select(cmp(arith::CmpIPredicate::ult, j, extra), idx(1), idx(0)));
  };
  chunk(r, runs.start[0], runs.length[0]);
  chunk(sub(sub(chunks, idx(1)), r), runs.start[1], runs.length[1]);
  return runs;
}

Value RankProgram::mayMeet(Value qStart, Value qLength, Value kStart,
                           Value kLength) {
  Value nonEmpty =
      arith::AndIOp::create(b, cmp(arith::CmpIPredicate::ugt, qLength, idx(0)),
                            cmp(arith::CmpIPredicate::ugt, kLength, idx(0)));
  if (!mask)
    return nonEmpty;
  CaptureAccess access;
  SmallVector<Value> captures = regionCaptures(op);
  access.dim = [&](ImplicitLocOpBuilder &ib, unsigned c, unsigned d) {
    return tensor::DimOp::create(ib, captures[c], d).getResult();
  };
  access.read = [&](ImplicitLocOpBuilder &ib, unsigned c, ValueRange at) {
    return tensor::ExtractOp::create(ib, captures[c], at).getResult();
  };
  // The box of the pair, over every batch row and head (a mask reading them
  // is judged for all: an interval over them); lengths of 0 give an empty
  // pair (masked by nonEmpty), so clamp the last position to the start.
  auto last = [&](Value start, Value length) {
    return sub(add(start, arith::MaxUIOp::create(b, length, idx(1))), idx(1));
  };
  Value lastBatch =
      sub(arith::MaxUIOp::create(
              b, tensor::DimOp::create(b, localQuery, 0).getResult(), idx(1)),
          idx(1));
  Value lastHead =
      idx(std::max<int64_t>(
              cast<ShapedType>(op.getQuery().getType()).getDimSize(1), 1) -
          1);
  MaskEmitter::TileKind kind = emitMaskTileKind(
      b, *mask, idx(0), lastBatch, idx(0), lastHead, qStart,
      last(qStart, qLength), kStart, last(kStart, kLength), access);
  return arith::AndIOp::create(b, nonEmpty, kind.any);
}

Value RankProgram::needs(Value dst, Value src) {
  Runs qr = runsOf(dst), kr = runsOf(src);
  Value any = arith::ConstantIntOp::create(b, 0, 1);
  for (int a = 0; a < (s.zigzag ? 2 : 1); ++a)
    for (int c = 0; c < (s.zigzag ? 2 : 1); ++c)
      any = arith::OrIOp::create(
          b, any,
          mayMeet(qr.start[a], qr.length[a], kr.start[c], kr.length[c]));
  return any;
}

Value RankProgram::neededAfter(Value src, Value from, Value count) {
  auto loop =
      scf::ForOp::create(b, idx(1), add(count, idx(1)), idx(1),
                         ValueRange{arith::ConstantIntOp::create(b, 0, 1)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value dst = rem(add(from, loop.getInductionVar()), numRanks);
  Value any =
      arith::OrIOp::create(b, loop.getRegionIterArgs()[0], needs(dst, src));
  scf::YieldOp::create(b, any);
  b.setInsertionPointAfter(loop);
  return loop.getResult(0);
}

bool RankProgram::trims() {
  if (s.zigzag || !op.getPatternAttr())
    return false;
  return MaskEmitter(patternMask, {}, {}).boundsKeys();
}

RankProgram::Runs RankProgram::keepRows(Value src, Value from, Value count) {
  Runs kr = runsOf(src);
  Value ka = kr.start[0], kb = add(kr.start[0], kr.length[0]);
  auto loop = scf::ForOp::create(b, idx(1), add(count, idx(1)), idx(1),
                                 ValueRange{kb, ka});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value dst = rem(add(from, loop.getInductionVar()), numRanks);
    Runs qr = runsOf(dst);
    // The keys the queries [start, start + length) may see (inclusive,
    // trims() holds: a range exists; no per-head pattern reaches here),
    // within the chunk; an empty query run needs nothing.
    Value last = sub(add(qr.start[0], qr.length[0]), idx(1));
    std::optional<std::pair<Value, Value>> range =
        MaskEmitter(patternMask, {}, {})
            .emitKeyRangeAt(b, /*head=*/Value(), qr.start[0], last);
    Value l = arith::MaxSIOp::create(b, range->first, ka);
    Value h = arith::MinSIOp::create(b, add(range->second, idx(1)), kb);
    Value some = arith::AndIOp::create(
        b, cmp(arith::CmpIPredicate::slt, l, h),
        cmp(arith::CmpIPredicate::ugt, qr.length[0], idx(0)));
    ValueRange acc = loop.getRegionIterArgs();
    scf::YieldOp::create(
        b,
        ValueRange{select(some, arith::MinSIOp::create(b, acc[0], l), acc[0]),
                   select(some, arith::MaxSIOp::create(b, acc[1], h), acc[1])});
  }
  Value lo = loop.getResult(0), hi = loop.getResult(1);
  Runs keep;
  Value any = cmp(arith::CmpIPredicate::slt, lo, hi);
  keep.start[0] = select(any, lo, ka);
  keep.length[0] = select(any, sub(hi, lo), idx(0));
  keep.start[1] = kb;
  keep.length[1] = idx(0);
  return keep;
}

//===----------------------------------------------------------------------===//
// Setting up: the ranks and their rows
//===----------------------------------------------------------------------===//

Value RankProgram::checkSizes(Value kvBad) {
  Value ok = arith::ConstantIntOp::create(b, 1, 1);
  auto report = [&](Value failed, RuntimeError code, Value x, Value y,
                    Value z) {
    auto ifOp = scf::IfOp::create(b, failed, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitRuntimeError(b, op, static_cast<int32_t>(code), x, y, z);
  };
  int64_t staticRanks = s.grid.getShape()[0];
  if (!ShapedType::isDynamic(staticRanks)) {
    Value wrong = cmp(arith::CmpIPredicate::ne, numRanks, idx(staticRanks));
    report(wrong, RuntimeError::SequenceRanks, numRanks, idx(staticRanks),
           idx(0));
    ok = arith::AndIOp::create(
        b, ok,
        arith::XOrIOp::create(b, wrong, arith::ConstantIntOp::create(b, 1, 1)));
  }
  // Key/value rows that differ from the query rows on some rank.
  Value bad = cmp(arith::CmpIPredicate::ne, kvBad, idx(0));
  report(bad, RuntimeError::SequenceChunk, idx(-1), kvBad, idx(-1));
  ok = arith::AndIOp::create(
      b, ok,
      arith::XOrIOp::create(b, bad, arith::ConstantIntOp::create(b, 1, 1)));
  // Replicated segment ids: one per position of the whole sequence.
  SmallVector<std::pair<Value, int64_t>> ids;
  if (Value query = op.getQuerySegments())
    ids.push_back({query, kQuerySegmentsOperand});
  if (Value key = op.getKeySegments())
    ids.push_back({key, kKeySegmentsOperand});
  for (auto [tensor, operand] : ids) {
    Value count = tensor::DimOp::create(b, tensor, 1);
    Value wrong = cmp(arith::CmpIPredicate::ne, count, total);
    report(wrong, RuntimeError::SequenceIds, idx(operand), count, total);
    ok = arith::AndIOp::create(
        b, ok,
        arith::XOrIOp::create(b, wrong, arith::ConstantIntOp::create(b, 1, 1)));
  }
  // The rows each rank must hold.
  auto qType = cast<ShapedType>(op.getQuery().getType());
  int64_t globalRows = qType.getDimSize(kSeqDim);
  bool expectRows = s.zigzag || !s.staticOffsets.empty() ||
                    (!ShapedType::isDynamic(globalRows) &&
                     !ShapedType::isDynamic(staticRanks));
  if (!expectRows)
    return ok;
  auto guardOk = scf::IfOp::create(b, b.getI1Type(), ok, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(guardOk.elseBlock());
    scf::YieldOp::create(b, ok);
    b.setInsertionPointToStart(guardOk.thenBlock());
    auto loop = scf::ForOp::create(b, idx(0), numRanks, idx(1), ValueRange{ok});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value r = loop.getInductionVar();
      Value expected;
      if (s.zigzag) {
        Runs runs = runsOf(r);
        expected = add(runs.length[0], runs.length[1]);
      } else if (!s.staticOffsets.empty()) {
        SmallVector<int64_t> lengths;
        for (size_t i = 0; i + 1 < s.staticOffsets.size(); ++i)
          lengths.push_back(s.staticOffsets[i + 1] - s.staticOffsets[i]);
        Value table = arith::ConstantOp::create(
            b, DenseIntElementsAttr::get(
                   RankedTensorType::get({static_cast<int64_t>(lengths.size())},
                                         b.getI64Type()),
                   ArrayRef<int64_t>(lengths)));
        expected = arith::IndexCastOp::create(
            b, b.getIndexType(),
            tensor::ExtractOp::create(b, table, ValueRange{r}));
      } else {
        // The balanced split: the first L mod P ranks one row longer.
        Value base = idx(globalRows / staticRanks);
        expected = add(base, select(cmp(arith::CmpIPredicate::ult, r,
                                        idx(globalRows % staticRanks)),
                                    idx(1), idx(0)));
      }
      Value got = rowsOf(r);
      Value wrong = cmp(arith::CmpIPredicate::ne, got, expected);
      report(wrong, RuntimeError::SequenceChunk, r, got, expected);
      Value still = arith::AndIOp::create(
          b, loop.getRegionIterArgs()[0],
          arith::XOrIOp::create(b, wrong,
                                arith::ConstantIntOp::create(b, 1, 1)));
      scf::YieldOp::create(b, still);
    }
    scf::YieldOp::create(b, loop.getResult(0));
  }
  return guardOk.getResult(0);
}

Value RankProgram::setUp(Value q, Value k, Value v) {
  MLIRContext *ctx = b.getContext();
  Type index = b.getIndexType();
  comm = mpi::CommWorldOp::create(b, mpi::CommType::get(ctx));
  rank = arith::IndexCastOp::create(
      b, index,
      mpi::CommRankOp::create(b, Type(), b.getI32Type(), comm).getRank());
  // The number of ranks: the sum of a 1 from each (MLIR 22 lowers no
  // mpi.comm_size).
  {
    auto oneType = RankedTensorType::get({1}, b.getI64Type());
    Value one = tensor::FromElementsOp::create(
        b, oneType, ValueRange{arith::ConstantIntOp::create(b, 1, 64)});
    Value buffer = tensor::EmptyOp::create(b, oneType.getShape(),
                                           b.getI64Type(), ValueRange{});
    Value count =
        AllReduceOp::create(b, oneType, one, buffer, comm).getResult();
    numRanks = arith::IndexCastOp::create(
        b, index, tensor::ExtractOp::create(b, count, ValueRange{idx(0)}));
  }
  localRows = tensor::DimOp::create(b, q, kSeqDim);
  Value rows = localRows;
  Value kvBadHere = arith::ExtUIOp::create(
      b, b.getI64Type(),
      arith::OrIOp::create(b,
                           cmp(arith::CmpIPredicate::ne,
                               tensor::DimOp::create(b, k, kSeqDim), rows),
                           cmp(arith::CmpIPredicate::ne,
                               tensor::DimOp::create(b, v, kSeqDim), rows)));
  // Every rank's row count (entry r) and the number of ranks whose keys
  // or values have other rows than their queries (entry P).
  auto sizesType =
      RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
  Value slots = add(numRanks, idx(1));
  Value rowsI64 = arith::IndexCastOp::create(b, b.getI64Type(), rows);
  Value mine = tensor::GenerateOp::create(
      b, sizesType, ValueRange{slots},
      [&](OpBuilder &nb, Location loc, ValueRange at) {
        Value zero = arith::ConstantIntOp::create(nb, loc, 0, 64);
        Value isMe = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                           at[0], rank);
        Value isLast = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                             at[0], numRanks);
        Value v1 = arith::SelectOp::create(nb, loc, isMe, rowsI64, zero);
        Value v2 = arith::SelectOp::create(nb, loc, isLast, kvBadHere, v1);
        tensor::YieldOp::create(nb, loc, v2);
      });
  Value into = tensor::EmptyOp::create(b, sizesType.getShape(), b.getI64Type(),
                                       ValueRange{slots});
  sizes = AllReduceOp::create(b, sizesType, mine, into, comm).getResult();
  Value kvBad = rowsOf(numRanks);
  // The sequence length (the zigzag chunks, pointwise attention's factor,
  // the segment ids' length).
  if (s.zigzag || isa<PointwiseAttr>(op.getNormalizer()) ||
      op.getQuerySegments()) {
    auto loop =
        scf::ForOp::create(b, idx(0), numRanks, idx(1), ValueRange{idx(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, add(loop.getRegionIterArgs()[0], rowsOf(loop.getInductionVar())));
    b.setInsertionPointAfter(loop);
    total = loop.getResult(0);
  }
  return checkSizes(kvBad);
}

//===----------------------------------------------------------------------===//
// The ring
//===----------------------------------------------------------------------===//

ExchangeOp RankProgram::exchangeRows(Value block, Value dest, Value source,
                                     Value inRows, int32_t tag) {
  auto type = cast<RankedTensorType>(block.getType());
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(d == kSeqDim
                        ? inRows
                        : tensor::DimOp::create(b, block, d).getResult());
  Value buffer =
      tensor::EmptyOp::create(b, type.getShape(), type.getElementType(), dyn);
  Value tagValue = arith::ConstantIntOp::create(b, tag, 32);
  MLIRContext *ctx = b.getContext();
  return ExchangeOp::create(b, type, mpi::RequestType::get(ctx),
                            mpi::RequestType::get(ctx), block, buffer, dest,
                            source, tagValue, comm);
}

Value RankProgram::waitFor(ExchangeOp exchange, Value sent) {
  return ExchangeWaitOp::create(b, sent.getType(), exchange.getIncoming(), sent,
                                exchange.getSendRequest(),
                                exchange.getRecvRequest())
      .getResult();
}

SmallVector<Value> RankProgram::ringStep(Value t, ValueRange iter,
                                         TypeRange computeTypes,
                                         BlockCompute compute,
                                         AfterBlock after) {
  Value kCur = iter[0], vCur = iter[1];
  // The block in hand came from rank (r - t) mod P; the next one
  // (from r - 1) from (r - t - 1) mod P.
  Value origin = rem(sub(add(rank, numRanks), t), numRanks);
  Value prev = rem(sub(add(rank, numRanks), idx(1)), numRanks);
  Value next = rem(add(rank, idx(1)), numRanks);
  Value nextOrigin = rem(sub(add(origin, numRanks), idx(1)), numRanks);
  Value more = cmp(arith::CmpIPredicate::ult, add(t, idx(1)), numRanks);
  Value remaining = sub(sub(numRanks, idx(1)), t);
  auto guarded = [&](Value cond, function_ref<Value()> then) {
    auto ifOp = scf::IfOp::create(b, b.getI1Type(), cond, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, arith::ConstantIntOp::create(b, 0, 1).getResult());
    return ifOp.getResult(0);
  };
  Value send =
      guarded(more, [&] { return neededAfter(origin, rank, remaining); });
  Value receive =
      guarded(more, [&] { return neededAfter(nextOrigin, prev, remaining); });
  // The rows in hand and the rows that travel on. Without trimming: whole
  // chunks. With a pattern that bounds the keys (causal, window;
  // contiguous order): the rows the ranks still on the block's way need (a
  // window's halo), which sender and receiver compute alike.
  Runs held = runsOf(origin);
  Value sendOffset = idx(0), sendRows = rowsOf(rank);
  Value inRows = rowsOf(nextOrigin);
  if (trims()) {
    Runs whole = runsOf(rank);
    Runs kept = keepRows(origin, prev, sub(numRanks, t));
    Value first = cmp(arith::CmpIPredicate::eq, t, idx(0));
    held.start[0] = select(first, whole.start[0], kept.start[0]);
    held.length[0] = select(first, whole.length[0], kept.length[0]);
    Runs out = keepRows(origin, rank, remaining);
    Runs in = keepRows(nextOrigin, prev, remaining);
    send = arith::AndIOp::create(
        b, send, cmp(arith::CmpIPredicate::ugt, out.length[0], idx(0)));
    receive = arith::AndIOp::create(
        b, receive, cmp(arith::CmpIPredicate::ugt, in.length[0], idx(0)));
    sendOffset = select(send, sub(out.start[0], held.start[0]), idx(0));
    sendRows = out.length[0];
    inRows = in.length[0];
  }
  sendRows = select(send, sendRows, idx(0));
  inRows = select(receive, inRows, idx(0));
  Value none = idx(-1);
  Value dest = indexCast(b.getI32Type(), select(send, next, none));
  Value source = indexCast(b.getI32Type(), select(receive, prev, none));
  Value kOut = trims() ? rowSlice(kCur, sendOffset, sendRows, true) : kCur;
  Value vOut = trims() ? rowSlice(vCur, sendOffset, sendRows, true) : vCur;
  ExchangeOp kEx = exchangeRows(kOut, dest, source, inRows, 1);
  ExchangeOp vEx = exchangeRows(vOut, dest, source, inRows, 2);
  // The kernels of the block in hand, when this rank needs it.
  Value use = needs(rank, origin);
  auto computed = scf::IfOp::create(b, computeTypes, use, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(computed.elseBlock());
    scf::YieldOp::create(b, iter.drop_front(2));
    b.setInsertionPointToStart(computed.thenBlock());
    scf::YieldOp::create(b, compute(kCur, vCur, held, iter.drop_front(2)));
  }
  SmallVector<Value> results = {waitFor(kEx, kOut), waitFor(vEx, vOut)};
  if (after)
    llvm::append_range(results, after(t, origin, use, held, iter.drop_front(2),
                                      computed.getResults()));
  else
    llvm::append_range(results, computed.getResults());
  return results;
}

std::pair<Value, Value> RankProgram::ring(Value q, Value k, Value v,
                                          RankedTensorType accOType,
                                          RankedTensorType accLType,
                                          ValueRange dynO, ValueRange dynL) {
  Value zeroF = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  Value ninf = arith::ConstantOp::create(
      b, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value accO =
      linalg::FillOp::create(b, zeroF,
                             ValueRange{tensor::EmptyOp::create(
                                 b, accOType.getShape(), b.getF32Type(), dynO)})
          .getResult(0);
  Value accL =
      linalg::FillOp::create(b, ninf,
                             ValueRange{tensor::EmptyOp::create(
                                 b, accLType.getShape(), b.getF32Type(), dynL)})
          .getResult(0);
  auto loop = scf::ForOp::create(b, idx(0), numRanks, idx(1),
                                 ValueRange{k, v, accO, accL});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, ringStep(loop.getInductionVar(), loop.getRegionIterArgs(),
                    TypeRange{accOType, accLType},
                    [&](Value kCur, Value vCur, const Runs &held,
                        ValueRange acc) -> SmallVector<Value> {
                      auto [o, l] =
                          computeBlock(q, kCur, vCur, held, acc[0], acc[1]);
                      return {o, l};
                    }));
  }
  return {loop.getResult(2), loop.getResult(3)};
}

RankProgram::Accumulators RankProgram::accumulators(Value q, Value v) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  Accumulators acc;
  acc.output =
      RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                             ShapedType::kDynamic, vType.getDimSize(3)},
                            b.getF32Type());
  acc.lse = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), ShapedType::kDynamic},
      b.getF32Type());
  if (qType.isDynamicDim(0))
    acc.dynamic.push_back(tensor::DimOp::create(b, q, 0));
  acc.dynamic.push_back(localRows);
  return acc;
}

std::pair<Value, Value> RankProgram::build(Value q, Value k, Value v) {
  localQuery = q;
  Value ok = setUp(q, k, v);
  Accumulators acc = accumulators(q, v);
  RankedTensorType accOType = acc.output, accLType = acc.lse;
  auto ifOk = scf::IfOp::create(b, TypeRange{accOType, accLType}, ok, true);
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> dynO = acc.dynamic, dynL = acc.dynamic;
  b.setInsertionPointToStart(ifOk.elseBlock());
  scf::YieldOp::create(
      b, ValueRange{tensor::EmptyOp::create(b, accOType.getShape(),
                                            b.getF32Type(), dynO),
                    tensor::EmptyOp::create(b, accLType.getShape(),
                                            b.getF32Type(), dynL)});
  b.setInsertionPointToStart(ifOk.thenBlock());
  if (isa<KernelAttr>(op.getNormalizer())) {
    // Linear attention: no ring, the key/value state reduces.
    Value out = buildLinearRankProgram(b, op, q, k, v, comm, rank, numRanks);
    scf::YieldOp::create(
        b, ValueRange{out, tensor::EmptyOp::create(b, accLType.getShape(),
                                                   b.getF32Type(), dynL)});
    return {ifOk.getResult(0), ifOk.getResult(1)};
  }
  auto [out, lse] = ring(q, k, v, accOType, accLType, dynO, dynL);
  if (isa<PointwiseAttr>(op.getNormalizer()))
    out = lengthFactor(out);
  scf::YieldOp::create(b, ValueRange{out, lse});
  return {ifOk.getResult(0), ifOk.getResult(1)};
}
