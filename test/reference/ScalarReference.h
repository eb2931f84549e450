//===- ScalarReference.h - Independent scalar reference ---------*- C++ -*-===//
//
// A plain, loop-by-loop double-precision implementation of every attn op,
// written from docs/Semantics.md and the op descriptions, sharing no code
// with the compiler except the documented seeded generators
// (attn-opt/Support/Random.h, which define what a seed means). The
// integration tests compare what attn-run computes against it.
//
// The gradients of attn.attention (attentionGrad) come from reverse-mode
// automatic differentiation of the same scalar code, so that every variant
// it supports has gradients without a second description of the op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_REFERENCE_SCALARREFERENCE_H
#define ATTN_TEST_REFERENCE_SCALARREFERENCE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ref {

/// A dense row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> shape);
  int64_t size() const;
  int64_t dim(int i) const { return shape[i]; }
  double &at(std::initializer_list<int64_t> idx);
  double at(std::initializer_list<int64_t> idx) const;
};

/// A mask pattern, evaluated element by element.
struct Pattern {
  enum Kind {
    Causal,
    Window,
    Dilated,
    Global,
    Strided,
    Fixed,
    Random,
    Block,
    Segments,
    Union,
    Intersect,
    PerHead
  } kind;
  int64_t a = 0, b = 0, c = 0;
  uint64_t seed = 0;
  std::vector<int64_t> tokens;
  std::vector<std::string> layout;
  std::vector<Pattern> parts;
};

/// Whether query `q` (index) of head `h` may see key `k`, for `lq` queries
/// and `lk` keys in batch `b`.
bool allowed(const Pattern &p, int64_t h, int64_t q, int64_t k, int64_t lq,
             int64_t lk, int64_t b, const Tensor *segQ, const Tensor *segK);

struct AttentionSpec {
  enum class Normalizer { Softmax, Pointwise, Kernel } normalizer;
  std::string fn;         // pointwise h
  double alpha = 1.0;     // pointwise
  std::string featureMap; // kernel
  int64_t features = 0;
  bool orthogonal = false;
  uint64_t seed = 0;
  double eps = 0.0;
  std::optional<double> scale;
  std::optional<double> qkNormEps;
  std::optional<Pattern> pattern;
  const Tensor *bias = nullptr, *gate = nullptr, *segQ = nullptr,
               *segK = nullptr, *projection = nullptr;
  /// Varlen batches: per-sequence lengths (padded, `B` entries) or
  /// cumulative offsets (packed, `N + 1` entries), as in docs/Semantics.md.
  const Tensor *queryLengths = nullptr, *keyLengths = nullptr,
               *queryOffsets = nullptr, *keyOffsets = nullptr;
  /// The mask tensor (`Lq x Lk` or `{1 or B} x {1 or Hq} x Lq x Lk`):
  /// boolean (0 / 1) or additive.
  const Tensor *mask = nullptr;
  bool maskIsBool = false;
  /// Score modifiers: `cap * tanh(s / cap)`, ALiBi slopes and attention
  /// sinks (`Hq` entries each).
  std::optional<double> softcap;
  const Tensor *alibiSlopes = nullptr, *sinks = nullptr;
  /// A paged KV cache's page table (`B x P_max`): k and v are then pools
  /// `pages x Hkv x page x D`.
  const Tensor *pageTable = nullptr;
  /// attn.attention's regions (FlexAttention's mask_mod and score_mod):
  /// whether query `q` of head `h` of batch row `b` may see key `k`
  /// (positions within the sequence), and the modified score with its
  /// derivative with respect to the score, `(f(s), f'(s))`, applied after
  /// soft-capping. attn-ref interprets the regions' IR.
  std::function<bool(int64_t b, int64_t h, int64_t q, int64_t k)> maskMod;
  std::function<std::pair<double, double>(double s, int64_t b, int64_t h,
                                          int64_t q, int64_t k)>
      scoreMod;
  /// The tensors the regions capture, and, for the gradients of the
  /// floating-point ones, the score region's reads at one score: the
  /// capture, the element (row-major) and the partial derivative of the
  /// region's result with respect to it.
  std::vector<const Tensor *> captures;
  struct CaptureRead {
    size_t capture;
    int64_t element;
    double partial;
  };
  std::function<std::vector<CaptureRead>(double s, int64_t b, int64_t h,
                                         int64_t q, int64_t k)>
      scoreModReads;
};

/// attn.attention; with `lse` (softmax) also its log-sum-exp result,
/// `B x Hq x Lq` (-inf for a row with no allowed key and no sink).
Tensor attention(const Tensor &q, const Tensor &k, const Tensor &v,
                 const AttentionSpec &spec, Tensor *lse = nullptr);

/// The gradients of attn.attention: the vector-Jacobian product with the
/// cotangents of its results.
struct AttentionGrads {
  /// Shaped like q, k and v.
  Tensor query, key, value;
  /// Shaped like spec.bias, spec.gate, spec.sinks, spec.alibiSlopes and
  /// spec.projection when they are set (broadcast bias dimensions summed),
  /// empty otherwise.
  Tensor bias, gate, sinks, alibiSlopes, projection;
  /// Shaped like spec.captures, with spec.scoreModReads (zeros for what
  /// the score region does not read).
  std::vector<Tensor> captures;
};

/// Gradients of attn.attention (the vector-Jacobian product): given the
/// cotangent dOut of the output (`B x Hq x Lq x Dv`) and optionally dLse of
/// the log-sum-exp (`B x Hq x Lq`), the gradients of query, key, value and of
/// the differentiable optional operands present in `spec` (bias, gate,
/// sinks; empty tensors otherwise). Rows whose log-sum-exp is -inf (no
/// allowed key and no sink) take nothing from dLse; rows with no allowed key
/// give zero gradients. Computed by reverse-mode automatic differentiation of
/// attention() in double precision. A paged KV cache (spec.pageTable) is not
/// differentiated: it aborts.
AttentionGrads attentionGrad(const Tensor &q, const Tensor &k, const Tensor &v,
                             const AttentionSpec &spec, const Tensor &dOut,
                             const Tensor *dLse = nullptr);

Tensor lowrankAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                        const Tensor &e, const Tensor &f,
                        std::optional<double> scale);

struct LshSpec {
  int64_t hashes, buckets, chunk;
  uint64_t seed;
  bool causal;
  std::optional<double> scale;
};
Tensor lshAttention(const Tensor &qk, const Tensor &v, const LshSpec &spec);

Tensor relativeAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                         const Tensor &posEmb, const Tensor &u,
                         const Tensor &vb, const Tensor *memK,
                         const Tensor *memV, std::optional<double> scale);

} // namespace ref

#endif // ATTN_TEST_REFERENCE_SCALARREFERENCE_H
