//===- AttentionOperandsTest.cpp - The operand list against ODS -----------===//
//
// AttentionOperands.def (the operand enum and names of RuntimeErrors.h, which
// the host library shares without MLIR) must list attn.attention's operands
// in the order of its ODS arguments. The count is a static_assert in
// AttnOps.cpp; here every operand of an op that has all seventeen (one capture)
// is read through its ODS index (what the run-time size checks do) and through
// its ODS accessor, which must be the same value. The op's problem view
// (AttentionProblem.h) must give back every operand, and an op built from
// it must print the same.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// An attention with every optional operand present (and all different),
/// parsed from its custom form.
constexpr const char *kEveryOperand = R"mlir(
func.func @f(%q: tensor<1x4x8x16xf32>, %k: tensor<3x2x4x16xf32>,
             %v: tensor<3x2x4x16xf32>, %bias: tensor<1x4x8x8xf32>,
             %gate: tensor<1x4x8x16xf32>, %seg: tensor<1x8xi32>,
             %kseg: tensor<1x8xi32>, %proj: tensor<4x16xf32>,
             %lq: tensor<1xi32>, %lk: tensor<1xi32>, %cq: tensor<2xi32>,
             %ck: tensor<2xi32>, %mask: tensor<8x8xi1>, %slopes: tensor<4xf32>,
             %sinks: tensor<4xf32>, %pt: tensor<1x2xi32>,
             %doc: tensor<8xi32>) -> tensor<1x4x8x16xf32> {
  %o, %lse = attn.attention %q, %k, %v bias(%bias : tensor<1x4x8x8xf32>)
      gate(%gate : tensor<1x4x8x16xf32>) segments(%seg : tensor<1x8xi32>)
      key_segments(%kseg : tensor<1x8xi32>)
      projection(%proj : tensor<4x16xf32>)
      query_lengths(%lq : tensor<1xi32>) key_lengths(%lk : tensor<1xi32>)
      query_offsets(%cq : tensor<2xi32>) key_offsets(%ck : tensor<2xi32>)
      mask(%mask : tensor<8x8xi1>) alibi_slopes(%slopes : tensor<4xf32>)
      sinks(%sinks : tensor<4xf32>) page_table(%pt : tensor<1x2xi32>)
      captures(%doc : tensor<8xi32>)
      {normalizer = #attn.softmax, pattern = #attn.causal, scale = 0.5 : f32,
       qk_norm_eps = 1.0e-05 : f32, softcap = 30.0 : f32}
      : tensor<1x4x8x16xf32>, tensor<3x2x4x16xf32>, tensor<3x2x4x16xf32>
        -> tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xi32>):
        %x = tensor.extract %d[%i] : tensor<8xi32>
        %y = tensor.extract %d[%j] : tensor<8xi32>
        %same = arith.cmpi eq, %x, %y : i32
        attn.yield %same : i1
      }
  return %o : tensor<1x4x8x16xf32>
}
)mlir";

/// The first value of an operand group (a single or a variadic operand).
Value firstOf(Value v) { return v; }
Value firstOf(OperandRange r) { return r.front(); }

struct AttentionOperandsTest : ::testing::Test {
  AttentionOperandsTest() {
    context
        .loadDialect<AttnDialect, func::FuncDialect, tensor::TensorDialect>();
    // The op breaks several rules at once (offsets with lengths, a page
    // table with offsets): only its operands matter here.
    ParserConfig config(&context, /*verifyAfterParse=*/false);
    module = parseSourceString<ModuleOp>(kEveryOperand, config);
    module->walk([&](AttentionOp a) { op = a; });
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  AttentionOp op;
};

} // namespace

TEST_F(AttentionOperandsTest, EnumFollowsOds) {
  ASSERT_TRUE(op);
  ASSERT_EQ(op->getNumOperands(), static_cast<unsigned>(kNumAttentionOperands));
#define ATTN_OPERAND(Name, printedName)                                        \
  EXPECT_EQ(op.getODSOperands(k##Name##Operand).front(),                       \
            firstOf(op.get##Name()))                                           \
      << #Name;                                                                \
  EXPECT_EQ(op->getOperand(k##Name##Operand), firstOf(op.get##Name())) << #Name;
#include "attn-opt/Runtime/Host/AttentionOperands.def"
}

TEST_F(AttentionOperandsTest, NamesAreTheKeywords) {
  // The names run-time errors print are the keywords of the custom form.
  EXPECT_STREQ(attentionOperandName(kQuerySegmentsOperand), "segments");
  EXPECT_STREQ(attentionOperandName(kPageTableOperand), "page_table");
  EXPECT_STREQ(attentionOperandName(kNumAttentionOperands), "an operand");
}

TEST_F(AttentionOperandsTest, ProblemRebuildsTheOp) {
  ASSERT_TRUE(op);
  // Dimensions as the verifier would give them (it is not run here).
  AttentionDims dims{1, 4, 2, 8, 8, 16, 16};
  AttentionProblem p = op.getProblem(dims);
  EXPECT_EQ(p.query, op.getQuery());
  EXPECT_EQ(p.modifiers.bias, op.getBias());
  EXPECT_EQ(p.segments.key, op.getKeySegments());
  EXPECT_TRUE(p.segments.separateKeys);
  EXPECT_EQ(p.paging.pageSize, 4);
  EXPECT_EQ(p.scale, 0.5);
  EXPECT_TRUE(p.explicitScale);
  EXPECT_TRUE(p.masking.isBoolean());
  EXPECT_TRUE(p.results.lse);
  EXPECT_TRUE(p.regions.maskMod);
  EXPECT_FALSE(p.regions.scoreMod);
  ASSERT_EQ(p.regions.captures.size(), 1u);
  OpBuilder b(op);
  auto copy = AttentionOp::create(b, op.getLoc(), p);
  std::string a, c;
  llvm::raw_string_ostream as(a), cs(c);
  // (Local scopes: the regions' values are numbered from the op.)
  op->print(as, OpPrintingFlags().useLocalScope());
  copy->print(cs, OpPrintingFlags().useLocalScope());
  // The same op but for its results' names.
  EXPECT_EQ(a.substr(a.find('=')), c.substr(c.find('=')));
}
