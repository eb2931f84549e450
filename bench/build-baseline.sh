#!/usr/bin/env bash
# Builds attn-run at another revision (default: the commit before this
# branch's work, or the REV given) into DIR, for comparing two builds in one
# benchmark run:
#
#   bench/build-baseline.sh REV DIR
#   ATTN_BASELINE=DIR/build/bin/attn-run PEERS_L=1024,4096 PEERS_THREADS=2 \
#       bench/peers.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rev="${1:?usage: bench/build-baseline.sh REV DIR}"
dir="${2:?usage: bench/build-baseline.sh REV DIR}"
if [ ! -d "$dir/src" ]; then
  git -C "$root" worktree add --detach "$dir/src" "$rev"
fi
BUILD_DIR="$dir/build" "$dir/src/scripts/build.sh"
echo "baseline: $dir/build/bin/attn-run ($(git -C "$dir/src" rev-parse --short HEAD))"
