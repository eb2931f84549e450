# A failed allocation of the generated code (status ATTN_OPT_ERROR_MEMORY)
# raises MemoryError with the library's message, as does a buffer beyond
# the cap of set_max_memory; other error statuses stay ValueError. The library is oom.mlir's reference lowering, whose scores
# for L = 2^24 would take 2^50 bytes (refused before allocating).
# REQUIRES: python-numpy
# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t
# RUN: attn-compile %S/../Library/Inputs/oom.mlir --reference --prefix oom -o %t/liboom.so
# RUN: env PYTHONPATH=%attn_python_dir %attn_py3 %s %t/liboom.so | FileCheck %s

import sys

import numpy as np

import attn_opt

lib = attn_opt.Library(sys.argv[1], prefix="oom")
big = np.zeros((1, 1, 1 << 24, 1), np.float32)
try:
    lib.dense(big, big, big)
except MemoryError as e:
    print("MemoryError:", e)
# CHECK: MemoryError: oom_dense: the generated code would allocate more than 2^47 bytes (4 bytes x 16777216 x 16777216)

lib.set_max_memory(1 << 20)
mid = np.zeros((1, 1, 1024, 1), np.float32)
try:
    lib.dense(mid, mid, mid)
except MemoryError as e:
    print("MemoryError:", e)
lib.set_max_memory(0)
# CHECK: MemoryError: oom_dense: out of memory: the generated code needs a buffer of 41943{{[0-9]+}} bytes, beyond the library's limit of 1048576 bytes (set_max_memory) with {{[0-9]+}} held

small = np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1)
try:
    lib.dense(small, small, np.zeros((1, 1, 5, 1), np.float32))
except ValueError as e:
    print("ValueError:", e)
# CHECK: ValueError: oom_dense: attn.attention: dimension 2 of value (5) differs from dimension 2 of key (4)

print("still usable:", lib.dense(np.zeros_like(small), np.zeros_like(small),
                                 small)[0, 0, :, 0])
# CHECK: still usable: [1.5 1.5 1.5 1.5]
