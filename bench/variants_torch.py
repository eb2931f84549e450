#!/usr/bin/python3
"""PyTorch peers of the efficient variants (issue 16), written the way a
good PyTorch user would: batched matmuls, no Python loop over positions.
Prints one line per variant: "name median_ms".

  bench/variants_torch.py --L 4096 --threads 2 [--runs 5] [--only a,b]

The shapes are the examples' (examples/generate.py): B=1, H=8, D=64, f32;
FAVOR+ with 256 features, Linformer with k=256, LSH with 2 rounds of 64
buckets and chunks of 64, Transformer-XL with 512 memory positions.
Run with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS equal to --threads (bench/
variants.sh does): Debian's torch calls OpenBLAS for matmul.
"""
import argparse
import math
import sys
import time

try:
    import torch
except ImportError:  # (the project's machines have no PyTorch)
    print("variants_torch.py: PyTorch is not installed", file=sys.stderr)
    sys.exit(3)

B, H, D = 1, 8, 64


def elu1(x):
    return torch.nn.functional.elu(x) + 1


def linear(q, k, v):
    fq, fk = elu1(q), elu1(k)
    kv = torch.matmul(fk.transpose(-2, -1), v)
    z = torch.matmul(fq, fk.sum(dim=-2, keepdim=True).transpose(-2, -1))
    return torch.matmul(fq, kv) / z


def linear_causal(q, k, v, chunk=64):
    """The chunked prefix form: per chunk the masked quadratic part plus the
    state of the preceding chunks (a cumsum over chunk states)."""
    fq, fk = elu1(q), elu1(k)
    b, h, l, d = fq.shape
    n = l // chunk
    cq = fq.reshape(b, h, n, chunk, d)
    ck = fk.reshape(b, h, n, chunk, d)
    cv = v.reshape(b, h, n, chunk, v.shape[-1])
    states = torch.matmul(ck.transpose(-2, -1), cv)            # [b,h,n,d,dv]
    prev = states.cumsum(dim=2) - states                        # exclusive
    zsum = ck.sum(dim=-2)
    zprev = zsum.cumsum(dim=2) - zsum                           # [b,h,n,d]
    a = torch.matmul(cq, ck.transpose(-2, -1)).tril_()          # [b,h,n,c,c]
    num = torch.matmul(a, cv) + torch.matmul(cq, prev)
    den = a.sum(dim=-1) + (cq * zprev.unsqueeze(-2)).sum(dim=-1)
    return (num / den.unsqueeze(-1)).reshape(b, h, l, -1)


def favor_features(x, w):
    """Performer's positive features exp(w x - |x|^2/2) / sqrt(m), x scaled
    by D^-1/4 so that phi(q) . phi(k) estimates exp(q . k / sqrt(D))."""
    x = x * D ** -0.25
    proj = torch.matmul(x, w.t())
    return torch.exp(proj - 0.5 * (x * x).sum(-1, keepdim=True)) / math.sqrt(w.shape[0])


def favor(q, k, v, w):
    fq, fk = favor_features(q, w), favor_features(k, w)
    kv = torch.matmul(fk.transpose(-2, -1), v)
    z = torch.matmul(fq, fk.sum(dim=-2, keepdim=True).transpose(-2, -1))
    return torch.matmul(fq, kv) / z


def linformer(q, k, v, e, f):
    kp = torch.matmul(e, k)                                     # [b,h,k,d]
    vp = torch.matmul(f, v)
    s = torch.matmul(q, kp.transpose(-2, -1)) / math.sqrt(D)
    return torch.matmul(torch.softmax(s, dim=-1), vp)


def lsh(qk, v, rot, chunk=64):
    """Reformer: per round, hash, stable sort, chunks attending to
    themselves and the previous chunk (no self unless alone), unsort, and
    the rounds combined by their log-sum-exps."""
    b, h, l, d = qk.shape
    n = l // chunk
    keys = qk / torch.sqrt((qk * qk).sum(-1, keepdim=True) + 1e-6)
    outs, lses = [], []
    pos_all = torch.arange(l).expand(b, h, l)
    for r in range(rot.shape[0]):
        proj = torch.matmul(qk, rot[r])
        buckets = torch.cat([proj, -proj], dim=-1).argmax(dim=-1)
        # Stable: sort by bucket * l + position.
        order = torch.argsort(buckets * l + pos_all, dim=-1)
        undo = torch.argsort(order, dim=-1)
        gather = lambda x: torch.gather(x, 2, order.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1]))
        sq = gather(qk).reshape(b, h, n, chunk, d)
        sk = gather(keys).reshape(b, h, n, chunk, d)
        sv = gather(v).reshape(b, h, n, chunk, v.shape[-1])
        sp = order.reshape(b, h, n, chunk)
        look = lambda x: torch.cat([torch.roll(x, 1, dims=2), x], dim=3)
        kk, vv, kp = look(sk), look(sv), look(sp)
        s = torch.matmul(sq, kk.transpose(-2, -1)) / math.sqrt(d)
        self_mask = sp.unsqueeze(-1) == kp.unsqueeze(-2)
        s = s.masked_fill(self_mask, -1e5)
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        o = torch.matmul(torch.exp(s - lse), vv)
        unsort = lambda x: torch.gather(x.reshape(b, h, l, -1), 2,
                                        undo.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1]))
        outs.append(unsort(o))
        lses.append(unsort(lse))
    w = torch.softmax(torch.stack(lses, 0), dim=0)
    return (torch.stack(outs, 0) * w).sum(0)


def rel_shift(x):
    """Transformer-XL's _rel_shift: pad a zero column, view, drop a row."""
    b, h, q, k = x.shape
    x = torch.cat([x.new_zeros(b, h, q, 1), x], dim=-1).view(b, h, k + 1, q)
    return x[:, :, 1:].view(b, h, q, k)


def relative(q, k, v, r, u, vb, mk, mv):
    """Transformer-XL attention as its reference implementation computes
    it: AC = (q + u) K^T, BD = rel_shift((q + v) R^T), causal with memory."""
    kk = torch.cat([mk, k], dim=2)
    vv = torch.cat([mv, v], dim=2)
    m, l = mk.shape[2], q.shape[2]
    ac = torch.matmul(q + u[None, :, None], kk.transpose(-2, -1))
    # R ordered from the longest distance down, as rel_shift expects.
    bd = rel_shift(torch.matmul(q + vb[None, :, None], r.flip(1).transpose(-2, -1)))
    s = (ac + bd) / math.sqrt(D)
    mask = torch.ones(l, m + l, dtype=torch.bool).triu_(1 + m)
    s = s.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), vv)


def cases(l):
    g = torch.Generator().manual_seed(0)
    rand = lambda *s: torch.randn(*s, generator=g)
    q, k, v = rand(B, H, l, D), rand(B, H, l, D), rand(B, H, l, D)
    w = torch.cat([torch.linalg.qr(rand(D, D))[0] for _ in range(4)], 0) * math.sqrt(D)
    e, f = rand(256, l) / math.sqrt(l), rand(256, l) / math.sqrt(l)
    rot = rand(2, D, 32)
    mem = 512
    r = rand(H, mem + l, D)
    u, vb = rand(H, D), rand(H, D)
    mk, mv = rand(B, H, mem, D), rand(B, H, mem, D)
    return {
        "linear_elu": lambda: linear(q, k, v),
        "linear_elu_causal": lambda: linear_causal(q, k, v),
        "favor": lambda: favor(q * 0.25, k * 0.25, v, w),
        "lowrank": lambda: linformer(q, k, v, e, f),
        "lsh": lambda: lsh(q, v, rot),
        "relative": lambda: relative(q, k, v, r, u, vb, mk, mv),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--L", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    only = set(filter(None, a.only.split(",")))
    with torch.no_grad():
        for name, fn in cases(a.L).items():
            if only and name not in only:
                continue
            fn()
            ts = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            ts.sort()
            print(f"{name} {1e3 * ts[len(ts) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
