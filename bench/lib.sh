# Helpers shared by the bench/ scripts (sourced).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

# bench_one FILE THREADS RUNS [attn-run options...]: prints "ms gflops peak_mib"
# (or "failed - -"), the median time, the rate and the peak resident memory.
bench_one() {
  local file="$1" threads="$2" runs="$3"
  shift 3
  local log
  log="$(mktemp)"
  if /usr/bin/time -f 'peak_kb=%M' -o "$log.time" "$build/bin/attn-run" "$file" \
      --random-inputs --bench "$runs" --threads "$threads" "$@" > "$log" 2>&1; then
    local line ms gf kb
    line="$(grep '^bench:' "$log" | tail -1)"
    ms="$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
    gf="$(sed -n 's/.*gflops=\([0-9.]*\).*/\1/p' <<< "$line")"
    kb="$(sed -n 's/peak_kb=//p' "$log.time")"
    echo "$ms $gf $((kb / 1024))"
  else
    sed 's/^/    /' "$log" >&2
    echo "failed - -"
  fi
  rm -f "$log" "$log.time"
}

# examples_at L DIR: writes the example variants at length L into DIR.
examples_at() {
  python3 "$root/examples/generate.py" --length "$1" --out "$2"
}

# ab_row NAME L A_FILE B_FILE: a table row comparing two builds or variants
# from files of per-round medians (one per line): the best of each, the
# ratio B / A of the bests and of the medians of the rounds.
ab_row() {
  local a_best b_best a_med b_med
  a_best="$(sort -g "$3" | head -1)" b_best="$(sort -g "$4" | head -1)"
  a_med="$(median_of < "$3")" b_med="$(median_of < "$4")"
  awk -v v="$1" -v l="$2" -v ab="$a_best" -v bb="$b_best" -v am="$a_med" -v bm="$b_med" \
    'function ms(x) { return sprintf(x < 10 ? "%.3f" : "%.1f", x) }
     BEGIN { printf "| %s | %d | %s | %s | %.3f | %.3f |\n", v, l, ms(ab), ms(bb), bb / ab, bm / am }'
}

# median_of: the median of the numbers on stdin, one per line.
median_of() {
  sort -g | awk '{a[NR] = $1} END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# noraise_pipeline: attn-lower-to-llvm-pipeline with raise=false, at the
# host's vector width and register count (as attn-run picks them), for
# timing a graph as written against the same graph raised.
noraise_pipeline() {
  local width=8 regs=16
  if grep -qw avx512f /proc/cpuinfo; then width=16 regs=32; fi
  echo "attn-lower-to-llvm-pipeline{raise=false vector-width=$width vector-registers=$regs}"
}
