#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU, its driver, the CUDA
# toolkit and Debian/Ubuntu's LLVM/MLIR 22: builds attn-opt, runs the GPU
# tests (lit: the CUDA integration tests, ptxas checks, the emulated
# kernels), checks every benchmark case against the CPU reference at a small
# length, times the cases at L (default 4096, bf16, B=1, H=16, D=128) and,
# where PyTorch is installed, PyTorch's scaled_dot_product_attention and
# FlexAttention on the same shapes; writes a markdown report.
#
#   scripts/gpu-check.sh [OUT_DIR]      (default: gpu-check/; $OUT if set)
#
# Environment: GPU_CHECK_L (4096), GPU_CHECK_DTYPE (bf16), GPU_CHECK_RUNS
# (20), CUDA_HOME (/usr/local/cuda), BUILD_DIR, SKIP_BUILD=1.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${1:-${OUT:-$root/gpu-check}}"
L="${GPU_CHECK_L:-4096}"
dtype="${GPU_CHECK_DTYPE:-bf16}"
runs="${GPU_CHECK_RUNS:-20}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
mkdir -p "$out"
report="$out/report.md"
log="$out/gpu-check.log"
: > "$log"
say() { echo "$@" | tee -a "$log"; }

# 1. Build.
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  say "== build"
  if ! "$root/scripts/build.sh" >> "$log" 2>&1; then
    say "build failed (see $log)"
    exit 1
  fi
fi
run="$build/bin/attn-run"
device="$("$run" --probe-cuda)" || { say "$device"; say "no usable GPU: stop"; exit 1; }
say "$device"

# 2. Tests: lit's GPU directories (cuda.mlir runs because the probe passed).
say "== GPU tests"
lit_out="$out/lit.txt"
/usr/lib/llvm-22/bin/lit -v "$build/test/Integration/GPU" \
  "$build/test/Conversion/AttnToGPU" "$build/test/Pipelines" \
  "$build/test/Runner" > "$lit_out" 2>&1
lit_status=$?
lit_summary="$(grep -E '^ *(Passed|Failed|Unsupported)' "$lit_out" | tr -s ' ' | paste -sd';')"
say "lit: $lit_summary (exit $lit_status)"

# 3. Benchmark cases: correctness at a small length, then timings at L.
cases="$out/cases"
python3 "$root/bench/gpu/cases.py" --length 256 --dtype "$dtype" --out "$cases/check" > /dev/null
python3 "$root/bench/gpu/cases.py" --length "$L" --dtype "$dtype" --out "$cases/bench" > /dev/null
results="$out/attn-opt.jsonl"
: > "$results"
say "== attn-opt: check at L=256, bench at L=$L ($dtype)"
for f in "$cases"/bench/*.mlir; do
  name="$(basename "$f" .mlir)"
  check="$("$run" "$cases/check/$name.mlir" --target=cuda --random-inputs --seed 3 --check 2>&1 | grep '^check' | head -1)"
  ok=false; [[ "$check" == *" ok" ]] && ok=true
  err="$(sed -n 's/.*max_rel_err=\([0-9.e+-]*\).*/\1/p' <<< "$check")"
  line="$("$run" "$f" --target=cuda --random-inputs --bench "$runs" 2>&1 | grep '^bench:' | tail -1)"
  ms="$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
  gf="$(sed -n 's/.*gflops=\([0-9.]*\).*/\1/p' <<< "$line")"
  tf="$(python3 -c "print(round(${gf:-0}/1000, 2))")"
  say "$name: check ok=$ok max_rel_err=${err:-?}  median ${ms:-failed} ms  $tf TFLOP/s"
  echo "{\"case\": \"$name\", \"peer\": \"attn-opt\", \"ms\": ${ms:-null}, \"tflops\": ${tf:-null}, \"check\": $ok, \"max_rel_err\": \"${err:-}\"}" >> "$results"
done

# 4. PyTorch peers.
peers="$out/peers.jsonl"
: > "$peers"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  say "== PyTorch peers"
  python3 "$root/bench/gpu/peers.py" --length "$L" --dtype "$dtype" > "$peers" 2>> "$log"
  cat "$peers" | tee -a "$log"
else
  say "PyTorch with CUDA not found: no peers"
fi

# 5. Report.
python3 - "$results" "$peers" "$report" "$device" "$L" "$dtype" "$lit_summary" <<'PY'
import json, sys
res, peers, report, device, L, dtype, lit = sys.argv[1:]
rows = {}
for path in (res, peers):
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "case" in r:
            rows.setdefault(r["case"], {})[r["peer"]] = r
peer_names = sorted({p for r in rows.values() for p in r if p != "attn-opt"})
with open(report, "w") as f:
    f.write(f"# attn-opt GPU check\n\n{device}\n\nlit (GPU tests): {lit}\n\n")
    f.write(f"B=1, H=16, L={L}, D=128, {dtype}; median of timed calls; "
            "TFLOP/s of useful work (causal: half).\n\n")
    f.write("| case | check (L=256) | attn-opt ms | attn-opt TFLOP/s | " +
            " | ".join(f"{p} ms | {p} TFLOP/s" for p in peer_names) +
            " | best peer / attn-opt |\n")
    f.write("|---" * (5 + 2 * len(peer_names)) + "|\n")
    for case, r in rows.items():
        a = r.get("attn-opt", {})
        cells = [case, f"{'ok' if a.get('check') else 'FAILED'} "
                 f"({a.get('max_rel_err', '?')})",
                 f"{a.get('ms')}", f"{a.get('tflops')}"]
        best = None
        for p in peer_names:
            x = r.get(p, {})
            ms = x.get("ms")
            cells += [f"{ms:.3f}" if ms else "-",
                      f"{x['tflops']:.1f}" if ms else "-"]
            if ms and (best is None or ms < best):
                best = ms
        ratio = (f"{a['ms'] / best:.2f}x slower" if best and a.get("ms")
                 and a["ms"] > best else
                 f"{best / a['ms']:.2f}x faster" if best and a.get("ms")
                 else "-")
        cells.append(ratio)
        f.write("| " + " | ".join(cells) + " |\n")
print(open(report).read())
PY
echo "report: $report"
