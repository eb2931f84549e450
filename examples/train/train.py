#!/usr/bin/python3
"""Train a small Transformer on associative recall with attn-opt's attention
and with PyTorch's, from the same initial weights (issues 37 and 53).

  PYTHONPATH=build/python python3 examples/train/train.py [--steps 40]

The data is generated here (nothing is downloaded): each sequence lists
`pairs` key/value token pairs, then one of the keys; the model must answer
its value (the loss is the cross-entropy of that last prediction). The
model: token and position embeddings, `layers` pre-norm blocks of causal
multi-head attention and an MLP, a linear read-out. Two attentions, each
trained twice from one initialization:

- softmax: `softmax(QK^T / sqrt(D)) V`;
- the seed's ReLU attention: `L^-1 relu(LN(Q) LN(K)^T / sqrt(D)) V` with
  qk-layernorm (attn_opt normalizer="relu", qk_norm_eps=1e-5).

A third run packs documents as real training does: each step concatenates
`docs` recall sequences of lengths drawn anew (so the packed length changes
every step) into one sequence per batch row, with segment ids, positions
restarting per document and attention causal within each document
(pattern "causal_segments"); q, k and v are bfloat16 (attn-opt's kernels
sum in f32; the PyTorch side computes the same attention in f32 from the
bfloat16 inputs and rounds its output to bfloat16), the loss is the mean
over the documents' answers. Its losses must agree within bfloat16's
round-off, and attn-opt compiles its forward and backward once for every
length.

"attn-opt" calls attn_opt.attention (forward and backward compiled by
attn-opt: the fused backward kernels for softmax and pointwise attention);
"pytorch" is the same attention written with PyTorch ops (materialized
scores, autograd). Printed: the loss curves side by side, their largest
relative difference over the first steps (float32 round-off: the two
differ only in the order of their sums) and the mean step time of each.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import attn_opt


def torch_document_attention(q, k, v, ids):
    """Causal attention within documents (segment ids `ids`, [B, L]) of
    bfloat16 q, k, v, computed in f32 and rounded to bfloat16, as attn-opt's
    bf16 kernels do."""
    q, k, v = (x.to(torch.bfloat16).float() for x in (q, k, v))
    d, length = q.shape[-1], q.shape[-2]
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    i = torch.arange(length)
    mask = (i[:, None] >= i[None, :]) & (ids[:, :, None] == ids[:, None, :])
    p = torch.softmax(s.masked_fill(~mask[:, None], float("-inf")), dim=-1)
    return torch.matmul(p, v).to(torch.bfloat16).float()


def torch_attention(q, k, v, kind, eps):
    """The same attention as attn_opt's, causal, in PyTorch ops."""
    d, lq, lk = q.shape[-1], q.shape[-2], k.shape[-2]
    if kind == "relu":
        q = F.layer_norm(q, (d,), eps=eps)
        k = F.layer_norm(k, (d,), eps=eps)
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    mask = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    if kind == "softmax":
        p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
    else:
        p = torch.relu(s).masked_fill(~mask, 0.0) / lk
    return torch.matmul(p, v)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, attention):
        b, l, c = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, l, 3, self.heads,
                                           c // self.heads)
        q, k, v = (qkv[:, :, i].transpose(1, 2).contiguous()
                   for i in range(3))
        o = attention(q, k, v).transpose(1, 2).reshape(b, l, c)
        x = x + self.proj(o)
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self, vocab, length, dim, heads, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(length, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, attention, positions=None, ends=None):
        """Logits of the last token, or with `positions` (per token) of the
        tokens at `ends` (the last of each packed document)."""
        if positions is None:
            x = self.embed(tokens) + self.pos
        else:
            x = self.embed(tokens) + self.pos[positions]
        for blk in self.blocks:
            x = blk(x, attention)
        if ends is None:
            return self.out(self.norm(x[:, -1]))
        return self.out(self.norm(x[:, ends]))


def batches(steps, batch, pairs, keys, values, seed):
    """Associative recall: k1 v1 k2 v2 ... kn vn k? -> v?."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        k = torch.stack([torch.randperm(keys, generator=g)[:pairs]
                         for _ in range(batch)])
        v = torch.randint(keys, keys + values, (batch, pairs), generator=g)
        seq = torch.stack([k, v], dim=2).view(batch, 2 * pairs)
        pick = torch.randint(pairs, (batch,), generator=g)
        query = k[torch.arange(batch), pick]
        answer = v[torch.arange(batch), pick]
        yield torch.cat([seq, query[:, None]], dim=1), answer


def packed_batches(args):
    """Steps of `docs` recall sequences per batch row, packed: tokens,
    segment ids, positions in their document, the documents' last tokens
    and their answers; the documents' lengths (so the packed length) drawn
    anew each step."""
    g = torch.Generator().manual_seed(args.seed + 1)
    recall = batches(args.steps * args.docs, args.batch, args.pairs,
                     args.keys, args.values, args.seed + 2)
    for _ in range(args.steps):
        toks, ids, pos, ends, answers = [], [], [], [], []
        start = 0
        for d in range(args.docs):
            seq, answer = next(recall)
            # (A document of `pairs` pairs or fewer: its last n pairs and
            # the query, which asks one of them or an earlier one.)
            n = int(torch.randint(args.pairs // 2, args.pairs + 1, (1,),
                                  generator=g))
            seq = seq[:, -(2 * n + 1):]
            toks.append(seq)
            ids.append(torch.full(seq.shape, d, dtype=torch.int32))
            pos.append(torch.arange(seq.shape[1]))
            start += seq.shape[1]
            ends.append(start - 1)
            answers.append(answer)
        yield (torch.cat(toks, 1), torch.cat(ids, 1), torch.cat(pos),
               torch.tensor(ends), torch.stack(answers, 1))


def train_packed(model, attention, args):
    """train() over packed documents: `attention(q, k, v, ids)`."""
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    losses, times, lengths = [], [], []
    for tokens, ids, pos, ends, answers in packed_batches(args):
        t0 = time.perf_counter()
        logits = model(tokens, lambda q, k, v: attention(q, k, v, ids), pos,
                       ends)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               answers.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
        lengths.append(tokens.shape[1])
    return losses, times, lengths


def initial_state(args, vocab, length):
    """The weights every run of a kind starts from."""
    torch.manual_seed(args.seed)
    init = Model(vocab, length, args.dim, args.heads, args.layers)
    return {k: v.clone() for k, v in init.state_dict().items()}


def run_both(backends, trainer, state, args, vocab, length):
    """Trains a model from `state` with each backend ("attn-opt" and
    "pytorch"); returns their results, the steps compared, the largest
    relative loss difference over them and the mean step times (ms, after
    the first step, which compiles attn-opt's kernels)."""
    results = {}
    for name, attention in backends.items():
        model = Model(vocab, length, args.dim, args.heads, args.layers)
        model.load_state_dict(state)
        results[name] = trainer(model, attention, args)
    a, t = results["attn-opt"], results["pytorch"]
    n = min(args.compare_steps, args.steps)
    diff = max(abs(x - y) / abs(y) for x, y in zip(a[0][:n], t[0][:n]))
    ms = [1e3 * sum(r[1][1:]) / max(1, len(r[1]) - 1) for r in (a, t)]
    return a, t, n, diff, ms


def documents_run(args):
    """The packed-documents bf16 run; True if its losses agree."""
    vocab, length = args.keys + args.values, 2 * args.pairs + 1
    state = initial_state(args, vocab, length)
    from attn_opt import _attention
    compiled = len(_attention._grad_functions)
    backends = {
        "attn-opt": lambda q, k, v, ids: attn_opt.attention(
            q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16),
            pattern="causal_segments", segments=ids,
            threads=args.threads).float(),
        "pytorch": torch_document_attention,
    }
    a, t, n, diff, ms = run_both(backends, train_packed, state, args, vocab,
                                 length)
    print(f"documents bf16: {args.docs} packed documents per row, lengths "
          f"{sorted(set(a[2]))}, batch {args.batch}, {args.layers} layers of "
          f"{args.heads} heads")
    print("  step  length  attn-opt loss  pytorch loss")
    for i in range(args.steps):
        print(f"  {i:4d}  {a[2][i]:6d}  {a[0][i]:13.6f}  {t[0][i]:12.6f}")
    # (bfloat16's round-off: its unit is 2^-8.)
    agree = diff < 1e-2
    print(f"  first {n} steps: largest relative loss difference {diff:.2e} "
          f"({'agree' if agree else 'DIFFER'}, bfloat16)")
    print(f"  attn-opt compiled its forward and backward "
          f"{len(_attention._grad_functions) - compiled} time(s) for "
          f"{len(set(a[2]))} lengths")
    print(f"  step time: attn-opt {ms[0]:.1f} ms, pytorch {ms[1]:.1f} ms "
          f"(pytorch / attn-opt {ms[1] / ms[0]:.2f}x)")
    return agree


def train(model, attention, args):
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    losses, times = [], []
    for tokens, answer in batches(args.steps, args.batch, args.pairs,
                                  args.keys, args.values, args.seed):
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(tokens, attention), answer)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    return losses, times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--pairs", type=int, default=32)
    p.add_argument("--keys", type=int, default=48)
    p.add_argument("--values", type=int, default=16)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--compare-steps", type=int, default=10,
                   help="steps whose losses must agree to float32 round-off")
    p.add_argument("--docs", type=int, default=3,
                   help="documents packed per row in the bf16 run")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    eps = 1e-5
    vocab, length = args.keys + args.values, 2 * args.pairs + 1
    kinds = {
        "softmax": dict(normalizer="softmax"),
        "relu": dict(normalizer="relu", qk_norm_eps=eps),
    }
    ok = True
    for kind, options in kinds.items():
        state = initial_state(args, vocab, length)
        backends = {
            "attn-opt": lambda q, k, v, o=options: attn_opt.attention(
                q, k, v, pattern="causal", threads=args.threads, **o),
            "pytorch": lambda q, k, v, kd=kind: torch_attention(
                q, k, v, kd, eps),
        }
        a, t, n, diff, ms = run_both(backends, train, state, args, vocab,
                                     length)
        print(f"{kind}: L = {length}, batch {args.batch}, "
              f"{args.layers} layers of {args.heads} heads")
        print("  step  attn-opt loss  pytorch loss")
        for i in range(0, args.steps, max(1, args.steps // 10)):
            print(f"  {i:4d}  {a[0][i]:13.6f}  {t[0][i]:12.6f}")
        print(f"  {args.steps - 1:4d}  {a[0][-1]:13.6f}  {t[0][-1]:12.6f}")
        agree = diff < 1e-4
        ok &= agree
        print(f"  first {n} steps: largest relative loss difference "
              f"{diff:.2e} ({'agree' if agree else 'DIFFER'})")
        print(f"  step time: attn-opt {ms[0]:.1f} ms, pytorch {ms[1]:.1f} ms "
              f"(pytorch / attn-opt {ms[1] / ms[0]:.2f}x)")
    ok &= documents_run(args)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
