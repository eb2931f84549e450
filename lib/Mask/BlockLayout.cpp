//===- BlockLayout.cpp - Compile-time block layouts of mask patterns ------===//

#include "attn-opt/Mask/BlockLayout.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>

using namespace mlir::attn;
using mask::TileKind;

bool BlockLayout::Compressed::operator==(const Compressed &o) const {
  return fullOffsets == o.fullOffsets && fullBlocks == o.fullBlocks &&
         partialOffsets == o.partialOffsets && partialBlocks == o.partialBlocks;
}

bool BlockLayout::fitsAtCompileTime(const mask::Mask &m) {
  if (!m.hasStaticLengths())
    return false;
  int64_t rows = (m.getQueryLen() + kMinBlock - 1) / kMinBlock;
  int64_t cols = (m.getKeyLen() + kMinBlock - 1) / kMinBlock;
  int64_t heads = m.isHeadDependent() ? m.getNumHeads() : 1;
  // Lengths are at most 2^30 and heads at most 2^47: no overflow in doubles
  // that decide a bound of 2^24.
  return static_cast<double>(rows) * cols * heads <= kMaxBlocks;
}

BlockLayout BlockLayout::compute(const mask::Mask &m, int64_t blockQ,
                                 int64_t blockK,
                                 const mask::SegmentIds *segments) {
  assert(blockQ > 0 && blockK > 0 && "block sizes must be positive");
  assert(fitsAtCompileTime(m) && "a layout too large for compile time");
  BlockLayout l;
  l.blockQ = blockQ;
  l.blockK = blockK;
  l.numQueryBlocks = (m.getQueryLen() + blockQ - 1) / blockQ;
  l.numKeyBlocks = (m.getKeyLen() + blockK - 1) / blockK;
  int64_t heads = m.isHeadDependent() ? m.getNumHeads() : 1;
  for (int64_t h = 0; h < heads; ++h) {
    Compressed c;
    c.fullOffsets.push_back(0);
    c.partialOffsets.push_back(0);
    for (int64_t r = 0; r < l.numQueryBlocks; ++r) {
      for (int64_t k = 0; k < l.numKeyBlocks; ++k) {
        mask::Tile t{r * blockQ, std::min(m.getQueryLen(), (r + 1) * blockQ),
                     k * blockK, std::min(m.getKeyLen(), (k + 1) * blockK)};
        TileKind kind = m.classify(h, t, segments);
        if (kind == TileKind::Full)
          c.fullBlocks.push_back(k);
        else if (kind == TileKind::Partial)
          c.partialBlocks.push_back(k);
      }
      c.fullOffsets.push_back(c.fullBlocks.size());
      c.partialOffsets.push_back(c.partialBlocks.size());
    }
    auto it = std::find(l.layouts.begin(), l.layouts.end(), c);
    l.headLayout.push_back(it - l.layouts.begin());
    if (it == l.layouts.end())
      l.layouts.push_back(std::move(c));
  }
  // Head-independent masks: every head shares layout 0.
  l.headLayout.resize(m.getNumHeads(), l.headLayout.front());
  return l;
}

BlockLayout BlockLayout::fromParts(int64_t blockQ, int64_t blockK,
                                   int64_t numQueryBlocks, int64_t numKeyBlocks,
                                   std::vector<Compressed> layouts,
                                   std::vector<int64_t> headLayout) {
  BlockLayout l;
  l.blockQ = blockQ;
  l.blockK = blockK;
  l.numQueryBlocks = numQueryBlocks;
  l.numKeyBlocks = numKeyBlocks;
  l.layouts = std::move(layouts);
  l.headLayout = std::move(headLayout);
  return l;
}

BlockLayout BlockLayout::transposed() const {
  auto transpose = [&](const std::vector<int32_t> &offsets,
                       const std::vector<int32_t> &blocks,
                       std::vector<int32_t> &outOffsets,
                       std::vector<int32_t> &outBlocks) {
    // Counting sort of the (row, column) pairs by column; rows ascend
    // within each column as they are visited in order.
    outOffsets.assign(numKeyBlocks + 1, 0);
    for (int32_t c : blocks)
      ++outOffsets[c + 1];
    for (int64_t c = 0; c < numKeyBlocks; ++c)
      outOffsets[c + 1] += outOffsets[c];
    outBlocks.assign(blocks.size(), 0);
    std::vector<int32_t> next(outOffsets.begin(), outOffsets.end() - 1);
    for (int64_t r = 0; r < numQueryBlocks; ++r)
      for (int32_t e = offsets[r]; e < offsets[r + 1]; ++e)
        outBlocks[next[blocks[e]]++] = static_cast<int32_t>(r);
  };
  std::vector<Compressed> out(layouts.size());
  for (auto [t, l] : llvm::zip(out, layouts)) {
    transpose(l.fullOffsets, l.fullBlocks, t.fullOffsets, t.fullBlocks);
    transpose(l.partialOffsets, l.partialBlocks, t.partialOffsets,
              t.partialBlocks);
  }
  return fromParts(blockK, blockQ, numKeyBlocks, numQueryBlocks, std::move(out),
                   headLayout);
}

std::string BlockLayout::verify(int64_t numQueryBlocks, int64_t numKeyBlocks,
                                const std::vector<Compressed> &layouts,
                                const std::vector<int64_t> &headLayout) {
  auto checkList = [&](const std::vector<int32_t> &offsets,
                       const std::vector<int32_t> &blocks,
                       const char *what) -> std::string {
    if (static_cast<int64_t>(offsets.size()) != numQueryBlocks + 1)
      return std::string(what) + " offsets need " +
             std::to_string(numQueryBlocks + 1) + " entries, got " +
             std::to_string(offsets.size());
    if (offsets.front() != 0 ||
        offsets.back() != static_cast<int32_t>(blocks.size()))
      return std::string(what) + " offsets must run from 0 to the number "
                                 "of blocks";
    // (All offsets checked before any is used to index the blocks.)
    for (int64_t r = 0; r < numQueryBlocks; ++r)
      if (offsets[r] > offsets[r + 1])
        return std::string(what) + " offsets must not decrease";
    for (int64_t r = 0; r < numQueryBlocks; ++r) {
      for (int32_t i = offsets[r]; i < offsets[r + 1]; ++i) {
        if (blocks[i] < 0 || blocks[i] >= numKeyBlocks)
          return std::string(what) + " block " + std::to_string(blocks[i]) +
                 " is outside the " + std::to_string(numKeyBlocks) +
                 " key blocks";
        if (i > offsets[r] && blocks[i] <= blocks[i - 1])
          return std::string(what) + " blocks of query block " +
                 std::to_string(r) + " must ascend";
      }
    }
    return "";
  };
  for (const Compressed &c : layouts) {
    std::string e = checkList(c.fullOffsets, c.fullBlocks, "full");
    if (e.empty())
      e = checkList(c.partialOffsets, c.partialBlocks, "partial");
    if (!e.empty())
      return e;
    for (int64_t r = 0; r < numQueryBlocks; ++r)
      for (int32_t i = c.fullOffsets[r]; i < c.fullOffsets[r + 1]; ++i)
        if (std::binary_search(c.partialBlocks.begin() + c.partialOffsets[r],
                               c.partialBlocks.begin() +
                                   c.partialOffsets[r + 1],
                               c.fullBlocks[i]))
          return "block (" + std::to_string(r) + ", " +
                 std::to_string(c.fullBlocks[i]) + ") is both full and partial";
  }
  for (int64_t h : headLayout)
    if (h < 0 || h >= static_cast<int64_t>(layouts.size()))
      return "head layout index " + std::to_string(h) + " out of range";
  return "";
}

std::string BlockLayout::firstDifference(const BlockLayout &o) const {
  if (blockQ != o.blockQ || blockK != o.blockK ||
      numQueryBlocks != o.numQueryBlocks || numKeyBlocks != o.numKeyBlocks ||
      getNumHeads() != o.getNumHeads())
    return "the block grids differ";
  for (int64_t h = 0; h < getNumHeads(); ++h)
    for (int64_t r = 0; r < numQueryBlocks; ++r)
      for (int64_t c = 0; c < numKeyBlocks; ++c) {
        TileKind a = getKind(h, r, c), b = o.getKind(h, r, c);
        if (a != b)
          return "block (" + std::to_string(r) + ", " + std::to_string(c) +
                 ") of head " + std::to_string(h) + " is " +
                 mask::stringifyTileKind(a) + " here but " +
                 mask::stringifyTileKind(b) + " by the pattern";
      }
  return "";
}

TileKind BlockLayout::getKind(int64_t head, int64_t r, int64_t c) const {
  const Compressed &l = layouts[headLayout[head]];
  auto has = [&](const std::vector<int32_t> &offsets,
                 const std::vector<int32_t> &blocks) {
    return std::binary_search(blocks.begin() + offsets[r],
                              blocks.begin() + offsets[r + 1],
                              static_cast<int32_t>(c));
  };
  if (has(l.fullOffsets, l.fullBlocks))
    return TileKind::Full;
  if (has(l.partialOffsets, l.partialBlocks))
    return TileKind::Partial;
  return TileKind::Empty;
}

int64_t BlockLayout::countFull() const {
  int64_t n = 0;
  for (int64_t layout : headLayout)
    n += layouts[layout].fullBlocks.size();
  return n;
}

int64_t BlockLayout::countVisited() const {
  int64_t n = countFull();
  for (int64_t layout : headLayout)
    n += layouts[layout].partialBlocks.size();
  return n;
}

int64_t BlockLayout::countBlocks() const {
  return numQueryBlocks * numKeyBlocks * getNumHeads();
}

std::string BlockLayout::render(int64_t head) const {
  std::string s;
  for (int64_t r = 0; r < numQueryBlocks; ++r) {
    for (int64_t c = 0; c < numKeyBlocks; ++c) {
      TileKind k = getKind(head, r, c);
      s += k == TileKind::Full ? '#' : k == TileKind::Partial ? '+' : '.';
    }
    s += '\n';
  }
  return s;
}
