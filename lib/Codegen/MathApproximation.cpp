//===- MathApproximation.cpp - Polynomial approximations of math ops ------===//

#include "attn-opt/Codegen/Passes.h"

#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMATHAPPROXIMATION
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// exp(x) of a vector<16xf32> through AVX-512's vscalefps (see the pass
/// description): 2^k exp(r), k = round(x log2 e), r = x - k ln 2 in two
/// parts, exp(r) by a degree-7 polynomial, 2^k applied by scalef under a
/// lane mask: lanes with x < `below` (-inf included) are 0 without being
/// computed (no underflowing multiply: x86 takes a slow microcode assist
/// for every subnormal or underflowing result), NaN lanes stay NaN. x is
/// clamped above at 89 (k = 128: inf).
Value scalefExp(ImplicitLocOpBuilder &b, Value x, double below) {
  auto type = cast<VectorType>(x.getType());
  Value like = x;
  auto c = [&](double v) { return attn::floatLike(b, like, v); };
  // Lanes computed: x >= below or NaN.
  Value keep = arith::CmpFOp::create(b, arith::CmpFPredicate::UGE, x, c(below));
  // (cmpf + select: x86's vminps, which keeps a NaN x.)
  Value hi = c(89.0);
  x = arith::SelectOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, hi), hi, x);
  // k = x log2(e) rounded to nearest: adding and subtracting 1.5 * 2^23.
  Value magic = c(12582912.0);
  Value k = arith::SubFOp::create(
      b, math::FmaOp::create(b, x, c(1.44269504088896341), magic), magic);
  // r = x - k ln 2 (Cody-Waite: ln 2 as 0.693359375 - 2.12194440e-4).
  Value r = math::FmaOp::create(b, k, c(-0.693359375), x);
  r = math::FmaOp::create(b, k, c(2.12194440e-4), r);
  // exp(r) on |r| <= ln(2) / 2: Cephes' expf polynomial in Horner form.
  Value p = c(1.9875691500e-4);
  for (double coeff : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                       1.6666665459e-1, 5.0000001201e-1, 1.0, 1.0})
    p = math::FmaOp::create(b, p, r, c(coeff));
  Value mask = LLVM::BitcastOp::create(b, b.getI16Type(), keep);
  // (Rounding 4: the current direction, MXCSR's.)
  Value rounding = arith::ConstantOp::create(b, b.getI32IntegerAttr(4));
  // (The op's operands reach llvm.x86.avx512.mask.scalef.ps.512 in
  // order, whose parameters are (a, b, passthru, mask, rounding): p * 2^k,
  // 0 where the mask is off, is (p, k, 0), whatever the op's names src, a,
  // b say.)
  return x86vector::MaskScaleFOp::create(b, type, p, k, c(0.0), mask, rounding);
}

/// ln(FLT_MIN): exp below it is subnormal.
constexpr double kFltMinLog = -87.33654475;

struct MathApproximationPass
    : public attn::impl::AttnMathApproximationBase<MathApproximationPass> {
  using Base::Base;

  void runOnOperation() override {
    auto f32x16 = VectorType::get({16}, Float32Type::get(&getContext()));
    SmallVector<math::ExpOp> exps;
    getOperation()->walk([&](math::ExpOp exp) { exps.push_back(exp); });
    for (math::ExpOp exp : exps) {
      ImplicitLocOpBuilder b(exp.getLoc(), exp);
      b.setInsertionPointAfter(exp);
      Value x = exp.getOperand();
      std::optional<double> below;
      if (auto bound = exp->getAttrOfType<FloatAttr>(attn::kExpFlushBelowAttr))
        below = bound.getValueAsDouble();
      if (avx512 && x.getType() == f32x16) {
        exp.replaceAllUsesWith(scalefExp(b, x, below.value_or(kFltMinLog)));
        exp.erase();
        continue;
      }
      // MLIR's exp approximation returns 0 for NaN (its underflow test,
      // x > lower bound, is false for NaN): NaN passed through as the
      // result, as libm's exp does.
      Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
      Value nanKept = arith::SelectOp::create(b, isNan, x, exp);
      Value result = nanKept;
      if (below)
        result = arith::SelectOp::create(
            b,
            arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x,
                                  attn::floatLike(b, x, *below)),
            attn::floatLike(b, x, 0.0), result);
      exp.getResult().replaceAllUsesExcept(result, nanKept.getDefiningOp());
      exp->removeAttr(attn::kExpFlushBelowAttr);
    }
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
