"""Overhead of the Python package over the kernel: attn_opt.attention
(causal softmax, B=1, H=8, D=64, f32) against attn-run --bench on the same
module (the dynamic-size module attn_opt generates, run with --shape), at
L=4096 (ratio, within 5 % is the goal) and L=128 (difference in us, under
50 us is the goal). Rounds alternate the two so both see the same load.

    PYTHONPATH=build/python /usr/bin/python3 bench/python.py [--rounds 7]
        [--threads 2] [--calls 5] [--lengths 4096,128] [--torch]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import attn_opt
from attn_opt import _attention

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.environ.get("BUILD_DIR", os.path.join(root, "build"))


def attn_run_ms(path, shape, threads, calls):
    out = subprocess.run(
        [os.path.join(build, "bin", "attn-run"), path, "--random-inputs",
         "--bench", str(calls), "--threads", str(threads)] +
        [f"--shape={n}={shape}" for n in ("query", "key", "value")],
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median_ms=([0-9.]+)", out.splitlines()[-1])[1])


def python_ms(q, k, v, calls):
    attn_opt.attention(q, k, v, pattern="causal")  # warm-up
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        attn_opt.attention(q, k, v, pattern="causal")
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--lengths", default="4096,128")
    ap.add_argument("--torch", action="store_true",
                    help="torch tensors instead of NumPy arrays")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    key = ("f32", 8, 8, 64, 64, "#attn.softmax", "#attn.causal", None, None,
           None, False, None, None, None, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "attention.mlir")
        with open(path, "w") as f:
            f.write(_attention._build(key))
        print("| L | attn-run best ms | python best ms | python/attn-run "
              "(best) | (median of rounds) | python - attn-run (median, us) |")
        print("|---|---|---|---|---|---|")
        for length in (int(x) for x in args.lengths.split(",")):
            rng = np.random.default_rng(0)
            q, k, v = (rng.standard_normal((1, 8, length, 64)).astype(
                np.float32) for _ in range(3))
            if args.torch:
                import torch
                q, k, v = (torch.from_numpy(x) for x in (q, k, v))
            calls = args.calls if length >= 1024 else 200
            a, p = [], []
            for _ in range(args.rounds):
                a.append(attn_run_ms(path, f"1x8x{length}x64", args.threads,
                                     calls))
                p.append(python_ms(q, k, v, calls))
            am, pm = statistics.median(a), statistics.median(p)
            print(f"| {length} | {min(a):.3f} | {min(p):.3f} | "
                  f"{min(p) / min(a):.3f} | {pm / am:.3f} | "
                  f"{(pm - am) * 1e3:.1f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
