//===- ScalarReference.cpp - Independent scalar attention reference -------===//

#include "ScalarReference.h"

#include "attn-opt/Support/Random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
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
// attn.attention
//===----------------------------------------------------------------------===//

using Row = std::vector<double>;

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

static Row layerNorm(Row x, double eps) {
  double mean = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
  double var = 0;
  for (double v : x)
    var += (v - mean) * (v - mean);
  var /= x.size();
  for (double &v : x)
    v = (v - mean) / std::sqrt(var + eps);
  return x;
}

static Row featureMap(Row x, const AttentionSpec &spec,
                      const std::vector<double> &w) {
  if (spec.scale)
    for (double &v : x)
      v *= std::sqrt(*spec.scale);
  if (spec.featureMap == "elu_plus_one") {
    for (double &v : x)
      v = v > 0 ? v + 1 : std::exp(v);
    return x;
  }
  if (spec.featureMap == "relu") {
    for (double &v : x)
      v = std::max(v, 0.0);
    return x;
  }
  // favor
  int64_t m = spec.features, d = x.size();
  double half = 0.5 * dot(x, x);
  Row phi(m);
  for (int64_t r = 0; r < m; ++r) {
    double p = 0;
    for (int64_t c = 0; c < d; ++c)
      p += w[r * d + c] * x[c];
    phi[r] = std::exp(p - half) / std::sqrt(static_cast<double>(m));
  }
  return phi;
}

static double pointwise(const std::string &fn, double s) {
  if (fn == "relu")
    return std::max(s, 0.0);
  if (fn == "relu2")
    return std::max(s, 0.0) * std::max(s, 0.0);
  if (fn == "gelu")
    return 0.5 * s * (1.0 + std::erf(s / std::sqrt(2.0)));
  if (fn == "softplus")
    return std::log1p(std::exp(s));
  if (fn == "identity")
    return s;
  if (fn == "relu6")
    return std::min(std::max(s, 0.0), 6.0);
  if (fn == "sigmoid")
    return 1.0 / (1.0 + std::exp(-s));
  assert(false && "unknown pointwise function");
  return 0;
}

/// Normalizes one row of scores over the allowed keys into weights.
static Row normalize(const Row &scores, const std::vector<bool> &ok,
                     const AttentionSpec &spec, int64_t lk,
                     std::optional<double> sink, double *lse) {
  int64_t n = scores.size();
  Row p(n, 0.0);
  switch (spec.normalizer) {
  case AttentionSpec::Normalizer::Softmax: {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        m = std::max(m, scores[j]);
    // The sink joins the denominator (and the maximum it is taken at).
    if (sink)
      m = std::max(m, *sink);
    double sum = sink ? std::exp(*sink - m) : 0.0;
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        sum += (p[j] = std::exp(scores[j] - m));
    for (double &x : p)
      x = sum > 0 ? x / sum : 0.0;
    *lse =
        sum > 0 ? m + std::log(sum) : -std::numeric_limits<double>::infinity();
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
    double den = spec.eps;
    for (int64_t j = 0; j < n; ++j)
      if (ok[j])
        den += scores[j];
    for (int64_t j = 0; j < n; ++j)
      p[j] = ok[j] && den != 0 ? scores[j] / den : 0.0;
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

Tensor ref::attention(const Tensor &q, const Tensor &k, const Tensor &v,
                      const AttentionSpec &spec, Tensor *lse) {
  int64_t batch = q.dim(0), hq = q.dim(1), lqAll = q.dim(2), d = q.dim(3);
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
  // Rows no sequence covers stay zero.
  Tensor out({batch, hq, lqAll, dv});
  Tensor rowLse({batch, hq, lqAll});
  for (double &x : rowLse.data)
    x = -std::numeric_limits<double>::infinity();
  for (const Sequence &seq : sequences(q, k, spec))
    for (int64_t h = 0; h < hq; ++h) {
      int64_t b = seq.b, kh = h / group, lq = seq.lq, lk = seq.lk;
      std::vector<Row> keys(lk);
      for (int64_t j = 0; j < lk; ++j) {
        auto [kb, kr] = kvRow(b, seq.kStart + j);
        keys[j] = row(k, kb, kh, kr);
        if (spec.qkNormEps)
          keys[j] = layerNorm(keys[j], *spec.qkNormEps);
        if (kernel)
          keys[j] = featureMap(keys[j], spec, w);
      }
      for (int64_t i = 0; i < lq; ++i) {
        int64_t qi = seq.qStart + i;
        Row qRow = row(q, b, h, qi);
        if (spec.qkNormEps)
          qRow = layerNorm(qRow, *spec.qkNormEps);
        if (kernel)
          qRow = featureMap(qRow, spec, w);
        Row scores(lk);
        std::vector<bool> ok(lk, true);
        for (int64_t j = 0; j < lk; ++j) {
          double s = dot(qRow, keys[j]);
          if (!kernel) {
            s *= scale;
            if (spec.bias) {
              int64_t bb = spec.bias->dim(0) == 1 ? 0 : b;
              int64_t bh = spec.bias->dim(1) == 1 ? 0 : h;
              s += spec.bias->at({bb, bh, i, j});
            }
            if (spec.alibiSlopes)
              s -=
                  spec.alibiSlopes->data[h] * std::abs(double(i + lk - lq - j));
            if (spec.softcap)
              s = *spec.softcap * std::tanh(s / *spec.softcap);
          }
          scores[j] = s;
          if (spec.pattern)
            ok[j] = allowed(*spec.pattern, h, i, j, lq, lk, b, spec.segQ,
                            spec.segK);
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
        std::optional<double> sink;
        if (spec.sinks)
          sink = spec.sinks->data[h];
        Row p = normalize(scores, ok, spec, lk, sink, &rowLse.at({b, h, qi}));
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < lk; ++j)
            acc += p[j] * v.at({kvRow(b, seq.kStart + j).first, kh,
                                kvRow(b, seq.kStart + j).second, e});
          if (spec.gate)
            acc *= spec.gate->at({b, h, qi, e});
          out.at({b, h, qi, e}) = acc;
        }
      }
    }
  if (lse)
    *lse = std::move(rowLse);
  return out;
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
