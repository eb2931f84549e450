#!/usr/bin/env bash
# A fuzz campaign of attn-opt-fuzz (tools/attn-opt-fuzz): builds it with
# ASan, UBSan and libFuzzer into ${FUZZ_BUILD_DIR:-build-fuzz}, seeds a
# corpus from the lit tests and examples, and fuzzes for SECONDS (default
# 600) with the dictionary utils/fuzz/attn.dict, in JOBS processes
# (libFuzzer's -fork; default 2). Crashes, hangs (> 10 s) and out-of-memory inputs go to
# ${FUZZ_BUILD_DIR}/artifacts/ (each becomes a lit regression test); the
# grown corpus stays in ${FUZZ_BUILD_DIR}/corpus. Exit status 0 means no
# crash was found. RUNS=N stops after N executions (whichever comes
# first).
#
#   scripts/fuzz.sh [SECONDS]
#   ATTN_FUZZ_PIPELINES=none|cpu|all   what runs after verification
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# configure_sanitized from sanitize.sh (its own variables are set again here).
ATTN_SANITIZE_FUNCTIONS_ONLY=1 source "$root/scripts/sanitize.sh"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-600}"
jobs="${JOBS:-2}"

configure_sanitized "$build" -DATTN_ENABLE_FUZZER=ON
cmake --build "$build" --target attn-opt-fuzz -j "$jobs"

# The seed corpus: every .mlir of the tests and examples, split at
# `// -----` (one module per seed: smaller inputs, more executions), each
# part at most 64 kB.
seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds" "$build/corpus" "$build/artifacts"
find "$root/test" "$root/examples" -name '*.mlir' -size -64k | while read -r f; do
  awk -v out="$seeds/$(echo "${f#$root/}" | tr / _)" \
    '/^\/\/ -----/ { n++; next } { print > (out "." (n + 0) ".mlir") }' "$f"
done

export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
cd "$build"
exec "$build/bin/attn-opt-fuzz" "$build/corpus" "$seeds" \
  -dict="$root/utils/fuzz/attn.dict" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -max_len=8192 -fork="$jobs" -runs="${RUNS:--1}" \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1
