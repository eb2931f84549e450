#!/usr/bin/env python3
"""Writes the GPU benchmark cases: one attention variant per module at
B=1, H=16, D=128 and length L (default 4096), bf16 (or --dtype f16/f32).

    bench/gpu/cases.py [--length L] [--dtype bf16] [--out DIR]

Cases: softmax, softmax_causal, relu, relu_causal, sliding_window (256 keys
before and after), documents (causal within 8 packed documents). The same
shapes and masks are what bench/gpu/peers.py times in PyTorch.
"""
import argparse
import os

B, H, D = 1, 16, 128


def tensor(dtype, *shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def case(name, attrs, length, dtype, segments=False):
    t = tensor(dtype, B, H, length, D)
    ids = tensor("i32", B, length)
    args = f"%query: {t}, %key: {t}, %value: {t}"
    seg = ""
    if segments:
        args += f", %ids: {ids}"
        seg = f" segments(%ids : {ids})"
    return f"""// {name}: B={B}, H={H}, L={length}, D={D}, {dtype}.
func.func @{name}({args}) -> {t} {{
  %0 = attn.attention %query, %key, %value{seg} {{{attrs}}}
      : {t}, {t}, {t} -> {t}
  return %0 : {t}
}}
"""


CASES = {
    "softmax": ("normalizer = #attn.softmax", False),
    "softmax_causal": ("normalizer = #attn.softmax, pattern = #attn.causal",
                       False),
    "relu": ("normalizer = #attn.pointwise<relu>", False),
    "relu_causal": ("normalizer = #attn.pointwise<relu>, pattern = #attn.causal",
                    False),
    "sliding_window": ("normalizer = #attn.softmax, "
                       "pattern = #attn.window<before = 256, after = 256>",
                       False),
    "documents": ("normalizer = #attn.softmax, pattern = "
                  "#attn.intersect<[#attn.causal, #attn.segments]>", True),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--length", type=int, default=4096)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.add_argument("--out", default=".")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, (attrs, seg) in CASES.items():
        with open(os.path.join(a.out, name + ".mlir"), "w") as f:
            f.write(case(name, attrs, a.length, a.dtype, seg))
        print(os.path.join(a.out, name + ".mlir"))


if __name__ == "__main__":
    main()
