#!/usr/bin/env bash
# Builds the compiler with AddressSanitizer and UndefinedBehaviorSanitizer
# into ${SANITIZE_BUILD_DIR:-build-asan} and runs, with it, the tests of
# the compiler's own code: every suite that runs passes, verifiers and the
# tools on IR, one integration run per pipeline (the generated code is not
# instrumented, the compiler that generated it is) and the unit tests
# (`.ci/run` runs this after the normal stages, which run everything).
# Only what these tests use is built: attn-opt, attn-run, attn-compile,
# attn-ref, attn-launch and the unit tests (not the plugin, the Python
# package or the install tree, whose tests cannot run instrumented).
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
start=$SECONDS
cmake --build "$build" -j "$jobs" --target attn-opt attn-run attn-compile \
  attn-ref attn-launch AttnUnitTests
echo "== sanitizers: built in $((SECONDS - start)) s"

# The compiler-side suites (test/ mirrors lib/; Runner: attn-run's and
# attn-launch's error paths; Limits: the bounds of every attribute and size).
suites=(Dialect Mask Conversion GPU Codegen Pipelines Emulation Runner Limits
        Docs)
# One integration run per pipeline and generator: the CPU kernels (flash,
# pointwise, block-sparse), kernelized attention (reassociate, the linear
# kernels), raising, the other ops (LSH, Transformer-XL, Linformer),
# gradients (attn-differentiate, the fused backward, the reference
# gradient), sequence parallelism (the MPI host paths: the ring, a run-time
# error ending every rank, the byte counter; SequenceParallel/lit.local.cfg).
smoke=(Integration/softmax.mlir Integration/pointwise.mlir
       Integration/block-sparse.mlir Integration/kernel.mlir
       Integration/decompose.mlir Integration/raise.mlir
       Integration/lsh.mlir Integration/relative.mlir Integration/lowrank.mlir
       Integration/grad.mlir Integration/SequenceParallel)
paths=()
for t in "${suites[@]}" "${smoke[@]}"; do
  paths+=("$build/test/$t")
done

export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
echo "== lit (sanitizers)"
start=$SECONDS
${LLVM_PREFIX:-/usr/lib/llvm-22}/bin/lit ${LIT_OPTS:--sv} "${paths[@]}" ||
  status=1
echo "== lit (sanitizers): $((SECONDS - start)) s"
echo "== unit tests (sanitizers)"
"$build/bin/AttnUnitTests" --gtest_brief=1 || status=1
exit $status
