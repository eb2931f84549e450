//===- ModRegion.h - Score and mask regions of attn.attention ---*- C++ -*-===//
//
// The `mask_mod` and `score_mod` regions of attn.attention (FlexAttention's
// mask_mod and score_mod as IR): their verifier. What passes ask of a
// region (the interval analysis of a mask region, the derivative of a
// score region) is in Analysis/ModRegionAnalysis.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_MODREGION_H
#define ATTN_DIALECT_ATTN_IR_MODREGION_H

#include "attn-opt/Dialect/Attn/Analysis/ModRegionAnalysis.h"

namespace mlir::attn {

/// Checks a score or mask region of `op` (`isMask` selects which):
/// arguments, terminator, the operations it may hold, no value from
/// outside. `captureTypes` are the op's captures.
LogicalResult verifyModRegion(Operation *op, Region &region, bool isMask,
                              TypeRange captureTypes);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_MODREGION_H
