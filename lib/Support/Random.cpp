//===- Random.cpp - Deterministic random numbers --------------------------===//

#include "attn-opt/Support/Random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

using namespace mlir::attn;

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::next() {
  state += 0x9E3779B97F4A7C15ULL;
  return mix64(state);
}

double SplitMix64::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double SplitMix64::normal() {
  double u1 = 1.0 - uniform();
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t SplitMix64::below(uint64_t n) {
  assert(n > 0 && "empty range");
  return next() % n;
}

uint64_t mlir::attn::deriveSeed(uint64_t seed, uint64_t stream) {
  return mix64(seed ^ ((stream + 1) * 0xD1B54A32D192ED03ULL));
}

std::vector<int64_t> mlir::attn::randomBlocksForRow(uint64_t seed,
                                                    int64_t queryBlock,
                                                    int64_t numKeyBlocks,
                                                    int64_t count) {
  assert(count >= 0 && count <= numKeyBlocks && "too many random blocks");
  std::vector<int64_t> perm(numKeyBlocks);
  std::iota(perm.begin(), perm.end(), 0);
  SplitMix64 rng(deriveSeed(seed, static_cast<uint64_t>(queryBlock)));
  for (int64_t t = 0; t < count; ++t) {
    int64_t u = t + static_cast<int64_t>(rng.below(numKeyBlocks - t));
    std::swap(perm[t], perm[u]);
  }
  perm.resize(count);
  std::sort(perm.begin(), perm.end());
  return perm;
}

std::vector<double> mlir::attn::gaussianMatrix(uint64_t seed, uint64_t stream,
                                               int64_t rows, int64_t cols) {
  SplitMix64 rng(deriveSeed(seed, stream));
  std::vector<double> m(rows * cols);
  for (double &x : m)
    x = rng.normal();
  return m;
}

std::vector<double> mlir::attn::favorProjection(uint64_t seed, int64_t features,
                                                int64_t dim, bool orthogonal) {
  if (!orthogonal)
    return gaussianMatrix(seed, 0, features, dim);
  std::vector<double> w(features * dim);
  std::vector<double> norms = gaussianMatrix(seed, 1 << 20, features, dim);
  for (int64_t block = 0; block * dim < features; ++block) {
    std::vector<double> g = gaussianMatrix(seed, 1 + block, dim, dim);
    // Modified Gram-Schmidt, rows in order.
    for (int64_t r = 0; r < dim; ++r) {
      double *row = &g[r * dim];
      for (int64_t p = 0; p < r; ++p) {
        const double *prev = &g[p * dim];
        double dot = 0;
        for (int64_t c = 0; c < dim; ++c)
          dot += row[c] * prev[c];
        for (int64_t c = 0; c < dim; ++c)
          row[c] -= dot * prev[c];
      }
      double n = 0;
      for (int64_t c = 0; c < dim; ++c)
        n += row[c] * row[c];
      n = std::sqrt(n);
      for (int64_t c = 0; c < dim; ++c)
        row[c] /= n;
    }
    for (int64_t r = 0; r < dim && block * dim + r < features; ++r) {
      int64_t outRow = block * dim + r;
      double scale = 0;
      for (int64_t c = 0; c < dim; ++c)
        scale += norms[outRow * dim + c] * norms[outRow * dim + c];
      scale = std::sqrt(scale);
      for (int64_t c = 0; c < dim; ++c)
        w[outRow * dim + c] = g[r * dim + c] * scale;
    }
  }
  return w;
}

std::vector<double> mlir::attn::lshRotation(uint64_t seed, int64_t round,
                                            int64_t dim, int64_t numBuckets) {
  return gaussianMatrix(seed, static_cast<uint64_t>(round), dim,
                        numBuckets / 2);
}
