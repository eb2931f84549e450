#!/usr/bin/env bash
# LLM decode: one new token per sequence against a KV cache, grouped-query
# heads (B = 4, Hq = 32, Hkv = 8, D = 128, causal, f32; the shape of
# ../shared/peers/llm's gqa_decode), at cache lengths Lk (default 1024 4096
# 8192). Prints per Lk the median time, the K/V bytes read per second and
# their share of the triad bandwidth (DECODE_TRIAD_GBS, GB/s: measure it
# with the peers' `machine_limits triad`; without it the share is left out).
#
#   bench/decode.sh [Lk...]
#
# Environment: DECODE_THREADS (2), DECODE_RUNS (10), DECODE_TRIAD_GBS,
# DECODE_DTYPE (f32; bf16 or f16: the whole op in that type, the K/V bytes
# halved).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
threads="${DECODE_THREADS:-2}"
runs="${DECODE_RUNS:-10}"
triad="${DECODE_TRIAD_GBS:-}"
dtype="${DECODE_DTYPE:-f32}"
case "$dtype" in f32) bytes=4 ;; bf16 | f16) bytes=2 ;; *) echo "DECODE_DTYPE: f32, bf16 or f16" >&2; exit 2 ;; esac
lengths=("$@")
((${#lengths[@]})) || lengths=(1024 4096 8192)
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "| Lk | ms | K/V GB/s | share of triad |"
echo "| --- | --- | --- | --- |"
for lk in "${lengths[@]}"; do
  q="tensor<4x32x1x128x$dtype>" kv="tensor<4x8x${lk}x128x$dtype>"
  cat > "$dir/decode.mlir" <<MLIR
func.func @decode(%query: $q, %key: $kv, %value: $kv) -> $q {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : $q, $kv, $kv -> $q
  return %0 : $q
}
MLIR
  read -r ms _ <<< "$(bench_one "$dir/decode.mlir" "$threads" "$runs")"
  awk -v l="$lk" -v ms="$ms" -v t="$triad" -v w="$bytes" 'BEGIN {
    gbs = 2 * 4 * 8 * l * 128 * w / (ms / 1000) / 1e9
    share = t == "" ? "-" : sprintf("%.0f %%", 100 * gbs / t)
    printf "| %d | %.1f | %.1f | %s |\n", l, ms, gbs, share }'
done
