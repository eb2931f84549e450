//===- ModRegion.cpp - Score and mask regions of attn.attention -----------===//

#include "attn-opt/Dialect/Attn/IR/ModRegion.h"

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static bool isScalar(Type t) { return t.isIntOrIndexOrFloat(); }

LogicalResult mlir::attn::verifyModRegion(Operation *op, Region &region,
                                          bool isMask, TypeRange captureTypes) {
  StringRef name = isMask ? "mask_mod" : "score_mod";
  auto fail = [&](Location loc) {
    return emitError(loc) << "'" << op->getName() << "' " << name << " region ";
  };
  if (!region.hasOneBlock())
    return fail(op->getLoc()) << "must have one block";
  Block &block = region.front();
  Builder b(op->getContext());
  SmallVector<Type> expected;
  if (!isMask)
    expected.push_back(b.getF32Type());
  expected.append(kMaskModIndexArgs, b.getIndexType());
  llvm::append_range(expected, captureTypes);
  if (block.getArgumentTypes() != TypeRange(expected)) {
    InFlightDiagnostic d = fail(op->getLoc());
    d << "must take (";
    llvm::interleaveComma(expected, d);
    d << ")"
      << (isMask ? " (batch, head, query, key"
                 : " (score, batch, head, query, key")
      << (captureTypes.empty() ? ")" : ", then the captures)") << ", got (";
    llvm::interleaveComma(block.getArgumentTypes(), d);
    return d << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return fail(op->getLoc()) << "must end in attn.yield";
  Type want = isMask ? Type(b.getI1Type()) : Type(b.getF32Type());
  if (yield.getValue().getType() != want)
    return fail(yield.getLoc())
           << "must yield " << want << ", got " << yield.getValue().getType();
  unsigned firstCapture = block.getNumArguments() - captureTypes.size();
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumRegions() != 0)
      return fail(inner.getLoc())
             << "may not hold '" << inner.getName() << "' (an op with regions)";
    bool extract = isa<tensor::ExtractOp, tensor::DimOp>(inner);
    bool scalarDialect =
        isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
    if (!extract && !scalarDialect)
      return fail(inner.getLoc())
             << "may hold only arith and math operations and tensor.extract "
                "or tensor.dim of a capture, got '"
             << inner.getName() << "'";
    if (extract) {
      auto arg = dyn_cast<BlockArgument>(inner.getOperand(0));
      if (!arg || arg.getOwner() != &block || arg.getArgNumber() < firstCapture)
        return fail(inner.getLoc())
               << "reads a tensor that is not one of its captures";
    }
    for (Value operand : inner.getOperands()) {
      if (extract && operand == inner.getOperand(0))
        continue;
      if (!isScalar(operand.getType()))
        return fail(inner.getLoc())
               << "computes on scalars only, got an operand of type "
               << operand.getType();
    }
    for (Type t : inner.getResultTypes())
      if (!isScalar(t))
        return fail(inner.getLoc())
               << "computes on scalars only, got a result of type " << t;
    if (!isMemoryEffectFree(&inner))
      return fail(inner.getLoc()) << "must be a pure function, '"
                                  << inner.getName() << "' has side effects";
  }
  return success();
}

/// The float operations emitScoreModWithDerivative differentiates.
static bool hasDerivativeRule(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::SelectOp, arith::ExtFOp, arith::TruncFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::CmpFOp, math::TanhOp, math::ExpOp,
             math::LogOp, math::SqrtOp, math::AbsFOp, arith::FPToSIOp,
             arith::FPToUIOp>(op);
}

Operation *mlir::attn::scoreModDerivativeIssue(Region &region) {
  Block &block = region.front();
  llvm::DenseSet<Value> dependent = {block.getArgument(0)};
  for (Operation &op : block.without_terminator()) {
    bool reads = llvm::any_of(op.getOperands(),
                              [&](Value v) { return dependent.contains(v); });
    if (!reads)
      continue;
    if (!hasDerivativeRule(op))
      return &op;
    // Comparisons and conversions to integers are piecewise constant.
    if (isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op))
      continue;
    for (Value r : op.getResults())
      dependent.insert(r);
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

std::string ModProgram::describe() const {
  static constexpr StringLiteral kArgNames[] = {"batch", "head", "query",
                                                "key"};
  std::string reads;
  for (auto [i, what] : llvm::enumerate(kArgNames)) {
    // The argument's instruction is the i-th; used if an operand.
    int32_t arg = static_cast<int32_t>(i);
    bool used = result == arg || llvm::any_of(instrs, [&](const Instr &in) {
                  return in.a == arg || in.b == arg || in.c == arg ||
                         llvm::is_contained(in.indices, arg);
                });
    if (used)
      reads += (reads.empty() ? "" : ", ") + what.str();
  }
  if (readsCaptures)
    reads += (reads.empty() ? "" : ", ") + std::string("captured tensors");
  int64_t unknown = llvm::count_if(
      instrs, [](const Instr &in) { return in.op == Opcode::Top; });
  std::string s = "reads " + (reads.empty() ? std::string("nothing") : reads);
  if (unknown)
    s += "; " + std::to_string(unknown) + " op" + (unknown > 1 ? "s" : "") +
         " outside the interval analysis";
  return s;
}

ModProgram mlir::attn::compileMaskProgram(Region &region) {
  using Op = ModProgram::Opcode;
  ModProgram p;
  Block &block = region.front();
  llvm::DenseMap<Value, int32_t> at;
  auto add = [&](ModProgram::Instr in) {
    p.instrs.push_back(std::move(in));
    return static_cast<int32_t>(p.instrs.size() - 1);
  };
  for (unsigned i = 0; i < kMaskModIndexArgs; ++i) {
    ModProgram::Instr in;
    in.op = Op::Arg;
    in.value = i;
    in.nonNegative = true;
    at[block.getArgument(i)] = add(in);
    if (!block.getArgument(i).use_empty()) {
      p.readsBatch |= i == 0;
      p.readsHead |= i == 1;
    }
  }
  auto instrOf = [&](Value v) -> const ModProgram::Instr & {
    return p.instrs[at.lookup(v)];
  };
  // The positive constant `v` is, or 0.
  auto positiveConstant = [&](Value v) -> int64_t {
    const ModProgram::Instr &in = instrOf(v);
    return in.op == Op::Const && !in.isBool && in.value > 0 ? in.value : 0;
  };
  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op)) {
      p.result = at.lookup(yield.getValue());
      break;
    }
    if (op.getNumResults() != 1)
      continue;
    Value result = op.getResult(0);
    ModProgram::Instr in;
    in.isBool = result.getType().isInteger(1);
    auto operand = [&](unsigned i) { return at.lookup(op.getOperand(i)); };
    auto nonNeg = [&](unsigned i) {
      return instrOf(op.getOperand(i)).nonNegative;
    };
    auto binary = [&](Op code) {
      in.op = code;
      in.a = operand(0);
      in.b = operand(1);
    };
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](arith::ConstantOp c) {
          if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
            in.op = Op::Const;
            in.value = in.isBool ? (i.getValue().isZero() ? 0 : 1)
                                 : i.getValue().getSExtValue();
            in.nonNegative = in.value >= 0;
          }
        })
        .Case([&](arith::AddIOp) {
          binary(Op::Add);
          in.nonNegative = nonNeg(0) && nonNeg(1);
        })
        .Case([&](arith::SubIOp) { binary(Op::Sub); })
        .Case([&](arith::MulIOp) {
          binary(Op::Mul);
          in.nonNegative = nonNeg(0) && nonNeg(1);
        })
        .Case<arith::FloorDivSIOp, arith::DivSIOp, arith::DivUIOp>(
            [&](Operation *d) {
              bool unsignedOk = !isa<arith::DivUIOp>(d) || nonNeg(0);
              if (positiveConstant(d->getOperand(1)) && unsignedOk) {
                binary(Op::FloorDiv);
                in.value = isa<arith::FloorDivSIOp>(d) ? 0 : 1;
                in.nonNegative = nonNeg(0);
              }
            })
        .Case<arith::RemSIOp, arith::RemUIOp>([&](Operation *r) {
          bool unsignedOk = !isa<arith::RemUIOp>(r) || nonNeg(0);
          if (positiveConstant(r->getOperand(1)) && unsignedOk) {
            binary(Op::Rem);
            in.nonNegative = nonNeg(0);
          }
        })
        .Case([&](arith::MinSIOp) {
          binary(Op::Min);
          in.nonNegative = nonNeg(0) && nonNeg(1);
        })
        .Case([&](arith::MaxSIOp) {
          binary(Op::Max);
          in.nonNegative = nonNeg(0) || nonNeg(1);
        })
        .Case([&](arith::MinUIOp) {
          if (nonNeg(0) && nonNeg(1)) {
            binary(Op::Min);
            in.nonNegative = true;
          }
        })
        .Case([&](arith::MaxUIOp) {
          if (nonNeg(0) && nonNeg(1)) {
            binary(Op::Max);
            in.nonNegative = true;
          }
        })
        .Case([&](math::AbsIOp) {
          in.op = Op::Abs;
          in.a = operand(0);
          in.nonNegative = true;
        })
        .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
              arith::ExtUIOp, arith::TruncIOp>([&](Operation *c) {
          bool fromBool = c->getOperand(0).getType().isInteger(1);
          bool zeroExtends = isa<arith::IndexCastUIOp, arith::ExtUIOp>(c);
          if (fromBool && !in.isBool) {
            in.op = Op::FromBool;
            in.value = zeroExtends ? 1 : -1;
            in.nonNegative = zeroExtends;
          } else if (fromBool == in.isBool &&
                     (!zeroExtends || fromBool || nonNeg(0))) {
            // Truncations keep the value when it fits (positions do); a
            // zero extension only of values that are not negative.
            in.op = Op::Same;
            in.nonNegative = fromBool || nonNeg(0);
          }
          if (in.op != Op::Top)
            in.a = operand(0);
        })
        .Case([&](arith::CmpIOp c) {
          bool isUnsigned = c.getPredicate() == arith::CmpIPredicate::ult ||
                            c.getPredicate() == arith::CmpIPredicate::ule ||
                            c.getPredicate() == arith::CmpIPredicate::ugt ||
                            c.getPredicate() == arith::CmpIPredicate::uge;
          if (!isUnsigned || (nonNeg(0) && nonNeg(1))) {
            binary(Op::Cmp);
            in.pred = c.getPredicate();
          }
        })
        .Case([&](arith::AndIOp) {
          if (in.isBool)
            binary(Op::And);
        })
        .Case([&](arith::OrIOp) {
          if (in.isBool)
            binary(Op::Or);
        })
        .Case([&](arith::XOrIOp) {
          if (in.isBool)
            binary(Op::Xor);
        })
        .Case([&](arith::SelectOp) {
          in.op = Op::Select;
          in.a = operand(0);
          in.b = operand(1);
          in.c = operand(2);
          in.nonNegative = nonNeg(1) && nonNeg(2);
        })
        .Case([&](tensor::ExtractOp e) {
          p.readsCaptures = true;
          Type elem = e.getType();
          if (!elem.isIntOrIndex())
            return;
          in.op = Op::Extract;
          in.value = cast<BlockArgument>(e.getTensor()).getArgNumber() -
                     kMaskModIndexArgs;
          for (Value i : e.getIndices())
            in.indices.push_back(at.lookup(i));
          in.nonNegative = elem.isInteger(1);
        })
        .Case([&](tensor::DimOp d) {
          auto type = cast<RankedTensorType>(d.getSource().getType());
          std::optional<int64_t> dim = d.getConstantIndex();
          if (dim && *dim < type.getRank() && !type.isDynamicDim(*dim)) {
            in.op = Op::Const;
            in.value = type.getDimSize(*dim);
            in.nonNegative = true;
          }
        });
    at[result] = add(std::move(in));
  }
  return p;
}

//===----------------------------------------------------------------------===//
// The compile-time predicate
//===----------------------------------------------------------------------===//

namespace {
class RegionPredicate : public mask::CustomPredicate {
public:
  RegionPredicate(ModProgram program, int64_t batch)
      : program(std::move(program)) {
    // Every batch row: [0, B - 1], or every position when B is dynamic.
    batchRange = {false, 0,
                  ShapedType::isDynamic(batch) || batch < 1
                      ? mask::kMaxSequenceLength
                      : batch - 1};
  }

  mask::TileKind classify(int64_t h, const mask::Tile &t) const override {
    Truth<StaticDomain> r =
        run(h, {false, t.qBegin, t.qEnd - 1}, {false, t.kBegin, t.kEnd - 1});
    if (r.must)
      return mask::TileKind::Full;
    if (!r.may)
      return mask::TileKind::Empty;
    return mask::TileKind::Partial;
  }

  std::optional<bool> evaluate(int64_t h, int64_t q, int64_t k) const override {
    Truth<StaticDomain> r = run(h, {false, q, q}, {false, k, k});
    if (r.must)
      return true;
    if (!r.may)
      return false;
    return std::nullopt;
  }

  bool isHeadDependent() const override { return program.readsHead; }
  bool readsRuntimeData() const override {
    return program.readsCaptures || program.readsBatch;
  }

private:
  Truth<StaticDomain> run(int64_t h, Interval<StaticDomain> q,
                          Interval<StaticDomain> k) const {
    StaticDomain d;
    Interval<StaticDomain> args[] = {batchRange, {false, h, h}, q, k};
    return interpretMask<StaticDomain>(program, d, args);
  }

  ModProgram program;
  Interval<StaticDomain> batchRange;
};
} // namespace

std::shared_ptr<const mask::CustomPredicate>
mlir::attn::buildMaskPredicate(ModProgram program, int64_t batch) {
  return std::make_shared<RegionPredicate>(std::move(program), batch);
}
