//===- MaskPatternTest.cpp - Tests of the mask-pattern library ------------===//
//
// Every pattern kind and composition, with random parameters and shapes
// (including Lq != Lk and ragged tiles): element evaluation agrees with an
// independent formula, and tile classification agrees with brute force over
// every element of the tile.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Mask/MaskPattern.h"
#include "attn-opt/Mask/BlockLayout.h"
#include "attn-opt/Support/Random.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>
#include <random>

using namespace mlir::attn;
using namespace mlir::attn::mask;

namespace {

/// An independent definition of a pattern: (head, query position i, query
/// index q, key k) -> allowed.
using Reference =
    std::function<bool(int64_t h, int64_t i, int64_t q, int64_t k)>;

struct Case {
  Node node;
  Reference reference;
  std::string name;
};

int64_t floorDivRef(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / b));
}

struct Shape {
  int64_t heads, lq, lk;
};

class MaskTest : public ::testing::Test {
protected:
  std::mt19937_64 rng{12345};

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

  Shape randomShape() {
    int64_t lk = uniform(1, 70);
    int64_t lq = uniform(0, 2) == 0 ? lk : uniform(1, 70);
    return {uniform(1, 3), lq, lk};
  }

  /// A random leaf pattern of kind `kind` (0..8) for `shape`.
  Case leaf(int kind, const Shape &s) {
    switch (kind) {
    case 0:
      return {Node::causal(),
              [](int64_t, int64_t i, int64_t, int64_t k) { return k <= i; },
              "causal"};
    case 1: {
      int64_t b = uniform(0, 20), a = uniform(0, 20);
      return {Node::window(b, a),
              [=](int64_t, int64_t i, int64_t, int64_t k) {
                return k >= i - b && k <= i + a;
              },
              "window"};
    }
    case 2: {
      int64_t b = uniform(0, 30), a = uniform(0, 30), d = uniform(1, 5);
      return {Node::dilated(b, a, d),
              [=](int64_t, int64_t i, int64_t, int64_t k) {
                for (int64_t t = -b / d - 1; t <= a / d + 1; ++t)
                  if (k == i + t * d && t * d >= -b && t * d <= a)
                    return true;
                return false;
              },
              "dilated"};
    }
    case 3: {
      std::vector<int64_t> tokens;
      int64_t n = uniform(1, 4);
      for (int64_t t = 0; t < n; ++t)
        tokens.push_back(uniform(0, s.lk - 1));
      std::vector<int64_t> copy = tokens;
      return {Node::global(tokens),
              [=](int64_t, int64_t i, int64_t, int64_t k) {
                for (int64_t g : copy)
                  if (g == i || g == k)
                    return true;
                return false;
              },
              "global"};
    }
    case 4: {
      int64_t st = uniform(1, 9);
      return {Node::strided(st),
              [=](int64_t, int64_t i, int64_t, int64_t k) {
                int64_t diff = i - k;
                return ((diff % st) + st) % st == 0;
              },
              "strided"};
    }
    case 5: {
      int64_t st = uniform(1, 16), c = uniform(1, st);
      return {Node::fixed(st, c),
              [=](int64_t, int64_t i, int64_t, int64_t k) {
                return floorDivRef(k, st) == floorDivRef(i, st) ||
                       k % st >= st - c;
              },
              "fixed"};
    }
    case 6: {
      int64_t bs = uniform(1, 16);
      int64_t rows = (s.lq + bs - 1) / bs, cols = (s.lk + bs - 1) / bs;
      std::vector<uint8_t> layout(rows * cols);
      for (uint8_t &bit : layout)
        bit = uniform(0, 1);
      std::vector<uint8_t> copy = layout;
      return {Node::blockTable(bs, rows, cols, layout),
              [=](int64_t, int64_t, int64_t q, int64_t k) {
                return copy[(q / bs) * cols + k / bs] != 0;
              },
              "block"};
    }
    case 7: {
      int64_t bs = uniform(1, 16);
      int64_t rows = (s.lq + bs - 1) / bs, cols = (s.lk + bs - 1) / bs;
      int64_t count = uniform(1, cols);
      uint64_t seed = uniform(0, 1000);
      return {Node::random(count, bs, seed, rows, cols),
              [=](int64_t, int64_t, int64_t q, int64_t k) {
                std::vector<int64_t> picked =
                    randomBlocksForRow(seed, q / bs, cols, count);
                return std::find(picked.begin(), picked.end(), k / bs) !=
                       picked.end();
              },
              "random"};
    }
    default:
      return {Node::all(),
              [](int64_t, int64_t, int64_t, int64_t) { return true; }, "all"};
    }
  }

  static constexpr int kNumLeafKinds = 9;

  /// A random pattern of depth up to `depth` over `shape`.
  Case random(const Shape &s, int depth) {
    int choice = depth == 0 ? 0 : uniform(0, 3);
    if (choice == 0)
      return leaf(uniform(0, kNumLeafKinds - 1), s);
    if (choice == 3) {
      std::vector<Node> nodes;
      std::vector<Reference> refs;
      for (int64_t h = 0; h < s.heads; ++h) {
        Case c = random(s, depth - 1);
        nodes.push_back(c.node);
        refs.push_back(c.reference);
      }
      return {Node::perHead(nodes),
              [=](int64_t h, int64_t i, int64_t q, int64_t k) {
                return refs[h](h, i, q, k);
              },
              "per_head"};
    }
    int n = uniform(2, 3);
    std::vector<Node> nodes;
    std::vector<Reference> refs;
    for (int t = 0; t < n; ++t) {
      Case c = random(s, depth - 1);
      nodes.push_back(c.node);
      refs.push_back(c.reference);
    }
    bool isUnion = choice == 1;
    return {isUnion ? Node::unite(nodes) : Node::intersect(nodes),
            [=](int64_t h, int64_t i, int64_t q, int64_t k) {
              for (const Reference &r : refs) {
                bool a = r(h, i, q, k);
                if (isUnion && a)
                  return true;
                if (!isUnion && !a)
                  return false;
              }
              return !isUnion;
            },
            isUnion ? "union" : "intersect"};
  }

  /// Checks evaluation, classification of random and gridded tiles, and
  /// counting, against the reference.
  void check(const Case &c, const Shape &s, const SegmentIds *segs = nullptr,
             bool countable = true) {
    Mask m(c.node, s.heads, s.lq, s.lk);
    int64_t offset = s.lk - s.lq;
    auto ref = [&](int64_t h, int64_t q, int64_t k) {
      return c.reference(h, q + offset, q, k);
    };
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t count = 0;
      for (int64_t q = 0; q < s.lq; ++q)
        for (int64_t k = 0; k < s.lk; ++k) {
          bool expected = ref(h, q, k);
          count += expected;
          ASSERT_EQ(m.isAllowed(h, q, k, segs), expected)
              << c.name << " head " << h << " q " << q << " k " << k << " Lq "
              << s.lq << " Lk " << s.lk;
        }
      if (countable)
        EXPECT_EQ(m.countAllowed(h), count) << c.name;

      auto expectTile = [&](const Tile &t) {
        bool any = false, all = true;
        for (int64_t q = t.qBegin; q < t.qEnd; ++q)
          for (int64_t k = t.kBegin; k < t.kEnd; ++k) {
            bool a = ref(h, q, k);
            any |= a;
            all &= a;
          }
        TileKind expected = all   ? TileKind::Full
                            : any ? TileKind::Partial
                                  : TileKind::Empty;
        ASSERT_EQ(m.classify(h, t, segs), expected)
            << c.name << " head " << h << " tile q[" << t.qBegin << ","
            << t.qEnd << ") k[" << t.kBegin << "," << t.kEnd << ") Lq " << s.lq
            << " Lk " << s.lk;
      };
      for (int trial = 0; trial < 40; ++trial) {
        int64_t q0 = uniform(0, s.lq - 1), k0 = uniform(0, s.lk - 1);
        expectTile({q0, uniform(q0 + 1, s.lq), k0, uniform(k0 + 1, s.lk)});
      }
      // A grid of tiles, ragged at the end, as a block-sparse kernel uses.
      int64_t bq = uniform(1, 17), bk = uniform(1, 17);
      for (int64_t q = 0; q < s.lq; q += bq)
        for (int64_t k = 0; k < s.lk; k += bk)
          expectTile({q, std::min(q + bq, s.lq), k, std::min(k + bk, s.lk)});
    }
  }
};

TEST_F(MaskTest, EveryLeafKind) {
  for (int kind = 0; kind < kNumLeafKinds; ++kind)
    for (int trial = 0; trial < 60; ++trial) {
      Shape s = randomShape();
      check(leaf(kind, s), s);
    }
}

TEST_F(MaskTest, Compositions) {
  for (int trial = 0; trial < 300; ++trial) {
    Shape s = randomShape();
    check(random(s, 2), s);
  }
}

TEST_F(MaskTest, SegmentsWithRuntimeIds) {
  for (int trial = 0; trial < 100; ++trial) {
    Shape s = randomShape();
    std::vector<int64_t> qIds(s.lq), kIds(s.lk);
    // Sorted document ids, as in packed sequences, plus some noise.
    int64_t docs = uniform(1, 4);
    for (int64_t &id : qIds)
      id = uniform(0, docs);
    for (int64_t &id : kIds)
      id = uniform(0, docs);
    if (trial % 2 == 0) {
      std::sort(qIds.begin(), qIds.end());
      std::sort(kIds.begin(), kIds.end());
    }
    SegmentIds segs{qIds, kIds};
    Case seg{Node::segments(),
             [&](int64_t, int64_t, int64_t q, int64_t k) {
               return qIds[q] == kIds[k];
             },
             "segments"};
    check(seg, s, &segs, /*countable=*/false);
    Case other = random(s, 1);
    Case both{
        Node::intersect({seg.node, other.node}),
        [&, ref = other.reference](int64_t h, int64_t i, int64_t q, int64_t k) {
          return qIds[q] == kIds[k] && ref(h, i, q, k);
        },
        "segments & " + other.name};
    check(both, s, &segs, /*countable=*/false);
  }
}

TEST_F(MaskTest, SegmentsWithoutIdsArePartialNeverWrong) {
  Mask m(Node::intersect({Node::causal(), Node::segments()}), 1, 8, 8);
  EXPECT_EQ(m.classify(0, {0, 4, 4, 8}), TileKind::Empty);
  EXPECT_EQ(m.classify(0, {4, 8, 0, 4}), TileKind::Partial);
  Mask u(Node::unite({Node::causal(), Node::segments()}), 1, 8, 8);
  EXPECT_EQ(u.classify(0, {4, 8, 0, 4}), TileKind::Full);
  EXPECT_EQ(u.classify(0, {0, 4, 4, 8}), TileKind::Partial);
  // For FLOP counts the ids are unknown and count as allowing everything.
  EXPECT_EQ(m.countAllowed(0), 36);
}

TEST_F(MaskTest, BottomRightAlignment) {
  // Two queries over five keys: the queries sit at key positions 3 and 4.
  Mask m(Node::causal(), 1, 2, 5);
  EXPECT_TRUE(m.isAllowed(0, 0, 3));
  EXPECT_FALSE(m.isAllowed(0, 0, 4));
  EXPECT_TRUE(m.isAllowed(0, 1, 4));
  // More queries than keys: the first queries see nothing.
  Mask wide(Node::causal(), 1, 5, 2);
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t q = 0; q < 3; ++q)
      EXPECT_FALSE(wide.isAllowed(0, q, k));
  EXPECT_EQ(wide.classify(0, {0, 3, 0, 2}), TileKind::Empty);
  EXPECT_EQ(wide.countAllowed(0), 3);
}

TEST_F(MaskTest, LargeCountsMatchClosedForms) {
  int64_t l = 4096;
  EXPECT_EQ(Mask(Node::causal(), 1, l, l).countAllowed(0), l * (l + 1) / 2);
  Mask window(Node::window(128, 128), 1, l, l);
  int64_t expected = 0;
  for (int64_t i = 0; i < l; ++i)
    expected += std::min(l - 1, i + 128) - std::max<int64_t>(0, i - 128) + 1;
  EXPECT_EQ(window.countAllowed(0), expected);
  EXPECT_EQ(Mask().countAllowed(0), 0);
}

/// The block layout of every pattern kind and composition, per-head lists
/// included, for ragged lengths and several block sizes, equals brute-force
/// classification of every element of every block; its CSR form is valid.
TEST_F(MaskTest, BoundsAtInt64MaxGiveTheMathematicalMask) {
  // Every distance at INT64_MAX saturates to a mask equal to the
  // mathematical one, computed here in 128-bit arithmetic.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  using I128 = __int128;
  for (Shape s : {Shape{1, 8, 8}, Shape{2, 5, 13}, Shape{1, 13, 5}}) {
    check({Node::window(0, kMax),
           [](int64_t, int64_t i, int64_t, int64_t k) {
             return k >= i && I128(k) <= I128(i) + kMax;
           },
           "window(0, max)"},
          s);
    check({Node::window(kMax, kMax),
           [](int64_t, int64_t i, int64_t, int64_t k) {
             return I128(k) >= I128(i) - kMax && I128(k) <= I128(i) + kMax;
           },
           "window(max, max)"},
          s);
    check({Node::dilated(kMax, kMax, kMax),
           [](int64_t, int64_t i, int64_t, int64_t k) {
             return (I128(k) - i) % kMax == 0;
           },
           "dilated(max, max, max)"},
          s);
    check({Node::dilated(kMax, 3, 1),
           [](int64_t, int64_t i, int64_t, int64_t k) { return k <= i + 3; },
           "dilated(max, 3, 1)"},
          s);
    check({Node::strided(kMax),
           [](int64_t, int64_t i, int64_t, int64_t k) {
             return (I128(i) - k) % kMax == 0;
           },
           "strided(max)"},
          s);
    for (int64_t c : {int64_t(1), int64_t(2), kMax - 1, kMax}) {
      check({Node::fixed(kMax, c),
             [c](int64_t, int64_t i, int64_t, int64_t k) {
               auto period = [](I128 x) { return x < 0 ? -1 : 0; };
               return period(k) == period(i) || I128(k) >= I128(kMax) - c;
             },
             "fixed(max, c)"},
            s);
    }
    check({Node::global({0, kMax}),
           [](int64_t, int64_t i, int64_t, int64_t k) {
             return i == 0 || k == 0;
           },
           "global({0, max})"},
          s);
  }
  // The window of the reproducer equals after = 8 over 8 keys.
  Mask wide(Node::window(0, kMax), 1, 8, 8), eight(Node::window(0, 8), 1, 8, 8);
  for (int64_t q = 0; q < 8; ++q)
    for (int64_t k = 0; k < 8; ++k)
      EXPECT_EQ(wide.isAllowed(0, q, k), eight.isAllowed(0, q, k));
}

TEST_F(MaskTest, DeepCompositionsClassifyInPolynomialTime) {
  // Nested 30 deep, each level [inner, window(2, 0)]: splitting every level
  // again took time exponential in the depth. Classification splits only
  // the root now; the answers stay exact.
  Node inner = Node::window(2, 0);
  Reference ref = [](int64_t, int64_t i, int64_t, int64_t k) {
    return k >= i - 2 && k <= i;
  };
  for (int level = 0; level < 30; ++level)
    inner = level % 2 ? Node::intersect({inner, Node::window(2, 0)})
                      : Node::unite({Node::window(2, 0), inner});
  check({inner, ref, "nested 30 deep"}, {1, 64, 4});
  check({inner, ref, "nested 30 deep"}, {1, 67, 67});
  // A layout over long sequences stays cheap.
  BlockLayout layout = BlockLayout::compute(Mask(inner, 1, 4096, 4096), 64, 64);
  EXPECT_EQ(layout.countVisited(), 64 + 63);
}

TEST_F(MaskTest, ClassificationAndCountsOfLongSequencesAreBounded) {
  // The longest sequences the dialect accepts: classifying the whole matrix
  // and counting stay within their budgets.
  int64_t l = kMaxSequenceLength;
  Mask fixed(Node::fixed(4096, 64), 1, l, l);
  EXPECT_EQ(fixed.classify(0, {0, l, 0, l}), TileKind::Partial);
  Mask both(Node::intersect({Node::strided(3), Node::dilated(100, 100, 2)}), 1,
            l, l);
  EXPECT_EQ(both.classify(0, {0, l, 0, l}), TileKind::Partial);
  EXPECT_EQ(both.classify(0, {0, 1, 0, 1}), TileKind::Full);
  Mask window(Node::window(128, 0), 1, l, l);
  int64_t estimate = window.countAllowed(0);
  // An estimate, within a small factor of l * 129 - 128 * 129 / 2.
  EXPECT_GE(estimate, l * 129 / 4);
  EXPECT_LE(estimate, l * 129 * 4);
  // Below the budget the count is exact.
  EXPECT_EQ(Mask(Node::window(128, 0), 1, 1 << 16, 1 << 16).countAllowed(0),
            (int64_t(1) << 16) * 129 - 128 * 129 / 2);
}

TEST_F(MaskTest, BlockLayoutsMatchBruteForce) {
  for (int trial = 0; trial < 250; ++trial) {
    Shape s = randomShape();
    Case c = trial < 9 * 10 ? leaf(trial % kNumLeafKinds, s) : random(s, 2);
    Mask m(c.node, s.heads, s.lq, s.lk);
    int64_t bq = uniform(1, 24), bk = uniform(1, 24);
    BlockLayout layout = BlockLayout::compute(m, bq, bk);
    ASSERT_EQ(layout.getNumQueryBlocks(), (s.lq + bq - 1) / bq);
    ASSERT_EQ(layout.getNumKeyBlocks(), (s.lk + bk - 1) / bk);
    std::vector<int64_t> heads;
    for (int64_t h = 0; h < s.heads; ++h)
      heads.push_back(layout.getLayoutOfHead(h));
    EXPECT_EQ(BlockLayout::verify(layout.getNumQueryBlocks(),
                                  layout.getNumKeyBlocks(), layout.getLayouts(),
                                  heads),
              "");
    int64_t offset = s.lk - s.lq, visited = 0, full = 0;
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t r = 0; r < layout.getNumQueryBlocks(); ++r)
        for (int64_t k = 0; k < layout.getNumKeyBlocks(); ++k) {
          bool any = false, all = true;
          for (int64_t q = r * bq; q < std::min(s.lq, (r + 1) * bq); ++q)
            for (int64_t j = k * bk; j < std::min(s.lk, (k + 1) * bk); ++j) {
              bool a = c.reference(h, q + offset, q, j);
              any |= a;
              all &= a;
            }
          TileKind expected = all   ? TileKind::Full
                              : any ? TileKind::Partial
                                    : TileKind::Empty;
          ASSERT_EQ(layout.getKind(h, r, k), expected)
              << c.name << " head " << h << " block (" << r << ", " << k
              << ") of " << bq << "x" << bk << ", Lq " << s.lq << " Lk "
              << s.lk;
          visited += expected != TileKind::Empty;
          full += expected == TileKind::Full;
        }
    EXPECT_EQ(layout.countVisited(), visited);
    EXPECT_EQ(layout.countFull(), full);
    EXPECT_EQ(layout.countBlocks(),
              s.heads * layout.getNumQueryBlocks() * layout.getNumKeyBlocks());
  }
}

TEST(BlockLayoutTest, HeadsWithTheSameLayoutShareIt) {
  Mask m(Node::perHead({Node::causal(), Node::window(2, 2), Node::causal()}), 3,
         16, 16);
  BlockLayout l = BlockLayout::compute(m, 4, 4);
  EXPECT_EQ(l.getLayouts().size(), 2u);
  EXPECT_EQ(l.getLayoutOfHead(0), l.getLayoutOfHead(2));
  EXPECT_NE(l.getLayoutOfHead(0), l.getLayoutOfHead(1));
  EXPECT_EQ(l.render(0), "+...\n#+..\n##+.\n###+\n");
}

/// The transposed layout (the backward pass's key-block walk) holds block
/// (c, r) of the scores' transpose as the layout holds (r, c), with swapped
/// block sizes, ascending query blocks per key block, and verifies.
TEST(BlockLayoutTest, TransposedSwapsRowsAndColumns) {
  Mask m(Node::perHead({Node::causal(), Node::window(7, 2),
                        Node::intersect({Node::causal(), Node::strided(5)})}),
         3, 100, 83);
  BlockLayout l = BlockLayout::compute(m, 16, 32);
  BlockLayout t = l.transposed();
  EXPECT_EQ(t.getBlockQ(), 32);
  EXPECT_EQ(t.getBlockK(), 16);
  EXPECT_EQ(t.getNumQueryBlocks(), l.getNumKeyBlocks());
  EXPECT_EQ(t.getNumKeyBlocks(), l.getNumQueryBlocks());
  std::vector<int64_t> heads;
  for (int64_t h = 0; h < 3; ++h)
    heads.push_back(t.getLayoutOfHead(h));
  EXPECT_EQ(BlockLayout::verify(t.getNumQueryBlocks(), t.getNumKeyBlocks(),
                                t.getLayouts(), heads),
            "");
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t r = 0; r < l.getNumQueryBlocks(); ++r)
      for (int64_t c = 0; c < l.getNumKeyBlocks(); ++c)
        ASSERT_EQ(t.getKind(h, c, r), l.getKind(h, r, c))
            << "head " << h << " block (" << r << ", " << c << ")";
  EXPECT_EQ(t.countVisited(), l.countVisited());
  EXPECT_EQ(t.countFull(), l.countFull());
  // Causal, queries aligned to the end of the keys: query i sees keys
  // <= i - 17. Key block 0 (keys 0..31) is seen in part by query blocks 1
  // and 2, wholly from block 3 on; the last key block (keys 64..82) in part
  // by the last two.
  EXPECT_EQ(t.render(0), ".++####\n...++##\n.....++\n");
  EXPECT_EQ(t.transposed().getKind(1, 3, 1), l.getKind(1, 3, 1));
}

TEST(BlockLayoutTest, VerifyRejectsBrokenLayouts) {
  BlockLayout::Compressed c;
  c.fullOffsets = {0, 1, 1};
  c.fullBlocks = {0};
  c.partialOffsets = {0, 1, 1};
  c.partialBlocks = {0};
  EXPECT_EQ(BlockLayout::verify(2, 2, {c}, {0}),
            "block (0, 0) is both full and partial");
  c.partialBlocks = {5};
  EXPECT_EQ(BlockLayout::verify(2, 2, {c}, {0}),
            "partial block 5 is outside the 2 key blocks");
  c.partialBlocks = {1};
  EXPECT_EQ(BlockLayout::verify(2, 2, {c}, {1}),
            "head layout index 1 out of range");
  EXPECT_EQ(BlockLayout::verify(3, 2, {c}, {0}),
            "full offsets need 4 entries, got 3");
  EXPECT_EQ(BlockLayout::verify(2, 2, {c}, {0}), "");
}

TEST(TileKindTest, Names) {
  EXPECT_STREQ(stringifyTileKind(TileKind::Full), "full");
  EXPECT_STREQ(stringifyTileKind(TileKind::Partial), "partial");
  EXPECT_STREQ(stringifyTileKind(TileKind::Empty), "empty");
}

} // namespace
