#!/usr/bin/env bash
# Builds attn-opt and runs every test: the format check (clang-format-22),
# the lit suite (IR, verifier, plugin, integration tests) and the GoogleTest
# unit tests; then the same with AddressSanitizer and UBSan
# (scripts/sanitize.sh, in ${BUILD_DIR}-asan; ATTN_SANITIZE=0 skips it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/deps.sh"
"$root/scripts/build.sh"

status=0
echo "== format"
"$root/scripts/format.sh" --check || status=1
echo "== lit"
${LLVM_PREFIX:-/usr/lib/llvm-22}/bin/lit ${LIT_OPTS:--sv} "$build/test" || status=1
echo "== unit tests"
"$build/bin/AttnUnitTests" --gtest_brief=1 || status=1
if [ "${ATTN_SANITIZE:-1}" != 0 ]; then
  SANITIZE_BUILD_DIR="${SANITIZE_BUILD_DIR:-$build-asan}" \
    "$root/scripts/sanitize.sh" || status=1
fi
exit $status
