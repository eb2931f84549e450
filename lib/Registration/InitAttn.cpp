//===- InitAttn.cpp - Register the attn dialect and passes ----------------===//

#include "attn-opt/InitAttn.h"
#include "attn-opt/Conversion/Passes.h"
#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/GPU/LaunchEffects.h"
#include "attn-opt/GPU/Passes.h"
#include "attn-opt/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<attn::AttnDialect>();
  attn::registerLaunchFuncEffects(registry);
  attn::registerBufferizableCommunicationModels(registry);
}

void attn::registerAttnPasses() {
  attn::registerAttnTransformsPasses();
  attn::registerAttnConversionPasses();
  attn::registerAttnGPUPasses();
  attn::registerAttnPipelines();
}
