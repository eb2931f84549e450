//===- AttnToTilesPasses.cpp - attn-lower-pointwise and attn-flash --------===//

#include "attn-opt/Conversion/AttnToTiles/TileKernel.h"
#include "attn-opt/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERPOINTWISE
#define GEN_PASS_DEF_ATTNFLASH
#define GEN_PASS_DEF_ATTNBLOCKSPARSE
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// Tile sizes from the model, with the pass's overrides checked.
static FailureOr<TileSizes> chooseTiles(Operation *op, const TargetModel &t,
                                        int64_t valueDim, int64_t queryTile,
                                        int64_t keyBlock, StringRef pass) {
  TileSizes s = TileSizes::select(t, valueDim);
  if (queryTile > 0) {
    if (queryTile % t.lanes != 0)
      return op->emitError() << pass << ": query-tile (" << queryTile
                             << ") must be a multiple of the vector width ("
                             << t.lanes << ")";
    s.queryVectors = queryTile / t.lanes;
    // Keep QV x NJ accumulators within half the registers.
    s.keysPerStep = std::max<int64_t>(1, t.registers / 2 / s.queryVectors);
    s.keyBlock = std::max(s.keysPerStep,
                          s.keyBlock / s.keysPerStep * s.keysPerStep);
    s.valueGroup = 1;
    for (int64_t g = s.keysPerStep; g >= 1; --g)
      if (valueDim % g == 0) {
        s.valueGroup = g;
        break;
      }
  }
  if (keyBlock > 0) {
    if (keyBlock % s.keysPerStep != 0)
      return op->emitError() << pass << ": key-block (" << keyBlock
                             << ") must be a multiple of " << s.keysPerStep
                             << " (the keys of one register block)";
    s.keyBlock = keyBlock;
  }
  return s;
}

/// Replaces `op` by the tile kernel with `layout` (whose blocks are the
/// kernel's tiles).
static void emitKernel(Operation *op, const TileKernelSpec &spec,
                       const TargetModel &target, const TileSizes &tiles,
                       const BlockLayout &layout) {
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  Value result = buildTileKernel(b, spec, target, tiles, layout);
  rewriter.replaceOp(op, result);
}

static InFlightDiagnostic &describeLayout(InFlightDiagnostic &&diag,
                                          const BlockLayout &layout,
                                          int64_t lanes) {
  return diag << "tiles of " << layout.getBlockQ() << " queries x "
              << layout.getBlockK() << " keys, " << lanes
              << " lanes; visiting " << layout.countVisited() << " of "
              << layout.countBlocks() << " key blocks (" << layout.countFull()
              << " full)";
}

/// Lowers attn.attention or attn.block_sparse_attention to the tile kernel.
template <typename OpTy>
static LogicalResult lowerToTiles(OpTy op, int64_t vectorWidth,
                                  int64_t queryTile, int64_t keyBlock,
                                  StringRef pass) {
  TargetModel target = TargetModel::forLanes(vectorWidth);
  TileKernelSpec spec = kernelSpecOf(op);
  std::optional<BlockLayout> given;
  if constexpr (std::is_same_v<OpTy, BlockSparseAttentionOp>) {
    given = op.getLayout().getLayout();
    queryTile = given->getBlockQ();
    keyBlock = given->getBlockK();
  }
  FailureOr<TileSizes> tiles = chooseTiles(op, target, spec.dims.valueDim,
                                           queryTile, keyBlock, pass);
  if (failed(tiles))
    return failure();
  BlockLayout layout =
      given ? *given
            : BlockLayout::compute(spec.mask, tiles->queryTile(target),
                                   tiles->keyBlock);
  describeLayout(op.emitRemark() << pass << ": ", layout, target.lanes);
  emitKernel(op, spec, target, *tiles, layout);
  return success();
}

namespace {
/// Lowers every attention-like op whose normalizer is `NormalizerT`.
template <typename NormalizerT>
static LogicalResult lowerAll(Operation *root, int64_t vectorWidth,
                              int64_t queryTile, int64_t keyBlock,
                              StringRef pass) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (auto a = dyn_cast<AttentionOp>(op)) {
      if (isa<NormalizerT>(a.getNormalizer()))
        ops.push_back(op);
    } else if (auto s = dyn_cast<BlockSparseAttentionOp>(op)) {
      if (isa<NormalizerT>(s.getNormalizer()))
        ops.push_back(op);
    }
  });
  for (Operation *op : ops) {
    LogicalResult r =
        isa<AttentionOp>(op)
            ? lowerToTiles(cast<AttentionOp>(op), vectorWidth, queryTile,
                           keyBlock, pass)
            : lowerToTiles(cast<BlockSparseAttentionOp>(op), vectorWidth,
                           queryTile, keyBlock, pass);
    if (failed(r))
      return failure();
  }
  return success();
}

struct LowerPointwisePass
    : public attn::impl::AttnLowerPointwiseBase<LowerPointwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowerAll<PointwiseAttr>(getOperation(), vectorWidth, queryTile,
                                       keyBlock, getArgument())))
      signalPassFailure();
  }
};

struct FlashPass : public attn::impl::AttnFlashBase<FlashPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowerAll<SoftmaxAttr>(getOperation(), vectorWidth, queryTile,
                                     keyBlock, getArgument())))
      signalPassFailure();
  }
};

struct BlockSparsePass
    : public attn::impl::AttnBlockSparseBase<BlockSparsePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (op.getPatternAttr() && !isa<KernelAttr>(op.getNormalizer()))
        ops.push_back(op);
    });
    TargetModel target = TargetModel::forLanes(vectorWidth);
    for (AttentionOp op : ops) {
      TileKernelSpec spec = kernelSpecOf(op);
      FailureOr<TileSizes> tiles = chooseTiles(
          op, target, spec.dims.valueDim, blockQ, blockK, getArgument());
      if (failed(tiles))
        return signalPassFailure();
      BlockLayout layout = BlockLayout::compute(
          spec.mask, tiles->queryTile(target), tiles->keyBlock);
      if (layout.countVisited() == layout.countBlocks() &&
          !spec.segmentsBound) {
        op.emitRemark() << getArgument()
                        << ": no empty blocks; left for the dense kernels";
        continue;
      }
      describeLayout(op.emitRemark() << getArgument() << ": ", layout,
                     target.lanes);
      IRRewriter rewriter(&getContext());
      rewriter.setInsertionPoint(op);
      auto sparse = BlockSparseAttentionOp::create(
          rewriter, op.getLoc(), op.getType(), op.getQuery(), op.getKey(),
          op.getValue(), op.getBias(), op.getGate(), op.getQuerySegments(),
          op.getKeySegments(), op.getProjection(), op.getNormalizer(),
          op.getPatternAttr(), op.getScaleAttr(), op.getQkNormEpsAttr(),
          BlockLayoutAttr::get(&getContext(), layout));
      rewriter.replaceOp(op, sparse.getResult());
      if (kernels)
        emitKernel(sparse, kernelSpecOf(sparse), target, *tiles, layout);
    }
  }
};
} // namespace
