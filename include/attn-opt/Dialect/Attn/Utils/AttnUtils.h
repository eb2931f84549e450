//===- AttnUtils.h - IR helpers shared by every attn lowering ---*- C++ -*-===//
//
// The small pieces of attention that the reference lowering
// (convert-attn-to-linalg) and the fused kernels (CPU and GPU) all build:
// element type conversions of tensors, the qk layer norm, the pointwise
// functions h of ReLU-family attention and the broadcast rule of the bias
// operand. Each is written once, here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_ATTNUTILS_H
#define ATTN_DIALECT_ATTN_UTILS_ATTNUTILS_H

#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h"
#include "attn-opt/Dialect/Attn/Utils/TensorBuilder.h"

namespace mlir::attn {

/// Replaces every attn op under `root` whose results all have a static shape
/// with no elements (B, H or L of 0) by `tensor.empty`: there is nothing to
/// compute (docs/Semantics.md, "Zero sizes"). The lowerings call it first,
/// so that none of them builds slices or loops over empty ranges.
void replaceEmptyAttention(Operation *root);

/// Extends a float tensor to f32 (a no-op for f32).
Value toF32Tensor(TensorBuilder &tb, Value v);
/// Truncates an f32 tensor to `elementType` (a no-op for f32).
Value fromF32Tensor(TensorBuilder &tb, Value v, Type elementType);

/// Linformer's projection along the sequence, in f32:
/// `x'[b, h, p, c] = sum_j proj[p, j] x[b, h, j, c]` (`proj` `P x L`, `x`
/// `B x H x L x C`, static shapes), one contraction `linalg.generic` over
/// loops `(b, h, p, j, c)`.
Value lowRankProjection(TensorBuilder &tb, Value proj, Value x);

/// Layer normalization of the last dimension, `(x - mean) / sqrt(var +
/// eps)` with the population variance and no affine parameters, to f32.
Value layerNorm(TensorBuilder &tb, Value x, double eps);
/// The gradient (f32) of `x` (`... x D`) from `dy` (f32), that of
/// `layerNorm(x, eps)`: `(dy - mean(dy) - n mean(dy n)) / sigma` with `n`
/// the normalized `x`.
Value layerNormGrad(TensorBuilder &tb, Value x, Value dy, double eps);

/// The discardable attribute of an f32 `math.exp` whose results below
/// e^bound may be 0: `attn.flush_below = bound` (an f32 attribute).
/// attn-math-approximation gives exactly 0 for x < bound; other lowerings
/// may ignore it.
inline constexpr llvm::StringLiteral kExpFlushBelowAttr = "attn.flush_below";
/// The bound of the kernels' softmax weights exp(s - m): weights below
/// e^-64 (1.6e-28) of the row's largest are 0. Their sum over any row
/// changes the output by less than 1e-20 of it, far below f32's
/// resolution, and it keeps weights, their products with values and the
/// rescaled accumulators out of the subnormal range, which x86 CPUs
/// compute through slow microcode assists (large logits made the Linformer
/// example's kernel 2x slower).
inline constexpr double kSoftmaxWeightFloor = -64.0;

/// sqrt(2 / pi), the factor of GELU's tanh approximation.
inline constexpr double kGeluTanhC = 0.7978845608028654;
/// exp(x) of an f32 scalar or vector, marked to flush results below
/// e^kSoftmaxWeightFloor to 0 (kExpFlushBelowAttr).
Value softmaxExp(ImplicitLocOpBuilder &b, Value x);

/// h(x) of pointwise attention on an f32 scalar or vector.
Value applyPointwiseFn(ImplicitLocOpBuilder &b, PointwiseFn fn, Value x);
/// h'(x), the derivative of applyPointwiseFn's h, on an f32 scalar or
/// vector (relu and relu6: 1 inside their linear piece, 0 elsewhere, at the
/// kinks too).
Value applyPointwiseDerivative(ImplicitLocOpBuilder &b, PointwiseFn fn,
                               Value x);

/// A float constant shaped like `like` (a splat for vectors).
Value floatLike(ImplicitLocOpBuilder &b, Value like, double value);

/// The indices of the bias element of (batch, query head, query, key) in a
/// bias of shape `biasShape` (`{1 or B} x {1 or Hq} x Lq x Lk`): broadcast
/// dimensions of size 1 read index `zero`. A mask tensor may also be
/// `Lq x Lk` (two indices).
SmallVector<Value, 4> biasIndices(ArrayRef<int64_t> biasShape, Value zero,
                                  Value batch, Value head, Value query,
                                  Value key);

/// attn.lsh_attention's key normalization: x * rsqrt(|x|^2 + this).
constexpr double kLshNormEpsilon = 1e-6;

/// The rotations of LSH hash rounds 0 .. rounds-1 (lshRotation) stacked as
/// an f32 `rounds x dim x numBuckets/2` constant tensor: the lowerings (the
/// reference's and attn-lsh-kernels) loop over the rounds at run time.
Value lshRotationsConstant(ImplicitLocOpBuilder &b, uint64_t seed,
                           int64_t rounds, int64_t dim, int64_t numBuckets);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_ATTNUTILS_H
