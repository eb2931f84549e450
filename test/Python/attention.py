# attn_opt.attention for every normalizer and pattern kind against the NumPy
# reference, at two lengths from one compilation (Lq != Lk included); f16;
# GQA; bias, gate, qk-layernorm, segments; explicit MLIR spellings.
# REQUIRES: python-numpy
# UNSUPPORTED: asan
# RUN: rm -rf %t && env ATTN_OPT_CACHE_DIR=%t PYTHONPATH=%attn_python_dir:%S %attn_py3 %s | FileCheck %s

import numpy as np

import attn_opt
import attn_opt._library as library
import reference as ref

rng = np.random.default_rng(7)
B, HQ, HKV, D = 2, 4, 2, 16


def inputs(lq, lk, dtype=np.float32, b=B):
    q = rng.standard_normal((b, HQ, lq, D)).astype(dtype)
    k = rng.standard_normal((b, HKV, lk, D)).astype(dtype)
    v = rng.standard_normal((b, HKV, lk, D)).astype(dtype)
    return q, k, v


class Gen:
    """An input made per shape: f(lq, lk)."""
    def __init__(self, f):
        self.f = f


class From:
    """A reference argument taken from the inputs given: f(extra)."""
    def __init__(self, f):
        self.f = f


def check(name, kwargs, ref_kwargs, shapes=((37, 37), (29, 64)), tol=2e-4,
          dtype=np.float32):
    worst = 0.0
    for lq, lk in shapes:
        q, k, v = inputs(lq, lk, dtype)
        extra = {key: f.f(lq, lk) if isinstance(f, Gen) else f
                 for key, f in kwargs.items()}
        rextra = {key: f.f(extra) if isinstance(f, From) else f
                  for key, f in ref_kwargs.items()}
        out = attn_opt.attention(q, k, v, **extra)
        assert isinstance(out, np.ndarray) and out.dtype == dtype
        assert out.shape == (B, HQ, lq, D), out.shape
        want = ref.attention(q, k, v, **rextra)
        err = np.abs(out.astype(np.float64) - want)
        bound = tol + tol * np.abs(want)
        assert np.all(err <= bound), (
            f"{name} Lq={lq} Lk={lk}: max error {err.max():.3g} at "
            f"{np.unravel_index(np.argmax(err - bound), err.shape)}")
        worst = max(worst, err.max())
    print(f"ok {name} (max error {worst:.2g})")


# Normalizers (causal).
check("softmax", dict(pattern="causal"), dict(pattern=ref.causal()))
# CHECK: ok softmax
for fn in ("relu", "relu2", "gelu", "softplus", "identity", "relu6",
           "sigmoid", "gelu_tanh"):
    check(fn, dict(normalizer=fn, pattern="causal", alpha=0.5),
          dict(normalizer=fn, pattern=ref.causal(), alpha=0.5))
# CHECK: ok relu
# CHECK: ok relu2
# CHECK: ok gelu
# CHECK: ok softplus
# CHECK: ok identity
# CHECK: ok relu6
# CHECK: ok sigmoid
# CHECK: ok gelu_tanh
check("elu_plus_one", dict(normalizer="elu_plus_one", pattern="causal"),
      dict(normalizer="elu_plus_one", pattern=ref.causal()))
check("linear_relu", dict(normalizer="linear_relu", scale=0.25,
                          eps=1e-3),
      dict(normalizer="linear_relu", scale=0.25, kernel_eps=1e-3))
W = (rng.standard_normal((24, D)) * 0.5).astype(np.float32)
check("favor", dict(normalizer="favor", features=24, projection=W,
                    scale=0.125),
      dict(normalizer="favor", projection=W, scale=0.125))
# CHECK: ok elu_plus_one
# CHECK: ok linear_relu
# CHECK: ok favor

# Patterns (softmax).
patterns = [
    ("none", None, None),
    ("window", attn_opt.window(8, 2), ref.window(8, 2)),
    ("dilated", attn_opt.dilated(8, 8, 3), ref.dilated(8, 8, 3)),
    ("global", attn_opt.union(attn_opt.global_tokens([0, 5]), "causal"),
     ref.union(ref.global_tokens([0, 5]), ref.causal())),
    ("strided", attn_opt.intersect("causal", attn_opt.strided(3)),
     ref.intersect(ref.causal(), ref.strided(3))),
    ("fixed", attn_opt.fixed(8, 2), ref.fixed(8, 2)),
    ("per_head", attn_opt.per_head(["causal", attn_opt.window(4, 0),
                                    attn_opt.strided(2),
                                    attn_opt.dilated(6, 6, 2)]),
     ref.per_head([ref.causal(), ref.window(4, 0), ref.strided(2),
                   ref.dilated(6, 6, 2)])),
    ("mlir spelling", "#attn.window<before = 5, after = 5>",
     ref.window(5, 5)),
]
for name, p, rp in patterns:
    check(name, dict(pattern=p), dict(pattern=rp))
# CHECK: ok none
# CHECK: ok window
# CHECK: ok dilated
# CHECK: ok global
# CHECK: ok strided
# CHECK: ok fixed
# CHECK: ok per_head
# CHECK: ok mlir spelling

# A block layout is a grid over the query index: one shape.
check("block", dict(pattern=attn_opt.block(16, ["100", "110", "011"])),
      dict(pattern=ref.block(16, ["100", "110", "011"])),
      shapes=((37, 37), (48, 40)))
# CHECK: ok block

# Segments (document masking) with causal; ids per batch.
def ids(lq, lk):
    return np.sort(rng.integers(0, 3, (B, lq)), axis=1).astype(np.int32)
check("segments", dict(pattern="causal_segments", segments=Gen(ids)),
      dict(pattern=ref.intersect(ref.causal(), ref.segments()),
           seg_q=From(lambda e: e["segments"]),
           seg_k=From(lambda e: e["segments"])),
      shapes=((37, 37), (50, 50)))
# CHECK: ok segments

# Bias (broadcast over the batch), gate, qk-layernorm, explicit scale.
check("bias gate", dict(
    pattern="causal",
    bias=Gen(lambda lq, lk: rng.standard_normal((1, HQ, lq, lk)).astype(
        np.float32)),
    gate=Gen(lambda lq, lk: rng.standard_normal((B, HQ, lq, D)).astype(
        np.float32))),
    dict(pattern=ref.causal(), bias=From(lambda e: e["bias"]),
         gate=From(lambda e: e["gate"])))
check("qk_norm", dict(normalizer="relu", qk_norm_eps=1e-5, scale=0.1),
      dict(normalizer="relu", qk_norm_eps=1e-5, scale=0.1))
# CHECK: ok bias gate
# CHECK: ok qk_norm

# f16 (NumPy float16 in and out).
check("f16", dict(pattern="causal"), dict(pattern=ref.causal()),
      dtype=np.float16, tol=2e-2)
# CHECK: ok f16

# One compilation per signature: the lengths and the batch do not count.
before = library.compilations
for lq, b in ((5, 1), (77, 3), (1, 2)):
    q, k, v = inputs(lq, lq, b=b)
    attn_opt.attention(q, k, v, pattern="causal")
assert library.compilations == before, library.compilations
print(f"ok no recompilation ({library.compilations} compilations in all)")
# CHECK: ok no recompilation
