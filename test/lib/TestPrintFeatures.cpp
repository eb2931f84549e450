//===- TestPrintFeatures.cpp - Print the features of attn ops -------------===//
//
// `test-attn-print-features` remarks on every attn.attention with the
// features it uses (AttentionFeatures.h), as the capability tables key
// them: "features: normalizer:softmax, operand:bias, pattern:causal".
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct TestPrintFeaturesPass
    : public PassWrapper<TestPrintFeaturesPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintFeaturesPass)
  StringRef getArgument() const final { return "test-attn-print-features"; }
  StringRef getDescription() const final {
    return "Remark on the features of every attn.attention";
  }
  void runOnOperation() override {
    getOperation()->walk([](AttentionOp op) {
      std::string text;
      for (Feature f : op.getFeatures().list())
        text += (text.empty() ? " " : ", ") +
                stringifyFeatureKind(getFeatureKind(f)).str() + ":" +
                getFeatureSpelling(f).str();
      op.emitRemark() << "features:" << text;
    });
  }
};
} // namespace

namespace mlir::attn::test {
void registerTestPrintFeaturesPass() {
  PassRegistration<TestPrintFeaturesPass>();
}
} // namespace mlir::attn::test
