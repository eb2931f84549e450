# The run-time contract of generated code through Python (issue 40): a
# page table entry outside the pools, key and value pools of different
# page counts, a length beyond the table's pages, offsets that decrease or
# pass the rows: a ValueError with the library's message, and the right
# answer once the inputs are right (checked against NumPy).
# REQUIRES: python-numpy
# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t
# RUN: attn-compile %S/../Library/Inputs/kernels.mlir --prefix kl -o %t/libkernels.so
# RUN: env PYTHONPATH=%attn_python_dir %attn_py3 %s %t/libkernels.so | FileCheck %s

import sys

import numpy as np

import attn_opt

lib = attn_opt.Library(sys.argv[1], prefix="kl")
rng = np.random.default_rng(0)


def error(fn, *args):
    try:
        fn(*args)
    except ValueError as e:
        return f"{type(e).__name__}: {e}"
    raise AssertionError("no error")


def softmax_rows(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


# Paged decode: 2 sequences, pages of 4 rows, 4 query heads over 2.
q = rng.standard_normal((2, 4, 1, 16), dtype=np.float32)
k = rng.standard_normal((5, 2, 4, 16), dtype=np.float32)
v = rng.standard_normal((5, 2, 4, 8), dtype=np.float32)
pt = np.array([[0, 3, -9], [1, 2, 4]], np.int32)
lengths = np.array([5, 12], np.int32)
out = lib.paged(q, k, v, pt, lengths)
for b in range(2):
    rows = np.concatenate([k[p] for p in pt[b][:3] if p >= 0], axis=1)
    vals = np.concatenate([v[p] for p in pt[b][:3] if p >= 0], axis=1)
    for h in range(4):
        want = softmax_rows(q[b, h], rows[h // 2, :lengths[b]],
                            vals[h // 2, :lengths[b]])
        assert np.allclose(out[b, h], want, atol=1e-5), (b, h)
print("paged ok")
# CHECK: paged ok

bad = pt.copy()
bad[1, 2] = 5
print(error(lib.paged, q, k, v, bad, lengths))
# CHECK: ValueError: kl_paged: attn.attention: page_table[5] = 5 is outside [0, 5), the pages of key and value
print(error(lib.paged, q, k, v[:4], pt, lengths))
# CHECK: ValueError: kl_paged: attn.attention: dimension 0 of value (4) differs from dimension 0 of key (5)
print(error(lib.paged, q, k, v, pt, np.array([5, 13], np.int32)))
# CHECK: ValueError: kl_paged: attn.attention: key_lengths[1] = 13 is outside [0, 12], the rows of key

# Packed sequences: offsets.
q = rng.standard_normal((1, 4, 8, 16), dtype=np.float32)
k = rng.standard_normal((1, 2, 8, 16), dtype=np.float32)
v = rng.standard_normal((1, 2, 8, 8), dtype=np.float32)
good = np.array([0, 5, 8], np.int32)
lib.packed(q, k, v, good, good)
print(error(lib.packed, q, k, v, np.array([0, 5, 3], np.int32), good))
# CHECK: ValueError: kl_packed: attn.attention: query_offsets[2] = 3
print(error(lib.packed, q, k, v, good, np.array([0, 5, 20], np.int32)))
# CHECK: ValueError: kl_packed: attn.attention: key_offsets[2] = 20
print(error(lib.packed, q, k, v, good, np.array([1, 5, 8], np.int32)))
# CHECK: ValueError: kl_packed: attn.attention: key_offsets[0] = 1
