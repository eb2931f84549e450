//===- attn-plugin.cpp - The attn dialect and passes as an mlir-opt plugin ===//
//
// Load into stock mlir-opt with
//   mlir-opt --load-dialect-plugin=libAttnPlugin.so \
//            --load-pass-plugin=libAttnPlugin.so
// Both entry points call the same registration functions as attn-opt.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

/// Dialect plugin entry point: the attn dialect (and its passes, so a single
/// --load-dialect-plugin is enough).
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Attn", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            attn::registerAttnDialects(*registry);
            attn::registerAttnPasses();
          }};
}

/// Pass plugin entry point: the attn passes and pipelines.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnPasses", LLVM_VERSION_STRING,
          []() { attn::registerAttnPasses(); }};
}
