//===- AttnToLinalg.h - Reference lowering of attn to linalg ----*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
#define ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace attn {
/// Adds the patterns lowering every user-level attn op to linalg on tensors.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);
} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
