//===- EmulationPipeline.cpp - attn-emulate-gpu-pipeline ------------------===//

#include "attn-opt/Emulation/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::attn {
#define GEN_PASS_REGISTRATION
#include "attn-opt/Emulation/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildEmulateGpuPipeline(OpPassManager &pm,
                                         const GpuKernelsOptions &options) {
  buildGpuKernelsPipeline(pm, options.config());
  pm.addPass(createAttnEmulateGpu());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createAttnMathApproximation());
  addCpuToLLVMPasses(pm);
}

void mlir::attn::registerAttnEmulation() {
  registerAttnEmulationPasses();
  PassPipelineRegistration<GpuKernelsOptions>(
      "attn-emulate-gpu-pipeline",
      "attn-lower-to-nvvm-pipeline's GPU kernels run on the CPU by "
      "attn-emulate-gpu, lowered to the LLVM dialect for the host: the GPU "
      "path checked without a GPU",
      buildEmulateGpuPipeline);
}
