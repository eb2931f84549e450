# attn_opt given what a careless or hostile caller gives (issue 40):
# misaligned, read-only, overlapping, big-endian, wrong rank / dtype and
# zero-size arrays; a truncated cache entry; a cache that cannot be written;
# three processes filling the same cache entry at once. Each ends in a
# clear error or the right answer.
# REQUIRES: python-numpy
# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t && env ATTN_OPT_CACHE_DIR=%t/cache PYTHONPATH=%attn_python_dir:%S %attn_py3 %s %t | FileCheck %s

import glob
import os
import subprocess
import sys
import warnings

import numpy as np

import attn_opt
import attn_opt._library as library
import reference as ref

tmp = sys.argv[1]
rng = np.random.default_rng(0)
MODULE = """
func.func @f(%q: tensor<1x2x9x4xf32>, %k: tensor<1x2x9x4xf32>, %v: tensor<1x2x9x4xf32>) -> tensor<1x2x9x4xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x9x4xf32>, tensor<1x2x9x4xf32>, tensor<1x2x9x4xf32> -> tensor<1x2x9x4xf32>
  return %0 : tensor<1x2x9x4xf32>
}
"""


def error(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except (ValueError, TypeError, attn_opt.AttnOptError) as e:
        return f"{type(e).__name__}: {e}"
    raise AssertionError("no error")


q, k, v = (rng.standard_normal((1, 2, 9, 4), dtype=np.float32)
           for _ in range(3))
f = attn_opt.compile(MODULE).f
[entry] = glob.glob(os.path.join(os.environ["ATTN_OPT_CACHE_DIR"], "*",
                                 "libkernels.so"))
want = ref.attention(q, k, v, pattern=ref.causal())
assert np.abs(f(q, k, v) - want).max() < 1e-5

# Data one byte off its element alignment (C-contiguous all the same).
raw = np.zeros(q.nbytes + 1, np.uint8)
misaligned = np.frombuffer(raw.data, np.float32, q.size, offset=1).reshape(
    q.shape)
print(error(f, misaligned, k, v))
# CHECK: ValueError: q is not aligned to its 4-byte elements
print(error(attn_opt.attention, misaligned, k, v))
# CHECK: ValueError: q is not aligned to its 4-byte elements

# A read-only result buffer, one that is an argument, one that overlaps one.
ro = np.empty_like(q)
ro.flags.writeable = False
print(error(f, q, k, v, out=ro))
# CHECK: ValueError: out is read-only; the call writes it
print(error(attn_opt.attention, q, k, v, out=ro))
# CHECK: ValueError: out is read-only; the call writes it
print(error(f, q, k, v, out=v))
# CHECK: ValueError: out shares memory with the argument v; results need buffers of their own
print(error(attn_opt.attention, q, k, v, out=q))
# CHECK: ValueError: out shares memory with the argument q; results need buffers of their own
both = np.zeros((2,) + q.shape, np.float32)
print(error(f, both[0], k, v, out=both[0]))
# CHECK: ValueError: out shares memory with the argument q

# Big-endian floats, float64, the wrong rank, a non-contiguous view, a
# list: refused before the call.
print(error(f, q.astype(">f4"), k, v))
# CHECK: TypeError: q has dtype >f4; f takes f32
print(error(f, q.astype(np.float64), k, v))
# CHECK: TypeError: q has dtype float64; f takes f32
print(error(f, q[0], k, v))
# CHECK: ValueError: q has rank 3; f takes rank 4
print(error(f, q.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2), k, v))
# CHECK: ValueError: q is not C-contiguous
print(error(f, q.tolist(), k, v))
# CHECK: TypeError: q must be a NumPy array or a torch tensor, not list

# Zero-size arrays: no queries, no batch, no keys (a row with no key is 0).
for shape_q, shape_kv in [((1, 2, 0, 4), (1, 2, 5, 4)),
                          ((0, 2, 3, 4), (0, 2, 5, 4)),
                          ((1, 2, 3, 4), (1, 2, 0, 4))]:
    zq = rng.standard_normal(shape_q, dtype=np.float32)
    zk = rng.standard_normal(shape_kv, dtype=np.float32)
    out = attn_opt.attention(zq, zk, zk)
    assert out.shape == shape_q and not np.any(out), (shape_q, out)
print("ok zero-size")
# CHECK: ok zero-size


def child(code, **env):
    """Runs `code` in a new process (nothing cached in memory)."""
    return subprocess.run(
        [sys.executable, "-c", "import attn_opt, attn_opt._library as L\n" +
         code], capture_output=True, text=True,
        env={**os.environ, **env})


# A truncated cache entry is never loaded: the next process compiles it
# again (and ATTN_OPT_OFFLINE reports it).
# (A new file in its place: this process has the library mapped, and
# truncating a mapped file in place faults its pages.)
with open(entry, "rb") as src, open(entry + ".cut", "wb") as cut:
    cut.write(src.read(os.path.getsize(entry) // 2))
os.replace(entry + ".cut", entry)
use = f"""
import numpy as np
f = attn_opt.compile({MODULE!r}).f
x = np.ones((1, 2, 9, 4), np.float32)
assert np.allclose(f(x, x, x), 1)
print('compilations', L.compilations)
"""
p = child(use, ATTN_OPT_OFFLINE="1")
print(p.returncode, p.stderr.strip().splitlines()[-1])
# CHECK: 1 attn_opt._library.AttnOptError: ATTN_OPT_OFFLINE is set and the cache entry {{.*}} is damaged: its library does not match its manifest (truncated?)
p = child(use)
print(p.returncode, p.stdout.strip())
# CHECK: 0 compilations 1

# A cache that cannot be written (below a plain file: read-only
# permissions do not stop root): a warning, and the right answer.
open(os.path.join(tmp, "plain"), "w").close()
os.makedirs(os.path.join(tmp, "private"))
p = child(use + "\nimport os\nprint(sorted(os.listdir(os.environ['TMPDIR'])))",
          ATTN_OPT_CACHE_DIR=os.path.join(tmp, "plain", "cache"),
          TMPDIR=os.path.join(tmp, "private"))
print(p.returncode, p.stdout.strip().replace("\n", " | "))
print(p.stderr.strip().splitlines()[0])
# CHECK: 0 compilations 1 | []
# CHECK: RuntimeWarning: attn_opt: the cache {{.*}}plain/cache cannot be written ([Errno 20] Not a directory: {{.*}}); compiling into a temporary directory (set ATTN_OPT_CACHE_DIR)

# Three processes fill one new cache entry at once: each gets the right
# library; one entry remains, no temporary directory.
shared = os.path.join(tmp, "shared")
procs = [subprocess.Popen(
    [sys.executable, "-c", "import attn_opt, attn_opt._library as L\n" + use],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    env={**os.environ, "ATTN_OPT_CACHE_DIR": shared}) for _ in range(3)]
results = [(p.wait(), p.stdout.read().strip()) for p in procs]
print(results, sorted(os.listdir(shared)).__len__(),
      glob.glob(os.path.join(shared, ".tmp-*")))
# CHECK: [(0, 'compilations 1'), (0, 'compilations 1'), (0, 'compilations 1')] 1 []
