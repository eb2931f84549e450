//===- TileSizes.h - The tile sizes of the fused kernels --------*- C++ -*-===//
//
// One source for the blocks of every fused attention kernel: the CPU
// forward kernel (attn-flash, attn-lower-pointwise, attn-block-sparse and
// their decode tiles), the CPU backward (attn-flash-backward), derived from
// the target model (TargetModel.h), and the GPU kernels (convert-attn-to-gpu),
// derived from the shared memory their key/value blocks take. Plain C++:
// passes, generators and unit tests read the same choices.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_TILESIZES_H
#define ATTN_SUPPORT_TILESIZES_H

#include "attn-opt/Support/TargetModel.h"

#include <cstdint>

namespace mlir::attn {

/// Tile sizes of the CPU kernels.
struct TileSizes {
  int64_t queryVectors = 4; ///< QV: query vectors per tile (Mr = QV lanes)
  int64_t keysPerStep = 4;  ///< NJ: keys of one QK^T register block
  int64_t keyBlock = 64;    ///< Nb: keys per block (multiple of NJ)
  int64_t valueGroup = 4;   ///< EG: value columns of one PV register block
  /// Decode: the query rows of one key/value head (its G query heads times
  /// Lq queries) that share tiles, head by head; 0: a tile holds Mr queries
  /// of one head.
  int64_t groupedRows = 0;
  /// Decode: the key blocks of each tile split into this many ranges run
  /// in parallel, their partial results merged through the log-sum-exp
  /// (split-KV); 1: no split.
  int64_t keySplits = 1;

  /// The forward kernel's defaults from the target model: QV = registers
  /// / 8; half the registers hold accumulators (QV x NJ and QV x EG); the
  /// S^T block (Nb x Mr floats) takes at most half of L1.
  static TileSizes select(const TargetModel &target, int64_t valueDim);
  /// The fused backward's blocks (attn-flash-backward): QV = 4 vectors of
  /// queries with 16 or more lanes, else 2; Nb = 64 keys (its block step
  /// holds S^T, dP^T and dS^T of Nb x Mr floats).
  static TileSizes backward(const TargetModel &target);
  /// Sets QV to `vectors` and the register blocks that fit with it: NJ
  /// keys such that the QV x NJ accumulators take half the registers (at
  /// least 1), EG the largest divisor of Dv up to NJ.
  void setQueryVectors(const TargetModel &target, int64_t vectors,
                       int64_t valueDim);
  int64_t queryTile(const TargetModel &t) const {
    return queryVectors * t.lanes;
  }
};

/// The blocks of the GPU kernels: query rows and keys per block.
struct GpuTileSizes {
  int64_t blockQ = 64;
  int64_t blockK = 64;

  /// The mma.sync kernel: 64 query rows (four warps of 16); 64 keys, halved
  /// (down to 16) while the K and V rows of a block, padded by 8 elements
  /// of 2 bytes, exceed 48 KiB of shared memory.
  static GpuTileSizes mma(int64_t headDim, int64_t valueDim);
  /// The SIMT kernel of `threads` threads, `rowThreads` per query row: a
  /// row per `rowThreads` threads; 64 keys, halved (down to 16) while a
  /// block of keys of `keyRowBytes` (K and V) exceeds 40 KiB.
  static GpuTileSizes simt(int64_t threads, int64_t rowThreads,
                           int64_t keyRowBytes);
};

} // namespace mlir::attn

#endif // ATTN_SUPPORT_TILESIZES_H
