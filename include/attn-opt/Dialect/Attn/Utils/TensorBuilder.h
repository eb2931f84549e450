//===- TensorBuilder.h - Small helpers to build linalg on tensors -*- C++
//-*-===//
//
// Shorthands used by the reference lowering: empty and filled tensors,
// linalg.generic with a lambda body, contractions and row reductions. Every
// floating-point reduction is marked `reassoc contract` so that LLVM may
// vectorize the loops it becomes.
//
// Sizes are OpFoldResults: static sizes as attributes, dynamic ones (batch
// and sequence lengths may be dynamic) as index values, usually the
// `tensor.dim`s of the operands (`sizes(tensor)`). Results of elementwise
// ops and reductions take their sizes from their first input.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_TENSORBUILDER_H
#define ATTN_DIALECT_ATTN_UTILS_TENSORBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

class TensorBuilder {
public:
  /// The body of a generic: block arguments (inputs, then the output's
  /// current value) to the value to yield.
  using Body = function_ref<Value(ImplicitLocOpBuilder &, ValueRange)>;

  explicit TensorBuilder(ImplicitLocOpBuilder &b) : b(b), f32(b.getF32Type()) {}

  ImplicitLocOpBuilder &b;
  Type f32;

  using Sizes = SmallVector<OpFoldResult>;
  /// The sizes of a ranked tensor (`tensor.dim` for the dynamic ones).
  Sizes sizes(Value tensor);
  /// Static sizes.
  Sizes sizes(ArrayRef<int64_t> shape);
  /// Size `d` of a ranked tensor.
  OpFoldResult size(Value tensor, int64_t d);
  /// `size` as an index value.
  Value indexOf(OpFoldResult size);

  /// An uninitialized tensor.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType = {});
  Value empty(ArrayRef<int64_t> shape, Type elementType = {});
  /// A tensor filled with `value`.
  Value filled(ArrayRef<OpFoldResult> sizes, double value,
               Type elementType = {});
  Value filled(ArrayRef<int64_t> shape, double value, Type elementType = {});
  /// An f32 scalar constant.
  Value f32Const(double value);
  /// An index constant.
  Value index(int64_t value);

  /// The map `(d0..d{rank-1}) -> (d{dims[0]}, d{dims[1]}, ...)`; a negative
  /// entry stands for the constant 0 (a broadcast dimension of size 1).
  AffineMap map(int64_t rank, ArrayRef<int64_t> dims);

  /// Maps of a reduction over the last dimension of a rank-`rank` tensor
  /// broadcast back over it: identity and "all but last".
  std::pair<AffineMap, AffineMap> rowMaps(int64_t rank);

  /// A linalg.generic with one output. `iterators` is a string of 'p'
  /// (parallel) and 'r' (reduction), one per loop.
  Value generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps, Value init,
                AffineMap outputMap, StringRef iterators, Body body);

  /// `x` with dimension `dim` reversed (`negate`: integer values negated
  /// too). Read by tensor.extract, not through an indexing map `L - 1 - i`:
  /// tiling takes an operand's slice to grow with the loop's.
  Value reversedAlong(Value x, int64_t dim, bool negate = false);

  /// An elementwise map over the shape of `inputs[0]` (identity maps, all
  /// parallel) with an f32 result unless `resultType` says otherwise.
  Value elementwise(ValueRange inputs, Body body, Type resultType = {});

  /// `out[...] = sum_r lhs[...] * rhs[...]` as a generic with the given maps
  /// over loops `iterators`; operands are extended to f32 first.
  Value contract(Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                 ArrayRef<OpFoldResult> outSizes, AffineMap outMap,
                 StringRef iterators);
  Value contract(Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                 ArrayRef<int64_t> outShape, AffineMap outMap,
                 StringRef iterators);

  /// contract for attention weights times values: a weight of exactly 0
  /// adds nothing, even against an inf or NaN value (a masked key's value
  /// reaches no row that does not see it).
  Value weightedSum(Value weights, AffineMap weightsMap, Value values,
                    AffineMap valuesMap, ArrayRef<OpFoldResult> outSizes,
                    AffineMap outMap, StringRef iterators);
  Value weightedSum(Value weights, AffineMap weightsMap, Value values,
                    AffineMap valuesMap, ArrayRef<int64_t> outShape,
                    AffineMap outMap, StringRef iterators);

  /// Reduces the last dimension of `input` (f32) with `combine` from `init`.
  Value reduceLast(Value input, double init, Body combine);

  /// The maximum (from -inf) and the sum of the last dimension of an f32
  /// tensor.
  Value rowMax(Value input);
  Value rowSum(Value input);

  /// Transposes `input` by `perm` (linalg.transpose).
  Value transpose(Value input, ArrayRef<int64_t> perm);

  /// Scalar helpers for bodies.
  Value toF32(ImplicitLocOpBuilder &bb, Value v);
  Value add(ImplicitLocOpBuilder &bb, Value x, Value y);
  Value mul(ImplicitLocOpBuilder &bb, Value x, Value y);
  Value fma(ImplicitLocOpBuilder &bb, Value x, Value y, Value acc);
};

/// Shape of a ranked tensor value.
inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_TENSORBUILDER_H
