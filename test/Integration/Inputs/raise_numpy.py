#!/usr/bin/env python3
"""NumPy reference of the graphs in raise-variants.mlir: each graph's formula,
written independently of the compiler, evaluated in float64 on the inputs
attn-run saved, compared with the results of the raised and the unraised
(raise=false) compilations.

  raise_numpy.py NAME INPUT_DIR RESULT.npy [RESULT.npy ...]
"""
import math
import os
import sys

import numpy as np


def relu(x):
    return np.maximum(x, 0.0)


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ERF = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                    (x + 0.044715 * x ** 3)))


def scores(q, k):
    return q @ np.swapaxes(k, -1, -2)


def causal(lq, lk):
    return np.tril(np.ones((lq, lk)))


def linear_quadratic(fq, fk, v, eps=0.0, mask=None):
    a = scores(fq, fk)
    if mask is not None:
        a = a * mask
    return (a @ v) / (a.sum(-1, keepdims=True) + eps)


def linear_order(fq, fk, v, eps=0.0):
    kv = np.swapaxes(fk, -1, -2) @ v
    z = fk.sum(-2)
    den = np.einsum("...id,...d->...i", fq, z)[..., None]
    return (fq @ kv) / (den + eps)


def reference(name, x):
    q, k, v = x["q"], x["k"], x["v"]
    lk = k.shape[-2]
    s = scores(q, k)
    if name == "relu2_fused":
        return (lk ** -0.5 * relu(0.25 * s) ** 2) @ v
    if name == "gelu_tanh":
        return gelu_tanh(s) @ v
    if name == "softplus":
        return (lk ** -0.5 * np.log1p(np.exp(s))) @ v
    if name == "sigmoid_causal":
        return (sigmoid(0.25 * s) * causal(*s.shape[-2:])) @ v
    if name == "relu_mask_tensor":
        return (relu(s) * x["m"]) @ v
    if name == "relu_causal_before":
        return (relu(0.25 * s) * causal(*s.shape[-2:])) @ v
    if name == "qk_layernorm":
        def ln(x):
            c = x - x.mean(-1, keepdims=True)
            return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5)
        return relu(scores(ln(q), ln(k))) @ v
    if name == "gated":
        return (relu(s) @ v) * x["g"]
    if name == "gqa_relu":
        return (lk ** -1.0 * relu(0.25 * s)) @ v
    if name == "quadratic_after_v" or name == "gqa_linear":
        return linear_quadratic(elu1(q), elu1(k), v, eps=1e-6)
    if name == "quadratic_padding":
        return linear_quadratic(elu1(q), elu1(k), v, mask=x["m"])
    if name == "favor":
        w = x["w"]
        def phi(t):
            t = 0.5 * t
            return np.exp(t @ w.T - (t * t).sum(-1, keepdims=True) / 2) / math.sqrt(w.shape[0])
        return linear_quadratic(phi(q), phi(k), v, eps=1e-6)
    if name == "linear_order":
        return linear_order(elu1(q), elu1(k), v, eps=1e-3)
    if name == "linear_order_named":
        return linear_order(relu(q), relu(k), v)
    if name == "tosa_gelu":
        return (gelu(s) / math.sqrt(lk)) @ v
    if name == "tosa_linear_quadratic":
        return linear_quadratic(elu1(q), elu1(k), v, eps=1e-6)
    if name == "tosa_linear_order":
        return linear_order(relu(q), relu(k), v)
    sys.exit(f"raise_numpy.py: no reference for {name}")


def main():
    name, folder, results = sys.argv[1], sys.argv[2], sys.argv[3:]
    x = {os.path.splitext(f)[0]: np.load(os.path.join(folder, f))
         for f in os.listdir(folder) if f.endswith(".npy")}
    x = {n: a.astype(np.float64) if a.dtype != np.bool_ else a.astype(np.float64)
         for n, a in x.items()}
    ref = reference(name, x)
    scale = max(1.0, float(np.abs(ref).max()))
    ok = True
    for path in results:
        out = np.load(path).astype(np.float64)
        if out.shape != ref.shape:
            print(f"{name} {os.path.basename(path)}: shape {out.shape}, "
                  f"expected {ref.shape}")
            ok = False
            continue
        err = float(np.abs(out - ref).max())
        good = np.allclose(out, ref, rtol=1e-4, atol=1e-5 * scale)
        ok &= bool(good)
        print(f"{name} {os.path.basename(path)}: max_abs_err={err:.3e} "
              f"{'ok' if good else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
