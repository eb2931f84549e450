#!/usr/bin/env bash
# Varlen batches: 8 sequences with lengths drawn uniformly from [128, 2048]
# (seeded), causal softmax attention, H=8, D=64, f32, computed
#   packed   - as one packed batch (query_offsets / key_offsets, cu_seqlens),
#   padded   - padded to 4096 with query_lengths / key_lengths,
#   one by one - each sequence alone (B=1, its own length) from one compiled
#              dynamic module; the time is the sum over the sequences,
#   no lengths - padded to 4096 and computed without lengths (B=8, L=4096).
# Prints the best of VARLEN_ROUNDS rounds (alternating the variants) and the
# ratios packed / one-by-one and no-lengths / packed.
#
#   bench/varlen.sh
#
# Environment: VARLEN_THREADS (2), VARLEN_ROUNDS (3), VARLEN_SEED (0).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
threads="${VARLEN_THREADS:-2}"
rounds="${VARLEN_ROUNDS:-3}"
seed="${VARLEN_SEED:-0}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

read -r -a lens <<< "$(python3 -c "
import random
r = random.Random($seed)
print(' '.join(str(r.randint(128, 2048)) for _ in range(8)))")"
total=0 offsets=0
for l in "${lens[@]}"; do total=$((total + l)); offsets+=",$total"; done
echo "lengths: ${lens[*]} (total $total)"
mkdir -p "$dir/packed" "$dir/padded"
python3 "$root/test/Runner/Inputs/make_npy.py" "$dir/packed/cq.npy" --dtype '<i4' --shape 9 --values "$offsets"
cp "$dir/packed/cq.npy" "$dir/packed/ck.npy"
lengths="$(IFS=,; echo "${lens[*]}")"
python3 "$root/test/Runner/Inputs/make_npy.py" "$dir/padded/lq.npy" --dtype '<i4' --shape 8 --values "$lengths"
cp "$dir/padded/lq.npy" "$dir/padded/lk.npy"

attrs='{normalizer = #attn.softmax, pattern = #attn.causal}'
cat > "$dir/packed.mlir" <<MLIR
func.func @packed(%query: tensor<1x8x?x64xf32>, %key: tensor<1x8x?x64xf32>, %value: tensor<1x8x?x64xf32>, %cq: tensor<9xi32>, %ck: tensor<9xi32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<9xi32>) key_offsets(%ck : tensor<9xi32>) $attrs
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}
MLIR
cat > "$dir/padded.mlir" <<MLIR
func.func @padded(%query: tensor<8x8x4096x64xf32>, %key: tensor<8x8x4096x64xf32>, %value: tensor<8x8x4096x64xf32>, %lq: tensor<8xi32>, %lk: tensor<8xi32>) -> tensor<8x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<8xi32>) key_lengths(%lk : tensor<8xi32>) $attrs
      : tensor<8x8x4096x64xf32>, tensor<8x8x4096x64xf32>, tensor<8x8x4096x64xf32> -> tensor<8x8x4096x64xf32>
  return %0 : tensor<8x8x4096x64xf32>
}
MLIR
cat > "$dir/dynamic.mlir" <<MLIR
func.func @dynamic(%query: tensor<?x8x?x64xf32>, %key: tensor<?x8x?x64xf32>, %value: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.attention %query, %key, %value $attrs
      : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}
MLIR
cat > "$dir/nolengths.mlir" <<MLIR
func.func @nolengths(%query: tensor<8x8x4096x64xf32>, %key: tensor<8x8x4096x64xf32>, %value: tensor<8x8x4096x64xf32>) -> tensor<8x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value $attrs
      : tensor<8x8x4096x64xf32>, tensor<8x8x4096x64xf32>, tensor<8x8x4096x64xf32> -> tensor<8x8x4096x64xf32>
  return %0 : tensor<8x8x4096x64xf32>
}
MLIR

run() { # FILE [options] -> the medians of each run, one per line
  local file="$1"; shift
  "$build/bin/attn-run" "$file" --random-inputs --bench 3 --threads "$threads" "$@" 2>/dev/null |
    sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p'
}
shapes() { local s=""; for l in "${lens[@]}"; do s+="${s:+,}1x8x${l}x64"; done; echo "$s"; }
one="$(shapes)"
: > "$dir/t.packed"; : > "$dir/t.padded"; : > "$dir/t.one"; : > "$dir/t.none"
for ((r = 0; r < rounds; r++)); do
  run "$dir/packed.mlir" --shape "query=1x8x${total}x64" --shape "key=1x8x${total}x64" \
    --shape "value=1x8x${total}x64" --input "cq=$dir/packed/cq.npy" \
    --input "ck=$dir/packed/ck.npy" >> "$dir/t.packed"
  run "$dir/padded.mlir" --input "lq=$dir/padded/lq.npy" --input "lk=$dir/padded/lk.npy" >> "$dir/t.padded"
  run "$dir/dynamic.mlir" --shape "query=$one" --shape "key=$one" --shape "value=$one" |
    awk '{ s += $1 } END { print s }' >> "$dir/t.one"
  run "$dir/nolengths.mlir" >> "$dir/t.none"
done
best() { sort -g "$1" | head -1; }
p="$(best "$dir/t.packed")" d="$(best "$dir/t.padded")" o="$(best "$dir/t.one")" n="$(best "$dir/t.none")"
echo "| packed ms | padded with lengths ms | one by one (sum) ms | padded without lengths ms | packed / one-by-one | no-lengths / packed |"
echo "|---|---|---|---|---|---|"
awk -v p="$p" -v d="$d" -v o="$o" -v n="$n" \
  'BEGIN { printf "| %.1f | %.1f | %.1f | %.1f | %.3f | %.2f |\n", p, d, o, n, p / o, n / p }'
