//===- PartitionBackward.cpp - The backward ring of attn-partition-sequence
//===//
//
// attn-partition-sequence's backward (PartitionSequence.h): the gradient of
// a sharded softmax or pointwise attention, from the forward's schedule.
//
// The key/value blocks travel the forward's ring again (the same
// mask-driven, halo-only exchanges). At each step a rank that needs the
// block in hand computes its queries' share of the block's gradient: an
// attn.attention_grad of the block's attention (its problem at the block's
// positions, PartitionCompute.cpp) normalized by the whole sequence's
// statistics (`saved_output` and `saved_lse`: the forward's merged output
// and log-sum-exp), whose dQ it adds to its own, and whose dK and dV (the
// block's rows in hand) it sends straight back to the block's owner. At
// step t the owner of rank r's block in hand is r - t and the partials of
// rank r's own block arrive from r + t, so every step is a permutation;
// an owner adds them in ring order (deterministic for a number of ranks),
// and only from ranks that used its block.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Zeros of `t`'s shape (f32), the sequence dimension `rows` when given.
Value zerosLike(ImplicitLocOpBuilder &b, Value t, Value rows = Value()) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(rows && d == kSeqDim
                        ? rows
                        : tensor::DimOp::create(b, t, d).getResult());
  Value empty =
      tensor::EmptyOp::create(b, type.getShape(), b.getF32Type(), dyn);
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  return linalg::FillOp::create(b, zero, ValueRange{empty}).getResult(0);
}

/// `t` in f32.
Value asF32(ImplicitLocOpBuilder &b, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getElementType().isF32())
    return t;
  return arith::ExtFOp::create(b, type.clone(b.getF32Type()), t);
}

} // namespace

SmallVector<Value> RankProgram::gradientBlock(Value q, const GradientInputs &in,
                                              Value kBlock, Value vBlock,
                                              const Runs &held,
                                              ValueRange acc) {
  SmallVector<Value> init(acc);
  // The block's partial dK and dV, over its rows in hand.
  init[1] = zerosLike(b, kBlock);
  init[2] = zerosLike(b, vBlock);
  SmallVector<Type> captureTypes;
  for (Value c : in.captures)
    captureTypes.push_back(c.getType());
  return overRunPairs(
      q, kBlock, vBlock, held, init,
      [&](const RunPair &pair, ValueRange out) -> SmallVector<Value> {
        AttentionOp step = pair.step;
        auto rows = [&](Value t) {
          return t ? rowSlice(t, pair.qRow, pair.qRows) : Value();
        };
        // Softmax: normalized by the whole sequence's statistics.
        bool softmax = static_cast<bool>(step.getLse());
        auto grad = AttentionGradOp::create(
            b, step.getQuery().getType(), step.getKey().getType(),
            step.getValue().getType(), Type(), Type(), Type(), Type(), Type(),
            captureTypes, step.getResult(), rows(in.dOutput),
            softmax ? rows(in.dLse) : Value(),
            softmax ? rows(in.savedOutput) : Value(),
            softmax ? rows(in.savedLse) : Value(), Value(), Value());
        SmallVector<Value> next = {
            accumulate(out[0], grad.getGradQuery(), pair.qRow, pair.qRows),
            accumulate(out[1], grad.getGradKey(), pair.kRow, pair.kRows),
            accumulate(out[2], grad.getGradValue(), pair.kRow, pair.kRows)};
        for (auto [i, g] : llvm::enumerate(grad.getGradCaptures()))
          next.push_back(sum(out[3 + i], g));
        return next;
      });
}

SmallVector<Value> RankProgram::returnPartials(Value t, Value origin, Value use,
                                               ValueRange acc,
                                               ValueRange computed) {
  Value dK = acc[1], dV = acc[2];
  Value partK = computed[1], partV = computed[2];
  Value first = cmp(arith::CmpIPredicate::eq, t, idx(0));
  Value later = cmp(arith::CmpIPredicate::ne, t, idx(0));
  // This rank's own block is in the hands of rank + t, which used it when
  // its queries see some of its keys (the forward's test, alike on both
  // sides); its rows there are those the ring carried to it.
  Value holder = rem(add(rank, t), numRanks);
  Value sendBack = arith::AndIOp::create(b, use, later);
  Value receiveBack = arith::AndIOp::create(b, later, needs(holder, rank));
  Value backOffset = idx(0), backRows = rowsOf(rank);
  if (trims()) {
    Runs whole = runsOf(rank);
    Value before = rem(sub(add(holder, numRanks), idx(1)), numRanks);
    Runs kept = keepRows(rank, before, sub(numRanks, t));
    backOffset = sub(kept.start[0], whole.start[0]);
    backRows = kept.length[0];
  }
  Value none = idx(-1);
  Value dest = indexCast(b.getI32Type(), select(sendBack, origin, none));
  Value source = indexCast(b.getI32Type(), select(receiveBack, holder, none));
  Value inRows = select(receiveBack, backRows, idx(0));
  ExchangeOp kEx = exchangeRows(partK, dest, source, inRows, 3);
  ExchangeOp vEx = exchangeRows(partV, dest, source, inRows, 4);
  Value inK = waitFor(kEx, partK), inV = waitFor(vEx, partV);
  // In ring order: this rank's own share first (step 0, the whole
  // chunk), then each received one.
  Type typeList[] = {dK.getType(), dV.getType()};
  TypeRange types(typeList);
  auto own = scf::IfOp::create(b, types, arith::AndIOp::create(b, first, use),
                               /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(own.thenBlock());
    scf::YieldOp::create(b, ValueRange{sum(dK, partK), sum(dV, partV)});
    b.setInsertionPointToStart(own.elseBlock());
    auto received = scf::IfOp::create(b, types, receiveBack, /*withElse=*/true);
    scf::YieldOp::create(b, received.getResults());
    b.setInsertionPointToStart(received.thenBlock());
    scf::YieldOp::create(b,
                         ValueRange{accumulate(dK, inK, backOffset, backRows),
                                    accumulate(dV, inV, backOffset, backRows)});
    b.setInsertionPointToStart(received.elseBlock());
    scf::YieldOp::create(b, ValueRange{dK, dV});
  }
  SmallVector<Value> next = {computed[0], own.getResult(0), own.getResult(1)};
  next.append(computed.begin() + 3, computed.end());
  return next;
}

GradientResults RankProgram::buildGradient(Value q, Value k, Value v,
                                           const GradientInputs &inputs) {
  localQuery = q;
  Value ok = setUp(q, k, v);
  SmallVector<Value> init = {zerosLike(b, q), zerosLike(b, k), zerosLike(b, v)};
  for (Value c : inputs.captures)
    init.push_back(zerosLike(b, c));
  // The local rows of dO must be the queries' (a run-time check, as the
  // forward checks the key/value rows).
  Value dRows = tensor::DimOp::create(b, inputs.dOutput, kSeqDim);
  Value rowsOk = cmp(arith::CmpIPredicate::eq, dRows, localRows);
  {
    auto ifOp = scf::IfOp::create(
        b,
        arith::XOrIOp::create(b, rowsOk, arith::ConstantIntOp::create(b, 1, 1)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitRuntimeError(b, op, static_cast<int32_t>(RuntimeError::SequenceChunk),
                     rank, dRows, localRows);
  }
  ok = arith::AndIOp::create(b, ok, rowsOk);
  auto ifOk = scf::IfOp::create(b, ValueRange(init).getTypes(), ok,
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOk.elseBlock());
  scf::YieldOp::create(b, init);
  b.setInsertionPointToStart(ifOk.thenBlock());
  GradientInputs in = inputs;
  in.dOutput = asF32(b, in.dOutput);
  if (isa<KernelAttr>(op.getNormalizer())) {
    // Linear attention: no ring, the states reduce both ways.
    scf::YieldOp::create(b, buildLinearRankGradient(b, op, q, k, v, in.dOutput,
                                                    comm, rank, numRanks,
                                                    !in.captures.empty()));
  } else if (isa<PointwiseAttr>(op.getNormalizer())) {
    // The blocks are unscaled: dO carries the whole sequence's Lk^-alpha.
    in.dOutput = lengthFactor(in.dOutput);
  } else if (!in.savedOutput || !in.savedLse) {
    // The forward ring first: the merged output and log-sum-exp.
    Accumulators acc = accumulators(q, v);
    auto [o, l] = ring(q, k, v, acc.output, acc.lse, acc.dynamic, acc.dynamic);
    in.savedOutput = o;
    in.savedLse = l;
  } else {
    in.savedOutput = asF32(b, in.savedOutput);
  }
  if (!isa<KernelAttr>(op.getNormalizer()))
    scf::YieldOp::create(b, backwardRing(q, k, v, in, init));
  GradientResults r;
  r.query = ifOk.getResult(0);
  r.key = ifOk.getResult(1);
  r.value = ifOk.getResult(2);
  r.captures.assign(ifOk.getResults().begin() + 3, ifOk.getResults().end());
  return r;
}

SmallVector<Value> RankProgram::backwardRing(Value q, Value k, Value v,
                                             const GradientInputs &in,
                                             ValueRange init) {
  SmallVector<Value> iter = {k, v};
  iter.append(init.begin(), init.end());
  auto loop = scf::ForOp::create(b, idx(0), numRanks, idx(1), iter);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange args = loop.getRegionIterArgs();
    scf::YieldOp::create(
        b, ringStep(
               loop.getInductionVar(), args, args.drop_front(2).getTypes(),
               [&](Value kCur, Value vCur, const Runs &held, ValueRange acc) {
                 return gradientBlock(q, in, kCur, vCur, held, acc);
               },
               [&](Value t, Value origin, Value use, const Runs &,
                   ValueRange acc, ValueRange computed) {
                 return returnPartials(t, origin, use, acc, computed);
               }));
  }
  SmallVector<Value> results(loop.getResults().drop_front(2));
  // The captures' gradients: every rank's sum.
  for (Value &g : MutableArrayRef<Value>(results).drop_front(3)) {
    auto type = cast<RankedTensorType>(g.getType());
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dyn.push_back(tensor::DimOp::create(b, g, d));
    Value into =
        tensor::EmptyOp::create(b, type.getShape(), type.getElementType(), dyn);
    g = AllReduceOp::create(b, type, g, into, comm).getResult();
  }
  return results;
}
