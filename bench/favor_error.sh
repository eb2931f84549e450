#!/usr/bin/env bash
# Measures how far FAVOR+ (attn-approximate-softmax{features=m}) is from
# exact softmax attention: B=1, H=8, D=64, inputs N(0, X^2) (X = 1 by
# default), scale 1/8,
# for several feature counts, against the scalar reference of the exact op.
#
#   bench/favor_error.sh [--length L] [--features 64,256,1024] [--seed S]
#                        [--input-scale X]
#
# Prints, per m, the normwise relative error max|o - o*| / max|o*| and the
# Frobenius relative error |o - o*|_F / |o*|_F of the output.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
length=1024 features=64,256,1024 seed=1 scale=1
while (($#)); do
  case "$1" in
    --length) length="$2"; shift 2 ;;
    --features) features="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --input-scale) scale="$2"; shift 2 ;;
    *) echo "bench/favor_error.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 "$root/examples/generate.py" --length "$length" --out "$dir" --only softmax
echo "FAVOR+ vs exact softmax, L=$length, H=8, D=64, inputs N(0, $scale^2), scale 1/8"
echo
printf '| %8s | %12s | %12s |\n' features "max rel err" "fro rel err"
printf '|%s|%s|%s|\n' "----------" "--------------" "--------------"
IFS=, read -r -a ms <<< "$features"
for m in "${ms[@]}"; do
  "$build/bin/attn-run" "$dir/softmax.mlir" --random-inputs --seed "$seed" \
    --input-scale "$scale" \
    --pipeline "attn-approximate-softmax{features=$m seed=$seed},attn-lower-to-llvm-pipeline" \
    --save-inputs "$dir/in" --output "$dir/out.npy" > /dev/null
  line="$("$build/bin/attn-ref" "$dir/softmax.mlir" --inputs "$dir/in" \
    --compare "$dir/out.npy" --rtol 1e9 --atol 1e9)"
  rel="$(sed -n 's/.*max_rel_err=\([^ ]*\).*/\1/p' <<< "$line")"
  fro="$(sed -n 's/.*fro_rel_err=\([^ ]*\).*/\1/p' <<< "$line")"
  printf '| %8s | %12s | %12s |\n' "$m" "$rel" "$fro"
done
