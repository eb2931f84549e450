#!/usr/bin/env bash
# The seed's own variants written as linalg graphs (bench/raise_variants.py):
# ReLU attention ((1/L) relu(Q K^T / sqrt(D)) V) and linear attention
# (elu + 1 features, (A V) / (rowsum(A) + eps) with A = phi(Q) phi(K)^T),
# BH = B*H heads of width D at length L, f32, timed (attn-run --bench,
# median of RB_RUNS calls):
#   raised     - attn-lower-to-llvm-pipeline (attn-raise makes each one
#                attn.attention: the fused pointwise kernel, and for linear
#                attention attn-reassociate's linear form);
#   not raised - the same pipeline with raise=false (the graph as written:
#                matrix products, elementwise ops and reductions over the
#                L x L scores).
# Rounds alternate the variants; each variant's best round is reported with
# the ratio not raised / raised and the raised graph's rate (useful flops:
# ReLU 4 L^2 D BH, linear (reassociated) 4 L D^2 BH).
#
#   bench/raise.sh [L] [BH] [D]
#
# Environment: RB_THREADS (2), RB_RUNS (3), RB_ROUNDS (3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
len="${1:-4096}"
heads="${2:-4}"
dim="${3:-64}"
threads="${RB_THREADS:-2}"
runs="${RB_RUNS:-3}"
rounds="${RB_ROUNDS:-3}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 "$root/bench/raise_variants.py" "$dir" --length "$len" --heads "$heads" --dim "$dim"

noraise="$(noraise_pipeline)"

for ((r = 0; r < rounds; r++)); do
  for g in relu linear; do
    read -r ms _ <<< "$(bench_one "$dir/$g.mlir" "$threads" "$runs")"; echo "$ms" >> "$dir/$g.raised"
    read -r ms _ <<< "$(bench_one "$dir/$g.mlir" "$threads" "$runs" --pipeline "$noraise")"; echo "$ms" >> "$dir/$g.plain"
  done
done
echo "| graph | L | BH | D | raised ms | not raised ms | not raised / raised | raised GFLOP/s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for g in relu linear; do
  raised="$(sort -g "$dir/$g.raised" | head -1)" plain="$(sort -g "$dir/$g.plain" | head -1)"
  awk -v g="$g" -v l="$len" -v h="$heads" -v d="$dim" -v r="$raised" -v p="$plain" 'BEGIN {
    flops = g == "relu" ? 4 * l * l * d * h : 4 * l * d * d * h
    printf "| %s | %d | %d | %d | %.2f | %.1f | %.1f | %.0f |\n", g, l, h, d, r, p, p / r, flops / (r * 1e6) }'
done
