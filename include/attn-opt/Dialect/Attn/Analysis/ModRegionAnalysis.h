//===- ModRegionAnalysis.h - Analyses of score and mask regions -*- C++ -*-===//
//
// The analyses of attn.attention's `mask_mod` and `score_mod` regions
// (FlexAttention's mods as IR, verified by IR/ModRegion.h): the interval
// analysis that classifies a mask region over a block of queries and keys,
// and whether a score region has a derivative with respect to the score.
// They read only upstream operations (arith, math, tensor) and the region's
// terminator, so the dialect's verifier and every lowering share them.
//
// The analysis is written once, over an abstract domain of integers and
// booleans: `interpretMask<D>` runs the region (compiled to a `ModProgram`)
// on intervals `[lo, hi]` of the batch row, head, query and key, and gives
// a truth `(may, must)`: some element of the box may be allowed, every
// element must be. The compile-time domain (`StaticDomain`, int64_t and
// bool) gives the static block layouts (`buildMaskPredicate`); the IR
// domain (`IntervalEmitter` in Utils/ModRegionEmitter.h) emits the same
// analysis as `arith` IR for blocks classified at run time (dynamic
// lengths, regions reading captured tensors).
//
// Transfer functions, for intervals a = [a0, a1], b = [b0, b1]:
//   a + b = [a0 + b0, a1 + b1]     a - b = [a0 - b1, a1 - b0]
//   a * b = hull of the four products
//   a floordiv c, a divsi c (c > 0 constant): monotone, the ends divided
//   a rem c (c > 0): [a0 mod c, a1 mod c] within one period, else [0, c-1]
//   min, max, abs: the ends; casts: the same interval
//   a < b: must a1 < b0, may a0 < b1 (likewise <=, >, >=, ==, !=)
//   and / or / xor / select: on (may, must) pairs
//   extract of a capture: the capture's range over the index box (run time
//   only; unknown at compile time)
// Anything else (floats, unsigned operations on values that may be
// negative, divisions by non-constants) is unknown: an unknown integer is
// `top`, an unknown truth `(may = true, must = false)`. Every rule is
// sound, so a block is called full or empty only when it is.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_ANALYSIS_MODREGIONANALYSIS_H
#define ATTN_DIALECT_ATTN_ANALYSIS_MODREGIONANALYSIS_H

#include "attn-opt/Mask/MaskPattern.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Region.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::attn {
/// The number of index arguments of the regions: mask_mod (b, h, q, k);
/// score_mod has the score first.
constexpr unsigned kMaskModIndexArgs = 4;
constexpr unsigned kScoreModLeadingArgs = 5;
/// The most tensors a region may capture.
constexpr unsigned kMaxCaptures = 16;

/// The first operation of score region `region` through which the score
/// flows but which has no derivative rule (emitScoreModWithDerivative), or
/// null when the region is differentiable with respect to the score. With
/// `captures`, the floating-point values it reads from captured tensors
/// too (their gradients: attn.attention_grad's grad_captures).
Operation *scoreModDerivativeIssue(Region &region, bool captures = false);

/// A mask region compiled for the interval analysis: one instruction per
/// operation, in order; operands are earlier instructions.
struct ModProgram {
  enum class Opcode : uint8_t {
    Arg,   ///< `value`: 0 batch, 1 head, 2 query, 3 key
    Const, ///< `value`
    Add,
    Sub,
    Mul,
    FloorDiv, ///< by the constant operand b (floordivsi, divsi)
    Rem,      ///< by the constant operand b (remsi)
    Min,
    Max,
    Abs,
    Same,     ///< casts: the same integer
    FromBool, ///< an integer from a truth (extui: 1, extsi: -1)
    Cmp,      ///< `pred`
    And,
    Or,
    Xor,
    Select,  ///< a ? b : c
    Extract, ///< capture `value` at indices `indices`
    Top,     ///< unknown
  };
  struct Instr {
    Opcode op = Opcode::Top;
    /// True if the value is an i1 (a truth), else an integer.
    bool isBool = false;
    /// Proven non-negative whatever the inputs (unsigned operations are
    /// treated as signed only on such values).
    bool nonNegative = false;
    arith::CmpIPredicate pred = arith::CmpIPredicate::eq;
    int64_t value = 0;
    int32_t a = -1, b = -1, c = -1;
    llvm::SmallVector<int32_t, 2> indices;
  };
  std::vector<Instr> instrs;
  /// The instruction the region yields.
  int32_t result = -1;
  /// What the region reads: the batch row, the head, captured tensors.
  bool readsBatch = false, readsHead = false, readsCaptures = false;
  /// A one-line description of the program ("reads key, query; 5 ops").
  std::string describe() const;
};

/// Compiles a verified mask region.
ModProgram compileMaskProgram(Region &region);

/// An interval of integers, or unknown (`top`).
template <typename D>
struct Interval {
  bool top = true;
  typename D::Int lo{}, hi{};
};
/// What a box of elements holds: some may be true, all must be.
template <typename D>
struct Truth {
  typename D::Bool may{}, must{};
};

/// The abstract interpretation of `program` over the box `args` (batch
/// row, head, query, key intervals), in domain `D` (see the file comment).
/// `D` provides `Int`, `Bool`, constants (`cst`, `truth`), `add`, `sub`,
/// `mul`, `floorDiv`, `rem`, `min`, `max`, `neg`, `lt`, `le`, `eq`,
/// `both`, `either`, `negate`, `select` (of Ints and of Bools) and
/// `extract(capture, indices) -> Interval<D>`.
template <typename D>
Truth<D> interpretMask(const ModProgram &p, D &d,
                       llvm::ArrayRef<Interval<D>> args) {
  using Op = ModProgram::Opcode;
  using P = arith::CmpIPredicate;
  std::vector<Interval<D>> ints(p.instrs.size());
  std::vector<Truth<D>> truths(p.instrs.size());
  auto unknown = [&] { return Truth<D>{d.truth(true), d.truth(false)}; };
  auto top = [] { return Interval<D>{}; };
  auto known = [](typename D::Int lo, typename D::Int hi) {
    return Interval<D>{false, lo, hi};
  };
  // Truths of comparisons of known intervals.
  auto less = [&](const Interval<D> &a, const Interval<D> &b, bool orEqual) {
    if (orEqual)
      return Truth<D>{d.le(a.lo, b.hi), d.le(a.hi, b.lo)};
    return Truth<D>{d.lt(a.lo, b.hi), d.lt(a.hi, b.lo)};
  };
  auto equal = [&](const Interval<D> &a, const Interval<D> &b) {
    typename D::Bool may = d.both(d.le(a.lo, b.hi), d.le(b.lo, a.hi));
    typename D::Bool must =
        d.both(d.both(d.eq(a.lo, a.hi), d.eq(b.lo, b.hi)), d.eq(a.lo, b.lo));
    return Truth<D>{may, must};
  };
  for (size_t n = 0; n < p.instrs.size(); ++n) {
    const ModProgram::Instr &in = p.instrs[n];
    auto A = [&]() -> Interval<D> & { return ints[in.a]; };
    auto B = [&]() -> Interval<D> & { return ints[in.b]; };
    Interval<D> r = top();
    Truth<D> t = unknown();
    switch (in.op) {
    case Op::Arg:
      r = args[in.value];
      break;
    case Op::Const:
      if (in.isBool)
        t = {d.truth(in.value != 0), d.truth(in.value != 0)};
      else
        r = known(d.cst(in.value), d.cst(in.value));
      break;
    case Op::Add:
      if (!A().top && !B().top)
        r = known(d.add(A().lo, B().lo), d.add(A().hi, B().hi));
      break;
    case Op::Sub:
      if (!A().top && !B().top)
        r = known(d.sub(A().lo, B().hi), d.sub(A().hi, B().lo));
      break;
    case Op::Mul:
      if (!A().top && !B().top) {
        typename D::Int p0 = d.mul(A().lo, B().lo), p1 = d.mul(A().lo, B().hi),
                        p2 = d.mul(A().hi, B().lo), p3 = d.mul(A().hi, B().hi);
        r = known(d.min(d.min(p0, p1), d.min(p2, p3)),
                  d.max(d.max(p0, p1), d.max(p2, p3)));
      }
      break;
    case Op::FloorDiv: {
      // By a positive constant (the compiler checked); `value` 1 for
      // truncating division (divsi), 0 for floordivsi.
      int64_t c = p.instrs[in.b].value;
      if (!A().top)
        r = known(d.floorDiv(A().lo, c, in.value != 0),
                  d.floorDiv(A().hi, c, in.value != 0));
      break;
    }
    case Op::Rem: {
      int64_t c = p.instrs[in.b].value;
      if (A().top) {
        r = in.nonNegative ? known(d.cst(0), d.cst(c - 1))
                           : known(d.cst(-(c - 1)), d.cst(c - 1));
        break;
      }
      // Within one period of non-negative values, the ends' remainders.
      typename D::Bool same =
          d.both(d.le(d.cst(0), A().lo), d.eq(d.floorDiv(A().lo, c, false),
                                              d.floorDiv(A().hi, c, false)));
      r = known(d.select(same, d.rem(A().lo, c),
                         d.cst(in.nonNegative ? 0 : -(c - 1))),
                d.select(same, d.rem(A().hi, c), d.cst(c - 1)));
      break;
    }
    case Op::Min:
      if (!A().top && !B().top)
        r = known(d.min(A().lo, B().lo), d.min(A().hi, B().hi));
      break;
    case Op::Max:
      if (!A().top && !B().top)
        r = known(d.max(A().lo, B().lo), d.max(A().hi, B().hi));
      break;
    case Op::Abs:
      if (!A().top) {
        typename D::Int z = d.cst(0);
        typename D::Bool nonNeg = d.le(z, A().lo), nonPos = d.le(A().hi, z);
        r = known(d.select(nonNeg, A().lo, d.select(nonPos, d.neg(A().hi), z)),
                  d.max(d.neg(A().lo), A().hi));
      }
      break;
    case Op::Same:
      if (in.isBool)
        t = truths[in.a];
      else
        r = A();
      break;
    case Op::FromBool: {
      const Truth<D> &x = truths[in.a];
      typename D::Int one = d.cst(in.value), z = d.cst(0);
      // value 1 (extui): [must, may]; -1 (extsi): [-may, -must].
      if (in.value > 0)
        r = known(d.select(x.must, one, z), d.select(x.may, one, z));
      else
        r = known(d.select(x.may, one, z), d.select(x.must, one, z));
      break;
    }
    case Op::Cmp: {
      const Interval<D> &a = A(), &b = B();
      if (a.top || b.top)
        break;
      switch (in.pred) {
      case P::slt:
      case P::ult:
        t = less(a, b, false);
        break;
      case P::sle:
      case P::ule:
        t = less(a, b, true);
        break;
      case P::sgt:
      case P::ugt:
        t = less(b, a, false);
        break;
      case P::sge:
      case P::uge:
        t = less(b, a, true);
        break;
      case P::eq:
        t = equal(a, b);
        break;
      case P::ne: {
        Truth<D> e = equal(a, b);
        t = {d.negate(e.must), d.negate(e.may)};
        break;
      }
      }
      break;
    }
    case Op::And:
      t = {d.both(truths[in.a].may, truths[in.b].may),
           d.both(truths[in.a].must, truths[in.b].must)};
      break;
    case Op::Or:
      t = {d.either(truths[in.a].may, truths[in.b].may),
           d.either(truths[in.a].must, truths[in.b].must)};
      break;
    case Op::Xor: {
      const Truth<D> &x = truths[in.a], &y = truths[in.b];
      // Must: one surely true and the other surely false; may: unless
      // both are surely equal.
      t.must = d.either(d.both(x.must, d.negate(y.may)),
                        d.both(d.negate(x.may), y.must));
      t.may = d.negate(d.either(d.both(x.must, y.must),
                                d.both(d.negate(x.may), d.negate(y.may))));
      break;
    }
    case Op::Select: {
      const Truth<D> &c = truths[in.a];
      // Surely b, surely c, else the hull of both.
      typename D::Bool undecided = d.both(c.may, d.negate(c.must));
      if (in.isBool) {
        const Truth<D> &x = truths[in.b], &y = truths[in.c];
        t.may = d.select(c.must, x.may,
                         d.select(undecided, d.either(x.may, y.may), y.may));
        t.must = d.select(c.must, x.must,
                          d.select(undecided, d.both(x.must, y.must), y.must));
      } else if (!ints[in.b].top && !ints[in.c].top) {
        const Interval<D> &x = ints[in.b], &y = ints[in.c];
        r = known(d.select(c.must, x.lo,
                           d.select(undecided, d.min(x.lo, y.lo), y.lo)),
                  d.select(c.must, x.hi,
                           d.select(undecided, d.max(x.hi, y.hi), y.hi)));
      }
      break;
    }
    case Op::Extract: {
      llvm::SmallVector<Interval<D>, 4> at;
      for (int32_t i : in.indices)
        at.push_back(ints[i]);
      r = d.extract(in.value, at);
      if (in.isBool) {
        if (!r.top)
          t = {d.negate(d.eq(r.hi, d.cst(0))), d.negate(d.eq(r.lo, d.cst(0)))};
        r = top();
      }
      break;
    }
    case Op::Top:
      break;
    }
    ints[n] = r;
    truths[n] = t;
  }
  return truths[p.result];
}

/// The compile-time domain: int64_t bounds (saturating at +-2^62, far past
/// every position), bool truths.
struct StaticDomain {
  using Int = int64_t;
  using Bool = bool;
  static constexpr int64_t kLimit = int64_t(1) << 62;
  static int64_t clamp(__int128 v) {
    return static_cast<int64_t>(
        std::max<__int128>(-kLimit, std::min<__int128>(kLimit, v)));
  }
  Int cst(int64_t v) { return v; }
  Bool truth(bool v) { return v; }
  Int add(Int a, Int b) { return clamp(__int128(a) + b); }
  Int sub(Int a, Int b) { return clamp(__int128(a) - b); }
  Int mul(Int a, Int b) { return clamp(__int128(a) * b); }
  Int neg(Int a) { return -a; }
  Int floorDiv(Int a, int64_t c, bool truncate) {
    if (truncate)
      return a / c;
    return a >= 0 ? a / c : -((-a + c - 1) / c);
  }
  Int rem(Int a, int64_t c) { return a % c; }
  Int min(Int a, Int b) { return std::min(a, b); }
  Int max(Int a, Int b) { return std::max(a, b); }
  Bool lt(Int a, Int b) { return a < b; }
  Bool le(Int a, Int b) { return a <= b; }
  Bool eq(Int a, Int b) { return a == b; }
  Bool both(Bool a, Bool b) { return a && b; }
  Bool either(Bool a, Bool b) { return a || b; }
  Bool negate(Bool a) { return !a; }
  Int select(Bool c, Int a, Int b) { return c ? a : b; }
  Bool select(Bool c, Bool a, Bool b) { return c ? a : b; }
  /// Captured tensors are run-time data.
  Interval<StaticDomain> extract(int64_t,
                                 llvm::ArrayRef<Interval<StaticDomain>>) {
    return {};
  }
};

/// The mask predicate of a mask region for attention with `numHeads` query
/// heads and `batch` rows (ShapedType::kDynamic when unknown): classifies
/// boxes with the interval analysis, evaluates elements exactly when the
/// region reads no captured tensor and no batch row.
std::shared_ptr<const mask::CustomPredicate>
buildMaskPredicate(ModProgram program, int64_t batch);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_ANALYSIS_MODREGIONANALYSIS_H
