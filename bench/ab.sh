#!/usr/bin/env bash
# A/B comparison of two attn-run builds on the same machine, alternating
# them round by round so both see the same load (this machine is shared and
# noisy: compare ratios, never absolute times across runs).
#
#   bench/ab.sh BASELINE_ATTN_RUN [NEW_ATTN_RUN]
#
# Environment: AB_L (default 1024,4096), AB_THREADS (2), AB_ROUNDS (7),
# AB_VARIANTS (softmax softmax_causal relu sliding_window: example names).
# Prints, per variant and length, the best and the median of each build's
# per-round medians and the ratio new / baseline of both.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
old="${1:?usage: bench/ab.sh BASELINE_ATTN_RUN [NEW_ATTN_RUN]}"
new="${2:-$root/build/bin/attn-run}"
lengths="${AB_L:-1024,4096}"
threads="${AB_THREADS:-2}"
rounds="${AB_ROUNDS:-7}"
variants="${AB_VARIANTS:-softmax softmax_causal relu sliding_window}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

bench() { # binary file -> median ms of 5 timed calls
  "$1" "$2" --random-inputs --bench 5 --threads "$threads" 2>/dev/null |
    sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p'
}

echo "| variant | L | baseline best | new best | new/base (best) | new/base (median of rounds) |"
echo "|---|---|---|---|---|---|"
IFS=, read -r -a ls <<< "$lengths"
for l in "${ls[@]}"; do
  mkdir -p "$dir/$l"
  python3 "$root/examples/generate.py" --length "$l" --out "$dir/$l" > /dev/null
  for v in $variants; do
    file="$dir/$l/$v.mlir"
    : > "$dir/old" ; : > "$dir/new"
    for ((r = 0; r < rounds; r++)); do
      bench "$old" "$file" >> "$dir/old"
      bench "$new" "$file" >> "$dir/new"
    done
    ab_row "$v" "$l" "$dir/old" "$dir/new"
  done
done
