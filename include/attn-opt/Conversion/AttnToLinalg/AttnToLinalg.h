//===- AttnToLinalg.h - Reference lowering of attn to linalg ----*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
#define ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace attn {
/// Adds the patterns lowering every attn op (user-level and internal) to
/// linalg on tensors.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);
/// The patterns for the internal ops alone.
void populateInternalOpsToLinalgPatterns(RewritePatternSet &patterns);
} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
