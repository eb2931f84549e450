#!/usr/bin/env bash
# Paged KV cache decode against contiguous decode (the shape of
# bench/decode.sh: B = 4, Hq = 32, Hkv = 8, D = 128, causal, f32, cache
# length Lk, default 8192): contiguous K/V (static), contiguous with
# key_lengths (cache lengths read at run time, as paged decode has them)
# and paged at each page size (default 16 64; the pool holds exactly the
# sequences' pages, the page table a seeded shuffle). Prints the best of
# PAGED_ROUNDS alternating rounds (each the median of PAGED_RUNS calls) and
# each variant's time relative to contiguous.
#
#   bench/paged.sh [Lk] [page...]
#
# Environment: PAGED_THREADS (2), PAGED_RUNS (10), PAGED_ROUNDS (3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
threads="${PAGED_THREADS:-2}"
runs="${PAGED_RUNS:-10}"
rounds="${PAGED_ROUNDS:-3}"
lk="${1:-8192}"
shift || true
pages=("$@")
((${#pages[@]})) || pages=(16 64)
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
make_npy="$root/test/Runner/Inputs/make_npy.py"
q="tensor<4x32x1x128xf32>" kv="tensor<4x8x${lk}x128xf32>"
cat > "$dir/contiguous.mlir" <<MLIR
func.func @decode(%query: $q, %key: $kv, %value: $kv) -> $q {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : $q, $kv, $kv -> $q
  return %0 : $q
}
MLIR
cat > "$dir/lengths.mlir" <<MLIR
func.func @decode(%query: $q, %key: $kv, %value: $kv, %lk: tensor<4xi32>) -> $q {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<4xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : $q, $kv, $kv -> $q
  return %0 : $q
}
MLIR
python3 "$make_npy" "$dir/lk.npy" --dtype '<i4' --shape 4 --values "$lk,$lk,$lk,$lk"
variants=(contiguous lengths)
for p in "${pages[@]}"; do
  n=$((lk / p)) total=$((4 * lk / p))
  pool="tensor<${total}x8x${p}x128xf32>"
  cat > "$dir/paged$p.mlir" <<MLIR
func.func @decode(%query: $q, %key: $pool, %value: $pool, %lk: tensor<4xi32>, %pt: tensor<4x${n}xi32>) -> $q {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<4xi32>) page_table(%pt : tensor<4x${n}xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : $q, $pool, $pool -> $q
  return %0 : $q
}
MLIR
  values="$(python3 -c "import random; p = list(range($total)); random.Random(1).shuffle(p); print(','.join(map(str, p)))")"
  python3 "$make_npy" "$dir/pt$p.npy" --dtype '<i4' --shape "4,$n" --values "$values"
  variants+=("paged$p")
done
for ((r = 0; r < rounds; r++)); do
  for v in "${variants[@]}"; do
    args=()
    [[ "$v" == contiguous ]] || args+=(--input "lk=$dir/lk.npy")
    [[ "$v" == paged* ]] && args+=(--input "pt=$dir/pt${v#paged}.npy")
    read -r ms _ <<< "$(bench_one "$dir/$v.mlir" "$threads" "$runs" "${args[@]}")"
    echo "$ms" >> "$dir/$v.times"
  done
done
base="$(sort -g "$dir/contiguous.times" | head -1)"
echo "| Lk | variant | ms | / contiguous |"
echo "| --- | --- | --- | --- |"
for v in "${variants[@]}"; do
  ms="$(sort -g "$dir/$v.times" | head -1)"
  awk -v l="$lk" -v v="$v" -v ms="$ms" -v b="$base" \
    'BEGIN { printf "| %d | %s | %.1f | %.2f |\n", l, v, ms, ms / b }'
done
