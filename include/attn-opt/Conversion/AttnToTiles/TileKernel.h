//===- TileKernel.h - Fused, tiled attention kernels for CPUs ---*- C++ -*-===//
//
// The CPU target of the fused-kernel frame (attn-opt/Conversion/AttnKernel/
// KernelFrame.h), behind attn-lower-pointwise, attn-flash and
// attn-block-sparse. For one attention it emits a parallel loop over
// (batch, query head, query tile) whose body never holds more than one tile
// row block:
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
// vector operation: a query row lives in one lane, so the frame's row
// combination is the identity. What is target-specific here is the
// register blocking (Mr, NJ, Nb, EG from the target model) and the loops
// around the frame's steps.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H
#define ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H

#include "attn-opt/Conversion/AttnKernel/KernelSpec.h"
#include "attn-opt/Support/TileSizes.h"

namespace mlir::attn {

/// True if every key block of a paged cache lies in one page (the kernel
/// then looks a block's page up once, else pagedKeyRun's).
inline bool keyBlocksFitPages(int64_t pageSize, int64_t keyBlock) {
  return pageSize % keyBlock == 0;
}

/// A paged cache whose key blocks span pages: a step of `keys` consecutive
/// keys (from a multiple of `keys`) looks a page up once per this many
/// keys, the greatest common divisor of `keys` and the page size when it
/// divides the key block (1: each key's page).
int64_t pagedKeyRun(int64_t pageSize, int64_t keyBlock, int64_t keys);

/// Decode tiles with the head dim in the lanes (one query vector, D and Dv
/// multiples of the lanes): `rows` grouped query rows per tile, keys per
/// score step and value vectors per register block of P V. rows == 0:
/// the tile puts its queries in the lanes.
struct DecodeBlocking {
  int64_t rows = 0, keysPerStep = 1, valueVectors = 1;
  static DecodeBlocking select(const AttentionDims &dims,
                               const TargetModel &target,
                               const TileSizes &tiles);
};

/// True if the kernel computes QK^T and PV with bf16 dot products of pairs
/// (target.bf16Dot not None): bf16 Q, K and V, prefill tiles (not decode),
/// a compile-time layout, static batch and key length, even D, Dv and key
/// block, no qk-layernorm, page table or packed batch. Scores, softmax
/// statistics and the output accumulate in f32; P is rounded to bf16 for
/// PV, as FlashAttention's bf16 kernels do.
bool usesBf16Pairs(const KernelSpec &spec, const TargetModel &target,
                   const TileSizes &tiles, bool staticLayout);

/// The target of a kernel pass's `vector-width`, `vector-registers` and
/// `bf16-dot` options (CpuTargetOptions.td); reports on `root` and fails
/// for values the kernels do not support.
FailureOr<TargetModel> cpuKernelTarget(Operation *root, StringRef pass,
                                       int64_t lanes, int64_t registers,
                                       const std::string &bf16Dot);

/// bf16 dot products of pairs, shared by the forward tile kernel and the
/// fused backward (attn-flash-backward). A word is an i32 holding two bf16
/// (the first in its low half, as memory holds them); a vector of pairs is
/// `2 x lanes` bf16, pair i in f32 lane i.
///
/// `acc + a[2i] b[2i] + a[2i+1] b[2i+1]` per f32 lane i: vdpbf16ps
/// (`Native`, x86vector.avx512.dot) or the same in portable vector ops
/// (`Emulated`: the odd pair first, as the instruction; products of bf16
/// are exact in f32).
Value dotBf16Pairs(ImplicitLocOpBuilder &b, TargetModel::Bf16Dot kind,
                   Value acc, Value a, Value bv);
/// A word broadcast to every lane, as a vector of pairs.
Value broadcastBf16Pair(ImplicitLocOpBuilder &b, Value word, int64_t lanes);
/// The words of pairs `(x0[i], x1[i])` of two f32 vectors rounded to bf16
/// (a vector<lanes x i32>: lane i the pair of lane i).
Value interleaveBf16Pairs(ImplicitLocOpBuilder &b, Value x0, Value x1);
/// The words of an f32 vector rounded to bf16, pairs of consecutive lanes
/// (a vector<lanes/2 x i32>).
Value packBf16Pairs(ImplicitLocOpBuilder &b, Value x);

/// Emits the kernel at `b`'s insertion point and returns the result tensor,
/// then the log-sum-exp tensor when the spec has it (spec.results.lse).
/// `layout` is the block layout of the mask in blocks of (Mr, Nb) when the spec
/// has a compile-time layout, else null (blocks classified at run time).
SmallVector<Value> buildTileKernel(ImplicitLocOpBuilder &b,
                                   const KernelSpec &spec,
                                   const TargetModel &target,
                                   const TileSizes &tiles,
                                   const BlockLayout *layout);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOTILES_TILEKERNEL_H
