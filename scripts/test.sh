#!/usr/bin/env bash
# Builds attn-opt and runs every test, stage by stage, each timed:
#   format      clang-format-22 over every C++ file and no function over
#               150 lines in lib/ or tools/ (scripts/format.sh --check):
#               first, before anything is built
#   build       scripts/build.sh
#   lit         the lit suite: IR, verifiers, plugin, integration (every
#               generator against the references), Python, libraries, docs
#   unit        the GoogleTest unit tests, through CTest (ctest -L unit)
#   sanitizers  scripts/sanitize.sh: the compiler built with AddressSanitizer
#               and UBSan, its suites and one integration run per pipeline
#               (ATTN_SANITIZE=0 skips it)
# Fails if any stage fails; the stages after a failed one still run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
lit="${LLVM_PREFIX:-/usr/lib/llvm-22}/bin/lit"

"$root/scripts/deps.sh"

status=0
# stage NAME COMMAND...: runs COMMAND, prints its time, records a failure.
stage() {
  local name="$1" start=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    echo "== $name: passed in $((SECONDS - start)) s"
  else
    echo "== $name: FAILED after $((SECONDS - start)) s"
    status=1
  fi
}

stage format "$root/scripts/format.sh" --check
stage build "$root/scripts/build.sh"
stage lit "$lit" ${LIT_OPTS:--sv} "$build/test"
stage unit ctest --test-dir "$build" -L unit --output-on-failure -j 2
if [ "${ATTN_SANITIZE:-1}" != 0 ]; then
  stage sanitizers env SANITIZE_BUILD_DIR="${SANITIZE_BUILD_DIR:-$build-asan}" \
    "$root/scripts/sanitize.sh"
fi
exit $status
