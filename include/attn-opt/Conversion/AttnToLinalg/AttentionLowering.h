//===- AttentionLowering.h - Shared pieces of the reference lowering -*- C++
//-*-===//
//
// The building blocks of convert-attn-to-linalg, shared by the lowerings of
// attn.attention, attn.lowrank_attention, attn.relative_attention and
// attn.lsh_attention. All of them compute in f32.
//
// Heads are handled in a 5-D layout: a query-head tensor `B x Hq x L x X`
// is expanded to `B x Hkv x G x L x X` (G = Hq / Hkv), so grouped-query
// attention is a plain broadcast of the key/value head in the indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_ATTENTIONLOWERING_H
#define ATTN_CONVERSION_ATTNTOLINALG_ATTENTIONLOWERING_H

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Mask/MaskPattern.h"

#include <functional>
#include <optional>

namespace mlir::attn {

/// `B x Hq x L x X` to `B x Hkv x G x L x X`.
Value splitHeads(TensorBuilder &tb, Value v, int64_t kvHeads);
/// `B x Hkv x G x L x X` to `B x Hq x L x X`.
Value mergeHeads(TensorBuilder &tb, Value v);

/// The feature map of `kernel` applied to the rows of `x` (last dimension D)
/// after multiplying them by `inputScale`; the FAVOR+ projection comes from
/// `projection` (`m x D`) when given, else from the kernel's seed. f32.
Value featureMap(TensorBuilder &tb, Value x, KernelAttr kernel,
                 double inputScale, Value projection);

/// The FAVOR+ projection `W` (`features x dim`): `projection` when given,
/// else the kernel seed's constant.
Value favorWeights(TensorBuilder &tb, KernelAttr kernel, int64_t dim,
                   Value projection);

/// The gradient of `x` from that of `featureMap(x, kernel, inputScale,
/// projection)` (`dPhi`, f32): elu+1 `exp(v)` below 0 and 1 above, relu
/// 0 / 1, FAVOR+ `W^T (dPhi phi) - v sum_r (dPhi phi)_r`, with `v` the
/// scaled input, times `inputScale`. With `dProjection` (FAVOR+), adds the
/// projection's gradient `sum over the rows of (dPhi phi) v^T` (`m x D`,
/// f32) to it (sets it when null).
Value featureMapGrad(TensorBuilder &tb, Value x, Value dPhi, KernelAttr kernel,
                     double inputScale, Value projection,
                     Value *dProjection = nullptr);

/// `S[b,k,g,i,j] = sum_d q5[b,k,g,i,d] * key[b,k,j,d]` in f32.
Value scores5(TensorBuilder &tb, Value q5, Value key);

struct WeightSpec;

/// The keys (or values) of a paged KV cache as a contiguous tensor
/// `B x Hkv x (P_max * page) x D`: element `(b, h, j, d)` is
/// `pool[table[b, j / page], h, j % page, d]`, pages clamped into the pool
/// (table entries past a sequence's length may hold anything).
Value gatherPages(TensorBuilder &tb, Value pool, Value table);

/// `O[b,k,g,i,e] = sum_j p[b,k,g,i,j] * value[b,k,j,e]` in f32. With a
/// varlen `spec` (lengths or offsets), only the keys of the query's sequence
/// are summed: value rows outside it are never read into the sum (their
/// memory may hold anything, NaN included), as in the fused kernels.
Value applyValues5(TensorBuilder &tb, Value p, Value value,
                   const WeightSpec *spec = nullptr);

/// The bias element (as f32) of the 5-D score indices `(b, kvHead, g, i, j)`
/// of attention with `group` query heads per key/value head; also the
/// element of a mask tensor (f32 for additive masks, i1 for boolean ones).
Value biasAt5(ImplicitLocOpBuilder &b, Value bias, int64_t group,
              ValueRange idx);

/// What turns raw scores into weights.
struct WeightSpec {
  NormalizerAttrInterface normalizer;
  /// Multiplies the raw scores (softmax and pointwise).
  double scale = 1.0;
  /// The key length L of pointwise attention's `L^-alpha` (static or an
  /// index value).
  OpFoldResult keyLen;
  /// Optional term added to the raw score before scaling:
  /// `(b, kvHead, g, i, j) -> f32`.
  std::function<Value(ImplicitLocOpBuilder &, ValueRange idx)> extraScore;
  /// Optional term added after scaling (the bias operand), same signature.
  std::function<Value(ImplicitLocOpBuilder &, ValueRange idx)> bias;
  /// Optional mask; `segments` are the query and key segment-id tensors
  /// (`B x Lq`, `B x Lk`) when the mask uses them. `maskOffset` (index) is
  /// the key position of query 0, `Lk - Lq`, when the lengths are dynamic.
  const mask::Mask *mask = nullptr;
  Value maskOffset;
  /// Varlen batches (attn.attention's operands): padded lengths (i32 `B`)
  /// or packed offsets (i32 `N + 1`) with, for packed batches, the sequence
  /// of each query and key row (i32, -1 past the last offset; see
  /// rowSequences). Every position is then relative to its sequence.
  Value queryLengths, keyLengths, queryOffsets, keyOffsets;
  Value querySequence, keySequence;
  Value querySegments, keySegments;
  /// The mask tensor (attn.attention's `mask`): boolean, or additive.
  Value maskTensor;
  /// Query heads per key/value head.
  int64_t group = 1;
  /// Score modifiers (attn.attention's): soft-capping of the scaled
  /// scores, ALiBi slopes and attention sinks (f32 `Hq` tensors, softmax
  /// only for sinks), applied in the op's order.
  std::optional<double> softcap;
  Value alibiSlopes, sinks;
  /// The score and mask regions (attn.attention's, ModRegion.h) and the
  /// tensors they capture: the score region applied after the modifiers
  /// above, the mask region (part of `mask`) evaluated per element.
  Region *scoreMod = nullptr, *maskMod = nullptr;
  SmallVector<Value> captures;
};

/// The sequence of each of the `rows` rows of a packed batch with `offsets`
/// (i32 `N + 1`): an i32 tensor of `rows` entries, -1 for rows past the last
/// offset.
Value rowSequences(TensorBuilder &tb, Value offsets, OpFoldResult rows);

/// Weights `P` (same shape as the 5-D scores `s`) under `spec`: masked
/// entries are 0 and fully masked rows are all 0. With `lse` (softmax only)
/// also sets it to the rows' log-sum-exp (`[b, kvHead, g, i]`, f32): the
/// log of the softmax denominator, -inf where it is 0.
Value weights5(TensorBuilder &tb, Value s, const WeightSpec &spec,
               Value *lse = nullptr);

/// What the gradient of the weights gives the scores (attn.attention_grad):
/// the cotangent of the weights `dWeights` (`dO V^T`, 5-D) with the weights
/// `weights` (5-D, from weights5) and, for softmax, the rows' `rowDot`
/// (`D = rowsum(dO * O)`, `[b, kvHead, g, i]`) and optional `dLse` (same
/// rows).
struct ScoreCotangent {
  Value weights, dWeights, rowDot, dLse;
  /// Kernel attention: the rows' denominators `sum_j A_ij + eps` (`A` the
  /// masked feature products, maskedScores5).
  Value denominator;
  /// Stop at the score region's result: the gradient of the final score
  /// (what the region's captured tensors take), not of its input.
  bool atRegionResult = false;
};

/// The masked scores of weights5 before normalization: softmax's -inf and
/// kernel attention's 0 where masked, pointwise attention's weights.
Value maskedScores5(TensorBuilder &tb, Value s, const WeightSpec &spec);

/// The gradient of the loss with respect to the scores before soft-capping
/// (`y = scale * s + bias - alibi`, so the raw scores' gradient is `scale`
/// times it and the bias's is it), 5-D f32 like the raw scores `s`, under
/// the same `spec` as weights5: softmax `P * (dP - D + dLse)`, pointwise
/// `Lk^-alpha h'(x) dP`, through soft-capping; kernel attention `(dP - D) /
/// (den + eps)` (the raw scores are the feature products); 0 where a score
/// is masked (never NaN there).
Value scoreGradient5(TensorBuilder &tb, Value s, const WeightSpec &spec,
                     const ScoreCotangent &cotangent);

/// The gradient of the ALiBi slopes (`Hq`, f32) from `dy`, scoreGradient5's
/// result: `d slope_h = -sum dy |i + Lk - Lq - j|` (per sequence for varlen
/// batches) over batch rows, queries and keys.
Value alibiSlopeGradient5(TensorBuilder &tb, Value dy, const WeightSpec &spec);

/// The gradients (f32, in their shapes) of the captured tensors
/// `captures` (positions among spec.captures) of the score region: every
/// read of the region at a score adds `dyFinal` there (scoreGradient5's
/// result with `atRegionResult`) times the region's partial derivative
/// with respect to the read. `s` the raw scores. Loops over the scores
/// (the reference's scatter), skipping those with a zero gradient.
SmallVector<Value> captureGradients5(TensorBuilder &tb, Value s,
                                     const WeightSpec &spec, Value dyFinal,
                                     ArrayRef<unsigned> captures);

/// The pieces of attn.attention's reference lowering up to the raw scores,
/// shared by the forward and the gradient lowerings: the 5-D queries and
/// the keys (layer-normalized, through the feature map for kernel
/// attention), the contiguous keys and values (a paged cache gathered), the
/// raw scores and the spec that turns them into weights (its mask points
/// into `mask`). Built in place: the spec holds a pointer into it.
struct AttentionScores {
  Value query5, key, keyIn, valueIn, scores;
  WeightSpec spec;
  std::optional<mask::Mask> mask;

  AttentionScores() = default;
  AttentionScores(const AttentionScores &) = delete;
  AttentionScores &operator=(const AttentionScores &) = delete;
};
void buildAttentionScores(TensorBuilder &tb, AttentionOp op,
                          AttentionScores &out);

/// Lowers the attn.attention_grad ops under `root` to linalg on tensors
/// (the reference gradient; AttentionGradLowering.cpp), before anything
/// lowers their forward ops; a forward op left without uses is erased.
/// Fails (with a diagnostic on the op) for gradients it cannot build.
/// With `linearKernelized`, kernelized attention without a mask or with a
/// causal or segment pattern takes the linear form (attn.chunked_linear
/// ops, unnormalized, and contractions through `phi^T` states) instead of
/// materializing the `Lq x Lk` score gradient.
LogicalResult lowerAttentionGrads(Operation *root,
                                  bool linearKernelized = false);

/// The value of an attn.chunked_linear with `reverse`: the op without it
/// (returned in `forward`) on the reversed sequences (features, values,
/// gate; segment ids reversed and negated, so sorted ids stay sorted),
/// its result reversed back.
Value expandReversedChunkedLinear(TensorBuilder &tb, ChunkedLinearOp op,
                                  ChunkedLinearOp &forward);

/// `num / (den + eps)` over 5-D `num` and row-wise `den` (one fewer
/// dimension), 0 where `den + eps` is 0 (kernel attention's rule).
Value divideRows(TensorBuilder &tb, Value num, Value den, double eps);

/// Multiplies a 5-D f32 output by the gate (4-D, query heads), if any.
Value applyGate(TensorBuilder &tb, Value o, Value gate, int64_t kvHeads);

/// Rounds a 5-D f32 output to `elementType` and merges the heads.
Value finishHeads(TensorBuilder &tb, Value o, Type elementType);

/// The output of attention over 5-D scores `s` and `value`: weights under
/// `spec`, the weighted sum, rounded to `elementType`, heads merged.
Value attend(TensorBuilder &tb, Value s, const WeightSpec &spec, Value value,
             Type elementType);

/// Lowers attn.lsh_attention (LshLowering.cpp): keys normalized, per round
/// the hash, an O(L^2) stable sort and linalg chunks, the rounds combined
/// at the end. (attn-lsh-kernels is the fast form of the same semantics.)
FailureOr<Value> lowerLshAttention(ImplicitLocOpBuilder &b, LshAttentionOp op);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOLINALG_ATTENTIONLOWERING_H
