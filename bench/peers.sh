#!/usr/bin/env bash
# Runs the peers benchmark (../shared/peers: PyTorch, ONNX Runtime, OpenBLAS
# and oneDNN C++, the machine's FMA and sgemm rates) with attn-opt added
# through its extra/ hook, in one run, then prints the peers' report and
# attn-opt's ratios.
#
#   bench/peers.sh [--peers DIR] [--install]
#
# Environment: PEERS_L (default 1024,4096), PEERS_THREADS (default "1 2"),
# as for the peers' run.sh. The peers folder is copied to a scratch folder
# (it may be read-only); --install installs the peers' packages first (root).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="$root/../shared/peers"
install=""
while (($#)); do
  case "$1" in
    --peers) peers="$2"; shift 2 ;;
    --install) install="--install"; shift ;;
    *) echo "bench/peers.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work="${PEERS_WORK:-$(mktemp -d)}"
cp -r "$peers/." "$work/"
export PEERS_L="${PEERS_L:-1024,4096}"
export PEERS_THREADS="${PEERS_THREADS:-1 2}"
export PEERS_EXTRA_DIR="$root/bench/peers"
(cd "$work" && bash run.sh $install)
echo
for t in $PEERS_THREADS; do
  for l in ${PEERS_L//,/ }; do
    python3 "$root/bench/peers/ratios.py" "$work/results" --L "$l" --threads "$t"
    echo
  done
done
