//===- BlockLayout.cpp - Compile-time block layouts of mask patterns ------===//

#include "attn-opt/Analysis/BlockLayout.h"

#include <algorithm>
#include <cassert>

using namespace mlir::attn;
using mask::TileKind;

bool BlockLayout::Compressed::operator==(const Compressed &o) const {
  return fullOffsets == o.fullOffsets && fullBlocks == o.fullBlocks &&
         partialOffsets == o.partialOffsets &&
         partialBlocks == o.partialBlocks;
}

BlockLayout BlockLayout::compute(const mask::Mask &m, int64_t blockQ,
                                 int64_t blockK,
                                 const mask::SegmentIds *segments) {
  assert(blockQ > 0 && blockK > 0 && "block sizes must be positive");
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
