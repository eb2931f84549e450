#!/usr/bin/env bash
# Installs the Debian 12 packages attn-opt needs, if any is missing.
# Everything comes from Debian's archive: LLVM/MLIR 22 land in /usr/lib/llvm-22.
set -euo pipefail

PACKAGES=(cmake ninja-build python3 llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools clang-22 clang-format-22 libclang-rt-22-dev
          libomp-22-dev libgtest-dev python3-numpy python3-torch
          mpich libmpich-dev python3-mpi4py)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
