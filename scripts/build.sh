#!/usr/bin/env bash
# Configures (once) and builds attn-opt into ${BUILD_DIR:-build} with clang-22
# and Ninja, two jobs by default.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="${JOBS:-2}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=${LLVM_PREFIX:-/usr/lib/llvm-22}/lib/cmake/mlir
fi
cmake --build "$build" -j "$jobs"
