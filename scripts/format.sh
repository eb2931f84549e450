#!/usr/bin/env bash
# Formats the project's own C++ files with clang-format-22 (the style of
# .clang-format, LLVM's), or with --check reports every file that differs
# and fails. `.ci/run` runs the check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
format="${CLANG_FORMAT:-clang-format-22}"
command -v "$format" > /dev/null || {
  echo "format.sh: $format not found (scripts/deps.sh installs it)" >&2
  exit 2
}
mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
if [ "${1:-}" = "--check" ]; then
  if ! "$format" --dry-run --Werror "${files[@]}"; then
    echo "format.sh: files above differ from clang-format's output;" \
         "run scripts/format.sh" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted as clang-format says"
else
  "$format" -i "${files[@]}"
fi
