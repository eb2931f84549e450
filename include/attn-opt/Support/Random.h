//===- Random.h - Deterministic, platform-independent random numbers ------===//
//
// The generators behind every seeded attribute of the attn dialect: BigBird
// random blocks, FAVOR+ projections and LSH rotations. They are part of the
// dialect's semantics (docs/Semantics.md, "Random numbers"): a given seed
// means the same numbers on every platform and in every lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_RANDOM_H
#define ATTN_SUPPORT_RANDOM_H

#include <cstdint>
#include <vector>

namespace mlir::attn {

/// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by the golden
/// gamma, each output a bijective mix of the state. Integer outputs are exact
/// on every platform.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}

  /// The next 64 random bits.
  uint64_t next();
  /// A uniform double in [0, 1) with 53 random bits.
  double uniform();
  /// A standard normal draw by Box-Muller: `sqrt(-2 ln u1) cos(2 pi u2)` with
  /// `u1 = 1 - uniform()` (in (0, 1]) and `u2 = uniform()`, one draw per pair.
  double normal();
  /// A uniform integer in [0, n) as `next() % n` (n > 0).
  uint64_t below(uint64_t n);

private:
  uint64_t state;
};

/// Derives the seed of stream `stream` of a generator seeded with `seed`:
/// `mix(seed ^ (stream + 1) * 0xD1B54A32D192ED03)`, so that streams (query
/// blocks, hash rounds, projection blocks) are independent of each other and
/// of how many numbers another stream drew.
uint64_t deriveSeed(uint64_t seed, uint64_t stream);

/// The key blocks seen by query block `queryBlock` under
/// `#attn.random<blocks = count, block_size = .., seed = seed>` over
/// `numKeyBlocks` key blocks: the first `count` entries of a partial
/// Fisher-Yates shuffle of `0 .. numKeyBlocks-1` driven by
/// `SplitMix64(deriveSeed(seed, queryBlock))`, returned in ascending order.
/// Requires `count <= numKeyBlocks`.
std::vector<int64_t> randomBlocksForRow(uint64_t seed, int64_t queryBlock,
                                        int64_t numKeyBlocks, int64_t count);

/// A `rows x cols` matrix (row-major) of standard normal draws from
/// `SplitMix64(deriveSeed(seed, stream))`, row after row.
std::vector<double> gaussianMatrix(uint64_t seed, uint64_t stream, int64_t rows,
                                   int64_t cols);

/// The FAVOR+ projection `W` (`features x dim`, row-major) of
/// `#attn.kernel<favor, features = m, orthogonal = o, seed = s>`.
/// Not orthogonal: `gaussianMatrix(s, 0, m, dim)`.
/// Orthogonal: rows come in blocks of `dim`; block `b` is the Gram-Schmidt
/// orthonormalization (in row order) of `gaussianMatrix(s, 1 + b, dim, dim)`,
/// each row then scaled by the norm of row r of `gaussianMatrix(s, 1 << 20,
/// m, dim)` so that row norms follow the chi distribution of Gaussian rows;
/// the last block is truncated to the remaining rows.
std::vector<double> favorProjection(uint64_t seed, int64_t features,
                                    int64_t dim, bool orthogonal);

/// The LSH rotations of `attn.lsh_attention`: for hash round `r`, a
/// `dim x (buckets / 2)` matrix `gaussianMatrix(seed, r, dim, buckets / 2)`.
std::vector<double> lshRotation(uint64_t seed, int64_t round, int64_t dim,
                                int64_t numBuckets);

} // namespace mlir::attn

#endif // ATTN_SUPPORT_RANDOM_H
