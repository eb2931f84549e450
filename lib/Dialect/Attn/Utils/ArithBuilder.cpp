//===- ArithBuilder.cpp - Index and float shorthands for kernels ----------===//

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;

Value KernelArith::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}
Value KernelArith::i64(int64_t v) {
  return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
}
Value KernelArith::f32Const(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
Value KernelArith::splat(Value like, double v) { return floatLike(b, like, v); }
Value KernelArith::indexOf(OpFoldResult size) {
  if (auto v = dyn_cast<Value>(size))
    return v;
  return idx(cast<IntegerAttr>(cast<Attribute>(size)).getInt());
}
Value KernelArith::add(Value x, Value y) {
  return arith::AddIOp::create(b, x, y);
}
Value KernelArith::add(Value x, int64_t y) {
  return y == 0 ? x : add(x, idx(y));
}
Value KernelArith::sub(Value x, Value y) {
  return arith::SubIOp::create(b, x, y);
}
Value KernelArith::mul(Value x, Value y) {
  return arith::MulIOp::create(b, x, y);
}
Value KernelArith::mul(Value x, int64_t y) { return mul(x, idx(y)); }
Value KernelArith::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, x, idx(y));
}
Value KernelArith::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, x, idx(y));
}
Value KernelArith::minIdx(Value x, int64_t bound) {
  return minIdx(x, idx(bound));
}
Value KernelArith::minIdx(Value x, Value bound) {
  return arith::MinSIOp::create(b, x, bound);
}
Value KernelArith::maxIdx(Value x, Value bound) {
  return arith::MaxSIOp::create(b, x, bound);
}
Value KernelArith::lt(Value x, int64_t bound) { return lt(x, idx(bound)); }
Value KernelArith::lt(Value x, Value bound) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, bound);
}

Value KernelArith::rem(Value x, Value y) {
  return arith::RemUIOp::create(b, x, y);
}
Value KernelArith::cmp(arith::CmpIPredicate predicate, Value x, Value y) {
  return arith::CmpIOp::create(b, predicate, x, y);
}
Value KernelArith::select(Value condition, Value x, Value y) {
  return arith::SelectOp::create(b, condition, x, y);
}
Value KernelArith::indexCast(Type type, Value v) {
  return arith::IndexCastOp::create(b, type, v);
}

Value KernelArith::dim(Value v, int64_t d) {
  auto type = cast<ShapedType>(v.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, type.getDimSize(d));
  return memref::DimOp::create(b, v, d);
}

Value KernelArith::toF32(Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  if (t.isF32())
    return v;
  Type target = b.getF32Type();
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = vt.clone(target);
  return arith::ExtFOp::create(b, target, v);
}

Value KernelArith::fromF32(Value v, Type elementType) {
  if (elementType.isF32())
    return v;
  Type target = elementType;
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    target = vt.clone(elementType);
  return arith::TruncFOp::create(b, target, v);
}
