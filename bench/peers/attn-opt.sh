#!/usr/bin/env bash
# attn-opt as an "extra" of the peers benchmark (../shared/peers): prints one
# JSON line per (variant, threads, L) in the peers' schema, so that attn-opt's
# generated code appears in the same tables, measured in the same run.
#
#   PEERS_EXTRA_DIR=/path/to/attn-opt/bench/peers bash run.sh
#
# Reads PEERS_L, PEERS_THREADS, PEERS_MAX_S from run.sh. Each case runs
# attn-run --bench in its own process (compile, one warm-up, then at least 5
# and about 1.5 s worth of timed calls, at most 25); peak RSS is the
# process's maximum resident set, compilation included.
#
# ATTN_BASELINE=/path/to/attn-run (an older build, see
# bench/build-baseline.sh) adds that build as impl "attn-opt-baseline":
# each case then runs ATTN_ROUNDS (default 3) rounds alternating the two
# builds, and each reports the best of its rounds' medians, so that both
# see the same machine load.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
baseline="${ATTN_BASELINE:-}"
rounds="${ATTN_ROUNDS:-3}"
lengths="${PEERS_L:-512,1024,2048,4096,8192}"
threads_list="${PEERS_THREADS:-1 2}"
max_s="${PEERS_MAX_S:-10}"
H=8 D=64
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# peers variant -> example name and flop formula
declare -A example=(
  [softmax]=softmax [softmax_causal]=softmax_causal [relu]=relu
  [relu_causal]=relu_causal [linear_elu1]=linear_elu
  [linear_elu1_causal]=linear_elu_causal [swa_w256_g2]=sliding_window)
declare -A formula=(
  [softmax]="4*L^2*d*H" [softmax_causal]="4*d*H*L(L+1)/2" [relu]="4*L^2*d*H"
  [relu_causal]="4*d*H*L(L+1)/2" [linear_elu1]="4*L*d^2*H"
  [linear_elu1_causal]="4*L*d^2*H" [swa_w256_g2]="4*d*H*nnz(mask)")
variants=(softmax softmax_causal relu relu_causal linear_elu1 linear_elu1_causal swa_w256_g2)

IFS=, read -r -a ls <<< "$lengths"
for l in "${ls[@]}"; do
  mkdir -p "$dir/$l"
  python3 "$root/examples/generate.py" --length "$l" --out "$dir/$l" >&2
done
for v in "${variants[@]}"; do
  for t in $threads_list; do
    prev_ms=""
    for l in "${ls[@]}"; do
      file="$dir/$l/${example[$v]}.mlir"
      # Skip when the previous length's time, scaled quadratically, is too long.
      if [ -n "$prev_ms" ] && awk -v p="$prev_ms" -v m="$max_s" 'BEGIN { exit !(p * 4 / 1000 > m) }'; then
        echo "{\"kind\": \"attn\", \"variant\": \"$v\", \"impl\": \"attn-opt\", \"threads\": $t, \"L\": $l, \"H\": $H, \"d\": $D, \"status\": \"skipped\", \"note\": \"predicted over ${max_s} s\"}"
        continue
      fi
      # About 1.5 s of timed calls: probe with one call first.
      probe="$("$build/bin/attn-run" "$file" --random-inputs --bench 1 --threads "$t" 2>/dev/null | sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p')"
      runs=$(awk -v p="${probe:-1000}" 'BEGIN { r = int(1500 / (p > 0 ? p : 1)); if (r < 5) r = 5; if (r > 25) r = 25; print r }')
      impls=("attn-opt=$build/bin/attn-run")
      n=1
      if [ -n "$baseline" ]; then
        impls+=("attn-opt-baseline=$baseline")
        n="$rounds"
      fi
      declare -A best_line=() best_ms=() best_kb=()
      work=""
      for ((round = 0; round < n; round++)); do
        for entry in "${impls[@]}"; do
          impl="${entry%%=*}" bin="${entry#*=}"
          out="$(/usr/bin/time -f 'peak_kb=%M' -o "$dir/time" "$bin" "$file" --random-inputs --bench "$runs" --threads "$t" 2>/dev/null)"
          line="$(grep '^bench:' <<< "$out" | tail -1)"
          [ -z "$work" ] && work="$(sed -n 's/^work: \([0-9]*\) flop/\1/p' <<< "$out")"
          [ -z "$line" ] && continue
          ms="$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
          if [ -z "${best_ms[$impl]:-}" ] || awk -v a="$ms" -v b="${best_ms[$impl]}" 'BEGIN { exit !(a < b) }'; then
            best_ms[$impl]="$ms"
            best_line[$impl]="$line"
            best_kb[$impl]="$(sed -n 's/peak_kb=//p' "$dir/time")"
          fi
        done
      done
      for entry in "${impls[@]}"; do
        impl="${entry%%=*}"
        line="${best_line[$impl]:-}"
        if [ -z "$line" ]; then
          echo "{\"kind\": \"attn\", \"variant\": \"$v\", \"impl\": \"$impl\", \"threads\": $t, \"L\": $l, \"H\": $H, \"d\": $D, \"status\": \"failed\"}"
          continue
        fi
        ms="${best_ms[$impl]}"
        min="$(sed -n 's/.*min_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
        kb="${best_kb[$impl]}"
        [ "$impl" = attn-opt ] && prev_ms="$ms"
        echo "{\"kind\": \"attn\", \"variant\": \"$v\", \"impl\": \"$impl\", \"threads\": $t, \"L\": $l, \"H\": $H, \"d\": $D, \"flop\": $work, \"flop_formula\": \"${formula[$v]}\", \"status\": \"ok\", \"median_ms\": $ms, \"min_ms\": $min, \"reps\": $runs, \"rounds\": $n, \"peak_rss_mib\": $((kb / 1024)), \"base_rss_mib\": 0, \"other_load\": null, \"note\": \"attn-run --bench, best median of $n round(s), peak RSS includes the JIT\"}"
      done
      unset best_line best_ms best_kb
    done
  done
done
