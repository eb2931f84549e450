#!/usr/bin/env python3
"""Checks the kernels of an MLIR file with ptxas.

Takes the PTX of every gpu.binary in FILE.mlir (gpu-module-to-binary with
format=isa, e.g. attn-lower-to-nvvm-pipeline="chip=sm_90a format=isa"),
assembles each with `ptxas -arch=ARCH -v` and prints one line per kernel:

  <binary>: registers=N spill_stores=S spill_loads=L smem=B

Exits 1 if ptxas rejects a kernel, if a kernel spills (unless
--allow-spills), or if the file holds no PTX. --save DIR keeps the .ptx
files.

usage: ptxas-check.py FILE.mlir --arch sm_90a [--ptxas PATH] [--save DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def unescape(s):
    """Decodes the body of an MLIR string literal (\\XX hex escapes)."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
            elif nxt in "nt":
                out.append(10 if nxt == "n" else 9)
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
            continue
        out.extend(c.encode("utf-8"))
        i += 1
    return out.decode("utf-8")


def kernels(text):
    """(name, ptx) of every gpu.binary object with an assembly."""
    for m in re.finditer(r'gpu\.binary @(\w+)\s*\[(.*?)\]\s*$', text,
                         re.M | re.S):
        for j, a in enumerate(re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"',
                                          m.group(2))):
            yield m.group(1) + ("" if j == 0 else str(j)), unescape(a.group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--arch", required=True)
    p.add_argument("--ptxas", default=os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"))
    p.add_argument("--save")
    p.add_argument("--allow-spills", action="store_true")
    args = p.parse_args()
    text = open(args.file).read()
    found = list(kernels(text))
    if not found:
        sys.exit(f"ptxas-check: no gpu.binary with PTX in {args.file} "
                 "(lower with format=isa)")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.save or tmp
        os.makedirs(out_dir, exist_ok=True)
        for name, ptx in found:
            path = os.path.join(out_dir, name + ".ptx")
            with open(path, "w") as f:
                f.write(ptx)
            r = subprocess.run([args.ptxas, f"-arch={args.arch}", "-v", path,
                                "-o", os.devnull], capture_output=True,
                               text=True)
            log = r.stdout + r.stderr
            if r.returncode != 0:
                print(f"{name}: ptxas FAILED\n{log}")
                ok = False
                continue
            regs = re.search(r"Used (\d+) registers", log)
            spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill "
                               r"loads", log)
            smem = re.search(r"(\d+) bytes smem", log)
            stores = int(spills.group(1)) if spills else 0
            loads = int(spills.group(2)) if spills else 0
            print(f"{name}: registers={regs.group(1) if regs else '?'} "
                  f"spill_stores={stores} spill_loads={loads} "
                  f"smem={smem.group(1) if smem else 0}")
            if (stores or loads) and not args.allow_spills:
                ok = False
    print(f"ptxas-check: {len(found)} kernel(s) for {args.arch}: "
          f"{'ok' if ok else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
