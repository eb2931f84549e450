//===- ModRegionEmitter.h - Score and mask regions as IR --------*- C++ -*-===//
//
// The IR side of attn.attention's score and mask regions (ModRegion.h):
// - emitModRegion inlines a region at the point of use, on scalars (the
//   reference lowering, the GPU's threads) or on vectors of query rows (the
//   CPU kernel's lanes: every operation that depends on a vector argument
//   becomes its elementwise vector form, captured tensors are gathered);
// - emitMaskTileKind emits the interval analysis of a mask region over a
//   block of queries and keys (interpretMask in the IR domain): whether the
//   block holds some allowed pair and only allowed pairs, at run time, with
//   captured tensors' ranges read over the block.
// Captured tensors live where the caller keeps them (tensors, flattened
// buffers), so the caller says how to read them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_MODREGIONEMITTER_H
#define ATTN_DIALECT_ATTN_UTILS_MODREGIONEMITTER_H

#include "attn-opt/Dialect/Attn/Analysis/ModRegionAnalysis.h"
#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <functional>

namespace mlir::attn {

/// How emitted code reads the captured tensors of a region.
struct CaptureAccess {
  /// The size of dimension `d` of capture `c` (an index value).
  std::function<Value(ImplicitLocOpBuilder &, unsigned c, unsigned d)> dim;
  /// The element of capture `c` at `indices` (within its shape): index
  /// scalars, or vectors of index of one length, giving a vector.
  std::function<Value(ImplicitLocOpBuilder &, unsigned c, ValueRange indices)>
      read;
};

/// Emits the operations of `region` (a verified mask or score region) at
/// `b` with its leading arguments bound to `args` (the score, then batch,
/// head, query and key for a score region; batch, head, query, key for a
/// mask region): index or f32 scalars, or vectors of them of one length.
/// Returns the yielded value, a vector when it depends on a vector
/// argument. Indices into captured tensors are clamped into their shapes.
Value emitModRegion(ImplicitLocOpBuilder &b, Region &region, ValueRange args,
                    const CaptureAccess &access);

/// The partial derivative of a score region's result with respect to one
/// floating-point read of a captured tensor.
struct CaptureTangent {
  /// The captured tensor (its position among the captures).
  unsigned capture;
  /// Where it was read (clamped into its shape): index scalars, or vectors
  /// of index (one per query row of the lanes).
  SmallVector<Value> indices;
  /// d result / d read, a scalar or a vector of f32.
  Value derivative;
};

/// Emits a score region as emitModRegion does (on scalars, or on vectors
/// of query rows) together with its derivative with respect to the score
/// (forward mode: the tangent of every float value, 1 for the score
/// argument, 0 for what does not depend on it). Returns (value,
/// derivative), of the score's type. With `captures`, appends the partial
/// derivative with respect to each floating-point read of a captured
/// tensor, one forward-mode seed per read (their gradients). The region
/// must be differentiable (scoreModDerivativeIssue, with its reads too
/// when `captures`).
std::pair<Value, Value>
emitScoreModWithDerivative(ImplicitLocOpBuilder &b, Region &region,
                           ValueRange args, const CaptureAccess &access,
                           SmallVectorImpl<CaptureTangent> *captures = nullptr);

/// Emits the interval analysis of the mask program `p` over batch row
/// `batch`, head `head`, queries [q0, q1] and keys [k0, k1] (index scalars,
/// inclusive): does the block hold an allowed pair (`any`), only allowed
/// pairs (`all`)? Captured tensors are read over the index ranges the
/// block reaches (their smallest and largest element).
MaskEmitter::TileKind emitMaskTileKind(ImplicitLocOpBuilder &b,
                                       const ModProgram &p, Value batch,
                                       Value head, Value q0, Value q1, Value k0,
                                       Value k1, const CaptureAccess &access);

/// As above over batch rows [b0, b1] and heads [h0, h1] (inclusive) too:
/// whether some row and head of the box may hold an allowed pair, or all
/// surely do.
MaskEmitter::TileKind emitMaskTileKind(ImplicitLocOpBuilder &b,
                                       const ModProgram &p, Value b0, Value b1,
                                       Value h0, Value h1, Value q0, Value q1,
                                       Value k0, Value k1,
                                       const CaptureAccess &access);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_MODREGIONEMITTER_H
