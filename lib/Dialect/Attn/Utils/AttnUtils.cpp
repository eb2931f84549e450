//===- AttnUtils.cpp - IR helpers shared by every attn lowering -----------===//

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Support/Random.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::replaceEmptyAttention(Operation *root) {
  auto isEmpty = [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return type && type.hasStaticShape() && type.getNumElements() == 0;
  };
  SmallVector<Operation *> empty;
  root->walk([&](Operation *op) {
    if (op != root && isa<AttnDialect>(op->getDialect()) &&
        op->getNumResults() > 0 && llvm::all_of(op->getResultTypes(), isEmpty))
      empty.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (Operation *op : empty) {
    rewriter.setInsertionPoint(op);
    SmallVector<Value> values;
    for (Type t : op->getResultTypes()) {
      auto type = cast<RankedTensorType>(t);
      values.push_back(tensor::EmptyOp::create(
          rewriter, op->getLoc(), type.getShape(), type.getElementType()));
    }
    rewriter.replaceOp(op, values);
  }
}

Value mlir::attn::toF32Tensor(TensorBuilder &tb, Value v) {
  if (cast<RankedTensorType>(v.getType()).getElementType() == tb.f32)
    return v;
  return tb.elementwise({v}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
    return tb.toF32(bb, a[0]);
  });
}

Value mlir::attn::fromF32Tensor(TensorBuilder &tb, Value v, Type elementType) {
  if (elementType == tb.f32)
    return v;
  return tb.elementwise(
      {v},
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        return arith::TruncFOp::create(bb, elementType, a[0]);
      },
      elementType);
}

namespace {
/// Per row of `x` (the last dim reduced, f32): the mean and the sum of the
/// squared deviations from it.
std::pair<Value, Value> rowMoments(TensorBuilder &tb, Value x) {
  TensorBuilder::Sizes shape = tb.sizes(x);
  TensorBuilder::Sizes rows(shape.begin(), shape.end() - 1);
  int64_t rank = shape.size();
  double n = static_cast<double>(shapeOf(x).back());
  auto [id, outer] = tb.rowMaps(rank);
  std::string iters(rank - 1, 'p');
  Value sum =
      tb.reduceLast(x, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return tb.add(bb, a[1], tb.toF32(bb, a[0]));
      });
  Value mean =
      tb.elementwise({sum}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return tb.mul(bb, a[0], tb.f32Const(1.0 / n));
      });
  Value sq =
      tb.generic({x, mean}, {id, outer}, tb.filled(rows, 0.0), outer,
                 iters + "r", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                   Value c =
                       arith::SubFOp::create(bb, tb.toF32(bb, a[0]), a[1]);
                   return tb.fma(bb, c, c, a[2]);
                 });
  return {mean, sq};
}

/// `1 / sqrt(sq / n + eps)` in a region's body: the reciprocal of a row's
/// standard deviation from its sum of squared deviations `sq`.
Value inverseDeviation(TensorBuilder &tb, ImplicitLocOpBuilder &bb, Value sq,
                       double n, double eps) {
  Value var = arith::MulFOp::create(bb, sq, tb.f32Const(1.0 / n));
  return math::RsqrtOp::create(
      bb, arith::AddFOp::create(bb, var, tb.f32Const(eps)));
}

/// `(x - mean) / sqrt(sq / n + eps)` from rowMoments.
Value normalizeRows(TensorBuilder &tb, Value x, Value mean, Value sq,
                    double eps) {
  int64_t rank = shapeOf(x).size();
  double n = static_cast<double>(shapeOf(x).back());
  auto [id, outer] = tb.rowMaps(rank);
  return tb.generic({x, mean, sq}, {id, outer, outer}, tb.empty(tb.sizes(x)),
                    id, std::string(rank - 1, 'p') + "p",
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      Value c =
                          arith::SubFOp::create(bb, tb.toF32(bb, a[0]), a[1]);
                      return arith::MulFOp::create(
                          bb, c, inverseDeviation(tb, bb, a[2], n, eps));
                    });
}
} // namespace

Value mlir::attn::layerNorm(TensorBuilder &tb, Value x, double eps) {
  auto [mean, sq] = rowMoments(tb, x);
  return normalizeRows(tb, x, mean, sq, eps);
}

Value mlir::attn::layerNormGrad(TensorBuilder &tb, Value x, Value dy,
                                double eps) {
  int64_t rank = shapeOf(x).size();
  double dim = static_cast<double>(shapeOf(x).back());
  auto [id, outer] = tb.rowMaps(rank);
  std::string iters(rank - 1, 'p');
  TensorBuilder::Sizes shape = tb.sizes(x);
  TensorBuilder::Sizes rows(shape.begin(), shape.end() - 1);
  // The normalized rows and sigma from one pass of moments.
  auto [mean, sq] = rowMoments(tb, x);
  Value n = normalizeRows(tb, x, mean, sq, eps);
  Value meanDy = tb.reduceLast(
      dy, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        return tb.fma(bb, a[0], tb.f32Const(1.0 / dim), a[1]);
      });
  Value meanDyN =
      tb.generic({dy, n}, {id, id}, tb.filled(rows, 0.0), outer, iters + "r",
                 [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                   return tb.fma(bb, arith::MulFOp::create(bb, a[0], a[1]),
                                 tb.f32Const(1.0 / dim), a[2]);
                 });
  return tb.generic(
      {dy, n, meanDy, meanDyN, sq}, {id, id, outer, outer, outer},
      tb.empty(shape), id, iters + "p",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        Value t = arith::SubFOp::create(bb, a[0], a[2]);
        t = arith::SubFOp::create(bb, t, arith::MulFOp::create(bb, a[1], a[3]));
        return arith::MulFOp::create(bb, t,
                                     inverseDeviation(tb, bb, a[4], dim, eps));
      });
}

/// A float constant shaped like `like` (a splat for vectors).
Value mlir::attn::floatLike(ImplicitLocOpBuilder &b, Value like, double v) {
  Type t = like.getType();
  if (auto vec = dyn_cast<VectorType>(t))
    return arith::ConstantOp::create(
        b,
        DenseElementsAttr::get(vec, b.getFloatAttr(vec.getElementType(), v)));
  return arith::ConstantOp::create(b, b.getFloatAttr(t, v));
}

Value mlir::attn::softmaxExp(ImplicitLocOpBuilder &b, Value x) {
  auto exp = math::ExpOp::create(b, x);
  exp->setAttr(kExpFlushBelowAttr, b.getF32FloatAttr(kSoftmaxWeightFloor));
  return exp;
}

Value mlir::attn::applyPointwiseFn(ImplicitLocOpBuilder &b, PointwiseFn fn,
                                   Value x) {
  auto cst = [&](double v) { return floatLike(b, x, v); };
  Value zero = cst(0.0), one = cst(1.0);
  switch (fn) {
  case PointwiseFn::relu:
    return arith::MaximumFOp::create(b, x, zero);
  case PointwiseFn::relu2: {
    Value r = arith::MaximumFOp::create(b, x, zero);
    return arith::MulFOp::create(b, r, r);
  }
  case PointwiseFn::gelu: {
    Value t =
        math::ErfOp::create(b, arith::MulFOp::create(b, x, cst(M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, x, cst(0.5));
    return arith::MulFOp::create(b, half, arith::AddFOp::create(b, t, one));
  }
  case PointwiseFn::gelu_tanh: {
    // 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
    Value x3 = arith::MulFOp::create(b, arith::MulFOp::create(b, x, x), x);
    Value u = arith::MulFOp::create(
        b, cst(kGeluTanhC),
        arith::AddFOp::create(b, x,
                              arith::MulFOp::create(b, x3, cst(0.044715))));
    Value half = arith::MulFOp::create(b, x, cst(0.5));
    return arith::MulFOp::create(
        b, half, arith::AddFOp::create(b, math::TanhOp::create(b, u), one));
  }
  case PointwiseFn::softplus: {
    // max(x, 0) + log1p(exp(-|x|)), stable for large |x|.
    Value negAbs = arith::NegFOp::create(b, math::AbsFOp::create(b, x));
    Value tail = math::Log1pOp::create(b, math::ExpOp::create(b, negAbs));
    return arith::AddFOp::create(b, arith::MaximumFOp::create(b, x, zero),
                                 tail);
  }
  case PointwiseFn::identity:
    return x;
  case PointwiseFn::relu6:
    return arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, x, zero),
                                     cst(6.0));
  case PointwiseFn::sigmoid: {
    Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
    return arith::DivFOp::create(b, one, arith::AddFOp::create(b, one, e));
  }
  }
  llvm_unreachable("unknown pointwise function");
}

Value mlir::attn::applyPointwiseDerivative(ImplicitLocOpBuilder &b,
                                           PointwiseFn fn, Value x) {
  auto cst = [&](double v) { return floatLike(b, x, v); };
  Value zero = cst(0.0), one = cst(1.0);
  auto gt = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, r);
  };
  auto sigmoid = [&](Value v) -> Value {
    Value e = math::ExpOp::create(b, arith::NegFOp::create(b, v));
    return arith::DivFOp::create(b, one, arith::AddFOp::create(b, one, e));
  };
  switch (fn) {
  case PointwiseFn::relu:
    return arith::SelectOp::create(b, gt(x, zero), one, zero);
  case PointwiseFn::relu2:
    return arith::MulFOp::create(b, cst(2.0),
                                 arith::MaximumFOp::create(b, x, zero));
  case PointwiseFn::gelu: {
    // Phi(x) + x phi(x).
    Value cdf = arith::MulFOp::create(
        b, cst(0.5),
        arith::AddFOp::create(
            b, one,
            math::ErfOp::create(b,
                                arith::MulFOp::create(b, x, cst(M_SQRT1_2)))));
    Value pdf = arith::MulFOp::create(
        b, cst(0.5 * M_2_SQRTPI * M_SQRT1_2),
        math::ExpOp::create(
            b, arith::MulFOp::create(b, cst(-0.5),
                                     arith::MulFOp::create(b, x, x))));
    return arith::AddFOp::create(b, cdf, arith::MulFOp::create(b, x, pdf));
  }
  case PointwiseFn::gelu_tanh: {
    // 0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u), u' = c (1 + 3 0.044715
    // x^2).
    Value x2 = arith::MulFOp::create(b, x, x);
    Value u = arith::MulFOp::create(
        b, cst(kGeluTanhC),
        arith::AddFOp::create(
            b, x,
            arith::MulFOp::create(b, arith::MulFOp::create(b, x2, x),
                                  cst(0.044715))));
    Value t = math::TanhOp::create(b, u);
    Value du = arith::MulFOp::create(
        b, cst(kGeluTanhC),
        arith::AddFOp::create(b, one,
                              arith::MulFOp::create(b, x2, cst(3 * 0.044715))));
    Value sech2 = arith::SubFOp::create(b, one, arith::MulFOp::create(b, t, t));
    Value left =
        arith::MulFOp::create(b, cst(0.5), arith::AddFOp::create(b, one, t));
    Value right =
        arith::MulFOp::create(b, arith::MulFOp::create(b, cst(0.5), x),
                              arith::MulFOp::create(b, sech2, du));
    return arith::AddFOp::create(b, left, right);
  }
  case PointwiseFn::softplus:
    return sigmoid(x);
  case PointwiseFn::identity:
    return one;
  case PointwiseFn::relu6: {
    Value inside = arith::AndIOp::create(b, gt(x, zero), gt(cst(6.0), x));
    return arith::SelectOp::create(b, inside, one, zero);
  }
  case PointwiseFn::sigmoid: {
    Value sg = sigmoid(x);
    return arith::MulFOp::create(b, sg, arith::SubFOp::create(b, one, sg));
  }
  }
  llvm_unreachable("unknown pointwise function");
}

SmallVector<Value, 4> mlir::attn::biasIndices(ArrayRef<int64_t> biasShape,
                                              Value zero, Value batch,
                                              Value head, Value query,
                                              Value key) {
  if (biasShape.size() == 2)
    return {query, key};
  return {biasShape[0] == 1 ? zero : batch, biasShape[1] == 1 ? zero : head,
          query, key};
}

Value mlir::attn::lowRankProjection(TensorBuilder &tb, Value proj, Value x) {
  ArrayRef<int64_t> xs = shapeOf(x);
  return tb.contract(proj, tb.map(5, {2, 3}), x, tb.map(5, {0, 1, 3, 4}),
                     {xs[0], xs[1], shapeOf(proj)[0], xs[3]},
                     tb.map(5, {0, 1, 2, 4}), "ppprp");
}

Value mlir::attn::lshRotationsConstant(ImplicitLocOpBuilder &b, uint64_t seed,
                                       int64_t rounds, int64_t dim,
                                       int64_t numBuckets) {
  SmallVector<float> rf;
  rf.reserve(rounds * dim * (numBuckets / 2));
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<double> rot = lshRotation(seed, r, dim, numBuckets);
    rf.append(rot.begin(), rot.end());
  }
  return arith::ConstantOp::create(
      b,
      DenseElementsAttr::get(
          RankedTensorType::get({rounds, dim, numBuckets / 2}, b.getF32Type()),
          ArrayRef<float>(rf)));
}
