//===- ResultShapes.cpp - Sizes of values between attn-run's ops ----------===//

#include "ResultShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include <optional>

using namespace mlir;

namespace attn_run {

const std::vector<int64_t> *KnownSizes::shapeOf(Value v) {
  auto it = shapes.find(v);
  if (it != shapes.end())
    return &it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return nullptr;
  shapes[v] =
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  return &shapes[v];
}

/// `shape` refined by the static sizes of `type`, if it conforms to it.
static std::optional<std::vector<int64_t>> conform(std::vector<int64_t> shape,
                                                   Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() != static_cast<int64_t>(shape.size()))
    return std::nullopt;
  for (auto [size, s] : llvm::zip_equal(shape, ranked.getShape()))
    if (!ShapedType::isDynamic(s) && s != size)
      return std::nullopt;
  return shape;
}

/// The value of an integer arith op on known operands.
static std::optional<int64_t> evaluate(Operation *op, KnownSizes &known) {
  APInt constant;
  if (op->getNumResults() == 1 &&
      matchPattern(op->getResult(0), m_ConstantInt(&constant)))
    return constant.getSExtValue();
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    const std::vector<int64_t> *shape = known.shapeOf(dim.getSource());
    auto index = known.integers.find(dim.getIndex());
    if (!shape || index == known.integers.end() || index->second < 0 ||
        index->second >= static_cast<int64_t>(shape->size()))
      return std::nullopt;
    return (*shape)[index->second];
  }
  if (op->getNumOperands() != 2 || op->getNumResults() != 1 ||
      !isa<arith::ArithDialect>(op->getDialect()))
    return std::nullopt;
  auto a = known.integers.find(op->getOperand(0));
  auto b = known.integers.find(op->getOperand(1));
  if (a == known.integers.end() || b == known.integers.end())
    return std::nullopt;
  int64_t x = a->second, y = b->second, r = 0;
  bool overflow = false;
  if (isa<arith::AddIOp>(op))
    overflow = __builtin_add_overflow(x, y, &r);
  else if (isa<arith::SubIOp>(op))
    overflow = __builtin_sub_overflow(x, y, &r);
  else if (isa<arith::MulIOp>(op))
    overflow = __builtin_mul_overflow(x, y, &r);
  else if (isa<arith::DivSIOp, arith::DivUIOp>(op) && y > 0 && x >= 0)
    r = x / y;
  else if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op) && y > 0 && x >= 0)
    r = x / y + (x % y != 0);
  else if (isa<arith::MaxSIOp>(op))
    r = std::max(x, y);
  else if (isa<arith::MinSIOp>(op))
    r = std::min(x, y);
  else
    return std::nullopt;
  if (overflow)
    return std::nullopt;
  return r;
}

void propagateSizes(Operation *op, KnownSizes &known) {
  if (op->getNumResults() == 1 && op->getResult(0).getType().isIntOrIndex()) {
    if (std::optional<int64_t> v = evaluate(op, known))
      known.integers[op->getResult(0)] = *v;
    return;
  }
  auto record = [&](Value result, const std::vector<int64_t> *shape) {
    if (!shape)
      return;
    if (auto s = conform(*shape, result.getType()))
      known.shapes[result] = *s;
  };
  // A tensor.empty: its type with the dynamic sizes it is given.
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    std::vector<int64_t> shape(empty.getType().getShape().begin(),
                               empty.getType().getShape().end());
    auto sizes = empty.getDynamicSizes().begin();
    for (int64_t &s : shape) {
      if (!ShapedType::isDynamic(s))
        continue;
      auto v = known.integers.find(*sizes++);
      if (v == known.integers.end())
        return;
      s = v->second;
    }
    known.shapes[empty.getResult()] = shape;
    return;
  }
  // Destination-style ops (linalg): each result has its init's shape.
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpResult result : op->getResults())
      record(result, known.shapeOf(dps.getTiedOpOperand(result)->get()));
    return;
  }
  // Casts and elementwise ops: the shape of their tensor operands,
  // broadcast (TOSA's elementwise ops: a size 1 stretches to the other).
  bool sameShape = isa<tensor::CastOp>(op) ||
                   op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
                   op->hasTrait<OpTrait::Elementwise>();
  bool broadcast = op->hasTrait<OpTrait::ResultsBroadcastableShape>();
  if (!sameShape && !broadcast)
    return;
  std::optional<std::vector<int64_t>> shape;
  for (Value operand : op->getOperands()) {
    if (!isa<RankedTensorType>(operand.getType()))
      continue;
    const std::vector<int64_t> *s = known.shapeOf(operand);
    if (!s)
      return; // an operand of unknown shape: nothing is known
    if (!shape) {
      shape = *s;
      continue;
    }
    if (shape->size() != s->size())
      return;
    for (auto [into, size] : llvm::zip_equal(*shape, *s)) {
      if (into == size || size == 1)
        continue;
      if (!broadcast || into != 1)
        return; // sizes that do not agree: the verifier's or run time's
      into = size;
    }
  }
  if (shape)
    for (OpResult result : op->getResults())
      record(result, &*shape);
}

} // namespace attn_run
