#!/usr/bin/env python3
"""Score and mask regions (issue 38) against the built-in patterns and
modifiers they spell, in one run, B = 1, H = 8, D = 64, f32:

  causal, window 256     mask_mod spelling the pattern vs #attn.causal /
                         #attn.window (bar: within 1.25x)
  documents              mask_mod reading captured document ids vs
                         #attn.segments (bar: within 1.5x)
  softcap, alibi         score_mod (tanh; captured slopes) vs the softcap
                         attribute and alibi_slopes

and the time to classify the blocks of a mask at L = 65536 (blocks of
128 x 128, FlexAttention's default): attn-block-sparse's compile-time
interval analysis of the region against a dense evaluation of the same
mask over all L^2 (query, key) pairs reduced to blocks, the work
FlexAttention's create_block_mask does (PyTorch eager, chunked; it is
FlexAttention's own cost only in kind: FlexAttention itself needs PyTorch
2.5, not installed here).

    bench/mods.py [--L 4096] [--threads 2] [--runs 5] [--classify-L 65536]
                  [--dense-L 65536]
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.environ.get("BUILD_DIR", os.path.join(root, "build"))
attn_run = os.path.join(build, "bin", "attn-run")
attn_opt = os.path.join(build, "bin", "attn-opt")

p = argparse.ArgumentParser()
p.add_argument("--L", type=int, default=4096)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--runs", type=int, default=5)
p.add_argument("--classify-L", type=int, default=65536)
p.add_argument("--dense-L", type=int, default=65536)
args = p.parse_args()

CAUSAL = "%ok = arith.cmpi ule, %j, %i : index\n  attn.yield %ok : i1"
WINDOW = """%d = arith.subi %i, %j : index
  %c0 = arith.constant 0 : index
  %c255 = arith.constant 255 : index
  %a = arith.cmpi sge, %d, %c0 : index
  %n = arith.cmpi sle, %d, %c255 : index
  %ok = arith.andi %a, %n : i1
  attn.yield %ok : i1"""
DOCS = """%x = tensor.extract %ids_[%b, %i] : tensor<1xLxi32>
  %y = tensor.extract %ids_[%b, %j] : tensor<1xLxi32>
  %ok = arith.cmpi eq, %x, %y : i32
  attn.yield %ok : i1"""
SOFTCAP = """%c = arith.constant 0.02 : f32
  %x = arith.mulf %s, %c : f32
  %t = math.tanh %x : f32
  %c50 = arith.constant 50.0 : f32
  %y = arith.mulf %t, %c50 : f32
  attn.yield %y : f32"""
ALIBI = """%d = arith.subi %i, %j : index
  %a = math.absi %d : index
  %ai = arith.index_cast %a : index to i64
  %af = arith.sitofp %ai : i64 to f32
  %slope = tensor.extract %sl_[%h] : tensor<8xf32>
  %m = arith.mulf %slope, %af : f32
  %y = arith.subf %s, %m : f32
  attn.yield %y : f32"""


def module(L, name, attrs, operands="", types="", mask=None, score=None,
           captures=()):
    t = f"tensor<1x8x{L}x64xf32>"
    fargs = f"%q: {t}, %k: {t}, %v: {t}" + "".join(
        f", %{n}: {ty}" for n, ty in captures) + types
    cap = ""
    if captures:
        cap = " captures(" + ", ".join("%" + n for n, _ in captures) + \
            " : " + ", ".join(ty for _, ty in captures) + ")"
    sig = "".join(f", %{n}_: {ty}" for n, ty in captures)
    s = (f"func.func @{name}({fargs}) -> {t} {{\n"
         f"  %o = attn.attention %q, %k, %v{operands}{cap} {attrs}\n"
         f"      : {t}, {t}, {t} -> {t}\n")
    if mask:
        s += ("      mask_mod {\n      ^bb0(%b: index, %h: index, %i: index, "
              f"%j: index{sig}):\n  {mask}\n      }}\n")
    if score:
        s += ("      score_mod {\n      ^bb0(%s: f32, %b: index, %h: index, "
              f"%i: index, %j: index{sig}):\n  {score}\n      }}\n")
    return s + f"  return %o : {t}\n}}\n"


def npy(path, fmt, shape, values):
    dtype = {"i": "<i4", "f": "<f4"}[fmt]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * (118 - len(hdr)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) +
                hdr.encode() + struct.pack(f"<{len(values)}{fmt}", *values))


def bench(path, entry, extra=()):
    r = subprocess.run([attn_run, path, "--entry", entry, "--random-inputs",
                        "--bench", str(args.runs), "--threads",
                        str(args.threads)] + list(extra),
                       capture_output=True, text=True)
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    if r.returncode or not m:
        sys.stderr.write(r.stdout + r.stderr)
        return float("nan")
    return float(m.group(1))


L = args.L
work = tempfile.mkdtemp()
# Documents: 8 of uneven lengths (sorted ids), the same for both forms.
cuts = sorted({(i * i * L) // 64 for i in range(1, 8)})
ids = [sum(1 for c in cuts if c <= i) for i in range(L)]
npy(os.path.join(work, "ids.npy"), "i", (1, L), ids)
slopes = [2.0 ** (-(h + 1)) for h in range(8)]
npy(os.path.join(work, "sl.npy"), "f", (8,), slopes)
ids_t = f"tensor<1x{L}xi32>"
soft = "{normalizer = #attn.softmax}"
pairs = [
    ("causal", module(L, "a", "{normalizer = #attn.softmax, pattern = "
                      "#attn.causal}"),
     module(L, "b", soft, mask=CAUSAL), [], 1.25),
    ("window 256", module(L, "a", "{normalizer = #attn.softmax, pattern = "
                          "#attn.window<before = 255, after = 0>}"),
     module(L, "b", soft, mask=WINDOW), [], 1.25),
    ("documents", module(L, "a", "{normalizer = #attn.softmax, pattern = "
                         "#attn.segments}",
                         operands=f" segments(%ids : {ids_t})",
                         types=f", %ids: {ids_t}"),
     module(L, "b", soft, mask=DOCS.replace("1xLx", f"1x{L}x"),
            captures=[("ids", ids_t)]),
     ["--input", "ids=" + os.path.join(work, "ids.npy")], 1.5),
    ("softcap 50", module(L, "a", "{normalizer = #attn.softmax, softcap = "
                          "50.0 : f32}"),
     module(L, "b", soft, score=SOFTCAP), [], None),
    ("alibi", module(L, "a", "{normalizer = #attn.softmax}",
                     operands=" alibi_slopes(%sl : tensor<8xf32>)",
                     types=", %sl: tensor<8xf32>"),
     module(L, "b", soft, score=ALIBI, captures=[("sl", "tensor<8xf32>")]),
     ["--input", "sl=" + os.path.join(work, "sl.npy")], None),
]
print(f"attn-run --bench {args.runs}, {args.threads} threads, L={L}, B=1, "
      "H=8, D=64, f32: regions vs the built-in pattern or modifier\n")
print("| variant | built-in ms | region ms | region / built-in | bar |")
print("|---|---|---|---|---|")
for name, a, b, extra, bar in pairs:
    path = os.path.join(work, "m.mlir")
    with open(path, "w") as f:
        f.write(a + "\n" + b)
    ta, tb = bench(path, "a", extra), bench(path, "b", extra)
    ratio = tb / ta
    verdict = "-" if bar is None else (
        f"{'within' if ratio <= bar else 'ABOVE'} {bar}x")
    print(f"| {name} | {ta:.1f} | {tb:.1f} | {ratio:.2f} | {verdict} |")

# Classification at a long length.
CL = args.classify_L
print(f"\nClassifying the blocks (128 x 128) of a mask at L={CL}:\n")
print("| mask | attn-block-sparse pass ms (interval analysis) | blocks per head | dense L^2 "
      "evaluation ms (PyTorch eager) | dense / interval |")
print("|---|---|---|---|---|")
masks = {
    "causal": (CAUSAL, lambda q, k: k <= q),
    "window 256": (WINDOW, lambda q, k: (q - k >= 0) & (q - k <= 255)),
}


def classify_ms(body):
    path = os.path.join(work, "c.mlir")
    with open(path, "w") as f:
        f.write(module(CL, "c", soft, mask=body))
    best = float("inf")
    for _ in range(3):
        r = subprocess.run([attn_opt, path, "--attn-block-sparse=kernels=false "
                            "block-q=128 block-k=128", "--mlir-timing",
                            "-o", "/dev/null"], capture_output=True, text=True)
        m = re.search(r"([0-9.]+) \(\s*[0-9.]+%\)\s+AttnBlockSparse",
                      r.stderr)
        if m:
            best = min(best, float(m.group(1)) * 1000)
    return best


def dense_ms(fn, n):
    try:
        import torch
    except ImportError:
        return float("nan")
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    k = torch.arange(n)
    nb = n // 128
    full = torch.zeros(nb, nb, dtype=torch.bool)
    partial = torch.zeros(nb, nb, dtype=torch.bool)
    rows = 1024
    for r0 in range(0, n, rows):
        q = torch.arange(r0, r0 + rows).unsqueeze(1)
        m = fn(q, k).view(rows // 128, 128, nb, 128)
        anyb = m.any(3).any(1)
        allb = m.all(3).all(1)
        full[r0 // 128:(r0 + rows) // 128] = allb
        partial[r0 // 128:(r0 + rows) // 128] = anyb & ~allb
    return (time.perf_counter() - start) * 1000


for name, (body, fn) in masks.items():
    ours = classify_ms(body)
    dense = dense_ms(fn, args.dense_L)
    if args.dense_L != CL:
        dense *= (CL / args.dense_L) ** 2  # L^2 work
    print(f"| {name} | {ours:.1f} | {(CL // 128) ** 2} (8 heads share it) | "
          f"{dense:.0f}{'' if args.dense_L == CL else ' (scaled)'} | "
          f"{dense / ours:.0f}x |")
