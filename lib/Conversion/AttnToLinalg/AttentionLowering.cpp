//===- AttentionLowering.cpp - Shared pieces of the reference lowering ----===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"

#include "attn-opt/Dialect/Attn/Utils/MaskEmitter.h"
#include "attn-opt/Support/Random.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::splitHeads(TensorBuilder &tb, Value v, int64_t kvHeads) {
  ArrayRef<int64_t> s = shapeOf(v);
  auto type = RankedTensorType::get(
      {s[0], kvHeads, s[1] / kvHeads, s[2], s[3]},
      cast<RankedTensorType>(v.getType()).getElementType());
  return tensor::ExpandShapeOp::create(
      tb.b, type, v, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

Value mlir::attn::mergeHeads(TensorBuilder &tb, Value v) {
  return tensor::CollapseShapeOp::create(
      tb.b, v, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

Value mlir::attn::biasAt5(ImplicitLocOpBuilder &b, Value bias, int64_t group,
                          ValueRange idx) {
  Value head = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, idx[1],
                            arith::ConstantIndexOp::create(b, group)),
      idx[2]);
  Value v = tensor::ExtractOp::create(
      b, bias,
      biasIndices(shapeOf(bias), arith::ConstantIndexOp::create(b, 0), idx[0],
                  head, idx[3], idx[4]));
  Type f32 = b.getF32Type();
  return v.getType() == f32 ? v : arith::ExtFOp::create(b, f32, v);
}

Value mlir::attn::featureMap(TensorBuilder &tb, Value x, KernelAttr kernel,
                             double inputScale, Value projection) {
  ImplicitLocOpBuilder &b = tb.b;
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size(), dim = shape.back();
  Value scaleCst = tb.f32Const(inputScale);
  auto scaled = [&](ImplicitLocOpBuilder &bb, Value v) -> Value {
    v = tb.toF32(bb, v);
    return inputScale == 1.0 ? v : arith::MulFOp::create(bb, v, scaleCst);
  };
  switch (kernel.getFeatureMap()) {
  case FeatureMap::elu_plus_one:
    return tb.elementwise(
        shape, {x}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
          Value v = scaled(bb, a[0]);
          Value pos = arith::CmpFOp::create(bb, arith::CmpFPredicate::OGT, v,
                                            tb.f32Const(0.0));
          Value plus = arith::AddFOp::create(bb, v, tb.f32Const(1.0));
          Value ex = math::ExpOp::create(bb, v);
          return arith::SelectOp::create(bb, pos, plus, ex).getResult();
        });
  case FeatureMap::relu:
    return tb.elementwise(shape, {x},
                          [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                            return arith::MaximumFOp::create(
                                       bb, scaled(bb, a[0]), tb.f32Const(0.0))
                                .getResult();
                          });
  case FeatureMap::favor:
    break;
  }
  // FAVOR+: phi(x)_r = exp(<w_r, x> - |x|^2 / 2) / sqrt(m).
  int64_t m = kernel.getFeatures();
  Value w;
  if (projection) {
    w = projection;
  } else {
    std::vector<double> values =
        favorProjection(kernel.getSeed(), m, dim, kernel.getOrthogonal());
    SmallVector<float> f(values.begin(), values.end());
    auto type = RankedTensorType::get({m, dim}, tb.f32);
    w = arith::ConstantOp::create(
        b, DenseElementsAttr::get(type, ArrayRef<float>(f)));
  }
  Value wt = tb.transpose(w, {1, 0}); // D x m
  // Loops: outer dims of x, then d (reduction), then r.
  SmallVector<int64_t> xDims, outDims;
  for (int64_t d = 0; d < rank; ++d)
    xDims.push_back(d);
  for (int64_t d = 0; d + 1 < rank; ++d)
    outDims.push_back(d);
  outDims.push_back(rank);
  SmallVector<int64_t> outShape(shape.drop_back());
  outShape.push_back(m);
  std::string iters(rank - 1, 'p');
  iters += "rp";
  Value proj = tb.generic(
      {x, wt}, {tb.map(rank + 1, xDims), tb.map(rank + 1, {rank - 1, rank})},
      tb.filled(outShape, 0.0), tb.map(rank + 1, outDims), iters,
      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        return tb.fma(bb, scaled(bb, a[0]), tb.toF32(bb, a[1]), a[2]);
      });
  Value halfSq =
      tb.reduceLast(x, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
        Value v = scaled(bb, a[0]);
        return tb.fma(bb, v, arith::MulFOp::create(bb, v, tb.f32Const(0.5)),
                      a[1]);
      });
  auto [id, outer] = tb.rowMaps(rank);
  Value invSqrtM = tb.f32Const(1.0 / std::sqrt(static_cast<double>(m)));
  return tb.generic({proj, halfSq}, {id, outer}, tb.empty(outShape), id,
                    std::string(rank, 'p'),
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      Value e = math::ExpOp::create(
                          bb, arith::SubFOp::create(bb, a[0], a[1]));
                      return arith::MulFOp::create(bb, e, invSqrtM);
                    });
}

Value mlir::attn::scores5(TensorBuilder &tb, Value q5, Value key) {
  ArrayRef<int64_t> qs = shapeOf(q5), ks = shapeOf(key);
  Value kt = tb.transpose(key, {0, 1, 3, 2}); // B x Hkv x D x Lk
  // Loops (b, k, g, i, d, j); a key batch of 1 broadcasts.
  int64_t kb = ks[0] == 1 && qs[0] != 1 ? -1 : 0;
  return tb.contract(q5, tb.map(6, {0, 1, 2, 3, 4}), kt,
                     tb.map(6, {kb, 1, 4, 5}),
                     {qs[0], qs[1], qs[2], qs[3], ks[2]},
                     tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
}

Value mlir::attn::applyValues5(TensorBuilder &tb, Value p, Value value) {
  ArrayRef<int64_t> ps = shapeOf(p), vs = shapeOf(value);
  // Loops (b, k, g, i, j, e).
  return tb.contract(p, tb.map(6, {0, 1, 2, 3, 4}), value,
                     tb.map(6, {0, 1, 4, 5}),
                     {ps[0], ps[1], ps[2], ps[3], vs[3]},
                     tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
}

namespace {
/// Materializes the block tables of a mask as constants, before the generic
/// that reads them.
struct MaskTables {
  std::map<const mask::Node *, Value> tables;

  void collect(TensorBuilder &tb, const mask::Node &n) {
    if (n.kind == mask::Node::Kind::Table) {
      auto type = RankedTensorType::get({n.rows, n.cols}, tb.b.getI8Type());
      SmallVector<int8_t> bits(n.table.begin(), n.table.end());
      tables[&n] = arith::ConstantOp::create(
          tb.b, DenseElementsAttr::get(type, ArrayRef<int8_t>(bits)));
    }
    for (const mask::Node &c : n.children)
      collect(tb, c);
  }
};
} // namespace

Value mlir::attn::weights5(TensorBuilder &tb, Value s, const WeightSpec &spec) {
  ArrayRef<int64_t> shape = shapeOf(s);
  MaskTables tables;
  if (spec.mask)
    tables.collect(tb, spec.mask->getRoot());
  double negInf = -std::numeric_limits<double>::infinity();
  bool isSoftmax = isa<SoftmaxAttr>(spec.normalizer);
  auto pointwise = dyn_cast<PointwiseAttr>(spec.normalizer);
  auto kernel = dyn_cast<KernelAttr>(spec.normalizer);

  // Masked, scaled scores; the fill value marks what is masked.
  double maskedValue = isSoftmax ? negInf : 0.0;
  Value masked = tb.elementwise(
      shape, {s}, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < 5; ++d)
          idx.push_back(linalg::IndexOp::create(bb, d));
        Value x = a[0];
        if (spec.extraScore)
          x = arith::AddFOp::create(bb, x, spec.extraScore(bb, idx));
        if (!kernel && spec.scale != 1.0)
          x = arith::MulFOp::create(bb, x, tb.f32Const(spec.scale));
        if (spec.bias)
          x = arith::AddFOp::create(bb, x, spec.bias(bb, idx));
        if (pointwise) {
          double lengthFactor =
              std::pow(static_cast<double>(spec.keyLen),
                       -pointwise.getAlpha().convertToDouble());
          x = arith::MulFOp::create(bb,
                                    applyPointwiseFn(bb, pointwise.getFn(), x),
                                    tb.f32Const(lengthFactor));
        }
        if (!spec.mask)
          return x;
        Value head = arith::AddIOp::create(
            bb, arith::MulIOp::create(bb, idx[1], tb.index(spec.group)),
            idx[2]);
        MaskEmitter emitter(
            *spec.mask,
            [&](ImplicitLocOpBuilder &eb, const mask::Node &node, Value row,
                Value col) -> Value {
              Value bit = tensor::ExtractOp::create(eb, tables.tables.at(&node),
                                                    ValueRange{row, col});
              return arith::CmpIOp::create(
                  eb, arith::CmpIPredicate::ne, bit,
                  arith::ConstantOp::create(eb, eb.getI8IntegerAttr(0)));
            },
            [&](ImplicitLocOpBuilder &eb, Value q, Value k) -> Value {
              Value sq = tensor::ExtractOp::create(eb, spec.querySegments,
                                                   ValueRange{idx[0], q});
              Value sk = tensor::ExtractOp::create(eb, spec.keySegments,
                                                   ValueRange{idx[0], k});
              return arith::CmpIOp::create(eb, arith::CmpIPredicate::eq, sq,
                                           sk);
            });
        Value allowed = emitter.emitAllowed(bb, head, idx[3], idx[4]);
        return arith::SelectOp::create(bb, allowed, x,
                                       tb.f32Const(maskedValue));
      });
  if (pointwise)
    return masked;

  auto [id, outer] = tb.rowMaps(5);
  if (kernel)
    return divideRows(tb, masked, tb.rowSum(masked),
                      kernel.getEps().convertToDouble());

  // Softmax: subtract the row max, exponentiate the allowed entries,
  // normalize rows with a positive sum.
  Value rowMax = tb.rowMax(masked);
  Value ex = tb.generic(
      {masked, rowMax}, {id, outer}, tb.empty(shape), id, "ppppp",
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        Value isMasked = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                               a[0], tb.f32Const(negInf));
        Value e =
            math::ExpOp::create(bb, arith::SubFOp::create(bb, a[0], a[1]));
        return arith::SelectOp::create(bb, isMasked, tb.f32Const(0), e);
      });
  Value rowSum = tb.rowSum(ex);
  return tb.generic({ex, rowSum}, {id, outer}, tb.empty(shape), id, "ppppp",
                    [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                      Value positive = arith::CmpFOp::create(
                          bb, arith::CmpFPredicate::OGT, a[1], tb.f32Const(0));
                      Value p = arith::DivFOp::create(bb, a[0], a[1]);
                      return arith::SelectOp::create(bb, positive, p,
                                                     tb.f32Const(0));
                    });
}

Value mlir::attn::divideRows(TensorBuilder &tb, Value num, Value den,
                             double eps) {
  int64_t rank = shapeOf(num).size();
  auto [id, outer] = tb.rowMaps(rank);
  return tb.generic(
      {num, den}, {id, outer}, tb.empty(shapeOf(num)), id,
      std::string(rank, 'p'),
      [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
        Value d = arith::AddFOp::create(bb, a[1], tb.f32Const(eps));
        Value nonzero = arith::CmpFOp::create(bb, arith::CmpFPredicate::ONE, d,
                                              tb.f32Const(0));
        Value q = arith::DivFOp::create(bb, a[0], d);
        return arith::SelectOp::create(bb, nonzero, q, tb.f32Const(0));
      });
}

Value mlir::attn::applyGate(TensorBuilder &tb, Value o, Value gate,
                            int64_t kvHeads) {
  if (!gate)
    return o;
  Value g5 = splitHeads(tb, gate, kvHeads);
  return tb.elementwise(shapeOf(o), {o, g5},
                        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                          return arith::MulFOp::create(bb, a[0],
                                                       tb.toF32(bb, a[1]));
                        });
}

Value mlir::attn::finishHeads(TensorBuilder &tb, Value o, Type elementType) {
  return mergeHeads(tb, fromF32Tensor(tb, o, elementType));
}

Value mlir::attn::attend(TensorBuilder &tb, Value s, const WeightSpec &spec,
                         Value value, Type elementType) {
  return finishHeads(tb, applyValues5(tb, weights5(tb, s, spec), value),
                     elementType);
}
