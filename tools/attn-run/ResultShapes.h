//===- ResultShapes.h - Sizes of values between attn-run's ops --*- C++ -*-===//
//
// attn-run sizes an entry's results from its arguments' shapes before it
// runs the entry. The attention ops give their results' shapes (attn-run's
// inferResults); this follows them through the ops around the attention
// that front ends write: casts, elementwise ops, destination-style ops
// (linalg) and their tensor.empty destinations, with the index arithmetic
// (tensor.dim, arith) that sizes them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_RESULTSHAPES_H
#define ATTN_RUN_RESULTSHAPES_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <vector>

namespace attn_run {

/// The tensor shapes and integer values known so far.
struct KnownSizes {
  llvm::DenseMap<mlir::Value, std::vector<int64_t>> shapes;
  llvm::DenseMap<mlir::Value, int64_t> integers;

  /// The shape of `v`: known, or its static type's.
  const std::vector<int64_t> *shapeOf(mlir::Value v);

private:
  std::vector<std::vector<int64_t>> staticShapes;
};

/// Records what `op` (not an attention op) tells of its results' shapes or
/// integer values, from what is known of its operands.
void propagateSizes(mlir::Operation *op, KnownSizes &known);

} // namespace attn_run

#endif // ATTN_RUN_RESULTSHAPES_H
