//===- MaskPattern.h - The attn mask-pattern library ------------*- C++ -*-===//
//
// One evaluator of attention mask patterns that every pass, analysis and test
// uses: whether query `q` of head `h` may see key `k`, and whether a
// rectangle of the score matrix is full (every pair allowed), empty (none) or
// partial. It is plain C++ (no MLIR context needed); the attn dialect builds
// a `Mask` from its pattern attributes (`buildMask` in AttnAttrs.h).
//
// Coordinates: `q` is the query index in [0, Lq), `k` the key index in
// [0, Lk). Positional patterns compare key positions: the query's position is
// `i = q + Lk - Lq` (queries aligned to the end of the keys). Block-table
// patterns (`#attn.block`, `#attn.random`) index their table by
// `(q / block, k / block)`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MASK_MASKPATTERN_H
#define ATTN_MASK_MASKPATTERN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::mask {

/// The longest query or key sequence (and memory plus segment) the attn
/// dialect accepts, 2^30 positions. The kernels evaluate positions in 32-bit
/// lanes: a position in (-2^30, 2^30) plus or minus a bound of at most 2^30
/// stays inside int32.
constexpr int64_t kMaxSequenceLength = int64_t(1) << 30;

/// Pattern distances (window and dilated bounds, dilations, strides) larger
/// than this are saturated to it by the Node constructors: no two positions
/// of sequences of at most kMaxSequenceLength are further apart, so the mask
/// is unchanged, and no arithmetic on a bound can overflow.
constexpr int64_t kMaxPatternDistance = kMaxSequenceLength;

/// The deepest nesting of composed patterns (union, intersect, per_head)
/// the dialect accepts; the verifier and the parser both enforce it.
constexpr int64_t kMaxPatternDepth = 32;

/// The most blocks a block-table pattern (`#attn.block`, `#attn.random`)
/// may have: its table is built at compile time, one byte per block, and the
/// kernels index it with 32-bit arithmetic.
constexpr int64_t kMaxTableBlocks = int64_t(1) << 24;

/// How much of a tile of the score matrix a pattern allows.
enum class TileKind : uint8_t {
  Empty = 0,   ///< No (q, k) in the tile is allowed.
  Partial = 1, ///< Some are; the tile needs element masking.
  Full = 2,    ///< Every (q, k) in the tile is allowed.
};

/// Returns "empty", "partial" or "full".
const char *stringifyTileKind(TileKind kind);

/// A rectangle of the score matrix: queries [qBegin, qEnd), keys
/// [kBegin, kEnd). Both ranges are non-empty and inside the matrix.
struct Tile {
  int64_t qBegin, qEnd, kBegin, kEnd;
};

/// Runtime document ids for `#attn.segments`: one per query, one per key.
struct SegmentIds {
  llvm::ArrayRef<int64_t> query;
  llvm::ArrayRef<int64_t> key;
};

/// A mask given as code (attn.attention's `mask_mod` region), classified by
/// whoever made it (the dialect's interval analysis of the region).
/// Coordinates are unaligned: query index `q` in [0, Lq), key index `k` in
/// [0, Lk). Its answers hold for every batch row.
class CustomPredicate {
public:
  virtual ~CustomPredicate();
  /// The class of `tile` for head `h`, for every batch row; Partial when
  /// it cannot decide (sound: never Full or Empty where it is not).
  virtual TileKind classify(int64_t h, const Tile &tile) const = 0;
  /// Whether (h, q, k) is allowed, or std::nullopt when the answer depends
  /// on run-time data (a captured tensor) or on the batch row.
  virtual std::optional<bool> evaluate(int64_t h, int64_t q,
                                       int64_t k) const = 0;
  /// True if different heads may see different keys.
  virtual bool isHeadDependent() const = 0;
  /// True if its answer depends on run-time data (captured tensors): its
  /// partial blocks are worth classifying again at run time.
  virtual bool readsRuntimeData() const = 0;
};

/// One node of a pattern tree. Each kind reads only the fields its comment
/// names; the others keep their defaults.
struct Node {
  enum class Kind {
    All,       ///< No restriction.
    Causal,    ///< k <= i
    Window,    ///< i - before <= k <= i + after
    Dilated,   ///< k - i = t * dilation, -before <= k - i <= after
    Global,    ///< i in tokens or k in tokens
    Strided,   ///< (i - k) mod stride == 0
    Fixed,     ///< floor(k/stride) == floor(i/stride) or
               ///< k mod stride >= stride - summary
    Table,     ///< table[q / blockSize][k / blockSize]
    Segments,  ///< segq[q] == segk[k]
    Union,     ///< any child allows
    Intersect, ///< every child allows
    PerHead,   ///< children[h] decides
    Custom,    ///< custom->evaluate(h, q, k) (unaligned positions)
  };
  Kind kind = Kind::All;
  /// Window, Dilated: how far before and after the query position keys lie.
  int64_t before = 0, after = 0;
  /// Dilated: the distance between the keys of the window.
  int64_t dilation = 1;
  /// Strided, Fixed: the period of the pattern.
  int64_t stride = 1;
  /// Fixed: the summary positions at the end of each period.
  int64_t summary = 0;
  /// Global: sorted, unique token positions.
  std::vector<int64_t> tokens;
  /// Table: row-major `rows x cols` table of blocks of `blockSize` queries by
  /// `blockSize` keys.
  int64_t blockSize = 1;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> table;
  /// Union, Intersect, PerHead: the operands.
  std::vector<Node> children;
  /// Custom: the predicate.
  std::shared_ptr<const CustomPredicate> custom;

  static Node all() { return Node(); }
  static Node causal();
  // Distances (before, after, dilation, stride) saturate at
  // kMaxPatternDistance; a fixed pattern keeps its threshold
  // `stride - summary`, saturated likewise.
  static Node window(int64_t before, int64_t after);
  static Node dilated(int64_t before, int64_t after, int64_t dilation);
  static Node global(std::vector<int64_t> tokens);
  static Node strided(int64_t stride);
  static Node fixed(int64_t stride, int64_t summary);
  /// An explicit block layout: `layout` is row-major `rows x cols`.
  static Node blockTable(int64_t blockSize, int64_t rows, int64_t cols,
                         std::vector<uint8_t> layout);
  /// BigBird random blocks (`randomBlocksForRow` in Support/Random.h) over a
  /// `numQueryBlocks x numKeyBlocks` grid.
  static Node random(int64_t blocksPerRow, int64_t blockSize, uint64_t seed,
                     int64_t numQueryBlocks, int64_t numKeyBlocks);
  static Node segments();
  static Node unite(std::vector<Node> children);
  static Node intersect(std::vector<Node> children);
  static Node perHead(std::vector<Node> children);
  static Node fromPredicate(std::shared_ptr<const CustomPredicate> custom);
};

/// The most splits Mask::classify makes for one tile before it settles for
/// Partial.
constexpr int64_t kMaxClassifySplits = 4096;
/// The most partial tiles Mask::countAllowed splits before it estimates.
constexpr int64_t kMaxCountTiles = int64_t(1) << 18;

/// A pattern bound to the shape of the attention it masks.
class Mask {
public:
  /// The mask that allows everything.
  Mask() = default;
  Mask(Node root, int64_t numHeads, int64_t queryLen, int64_t keyLen);

  int64_t getNumHeads() const { return numHeads; }
  /// The lengths; negative (ShapedType::kDynamic) when known only at run
  /// time. Evaluation and classification need static lengths.
  int64_t getQueryLen() const { return queryLen; }
  int64_t getKeyLen() const { return keyLen; }
  bool hasStaticLengths() const { return queryLen >= 0 && keyLen >= 0; }
  const Node &getRoot() const { return *root; }

  /// True if the pattern restricts nothing.
  bool isAll() const;
  /// True if different heads may see different keys.
  bool isHeadDependent() const;
  /// True if the pattern reads runtime segment ids.
  bool usesSegments() const;
  /// The custom predicate of the mask (a `Custom` node at the root or
  /// directly under an intersection at the root), or null.
  const CustomPredicate *getCustom() const;

  /// Whether query `q` of head `h` may see key `k`. Segment patterns need
  /// `segments`; without it they allow nothing. A custom predicate whose
  /// answer depends on run-time data counts as allowing the key.
  bool isAllowed(int64_t h, int64_t q, int64_t k,
                 const SegmentIds *segments = nullptr) const;

  /// Classifies `tile` for head `h`. The answer is exact (it agrees with
  /// evaluating `isAllowed` on every element) unless deciding it would take
  /// more than kMaxClassifySplits splits of the tile, where a composed
  /// pattern's tile counts as Partial. Without `segments`, a segment pattern
  /// is unknown at compile time and counts as Partial (its tiles need element
  /// masking). Partial where the tile is full or empty costs time, never
  /// correctness. The cost is polynomial in the pattern's size: only the
  /// root is split, each part classified without splitting inner nodes.
  TileKind classify(int64_t h, const Tile &tile,
                    const SegmentIds *segments = nullptr) const;

  /// The number of allowed (q, k) pairs of head `h` (segments ignored, i.e.
  /// counted as allowed), computed by recursive tile classification. Exact
  /// when it splits at most kMaxCountTiles partial tiles; past that (very
  /// long sequences) each partial tile left (the smallest: the largest are
  /// split first) is estimated from a grid of samples, which is all a FLOP
  /// count needs.
  int64_t countAllowed(int64_t h) const;

private:
  std::shared_ptr<const Node> root = std::make_shared<Node>();
  int64_t numHeads = 1, queryLen = 0, keyLen = 0;
};

} // namespace mlir::attn::mask

#endif // ATTN_MASK_MASKPATTERN_H
