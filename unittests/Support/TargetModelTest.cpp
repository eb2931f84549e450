//===- TargetModelTest.cpp - Tests of the target model's choices ----------===//
//
// Which CPUs get bf16 dot products of pairs (TargetModel::bf16DotFor):
// those whose vdpbf16ps issues at the FMA rate (AMD Zen 4 and later), not
// Intel's, where it runs at half the FMAs' multiply-adds or less.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Support/TargetModel.h"

#include "gtest/gtest.h"

using namespace mlir::attn;
using Bf16Dot = TargetModel::Bf16Dot;

TEST(TargetModelTest, Bf16DotsOnZen4AndLater) {
  EXPECT_EQ(TargetModel::bf16DotFor("znver4", true), Bf16Dot::Native);
  EXPECT_EQ(TargetModel::bf16DotFor("znver5", true), Bf16Dot::Native);
  EXPECT_EQ(TargetModel::bf16DotFor("znver12", true), Bf16Dot::Native);
  // Without AVX512_BF16 (a feature mask that turned it off) nothing pays.
  EXPECT_EQ(TargetModel::bf16DotFor("znver5", false), Bf16Dot::None);
}

TEST(TargetModelTest, NoBf16DotsElsewhere) {
  for (const char *cpu :
       {"cooperlake", "sapphirerapids", "emeraldrapids", "graniterapids",
        "znver3", "znver", "znverx", "znver4x", "x86-64-v4", ""})
    EXPECT_EQ(TargetModel::bf16DotFor(cpu, true), Bf16Dot::None) << cpu;
}

TEST(TargetModelTest, ParsesTheBf16DotOption) {
  EXPECT_EQ(TargetModel::parseBf16Dot("none"), Bf16Dot::None);
  EXPECT_EQ(TargetModel::parseBf16Dot("native"), Bf16Dot::Native);
  EXPECT_EQ(TargetModel::parseBf16Dot("emulated"), Bf16Dot::Emulated);
  EXPECT_FALSE(TargetModel::parseBf16Dot("auto").has_value());
}
