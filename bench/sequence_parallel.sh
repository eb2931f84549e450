#!/usr/bin/env bash
# Sequence-parallel attention (docs/SequenceParallel.md): the same sharded
# module on 1 rank x 1 thread and on 2 ranks x 1 thread (MPICH's
# mpiexec.hydra), alternating round by round. Prints each configuration's
# median call time (a call lasts as long as its slowest rank) and the
# speed-up of 2 ranks over 1.
#
#   bench/sequence_parallel.sh
#
# Environment: SP_L (default 8192), SP_ROUNDS (3), SP_EXAMPLES
# (softmax_causal sliding_window), SP_RANKS (2).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
run="${ATTN_RUN:-$root/build/bin/attn-run}"
mpiexec="$(command -v mpiexec.hydra || command -v mpiexec.mpich)"
l="${SP_L:-8192}"
rounds="${SP_ROUNDS:-3}"
ranks="${SP_RANKS:-2}"
examples="${SP_EXAMPLES:-softmax_causal sliding_window}"
shape="1x8x${l}x64"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
one() { # ranks example
  "$mpiexec" -n "$1" "$run" "$root/examples/sharded/$2.mlir" --random-inputs \
    --shape "q=$shape" --shape "k=$shape" --shape "v=$shape" --threads 1 \
    --bench 3 2>/dev/null | sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p'
}
echo "| example | L | 1 rank ms | $ranks ranks ms | speed-up |"
echo "|---|---|---|---|---|"
for e in $examples; do
  one_rank=(); many=()
  for ((r = 0; r < rounds; r++)); do
    one_rank+=("$(one 1 "$e")")
    many+=("$(one "$ranks" "$e")")
  done
  a="$(printf '%s\n' "${one_rank[@]}" | median)"
  b="$(printf '%s\n' "${many[@]}" | median)"
  echo "| $e | $l | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", a / b}') |"
done
