//===- ArithBuilder.h - Index and float shorthands for kernels --*- C++ -*-===//
//
// The arithmetic every IR generator of attn-opt writes at one builder's
// insertion point: constants, index arithmetic, comparisons and f32
// conversions (in the style of upstream's `mlir::ArithBuilder`, which takes
// values of one type; these are the mixed shorthands kernels write, such as
// an index times a constant). The kernel frame (KernelFrame), the register
// tile loops (VectorLoops), the run-time checks and the GPU emulator derive
// from it; the reference lowering's TensorBuilder builds its constants with
// it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_ARITHBUILDER_H
#define ATTN_DIALECT_ATTN_UTILS_ARITHBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::attn {

class KernelArith {
public:
  explicit KernelArith(ImplicitLocOpBuilder &b) : b(b) {}

  /// The builder everything is created with.
  ImplicitLocOpBuilder &b;

  /// Constants: an index, an i64, an f32, and a float shaped like `like`
  /// (a scalar or a vector of its element type, floatLike).
  Value idx(int64_t v);
  Value i64(int64_t v);
  Value f32Const(double v);
  Value splat(Value like, double v);
  /// A size as an index value: the value, or a constant when static.
  Value indexOf(OpFoldResult size);

  /// Index (or integer) arithmetic; `div` and `rem` are unsigned, `minIdx`,
  /// `maxIdx` and `lt` signed. `add(x, 0)` is `x`.
  Value add(Value x, Value y);
  Value add(Value x, int64_t y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value mul(Value x, int64_t y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value minIdx(Value x, int64_t bound);
  Value minIdx(Value x, Value bound);
  Value maxIdx(Value x, Value bound);
  Value lt(Value x, int64_t bound);
  Value lt(Value x, Value bound);
  /// `x rem y` (unsigned), a comparison, a select and an index cast.
  Value rem(Value x, Value y);
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y);
  Value select(Value condition, Value x, Value y);
  Value indexCast(Type type, Value v);

  /// Dimension `d` of memref `v` as an index value (a constant when static).
  Value dim(Value v, int64_t d);

  /// f32 (or a vector of f32) from any float type, and back.
  Value toF32(Value v);
  Value fromF32(Value v, Type elementType);
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_ARITHBUILDER_H
