#!/usr/bin/env bash
# attn-opt against PyTorch peers on the efficient variants (issue 16) in one
# run: each example (examples/generate.py at the given lengths) through
# attn-run --bench, then bench/variants_torch.py at the same length and
# thread count, alternately, and the ratio peer / attn-opt.
#
#   bench/variants.sh [--L 1024,4096,16384] [--threads 2] [--runs 5]
#                     [--only linear_elu,lsh,...]
#
# The peers run on Debian's python3-torch (/usr/bin/python3, as
# ../shared/peers does; PEERS_PYTHON overrides). Without PyTorch
# ($python -c 'import torch' fails) the peer column says
# "n/a". Peak memory is attn-run's maximum resident set.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
lengths=4096 threads=2 runs=5
only="linear_elu,linear_elu_causal,favor,lowrank,lsh,relative,softmax"
while (($#)); do
  case "$1" in
    --L) lengths="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench/variants.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
have_torch=1
python="${PEERS_PYTHON:-/usr/bin/python3}"
"$python" -c 'import torch' 2>/dev/null || have_torch=0
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "attn-run --bench $runs vs PyTorch, $threads threads, B=1, H=8, D=64, f32"
echo
echo "| variant | L | attn-opt ms | GFLOP/s | peak MiB | PyTorch ms | PyTorch / attn-opt |"
echo "|---|---|---|---|---|---|---|"
IFS=, read -r -a ls <<< "$lengths"
IFS=, read -r -a vs <<< "$only"
for l in "${ls[@]}"; do
  mkdir -p "$dir/$l"
  examples_at "$l" "$dir/$l" > /dev/null
  for v in "${vs[@]}"; do
    read -r ms gf mib <<< "$(bench_one "$dir/$l/$v.mlir" "$threads" "$runs")"
    peer="n/a" ratio="-"
    if [ "$have_torch" = 1 ] && [ "$v" != softmax ]; then
      peer="$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$python" "$root/bench/variants_torch.py" --L "$l" --threads "$threads" \
        --runs "$runs" --only "$v" | awk '{print $2}')"
      ratio="$(awk -v p="$peer" -v a="$ms" 'BEGIN { if (a > 0) printf "%.1fx", p / a }')"
    fi
    echo "| $v | $l | $ms | $gf | $mib | $peer | $ratio |"
  done
done
