#!/usr/bin/env python3
"""The scaling model of sequence-parallel attention (docs/SequenceParallel.md),
checked against measured runs on this machine and extrapolated to 1M tokens.

    python3 bench/sequence_model.py [--length 8192] [--ranks 1 2 3 4]

1. Measures the MPI link between two ranks (mpi4py ping-pong under
   mpiexec.hydra): bandwidth (large messages) and latency (8 bytes).
2. Runs examples/sharded/{softmax_causal, sliding_window, linear_causal} at
   B=1, H=8, D=64, 1 thread per rank, on each rank count (attn-run --bench:
   median call, the slowest rank's; bytes handed to MPI per rank).
3. Predicts each run from the 1-rank time and the link: the work of a
   schedule splits evenly over the ranks (zigzag balances causal work) but
   runs on min(P, cores) cores; the transfers of the schedule's bytes are
   added (an upper bound: they overlap the kernels), each step paying the
   latency:
       T(P) = T(1) / min(P, cores) + bytes(P) / bandwidth + steps(P) * latency
   with bytes(P) per rank: causal zigzag (P-1) 2 (L/P) H D 4 (every block
   reaches every rank: each holds an early and a late chunk); window W H D
   4 x 2 (the halo, when L/P >= W); causal linear P H F (D+1 padded to
   16 columns) 4 (one state slot per rank in the all-reduce).
4. Prints the model's prediction for 1M tokens on 8-64 ranks of one core of
   this machine each, over 100 Gb/s links, with and without overlap.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPIEXEC = shutil.which("mpiexec.hydra") or shutil.which("mpiexec.mpich")
H, D = 8, 64


def pingpong():
    # MPICH through ctypes (MPICH's ABI: handles are ints), the library the
    # generated code calls; Debian's mpi4py is built on Open MPI.
    import ctypes
    import time
    mpi = ctypes.CDLL(os.environ.get("ATTN_MPI_LIBRARY", "libmpich.so.12"),
                      mode=ctypes.RTLD_GLOBAL)
    world, byte, ignore = 0x44000000, 0x4c00010d, ctypes.c_void_p(1)
    mpi.MPI_Init(None, None)
    rank = ctypes.c_int()
    mpi.MPI_Comm_rank(world, ctypes.byref(rank))
    out = {}
    for size, reps in ((8, 2000), (1 << 24, 20)):
        buf = ctypes.create_string_buffer(size)
        mpi.MPI_Barrier(world)
        t0 = time.perf_counter()
        for _ in range(reps):
            if rank.value == 0:
                mpi.MPI_Send(buf, size, byte, 1, 0, world)
                mpi.MPI_Recv(buf, size, byte, 1, 0, world, ignore)
            else:
                mpi.MPI_Recv(buf, size, byte, 0, 0, world, ignore)
                mpi.MPI_Send(buf, size, byte, 0, 0, world)
        out[size] = (time.perf_counter() - t0) / (2 * reps)
    if rank.value == 0:
        print("latency_s=%.3e bandwidth_Bps=%.4e" %
              (out[8], (1 << 24) / out[1 << 24]))
    mpi.MPI_Finalize()


def measure_link():
    text = subprocess.run([MPIEXEC, "-n", "2", sys.executable,
                           os.path.abspath(__file__), "--pingpong"],
                          capture_output=True, text=True, check=True).stdout
    m = re.search(r"latency_s=(\S+) bandwidth_Bps=(\S+)", text)
    return float(m.group(1)), float(m.group(2))


def run(example, ranks, length, runner):
    shape = "1x%dx%dx%d" % (H, length, D)
    cmd = [MPIEXEC, "-n", str(ranks), runner,
           os.path.join(ROOT, "examples/sharded/%s.mlir" % example),
           "--random-inputs", "--threads", "1", "--bench", "3"]
    for name in "qkv":
        cmd += ["--shape", "%s=%s" % (name, shape)]
    text = subprocess.run(cmd, capture_output=True, text=True,
                          check=True).stdout
    ms = float(re.search(r"median_ms=(\S+)", text).group(1))
    m = re.search(r"max_rank=(\d+)", text)
    return ms / 1e3, int(m.group(1)) if m else 0


def model_bytes(example, p, length, window=256):
    if p == 1:
        return 0.0
    rows = length / p
    if example == "softmax_causal":
        return (p - 1) * 2 * rows * H * D * 4
    if example == "sliding_window":
        return window * H * D * 4 * 2
    # linear_causal: P state slots of F x [V, 1] padded to 16 columns.
    return p * H * D * ((D + 1 + 15) // 16 * 16) * 4


def model_steps(example, p):
    if p == 1:
        return 0
    return {"softmax_causal": p - 1, "sliding_window": 1}.get(example, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pingpong", action="store_true")
    ap.add_argument("--length", type=int, default=8192)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--runner",
                    default=os.path.join(ROOT, "build/bin/attn-run"))
    args = ap.parse_args()
    if args.pingpong:
        return pingpong()
    cores = os.cpu_count() or 1
    latency, bandwidth = measure_link()
    print("link (MPICH shared memory, 2 ranks): latency %.2f us, "
          "bandwidth %.2f GB/s; %d cores" % (latency * 1e6, bandwidth / 1e9,
                                              cores))
    print()
    print("| example | L | ranks | measured ms | model ms | error | "
          "bytes/rank measured | bytes/rank model |")
    print("|---|---|---|---|---|---|---|---|")
    rates = {}
    for example in ("softmax_causal", "sliding_window", "linear_causal"):
        t1 = None
        for p in args.ranks:
            t, sent = run(example, p, args.length, args.runner)
            if t1 is None:
                t1 = t if p == 1 else t * min(p, cores)
                rates[example] = t1
            b = model_bytes(example, p, args.length)
            pred = (t1 / min(p, cores) + b / bandwidth +
                    model_steps(example, p) * latency)
            print("| %s | %d | %d | %.1f | %.1f | %+.0f%% | %d | %.0f |" %
                  (example, args.length, p, t * 1e3, pred * 1e3,
                   100 * (pred - t) / t, sent, b))
    # 1M tokens: one core of this machine per rank (the rate of the 1-rank
    # causal run), links of 100 Gb/s (12.5 GB/s), latency 2 us.
    flops_per_s = (4.0 * H * D * args.length ** 2 / 2) / rates["softmax_causal"]
    print()
    print("causal softmax at 1M tokens (H=%d, D=%d, zigzag), one core per "
          "rank at %.0f GFLOP/s (measured), 12.5 GB/s links:" %
          (H, D, flops_per_s / 1e9))
    print()
    print("| ranks | rows/rank | compute/rank s | bytes/rank | transfer s "
          "| blocking s | overlapped s | K/V memory/rank |")
    print("|---|---|---|---|---|---|---|---|")
    big, link, lat = 1 << 20, 12.5e9, 2e-6
    for p in (8, 16, 32, 64):
        compute = 4.0 * H * D * big ** 2 / 2 / p / flops_per_s
        b = model_bytes("softmax_causal", p, big)
        transfer = b / link + (p - 1) * lat
        overlapped = p * max(compute / p, transfer / max(p - 1, 1))
        print("| %d | %d | %.1f | %.0f MB | %.2f | %.1f | %.1f | %.0f MB |" %
              (p, big // p, compute, b / 1e6, transfer, compute + transfer,
               overlapped, 2 * big / p * H * D * 4 / 1e6))


if __name__ == "__main__":
    main()
