# attn_opt.attention(q, k, v, score_mod=..., mask_mod=...): FlexAttention's
# mods traced into attn.attention's regions, against an independent dense
# PyTorch reference (scores materialized, the mods written as tensor
# expressions over index grids): prefix-LM, documents from captured ids,
# a relative bias table, ALiBi, soft-capping, head- and batch-dependent
# masks, torch.where scores; GQA, two lengths from one compilation, bf16,
# NumPy inputs with attn_opt.capture; gradients against PyTorch autograd;
# one compilation per traced IR; clear errors for what is not traced.
# REQUIRES: python-torch
# UNSUPPORTED: asan
# RUN: rm -rf %t && env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir %attn_py3 %s | FileCheck %s

import random

import numpy as np
import torch

import attn_opt
import attn_opt._attention as attention_module

torch.manual_seed(0)
B, HQ, HKV, D = 2, 4, 2, 16


def inputs(lq, lk, dtype=torch.float32, grad=False):
    def t(h, n):
        return torch.randn(B, h, n, D).to(dtype).requires_grad_(grad)
    return t(HQ, lq), t(HKV, lk), t(HKV, lk)


def dense(q, k, v, score=None, mask=None):
    """Softmax attention with scores materialized; `score(s, b, h, i, j)`
    and `mask(b, h, i, j)` get broadcastable index grids."""
    lq, lk = q.shape[2], k.shape[2]
    g = HQ // HKV
    kk = k.float().repeat_interleave(g, 1)
    vv = v.float().repeat_interleave(g, 1)
    s = q.float() @ kk.transpose(-1, -2) / D ** 0.5
    b = torch.arange(B)[:, None, None, None]
    h = torch.arange(HQ)[None, :, None, None]
    i = torch.arange(lq)[None, None, :, None]
    j = torch.arange(lk)[None, None, None, :]
    if score is not None:
        s = score(s, b, h, i, j)
    if mask is not None:
        m = mask(b, h, i, j).expand(s.shape)
        s = s.masked_fill(~m, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ vv


def check(name, q, k, v, tol=1e-5, score=None, mask=None, ref_score=None,
          ref_mask=None):
    out = attn_opt.attention(q, k, v, score_mod=score, mask_mod=mask)
    ref = dense(q, k, v, ref_score, ref_mask)
    err = (out.float() - ref).abs().max().item()
    print(f"{name}: {'ok' if err <= tol else 'FAILED'} (max error {err:.1e})")


q, k, v = inputs(77, 77)

# Prefix-LM: the first 16 keys for everyone, causal after.
check("prefix_lm", q, k, v,
      mask=lambda b, h, qi, ki: (ki < 16) | (qi >= ki),
      ref_mask=lambda b, h, i, j: (j < 16) | (i >= j))
# CHECK: prefix_lm: ok

# Documents from captured ids (sorted, uneven), causal within each.
doc = torch.sort(torch.randint(0, 5, (B, 77)), dim=1).values
check("documents", q, k, v,
      mask=lambda b, h, qi, ki: (doc[b, qi] == doc[b, ki]) & (qi >= ki),
      ref_mask=lambda b, h, i, j: (doc[b.squeeze(-1), i.squeeze(-1)]
                                   [..., None] ==
                                   doc[b.squeeze(-1), j.squeeze(-2)]
                                   [..., None, :]) & (i >= j))
# CHECK: documents: ok

# A relative-position bias table per head.
table = torch.randn(HQ, 2 * 77 - 1)
check("relative_bias", q, k, v,
      score=lambda s, b, h, qi, ki: s + table[h, qi - ki + 76],
      ref_score=lambda s, b, h, i, j: s + table[h, i - j + 76])
# CHECK: relative_bias: ok

# ALiBi from captured slopes, causal.
slopes = torch.tensor([2.0 ** -(x + 1) for x in range(HQ)])
check("alibi", q, k, v,
      score=lambda s, b, h, qi, ki: s - slopes[h] * abs(qi - ki),
      mask=lambda b, h, qi, ki: qi >= ki,
      ref_score=lambda s, b, h, i, j: s - slopes[h] * (i - j).abs(),
      ref_mask=lambda b, h, i, j: i >= j)
# CHECK: alibi: ok

# Soft-capping (Gemma 2) with torch.tanh.
check("softcap", q, k, v,
      score=lambda s, b, h, qi, ki: 2.0 * torch.tanh(s / 2.0),
      ref_score=lambda s, b, h, i, j: 2.0 * torch.tanh(s / 2.0))
# CHECK: softcap: ok

# Head-dependent: even heads causal, odd heads a window of 8.
check("per_head", q, k, v,
      mask=lambda b, h, qi, ki: torch.where(h % 2 == 0, qi >= ki,
                                            abs(qi - ki) <= 8),
      ref_mask=lambda b, h, i, j: torch.where(h % 2 == 0, i >= j,
                                              (i - j).abs() <= 8))
# CHECK: per_head: ok

# Batch-dependent: per-sequence key lengths from a captured tensor.
lengths = torch.tensor([50, 77], dtype=torch.int32)
check("batch_lengths", q, k, v,
      mask=lambda b, h, qi, ki: ki < lengths[b],
      ref_mask=lambda b, h, i, j: j < lengths[b])
# CHECK: batch_lengths: ok

# torch.where on the score: halve it past a distance of 8.
check("where_score", q, k, v,
      score=lambda s, b, h, qi, ki: torch.where(qi - ki > 8, s * 0.5, s),
      ref_score=lambda s, b, h, i, j: torch.where(i - j > 8, s * 0.5, s))
# CHECK: where_score: ok

# One compilation serves every length (dynamic batch and lengths): the
# prefix-LM mod again, at Lq = 5, Lk = 130 (decode-like chunk).
before = len(attention_module._functions)
q2, k2, v2 = inputs(5, 130)
check("prefix_lm_other_length", q2, k2, v2,
      mask=lambda b, h, qi, ki: (ki < 16) | (qi >= ki),
      ref_mask=lambda b, h, i, j: (j < 16) | (i >= j))
print(f"new compilations: {len(attention_module._functions) - before}")
# CHECK: prefix_lm_other_length: ok
# CHECK: new compilations: 0

# bf16.
qb, kb, vb = inputs(77, 77, torch.bfloat16)
check("documents_bf16", qb, kb, vb, tol=3e-2,
      mask=lambda b, h, qi, ki: (doc[b, qi] == doc[b, ki]) & (qi >= ki),
      ref_mask=lambda b, h, i, j: (doc[b.squeeze(-1), i.squeeze(-1)]
                                   [..., None] ==
                                   doc[b.squeeze(-1), j.squeeze(-2)]
                                   [..., None, :]) & (i >= j))
# CHECK: documents_bf16: ok

# NumPy inputs and a captured NumPy array (attn_opt.capture).
ids = doc.numpy().astype(np.int64)
cap = attn_opt.capture(ids)
out = attn_opt.attention(q.numpy(), k.numpy(), v.numpy(),
                         mask_mod=lambda b, h, qi, ki: cap[b, qi] == cap[b, ki])
ref = dense(q, k, v, mask=lambda b, h, i, j: (
    doc[b.squeeze(-1), i.squeeze(-1)][..., None] ==
    doc[b.squeeze(-1), j.squeeze(-2)][..., None, :]))
print("numpy_capture:", "ok" if np.abs(out - ref.numpy()).max() < 1e-5
      else "FAILED")
# CHECK: numpy_capture: ok

# Gradients through the score and mask regions, against PyTorch autograd.
qg, kg, vg = inputs(45, 45, grad=True)
tab = torch.randn(HQ, 89)
attn_opt.attention(
    qg, kg, vg, score_mod=lambda s, b, h, qi, ki: 3.0 * torch.tanh(
        (s + tab[h, qi - ki + 44]) / 3.0),
    mask_mod=lambda b, h, qi, ki: (ki < 4) | (qi >= ki)).sum().backward()
ours = [x.grad.clone() for x in (qg, kg, vg)]
for x in (qg, kg, vg):
    x.grad = None
dense(qg, kg, vg,
      score=lambda s, b, h, i, j: 3.0 * torch.tanh((s + tab[h, i - j + 44])
                                                    / 3.0),
      mask=lambda b, h, i, j: (j < 4) | (i >= j)).sum().backward()
errs = [(a - x.grad).abs().max().item() for a, x in zip(ours, (qg, kg, vg))]
print("gradients:", "ok" if max(errs) < 1e-5 else f"FAILED {errs}")
# CHECK: gradients: ok

# The same traced IR with other captured data: one compilation.
before = len(attention_module._functions)
doc2 = torch.sort(torch.randint(0, 3, (B, 77)), dim=1).values
check("documents_new_ids", q, k, v,
      mask=lambda b, h, qi, ki: (doc2[b, qi] == doc2[b, ki]) & (qi >= ki),
      ref_mask=lambda b, h, i, j: (doc2[b.squeeze(-1), i.squeeze(-1)]
                                   [..., None] ==
                                   doc2[b.squeeze(-1), j.squeeze(-2)]
                                   [..., None, :]) & (i >= j))
print(f"new compilations: {len(attention_module._functions) - before}")
# CHECK: documents_new_ids: ok
# CHECK: new compilations: 0

# What is not traced ends in an AttnOptError that names it.
bad = [
    ("sin", lambda s, b, h, qi, ki: torch.sin(s)),
    ("if", lambda s, b, h, qi, ki: s if qi > ki else 0.0),
    ("random", lambda s, b, h, qi, ki: s + random.random()),
    ("slice", lambda s, b, h, qi, ki: table[h, 0:3]),
    ("numpy", lambda s, b, h, qi, ki: s + ids[b, qi]),
]
for name, mod in bad:
    try:
        attn_opt.attention(q, k, v, score_mod=mod)
        print(f"{name}: no error")
    except attn_opt.AttnOptError as e:
        print(f"{name}: {e}")
# CHECK: sin: score_mod: a mod uses torch.sin, which attn_opt does not trace
# CHECK: if: score_mod: a mod uses a traced value in Python control flow
# CHECK: random: a mod is not a pure function of its arguments
# CHECK: slice: score_mod: a mod indexes a captured tensor with a slice
# CHECK: numpy: score_mod: a mod indexes a NumPy array with a traced value; wrap the array in attn_opt.capture(array)
