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

# The modifiers (issue 53): each x {softmax, pointwise relu} (where it
# applies) x {causal, segments} x GQA x {f32, bf16}, and with dynamic
# lengths: bias broadcast over the batch (its gradient summed), gate, ALiBi,
# soft-capping, sinks with the log-sum-exp result (its cotangent), a score
# region reading a captured table (T5's relative-position bias) and a mask
# region over captured document ids.
MODIFIERS = ["bias", "gate", "alibi", "softcap", "sinks_lse", "score_mod",
             "mask_mod"]
SOFTMAX_ONLY = {"sinks_lse"}
HQ, HKV = 4, 2
LDYN = 61  # the run-time length of the dynamic cases


def modifier_case(mod, n, p, dtype, dynamic):
    """The function of one modifier case and the extra gradients it has."""
    name = f"{mod}_{n}_{p}_{dtype}" + ("_dyn" if dynamic else "")
    lq = "?" if dynamic else str(L)
    t = lambda heads, dim: f"tensor<{B}x{heads}x{lq}x{dim}x{dtype}>"
    q, k, v, o = t(HQ, D), t(HKV, D), t(HKV, DV), t(HQ, DV)
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    attrs, region, extra = [f"normalizer = {NORMALIZERS[n]}"], "", []
    ops = {}  # operand keyword -> text, printed in the op's order
    ids = f"tensor<{B}x{lq}xi32>"
    if p == "segments":
        args.append(f"%ids: {ids}")
        ops["segments"] = f"%ids : {ids}"
    attrs.append(f"pattern = {PATTERNS[p]}")
    results, lse = o, ""
    if mod == "bias":
        bt = f"tensor<1x{HQ}x{lq}x{lq}x{dtype}>"
        args.append(f"%bias: {bt}")
        ops["bias"] = f"%bias : {bt}"
        extra.append("d_bias")
    elif mod == "gate":
        args.append(f"%gate: {o}")
        ops["gate"] = f"%gate : {o}"
        extra.append("d_gate")
    elif mod == "alibi":
        args.append(f"%slopes: tensor<{HQ}xf32>")
        ops["alibi_slopes"] = f"%slopes : tensor<{HQ}xf32>"
        extra.append("d_slopes")
    elif mod == "softcap":
        attrs.append("softcap = 2.0 : f32")
    elif mod == "sinks_lse":
        args.append(f"%sinks: tensor<{HQ}xf32>")
        ops["sinks"] = f"%sinks : tensor<{HQ}xf32>"
        lse = f"tensor<{B}x{HQ}x{lq}xf32>"
        results = f"{o}, {lse}"
        extra.append("d_sinks")
    elif mod == "score_mod":
        table = f"tensor<{HQ}x{2 * L - 1}xf32>"
        args.append(f"%table: {table}")
        ops["captures"] = f"%table : {table}"
        extra.append("d_table")
        region = (
            "\n      score_mod {\n"
            f"      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: {table}):\n"
            f"        %off = arith.constant {L - 1} : index\n"
            "        %d = arith.subi %i, %j : index\n"
            "        %r = arith.addi %d, %off : index\n"
            f"        %x = tensor.extract %c[%h, %r] : {table}\n"
            "        %y = arith.addf %s, %x : f32\n"
            "        attn.yield %y : f32\n      }")
    elif mod == "mask_mod":
        doc = f"tensor<{L}xi32>"
        args.append(f"%doc: {doc}")
        ops["captures"] = f"%doc : {doc}"
        region = (
            "\n      mask_mod {\n"
            f"      ^bb0(%b: index, %h: index, %i: index, %j: index, %c: {doc}):\n"
            f"        %x = tensor.extract %c[%i] : {doc}\n"
            f"        %y = tensor.extract %c[%j] : {doc}\n"
            "        %e = arith.cmpi eq, %x, %y : i32\n"
            "        attn.yield %e : i1\n      }")
    operands = "".join(f" {kw}({ops[kw]})" for kw in
                       ("bias", "gate", "segments", "alibi_slopes", "sinks",
                        "captures") if kw in ops)
    ret = "%o, %l" if lse else "%o"
    text = (f"func.func @{name}({', '.join(args)}) -> ({results}) {{\n"
            f"  {ret} = attn.attention %q, %k, %v{operands} "
            f"{{{', '.join(attrs)}}} : {q}, {k}, {v} -> {results}{region}\n"
            f"  return {ret} : {results}\n}}\n")
    # Dynamic lengths: every length-dependent argument's shape at run time
    # (shorter than the captured tables).
    n_ = LDYN
    shapes = {"q": (B, HQ, n_, D), "k": (B, HKV, n_, D), "v": (B, HKV, n_, DV),
              "d_output": (B, HQ, n_, DV)}
    if p == "segments":
        shapes["ids"] = (B, n_)
    if mod == "bias":
        shapes["bias"] = (1, HQ, n_, n_)
    if mod == "gate":
        shapes["gate"] = (B, HQ, n_, DV)
    if lse:
        shapes["d_lse"] = (B, HQ, n_)
    flags = []
    if dynamic:
        for arg, dims in shapes.items():
            flags += ["--shape", f"{arg}={'x'.join(map(str, dims))}"]
    return name, text, extra, flags


mod_cases = []
for mod in MODIFIERS:
    for n in ("softmax", "relu"):
        if n != "softmax" and mod in SOFTMAX_ONLY:
            continue
        for p in ("causal", "segments"):
            for dtype in ("f32", "bf16"):
                for dynamic in (False, True):
                    if dynamic and dtype == "bf16":
                        continue
                    name, text, extra, flags = modifier_case(
                        mod, n, p, dtype, dynamic)
                    funcs.append(text)
                    cases.append((name, dtype, extra, flags))

# One module per case: attn-run compiles every function of its module.
for (name, *_), text in zip(cases, funcs):
    with open(os.path.join(work, name + ".mlir"), "w") as f:
        f.write(text)

failed = 0
for case in cases:
    name, dtype = case[0], case[1]
    extra, shapes = (case[2], case[3]) if len(case) > 2 else ([], [])
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    module = os.path.join(work, name + ".mlir")
    run = [attn_run, module, "--entry", name, "--grad", "--random-inputs",
           "--seed", "3", "--save-inputs", d,
           "--output", os.path.join(d, "d_q.npy"),
           "--output", os.path.join(d, "d_k.npy"),
           "--output", os.path.join(d, "d_v.npy")] + shapes
    for e in extra:
        run += ["--output", os.path.join(d, e + ".npy")]
    # (The modifier cases' f32 bound is looser: ALiBi's distances and the
    # captured table add terms of the scores' size.)
    # The ALiBi slopes' gradient sums every score's gradient times its
    # distance (up to L), terms that cancel (a softmax row's score
    # gradients sum to 0): its rounding error is that of the largest terms.
    # With bf16, D = rowsum(dO * O) reads the bf16-rounded output (as
    # FlashAttention's backward does), which shifts each row's score
    # gradients by P * dD: harmless for dQ, dK, dV, but the distance
    # weighting adds it up.
    slopes = "d_slopes" in extra
    tol = (["--rtol", "1e-4", "--atol", "1e-5", "--max-rel-err",
            "5e-5" if slopes else "5e-6" if extra or shapes else "2e-6"]
           if dtype == "f32" else
           ["--rtol", "3e-1", "--atol", "3e-1", "--max-rel-err", "1e-1"]
           if slopes else
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
