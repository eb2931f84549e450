#!/usr/bin/env python3
"""Writes the example Transformer block (examples/graphs/transformer_block.mlir)
at other sizes, and its attention alone, for bench/transformer.sh:

  transformer_block.py OUT_DIR --length L --embed E --heads H

OUT_DIR/block.mlir      the whole block (layer norms, projections, causal
                        attention as linalg ops, MLP of 4E), E = H * D
OUT_DIR/attention.mlir  the block's attention part as written in the graph:
                        Q, K, V [L, E] split into heads, causal softmax
                        attention, heads merged
OUT_DIR/op.mlir         the same attention as one attn.attention op on
                        [1, H, L, D]
"""
import argparse
import math
import os
import re

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--length", type=int, default=4096)
p.add_argument("--embed", type=int, default=512)
p.add_argument("--heads", type=int, default=8)
a = p.parse_args()
L, E, H = a.length, a.embed, a.heads
D = E // H
assert D * H == E
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = open(os.path.join(root, "examples", "graphs", "transformer_block.mlir")).read()

# The example's sizes: L = 64, E = 32, H = 4, D = 8, MLP 128.
sizes = {"64": str(L), "32": str(E), "4": str(H), "8": str(D), "128": str(4 * E)}


def dims(m):
    return re.sub(r"\d+", lambda d: sizes[d.group(0)], m.group(0))


def resize(text):
    text = re.sub(r"tensor<[0-9x]+x", dims, text)
    text = re.sub(r"output_shape \[[0-9, ]+\]", dims, text)
    text = text.replace("arith.constant 32.0 : f32", "arith.constant %d.0 : f32" % E)
    text = text.replace("0.353553385", repr(1 / math.sqrt(D)))
    return text


os.makedirs(a.out, exist_ok=True)
open(os.path.join(a.out, "block.mlir"), "w").write(resize(src))

# The attention part: from the block's projections to the merged heads.
body = src[src.index("  %q = func.call @split_heads(%q2)"):src.index("  %proj = func.call")]
helpers = src[src.index("// [64, 32] -> [4, 64, 8]"):src.index("func.func private @add")]
attention = helpers + """func.func @attention(%q2: tensor<64x32xf32>, %k2: tensor<64x32xf32>, %v2: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.353553385 : f32
""" + body + """  return %o2 : tensor<64x32xf32>
}
"""
open(os.path.join(a.out, "attention.mlir"), "w").write(resize(attention))

t = "tensor<1x%dx%dx%dxf32>" % (H, L, D)
open(os.path.join(a.out, "op.mlir"), "w").write(
    f"""func.func @op(%q: {t}, %k: {t}, %v: {t}) -> {t} {{
  %0 = attn.attention %q, %k, %v {{normalizer = #attn.softmax, pattern = #attn.causal}}
      : {t}, {t}, {t} -> {t}
  return %0 : {t}
}}
""")
