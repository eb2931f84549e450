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

/// Lowers one attention op to the tile kernel.
static LogicalResult lowerToTiles(AttentionOp op, bool softmax,
                                  int64_t vectorWidth, int64_t queryTile,
                                  int64_t keyBlock, StringRef pass) {
  TargetModel target = TargetModel::forLanes(vectorWidth);
  AttentionDims d = op.getDims();
  FailureOr<TileSizes> tiles =
      chooseTiles(op, target, d.valueDim, queryTile, keyBlock, pass);
  if (failed(tiles))
    return failure();
  TileKernelSpec spec;
  spec.query = op.getQuery();
  spec.key = op.getKey();
  spec.value = op.getValue();
  spec.bias = op.getBias();
  spec.gate = op.getGate();
  spec.querySegments = op.getQuerySegments();
  spec.keySegments = op.getEffectiveKeySegments();
  spec.dims = d;
  spec.scale = op.getEffectiveScale();
  if (std::optional<APFloat> eps = op.getQkNormEps())
    spec.qkNormEps = eps->convertToDouble();
  spec.softmax = softmax;
  if (auto p = dyn_cast<PointwiseAttr>(op.getNormalizer())) {
    spec.fn = p.getFn();
    spec.lengthFactor = std::pow(static_cast<double>(d.keyLen),
                                 -p.getAlpha().convertToDouble());
  }
  spec.mask = op.getMask();
  spec.resultType = op.getType();
  int64_t mr = tiles->queryTile(target);
  BlockLayout layout = BlockLayout::compute(spec.mask, mr, tiles->keyBlock);
  op.emitRemark() << pass << ": tiles of " << mr << " queries x "
                  << tiles->keyBlock << " keys, " << target.lanes
                  << " lanes; visiting " << layout.countVisited() << " of "
                  << layout.countBlocks() << " key blocks ("
                  << layout.countFull() << " full)";
  IRRewriter rewriter(op.getContext());
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  Value result = buildTileKernel(b, spec, target, *tiles, layout);
  rewriter.replaceOp(op, result);
  return success();
}

namespace {
struct LowerPointwisePass
    : public attn::impl::AttnLowerPointwiseBase<LowerPointwisePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (isa<PointwiseAttr>(op.getNormalizer()))
        ops.push_back(op);
    });
    for (AttentionOp op : ops)
      if (failed(lowerToTiles(op, /*softmax=*/false, vectorWidth, queryTile,
                              keyBlock, getArgument())))
        return signalPassFailure();
  }
};

struct FlashPass : public attn::impl::AttnFlashBase<FlashPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (isa<SoftmaxAttr>(op.getNormalizer()))
        ops.push_back(op);
    });
    for (AttentionOp op : ops)
      if (failed(lowerToTiles(op, /*softmax=*/true, vectorWidth, queryTile,
                              keyBlock, getArgument())))
        return signalPassFailure();
  }
};
} // namespace
