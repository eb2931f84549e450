//===- ScalarReferenceGradTest.cpp - Tests of the reference's gradients ---===//
//
// ref::attentionGrad (reverse-mode differentiation of the scalar reference)
// against central finite differences of ref::attention, on tiny random
// problems covering the normalizers and the differentiable modifiers.
//
//===----------------------------------------------------------------------===//

#include "../../test/reference/ScalarReference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace ref;

namespace {

/// A problem: the sizes, the operands, the cotangents and the spec, which
/// points into the problem (so a problem is never copied or moved).
struct Problem {
  int64_t batch, hq, hkv, lq, lk, d, dv;
  Tensor q, k, v, bias, gate, sinks, dOut, dLse, mask, queryLengths, keyLengths;
  AttentionSpec spec;
  bool withLse = false;

  Problem(int64_t batch, int64_t hq, int64_t hkv, int64_t lq, int64_t lk,
          int64_t d, int64_t dv, uint64_t seed)
      : batch(batch), hq(hq), hkv(hkv), lq(lq), lk(lk), d(d), dv(dv),
        rng(seed) {
    q = random({batch, hq, lq, d});
    k = random({batch, hkv, lk, d});
    v = random({batch, hkv, lk, dv});
    dOut = random({batch, hq, lq, dv});
    dLse = random({batch, hq, lq});
    spec.normalizer = AttentionSpec::Normalizer::Softmax;
  }
  Problem(const Problem &) = delete;
  Problem &operator=(const Problem &) = delete;

  /// A tensor of uniform draws in [lo, hi).
  Tensor random(std::vector<int64_t> shape, double lo = -1, double hi = 1) {
    Tensor t(std::move(shape));
    std::uniform_real_distribution<double> uniform(lo, hi);
    for (double &x : t.data)
      x = uniform(rng);
    return t;
  }
  void addBias() {
    // Broadcast over the batch: its gradient sums over it.
    bias = random({1, hq, lq, lk});
    spec.bias = &bias;
  }
  void addGate() {
    gate = random({batch, hq, lq, dv});
    spec.gate = &gate;
  }
  void addSinks() {
    sinks = random({hq});
    spec.sinks = &sinks;
  }

  /// The loss whose gradient attentionGrad computes: <dOut, out> plus, with
  /// withLse, <dLse, lse> over the rows with a finite log-sum-exp.
  double loss() {
    Tensor lse;
    Tensor out = attention(q, k, v, spec, &lse);
    double l = 0;
    for (int64_t i = 0; i < out.size(); ++i)
      l += dOut.data[i] * out.data[i];
    if (withLse)
      for (int64_t i = 0; i < lse.size(); ++i)
        if (std::isfinite(lse.data[i]))
          l += dLse.data[i] * lse.data[i];
    return l;
  }

private:
  std::mt19937_64 rng;
};

/// Checks attentionGrad against central differences (h = 1e-6) of every
/// element of every differentiable operand; returns (and records as the
/// test property max_abs_err) the largest absolute error.
double checkGradients(Problem &p) {
  AttentionGrads grads = attentionGrad(p.q, p.k, p.v, p.spec, p.dOut,
                                       p.withLse ? &p.dLse : nullptr);
  struct Operand {
    const char *name;
    Tensor *input;
    const Tensor *grad;
  };
  std::vector<Operand> operands = {{"query", &p.q, &grads.query},
                                   {"key", &p.k, &grads.key},
                                   {"value", &p.v, &grads.value}};
  if (p.spec.bias)
    operands.push_back({"bias", &p.bias, &grads.bias});
  if (p.spec.gate)
    operands.push_back({"gate", &p.gate, &grads.gate});
  if (p.spec.sinks)
    operands.push_back({"sinks", &p.sinks, &grads.sinks});
  // Absent operands have empty gradients.
  EXPECT_EQ(grads.bias.shape.empty(), !p.spec.bias);
  EXPECT_EQ(grads.gate.shape.empty(), !p.spec.gate);
  EXPECT_EQ(grads.sinks.shape.empty(), !p.spec.sinks);

  const double h = 1e-6;
  double maxErr = 0;
  for (const Operand &op : operands) {
    EXPECT_EQ(op.grad->shape, op.input->shape) << op.name;
    if (op.grad->shape != op.input->shape)
      continue;
    for (int64_t i = 0; i < op.input->size(); ++i) {
      double x = op.input->data[i];
      op.input->data[i] = x + h;
      double plus = p.loss();
      op.input->data[i] = x - h;
      double minus = p.loss();
      op.input->data[i] = x;
      double fd = (plus - minus) / (2 * h);
      double ad = op.grad->data[i];
      if (!std::isfinite(ad)) {
        ADD_FAILURE() << op.name << "[" << i << "] is " << ad;
        continue;
      }
      double err = std::fabs(ad - fd);
      maxErr = std::max(maxErr, err);
      EXPECT_LE(err, 1e-6 + 1e-6 * std::fabs(fd))
          << op.name << "[" << i << "]: " << ad << " vs finite difference "
          << fd;
    }
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.3e", maxErr);
  ::testing::Test::RecordProperty("max_abs_err", text);
  return maxErr;
}

Pattern causal() {
  Pattern p;
  p.kind = Pattern::Causal;
  return p;
}

TEST(ScalarReferenceGradTest, Softmax) {
  Problem p(2, 4, 2, 6, 8, 4, 3, 1);
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, SoftmaxCausalRowsWithoutKeys) {
  // Lq > Lk: the first two rows see no key and have zero gradients.
  Problem p(1, 2, 1, 7, 5, 3, 2, 2);
  p.spec.pattern = causal();
  checkGradients(p);
  AttentionGrads grads = attentionGrad(p.q, p.k, p.v, p.spec, p.dOut);
  for (int64_t h = 0; h < p.hq; ++h)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t c = 0; c < p.d; ++c)
        EXPECT_EQ(grads.query.at({0, h, i, c}), 0.0);
}

TEST(ScalarReferenceGradTest, SoftmaxSinksSoftcapBiasGate) {
  Problem p(2, 4, 1, 5, 7, 3, 2, 3);
  p.addBias();
  p.addGate();
  p.addSinks();
  p.spec.softcap = 1.5;
  p.spec.scale = 0.8;
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, SoftmaxAlibiAdditiveMaskGqa) {
  // ALiBi and the mask are constants; a fully masked row has zero
  // gradients and, without sinks, a log-sum-exp of -inf.
  Problem p(2, 4, 2, 6, 6, 4, 3, 4);
  Tensor slopes = p.random({p.hq}, 0, 1);
  p.spec.alibiSlopes = &slopes;
  p.mask = p.random({p.batch, 1, p.lq, p.lk});
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.lk; ++j) {
      p.mask.at({b, 0, 1, j}) = -std::numeric_limits<double>::infinity();
      if (j % 3 == 0)
        p.mask.at({b, 0, 4, j}) = -std::numeric_limits<double>::infinity();
    }
  p.spec.mask = &p.mask;
  p.withLse = true;
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, SoftmaxLse) {
  // dLse, with rows of -inf log-sum-exp (causal, Lq > Lk) that must take
  // nothing from it.
  Problem p(2, 2, 2, 7, 6, 3, 3, 5);
  p.spec.pattern = causal();
  p.addSinks();
  p.withLse = true;
  checkGradients(p);
  p.spec.sinks = nullptr;
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, PointwiseRelu2QkNorm) {
  Problem p(1, 4, 2, 5, 9, 4, 2, 6);
  p.spec.normalizer = AttentionSpec::Normalizer::Pointwise;
  p.spec.fn = "relu2";
  p.spec.alpha = 0.5;
  p.spec.qkNormEps = 1e-5;
  p.addGate();
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, PointwiseGeluQkNorm) {
  Problem p(2, 2, 1, 6, 5, 3, 3, 7);
  p.spec.normalizer = AttentionSpec::Normalizer::Pointwise;
  p.spec.fn = "gelu";
  p.spec.alpha = 1.0;
  p.spec.qkNormEps = 1e-3;
  p.spec.pattern = causal();
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, PointwiseSigmoidSaturated) {
  // A finite additive mask of -800 saturates the sigmoid: 1 / (1 + exp(800))
  // is 0 with an infinite partial of exp under a zero adjoint, which must
  // count as 0 (not 0 * inf = NaN).
  Problem p(1, 2, 1, 5, 6, 3, 2, 11);
  p.spec.normalizer = AttentionSpec::Normalizer::Pointwise;
  p.spec.fn = "sigmoid";
  p.spec.alpha = 1.0;
  p.mask = p.random({p.lq, p.lk});
  for (int64_t i = 0; i < p.lq; ++i)
    p.mask.at({i, (2 * i) % p.lk}) = -800;
  p.spec.mask = &p.mask;
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, KernelEluPlusOneCausal) {
  Problem p(2, 4, 2, 6, 6, 4, 3, 8);
  p.spec.normalizer = AttentionSpec::Normalizer::Kernel;
  p.spec.featureMap = "elu_plus_one";
  p.spec.eps = 1e-6;
  p.spec.pattern = causal();
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, KernelFavor) {
  Problem p(1, 2, 1, 5, 7, 3, 2, 9);
  p.spec.normalizer = AttentionSpec::Normalizer::Kernel;
  p.spec.featureMap = "favor";
  p.spec.features = 6;
  p.spec.seed = 11;
  p.spec.eps = 1e-6;
  checkGradients(p);
}

TEST(ScalarReferenceGradTest, VarlenLengths) {
  // Padded rows and keys past the lengths get zero gradients.
  Problem p(2, 2, 1, 6, 8, 4, 2, 10);
  p.queryLengths = Tensor({2});
  p.queryLengths.data = {4, 6};
  p.keyLengths = Tensor({2});
  p.keyLengths.data = {8, 3};
  p.spec.queryLengths = &p.queryLengths;
  p.spec.keyLengths = &p.keyLengths;
  p.spec.pattern = causal();
  p.addBias();
  p.withLse = true;
  checkGradients(p);
  AttentionGrads grads = attentionGrad(p.q, p.k, p.v, p.spec, p.dOut);
  for (int64_t j = 3; j < p.lk; ++j)
    EXPECT_EQ(grads.key.at({1, 0, j, 0}), 0.0);
  for (int64_t i = 4; i < p.lq; ++i)
    EXPECT_EQ(grads.query.at({0, 1, i, 0}), 0.0);
}

} // namespace
