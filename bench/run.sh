#!/usr/bin/env bash
# Benchmarks every example with attn-run --bench and prints one table.
#
#   bench/run.sh [--runs N] [--threads T] [--length L] [--reference]
#                [--only name,name] [--pipeline-opts OPTS]
#
# --length L regenerates the examples at sequence length L (examples/
# generate.py) in a temporary folder; the default uses examples/ (L = 4096).
# --reference times the reference lowering (convert-attn-to-linalg) instead
# of the default pipeline. Peak memory is the process's maximum resident set
# (/usr/bin/time), compilation included. GFLOP/s counts each op's own FLOP
# count (the FlopCountOpInterface, documented per op).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
runs=3 threads=2 length=4096 reference="" only="" extra=""
while (($#)); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --length) length="$2"; shift 2 ;;
    --reference) reference="--reference"; shift ;;
    --only) only="$2"; shift 2 ;;
    --pipeline-opts) extra="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

dir="$root/examples"
if [ "$length" != 4096 ]; then
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
  python3 "$root/examples/generate.py" --length "$length" --out "$dir"
fi
variants=(softmax softmax_causal relu relu_causal linear_elu linear_elu_causal
          favor sliding_window bigbird sparse_fixed lowrank lsh relative)
if [ -n "$only" ]; then IFS=, read -r -a variants <<< "$only"; fi

mode="default pipeline"
[ -n "$reference" ] && mode="reference lowering"
echo "attn-run --bench $runs, $threads threads, L=$length, B=1, H=8, D=64, f32 ($mode)"
echo
printf '| %-18s | %10s | %9s | %10s |\n' variant "median ms" "GFLOP/s" "peak MiB"
printf '|%s|%s|%s|%s|\n' "--------------------" "------------" "-----------" "------------"
for v in "${variants[@]}"; do
  log="$(mktemp)"
  # shellcheck disable=SC2086
  if /usr/bin/time -f 'peak_kb=%M' -o "$log.time" \
      "$build/bin/attn-run" "$dir/$v.mlir" --random-inputs --bench "$runs" \
      --threads "$threads" $reference $extra > "$log" 2>&1; then
    line="$(grep '^bench:' "$log" | tail -1)"
    ms="$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
    gf="$(sed -n 's/.*gflops=\([0-9.]*\).*/\1/p' <<< "$line")"
    kb="$(sed -n 's/peak_kb=//p' "$log.time")"
    printf '| %-18s | %10s | %9s | %10d |\n' "$v" "$ms" "$gf" "$((kb / 1024))"
  else
    printf '| %-18s | %10s | %9s | %10s |\n' "$v" "failed" "-" "-"
    sed 's/^/    /' "$log" >&2
  fi
  rm -f "$log" "$log.time"
done
