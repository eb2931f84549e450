//===- PartitionSequence.h - Pieces of attn-partition-sequence --*- C++ -*-===//
//
// Private to lib/Dialect/Attn/Transforms: the kernelized (linear) form of a
// rank's program, built in PartitionSequenceLinear.cpp, used by
// PartitionSequence.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

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

} // namespace mlir::attn

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PARTITIONSEQUENCE_H
