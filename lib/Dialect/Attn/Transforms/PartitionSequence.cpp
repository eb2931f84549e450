//===- PartitionSequence.cpp - Sequence-parallel attention over MPI -----===//
//
// attn-partition-sequence (Passes.td): attn.attention with query, key and
// value sharded along the sequence over a 1-D shard.grid becomes the
// program of one rank: its queries against the key/value blocks passed
// around a ring, the partial results merged through their log-sum-exp.
//
// The pieces:
// - ShardedAttention: what the sharding annotations say (grid, chunks);
// - GlobalMask: the op's mask (pattern and mask region) as a mask region
//   over global positions, compiled for the interval analysis, which
//   decides at run time which rank's queries see which rank's keys;
// - Chunks: where each rank's rows lie in the sequence (contiguous runs or
//   the two runs of the zigzag order), as IR over the gathered row counts;
// - the ring loop: exchange, kernels of the block in hand, merge, wait.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Utils/ModRegionEmitter.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARTITIONSEQUENCE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kSeqDim = 2;
constexpr StringLiteral kOrderAttr = "attn.sequence_order";

//===----------------------------------------------------------------------===//
// The sharding annotations
//===----------------------------------------------------------------------===//

struct ShardedAttention {
  AttentionOp op;
  shard::GridOp grid;
  /// Static chunk offsets (sharded_dims_offsets of the sequence: P + 1
  /// entries), or empty.
  SmallVector<int64_t> staticOffsets;
  bool zigzag = false;
  /// The shard.shard ops of the query, key and value (may repeat).
  SmallVector<shard::ShardOp> operandShards;
  /// The shard.shard ops the results go through.
  SmallVector<shard::ShardOp> resultShards;
};

/// Whether `split` is the sequence split: dimension 2 over grid axis 0 and
/// no other dimension split.
bool isSequenceSplit(shard::GridAxesArrayAttr split) {
  for (auto [d, axes] : llvm::enumerate(split.getAxes())) {
    ArrayRef<int16_t> list = axes.asArrayRef();
    if (static_cast<int64_t>(d) == kSeqDim) {
      if (list.size() != 1 || list[0] != 0)
        return false;
    } else if (!list.empty()) {
      return false;
    }
  }
  return split.size() > kSeqDim;
}

/// The sharding op of a shard.shard, checked for the sequence split over a
/// 1-D grid; null (with a diagnostic on `op`) otherwise.
shard::ShardingOp sequenceSharding(AttentionOp op, shard::ShardOp shardOp,
                                   StringRef what) {
  auto sharding = shardOp.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!sharding) {
    op.emitOpError("attn-partition-sequence: the sharding of the ")
        << what << " is not a shard.sharding op";
    return {};
  }
  if (!isSequenceSplit(sharding.getSplitAxes())) {
    op.emitOpError("attn-partition-sequence: the ")
        << what
        << " must be split along the sequence (dimension 2) over grid axis "
           "0 alone (split_axes = [[], [], [0]])";
    return {};
  }
  if (!sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty()) {
    op.emitOpError("attn-partition-sequence: the sharding of the ")
        << what << " has halo sizes or dynamic chunk offsets (unsupported)";
    return {};
  }
  return sharding;
}

/// What the annotations around `op` say, or failure after a diagnostic.
/// Returns std::nullopt (no diagnostic) for an op that is not sharded.
FailureOr<std::optional<ShardedAttention>> matchSharded(AttentionOp op) {
  Value qkv[] = {op.getQuery(), op.getKey(), op.getValue()};
  const char *names[] = {"query", "key", "value"};
  if (llvm::none_of(qkv,
                    [](Value v) { return v.getDefiningOp<shard::ShardOp>(); }))
    return std::optional<ShardedAttention>();
  ShardedAttention s;
  s.op = op;
  shard::ShardingOp first;
  for (auto [v, name] : llvm::zip(qkv, names)) {
    auto shardOp = v.getDefiningOp<shard::ShardOp>();
    if (!shardOp || shardOp.getAnnotateForUsers()) {
      op.emitOpError("attn-partition-sequence: the ")
          << name
          << " is not sharded like the other operands (shard.shard "
             "of a function argument)";
      return failure();
    }
    shard::ShardingOp sharding = sequenceSharding(op, shardOp, name);
    if (!sharding)
      return failure();
    if (!first) {
      first = sharding;
    } else if (sharding.getGrid() != first.getGrid() ||
               sharding.getStaticShardedDimsOffsets() !=
                   first.getStaticShardedDimsOffsets()) {
      op.emitOpError("attn-partition-sequence: the ")
          << name << " is sharded over another grid or into other chunks";
      return failure();
    }
    if (!isa<BlockArgument>(shardOp.getSrc()) ||
        !isa<func::FuncOp>(
            cast<BlockArgument>(shardOp.getSrc()).getOwner()->getParentOp())) {
      op.emitOpError("attn-partition-sequence: the sharded ")
          << name << " must be an argument of the function";
      return failure();
    }
    s.operandShards.push_back(shardOp);
  }
  s.grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      op, first.getGridAttr());
  if (!s.grid || s.grid.getShape().size() != 1) {
    op.emitOpError("attn-partition-sequence: the grid @")
        << first.getGrid() << " must be a 1-D shard.grid";
    return failure();
  }
  ArrayRef<int64_t> offsets = first.getStaticShardedDimsOffsets();
  if (!offsets.empty()) {
    // One list per split dimension: the sequence is the only one.
    int64_t ranks = s.grid.getShape()[0];
    if (ShapedType::isDynamic(ranks) ||
        static_cast<int64_t>(offsets.size()) != ranks + 1) {
      op.emitOpError("attn-partition-sequence: sharded_dims_offsets needs a "
                     "grid of static size and one offset per rank and the "
                     "end");
      return failure();
    }
    s.staticOffsets.assign(offsets.begin(), offsets.end());
  }
  if (auto order = op->getAttrOfType<StringAttr>(kOrderAttr)) {
    if (order.getValue() != "zigzag" && order.getValue() != "contiguous") {
      op.emitOpError("attn-partition-sequence: ")
          << kOrderAttr << " must be \"contiguous\" or \"zigzag\"";
      return failure();
    }
    s.zigzag = order.getValue() == "zigzag";
    if (s.zigzag && !s.staticOffsets.empty()) {
      op.emitOpError("attn-partition-sequence: the zigzag order cuts the "
                     "sequence itself (no sharded_dims_offsets)");
      return failure();
    }
  }
  for (Value result : op->getResults()) {
    for (Operation *user : result.getUsers()) {
      auto shardOp = dyn_cast<shard::ShardOp>(user);
      if (!shardOp) {
        op.emitOpError("attn-partition-sequence: every use of the results "
                       "must be a shard.shard with the operands' sharding");
        return failure();
      }
      shard::ShardingOp sharding = sequenceSharding(op, shardOp, "result");
      if (!sharding)
        return failure();
      if (sharding.getGrid() != first.getGrid() ||
          sharding.getStaticShardedDimsOffsets() != offsets) {
        op.emitOpError("attn-partition-sequence: the result is sharded "
                       "unlike the operands");
        return failure();
      }
      s.resultShards.push_back(shardOp);
    }
  }
  return std::optional<ShardedAttention>(s);
}

/// The patterns the partitioning evaluates at global positions: causal,
/// window, segments and their unions and intersections.
bool isPartitionablePattern(MaskPatternAttrInterface pattern) {
  if (isa<CausalAttr, WindowAttr, SegmentsAttr>(pattern))
    return true;
  if (isa<UnionAttr, IntersectAttr>(pattern))
    return llvm::all_of(pattern.getSubPatterns(), isPartitionablePattern);
  return false;
}

/// The tensors the rank's mask region reads: the op's captures, then (for
/// a pattern with segments) the query and key segment ids.
SmallVector<Value> regionCaptures(AttentionOp op) {
  SmallVector<Value> captures(op.getCaptures());
  if (Value ids = op.getQuerySegments()) {
    captures.push_back(ids);
    captures.push_back(op.getKeySegments() ? op.getKeySegments() : ids);
  }
  return captures;
}

/// What the partitioning supports of `op`; a diagnostic otherwise.
LogicalResult checkSupported(AttentionOp op) {
  auto refuse = [&](const Twine &what) {
    return op.emitOpError("attn-partition-sequence: ")
           << what << " is not supported with a sharded sequence";
  };
  if (isa<KernelAttr>(op.getNormalizer())) {
    // The linear form: a reduced key/value state, contiguous chunks.
    if (MaskPatternAttrInterface pattern = op.getPatternAttr();
        pattern && !isa<CausalAttr>(pattern))
      return op.emitOpError("attn-partition-sequence: kernelized attention "
                            "with pattern ")
             << pattern
             << " is not supported with a sharded sequence (unmasked or "
                "causal: the state reduces across ranks)";
    if (!op.getMaskMod().empty() || !op.getScoreMod().empty())
      return refuse("kernelized attention with a mask or score region");
    auto order = op->getAttrOfType<StringAttr>(kOrderAttr);
    if (order && order.getValue() == "zigzag")
      return refuse("kernelized attention in the zigzag order (its work is "
                    "balanced in contiguous chunks: drop "
                    "attn.sequence_order)");
    if (ShapedType::isDynamic(
            cast<ShapedType>(op.getQuery().getType()).getDimSize(1)) ||
        ShapedType::isDynamic(
            cast<ShapedType>(op.getKey().getType()).getDimSize(1)))
      return refuse("kernelized attention with a dynamic number of heads");
    if (Value projection = op.getProjection();
        projection && projection.getDefiningOp<shard::ShardOp>())
      return refuse("a sharded FAVOR+ projection (it is replicated)");
  } else if (!isa<SoftmaxAttr, PointwiseAttr>(op.getNormalizer())) {
    return refuse("a normalizer other than softmax, pointwise and kernel");
  } else if (op.getProjection()) {
    return refuse("operand 'projection'");
  }
  if (MaskPatternAttrInterface pattern = op.getPatternAttr())
    if (!isPartitionablePattern(pattern))
      return op.emitOpError("attn-partition-sequence: pattern ")
             << pattern << " is not supported with a sharded sequence";
  Value unsupported[] = {op.getBias(),         op.getGate(),
                         op.getQueryLengths(), op.getKeyLengths(),
                         op.getQueryOffsets(), op.getKeyOffsets(),
                         op.getMask(),         op.getAlibiSlopes(),
                         op.getSinks(),        op.getPageTable()};
  const char *names[] = {
      "bias",        "gate", "query_lengths", "key_lengths", "query_offsets",
      "key_offsets", "mask", "alibi_slopes",  "sinks",       "page_table"};
  for (auto [v, name] : llvm::zip(unsupported, names))
    if (v)
      return refuse(Twine("operand '") + name + "'");
  for (Value ids : {op.getQuerySegments(), op.getKeySegments()})
    if (ids && ids.getDefiningOp<shard::ShardOp>())
      return refuse("sharded segment ids (the ids are replicated: every "
                    "rank reads the whole [B, L] tensor)");
  if (op.getLayoutAttr())
    return refuse("a block layout");
  if (op.getQkNormEpsAttr())
    return refuse("qk-layernorm");
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
    if (!cast<ShapedType>(v.getType()).getElementType().isF32())
      return refuse("an element type other than f32");
  for (Value c : op.getCaptures())
    if (c.getDefiningOp<shard::ShardOp>())
      return refuse("a sharded capture (captures are replicated)");
  auto q = cast<ShapedType>(op.getQuery().getType());
  auto k = cast<ShapedType>(op.getKey().getType());
  if (!ShapedType::isDynamic(q.getDimSize(kSeqDim)) &&
      !ShapedType::isDynamic(k.getDimSize(kSeqDim)) &&
      q.getDimSize(kSeqDim) != k.getDimSize(kSeqDim))
    return refuse("Lq != Lk (self-attention over one sequence only)");
  return success();
}

//===----------------------------------------------------------------------===//
// The mask at global positions
//===----------------------------------------------------------------------===//

/// Fills `region` with a mask region (`isMask`) or score region over
/// positions shifted by captured offsets: arguments (score,) b, h, q, k,
/// then, when `shifted`, a `tensor<2xi64>` of the query and key offsets,
/// then `captureTypes`. The body is the op's pattern (mask region only) and
/// the op's own region `source` (if any), both at positions `q + offset[0]`
/// and `k + offset[1]`. Returns false when there is nothing to evaluate
/// (no pattern, no source region): the region stays empty.
bool buildShiftedRegion(OpBuilder &builder, Location loc, Region &region,
                        bool isMask, MaskPatternAttrInterface pattern,
                        Region *source, bool shifted, TypeRange captureTypes) {
  if (!source && (!isMask || !pattern))
    return false;
  OpBuilder::InsertionGuard guard(builder);
  MLIRContext *ctx = builder.getContext();
  Type index = builder.getIndexType();
  SmallVector<Type> argTypes;
  if (!isMask)
    argTypes.push_back(Float32Type::get(ctx));
  argTypes.append(4, index);
  if (shifted)
    argTypes.push_back(RankedTensorType::get({2}, builder.getI64Type()));
  argTypes.append(captureTypes.begin(), captureTypes.end());
  Block *block = builder.createBlock(
      &region, {}, argTypes, SmallVector<Location>(argTypes.size(), loc));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(block);
  unsigned lead = isMask ? 0 : 1;
  Value q = block->getArgument(lead + 2), k = block->getArgument(lead + 3);
  unsigned firstCapture = lead + 4;
  if (shifted) {
    Value offsets = block->getArgument(lead + 4);
    auto at = [&](int64_t i) {
      Value c = arith::ConstantIndexOp::create(b, i);
      Value v = tensor::ExtractOp::create(b, offsets, ValueRange{c});
      return arith::IndexCastOp::create(b, index, v).getResult();
    };
    q = arith::AddIOp::create(b, q, at(0));
    k = arith::AddIOp::create(b, k, at(1));
    ++firstCapture;
  }
  Value result;
  if (isMask && pattern) {
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, v).getResult();
    };
    using P = arith::CmpIPredicate;
    // The segment ids come after the op's own captures (regionCaptures).
    unsigned segments = firstCapture + captureTypes.size() - 2;
    Value batch = block->getArgument(lead);
    std::function<Value(MaskPatternAttrInterface)> emit =
        [&](MaskPatternAttrInterface p) -> Value {
      if (isa<CausalAttr>(p))
        return arith::CmpIOp::create(b, P::sle, k, q);
      if (auto window = dyn_cast<WindowAttr>(p)) {
        Value d = arith::SubIOp::create(b, k, q);
        Value lo =
            arith::CmpIOp::create(b, P::sge, d, cst(-window.getBefore()));
        Value hi = arith::CmpIOp::create(b, P::sle, d, cst(window.getAfter()));
        return arith::AndIOp::create(b, lo, hi);
      }
      if (isa<SegmentsAttr>(p)) {
        Value sq = tensor::ExtractOp::create(b, block->getArgument(segments),
                                             ValueRange{batch, q});
        Value sk = tensor::ExtractOp::create(
            b, block->getArgument(segments + 1), ValueRange{batch, k});
        return arith::CmpIOp::create(b, P::eq, sq, sk);
      }
      bool any = isa<UnionAttr>(p);
      Value acc;
      for (MaskPatternAttrInterface sub : p.getSubPatterns()) {
        Value v = emit(sub);
        acc = !acc  ? v
              : any ? arith::OrIOp::create(b, acc, v).getResult()
                    : arith::AndIOp::create(b, acc, v).getResult();
      }
      return acc;
    };
    result = emit(pattern);
  }
  if (source) {
    Block &src = source->front();
    IRMapping map;
    for (unsigned i = 0; i < src.getNumArguments(); ++i) {
      Value to;
      if (i < lead)
        to = block->getArgument(i);
      else if (i == lead + 2)
        to = q;
      else if (i == lead + 3)
        to = k;
      else if (i < lead + 4)
        to = block->getArgument(i);
      else
        to = block->getArgument(firstCapture + (i - lead - 4));
      map.map(src.getArgument(i), to);
    }
    for (Operation &op : src.without_terminator())
      b.clone(op, map);
    Value yielded = map.lookup(src.getTerminator()->getOperand(0));
    result = result ? arith::AndIOp::create(b, result, yielded).getResult()
                    : yielded;
  }
  YieldOp::create(b, result);
  return true;
}

//===----------------------------------------------------------------------===//
// The program of one rank
//===----------------------------------------------------------------------===//

/// Builds the partitioned computation of one sharded attention op.
class RankProgram {
public:
  RankProgram(ShardedAttention &s, const ModProgram *mask)
      : s(s), op(s.op), mask(mask), b(op.getLoc(), op) {}

  /// Emits everything; returns the local result and log-sum-exp.
  std::pair<Value, Value> build(Value q, Value k, Value v);

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value i32(Value index) {
    return arith::IndexCastOp::create(b, b.getI32Type(), index);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mod(Value x, Value m) { return arith::RemUIOp::create(b, x, m); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value rowsOf(Value rank) {
    Value e = tensor::ExtractOp::create(b, sizes, ValueRange{rank});
    return arith::IndexCastOp::create(b, b.getIndexType(), e);
  }
  /// The offsets, sizes and strides of rows [row, row + rows) (dim 2) of
  /// a [B, H, L, D] or [B, H, L] tensor.
  struct RowWindow {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  RowWindow rowWindow(Value t, Value row, Value rows) {
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
  /// Rows [row, row + rows) of a [B, H, L, D] tensor; of `t`'s own type
  /// when `keepType` (a block the ring passes on), else the inferred one.
  Value rowSlice(Value t, Value row, Value rows, bool keepType = false) {
    RowWindow w = rowWindow(t, row, rows);
    if (keepType)
      return tensor::ExtractSliceOp::create(b,
                                            cast<RankedTensorType>(t.getType()),
                                            t, w.offsets, w.sizes, w.strides);
    return tensor::ExtractSliceOp::create(b, t, w.offsets, w.sizes, w.strides)
        .getResult();
  }

  /// The two runs of rank `rank`'s rows: (global start, length); the
  /// second has length 0 in the contiguous order.
  struct Runs {
    Value start[2], length[2];
  };
  Runs runsOf(Value rank);
  /// Whether some query of global rows [qStart, qStart + qLength) may see
  /// some key of [kStart, kStart + kLength) (false when either is empty).
  Value mayMeet(Value qStart, Value qLength, Value kStart, Value kLength);
  /// Whether the queries of rank `dst` see some key of rank `src`.
  Value needs(Value dst, Value src);
  /// Whether one of the `count` ranks after `from` needs the keys of `src`.
  Value neededAfter(Value src, Value from, Value count);
  /// The checks of the gathered sizes; true when all hold.
  Value checkSizes(Value kvBad);
  /// Kernel of the local queries against the block of rank `origin`
  /// (rows `held` of the sequence), merged into the accumulators.
  std::pair<Value, Value> computeBlock(Value q, Value kBlock, Value vBlock,
                                       const Runs &held, Value accO,
                                       Value accL);
  /// The key rows [lo, hi) that queries [qStart, qEnd) may see by the
  /// op's pattern (a superset of what its mask allows): null bounds are
  /// unbounded.
  std::pair<Value, Value> keyBounds(MaskPatternAttrInterface pattern,
                                    Value qStart, Value qEnd);
  /// Whether the pattern bounds the keys a query sees (the ring then
  /// trims blocks to those rows: contiguous order).
  bool trims();
  /// The rows (start, length) of rank `src`'s keys that the queries of the
  /// `count` ranks after `from` need, by keyBounds: the hull of their
  /// bounds within `src`'s chunk (length 0 when none needs a row).
  Runs keepRows(Value src, Value from, Value count);
  /// Adds `o` to the accumulator's local rows [row, row + rows).
  Value accumulate(Value accO, Value o, Value row, Value rows);
  /// `acc * factor` (f32 scalar), elementwise.
  Value scaled(Value acc, Value factor);
  /// Merges (o, l) over local rows [row, row + rows) into the accumulators.
  std::pair<Value, Value> merge(Value accO, Value accL, Value o, Value l,
                                Value row, Value rows);

  ShardedAttention &s;
  AttentionOp op;
  const ModProgram *mask;
  ImplicitLocOpBuilder b;
  Value comm, rank, numRanks, sizes, total;
  /// This rank's queries (the batch size is read from them).
  Value localQuery;
};

RankProgram::Runs RankProgram::runsOf(Value r) {
  Runs runs;
  if (!s.zigzag) {
    // Prefix sum of the sizes before `r`.
    auto loop = scf::ForOp::create(b, cst(0), r, cst(1), ValueRange{cst(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value acc =
          add(loop.getRegionIterArgs()[0], rowsOf(loop.getInductionVar()));
      scf::YieldOp::create(b, acc);
    }
    runs.start[0] = loop.getResult(0);
    runs.length[0] = rowsOf(r);
    runs.start[1] = cst(0);
    runs.length[1] = cst(0);
    return runs;
  }
  // 2P near-equal chunks, the first (L mod 2P) one row longer.
  Value chunks = arith::MulIOp::create(b, numRanks, cst(2));
  Value base = arith::DivUIOp::create(b, total, chunks);
  Value extra = arith::RemUIOp::create(b, total, chunks);
  auto chunk = [&](Value j, Value &start, Value &length) {
    start = add(arith::MulIOp::create(b, j, base),
                arith::MinUIOp::create(b, j, extra));
    length = add(
        base, select(cmp(arith::CmpIPredicate::ult, j, extra), cst(1), cst(0)));
  };
  chunk(r, runs.start[0], runs.length[0]);
  chunk(sub(sub(chunks, cst(1)), r), runs.start[1], runs.length[1]);
  return runs;
}

Value RankProgram::mayMeet(Value qStart, Value qLength, Value kStart,
                           Value kLength) {
  Value nonEmpty =
      arith::AndIOp::create(b, cmp(arith::CmpIPredicate::ugt, qLength, cst(0)),
                            cmp(arith::CmpIPredicate::ugt, kLength, cst(0)));
  if (!mask)
    return nonEmpty;
  CaptureAccess access;
  SmallVector<Value> captures = regionCaptures(op);
  access.dim = [&](ImplicitLocOpBuilder &ib, unsigned c, unsigned d) {
    return tensor::DimOp::create(ib, captures[c], d).getResult();
  };
  access.read = [&](ImplicitLocOpBuilder &ib, unsigned c, ValueRange at) {
    return tensor::ExtractOp::create(ib, captures[c], at).getResult();
  };
  // The box of the pair, over every batch row and head (a mask reading them
  // is judged for all: an interval over them); lengths of 0 give an empty
  // pair (masked by nonEmpty), so clamp the last position to the start.
  auto last = [&](Value start, Value length) {
    return sub(add(start, arith::MaxUIOp::create(b, length, cst(1))), cst(1));
  };
  Value lastBatch =
      sub(arith::MaxUIOp::create(
              b, tensor::DimOp::create(b, localQuery, 0).getResult(), cst(1)),
          cst(1));
  Value lastHead =
      cst(std::max<int64_t>(
              cast<ShapedType>(op.getQuery().getType()).getDimSize(1), 1) -
          1);
  MaskEmitter::TileKind kind = emitMaskTileKind(
      b, *mask, cst(0), lastBatch, cst(0), lastHead, qStart,
      last(qStart, qLength), kStart, last(kStart, kLength), access);
  return arith::AndIOp::create(b, nonEmpty, kind.any);
}

Value RankProgram::needs(Value dst, Value src) {
  Runs qr = runsOf(dst), kr = runsOf(src);
  Value any = arith::ConstantIntOp::create(b, 0, 1);
  for (int a = 0; a < (s.zigzag ? 2 : 1); ++a)
    for (int c = 0; c < (s.zigzag ? 2 : 1); ++c)
      any = arith::OrIOp::create(
          b, any,
          mayMeet(qr.start[a], qr.length[a], kr.start[c], kr.length[c]));
  return any;
}

Value RankProgram::neededAfter(Value src, Value from, Value count) {
  auto loop =
      scf::ForOp::create(b, cst(1), add(count, cst(1)), cst(1),
                         ValueRange{arith::ConstantIntOp::create(b, 0, 1)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value dst = mod(add(from, loop.getInductionVar()), numRanks);
  Value any =
      arith::OrIOp::create(b, loop.getRegionIterArgs()[0], needs(dst, src));
  scf::YieldOp::create(b, any);
  b.setInsertionPointAfter(loop);
  return loop.getResult(0);
}

Value RankProgram::checkSizes(Value kvBad) {
  Value ok = arith::ConstantIntOp::create(b, 1, 1);
  auto report = [&](Value failed, RuntimeError code, Value x, Value y,
                    Value z) {
    auto ifOp = scf::IfOp::create(b, failed, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitRuntimeError(b, op, static_cast<int32_t>(code), x, y, z);
  };
  int64_t staticRanks = s.grid.getShape()[0];
  if (!ShapedType::isDynamic(staticRanks)) {
    Value wrong = cmp(arith::CmpIPredicate::ne, numRanks, cst(staticRanks));
    report(wrong, RuntimeError::SequenceRanks, numRanks, cst(staticRanks),
           cst(0));
    ok = arith::AndIOp::create(
        b, ok,
        arith::XOrIOp::create(b, wrong, arith::ConstantIntOp::create(b, 1, 1)));
  }
  // Key/value rows that differ from the query rows on some rank.
  Value bad = cmp(arith::CmpIPredicate::ne, kvBad, cst(0));
  report(bad, RuntimeError::SequenceChunk, cst(-1), kvBad, cst(-1));
  ok = arith::AndIOp::create(
      b, ok,
      arith::XOrIOp::create(b, bad, arith::ConstantIntOp::create(b, 1, 1)));
  // The rows each rank must hold.
  auto qType = cast<ShapedType>(op.getQuery().getType());
  int64_t globalRows = qType.getDimSize(kSeqDim);
  bool expectRows = s.zigzag || !s.staticOffsets.empty() ||
                    (!ShapedType::isDynamic(globalRows) &&
                     !ShapedType::isDynamic(staticRanks));
  if (!expectRows)
    return ok;
  auto guardOk = scf::IfOp::create(b, b.getI1Type(), ok, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(guardOk.elseBlock());
    scf::YieldOp::create(b, ok);
    b.setInsertionPointToStart(guardOk.thenBlock());
    auto loop = scf::ForOp::create(b, cst(0), numRanks, cst(1), ValueRange{ok});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value r = loop.getInductionVar();
      Value expected;
      if (s.zigzag) {
        Runs runs = runsOf(r);
        expected = add(runs.length[0], runs.length[1]);
      } else if (!s.staticOffsets.empty()) {
        SmallVector<int64_t> lengths;
        for (size_t i = 0; i + 1 < s.staticOffsets.size(); ++i)
          lengths.push_back(s.staticOffsets[i + 1] - s.staticOffsets[i]);
        Value table = arith::ConstantOp::create(
            b, DenseIntElementsAttr::get(
                   RankedTensorType::get({static_cast<int64_t>(lengths.size())},
                                         b.getI64Type()),
                   ArrayRef<int64_t>(lengths)));
        expected = arith::IndexCastOp::create(
            b, b.getIndexType(),
            tensor::ExtractOp::create(b, table, ValueRange{r}));
      } else {
        // The balanced split: the first L mod P ranks one row longer.
        Value base = cst(globalRows / staticRanks);
        expected = add(base, select(cmp(arith::CmpIPredicate::ult, r,
                                        cst(globalRows % staticRanks)),
                                    cst(1), cst(0)));
      }
      Value got = rowsOf(r);
      Value wrong = cmp(arith::CmpIPredicate::ne, got, expected);
      report(wrong, RuntimeError::SequenceChunk, r, got, expected);
      Value still = arith::AndIOp::create(
          b, loop.getRegionIterArgs()[0],
          arith::XOrIOp::create(b, wrong,
                                arith::ConstantIntOp::create(b, 1, 1)));
      scf::YieldOp::create(b, still);
    }
    scf::YieldOp::create(b, loop.getResult(0));
  }
  return guardOk.getResult(0);
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
  AffineMap drop3 =
      AffineMap::get(4, 0,
                     {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                      getAffineDimExpr(2, ctx)},
                     ctx);
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

std::pair<Value, Value> RankProgram::keyBounds(MaskPatternAttrInterface p,
                                               Value qStart, Value qEnd) {
  auto bound = [&](Value x, int64_t d) {
    return arith::AddIOp::create(b, x, cst(d)).getResult();
  };
  if (!p || isa<SegmentsAttr>(p))
    return {Value(), Value()};
  if (isa<CausalAttr>(p))
    return {Value(), qEnd};
  if (auto w = dyn_cast<WindowAttr>(p))
    return {bound(qStart, -w.getBefore()), bound(qEnd, w.getAfter())};
  bool all = isa<IntersectAttr>(p);
  std::optional<std::pair<Value, Value>> acc;
  for (MaskPatternAttrInterface sub : p.getSubPatterns()) {
    auto [lo, hi] = keyBounds(sub, qStart, qEnd);
    if (!acc) {
      acc = {lo, hi};
      continue;
    }
    auto combine = [&](Value x, Value y, bool lower) -> Value {
      // Intersection: the tighter bound (an absent one is no bound);
      // union: the looser (an absent one is unbounded).
      if (!x || !y)
        return all ? (x ? x : y) : Value();
      bool max = all == lower;
      return max ? arith::MaxSIOp::create(b, x, y).getResult()
                 : arith::MinSIOp::create(b, x, y).getResult();
    };
    acc = {combine(acc->first, lo, true), combine(acc->second, hi, false)};
  }
  return *acc;
}

bool RankProgram::trims() {
  if (s.zigzag || !op.getPatternAttr())
    return false;
  // Whether keyBounds gives some bound (decided on the attribute: whether
  // the (lower, upper) bound exists, as keyBounds combines them).
  std::function<std::pair<bool, bool>(MaskPatternAttrInterface)> bounded =
      [&](MaskPatternAttrInterface p) -> std::pair<bool, bool> {
    if (isa<SegmentsAttr>(p))
      return {false, false};
    if (isa<CausalAttr>(p))
      return {false, true};
    if (isa<WindowAttr>(p))
      return {true, true};
    bool all = isa<IntersectAttr>(p);
    std::pair<bool, bool> acc = {!all, !all};
    for (MaskPatternAttrInterface sub : p.getSubPatterns()) {
      auto [lo, hi] = bounded(sub);
      acc = all ? std::make_pair(acc.first || lo, acc.second || hi)
                : std::make_pair(acc.first && lo, acc.second && hi);
    }
    return acc;
  };
  auto [lo, hi] = bounded(op.getPatternAttr());
  return lo || hi;
}

RankProgram::Runs RankProgram::keepRows(Value src, Value from, Value count) {
  Runs kr = runsOf(src);
  Value ka = kr.start[0], kb = add(kr.start[0], kr.length[0]);
  auto loop = scf::ForOp::create(b, cst(1), add(count, cst(1)), cst(1),
                                 ValueRange{kb, ka});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value dst = mod(add(from, loop.getInductionVar()), numRanks);
    Runs qr = runsOf(dst);
    auto [lo, hi] = keyBounds(op.getPatternAttr(), qr.start[0],
                              add(qr.start[0], qr.length[0]));
    // Within the chunk; an empty query run needs nothing.
    Value l = lo ? arith::MaxSIOp::create(b, lo, ka).getResult() : ka;
    Value h = hi ? arith::MinSIOp::create(b, hi, kb).getResult() : kb;
    Value some = arith::AndIOp::create(
        b, cmp(arith::CmpIPredicate::slt, l, h),
        cmp(arith::CmpIPredicate::ugt, qr.length[0], cst(0)));
    ValueRange acc = loop.getRegionIterArgs();
    scf::YieldOp::create(
        b,
        ValueRange{select(some, arith::MinSIOp::create(b, acc[0], l), acc[0]),
                   select(some, arith::MaxSIOp::create(b, acc[1], h), acc[1])});
  }
  Value lo = loop.getResult(0), hi = loop.getResult(1);
  Runs keep;
  Value any = cmp(arith::CmpIPredicate::slt, lo, hi);
  keep.start[0] = select(any, lo, ka);
  keep.length[0] = select(any, sub(hi, lo), cst(0));
  keep.start[1] = kb;
  keep.length[1] = cst(0);
  return keep;
}

std::pair<Value, Value> RankProgram::computeBlock(Value q, Value kBlock,
                                                  Value vBlock,
                                                  const Runs &held, Value accO,
                                                  Value accL) {
  Runs qr = runsOf(rank), kr = held;
  SmallVector<Value> captures = regionCaptures(op);
  int runs = s.zigzag ? 2 : 1;
  for (int a = 0; a < runs; ++a) {
    Value qRow = a == 0 ? cst(0) : qr.length[0];
    for (int c = 0; c < runs; ++c) {
      Value kRow = c == 0 ? cst(0) : kr.length[0];
      Value run = mayMeet(qr.start[a], qr.length[a], kr.start[c], kr.length[c]);
      auto ifOp = scf::IfOp::create(
          b, TypeRange{accO.getType(), accL.getType()}, run, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, ValueRange{accO, accL});
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value qs = rowSlice(q, qRow, qr.length[a]);
        Value ks = rowSlice(kBlock, kRow, kr.length[c]);
        Value vs = rowSlice(vBlock, kRow, kr.length[c]);
        auto toI64 = [&](Value x) {
          return arith::IndexCastOp::create(b, b.getI64Type(), x).getResult();
        };
        Value offsets = tensor::FromElementsOp::create(
            b, RankedTensorType::get({2}, b.getI64Type()),
            ValueRange{toI64(qr.start[a]), toI64(kr.start[c])});
        bool hasMask = mask != nullptr;
        bool hasScore = !op.getScoreMod().empty();
        SmallVector<Value> stepCaptures;
        if (hasMask || hasScore)
          stepCaptures.push_back(offsets);
        if (hasMask || hasScore)
          stepCaptures.append(captures.begin(), captures.end());
        auto qsType = cast<RankedTensorType>(qs.getType());
        auto vsType = cast<RankedTensorType>(vs.getType());
        auto resultType =
            RankedTensorType::get({qsType.getDimSize(0), qsType.getDimSize(1),
                                   qsType.getDimSize(2), vsType.getDimSize(3)},
                                  b.getF32Type());
        // Softmax blocks bring their log-sum-exp for the merge; pointwise
        // blocks add up (their Lk^-alpha factor, of the whole sequence, is
        // applied once at the end).
        auto pointwise = dyn_cast<PointwiseAttr>(op.getNormalizer());
        Type lseType;
        NormalizerAttrInterface normalizer = op.getNormalizer();
        if (pointwise)
          normalizer = PointwiseAttr::get(b.getContext(), pointwise.getFn(),
                                          llvm::APFloat(0.0));
        else
          lseType =
              RankedTensorType::get({qsType.getDimSize(0), qsType.getDimSize(1),
                                     qsType.getDimSize(2)},
                                    b.getF32Type());
        auto step = AttentionOp::create(
            b, resultType, lseType, qs, ks, vs, Value(), Value(), Value(),
            Value(), Value(), Value(), Value(), Value(), Value(), Value(),
            Value(), Value(), Value(), stepCaptures, normalizer,
            MaskPatternAttrInterface(), op.getScaleAttr(), FloatAttr(),
            op.getSoftcapAttr(), BlockLayoutAttr());
        TypeRange captureTypes = TypeRange(ValueRange(captures));
        if (hasMask)
          buildShiftedRegion(
              b, op.getLoc(), step.getMaskMod(), true, op.getPatternAttr(),
              op.getMaskMod().empty() ? nullptr : &op.getMaskMod(), true,
              captureTypes);
        if (hasScore)
          buildShiftedRegion(b, op.getLoc(), step.getScoreMod(), false, {},
                             &op.getScoreMod(), true, captureTypes);
        b.setInsertionPointAfter(step);
        if (pointwise) {
          Value o = accumulate(accO, step.getResult(), qRow, qr.length[a]);
          scf::YieldOp::create(b, ValueRange{o, accL});
        } else {
          auto [o, l] = merge(accO, accL, step.getResult(), step.getLse(), qRow,
                              qr.length[a]);
          scf::YieldOp::create(b, ValueRange{o, l});
        }
      }
      accO = ifOp.getResult(0);
      accL = ifOp.getResult(1);
    }
  }
  return {accO, accL};
}

std::pair<Value, Value> RankProgram::build(Value q, Value k, Value v) {
  MLIRContext *ctx = b.getContext();
  Type index = b.getIndexType();
  localQuery = q;
  comm = mpi::CommWorldOp::create(b, mpi::CommType::get(ctx));
  rank = arith::IndexCastOp::create(
      b, index,
      mpi::CommRankOp::create(b, Type(), b.getI32Type(), comm).getRank());
  // The number of ranks: the sum of a 1 from each (MLIR 22 lowers no
  // mpi.comm_size).
  {
    auto oneType = RankedTensorType::get({1}, b.getI64Type());
    Value one = tensor::FromElementsOp::create(
        b, oneType, ValueRange{arith::ConstantIntOp::create(b, 1, 64)});
    Value buffer = tensor::EmptyOp::create(b, oneType.getShape(),
                                           b.getI64Type(), ValueRange{});
    Value count =
        AllReduceOp::create(b, oneType, one, buffer, comm).getResult();
    numRanks = arith::IndexCastOp::create(
        b, index, tensor::ExtractOp::create(b, count, ValueRange{cst(0)}));
  }
  Value rows = tensor::DimOp::create(b, q, kSeqDim);
  Value kvBadHere = arith::ExtUIOp::create(
      b, b.getI64Type(),
      arith::OrIOp::create(b,
                           cmp(arith::CmpIPredicate::ne,
                               tensor::DimOp::create(b, k, kSeqDim), rows),
                           cmp(arith::CmpIPredicate::ne,
                               tensor::DimOp::create(b, v, kSeqDim), rows)));
  // Every rank's row count (entry r) and the number of ranks whose keys
  // or values have other rows than their queries (entry P).
  auto sizesType =
      RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
  Value slots = add(numRanks, cst(1));
  Value rowsI64 = arith::IndexCastOp::create(b, b.getI64Type(), rows);
  Value mine = tensor::GenerateOp::create(
      b, sizesType, ValueRange{slots},
      [&](OpBuilder &nb, Location loc, ValueRange at) {
        Value zero = arith::ConstantIntOp::create(nb, loc, 0, 64);
        Value isMe = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                           at[0], rank);
        Value isLast = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                             at[0], numRanks);
        Value v1 = arith::SelectOp::create(nb, loc, isMe, rowsI64, zero);
        Value v2 = arith::SelectOp::create(nb, loc, isLast, kvBadHere, v1);
        tensor::YieldOp::create(nb, loc, v2);
      });
  Value into = tensor::EmptyOp::create(b, sizesType.getShape(), b.getI64Type(),
                                       ValueRange{slots});
  sizes = AllReduceOp::create(b, sizesType, mine, into, comm).getResult();
  Value kvBad = rowsOf(numRanks);
  // The sequence length (the zigzag chunks).
  auto pointwise = dyn_cast<PointwiseAttr>(op.getNormalizer());
  if (s.zigzag || pointwise) {
    auto loop =
        scf::ForOp::create(b, cst(0), numRanks, cst(1), ValueRange{cst(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, add(loop.getRegionIterArgs()[0], rowsOf(loop.getInductionVar())));
    b.setInsertionPointAfter(loop);
    total = loop.getResult(0);
  }
  Value ok = checkSizes(kvBad);

  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  SmallVector<Value> batchDyn;
  if (qType.isDynamicDim(0))
    batchDyn.push_back(tensor::DimOp::create(b, q, 0));
  auto accOType =
      RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                             ShapedType::kDynamic, vType.getDimSize(3)},
                            b.getF32Type());
  auto accLType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), ShapedType::kDynamic},
      b.getF32Type());
  auto ifOk = scf::IfOp::create(b, TypeRange{accOType, accLType}, ok, true);
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> dynO = batchDyn, dynL = batchDyn;
    dynO.push_back(rows);
    dynL.push_back(rows);
    b.setInsertionPointToStart(ifOk.elseBlock());
    scf::YieldOp::create(
        b, ValueRange{tensor::EmptyOp::create(b, accOType.getShape(),
                                              b.getF32Type(), dynO),
                      tensor::EmptyOp::create(b, accLType.getShape(),
                                              b.getF32Type(), dynL)});
    b.setInsertionPointToStart(ifOk.thenBlock());
    if (isa<KernelAttr>(op.getNormalizer())) {
      // Linear attention: no ring, the key/value state reduces.
      Value out = buildLinearRankProgram(b, op, q, k, v, comm, rank, numRanks);
      scf::YieldOp::create(
          b, ValueRange{out, tensor::EmptyOp::create(b, accLType.getShape(),
                                                     b.getF32Type(), dynL)});
      return {ifOk.getResult(0), ifOk.getResult(1)};
    }
    Value zeroF = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
    Value ninf = arith::ConstantOp::create(
        b, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value accO = linalg::FillOp::create(
                     b, zeroF,
                     ValueRange{tensor::EmptyOp::create(b, accOType.getShape(),
                                                        b.getF32Type(), dynO)})
                     .getResult(0);
    Value accL = linalg::FillOp::create(
                     b, ninf,
                     ValueRange{tensor::EmptyOp::create(b, accLType.getShape(),
                                                        b.getF32Type(), dynL)})
                     .getResult(0);
    auto ring = scf::ForOp::create(b, cst(0), numRanks, cst(1),
                                   ValueRange{k, v, accO, accL});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ring.getBody());
      Value t = ring.getInductionVar();
      ValueRange iter = ring.getRegionIterArgs();
      Value kCur = iter[0], vCur = iter[1];
      // The block in hand came from rank (r - t) mod P; the next one
      // (from r - 1) from (r - t - 1) mod P.
      Value origin = mod(sub(add(rank, numRanks), t), numRanks);
      Value prev = mod(sub(add(rank, numRanks), cst(1)), numRanks);
      Value next = mod(add(rank, cst(1)), numRanks);
      Value nextOrigin = mod(sub(add(origin, numRanks), cst(1)), numRanks);
      Value more = cmp(arith::CmpIPredicate::ult, add(t, cst(1)), numRanks);
      Value remaining = sub(sub(numRanks, cst(1)), t);
      auto guarded = [&](Value cond, function_ref<Value()> then) {
        auto ifOp = scf::IfOp::create(b, b.getI1Type(), cond, true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, then());
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b,
                             arith::ConstantIntOp::create(b, 0, 1).getResult());
        return ifOp.getResult(0);
      };
      Value send =
          guarded(more, [&] { return neededAfter(origin, rank, remaining); });
      Value receive = guarded(
          more, [&] { return neededAfter(nextOrigin, prev, remaining); });
      // The rows in hand and the rows that travel on. Without trimming:
      // whole chunks. With a pattern that bounds the keys (causal, window;
      // contiguous order): the rows the ranks still on the block's way
      // need (a window's halo), which sender and receiver compute alike.
      Runs held = runsOf(origin);
      Value sendOffset = cst(0), sendRows = rowsOf(rank);
      Value inRows = rowsOf(nextOrigin);
      if (trims()) {
        Runs whole = runsOf(rank);
        Runs kept = keepRows(origin, prev, sub(numRanks, t));
        Value first = cmp(arith::CmpIPredicate::eq, t, cst(0));
        held.start[0] = select(first, whole.start[0], kept.start[0]);
        held.length[0] = select(first, whole.length[0], kept.length[0]);
        Runs out = keepRows(origin, rank, remaining);
        Runs in = keepRows(nextOrigin, prev, remaining);
        send = arith::AndIOp::create(
            b, send, cmp(arith::CmpIPredicate::ugt, out.length[0], cst(0)));
        receive = arith::AndIOp::create(
            b, receive, cmp(arith::CmpIPredicate::ugt, in.length[0], cst(0)));
        sendOffset = select(send, sub(out.start[0], held.start[0]), cst(0));
        sendRows = out.length[0];
        inRows = in.length[0];
      }
      sendRows = select(send, sendRows, cst(0));
      inRows = select(receive, inRows, cst(0));
      Value none = cst(-1);
      Value dest = i32(select(send, next, none));
      Value source = i32(select(receive, prev, none));
      Value kOut = trims() ? rowSlice(kCur, sendOffset, sendRows, true) : kCur;
      Value vOut = trims() ? rowSlice(vCur, sendOffset, sendRows, true) : vCur;
      auto exchange = [&](Value block, int32_t tag) {
        auto type = cast<RankedTensorType>(block.getType());
        SmallVector<Value> dyn;
        if (type.isDynamicDim(0))
          dyn.push_back(tensor::DimOp::create(b, block, 0));
        dyn.push_back(inRows);
        Value buffer = tensor::EmptyOp::create(b, type.getShape(),
                                               type.getElementType(), dyn);
        Value tagValue = arith::ConstantIntOp::create(b, tag, 32);
        return ExchangeOp::create(b, type, mpi::RequestType::get(ctx),
                                  mpi::RequestType::get(ctx), block, buffer,
                                  dest, source, tagValue, comm);
      };
      ExchangeOp kEx = exchange(kOut, 1);
      ExchangeOp vEx = exchange(vOut, 2);
      // The kernels of the block in hand, when this rank needs it.
      Value use = needs(rank, origin);
      auto compute =
          scf::IfOp::create(b, TypeRange{accOType, accLType}, use, true);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(compute.elseBlock());
        scf::YieldOp::create(b, ValueRange{iter[2], iter[3]});
        b.setInsertionPointToStart(compute.thenBlock());
        auto [o, l] = computeBlock(q, kCur, vCur, held, iter[2], iter[3]);
        scf::YieldOp::create(b, ValueRange{o, l});
      }
      Value kNext =
          ExchangeWaitOp::create(b, kCur.getType(), kEx.getIncoming(), kOut,
                                 kEx.getSendRequest(), kEx.getRecvRequest())
              .getResult();
      Value vNext =
          ExchangeWaitOp::create(b, vCur.getType(), vEx.getIncoming(), vOut,
                                 vEx.getSendRequest(), vEx.getRecvRequest())
              .getResult();
      scf::YieldOp::create(b, ValueRange{kNext, vNext, compute.getResult(0),
                                         compute.getResult(1)});
    }
    Value out = ring.getResult(2);
    double alpha = pointwise ? pointwise.getAlpha().convertToDouble() : 0.0;
    if (alpha != 0.0) {
      // Lk^-alpha of the whole sequence.
      Value length = arith::UIToFPOp::create(
          b, b.getF32Type(),
          arith::IndexCastOp::create(b, b.getI64Type(), total));
      Value factor = math::PowFOp::create(
          b, length,
          arith::ConstantOp::create(
              b, b.getF32FloatAttr(static_cast<float>(-alpha))));
      out = scaled(out, factor);
    }
    scf::YieldOp::create(b, ValueRange{out, ring.getResult(3)});
  }
  return {ifOk.getResult(0), ifOk.getResult(1)};
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The local type of a sharded value: the sequence dimension dynamic.
Type localType(Type t) {
  auto type = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(type.getShape());
  shape[kSeqDim] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, type.getElementType());
}

struct AttnPartitionSequence
    : public attn::impl::AttnPartitionSequenceBase<AttnPartitionSequence> {
  using AttnPartitionSequenceBase::AttnPartitionSequenceBase;

  void runOnOperation() override {
    if (replicate) {
      // The whole op on every rank: the annotations go.
      SmallVector<shard::ShardOp> shards;
      getOperation().walk([&](shard::ShardOp s) { shards.push_back(s); });
      for (shard::ShardOp s : shards) {
        s.getResult().replaceAllUsesWith(s.getSrc());
        s.erase();
      }
      getOperation().walk([&](shard::ShardingOp s) {
        if (s->use_empty())
          s.erase();
      });
      for (auto grid :
           llvm::make_early_inc_range(getOperation().getOps<shard::GridOp>()))
        if (SymbolTable::symbolKnownUseEmpty(grid, getOperation()))
          grid.erase();
      return;
    }
    SmallVector<ShardedAttention> work;
    bool failedMatch = false;
    getOperation().walk([&](AttentionOp op) {
      FailureOr<std::optional<ShardedAttention>> s = matchSharded(op);
      if (failed(s) || (*s && failed(checkSupported(op)))) {
        failedMatch = true;
        return;
      }
      if (*s)
        work.push_back(**s);
    });
    if (failedMatch)
      return signalPassFailure();
    DenseSet<func::FuncOp> touched;
    for (ShardedAttention &s : work)
      if (failed(partition(s)))
        return signalPassFailure();
      else
        touched.insert(s.op->getParentOfType<func::FuncOp>());
    for (ShardedAttention &s : work)
      s.op.erase();
    cleanup(touched);
  }

  LogicalResult partition(ShardedAttention &s) {
    AttentionOp op = s.op;
    bool masked = op.getPatternAttr() || !op.getMaskMod().empty();
    int64_t ranks = s.grid.getShape()[0];
    {
      InFlightDiagnostic remark = op->emitRemark();
      remark << "attn-partition-sequence: "
             << (s.zigzag ? "zigzag" : "contiguous") << " chunks over "
             << (ShapedType::isDynamic(ranks) ? std::string("any number of")
                                              : std::to_string(ranks))
             << " ranks of @" << s.grid.getSymName() << "; ";
      if (auto kernel = dyn_cast<KernelAttr>(op.getNormalizer())) {
        AttentionDims d = op.getDims();
        remark << "no keys sent: the key/value state phi(K)^T [V, 1] ("
               << kernel.getNumFeatures(d.headDim) << " x " << d.valueDim + 1
               << " per batch row and key/value head) "
               << (op.getPatternAttr()
                       ? "summed over the ranks before each (an all-reduce "
                         "of one slot per rank) and added to the local "
                         "causal prefix form"
                       : "all-reduced over the ranks");
      } else {
        remark << "key/value blocks passed around the ring "
               << (masked ? "only to the ranks whose queries the mask lets see "
                            "them (interval analysis of the mask at run time)"
                          : "to every rank")
               << (isa<PointwiseAttr>(op.getNormalizer())
                       ? ", partial results summed"
                       : ", partial results merged by log-sum-exp");
      }
    }
    // The global mask, compiled for the schedule.
    std::optional<ModProgram> program;
    OwningOpRef<Operation *> scratch;
    if (op.getPatternAttr() || !op.getMaskMod().empty()) {
      OpBuilder builder(op->getContext());
      scratch = builder.clone(*op.getOperation());
      Region &region = cast<AttentionOp>(*scratch).getMaskMod();
      Region original;
      original.takeBody(region);
      buildShiftedRegion(builder, op.getLoc(), region, true,
                         op.getPatternAttr(),
                         original.empty() ? nullptr : &original, false,
                         TypeRange(ValueRange(regionCaptures(op))));
      program = compileMaskProgram(region);
    }
    // Local operands: the function arguments, retyped.
    auto local = [&](shard::ShardOp shardOp) {
      Value arg = shardOp.getSrc();
      arg.setType(localType(arg.getType()));
      return arg;
    };
    Value q = local(s.operandShards[0]);
    Value k = local(s.operandShards[1]);
    Value v = local(s.operandShards[2]);
    RankProgram program2(s, program ? &*program : nullptr);
    auto [o, l] = program2.build(q, k, v);
    ImplicitLocOpBuilder b(op.getLoc(), op);
    auto resultType =
        cast<RankedTensorType>(localType(op.getResult().getType()));
    Value result = o;
    if (resultType.getElementType() != b.getF32Type())
      result = arith::TruncFOp::create(b, resultType, o);
    SmallVector<Value> results = {result};
    if (op.getLse())
      results.push_back(l);
    for (shard::ShardOp user : s.resultShards) {
      unsigned n = cast<OpResult>(user.getSrc()).getResultNumber();
      user.getResult().replaceAllUsesWith(results[n]);
      user.erase();
    }
    return success();
  }

  /// Erases the shard ops left, updates the types of the touched functions
  /// and drops grids nothing refers to.
  void cleanup(DenseSet<func::FuncOp> &touched) {
    for (func::FuncOp f : touched) {
      SmallVector<Operation *> dead;
      f.walk([&](Operation *op) {
        if (isa<shard::ShardOp>(op)) {
          auto s = cast<shard::ShardOp>(op);
          if (s.getResult().getType() != s.getSrc().getType() ||
              s->use_empty()) {
            s.getResult().replaceAllUsesWith(s.getSrc());
            dead.push_back(op);
          }
        }
      });
      for (Operation *op : dead)
        op->erase();
      f.walk([&](shard::ShardingOp s) {
        if (s->use_empty())
          s.erase();
      });
      auto ret = cast<func::ReturnOp>(f.getBody().back().getTerminator());
      f.setFunctionType(FunctionType::get(f.getContext(),
                                          f.getBody().getArgumentTypes(),
                                          ret.getOperandTypes()));
    }
    ModuleOp module = getOperation();
    // The mpi lowering's MPI ABI: MPICH (Debian's libmpich).
    if (!touched.empty() && !module->hasAttr("dlti.map")) {
      MLIRContext *ctx = module.getContext();
      DataLayoutEntryInterface entry =
          DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                                   StringAttr::get(ctx, "MPICH"));
      module->setAttr("dlti.map", MapAttr::get(ctx, {entry}));
    }
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
  }
};
} // namespace
