//===- RegisterTile.cpp - The broadcast-FMA register tile -----------------===//

#include "attn-opt/Conversion/AttnKernel/RegisterTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> mlir::attn::registerTile(
    ImplicitLocOpBuilder &b, int64_t rows, int64_t ev, Value depth,
    ValueRange init, function_ref<Value(int64_t, Value)> row,
    function_ref<Value(int64_t, Value)> vec) {
  auto vf = cast<VectorType>(init.front().getType());
  auto loop = scf::ForOp::create(
      b, arith::ConstantIndexOp::create(b, 0), depth,
      arith::ConstantIndexOp::create(b, 1), init,
      [&](OpBuilder &, Location, Value k, ValueRange a) {
        SmallVector<Value> vv, next;
        for (int64_t g = 0; g < ev; ++g)
          vv.push_back(vec(g, k));
        for (int64_t i = 0; i < rows; ++i) {
          Value p = vector::BroadcastOp::create(b, vf, row(i, k));
          for (int64_t g = 0; g < ev; ++g)
            next.push_back(vector::FMAOp::create(b, p, vv[g], a[i * ev + g]));
        }
        scf::YieldOp::create(b, next);
      });
  return SmallVector<Value>(loop.getResults());
}

int64_t mlir::attn::tileVectors(int64_t vectors, int64_t rows,
                                int64_t registers) {
  for (int64_t g = std::max<int64_t>(1, registers / 2 / rows); g > 1; --g)
    if (vectors % g == 0)
      return g;
  return 1;
}
