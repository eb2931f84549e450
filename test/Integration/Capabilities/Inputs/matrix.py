"""Every feature of attn.attention through every generator of code.

    matrix.py --generator NAME [--generator NAME ...] --bin DIR --work DIR
              [--mpiexec PATH]

The features and what each generator supports come from the compiler's one
list (`attn-compile --capabilities=json`). For each generator and each
feature that applies to a normalizer the generator takes, one small
attention (odd sizes) is built with that feature (and what it needs:
`key_segments` comes with `segments`, `captures` with a mask region, ...);
`test-attn-print-features` must report the cell's features as this script
composed them. Then, by what the list declares for the cell's features:

  - supported: the generator's pass must rewrite the op (no attn.attention,
    or attn.attention_grad, left) and the code must run and agree with the
    reference: `attn-run --check` (the reference lowering) for forward
    generators, the independent float64 reference (`attn-ref --grad`) for
    gradients, `mpiexec -n 2 attn-run --check` for sequence parallelism;
  - refused: the generator's pass must leave the op and say why in the
    list's words (its remark or error names the refused feature's phrase);
    an op of a normalizer the generator does not take is left silently to
    the generator that does.

A feature missing from this script's table of cells fails the test, so a
new feature of the op is walked through every generator as soon as it is
listed. Prints one line per cell and `PASS` when every cell behaved.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

# -- The cells ------------------------------------------------------------

NORMALIZERS = {"softmax": "#attn.softmax", "pointwise": "#attn.pointwise<relu>",
               "kernel": "#attn.kernel<elu_plus_one>"}


class Cell:
    """One attention: B x Hq x Lq x D queries against Hkv heads of Lk keys."""

    def __init__(self, normalizer):
        self.dtype = "f32"
        self.b, self.hq, self.hkv, self.lq, self.lk, self.d = 2, 2, 2, 13, 13, 8
        self.dyn_batch = self.dyn_len = False
        self.normalizer = NORMALIZERS[normalizer]
        self.features = {"normalizer:" + normalizer}
        self.pattern = None
        self.attrs = []
        # (keyword, argument name, type) in the op's operand order.
        self.operands = []
        self.lse = False
        self.mask_mod = self.score_mod = None
        self.captures = []          # (name, type)
        self.paged = None           # (pages, page size)
        self.packed = None          # number of packed sequences
        self.inputs = {}            # argument name -> numpy array
        self.layout = False

    # Types.
    def t(self, *dims, elem=None):
        return "tensor<" + "x".join(str(d) for d in dims) + "x" + \
            (elem or self.dtype) + ">"

    def batch(self):
        return "?" if self.dyn_batch else self.b

    def qlen(self):
        return "?" if self.dyn_len else self.lq

    def klen(self):
        return "?" if self.dyn_len else self.lk

    def qtype(self):
        if self.packed:
            return self.t(1, self.hq, self.packed_rows("q"), self.d)
        return self.t(self.batch(), self.hq, self.qlen(), self.d)

    def kvtype(self):
        if self.paged:
            return self.t(self.paged[0], self.hkv, self.paged[1], self.d)
        if self.packed:
            return self.t(1, self.hkv, self.packed_rows("k"), self.d)
        return self.t(self.batch(), self.hkv, self.klen(), self.d)

    def rtype(self):
        if self.packed:
            return self.t(1, self.hq, self.packed_rows("q"), self.d)
        return self.t(self.batch(), self.hq, self.qlen(), self.d)

    def lsetype(self):
        return self.t(self.batch(), self.hq, self.qlen(), elem="f32")

    def packed_rows(self, which):
        return 31

    def shapes(self):
        """attn-run --shape of the dynamic arguments."""
        out = []
        b, lq, lk = self.b, self.lq, self.lk
        if self.dyn_batch or self.dyn_len:
            out += [f"--shape=q={b}x{self.hq}x{lq}x{self.d}",
                    f"--shape=k={b}x{self.hkv}x{lk}x{self.d}",
                    f"--shape=v={b}x{self.hkv}x{lk}x{self.d}"]
        return out

    def text(self, sharded=False):
        q, kv, r = self.qtype(), self.kvtype(), self.rtype()
        args = [f"%q: {q}", f"%k: {kv}", f"%v: {kv}"]
        args += [f"%{name}: {ty}" for _, name, ty in self.operands]
        args += [f"%{name}: {ty}" for name, ty in self.captures]
        operands = "".join(f" {kw}(%{name} : {ty})"
                           for kw, name, ty in self.operands)
        if self.captures:
            operands += (" captures(" +
                         ", ".join(f"%{n}" for n, _ in self.captures) +
                         " : " + ", ".join(t for _, t in self.captures) + ")")
        attrs = [f"normalizer = {self.normalizer}"]
        if self.pattern:
            attrs.append(f"pattern = {self.pattern}")
        attrs += self.attrs
        results = r + (", " + self.lsetype() if self.lse else "")
        names = "%o, %lse" if self.lse else "%o"
        regions = ""
        caps = "".join(f", %c{n}: {t}" for n, (_, t) in
                       enumerate(self.captures))
        if self.mask_mod:
            regions += ("\n      mask_mod {\n      ^bb0(%b: index, %h: index, "
                        "%i: index, %j: index" + caps + "):\n" +
                        self.mask_mod + "\n      }")
        if self.score_mod:
            regions += ("\n      score_mod {\n      ^bb0(%s: f32, %b: index, "
                        "%h: index, %i: index, %j: index" + caps + "):\n" +
                        self.score_mod + "\n      }")
        q_in, k_in, v_in = "%q", "%k", "%v"
        head, tail = "", ""
        rets = [r] + ([self.lsetype()] if self.lse else [])
        values = ["%o"] + (["%lse"] if self.lse else [])
        if sharded:
            head = ("  %sh = shard.sharding @ranks split_axes = [[], [], [0]] "
                    ": !shard.sharding\n"
                    f"  %qs = shard.shard %q to %sh : {q}\n"
                    f"  %ks = shard.shard %k to %sh : {kv}\n"
                    f"  %vs = shard.shard %v to %sh : {kv}\n")
            q_in, k_in, v_in = "%qs", "%ks", "%vs"
            tail = "".join(f"  %{v[1:]}s = shard.shard {v} to %sh : {t}\n"
                           for v, t in zip(values, rets))
            values = [v + "s" for v in values]
        return ((("shard.grid @ranks(shape = ?)\n") if sharded else "") +
                f"func.func @f({', '.join(args)}) -> ({', '.join(rets)}) {{\n"
                + head +
                f"  {names} = attn.attention {q_in}, {k_in}, {v_in}{operands}"
                f" {{{', '.join(attrs)}}}\n"
                f"      : {q}, {kv}, {kv} -> {results}{regions}\n" + tail +
                f"  return {', '.join(values)} : {', '.join(rets)}\n}}\n")


def ids(rows, seed):
    """Sorted document ids, B x rows."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.integers(0, 3, size=(2, rows)), axis=1).astype(np.int32)


def add_segments(c, separate_keys=False):
    c.pattern = c.pattern or "#attn.segments"
    c.features |= {"operand:segments", "pattern:segments"}
    c.operands.append(("segments", "seg", c.t(c.batch(), c.qlen(),
                                              elem="i32")))
    c.inputs["seg"] = ids(c.lq, 1)
    if separate_keys:
        c.features.add("operand:key_segments")
        c.operands.append(("key_segments", "kseg",
                           c.t(c.batch(), c.klen(), elem="i32")))
        c.inputs["kseg"] = ids(c.lk, 2)


def causal_region(c):
    c.mask_mod = ("        %x = arith.cmpi sle, %j, %i : index\n"
                  "        attn.yield %x : i1")
    c.features.add("region:mask_mod")


def build(feature, normalizer):
    """The cell of `feature` (a key) under `normalizer`, or None when it
    cannot be built there."""
    c = Cell(normalizer)
    kind, name = feature.split(":", 1)
    if kind == "normalizer":
        return c if name == normalizer else None
    c.features.add(feature)
    if feature == "operand:bias":
        c.operands.append(("bias", "bias", c.t(1, c.hq, c.lq, c.lk)))
    elif feature == "operand:gate":
        c.operands.append(("gate", "gate", c.rtype()))
    elif feature == "operand:segments":
        add_segments(c)
    elif feature == "operand:key_segments":
        add_segments(c, separate_keys=True)
    elif feature == "operand:projection":
        c.normalizer = "#attn.kernel<favor, features = 12>"
        c.operands.append(("projection", "proj", c.t(12, c.d)))
    elif feature in ("operand:query_lengths", "operand:key_lengths"):
        which = "query" if feature == "operand:query_lengths" else "key"
        c.operands.append((f"{which}_lengths", "len", c.t(2, elem="i32")))
        c.inputs["len"] = np.array([5, 13], np.int32)
    elif feature in ("operand:query_offsets", "operand:key_offsets"):
        c.packed = 2
        c.features |= {"operand:query_offsets", "operand:key_offsets"}
        c.operands += [("query_offsets", "cq", c.t(3, elem="i32")),
                       ("key_offsets", "ck", c.t(3, elem="i32"))]
        c.inputs["cq"] = np.array([0, 12, 31], np.int32)
        c.inputs["ck"] = np.array([0, 19, 31], np.int32)
    elif feature == "operand:mask":
        c.operands.append(("mask", "mask", c.t(c.lq, c.lk, elem="i1")))
        rng = np.random.default_rng(3)
        c.inputs["mask"] = rng.random((c.lq, c.lk)) < 0.7
    elif feature == "operand:alibi_slopes":
        c.operands.append(("alibi_slopes", "slopes", c.t(c.hq, elem="f32")))
        c.inputs["slopes"] = np.array([0.25, 0.0625], np.float32)
    elif feature == "operand:sinks":
        c.operands.append(("sinks", "sinks", c.t(c.hq, elem="f32")))
    elif feature == "operand:page_table":
        c.paged = (7, 4)
        c.lq = 16
        c.features.add("operand:key_lengths")
        c.operands += [("key_lengths", "len", c.t(2, elem="i32")),
                       ("page_table", "pt", c.t(2, 4, elem="i32"))]
        c.inputs["len"] = np.array([9, 16], np.int32)
        c.inputs["pt"] = np.array([[3, 0, 5, -1], [6, 2, 1, 4]], np.int32)
    elif feature == "operand:captures":
        causal_region(c)
        c.captures.append(("doc", c.t(c.lk, elem="i32")))
        c.inputs["doc"] = np.sort(
            np.random.default_rng(4).integers(0, 3, c.lk)).astype(np.int32)
        c.mask_mod = ("        %x = tensor.extract %c0[%i] : tensor<13xi32>\n"
                      "        %y = tensor.extract %c0[%j] : tensor<13xi32>\n"
                      "        %e = arith.cmpi eq, %x, %y : i32\n"
                      "        attn.yield %e : i1")
    elif feature == "attribute:scale":
        c.attrs.append("scale = 0.3 : f32")
    elif feature == "attribute:qk_norm_eps":
        c.attrs.append("qk_norm_eps = 1.0e-05 : f32")
    elif feature == "attribute:softcap":
        c.attrs.append("softcap = 2.0 : f32")
    elif feature == "attribute:layout":
        c.lq = c.lk = 45
        c.pattern = "#attn.causal"
        c.features.add("pattern:causal")
        c.layout = True
    elif kind == "pattern":
        patterns = {
            "causal": "#attn.causal",
            "window": "#attn.window<before = 3, after = 2>",
            "dilated": "#attn.dilated<before = 6, after = 4, dilation = 2>",
            "global": "#attn.global<[0, 5]>",
            "strided": "#attn.strided<stride = 3>",
            "fixed": "#attn.fixed<stride = 4, c = 1>",
            "random": "#attn.random<blocks = 1, block_size = 4, seed = 7>",
            "block": '#attn.block<size = 4, layout = ["1000", "1100", '
                     '"0110", "1011"]>',
            "union": "#attn.union<[#attn.causal, "
                     "#attn.window<before = 1, after = 3>]>",
            "intersect": "#attn.intersect<[#attn.causal, "
                         "#attn.window<before = 4, after = 0>]>",
            "per_head": "#attn.per_head<[#attn.causal, "
                        "#attn.window<before = 2, after = 2>]>",
        }
        if name == "segments":
            add_segments(c)
        else:
            c.pattern = patterns[name]
        if name in ("union", "intersect", "per_head"):
            c.features |= {"pattern:causal", "pattern:window"}
    elif feature == "region:mask_mod":
        causal_region(c)
    elif feature == "region:score_mod":
        c.score_mod = ("        %t = math.tanh %s : f32\n"
                       "        attn.yield %t : f32")
    elif feature in ("shape:f16", "shape:bf16"):
        c.dtype = name
    elif feature == "shape:dynamic_batch":
        c.dyn_batch = True
    elif feature == "shape:dynamic_lengths":
        c.dyn_len = True
    elif feature == "shape:grouped_heads":
        c.hq = 4
    elif feature == "shape:unequal_lengths":
        c.lq = 7
    elif feature == "shape:lse":
        c.lse = True
    else:
        raise KeyError(feature)
    return c


# -- What the list declares -----------------------------------------------

def refusal(features, generator, used):
    """Capability::refusal over the JSON: (feature key, text) or None."""
    profiles = generator["profiles"]
    order = [f["key"] for f in features]
    phrase = {f["key"]: f["phrase"] for f in features}
    normalizer = next(k for k in order
                      if k in used and k.startswith("normalizer:"))
    profile = profiles.get(normalizer.split(":", 1)[1])
    if profile is None:
        return normalizer, phrase[normalizer]
    for k in order:
        if k in used and k not in profile:
            other = any(k in p for p in profiles.values())
            return k, phrase[k] + (" with " + phrase[normalizer]
                                   if other else "")
    for a, b in generator["conflicts"]:
        if a in used and b in used:
            return a, phrase[a] + " with " + phrase[b]
    return None


# -- Running --------------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.bin = args.bin
        self.work = args.work
        self.mpiexec = args.mpiexec
        os.makedirs(self.work, exist_ok=True)

    def tool(self, name):
        return os.path.join(self.bin, name)

    def run(self, cmd, timeout=300):
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout + p.stderr

    def opt(self, path, passes):
        """attn-opt: (status, IR, diagnostics)."""
        p = subprocess.run([self.tool("attn-opt"), path,
                            "--mlir-print-op-on-diagnostic=false"] + passes,
                           capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr

    def write(self, name, cell, sharded=False):
        path = os.path.join(self.work, name + ".mlir")
        text = cell.text(sharded)
        with open(path, "w") as f:
            f.write(text)
        if cell.layout:
            # The pattern's compile-time layout, attached by the pass.
            rc, out = self.run([self.tool("attn-opt"), path,
                                "--attn-block-sparse=kernels=0 block-q=16 "
                                "block-k=16", "-o", path])
            if rc:
                raise RuntimeError("attaching the layout: " + out)
            # (The printer names the arguments by position.)
            with open(path) as f:
                text = f.read()
            for n, arg in enumerate(("q", "k", "v")):
                text = re.sub(rf"%arg{n}\b", "%" + arg, text)
            with open(path, "w") as f:
                f.write(text)
        inputs = os.path.join(self.work, name + ".in")
        os.makedirs(inputs, exist_ok=True)
        flags = []
        for arg, data in cell.inputs.items():
            file = os.path.join(inputs, arg + ".npy")
            np.save(file, data)
            flags.append(f"--input={arg}={file}")
        return path, flags + cell.shapes()


# generator -> its attn-opt passes (per normalizer; "*": any)
PASSES = {
    "reference": {"*": "--convert-attn-to-linalg"},
    "cpu-kernel": {"softmax": "--attn-flash",
                   "pointwise": "--attn-lower-pointwise",
                   "*": "--attn-flash"},
    "gpu-kernel": {"*": "--convert-attn-to-gpu"},
    "reassociate": {"*": "--attn-reassociate=mode=linear"},
    "reference-gradient": {"*": "--attn-differentiate "
                                "--convert-attn-grad-to-linalg"},
    "fused-backward": {"*": "--attn-differentiate --attn-flash-backward"},
    "linear-gradient": {"*": "--attn-differentiate --convert-attn-grad-to-"
                             "linalg=linear-kernelized=1"},
    "partition-sequence": {"*": "--attn-partition-sequence"},
}
# generator -> the op it rewrites (for the normalizers it does not take)
REWRITES = {"reference-gradient": "attn.attention_grad",
            "fused-backward": "attn.attention_grad",
            "linear-gradient": "attn.attention_grad",
            "partition-sequence": "shard.shard"}


def rewrote(generator, normalizer, rc, ir, remarks):
    """Whether the generator's pass took the op."""
    if rc:
        return False
    if generator == "linear-gradient" and normalizer != "kernel":
        # The same pass lowers the others' gradients quadratically.
        return False
    if generator == "reassociate":
        return "attn-reassociate: linear form" in remarks or \
            "lengths are dynamic: the linear form" in remarks
    if generator == "fused-backward":
        return "fused backward" in remarks
    if generator == "linear-gradient" and "no linear-time gradient" in remarks:
        return False
    return REWRITES.get(generator, "attn.attention ") not in ir


def check_cell(r, caps, generator, feature, normalizer, cell):
    """Runs one cell; returns an error string or None."""
    gen = generator["name"]
    name = f"{gen}.{normalizer}.{feature.replace(':', '.')}"
    path, flags = r.write(name, cell, sharded=gen == "partition-sequence")
    # The cell's features, as the compiler reads them.
    rc, ir, remarks = r.opt(path, ["--test-attn-print-features"])
    m = re.search(r"remark: features: (.*)", remarks)
    if rc or not m:
        return "cannot read its features: " + remarks[-2000:]
    seen = set(m.group(1).split(", "))
    if seen != cell.features:
        return (f"the compiler reads features {sorted(seen)}, the table "
                f"composed {sorted(cell.features)}")
    expected = refusal(caps["features"], generator, seen)
    passes = PASSES[gen]
    rc, ir, remarks = r.opt(path, (passes.get(normalizer) or
                                   passes["*"]).split(" "))
    took = rewrote(gen, normalizer, rc, ir, remarks)
    if expected is None:
        if not took:
            return "declared supported, the pass did not take it: " + \
                remarks[-2000:]
        return run_numbers(r, gen, path, flags, cell)
    key, text = expected
    if took:
        return f"declared refused ({text}), the pass took it"
    if key.startswith("normalizer:"):
        return None
    return None if text in remarks else \
        f"declared refused ({text}), the pass said: " + remarks[-1500:]


def tolerances(cell):
    if cell.dtype == "f32":
        return ["--rtol=1e-3", "--atol=1e-4"]
    return ["--rtol=6e-2", "--atol=6e-2"]


def run_numbers(r, generator, path, flags, cell):
    if generator == "reference":
        return None
    base = [r.tool("attn-run"), path, "--random-inputs", "--seed=3"] + flags
    if generator in ("cpu-kernel", "gpu-kernel", "reassociate"):
        cmd = base + ["--check", "--threads=2"]
        if generator == "gpu-kernel":
            cmd += ["--target=gpu-emulator"]
        if generator == "reassociate":
            cmd += ["--pipeline=attn-lower-to-llvm-pipeline{reassociate="
                    "linear}"]
        rc, out = r.run(cmd)
        return None if rc == 0 else "run: " + out[-2000:]
    if generator == "partition-sequence":
        rc, out = r.run([r.mpiexec, "-n", "2"] + base + ["--check"])
        return None if rc == 0 else "run: " + out[-2000:]
    # Gradients, against the independent float64 reference.
    gdir = path + ".grad"
    os.makedirs(gdir, exist_ok=True)
    outputs = [f"--output={gdir}/d_{n}.npy" for n in ("q", "k", "v")]
    for kw, n, _ in cell.operands:
        if kw in ("bias", "gate", "sinks", "alibi_slopes", "projection"):
            outputs.append(f"--output={gdir}/d_{n}.npy")
    # (The floating-point tensors a score region captures have gradients.)
    if cell.score_mod:
        for n, ty in cell.captures:
            if re.search(r"x(f32|f16|bf16)>$", ty):
                outputs.append(f"--output={gdir}/d_{n}.npy")
    cmd = base + ["--grad", f"--save-inputs={gdir}"] + outputs
    if generator == "reference-gradient":
        cmd.append("--reference")
    rc, out = r.run(cmd)
    if rc:
        return "run: " + out[-2000:]
    rc, out = r.run([r.tool("attn-ref"), path, "--inputs", gdir, "--grad",
                     gdir] + tolerances(cell))
    return None if rc == 0 else "attn-ref: " + out[-2000:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--generator", action="append", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpiexec")
    args = parser.parse_args()
    r = Runner(args)
    rc, out = r.run([r.tool("attn-compile"), "--capabilities=json"])
    caps = json.loads(out)
    keys = [f["key"] for f in caps["features"]]
    failures = 0
    for key in keys:
        try:
            build(key, "softmax" if not key.startswith("normalizer:")
                  else key.split(":")[1])
        except KeyError:
            print(f"no cell for feature {key}: add one to {__file__}")
            failures += 1
    for generator in caps["generators"]:
        if generator["name"] not in args.generator:
            continue
        for key in keys:
            # The normalizer to try the feature with: the first the
            # generator takes where the feature applies.
            normalizer = next(
                (n for n in ("softmax", "pointwise", "kernel")
                 if n in generator["profiles"] and
                 key in generator["applicable"][n] and
                 (not key.startswith("normalizer:") or
                  key == "normalizer:" + n)), None)
            if normalizer is None and key.startswith("normalizer:"):
                # A normalizer it does not take: left alone.
                normalizer = key.split(":")[1]
                if key not in generator["applicable"][normalizer]:
                    continue
            if normalizer is None:
                print(f"{generator['name']} {key}: n/a")
                continue
            cell = build(key, normalizer)
            if cell is None:
                continue
            try:
                error = check_cell(r, caps, generator, key, normalizer, cell)
            except subprocess.TimeoutExpired:
                error = "timed out"
            verdict = refusal(caps["features"], generator, cell.features)
            what = "runs" if verdict is None else "refuses"
            if error:
                failures += 1
                print(f"{generator['name']} {key} ({normalizer}): FAIL: "
                      f"{error}")
            else:
                print(f"{generator['name']} {key} ({normalizer}): {what}")
            sys.stdout.flush()
    print("PASS" if failures == 0 else f"{failures} FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
