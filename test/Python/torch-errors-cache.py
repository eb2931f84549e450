# attn_opt with torch tensors (in and out, bf16, zero copy), the errors of
# bad inputs, calls from 4 threads at once, attn_opt.compile on a module,
# and the disk cache reused by a second process.
# REQUIRES: python-numpy, python-torch
# UNSUPPORTED: asan
# RUN: rm -rf %t && env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir:%S %attn_py3 %s | FileCheck %s
# A second process compiles nothing (ATTN_OPT_OFFLINE: a compilation would
# raise).
# RUN: env ATTN_OPT_CACHE_DIR=%t ATTN_OPT_OFFLINE=1 PYTHONPATH=%attn_python_dir:%S %attn_py3 %s --cached | FileCheck %s --check-prefix=CACHED

import sys
import threading

import numpy as np
import torch

import attn_opt
import attn_opt._library as library
import reference as ref

cached = "--cached" in sys.argv
torch.manual_seed(0)


def qkv(b, h, hkv, l, d, dtype=torch.float32):
    return (torch.randn(b, h, l, d, dtype=dtype),
            torch.randn(b, hkv, l, d, dtype=dtype),
            torch.randn(b, hkv, l, d, dtype=dtype))


# torch in, torch out; the result agrees with the reference.
q, k, v = qkv(2, 4, 2, 45, 16)
out = attn_opt.attention(q, k, v, pattern="causal")
assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
want = ref.attention(q.numpy(), k.numpy(), v.numpy(), pattern=ref.causal())
assert np.abs(out.numpy() - want).max() < 1e-4
print("ok torch f32")
# CHECK: ok torch f32
# CACHED: ok torch f32

# bf16 (uint16 storage in the C ABI).
qb, kb, vb = (x.to(torch.bfloat16) for x in (q, k, v))
outb = attn_opt.attention(qb, kb, vb, pattern="causal")
assert outb.dtype == torch.bfloat16
wantb = ref.attention(qb.float().numpy(), kb.float().numpy(),
                      vb.float().numpy(), pattern=ref.causal())
assert np.abs(outb.float().numpy() - wantb).max() < 3e-2
print("ok torch bf16")
# CHECK: ok torch bf16

# Zero copy: the kernel reads the tensor's own memory (a view of a larger
# contiguous buffer works, its data pointer is passed as is).
big = torch.randn(3, 4, 45, 16)
view = big[1:3]
assert view.is_contiguous()
out_view = attn_opt.attention(view, k, v, pattern="causal")
want_view = ref.attention(view.numpy(), k.numpy(), v.numpy(),
                          pattern=ref.causal())
assert np.abs(out_view.numpy() - want_view).max() < 1e-4
# out= is written in place.
buf = torch.empty(2, 4, 45, 16)
res = attn_opt.attention(q, k, v, pattern="causal", out=buf)
assert res is buf and torch.equal(buf, out)
print("ok zero copy, out=")
# CHECK: ok zero copy, out=


def expect(exc, text, f):
    try:
        f()
    except exc as e:
        assert text in str(e), f"{e!r} does not say {text!r}"
        print(f"ok {exc.__name__}: {e}")
        return
    raise AssertionError(f"no {exc.__name__} ({text})")


if not cached:
    expect(ValueError, "rank 4", lambda: attn_opt.attention(q[0], k, v))
    # CHECK: ok ValueError: q, k and v must have rank 4
    expect(TypeError, "dtype", lambda: attn_opt.attention(q, k.double(), v))
    # CHECK: ok TypeError: k has dtype torch.float64
    expect(ValueError, "contiguous",
           lambda: attn_opt.attention(q.transpose(2, 3), k, v))
    # CHECK: ok ValueError: q is not contiguous
    expect(ValueError, "contiguous",
           lambda: attn_opt.attention(q.numpy()[:, :, ::2], k.numpy()[:, :, ::2],
                                      v.numpy()[:, :, ::2]))
    # CHECK: ok ValueError: q is not C-contiguous
    q6, k4, v4 = qkv(1, 6, 4, 8, 16)
    expect(ValueError, "not a multiple",
           lambda: attn_opt.attention(q6, k4, v4))
    # CHECK: ok ValueError: the query heads (6) are not a multiple of the key/value heads (4)
    expect(TypeError, "NumPy array or a torch tensor",
           lambda: attn_opt.attention([[1.0]], k, v))
    # CHECK: ok TypeError: q must be a NumPy array or a torch tensor, not list
    expect(ValueError, "unknown normalizer",
           lambda: attn_opt.attention(q, k, v, normalizer="relu3"))
    # CHECK: ok ValueError: unknown normalizer 'relu3'
    expect(ValueError, "unknown pattern",
           lambda: attn_opt.attention(q, k, v, pattern="diagonal"))
    # CHECK: ok ValueError: unknown pattern 'diagonal'
    expect(attn_opt.AttnOptError, "attn-compile failed",
           lambda: attn_opt.attention(q, k, v,
                                      pattern="#attn.window<before = -1>"))
    # CHECK: ok AttnOptError: attn-compile failed
    expect(ValueError, "needs segments",
           lambda: attn_opt.attention(q, k, v, pattern="segments"))
    # CHECK: ok ValueError: pattern #attn.segments needs segments= ids
    expect(ValueError, "batch sizes differ",
           lambda: attn_opt.attention(q, k[:1].contiguous(),
                                      v[:1].contiguous()))
    # CHECK: ok ValueError: batch sizes differ

# 4 threads at once on different inputs: the serial results.
jobs = [qkv(1 + t % 2, 4, 2, 30 + 17 * t, 16) for t in range(4)]
serial = [attn_opt.attention(*j, pattern="causal") for j in jobs]
results = [None] * 4


def work(t):
    for _ in range(5):
        results[t] = attn_opt.attention(*jobs[t], pattern="causal")


threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert all(torch.equal(s, r) for s, r in zip(serial, results))
print("ok 4 threads")
# CHECK: ok 4 threads

# attn_opt.compile: a module with two functions; NumPy in and out.
lib = attn_opt.compile("""
func.func @relu(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}
func.func @full(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}
""", threads=2)
assert lib.num_threads() == 2
print(lib.relu)
# CHECK: <attn_opt.Function relu(q: f32[1, 2, ?, 8], k: f32[1, 2, ?, 8], v: f32[1, 2, ?, 8]) -> (result0: f32[1, 2, ?, 8])>
a = np.random.default_rng(1).standard_normal((3, 1, 2, 21, 8)).astype(np.float32)
r = lib.relu(a[0], a[1], a[2])
assert np.abs(r - ref.attention(a[0], a[1], a[2], normalizer="relu",
                                pattern=ref.causal())).max() < 1e-4
b16 = np.random.default_rng(2).standard_normal((3, 1, 2, 16, 8)).astype(
    np.float32)
assert np.abs(lib.full(*b16) - ref.attention(*b16)).max() < 1e-4
if not cached:
    expect(ValueError, "dimension 3 of q is 7",
           lambda: lib.relu(a[0][..., :7].copy(), a[1], a[2]))
    # CHECK: ok ValueError: dimension 3 of q is 7; relu takes 8
    expect(ValueError, "differs",
           lambda: lib.relu(a[0], a[1], a[2][:, :, :20].copy()))
    # CHECK: ok ValueError: kernels_relu: attn.attention: dimension 2 of value (20) differs from dimension 2 of key (21)
print("ok compile")
# CHECK: ok compile
# CACHED: ok compile
# compile() from a path, one entry of the module.
import os
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "Library", "Inputs", "kernels.mlir")
win = attn_opt.compile(path, entry="window")
assert list(win.functions) == ["window"], list(win.functions)
w = np.random.default_rng(3).standard_normal((3, 1, 2, 67, 8)).astype(
    np.float32)
assert np.abs(win.window(*w) - ref.attention(*w, pattern=ref.window(8, 0))
              ).max() < 1e-4
print("ok compile from a path")
# CHECK: ok compile from a path
# CACHED: ok compile from a path

# A portable library (--target=x86-64: SSE2 only, f16 and bf16 through
# library calls) runs here too, torch f16 and bf16 in and out.
half = attn_opt.compile("""
func.func @f16(%q: tensor<?x2x?x8xf16>, %k: tensor<?x2x?x8xf16>, %v: tensor<?x2x?x8xf16>) -> tensor<?x2x?x8xf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<?x2x?x8xf16>, tensor<?x2x?x8xf16>, tensor<?x2x?x8xf16> -> tensor<?x2x?x8xf16>
  return %0 : tensor<?x2x?x8xf16>
}
func.func @bf16(%q: tensor<?x2x?x8xbf16>, %k: tensor<?x2x?x8xbf16>, %v: tensor<?x2x?x8xbf16>) -> tensor<?x2x?x8xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<?x2x?x8xbf16>, tensor<?x2x?x8xbf16>, tensor<?x2x?x8xbf16> -> tensor<?x2x?x8xbf16>
  return %0 : tensor<?x2x?x8xbf16>
}
""", target="x86-64")
for dtype, fn, tol in ((torch.float16, half.f16, 5e-3),
                       (torch.bfloat16, half.bf16, 3e-2)):
    x = [t.to(dtype) for t in qkv(2, 2, 2, 33, 8)]
    got = fn(*x)
    assert got.dtype == dtype
    want = ref.attention(*(t.float().numpy() for t in x), pattern=ref.causal())
    err = np.abs(got.float().numpy() - want).max()
    assert err < tol, (dtype, err)
print("ok x86-64 f16 bf16")
# CHECK: ok x86-64 f16 bf16
# CACHED: ok x86-64 f16 bf16
print(f"compilations: {library.compilations}")
# CACHED: compilations: 0
if cached:
    expect(attn_opt.AttnOptError, "ATTN_OPT_OFFLINE",
           lambda: attn_opt.attention(q, k, v, pattern=attn_opt.window(3)))
    # CACHED: ok AttnOptError: ATTN_OPT_OFFLINE is set
