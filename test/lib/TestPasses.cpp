//===- TestPasses.cpp - Register the attn test passes ---------------------===//

namespace mlir::attn::test {
void registerTestMaskLayoutPass();

void registerTestPasses() { registerTestMaskLayoutPass(); }
} // namespace mlir::attn::test
