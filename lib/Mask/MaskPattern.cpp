//===- MaskPattern.cpp - The attn mask-pattern library --------------------===//

#include "attn-opt/Mask/MaskPattern.h"
#include "attn-opt/Support/Random.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <utility>

using namespace mlir::attn;
using namespace mlir::attn::mask;

const char *mask::stringifyTileKind(TileKind kind) {
  switch (kind) {
  case TileKind::Empty:
    return "empty";
  case TileKind::Partial:
    return "partial";
  case TileKind::Full:
    return "full";
  }
  llvm_unreachable("unknown tile kind");
}

//===----------------------------------------------------------------------===//
// Node constructors
//===----------------------------------------------------------------------===//

static Node makeNode(Node::Kind kind) {
  Node n;
  n.kind = kind;
  return n;
}

Node Node::causal() { return makeNode(Kind::Causal); }
/// A distance saturated at kMaxPatternDistance (see MaskPattern.h).
static int64_t saturate(int64_t distance) {
  return std::min(distance, kMaxPatternDistance);
}

Node Node::window(int64_t before, int64_t after) {
  Node n = makeNode(Kind::Window);
  n.before = saturate(before);
  n.after = saturate(after);
  return n;
}
Node Node::dilated(int64_t before, int64_t after, int64_t dilation) {
  Node n = makeNode(Kind::Dilated);
  n.before = saturate(before);
  n.after = saturate(after);
  n.dilation = saturate(dilation);
  return n;
}
Node Node::global(std::vector<int64_t> tokens) {
  Node n = makeNode(Kind::Global);
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  n.tokens = std::move(tokens);
  return n;
}
Node Node::strided(int64_t stride) {
  Node n = makeNode(Kind::Strided);
  n.stride = saturate(stride);
  return n;
}
Node Node::fixed(int64_t stride, int64_t summary) {
  Node n = makeNode(Kind::Fixed);
  // k mod stride >= stride - summary: keep the threshold (0 <= summary <=
  // stride, so it cannot overflow), then saturate both.
  int64_t threshold = stride - summary;
  n.stride = saturate(stride);
  n.summary = n.stride - saturate(threshold);
  return n;
}
Node Node::blockTable(int64_t blockSize, int64_t rows, int64_t cols,
                      std::vector<uint8_t> layout) {
  assert(static_cast<int64_t>(layout.size()) == rows * cols);
  Node n = makeNode(Kind::Table);
  n.blockSize = blockSize;
  n.rows = rows;
  n.cols = cols;
  n.table = std::move(layout);
  return n;
}
Node Node::random(int64_t blocksPerRow, int64_t blockSize, uint64_t seed,
                  int64_t numQueryBlocks, int64_t numKeyBlocks) {
  std::vector<uint8_t> layout(numQueryBlocks * numKeyBlocks, 0);
  int64_t count = std::min(blocksPerRow, numKeyBlocks);
  for (int64_t r = 0; r < numQueryBlocks; ++r)
    for (int64_t kb : randomBlocksForRow(seed, r, numKeyBlocks, count))
      layout[r * numKeyBlocks + kb] = 1;
  return blockTable(blockSize, numQueryBlocks, numKeyBlocks, std::move(layout));
}
Node Node::segments() { return makeNode(Kind::Segments); }
Node Node::fromPredicate(std::shared_ptr<const CustomPredicate> custom) {
  Node n = makeNode(Kind::Custom);
  n.custom = std::move(custom);
  return n;
}
CustomPredicate::~CustomPredicate() = default;
Node Node::unite(std::vector<Node> children) {
  Node n = makeNode(Kind::Union);
  n.children = std::move(children);
  return n;
}
Node Node::intersect(std::vector<Node> children) {
  Node n = makeNode(Kind::Intersect);
  n.children = std::move(children);
  return n;
}
Node Node::perHead(std::vector<Node> children) {
  Node n = makeNode(Kind::PerHead);
  n.children = std::move(children);
  return n;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

namespace {
/// Integer floor division (the C++ operator truncates).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// True if some multiple of `d` (> 0) lies in [lo, hi].
bool hasMultipleIn(int64_t lo, int64_t hi, int64_t d) {
  if (lo > hi)
    return false;
  // Smallest multiple of d that is >= lo.
  int64_t first = -floorDiv(-lo, d) * d;
  return first <= hi;
}

/// Number of global tokens in [lo, hi).
int64_t countTokens(const std::vector<int64_t> &tokens, int64_t lo,
                    int64_t hi) {
  if (lo >= hi)
    return 0;
  auto b = std::lower_bound(tokens.begin(), tokens.end(), lo);
  auto e = std::lower_bound(tokens.begin(), tokens.end(), hi);
  return e - b;
}

/// The two halves of `t` (at least two elements), split across its longer
/// side.
std::pair<Tile, Tile> halves(const Tile &t) {
  Tile a = t, b = t;
  int64_t rows = t.qEnd - t.qBegin, cols = t.kEnd - t.kBegin;
  if (rows >= cols)
    a.qEnd = b.qBegin = t.qBegin + rows / 2;
  else
    a.kEnd = b.kBegin = t.kBegin + cols / 2;
  return {a, b};
}

/// A tile's classification while the root is being decided: the three
/// kinds, or Undecided where a composed node has two or more children that
/// are not decided on the whole tile (splitting the tile may decide it).
enum class Verdict : uint8_t { Empty, Partial, Full, Undecided };

Verdict verdictOf(TileKind kind) {
  switch (kind) {
  case TileKind::Empty:
    return Verdict::Empty;
  case TileKind::Partial:
    return Verdict::Partial;
  case TileKind::Full:
    return Verdict::Full;
  }
  llvm_unreachable("unknown tile kind");
}

struct Evaluator {
  int64_t offset; // Lk - Lq: query index to key position.
  const SegmentIds *segments;
  /// Treat segment patterns as allowing everything (for FLOP counts).
  bool segmentsAsAll;

  bool allowed(const Node &n, int64_t h, int64_t q, int64_t k) const;
  /// Classifies `t` exactly, splitting it where a composed node cannot
  /// decide it whole, within kMaxClassifySplits splits.
  TileKind classify(const Node &n, int64_t h, const Tile &t) const;
  /// One level of classification: leaves exactly, composed nodes from their
  /// children's verdicts, without splitting.
  Verdict judge(const Node &n, int64_t h, const Tile &t) const;
  TileKind classifyLeaf(const Node &n, const Tile &t) const;
  TileKind classifySegments(const Tile &t) const;
};
} // namespace

bool Evaluator::allowed(const Node &n, int64_t h, int64_t q, int64_t k) const {
  int64_t i = q + offset;
  switch (n.kind) {
  case Node::Kind::All:
    return true;
  case Node::Kind::Causal:
    return k <= i;
  case Node::Kind::Window:
    return i - n.before <= k && k <= i + n.after;
  case Node::Kind::Dilated: {
    int64_t delta = k - i;
    return -n.before <= delta && delta <= n.after && delta % n.dilation == 0;
  }
  case Node::Kind::Global:
    return std::binary_search(n.tokens.begin(), n.tokens.end(), i) ||
           std::binary_search(n.tokens.begin(), n.tokens.end(), k);
  case Node::Kind::Strided:
    return (i - k) % n.stride == 0;
  case Node::Kind::Fixed:
    return floorDiv(k, n.stride) == floorDiv(i, n.stride) ||
           k % n.stride >= n.stride - n.summary;
  case Node::Kind::Table:
    return n.table[(q / n.blockSize) * n.cols + k / n.blockSize] != 0;
  case Node::Kind::Segments:
    if (segmentsAsAll)
      return true;
    return segments && segments->query[q] == segments->key[k];
  case Node::Kind::Union:
    for (const Node &c : n.children)
      if (allowed(c, h, q, k))
        return true;
    return false;
  case Node::Kind::Intersect:
    for (const Node &c : n.children)
      if (!allowed(c, h, q, k))
        return false;
    return true;
  case Node::Kind::PerHead:
    return allowed(n.children[h], h, q, k);
  case Node::Kind::Custom:
    return n.custom->evaluate(h, q, k).value_or(true);
  }
  llvm_unreachable("unknown pattern kind");
}

TileKind Evaluator::classifySegments(const Tile &t) const {
  if (segmentsAsAll)
    return TileKind::Full;
  if (!segments)
    return TileKind::Partial;
  bool any = false, all = true;
  for (int64_t q = t.qBegin; q < t.qEnd; ++q)
    for (int64_t k = t.kBegin; k < t.kEnd; ++k) {
      bool a = segments->query[q] == segments->key[k];
      any |= a;
      all &= a;
      if (any && !all)
        return TileKind::Partial;
    }
  return all ? TileKind::Full : TileKind::Empty;
}

TileKind Evaluator::classifyLeaf(const Node &n, const Tile &t) const {
  // Key positions of the first and last query of the tile.
  int64_t i0 = t.qBegin + offset, i1 = t.qEnd - 1 + offset;
  int64_t k0 = t.kBegin, k1 = t.kEnd - 1;
  bool single = t.qEnd - t.qBegin == 1 && t.kEnd - t.kBegin == 1;
  switch (n.kind) {
  case Node::Kind::All:
    return TileKind::Full;
  case Node::Kind::Causal:
    if (k1 <= i0)
      return TileKind::Full;
    if (k0 > i1)
      return TileKind::Empty;
    return TileKind::Partial;
  case Node::Kind::Window:
    if (k1 < i0 - n.before || k0 > i1 + n.after)
      return TileKind::Empty;
    if (k0 >= i1 - n.before && k1 <= i0 + n.after)
      return TileKind::Full;
    return TileKind::Partial;
  case Node::Kind::Dilated:
  case Node::Kind::Strided: {
    // delta = k - i takes every value in [k0 - i1, k1 - i0] on the tile.
    bool strided = n.kind == Node::Kind::Strided;
    int64_t step = strided ? n.stride : n.dilation;
    int64_t lo = k0 - i1, hi = k1 - i0;
    if (!strided) {
      lo = std::max(lo, -n.before);
      hi = std::min(hi, n.after);
    }
    if (!hasMultipleIn(lo, hi, step))
      return TileKind::Empty;
    // Two neighbouring elements differ by one in delta, so only a unit step
    // (or a single element) can make the whole tile allowed.
    if (single)
      return TileKind::Full;
    if (step == 1 && (strided || (k0 - i1 >= -n.before && k1 - i0 <= n.after)))
      return TileKind::Full;
    return TileKind::Partial;
  }
  case Node::Kind::Global: {
    int64_t rowsIn = countTokens(n.tokens, i0, i1 + 1);
    int64_t colsIn = countTokens(n.tokens, k0, k1 + 1);
    if (rowsIn == i1 - i0 + 1 || colsIn == k1 - k0 + 1)
      return TileKind::Full;
    if (rowsIn == 0 && colsIn == 0)
      return TileKind::Empty;
    return TileKind::Partial;
  }
  case Node::Kind::Fixed: {
    // Keys with k mod s >= s - c are summary keys, seen by every query; the
    // others only from the query's own period. O(1) in the tile's size.
    int64_t s = n.stride, threshold = n.stride - n.summary;
    int64_t rb0 = floorDiv(i0, s), rb1 = floorDiv(i1, s);
    // The first and last other key of [k0, k1] (k >= 0: plain remainders).
    int64_t firstOther = k0 % s < threshold ? k0 : k0 - k0 % s + s;
    int64_t lastOther = k1 % s < threshold ? k1 : k1 - k1 % s + threshold - 1;
    if (threshold == 0 || firstOther > k1 || lastOther < k0)
      return TileKind::Full;
    if (rb0 == rb1 && floorDiv(firstOther, s) == rb0 &&
        floorDiv(lastOther, s) == rb0)
      return TileKind::Full;
    // Whether [k0, k1] holds a summary key: a whole period does, else the
    // remainders run from k0 mod s up, wrapping past s - 1 (a summary key).
    int64_t r0 = k0 % s;
    bool anySummary =
        k1 - k0 + 1 >= s || r0 + (k1 - k0) >= s || r0 + (k1 - k0) >= threshold;
    int64_t cb0 = floorDiv(k0, s), cb1 = floorDiv(k1, s);
    if (!anySummary && (rb1 < cb0 || cb1 < rb0))
      return TileKind::Empty;
    return TileKind::Partial;
  }
  case Node::Kind::Table: {
    bool any = false, all = true;
    int64_t bs = n.blockSize;
    for (int64_t r = t.qBegin / bs; r <= (t.qEnd - 1) / bs; ++r)
      for (int64_t col = t.kBegin / bs; col <= (t.kEnd - 1) / bs; ++col) {
        bool bit = n.table[r * n.cols + col] != 0;
        any |= bit;
        all &= bit;
      }
    if (all)
      return TileKind::Full;
    return any ? TileKind::Partial : TileKind::Empty;
  }
  case Node::Kind::Segments:
    return classifySegments(t);
  case Node::Kind::Union:
  case Node::Kind::Intersect:
  case Node::Kind::PerHead:
  case Node::Kind::Custom:
    break;
  }
  llvm_unreachable("unknown pattern kind");
}

Verdict Evaluator::judge(const Node &n, int64_t h, const Tile &t) const {
  switch (n.kind) {
  case Node::Kind::Union:
  case Node::Kind::Intersect: {
    // For a union, Full absorbs and Empty is neutral; for an intersection the
    // roles swap. One child that is neither decides (the others are
    // neutral); two leave the tile undecided until it is split.
    bool isUnion = n.kind == Node::Kind::Union;
    Verdict absorbing = isUnion ? Verdict::Full : Verdict::Empty;
    Verdict neutral = isUnion ? Verdict::Empty : Verdict::Full;
    Verdict other = neutral;
    int others = 0;
    for (const Node &child : n.children) {
      Verdict v = judge(child, h, t);
      if (v == absorbing)
        return absorbing;
      if (v != neutral) {
        other = v;
        ++others;
      }
    }
    return others > 1 ? Verdict::Undecided : other;
  }
  case Node::Kind::PerHead:
    return judge(n.children[h], h, t);
  case Node::Kind::Custom: {
    TileKind kind = n.custom->classify(h, t);
    // A single element the predicate cannot decide depends on run-time
    // data (counted as allowed where segments are).
    if (kind == TileKind::Partial && segmentsAsAll && t.qEnd - t.qBegin == 1 &&
        t.kEnd - t.kBegin == 1)
      return Verdict::Full;
    return verdictOf(kind);
  }
  default:
    return verdictOf(classifyLeaf(n, t));
  }
}

TileKind Evaluator::classify(const Node &n, int64_t h, const Tile &t) const {
  // Depth-first over the parts of `t` that stay undecided: the first part
  // found Partial decides, as do two decided parts that disagree.
  int64_t splits = 0;
  std::optional<TileKind> seen;
  std::vector<Tile> work = {t};
  while (!work.empty()) {
    Tile part = work.back();
    work.pop_back();
    Verdict v = judge(n, h, part);
    int64_t rows = part.qEnd - part.qBegin, cols = part.kEnd - part.kBegin;
    // A single element stays undecided only where two segment patterns
    // without ids meet: unknown at compile time, so Partial.
    if (v == Verdict::Undecided &&
        ((rows == 1 && cols == 1) || splits == kMaxClassifySplits))
      v = Verdict::Partial;
    if (v == Verdict::Undecided) {
      ++splits;
      auto [a, b] = halves(part);
      work.push_back(b);
      work.push_back(a);
      continue;
    }
    TileKind kind = v == Verdict::Full    ? TileKind::Full
                    : v == Verdict::Empty ? TileKind::Empty
                                          : TileKind::Partial;
    if (kind == TileKind::Partial || (seen && *seen != kind))
      return TileKind::Partial;
    seen = kind;
  }
  return *seen;
}

//===----------------------------------------------------------------------===//
// Mask
//===----------------------------------------------------------------------===//

Mask::Mask(Node rootNode, int64_t numHeads, int64_t queryLen, int64_t keyLen)
    : root(std::make_shared<Node>(std::move(rootNode))), numHeads(numHeads),
      queryLen(queryLen), keyLen(keyLen) {}

bool Mask::isAll() const { return root->kind == Node::Kind::All; }

static bool anyNode(const Node &n, Node::Kind kind) {
  if (n.kind == kind)
    return true;
  for (const Node &c : n.children)
    if (anyNode(c, kind))
      return true;
  return false;
}

static bool anyHeadDependent(const Node &n) {
  if (n.kind == Node::Kind::PerHead ||
      (n.kind == Node::Kind::Custom && n.custom->isHeadDependent()))
    return true;
  for (const Node &c : n.children)
    if (anyHeadDependent(c))
      return true;
  return false;
}

bool Mask::isHeadDependent() const { return anyHeadDependent(*root); }

const CustomPredicate *Mask::getCustom() const {
  if (root->kind == Node::Kind::Custom)
    return root->custom.get();
  if (root->kind == Node::Kind::Intersect)
    for (const Node &c : root->children)
      if (c.kind == Node::Kind::Custom)
        return c.custom.get();
  return nullptr;
}

bool Mask::usesSegments() const { return anyNode(*root, Node::Kind::Segments); }

bool Mask::isAllowed(int64_t h, int64_t q, int64_t k,
                     const SegmentIds *segments) const {
  assert(q >= 0 && q < queryLen && k >= 0 && k < keyLen && h >= 0 &&
         h < numHeads && "position outside the score matrix");
  Evaluator e{keyLen - queryLen, segments, /*segmentsAsAll=*/false};
  return e.allowed(*root, h, q, k);
}

TileKind Mask::classify(int64_t h, const Tile &tile,
                        const SegmentIds *segments) const {
  assert(tile.qBegin >= 0 && tile.qBegin < tile.qEnd && tile.qEnd <= queryLen &&
         tile.kBegin >= 0 && tile.kBegin < tile.kEnd && tile.kEnd <= keyLen &&
         "tile outside the score matrix");
  Evaluator e{keyLen - queryLen, segments, /*segmentsAsAll=*/false};
  return e.classify(*root, h, tile);
}

int64_t Mask::countAllowed(int64_t h) const {
  if (queryLen == 0 || keyLen == 0)
    return 0;
  Evaluator e{keyLen - queryLen, nullptr, /*segmentsAsAll=*/true};
  // Largest tile first, splitting partial ones: past the budget, the tiles
  // left are the smallest partial ones, each estimated from a grid of
  // samples.
  auto area = [](const Tile &t) {
    return (t.qEnd - t.qBegin) * (t.kEnd - t.kBegin);
  };
  auto smaller = [&](const Tile &a, const Tile &b) {
    return area(a) < area(b);
  };
  int64_t count = 0, splits = 0;
  std::vector<Tile> work = {{0, queryLen, 0, keyLen}};
  while (!work.empty()) {
    std::pop_heap(work.begin(), work.end(), smaller);
    Tile t = work.back();
    work.pop_back();
    int64_t rows = t.qEnd - t.qBegin, cols = t.kEnd - t.kBegin;
    TileKind kind = e.classify(*root, h, t);
    if (kind == TileKind::Full) {
      count += rows * cols;
      continue;
    }
    if (kind == TileKind::Empty)
      continue;
    if (rows * cols <= 64) {
      for (int64_t q = t.qBegin; q < t.qEnd; ++q)
        for (int64_t k = t.kBegin; k < t.kEnd; ++k)
          count += e.allowed(*root, h, q, k);
      continue;
    }
    if (splits == kMaxCountTiles) {
      // An estimate: the centres of a grid of up to 16 x 16 cells.
      int64_t gr = std::min<int64_t>(rows, 16),
              gc = std::min<int64_t>(cols, 16);
      int64_t hits = 0;
      for (int64_t r = 0; r < gr; ++r)
        for (int64_t c = 0; c < gc; ++c)
          hits += e.allowed(*root, h, t.qBegin + (2 * r + 1) * rows / (2 * gr),
                            t.kBegin + (2 * c + 1) * cols / (2 * gc));
      count += static_cast<int64_t>(static_cast<double>(hits) / (gr * gc) *
                                    static_cast<double>(rows * cols));
      continue;
    }
    ++splits;
    auto [a, b] = halves(t);
    work.push_back(a);
    std::push_heap(work.begin(), work.end(), smaller);
    work.push_back(b);
    std::push_heap(work.begin(), work.end(), smaller);
  }
  return count;
}
