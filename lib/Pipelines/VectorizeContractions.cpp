//===- VectorizeContractions.cpp - Tiled, vectorized CPU contractions -----===//
//
// attn-vectorize-contractions and attn-hoist-vector-transfers: the
// contractions of a graph (projections, MLPs) tiled for threads and
// registers and vectorized with upstream's TilingInterface and
// linalg::vectorize. See the pass descriptions.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Pipelines/Pipelines.h"

#include "attn-opt/Analysis/TargetModel.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILECONTRACTIONS
#define GEN_PASS_DEF_ATTNVECTORIZECONTRACTIONS
#define GEN_PASS_DEF_ATTNREADONLYARGUMENTS
#include "attn-opt/Pipelines/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The loop dims of a contraction the passes take: batch dims, one M, N
/// and K dim, f32 operands (tensors with static shapes, or memrefs).
struct ContractionLoops {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
};

std::optional<ContractionLoops> contractionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  bool onTensors = op.hasPureTensorSemantics();
  if (!onTensors && !op.hasPureBufferSemantics())
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto type = cast<ShapedType>(v.getType());
    if (!type.getElementType().isF32() || (onTensors && !type.hasStaticShape()))
      return std::nullopt;
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 2)
    return std::nullopt;
  return ContractionLoops{llvm::to_vector(dims->batch), dims->m.front(),
                          dims->n.front(), dims->k.front()};
}

struct TileContractionsPass
    : public attn::impl::AttnTileContractionsBase<TileContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunks < 1 || rowTile < 1) {
      getOperation()->emitError()
          << "attn-tile-contractions: chunks and row-tile must be positive";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || !runsOncePerCall(op))
        return;
      if (std::optional<ContractionLoops> loops = contractionLoops(op))
        ops.push_back({op, *loops});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, loops] : ops) {
      SmallVector<int64_t> bounds = op.getStaticLoopRanges();
      int64_t rows =
          std::max<int64_t>(1, (bounds[loops.m] + chunks - 1) / chunks);
      rows = (rows + rowTile - 1) / rowTile * rowTile;
      SmallVector<OpFoldResult> sizes(bounds.size(), rewriter.getIndexAttr(0));
      for (unsigned b : loops.batch)
        sizes[b] = rewriter.getIndexAttr(1);
      sizes[loops.m] = rewriter.getIndexAttr(rows);
      if (failed(tileForThreads(rewriter, op, sizes, getArgument())))
        return signalPassFailure();
    }
  }
};

/// The attributes marking the register tiles to vectorize and their K
/// loops.
constexpr StringLiteral kTileMarker = "attn.register_tile";
constexpr StringLiteral kLoopMarker = "attn.k_loop";

/// Keeps the accumulator of K loop `loop` in registers: a transfer_read
/// and a transfer_write of the same buffer at the same indices, both
/// defined outside the loop, the buffer touched by nothing else in it (the
/// inputs of a contraction on buffers never alias its output), become a
/// read before the loop, a loop-carried vector and a write after it.
/// (Upstream's hoistRedundantVectorTransfers does not hoist when the
/// buffer has other uses anywhere before the loop.)
void hoistAccumulators(RewriterBase &rewriter, scf::ForOp loop) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto write : loop.getBody()->getOps<vector::TransferWriteOp>()) {
      Value mem = write.getBase();
      if (write.getMask() || !loop.isDefinedOutsideOfLoop(mem) ||
          !llvm::all_of(write.getIndices(), [&](Value v) {
            return loop.isDefinedOutsideOfLoop(v);
          }))
        continue;
      vector::TransferReadOp read;
      bool other = false;
      for (Operation *user : mem.getUsers()) {
        if (!loop->isProperAncestor(user) || user == write)
          continue;
        auto r = dyn_cast<vector::TransferReadOp>(user);
        if (r && !read && !r.getMask() && r->getBlock() == write->getBlock() &&
            r->isBeforeInBlock(write) && r.getIndices() == write.getIndices() &&
            r.getVectorType() == write.getVectorType() &&
            r.getPermutationMap() == write.getPermutationMap())
          read = r;
        else
          other = true;
      }
      if (!read || other)
        continue;
      rewriter.moveOpBefore(read, loop);
      FailureOr<LoopLikeOpInterface> grown =
          cast<LoopLikeOpInterface>(loop.getOperation())
              .replaceWithAdditionalYields(
                  rewriter, ValueRange{read.getResult()},
                  /*replaceInitOperandUsesInLoop=*/true,
                  [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                    return SmallVector<Value>{write.getValueToStore()};
                  });
      if (failed(grown))
        return;
      loop = cast<scf::ForOp>(grown->getOperation());
      rewriter.moveOpAfter(write, loop);
      rewriter.modifyOpInPlace(write, [&] {
        write.getValueToStoreMutable().assign(loop.getResults().back());
      });
      changed = true;
      break;
    }
  }
}

struct VectorizeContractionsPass
    : public attn::impl::AttnVectorizeContractionsBase<
          VectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<TargetModel> target =
        TargetModel::get(vectorWidth, vectorRegisters);
    if (!target || kTile < 1) {
      getOperation()->emitError()
          << "attn-vectorize-contractions: vector-width (" << vectorWidth
          << ") must be 4, 8, 16 or 32, vector-registers (" << vectorRegisters
          << ") 0 or at least 8, k-tile positive";
      return signalPassFailure();
    }
    int64_t nr = 2 * target->lanes;
    int64_t mr = kContractionRowTile;

    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<ContractionLoops> loops = contractionLoops(op))
        ops.push_back({op, *loops});
    });
    // The clean-ups below (alias folding, LICM, CSE) are for these loops
    // only: a function without contractions is left as it is.
    if (ops.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (auto &[op, loops] : ops) {
      int64_t numLoops = op.getNumLoops();
      // K steps that divide K (no ragged K tile): k-tile or a power of two
      // below it.
      int64_t kc = kTile;
      int64_t k = op.getStaticLoopRanges()[loops.k];
      if (!ShapedType::isDynamic(k))
        while (kc > 1 && k % kc != 0)
          kc /= 2;
      SmallVector<OpFoldResult> sizes(numLoops, rewriter.getIndexAttr(0));
      for (unsigned b : loops.batch)
        sizes[b] = rewriter.getIndexAttr(1);
      sizes[loops.m] = rewriter.getIndexAttr(mr);
      sizes[loops.n] = rewriter.getIndexAttr(nr);
      sizes[loops.k] = rewriter.getIndexAttr(kc);
      rewriter.setInsertionPoint(op);
      // Loop order: batch, N, M, K, so that the K x nr panel of B stays in
      // cache while the M tiles of the chunk pass over it.
      SmallVector<int64_t> interchange(loops.batch.begin(), loops.batch.end());
      interchange.append({loops.n, loops.m, loops.k});
      for (int64_t d = 0; d < numLoops; ++d)
        if (!llvm::is_contained(interchange, d))
          interchange.push_back(d);
      scf::SCFTilingOptions options;
      options.setTileSizes(sizes);
      options.setInterchange(interchange);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("attn-vectorize-contractions: could not tile this op");
        return signalPassFailure();
      }
      emitRemark(op.getLoc())
          << "attn-vectorize-contractions: register tiles of " << mr << " x "
          << nr << " outputs, K steps of " << kc;
      tiled->tiledOps.back()->setAttr(kTileMarker, rewriter.getUnitAttr());
      // The loop of `dim`: loops come in the interchanged order, one per
      // tiled dim.
      auto loopOf = [&](unsigned dim) -> scf::ForOp {
        unsigned index = 0;
        for (int64_t d : interchange) {
          if (d == dim)
            return dyn_cast<scf::ForOp>(tiled->loops[index].getOperation());
          if (!isConstantIntValue(sizes[d], 0))
            ++index;
        }
        return {};
      };
      loopOf(loops.k)->setAttr(kLoopMarker, rewriter.getUnitAttr());
      // Whole tiles apart from the ragged last one of M and N (an M range
      // known only at run time, such as a thread's last chunk, included):
      // the main loops' tiles get static sizes.
      for (unsigned dim : {loops.m, loops.n})
        if (scf::ForOp loop = loopOf(dim)) {
          scf::ForOp partial;
          (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial);
        }
      rewriter.eraseOp(op);
    }

    // Static tile sizes where the tiles are whole.
    {
      RewritePatternSet patterns(&getContext());
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, &getContext());
      memref::SubViewOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(getOperation(), std::move(patterns));
    }
    SmallVector<linalg::LinalgOp> tiles;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kTileMarker))
        tiles.push_back(op);
    });
    for (linalg::LinalgOp tile : tiles) {
      tile->removeAttr(kTileMarker);
      // Ragged tiles (at the edges of M and N) stay linalg ops, lowered to
      // loops with the rest.
      if (ShapedType::isDynamicShape(tile.getStaticLoopRanges()))
        continue;
      rewriter.setInsertionPoint(tile);
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, tile, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
          /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (failed(vectorized)) {
        tile.emitError("attn-vectorize-contractions: could not vectorize "
                       "this tile");
        return signalPassFailure();
      }
      rewriter.eraseOp(tile);
    }

    // The accumulator tile out of the K loop (hoisting needs transfers on
    // the base buffers, at indices computed outside the loop); then
    // vector.contract to outer products, unit dims dropped.
    {
      RewritePatternSet patterns(&getContext());
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      (void)applyPatternsGreedily(getOperation(), std::move(patterns));
    }
    getOperation().walk(
        [&](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    {
      DominanceInfo dominance(getOperation());
      eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    }
    SmallVector<scf::ForOp> kLoops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kLoopMarker))
        kLoops.push_back(loop);
    });
    for (scf::ForOp loop : kLoops) {
      loop->removeAttr(kLoopMarker);
      hoistAccumulators(rewriter, loop);
    }
    RewritePatternSet patterns(&getContext());
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

struct ReadOnlyArgumentsPass
    : public attn::impl::AttnReadOnlyArgumentsBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    Builder b(&getContext());
    for (BlockArgument arg : func.getArguments())
      if (isa<TensorType>(arg.getType()))
        func.setArgAttr(arg.getArgNumber(), "bufferization.writable",
                        b.getBoolAttr(false));
  }
};
} // namespace
