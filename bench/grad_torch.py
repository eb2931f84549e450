#!/usr/bin/python3
"""PyTorch autograd peers of attn-opt's gradients (issue 37): the forward
and backward of the same attention, written as a PyTorch 1.13 user would
(batched matmuls, the L x L scores materialized, autograd for the
backward). Prints one line per variant: "name median_ms" of forward +
backward (loss = sum(O * dO), dO fixed).

  bench/grad_torch.py --L 4096 --threads 2 [--runs 5] [--only a,b]

B=1, H=8, D=64, f32. Variants: softmax, causal, relu (L^-1 relu(QK^T /
sqrt(D)), the seed's), window256 (causal sliding window of 256 keys),
causal_linear (elu+1, the chunked prefix form of bench/variants_torch.py).
"""
import argparse
import math
import os
import sys
import time

try:
    import torch
except ImportError:
    print("grad_torch.py: PyTorch is not installed", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from variants_torch import linear_causal  # noqa: E402

B, H, D = 1, 8, 64


def scores(q, k):
    return torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(D)


def masked_softmax(q, k, v, mask):
    s = scores(q, k)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def variant(name, L):
    i = torch.arange(L).unsqueeze(1)
    j = torch.arange(L).unsqueeze(0)
    if name == "softmax":
        return lambda q, k, v: masked_softmax(q, k, v, None)
    if name == "causal":
        m = j <= i
        return lambda q, k, v: masked_softmax(q, k, v, m)
    if name == "window256":
        m = (j <= i) & (j > i - 256)
        return lambda q, k, v: masked_softmax(q, k, v, m)
    if name == "relu":
        return lambda q, k, v: torch.matmul(torch.relu(scores(q, k)) / L, v)
    if name == "causal_linear":
        return linear_causal
    raise SystemExit(f"grad_torch.py: unknown variant {name}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--L", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="softmax,causal,relu,window256,causal_linear")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    for name in a.only.split(","):
        f = variant(name, a.L)
        q, k, v = (torch.randn(B, H, a.L, D, requires_grad=True) for _ in range(3))
        do = torch.randn(B, H, a.L, D)
        times = []
        for r in range(a.runs + 1):
            for t in (q, k, v):
                t.grad = None
            t0 = time.perf_counter()
            o = f(q, k, v)
            o.backward(do)
            times.append((time.perf_counter() - t0) * 1e3)
        times = sorted(times[1:])
        print(f"{name} {times[len(times) // 2]:.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
