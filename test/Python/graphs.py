# The example graphs (examples/graphs) compiled through attn_opt.compile:
# attention raised inside the whole graph; results against a NumPy
# reference of the graph (float64).
# REQUIRES: python-numpy
# UNSUPPORTED: asan
# RUN: rm -rf %t && env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir %attn_py3 %s %attn_src_root/examples/graphs | FileCheck %s

import math
import os
import sys

import numpy as np

import attn_opt

graphs = sys.argv[1]
rng = np.random.default_rng(11)


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def layer_norm(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def check(name, got, want, tol):
    err = np.abs(got.astype(np.float64) - want).max()
    rel = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rel < tol, (name, err, rel)
    print(f"ok {name} (normwise error {rel:.1e})")


# The pre-norm Transformer block (causal attention).
block = attn_opt.compile(os.path.join(graphs, "transformer_block.mlir"))
x = rng.standard_normal((64, 32)).astype(np.float32)
w = {n: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32)
     for n, s in (("q", (32, 32)), ("k", (32, 32)), ("v", (32, 32)),
                  ("o", (32, 32)), ("1", (32, 128)), ("2", (128, 32)))}
out = block.transformer_block(x, w["q"], w["k"], w["v"], w["o"], w["1"],
                              w["2"])
xd = x.astype(np.float64)
h = layer_norm(xd)
heads = lambda t: t.reshape(64, 4, 8).transpose(1, 0, 2)
q, k, v = (heads(h @ w[n]) for n in "qkv")
causal = np.tril(np.ones((64, 64), bool))
att = softmax(np.where(causal, q @ k.transpose(0, 2, 1) / math.sqrt(8),
                       -np.inf)) @ v
x1 = xd + att.transpose(1, 0, 2).reshape(64, 32) @ w["o"]
g = layer_norm(x1) @ w["1"]
g = 0.5 * g * (1 + np.vectorize(math.erf)(g / math.sqrt(2)))
want = x1 + g @ w["2"]
check("transformer_block", out, want, 1e-4)
# CHECK: ok transformer_block

# The TOSA attention.
tosa = attn_opt.compile(os.path.join(graphs, "tosa_attention.mlir"))
q, k, v = (rng.standard_normal((6, 75, 32)).astype(np.float32)
           for _ in range(3))
want = softmax(q.astype(np.float64) @ k.transpose(0, 2, 1) * 0.125) @ v
check("tosa_attention", tosa.tosa_attention(q, k, v), want, 1e-4)
# CHECK: ok tosa_attention

# Grouped-query attention with a window mask, computed in the graph and
# given as a boolean tensor (a random band, so that rows differ).
gqa = attn_opt.compile(os.path.join(graphs, "gqa_window.mlir"))
q = rng.standard_normal((1, 8, 300, 64)).astype(np.float32)
k, v = (rng.standard_normal((1, 2, 300, 64)).astype(np.float32)
        for _ in range(2))
kd, vd = (np.repeat(t.astype(np.float64), 4, axis=1) for t in (k, v))
i, j = np.indices((300, 300))
band = np.abs(i - j) <= 64
s = q.astype(np.float64) @ kd.transpose(0, 1, 3, 2) * 0.125
want = softmax(np.where(band, s, -np.inf)) @ vd
check("gqa_window", gqa.gqa_window(q, k, v), want, 1e-4)
# CHECK: ok gqa_window
mask = band & (rng.random((300, 300)) < 0.9)
want = softmax(np.where(mask, s, -np.inf)) @ vd
check("gqa_mask_tensor", gqa.gqa_mask_tensor(q, k, v, mask), want, 1e-4)
# CHECK: ok gqa_mask_tensor
