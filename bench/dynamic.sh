#!/usr/bin/env bash
# Dynamic-shape code against static code: each variant compiled once with
# static sizes (B=1, H=8, L, D=64) and once with dynamic B and L (run at the
# same L through attn-run --shape), alternating round by round so both see
# the same load. Prints the best and the median per-round median of each and
# the ratios dynamic / static.
#
#   bench/dynamic.sh
#
# Environment: DYN_L (default 4096), DYN_THREADS (2), DYN_ROUNDS (5),
# DYN_VARIANTS (softmax softmax_causal sliding_window relu linear_elu),
# DYN_CALLS (the calls timed per round, after a warm-up; by default as
# many as make about 200 ms, from a first timing of the static code, at
# least 5 and at most 2000: a small case is not a handful of 0.2 ms calls
# whose median the timer's and the scheduler's noise decides). The small
# causal case: DYN_L=256 DYN_VARIANTS=softmax_causal.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
l="${DYN_L:-4096}"
threads="${DYN_THREADS:-2}"
rounds="${DYN_ROUNDS:-5}"
variants="${DYN_VARIANTS:-softmax softmax_causal sliding_window relu linear_elu}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 "$root/examples/generate.py" --length "$l" --out "$dir/static" --only "${variants// /,}"
python3 "$root/examples/generate.py" --dynamic --out "$dir/dynamic" --only "${variants// /,}"
shape="1x8x${l}x64"

echo "| variant | L | static best ms | dynamic best ms | dynamic/static (best) | dynamic/static (median of rounds) |"
echo "|---|---|---|---|---|---|"
for v in $variants; do
  : > "$dir/s"; : > "$dir/d"
  calls="${DYN_CALLS:-}"
  if [ -z "$calls" ]; then
    ms="$(bench_one "$dir/static/$v.mlir" "$threads" 5 | cut -d' ' -f1)"
    calls="$(awk -v ms="$ms" 'BEGIN { n = int(200 / (ms > 0 ? ms : 1)) + 1;
      print (n < 5) ? 5 : (n > 2000) ? 2000 : n }')"
  fi
  for ((r = 0; r < rounds; r++)); do
    bench_one "$dir/static/$v.mlir" "$threads" "$calls" | cut -d' ' -f1 >> "$dir/s"
    bench_one "$dir/dynamic/$v.mlir" "$threads" "$calls" --shape "query=$shape" \
      --shape "key=$shape" --shape "value=$shape" | cut -d' ' -f1 >> "$dir/d"
  done
  ab_row "$v" "$l" "$dir/s" "$dir/d"
done
