"""A NumPy (float64) reference of attn.attention (docs/Semantics.md) for the
Python package's tests: masks from the pattern definitions, the
normalizers, grouped heads, bottom-right alignment."""

import math

import numpy as np


# Masks: functions (h, iq, i, j) -> bool arrays over broadcast index grids;
# iq is the query index, i its aligned key position, j the key position.
def causal():
    return lambda h, iq, i, j, seg: j <= i


def window(before, after):
    return lambda h, iq, i, j, seg: (j >= i - before) & (j <= i + after)


def dilated(before, after, dilation):
    return lambda h, iq, i, j, seg: ((j - i) % dilation == 0) & (
        j - i >= -before) & (j - i <= after)


def global_tokens(tokens):
    return lambda h, iq, i, j, seg: np.isin(i, tokens) | np.isin(j, tokens)


def strided(stride):
    return lambda h, iq, i, j, seg: (i - j) % stride == 0


def fixed(stride, c):
    return lambda h, iq, i, j, seg: (j // stride == i // stride) | (
        j % stride >= stride - c)


def block(size, layout):
    table = np.array([[ch == "1" for ch in row] for row in layout])
    return lambda h, iq, i, j, seg: table[iq // size, j // size]


def segments():
    return lambda h, iq, i, j, seg: seg


def union(*ps):
    return lambda *a: np.logical_or.reduce([p(*a) for p in ps])


def intersect(*ps):
    return lambda *a: np.logical_and.reduce([p(*a) for p in ps])


def per_head(ps):
    def f(h, iq, i, j, seg):
        return np.stack([np.broadcast_to(ps[hh](hh, iq, i, j, seg),
                                         np.broadcast(iq, j).shape)
                         for hh in range(len(ps))])[h]
    return f


def allowed(pattern, b, hq, lq, lk, seg_q=None, seg_k=None):
    """[B, Hq, Lq, Lk] bool."""
    if pattern is None:
        return np.ones((b, hq, lq, lk), bool)
    iq = np.arange(lq)[:, None]
    i = iq + lk - lq
    j = np.arange(lk)[None, :]
    out = np.zeros((b, hq, lq, lk), bool)
    for bb in range(b):
        seg = None
        if seg_q is not None:
            seg = seg_q[bb][:, None] == seg_k[bb][None, :]
        for h in range(hq):
            out[bb, h] = np.broadcast_to(pattern(h, iq, i, j, seg), (lq, lk))
    return out


_POINTWISE = {
    "relu": lambda s: np.maximum(s, 0),
    "relu2": lambda s: np.maximum(s, 0) ** 2,
    "gelu": lambda s: 0.5 * s * (1 + np.vectorize(math.erf)(s / math.sqrt(2))),
    "gelu_tanh": lambda s: 0.5 * s * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (s + 0.044715 * s ** 3))),
    "softplus": lambda s: np.log1p(np.exp(s)),
    "identity": lambda s: s,
    "relu6": lambda s: np.minimum(np.maximum(s, 0), 6),
    "sigmoid": lambda s: 1 / (1 + np.exp(-s)),
}


def attention(q, k, v, normalizer="softmax", pattern=None, scale=None,
              alpha=1.0, bias=None, gate=None, seg_q=None, seg_k=None,
              qk_norm_eps=None, projection=None, kernel_eps=0.0):
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    b, hq, lq, d = q.shape
    hkv, lk = k.shape[1], k.shape[2]
    group = hq // hkv
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    if qk_norm_eps is not None:
        def ln(x):
            m = x.mean(-1, keepdims=True)
            var = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) / np.sqrt(var + qk_norm_eps)
        q, k = ln(q), ln(k)
    mask = allowed(pattern, b, hq, lq, lk, seg_q, seg_k)
    if normalizer in ("elu_plus_one", "linear_relu", "favor"):
        if scale is not None:
            q, k = q * math.sqrt(scale), k * math.sqrt(scale)
        if normalizer == "elu_plus_one":
            phi = lambda x: np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
        elif normalizer == "linear_relu":
            phi = lambda x: np.maximum(x, 0)
        else:
            w = np.asarray(projection, np.float64)
            m = w.shape[0]
            phi = lambda x: np.exp(x @ w.T - (x * x).sum(-1, keepdims=True)
                                   / 2) / math.sqrt(m)
        p = np.einsum("bhif,bhjf->bhij", phi(q), phi(k)) * mask
        den = p.sum(-1, keepdims=True) + kernel_eps
        p = np.where(den != 0, p / np.where(den != 0, den, 1), 0)
    else:
        s = np.einsum("bhid,bhjd->bhij", q, k) * (
            1 / math.sqrt(d) if scale is None else scale)
        if bias is not None:
            s = s + np.asarray(bias, np.float64)
        if normalizer == "softmax":
            s = np.where(mask, s, -np.inf)
            m = s.max(-1, keepdims=True)
            e = np.where(mask, np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
            den = e.sum(-1, keepdims=True)
            p = np.where(den > 0, e / np.where(den > 0, den, 1), 0)
        else:
            p = np.where(mask, lk ** (-alpha) * _POINTWISE[normalizer](s), 0)
    o = np.einsum("bhij,bhjd->bhid", p, v)
    if gate is not None:
        o = o * np.asarray(gate, np.float64)
    return o
