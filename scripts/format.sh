#!/usr/bin/env bash
# Formats the project's own C++ files with clang-format-22 (the style of
# .clang-format, LLVM's), or with --check reports every file that differs
# and fails, as it does on a function in lib/ or tools/ over 150 lines
# (utils/function-lengths.py). `.ci/run` runs the check first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
format="${CLANG_FORMAT:-clang-format-22}"
command -v "$format" > /dev/null || {
  echo "format.sh: $format not found (scripts/deps.sh installs it)" >&2
  exit 2
}
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
else
  mapfile -t files < <(find include lib tools test unittests \
    \( -name '*.cpp' -o -name '*.h' \) | sort)
fi
if [ "${1:-}" = "--check" ]; then
  if ! "$format" --dry-run --Werror "${files[@]}"; then
    echo "format.sh: files above differ from clang-format's output;" \
         "run scripts/format.sh" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted as clang-format says"
  # And no function of the compiler or the tools over 150 lines.
  if ! python3 utils/function-lengths.py --max 150 lib tools; then
    echo "format.sh: split the functions above (docs/Architecture.md)" >&2
    exit 1
  fi
  echo "format.sh: no function in lib/ or tools/ over 150 lines"
else
  "$format" -i "${files[@]}"
fi
