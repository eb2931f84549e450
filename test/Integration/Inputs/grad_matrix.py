"""The gradient matrix of issue 37: every normalizer family (softmax,
pointwise relu, kernelized elu+1) x {no mask, causal, window, block-sparse,
segments} x {MHA, GQA}, odd lengths, in f32, and in bf16 for GQA: each
attention's @F_grad (attn-run --grad, the default pipeline: fused kernels,
the linear form or the reference gradient, whichever it picks) against the
independent float64 reference (attn-ref --grad).

    grad_matrix.py ATTN_RUN ATTN_REF WORKDIR

Prints one line per case and a summary; exits 1 if any case fails.
"""
import os
import subprocess
import sys

attn_run, attn_ref, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)

NORMALIZERS = {
    "softmax": "#attn.softmax",
    "relu": "#attn.pointwise<relu>",
    "elu": "#attn.kernel<elu_plus_one>",
}
PATTERNS = {
    "none": None,
    "causal": "#attn.causal",
    "window": "#attn.window<before = 5, after = 2>",
    "block": '#attn.block<size = 32, layout = ["100", "110", "011"]>',
    "segments": "#attn.segments",
}
HEADS = {"mha": (2, 2), "gqa": (4, 2)}
L, D, DV, B = 77, 16, 8, 2

cases, funcs = [], []
for dtype in ("f32", "bf16"):
    for n, norm in NORMALIZERS.items():
        for p, pattern in PATTERNS.items():
            for h, (hq, hkv) in HEADS.items():
                if dtype == "bf16" and h == "mha":
                    continue
                name = f"{n}_{p}_{h}_{dtype}"
                t = lambda heads, dim: f"tensor<{B}x{heads}x{L}x{dim}x{dtype}>"
                q, k, v, o = t(hq, D), t(hkv, D), t(hkv, DV), t(hq, DV)
                args = f"%q: {q}, %k: {k}, %v: {v}"
                seg = ""
                if p == "segments":
                    args += f", %ids: tensor<{B}x{L}xi32>"
                    seg = f" segments(%ids : tensor<{B}x{L}xi32>)"
                attrs = f"normalizer = {norm}"
                if pattern:
                    attrs += f", pattern = {pattern}"
                funcs.append(
                    f"func.func @{name}({args}) -> {o} {{\n"
                    f"  %0 = attn.attention %q, %k, %v{seg} {{{attrs}}} : "
                    f"{q}, {k}, {v} -> {o}\n  return %0 : {o}\n}}\n")
                cases.append((name, dtype))

module = os.path.join(work, "matrix.mlir")
with open(module, "w") as f:
    f.write("\n".join(funcs))

failed = 0
for name, dtype in cases:
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    run = [attn_run, module, "--entry", name, "--grad", "--random-inputs",
           "--seed", "3", "--save-inputs", d,
           "--output", os.path.join(d, "d_q.npy"),
           "--output", os.path.join(d, "d_k.npy"),
           "--output", os.path.join(d, "d_v.npy")]
    tol = (["--rtol", "1e-4", "--atol", "1e-5", "--max-rel-err", "2e-6"]
           if dtype == "f32" else
           ["--rtol", "3e-2", "--atol", "3e-2", "--max-rel-err", "2e-2"])
    ref = [attn_ref, module, "--entry", name, "--inputs", d, "--grad", d] + tol
    r = subprocess.run(run, capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run(ref, capture_output=True, text=True)
    if r.returncode == 0:
        print(f"{name}: ok")
    else:
        failed += 1
        print(f"{name}: FAILED\n{r.stdout}{r.stderr}")
print(f"cases: {len(cases) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
