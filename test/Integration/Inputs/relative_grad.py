"""Checks Transformer-XL's gradients (attn-run --grad of
attn.relative_attention) against PyTorch's float64 autograd of
`S[i,j] = scale ((q_i + u) . k_j + (q_i + v) . r_{M+i-j})`, causal over the
memory and the segment (`j <= M + i`), softmax, `O = P [mem_v, V]`; the
memory is a stop-gradient.

    relative_grad.py DIR [--memory]

DIR holds the inputs (q, k, v, r, u, vb[, mk, mv], d_output .npy, from
--save-inputs) and the gradients (d_q, d_k, d_v, d_r, d_u, d_vb .npy).
Prints one line per gradient and exits 1 when one differs by more than
1e-5 relative to its largest entry."""
import math
import os
import sys

import numpy as np
import torch

d = sys.argv[1]
load = lambda n: torch.from_numpy(  # noqa: E731
    np.load(os.path.join(d, n + ".npy")).astype(np.float64))
names = ["q", "k", "v", "r", "u", "vb"]
q, k, v, r, u, vb = (load(n).requires_grad_() for n in names)
memory = "--memory" in sys.argv
mk = load("mk") if memory else q.new_zeros(q.shape[:2] + (0, q.shape[3]))
mv = load("mv") if memory else q.new_zeros(q.shape[:2] + (0, v.shape[3]))
m, length = mk.shape[2], q.shape[2]
keys = torch.cat([mk, k], 2)
values = torch.cat([mv, v], 2)
i = torch.arange(length)[:, None]
j = torch.arange(m + length)[None, :]
dist = (m + i - j).clamp(0, m + length - 1)
content = torch.matmul(q + u[None, :, None], keys.transpose(-2, -1))
pos = torch.matmul(q + vb[None, :, None], r.transpose(-2, -1))
pos = torch.gather(pos, 3, dist.expand(pos.shape[:2] + dist.shape))
s = (content + pos) / math.sqrt(q.shape[-1])
s = s.masked_fill(j > m + i, float("-inf"))
o = torch.matmul(torch.softmax(s, -1), values)
want = torch.autograd.grad(o, (q, k, v, r, u, vb), load("d_output"))
ok = True
for name, w in zip(names, want):
    got = load("d_" + name)
    err = float((got - w).abs().max() / w.abs().max())
    ok &= err < 1e-5
    print(f"d_{name}: relative error {err:.2e}", "ok" if err < 1e-5 else "FAIL")
sys.exit(0 if ok else 1)
