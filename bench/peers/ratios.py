#!/usr/bin/env python3
"""Ratios of attn-opt against the peers, from one run of the peers benchmark
(results/*.jsonl written by run.sh with attn-opt as an extra).

  ratios.py RESULTS_DIR [--L 4096] [--threads 2]

For softmax and causal softmax: attn-opt's median time against the fastest
peer's (any implementation that is not attn-opt and not tagged), and the
softmax effective rate (4 L^2 D H flops) against oneDNN's sgemm rate at the
same thread count; for ReLU: its time against softmax's, both attn-opt.
"""
import argparse
import glob
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("results")
ap.add_argument("--L", type=int, default=4096)
ap.add_argument("--threads", type=int, default=2)
a = ap.parse_args()

recs = []
for f in sorted(glob.glob(os.path.join(a.results, "*.jsonl"))):
    for line in open(f):
        line = line.strip()
        if line.startswith("{"):
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                pass

ok = [r for r in recs if r.get("kind") == "attn" and r.get("status") == "ok"
      and r["L"] == a.L and r["threads"] == a.threads]


def ours(variant):
    return next((r for r in ok if r["variant"] == variant and r["impl"] == "attn-opt"), None)


def baseline(variant):
    return next((r for r in ok if r["variant"] == variant and r["impl"] == "attn-opt-baseline"), None)


def fastest_peer(variant):
    peers = [r for r in ok if r["variant"] == variant
             and not r["impl"].startswith("attn-opt") and "[" not in r["impl"]]
    return min(peers, key=lambda r: r["median_ms"]) if peers else None


def gflops(r):
    return r["flop"] / (r["median_ms"] * 1e-3) / 1e9


print(f"attn-opt against the peers, L = {a.L}, {a.threads} threads, one run\n")
print("| variant | attn-opt ms | fastest peer | peer ms | speedup |")
print("|---|---|---|---|---|")
for v in ["softmax", "softmax_causal", "relu", "relu_causal", "linear_elu1",
          "linear_elu1_causal", "swa_w256_g2"]:
    o, p = ours(v), fastest_peer(v)
    if not o:
        continue
    if p:
        print(f"| {v} | {o['median_ms']:.1f} | {p['impl']} | {p['median_ms']:.1f} | "
              f"{p['median_ms'] / o['median_ms']:.2f}x |")
    else:
        print(f"| {v} | {o['median_ms']:.1f} | - | - | - |")

if any(baseline(v) for v in ["softmax", "softmax_causal", "relu", "swa_w256_g2"]):
    print("\nattn-opt against its baseline build (alternating rounds, best median each)\n")
    print("| variant | attn-opt ms | baseline ms | new / baseline |")
    print("|---|---|---|---|")
    for v in ["softmax", "softmax_causal", "relu", "relu_causal", "linear_elu1",
              "linear_elu1_causal", "swa_w256_g2"]:
        o, b = ours(v), baseline(v)
        if o and b:
            print(f"| {v} | {o['median_ms']:.1f} | {b['median_ms']:.1f} | "
                  f"{o['median_ms'] / b['median_ms']:.3f} |")
    mha = [r for r in ok if r["variant"] == "softmax"
           and "MultiHeadAttention" in r["impl"] and "[" not in r["impl"]]
    sm = ours("softmax")
    if sm and mha:
        m = min(mha, key=lambda r: r["median_ms"])
        print(f"\nsoftmax against {m['impl']}: {m['median_ms'] / sm['median_ms']:.2f}x")

sgemm = [r for r in recs if r.get("kind") == "limit" and r.get("name") == "sgemm_dnnl"
         and r.get("threads") == a.threads]
fma = [r for r in recs if r.get("kind") == "limit" and r.get("name") == "fma_zmm_avx512"
       and r.get("threads") == a.threads]
sm, relu = ours("softmax"), ours("relu")
print()
if sm and sgemm:
    s = max(r["gflops"] for r in sgemm)
    print(f"softmax effective rate {gflops(sm):.1f} GFLOP/s = "
          f"{100 * gflops(sm) / s:.0f}% of oneDNN sgemm ({s:.1f} GFLOP/s, {a.threads} threads)")
if sm and fma:
    p = max(r["max_gflops"] for r in fma)
    print(f"softmax effective rate = {100 * gflops(sm) / p:.0f}% of the AVX-512 FMA peak ({p:.1f} GFLOP/s)")
if sm and relu:
    print(f"relu: {relu['median_ms']:.1f} ms against softmax {sm['median_ms']:.1f} ms: "
          f"{sm['median_ms'] / relu['median_ms']:.2f}x faster")
