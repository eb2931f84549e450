//===- ParallelizeLinalg.cpp - Tile outer parallel loops into scf.forall --===//

#include "attn-opt/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARALLELIZELINALG
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Tile sizes for `op`, or an empty vector if there is nothing to tile. A
/// dynamic size of the chunked loop gives a tile size computed at run time
/// (at `rewriter`'s insertion point, before `op`).
SmallVector<OpFoldResult> threadTileSizes(RewriterBase &rewriter,
                                          linalg::LinalgOp op, int64_t chunks) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t numLoops = bounds.size();
  int64_t leading = 0;
  while (leading + 1 < numLoops &&
         iters[leading] == utils::IteratorType::parallel)
    ++leading;
  if (leading == 0)
    return {};
  SmallVector<OpFoldResult> sizes(numLoops, rewriter.getIndexAttr(0));
  for (int64_t d = 0; d + 1 < leading; ++d)
    sizes[d] = rewriter.getIndexAttr(1);
  int64_t last = bounds[leading - 1];
  if (!ShapedType::isDynamic(last)) {
    sizes[leading - 1] = rewriter.getIndexAttr(
        std::max<int64_t>(1, (last + chunks - 1) / chunks));
    return sizes;
  }
  // max(1, ceil(size / chunks)): a zero tile size would mean "not tiled".
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  Value size =
      getValueOrCreateConstantIndexOp(rewriter, loc, ranges[leading - 1].size);
  Value chunkCount = arith::ConstantIndexOp::create(rewriter, loc, chunks);
  Value tile = arith::CeilDivUIOp::create(rewriter, loc, size, chunkCount);
  sizes[leading - 1] =
      arith::MaxUIOp::create(rewriter, loc, tile,
                             arith::ConstantIndexOp::create(rewriter, loc, 1))
          .getResult();
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
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && runsOncePerCall(op) &&
          !hasEmptyLoop(op))
        ops.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      SmallVector<OpFoldResult> sizes = threadTileSizes(rewriter, op, chunks);
      if (sizes.empty())
        continue;
      if (failed(tileForThreads(rewriter, op, sizes, getArgument())))
        return signalPassFailure();
    }
  }
};
} // namespace

bool mlir::attn::runsOncePerCall(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<func::FuncOp>(parent))
      return true;
    if (!isa<scf::IfOp>(parent))
      return false;
  }
  return false;
}

bool mlir::attn::hasEmptyLoop(linalg::LinalgOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 0);
}

LogicalResult mlir::attn::tileForThreads(RewriterBase &rewriter,
                                         linalg::LinalgOp op,
                                         ArrayRef<OpFoldResult> sizes,
                                         StringRef pass) {
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  options.setTileSizes(sizes);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return op.emitError() << pass << ": could not tile this op";
  rewriter.replaceOp(op, tiled->replacements);
  return success();
}
