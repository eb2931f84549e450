//===- AttentionFeatures.h - What an attention uses, what code supports -*-===//
//
// One list of what each generator of code supports. An attn.attention uses
// features (AttentionFeatures.def: its optional operands, attributes,
// regions, result, types and shapes); `getFeatures` reads them off its
// problem view. Each generator (a fused kernel, the reference gradient, the
// sequence-parallel partitioner, ...) declares a `Capability`: the features
// it supports for each normalizer it takes and the pairs it does not take
// together. A generator asks `Capability::refusal` before it rewrites an op
// and prints the refusal's text, so every diagnostic and remark names the
// feature from the one list; attn-compile --capabilities prints the table
// the Python package and docs/Kernels.md are derived from.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTENTIONFEATURES_H
#define ATTN_DIALECT_ATTN_IR_ATTENTIONFEATURES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::attn {

struct AttentionProblem;
class MaskPatternAttrInterface;

/// A feature of attn.attention (AttentionFeatures.def).
enum class Feature : uint8_t {
#define ATTN_FEATURE(Name, spelling, phrase) Name,
#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.def"
};

/// The number of features.
constexpr unsigned kNumFeatures = 0
#define ATTN_FEATURE(Name, spelling, phrase) +1
#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.def"
    ;

/// What a feature is: an operand, an attribute, a normalizer, a pattern
/// kind, a region, or a type, shape or result.
enum class FeatureKind : uint8_t {
  Operand,
  Attribute,
  Normalizer,
  Pattern,
  Region,
  Shape
};

/// The spelling ("bias", "qk_norm_eps", "causal", "bf16"), the phrase of
/// diagnostics ("operand 'bias'") and the kind of `f`.
llvm::StringRef getFeatureSpelling(Feature f);
llvm::StringRef getFeaturePhrase(Feature f);
FeatureKind getFeatureKind(Feature f);
/// The feature spelled `spelling` of kind `kind`, if any.
std::optional<Feature> lookupFeature(FeatureKind kind,
                                     llvm::StringRef spelling);
/// "operand", "attribute", "normalizer", "pattern", "region", "shape".
llvm::StringRef stringifyFeatureKind(FeatureKind kind);

/// A set of features, iterated in the order of AttentionFeatures.def.
class FeatureSet {
public:
  FeatureSet() = default;
  FeatureSet(std::initializer_list<Feature> features) {
    for (Feature f : features)
      insert(f);
  }
  /// Every feature.
  static FeatureSet all() {
    FeatureSet s;
    s.bits.set();
    return s;
  }
  /// Every feature of kind `kind`.
  static FeatureSet ofKind(FeatureKind kind);

  void insert(Feature f) { bits.set(static_cast<unsigned>(f)); }
  void erase(Feature f) { bits.reset(static_cast<unsigned>(f)); }
  bool contains(Feature f) const { return bits.test(static_cast<unsigned>(f)); }
  bool empty() const { return bits.none(); }
  FeatureSet operator|(const FeatureSet &o) const {
    return FeatureSet(bits | o.bits);
  }
  FeatureSet operator&(const FeatureSet &o) const {
    return FeatureSet(bits & o.bits);
  }
  /// The features of this set that are not in `o`.
  FeatureSet operator-(const FeatureSet &o) const {
    return FeatureSet(bits & ~o.bits);
  }
  bool operator==(const FeatureSet &o) const { return bits == o.bits; }
  /// The features, in the list's order.
  std::vector<Feature> list() const;
  /// The first feature in the list's order (the set is not empty).
  Feature front() const;

private:
  explicit FeatureSet(std::bitset<kNumFeatures> bits) : bits(bits) {}
  std::bitset<kNumFeatures> bits;
};

/// The features `p` uses. Pattern kinds are those anywhere in the pattern
/// tree; `key_segments` counts when it is another value than `segments`;
/// the shapes: f16 or bf16 operands, a dynamic batch, a dynamic query or
/// key length, fewer key/value heads than query heads, static lengths
/// that differ; `lse` when the op returns the log-sum-exp.
FeatureSet getFeatures(const AttentionProblem &p);
/// The pattern kinds anywhere in the tree of `pattern` (none when null).
FeatureSet getPatternFeatures(MaskPatternAttrInterface pattern);

/// The features an attn.attention with `normalizer` may use at all (the
/// verifier refuses the others: kernel attention has no scores to bias,
/// cap, shift or mod, nor a log-sum-exp; sinks and the log-sum-exp are
/// softmax's; a projection is FAVOR+'s), the normalizer included.
FeatureSet getApplicableFeatures(Feature normalizer);

/// Groups of features generators share: the pattern kinds a kernel
/// evaluates in closed form at any position (no block tables, segment ids
/// or regions: causal, windows, global tokens, strides, Sparse
/// Transformer's fixed blocks, and their unions, intersections and per-head
/// lists); and what the linear form of kernelized attention keeps,
/// phi(Q) (phi(K)^T V) with prefix sums (no varlen batch, mask tensor or
/// region, no pattern but causal masks, documents and their intersection,
/// one segment-id operand): attn-reassociate and the linear-time gradient.
FeatureSet getClosedFormPatterns();
FeatureSet getLinearFormFeatures();

/// Why a generator leaves an op: a feature it does not support (with the
/// normalizer it was asked for, when that matters), or two it supports
/// only apart.
struct Refusal {
  Feature feature;
  /// The other feature of a pair it does not take together.
  std::optional<Feature> with;
  /// The op's normalizer, when the generator takes others than it: the
  /// refusal names it ("pattern #attn.window with kernelized attention").
  std::optional<Feature> normalizer;
  /// "operand 'bias'", "pattern #attn.window with kernelized attention",
  /// "operand 'sinks' with operand 'query_lengths'".
  std::string text() const;
};

/// What one generator of code supports.
struct Capability {
  /// A short name ("cpu-kernel"), what the tables print.
  llvm::StringRef name;
  /// The pass (or pipeline option) that runs the generator.
  llvm::StringRef pass;
  /// What it generates, in a few words.
  llvm::StringRef summary;
  /// For each normalizer it takes, the features it supports with it (the
  /// normalizer among them).
  std::vector<FeatureSet> profiles;
  /// Features it supports apart but not together.
  std::vector<std::pair<Feature, Feature>> conflicts;
  /// True for a generator of gradients (attn.attention_grad): a paged KV
  /// cache does not apply (its verifier refuses it).
  bool differentiates = false;

  /// The features that apply to an op of `normalizer` this generator
  /// rewrites (getApplicableFeatures, less what its op cannot have).
  FeatureSet getApplicable(Feature normalizer) const;

  /// Why it leaves an op that uses `features`, or std::nullopt if it
  /// takes it: the normalizer if no profile takes it, else the first
  /// feature (in the list's order) the profile lacks, else the first
  /// conflict.
  std::optional<Refusal> refusal(const FeatureSet &features) const;
  /// The profile of `normalizer`, or null.
  const FeatureSet *getProfile(Feature normalizer) const;
};

/// `c` as a generator of gradients (Capability::differentiates).
inline Capability forGradients(Capability c) {
  c.differentiates = true;
  return c;
}

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTENTIONFEATURES_H
