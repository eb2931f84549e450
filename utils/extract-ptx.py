#!/usr/bin/env python3
"""Writes the PTX of every gpu.binary in an MLIR file (from
gpu-module-to-binary with format=isa, e.g. attn-lower-to-nvvm-pipeline
format=isa) to OUTDIR/<binary>.ptx, and lists the files written.

usage: extract-ptx.py INPUT.mlir OUTDIR
"""
import os
import re
import sys


def unescape(s):
    """Decodes an MLIR string literal body (\\XX hex escapes, \\\\, \\")."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
                continue
            if nxt == "n":
                out.append(10)
                i += 2
                continue
            if nxt == "t":
                out.append(9)
                i += 2
                continue
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        out.extend(c.encode("utf-8"))
        i += 1
    return out.decode("utf-8")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    os.makedirs(sys.argv[2], exist_ok=True)
    count = 0
    for m in re.finditer(r'gpu\.binary @(\w+)\s*\[(.*?)\]\s*$', text,
                         re.M | re.S):
        name = m.group(1)
        for j, a in enumerate(re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"',
                                          m.group(2))):
            path = os.path.join(sys.argv[2], f"{name}{'' if j == 0 else j}.ptx")
            with open(path, "w") as f:
                f.write(unescape(a.group(1)))
            print(path)
            count += 1
    if count == 0:
        sys.exit("extract-ptx.py: no gpu.binary with PTX (format=isa) in " +
                 sys.argv[1])


if __name__ == "__main__":
    main()
