#!/usr/bin/env bash
# Block-sparse kernels against the dense masked reference, in one run:
# sliding window (128 keys before and after) plus 2 global tokens at several
# lengths, and BigBird at L = 4096. B=1, H=8, D=64, f32.
#
#   bench/sparse.sh [--lengths 2048,4096,8192,16384] [--runs N] [--threads T]
#                   [--reference-max L]
#
# The reference lowering materializes L x L scores; it is run up to
# --reference-max (default 8192: at 16384 its buffers would need ~26 GiB).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
lengths=2048,4096,8192,16384 runs=3 threads=2 refmax=8192
while (($#)); do
  case "$1" in
    --lengths) lengths="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --reference-max) refmax="$2"; shift 2 ;;
    *) echo "bench/sparse.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

visited() {
  "$build/bin/attn-opt" "$1" --attn-block-sparse=kernels=false -o /dev/null 2>&1 |
    sed -n 's/.*visiting \([0-9]*\) of \([0-9]*\) key blocks.*/\1 \2/p' | head -1
}

row() {
  local name="$1" l="$2" file="$3"
  read -r ms gf mib <<< "$(bench_one "$file" "$threads" "$runs")"
  read -r vis all <<< "$(visited "$file")"
  local frac ref="-" speedup="-"
  frac="$(awk -v a="$vis" -v b="$all" 'BEGIN { printf "%.1f%%", 100 * a / b }')"
  if [ "$l" -le "$refmax" ]; then
    read -r rms rgf rmib <<< "$(bench_one "$file" "$threads" 1 --reference)"
    ref="$rms ms, ${rmib} MiB"
    speedup="$(awk -v a="$rms" -v b="$ms" 'BEGIN { printf "%.1f", a / b }')"
  fi
  printf '| %-15s | %6s | %10s | %8s | %8s | %11s | %-24s | %8s |\n' \
    "$name" "$l" "$ms" "$gf" "$mib" "$frac ($vis)" "$ref" "$speedup"
}

echo "block-sparse kernels vs the dense masked reference, $threads threads, median of $runs"
echo
printf '| %-15s | %6s | %10s | %8s | %8s | %11s | %-24s | %8s |\n' variant L "ms" "GFLOP/s" "peak MiB" "blocks visited" "reference" "speedup"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------------- -------- ------------ ---------- ---------- ------------- -------------------------- ----------
IFS=, read -r -a ls <<< "$lengths"
for l in "${ls[@]}"; do
  mkdir -p "$dir/$l"
  examples_at "$l" "$dir/$l"
  row sliding_window "$l" "$dir/$l/sliding_window.mlir"
done
row bigbird 4096 "$root/examples/bigbird.mlir"
