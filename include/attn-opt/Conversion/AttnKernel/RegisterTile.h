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

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// acc[i * ev + g] += row(i, k) * vec(g, k) for k in [0, depth), i <
/// rows, g < ev, from `init` (rows x ev vectors of f32): one scf.for
/// carrying the accumulators. `row` returns an f32 scalar, `vec` a vector
/// of the accumulators' type. With `zeroAddsNothing` (attention weights
/// times values where some weights are masked), a row(i, k) of exactly 0
/// adds nothing, even where vec(g, k) holds an inf or a NaN.
SmallVector<Value> registerTile(ImplicitLocOpBuilder &b, int64_t rows,
                                int64_t ev, Value depth, ValueRange init,
                                function_ref<Value(int64_t, Value)> row,
                                function_ref<Value(int64_t, Value)> vec,
                                bool zeroAddsNothing = false);

/// Where attention weights `w` (a scalar or a vector) are exactly 0.
Value isZeroWeight(ImplicitLocOpBuilder &b, Value w);

/// `v` with 0 where `zero` (isZeroWeight of the weights multiplying it)
/// holds: in a partially masked block a masked key's weight is 0, and its
/// value must add nothing to the row, even an inf or NaN (0 x NaN is NaN).
Value dropValue(ImplicitLocOpBuilder &b, Value zero, Value v);

/// The vectors per row of a register tile: the largest divisor of
/// `vectors` whose `rows x EV` accumulators are at most `accumulators`
/// registers, at least 1.
int64_t tileVectors(int64_t vectors, int64_t rows, int64_t accumulators);

/// The sum of the lanes of an f32 vector, reassociated: a tree of
/// shuffles and vector adds (log2(lanes) steps). vector.reduction without
/// `reassoc` is an ordered sum, one dependent scalar add per lane.
Value sumLanes(ImplicitLocOpBuilder &b, Value vector);

/// The loop and vector shorthands of the CPU kernel generators built from
/// register tiles (attn-linear-kernels, attn-lsh-kernels): constants,
/// index arithmetic, loops (scf.parallel / scf.for) and f32 vectors of the
/// target's lanes.
class VectorLoops : public KernelArith {
public:
  VectorLoops(ImplicitLocOpBuilder &b, int64_t lanes, int64_t registers);

  int64_t lanes, registers;
  /// vector<lanes x f32>.
  VectorType vf;

  // Constants and index arithmetic: KernelArith's.
  using KernelArith::splat;
  /// An f32 vector of `v` in every lane.
  Value splat(double v);
  /// A vector of `lanes` elements of `buf` at `at`, extended to f32.
  Value load(Value buf, ArrayRef<Value> at);
  /// The tensor of a buffer the kernel wrote (restrict, writable).
  Value toTensor(Value buf);
  /// An scf.parallel over [0, ubs) with unit steps.
  void parallel(ArrayRef<int64_t> ubs, function_ref<void(ValueRange)> body);
  /// The same with bounds known at run time (index values) or static.
  void parallel(ArrayRef<OpFoldResult> ubs,
                function_ref<void(ValueRange)> body);
  void forRange(Value lb, Value ub, int64_t step,
                function_ref<void(Value)> body);
  void forEach(int64_t lb, int64_t ub, int64_t step,
               function_ref<void(Value)> body);
  /// A loop carrying one value; returns its final value.
  Value forEachCarry(int64_t lb, int64_t ub, int64_t step, Value init,
                     function_ref<Value(Value, Value)> body);
};

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNKERNEL_REGISTERTILE_H
