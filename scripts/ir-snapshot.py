#!/usr/bin/env python3
"""Snapshots the IR attn-opt generates, to show a refactoring changes none.

    scripts/ir-snapshot.py snap BUILD_DIR OUT_DIR
    scripts/ir-snapshot.py compare BEFORE_DIR AFTER_DIR [--renames REV]

`snap` runs, with BUILD_DIR's attn-opt:
  - every `attn-opt` command of every lit RUN line under test/ (the command
    up to its first pipe, lit's substitutions made, %t a fresh directory);
  - every .mlir under test/ through the CPU pipeline (16 and 8 lanes), the
    reference lowering and the GPU pipeline to PTX;
  - every example under examples/ (and examples/graphs) through the
    reference lowering (convert-attn-to-linalg), the CPU pipeline
    (attn-lower-to-llvm-pipeline), the GPU kernels (convert-attn-to-gpu) and
    attn-raise for the graphs;
and writes each command's stdout and stderr (exit code included) to one file
of OUT_DIR named after the input and the command. `compare` lists every file
that differs, is missing or is new, and exits 1 if any does.

Every attn-opt runs with --mlir-disable-threading (with threads, the
order of the module's constant globals varies from run to run). Commands
whose output names a temporary path (%t) are compared after the
path is replaced by `%t`, and the NVPTX back end's compile time
(`LLVMIRToISATimeInMs`) is replaced by N. `compare` names each constant global
of a module after its value and type and sorts their definitions before
comparing (normalize_constants: upstream bufferization numbers them in an
order that depends on memory addresses).

`compare` tells the generated IR (standard output) from the diagnostics
(standard error and the exit status): an output whose IR is the same but
whose remarks or errors changed is listed as "diagnostics differ", apart
from "IR differs". With `--renames REV`, files moved since git revision REV
(`git diff --name-status -M REV`) are compared under their old names.
"""

import concurrent.futures
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_lines(path):
    """The RUN commands of a lit file, continuation lines joined."""
    lines, pending = [], ""
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"RUN:(.*)$", line)
            if not m:
                continue
            text = m.group(1).rstrip()
            if text.endswith("\\"):
                pending += text[:-1] + " "
                continue
            lines.append((pending + text).strip())
            pending = ""
    return lines


def first_command(line):
    """The first command of a pipeline if it is attn-opt, else None."""
    head = re.split(r"(?<![|])\|(?![|])", line)[0].strip()
    if "&&" in head:
        return None
    if head.startswith("not "):
        head = head[4:].strip()
    if not head.startswith("attn-opt "):
        return None
    return head


def substitute(cmd, path, tmp, build):
    subs = {
        "%s": path,
        "%S": os.path.dirname(path),
        "%t": tmp,
        "%attn_src_root": ROOT,
        "%attn_obj_root": build,
        "%attn_lib_dir": os.path.join(build, "lib"),
        "%shlibext": ".so",
    }
    for key in sorted(subs, key=len, reverse=True):
        cmd = cmd.replace(key, subs[key])
    if re.search(r"%[a-zA-Z_{]", cmd):
        return None  # a substitution this script does not make
    return cmd


def execute(cmd, build, tmp):
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env["PATH"]
    try:
        p = subprocess.run(
            cmd, shell=True, env=env, capture_output=True, timeout=300, cwd=tmp
        )
    except subprocess.TimeoutExpired:
        return b"TIMEOUT\n"
    out = p.stdout + b"\n--- stderr ---\n" + p.stderr
    out += b"\n--- exit %d ---\n" % p.returncode
    # The NVPTX back end's timing is no part of the IR.
    out = re.sub(rb"LLVMIRToISATimeInMs = [0-9]+", b"LLVMIRToISATimeInMs = N", out)
    return out.replace(tmp.encode(), b"%t")


def name_of(path, cmd):
    rel = os.path.relpath(path, ROOT).replace("/", "_")
    digest = hashlib.sha1(cmd.replace(ROOT, "<root>").encode()).hexdigest()[:12]
    return f"{rel}.{digest}.txt"


def snap(build, out):
    build = os.path.abspath(build)
    os.makedirs(out, exist_ok=True)
    jobs = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for f in sorted(files):
            if not f.endswith((".mlir", ".test")):
                continue
            path = os.path.join(dirpath, f)
            for line in run_lines(path):
                cmd = first_command(line)
                if cmd:
                    jobs.append((path, cmd))
    # Every lit input through the pipelines that generate code: the CPU
    # pipeline at 16 and 8 lanes, the reference lowering and the GPU
    # pipeline to PTX.
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for f in sorted(files):
            if not f.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, f)
            for flags in (
                "--attn-lower-to-llvm-pipeline",
                "--attn-lower-to-llvm-pipeline=vector-width=8",
                "--convert-attn-to-linalg",
                "--attn-lower-to-nvvm-pipeline=format=isa",
            ):
                jobs.append((path, f"attn-opt %s --split-input-file {flags}"))
    examples = os.path.join(ROOT, "examples")
    for f in sorted(os.listdir(examples)):
        if f.endswith(".mlir"):
            path = os.path.join(examples, f)
            for flags in (
                "--convert-attn-to-linalg",
                "--attn-lower-to-llvm-pipeline",
                "--convert-attn-to-gpu",
            ):
                jobs.append((path, f"attn-opt %s {flags}"))
    for f in sorted(os.listdir(os.path.join(examples, "graphs"))):
        path = os.path.join(examples, "graphs", f)
        jobs.append((path, "attn-opt %s --attn-raise"))
        jobs.append((path, "attn-opt %s --attn-raise --attn-lower-to-llvm-pipeline"))

    def one(job):
        path, cmd = job
        with tempfile.TemporaryDirectory() as tmp:
            real = substitute(cmd, path, os.path.join(tmp, "t"), build)
            if real is None:
                return 0
            # One thread: with several, the pipelines' module-level
            # constants come out in an order that varies from run to run.
            real = real.replace("attn-opt ", "attn-opt --mlir-disable-threading ", 1)
            data = execute(real, build, tmp)
        with open(os.path.join(out, name_of(path, cmd)), "wb") as f:
            f.write(cmd.encode() + b"\n" + data)
        return 1

    jobs_env = int(os.environ.get("JOBS", "2"))
    with concurrent.futures.ThreadPoolExecutor(jobs_env) as pool:
        count = sum(pool.map(one, jobs))
    print(f"{count} outputs written to {out}")


CONSTANT = re.compile(rb"@__constant_[A-Za-z0-9_]+")
BARE_CONSTANT = re.compile(rb"(?<![@A-Za-z0-9_])__constant_[A-Za-z0-9_]+")
DEFINITION = re.compile(rb"^\s*(llvm\.mlir\.global|memref\.global)\b.*@__constant_")


def normalize_constants(data):
    """Names and orders the module's constant globals canonically.

    One-Shot Module Bufferize creates a global for each tensor constant,
    function by function in an order that depends on where the functions
    sit in memory (a map keyed by pointers), and names each after the ones
    before it (`__constant_9xi32_8`): two builds that create the same
    functions may list and number them differently. Bufferization gives
    equal constants one global, so a global is named here after its
    definition (its value and type), and the definitions are sorted by that
    name, module by module.
    """
    out = []
    for module in data.split(b"\n// -----\n"):
        lines = module.split(b"\n")
        key = {}
        for line in lines:
            if DEFINITION.match(line):
                name = CONSTANT.search(line).group(0)
                body = CONSTANT.sub(b"@", line, count=1).strip()
                key[name] = hashlib.sha1(body).hexdigest()[:16].encode()
        rename = lambda m: b"@__constant_" + key.get(m.group(0), m.group(0))
        # The same names in the PTX of a gpu.binary (the globals the
        # kernels read, copied into the GPU module under their names).
        bare = {name[1:]: b"__constant_" + k for name, k in key.items()}
        rename_bare = lambda m: bare.get(m.group(0), m.group(0))
        lines = [BARE_CONSTANT.sub(rename_bare, CONSTANT.sub(rename, line))
                 for line in lines]
        defs = [i for i, line in enumerate(lines) if DEFINITION.match(line)]
        for i, line in zip(defs, sorted(lines[i] for i in defs)):
            lines[i] = line
        out.append(b"\n".join(lines))
    return b"\n// -----\n".join(out)


def renamed_prefixes(rev):
    """{new output-name prefix: old prefix} of the files git saw move since
    `rev` (an output's name starts with its input's path, '/' as '_')."""
    out = subprocess.run(["git", "-C", ROOT, "diff", "--name-status", "-M",
                          rev], capture_output=True, text=True).stdout
    moves, paths = {}, {}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R") and len(parts) == 3:
            moves[parts[2].replace("/", "_") + "."] = \
                parts[1].replace("/", "_") + "."
            paths[parts[2].encode()] = parts[1].encode()
    return moves, paths


def split_output(data):
    """(IR, diagnostics) of an output file: its standard output, and its
    standard error with the exit status."""
    data = normalize_constants(data)
    ir, _, rest = data.partition(b"\n--- stderr ---\n")
    return ir, rest


def compare(before, after, rev=None):
    moves, paths = renamed_prefixes(rev) if rev else ({}, {})

    def old_name(f):
        for new, old in moves.items():
            if f.startswith(new):
                return old + f[len(new):]
        return f

    a = set(os.listdir(before))
    b = {old_name(f): f for f in os.listdir(after)}
    ir_bad = diag_bad = missing = 0
    for f in sorted(a | set(b)):
        if f not in b:
            print(f"missing after: {f}")
            missing += 1
        elif f not in a:
            print(f"new after: {b[f]}")
            missing += 1
        else:
            with open(os.path.join(before, f), "rb") as x, open(
                os.path.join(after, b[f]), "rb"
            ) as y:
                ir_x, diag_x = split_output(x.read())
                data = y.read()
                # Diagnostics name a moved input by its new path.
                for new_path, old_path in paths.items():
                    data = data.replace(new_path, old_path)
                ir_y, diag_y = split_output(data)
            if ir_x != ir_y:
                print(f"IR differs: {b[f]}")
                ir_bad += 1
            elif diag_x != diag_y:
                print(f"diagnostics differ: {b[f]}")
                diag_bad += 1
    print(f"{len(a & set(b))} outputs compared: IR differs in {ir_bad}, "
          f"diagnostics only in {diag_bad}; {missing} missing or new")
    return 1 if ir_bad or diag_bad or missing else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "snap":
        snap(argv[2], argv[3])
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    if len(argv) == 6 and argv[1] == "compare" and argv[4] == "--renames":
        return compare(argv[2], argv[3], argv[5])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
