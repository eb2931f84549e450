//===- BlockLayout.h - Compile-time block layouts of mask patterns -*- C++
//-*-===//
//
// The block-layout analysis: for a mask and a block size (bq query rows by
// bk keys), the class of every (query block, key block) of every query head
// (full, partial or empty, by the mask library), compressed like CSR: per
// query block, the list of full key blocks and the list of partial ones.
// Heads with the same layout share it. Ragged last blocks (lengths that are
// not multiples of the block size) are classified over their real extent.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MASK_BLOCKLAYOUT_H
#define ATTN_MASK_BLOCKLAYOUT_H

#include "attn-opt/Mask/MaskPattern.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn {

class BlockLayout {
public:
  /// The compressed layout of one head (or of every head sharing it).
  struct Compressed {
    /// Key blocks of query block r: full ones are
    /// fullBlocks[fullOffsets[r] .. fullOffsets[r+1]), partial ones likewise.
    std::vector<int32_t> fullOffsets, fullBlocks;
    std::vector<int32_t> partialOffsets, partialBlocks;
    bool operator==(const Compressed &other) const;
  };

  /// The most blocks (query blocks x key blocks x distinct head layouts)
  /// a compile-time layout may classify, counted in the finest blocks the
  /// kernels use (kMinBlock x kMinBlock): 2^24, up to 65,536 x 65,536
  /// score matrices. Larger ones are classified at run time by the kernels,
  /// as with dynamic lengths (docs/Semantics.md, "Limits").
  static constexpr int64_t kMaxBlocks = int64_t(1) << 24;
  static constexpr int64_t kMinBlock = 16;

  /// True if `mask` (static lengths) is small enough for a compile-time
  /// layout in any block size of at least kMinBlock (see kMaxBlocks).
  static bool fitsAtCompileTime(const mask::Mask &mask);

  /// Computes the layout of `mask` in blocks of `blockQ x blockK`.
  /// `segments`, when given, makes segment patterns exact (else they count
  /// as partial). The mask fits at compile time.
  static BlockLayout compute(const mask::Mask &mask, int64_t blockQ,
                             int64_t blockK,
                             const mask::SegmentIds *segments = nullptr);

  /// A layout from its parts (as an IR attribute stores it); `verify`
  /// checks them first.
  static BlockLayout fromParts(int64_t blockQ, int64_t blockK,
                               int64_t numQueryBlocks, int64_t numKeyBlocks,
                               std::vector<Compressed> layouts,
                               std::vector<int64_t> headLayout);
  /// Checks that the parts describe a layout: offsets of numQueryBlocks + 1
  /// non-decreasing entries from 0, blocks ascending within a query block and
  /// below numKeyBlocks, no block both full and partial, head indices in
  /// range. Returns an empty string, or what is wrong.
  static std::string verify(int64_t numQueryBlocks, int64_t numKeyBlocks,
                            const std::vector<Compressed> &layouts,
                            const std::vector<int64_t> &headLayout);

  /// The layout of the transposed scores (`S^T`, keys by queries): its
  /// rows are the key blocks, each listing the query blocks that see it
  /// (full, partial), ascending; blockQ and blockK swap. What the backward
  /// pass's key-block tasks walk (each key block's dK and dV summed over
  /// its query blocks).
  BlockLayout transposed() const;

  int64_t getBlockQ() const { return blockQ; }
  int64_t getBlockK() const { return blockK; }
  int64_t getNumQueryBlocks() const { return numQueryBlocks; }
  int64_t getNumKeyBlocks() const { return numKeyBlocks; }
  int64_t getNumHeads() const { return headLayout.size(); }
  /// The distinct layouts, and which one each query head uses.
  const std::vector<Compressed> &getLayouts() const { return layouts; }
  int64_t getLayoutOfHead(int64_t head) const { return headLayout[head]; }

  /// The class of block (r, c) of `head`.
  mask::TileKind getKind(int64_t head, int64_t r, int64_t c) const;

  /// Blocks visited (full + partial) and all blocks, summed over heads.
  int64_t countVisited() const;
  int64_t countFull() const;
  int64_t countBlocks() const;

  /// The first block (head, query block, key block) where the two layouts
  /// differ, as text, or an empty string if they are the same.
  std::string firstDifference(const BlockLayout &other) const;

  /// One line per query block of `head`: '#' full, '+' partial, '.' empty.
  std::string render(int64_t head) const;

private:
  int64_t blockQ = 0, blockK = 0, numQueryBlocks = 0, numKeyBlocks = 0;
  std::vector<Compressed> layouts;
  std::vector<int64_t> headLayout;
};

} // namespace mlir::attn

#endif // ATTN_MASK_BLOCKLAYOUT_H
