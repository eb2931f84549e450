//===- ModRegionAnalysis.cpp - Analyses of score and mask regions ---------===//

#include "attn-opt/Dialect/Attn/Analysis/ModRegionAnalysis.h"

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
// Derivatives of score regions
//===----------------------------------------------------------------------===//

/// The float operations emitScoreModWithDerivative differentiates.
static bool hasDerivativeRule(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::SelectOp, arith::ExtFOp, arith::TruncFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::CmpFOp, math::TanhOp, math::ExpOp,
             math::LogOp, math::SqrtOp, math::AbsFOp, arith::FPToSIOp,
             arith::FPToUIOp>(op);
}

Operation *mlir::attn::scoreModDerivativeIssue(Region &region, bool captures) {
  Block &block = region.front();
  llvm::DenseSet<Value> dependent = {block.getArgument(0)};
  for (Operation &op : block.without_terminator()) {
    if (auto e = dyn_cast<tensor::ExtractOp>(op);
        e && captures && isa<FloatType>(e.getType())) {
      dependent.insert(e.getResult());
      continue;
    }
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

namespace {
/// Compiles the operations of a mask region one by one (compileMaskProgram).
class ProgramCompiler {
public:
  using Op = ModProgram::Opcode;

  /// Compiles the verified mask region `region`.
  ModProgram compile(Region &region) {
    Block &block = region.front();
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
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        p.result = at.lookup(op.getOperand(0));
        break;
      }
      if (op.getNumResults() != 1)
        continue;
      ModProgram::Instr in;
      in.isBool = op.getResult(0).getType().isInteger(1);
      if (!compileInteger(op, in))
        compileOther(op, in);
      at[op.getResult(0)] = add(std::move(in));
    }
    return std::move(p);
  }

private:
  int32_t add(ModProgram::Instr in) {
    p.instrs.push_back(std::move(in));
    return static_cast<int32_t>(p.instrs.size() - 1);
  }
  const ModProgram::Instr &instrOf(Value v) { return p.instrs[at.lookup(v)]; }
  /// The positive constant `v` is, or 0.
  int64_t positiveConstant(Value v) {
    const ModProgram::Instr &in = instrOf(v);
    return in.op == Op::Const && !in.isBool && in.value > 0 ? in.value : 0;
  }
  bool nonNeg(Operation &op, unsigned i) {
    return instrOf(op.getOperand(i)).nonNegative;
  }
  void binary(Operation &op, ModProgram::Instr &in, Op code) {
    in.op = code;
    in.a = at.lookup(op.getOperand(0));
    in.b = at.lookup(op.getOperand(1));
  }

  /// Integer arithmetic, min and max; false for any other operation.
  bool compileInteger(Operation &op, ModProgram::Instr &in) {
    auto both = [&] { return nonNeg(op, 0) && nonNeg(op, 1); };
    return llvm::TypeSwitch<Operation *, bool>(&op)
        .Case([&](arith::AddIOp) {
          binary(op, in, Op::Add);
          in.nonNegative = both();
          return true;
        })
        .Case([&](arith::SubIOp) {
          binary(op, in, Op::Sub);
          return true;
        })
        .Case([&](arith::MulIOp) {
          binary(op, in, Op::Mul);
          in.nonNegative = both();
          return true;
        })
        .Case<arith::FloorDivSIOp, arith::DivSIOp, arith::DivUIOp>(
            [&](Operation *d) {
              bool unsignedOk = !isa<arith::DivUIOp>(d) || nonNeg(op, 0);
              if (positiveConstant(d->getOperand(1)) && unsignedOk) {
                binary(op, in, Op::FloorDiv);
                in.value = isa<arith::FloorDivSIOp>(d) ? 0 : 1;
                in.nonNegative = nonNeg(op, 0);
              }
              return true;
            })
        .Case<arith::RemSIOp, arith::RemUIOp>([&](Operation *r) {
          bool unsignedOk = !isa<arith::RemUIOp>(r) || nonNeg(op, 0);
          if (positiveConstant(r->getOperand(1)) && unsignedOk) {
            binary(op, in, Op::Rem);
            in.nonNegative = nonNeg(op, 0);
          }
          return true;
        })
        .Case([&](arith::MinSIOp) {
          binary(op, in, Op::Min);
          in.nonNegative = both();
          return true;
        })
        .Case([&](arith::MaxSIOp) {
          binary(op, in, Op::Max);
          in.nonNegative = nonNeg(op, 0) || nonNeg(op, 1);
          return true;
        })
        .Case<arith::MinUIOp, arith::MaxUIOp>([&](Operation *m) {
          if (both()) {
            binary(op, in, isa<arith::MinUIOp>(m) ? Op::Min : Op::Max);
            in.nonNegative = true;
          }
          return true;
        })
        .Case([&](math::AbsIOp) {
          in.op = Op::Abs;
          in.a = at.lookup(op.getOperand(0));
          in.nonNegative = true;
          return true;
        })
        .Default([](Operation *) { return false; });
  }

  /// Constants, casts, comparisons, logic, selects and reads of captured
  /// tensors; anything else stays unknown (Top).
  void compileOther(Operation &op, ModProgram::Instr &in) {
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](arith::ConstantOp c) {
          if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
            in.op = Op::Const;
            in.value = in.isBool ? (i.getValue().isZero() ? 0 : 1)
                                 : i.getValue().getSExtValue();
            in.nonNegative = in.value >= 0;
          }
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
                     (!zeroExtends || fromBool || nonNeg(op, 0))) {
            // Truncations keep the value when it fits (positions do); a
            // zero extension only of values that are not negative.
            in.op = Op::Same;
            in.nonNegative = fromBool || nonNeg(op, 0);
          }
          if (in.op != Op::Top)
            in.a = at.lookup(op.getOperand(0));
        })
        .Case([&](arith::CmpIOp c) {
          bool isUnsigned = c.getPredicate() == arith::CmpIPredicate::ult ||
                            c.getPredicate() == arith::CmpIPredicate::ule ||
                            c.getPredicate() == arith::CmpIPredicate::ugt ||
                            c.getPredicate() == arith::CmpIPredicate::uge;
          if (!isUnsigned || (nonNeg(op, 0) && nonNeg(op, 1))) {
            binary(op, in, Op::Cmp);
            in.pred = c.getPredicate();
          }
        })
        .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>([&](Operation *l) {
          if (in.isBool)
            binary(op, in,
                   isa<arith::AndIOp>(l)  ? Op::And
                   : isa<arith::OrIOp>(l) ? Op::Or
                                          : Op::Xor);
        })
        .Case([&](arith::SelectOp) {
          in.op = Op::Select;
          in.a = at.lookup(op.getOperand(0));
          in.b = at.lookup(op.getOperand(1));
          in.c = at.lookup(op.getOperand(2));
          in.nonNegative = nonNeg(op, 1) && nonNeg(op, 2);
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
  }

  ModProgram p;
  llvm::DenseMap<Value, int32_t> at;
};
} // namespace

ModProgram mlir::attn::compileMaskProgram(Region &region) {
  return ProgramCompiler().compile(region);
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
