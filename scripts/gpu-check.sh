#!/usr/bin/env bash
# The GPU check: correctness of the GPU kernels against the CPU reference,
# timings of the GPU benchmark cases (default L=4096, bf16, B=1, H=16,
# D=128) and, where PyTorch is installed, of PyTorch's
# scaled_dot_product_attention and FlexAttention on the same shapes; a
# markdown report.
#
#   scripts/gpu-check.sh [OUT]             everything on this machine: build,
#                                          bundle, lit GPU tests, run bundle
#   scripts/gpu-check.sh --bundle DIR      build and compile a bundle (any
#                                          machine with the toolchain; no GPU)
#   scripts/gpu-check.sh --run-bundle DIR [OUT]
#                                          run a bundle on a GPU machine that
#                                          has only the driver (no LLVM/MLIR)
#
# A bundle is self-contained: the kernels compiled ahead of time
# (attn-lower-to-nvvm-pipeline, mlir-translate, clang -shared) into shared
# objects, attn-launch (which runs them) and libAttnCudaRuntime.so, inputs
# and CPU-reference outputs for the checks, bench/gpu/peers.py. The checks
# are the GPU integration tests (test/Integration/GPU/Inputs/kernels.mlir)
# and the benchmark cases at L=256.
#
# Environment: GPU_CHECK_L (4096), GPU_CHECK_DTYPE (bf16), GPU_CHECK_RUNS
# (20), GPU_CHECK_CHIP (sm_90a), CUDA_HOME (/usr/local/cuda), BUILD_DIR,
# SKIP_BUILD=1. OUT defaults to $OUT, else gpu-check/.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
L="${GPU_CHECK_L:-4096}"
dtype="${GPU_CHECK_DTYPE:-bf16}"
runs="${GPU_CHECK_RUNS:-20}"
chip="${GPU_CHECK_CHIP:-sm_90a}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
llvm=/usr/lib/llvm-22/bin

# compile_case SRC.mlir DST.so: ahead-of-time GPU code for every function.
compile_case() {
  "$build/bin/attn-opt" "$1" --llvm-request-c-wrappers \
      --attn-lower-to-nvvm-pipeline="chip=$chip format=bin" \
      --mlir-disable-threading -o "$2.mlir" 2> "$2.log" &&
    "$llvm/mlir-translate" --mlir-to-llvmir "$2.mlir" -o "$2.ll" &&
    "$llvm/clang" -shared -fPIC -O2 -Wno-override-module "$2.ll" -o "$2" &&
    rm -f "$2.mlir" "$2.ll" "$2.log"
}

# check_case DIR NAME SRC.mlir ENTRY TOL: inputs and CPU-reference output.
check_case() {
  local dir="$1" name="$2" src="$3" entry="$4" tol="$5"
  "$build/bin/attn-run" "$src" --entry "$entry" --reference --random-inputs \
      --seed 3 --save-inputs "$dir/$name.inputs" --output "$dir/$name.expect.npy" \
      > /dev/null || return 1
  echo "$(python3 "$root/bench/gpu/signature.py" "$src" "$entry") $tol" > "$dir/$name.args"
}

make_bundle() {
  local dir="$1"
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    "$root/scripts/build.sh" > "$dir.build.log" 2>&1 || {
      echo "build failed (see $dir.build.log)"; return 1; }
  fi
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib" "$dir/check" "$dir/bench" "$dir/src"
  cp "$build/bin/attn-launch" "$dir/bin/"
  cp "$build/lib/libAttnCudaRuntime.so" "$dir/lib/"
  cp "$root/bench/gpu/peers.py" "$dir/"
  echo "chip=$chip L=$L dtype=$dtype" > "$dir/README"
  # Checks: the GPU integration tests and the benchmark cases at L=256.
  local tests="$root/test/Integration/GPU/Inputs/kernels.mlir"
  compile_case "$tests" "$dir/check/kernels.so" || { echo "compiling $tests failed"; return 1; }
  for entry in $(sed -n 's/^func.func @\([a-z0-9_]*\).*/\1/p' "$tests"); do
    tol="--rtol 1e-4 --atol 1e-5"
    grep -q "func.func @$entry(.*xbf16>" "$tests" && tol="--rtol 2e-2 --atol 2e-2"
    grep -q "func.func @$entry(.*xf16>" "$tests" && tol="--rtol 1e-2 --atol 1e-2"
    check_case "$dir/check" "kernels.$entry" "$tests" "$entry" "$tol" ||
      { echo "reference for $entry failed"; return 1; }
  done
  python3 "$root/bench/gpu/cases.py" --length 256 --heads 2 --dtype "$dtype" \
      --out "$dir/src/check" > /dev/null
  python3 "$root/bench/gpu/cases.py" --length "$L" --dtype "$dtype" \
      --out "$dir/src/bench" > /dev/null
  for src in "$dir"/src/check/*.mlir; do
    name="$(basename "$src" .mlir)"
    compile_case "$src" "$dir/check/$name.so" || { echo "compiling $src failed"; return 1; }
    check_case "$dir/check" "$name" "$src" "$name" "--rtol 2e-2 --atol 2e-2" ||
      { echo "reference for $name failed"; return 1; }
  done
  for src in "$dir"/src/bench/*.mlir; do
    name="$(basename "$src" .mlir)"
    compile_case "$src" "$dir/bench/$name.so" || { echo "compiling $src failed"; return 1; }
    cp "$dir/src/bench/$name.args" "$dir/bench/$name.args"
  done
  echo "bundle: $dir ($(du -sh "$dir" | cut -f1))"
}

run_bundle() {
  local dir="$1" out="$2"
  mkdir -p "$out"
  local log="$out/gpu-check.log" results="$out/attn-opt.jsonl" peers="$out/peers.jsonl"
  : > "$log"; : > "$results"; : > "$peers"
  say() { echo "$@" | tee -a "$log"; }
  local launch="$dir/bin/attn-launch" device
  device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  say "device: ${device:-unknown}; bundle: $(cat "$dir/README")"

  say "== checks against the CPU reference"
  local pass=0 fails=0
  for args in "$dir"/check/*.args; do
    local name so
    name="$(basename "$args" .args)"
    so="$dir/check/${name%%.*}.so"
    line="$("$launch" "$so" $(cat "$args") --inputs "$dir/check/$name.inputs" \
        --expect "$dir/check/$name.expect.npy" 2>&1 | tail -2 | tr '\n' ' ')"
    if [[ "$line" == *" ok "* ]]; then pass=$((pass + 1)); else fails=$((fails + 1)); fi
    say "$name: $line"
  done
  say "checks: $pass passed, $fails failed"

  say "== attn-opt timings (L=$L, $dtype)"
  for args in "$dir"/bench/*.args; do
    local name line ms gf
    name="$(basename "$args" .args)"
    line="$("$launch" "$dir/bench/$name.so" $(cat "$args") --seed 1 \
        --segments-equal 8 --bench "$runs" 2>&1 | grep '^bench:\|error' | tail -1)"
    ms="$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<< "$line")"
    gf="$(sed -n 's/.*gflops=\([0-9.]*\).*/\1/p' <<< "$line")"
    say "$name: ${line}"
    echo "{\"case\": \"$name\", \"peer\": \"attn-opt\", \"ms\": ${ms:-null}, \"tflops\": $(python3 -c "print(round(${gf:-0}/1000, 2))")}" >> "$results"
  done

  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    say "== PyTorch peers"
    python3 "$dir/peers.py" --length "$L" --dtype "$dtype" > "$peers" 2>> "$log"
    tee -a "$log" < "$peers"
  else
    say "PyTorch with CUDA not found: no peers"
  fi

  python3 - "$results" "$peers" "$out/report.md" "${device:-unknown}" "$L" \
      "$dtype" "checks: $pass passed, $fails failed" <<'PY'
import json, sys
res, peers, report, device, L, dtype, checks = sys.argv[1:]
rows = {}
for path in (res, peers):
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            if "case" in r:
                rows.setdefault(r["case"], {})[r["peer"]] = r
names = sorted({p for r in rows.values() for p in r if p != "attn-opt"})
with open(report, "w") as f:
    f.write(f"# attn-opt GPU check\n\nDevice: {device}\n\n"
            f"Correctness against the CPU reference: {checks}\n\n"
            f"B=1, H=16, L={L}, D=128, {dtype}; median ms of timed calls "
            "(attn-opt: host wall time per call, synchronized; PyTorch: CUDA "
            "events); TFLOP/s of useful work.\n\n")
    f.write("| case | attn-opt ms | TFLOP/s | " +
            " | ".join(f"{p} ms | TFLOP/s" for p in names) +
            " | attn-opt vs best peer |\n")
    f.write("|---" * (4 + 2 * len(names)) + "|\n")
    for case, r in rows.items():
        a = r.get("attn-opt", {})
        ams = a.get("ms")
        cells = [case, f"{ams:.3f}" if ams else "failed",
                 f"{a.get('tflops')}" if ams else "-"]
        best = None
        for p in names:
            x = r.get(p, {})
            ms = x.get("ms")
            cells += [f"{ms:.3f}" if ms else x.get("error", "-")[:30],
                      f"{x['tflops']:.1f}" if ms else "-"]
            if ms and (best is None or ms < best):
                best = ms
        cells.append(f"{best / ams:.2f}x" if best and ams else "-")
        f.write("| " + " | ".join(cells) + " |\n")
print(open(report).read())
PY
  echo "report: $out/report.md"
  [ "$fails" = 0 ]
}

case "${1:-}" in
  --bundle)
    [ $# -ge 2 ] || { echo "usage: $0 --bundle DIR"; exit 2; }
    make_bundle "$2"
    ;;
  --run-bundle)
    [ $# -ge 2 ] || { echo "usage: $0 --run-bundle DIR [OUT]"; exit 2; }
    run_bundle "$2" "${3:-${OUT:-$root/gpu-check}}"
    ;;
  *)
    out="${1:-${OUT:-$root/gpu-check}}"
    mkdir -p "$out"
    make_bundle "$out/bundle" || exit 1
    if ! "$build/bin/attn-run" --probe-cuda; then
      echo "no usable GPU here: the bundle is ready in $out/bundle;" \
           "run it on a GPU machine with $0 --run-bundle DIR"
      exit 1
    fi
    echo "== lit GPU tests"
    /usr/lib/llvm-22/bin/lit -v "$build/test/Integration/GPU" \
        "$build/test/Conversion/AttnToGPU" "$build/test/GPU" "$build/test/Pipelines" \
        > "$out/lit.txt" 2>&1
    lit_status=$?
    grep -E '^ *(Passed|Failed|Unsupported)' "$out/lit.txt"
    run_bundle "$out/bundle" "$out"
    status=$?
    [ "$lit_status" = 0 ] && exit $status
    exit 1
    ;;
esac
