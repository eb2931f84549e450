//===- Raise.cpp - Attention written as linalg ops to attn.attention ------===//
//
// Matches from the output contraction backwards: O = P V, P a softmax (named
// or decomposed) or a (scaled) relu of S' = scale * S, S = Q K^T. Named ops
// and linalg.generic are matched alike through the LinalgOp interface:
// indexing maps say which dims are batch, query, key and head dims, the
// bodies say what the elementwise and reduction ops compute.
//
//===----------------------------------------------------------------------===//

#include "RaiseExpr.h"
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

namespace {

/// A failed match: why (for the remark). `silent` when the subgraph does
/// not look like attention at all (a matmul after an activation): no
/// remark.
struct Miss {
  std::string why;
  bool silent = false;
};
template <typename T>
using Matched = std::variant<T, Miss>;

/// The loop dims an operand's indexing map reads, in order, if the map is
/// a projected permutation.
std::optional<SmallVector<unsigned>> dimsOf(AffineMap map) {
  if (!map.isProjectedPermutation())
    return std::nullopt;
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults())
    dims.push_back(cast<AffineDimExpr>(e).getPosition());
  return dims;
}

SmallVector<unsigned> concat(ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
  SmallVector<unsigned> r(a.begin(), a.end());
  r.append(b.begin(), b.end());
  return r;
}

/// Whether `v` is a tensor filled with the float `value` (linalg.fill of a
/// constant), or with a value below -1e30 when `value` is -inf (or a NaN
/// when `nanIsIdentity`: the identity of maxnumf, which upstream's softmax
/// decomposition uses).
bool isFilledWith(Value v, double value, bool nanIsIdentity = false) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  FloatAttr attr;
  if (!fill || !matchPattern(fill.value(), m_Constant(&attr)))
    return false;
  double x = attr.getValueAsDouble();
  if (std::isinf(value) && value < 0)
    return x <= -1e30 || (nanIsIdentity && std::isnan(x));
  return x == value;
}

/// The float constant `v` is (a scalar arith.constant), if any.
std::optional<double> constantOf(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

/// The value a single-block linalg op yields.
Value yielded(linalg::LinalgOp op) {
  return op.getBlock()->getTerminator()->getOperand(0);
}

/// The block argument of the payload for DPS input `i`.
Value inputArg(linalg::LinalgOp op, unsigned i) {
  return op.getBlock()->getArgument(i);
}

/// A contraction with batch dims, one query (m), one key (n) and one
/// reduced (k) dim, accumulating into zeros.
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  SmallVector<unsigned> lhs, rhs, out;
  /// Whether it accumulates into zeros (a plain product).
  bool zeroInit = false;
};

Matched<Contraction> matchContraction(Operation *op, StringRef what) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics() ||
      !linalg::isaContractionOpInterface(linalgOp))
    return Miss{(what + " is not a contraction of two tensors").str()};
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.empty() || dims->batch.size() > 2)
    return Miss{(what + " is not a batched matrix product").str()};
  Contraction c{linalgOp,   llvm::to_vector(dims->batch),
                dims->m[0], dims->n[0],
                dims->k[0], {},
                {},         {}};
  auto maps = linalgOp.getIndexingMapsArray();
  auto lhs = dimsOf(maps[0]), rhs = dimsOf(maps[1]), out = dimsOf(maps[2]);
  if (!lhs || !rhs || !out)
    return Miss{(what + " has indexing maps that are not permutations").str()};
  c.lhs = *lhs;
  c.rhs = *rhs;
  c.out = *out;
  if (c.out != concat(c.batch, {c.m, c.n}))
    return Miss{(what + " does not produce [batch..., rows, columns]").str()};
  c.zeroInit = isFilledWith(linalgOp.getDpsInits()[0], 0.0);
  return c;
}

/// Whether `map` reads a row value in a loop nest of rank `rank`: the
/// first rank - 1 dims, the last dropped ([..., i]) or read at 0 from a
/// size-1 dim ([..., i, 1], what TOSA's keep-dim reductions give).
bool isRowMap(AffineMap map, unsigned rank) {
  if (map.getNumResults() != rank && map.getNumResults() != rank - 1)
    return false;
  for (unsigned d = 0; d + 1 < rank; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return false;
  if (map.getNumResults() == rank - 1)
    return true;
  auto last = dyn_cast<AffineConstantExpr>(map.getResult(rank - 1));
  return last && last.getValue() == 0;
}

/// Whether `op` is elementwise over its rank: all loops parallel, the init
/// and every full-rank input read with the identity map, other inputs
/// read as row values (isRowMap).
bool isElementwise(linalg::LinalgOp op, unsigned numInputs) {
  if (!op || op.getNumDpsInputs() != numInputs || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0)
    return false;
  unsigned rank = op.getNumLoops();
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity() && !isRowMap(map, rank))
      return false;
  return op.getIndexingMapsArray().back().isIdentity();
}

/// Whether input `i` of `op` is read as a row value.
bool readsRow(linalg::LinalgOp op, unsigned i) {
  return !op.getMatchingIndexingMap(op.getDpsInputOperand(i)).isIdentity();
}

/// The value a row reduction reduces: its input, or the source of the
/// `tensor.expand_shape` that put a unit dim before the last (TOSA's
/// keep-dim reductions reduce `[..., L, 1, Lk]`).
Value reducedValue(linalg::LinalgOp op) {
  Value in = op.getDpsInputs()[0];
  auto expand = in.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return in;
  auto type = expand.getResultType();
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (rank < 3 || type.getDimSize(rank - 2) != 1 ||
      groups.back() != ReassociationIndices{rank - 1} ||
      groups[groups.size() - 2] != ReassociationIndices{rank - 3, rank - 2})
    return in;
  return expand.getSrc();
}

/// A reduction over the last dim of its single input into [..., i], whose
/// payload combines input and accumulator with `Combiner`.
template <typename... Combiner>
bool isRowReduction(linalg::LinalgOp op, double init) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1)
    return false;
  unsigned rank = op.getNumLoops();
  auto iters = op.getIteratorTypesArray();
  if (iters.back() != utils::IteratorType::reduction)
    return false;
  auto in = dimsOf(op.getIndexingMapsArray()[0]);
  auto out = dimsOf(op.getIndexingMapsArray()[1]);
  SmallVector<unsigned> full = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  if (!in || !out || *in != full ||
      *out != SmallVector<unsigned>(full.begin(), full.end() - 1))
    return false;
  Operation *combine = yielded(op).getDefiningOp();
  if (!combine || !isa<Combiner...>(combine))
    return false;
  Value a = inputArg(op, 0), acc = op.getBlock()->getArgument(1);
  bool operands =
      (combine->getOperand(0) == a && combine->getOperand(1) == acc) ||
      (combine->getOperand(0) == acc && combine->getOperand(1) == a);
  return operands && isFilledWith(op.getDpsInits()[0], init,
                                  isa<arith::MaxNumFOp>(combine));
}

/// A mask applied to the (maybe scaled) scores before the normalizer, as
/// exporters and elementwise fusion leave it: one elementwise op over the
/// scores `s` (E = s, s * c or s / c) yielding
///   - `select(cond, E, -inf)` or `E + select(cond, 0, -inf)`, `cond` a
///     predicate of the loop indices (e.g. `j <= i`): an index mask;
///   - `E + m` with `m` read from a tensor: an additive mask tensor (or an
///     index mask when that tensor is an op without inputs yielding
///     `select(cond, 0, -inf)`);
///   - `select(m, E, -inf)` or `E + select(m, 0, -inf)` with `m` read from
///     an i1 tensor: a boolean mask tensor.
struct ScoreMask {
  Value scores;
  double scale = 1.0;
  SmallVector<Operation *> ops;
  /// An index mask: the predicate (true = allowed) and the op whose loop
  /// indices it reads.
  Value indexCond;
  unsigned indexRank = 0;
  /// A mask tensor and the map the masking op reads it with.
  Value tensor;
  AffineMap tensorMap;
  bool additive = false;
  /// After the normalizer: the masked value when it is not a multiple of
  /// the input (`select(m, h(x), 0)`, h fused into the masking op), and
  /// the payload argument `x` it is computed from.
  Value valueExpr, valueArg;
};

/// What the weights P are: the normalizer, and the scores S' they are
/// computed from.
struct Weights {
  NormalizerAttrInterface normalizer;
  Value scores;
  SmallVector<Operation *> ops;
  std::string form;
  /// Kernel attention: the feature map Q and K went through (their
  /// elementwise ops are unwrapped when the scores are matched).
  std::optional<FeatureMap> featureMap;
  /// Pointwise attention: the scale found inside the elementwise chain
  /// (`h(a * s)`), and a mask applied after h (a `0` fill).
  double scale = 1.0;
  std::optional<ScoreMask> postMask;
};

/// The feature map an elementwise op of one tensor applies, found by
/// evaluating it: elu(x) + 1 (`select(x > 0, x + 1, exp(x))`, or TOSA's
/// spelling) or relu (`max(x, 0)`, a clamp).
std::optional<FeatureMap> featureMapOf(linalg::LinalgOp op) {
  std::optional<raise::UnaryOp> u = raise::asUnary(op);
  if (!u)
    return std::nullopt;
  bool elu = true, relu = true;
  SmallVector<double> points = {-60.0, -5.0, -1.5, -0.3, 0.2,
                                0.9,   2.5,  7.0,  60.0};
  points.append(raise::probePoints({op.getOperation()}));
  for (double x : points) {
    std::optional<double> y = (*u)(x);
    if (!y)
      return std::nullopt;
    double e = x > 0 ? x + 1 : std::exp(x), r = std::max(x, 0.0);
    elu &= std::fabs(*y - e) <= 1e-6 * std::max(1.0, std::fabs(e));
    relu &= std::fabs(*y - r) <= 1e-6 * std::max(1.0, std::fabs(r));
  }
  if (elu)
    return FeatureMap::elu_plus_one;
  if (relu)
    return FeatureMap::relu;
  return std::nullopt;
}

/// The tensor a feature map op reads (its variable input).
Value featureInput(linalg::LinalgOp op) {
  std::optional<raise::UnaryOp> u = raise::asUnary(op);
  return u ? op.getDpsInputs()[u->input] : op.getDpsInputs()[0];
}

/// The features phi(x) of Q or K in kernel attention: an elementwise feature
/// map of x, or FAVOR+ (`c exp(x W^T - |x|^2 / 2)` with a projection W).
struct Features {
  FeatureMap map;
  /// x, before the scale (Q or K).
  Value input;
  /// x = inputScale * input (FAVOR+, e.g. Performer's D^-1/4).
  double inputScale = 1.0;
  /// FAVOR+: W, read as [m, D] (or [D, m] when `projectionTransposed`),
  /// m, and the constant c (1 / sqrt(m) in Performer's definition).
  Value projection;
  bool projectionTransposed = false;
  int64_t features = 0;
  double factor = 1.0;
  /// The ops from `input` to phi(x).
  SmallVector<Operation *> ops;
};
std::optional<Features> featuresOf(Value phi);

/// The kernel normalizer of features `f` with `eps`.
KernelAttr kernelAttr(MLIRContext *ctx, const Features &f, double eps) {
  return KernelAttr::get(ctx, f.map,
                         f.map == FeatureMap::favor ? f.features : 0, false, 0,
                         APFloat(eps));
}

/// The feature map name, for the remark.
std::string featureMapName(const Features &f) {
  if (f.map == FeatureMap::favor)
    return "FAVOR+ features, m = " + std::to_string(f.features);
  return std::string(f.map == FeatureMap::relu ? "relu" : "elu + 1") +
         " features";
}

/// The features of Q (`phiQ`) and K (`phiK`, maybe through a transpose),
/// when they are the same map (FAVOR+: the same projection, scale and
/// constant).
std::optional<std::pair<Features, Features>> sharedFeatures(Value phiQ,
                                                            Value phiK) {
  if (auto t = phiK.getDefiningOp<linalg::TransposeOp>())
    phiK = t.getInput();
  std::optional<Features> q = featuresOf(phiQ), k = featuresOf(phiK);
  if (!q || !k || q->map != k->map || q->projection != k->projection ||
      q->projectionTransposed != k->projectionTransposed ||
      std::fabs(q->inputScale - k->inputScale) > 1e-6 * q->inputScale ||
      std::fabs(q->factor - k->factor) > 1e-6 * q->factor)
    return std::nullopt;
  return std::make_pair(*q, *k);
}

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
    return Miss{"the weights are not a softmax"};
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
    return Miss{"the weights are not exp(...) divided by a row sum"};
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

/// An elementwise multiplication or division of the scores by a constant.
std::optional<std::pair<double, Operation *>> matchScale(Value s) {
  auto op = s.getDefiningOp<linalg::LinalgOp>();
  if (!isElementwise(op, 1))
    return std::nullopt;
  Value x = inputArg(op, 0);
  Operation *body = yielded(op).getDefiningOp();
  if (auto mul = dyn_cast_or_null<arith::MulFOp>(body)) {
    Value other = mul.getLhs() == x ? mul.getRhs() : mul.getLhs();
    if (mul.getLhs() != x && mul.getRhs() != x)
      return std::nullopt;
    if (std::optional<double> c = constantOf(other))
      return std::make_pair(*c, op.getOperation());
  }
  if (auto div = dyn_cast_or_null<arith::DivFOp>(body))
    if (div.getLhs() == x)
      if (std::optional<double> c = constantOf(div.getRhs()); c && *c != 0)
        return std::make_pair(1.0 / *c, op.getOperation());
  return std::nullopt;
}

/// Whether the scale op looks like one but is not a constant (for the
/// remark).
bool looksLikeScale(Value s) {
  auto op = s.getDefiningOp<linalg::LinalgOp>();
  if (!op || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      op.getNumDpsInputs() == 0)
    return false;
  Operation *body = yielded(op).getDefiningOp();
  return body && isa<arith::MulFOp, arith::DivFOp>(body);
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

/// Whether `cond` compares the key index with the query index of a
/// payload as `j <= i` (a causal mask computed with linalg.index), `i` and
/// `j` being loop dims `rank - 2` and `rank - 1`.
bool isCausalCondition(Value cond, unsigned rank) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  auto indexDim = [](Value v) -> std::optional<uint64_t> {
    if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
      v = cast.getIn();
    if (auto index = v.getDefiningOp<linalg::IndexOp>())
      return index.getDim();
    return std::nullopt;
  };
  auto lhs = indexDim(cmp.getLhs()), rhs = indexDim(cmp.getRhs());
  if (!lhs || !rhs)
    return false;
  uint64_t i = rank - 2, j = rank - 1;
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  return (*lhs == j && *rhs == i && (p == P::sle || p == P::ule)) ||
         (*lhs == i && *rhs == j && (p == P::sge || p == P::uge));
}

/// Whether `v` is a constant at most -1e30 (a masked score).
bool isMinusInfinity(Value v) {
  std::optional<double> c = constantOf(v);
  return c && *c <= -1e30;
}

/// `e` as a multiple of `x`: 1 for `x` itself, `c` for `x * c` or
/// `c * x`, `1 / c` for `x / c` (a scale fused into the mask's payload).
std::optional<double> multipleOf(Value e, Value x) {
  if (e == x)
    return 1.0;
  if (auto mul = e.getDefiningOp<arith::MulFOp>()) {
    if (mul.getLhs() == x)
      return constantOf(mul.getRhs());
    if (mul.getRhs() == x)
      return constantOf(mul.getLhs());
  }
  if (auto div = e.getDefiningOp<arith::DivFOp>(); div && div.getLhs() == x)
    if (std::optional<double> c = constantOf(div.getRhs()); c && *c != 0)
      return 1.0 / *c;
  return std::nullopt;
}

/// The value of an integer or index expression of a payload that reads
/// only the loop indices `i` (dim `rank - 2`) and `j` (dim `rank - 1`) and
/// constants, at (i, j); std::nullopt for anything else (another dim, a
/// block argument, an op it does not know).
std::optional<int64_t> evalIndexExpr(Value v, unsigned rank, int64_t i,
                                     int64_t j, int depth = 0) {
  if (depth > 32)
    return std::nullopt;
  auto eval = [&](Value x) { return evalIndexExpr(x, rank, i, j, depth + 1); };
  if (auto index = v.getDefiningOp<linalg::IndexOp>()) {
    if (index.getDim() == rank - 2)
      return i;
    if (index.getDim() == rank - 1)
      return j;
    return std::nullopt;
  }
  IntegerAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getType().isInteger(1) ? (attr.getValue().isZero() ? 0 : 1)
                                       : attr.getValue().getSExtValue();
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(
          op))
    return eval(op->getOperand(0));
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    std::optional<int64_t> c = eval(select.getCondition());
    return c ? eval(*c ? select.getTrueValue() : select.getFalseValue())
             : std::nullopt;
  }
  if (op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> a = eval(op->getOperand(0));
  std::optional<int64_t> b = a ? eval(op->getOperand(1)) : std::nullopt;
  if (!b)
    return std::nullopt;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    using P = arith::CmpIPredicate;
    uint64_t ua = *a, ub = *b;
    switch (cmp.getPredicate()) {
    case P::eq:
      return *a == *b;
    case P::ne:
      return *a != *b;
    case P::slt:
      return *a < *b;
    case P::sle:
      return *a <= *b;
    case P::sgt:
      return *a > *b;
    case P::sge:
      return *a >= *b;
    case P::ult:
      return ua < ub;
    case P::ule:
      return ua <= ub;
    case P::ugt:
      return ua > ub;
    case P::uge:
      return ua >= ub;
    }
  }
  if (isa<arith::AddIOp>(op))
    return *a + *b;
  if (isa<arith::SubIOp>(op))
    return *a - *b;
  if (isa<arith::MulIOp>(op))
    return *a * *b;
  if (isa<arith::AndIOp>(op))
    return *a & *b;
  if (isa<arith::OrIOp>(op))
    return *a | *b;
  if (isa<arith::XOrIOp>(op))
    return *a ^ *b;
  if (isa<arith::MinSIOp>(op))
    return std::min(*a, *b);
  if (isa<arith::MaxSIOp>(op))
    return std::max(*a, *b);
  if (*b == 0)
    return std::nullopt;
  if (isa<arith::DivSIOp>(op))
    return *a / *b;
  if (isa<arith::RemSIOp>(op))
    return *a % *b;
  if (isa<arith::FloorDivSIOp>(op))
    return llvm::divideFloorSigned(*a, *b);
  return std::nullopt;
}

/// Whether `v` is `select(cond, 0, -inf)`; returns `cond`.
Value additiveCondition(Value v) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  std::optional<double> zero =
      select ? constantOf(select.getTrueValue()) : std::nullopt;
  if (select && zero && *zero == 0 && isMinusInfinity(select.getFalseValue()))
    return select.getCondition();
  return Value();
}

/// Whether `map` reads a mask tensor: each result a loop dim or the
/// constant 0, the last two the key and query dims.
bool isMaskMap(AffineMap map, unsigned rank) {
  unsigned n = map.getNumResults();
  if (n < 2 || n > rank)
    return false;
  for (auto [r, e] : llvm::enumerate(map.getResults())) {
    // Broadcast dims (read at 0) before the key dim: the batch and head
    // dims, or the query dim (a key padding mask, [B, 1, 1, Lk]).
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0 || r + 1 >= n)
        return false;
      continue;
    }
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || d.getPosition() != rank - n + r)
      return false;
  }
  return true;
}

/// With `afterNormalizer` (a mask on pointwise weights or on the feature
/// products of linear attention), the masked value is 0 instead of -inf
/// and there is no additive form.
Matched<ScoreMask> matchMask(Value s, bool afterNormalizer = false) {
  Miss none{"no mask", /*silent=*/true};
  auto isFill = [&](Value v) {
    if (!afterNormalizer)
      return isMinusInfinity(v);
    std::optional<double> c = constantOf(v);
    return c && *c == 0.0;
  };
  auto op = s.getDefiningOp<linalg::LinalgOp>();
  if (!op || op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() != 0 || op.getNumDpsInputs() < 1 ||
      op.getNumDpsInputs() > 2 ||
      !op.getIndexingMapsArray().back().isIdentity())
    return none;
  unsigned rank = op.getNumLoops();
  Value y = yielded(op);
  auto fill = [&](Value selectValue) -> Matched<ScoreMask> {
    std::optional<double> c = constantOf(selectValue);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "the masked scores are filled with "
       << llvm::format("%g", c ? *c : 0.0)
       << (afterNormalizer ? ", not 0" : ", not -inf")
       << " (rows with no allowed key would differ)";
    return Miss{text};
  };
  for (unsigned x = 0; x < op.getNumDpsInputs(); ++x) {
    if (!op.getMatchingIndexingMap(op.getDpsInputOperand(x)).isIdentity())
      continue;
    Value scores = inputArg(op, x);
    Value other = op.getNumDpsInputs() == 2 ? inputArg(op, 1 - x) : Value();
    ScoreMask m;
    m.scores = op.getDpsInputs()[x];
    m.ops = {op.getOperation()};
    std::optional<double> c;
    Value cond;
    // select(cond, E, fill)
    if (auto select = y.getDefiningOp<arith::SelectOp>()) {
      std::optional<double> e = multipleOf(select.getTrueValue(), scores);
      // After the normalizer, any function of the input alone (h fused in).
      raise::Bindings probe;
      probe[scores] = 1.3;
      if (!e && afterNormalizer &&
          raise::evaluate(select.getTrueValue(), probe)) {
        m.valueExpr = select.getTrueValue();
        m.valueArg = scores;
        e = 1.0;
      }
      if (e) {
        if (!isFill(select.getFalseValue())) {
          if (constantOf(select.getFalseValue()))
            return fill(select.getFalseValue());
          continue;
        }
        c = e;
        cond = select.getCondition();
      }
    }
    // E + t
    if (auto add = y.getDefiningOp<arith::AddFOp>(); add && !afterNormalizer) {
      for (auto [e, t] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}}) {
        std::optional<double> f = multipleOf(e, scores);
        if (!f)
          continue;
        if (Value ac = additiveCondition(t)) {
          c = f;
          cond = ac;
        } else if (other && t == other) {
          c = f;
          m.additive = true;
        }
        break;
      }
    }
    if (!c)
      continue;
    m.scale = *c;
    // A boolean tensor is read directly as the select's condition.
    bool boolTensor = cond && other && cond == other;
    if (m.additive || boolTensor) {
      // A mask tensor; an op without inputs yielding select(cond, 0, -inf)
      // over the same loops is an index mask.
      OpOperand *operand = op.getDpsInputOperand(1 - x);
      AffineMap map = op.getMatchingIndexingMap(operand);
      Value t = operand->get();
      if (!isMaskMap(map, rank))
        return Miss{"the mask is not read as [Lq, Lk] or broadcast from [B, "
                    "H, Lq, Lk]"};
      // Computed by an op without inputs from its indices: an index mask
      // (its last two loops are the query and key dims).
      auto producer = t.getDefiningOp<linalg::LinalgOp>();
      if (producer && producer.getNumDpsInputs() == 0 &&
          producer.getNumDpsInits() == 1 &&
          producer.getNumReductionLoops() == 0 &&
          producer.getIndexingMapsArray().back().isIdentity() &&
          t.hasOneUse()) {
        Value pc = m.additive ? additiveCondition(yielded(producer))
                              : yielded(producer);
        if (pc && evalIndexExpr(pc, producer.getNumLoops(), 0, 0)) {
          m.indexCond = pc;
          m.indexRank = producer.getNumLoops();
          m.additive = false;
          m.ops.push_back(producer);
          return m;
        }
      }
      m.tensor = t;
      m.tensorMap = map;
      return m;
    }
    // After the normalizer, `select(x > 0, x, 0)` is a relu, not a mask.
    if (cond && afterNormalizer && !evalIndexExpr(cond, rank, 0, 0))
      continue;
    if (cond) {
      m.indexCond = cond;
      m.indexRank = rank;
      return m;
    }
  }
  return none;
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
  auto preMask = matchMask(chain.source);
  bool fromScores =
      isProduct(chain.source) ||
      (std::holds_alternative<ScoreMask>(preMask) &&
       isProduct(std::get<ScoreMask>(preMask).scores)) ||
      (matchScale(chain.source) &&
       isProduct(cast<linalg::LinalgOp>(matchScale(chain.source)->second)
                     .getDpsInputs()[0]));
  if ((chain.ops.empty() && !fusedExpr) || !fromScores)
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

/// A matched attention graph, found without creating IR: what the build
/// step creates the attn.attention op from, and what it replaces.
struct AttentionMatch {
  /// The output product O = P V, whose result the op replaces.
  linalg::LinalgOp pvOp;
  /// The rank of the products: 4 ([B, H, L, D]) or 3 ([B*H, L, D]).
  int64_t rank = 0;
  /// The normalizer, the scores it reads and its ops.
  Weights weights;
  /// The score product S = Q K^T.
  linalg::LinalgOp qkOp;
  /// Q, K and V as the op reads them (before the unit head dim of rank 3
  /// operands); K still [..., D, Lk] when `transposeKey`.
  Value q, k, v;
  /// Whether the scores read K transposed (for the remark).
  bool keyTransposed = false;
  /// Whether the build transposes K (no transpose of it to look through).
  bool transposeKey = false;
  /// The scale (the mask's, the scores' and Q's), and its op on the scores.
  double scale = 1.0;
  Operation *scaleOp = nullptr;
  /// A causal mask from the indices, or another mask; the masking ops.
  MaskPatternAttrInterface pattern;
  std::optional<ScoreMask> mask;
  SmallVector<Operation *> maskOps;
  /// An index mask evaluated at each (i, j) of [Lq, Lk], row-major.
  SmallVector<bool> indexBits;
  int64_t lq = 0, lk = 0;
  /// The feature map ops on Q and K (kernel attention), and those of
  /// qk-layernorm.
  SmallVector<Operation *> featureOps;
  std::optional<double> qkNormEps;
  /// FAVOR+: the projection operand (transposed by the build when the
  /// graph gives it as [D, m]) and the scale of Q and K before the
  /// features (the op's scale multiplies both by its square root).
  Value projection;
  bool transposeProjection = false;
  std::optional<double> kernelScale;
  /// A gate: the op multiplying the output elementwise by `gate`, whose
  /// result the op replaces then.
  linalg::LinalgOp gateOp;
  Value gate;
  /// The remark's notes on the mask and on the operands (grouped heads, Q
  /// scaled).
  std::string maskNote, operandNote;
};

/// Whether the normalizer reads its scores twice (the max and the exp of a
/// decomposed softmax, or a feature map's products).
bool readsScoresTwice(const Weights &weights) {
  return StringRef(weights.form).starts_with("softmax decomposed") ||
         weights.featureMap.has_value();
}

/// The permutation that swaps the last two of `rank` dims.
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
    const std::string &softmaxWhy = std::get<Miss>(softmax).why;
    bool softmaxStarted =
        softmaxWhy != "the weights are not a softmax" &&
        softmaxWhy != "the weights are not exp(...) divided by a row sum";
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

/// Matches a constant scale of the scores `s` into `m` and moves `s` to the
/// scores it scales. The decomposed softmax reads the scores twice (max,
/// exp).
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

/// Matches the scores `s` = Q K^T into `m` (the product, Q, K and whether
/// it reads K transposed), with the batch dims of the output product `pv`.
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

/// Kernel attention: moves `m.q` and `m.k` to Q and K before the feature
/// map (matched with the normalizer), recording its ops.
/// Moves `m.q` and `m.k` to Q and K before their features `fq` and `fk`.
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

/// The mask, checked (and an index mask evaluated into `m.indexBits`)
/// before any IR is built.
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

/// The elementwise op of two inputs `op` (the first read whole, the second
/// as a row value through the unary chain `row`), as a function of both.
std::function<std::optional<double>(double, double)>
rowFunction(linalg::LinalgOp op, const raise::UnaryChain &row) {
  return [op, row](double a, double r) -> std::optional<double> {
    std::optional<double> t = row(r);
    if (!t)
      return std::nullopt;
    raise::Bindings env;
    env[inputArg(op, 0)] = a;
    env[inputArg(op, 1)] = *t;
    return raise::evaluate(yielded(op), env);
  };
}

/// A sum over the last dim of `x` (linalg.reduce or a generic, maybe of a
/// keep-dim expand_shape); with `squares`, of x^2 (the payload `acc + a *
/// a`, or a sum of an elementwise square of x).
bool isRowSum(Operation *o, Value x, bool squares,
              SmallVector<Operation *> &ops) {
  auto op = dyn_cast_or_null<linalg::LinalgOp>(o);
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !isFilledWith(op.getDpsInits()[0], 0.0))
    return false;
  Value in = reducedValue(op);
  if (isRowReduction<arith::AddFOp>(op, 0.0)) {
    if (!squares)
      return in == x;
    std::optional<raise::UnaryOp> sq = raise::asUnary(in.getDefiningOp());
    if (!sq || sq->op.getDpsInputs()[sq->input] != x || !in.hasOneUse())
      return false;
    for (double a : {-1.5, 0.5, 3.0}) {
      std::optional<double> y = (*sq)(a);
      if (!y || std::fabs(*y - a * a) > 1e-9 * a * a)
        return false;
    }
    ops.push_back(sq->op);
    return true;
  }
  // acc + a * a in the payload.
  if (!squares || in != x || op.getNumLoops() < 2)
    return false;
  unsigned rank = op.getNumLoops();
  auto inDims = dimsOf(op.getIndexingMapsArray()[0]);
  auto outDims = dimsOf(op.getIndexingMapsArray()[1]);
  SmallVector<unsigned> full = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  if (!inDims || !outDims || *inDims != full ||
      *outDims != SmallVector<unsigned>(full.begin(), full.end() - 1))
    return false;
  for (auto [a, acc] : {std::pair{3.0, 2.0}, std::pair{-1.5, 0.5}}) {
    raise::Bindings env;
    env[inputArg(op, 0)] = a;
    env[op.getBlock()->getArgument(1)] = acc;
    std::optional<double> y = raise::evaluate(yielded(op), env);
    if (!y || std::fabs(*y - (a * a + acc)) > 1e-9 * (a * a + acc))
      return false;
  }
  return true;
}

/// FAVOR+ features `c exp(x W^T - |x|^2 / 2)` of `phi`: an elementwise op
/// of `xw = x W^T` (x `[..., L, D]`, W `[m, D]` or `[D, m]` without batch
/// dims) and the row value `|x|^2` (through a unary chain, e.g. `/ 2`),
/// computing it as the evaluator reads it; x maybe a constant times Q.
std::optional<Features> favorFeatures(Value phi) {
  auto op = phi.getDefiningOp<linalg::LinalgOp>();
  if (!op || !isElementwise(op, 2) || readsRow(op, 0) || !readsRow(op, 1))
    return std::nullopt;
  Value xw = op.getDpsInputs()[0];
  auto proj = xw.getDefiningOp<linalg::LinalgOp>();
  if (!proj || proj.getNumDpsInputs() != 2 || proj.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(proj) ||
      proj.getNumReductionLoops() != 1 ||
      !isFilledWith(proj.getDpsInits()[0], 0.0) || !xw.hasOneUse())
    return std::nullopt;
  unsigned rank = proj.getNumLoops();
  auto xDims = dimsOf(proj.getIndexingMapsArray()[0]);
  auto wDims = dimsOf(proj.getIndexingMapsArray()[1]);
  auto outDims = dimsOf(proj.getIndexingMapsArray()[2]);
  if (!xDims || !wDims || !outDims || outDims->size() != rank - 1 ||
      xDims->size() != rank - 1 || wDims->size() != 2)
    return std::nullopt;
  // Loops (batch..., l, r, d): x reads (batch..., l, d), W (r, d) or (d, r).
  unsigned r = outDims->back(), d = xDims->back();
  SmallVector<unsigned> batchL(outDims->begin(), outDims->end() - 1);
  if (concat(batchL, {d}) != *xDims ||
      proj.getIteratorTypesArray()[d] != utils::IteratorType::reduction)
    return std::nullopt;
  Features f;
  f.map = FeatureMap::favor;
  if (*wDims == SmallVector<unsigned>{r, d})
    f.projectionTransposed = false;
  else if (*wDims == SmallVector<unsigned>{d, r})
    f.projectionTransposed = true;
  else
    return std::nullopt;
  f.projection = proj.getDpsInputs()[1];
  auto wType = dyn_cast<RankedTensorType>(f.projection.getType());
  if (!wType || !wType.hasStaticShape() || !wType.getElementType().isF32())
    return std::nullopt;
  f.features = wType.getDimSize(f.projectionTransposed ? 1 : 0);
  Value x = proj.getDpsInputs()[0];
  raise::UnaryChain sqChain = raise::unaryChainTo(op.getDpsInputs()[1]);
  if (!isRowSum(sqChain.source.getDefiningOp(), x, true, f.ops) ||
      !x.hasNUses(2))
    return std::nullopt;
  auto g = rowFunction(op, sqChain);
  std::optional<double> c = g(0.0, 0.0);
  if (!c || !(*c > 0))
    return std::nullopt;
  for (double a : {-1.0, 0.5, 2.0})
    for (double n : {0.0, 1.3, 4.0}) {
      std::optional<double> y = g(a, n);
      double want = *c * std::exp(a - n / 2);
      if (!y || std::fabs(*y - want) > 1e-5 * want)
        return std::nullopt;
    }
  f.factor = *c;
  f.ops.append({op, proj, sqChain.source.getDefiningOp()});
  for (const raise::UnaryOp &u : sqChain.ops)
    f.ops.push_back(u.op);
  f.input = x;
  if (auto scale = matchScale(x)) {
    f.input = cast<linalg::LinalgOp>(scale->second).getDpsInputs()[0];
    f.inputScale = scale->first;
    f.ops.push_back(scale->second);
  }
  return f;
}

std::optional<Features> featuresOf(Value phi) {
  if (auto op = phi.getDefiningOp<linalg::LinalgOp>())
    if (std::optional<FeatureMap> map = featureMapOf(op)) {
      Features f;
      f.map = *map;
      f.input = featureInput(op);
      f.ops = {op};
      return f;
    }
  return favorFeatures(phi);
}

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
  raise::UnaryChain varChain = raise::unaryChainTo(norm.getDpsInputs()[1]);
  if (!isRowSum(varChain.source.getDefiningOp(), xc, true, ln.ops))
    return std::nullopt;
  auto f = rowFunction(norm, varChain);
  std::optional<double> one = f(1.0, d);
  if (!one || !(*one > 0))
    return std::nullopt;
  ln.eps = 1.0 / (*one * *one) - 1.0;
  if (!(ln.eps > 0) || !std::isfinite(ln.eps))
    return std::nullopt;
  for (double a : {-2.0, 0.5, 3.0})
    for (double var : {0.2, 1.0, 7.0}) {
      std::optional<double> y = f(a, var * d);
      double want = a / std::sqrt(var + ln.eps);
      if (!y || std::fabs(*y - want) > 1e-5 * std::fabs(want))
        return std::nullopt;
    }
  // xc = x - sum(x) / D.
  auto center = xc.getDefiningOp<linalg::LinalgOp>();
  if (!center || !isElementwise(center, 2) || readsRow(center, 0) ||
      !readsRow(center, 1) || !xc.hasNUses(2))
    return std::nullopt;
  Value x = center.getDpsInputs()[0];
  raise::UnaryChain meanChain = raise::unaryChainTo(center.getDpsInputs()[1]);
  if (!isRowSum(meanChain.source.getDefiningOp(), x, false, ln.ops) ||
      !x.hasNUses(2))
    return std::nullopt;
  auto g = rowFunction(center, meanChain);
  for (double a : {-2.0, 0.5, 3.0})
    for (double sum : {-1.0, 0.0, 5.0}) {
      std::optional<double> y = g(a, sum);
      double want = a - sum / d;
      if (!y || std::fabs(*y - want) > 1e-6 * std::max(1.0, std::fabs(want)))
        return std::nullopt;
    }
  ln.input = x;
  ln.ops.append({norm, center, varChain.source.getDefiningOp(),
                 meanChain.source.getDefiningOp()});
  for (const raise::UnaryOp &u : varChain.ops)
    ln.ops.push_back(u.op);
  for (const raise::UnaryOp &u : meanChain.ops)
    ln.ops.push_back(u.op);
  ln.eps = double(float(ln.eps));
  return ln;
}

/// The operands as the op reads them, found without creating IR: K through
/// a transpose of its last two dims (else the build transposes it), K and
/// V from fewer heads, Q through a constant scale.
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

/// Whether `op` may normalize a product after it: an elementwise op of two
/// inputs, the first a contraction's result, the second read as a row
/// value (`(A V) / rowsum(A)`, `phi(Q) (phi(K)^T V) / (phi(Q) . z)`).
bool isNormalizedProduct(linalg::LinalgOp op) {
  if (!isElementwise(op, 2) || readsRow(op, 0) || !readsRow(op, 1))
    return false;
  auto num = op.getDpsInputs()[0].getDefiningOp<linalg::LinalgOp>();
  return num && num.getNumDpsInputs() == 2 &&
         linalg::isaContractionOpInterface(num);
}

/// The eps of `n / (d + eps)` (eps >= 0 a constant) that the division op
/// computes from its numerator n and its row value, `d` through the unary
/// chain `den` (`+ eps`, a reciprocal, ...); std::nullopt if it computes
/// something else.
std::optional<double> divisionEps(linalg::LinalgOp div,
                                  const raise::UnaryChain &den) {
  Value n = inputArg(div, 0), d = inputArg(div, 1), y = yielded(div);
  auto g = [&](double nv, double dv) -> std::optional<double> {
    std::optional<double> dd = den(dv);
    if (!dd)
      return std::nullopt;
    raise::Bindings env;
    env[n] = nv;
    env[d] = *dd;
    return raise::evaluate(y, env);
  };
  std::optional<double> one = g(1.0, 1.0);
  if (!one || !(*one > 0))
    return std::nullopt;
  double eps = 1.0 / *one - 1.0;
  if (eps < -1e-7)
    return std::nullopt;
  eps = std::max(eps, 0.0);
  SmallVector<Operation *> payloads = {div.getOperation()};
  for (const raise::UnaryOp &u : den.ops)
    payloads.push_back(u.op);
  SmallVector<double> dens = {0.3, 1.0, 2.0, 17.0, 1e4};
  for (double p : raise::probePoints(payloads))
    if (p > 0)
      dens.append({p, p / 2});
  for (double nv : {-2.5, 0.75, 3.0})
    for (double dv : dens) {
      std::optional<double> v = g(nv, dv);
      double expected = nv / (dv + eps);
      if (!v || std::fabs(*v - expected) > 1e-5 * std::fabs(expected))
        return std::nullopt;
    }
  // The constant as the graph's element type has it.
  return double(float(eps));
}

/// A sum over the key dim (loop `rank - 2`) of a `[..., Lk, D]` tensor into
/// `[..., D]`: `sum_k phi(K)` of linear attention in linear order.
bool isKeySum(linalg::LinalgOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1)
    return false;
  unsigned rank = op.getNumLoops();
  if (rank < 3 ||
      op.getIteratorTypesArray()[rank - 2] != utils::IteratorType::reduction)
    return false;
  auto in = dimsOf(op.getIndexingMapsArray()[0]);
  auto out = dimsOf(op.getIndexingMapsArray()[1]);
  SmallVector<unsigned> full = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  SmallVector<unsigned> kept = full;
  kept.erase(kept.begin() + rank - 2);
  if (!in || !out || *in != full || *out != kept)
    return false;
  auto add = yielded(op).getDefiningOp<arith::AddFOp>();
  Value a = inputArg(op, 0), acc = op.getBlock()->getArgument(1);
  return add &&
         ((add.getLhs() == a && add.getRhs() == acc) ||
          (add.getLhs() == acc && add.getRhs() == a)) &&
         isFilledWith(op.getDpsInits()[0], 0.0);
}

/// Linear attention normalized after the V product, `div` the division:
///   - quadratic order: `(A V) / (rowsum(A) + eps)`, A = phi(Q) phi(K)^T
///     (maybe masked with a 0 fill);
///   - linear order: `phi(Q) KV / (phi(Q) . z + eps)`, KV = phi(K)^T V and
///     z = sum_k phi(K).
/// Silent when it does not look like linear attention.
Matched<AttentionMatch> matchNormalizedProduct(linalg::LinalgOp div) {
  MLIRContext *ctx = div.getContext();
  Value num = div.getDpsInputs()[0], den = div.getDpsInputs()[1];
  auto pvMatch = matchContraction(num.getDefiningOp(), "the numerator");
  if (auto *miss = std::get_if<Miss>(&pvMatch))
    return Miss{miss->why, /*silent=*/true};
  Contraction pv = std::get<Contraction>(pvMatch);
  raise::UnaryChain dchain = raise::unaryChainTo(den);
  auto denOp = dchain.source.getDefiningOp<linalg::LinalgOp>();
  Value lhs = pv.op.getDpsInputs()[0], rhs = pv.op.getDpsInputs()[1];
  bool quadratic =
      isRowReduction<arith::AddFOp>(denOp, 0.0) && reducedValue(denOp) == lhs;
  bool linear = denOp && denOp.getNumDpsInputs() == 2 &&
                linalg::isaContractionOpInterface(denOp) &&
                denOp.getDpsInputs()[0] == lhs;
  if (!quadratic && !linear)
    return Miss{"not a normalized product", /*silent=*/true};
  AttentionMatch m;
  m.pvOp = div;
  m.rank = cast<RankedTensorType>(num.getType()).getRank();
  std::optional<std::pair<Features, Features>> phi;
  Value phiK, ksum;
  linalg::LinalgOp kvOp, ksumOp;
  if (quadratic) {
    auto maskMatch = matchMask(lhs, /*afterNormalizer=*/true);
    Value products = lhs;
    if (auto *masked = std::get_if<ScoreMask>(&maskMatch))
      products = masked->scores;
    auto qk = products.getDefiningOp<linalg::LinalgOp>();
    if (!qk || qk.getNumDpsInputs() != 2 ||
        !linalg::isaContractionOpInterface(qk))
      return Miss{"not a normalized product", /*silent=*/true};
    phi = sharedFeatures(qk.getDpsInputs()[0], qk.getDpsInputs()[1]);
  } else {
    kvOp = rhs.getDefiningOp<linalg::LinalgOp>();
    if (!kvOp || kvOp.getNumDpsInputs() != 2 ||
        !linalg::isaContractionOpInterface(kvOp))
      return Miss{"not a normalized product", /*silent=*/true};
    phiK = kvOp.getDpsInputs()[0];
    ksum = denOp.getDpsInputs()[1];
    // z read as [..., D, 1] (TOSA's matmul by a column).
    if (auto expand = ksum.getDefiningOp<tensor::ExpandShapeOp>();
        expand && expand.getResultType().getRank() >= 2 &&
        expand.getResultType().getShape().back() == 1 &&
        expand.getReassociationIndices().back().size() == 2)
      ksum = expand.getSrc();
    ksumOp = ksum.getDefiningOp<linalg::LinalgOp>();
    Value keys = phiK;
    if (auto t = keys.getDefiningOp<linalg::TransposeOp>())
      keys = t.getInput();
    // sum_k phi(K): over dim -2 of phi(K), or over the last dim of its
    // transpose.
    bool sums = (isKeySum(ksumOp) && ksumOp.getDpsInputs()[0] == keys) ||
                (keys != phiK && isRowReduction<arith::AddFOp>(ksumOp, 0.0) &&
                 reducedValue(ksumOp) == phiK);
    if (!sums)
      return Miss{"not a normalized product", /*silent=*/true};
    phi = sharedFeatures(lhs, phiK);
  }
  // From here on, the graph divides a product by its own row sums: say
  // why it is not raised.
  if (!phi)
    return Miss{"the product is normalized by its row sums, but Q and K do "
                "not go through the same feature map (elu + 1, relu or "
                "FAVOR+)"};
  std::optional<double> eps = divisionEps(div, dchain);
  if (!eps)
    return Miss{"the product is divided by a row value, but not as num / "
                "(den + eps) with a constant eps >= 0"};
  if (!num.hasOneUse() || !den.hasOneUse() ||
      llvm::any_of(dchain.ops, [](const raise::UnaryOp &u) {
        return !u.op->getResult(0).hasOneUse();
      }))
    return Miss{"a normalization intermediate has another use"};
  if (!pv.zeroInit)
    return Miss{"the numerator does not accumulate into zeros"};
  if (pv.lhs != concat(pv.batch, {pv.m, pv.k}) ||
      pv.rhs != concat(pv.batch, {pv.k, pv.n}))
    return Miss{"the numerator is not [..., Lq, X] x [..., X, Dv]"};
  if (!cast<RankedTensorType>(num.getType()).hasStaticShape() ||
      !cast<RankedTensorType>(lhs.getType()).hasStaticShape() ||
      !cast<RankedTensorType>(rhs.getType()).hasStaticShape())
    return Miss{"the shapes are not static"};
  // With eps, FAVOR+'s constant does not cancel: it must be 1 / sqrt(m).
  const Features &fq = phi->first;
  if (fq.map == FeatureMap::favor && *eps != 0 &&
      std::fabs(fq.factor * std::sqrt(double(fq.features)) - 1.0) > 1e-5)
    return Miss{"FAVOR+ features scaled by a constant other than 1 / sqrt(m) "
                "with eps"};
  m.weights.normalizer = kernelAttr(ctx, fq, *eps);
  m.weights.featureMap = fq.map;
  m.weights.ops = {pv.op, denOp};
  for (const raise::UnaryOp &u : dchain.ops)
    m.weights.ops.push_back(u.op);
  std::string epsNote;
  if (*eps != 0)
    llvm::raw_string_ostream(epsNote) << ", eps " << llvm::format("%g", *eps);
  if (quadratic) {
    m.weights.form = "linear attention (" + featureMapName(fq) +
                     ") in quadratic form, normalized after the V product" +
                     epsNote;
    m.weights.scores = lhs;
    m.v = rhs;
    Value s = lhs;
    if (std::optional<Miss> miss = matchMaskedScores(m, s))
      return *miss;
    if (std::optional<Miss> miss = matchScoreScale(m, s))
      return *miss;
    if (std::optional<Miss> miss = matchScores(m, s, pv))
      return *miss;
  } else {
    m.weights.form = "linear attention (" + featureMapName(fq) +
                     ") in linear order" + epsNote;
    // KV = phi(K)^T V over the keys: phi(K) read as [..., Lk, D] (or its
    // transpose as [..., D, Lk]), V as [..., Lk, Dv]; z = sum_k phi(K) read
    // by the denominator as [..., D].
    auto kvMatch = matchContraction(kvOp, "phi(K)^T V");
    if (auto *miss = std::get_if<Miss>(&kvMatch))
      return *miss;
    Contraction kvc = std::get<Contraction>(kvMatch);
    bool keyTransposed = phiK.getDefiningOp<linalg::TransposeOp>() != nullptr;
    SmallVector<unsigned> keyDims = keyTransposed
                                        ? concat(kvc.batch, {kvc.m, kvc.k})
                                        : concat(kvc.batch, {kvc.k, kvc.m});
    if (kvc.lhs != keyDims || kvc.rhs != concat(kvc.batch, {kvc.k, kvc.n}) ||
        !kvc.zeroInit || kvc.batch.size() != pv.batch.size())
      return Miss{"phi(K)^T V is not a product over the keys of [..., Lk, "
                  "D] and [..., Lk, Dv]"};
    // phi(K) and its transpose are read by KV and z only.
    Value phiKRead = phiK;
    if (keyTransposed) {
      auto t = phiK.getDefiningOp<linalg::TransposeOp>();
      if (t.getPermutation() != ArrayRef<int64_t>(swapLastTwo(m.rank)))
        return Miss{"phi(K) is transposed in another way"};
      m.weights.ops.push_back(t);
      phiK = t.getInput();
    }
    auto readers = [&](Value x) {
      return llvm::all_of(x.getUsers(), [&](Operation *u) {
        // The reduction may read a keep-dim expand_shape (TOSA, fused).
        bool expandForSum = isa<tensor::ExpandShapeOp>(u) &&
                            u->getResult(0).hasOneUse() &&
                            *u->getResult(0).getUsers().begin() == ksumOp;
        return u == kvOp || u == ksumOp || u == phiKRead.getDefiningOp() ||
               expandForSum;
      });
    };
    bool keysUsedTwice =
        readers(phiK) && readers(phiKRead) &&
        (keyTransposed ? phiK.hasOneUse() != phiKRead.hasOneUse()
                       : phiK.hasNUses(2));
    FailureOr<linalg::ContractionDimensions> dd =
        linalg::inferContractionDims(denOp);
    auto zDims = dimsOf(denOp.getIndexingMapsArray()[1]);
    auto outDims = dimsOf(denOp.getIndexingMapsArray()[2]);
    auto qDims = dimsOf(denOp.getIndexingMapsArray()[0]);
    // The denominator reads z as [..., D] or [..., D, 1] (n of size 1).
    SmallVector<unsigned> zWant, outWant;
    if (succeeded(dd) && dd->m.size() == 1 && dd->k.size() == 1) {
      zWant = concat(llvm::to_vector(dd->batch), {dd->k[0]});
      outWant = concat(llvm::to_vector(dd->batch), {dd->m[0]});
      if (dd->n.size() == 1 &&
          cast<RankedTensorType>(denOp->getResult(0).getType())
                  .getShape()
                  .back() == 1) {
        zWant.push_back(dd->n[0]);
        outWant.push_back(dd->n[0]);
      }
    }
    if (failed(dd) || dd->m.size() != 1 || dd->k.size() != 1 ||
        dd->n.size() > 1 || dd->batch.size() != pv.batch.size() || !zDims ||
        !outDims || !qDims ||
        *qDims != concat(llvm::to_vector(dd->batch), {dd->m[0], dd->k[0]}) ||
        *zDims != zWant || *outDims != outWant ||
        !isFilledWith(denOp.getDpsInits()[0], 0.0))
      return Miss{"the denominator is not phi(Q) [..., Lq, D] times sum_k "
                  "phi(K) [..., D]"};
    if (!lhs.hasNUses(2) || !keysUsedTwice || !rhs.hasOneUse() ||
        !ksum.hasOneUse())
      return Miss{"phi(Q), phi(K), phi(K)^T V or sum_k phi(K) has another "
                  "use"};
    m.weights.ops.push_back(ksumOp);
    if (Operation *expand = denOp.getDpsInputs()[1].getDefiningOp();
        expand && expand != ksumOp)
      m.weights.ops.push_back(expand);
    m.qkOp = kvOp;
    m.v = kvOp.getDpsInputs()[1];
    (void)applyFeatures(m, phi->first, phi->second);
    m.lq = cast<RankedTensorType>(m.q.getType()).getDimSize(m.rank - 2);
    m.lk = cast<RankedTensorType>(m.k.getType()).getDimSize(m.rank - 2);
    if (!cast<RankedTensorType>(m.v.getType()).hasStaticShape())
      return Miss{"the shapes are not static"};
  }
  if (quadratic)
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
