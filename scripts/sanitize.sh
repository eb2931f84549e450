#!/usr/bin/env bash
# Builds attn-opt with AddressSanitizer and UndefinedBehaviorSanitizer into
# ${SANITIZE_BUILD_DIR:-build-asan} and runs the lit suite and the unit
# tests with it (`.ci/run` runs this after scripts/test.sh).
#
# The compiler's own code (passes, verifiers, rewrites, attn-run, attn-ref,
# attn-launch) is instrumented; libMLIR, libLLVM and the JIT-compiled
# kernels are not. Hence:
#   - allow_user_poisoning=0: LLVM's BumpPtrAllocator, inlined into our
#     instrumented code, poisons slab memory that the uninstrumented
#     libMLIR then fills (a false "use-after-poison");
#   - detect_leaks=0: MLIR's process-lifetime registries;
#   - no vptr or function checks (types and function pointers cross into
#     uninstrumented libraries and JIT code);
#   - the plugin tests are unsupported (lit feature `asan`): stock mlir-opt
#     cannot load an instrumented plugin.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SANITIZE_BUILD_DIR:-$root/build-asan}"
jobs="${JOBS:-2}"

# configure_sanitized BUILD_DIR [CMAKE_ARGS...]: a clang-22 build with ASan
# and UBSan (also used by scripts/fuzz.sh).
configure_sanitized() {
  local dir="$1"
  shift
  [ -f "$dir/build.ninja" ] && return 0
  cmake -G Ninja -S "$root" -B "$dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=${LLVM_PREFIX:-/usr/lib/llvm-22}/lib/cmake/mlir \
    "-DLLVM_USE_SANITIZER=Address;Undefined" \
    "-DLLVM_UBSAN_FLAGS=-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all" \
    "$@"
}
[ "${ATTN_SANITIZE_FUNCTIONS_ONLY:-0}" = 1 ] && return 0

configure_sanitized "$build"
cmake --build "$build" -j "$jobs"

export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
echo "== lit (sanitizers)"
${LLVM_PREFIX:-/usr/lib/llvm-22}/bin/lit ${LIT_OPTS:--sv} "$build/test" || status=1
echo "== unit tests (sanitizers)"
"$build/bin/AttnUnitTests" --gtest_brief=1 || status=1
exit $status
