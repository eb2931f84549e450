//===- AttentionFeaturesTest.cpp - The feature list against the op -------===//
//
// AttentionFeatures.def must name everything attn.attention has: each
// optional operand (AttentionOperands.def), each inherent attribute of its
// ODS definition (the normalizer and the pattern by kind: every normalizer
// and pattern attribute of the dialect, from its generated attribute list),
// its regions. getFeatures reads them off an op, and Capability::refusal
// names the first feature a generator lacks, with its normalizer when
// another normalizer would take it, then the pairs it takes only apart.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <tuple>
#include <type_traits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Every attribute class of the dialect (its ODS-generated list).
using AllAttrs = std::tuple<
#define GET_ATTRDEF_LIST
#include "attn-opt/Dialect/Attn/IR/AttnAttrs.cpp.inc"
    >;

/// The mnemonics of the attribute classes implementing `Interface`.
template <template <typename> class Trait, typename... Ts>
std::vector<std::string> mnemonicsWith(std::tuple<Ts...> *) {
  std::vector<std::string> out;
  (
      [&] {
        if constexpr (std::is_base_of_v<Trait<Ts>, Ts>)
          out.push_back(Ts::getMnemonic().str());
      }(),
      ...);
  return out;
}

} // namespace

TEST(AttentionFeatures, EveryOptionalOperandIsAFeature) {
#define ATTN_REQUIRED_OPERAND(Name, printedName)                               \
  EXPECT_FALSE(lookupFeature(FeatureKind::Operand, printedName)) << #Name;
#define ATTN_OPTIONAL_OPERAND(Name, printedName)                               \
  EXPECT_EQ(lookupFeature(FeatureKind::Operand, printedName), Feature::Name)   \
      << #Name;
#include "attn-opt/Runtime/Host/AttentionOperands.def"
}

TEST(AttentionFeatures, EveryAttributeIsAFeature) {
  MLIRContext context;
  context.loadDialect<AttnDialect>();
  for (StringRef name : AttentionOp::getAttributeNames()) {
    if (name.ends_with("SegmentSizes"))
      continue;
    if (name == "normalizer" || name == "pattern")
      continue; // by kind, below
    EXPECT_TRUE(lookupFeature(FeatureKind::Attribute, name)) << name.str();
  }
  auto *all = static_cast<AllAttrs *>(nullptr);
  std::vector<std::string> patterns =
      mnemonicsWith<MaskPatternAttrInterface::Trait>(all);
  std::vector<std::string> normalizers =
      mnemonicsWith<NormalizerAttrInterface::Trait>(all);
  EXPECT_EQ(patterns.size(), 12u);
  EXPECT_EQ(normalizers.size(), 3u);
  for (const std::string &m : patterns)
    EXPECT_TRUE(lookupFeature(FeatureKind::Pattern, m)) << m;
  for (const std::string &m : normalizers)
    EXPECT_TRUE(lookupFeature(FeatureKind::Normalizer, m)) << m;
  // And the list names nothing else of those kinds.
  EXPECT_EQ(FeatureSet::ofKind(FeatureKind::Pattern).list().size(),
            patterns.size());
  EXPECT_EQ(FeatureSet::ofKind(FeatureKind::Normalizer).list().size(),
            normalizers.size());
  EXPECT_TRUE(lookupFeature(FeatureKind::Region, "mask_mod"));
  EXPECT_TRUE(lookupFeature(FeatureKind::Region, "score_mod"));
}

TEST(AttentionFeatures, SpellingsAndPhrases) {
  EXPECT_EQ(getFeaturePhrase(Feature::Bias), "operand 'bias'");
  EXPECT_EQ(getFeaturePhrase(Feature::QkNormEps), "attribute 'qk_norm_eps'");
  EXPECT_EQ(getFeaturePhrase(Feature::PatternPerHead),
            "pattern #attn.per_head");
  EXPECT_EQ(getFeaturePhrase(Feature::Kernel), "kernelized attention");
  EXPECT_EQ(getFeatureSpelling(Feature::QuerySegments), "segments");
  EXPECT_EQ(getFeatureKind(Feature::Bf16), FeatureKind::Shape);
  // Keys are unique within a kind.
  for (Feature f : FeatureSet::all().list())
    EXPECT_EQ(lookupFeature(getFeatureKind(f), getFeatureSpelling(f)), f);
}

namespace {
constexpr const char *kOps = R"mlir(
func.func @f(%q: tensor<2x4x9x8xbf16>, %k: tensor<2x2x9x8xbf16>,
             %v: tensor<2x2x9x8xbf16>, %bias: tensor<1x4x9x9xbf16>,
             %ids: tensor<2x9xi32>) -> tensor<2x4x9x8xbf16> {
  %0 = attn.attention %q, %k, %v bias(%bias : tensor<1x4x9x9xbf16>)
      segments(%ids : tensor<2x9xi32>) key_segments(%ids : tensor<2x9xi32>)
      {normalizer = #attn.softmax,
       pattern = #attn.union<[#attn.causal, #attn.intersect<[
                   #attn.window<before = 2, after = 0>, #attn.segments]>]>}
      : tensor<2x4x9x8xbf16>, tensor<2x2x9x8xbf16>, tensor<2x2x9x8xbf16>
        -> tensor<2x4x9x8xbf16>
  return %0 : tensor<2x4x9x8xbf16>
}
func.func @g(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x5x8xf32>,
             %v: tensor<?x2x5x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<relu>,
       scale = 0.5 : f32}
      : tensor<?x2x?x8xf32>, tensor<?x2x5x8xf32>, tensor<?x2x5x8xf32>
        -> tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}
)mlir";

struct FeaturesOfOps : ::testing::Test {
  FeaturesOfOps() {
    context.loadDialect<AttnDialect, func::FuncDialect, tensor::TensorDialect,
                        arith::ArithDialect>();
    module = parseSourceString<ModuleOp>(kOps, &context);
    module->walk([&](AttentionOp a) { ops.push_back(a); });
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<AttentionOp> ops;
};
} // namespace

TEST_F(FeaturesOfOps, ReadOffTheProblem) {
  ASSERT_EQ(ops.size(), 2u);
  // One ids value for queries and keys: no key_segments of its own.
  EXPECT_EQ(ops[0].getFeatures(),
            (FeatureSet{Feature::Bias, Feature::QuerySegments, Feature::Softmax,
                        Feature::PatternCausal, Feature::PatternWindow,
                        Feature::PatternSegments, Feature::PatternUnion,
                        Feature::PatternIntersect, Feature::Bf16,
                        Feature::GroupedHeads}));
  EXPECT_EQ(ops[1].getFeatures(),
            (FeatureSet{Feature::Scale, Feature::Kernel, Feature::DynamicBatch,
                        Feature::DynamicLengths}));
}

TEST(Capabilities, Refusals) {
  FeatureSet shared = {Feature::Scale, Feature::PatternCausal,
                       Feature::DynamicLengths};
  Capability c{"test",
               "test",
               "a generator for the test",
               {shared | FeatureSet{Feature::Softmax, Feature::Sinks},
                shared | FeatureSet{Feature::Kernel}},
               {{Feature::PatternCausal, Feature::DynamicLengths}}};
  // Taken.
  EXPECT_FALSE(c.refusal({Feature::Softmax, Feature::Scale}));
  // A normalizer it does not take.
  std::optional<Refusal> r = c.refusal({Feature::Pointwise, Feature::Scale});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text(), "pointwise attention");
  // The first missing feature in the list's order.
  r = c.refusal({Feature::Softmax, Feature::Bf16, Feature::Bias});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text(), "operand 'bias'");
  // Named with the normalizer when another one would take it.
  r = c.refusal({Feature::Kernel, Feature::Sinks});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text(), "operand 'sinks' with kernelized attention");
  // Supported apart, not together.
  r = c.refusal(
      {Feature::Kernel, Feature::PatternCausal, Feature::DynamicLengths});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text(), "pattern #attn.causal with dynamic lengths");
}

TEST(Capabilities, Applicable) {
  // What the verifier refuses per normalizer.
  EXPECT_FALSE(getApplicableFeatures(Feature::Kernel).contains(Feature::Bias));
  EXPECT_FALSE(
      getApplicableFeatures(Feature::Pointwise).contains(Feature::Lse));
  EXPECT_TRUE(getApplicableFeatures(Feature::Softmax).contains(Feature::Sinks));
  EXPECT_FALSE(
      getApplicableFeatures(Feature::Softmax).contains(Feature::Kernel));
}
