// Calls the kernels of kernels.mlir (compiled ahead of time into
// attention_kernels, header kernels.h) on its own inputs and compares them
// with a plain loop reference. Exits 0 only if they agree.
#include "kernels.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {
constexpr int64_t kHeads = 8, kDim = 64;

/// Softmax attention of one batch of [heads, L, 64] tensors where query i
/// sees keys max(0, i - before) .. i.
std::vector<float> reference(const std::vector<float> &q,
                             const std::vector<float> &k,
                             const std::vector<float> &v, int64_t batch,
                             int64_t length, int64_t before) {
  std::vector<float> out(q.size());
  std::vector<double> s(length);
  double scale = 1.0 / std::sqrt(double(kDim));
  for (int64_t bh = 0; bh < batch * kHeads; ++bh)
    for (int64_t i = 0; i < length; ++i) {
      int64_t lo = std::max<int64_t>(0, i - before);
      const float *qi = &q[(bh * length + i) * kDim];
      double m = -INFINITY, sum = 0;
      for (int64_t j = lo; j <= i; ++j) {
        const float *kj = &k[(bh * length + j) * kDim];
        double dot = 0;
        for (int64_t c = 0; c < kDim; ++c)
          dot += double(qi[c]) * kj[c];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      for (int64_t j = lo; j <= i; ++j)
        sum += std::exp(s[j] - m);
      for (int64_t c = 0; c < kDim; ++c) {
        double acc = 0;
        for (int64_t j = lo; j <= i; ++j)
          acc += std::exp(s[j] - m) / sum * v[(bh * length + j) * kDim + c];
        out[(bh * length + i) * kDim + c] = float(acc);
      }
    }
  return out;
}

bool agree(const char *what, const std::vector<float> &got,
           const std::vector<float> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= 1e-4 + 1e-4 * std::fabs(want[i]))) {
      std::printf("%s: element %zu is %g, expected %g\n", what, i, got[i],
                  want[i]);
      return false;
    }
    worst = std::max(worst, err);
  }
  std::printf("%s: %zu values agree (max error %.2g)\n", what, got.size(),
              worst);
  return true;
}
} // namespace

int main() {
  std::mt19937 gen(42);
  std::normal_distribution<float> normal;
  bool ok = true;
  // One compiled library, several batch sizes and lengths.
  for (auto [batch, length] : {std::pair<int64_t, int64_t>{1, 100}, {2, 257}}) {
    size_t n = size_t(batch * kHeads * length * kDim);
    std::vector<float> q(n), k(n), v(n), out(n);
    for (auto *t : {&q, &k, &v})
      for (float &x : *t)
        x = normal(gen);
    const int64_t shape[4] = {batch, kHeads, length, kDim};

    if (kernels_causal(q.data(), shape, k.data(), shape, v.data(), shape,
                       out.data(), shape) != ATTN_OPT_OK) {
      std::printf("causal failed: %s\n", kernels_last_error());
      return 1;
    }
    ok &= agree("causal", out, reference(q, k, v, batch, length, length));

    if (kernels_sliding_window(q.data(), shape, k.data(), shape, v.data(),
                               shape, out.data(), shape) != ATTN_OPT_OK) {
      std::printf("sliding_window failed: %s\n", kernels_last_error());
      return 1;
    }
    ok &= agree("sliding_window", out, reference(q, k, v, batch, length, 32));
  }
  // A wrong size is an error status with a message, not a crash.
  std::vector<float> small(kHeads * 4 * 32);
  const int64_t bad[4] = {1, kHeads, 4, 32};
  int status = kernels_causal(small.data(), bad, small.data(), bad,
                              small.data(), bad, small.data(), bad);
  std::printf("wrong head dimension: status %d: %s\n", status,
              kernels_last_error());
  ok &= status == ATTN_OPT_ERROR_SHAPE;
  std::printf(ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}
