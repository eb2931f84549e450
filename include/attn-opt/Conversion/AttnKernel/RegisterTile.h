//===- RegisterTile.h - The broadcast-FMA register tile ---------*- C++ -*-===//
//
// The register tile of the CPU kernels that multiply rows by vectors (the
// linear-attention products, FAVOR+'s projection, the LSH chunk kernels):
// `rows` x `ev` vector accumulators, per step one scalar of each row
// broadcast and `ev` vectors loaded.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNKERNEL_REGISTERTILE_H
#define ATTN_CONVERSION_ATTNKERNEL_REGISTERTILE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// acc[i * ev + g] += row(i, k) * vec(g, k) for k in [0, depth), i <
/// rows, g < ev, from `init` (rows x ev vectors of f32): one scf.for
/// carrying the accumulators. `row` returns an f32 scalar, `vec` a vector
/// of the accumulators' type.
SmallVector<Value> registerTile(ImplicitLocOpBuilder &b, int64_t rows,
                                int64_t ev, Value depth, ValueRange init,
                                function_ref<Value(int64_t, Value)> row,
                                function_ref<Value(int64_t, Value)> vec);

/// The vectors per row of a register tile: the largest divisor of
/// `vectors` whose `rows x EV` accumulators take at most half of
/// `registers`, at least 1.
int64_t tileVectors(int64_t vectors, int64_t rows, int64_t registers);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNKERNEL_REGISTERTILE_H
