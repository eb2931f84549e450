"""The catalogue of score and mask regions (issue 38): FlexAttention's
standard mods written as attn.attention regions (prefix-LM, document ids
from a captured tensor, a relative bias table, ALiBi from captured slopes,
tanh soft-capping, head- and batch-dependent masks, a `torch.where` score),
at odd sizes with GQA, dynamic lengths, padded varlen keys, decode (one
query), f32 and bf16, each run by attn-run on the CPU kernels, through the
reference lowering and on the GPU kernels (the emulator), and their
gradients (attn-run --grad), against the independent float64 reference
(attn-ref interprets the regions' IR; its gradients by reverse mode).

    mods_catalogue.py ATTN_RUN ATTN_REF MAKE_NPY WORKDIR

Prints one line per case and a summary; exits 1 if any case fails.
"""
import os
import subprocess
import sys

attn_run, attn_ref, make_npy, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)

B, HQ, HKV, L, D = 2, 4, 2, 203, 16
def T(h, l, d, dt="f32", b=B): return f"tensor<{b}x{h}x{l}x{d}x{dt}>"
funcs = []
learned = {}


def attn(name, body_mask=None, body_score=None, caps=(), norm="#attn.softmax", dt="f32", extra_attrs="",
         q=None, k=None, v=None, extra_args="", extra_ops=""):
    q = q or T(HQ, L, D, dt); k = k or T(HKV, L, D, dt); v = v or T(HKV, L, D, dt)
    o = q
    args = f"%q: {q}, %k: {k}, %v: {v}" + "".join(f", %{n}: {t}" for n, t in caps) + extra_args
    capsig = "".join(f", %{n}_: {t}" for n, t in caps)
    capclause = ""
    if caps:
        capclause = " captures(" + ", ".join(f"%{n}" for n, _ in caps) + " : " + ", ".join(t for _, t in caps) + ")"
    s = f"func.func @{name}({args}) -> {o} {{\n  %0 = attn.attention %q, %k, %v{extra_ops}{capclause} {{normalizer = {norm}{extra_attrs}}}\n      : {q}, {k}, {v} -> {o}\n"
    if body_mask:
        s += f"      mask_mod {{\n      ^bb0(%b: index, %h: index, %i: index, %j: index{capsig}):\n" + body_mask + "      }\n"
    if body_score:
        s += f"      score_mod {{\n      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index{capsig}):\n" + body_score + "      }\n"
    s += f"  return %0 : {o}\n}}\n"
    funcs.append(s)
    # The floating-point captures of a score region have gradients.
    if body_score:
        learned[name] = [n for n, t in caps
                         if t.endswith(("xf32>", "xbf16>", "xf16>"))]

PREFIX = """        %c20 = arith.constant 20 : index
        %p = arith.cmpi ult, %j, %c20 : index
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.ori %p, %c : i1
        attn.yield %ok : i1
"""
attn("prefix_lm", PREFIX)
attn("prefix_lm_relu", PREFIX, norm="#attn.pointwise<relu>")
DOC = """        %x = tensor.extract %doc_[%b, %i] : tensor<2x203xi32>
        %y = tensor.extract %doc_[%b, %j] : tensor<2x203xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.andi %same, %c : i1
        attn.yield %ok : i1
"""
attn("document", DOC, caps=[("doc", "tensor<2x203xi32>")])
attn("document_bf16", DOC, caps=[("doc", "tensor<2x203xi32>")], dt="bf16")
attn("rel_bias", body_score="""        %c202 = arith.constant 202 : index
        %d = arith.subi %i, %j : index
        %r = arith.addi %d, %c202 : index
        %t = tensor.extract %tab_[%h, %r] : tensor<4x405xf32>
        %y = arith.addf %s, %t : f32
        attn.yield %y : f32
""", caps=[("tab", "tensor<4x405xf32>")])
attn("alibi", body_score="""        %d = arith.subi %i, %j : index
        %a = math.absi %d : index
        %ai = arith.index_cast %a : index to i64
        %af = arith.sitofp %ai : i64 to f32
        %slope = tensor.extract %sl_[%h] : tensor<4xf32>
        %m = arith.mulf %slope, %af : f32
        %y = arith.subf %s, %m : f32
        attn.yield %y : f32
""", caps=[("sl", "tensor<4xf32>")], body_mask="""        %c = arith.cmpi ule, %j, %i : index
        attn.yield %c : i1
""")
attn("softcap", body_score="""        %c = arith.constant 0.5 : f32
        %x = arith.mulf %s, %c : f32
        %t = math.tanh %x : f32
        %c2 = arith.constant 2.0 : f32
        %y = arith.mulf %t, %c2 : f32
        attn.yield %y : f32
""")
attn("head_mask", """        %c2 = arith.constant 2 : index
        %low = arith.cmpi ult, %h, %c2 : index
        %causal = arith.cmpi ule, %j, %i : index
        %d = arith.subi %i, %j : index
        %a = math.absi %d : index
        %c16 = arith.constant 16 : index
        %win = arith.cmpi sle, %a, %c16 : index
        %ok = arith.select %low, %causal, %win : i1
        attn.yield %ok : i1
""")
attn("batch_lengths", """        %n = tensor.extract %len_[%b] : tensor<2xi32>
        %ni = arith.index_cast %n : i32 to index
        %ok = arith.cmpi slt, %j, %ni : index
        attn.yield %ok : i1
""", caps=[("len", "tensor<2xi32>")])
attn("where_score", body_score="""        %c = arith.cmpi uge, %i, %j : index
        %half = arith.constant 0.5 : f32
        %x = arith.mulf %s, %half : f32
        %y = arith.select %c, %s, %x : f32
        attn.yield %y : f32
""", norm="#attn.pointwise<relu>")
attn("dynamic_prefix", PREFIX, q="tensor<?x4x?x16xf32>", k="tensor<?x2x?x16xf32>", v="tensor<?x2x?x16xf32>")
attn("decode_doc", """        %x = tensor.extract %doc_[%b, %j] : tensor<2x203xi32>
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %e = arith.cmpi eq, %x, %c1 : i32
        %c8 = arith.constant 8 : index
        %first = arith.cmpi ult, %j, %c8 : index
        %ok = arith.ori %e, %first : i1
        attn.yield %ok : i1
""", caps=[("doc", "tensor<2x203xi32>")], q=T(HQ, 1, D))
attn("varlen_prefix", PREFIX, extra_args=", %lk: tensor<2xi32>", extra_ops=" key_lengths(%lk : tensor<2xi32>)")
attn("window_pattern_and_mod", PREFIX, extra_attrs=", pattern = #attn.window<before = 30, after = 0>")
# Kernelized attention with a mask region: the quadratic masked form (the
# linear form cannot see a region's keys).
attn("kernel_prefix", PREFIX, norm="#attn.kernel<elu_plus_one>")

# Built-in patterns and modifiers with their region twins: the twin's
# output must match the reference of the built-in op.
attn("causal_attr", extra_attrs=", pattern = #attn.causal")
attn("causal_twin", """        %ok = arith.cmpi ule, %j, %i : index
        attn.yield %ok : i1
""")
attn("window_attr", extra_attrs=", pattern = #attn.window<before = 30, after = 4>")
attn("window_twin", """        %d = arith.subi %i, %j : index
        %c30 = arith.constant 30 : index
        %cm4 = arith.constant -4 : index
        %lo = arith.cmpi sle, %d, %c30 : index
        %hi = arith.cmpi sge, %d, %cm4 : index
        %ok = arith.andi %lo, %hi : i1
        attn.yield %ok : i1
""")
attn("segments_attr", extra_attrs=", pattern = #attn.segments",
     extra_args=", %doc: tensor<2x203xi32>",
     extra_ops=" segments(%doc : tensor<2x203xi32>)")
attn("segments_twin", """        %x = tensor.extract %doc_[%b, %i] : tensor<2x203xi32>
        %y = tensor.extract %doc_[%b, %j] : tensor<2x203xi32>
        %ok = arith.cmpi eq, %x, %y : i32
        attn.yield %ok : i1
""", caps=[("doc", "tensor<2x203xi32>")])
attn("softcap_attr", extra_attrs=", softcap = 2.0 : f32")
attn("softcap_twin", body_score="""        %c = arith.constant 0.5 : f32
        %x = arith.mulf %s, %c : f32
        %t = math.tanh %x : f32
        %c2 = arith.constant 2.0 : f32
        %y = arith.mulf %t, %c2 : f32
        attn.yield %y : f32
""")
attn("alibi_attr", extra_args=", %sl: tensor<4xf32>",
     extra_ops=" alibi_slopes(%sl : tensor<4xf32>)")
attn("alibi_twin", body_score="""        %d = arith.subi %i, %j : index
        %a = math.absi %d : index
        %ai = arith.index_cast %a : index to i64
        %af = arith.sitofp %ai : i64 to f32
        %slope = tensor.extract %sl_[%h] : tensor<4xf32>
        %m = arith.mulf %slope, %af : f32
        %y = arith.subf %s, %m : f32
        attn.yield %y : f32
""", caps=[("sl", "tensor<4xf32>")])
TWINS = ["causal", "window", "segments", "softcap", "alibi"]

module = os.path.join(work, "mods.mlir")
with open(module, "w") as f:
    f.write("\n".join(funcs))


def npy(name, values, dtype="<i4"):
    path = os.path.join(work, name + ".npy")
    subprocess.run([sys.executable, make_npy, path, "--dtype", dtype,
                    "--shape", str(len(values)),
                    "--values", ",".join(map(str, values))], check=True)
    return path


EXTRA = {
    "batch_lengths": ["--input", "len=" + npy("len", [150, 37])],
    # ALiBi's standard slopes (random ones would give scores in the
    # thousands, where f32 keeps too few digits).
    "alibi": ["--input", "sl=" + npy("sl", [0.25, 0.0625, 0.015625,
                                             0.00390625], "<f4")],
    "varlen_prefix": ["--input", "lk=" + npy("lk", [120, 203])],
    "dynamic_prefix": ["--shape", "q=2x4x111x16", "--shape", "k=2x2x150x16",
                       "--shape", "v=2x2x150x16"],
}
MODES = {"cpu": [], "reference": ["--reference"],
         "gpu": ["--target", "gpu-emulator"]}
names = [f.split("(")[0].split("@")[1] for f in funcs]
names = [n for n in names if not n.endswith(("_attr", "_twin"))]
failed = 0


def case(label, run, ref):
    """Runs attn-run then attn-ref; prints the case's line."""
    global failed
    r = subprocess.run(run, capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run(ref, capture_output=True, text=True)
    if r.returncode == 0:
        print(f"{label}: ok")
    else:
        failed += 1
        print(f"{label}: FAILED\n{r.stdout}{r.stderr}")


for name in names:
    for mode, flags in MODES.items():
        d = os.path.join(work, f"{name}_{mode}")
        out = d + ".npy"
        tol = (["--rtol", "2e-2", "--atol", "2e-2"] if "bf16" in name else
               ["--rtol", "1e-4", "--atol", "1e-5"])
        case(f"{name} {mode}",
             [attn_run, module, "--entry", name, "--random-inputs", "--seed",
              "5", "--save-inputs", d, "--output", out] + flags +
             EXTRA.get(name, []),
             [attn_ref, module, "--entry", name, "--inputs", d, "--compare",
              out] + tol)
# Gradients (attn-run --grad: the reference gradient through the score
# region's derivative and the mask region) against attn-ref's reverse mode.
for name in names:
    d = os.path.join(work, f"{name}_grad")
    outs = []
    for g in ["d_q", "d_k", "d_v"] + [f"d_{n}" for n in learned.get(name, [])]:
        outs += ["--output", os.path.join(d, g + ".npy")]
    tol = (["--rtol", "3e-2", "--atol", "3e-2"] if "bf16" in name else
           ["--rtol", "1e-4", "--atol", "1e-5"])
    case(f"{name} grad",
         [attn_run, module, "--entry", name, "--grad", "--random-inputs",
          "--seed", "3", "--save-inputs", d] + outs + EXTRA.get(name, []),
         [attn_ref, module, "--entry", name, "--inputs", d, "--grad", d] + tol)
# Each twin on the CPU kernels against the reference of the built-in op
# it spells (same inputs: the arguments have the same names).
for t in TWINS:
    d = os.path.join(work, f"{t}_twin")
    out = d + ".npy"
    extra = ["--input", EXTRA["alibi"][1]] if t == "alibi" else []
    case(f"{t} twin",
         [attn_run, module, "--entry", f"{t}_twin", "--random-inputs",
          "--seed", "9", "--save-inputs", d, "--output", out] + extra,
         [attn_ref, module, "--entry", f"{t}_attr", "--inputs", d,
          "--compare", out, "--rtol", "1e-4", "--atol", "1e-5"])
total = len(names) * (len(MODES) + 1) + len(TWINS)
print(f"cases: {total - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
