#!/usr/bin/env bash
# Gradients (issue 37): forward, forward + backward (attn-run --grad: for
# softmax @f_grad recomputes the forward with its log-sum-exp; for relu and
# causal_linear it is the backward alone and the sum is reported) and
# PyTorch 1.13 autograd of the same attention
# (bench/grad_torch.py) in one run, B = 1, H = 8, D = 64, f32.
#
#   bench/grad.sh [--L 4096] [--threads 2] [--runs 3] [--peer-runs 1]
#                 [--only softmax,causal,relu,window256,causal_linear]
#                 [--memory-L 16384]
#
# Prints per variant the forward and forward + backward medians, the
# backward's share (their difference) as a multiple of the forward and as
# GFLOP/s counting 10 L^2 D H flop (causal and window: the allowed pairs'
# share; not for the linear-time causal_linear), the peak resident memory of the gradient run, PyTorch's forward +
# backward and the ratio PyTorch / attn-opt. --memory-L runs causal
# softmax's gradient once at that length and prints its peak memory (the
# issue's bar: 1.5 GiB at L = 16384). Without PyTorch the peer column says
# n/a.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
lengths=4096 threads=2 runs=3 peer_runs=1 memory_l=""
only="softmax,causal,relu,window256,causal_linear"
while (($#)); do
  case "$1" in
    --L) lengths="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --peer-runs) peer_runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --memory-L) memory_l="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench/grad.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
python="${PEERS_PYTHON:-/usr/bin/python3}"
have_torch=1
"$python" -c 'import torch' 2>/dev/null || have_torch=0
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# attrs VARIANT: the attn.attention attributes.
attrs() {
  case "$1" in
    softmax) echo '{normalizer = #attn.softmax}' ;;
    causal) echo '{normalizer = #attn.softmax, pattern = #attn.causal}' ;;
    relu) echo '{normalizer = #attn.pointwise<relu>}' ;;
    window256) echo '{normalizer = #attn.softmax, pattern = #attn.window<before = 255, after = 0>}' ;;
    causal_linear) echo '{normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}' ;;
    *) echo "bench/grad.sh: unknown variant $1" >&2; exit 2 ;;
  esac
}

# module VARIANT L FILE
module() {
  local t="tensor<1x8x$2x64xf32>"
  cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t) -> $t {
  %0 = attn.attention %q, %k, %v $(attrs "$1") : $t, $t, $t -> $t
  return %0 : $t
}
MLIR
}

# recomputes VARIANT: 1 if attn-run --grad's @f_grad computes the forward
# too (softmax: its output and log-sum-exp), 0 if it is the backward alone.
recomputes() {
  case "$1" in relu|causal_linear) echo 0 ;; *) echo 1 ;; esac
}

# share VARIANT L: the allowed pairs' share of the L x L scores.
share() {
  awk -v v="$1" -v l="$2" 'BEGIN {
    if (v == "causal" || v == "causal_linear") s = (l + 1) / (2 * l);
    else if (v == "window256") s = (256 * l - 255 * 256 / 2) / (l * l);
    else s = 1;
    print s }'
}

echo "attn-run --bench $runs (forward; forward + backward with --grad) vs PyTorch autograd, $threads threads, B=1, H=8, D=64, f32"
echo
echo "| variant | L | forward ms | fwd+bwd ms | backward / forward | backward GFLOP/s | peak MiB | PyTorch fwd+bwd ms | PyTorch / attn-opt |"
echo "|---|---|---|---|---|---|---|---|---|"
IFS=, read -r -a ls <<< "$lengths"
IFS=, read -r -a vs <<< "$only"
for l in "${ls[@]}"; do
  for v in "${vs[@]}"; do
    module "$v" "$l" "$dir/$v.$l.mlir"
    read -r fwd _ _ <<< "$(bench_one "$dir/$v.$l.mlir" "$threads" "$runs")"
    read -r both _ mib <<< "$(bench_one "$dir/$v.$l.mlir" "$threads" "$runs" --grad)"
    peer="n/a" ratio="-"
    # (The gradient of pointwise and kernelized attention needs no forward
    # output: @f_grad is the backward alone, and forward + backward the sum.)
    [ "$(recomputes "$v")" = 1 ] || both="$(awk -v f="$fwd" -v b="$both" 'BEGIN { print f + b }')"
    if [ "$have_torch" = 1 ]; then
      peer="$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$python" "$root/bench/grad_torch.py" --L "$l" --threads "$threads" \
        --runs "$peer_runs" --only "$v" | awk '{print $2}')"
      ratio="$(awk -v p="$peer" -v a="$both" 'BEGIN { if (a > 0) printf "%.1fx", p / a }')"
    fi
    awk -v v="$v" -v l="$l" -v f="$fwd" -v b="$both" -v m="$mib" -v p="$peer" \
        -v r="$ratio" -v s="$(share "$v" "$l")" -v inc="$(recomputes "$v")" 'BEGIN {
      total = inc ? b : f + b; bw = total - f;
      gf = (bw > 0 && v != "causal_linear") ? sprintf("%.0f", 10.0 * l * l * 64 * 8 * s / (bw * 1e6)) : "-";
      printf "| %s | %d | %.1f | %.1f | %.2f | %s | %s | %s | %s |\n", v, l, f, total,
        (f > 0) ? bw / f : 0, gf, m, p, r }'
  done
done
if [ -n "$memory_l" ]; then
  module causal "$memory_l" "$dir/memory.mlir"
  read -r ms _ mib <<< "$(bench_one "$dir/memory.mlir" "$threads" 1 --grad)"
  echo
  echo "causal softmax forward + backward at L = $memory_l: $ms ms, peak $mib MiB"
fi
