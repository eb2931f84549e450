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
