//===- RegisterTile.cpp - The broadcast-FMA register tile -----------------===//

#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> mlir::attn::registerTile(
    ImplicitLocOpBuilder &b, int64_t rows, int64_t ev, Value depth,
    ValueRange init, function_ref<Value(int64_t, Value)> row,
    function_ref<Value(int64_t, Value)> vec, bool zeroAddsNothing) {
  auto vf = cast<VectorType>(init.front().getType());
  auto loop = scf::ForOp::create(
      b, arith::ConstantIndexOp::create(b, 0), depth,
      arith::ConstantIndexOp::create(b, 1), init,
      [&](OpBuilder &, Location, Value k, ValueRange a) {
        SmallVector<Value> vv, next;
        for (int64_t g = 0; g < ev; ++g)
          vv.push_back(vec(g, k));
        for (int64_t i = 0; i < rows; ++i) {
          Value w = row(i, k);
          Value zero = zeroAddsNothing ? isZeroWeight(b, w) : Value();
          Value p = vector::BroadcastOp::create(b, vf, w);
          for (int64_t g = 0; g < ev; ++g) {
            Value v = zero ? dropValue(b, zero, vv[g]) : vv[g];
            next.push_back(vector::FMAOp::create(b, p, v, a[i * ev + g]));
          }
        }
        scf::YieldOp::create(b, next);
      });
  return SmallVector<Value>(loop.getResults());
}

Value mlir::attn::isZeroWeight(ImplicitLocOpBuilder &b, Value w) {
  return arith::CmpFOp::create(
      b, arith::CmpFPredicate::OEQ, w,
      arith::ConstantOp::create(b, b.getZeroAttr(w.getType())));
}

Value mlir::attn::dropValue(ImplicitLocOpBuilder &b, Value zero, Value v) {
  return arith::SelectOp::create(
      b, zero, arith::ConstantOp::create(b, b.getZeroAttr(v.getType())), v);
}

Value mlir::attn::sumLanes(ImplicitLocOpBuilder &b, Value vector) {
  return vector::ReductionOp::create(b, vector::CombiningKind::ADD, vector,
                                     arith::FastMathFlags::reassoc);
}

int64_t mlir::attn::tileVectors(int64_t vectors, int64_t rows,
                                int64_t accumulators) {
  for (int64_t g = std::max<int64_t>(1, accumulators / rows); g > 1; --g)
    if (vectors % g == 0)
      return g;
  return 1;
}

VectorLoops::VectorLoops(ImplicitLocOpBuilder &b, int64_t lanes,
                         int64_t registers)
    : KernelArith(b), lanes(lanes), registers(registers),
      vf(VectorType::get({lanes}, b.getF32Type())) {}

Value VectorLoops::splat(double v) {
  return arith::ConstantOp::create(
      b, DenseElementsAttr::get(vf, b.getF32FloatAttr(v)));
}

Value VectorLoops::load(Value buf, ArrayRef<Value> at) {
  Type elem = cast<MemRefType>(buf.getType()).getElementType();
  Value v = vector::LoadOp::create(b, VectorType::get({lanes}, elem), buf, at);
  if (!elem.isF32())
    v = arith::ExtFOp::create(b, vf, v);
  return v;
}

Value VectorLoops::toTensor(Value buf) {
  auto t = cast<MemRefType>(buf.getType());
  return bufferization::ToTensorOp::create(
      b, RankedTensorType::get(t.getShape(), t.getElementType()), buf,
      /*restrict=*/true, /*writable=*/true);
}

void VectorLoops::parallel(ArrayRef<int64_t> ubs,
                           function_ref<void(ValueRange)> body) {
  parallel(getAsIndexOpFoldResult(b.getContext(), ubs), body);
}

void VectorLoops::parallel(ArrayRef<OpFoldResult> ubs,
                           function_ref<void(ValueRange)> body) {
  SmallVector<Value> lbs, ups, steps;
  for (OpFoldResult u : ubs) {
    lbs.push_back(idx(0));
    ups.push_back(indexOf(u));
    steps.push_back(idx(1));
  }
  scf::ParallelOp::create(b, lbs, ups, steps,
                          [&](OpBuilder &, Location, ValueRange ivs) {
                            body(ivs);
                            scf::ReduceOp::create(b);
                          });
}

void VectorLoops::forRange(Value lb, Value ub, int64_t step,
                           function_ref<void(Value)> body) {
  scf::ForOp::create(b, lb, ub, idx(step), ValueRange{},
                     [&](OpBuilder &, Location, Value i, ValueRange) {
                       body(i);
                       scf::YieldOp::create(b);
                     });
}

void VectorLoops::forEach(int64_t lb, int64_t ub, int64_t step,
                          function_ref<void(Value)> body) {
  forRange(idx(lb), idx(ub), step, body);
}

Value VectorLoops::forEachCarry(int64_t lb, int64_t ub, int64_t step,
                                Value init,
                                function_ref<Value(Value, Value)> body) {
  auto loop =
      scf::ForOp::create(b, idx(lb), idx(ub), idx(step), ValueRange{init},
                         [&](OpBuilder &, Location, Value i, ValueRange a) {
                           scf::YieldOp::create(b, ValueRange{body(i, a[0])});
                         });
  return loop.getResult(0);
}
