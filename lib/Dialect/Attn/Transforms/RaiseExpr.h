//===- RaiseExpr.h - Scalar payloads of attn-raise, evaluated ---*- C++ -*-===//
//
// attn-raise reads what an elementwise chain computes by evaluating it: the
// payloads of linalg ops (and the scalars they capture) are interpreted in
// double precision at sample points, and the function found is compared with
// the table of pointwise functions (relu, gelu, ...), whatever the spelling
// (one fused generic or several ops, `x * c` or `x / c`, erf or tanh GELU,
// `log1p(exp(x))` or `log(1 + exp(x))`).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEEXPR_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEEXPR_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::attn::raise {

/// Values bound during an evaluation (block arguments of payloads).
using Bindings = llvm::DenseMap<Value, double>;

/// The value of the scalar `v` with `env`'s bindings: float and integer
/// constants, splat tensor constants read by `tensor.extract`, `tensor.dim`
/// of a static dim, casts, `arith` float and integer arithmetic, comparisons
/// and `select`, and `math` (exp, log, log1p, expm1, erf, tanh, sqrt, rsqrt,
/// powf, absf, ...); std::nullopt for anything else (an unbound block
/// argument, `linalg.index`, an op it does not know).
std::optional<double> evaluate(Value v, const Bindings &env);

/// The constant `v` is (`evaluate` without bindings).
std::optional<double> constantValue(Value v);

/// An elementwise linalg op of one variable tensor: all loops parallel, the
/// variable input and the init read with the identity map, every other
/// input a splat constant, a payload that reads neither the init nor the
/// loop indices.
struct UnaryOp {
  mutable linalg::LinalgOp op;
  /// The index of the variable input.
  unsigned input = 0;
  /// The payload's value for the variable `x`.
  std::optional<double> operator()(double x) const;
};
std::optional<UnaryOp> asUnary(Operation *op);

/// A chain of unary ops, innermost first, computing f(source).
struct UnaryChain {
  Value source;
  SmallVector<UnaryOp> ops;
  std::optional<double> operator()(double x) const;
};

/// The longest chain of unary ops that ends with the value `v`, each op's
/// variable used only by the next op. Empty (source `v`) when `v` is not
/// computed by a unary op.
UnaryChain unaryChainTo(Value v);

/// The constant `a` with which a chain starts, if its innermost op reads the
/// variable only through `x * a`, `a * x` or `x / a`; 1 otherwise.
double leadingScale(const UnaryChain &chain);

/// The constant `a` of `x * a`, `a * x` or `x / a` when that is the only
/// use of the payload value `x` (constants evaluated with `env`); 1
/// otherwise.
double scaleOfUse(Value x, const Bindings &env);

/// A pointwise function fitted to samples: f(y) = factor * h(y).
struct PointwiseFit {
  PointwiseFn fn;
  double factor;
};

/// The entry of the #attn.pointwise table `f` is, up to a positive constant
/// factor, at a set of sample points (relative error 1e-5); std::nullopt if
/// none or f cannot be evaluated.
///
/// `probes` are more points: where the payloads' own constants put their
/// breakpoints (a clamp at 20, a select at x > 100), so that a function
/// that agrees with an h only between the fixed samples is not taken for it.
std::optional<PointwiseFit>
fitPointwise(llvm::function_ref<std::optional<double>(double)> f,
             ArrayRef<double> probes = {});

/// The probe points of the payloads of `ops`: for each finite float
/// constant c they read (|c| in [1e-30, 1e30]), c and 2c, their negatives,
/// and the same divided by `scale`.
SmallVector<double> probePoints(ArrayRef<Operation *> ops, double scale = 1.0);

/// Whether `h(-inf)` is 0: a mask with `-inf` before h removes the key.
bool vanishesAtMinusInfinity(PointwiseFn fn);

/// The largest power `p` with `c * h(y) = h(c^(1/p) y)` for c > 0 (1 for
/// relu and identity, 2 for relu2), or 0 when h is not homogeneous.
double homogeneity(PointwiseFn fn);

} // namespace mlir::attn::raise

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISEEXPR_H
