#!/usr/bin/env bash
# The demo: a sliding-window + global-token attention module from examples/,
# parsed, verified and printed by attn-opt, with its mask's block picture.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
example="$root/examples/sliding_window.mlir"

echo "== $example through attn-opt"
"$build/bin/attn-opt" "$example"
echo "== its mask in 512x512 tiles (# full, + partial, . empty)"
"$build/bin/attn-opt" "$example" \
  --test-attn-mask-layout="block-q=512 block-k=512" -o /dev/null
