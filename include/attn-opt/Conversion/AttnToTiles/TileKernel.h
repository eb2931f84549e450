//===- TileKernel.h - Fused, tiled attention kernels for CPUs ---*- C++ -*-===//
//
// The one code generator behind attn-lower-pointwise, attn-flash and the
// block-sparse lowering. It emits, for one attention, a parallel loop over
// (batch, query head, query tile) whose body never holds more than one
// tile row block:
//
//   Q^T tile   D x Mr          (queries in vector lanes, scale folded in)
//   for each key block of the tile's layout (full blocks, then partial):
//     S^T      Nb x Mr         = K_blk Q^T, register-blocked NJ keys x Mr
//                                queries, masked in partial blocks
//     softmax: running max m, sum l, rescale alpha (online softmax)
//     pointwise: P = L^-alpha h(S), no row state at all
//     O^T     Dv x Mr         += V_blk^T P, register-blocked EG values x Mr
//   O = O^T^T / l (softmax), times the gate
//
// With queries in lanes every row statistic (max, sum) is a lane-wise
// vector operation: no horizontal reductions, no transposition of K or V.
// Key blocks come from the compile-time block layout (attn-opt/Analysis/
// BlockLayout.h): full blocks skip mask evaluation, partial ones evaluate
// the mask per element through the mask library's IR emitter, empty ones
// are never visited.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H
#define ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H

#include "attn-opt/Analysis/BlockLayout.h"
#include "attn-opt/Analysis/TargetModel.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::attn {

/// One attention to generate a kernel for. Tensors are the op's operands.
struct TileKernelSpec {
  Value query, key, value, bias, gate, querySegments, keySegments;
  AttentionDims dims{};
  double scale = 1.0;
  std::optional<double> qkNormEps;
  /// Softmax (online) or pointwise.
  bool softmax = true;
  PointwiseFn fn = PointwiseFn::relu;
  double lengthFactor = 1.0; ///< L^-alpha of pointwise attention
  /// The mask (all keys when `isAll()`).
  mask::Mask mask;
  /// The mask only allows keys of the query's segment (the pattern is
  /// `#attn.segments` or an intersection with it): blocks whose query and
  /// key ids cannot match are skipped at run time.
  bool segmentsBound = false;
  Type resultType;
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

/// The sizes every kernel generator (CPU and GPU) names: head and value
/// dims, GQA group size, query and key lengths, batch, query heads, and the
/// query tiles of the block layout.
struct KernelDims {
  int64_t D, Dv, G, Lq, Lk, B, Hq, numTiles;
  KernelDims(const AttentionDims &d, const BlockLayout &layout);
};

/// `tensor` as a read-only buffer of its own type (null stays null).
Value readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor);

/// The constant int32 tables a fused kernel reads, as read-only buffers
/// built at `b`: the flattened block layout (see LayoutTables) and the block
/// table of every `Table` node of the mask.
struct KernelTables {
  Value fullOffsets, fullBlocks, partialOffsets, partialBlocks, headLayout;
  std::map<const mask::Node *, Value> mask;

  static KernelTables build(ImplicitLocOpBuilder &b,
                            const BlockLayout &layout, int64_t keyLen,
                            const mask::Mask &mask);
};

/// The kernel spec of attn.attention or attn.block_sparse_attention.
TileKernelSpec kernelSpecOf(Operation *op);

/// True if `pattern` only allows keys of the query's segment (segments, or
/// an intersection with segments).
bool isSegmentBound(MaskPatternAttrInterface pattern);

/// Emits the kernel at `b`'s insertion point and returns the result tensor.
/// `layout` is the block layout of the mask in blocks of (Mr, Nb); returned
/// through `visited` when given: key blocks visited and all blocks.
Value buildTileKernel(ImplicitLocOpBuilder &b, const TileKernelSpec &spec,
                      const TargetModel &target, const TileSizes &tiles,
                      const BlockLayout &layout);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H
