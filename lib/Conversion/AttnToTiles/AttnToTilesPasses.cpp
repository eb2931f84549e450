//===- AttnToTilesPasses.cpp - attn-flash, attn-lower-pointwise, sparse ---===//
//
// The pass drivers of the CPU tile kernel: which ops each pass takes, the
// tile sizes (target model and options), the block layout, the remark.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToTiles/TileKernel.h"
#include "attn-opt/Conversion/Capabilities.h"
#include "attn-opt/Conversion/Passes.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERPOINTWISE
#define GEN_PASS_DEF_ATTNFLASH
#define GEN_PASS_DEF_ATTNBLOCKSPARSE
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

FailureOr<TargetModel>
mlir::attn::cpuKernelTarget(Operation *root, StringRef pass, int64_t lanes,
                            int64_t registers, const std::string &bf16Dot) {
  FailureOr<TargetModel> target = targetOfOptions(root, pass, lanes, registers);
  if (failed(target))
    return failure();
  std::optional<TargetModel::Bf16Dot> dot =
      TargetModel::parseBf16Dot(bf16Dot.c_str());
  if (!dot)
    return root->emitError() << pass
                             << ": bf16-dot must be none, native or "
                                "emulated, not '"
                             << bf16Dot << "'";
  // vdpbf16ps works on 4, 8 or 16 f32 lanes (AVX512_BF16, with AVX512VL
  // below 16).
  if (*dot == TargetModel::Bf16Dot::Native && target->lanes == 32)
    return root->emitError() << pass
                             << ": bf16-dot=native needs a vector width of "
                                "4, 8 or 16";
  target->bf16Dot = *dot;
  return *target;
}

/// Tile sizes from the model, with the pass's overrides checked.
static FailureOr<TileSizes> chooseTiles(Operation *op, const TargetModel &t,
                                        int64_t valueDim, int64_t queryTile,
                                        int64_t keyBlock, StringRef pass) {
  TileSizes s = TileSizes::select(t, valueDim);
  if (queryTile > 0) {
    if (queryTile % t.lanes != 0)
      return op->emitError()
             << pass << ": query-tile (" << queryTile
             << ") must be a multiple of the vector width (" << t.lanes << ")";
    s.setQueryVectors(t, queryTile / t.lanes, valueDim);
    s.keyBlock =
        std::max(s.keysPerStep, s.keyBlock / s.keysPerStep * s.keysPerStep);
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

static InFlightDiagnostic &describeLayout(InFlightDiagnostic &&diag,
                                          const BlockLayout &layout,
                                          int64_t lanes) {
  return diag << "tiles of " << layout.getBlockQ() << " queries x "
              << layout.getBlockK() << " keys, " << lanes << " lanes; visiting "
              << layout.countVisited() << " of " << layout.countBlocks()
              << " key blocks (" << layout.countFull() << " full)";
}

/// The remark of a kernel whose blocks are classified at run time.
static InFlightDiagnostic &describeRuntime(InFlightDiagnostic &&diag,
                                           const KernelSpec &spec,
                                           int64_t blockQ, int64_t blockK,
                                           int64_t lanes) {
  return diag << "tiles of " << blockQ << " queries x " << blockK << " keys, "
              << lanes << " lanes; key blocks classified at run time ("
              << spec.runtimeLayoutReason() << ")";
}

/// The remark's note on a mask tensor and on score and mask regions, if
/// the op has them (`staticLayout`: the blocks come from a compile-time
/// layout).
static InFlightDiagnostic &describeMaskTensor(InFlightDiagnostic &diag,
                                              AttentionOp op,
                                              bool staticLayout = true) {
  if (op.getMask())
    diag << "; the blocks of the mask tensor classified at run time "
            "(empty: skipped, wholly allowed: unmasked)";
  if (!op.getMaskMod().empty()) {
    ModProgram program = op.getMaskProgram();
    diag << "; mask_mod (" << program.describe() << ") classified by "
         << "interval analysis "
         << (staticLayout ? "at compile time" : "per block at run time");
    if (staticLayout && (program.readsCaptures || program.readsBatch))
      diag << ", its partial blocks again at run time over the "
           << (program.readsCaptures ? "captured tensors" : "batch row");
  }
  if (!op.getScoreMod().empty())
    diag << "; score_mod inlined into the kernel";
  return diag;
}

/// The remark's note on bf16 dot products of pairs, if the kernel of a
/// compile-time layout uses them.
static InFlightDiagnostic &describeDot(InFlightDiagnostic &diag,
                                       const KernelSpec &spec,
                                       const TargetModel &target,
                                       const TileSizes &tiles) {
  if (usesBf16Pairs(spec, target, tiles, /*staticLayout=*/true))
    diag << "; bf16 dot products of pairs ("
         << (target.bf16Dot == TargetModel::Bf16Dot::Native ? "vdpbf16ps"
                                                            : "emulated")
         << ")";
  return diag;
}

/// Emits the tile kernel of `op` (its run-time checks first) and replaces
/// the op.
static void emitKernel(AttentionOp op, const TargetModel &target,
                       const TileSizes &tiles, const BlockLayout *layout) {
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  KernelSpec spec = KernelSpec::get(op);
  spec.runtimeOk = emitRuntimeChecks(b, op);
  // A result only rearranged (a graph's head merge) is written rearranged.
  std::optional<Rearranged> rearranged =
      writeThroughRearrangement(b, op.getResult(), spec.outputView);
  SmallVector<Value> results = buildTileKernel(b, spec, target, tiles, layout);
  if (!rearranged) {
    rewriter.replaceOp(op, results);
    return;
  }
  if (Value lse = op.getLse())
    rewriter.replaceAllUsesWith(lse, results[1]);
  Value out = bufferization::ToTensorOp::create(
      b, rearranged->last.getType(), rearranged->buffer, /*restrict=*/true,
      /*writable=*/true);
  rewriter.replaceAllUsesWith(rearranged->last, out);
  // The chain (one use per link) and the op, last first.
  for (Operation *link = rearranged->last.getDefiningOp(); link != op;) {
    Operation *previous = link->getOperand(0).getDefiningOp();
    rewriter.eraseOp(link);
    link = previous;
  }
  rewriter.eraseOp(op);
  if (results[0].use_empty())
    rewriter.eraseOp(results[0].getDefiningOp());
}

/// Decode (few queries per sequence): the G x Lq query rows of each
/// key/value head, when Lq is static and at most half the model's tile (a
/// tile of one head's queries would be mostly padding), and nothing but the
/// query is read per query row or head (no bias, gate, mask tensor, segment
/// ids or packed batch; a pattern that is the same for every head). 0
/// otherwise.
static int64_t decodeRows(const KernelSpec &spec, int64_t tileRows) {
  const AttentionDims &d = spec.dims;
  if (ShapedType::isDynamic(d.queryLen) || d.queryLen < 1 ||
      2 * d.queryLen > tileRows || spec.modifiers.bias || spec.modifiers.gate ||
      spec.masking.tensor || spec.segments.query || spec.sequences.isPacked() ||
      spec.mask.isHeadDependent() || spec.mask.usesSegments())
    return 0;
  return d.groupSize() * d.queryLen;
}

/// Decode tasks (batch rows x key/value heads x tiles x key ranges) to aim
/// for: fewer tasks than threads leave cores idle, so the keys of each tile
/// are split into ranges (split-KV), each of at least kMinSplitBlocks key
/// blocks (the merge reads Dv + 2 floats per row and range).
constexpr int64_t kDecodeTasks = 32;
constexpr int64_t kMinSplitBlocks = 4;

/// A paged cache: unless the key block was given, the largest key block
/// (no larger than the model's, a multiple of the keys of a QK^T register
/// block) that divides the page size, so that each block lies in one page
/// (its page looked up once); none: blocks look up each key's page. Decode
/// tiles keep their block when pages are smaller: they look up each key's
/// page once per block step (a table load per key, against D and Dv
/// elements of it), cheaper than the per-block work of small blocks.
static void fitPages(AttentionOp op, TileSizes &tiles, int64_t keyBlock) {
  if (!op.isPaged() || keyBlock > 0)
    return;
  int64_t page = op.getPageSize();
  if (tiles.groupedRows && page < tiles.keyBlock)
    return;
  for (int64_t nb = std::min(tiles.keyBlock, page); nb >= tiles.keysPerStep;
       --nb)
    if (page % nb == 0 && nb % tiles.keysPerStep == 0) {
      tiles.keyBlock = nb;
      return;
    }
}

/// The tiles of `op` from the model and the options (chooseTiles), then
/// for decode (decodeRows; not with an explicit query tile, nor with a key
/// block that does not fit the decode tile's register block) tiles of as
/// many query vectors as the grouped rows fill, up to the model's, and
/// split-KV when the tasks are few.
static FailureOr<TileSizes>
chooseKernelTiles(AttentionOp op, const KernelSpec &spec,
                  const TargetModel &target, int64_t queryTile,
                  int64_t keyBlock, StringRef pass) {
  FailureOr<TileSizes> tiles =
      chooseTiles(op, target, spec.dims.valueDim, queryTile, keyBlock, pass);
  if (failed(tiles))
    return failure();
  int64_t grouped =
      queryTile > 0 ? 0 : decodeRows(spec, tiles->queryTile(target));
  if (!grouped) {
    fitPages(op, *tiles, keyBlock);
    return tiles;
  }
  TileSizes decode = *tiles;
  decode.setQueryVectors(
      target,
      std::min<int64_t>(tiles->queryVectors,
                        llvm::divideCeil(grouped, target.lanes)),
      spec.dims.valueDim);
  if (keyBlock > 0 && keyBlock % decode.keysPerStep != 0)
    return tiles;
  int64_t vectors = decode.queryVectors;
  tiles = chooseTiles(op, target, spec.dims.valueDim, vectors * target.lanes,
                      keyBlock, pass);
  if (failed(tiles))
    return failure();
  tiles->groupedRows = grouped;
  fitPages(op, *tiles, keyBlock); // (after groupedRows: decode keeps blocks)
  const AttentionDims &d = spec.dims;
  if (!ShapedType::isDynamic(d.batch) && !ShapedType::isDynamic(d.keyLen)) {
    int64_t tasks = d.batch * d.kvHeads *
                    llvm::divideCeil(grouped, tiles->queryTile(target));
    int64_t splits =
        std::min(llvm::divideCeil(kDecodeTasks, std::max<int64_t>(tasks, 1)),
                 llvm::divideCeil(d.keyLen, tiles->keyBlock) / kMinSplitBlocks);
    if (splits > 1)
      tiles->keySplits = splits;
  }
  return tiles;
}

/// The remark's words on the decode kernel, if `tiles` are decode tiles.
static InFlightDiagnostic &&describeDecode(InFlightDiagnostic &&diag,
                                           const KernelSpec &spec,
                                           const TileSizes &tiles,
                                           const TargetModel &target) {
  if (!tiles.groupedRows)
    return std::move(diag);
  diag << "decode: the " << spec.dims.groupSize() << " query heads x "
       << spec.dims.queryLen << " queries of each key/value head in "
       << llvm::divideCeil(tiles.groupedRows, tiles.queryTile(target))
       << " tile(s), each key/value element read once for them; ";
  if (tiles.keySplits > 1)
    diag << "split-KV: the key blocks of each tile in " << tiles.keySplits
         << " ranges run in parallel, merged by log-sum-exp; ";
  return std::move(diag);
}

/// Replaces `op` by the tile kernel. With a `layout` attribute, its blocks
/// are the kernel's tiles; otherwise chooseKernelTiles'.
static LogicalResult lowerToTiles(AttentionOp op, const TargetModel &target,
                                  int64_t queryTile, int64_t keyBlock,
                                  StringRef pass) {
  KernelSpec spec = KernelSpec::get(op);
  if (BlockLayoutAttr given = op.getLayoutAttr()) {
    queryTile = given.getBlockQ();
    keyBlock = given.getBlockK();
  }
  FailureOr<TileSizes> tiles =
      chooseKernelTiles(op, spec, target, queryTile, keyBlock, pass);
  if (failed(tiles))
    return failure();
  if (!spec.hasStaticLayout()) {
    InFlightDiagnostic remark = op.emitRemark();
    remark << pass << ": ";
    describeMaskTensor(
        describeRuntime(describeDecode(std::move(remark), spec, *tiles, target),
                        spec, tiles->queryTile(target), tiles->keyBlock,
                        target.lanes),
        op, /*staticLayout=*/false);
    if (op.isPaged()) {
      int64_t page = op.getPageSize();
      remark << "; paged cache, pages of " << page << " keys: ";
      // (Keys per score step: the decode blocking's, else the tile's.)
      DecodeBlocking d = DecodeBlocking::select(spec.dims, target, *tiles);
      int64_t run = pagedKeyRun(page, tiles->keyBlock,
                                d.rows ? d.keysPerStep : tiles->keysPerStep);
      if (keyBlocksFitPages(page, tiles->keyBlock))
        remark << "a key block's page looked up once";
      else if (run > 1)
        remark << "a page looked up per " << run << " keys";
      else
        remark << "each key's page looked up";
    }
    emitKernel(op, target, *tiles, nullptr);
    return success();
  }
  BlockLayout layout =
      op.getBlockLayout(tiles->queryTile(target), tiles->keyBlock);
  describeDot(describeMaskTensor(
                  describeLayout(describeDecode(op.emitRemark() << pass << ": ",
                                                spec, *tiles, target),
                                 layout, target.lanes),
                  op),
              spec, target, *tiles);
  emitKernel(op, target, *tiles, &layout);
  return success();
}

/// Replaces Transformer-XL attention `op` by the tile kernel: the memory
/// prepended to K and V (a copy of `(M + L) x D` per head, no score
/// tensor), causal softmax over the compile-time layout, the position term
/// `(q + v) . r_{M+i-j}` computed per tile next to `(q + u) . k_j`.
static LogicalResult lowerRelative(RelativeAttentionOp op,
                                   const TargetModel &target, int64_t queryTile,
                                   int64_t keyBlock, StringRef pass) {
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  Value key = op.getKey(), value = op.getValue();
  if (op.getMemoryLength() > 0) {
    key = tensor::ConcatOp::create(b, 2, ValueRange{op.getMemoryKey(), key});
    value =
        tensor::ConcatOp::create(b, 2, ValueRange{op.getMemoryValue(), value});
  }
  KernelSpec spec = KernelSpec::get(op, key, value);
  FailureOr<TileSizes> tiles =
      chooseTiles(op, target, spec.dims.valueDim, queryTile, keyBlock, pass);
  if (failed(tiles))
    return failure();
  if (!spec.hasStaticLayout())
    return op.emitOpError()
           << pass << ": Transformer-XL attention over " << spec.dims.queryLen
           << " queries and " << spec.dims.keyLen
           << " keys needs a compile-time block layout, and at most "
           << BlockLayout::kMaxBlocks << " blocks of " << BlockLayout::kMinBlock
           << " x " << BlockLayout::kMinBlock << " fit one";
  BlockLayout layout = BlockLayout::compute(spec.mask, tiles->queryTile(target),
                                            tiles->keyBlock);
  describeLayout(op.emitRemark()
                     << pass
                     << ": Transformer-XL, the position term per tile (the "
                        "relative shift by index arithmetic), memory of "
                     << spec.memoryLen << " keys; ",
                 layout, target.lanes);
  rewriter.replaceOp(op, buildTileKernel(b, spec, target, *tiles, &layout)[0]);
  return success();
}

/// Lowers every attn.attention whose normalizer is `NormalizerT`.
template <typename NormalizerT>
static LogicalResult lowerAll(Operation *root, const TargetModel &target,
                              int64_t queryTile, int64_t keyBlock,
                              StringRef pass) {
  SmallVector<AttentionOp> ops;
  root->walk([&](AttentionOp op) {
    if (isa<NormalizerT>(op.getNormalizer()) &&
        !getCpuKernelCapability().refusal(op.getFeatures()))
      ops.push_back(op);
  });
  for (AttentionOp op : ops)
    if (failed(lowerToTiles(op, target, queryTile, keyBlock, pass)))
      return failure();
  return success();
}

namespace {
struct LowerPointwisePass
    : public attn::impl::AttnLowerPointwiseBase<LowerPointwisePass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<TargetModel> target = cpuKernelTarget(
        getOperation(), getArgument(), vectorWidth, vectorRegisters, bf16Dot);
    if (failed(target) ||
        failed(lowerAll<PointwiseAttr>(getOperation(), *target, queryTile,
                                       keyBlock, getArgument())))
      signalPassFailure();
  }
};

struct FlashPass : public attn::impl::AttnFlashBase<FlashPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<TargetModel> target = cpuKernelTarget(
        getOperation(), getArgument(), vectorWidth, vectorRegisters, bf16Dot);
    if (failed(target) ||
        failed(lowerAll<SoftmaxAttr>(getOperation(), *target, queryTile,
                                     keyBlock, getArgument())))
      return signalPassFailure();
    replaceEmptyAttention(getOperation());
    SmallVector<RelativeAttentionOp> relative;
    getOperation()->walk(
        [&](RelativeAttentionOp op) { relative.push_back(op); });
    for (RelativeAttentionOp op : relative)
      if (failed(
              lowerRelative(op, *target, queryTile, keyBlock, getArgument())))
        return signalPassFailure();
  }
};

struct BlockSparsePass
    : public attn::impl::AttnBlockSparseBase<BlockSparsePass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<TargetModel> target = cpuKernelTarget(
        getOperation(), getArgument(), vectorWidth, vectorRegisters, bf16Dot);
    if (failed(target))
      return signalPassFailure();
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if ((op.getPatternAttr() || !op.getMaskMod().empty()) &&
          !getCpuKernelCapability().refusal(op.getFeatures()))
        ops.push_back(op);
    });
    for (AttentionOp op : ops) {
      KernelSpec spec = KernelSpec::get(op);
      // (Decode tiles only when this pass emits the kernel: an op left with
      // its layout is lowered with the layout's blocks, as prefill.)
      FailureOr<TileSizes> tiles =
          kernels ? chooseKernelTiles(op, spec, *target, blockQ, blockK,
                                      getArgument())
                  : chooseTiles(op, *target, spec.dims.valueDim, blockQ, blockK,
                                getArgument());
      if (failed(tiles))
        return signalPassFailure();
      if (!spec.hasStaticLayout()) {
        op.emitRemark() << getArgument() << ": " << spec.runtimeLayoutReason()
                        << "; left for the "
                           "kernels, which classify blocks at run time";
        continue;
      }
      BlockLayout layout =
          op.getBlockLayout(tiles->queryTile(*target), tiles->keyBlock);
      if (layout.countVisited() == layout.countBlocks() &&
          !op.isSegmentBound()) {
        op.emitRemark() << getArgument()
                        << ": no empty blocks; left for the dense kernels";
        continue;
      }
      describeDot(
          describeMaskTensor(
              describeLayout(
                  describeDecode(op.emitRemark() << getArgument() << ": ", spec,
                                 *tiles, *target),
                  layout, target->lanes),
              op),
          spec, *target, *tiles);
      if (op.getMask()) {
        // A layout describes the pattern only: the kernel takes it here, the
        // op does not.
        if (kernels)
          emitKernel(op, *target, *tiles, &layout);
        continue;
      }
      op.setLayoutAttr(BlockLayoutAttr::get(&getContext(), layout));
      if (!kernels)
        continue;
      emitKernel(op, *target, *tiles, &layout);
    }
  }
};
} // namespace
