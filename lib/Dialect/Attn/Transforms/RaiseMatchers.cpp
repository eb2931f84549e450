//===- RaiseMatchers.cpp - attn-raise: structural helpers and masks ---===//
//
// What attn-raise reads from LinalgOps through their interface: contractions
// (which dims are batch, query, key, head), elementwise ops and row values,
// row reductions, constant scales, and masks on scores or weights (index
// predicates evaluated at compile time, mask tensors and their layouts).
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

bool isFilledWith(Value v, double value, bool nanIsIdentity) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  FloatAttr attr;
  if (!fill || !matchPattern(fill.value(), m_Constant(&attr)))
    return false;
  double x = attr.getValueAsDouble();
  if (std::isinf(value) && value < 0)
    return x <= -1e30 || (nanIsIdentity && std::isnan(x));
  return x == value;
}

std::optional<double> constantOf(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

Value yielded(linalg::LinalgOp op) {
  return op.getBlock()->getTerminator()->getOperand(0);
}

Value inputArg(linalg::LinalgOp op, unsigned i) {
  return op.getBlock()->getArgument(i);
}

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

bool readsRow(linalg::LinalgOp op, unsigned i) {
  return !op.getMatchingIndexingMap(op.getDpsInputOperand(i)).isIdentity();
}

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

bool looksLikeScale(Value s) {
  auto op = s.getDefiningOp<linalg::LinalgOp>();
  if (!op || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      op.getNumDpsInputs() == 0)
    return false;
  Operation *body = yielded(op).getDefiningOp();
  return body && isa<arith::MulFOp, arith::DivFOp>(body);
}

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

std::optional<int64_t> evalIndexExpr(Value v, unsigned rank, int64_t i,
                                     int64_t j, int depth) {
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

Matched<ScoreMask> matchMask(Value s, bool afterNormalizer) {
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

RowFunction rowFunction(linalg::LinalgOp op, const raise::UnaryChain &row) {
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

std::optional<RowFunction> rowSumFunction(linalg::LinalgOp op, Value x,
                                          bool squares,
                                          SmallVector<Operation *> &ops) {
  raise::UnaryChain chain = raise::unaryChainTo(op.getDpsInputs()[1]);
  Operation *sum = chain.source.getDefiningOp();
  if (!isRowSum(sum, x, squares, ops))
    return std::nullopt;
  ops.push_back(sum);
  for (const raise::UnaryOp &u : chain.ops)
    ops.push_back(u.op);
  return rowFunction(op, chain);
}

bool agreesOnGrid(const RowFunction &g, ArrayRef<double> as,
                  ArrayRef<double> rs,
                  llvm::function_ref<double(double, double)> want, double tol,
                  double floor) {
  for (double a : as)
    for (double r : rs) {
      std::optional<double> y = g(a, r);
      double w = want(a, r);
      if (!y || std::fabs(*y - w) > tol * std::max(floor, std::fabs(w)))
        return false;
    }
  return true;
}

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

} // namespace mlir::attn::raise
