#!/usr/bin/env bash
# attn-opt as an "extra" of the LLM peers (../shared/peers/llm): prints one
# JSON line per (variant, threads, L) in their schema, so that attn-opt's
# generated code appears in the same tables, measured in the same run:
#   gqa_decode          B = 4, Hq = 32, Hkv = 8, D = 128, one query against
#                       L cached keys (the decode kernel; causal: the query
#                       is the last position and sees every key)
#   gqa_prefill_causal  B = 1, Hq = 32, Hkv = 8, D = 128, Lq = Lk = L, causal
# f32 and bf16 (the whole op in bf16: a bf16 KV cache for decode; bf16 dot
# products of pairs for prefill where the CPU has AVX512_BF16), [B, H, L, D]
# tensors, random inputs (attn-run --random-inputs).
#
#   LLM_EXTRA_DIR=/path/to/attn-opt/bench/peers/llm bash llm/run_llm.sh
#
# Reads LLM_L_DECODE, LLM_L_PREFILL, PEERS_THREADS and PEERS_MAX_S from
# run_llm.sh (a case whose predicted time per call exceeds PEERS_MAX_S is
# reported as skipped). Each case runs attn-run --bench in its own process.
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
decode_lengths="${LLM_L_DECODE:-1024,4096,8192}"
prefill_lengths="${LLM_L_PREFILL:-1024,2048,4096}"
threads_list="${PEERS_THREADS:-2}"
max_s="${PEERS_MAX_S:-10}"
B_DEC=4 B_PRE=1 HQ=32 HKV=8 D=128
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# case VARIANT L THREADS DTYPE (f32 or bf16): one JSON line.
run_case() {
  local variant="$1" L="$2" threads="$3" dtype="$4" B lq flop bytes=0
  local width=4 name=fp32
  [[ "$dtype" == bf16 ]] && width=2 name=bf16
  if [[ "$variant" == gqa_decode ]]; then
    B=$B_DEC lq=1
    flop=$(awk -v b=$B -v h=$HQ -v l="$L" -v d=$D 'BEGIN { printf "%.0f", 4 * b * h * l * d }')
    bytes=$(awk -v b=$B -v h=$HKV -v l="$L" -v d=$D -v w=$width 'BEGIN { printf "%.0f", 2 * b * h * l * d * w }')
  else
    B=$B_PRE lq=$L
    flop=$(awk -v b=$B -v h=$HQ -v l="$L" -v d=$D 'BEGIN { printf "%.0f", 4 * d * h * b * l * (l + 1) / 2 }')
  fi
  # Predicted time at 20 GFLOP/s (decode: 5 GB/s) against the limit.
  local predicted
  predicted=$(awk -v f="$flop" -v by="$bytes" 'BEGIN { t = f / 20e9; if (by / 5e9 > t) t = by / 5e9; print t }')
  local head="\"kind\": \"attn\", \"variant\": \"$variant\", \"impl\": \"attn-opt\", \"dtype\": \"$name\", \"threads\": $threads, \"L\": $L, \"flop\": $flop"
  ((bytes > 0)) && head+=", \"bytes_kv\": $bytes"
  head+=", \"shapes\": {\"B\": $B, \"Hq\": $HQ, \"Hkv\": $HKV, \"D\": $D, \"Lq\": $lq, \"Lk\": $L}"
  if awk -v p="$predicted" -v m="$max_s" 'BEGIN { exit !(p > m) }'; then
    echo "{$head, \"status\": \"skipped\", \"note\": \"predicted ${predicted}s per call\"}"
    return
  fi
  local q="tensor<${B}x${HQ}x${lq}x${D}x$dtype>" kv="tensor<${B}x${HKV}x${L}x${D}x$dtype>"
  cat > "$dir/case.mlir" <<MLIR
func.func @attention(%query: $q, %key: $kv, %value: $kv) -> $q {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : $q, $kv, $kv -> $q
  return %0 : $q
}
MLIR
  local runs
  runs=$(awk -v p="$predicted" 'BEGIN { r = int(1.5 / (p > 0 ? p : 0.001)); if (r < 5) r = 5; if (r > 25) r = 25; print r }')
  local out line
  if out=$("$build/bin/attn-run" "$dir/case.mlir" --random-inputs --bench "$runs" --threads "$threads" 2>&1); then
    line=$(grep '^bench:' <<< "$out" | tail -1)
    local med min
    med=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")
    min=$(sed -n 's/.*min_ms=\([0-9.]*\).*/\1/p' <<< "$line")
    echo "{$head, \"status\": \"ok\", \"median_ms\": $med, \"min_ms\": $min, \"reps\": $runs}"
  else
    local why
    why=$(tail -1 <<< "$out" | tr '"' "'")
    echo "{$head, \"status\": \"failed\", \"note\": \"$why\"}"
  fi
}

for threads in $threads_list; do
  for dtype in f32 bf16; do
    IFS=, read -r -a ls <<< "$decode_lengths"
    for L in "${ls[@]}"; do run_case gqa_decode "$L" "$threads" "$dtype"; done
    IFS=, read -r -a ls <<< "$prefill_lengths"
    for L in "${ls[@]}"; do run_case gqa_prefill_causal "$L" "$threads" "$dtype"; done
  done
done
