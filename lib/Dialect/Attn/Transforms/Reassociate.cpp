//===- Reassociate.cpp - Kernelized attention as phi(Q) (phi(K)^T V) ------===//

#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREASSOCIATE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

static constexpr double kFlopsPerSecond = 100e9;
static constexpr double kBytesPerSecond = 10e9;

double ReassociationCost::quadraticTime() const {
  return quadraticFlops / kFlopsPerSecond + quadraticBytes / kBytesPerSecond;
}
double ReassociationCost::linearTime() const {
  return linearFlops / kFlopsPerSecond + linearBytes / kBytesPerSecond;
}

int64_t mlir::attn::defaultChunkSize(int64_t features, int64_t valueDim,
                                     int64_t length) {
  double target = std::sqrt(static_cast<double>(features) * valueDim);
  int64_t chunk = 16;
  while (chunk < 128 && std::fabs(std::log2(2.0 * chunk / target)) <
                            std::fabs(std::log2(chunk / target)))
    chunk *= 2;
  return std::max<int64_t>(1, std::min(chunk, length));
}

ReassociationCost mlir::attn::estimateReassociation(const AttentionDims &d,
                                                    int64_t features,
                                                    bool masked,
                                                    int64_t chunk) {
  double b = d.batch, hq = d.queryHeads, hkv = d.kvHeads, f = features,
         dv = d.valueDim, lq = d.queryLen, lk = d.keyLen;
  ReassociationCost c;
  double pairs = lq * lk * (masked ? 0.5 : 1.0);
  c.quadraticFlops = 2.0 * b * hq * pairs * (f + dv);
  // Scores and weights, each written once and read once.
  c.quadraticBytes = 4.0 * 4.0 * b * hq * lq * lk;
  c.linearBytes = 4.0 * b * (hkv * lk * (f + dv) + hq * lq * (f + dv));
  if (masked)
    c.linearFlops = 2.0 * b * hq * lq * (chunk * (f + dv) + 3.0 * f * dv);
  else
    c.linearFlops = 2.0 * b * (hkv * lk + hq * lq) * f * dv;
  return c;
}

const Capability &mlir::attn::getReassociateCapability() {
  static const Capability capability{
      "reassociate",
      "attn-reassociate",
      "the linear form of kernelized attention, phi(Q) (phi(K)^T V), with "
      "prefix sums for causal masks and documents",
      {getLinearFormFeatures()},
      {{Feature::PatternCausal, Feature::UnequalLengths},
       {Feature::PatternSegments, Feature::UnequalLengths}}};
  return capability;
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

namespace {

/// What a kernelized attention looks like, from either form.
struct Candidate {
  Operation *anchor = nullptr;
  AttentionDims dims{};
  int64_t features = 0;
  KernelAttr kernel;
  MaskPatternAttrInterface pattern;
  Value querySegments, keySegments;
  /// The (feature-mapped, for the chain) queries and keys, for their
  /// lengths.
  Value query, key;
  /// What the attention uses (AttentionFeatures.h).
  FeatureSet uses;
};

/// The restriction the linear form keeps (none without a pattern), or
/// std::nullopt if the pattern has no linear form.
std::optional<LinearMaskForm> linearForm(MaskPatternAttrInterface pattern) {
  if (!pattern)
    return LinearMaskForm{};
  return pattern.getLinearForm();
}

/// The reason the candidate must stay quadratic, or an empty string.
std::string blocker(const Candidate &c) {
  if (std::optional<Refusal> r = getReassociateCapability().refusal(c.uses))
    return r->text() + " has no linear form here";
  return "";
}

/// Builds the linear form and returns its result.
Value buildLinearForm(RewriterBase &rewriter, Location loc, Value fq, Value fk,
                      Value value, Value gate, Value segments, bool causal,
                      double eps, int64_t chunk, Type resultType) {
  Type f32 = rewriter.getF32Type();
  FloatAttr epsAttr = rewriter.getF32FloatAttr(eps);
  if (!causal && !segments) {
    auto ks = cast<RankedTensorType>(fk.getType()).getShape();
    int64_t dv = cast<RankedTensorType>(value.getType()).getDimSize(3);
    auto stateType = RankedTensorType::get({ks[0], ks[1], ks[3], dv}, f32);
    auto sumType = RankedTensorType::get({ks[0], ks[1], ks[3]}, f32);
    auto kv = KVStateOp::create(rewriter, loc, stateType, sumType, fk, value);
    return StateApplyOp::create(rewriter, loc, resultType, fq, kv.getState(),
                                kv.getKeySum(), gate, epsAttr);
  }
  return ChunkedLinearOp::create(
      rewriter, loc, resultType, fq, fk, value, segments, gate,
      rewriter.getI64IntegerAttr(chunk),
      causal ? rewriter.getUnitAttr() : UnitAttr(), epsAttr);
}

/// How a candidate without a blocker would take the linear form: the
/// restriction its pattern keeps, the dims the cost model sees (a dynamic
/// batch as 1), the chunk of the prefix form and the form's name in the
/// remarks.
struct LinearPlan {
  bool causal = false;
  bool segments = false;
  bool masked = false;
  AttentionDims dims{};
  bool dynamicLengths = false;
  int64_t chunk = 0;
  std::string form;
};

struct ReassociatePass
    : public attn::impl::AttnReassociateBase<ReassociatePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mode != "auto" && mode != "linear" && mode != "quadratic") {
      getOperation()->emitError()
          << "attn-reassociate: mode must be auto, linear or quadratic, got '"
          << mode << "'";
      return signalPassFailure();
    }
    if (chunkSize < 0) {
      getOperation()->emitError(
          "attn-reassociate: chunk-size must be positive (or 0 for the "
          "default)");
      return signalPassFailure();
    }
    SmallVector<Operation *> anchors;
    getOperation()->walk([&](Operation *op) {
      if (auto a = dyn_cast<AttentionOp>(op)) {
        if (isa<KernelAttr>(a.getNormalizer()))
          anchors.push_back(op);
      } else if (auto apply = dyn_cast<ApplyOp>(op)) {
        if (matchChain(apply))
          anchors.push_back(op);
      }
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : anchors)
      process(rewriter, op);
  }

  /// The normalize and scores ops of `apply(normalize{kernel}(scores))`.
  static std::optional<std::pair<NormalizeOp, ScoresOp>>
  matchChain(ApplyOp apply) {
    auto norm = apply.getWeights().getDefiningOp<NormalizeOp>();
    if (!norm || !isa<KernelAttr>(norm.getNormalizer()))
      return std::nullopt;
    auto scores = norm.getScores().getDefiningOp<ScoresOp>();
    if (!scores)
      return std::nullopt;
    return std::make_pair(norm, scores);
  }

  Candidate describe(Operation *op) {
    Candidate c;
    c.anchor = op;
    if (auto a = dyn_cast<AttentionOp>(op)) {
      c.dims = a.getDims();
      c.kernel = cast<KernelAttr>(a.getNormalizer());
      c.features = c.kernel.getNumFeatures(c.dims.headDim);
      c.pattern = a.getPatternAttr();
      c.querySegments = a.getQuerySegments();
      c.keySegments = a.getKeySegments();
      c.query = a.getQuery();
      c.key = a.getKey();
      c.uses = a.getFeatures();
      return c;
    }
    auto apply = cast<ApplyOp>(op);
    auto [norm, scores] = *matchChain(apply);
    auto qs = cast<RankedTensorType>(scores.getQuery().getType()).getShape();
    auto ks = cast<RankedTensorType>(scores.getKey().getType()).getShape();
    auto vs = cast<RankedTensorType>(apply.getValue().getType()).getShape();
    c.dims = {qs[0], qs[1], ks[1], qs[2], ks[2], qs[3], vs[3]};
    c.kernel = cast<KernelAttr>(norm.getNormalizer());
    c.features = qs[3];
    c.pattern = norm.getPatternAttr();
    c.querySegments = norm.getQuerySegments();
    c.keySegments = norm.getKeySegments();
    c.query = scores.getQuery();
    c.key = scores.getKey();
    // The chain's features: those its steps carry.
    AttentionProblem p;
    p.normalizer = c.kernel;
    p.dims = c.dims;
    p.masking.pattern = c.pattern;
    p.masking.tensor = norm.getMask();
    p.modifiers.bias = scores.getBias();
    p.segments.query = c.querySegments;
    p.segments.key = c.keySegments ? c.keySegments : c.querySegments;
    p.segments.separateKeys = static_cast<bool>(c.keySegments);
    c.uses = getFeatures(p);
    return c;
  }

  /// Replaces `op` (an attn.attention or the apply of a decomposed chain)
  /// by `scf.if %condition` whose then-branch holds a copy to make linear
  /// (returned) and whose else-branch keeps the quadratic form.
  static Operation *dispatch(IRRewriter &rewriter, Operation *op,
                             Value condition) {
    // The ops to copy: the op, or the chain (scores, normalize, apply).
    SmallVector<Operation *> ops;
    if (auto apply = dyn_cast<ApplyOp>(op)) {
      auto [norm, scores] = *matchChain(apply);
      ops = {scores, norm, apply};
    } else {
      ops = {op};
    }
    Operation *linearCopy = nullptr;
    auto copy = [&](OpBuilder &b, Location loc) -> Operation * {
      IRMapping mapping;
      Operation *last = nullptr;
      for (Operation *o : ops)
        last = b.clone(*o, mapping);
      scf::YieldOp::create(b, loc, last->getResults());
      return last;
    };
    rewriter.setInsertionPoint(op);
    auto ifOp = scf::IfOp::create(
        rewriter, op->getLoc(), condition,
        [&](OpBuilder &b, Location loc) { linearCopy = copy(b, loc); },
        [&](OpBuilder &b, Location loc) { copy(b, loc); });
    rewriter.replaceOp(op, ifOp.getResults());
    // The originals of the chain die with their last use.
    for (Operation *o : llvm::reverse(ArrayRef(ops).drop_back()))
      if (o->use_empty())
        rewriter.eraseOp(o);
    return linearCopy;
  }

  /// Keeps `op` quadratic (with a remark on why) or rewrites it to the
  /// linear form, behind a run-time condition when its lengths are dynamic.
  void process(IRRewriter &rewriter, Operation *op) {
    Candidate c = describe(op);
    std::string why = blocker(c);
    if (!why.empty()) {
      op->emitRemark() << "attn-reassociate: kept the quadratic form: " << why;
      return;
    }
    LinearPlan plan = planLinearForm(c);

    // Dynamic lengths: the cost model and the chunked form's Lq == Lk are
    // decided at run time, between the linear form and the quadratic op.
    Value runtimeCondition;
    if (plan.dynamicLengths) {
      if (!decideAtRunTime(rewriter, op, c, plan, runtimeCondition))
        return;
    } else if (!decideStatically(op, c, plan)) {
      return;
    }
    if (runtimeCondition)
      op = dispatch(rewriter, op, runtimeCondition);
    rewriteToLinearForm(rewriter, op, c, plan);
  }

  /// The linear form `c` (without a blocker) would take: its restriction,
  /// the chunk (the chunk-size option, else the default for its sizes) and
  /// the dims for the cost model.
  LinearPlan planLinearForm(const Candidate &c) {
    LinearMaskForm maskForm = *linearForm(c.pattern);
    bool causal = maskForm.causal, segments = maskForm.segments;
    bool masked = causal || segments;
    AttentionDims d = c.dims;
    bool dynamicLengths =
        ShapedType::isDynamic(d.queryLen) || ShapedType::isDynamic(d.keyLen);
    int64_t chunk;
    if (chunkSize > 0)
      chunk = ShapedType::isDynamic(d.keyLen)
                  ? chunkSize.getValue()
                  : std::min<int64_t>(chunkSize, d.keyLen);
    else
      chunk = defaultChunkSize(c.features, d.valueDim,
                               ShapedType::isDynamic(d.keyLen)
                                   ? std::numeric_limits<int64_t>::max()
                                   : d.keyLen);
    // Costs are proportional to the batch: a dynamic one does not decide.
    if (ShapedType::isDynamic(d.batch))
      d.batch = 1;
    std::string form =
        masked ? llvm::formatv("chunked prefix form, chunk {0}", chunk).str()
               : "phi(Q) (phi(K)^T V)";
    return LinearPlan{causal, segments, masked, d, dynamicLengths, chunk, form};
  }

  /// With dynamic lengths: builds before `op` the condition under which
  /// the linear form runs (Lq == Lk for the chunked form; in auto mode, the
  /// cost model's choice) into `runtimeCondition` (null when the linear form
  /// is forced) and remarks on it. Returns false (with a remark) when the
  /// quadratic form is forced.
  bool decideAtRunTime(IRRewriter &rewriter, Operation *op, const Candidate &c,
                       const LinearPlan &plan, Value &runtimeCondition) {
    bool causal = plan.causal, masked = plan.masked;
    const AttentionDims &d = plan.dims;
    int64_t chunk = plan.chunk;
    const std::string &form = plan.form;
    if (mode == "quadratic") {
      op->emitRemark() << "attn-reassociate: kept the quadratic form (forced)";
      return false;
    }
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op->getLoc(), rewriter);
    Value lq = tensor::DimOp::create(b, c.query, 2);
    Value lk = tensor::DimOp::create(b, c.key, 2);
    std::string when;
    if (masked) {
      runtimeCondition =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lq, lk);
      when = "Lq == Lk";
    }
    if (mode == "auto") {
      // quadratic time A Lq Lk against linear time Bq Lq + Bk Lk.
      auto at = [&](int64_t q, int64_t k) {
        AttentionDims u = d;
        u.queryLen = q;
        u.keyLen = k;
        return estimateReassociation(u, c.features, causal, chunk);
      };
      double quadratic = at(1, 1).quadraticTime();
      double perQuery = at(1, 0).linearTime(), perKey = at(0, 1).linearTime();
      auto toF64 = [&](Value i) -> Value {
        Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), i);
        return arith::SIToFPOp::create(b, b.getF64Type(), i64);
      };
      auto cst = [&](double v) -> Value {
        return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
      };
      Value fq = toF64(lq), fk = toF64(lk);
      Value quadraticCost = arith::MulFOp::create(
          b, cst(quadratic), arith::MulFOp::create(b, fq, fk));
      Value linearCost =
          arith::AddFOp::create(b, arith::MulFOp::create(b, cst(perQuery), fq),
                                arith::MulFOp::create(b, cst(perKey), fk));
      Value cheaper = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT,
                                            linearCost, quadraticCost);
      runtimeCondition =
          runtimeCondition ? arith::AndIOp::create(b, runtimeCondition, cheaper)
                           : cheaper;
      int64_t crossover =
          static_cast<int64_t>(std::floor((perQuery + perKey) / quadratic)) + 1;
      when += llvm::formatv("{0}the cost model prefers it (with Lq = Lk: "
                            "from {1} on)",
                            when.empty() ? "" : " and ", crossover)
                  .str();
    }
    if (runtimeCondition)
      op->emitRemark() << "attn-reassociate: lengths are dynamic: the "
                          "linear form ("
                       << form << ") when " << when
                       << ", else the quadratic form, chosen at run time";
    else
      op->emitRemark() << "attn-reassociate: linear form (" << form
                       << ", forced)";
    return true;
  }

  /// With static lengths: whether the mode or the cost model takes the
  /// linear form, remarked on with both costs.
  bool decideStatically(Operation *op, const Candidate &c,
                        const LinearPlan &plan) {
    ReassociationCost cost =
        estimateReassociation(plan.dims, c.features, plan.causal, plan.chunk);
    bool linear = mode == "linear" ||
                  (mode == "auto" && cost.linearTime() < cost.quadraticTime());
    std::string costs = llvm::formatv(
        "quadratic {0:e2} flop + {1:e2} B (~{2:f3} ms), linear {3:e2} flop + "
        "{4:e2} B (~{5:f3} ms)",
        cost.quadraticFlops, cost.quadraticBytes, cost.quadraticTime() * 1e3,
        cost.linearFlops, cost.linearBytes, cost.linearTime() * 1e3);
    if (!linear) {
      op->emitRemark() << "attn-reassociate: kept the quadratic form ("
                       << (mode == "quadratic" ? "forced" : "cheaper")
                       << "): " << costs;
      return false;
    }
    op->emitRemark() << "attn-reassociate: linear form (" << plan.form << ", "
                     << (mode == "linear" ? "forced" : "cheaper")
                     << "): " << costs;
    return true;
  }

  /// Replaces `op` (an attn.attention, decomposed first, or the apply of a
  /// chain) by the linear form of `plan`, built from the feature-mapped
  /// queries and keys, and erases the quadratic steps left without uses.
  void rewriteToLinearForm(IRRewriter &rewriter, Operation *op,
                           const Candidate &c, const LinearPlan &plan) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    Value fq, fk, value, gate, result = op->getResult(0);
    double eps = c.kernel.getEps().convertToDouble();
    if (auto a = dyn_cast<AttentionOp>(op)) {
      // The feature maps of the decomposed form, without the quadratic part.
      ApplyOp apply = *decomposeAttention(rewriter, a);
      auto norm = apply.getWeights().getDefiningOp<NormalizeOp>();
      auto scores = norm.getScores().getDefiningOp<ScoresOp>();
      fq = scores.getQuery();
      fk = scores.getKey();
      value = apply.getValue();
      gate = apply.getGate();
      op = apply;
      result = apply.getResult();
    } else {
      auto apply = cast<ApplyOp>(op);
      auto [norm, scores] = *matchChain(apply);
      fq = scores.getQuery();
      fk = scores.getKey();
      value = apply.getValue();
      gate = apply.getGate();
      // P = scale s / (scale sum s + eps) = s / (sum s + eps / scale).
      if (std::optional<APFloat> s = scores.getScale())
        eps /= s->convertToDouble();
    }
    rewriter.setInsertionPoint(op);
    Value linearResult =
        buildLinearForm(rewriter, loc, fq, fk, value, gate,
                        plan.segments ? c.querySegments : Value(), plan.causal,
                        eps, plan.chunk, result.getType());
    // The quadratic steps die with their last use.
    Operation *norm = cast<ApplyOp>(op).getWeights().getDefiningOp();
    rewriter.replaceOp(op, linearResult);
    if (norm && norm->use_empty()) {
      Operation *scores = norm->getOperand(0).getDefiningOp();
      rewriter.eraseOp(norm);
      if (scores && scores->use_empty())
        rewriter.eraseOp(scores);
    }
  }
};
} // namespace
