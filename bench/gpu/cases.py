#!/usr/bin/env python3
"""Writes the GPU benchmark cases: one attention variant per module at
B=1, H heads (16), D=128 and length L (default 4096), bf16 (or --dtype
f16/f32), as NAME.mlir, with NAME.args: the attn-launch options that run it
(entry, argument and result types, useful flops).

    bench/gpu/cases.py [--length L] [--heads H] [--dtype bf16] [--out DIR]

Cases: softmax, softmax_causal, relu, relu_causal, sliding_window (256 keys
before and after), documents (causal within 8 packed documents of equal
length; attn-launch --segments-equal 8 makes the ids). The same shapes and
masks are what bench/gpu/peers.py times in PyTorch. Flops count useful
work: 4 D H per allowed (query, key) pair.
"""
import argparse
import os

B, D = 1, 128
H = 16


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


def allowed_pairs(name, length):
    if name in ("softmax", "relu"):
        return length * length
    if name in ("softmax_causal", "relu_causal"):
        return length * (length + 1) // 2
    if name == "sliding_window":
        return sum(min(length - 1, i + 256) - max(0, i - 256) + 1
                   for i in range(length))
    if name == "documents":
        n = length // 8
        return 8 * n * (n + 1) // 2 + (length - 8 * n) * 0
    raise ValueError(name)


def launch_args(name, length, dtype, segments):
    shape = f"{B}x{H}x{length}x{D}"
    args = [f"--entry {name}"] + [f"--arg {dtype}:{shape}"] * 3
    if segments:
        args.append(f"--arg i32:{B}x{length}")
    args.append(f"--result {dtype}:{shape}")
    args.append(f"--flops {4 * D * H * B * allowed_pairs(name, length)}")
    return " ".join(args) + "\n"


def main():
    global H
    p = argparse.ArgumentParser()
    p.add_argument("--length", type=int, default=4096)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.add_argument("--out", default=".")
    a = p.parse_args()
    H = a.heads
    os.makedirs(a.out, exist_ok=True)
    for name, (attrs, seg) in CASES.items():
        with open(os.path.join(a.out, name + ".mlir"), "w") as f:
            f.write(case(name, attrs, a.length, a.dtype, seg))
        with open(os.path.join(a.out, name + ".args"), "w") as f:
            f.write(launch_args(name, a.length, a.dtype, seg))
        print(os.path.join(a.out, name + ".mlir"))


if __name__ == "__main__":
    main()
