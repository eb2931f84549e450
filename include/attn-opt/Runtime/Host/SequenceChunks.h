//===- SequenceChunks.h - Which rows of a sequence each rank holds -*- C++
//-*-===//
//
// The chunks of sequence-parallel attention (attn-partition-sequence,
// docs/SequenceParallel.md) for hosts without MLIR (attn-run, the Python
// package): rank `r` of `P` holds, of a sequence of `L` rows,
// - contiguous: the rows the static chunk offsets give (P + 1 entries), or
//   else the balanced split (the first L mod P ranks one row longer);
// - zigzag: of 2P near-equal chunks (the first L mod 2P one row longer),
//   chunk r then chunk 2P - 1 - r.
// The pass emits the same arithmetic as IR and checks at run time that each
// rank holds what it says (a disagreement is a run-time error, which the
// sequence-parallel integration tests would report).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_SEQUENCECHUNKS_H
#define ATTN_RUNTIME_HOST_SEQUENCECHUNKS_H

#include <cstdint>
#include <utility>
#include <vector>

namespace mlir::attn {

/// One run of rows: (first global row, number of rows).
using SequenceRun = std::pair<int64_t, int64_t>;

/// The runs of rank `rank` of `ranks` over `rows` rows, in local order.
inline std::vector<SequenceRun>
sequenceRuns(int64_t rows, int64_t ranks, int64_t rank, bool zigzag,
             const std::vector<int64_t> &staticOffsets = {}) {
  if (zigzag) {
    int64_t chunks = 2 * ranks, base = rows / chunks, extra = rows % chunks;
    auto chunk = [&](int64_t j) -> SequenceRun {
      return {j * base + std::min(j, extra), base + (j < extra ? 1 : 0)};
    };
    return {chunk(rank), chunk(chunks - 1 - rank)};
  }
  // (Static chunks for another number of ranks: any split; the generated
  // code reports the mismatch on every rank.)
  if (!staticOffsets.empty() &&
      static_cast<int64_t>(staticOffsets.size()) == ranks + 1)
    return {
        {staticOffsets[rank], staticOffsets[rank + 1] - staticOffsets[rank]}};
  int64_t base = rows / ranks, extra = rows % ranks;
  return {{rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)}};
}

} // namespace mlir::attn

#endif // ATTN_RUNTIME_HOST_SEQUENCECHUNKS_H
