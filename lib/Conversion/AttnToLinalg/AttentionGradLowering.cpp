//===- AttentionGradLowering.cpp - Reference gradient of attn.attention ---===//
//
// The reference lowering of attn.attention_grad to linalg on tensors: the
// forward op's scores and weights are recomputed by the forward reference
// lowering's own pieces (buildAttentionScores, weights5), then the
// gradients follow docs/Semantics.md ("Gradients") step by step with the
// `Lq x Lk` score gradient materialized. The fused kernels are checked
// against it.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"
#include "attn-opt/Conversion/Capabilities.h"

#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// The reference gradient: every feature that applies to a gradient.
static Capability referenceGradient() {
  Capability c = forGradients(
      {"reference-gradient",
       "convert-attn-grad-to-linalg",
       "the reference gradient: the L x L score gradient materialized",
       {},
       {}});
  for (Feature n : {Feature::Softmax, Feature::Pointwise, Feature::Kernel})
    c.profiles.push_back(c.getApplicable(n));
  return c;
}

const Capability &mlir::attn::getReferenceGradientCapability() {
  static const Capability capability = referenceGradient();
  return capability;
}

const Capability &mlir::attn::getLinearGradientCapability() {
  // The forward's linear form (attn-reassociate); its chunked prefix form
  // needs Lq = Lk (with dynamic lengths checked at run time: the quadratic
  // gradient otherwise, as the forward).
  static const Capability capability = forGradients(
      {"linear-gradient",
       "convert-attn-grad-to-linalg{linear-kernelized=1}",
       "the linear-time gradient of kernelized attention (prefix sums for "
       "causal masks and documents)",
       {getLinearFormFeatures()},
       {{Feature::PatternCausal, Feature::UnequalLengths},
        {Feature::PatternSegments, Feature::UnequalLengths}}});
  return capability;
}

namespace {

/// The gradient lowering of one attn.attention_grad.
struct GradLowering {
  TensorBuilder &tb;
  AttentionGradOp op;
  AttentionOp forward;
  AttentionProblem p;

  /// Whether kernelized attention takes its linear form where it has one.
  bool linear;

  GradLowering(TensorBuilder &tb, AttentionGradOp op, bool linear)
      : tb(tb), op(op), forward(op.getForwardOp()),
        p(op.getForwardOp().getProblem()), linear(linear) {}

  /// The pattern restriction of the linear form of this kernelized
  /// attention's gradient, or std::nullopt where it has none (then the
  /// quadratic form, with a remark naming what the linear form lacks):
  /// getLinearGradientCapability, and queries to chunk.
  std::optional<LinearMaskForm> linearForm() {
    if (!p.isKernel())
      return std::nullopt;
    if (std::optional<Refusal> r =
            getLinearGradientCapability().refusal(getFeatures(p))) {
      op.emitRemark() << "convert-attn-grad-to-linalg: " << r->text()
                      << " has no linear-time gradient; the quadratic "
                         "gradient computes it";
      return std::nullopt;
    }
    LinearMaskForm form;
    if (p.masking.pattern)
      form = *p.masking.pattern.getLinearForm();
    if ((form.causal || form.segments) && p.dims.queryLen == 0)
      return std::nullopt;
    return form;
  }

  /// `sum_r lhs * rhs` as a contraction that skips the terms where `lhs`
  /// (weights or score gradients, 0 where masked) is exactly 0, so that
  /// masked entries never read what lies outside the sequences (padding may
  /// hold anything); times `factor`.
  Value sparseContract(Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                       ArrayRef<OpFoldResult> outSizes, AffineMap outMap,
                       StringRef iterators, double factor) {
    return tb.generic(
        {lhs, rhs}, {lhsMap, rhsMap}, tb.filled(outSizes, 0.0), outMap,
        iterators, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value x = a[0];
          if (factor != 1.0)
            x = arith::MulFOp::create(bb, x, tb.f32Const(factor));
          Value sum = tb.fma(bb, x, tb.toF32(bb, a[1]), a[2]);
          Value zero = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ,
                                             a[0], tb.f32Const(0.0));
          return arith::SelectOp::create(bb, zero, a[2], sum);
        });
  }

  /// The cotangent reaching the weighted sum, `dO * gate` (`dO` without a
  /// gate), and the gate's gradient `dO * O_u` when requested (else null);
  /// `dO` (f32), `ungated` (`O_u`) and `gate` in one layout.
  std::pair<Value, Value> throughGate(Value dO, Value ungated, Value gate) {
    if (!gate)
      return {dO, Value()};
    Value dGate;
    if (op.getGradGate())
      dGate = tb.elementwise({dO, ungated},
                             [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                               return tb.mul(bb, a[0], a[1]);
                             });
    dO =
        tb.elementwise({dO, gate}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
          return tb.mul(bb, a[0], tb.toF32(bb, a[1]));
        });
    return {dO, dGate};
  }

  /// Sums a `B x Hq x Lq x Lk` f32 gradient over the broadcast dimensions of
  /// `like` (the bias: `Lq x Lk`, or `{1|B} x {1|Hq} x Lq x Lk`).
  Value sumToShapeOf(Value grad, Value like) {
    ArrayRef<int64_t> shape = shapeOf(like);
    SmallVector<int64_t> outDims;
    std::string iters;
    bool keepBatch = shape.size() == 4 && shape[0] != 1;
    bool keepHead = shape.size() == 4 && shape[1] != 1;
    if (shape.size() == 4) {
      outDims.push_back(keepBatch ? 0 : -1);
      outDims.push_back(keepHead ? 1 : -1);
    }
    outDims.append({2, 3});
    iters += keepBatch ? 'p' : 'r';
    iters += keepHead ? 'p' : 'r';
    iters += "pp";
    return tb.generic({grad}, {tb.map(4, {0, 1, 2, 3})},
                      tb.filled(tb.sizes(like), 0.0), tb.map(4, outDims), iters,
                      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                        return tb.add(bb, a[0], a[1]);
                      });
  }

  /// A `B x Hq x Lq` row tensor as `B x Hkv x G x Lq`.
  Value splitRows(Value rows) {
    ArrayRef<int64_t> s = shapeOf(rows);
    TensorBuilder::Sizes in = tb.sizes(rows);
    int64_t kvHeads = p.dims.kvHeads;
    auto type =
        RankedTensorType::get({s[0], kvHeads, s[1] / kvHeads, s[2]}, tb.f32);
    return tensor::ExpandShapeOp::create(
        tb.b, type, rows, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}},
        SmallVector<OpFoldResult>{in[0], tb.b.getIndexAttr(kvHeads),
                                  tb.b.getIndexAttr(s[1] / kvHeads), in[2]});
  }

  /// The gradients, in the op's result order: kernelized attention's in
  /// its linear form when `linear` and it has one, else from the
  /// materialized score gradient.
  SmallVector<Value> build() {
    bool outside = op.getKeyState() || op.getQueryState();
    if (linear)
      if (std::optional<LinearMaskForm> form = linearForm()) {
        const AttentionDims &d = p.dims;
        bool dynamic = ShapedType::isDynamic(d.queryLen) ||
                       ShapedType::isDynamic(d.keyLen);
        // (With the states of an outside sequence, Lq = Lk: the verifier's
        // condition.)
        if (!(form->causal || form->segments) || !dynamic || outside)
          return buildLinear(*form);
        // Lengths known at run time: the chunked prefix form when Lq ==
        // Lk (the forward's condition, attn-reassociate), else the
        // quadratic form, chosen at run time.
        op.emitRemark() << "convert-attn-grad-to-linalg: lengths are "
                           "dynamic: the linear-time gradient when Lq == Lk, "
                           "else the quadratic gradient, chosen at run time";
        ImplicitLocOpBuilder &b = tb.b;
        Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                           tensor::DimOp::create(b, p.query, 2),
                                           tensor::DimOp::create(b, p.key, 2));
        auto pick = scf::IfOp::create(
            b, same,
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(b, buildLinear(*form));
            },
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(b, buildQuadratic());
            });
        return pick.getResults();
      }
    assert(!outside && "checked by lowerAttentionGrads");
    return buildQuadratic();
  }

  /// `state` (`B x H x F x c`) with zero columns up to `width`.
  Value padColumns(Value state, int64_t width) {
    TensorBuilder::Sizes sizes = tb.sizes(state);
    TensorBuilder::Sizes wide = sizes;
    wide[3] = tb.b.getIndexAttr(width);
    return tensor::InsertSliceOp::create(
        tb.b, state, tb.filled(wide, 0.0),
        SmallVector<OpFoldResult>(4, tb.b.getIndexAttr(0)), sizes,
        SmallVector<OpFoldResult>(4, tb.b.getIndexAttr(1)));
  }

  /// `x + y`, elementwise.
  Value plus(Value x, Value y) {
    return tb.elementwise({x, y}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
      return tb.add(bb, a[0], a[1]);
    });
  }

  /// `x_i S` per row of `x` (`B x Hq x L x c`) against the key/value
  /// head's `S` (`B x Hkv x c x n`): `B x Hq x L x n`; with `transposed`,
  /// `S` is `B x Hkv x n x c`.
  Value rowsTimesState(Value x, Value state, bool transposed) {
    Value x5 = splitHeads(tb, x, p.dims.kvHeads);
    TensorBuilder::Sizes out = tb.sizes(x5);
    out[4] = tb.sizes(state)[transposed ? 2 : 3];
    Value product =
        tb.contract(x5, tb.map(6, {0, 1, 2, 3, 5}), state,
                    tb.map(6, transposed ? ArrayRef<int64_t>{0, 1, 4, 5}
                                         : ArrayRef<int64_t>{0, 1, 5, 4}),
                    out, tb.map(6, {0, 1, 2, 3, 4}), "pppppr");
    return mergeHeads(tb, product);
  }

  /// Whether softmax's weights and row dots come from the saved output and
  /// log-sum-exp (both given, no gate: the saved output is then the
  /// weighted sum itself) rather than from the recomputed forward.
  bool savedStatistics() {
    return p.isSoftmax() && op.getSavedOutput() && op.getSavedLse() &&
           !p.modifiers.gate;
  }

  /// The gradients from the materialized `Lq x Lk` score gradient.
  SmallVector<Value> buildQuadratic() {
    const AttentionDims &d = p.dims;
    AttentionScores sc;
    buildAttentionScores(tb, forward, sc);
    Value lse, weights, denominator;
    bool needLse = p.isSoftmax() && op.getGradSinks();
    auto kernel = dyn_cast<KernelAttr>(p.normalizer);
    if (kernel) {
      // P = A / (den + eps), A the masked feature products (as weights5).
      double eps = kernel.getEps().convertToDouble();
      Value masked = maskedScores5(tb, sc.scores, sc.spec);
      Value den = tb.rowSum(masked);
      weights = divideRows(tb, masked, den, eps);
      denominator =
          tb.elementwise({den}, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
            return tb.add(bb, a[0], tb.f32Const(eps));
          });
    } else if (savedStatistics()) {
      // The saved log-sum-exp normalizes: P = exp(s - LSE) (0 where masked
      // and in rows without a key), so a block of keys of a larger
      // attention (attn-partition-sequence's backward ring) gets its share.
      lse = splitRows(op.getSavedLse());
      Value masked = maskedScores5(tb, sc.scores, sc.spec);
      auto [id, outer] = tb.rowMaps(5);
      weights = tb.generic(
          {masked, lse}, {id, outer}, tb.empty(tb.sizes(masked)), id, "ppppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            Value none = arith::CmpFOp::create(
                bb, arith::CmpFPredicate::OEQ, a[1],
                tb.f32Const(-std::numeric_limits<double>::infinity()));
            Value w =
                math::ExpOp::create(bb, arith::SubFOp::create(bb, a[0], a[1]));
            return arith::SelectOp::create(bb, none, tb.f32Const(0.0), w);
          });
    } else {
      weights = weights5(tb, sc.scores, sc.spec, needLse ? &lse : nullptr);
    }
    Value ungated = applyValues5(tb, weights, sc.valueIn, &sc.spec);

    // The cotangent reaching the weighted sum: dO, times the gate.
    Value gate = p.modifiers.gate;
    auto [dO, dGate] = throughGate(
        toF32Tensor(tb, splitHeads(tb, op.getGradOutput(), d.kvHeads)), ungated,
        gate ? splitHeads(tb, gate, d.kvHeads) : Value());

    // dP = dO V^T; softmax's D = rowsum(dO * O) and d(LSE).
    ScoreCotangent cot;
    cot.weights = weights;
    cot.denominator = denominator;
    cot.dWeights = scores5(tb, dO, sc.valueIn);
    TensorBuilder::Sizes shape5 = tb.sizes(weights);
    TensorBuilder::Sizes rows(shape5.begin(), shape5.end() - 1);
    auto [oid, oouter] = tb.rowMaps(5);
    if (!isa<PointwiseAttr>(p.normalizer)) {
      // D = rowsum(dO * O), O the saved output when given.
      Value out =
          savedStatistics()
              ? toF32Tensor(tb, splitHeads(tb, op.getSavedOutput(), d.kvHeads))
              : ungated;
      cot.rowDot =
          tb.generic({dO, out}, {oid, oid}, tb.filled(rows, 0.0), oouter,
                     "ppppr", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                       return tb.fma(bb, a[0], a[1], a[2]);
                     });
      if (Value dl = op.getGradLse())
        cot.dLse = splitRows(dl);
    }
    Value dy = scoreGradient5(tb, sc.scores, sc.spec, cot);

    // dQ = scale dy K, dK = scale dy^T Q (summed over the group), dV = P^T dO.
    TensorBuilder::Sizes q5 = tb.sizes(sc.query5), k = tb.sizes(sc.key),
                         v = tb.sizes(sc.valueIn);
    double scale = sc.spec.scale;
    Value dQ5 = sparseContract(dy, tb.map(6, {0, 1, 2, 3, 5}), sc.key,
                               tb.map(6, {0, 1, 5, 4}), q5,
                               tb.map(6, {0, 1, 2, 3, 4}), "pppppr", scale);
    Value dK = sparseContract(dy, tb.map(6, {0, 1, 4, 5, 2}), sc.query5,
                              tb.map(6, {0, 1, 4, 5, 3}), k,
                              tb.map(6, {0, 1, 2, 3}), "pppprr", scale);
    Value dV = sparseContract(weights, tb.map(6, {0, 1, 4, 5, 2}), dO,
                              tb.map(6, {0, 1, 4, 5, 3}), v,
                              tb.map(6, {0, 1, 2, 3}), "pppprr", 1.0);
    // Back through the feature map, then qk-layernorm.
    Value q5In = splitHeads(tb, p.query, d.kvHeads), kIn = p.key;
    Value dW; // (a FAVOR+ projection's gradient)
    if (kernel) {
      Value qn = q5In, kn = kIn;
      if (p.qkNormEps) {
        qn = layerNorm(tb, q5In, *p.qkNormEps);
        kn = layerNorm(tb, kIn, *p.qkNormEps);
      }
      double inputScale = p.explicitScale ? std::sqrt(p.scale) : 1.0;
      dQ5 = featureMapGrad(tb, qn, dQ5, kernel, inputScale, p.projection,
                           op.getGradProjection() ? &dW : nullptr);
      dK = featureMapGrad(tb, kn, dK, kernel, inputScale, p.projection,
                          op.getGradProjection() ? &dW : nullptr);
    }
    if (p.qkNormEps) {
      dQ5 = layerNormGrad(tb, q5In, dQ5, *p.qkNormEps);
      dK = layerNormGrad(tb, kIn, dK, *p.qkNormEps);
    }
    SmallVector<Value> results = {finishHeads(tb, dQ5, p.elementType),
                                  fromF32Tensor(tb, dK, p.elementType),
                                  fromF32Tensor(tb, dV, p.elementType)};
    if (op.getGradBias()) {
      Value bias = p.modifiers.bias;
      Value summed = sumToShapeOf(mergeHeads(tb, dy), bias);
      results.push_back(fromF32Tensor(
          tb, summed, cast<RankedTensorType>(bias.getType()).getElementType()));
    }
    if (dGate)
      results.push_back(finishHeads(
          tb, dGate,
          cast<RankedTensorType>(p.modifiers.gate.getType()).getElementType()));
    if (op.getGradSinks())
      results.push_back(sinksGrad(lse, cot));
    if (op.getGradAlibiSlopes())
      results.push_back(alibiSlopeGradient5(tb, dy, sc.spec));
    if (op.getGradProjection())
      results.push_back(
          fromF32Tensor(tb, dW, getElementTypeOrSelf(op.getGradProjection())));
    if (!op.getGradCaptures().empty()) {
      // The gradient of the score region's result, scattered through its
      // reads of the captured tensors.
      ScoreCotangent atResult = cot;
      atResult.atRegionResult = true;
      Value dyFinal = scoreGradient5(tb, sc.scores, sc.spec, atResult);
      for (auto [g, grad] :
           llvm::zip(captureGradients5(tb, sc.scores, sc.spec, dyFinal,
                                       forward.getFloatCaptures()),
                     op.getGradCaptures()))
        results.push_back(fromF32Tensor(tb, g, getElementTypeOrSelf(grad)));
    }
    return results;
  }

  //===--- The linear form of kernelized attention ----------------------===//

  /// `x` (`B x Hkv x L x C`) repeated for each query head of its group
  /// (`B x Hq x L x C`).
  Value repeatHeads(Value x) {
    int64_t group = p.dims.groupSize();
    if (group == 1)
      return x;
    TensorBuilder::Sizes in = tb.sizes(x);
    TensorBuilder::Sizes out5 = {in[0], in[1], tb.b.getIndexAttr(group), in[2],
                                 in[3]};
    Value rep5 =
        tb.generic({x}, {tb.map(5, {0, 1, 3, 4})},
                   tb.empty(out5, getElementTypeOrSelf(x.getType())),
                   tb.map(5, {0, 1, 2, 3, 4}), "ppppp",
                   [](ImplicitLocOpBuilder &, ValueRange a) { return a[0]; });
    return tensor::CollapseShapeOp::create(
        tb.b, rep5, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  }

  /// `x` (`B x Hq x L x C`, f32) summed over each key/value head's group.
  Value sumGroups(Value x) {
    int64_t group = p.dims.groupSize();
    if (group == 1)
      return x;
    Value x5 = splitHeads(tb, x, p.dims.kvHeads);
    TensorBuilder::Sizes s = tb.sizes(x5);
    return tb.generic({x5}, {tb.map(5, {0, 1, 2, 3, 4})},
                      tb.filled({s[0], s[1], s[3], s[4]}, 0.0),
                      tb.map(5, {0, 1, 3, 4}), "pprpp",
                      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                        return tb.add(bb, a[0], a[1]);
                      });
  }

  /// `out[b,h,i,:] = sum_{j allowed for i} (x[b,h,i,:] . y[b,h/G',j,:])
  /// w[b,h/G',j,:]` in f32, the allowed pairs those of `form` (none, causal,
  /// segments `ids`): attn.chunked_linear unnormalized, or without a mask
  /// two contractions through `y^T w`. G' is x's heads over y's. With
  /// `reverse` (causal forms), the pairs' transposes: j >= i.
  Value maskedSum(Value x, Value y, Value w, LinearMaskForm form, Value ids,
                  bool reverse = false) {
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y), ws = shapeOf(w);
    auto type = RankedTensorType::get({xs[0], xs[1], xs[2], ws[3]}, tb.f32);
    if (form.causal || form.segments)
      return ChunkedLinearOp::create(
          tb.b, type, x, y, w, form.segments ? ids : Value(), Value(),
          tb.b.getI64IntegerAttr(kChunk),
          form.causal ? tb.b.getUnitAttr() : UnitAttr(),
          tb.b.getF32FloatAttr(0.0), tb.b.getUnitAttr(),
          reverse ? tb.b.getUnitAttr() : UnitAttr());
    // T[b,k,c,e] = sum_j y[b,k,j,c] w[b,k,j,e]; out = x T (per group).
    TensorBuilder::Sizes yz = tb.sizes(y), wz = tb.sizes(w);
    Value t = tb.contract(y, tb.map(5, {0, 1, 3, 2}), w,
                          tb.map(5, {0, 1, 3, 4}), {yz[0], yz[1], yz[3], wz[3]},
                          tb.map(5, {0, 1, 2, 4}), "ppprp");
    Value x5 = splitHeads(tb, x, ys[1]);
    TensorBuilder::Sizes x5z = tb.sizes(x5);
    Value out5 =
        tb.contract(x5, tb.map(6, {0, 1, 2, 3, 4}), t, tb.map(6, {0, 1, 4, 5}),
                    {x5z[0], x5z[1], x5z[2], x5z[3], wz[3]},
                    tb.map(6, {0, 1, 2, 3, 5}), "pppprp");
    return mergeHeads(tb, out5);
  }

  /// The suffix form of maskedSum: the pairs (i, j) whose transpose (j, i)
  /// `form` allows (segments alone are symmetric; causal: chunked_linear's
  /// `reverse`).
  Value maskedSuffixSum(Value x, Value y, Value w, LinearMaskForm form,
                        Value ids) {
    return maskedSum(x, y, w, form, ids, /*reverse=*/form.causal);
  }

  /// The gradients of kernelized attention in linear time (docs/Semantics.md,
  /// "Gradients": the linear form). With Y = [V, 1] (zero-padded to
  /// kPad columns), [N, den] = maskedSum(phi(Q), phi(K), Y), O = N / den;
  /// dN = dO / den, dden = -rowsum(dO O) / den, X = [dN, dden]:
  ///   dphi(Q) = maskedSum(X, Y, phi(K)),
  ///   dphi(K) = sum over the group of maskedSuffixSum(Y, X, phi(Q)),
  ///   dV      = sum over the group of maskedSuffixSum(phi(K), phi(Q), dN),
  /// then back through the feature map and qk-layernorm as the quadratic
  /// form.
  SmallVector<Value> buildLinear(LinearMaskForm form) {
    const AttentionDims &d = p.dims;
    auto kernel = cast<KernelAttr>(p.normalizer);
    double eps = kernel.getEps().convertToDouble();
    Value qn = p.query, kn = p.key;
    if (p.qkNormEps) {
      qn = layerNorm(tb, qn, *p.qkNormEps);
      kn = layerNorm(tb, kn, *p.qkNormEps);
    }
    double inputScale = p.explicitScale ? std::sqrt(p.scale) : 1.0;
    FloatAttr scaleAttr =
        p.explicitScale ? tb.b.getF32FloatAttr(inputScale) : FloatAttr();
    int64_t features = kernel.getNumFeatures(d.headDim);
    auto phi = [&](Value x) -> Value {
      ArrayRef<int64_t> s = shapeOf(x);
      auto type = RankedTensorType::get({s[0], s[1], s[2], features}, tb.f32);
      return FeatureMapOp::create(tb.b, type, x, p.projection, kernel,
                                  scaleAttr);
    };
    Value fq = phi(qn), fk = phi(kn);
    Value ids = form.segments ? p.segments.query : Value();
    int64_t dv = d.valueDim, width = llvm::alignTo(dv + 1, kPad);
    // [x, last, 0...] (`width` columns) of x (`B x H x L x Dv`, f32);
    // `last` (`B x H x L`) null: ones. (One generic reading x by
    // tensor.extract: a padded copy would be a strided copy and a fill.)
    auto extend = [&](Value x, Value last) -> Value {
      TensorBuilder::Sizes ws = tb.sizes(x);
      ws[3] = tb.b.getIndexAttr(width);
      auto [id, outer] = tb.rowMaps(4);
      SmallVector<Value> inputs;
      SmallVector<AffineMap> maps;
      if (last) {
        inputs.push_back(last);
        maps.push_back(outer);
      }
      return tb.generic(
          inputs, maps, tb.empty(ws), id, "pppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
            SmallVector<Value> at;
            for (int64_t d = 0; d < 4; ++d)
              at.push_back(linalg::IndexOp::create(bb, d));
            Value col = at[3];
            at[3] = arith::MinUIOp::create(bb, col, tb.index(dv - 1));
            Value xv = tensor::ExtractOp::create(bb, x, at);
            Value inside = arith::CmpIOp::create(bb, arith::CmpIPredicate::ult,
                                                 col, tb.index(dv));
            Value isLast = arith::CmpIOp::create(bb, arith::CmpIPredicate::eq,
                                                 col, tb.index(dv));
            Value tail = arith::SelectOp::create(
                bb, isLast, last ? a[0] : tb.f32Const(1.0), tb.f32Const(0.0));
            return arith::SelectOp::create(bb, inside, xv, tail);
          });
    };
    Value y = extend(toF32Tensor(tb, p.value), Value());
    Value numDen = maskedSum(fq, fk, y, form, ids);
    // The keys outside the op's (key_state): every row's numerator and
    // denominator gain phi(q_i) S.
    Value keyState = op.getKeyState(), queryState = op.getQueryState();
    Value keyStateWide = keyState ? padColumns(keyState, width) : Value();
    if (keyState)
      numDen = plus(numDen, rowsTimesState(fq, keyStateWide, false));

    // O = N / (den + eps), 0 where that is 0; r = 1 / (den + eps) or 0.
    MLIRContext *ctx = tb.b.getContext();
    AffineExpr d0, d1, d2;
    bindDims(ctx, d0, d1, d2);
    TensorBuilder::Sizes oz = tb.sizes(p.query);
    oz[3] = tb.b.getIndexAttr(dv);
    TensorBuilder::Sizes rows = {oz[0], oz[1], oz[2]};
    Value r = tb.generic(
        {numDen},
        {AffineMap::get(3, 0, {d0, d1, d2, getAffineConstantExpr(dv, ctx)},
                        ctx)},
        tb.empty(rows), tb.map(3, {0, 1, 2}), "ppp",
        [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value den = arith::AddFOp::create(bb, a[0], tb.f32Const(eps));
          Value zero = arith::CmpFOp::create(bb, arith::CmpFPredicate::OEQ, den,
                                             tb.f32Const(0.0));
          return arith::SelectOp::create(
              bb, zero, tb.f32Const(0.0),
              arith::DivFOp::create(bb, tb.f32Const(1.0), den));
        });
    auto [id4, outer4] = tb.rowMaps(4);
    Value num = tensor::ExtractSliceOp::create(
        tb.b, numDen, SmallVector<OpFoldResult>(4, tb.b.getIndexAttr(0)), oz,
        SmallVector<OpFoldResult>(4, tb.b.getIndexAttr(1)));
    Value ungated =
        tb.generic({num, r}, {id4, outer4}, tb.empty(oz), id4, "pppp",
                   [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                     return arith::MulFOp::create(bb, a[0], a[1]);
                   });
    auto [dO, dGate] = throughGate(toF32Tensor(tb, op.getGradOutput()), ungated,
                                   p.modifiers.gate);
    // dN = dO r, dden = -rowsum(dO O) r.
    Value dN = tb.generic({dO, r}, {id4, outer4}, tb.empty(oz), id4, "pppp",
                          [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
                            return arith::MulFOp::create(bb, a[0], a[1]);
                          });
    Value dDen = tb.generic(
        {dO, ungated, r}, {id4, id4, outer4}, tb.filled(rows, 0.0), outer4,
        "pppr", [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value t = arith::MulFOp::create(
              bb, arith::MulFOp::create(bb, a[0], a[1]), a[2]);
          return arith::SubFOp::create(bb, a[3], t);
        });
    Value x = extend(dN, dDen);

    Value dFq = maskedSum(x, y, fk, form, ids);
    Value dFk = sumGroups(maskedSuffixSum(repeatHeads(y), x, fq, form, ids));
    Value dV = sumGroups(maskedSuffixSum(repeatHeads(fk), fq, dN, form, ids));
    if (keyState)
      dFq = plus(dFq, rowsTimesState(x, keyStateWide, true));
    if (queryState) {
      // The queries outside the op's (query_state G, per query head): each
      // key gains dphi(k_j) += sum_g G y_j and dv_j += sum_g phi(k_j) G.
      Value g5 = splitHeads(tb, padColumns(queryState, width), d.kvHeads);
      dFk = plus(dFk, tb.contract(g5, tb.map(6, {0, 1, 4, 3, 5}), y,
                                  tb.map(6, {0, 1, 2, 5}), tb.sizes(dFk),
                                  tb.map(6, {0, 1, 2, 3}), "pppprr"));
      TensorBuilder::Sizes gs = tb.sizes(g5);
      gs[4] = tb.b.getIndexAttr(dv);
      Value gv = tensor::ExtractSliceOp::create(
          tb.b, g5, SmallVector<OpFoldResult>(5, tb.b.getIndexAttr(0)), gs,
          SmallVector<OpFoldResult>(5, tb.b.getIndexAttr(1)));
      dV = plus(dV, tb.contract(fk, tb.map(6, {0, 1, 2, 5}), gv,
                                tb.map(6, {0, 1, 4, 5, 3}), tb.sizes(dV),
                                tb.map(6, {0, 1, 2, 3}), "pppprr"));
    }
    Value dW; // (a FAVOR+ projection's gradient)
    Value *dWp = op.getGradProjection() ? &dW : nullptr;
    Value dQ =
        featureMapGrad(tb, qn, dFq, kernel, inputScale, p.projection, dWp);
    Value dK =
        featureMapGrad(tb, kn, dFk, kernel, inputScale, p.projection, dWp);
    if (p.qkNormEps) {
      dQ = layerNormGrad(tb, p.query, dQ, *p.qkNormEps);
      dK = layerNormGrad(tb, p.key, dK, *p.qkNormEps);
    }
    SmallVector<Value> results = {fromF32Tensor(tb, dQ, p.elementType),
                                  fromF32Tensor(tb, dK, p.elementType),
                                  fromF32Tensor(tb, dV, p.elementType)};
    if (dGate)
      results.push_back(fromF32Tensor(
          tb, dGate,
          cast<RankedTensorType>(p.modifiers.gate.getType()).getElementType()));
    if (dW)
      results.push_back(
          fromF32Tensor(tb, dW, getElementTypeOrSelf(op.getGradProjection())));
    return results;
  }

  /// The chunk of the chunked prefix form, and the multiple the cotangent
  /// columns [dN, dden] are padded to (the fused kernels' vector width).
  static constexpr int64_t kChunk = 64, kPad = 16;

  /// The query rows of batch row `bIdx` that belong to a sequence (an
  /// index), or null when every row does (no query lengths or offsets).
  Value sequenceRows(ImplicitLocOpBuilder &bb, Value bIdx) {
    const AttentionSequences &seq = p.sequences;
    auto asIndex = [&](Value v) -> Value {
      return arith::IndexCastOp::create(bb, bb.getIndexType(), v);
    };
    if (seq.queryOffsets) {
      Value count = tensor::DimOp::create(bb, seq.queryOffsets, 0);
      Value last = arith::SubIOp::create(bb, count,
                                         arith::ConstantIndexOp::create(bb, 1));
      return asIndex(
          tensor::ExtractOp::create(bb, seq.queryOffsets, ValueRange{last}));
    }
    if (seq.queryLengths)
      return asIndex(
          tensor::ExtractOp::create(bb, seq.queryLengths, ValueRange{bIdx}));
    return Value();
  }

  /// `dsink_h = sum_{b,i} exp(sink_h - LSE_bhi) (dLSE_bhi - D_bhi)` over
  /// the rows of the sequences: in a varlen batch the rows past a batch
  /// row's query length (padded) or past the last offset (packed) are no
  /// query's, whatever their cotangents hold.
  Value sinksGrad(Value lse, const ScoreCotangent &cot) {
    int64_t group = p.dims.groupSize();
    Value sinks = p.modifiers.sinks;
    SmallVector<Value> inputs = {lse, cot.rowDot};
    if (cot.dLse)
      inputs.push_back(cot.dLse);
    Value terms = tb.elementwise(
        inputs, [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value head = arith::AddIOp::create(
              bb,
              arith::MulIOp::create(bb, linalg::IndexOp::create(bb, 1),
                                    tb.index(group)),
              linalg::IndexOp::create(bb, 2));
          Value sink = tensor::ExtractOp::create(bb, sinks, ValueRange{head});
          Value share =
              math::ExpOp::create(bb, arith::SubFOp::create(bb, sink, a[0]));
          Value t = arith::NegFOp::create(bb, a[1]);
          if (cot.dLse)
            t = arith::AddFOp::create(bb, t, a[2]);
          Value term = arith::MulFOp::create(bb, share, t);
          Value rows = sequenceRows(bb, linalg::IndexOp::create(bb, 0));
          if (!rows)
            return term;
          Value inside =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::slt,
                                    linalg::IndexOp::create(bb, 3), rows);
          return arith::SelectOp::create(bb, inside, term, tb.f32Const(0.0));
        });
    Value merged = tensor::CollapseShapeOp::create(
        tb.b, terms, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
    return tb.generic({merged}, {tb.map(3, {0, 1, 2})},
                      tb.filled(tb.sizes(sinks), 0.0), tb.map(3, {1}), "rpr",
                      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                        return tb.add(bb, a[0], a[1]);
                      });
  }
};

/// The gradients of `op` under its forward op's run-time checks: when they
/// fail (the hook has reported it) the results are uninitialized tensors.
SmallVector<Value> lowerUnderChecks(ImplicitLocOpBuilder &b, AttentionGradOp op,
                                    GradLowering &lowering) {
  Value ok = emitGradientChecks(b, op);
  if (!ok)
    return lowering.build();
  TensorBuilder &tb = lowering.tb;
  auto guarded = scf::IfOp::create(
      b, ok,
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, lowering.build()); },
      [&](OpBuilder &, Location) {
        // Each gradient has the shape of its operand.
        SmallVector<Value> like = op.getDifferentiatedOperands();
        SmallVector<Value> empty;
        for (Value v : like)
          empty.push_back(
              tb.empty(tb.sizes(v),
                       cast<RankedTensorType>(v.getType()).getElementType()));
        scf::YieldOp::create(b, empty);
      });
  return guarded.getResults();
}

} // namespace

LogicalResult mlir::attn::lowerAttentionGrads(Operation *root,
                                              bool linearKernelized) {
  SmallVector<AttentionGradOp> ops;
  root->walk([&](AttentionGradOp op) { ops.push_back(op); });
  for (AttentionGradOp op : ops) {
    IRRewriter rewriter(op.getContext());
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    TensorBuilder tb(b);
    GradLowering lowering(tb, op, linearKernelized);
    if ((op.getKeyState() || op.getQueryState()) &&
        !(linearKernelized && lowering.linearForm()))
      return op.emitOpError()
             << "key_state and query_state need the linear-time gradient "
                "(the CPU pipeline's linear-kernelized)";
    AttentionOp forward = lowering.forward;
    rewriter.replaceOp(op, lowerUnderChecks(b, op, lowering));
    if (forward->use_empty())
      rewriter.eraseOp(forward);
  }
  return success();
}
