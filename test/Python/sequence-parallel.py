# attn_opt.attention(..., sequence_parallel=comm) with an mpi4py communicator
# (Debian's mpi4py, on Open MPI) on 1-4 ranks: each rank passes its own
# chunk (uneven contiguous chunks, the zigzag order), gets its rows, checked
# against the NumPy reference of the whole sequence; causal GQA softmax,
# sliding window, relu (pointwise) and causal elu+1 (linear); a communicator
# split from the world (two groups, two sequences); bad arguments raise.
# REQUIRES: python-numpy, mpi4py-openmpi
# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t
# RUN: env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir:%S timeout 300 %openmpiexec -n 1 %attn_py3 %s | FileCheck %s --check-prefix=ONE
# RUN: env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir:%S timeout 300 %openmpiexec -n 3 %attn_py3 %s | FileCheck %s --check-prefix=THREE
# RUN: env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir:%S timeout 300 %openmpiexec -n 4 %attn_py3 %s | FileCheck %s --check-prefix=FOUR

import numpy as np
from mpi4py import MPI

import attn_opt
import reference as ref

world = MPI.COMM_WORLD
HQ, HKV, D = 4, 2, 16


def chunks(length, ranks, rank, order):
    """The global rows of `rank`'s chunk."""
    if order == "zigzag":
        parts = np.array_split(np.arange(length), 2 * ranks)
        return np.concatenate([parts[rank], parts[2 * ranks - 1 - rank]])
    # Uneven on purpose: rank r gets about (r + 1) shares.
    cuts = np.cumsum([0] + [(r + 1) for r in range(ranks)])
    edges = (cuts * length) // cuts[-1]
    return np.arange(edges[rank], edges[rank + 1])


def run(comm, name, length, order="contiguous", seed=0, **kw):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, HQ, length, D)).astype(np.float32)
    k = rng.standard_normal((1, HKV, length, D)).astype(np.float32)
    v = rng.standard_normal((1, HKV, length, D)).astype(np.float32)
    mine = chunks(length, comm.size, comm.rank, order)
    out = attn_opt.attention(
        np.ascontiguousarray(q[:, :, mine]), np.ascontiguousarray(k[:, :, mine]),
        np.ascontiguousarray(v[:, :, mine]), sequence_parallel=comm,
        sequence_order=order, threads=1,
        **{a: b for a, b in kw.items() if a != "ref"})
    want = ref.attention(q, k, v, **kw["ref"])[:, :, mine]
    err = float(np.max(np.abs(out - want))) if mine.size else 0.0
    worst = comm.allreduce(err, op=MPI.MAX)
    if comm.rank == 0:
        print(f"{name} L={length} {order}: "
              f"{'ok' if worst < 2e-4 else 'WRONG %g' % worst}", flush=True)
    return worst


def main():
    results = []
    results.append(run(world, "causal", 301, pattern="causal",
                       ref=dict(pattern=ref.causal())))
    results.append(run(world, "causal", 301, "zigzag", pattern="causal",
                       ref=dict(pattern=ref.causal())))
    results.append(run(world, "window", 203, pattern=attn_opt.window(16, 0),
                       ref=dict(pattern=ref.window(16, 0))))
    results.append(run(world, "relu", 150, normalizer="relu",
                       pattern="causal",
                       ref=dict(normalizer="relu", pattern=ref.causal())))
    results.append(run(world, "elu+1", 257, normalizer="elu_plus_one",
                       pattern="causal",
                       ref=dict(normalizer="elu_plus_one",
                                pattern=ref.causal())))
    # Two groups (even / odd world ranks), each its own sequence.
    group = world.Split(world.rank % 2, world.rank)
    err = run(group, f"group{world.rank % 2}", 97 + 40 * (world.rank % 2),
              seed=1 + world.rank % 2, pattern="causal",
              ref=dict(pattern=ref.causal()))
    group.Free()
    results.append(world.allreduce(err, op=MPI.MAX))
    if world.rank == 0:
        print("split communicator: " +
              ("ok" if results[-1] < 2e-4 else "WRONG"), flush=True)
    # Bad arguments raise before anything is sent.
    x = np.zeros((1, HQ, 8, D), np.float32)
    kv = np.zeros((1, HKV, 8, D), np.float32)
    kv5 = np.zeros((1, HKV, 5, D), np.float32)
    for what, call in (
            ("not a communicator",
             lambda: attn_opt.attention(x, kv, kv, sequence_parallel=42)),
            ("bias", lambda: attn_opt.attention(
                x, kv, kv, sequence_parallel=world,
                bias=np.zeros((1, 1, 8, 8), np.float32))),
            ("order", lambda: attn_opt.attention(
                x, kv, kv, sequence_parallel=world, sequence_order="ring")),
            ("lengths", lambda: attn_opt.attention(
                x, kv5, kv5, sequence_parallel=world))):
        try:
            call()
            print(f"{what}: NOT raised")
        except (TypeError, ValueError) as e:
            if world.rank == 0:
                print(f"{what}: {type(e).__name__}: {e}", flush=True)
    if world.rank == 0 and max(results) < 2e-4:
        print("PASS", flush=True)


main()

# ONE: causal L=301 contiguous: ok
# ONE: causal L=301 zigzag: ok
# ONE: window L=203 contiguous: ok
# ONE: relu L=150 contiguous: ok
# ONE: elu+1 L=257 contiguous: ok
# ONE: split communicator: ok
# ONE: not a communicator: TypeError: sequence_parallel takes an mpi4py communicator, not int
# ONE: bias: ValueError: sequence_parallel takes q, k and v only, not bias
# ONE: order: ValueError: sequence_order is 'contiguous' or 'zigzag', not 'ring'
# ONE: lengths: ValueError: sequence_parallel: q and k hold the same positions, but their chunks have 8 and 5 rows
# ONE: PASS
# THREE: causal L=301 contiguous: ok
# THREE: causal L=301 zigzag: ok
# THREE: window L=203 contiguous: ok
# THREE: relu L=150 contiguous: ok
# THREE: elu+1 L=257 contiguous: ok
# THREE: split communicator: ok
# THREE: PASS
# FOUR: causal L=301 zigzag: ok
# FOUR: split communicator: ok
# FOUR: PASS
