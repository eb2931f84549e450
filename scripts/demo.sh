#!/usr/bin/env bash
# The demo: an attention module from examples/ (Longformer sliding window +
# global tokens, B=1, H=8, L=4096, D=64), printed by attn-opt with its mask's
# block picture, then compiled and run by attn-run: checked against the
# reference lowering and timed on two threads.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
example="$root/examples/sliding_window.mlir"

echo "== $example through attn-opt"
"$build/bin/attn-opt" "$example"
echo "== its mask in 512x512 tiles (# full, + partial, . empty)"
"$build/bin/attn-opt" "$example" \
  --test-attn-print-block-layout="block-q=512 block-k=512" -o /dev/null
echo "== compiled, run, checked against the reference lowering, timed"
"$build/bin/attn-run" "$example" --random-inputs --check --bench 3 --threads 2
