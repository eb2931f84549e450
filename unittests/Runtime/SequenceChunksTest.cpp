//===- SequenceChunksTest.cpp - The chunks of sequence parallelism ------===//

#include "attn-opt/Runtime/Host/SequenceChunks.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace mlir::attn;

namespace {
/// Every row of [0, rows) lies in exactly one run of one rank.
void expectPartition(int64_t rows, int64_t ranks, bool zigzag,
                     const std::vector<int64_t> &offsets = {}) {
  std::vector<int> seen(rows, 0);
  for (int64_t r = 0; r < ranks; ++r)
    for (auto [start, length] : sequenceRuns(rows, ranks, r, zigzag, offsets)) {
      ASSERT_GE(start, 0);
      ASSERT_GE(length, 0);
      ASSERT_LE(start + length, rows);
      for (int64_t i = start; i < start + length; ++i)
        ++seen[i];
    }
  for (int64_t i = 0; i < rows; ++i)
    EXPECT_EQ(seen[i], 1) << "row " << i << " of " << rows << " on " << ranks
                          << (zigzag ? " zigzag" : " contiguous");
}
} // namespace

TEST(SequenceChunks, EveryRowOnce) {
  for (int64_t ranks : {1, 2, 3, 4, 7})
    for (int64_t rows : {0, 1, 5, 131, 203, 1000}) {
      expectPartition(rows, ranks, false);
      expectPartition(rows, ranks, true);
    }
  expectPartition(100, 3, false, {0, 10, 60, 100});
}

TEST(SequenceChunks, BalancedAndZigzag) {
  // 203 rows on 4 ranks: 51, 51, 51, 50.
  EXPECT_EQ(sequenceRuns(203, 4, 0, false)[0], SequenceRun(0, 51));
  EXPECT_EQ(sequenceRuns(203, 4, 3, false)[0], SequenceRun(153, 50));
  // Zigzag over 2 ranks of 10 rows: chunks of 3, 3, 2, 2; rank 0 holds
  // chunks 0 and 3, rank 1 chunks 1 and 2.
  auto r0 = sequenceRuns(10, 2, 0, true), r1 = sequenceRuns(10, 2, 1, true);
  EXPECT_EQ(r0[0], SequenceRun(0, 3));
  EXPECT_EQ(r0[1], SequenceRun(8, 2));
  EXPECT_EQ(r1[0], SequenceRun(3, 3));
  EXPECT_EQ(r1[1], SequenceRun(6, 2));
}

TEST(SequenceChunks, ZigzagBalancesCausalWork) {
  // Causal work of a rank: the sum over its rows of (row + 1). Zigzag
  // evens it out; the contiguous split gives the last rank the most.
  auto work = [](int64_t rows, int64_t ranks, int64_t r, bool zigzag) {
    int64_t w = 0;
    for (auto [start, length] : sequenceRuns(rows, ranks, r, zigzag))
      for (int64_t i = start; i < start + length; ++i)
        w += i + 1;
    return w;
  };
  for (int64_t ranks : {2, 4}) {
    int64_t lo = INT64_MAX, hi = 0;
    for (int64_t r = 0; r < ranks; ++r) {
      lo = std::min(lo, work(8192, ranks, r, true));
      hi = std::max(hi, work(8192, ranks, r, true));
    }
    EXPECT_LT(double(hi - lo) / hi, 1e-3);
    EXPECT_GT(work(8192, ranks, ranks - 1, false),
              2 * work(8192, ranks, 0, false));
  }
}
