//===- Transforms.h - attn rewrites shared by passes ------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// Rewrites `op` into its explicit steps (layer_norm, feature_map, scores,
/// normalize, apply) and returns the final attn.apply. With sizes checked at
/// run time the steps sit in the `scf.if` of the checks
/// (buildUnderRuntimeChecks). Fails, changing nothing, on varlen ops (the
/// steps have no lengths or offsets).
FailureOr<ApplyOp> decomposeAttention(RewriterBase &rewriter, AttentionOp op);

/// The estimated cost of the two forms of one kernelized attention.
struct ReassociationCost {
  double quadraticFlops = 0, quadraticBytes = 0;
  double linearFlops = 0, linearBytes = 0;
  /// Estimated seconds: flops / 100 GFLOP/s + bytes / 10 GB/s.
  double quadraticTime() const;
  double linearTime() const;
};

/// The cost model of attn-reassociate for attention of `dims` with `F`
/// features; `masked` for the chunked prefix form with chunk size `chunk`.
ReassociationCost estimateReassociation(const AttentionDims &dims,
                                        int64_t features, bool masked,
                                        int64_t chunk);

/// The default chunk size of the prefix form: the power of two nearest
/// sqrt(F * Dv), clamped to [16, 128] (and to L).
int64_t defaultChunkSize(int64_t features, int64_t valueDim, int64_t length);

/// What attn-reassociate's linear form of kernelized attention supports
/// (AttentionFeatures.h): causal masks and documents (their chunked prefix
/// form over static Lq = Lk) and none of a varlen batch, a mask tensor or
/// a mask region.
const Capability &getReassociateCapability();

/// What attn-partition-sequence supports of an attention sharded along
/// the sequence.
const Capability &getPartitionSequenceCapability();

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
