"""Checks Linformer's gradients (attn-run --grad of attn.lowrank_attention)
against PyTorch's float64 autograd of `softmax(scale Q (E K)^T) (F V)`.

    linformer_grad.py DIR [--scale S]

DIR holds the inputs (q, k, v, e, f, d_output .npy, from --save-inputs) and
the gradients (d_q, d_k, d_v, d_e, d_f .npy). Prints one line per gradient
and exits 1 when one differs by more than 1e-5 relative to its largest
entry."""
import math
import os
import sys

import numpy as np
import torch

d = sys.argv[1]
load = lambda n: torch.from_numpy(  # noqa: E731
    np.load(os.path.join(d, n + ".npy")).astype(np.float64))
q, k, v, e, f = (load(n).requires_grad_() for n in "qkvef")
group = q.shape[1] // k.shape[1]
kp = torch.einsum("pj,bhjc->bhpc", e, k).repeat_interleave(group, 1)
vp = torch.einsum("pj,bhjc->bhpc", f, v).repeat_interleave(group, 1)
s = torch.matmul(q, kp.transpose(-2, -1)) / math.sqrt(q.shape[-1])
o = torch.matmul(torch.softmax(s, -1), vp)
want = torch.autograd.grad(o, (q, k, v, e, f), load("d_output"))
ok = True
for name, w in zip("qkvef", want):
    got = load("d_" + name)
    err = float((got - w).abs().max() / w.abs().max())
    ok &= err < 1e-5
    print(f"d_{name}: relative error {err:.2e}", "ok" if err < 1e-5 else "FAIL")
sys.exit(0 if ok else 1)
