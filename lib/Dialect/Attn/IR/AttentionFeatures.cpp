//===- AttentionFeatures.cpp - What an attention uses, what code supports -===//

#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.h"

#include "attn-opt/Dialect/Attn/IR/AttentionProblem.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct FeatureInfo {
  StringLiteral spelling, phrase;
  FeatureKind kind;
};
} // namespace

static const FeatureInfo kFeatures[] = {
#define ATTN_OPERAND_FEATURE(Name, spelling)                                   \
  {spelling, "operand '" spelling "'", FeatureKind::Operand},
#define ATTN_ATTRIBUTE_FEATURE(Name, spelling)                                 \
  {spelling, "attribute '" spelling "'", FeatureKind::Attribute},
#define ATTN_NORMALIZER_FEATURE(Name, spelling, phrase)                        \
  {spelling, phrase, FeatureKind::Normalizer},
#define ATTN_PATTERN_FEATURE(Name, spelling)                                   \
  {spelling, "pattern #attn." spelling, FeatureKind::Pattern},
#define ATTN_REGION_FEATURE(Name, spelling)                                    \
  {spelling, "region '" spelling "'", FeatureKind::Region},
#define ATTN_SHAPE_FEATURE(Name, spelling, phrase)                             \
  {spelling, phrase, FeatureKind::Shape},
#define ATTN_FEATURE(Name, spelling, phrase)
#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.def"
};
static_assert(std::size(kFeatures) == kNumFeatures,
              "every feature has one kind");

StringRef mlir::attn::getFeatureSpelling(Feature f) {
  return kFeatures[static_cast<unsigned>(f)].spelling;
}
StringRef mlir::attn::getFeaturePhrase(Feature f) {
  return kFeatures[static_cast<unsigned>(f)].phrase;
}
FeatureKind mlir::attn::getFeatureKind(Feature f) {
  return kFeatures[static_cast<unsigned>(f)].kind;
}

std::optional<Feature> mlir::attn::lookupFeature(FeatureKind kind,
                                                 StringRef spelling) {
  for (unsigned i = 0; i < kNumFeatures; ++i)
    if (kFeatures[i].kind == kind && kFeatures[i].spelling == spelling)
      return static_cast<Feature>(i);
  return std::nullopt;
}

StringRef mlir::attn::stringifyFeatureKind(FeatureKind kind) {
  switch (kind) {
  case FeatureKind::Operand:
    return "operand";
  case FeatureKind::Attribute:
    return "attribute";
  case FeatureKind::Normalizer:
    return "normalizer";
  case FeatureKind::Pattern:
    return "pattern";
  case FeatureKind::Region:
    return "region";
  case FeatureKind::Shape:
    return "shape";
  }
  llvm_unreachable("unknown feature kind");
}

FeatureSet FeatureSet::ofKind(FeatureKind kind) {
  FeatureSet s;
  for (unsigned i = 0; i < kNumFeatures; ++i)
    if (kFeatures[i].kind == kind)
      s.insert(static_cast<Feature>(i));
  return s;
}

std::vector<Feature> FeatureSet::list() const {
  std::vector<Feature> out;
  for (unsigned i = 0; i < kNumFeatures; ++i)
    if (bits.test(i))
      out.push_back(static_cast<Feature>(i));
  return out;
}

Feature FeatureSet::front() const {
  for (unsigned i = 0; i < kNumFeatures; ++i)
    if (bits.test(i))
      return static_cast<Feature>(i);
  llvm_unreachable("front() of an empty feature set");
}

//===----------------------------------------------------------------------===//
// The features of a problem
//===----------------------------------------------------------------------===//

/// The feature of kind `kind` named by an attribute's mnemonic
/// (`attn.window` gives the pattern feature `window`): the list names every
/// normalizer and pattern attribute of the dialect (unittests check it).
static std::optional<Feature> featureOfAttr(Attribute attr, FeatureKind kind) {
  StringRef name = attr.getAbstractAttribute().getName();
  name.consume_front("attn.");
  return lookupFeature(kind, name);
}

static void addPatternFeatures(MaskPatternAttrInterface pattern,
                               FeatureSet &s) {
  if (std::optional<Feature> f = featureOfAttr(pattern, FeatureKind::Pattern))
    s.insert(*f);
  for (MaskPatternAttrInterface sub : pattern.getSubPatterns())
    addPatternFeatures(sub, s);
}

FeatureSet mlir::attn::getPatternFeatures(MaskPatternAttrInterface pattern) {
  FeatureSet s;
  if (pattern)
    addPatternFeatures(pattern, s);
  return s;
}

FeatureSet mlir::attn::getFeatures(const AttentionProblem &p) {
  FeatureSet s;
  // Operands.
  auto operand = [&](Value v, Feature f) {
    if (v)
      s.insert(f);
  };
  operand(p.modifiers.bias, Feature::Bias);
  operand(p.modifiers.gate, Feature::Gate);
  operand(p.segments.query, Feature::QuerySegments);
  if (p.segments.separateKeys && p.segments.key != p.segments.query)
    s.insert(Feature::KeySegments);
  operand(p.projection, Feature::Projection);
  operand(p.sequences.queryLengths, Feature::QueryLengths);
  operand(p.sequences.keyLengths, Feature::KeyLengths);
  operand(p.sequences.queryOffsets, Feature::QueryOffsets);
  operand(p.sequences.keyOffsets, Feature::KeyOffsets);
  operand(p.masking.tensor, Feature::Mask);
  operand(p.modifiers.alibiSlopes, Feature::AlibiSlopes);
  operand(p.modifiers.sinks, Feature::Sinks);
  operand(p.paging.pageTable, Feature::PageTable);
  if (!p.regions.captures.empty())
    s.insert(Feature::Captures);
  // Attributes.
  if (p.explicitScale)
    s.insert(Feature::Scale);
  if (p.qkNormEps)
    s.insert(Feature::QkNormEps);
  if (p.modifiers.softcap)
    s.insert(Feature::Softcap);
  if (p.masking.layout)
    s.insert(Feature::Layout);
  if (p.normalizer)
    if (std::optional<Feature> f =
            featureOfAttr(p.normalizer, FeatureKind::Normalizer))
      s.insert(*f);
  s = s | getPatternFeatures(p.masking.pattern);
  // Regions.
  if (p.regions.maskMod)
    s.insert(Feature::MaskMod);
  if (p.regions.scoreMod)
    s.insert(Feature::ScoreMod);
  // Types, shapes and results.
  if (p.elementType && p.elementType.isF16())
    s.insert(Feature::F16);
  if (p.elementType && p.elementType.isBF16())
    s.insert(Feature::Bf16);
  const AttentionDims &d = p.dims;
  if (ShapedType::isDynamic(d.batch))
    s.insert(Feature::DynamicBatch);
  if (ShapedType::isDynamic(d.queryLen) || ShapedType::isDynamic(d.keyLen))
    s.insert(Feature::DynamicLengths);
  else if (d.queryLen != d.keyLen)
    s.insert(Feature::UnequalLengths);
  if (d.kvHeads > 0 && d.kvHeads < d.queryHeads)
    s.insert(Feature::GroupedHeads);
  if (p.results.lse)
    s.insert(Feature::Lse);
  return s;
}

FeatureSet mlir::attn::getApplicableFeatures(Feature normalizer) {
  FeatureSet normalizers = FeatureSet::ofKind(FeatureKind::Normalizer);
  FeatureSet s = FeatureSet::all() - normalizers;
  s.insert(normalizer);
  switch (normalizer) {
  case Feature::Kernel:
    return s - FeatureSet{Feature::Bias,   Feature::AlibiSlopes,
                          Feature::Sinks,  Feature::Softcap,
                          Feature::Layout, Feature::ScoreMod,
                          Feature::Lse};
  case Feature::Pointwise:
    return s - FeatureSet{Feature::Projection, Feature::Sinks, Feature::Lse};
  default:
    return s - FeatureSet{Feature::Projection};
  }
}

FeatureSet mlir::attn::getClosedFormPatterns() {
  return {Feature::PatternCausal,  Feature::PatternWindow,
          Feature::PatternDilated, Feature::PatternGlobal,
          Feature::PatternStrided, Feature::PatternFixed,
          Feature::PatternUnion,   Feature::PatternIntersect,
          Feature::PatternPerHead};
}

FeatureSet mlir::attn::getLinearFormFeatures() {
  FeatureSet patterns =
      FeatureSet::ofKind(FeatureKind::Pattern) -
      FeatureSet{Feature::PatternCausal, Feature::PatternSegments,
                 Feature::PatternIntersect};
  return getApplicableFeatures(Feature::Kernel) - patterns -
         FeatureSet{
             Feature::QueryLengths, Feature::KeyLengths,  Feature::QueryOffsets,
             Feature::KeyOffsets,   Feature::Mask,        Feature::MaskMod,
             Feature::Captures,     Feature::KeySegments, Feature::PageTable};
}

//===----------------------------------------------------------------------===//
// Capabilities
//===----------------------------------------------------------------------===//

std::string Refusal::text() const {
  std::string s = getFeaturePhrase(feature).str();
  if (with)
    s += " with " + getFeaturePhrase(*with).str();
  else if (normalizer && *normalizer != feature)
    s += " with " + getFeaturePhrase(*normalizer).str();
  return s;
}

FeatureSet Capability::getApplicable(Feature normalizer) const {
  FeatureSet s = getApplicableFeatures(normalizer);
  if (differentiates)
    s.erase(Feature::PageTable);
  return s;
}

const FeatureSet *Capability::getProfile(Feature normalizer) const {
  for (const FeatureSet &profile : profiles)
    if (profile.contains(normalizer))
      return &profile;
  return nullptr;
}

std::optional<Refusal> Capability::refusal(const FeatureSet &features) const {
  FeatureSet normalizers =
      features & FeatureSet::ofKind(FeatureKind::Normalizer);
  if (normalizers.empty())
    return std::nullopt;
  Feature normalizer = normalizers.front();
  const FeatureSet *profile = getProfile(normalizer);
  if (!profile)
    return Refusal{normalizer, std::nullopt, std::nullopt};
  FeatureSet missing = features - *profile;
  if (!missing.empty()) {
    // Named with the normalizer when another normalizer would take it.
    Feature f = missing.front();
    std::optional<Feature> named;
    for (const FeatureSet &other : profiles)
      if (other.contains(f))
        named = normalizer;
    return Refusal{f, std::nullopt, named};
  }
  for (auto [a, b] : conflicts)
    if (features.contains(a) && features.contains(b))
      return Refusal{a, b, std::nullopt};
  return std::nullopt;
}
