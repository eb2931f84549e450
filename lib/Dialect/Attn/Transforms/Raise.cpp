//===- Raise.cpp - Attention written as linalg ops to attn.attention ------===//
//
// Matches from the output contraction backwards: O = P V, P a softmax (named
// or decomposed), pointwise weights c * h(a * S) (the elementwise chain
// evaluated, RaiseExpr.h) or kernelized weights (RaiseKernel.cpp), of
// S' = scale * S, S = Q K^T; or from a product normalized after V (linear
// attention). Named ops and linalg.generic are matched alike through the
// LinalgOp interface: indexing maps say which dims are batch, query, key and
// head dims, the bodies say what the elementwise and reduction ops compute.
// The helpers shared with RaiseMatchers.cpp and RaiseKernel.cpp are declared
// in RaiseMatch.h.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatch.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <variant>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::raise {

/// The weights `p` as a softmax (named, or decomposed into max, exp, sum and
/// a division) or linear attention normalized by its row sums before the V
/// product. The misses before the division is found are silent: `p` is not
/// a softmax at all (the pointwise match says why).
Matched<Weights> matchSoftmax(Value p, int64_t rank) {
  MLIRContext *ctx = p.getContext();
  if (auto softmax = p.getDefiningOp<linalg::SoftmaxOp>()) {
    if (softmax.getDimension() != static_cast<uint64_t>(rank - 1))
      return Miss{"linalg.softmax normalizes dim " +
                  std::to_string(softmax.getDimension()) +
                  ", not the key dim " + std::to_string(rank - 1)};
    return Weights{
        SoftmaxAttr::get(ctx), softmax.getInput(), {softmax.getOperation()},
        "linalg.softmax",      std::nullopt,       1.0,
        std::nullopt};
  }
  // p = e / sum(e), e = exp(s - max(s)).
  auto div = p.getDefiningOp<linalg::LinalgOp>();
  if (!isElementwise(div, 2))
    return Miss{"the weights are not a softmax", /*silent=*/true};
  // x / t, or x * (1 / t) (TOSA's reciprocal).
  auto isDivision = [&](Value y, Value x, Value t) {
    if (auto d = y.getDefiningOp<arith::DivFOp>())
      return d.getLhs() == x && d.getRhs() == t;
    auto m = y.getDefiningOp<arith::MulFOp>();
    if (!m)
      return false;
    Value other = m.getLhs() == x ? m.getRhs() : m.getLhs();
    auto r = other.getDefiningOp<arith::DivFOp>();
    std::optional<double> one =
        r ? constantOf(r.getLhs()) : std::optional<double>();
    return (m.getLhs() == x || m.getRhs() == x) && r && one && *one == 1.0 &&
           r.getRhs() == t;
  };
  if (readsRow(div, 0) || !readsRow(div, 1) ||
      !isDivision(yielded(div), inputArg(div, 0), inputArg(div, 1)))
    return Miss{"the weights are not exp(...) divided by a row sum",
                /*silent=*/true};
  Value e = div.getDpsInputs()[0];
  auto sum = div.getDpsInputs()[1].getDefiningOp<linalg::LinalgOp>();
  if (!isRowReduction<arith::AddFOp>(sum, 0.0) || reducedValue(sum) != e)
    return Miss{"the softmax denominator is not a sum over the key dim"};
  // Linear attention in its quadratic form: phi(Q) phi(K)^T normalized by
  // its row sum (no exp).
  if (auto scores = e.getDefiningOp<linalg::LinalgOp>();
      scores && linalg::isaContractionOpInterface(scores) &&
      scores.getNumDpsInputs() == 2) {
    auto phi =
        sharedFeatures(scores.getDpsInputs()[0], scores.getDpsInputs()[1]);
    if (!phi)
      return Miss{"the weights are scores divided by their row sum, but Q "
                  "and K do not go through the same feature map (elu + 1, "
                  "relu or FAVOR+)"};
    if (!e.hasNUses(2) || !sum->getResult(0).hasOneUse())
      return Miss{"a normalization intermediate has another use"};
    Weights w{kernelAttr(ctx, phi->first, 0.0),
              e,
              {div.getOperation(), sum.getOperation()},
              "linear attention (" + featureMapName(phi->first) +
                  ") in quadratic form",
              phi->first.map,
              1.0,
              std::nullopt};
    return w;
  }
  auto exp = e.getDefiningOp<linalg::LinalgOp>();
  if (!isElementwise(exp, 2) || readsRow(exp, 0) || !readsRow(exp, 1))
    return Miss{"the softmax numerator is not exp(s - max)"};
  auto expOp = yielded(exp).getDefiningOp<math::ExpOp>();
  auto sub = expOp ? expOp.getOperand().getDefiningOp<arith::SubFOp>()
                   : arith::SubFOp();
  if (!sub || sub.getLhs() != inputArg(exp, 0) ||
      sub.getRhs() != inputArg(exp, 1))
    return Miss{"the softmax numerator is not exp(s - max)"};
  Value s = exp.getDpsInputs()[0];
  auto max = exp.getDpsInputs()[1].getDefiningOp<linalg::LinalgOp>();
  if (!isRowReduction<arith::MaximumFOp, arith::MaxNumFOp>(
          max, -std::numeric_limits<double>::infinity()) ||
      reducedValue(max) != s)
    return Miss{"the softmax subtracts something other than the row maximum "
                "over the key dim"};
  if (!e.hasNUses(2) || !max->getResult(0).hasOneUse() ||
      !sum->getResult(0).hasOneUse())
    return Miss{"a softmax intermediate has another use"};
  return Weights{SoftmaxAttr::get(ctx),
                 s,
                 {div.getOperation(), sum.getOperation(), exp.getOperation(),
                  max.getOperation()},
                 "softmax decomposed into max, exp, sum, div",
                 std::nullopt,
                 1.0,
                 std::nullopt};
}

/// The heads of a key or value tensor `[B, H, L, D]` written as a
/// broadcast of fewer heads (grouped-query attention): `collapse_shape
/// [[0], [1, 2], [3], [4]]` of a `linalg.broadcast` over dim 2 (`[B, Hkv,
/// G, L, D]`) of `[B, Hkv, L, D]`, or a copy whose input map is `(b, h, l, d)
/// -> (b, h floordiv G, l, d)`. Returns the `[B, Hkv, L, D]` source and G, if
/// so.
std::optional<std::pair<Value, int64_t>> unbroadcastHeads(Value x) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || type.getRank() != 4)
    return std::nullopt;
  // A copy with h -> h floordiv G.
  if (auto copy = x.getDefiningOp<linalg::GenericOp>()) {
    if (copy.getNumDpsInputs() != 1 || copy.getNumDpsInits() != 1 ||
        yielded(copy) != inputArg(copy, 0) ||
        copy.getNumReductionLoops() != 0 || !x.hasOneUse())
      return std::nullopt;
    AffineMap in = copy.getIndexingMapsArray()[0];
    MLIRContext *ctx = x.getContext();
    if (in.getNumResults() != 4 || in.getNumDims() != 4 ||
        !copy.getIndexingMapsArray()[1].isIdentity())
      return std::nullopt;
    auto head = dyn_cast<AffineBinaryOpExpr>(in.getResult(1));
    auto groups = head ? dyn_cast<AffineConstantExpr>(head.getRHS())
                       : AffineConstantExpr();
    if (!head || head.getKind() != AffineExprKind::FloorDiv || !groups ||
        head.getLHS() != getAffineDimExpr(1, ctx) ||
        in.getResult(0) != getAffineDimExpr(0, ctx) ||
        in.getResult(2) != getAffineDimExpr(2, ctx) ||
        in.getResult(3) != getAffineDimExpr(3, ctx))
      return std::nullopt;
    return std::make_pair(copy.getDpsInputs()[0], groups.getValue());
  }
  auto collapse = x.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !x.hasOneUse() ||
      collapse.getReassociationIndices() !=
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return std::nullopt;
  auto broadcast = collapse.getSrc().getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || broadcast.getDimensions() != ArrayRef<int64_t>{2})
    return std::nullopt;
  return std::make_pair(broadcast.getInput(),
                        broadcast.getInit().getType().getDimSize(2));
}

/// Q times a constant (a scale applied before the scores), if so.
std::optional<std::pair<Value, double>> matchQueryScale(Value q) {
  auto scale = matchScale(q);
  if (!scale || !q.hasOneUse())
    return std::nullopt;
  return std::make_pair(cast<linalg::LinalgOp>(scale->second).getDpsInputs()[0],
                        scale->first);
}

/// The spelled name of a pointwise function, for the remark.
std::string pointwiseName(PointwiseFn fn) {
  return stringifyPointwiseFn(fn).str();
}

/// Pointwise attention: P = c * h(a * s) computed by a chain of elementwise
/// ops of one tensor (fused or not), optionally masked after h by a `0`
/// fill. `h` is found by evaluating the chain (raise::fitPointwise), `a` is
/// the constant the chain starts with (`x * a`, `x / a`), `c` must be
/// Lk^-alpha with alpha in [0, 1] (or is folded into `a` for a homogeneous
/// h: relu, relu2, identity).
Matched<Weights> matchPointwise(Value p, int64_t keyLen) {
  MLIRContext *ctx = p.getContext();
  Weights w;
  double factor = 1.0;
  auto post = matchMask(p, /*afterNormalizer=*/true);
  if (auto *miss = std::get_if<Miss>(&post); miss && !miss->silent)
    return *miss;
  if (auto *masked = std::get_if<ScoreMask>(&post)) {
    if (!masked->scores.hasOneUse())
      return Miss{"the weights before their mask have another use"};
    factor = masked->scale;
    w.postMask = *masked;
    w.ops.append(masked->ops.begin(), masked->ops.end());
    p = masked->scores;
  }
  raise::UnaryChain chain = raise::unaryChainTo(p);
  // h fused into the masking op: the chain ends with the masked value.
  Value fusedExpr = w.postMask ? w.postMask->valueExpr : Value();
  Value fusedArg = w.postMask ? w.postMask->valueArg : Value();
  auto weightsOf = [&](double x) -> std::optional<double> {
    std::optional<double> y = chain(x);
    if (!y || !fusedExpr)
      return y;
    raise::Bindings env;
    env[fusedArg] = *y;
    return raise::evaluate(fusedExpr, env);
  };
  // The chain must start from scores: a product, or a mask of one (an
  // activation of a function argument times a matrix is not attention).
  auto isProduct = [](Value v) {
    auto op = v.getDefiningOp<linalg::LinalgOp>();
    return op && op.getNumDpsInputs() == 2 &&
           linalg::isaContractionOpInterface(op);
  };
  auto fromScores = [&](Value v) {
    if (isProduct(v))
      return true;
    auto preMask = matchMask(v);
    if (auto *masked = std::get_if<ScoreMask>(&preMask);
        masked && isProduct(masked->scores))
      return true;
    auto scale = matchScale(v);
    return scale &&
           isProduct(cast<linalg::LinalgOp>(scale->second).getDpsInputs()[0]);
  };
  if ((chain.ops.empty() && !fusedExpr) || !fromScores(chain.source))
    return Miss{"the weights are neither a softmax nor an elementwise "
                "function of the scores",
                /*silent=*/true};
  double a = chain.ops.empty() ? raise::scaleOfUse(fusedArg, raise::Bindings())
                               : raise::leadingScale(chain);
  SmallVector<Operation *> payloads;
  for (const raise::UnaryOp &u : chain.ops)
    payloads.push_back(u.op);
  if (fusedExpr)
    payloads.push_back(fusedExpr.getDefiningOp());
  // Breakpoints of the chain's constants, in the domain of y = a x.
  SmallVector<double> probes = raise::probePoints(payloads, 1.0 / a);
  std::optional<raise::PointwiseFit> fit =
      raise::fitPointwise([&](double y) { return weightsOf(y / a); }, probes);
  if (!fit)
    return Miss{"the weights are an elementwise function of the scores that "
                "is not c * h(a * s) with a constant c > 0 and h one of relu, "
                "relu2, gelu, gelu_tanh, softplus, identity, relu6, sigmoid"};
  double c = fit->factor * factor;
  PointwiseFn fn = fit->fn;
  double alpha = 0.0;
  if (std::fabs(c - 1.0) > 1e-6) {
    if (ShapedType::isDynamic(keyLen))
      return Miss{"the key length is dynamic (alpha of a scaled " +
                  pointwiseName(fn) + ")"};
    alpha = keyLen > 1 ? -std::log(c) / std::log(double(keyLen)) : -1.0;
  }
  if (alpha < -1e-6 || alpha > 1.0 + 1e-6) {
    double degree = raise::homogeneity(fn);
    if (degree == 0.0) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "the " << pointwiseName(fn) << " is scaled by "
         << llvm::format("%g", c) << ", not Lk^-alpha with alpha in [0, 1]";
      return Miss{text};
    }
    // c h(a s) = h(c^(1/degree) a s).
    a *= std::pow(c, 1.0 / degree);
    alpha = 0.0;
  }
  alpha = std::clamp(alpha, 0.0, 1.0);
  // An f32 factor (1/33 rounded) gives alpha within 1e-7 of a simple
  // value; that value changes c by less than f32 rounding.
  if (double nice = std::round(alpha * 64) / 64; std::fabs(alpha - nice) < 1e-6)
    alpha = nice;
  if (alpha == 0.0)
    alpha = 0.0; // not -0.0
  w.normalizer = PointwiseAttr::get(ctx, fn, llvm::APFloat(alpha));
  w.scores = chain.source;
  w.scale = a;
  for (const raise::UnaryOp &u : chain.ops)
    w.ops.push_back(u.op);
  w.form = pointwiseName(fn) + (alpha != 0.0 ? " times Lk^-alpha" : "") +
           (chain.ops.size() > 1
                ? " (" + std::to_string(chain.ops.size()) + " elementwise ops)"
                : "") +
           (w.postMask ? ", masked after h" : "");
  return w;
}

/// Whether the normalizer reads its scores twice (the max and the exp of a
/// decomposed softmax, or a feature map's products).
bool readsScoresTwice(const Weights &weights) {
  return StringRef(weights.form).starts_with("softmax decomposed") ||
         weights.featureMap.has_value();
}

SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

/// Matches the output product `m.pvOp` and the normalizer of its weights P
/// into `m`; returns the product. A subgraph without a normalizer is not
/// attention (a silent miss).
Matched<Contraction> matchOutputAndNormalizer(AttentionMatch &m) {
  auto pvMatch = matchContraction(m.pvOp, "the output product");
  if (auto *miss = std::get_if<Miss>(&pvMatch))
    return Miss{miss->why, /*silent=*/true};
  Contraction pv = std::get<Contraction>(pvMatch);
  Value p = m.pvOp.getDpsInputs()[0];
  m.v = m.pvOp.getDpsInputs()[1];
  auto pType = dyn_cast<RankedTensorType>(p.getType());
  if (!pType)
    return Miss{"the weights are not a ranked tensor", true};
  m.rank = pType.getRank();

  // The normalizer: a subgraph without one is not attention (silent).
  // A softmax that fails past its division says why; otherwise the
  // pointwise match does (silent when the weights are not an elementwise
  // function of the scores).
  auto softmax = matchSoftmax(p, m.rank);
  if (auto *w = std::get_if<Weights>(&softmax)) {
    m.weights = *w;
  } else {
    auto pointwise = matchPointwise(p, pType.getShape().back());
    // matchSoftmax's misses before its division are silent.
    bool softmaxStarted = !std::get<Miss>(softmax).silent;
    if (auto *w = std::get_if<Weights>(&pointwise))
      m.weights = *w;
    else if (softmaxStarted)
      return std::get<Miss>(softmax);
    else
      return std::get<Miss>(pointwise);
  }

  // P [batch..., Lq, Lk] times V [batch..., Lk, Dv], static shapes.
  // An elementwise function of a product, times another tensor in another
  // layout, is rarely attention (silent); a softmax is.
  if (pv.lhs != concat(pv.batch, {pv.m, pv.k}) ||
      pv.rhs != concat(pv.batch, {pv.k, pv.n}))
    return Miss{"the output product is not P [..., Lq, Lk] x V [..., Lk, "
                "Dv]",
                /*silent=*/isa<PointwiseAttr>(m.weights.normalizer)};
  if (!pType.hasStaticShape() ||
      !cast<RankedTensorType>(m.v.getType()).hasStaticShape())
    return Miss{"the shapes are not static"};
  if (!p.hasOneUse())
    return Miss{"the weights have another use"};
  if (!pv.zeroInit)
    return Miss{"the output product does not accumulate into zeros"};
  return pv;
}

/// Matches a mask before the normalizer on the scores `s` into `m` (and its
/// scale into `m.scale`), and moves `s` to the scores it masks: a causal
/// one from the loop indices (square scores: the exporters' j <= i is
/// attn's bottom-right alignment when Lq == Lk) becomes #attn.causal; other
/// index masks a constant mask operand (attn-infer-mask reads its pattern);
/// mask tensors the operand.
/// Records the mask `masked` of the [..., Lq, Lk] value `s` in `m`: a
/// causal index mask (square scores) as #attn.causal, another as the mask.
void applyMask(AttentionMatch &m, const ScoreMask &masked, Value s) {
  auto sType = cast<RankedTensorType>(s.getType());
  int64_t r = sType.getRank();
  bool square = sType.getDimSize(r - 1) == sType.getDimSize(r - 2);
  if (masked.indexCond && square &&
      isCausalCondition(masked.indexCond, masked.indexRank))
    m.pattern = CausalAttr::get(s.getContext());
  else
    m.mask = masked;
  m.maskOps.append(masked.ops.begin(), masked.ops.end());
}

std::optional<Miss> matchMaskedScores(AttentionMatch &m, Value &s) {
  if (m.weights.postMask)
    applyMask(m, *m.weights.postMask, s);
  // Linear attention's feature products are masked with 0, the scores of
  // other normalizers with -inf.
  auto maskMatch = matchMask(s, m.weights.featureMap.has_value());
  if (auto *miss = std::get_if<Miss>(&maskMatch); miss && !miss->silent)
    return *miss;
  auto *masked = std::get_if<ScoreMask>(&maskMatch);
  if (!masked)
    return std::nullopt;
  if (m.weights.postMask)
    return Miss{"the scores are masked both before and after the "
                "pointwise function"};
  if (auto pw = dyn_cast<PointwiseAttr>(m.weights.normalizer);
      pw && !raise::vanishesAtMinusInfinity(pw.getFn()))
    return Miss{"the scores are masked with -inf before " +
                pointwiseName(pw.getFn()) +
                ", which is not 0 at -inf (the graph computes NaN or -inf)"};
  if (!s.hasNUses(readsScoresTwice(m.weights) ? 2 : 1))
    return Miss{"the masked scores have another use"};
  applyMask(m, *masked, s);
  s = masked->scores;
  m.scale = masked->scale;
  return std::nullopt;
}

std::optional<Miss> matchScoreScale(AttentionMatch &m, Value &s) {
  unsigned scoreUses = m.maskOps.empty() && readsScoresTwice(m.weights) ? 2 : 1;
  if (auto sc = matchScale(s)) {
    if (!s.hasNUses(scoreUses))
      return Miss{"the scaled scores have another use"};
    m.scale *= sc->first;
    m.scaleOp = sc->second;
    s = cast<linalg::LinalgOp>(m.scaleOp).getDpsInputs()[0];
    scoreUses = 1;
  } else if (looksLikeScale(s)) {
    return Miss{"the scores are scaled by something that is not a constant"};
  }
  if (!s.hasNUses(scoreUses))
    return Miss{"the scores have another use"};
  return std::nullopt;
}

std::optional<Miss> matchScores(AttentionMatch &m, Value s,
                                const Contraction &pv) {
  auto qkMatch = matchContraction(s.getDefiningOp(), "the scores");
  if (auto *miss = std::get_if<Miss>(&qkMatch))
    return *miss;
  Contraction qk = std::get<Contraction>(qkMatch);
  if (!qk.zeroInit)
    return Miss{"the scores do not accumulate into zeros"};
  if (qk.batch.size() != pv.batch.size())
    return Miss{"the two products have different batch dims"};
  m.qkOp = qk.op;
  m.k = qk.op.getDpsInputs()[1];
  if (qk.lhs != concat(qk.batch, {qk.m, qk.k}))
    return Miss{"the scores do not read Q as [..., Lq, D]"};
  m.q = qk.op.getDpsInputs()[0];
  if (qk.rhs == concat(qk.batch, {qk.k, qk.n}))
    m.keyTransposed = true;
  else if (qk.rhs != concat(qk.batch, {qk.n, qk.k}))
    return Miss{"the scores do not read K as [..., Lk, D] or [..., D, Lk]"};
  return std::nullopt;
}

std::optional<Miss> applyFeatures(AttentionMatch &m, const Features &fq,
                                  const Features &fk) {
  m.q = fq.input;
  m.k = fk.input;
  m.featureOps.append(fq.ops.begin(), fq.ops.end());
  m.featureOps.append(fk.ops.begin(), fk.ops.end());
  if (fq.map == FeatureMap::favor) {
    m.projection = fq.projection;
    m.transposeProjection = fq.projectionTransposed;
    if (fq.inputScale != 1.0)
      m.kernelScale = fq.inputScale * fq.inputScale;
  }
  return std::nullopt;
}

std::optional<Miss> matchFeatureMapInputs(AttentionMatch &m) {
  if (!m.weights.featureMap)
    return std::nullopt;
  if (m.scaleOp)
    return Miss{"linear attention with a scale on the feature products"};
  Value kt = m.k;
  if (auto t = kt.getDefiningOp<linalg::TransposeOp>())
    kt = t.getInput();
  std::optional<std::pair<Features, Features>> phi = sharedFeatures(m.q, kt);
  if (!phi)
    return Miss{"Q and K do not go through the same feature map"};
  if (!m.q.hasOneUse())
    return Miss{"phi(Q) has another use"};
  if (!kt.hasOneUse())
    return Miss{"phi(K) has another use"};
  // With a transpose between phi(K) and the product, phi(K) and so K
  // are [..., Lk, D]; without, K has the layout the product reads
  // (elementwise features only: FAVOR+ features are [..., Lk, m]).
  if (kt != m.k)
    m.keyTransposed = false;
  else if (m.keyTransposed && phi->first.map == FeatureMap::favor)
    return Miss{"the scores read FAVOR+ features of K transposed"};
  return applyFeatures(m, phi->first, phi->second);
}

std::optional<Miss> checkMask(AttentionMatch &m) {
  // Linear attention in linear order has no scores (its lq and lk are set).
  if (m.weights.scores) {
    auto sType = cast<RankedTensorType>(m.weights.scores.getType());
    m.lq = sType.getDimSize(m.rank - 2);
    m.lk = sType.getDimSize(m.rank - 1);
  }
  if (m.mask && m.mask->indexCond) {
    if (m.lq * m.lk > (int64_t(1) << 26))
      return Miss{"an index mask of more than 2^26 entries (it is "
                  "evaluated at compile time)"};
    m.indexBits.reserve(m.lq * m.lk);
    for (int64_t i = 0; i < m.lq; ++i)
      for (int64_t j = 0; j < m.lk; ++j) {
        std::optional<int64_t> bit =
            evalIndexExpr(m.mask->indexCond, m.mask->indexRank, i, j);
        if (!bit)
          return Miss{"the mask's condition reads more than the query "
                      "and key indices and constants"};
        m.indexBits.push_back(*bit != 0);
      }
    m.maskNote = ", mask from the indices (a constant)";
  } else if (m.mask) {
    auto tt = cast<RankedTensorType>(m.mask->tensor.getType());
    Type queryElem = cast<RankedTensorType>(m.q.getType()).getElementType();
    if (m.mask->additive ? tt.getElementType() != queryElem
                         : !tt.getElementType().isInteger(1))
      return Miss{"the mask tensor's element type is not the query's "
                  "(additive) or i1 (boolean)"};
    if (!tt.hasStaticShape())
      return Miss{"the mask tensor's shape is not static"};
    for (auto [r, e] : llvm::enumerate(m.mask->tensorMap.getResults()))
      if (isa<AffineConstantExpr>(e) && tt.getDimSize(r) != 1)
        return Miss{"the mask tensor is read at index 0 of a dim larger "
                    "than 1"};
    m.maskNote =
        m.mask->additive ? ", additive mask tensor" : ", boolean mask tensor";
  }
  return std::nullopt;
}

/// A layer normalization over the last dim (no affine parameters):
/// `(x - mean) / sqrt(var + eps)`, as front ends decompose it.
struct LayerNorm {
  Value input;
  double eps = 0.0;
  SmallVector<Operation *> ops;
};

/// Whether `v` is the layer normalization of a `[..., L, D]` tensor over D:
///   mean = sum(x) / D, xc = x - mean, var = sum(xc^2) / D,
///   y = xc / sqrt(var + eps) (or xc * rsqrt(...), in any spelling the
///   evaluator reads), each op of one use but x and xc (two).
std::optional<LayerNorm> matchLayerNorm(Value v) {
  auto norm = v.getDefiningOp<linalg::LinalgOp>();
  if (!norm || !isElementwise(norm, 2) || readsRow(norm, 0) ||
      !readsRow(norm, 1) || !v.hasOneUse())
    return std::nullopt;
  auto type = cast<RankedTensorType>(v.getType());
  double d = double(type.getShape().back());
  if (ShapedType::isDynamic(type.getShape().back()) || d < 2)
    return std::nullopt;
  LayerNorm ln;
  Value xc = norm.getDpsInputs()[0];
  // y = xc / sqrt(sum(xc^2) / D + eps).
  std::optional<RowFunction> f = rowSumFunction(norm, xc, true, ln.ops);
  std::optional<double> one = f ? (*f)(1.0, d) : std::nullopt;
  if (!one || !(*one > 0))
    return std::nullopt;
  double eps = 1.0 / (*one * *one) - 1.0;
  if (!(eps > 0) || !std::isfinite(eps) ||
      !agreesOnGrid(
          *f, {-2.0, 0.5, 3.0}, {0.2 * d, d, 7.0 * d},
          [&](double a, double s) { return a / std::sqrt(s / d + eps); }, 1e-5))
    return std::nullopt;
  // xc = x - sum(x) / D.
  auto center = xc.getDefiningOp<linalg::LinalgOp>();
  if (!center || !isElementwise(center, 2) || readsRow(center, 0) ||
      !readsRow(center, 1) || !xc.hasNUses(2))
    return std::nullopt;
  Value x = center.getDpsInputs()[0];
  std::optional<RowFunction> g = rowSumFunction(center, x, false, ln.ops);
  if (!g || !x.hasNUses(2) ||
      !agreesOnGrid(
          *g, {-2.0, 0.5, 3.0}, {-1.0, 0.0, 5.0},
          [&](double a, double s) { return a - s / d; }, 1e-6, 1.0))
    return std::nullopt;
  ln.input = x;
  ln.ops.append({norm, center});
  ln.eps = double(float(eps));
  return ln;
}

void matchOperands(AttentionMatch &m) {
  if (m.keyTransposed) {
    auto transpose = m.k.getDefiningOp<linalg::TransposeOp>();
    if (transpose &&
        transpose.getPermutation() == ArrayRef<int64_t>(swapLastTwo(m.rank)))
      m.k = transpose.getInput();
    else
      m.transposeKey = true;
  }
  // Grouped heads: K and V broadcast from the same fewer heads. A K the
  // build transposes is read through a new linalg.transpose, which is not
  // a broadcast of heads.
  if (m.rank == 4 && !m.transposeKey) {
    auto kSource = unbroadcastHeads(m.k), vSource = unbroadcastHeads(m.v);
    if (kSource && vSource && kSource->second == vSource->second) {
      m.k = kSource->first;
      m.v = vSource->first;
      m.operandNote = ", grouped heads (" + std::to_string(kSource->second) +
                      " query heads per key/value head)";
    }
  }
  // A scale applied to Q (not for kernel attention: the op's scale
  // multiplies both Q and K before the feature map).
  if (auto qs = m.weights.featureMap ? std::nullopt : matchQueryScale(m.q)) {
    m.q = qs->first;
    m.scale *= qs->second;
    m.operandNote += ", Q scaled";
  }
  // qk-layernorm: Q and K layer-normalized over D with the same eps.
  if (!m.transposeKey) {
    std::optional<LayerNorm> lq = matchLayerNorm(m.q), lk = matchLayerNorm(m.k);
    if (lq && lk && std::fabs(lq->eps - lk->eps) <= 1e-6 * lq->eps) {
      m.q = lq->input;
      m.k = lk->input;
      m.qkNormEps = lq->eps;
      m.featureOps.append(lq->ops.begin(), lq->ops.end());
      m.featureOps.append(lk->ops.begin(), lk->ops.end());
      llvm::raw_string_ostream(m.operandNote)
          << ", qk-layernorm (eps " << llvm::format("%g", lq->eps) << ")";
    }
  }
}

/// Matches the attention whose output contraction is `pvOp`, from the
/// output backwards, creating no IR; or says why not.
Matched<AttentionMatch> matchAttention(linalg::LinalgOp pvOp) {
  AttentionMatch m;
  m.pvOp = pvOp;
  Matched<Contraction> pv = matchOutputAndNormalizer(m);
  if (auto *miss = std::get_if<Miss>(&pv))
    return *miss;
  Value s = m.weights.scores;
  if (std::optional<Miss> miss = matchMaskedScores(m, s))
    return *miss;
  m.scale *= m.weights.scale;
  if (std::optional<Miss> miss = matchScoreScale(m, s))
    return *miss;
  if (std::optional<Miss> miss = matchScores(m, s, std::get<Contraction>(pv)))
    return *miss;
  if (std::optional<Miss> miss = matchFeatureMapInputs(m))
    return *miss;
  if (std::optional<Miss> miss = checkMask(m))
    return *miss;
  matchOperands(m);
  return m;
}

/// A gate on the output: its only user multiplies it elementwise by a
/// tensor of its shape (`O * G`, gated attention).
void matchGate(AttentionMatch &m) {
  Value out = m.pvOp->getResult(0);
  if (!out.hasOneUse())
    return;
  auto mul = dyn_cast<linalg::LinalgOp>(*out.getUsers().begin());
  if (!mul || !isElementwise(mul, 2) || readsRow(mul, 0) || readsRow(mul, 1) ||
      mul->getResult(0).getType() != out.getType())
    return;
  unsigned self = mul.getDpsInputs()[0] == out ? 0 : 1;
  Value g = mul.getDpsInputs()[1 - self];
  if (g == out || g.getType() != out.getType())
    return;
  auto y = yielded(mul).getDefiningOp<arith::MulFOp>();
  Value a = inputArg(mul, self), b = inputArg(mul, 1 - self);
  if (!y || !((y.getLhs() == a && y.getRhs() == b) ||
              (y.getLhs() == b && y.getRhs() == a)))
    return;
  m.gateOp = mul;
  m.gate = g;
  m.operandNote += ", gated";
}

/// Creates the mask operand of `m` at `b`'s insertion point: an index mask
/// as an i1 constant, a mask tensor with a unit dim in front of the right
/// one when it has three dims; null without a mask.
Value buildMaskOperand(const AttentionMatch &m, OpBuilder &b, Location loc) {
  if (m.mask && m.mask->indexCond) {
    auto type = RankedTensorType::get({m.lq, m.lk}, b.getI1Type());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, ArrayRef<bool>(m.indexBits)));
  }
  if (!m.mask)
    return Value();
  Value maskOperand = m.mask->tensor;
  auto tt = cast<RankedTensorType>(maskOperand.getType());
  if (m.mask->tensorMap.getNumResults() == 3) {
    // [B', Lq, Lk] of [B*H] operands, or [H', Lq, Lk]: a unit dim in
    // front of the right one.
    SmallVector<int64_t> shape =
        m.rank == 3 ? SmallVector<int64_t>{tt.getDimSize(0), 1, m.lq, m.lk}
                    : SmallVector<int64_t>{1, tt.getDimSize(0), m.lq, m.lk};
    maskOperand = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, tt.getElementType()), maskOperand,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  }
  // A mask broadcast along the queries ([..., 1, Lk]) is materialized as
  // [..., Lq, Lk] (the op broadcasts batch and head dims only).
  auto mt = cast<RankedTensorType>(maskOperand.getType());
  int64_t r = mt.getRank();
  if (mt.getDimSize(r - 2) == 1 && m.lq != 1) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 2 < r; ++d)
      groups.push_back({d});
    groups.push_back({r - 2, r - 1});
    SmallVector<int64_t> shape(mt.getShape());
    shape.erase(shape.begin() + r - 2);
    Value rows = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(shape, mt.getElementType()), maskOperand,
        groups);
    SmallVector<int64_t> full(mt.getShape());
    full[r - 2] = m.lq;
    Value init = tensor::EmptyOp::create(b, loc, full, mt.getElementType());
    maskOperand = linalg::BroadcastOp::create(b, loc, rows, init,
                                              ArrayRef<int64_t>{r - 2})
                      ->getResult(0);
  }
  return maskOperand;
}

/// The remark on a raised attention: its form, mask, scale and operands.
std::string raisedNote(const AttentionMatch &m) {
  std::string note;
  llvm::raw_string_ostream os(note);
  os << "raised attention: " << m.weights.form
     << (m.pattern ? ", causal mask from the indices" : "") << m.maskNote;
  if (!m.weights.featureMap)
    os << ", scale " << llvm::format("%g", m.scale);
  os << (m.keyTransposed ? ", K transposed" : "")
     << (m.rank == 3 ? ", [B*H, L, D] operands" : "") << m.operandNote;
  return note;
}

/// Creates the attn.attention op of `m` before the output product (with
/// the transpose of K, the mask operand and the reshapes of rank 3
/// operands it needs) and emits the remark; returns the value that
/// replaces the product. When the op does not verify, it is erased (what
/// was created for its operands stays) and the miss says so.
Matched<Value> buildAttention(const AttentionMatch &m, RewriterBase &b) {
  int64_t rank = m.rank;
  Location loc = m.pvOp->getLoc();
  // The gate may be computed after the product.
  b.setInsertionPoint(m.gateOp ? static_cast<Operation *>(m.gateOp)
                               : static_cast<Operation *>(m.pvOp));
  Value k = m.k;
  if (m.transposeKey) {
    auto kt = cast<RankedTensorType>(k.getType());
    SmallVector<int64_t> shape(kt.getShape());
    std::swap(shape[rank - 1], shape[rank - 2]);
    Value init = tensor::EmptyOp::create(b, loc, shape, kt.getElementType());
    SmallVector<int64_t> perm = swapLastTwo(rank);
    k = linalg::TransposeOp::create(b, loc, k, init, perm)->getResult(0);
  }
  auto to4d = [&](Value x) -> Value {
    if (rank == 4)
      return x;
    auto t = cast<RankedTensorType>(x.getType());
    auto type = RankedTensorType::get(
        {t.getDimSize(0), 1, t.getDimSize(1), t.getDimSize(2)},
        t.getElementType());
    return tensor::ExpandShapeOp::create(
        b, loc, type, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  };
  // The problem the graph computes (AttentionProblem.h), the op built from
  // it. The reshapes are created in the order query, key, value.
  AttentionProblem problem;
  problem.masking.tensor = buildMaskOperand(m, b, loc);
  problem.query = to4d(m.q);
  problem.key = to4d(k);
  problem.value = to4d(m.v);
  if (m.gate)
    problem.modifiers.gate = to4d(m.gate);
  problem.normalizer = m.weights.normalizer;
  problem.masking.pattern = m.pattern;
  problem.explicitScale = !m.weights.featureMap || m.kernelScale;
  problem.scale = m.kernelScale ? *m.kernelScale : m.scale;
  problem.qkNormEps = m.qkNormEps;
  if (m.projection) {
    problem.projection = m.projection;
    if (m.transposeProjection) {
      auto wt = cast<RankedTensorType>(m.projection.getType());
      Value init = tensor::EmptyOp::create(
          b, loc, ArrayRef<int64_t>{wt.getDimSize(1), wt.getDimSize(0)},
          wt.getElementType());
      problem.projection =
          linalg::TransposeOp::create(b, loc, m.projection, init,
                                      ArrayRef<int64_t>{1, 0})
              ->getResult(0);
    }
  }
  auto q4 = cast<RankedTensorType>(problem.query.getType());
  problem.results.output = RankedTensorType::get(
      {q4.getDimSize(0), q4.getDimSize(1), q4.getDimSize(2),
       cast<RankedTensorType>(problem.value.getType()).getDimSize(3)},
      q4.getElementType());
  auto op = AttentionOp::create(b, loc, problem);
  if (failed(mlir::verify(op))) {
    b.eraseOp(op);
    return Miss{"the raised op does not verify"};
  }
  Value result = op.getResult();
  if (rank == 3)
    result = tensor::CollapseShapeOp::create(
        b, loc, m.pvOp->getResult(0).getType(), result,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  op->emitRemark(raisedNote(m));
  return result;
}

/// Replaces the output product's result by `result`, then erases the
/// matched ops (outputs first) and what only they used (fills, empties,
/// the transpose of K).
void replaceMatched(const AttentionMatch &m, Value result,
                    RewriterBase &rewriter) {
  Operation *root = m.gateOp ? static_cast<Operation *>(m.gateOp)
                             : static_cast<Operation *>(m.pvOp);
  rewriter.replaceAllUsesWith(root->getResult(0), result);
  SmallVector<Operation *> dead = {root, m.pvOp};
  dead.append(m.weights.ops.begin(), m.weights.ops.end());
  if (m.scaleOp)
    dead.push_back(m.scaleOp);
  dead.append(m.maskOps.begin(), m.maskOps.end());
  dead.push_back(m.qkOp);
  dead.append(m.featureOps.begin(), m.featureOps.end());
  SmallVector<Operation *> worklist(dead.begin(), dead.end());
  while (!worklist.empty()) {
    Operation *d = worklist.pop_back_val();
    if (!isOpTriviallyDead(d))
      continue;
    for (Value operand : d->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    rewriter.eraseOp(d);
    llvm::erase(worklist, d);
  }
}

/// Whether `op` may be the output product of an attention: a contraction
/// of two inputs whose left operand comes from a softmax or an elementwise
/// op (a possible normalizer).
bool isCandidate(linalg::LinalgOp op) {
  if (isNormalizedProduct(op))
    return true;
  if (op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return false;
  Operation *def = op.getDpsInputs()[0].getDefiningOp();
  return isa_and_nonnull<linalg::SoftmaxOp>(def) ||
         (isa_and_nonnull<linalg::LinalgOp>(def) &&
          !linalg::isaContractionOpInterface(cast<linalg::LinalgOp>(def)) &&
          cast<linalg::LinalgOp>(def).getNumReductionLoops() == 0);
}

} // namespace mlir::attn::raise

namespace {

using namespace mlir::attn::raise;

/// Raises the attention whose output product is the matched op:
/// matchAttention, then buildAttention and replaceMatched. A failed step is
/// reported to the rewriter (notifyMatchFailure) and to `onMiss`. Not for
/// the greedy driver as is: when the raised op does not verify, the
/// reshapes and the transpose created for its operands stay (and the
/// pattern fails having changed the IR), as attn-raise always did.
struct RaiseAttention : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  /// Called with the op and the miss of each failed step.
  using MissHandler = std::function<void(Operation *, const Miss &)>;

  RaiseAttention(MLIRContext *ctx, MissHandler onMiss)
      : OpInterfaceRewritePattern(ctx), onMiss(std::move(onMiss)) {}

  /// Matches, then builds and replaces; reports the failed step, if any.
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isCandidate(op))
      return rewriter.notifyMatchFailure(
          op, "not a contraction of what a normalizer computes");
    Matched<AttentionMatch> match = isNormalizedProduct(op)
                                        ? matchNormalizedProduct(op)
                                        : matchAttention(op);
    if (auto *miss = std::get_if<Miss>(&match))
      return reportMiss(op, *miss, rewriter);
    auto &m = std::get<AttentionMatch>(match);
    matchGate(m);
    Matched<Value> built = buildAttention(m, rewriter);
    if (auto *miss = std::get_if<Miss>(&built))
      return reportMiss(op, *miss, rewriter);
    replaceMatched(m, std::get<Value>(built), rewriter);
    return success();
  }

private:
  /// Reports `miss` on `op` to `onMiss` and to the rewriter; fails.
  LogicalResult reportMiss(Operation *op, const Miss &miss,
                           PatternRewriter &rewriter) const {
    onMiss(op, miss);
    return rewriter.notifyMatchFailure(op, miss.why);
  }

  MissHandler onMiss;
};

struct AttnRaise : public attn::impl::AttnRaiseBase<AttnRaise> {
  using Base::Base;
  void runOnOperation() override {
    // Candidates first (raising erases ops), in walk order. The pattern is
    // applied to each once, by hand: the greedy driver would also fold and
    // hoist constants, erase unrelated dead ops and visit the ops in
    // another order, which would change the output and the remarks.
    // Products normalized after them (linear attention) go first: their
    // numerators are output products of their own.
    RaiseAttention pattern(&getContext(), [&](Operation *op, const Miss &why) {
      if (!why.silent && missRemarks)
        op->emitRemark() << "not raised to attn.attention: " << why.why;
    });
    PatternRewriter rewriter(&getContext());
    for (bool normalized : {true, false}) {
      SmallVector<linalg::LinalgOp> candidates;
      getOperation().walk([&](linalg::LinalgOp op) {
        if (isCandidate(op) && isNormalizedProduct(op) == normalized)
          candidates.push_back(op);
      });
      for (linalg::LinalgOp op : candidates)
        (void)pattern.matchAndRewrite(op, rewriter);
    }
  }
};

} // namespace
