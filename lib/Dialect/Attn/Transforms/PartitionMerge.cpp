//===- PartitionMerge.cpp - Merging a rank's partial results --------------===//
//
// attn-partition-sequence's merge step (PartitionSequence.h): each block's
// result joins the rank's accumulators, softmax's through the two
// log-sum-exps (a row no key reached on either side keeps its old values),
// pointwise attention's by addition with the `Lk^-alpha` of the whole
// sequence applied once at the end.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

RankProgram::RowWindow RankProgram::rowWindow(Value t, Value row, Value rows) {
  auto type = cast<RankedTensorType>(t.getType());
  RowWindow w;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    w.offsets.push_back(d == 2 ? OpFoldResult(row) : b.getIndexAttr(0));
    if (d == 2)
      w.sizes.push_back(rows);
    else if (type.isDynamicDim(d))
      w.sizes.push_back(tensor::DimOp::create(b, t, d).getResult());
    else
      w.sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    w.strides.push_back(b.getIndexAttr(1));
  }
  return w;
}

Value RankProgram::accumulate(Value accO, Value o, Value row, Value rows) {
  RowWindow w = rowWindow(accO, row, rows);
  Value old =
      tensor::ExtractSliceOp::create(b, accO, w.offsets, w.sizes, w.strides);
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  auto sum = linalg::GenericOp::create(
      b, TypeRange{old.getType()}, ValueRange{o}, ValueRange{old},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        linalg::YieldOp::create(
            nb, loc,
            ValueRange{arith::AddFOp::create(nb, loc, args[1], args[0])});
      });
  return tensor::InsertSliceOp::create(b, sum.getResult(0), accO, w.offsets,
                                       w.sizes, w.strides);
}

Value RankProgram::sum(Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  auto total = linalg::GenericOp::create(
      b, TypeRange{type}, ValueRange{y}, ValueRange{x},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        linalg::YieldOp::create(
            nb, loc,
            ValueRange{arith::AddFOp::create(nb, loc, args[1], args[0])});
      });
  return total.getResult(0);
}

Value RankProgram::scaled(Value acc, Value factor) {
  auto type = cast<RankedTensorType>(acc.getType());
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  auto product = linalg::GenericOp::create(
      b, TypeRange{type}, ValueRange{}, ValueRange{acc},
      ArrayRef<AffineMap>{id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        linalg::YieldOp::create(
            nb, loc,
            ValueRange{arith::MulFOp::create(nb, loc, args[0], factor)});
      });
  return product.getResult(0);
}

std::pair<Value, Value> RankProgram::merge(Value accO, Value accL, Value o,
                                           Value l, Value row, Value rows) {
  RowWindow ow = rowWindow(accO, row, rows), lw = rowWindow(accL, row, rows);
  Value oOld =
      tensor::ExtractSliceOp::create(b, accO, ow.offsets, ow.sizes, ow.strides);
  Value lOld =
      tensor::ExtractSliceOp::create(b, accL, lw.offsets, lw.sizes, lw.strides);
  MLIRContext *ctx = b.getContext();
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap drop3 = id4.dropResult(3);
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  // The weights of the old and new parts: exp(l - m) / (sum), m the max;
  // rows with no key on either side (m = -inf) keep the old values.
  auto weights = [](OpBuilder &nb, Location loc, Value lo, Value ln) {
    Value m = arith::MaximumFOp::create(nb, loc, lo, ln);
    Value ninf = arith::ConstantOp::create(
        nb, loc, nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value empty =
        arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ, m, ninf);
    Value zeroF = arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0));
    Value safeM = arith::SelectOp::create(nb, loc, empty, zeroF, m);
    Value wo =
        math::ExpOp::create(nb, loc, arith::SubFOp::create(nb, loc, lo, safeM));
    Value wn =
        math::ExpOp::create(nb, loc, arith::SubFOp::create(nb, loc, ln, safeM));
    Value sum = arith::AddFOp::create(nb, loc, wo, wn);
    return std::make_tuple(empty, safeM, wo, wn, sum);
  };
  SmallVector<utils::IteratorType> par4(4, utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> par3(3, utils::IteratorType::parallel);
  auto oNew = linalg::GenericOp::create(
      b, TypeRange{oOld.getType()}, ValueRange{o, l, lOld}, ValueRange{oOld},
      ArrayRef<AffineMap>{id4, drop3, drop3, id4}, par4,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        auto [empty, m, wo, wn, sum] = weights(nb, loc, args[2], args[1]);
        (void)m;
        Value mixed = arith::AddFOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, args[3], wo),
            arith::MulFOp::create(nb, loc, args[0], wn));
        Value normalized = arith::DivFOp::create(nb, loc, mixed, sum);
        linalg::YieldOp::create(nb, loc,
                                ValueRange{arith::SelectOp::create(
                                    nb, loc, empty, args[3], normalized)});
      });
  auto lNew = linalg::GenericOp::create(
      b, TypeRange{lOld.getType()}, ValueRange{l}, ValueRange{lOld},
      ArrayRef<AffineMap>{id3, id3}, par3,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        auto [empty, m, wo, wn, sum] = weights(nb, loc, args[1], args[0]);
        (void)wo;
        (void)wn;
        Value lse = arith::AddFOp::create(nb, loc, m,
                                          math::LogOp::create(nb, loc, sum));
        linalg::YieldOp::create(
            nb, loc,
            ValueRange{arith::SelectOp::create(nb, loc, empty, args[1], lse)});
      });
  Value outO = tensor::InsertSliceOp::create(b, oNew.getResult(0), accO,
                                             ow.offsets, ow.sizes, ow.strides);
  Value outL = tensor::InsertSliceOp::create(b, lNew.getResult(0), accL,
                                             lw.offsets, lw.sizes, lw.strides);
  return {outO, outL};
}

Value RankProgram::lengthFactor(Value out) {
  auto pointwise = cast<PointwiseAttr>(op.getNormalizer());
  double alpha = pointwise.getAlpha().convertToDouble();
  if (alpha == 0.0)
    return out;
  // Lk^-alpha of the whole sequence.
  Value length = arith::UIToFPOp::create(
      b, b.getF32Type(), arith::IndexCastOp::create(b, b.getI64Type(), total));
  Value factor = math::PowFOp::create(
      b, length,
      arith::ConstantOp::create(b,
                                b.getF32FloatAttr(static_cast<float>(-alpha))));
  return scaled(out, factor);
}
