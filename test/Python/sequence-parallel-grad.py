# attn_opt.attention(..., sequence_parallel=comm) under torch.autograd
# (Debian's mpi4py on Open MPI, 1 to 3 ranks): every rank holds its chunk
# of q, k and v as tensors that require gradients, and gets its rows of dQ,
# dK and dV (attn-partition-sequence's backward ring: blocks travel the
# forward's ring again, each rank's share of a block's dK and dV goes back
# to its owner), checked against PyTorch's float64 autograd of the whole
# sequence: causal GQA softmax in the zigzag order, a sliding window
# (halo only), causal relu (pointwise), packed documents, a score_mod
# reading a learned bias table (its gradient: every rank's share summed over
# the communicator), causal elu+1 and FAVOR+ with a learned projection
# (linear attention: the states reduced both ways, no ring); a training
# loop over five lengths compiles the backward once.
# REQUIRES: python-torch, mpi4py-openmpi
# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t
# RUN: env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir timeout 300 %openmpiexec -n 1 %attn_py3 %s | FileCheck %s
# RUN: env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir timeout 300 %openmpiexec -n 3 %attn_py3 %s | FileCheck %s

import numpy as np
import torch
from mpi4py import MPI

import attn_opt
from attn_opt import _attention

world = MPI.COMM_WORLD
HQ, HKV, D = 4, 2, 16


def rows_of(length, order):
    """This rank's global rows (uneven contiguous chunks, or the zigzag
    order's two runs)."""
    ranks, rank = world.size, world.rank
    if order == "zigzag":
        parts = np.array_split(np.arange(length), 2 * ranks)
        return np.concatenate([parts[rank], parts[2 * ranks - 1 - rank]])
    cuts = np.cumsum([0] + [(r + 1) for r in range(ranks)])
    edges = (cuts * length) // cuts[-1]
    return np.arange(edges[rank], edges[rank + 1])


def reference(q, k, v, allowed, normalizer="softmax", score_mod=None):
    """Float64 attention of the whole sequence, materialized scores."""
    g = HQ // HKV
    kk = k.repeat_interleave(g, dim=1)
    vv = v.repeat_interleave(g, dim=1)
    s = q @ kk.transpose(-1, -2) / D ** 0.5
    if score_mod is not None:
        s = score_mod(s)
    if normalizer == "softmax":
        s = s.masked_fill(~allowed, float("-inf"))
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    elif normalizer == "relu":  # alpha = 1
        p = torch.relu(s).masked_fill(~allowed, 0.0) / q.shape[2]
    else:  # kernelized: phi(q) phi(k)^T, normalized by its row sums
        if normalizer == "elu_plus_one":
            fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(kk) + 1
        else:  # ("favor", W): exp(W x - |x|^2 / 2) / sqrt(m)
            w = normalizer[1]

            def phi(x):
                return torch.exp(x @ w.T - (x * x).sum(-1, keepdim=True) / 2) \
                    / w.shape[0] ** 0.5
            fq, fk = phi(q), phi(kk)
        a = (fq @ fk.transpose(-1, -2)).masked_fill(~allowed, 0.0)
        p = a / a.sum(-1, keepdim=True)  # (eps 0, the default)
    return p @ vv


def check(name, length, order, allowed, ref_kw=None, **kw):
    gen = torch.Generator().manual_seed(length)
    full = [torch.randn(1, h, length, D, generator=gen, dtype=torch.float64)
            for h in (HQ, HKV, HKV)]
    w = torch.randn(1, HQ, length, D, generator=gen, dtype=torch.float64)
    mine = torch.from_numpy(rows_of(length, order))
    local = [x[:, :, mine].float().clone().requires_grad_() for x in full]
    out = attn_opt.attention(*local, sequence_parallel=world,
                             sequence_order=order, threads=1, **kw)
    (out * w[:, :, mine].float()).sum().backward()
    leaves = [x.clone().requires_grad_() for x in full]
    want = reference(*leaves, allowed, **(ref_kw or {}))
    (want * w).sum().backward()
    err = float((out.double() - want[:, :, mine]).abs().max()) \
        if mine.numel() else 0.0
    for got, leaf in zip(local, leaves):
        if mine.numel():
            err = max(err, float((got.grad.double() -
                                  leaf.grad[:, :, mine]).abs().max()))
    worst = world.allreduce(err, op=MPI.MAX)
    if world.rank == 0:
        print(f"{name} L={length} {order}: "
              f"{'ok' if worst < 5e-4 else 'WRONG %g' % worst}", flush=True)


def main():
    i = torch.arange(301)[:, None]
    j = torch.arange(301)[None, :]
    check("causal gqa", 301, "zigzag", j <= i, pattern="causal")
    i, j = torch.arange(203)[:, None], torch.arange(203)[None, :]
    check("window", 203, "contiguous", (j <= i) & (j >= i - 16),
          pattern=attn_opt.window(16, 0))
    i, j = torch.arange(150)[:, None], torch.arange(150)[None, :]
    check("relu", 150, "contiguous", j <= i,
          ref_kw=dict(normalizer="relu"), normalizer="relu",
          pattern="causal", alpha=1.0)
    ids = np.repeat(np.arange(4), [60, 80, 100, 61])[None].astype(np.int32)
    t = torch.from_numpy(ids[0]).long()
    i, j = torch.arange(301)[:, None], torch.arange(301)[None, :]
    check("documents", 301, "contiguous", (j <= i) & (t[:, None] == t[None]),
          pattern="causal_segments", segments=ids)

    # A learned relative-position bias table (T5-style), captured by the
    # score_mod; its gradient sums every rank's blocks.
    length = 131
    gen = torch.Generator().manual_seed(7)
    table = torch.randn(HQ, 32, generator=gen, dtype=torch.float64)
    mine = torch.from_numpy(rows_of(length, "contiguous"))
    full = [torch.randn(1, h, length, D, generator=gen, dtype=torch.float64)
            for h in (HQ, HKV, HKV)]
    local = [x[:, :, mine].float().clone().requires_grad_() for x in full]
    learned = table.float().clone().requires_grad_()
    out = attn_opt.attention(
        *local, pattern="causal", sequence_parallel=world, threads=1,
        score_mod=lambda s, b, h, qi, kj: s + learned[h, (qi - kj) % 32])
    out.sum().backward()
    leaves = [x.clone().requires_grad_() for x in full]
    tab = table.clone().requires_grad_()
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    want = reference(*leaves, j <= i,
                     score_mod=lambda s: s + tab[:, (i - j) % 32][None])
    want.sum().backward()
    err = float((learned.grad.double() - tab.grad).abs().max())
    for got, leaf in zip(local, leaves):
        err = max(err, float((got.grad.double() -
                              leaf.grad[:, :, mine]).abs().max()))
    worst = world.allreduce(err, op=MPI.MAX)
    if world.rank == 0:
        print(f"bias table: {'ok' if worst < 5e-4 else 'WRONG %g' % worst}",
              flush=True)

    # A training loop over five lengths: one compilation of the backward.
    before = len(_attention._grad_functions)
    for length in (64, 97, 130, 171, 200):
        mine = rows_of(length, "zigzag")
        q = torch.randn(1, HQ, len(mine), 8, requires_grad=True)
        kv = torch.randn(1, HKV, len(mine), 8, requires_grad=True)
        attn_opt.attention(q, kv, kv, pattern="causal",
                           sequence_parallel=world, sequence_order="zigzag",
                           threads=1).sum().backward()
    if world.rank == 0:
        print(f"five lengths: "
              f"{len(_attention._grad_functions) - before} compilation(s)",
              flush=True)

    # Kernelized attention: the key/value state reduced over the ranks
    # before each, the query state phi(Q)^T du over those after.
    i, j = torch.arange(157)[:, None], torch.arange(157)[None, :]
    check("elu+1", 157, "contiguous", j <= i,
          ref_kw=dict(normalizer="elu_plus_one"), normalizer="elu_plus_one",
          pattern="causal")
    # FAVOR+ with a learned projection: its gradient summed over the ranks.
    length = 97
    gen = torch.Generator().manual_seed(11)
    proj = torch.randn(32, D, generator=gen, dtype=torch.float64)
    full = [torch.randn(1, h, length, D, generator=gen, dtype=torch.float64)
            for h in (HQ, HKV, HKV)]
    mine = torch.from_numpy(rows_of(length, "contiguous"))
    local = [x[:, :, mine].float().clone().requires_grad_() for x in full]
    learned = proj.float().clone().requires_grad_()
    out = attn_opt.attention(*local, normalizer="favor", features=32,
                             projection=learned,
                             pattern="causal", sequence_parallel=world,
                             threads=1)
    out.sum().backward()
    leaves = [x.clone().requires_grad_() for x in full]
    w = proj.clone().requires_grad_()
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    reference(*leaves, j <= i, normalizer=("favor", w)).sum().backward()
    err = float((learned.grad.double() - w.grad).abs().max())
    for got, leaf in zip(local, leaves):
        err = max(err, float((got.grad.double() -
                              leaf.grad[:, :, mine]).abs().max()))
    worst = world.allreduce(err, op=MPI.MAX)
    if world.rank == 0:
        print(f"favor projection: "
              f"{'ok' if worst < 5e-4 else 'WRONG %g' % worst}", flush=True)


main()

# CHECK: causal gqa L=301 zigzag: ok
# CHECK: window L=203 contiguous: ok
# CHECK: relu L=150 contiguous: ok
# CHECK: documents L=301 contiguous: ok
# CHECK: bias table: ok
# CHECK: five lengths: 1 compilation(s)
# CHECK: elu+1 L=157 contiguous: ok
# CHECK: favor projection: ok
