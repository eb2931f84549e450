"""Reads `attn-opt --help` on standard input and checks that every pass
and pipeline of attn-opt (test passes, `test-`, aside) is named, in
backquotes, in the document given as the argument. Prints the passes
checked and exits 1 naming the missing ones."""

import re
import sys

with open(sys.argv[1]) as f:
    doc = f.read()
names = sorted({m.group(1) for m in re.finditer(
    r"^\s+--((?:attn|convert-attn)[a-z0-9-]*)\b", sys.stdin.read(),
    re.MULTILINE)})
missing = [n for n in names if f"`{n}`" not in doc]
print(f"{len(names)} passes and pipelines")
for n in missing:
    print(f"not in {sys.argv[1]}: {n}")
sys.exit(1 if missing else 0)
