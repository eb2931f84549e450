#!/usr/bin/env bash
# bf16 against f32 softmax attention (B = 1, H = 8, D = 64, L = 4096 by
# default; dense and causal), attn-run's default kernels for this CPU, in
# alternating rounds. On a CPU with AVX512_BF16 the bf16 kernels use
# vdpbf16ps (the remark says "bf16 dot products of pairs (vdpbf16ps)");
# elsewhere bf16 is extended to f32 and this shows what that costs.
#
#   bench/bf16.sh [L]
#
# Environment: BF16_THREADS (2), BF16_RUNS (5), BF16_ROUNDS (2).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
length="${1:-4096}"
threads="${BF16_THREADS:-2}"
runs="${BF16_RUNS:-5}"
rounds="${BF16_ROUNDS:-2}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for pattern in dense causal; do
  attr=""
  [ "$pattern" = causal ] && attr=", pattern = #attn.causal"
  for t in f32 bf16; do
    ty="tensor<1x8x${length}x64x$t>"
    cat > "$dir/${pattern}_$t.mlir" <<MLIR
func.func @attention(%query: $ty, %key: $ty, %value: $ty) -> $ty {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax$attr} : $ty, $ty, $ty -> $ty
  return %0 : $ty
}
MLIR
  done
done
dot="$("$build/bin/attn-run" "$dir/dense_bf16.mlir" --random-inputs --remarks \
  --threads "$threads" 2>&1 >/dev/null |
  grep -o 'bf16 dot products of pairs ([a-z0-9]*)' | head -1 || true)"
echo "bf16 kernels: ${dot:-bf16 extended to f32 (no AVX512_BF16, or not applicable)}"
echo
echo "| pattern | L | f32 ms (best) | bf16 ms (best) | f32 / bf16 |"
echo "| --- | --- | --- | --- | --- |"
for pattern in dense causal; do
  : > "$dir/f32.ms"
  : > "$dir/bf16.ms"
  for _ in $(seq "$rounds"); do
    for t in f32 bf16; do
      read -r ms _ <<< "$(bench_one "$dir/${pattern}_$t.mlir" "$threads" "$runs")"
      echo "$ms" >> "$dir/$t.ms"
    done
  done
  f="$(sort -g "$dir/f32.ms" | head -1)" h="$(sort -g "$dir/bf16.ms" | head -1)"
  awk -v p="$pattern" -v l="$length" -v f="$f" -v h="$h" \
    'BEGIN { printf "| %s | %d | %.1f | %.1f | %.2f |\n", p, l, f, h, f / h }'
done
