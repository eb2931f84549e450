#!/usr/bin/env python3
"""Prints the attn-launch options of a function: its name, argument and
result types, and the source names of its arguments (as attn-run
--save-inputs names the files).

    bench/gpu/signature.py FILE.mlir ENTRY
      -> --entry ENTRY --arg bf16:1x2x256x128 ... --result ... --names q,k,v
"""
import re
import sys


def tensor(t):
    m = re.fullmatch(r"tensor<([0-9x]+)x(\w+)>", t.strip())
    if not m:
        sys.exit(f"signature.py: unsupported type {t}")
    return f"{m.group(2)}:{m.group(1)}"


def main():
    path, entry = sys.argv[1], sys.argv[2]
    text = open(path).read()
    m = re.search(r"func\.func @" + re.escape(entry) +
                  r"\((.*?)\)\s*->\s*\(?(tensor<[^>]*>)", text, re.S)
    if not m:
        sys.exit(f"signature.py: no function @{entry} in {path}")
    args = re.findall(r"%(\w+)\s*:\s*(tensor<[^>]*>)", m.group(1))
    out = [f"--entry {entry}"]
    out += [f"--arg {tensor(t)}" for _, t in args]
    out.append(f"--result {tensor(m.group(2))}")
    out.append("--names " + ",".join(n for n, _ in args))
    print(" ".join(out))


if __name__ == "__main__":
    main()
