#!/usr/bin/env bash
# Pointwise (ReLU) attention against softmax attention in the same pipeline
# and against the reference lowering, at several lengths, in one run.
#
#   bench/pointwise.sh [--lengths 1024,4096,8192] [--runs N] [--no-reference]
#
# Columns: relu and softmax through attn-lower-to-llvm-pipeline at 2 and 1
# threads, relu through the reference lowering (2 threads), peak memory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
lengths=1024,4096,8192 runs=3 reference=1
while (($#)); do
  case "$1" in
    --lengths) lengths="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-reference) reference=0; shift ;;
    *) echo "bench/pointwise.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "relu vs softmax, B=1, H=8, D=64, f32; median of $runs (ms, GFLOP/s, peak MiB)"
echo
printf '| %6s | %-28s | %-28s | %-14s | %-28s | %9s | %9s |\n' L "relu, 2 threads" "softmax, 2 threads" "relu, 1 thread" "relu, reference, 2 threads" "relu/sm" "2t/1t"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' --------- ------------------------------ ------------------------------ ---------------- ------------------------------ ----------- -----------
IFS=, read -r -a ls <<< "$lengths"
for l in "${ls[@]}"; do
  mkdir -p "$dir/$l"
  examples_at "$l" "$dir/$l"
  read -r r2 rg2 rm2 <<< "$(bench_one "$dir/$l/relu.mlir" 2 "$runs")"
  read -r s2 sg2 sm2 <<< "$(bench_one "$dir/$l/softmax.mlir" 2 "$runs")"
  read -r r1 rg1 rm1 <<< "$(bench_one "$dir/$l/relu.mlir" 1 "$runs")"
  ref="-"
  if [ "$reference" = 1 ]; then
    read -r f2 fg2 fm2 <<< "$(bench_one "$dir/$l/relu.mlir" 2 1 --reference)"
    ref="$f2 ms, $fg2, ${fm2} MiB"
  fi
  ratio="$(awk -v a="$s2" -v b="$r2" 'BEGIN { printf "%.2f", a / b }')"
  scale="$(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.2f", a / b }')"
  printf '| %6s | %-28s | %-28s | %-14s | %-28s | %9s | %9s |\n' "$l" \
    "$r2 ms, $rg2, ${rm2} MiB" "$s2 ms, $sg2, ${sm2} MiB" "$r1 ms" "$ref" "$ratio" "$scale"
done
