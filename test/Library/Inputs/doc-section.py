"""Prints the lines of a Markdown file between `<!-- NAME:begin ...-->` and
`<!-- NAME:end -->` (the generated sections the tests compare)."""

import sys

path, name = sys.argv[1], sys.argv[2]
inside = False
with open(path) as f:
    for line in f:
        if line.startswith(f"<!-- {name}:end"):
            inside = False
        if inside:
            sys.stdout.write(line)
        if line.startswith(f"<!-- {name}:begin"):
            inside = True
