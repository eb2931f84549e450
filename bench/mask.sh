#!/usr/bin/env bash
# Mask tensors classified at run time: softmax attention (B=1, H=8, D=64,
# f32) at length L with a run-time boolean mask `L x L` passed as an input:
#   all-true - every entry true (every block is visited, unmasked),
#   band     - a band of MASK_BAND keys around the diagonal (|i - j| <
#              band / 2, plus the diagonal's right neighbour when even),
#   pattern  - the same band as #attn.window (no mask tensor),
#   no mask  - dense attention without a mask.
# Prints the median of each (--bench MASK_RUNS) and the ratios
# all-true / band and band / pattern.
#
#   bench/mask.sh [L]
#
# Environment: MASK_THREADS (2), MASK_RUNS (5), MASK_BAND (256).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
len="${1:-4096}"
threads="${MASK_THREADS:-2}"
runs="${MASK_RUNS:-5}"
band="${MASK_BAND:-256}"
before=$(((band - 1) / 2))
after=$((band - 1 - before))
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# Boolean .npy masks without numpy: the header, then one byte per entry.
python3 - "$dir" "$len" "$before" "$after" <<'PY'
import sys
d, n, before, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def save(path, rows):
    head = "{'descr': '|b1', 'fortran_order': False, 'shape': (%d, %d), }" % (n, n)
    head += " " * (63 - (10 + len(head)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head.encode())
        for r in rows:
            f.write(r)
save(d + "/all.npy", (b"\x01" * n for _ in range(n)))
def band_row(i):
    lo, hi = max(0, i - before), min(n - 1, i + after)
    return b"\x00" * lo + b"\x01" * (hi - lo + 1) + b"\x00" * (n - 1 - hi)
save(d + "/band.npy", (band_row(i) for i in range(n)))
PY

shape="1x8x${len}x64xf32"
types="tensor<$shape>, tensor<$shape>, tensor<$shape> -> tensor<$shape>"
cat > "$dir/mask.mlir" <<MLIR
func.func @masked(%query: tensor<$shape>, %key: tensor<$shape>, %value: tensor<$shape>, %mask: tensor<${len}x${len}xi1>) -> tensor<$shape> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<${len}x${len}xi1>) {normalizer = #attn.softmax}
      : $types
  return %0 : tensor<$shape>
}
MLIR
cat > "$dir/pattern.mlir" <<MLIR
func.func @pattern(%query: tensor<$shape>, %key: tensor<$shape>, %value: tensor<$shape>) -> tensor<$shape> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = $before, after = $after>}
      : $types
  return %0 : tensor<$shape>
}
MLIR
cat > "$dir/dense.mlir" <<MLIR
func.func @dense(%query: tensor<$shape>, %key: tensor<$shape>, %value: tensor<$shape>) -> tensor<$shape> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : $types
  return %0 : tensor<$shape>
}
MLIR

read -r all _ <<< "$(bench_one "$dir/mask.mlir" "$threads" "$runs" --input mask="$dir/all.npy")"
read -r bandt _ <<< "$(bench_one "$dir/mask.mlir" "$threads" "$runs" --input mask="$dir/band.npy")"
read -r pat _ <<< "$(bench_one "$dir/pattern.mlir" "$threads" "$runs")"
read -r dense _ <<< "$(bench_one "$dir/dense.mlir" "$threads" "$runs")"
echo "| L | all-true mask ms | band-$band mask ms | band as pattern ms | no mask ms | all-true / band | band / pattern |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
awk -v l="$len" -v a="$all" -v b="$bandt" -v p="$pat" -v d="$dense" \
  'BEGIN { printf "| %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", l, a, b, p, d, a / b, b / p }'
