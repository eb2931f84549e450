//===- LaunchEffects.cpp - Memory effects of gpu.launch_func --------------===//

#include "attn-opt/GPU/LaunchEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
struct LaunchFuncEffects
    : public MemoryEffectOpInterface::ExternalModel<LaunchFuncEffects,
                                                    gpu::LaunchFuncOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    // A kernel may touch any memory it can reach (and, after gpu-to-llvm,
    // its buffers are plain pointers): never dead, never reordered.
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
  }
};
} // namespace

void mlir::attn::registerLaunchFuncEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncEffects>(*ctx);
  });
}
