# attn_opt.attention under torch.autograd: torch tensors that require
# gradients get a grad_fn (attn_opt's AttentionFunction: @forward saves the
# output and log-sum-exp, @backward is attn.attention_grad, the fused
# backward kernel where it applies); gradcheck in float64 (computed in f32,
# so with eps = 1e-3 and tolerances to match) for softmax, the seed's
# gelu with qk-layernorm and a gate, kernelized attention and a bias;
# the gradients against PyTorch's own autograd of the same attention
# written with materialized scores (causal GQA, f32 and bf16); strided
# views that require gradients; create_graph=True refused; a training
# step's loss decreasing.
# REQUIRES: python-torch
# UNSUPPORTED: asan
# RUN: rm -rf %t && env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir %attn_py3 %s | FileCheck %s

import math

import torch

import attn_opt

torch.manual_seed(0)


def rand(*shape, dtype=torch.float64):
    return torch.randn(*shape, dtype=dtype, requires_grad=True)


# CHECK: grad_fn AttentionFunctionBackward
q, k, v = (rand(1, 2, 6, 4, dtype=torch.float32) for _ in range(3))
o = attn_opt.attention(q, k, v, pattern="causal")
print("grad_fn", type(o.grad_fn).__name__)

tol = dict(eps=1e-3, atol=2e-3, rtol=2e-3)

# CHECK: gradcheck softmax causal GQA True
q, k, v = rand(1, 4, 7, 8), rand(1, 2, 9, 8), rand(1, 2, 9, 8)
print("gradcheck softmax causal GQA", torch.autograd.gradcheck(
    lambda q, k, v: attn_opt.attention(q, k, v, pattern="causal"),
    (q, k, v), **tol))

# (gelu: smooth, where relu's kink would meet gradcheck's finite
# differences; relu's gradient is compared with PyTorch's below and in
# examples/train.)
# CHECK: gradcheck gelu qknorm gate True
q, k, v, g = rand(2, 2, 5, 8), rand(2, 2, 5, 8), rand(2, 2, 5, 8), \
    rand(2, 2, 5, 8)
print("gradcheck gelu qknorm gate", torch.autograd.gradcheck(
    lambda q, k, v, g: attn_opt.attention(q, k, v, normalizer="gelu",
                                          qk_norm_eps=1e-5, gate=g,
                                          pattern="causal"),
    (q, k, v, g), **tol))

# CHECK: gradcheck elu kernel True
q, k, v = rand(1, 2, 6, 4), rand(1, 2, 6, 4), rand(1, 2, 6, 4)
print("gradcheck elu kernel", torch.autograd.gradcheck(
    lambda q, k, v: attn_opt.attention(q, k, v, normalizer="elu_plus_one",
                                       pattern="causal"),
    (q, k, v), **tol))

# CHECK: gradcheck bias True
q, k, v, b = rand(1, 2, 5, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4), \
    rand(1, 2, 5, 5)
print("gradcheck bias", torch.autograd.gradcheck(
    lambda q, k, v, b: attn_opt.attention(q, k, v, bias=b),
    (q, k, v, b), **tol))


def torch_attention(q, k, v, relu=False):
    """Causal GQA attention with the scores materialized: softmax, or the
    seed's L^-1 relu with qk-layernorm."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    if relu:
        q = torch.nn.functional.layer_norm(q, (q.shape[-1],), eps=1e-5)
        k = torch.nn.functional.layer_norm(k, (k.shape[-1],), eps=1e-5)
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    lq, lk = q.shape[2], k.shape[2]
    i = torch.arange(lq).unsqueeze(1) + (lk - lq)
    j = torch.arange(lk).unsqueeze(0)
    if relu:
        return torch.matmul(torch.relu(s).masked_fill(j > i, 0.0) / lk, v)
    s = s.masked_fill(j > i, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def compare(dtype, tol_rel, relu=False):
    q, k, v = (torch.randn(2, 4, 70, 32).to(dtype).requires_grad_(),
               torch.randn(2, 2, 70, 32).to(dtype).requires_grad_(),
               torch.randn(2, 2, 70, 32).to(dtype).requires_grad_())
    do = torch.randn(2, 4, 70, 32).to(dtype)
    extra = dict(normalizer="relu", qk_norm_eps=1e-5) if relu else {}
    o = attn_opt.attention(q, k, v, pattern="causal", **extra)
    got = torch.autograd.grad(o, (q, k, v), do)
    ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
    want = torch.autograd.grad(torch_attention(*ref, relu=relu), ref,
                               do.double())
    worst = max(float((g.double() - w).abs().max() / w.abs().max())
                for g, w in zip(got, want))
    assert all(g.dtype == dtype for g in got)
    print(f"torch {dtype} causal GQA{' relu' if relu else ''}",
          "ok" if worst < tol_rel else worst)


# CHECK: torch torch.float32 causal GQA ok
compare(torch.float32, 1e-5)
# CHECK: torch torch.bfloat16 causal GQA ok
compare(torch.bfloat16, 3e-2)
# CHECK: torch torch.float32 causal GQA relu ok
compare(torch.float32, 1e-5, relu=True)

# Strided views that require gradients (heads split by a transpose, not
# made contiguous) are taken, their gradients those of the copies.
# CHECK: strided views ok
x = torch.randn(1, 7, 2, 8, requires_grad=True)
view = x.transpose(1, 2)
o = attn_opt.attention(view, view, view, pattern="causal")
o.sum().backward()
x2 = x.detach().clone().requires_grad_(True)
c = x2.transpose(1, 2).contiguous()
attn_opt.attention(c, c, c, pattern="causal").sum().backward()
print("strided views", "ok" if torch.allclose(x.grad, x2.grad, atol=1e-6)
      else "WRONG")

# A second-order gradient (create_graph=True) is refused, never silently
# first-order.
# CHECK: create_graph RuntimeError: attn_opt.attention has no second-order gradient
q = torch.randn(1, 2, 5, 8, requires_grad=True)
try:
    o = attn_opt.attention(q, q, q)
    (g,) = torch.autograd.grad(o.sum(), q, create_graph=True)
    print("create_graph NOT refused")
except RuntimeError as e:
    print("create_graph RuntimeError:", str(e).split(":")[0])

# A few steps of training one attention layer: the loss goes down.
# CHECK: training loss decreases True
torch.manual_seed(1)
x = torch.randn(4, 16, 32)
target = torch.randn(4, 16, 32)
wq, wk, wv = (torch.nn.Linear(32, 32) for _ in range(3))
params = [p for m in (wq, wk, wv) for p in m.parameters()]
opt = torch.optim.SGD(params, lr=0.05)
losses = []
for step in range(8):
    def heads(t):
        return t.view(4, 16, 2, 16).transpose(1, 2).contiguous()
    o = attn_opt.attention(heads(wq(x)), heads(wk(x)), heads(wv(x)),
                           pattern="causal")
    loss = ((o.transpose(1, 2).reshape(4, 16, 32) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(float(loss))
print("training loss decreases", losses[-1] < losses[0])

# Training as it is done: bf16, documents packed into one sequence (causal
# within segment ids), a new length every step. The forward and backward
# compile once for all five lengths (dynamic sizes; the fused backward
# classifies its blocks at run time), and each step's gradients agree
# with PyTorch's autograd of the same masked attention.
# CHECK: five lengths bf16 documents: 1 compilation, gradients ok
from attn_opt import _attention  # noqa: E402

torch.manual_seed(2)
compiled = len(_attention._grad_functions)
worst = 0.0
for L in (37, 64, 90, 129, 200):
    ids = torch.sort(torch.randint(0, 4, (2, L), dtype=torch.int32)).values
    q, k, v = (torch.randn(2, 4, L, 32).to(torch.bfloat16).requires_grad_()
               for _ in range(3))
    do = torch.randn(2, 4, L, 32).to(torch.bfloat16)
    o = attn_opt.attention(q, k, v, pattern="causal_segments", segments=ids)
    got = torch.autograd.grad(o, (q, k, v), do)
    ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
    s = torch.matmul(ref[0], ref[1].transpose(-2, -1)) / math.sqrt(32)
    i = torch.arange(L)
    allowed = (i.unsqueeze(1) >= i.unsqueeze(0)) & \
        (ids.unsqueeze(2) == ids.unsqueeze(1)).unsqueeze(1)
    s = s.masked_fill(~allowed, float("-inf"))
    want = torch.autograd.grad(torch.matmul(torch.softmax(s, -1), ref[2]),
                               ref, do.double())
    worst = max([worst] + [float((g.double() - w).abs().max() /
                                 w.abs().max()) for g, w in zip(got, want)])
print(f"five lengths bf16 documents: "
      f"{len(_attention._grad_functions) - compiled} compilation, "
      f"gradients {'ok' if worst < 3e-2 else worst}")

# A captured tensor that requires a gradient trains: a learned
# relative-position bias table as T5 trains it (score_mod reads
# table[h, i - j + 7]), and slopes read from a tensor (ALiBi as a score_mod):
# their gradients (attn.attention_grad's grad_captures, summed per task of
# the fused backward) against PyTorch's autograd of the same attention in
# float64, with q, k, v trainable or frozen (then only the table trains);
# an integer capture (document ids of a mask_mod) takes none; a learned
# FAVOR+ projection trains too.
# CHECK: captured table: grad_fn AttentionFunctionBackward, gradients ok
# CHECK: frozen q, k, v: table gradient ok, q.grad None
# CHECK: slopes and documents: gradients ok
# CHECK: favor projection: gradients ok
L = 23
table = torch.randn(2, 2 * L - 1, requires_grad=True)
slopes = torch.tensor([0.5, 0.25], requires_grad=True)
docs = torch.tensor([0] * 9 + [1] * (L - 9), dtype=torch.int32)
q, k, v = (torch.randn(1, 2, L, 16, requires_grad=True) for _ in range(3))
do = torch.randn(1, 2, L, 16)


def reference(qq, kk, vv, bias_of, allowed=None):
    s = torch.matmul(qq, kk.transpose(-1, -2)) / 4.0
    i = torch.arange(L).view(L, 1)
    j = torch.arange(L).view(1, L)
    s = s + bias_of(i, j)
    causal = j <= i
    if allowed is not None:
        causal = causal & allowed
    s = s.masked_fill(~causal, float("-inf"))
    return torch.matmul(torch.softmax(s, -1), vv)


def check(got, want):
    return max(float((g.double() - w).abs().max() / w.abs().max())
               for g, w in zip(got, want))


o = attn_opt.attention(q, k, v, pattern="causal",
                       score_mod=lambda s, b, h, i, j: s + table[h, i - j + L - 1])
got = torch.autograd.grad(o, (q, k, v, table), do)
ref = [x.detach().double().requires_grad_() for x in (q, k, v, table)]
want = torch.autograd.grad(
    reference(*ref[:3], lambda i, j: ref[3][:, (i - j + L - 1)].unsqueeze(0)),
    ref, do.double())
err = check(got, want)
print(f"captured table: grad_fn {type(o.grad_fn).__name__}, gradients "
      f"{'ok' if err < 1e-5 else err}")
frozen = [x.detach() for x in (q, k, v)]
o = attn_opt.attention(*frozen, pattern="causal",
                       score_mod=lambda s, b, h, i, j: s + table[h, i - j + L - 1])
(g,) = torch.autograd.grad(o, (table,), do)
err = check([g], want[3:])
print(f"frozen q, k, v: table gradient {'ok' if err < 1e-5 else err}, "
      f"q.grad {frozen[0].grad}")
o = attn_opt.attention(
    q, k, v, pattern="causal",
    score_mod=lambda s, b, h, i, j: s - slopes[h] * abs(i - j),
    mask_mod=lambda b, h, i, j: docs[i] == docs[j])
got = torch.autograd.grad(o, (q, k, v, slopes), do)
ref = [x.detach().double().requires_grad_() for x in (q, k, v, slopes)]
same = docs.view(L, 1) == docs.view(1, L)
want = torch.autograd.grad(
    reference(*ref[:3], lambda i, j: -ref[3].view(2, 1, 1) * (i - j).abs(),
              same),
    ref, do.double())
err = check(got, want)
print(f"slopes and documents: gradients {'ok' if err < 1e-5 else err}")
# FAVOR+ with a learned projection W (phi(x) = exp(x W^T - |x|^2 / 2) /
# sqrt(m), causal: the linear-time gradient) against PyTorch float64.
w = (0.3 * torch.randn(24, 16)).requires_grad_()
qs, ks = (0.5 * torch.randn(1, 2, L, 16) for _ in range(2))
qs.requires_grad_(), ks.requires_grad_()
o = attn_opt.attention(qs, ks, v, normalizer="favor", features=24,
                       pattern="causal", projection=w)
got = torch.autograd.grad(o, (qs, ks, v, w), do)
ref = [x.detach().double().requires_grad_() for x in (qs, ks, v, w)]


def favor(x, ww):
    return torch.exp(torch.matmul(x, ww.t()) - 0.5 * (x * x).sum(-1, True)) \
        / math.sqrt(ww.shape[0])


a = torch.matmul(favor(ref[0], ref[3]), favor(ref[1], ref[3]).transpose(-1, -2))
a = a * torch.ones(L, L, dtype=torch.float64).tril()
want = torch.autograd.grad(torch.matmul(a, ref[2]) / a.sum(-1, True), ref,
                           do.double())
err = check(got, want)
print(f"favor projection: gradients {'ok' if err < 1e-5 else err}")
