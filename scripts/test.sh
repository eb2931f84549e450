#!/usr/bin/env bash
# Builds attn-opt and runs every test: the format check (clang-format-22),
# the lit suite (IR, verifier, plugin, integration tests) and the GoogleTest
# unit tests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/deps.sh"
"$root/scripts/build.sh"

status=0
echo "== format"
"$root/scripts/format.sh" --check || status=1
echo "== lit"
/usr/lib/llvm-22/bin/lit ${LIT_OPTS:--sv} "$build/test" || status=1
echo "== unit tests"
"$build/bin/AttnUnitTests" --gtest_brief=1 || status=1
exit $status
