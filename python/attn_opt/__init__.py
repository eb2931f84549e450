"""attn_opt: attention kernels compiled by attn-opt, called from Python.

    import attn_opt
    out = attn_opt.attention(q, k, v, pattern="causal")     # NumPy or torch
    lib = attn_opt.compile(open("model.mlir").read())       # any attn module
    out = lib.softmax_causal(q, k, v)
    out = attn_opt.attention(q, k, v,                       # FlexAttention's
                             mask_mod=lambda b, h, q, k: q >= k)  # mods


Kernels are compiled ahead of time by attn-compile into shared libraries
with a C ABI (docs/Library.md), cached on disk, and called through ctypes:
no copy of contiguous inputs, the GIL released during the call. See
docs/Library.md, "Python".
"""

from ._library import AttnOptError, Function, Library, cache_dir, compile
from ._mods import capture
from ._attention import (attention, block, causal, dilated, fixed,
                         global_tokens, intersect, per_head, random_blocks,
                         segments, strided, union, window)

__all__ = [
    "AttnOptError", "Function", "Library", "attention", "block", "cache_dir",
    "capture",
    "causal", "compile", "dilated", "fixed", "global_tokens", "intersect",
    "per_head", "random_blocks", "segments", "strided", "union", "window",
]
