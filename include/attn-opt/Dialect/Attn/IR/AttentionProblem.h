//===- AttentionProblem.h - One description of an attention -----*- C++ -*-===//
//
// The facts of an attn.attention, derived once from its operands and
// attributes and grouped by what they are about (the role of IREE's
// AttentionOpDetail): the shapes and heads, how scores become weights, which
// scores exist (pattern, mask tensor, layout, sequences, segments), what
// modifies the scores, where keys and values live (paging), and the
// results. `AttentionOp::getProblem()` computes it; the verifier (after the
// shapes are checked), the kernel spec, the reference lowering, the
// run-time checks and raising (`AttentionOp::build` from a problem) read it,
// so an operand added to the op is added here and where it is used, nowhere
// else (docs/Architecture.md, "Adding an operand").
//
// A problem holds Values and attributes of the op it was computed from; it
// does not own them and is valid while the op is.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTENTIONPROBLEM_H
#define ATTN_DIALECT_ATTN_IR_ATTENTIONPROBLEM_H

#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h"
#include "attn-opt/Dialect/Attn/IR/AttnInterfaces.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::attn {

/// Which scores exist: the pattern (an attribute), the mask tensor and the
/// compile-time block layout (null when absent).
struct AttentionMasking {
  MaskPatternAttrInterface pattern;
  /// `mask`: boolean (i1), or additive (the op's float type).
  Value tensor;
  BlockLayoutAttr layout;
  /// True if the mask tensor is boolean.
  bool isBoolean() const {
    return tensor && cast<RankedTensorType>(tensor.getType())
                         .getElementType()
                         .isInteger(1);
  }
};

/// A varlen batch: padded lengths (`B` entries) or packed offsets (`N + 1`
/// entries), i32 tensors, null when absent.
struct AttentionSequences {
  Value queryLengths, keyLengths, queryOffsets, keyOffsets;
  /// True if a lengths or offsets operand is present.
  bool isVarlen() const { return queryLengths || keyLengths || queryOffsets; }
  /// True for a packed batch (offsets).
  bool isPacked() const { return static_cast<bool>(queryOffsets); }
};

/// Document segment ids (`B x Lq`, `B x Lk`), null when absent.
struct AttentionSegments {
  /// The `segments` operand: the ids of the queries.
  Value query;
  /// The ids of the keys: `key_segments`, else `segments`.
  Value key;
  /// True if `key_segments` is an operand of its own.
  bool separateKeys = false;
  /// Only keys of the query's segment are allowed
  /// (MaskPatternAttrInterface::isSegmentBound).
  bool bound = false;
};

/// What modifies the scores and the output, in the op's order (scale, bias,
/// ALiBi, soft-cap, additive mask; the gate on the output); null or
/// std::nullopt when absent.
struct AttentionModifiers {
  /// `B' x H' x Lq x Lk` added to the scaled scores.
  Value bias;
  /// One f32 per query head: ALiBi slopes, attention sinks.
  Value alibiSlopes, sinks;
  /// `cap * tanh(s / cap)`.
  std::optional<double> softcap;
  /// `B x Hq x Lq x Dv`, multiplies the output.
  Value gate;
};

/// A paged KV cache: key and value are pools of pages.
struct AttentionPaging {
  /// `B x max_pages` i32, null when the keys are contiguous.
  Value pageTable;
  /// The keys of a page (dimension 2 of the pools); 0 when not paged.
  int64_t pageSize = 0;
};

/// The score and mask regions (FlexAttention's score_mod and mask_mod) and
/// the tensors they capture; null and empty when absent.
struct AttentionRegions {
  Region *maskMod = nullptr;
  Region *scoreMod = nullptr;
  SmallVector<Value> captures;
  bool empty() const { return !maskMod && !scoreMod; }
};

/// The results: the attention and its optional log-sum-exp.
struct AttentionResults {
  /// `B x Hq x Lq x Dv`.
  RankedTensorType output;
  /// `B x Hq x Lq` f32, or null when the op has no second result.
  RankedTensorType lse;
};

/// The description of one attention (see the file comment).
struct AttentionProblem {
  //===--- Shapes and heads ---------------------------------------------===//
  Value query, key, value;
  /// B, Hq, Hkv, Lq, Lk (the pages' keys when paged), D, Dv.
  AttentionDims dims{};
  /// The element type of query, key, value and the output.
  Type elementType;

  //===--- How scores become weights ------------------------------------===//
  NormalizerAttrInterface normalizer;
  /// The effective scale (the `scale` attribute, else the normalizer's
  /// default).
  double scale = 1.0;
  /// True if `scale` was given as an attribute.
  bool explicitScale = false;
  /// qk-layernorm's epsilon, when the queries and keys are normalized.
  std::optional<double> qkNormEps;
  /// The FAVOR+ projection (`features x D`), or null.
  Value projection;

  //===--- Which scores exist -------------------------------------------===//
  AttentionMasking masking;
  AttentionSequences sequences;
  AttentionSegments segments;

  //===--- Modifiers, storage, results ----------------------------------===//
  AttentionModifiers modifiers;
  AttentionRegions regions;
  AttentionPaging paging;
  AttentionResults results;

  /// True for softmax and kernel attention respectively.
  bool isSoftmax() const { return isa<SoftmaxAttr>(normalizer); }
  bool isKernel() const { return isa<KernelAttr>(normalizer); }
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTENTIONPROBLEM_H
