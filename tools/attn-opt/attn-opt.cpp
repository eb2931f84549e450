//===- attn-opt.cpp - The attn-opt driver ---------------------------------===//
//
// mlir-opt with every upstream dialect, extension and pass, plus the attn
// dialect, its passes, and the test aids (the GPU emulator, test passes).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Emulation/Passes.h"
#include "attn-opt/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::attn::test {
void registerTestPasses();
} // namespace mlir::attn::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  mlir::attn::registerAttnDialects(registry);
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnEmulation();
  mlir::attn::test::registerTestPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn-opt: an optimizing compiler for attention\n",
      registry));
}
