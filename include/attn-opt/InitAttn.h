//===- InitAttn.h - Register the attn dialect and passes --------*- C++ -*-===//
//
// The one registration entry point shared by attn-opt, attn-run and the
// mlir-opt plugin, so that the tools cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITATTN_H
#define ATTN_INITATTN_H

namespace mlir {
class DialectRegistry;

namespace attn {
/// Adds the attn dialect (and the dialects its passes produce) to `registry`.
void registerAttnDialects(DialectRegistry &registry);
/// Registers every attn pass and pipeline with the global pass registry.
void registerAttnPasses();
} // namespace attn
} // namespace mlir

#endif // ATTN_INITATTN_H
