//===- TensorBuilder.cpp - Small helpers to build linalg on tensors -------===//

#include "attn-opt/Dialect/Attn/Utils/TensorBuilder.h"

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

static arith::FastMathFlagsAttr reductionFlags(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(b.getContext(),
                                       arith::FastMathFlags::reassoc |
                                           arith::FastMathFlags::contract);
}

TensorBuilder::Sizes TensorBuilder::sizes(Value tensor) {
  return tensor::getMixedSizes(b, b.getLoc(), tensor);
}

TensorBuilder::Sizes TensorBuilder::sizes(ArrayRef<int64_t> shape) {
  Sizes out;
  for (int64_t d : shape) {
    assert(!ShapedType::isDynamic(d) && "a dynamic size needs a value");
    out.push_back(b.getIndexAttr(d));
  }
  return out;
}

OpFoldResult TensorBuilder::size(Value tensor, int64_t d) {
  return tensor::getMixedSize(b, b.getLoc(), tensor, d);
}

Value TensorBuilder::indexOf(OpFoldResult size) {
  return KernelArith(b).indexOf(size);
}

Value TensorBuilder::empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, sizes, elementType ? elementType : f32);
}

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type elementType) {
  return empty(sizes(shape), elementType);
}

Value TensorBuilder::filled(ArrayRef<int64_t> shape, double value,
                            Type elementType) {
  return filled(sizes(shape), value, elementType);
}

Value TensorBuilder::filled(ArrayRef<OpFoldResult> sizes, double value,
                            Type elementType) {
  Type et = elementType ? elementType : f32;
  Value init = empty(sizes, et);
  Value cst = isa<FloatType>(et)
                  ? arith::ConstantOp::create(b, b.getFloatAttr(et, value))
                  : arith::ConstantOp::create(
                        b, b.getIntegerAttr(et, static_cast<int64_t>(value)));
  return linalg::FillOp::create(b, ValueRange{cst}, ValueRange{init})
      .getResult(0);
}

Value TensorBuilder::f32Const(double value) {
  return KernelArith(b).f32Const(value);
}

Value TensorBuilder::index(int64_t value) { return KernelArith(b).idx(value); }

AffineMap TensorBuilder::map(int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(d < 0 ? b.getAffineConstantExpr(0) : b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

std::pair<AffineMap, AffineMap> TensorBuilder::rowMaps(int64_t rank) {
  SmallVector<int64_t> all, outer;
  for (int64_t d = 0; d < rank; ++d) {
    all.push_back(d);
    if (d + 1 < rank)
      outer.push_back(d);
  }
  return {map(rank, all), map(rank, outer)};
}

Value TensorBuilder::generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                             Value init, AffineMap outputMap,
                             StringRef iterators, Body body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outputMap);
  SmallVector<utils::IteratorType> iters;
  for (char c : iterators)
    iters.push_back(c == 'r' ? utils::IteratorType::reduction
                             : utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value result = body(ib, args);
        linalg::YieldOp::create(ib, result);
      });
  return op.getResult(0);
}

Value TensorBuilder::reversedAlong(Value x, int64_t dim, bool negate) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Value last =
      ShapedType::isDynamic(type.getDimSize(dim))
          ? arith::SubIOp::create(b, tensor::DimOp::create(b, x, dim), index(1))
                .getResult()
          : index(type.getDimSize(dim) - 1);
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  return generic({}, {}, empty(sizes(x), type.getElementType()), map(rank, all),
                 std::string(rank, 'p'),
                 [&](ImplicitLocOpBuilder &bb, ValueRange) -> Value {
                   SmallVector<Value> at;
                   for (int64_t d = 0; d < rank; ++d)
                     at.push_back(linalg::IndexOp::create(bb, d));
                   at[dim] = arith::SubIOp::create(bb, last, at[dim]);
                   Value v = tensor::ExtractOp::create(bb, x, at);
                   if (!negate)
                     return v;
                   return arith::SubIOp::create(
                       bb,
                       arith::ConstantOp::create(
                           bb, bb.getIntegerAttr(type.getElementType(), 0)),
                       v);
                 });
}

Value TensorBuilder::elementwise(ValueRange inputs, Body body,
                                 Type resultType) {
  Sizes shape = sizes(inputs.front());
  int64_t rank = shape.size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size(), id);
  return generic(inputs, maps, empty(shape, resultType), id,
                 std::string(rank, 'p'), body);
}

Value TensorBuilder::contract(Value lhs, AffineMap lhsMap, Value rhs,
                              AffineMap rhsMap, ArrayRef<OpFoldResult> outSizes,
                              AffineMap outMap, StringRef iterators) {
  return generic({lhs, rhs}, {lhsMap, rhsMap}, filled(outSizes, 0.0), outMap,
                 iterators, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                   return fma(bb, toF32(bb, a[0]), toF32(bb, a[1]), a[2]);
                 });
}

Value TensorBuilder::contract(Value lhs, AffineMap lhsMap, Value rhs,
                              AffineMap rhsMap, ArrayRef<int64_t> outShape,
                              AffineMap outMap, StringRef iterators) {
  return contract(lhs, lhsMap, rhs, rhsMap, sizes(outShape), outMap, iterators);
}

Value TensorBuilder::weightedSum(Value weights, AffineMap weightsMap,
                                 Value values, AffineMap valuesMap,
                                 ArrayRef<OpFoldResult> outSizes,
                                 AffineMap outMap, StringRef iterators) {
  return generic(
      {weights, values}, {weightsMap, valuesMap}, filled(outSizes, 0.0), outMap,
      iterators, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        Value w = toF32(bb, a[0]);
        Value term = arith::MulFOp::create(bb, w, toF32(bb, a[1]));
        Value zero = f32Const(0.0);
        Value none =
            arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, w, zero);
        return add(bb, a[2], arith::SelectOp::create(bb, none, zero, term));
      });
}

Value TensorBuilder::weightedSum(Value weights, AffineMap weightsMap,
                                 Value values, AffineMap valuesMap,
                                 ArrayRef<int64_t> outShape, AffineMap outMap,
                                 StringRef iterators) {
  return weightedSum(weights, weightsMap, values, valuesMap, sizes(outShape),
                     outMap, iterators);
}

Value TensorBuilder::reduceLast(Value input, double init, Body combine) {
  Sizes shape = sizes(input);
  int64_t rank = shape.size();
  SmallVector<int64_t> all, outer;
  for (int64_t d = 0; d < rank; ++d) {
    all.push_back(d);
    if (d + 1 < rank)
      outer.push_back(d);
  }
  std::string iters(rank - 1, 'p');
  iters += 'r';
  return generic({input}, {map(rank, all)},
                 filled(ArrayRef<OpFoldResult>(shape).drop_back(), init),
                 map(rank, outer), iters, combine);
}

Value TensorBuilder::rowMax(Value input) {
  return reduceLast(
      input, -std::numeric_limits<double>::infinity(),
      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return arith::MaximumFOp::create(bb, a[0], a[1]).getResult();
      });
}

Value TensorBuilder::rowSum(Value input) {
  return reduceLast(input, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
    return add(bb, a[1], a[0]);
  });
}

Value TensorBuilder::transpose(Value input, ArrayRef<int64_t> perm) {
  Sizes shape = sizes(input);
  Sizes outShape;
  for (int64_t p : perm)
    outShape.push_back(shape[p]);
  Type et = cast<RankedTensorType>(input.getType()).getElementType();
  return linalg::TransposeOp::create(b, input, empty(outShape, et), perm)
      .getResult()[0];
}

Value TensorBuilder::toF32(ImplicitLocOpBuilder &bb, Value v) {
  return KernelArith(bb).toF32(v);
}

Value TensorBuilder::add(ImplicitLocOpBuilder &bb, Value x, Value y) {
  return arith::AddFOp::create(bb, x, y, reductionFlags(bb));
}

Value TensorBuilder::mul(ImplicitLocOpBuilder &bb, Value x, Value y) {
  return arith::MulFOp::create(bb, x, y, reductionFlags(bb));
}

Value TensorBuilder::fma(ImplicitLocOpBuilder &bb, Value x, Value y,
                         Value acc) {
  return add(bb, acc, mul(bb, x, y));
}
