//===- TestPasses.cpp - Register the attn test passes ---------------------===//

namespace mlir::attn::test {
void registerTestPrintBlockLayoutPass();
void registerTestPrintFeaturesPass();

void registerTestPasses() {
  registerTestPrintBlockLayoutPass();
  registerTestPrintFeaturesPass();
}
} // namespace mlir::attn::test
