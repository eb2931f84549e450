//===- AttnInterfaces.h - attn dialect interfaces ---------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H
#define ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H

#include "attn-opt/Mask/MaskPattern.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"

#include <cmath>
#include <cstdint>
#include <optional>

namespace mlir::attn {

/// What a mask pattern is checked against: the attention it masks. The
/// lengths may be dynamic (ShapedType::kDynamic).
struct PatternShape {
  int64_t numHeads = 1; ///< Query heads.
  int64_t queryLen = 0;
  int64_t keyLen = 0;
  bool hasSegments = false; ///< Whether segment-id operands are present.
};

/// The restriction kernelized attention keeps in its linear or chunked
/// prefix form: causal (`j <= i`), same segment, or both.
struct LinearMaskForm {
  bool causal = false;
  bool segments = false;
};

/// The dimensions of an attention: query `B x Hq x Lq x D`, key
/// `B x Hkv x Lk x D`, value `B x Hkv x Lk x Dv`. The batch and the lengths
/// may be dynamic (ShapedType::kDynamic); heads and dims are static.
struct AttentionDims {
  int64_t batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim;
  /// Query heads per key/value head.
  int64_t groupSize() const { return queryHeads / kvHeads; }
  /// True if the batch and both lengths are static.
  bool isStatic() const { return batch >= 0 && queryLen >= 0 && keyLen >= 0; }
};

} // namespace mlir::attn

#include "attn-opt/Dialect/Attn/IR/AttnAttrInterfaces.h.inc"
#include "attn-opt/Dialect/Attn/IR/AttnOpInterfaces.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H
