//===- Passes.h - attn dialect transformations ------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class RewritePatternSet;

namespace attn {

#define GEN_PASS_DECL
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"

/// attn.attention to its explicit steps (attn-decompose).
void populateDecomposePatterns(RewritePatternSet &patterns);

/// Bufferization of attn.exchange, attn.exchange_wait and attn.allreduce
/// (their tensor form into their buffer form).
void registerBufferizableCommunicationModels(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
