#!/usr/bin/env bash
# Sequence-parallel attention (docs/SequenceParallel.md): the same sharded
# module on 1 rank x 1 thread and on 2 ranks x 1 thread (MPICH's
# mpiexec.hydra), alternating round by round. Prints each configuration's
# median call time (a call lasts as long as its slowest rank), the speed-up
# of 2 ranks over 1 and the bytes each rank hands to MPI per call (the
# counter of attn-lower-communication) next to what ring attention sends
# (every key/value block to every other rank: (P-1) L/P H D 4 B x 2); then
# the bytes of the sliding window at several lengths (halo only: the same
# at every L).
#
#   bench/sequence_parallel.sh
#
# Environment: SP_L (default 8192), SP_ROUNDS (3), SP_EXAMPLES
# (softmax_causal sliding_window), SP_RANKS (2), SP_BYTES_L (4096 8192
# 16384 32768; empty skips the second table), SP_GRAD (1: time the
# backward function @F_grad instead, attn-run --grad: the forward ring, then
# the backward ring; the bytes are both rings').
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
run="${ATTN_RUN:-$root/build/bin/attn-run}"
mpiexec="$(command -v mpiexec.hydra || command -v mpiexec.mpich)"
l="${SP_L:-8192}"
rounds="${SP_ROUNDS:-3}"
ranks="${SP_RANKS:-2}"
examples="${SP_EXAMPLES:-softmax_causal sliding_window}"
grad=()
[ "${SP_GRAD:-0}" = 1 ] && grad=(--grad)
shape="1x8x${l}x64"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
one() { # ranks example [L] -> "median_ms max_rank_bytes"
  local shape="1x8x${3:-$l}x64"
  "$mpiexec" -n "$1" "$run" "$root/examples/sharded/$2.mlir" "${grad[@]}" --random-inputs \
    --shape "q=$shape" --shape "k=$shape" --shape "v=$shape" --threads 1 \
    --bench "${4:-3}" 2>/dev/null | awk '
      /^bench:/ { sub(/.*median_ms=/, ""); sub(/ .*/, ""); ms = $0 }
      /^comm:/ { sub(/.*max_rank=/, ""); sub(/ .*/, ""); bytes = $0 }
      END { print ms, (bytes == "" ? 0 : bytes) }'
}
ring_bytes() { # ranks L (with SP_GRAD: the forward's ring, then the
  # backward's: K, V, dK and dV around it, three times the forward's)
  awk -v p="$1" -v l="$2" -v g="${#grad[@]}" \
    'BEGIN { printf "%.0f", (p - 1) * (l / p) * 8 * 64 * 4 * 2 * (g ? 3 : 1) }'
}
echo "| example | L | 1 rank ms | $ranks ranks ms | speed-up | bytes sent per rank | ring attention |"
echo "|---|---|---|---|---|---|---|"
for e in $examples; do
  one_rank=(); many=(); bytes=0
  for ((r = 0; r < rounds; r++)); do
    one_rank+=("$(one 1 "$e" | cut -d' ' -f1)")
    read -r ms bytes < <(one "$ranks" "$e")
    many+=("$ms")
  done
  a="$(printf '%s\n' "${one_rank[@]}" | median)"
  b="$(printf '%s\n' "${many[@]}" | median)"
  echo "| $e | $l | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", a / b}') | $bytes | $(ring_bytes "$ranks" "$l") |"
done
if [ -n "${SP_BYTES_L-4096 8192 16384 32768}" ]; then
  echo
  echo "| sliding_window, $ranks ranks: L | bytes sent per rank | ring attention |"
  echo "|---|---|---|"
  for n in ${SP_BYTES_L-4096 8192 16384 32768}; do
    read -r ms bytes < <(one "$ranks" sliding_window "$n" 1)
    echo "| $n | $bytes | $(ring_bytes "$ranks" "$n") |"
  done
fi
