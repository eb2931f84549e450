#!/usr/bin/env python3
"""Times PyTorch's attention on the GPU for the cases of bench/gpu/cases.py:
scaled_dot_product_attention (its fastest backend: flash / cuDNN / efficient)
and FlexAttention (torch.nn.attention.flex_attention, compiled, with block
masks), plus eager ReLU attention. Prints one JSON line per (case, peer):
{"case", "peer", "ms", "tflops"} (TFLOP/s of the useful work: 4 L^2 D H for
dense, half for causal, the mask's nonzeros for the others).

    bench/gpu/peers.py [--length 4096] [--dtype bf16] [--runs 50]
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F

B, H, D = 1, 16, 128


def useful_flops(kind, length):
    dense = 4.0 * length * length * D * H * B
    if kind in ("softmax", "relu"):
        return dense
    if kind in ("softmax_causal", "relu_causal"):
        return 4.0 * D * H * B * length * (length + 1) / 2
    if kind == "sliding_window":
        i = torch.arange(length)
        nnz = ((i[None, :] - i[:, None]).abs() <= 256).sum().item()
        return 4.0 * D * H * B * nnz
    if kind == "documents":
        return None  # depends on the random ids; filled in by the caller
    raise ValueError(kind)


def time_ms(fn, runs):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--length", type=int, default=4096)
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--runs", type=int, default=50)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("peers.py: no CUDA device for PyTorch")
    dt = {"bf16": torch.bfloat16, "f16": torch.float16,
          "f32": torch.float32}[a.dtype]
    L = a.length
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=dt, generator=g)
               for _ in range(3))
    scale = D ** -0.5

    try:
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
        flex = torch.compile(flex_attention)
    except Exception as e:  # pragma: no cover - depends on the install
        flex = None
        print(json.dumps({"note": f"FlexAttention unavailable: {e}"}))

    # 8 packed documents of equal length, as attn-launch --segments-equal 8.
    ids = (torch.arange(L, device="cuda") * 8 // L)[None, :].expand(B, L)
    same_doc = ids[:, :, None] == ids[:, None, :]
    causal = torch.ones(L, L, device="cuda", dtype=torch.bool).tril()
    doc_nnz = (same_doc & causal).sum().item()

    def emit(case, peer, fn, flops):
        try:
            ms = time_ms(fn, a.runs)
            print(json.dumps({"case": case, "peer": peer, "ms": ms,
                              "tflops": flops / (ms * 1e9)}), flush=True)
        except Exception as e:
            print(json.dumps({"case": case, "peer": peer,
                              "error": str(e)[:200]}), flush=True)

    def window_mask(b, h, qi, ki):
        return (qi - ki <= 256) & (ki - qi <= 256)

    def causal_mask(b, h, qi, ki):
        return qi >= ki

    def doc_mask(b, h, qi, ki):
        return (ids[b, qi] == ids[b, ki]) & (qi >= ki)

    for case in ["softmax", "softmax_causal", "sliding_window", "documents",
                 "relu", "relu_causal"]:
        flops = (4.0 * D * H * B * doc_nnz if case == "documents"
                 else useful_flops(case, L))
        if case == "softmax":
            emit(case, "torch_sdpa",
                 lambda: F.scaled_dot_product_attention(q, k, v), flops)
        elif case == "softmax_causal":
            emit(case, "torch_sdpa",
                 lambda: F.scaled_dot_product_attention(q, k, v,
                                                        is_causal=True), flops)
        elif case == "sliding_window":
            i = torch.arange(L, device="cuda")
            m = (i[None, :] - i[:, None]).abs() <= 256
            emit(case, "torch_sdpa_masked",
                 lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                 flops)
        elif case == "documents":
            m = (same_doc & causal)[:, None]
            emit(case, "torch_sdpa_masked",
                 lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                 flops)
        else:
            def relu_attn(c=case):
                s = torch.matmul(q, k.transpose(-1, -2)) * scale
                if c == "relu_causal":
                    s = s.masked_fill(~causal, 0)
                return torch.matmul(torch.relu(s) / L, v)
            emit(case, "torch_eager", relu_attn, flops)
        if flex is None or case.startswith("relu"):
            continue
        mod = {"softmax": None, "softmax_causal": causal_mask,
               "sliding_window": window_mask, "documents": doc_mask}[case]
        bm = None if mod is None else create_block_mask(mod, B, H, L, L,
                                                        device="cuda")
        emit(case, "flex_attention", lambda: flex(q, k, v, block_mask=bm),
             flops)


if __name__ == "__main__":
    main()
