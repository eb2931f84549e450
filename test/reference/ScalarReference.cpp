//===- ScalarReference.cpp - Independent scalar attention reference -------===//

#include "ScalarReference.h"

#include "attn-opt/Support/Random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>

using namespace ref;

Tensor::Tensor(std::vector<int64_t> s) : shape(std::move(s)) {
  data.assign(size(), 0.0);
}

int64_t Tensor::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static int64_t flatIndex(const std::vector<int64_t> &shape,
                         std::initializer_list<int64_t> idx) {
  assert(idx.size() == shape.size());
  int64_t flat = 0, i = 0;
  for (int64_t x : idx) {
    assert(x >= 0 && x < shape[i]);
    flat = flat * shape[i++] + x;
  }
  return flat;
}

double &Tensor::at(std::initializer_list<int64_t> idx) {
  return data[flatIndex(shape, idx)];
}
double Tensor::at(std::initializer_list<int64_t> idx) const {
  return data[flatIndex(shape, idx)];
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

static int64_t floorDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / b));
}

/// a mod b in [0, b), for b > 0 as large as INT64_MAX (no overflow).
static int64_t mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

bool ref::allowed(const Pattern &p, int64_t h, int64_t q, int64_t k, int64_t lq,
                  int64_t lk, int64_t b, const Tensor *segQ,
                  const Tensor *segK) {
  int64_t i = q + lk - lq; // the query's key position
  switch (p.kind) {
  case Pattern::Causal:
    return k <= i;
  case Pattern::Window: // in 128 bits: bounds may be as large as INT64_MAX
    return static_cast<__int128>(i) - p.a <= k &&
           k <= static_cast<__int128>(i) + p.b;
  case Pattern::Dilated:
    return k - i >= -p.a && k - i <= p.b && mod(k - i, p.c) == 0;
  case Pattern::Global:
    return std::count(p.tokens.begin(), p.tokens.end(), i) > 0 ||
           std::count(p.tokens.begin(), p.tokens.end(), k) > 0;
  case Pattern::Strided:
    return mod(i - k, p.a) == 0;
  case Pattern::Fixed:
    return floorDiv(k, p.a) == floorDiv(i, p.a) || mod(k, p.a) >= p.a - p.b;
  case Pattern::Random: {
    int64_t keyBlocks = lk == 0 ? 0 : (lk - 1) / p.b + 1;
    std::vector<int64_t> picked =
        mlir::attn::randomBlocksForRow(p.seed, q / p.b, keyBlocks, p.a);
    return std::count(picked.begin(), picked.end(), k / p.b) > 0;
  }
  case Pattern::Block:
    return p.layout[q / p.a][k / p.a] == '1';
  case Pattern::Segments:
    return segQ->at({b, q}) == segK->at({b, k});
  case Pattern::Union:
    for (const Pattern &c : p.parts)
      if (allowed(c, h, q, k, lq, lk, b, segQ, segK))
        return true;
    return false;
  case Pattern::Intersect:
    for (const Pattern &c : p.parts)
      if (!allowed(c, h, q, k, lq, lk, b, segQ, segK))
        return false;
    return true;
  case Pattern::PerHead:
    return allowed(p.parts[h], h, q, k, lq, lk, b, segQ, segK);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Reverse-mode automatic differentiation
//===----------------------------------------------------------------------===//
//
// attentionGrad differentiates the scalar forward code below itself, so that
// every variant it supports has gradients without a second, hand-written
// description: the forward code is a template over its scalar type, run with
// `double` for attention() and with `ad::Var` for attentionGrad().
//
// An ad::Var is a double together with the node of the tape that recorded
// how it was computed; a Var without a node is a constant (nothing depends
// on it that needs a gradient). A node keeps its edges: (parent node, partial
// derivative of the node with respect to the parent). The reverse sweep walks
// the nodes from the last to the first, adding `adjoint(node) * partial` to
// each parent's adjoint.
//
// Zero adjoints: a node whose adjoint is exactly 0 propagates nothing, even
// along an edge whose partial is infinite or NaN (0 * inf and 0 * NaN count
// as 0 there). Such partials arise on paths that do not matter, e.g. a
// saturated sigmoid y = 1 / x with x = 1 + exp(800) = inf: dy/dx = -y / x
// = -0, so x's adjoint is 0 while the partial of exp(800) is inf. With a
// nonzero adjoint a NaN or infinity propagates, as it should. (The forward code
// itself keeps NaN out of rows with no allowed key: it takes no exp(s - max)
// when the maximum is -inf; their weights are the constant 0.)
//
//===----------------------------------------------------------------------===//

namespace ref::ad {

/// The record of the operations on non-constant Vars, with the adjoints of
/// a reverse sweep.
class Tape {
public:
  /// The tape that Var operations record on (set by a Scope).
  static Tape *&active() {
    static thread_local Tape *tape = nullptr;
    return tape;
  }

  /// Makes a tape the active one for its lifetime.
  class Scope {
  public:
    explicit Scope(Tape &tape) : saved(active()) { active() = &tape; }
    ~Scope() { active() = saved; }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    Tape *saved;
  };

  /// The number of nodes.
  int64_t size() const { return ends.size(); }

  /// Adds an edge to the node being built (the one push() ends).
  void edge(int64_t parent, double partial) {
    parents.push_back(parent);
    partials.push_back(partial);
  }
  /// Ends the node being built (its edges: those added since the previous
  /// node; none for a leaf) and returns it.
  int64_t push() {
    ends.push_back(parents.size());
    return size() - 1;
  }

  /// The adjoint of `node` (0 until something is added).
  double &adjoint(int64_t node) {
    if (static_cast<int64_t>(adjoints.size()) < size())
      adjoints.resize(size(), 0.0);
    return adjoints[node];
  }

  /// Propagates the adjoints of the nodes `from` .. size()-1, the last node
  /// first, to their parents (which may lie below `from`: their adjoints
  /// accumulate for a later sweep).
  void backward(int64_t from) {
    adjoints.resize(size(), 0.0);
    for (int64_t i = size() - 1; i >= from; --i) {
      double a = adjoints[i];
      if (a == 0) // See "Zero adjoints" above.
        continue;
      for (int64_t e = i == 0 ? 0 : ends[i - 1]; e < ends[i]; ++e)
        adjoints[parents[e]] += a * partials[e];
    }
  }

  /// Drops the nodes `n` .. size()-1 (the adjoints of the others stay).
  void truncate(int64_t n) {
    int64_t edges = n == 0 ? 0 : ends[n - 1];
    parents.resize(edges);
    partials.resize(edges);
    ends.resize(n);
    if (static_cast<int64_t>(adjoints.size()) > n)
      adjoints.resize(n);
  }

private:
  std::vector<int64_t> ends; // node i's edges: [ends[i - 1] or 0, ends[i])
  std::vector<int64_t> parents;
  std::vector<double> partials, adjoints;
};

/// A double that records on the active tape how it is computed.
struct Var {
  double value = 0;
  int64_t node = -1; // -1: a constant

  Var() = default;
  /// A constant.
  Var(double value) : value(value) {}
  Var(double value, int64_t node) : value(value), node(node) {}

  /// A new independent variable (a leaf of the active tape).
  static Var leaf(double value) { return {value, Tape::active()->push()}; }
  bool isConstant() const { return node < 0; }
};

/// `value` = f(x) with df/dx = `dx`.
inline Var unary(const Var &x, double value, double dx) {
  if (x.isConstant())
    return value;
  Tape &tape = *Tape::active();
  tape.edge(x.node, dx);
  return {value, tape.push()};
}

/// `value` = f(x, y) with df/dx = `dx`, df/dy = `dy`.
inline Var binary(const Var &x, const Var &y, double value, double dx,
                  double dy) {
  if (x.isConstant() && y.isConstant())
    return value;
  Tape &tape = *Tape::active();
  if (!x.isConstant())
    tape.edge(x.node, dx);
  if (!y.isConstant())
    tape.edge(y.node, dy);
  return {value, tape.push()};
}

/// A node of `value` over several parents, each with its partial
/// derivative (constants skipped).
inline Var nary(const std::vector<std::pair<Var, double>> &parents,
                double value) {
  Tape &tape = *Tape::active();
  bool any = false;
  for (const auto &[x, dx] : parents)
    if (!x.isConstant()) {
      tape.edge(x.node, dx);
      any = true;
    }
  if (!any)
    return Var(value);
  return {value, tape.push()};
}

// Arithmetic. A double operand converts to a constant Var.
inline Var operator+(const Var &x, const Var &y) {
  return binary(x, y, x.value + y.value, 1, 1);
}
inline Var operator-(const Var &x, const Var &y) {
  return binary(x, y, x.value - y.value, 1, -1);
}
inline Var operator*(const Var &x, const Var &y) {
  return binary(x, y, x.value * y.value, y.value, x.value);
}
inline Var operator/(const Var &x, const Var &y) {
  double q = x.value / y.value;
  return binary(x, y, q, 1 / y.value, -q / y.value);
}
inline Var operator-(const Var &x) { return unary(x, -x.value, -1); }
inline Var &operator+=(Var &x, const Var &y) { return x = x + y; }
inline Var &operator-=(Var &x, const Var &y) { return x = x - y; }
inline Var &operator*=(Var &x, const Var &y) { return x = x * y; }
inline Var &operator/=(Var &x, const Var &y) { return x = x / y; }

// Comparisons: on the values.
inline bool operator<(const Var &x, const Var &y) { return x.value < y.value; }
inline bool operator>(const Var &x, const Var &y) { return x.value > y.value; }
inline bool operator<=(const Var &x, const Var &y) {
  return x.value <= y.value;
}
inline bool operator>=(const Var &x, const Var &y) {
  return x.value >= y.value;
}
inline bool operator==(const Var &x, const Var &y) {
  return x.value == y.value;
}
inline bool operator!=(const Var &x, const Var &y) {
  return x.value != y.value;
}

// Elementary functions.
inline Var exp(const Var &x) {
  double e = std::exp(x.value);
  return unary(x, e, e);
}
inline Var log(const Var &x) {
  return unary(x, std::log(x.value), 1 / x.value);
}
inline Var log1p(const Var &x) {
  return unary(x, std::log1p(x.value), 1 / (1 + x.value));
}
inline Var tanh(const Var &x) {
  double t = std::tanh(x.value);
  return unary(x, t, 1 - t * t);
}
inline Var erf(const Var &x) {
  const double twoOverSqrtPi = 1.1283791670955126; // 2 / sqrt(pi)
  return unary(x, std::erf(x.value),
               twoOverSqrtPi * std::exp(-x.value * x.value));
}
inline Var sqrt(const Var &x) {
  double s = std::sqrt(x.value);
  return unary(x, s, 0.5 / s);
}
inline Var pow(const Var &x, double p) {
  return unary(x, std::pow(x.value, p), p * std::pow(x.value, p - 1));
}
inline Var abs(const Var &x) {
  return unary(x, std::abs(x.value), x.value < 0 ? -1 : 1);
}
// The chosen argument itself, as std::max and std::min choose it (the first
// on a tie): the derivative goes to it.
inline Var max(const Var &x, const Var &y) { return x < y ? y : x; }
inline Var min(const Var &x, const Var &y) { return y < x ? y : x; }

/// The dot product of two equally long vectors as one node (two edges per
/// term instead of two nodes), summed in order from 0 like the plain loop.
inline Var dotProduct(const std::vector<Var> &x, const std::vector<Var> &y) {
  Tape *tape = Tape::active();
  double s = 0;
  bool constant = true;
  for (size_t i = 0; i < x.size(); ++i) {
    s += x[i].value * y[i].value;
    if (!x[i].isConstant()) {
      tape->edge(x[i].node, y[i].value);
      constant = false;
    }
    if (!y[i].isConstant()) {
      tape->edge(y[i].node, x[i].value);
      constant = false;
    }
  }
  return constant ? Var(s) : Var(s, tape->push());
}

} // namespace ref::ad

//===----------------------------------------------------------------------===//
// attn.attention
//===----------------------------------------------------------------------===//

[[noreturn]] static void fatal(const char *msg) {
  std::fprintf(stderr, "ScalarReference: %s\n", msg);
  std::abort();
}

/// A row of scalars: doubles, or Vars when differentiating.
template <typename T>
using BasicRow = std::vector<T>;
using Row = BasicRow<double>;

static Row row(const Tensor &t, int64_t b, int64_t h, int64_t i) {
  int64_t d = t.shape[3];
  Row r(d);
  for (int64_t c = 0; c < d; ++c)
    r[c] = t.at({b, h, i, c});
  return r;
}

static double dot(const Row &a, const Row &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

static ad::Var dot(const BasicRow<ad::Var> &a, const BasicRow<ad::Var> &b) {
  return ad::dotProduct(a, b);
}

// The helpers below are templates over the scalar type T (double or
// ad::Var), written once with unqualified calls (std:: for double, ad:: for
// Var by argument-dependent lookup). For double they do exactly what the
// plain code did, operation by operation, so that attention()'s results stay
// the same to the bit.

template <typename T>
static BasicRow<T> layerNorm(BasicRow<T> x, double eps) {
  using std::sqrt;
  T mean = std::accumulate(x.begin(), x.end(), T(0.0)) /
           static_cast<double>(x.size());
  T var = 0;
  for (const T &v : x)
    var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  for (T &v : x)
    v = (v - mean) / sqrt(var + eps);
  return x;
}

template <typename T>
static BasicRow<T> featureMap(BasicRow<T> x, const AttentionSpec &spec,
                              const std::vector<T> &w) {
  using std::exp;
  using std::max;
  if (spec.scale)
    for (T &v : x)
      v *= std::sqrt(*spec.scale);
  if (spec.featureMap == "elu_plus_one") {
    for (T &v : x)
      v = v > 0 ? v + 1 : exp(v);
    return x;
  }
  if (spec.featureMap == "relu") {
    for (T &v : x)
      v = max(v, T(0.0));
    return x;
  }
  // favor
  int64_t m = spec.features, d = x.size();
  T half = 0.5 * dot(x, x);
  BasicRow<T> phi(m);
  for (int64_t r = 0; r < m; ++r) {
    BasicRow<T> wr(w.begin() + r * d, w.begin() + (r + 1) * d);
    T p = dot(wr, x);
    phi[r] = exp(p - half) / std::sqrt(static_cast<double>(m));
  }
  return phi;
}

template <typename T>
static T pointwise(const std::string &fn, const T &s) {
  using std::erf;
  using std::exp;
  using std::log1p;
  using std::max;
  using std::min;
  if (fn == "relu")
    return max(s, T(0.0));
  if (fn == "relu2")
    return max(s, T(0.0)) * max(s, T(0.0));
  if (fn == "gelu")
    return 0.5 * s * (1.0 + erf(s / std::sqrt(2.0)));
  if (fn == "gelu_tanh") {
    using std::tanh;
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * s * (1.0 + tanh(c * (s + 0.044715 * s * s * s)));
  }
  if (fn == "softplus")
    return log1p(exp(s));
  if (fn == "identity")
    return s;
  if (fn == "relu6")
    return min(max(s, T(0.0)), T(6.0));
  if (fn == "sigmoid")
    return 1.0 / (1.0 + exp(-s));
  assert(false && "unknown pointwise function");
  return 0;
}

/// Normalizes one row of scores over the allowed keys into weights.
template <typename T>
static BasicRow<T> normalize(const BasicRow<T> &scores,
                             const std::vector<bool> &ok,
                             const AttentionSpec &spec, int64_t lk,
                             const std::optional<T> &sink, T *lse) {
  using std::exp;
  using std::log;
  using std::max;
  int64_t n = scores.size();
  BasicRow<T> p(n, 0.0);
  switch (spec.normalizer) {
  case AttentionSpec::Normalizer::Softmax: {
    // With no allowed key and no sink, m stays -inf and no exp(s - m) is
    // taken: the weights are the constant 0 (no NaN reaches the tape).
    T m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        m = max(m, scores[j]);
    // The sink joins the denominator (and the maximum it is taken at).
    if (sink)
      m = max(m, *sink);
    T sum = sink ? exp(*sink - m) : T(0.0);
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        sum += (p[j] = exp(scores[j] - m));
    for (T &x : p)
      x = sum > 0 ? x / sum : T(0.0);
    *lse = sum > 0 ? m + log(sum) : T(-std::numeric_limits<double>::infinity());
    return p;
  }
  case AttentionSpec::Normalizer::Pointwise: {
    double factor = std::pow(static_cast<double>(lk), -spec.alpha);
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        p[j] = factor * pointwise(spec.fn, scores[j]);
    return p;
  }
  case AttentionSpec::Normalizer::Kernel: {
    T den = spec.eps;
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        den += scores[j];
    for (int64_t j = 0; j < n; ++j)
      p[j] = ok[j] && den != 0 ? scores[j] / den : T(0.0);
    return p;
  }
  }
  return p;
}

/// One sequence of a batch: batch entry `b`, query rows
/// `[qStart, qStart + lq)`, key rows `[kStart, kStart + lk)`.
struct Sequence {
  int64_t b, qStart, lq, kStart, lk;
};

/// The sequences of the batch: one per batch entry (full or padded
/// lengths) or one per pair of consecutive offsets (packed).
static std::vector<Sequence> sequences(const Tensor &q, const Tensor &k,
                                       const AttentionSpec &spec) {
  std::vector<Sequence> out;
  if (spec.queryOffsets) {
    const Tensor &cq = *spec.queryOffsets, &ck = *spec.keyOffsets;
    for (int64_t s = 0; s + 1 < cq.dim(0); ++s) {
      auto at = [](const Tensor &t, int64_t i) {
        return static_cast<int64_t>(t.data[i]);
      };
      out.push_back({0, at(cq, s), at(cq, s + 1) - at(cq, s), at(ck, s),
                     at(ck, s + 1) - at(ck, s)});
    }
    return out;
  }
  for (int64_t b = 0; b < q.dim(0); ++b) {
    int64_t lq = spec.queryLengths
                     ? static_cast<int64_t>(spec.queryLengths->data[b])
                     : q.dim(2);
    int64_t lk = spec.keyLengths
                     ? static_cast<int64_t>(spec.keyLengths->data[b])
                     : k.dim(2);
    out.push_back({b, 0, lq, 0, lk});
  }
  return out;
}

namespace {
/// The differentiable operands of attn.attention.
enum class Operand {
  Query,
  Key,
  Value,
  Bias,
  Gate,
  Sinks,
  AlibiSlopes,
  Projection,
  Capture
};
} // namespace

/// attn.attention over the scalar type `Eval::Scalar`. The evaluation
/// `eval` supplies the elements of the differentiable operands
/// (`eval.read(operand, tensor, flat index)`) and receives the results:
/// per sequence and query head, the operands of the head (keys, values,
/// sink) are read first, then `eval.beginRows()`; then per query row its
/// operands are read and `eval.endRow(b, h, row, out row, log-sum-exp)`
/// takes its results; then `eval.endHead()`. Nothing computed for one
/// (sequence, head) is used by another.
/// The score region applied to `s` (a double, or a Var recording the
/// region's derivative).
static double applyScoreMod(const AttentionSpec &spec, double s, int64_t b,
                            int64_t h, int64_t i, int64_t j) {
  return spec.scoreMod(s, b, h, i, j).first;
}
template <typename Eval>
static double applyScoreMod(const AttentionSpec &spec, double s, int64_t b,
                            int64_t h, int64_t i, int64_t j, Eval &) {
  return applyScoreMod(spec, s, b, h, i, j);
}
/// (With the captured tensors' gradients: a node over the score and the
/// region's reads, each read a leaf of `eval`.)
template <typename Eval>
static ad::Var applyScoreMod(const AttentionSpec &spec, const ad::Var &s,
                             int64_t b, int64_t h, int64_t i, int64_t j,
                             Eval &eval) {
  auto [value, derivative] = spec.scoreMod(s.value, b, h, i, j);
  if (!spec.scoreModReads)
    return ad::unary(s, value, derivative);
  std::vector<std::pair<ad::Var, double>> parents = {{s, derivative}};
  for (const AttentionSpec::CaptureRead &r :
       spec.scoreModReads(s.value, b, h, i, j))
    parents.push_back(
        {eval.read(Operand::Capture, *spec.captures[r.capture], r.element),
         r.partial});
  return ad::nary(parents, value);
}

template <typename Eval>
static void attentionRows(const Tensor &q, const Tensor &k, const Tensor &v,
                          const AttentionSpec &spec, Eval &eval) {
  using T = typename Eval::Scalar;
  using std::tanh;
  int64_t hq = q.dim(1), d = q.dim(3);
  int64_t hkv = k.dim(1), dv = v.dim(3);
  int64_t group = hq / hkv;
  bool kernel = spec.normalizer == AttentionSpec::Normalizer::Kernel;
  double scale = spec.scale ? *spec.scale : 1.0 / std::sqrt(double(d));
  std::vector<double> w;
  if (kernel && spec.featureMap == "favor") {
    if (spec.projection)
      w = spec.projection->data;
    else
      w = mlir::attn::favorProjection(spec.seed, spec.features, d,
                                      spec.orthogonal);
  }
  // Where key j of batch row b lives: (b, j), or in a paged cache (page
  // pt[b, j / page], row j % page).
  auto kvRow = [&](int64_t b, int64_t j) -> std::pair<int64_t, int64_t> {
    if (!spec.pageTable)
      return {b, j};
    int64_t page = k.dim(2);
    return {static_cast<int64_t>(spec.pageTable->at({b, j / page})), j % page};
  };
  // Row `i` of head `h` of batch entry `b` of `t`, read through `eval`.
  auto readRow = [&](Operand operand, const Tensor &t, int64_t b, int64_t h,
                     int64_t i) {
    BasicRow<T> r(t.shape[3]);
    for (int64_t c = 0; c < t.shape[3]; ++c)
      r[c] = eval.read(operand, t, flatIndex(t.shape, {b, h, i, c}));
    return r;
  };
  for (const Sequence &seq : sequences(q, k, spec))
    for (int64_t h = 0; h < hq; ++h) {
      int64_t b = seq.b, kh = h / group, lq = seq.lq, lk = seq.lk;
      // FAVOR+'s projection: a given one read through `eval` (its
      // gradient), a seeded one constant.
      std::vector<T> wh(w.begin(), w.end());
      if (spec.projection && !w.empty())
        for (size_t i = 0; i < w.size(); ++i)
          wh[i] = eval.read(Operand::Projection, *spec.projection, i);
      // The keys (normalized and mapped) and the values, by column.
      std::vector<BasicRow<T>> keys(lk), valueColumns(dv, BasicRow<T>(lk));
      for (int64_t j = 0; j < lk; ++j) {
        auto [kb, kr] = kvRow(b, seq.kStart + j);
        keys[j] = readRow(Operand::Key, k, kb, kh, kr);
        if (spec.qkNormEps)
          keys[j] = layerNorm(keys[j], *spec.qkNormEps);
        if (kernel)
          keys[j] = featureMap(keys[j], spec, wh);
        BasicRow<T> value = readRow(Operand::Value, v, kb, kh, kr);
        for (int64_t e = 0; e < dv; ++e)
          valueColumns[e][j] = value[e];
      }
      std::optional<T> sink, slope;
      if (spec.sinks)
        sink = eval.read(Operand::Sinks, *spec.sinks, h);
      if (spec.alibiSlopes)
        slope = eval.read(Operand::AlibiSlopes, *spec.alibiSlopes, h);
      eval.beginRows();
      for (int64_t i = 0; i < lq; ++i) {
        int64_t qi = seq.qStart + i;
        BasicRow<T> qRow = readRow(Operand::Query, q, b, h, qi);
        if (spec.qkNormEps)
          qRow = layerNorm(qRow, *spec.qkNormEps);
        if (kernel)
          qRow = featureMap(qRow, spec, wh);
        BasicRow<T> scores(lk);
        std::vector<bool> ok(lk, true);
        for (int64_t j = 0; j < lk; ++j) {
          T s = dot(qRow, keys[j]);
          if (!kernel) {
            s *= scale;
            if (spec.bias) {
              const Tensor &bias = *spec.bias;
              int64_t bb = bias.dim(0) == 1 ? 0 : b;
              int64_t bh = bias.dim(1) == 1 ? 0 : h;
              s += eval.read(Operand::Bias, bias,
                             flatIndex(bias.shape, {bb, bh, i, j}));
            }
            if (spec.alibiSlopes)
              s -= *slope * std::abs(double(i + lk - lq - j));
            if (spec.softcap)
              s = *spec.softcap * tanh(s / *spec.softcap);
            if (spec.scoreMod)
              s = applyScoreMod(spec, s, b, h, i, j, eval);
          }
          scores[j] = s;
          if (spec.pattern)
            ok[j] = allowed(*spec.pattern, h, i, j, lq, lk, b, spec.segQ,
                            spec.segK);
          if (spec.maskMod)
            ok[j] = ok[j] && spec.maskMod(b, h, i, j);
          if (spec.mask) {
            const Tensor &m = *spec.mask;
            double mv = m.shape.size() == 2
                            ? m.at({i, j})
                            : m.at({m.dim(0) == 1 ? 0 : b,
                                    m.dim(1) == 1 ? 0 : h, i, j});
            if (spec.maskIsBool) {
              ok[j] = ok[j] && mv != 0;
            } else {
              scores[j] += mv;
              ok[j] = ok[j] && mv > -std::numeric_limits<double>::infinity();
            }
          }
        }
        // The log-sum-exp stays -inf but for softmax.
        T rowLse = -std::numeric_limits<double>::infinity();
        BasicRow<T> p = normalize(scores, ok, spec, lk, sink, &rowLse);
        BasicRow<T> out(dv);
        for (int64_t e = 0; e < dv; ++e) {
          out[e] = dot(p, valueColumns[e]);
          if (spec.gate)
            out[e] *= eval.read(Operand::Gate, *spec.gate,
                                flatIndex(spec.gate->shape, {b, h, qi, e}));
        }
        eval.endRow(b, h, qi, out, rowLse);
      }
      eval.endHead();
    }
}

namespace {
/// The plain evaluation of attn.attention: reads the operands, writes the
/// results.
struct Evaluation {
  using Scalar = double;
  Tensor out, lse;

  Evaluation(const Tensor &q, const Tensor &v)
      : out({q.dim(0), q.dim(1), q.dim(2), v.dim(3)}),
        lse({q.dim(0), q.dim(1), q.dim(2)}) {
    // Rows no sequence covers stay zero (the log-sum-exp -inf).
    for (double &x : lse.data)
      x = -std::numeric_limits<double>::infinity();
  }
  double read(Operand, const Tensor &t, int64_t i) { return t.data[i]; }
  void beginRows() {}
  void endRow(int64_t b, int64_t h, int64_t i, const Row &o, double rowLse) {
    for (size_t e = 0; e < o.size(); ++e)
      out.at({b, h, i, static_cast<int64_t>(e)}) = o[e];
    lse.at({b, h, i}) = rowLse;
  }
  void endHead() {}
};

/// The evaluation of attn.attention with Vars, for its gradients.
///
/// Every element read is a new leaf of the tape, remembered with where its
/// gradient goes. The tape of one (sequence, head) holds the head's keys,
/// values and sink, then the nodes of one query row at a time: at the end
/// of a row the cotangents of its outputs seed their adjoints and a reverse
/// sweep over the row's nodes adds their gradients to the row's leaves and
/// their adjoints to the head's nodes; the row's nodes are then dropped, so
/// the tape stays as small as one head's keys plus one row. At the end of
/// the head a sweep over the rest finishes the head's leaves.
class GradientEvaluation {
public:
  using Scalar = ad::Var;

  GradientEvaluation(const Tensor &q, const Tensor &k, const Tensor &v,
                     const AttentionSpec &spec, const Tensor &dOut,
                     const Tensor *dLse)
      : dOut(dOut), dLse(dLse) {
    grads.query = Tensor(q.shape);
    grads.key = Tensor(k.shape);
    grads.value = Tensor(v.shape);
    if (spec.bias)
      grads.bias = Tensor(spec.bias->shape);
    if (spec.gate)
      grads.gate = Tensor(spec.gate->shape);
    if (spec.sinks)
      grads.sinks = Tensor(spec.sinks->shape);
    if (spec.alibiSlopes)
      grads.alibiSlopes = Tensor(spec.alibiSlopes->shape);
    if (spec.projection)
      grads.projection = Tensor(spec.projection->shape);
    if (spec.scoreModReads)
      for (const Tensor *c : spec.captures) {
        captureOf[c] = grads.captures.size();
        grads.captures.push_back(Tensor(c->shape));
      }
  }
  GradientEvaluation(const GradientEvaluation &) = delete;
  GradientEvaluation &operator=(const GradientEvaluation &) = delete;

  ad::Var read(Operand operand, const Tensor &t, int64_t i) {
    ad::Var x = ad::Var::leaf(t.data[i]);
    leaves.push_back({x.node, &gradient(operand, t), i});
    return x;
  }
  void beginRows() { rowStart = tape.size(); }
  void endRow(int64_t b, int64_t h, int64_t i, const BasicRow<ad::Var> &o,
              const ad::Var &rowLse) {
    for (size_t e = 0; e < o.size(); ++e)
      if (!o[e].isConstant())
        tape.adjoint(o[e].node) += dOut.at({b, h, i, static_cast<int64_t>(e)});
    // A row with no allowed key has the constant log-sum-exp -inf: dLse
    // contributes nothing there.
    if (dLse && !rowLse.isConstant() &&
        rowLse.value > -std::numeric_limits<double>::infinity())
      tape.adjoint(rowLse.node) += dLse->at({b, h, i});
    sweep(rowStart);
  }
  void endHead() { sweep(0); }

  AttentionGrads take() { return std::move(grads); }

private:
  /// A leaf of the tape: its node and the element of the gradient it adds
  /// to.
  struct Leaf {
    int64_t node;
    Tensor *gradient;
    int64_t index;
  };

  Tensor &gradient(Operand operand, const Tensor &t) {
    switch (operand) {
    case Operand::Query:
      return grads.query;
    case Operand::Key:
      return grads.key;
    case Operand::Value:
      return grads.value;
    case Operand::Bias:
      return grads.bias;
    case Operand::Gate:
      return grads.gate;
    case Operand::Sinks:
      return grads.sinks;
    case Operand::AlibiSlopes:
      return grads.alibiSlopes;
    case Operand::Projection:
      return grads.projection;
    case Operand::Capture:
      return grads.captures[captureOf.at(&t)];
    }
    fatal("unknown operand");
  }

  /// Sweeps the nodes from `from` on, adds the adjoints of their leaves to
  /// the gradients and drops them.
  void sweep(int64_t from) {
    tape.backward(from);
    while (!leaves.empty() && leaves.back().node >= from) {
      const Leaf &leaf = leaves.back();
      leaf.gradient->data[leaf.index] += tape.adjoint(leaf.node);
      leaves.pop_back();
    }
    tape.truncate(from);
  }

  const Tensor &dOut;
  const Tensor *dLse;
  AttentionGrads grads;
  ad::Tape tape;
  ad::Tape::Scope scope{tape};
  std::vector<Leaf> leaves; // in the order of their nodes
  std::map<const Tensor *, size_t> captureOf;
  int64_t rowStart = 0;
};
} // namespace

Tensor ref::attention(const Tensor &q, const Tensor &k, const Tensor &v,
                      const AttentionSpec &spec, Tensor *lse) {
  Evaluation eval(q, v);
  attentionRows(q, k, v, spec, eval);
  if (lse)
    *lse = std::move(eval.lse);
  return std::move(eval.out);
}

AttentionGrads ref::attentionGrad(const Tensor &q, const Tensor &k,
                                  const Tensor &v, const AttentionSpec &spec,
                                  const Tensor &dOut, const Tensor *dLse) {
  if (spec.pageTable)
    fatal("attentionGrad: a paged KV cache is not differentiated");
  if (dOut.shape !=
      std::vector<int64_t>{q.dim(0), q.dim(1), q.dim(2), v.dim(3)})
    fatal("attentionGrad: dOut must have the output's shape B x Hq x Lq x Dv");
  if (dLse && dLse->shape != std::vector<int64_t>{q.dim(0), q.dim(1), q.dim(2)})
    fatal("attentionGrad: dLse must have the log-sum-exp's shape B x Hq x Lq");
  GradientEvaluation eval(q, k, v, spec, dOut, dLse);
  attentionRows(q, k, v, spec, eval);
  return eval.take();
}

//===----------------------------------------------------------------------===//
// attn.lowrank_attention
//===----------------------------------------------------------------------===//

Tensor ref::lowrankAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                             const Tensor &e, const Tensor &f,
                             std::optional<double> scale) {
  int64_t batch = k.dim(0), hkv = k.dim(1), lk = k.dim(2), d = k.dim(3);
  int64_t dv = v.dim(3), rows = e.dim(0);
  Tensor kp({batch, hkv, rows, d}), vp({batch, hkv, rows, dv});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hkv; ++h)
      for (int64_t p = 0; p < rows; ++p) {
        for (int64_t c = 0; c < d; ++c) {
          double s = 0;
          for (int64_t j = 0; j < lk; ++j)
            s += e.at({p, j}) * k.at({b, h, j, c});
          kp.at({b, h, p, c}) = s;
        }
        for (int64_t c = 0; c < dv; ++c) {
          double s = 0;
          for (int64_t j = 0; j < lk; ++j)
            s += f.at({p, j}) * v.at({b, h, j, c});
          vp.at({b, h, p, c}) = s;
        }
      }
  AttentionSpec spec;
  spec.normalizer = AttentionSpec::Normalizer::Softmax;
  spec.scale = scale;
  return attention(q, kp, vp, spec);
}

//===----------------------------------------------------------------------===//
// attn.lsh_attention
//===----------------------------------------------------------------------===//

Tensor ref::lshAttention(const Tensor &qk, const Tensor &v,
                         const LshSpec &spec) {
  int64_t batch = qk.dim(0), heads = qk.dim(1), len = qk.dim(2), d = qk.dim(3),
          dv = v.dim(3);
  double scale = spec.scale ? *spec.scale : 1.0 / std::sqrt(double(d));
  int64_t numChunks = len / spec.chunk, half = spec.buckets / 2;
  Tensor out({batch, heads, len, dv});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<Row> x(len), keys(len);
      for (int64_t i = 0; i < len; ++i) {
        x[i] = row(qk, b, h, i);
        double n = std::sqrt(dot(x[i], x[i]) + 1e-6);
        keys[i] = x[i];
        for (double &c : keys[i])
          c /= n;
      }
      std::vector<Row> outs(spec.hashes, Row());
      std::vector<std::vector<Row>> roundOut(spec.hashes,
                                             std::vector<Row>(len));
      std::vector<Row> roundLse(spec.hashes, Row(len));
      for (int64_t r = 0; r < spec.hashes; ++r) {
        // The rotation is used in f32, as every lowering uses it.
        std::vector<double> rot =
            mlir::attn::lshRotation(spec.seed, r, d, spec.buckets);
        for (double &value : rot)
          value = static_cast<float>(value);
        std::vector<int64_t> bucket(len);
        for (int64_t i = 0; i < len; ++i) {
          double best = -1;
          for (int64_t c = 0; c < spec.buckets; ++c) {
            double p = 0;
            for (int64_t t = 0; t < d; ++t)
              p += x[i][t] * rot[t * half + (c % half)];
            if (c >= half)
              p = -p;
            if (c == 0 || p > best) {
              best = p;
              bucket[i] = c;
            }
          }
        }
        std::vector<int64_t> order(len);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
          return bucket[a] < bucket[c];
        });
        for (int64_t pos = 0; pos < len; ++pos) {
          int64_t i = order[pos], c = pos / spec.chunk;
          std::vector<int64_t> cand;
          std::vector<int64_t> chunks = {c};
          if (numChunks > 1)
            chunks.insert(chunks.begin(), (c + numChunks - 1) % numChunks);
          for (int64_t cc : chunks)
            for (int64_t t = 0; t < spec.chunk; ++t)
              cand.push_back(order[cc * spec.chunk + t]);
          std::vector<int64_t> keysSeen;
          for (int64_t j : cand)
            if (j != i && (!spec.causal || j <= i))
              keysSeen.push_back(j);
          if (keysSeen.empty())
            keysSeen.push_back(i);
          Row s;
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t j : keysSeen) {
            s.push_back(scale * dot(x[i], keys[j]));
            m = std::max(m, s.back());
          }
          double sum = 0;
          for (double &e : s)
            sum += (e = std::exp(e - m));
          Row o(dv, 0.0);
          for (size_t t = 0; t < keysSeen.size(); ++t)
            for (int64_t e = 0; e < dv; ++e)
              o[e] += s[t] / sum * v.at({b, h, keysSeen[t], e});
          roundOut[r][i] = o;
          roundLse[r][i] = m + std::log(sum);
        }
      }
      for (int64_t i = 0; i < len; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t r = 0; r < spec.hashes; ++r)
          m = std::max(m, roundLse[r][i]);
        double z = 0;
        for (int64_t r = 0; r < spec.hashes; ++r)
          z += std::exp(roundLse[r][i] - m);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t r = 0; r < spec.hashes; ++r)
            acc += std::exp(roundLse[r][i] - m) / z * roundOut[r][i][e];
          out.at({b, h, i, e}) = acc;
        }
      }
    }
  return out;
}

//===----------------------------------------------------------------------===//
// attn.relative_attention
//===----------------------------------------------------------------------===//

Tensor ref::relativeAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                              const Tensor &posEmb, const Tensor &u,
                              const Tensor &vb, const Tensor *memK,
                              const Tensor *memV, std::optional<double> scale) {
  int64_t batch = q.dim(0), heads = q.dim(1), len = q.dim(2), d = q.dim(3),
          dv = v.dim(3);
  int64_t mem = memK ? memK->dim(2) : 0, lk = mem + len;
  double s = scale ? *scale : 1.0 / std::sqrt(double(d));
  Tensor out({batch, heads, len, dv});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < len; ++i) {
        Row scores;
        std::vector<int64_t> seen;
        for (int64_t j = 0; j <= mem + i; ++j) {
          double content = 0, position = 0;
          for (int64_t c = 0; c < d; ++c) {
            double key =
                j < mem ? memK->at({b, h, j, c}) : k.at({b, h, j - mem, c});
            content += (q.at({b, h, i, c}) + u.at({h, c})) * key;
            position += (q.at({b, h, i, c}) + vb.at({h, c})) *
                        posEmb.at({h, mem + i - j, c});
          }
          scores.push_back(s * (content + position));
          seen.push_back(j);
        }
        double m = *std::max_element(scores.begin(), scores.end());
        double sum = 0;
        for (double &e : scores)
          sum += (e = std::exp(e - m));
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (size_t t = 0; t < seen.size(); ++t) {
            int64_t j = seen[t];
            double val =
                j < mem ? memV->at({b, h, j, e}) : v.at({b, h, j - mem, e});
            acc += scores[t] / sum * val;
          }
          out.at({b, h, i, e}) = acc;
        }
      }
  (void)lk;
  return out;
}
