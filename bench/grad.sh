#!/usr/bin/env bash
# Gradients (issues 37 and 53): forward, forward + backward (attn-run --grad:
# for softmax @f_grad recomputes the forward with its log-sum-exp; for
# pointwise and kernelized attention it is the backward alone and the sum
# is reported) and PyTorch 1.13 autograd of the same attention
# (bench/grad_torch.py, the plain variants) in one run, B = 1, H = 8,
# D = 64, f32 unless the variant says.
#
#   bench/grad.sh [--L 4096] [--threads 2] [--runs 3] [--peer-runs 1]
#                 [--only softmax,causal,relu,window256,causal_linear]
#                 [--memory-L 16384] [--memory-only VARIANTS]
#
# Variants: softmax, causal, relu, window256, causal_linear (elu+1, linear
# time), bf16_causal, causal_segments (4 documents of L/4, segment ids),
# gqa_window_alibi_mod (8 query heads over 2 key/value heads, window 256,
# ALiBi written as a score region over captured slopes), softcap_mod
# (30 tanh(s / 30) as a score region), doc_mask_mod (causal and a mask
# region over captured document ids, 4 documents), t5_table_mod (causal
# and a learned T5 bias table of 8 heads x 128 clamped distances as a
# score region: its gradient too), varlen_packed (causal over 4 packed
# sequences of L/4 tokens, cu_seqlens offsets, the length known at run
# time: one compiled backward for every length). The captured slopes of
# gqa_window_alibi_mod take their gradient as well (attn-differentiate's
# default).
#
# Prints per variant the forward and forward + backward medians, the
# backward's share (their difference) as a multiple of the forward and as
# GFLOP/s counting 10 L^2 D H flop (causal and window: the allowed pairs'
# share; not for the linear-time causal_linear), the peak resident memory of
# the gradient run, PyTorch's forward + backward and the ratio PyTorch /
# attn-opt. --memory-L runs each variant of --memory-only (default: causal)
# forward + backward once at that length and prints its peak memory (the
# issue's bar: 1.5 GiB at L = 16384). Without PyTorch the peer column says
# n/a.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
lengths=4096 threads=2 runs=3 peer_runs=1 memory_l="" memory_only="causal"
only="softmax,causal,relu,window256,causal_linear"
while (($#)); do
  case "$1" in
    --L) lengths="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --peer-runs) peer_runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --memory-L) memory_l="$2"; shift 2 ;;
    --memory-only) memory_only="$2"; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "bench/grad.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
python="${PEERS_PYTHON:-/usr/bin/python3}"
have_torch=1
"$python" -c 'import torch' 2>/dev/null && [ "$peer_runs" -gt 0 ] || have_torch=0
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# attrs VARIANT: the attn.attention attributes of the plain variants.
attrs() {
  case "$1" in
    softmax) echo '{normalizer = #attn.softmax}' ;;
    causal|bf16_causal) echo '{normalizer = #attn.softmax, pattern = #attn.causal}' ;;
    relu) echo '{normalizer = #attn.pointwise<relu>}' ;;
    window256) echo '{normalizer = #attn.softmax, pattern = #attn.window<before = 255, after = 0>}' ;;
    causal_linear) echo '{normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}' ;;
    *) echo "bench/grad.sh: unknown variant $1" >&2; exit 2 ;;
  esac
}

# module VARIANT L FILE
module() {
  local v="$1" l="$2" e=f32
  [ "$v" = bf16_causal ] && e=bf16
  local t="tensor<1x8x$l x64x$e>" kv="tensor<1x8x$l x64x$e>"
  t="${t// /}" kv="${kv// /}"
  case "$v" in
    causal_segments)
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t, %ids: tensor<1x${l}xi32>) -> $t {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<1x${l}xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : $t, $t, $t -> $t
  return %0 : $t
}
MLIR
      ;;
    gqa_window_alibi_mod)
      kv="tensor<1x2x${l}x64xf32>"
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $kv, %v: $kv, %slopes: tensor<8xf32>) -> $t {
  %0 = attn.attention %q, %k, %v captures(%slopes : tensor<8xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 255, after = 0>} : $t, $kv, $kv -> $t
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<8xf32>):
        %d = arith.subi %i, %j : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %a = math.absf %df : f32
        %sl = tensor.extract %c[%h] : tensor<8xf32>
        %m = arith.mulf %sl, %a : f32
        %r = arith.subf %s, %m : f32
        attn.yield %r : f32
      }
  return %0 : $t
}
MLIR
      ;;
    softcap_mod)
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t) -> $t {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : $t, $t, $t -> $t
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 30.0 : f32
        %x = arith.divf %s, %c : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %c : f32
        attn.yield %r : f32
      }
  return %0 : $t
}
MLIR
      ;;
    varlen_packed)
      local d="tensor<1x8x?x64xf32>"
      cat > "$3" <<MLIR
func.func @f(%q: $d, %k: $d, %v: $d, %cq: tensor<5xi32>, %ck: tensor<5xi32>) -> $d {
  %0 = attn.attention %q, %k, %v query_offsets(%cq : tensor<5xi32>) key_offsets(%ck : tensor<5xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : $d, $d, $d -> $d
  return %0 : $d
}
MLIR
      ;;
    t5_table_mod)
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t, %table: tensor<8x128xf32>) -> $t {
  %0 = attn.attention %q, %k, %v captures(%table : tensor<8x128xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : $t, $t, $t -> $t
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<8x128xf32>):
        %d = arith.subi %i, %j : index
        %x = tensor.extract %c[%h, %d] : tensor<8x128xf32>
        %r = arith.addf %s, %x : f32
        attn.yield %r : f32
      }
  return %0 : $t
}
MLIR
      ;;
    doc_mask_mod)
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t, %doc: tensor<${l}xi32>) -> $t {
  %0 = attn.attention %q, %k, %v captures(%doc : tensor<${l}xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : $t, $t, $t -> $t
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %c: tensor<${l}xi32>):
        %x = tensor.extract %c[%i] : tensor<${l}xi32>
        %y = tensor.extract %c[%j] : tensor<${l}xi32>
        %e = arith.cmpi eq, %x, %y : i32
        attn.yield %e : i1
      }
  return %0 : $t
}
MLIR
      ;;
    *)
      cat > "$3" <<MLIR
func.func @f(%q: $t, %k: $t, %v: $t) -> $t {
  %0 = attn.attention %q, %k, %v $(attrs "$v") : $t, $t, $t -> $t
  return %0 : $t
}
MLIR
      ;;
  esac
}

# inputs VARIANT L: attn-run options giving the variant's non-random inputs
# (4 documents of L/4 rows for the segment ids and document ids, ALiBi's
# slopes 2^-(h+1)), written into $dir.
inputs() {
  case "$1" in
    causal_segments|doc_mask_mod)
      local name=ids shape="1,$2"
      [ "$1" = doc_mask_mod ] && name=doc shape="$2"
      "$python" -c "import numpy as np, sys; l = int(sys.argv[1]); np.save(sys.argv[2], (np.arange(l) * 4 // l).astype(np.int32).reshape([int(x) for x in sys.argv[3].split(',')]))" "$2" "$dir/$name.$2.npy" "$shape"
      echo "--input $name=$dir/$name.$2.npy" ;;
    varlen_packed)
      "$python" -c "import numpy as np, sys; l = int(sys.argv[1]); np.save(sys.argv[2], (np.arange(5) * l // 4).astype(np.int32))" "$2" "$dir/offsets.$2.npy"
      echo "--input cq=$dir/offsets.$2.npy --input ck=$dir/offsets.$2.npy --shape q=1x8x$2x64 --shape k=1x8x$2x64 --shape v=1x8x$2x64" ;;
    gqa_window_alibi_mod)
      "$python" -c "import numpy as np, sys; np.save(sys.argv[1], (2.0 ** -np.arange(1, 9)).astype(np.float32))" "$dir/slopes.npy"
      echo "--input slopes=$dir/slopes.npy" ;;
  esac
}

# recomputes VARIANT: 1 if attn-run --grad's @f_grad computes the forward
# too (softmax: its output and log-sum-exp), 0 if it is the backward alone.
recomputes() {
  case "$1" in relu|causal_linear) echo 0 ;; *) echo 1 ;; esac
}

# share VARIANT L: the allowed pairs' share of the L x L scores.
share() {
  awk -v v="$1" -v l="$2" 'BEGIN {
    if (v == "causal" || v == "causal_linear" || v == "bf16_causal" || v == "softcap_mod" || v == "t5_table_mod") s = (l + 1) / (2 * l);
    else if (v == "causal_segments" || v == "doc_mask_mod" || v == "varlen_packed") s = (l / 4 + 1) / (2 * l);
    else if (v == "window256" || v == "gqa_window_alibi_mod") s = (256 * l - 255 * 256 / 2) / (l * l);
    else s = 1;
    print s }'
}

echo "attn-run --bench $runs (forward; forward + backward with --grad) vs PyTorch autograd, $threads threads, B=1, H=8, D=64, f32 unless the variant says"
echo
echo "| variant | L | forward ms | fwd+bwd ms | backward / forward | backward GFLOP/s | peak MiB | PyTorch fwd+bwd ms | PyTorch / attn-opt |"
echo "|---|---|---|---|---|---|---|---|---|"
IFS=, read -r -a ls <<< "$lengths"
IFS=, read -r -a vs <<< "$only"
for l in "${ls[@]}"; do
  for v in "${vs[@]}"; do
    module "$v" "$l" "$dir/$v.$l.mlir"
    # shellcheck disable=SC2046
    read -r fwd _ _ <<< "$(bench_one "$dir/$v.$l.mlir" "$threads" "$runs" $(inputs "$v" "$l"))"
    # shellcheck disable=SC2046
    read -r both _ mib <<< "$(bench_one "$dir/$v.$l.mlir" "$threads" "$runs" --grad $(inputs "$v" "$l"))"
    peer="n/a" ratio="-"
    # (The gradient of pointwise and kernelized attention needs no forward
    # output: @f_grad is the backward alone, and forward + backward the sum.)
    [ "$(recomputes "$v")" = 1 ] || both="$(awk -v f="$fwd" -v b="$both" 'BEGIN { print f + b }')"
    if [ "$have_torch" = 1 ] && grep -qw "$v" <<< "softmax causal relu window256 causal_linear"; then
      peer="$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$python" "$root/bench/grad_torch.py" --L "$l" --threads "$threads" \
        --runs "$peer_runs" --only "$v" | awk '{print $2}')"
      ratio="$(awk -v p="$peer" -v a="$both" 'BEGIN { if (a > 0) printf "%.1fx", p / a }')"
    fi
    awk -v v="$v" -v l="$l" -v f="$fwd" -v b="$both" -v m="$mib" -v p="$peer" \
        -v r="$ratio" -v s="$(share "$v" "$l")" 'BEGIN {
      total = b; bw = total - f;
      gf = (bw > 0 && v != "causal_linear") ? sprintf("%.0f", 10.0 * l * l * 64 * 8 * s / (bw * 1e6)) : "-";
      printf "| %s | %d | %.1f | %.1f | %.2f | %s | %s | %s | %s |\n", v, l, f, total,
        (f > 0) ? bw / f : 0, gf, m, p, r }'
  done
done
if [ -n "$memory_l" ]; then
  echo
  IFS=, read -r -a ms_vs <<< "$memory_only"
  for v in "${ms_vs[@]}"; do
    module "$v" "$memory_l" "$dir/memory.$v.mlir"
    # shellcheck disable=SC2046
    read -r ms _ mib <<< "$(bench_one "$dir/memory.$v.mlir" "$threads" 1 --grad $(inputs "$v" "$memory_l"))"
    echo "$v forward + backward at L = $memory_l: $ms ms, peak $mib MiB"
  done
fi
