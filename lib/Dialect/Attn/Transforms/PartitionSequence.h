//===- PartitionSequence.h - Pieces of attn-partition-sequence --*- C++ -*-===//
//
// Private to lib/Dialect/Attn/Transforms: the program one rank runs for an
// attn.attention sharded along the sequence (attn-partition-sequence),
// built in steps, one file each:
//   PartitionSequence.cpp        the pass: the sharding annotations, what
//                                is supported (its capability), the rewrite
//   PartitionExchange.cpp        the schedule: where each rank's rows lie,
//                                which rank needs which key/value block,
//                                the ring and its exchanges
//   PartitionCompute.cpp         the attention of the local queries against
//                                the block in hand: the op's own problem
//                                with its mask at the block's positions
//   PartitionMerge.cpp           the partial results merged
//   PartitionSequenceLinear.cpp  kernelized attention: the key/value state
//                                reduced, no ring
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::attn {

/// The sequence dimension of query, key, value and the output.
constexpr int64_t kSeqDim = 2;

/// What the sharding annotations around an attn.attention say.
struct ShardedAttention {
  AttentionOp op;
  shard::GridOp grid;
  /// Static chunk offsets (sharded_dims_offsets of the sequence: P + 1
  /// entries), or empty.
  SmallVector<int64_t> staticOffsets;
  bool zigzag = false;
  /// The shard.shard ops of the query, key and value (may repeat).
  SmallVector<shard::ShardOp> operandShards;
  /// The shard.shard ops the results go through.
  SmallVector<shard::ShardOp> resultShards;
  /// The gradients of the op (attn.attention_grad ops whose forward it is:
  /// attn-differentiate's @F_grad of a sharded @F, or a training
  /// framework's backward entry).
  SmallVector<AttentionGradOp> grads;
};

/// What a rank's backward reads (the local rows of each; null when
/// absent): the output's cotangent `dO` and the log-sum-exp's, and the
/// forward's output and log-sum-exp when saved (otherwise the forward ring
/// computes them first).
struct GradientInputs {
  Value dOutput, dLse, savedOutput, savedLse;
  /// The replicated operands that take a gradient (summed over the blocks,
  /// then over the ranks): the floating-point captures, or a FAVOR+
  /// projection.
  SmallVector<Value> captures;
};

/// A rank's gradients: its rows of dQ, dK and dV (f32), and the
/// gradients of the replicated operands (the captures', or a FAVOR+
/// projection's: the whole tensors, summed over every rank).
struct GradientResults {
  Value query, key, value;
  SmallVector<Value> captures;
};

/// The tensors the rank's mask region reads: the op's captures, then (for
/// a pattern with segments) the query and key segment ids.
SmallVector<Value> regionCaptures(AttentionOp op);

/// Fills `region` with a mask region (`isMask`) or score region over
/// positions shifted by captured offsets: arguments (score,) b, h, q, k,
/// then, when `shifted`, a `tensor<2xi64>` of the query and key offsets,
/// then `captureTypes`. The body is the op's pattern (mask region only,
/// through the mask emitter) and the op's own region `source` (if any),
/// both at positions `q + offset[0]` and `k + offset[1]`. Returns false
/// when there is nothing to evaluate (no pattern, no source region): the
/// region stays empty.
bool buildShiftedRegion(OpBuilder &builder, AttentionOp op, Region &region,
                        bool isMask, Region *source, bool shifted,
                        TypeRange captureTypes);

/// The program of one rank of a sharded softmax or pointwise attention:
/// its queries against the key/value blocks passed around a ring, the
/// partial results merged.
class RankProgram : public KernelArith {
public:
  RankProgram(ImplicitLocOpBuilder &b, ShardedAttention &s,
              const ModProgram *mask);

  /// Emits everything; returns the local result and log-sum-exp (f32).
  std::pair<Value, Value> build(Value q, Value k, Value v);

  /// Emits the backward (PartitionBackward.cpp): the ring of key/value
  /// blocks again, each rank adding its queries' share of each block's dK
  /// and dV and sending it back to the block's owner (only where it used
  /// the block, only its rows in hand), which adds them in ring order.
  GradientResults buildGradient(Value q, Value k, Value v,
                                const GradientInputs &in);

private:
  /// The two runs of rank `rank`'s rows: (global start, length); the
  /// second has length 0 in the contiguous order.
  struct Runs {
    Value start[2], length[2];
  };
  /// Returns the values that join the accumulators for the block in hand
  /// (`held` its rows) given the accumulators `acc`; only called where
  /// this rank needs the block.
  using BlockCompute = function_ref<SmallVector<Value>(
      Value k, Value v, const Runs &held, ValueRange acc)>;
  /// After the block step: the ring step `t`, the block's origin, whether
  /// this rank used it, its rows in hand, the accumulators before the step
  /// and what the step returned (the accumulators unchanged where unused);
  /// returns the next accumulators.
  using AfterBlock = function_ref<SmallVector<Value>(
      Value t, Value origin, Value use, const Runs &held, ValueRange acc,
      ValueRange computed)>;

  /// The types of the ring's accumulators (f32 output and log-sum-exp of
  /// the local rows) and their dynamic sizes.
  struct Accumulators {
    RankedTensorType output, lse;
    SmallVector<Value> dynamic;
  };
  Accumulators accumulators(Value q, Value v);

  //===--- The schedule (PartitionExchange.cpp) ------------------------===//
  /// The communicator, rank, number of ranks and every rank's rows
  /// (sizes), their checks; returns the verdict (i1).
  Value setUp(Value q, Value k, Value v);
  /// The checks of the gathered sizes; true when all hold.
  Value checkSizes(Value kvBad);
  /// The rows of rank `rank` (from the gathered sizes).
  Value rowsOf(Value rank);
  Runs runsOf(Value rank);
  /// Whether some query of global rows [qStart, qStart + qLength) may see
  /// some key of [kStart, kStart + kLength) (false when either is empty).
  Value mayMeet(Value qStart, Value qLength, Value kStart, Value kLength);
  /// Whether the queries of rank `dst` see some key of rank `src`.
  Value needs(Value dst, Value src);
  /// Whether one of the `count` ranks after `from` needs the keys of `src`.
  Value neededAfter(Value src, Value from, Value count);
  /// Whether the pattern bounds the keys a query sees (the ring then trims
  /// blocks to those rows: contiguous order).
  bool trims();
  /// The rows (start, length) of rank `src`'s keys that the queries of the
  /// `count` ranks after `from` need, by the pattern's key range: the hull
  /// of their ranges within `src`'s chunk (length 0 when none needs a
  /// row).
  Runs keepRows(Value src, Value from, Value count);
  /// One step of the ring over `iter` = (key block, value block,
  /// accumulators...): the exchange of the block in hand for the next one
  /// around `compute` (results of `computeTypes`), then `after`.
  SmallVector<Value> ringStep(Value t, ValueRange iter, TypeRange computeTypes,
                              BlockCompute compute, AfterBlock after = {});
  /// Sends `block` to rank `dest` and receives a block of its type with
  /// `inRows` rows from `source` (i32 ranks, -1 for none), nonblocking.
  ExchangeOp exchangeRows(Value block, Value dest, Value source, Value inRows,
                          int32_t tag);
  /// Waits for both requests of `exchange`; returns the received block.
  Value waitFor(ExchangeOp exchange, Value sent);
  /// The ring over every rank's block, from accumulators of these types
  /// (and dynamic sizes); returns them.
  std::pair<Value, Value> ring(Value q, Value k, Value v,
                               RankedTensorType accOType,
                               RankedTensorType accLType, ValueRange dynO,
                               ValueRange dynL);

  //===--- The kernels of a block (PartitionCompute.cpp) ---------------===//
  /// Rows [row, row + rows) of a [B, H, L, D] tensor; of `t`'s own type
  /// when `keepType` (a block the ring passes on), else the inferred one.
  Value rowSlice(Value t, Value row, Value rows, bool keepType = false);
  /// A pair of a local query run and a run of the block in hand that may
  /// meet: their rows within the local queries and the block, and the
  /// block attention of the pair (blockAttention).
  struct RunPair {
    Value qRow, qRows, kRow, kRows;
    AttentionOp step;
  };
  using PairCompute =
      function_ref<SmallVector<Value>(const RunPair &, ValueRange acc)>;
  /// For each pair of runs that may meet (one of each in the contiguous
  /// order, two of each in the zigzag order), under an scf.if on it, the
  /// accumulators `compute` returns from those before; returns the last.
  SmallVector<Value> overRunPairs(Value q, Value kBlock, Value vBlock,
                                  const Runs &held, ValueRange acc,
                                  PairCompute compute);
  /// The attention of the local queries against the block of rows `held`,
  /// merged into the accumulators.
  std::pair<Value, Value> computeBlock(Value q, Value kBlock, Value vBlock,
                                       const Runs &held, Value accO,
                                       Value accL);
  /// The attention of query rows `qs` against the key/value rows `ks`,
  /// `vs` at global offsets `offsets` (`tensor<2xi64>`): the op's problem
  /// with these operands and its mask and score regions shifted there.
  AttentionOp blockAttention(Value qs, Value ks, Value vs, Value offsets);

  //===--- The backward (PartitionBackward.cpp) ------------------------===//
  /// The gradient of the local queries against the block in hand: adds
  /// their part to dQ and the captures' gradients (`acc` = dQ, dK, dV,
  /// captures...) and returns them with the block's partial dK and dV
  /// (the block's rows) in place of dK and dV.
  SmallVector<Value> gradientBlock(Value q, const GradientInputs &in,
                                   Value kBlock, Value vBlock, const Runs &held,
                                   ValueRange acc);
  /// The backward ring from the accumulators `init` (dQ, dK, dV,
  /// captures...); returns them, the captures' summed over the ranks.
  SmallVector<Value> backwardRing(Value q, Value k, Value v,
                                  const GradientInputs &in, ValueRange init);
  /// The partial dK and dV of step `t` sent back to their owners, this
  /// rank's own received and added in ring order.
  SmallVector<Value> returnPartials(Value t, Value origin, Value use,
                                    ValueRange acc, ValueRange computed);

  //===--- The merge (PartitionMerge.cpp) ------------------------------===//
  /// Adds `o` to the accumulator's local rows [row, row + rows).
  Value accumulate(Value accO, Value o, Value row, Value rows);
  /// `x + y`, elementwise (f32 tensors of one shape).
  Value sum(Value x, Value y);
  /// `acc * factor` (f32 scalar), elementwise.
  Value scaled(Value acc, Value factor);
  /// Merges (o, l) over local rows [row, row + rows) into the accumulators.
  std::pair<Value, Value> merge(Value accO, Value accL, Value o, Value l,
                                Value row, Value rows);
  /// Pointwise attention: the sum scaled by `Lk^-alpha` of the whole
  /// sequence.
  Value lengthFactor(Value out);

  /// The offsets, sizes and strides of rows [row, row + rows) (dim 2) of
  /// a [B, H, L, D] or [B, H, L] tensor.
  struct RowWindow {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  RowWindow rowWindow(Value t, Value row, Value rows);

  ShardedAttention &s;
  AttentionOp op;
  const ModProgram *mask;
  /// The op's pattern as the mask library's mask (its key ranges).
  mask::Mask patternMask;
  Value comm, rank, numRanks, sizes, total;
  /// This rank's rows (of the queries).
  Value localRows;
  /// This rank's queries (the batch size is read from them).
  Value localQuery;
};

/// The output of kernelized attention `op` (normalizer #attn.kernel, no
/// pattern or #attn.causal) for this rank's contiguous rows: queries `q`,
/// keys `k`, values `v` (the local chunks), over communicator `comm` of
/// `numRanks` ranks of which this is `rank` (index values). The key/value
/// state `phi(K)^T [V, 1]` (`F x (Dv + 1)`: its last column is the key
/// sum) is reduced across the ranks, never the keys: summed over all of
/// them (unmasked), or over the ranks before this one (causal, an
/// exclusive prefix scan by an all-reduce of one slot per rank) and added
/// to the local chunked prefix form.
Value buildLinearRankProgram(ImplicitLocOpBuilder &b, AttentionOp op, Value q,
                             Value k, Value v, Value comm, Value rank,
                             Value numRanks);

/// The gradients of kernelized attention `op` for this rank's rows (as
/// buildLinearRankProgram): dQ, dK, dV (f32) and, with `projectionGrad`,
/// the FAVOR+ projection's summed over the ranks. `dO` is the rank's rows
/// of the output's cotangent (f32).
SmallVector<Value> buildLinearRankGradient(ImplicitLocOpBuilder &b,
                                           AttentionOp op, Value q, Value k,
                                           Value v, Value dO, Value comm,
                                           Value rank, Value numRanks,
                                           bool projectionGrad);

} // namespace mlir::attn

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H
