//===- RaiseKernel.cpp - attn-raise: kernelized (linear) attention ---===//
//
// The feature maps of kernelized attention (elu + 1 and relu found by
// evaluation, FAVOR+ with its projection) and the products normalized after
// the V product, in quadratic and in linear order (docs/Raising.md).
//
//===----------------------------------------------------------------------===//

#include "RaiseMatch.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
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

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::raise {

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

Value featureInput(linalg::LinalgOp op) {
  std::optional<raise::UnaryOp> u = raise::asUnary(op);
  return u ? op.getDpsInputs()[u->input] : op.getDpsInputs()[0];
}

KernelAttr kernelAttr(MLIRContext *ctx, const Features &f, double eps) {
  return KernelAttr::get(ctx, f.map,
                         f.map == FeatureMap::favor ? f.features : 0, false, 0,
                         APFloat(eps));
}

std::string featureMapName(const Features &f) {
  if (f.map == FeatureMap::favor)
    return "FAVOR+ features, m = " + std::to_string(f.features);
  return std::string(f.map == FeatureMap::relu ? "relu" : "elu + 1") +
         " features";
}

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
  std::optional<RowFunction> g = rowSumFunction(op, x, true, f.ops);
  std::optional<double> c = g ? (*g)(0.0, 0.0) : std::nullopt;
  if (!c || !(*c > 0) || !x.hasNUses(2) ||
      !agreesOnGrid(
          *g, {-1.0, 0.5, 2.0}, {0.0, 1.3, 4.0},
          [&](double a, double n) { return *c * std::exp(a - n / 2); }, 1e-5))
    return std::nullopt;
  f.factor = *c;
  f.ops.append({op, proj});
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

/// The pieces of linear attention in linear order.
struct LinearOrder {
  /// KV = phi(K)^T V, z = sum_k phi(K), the denominator phi(Q) z.
  linalg::LinalgOp kvOp, ksumOp, denOp;
  /// phi(K) as KV reads it (maybe transposed), and z.
  Value phiK, ksum;
};

/// The pieces of linear attention in linear order under the denominator
/// `denOp` (phi(Q) times z): KV = phi(K)^T V producing `rhs`, and z =
/// sum_k phi(K) (over dim -2 of phi(K), or the last dim of its
/// transpose); std::nullopt when they are not there.
std::optional<LinearOrder> findLinearOrder(Value rhs, linalg::LinalgOp denOp) {
  LinearOrder lo;
  lo.denOp = denOp;
  linalg::LinalgOp &kvOp = lo.kvOp, &ksumOp = lo.ksumOp;
  Value &phiK = lo.phiK, &ksum = lo.ksum;
  kvOp = rhs.getDefiningOp<linalg::LinalgOp>();
  if (!kvOp || kvOp.getNumDpsInputs() != 2 ||
      !linalg::isaContractionOpInterface(kvOp))
    return std::nullopt;
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
    return std::nullopt;
  return lo;
}

/// Matches linear attention in linear order into `m`: phi(K)^T V over the
/// keys, z = sum_k phi(K), the denominator phi(Q) z, each read once; fills
/// the operands from the feature maps `phi`.
std::optional<Miss> matchLinearOrder(AttentionMatch &m, LinearOrder lo,
                                     Value lhs, Value rhs,
                                     const Contraction &pv,
                                     const std::pair<Features, Features> &phi,
                                     const std::string &epsNote) {
  linalg::LinalgOp kvOp = lo.kvOp, ksumOp = lo.ksumOp, denOp = lo.denOp;
  Value phiK = lo.phiK, ksum = lo.ksum;
  const Features &fq = phi.first;
  m.weights.form =
      "linear attention (" + featureMapName(fq) + ") in linear order" + epsNote;
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
  bool keysUsedTwice = readers(phiK) && readers(phiKRead) &&
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
  (void)applyFeatures(m, phi.first, phi.second);
  m.lq = cast<RankedTensorType>(m.q.getType()).getDimSize(m.rank - 2);
  m.lk = cast<RankedTensorType>(m.k.getType()).getDimSize(m.rank - 2);
  if (!cast<RankedTensorType>(m.v.getType()).hasStaticShape())
    return Miss{"the shapes are not static"};
  return std::nullopt;
}

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
  LinearOrder order;
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
    std::optional<LinearOrder> found = findLinearOrder(rhs, denOp);
    if (!found)
      return Miss{"not a normalized product", /*silent=*/true};
    order = *found;
    phi = sharedFeatures(lhs, order.phiK);
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
  } else if (std::optional<Miss> miss =
                 matchLinearOrder(m, order, lhs, rhs, pv, *phi, epsNote)) {
    return *miss;
  }
  if (quadratic)
    if (std::optional<Miss> miss = matchFeatureMapInputs(m))
      return *miss;
  if (std::optional<Miss> miss = checkMask(m))
    return *miss;
  matchOperands(m);
  return m;
}

} // namespace mlir::attn::raise
