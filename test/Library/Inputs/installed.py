# The installed Python package (install.test): imported from the prefix,
# finds the installed attn-compile, computes causal softmax.
import numpy as np

import attn_opt

print("attn_opt from", attn_opt.__path__[0])
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((1, 2, 19, 8)).astype(np.float32)
           for _ in range(3))
out = attn_opt.attention(q, k, v, pattern="causal")
s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(8)
s = np.where(np.tril(np.ones((19, 19), bool)), s, -np.inf)
p = np.exp(s - s.max(-1, keepdims=True))
want = (p / p.sum(-1, keepdims=True)) @ v
err = np.abs(out - want).max()
assert err < 1e-4, err
print("max error", err)
