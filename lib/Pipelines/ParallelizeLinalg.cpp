//===- ParallelizeLinalg.cpp - Tile outer parallel loops into scf.forall --===//

#include "attn-opt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARALLELIZELINALG
#include "attn-opt/Pipelines/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Tile sizes for `op`, or an empty vector if there is nothing to tile.
SmallVector<int64_t> threadTileSizes(linalg::LinalgOp op, int64_t chunks) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t numLoops = bounds.size();
  int64_t leading = 0;
  while (leading + 1 < numLoops &&
         iters[leading] == utils::IteratorType::parallel)
    ++leading;
  if (leading == 0 || ShapedType::isDynamicShape(bounds))
    return {};
  SmallVector<int64_t> sizes(numLoops, 0);
  for (int64_t d = 0; d + 1 < leading; ++d)
    sizes[d] = 1;
  int64_t last = bounds[leading - 1];
  sizes[leading - 1] = std::max<int64_t>(1, (last + chunks - 1) / chunks);
  return sizes;
}

struct ParallelizeLinalgPass
    : public attn::impl::AttnParallelizeLinalgBase<ParallelizeLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunks < 1) {
      getOperation()->emitError("attn-parallelize-linalg: chunks must be >= 1");
      return signalPassFailure();
    }
    // Only ops outside loops: the pass introduces the outermost parallelism.
    SmallVector<linalg::LinalgOp> ops;
    for (Block &block : getOperation().getBody())
      for (Operation &op : block)
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          if (linalgOp.hasPureTensorSemantics())
            ops.push_back(linalgOp);

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> sizes = threadTileSizes(op, chunks);
      if (sizes.empty())
        continue;
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(
          getAsIndexOpFoldResult(&getContext(), ArrayRef<int64_t>(sizes)));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("attn-parallelize-linalg: could not tile this op");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};
} // namespace
