//===- KernelSpec.h - What a fused attention kernel computes ----*- C++ -*-===//
//
// The description of one fused attention kernel (its operands, sizes,
// normalizer and mask) and the constant tables it reads (the block layout,
// flattened, and the block tables of the mask). Shared by the CPU and GPU
// kernel generators through the kernel frame (KernelFrame.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNKERNEL_KERNELSPEC_H
#define ATTN_CONVERSION_ATTNKERNEL_KERNELSPEC_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Mask/BlockLayout.h"
#include "attn-opt/Support/TargetModel.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <map>
#include <optional>

namespace mlir::attn {

/// One attention with a softmax or pointwise normalizer to generate a fused
/// kernel for: the op's problem (AttentionProblem.h; operands null when
/// absent, `dims` with dynamic batch and lengths as ShapedType::kDynamic)
/// and what the kernels derive from it.
struct KernelSpec : AttentionProblem {
  /// Transformer-XL's relative term (attn.relative_attention, the CPU tile
  /// kernel; null otherwise): the embeddings of the distances `posEmb`
  /// (`H x Lk x D`), the content bias `u` and the position bias `v`
  /// (`H x D`), and the memory length M: query i sits at key position
  /// M + i and its score with key j is
  /// `scale ((q_i + u) . k_j + (q_i + v) . posEmb[M + i - j])`.
  Value posEmb, contentBias, positionBias;
  int64_t memoryLen = 0;
  bool isRelative() const { return static_cast<bool>(posEmb); }
  /// Pointwise attention's function (softmax is online: isSoftmax()).
  PointwiseFn fn = PointwiseFn::relu;
  double alpha = 1.0;        ///< pointwise: the length exponent
  double lengthFactor = 1.0; ///< L^-alpha of pointwise attention (static L)
  /// The mask of the pattern (all keys when `isAll()`), with the mask
  /// region's predicate.
  mask::Mask mask;
  /// The mask region compiled for the interval analysis (ModRegion.h),
  /// null without a mask region.
  std::shared_ptr<const ModProgram> maskProgram;
  /// A buffer of the result's shape the kernel writes into (a strided view
  /// of the buffer of a rearrangement of the result, see
  /// writeThroughRearrangement), or null: the kernel allocates its output.
  Value outputView;
  /// The verdict of the run-time checks (RuntimeChecks.h), an i1 the kernel
  /// runs under, or null when there is nothing to check.
  Value runtimeOk;

  /// True if the batch and the lengths are static, there is no varlen
  /// operand and the layout is small enough (BlockLayout::kMaxBlocks): the
  /// block layout is known at compile time. Otherwise the kernels classify
  /// blocks at run time.
  bool hasStaticLayout() const {
    return dims.isStatic() && !sequences.isVarlen() &&
           BlockLayout::fitsAtCompileTime(mask);
  }
  /// Why the layout is not known at compile time (for remarks).
  const char *runtimeLayoutReason() const {
    return dims.isStatic() && !sequences.isVarlen()
               ? "too many blocks for a compile-time layout"
               : "lengths known at run time";
  }

  /// The spec of `op`, which has a softmax or pointwise normalizer.
  static KernelSpec get(AttentionOp op);
  /// The spec of relative attention `op`, whose keys and values with the
  /// memory prepended are `key` and `value` (`B x H x (M + L) x D`): causal
  /// softmax with query i at key position M + i.
  static KernelSpec get(RelativeAttentionOp op, Value key, Value value);
};

/// A block layout flattened into the int32 tables the kernels read: for
/// layout `l` and query tile `t`, the full key blocks are
/// `fullBlocks[fullOffsets[l * (tiles + 1) + t] .. fullOffsets[... + 1])`,
/// likewise the partial ones; `headLayout[h]` is head h's layout. A ragged
/// last key block (keyLen not a multiple of the block) is listed as partial:
/// it reads past the keys and must be bounded.
struct LayoutTables {
  SmallVector<int32_t> fullOffsets, fullBlocks, partialOffsets, partialBlocks,
      headLayout;
};
LayoutTables flattenLayout(const BlockLayout &layout, int64_t keyLen);

/// The target model of a CPU kernel pass's `vector-width` and
/// `vector-registers` options; else an error on `root` naming `pass` and
/// the values the kernels support.
FailureOr<TargetModel> targetOfOptions(Operation *root, StringRef pass,
                                       int64_t lanes, int64_t registers);

/// `tensor` as a read-only buffer of its own type (null stays null).
Value readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor);

/// When the only use of `result` (f32, an attention op's result) is a
/// rearrangement (a chain of tensor.expand_shape, tensor.collapse_shape and
/// linalg.transpose with at least one transpose, such as a graph's head
/// merge `[H, L, D] -> [L, H*D]`) with a static result: allocates the
/// chain's result buffer at `b`, sets `view` to that buffer viewed back
/// through the inverse rearrangement (the result's shape, strided) and
/// returns the chain's last value and the buffer; the kernel writing into
/// `view` then writes the rearranged result directly. std::nullopt (and no
/// IR) otherwise.
struct Rearranged {
  Value last, buffer;
};
std::optional<Rearranged> writeThroughRearrangement(ImplicitLocOpBuilder &b,
                                                    Value result, Value &view);

/// `tensor` as a read-only buffer that may be a strided view: when the
/// tensor is a rearrangement of another one (a chain of linalg.transpose,
/// tensor.expand_shape and tensor.collapse_shape with at least one
/// transpose, such as a graph's head split `[L, H*D] -> [H, L, D]`), the
/// other tensor's buffer viewed through the same rearrangement
/// (memref.transpose / expand_shape / collapse_shape), so the transposed
/// copy is never made; else readOnlyBuffer. Only for code that indexes the
/// buffer element by element (the CPU kernels).
Value readOnlyView(ImplicitLocOpBuilder &b, Value tensor);

/// The constant int32 tables a fused kernel reads, as read-only buffers
/// built at `b`: the flattened block layout (see LayoutTables) and the block
/// table of every `Table` node of the mask.
struct KernelTables {
  Value fullOffsets, fullBlocks, partialOffsets, partialBlocks, headLayout;
  std::map<const mask::Node *, Value> mask;

  static KernelTables build(ImplicitLocOpBuilder &b, const BlockLayout &layout,
                            int64_t keyLen, const mask::Mask &mask);
  /// The block tables of the mask only (lengths known at run time: no
  /// layout).
  static KernelTables build(ImplicitLocOpBuilder &b, const mask::Mask &mask);
};

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNKERNEL_KERNELSPEC_H
