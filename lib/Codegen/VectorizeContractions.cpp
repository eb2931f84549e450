//===- VectorizeContractions.cpp - Tiled, vectorized CPU contractions -----===//
//
// attn-vectorize-contractions and attn-hoist-vector-transfers: the
// contractions of a graph (projections, MLPs) tiled for threads and
// registers and vectorized with upstream's TilingInterface and
// linalg::vectorize. See the pass descriptions.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"

#include "attn-opt/Support/TargetModel.h"

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
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The loop dims of a contraction the passes take: batch dims, one M, N
/// and K dim, f32 operands (tensors with static shapes, or memrefs). With
/// several M or N dims, `m` is the innermost M dim of the output and `n`
/// the output's last dim; the others are `outer` dims, looped over like
/// batch dims (a projection writing heads first, `[H, L, D]`, has N = (H,
/// D): H outer, D the vector dim).
struct ContractionLoops {
  SmallVector<unsigned> batch, outer;
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
  if (failed(dims) || dims->m.empty() || dims->n.empty() ||
      dims->k.size() != 1 || dims->batch.size() > 2 ||
      dims->m.size() + dims->n.size() > 4)
    return std::nullopt;
  ContractionLoops loops;
  loops.batch = llvm::to_vector(dims->batch);
  loops.k = dims->k.front();
  // The output's innermost M dim and its last (N) dim.
  // Every loop is a batch, M, N or K dim (no dim of one operand only).
  if (dims->batch.size() + dims->m.size() + dims->n.size() + 1 !=
      op.getNumLoops())
    return std::nullopt;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() || out.getNumResults() == 0)
    return std::nullopt;
  std::optional<unsigned> m;
  for (AffineExpr e : out.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (llvm::is_contained(dims->m, d))
      m = d;
  }
  unsigned last = cast<AffineDimExpr>(out.getResults().back()).getPosition();
  if (!m || !llvm::is_contained(dims->n, last)) {
    // An output not ending in N (transposed): one M and one N dim only.
    if (dims->m.size() != 1 || dims->n.size() != 1)
      return std::nullopt;
    loops.m = dims->m.front();
    loops.n = dims->n.front();
    return loops;
  }
  loops.m = *m;
  loops.n = last;
  for (const SmallVector<unsigned, 2> &set : {dims->m, dims->n})
    for (unsigned d : set)
      if (d != loops.m && d != loops.n)
        loops.outer.push_back(d);
  return loops;
}

/// Folds a `linalg.transpose` of contraction `op`'s only result into the
/// contraction: the contraction (generalized) writes the transposed result
/// directly, its output map permuted, into a fill of the transpose's
/// destination (the contraction's init must be a fill). A projection
/// whose result a graph transposes into heads, `[L, H, D] -> [H, L, D]`,
/// then writes heads first and the transposed copy is not made.
void foldTransposeIntoContraction(RewriterBase &rewriter,
                                  linalg::TransposeOp transpose) {
  auto op = transpose.getInput().getDefiningOp<linalg::LinalgOp>();
  // (Only transposes that keep the last dim last: the contraction keeps
  // its vector dim, N, last; a transposed output would leave the
  // micro-kernel.)
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1)
    return;
  if (!op || !transpose.hasPureTensorSemantics() ||
      !op.hasPureTensorSemantics() || !op->hasOneUse() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return;
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (!fill)
    return;
  rewriter.setInsertionPoint(transpose);
  Value init = linalg::FillOp::create(rewriter, fill.getLoc(),
                                      fill.getInputs()[0], transpose.getInit())
                   .getResult(0);
  linalg::GenericOp generic;
  if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    generic = g;
  } else {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return;
    generic = *generalized;
  }
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  AffineMap out = maps.back();
  SmallVector<AffineExpr> permuted;
  for (int64_t p : transpose.getPermutation())
    permuted.push_back(out.getResult(p));
  maps.back() =
      AffineMap::get(out.getNumDims(), 0, permuted, rewriter.getContext());
  rewriter.setInsertionPoint(transpose);
  auto folded = linalg::GenericOp::create(
      rewriter, generic.getLoc(), TypeRange{init.getType()},
      generic.getDpsInputs(), ValueRange{init}, maps,
      generic.getIteratorTypesArray());
  rewriter.cloneRegionBefore(generic.getRegion(), folded.getRegion(),
                             folded.getRegion().end());
  rewriter.replaceOp(transpose, folded.getResults());
  rewriter.eraseOp(generic);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
}

/// Collapses the M, N and K dims of contraction `op` (on tensors) that
/// come in groups of consecutive loops, contiguous in every operand (a
/// projection whose output fusion expanded into heads, `[L, H, D]`, has N =
/// (H, D)), into one dim each, so that contractionLoops takes it. Leaves
/// `op` as it is when there is nothing to collapse or it cannot be. A group
/// of two or more dynamic loops stays as it is: its expand_shape back would
/// have two dynamic sizes in one group, which MLIR 22's
/// expand-strided-metadata crashes on (a FAVOR+ projection of rows
/// [B, H, L] with B and L dynamic).
void collapseDimGroups(RewriterBase &rewriter, linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isa<linalg::GenericOp>(op) || !linalg::isaContractionOpInterface(op))
    return;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<ReassociationIndices> groups;
  for (const SmallVector<unsigned, 2> &set : {dims->m, dims->n, dims->k}) {
    if (set.size() < 2)
      continue;
    ReassociationIndices group(set.begin(), set.end());
    llvm::sort(group);
    for (size_t i = 1; i < group.size(); ++i)
      if (group[i] != group[i - 1] + 1)
        return;
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(ranges[d]);
        }) > 1)
      continue;
    groups.push_back(group);
  }
  if (groups.empty() ||
      !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), groups))
    return;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, groups, rewriter);
  if (succeeded(collapsed))
    rewriter.replaceOp(op, collapsed->results);
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
    {
      IRRewriter rewriter(&getContext());
      SmallVector<linalg::TransposeOp> transposes;
      getOperation().walk([&](linalg::TransposeOp op) {
        if (runsOncePerCall(op))
          transposes.push_back(op);
      });
      for (linalg::TransposeOp op : transposes)
        foldTransposeIntoContraction(rewriter, op);
      SmallVector<linalg::LinalgOp> candidates;
      getOperation().walk([&](linalg::LinalgOp op) {
        if (op.hasPureTensorSemantics() && runsOncePerCall(op))
          candidates.push_back(op);
      });
      for (linalg::LinalgOp op : candidates)
        collapseDimGroups(rewriter, op);
    }
    // A fill seen through the reshapes of the collapse (fill then reshape
    // becomes reshape then fill): the contraction's init is the fill that
    // tileFusingInitFill fuses.
    {
      RewritePatternSet patterns(&getContext());
      linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(getOperation(), std::move(patterns));
    }
    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || !runsOncePerCall(op) ||
          hasEmptyLoop(op))
        return;
      if (std::optional<ContractionLoops> loops = contractionLoops(op))
        ops.push_back({op, *loops});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, loops] : ops) {
      SmallVector<int64_t> bounds = op.getStaticLoopRanges();
      // The batch and outer dims already give tasks: M is cut only into as
      // many pieces as make `chunks` tasks in all (each piece packs B's
      // panel once, for fewer rows the more pieces there are).
      int64_t tasks = 1;
      for (unsigned b : llvm::concat<unsigned>(loops.batch, loops.outer))
        tasks *= bounds[b];
      int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(chunks, tasks));
      int64_t rows =
          std::max<int64_t>(1, (bounds[loops.m] + pieces - 1) / pieces);
      rows = (rows + rowTile - 1) / rowTile * rowTile;
      SmallVector<OpFoldResult> sizes(bounds.size(), rewriter.getIndexAttr(0));
      for (unsigned b : llvm::concat<unsigned>(loops.batch, loops.outer))
        sizes[b] = rewriter.getIndexAttr(1);
      sizes[loops.m] = rewriter.getIndexAttr(rows);
      if (failed(tileFusingInitFill(rewriter, op, sizes)))
        return signalPassFailure();
    }
  }

  /// tileForThreads, with a `linalg.fill` producing the contraction's
  /// init fused into each chunk (attn-vectorize-contractions then folds it
  /// into the micro-kernel's first K block).
  LogicalResult tileFusingInitFill(RewriterBase &rewriter, linalg::LinalgOp op,
                                   ArrayRef<OpFoldResult> sizes) {
    if (!op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>())
      return tileForThreads(rewriter, op, sizes, getArgument());
    rewriter.setInsertionPoint(op);
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setTileSizes(sizes);
    options.setFusionControlFn(
        [](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (isDestination && isa<linalg::FillOp>(producer.getOwner()))
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          return std::nullopt;
        });
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return op.emitError() << getArgument() << ": could not tile this op";
    for (OpResult result : op->getResults())
      rewriter.replaceAllUsesWith(result, tiled->replacements.lookup(result));
    rewriter.eraseOp(op);
    for (Operation *producer : tiled->fusedProducers)
      if (producer->use_empty())
        rewriter.eraseOp(producer);
    return success();
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

/// The operands of a contraction for the broadcast-FMA micro-kernel: `b`
/// the input with the N dim, `a` the other; both B and the output have N
/// as their last dim with unit stride (vector loads along N), A any
/// layout (one scalar per row and K step); N and K static. std::nullopt
/// otherwise (linalg::vectorize then).
struct DirectOperands {
  OpOperand *a, *b, *c;
};

/// True if the body of `op` is exactly `out + in0 * in1` (the micro-kernel
/// emits that FMA and nothing else; contraction ops may also apply unary
/// ops to their inputs).
bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

/// True if `operand` of `op` is a memref whose last dim is loop `dim`
/// with unit stride (vectors along `dim` are contiguous).
bool isUnitAlong(linalg::LinalgOp op, OpOperand *operand, unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  auto type = dyn_cast<MemRefType>(operand->get().getType());
  if (!type || map.getNumResults() == 0 ||
      map.getResults().back() != getAffineDimExpr(dim, op.getContext()))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

std::optional<DirectOperands> directOperands(linalg::LinalgOp op,
                                             const ContractionLoops &loops) {
  if (!isMulAddBody(op))
    return std::nullopt;
  OpOperand *in0 = op.getDpsInputOperand(0), *in1 = op.getDpsInputOperand(1);
  bool nIn0 = op.getMatchingIndexingMap(in0).isFunctionOfDim(loops.n);
  OpOperand *b = nIn0 ? in0 : in1, *a = nIn0 ? in1 : in0;
  OpOperand *c = op.getDpsInitOperand(0);
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  if (!isUnitAlong(op, b, loops.n) || !isUnitAlong(op, c, loops.n) ||
      ShapedType::isDynamic(bounds[loops.n]) ||
      ShapedType::isDynamic(bounds[loops.k]))
    return std::nullopt;
  for (OpOperand *operand : {a, b, c})
    if (!op.getMatchingIndexingMap(operand).isProjectedPermutation())
      return std::nullopt;
  return DirectOperands{a, b, c};
}

/// The transpose of the square of `rows` (n vectors of n lanes, n a power
/// of two) in log2(n) stages of two-source shuffles: the stage of distance
/// d swaps bit d of the row and of the column index, pairing rows i and
/// i + d (bit d of i clear); each shuffle is one instruction on x86
/// (vpermt2ps, vunpcklpd, ...).
SmallVector<Value> transposeSquare(OpBuilder &b, Location loc,
                                   SmallVector<Value> rows) {
  int64_t n = rows.size();
  for (int64_t d = n / 2; d >= 1; d /= 2) {
    SmallVector<int64_t> low(n), high(n);
    for (int64_t c = 0; c < n; ++c) {
      low[c] = (c & d) ? n + c - d : c;
      high[c] = (c & d) ? n + c : c + d;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i & d)
        continue;
      Value x = rows[i], y = rows[i + d];
      rows[i] = vector::ShuffleOp::create(b, loc, x, y, low);
      rows[i + d] = vector::ShuffleOp::create(b, loc, x, y, high);
    }
  }
  return rows;
}

/// `step`, halved (not below `floor`) until it divides `extent`.
int64_t halveUntilDivides(int64_t step, int64_t extent, int64_t floor = 1) {
  while (step > floor && extent % step != 0)
    step /= 2;
  return step;
}

/// Bytes of one packed panel of B (K block x nr floats): it stays in L1
/// while the tiles of an M block pass over it. K blocks of 512 rows with
/// AVX2, 256 with AVX-512 (measured on AVX2: 512 rows about 10 % faster
/// than 256 for K = 512 and 2048).
constexpr int64_t kPanelBytesL1 = 32 * 1024;
/// Bytes of the K block of A that one M block reads (half of a 512 KiB
/// L2: it stays there while every N tile passes over it).
constexpr int64_t kBlockBytesL2 = 256 * 1024;
/// Bytes of the packed K block of B (N block x K block floats; a thread's
/// share of L3: its panels are read from there once per M block).
constexpr int64_t kBlockBytesL3 = 2 * 1024 * 1024;

/// The fewest panels per N block for which A is packed by a scalar copy.
/// Measured with Linformer's projections (N = 64: 2 panels of 32, K =
/// 4096, M = 256, on AVX-512): the copy took a third of their time;
/// reading A in place cut it by about a sixth, packing it by transposes by
/// a little more (perf samples against the attention's, one run).
constexpr int64_t kMinPanelsToPackA = 4;

/// A `linalg.fill` of the whole output of contraction `op` (on buffers)
/// that the contraction can take over: in the same block before it, on the
/// same buffer (the same value, or an identical subview), nothing between
/// them with memory effects, and K > 0 (the micro-kernel's first K block
/// then starts from the fill value instead of loading the output).
linalg::FillOp foldableFill(linalg::LinalgOp op, OpOperand *c) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  if (llvm::any_of(bounds, [](int64_t b) { return b == 0; }))
    return {};
  auto sameBuffer = [&](Value x) {
    Value y = c->get();
    if (x == y)
      return true;
    auto xv = x.getDefiningOp<memref::SubViewOp>();
    auto yv = y.getDefiningOp<memref::SubViewOp>();
    return xv && yv &&
           OperationEquivalence::isEquivalentTo(
               xv, yv, OperationEquivalence::Flags::IgnoreLocations);
  };
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      return fill.hasPureBufferSemantics() &&
                     sameBuffer(fill.getDpsInitOperand(0)->get())
                 ? fill
                 : linalg::FillOp();
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

/// How lowerToMicroKernel blocks a contraction: computed from its shapes
/// and layouts alone, before any IR is created.
struct BlockingPlan {
  /// The batch and outer dims: loops around everything, one index at a time.
  SmallVector<unsigned> outerDims;
  /// The register tile: `mr` rows x `nr` columns (`nv` vectors of `lanes`
  /// floats), the micro-kernel's K loop unrolled by `unroll`.
  int64_t mr, nr, lanes, nv, unroll;
  /// N and K; the columns of whole panels (N rounded down to `nr`).
  int64_t n, k, nFull;
  /// The K block (rows of a packed panel), the M block (rows of A per block)
  /// and the N block (columns of B per block).
  int64_t kBlock, mc, nc;
  /// Whether A is packed by in-register transposes, and whether it is packed
  /// at all (by transposes or by a copy; else read in place).
  bool transposedPack, packA;
};

/// The blocking of contraction `op` (see lowerToMicroKernel) for register
/// tiles of `mr` x `nr` floats, vectors of `lanes` and K steps of `kTile`.
BlockingPlan planBlocking(linalg::LinalgOp op, const ContractionLoops &loops,
                          const DirectOperands &ops, int64_t mr, int64_t nr,
                          int64_t lanes, int64_t kTile) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  int64_t n = bounds[loops.n], k = bounds[loops.k];
  // Batch and outer dims: loops around everything, one index at a time.
  SmallVector<unsigned> outerDims(loops.batch);
  llvm::append_range(outerDims, loops.outer);
  int64_t nFull = n / nr * nr, nv = nr / lanes;
  // K blocks: a power of two from the panel's rows down to 16 dividing
  // K, else K.
  int64_t kPackRows = std::max<int64_t>(16, kPanelBytesL1 / (nr * 4));
  int64_t kBlock = k;
  if (int64_t c = halveUntilDivides(kPackRows, k, 16);
      k > kPackRows && k % c == 0)
    kBlock = c;
  int64_t unroll = halveUntilDivides(kTile, kBlock);
  // Rows of A per block: its K block (mc x KB floats) stays in L2 while
  // every panel passes over it. Columns of B per block: its packed K
  // block (KB x nc floats) stays in L3. (K may be 0: no keys.)
  int64_t kBlockBytes = std::max<int64_t>(kBlock, 1) * 4;
  int64_t mc = std::max<int64_t>(mr, kBlockBytesL2 / kBlockBytes / mr * mr);
  int64_t nc = std::min(
      nFull, std::max<int64_t>(nr, kBlockBytesL3 / kBlockBytes / nr * nr));
  // A is packed by lanes x lanes transposes of vectors loaded along K
  // when it is contiguous along K and K blocks are whole vectors (each
  // packed step padded to `lanes` floats); else by a scalar copy, which
  // LLVM vectorizes into scatters (about a cycle per element), only when
  // enough panels read each packed tile to pay for it; else the tiles
  // broadcast from A's rows in place.
  bool transposedPack = mr <= lanes && kBlock % lanes == 0 &&
                        llvm::isPowerOf2_64(lanes) &&
                        isUnitAlong(op, ops.a, loops.k);
  bool packA = transposedPack || nc / nr >= kMinPanelsToPackA;
  return BlockingPlan{
      outerDims, mr,    nr,     lanes, nv, unroll,         n,
      k,         nFull, kBlock, mc,    nc, transposedPack, packA};
}

/// Remarks on `plan` at `loc` (and on folding `fill`, if given).
void remarkBlocking(Location loc, const BlockingPlan &plan,
                    linalg::FillOp fill) {
  emitRemark(loc) << "attn-vectorize-contractions: register tiles of "
                  << plan.mr << " x " << plan.nr
                  << " outputs, B packed in K blocks of " << plan.kBlock
                  << ", A "
                  << (plan.transposedPack ? "packed by transposes"
                      : plan.packA        ? "packed by a copy"
                                          : "read in place (few panels)")
                  << ", broadcast-FMA micro-kernel (K unrolled by "
                  << plan.unroll << ")"
                  << (fill ? ", the output's fill folded into the first K block"
                           : "");
}

/// Emits the loops of lowerToMicroKernel for contraction `op` by `plan`,
/// before `op`: the packers of B's panels and of A's blocks, the
/// micro-kernel's tiles, and the last N % nr columns.
class MicroKernelEmitter {
public:
  /// Creates the loop ranges of `op` and the constant 0 (`rewriter` at
  /// `op`).
  MicroKernelEmitter(RewriterBase &rewriter, linalg::LinalgOp op,
                     const ContractionLoops &loops, const DirectOperands &ops,
                     linalg::FillOp fill, const BlockingPlan &plan);

  /// The columns of whole panels: per batch and outer index, K block and N
  /// block, B's block packed, then the tiles M block by M block (A packed
  /// per M block, or read in place), then the remaining rows one at a time.
  void emitPanels();
  /// The last N % nr columns: the op on those columns of B and C (after the
  /// fill, if one was folded).
  void emitLastColumns();

private:
  RewriterBase &rewriter;
  linalg::LinalgOp op;
  const ContractionLoops &loops;
  const DirectOperands &ops;
  const BlockingPlan &plan;
  Location loc;
  int64_t numLoops;
  VectorType vecType;
  SmallVector<Range> ranges;
  Value zero;
  /// The operands A, B and C of `op`.
  Value a, b, c;
  /// The value of the folded fill, if any.
  Value fillValue;
  /// Set by emitPanels: M, M rounded down to `mr`, and the buffers of B's
  /// packed block and of A's packed block (when A is packed).
  Value mSize, mFull, bPack, aPack;

  /// The index constant `v`.
  Value cst(OpBuilder &builder, int64_t v);
  /// The size of loop `dim`.
  Value size(unsigned dim);
  /// The indices of `operand` at m, n, k and the batch indices.
  SmallVector<Value> indicesAt(ValueRange batchIvs, OpOperand *operand, Value m,
                               Value nn, Value kk);
  /// The first column of panel `p` of the N block from `nb0`.
  Value panelStart(OpBuilder &pb, Location pl, Value nb0, Value p);

  /// One N block from column `nb0` in the K block from `k0`: B packed, the
  /// whole tiles and the remaining rows.
  void emitNBlock(OpBuilder &nb, Location l, ValueRange batchIvs, Value k0,
                  Value nb0);
  /// Packs B's block (rows from `k0`, `panels` panels from column `nb0`)
  /// panel by panel into `bPack`.
  void packB(OpBuilder &nb, Location l, ValueRange batchIvs, Value k0,
             Value nb0, Value panels);
  /// The whole tiles of the M block from `mb` against the `panels` panels
  /// from column `nb0`, A's block packed first (when A is packed).
  void emitMBlock(OpBuilder &mbb, Location ml, ValueRange batchIvs, Value k0,
                  Value nb0, Value panels, Value mb);
  /// Packs A's block (`tiles` tiles from row `mb`, K from `k0`) into `aPack`
  /// by lanes x lanes transposes; rows past M repeat row `mLast`.
  void packATransposed(OpBuilder &mbb, Location ml, ValueRange batchIvs,
                       Value k0, Value mb, Value tiles, Value mLast);
  /// Packs A's block (`tiles` tiles from row `mb`, K from `k0`) into `aPack`
  /// by a scalar copy.
  void packACopy(OpBuilder &mbb, Location ml, ValueRange batchIvs, Value k0,
                 Value mb, Value tiles);
  /// One tile of `rows` rows from m0 against packed panel `p` (columns
  /// from n0): reads A from `aBlock` (A packed from row mBegin) when
  /// given, else from A.
  void emitTile(OpBuilder &tb, Location tl, ValueRange batchIvs, Value k0,
                Value n0, Value p, Value m0, int64_t rows, Value aBlock,
                Value mBegin);
  /// The accumulators of a tile (rows `mRows`, columns `cols`) at the start
  /// of the K block from `k0`: C loaded, or the fill value in the first K
  /// block when the fill is folded.
  SmallVector<Value> tileAccumulators(OpBuilder &tb, Location tl,
                                      ValueRange batchIvs, Value k0,
                                      ArrayRef<Value> mRows,
                                      ArrayRef<Value> cols, int64_t rows);
};

MicroKernelEmitter::MicroKernelEmitter(
    RewriterBase &rewriter, linalg::LinalgOp op, const ContractionLoops &loops,
    const DirectOperands &ops, linalg::FillOp fill, const BlockingPlan &plan)
    : rewriter(rewriter), op(op), loops(loops), ops(ops), plan(plan),
      loc(op.getLoc()), numLoops(op.getNumLoops()) {
  Type f32 = rewriter.getF32Type();
  vecType = VectorType::get({plan.lanes}, f32);
  ranges = op.createLoopRanges(rewriter, loc);
  zero = cst(rewriter, 0);
  a = ops.a->get();
  b = ops.b->get();
  c = ops.c->get();
  fillValue = fill ? fill.getDpsInputOperand(0)->get() : Value();
}

Value MicroKernelEmitter::cst(OpBuilder &builder, int64_t v) {
  return arith::ConstantIndexOp::create(builder, loc, v);
}

Value MicroKernelEmitter::size(unsigned dim) {
  return getValueOrCreateConstantIndexOp(rewriter, loc, ranges[dim].size);
}

SmallVector<Value> MicroKernelEmitter::indicesAt(ValueRange batchIvs,
                                                 OpOperand *operand, Value m,
                                                 Value nn, Value kk) {
  SmallVector<Value> all(numLoops, zero);
  for (auto [d, iv] : llvm::zip(plan.outerDims, batchIvs))
    all[d] = iv;
  all[loops.m] = m;
  all[loops.n] = nn;
  all[loops.k] = kk;
  SmallVector<Value> result;
  for (AffineExpr e : op.getMatchingIndexingMap(operand).getResults())
    result.push_back(all[cast<AffineDimExpr>(e).getPosition()]);
  return result;
}

Value MicroKernelEmitter::panelStart(OpBuilder &pb, Location pl, Value nb0,
                                     Value p) {
  return arith::AddIOp::create(
      pb, pl, nb0, arith::MulIOp::create(pb, pl, p, cst(pb, plan.nr)));
}

void MicroKernelEmitter::emitPanels() {
  int64_t mr = plan.mr, nr = plan.nr, kBlock = plan.kBlock, mc = plan.mc;
  Type f32 = rewriter.getF32Type();
  mSize = size(loops.m);
  mFull = arith::SubIOp::create(
      rewriter, loc, mSize,
      arith::RemUIOp::create(rewriter, loc, mSize, cst(rewriter, mr)));
  bPack = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({plan.nc / nr, kBlock, nr}, f32),
      rewriter.getI64IntegerAttr(64));

  // A's K block of one M block packed tile by tile, `mr` rows side by
  // side per K step (the micro-kernel's broadcasts read one stream).
  // (Tiles of at most one M block; fewer when M is smaller.)
  Value aTiles = arith::MaxUIOp::create(
      rewriter, loc, cst(rewriter, 1),
      arith::DivUIOp::create(
          rewriter, loc,
          arith::MinUIOp::create(rewriter, loc, mFull, cst(rewriter, mc)),
          cst(rewriter, mr)));
  aPack = plan.packA
              ? memref::AllocOp::create(
                    rewriter, loc,
                    MemRefType::get({ShapedType::kDynamic, kBlock,
                                     plan.transposedPack ? plan.lanes : mr},
                                    f32),
                    ValueRange{aTiles}, rewriter.getI64IntegerAttr(64))
                    .getResult()
              : Value();

  // Loops over the batch and outer dims, K blocks and N blocks.
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d : plan.outerDims) {
    lbs.push_back(zero);
    ubs.push_back(size(d));
    steps.push_back(cst(rewriter, 1));
  }
  size_t numBatch = lbs.size();
  lbs.append({zero, zero});
  ubs.append({cst(rewriter, plan.k), cst(rewriter, plan.nFull)});
  steps.append({cst(rewriter, kBlock), cst(rewriter, plan.nc)});
  scf::buildLoopNest(rewriter, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location l, ValueRange ivs) {
                       ValueRange batchIvs = ivs.take_front(numBatch);
                       Value k0 = ivs[numBatch], nb0 = ivs[numBatch + 1];
                       emitNBlock(nb, l, batchIvs, k0, nb0);
                     });
}

void MicroKernelEmitter::emitNBlock(OpBuilder &nb, Location l,
                                    ValueRange batchIvs, Value k0, Value nb0) {
  int64_t nr = plan.nr;
  // Panels of this N block (the last block may be narrower).
  Value panels = arith::DivUIOp::create(
      nb, l,
      arith::MinUIOp::create(
          nb, l, cst(nb, plan.nc),
          arith::SubIOp::create(nb, l, cst(nb, plan.nFull), nb0)),
      cst(nb, nr));
  // Pack B's block panel by panel.
  packB(nb, l, batchIvs, k0, nb0, panels);
  // Whole tiles, M block by M block (A packed).
  scf::ForOp::create(nb, l, zero, mFull, cst(nb, plan.mc), ValueRange{},
                     [&](OpBuilder &mbb, Location ml, Value mb, ValueRange) {
                       emitMBlock(mbb, ml, batchIvs, k0, nb0, panels, mb);
                     });
  // The remaining rows (fewer than mr), one at a time.
  scf::buildLoopNest(
      nb, l, {zero, mFull}, {panels, mSize}, {cst(nb, 1), cst(nb, 1)},
      [&](OpBuilder &tb, Location tl, ValueRange pm) {
        emitTile(tb, tl, batchIvs, k0, panelStart(tb, tl, nb0, pm[0]), pm[0],
                 pm[1], 1, Value(), Value());
      });
}

void MicroKernelEmitter::packB(OpBuilder &nb, Location l, ValueRange batchIvs,
                               Value k0, Value nb0, Value panels) {
  int64_t lanes = plan.lanes;
  scf::buildLoopNest(
      nb, l, {zero, zero}, {panels, cst(nb, plan.kBlock)},
      {cst(nb, 1), cst(nb, 1)}, [&](OpBuilder &pb, Location pl, ValueRange pk) {
        Value n0 = panelStart(pb, pl, nb0, pk[0]);
        Value kb = arith::AddIOp::create(pb, pl, k0, pk[1]);
        for (int64_t j = 0; j < plan.nv; ++j) {
          Value col =
              j == 0 ? n0
                     : arith::AddIOp::create(pb, pl, n0, cst(pb, j * lanes));
          Value v = vector::LoadOp::create(
              pb, pl, vecType, b, indicesAt(batchIvs, ops.b, zero, col, kb));
          vector::StoreOp::create(pb, pl, v, bPack,
                                  ValueRange{pk[0], pk[1], cst(pb, j * lanes)});
        }
      });
}

void MicroKernelEmitter::emitMBlock(OpBuilder &mbb, Location ml,
                                    ValueRange batchIvs, Value k0, Value nb0,
                                    Value panels, Value mb) {
  int64_t mr = plan.mr;
  Value mEnd = arith::MinUIOp::create(
      mbb, ml, arith::AddIOp::create(mbb, ml, mb, cst(mbb, plan.mc)), mFull);
  Value tiles = arith::DivUIOp::create(
      mbb, ml, arith::SubIOp::create(mbb, ml, mEnd, mb), cst(mbb, mr));
  Value mLast =
      plan.transposedPack
          ? arith::SubIOp::create(mbb, ml, mSize, cst(mbb, 1)).getResult()
          : Value();
  if (plan.transposedPack)
    packATransposed(mbb, ml, batchIvs, k0, mb, tiles, mLast);
  else if (plan.packA)
    packACopy(mbb, ml, batchIvs, k0, mb, tiles);
  scf::buildLoopNest(
      mbb, ml, {zero, mb}, {panels, mEnd}, {cst(mbb, 1), cst(mbb, mr)},
      [&](OpBuilder &tb, Location tl, ValueRange pm) {
        emitTile(tb, tl, batchIvs, k0, panelStart(tb, tl, nb0, pm[0]), pm[0],
                 pm[1], mr, aPack, plan.packA ? mb : Value());
      });
  scf::YieldOp::create(mbb, ml);
}

void MicroKernelEmitter::packATransposed(OpBuilder &mbb, Location ml,
                                         ValueRange batchIvs, Value k0,
                                         Value mb, Value tiles, Value mLast) {
  int64_t lanes = plan.lanes;
  scf::buildLoopNest(
      mbb, ml, {zero, zero}, {tiles, cst(mbb, plan.kBlock)},
      {cst(mbb, 1), cst(mbb, lanes)},
      [&](OpBuilder &pb, Location pl, ValueRange tk) {
        // The tile's rows (then M's last row again: the padding) along K
        // from k0 + kk, transposed: row l is packed step kk + l.
        Value m0 = arith::AddIOp::create(
            pb, pl, mb, arith::MulIOp::create(pb, pl, tk[0], cst(pb, plan.mr)));
        Value kk = arith::AddIOp::create(pb, pl, k0, tk[1]);
        SmallVector<Value> rows;
        for (int64_t i = 0; i < lanes; ++i) {
          Value m = arith::MinUIOp::create(
              pb, pl, arith::AddIOp::create(pb, pl, m0, cst(pb, i)), mLast);
          rows.push_back(vector::LoadOp::create(
              pb, pl, vecType, a, indicesAt(batchIvs, ops.a, m, zero, kk)));
        }
        rows = transposeSquare(pb, pl, rows);
        for (int64_t l = 0; l < lanes; ++l)
          vector::StoreOp::create(
              pb, pl, rows[l], aPack,
              ValueRange{tk[0],
                         arith::AddIOp::create(pb, pl, tk[1], cst(pb, l)),
                         zero});
      });
}

void MicroKernelEmitter::packACopy(OpBuilder &mbb, Location ml,
                                   ValueRange batchIvs, Value k0, Value mb,
                                   Value tiles) {
  int64_t mr = plan.mr;
  scf::buildLoopNest(
      mbb, ml, {zero, zero, zero}, {tiles, cst(mbb, plan.kBlock), cst(mbb, mr)},
      {cst(mbb, 1), cst(mbb, 1), cst(mbb, 1)},
      [&](OpBuilder &pb, Location pl, ValueRange tr) {
        Value m = arith::AddIOp::create(
            pb, pl, mb,
            arith::AddIOp::create(
                pb, pl, arith::MulIOp::create(pb, pl, tr[0], cst(pb, mr)),
                tr[2]));
        Value v = memref::LoadOp::create(
            pb, pl, a,
            indicesAt(batchIvs, ops.a, m, zero,
                      arith::AddIOp::create(pb, pl, k0, tr[1])));
        memref::StoreOp::create(pb, pl, v, aPack,
                                ValueRange{tr[0], tr[1], tr[2]});
      });
}

SmallVector<Value> MicroKernelEmitter::tileAccumulators(
    OpBuilder &tb, Location tl, ValueRange batchIvs, Value k0,
    ArrayRef<Value> mRows, ArrayRef<Value> cols, int64_t rows) {
  int64_t nv = plan.nv;
  auto loadC = [&](OpBuilder &lb, Location ll) {
    SmallVector<Value> init;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < nv; ++j)
        init.push_back(vector::LoadOp::create(
            lb, ll, vecType, c,
            indicesAt(batchIvs, ops.c, mRows[i], cols[j], zero)));
    return init;
  };
  SmallVector<Value> init;
  if (fillValue) {
    // The first K block starts from the fill value.
    Value first =
        arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::eq, k0, zero);
    auto branch = scf::IfOp::create(
        tb, tl, first,
        [&](OpBuilder &ib, Location il) {
          Value splat = vector::BroadcastOp::create(ib, il, vecType, fillValue);
          scf::YieldOp::create(ib, il, SmallVector<Value>(rows * nv, splat));
        },
        [&](OpBuilder &ib, Location il) {
          scf::YieldOp::create(ib, il, loadC(ib, il));
        });
    llvm::append_range(init, branch.getResults());
  } else {
    init = loadC(tb, tl);
  }
  return init;
}

void MicroKernelEmitter::emitTile(OpBuilder &tb, Location tl,
                                  ValueRange batchIvs, Value k0, Value n0,
                                  Value p, Value m0, int64_t rows, Value aBlock,
                                  Value mBegin) {
  int64_t nv = plan.nv, lanes = plan.lanes, unroll = plan.unroll;
  auto indices = [&](OpOperand *operand, Value m, Value nn, Value kk) {
    return indicesAt(batchIvs, operand, m, nn, kk);
  };
  SmallVector<Value> cols, mRows;
  for (int64_t j = 0; j < nv; ++j)
    cols.push_back(
        j == 0 ? n0 : arith::AddIOp::create(tb, tl, n0, cst(tb, j * lanes)));
  for (int64_t i = 0; i < rows; ++i)
    mRows.push_back(i == 0 ? m0
                           : arith::AddIOp::create(tb, tl, m0, cst(tb, i)));
  SmallVector<Value> init =
      tileAccumulators(tb, tl, batchIvs, k0, mRows, cols, rows);
  Value aTile = aBlock ? arith::DivUIOp::create(
                             tb, tl, arith::SubIOp::create(tb, tl, m0, mBegin),
                             cst(tb, plan.mr))
                       : Value();
  auto kLoop = scf::ForOp::create(
      tb, tl, zero, cst(tb, plan.kBlock), cst(tb, unroll), init,
      [&](OpBuilder &kb, Location kl, Value kk0, ValueRange carried) {
        SmallVector<Value> acc(carried);
        for (int64_t u = 0; u < unroll; ++u) {
          Value kk =
              u == 0 ? kk0 : arith::AddIOp::create(kb, kl, kk0, cst(kb, u));
          Value ka = arith::AddIOp::create(kb, kl, k0, kk);
          SmallVector<Value> bRow;
          for (int64_t j = 0; j < nv; ++j)
            bRow.push_back(vector::LoadOp::create(
                kb, kl, vecType, bPack, ValueRange{p, kk, cst(kb, j * lanes)}));
          for (int64_t i = 0; i < rows; ++i) {
            Value s =
                aBlock ? memref::LoadOp::create(
                             kb, kl, aBlock, ValueRange{aTile, kk, cst(kb, i)})
                       : memref::LoadOp::create(
                             kb, kl, a, indices(ops.a, mRows[i], zero, ka));
            Value splat = vector::BroadcastOp::create(kb, kl, vecType, s);
            for (int64_t j = 0; j < nv; ++j)
              acc[i * nv + j] = vector::FMAOp::create(kb, kl, splat, bRow[j],
                                                      acc[i * nv + j]);
          }
        }
        scf::YieldOp::create(kb, kl, acc);
      });
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < nv; ++j)
      vector::StoreOp::create(tb, tl, kLoop.getResult(i * nv + j), c,
                              indices(ops.c, mRows[i], cols[j], zero));
}

void MicroKernelEmitter::emitLastColumns() {
  int64_t n = plan.n, nFull = plan.nFull;
  auto lastColumns = [&](Value mem) -> Value {
    auto type = cast<MemRefType>(mem.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
        strides(rank, rewriter.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(memref::getMixedSize(rewriter, loc, mem, d));
    offsets.back() = rewriter.getIndexAttr(nFull);
    sizes.back() = rewriter.getIndexAttr(n - nFull);
    return memref::SubViewOp::create(rewriter, loc, mem, offsets, sizes,
                                     strides);
  };
  // (By operand number: A and B may be the same value.)
  Value bColumns = lastColumns(b), cColumns = lastColumns(c);
  if (fillValue)
    linalg::FillOp::create(rewriter, loc, fillValue, cColumns);
  Operation *columns = rewriter.clone(*op);
  columns->setOperand(ops.b->getOperandNumber(), bColumns);
  columns->setOperand(ops.c->getOperandNumber(), cColumns);
}

/// Lowers contraction `op` (on buffers, DirectOperands layout, static N
/// and K) to the broadcast-FMA micro-kernel (the pass description has the
/// loop nest): per batch and outer index, K block (KB rows) and N block
/// (NC columns), B's block is packed once, panel by panel ([NC/nr][KB][nr]);
/// per M block A's block is packed `mr` rows side by side; per panel each
/// `mr`-row tile keeps its accumulators in registers across the K block
/// (C loaded before, stored after; with `fill`, the first K block starts
/// from the fill value and the fill is erased); the remaining M % mr rows
/// run one at a time from A itself against the same panels, the last
/// N % nr columns as the op on those columns (loops).
///
/// Packing makes a panel contiguous: B rows N floats apart map to the same
/// cache sets, so an unpacked panel is re-fetched from L3 by every M tile.
/// With 2 vectors per row and mr from registerRows the accumulators, the B
/// row and a broadcast fit the registers (no spills).
void lowerToMicroKernel(RewriterBase &rewriter, linalg::LinalgOp op,
                        const ContractionLoops &loops,
                        const DirectOperands &ops, linalg::FillOp fill,
                        int64_t mr, int64_t nr, int64_t lanes, int64_t kTile) {
  rewriter.setInsertionPoint(op);
  BlockingPlan plan = planBlocking(op, loops, ops, mr, nr, lanes, kTile);
  remarkBlocking(op.getLoc(), plan, fill);
  MicroKernelEmitter emitter(rewriter, op, loops, ops, fill, plan);
  if (plan.nFull > 0)
    emitter.emitPanels();
  // The last N % nr columns: the op on those columns of B and C (after
  // the fill, if one was folded).
  if (plan.nFull < plan.n)
    emitter.emitLastColumns();
  rewriter.eraseOp(op);
  if (fill)
    rewriter.eraseOp(fill);
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
    int64_t mr = registerRows(*target);

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
    // The vector code already here (the fused attention kernels) is not
    // the contractions': the vector lowering patterns below leave it
    // alone (applied to the whole function, unit-dim and transfer patterns
    // on a kernel's transfers need not converge).
    getOperation().walk([&](Operation *op) {
      if (isa<vector::VectorDialect>(op->getDialect()))
        op->setAttr(kKernelVector, UnitAttr::get(&getContext()));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, loops] : ops) {
      if (std::optional<DirectOperands> operands = directOperands(op, loops)) {
        lowerToMicroKernel(rewriter, op, loops, *operands,
                           foldableFill(op, operands->c), mr, nr, target->lanes,
                           kTile);
        continue;
      }
      if (!loops.outer.empty()) {
        emitRemark(op.getLoc())
            << "attn-vectorize-contractions: several M or N dims and B or "
               "the output not contiguous along N: left as loops";
        continue;
      }
      if (failed(tileIntoRegisterTiles(rewriter, op, loops, mr, nr)))
        return signalPassFailure();
    }

    // Static tile sizes where the tiles are whole.
    if (failed(vectorizeRegisterTiles(rewriter)))
      return signalPassFailure();

    // The accumulator tile out of the K loop (hoisting needs transfers on
    // the base buffers, at indices computed outside the loop); then
    // vector.contract to outer products, unit dims dropped.
    hoistKLoopAccumulators(rewriter);
    LogicalResult lowered = lowerContractsToOuterProducts();
    getOperation().walk([&](Operation *op) { op->removeAttr(kKernelVector); });
    if (failed(lowered))
      return signalPassFailure();
  }

  /// Marks the vector ops that were there before the pass.
  static constexpr StringLiteral kKernelVector = "attn.kernel_vector";

  /// Tiles contraction `op` (not in the micro-kernel's layout) into
  /// `mr` x `nr` register tiles with K steps dividing K, loops in the order
  /// batch, N, M, K; marks the tile (kTileMarker) and the K loop
  /// (kLoopMarker), peels the M and N loops so that the main loops' tiles
  /// are whole, and erases `op`. Fails (with an error) if `op` cannot be
  /// tiled.
  LogicalResult tileIntoRegisterTiles(IRRewriter &rewriter, linalg::LinalgOp op,
                                      const ContractionLoops &loops, int64_t mr,
                                      int64_t nr) {
    int64_t numLoops = op.getNumLoops();
    // K steps that divide K (no ragged K tile): k-tile or a power of two
    // below it.
    int64_t k = op.getStaticLoopRanges()[loops.k];
    int64_t kc = ShapedType::isDynamic(k) ? kTile : halveUntilDivides(kTile, k);
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
      return failure();
    }
    emitRemark(op.getLoc())
        << "attn-vectorize-contractions: register tiles of " << mr << " x "
        << nr << " outputs, K steps of " << kc
        << ", vector.contract (B or the output not contiguous along N, or "
           "not a plain multiply-add)";
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
    return success();
  }

  /// Gives the whole register tiles static sizes (affine.min and subview
  /// canonicalization) and vectorizes each tile marked kTileMarker with a
  /// static shape to vector.contract; ragged tiles stay linalg ops. Fails
  /// (with an error) if a tile cannot be vectorized.
  LogicalResult vectorizeRegisterTiles(IRRewriter &rewriter) {
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
        return failure();
      }
      rewriter.eraseOp(tile);
    }
    return success();
  }

  /// Folds the memref aliases into the transfers, hoists loop-invariant
  /// code, CSEs, then moves the accumulator tile out of each K loop marked
  /// kLoopMarker (hoisting needs transfers on the base buffers, at indices
  /// computed outside the loop).
  void hoistKLoopAccumulators(IRRewriter &rewriter) {
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
  }

  /// Lowers vector.contract to outer products, unit dims dropped (and the
  /// transfers' permutation maps lowered); fails if the patterns do not
  /// converge.
  LogicalResult lowerContractsToOuterProducts() {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    // The contractions' vector ops only (and what the patterns create).
    SmallVector<Operation *> mine;
    getOperation().walk([&](Operation *op) {
      if (isa<vector::VectorDialect>(op->getDialect()) &&
          !op->hasAttr(kKernelVector))
        mine.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    return applyOpPatternsGreedily(mine, std::move(patterns), config);
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

int64_t mlir::attn::registerRows(const TargetModel &target) {
  return std::max<int64_t>(1, (target.registers - 3) / 2);
}
