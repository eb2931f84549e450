//===- InitAttn.cpp - Register the attn dialect and passes ----------------===//

#include "attn-opt/InitAttn.h"
#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<attn::AttnDialect>();
}

void attn::registerAttnPasses() {}
