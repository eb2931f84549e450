//===- TestPasses.cpp - Register the attn test passes ---------------------===//

namespace mlir::attn::test {
void registerTestPrintBlockLayoutPass();

void registerTestPasses() { registerTestPrintBlockLayoutPass(); }
} // namespace mlir::attn::test
