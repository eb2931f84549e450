//===- RaiseExpr.cpp - Scalar payloads of attn-raise, evaluated -----------===//

#include "RaiseExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

/// A float comparison of `a` and `b` (1 or 0), NaN unordered.
double compareFloats(arith::CmpFPredicate predicate, double a, double b) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (predicate) {
  case P::AlwaysFalse:
    return 0.0;
  case P::AlwaysTrue:
    return 1.0;
  case P::OEQ:
    return double(!unordered && a == b);
  case P::OGT:
    return double(!unordered && a > b);
  case P::OGE:
    return double(!unordered && a >= b);
  case P::OLT:
    return double(!unordered && a < b);
  case P::OLE:
    return double(!unordered && a <= b);
  case P::ONE:
    return double(!unordered && a != b);
  case P::ORD:
    return double(!unordered);
  case P::UEQ:
    return double(unordered || a == b);
  case P::UGT:
    return double(unordered || a > b);
  case P::UGE:
    return double(unordered || a >= b);
  case P::ULT:
    return double(unordered || a < b);
  case P::ULE:
    return double(unordered || a <= b);
  case P::UNE:
    return double(unordered || a != b);
  case P::UNO:
    return double(unordered);
  }
  llvm_unreachable("unknown predicate");
}

/// An integer comparison of `a` and `b` (1 or 0).
double compareInts(arith::CmpIPredicate predicate, double a, double b) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::eq:
    return double(a == b);
  case P::ne:
    return double(a != b);
  case P::slt:
  case P::ult:
    return double(a < b);
  case P::sle:
  case P::ule:
    return double(a <= b);
  case P::sgt:
  case P::ugt:
    return double(a > b);
  case P::sge:
  case P::uge:
    return double(a >= b);
  }
  llvm_unreachable("unknown predicate");
}

/// The value of a one-operand float operation of `a` (math functions,
/// negation), or std::nullopt for another operation.
std::optional<double> unaryValue(Operation *op, double a) {
  return llvm::TypeSwitch<Operation *, std::optional<double>>(op)
      .Case([&](arith::NegFOp) { return -a; })
      .Case([&](math::AbsFOp) { return std::fabs(a); })
      .Case([&](math::ExpOp) { return std::exp(a); })
      .Case([&](math::Exp2Op) { return std::exp2(a); })
      .Case([&](math::ExpM1Op) { return std::expm1(a); })
      .Case([&](math::LogOp) { return std::log(a); })
      .Case([&](math::Log1pOp) { return std::log1p(a); })
      .Case([&](math::Log2Op) { return std::log2(a); })
      .Case([&](math::Log10Op) { return std::log10(a); })
      .Case([&](math::ErfOp) { return std::erf(a); })
      .Case([&](math::TanhOp) { return std::tanh(a); })
      .Case([&](math::SqrtOp) { return std::sqrt(a); })
      .Case([&](math::RsqrtOp) { return 1.0 / std::sqrt(a); })
      .Case([&](math::CbrtOp) { return std::cbrt(a); })
      .Default([](Operation *) { return std::nullopt; });
}

/// The value of a two-operand operation of `a` and `b` (comparisons,
/// arithmetic, minima and maxima, powers), or std::nullopt.
std::optional<double> binaryValue(Operation *op, double a, double b) {
  if (auto cmp = dyn_cast<arith::CmpFOp>(op))
    return compareFloats(cmp.getPredicate(), a, b);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    return compareInts(cmp.getPredicate(), a, b);
  return llvm::TypeSwitch<Operation *, std::optional<double>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { return a + b; })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { return a - b; })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { return a * b; })
      .Case([&](arith::DivFOp) { return a / b; })
      .Case([&](arith::RemFOp) { return std::fmod(a, b); })
      .Case<arith::DivSIOp, arith::DivUIOp>([&](auto) -> std::optional<double> {
        if (b == 0)
          return std::nullopt;
        return std::trunc(a / b);
      })
      .Case([&](arith::FloorDivSIOp) -> std::optional<double> {
        if (b == 0)
          return std::nullopt;
        return std::floor(a / b);
      })
      .Case([&](arith::CeilDivSIOp) -> std::optional<double> {
        if (b == 0)
          return std::nullopt;
        return std::ceil(a / b);
      })
      .Case<arith::MaximumFOp>([&](auto) {
        return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      })
      .Case<arith::MinimumFOp>([&](auto) {
        return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      })
      .Case<arith::MaxNumFOp, arith::MaxSIOp>(
          [&](auto) { return std::fmax(a, b); })
      .Case<arith::MinNumFOp, arith::MinSIOp>(
          [&](auto) { return std::fmin(a, b); })
      .Case([&](math::PowFOp) { return std::pow(a, b); })
      .Case([&](math::FPowIOp) { return std::pow(a, b); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Evaluates one value, memoizing the values of a DAG.
struct Evaluator {
  const Bindings &env;
  llvm::DenseMap<Value, std::optional<double>> memo;

  std::optional<double> operator()(Value v, int depth = 0) {
    if (auto it = env.find(v); it != env.end())
      return it->second;
    if (depth > 64)
      return std::nullopt;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::optional<double> r = compute(v, depth);
    memo[v] = r;
    return r;
  }

  std::optional<double> compute(Value v, int depth) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    Attribute attr;
    if (matchPattern(v, m_Constant(&attr))) {
      if (auto f = dyn_cast<FloatAttr>(attr))
        return f.getValueAsDouble();
      if (auto i = dyn_cast<IntegerAttr>(attr))
        return i.getType().isInteger(1) ? double(!i.getValue().isZero())
                                        : double(i.getValue().getSExtValue());
      return std::nullopt;
    }
    auto arg = [&](unsigned i) {
      return (*this)(op->getOperand(i), depth + 1);
    };
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!type || !index || *index < 0 || *index >= type.getRank() ||
          type.isDynamicDim(*index))
        return std::nullopt;
      return double(type.getDimSize(*index));
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      DenseElementsAttr dense;
      if (matchPattern(extract.getTensor(), m_Constant(&dense)) &&
          dense.isSplat() && isa<FloatType>(dense.getElementType()))
        return dense.getSplatValue<APFloat>().convertToDouble();
      return std::nullopt;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
      std::optional<double> x = arg(0);
      if (!x || !trunc.getType().isF32())
        return std::nullopt;
      return double(float(*x));
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::SIToFPOp,
            arith::UIToFPOp, arith::ExtFOp, arith::ExtSIOp, arith::ExtUIOp>(op))
      return arg(0);
    if (op->getNumOperands() == 1) {
      std::optional<double> x = arg(0);
      if (!x)
        return std::nullopt;
      return unaryValue(op, *x);
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      std::optional<double> c = arg(0);
      if (!c)
        return std::nullopt;
      return *c != 0 ? arg(1) : arg(2);
    }
    if (auto fma = dyn_cast<math::FmaOp>(op)) {
      std::optional<double> a = arg(0), b = arg(1), c = arg(2);
      if (!a || !b || !c)
        return std::nullopt;
      return *a * *b + *c;
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    std::optional<double> x = arg(0), y = x ? arg(1) : std::nullopt;
    if (!y)
      return std::nullopt;
    return binaryValue(op, *x, *y);
  }
};

/// The splat value of a tensor `v` (a splat constant or a fill of one).
std::optional<double> splatValue(Value v) {
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return constantValue(fill.value());
  return std::nullopt;
}

/// The payload's bindings for the splat inputs of a unary op.
Bindings splatBindings(const UnaryOp &u) {
  Bindings env;
  for (unsigned i = 0, e = u.op.getNumDpsInputs(); i < e; ++i)
    if (i != u.input)
      env[u.op.getBlock()->getArgument(i)] =
          *splatValue(u.op.getDpsInputs()[i]);
  return env;
}

} // namespace

std::optional<double> raise::evaluate(Value v, const Bindings &env) {
  Evaluator eval{env, llvm::DenseMap<Value, std::optional<double>>()};
  return eval(v);
}

std::optional<double> raise::constantValue(Value v) {
  Bindings none;
  return evaluate(v, none);
}

std::optional<double> UnaryOp::operator()(double x) const {
  Bindings env = splatBindings(*this);
  env[op.getBlock()->getArgument(input)] = x;
  return evaluate(op.getBlock()->getTerminator()->getOperand(0), env);
}

std::optional<UnaryOp> raise::asUnary(Operation *o) {
  auto op = dyn_cast_or_null<linalg::LinalgOp>(o);
  if (!op || op.getNumDpsInits() != 1 || op.getNumDpsInputs() < 1 ||
      !op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0 ||
      op->getNumResults() != 1 || op.getBlock() == nullptr ||
      !op.getIndexingMapsArray().back().isIdentity() ||
      !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
    return std::nullopt;
  std::optional<unsigned> variable;
  for (unsigned i = 0, e = op.getNumDpsInputs(); i < e; ++i) {
    if (splatValue(op.getDpsInputs()[i]))
      continue;
    if (variable ||
        !op.getMatchingIndexingMap(op.getDpsInputOperand(i)).isIdentity())
      return std::nullopt;
    variable = i;
  }
  if (!variable ||
      !op.getBlock()->getArgument(op.getNumDpsInputs()).use_empty())
    return std::nullopt;
  bool readsIndex = false;
  op.getBlock()->walk([&](linalg::IndexOp) { readsIndex = true; });
  if (readsIndex)
    return std::nullopt;
  return UnaryOp{op, *variable};
}

std::optional<double> UnaryChain::operator()(double x) const {
  std::optional<double> y = x;
  for (const UnaryOp &u : ops) {
    y = u(*y);
    if (!y)
      return std::nullopt;
  }
  return y;
}

UnaryChain raise::unaryChainTo(Value v) {
  UnaryChain chain;
  Value cur = v;
  while (std::optional<UnaryOp> u = asUnary(cur.getDefiningOp())) {
    if (!chain.ops.empty() && !cur.hasOneUse())
      break;
    chain.ops.push_back(*u);
    cur = u->op.getDpsInputs()[u->input];
  }
  std::reverse(chain.ops.begin(), chain.ops.end());
  chain.source = cur;
  return chain;
}

double raise::leadingScale(const UnaryChain &chain) {
  if (chain.ops.empty())
    return 1.0;
  const UnaryOp &inner = chain.ops.front();
  return scaleOfUse(inner.op.getBlock()->getArgument(inner.input),
                    splatBindings(inner));
}

double raise::scaleOfUse(Value x, const Bindings &env) {
  if (!x || !x.hasOneUse())
    return 1.0;
  Operation *user = *x.getUsers().begin();
  auto constant = [&](Value c) { return evaluate(c, env); };
  std::optional<double> c;
  if (auto mul = dyn_cast<arith::MulFOp>(user))
    c = constant(mul.getLhs() == x ? mul.getRhs() : mul.getLhs());
  else if (auto div = dyn_cast<arith::DivFOp>(user); div && div.getLhs() == x)
    if ((c = constant(div.getRhs())))
      c = *c != 0 ? std::optional<double>(1.0 / *c) : std::nullopt;
  return c && std::isfinite(*c) && *c != 0 ? *c : 1.0;
}

namespace {
double reference(PointwiseFn fn, double s) {
  switch (fn) {
  case PointwiseFn::relu:
    return std::max(s, 0.0);
  case PointwiseFn::relu2:
    return std::max(s, 0.0) * std::max(s, 0.0);
  case PointwiseFn::gelu:
    return 0.5 * s * (1.0 + std::erf(s * M_SQRT1_2));
  case PointwiseFn::gelu_tanh:
    return 0.5 * s *
           (1.0 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
  case PointwiseFn::softplus:
    return std::log1p(std::exp(s));
  case PointwiseFn::identity:
    return s;
  case PointwiseFn::relu6:
    return std::min(std::max(s, 0.0), 6.0);
  case PointwiseFn::sigmoid:
    return 1.0 / (1.0 + std::exp(-s));
  }
  return NAN;
}
} // namespace

SmallVector<double> raise::probePoints(ArrayRef<Operation *> ops,
                                       double scale) {
  SmallVector<double> points;
  for (Operation *op : ops) {
    if (!op)
      continue;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        std::optional<double> c = constantValue(operand);
        if (!c || !std::isfinite(*c) || std::fabs(*c) < 1e-30 ||
            std::fabs(*c) > 1e30)
          continue;
        for (double p : {*c, 2 * *c, -*c, -2 * *c})
          for (double q : {p, scale != 0 ? p / scale : p})
            if (std::fabs(q) <= 1e30)
              points.push_back(q);
      }
    });
  }
  return points;
}

std::optional<PointwiseFit>
raise::fitPointwise(llvm::function_ref<std::optional<double>(double)> f,
                    ArrayRef<double> probes) {
  SmallVector<double> samples = {-60.0, -25.0, -7.3, -3.1, -1.3, -0.45,
                                 -0.05, 0.05,  0.37, 0.91, 1.7,  2.9,
                                 4.4,   6.8,   9.5,  25.0, 60.0};
  samples.append(probes.begin(), probes.end());
  SmallVector<double> values;
  for (double y : samples) {
    std::optional<double> v = f(y);
    if (!v || !std::isfinite(*v))
      return std::nullopt;
    values.push_back(*v);
  }
  const PointwiseFn table[] = {PointwiseFn::identity, PointwiseFn::relu,
                               PointwiseFn::relu2,    PointwiseFn::relu6,
                               PointwiseFn::sigmoid,  PointwiseFn::softplus,
                               PointwiseFn::gelu,     PointwiseFn::gelu_tanh};
  std::optional<double> at = f(1.7);
  for (PointwiseFn fn : table) {
    double c = *at / reference(fn, 1.7);
    if (!(c > 0) || !std::isfinite(c))
      continue;
    bool fits = true;
    for (auto [y, v] : llvm::zip(samples, values)) {
      double expected = c * reference(fn, y);
      if (std::fabs(v - expected) >
          1e-5 * std::max(std::fabs(expected), std::fabs(c))) {
        fits = false;
        break;
      }
    }
    if (fits)
      return PointwiseFit{fn, c};
  }
  return std::nullopt;
}

bool raise::vanishesAtMinusInfinity(PointwiseFn fn) {
  switch (fn) {
  case PointwiseFn::relu:
  case PointwiseFn::relu2:
  case PointwiseFn::relu6:
  case PointwiseFn::sigmoid:
  case PointwiseFn::softplus:
    return true;
  default:
    return false;
  }
}

double raise::homogeneity(PointwiseFn fn) {
  switch (fn) {
  case PointwiseFn::relu:
  case PointwiseFn::identity:
    return 1.0;
  case PointwiseFn::relu2:
    return 2.0;
  default:
    return 0.0;
  }
}
