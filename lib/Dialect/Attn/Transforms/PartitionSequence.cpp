//===- PartitionSequence.cpp - Sequence-parallel attention over MPI -----===//
//
// attn-partition-sequence (Passes.td): attn.attention with query, key and
// value sharded along the sequence over a 1-D shard.grid becomes the
// program of one rank: its queries against the key/value blocks passed
// around a ring, the partial results merged through their log-sum-exp
// (PartitionSequence.h lists the steps and their files).
//
// This file: what the sharding annotations say (ShardedAttention), what is
// supported (the pass's capability, AttentionFeatures.h, and what the
// sharding itself allows), and the rewrite of each sharded op.
//
//===----------------------------------------------------------------------===//

#include "PartitionSequence.h"

#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARTITIONSEQUENCE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

const Capability &mlir::attn::getPartitionSequenceCapability() {
  // The ring: masks the interval analysis evaluates at global positions
  // (causal, windows, documents, their unions and intersections, mask
  // regions), score regions, f32 over one sequence (Lq = Lk).
  FeatureSet ring = {Feature::QuerySegments, Feature::KeySegments,
                     Feature::Captures,      Feature::Scale,
                     Feature::Softcap,       Feature::PatternCausal,
                     Feature::PatternWindow, Feature::PatternSegments,
                     Feature::PatternUnion,  Feature::PatternIntersect,
                     Feature::MaskMod,       Feature::ScoreMod,
                     Feature::DynamicBatch,  Feature::DynamicLengths,
                     Feature::GroupedHeads};
  // Kernelized attention: the key/value state reduced, unmasked or causal.
  FeatureSet state = {Feature::Kernel,       Feature::Projection,
                      Feature::Scale,        Feature::PatternCausal,
                      Feature::DynamicBatch, Feature::DynamicLengths,
                      Feature::GroupedHeads};
  static const Capability capability{
      "partition-sequence",
      "attn-partition-sequence",
      "sequence parallelism over MPI: a ring of key/value blocks merged by "
      "log-sum-exp, or the reduced key/value state of linear attention",
      {ring | FeatureSet{Feature::Softmax, Feature::Lse},
       ring | FeatureSet{Feature::Pointwise}, state},
      {}};
  return capability;
}

namespace {

constexpr StringLiteral kOrderAttr = "attn.sequence_order";

//===----------------------------------------------------------------------===//
// The sharding annotations
//===----------------------------------------------------------------------===//

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
      // Its gradient (the output as the gradient's forward operand).
      if (auto grad = dyn_cast<AttentionGradOp>(user);
          grad && grad.getForward() == result && result == op.getResult()) {
        if (!llvm::is_contained(s.grads, grad))
          s.grads.push_back(grad);
        continue;
      }
      auto shardOp = dyn_cast<shard::ShardOp>(user);
      if (!shardOp) {
        op.emitOpError("attn-partition-sequence: every use of the results "
                       "must be a shard.shard with the operands' sharding "
                       "or the op's attn.attention_grad");
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

} // namespace

SmallVector<Value> mlir::attn::regionCaptures(AttentionOp op) {
  SmallVector<Value> captures(op.getCaptures());
  if (Value ids = op.getQuerySegments()) {
    captures.push_back(ids);
    captures.push_back(op.getKeySegments() ? op.getKeySegments() : ids);
  }
  return captures;
}

namespace {

/// An attn.attention_grad of a sharded op: the shard.shard ops of its
/// sharded operands (null where absent).
struct ShardedGradient {
  AttentionGradOp grad;
  shard::ShardOp dOutput, dLse, savedOutput, savedLse;
};

/// What the annotations around the gradient `grad` of the sharded `s.op`
/// say: its cotangents and saved statistics sharded as the op's operands,
/// the gradients of query, key and value used through such shard.shard
/// ops; failure after a diagnostic otherwise (also for what the backward
/// ring does not compute).
FailureOr<ShardedGradient> matchGradient(ShardedAttention &s,
                                         AttentionGradOp grad) {
  AttentionOp op = s.op;
  auto refuse = [&](const Twine &what) {
    return grad.emitOpError("attn-partition-sequence: ") << what;
  };
  auto sharding = s.operandShards[0].getSharding();
  auto like = sharding.getDefiningOp<shard::ShardingOp>();
  ShardedGradient g;
  g.grad = grad;
  auto operand = [&](Value v, StringRef what,
                     shard::ShardOp &into) -> LogicalResult {
    if (!v)
      return success();
    auto shardOp = v.getDefiningOp<shard::ShardOp>();
    if (!shardOp || shardOp.getAnnotateForUsers() ||
        !isa<BlockArgument>(shardOp.getSrc())) {
      refuse("the ") << what
                     << " must be a function argument sharded like the "
                        "forward's operands (shard.shard)";
      return failure();
    }
    shard::ShardingOp sharding = sequenceSharding(op, shardOp, what);
    if (!sharding)
      return failure();
    if (sharding.getGrid() != like.getGrid() ||
        sharding.getStaticShardedDimsOffsets() !=
            like.getStaticShardedDimsOffsets()) {
      refuse("the ") << what << " is sharded unlike the forward's operands";
      return failure();
    }
    into = shardOp;
    return success();
  };
  if (failed(operand(grad.getGradOutput(), "output's cotangent", g.dOutput)) ||
      failed(operand(grad.getGradLse(), "log-sum-exp's cotangent", g.dLse)) ||
      failed(operand(grad.getSavedOutput(), "saved output", g.savedOutput)) ||
      failed(operand(grad.getSavedLse(), "saved log-sum-exp", g.savedLse)))
    return failure();
  for (Value c : grad.getGradCaptures())
    if (!cast<ShapedType>(c.getType()).getElementType().isF32()) {
      refuse("the gradient of a captured tensor that is not f32 over a "
             "sharded sequence is not supported");
      return failure();
    }
  Value sharded[] = {grad.getGradQuery(), grad.getGradKey(),
                     grad.getGradValue()};
  for (Value result : sharded)
    for (Operation *user : result.getUsers()) {
      auto shardOp = dyn_cast<shard::ShardOp>(user);
      if (!shardOp || !sequenceSharding(op, shardOp, "gradient")) {
        refuse("every use of the gradients of query, key and value must be "
               "a shard.shard with the operands' sharding");
        return failure();
      }
    }
  return g;
}

/// Whether the pass takes `op`: its capability, then what the sharding
/// allows; a diagnostic otherwise.
LogicalResult checkSupported(AttentionOp op) {
  auto refuse = [&](const Twine &what) {
    return op.emitOpError("attn-partition-sequence: ")
           << what << " is not supported with a sharded sequence";
  };
  if (std::optional<Refusal> r =
          getPartitionSequenceCapability().refusal(op.getFeatures()))
    return refuse(r->text());
  auto order = op->getAttrOfType<StringAttr>(kOrderAttr);
  if (isa<KernelAttr>(op.getNormalizer()) && order &&
      order.getValue() == "zigzag")
    return refuse("kernelized attention in the zigzag order (its work is "
                  "balanced in contiguous chunks: drop "
                  "attn.sequence_order)");
  // What is read whole on every rank must be replicated, not sharded.
  if (Value projection = op.getProjection();
      projection && projection.getDefiningOp<shard::ShardOp>())
    return refuse("a sharded FAVOR+ projection (it is replicated)");
  for (Value ids : {op.getQuerySegments(), op.getKeySegments()})
    if (ids && ids.getDefiningOp<shard::ShardOp>())
      return refuse("sharded segment ids (the ids are replicated: every "
                    "rank reads the whole [B, L] tensor)");
  for (Value c : op.getCaptures())
    if (c.getDefiningOp<shard::ShardOp>())
      return refuse("a sharded capture (captures are replicated)");
  return success();
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

/// The function argument a sharded value comes from, retyped to the
/// rank's chunk (null for a null shard op).
Value localArgument(shard::ShardOp shardOp) {
  if (!shardOp)
    return Value();
  Value arg = shardOp.getSrc();
  arg.setType(localType(arg.getType()));
  return arg;
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
    std::vector<ShardedAttention> work;
    std::vector<SmallVector<ShardedGradient>> gradients;
    bool failedMatch = false;
    getOperation().walk([&](AttentionOp op) {
      FailureOr<std::optional<ShardedAttention>> s = matchSharded(op);
      if (failed(s) || (*s && failed(checkSupported(op)))) {
        failedMatch = true;
        return;
      }
      if (!*s)
        return;
      SmallVector<ShardedGradient> grads;
      for (AttentionGradOp grad : (*s)->grads) {
        FailureOr<ShardedGradient> g = matchGradient(**s, grad);
        if (failed(g)) {
          failedMatch = true;
          return;
        }
        grads.push_back(*g);
      }
      work.push_back(**s);
      gradients.push_back(std::move(grads));
    });
    if (failedMatch)
      return signalPassFailure();
    DenseSet<func::FuncOp> touched;
    for (auto [s, grads] : llvm::zip(work, gradients))
      if (failed(partition(s, grads)))
        return signalPassFailure();
      else
        touched.insert(s.op->getParentOfType<func::FuncOp>());
    for (ShardedAttention &s : work)
      s.op.erase();
    cleanup(touched);
  }

  LogicalResult partition(ShardedAttention &s,
                          ArrayRef<ShardedGradient> grads) {
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
        if (!grads.empty())
          remark << "; the gradient: the query state phi(Q)^T du reduced "
                 << (op.getPatternAttr() ? "over the ranks after each"
                                         : "over the other ranks")
                 << ", both states the outside of each rank's linear-time "
                    "gradient";
      } else {
        remark << "key/value blocks passed around the ring "
               << (masked ? "only to the ranks whose queries the mask lets see "
                            "them (interval analysis of the mask at run time)"
                          : "to every rank")
               << (isa<PointwiseAttr>(op.getNormalizer())
                       ? ", partial results summed"
                       : ", partial results merged by log-sum-exp");
        if (!grads.empty())
          remark << "; the gradient: "
                 << (isa<SoftmaxAttr>(op.getNormalizer()) &&
                             !(grads.front().savedOutput &&
                               grads.front().savedLse)
                         ? "the forward ring, then "
                         : "")
                 << "the ring again, each rank's share of a block's dK and "
                    "dV sent back to the block's owner";
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
      buildShiftedRegion(builder, op, region, /*isMask=*/true,
                         original.empty() ? nullptr : &original,
                         /*shifted=*/false,
                         TypeRange(ValueRange(regionCaptures(op))));
      program = compileMaskProgram(region);
    }
    // Local operands: the function arguments, retyped.
    Value q = localArgument(s.operandShards[0]);
    Value k = localArgument(s.operandShards[1]);
    Value v = localArgument(s.operandShards[2]);
    for (const ShardedGradient &g : grads)
      partitionGradient(s, g, q, k, v, program ? &*program : nullptr);
    // (Result annotations nothing reads need no forward ring.)
    llvm::erase_if(s.resultShards, [](shard::ShardOp user) {
      if (!user->use_empty())
        return false;
      user.erase();
      return true;
    });
    if (s.resultShards.empty())
      return success();
    ImplicitLocOpBuilder b(op.getLoc(), op);
    RankProgram rankProgram(b, s, program ? &*program : nullptr);
    auto [o, l] = rankProgram.build(q, k, v);
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

  /// Replaces the gradient `g` of the sharded op by this rank's backward.
  void partitionGradient(ShardedAttention &s, const ShardedGradient &g, Value q,
                         Value k, Value v, const ModProgram *mask) {
    AttentionGradOp grad = g.grad;
    GradientInputs in;
    in.dOutput = localArgument(g.dOutput);
    in.dLse = localArgument(g.dLse);
    in.savedOutput = localArgument(g.savedOutput);
    in.savedLse = localArgument(g.savedLse);
    if (!grad.getGradCaptures().empty())
      for (unsigned c : s.op.getFloatCaptures())
        in.captures.push_back(s.op.getCaptures()[c]);
    if (grad.getGradProjection())
      in.captures.push_back(s.op.getProjection());
    ImplicitLocOpBuilder b(grad.getLoc(), grad);
    RankProgram rankProgram(b, s, mask);
    GradientResults r = rankProgram.buildGradient(q, k, v, in);
    SmallVector<Value> locals = {r.query, r.key, r.value};
    locals.append(r.captures);
    for (auto [i, result] : llvm::enumerate(grad.getResults())) {
      Value value = locals[i];
      Type element = cast<ShapedType>(result.getType()).getElementType();
      if (!element.isF32())
        value = arith::TruncFOp::create(
            b, cast<RankedTensorType>(value.getType()).clone(element), value);
      if (i >= 3) {
        result.replaceAllUsesWith(value);
        continue;
      }
      for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
        auto shardOp = cast<shard::ShardOp>(user);
        shardOp.getResult().replaceAllUsesWith(value);
        shardOp.erase();
      }
    }
    grad.erase();
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
