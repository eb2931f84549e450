// Parses and verifies an attn module with the installed dialect and passes
// (linked through AttnOpt::AttnRegistration).
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/InitAttn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>

int main() {
  mlir::DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  registry.insert<mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  const char *source = R"mlir(
func.func @f(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
)mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return 1;
  int ops = 0;
  module->walk([&](mlir::attn::AttentionOp) { ++ops; });
  std::printf("attn.attention verified: %d op\n", ops);
  return ops == 1 ? 0 : 1;
}
