#!/usr/bin/env bash
# The example pre-norm Transformer block (examples/graphs/transformer_block.mlir)
# at length L, embedding E, H heads (MLP 4E; f32, causal attention), written
# as linalg ops, timed (attn-run --bench, median of TB_RUNS calls):
#   raised     - attn-lower-to-llvm-pipeline (attention raised to
#                attn.attention; the rest tiled and vectorized),
#   not raised - the same pipeline with raise=false (the attention as
#                written: matmuls, masked softmax),
# and its attention part alone:
#   graph      - the block's attention subgraph (heads split, causal
#                softmax attention, heads merged), raised,
#   op         - the same attention as one attn.attention op.
# Prints the times (the best of TB_ROUNDS alternating rounds, each the
# median of TB_RUNS calls) and the ratios not raised / raised and graph / op.
#
#   bench/transformer.sh [L] [E] [H]
#
# Environment: TB_THREADS (2), TB_RUNS (3), TB_ROUNDS (3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
len="${1:-4096}"
embed="${2:-512}"
heads="${3:-8}"
threads="${TB_THREADS:-2}"
runs="${TB_RUNS:-3}"
rounds="${TB_ROUNDS:-3}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 "$root/bench/transformer_block.py" "$dir" --length "$len" --embed "$embed" --heads "$heads"

noraise="$(noraise_pipeline)"

# Rounds alternate the four variants (this machine is shared: each
# variant's best round median is reported, and the ratios of the bests).
best() { sort -g | head -1; }
for ((r = 0; r < rounds; r++)); do
  read -r ms _ <<< "$(bench_one "$dir/block.mlir" "$threads" "$runs")"; echo "$ms" >> "$dir/raised"
  read -r ms _ <<< "$(bench_one "$dir/block.mlir" "$threads" "$runs" --pipeline "$noraise")"; echo "$ms" >> "$dir/plain"
  read -r ms _ <<< "$(bench_one "$dir/attention.mlir" "$threads" "$runs")"; echo "$ms" >> "$dir/graph"
  read -r ms _ <<< "$(bench_one "$dir/op.mlir" "$threads" "$runs")"; echo "$ms" >> "$dir/op"
done
raised="$(best < "$dir/raised")" plain="$(best < "$dir/plain")"
graph="$(best < "$dir/graph")" op="$(best < "$dir/op")"
echo "| L | E | H | raised ms | not raised ms | attention graph ms | attn.attention ms | not raised / raised | graph / op |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
awk -v l="$len" -v e="$embed" -v h="$heads" -v r="$raised" -v p="$plain" -v g="$graph" -v o="$op" \
  'BEGIN { printf "| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.3f |\n", l, e, h, r, p, g, o, p / r, g / o }'
