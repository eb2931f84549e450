#!/usr/bin/env python3
"""Lists the C++ functions longer than a limit.

    utils/function-lengths.py [--max N] [--top K] PATH...

Every .cpp and .h file under each PATH is read; a function is a brace
block whose header (the text since the previous `;`, `{` or `}` at the
same depth) has a parameter list and is not a class, struct, union, enum
or namespace. Its length is the lines from the `{` to the `}`, both
counted; lambdas and local classes count toward the function around them.
Exits 1 when a function is longer than --max (default 150) and prints
each, longest first; --top K prints the K longest whatever their length.
"""

import argparse
import os
import re
import sys

KEYWORDS = re.compile(r"\b(class|struct|union|enum|namespace)\b")
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")


def strip(text):
    """The text with comments, strings and character literals blanked
    (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = ")" + (m.group(1) if m else "") + '"'
            j = text.find(end, i)
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(length, first line, header) of every function of `path`."""
    with open(path, errors="replace") as f:
        text = strip(f.read())
    # Preprocessor lines are not code here.
    text = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), text)
    found = []
    # The stack of open blocks: (is the function body, start offset).
    stack = []
    header_start = 0
    in_function = 0
    for i, c in enumerate(text):
        if c == "{":
            header = text[header_start:i]
            is_function = (
                in_function == 0
                and "(" in header
                and not KEYWORDS.search(header)
                and not CONTROL.match(header)
                and not header.rstrip().endswith("=")
            )
            stack.append((is_function, i, header))
            if is_function:
                in_function += 1
            header_start = i + 1
        elif c == "}":
            if stack:
                is_function, start, header = stack.pop()
                if is_function:
                    in_function -= 1
                    first = text.count("\n", 0, start) + 1
                    last = text.count("\n", 0, i) + 1
                    name = " ".join(header.split())[-90:]
                    found.append((last - first + 1, first, name))
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max", type=int, default=150)
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    everything = []
    for root in args.paths:
        walk = [(root, [], [os.path.basename(root)])] if os.path.isfile(root) \
            else os.walk(root)
        for dirpath, _, files in walk:
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = dirpath if os.path.isfile(dirpath) else \
                    os.path.join(dirpath, name)
                for length, line, header in functions(path):
                    everything.append((length, f"{path}:{line}", header))
    everything.sort(reverse=True)
    too_long = [f for f in everything if f[0] > args.max]
    shown = everything[: args.top] if args.top else too_long
    for length, where, header in shown:
        print(f"{length:5d} {where}  {header}")
    if too_long:
        print(f"{len(too_long)} function(s) over {args.max} lines",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
