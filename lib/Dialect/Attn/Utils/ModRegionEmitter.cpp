//===- ModRegionEmitter.cpp - Score and mask regions as IR ----------------===//

#include "attn-opt/Dialect/Attn/Utils/ModRegionEmitter.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Inlining a region
//===----------------------------------------------------------------------===//

namespace {
/// Clones a region's operations, lifting those that meet a vector to their
/// elementwise vector form.
class RegionInliner {
public:
  RegionInliner(ImplicitLocOpBuilder &b, const CaptureAccess &access)
      : b(b), access(access) {}

  /// Binds the region's leading arguments to `args` (scalars, or vectors
  /// of one length).
  void bind(Region &region, ValueRange args) {
    for (auto [arg, v] : llvm::zip(region.front().getArguments(), args))
      map.map(arg, v);
    for (Value v : args)
      if (auto vec = dyn_cast<VectorType>(v.getType()))
        lanes = vec.getNumElements();
    firstCapture = args.size();
  }

  Value run(Region &region, ValueRange args) {
    bind(region, args);
    for (Operation &op : region.front()) {
      if (auto yield = dyn_cast<YieldOp>(op))
        return map.lookup(yield.getValue());
      emit(op);
    }
    llvm_unreachable("a verified region ends in attn.yield");
  }

  /// Emits one operation of the region (not its yield): captured tensors
  /// read through the access, an operation that meets a vector lifted to
  /// its elementwise vector form. Returns the emitted operation, or null
  /// for a read of a captured tensor.
  Operation *emit(Operation &op) {
    if (auto e = dyn_cast<tensor::ExtractOp>(op)) {
      map.map(e.getResult(), extract(e));
      return nullptr;
    }
    if (auto d = dyn_cast<tensor::DimOp>(op)) {
      map.map(d.getResult(), dimOf(d));
      return nullptr;
    }
    bool vector = llvm::any_of(op.getOperands(), [&](Value v) {
      return isa<VectorType>(map.lookup(v).getType());
    });
    if (!vector)
      return b.clone(op, map);
    // Every operand as a vector, then the op with vector results.
    IRMapping local;
    for (Value v : op.getOperands())
      local.map(v, asVector(map.lookup(v)));
    Operation *c = b.clone(op, local);
    for (auto [orig, res] : llvm::zip(op.getResults(), c->getResults())) {
      res.setType(VectorType::get({lanes}, orig.getType()));
      map.map(orig, res);
    }
    return c;
  }

  /// The emitted value of region value `v`.
  Value lookup(Value v) const { return map.lookup(v); }

  /// The captured tensor `tensor` (a region argument) is.
  unsigned captureOf(Value tensor) {
    return cast<BlockArgument>(tensor).getArgNumber() - firstCapture;
  }

  /// The indices (clamped) at which read `extract` of a captured tensor was
  /// emitted.
  SmallVector<Value> indicesOf(Operation *extract) const {
    return readIndices.lookup(extract);
  }

private:
  Value asVector(Value v) {
    if (isa<VectorType>(v.getType()))
      return v;
    return vector::BroadcastOp::create(b, VectorType::get({lanes}, v.getType()),
                                       v);
  }

  Value dimOf(tensor::DimOp d) {
    unsigned c = captureOf(d.getSource());
    int64_t rank = cast<RankedTensorType>(d.getSource().getType()).getRank();
    std::optional<int64_t> at = getConstantIntValue(map.lookup(d.getIndex()));
    if (at && *at >= 0 && *at < rank)
      return access.dim(b, c, *at);
    // A dimension chosen at run time: a select over the rank (an index
    // outside it reads the last).
    Value index = map.lookup(d.getIndex());
    Value result = access.dim(b, c, rank - 1);
    for (int64_t i = rank - 2; i >= 0; --i)
      result = arith::SelectOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, index,
                                arith::ConstantIndexOp::create(b, i)),
          access.dim(b, c, i), result);
    return result;
  }

  Value extract(tensor::ExtractOp e) {
    unsigned c = captureOf(e.getTensor());
    SmallVector<Value> at;
    bool vector = false;
    for (auto [d, i] : llvm::enumerate(e.getIndices())) {
      Value v = map.lookup(i);
      // Clamped into [0, dim - 1].
      Value last = arith::SubIOp::create(b, access.dim(b, c, d),
                                         arith::ConstantIndexOp::create(b, 1));
      Value zero = arith::ConstantIndexOp::create(b, 0);
      if (isa<VectorType>(v.getType())) {
        vector = true;
        last = asVector(last);
        zero = asVector(zero);
      }
      v = arith::MaxSIOp::create(b, arith::MinSIOp::create(b, v, last), zero);
      at.push_back(v);
    }
    if (vector)
      for (Value &v : at)
        v = asVector(v);
    readIndices[e] = at;
    return access.read(b, c, at);
  }

  ImplicitLocOpBuilder &b;
  const CaptureAccess &access;
  IRMapping map;
  llvm::DenseMap<Operation *, SmallVector<Value>> readIndices;
  int64_t lanes = 0;
  unsigned firstCapture = 0;
};
} // namespace

Value mlir::attn::emitModRegion(ImplicitLocOpBuilder &b, Region &region,
                                ValueRange args, const CaptureAccess &access) {
  RegionInliner inliner(b, access);
  return inliner.run(region, args);
}

/// The forward-mode derivative of operation `op` of a region (emitted as
/// `c`, its result `x`) given the tangents of its operands (`tan(i)`, of
/// the result's shape); null when `op` has no rule.
static Value derivativeOf(ImplicitLocOpBuilder &b, Operation &op, Operation *c,
                          function_ref<Value(unsigned)> tan) {
  Value x = c->getResult(0);
  auto in = [&](unsigned i) { return c->getOperand(i); };
  auto zero = [&] { return floatLike(b, x, 0.0); };
  auto mul = [&](Value a, Value v) -> Value {
    return arith::MulFOp::create(b, a, v);
  };
  Value dx;
  llvm::TypeSwitch<Operation *>(&op)
      .Case(
          [&](arith::AddFOp) { dx = arith::AddFOp::create(b, tan(0), tan(1)); })
      .Case(
          [&](arith::SubFOp) { dx = arith::SubFOp::create(b, tan(0), tan(1)); })
      .Case([&](arith::MulFOp) {
        dx = arith::AddFOp::create(b, mul(tan(0), in(1)), mul(in(0), tan(1)));
      })
      .Case([&](arith::DivFOp) {
        // (a' - x b') / b
        dx = arith::DivFOp::create(
            b, arith::SubFOp::create(b, tan(0), mul(x, tan(1))), in(1));
      })
      .Case([&](arith::NegFOp) { dx = arith::NegFOp::create(b, tan(0)); })
      .Case([&](arith::SelectOp) {
        dx = arith::SelectOp::create(b, in(0), tan(1), tan(2));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *) {
        dx = tan(0);
        Type from = getElementTypeOrSelf(dx.getType());
        Type to = getElementTypeOrSelf(x.getType());
        if (from != to)
          dx = to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth()
                   ? Value(arith::ExtFOp::create(b, x.getType(), dx))
                   : Value(arith::TruncFOp::create(b, x.getType(), dx));
      })
      .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
            arith::MinNumFOp>([&](Operation *) {
        // The tangent of the operand the result is.
        Value first =
            arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x, in(0));
        dx = arith::SelectOp::create(b, first, tan(0), tan(1));
      })
      .Case([&](math::TanhOp) {
        Value one = floatLike(b, x, 1.0);
        dx = mul(arith::SubFOp::create(b, one, mul(x, x)), tan(0));
      })
      .Case([&](math::ExpOp) { dx = mul(x, tan(0)); })
      .Case([&](math::LogOp) { dx = arith::DivFOp::create(b, tan(0), in(0)); })
      .Case([&](math::SqrtOp) {
        Value two = floatLike(b, x, 2.0);
        dx = arith::DivFOp::create(b, tan(0), mul(two, x));
      })
      .Case([&](math::AbsFOp) {
        Value neg =
            arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, in(0), zero());
        dx = arith::SelectOp::create(b, neg, arith::NegFOp::create(b, tan(0)),
                                     tan(0));
      });
  return dx;
}

std::pair<Value, Value> mlir::attn::emitScoreModWithDerivative(
    ImplicitLocOpBuilder &b, Region &region, ValueRange args,
    const CaptureAccess &access, SmallVectorImpl<CaptureTangent> *captures) {
  // The region's values (scalars, or vectors over the query rows as
  // emitModRegion lifts them), then, per seed, the tangents of those that
  // depend on it (absent: 0), of the values' types. Seed 0 is the score;
  // with `captures`, each floating-point read of a captured tensor is one
  // more.
  Block &block = region.front();
  SmallVector<Operation *> reads;
  if (captures)
    for (Operation &op : block)
      if (auto e = dyn_cast<tensor::ExtractOp>(op))
        if (isa<FloatType>(e.getType()))
          reads.push_back(e);
  SmallVector<llvm::DenseMap<Value, Value>> tangents(1 + reads.size());
  RegionInliner inliner(b, access);
  inliner.bind(region, args);
  tangents[0][block.getArgument(0)] = floatLike(b, args[0], 1.0);
  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op)) {
      Value v = inliner.lookup(yield.getValue());
      auto result = [&](unsigned k) {
        Value t = tangents[k].lookup(yield.getValue());
        return t ? t : floatLike(b, v, 0.0);
      };
      for (auto [k, read] : llvm::enumerate(reads)) {
        auto e = cast<tensor::ExtractOp>(read);
        captures->push_back({inliner.captureOf(e.getTensor()),
                             inliner.indicesOf(read), result(k + 1)});
      }
      return {v, result(0)};
    }
    Operation *c = inliner.emit(op);
    if (auto at = llvm::find(reads, &op); at != reads.end()) {
      Value x = inliner.lookup(op.getResult(0));
      tangents[at - reads.begin() + 1][op.getResult(0)] = floatLike(b, x, 1.0);
      continue;
    }
    if (!c || op.getNumResults() != 1 ||
        isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op))
      continue;
    Value x = c->getResult(0);
    for (llvm::DenseMap<Value, Value> &tangent : tangents) {
      bool any = llvm::any_of(op.getOperands(),
                              [&](Value v) { return tangent.count(v); });
      if (!any)
        continue;
      auto tan = [&](unsigned i) -> Value {
        Value v = tangent.lookup(op.getOperand(i));
        if (!v)
          return floatLike(b, x, 0.0);
        // A scalar tangent meeting a vector (the region lifted the op).
        if (isa<VectorType>(x.getType()) && !isa<VectorType>(v.getType()))
          return vector::BroadcastOp::create(
              b,
              VectorType::get(cast<VectorType>(x.getType()).getShape(),
                              v.getType()),
              v);
        return v;
      };
      Value dx = derivativeOf(b, op, c, tan);
      // (A verified gradient's region has a rule for every op the score or
      // a differentiated read reaches: scoreModDerivativeIssue.)
      assert(dx && "no derivative rule");
      tangent[op.getResult(0)] = dx;
    }
  }
  llvm_unreachable("a verified region ends in attn.yield");
}

//===----------------------------------------------------------------------===//
// The interval analysis in IR
//===----------------------------------------------------------------------===//

namespace {
/// interpretMask's domain as IR: index bounds, i1 truths, folded where
/// constant.
struct IntervalEmitter {
  using Int = Value;
  using Bool = Value;
  ImplicitLocOpBuilder &b;
  const CaptureAccess &access;

  Int cst(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Bool truth(bool v) { return arith::ConstantOp::create(b, b.getBoolAttr(v)); }
  template <typename OpTy, typename... Args>
  Value fold(Args... args) {
    return b.createOrFold<OpTy>(args...);
  }
  Int add(Int x, Int y) { return fold<arith::AddIOp>(x, y); }
  Int sub(Int x, Int y) { return fold<arith::SubIOp>(x, y); }
  Int mul(Int x, Int y) { return fold<arith::MulIOp>(x, y); }
  Int neg(Int x) { return sub(cst(0), x); }
  Int floorDiv(Int x, int64_t c, bool truncate) {
    if (truncate)
      return fold<arith::DivSIOp>(x, cst(c));
    return fold<arith::FloorDivSIOp>(x, cst(c));
  }
  Int rem(Int x, int64_t c) { return fold<arith::RemSIOp>(x, cst(c)); }
  Int min(Int x, Int y) { return fold<arith::MinSIOp>(x, y); }
  Int max(Int x, Int y) { return fold<arith::MaxSIOp>(x, y); }
  Bool lt(Int x, Int y) {
    return fold<arith::CmpIOp>(arith::CmpIPredicate::slt, x, y);
  }
  Bool le(Int x, Int y) {
    return fold<arith::CmpIOp>(arith::CmpIPredicate::sle, x, y);
  }
  Bool eq(Int x, Int y) {
    return fold<arith::CmpIOp>(arith::CmpIPredicate::eq, x, y);
  }
  Bool both(Bool x, Bool y) { return fold<arith::AndIOp>(x, y); }
  Bool either(Bool x, Bool y) { return fold<arith::OrIOp>(x, y); }
  Bool negate(Bool x) { return fold<arith::XOrIOp>(x, truth(true)); }
  Value select(Bool c, Value x, Value y) {
    return fold<arith::SelectOp>(c, x, y);
  }

  /// The smallest and largest element of capture `c` over the index box
  /// `at` (each clamped into the shape), as index values.
  Interval<IntervalEmitter> extract(int64_t c,
                                    ArrayRef<Interval<IntervalEmitter>> at) {
    Interval<IntervalEmitter> r;
    if (llvm::any_of(at, [](const auto &i) { return i.top; }))
      return r;
    SmallVector<Value> lo, hi;
    for (auto [d, i] : llvm::enumerate(at)) {
      Value last = sub(access.dim(b, c, d), cst(1));
      lo.push_back(max(min(i.lo, last), cst(0)));
      hi.push_back(max(min(i.hi, last), cst(0)));
    }
    Value init[] = {cst(std::numeric_limits<int64_t>::max()),
                    cst(std::numeric_limits<int64_t>::min())};
    SmallVector<Value> index(at.size());
    std::function<SmallVector<Value>(size_t, ValueRange)> loop =
        [&](size_t d, ValueRange acc) -> SmallVector<Value> {
      if (d == at.size()) {
        Value v = access.read(b, c, index);
        if (!v.getType().isIndex())
          v = arith::IndexCastOp::create(b, b.getIndexType(), v);
        return {arith::MinSIOp::create(b, acc[0], v),
                arith::MaxSIOp::create(b, acc[1], v)};
      }
      auto forOp =
          scf::ForOp::create(b, lo[d], add(hi[d], cst(1)), cst(1), acc);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      index[d] = forOp.getInductionVar();
      scf::YieldOp::create(b, loop(d + 1, forOp.getRegionIterArgs()));
      return SmallVector<Value>(forOp.getResults());
    };
    SmallVector<Value> range = loop(0, init);
    return {false, range[0], range[1]};
  }
};
} // namespace

MaskEmitter::TileKind
mlir::attn::emitMaskTileKind(ImplicitLocOpBuilder &b, const ModProgram &p,
                             Value batch, Value head, Value q0, Value q1,
                             Value k0, Value k1, const CaptureAccess &access) {
  return emitMaskTileKind(b, p, batch, batch, head, head, q0, q1, k0, k1,
                          access);
}

MaskEmitter::TileKind
mlir::attn::emitMaskTileKind(ImplicitLocOpBuilder &b, const ModProgram &p,
                             Value b0, Value b1, Value h0, Value h1, Value q0,
                             Value q1, Value k0, Value k1,
                             const CaptureAccess &access) {
  IntervalEmitter d{b, access};
  using I = Interval<IntervalEmitter>;
  I args[] = {I{false, b0, b1}, I{false, h0, h1}, I{false, q0, q1},
              I{false, k0, k1}};
  Truth<IntervalEmitter> t = interpretMask<IntervalEmitter>(p, d, args);
  return {t.may, t.must};
}
