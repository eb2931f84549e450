#!/usr/bin/env python3
"""Writes the example modules of examples/: one attention variant each, at
B=1, H=8, D=64, f32 and sequence length L (default 4096).

    examples/generate.py [--length L] [--out DIR] [--only NAME,NAME]
                         [--dynamic]

The committed examples are this script's output at L=4096; bench/ uses it to
make the same variants at other lengths. With --dynamic, the attn.attention
variants whose patterns are formulas of positions get dynamic batch and
lengths (`?x8x?x64`: compiled once, run at any length with attn-run --shape);
the others are skipped.
"""
import argparse
import os

H, D = 8, 64


def tensor(*shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def attention_text(name, doc, attrs, length, dynamic=False):
    t = "tensor<?x%dx?x%dxf32>" % (H, D) if dynamic else tensor(1, H, length, D)
    sizes = (f"B and L dynamic, H={H}, D={D}" if dynamic
             else f"B=1, H={H}, L={length}, D={D}")
    return f"""// {doc}
// {sizes}, f32.
func.func @{name}(%query: {t}, %key: {t}, %value: {t}) -> {t} {{
  %0 = attn.attention %query, %key, %value {{{attrs}}}
      : {t}, {t}, {t} -> {t}
  return %0 : {t}
}}
"""


def bigbird_pattern(length):
    blocks = length // 64
    band = ['"' + "".join("1" if abs(r - c) <= 1 else "0" for c in range(blocks)) + '"'
            for r in range(blocks)]
    rows = ",\n          ".join(band)
    tokens = ", ".join(str(i) for i in range(128))
    return f"""normalizer = #attn.softmax,
      pattern = #attn.union<[
        #attn.block<size = 64, layout = [
          {rows}]>,
        #attn.global<[{tokens}]>,
        #attn.random<blocks = 3, block_size = 64, seed = 7>]>"""


def examples(length, dynamic=False):
    t = tensor(1, H, length, D)
    def attention(name, doc, attrs, length):
        return attention_text(name, doc, attrs, length, dynamic)
    ex = {
        "softmax": attention("softmax", "Dense softmax attention.",
                             "normalizer = #attn.softmax", length),
        "softmax_causal": attention(
            "softmax_causal", "Causal softmax attention.",
            "normalizer = #attn.softmax, pattern = #attn.causal", length),
        "relu": attention(
            "relu", "ReLU attention (Wortsman et al. 2023): L^-1 relu(QK^T / sqrt(D)) V.",
            "normalizer = #attn.pointwise<relu>", length),
        "relu_causal": attention(
            "relu_causal", "Causal ReLU attention.",
            "normalizer = #attn.pointwise<relu>, pattern = #attn.causal", length),
        "linear_elu": attention(
            "linear_elu",
            "Linear attention with the elu(x)+1 feature map (Katharopoulos et al. 2020).",
            "normalizer = #attn.kernel<elu_plus_one>", length),
        "linear_elu_causal": attention(
            "linear_elu_causal",
            "Causal linear attention with the elu(x)+1 feature map.",
            "normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal", length),
        "favor": attention(
            "favor",
            "Performer FAVOR+ with 256 orthogonal random features, estimating softmax(QK^T/8).",
            "normalizer = #attn.kernel<favor, features = 256, orthogonal = true, seed = 1>, scale = 0.125 : f32",
            length),
        "sliding_window": attention(
            "sliding_window",
            "Longformer: a sliding window of 128 keys before and 128 after each query,\n"
            "// plus global tokens 0 and 1.",
            "normalizer = #attn.softmax,\n"
            "      pattern = #attn.union<[#attn.window<before = 128, after = 128>, #attn.global<[0, 1]>]>",
            length),
        "bigbird": attention(
            "bigbird",
            "BigBird-ITC with blocks of 64: 3 window blocks (the explicit band layout),\n"
            "// 2 global blocks (tokens 0..127) and 3 random blocks per query block.",
            bigbird_pattern(length), length),
        "sparse_fixed": attention(
            "sparse_fixed",
            'Sparse Transformer "fixed" pattern (stride 128, 16 summary cells), causal.',
            "normalizer = #attn.softmax,\n"
            "      pattern = #attn.intersect<[#attn.causal, #attn.fixed<stride = 128, c = 16>]>",
            length),
    }
    if dynamic:
        # Compile-time blocks (bigbird) need static lengths.
        del ex["bigbird"]
        return ex
    p = 256
    e = tensor(p, length)
    ex["lowrank"] = f"""// Linformer: keys and values projected along the sequence to {p} rows.
// B=1, H={H}, L={length}, D={D}, f32.
func.func @lowrank(%query: {t}, %key: {t}, %value: {t},
                   %key_proj: {e}, %value_proj: {e}) -> {t} {{
  %0 = attn.lowrank_attention %query, %key, %value, %key_proj, %value_proj
      : {t}, {t}, {t}, {e}, {e} -> {t}
  return %0 : {t}
}}
"""
    ex["lsh"] = f"""// Reformer LSH attention: shared query/key, 2 hash rounds, 64 buckets,
// chunks of 64. B=1, H={H}, L={length}, D={D}, f32.
func.func @lsh(%qk: {t}, %value: {t}) -> {t} {{
  %0 = attn.lsh_attention %qk, %value {{num_hashes = 2, num_buckets = 64, chunk_size = 64, seed = 1}}
      : {t}, {t} -> {t}
  return %0 : {t}
}}
"""
    mem = 512
    m = tensor(1, H, mem, D)
    r = tensor(H, length + mem, D)
    b = tensor(H, D)
    ex["relative"] = f"""// Transformer-XL: {mem} memory positions prepended to the keys and values,
// relative-position scores. B=1, H={H}, L={length}, D={D}, f32.
func.func @relative(%query: {t}, %key: {t}, %value: {t},
                    %pos_emb: {r}, %content_bias: {b},
                    %position_bias: {b}, %memory_key: {m},
                    %memory_value: {m}) -> {t} {{
  %0 = attn.relative_attention %query, %key, %value, %pos_emb, %content_bias, %position_bias
      memory(%memory_key, %memory_value : {m}, {m})
      : {t}, {t}, {t}, {r}, {b}, {b} -> {t}
  return %0 : {t}
}}
"""
    return ex


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=4096)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", default="")
    ap.add_argument("--dynamic", action="store_true")
    a = ap.parse_args()
    if a.length % 64:
        ap.error("--length must be a multiple of 64 (the BigBird block size)")
    only = set(filter(None, a.only.split(",")))
    os.makedirs(a.out, exist_ok=True)
    for name, text in examples(a.length, a.dynamic).items():
        if only and name not in only:
            continue
        with open(os.path.join(a.out, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
